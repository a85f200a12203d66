//! Latency histograms.
//!
//! Bucket layout and error bound: values are nanoseconds recorded into an
//! HdrHistogram with 3 significant decimal digits over 1 ns .. 1 hour. Each power of
//! two is split into 2048 linear sub-buckets, so any recorded value is represented by a
//! bucket whose width is at most 1/1024 of the value: every percentile reported is
//! within **0.1 %** (relative) of the true sample at that rank. Values above one hour
//! are clamped to one hour (and counted in `max` exactly). Count, sum, min, max and the
//! sum of squares are kept exactly beside the buckets, so `mean`, `min`, `max` and
//! `stddev` carry no bucket error at all.
//!
//! Memory is constant whatever the run length: counters are added bucket by bucket up
//! to the highest latency recorded (8 KiB per power of two: 24 KiB for latencies under
//! 4 µs, 168 KiB up to 1 s, 261 KiB for the whole hour). Histograms merge with `+=`,
//! so per-worker histograms combine at interval ends without locks.
//!
//! Recording is on the hot path (up to three records per open-loop I/O), so the
//! counters are kept here, in HdrHistogram's own bucket layout with its parameters as
//! constants: a record is a leading-zero count, two shifts and an add, with none of the
//! loads of a general histogram's settings. Percentiles are read by one walk over the
//! counters and agree exactly with the crate's query on the same buckets (a test
//! checks this); the encoded histograms and the CDF build an `hdrhistogram::Histogram`
//! from the counters (each bucket maps to the same bucket there).

use crate::result::LatencyStats;
use hdrhistogram::Histogram;
use std::ops::AddAssign;

/// Highest trackable latency: one hour in ns.
pub const MAX_TRACKABLE_NS: u64 = 3_600_000_000_000;
/// Significant decimal digits kept by the buckets.
pub const SIGNIFICANT_DIGITS: u8 = 3;
/// Relative error bound of any reported percentile.
pub const RELATIVE_ERROR_BOUND: f64 = 0.001;

/// Percentiles listed in every summary.
pub const SUMMARY_PERCENTILES: [f64; 6] = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99];

/// Percentiles sampled for the spectrum plot (log-spaced in 1/(1-p)).
const SPECTRUM: [f64; 21] = [
    0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 75.0, 80.0, 85.0, 90.0, 95.0, 97.0, 99.0, 99.5,
    99.9, 99.95, 99.99, 99.999, 100.0,
];

/// HdrHistogram's layout for lowest value 1 and 3 significant digits: 2048
/// sub-buckets per power of two (`sub_bucket_count_magnitude` 11), the first half of
/// each bucket after the first shared with the one below.
const SUB_BUCKET_HALF_MAGNITUDE: u32 = 10;
const SUB_BUCKET_HALF_COUNT: u64 = 1 << SUB_BUCKET_HALF_MAGNITUDE;
const SUB_BUCKET_MASK: u64 = (1 << (SUB_BUCKET_HALF_MAGNITUDE + 1)) - 1;
/// 64 − unit magnitude (0) − sub-bucket count magnitude (11).
const LEADING_ZERO_COUNT_BASE: u32 = 53;
/// Counters needed to reach [`MAX_TRACKABLE_NS`].
const COUNTS_LEN: usize = bucket_index(MAX_TRACKABLE_NS) + 1;

/// HdrHistogram's counts index of `v` (v ≥ 1).
#[inline(always)]
const fn bucket_index(v: u64) -> usize {
    let bucket = LEADING_ZERO_COUNT_BASE - (v | SUB_BUCKET_MASK).leading_zeros();
    (((bucket as u64 + 1) << SUB_BUCKET_HALF_MAGNITUDE) + (v >> bucket) - SUB_BUCKET_HALF_COUNT)
        as usize
}

/// The lowest value that lands in counts index `i`.
fn bucket_value(i: usize) -> u64 {
    let mut bucket = (i >> SUB_BUCKET_HALF_MAGNITUDE) as i64 - 1;
    let mut sub = (i as u64 & (SUB_BUCKET_HALF_COUNT - 1)) + SUB_BUCKET_HALF_COUNT;
    if bucket < 0 {
        sub -= SUB_BUCKET_HALF_COUNT;
        bucket = 0;
    }
    sub << bucket
}

