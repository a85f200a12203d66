//! The runner: turns one [`RunSpec`] into a [`RunResult`]. It opens and checks the
//! targets (every check that can fail does so before the first I/O), builds streams,
//! spreads them over worker threads, and collects one snapshot per worker per
//! interval, merging them into interval rows and run totals. Workers never wait on
//! the collector; the collector never touches a worker's counters.

pub mod buffers;
pub mod clock;
pub mod data;
pub mod echo;
pub mod engine_choice;
pub mod flush;
pub mod interrupt;
pub mod offsets;
pub mod pacing;
pub mod steady;
pub mod stream;
pub mod timebase;
pub mod worker;

use crate::clock::{now_ns, unix_s};
use crate::engine::iscsi::IscsiEngine;
use crate::engine::nbd::NbdEngine;
use crate::engine::sim::SimEngine;
use crate::engine::{mem::MemEngine, null::NullEngine, sync::SyncEngine, uring::UringEngine};
use crate::engine::{EngineError, Targets};
use crate::plan::model::{
    AccessPattern, Arrival, EngineKind, Op, Rate, RunSpec, SeqLayout, TargetKind, TargetSpec,
};
use crate::result::{
    Cpu, EndReason, Interval, PacingResult, RunResult, ScheduleResult, Totals, WorkloadResult,
};
use crate::stats::cpu::CpuSample;
use crate::stats::histogram::LatencyHistogram;
use crate::stats::snapshot::{OpStats, Snapshot, WorkloadStats};
use crate::stats::{interval_latency, op_totals};
use crate::target::{self, Backing, OpenTarget, TargetError};
use clock::IntervalClock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use stream::{Schedule, Stream, WorkloadShape};
use worker::{ErrorPolicy, WorkerSetup};

/// Why a run could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("run '{run}', workload '{workload}': {msg}")]
    Invalid {
        run: String,
        workload: String,
        msg: String,
    },
    #[error("run '{run}': {msg}")]
    Setup { run: String, msg: String },
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// Settings that are not part of the plan but of this invocation.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub force: bool,
    pub policy: ErrorPolicy,
    pub data: data::DataOptions,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            force: false,
            policy: ErrorPolicy::Stop,
            data: data::DataOptions::default(),
        }
    }
}

/// A workload's resolved geometry.
struct Resolved {
    target: u32,
    ws_start: u64,
    ws_len: u64,
}

/// Opens a run's targets and checks every workload against them. No I/O is issued.
fn prepare(
    run: &RunSpec,
    specs: &[TargetSpec],
    opts: &RunOptions,
) -> Result<(Targets, Vec<Resolved>), RunError> {
    let invalid = |w: &str, msg: String| RunError::Invalid {
        run: run.name.clone(),
        workload: w.to_string(),
        msg,
    };
    let mut used: Vec<usize> = Vec::new();
    for w in &run.workloads {
        let ti = specs
            .iter()
            .position(|t| t.name == w.target)
            .ok_or_else(|| invalid(&w.name, format!("unknown target '{}'", w.target)))?;
        if !used.contains(&ti) {
            used.push(ti);
        }
    }
    let mut opened = Vec::with_capacity(used.len());
    for &ti in &used {
        let spec = &specs[ti];
        let writes = run
            .workloads
            .iter()
            .any(|w| w.target == spec.name && w.read_pct < 100)
            && run.engine != EngineKind::Null;
        let min_size = run
            .workloads
            .iter()
            .filter(|w| w.target == spec.name)
            .map(|w| w.offset_bytes + w.size_bytes.unwrap_or(0))
            .max()
            .unwrap_or(0);
        let t = target::open(
            spec,
            target::OpenOptionsIo {
                writes,
                force: opts.force,
                min_size_bytes: min_size,
                write_through: run.io.write_through,
            },
        )?;
        opened.push(Arc::new(t));
    }
    let mut resolved = Vec::with_capacity(run.workloads.len());
    for w in &run.workloads {
        let ti = used
            .iter()
            .position(|&i| specs[i].name == w.target)
            .unwrap_or(0);
        let t = &opened[ti];
        if w.read_pct > 100 {
            return Err(invalid(
                &w.name,
                format!("read percentage {} is over 100", w.read_pct),
            ));
        }
        if w.qd == 0 || w.streams == 0 {
            return Err(invalid(
                &w.name,
                "queue depth and streams must be at least 1".into(),
            ));
        }
        if w.bs.split.is_empty() || w.bs.min_bytes() == 0 {
            return Err(invalid(
                &w.name,
                "block size must be at least 1 byte".into(),
            ));
        }
        if w.bs.max_bytes() > u32::MAX as u64 / 2 {
            return Err(invalid(
                &w.name,
                "block size over 2 GiB is not supported".into(),
            ));
        }
        if w.offset_bytes >= t.size_bytes {
            return Err(invalid(
                &w.name,
                format!(
                    "offset {} is beyond the end of target '{}' ({} bytes)",
                    w.offset_bytes, t.uri, t.size_bytes
                ),
            ));
        }
        let ws_len = w.size_bytes.unwrap_or(t.size_bytes - w.offset_bytes);
        if w.offset_bytes + ws_len > t.size_bytes {
            return Err(invalid(
                &w.name,
                format!(
                    "working set {}..{} extends beyond the end of target '{}' ({} bytes)",
                    w.offset_bytes,
                    w.offset_bytes + ws_len,
                    t.uri,
                    t.size_bytes
                ),
            ));
        }
        if w.bs.max_bytes() > ws_len {
            return Err(invalid(
                &w.name,
                format!(
                    "block size {} is larger than the working set ({} bytes)",
                    crate::plan::units::format_size(w.bs.max_bytes()),
                    ws_len
                ),
            ));
        }
        check_blocks(w, t).map_err(|m| invalid(&w.name, m))?;
        if t.direct && run.engine != EngineKind::Null {
            let a = t.align_bytes;
            if let Some(&(b, _)) = w.bs.split.iter().find(|&&(b, _)| b % a != 0) {
                return Err(invalid(
                    &w.name,
                    format!(
                        "block size {b} is not a multiple of {a} bytes, which O_DIRECT on '{}' requires (use a multiple of {a} or --direct false)",
                        t.uri
                    ),
                ));
            }
            if w.offset_bytes % a != 0 {
                return Err(invalid(
                    &w.name,
                    format!(
                        "offset {} is not a multiple of {a} bytes, which O_DIRECT on '{}' requires",
                        w.offset_bytes, t.uri
                    ),
                ));
            }
        }
        if let Some(p) = w.share_pct {
            if !(p.is_finite() && p > 0.0) {
                return Err(invalid(
                    &w.name,
                    format!("share {p} must be a positive number"),
                ));
            }
        }
        if let Rate::Iops(r) = w.rate {
            if !(r.is_finite() && r > 0.0) {
                return Err(invalid(
                    &w.name,
                    format!("rate {r} must be a positive number"),
                ));
            }
        }
        resolved.push(Resolved {
            target: ti as u32,
            ws_start: w.offset_bytes,
            ws_len,
        });
    }
    Ok((Arc::new(opened), resolved))
}

