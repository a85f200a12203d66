//! How a run's I/O is issued and made durable, in the words the plan's `io` table and
//! the result's `runs[].io` share: io_uring's knobs and the call a periodic flush
//! makes. The trade-off: the checks of these settings against each other, whose
//! messages name command-line flags, stay in `plan::tuning`.

use super::skip::{is_false, is_zero_u32 as is_zero};
use serde::{Deserialize, Serialize};

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
}
