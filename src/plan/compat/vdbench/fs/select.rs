//! vdbench's `fileselect=`: how an fwd picks the next file (or directory) of its
//! tree. vdbench's default is sequential — the files in order — and it reads the
//! words by prefix (`seq`, `r`), as its own parser does (`FwdEntry.parseFileSelect`).
//! `once` (each file used once, then the fwd is done) and the skewed selections
//! (`poisson`, `skewed`, `midpoint=N`, a bare skew number) have no ioscope
//! equivalent: they are listed, and the rest of the value is kept.

use super::super::{list, Param};
use crate::plan::compat::UnsupportedList;

/// Whether `fileselect=` asks for random selection. Absent → sequential, vdbench's
/// default. Words vdbench refuses are refused, located.
pub(super) fn random_select(
    p: Option<&Param>,
    unsupported: &mut UnsupportedList,
) -> Result<bool, crate::plan::compat::CompatError> {
    let Some(p) = p else {
        return Ok(false);
    };
    let (mut random, mut once, mut skewed) = (false, false, false);
    for word in list(&p.value) {
        let w = word.to_ascii_lowercase();
        if "random".starts_with(&w) {
            random = true;
        } else if "sequential".starts_with(&w) {
            random = false;
        } else if w == "once" {
            once = true;
        } else if w == "poisson" || w == "skewed" || midpoint(&w) {
            (random, skewed) = (true, true);
        } else if w.parse::<f64>().is_ok() {
            // The Poisson curve's skew: it changes the draw without making it random.
            skewed = true;
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
    if skewed {
        let here = if random {
            "drawn uniformly"
        } else {
            "taken in order"
        };
        let why = format!("files drawn from a Poisson curve; here {here}");
        unsupported.push(format!("fileselect={} — {why}", p.value), &p.loc);
    }
    Ok(random)
}

/// `midpoint=N` with N above 0: the Poisson curve's midpoint.
fn midpoint(w: &str) -> bool {
    w.strip_prefix("midpoint=")
        .is_some_and(|n| n.parse::<f64>().is_ok_and(|v| v > 0.0))
}
