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
        skipped: s.skipped,
        latency_us: s.lat.summary_us(with_spectrum),
        service_us: s.service().summary_us(with_spectrum),
        hdr: None,
        service_hdr: None,
    }
}

/// Totals of `ios` timed operations moving `bytes` in `secs` at `mbps` (10^6 bytes
/// per second, which a network run takes from its receiving ends), with `lat` as both
/// latency and service time: a network run's totals (`net::outcome`, `net::peer`).
pub fn timed_totals(
    ios: u64,
    bytes: u64,
    secs: f64,
    mbps: f64,
    lat: &LatencyHistogram,
) -> OpTotals {
    let l = if lat.count() > 0 {
        lat.summary_us(true)
    } else {
        Default::default()
    };
    OpTotals {
        ios,
        bytes,
        iops: ios as f64 / secs,
        mbps,
        mibps: mbps * 1e6 / (1u64 << 20) as f64,
        errors: 0,
        latency_us: l.clone(),
        service_us: l,
        ..Default::default()
    }
}

/// A run's totals of one direction: [`op_totals`] with its spectrum, and its raw
/// histograms encoded (`hdr`; `service_hdr` in open loop), so results merge exactly.
pub fn dir_totals(s: &OpStats, duration_s: f64) -> OpTotals {
    OpTotals {
        hdr: encoded(&s.lat),
        service_hdr: s.svc.as_ref().and_then(encoded),
        ..op_totals(s, duration_s, true)
    }
}

/// A run's trim totals as [`dir_totals`] has them, or `None` without trims.
pub fn trim_dir_totals(s: &OpStats, duration_s: f64) -> Option<OpTotals> {
    (s.ios > 0 || s.errors > 0).then(|| dir_totals(s, duration_s))
}

/// `h` as the result's `hdr` fields carry it (`None` only if the crate cannot
/// encode it, which counts of a real run never cause).
pub fn encoded(h: &LatencyHistogram) -> Option<String> {
    crate::result::hdr::encode(&h.to_hdr()).ok()
}

/// Totals of the trims, or `None` when there were none (the result then leaves
/// `trim` out, as before trims existed).
pub fn trim_totals(s: &OpStats, duration_s: f64, with_spectrum: bool) -> Option<OpTotals> {
    (s.ios > 0 || s.errors > 0).then(|| op_totals(s, duration_s, with_spectrum))
}

/// An interval's figures from its merged counters (`all` = both directions): rates,
/// read share, latency, queue depth and, in open loop, issue lag and backlog. The
/// caller fills in what only it knows (index, times, CPU, per-connection lists); one
/// body for a worker's collector and for rank 0's merge of every rank's interval.
pub fn interval_figures(
    all: &OpStats,
    dirs: &snapshot::DirStats,
    lag: Option<&LatencyHistogram>,
    dur_s: f64,
    requested_iops: f64,
) -> crate::result::Interval {
    crate::result::Interval {
        duration_s: dur_s,
        ios: all.ios,
        bytes: all.bytes,
        read_bytes: dirs[0].bytes,
        write_bytes: dirs[1].bytes,
        iops: all.ios as f64 / dur_s,
        mbps: all.bytes as f64 / dur_s / 1e6,
        read_pct: if all.ios > 0 {
            100.0 * dirs[0].ios as f64 / all.ios as f64
        } else {
            0.0
        },
        errors: all.errors,
        lat_us: interval_latency(&all.lat),
        read_lat_us: interval_latency(&dirs[0].lat),
        write_lat_us: interval_latency(&dirs[1].lat),
        trim_lat_us: (dirs[2].ios > 0).then(|| interval_latency(&dirs[2].lat)),
        queue_depth: all.service_sum_ns() as f64 / (dur_s * 1e9),
        lag_us: lag.map(interval_latency),
        backlog_ios: lag.map(|l| l.max_ns() as f64 / 1e9 * requested_iops),
        ..Default::default()
    }
}

/// One workload's share of an interval, from its merged counters (all directions).
pub fn workload_interval(
    w: &snapshot::WorkloadStats,
    dur_s: f64,
) -> crate::result::IntervalWorkload {
    let (ios, bytes, errors) = w.ops.iter().fold((0, 0, 0), |(i, b, e), o| {
        (i + o.ios, b + o.bytes, e + o.errors)
    });
    crate::result::IntervalWorkload {
        ios,
        bytes,
        iops: ios as f64 / dur_s,
        mbps: bytes as f64 / dur_s / 1e6,
        read_pct: if ios > 0 {
            100.0 * w.ops[0].ios as f64 / ios as f64
        } else {
            0.0
        },
        errors,
        skipped: w.ops.iter().map(|o| o.skipped).sum(),
        read_lat_us: interval_latency(&w.ops[0].lat),
        write_lat_us: interval_latency(&w.ops[1].lat),
    }
}

/// The short latency summary shown per interval.
pub fn interval_latency(h: &LatencyHistogram) -> IntervalLatency {
    let us = |ns: f64| ns / 1000.0;
    let mut p = [0u64; 2];
    h.percentiles_ns(&[50.0, 99.0], &mut p);
    IntervalLatency {
        mean: us(h.mean_ns()),
        p50: us(p[0] as f64),
        p99: us(p[1] as f64),
        max: us(h.max_ns() as f64),
        stddev: us(h.stddev_ns()),
        hdr: None,
    }
}