/// The middle of counts index `i`'s range: HdrHistogram's median-equivalent of
/// the values that land there (its range is `1 << bucket` wide).
fn bucket_median(i: usize) -> u64 {
    let bucket = ((i >> SUB_BUCKET_HALF_MAGNITUDE) as u32).saturating_sub(1);
    bucket_value(i) + ((1u64 << bucket) >> 1)
}

/// The exact figures a histogram keeps beside its buckets (an encoded histogram has
/// only the buckets; a result's summary has these).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Moments {
    pub sum_ns: u128,
    pub sum_sq_ns: u128,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Moments {
    /// The figures behind a summary of `count` latencies (µs, as the result holds
    /// them): sums from the mean and standard deviation, so as exact as those are.
    pub fn of_summary_us(s: &LatencyStats, count: u64) -> Moments {
        let n = count as f64;
        let (mean_ns, sd_ns) = (s.mean * 1e3, s.stddev * 1e3);
        Moments {
            sum_ns: (mean_ns * n).round().max(0.0) as u128,
            sum_sq_ns: ((sd_ns * sd_ns + mean_ns * mean_ns) * n).round().max(0.0) as u128,
            min_ns: (s.min * 1e3).round() as u64,
            max_ns: (s.max * 1e3).round() as u64,
        }
    }
}

