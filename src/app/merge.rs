//! `ioscope merge A.json B.json … [-o C.json]`: results of separate hosts or
//! processes that ran one workload between them, combined into one result whose
//! percentiles are those of one histogram of all their I/Os. Each source's raw
//! histograms (`totals.read.hdr`, …) are decoded and added bucket by bucket, so the
//! merged percentiles are exact, never averages of percentiles; the exact moments
//! (min, max, mean, standard deviation) come from the sources' summaries.
//!
//! Results merge run by run (the first run of each, then the second, …). Rates are
//! taken over the common window, the overlap of the parts' measured times: each
//! part's I/Os within it (from its intervals, prorated at the window's edges) over
//! the window's length. Parts that do not overlap at all have no common window; their
//! rates are then summed as each part measured them, and the merged result says so in
//! its warnings. What the window cannot hold exactly (intervals, per-workload totals,
//! CPU, connections) is left out of the merged run; each source is kept as a part.

use super::error::AppError;
use super::invocation::MergeInvocation;
use super::merge_error::MergeError;
use crate::result::parts::Part;
use crate::result::{Cpu, OpTotals, ResultDoc, RunResult, Totals};
use crate::stats::histogram::{LatencyHistogram, Moments};

/// One source run with where it came from.
struct Source<'a> {
    path: &'a str,
    doc: &'a ResultDoc,
    run: &'a RunResult,
}

/// Runs the command: reads every result, merges, writes.
pub fn merge(a: &MergeInvocation) -> Result<i32, AppError> {
    let docs = a
        .results
        .iter()
        .map(|p| Ok((p.display().to_string(), super::tools::read_result(p)?)))
        .collect::<Result<Vec<_>, AppError>>()?;
    let merged = merge_docs(&docs, a.command.clone())?;
    let text = crate::report::export::Format::Json.render(&merged);
    match &a.output {
        Some(p) => super::tools::write_file(p, &text)?,
        None => super::stdout::print(&text)?,
    }
    Ok(super::exit::OK)
}

/// The merged document of `docs` (path, result), run by run.
pub fn merge_docs(
    docs: &[(String, ResultDoc)],
    command: Vec<String>,
) -> Result<ResultDoc, MergeError> {
    let (first_path, first) = &docs[0];
    for (p, d) in &docs[1..] {
        if d.runs.len() != first.runs.len() {
            return Err(MergeError::RunCount {
                first: first_path.clone(),
                first_runs: first.runs.len(),
                other: p.clone(),
                other_runs: d.runs.len(),
            });
        }
    }
    let mut warnings = Vec::new();
    let mut runs = Vec::new();
    for i in 0..first.runs.len() {
        let sources: Vec<Source> = docs
            .iter()
            .map(|(path, doc)| Source {
                path,
                doc,
                run: &doc.runs[i],
            })
            .collect();
        let (run, warning) = merge_run(i + 1, &sources)?;
        warnings.extend(warning);
        runs.push(run);
    }
    Ok(ResultDoc {
        schema: crate::result::SCHEMA.into(),
        tool: crate::result::Tool::current(),
        started_unix_s: docs
            .iter()
            .map(|d| d.1.started_unix_s)
            .fold(f64::MAX, f64::min),
        command,
        interrupted: docs.iter().any(|d| d.1.interrupted),
        runs,
        env: None,
        plan: None,
        warnings,
        curves: Vec::new(),
        steady_state: None,
    })
}

/// Refuses a run that is not a part of the first source's workload.
fn check_shape(run: usize, first: &Source, other: &Source) -> Result<(), MergeError> {
    let storage = |s: &Source| {
        s.run
            .workload
            .storage()
            .cloned()
            .ok_or(MergeError::Network {
                source_path: s.path.into(),
                run,
            })
    };
    let (a, b) = (storage(first)?, storage(other)?);
    let differs = |what: &'static str, x: String, y: String| {
        (x != y).then(|| MergeError::Shape {
            run,
            first: first.path.into(),
            other: other.path.into(),
            what,
            a: x,
            b: y,
        })
    };
    let found = differs("transfer sizes", json(&a.bs), json(&b.bs))
        .or_else(|| differs("read share", a.read_pct.to_string(), b.read_pct.to_string()))
        .or_else(|| differs("access pattern", json(&a.pattern), json(&b.pattern)));
    found.map_or(Ok(()), Err)
}

