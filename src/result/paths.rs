//! The result's view of a multipath target: one entry per path for the run
//! (`runs[].paths[]`) and per interval (`runs[].intervals[].paths[]`, same order).
//! What happened to the paths is in the run's events (`runs[].events[]`, kinds
//! `down`, `up`, `timeout`, `reissue`), and what the failures cost the workload in
//! `runs[].failover`. All absent for a target with one path.

use serde::{Deserialize, Serialize};

/// One path over the measured run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PathResult {
    /// "p0", "p1", …: path 0 is the target's own URI.
    pub name: String,
    pub uri: String,
    /// Multi-rank (MPI) runs: the rank that used the path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// I/Os the path answered successfully.
    pub ios: u64,
    pub bytes: u64,
    /// Failures seen on the path (transport errors, timeouts).
    pub errors: u64,
    /// I/Os taken from the path when it failed and issued again on another.
    pub reissued: u64,
    /// `up`, `down` or `standby` (failover: healthy, not in use) at the end.
    pub state: String,
    /// iSCSI: the LUN's strongest logical-unit designator from VPD page 0x83
    /// (`naa.…`, `eui.…`, `t10.…` or a SCSI name), the same on every path by the
    /// check made when the paths were opened. Absent for NBD and LUNs without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_id: Option<String>,
}

/// One path in one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalPath {
    pub ios: u64,
    /// 10^6 bytes per second.
    pub mbps: f64,
    /// 99th percentile of the service time of the I/Os the path answered (0 when none).
    pub service_us_p99: f64,
    pub errors: u64,
    /// `up`, `down` or `standby` at the interval's end.
    pub state: String,
}

/// What path failures cost the workload: the latency (from the intended time) of the
/// I/Os caught in a failover against the run's normal latency. The failover window is
/// every measured interval in which some path was down or had a path event (timeout,
/// down, re-issue); "normal" is every other measured interval (the whole run when
/// there is no other).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FailoverCost {
    /// Measured intervals in the failover window (0: no path failed).
    pub intervals: u64,
    /// Their length in seconds.
    pub window_s: f64,
    /// p99 latency of the I/Os outside the window.
    pub normal_p99_us: f64,
    /// Largest latency outside the window.
    pub normal_max_us: f64,
    /// I/Os answered in the window.
    pub window_ios: u64,
    /// Those of them with a latency above `normal_p99_us`: the I/Os caught in it.
    pub ios_over_p99: u64,
    /// Their latency beyond `normal_p99_us`, summed: the extra waiting, in ms.
    pub extra_ms: f64,
    /// Largest latency in the window.
    pub max_us: f64,
}
