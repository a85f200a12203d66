//! Hot bands (a zoned distribution) as the ranges of diskspd's `<Distribution>`
//! (`-rdpct`, `-rdabs`). diskspd gives ranges end to end with the I/O left over going
//! to the rest of the target; ioscope keeps the bands that makes
//! ([`Distribution::from_ranges`]). Going back, the candidate ranges are read
//! through that same function and written only when they give the very bands: whole
//! percents first, then bytes of the working set; anything else (a fractional I/O
//! share, bands of another tool) is said, not rounded.

use crate::result::{Distribution, Zone};

/// diskspd's two forms: ranges in percent of the target, or in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    Percent,
    Absolute,
}

impl Form {
    pub(super) fn tag(self) -> &'static str {
        match self {
            Form::Percent => "Percent",
            Form::Absolute => "Absolute",
        }
    }
}

/// The ranges (I/O %, length) that read back as `bands`, over a working set of
/// `span_bytes` (needed for the absolute form); `Err` says why there are none.
pub(super) fn ranges(
    bands: &[Zone],
    span_bytes: Option<u64>,
) -> Result<(Form, Vec<(u64, u64)>), String> {
    let want = Distribution::Zoned {
        bands: bands.to_vec(),
    };
    let mut forms = vec![(Form::Percent, 100.0)];
    if let Some(span) = span_bytes.filter(|&s| s > 0) {
        forms.push((Form::Absolute, span as f64));
    }
    for (form, span) in forms {
        // The last band is usually what the others leave: diskspd's implied rest.
        for n in [bands.len().saturating_sub(1), bands.len()] {
            let Some(ranges) = whole(&bands[..n], span) else {
                continue;
            };
            let fits = ranges.iter().map(|r| r.0).sum::<u64>() <= 100
                && (form == Form::Absolute || ranges.iter().map(|r| r.1).sum::<u64>() <= 100);
            if fits && !ranges.is_empty() && Distribution::from_ranges(&ranges, span) == want {
                return Ok((form, ranges));
            }
        }
    }
    let why = if span_bytes.is_some_and(|s| s > 0) {
        ""
    } else {
        " (the target's size, for ranges in bytes, is not in the plan)"
    };
    Err(format!(
        "the hot bands {} are no diskspd ranges: each takes a whole I/O percentage and \
         a whole percent or byte count of the target{why}",
        want.spec()
    ))
}

/// Each band as whole numbers: its I/O share, and its length in `span` units.
fn whole(bands: &[Zone], span: f64) -> Option<Vec<(u64, u64)>> {
    bands
        .iter()
        .map(|z| {
            let io = z.io_pct.round();
            let len = (z.range_pct / 100.0 * span).round();
            (io == z.io_pct && (0.0..=100.0).contains(&io) && len >= 1.0)
                .then_some((io as u64, len as u64))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones(b: &[(f64, f64)]) -> Vec<Zone> {
        b.iter()
            .map(|&(io_pct, range_pct)| Zone { io_pct, range_pct })
            .collect()
    }

    #[test]
    fn bands_of_whole_percents_are_percent_ranges_without_the_implied_rest() {
        // -rdpct10/50:20/10: the rest, 70 % of the I/O on 40 %, is diskspd's own.
        let b = zones(&[(10.0, 50.0), (20.0, 10.0), (70.0, 40.0)]);
        assert_eq!(
            ranges(&b, None),
            Ok((Form::Percent, vec![(10, 50), (20, 10)]))
        );
        // 7 % is 7.000000000000001 read back; the rest still comes out the same.
        let from = Distribution::from_ranges(&[(30, 7)], 100.0);
        let Distribution::Zoned { bands } = &from else {
            panic!("{from:?}")
        };
        assert_eq!(ranges(bands, None), Ok((Form::Percent, vec![(30, 7)])));
    }

    #[test]
    fn bands_of_byte_ranges_are_absolute_ranges_over_the_working_set() {
        // -rdabs20/100K on 1 MiB: 9.765625 % of the target.
        let mib = 1 << 20;
        let from = Distribution::from_ranges(&[(20, 100 << 10)], mib as f64);
        let Distribution::Zoned { bands } = &from else {
            panic!("{from:?}")
        };
        assert_eq!(
            ranges(bands, Some(mib)),
            Ok((Form::Absolute, vec![(20, 100 << 10)]))
        );
        // Without the working set's size the bytes are unknown: said.
        let err = ranges(bands, None).unwrap_err();
        assert!(err.contains("not in the plan"), "{err}");
    }

    #[test]
    fn bands_no_ranges_give_are_refused_not_rounded() {
        // A fractional I/O share (a native zoned:33.3/50:66.7/50).
        let b = zones(&[(33.3, 50.0), (66.7, 50.0)]);
        let err = ranges(&b, Some(1 << 20)).unwrap_err();
        assert!(err.contains("zoned:33.3/50:66.7/50"), "{err}");
    }
}
