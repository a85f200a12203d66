//! Trace replay: a workload whose `trace` setting names a block trace or I/O log
//! issues the trace's I/Os instead of generated ones. On time, each I/O's intended
//! time is its recorded time (divided by the speed, idle gaps cut to `trace_max_gap`),
//! so the open-loop scheduler issues it then and counts its latency from then; asap
//! issues them in order as a closed loop at the queue depth. Offsets beyond the
//! working set are remapped (modulo or scale). A trace of several devices becomes one
//! workload per device before the run ([`prepare`]); the result tells how faithful
//! the replay was ([`crate::result::ReplayResult`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::resolved::Resolved;
use super::RunError;
use crate::plan::model::Op;
use crate::plan::model::{Arrival, BlockSizes, Rate, RunSpec, Workload};
use crate::plan::settings::declared::{
    RECORD, TRACE, TRACE_ALIGN, TRACE_DEVICE, TRACE_EVENT, TRACE_FORMAT, TRACE_MAX_GAP,
    TRACE_REMAP, TRACE_SCALE, TRACE_SHARE, TRACE_SPEED, TRACE_TIMING,
};
use crate::plan::settings::{intern, Value};
use crate::result::ReplayResult;
use crate::stats::histogram::LatencyHistogram;
use crate::trace::{self, BlkEvent, Trace, TraceFormat, TraceIo};

/// An I/O issued this much after its recorded time was not issued on time.
pub const LATE_NS: u64 = 1_000_000;

/// Offsets a remapped I/O keeps its alignment to.
const SECTOR_BYTES: u64 = 512;

/// One trace workload's I/Os as its stream issues them: times relative to the
/// trace's first I/O (speed and gap cut applied), offsets as recorded until
/// [`Replays::place`] maps them into the working set.
#[derive(Debug)]
pub struct ReplayPlan {
    pub ios: Arc<[TraceIo]>,
    /// What the result reports of the trace and the replay's choices.
    pub facts: ReplayResult,
    remap_scale: bool,
    /// Where the device's I/O ends in the trace.
    extent_bytes: u64,
}

/// Per workload of the (expanded) run: its replay, if it is a trace workload; and
/// where the workers leave the I/Os of recording workloads.
#[derive(Debug, Default)]
pub struct Replays {
    pub by_workload: Vec<Option<ReplayPlan>>,
    pub sink: Option<Arc<Mutex<Vec<Recorded>>>>,
}

/// One issued I/O of a recording workload: when (from the run's start), of which
/// workload, to which target, what. Requests issued in one turn of a worker share
/// their submission time; their intended times keep a replay's order among them.
#[derive(Debug, Clone, Copy)]
pub struct Recorded {
    pub t_ns: u64,
    pub intended_ns: u64,
    pub workload: u32,
    pub target: u32,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
}

/// Where one stream is in its trace.
#[derive(Debug, Clone)]
pub struct ReplayCursor {
    ios: Arc<[TraceIo]>,
    next: usize,
}

impl ReplayCursor {
    /// The next recorded I/O, or `None` once the trace is over.
    #[inline]
    pub fn take(&mut self) -> Option<TraceIo> {
        let io = *self.ios.get(self.next)?;
        self.next += 1;
        Some(io)
    }

    /// The recorded time of the I/O [`ReplayCursor::take`] gives next.
    #[inline]
    pub fn next_t_ns(&self) -> Option<u64> {
        self.ios.get(self.next).map(|io| io.t_ns)
    }

    /// The recorded time of the I/O taken last (0 before the first).
    #[inline]
    pub fn last_t_ns(&self) -> u64 {
        self.next
            .checked_sub(1)
            .and_then(|i| self.ios.get(i))
            .map_or(0, |io| io.t_ns)
    }
}

impl Replays {
    /// The cursor a stream of workload `wi` starts with.
    pub fn cursor(&self, wi: usize) -> Option<Box<ReplayCursor>> {
        let plan = self.by_workload.get(wi)?.as_ref()?;
        Some(Box::new(ReplayCursor {
            ios: plan.ios.clone(),
            next: 0,
        }))
    }

    /// Maps each trace's offsets into its workload's working set, now that the
    /// targets are open and the working sets known.
    pub(super) fn place(&mut self, resolved: &[Resolved]) {
        for (plan, r) in self.by_workload.iter_mut().zip(resolved) {
            if let Some(p) = plan.as_mut() {
                p.place(r.ws_start, r.ws_len);
            }
        }
    }

