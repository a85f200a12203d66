//! A worker: one OS thread, optionally pinned, that owns an engine and runs many
//! streams. Everything touched per I/O — engine, buffers, RNGs, histograms, counters —
//! belongs to the worker: no lock, no atomic read-modify-write, no allocation per I/O.
//! The only shared state is a stop flag (a relaxed load per loop turn) and the channel
//! that takes one snapshot per interval.
//!
//! Loop shape: issue every I/O that is ready (closed-loop streams with a free slot,
//! open-loop streams whose intended time has come), submit them with one engine call
//! that also waits for at least one completion, read the clock once, account every
//! completion. Open-loop I/O is timed from its intended time, so a stalled device's
//! backlog shows in the latency (the coordinated-omission correction).

use super::buffers::{slot_bytes, AlignedBuf};
use super::clock::IntervalClock;
use super::data::WorkerData;
use super::pacing::Pacer;
use super::stream::{NextIo, Stream, WorkloadShape};
use crate::clock::now_ns;
use crate::data::{ReadTicket, WriteTicket};
use crate::engine::{Completion, Engine, IoRequest, Targets};
use crate::errors::{chain, Chain};
use crate::plan::model::Op;
use crate::result::ErrorSample;
use crate::stats::snapshot::{Snapshot, WorkloadStats};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;

/// Most error samples a worker keeps per run.
const MAX_ERROR_SAMPLES: usize = 8;

/// What to do when an I/O fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorPolicy {
    Stop,
    Continue,
    /// Resubmit a failed I/O up to N times before counting it as an error (which
    /// then stops the run).
    Retry(u32),
}

/// Everything a worker needs, moved into its thread.
pub struct WorkerSetup {
    pub index: usize,
    pub cpu: Option<usize>,
    pub targets: Targets,
    pub shapes: Vec<WorkloadShape>,
    pub streams: Vec<Stream>,
    pub clock: IntervalClock,
    /// Monotonic ns at which measured time ends (`None` = pass-limited).
    pub end_ns: Option<u64>,
    pub stop: Arc<AtomicBool>,
    pub error_stop: Arc<AtomicBool>,
    pub tx: Sender<Snapshot>,
    pub policy: ErrorPolicy,
    /// Write content and verification.
    pub data: WorkerData,
    /// How to wait for open-loop intended times.
    pub pacer: Pacer,
    /// Emptied stats of earlier snapshots, handed back by the collector for reuse.
    pub recycled: std::sync::mpsc::Receiver<Vec<WorkloadStats>>,
    /// Flushes every N writes per stream (`--sync-every`).
    pub flush: super::flush::Flusher,
}

/// Per in-flight request bookkeeping.
#[derive(Debug, Clone, Copy)]
struct Slot {
    stream: u32,
    /// Workload of the request in this slot (a share mix picks one per I/O).
    workload: u32,
    retries: u32,
    op: Op,
    len: u32,
    offset: u64,
    intended_ns: u64,
    submit_ns: u64,
    buf: *mut u8,
}

