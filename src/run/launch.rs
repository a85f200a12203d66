//! Launching a run's workers: the streams are built (region, budget, schedule,
//! connection), spread round-robin over the workers, and each worker thread starts
//! with its own engine at a common start time.

use super::clock::IntervalClock;
use super::data::TargetState;
use super::engine_choice::EngineChoice;
use super::extension::{self, ShapeExtras, StreamExtras};
use super::groups::Group;
use super::resolved::Resolved;
use super::setup::allowed_cpus;
use super::stream::{Schedule, Stream, WorkloadShape};
use super::worker::{self, WorkerSetup};
use super::{data, pacing, RunError, RunOptions};
use crate::clock::now_ns;
use crate::engine::multipath::MultipathSettings;
use crate::engine::reconnect::Reconnect;
use crate::engine::{EngineError, Targets};
use crate::plan::engine_opts::EngineOptions;
use crate::plan::model::{AccessPattern, Arrival, EngineKind, Rate, RunSpec, SeqLayout};
use crate::plan::paths::DEFAULT_PATH_TIMEOUT_NS;
use crate::plan::settings::declared::RECONNECT_WINDOW;
use crate::stats::snapshot::{Snapshot, WorkloadStats};
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};

/// Builds every stream of the run, with its region, budget and schedule.
pub(super) fn build_streams(run: &RunSpec, resolved: &[Resolved]) -> Vec<Stream> {
    let mut out = Vec::new();
    let (mix, lead) = share_mix(run);
    for (wi, w) in run.stream_owners() {
        let r = &resolved[wi];
        let n = w.streams as u64;
        // diskspd's -si: the workload's streams share one position.
        let shared = (matches!(w.pattern, AccessPattern::Sequential)
            && w.seq_layout == SeqLayout::Shared)
            .then(|| Arc::new(std::sync::atomic::AtomicU64::new(0)));
        // cpuio: after each burn the stream idles so the burn is its load.
        let (think_batch, think_ns) = match (run.engine_of(w), run.engine_opts_of(w).cpu) {
            (EngineKind::Cpuio, Some(burn)) => (1, burn.idle_ns()),
            _ => (w.pauses.think_batch().unwrap_or(0), w.pauses.think_ns),
        };
        for i in 0..n {
            let seed = run
                .seed
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .wrapping_add(((wi as u64) << 32) | i);
            let mut rng = crate::rng::Rng::new(seed);
            let place = place_of(w, r, i);
            // A stream left without a file of a set's sequential pass issues
            // nothing (`own_files_of`).
            let bytes_left = match place.len {
                0 => 0,
                _ => bytes_of(run, w, in_files(r, &place)),
            };
            // fio's io_size passes (0: a pass is the working set).
            let pass = Some(w.pauses.pass_bytes).filter(|&b| b > 0);
            let schedule = schedule_of(w, n, &mut rng);
            out.push(Stream {
                workload: wi as u32,
                id: out.len() as u32,
                rng,
                region_start: place.start,
                region_len: place.len,
                pos: place.pos,
                stride_bytes: place.stride_bytes,
                shared_pos: shared.clone(),
                qd: w.qd,
                inflight: 0,
                bytes_left,
                ios_left: Some(w.pauses.stop_after_ios)
                    .filter(|&n| n > 0)
                    .unwrap_or(u64::MAX),
                schedule,
                mix: if Some(wi) == lead { mix.clone() } else { None },
                start_delay_ns: w.pauses.start_delay_ns,
                stop_at_ns: w.pauses.stop_ns,
                think_batch,
                think_ns,
                think_io_ns: w.pauses.think_io_ns,
                io_since_ns: 0,
                since_think: 0,
                thinking: false,
                pair: None,
                zone_start: place.start,
                zone_done_bytes: 0,
                shift_bytes: i * w.offset_increment_bytes,
                pass_bytes: pass.unwrap_or(u64::MAX),
                pass_left: pass.unwrap_or(u64::MAX),
                seq_issued: [0; crate::plan::model::Op::COUNT],
                extras: StreamExtras::of(w, r, seed, schedule.is_some()),
                files: None,
                replay: None,
                random_map: None,
                plain: false,
            });
        }
    }
    out
}

