//! Terminal output: one line per interval with vdbench's columns (so people who read
//! vdbench output read ours without a legend), then a summary with percentiles.
//! Times are milliseconds as in vdbench; "MB/sec" is 1024**2 bytes as vdbench prints
//! it (the JSON carries both MB/s at 10^6 and MiB/s).

use crate::plan::units::format_size;
use crate::result::paths::FailoverCost;
use crate::result::{BlockSizes, Interval, OpTotals, RunResult, RunWorkload, WorkloadEcho};
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
    // Multipath: each path's I/Os and state, then the interval's events as they
    // happened, one per line.
    for (i, p) in iv.paths.iter().enumerate() {
        let _ = write!(
            line,
            "{}p{i} {} {}",
            if i == 0 { "  " } else { " | " },
            p.ios,
            p.state
        );
    }
    for e in &iv.events {
        let _ = write!(
            line,
            "\n  event {:>8.3}s path {} {}: {}",
            e.t_s, e.path, e.kind, e.detail
        );
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
        run_words(&r.workload),
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
    if let Some(io) = r.io.as_ref().and_then(|io| serde_json::to_value(io).ok()) {
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
    if let Some(trim) = &t.trim {
        let _ = writeln!(s, "{}", op_row("trim", trim));
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
    count_lines(&mut s, r);
    if t.all.service_us != t.all.latency_us {
        let l = &t.all.service_us;
        let _ = writeln!(
            s,
            "service time (from actual submission): mean {:.1} us, p50 {:.1} us, p99 {:.1} us, p99.9 {:.1} us, max {:.1} us",
            l.mean, l.p50, l.p99, l.p99_9, l.max
        );
    }
    cpu_line(&mut s, r);
    schedule_lines(&mut s, r);
    if let Some(f) = &r.failover {
        let _ = writeln!(s, "{}", failover_line(f));
    }
    judged_lines(&mut s, r);
    for e in &r.error_samples {
        let _ = writeln!(
            s,
            "error: {} at offset {} ({} bytes) on {}: {} (errno {})",
            e.op, e.offset, e.len, e.target, e.message, e.errno
        );
    }
    s
}

/// One trace workload's replay: what it replayed, how, and how faithfully.
pub(crate) fn replay_line(r: &crate::result::ReplayResult) -> String {
    let mut line = format!(
        "replay {} ({}, device {}, {} at speed {}): {} of {} recorded I/Os issued over a {:.3} s span",
        r.trace, r.format, r.device, r.timing, r.speed, r.issued_ios, r.recorded_ios, r.replay_s
    );
    if r.cut_s > 0.0 {
        let _ = write!(line, " ({:.3} s of idle time cut)", r.cut_s);
    }
    if r.remapped_ios > 0 {
        let _ = write!(line, "; {} I/Os remapped ({})", r.remapped_ios, r.remap);
    }
    if let (Some(l), Some(late)) = (&r.lag_us, r.late_ios) {
        let _ = write!(
            line,
            "; issue lag p50 {:.1} us, p99 {:.1} us, max {:.1} us; {late} I/Os more than 1 ms late",
            l.p50, l.p99, l.max
        );
    }
    if !r.skipped.is_empty() {
        let kinds: Vec<String> = r.skipped.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let _ = write!(line, "; not replayed: {}", kinds.join(", "));
    }
    line
}

/// The rate schedule's lines: requested against achieved, issue lag, pacing.
/// Zone resets and skips (requests that found nothing to act on), with each
/// workload's share.
fn count_lines(s: &mut String, r: &RunResult) {
    let per = |f: &dyn Fn(&crate::result::Totals) -> Option<u64>| {
        let per: Vec<String> = r
            .workloads
            .iter()
            .filter_map(|w| Some(format!("{} {}", w.name, f(&w.totals)?)))
            .collect();
        if per.is_empty() {
            String::new()
        } else {
            format!(" ({})", per.join(", "))
        }
    };
    if let Some(n) = r.totals.zone_resets {
        let _ = writeln!(s, "{n} zone resets{}", per(&|t| t.zone_resets));
    }
    if r.totals.all.skipped > 0 {
        let skips = per(&|t| (t.all.skipped > 0).then_some(t.all.skipped));
        let _ = writeln!(
            s,
            "{} requests found nothing to act on (skips: neither operations nor errors){skips}",
            r.totals.all.skipped
        );
    }
}

fn schedule_lines(s: &mut String, r: &RunResult) {
    for rp in &r.replay {
        let _ = writeln!(s, "{}", replay_line(rp));
    }
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
}

/// What was judged of the run: the steady-state stop, the verify pass, the spread of
/// its repetitions.
fn judged_lines(s: &mut String, r: &RunResult) {
    steady_and_verify_lines(s, r);
    if let Some(line) = super::repeats::terminal_line(r) {
        let _ = writeln!(s, "{line}");
    }
}

/// The steady-state stop's verdict and the verify pass's counts.
fn steady_and_verify_lines(s: &mut String, r: &RunResult) {
    if let Some(st) = &r.steady_stop {
        let judged = match (st.mean, st.value) {
            (Some(m), Some(v)) => format!("last window mean {m:.1}, value {v:.2}"),
            _ => "no full window".to_string(),
        };
        let verdict = match st.reached_at_s {
            Some(t) => format!("reached at {t:.1} s, run ended"),
            None => "not reached".to_string(),
        };
        let _ = writeln!(
            s,
            "steady state ({} {}, window {} s after {} s ramp): {verdict} ({judged})",
            st.rule, st.criterion, st.window_s, st.ramp_s
        );
    }
    if let Some(v) = &r.verify {
        let _ = writeln!(
            s,
            "verify: {} units checked, {} ok, {} torn (tolerated), {} not yet written; {} MISMATCHES ({} corrupted, {} misplaced, {} stale/lost, {} never written, {} unexpected)",
            v.units_checked, v.ok, v.torn, v.untracked, v.mismatches, v.corrupted, v.misplaced, v.stale, v.never_written, v.unexpected
        );
        if v.reissued_copies > 0 {
            let _ = writeln!(
                s,
                "verify: {} of the ok units hold the late first copy of a write re-issued on another path (ambiguous, accepted)",
                v.reissued_copies
            );
        }
        if v.backlog_reads > 0 {
            let _ = writeln!(
                s,
                "verify: {} read-backs during the run ({} bytes; verify_backlog), not in the read figures above",
                v.backlog_reads, v.backlog_bytes
            );
        }
        for m in &v.samples {
            let _ = writeln!(s, "  {}", m.detail);
        }
    }
}

/// The one-line summary of what path failures cost the workload (latency from the
/// intended time).
pub fn failover_line(f: &FailoverCost) -> String {
    let ms = |us: f64| us / 1e3;
    if f.intervals == 0 {
        return format!(
            "failover cost: none (no path failed; p99 {:.2} ms, max {:.2} ms)",
            ms(f.normal_p99_us),
            ms(f.normal_max_us)
        );
    }
    format!(
        "failover cost: {} of {} I/Os in the {:.1} s with a path failing or down waited beyond the normal p99 of {:.2} ms, {:.1} ms extra in all (max {:.1} ms vs {:.2} ms outside)",
        f.ios_over_p99,
        f.window_ios,
        f.window_s,
        ms(f.normal_p99_us),
        f.extra_ms,
        ms(f.max_us),
        ms(f.normal_max_us)
    )
}

/// What a run did in words: [`workload_words`] for storage, the mode, streams and
/// write size for a network run.
pub fn run_words(w: &RunWorkload) -> String {
    match w {
        RunWorkload::Storage(w) => workload_words(w),
        RunWorkload::Net(n) => format!(
            "net {}, {} stream(s) of {} writes",
            n.mode.name(),
            n.streams,
            format_size(n.bs as u64)
        ),
    }
}

/// "4k randread, QD 32 × 1 stream(s)" from a workload's effective settings.
pub fn workload_words(w: &WorkloadEcho) -> String {
    let bs =
        w.bs.sizes_bytes()
            .map(format_size)
            .collect::<Vec<_>>()
            .join("/");
    let kind = if w.is_mixed() {
        format!("{} {}% read", w.rw(), w.read_pct)
    } else {
        w.rw().to_string()
    };
    format!("{bs} {kind}, QD {} × {} stream(s)", w.qd, w.streams)
}

/// Column widths of the sweep table, shared by its header and its rows so the
/// values stay under their headings.
const SWEEP_COLUMNS: [usize; 9] = [28, 8, 5, 8, 6, 12, 10, 10, 10];

/// One sweep-table line: the run name left-aligned, every other cell right-aligned
/// in its column.
fn sweep_row(cells: [String; 9]) -> String {
    let mut line = String::new();
    for (i, (cell, width)) in cells.iter().zip(SWEEP_COLUMNS).enumerate() {
        if i == 0 {
            let _ = write!(line, "{cell:<width$}");
        } else {
            let _ = write!(line, " {cell:>width$}");
        }
    }
    line
}

/// A table across the runs of a sweep (runs of one workload that differ in block
/// size, queue depth, streams or read share). For a block-size sweep it also gives
/// the IOPS ratio each time the size halves: flash should come close to doubling.
pub fn sweep_table(doc: &crate::result::ResultDoc) -> Option<String> {
    if doc.runs.len() < 2 || !doc.curves.is_empty() {
        return None;
    }
    // The settings a sweep may vary, blanked: what is left must be the same.
    let key = |w: &WorkloadEcho| WorkloadEcho {
        name: String::new(),
        bs: BlockSizes::of(Vec::new()),
        qd: 0,
        streams: 0,
        read_pct: 0,
        ..w.clone()
    };
    // Storage runs only: a network run has nothing of this to sweep.
    let ws: Vec<&WorkloadEcho> = doc
        .runs
        .iter()
        .map(|r| r.workload.storage())
        .collect::<Option<_>>()?;
    let first = key(ws[0]);
    if ws.iter().any(|w| key(w) != first) {
        return None;
    }
    let mut s = String::from("sweep summary\n");
    let head = [
        "run", "bs", "qd", "streams", "read%", "IOPS", "MB/s", "mean us", "p99 us",
    ];
    let _ = writeln!(s, "{}", sweep_row(head.map(String::from)));
    for (r, w) in doc.runs.iter().zip(&ws) {
        let t = &r.totals.all;
        let bs =
            w.bs.sizes_bytes()
                .map(format_size)
                .collect::<Vec<_>>()
                .join("/");
        let _ = writeln!(
            s,
            "{}",
            sweep_row([
                r.name.clone(),
                bs,
                w.qd.to_string(),
                w.streams.to_string(),
                w.read_pct.to_string(),
                format!("{:.0}", t.iops),
                format!("{:.1}", t.mbps),
                format!("{:.1}", t.latency_us.mean),
                format!("{:.1}", t.latency_us.p99),
            ])
        );
    }
    // Block-size halving ratios, when only the block size varies.
    let w0 = ws[0];
    let only_bs = ws
        .iter()
        .all(|w| (w.qd, w.streams, w.read_pct) == (w0.qd, w0.streams, w0.read_pct));
    if only_bs {
        let mut by_bs: Vec<(u64, f64)> = doc
            .runs
            .iter()
            .zip(&ws)
            .map(|(r, w)| (w.bs.first_bytes(), r.totals.all.iops))
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
                    format_size(big),
                    format_size(small),
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

/// Where a command stands, for the status line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Whereabouts {
    /// Seconds of the command's planned run time behind it.
    pub elapsed_s: f64,
    /// Seconds the whole command's runs take (`None`: not known ahead).
    pub total_s: Option<f64>,
    /// The run in progress, from 1.
    pub run: usize,
    /// Runs planned (`None`: not known ahead).
    pub runs: Option<usize>,
}

/// The status line (no line end: the caller redraws it in place or ends it):
/// progress through the whole command, remaining time, and the last interval's
/// IOPS, MB/s, p99 and errors. What is not known ahead shows as `?`.
pub fn progress_line(at: &Whereabouts, iv: &Interval) -> String {
    const WIDTH: usize = 20;
    let total = at.total_s.filter(|t| *t > 0.0);
    let bar = match total {
        Some(t) => {
            let filled = ((at.elapsed_s / t).clamp(0.0, 1.0) * WIDTH as f64).round() as usize;
            format!("{}{}", "#".repeat(filled), ".".repeat(WIDTH - filled))
        }
        None => "?".repeat(WIDTH),
    };
    let runs = at.runs.map_or("?".to_string(), |n| n.max(1).to_string());
    let (total, left) = match total {
        Some(t) => (hms(t), hms(t - at.elapsed_s)),
        None => ("?".to_string(), "?".to_string()),
    };
    format!(
        "[{bar}] run {}/{runs}  {} / {total}  ETA {left}  {:.0} IOPS  {:.1} MB/s  p99 {:.3} ms  {} errors",
        at.run,
        hms(at.elapsed_s),
        iv.iops,
        iv.mbps,
        iv.lat_us.p99 / 1000.0,
        iv.errors
    )
}

/// Queue depth and CPU: the process's, and the worker threads' own share of the CPU
/// per I/O (without the collector and the main thread), what driving the I/O cost.
fn cpu_line(s: &mut String, r: &RunResult) {
    let us: u64 = r.threads.iter().map(|t| t.cpu_us).sum();
    let ios = r.totals.all.ios;
    let workers = if us == 0 || ios == 0 {
        String::new()
    } else {
        format!(", {:.2} in the workers", us as f64 / ios as f64)
    };
    let _ = writeln!(
        s,
        "queue depth {:.1}; ioscope CPU {:.1}% user + {:.1}% sys of all CPUs ({:.2} us CPU per I/O{workers}); system busy {:.1}%",
        r.totals.queue_depth, r.cpu.user_pct, r.cpu.sys_pct, r.cpu.cpu_us_per_io, r.cpu.system_pct
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testdata::{doc, run};

    #[test]
    fn the_status_line_counts_down_and_says_what_it_does_not_know() {
        let iv = Interval {
            iops: 51234.4,
            mbps: 209.84,
            errors: 2,
            lat_us: crate::result::IntervalLatency {
                p99: 123.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let at = Whereabouts {
            elapsed_s: 12.0,
            total_s: Some(30.0),
            run: 2,
            runs: Some(3),
        };
        assert_eq!(
            progress_line(&at, &iv),
            "[########............] run 2/3  12s / 30s  ETA 18s  51234 IOPS  209.8 MB/s  p99 0.123 ms  2 errors"
        );
        let unknown = Whereabouts {
            total_s: None,
            runs: None,
            ..at
        };
        let line = progress_line(&unknown, &iv);
        assert!(
            line.starts_with("[????????????????????] run 2/?  12s / ?  ETA ?"),
            "{line}"
        );
    }

    #[test]
    fn interval_line_shows_paths_and_their_events() {
        use crate::result::paths::IntervalPath;
        let path = |ios, state: &str| IntervalPath {
            ios,
            state: state.into(),
            ..Default::default()
        };
        let iv = Interval {
            duration_s: 1.0,
            paths: vec![path(900, "up"), path(0, "down")],
            events: vec![crate::result::RunEvent {
                t_s: 4.25,
                path: 1,
                kind: "down".into(),
                detail: "timeout".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let text = interval_line(&iv, 5);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with("  p0 900 up | p1 0 down"), "{text}");
        assert_eq!(lines[1], "  event    4.250s path 1 down: timeout");
    }
    use crate::result::AccessPattern;

    /// Where each whitespace-separated cell of a line ends (in chars).
    fn cell_ends(line: &str) -> Vec<usize> {
        let chars: Vec<char> = line.chars().collect();
        (0..chars.len())
            .filter(|&i| {
                !chars[i].is_whitespace() && chars.get(i + 1).is_none_or(|c| c.is_whitespace())
            })
            .map(|i| i + 1)
            .collect()
    }

    // Regression: qd, streams and read% were printed through serde_json's Display,
    // which ignores width, so they sat at the left of their columns.
    #[test]
    fn sweep_table_values_sit_under_their_headers() {
        let runs = [(1, 1, 100), (32, 16, 70), (128, 256, 0)]
            .iter()
            .enumerate()
            .map(|(k, &(qd, streams, read_pct))| {
                let mut r = run(
                    &format!("qd{qd}"),
                    1000.0 * (k + 1) as f64,
                    80.0,
                    3,
                    0,
                    0.0,
                    1.0,
                    1,
                );
                r.workload.storage_mut().unwrap().qd = qd;
                r.workload.storage_mut().unwrap().streams = streams;
                r.workload.storage_mut().unwrap().read_pct = read_pct;
                r
            })
            .collect();
        let table = sweep_table(&doc(runs)).expect("runs differing only in swept keys");
        let lines: Vec<&str> = table.lines().skip(1).take(4).collect();
        assert!(lines[0].starts_with("run "), "{table}");
        // Where each heading ends, found by its text.
        let mut want = Vec::new();
        let mut from = 0;
        for h in [
            "bs", "qd", "streams", "read%", "IOPS", "MB/s", "mean us", "p99 us",
        ] {
            let at = from + lines[0][from..].find(h).expect(h);
            from = at + h.len();
            want.push(lines[0][..from].chars().count());
        }
        for row in &lines[1..] {
            let ends = cell_ends(row);
            assert_eq!(ends.len(), 9, "{row}");
            assert_eq!(ends[1..], want[..], "\n{}\n{row}", lines[0]);
        }
        assert!(lines[3].contains("qd128"), "{table}");
    }

    #[test]
    fn run_summary_names_the_steady_state_rule_and_verdict() {
        let mut r = run("ss", 1000.0, 100.0, 6, 0, 0.0, 1.0, 1);
        assert!(!run_summary(&r).contains("steady state"));
        r.steady_stop = Some(crate::result::SteadyStopResult {
            rule: "fio steadystate".into(),
            criterion: "iops:10%".into(),
            window_s: 3.0,
            ramp_s: 1.0,
            window_samples: 3,
            reached: true,
            reached_at_s: Some(4.0),
            mean: Some(1000.0),
            value: Some(2.5),
        });
        let s = run_summary(&r);
        assert!(
            s.contains(
                "steady state (fio steadystate iops:10%, window 3 s after 1 s ramp): reached at \
                 4.0 s, run ended (last window mean 1000.0, value 2.50)"
            ),
            "{s}"
        );
    }

    #[test]
    fn workload_words_name_size_mix_and_depth() {
        let net = RunWorkload::Net(crate::result::NetWorkloadEcho {
            mode: crate::result::NetMode::Send,
            streams: 4,
            bs: 131072,
            window: None,
            mss: None,
            nodelay: false,
            zerocopy: false,
            rate: None,
            rr: None,
            cpus: None,
            remote_cpus: None,
        });
        assert_eq!(run_words(&net), "net send, 4 stream(s) of 128k writes");
        let mut r = run("r", 1000.0, 80.0, 3, 0, 0.0, 1.0, 1);
        assert_eq!(run_words(&r.workload), "4k randread, QD 1 × 1 stream(s)");
        r.workload.storage_mut().unwrap().pattern = AccessPattern::Sequential;
        r.workload.storage_mut().unwrap().read_pct = 70;
        r.workload.storage_mut().unwrap().bs = BlockSizes {
            split: vec![(4096, 50), (1 << 20, 50)],
            write_split: None,
        };
        r.workload.storage_mut().unwrap().qd = 32;
        r.workload.storage_mut().unwrap().streams = 4;
        assert_eq!(
            run_words(&r.workload),
            "4k/1m rw 70% read, QD 32 × 4 stream(s)"
        );
    }
}