/// Pins the calling thread to one CPU. Failure is reported, not fatal.
pub fn pin_to_cpu(cpu: usize) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET indexes within its fixed size (checked).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Runs the worker loop to the end and sends its last snapshot.
pub fn run_worker<E: Engine>(mut engine: E, mut setup: WorkerSetup) {
    // Precise sleeps for open-loop schedules: the default 50 us timer slack would
    // show up as issue jitter.
    // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    if let Some(cpu) = setup.cpu {
        if let Err(e) = pin_to_cpu(cpu) {
            eprintln!(
                "warning: worker {} could not pin to CPU {cpu}: {e}",
                setup.index
            );
        }
    }
    let total_slots: usize = setup.streams.iter().map(|s| s.qd as usize).sum();
    let slot_sizes: Vec<usize> = setup
        .streams
        .iter()
        .map(|s| {
            let max_bs = s
                .workloads()
                .iter()
                .map(|&w| setup.shapes[w as usize].max_bs)
                .max()
                .unwrap_or(0);
            slot_bytes(max_bs as u64)
        })
        .collect();
    // An engine that is done with a buffer when `push` returns, with no read to check
    // afterwards, needs only one buffer: every slot shares it, and it stays hot in
    // the cache instead of cycling through one buffer per stream.
    let share_one = engine.completes_inline()
        && !(0..setup.targets.len() as u32).any(|t| setup.data.verifying(t));
    let pool_bytes: usize = if share_one {
        slot_sizes.iter().copied().max().unwrap_or(0)
    } else {
        setup
            .streams
            .iter()
            .zip(&slot_sizes)
            .map(|(s, &b)| b * s.qd as usize)
            .sum()
    };
    let Some(pool) = AlignedBuf::new(pool_bytes) else {
        let _ = setup.tx.send(fatal_snapshot(
            &setup,
            format!("cannot allocate {pool_bytes} bytes of I/O buffers"),
        ));
        return;
    };
    if let Err(e) = engine.register_buffers(pool.as_mut_ptr(), pool_bytes) {
        let _ = setup.tx.send(fatal_snapshot(&setup, e.to_string()));
        return;
    }
    let mut slots: Vec<Slot> = Vec::with_capacity(total_slots);
    let mut free: Vec<Vec<u32>> = Vec::with_capacity(setup.streams.len());
    let mut cursor = 0usize;
    for (si, s) in setup.streams.iter().enumerate() {
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
            });
            if !share_one {
                cursor += slot_sizes[si];
            }
        }
        free.push(f);
    }

    // Verify tickets per slot, sized once for the slot's largest transfer.
    let unit = setup.data.unit();
    let mut wtickets: Vec<Vec<WriteTicket>> = Vec::with_capacity(slots.len());
    let mut rtickets: Vec<Vec<ReadTicket>> = Vec::with_capacity(slots.len());
    for sl in &slots {
        let n = setup.streams[sl.stream as usize]
            .workloads()
            .iter()
            .map(|&w| &setup.shapes[w as usize])
            .filter(|sh| setup.data.verifying(sh.target))
            .map(|sh| sh.max_bs as usize / unit + 1)
            .max()
            .unwrap_or(0);
        wtickets.push(Vec::with_capacity(n));
        rtickets.push(Vec::with_capacity(n));
    }
    let mut table = SlotTable {
        slots,
        wtickets,
        rtickets,
    };

    // Closed-loop tokens: one per free slot of a stream with work left.
    let mut ready: Vec<u32> = Vec::with_capacity(total_slots);
    // Open-loop timers: (intended time, stream).
    let mut timers: BinaryHeap<Reverse<(u64, u32)>> =
        BinaryHeap::with_capacity(setup.streams.len());
    // Open-loop streams whose due I/O waits for a free slot.
    let mut waiting: Vec<bool> = vec![false; setup.streams.len()];
    let start_ns = setup.clock.start_ns;
    for (si, s) in setup.streams.iter_mut().enumerate() {
        if let Some(sched) = s.schedule.as_mut() {
            sched.next_due_ns += start_ns as f64;
            timers.push(Reverse((sched.next_due_ns as u64, si as u32)));
        } else {
            for _ in 0..s.qd {
                ready.push(si as u32);
            }
        }
    }

    let open_loop_any = setup.shapes.iter().any(|s| s.open_loop);
    let mut stats = new_stats_from(&setup.shapes);
    let mut samples: Vec<ErrorSample> = Vec::new();
    let mut interval: u64 = 0;
    let mut next_boundary = setup.clock.boundary_ns(0);
    let mut completions: Vec<Completion> = Vec::with_capacity(total_slots.max(1));
    let mut inflight: u32 = 0;
    let mut stopping = false;
    let mut fatal: Option<String> = None;
    let shapes = std::mem::take(&mut setup.shapes);
    // The clock as read at the end of a wait, used as the next turn's `now`.
    let mut woke_at: Option<u64> = None;

    loop {
        let now = woke_at.take().unwrap_or_else(now_ns);
        if now >= next_boundary {
            let snap = Snapshot {
                worker: setup.index,
                index: interval,
                end_ns: now,
                last: false,
                workloads: std::mem::replace(
                    &mut stats,
                    setup
                        .recycled
                        .try_recv()
                        .unwrap_or_else(|_| new_stats_from(&shapes)),
                ),
                error_samples: std::mem::take(&mut samples),
                fatal: None,
                verify: Default::default(),
                pacing: setup.pacer.take_stats(),
            };
            if setup.tx.send(snap).is_err() {
                // Collector gone: nothing more can be reported.
                return;
            }
            interval += 1;
            next_boundary = setup.clock.boundary_ns(interval);
        }
        if setup.end_ns.is_some_and(|e| now >= e) {
            // The measured time is over: what is still in flight completes after it and
            // is drained below, uncounted.
            break;
        }
        if !stopping && setup.stop.load(Ordering::Relaxed) {
            stopping = true;
        }
        if !stopping {
            // Closed loop: fill every free slot.
            while let Some(si) = ready.pop() {
                let s = &mut setup.streams[si as usize];
                let wl = s.pick_workload();
                let shape = &shapes[wl as usize];
                let Some(io) = s.next_io(shape) else {
                    continue;
                };
                let Some(slot_idx) = free[si as usize].pop() else {
                    continue;
                };
                s.inflight += 1;
                inflight += 1;
                let issue = Issue {
                    workload: wl,
                    target: shape.target,
                    stream_id: s.id,
                    io,
                    intended_ns: now,
                };
                if let Err(e) = table.start(&mut engine, &mut setup.data, slot_idx, issue, now) {
                    fatal = Some(e);
                    break;
                }
            }
            // Open loop: issue everything whose intended time has come.
            while let Some(&Reverse((due, si))) = timers.peek() {
                if due > now {
                    break;
                }
                timers.pop();
                let s = &mut setup.streams[si as usize];
                let Some(slot_idx) = free[si as usize].pop() else {
                    // All slots busy: the I/O waits inside ioscope, its clock running.
                    waiting[si as usize] = true;
                    continue;
                };
                let wl = s.pick_workload();
                let shape = &shapes[wl as usize];
                let Some(io) = s.next_io(shape) else {
                    free[si as usize].push(slot_idx);
                    continue;
                };
                let intended = s.take_due();
                if let Some(lag) = stats[wl as usize].lag.as_mut() {
                    lag.record(now.saturating_sub(intended));
                }
                s.inflight += 1;
                inflight += 1;
                if let Some(d) = s.next_due_ns() {
                    timers.push(Reverse((d, si)));
                }
                let issue = Issue {
                    workload: wl,
                    target: shape.target,
                    stream_id: s.id,
                    io,
                    intended_ns: intended,
                };
                if let Err(e) = table.start(&mut engine, &mut setup.data, slot_idx, issue, now) {
                    fatal = Some(e);
                    break;
                }
            }
        }
        if fatal.is_some() {
            break;
        }
        if inflight == 0 && (stopping || (ready.is_empty() && timers.is_empty())) {
            break;
        }
        // Wait no later than the next interval boundary or the next intended time.
        let mut wake = next_boundary;
        if open_loop_any {
            if let Some(Reverse((due, _))) = timers.peek() {
                wake = wake.min(*due);
            }
        }
        let timeout = wake.saturating_sub(now).max(1);
        if inflight == 0 {
            // Nothing in flight and nothing due yet: wait for the next event the way
            // the pacing mode says (sleep, busy-wait, or sleep then busy-wait).
            woke_at = Some(setup.pacer.wait_until(now, wake));
            continue;
        }
        if let Err(e) = setup.data.before_submit(now) {
            fatal = Some(format!("journal: {e}"));
            break;
        }
        if let Err(e) = engine.submit_and_reap(1, Some(timeout), &mut completions) {
            fatal = Some(chain(&e));
            break;
        }
        if completions.is_empty() {
            continue;
        }
        let reap_ns = now_ns();
        for c in completions.drain(..) {
            let tag = c.tag as usize;
            let slot = table.slots[tag];
            let done = if c.done_ns != 0 { c.done_ns } else { reap_ns };
            let si = slot.stream as usize;
            let target = shapes[slot.workload as usize].target;
            if c.result < 0 {
                if let ErrorPolicy::Retry(n) = setup.policy {
                    if slot.retries < n && !stopping {
                        // Resubmit as it was: same buffer, same verify tickets.
                        table.slots[tag].retries += 1;
                        if let Err(e) = engine.push(IoRequest {
                            op: slot.op,
                            target,
                            offset: slot.offset,
                            len: slot.len,
                            buf: slot.buf,
                            tag: c.tag,
                        }) {
                            fatal = Some(chain(&e));
                        }
                        continue;
                    }
                }
            }
            let ok = c.result == slot.len as i64;
            let data_res = match slot.op {
                Op::Write => {
                    setup
                        .data
                        .on_write_complete(target, &mut table.wtickets[tag], ok, reap_ns)
                }
                Op::Read => {
                    if !table.rtickets[tag].is_empty() {
                        // SAFETY: the read completed; its `len` bytes in the slot are
                        // the worker's and no request uses them now.
                        let buf =
                            unsafe { std::slice::from_raw_parts(slot.buf, slot.len as usize) };
                        setup.data.on_read_complete(
                            target,
                            &setup.targets[target as usize].uri,
                            slot.offset,
                            buf,
                            &mut table.rtickets[tag],
                            ok,
                        );
                    }
                    Ok(())
                }
            };
            if let Err(e) = data_res {
                fatal = Some(format!("journal: {}", Chain(&e)));
            }
            let s = &mut setup.streams[si];
            s.inflight -= 1;
            inflight -= 1;
            free[si].push(c.tag as u32);
            let ws = &mut stats[slot.workload as usize].ops[slot.op.index()];
            if c.result < 0 {
                ws.errors += 1;
                if samples.len() < MAX_ERROR_SAMPLES {
                    let errno = (-c.result) as i32;
                    samples.push(ErrorSample {
                        op: slot.op.name().into(),
                        target: setup.targets[shapes[slot.workload as usize].target as usize]
                            .uri
                            .clone(),
                        offset: slot.offset,
                        len: slot.len as u64,
                        errno,
                        message: std::io::Error::from_raw_os_error(errno).to_string(),
                    });
                }
                if setup.policy != ErrorPolicy::Continue {
                    setup.error_stop.store(true, Ordering::Relaxed);
                    setup.stop.store(true, Ordering::Relaxed);
                }
            } else {
                ws.ios += 1;
                ws.bytes += c.result as u64;
                ws.lat.record(done.saturating_sub(slot.intended_ns));
                if let Some(svc) = ws.svc.as_mut() {
                    svc.record(done.saturating_sub(slot.submit_ns));
                }
                if slot.op == Op::Write {
                    let fd = setup.targets[target as usize].fd();
                    let fs = &mut stats[slot.workload as usize].flush;
                    if setup.flush.on_write(si, fd, fs).is_some()
                        && setup.policy != ErrorPolicy::Continue
                    {
                        setup.error_stop.store(true, Ordering::Relaxed);
                        setup.stop.store(true, Ordering::Relaxed);
                    }
                }
            }
            if s.schedule.is_some() {
                if waiting[si] {
                    waiting[si] = false;
                    if let Some(d) = s.next_due_ns() {
                        timers.push(Reverse((d, si as u32)));
                    }
                }
            } else if s.bytes_left > 0 {
                ready.push(si as u32);
            }
        }
    }
    // Drain what is still in flight; those completions fall after the end and are not
    // counted. Buffers must outlive them.
    let drain_deadline = now_ns() + 30_000_000_000;
    while inflight > 0 && now_ns() < drain_deadline {
        if engine
            .submit_and_reap(1, Some(100_000_000), &mut completions)
            .is_err()
        {
            break;
        }
        inflight -= completions.len() as u32;
        for c in completions.drain(..) {
            let tag = c.tag as usize;
            let slot = table.slots[tag];
            let target = shapes[slot.workload as usize].target;
            let ok = c.result == slot.len as i64;
            match slot.op {
                Op::Write => {
                    let _ = setup.data.on_write_complete(
                        target,
                        &mut table.wtickets[tag],
                        ok,
                        now_ns(),
                    );
                }
                Op::Read => {
                    // Not checked: the read ended after the run; release its tickets.
                    setup.data.on_read_complete(
                        target,
                        "",
                        slot.offset,
                        &[],
                        &mut table.rtickets[tag],
                        false,
                    );
                }
            }
        }
    }
    if let Err(e) = setup.data.finish() {
        fatal.get_or_insert(format!("journal: {}", Chain(&e)));
    }
    let _ = setup.tx.send(Snapshot {
        worker: setup.index,
        index: interval,
        end_ns: now_ns(),
        last: true,
        workloads: stats,
        error_samples: samples,
        fatal,
        verify: std::mem::take(&mut setup.data.counts),
        pacing: setup.pacer.take_stats(),
    });
    if inflight > 0 {
        // The kernel may still write into these buffers: never free them.
        std::mem::forget(pool);
    }
}

