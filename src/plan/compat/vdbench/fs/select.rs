//! `fileselect=` on an fwd: how its threads pick the next file of the fsd's
//! tree, read as vdbench's `FwdEntry.parseFileSelect` reads it (words by prefix:
//! `seq`, `r`). vdbench's default is sequential — the files in order. `poisson`
//! (`skewed`, `midpoint=N`, or a number after `random`) is vdbench's skewed draw
//! (`ownmath.distPoisson`, an exponential curve whose mean is the file n / N, 3 by
//! default): ioscope's `exponential` file service for reads and writes. A number
//! without a random selection has no effect in vdbench (its sequential selection
//! never looks at it), nor here. `once` (each file used once, then the fwd is done)
//! has no ioscope equivalent and is listed.

use super::super::{list, Param};
use crate::plan::compat::{Loc, UnsupportedList};

/// vdbench's midpoint for `poisson` and `skewed` without a number.
const DEFAULT_MIDPOINT: f64 = 3.0;

/// What `fileselect=` asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Selection {
    /// Files drawn at random (else in order).
    pub random: bool,
    /// A random draw skewed by vdbench's Poisson curve, with its midpoint, and
    /// where it was given (the file-operation engines list it).
    pub poisson: Option<(f64, Loc)>,
}

impl Selection {
    /// The Poisson draw as the file-operation engines take it: listed, as they
    /// draw their names uniformly.
    pub fn list_poisson_for_names(&self, unsupported: &mut UnsupportedList) {
        if let Some((m, loc)) = &self.poisson {
            unsupported.push(
                format!(
                    "fileselect=poisson (midpoint {m}) on a file operation — names drawn \
                     uniformly"
                ),
                loc,
            );
        }
    }
}

/// Reads `fileselect=`. Absent → sequential, vdbench's default. Words vdbench
/// refuses are refused, located.
pub(super) fn read(
    p: Option<&Param>,
    unsupported: &mut UnsupportedList,
) -> Result<Selection, crate::plan::compat::CompatError> {
    let Some(p) = p else {
        return Ok(Selection::default());
    };
    let (mut random, mut once, mut skew) = (false, false, None::<f64>);
    for word in list(&p.value) {
        let w = word.to_ascii_lowercase();
        if "random".starts_with(&w) {
            random = true;
        } else if "sequential".starts_with(&w) {
            random = false;
        } else if w == "once" {
            once = true;
        } else if w == "poisson" || w == "skewed" {
            (random, skew) = (true, Some(DEFAULT_MIDPOINT));
        } else if let Some(m) = midpoint(&w) {
            (random, skew) = (true, Some(m));
        } else if let Ok(n) = w.parse::<f64>() {
            skew = Some(n).filter(|n| *n > 0.0);
        } else {
            return Err(p.loc.error(format!(
                "fileselect={}: '{word}' is not random, sequential, once, poisson or \
                 midpoint=N",
                p.value
            )));
        }
    }
    if once {
        let why = "each file selected only once, then the fwd is done; \
                   here files are selected again";
        unsupported.push(format!("fileselect={} — {why}", p.value), &p.loc);
    }
    Ok(Selection {
        random,
        poisson: skew.filter(|_| random).map(|m| (m, p.loc.clone())),
    })
}

/// `midpoint=N` with N above 0: the Poisson curve's midpoint.
fn midpoint(w: &str) -> Option<f64> {
    w.strip_prefix("midpoint=")
        .and_then(|n| n.parse::<f64>().ok())
        .filter(|v| *v > 0.0)
}
