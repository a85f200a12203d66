//! vdbench's `hotband=` access curve (the `vdbench_hotband` distribution), the one
//! vdbench 5.04 draws a hot band's random offsets from.
//!
//! vdbench models a cache-hit curve: a uniform draw `u` in [0, 1) is looked up in a
//! piecewise-linear table of (cumulative probability, position) and becomes a whole
//! number `m` (the table's "MB"). vdbench then takes `m × 1000` as a byte offset for
//! the record number (`m × 1000 / xfersize`, integer division), so the curve's
//! positions land in units of 1000 bytes: 8.72 % of I/Os fall in the band's first
//! 16,000 bytes, 32.6 % in its first 1,024,000, 50.0 % in its first 16 MB; the rest
//! thins out up to 1.3 TB and wraps around the band (record number modulo the
//! band's records). Writes are moved on by 1 % of the band's records (vdbench keeps
//! them off the hottest reads; it only turns that off for dedup). The band's size
//! counts in whole MB (10^6 bytes), as vdbench's does; the offsets are multiples of
//! each I/O's own size from the band's start.
//!
//! The table is vdbench's, kept as it is, with its last segment: its slope is not
//! the one from the table's last two points, so the tail ends at 1.31e9 "MB" rather
//! than the 1.07e10 its positions name. Reproducing the curve means keeping that.
//! The trade-off: one table walk (28 segments, a binary search) and one `f64` per I/O.

/// One segment of the curve: from cumulative probability `pb`, the position (in
/// vdbench's "MB") starts at `start` and grows by `slope` per unit of probability.
struct Segment {
    pb: f64,
    start: f64,
    slope: f64,
}

const fn seg(pb: f64, start: f64, slope: f64) -> Segment {
    Segment { pb, start, slope }
}

/// vdbench 5.04's table (HotBand's probability curve, positions and slopes).
const CURVE: [Segment; 28] = [
    seg(0.0, 0.0, 183.4511752),
    seg(0.087217, 16.0, 1159.945628),
    seg(0.10101, 32.0, 1025.778015),
    seg(0.132206, 64.0, 2307.172362),
    seg(0.159946, 128.0, 3064.644852),
    seg(0.201713, 256.0, 4204.331611),
    seg(0.262602, 512.0, 8019.055699),
    seg(0.32645, 1024.0, 25313.90019),
    seg(0.366902, 2048.0, 106263.1067),
    seg(0.386175, 4096.0, 80683.52498),
    seg(0.436941, 8192.0, 179296.7222),
    seg(0.482631, 16384.0, 398437.1604),
    seg(0.523752, 32768.0, 885415.912),
    seg(0.56076, 65536.0, 1967590.916),
    seg(0.594068, 131072.0, 4372424.257),
    seg(0.624045, 262144.0, 9716498.348),
    seg(0.651024, 524288.0, 21592218.55),
    seg(0.675305, 1048576.0, 47982707.89),
    seg(0.697159, 2097152.0, 106628239.8),
    seg(0.716827, 4194304.0, 236951643.9),
    seg(0.734528, 8388608.0, 526559208.7),
    seg(0.750459, 16777216.0, 1170131575.0),
    seg(0.764797, 33554432.0, 2600292389.0),
    seg(0.777701, 67108864.0, 5778427530.0),
    seg(0.789314, 134217728.0, 12840950067.0),
    seg(0.799767, 268435456.0, 28535444594.0),
    seg(0.809174, 536870912.0, 63412099098.0),
    seg(0.81764, 1073741824.0, 1313220630.0),
];

/// vdbench counts a band's size in these (MB = 1000², as its HotBand does).
pub const BAND_UNIT_BYTES: u64 = 1_000_000;

/// A band's curve: its size in whole MB, as bytes.
#[derive(Debug, Clone, Copy)]
pub struct Hotband {
    band_bytes: u64,
}

impl Hotband {
    /// The curve over a working set of `ws_bytes`; only its whole MB count.
    pub fn new(ws_bytes: u64) -> Self {
        Hotband {
            band_bytes: ws_bytes / BAND_UNIT_BYTES * BAND_UNIT_BYTES,
        }
    }

    /// The curve's position for a uniform draw `u` in [0, 1), in vdbench's "MB"
    /// (whole units; vdbench truncates it).
    pub fn position(u: f64) -> u64 {
        let i = CURVE.partition_point(|s| s.pb <= u).saturating_sub(1);
        let s = &CURVE[i];
        ((u - s.pb) * s.slope + s.start) as u64
    }

