//! `flatfile.html`: comment lines (`*`) describing each column, the header line
//! (one word per column, the line starting with a blank, as vdbench's `parseflat`
//! looks for it) and one line per interval and per run average: the time of day,
//! the date and time, then each column right-aligned in 10 characters — integers as
//! they are, other numbers with 4 decimals, `n/a` where the result has no figure.

use super::fs_ops::{FsOp, OPS};
use super::{per_s, requested_rate, rows, run_name, Row, MB};
use crate::result::{ResultDoc, RunResult, WorkloadEcho};

/// One cell's value.
enum Cell {
    Int(i64),
    Num(f64),
    Text(String),
    NotAvailable,
}

/// The raw-I/O (wd) columns, in vdbench's order.
const RAW: [&str; 28] = [
    "Run",
    "Interval",
    "reqrate",
    "rate",
    "MB/sec",
    "bytes/io",
    "read%",
    "resp",
    "read_resp",
    "write_resp",
    "resp_max",
    "resp_std",
    "xfersize",
    "threads",
    "rdpct",
    "rhpct",
    "whpct",
    "seekpct",
    "lunsize",
    "version",
    "compratio",
    "dedupratio",
    "queue_depth",
    "cpu_used",
    "cpu_user",
    "cpu_kernel",
    "cpu_wait",
    "cpu_idle",
];

/// What each column holds (the comment lines above the header).
fn describe(col: &str) -> String {
    let text = match col {
        "Run" => "the run's name (rd=)",
        "Interval" => "interval number from 1, or avg_F-L: the average of intervals F to L",
        "reqrate" => "requested operations per second (9999988: as fast as possible)",
        "rate" => "operations per second",
        "resp" => "mean response time, ms",
        "MB/sec" => "MB (1024*1024 bytes) per second",
        "bytes/io" | "Xfersize" => "mean bytes per read or write",
        "read%" => "reads, % of operations",
        "resp_max" => "longest response time, ms",
        "resp_std" => "standard deviation of the response times, ms",
        "xfersize" => "requested transfer size, bytes",
        "threads" => "streams (vdbench's threads)",
        "lunsize" => "size of the targets, GB (1024^3 bytes)",
        "version" => "the program and version that measured",
        "queue_depth" => "mean operations in flight",
        "cpu_used" => "whole-system CPU busy, %",
        "cpu_idle" => "whole-system CPU idle, %",
        "MB_read" | "MB_write" => "MB (1024*1024 bytes) read or written per second",
        c if c.ends_with("_rate") => "operations of this kind per second",
        c if c.ends_with("_resp") => "mean response time of this kind, ms",
        _ => "requested setting, when every workload has the same one",
    };
    format!("* {col:<16}: {text}\n")
}

/// The file-system (fwd) columns, in vdbench's order.
fn fs_columns() -> Vec<String> {
    let mut cols: Vec<String> = ["Run", "Interval", "reqrate", "rate", "resp", "MB/sec"]
        .map(String::from)
        .to_vec();
    for (name, _) in [("Read", 0), ("Write", 1)] {
        cols.push(format!("{name}_rate"));
        cols.push(format!("{name}_resp"));
    }
    cols.extend(["MB_read", "MB_write", "Xfersize"].map(String::from));
    for (_, name, _) in OPS.iter().skip(FsOp::Mkdir as usize) {
        cols.push(format!("{name}_rate"));
        cols.push(format!("{name}_resp"));
    }
    cols.extend(
        [
            "compratio",
            "dedupratio",
            "cpu_used",
            "cpu_user",
            "cpu_kernel",
            "cpu_wait",
            "cpu_idle",
        ]
        .map(String::from),
    );
    cols
}

/// The file's text after its `<title>` line.
pub(super) fn render(doc: &ResultDoc, fs: bool) -> String {
    let cols: Vec<String> = if fs {
        fs_columns()
    } else {
        RAW.map(String::from).to_vec()
    };
    let mut s =
        String::from("*\n* flatfile.html: the figures of every interval and run average, one\n");
    s.push_str("* column each, written by ioscope from its result in vdbench's layout.\n*\n");
    for c in &cols {
        s.push_str(&describe(c));
    }
    s.push_str("* 'n/a'           : no figure in the result, or workloads that differ.\n* \n");
    s.push_str(&format!("{:>12} {:>23} ", "tod", "timestamp"));
    for c in &cols {
        s.push_str(&format!("{c:>10} "));
    }
    s.push('\n');
    for run in &doc.runs {
        for r in rows(run) {
            let cells: Vec<Cell> = cols.iter().map(|c| cell(c, &r, doc)).collect();
            s.push_str(&data_line(&r, &cells));
        }
    }
    s
}

/// A data line: time of day, date-time, then the cells.
fn data_line(r: &Row, cells: &[Cell]) -> String {
    let t = super::local(r.unix_s);
    let stamp = format!(
        "{:02}/{:02}/{:04}-{:02}:{:02}:{:02}-{} ",
        t.tm_mon + 1,
        t.tm_mday,
        t.tm_year + 1900,
        t.tm_hour,
        t.tm_min,
        t.tm_sec,
        zone(&t)
    );
    let mut s = format!(
        "{:>12} {stamp:>24}",
        super::super::terminal::time_of_day(r.unix_s)
    );
    for c in cells {
        let v = match c {
            Cell::Int(v) => format!("{v:>10} "),
            Cell::Num(v) => format!("{v:>10.4} "),
            Cell::Text(v) => format!("{v:>10} "),
            Cell::NotAvailable => format!("{:>10} ", "n/a"),
        };
        s.push_str(&v);
    }
    s.push('\n');
    s
}