/// Where stream `i` of a workload walks: its region, its first position, its step
/// over the other streams' blocks and its share of a pass.
struct Place {
    start: u64,
    len: u64,
    pos: u64,
    stride_bytes: u64,
    per_stream: u64,
}

/// Stream `i`'s [`Place`] in the working set `r` of `w`, by its sequential layout.
fn place_of(w: &crate::plan::Workload, r: &Resolved, i: u64) -> Place {
    let n = w.streams as u64;
    let sequential = matches!(w.pattern, AccessPattern::Sequential);
    // Interleaved streams step over each other's blocks, in units of the largest
    // block size; they need one such block each.
    let max_bs = w.bs.max_bytes();
    let layout = if sequential {
        w.seq_layout
    } else {
        SeqLayout::Regions
    };
    let stride = layout == SeqLayout::Stride && n > 1 && n.saturating_mul(max_bs) <= r.ws_len;
    // Sequential streams own equal, block-aligned slices when the working set is
    // big enough; otherwise they all walk the whole set. fio's clones each walk the
    // zones from the start, as one stream does.
    let own_regions = w.region_slice(r.ws_len);
    // On a file set a sequential pass is split in whole files, however small.
    let own_files = r.file_bytes > 0
        && sequential
        && layout == SeqLayout::Regions
        && w.zones.is_none()
        && w.offset_increment_bytes == 0
        && n > 1;
    let slice = own_regions.unwrap_or(0);
    let inc = w.offset_increment_bytes;
    let whole = |pos: u64, per_stream: u64| Place {
        start: r.ws_start,
        len: r.ws_len,
        pos,
        stride_bytes: 0,
        per_stream,
    };
    match layout {
        // diskspd's -s (-T): the whole set each, starting i × increment in.
        SeqLayout::Whole => whole(r.ws_start + (i * inc) % r.ws_len.max(1), r.ws_len),
        // offset_increment: each stream its whole working set, further on.
        _ if inc > 0 => Place {
            start: r.ws_start + i * inc,
            ..whole(r.ws_start + i * inc, r.ws_len)
        },
        _ if own_files => own_files_of(r, i, n),
        _ if own_regions.is_some() => Place {
            start: r.ws_start + i * slice,
            len: slice,
            pos: r.ws_start + i * slice,
            stride_bytes: 0,
            per_stream: slice,
        },
        _ if stride => Place {
            start: r.ws_start + i * max_bs,
            len: r.ws_len - i * max_bs,
            pos: r.ws_start + i * max_bs,
            stride_bytes: n * max_bs,
            per_stream: r.ws_len / n,
        },
        _ => whole(r.ws_start, r.ws_len / n),
    }
}

/// Stream `i` of `n`'s own whole files of a file set's working set in a sequential
/// pass: the files dealt in runs as even as they go (the first streams one fewer),
/// so each file is written once and whole. With more streams than files, some
/// streams have none and issue nothing: vdbench's format threads share
/// one list of files and a thread that finds none left stops, and fio gives each
/// job its own files (its threads on one named file each walk it whole, which is
/// ioscope's `seq_layout = "whole"`, not a split pass).
fn own_files_of(r: &Resolved, i: u64, n: u64) -> Place {
    let files = r.ws_len / r.file_bytes;
    let first = i * files / n;
    let count = (i + 1) * files / n - first;
    let start = r.ws_start + first * r.file_bytes;
    let len = count * r.file_bytes;
    Place {
        start,
        len,
        pos: start,
        stride_bytes: 0,
        per_stream: len,
    }
}

/// Gives each stream of a trace workload its cursor: its first intended time is
/// the trace's first I/O (after the workload's start delay), and the trace's
/// end, not a byte budget, ends it.
fn attach_replays(replays: &super::replay::Replays, streams: &mut [Stream]) {
    for s in streams {
        let Some(c) = replays.cursor(s.workload as usize) else {
            continue;
        };
        s.bytes_left = u64::MAX;
        if let Some(sched) = s.schedule.as_mut() {
            sched.next_due_ns = (s.start_delay_ns + c.next_t_ns().unwrap_or(0)) as f64;
        }
        s.replay = Some(c);
    }
}