    /// The byte offset from the band's start of an I/O of `len` bytes for the draw
    /// `u`: a multiple of `len`, and the I/O ends inside the band's whole MB.
    #[inline(never)]
    pub fn offset(&self, u: f64, len: u32, write: bool) -> u64 {
        let len = u64::from(len.max(1));
        let records = self.band_bytes / len;
        if records == 0 {
            // Refused before the run (`misfit`); kept harmless here.
            return 0;
        }
        let mut rec = Self::position(u).saturating_mul(1000) / len;
        if write {
            rec += records / 100;
        }
        (rec % records) * len
    }
}

/// Why a workload of `w` cannot use the curve over a working set of `ws_bytes`, if
/// it cannot: vdbench needs a band of at least one MB (10^6 bytes); every block
/// size must fit in its whole MB.
pub fn misfit(w: &crate::plan::model::Workload, ws_bytes: u64) -> Option<String> {
    use crate::plan::model::{AccessPattern, Distribution};
    if w.dist != Distribution::VdbenchHotband {
        return None;
    }
    if !matches!(w.pattern, AccessPattern::Random) || w.zones.is_some() || w.sprandom.is_some() {
        return Some(
            "the vdbench_hotband distribution places random offsets: it needs random access \
             without zones or sprandom"
                .into(),
        );
    }
    let band = Hotband::new(ws_bytes).band_bytes;
    if band == 0 || band < w.bs.max_bytes() {
        return Some(format!(
            "the vdbench_hotband distribution needs a band of at least one MB (10^6 bytes, \
             as vdbench requires) and of the largest block size; the working set is {ws_bytes} \
             bytes"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_starts_at_zero_and_meets_its_breakpoints() {
        assert_eq!(Hotband::position(0.0), 0);
        // At each breakpoint the position is the segment's start.
        assert_eq!(Hotband::position(0.087217), 16);
        assert_eq!(Hotband::position(0.32645), 1024);
        // Below a breakpoint, on the previous segment (truncated to whole units).
        assert_eq!(Hotband::position(0.3264), 1023);
        // The tail: vdbench's last slope ends it near 1.31e9, not 1.07e10.
        let top = Hotband::position(0.999_999_999);
        assert!((1_313_000_000..1_313_300_000).contains(&top), "{top}");
    }

    #[test]
    fn positions_are_thousand_byte_units_in_records_of_the_io_size() {
        // A 100 MB band, 4 KiB reads: position 16 → 16,000 bytes → record 3.
        let h = Hotband::new(100 * BAND_UNIT_BYTES + 999);
        let u = 0.087217; // position 16
        assert_eq!(h.offset(u, 4096, false), 3 * 4096);
        // The same draw for a write moves on by 1 % of the band's records.
        let records = 100 * BAND_UNIT_BYTES / 4096;
        assert_eq!(h.offset(u, 4096, true), (3 + records / 100) * 4096);
        // 32 KiB: the first record until position 32.
        assert_eq!(h.offset(u, 32768, false), 0);
    }

    #[test]
    fn offsets_wrap_around_the_band_and_stay_inside_it() {
        let h = Hotband::new(3 * BAND_UNIT_BYTES);
        let mut rng = crate::rng::Rng::new(7);
        for _ in 0..100_000 {
            for len in [4096u32, 8192, 16384, 32768] {
                let o = h.offset(rng.unit_f64(), len, rng.below(2) == 0);
                assert_eq!(o % u64::from(len), 0);
                assert!(o + u64::from(len) <= 3 * BAND_UNIT_BYTES, "{o} {len}");
            }
        }
    }

    #[test]
    fn a_third_of_reads_land_in_the_first_1024000_bytes() {
        // vdbench's curve: P(position < 1024) = 0.32645; the tail wraps in too, about
        // (1 - P(position < band)) × 1.024 MB / band more.
        let h = Hotband::new(64 * BAND_UNIT_BYTES);
        let mut rng = crate::rng::Rng::new(11);
        let n = 400_000;
        let low = (0..n)
            .filter(|_| h.offset(rng.unit_f64(), 4096, false) < 1_024_000)
            .count() as f64
            / n as f64;
        assert!((0.32645..0.32645 + 0.02).contains(&low), "{low}");
    }

    #[test]
    fn a_band_under_one_mb_is_refused() {
        let mut w = crate::plan::model::Workload {
            dist: crate::plan::model::Distribution::VdbenchHotband,
            ..Default::default()
        };
        assert!(misfit(&w, 999_999).unwrap().contains("one MB"));
        assert!(misfit(&w, 1_000_000).is_none());
        w.pattern = crate::plan::model::AccessPattern::Sequential;
        assert!(misfit(&w, 1_000_000).unwrap().contains("random access"));
    }
}
