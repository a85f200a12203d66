//! vdbench's file-system figures: a rate and a response time per operation, from
//! each workload's engine (a byte workload's reads and writes apart), and the
//! summary line's columns as vdbench lays them out — a two-line header of
//! dot-centred group names over column names, then one number per column.

use super::{per_s, Row, MB};
use crate::result::{Interval, RunResult};

/// vdbench's file-system operations, in its column order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FsOp {
    Read,
    Write,
    Mkdir,
    Rmdir,
    Create,
    Open,
    Close,
    Delete,
    Getattr,
    Setattr,
    Access,
    Copy,
    Move,
}

/// Every operation with its column name (`Create` → `Create_rate`, `Create_resp`)
/// and its summary header.
pub(super) const OPS: [(FsOp, &str, &str); 13] = [
    (FsOp::Read, "Read", "read"),
    (FsOp::Write, "Write", "write"),
    (FsOp::Mkdir, "Mkdir", "mkdir"),
    (FsOp::Rmdir, "Rmdir", "rmdir"),
    (FsOp::Create, "Create", "create"),
    (FsOp::Open, "Open", "open"),
    (FsOp::Close, "Close", "close"),
    (FsOp::Delete, "Delete", "delete"),
    (FsOp::Getattr, "Getattr", "getattr"),
    (FsOp::Setattr, "Setattr", "setattr"),
    (FsOp::Access, "Access", "access"),
    (FsOp::Copy, "Copy", "copy"),
    (FsOp::Move, "Move", "move"),
];

impl FsOp {
    /// The operation an engine performs; `None` for engines that read and write.
    fn of_engine(engine: &str) -> Option<FsOp> {
        Some(match engine {
            "filecreate" => FsOp::Create,
            "filedelete" => FsOp::Delete,
            "filestat" => FsOp::Getattr,
            "dircreate" => FsOp::Mkdir,
            "dirdelete" => FsOp::Rmdir,
            "fileopen" => FsOp::Open,
            "fileclose" => FsOp::Close,
            "filesetattr" => FsOp::Setattr,
            "fileaccess" => FsOp::Access,
            "filecopy" => FsOp::Copy,
            "filemove" => FsOp::Move,
            _ => return None,
        })
    }
}

/// Counts and summed response times per operation, and bytes read and written.
#[derive(Debug, Clone, Default)]
pub(super) struct OpFigures {
    ios: [u64; 13],
    lat_ms: [f64; 13],
    pub read_bytes: f64,
    pub write_bytes: f64,
}

/// One workload's share: its engine, reads and writes with their mean response
/// times (µs), and bytes.
struct Share<'a> {
    engine: &'a str,
    reads: u64,
    writes: u64,
    read_us: f64,
    write_us: f64,
    bytes: f64,
    read_bytes: Option<f64>,
}

impl OpFigures {
    fn add(&mut self, s: Share) {
        let mut put = |op: FsOp, ios: u64, lat_ms: f64| {
            self.ios[op as usize] += ios;
            self.lat_ms[op as usize] += lat_ms;
        };
        let (r_ms, w_ms) = (
            s.reads as f64 * s.read_us / 1e3,
            s.writes as f64 * s.write_us / 1e3,
        );
        match FsOp::of_engine(s.engine) {
            Some(op) => put(op, s.reads + s.writes, r_ms + w_ms),
            None => {
                put(FsOp::Read, s.reads, r_ms);
                put(FsOp::Write, s.writes, w_ms);
                let all = (s.reads + s.writes).max(1) as f64;
                let read = s.read_bytes.unwrap_or(s.bytes * s.reads as f64 / all);
                self.read_bytes += read;
                self.write_bytes += s.bytes - read;
            }
        }
    }

