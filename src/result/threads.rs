//! Per worker thread: what each of a run's OS threads moved, by workload, over the
//! measured time. diskspd reports per thread and per target (its XML result's
//! `Thread/Target` counts); a diskspd translation runs one stream per worker, so a
//! worker here is one diskspd thread. The counts are the same counters the run's
//! totals sum, taken before they are merged, so they add up to the totals exactly.
//! Latency is not kept per thread: only counts (the trade-off that keeps this small).

use serde::{Deserialize, Serialize};

/// One worker thread of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadResult {
    /// The worker's number in the run (0-based).
    pub worker: u32,
    /// Its CPU time (user + system) over the measured intervals, µs.
    #[serde(default)]
    pub cpu_us: u64,
    /// The workloads it did I/O for, in workload order.
    pub workloads: Vec<ThreadWorkload>,
}

/// One worker's I/O for one workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadWorkload {
    /// Index into the run's workloads (its plan order).
    pub workload: u32,
    pub read_ios: u64,
    pub read_bytes: u64,
    pub write_ios: u64,
    pub write_bytes: u64,
    /// Trims, counted apart as in the run's totals.
    #[serde(default, skip_serializing_if = "crate::vocab::skip::is_zero")]
    pub trim_ios: u64,
    #[serde(default, skip_serializing_if = "crate::vocab::skip::is_zero")]
    pub trim_bytes: u64,
}