    /// After the run: the replays in the result (see [`Replays::annotate`]) and the
    /// record files written; a log that cannot be written is a warning, since the
    /// run itself happened.
    pub(super) fn finish(
        &self,
        result: &mut crate::result::RunResult,
        run: &RunSpec,
        targets: &crate::engine::Targets,
        by_workload: &[(Option<LatencyHistogram>, u64)],
        warnings: &mut Vec<String>,
    ) {
        self.annotate(result, run, by_workload);
        if let Some(sink) = &self.sink {
            if let Err(e) = write_records(run, targets, sink) {
                warnings.push(crate::errors::Chain(&e).to_string());
            }
        }
    }

    /// Adds the replays to the result: an entry per trace workload, with how late
    /// its I/Os were issued and how many (`by_workload`: each workload's measured
    /// issue lateness and I/O count), and each interval's recorded rate.
    pub fn annotate(
        &self,
        result: &mut crate::result::RunResult,
        run: &RunSpec,
        by_workload: &[(Option<LatencyHistogram>, u64)],
    ) {
        for (wi, plan) in self.by_workload.iter().enumerate() {
            let Some(p) = plan else { continue };
            let mut r = p.facts.clone();
            if let Some((lag, issued)) = by_workload.get(wi) {
                r.issued_ios = *issued;
                if let Some(lag) = lag {
                    r.lag_us = Some(lag.summary_us(false));
                    r.late_ios = Some(lag.excess_over_ns(LATE_NS).0);
                }
            }
            result.replay.push(r);
        }
        if result.replay.iter().any(|r| r.timing == "on-time") {
            let recorded = self.recorded_per_interval(run);
            for iv in &mut result.intervals {
                iv.recorded_iops = Some(recorded.get(iv.index as usize).copied().unwrap_or(0.0));
            }
        }
    }

    /// Recorded I/Os per interval over all trace workloads issued on time: the rate
    /// each interval should have had, for the intervals' `recorded_iops`.
    pub fn recorded_per_interval(&self, run: &RunSpec) -> Vec<f64> {
        let step = run.interval_ns.max(1);
        let mut counts: Vec<u64> = Vec::new();
        for (w, plan) in run.workloads.iter().zip(&self.by_workload) {
            let Some(p) = plan else { continue };
            if !on_time(w) {
                continue;
            }
            let offset = w.pauses.start_delay_ns;
            for io in p.ios.iter() {
                let k = (io.t_ns.saturating_add(offset) / step) as usize;
                if counts.len() <= k {
                    counts.resize(k + 1, 0);
                }
                counts[k] += 1;
            }
        }
        let per_s = 1e9 / step as f64;
        counts.into_iter().map(|c| c as f64 * per_s).collect()
    }
}

impl ReplayPlan {
    /// Remaps offsets past the working set: modulo wraps them, scale shrinks the
    /// device's extent onto it; both keep 512-byte alignment and an I/O whole.
    fn place(&mut self, ws_start: u64, ws_len: u64) {
        let fits = |io: &TraceIo| io.offset.saturating_add(u64::from(io.len)) <= ws_len;
        if self.ios.iter().all(fits) {
            self.ios = self
                .ios
                .iter()
                .map(|io| TraceIo {
                    offset: ws_start + io.offset,
                    ..*io
                })
                .collect();
            return;
        }
        let (scale, extent) = (self.remap_scale, self.extent_bytes.max(1));
        let mut moved = 0u64;
        self.ios = self
            .ios
            .iter()
            .map(|io| {
                let len = u64::from(io.len).min(ws_len);
                let room = ws_len - len;
                // Scale moves every I/O, so the spread stays in proportion.
                let offset = if !scale && fits(io) {
                    io.offset
                } else {
                    let o = if scale {
                        (u128::from(io.offset) * u128::from(ws_len) / u128::from(extent)) as u64
                    } else {
                        io.offset % ws_len.max(1)
                    };
                    o.min(room) / SECTOR_BYTES * SECTOR_BYTES
                };
                moved += u64::from(offset != io.offset);
                TraceIo {
                    offset: ws_start + offset,
                    len: len as u32,
                    ..*io
                }
            })
            .collect();
        self.facts.remapped_ios = moved;
    }
}

/// Whether a trace workload is issued on time (the open-loop schedule).
pub fn on_time(w: &Workload) -> bool {
    w.settings.get(&TRACE_TIMING).as_str() == "on-time"
}

fn trace_of(w: &Workload) -> &'static str {
    w.settings.get(&TRACE).as_str()
}

