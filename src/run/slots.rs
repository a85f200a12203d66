//! A worker's request slots: one per unit of queue depth of each of its streams, each
//! with its buffer (in one aligned pool) and verify tickets. A slot's index is the
//! tag of the request it holds, so a completion finds its bookkeeping with one index,
//! and free slots are kept per stream so a stream never exceeds its queue depth.

use super::buffers::{slot_bytes, AlignedBuf};
use super::data::WorkerData;
use super::stream::{NextIo, Stream, WorkloadShape};
use super::worker_error::WorkerError;
use crate::data::{ReadTicket, WriteTicket};
use crate::engine::{Engine, IoRequest};
use crate::plan::model::Op;

/// Where a slot's request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SlotState {
    Free,
    /// Held by the engine and counted when it completes.
    InFlight,
    /// Passed its deadline and already counted as a timeout, but the engine still
    /// holds it: its completion, when it comes, only frees the slot.
    TimedOut,
}

/// Per in-flight request bookkeeping.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    pub stream: u32,
    /// Workload of the request in this slot (a share mix picks one per I/O).
    pub workload: u32,
    pub retries: u32,
    pub op: Op,
    pub len: u32,
    pub offset: u64,
    pub intended_ns: u64,
    pub submit_ns: u64,
    pub buf: *mut u8,
    pub target: u32,
    /// Connection of the request on its target (see `IoRequest::conn`).
    pub conn: u32,
    pub state: SlotState,
    /// Per-request priority; 0 = the thread's.
    pub ioprio: u16,
    /// A write with RWF_ATOMIC.
    pub atomic: bool,
    /// A read-back of the stream's own writes (fio's `verify_backlog`), counted
    /// apart from the workload's reads.
    pub read_back: bool,
}

impl Slot {
    /// The request this slot holds, as pushed to the engine.
    pub fn request(&self, tag: u32) -> IoRequest {
        IoRequest {
            op: self.op,
            target: self.target,
            offset: self.offset,
            len: self.len,
            buf: self.buf,
            tag: tag as u64,
            conn: self.conn,
            ioprio: self.ioprio,
            atomic: self.atomic,
        }
    }
}

/// One I/O about to be issued: what it is and whose it is.
pub(super) struct Issue {
    pub workload: u32,
    pub target: u32,
    pub stream_id: u32,
    pub conn: u32,
    pub io: NextIo,
    pub intended_ns: u64,
    /// A read-back of the stream's own writes (fio's `verify_backlog`).
    pub read_back: bool,
}

/// Every request slot of a worker with its verify tickets, indexed by the request's tag.
pub(super) struct SlotTable {
    pub slots: Vec<Slot>,
    pub wtickets: Vec<Vec<WriteTicket>>,
    pub rtickets: Vec<Vec<ReadTicket>>,
    /// Free slots per stream.
    pub free: Vec<Vec<u32>>,
    /// The buffers every slot points into. Never freed while the engine may still
    /// write into them (see [`SlotTable::leak_pool`]).
    pool: Option<AlignedBuf>,
}

impl SlotTable {
    /// Builds the slots for `streams` with one pool of buffers. An engine done with
    /// a buffer when `push` returns, with no read to check afterwards, needs only one
    /// buffer: every slot shares it, and it stays hot in the cache. Errs with the
    /// pool size when the pool cannot be allocated.
    pub fn new(
        streams: &[Stream],
        shapes: &[WorkloadShape],
        data: &WorkerData,
        share_one: bool,
    ) -> Result<Self, usize> {
        let slot_sizes: Vec<usize> = streams
            .iter()
            .map(|s| {
                let max_bs = s
                    .workloads()
                    .iter()
                    .map(|&w| shapes[w as usize].max_bs)
                    .max()
                    .unwrap_or(0);
                slot_bytes(max_bs as u64)
            })
            .collect();
        let pool_bytes: usize = if share_one {
            slot_sizes.iter().copied().max().unwrap_or(0)
        } else {
            streams
                .iter()
                .zip(&slot_sizes)
                .map(|(s, &b)| b * s.qd as usize)
                .sum()
        };
        let pool = AlignedBuf::new(pool_bytes).ok_or(pool_bytes)?;
        let total: usize = streams.iter().map(|s| s.qd as usize).sum();
        let mut slots: Vec<Slot> = Vec::with_capacity(total);
        let mut free: Vec<Vec<u32>> = Vec::with_capacity(streams.len());
        let mut cursor = 0usize;
        for (si, s) in streams.iter().enumerate() {
            let mut f = Vec::with_capacity(s.qd as usize);
            for _ in 0..s.qd {
                f.push(slots.len() as u32);
                slots.push(Slot {
                    stream: si as u32,
                    workload: s.workload,
                    retries: 0,
                    op: Op::Read,
                    len: 0,
                    offset: 0,
                    intended_ns: 0,
                    submit_ns: 0,
                    // SAFETY: cursor + slot size stays within the pool (sizes summed above).
                    buf: unsafe { pool.as_mut_ptr().add(cursor) },
                    target: 0,
                    conn: 0,
                    state: SlotState::Free,
                    ioprio: 0,
                    atomic: false,
                    read_back: false,
                });
                if !share_one {
                    cursor += slot_sizes[si];
                }
            }
            free.push(f);
        }
        // Verify tickets per slot, sized once for the slot's largest transfer.
        let unit = data.unit();
        let mut wtickets = Vec::with_capacity(slots.len());
        let mut rtickets = Vec::with_capacity(slots.len());
        for sl in &slots {
            let n = streams[sl.stream as usize]
                .workloads()
                .iter()
                .map(|&w| &shapes[w as usize])
                .filter(|sh| data.verifying(sh.target))
                .map(|sh| sh.max_bs as usize / unit + 1)
                .max()
                .unwrap_or(0);
            wtickets.push(Vec::with_capacity(n));
            rtickets.push(Vec::with_capacity(n));
        }
        Ok(SlotTable {
            slots,
            wtickets,
            rtickets,
            free,
            pool: Some(pool),
        })
    }

