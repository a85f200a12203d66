//! vdbench's report files, rendered from a result: `summary.html` (a line per
//! interval and an `avg_` line per run, under vdbench's two header lines),
//! `totals.html` (the `avg_` lines alone) and `flatfile.html` (one column per
//! figure, named and ordered as vdbench 5.04 names them, so `parseflat`-style
//! scripts find their columns). Raw-I/O runs get vdbench's storage columns; runs on
//! directory trees (`tree:` targets, vdbench's fsd/fwd) its file-system columns,
//! one rate and response time per operation.
//!
//! Nothing is counted twice: every figure is the result's — an interval row from
//! `intervals[]` (each workload's share from `intervals[].workloads[]`), the average
//! row from the run's and the workloads' totals over the measured time, which leaves
//! the warm-up out as vdbench's `avg_2-N` does. Two figures are derived: the bytes
//! a mixed read/write workload moved in an interval are split between reads and
//! writes in proportion to their counts (exact with one transfer size; the average
//! row has them exact), and vdbench's system-wide CPU columns carry the result's
//! whole-system busy percentage (`cpu_used`, `cpu_idle`); the others are `n/a`.
//! MB are 1024² bytes, response times milliseconds, as in vdbench.

mod flat;
mod fs_ops;

use crate::result::{ResultDoc, RunResult};
use fs_ops::OpFigures;

/// vdbench's requested rate for a run at full speed (its `MAX_RATE`).
const MAX_RATE: f64 = 9_999_988.0;
/// Bytes in vdbench's MB.
const MB: f64 = (1u64 << 20) as f64;

/// One row: an interval of a run, or its average.
struct Row<'a> {
    run: &'a RunResult,
    /// vdbench's interval label: `1`, `2`, … or `avg_2-N`.
    label: String,
    unix_s: f64,
    dur_s: f64,
    ios: u64,
    bytes: u64,
    read_pct: f64,
    resp_ms: f64,
    read_resp_ms: f64,
    write_resp_ms: f64,
    max_ms: f64,
    std_ms: f64,
    queue_depth: f64,
    /// Whole-system busy CPU %.
    system_pct: f64,
    ops: OpFigures,
}

impl Row<'_> {
    fn rate(&self) -> f64 {
        per_s(self.ios as f64, self.dur_s)
    }
    fn mb_s(&self) -> f64 {
        per_s(self.bytes as f64, self.dur_s) / MB
    }
    fn bytes_per_io(&self) -> u64 {
        self.bytes.checked_div(self.ios).unwrap_or(0)
    }
}

fn per_s(v: f64, dur_s: f64) -> f64 {
    if dur_s > 0.0 {
        v / dur_s
    } else {
        0.0
    }
}

/// vdbench's layout for a document: `None` for raw I/O (storage columns); for runs
/// on directory trees (a `tree:` target), which operations have counts anywhere
/// (vdbench shows getattr … move only when used).
type Layout = Option<[bool; 13]>;

fn layout(doc: &ResultDoc) -> Layout {
    let fs = doc
        .runs
        .iter()
        .any(|r| r.target.split(',').any(|t| t.starts_with("tree:")));
    fs.then(|| {
        let mut used = [false; 13];
        for run in &doc.runs {
            for (u, now) in used.iter_mut().zip(OpFigures::of_totals(run).used()) {
                *u |= now;
            }
        }
        used
    })
}

/// A run's rows: each interval (numbered from 1, the warm-up included, as vdbench
/// numbers them), then the average over the measured ones.
fn rows(run: &RunResult) -> Vec<Row<'_>> {
    let n = run.intervals.len();
    let mut out: Vec<Row> = run
        .intervals
        .iter()
        .enumerate()
        .map(|(k, iv)| Row {
            run,
            label: (k + 1).to_string(),
            unix_s: iv.unix_s,
            dur_s: iv.duration_s,
            ios: iv.ios,
            bytes: iv.bytes,
            read_pct: iv.read_pct,
            resp_ms: iv.lat_us.mean / 1e3,
            read_resp_ms: iv.read_lat_us.mean / 1e3,
            write_resp_ms: iv.write_lat_us.mean / 1e3,
            max_ms: iv.lat_us.max / 1e3,
            std_ms: iv.lat_us.stddev / 1e3,
            queue_depth: iv.queue_depth,
            system_pct: iv.cpu.system_pct,
            ops: OpFigures::of_interval(run, iv),
        })
        .collect();
    let first = run.intervals.iter().position(|i| !i.warmup).unwrap_or(0) + 1;
    out.push(average(run, format!("avg_{first}-{}", n.max(first))));
    out
}

/// The average row: the run's totals over its measured time.
fn average(run: &RunResult, label: String) -> Row<'_> {
    let t = &run.totals;
    let ms = |us: f64| us / 1e3;
    Row {
        run,
        label,
        unix_s: run.intervals.last().map_or(0.0, |i| i.unix_s),
        dur_s: run.duration_s,
        ios: t.all.ios,
        bytes: t.all.bytes,
        read_pct: if t.all.ios > 0 {
            100.0 * t.read.ios as f64 / t.all.ios as f64
        } else {
            0.0
        },
        resp_ms: ms(t.all.latency_us.mean),
        read_resp_ms: ms(t.read.latency_us.mean),
        write_resp_ms: ms(t.write.latency_us.mean),
        max_ms: ms(t.all.latency_us.max),
        std_ms: ms(t.all.latency_us.stddev),
        queue_depth: t.queue_depth,
        system_pct: run.cpu.system_pct,
        ops: OpFigures::of_totals(run),
    }
}