/// An iSCSI LUN takes only whole blocks: block sizes, offset and size must be
/// multiples of its block size.
fn check_blocks(w: &crate::plan::model::Workload, t: &OpenTarget) -> Result<(), String> {
    if !matches!(t.backing, Backing::Iscsi(_)) {
        return Ok(());
    }
    let a = t.align_bytes;
    if let Some(&(b, _)) = w.bs.split.iter().find(|&&(b, _)| b % a != 0) {
        return Err(format!(
            "block size {b} is not a multiple of the LUN's {a}-byte blocks ('{}')",
            t.uri
        ));
    }
    if w.offset_bytes % a != 0 || w.size_bytes.is_some_and(|s| s % a != 0) {
        return Err(format!(
            "offset and size must be multiples of the LUN's {a}-byte blocks ('{}')",
            t.uri
        ));
    }
    Ok(())
}

/// Checks a run against its targets (opening, creating files, safety, alignment)
/// without issuing any measured I/O.
pub fn check(run: &RunSpec, specs: &[TargetSpec], opts: &RunOptions) -> Result<(), RunError> {
    let local = crate::cluster::localize(run, specs).map_err(|msg| RunError::Setup {
        run: run.name.clone(),
        msg,
    })?;
    let (run, specs) = match &local {
        Some((r, t)) => (r, t.as_slice()),
        None => (run, specs),
    };
    if run.workloads.is_empty() {
        return Err(RunError::Setup {
            run: run.name.clone(),
            msg: "has no workloads".into(),
        });
    }
    if run.duration_ns.is_none() && run.passes.is_none() {
        return Err(RunError::Setup {
            run: run.name.clone(),
            msg: "needs a duration or a number of passes".into(),
        });
    }
    check_clock(run, specs)?;
    run.io.check().map_err(|msg| RunError::Setup {
        run: run.name.clone(),
        msg,
    })?;
    // Opening checks the targets, so the clock is chosen first, as in `execute`.
    timebase::choose_clock(run, specs);
    let (targets, _) = prepare(run, specs, opts)?;
    let choice = engine_choice::resolve(run.engine, &targets, &run.io.uring);
    check_uring(run, choice.kind, &targets)?;
    check_network(run, choice.kind, &targets)
}

/// io_uring and durability options that cannot work here (the kernel, the device,
/// the target), refused before any I/O with the option named.
fn check_uring(run: &RunSpec, engine: EngineKind, targets: &Targets) -> Result<(), RunError> {
    let setup = |msg: String| RunError::Setup {
        run: run.name.clone(),
        msg,
    };
    // Flushes and O_DSYNC act on file descriptors: other targets would silently skip them.
    let durability = [
        (run.io.sync_every > 0, "--sync-every"),
        (run.io.write_through, "--write-through"),
    ];
    for (on, flag) in durability {
        if let Some(t) = targets.iter().find(|t| on && t.fd().is_none()) {
            return Err(setup(format!(
                "{flag} works on files and block devices, not on '{}'",
                t.uri
            )));
        }
    }
    if engine == EngineKind::Uring {
        UringEngine::check_options(targets, &run.io.uring).map_err(|e| setup(e.to_string()))?;
    }
    Ok(())
}