    /// Prepares slot `idx` for `issue` (content, verify tickets) and queues it on the
    /// engine, submitted at `now`.
    #[inline(always)]
    pub fn start<E: Engine>(
        &mut self,
        engine: &mut E,
        data: &mut WorkerData,
        idx: u32,
        issue: Issue,
        now: u64,
    ) -> Result<(), WorkerError> {
        let Issue {
            workload,
            target,
            stream_id,
            conn,
            io,
            intended_ns,
            read_back,
        } = issue;
        // SAFETY: `idx` came off a free list (`own`).
        let slot = unsafe { own_mut(&mut self.slots, idx as usize) };
        slot.workload = workload;
        slot.op = io.op;
        slot.len = io.len;
        slot.offset = io.offset;
        slot.intended_ns = intended_ns;
        slot.submit_ns = now;
        slot.retries = 0;
        slot.target = target;
        slot.conn = conn;
        slot.state = SlotState::InFlight;
        slot.ioprio = io.ioprio;
        slot.atomic = io.atomic;
        slot.read_back = read_back;
        match io.op {
            Op::Write => {
                // SAFETY: the slot's buffer holds at least max_bs ≥ len bytes, owned
                // by this worker and not in use by any in-flight request.
                let buf = unsafe { std::slice::from_raw_parts_mut(slot.buf, io.len as usize) };
                let wt = &mut self.wtickets[idx as usize];
                data.on_write_submit(target, workload, io.offset, buf, stream_id, wt, now)
                    .map_err(WorkerError::Journal)?;
            }
            // Only a verified target's reads have tickets (and only the test is
            // inlined here).
            Op::Read if data.verifying(target) => {
                let rt = &mut self.rtickets[idx as usize];
                data.register_read(target, workload, io.offset, io.len, rt)
            }
            Op::Read => {}
            // No content, and nothing verified (a run refuses verify with trims).
            Op::Trim => {}
        }
        Ok(engine.push(slot.request(idx))?)
    }

    /// Releases slot `idx`'s verify tickets without checking anything: the request
    /// failed, timed out, or ended after the run. A write counts as possibly landed;
    /// `reissued`: it was issued on two paths (see `WorkerData::on_write_complete`).
    pub fn release_tickets(&mut self, data: &mut WorkerData, idx: usize, reissued: bool, now: u64) {
        let slot = self.slots[idx];
        match slot.op {
            Op::Write => {
                let _ = data.on_write_complete(
                    slot.target,
                    &mut self.wtickets[idx],
                    false,
                    reissued,
                    now,
                );
            }
            Op::Read => {
                data.on_read_complete(
                    slot.target,
                    "",
                    slot.offset,
                    &[],
                    &mut self.rtickets[idx],
                    false,
                );
            }
            Op::Trim => {}
        }
    }

    /// Base and length of the buffer pool (for engines that register it).
    pub fn pool(&self) -> (*mut u8, usize) {
        self.pool
            .as_ref()
            .map_or((std::ptr::null_mut(), 0), |p| (p.as_mut_ptr(), p.len()))
    }

    /// Gives the pool up without freeing it: the engine may still write into it.
    pub fn leak_pool(&mut self) {
        std::mem::forget(self.pool.take());
    }
}

/// `v[i]` for an index the worker made itself, without the bounds test, on the
/// per-I/O path (about 25 of its 330 instructions per I/O were those tests).
///
/// # Safety
/// `i < v.len()`. The worker's indices are its own: a stream index comes from
/// `0..streams.len()` (a token, timer or hold, a slot's `stream`), a workload index
/// from a stream's or slot's `workload`, which launch took from the run's workloads
/// (`stats`, `shapes` and the free lists are sized to match), a slot index from a
/// free list, which holds only indices of [`SlotTable::slots`]; none of these
/// vectors changes length while the worker runs. Debug builds (the tests) check it.
#[inline(always)]
pub(super) unsafe fn own<T>(v: &[T], i: usize) -> &T {
    debug_assert!(i < v.len(), "index {i} of {}", v.len());
    // SAFETY: the caller's.
    unsafe { v.get_unchecked(i) }
}

/// [`own`], mutable.
///
/// # Safety
/// As [`own`].
#[inline(always)]
pub(super) unsafe fn own_mut<T>(v: &mut [T], i: usize) -> &mut T {
    debug_assert!(i < v.len(), "index {i} of {}", v.len());
    // SAFETY: the caller's.
    unsafe { v.get_unchecked_mut(i) }
}
