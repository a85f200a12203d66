//! Multi-host runs on MPI: `mpirun -n N ioscope run …` runs the same command on N
//! ranks that start each run together (a barrier and one shared clock origin), and
//! rank 0 merges every interval from all ranks (counters summed, histograms merged
//! bucket by bucket) into one line, one set of totals and one result (docs/mpi.md).
//!
//! The MPI transport exists only in builds with the `mpi` feature, and only when the
//! process was started by an MPI launcher; otherwise every function here is a no-op
//! and the runner behaves as a single process. The runner calls in at five points:
//! [`localize`] (the rank's share of a run), [`start_ns`] (the shared start),
//! [`tap`] (each closed local interval), [`poll`] (while the run goes on) and
//! [`finish_run`] (merged result on rank 0).

pub mod gather;
pub mod hostmap;
pub mod placement;
#[cfg(feature = "mpi")]
mod session;
pub mod vote;
pub mod wire;

use crate::plan::model::{RunSpec, TargetSpec};
use crate::result::{Interval, RunResult};
use crate::stats::histogram::LatencyHistogram;
use crate::stats::snapshot::DirStats;
pub use gather::Merged;
pub use placement::{PlacementError, Split};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Why the ranks could not work together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClusterError {
    #[error("MPI: {0}")]
    Mpi(String),
    #[error("ranks differ: {0}")]
    Mismatch(String),
    /// Rank 0 stopped the ranks (one refused, engines differ), or its decision
    /// arrived malformed.
    #[error(transparent)]
    Decision(#[from] vote::DecisionError),
    /// Ranks (`who`, named with their hosts) did not reach `step` in time.
    #[error("{who} did not reach the {step} within {deadline_s} s")]
    Late {
        who: String,
        step: vote::Step,
        deadline_s: u64,
    },
    /// An earlier failure of the session (a lost rank, a failed start, differing
    /// versions) refuses the checks of a later run.
    #[error("not going on: {fault}")]
    Halted { fault: String },
    /// The same, refusing the start of a later run.
    #[error("not starting: {fault}")]
    NotStarting { fault: String },
    /// A simulated target's virtual clock is this process's own.
    #[error("virtual time cannot be shared among MPI ranks")]
    VirtualTime,
}

/// Unix ns at which this process's first worker started issuing in the current run.
static FIRST_IO_UNIX_NS: AtomicU64 = AtomicU64::new(0);
/// Set once this process has joined other ranks; read by worker threads, which do
/// not see the main thread's session.
static JOINED: AtomicBool = AtomicBool::new(false);

/// Unix time now, in ns.
pub fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Called by each worker right before its first I/O: keeps the earliest.
pub fn mark_first_io() {
    if JOINED.load(Ordering::Relaxed) {
        let now = unix_ns();
        let _ = FIRST_IO_UNIX_NS.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
            (v == 0 || now < v).then_some(now)
        });
    }
}

#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn first_io_unix_ns() -> u64 {
    FIRST_IO_UNIX_NS.load(Ordering::Relaxed)
}

/// Whether the process was started by an MPI launcher (Open MPI, MPICH/Hydra, PMIx).
pub fn launched_by_mpi() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// Joins the ranks when built with MPI and started by mpirun; otherwise does
/// nothing (and says so if MPI was asked for without the feature).
pub fn init(split: Split) -> Result<(), ClusterError> {
    #[cfg(feature = "mpi")]
    {
        if launched_by_mpi() {
            return session::init(split);
        }
    }
    #[cfg(not(feature = "mpi"))]
    {
        if launched_by_mpi() {
            eprintln!(
                "warning: started by an MPI launcher, but this ioscope was built without the `mpi` feature: each rank runs on its own"
            );
        }
    }
    if split != Split::All {
        eprintln!("warning: --split applies only under mpirun; running the whole plan here");
    }
    Ok(())
}

/// Whether this process is one rank of several.
pub fn active() -> bool {
    #[cfg(feature = "mpi")]
    {
        session::active()
    }
    #[cfg(not(feature = "mpi"))]
    {
        false
    }
}

/// This process's rank among the MPI ranks (0 outside a multi-rank run).
pub fn rank() -> u32 {
    #[cfg(feature = "mpi")]
    {
        session::rank()
    }
    #[cfg(not(feature = "mpi"))]
    {
        0
    }
}

