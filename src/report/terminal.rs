//! Terminal output: one line per interval with vdbench's columns (so people who read
//! vdbench output read ours without a legend), then a summary with percentiles.
//! Times are milliseconds as in vdbench; "MB/sec" is 1024**2 bytes as vdbench prints
//! it (the JSON carries both MB/s at 10^6 and MiB/s).

use crate::result::{Interval, OpTotals, RunResult};
use std::fmt::Write as _;

/// The two header lines printed before a run's intervals.
pub fn interval_header() -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<12} {:>8} {:>11} {:>9} {:>8} {:>6} {:>8} {:>8} {:>8} {:>9} {:>8} {:>6} {:>6} {:>6} {:>8}",
        "", "interval", "i/o", "MB/sec", "bytes", "read", "resp", "read", "write", "resp", "resp", "queue", "cpu%", "cpu%", "resp"
    );
    let _ = write!(
        s,
        "{:<12} {:>8} {:>11} {:>9} {:>8} {:>6} {:>8} {:>8} {:>8} {:>9} {:>8} {:>6} {:>6} {:>6} {:>8}",
        "", "", "rate", "1024**2", "i/o", "pct", "time", "resp", "resp", "max", "stddev", "depth", "sys+u", "sys", "p99"
    );
    s
}

/// Local wall-clock time of day "HH:MM:SS.mmm" for a Unix time.
pub fn time_of_day(unix_s: f64) -> String {
    let secs = unix_s.floor() as libc::time_t;
    let ms = ((unix_s - unix_s.floor()) * 1000.0) as u32;
    // SAFETY: localtime_r writes into the zeroed tm we own.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    unsafe { libc::localtime_r(&secs, &mut tm) };
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        tm.tm_hour, tm.tm_min, tm.tm_sec, ms
    )
}

/// One interval line. Warm-up intervals carry a 'w' after their number.
pub fn interval_line(iv: &Interval, interval_no: u64) -> String {
    let label = if iv.warmup {
        format!("{interval_no}w")
    } else {
        interval_no.to_string()
    };
    let bytes_per_io = iv.bytes.checked_div(iv.ios).unwrap_or(0);
    let mib = iv.bytes as f64 / iv.duration_s.max(1e-9) / (1u64 << 20) as f64;
    let ms = |us: f64| us / 1000.0;
    let mut line = format!(
        "{:<12} {:>8} {:>11.2} {:>9.2} {:>8} {:>6.2} {:>8.3} {:>8.3} {:>8.3} {:>9.3} {:>8.3} {:>6.1} {:>6.1} {:>6.1} {:>8.3}",
        time_of_day(iv.unix_s),
        label,
        iv.iops,
        mib,
        bytes_per_io,
        iv.read_pct,
        ms(iv.lat_us.mean),
        ms(iv.read_lat_us.mean),
        ms(iv.write_lat_us.mean),
        ms(iv.lat_us.max),
        ms(iv.lat_us.stddev),
        iv.queue_depth,
        iv.cpu.user_pct + iv.cpu.sys_pct,
        iv.cpu.sys_pct,
        ms(iv.lat_us.p99),
    );
    if iv.errors > 0 {
        let _ = write!(line, "  errors={}", iv.errors);
    }
    line
}

fn op_row(name: &str, t: &OpTotals) -> String {
    let l = &t.latency_us;
    format!(
        "{:<6} {:>12} {:>11.1} {:>9.2} {:>9.2} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>10.1} {:>7}",
        name, t.ios, t.iops, t.mbps, t.mibps, l.min, l.mean, l.p50, l.p90, l.p99, l.p99_9, l.p99_99, l.max, t.errors
    )
}

