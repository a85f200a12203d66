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
//!
//! Each workload flushes on its own schedule (fio's per-job `fsync`), and a flush may
//! be sync_file_range(2) over what the stream wrote since its last one (fio's
//! `sync_file_range=write:N`), always called in the worker. A workload with
//! `fsync_on_close` fsyncs each target it wrote when the worker's I/O is over, timed
//! and counted with its flushes (fio does not time that one). One with
//! `fsync_each_file` fsyncs a file of a file set a stream wrote when the stream's
//! next write goes to another file, and the last one at the end (vdbench's
//! `openflags=fsync`, which fsyncs before it closes a file), always in the worker.

use crate::plan::model::RunSpec;
use crate::plan::tuning::{Flushes, SyncKind};
use crate::result::FlushTotals;
use crate::stats::snapshot::{OpStats, WorkloadStats};
use std::os::unix::io::RawFd;

/// Marks the completion tag of a queued flush (request tags are slot indices).
pub const FLUSH_TAG: u64 = 1 << 63;

/// One stream's writes since its last flush: how many, and the bytes they span.
#[derive(Debug, Clone, Copy)]
struct Since {
    writes: u32,
    lo: u64,
    hi: u64,
}

impl Default for Since {
    fn default() -> Self {
        Since {
            writes: 0,
            lo: u64::MAX,
            hi: 0,
        }
    }
}

/// A flush that is due: its call and, for sync_file_range, the bytes it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    pub kind: SyncKind,
    pub offset: u64,
    pub len: u64,
}

impl Due {
    /// A `kind` flush of a whole file (a range of length 0 runs to its end).
    pub fn whole_file(kind: SyncKind) -> Due {
        Due {
            kind,
            offset: 0,
            len: 0,
        }
    }
}

/// One worker's flush schedule: each workload's flushes (by the worker's workload
/// index), the writes since the last flush per stream, and the flushes its engine
/// holds.
#[derive(Debug, Clone)]
pub struct Flusher {
    of_workload: Vec<Flushes>,
    any: bool,
    since: Vec<Since>,
    /// Queued flushes by tag index: (workload, push time); `None` = free.
    queued: Vec<Option<(u32, u64)>>,
    /// Set once the engine said it cannot queue flushes.
    inline: bool,
    /// Per workload: fsync what it wrote when its I/O is over (fio's `fsync_on_close`).
    on_close: Vec<bool>,
    /// The (workload, target) pairs written that `on_close` will flush.
    written: Vec<(u32, u32)>,
    /// Per workload: fsync each file its streams wrote as they move on (`fsync_each_file`).
    each_file: Vec<bool>,
    /// Per stream, with `each_file`: the (workload, file) its last write went to.
    current: Vec<Option<(u32, RawFd)>>,
}

impl Flusher {
    /// A schedule for `streams` streams of workloads flushing as `of_workload` says
    /// (`every` = 0: that workload never flushes).
    /// `on_close` marks the workloads that fsync what they wrote at the end.
    pub fn new(of_workload: Vec<Flushes>, on_close: Vec<bool>, streams: usize) -> Self {
        let any = of_workload.iter().any(|f| f.every > 0);
        Flusher {
            on_close,
            written: Vec::new(),
            each_file: Vec::new(),
            current: Vec::new(),
            of_workload,
            any,
            since: if any {
                vec![Since::default(); streams]
            } else {
                Vec::new()
            },
            queued: Vec::new(),
            inline: false,
        }
    }

    /// Counts a completed write of `stream` (for `workload`, of `len` bytes at
    /// `offset`); the flush to make when it is the Nth since the last one.
    #[inline]
    pub fn due(&mut self, stream: usize, workload: u32, offset: u64, len: u32) -> Option<Due> {
        if !self.any {
            return None;
        }
        let f = self.of_workload.get(workload as usize)?;
        if f.every == 0 {
            return None;
        }
        let n = &mut self.since[stream];
        n.writes += 1;
        n.lo = n.lo.min(offset);
        n.hi = n.hi.max(offset + u64::from(len));
        if n.writes < f.every {
            return None;
        }
        let due = Due {
            kind: f.kind,
            offset: n.lo,
            len: n.hi - n.lo,
        };
        *n = Since::default();
        Some(due)
    }

    /// Notes that `workload` wrote to `target`, when it fsyncs on close.
    #[inline]
    pub fn wrote(&mut self, workload: u32, target: u32) {
        if self.on_close.get(workload as usize) == Some(&true)
            && !self.written.contains(&(workload, target))
        {
            self.written.push((workload, target));
        }
    }

    /// Whether `workload` fsyncs each file it wrote as its streams move on.
    #[inline]
    pub fn each_file(&self, workload: u32) -> bool {
        self.each_file.get(workload as usize) == Some(&true)
    }

    /// Notes that `stream`'s write (for `workload`) went to file `fd`; the file it
    /// left, to fsync now, when that was another.
    pub fn moved_to(&mut self, stream: usize, workload: u32, fd: RawFd) -> Option<RawFd> {
        if self.current.len() <= stream {
            self.current.resize(stream + 1, None);
        }
        match self.current[stream].replace((workload, fd)) {
            Some((_, left)) if left != fd => Some(left),
            _ => None,
        }
    }

    /// The file each stream wrote last, by workload, to fsync now that the I/O is
    /// over; emptied.
    pub fn take_current(&mut self) -> Vec<(u32, RawFd)> {
        std::mem::take(&mut self.current)
            .into_iter()
            .flatten()
            .collect()
    }

