//! fio's block-size options: `bs`, `bssplit` and `bsrange`, each `READ[,WRITE[,TRIM]]`
//! as fio takes them. A value not ended by a comma applies to the directions after
//! it (`bs=8k,32k`: 32k for writes and trims), an empty one is fio's default. The
//! plan keeps a read split and a write split, which trims share: a trim list that
//! differs from the writes' is listed as unsupported in a job that trims.

use super::{opt_err, parse_one_bssplit, JobCx, UnsupportedList};
use crate::plan::compat::{CompatError, Loc};
use crate::plan::model::BlockSizes;
use crate::plan::units::parse_size;

/// fio's block size when none is given.
const DEFAULT_BS_BYTES: u64 = 4096;

/// Most sizes `bsrange` may expand to (fio picks any multiple of the smaller size).
const MAX_BSRANGE_SIZES: u64 = 256;

type Split = Vec<(u64, u32)>;

impl JobCx<'_> {
    /// `bssplit`, else `bsrange`, else `bs` (default 4k), per direction.
    pub(super) fn block_sizes(&mut self) -> Result<BlockSizes, CompatError> {
        let o = self.o;
        let trims = o.get("rw").is_some_and(|(v, _)| v.contains("trim"));
        let fixed = |b: u64| vec![(b, 100)];
        let default = fixed(DEFAULT_BS_BYTES);
        if let Some((v, loc)) = o.get("bssplit") {
            // fio draws every size from bssplit and takes its smallest and largest
            // from it too (fixup_options fills min_bs/max_bs from bs only when unset),
            // so a bs beside it changes nothing: said, not dropped. bsrange sets those
            // bounds itself: listed.
            if let Some((bv, _)) = o.get("bs") {
                self.warnings.push(format!(
                    "job '{}': bs={bv} is not used: bssplit={v} gives the block sizes, as \
                     in fio",
                    self.name
                ));
            }
            if let Some((bv, bl)) = o.get("bsrange") {
                self.unsupported
                    .push(format!("bsrange={bv} — bssplit takes precedence"), bl);
            }
            let parse = |p: &str, _: &mut UnsupportedList| {
                parse_one_bssplit(p).map_err(|e| loc.error(format!("bssplit={v}: {e}")))
            };
            let v3 = self.first_three("bssplit", v);
            return per_direction("bssplit", v3, loc, trims, default, self.unsupported, parse);
        }
        if let Some((v, loc)) = o.get("bsrange") {
            let parse = |p: &str, u: &mut UnsupportedList| bsrange(p, v, loc, u);
            let v3 = self.first_three("bsrange", v);
            return per_direction("bsrange", v3, loc, trims, default, self.unsupported, parse);
        }
        match o.get("bs") {
            Some((v, loc)) => {
                let parse = |p: &str, _: &mut UnsupportedList| {
                    parse_size(p)
                        .map(fixed)
                        .map_err(|e| opt_err(loc, "bs", v, &e))
                };
                let v3 = self.first_three("bs", v);
                per_direction("bs", v3, loc, trims, default, self.unsupported, parse)
            }
            None => Ok(BlockSizes::fixed(DEFAULT_BS_BYTES)),
        }
    }

    /// fio parses every comma-separated value of a per-direction option but keeps the
    /// first three (reads, writes, trims; `handle_option`): the rest are said and
    /// left out, as fio leaves them.
    fn first_three<'v>(&mut self, key: &str, v: &'v str) -> &'v str {
        let Some((i, _)) = v.match_indices(',').nth(2) else {
            return v;
        };
        self.warnings.push(format!(
            "job '{}': {key}={v}: fio keeps the first three values (reads, writes, trims) \
             and ignores the rest, and so does the translation",
            self.name
        ));
        &v[..i]
    }
}

/// `READ[,WRITE[,TRIM]]` of `key` as a read split and a write split. An empty entry
/// is `default`; a missing one is the entry before it.
fn per_direction(
    key: &str,
    v: &str,
    loc: &Loc,
    trims: bool,
    default: Split,
    unsupported: &mut UnsupportedList,
    parse: impl Fn(&str, &mut UnsupportedList) -> Result<Split, CompatError>,
) -> Result<BlockSizes, CompatError> {
    let entries: Vec<&str> = v.split(',').map(str::trim).collect();
    let mut one = |i: usize, before: &Split| -> Result<Split, CompatError> {
        match entries.get(i) {
            None => Ok(before.clone()),
            Some(&"") => Ok(default.clone()),
            Some(p) => parse(p, unsupported),
        }
    };
    let read = one(0, &default)?;
    let write = one(1, &read)?;
    let trim = one(2, &write)?;
    if trims && trim != write {
        unsupported.push(
            format!(
                "{key}={v} — trims of other sizes than the writes (ioscope's trims take the \
                 writes' sizes)"
            ),
            loc,
        );
    }
    Ok(BlockSizes::per_direction(read, write))
}

/// One direction's `bsrange` (`MIN-MAX`): fio picks each I/O's size at random between
/// the two, rounded to a multiple of MIN; the plan gets an equal-weight split over
/// those multiples. More than [`MAX_BSRANGE_SIZES`] sizes are listed (MIN is used).
fn bsrange(
    r: &str,
    v: &str,
    loc: &Loc,
    unsupported: &mut UnsupportedList,
) -> Result<Split, CompatError> {
    let (a, b) = r
        .split_once('-')
        .or_else(|| r.split_once(':'))
        .unwrap_or((r, r));
    let a = parse_size(a.trim()).map_err(|e| opt_err(loc, "bsrange", v, &e))?;
    let b = parse_size(b.trim()).map_err(|e| opt_err(loc, "bsrange", v, &e))?;
    let (lo, hi) = (a.min(b), a.max(b));
    let count = (hi - lo) / lo + 1;
    if count > MAX_BSRANGE_SIZES {
        unsupported.push(
            format!(
                "bsrange={v} — {count} sizes (ioscope splits over at most \
                 {MAX_BSRANGE_SIZES}); using {lo}"
            ),
            loc,
        );
        return Ok(vec![(lo, 100)]);
    }
    Ok((0..count).map(|i| (lo * (i + 1), 1)).collect())
}
