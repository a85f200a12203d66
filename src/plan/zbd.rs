//! Emulated zoned-block-device zones (fio's `zonemode=zbd` on a regular file or a
//! device that is not zoned, fio's zoned model "none"): the working set is cut into
//! zones that are written only at their write pointers. The settings are
//! `vocab::zones::Zbd` (shared with the result's echo); this module holds the checks
//! of them against a workload; the zone table that the run shares between streams is
//! `run::zbd`.
//!
//! ioscope issues no zone ioctls (report, reset, open, finish), so a real zoned
//! device is refused at run time; a zone reset is a move of the write pointer only.

use super::model::{Distribution, Op, SeqLayout, TrimMode, Workload};

pub use crate::vocab::zones::{Zbd, MAX_OPEN_LIMIT};

impl Zbd {
    /// Why `w` cannot run in these zones, if it cannot: fio's checks (writes no
    /// larger than a zone, trims of exactly one zone) and the ways of choosing
    /// offsets that zones replace.
    pub fn misfit(&self, w: &Workload) -> Option<String> {
        if let Some(why) = self.invalid() {
            return Some(why);
        }
        let writes = w.read_pct < 100 || w.trim != TrimMode::None;
        let wmax = w.bs.for_op(Op::Write).iter().map(|&(b, _)| b).max();
        let wmin = w.bs.for_op(Op::Write).iter().map(|&(b, _)| b).min();
        if let (true, Some(b)) = (writes && w.trim == TrimMode::None, wmax) {
            if b > self.zone_bytes {
                return Some(format!(
                    "a write of {b} bytes is larger than a zone ({} bytes)",
                    self.zone_bytes
                ));
            }
        }
        if let (true, Some(b)) = (writes && w.trim == TrimMode::None, wmin) {
            if b > self.capacity_bytes {
                return Some(format!(
                    "the zone capacity ({} bytes) is smaller than the smallest write ({b} bytes)",
                    self.capacity_bytes
                ));
            }
        }
        match w.trim {
            TrimMode::None => {}
            TrimMode::ThenWrite => {
                return Some("a trim-then-write workload (trimwrite) cannot run in zones".into())
            }
            TrimMode::Only => {
                if w.bs
                    .for_op(Op::Trim)
                    .iter()
                    .any(|&(b, _)| b != self.zone_bytes)
                {
                    return Some(format!(
                        "a trim in zones resets one zone: its block size must be the zone \
                         size ({} bytes), one size only",
                        self.zone_bytes
                    ));
                }
            }
        }
        if w.offset_bytes % self.zone_bytes != 0 {
            return Some(format!(
                "the offset ({} bytes) must be a multiple of the zone size ({} bytes)",
                w.offset_bytes, self.zone_bytes
            ));
        }
        if w.size_bytes.is_some_and(|s| s < self.zone_bytes) {
            return Some(format!(
                "the working set must hold at least one zone ({} bytes)",
                self.zone_bytes
            ));
        }
        if matches!(w.dist, Distribution::Sequence { .. })
            || w.seq_gap_bytes != 0
            || w.seq_layout != SeqLayout::Regions
            || w.share_pct.is_some()
            || w.offset_increment_bytes != 0
            || w.zones.is_some()
            || w.settings.flag(&crate::plan::settings::declared::FILL_FS)
        {
            return Some(
                "zones place their own offsets: no sequence dist, seq_gap, stride layout, \
                 share, offset increment, strided zones or fill_fs"
                    .into(),
            );
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::BlockSizes;

    #[test]
    fn settings_are_checked() {
        assert!(Zbd::of_size(1 << 20).invalid().is_none());
        assert!(Zbd::of_size(256).invalid().unwrap().contains("512"));
        let z = Zbd {
            capacity_bytes: 2 << 20,
            ..Zbd::of_size(1 << 20)
        };
        assert!(z.invalid().unwrap().contains("capacity"));
        let z = Zbd {
            stream_max_open: 2,
            ..Zbd::of_size(1 << 20)
        };
        assert!(z.invalid().unwrap().contains("per-stream"));
        let z = Zbd {
            reset_threshold: 1.5,
            ..Zbd::of_size(1 << 20)
        };
        assert!(z.invalid().unwrap().contains("threshold"));
    }

    #[test]
    fn workloads_that_do_not_fit_are_refused() {
        let z = Zbd::of_size(1 << 20);
        let w = Workload {
            read_pct: 0,
            bs: BlockSizes::fixed(2 << 20),
            ..Workload::default()
        };
        assert!(z.misfit(&w).unwrap().contains("larger than a zone"));
        // Reads may be larger than a zone (fio shortens them to the written data).
        let w = Workload {
            read_pct: 100,
            bs: BlockSizes::fixed(64 << 10),
            ..Workload::default()
        };
        assert!(z.misfit(&w).is_none());
        let w = Workload {
            read_pct: 0,
            trim: TrimMode::Only,
            bs: BlockSizes::fixed(64 << 10),
            ..Workload::default()
        };
        assert!(z.misfit(&w).unwrap().contains("must be the zone size"));
        let w = Workload {
            read_pct: 0,
            trim: TrimMode::Only,
            bs: BlockSizes::fixed(1 << 20),
            ..Workload::default()
        };
        assert!(z.misfit(&w).is_none());
        let w = Workload {
            offset_bytes: 4096,
            ..Workload::default()
        };
        assert!(z.misfit(&w).unwrap().contains("multiple of the zone size"));
        let w = Workload {
            offset_increment_bytes: 1 << 20,
            ..Workload::default()
        };
        assert!(z.misfit(&w).unwrap().contains("offset increment"));
    }
}