/// A latency histogram with exact moments.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    /// Counts in HdrHistogram's layout (see [`bucket_index`]), grown on demand up to
    /// the highest bucket recorded: a histogram of sub-microsecond latencies holds a
    /// few KiB, not the whole hour's range.
    counts: Vec<u64>,
    count: u64,
    sum_ns: u128,
    sum_sq_ns: u128,
    min_ns: u64,
    max_ns: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        LatencyHistogram {
            counts: Vec::new(),
            count: 0,
            sum_ns: 0,
            sum_sq_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }

    /// Records one latency. O(1); allocates only when a latency lands beyond every
    /// bucket recorded so far.
    #[inline]
    pub fn record(&mut self, lat_ns: u64) {
        // The index grows with the value, so one past every counter (and past the
        // last one may hold) is clamped on the cold path: one bounds test here.
        let i = bucket_index(lat_ns.max(1));
        match self.counts.get_mut(i) {
            Some(n) => *n += 1,
            None => self.grow_to_count(i.min(COUNTS_LEN - 1)),
        }
        self.count += 1;
        self.sum_ns += lat_ns as u128;
        self.sum_sq_ns += (lat_ns as u128) * (lat_ns as u128);
        self.min_ns = self.min_ns.min(lat_ns);
        self.max_ns = self.max_ns.max(lat_ns);
    }

    /// Makes room for counts index `i`: whole buckets, at least doubling.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        let whole_buckets = ((i >> SUB_BUCKET_HALF_MAGNITUDE) + 1) << SUB_BUCKET_HALF_MAGNITUDE;
        let len = whole_buckets
            .max(2 * self.counts.len())
            .min(COUNTS_LEN)
            .max(i + 1);
        self.counts.resize(len, 0);
    }

    /// Makes room for counts index `i` and counts one value there.
    #[cold]
    #[inline(never)]
    fn grow_to_count(&mut self, i: usize) {
        self.grow(i);
        self.counts[i] += 1;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    pub fn min_ns(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min_ns
        }
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }

    /// Population standard deviation.
    pub fn stddev_ns(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let n = self.count as f64;
        let mean = self.sum_ns as f64 / n;
        let var = (self.sum_sq_ns as f64 / n - mean * mean).max(0.0);
        var.sqrt()
    }

    /// The counters as an `hdrhistogram::Histogram`: for queries, and for the
    /// result's encoded histograms (`result::hdr`).
    pub fn to_hdr(&self) -> Histogram<u64> {
        // Sized to what was recorded; the bucket layout depends only on the lowest
        // value and the digits, so every counter lands in the same bucket.
        let high = self.max_ns.clamp(2, MAX_TRACKABLE_NS);
        let mut h = Histogram::new_with_bounds(1, high, SIGNIFICANT_DIGITS)
            .expect("histogram bounds 1..high with high >= 2 are valid");
        for (i, c) in self.buckets() {
            h.saturating_record_n(bucket_value(i), c);
        }
        h
    }

    /// The non-zero buckets as (HDR counts index, count), lowest first: what
    /// [`LatencyHistogram::to_wire`], [`LatencyHistogram::to_hdr`] and the live
    /// metrics' buckets (`metrics::buckets`) read.
    pub fn buckets(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter_map(|(i, &c)| (c > 0).then_some((i, c)))
    }

    /// The value at percentile `p` (0..=100), in ns. Within 0.1 % of the true sample.
    pub fn percentile_ns(&self, p: f64) -> u64 {
        let mut out = [0];
        self.percentiles_ns(&[p], &mut out);
        out[0]
    }

    /// The values at percentiles `ps` (each 0..=100), in ns, into `out`: for
    /// ascending `ps` one walk over the counters (out of order costs a new walk), with no `hdrhistogram::Histogram` built (the
    /// per-interval summaries ask for these every second, per workload, direction,
    /// connection and path). The same figures as the crate's query on
    /// [`LatencyHistogram::to_hdr`] (a test compares them): the median-equivalent of
    /// the bucket that holds the sample of nearest rank, clamped into [min, max].
    pub fn percentiles_ns(&self, ps: &[f64], out: &mut [u64]) {
        debug_assert!(out.len() == ps.len());
        if self.count == 0 {
            out.fill(0);
            return;
        }
        let n = self.count as f64;
        let mut buckets = self.buckets();
        let (mut seen, mut at, mut last_rank) = (0u64, 0usize, 0u64);
        for (p, slot) in ps.iter().zip(out.iter_mut()) {
            *slot = if *p >= 100.0 {
                self.max_ns
            } else if *p <= 0.0 {
                self.min_ns()
            } else {
                // The sample of nearest rank ceil(p·n), kept from being pushed a whole
                // rank up by float error (0.999 × 4000 is 3996.0000000000005).
                let rank = (p / 100.0 * n * (1.0 - 1e-12)).ceil().max(1.0) as u64;
                if rank < last_rank {
                    // Asked out of order: walk again from the start rather than answer wrong.
                    (buckets, seen, at) = (self.buckets(), 0, 0);
                }
                last_rank = rank;
                while seen < rank {
                    match buckets.next() {
                        Some((i, c)) => (seen, at) = (seen + c, i),
                        None => break,
                    }
                }
                bucket_median(at).clamp(self.min_ns(), self.max_ns)
            };
        }
    }

    /// Summary in microseconds; `with_spectrum` adds the percentile spectrum.
    pub fn summary_us(&self, with_spectrum: bool) -> LatencyStats {
        let us = |ns: f64| ns / 1000.0;
        let mut p = [0u64; SUMMARY_PERCENTILES.len()];
        self.percentiles_ns(&SUMMARY_PERCENTILES, &mut p);
        let p = p.map(|v| us(v as f64));
        let (spectrum, cdf) = if with_spectrum && self.count > 0 {
            let mut s = [0u64; SPECTRUM.len()];
            self.percentiles_ns(&SPECTRUM, &mut s);
            let spectrum = SPECTRUM.iter().zip(s).map(|(&q, v)| (q, us(v as f64)));
            (spectrum.collect(), cdf_us(self))
        } else {
            (Vec::new(), Vec::new())
        };
        LatencyStats {
            min: us(self.min_ns() as f64),
            mean: us(self.mean_ns()),
            stddev: us(self.stddev_ns()),
            max: us(self.max_ns as f64),
            p50: p[0],
            p90: p[1],
            p95: p[2],
            p99: p[3],
            p99_9: p[4],
            p99_99: p[5],
            spectrum,
            cdf,
        }
    }

    /// The histogram whose buckets are `h`'s and whose exact figures are `m`'s: the
    /// inverse of [`LatencyHistogram::to_hdr`] with [`LatencyHistogram::moments`].
    /// `None` when `h` has another bucket layout (lowest value other than 1 or other
    /// than 3 significant digits), whose buckets would not land in ours exactly.
    pub fn from_hdr(h: &Histogram<u64>, m: Moments) -> Option<Self> {
        if h.low() != 1 || h.sigfig() != SIGNIFICANT_DIGITS {
            return None;
        }
        let mut out = LatencyHistogram {
            counts: Vec::new(),
            count: h.len(),
            sum_ns: m.sum_ns,
            sum_sq_ns: m.sum_sq_ns,
            min_ns: if h.is_empty() { u64::MAX } else { m.min_ns },
            max_ns: m.max_ns,
        };
        for v in h.iter_recorded() {
            let i = bucket_index(v.value_iterated_to().clamp(1, MAX_TRACKABLE_NS));
            if i >= out.counts.len() {
                out.grow(i);
            }
            out.counts[i] += v.count_at_value();
        }
        Some(out)
    }

    /// The exact figures kept beside the buckets.
    pub fn moments(&self) -> Moments {
        Moments {
            sum_ns: self.sum_ns,
            sum_sq_ns: self.sum_sq_ns,
            min_ns: self.min_ns(),
            max_ns: self.max_ns,
        }
    }

    /// Appends the histogram in its own bucket layout (little-endian): count, sum,
    /// sum of squares, min, max, then the non-zero buckets as (index u32, count u64).
    /// [`LatencyHistogram::from_wire`] rebuilds it exactly, so histograms from other
    /// processes (MPI ranks) merge with `+=` as if recorded here.
    pub fn to_wire(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.sum_ns.to_le_bytes());
        out.extend_from_slice(&self.sum_sq_ns.to_le_bytes());
        out.extend_from_slice(&self.min_ns.to_le_bytes());
        out.extend_from_slice(&self.max_ns.to_le_bytes());
        let nonzero = self.buckets().count() as u32;
        out.extend_from_slice(&nonzero.to_le_bytes());
        for (i, c) in self.buckets() {
            out.extend_from_slice(&(i as u32).to_le_bytes());
            out.extend_from_slice(&c.to_le_bytes());
        }
    }

    /// Reads a histogram written by [`LatencyHistogram::to_wire`] from the front of
    /// `buf`, advancing it; `None` when the bytes are short or a bucket is out of range.
    pub fn from_wire(buf: &mut &[u8]) -> Option<Self> {
        fn take<const N: usize>(buf: &mut &[u8]) -> Option<[u8; N]> {
            let (head, rest) = buf.split_first_chunk::<N>()?;
            *buf = rest;
            Some(*head)
        }
        let count = u64::from_le_bytes(take(buf)?);
        let sum_ns = u128::from_le_bytes(take(buf)?);
        let sum_sq_ns = u128::from_le_bytes(take(buf)?);
        let min_ns = u64::from_le_bytes(take(buf)?);
        let max_ns = u64::from_le_bytes(take(buf)?);
        let nonzero = u32::from_le_bytes(take(buf)?);
        let mut h = LatencyHistogram {
            counts: Vec::new(),
            count,
            sum_ns,
            sum_sq_ns,
            min_ns,
            max_ns,
        };
        for _ in 0..nonzero {
            let i = u32::from_le_bytes(take(buf)?) as usize;
            let c = u64::from_le_bytes(take(buf)?);
            if i >= COUNTS_LEN {
                return None;
            }
            if i >= h.counts.len() {
                h.grow(i);
            }
            h.counts[i] += c;
        }
        Some(h)
    }

    /// The latencies above `threshold_ns`: how many, and their sum beyond it (ns).
    /// Each is taken at its bucket's lowest value, so within the bucket error.
    pub fn excess_over_ns(&self, threshold_ns: u64) -> (u64, u128) {
        let (mut n, mut extra) = (0u64, 0u128);
        for (i, &c) in self.counts.iter().enumerate() {
            let v = bucket_value(i);
            if c > 0 && v > threshold_ns {
                n += c;
                extra += u128::from(v - threshold_ns) * u128::from(c);
            }
        }
        (n, extra)
    }

    /// Empties the histogram, keeping its allocation.
    pub fn reset(&mut self) {
        self.counts.fill(0);
        self.count = 0;
        self.sum_ns = 0;
        self.sum_sq_ns = 0;
        self.min_ns = u64::MAX;
        self.max_ns = 0;
    }
}

