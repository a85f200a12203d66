//! fio-format log files from a run's intervals, for jobs that asked for fio's
//! `write_bw_log`, `write_lat_log` or `write_iops_log`: scripts built on fio's logs
//! (fio_generate_plots, fiologparser) read them unchanged. ioscope keeps one sample per
//! interval, so these are fio's averaged logs (`log_avg_msec` = the interval length):
//! `time_ms, value, direction, bs, offset` per line, one line per direction that did
//! I/O in the interval; warm-up intervals are left out, as fio leaves out ramp time.
//! A run's own logs are over all its I/O; in a run of several workloads, a workload's
//! logs (fio's per-job logs) are over its share of each interval
//! ([`crate::result::Interval::workloads`]).

use super::AppError;
use crate::plan::model::{FioLogs, RunSpec};
use crate::result::{Interval, IntervalLatency};
use std::fmt::Write as _;
use std::path::PathBuf;

/// fio's direction numbers.
const READ: u8 = 0;
const WRITE: u8 = 1;

/// What one log line is made from: an interval's figures, or one workload's share.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    t_s: f64,
    duration_s: f64,
    ios: u64,
    bytes: u64,
    read_pct: f64,
    read_lat_us: &'a IntervalLatency,
    write_lat_us: &'a IntervalLatency,
}