/// A setting as JSON text, for naming a difference.
fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The merged run `run` (1-based) and, when the parts do not overlap, the warning.
fn merge_run(run: usize, sources: &[Source]) -> Result<(RunResult, Option<String>), MergeError> {
    for s in &sources[1..] {
        check_shape(run, &sources[0], s)?;
    }
    let parts: Vec<Part> = sources.iter().map(part_of).collect();
    let window = common_window(&parts);
    let mut dirs: Vec<Option<Direction>> = Vec::new();
    for (k, name) in DIRECTIONS.iter().enumerate() {
        let mut sum: Option<Direction> = None;
        for s in sources {
            if let Some(d) = direction(run, s, k, name, window)? {
                match sum.as_mut() {
                    Some(acc) => acc.add(&d),
                    None => sum = Some(d),
                }
            }
        }
        dirs.push(sum);
    }
    let window_s = window.map(|(a, b)| b - a);
    let duration_s =
        window_s.unwrap_or_else(|| sources.iter().map(|s| s.run.duration_s).fold(0.0, f64::max));
    let warning = window.is_none().then(|| {
        format!(
            "run {run}: its parts do not overlap in time, so their rates are summed as \
             each part measured them over its own time"
        )
    });
    let totals = totals_of(&dirs, sources);
    Ok((merged_run(sources, totals, duration_s, parts), warning))
}

/// The merged run around its totals: the first source's description, the sums that
/// hold across parts, and nothing a merge cannot carry exactly.
fn merged_run(sources: &[Source], totals: Totals, duration_s: f64, parts: Vec<Part>) -> RunResult {
    let mut targets: Vec<&str> = Vec::new();
    for s in sources {
        if !targets.contains(&s.run.target.as_str()) {
            targets.push(&s.run.target);
        }
    }
    let mut samples: Vec<_> = sources
        .iter()
        .flat_map(|s| s.run.error_samples.iter().cloned())
        .collect();
    samples.truncate(16);
    RunResult {
        target: targets.join(","),
        duration_s,
        interrupted: sources.iter().any(|s| s.run.interrupted),
        workers: sources.iter().map(|s| s.run.workers).sum(),
        streams: sources.iter().map(|s| s.run.streams).sum(),
        totals,
        cpu: Cpu::default(),
        error_samples: samples,
        parts,
        ..RunResult {
            kind: sources[0].run.kind,
            name: sources[0].run.name.clone(),
            engine: sources[0].run.engine.clone(),
            engine_reason: sources[0].run.engine_reason.clone(),
            io: sources[0].run.io.clone(),
            workload: sources[0].run.workload.clone(),
            warmup_s: sources[0].run.warmup_s,
            end_reason: sources[0].run.end_reason,
            ..RunResult::empty()
        }
    }
}

const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// One direction of one part, or of parts added together.
#[derive(Clone)]
struct Direction {
    ios: u64,
    bytes: u64,
    errors: u64,
    skipped: u64,
    /// I/Os and bytes within the common window (or, without one, per second of
    /// the part's own time × the merged duration: see [`direction`]).
    ios_per_s: f64,
    bytes_per_s: f64,
    lat: LatencyHistogram,
    svc: LatencyHistogram,
    open_loop: bool,
}

impl Direction {
    fn add(&mut self, o: &Direction) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.errors += o.errors;
        self.skipped += o.skipped;
        self.ios_per_s += o.ios_per_s;
        self.bytes_per_s += o.bytes_per_s;
        self.lat += &o.lat;
        self.svc += &o.svc;
        self.open_loop |= o.open_loop;
    }
}

fn dir_totals(t: &Totals, k: usize) -> Option<&OpTotals> {
    match k {
        0 => Some(&t.read),
        1 => Some(&t.write),
        _ => t.trim.as_ref(),
    }
}

/// Direction `k` of source `s`: its counts, its rate over the common window and its
/// histograms decoded; `None` when it did none.
fn direction(
    run: usize,
    s: &Source,
    k: usize,
    dir: &'static str,
    window: Option<(f64, f64)>,
) -> Result<Option<Direction>, MergeError> {
    let Some(t) = dir_totals(&s.run.totals, k) else {
        return Ok(None);
    };
    let hist = |text: &Option<String>, stats| match text {
        Some(text) => decoded(run, s.path, dir, text, stats),
        None if t.ios == 0 => Ok(LatencyHistogram::new()),
        None => Err(MergeError::NoHistogram {
            source_path: s.path.into(),
            run,
            dir,
            ios: t.ios,
        }),
    };
    let lat = hist(&t.hdr, &t.latency_us)?;
    let svc = match &t.service_hdr {
        Some(_) => hist(&t.service_hdr, &t.service_us)?,
        None => lat.clone(),
    };
    let share = window_share(s.run, window);
    Ok(Some(Direction {
        ios: t.ios,
        bytes: t.bytes,
        errors: t.errors,
        skipped: t.skipped,
        ios_per_s: match window {
            Some((a, b)) => t.ios as f64 * share / (b - a),
            None => t.iops,
        },
        bytes_per_s: match window {
            Some((a, b)) => t.bytes as f64 * share / (b - a),
            None => t.mbps * 1e6,
        },
        lat,
        svc,
        open_loop: t.service_hdr.is_some(),
    }))
}

