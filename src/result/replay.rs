//! How faithful a trace replay was: what the trace held, what the replay changed
//! (speed, cut gaps, remapped offsets) and how close to the trace's schedule its
//! I/Os were issued. One entry per trace workload of a run.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::LatencyStats;

/// One trace workload's replay.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayResult {
    pub workload: String,
    /// The trace file as given.
    pub trace: String,
    /// `fio2`, `fio3`, `blktrace`, `msr` or `csv`.
    pub format: String,
    /// The trace's device this workload replayed.
    pub device: String,
    /// `on-time` or `asap` (a trace without times is replayed asap).
    pub timing: String,
    /// Times were divided by this.
    pub speed: f64,
    /// Replayable I/Os in the trace for this device, and of them reads, writes and
    /// trims (discards).
    pub recorded_ios: u64,
    pub recorded_reads: u64,
    pub recorded_writes: u64,
    pub recorded_trims: u64,
    /// I/Os issued (completed or failed) in the measured time.
    pub issued_ios: u64,
    /// The device's first to last I/O as recorded, after the speed.
    pub recorded_s: f64,
    /// The same span as replayed: less the idle time cut (`cut_s`).
    pub replay_s: f64,
    /// Idle time cut by `--max-gap`.
    pub cut_s: f64,
    /// How offsets beyond the working set were mapped into it, and how many I/Os
    /// that moved; the device's extent as the trace shows it.
    pub remap: String,
    pub remapped_ios: u64,
    pub device_extent_bytes: u64,
    /// Trace records read but not replayed, by kind (flushes, opens, waits, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub skipped: BTreeMap<String, u64>,
    /// On time: how late each I/O was issued against the trace's schedule, and how
    /// many were issued more than 1 ms late.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_us: Option<LatencyStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_ios: Option<u64>,
}