fn new_stats_from(shapes: &[WorkloadShape]) -> Vec<WorkloadStats> {
    shapes
        .iter()
        .map(|s| WorkloadStats::new(s.open_loop))
        .collect()
}

fn fatal_snapshot(setup: &WorkerSetup, msg: String) -> Snapshot {
    Snapshot {
        worker: setup.index,
        index: 0,
        end_ns: now_ns(),
        last: true,
        workloads: new_stats_from(&setup.shapes),
        error_samples: Vec::new(),
        fatal: Some(msg),
        verify: Default::default(),
        pacing: Default::default(),
    }
}

/// Every request slot of a worker with its verify tickets, indexed by the request's tag.
struct SlotTable {
    slots: Vec<Slot>,
    wtickets: Vec<Vec<WriteTicket>>,
    rtickets: Vec<Vec<ReadTicket>>,
}

/// One I/O about to be issued: what it is and whose it is.
struct Issue {
    workload: u32,
    target: u32,
    stream_id: u32,
    io: NextIo,
    intended_ns: u64,
}

impl SlotTable {
    /// Prepares slot `idx` for `issue` (content, verify tickets) and queues it on the
    /// engine, submitted at `now`.
    #[inline]
    fn start<E: Engine>(
        &mut self,
        engine: &mut E,
        data: &mut WorkerData,
        idx: u32,
        issue: Issue,
        now: u64,
    ) -> Result<(), String> {
        let Issue {
            workload,
            target,
            stream_id,
            io,
            intended_ns,
        } = issue;
        let slot = &mut self.slots[idx as usize];
        slot.workload = workload;
        slot.op = io.op;
        slot.len = io.len;
        slot.offset = io.offset;
        slot.intended_ns = intended_ns;
        slot.submit_ns = now;
        slot.retries = 0;
        match io.op {
            Op::Write => {
                // SAFETY: the slot's buffer holds at least max_bs ≥ len bytes, owned
                // by this worker and not in use by any in-flight request.
                let buf = unsafe { std::slice::from_raw_parts_mut(slot.buf, io.len as usize) };
                let wt = &mut self.wtickets[idx as usize];
                data.on_write_submit(target, io.offset, buf, stream_id, wt, now)
                    .map_err(|e| format!("journal: {}", Chain(&e)))?;
            }
            Op::Read => {
                data.on_read_submit(target, io.offset, io.len, &mut self.rtickets[idx as usize])
            }
        }
        engine
            .push(IoRequest {
                op: io.op,
                target,
                offset: io.offset,
                len: io.len,
                buf: slot.buf,
                tag: idx as u64,
            })
            .map_err(|e| chain(&e))
    }
}