/// A stream's share of a pass on a set whose files differ in length: the same
/// share of its region's files' own bytes (not of their strides) — its own files'
/// lengths when a sequential pass gives each stream its own.
fn in_files(r: &Resolved, place: &Place) -> u64 {
    let Some(lens) = r
        .file_lens
        .as_deref()
        .filter(|_| r.file_bytes > 0 && place.len > 0)
    else {
        return place.per_stream;
    };
    let first = (place.start / r.file_bytes) as usize;
    let files = (place.len / r.file_bytes) as usize;
    let bytes: u64 = lens.iter().skip(first).take(files).sum();
    (u128::from(place.per_stream) * u128::from(bytes) / u128::from(place.len)) as u64
}

/// The bytes a stream of `w` moves before it is done: its passes over its share
/// (`per_stream`) or over `pass_bytes`; unbounded when time-based.
fn bytes_of(run: &RunSpec, w: &crate::plan::Workload, per_stream: u64) -> u64 {
    match run.passes_of(w) {
        // An order of its own ends the stream, past one pass.
        _ if extension::ends_by_itself(w) => u64::MAX,
        Some(p) if w.pauses.pass_bytes > 0 => p.saturating_mul(w.pauses.pass_bytes),
        Some(p) => (p.saturating_mul(per_stream)).max(w.bs.min_bytes()),
        None => u64::MAX,
    }
}

/// An open-loop stream's schedule: one of `n` streams sharing the workload's rate,
/// its first arrival spread over one gap so streams do not fire in lockstep.
fn schedule_of(w: &crate::plan::Workload, n: u64, rng: &mut crate::rng::Rng) -> Option<Schedule> {
    let Rate::Iops(total) = w.rate else {
        return None;
    };
    let gap_ns = 1e9 * n as f64 / total;
    Some(Schedule {
        gap_ns,
        exponential: w.arrival == Arrival::Exponential,
        next_due_ns: w.pauses.start_delay_ns as f64 + rng.unit_f64() * gap_ns,
    })
}

/// A share mix: cumulative weights (per million of the shares) by workload, and the
/// first workload with a share, whose streams issue for the mix.
#[allow(clippy::type_complexity)]
fn share_mix(run: &RunSpec) -> (Option<Arc<[(u32, u32)]>>, Option<usize>) {
    let shared: Vec<(usize, f64)> = run
        .workloads
        .iter()
        .enumerate()
        .filter_map(|(i, w)| w.share_pct.map(|p| (i, p)))
        .collect();
    let mix = (!shared.is_empty()).then(|| {
        let total: f64 = shared.iter().map(|&(_, p)| p).sum();
        let mut acc = 0u32;
        shared
            .iter()
            .map(|&(i, p)| {
                acc += ((p / total) * 1_000_000.0).round().max(1.0) as u32;
                (acc, i as u32)
            })
            .collect()
    });
    (mix, shared.first().map(|&(i, _)| i))
}

/// A run's workers, started, and what the collector needs to follow them.
pub(super) struct Launched {
    pub handles: Vec<std::thread::JoinHandle<()>>,
    pub rx: mpsc::Receiver<Snapshot>,
    /// Per worker: where emptied stats go back for reuse.
    pub recycle: Vec<mpsc::Sender<Vec<WorkloadStats>>>,
    pub stop: Arc<AtomicBool>,
    pub error_stop: Arc<AtomicBool>,
    pub clock: IntervalClock,
    /// Monotonic ns at which measured time ends (`None` = pass-limited).
    pub end_at: Option<u64>,
    pub nworkers: usize,
    /// Connections over all targets (targets × connections per target).
    pub nconns: usize,
    /// Why the worker count is what it is, when connections or worker groups
    /// decided it.
    pub workers_reason: Option<String>,
    /// Which workers ran which workloads.
    pub placed: Placed,
    /// On virtual time with a steady-state stop: the collector's own place among
    /// the clock's participants, so it can hold time at each interval boundary until
    /// it has judged the interval (see `collector::hold_at_boundary`).
    pub judge: Option<crate::clock::virtual_time::Participant<'static>>,
    /// Each workload's extras, for what the optional features count in the result.
    pub extras: Vec<ShapeExtras>,
}