    /// The (workload, target) pairs to fsync now that the I/O is over; emptied.
    pub fn take_on_close(&mut self) -> Vec<(u32, u32)> {
        std::mem::take(&mut self.written)
    }

    /// The schedule of a worker of `run` with `streams` streams: each workload's
    /// flushes and whether it fsyncs on close, by the run's workload index.
    pub fn of_run(run: &RunSpec, streams: usize) -> Self {
        let flushes = run.workloads.iter().map(|w| run.flushes_of(w)).collect();
        let on_close = run
            .workloads
            .iter()
            .map(|w| run.fsyncs_on_close(w))
            .collect();
        let mut f = Flusher::new(flushes, on_close, streams);
        f.each_file = run
            .workloads
            .iter()
            .map(|w| run.fsyncs_each_file(w))
            .collect();
        f
    }

    /// A tag for a flush of `workload` about to be queued at `now`, or `None` when
    /// the engine cannot queue flushes (then flush with [`Flusher::call`]).
    /// sync_file_range is always called in the worker.
    pub fn reserve(&mut self, due: Due, workload: u32, now: u64) -> Option<u64> {
        if self.inline || matches!(due.kind, SyncKind::SyncFileRange(_)) {
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
}

/// Makes `due` on `fd` in the calling thread and records the call in `stats`.
/// Returns the errno of a failed flush.
pub fn call(due: Due, fd: RawFd, stats: &mut OpStats) -> Option<i32> {
    let t0 = crate::clock::now_ns();
    // SAFETY: fd belongs to an opened target that outlives every worker.
    let r = unsafe {
        match due.kind {
            SyncKind::Fsync => libc::fsync(fd),
            SyncKind::Fdatasync => libc::fdatasync(fd),
            SyncKind::SyncFileRange(bits) => libc::sync_file_range(
                fd,
                due.offset as libc::off64_t,
                due.len as libc::off64_t,
                libc::c_uint::from(bits),
            ),
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

/// The flush totals of `stats` (one workload's, or all of a run's with `workload`
/// `None`), or `None` when none of them flushes (periodically or on close).
/// Workloads flushing with different calls give the kind "mixed".
pub fn totals(
    stats: &[WorkloadStats],
    run: &RunSpec,
    workload: Option<usize>,
    duration_s: f64,
) -> Option<FlushTotals> {
    let mut kinds = run
        .workloads
        .iter()
        .enumerate()
        .filter(|(i, _)| workload.map_or(true, |w| w == *i))
        .filter_map(|(_, w)| match run.flushes_of(w) {
            f if f.every > 0 => Some(f.kind.name()),
            _ if run.fsyncs_on_close(w) || run.fsyncs_each_file(w) => Some(SyncKind::Fsync.name()),
            _ => None,
        });
    let first = kinds.next()?;
    let kind = if kinds.all(|k| k == first) {
        first
    } else {
        "mixed"
    };
    let mut all = OpStats::default();
    for w in stats {
        all += &w.flush;
    }
    Some(FlushTotals {
        kind: kind.into(),
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
        let every3 = Flushes {
            every: 3,
            kind: SyncKind::Fdatasync,
        };
        let mut f = Flusher::new(vec![every3, every3], vec![false; 2], 2);
        let due: Vec<bool> = (0..6)
            .map(|i| f.due(0, 0, i * 4096, 4096).is_some())
            .collect();
        assert_eq!(due, [false, false, true, false, false, true]);
        assert!(
            f.due(1, 0, 0, 4096).is_none(),
            "each stream counts its own writes"
        );
        let d = Due {
            kind: SyncKind::Fdatasync,
            offset: 0,
            len: 0,
        };
        let mut stats = vec![WorkloadStats::new(false), WorkloadStats::new(false)];
        let a = f.reserve(d, 1, 1_000).unwrap();
        let b = f.reserve(d, 0, 2_000).unwrap();
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
        assert_eq!(f.reserve(d, 0, 7_000), Some(a));
        f.unreserve(a, true);
        assert_eq!(f.reserve(d, 0, 8_000), None);
        // Never flushing: nothing is ever due.
        let mut never = Flusher::new(vec![Flushes::default()], vec![false], 1);
        assert!(never.due(0, 0, 0, 4096).is_none());
    }

    #[test]
    fn each_workload_flushes_on_its_own_schedule_and_a_range_covers_the_writes_since() {
        let range = Flushes {
            every: 2,
            kind: SyncKind::SyncFileRange(2),
        };
        let mut f = Flusher::new(vec![Flushes::default(), range], vec![false, true], 2);
        assert!(f.due(0, 0, 0, 4096).is_none(), "workload 0 never flushes");
        assert!(f.due(1, 1, 8192, 4096).is_none());
        let d = f
            .due(1, 1, 0, 4096)
            .expect("the second write of workload 1");
        assert_eq!(
            (d.kind, d.offset, d.len),
            (SyncKind::SyncFileRange(2), 0, 12288)
        );
        assert_eq!(
            f.reserve(d, 1, 0),
            None,
            "sync_file_range is called, not queued"
        );
        // The next range starts afresh.
        assert!(f.due(1, 1, 40960, 4096).is_none());
        assert_eq!(
            f.due(1, 1, 45056, 8192).map(|d| (d.offset, d.len)),
            Some((40960, 12288))
        );
        // Only workload 1 fsyncs on close, each target it wrote once.
        for (w, t) in [(0, 0), (1, 3), (1, 3), (1, 0)] {
            f.wrote(w, t);
        }
        assert_eq!(f.take_on_close(), [(1, 3), (1, 0)]);
        assert!(f.take_on_close().is_empty());
    }
}