fn record_of(w: &Workload) -> &'static str {
    w.settings.get(&RECORD).as_str()
}

/// A record file must be one the run can write: its directory exists and it is not
/// a directory. Checked before the run, so a bad path costs no run.
fn writable(run: &RunSpec, w: &Workload, path: &str) -> Result<(), RunError> {
    let p = std::path::Path::new(path);
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if p.is_dir() {
        return Err(invalid(run, w, format!("record: {path} is a directory")));
    }
    if !dir.is_dir() {
        return Err(invalid(
            run,
            w,
            format!("record: no directory {} for {path}", dir.display()),
        ));
    }
    Ok(())
}

/// Writes each record file: the I/Os of the workloads that name it, in issue order,
/// as a fio version 3 I/O log whose file names are the targets'. Returns the files
/// written.
pub fn write_records(
    run: &RunSpec,
    targets: &crate::engine::Targets,
    sink: &Mutex<Vec<Recorded>>,
) -> Result<Vec<String>, RunError> {
    let mut all = std::mem::take(&mut *sink.lock().unwrap_or_else(|p| p.into_inner()));
    all.sort_by_key(|r| (r.t_ns, r.intended_ns));
    let mut files: BTreeMap<&str, Vec<Recorded>> = BTreeMap::new();
    for r in all {
        if let Some(w) = run.workloads.get(r.workload as usize) {
            files.entry(record_of(w)).or_default().push(r);
        }
    }
    let names: Vec<String> = targets.iter().map(|t| t.uri.clone()).collect();
    let mut written = Vec::new();
    for (path, ios) in files {
        let fail = |e: std::io::Error| RunError::Setup {
            run: run.name.clone(),
            msg: format!("cannot write the I/O log {path}: {e}"),
        };
        let f = std::io::BufWriter::new(std::fs::File::create(path).map_err(fail)?);
        let mut log = trace::FioV3Writer::new(f, &names).map_err(fail)?;
        for r in &ios {
            log.add(r.t_ns, r.target as usize, r.op, r.offset, r.len)
                .map_err(fail)?;
        }
        log.finish().map_err(fail)?;
        written.push(path.to_string());
    }
    Ok(written)
}

/// The run with its trace workloads ready for the run core, and their replays;
/// `None` when it has none. A trace of several devices becomes a workload per
/// device (unless `trace_device` names one); each trace workload gets one stream,
/// the trace's rate (on time) or its recorded concurrency capped by its queue
/// depth (asap), and no byte budget of its own: the trace's end is its end.
pub fn prepare(run: &RunSpec) -> Result<Option<(RunSpec, Replays)>, RunError> {
    let records = run.workloads.iter().any(|w| !record_of(w).is_empty());
    for w in run.workloads.iter().filter(|w| !record_of(w).is_empty()) {
        writable(run, w, record_of(w))?;
    }
    if run.workloads.iter().all(|w| trace_of(w).is_empty()) {
        let replays = Replays {
            sink: records.then(Default::default),
            ..Replays::default()
        };
        return Ok(records.then(|| (run.clone(), replays)));
    }
    let mut out = run.clone();
    let mut replays = Replays {
        sink: records.then(Default::default),
        ..Replays::default()
    };
    for w in &mut out.workloads {
        let path = trace_of(w);
        if path.is_empty() {
            replays.by_workload.push(None);
            continue;
        }
        let t = loaded(run, w, path)?;
        let (dev, _) = devices(run, w, &t)?[0];
        let share = share_of(run, w)?;
        replays
            .by_workload
            .push(Some(plan_of(w, &t, dev, path, share)));
    }
    Ok(Some((out, replays)))
}

/// Before a run is placed among ranks: a trace workload of several devices becomes
/// a workload per device named `WORKLOAD.DEVICE` (unless `trace_device` names one),
/// each naming its device. `None` when the run has no trace workload.
pub fn expand(run: &RunSpec) -> Result<Option<RunSpec>, RunError> {
    if run.workloads.iter().all(|w| trace_of(w).is_empty()) {
        return Ok(None);
    }
    let mut out = run.clone();
    out.workloads.clear();
    for w in &run.workloads {
        let path = trace_of(w);
        if path.is_empty() {
            out.workloads.push(w.clone());
            continue;
        }
        let t = loaded(run, w, path)?;
        for (dev, device_named) in devices(run, w, &t)? {
            let mut ww = w.clone();
            if !device_named {
                let name = &t.devices[dev].name;
                if t.devices.len() > 1 {
                    ww.name = format!("{}.{name}", w.name);
                }
                ww.settings.set(&TRACE_DEVICE, Value::Text(intern(name)));
            }
            out.workloads.push(ww);
        }
    }
    Ok(Some(out))
}