/// Each workload's shape for the workers, with its extras (returned too, for what
/// the optional features count in the result).
fn shapes_of(
    run: &RunSpec,
    resolved: &[Resolved],
    targets: &Targets,
) -> Result<(Vec<WorkloadShape>, Vec<ShapeExtras>), RunError> {
    let sizes: Vec<(String, u64)> = targets
        .iter()
        .map(|t| (t.uri.clone(), t.size_bytes))
        .collect();
    let extras = extension::shape_extras(run, resolved, &sizes)?;
    let shapes = run
        .workloads
        .iter()
        .zip(resolved)
        .zip(&extras)
        .map(|((w, r), extras)| {
            let shape = WorkloadShape {
                extras: extras.clone(),
                ..WorkloadShape::new(w, r.target, r.ws_start, r.ws_len)
            };
            match r.file_bytes {
                0 => shape,
                b => shape.with_files(w, b, r.file_lens.as_deref()),
            }
        })
        .collect();
    Ok((shapes, extras))
}

/// Builds the streams, spreads them over workers and starts the worker threads,
/// each with its own engine (its group's), at a common start time.
pub(super) fn launch(
    run: &RunSpec,
    opts: &RunOptions,
    targets: &Targets,
    resolved: &[Resolved],
    replays: &super::replay::Replays,
    groups: &[(Group, EngineChoice)],
    verify_states: &[Option<TargetState>],
) -> Result<Launched, RunError> {
    let (plans, workers_reason) = place(run, resolved, replays, groups, opts);
    let nworkers = plans.len();
    let placed = Placed::of(&plans, run.workloads.len());
    let (shapes, extras) = shapes_of(run, resolved, targets)?;
    let (stop, error_stop): (Arc<AtomicBool>, Arc<AtomicBool>) = Default::default();
    let (tx, rx) = mpsc::channel::<Snapshot>();
    // The workers get the start once all of them have their engines (start_gate);
    // until then their clock counts from 0.
    let gate = super::start_gate::StartGate::new();
    let unset = IntervalClock::unstarted(run);
    let run_ns = run.duration_ns.map(|d| run.warmup_ns + d);
    let multipath = multipath_settings(targets, opts);
    let ramps = own_ramps(run);
    let data_opts = opts.data.per_workload(run);
    // One seed for a dedup working set the workloads share (fio's dedupe_global).
    let set_seed = run.seed ^ now_ns();
    let (virtual_time, judge, mut participants) = virtual_places(run, nworkers);
    let mut handles = Vec::with_capacity(nworkers);
    // Emptied per-interval stats go back to their worker for reuse, so a long run
    // allocates no histograms after its first intervals.
    let mut recycle = Vec::with_capacity(nworkers);
    for (wi, plan) in plans.into_iter().enumerate() {
        let (back_tx, back_rx) = mpsc::channel::<Vec<WorkloadStats>>();
        recycle.push(back_tx);
        let wdata = data::WorkerData::new(
            &data_opts,
            opts.data.spec.dedup_unit,
            run.seed ^ 0xda7a ^ ((wi as u64) << 40) ^ now_ns(),
            verify_states_of(groups[plan.group].0.key.engine, verify_states),
            wi as u32,
            data::SetShare {
                workers: nworkers as u64,
                shared_seed: set_seed,
            },
        )
        .map_err(|source| RunError::VerifyState {
            run: run.name.clone(),
            source,
        })?;
        let streams = plan.streams;
        let setup = WorkerSetup {
            flush: super::flush::Flusher::of_run(run, streams.len()),
            data: wdata,
            index: wi,
            cpu: plan.cpu,
            targets: targets.clone(),
            shapes: shapes.clone(),
            streams,
            clock: unset,
            ramps: ramps.clone(),
            end_ns: run_ns,
            start: Some(gate.place()),
            stop: stop.clone(),
            error_stop: error_stop.clone(),
            tx: tx.clone(),
            policy: opts.policy,
            pacer: pacing::Pacer::new(run.pacing),
            recycled: back_rx,
            connections: opts.connections,
            // A multipath engine keeps the deadline per path and re-issues itself.
            io_timeout_ns: opts.io_timeout_ns.filter(|_| multipath.is_none()),
            reconnect: reconnect_schedule(run, opts),
            recorded: replays.sink.clone(),
        };
        let participant = virtual_time.then(|| participants.hand_over());
        let (group, choice) = &groups[plan.group];
        let key = &group.key;
        let engine = (choice.kind, key.uring.clone(), key.prio, key.opts.clone());
        let h = spawn_worker(engine, setup, multipath, participant).map_err(|source| {
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
            gate.open(now_ns());
            RunError::Spawn {
                run: run.name.clone(),
                source,
            }
        })?;
        handles.push(h);
    }
    let (clock, end_at) = common_start(run, groups, &gate, nworkers, unset)?;
    Ok(Launched {
        handles,
        rx,
        recycle,
        stop,
        error_stop,
        clock,
        end_at,
        nworkers,
        nconns: targets.len() * opts.connections as usize,
        workers_reason,
        placed,
        judge: judge.then(|| participants.hand_over()),
        extras,
    })
}