/// An encoded histogram rebuilt with its summary's exact figures.
fn decoded(
    run: usize,
    path: &str,
    dir: &'static str,
    text: &str,
    stats: &crate::result::LatencyStats,
) -> Result<LatencyHistogram, MergeError> {
    let h = crate::result::hdr::decode(text).map_err(|source| MergeError::Histogram {
        source_path: path.into(),
        run,
        dir,
        source,
    })?;
    let m = Moments::of_summary_us(stats, h.len());
    LatencyHistogram::from_hdr(&h, m).ok_or(MergeError::Layout {
        source_path: path.into(),
        run,
        dir,
    })
}

/// The run's totals from the merged directions.
fn totals_of(dirs: &[Option<Direction>], sources: &[Source]) -> Totals {
    let mut all: Option<Direction> = None;
    for d in dirs.iter().flatten() {
        match all.as_mut() {
            Some(a) => a.add(d),
            None => all = Some(d.clone()),
        }
    }
    let op = |d: Option<&Direction>, hdr: bool| d.map(|d| op_totals(d, hdr)).unwrap_or_default();
    Totals {
        all: op(all.as_ref(), false),
        read: op(dirs[0].as_ref(), true),
        write: op(dirs[1].as_ref(), true),
        trim: dirs[2].as_ref().map(|d| op_totals(d, true)),
        queue_depth: sources.iter().map(|s| s.run.totals.queue_depth).sum(),
        ..Default::default()
    }
}

/// A merged direction as the result holds it; `hdr`: with its encoded histograms.
fn op_totals(d: &Direction, hdr: bool) -> OpTotals {
    OpTotals {
        ios: d.ios,
        bytes: d.bytes,
        iops: d.ios_per_s,
        mbps: d.bytes_per_s / 1e6,
        mibps: d.bytes_per_s / (1u64 << 20) as f64,
        errors: d.errors,
        skipped: d.skipped,
        latency_us: d.lat.summary_us(true),
        service_us: d.svc.summary_us(true),
        hdr: if hdr {
            crate::stats::encoded(&d.lat)
        } else {
            None
        },
        service_hdr: if hdr && d.open_loop {
            crate::stats::encoded(&d.svc)
        } else {
            None
        },
    }
}

/// A source run as a part: its host, measured window and own figures.
fn part_of(s: &Source) -> Part {
    let host = s
        .doc
        .env
        .as_ref()
        .and_then(|e| e.pointer("/host/hostname"))
        .and_then(|h| h.as_str())
        .unwrap_or_default()
        .to_string();
    let (start_unix_s, end_unix_s) = measured_span(s);
    Part {
        host,
        start_unix_s,
        end_unix_s,
        source: s.path.into(),
        ios: s.run.totals.all.ios,
        iops: s.run.totals.all.iops,
    }
}

/// A run's measured time in Unix seconds: from its measured intervals; without
/// them, its duration ending where its last interval (or the result's start plus
/// warm-up and duration) ends.
fn measured_span(s: &Source) -> (f64, f64) {
    let measured = || s.run.intervals.iter().filter(|i| !i.warmup);
    match (measured().next(), measured().next_back()) {
        (Some(first), Some(last)) => (first.unix_s - first.duration_s, last.unix_s),
        _ => {
            let start = s.doc.started_unix_s + s.run.warmup_s;
            (start, start + s.run.duration_s)
        }
    }
}

/// The overlap of the parts' measured times, if they overlap.
fn common_window(parts: &[Part]) -> Option<(f64, f64)> {
    let start = parts
        .iter()
        .map(|p| p.start_unix_s)
        .fold(f64::MIN, f64::max);
    let end = parts.iter().map(|p| p.end_unix_s).fold(f64::MAX, f64::min);
    (end > start).then_some((start, end))
}

/// The share of a run's I/Os done within `window`: from its measured intervals, each
/// counted by the part of it inside the window; without intervals, by time.
fn window_share(run: &RunResult, window: Option<(f64, f64)>) -> f64 {
    let Some((a, b)) = window else {
        return 1.0;
    };
    let inside =
        |start: f64, end: f64| ((end.min(b) - start.max(a)) / (end - start)).clamp(0.0, 1.0);
    let measured: Vec<_> = run.intervals.iter().filter(|i| !i.warmup).collect();
    let total: u64 = measured.iter().map(|i| i.ios).sum();
    if total == 0 {
        let end = run.duration_s.max(1e-9);
        return ((b - a) / end).min(1.0);
    }
    let within: f64 = measured
        .iter()
        .map(|i| i.ios as f64 * inside(i.unix_s - i.duration_s, i.unix_s))
        .sum();
    within / total as f64
}
