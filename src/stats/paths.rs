//! Per-path figures of a multipath target for one interval: what each path answered,
//! its service times and its state. The multipath engine fills them, snapshots carry
//! them to the collector, and the result reports them (`runs[].paths[]`,
//! `intervals[].paths[]`). They live here, not in the engine, so that measurement
//! does not depend on how I/O is issued.

use super::histogram::LatencyHistogram;

/// How the result names a path's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathState {
    Up,
    Down,
    Standby,
}

impl PathState {
    pub fn name(self) -> &'static str {
        match self {
            PathState::Up => "up",
            PathState::Down => "down",
            PathState::Standby => "standby",
        }
    }
}

/// Counts of one path, for the whole run or one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathCounts {
    /// Requests the path answered successfully.
    pub ios: u64,
    pub bytes: u64,
    /// Requests that failed or timed out on it.
    pub errors: u64,
    /// Requests taken from it and issued again on another path.
    pub reissued: u64,
}

/// What one path did in an interval, handed to the worker.
#[derive(Debug, Clone)]
pub struct PathSample {
    pub counts: PathCounts,
    /// Service time of its answered requests this interval.
    pub service: LatencyHistogram,
    pub state: PathState,
}
