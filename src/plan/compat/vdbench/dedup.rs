//! `dedupsets=`: how many distinct contents vdbench's duplicate blocks repeat. With
//! `dedupratio=R` vdbench makes 1/R of the dedup units' contents distinct; of those,
//! `dedupsets` are *sets*, each repeated by the duplicate blocks assigned to it, the
//! others unique (`Dedup.adjustSdDedupValue`). The value is a count (`33`) or a
//! percentage of the units (`5%`, the default). ioscope's `dedup_set` is that
//! structure: its duplicates repeat contents drawn from a fixed set of units, so
//! vdbench's sets become a set of that many units, shared by every workload as
//! vdbench's one dedup bucket for all sds is.

use super::{Loc, Param};
use crate::plan::compat::CompatError;
use crate::plan::model::DataSettings;
use crate::plan::outputs::DedupSet;

/// vdbench's default: sets are 5 % of the units.
const DEFAULT_PCT: f64 = 5.0;

/// `dedupsets=` as written: a count of sets or a percentage of the units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Sets {
    Count(u64),
    Pct(f64),
}

/// Reads `dedupsets=N` or `dedupsets=N%` (vdbench: at least one).
pub(super) fn parse(p: &Param) -> Result<(Sets, Loc), CompatError> {
    let v = p.value.trim();
    let bad = || {
        p.loc.error(format!(
            "dedupsets={}: expected a count of sets (at least 1) or a percentage of \
             the dedup units, e.g. 5%",
            p.value
        ))
    };
    let sets = match v.strip_suffix('%') {
        Some(pct) => pct
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|p| p.is_finite() && *p > 0.0 && *p <= 100.0)
            .map(Sets::Pct),
        None => v.parse::<u64>().ok().filter(|&n| n >= 1).map(Sets::Count),
    };
    Ok((sets.ok_or_else(bad)?, p.loc.clone()))
}

/// The set of contents the run's duplicates repeat, from `dedupsets=` (or its 5 %
/// default) and the total bytes of the sds the runs use (`None` when one has no
/// `size=`). Without duplicates (no `dedupratio` above 1) there is no set. A count
/// needs no sizes; a percentage does: the given one is refused without them, the
/// default is left out with a warning (duplicates then repeat recent contents: the
/// same ratio, other set counts). More sets than duplicate units is refused, as
/// vdbench refuses it.
pub(super) fn set_of(
    given: Option<&(Sets, Loc)>,
    data: &DataSettings,
    total_bytes: Option<u64>,
    warnings: &mut Vec<String>,
) -> Result<Option<DedupSet>, CompatError> {
    let ratio = data.dedup_ratio.unwrap_or(1.0);
    if ratio <= 1.0 {
        return Ok(None);
    }
    let unit = data.dedup_unit_bytes.unwrap_or(4096).max(1);
    let units = total_bytes.map(|b| b / unit);
    let sets = match (given, units) {
        (Some(&(Sets::Count(n), _)), _) => n,
        (Some(&(Sets::Pct(p), _)), Some(u)) => ((u as f64) * p / 100.0) as u64,
        (Some((Sets::Pct(p), loc)), None) => {
            return Err(loc.error(format!(
                "dedupsets={p}%: a percentage of the dedup units needs the size of every \
                 sd the runs use (size=); give size= or a count of sets"
            )))
        }
        (None, Some(u)) => ((u as f64) * DEFAULT_PCT / 100.0) as u64,
        (None, None) => {
            warnings.push(format!(
                "dedupratio={ratio}: vdbench repeats the duplicates in dedup sets of 5 % \
                 of the sds' units (dedupsets' default); with no size= on the sds ioscope \
                 cannot size them, and its duplicates repeat recent contents instead: the \
                 same ratio, other set counts (give dedupsets=N for a count)"
            ));
            return Ok(None);
        }
    };
    if let (Some(u), Some((_, loc))) = (units, given) {
        let duplicate_units = (u as f64 / ratio) as u64;
        if sets > duplicate_units {
            return Err(loc.error(format!(
                "dedupsets: {sets} sets is more than the {duplicate_units} non-unique \
                 dedup units of the sds (vdbench refuses it)"
            )));
        }
    }
    Ok(Some(DedupSet {
        bytes: sets.max(1) * unit,
        global: true,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(v: &str) -> Param {
        Param {
            key: "dedupsets".into(),
            value: v.into(),
            loc: Loc::Line {
                source: "t.parm".into(),
                line: 1,
            },
            fresh: true,
        }
    }

    fn data(ratio: f64) -> DataSettings {
        DataSettings {
            dedup_ratio: Some(ratio),
            ..Default::default()
        }
    }

    #[test]
    fn counts_and_percentages_are_read_as_vdbench_reads_them() {
        assert_eq!(parse(&param("33")).unwrap().0, Sets::Count(33));
        assert_eq!(parse(&param("5%")).unwrap().0, Sets::Pct(5.0));
        for bad in ["0", "-3", "x", "0%", "150%"] {
            let e = parse(&param(bad)).unwrap_err().to_string();
            assert!(
                e.contains("t.parm:1") && e.contains("dedupsets="),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn the_set_is_that_many_units_shared_by_the_run() {
        let mut w = Vec::new();
        let n = parse(&param("33")).unwrap();
        // A count needs no size.
        let set = set_of(Some(&n), &data(2.0), None, &mut w).unwrap().unwrap();
        assert_eq!((set.bytes, set.global), (33 * 4096, true));
        // A percentage of 1 GiB of 4 KiB units; the default is 5 %.
        let pct = parse(&param("10%")).unwrap();
        let set = set_of(Some(&pct), &data(2.0), Some(1 << 30), &mut w).unwrap();
        assert_eq!(set.unwrap().bytes, 26_214 * 4096);
        let set = set_of(None, &data(2.0), Some(1 << 30), &mut w).unwrap();
        assert_eq!(set.unwrap().bytes, 13_107 * 4096);
        assert!(w.is_empty());
        // The dedup unit sizes the set.
        let d = DataSettings {
            dedup_unit_bytes: Some(8192),
            ..data(2.0)
        };
        assert_eq!(
            set_of(Some(&n), &d, None, &mut w).unwrap().unwrap().bytes,
            33 * 8192
        );
    }

    #[test]
    fn what_cannot_be_sized_is_refused_or_said() {
        let mut w = Vec::new();
        let pct = parse(&param("10%")).unwrap();
        let e = set_of(Some(&pct), &data(2.0), None, &mut w)
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.parm:1") && e.contains("size="), "{e}");
        assert_eq!(set_of(None, &data(2.0), None, &mut w).unwrap(), None);
        assert!(
            w[0].contains("5 %") && w[0].contains("dedupsets=N"),
            "{w:?}"
        );
        // More sets than duplicate units: vdbench refuses it.
        let many = parse(&param("1000")).unwrap();
        let e = set_of(Some(&many), &data(2.0), Some(1 << 20), &mut w).unwrap_err();
        assert!(e.to_string().contains("128 non-unique"), "{e}");
        // No duplicates, no set.
        assert_eq!(set_of(Some(&many), &data(1.0), None, &mut w).unwrap(), None);
    }
}
