//! `for…` loops on a file-system rd (vdbench's `forxfersize=`, `forthreads=`,
//! `forrdpct=`, `foroperations=`, `forfwdrate=`): the rd becomes one rd per
//! combination of the loops' values, the first-written loop outermost, as the
//! raw-I/O reader expands an rd. Each is named after its values
//! (`rd1 xfersize=4k threads=2`) and carries them as plain parameters (`xfersize=`,
//! `threads=`, `rdpct=`, `operations=`, `fwdrate=`), which [`super::Rd::read`]
//! applies to every fwd the rd runs. Ranges step as vdbench's do (`(4k-64k,d)`
//! doubles). A format the rd asks for is done before every combination, as
//! vdbench inserts one before each (`RD_entry.buildNewRdListForFwd`: "any
//! format=yes does a clean and format"), and with `format=only` or `clean` each
//! combination is that format alone; `format=once` formats before the first only,
//! and vdbench refuses it on an rd without loops.

use super::FsDef;
use crate::plan::compat::vdbench::{combinations, expand_values, list, too_many_runs, Param};
use crate::plan::compat::CompatError;

/// Each loop's key and the parameter its values set.
pub(super) const LOOPS: &[(&str, &str)] = &[
    ("forxfersize", "xfersize"),
    ("forthreads", "threads"),
    ("forrdpct", "rdpct"),
    ("foroperations", "operations"),
    ("forfwdrate", "fwdrate"),
];

/// One loop: the parameter it sets, its values, where it was written.
type Loop<'a> = (&'static str, Vec<String>, &'a Param);

/// The loops of `rd`, the last of a key written winning.
fn loops_of(rd: &FsDef) -> Result<Vec<Loop<'_>>, CompatError> {
    let mut out: Vec<Loop<'_>> = Vec::new();
    for p in &rd.params {
        let Some(&(_, sets)) = LOOPS.iter().find(|(k, _)| *k == p.key) else {
            continue;
        };
        let values = match sets {
            "xfersize" => expand_values(p, true)?,
            "threads" => expand_values(p, false)?,
            // fwdrate takes `max` and fractions besides ranges of counts.
            "fwdrate" if p.value.contains('-') => expand_values(p, false)?,
            _ => list(&p.value),
        };
        out.retain(|l| l.0 != sets);
        out.push((sets, values, p));
    }
    Ok(out)
}

/// `rd` as the rds its loops make (itself alone without loops).
pub(super) fn expand(rd: &FsDef) -> Result<Vec<FsDef>, CompatError> {
    let loops = loops_of(rd)?;
    let once = rd
        .get("format")
        .filter(|f| (list(&f.value).iter()).any(|w| w.eq_ignore_ascii_case("once")));
    let plain: Vec<Param> = (rd.params.iter())
        .filter(|p| !LOOPS.iter().any(|(k, _)| *k == p.key))
        .cloned()
        .collect();
    if let (Some(f), true) = (once, loops.is_empty()) {
        return Err(f.loc.error(format!(
            "rd={}: format=once formats before the first of an rd's for… runs, and \
             this rd has none (vdbench refuses it too)",
            rd.name
        )));
    }
    if loops.is_empty() {
        return Ok(vec![FsDef {
            params: plain,
            ..rd.clone()
        }]);
    }
    let lengths: Vec<usize> = loops.iter().map(|l| l.1.len()).collect();
    let combos = combinations(&lengths).ok_or_else(|| too_many_runs(&rd.loc, &rd.name))?;
    let out = combos.iter().enumerate().map(|(k, combo)| {
        let mut params: Vec<Param> = (plain.iter())
            .filter(|p| k == 0 || once.is_none() || p.key != "format")
            .cloned()
            .collect();
        let mut name = rd.name.clone();
        for ((sets, values, p), &i) in loops.iter().zip(combo) {
            let v = &values[i];
            // A size as the raw-I/O runs name theirs ("4k"; the values are bytes).
            match v.parse::<u64>() {
                Ok(b) if *sets == "xfersize" => {
                    name.push_str(&format!(" {sets}={}", crate::plan::units::format_size(b)))
                }
                _ => name.push_str(&format!(" {sets}={v}")),
            }
            params.push(Param {
                key: sets.to_string(),
                value: values[i].clone(),
                loc: p.loc.clone(),
                fresh: false,
            });
        }
        FsDef {
            name,
            params,
            ..rd.clone()
        }
    });
    Ok(out.collect())
}