/// The workload's `trace_share` as (K − 1, N); (0, 1) when it has none.
fn share_of(run: &RunSpec, w: &Workload) -> Result<(u64, u64), RunError> {
    let text = w.settings.get(&TRACE_SHARE).as_str();
    if text.is_empty() {
        return Ok((0, 1));
    }
    let parsed = text
        .split_once('/')
        .and_then(|(k, n)| Some((k.trim().parse::<u64>().ok()?, n.trim().parse::<u64>().ok()?)));
    match parsed {
        Some((k, n)) if k >= 1 && k <= n => Ok((k - 1, n)),
        _ => Err(invalid(
            run,
            w,
            format!("trace_share '{text}' is not K/N with 1 <= K <= N"),
        )),
    }
}

/// Traces read in this process, by (path, format, blktrace event): the checks
/// before the runs read each once, and the run takes it from here.
type Loaded = BTreeMap<(String, &'static str, &'static str), Arc<Trace>>;
static LOADED: Mutex<Loaded> = Mutex::new(BTreeMap::new());

/// A workload's trace, read once per process.
fn loaded(run: &RunSpec, w: &Workload, path: &str) -> Result<Arc<Trace>, RunError> {
    let format = w.settings.get(&TRACE_FORMAT).as_str();
    let event = w.settings.get(&TRACE_EVENT).as_str();
    let key = (path.to_string(), format, event);
    if let Some(t) = LOADED.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(t.clone());
    }
    let t = Arc::new(load(run, w, path, format, event)?);
    LOADED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, t.clone());
    Ok(t)
}

/// Reads a workload's trace, its errors naming the run and workload.
fn load(
    run: &RunSpec,
    w: &Workload,
    path: &str,
    format: &str,
    event: &str,
) -> Result<Trace, RunError> {
    let format = match format {
        "auto" => None,
        f => f.parse::<TraceFormat>().ok(),
    };
    let event = match event {
        "issue" => BlkEvent::Issue,
        _ => BlkEvent::Queue,
    };
    let t = trace::load(&[PathBuf::from(path)], format, event).map_err(|e| invalid(run, w, e))?;
    if t.devices.iter().all(|d| d.ios.is_empty()) {
        return Err(invalid(
            run,
            w,
            format!("trace {path} holds no I/O to replay"),
        ));
    }
    Ok(t)
}

/// The devices of `t` that workload `w` replays, and whether `w` named it.
fn devices(run: &RunSpec, w: &Workload, t: &Trace) -> Result<Vec<(usize, bool)>, RunError> {
    let named = w.settings.get(&TRACE_DEVICE).as_str();
    if named.is_empty() {
        return Ok((0..t.devices.len())
            .filter(|&d| !t.devices[d].ios.is_empty())
            .map(|d| (d, false))
            .collect());
    }
    match t.devices.iter().position(|d| d.name == named) {
        Some(d) => Ok(vec![(d, true)]),
        None => {
            let names: Vec<&str> = t.devices.iter().map(|d| d.name.as_str()).collect();
            Err(invalid(
                run,
                w,
                format!(
                    "the trace has no device '{named}'; its devices: {}",
                    names.join(", ")
                ),
            ))
        }
    }
}

/// The time slices of a trace share: slice i of the replay's time goes to share
/// i mod N.
pub const SHARE_SLICE_NS: u64 = 10_000_000;