/// The run's name as vdbench's `Run` column has it: the rd's name (ioscope adds
/// the loop's values after a blank; columns are separated by blanks).
fn run_name(run: &RunResult) -> &str {
    run.name.split_whitespace().next().unwrap_or("-")
}

/// The requested rate, operations per second (vdbench's `MAX_RATE` at full speed).
fn requested_rate(run: &RunResult) -> f64 {
    match &run.schedule {
        Some(s) => s.requested_iops,
        None => MAX_RATE,
    }
}

/// `<title>` and `<pre>`, as vdbench opens each of its report files.
fn head(dir_name: &str, file: &str) -> String {
    format!("<title>Vdbench {dir_name}/{file}</title><pre>\n")
}

/// The three files for an output directory named `dir_name`: (file name, text).
pub fn files(doc: &ResultDoc, dir_name: &str) -> [(&'static str, String); 3] {
    [
        ("summary.html", render_summary(doc, dir_name)),
        ("totals.html", render_totals(doc, dir_name)),
        ("flatfile.html", render_flatfile(doc, dir_name)),
    ]
}

/// `flatfile.html`.
pub fn render_flatfile(doc: &ResultDoc, dir_name: &str) -> String {
    let mut s = head(dir_name, "flatfile.html");
    s.push_str(&flat::render(doc, layout(doc).is_some()));
    s
}

/// `summary.html`: per run, its start line, the headers, its intervals and average.
pub fn render_summary(doc: &ResultDoc, dir_name: &str) -> String {
    let fs = layout(doc);
    let mut s = head(dir_name, "summary.html");
    for run in &doc.runs {
        let rows = rows(run);
        let start = rows
            .first()
            .map_or(doc.started_unix_s, |r| r.unix_s - r.dur_s);
        s.push_str(&format!(
            "\n{} Starting RD={}\n",
            super::terminal::time_of_day(start),
            run_name(run)
        ));
        s.push_str(&header(fs, start));
        for r in &rows {
            s.push_str(&line(fs, r));
        }
    }
    s
}

/// `totals.html`: each run's average line, under the headers.
pub fn render_totals(doc: &ResultDoc, dir_name: &str) -> String {
    let fs = layout(doc);
    let mut s = head(dir_name, "totals.html");
    for run in &doc.runs {
        let avg = rows(run).pop().expect("rows end with the average");
        s.push_str(&format!("\nRD={}\n", run_name(run)));
        s.push_str(&header(fs, avg.unix_s));
        s.push_str(&line(fs, &avg));
    }
    s
}

/// The two header lines, the first opening with the date.
fn header(fs: Layout, unix_s: f64) -> String {
    let date = date_of(unix_s);
    if let Some(used) = fs {
        let (h1, h2) = fs_ops::headers(used);
        format!("\n{date}{h1}\n{:12}{h2}\n", "")
    } else {
        let f = |c: [&str; 11]| {
            format!(
                "{:>10} {:>10} {:>8} {:>7} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>5} ",
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10]
            )
        };
        let h1 = f([
            "interval", "i/o", "MB/sec", "bytes", "read", "resp", "read", "write", "resp", "resp",
            "queue",
        ]);
        let h2 = f([
            "", "rate", "1024**2", "i/o", "pct", "time", "resp", "resp", "max", "stddev", "depth",
        ]);
        format!("\n{date}{h1}\n{:12}{h2}\n", "")
    }
}

/// One summary line: time of day, then the figures.
fn line(fs: Layout, r: &Row) -> String {
    let tod = super::terminal::time_of_day(r.unix_s);
    if let Some(used) = fs {
        return format!("{tod}{}\n", fs_ops::line(r, used));
    }
    format!(
        "{tod}{:>10} {:>10.2} {:>8.2} {:>7} {:>6.2} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>5.1} \n",
        r.label,
        r.rate(),
        r.mb_s(),
        r.bytes_per_io(),
        r.read_pct,
        r.resp_ms,
        r.read_resp_ms,
        r.write_resp_ms,
        r.max_ms,
        r.std_ms,
        r.queue_depth
    )
}

/// Local date as vdbench heads its reports ("Nov 27, 2026").
fn date_of(unix_s: f64) -> String {
    let t = local(unix_s);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {:02}, {}",
        MONTHS[t.tm_mon.clamp(0, 11) as usize],
        t.tm_mday,
        t.tm_year + 1900
    )
}

/// Local broken-down time of a Unix time.
fn local(unix_s: f64) -> libc::tm {
    let secs = unix_s.floor() as libc::time_t;
    // SAFETY: tm is plain data; zeroed is valid and localtime_r fills it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to values we own for the call's length.
    unsafe { libc::localtime_r(&secs, &mut tm) };
    tm
}

#[cfg(test)]
mod tests;