/// On virtual time every worker counts before the first one waits, so none starts
/// ahead of the others: whether the clock is virtual, whether the collector judges a
/// steady-state stop as one more participant, and the places reserved.
fn virtual_places(
    run: &RunSpec,
    nworkers: usize,
) -> (bool, bool, crate::clock::virtual_time::Reservation<'static>) {
    let virtual_time = crate::clock::is_virtual();
    let judge = virtual_time && run.steady_stop.is_some() && !crate::cluster::active();
    let places = if virtual_time {
        nworkers + judge as usize
    } else {
        0
    };
    (virtual_time, judge, crate::clock::VIRTUAL.reserve(places))
}

/// Waits until every worker has its engine, then fixes the common start a little in
/// the future (among MPI ranks: after a barrier, at one origin shared by all,
/// docs/mpi.md) and tells the workers; returns the run's clock and end.
fn common_start(
    run: &RunSpec,
    groups: &[(Group, EngineChoice)],
    gate: &super::start_gate::StartGate,
    nworkers: usize,
    unset: IntervalClock,
) -> Result<(IntervalClock, Option<u64>), RunError> {
    gate.wait_for(nworkers);
    let engine_name = super::engine_choice::combined(groups).name();
    let start = crate::cluster::start_ns(run, &engine_name, now_ns() + 20_000_000);
    let start_ns = match start {
        Ok(t) => t,
        Err(source) => {
            gate.open(now_ns());
            return Err(RunError::Cluster {
                run: run.name.clone(),
                source,
            });
        }
    };
    gate.open(start_ns);
    let clock = IntervalClock { start_ns, ..unset };
    Ok((clock, run.duration_ns.map(|d| start_ns + run.warmup_ns + d)))
}

/// Starts the thread of the worker `setup` describes. It builds its engine (network
/// engines connect and log on), waits for the common start (`start_gate`) so
/// intervals line up and set-up is not measured, then runs its streams on its own
/// `engine` (its group's, with the group's io_uring and engine options).
fn spawn_worker(
    (engine, uring_opts, prio, engine_opts): (
        EngineKind,
        crate::plan::UringOptions,
        Option<crate::plan::priority::IoPriority>,
        EngineOptions,
    ),
    setup: WorkerSetup,
    multipath: Option<MultipathSettings>,
    participant: Option<crate::clock::virtual_time::Participant<'static>>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name(format!("ioscope-w{}", setup.index))
        .spawn(move || {
            // On virtual time this worker moves the clock with the others and lets go
            // of it when it ends, however it ends.
            let _participant = participant;
            // The thread's I/O priority, before its engine exists (an io_uring
            // request without one of its own takes its submitter's).
            if let Some(p) = prio {
                if let Err(e) = set_thread_ioprio(p) {
                    return worker::fail(setup, e.into());
                }
            }
            let used = used_targets(&setup);
            let targets = setup.targets.clone();
            let build = crate::engine::factory::Build {
                kind: engine,
                targets: &targets,
                capacity: setup.streams.iter().map(|s| s.qd as usize).sum(),
                uring: &uring_opts,
                opts: &engine_opts,
                used: &used,
                reconnect: setup.reconnect,
                multipath,
            };
            crate::engine::factory::build(build, worker::Runner(setup));
        })
}