    /// An interval's figures, from each workload's share of it (the interval's own
    /// figures when the run has one workload).
    pub fn of_interval(run: &RunResult, iv: &Interval) -> OpFigures {
        let mut f = OpFigures::default();
        let engine = |k: usize| engine_of(run, k);
        let split = |ios: u64, pct: f64| {
            let reads = ((ios as f64 * pct / 100.0).round() as u64).min(ios);
            (reads, ios - reads)
        };
        if iv.workloads.len() == run.workloads.len() && !iv.workloads.is_empty() {
            for (k, w) in iv.workloads.iter().enumerate() {
                let (reads, writes) = split(w.ios, w.read_pct);
                f.add(Share {
                    engine: engine(k),
                    reads,
                    writes,
                    read_us: w.read_lat_us.mean,
                    write_us: w.write_lat_us.mean,
                    bytes: w.bytes as f64,
                    read_bytes: None,
                });
            }
        } else {
            let (reads, writes) = split(iv.ios, iv.read_pct);
            f.add(Share {
                engine: engine(0),
                reads,
                writes,
                read_us: iv.read_lat_us.mean,
                write_us: iv.write_lat_us.mean,
                bytes: iv.bytes as f64,
                read_bytes: None,
            });
        }
        f
    }

    /// The run's figures over its measured time, from each workload's totals.
    pub fn of_totals(run: &RunResult) -> OpFigures {
        let mut f = OpFigures::default();
        let one = [&run.totals];
        let totals: Vec<_> = match run.workloads.is_empty() {
            true => one.to_vec(),
            false => run.workloads.iter().map(|w| &w.totals).collect(),
        };
        for (k, t) in totals.into_iter().enumerate() {
            f.add(Share {
                engine: engine_of(run, k),
                reads: t.read.ios,
                writes: t.write.ios,
                read_us: t.read.latency_us.mean,
                write_us: t.write.latency_us.mean,
                bytes: (t.read.bytes + t.write.bytes) as f64,
                read_bytes: Some(t.read.bytes as f64),
            });
        }
        f
    }

    /// Operations of `op` per second over `dur_s`.
    pub fn rate(&self, op: FsOp, dur_s: f64) -> f64 {
        per_s(self.ios[op as usize] as f64, dur_s)
    }

    /// Mean response time of `op`, ms (0 without operations).
    pub fn resp(&self, op: FsOp) -> f64 {
        let n = self.ios[op as usize];
        if n == 0 {
            0.0
        } else {
            self.lat_ms[op as usize] / n as f64
        }
    }

    /// All operations per second, and their mean response time (ms).
    pub fn total(&self, dur_s: f64) -> (f64, f64) {
        let n: u64 = self.ios.iter().sum();
        let lat: f64 = self.lat_ms.iter().sum();
        (
            per_s(n as f64, dur_s),
            if n == 0 { 0.0 } else { lat / n as f64 },
        )
    }

    /// Average bytes per read or write.
    pub fn xfersize(&self) -> u64 {
        let n = self.ios[FsOp::Read as usize] + self.ios[FsOp::Write as usize];
        ((self.read_bytes + self.write_bytes) / n.max(1) as f64) as u64
    }

    /// Reads as a percentage of reads and writes (the other operations apart).
    pub fn read_pct(&self) -> f64 {
        let (r, w) = (
            self.ios[FsOp::Read as usize],
            self.ios[FsOp::Write as usize],
        );
        if r + w == 0 {
            0.0
        } else {
            100.0 * r as f64 / (r + w) as f64
        }
    }

    /// Which operations have any count (vdbench shows getattr … move only then).
    pub fn used(&self) -> [bool; 13] {
        self.ios.map(|n| n > 0)
    }
}

/// Workload `k`'s engine (the run's when the workload does not say).
fn engine_of(run: &RunResult, k: usize) -> &str {
    run.workloads
        .get(k)
        .and_then(|w| w.settings.as_ref())
        .and_then(|s| s.engine.as_deref())
        .unwrap_or(&run.engine)
}

/// A column group of the summary: its name over one or two columns (`width.prec`).
struct Group {
    name: &'static str,
    cols: &'static [(&'static str, usize, usize)],
}

