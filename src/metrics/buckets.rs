//! The latency histogram `--metrics` exposes, and how ioscope's own histograms feed
//! it without recording any latency twice.
//!
//! Bucket layout: upper bounds at 2^(k/48) ns for k = 480 .. 1776, i.e. 1.024 µs
//! to 137 s, 48 buckets per power of two (ratio 2^(1/48) ≈ 1.0145 between neighbours,
//! 1,297 bounds), plus `+Inf`. `histogram_quantile` interpolates inside a bucket, so
//! a quantile it reports is within 1.45 % of the true one, and usually within half of
//! that: p99 at the 1 % level. The bounds fall on powers of two, as the buckets of
//! ioscope's HDR histograms (`stats::histogram`) do.
//!
//! Feeding: at each interval end the collector hands over each workload's interval
//! histogram; its non-zero HDR buckets (`LatencyHistogram::buckets`, by counts
//! index) are added to the Prometheus bucket holding the HDR
//! bucket's highest value. An HDR bucket is at most 1/1024 of its value wide, so a
//! latency is counted at most 0.1 % above its own bucket's bound. The cost is one pass
//! over the non-zero HDR buckets per workload and direction per interval, none per I/O.

use crate::stats::histogram::{LatencyHistogram, MAX_TRACKABLE_NS, SIGNIFICANT_DIGITS};
use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::{MetricType, TypedMetric};
use std::sync::{Arc, Mutex, OnceLock};

/// Buckets per power of two.
pub const PER_OCTAVE: u32 = 48;
/// The first bound is 2^(FIRST / 48) ns = 1.024 µs.
const FIRST: u32 = 10 * PER_OCTAVE;
/// The last bound is 2^(LAST / 48) ns ≈ 137 s.
const LAST: u32 = 37 * PER_OCTAVE;
/// How many finite bounds.
pub const BOUNDS: usize = (LAST - FIRST + 1) as usize;

/// The finite upper bounds, in seconds.
pub fn bounds_s() -> &'static [f64] {
    static B: OnceLock<Vec<f64>> = OnceLock::new();
    B.get_or_init(|| {
        (FIRST..=LAST)
            .map(|k| 2f64.powf(k as f64 / PER_OCTAVE as f64) / 1e9)
            .collect()
    })
}

/// For every HDR counts index (the wire form's bucket numbers): the Prometheus bucket
/// its highest value falls in (`BOUNDS` = above every bound, `+Inf` only).
fn bucket_of_index() -> &'static [u16] {
    static T: OnceLock<Vec<u16>> = OnceLock::new();
    T.get_or_init(|| {
        let layout = hdrhistogram::Histogram::<u64>::new_with_bounds(
            1,
            MAX_TRACKABLE_NS,
            SIGNIFICANT_DIGITS,
        )
        .expect("the stats histogram's bounds are valid");
        let bounds_ns: Vec<f64> = bounds_s().iter().map(|b| b * 1e9).collect();
        layout
            .iter_all()
            .map(|v| {
                let high_ns = v.value_iterated_to() as f64;
                bounds_ns.partition_point(|&b| b < high_ns) as u16
            })
            .collect()
    })
}

#[derive(Debug, Default)]
struct Counts {
    /// Per finite bound (not cumulative), then the overflow.
    per_bucket: Vec<u64>,
    count: u64,
    sum_s: f64,
}

/// A Prometheus histogram fed a whole interval's latencies at a time.
#[derive(Debug, Clone, Default)]
pub struct BucketHistogram {
    counts: Arc<Mutex<Counts>>,
}

impl BucketHistogram {
    /// Adds an interval's latencies.
    pub fn add(&self, h: &LatencyHistogram) {
        if h.count() == 0 {
            return;
        }
        let table = bucket_of_index();
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if c.per_bucket.is_empty() {
            c.per_bucket = vec![0; BOUNDS + 1];
        }
        for (i, n) in h.buckets() {
            let b = table.get(i).map_or(BOUNDS, |&b| b as usize);
            c.per_bucket[b] += n;
        }
        c.count += h.count();
        c.sum_s += h.sum_ns() as f64 / 1e9;
    }

    /// (bound in s, cumulative count) for every bound and `+Inf`; sum; count.
    fn cumulative(&self) -> (Vec<(f64, u64)>, f64, u64) {
        let c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let mut acc = 0;
        let buckets = bounds_s()
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .enumerate()
            .map(|(i, b)| {
                acc += c.per_bucket.get(i).copied().unwrap_or(0);
                (b, acc)
            })
            .collect();
        (buckets, c.sum_s, c.count)
    }
}

impl TypedMetric for BucketHistogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for BucketHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let (buckets, sum, count) = self.cumulative();
        encoder.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_grow_by_at_most_one_and_a_half_percent_from_1us_to_100s() {
        let b = bounds_s();
        assert_eq!(b.len(), BOUNDS);
        assert!((b[0] - 1.024e-6).abs() < 1e-12, "{}", b[0]);
        assert!(*b.last().unwrap() > 100.0);
        for w in b.windows(2) {
            assert!(w[1] / w[0] < 1.0146 && w[1] > w[0]);
        }
    }

    #[test]
    fn interval_histograms_land_in_the_bucket_of_their_value() {
        let mut h = LatencyHistogram::new();
        for ns in [500, 1_000, 2_000, 2_100, 10_000_000] {
            h.record(ns);
        }
        h.record(200_000_000_000); // 200 s: above every bound
        let p = BucketHistogram::default();
        p.add(&h);
        p.add(&h);
        let (buckets, sum, count) = p.cumulative();
        assert_eq!(count, 12);
        assert!((sum - 2.0 * h.sum_ns() as f64 / 1e9).abs() < 1e-6);
        // The cumulative count at the highest bound not above `s`.
        let at = |s: f64| buckets.iter().rev().find(|(b, _)| *b <= s).unwrap().1;
        // 500 ns and 1 µs in the first bucket (≤ 1.024 µs).
        assert_eq!(buckets[0].1, 4);
        // 2 µs is under the bound 2^11 ns; 2.1 µs two bounds further (2.078, 2.108 µs).
        assert_eq!(at(2.048e-6), 6);
        assert_eq!(at(2.1e-6), 6);
        assert_eq!(at(2.11e-6), 8);
        // 10 ms: between the bounds 9.976 ms and 10.121 ms.
        assert_eq!(at(0.0101), 8);
        assert_eq!(at(0.0102), 10);
        assert_eq!(buckets[BOUNDS - 1].1, 10);
        assert_eq!(buckets[BOUNDS].1, 12);
    }
}