/// Sets `w` up as the replay of device `dev` of `t` (its `share`: K − 1 of N),
/// and returns its replay.
fn plan_of(w: &mut Workload, t: &Trace, dev: usize, path: &str, (k, n): (u64, u64)) -> ReplayPlan {
    let d = &t.devices[dev];
    let speed = match w.settings.get(&TRACE_SPEED) {
        Value::Ratio(x) if x > 0.0 => x,
        _ => 1.0,
    };
    let max_gap_ns = match w.settings.get(&TRACE_MAX_GAP) {
        Value::Nanos(n) => n,
        _ => 0,
    };
    let (mut ios, recorded_ns, cut_ns) = retimed(&d.ios, t.timed, speed, max_gap_ns);
    let scale = scale_and_share(w, &mut ios, t.timed, (k, n));
    let span_ns = ios.last().map_or(0, |io| io.t_ns);
    let n = ios.len() as u64;
    let timed = on_time(w) && t.timed;
    w.streams = 1;
    w.share_pct = None;
    // The trace's sizes and mix, for the slot buffers (sized by the largest) and
    // the echo.
    w.bs = sizes_of(&ios);
    w.read_pct = read_pct_of(&ios);
    if timed {
        // The trace's mean rate: what the schedule result compares with.
        let span_s = (span_ns.max(1)) as f64 / 1e9;
        w.rate = Rate::Iops((n.max(1) as f64 / span_s).max(1e-3));
        w.arrival = Arrival::Uniform;
    } else {
        w.rate = Rate::Max;
        if let Some(c) = d.concurrency {
            w.qd = w.qd.min(c.max(1));
        }
    }
    let mut by_op = [0u64; Op::COUNT];
    for io in &ios {
        by_op[io.op.index()] += 1;
    }
    let facts = ReplayResult {
        workload: w.name.clone(),
        trace: path.to_string(),
        format: t.format.name().to_string(),
        device: d.name.clone(),
        timing: if timed { "on-time" } else { "asap" }.to_string(),
        speed,
        recorded_ios: n,
        recorded_reads: by_op[Op::Read.index()],
        recorded_writes: by_op[Op::Write.index()],
        recorded_trims: by_op[Op::Trim.index()],
        recorded_s: recorded_ns as f64 / 1e9,
        replay_s: span_ns as f64 / 1e9,
        cut_s: cut_ns as f64 / 1e9,
        remap: w.settings.get(&TRACE_REMAP).as_str().to_string(),
        device_extent_bytes: d.extent_bytes / scale,
        skipped: t
            .skipped
            .iter()
            .map(|(k, n)| (k.name().to_string(), n))
            .collect(),
        ..ReplayResult::default()
    };
    ReplayPlan {
        ios: ios.into(),
        facts,
        remap_scale: w.settings.get(&TRACE_REMAP).as_str() == "scale",
        extent_bytes: d.extent_bytes / scale,
    }
}

/// Applies `trace_scale` and `trace_align` to the I/Os' offsets and keeps only the
/// share's (K − 1 of N): by 10 ms slice of replay time, or by I/O in turn for an
/// untimed trace. Returns the scale.
fn scale_and_share(w: &Workload, ios: &mut Vec<TraceIo>, timed: bool, (k, n): (u64, u64)) -> u64 {
    let (scale, align) = match (w.settings.get(&TRACE_SCALE), w.settings.get(&TRACE_ALIGN)) {
        (Value::Count(s), Value::Bytes(a)) => (s.max(1), a.max(1)),
        _ => (1, 1),
    };
    for io in ios.iter_mut() {
        io.offset = io.offset / scale / align * align;
    }
    if n > 1 {
        let mut i = 0u64;
        ios.retain(|io| {
            i += 1;
            let slice = if timed {
                io.t_ns / SHARE_SLICE_NS
            } else {
                i - 1
            };
            slice % n == k
        });
    }
    scale
}

/// The block sizes of a trace's I/Os per direction, weighted by count: the 15 most
/// frequent and the largest (whose buffers every slot needs).
fn sizes_of(ios: &[TraceIo]) -> BlockSizes {
    let mut counts = [BTreeMap::<u64, u64>::new(), BTreeMap::new()];
    for io in ios {
        *counts[usize::from(io.op != Op::Read)]
            .entry(u64::from(io.len))
            .or_default() += 1;
    }
    let split = |m: &BTreeMap<u64, u64>| -> Vec<(u64, u32)> {
        let mut by_count: Vec<(u64, u64)> = m.iter().map(|(&b, &n)| (b, n)).collect();
        by_count.sort_by_key(|&(b, n)| (std::cmp::Reverse(n), b));
        let mut kept: Vec<(u64, u64)> = by_count.into_iter().take(15).collect();
        if let Some((&largest, &n)) = m.iter().next_back() {
            if !kept.iter().any(|&(b, _)| b == largest) {
                kept.push((largest, n));
            }
        }
        kept.sort_unstable();
        let total: u64 = kept.iter().map(|&(_, n)| n).sum::<u64>().max(1);
        kept.into_iter()
            .map(|(b, n)| (b, ((n * 10_000 / total) as u32).max(1)))
            .collect()
    };
    let (reads, writes) = (split(&counts[0]), split(&counts[1]));
    match (reads.is_empty(), writes.is_empty()) {
        (false, true) => BlockSizes::of(reads),
        (true, false) => BlockSizes::of(writes),
        _ => BlockSizes::per_direction(reads, writes),
    }
}