/// The groups before the per-operation ones.
const LEAD: [Group; 6] = [
    Group {
        name: "ReqstdOps.",
        cols: &[("rate", 6, 1), ("resp", 6, 3)],
    },
    Group {
        name: " read",
        cols: &[("pct", 5, 1)],
    },
    Group {
        name: "read",
        cols: &[("rate", 6, 1), ("resp", 6, 3)],
    },
    Group {
        name: "write",
        cols: &[("rate", 6, 1), ("resp", 6, 3)],
    },
    Group {
        name: "mb/sec",
        cols: &[("read", 5, 2), ("write", 5, 2)],
    },
    Group {
        name: "mb/sec",
        cols: &[("total", 6, 2)],
    },
];
/// An operation's group: rate and response time.
const OP_COLS: &[(&str, usize, usize)] = &[("rate", 5, 1), ("resp", 6, 3)];
/// getattr and the operations after it have columns only when a run used them.
const FIRST_OPTIONAL: usize = FsOp::Getattr as usize;

/// `name` centred in `width` between dots, after a blank.
fn centred(name: &str, width: usize) -> String {
    let extra = width.saturating_sub(name.len());
    let (a, b) = (extra / 2, extra - extra / 2);
    format!(" {}{name}{}", ".".repeat(a), ".".repeat(b))
}

fn group_header(name: &str, cols: &[(&str, usize, usize)]) -> (String, String) {
    let width = cols.iter().map(|c| c.1).sum::<usize>() + cols.len() - 1;
    let h2 = cols.iter().map(|(n, w, _)| format!(" {n:>w$}")).collect();
    (centred(name, width), h2)
}

/// The two header lines after the date (the second after 12 blanks).
pub(super) fn headers(used: [bool; 13]) -> (String, String) {
    let (mut h1, mut h2) = group_header("Interval", &[("", 10, 0)]);
    let mut push = |(a, b): (String, String)| {
        h1.push_str(&a);
        h2.push_str(&b);
    };
    for g in &LEAD {
        push(group_header(g.name, g.cols));
    }
    push(group_header("xfer", &[("size", 7, 0)]));
    for (i, (_, _, name)) in OPS.iter().enumerate().skip(FsOp::Mkdir as usize) {
        if i < FIRST_OPTIONAL || used[i] {
            push(group_header(name, OP_COLS));
        }
    }
    (h1, h2)
}

/// `v` in `width` with `prec` decimals, fewer when it would not fit (vdbench's
/// "fit a number" format).
pub(super) fn fit(v: f64, width: usize, prec: usize) -> String {
    (0..=prec)
        .rev()
        .map(|p| format!("{v:>width$.p$}"))
        .find(|s| s.len() <= width)
        .unwrap_or_else(|| format!("{v:>width$.0}"))
}

/// A summary line's figures (after the time of day).
pub(super) fn line(r: &Row, used: [bool; 13]) -> String {
    let o = &r.ops;
    let num = |v: f64, (_, w, p): (&str, usize, usize)| format!(" {}", fit(v, w, p));
    let (rate, resp) = o.total(r.dur_s);
    let mb = |b: f64| per_s(b, r.dur_s) / MB;
    let mut s = format!(" {:>10}", r.label);
    let lead = [
        vec![rate, resp],
        vec![o.read_pct()],
        vec![o.rate(FsOp::Read, r.dur_s), o.resp(FsOp::Read)],
        vec![o.rate(FsOp::Write, r.dur_s), o.resp(FsOp::Write)],
        vec![mb(o.read_bytes), mb(o.write_bytes)],
        vec![mb(o.read_bytes + o.write_bytes)],
    ];
    for (g, vals) in LEAD.iter().zip(lead) {
        for (c, v) in g.cols.iter().zip(vals) {
            s.push_str(&num(v, *c));
        }
    }
    s.push_str(&num(o.xfersize() as f64, ("", 7, 0)));
    for (i, (op, _, _)) in OPS.iter().enumerate().skip(FsOp::Mkdir as usize) {
        if i < FIRST_OPTIONAL || used[i] {
            s.push_str(&num(o.rate(*op, r.dur_s), OP_COLS[0]));
            s.push_str(&num(o.resp(*op), OP_COLS[1]));
        }
    }
    s
}