/// The time zone's abbreviation of a local time (`UTC`, `CET`).
fn zone(t: &libc::tm) -> String {
    if t.tm_zone.is_null() {
        return "UTC".into();
    }
    // SAFETY: localtime_r points tm_zone at a static NUL-terminated abbreviation.
    let z = unsafe { std::ffi::CStr::from_ptr(t.tm_zone) };
    z.to_string_lossy().replace(' ', "_")
}

/// Column `col`'s value in row `r`.
fn cell(col: &str, r: &Row, doc: &ResultDoc) -> Cell {
    let o = &r.ops;
    let mb = |b: f64| per_s(b, r.dur_s) / MB;
    if let Some(c) = fs_cell(col, r) {
        return c;
    }
    match col {
        "Run" => Cell::Text(run_name(r.run).to_string()),
        "Interval" => Cell::Text(r.label.clone()),
        "reqrate" => Cell::Num(requested_rate(r.run)),
        "rate" => Cell::Num(r.rate()),
        "resp" => Cell::Num(r.resp_ms),
        "MB/sec" => Cell::Num(r.mb_s()),
        "bytes/io" => Cell::Int(r.bytes_per_io() as i64),
        "read%" => Cell::Num(r.read_pct),
        "read_resp" => Cell::Num(r.read_resp_ms),
        "write_resp" => Cell::Num(r.write_resp_ms),
        "resp_max" => Cell::Num(r.max_ms),
        "resp_std" => Cell::Num(r.std_ms),
        "MB_read" => Cell::Num(mb(o.read_bytes)),
        "MB_write" => Cell::Num(mb(o.write_bytes)),
        "Xfersize" => Cell::Int(o.xfersize() as i64),
        "threads" => Cell::Int(r.run.streams as i64),
        "rhpct" | "whpct" => {
            Cell::Num(same(r.run, |w| Some(hit_pct(w, col == "rhpct"))).unwrap_or(0.0))
        }
        "version" => Cell::Text(format!("{}-{}", doc.tool.name, doc.tool.version)),
        "compratio" => compratio(doc),
        "queue_depth" => Cell::Num(r.queue_depth),
        "cpu_used" => Cell::Num(r.system_pct),
        "cpu_idle" => Cell::Num((100.0 - r.system_pct).max(0.0)),
        "xfersize" => same(r.run, |w| w.bs.single().map(|b| b as f64))
            .map_or(Cell::NotAvailable, |v| Cell::Int(v as i64)),
        "rdpct" => {
            same(r.run, |w| Some(f64::from(w.read_pct))).map_or(Cell::NotAvailable, Cell::Num)
        }
        "seekpct" => same(r.run, seekpct).map_or(Cell::NotAvailable, Cell::Num),
        _ => Cell::NotAvailable,
    }
}

/// The per-operation columns (`Create_rate`, `Create_resp`, …).
fn fs_cell(col: &str, r: &Row) -> Option<Cell> {
    let (name, what) = col.rsplit_once('_')?;
    let (op, _, _) = OPS.iter().find(|(_, n, _)| *n == name)?;
    Some(match what {
        "rate" => Cell::Num(r.ops.rate(*op, r.dur_s)),
        "resp" => Cell::Num(r.ops.resp(*op)),
        _ => return None,
    })
}

/// vdbench's seekpct of a workload: 100 random, 0 sequential, else its random share.
fn seekpct(w: &WorkloadEcho) -> Option<f64> {
    use crate::result::AccessPattern;
    let random_pct = w.declared.get("random_pct").and_then(|v| v.as_f64());
    Some(match (w.pattern, random_pct) {
        (AccessPattern::Sequential, _) => 0.0,
        (AccessPattern::Random, Some(p)) => p,
        (AccessPattern::Random, None) => 100.0,
    })
}

/// vdbench's read (or write) hit % of a workload, as its `rhpct=`/`whpct=`
/// translate: the first band of a zoned_abs distribution of one band, or of two
/// whose second takes the rest, for a workload that reads (writes); else 0.
fn hit_pct(w: &WorkloadEcho, read: bool) -> f64 {
    use crate::result::Distribution;
    let Distribution::ZonedBytes { bands } = &w.dist else {
        return 0.0;
    };
    let shaped = bands.len() == 1 || (bands.len() == 2 && bands[1].bytes == 0);
    let does = if read {
        w.read_pct > 0
    } else {
        w.read_pct < 100
    };
    if shaped && does {
        bands[0].io_pct
    } else {
        0.0
    }
}

/// A setting's value when every workload of the run has the same one.
fn same(run: &RunResult, f: impl Fn(&WorkloadEcho) -> Option<f64>) -> Option<f64> {
    let echoes: Vec<&WorkloadEcho> = match run.workloads.is_empty() {
        true => run.workload.storage().into_iter().collect(),
        false => run
            .workloads
            .iter()
            .filter_map(|w| w.settings.as_ref())
            .collect(),
    };
    let first = f(echoes.first()?)?;
    echoes.iter().all(|w| f(w) == Some(first)).then_some(first)
}

/// The compression ratio the plan asked for, or `n/a`.
fn compratio(doc: &ResultDoc) -> Cell {
    doc.plan
        .as_ref()
        .and_then(|p| p.get("data")?.get("compress_ratio")?.as_f64())
        .map_or(Cell::NotAvailable, Cell::Num)
}
