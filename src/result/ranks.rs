//! The result model's multi-rank block: what `mpirun -n N ioscope …` adds to a run
//! besides the merged totals and intervals (docs/mpi.md, docs/result-schema.md).
//! Kept apart from the single-process model so that model reads unchanged.

use super::{Cpu, LatencyStats};
use serde::{Deserialize, Serialize};

/// One rank's own figures over the measured part of the run (`runs[].ranks[]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankResult {
    pub rank: u32,
    /// The rank's host name (MPI processor name).
    pub host: String,
    /// The host definition (vdbench `hd=`) the rank played, in a plan that has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hd: Option<String>,
    pub ios: u64,
    pub bytes: u64,
    /// I/Os per second over the rank's own measured time.
    pub iops: f64,
    /// Latency from the intended issue time, over the rank's measured I/Os.
    pub latency_us: LatencyStats,
    /// Unix time (ns) at which the rank's first worker started issuing I/O; 0 when it
    /// never reported.
    pub first_io_unix_ns: u64,
    /// Seconds from the shared start to the rank's end; absent for a lost rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_s: Option<f64>,
    /// The engine the rank ran (the same on every rank: checked at start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// The rank's own CPU use over its measured time (on its host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Cpu>,
    /// The rank's host and targets, as the result's top-level `env` describes
    /// rank 0's (docs/environment.md); kept as JSON like that one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<serde_json::Value>,
    /// The rank stopped reporting: its figures are those of its last report.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lost: bool,
}

/// How the ranks of a run ran together (`runs[].mpi`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MpiRun {
    /// Number of ranks (MPI world size).
    pub ranks: u32,
    /// How the plan was divided: "all" (every workload on every rank) or "streams".
    pub split: String,
    /// Seconds from the shared start until the first rank finished, and the merged
    /// IOPS up to then (every rank still running: elbencho's "first done").
    pub first_done_s: f64,
    pub first_done_iops: f64,
    /// Seconds until the last rank finished, and the merged IOPS over that time.
    pub last_done_s: f64,
    pub last_done_iops: f64,
    /// Largest difference between ranks' first I/O times, in ms.
    pub first_io_spread_ms: f64,
    /// Why the run failed as a whole (a lost or hung rank), naming the rank and host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