/// ioprio_set(2) on the calling thread (IOPRIO_WHO_PROCESS with its thread id).
fn set_thread_ioprio(p: crate::plan::priority::IoPriority) -> Result<(), EngineError> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    // SAFETY: ioprio_set takes three integers and touches no memory of ours.
    let r = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0 as libc::c_long,
            libc::c_long::from(p.value()),
        )
    };
    if r == 0 {
        return Ok(());
    }
    Err(EngineError::Refused {
        option: "prio",
        what: format!("ioprio_set({p}) on a worker thread"),
        source: std::io::Error::last_os_error(),
    })
}

/// The workloads whose own warm-up outlasts the run's: (ns after the start at which
/// its counting starts, workload), latest first (a worker pops them from the end).
fn own_ramps(run: &RunSpec) -> Vec<(u64, u32)> {
    let mut ramps: Vec<(u64, u32)> = run
        .workloads
        .iter()
        .enumerate()
        .map(|(i, w)| (run.warmup_of(w), i as u32))
        .filter(|&(ns, _)| ns > run.warmup_ns)
        .collect();
    ramps.sort_unstable_by(|a, b| b.cmp(a));
    ramps
}

/// One worker to start: its group, its streams and the CPU it is pinned to.
pub(super) struct WorkerPlan {
    group: usize,
    streams: Vec<Stream>,
    cpu: Option<usize>,
}

/// Where each workload ran: the workers (indices) that ran its streams and their
/// CPUs, for the result.
#[derive(Debug, Clone, Default)]
pub(super) struct Placed {
    /// Per workload: the workers that ran it.
    pub workers: Vec<Vec<usize>>,
    /// Per worker: the CPU it was pinned to.
    pub cpus: Vec<Option<usize>>,
}

impl Placed {
    fn of(plans: &[WorkerPlan], nworkloads: usize) -> Self {
        let mut workers = vec![Vec::new(); nworkloads];
        for (wi, p) in plans.iter().enumerate() {
            for s in &p.streams {
                for w in s.workloads() {
                    let list: &mut Vec<usize> = &mut workers[w as usize];
                    if list.last() != Some(&wi) {
                        list.push(wi);
                    }
                }
            }
        }
        Placed {
            workers,
            cpus: plans.iter().map(|p| p.cpu).collect(),
        }
    }
}

/// Builds the streams and deals them to the workers, group by group: round-robin
/// over the group's workers, or by connection ([`super::spread`]). A run of one group
/// has the workers it would have without groups. Returns why the worker count is
/// what it is when that needs saying.
fn place(
    run: &RunSpec,
    resolved: &[Resolved],
    replays: &super::replay::Replays,
    groups: &[(Group, EngineChoice)],
    opts: &RunOptions,
) -> (Vec<WorkerPlan>, Option<String>) {
    let group_of = super::groups::group_of(
        &groups.iter().map(|(g, _)| g.clone()).collect::<Vec<_>>(),
        run.workloads.len(),
    );
    let mut per_group: Vec<Vec<Stream>> = groups.iter().map(|_| Vec::new()).collect();
    let mut streams = build_streams(run, resolved);
    attach_replays(replays, &mut streams);
    for s in streams {
        per_group[group_of[s.workload as usize]].push(s);
    }
    let sizes: Vec<usize> = per_group.iter().map(Vec::len).collect();
    let counts = super::groups::worker_counts(run.workers, &sizes);
    let mut plans = Vec::new();
    let mut reasons = Vec::new();
    for (gi, streams) in per_group.into_iter().enumerate() {
        let (group, choice) = &groups[gi];
        let cpus: Vec<usize> = group.key.cpus.clone().unwrap_or_else(allowed_cpus);
        let spread = super::spread::plan(
            counts[gi],
            cpus.len(),
            streams.len(),
            opts.connections,
            choice.kind.desc().network,
        );
        let first = plans.len();
        for w in 0..spread.nworkers {
            plans.push(WorkerPlan {
                group: gi,
                streams: Vec::new(),
                cpu: group.key.cpus.is_some().then(|| cpus[w % cpus.len()]),
            });
        }
        for (i, s) in streams.into_iter().enumerate() {
            plans[first + spread.worker_of(i, opts.connections)]
                .streams
                .push(s);
        }
        if groups.len() > 1 {
            let names: Vec<&str> = group
                .run
                .workloads
                .iter()
                .map(|w| w.name.as_str())
                .collect();
            reasons.push(format!(
                "{}: {} {} worker{}",
                names.join(","),
                spread.nworkers,
                choice.kind.name(),
                if spread.nworkers == 1 { "" } else { "s" }
            ));
        }
        reasons.extend(spread.reason);
    }
    let reason = (!reasons.is_empty()).then(|| reasons.join("; "));
    (plans, reason)
}