/// The summary printed after a run.
pub fn run_summary(r: &RunResult) -> String {
    let mut s = String::new();
    let t = &r.totals;
    let _ = writeln!(
        s,
        "\n{} — {} on {} ({} engine, {} workers, {} streams), {:.2} s measured{}{}",
        r.name,
        workload_words(&r.workload),
        r.target,
        r.engine,
        r.workers,
        r.streams,
        r.duration_s,
        if r.warmup_s > 0.0 {
            format!(" after {:.1} s warm-up", r.warmup_s)
        } else {
            String::new()
        },
        if r.interrupted { " [interrupted]" } else { "" }
    );
    if !r.engine_reason.is_empty() {
        let _ = writeln!(s, "engine {}: {}", r.engine, r.engine_reason);
    }
    if let Some(io) = &r.io {
        let _ = writeln!(s, "io settings: {io}");
    }
    let _ = writeln!(
        s,
        "{:<6} {:>12} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>7}",
        "",
        "ios",
        "IOPS",
        "MB/s",
        "MiB/s",
        "min us",
        "mean us",
        "p50 us",
        "p90 us",
        "p99 us",
        "p99.9 us",
        "p99.99",
        "max us",
        "errors"
    );
    if t.read.ios > 0 || t.read.errors > 0 {
        let _ = writeln!(s, "{}", op_row("read", &t.read));
    }
    if t.write.ios > 0 || t.write.errors > 0 {
        let _ = writeln!(s, "{}", op_row("write", &t.write));
    }
    let _ = writeln!(s, "{}", op_row("all", &t.all));
    if let Some(f) = &t.flush {
        let l = &f.latency_us;
        let _ = writeln!(
            s,
            "flush ({}): {} calls, {:.1}/s, mean {:.1} us, p99 {:.1} us, max {:.1} us, {} errors \
             (not counted as writes)",
            f.kind, f.ios, f.per_s, l.mean, l.p99, l.max, f.errors
        );
    }
    if t.all.service_us != t.all.latency_us {
        let l = &t.all.service_us;
        let _ = writeln!(
            s,
            "service time (from actual submission): mean {:.1} us, p50 {:.1} us, p99 {:.1} us, p99.9 {:.1} us, max {:.1} us",
            l.mean, l.p50, l.p99, l.p99_9, l.max
        );
    }
    let _ = writeln!(
        s,
        "queue depth {:.1}; ioscope CPU {:.1}% user + {:.1}% sys of all CPUs ({:.2} us CPU per I/O); system busy {:.1}%",
        t.queue_depth, r.cpu.user_pct, r.cpu.sys_pct, r.cpu.cpu_us_per_io, r.cpu.system_pct
    );
    if let Some(sc) = &r.schedule {
        let _ = writeln!(
            s,
            "rate: requested {:.0} IOPS, achieved {:.0} ({:.1}%); issue lag p50 {:.1} us, p99 {:.1} us, max {:.1} us (backlog up to {:.0} I/Os)",
            sc.requested_iops, sc.achieved_iops, sc.achieved_pct, sc.lag_us.p50, sc.lag_us.p99, sc.lag_us.max, sc.max_backlog_ios
        );
        if let Some(p) = &sc.pacing {
            let _ = writeln!(
                s,
                "pacing {}: {:.2} s busy-waiting, {:.2} s asleep ({} sleeps, woke late p50 {:.1} us, p99 {:.1} us; margin up to {:.1} us); CPU per I/O without the busy-wait {:.3} us",
                p.mode, p.spin_s, p.sleep_s, p.sleeps, p.wake_late_us.p50, p.wake_late_us.p99, p.margin_us, p.cpu_us_per_io_excl_spin
            );
        }
    }
    if let Some(v) = &r.verify {
        let _ = writeln!(
            s,
            "verify: {} units checked, {} ok, {} torn (tolerated), {} not yet written; {} MISMATCHES ({} corrupted, {} misplaced, {} stale/lost, {} never written, {} unexpected)",
            v.units_checked, v.ok, v.torn, v.untracked, v.mismatches, v.corrupted, v.misplaced, v.stale, v.never_written, v.unexpected
        );
        for m in &v.samples {
            let _ = writeln!(s, "  {}", m.detail);
        }
    }
    for e in &r.error_samples {
        let _ = writeln!(
            s,
            "error: {} at offset {} ({} bytes) on {}: {} (errno {})",
            e.op, e.offset, e.len, e.target, e.message, e.errno
        );
    }
    s
}

/// "4k randread, QD 32 × 1 stream" from the effective workload JSON.
pub fn workload_words(w: &serde_json::Value) -> String {
    let bs = w["bs"]["split"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p[0].as_u64())
                .map(crate::plan::units::format_size)
                .collect::<Vec<_>>()
                .join("/")
        })
        .unwrap_or_default();
    let random = w["pattern"]["kind"].as_str() == Some("random");
    let rp = w["read_pct"].as_u64().unwrap_or(0);
    let kind = match (random, rp) {
        (true, 100) => "randread".to_string(),
        (true, 0) => "randwrite".to_string(),
        (true, p) => format!("randrw {p}% read"),
        (false, 100) => "read".to_string(),
        (false, 0) => "write".to_string(),
        (false, p) => format!("rw {p}% read"),
    };
    format!(
        "{bs} {kind}, QD {} × {} stream(s)",
        w["qd"].as_u64().unwrap_or(0),
        w["streams"].as_u64().unwrap_or(0)
    )
}

