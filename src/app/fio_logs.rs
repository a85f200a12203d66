//! fio-format log files from a run's intervals, for jobs that asked for fio's
//! `write_bw_log`, `write_lat_log` or `write_iops_log`: scripts built on fio's logs
//! (fio_generate_plots, fiologparser) read them unchanged. ioscope keeps one sample per
//! interval, so these are fio's averaged logs (`log_avg_msec` = the interval length):
//! `time_ms, value, direction, bs, offset` per line, one line per direction that did
//! I/O in the interval; warm-up intervals are left out, as fio leaves out ramp time.

use super::AppError;
use crate::plan::model::{FioLogs, RunSpec};
use crate::result::Interval;
use std::fmt::Write as _;
use std::path::PathBuf;

/// fio's direction numbers.
const READ: u8 = 0;
const WRITE: u8 = 1;

/// One kind of log: its file suffix and the value of one direction in an interval.
type Value = fn(&Interval, u8, f64) -> f64;

/// (suffix, value): bandwidth in KiB/s, mean total latency in ns, IOPS.
fn kinds(logs: &FioLogs) -> Vec<(&str, &'static str, Value)> {
    let mut v: Vec<(&str, &'static str, Value)> = Vec::new();
    if let Some(p) = &logs.bw {
        v.push((p, "bw", |iv, _, share| {
            iv.bytes as f64 * share / iv.duration_s / 1024.0
        }));
    }
    if let Some(p) = &logs.lat {
        v.push((p, "lat", |iv, dir, _| {
            let l = if dir == READ {
                &iv.read_lat_us
            } else {
                &iv.write_lat_us
            };
            l.mean * 1000.0
        }));
    }
    if let Some(p) = &logs.iops {
        v.push((p, "iops", |iv, _, share| {
            iv.ios as f64 * share / iv.duration_s
        }));
    }
    v
}

/// The log text of one kind over the intervals. `bs` is the run's block size (0 for a
/// mix of sizes).
pub fn render(intervals: &[Interval], value: Value, bs: u64, offset: bool) -> String {
    let offset = if offset { "0, " } else { "" };
    let mut out = String::new();
    for iv in intervals.iter().filter(|iv| !iv.warmup && iv.ios > 0) {
        let t_ms = (iv.t_s * 1000.0).round() as u64;
        let read_share = (iv.read_pct / 100.0).clamp(0.0, 1.0);
        for (dir, share) in [(READ, read_share), (WRITE, 1.0 - read_share)] {
            if share <= 0.0 || iv.duration_s <= 0.0 {
                continue;
            }
            let v = value(iv, dir, share).max(0.0).round() as u64;
            let _ = writeln!(out, "{t_ms}, {v}, {dir}, {bs}, {offset}0");
        }
    }
    out
}

/// Writes the run's logs (`PREFIX_KIND.1.log`, relative to the working directory, as
/// fio writes them); returns the files written.
pub fn write(run: &RunSpec, intervals: &[Interval]) -> Result<Vec<PathBuf>, AppError> {
    let Some(logs) = &run.fio_logs else {
        return Ok(Vec::new());
    };
    let bs = run
        .workloads
        .first()
        .and_then(|w| w.bs.single())
        .unwrap_or(0);
    let mut written = Vec::new();
    for (prefix, kind, value) in kinds(logs) {
        let path = PathBuf::from(format!("{prefix}_{kind}.1.log"));
        std::fs::write(&path, render(intervals, value, bs, logs.offset)).map_err(|source| {
            AppError::Write {
                path: path.clone(),
                source,
            }
        })?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(t_s: f64, ios: u64, read_pct: f64, warmup: bool) -> Interval {
        let mut i: Interval = serde_json::from_value(serde_json::json!({
            "index": 0, "t_s": t_s, "duration_s": 0.5, "unix_s": 0.0, "warmup": warmup,
            "ios": ios, "bytes": ios * 4096, "iops": ios as f64 * 2.0, "mbps": 0.0,
            "read_pct": read_pct, "errors": 0,
            "lat_us": {"mean": 0.0, "p50": 0.0, "p99": 0.0, "max": 0.0, "stddev": 0.0},
            "read_lat_us": {"mean": 100.0, "p50": 0.0, "p99": 0.0, "max": 0.0, "stddev": 0.0},
            "write_lat_us": {"mean": 250.0, "p50": 0.0, "p99": 0.0, "max": 0.0, "stddev": 0.0},
            "queue_depth": 1.0,
            "cpu": {"user_pct": 0.0, "sys_pct": 0.0, "system_pct": 0.0, "cpu_us_per_io": 0.0}
        }))
        .expect("an interval");
        i.warmup = warmup;
        i
    }

    #[test]
    fn lines_per_direction_in_fio_units_without_warmup() {
        let ivs = [
            iv(0.5, 100, 50.0, true),
            iv(1.0, 1000, 75.0, false),
            iv(1.5, 0, 100.0, false),
        ];
        let logs = FioLogs {
            bw: Some("x".into()),
            lat: Some("x".into()),
            iops: Some("x".into()),
            offset: false,
        };
        let k = kinds(&logs);
        // log_offset=1: an offset column (0 for an averaged sample) before the last.
        assert_eq!(
            render(&ivs[1..2], k[2].2, 4096, true),
            "1000, 1500, 0, 4096, 0, 0\n1000, 500, 1, 4096, 0, 0\n"
        );
        // 750 reads and 250 writes of 4 KiB in 0.5 s.
        assert_eq!(
            render(&ivs, k[0].2, 4096, false),
            "1000, 6000, 0, 4096, 0\n1000, 2000, 1, 4096, 0\n"
        );
        assert_eq!(
            render(&ivs, k[1].2, 4096, false),
            "1000, 100000, 0, 4096, 0\n1000, 250000, 1, 4096, 0\n"
        );
        assert_eq!(
            render(&ivs, k[2].2, 4096, false),
            "1000, 1500, 0, 4096, 0\n1000, 500, 1, 4096, 0\n"
        );
    }
}