/// How network engines set a lost connection up again: only when the error policy
/// carries on, for the run's `reconnect_window`, each attempt given the I/O timeout
/// (a handshake is several round trips a recovering server may answer slowly), at
/// least the schedule's default.
fn reconnect_schedule(run: &RunSpec, opts: &RunOptions) -> Option<Reconnect> {
    if opts.policy == worker::ErrorPolicy::Stop {
        return None;
    }
    let d = Reconnect::default();
    Some(Reconnect {
        window_ns: run.settings.nanos(&RECONNECT_WINDOW),
        attempt_ns: opts.io_timeout_ns.unwrap_or(0).max(d.attempt_ns),
        ..d
    })
}

/// The multipath settings of a run whose (only) target has several paths.
fn multipath_settings(targets: &Targets, opts: &RunOptions) -> Option<MultipathSettings> {
    let mp = targets.first()?.multipath.as_ref()?;
    Some(MultipathSettings {
        policy: mp.spec.policy,
        failback: mp.spec.failback,
        timeout_ns: opts.io_timeout_ns.unwrap_or(DEFAULT_PATH_TIMEOUT_NS),
        retry_ns: mp.spec.retry_ns,
    })
}

/// Which of the run's targets the worker's streams use (a worker group's own, in a
/// run of several engines).
fn used_targets(setup: &WorkerSetup) -> Vec<bool> {
    let mut used = vec![false; setup.targets.len()];
    for s in &setup.streams {
        for w in s.workloads() {
            if let Some(shape) = setup.shapes.get(w as usize) {
                if let Some(u) = used.get_mut(shape.target as usize) {
                    *u = true;
                }
            }
        }
    }
    used
}

