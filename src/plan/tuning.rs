//! How a run's I/O is issued and made durable, beyond what it is: io_uring knobs
//! (registered buffers and files, submission-queue polling, polled completions, batch
//! sizes) and write durability (O_DSYNC, a flush every N writes). Kept apart from the
//! workload model because they change the cost of each I/O, not the I/O itself; every
//! field defaults to "what ioscope does when not told", so a plan that never mentions
//! them serialises without them.

use crate::vocab::skip::{is_false, is_zero_u32 as is_zero};
use serde::{Deserialize, Serialize};

pub use crate::vocab::io::{SyncKind, UringOptions};

/// Engine and durability settings of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoTuning {
    /// io_uring settings (ignored by other engines).
    #[serde(default, skip_serializing_if = "UringOptions::is_default")]
    pub uring: UringOptions,
    /// Open targets with O_DSYNC: every write is stable on the device when it
    /// completes (diskspd's write-through, fio's `sync=1`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub write_through: bool,
    /// Flush after every N completed writes of a stream (0 = never): fio's
    /// `fsync=N`/`fdatasync=N`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sync_every: u32,
    /// Which call the flush is.
    #[serde(default, skip_serializing_if = "SyncKind::is_default")]
    pub sync_kind: SyncKind,
}

impl IoTuning {
    pub fn is_default(&self) -> bool {
        *self == IoTuning::default()
    }

    /// Checks the settings against each other (on the plan alone, before any target
    /// is opened); the message names the flag.
    pub fn check(&self) -> Result<(), TuningError> {
        self.uring.check()?;
        if self.sync_every == 0 && self.sync_kind != SyncKind::Fsync {
            return Err(TuningError::SyncKindAlone(self.sync_kind.name()));
        }
        Ok(())
    }
}

/// Settings that contradict each other; the message names the flag.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TuningError {
    #[error("--sync-kind {0} needs --sync-every N")]
    SyncKindAlone(&'static str),
    #[error("--sqpoll-cpu needs --sqpoll")]
    SqpollCpuAlone,
    #[error("--batch-complete-min {min} is above --batch-complete-max {max}")]
    BatchBounds { min: u32, max: u32 },
}

impl UringOptions {
    /// Checks the settings against each other; the message names the option.
    pub fn check(&self) -> Result<(), TuningError> {
        if self.sqpoll_cpu.is_some() && !self.sqpoll {
            return Err(TuningError::SqpollCpuAlone);
        }
        if self.batch_complete_max > 0 && self.batch_complete_min > self.batch_complete_max {
            return Err(TuningError::BatchBounds {
                min: self.batch_complete_min,
                max: self.batch_complete_max,
            });
        }
        Ok(())
    }
}
