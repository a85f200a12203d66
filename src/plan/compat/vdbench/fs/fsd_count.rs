//! An fsd's `count=(start,n)` ([`super::super::count`]): vdbench makes n fsds of it
//! (`FsdEntry.handleFsdCount`), the k-th named `NAME` + (start + k) on the anchor
//! `ANCHOR` + (start + k) (`fsd=fsd,anchor=/dir,count=(1,2)` → fsd1 on /dir1, fsd2 on
//! /dir2), each with the fsd's other parameters; the fwds name them as any other
//! (`fsd=fsd*`).

use super::FsDef;
use crate::plan::compat::CompatError;

/// The fsds `d` stands for: itself without `count=`, or its series.
pub(super) fn expand(d: &FsDef) -> Result<Vec<FsDef>, CompatError> {
    let Some(p) = d.get("count") else {
        return Ok(vec![d.clone()]);
    };
    let numbers = super::super::count::series(p, &format!("fsd={}", d.name))?;
    Ok(numbers
        .map(|k| {
            let mut one = d.clone();
            one.name = format!("{}{k}", d.name);
            one.params.retain(|q| q.key != "count");
            for q in one.params.iter_mut().filter(|q| q.key == "anchor") {
                q.value = format!("{}{k}", q.value);
            }
            one
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use crate::plan::compat::vdbench::parse_str;

    #[test]
    fn a_count_makes_a_numbered_series_of_fsds_on_numbered_anchors() {
        let t = parse_str(
            "t.parm",
            "fsd=fsd,anchor=/dir,depth=1,width=2,files=4,size=1m,count=(3,2)\n\
             fwd=f,fsd=fsd*,operation=read\nrd=r,fwd=f,elapsed=4\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<(&str, &str)> = (t.plan.targets.iter())
            .map(|x| (x.name.as_str(), x.uri.split('?').next().unwrap()))
            .collect();
        assert_eq!(names, [("fsd3", "tree:/dir3"), ("fsd4", "tree:/dir4")]);
        assert!(t.unsupported.is_empty());
        for bad in ["count=(1)", "count=(1,0)", "count=(a,2)"] {
            let e = parse_str(
                "t.parm",
                &format!("fsd=fsd,anchor=/dir,size=1m,{bad}\nfwd=f,fsd=fsd*\nrd=r,fwd=f\n"),
            )
            .unwrap_err()
            .to_string();
            assert!(e.contains("t.parm:1") && e.contains("count="), "{bad}: {e}");
        }
    }
}
