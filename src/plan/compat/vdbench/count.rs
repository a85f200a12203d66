//! `count=(start,n)`: vdbench makes n definitions of one sd or fsd, numbered from
//! start. An fsd's k-th copy is named `NAME` + (start + k) on the anchor `ANCHOR` +
//! (start + k) (`FsdEntry.handleFsdCount`); an sd's name and lun are numbered as
//! `SD_entry.createCountingName` numbers them: a `%` in one is a printf mask of the
//! number (`/dev/nvme%dn1`), a `*` is replaced by it, and otherwise the number is
//! appended (`sd=sd,lun=/dev/x,count=(1,2)` → sd1 on /dev/x1, sd2 on /dev/x2).

use super::{list, perr, Param};
use crate::plan::compat::CompatError;

/// The numbers of `count=`'s series: `(start, n)` read as vdbench requires them.
pub(super) fn series(p: &Param, what: &str) -> Result<std::ops::Range<u64>, CompatError> {
    let nums: Vec<u64> = list(&p.value)
        .iter()
        .map(|v| v.trim().parse::<u64>().map_err(|e| perr(p, &e.to_string())))
        .collect::<Result<_, _>>()?;
    let [start, n] = nums[..] else {
        return Err(p.loc.error(format!(
            "{what}: count={}: expected (start,count), two numbers",
            p.value
        )));
    };
    if n == 0 || n > 10_000 {
        return Err(p.loc.error(format!(
            "{what}: count={}: the count must be from 1 to 10000",
            p.value
        )));
    }
    Ok(start..start + n)
}

/// `name` numbered `k` as an sd's name or lun (`createCountingName`); an error
/// names a printf mask ioscope does not read (it reads `%d`, `%Nd`, `%0Nd`).
pub(super) fn sd_name(p: &Param, name: &str, k: u64) -> Result<String, CompatError> {
    let Some(at) = name.find('%') else {
        return Ok(match name.contains('*') {
            true => name.replace('*', &k.to_string()),
            false => format!("{name}{k}"),
        });
    };
    let rest = &name[at + 1..];
    let spec_len = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (spec, tail) = rest.split_at(spec_len);
    let Some(tail) = tail.strip_prefix('d').filter(|t| !t.contains('%')) else {
        return Err(p.loc.error(format!(
            "count={}: {name}: a mask other than one %d (with an optional width) is not \
             read",
            p.value
        )));
    };
    let width: usize = spec.parse().unwrap_or(0);
    let number = match spec.starts_with('0') {
        true => format!("{k:0width$}"),
        false => format!("{k:width$}"),
    };
    Ok(format!("{}{number}{tail}", &name[..at]))
}

#[cfg(test)]
mod tests {
    use crate::plan::compat::vdbench::parse_str;

    /// As vdbench's createCountingName: a mask, a star, or the number appended;
    /// each sd keeps the others' parameters, and wds name them by wildcard.
    #[test]
    fn an_sd_count_makes_a_numbered_series_of_sds_and_luns() {
        for (lun, want) in [
            ("/dev/x", ["/dev/x3", "/dev/x4"]),
            ("/dev/nvme%dn1", ["/dev/nvme3n1", "/dev/nvme4n1"]),
            ("/dev/d%03d", ["/dev/d003", "/dev/d004"]),
            ("/mnt/*/file", ["/mnt/3/file", "/mnt/4/file"]),
        ] {
            let t = parse_str(
                "t.parm",
                &format!(
                    "sd=sd,lun={lun},size=1m,threads=2,count=(3,2)\nwd=w,sd=sd*,rdpct=100\n\
                     rd=r,wd=w,iorate=max,elapsed=4,interval=1\n"
                ),
            )
            .unwrap_or_else(|e| panic!("{lun}: {e}"));
            let got: Vec<(&str, &str)> = (t.plan.targets.iter())
                .map(|x| (x.name.as_str(), x.uri.as_str()))
                .collect();
            assert_eq!(got, [("sd3", want[0]), ("sd4", want[1])], "{lun}");
            assert!(t.unsupported.is_empty(), "{lun}: {:?}", t.unsupported);
            assert_eq!(t.plan.runs[0].workloads.len(), 2, "{lun}");
        }
        for bad in ["count=(1)", "count=(1,0)", "lun=/dev/x%s,count=(1,2)"] {
            let e = parse_str(
                "t.parm",
                &format!("sd=sd,lun=/dev/y,size=1m,{bad}\nwd=w,sd=sd*\nrd=r,wd=w\n"),
            )
            .unwrap_err()
            .to_string();
            assert!(e.contains("t.parm:1") && e.contains("count="), "{bad}: {e}");
        }
        // A copy's name that another sd has: vdbench's "Duplicate SD names".
        let e = parse_str(
            "t.parm",
            "sd=sd1,lun=/dev/z,size=1m\nsd=sd,lun=/dev/y,size=1m,count=(1,2)\n\
             wd=w,sd=sd*\nrd=r,wd=w\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("sd=sd1 is defined twice"), "{e}");
    }
}
