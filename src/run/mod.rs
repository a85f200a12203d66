//! The runner: turns one [`RunSpec`] into a [`RunResult`]. [`setup`] checks the
//! plan and opens the targets (every check that can fail does so before anything is
//! created or the first I/O is issued), [`launch`] builds the streams and starts the
//! worker threads ([`worker`]), [`collector`] merges their per-interval snapshots
//! into interval rows and run totals, and [`verify`] reads everything back after a
//! `--verify-after` run. Workers never wait on the collector; the collector never
//! touches a worker's counters.

pub mod backlog;
pub mod block_shuffle;
pub mod buffers;
pub mod clock;
pub mod collector;
pub mod data;
pub mod echo;
pub mod engine_choice;
pub mod extension;
pub mod file_sets;
pub mod flow;
pub mod flush;
pub mod groups;
mod hdr_log;
pub mod hotband;
pub mod launch;
pub mod offsets;
pub mod op_engines;
mod own_settings;
pub mod pacing;
pub mod paths;
pub mod random_map;
pub mod replay;
pub mod request_flags;
mod resolved;
pub mod setup;
pub mod slots;
pub mod spool;
pub mod sprandom;
pub mod spread;
pub mod start_gate;
pub mod steady;
pub mod stream;
mod thread_tally;
pub mod timebase;
pub mod trim;
pub mod verify;
pub mod worker;
pub mod worker_error;
pub mod zbd;

use crate::engine::EngineError;
use crate::plan::model::{RunSpec, TargetSpec};
use crate::result::{Interval, RunResult};
use crate::target::{self, TargetError};
use worker::ErrorPolicy;

pub use setup::{allowed_cpus, check};
pub use verify::verify_pass;

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
    /// This rank's share of the plan cannot be worked out (host definitions, `--split`).
    #[error("run '{run}'")]
    Placement {
        run: String,
        source: crate::cluster::PlacementError,
    },
    /// A multipath setting the run's other settings contradict (the I/O deadline).
    #[error("run '{run}'")]
    Paths {
        run: String,
        source: crate::plan::paths::PathSpecError,
    },
    /// A worker thread could not be started.
    #[error("run '{run}': cannot start worker thread")]
    Spawn { run: String, source: std::io::Error },
    /// The ranks of a multi-rank run do not go on together.
    #[error("run '{run}'")]
    Cluster {
        run: String,
        source: crate::cluster::ClusterError,
    },
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Engine options the kernel, the device or the target refuses.
    #[error("run '{run}'")]
    Options { run: String, source: EngineError },
    /// io_uring and durability settings that contradict each other.
    #[error("run '{run}'")]
    Tuning {
        run: String,
        source: crate::plan::tuning::TuningError,
    },
    /// Verification state (key map, crash journal) that cannot be set up.
    #[error("run '{run}'")]
    VerifyState {
        run: String,
        source: data::VerifyStateError,
    },
    /// The `--verify-after` read-back of a target failed.
    #[error("run '{run}': verify pass on '{uri}'")]
    VerifyPass {
        run: String,
        uri: String,
        source: std::io::Error,
    },
}

/// Settings that are not part of the plan but of this invocation.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub force: bool,
    pub policy: ErrorPolicy,
    pub data: data::DataOptions,
    /// Connections per target (see the engine contract); 1 for local engines.
    pub connections: u32,
    /// Per-I/O deadline (`--io-timeout`): an I/O older than this is failed as a
    /// timeout, or re-issued under `--on-error retry=N`.
    pub io_timeout_ns: Option<u64>,
    /// The command's live metrics (`--metrics`), which the collector feeds at every
    /// interval end.
    pub metrics: Option<crate::metrics::Live>,
    /// Which repetition of the run this is (`--repeat`, from 0): a `sim:` device
    /// draws from its seed + this, so repetitions are independent draws.
    pub repetition: u64,
}

impl RunOptions {
    /// These options with the run's own `connections` and `io_timeout` (job-file
    /// keys, which the command line's flags have already overridden) in place.
    pub fn for_run(&self, run: &RunSpec) -> std::borrow::Cow<'_, RunOptions> {
        if run.connections.is_none() && run.io_timeout_ns.is_none() {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut o = self.clone();
        o.connections = run.connections.unwrap_or(o.connections);
        o.io_timeout_ns = run.io_timeout_ns.or(o.io_timeout_ns);
        std::borrow::Cow::Owned(o)
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            force: false,
            policy: ErrorPolicy::Stop,
            data: data::DataOptions::default(),
            connections: 1,
            io_timeout_ns: None,
            metrics: None,
            repetition: 0,
        }
    }
}