/// Whether this process writes results and prints: always, except on ranks other
/// than 0 of a multi-rank run.
pub fn is_writer() -> bool {
    #[cfg(feature = "mpi")]
    {
        session::is_writer()
    }
    #[cfg(not(feature = "mpi"))]
    {
        true
    }
}

/// The rank's share of a run, or `None` outside a multi-rank run. A plan of several
/// host definitions (vdbench `hd=`) is refused outside one: running every host's
/// targets from this one would measure something else.
pub fn localize(
    run: &RunSpec,
    specs: &[TargetSpec],
) -> Result<Option<(RunSpec, Vec<TargetSpec>)>, PlacementError> {
    #[cfg(feature = "mpi")]
    {
        if active() {
            return session::localize(run, specs);
        }
    }
    let _ = specs;
    if run.hosts.len() > 1 {
        let names: Vec<String> = run.hosts.iter().map(|h| format!("hd={}", h.name)).collect();
        return Err(PlacementError::NeedsRanks {
            hosts: run.hosts.len(),
            names: names.join(", "),
        });
    }
    Ok(None)
}

/// After checking a run (`failure` = why this rank's checks failed): among ranks,
/// every rank learns whether all passed, so one rank's failure (naming it and its
/// host) stops all of them alike. `Ok` outside a multi-rank run.
pub fn agree(failure: Option<String>) -> Result<(), ClusterError> {
    #[cfg(feature = "mpi")]
    {
        session::agree(failure)
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = failure;
        Ok(())
    }
}

/// This rank cannot start the run (its engine, a library or a target failed while
/// setting up): tells the others, who then stop too, naming it.
pub fn refuse_start(why: String) {
    #[cfg(feature = "mpi")]
    session::refuse_start(why);
    #[cfg(not(feature = "mpi"))]
    let _ = why;
}

/// The run's start on this process's monotonic clock: `default_ns` alone, or, among
/// ranks, once every rank is ready with the same `engine` (per host definition), at
/// one origin shared by all.
pub fn start_ns(run: &RunSpec, engine: &str, default_ns: u64) -> Result<u64, ClusterError> {
    #[cfg(feature = "mpi")]
    {
        session::start_ns(run, engine, default_ns)
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (run, engine);
        Ok(default_ns)
    }
}

/// Hands a closed local interval to the ranks' merge; `false` outside a multi-rank
/// run (the caller then shows the interval itself). Rank 0 shows merged intervals
/// through `on_interval` as they complete; other ranks show none.
pub fn tap(
    iv: &Interval,
    dirs: &DirStats,
    lag: Option<&LatencyHistogram>,
    on_interval: &mut dyn FnMut(&Merged),
) -> bool {
    #[cfg(feature = "mpi")]
    {
        session::tap(iv, dirs, lag, on_interval)
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (iv, dirs, lag, on_interval);
        false
    }
}

/// While a run goes on: rank 0 takes the other ranks' reports and shows merged
/// intervals. Returns `true` when the run must stop (a rank was lost).
pub fn poll(on_interval: &mut dyn FnMut(&Merged)) -> bool {
    #[cfg(feature = "mpi")]
    {
        session::poll(on_interval)
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = on_interval;
        false
    }
}

/// Rank 0 has decided to end the run early (a steady-state stop judged on the
/// merged intervals): every rank stops it too, at once. A no-op elsewhere.
pub fn stop_all() {
    #[cfg(feature = "mpi")]
    session::stop_all();
}

/// After a run: ranks send their whole-run figures (`workloads` with histograms,
/// CPU, the environment of `target_uris` on their host) and report that they are
/// done; rank 0 waits for all of them (or gives up on a lost one) and turns its
/// result into the merged one, with the per-rank block. Returns an error message
/// naming a lost rank, if any.
pub fn finish_run(
    result: &mut RunResult,
    workloads: Vec<wire::WorkloadOps>,
    target_uris: &[String],
    on_interval: &mut dyn FnMut(&Merged),
) -> Option<String> {
    #[cfg(feature = "mpi")]
    {
        session::finish_run(result, workloads, target_uris, on_interval)
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (result, workloads, target_uris, on_interval);
        None
    }
}

/// Ends the process with `code`. Among ranks: finalizes MPI, or, after a lost
/// rank, aborts the whole job (a collective with a dead rank would never end).
pub fn exit(code: i32) -> ! {
    #[cfg(feature = "mpi")]
    session::exit(code);
    #[cfg(not(feature = "mpi"))]
    std::process::exit(code)
}