/// The share of reads among a trace's I/Os, in whole percent.
fn read_pct_of(ios: &[TraceIo]) -> u8 {
    let reads = ios.iter().filter(|io| io.op == Op::Read).count();
    ((reads * 100 + ios.len() / 2) / ios.len().max(1)) as u8
}

/// The I/Os with their times divided by `speed` and each idle gap longer than
/// `max_gap_ns` (0: none) cut to it, counted from the device's first I/O; also the
/// span as recorded (after the speed) and the time cut. An untimed trace keeps 0s.
fn retimed(ios: &[TraceIo], timed: bool, speed: f64, max_gap_ns: u64) -> (Vec<TraceIo>, u64, u64) {
    let first = ios.first().map_or(0, |io| io.t_ns);
    let scaled = |t: u64| ((t - first) as f64 / speed).round() as u64;
    let mut cut_ns = 0u64;
    let mut prev = 0u64;
    let out: Vec<TraceIo> = ios
        .iter()
        .map(|io| {
            let t = if timed { scaled(io.t_ns.max(first)) } else { 0 };
            let gap = t.saturating_sub(prev);
            if max_gap_ns > 0 && gap > max_gap_ns {
                cut_ns += gap - max_gap_ns;
            }
            prev = t;
            TraceIo {
                t_ns: t - cut_ns.min(t),
                ..*io
            }
        })
        .collect();
    let recorded_ns = if timed {
        ios.last().map_or(0, |io| scaled(io.t_ns.max(first)))
    } else {
        0
    };
    (out, recorded_ns, cut_ns)
}

fn invalid(run: &RunSpec, w: &Workload, msg: impl std::fmt::Display) -> RunError {
    RunError::Invalid {
        run: run.name.clone(),
        workload: w.name.clone(),
        msg: msg.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(t_ns: u64, offset: u64) -> TraceIo {
        TraceIo {
            t_ns,
            op: Op::Read,
            offset,
            len: 4096,
        }
    }

    #[test]
    fn speed_divides_times_and_long_gaps_are_cut_to_the_limit() {
        let ios = [
            io(1_000, 0),
            io(3_000, 0),
            io(1_003_000, 0),
            io(1_004_000, 0),
        ];
        let (out, recorded, cut) = retimed(&ios, true, 2.0, 0);
        let t: Vec<u64> = out.iter().map(|i| i.t_ns).collect();
        assert_eq!(t, [0, 1_000, 501_000, 501_500]);
        assert_eq!((recorded, cut), (501_500, 0));
        let (out, recorded, cut) = retimed(&ios, true, 1.0, 10_000);
        let t: Vec<u64> = out.iter().map(|i| i.t_ns).collect();
        assert_eq!(t, [0, 2_000, 12_000, 13_000]);
        assert_eq!((recorded, cut), (1_003_000, 990_000));
    }

    fn plan(ios: Vec<TraceIo>, scale: bool, extent: u64) -> ReplayPlan {
        ReplayPlan {
            ios: ios.into(),
            facts: ReplayResult::default(),
            remap_scale: scale,
            extent_bytes: extent,
        }
    }

    #[test]
    fn offsets_past_the_working_set_wrap_or_scale_and_stay_aligned() {
        let ios = vec![io(0, 0), io(1, 1 << 20), io(2, (10 << 20) - 4096)];
        let mut p = plan(ios.clone(), false, 10 << 20);
        p.place(4096, 3 << 20);
        let o: Vec<u64> = p.ios.iter().map(|i| i.offset).collect();
        assert_eq!(o, [4096, 4096 + (1 << 20), 4096 + (1 << 20) - 4096]);
        assert_eq!(p.facts.remapped_ios, 1);
        let mut p = plan(ios, true, 10 << 20);
        p.place(0, 5 << 20);
        let o: Vec<u64> = p.ios.iter().map(|i| i.offset).collect();
        assert_eq!(o, [0, 1 << 19, (5 << 20) - 4096]);
        assert!(p.ios.iter().all(|i| i.offset % 512 == 0));
    }

    #[test]
    fn a_trace_that_fits_is_only_moved_to_the_working_set_start() {
        let mut p = plan(vec![io(0, 8192)], false, 12288);
        p.place(1 << 20, 2 << 20);
        assert_eq!(p.ios[0].offset, (1 << 20) + 8192);
        assert_eq!(p.facts.remapped_ios, 0);
    }
}
