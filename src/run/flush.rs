//! Periodic flushes (`--sync-every N`, fio's `fsync=N`/`fdatasync=N`): after every N
//! completed writes of a stream, the worker calls fsync(2) or fdatasync(2) on the
//! target that took the Nth write, and times the call. The call is synchronous in
//! the worker, whatever the engine — as an application that flushes waits for it —
//! so the worker's other streams wait too; that is the cost being measured. Flushes
//! are counted apart from reads and writes: a flush moves no data of its own.

use crate::plan::model::RunSpec;
use crate::plan::tuning::SyncKind;
use crate::result::FlushTotals;
use crate::stats::snapshot::{OpStats, WorkloadStats};
use std::os::unix::io::RawFd;

/// One worker's flush schedule: writes since the last flush, per stream.
#[derive(Debug, Clone)]
pub struct Flusher {
    every: u32,
    kind: SyncKind,
    since: Vec<u32>,
}

impl Flusher {
    /// A schedule for `streams` streams; `every` = 0 never flushes.
    pub fn new(every: u32, kind: SyncKind, streams: usize) -> Self {
        Flusher {
            every,
            kind,
            since: if every > 0 {
                vec![0; streams]
            } else {
                Vec::new()
            },
        }
    }

    /// Counts a completed write of `stream` on `fd`; on the Nth, flushes `fd` and
    /// records the call in `stats`. Returns the errno of a failed flush.
    #[inline]
    pub fn on_write(
        &mut self,
        stream: usize,
        fd: Option<RawFd>,
        stats: &mut OpStats,
    ) -> Option<i32> {
        if self.every == 0 {
            return None;
        }
        let n = &mut self.since[stream];
        *n += 1;
        if *n < self.every {
            return None;
        }
        *n = 0;
        let fd = fd?;
        let t0 = crate::clock::now_ns();
        // SAFETY: fd belongs to an opened target that outlives every worker.
        let r = unsafe {
            match self.kind {
                SyncKind::Fsync => libc::fsync(fd),
                SyncKind::Fdatasync => libc::fdatasync(fd),
            }
        };
        if r != 0 {
            stats.errors += 1;
            return Some(
                std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO),
            );
        }
        stats.ios += 1;
        stats.lat.record(crate::clock::now_ns().saturating_sub(t0));
        None
    }
}

/// The flush totals of `stats` (one workload's or all of a run's), or `None` when the
/// run does not flush.
pub fn totals(stats: &[WorkloadStats], run: &RunSpec, duration_s: f64) -> Option<FlushTotals> {
    let io = &run.io;
    if io.sync_every == 0 {
        return None;
    }
    let mut all = OpStats::default();
    for w in stats {
        all += &w.flush;
    }
    Some(FlushTotals {
        kind: io.sync_kind.name().into(),
        ios: all.ios,
        errors: all.errors,
        per_s: if duration_s > 0.0 {
            all.ios as f64 / duration_s
        } else {
            0.0
        },
        latency_us: all.lat.summary_us(false),
    })
}
