//! The io_uring and durability settings a run used (`runs[].io`), as the result
//! publishes them: the plan's `io` table with each part absent at its default. Kept
//! apart from the plan's own table so a change inside the plan cannot silently change
//! the published schema; the run layer converts (`run::echo::io_echo`) exhaustively.
//! Its parts are the `vocab` types the plan uses (`UringOptions`, `SyncKind`).

use crate::vocab::skip::{is_false, is_zero_u32 as is_zero};
use serde::{Deserialize, Serialize};

pub use crate::vocab::{SyncKind, UringOptions};

/// `runs[].io`: present only when some setting differs from its default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoEcho {
    /// io_uring settings (absent when all are defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uring: Option<UringOptions>,
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