/// The verify state a worker of `engine` sees: none for the engines that write no
/// bytes (e4defrag moves a range's blocks and leaves its bytes as they are; the
/// operation engines do not write a buffer), so their "writes" on a target another
/// workload verifies register no keys there.
fn verify_states_of(
    engine: EngineKind,
    states: &[Option<TargetState>],
) -> Vec<Option<TargetState>> {
    match engine.desc().moves_bytes {
        false => vec![None; states.len()],
        true => states.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::{BlockSizes, Workload};

    fn seq_run(streams: u32, layout: SeqLayout) -> (RunSpec, Vec<Resolved>) {
        let w = Workload {
            pattern: AccessPattern::Sequential,
            bs: BlockSizes::fixed(4096),
            streams,
            seq_layout: layout,
            ..Default::default()
        };
        let run = RunSpec {
            name: "r".into(),
            workloads: vec![w],
            engine: EngineKind::Mem,
            duration_ns: None,
            passes: Some(1),
            ..RunSpec::default()
        };
        let r = Resolved {
            target: 0,
            ws_start: 8192,
            ws_len: 64 * 4096,
            file_bytes: 0,
            file_lens: None,
        };
        (run, vec![r])
    }

    fn offsets(run: &RunSpec, res: &[Resolved]) -> Vec<Vec<u64>> {
        let shape = WorkloadShape::new(&run.workloads[0], 0, res[0].ws_start, res[0].ws_len);
        build_streams(run, res)
            .into_iter()
            .map(|mut s| std::iter::from_fn(|| s.next_io(&shape).map(|io| io.offset)).collect())
            .collect()
    }

    #[test]
    fn reconnects_only_when_carrying_on_for_the_window_with_attempts_of_the_io_timeout() {
        let mut run = RunSpec::default();
        let mut opts = RunOptions::default();
        assert_eq!(reconnect_schedule(&run, &opts), None, "the stop policy");
        opts.policy = worker::ErrorPolicy::Continue;
        let r = reconnect_schedule(&run, &opts).expect("a schedule");
        assert_eq!((r.window_ns, r.attempt_ns), (30_000_000_000, 1_000_000_000));
        opts.io_timeout_ns = Some(2_500_000_000);
        let window = crate::plan::settings::Value::Nanos(5_000_000_000);
        run.settings.set(&RECONNECT_WINDOW, window);
        let r = reconnect_schedule(&run, &opts).expect("a schedule");
        assert_eq!((r.window_ns, r.attempt_ns), (5_000_000_000, 2_500_000_000));
        // A short I/O timeout does not cut a handshake below the default second.
        opts.io_timeout_ns = Some(200_000_000);
        assert_eq!(
            reconnect_schedule(&run, &opts).unwrap().attempt_ns,
            1_000_000_000
        );
    }

    #[test]
    fn stride_streams_interleave_into_one_sweep() {
        let (run, res) = seq_run(4, SeqLayout::Stride);
        let per = offsets(&run, &res);
        // Stream i issues blocks i, i+4, i+8, … of the working set.
        for (i, offs) in per.iter().enumerate() {
            assert_eq!(offs.len(), 16, "stream {i}");
            for (k, &o) in offs.iter().enumerate() {
                assert_eq!(
                    o,
                    8192 + (k as u64 * 4 + i as u64) * 4096,
                    "stream {i} I/O {k}"
                );
            }
        }
        // Together: every block once, in order when taken round-robin.
        let round_robin: Vec<u64> = (0..16)
            .flat_map(|k| per.iter().map(move |s| s[k]))
            .collect();
        let sweep: Vec<u64> = (0..64).map(|b| 8192 + b * 4096).collect();
        assert_eq!(round_robin, sweep);
    }

    #[test]
    fn region_streams_walk_their_own_slices() {
        let (run, res) = seq_run(4, SeqLayout::Regions);
        let per = offsets(&run, &res);
        for (i, offs) in per.iter().enumerate() {
            let first = 8192 + i as u64 * 16 * 4096;
            let want: Vec<u64> = (0..16).map(|k| first + k * 4096).collect();
            assert_eq!(offs, &want, "stream {i}");
        }
    }

    #[test]
    fn stride_wraps_to_its_own_phase() {
        let (mut run, res) = seq_run(4, SeqLayout::Stride);
        run.passes = Some(2);
        let per = offsets(&run, &res);
        assert_eq!(per[3].len(), 32);
        assert_eq!(
            per[3][16], per[3][0],
            "second pass starts where the first did"
        );
    }

    #[test]
    fn whole_streams_each_walk_the_whole_set_from_their_own_start() {
        let (mut run, res) = seq_run(3, SeqLayout::Whole);
        run.workloads[0].offset_increment_bytes = 8 * 4096;
        let per = offsets(&run, &res);
        for (i, offs) in per.iter().enumerate() {
            // A pass each: 64 blocks from block 8·i, wrapping at the end (diskspd's -T).
            let want: Vec<u64> = (0..64)
                .map(|k| 8192 + ((8 * i as u64 + k) % 64) * 4096)
                .collect();
            assert_eq!(offs, &want, "stream {i}");
        }
    }

    #[test]
    fn shared_streams_take_turns_on_one_position() {
        let (mut run, res) = seq_run(3, SeqLayout::Shared);
        // Time-based: no stream runs out of its share of a pass.
        (run.passes, run.duration_ns) = (None, Some(1));
        let shape = WorkloadShape::new(&run.workloads[0], 0, res[0].ws_start, res[0].ws_len);
        let mut streams = build_streams(&run, &res);
        // However unevenly the streams ask, the offsets are one sweep (diskspd's -si).
        let order = [0usize, 0, 2, 1, 0, 2, 2, 2, 1];
        let got: Vec<u64> = (0..70)
            .map(|k| {
                streams[order[k % order.len()]]
                    .next_io(&shape)
                    .unwrap()
                    .offset
            })
            .collect();
        let want: Vec<u64> = (0..70).map(|b| 8192 + (b % 64) * 4096).collect();
        assert_eq!(got, want);
    }
}