impl<'a> Row<'a> {
    /// The whole interval.
    fn of(iv: &'a Interval) -> Row<'a> {
        Row {
            t_s: iv.t_s,
            duration_s: iv.duration_s,
            ios: iv.ios,
            bytes: iv.bytes,
            read_pct: iv.read_pct,
            read_lat_us: &iv.read_lat_us,
            write_lat_us: &iv.write_lat_us,
        }
    }

    /// Workload `w`'s share of the interval (`None` when the interval has no shares).
    fn of_workload(iv: &'a Interval, w: usize) -> Option<Row<'a>> {
        let s = iv.workloads.get(w)?;
        Some(Row {
            t_s: iv.t_s,
            duration_s: iv.duration_s,
            ios: s.ios,
            bytes: s.bytes,
            read_pct: s.read_pct,
            read_lat_us: &s.read_lat_us,
            write_lat_us: &s.write_lat_us,
        })
    }
}

/// One kind of log: its file suffix and the value of one direction in a row.
type Value = fn(&Row<'_>, u8, f64) -> f64;

/// (prefix, suffix, value): bandwidth in KiB/s, mean total latency in ns, IOPS.
fn kinds(logs: &FioLogs) -> Vec<(&str, &'static str, Value)> {
    let mut v: Vec<(&str, &'static str, Value)> = Vec::new();
    if let Some(p) = &logs.bw {
        v.push((p, "bw", |r, _, share| {
            r.bytes as f64 * share / r.duration_s / 1024.0
        }));
    }
    if let Some(p) = &logs.lat {
        v.push((p, "lat", |r, dir, _| {
            let l = if dir == READ {
                r.read_lat_us
            } else {
                r.write_lat_us
            };
            l.mean * 1000.0
        }));
    }
    if let Some(p) = &logs.iops {
        v.push((p, "iops", |r, _, share| r.ios as f64 * share / r.duration_s));
    }
    v
}

/// The log text of one kind over the rows of the measured intervals. `bs` is the
/// block size (0 for a mix of sizes).
pub fn render(rows: &[(bool, Row<'_>)], value: Value, bs: u64, offset: bool) -> String {
    let offset = if offset { "0, " } else { "" };
    let mut out = String::new();
    for (_, r) in rows.iter().filter(|(warmup, r)| !warmup && r.ios > 0) {
        let t_ms = (r.t_s * 1000.0).round() as u64;
        let read_share = (r.read_pct / 100.0).clamp(0.0, 1.0);
        for (dir, share) in [(READ, read_share), (WRITE, 1.0 - read_share)] {
            if share <= 0.0 || r.duration_s <= 0.0 {
                continue;
            }
            let v = value(r, dir, share).max(0.0).round() as u64;
            let _ = writeln!(out, "{t_ms}, {v}, {dir}, {bs}, {offset}0");
        }
    }
    out
}

/// Writes one set of logs (`PREFIX_KIND.N.log`, relative to the working directory,
/// as fio writes them) from `rows`; adds the files written to `written`.
fn write_set(
    logs: &FioLogs,
    rows: &[(bool, Row<'_>)],
    bs: u64,
    written: &mut Vec<PathBuf>,
) -> Result<(), AppError> {
    for (prefix, kind, value) in kinds(logs) {
        let text = render(rows, value, bs, logs.offset);
        // fio's per_job_logs=0: one file per name, appended to.
        let (path, append) = match logs.job {
            0 => (PathBuf::from(format!("{prefix}_{kind}.log")), true),
            n => (PathBuf::from(format!("{prefix}_{kind}.{n}.log")), false),
        };
        let r = if append {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
        } else {
            std::fs::write(&path, text)
        };
        r.map_err(|source| AppError::Write {
            path: path.clone(),
            source,
        })?;
        if !written.contains(&path) {
            written.push(path);
        }
    }
    Ok(())
}

/// Writes the run's logs and each workload's own; returns the files written.
pub fn write(run: &RunSpec, intervals: &[Interval]) -> Result<Vec<PathBuf>, AppError> {
    let mut written = Vec::new();
    if let Some(logs) = &run.fio_logs {
        let bs = run
            .workloads
            .first()
            .and_then(|w| w.bs.single())
            .unwrap_or(0);
        let rows: Vec<_> = intervals
            .iter()
            .map(|iv| (iv.warmup, Row::of(iv)))
            .collect();
        write_set(logs, &rows, bs, &mut written)?;
    }
    for (i, w) in run.workloads.iter().enumerate() {
        let Some(logs) = &w.overrides.fio_logs else {
            continue;
        };
        // A run of one workload has no shares: its intervals are the workload's.
        let rows: Vec<_> = intervals
            .iter()
            .map(|iv| {
                let row = match run.workloads.len() {
                    1 => Some(Row::of(iv)),
                    _ => Row::of_workload(iv, i),
                };
                row.map(|r| (iv.warmup, r))
            })
            .collect::<Option<_>>()
            .unwrap_or_default();
        write_set(logs, &rows, w.bs.single().unwrap_or(0), &mut written)?;
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

    fn rows(ivs: &[Interval]) -> Vec<(bool, Row<'_>)> {
        ivs.iter().map(|iv| (iv.warmup, Row::of(iv))).collect()
    }

    #[test]
    fn lines_per_direction_in_fio_units_without_warmup() {
        let ivs = [
            iv(0.5, 100, 50.0, true),
            iv(1.0, 1000, 75.0, false),
            iv(1.5, 0, 100.0, false),
        ];
        let all = rows(&ivs);
        let logs = FioLogs {
            bw: Some("x".into()),
            lat: Some("x".into()),
            iops: Some("x".into()),
            offset: false,
            job: 1,
        };
        let k = kinds(&logs);
        // log_offset=1: an offset column (0 for an averaged sample) before the last.
        assert_eq!(
            render(&all[1..2], k[2].2, 4096, true),
            "1000, 1500, 0, 4096, 0, 0\n1000, 500, 1, 4096, 0, 0\n"
        );
        // 750 reads and 250 writes of 4 KiB in 0.5 s.
        assert_eq!(
            render(&all, k[0].2, 4096, false),
            "1000, 6000, 0, 4096, 0\n1000, 2000, 1, 4096, 0\n"
        );
        assert_eq!(
            render(&all, k[1].2, 4096, false),
            "1000, 100000, 0, 4096, 0\n1000, 250000, 1, 4096, 0\n"
        );
        assert_eq!(
            render(&all, k[2].2, 4096, false),
            "1000, 1500, 0, 4096, 0\n1000, 500, 1, 4096, 0\n"
        );
    }

    /// fio's per_job_logs=0 (job 0): no number in the name, and a second set with
    /// the same prefix is appended to the first's file; numbered sets are rewritten.
    #[test]
    fn unnumbered_logs_are_appended_and_numbered_ones_replaced() {
        let d = tempfile::tempdir().unwrap();
        let prefix = d.path().join("p").to_string_lossy().into_owned();
        let ivs = [iv(1.0, 1000, 100.0, false)];
        let all = rows(&ivs);
        let mut logs = FioLogs {
            iops: Some(prefix.clone()),
            job: 0,
            ..Default::default()
        };
        let mut written = Vec::new();
        write_set(&logs, &all, 4096, &mut written).unwrap();
        write_set(&logs, &all, 4096, &mut written).unwrap();
        assert_eq!(written, [PathBuf::from(format!("{prefix}_iops.log"))]);
        let text = std::fs::read_to_string(&written[0]).unwrap();
        assert_eq!(text, "1000, 2000, 0, 4096, 0\n".repeat(2));
        logs.job = 7;
        write_set(&logs, &all, 4096, &mut written).unwrap();
        write_set(&logs, &all, 4096, &mut written).unwrap();
        let text = std::fs::read_to_string(format!("{prefix}_iops.7.log")).unwrap();
        assert_eq!(text, "1000, 2000, 0, 4096, 0\n");
    }
}
