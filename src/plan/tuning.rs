//! How a run's I/O is issued and made durable, beyond what it is: io_uring knobs
//! (registered buffers and files, submission-queue polling, polled completions, batch
//! sizes) and write durability (O_DSYNC, a flush every N writes). Kept apart from the
//! workload model because they change the cost of each I/O, not the I/O itself; every
//! field defaults to "what ioscope does when not told", so a plan that never mentions
//! them serialises without them.

use serde::{Deserialize, Serialize};

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

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The call a periodic flush makes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncKind {
    /// fsync(2): data and all metadata.
    #[default]
    Fsync,
    /// fdatasync(2): data and the metadata needed to read it back.
    Fdatasync,
}

impl SyncKind {
    pub fn is_default(&self) -> bool {
        *self == SyncKind::Fsync
    }

    pub fn name(self) -> &'static str {
        match self {
            SyncKind::Fsync => "fsync",
            SyncKind::Fdatasync => "fdatasync",
        }
    }

    pub fn parse(s: &str) -> Option<SyncKind> {
        match s.to_ascii_lowercase().as_str() {
            "fsync" => Some(SyncKind::Fsync),
            "fdatasync" | "datasync" => Some(SyncKind::Fdatasync),
            _ => None,
        }
    }
}

/// io_uring settings, named after fio's options for them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UringOptions {
    /// Register the worker's buffer pool and issue READ_FIXED/WRITE_FIXED (fio
    /// `fixedbufs`): the kernel skips pinning pages per I/O.
    #[serde(default, skip_serializing_if = "is_false")]
    pub fixed_bufs: bool,
    /// Register the targets' descriptors with the ring (fio `registerfiles`).
    /// `None` = on (ioscope's default: it saves a file lookup per I/O).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub register_files: Option<bool>,
    /// A kernel thread polls the submission queue (fio `sqthread_poll`): no system
    /// call per submission, one busy kernel thread per worker.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sqpoll: bool,
    /// CPU the polling thread is bound to (fio `sqthread_poll_cpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqpoll_cpu: Option<u32>,
    /// Polled completions (fio `hipri`, IORING_SETUP_IOPOLL): needs O_DIRECT and a
    /// device with poll queues.
    #[serde(default, skip_serializing_if = "is_false")]
    pub hipri: bool,
    /// Requests queued before they are handed to the kernel (fio
    /// `iodepth_batch_submit`); 0 or 1 = each at once.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batch_submit: u32,
    /// Completions to wait for at least, when waiting (fio
    /// `iodepth_batch_complete_min`); 0 = one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batch_complete_min: u32,
    /// Completions reaped at most per wait (fio `iodepth_batch_complete_max`);
    /// 0 = all that are there.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batch_complete_max: u32,
}

impl UringOptions {
    pub fn is_default(&self) -> bool {
        *self == UringOptions::default()
    }

    /// Whether the targets' descriptors are registered.
    pub fn registers_files(&self) -> bool {
        self.register_files.unwrap_or(true)
    }

    /// The settings as `name=value` words, for the terminal (empty = defaults).
    pub fn summary(&self) -> String {
        let mut out = Vec::new();
        if self.fixed_bufs {
            out.push("fixed-bufs".to_string());
        }
        if self.register_files == Some(false) {
            out.push("register-files=false".into());
        }
        if self.sqpoll {
            out.push(match self.sqpoll_cpu {
                Some(c) => format!("sqpoll(cpu {c})"),
                None => "sqpoll".into(),
            });
        }
        if self.hipri {
            out.push("hipri".into());
        }
        if self.batch_submit > 1 {
            out.push(format!("batch-submit={}", self.batch_submit));
        }
        if self.batch_complete_min > 1 {
            out.push(format!("batch-complete-min={}", self.batch_complete_min));
        }
        if self.batch_complete_max > 0 {
            out.push(format!("batch-complete-max={}", self.batch_complete_max));
        }
        out.join(" ")
    }

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
