//! When a workload issues: its rate (closed or open loop), the arrival process of an
//! open-loop rate, its pauses (late start, think time, stop) and its place in fio's
//! flow control. One set of types for the plan and the result's echo; the trade-off
//! is that every pause field is written only when set, so a result cannot tell "0"
//! from "not recorded" (both mean none).

use super::skip::{is_zero, is_zero_u32};
use serde::{Deserialize, Serialize};

/// Issue rate: closed loop at full speed (`"max"`), or open loop at a fixed rate
/// (`{"iops": N}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rate {
    #[default]
    Max,
    /// Operations per second for the whole workload, split evenly over its streams.
    Iops(f64),
}

/// Arrival process of an open-loop workload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// Evenly spaced intended issue times.
    Uniform,
    /// Poisson arrivals (exponential gaps): what independent clients produce.
    #[default]
    Exponential,
}

/// A workload's place in fio's flow control (`flow`, `flow_id`, `flow_sleep`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flow {
    /// Workloads with the same id are held in ratio to each other.
    pub id: u32,
    /// Weight of each stream (fio's `flow`), at least 1.
    pub weight: u32,
    /// Wait of a held stream before it asks again (fio's `flow_sleep`); 0 = a short
    /// retry.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sleep_ns: u64,
}

/// When a workload's streams hold back: a late start for the whole workload, and
/// think time for each stream of a closed-loop workload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pauses {
    /// Nothing is issued until this long after the run's I/O starts (fio's
    /// `startdelay`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub start_delay_ns: u64,
    /// A closed-loop stream that has issued `think_every_ios` I/Os waits for them all
    /// to complete, then idles this long before it issues again (fio's `thinktime`
    /// with `thinktime_blocks`). 0 = no think time.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub think_ns: u64,
    /// I/Os between think times (at least 1 when `think_ns` is set, unless
    /// `think_io_ns` alone sets the pace).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub think_every_ios: u32,
    /// Time spent issuing I/O between think times (fio's `thinktime_iotime`): the
    /// stream thinks once this long has passed since its last think ended (or its
    /// first I/O), or after `think_every_ios` I/Os when both are set, whichever comes
    /// first. 0 = by count only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub think_io_ns: u64,
    /// Nothing is issued later than this long after the run's I/O starts, warm-up
    /// included (a fio job whose runtime is shorter than its run's); 0 = until the
    /// run ends.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stop_ns: u64,
    /// Each stream issues at most this many I/Os, then stops as if its passes were
    /// done (fio's `number_ios`, per job clone); 0 = no count limit.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stop_after_ios: u64,
    /// Each stream transfers this many bytes per pass, starting each pass at its
    /// region's start (fio's `io_size` when it is not whole passes over `size`, or
    /// the size is the device's); 0 = a pass is the working set.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pass_bytes: u64,
}

impl Pauses {
    pub fn is_none(&self) -> bool {
        *self == Pauses::default()
    }

    /// I/Os between think times, or `None` when the workload never thinks by count
    /// (no think time, or only `think_io_ns` sets the pace).
    pub fn think_batch(&self) -> Option<u32> {
        let by_time_only = self.think_io_ns > 0 && self.think_every_ios == 0;
        (self.think_ns > 0 && !by_time_only).then_some(self.think_every_ios.max(1))
    }
}
