//! Measurement: the clock, latency histograms, per-worker snapshots, CPU accounting,
//! and the conversion of merged counters into the result model's totals.

pub mod cpu;
pub mod histogram;
pub mod pacing;
pub mod paths;
pub mod snapshot;

use crate::result::{IntervalLatency, OpTotals};
use histogram::LatencyHistogram;
use snapshot::OpStats;

/// Totals of one direction (or both) over `duration_s` seconds.
pub fn op_totals(s: &OpStats, duration_s: f64, with_spectrum: bool) -> OpTotals {
    let per_s = |v: f64| {
        if duration_s > 0.0 {
            v / duration_s
        } else {
            0.0
        }
    };
    OpTotals {
        ios: s.ios,
        bytes: s.bytes,
        iops: per_s(s.ios as f64),
        mbps: per_s(s.bytes as f64) / 1e6,
        mibps: per_s(s.bytes as f64) / (1u64 << 20) as f64,
        errors: s.errors,
        latency_us: s.lat.summary_us(with_spectrum),
        service_us: s.service().summary_us(with_spectrum),
    }
}

/// The short latency summary shown per interval.
pub fn interval_latency(h: &LatencyHistogram) -> IntervalLatency {
    let us = |ns: f64| ns / 1000.0;
    IntervalLatency {
        mean: us(h.mean_ns()),
        p50: us(h.percentile_ns(50.0) as f64),
        p99: us(h.percentile_ns(99.0) as f64),
        max: us(h.max_ns() as f64),
        stddev: us(h.stddev_ns()),
    }
}
