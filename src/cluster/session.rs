//! The MPI side of a multi-rank run (built with the `mpi` feature only): joining the
//! ranks, the start barrier and shared clock origin, sending interval reports to
//! rank 0, and rank 0's non-blocking gather with a deadline. All MPI calls are made
//! from the main thread (the collector's), so MPI is initialised as "funneled".
//!
//! Only the start uses a collective (a non-blocking barrier polled against a
//! deadline, then a broadcast every rank has reached). Interval reports travel as
//! point-to-point messages that rank 0 probes for without blocking, so a rank that
//! dies or hangs is noticed by silence, never waited on forever.

use super::gather::{Gather, Merged};
use super::placement::{self, Place, PlacementError, Split};
use super::vote::{self, Step, Vote};
use super::wire::{Done, IntervalLists, Message, RankExtras, RankReport, Summary, WorkloadOps};
use super::ClusterError;
use crate::plan::model::{RunSpec, TargetSpec};
use crate::result::{EndReason, Interval, RunResult};
use crate::stats::histogram::LatencyHistogram;
use crate::stats::snapshot::DirStats;
use crate::stats::{dir_totals, op_totals};
use mpi::environment::Universe;
use mpi::point_to_point::MatchedReceiveVec;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const TAG_HELLO: i32 = 11;
const TAG_REPORT: i32 = 12;
const TAG_HOSTS: i32 = 13;
const TAG_VOTE: i32 = 14;
const TAG_DECIDE: i32 = 15;
const TAG_RESULT: i32 = 16;
const TAG_STOP: i32 = 17;
/// How long ranks may take to reach the start of a run together.
const START_DEADLINE: Duration = Duration::from_secs(120);
/// After Ctrl-C or mpirun's SIGTERM (sent when a rank dies), how long from the
/// signal rank 0 waits for the others before writing what it has: mpirun kills it
/// 1 s after the SIGTERM, and on a loaded two-core host merging and writing took up
/// to 0.5 s more (at 500 ms the result was written 53 ms before the SIGKILL, or
/// not at all). Ranks that were told to stop report within a few ms unloaded.
const INTERRUPTED_WAIT: Duration = Duration::from_millis(300);
const VERSION: &str = env!("CARGO_PKG_VERSION");

struct Session {
    world: SimpleCommunicator,
    place: Place,
    hosts: Vec<String>,
    split: Split,
    /// The plan's figures before division: rate and streams of all ranks together.
    requested_iops: f64,
    streams: u64,
    /// The current run's allowed silence (2 intervals + 10 s).
    patience_s: f64,
    /// Runs started so far.
    runs_started: u64,
    run: Option<RunState>,
    /// A lost rank or a failed start: later runs are refused and the exit aborts.
    fault: Option<String>,
    // Dropped last: finalizes MPI.
    _universe: Universe,
}

struct RunState {
    /// Runs started so far in this process, this one included (the same on every
    /// rank): tells a stop meant for this run from a late one for an earlier run.
    seq: u64,
    origin_ns: u64,
    reports: u64,
    gather: Option<Gather>,
    error: Option<String>,
    /// Rank 0 has told the others to stop.
    stop_sent: bool,
}

impl RunState {
    fn now_s(&self) -> f64 {
        crate::clock::now_ns().saturating_sub(self.origin_ns) as f64 / 1e9
    }
}