/// Share of samples at or below fio's bucket edges, as (µs, %).
fn cdf_us(h: &LatencyHistogram) -> Vec<(f64, f64)> {
    const STEPS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let edges_ns = STEPS
        .iter()
        .copied()
        .chain(STEPS.iter().map(|s| s * 1_000))
        .chain(STEPS.iter().map(|s| s * 1_000_000))
        .chain(std::iter::once(2_000_000_000));
    // One walk: the samples in every bucket up to each (ascending) edge's own.
    let mut buckets = h.buckets().peekable();
    let mut below = 0u64;
    edges_ns
        .map(|e| {
            let last = bucket_index(e.clamp(1, MAX_TRACKABLE_NS));
            while let Some((_, c)) = buckets.next_if(|&(i, _)| i <= last) {
                below += c;
            }
            (
                e as f64 / 1000.0,
                100.0 * below as f64 / h.count().max(1) as f64,
            )
        })
        .collect()
}

impl AddAssign<&LatencyHistogram> for LatencyHistogram {
    fn add_assign(&mut self, other: &LatencyHistogram) {
        if other.count == 0 {
            return;
        }
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        // Nothing below `other`'s lowest bucket is non-zero: skipped (a network
        // engine's latencies start about 9,800 counters up, of some 11,000).
        let from = bucket_index(other.min_ns.clamp(1, MAX_TRACKABLE_NS)).min(other.counts.len());
        for (a, b) in self.counts[from..].iter_mut().zip(&other.counts[from..]) {
            *a += b;
        }
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.sum_sq_ns += other.sum_sq_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// 0 ns counts as 1 ns, and everything past the trackable range (up to
    /// 2^62 ns) in the range's last counter, as the clamp before the index did.
    #[test]
    fn latencies_outside_the_range_land_at_its_ends() {
        let mut h = LatencyHistogram::new();
        h.record(0);
        assert_eq!(h.counts[bucket_index(1)], 1);
        for v in [
            MAX_TRACKABLE_NS,
            MAX_TRACKABLE_NS + 1,
            MAX_TRACKABLE_NS * 2,
            1 << 62,
        ] {
            h.record(v);
        }
        assert_eq!(h.counts.len(), COUNTS_LEN);
        assert_eq!(h.counts[COUNTS_LEN - 1], 4);
        assert_eq!(h.count(), 5);
        assert_eq!(h.counts.iter().sum::<u64>(), 5);
    }

    /// A histogram read back from its wire form is the same histogram.
    #[test]
    fn wire_round_trip_is_exact() {
        let mut rng = Rng::new(7);
        let mut h = LatencyHistogram::new();
        for _ in 0..50_000 {
            h.record(1 + rng.next_u64() % 5_000_000);
        }
        h.record(MAX_TRACKABLE_NS * 2);
        let mut bytes = Vec::new();
        h.to_wire(&mut bytes);
        bytes.push(0xff);
        let mut rest = bytes.as_slice();
        let back = LatencyHistogram::from_wire(&mut rest).expect("decodes");
        assert_eq!(rest, &[0xff], "reads exactly its own bytes");
        assert_eq!(back.count(), h.count());
        assert_eq!(back.sum_ns(), h.sum_ns());
        assert_eq!(back.max_ns(), h.max_ns());
        assert_eq!(back.min_ns(), h.min_ns());
        for p in [50.0, 99.0, 99.99] {
            assert_eq!(back.percentile_ns(p), h.percentile_ns(p));
        }
        assert!(LatencyHistogram::from_wire(&mut &bytes[..bytes.len() - 9]).is_none());
    }

    /// A histogram encoded as the result carries it, decoded and rebuilt with its
    /// summary's figures, is the same histogram: same buckets, same percentiles.
    #[test]
    fn result_encoding_round_trip_is_exact() {
        let mut rng = Rng::new(11);
        let mut h = LatencyHistogram::new();
        for _ in 0..100_000 {
            h.record(10f64.powf(2.0 + rng.unit_f64() * 6.0) as u64);
        }
        let text = crate::result::hdr::encode(&h.to_hdr()).unwrap();
        let decoded = crate::result::hdr::decode(&text).unwrap();
        let summary = h.summary_us(false);
        let back =
            LatencyHistogram::from_hdr(&decoded, Moments::of_summary_us(&summary, h.count()))
                .expect("same layout");
        let used = |c: &[u64]| c.len() - c.iter().rev().take_while(|&&n| n == 0).count();
        assert_eq!(
            back.counts[..used(&back.counts)],
            h.counts[..used(&h.counts)]
        );
        let (b, a) = (back.summary_us(true), h.summary_us(true));
        assert_eq!(b.named(), a.named());
        assert_eq!((b.min, b.max), (a.min, a.max));
        assert_eq!((&b.spectrum, &b.cdf), (&a.spectrum, &a.cdf));
        assert!(
            (b.mean - a.mean).abs() <= a.mean * 1e-12,
            "{} {}",
            b.mean,
            a.mean
        );
        assert!((b.stddev - a.stddev).abs() <= a.stddev * 1e-9);
        // Another layout's buckets would not land in ours.
        let other = Histogram::<u64>::new_with_bounds(1, 1_000_000, 2).unwrap();
        assert!(LatencyHistogram::from_hdr(&other, Moments::default()).is_none());
    }

    /// Regression: p99.9 of 4000 samples was the 4000 × 0.999 = 3996.0000000000005th,
    /// rounded up to the 3997th, one sample too high (found against Python's decoder).
    #[test]
    fn percentile_rank_is_not_pushed_up_by_float_error() {
        let mut h = LatencyHistogram::new();
        for v in 1..=4000u64 {
            h.record(v * 1000);
        }
        assert_eq!(
            h.percentile_ns(99.9),
            h.to_hdr().median_equivalent(3_996_000)
        );
        assert_eq!(
            h.percentile_ns(50.0),
            h.to_hdr().median_equivalent(2_000_000)
        );
    }

    /// The old query, through the crate: the sample of nearest rank as a quantile
    /// half a rank below it, its bucket's median-equivalent, clamped to [min, max].
    fn crate_percentile(h: &LatencyHistogram, hist: &Histogram<u64>, p: f64) -> u64 {
        if h.count() == 0 {
            return 0;
        }
        if p >= 100.0 {
            return h.max_ns();
        }
        if p <= 0.0 {
            return h.min_ns();
        }
        let n = h.count() as f64;
        let rank = (p / 100.0 * n * (1.0 - 1e-12)).ceil().max(1.0);
        let v = hist.median_equivalent(hist.value_at_quantile((rank - 0.5) / n));
        v.clamp(h.min_ns(), h.max_ns())
    }

    /// The counters' own walk gives the crate's figures exactly, for every
    /// percentile of the summary and the spectrum, on one value, a few, and wide
    /// log-uniform sets (sub-ns to an hour, so every bucket width is crossed).
    #[test]
    fn percentiles_equal_the_crates() {
        let mut rng = Rng::new(7);
        let mut ps: Vec<f64> = SPECTRUM.to_vec();
        ps.extend(SUMMARY_PERCENTILES);
        ps.extend([0.001, 33.3, 66.6, 99.9999]);
        ps.sort_by(f64::total_cmp);
        for (n, decades) in [(1, 3.0), (3, 5.0), (1000, 6.0), (100_000, 12.5), (7, 9.0)] {
            let mut h = LatencyHistogram::new();
            for _ in 0..n {
                h.record(10f64.powf(rng.unit_f64() * decades) as u64 + 1);
            }
            let hist = h.to_hdr();
            let mut got = vec![0; ps.len()];
            h.percentiles_ns(&ps, &mut got);
            for (p, g) in ps.iter().zip(&got) {
                assert_eq!(*g, crate_percentile(&h, &hist, *p), "n {n}, p{p}");
                assert_eq!(h.percentile_ns(*p), *g, "n {n}, p{p} alone");
            }
            // Out of order, the answers are the same figures (a fresh walk, not a wrong one).
            let reversed: Vec<f64> = ps.iter().rev().copied().collect();
            let mut back = vec![0; ps.len()];
            h.percentiles_ns(&reversed, &mut back);
            assert!(back.iter().eq(got.iter().rev()), "n {n}: reversed order");
        }
    }

    /// The CDF read by one walk over the counters equals the crate's count of the
    /// samples up to each edge; merging skips nothing that was recorded.
    #[test]
    fn cdf_equals_the_crates_count_and_merges_keep_every_sample() {
        let mut rng = Rng::new(11);
        let (mut a, mut b) = (LatencyHistogram::new(), LatencyHistogram::new());
        for _ in 0..50_000 {
            a.record(10f64.powf(rng.unit_f64() * 10.0) as u64 + 1);
            b.record(300_000 + rng.next_u64() % 700_000);
        }
        for h in [&a, &b] {
            let hist = h.to_hdr();
            for (edge_us, pct) in cdf_us(h) {
                let edge_ns = (edge_us * 1000.0).round() as u64;
                let want = 100.0 * hist.count_between(0, edge_ns) as f64 / h.count() as f64;
                assert_eq!(pct, want, "edge {edge_us} us");
            }
        }
        let mut ab = b.clone();
        ab += &a;
        let mut ba = a.clone();
        ba += &b;
        assert_eq!(ab.counts[..ba.counts.len()], ba.counts[..]);
        assert_eq!(ab.count(), 100_000);
        assert_eq!(ab.counts.iter().sum::<u64>(), 100_000);
    }

    /// Percentiles of a known synthetic set stay within the documented bound.
    #[test]
    fn percentiles_within_error_bound() {
        let mut rng = Rng::new(42);
        let mut values: Vec<u64> = (0..200_000)
            .map(|_| {
                // Log-uniform from 100 ns to 100 ms: exercises many buckets.
                let e = 2.0 + rng.unit_f64() * 6.0;
                10f64.powf(e) as u64
            })
            .collect();
        let mut h = LatencyHistogram::new();
        for &v in &values {
            h.record(v);
        }
        values.sort_unstable();
        for p in [1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99] {
            let rank = ((p / 100.0) * values.len() as f64).ceil() as usize - 1;
            let truth = values[rank] as f64;
            let got = h.percentile_ns(p) as f64;
            let err = (got - truth).abs() / truth;
            assert!(
                err <= RELATIVE_ERROR_BOUND,
                "p{p}: got {got} truth {truth} err {err}"
            );
        }
        let mean: f64 = values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64;
        assert!((h.mean_ns() - mean).abs() / mean < 1e-9);
        assert_eq!(h.max_ns(), *values.last().unwrap());
        assert_eq!(h.min_ns(), values[0]);
    }

    /// The hand-kept counters land exactly where HdrHistogram puts each value.
    #[test]
    fn layout_matches_hdrhistogram() {
        let mut reference = Histogram::<u64>::new_with_bounds(1, MAX_TRACKABLE_NS, 3).unwrap();
        let mut h = LatencyHistogram::new();
        let mut rng = Rng::new(9);
        let mut values: Vec<u64> = vec![1, 2, 2047, 2048, 2049, 4095, 4096, MAX_TRACKABLE_NS];
        values.extend((0..100_000).map(|_| 10f64.powf(rng.unit_f64() * 12.5) as u64 + 1));
        for &v in &values {
            reference.record(v).unwrap();
            h.record(v);
            // The lowest value of v's counter is v's lowest equivalent in HdrHistogram.
            assert_eq!(
                bucket_value(bucket_index(v)),
                reference.lowest_equivalent(v),
                "value {v}"
            );
        }
        let rebuilt = h.to_hdr();
        assert_eq!(rebuilt.len(), reference.len());
        for q in [0.1, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 99.99, 99.999] {
            assert_eq!(
                rebuilt.value_at_quantile(q / 100.0),
                reference.value_at_quantile(q / 100.0),
                "q {q}"
            );
        }
        assert_eq!(COUNTS_LEN, bucket_index(MAX_TRACKABLE_NS) + 1);
    }

    #[test]
    fn counters_grow_only_as_far_as_recorded() {
        let mut h = LatencyHistogram::new();
        for v in 1..5_000u64 {
            h.record(v);
        }
        assert!(h.counts.len() <= 4096, "{}", h.counts.len());
        h.record(MAX_TRACKABLE_NS * 2);
        assert_eq!(h.counts.len(), COUNTS_LEN);
        assert_eq!(h.max_ns(), MAX_TRACKABLE_NS * 2);
        // Merging a short histogram into a long one and the reverse agree.
        let mut short = LatencyHistogram::new();
        short.record(100);
        let mut a = short.clone();
        a += &h;
        let mut b = h.clone();
        b += &short;
        assert_eq!(a.count(), b.count());
        assert_eq!(a.percentile_ns(50.0), b.percentile_ns(50.0));
        assert_eq!(a.counts, b.counts);
    }

    #[test]
    fn merge_equals_single() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for v in 1..10_000u64 {
            if v % 3 == 0 {
                a.record(v * 7)
            } else {
                b.record(v * 7)
            }
            all.record(v * 7);
        }
        a += &b;
        assert_eq!(a.count(), all.count());
        assert_eq!(a.percentile_ns(99.0), all.percentile_ns(99.0));
        assert_eq!(a.stddev_ns(), all.stddev_ns());
    }

    #[test]
    fn empty_is_zero() {
        let h = LatencyHistogram::new();
        let s = h.summary_us(true);
        assert_eq!(s.max, 0.0);
        assert_eq!(s.p99, 0.0);
        assert!(s.spectrum.is_empty());
    }
}