/// Virtual time is the whole process's clock once one target asks for it: then every
/// target of the plan must be a simulated device on it.
fn check_clock(run: &RunSpec, specs: &[TargetSpec]) -> Result<(), RunError> {
    let on_virtual_time = |s: &TargetSpec| matches!(target::parse_uri(&s.uri), Ok(TargetKind::Sim(sim)) if sim.virtual_time);
    let Some(v) = specs.iter().find(|s| on_virtual_time(s)) else {
        return Ok(());
    };
    match specs.iter().find(|s| !on_virtual_time(s)) {
        Some(real) => Err(RunError::Setup {
            run: run.name.clone(),
            msg: format!(
                "'{}' runs on real time, but '{}' puts the process on virtual time: \
                 every target must then be a sim target with time=virtual",
                real.uri, v.uri
            ),
        }),
        None => Ok(()),
    }
}

/// CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills the zeroed set we pass.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let v: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect();
            if !v.is_empty() {
                return v;
            }
        }
    }
    (0..crate::stats::cpu::online_cpus()).collect()
}

/// Builds every stream of the run, with its region, budget and schedule.
fn build_streams(run: &RunSpec, resolved: &[Resolved]) -> Vec<Stream> {
    let mut out = Vec::new();
    // A share mix: weights in per-mille of the shares, by workload.
    let shared: Vec<(usize, f64)> = run
        .workloads
        .iter()
        .enumerate()
        .filter_map(|(i, w)| w.share_pct.map(|p| (i, p)))
        .collect();
    let mix: Option<std::sync::Arc<[(u32, u32)]>> = (!shared.is_empty()).then(|| {
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
    let lead = shared.first().map(|&(i, _)| i);
    for (wi, w) in run.stream_owners() {
        let r = &resolved[wi];
        let n = w.streams as u64;
        let unit = w.bs.min_bytes().max(1);
        let sequential = matches!(w.pattern, AccessPattern::Sequential);
        // Sequential streams own equal, block-aligned slices when the working set is
        // big enough; otherwise they all walk the whole set.
        let slice = (r.ws_len / n) / unit * unit;
        // Interleaved streams step over each other's blocks, in units of the largest
        // block size; they need one such block each.
        let max_bs = w.bs.max_bytes();
        let stride = sequential
            && n > 1
            && w.seq_layout == SeqLayout::Stride
            && n.saturating_mul(max_bs) <= r.ws_len;
        let own_regions = sequential && !stride && slice >= max_bs;
        for i in 0..n {
            let seed = run
                .seed
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .wrapping_add(((wi as u64) << 32) | i);
            let mut rng = crate::rng::Rng::new(seed);
            let (region_start, region_len) = if own_regions {
                (r.ws_start + i * slice, slice)
            } else if stride {
                (r.ws_start + i * max_bs, r.ws_len - i * max_bs)
            } else {
                (r.ws_start, r.ws_len)
            };
            let bytes_left = match run.passes {
                Some(p) => {
                    let per_stream = if sequential && own_regions {
                        region_len
                    } else {
                        r.ws_len / n
                    };
                    (p.saturating_mul(per_stream)).max(w.bs.min_bytes())
                }
                None => u64::MAX,
            };
            let schedule = match w.rate {
                Rate::Max => None,
                Rate::Iops(total) => {
                    let gap_ns = 1e9 * n as f64 / total;
                    Some(Schedule {
                        gap_ns,
                        exponential: w.arrival == Arrival::Exponential,
                        // Spread first arrivals so streams do not fire in lockstep.
                        next_due_ns: rng.unit_f64() * gap_ns,
                    })
                }
            };
            out.push(Stream {
                workload: wi as u32,
                id: out.len() as u32,
                rng,
                region_start,
                region_len,
                pos: region_start,
                stride_bytes: if stride { n * max_bs } else { 0 },
                qd: w.qd,
                inflight: 0,
                bytes_left,
                schedule,
                mix: if Some(wi) == lead { mix.clone() } else { None },
            });
        }
    }
    out
}

/// Executes one run. `on_interval` sees every interval as it closes (for live
/// output and the intervals JSON-lines file).
pub fn execute(
    run: &RunSpec,
    specs: &[TargetSpec],
    opts: &RunOptions,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<(RunResult, Vec<String>), RunError> {
    // Among MPI ranks: this rank's share of the run (docs/mpi.md).
    let local = crate::cluster::localize(run, specs).map_err(|msg| RunError::Setup {
        run: run.name.clone(),
        msg,
    })?;
    let (run, specs) = match &local {
        Some((r, t)) => (r, t.as_slice()),
        None => (run, specs),
    };
    let mut warnings = Vec::new();
    // The clock first: a simulated device reads it for its origin when it opens.
    let virtual_time = timebase::choose_clock(run, specs);
    let (targets, resolved) = prepare(run, specs, opts)?;
    let choice = engine_choice::resolve(run.engine, &targets, &run.io.uring);
    let engine = choice.kind;
    warnings.extend(choice.fallback.iter().cloned());
    check_uring(run, engine, &targets)?;
    if engine == EngineKind::Mem
        && targets
            .iter()
            .any(|t| !matches!(t.backing, Backing::Mem(_)))
    {
        return Err(RunError::Setup {
            run: run.name.clone(),
            msg: "the mem engine works only with mem:SIZE targets".into(),
        });
    }
    if engine == EngineKind::Sim
        && targets
            .iter()
            .any(|t| !matches!(t.backing, Backing::Sim(_)))
    {
        return Err(RunError::Setup {
            run: run.name.clone(),
            msg: "the sim engine works only with sim:SIZE targets".into(),
        });
    }
    // Virtual time, once a target asked for it, is the whole process's clock: only
    // simulated devices on that same clock, driven by the sim engine, can run on it.
    if virtual_time {
        check_clock(run, specs)?;
        if engine != EngineKind::Sim {
            return Err(RunError::Setup {
                run: run.name.clone(),
                msg: format!("virtual time needs the sim engine, not {}", engine.name()),
            });
        }
        warnings.push(format!(
            "run '{}': on virtual time: IOPS and latency are the simulated device's exact figures; \
             CPU figures compare real CPU time with simulated time and mean nothing",
            run.name
        ));
    }
    check_network(run, engine, &targets)?;
    if matches!(engine, EngineKind::Uring | EngineKind::Sync)
        && targets.iter().any(|t| t.fd().is_none())
    {
        return Err(RunError::Setup {
            run: run.name.clone(),
            msg: format!(
                "the {} engine needs file or device targets; mem:/null: targets use the mem/null engines",
                engine.name()
            ),
        });
    }
    if opts.data.verify {
        let unit = opts.data.spec.dedup_unit as u64;
        for w in &run.workloads {
            if w.offset_bytes % unit != 0 || w.bs.split.iter().any(|&(b, _)| b % unit != 0) {
                return Err(RunError::Invalid {
                    run: run.name.clone(),
                    workload: w.name.clone(),
                    msg: format!(
                        "verification needs block sizes and offsets in whole units of {unit} bytes (see --dedup-unit)"
                    ),
                });
            }
        }
    }
    // Verification state per engine target (shared by workers and later runs).
    let verify_states: Vec<Option<data::TargetState>> =
        if opts.data.verify || opts.data.journal.is_some() {
            let multi = targets.len() > 1;
            targets
                .iter()
                .map(|t| {
                    let dir = opts.data.journal.as_ref().map(|d| {
                        if multi {
                            d.join(&t.name)
                        } else {
                            d.clone()
                        }
                    });
                    opts.data
                        .registry
                        .target(&t.uri, t.size_bytes, &opts.data, dir)
                        .map(Some)
                        .map_err(|msg| RunError::Setup {
                            run: run.name.clone(),
                            msg,
                        })
                })
                .collect::<Result<_, _>>()?
        } else {
            vec![None; targets.len()]
        };
    let streams = build_streams(run, &resolved);
    let allowed = allowed_cpus();
    let cpus: Vec<usize> = run.cpus.clone().unwrap_or_else(|| allowed.clone());
    for c in &cpus {
        if !allowed.contains(c) {
            return Err(RunError::Setup {
                run: run.name.clone(),
                msg: format!("CPU {c} is not available to this process (allowed: {allowed:?})"),
            });
        }
    }
    let pin = run.cpus.is_some();
    let nworkers = run
        .workers
        .unwrap_or(cpus.len())
        .clamp(1, streams.len().max(1));
    let shapes: Vec<WorkloadShape> = run
        .workloads
        .iter()
        .zip(&resolved)
        .map(|(w, r)| WorkloadShape::new(w, r.target, r.ws_start, r.ws_len))
        .collect();
    // Round-robin streams over workers.
    let mut per_worker: Vec<Vec<Stream>> = (0..nworkers).map(|_| Vec::new()).collect();
    for (i, s) in streams.into_iter().enumerate() {
        per_worker[i % nworkers].push(s);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let error_stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<Snapshot>();
    // Start a little in the future so every worker is set up before the first I/O.
    let start_ns =
        crate::cluster::start_ns(run, now_ns() + 20_000_000).map_err(|msg| RunError::Setup {
            run: run.name.clone(),
            msg,
        })?;
    let clock = IntervalClock {
        start_ns,
        warmup_ns: run.warmup_ns,
        interval_ns: run.interval_ns,
    };
    // On virtual time every worker counts before the first one waits, so none starts
    // ahead of the others.
    let mut participants = crate::clock::VIRTUAL.reserve(if virtual_time { nworkers } else { 0 });
    let mut handles = Vec::with_capacity(nworkers);
    // Emptied per-interval stats go back to their worker for reuse, so a long run
    // allocates no histograms after its first intervals.
    let mut recycle_tx = Vec::with_capacity(nworkers);
    for (wi, streams) in per_worker.into_iter().enumerate() {
        let (back_tx, back_rx) = mpsc::channel::<Vec<WorkloadStats>>();
        recycle_tx.push(back_tx);
        let wdata = data::WorkerData::new(
            &opts.data.spec,
            run.seed ^ 0xda7a ^ ((wi as u64) << 40) ^ crate::clock::now_ns(),
            verify_states.clone(),
            wi as u32,
        )
        .map_err(|msg| RunError::Setup {
            run: run.name.clone(),
            msg,
        })?;
        let flusher = flush::Flusher::new(run.io.sync_every, run.io.sync_kind, streams.len());
        let setup = WorkerSetup {
            data: wdata,
            index: wi,
            cpu: pin.then(|| cpus[wi % cpus.len()]),
            targets: targets.clone(),
            shapes: shapes.clone(),
            streams,
            clock,
            end_ns: run.duration_ns.map(|d| start_ns + run.warmup_ns + d),
            stop: stop.clone(),
            error_stop: error_stop.clone(),
            tx: tx.clone(),
            policy: opts.policy,
            pacer: pacing::Pacer::new(run.pacing),
            recycled: back_rx,
            flush: flusher,
        };
        let capacity: usize = setup.streams.iter().map(|s| s.qd as usize).sum();
        let t = targets.clone();
        let uring_opts = run.io.uring.clone();
        let participant = virtual_time.then(|| participants.hand_over());
        let h = std::thread::Builder::new()
            .name(format!("ioscope-w{wi}"))
            .spawn(move || {
                // On virtual time this worker moves the clock with the others and
                // lets go of it when it ends, however it ends.
                let _participant = participant;
                // Wait for the common start so intervals line up.
                crate::clock::sleep_until(start_ns);
                crate::cluster::mark_first_io();
                match engine {
                    EngineKind::Null => worker::run_worker(NullEngine::new(capacity), setup),
                    EngineKind::Mem => worker::run_worker(MemEngine::new(&t, capacity), setup),
                    EngineKind::Sim => worker::run_worker(SimEngine::new(&t, capacity), setup),
                    EngineKind::Sync => worker::run_worker(SyncEngine::new(&t, capacity), setup),
                    EngineKind::Nbd => match NbdEngine::new(&t, capacity) {
                        Ok(e) => worker::run_worker(e, setup),
                        Err(e) => setup_failed(&setup, e),
                    },
                    EngineKind::Iscsi => match IscsiEngine::new(&t, capacity) {
                        Ok(e) => worker::run_worker(e, setup),
                        Err(e) => setup_failed(&setup, e),
                    },
                    _ => match UringEngine::new(&t, capacity, &uring_opts) {
                        Ok(e) => worker::run_worker(e, setup),
                        Err(e) => setup_failed(&setup, e),
                    },
                }
            })
            .map_err(|e| RunError::Setup {
                run: run.name.clone(),
                msg: format!("cannot start worker thread: {e}"),
            })?;
        handles.push(h);
    }
    drop(tx);

    let mut coll = Collector::new(run, nworkers, clock);
    coll.recycle = recycle_tx;
    let end_at = run.duration_ns.map(|d| start_ns + run.warmup_ns + d);
    let mut interrupted = false;
    loop {
        if !interrupted && interrupt::requested() {
            interrupted = true;
            stop.store(true, Ordering::Relaxed);
        }
        if let Some(end) = end_at {
            if now_ns() >= end {
                stop.store(true, Ordering::Relaxed);
            }
        }
        if crate::cluster::poll(on_interval) {
            stop.store(true, Ordering::Relaxed);
        }
        match rx.recv_timeout(std::time::Duration::from_millis(20)) {
            Ok(s) => coll.add(s, on_interval),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    for h in handles {
        let _ = h.join();
    }
    let end_reason = if interrupted {
        EndReason::Interrupted
    } else if error_stop.load(Ordering::Relaxed) || coll.fatal.is_some() {
        EndReason::Error
    } else if end_at.is_some_and(|e| now_ns() >= e) {
        EndReason::Duration
    } else {
        EndReason::Passes
    };
    if let Some(f) = &coll.fatal {
        warnings.push(format!("run '{}': a worker failed: {f}", run.name));
    }
    let mut verify = std::mem::take(&mut coll.verify);
    let mut result = coll.finish(run, &targets, &choice, end_reason, interrupted, nworkers);
    if let Some(e) = crate::cluster::finish_run(&mut result, on_interval) {
        warnings.push(format!("run '{}': {e}", run.name));
    }
    if opts.data.verify_after && !interrupted {
        let unit = opts.data.spec.dedup_unit as u64;
        for (t, st) in targets.iter().zip(&verify_states) {
            if let Some(st) = st {
                verify_pass(t, st, unit, &mut verify).map_err(|e| RunError::Setup {
                    run: run.name.clone(),
                    msg: format!("verify pass on '{}': {}", t.uri, crate::errors::Chain(&e)),
                })?;
            }
        }
    }
    if opts.data.verify || opts.data.verify_after {
        result.verify = Some(verify);
    }
    Ok((result, warnings))
}

/// Reports a worker whose engine could not be set up, as its last snapshot.
fn setup_failed(setup: &WorkerSetup, e: EngineError) {
    let _ = setup.tx.send(Snapshot {
        worker: setup.index,
        index: 0,
        end_ns: now_ns(),
        last: true,
        workloads: Vec::new(),
        error_samples: Vec::new(),
        fatal: Some(crate::errors::chain(&e)),
        verify: Default::default(),
        pacing: Default::default(),
    });
}

/// Network targets need their own engine (nbd for NBD, iscsi for iSCSI), which
/// serves nothing else. Each worker opens its own connection, so more than one worker
/// on an NBD target needs a server that advertises multi-conn (otherwise the
/// connections may not see each other's writes).
fn check_network(run: &RunSpec, engine: EngineKind, targets: &Targets) -> Result<(), RunError> {
    let setup = |msg: String| RunError::Setup {
        run: run.name.clone(),
        msg,
    };
    let wants = |t: &OpenTarget| match t.backing {
        Backing::Nbd(_) => Some(EngineKind::Nbd),
        Backing::Iscsi(_) => Some(EngineKind::Iscsi),
        _ => None,
    };
    for t in targets.iter() {
        match wants(t) {
            Some(k) if k != engine => {
                return Err(setup(format!(
                    "'{}' needs the {} engine, not {}",
                    t.uri,
                    k.name(),
                    engine.name()
                )))
            }
            None if matches!(engine, EngineKind::Nbd | EngineKind::Iscsi) => {
                return Err(setup(format!(
                    "the {} engine works only with {} targets, not '{}'",
                    engine.name(),
                    if engine == EngineKind::Nbd {
                        "nbd://"
                    } else {
                        "iscsi://"
                    },
                    t.uri
                )))
            }
            _ => {}
        }
    }
    let streams: usize = run.workloads.iter().map(|w| w.streams as usize).sum();
    let workers = run.workers.unwrap_or(usize::MAX).min(streams.max(1));
    if workers > 1 {
        for t in targets.iter() {
            if let Backing::Nbd(n) = &t.backing {
                if !n.multi_conn {
                    return Err(setup(format!(
                        "{workers} workers would open {workers} connections to {}, but that server does not advertise multi-conn (connections might not see each other's writes); use --workers 1",
                        n.server
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Merges worker snapshots into intervals and totals.
struct Collector {
    nworkers: usize,
    clock: IntervalClock,
    /// Snapshots waiting for the rest of their interval, by index.
    pending: std::collections::BTreeMap<u64, Vec<Snapshot>>,
    /// Per worker: index of its last snapshot, once it has finished.
    finished_at: Vec<Option<u64>>,
    next_index: u64,
    prev_end_ns: u64,
    cpu_prev: CpuSample,
    cpu_run_start: CpuSample,
    cpu_measure_start: Option<CpuSample>,
    measure_start_ns: Option<u64>,
    last_end_ns: u64,
    totals: Vec<WorkloadStats>,
    /// Waiting for open-loop intended times, over the measured intervals.
    pacing: crate::stats::pacing::PacingStats,
    intervals: Vec<Interval>,
    samples: Vec<crate::result::ErrorSample>,
    fatal: Option<String>,
    /// Verification counts from the workers' last snapshots.
    verify: crate::result::VerifyResult,
    nworkloads: usize,
    open_loop: Vec<bool>,
    /// The open-loop workloads' requested rate, for the backlog estimate.
    requested_iops: f64,
    /// Per worker: where its merged snapshots' stats go back for reuse.
    recycle: Vec<mpsc::Sender<Vec<WorkloadStats>>>,
}

impl Collector {
    fn new(run: &RunSpec, nworkers: usize, clock: IntervalClock) -> Self {
        let cpu = CpuSample::now();
        let open_loop: Vec<bool> = run
            .workloads
            .iter()
            .map(|w| matches!(w.rate, Rate::Iops(_)))
            .collect();
        Collector {
            nworkers,
            clock,
            pending: Default::default(),
            finished_at: vec![None; nworkers],
            next_index: 0,
            prev_end_ns: clock.start_ns,
            cpu_prev: cpu,
            cpu_run_start: cpu,
            cpu_measure_start: if clock.warmup_ns == 0 {
                Some(cpu)
            } else {
                None
            },
            measure_start_ns: if clock.warmup_ns == 0 {
                Some(clock.start_ns)
            } else {
                None
            },
            last_end_ns: clock.start_ns,
            totals: open_loop.iter().map(|&o| WorkloadStats::new(o)).collect(),
            pacing: Default::default(),
            intervals: Vec::new(),
            samples: Vec::new(),
            fatal: None,
            verify: Default::default(),
            nworkloads: run.workloads.len(),
            open_loop,
            requested_iops: run.requested_iops(),
            recycle: Vec::new(),
        }
    }

    fn add(&mut self, s: Snapshot, on_interval: &mut dyn FnMut(&Interval)) {
        if s.last {
            self.finished_at[s.worker] = Some(s.index);
        }
        if let Some(f) = &s.fatal {
            self.fatal.get_or_insert_with(|| f.clone());
        }
        self.verify += &s.verify;
        self.pending.entry(s.index).or_default().push(s);
        // Close every interval that every worker has delivered (or finished before).
        loop {
            let k = self.next_index;
            let have = self.pending.get(&k).map_or(0, |v| v.len());
            let done_before = self
                .finished_at
                .iter()
                .filter(|f| f.is_some_and(|i| i < k))
                .count();
            if have == 0 && done_before == self.nworkers {
                return;
            }
            if have + done_before < self.nworkers {
                return;
            }
            let snaps = self.pending.remove(&k).unwrap_or_default();
            self.close_interval(k, snaps, on_interval);
            self.next_index += 1;
        }
    }

    fn close_interval(
        &mut self,
        k: u64,
        snaps: Vec<Snapshot>,
        on_interval: &mut dyn FnMut(&Interval),
    ) {
        // A worker's closing snapshot just after the final boundary holds nothing: it
        // is not an interval of its own.
        let empty = snaps.iter().all(|s| {
            s.last
                && s.workloads
                    .iter()
                    .all(|w| w.ops.iter().all(|o| o.ios == 0 && o.errors == 0))
        });
        if empty && !snaps.is_empty() {
            for s in snaps {
                self.samples.extend(s.error_samples);
            }
            return;
        }
        let mut merged: Vec<WorkloadStats> = self
            .open_loop
            .iter()
            .map(|&o| WorkloadStats::new(o))
            .collect();
        let mut end_ns = self.prev_end_ns;
        let mut pacing = crate::stats::pacing::PacingStats::default();
        for s in snaps {
            end_ns = end_ns.max(s.end_ns);
            pacing += &s.pacing;
            for (m, w) in merged.iter_mut().zip(&s.workloads) {
                *m += w;
            }
            for e in s.error_samples {
                if self.samples.len() < 16 {
                    self.samples.push(e);
                }
            }
            if !s.last {
                if let Some(back) = self.recycle.get(s.worker) {
                    let mut stats = s.workloads;
                    stats.iter_mut().for_each(WorkloadStats::reset);
                    // A worker that has ended no longer listens; that is fine.
                    let _ = back.send(stats);
                }
            }
        }
        let warmup = self.clock.is_warmup(k);
        let dur_ns = end_ns.saturating_sub(self.prev_end_ns).max(1);
        let dur_s = dur_ns as f64 / 1e9;
        let mut all = OpStats::new(self.open_loop.iter().any(|&o| o));
        let mut dirs = [OpStats::new(false), OpStats::new(false)];
        let mut lag: Option<LatencyHistogram> = None;
        for w in &merged {
            if let Some(l) = &w.lag {
                *lag.get_or_insert_with(LatencyHistogram::new) += l;
            }
            all += &w.ops[0];
            all += &w.ops[1];
            dirs[0] += &w.ops[0];
            dirs[1] += &w.ops[1];
        }
        let cpu_now = CpuSample {
            at_ns: end_ns,
            ..CpuSample::now()
        };
        let cpu = cpu_now.since(&self.cpu_prev, all.ios);
        self.cpu_prev = cpu_now;
        let iv = Interval {
            index: k,
            t_s: end_ns.saturating_sub(self.clock.start_ns) as f64 / 1e9,
            duration_s: dur_s,
            unix_s: unix_s(),
            warmup,
            ios: all.ios,
            bytes: all.bytes,
            iops: all.ios as f64 / dur_s,
            mbps: all.bytes as f64 / dur_s / 1e6,
            read_pct: if all.ios > 0 {
                100.0 * dirs[0].ios as f64 / all.ios as f64
            } else {
                0.0
            },
            errors: all.errors,
            lat_us: interval_latency(&all.lat),
            read_lat_us: interval_latency(&dirs[0].lat),
            write_lat_us: interval_latency(&dirs[1].lat),
            queue_depth: all.service_sum_ns() as f64 / dur_ns as f64,
            cpu,
            lag_us: lag.as_ref().map(interval_latency),
            backlog_ios: lag
                .as_ref()
                .map(|l| l.max_ns() as f64 / 1e9 * self.requested_iops),
            net: None,
        };
        // Among MPI ranks the interval goes to rank 0's merge, which shows merged ones.
        if !crate::cluster::tap(&iv, &dirs, lag.as_ref(), on_interval) {
            on_interval(&iv);
        }
        self.intervals.push(iv);
        if warmup {
            // Measurement starts where warm-up ends.
            self.measure_start_ns = Some(end_ns);
            self.cpu_measure_start = Some(cpu_now);
        } else {
            for (t, m) in self.totals.iter_mut().zip(&merged) {
                *t += m;
            }
            self.pacing += &pacing;
        }
        self.prev_end_ns = end_ns;
        self.last_end_ns = end_ns;
    }

    /// Requested vs achieved rate and issue lateness of the open-loop workloads.
    fn schedule_result(&self, run: &RunSpec, dur_s: f64, cpu: &Cpu) -> Option<ScheduleResult> {
        let requested = self.requested_iops;
        let mut ios = 0u64;
        let mut lag = LatencyHistogram::new();
        for (w, t) in run.workloads.iter().zip(&self.totals) {
            if matches!(w.rate, Rate::Iops(_)) {
                ios += t.ops.iter().map(|o| o.ios + o.errors).sum::<u64>();
                if let Some(l) = &t.lag {
                    lag += l;
                }
            }
        }
        if requested == 0.0 {
            return None;
        }
        let achieved = if dur_s > 0.0 { ios as f64 / dur_s } else { 0.0 };
        Some(ScheduleResult {
            requested_iops: requested,
            achieved_iops: achieved,
            achieved_pct: 100.0 * achieved / requested,
            lag_us: lag.summary_us(false),
            max_backlog_ios: lag.max_ns() as f64 / 1e9 * requested,
            pacing: Some(self.pacing_result(run, cpu)),
        })
    }

    /// What waiting for intended times cost; the spin is taken out of the CPU per I/O
    /// (capped at the CPU measured, since a preempted spin counts wall time).
    fn pacing_result(&self, run: &RunSpec, cpu: &Cpu) -> PacingResult {
        let p = &self.pacing;
        let ios: u64 = self
            .totals
            .iter()
            .flat_map(|t| t.ops.iter().map(|o| o.ios))
            .sum();
        let cpu_us = cpu.cpu_us_per_io * ios as f64;
        let spin_us = p.spin_ns as f64 / 1e3;
        PacingResult {
            mode: run.pacing.name().into(),
            spin_s: p.spin_ns as f64 / 1e9,
            sleep_s: p.sleep_ns as f64 / 1e9,
            sleeps: p.wake_late.count(),
            wake_late_us: p.wake_late.summary_us(false),
            margin_us: p.margin_ns as f64 / 1e3,
            cpu_us_per_io_excl_spin: if ios > 0 {
                (cpu_us - spin_us).max(0.0) / ios as f64
            } else {
                0.0
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        mut self,
        run: &RunSpec,
        targets: &Targets,
        engine: &engine_choice::EngineChoice,
        end_reason: EndReason,
        interrupted: bool,
        nworkers: usize,
    ) -> RunResult {
        // Flush any interval left open (a worker that ended without peers).
        let rest: Vec<u64> = self.pending.keys().copied().collect();
        for k in rest {
            if let Some(snaps) = self.pending.remove(&k) {
                self.close_interval(k, snaps, &mut |_| {});
            }
        }
        let measure_start = self.measure_start_ns.unwrap_or(self.last_end_ns);
        let dur_ns = self.last_end_ns.saturating_sub(measure_start);
        let dur_s = dur_ns as f64 / 1e9;
        let mut all_ops = [OpStats::new(false), OpStats::new(false)];
        let mut combined = OpStats::new(self.open_loop.iter().any(|&o| o));
        for w in &self.totals {
            all_ops[0] += &w.ops[0];
            all_ops[1] += &w.ops[1];
            combined += &w.ops[0];
            combined += &w.ops[1];
        }
        let totals = Totals {
            all: op_totals(&combined, dur_s, true),
            read: op_totals(&all_ops[0], dur_s, true),
            write: op_totals(&all_ops[1], dur_s, true),
            queue_depth: if dur_ns > 0 {
                combined.service_sum_ns() as f64 / dur_ns as f64
            } else {
                0.0
            },
            flush: flush::totals(&self.totals, run, dur_s),
            net: Default::default(),
        };
        let cpu_end = CpuSample {
            at_ns: self.last_end_ns.max(self.cpu_prev.at_ns),
            ..self.cpu_prev
        };
        let cpu = cpu_end.since(
            self.cpu_measure_start
                .as_ref()
                .unwrap_or(&self.cpu_run_start),
            combined.ios,
        );
        let workloads = if self.nworkloads > 1 {
            run.workloads
                .iter()
                .zip(&self.totals)
                .map(|(w, t)| {
                    let c = t.combined();
                    WorkloadResult {
                        name: w.name.clone(),
                        target: w.target.clone(),
                        totals: Totals {
                            all: op_totals(&c, dur_s, false),
                            read: op_totals(&t.ops[Op::Read.index()], dur_s, false),
                            write: op_totals(&t.ops[Op::Write.index()], dur_s, false),
                            queue_depth: if dur_ns > 0 {
                                c.service_sum_ns() as f64 / dur_ns as f64
                            } else {
                                0.0
                            },
                            flush: flush::totals(std::slice::from_ref(t), run, dur_s),
                            net: Default::default(),
                        },
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        let schedule = self.schedule_result(run, dur_s, &cpu);
        RunResult {
            kind: Default::default(),
            schedule,
            verify: None,
            name: run.name.clone(),
            target: targets
                .iter()
                .map(|t| t.uri.clone())
                .collect::<Vec<_>>()
                .join(","),
            engine: engine.kind.name().into(),
            engine_reason: engine.reason.clone(),
            io: (!run.io.is_default()).then(|| serde_json::to_value(&run.io).unwrap_or_default()),
            workload: echo::workload_echo(&run.workloads[0]).into(),
            duration_s: dur_s,
            warmup_s: run.warmup_ns as f64 / 1e9,
            interrupted,
            end_reason,
            workers: nworkers,
            streams: run.total_streams(),
            totals,
            cpu,
            workloads,
            intervals: self.intervals,
            error_samples: self.samples,
            ranks: Vec::new(),
            mpi: None,
        }
    }
}

/// Reads back every unit of `t` that was written under verification and checks it
/// against the key map at rest (the `--verify-after` pass).
pub fn verify_pass(
    t: &OpenTarget,
    st: &data::TargetState,
    unit: u64,
    out: &mut crate::result::VerifyResult,
) -> std::io::Result<()> {
    const CHUNK: u64 = 1 << 20;
    let units = st.map.units();
    let chunk_units = (CHUNK / unit).max(1);
    let mut buf = buffers::AlignedBuf::new((chunk_units * unit) as usize)
        .ok_or_else(|| std::io::Error::other("cannot allocate the verify buffer"))?;
    let mut u = 0;
    while u < units {
        // Skip never-written units without reading them.
        if !st.map.expect_at_rest(u).is_tracked() {
            u += 1;
            continue;
        }
        let n = chunk_units.min(units - u);
        let bytes = (n * unit) as usize;
        let off = u * unit;
        let data = &mut buf.as_mut_slice()[..bytes];
        match &t.backing {
            Backing::File { file, .. } => {
                use std::os::unix::fs::FileExt;
                file.read_exact_at(data, off)?;
            }
            Backing::Nbd(n) => n.read_at(data, off)?,
            Backing::Iscsi(i) => i.read_at(data, off)?,
            Backing::Mem(m) => {
                // SAFETY: off + bytes ≤ units × unit ≤ the mapping's length; no worker
                // runs during the verify pass.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        m.as_ptr().add(off as usize),
                        data.as_mut_ptr(),
                        bytes,
                    )
                };
            }
            _ => return Ok(()),
        }
        for i in 0..n {
            let e = st.map.expect_at_rest(u + i);
            if !e.is_tracked() {
                continue;
            }
            let slice = &data[(i * unit) as usize..((i + 1) * unit) as usize];
            data::record(
                out,
                crate::data::check(slice, st.id, off + i * unit, &e),
                &t.uri,
                off + i * unit,
            );
        }
        u += n;
    }
    Ok(())
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
}
