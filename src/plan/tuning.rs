//! How a run's I/O is issued and made durable, beyond what it is: io_uring knobs
//! (registered buffers and files, submission-queue polling, polled completions, batch
//! sizes) and write durability (O_DSYNC, a flush every N writes). Kept apart from the
//! workload model because they change the cost of each I/O, not the I/O itself; every
//! field defaults to "what ioscope does when not told", so a plan that never mentions
//! them serialises without them.

use crate::vocab::skip::{is_false, is_zero_u32 as is_zero};
use serde::{Deserialize, Serialize};

pub use crate::vocab::io::{Flushes, SyncKind, UringOptions};

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

    /// The run's periodic flushes, which a workload's own replace.
    pub fn flushes(&self) -> Flushes {
        Flushes {
            every: self.sync_every,
            kind: self.sync_kind,
        }
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

/// The io_uring keys of a job file's tables, in the order its messages list them.
pub const URING_KEYS: &[&str] = &[
    "fixed_bufs",
    "register_files",
    "sqpoll",
    "sqpoll_cpu",
    "hipri",
    "batch_submit",
    "batch_complete_min",
    "batch_complete_max",
];
/// The durability keys of a job file's tables.
pub const DURABILITY_KEYS: &[&str] = &["write_through", "sync_every", "sync_kind"];

/// The durability keys a workload may set for itself (its own flushes).
pub const FLUSH_KEYS: &[&str] = &["sync_every", "sync_kind"];

/// [`IoTuning`] as a job file's flat keys ([`URING_KEYS`], [`DURABILITY_KEYS`]):
/// what the reader collects from one table (`None` = not given there) and what the
/// writer emits (`None` = ioscope's default, left out).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IoKeys {
    pub fixed_bufs: Option<bool>,
    pub register_files: Option<bool>,
    pub sqpoll: Option<bool>,
    pub sqpoll_cpu: Option<u32>,
    pub hipri: Option<bool>,
    pub batch_submit: Option<u32>,
    pub batch_complete_min: Option<u32>,
    pub batch_complete_max: Option<u32>,
    pub write_through: Option<bool>,
    pub sync_every: Option<u32>,
    pub sync_kind: Option<SyncKind>,
}

impl IoKeys {
    /// The keys that differ from ioscope's defaults.
    pub fn from_tuning(t: &IoTuning) -> Self {
        let u = &t.uring;
        let nonzero = |n: u32| (n != 0).then_some(n);
        IoKeys {
            fixed_bufs: u.fixed_bufs.then_some(true),
            register_files: u.register_files,
            sqpoll: u.sqpoll.then_some(true),
            sqpoll_cpu: u.sqpoll_cpu,
            hipri: u.hipri.then_some(true),
            batch_submit: nonzero(u.batch_submit),
            batch_complete_min: nonzero(u.batch_complete_min),
            batch_complete_max: nonzero(u.batch_complete_max),
            write_through: t.write_through.then_some(true),
            sync_every: nonzero(t.sync_every),
            sync_kind: (!t.sync_kind.is_default()).then_some(t.sync_kind),
        }
    }

    /// Only the io_uring keys of these.
    pub fn with_uring_only(self) -> IoKeys {
        IoKeys {
            write_through: None,
            sync_every: None,
            sync_kind: None,
            ..self
        }
    }

    /// `over`'s values win where it has them.
    pub fn overlay(self, over: IoKeys) -> IoKeys {
        IoKeys {
            fixed_bufs: over.fixed_bufs.or(self.fixed_bufs),
            register_files: over.register_files.or(self.register_files),
            sqpoll: over.sqpoll.or(self.sqpoll),
            sqpoll_cpu: over.sqpoll_cpu.or(self.sqpoll_cpu),
            hipri: over.hipri.or(self.hipri),
            batch_submit: over.batch_submit.or(self.batch_submit),
            batch_complete_min: over.batch_complete_min.or(self.batch_complete_min),
            batch_complete_max: over.batch_complete_max.or(self.batch_complete_max),
            write_through: over.write_through.or(self.write_through),
            sync_every: over.sync_every.or(self.sync_every),
            sync_kind: over.sync_kind.or(self.sync_kind),
        }
    }

    /// The keys over ioscope's defaults.
    pub fn into_tuning(self) -> IoTuning {
        let base = IoTuning::default();
        IoTuning {
            uring: UringOptions {
                fixed_bufs: self.fixed_bufs.unwrap_or(base.uring.fixed_bufs),
                register_files: self.register_files.or(base.uring.register_files),
                sqpoll: self.sqpoll.unwrap_or(base.uring.sqpoll),
                sqpoll_cpu: self.sqpoll_cpu.or(base.uring.sqpoll_cpu),
                hipri: self.hipri.unwrap_or(base.uring.hipri),
                batch_submit: self.batch_submit.unwrap_or(base.uring.batch_submit),
                batch_complete_min: self
                    .batch_complete_min
                    .unwrap_or(base.uring.batch_complete_min),
                batch_complete_max: self
                    .batch_complete_max
                    .unwrap_or(base.uring.batch_complete_max),
            },
            write_through: self.write_through.unwrap_or(base.write_through),
            sync_every: self.sync_every.unwrap_or(base.sync_every),
            sync_kind: self.sync_kind.unwrap_or(base.sync_kind),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_key_set() -> IoTuning {
        IoTuning {
            uring: UringOptions {
                fixed_bufs: true,
                register_files: Some(false),
                sqpoll: true,
                sqpoll_cpu: Some(3),
                hipri: true,
                batch_submit: 4,
                batch_complete_min: 2,
                batch_complete_max: 8,
            },
            write_through: true,
            sync_every: 16,
            sync_kind: SyncKind::Fdatasync,
        }
    }

    #[test]
    fn keys_written_read_back_as_the_same_tuning() {
        for t in [IoTuning::default(), every_key_set()] {
            assert_eq!(IoKeys::from_tuning(&t).into_tuning(), t);
        }
        assert_eq!(IoKeys::from_tuning(&IoTuning::default()), IoKeys::default());
    }

    #[test]
    fn the_key_lists_name_the_fields() {
        let written = serde_json::to_value(IoKeys::from_tuning(&every_key_set())).unwrap();
        let fields: Vec<&str> = written
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        let mut listed = [URING_KEYS, DURABILITY_KEYS].concat();
        listed.sort_unstable();
        let mut fields = fields;
        fields.sort_unstable();
        assert_eq!(fields, listed);
        assert_eq!(written["sync_kind"], "fdatasync");
    }

    #[test]
    fn a_later_table_wins_where_it_gives_a_key() {
        let run = IoKeys {
            sqpoll: Some(true),
            sync_every: Some(4),
            ..IoKeys::default()
        };
        let own = IoKeys {
            sync_every: Some(8),
            ..IoKeys::default()
        };
        let t = run.overlay(own).into_tuning();
        assert!(t.uring.sqpoll);
        assert_eq!(t.sync_every, 8);
    }
}
