//! Settings a workload may set for itself over its run's: the engine (and its
//! io_uring options), the warm-up, the CPUs its workers run on, and what its writes
//! carry and whether its data is verified. fio gives every job of a group its own
//! `ioengine`, `ramp_time`, `cpus_allowed`, `verify` and buffer settings; a plan keeps
//! the run-level value as the default and a workload's own value, when it has one,
//! wins for that workload only. Every field is `None` when the workload follows its
//! run, so a plan that never overrides anything serialises as before.
//!
//! How the runner honours them: workloads with the same engine, io_uring options and
//! CPUs share workers; a different engine or CPU set puts a workload's streams on
//! workers of their own, each owning one engine instance (docs/architecture.md). Warm-up
//! and data settings are per workload inside a worker and need no workers of their own.

use super::engine_kind::EngineKind;
use super::engine_opts::EngineOptions;
use super::tuning::UringOptions;
use serde::{Deserialize, Serialize};

/// A workload's own values of run settings; `None` = the run's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadOverrides {
    /// How this workload's I/O is issued (fio's per-job `ioengine`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<EngineKind>,
    /// io_uring settings of this workload's workers (fio's per-job `iodepth_batch*`,
    /// `fixedbufs`, `hipri` …), in place of the run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uring: Option<UringOptions>,
    /// This workload's I/O is not counted until this long after the run's I/O starts
    /// (fio's per-job `ramp_time`, after its `startdelay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_ns: Option<u64>,
    /// CPUs this workload's workers are pinned to (fio's per-job `cpus_allowed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
    /// What this workload's writes carry and whether its data is verified.
    #[serde(default, skip_serializing_if = "WorkloadData::is_default")]
    pub data: WorkloadData,
    /// This workload's own error policy (fio's per-job `continue_on_error` and
    /// `ignore_error`), in place of the run's `--on-error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_error: Option<super::on_error::OnError>,
    /// How much this workload does, where it differs from its run's: passes of its
    /// own, or time-based in a run of passes (fio's jobs of one group with and
    /// without `time_based`). A time-based workload ends at its `pauses.stop_ns` or
    /// the run's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<Amount>,
    /// This workload's own periodic flushes (fio's per-job `fsync`, `fdatasync`,
    /// `sync_file_range`), in place of the run's `sync_every` and `sync_kind`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flushes: Option<super::tuning::Flushes>,
    /// This workload's engine options (fio's per-job `donorname`, `program`,
    /// `cpuload` …), in place of the run's: all of them, not laid over the run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_opts: Option<EngineOptions>,
    /// fio-format logs of this workload's own share of each interval (fio's per-job
    /// `write_bw_log`, `write_lat_log`, `write_iops_log` in a group of several jobs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_logs: Option<super::outputs::FioLogs>,
}

impl WorkloadOverrides {
    pub fn is_default(&self) -> bool {
        *self == WorkloadOverrides::default()
    }
}

/// A workload's own amount of I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Amount {
    /// This many passes over its working set (then its streams stop; the run goes
    /// on while others have work).
    Passes(u64),
    /// No pass limit: until its own stop time or the run's end.
    TimeBased,
}

/// A workload's own data settings; `None` = the invocation's (job description and
/// command-line flags).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadData {
    /// Stamp this workload's writes and check its reads (fio's per-job `verify`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<bool>,
    /// Read this workload's target back after the run (fio's verify phase; off with
    /// `do_verify=0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_after: Option<bool>,
    /// Compression ratio of this workload's writes (fio's `buffer_compress_percentage`
    /// P → 100/(100−P)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compress_ratio: Option<f64>,
    /// Dedup ratio of this workload's writes (fio's `dedupe_percentage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_ratio: Option<f64>,
    /// The pattern this workload's writes carry (fio's per-job `verify_pattern`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<super::fill::FillPattern>,
    /// Where this workload's duplicates come from (fio's per-job
    /// `dedupe_mode=working_set`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_set: Option<super::outputs::DedupSet>,
    /// Each stream reads back what it wrote during the run (fio's `verify_backlog`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_backlog: Option<VerifyBacklog>,
}

/// fio's `verify_backlog` and `verify_backlog_batch`: once a stream has completed
/// `every_writes` writes since its last read-back, it reads `batch_reads` of them
/// back (oldest first; past `every_writes` it starts over at the oldest) and checks
/// them before it writes again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyBacklog {
    /// Completed writes between read-backs (at least 1).
    pub every_writes: u32,
    /// Blocks read back each time (at least 1).
    pub batch_reads: u32,
}

impl WorkloadData {
    pub fn is_default(&self) -> bool {
        *self == WorkloadData::default()
    }
}

/// Whether a workload on `engine` can run beside workloads of another engine in one
/// run, on worker groups of its own. Every engine the runner's workers drive can
/// (those that do something other than move bytes are checked per group, and the
/// ones that shape their target keep it to themselves: `run::groups`); `net` cannot:
/// its runs are socket peers, not workers (`net::peer`).
pub fn mixes_with_others(engine: EngineKind) -> bool {
    engine != EngineKind::Net
}

/// What makes workloads need workers of their own: engine and its options, io_uring
/// options, CPUs, and the I/O priority of the worker threads (ioprio_set is per
/// thread).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerKey {
    pub engine: EngineKind,
    /// The options of `engine` only ([`EngineOptions::for_engine`]).
    pub opts: EngineOptions,
    pub uring: UringOptions,
    pub cpus: Option<Vec<usize>>,
    pub prio: Option<super::priority::IoPriority>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::{RunSpec, Workload};

    #[test]
    fn own_warmups_lower_the_common_one_and_keep_the_end() {
        let mut run = RunSpec {
            warmup_ns: 5,
            duration_ns: Some(10),
            workloads: vec![Workload::default(), Workload::default()],
            ..RunSpec::default()
        };
        assert!(run.with_own_warmups().is_none());
        run.workloads[1].overrides.warmup_ns = Some(2);
        let r = run.with_own_warmups().unwrap();
        assert_eq!((r.warmup_ns, r.duration_ns), (2, Some(13)));
        assert_eq!(r.warmup_of(&r.workloads[0]), 5);
        assert_eq!(r.warmup_of(&r.workloads[1]), 2);
    }

    #[test]
    fn a_workload_of_its_own_engine_or_cpus_mixes_workers() {
        let mut run = RunSpec {
            workloads: vec![Workload::default(), Workload::default()],
            ..RunSpec::default()
        };
        assert!(!run.mixes_workers());
        run.workloads[1].overrides.engine = Some(EngineKind::Auto);
        assert!(!run.mixes_workers(), "the run's own engine again");
        run.workloads[1].overrides.cpus = Some(vec![0]);
        assert!(run.mixes_workers());
    }
}