/// A table across the runs of a sweep (runs of one workload that differ in block
/// size, queue depth, streams or read share). For a block-size sweep it also gives
/// the IOPS ratio each time the size halves: flash should come close to doubling.
pub fn sweep_table(doc: &crate::result::ResultDoc) -> Option<String> {
    if doc.runs.len() < 2 || doc.curve.is_some() {
        return None;
    }
    let key = |w: &serde_json::Value| {
        let mut k = w.clone();
        for f in ["bs", "qd", "streams", "read_pct", "name"] {
            k[f] = serde_json::Value::Null;
        }
        k
    };
    let first = key(&doc.runs[0].workload);
    if doc.runs.iter().any(|r| key(&r.workload) != first) {
        return None;
    }
    let mut s = String::from("sweep summary\n");
    let _ = writeln!(
        s,
        "{:<28} {:>8} {:>5} {:>8} {:>6} {:>12} {:>10} {:>10} {:>10}",
        "run", "bs", "qd", "streams", "read%", "IOPS", "MB/s", "mean us", "p99 us"
    );
    let bs_of = |r: &RunResult| r.workload["bs"]["split"][0][0].as_u64().unwrap_or(0);
    for r in &doc.runs {
        let t = &r.totals.all;
        let _ = writeln!(
            s,
            "{:<28} {:>8} {:>5} {:>8} {:>6} {:>12.0} {:>10.1} {:>10.1} {:>10.1}",
            r.name,
            crate::plan::units::format_size(bs_of(r)),
            r.workload["qd"],
            r.workload["streams"],
            r.workload["read_pct"],
            t.iops,
            t.mbps,
            t.latency_us.mean,
            t.latency_us.p99
        );
    }
    // Block-size halving ratios, when only the block size varies.
    let only_bs = doc.runs.iter().all(|r| {
        ["qd", "streams", "read_pct"]
            .iter()
            .all(|f| r.workload[*f] == doc.runs[0].workload[*f])
    });
    if only_bs {
        let mut by_bs: Vec<(u64, f64)> = doc
            .runs
            .iter()
            .map(|r| (bs_of(r), r.totals.all.iops))
            .collect();
        by_bs.sort_by_key(|&(b, _)| b);
        let mut lines = Vec::new();
        for w in by_bs.windows(2) {
            let ((small, iops_small), (big, iops_big)) = (w[0], w[1]);
            if big == small * 2 && iops_big > 0.0 {
                let ratio = iops_small / iops_big;
                let verdict = if ratio >= 1.8 {
                    "close to doubling"
                } else if ratio >= 1.3 {
                    "short of doubling: partly bandwidth- or per-I/O-cost-bound"
                } else {
                    "does not double: per-I/O cost (latency, CPU, queue) dominates here"
                };
                lines.push(format!(
                    "  {} -> {}: IOPS x{:.2} ({verdict})",
                    crate::plan::units::format_size(big),
                    crate::plan::units::format_size(small),
                    ratio
                ));
            }
        }
        if !lines.is_empty() {
            s.push_str("IOPS ratio each time the block size halves:\n");
            s.push_str(&lines.join("\n"));
            s.push('\n');
        }
    }
    Some(s)
}

/// Seconds as "1h02m", "3m05s", "42s".
fn hms(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// The live progress line shown on a terminal (no newline; the caller rewrites it).
pub fn progress_line(
    done_s: f64,
    total_s: f64,
    runs_done: usize,
    runs_total: usize,
    run_elapsed_s: f64,
    run_s: f64,
    iv: &Interval,
) -> String {
    const WIDTH: usize = 24;
    let (elapsed, total) = if total_s > 0.0 {
        (done_s + run_elapsed_s.min(run_s), total_s)
    } else {
        (run_elapsed_s, run_s)
    };
    let frac = if total > 0.0 {
        (elapsed / total).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let filled = (frac * WIDTH as f64).round() as usize;
    format!(
        "\r[{}{}] run {}/{}  {} / {}  ETA {}  {:.0} IOPS  p99 {:.3} ms",
        "#".repeat(filled),
        ".".repeat(WIDTH - filled),
        (runs_done + 1).min(runs_total.max(1)),
        runs_total.max(1),
        hms(elapsed),
        hms(total),
        hms(total - elapsed),
        iv.iops,
        iv.lat_us.p99 / 1000.0
    )
}
