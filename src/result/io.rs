//! The io_uring and durability settings a run used (`runs[].io`), as the result
//! publishes them: the wire twin of the plan's `io` table. Kept apart from the plan's
//! own type so a change inside the plan cannot silently change the published schema;
//! the run layer converts (`run::echo::io_echo`) with exhaustive matches.

use serde::{Deserialize, Serialize};

/// `runs[].io`: present only when some setting differs from its default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoEcho {
    /// io_uring settings (absent when all are defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uring: Option<UringEcho>,
    /// Targets were opened with O_DSYNC.
    #[serde(default, skip_serializing_if = "is_false")]
    pub write_through: bool,
    /// A flush after every N completed writes of a stream (0 = never).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sync_every: u32,
    /// The flush's call, when not the default `fsync`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_kind: Option<SyncKind>,
}

/// The call a periodic flush made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncKind {
    Fsync,
    Fdatasync,
}

/// io_uring settings; each absent when at its default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UringEcho {
    /// READ_FIXED/WRITE_FIXED on a registered buffer pool.
    #[serde(default, skip_serializing_if = "is_false")]
    pub fixed_bufs: bool,
    /// Whether the targets' descriptors were registered, when said explicitly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub register_files: Option<bool>,
    /// A kernel thread polled the submission queue.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sqpoll: bool,
    /// The CPU the polling thread was bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqpoll_cpu: Option<u32>,
    /// Polled completions (IORING_SETUP_IOPOLL).
    #[serde(default, skip_serializing_if = "is_false")]
    pub hipri: bool,
    /// Requests queued before submission (0 = each at once).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batch_submit: u32,
    /// Completions waited for at least (0 = one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batch_complete_min: u32,
    /// Completions reaped at most per wait (0 = all there are).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batch_complete_max: u32,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}
