//! Periodic flushes (`--sync-every N`, fio's `fsync=N`/`fdatasync=N`): after every N
//! completed writes of a stream, the worker flushes the target that took the Nth
//! write with fsync(2) or fdatasync(2), and times it. An engine that can queue a
//! flush does (io_uring: `IORING_OP_FSYNC` ordered after every request queued before
//! it, see [`Engine::push_flush`](crate::engine::Engine::push_flush)); its time runs
//! from the push to the reap of its completion, which includes waiting for the
//! writes before it, as an application's flush does. Other engines flush in the
//! worker, synchronously — as an application that flushes waits for it — so the
//! worker's other streams wait too; that is the cost being measured. Flushes are
//! counted apart from reads and writes: a flush moves no data of its own.

use crate::plan::model::RunSpec;
use crate::plan::tuning::SyncKind;
use crate::result::FlushTotals;
use crate::stats::snapshot::{OpStats, WorkloadStats};
use std::os::unix::io::RawFd;

/// Marks the completion tag of a queued flush (request tags are slot indices).
pub const FLUSH_TAG: u64 = 1 << 63;

/// One worker's flush schedule: writes since the last flush, per stream, and the
/// flushes its engine holds.
#[derive(Debug, Clone)]
pub struct Flusher {
    every: u32,
    kind: SyncKind,
    since: Vec<u32>,
    /// Queued flushes by tag index: (workload, push time); `None` = free.
    queued: Vec<Option<(u32, u64)>>,
    /// Set once the engine said it cannot queue flushes.
    inline: bool,
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
            queued: Vec::new(),
            inline: false,
        }
    }

    /// Counts a completed write of `stream`; true when it is the Nth since the last
    /// flush, so a flush is due.
    #[inline]
    pub fn due(&mut self, stream: usize) -> bool {
        if self.every == 0 {
            return false;
        }
        let n = &mut self.since[stream];
        *n += 1;
        if *n < self.every {
            return false;
        }
        *n = 0;
        true
    }

    /// Whether the flush is fdatasync(2) rather than fsync(2).
    pub fn datasync(&self) -> bool {
        self.kind == SyncKind::Fdatasync
    }

    /// A tag for a flush of `workload` about to be queued at `now`, or `None` when
    /// the engine cannot queue flushes (then flush with [`Flusher::call`]).
    pub fn reserve(&mut self, workload: u32, now: u64) -> Option<u64> {
        if self.inline {
            return None;
        }
        let i = match self.queued.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.queued.push(None);
                self.queued.len() - 1
            }
        };
        self.queued[i] = Some((workload, now));
        Some(FLUSH_TAG | i as u64)
    }

    /// Takes back a reserved tag the engine did not queue; `inline` when the engine
    /// has no queued flushes at all (every later flush is then a call).
    pub fn unreserve(&mut self, tag: u64, inline: bool) {
        self.queued[(tag & !FLUSH_TAG) as usize] = None;
        self.inline |= inline;
    }

    /// The workload a queued flush (by its tag) was issued for.
    pub fn workload_of(&self, tag: u64) -> Option<u32> {
        self.queued
            .get((tag & !FLUSH_TAG) as usize)
            .copied()
            .flatten()
            .map(|(w, _)| w)
    }

    /// Accounts a queued flush's completion (`result` 0 or a negated errno, reaped at
    /// `now`) in its workload's `stats`. Returns the errno of a failed flush.
    pub fn complete(
        &mut self,
        tag: u64,
        result: i64,
        now: u64,
        stats: &mut [WorkloadStats],
    ) -> Option<i32> {
        let (workload, pushed_ns) = self.queued[(tag & !FLUSH_TAG) as usize].take()?;
        let fs = &mut stats[workload as usize].flush;
        if result < 0 {
            fs.errors += 1;
            return Some((-result) as i32);
        }
        fs.ios += 1;
        fs.lat.record(now.saturating_sub(pushed_ns));
        None
    }

    /// Flushes `fd` in the calling thread and records the call in `stats`. Returns
    /// the errno of a failed flush.
    pub fn call(&self, fd: RawFd, stats: &mut OpStats) -> Option<i32> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_nth_write_of_a_stream_is_due_and_queued_flushes_are_counted_on_completion() {
        let mut f = Flusher::new(3, SyncKind::Fdatasync, 2);
        assert!(f.datasync());
        let due: Vec<bool> = (0..6).map(|_| f.due(0)).collect();
        assert_eq!(due, [false, false, true, false, false, true]);
        assert!(!f.due(1), "each stream counts its own writes");
        let mut stats = vec![WorkloadStats::new(false), WorkloadStats::new(false)];
        let a = f.reserve(1, 1_000).unwrap();
        let b = f.reserve(0, 2_000).unwrap();
        assert_ne!(a, b);
        assert!(a & FLUSH_TAG != 0 && b & FLUSH_TAG != 0);
        assert_eq!(f.complete(a, 0, 5_000, &mut stats), None);
        assert_eq!(
            f.complete(b, -(libc::EIO as i64), 6_000, &mut stats),
            Some(libc::EIO)
        );
        assert_eq!((stats[1].flush.ios, stats[1].flush.errors), (1, 0));
        assert_eq!((stats[0].flush.ios, stats[0].flush.errors), (0, 1));
        assert_eq!(stats[1].flush.lat.count(), 1);
        // A freed tag is reused; an engine without queued flushes ends reserving.
        assert_eq!(f.reserve(0, 7_000), Some(a));
        f.unreserve(a, true);
        assert_eq!(f.reserve(0, 8_000), None);
        // Never flushing: nothing is ever due.
        let mut never = Flusher::new(0, SyncKind::Fsync, 1);
        assert!(!never.due(0));
    }
}