thread_local! {
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

fn with<R>(f: impl FnOnce(&mut Session) -> R) -> Option<R> {
    SESSION.with(|s| s.borrow_mut().as_mut().map(f))
}

pub fn init(split: Split) -> Result<(), ClusterError> {
    let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
        .ok_or_else(|| ClusterError::Mpi("MPI is already initialised".into()))?;
    let world = universe.world();
    let rank = world.rank() as u32;
    let size = world.size() as u32;
    let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
    let mut hosts = vec![host.clone()];
    let mut fault = None;
    if rank == 0 {
        let mut differ = Vec::new();
        for r in 1..size {
            let (bytes, _) = world
                .process_at_rank(r as i32)
                .receive_vec_with_tag::<u8>(TAG_HELLO);
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let (ver, h) = text.split_once('\n').unwrap_or((&text, "?"));
            if ver != VERSION {
                differ.push(format!(
                    "rank {r} on host {h} runs ioscope {ver}, rank 0 runs {VERSION}"
                ));
            }
            hosts.push(h.to_string());
        }
        if !differ.is_empty() {
            fault = Some(differ.join("; "));
        }
        // Every rank learns every rank's host: placing host definitions needs them.
        let list = hosts.join("\n");
        for r in 1..size {
            world
                .process_at_rank(r as i32)
                .send_with_tag(list.as_bytes(), TAG_HOSTS);
        }
    } else {
        let hello = format!("{VERSION}\n{host}");
        world
            .process_at_rank(0)
            .send_with_tag(hello.as_bytes(), TAG_HELLO);
        let (bytes, _) = world
            .process_at_rank(0)
            .receive_vec_with_tag::<u8>(TAG_HOSTS);
        hosts = String::from_utf8_lossy(&bytes)
            .split('\n')
            .map(str::to_string)
            .collect();
        silence_stdout();
    }
    let err = fault.clone();
    super::JOINED.store(true, Ordering::Relaxed);
    SESSION.with(|s| {
        *s.borrow_mut() = Some(Session {
            world,
            place: Place { rank, size, host },
            hosts,
            split,
            requested_iops: 0.0,
            streams: 0,
            patience_s: 0.0,
            runs_started: 0,
            run: None,
            fault,
            _universe: universe,
        })
    });
    match err {
        Some(e) => Err(ClusterError::Mismatch(e)),
        None => Ok(()),
    }
}

/// Ranks other than 0 print nothing: rank 0 prints the merged lines.
fn silence_stdout() {
    use std::os::fd::AsRawFd;
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        // SAFETY: dup2 onto stdout with a descriptor we own; `null` closes its copy.
        unsafe { libc::dup2(null.as_raw_fd(), 1) };
    }
}

pub fn active() -> bool {
    with(|_| ()).is_some()
}

pub fn rank() -> u32 {
    with(|s| s.place.rank).unwrap_or(0)
}

pub fn is_writer() -> bool {
    with(|s| s.place.rank == 0).unwrap_or(true)
}

pub fn localize(
    run: &RunSpec,
    specs: &[TargetSpec],
) -> Result<Option<(RunSpec, Vec<TargetSpec>)>, PlacementError> {
    with(|s| {
        s.requested_iops = run.requested_iops();
        // Streams of all ranks together: each rank's share, as it works it out.
        let mut streams = 0;
        for rank in 0..s.place.size {
            let place = Place {
                rank,
                ..s.place.clone()
            };
            let (r, _) = placement::localize(run, specs, &place, s.split, &s.hosts)?;
            streams += r.total_streams();
        }
        s.streams = streams;
        placement::localize(run, specs, &s.place, s.split, &s.hosts).map(Some)
    })
    .unwrap_or(Ok(None))
}

