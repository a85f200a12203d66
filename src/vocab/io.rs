//! How a run's I/O is issued and made durable, in the words the plan's `io` table and
//! the result's `runs[].io` share: io_uring's knobs and the call a periodic flush
//! makes. The trade-off: the checks of these settings against each other, whose
//! messages name command-line flags, stay in `plan::tuning`.

use super::skip::{is_false, is_zero_u32 as is_zero};
use serde::{Deserialize, Serialize};

/// The call a periodic flush makes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum SyncKind {
    /// fsync(2): data and all metadata.
    #[default]
    Fsync,
    /// fdatasync(2): data and the metadata needed to read it back.
    Fdatasync,
    /// sync_file_range(2) over the bytes the stream wrote since its previous flush
    /// (lowest offset to highest end), with these `SYNC_FILE_RANGE_*` bits: fio's
    /// `sync_file_range=FLAGS:N`. `write` alone starts write-back and does not wait.
    SyncFileRange(u8),
}

/// `SYNC_FILE_RANGE_*` bit names, by bit (1, 2, 4), as fio spells them.
const RANGE_BITS: [&str; 3] = ["wait_before", "write", "wait_after"];

/// Each kind's name, indexed by [`SyncKind::index`]: the flag sets of
/// sync_file_range in bit order.
const KIND_NAMES: [&str; 9] = [
    "fsync",
    "fdatasync",
    "sync_file_range:wait_before",
    "sync_file_range:write",
    "sync_file_range:wait_before,write",
    "sync_file_range:wait_after",
    "sync_file_range:wait_before,wait_after",
    "sync_file_range:write,wait_after",
    "sync_file_range:wait_before,write,wait_after",
];

impl SyncKind {
    pub fn is_default(&self) -> bool {
        *self == SyncKind::Fsync
    }

    fn index(self) -> usize {
        match self {
            SyncKind::Fsync => 0,
            SyncKind::Fdatasync => 1,
            SyncKind::SyncFileRange(bits) => 1 + usize::from(bits & 7),
        }
    }

    pub fn name(self) -> &'static str {
        KIND_NAMES[self.index()]
    }

    /// `fsync`, `fdatasync` (`datasync`), or `sync_file_range:FLAGS` with FLAGS
    /// among `wait_before`, `write`, `wait_after` joined by commas (`sync_file_range`
    /// alone: `write`).
    pub fn parse(s: &str) -> Option<SyncKind> {
        let s = s.trim().to_ascii_lowercase();
        match s.as_str() {
            "fsync" => return Some(SyncKind::Fsync),
            "fdatasync" | "datasync" => return Some(SyncKind::Fdatasync),
            "sync_file_range" => return Some(SyncKind::SyncFileRange(2)),
            _ => {}
        }
        let flags = s.strip_prefix("sync_file_range:")?;
        SyncKind::range_flags(flags).map(SyncKind::SyncFileRange)
    }

    /// fio's `sync_file_range` flag words (`wait_before,write`) as bits; `None` when
    /// a word is not one of them or none is given.
    pub fn range_flags(words: &str) -> Option<u8> {
        let mut bits = 0u8;
        for w in words.split(',').map(str::trim) {
            let i = RANGE_BITS.iter().position(|b| *b == w)?;
            bits |= 1 << i;
        }
        (bits != 0).then_some(bits)
    }

    /// What a message lists as the accepted names.
    pub const EXPECTED: &'static str =
        "fsync, fdatasync or sync_file_range:FLAGS (FLAGS: wait_before, write, wait_after, joined by commas)";
}

impl From<SyncKind> for String {
    fn from(k: SyncKind) -> String {
        k.name().to_string()
    }
}

impl TryFrom<String> for SyncKind {
    type Error = String;
    fn try_from(s: String) -> Result<SyncKind, String> {
        SyncKind::parse(&s).ok_or_else(|| format!("'{s}' is not {}", SyncKind::EXPECTED))
    }
}

/// A workload's periodic flushes: after every `every` completed writes of a stream
/// (0 = never), a `kind` flush.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flushes {
    pub every: u32,
    #[serde(default, skip_serializing_if = "SyncKind::is_default")]
    pub kind: SyncKind,
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