/// Executes one run. `on_interval` sees every interval as it closes (for live
/// output and the intervals JSON-lines file).
pub fn execute(
    run: &RunSpec,
    specs: &[TargetSpec],
    opts: &RunOptions,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<(RunResult, Vec<String>), RunError> {
    // Trace workloads: one per traced device, before the ranks share them out.
    let expanded = replay::expand(run).map_err(refused)?;
    let run = expanded.as_ref().unwrap_or(run);
    // Among MPI ranks: this rank's share of the run (docs/mpi.md).
    let local = setup::rank_share(run, specs)?;
    let (run, specs) = local
        .as_ref()
        .map_or((run, specs), |(r, t)| (r, t.as_slice()));
    // Trace workloads: their I/Os (this rank's share), rates and sizes.
    let (replay_run, mut replays) = replay::prepare(run)
        .map_err(refused)?
        .map_or_else(Default::default, |(r, p)| (Some(r), p));
    let run = replay_run.as_ref().unwrap_or(run);
    // Workloads with warm-ups of their own: the run's becomes the shortest of them.
    let own_warmups = run.with_own_warmups();
    let run = own_warmups.as_ref().unwrap_or(run);
    let opts = &*opts.for_run(run);
    let mut warnings = Vec::new();
    let (prepared, verify_states) =
        prepare_run(run, specs, opts, &mut warnings).map_err(refused)?;
    let (targets, choice) = (&prepared.targets, &prepared.choice);
    replays.place(&prepared.resolved);
    let launched = launch::launch(
        run,
        opts,
        targets,
        &prepared.resolved,
        &replays,
        &prepared.groups,
        &verify_states,
    );
    let launched = match launched {
        Ok(l) => l,
        Err(e) => {
            // Not started (among MPI ranks: another rank refused the start).
            prepared.undo();
            return Err(e);
        }
    };
    let mut choice = choice.clone();
    if let Some(why) = &launched.workers_reason {
        choice.reason = format!("{}; {why}", choice.reason);
    }
    let placed = launched.placed.clone();
    let extras = launched.extras.clone();
    let collector::Collected {
        mut result,
        mut verify,
        interrupted,
        fatal,
        workload_ops,
        by_workload,
        feed,
    } = collector::collect(
        run,
        targets,
        &choice,
        launched,
        opts,
        on_interval,
        &mut warnings,
    );
    replays.finish(&mut result, run, targets, &by_workload, &mut warnings);
    own_settings::own_settings(&mut result, run, &prepared.groups, &placed, opts);
    extension::finish(&mut result, run, &extras);
    if let Some(f) = &fatal {
        warnings.push(format!("run '{}': a worker failed: {f}", run.name));
    }
    // Among MPI ranks: rank 0's result becomes the merged one.
    if let Some(e) = finish_ranks(&mut result, workload_ops, specs, feed, on_interval) {
        warnings.push(format!("run '{}': {e}", run.name));
    }
    if !interrupted {
        read_back(run, opts, targets, &verify_states, &mut verify)?;
    }
    // fio's unlink: after the read-back, the files this run created go.
    warnings.extend(file_sets::unlink_after(targets));
    if opts.data.per_workload(run).iter().any(|d| d.verify) {
        result.verify = Some(verify);
    }
    Ok((result, warnings))
}

/// Among MPI ranks, after a run: rank 0's result becomes the merged one, and the
/// merged rows that close meanwhile are shown and fed to its merged metrics view.
/// The message naming a lost rank, if any.
fn finish_ranks(
    result: &mut RunResult,
    workload_ops: Vec<crate::cluster::wire::WorkloadOps>,
    specs: &[TargetSpec],
    mut feed: Option<crate::metrics::RunFeed>,
    on_interval: &mut dyn FnMut(&Interval),
) -> Option<String> {
    let uris: Vec<String> = specs.iter().map(|t| t.uri.clone()).collect();
    let mut show = |m: &crate::cluster::Merged| {
        collector::show_merged(m, feed.as_mut(), on_interval);
    };
    crate::cluster::finish_run(result, workload_ops, &uris, &mut show)
}

/// `--verify-after`: reads back every target a workload that asked for it wrote.
/// A failed read-back ends the run (its files unlinked first, as fio's unlink).
fn read_back(
    run: &RunSpec,
    opts: &RunOptions,
    targets: &crate::engine::Targets,
    verify_states: &[Option<data::TargetState>],
    verify: &mut crate::result::VerifyResult,
) -> Result<(), RunError> {
    let data = opts.data.per_workload(run);
    let asked = |t: &target::OpenTarget| {
        run.workloads
            .iter()
            .zip(&data)
            .any(|(w, d)| w.target == t.name && d.verify_after)
    };
    let unit = opts.data.spec.dedup_unit as u64;
    for (t, st) in targets.iter().zip(verify_states) {
        if let (Some(st), true) = (st, asked(t)) {
            if let Err(source) = verify_pass(t, st, unit, verify) {
                file_sets::unlink_after(targets);
                return Err(RunError::VerifyPass {
                    run: run.name.clone(),
                    uri: t.uri.clone(),
                    source,
                });
            }
        }
    }
    Ok(())
}

/// A run that cannot start: among MPI ranks the others stop too, naming this rank.
fn refused(e: RunError) -> RunError {
    crate::cluster::refuse_start(crate::errors::Chain(&e).to_string());
    e
}

/// Opens the targets and settles the engine and the verification state per
/// target; a failure after opening undoes what opening did.
fn prepare_run(
    run: &RunSpec,
    specs: &[TargetSpec],
    opts: &RunOptions,
    warnings: &mut Vec<String>,
) -> Result<(setup::Prepared, Vec<Option<data::TargetState>>), RunError> {
    // The clock first: a simulated device reads it for its origin when it opens.
    timebase::choose_clock(run, specs);
    let prepared = setup::prepare(run, specs, opts)?;
    warnings.extend(prepared.choice.fallback.iter().cloned());
    let virtual_time = prepared
        .groups
        .iter()
        .map(|(_, c)| setup::check_virtual_time(run, specs, c.kind))
        .collect::<Result<Vec<_>, _>>()
        .map(|w| w.into_iter().flatten().next());
    let states =
        virtual_time.and_then(|w| Ok((w, setup::verify_states(run, &prepared.targets, opts)?)));
    match states {
        Ok((w, v)) => {
            warnings.extend(w);
            Ok((prepared, v))
        }
        Err(e) => {
            prepared.undo();
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::{BlockSizes, EngineKind, Workload};

    fn null_run(streams: u32) -> (RunSpec, Vec<TargetSpec>) {
        let w = Workload {
            bs: BlockSizes::fixed(4096),
            streams,
            target: "t0".into(),
            ..Default::default()
        };
        let run = RunSpec {
            name: "r".into(),
            workloads: vec![w],
            engine: EngineKind::Null,
            duration_ns: None,
            passes: Some(2),
            workers: Some(2),
            ..RunSpec::default()
        };
        let t = TargetSpec::new("t0", "null:8m");
        (run, vec![t])
    }

    // The engine contract's connections: streams are spread over the connections
    // of their target, and every I/O is counted on exactly one of them.
    #[test]
    fn streams_spread_over_connections() {
        let (run, specs) = null_run(6);
        let opts = RunOptions {
            connections: 3,
            ..Default::default()
        };
        let (r, _) = execute(&run, &specs, &opts, &mut |_| {}).unwrap();
        assert_eq!(r.connections.len(), 3);
        let per: Vec<u64> = r.connections.iter().map(|c| c.ios).collect();
        assert_eq!(per.iter().sum::<u64>(), r.totals.all.ios, "{per:?}");
        // 2 passes over 8 MiB in 4 KiB by 6 streams: 2 streams per connection.
        for (i, c) in r.connections.iter().enumerate() {
            assert_eq!(c.index, i as u32);
            assert_eq!(c.uri, "null:8m");
            assert!(c.ios > 0, "connection {i} carried nothing: {per:?}");
        }
        let iv_sum: u64 = r
            .intervals
            .iter()
            .flat_map(|iv| iv.connections.iter().map(|c| c.ios))
            .sum();
        assert_eq!(iv_sum, r.totals.all.ios);
    }

    #[test]
    fn zero_connections_are_refused() {
        let (run, specs) = null_run(1);
        let opts = RunOptions {
            connections: 0,
            ..Default::default()
        };
        assert!(check(&run, &specs, &opts).is_err());
    }
}