/// Rank 0 collects every rank's vote and hands out its decision: the shared origin
/// (its Unix time a little ahead) to go, or why not. Point-to-point messages polled
/// against a deadline, so a rank that never votes is an error, not a hang.
fn poll_vote(s: &mut Session, step: Step, mine: Vote) -> Result<u64, ClusterError> {
    let deadline = Instant::now() + START_DEADLINE;
    let late = |s: &mut Session, who: String| {
        let e = ClusterError::Late {
            who,
            step,
            deadline_s: START_DEADLINE.as_secs(),
        };
        s.fault = Some(e.to_string());
        Err(e)
    };
    if s.place.rank != 0 {
        let root = s.world.process_at_rank(0);
        root.send_with_tag(&mine.encode()[..], TAG_VOTE);
        loop {
            if let Some(probed) = root.immediate_matched_probe_with_tag(TAG_DECIDE) {
                let (bytes, _) = probed.matched_receive_vec::<u8>();
                return Ok(vote::decode_decision(&bytes)?);
            }
            if Instant::now() > deadline {
                return late(s, "rank 0".into());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let size = s.place.size as usize;
    let mut votes: Vec<Option<Vote>> = vec![None; size];
    votes[0] = Some(mine);
    while votes.iter().any(Option::is_none) {
        while let Some(probed) = s
            .world
            .any_process()
            .immediate_matched_probe_with_tag(TAG_VOTE)
        {
            let (bytes, status) = probed.matched_receive_vec::<u8>();
            let v = Vote::decode(&bytes).unwrap_or(Vote::Refuse("sent a malformed vote".into()));
            if let Some(slot) = votes.get_mut(status.source_rank() as usize) {
                *slot = Some(v);
            }
        }
        if Instant::now() > deadline {
            let missing: Vec<String> = (0..size)
                .filter(|&r| votes[r].is_none())
                .map(|r| s.name(r as u32))
                .collect();
            return late(s, missing.join(", "));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let votes: Vec<Vote> = votes.into_iter().flatten().collect();
    let decision = vote::decide(&votes, |r| s.name(r))
        .map(|()| super::unix_ns() + 100_000_000)
        .map_err(|e| vote::Stop {
            step,
            why: e.to_string(),
        });
    for r in 1..size {
        s.world
            .process_at_rank(r as i32)
            .send_with_tag(&vote::encode_decision(&decision)[..], TAG_DECIDE);
    }
    Ok(decision.map_err(vote::DecisionError::from)?)
}

impl Session {
    fn name(&self, r: u32) -> String {
        let host = self.hosts.get(r as usize).map_or("?", |h| h.as_str());
        format!("rank {r} on host {host}")
    }

    /// The group whose ranks must run one engine: the host definition played.
    fn group(&self, run: &RunSpec) -> String {
        placement::host_def_of(run, &self.hosts, self.place.rank).unwrap_or_default()
    }
}

pub fn agree(failure: Option<String>) -> Result<(), ClusterError> {
    with(|s| {
        if let Some(f) = &s.fault {
            return Err(ClusterError::Halted { fault: f.clone() });
        }
        let mine = match failure {
            Some(why) => Vote::Refuse(why),
            None => Vote::Ready {
                group: String::new(),
                engine: String::new(),
            },
        };
        poll_vote(s, Step::Checks, mine).map(|_| ())
    })
    .unwrap_or(Ok(()))
}

pub fn refuse_start(why: String) {
    with(|s| {
        if s.fault.is_none() {
            let _ = poll_vote(s, Step::Start, Vote::Refuse(why));
        }
    });
}

pub fn start_ns(run: &RunSpec, engine: &str, default_ns: u64) -> Result<u64, ClusterError> {
    with(|s| {
        if let Some(f) = &s.fault {
            return Err(ClusterError::NotStarting { fault: f.clone() });
        }
        if crate::clock::is_virtual() {
            return Err(ClusterError::VirtualTime);
        }
        // Everyone ready, with one engine per group: rank 0 answers with one origin,
        // which each rank maps onto its own monotonic clock.
        let mine = Vote::Ready {
            group: s.group(run),
            engine: engine.into(),
        };
        let origin_unix_ns = poll_vote(s, Step::Start, mine)?;
        let ahead_ns = origin_unix_ns.saturating_sub(super::unix_ns());
        let origin_ns = crate::clock::now_ns() + ahead_ns;
        super::FIRST_IO_UNIX_NS.store(0, Ordering::Relaxed);
        s.patience_s = 2.0 * run.interval_ns as f64 / 1e9 + 10.0;
        let gather = (s.place.rank == 0).then(|| {
            let mut g = Gather::new(&s.hosts, run.interval_ns as f64 / 1e9, s.requested_iops);
            g.set_host_defs(|r| placement::host_def_of(run, &s.hosts, r));
            g
        });
        s.runs_started += 1;
        s.run = Some(RunState {
            seq: s.runs_started,
            origin_ns,
            reports: 0,
            gather,
            error: None,
            stop_sent: false,
        });
        Ok(origin_ns)
    })
    .unwrap_or(Ok(default_ns))
}

pub fn tap(
    iv: &Interval,
    dirs: &DirStats,
    lag: Option<&LatencyHistogram>,
    on_interval: &mut dyn FnMut(&Merged),
) -> bool {
    let merged = with(|s| {
        let rank = s.place.rank;
        let run = s.run.as_mut()?;
        run.reports += 1;
        let rep = RankReport {
            rank,
            index: iv.index,
            warmup: iv.warmup,
            t_s: iv.t_s,
            ops: dirs.clone(),
            lag: lag.cloned(),
            cpu: iv.cpu.clone(),
            first_io_unix_ns: super::first_io_unix_ns(),
            lists: IntervalLists {
                connections: iv.connections.clone(),
                paths: iv.paths.clone(),
                events: iv.events.clone(),
            },
        };
        let now = run.now_s();
        match run.gather.as_mut() {
            Some(g) => Some(g.add(rep, now)),
            None => {
                s.world
                    .process_at_rank(0)
                    .send_with_tag(&rep.encode()[..], TAG_REPORT);
                Some(Vec::new())
            }
        }
    });
    match merged {
        Some(Some(rows)) => {
            rows.iter().for_each(&mut *on_interval);
            true
        }
        _ => false,
    }
}

/// Rank 0: takes every waiting message without blocking; returns merged rows.
fn drain(s: &mut Session) -> Vec<Merged> {
    let mut rows = Vec::new();
    let Some(run) = s.run.as_mut() else {
        return rows;
    };
    let Some(g) = run.gather.as_mut() else {
        return rows;
    };
    while let Some(probed) = s
        .world
        .any_process()
        .immediate_matched_probe_with_tag(TAG_REPORT)
    {
        let (bytes, status) = probed.matched_receive_vec::<u8>();
        let now = crate::clock::now_ns().saturating_sub(run.origin_ns) as f64 / 1e9;
        match Message::decode(&bytes) {
            Some(Message::Interval(rep)) => rows.extend(g.add(*rep, now)),
            Some(Message::Done(d)) => rows.extend(g.done(d, now)),
            Some(Message::Summary(sum)) => g.summary(*sum, now),
            None => {
                let r = status.source_rank() as u32;
                run.error
                    .get_or_insert_with(|| format!("{} sent a malformed report", g.name(r)));
            }
        }
    }
    if run.error.is_none() {
        let now = crate::clock::now_ns().saturating_sub(run.origin_ns) as f64 / 1e9;
        let late = g.overdue(now);
        if !late.is_empty() {
            run.error = Some(lost_message(g, &late, g.patience_s()));
        }
    }
    rows
}

fn lost_message(g: &Gather, ranks: &[u32], silent_s: f64) -> String {
    let names: Vec<String> = ranks.iter().map(|&r| g.name(r)).collect();
    format!(
        "{} stopped reporting (no interval report for {silent_s:.0} s): lost or hung; the merged intervals so far are kept",
        names.join(", ")
    )
}

pub fn poll(on_interval: &mut dyn FnMut(&Merged)) -> bool {
    let out = with(|s| {
        let rows = drain(s);
        let stop = s.run.as_ref().is_some_and(|r| r.error.is_some()) || stop_received(s);
        (rows, stop)
    });
    match out {
        Some((rows, stop)) => {
            rows.iter().for_each(&mut *on_interval);
            stop
        }
        None => false,
    }
}

/// Ranks other than 0: whether rank 0 has said to stop this run (stops meant for
/// an earlier run are taken and dropped).
fn stop_received(s: &mut Session) -> bool {
    let Some(run) = s.run.as_ref() else {
        return false;
    };
    if run.gather.is_some() {
        return false;
    }
    let root = s.world.process_at_rank(0);
    let mut stop = false;
    while let Some(probed) = root.immediate_matched_probe_with_tag(TAG_STOP) {
        let (bytes, _) = probed.matched_receive_vec::<u8>();
        let seq = bytes.try_into().map(u64::from_le_bytes).unwrap_or(0);
        stop |= seq == run.seq;
    }
    stop
}

pub fn stop_all() {
    with(|s| {
        let size = s.place.size;
        let Some(run) = s.run.as_mut() else { return };
        if run.gather.is_none() || run.stop_sent {
            return;
        }
        run.stop_sent = true;
        let seq = run.seq.to_le_bytes();
        for r in 1..size {
            s.world
                .process_at_rank(r as i32)
                .send_with_tag(&seq[..], TAG_STOP);
        }
    });
}

pub fn finish_run(
    result: &mut RunResult,
    workloads: Vec<WorkloadOps>,
    target_uris: &[String],
    on_interval: &mut dyn FnMut(&Merged),
) -> Option<String> {
    let end_s = result.intervals.last().map_or(0.0, |iv| iv.t_s);
    let reqs: Vec<_> = target_uris
        .iter()
        .map(|u| crate::sysinfo::TargetInfoRequest::new(u.clone()))
        .collect();
    let extras = RankExtras {
        cpu: result.cpu.clone(),
        env: serde_json::to_value(crate::sysinfo::capture(&reqs)).ok(),
        engine: result.engine.clone(),
        target: result.target.clone(),
        connections: result.connections.clone(),
        paths: result.paths.clone(),
        events: result.events.clone(),
    };
    let done = |rank, reports| Done {
        rank,
        reports,
        end_s,
        first_io_unix_ns: super::first_io_unix_ns(),
    };
    let root_rows = with(|s| {
        let rank = s.place.rank;
        let run = s.run.as_mut()?;
        let d = done(rank, run.reports);
        let now = run.now_s();
        let sum = Summary {
            rank,
            workloads,
            extras,
        };
        match run.gather.as_mut() {
            Some(g) => {
                g.summary(sum, now);
                let rows = g.done(d, now);
                Some(Some(rows))
            }
            None => {
                // The summary first: MPI keeps the order of two messages between
                // two ranks, so rank 0 has it when it sees the rank done.
                let root = s.world.process_at_rank(0);
                root.send_with_tag(&sum.encode()[..], TAG_REPORT);
                root.send_with_tag(&d.encode()[..], TAG_REPORT);
                s.run = None;
                Some(None)
            }
        }
    })
    .flatten();
    let rows: Vec<Merged> = match root_rows? {
        Some(rows) => rows,
        None => {
            // Every rank goes on from the same merged result, so decisions taken from
            // it (steady state, curve points, SLA search) are the same on all ranks.
            receive_merged(result);
            return None;
        }
    };
    rows.iter().for_each(&mut *on_interval);
    // Rank 0: wait for every rank (or give up on the lost ones), showing merged rows.
    let since = Instant::now();
    loop {
        let step = with(|s| {
            let rows = drain(s);
            let run = s.run.as_mut().expect("run state on rank 0");
            let g = run.gather.as_ref().expect("gather on rank 0");
            if run.error.is_none() && result.interrupted && waited_enough(since) {
                run.error = unfinished_error(g);
            }
            (rows, run.error.is_some() || g.complete())
        });
        let (rows, end) = step?;
        rows.iter().for_each(&mut *on_interval);
        if end {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    with(|s| {
        let run = s.run.take().expect("run state on rank 0");
        let g = run.gather.expect("gather on rank 0");
        merge_into(result, &g, s, run.error.clone());
        if let Some(e) = &run.error {
            s.fault = Some(e.clone());
        }
        // The ranks that finished wait for it (a lost one would never receive).
        let merged = serde_json::to_vec(&*result).unwrap_or_default();
        for r in g.finished().into_iter().filter(|&r| r != 0) {
            s.world
                .process_at_rank(r as i32)
                .send_with_tag(&merged[..], TAG_RESULT);
        }
        run.error
    })
    .flatten()
}

/// After an interrupt, whether rank 0 has waited long enough for the others. Counted
/// from the signal: the time rank 0 took to stop its own workers was the others'
/// time to stop theirs, and mpirun's SIGKILL follows its SIGTERM by 1 s (Open MPI
/// 4's odls_base_sigkill_timeout). `since`: when rank 0 began to wait.
fn waited_enough(since: Instant) -> bool {
    crate::interrupt::since().unwrap_or_else(|| since.elapsed()) > INTERRUPTED_WAIT
}

/// The error of a run stopped while some ranks had not finished, if any had not.
fn unfinished_error(g: &Gather) -> Option<String> {
    let missing = g.unfinished();
    let names: Vec<String> = missing.iter().map(|&r| g.name(r)).collect();
    (!missing.is_empty()).then(|| {
        format!(
            "stopped (Ctrl-C, or mpirun after a rank died) while {} had not finished; the merged intervals so far are kept",
            names.join(", ")
        )
    })
}

/// Ranks other than 0: takes rank 0's merged result in place of this rank's own.
fn receive_merged(result: &mut RunResult) {
    with(|s| {
        let deadline = Instant::now() + START_DEADLINE + Duration::from_secs_f64(s.patience_s);
        let root = s.world.process_at_rank(0);
        loop {
            if let Some(probed) = root.immediate_matched_probe_with_tag(TAG_RESULT) {
                let (bytes, _) = probed.matched_receive_vec::<u8>();
                match serde_json::from_slice::<RunResult>(&bytes) {
                    Ok(merged) => *result = merged,
                    Err(e) => s.fault = Some(format!("rank 0 sent an unreadable result: {e}")),
                }
                return;
            }
            if Instant::now() > deadline {
                s.fault = Some("rank 0 did not send the merged result".into());
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    });
}

/// Rank 0's own result becomes the merged one.
fn merge_into(result: &mut RunResult, g: &Gather, s: &Session, error: Option<String>) {
    let (start, end) = g.measured_span_s();
    let dur_s = (end - start).max(0.0);
    let mut all = g.totals[0].clone();
    all += &g.totals[1];
    // Rank 0's own threads would no longer add up to the merged totals.
    result.threads.clear();
    result.totals.all = op_totals(&all, dur_s, true);
    result.totals.read = dir_totals(&g.totals[0], dur_s);
    result.totals.write = dir_totals(&g.totals[1], dur_s);
    result.totals.queue_depth = if dur_s > 0.0 {
        all.service_sum_ns() as f64 / (dur_s * 1e9)
    } else {
        0.0
    };
    result.duration_s = dur_s;
    result.streams = s.streams;
    result.intervals = g.intervals.clone();
    result.workloads = g.workload_results(dur_s);
    result.target = g.targets();
    (result.connections, result.paths, result.events) = g.run_lists();
    if let Some(sc) = result.schedule.as_mut() {
        let lag = g.lag.clone().unwrap_or_default();
        sc.requested_iops = s.requested_iops;
        sc.achieved_iops = if dur_s > 0.0 {
            (all.ios + all.errors) as f64 / dur_s
        } else {
            0.0
        };
        sc.achieved_pct = 100.0 * sc.achieved_iops / s.requested_iops.max(1e-9);
        sc.lag_us = lag.summary_us(false);
        sc.max_backlog_ios = lag.max_ns() as f64 / 1e9 * s.requested_iops;
    }
    result.ranks = g.rank_results();
    if error.is_some() {
        result.end_reason = EndReason::Error;
    }
    result.mpi = Some(g.mpi_run(s.split.name(), error));
}

pub fn exit(code: i32) -> ! {
    let session = SESSION.with(|s| s.borrow_mut().take());
    if let Some(s) = session {
        if s.fault.is_some() {
            // A collective (finalize) with a lost rank would never end.
            s.world.abort(code.max(1));
        }
        drop(s);
    }
    std::process::exit(code)
}
