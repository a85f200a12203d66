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

use super::clock::IntervalClock;
use super::data::WorkerData;
use super::flush::{Due, FLUSH_TAG};
use super::pacing::Pacer;
use super::slots::{own, own_mut, Issue, SlotState, SlotTable};
use super::stream::{Stream, WorkloadShape};
use super::worker_error::WorkerError;
use crate::clock::now_ns;
use crate::engine::{Completion, Engine, EngineEvent, EngineEventKind, Targets};
use crate::plan::model::Op;
use crate::plan::on_error::ErrorKind;
use crate::result::ErrorSample;
use crate::stats::snapshot::{ConnStats, EventRecord, Snapshot, WorkloadStats};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;

/// Most error samples a worker keeps per run.
const MAX_ERROR_SAMPLES: usize = 8;
/// Most events a worker reports per interval (a stalled connection times out every
/// I/O; the counts are in the connection's errors and timeouts).
const MAX_EVENTS: usize = 16;
/// Room kept beyond [`MAX_EVENTS`] for `down` and `up` events.
const MAX_LINK_EVENTS: usize = 16;
/// Longest wait for requests still in flight after the run (without --io-timeout).
const DRAIN_NS: u64 = 30_000_000_000;

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
    /// Workloads whose own warm-up outlasts the run's: (ns after the start at which
    /// their counting starts, workload), latest first. Their counts so far are
    /// dropped then, so their figures leave their own warm-up out.
    pub ramps: Vec<(u64, u32)>,
    /// Monotonic ns at which measured time ends (`None` = pass-limited); until
    /// [`WorkerSetup::start`] is passed, `clock.start_ns` is 0 and this is the time
    /// from the start.
    pub end_ns: Option<u64>,
    /// This worker's place at the common start, passed once its engine is built.
    pub start: Option<super::start_gate::Arrival>,
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
    /// Connections per target; a stream uses connection `stream id % connections`,
    /// and the worker opens only the ones its streams use (`run::spread`).
    pub connections: u32,
    /// Per-I/O deadline (`--io-timeout`).
    pub io_timeout_ns: Option<u64>,
    /// How network engines set a lost connection up again (`None`: a loss ends the
    /// run, the stop policy).
    pub reconnect: Option<crate::engine::reconnect::Reconnect>,
    /// Flushes every N writes per stream (`--sync-every`).
    pub flush: super::flush::Flusher,
    /// Where the I/Os of recording workloads (`record`) go when the worker ends;
    /// `None` when no workload records.
    pub recorded: Option<Arc<std::sync::Mutex<Vec<super::replay::Recorded>>>>,
}

/// A worker waiting for its engine: the engine factory runs it on the engine it
/// builds, or fails it with the reason none could be built.
pub struct Runner(pub WorkerSetup);

impl crate::engine::factory::Drive for Runner {
    fn run<E: Engine>(self, engine: E) {
        run_worker(engine, self.0)
    }
    fn fail(self, e: crate::engine::EngineError) {
        fail(self.0, e.into())
    }
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

impl WorkerSetup {
    /// Waits at the gate for the common start (every worker has its engine), fixes
    /// the clock and the end to it, and sleeps until then.
    fn wait_for_start(&mut self) {
        if let Some(place) = self.start.take() {
            let start_ns = place.wait_start();
            self.clock.start_ns = start_ns;
            self.end_ns = self.end_ns.map(|d| start_ns + d);
        }
        crate::clock::sleep_until(self.clock.start_ns);
        crate::cluster::mark_first_io();
    }
}

/// Runs the worker loop to the end and sends its last snapshot.
pub fn run_worker<E: Engine>(engine: E, mut setup: WorkerSetup) {
    setup.wait_for_start();
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
    match Worker::new(engine, setup) {
        Ok(w) => w.run(),
        Err(failed) => {
            let (setup, e) = *failed;
            let _ = setup.tx.send(fatal_snapshot(&setup, &e));
        }
    }
}

/// Streams due at a time, earliest first: (time in ns, stream position).
type Timed = BinaryHeap<Reverse<(u64, u32)>>;

/// One worker's loop state: the engine, the slots, what is ready to issue, and the
/// counters of the interval in progress.
pub struct Worker<E: Engine> {
    engine: E,
    setup: WorkerSetup,
    shapes: Vec<WorkloadShape>,
    table: SlotTable,
    /// I/Os of recording workloads settled so far (handed over at the end), and
    /// whether any workload of this worker records.
    recorded: Vec<super::replay::Recorded>,
    recording: bool,
    /// A settled request may have something to keep: an I/O log record or verify
    /// tickets (a workload records, or a target is verified).
    settles: bool,
    /// Closed-loop tokens: one per free slot of a stream with work left.
    ready: Vec<u32>,
    /// Open-loop timers: (intended time, stream).
    timers: Timed,
    /// Open-loop streams whose due I/O waits for a free slot.
    waiting: Vec<bool>,
    /// Closed-loop streams holding back until a time (start delay, think time):
    /// (release time, stream).
    held: Timed,
    open_loop_any: bool,
    stats: Vec<WorkloadStats>,
    /// Per connection (target × connections + conn), this interval.
    conns: Vec<ConnStats>,
    events: Vec<EventRecord>,
    samples: Vec<ErrorSample>,
    interval: u64,
    /// The next interval boundary or end of a workload's own warm-up, whichever
    /// comes first (one comparison per loop turn covers both).
    next_boundary: u64,
    completions: Vec<Completion>,
    /// Requests the engine holds, timed-out ones included.
    inflight: u32,
    /// Of those, requests already counted as timed out.
    timed_out: u32,
    /// When the oldest in-flight request passes its deadline (u64::MAX: none).
    next_deadline_ns: u64,
    stopping: bool,
    fatal: Option<WorkerError>,
    fds: Vec<libc::pollfd>,
    /// Skips the wait when a reply is already queued on the engine's sockets.
    probe: crate::engine::wait::Probe,
    engine_events: Vec<EngineEvent>,
    /// The connections this worker opened, by the engine's number (`IoRequest::conn`,
    /// `0..owned.len()`): their numbers among the run's connections per target.
    owned: Vec<u32>,
    /// Per stream (position in `setup.streams`): the engine's number of its connection.
    stream_conn: Vec<u32>,
    /// Tags among the completions being handled of writes the engine issued on two
    /// paths (see [`Engine::take_reissued_writes`]); empty but for multipath.
    reissued_writes: Vec<u64>,
    /// This thread's CPU time at its last snapshot (or when the loop started).
    cpu_mark_ns: u64,
}

impl<E: Engine> Worker<E> {
    /// Sets the worker up: connections, slots and buffers, the first tokens and
    /// timers. Hands the setup back with the reason when that fails.
    pub fn new(
        mut engine: E,
        mut setup: WorkerSetup,
    ) -> Result<Self, Box<(WorkerSetup, WorkerError)>> {
        let n = setup.connections.max(1);
        let owned = super::spread::owned_connections(setup.streams.iter().map(|s| s.id), n);
        let stream_conn = setup
            .streams
            .iter()
            .map(|s| owned.iter().position(|&c| c == s.id % n).unwrap_or(0) as u32)
            .collect();
        if let Err(e) = engine.connect(owned.len() as u32) {
            return Err(Box::new((setup, e.into())));
        }
        let verifying = setup.data.any_verified();
        let share_one = engine.completes_inline() && !verifying;
        let table = match SlotTable::new(&setup.streams, &setup.shapes, &setup.data, share_one) {
            Ok(t) => t,
            Err(bytes) => return Err(Box::new((setup, WorkerError::Buffers { bytes }))),
        };
        let (base, len) = table.pool();
        if let Err(e) = engine.register_buffers(base, len) {
            return Err(Box::new((setup, e.into())));
        }
        let total_slots = table.slots.len();
        let (ready, timers, held) = first_turn(&mut setup, total_slots);
        let mut shapes = std::mem::take(&mut setup.shapes);
        let recording = shapes.iter().any(|s| s.record);
        // Complete now: what each shape may leave off its streams' I/O path.
        shapes.iter_mut().for_each(WorkloadShape::mark_plain);
        let nconns = setup.targets.len() * setup.connections as usize;
        Ok(Worker {
            recorded: Vec::new(),
            recording,
            settles: verifying || recording,
            waiting: vec![false; setup.streams.len()],
            held,
            open_loop_any: shapes.iter().any(|s| s.open_loop),
            stats: new_stats_from(&shapes),
            conns: vec![ConnStats::default(); nconns],
            events: Vec::new(),
            samples: Vec::new(),
            interval: 0,
            next_boundary: next_tick(&setup, 0),
            completions: Vec::with_capacity(total_slots.max(1)),
            inflight: 0,
            timed_out: 0,
            next_deadline_ns: u64::MAX,
            stopping: false,
            fatal: None,
            fds: Vec::new(),
            probe: Default::default(),
            engine_events: Vec::new(),
            owned,
            stream_conn,
            reissued_writes: Vec::new(),
            cpu_mark_ns: 0,
            engine,
            setup,
            shapes,
            table,
            ready,
            timers,
        })
    }

    /// The loop: issue what is ready, wait for completions (or the next boundary,
    /// intended time or deadline), account them; then drain and report.
    pub fn run(mut self) {
        // The clock as read at the end of a wait, used as the next turn's `now`.
        let mut woke_at: Option<u64> = None;
        // Set-up (connecting, buffers) is not the I/O's CPU.
        self.cpu_mark_ns = crate::clock::thread_cpu_ns();
        loop {
            let now = woke_at.take().unwrap_or_else(now_ns);
            if now >= self.next_boundary && !self.tick(now) {
                // Collector gone: nothing more can be reported.
                return;
            }
            if self.setup.end_ns.is_some_and(|e| now >= e) {
                // The measured time is over: what is still in flight completes after
                // it and is drained below, uncounted.
                break;
            }
            if !self.stopping && self.setup.stop.load(Ordering::Relaxed) {
                self.stopping = true;
            }
            if now >= self.next_deadline_ns {
                // First, so the slots it frees are filled in this same turn.
                self.expire(now);
            }
            if !self.stopping {
                self.release_held(now);
                self.issue_closed_loop(now);
                self.issue_open_loop(now);
            }
            if self.fatal.is_some() {
                break;
            }
            // Stopping with only timed-out requests left, which may never come back
            // (the drain waits one more deadline), or all work done.
            let done = self.timed_out == 0
                && self.ready.is_empty()
                && self.timers.is_empty()
                && self.held.is_empty();
            if self.inflight == self.timed_out && (self.stopping || done) {
                break;
            }
            let wake = self.wake_at();
            // An engine whose own timer is due (a reconnect attempt to start) is given
            // a turn even with nothing in flight: waiting for a time already past
            // would hand back this turn's `now`, and the clock would never move again.
            if self.inflight == 0 && !self.engine.wake_ns().is_some_and(|w| w <= now) {
                // Nothing in flight and nothing due yet: wait for the next event the
                // way the pacing mode says (sleep, busy-wait, or sleep then busy-wait).
                woke_at = Some(self.setup.pacer.wait_until(now, wake));
                continue;
            }
            let reaped = self.reap(now, wake);
            if !self.completions.is_empty() {
                self.complete_all();
            }
            // Every turn, not only one that reaped: a connection can go down (and
            // come back) without a completion, and the turn that fails is the last.
            self.take_engine_events();
            if let Err(e) = reaped {
                self.fatal = Some(e);
                break;
            }
        }
        self.drain();
        self.fsync_on_close();
        // What the engine saw while the run stopped (a `down` after a deadline
        // under the stop policy, a connection lost in the drain) is still the run's.
        self.take_engine_events();
        self.finish();
    }

    /// Hands the interval's counters to the collector; false when it is gone.
    fn send_interval(&mut self, now: u64) -> bool {
        self.fill_conns();
        let nconns = self.conns.len();
        // One entry per workload, whatever comes back: the per-I/O path reads
        // them unchecked (`own`).
        let fresh = self
            .setup
            .recycled
            .try_recv()
            .ok()
            .filter(|v| v.len() == self.shapes.len())
            .unwrap_or_else(|| new_stats_from(&self.shapes));
        let snap = Snapshot {
            worker: self.setup.index,
            index: self.interval,
            end_ns: now,
            last: false,
            workloads: std::mem::replace(&mut self.stats, fresh),
            error_samples: std::mem::take(&mut self.samples),
            fatal: None,
            verify: Default::default(),
            pacing: self.setup.pacer.take_stats(),
            connections: std::mem::replace(&mut self.conns, vec![ConnStats::default(); nconns]),
            events: std::mem::take(&mut self.events),
            paths: self.path_samples(),
            cpu_ns: self.cpu_since_mark(),
        };
        if self.setup.tx.send(snap).is_err() {
            return false;
        }
        self.interval += 1;
        true
    }

    /// An interval boundary or the end of a workload's own warm-up has come: drops
    /// what workloads still in (or just out of) their own warm-up counted, so none of
    /// it reaches the collector, then sends the interval; false when the collector is
    /// gone.
    fn tick(&mut self, now: u64) -> bool {
        let start = self.setup.clock.start_ns;
        for &(_, w) in &self.setup.ramps {
            self.stats[w as usize] = WorkloadStats::new(self.shapes[w as usize].open_loop);
        }
        while let Some(&(at, _)) = self.setup.ramps.last() {
            if now < start.saturating_add(at) {
                break;
            }
            self.setup.ramps.pop();
        }
        if now >= self.setup.clock.boundary_ns(self.interval) && !self.send_interval(now) {
            return false;
        }
        self.next_boundary = next_tick(&self.setup, self.interval);
        true
    }

    /// The connection (the engine's number) that the stream at position `si` uses.
    #[inline]
    fn conn_of(&self, si: u32) -> u32 {
        if self.setup.connections <= 1 {
            0
        } else {
            self.stream_conn[si as usize]
        }
    }

    /// Index into `conns` of the engine's connection `conn` to `target`.
    #[inline]
    fn conn_index(&self, target: u32, conn: u32) -> usize {
        let global = self.owned.get(conn as usize).copied().unwrap_or(conn);
        (target * self.setup.connections + global) as usize
    }

    /// Closed loop: streams whose start delay or think time is over get a token per
    /// free slot.
    fn release_held(&mut self, now: u64) {
        while let Some(&Reverse((at, si))) = self.held.peek() {
            if at > now {
                break;
            }
            self.held.pop();
            let s = &mut self.setup.streams[si as usize];
            if s.thinking {
                // Its think time is over: its I/O time starts again.
                s.io_since_ns = now;
            }
            s.thinking = false;
            s.extras.release();
            if s.bytes_left > 0 {
                let free = s.qd.saturating_sub(s.inflight) as usize;
                self.ready.extend(std::iter::repeat(si).take(free));
            }
        }
    }

    /// Closed loop: fills every free slot of the streams with a token. A stream that
    /// is thinking drops its tokens: it gets them back when its think time is over.
    fn issue_closed_loop(&mut self, now: u64) {
        while let Some(si) = self.ready.pop() {
            // SAFETY: a token's stream index is one of the worker's streams (`own`).
            let issued = if unsafe { own(&self.setup.streams, si as usize) }.plain {
                self.issue_plain(si, now)
            } else {
                self.issue_full(si, now)
            };
            if !issued {
                return;
            }
        }
    }

    /// Issues the next I/O of plain stream `si` (no read-backs, flow group, mix or
    /// think time: [`Stream::mark_plain`]), if it has one; false (with `fatal` set)
    /// when the engine refused it.
    #[inline(always)]
    fn issue_plain(&mut self, si: u32, now: u64) -> bool {
        let conn = self.conn_of(si);
        // SAFETY: a token's stream, and that stream's workload (`own`).
        let s = unsafe { own_mut(&mut self.setup.streams, si as usize) };
        let (wl, shape) = (s.workload, unsafe {
            own(&self.shapes, s.workload as usize)
        });
        if now >= s.stop_at_ns {
            if shape.exit_all {
                self.setup.stop.store(true, Ordering::Relaxed);
            }
            return true;
        }
        let Some(io) = s.next_io(shape) else {
            return true;
        };
        // SAFETY: one free list per stream (`own`).
        let Some(slot_idx) = unsafe { own_mut(&mut self.table.free, si as usize) }.pop() else {
            return true;
        };
        s.inflight += 1;
        // As `issue_of` makes it, from the stream and shape already at hand.
        let issue = Issue {
            workload: wl,
            target: shape.target,
            stream_id: s.id,
            conn,
            io,
            intended_ns: now,
            read_back: false,
        };
        self.start(slot_idx, issue, now)
    }

    /// Issues stream `si`'s next I/O or read-back with every option considered;
    /// false (with `fatal` set) when the engine refused it.
    #[inline]
    fn issue_full(&mut self, si: u32, now: u64) -> bool {
        {
            let s = &mut self.setup.streams[si as usize];
            if s.thinking || s.extras.held() {
                return true;
            }
            if s.extras.read_back_due() {
                return self.issue_read_back(si, now);
            }
        }
        let s = &mut self.setup.streams[si as usize];
        let wl = s.pick_workload();
        let shape = &self.shapes[wl as usize];
        if now >= s.stop_at_ns {
            s.extras.leave(&shape.extras);
            if self.shapes[s.workload as usize].exit_all {
                // fio's exitall on a job with a runtime of its own: it is over.
                self.setup.stop.store(true, Ordering::Relaxed);
            }
            return true;
        }
        if let Some(hold_ns) = s.extras.hold(&shape.extras) {
            self.held.push(Reverse((now.saturating_add(hold_ns), si)));
            return true;
        }
        let Some(io) = s.next_io(shape) else {
            s.extras.leave(&shape.extras);
            return true;
        };
        let Some(slot_idx) = self.table.free[si as usize].pop() else {
            return true;
        };
        s.extras.issued(&shape.extras);
        if s.bytes_left == 0 {
            // Its last I/O: it will not ask again.
            s.extras.leave(&shape.extras);
        }
        s.inflight += 1;
        s.count_for_think(now);
        let issue = self.issue_of(si, wl, io, now);
        self.start(slot_idx, issue, now)
    }

    /// Issues the stream's next read-back of its own writes (fio's `verify_backlog`);
    /// false (with `fatal` set) when the engine refused it.
    #[cold]
    fn issue_read_back(&mut self, si: u32, now: u64) -> bool {
        let s = &mut self.setup.streams[si as usize];
        if now >= s.stop_at_ns {
            return true;
        }
        let Some(slot_idx) = self.table.free[si as usize].pop() else {
            return true;
        };
        let Some(w) = s.extras.next_read_back() else {
            self.table.free[si as usize].push(slot_idx);
            return true;
        };
        s.inflight += 1;
        let io = super::stream::NextIo {
            op: Op::Read,
            offset: w.offset,
            len: w.len,
            ioprio: 0,
            atomic: false,
        };
        let issue = Issue {
            read_back: true,
            ..self.issue_of(si, w.workload, io, now)
        };
        self.start(slot_idx, issue, now)
    }

    /// Stream `si`'s I/O `io` of workload `wl`, meant to start at `intended_ns`.
    #[inline]
    fn issue_of(&self, si: u32, wl: u32, io: super::stream::NextIo, intended_ns: u64) -> Issue {
        Issue {
            workload: wl,
            target: self.shapes[wl as usize].target,
            stream_id: self.setup.streams[si as usize].id,
            conn: self.conn_of(si),
            io,
            intended_ns,
            read_back: false,
        }
    }

    /// A write completed whole: its stream remembers it for a read-back (fio's
    /// `verify_backlog`).
    #[cold]
    fn keep_for_read_back(&mut self, tag: usize) {
        let slot = &self.table.slots[tag];
        self.setup.streams[slot.stream as usize]
            .extras
            .written(super::extension::ReadBack {
                workload: slot.workload,
                offset: slot.offset,
                len: slot.len,
            });
    }

    /// A read-back (fio's `verify_backlog`) completed: counted in the verify
    /// figures, not the workload's reads; a failed one is a read error of its
    /// workload like any other.
    #[cold]
    fn read_back_done(&mut self, tag: usize, result: i64) {
        let slot = self.table.slots[tag];
        if result < 0 {
            self.stats[slot.workload as usize].ops[Op::Read.index()].errors += 1;
            self.count_conn(tag, 0, 1);
            self.error(tag, (-result) as i32);
        } else {
            let counts = &mut self.setup.data.counts;
            counts.backlog_reads += 1;
            counts.backlog_bytes += result as u64;
        }
        self.release(tag);
    }

    /// Open loop: issues everything whose intended time has come.
    fn issue_open_loop(&mut self, now: u64) {
        while let Some(&Reverse((due, si))) = self.timers.peek() {
            if due > now {
                break;
            }
            self.timers.pop();
            let s = &mut self.setup.streams[si as usize];
            if due >= s.stop_at_ns {
                // Its workload has stopped: no more arrivals (and with exit_all, the
                // run stops with it).
                if self.shapes[s.workload as usize].exit_all {
                    self.setup.stop.store(true, Ordering::Relaxed);
                }
                continue;
            }
            let Some(slot_idx) = self.table.free[si as usize].pop() else {
                // All slots busy: the I/O waits inside ioscope, its clock running.
                self.waiting[si as usize] = true;
                continue;
            };
            let wl = s.pick_workload();
            let shape = &self.shapes[wl as usize];
            let Some(io) = s.next_io(shape) else {
                self.table.free[si as usize].push(slot_idx);
                continue;
            };
            let intended = s.take_due();
            if let Some(lag) = self.stats[wl as usize].lag.as_mut() {
                lag.record(now.saturating_sub(intended));
            }
            s.inflight += 1;
            if let Some(d) = s.next_due_ns() {
                self.timers.push(Reverse((d, si)));
            }
            let issue = self.issue_of(si, wl, io, intended);
            if !self.start(slot_idx, issue, now) {
                return;
            }
        }
    }

    /// Starts one request; false (with `fatal` set) when the engine refused it.
    #[inline(always)]
    fn start(&mut self, slot_idx: u32, issue: Issue, now: u64) -> bool {
        self.inflight += 1;
        if let Some(t) = self.setup.io_timeout_ns {
            self.next_deadline_ns = self.next_deadline_ns.min(now + t);
        }
        match self
            .table
            .start(&mut self.engine, &mut self.setup.data, slot_idx, issue, now)
        {
            Ok(()) => true,
            Err(e) => {
                self.fatal = Some(e);
                self.unpushed(slot_idx as usize, now);
                false
            }
        }
    }

    /// Keeps an issued I/O of a recording workload for its I/O log.
    /// Keeps a settled request of a recording workload for its I/O log, with the
    /// time it was submitted. Done as it settles, in the call every completion
    /// already makes, so the issue path carries nothing for it.
    #[cold]
    #[inline(never)]
    fn record(&mut self, tag: usize) {
        let slot = &self.table.slots[tag];
        if slot.read_back || !self.shapes[slot.workload as usize].record {
            return;
        }
        self.recorded.push(super::replay::Recorded {
            t_ns: slot.submit_ns.saturating_sub(self.setup.clock.start_ns),
            intended_ns: slot.intended_ns,
            workload: slot.workload,
            target: slot.target,
            op: slot.op,
            offset: slot.offset,
            len: slot.len,
        });
    }

    /// Frees the slot of a request the engine refused: it is not in flight, so
    /// nothing will complete it (the drain must not wait for it).
    fn unpushed(&mut self, tag: usize, now: u64) {
        self.table
            .release_tickets(&mut self.setup.data, tag, false, now);
        self.release(tag);
    }

    /// When to stop waiting: the next interval boundary, intended time or deadline.
    #[inline]
    fn wake_at(&self) -> u64 {
        let mut wake = self.next_boundary.min(self.next_deadline_ns);
        if let Some(w) = self.engine.wake_ns() {
            wake = wake.min(w);
        }
        if let Some(Reverse((at, _))) = self.held.peek() {
            wake = wake.min(*at);
        }
        if self.open_loop_any {
            if let Some(Reverse((due, _))) = self.timers.peek() {
                wake = wake.min(*due);
            }
        }
        wake
    }

    /// Submits what is queued and waits for completions until `wake`: inside the
    /// engine, or in poll(2) on the engine's descriptors when it has some.
    #[inline]
    fn reap(&mut self, now: u64, wake: u64) -> Result<(), WorkerError> {
        self.setup
            .data
            .before_submit(now)
            .map_err(WorkerError::Journal)?;
        let timeout = wake.saturating_sub(now).max(1);
        self.fds.clear();
        self.engine.poll_fds(&mut self.fds);
        if self.fds.is_empty() {
            return Ok(self
                .engine
                .submit_and_reap(1, Some(timeout), &mut self.completions)?);
        }
        self.engine
            .submit_and_reap(0, Some(0), &mut self.completions)?;
        if !self.completions.is_empty() {
            return Ok(());
        }
        // Asked again: the reap may have sent what was queued (iSCSI), and polling
        // for writability it no longer wants would return at once for nothing.
        self.fds.clear();
        self.engine.poll_fds(&mut self.fds);
        // A reply already queued needs no wait (and no ppoll to learn it).
        if !self.probe.ready(&mut self.fds) {
            crate::engine::wait::poll_until(&mut self.fds, timeout).map_err(WorkerError::Poll)?;
        }
        self.engine.on_ready(&self.fds)?;
        Ok(self
            .engine
            .submit_and_reap(0, Some(0), &mut self.completions)?)
    }

    /// Accounts every reaped completion.
    fn complete_all(&mut self) {
        let reap_ns = now_ns();
        self.engine.take_reissued_writes(&mut self.reissued_writes);
        // Taken out while they are accounted (nothing reads or adds to them then),
        // and handed back with their capacity.
        let mut done = std::mem::take(&mut self.completions);
        for &c in &done {
            self.complete(c, reap_ns);
        }
        done.clear();
        self.completions = done;
        self.reissued_writes.clear();
    }

    /// Records the engine's connection events since the last call. Called every
    /// turn, so the empty case is inlined and the recording is a call.
    #[inline(always)]
    fn take_engine_events(&mut self) {
        self.engine.take_events(&mut self.engine_events);
        if !self.engine_events.is_empty() {
            self.record_engine_events();
        }
    }

    /// Moves the taken engine events into the interval's record.
    #[inline(never)]
    fn record_engine_events(&mut self) {
        let mut events = std::mem::take(&mut self.engine_events);
        for e in events.drain(..) {
            self.event(e.at_ns, e.target, e.conn, e.kind, e.detail);
        }
        self.engine_events = events;
    }

    /// Accounts one completion: counts, latency, verification; frees the slot or,
    /// under `--on-error retry=N`, issues the failed request again.
    #[inline]
    fn complete(&mut self, c: Completion, reap_ns: u64) {
        if c.tag & FLUSH_TAG != 0 {
            self.flushed(c, reap_ns);
            return;
        }
        let tag = c.tag as usize;
        // A copy: one bounds check for every field below.
        let slot = self.table.slots[tag];
        if slot.state == SlotState::TimedOut {
            // Counted when it timed out; now the slot is free again.
            self.timed_out -= 1;
            let reissued = self.was_reissued(tag);
            self.table
                .release_tickets(&mut self.setup.data, tag, reissued, reap_ns);
            self.release(tag);
            return;
        }
        if c.result < 0 {
            if c.result == crate::engine::NOTHING_TO_DO {
                // Nothing to act on (a tree operation found no name in the right
                // state): a skip of the workload, not an operation and not an error.
                self.stats[slot.workload as usize].ops[slot.op.index()].skipped += 1;
                if self.shapes[slot.workload as usize].stop_when_none_left {
                    // Nothing will give it work again: its stream is done.
                    let s = &mut self.setup.streams[slot.stream as usize];
                    s.bytes_left = 0;
                    s.pair = None;
                }
                self.release(tag);
                return;
            }
            if self.retry(tag, reap_ns) {
                return;
            }
        }
        let c = trim_result(c, slot.op, slot.len);
        let ok = c.result == i64::from(slot.len);
        if !ok && self.found_full(tag, c.result) {
            self.filled(tag, reap_ns);
            return;
        }
        self.settle_data(tag, ok, reap_ns);
        if slot.read_back {
            self.read_back_done(tag, c.result);
            return;
        }
        // SAFETY: a slot's workload has its own stats (`own`).
        let ws =
            &mut unsafe { own_mut(&mut self.stats, slot.workload as usize) }.ops[slot.op.index()];
        if c.result < 0 {
            ws.errors += 1;
            self.count_conn(tag, 0, 1);
            self.error(tag, (-c.result) as i32);
        } else {
            let done = if c.done_ns != 0 { c.done_ns } else { reap_ns };
            ws.ios += 1;
            ws.bytes += c.result as u64;
            ws.lat.record(done.saturating_sub(slot.intended_ns));
            if let Some(svc) = ws.svc.as_mut() {
                svc.record(done.saturating_sub(slot.submit_ns));
            }
            let (write, si) = (slot.op == Op::Write, slot.stream as usize);
            self.count_conn(tag, c.result as u64, 0);
            if write {
                self.flush_after_write(tag, reap_ns);
                if ok && self.setup.streams[si].extras.keeps_writes() {
                    self.keep_for_read_back(tag);
                }
            }
        }
        self.release(tag);
    }

    /// Whether a write that came back with `result` found its filesystem full
    /// (ENOSPC, EDQUOT or a short write) on a workload that fills it (fio's
    /// `fill_device`).
    #[inline]
    fn found_full(&self, tag: usize, result: i64) -> bool {
        let slot = &self.table.slots[tag];
        slot.op == Op::Write
            && self.shapes[slot.workload as usize].fill_fs
            && (result >= 0
                || result == -i64::from(libc::ENOSPC)
                || result == -i64::from(libc::EDQUOT))
    }

    /// The filesystem is full: the write is not counted (what it left is settled as
    /// a failed write's), and its stream issues nothing more, as at the end of its
    /// passes. Its read-backs already due still go out.
    #[cold]
    fn filled(&mut self, tag: usize, now: u64) {
        self.settle_data(tag, false, now);
        let s = &mut self.setup.streams[self.table.slots[tag].stream as usize];
        s.bytes_left = 0;
        s.pair = None;
        self.release(tag);
    }

    /// Counts a finished request on its connection. With one connection per target
    /// the counts follow from the workloads' and are filled in per interval instead
    /// ([`Worker::fill_conns`]), which keeps this off the per-I/O path.
    #[inline]
    fn count_conn(&mut self, tag: usize, bytes: u64, errors: u64) {
        if self.setup.connections > 1 {
            let slot = &self.table.slots[tag];
            let cs = self.conn_index(slot.target, slot.conn);
            let cs = &mut self.conns[cs];
            cs.ios += 1 - errors;
            cs.bytes += bytes;
            cs.errors += errors;
        }
    }

    /// With one connection per target: its counts are its target's, summed over
    /// the workloads (timeouts were counted on it directly).
    fn fill_conns(&mut self) {
        if self.setup.connections > 1 {
            return;
        }
        for (shape, w) in self.shapes.iter().zip(&self.stats) {
            let cs = &mut self.conns[shape.target as usize];
            for o in &w.ops {
                cs.ios += o.ios;
                cs.bytes += o.bytes;
                cs.errors += o.errors;
            }
        }
    }

    /// `--sync-every`: counts a write on its stream and flushes when N are done:
    /// queued on the engine when it can, else called here.
    fn flush_after_write(&mut self, tag: usize, now: u64) {
        let slot = self.table.slots[tag];
        self.fsync_left_file(slot);
        let flush = &mut self.setup.flush;
        flush.wrote(slot.workload, slot.target);
        let Some(due) = flush.due(slot.stream as usize, slot.workload, slot.offset, slot.len)
        else {
            return;
        };
        let Some(fd) = self.written_fd(slot) else {
            return;
        };
        // A file set: the file the Nth write went to; a range there is the whole file
        // (length 0: to its end), the writes since possibly spanning several files.
        let due = match self.setup.targets[slot.target as usize].byte_files() {
            Some(_) => Due::whole_file(due.kind),
            None => due,
        };
        let flush = &mut self.setup.flush;
        if let Some(ftag) = flush.reserve(due, slot.workload, now) {
            let datasync = due.kind == crate::plan::tuning::SyncKind::Fdatasync;
            match self.engine.push_flush(slot.target, datasync, ftag) {
                Ok(true) => {
                    self.inflight += 1;
                    return;
                }
                Ok(false) => flush.unreserve(ftag, true),
                Err(e) => {
                    flush.unreserve(ftag, false);
                    self.fatal = Some(e.into());
                    return;
                }
            }
        }
        self.flush_inline(slot.workload, due, fd);
    }

    /// The descriptor of the file `slot`'s write went to: in a file set, the file at
    /// its offset; else the target's own (`None`: a target without one).
    fn written_fd(&self, slot: super::slots::Slot) -> Option<std::os::unix::io::RawFd> {
        let target = &self.setup.targets[slot.target as usize];
        let fd = target.fd()?;
        Some(target.byte_files().map_or(fd, |s| s.locate(slot.offset).0))
    }

    /// Makes `due` on `fd` here, timed in `workload`'s flushes; a failed flush is a
    /// write error of the workload.
    fn flush_inline(&mut self, workload: u32, due: Due, fd: std::os::unix::io::RawFd) {
        if let Some(errno) = super::flush::call(due, fd, &mut self.stats[workload as usize].flush) {
            self.flush_failed(workload, errno);
        }
    }

    /// `fsync_each_file`: the file a stream's previous write went to is fsynced
    /// when this write went to another (in the worker, as vdbench's thread fsyncs
    /// before it closes a file).
    fn fsync_left_file(&mut self, slot: super::slots::Slot) {
        if !self.setup.flush.each_file(slot.workload) {
            return;
        }
        let Some(fd) = self.written_fd(slot) else {
            return;
        };
        let flush = &mut self.setup.flush;
        if let Some(left) = flush.moved_to(slot.stream as usize, slot.workload, fd) {
            let due = Due::whole_file(crate::plan::tuning::SyncKind::Fsync);
            self.flush_inline(slot.workload, due, left);
        }
    }

    /// fio's `fsync_on_close`: each target a workload that asks for it wrote (every
    /// file of a file set) is fsynced once its I/O is over, counted with its flushes;
    /// with `fsync_each_file`, the file each stream wrote last.
    fn fsync_on_close(&mut self) {
        let due = Due::whole_file(crate::plan::tuning::SyncKind::Fsync);
        for (w, fd) in self.setup.flush.take_current() {
            self.flush_inline(w, due, fd);
        }
        for (w, t) in self.setup.flush.take_on_close() {
            let target = &self.setup.targets[t as usize];
            let fds: Vec<_> = match target.byte_files() {
                Some(set) => set.fds().to_vec(),
                None => target.fd().into_iter().collect(),
            };
            for fd in fds {
                self.flush_inline(w, due, fd);
            }
        }
    }

    /// A queued flush came back: counted in its workload's flush totals.
    fn flushed(&mut self, c: Completion, now: u64) {
        self.inflight -= 1;
        let workload = self.setup.flush.workload_of(c.tag);
        let failed = self
            .setup
            .flush
            .complete(c.tag, c.result, now, &mut self.stats);
        if let (Some(w), Some(errno)) = (workload, failed) {
            self.flush_failed(w, errno);
        }
    }

    /// A failed flush (a write error of its workload) stops the run unless the
    /// policy continues on it.
    fn flush_failed(&mut self, workload: u32, errno: i32) {
        if self.stops_run(workload, ErrorKind::Write, errno) {
            self.stop_for_error();
        }
    }

    /// Whether an error of `workload` (`kind`, `errno`) stops the run: the
    /// workload's own policy decides, else the run's `--on-error`.
    fn stops_run(&self, workload: u32, kind: ErrorKind, errno: i32) -> bool {
        match &self.shapes[workload as usize].on_error {
            Some(p) => !p.continues(kind, errno),
            None => self.setup.policy != ErrorPolicy::Continue,
        }
    }

    /// Ends the run because of an error.
    fn stop_for_error(&self) {
        self.setup.error_stop.store(true, Ordering::Relaxed);
        self.setup.stop.store(true, Ordering::Relaxed);
    }

    /// Issues a failed request again in its slot when the policy allows; true if so.
    /// A workload with a policy of its own is never retried (it replaces the run's).
    fn retry(&mut self, tag: usize, now: u64) -> bool {
        let ErrorPolicy::Retry(n) = self.setup.policy else {
            return false;
        };
        let slot = self.table.slots[tag];
        if self.shapes[slot.workload as usize].on_error.is_some() {
            return false;
        }
        if slot.retries >= n || self.stopping {
            return false;
        }
        // Resubmit as it was: same buffer, same verify tickets.
        self.table.slots[tag].retries += 1;
        self.table.slots[tag].state = SlotState::InFlight;
        if let Err(e) = self.engine.push(slot.request(tag as u32)) {
            // Not in flight: the caller counts it as the error it was.
            self.fatal = Some(e.into());
            return false;
        }
        if let Some(t) = self.setup.io_timeout_ns {
            self.table.slots[tag].submit_ns = now;
            self.next_deadline_ns = self.next_deadline_ns.min(now + t);
            let detail = format!(
                "{} {}+{} again (try {})",
                slot.op.name(),
                slot.offset,
                slot.len,
                slot.retries + 2
            );
            self.event(
                now,
                slot.target,
                slot.conn,
                EngineEventKind::Reissue,
                detail,
            );
        }
        true
    }

    /// Whether the write in slot `tag` was issued on two paths (multipath re-issue).
    #[inline]
    fn was_reissued(&self, tag: usize) -> bool {
        !self.reissued_writes.is_empty() && self.reissued_writes.contains(&(tag as u64))
    }

    /// Settles a finished request: keeps it for an I/O log when its workload
    /// records, commits or checks its verify units when it has some. A run that
    /// does neither pays two tests here, in line.
    #[inline(always)]
    fn settle_data(&mut self, tag: usize, ok: bool, now: u64) {
        if !self.settles {
            return;
        }
        if self.recording {
            self.record(tag);
        }
        if !self.table.wtickets[tag].is_empty() || !self.table.rtickets[tag].is_empty() {
            self.settle_tickets(tag, ok, now);
        }
    }

    /// Commits a finished write's verify units or checks a finished read's.
    #[inline(never)]
    fn settle_tickets(&mut self, tag: usize, ok: bool, now: u64) {
        let reissued = self.was_reissued(tag);
        let slot = &self.table.slots[tag];
        let data = &mut self.setup.data;
        let res = match slot.op {
            Op::Write => data.on_write_complete(
                slot.target,
                &mut self.table.wtickets[tag],
                ok,
                reissued,
                now,
            ),
            Op::Read => {
                if !self.table.rtickets[tag].is_empty() {
                    // SAFETY: the read completed; its `len` bytes in the slot are the
                    // worker's and no request uses them now.
                    let buf = unsafe { std::slice::from_raw_parts(slot.buf, slot.len as usize) };
                    let before = data.counts.mismatches;
                    data.on_read_complete(
                        slot.target,
                        &self.setup.targets[slot.target as usize].uri,
                        slot.offset,
                        buf,
                        &mut self.table.rtickets[tag],
                        ok,
                    );
                    if data.counts.mismatches > before {
                        self.mismatched(slot.workload);
                    }
                }
                Ok(())
            }
            Op::Trim => Ok(()),
        };
        if let Err(e) = res {
            self.fatal = Some(WorkerError::Journal(e));
        }
    }

    /// Records a failed request (a sample, the stop under the policy).
    fn error(&mut self, tag: usize, errno: i32) {
        let slot = self.table.slots[tag];
        if self.samples.len() < MAX_ERROR_SAMPLES {
            self.samples.push(ErrorSample {
                op: slot.op.name().into(),
                target: self.setup.targets[slot.target as usize].uri.clone(),
                offset: slot.offset,
                len: slot.len as u64,
                errno,
                message: std::io::Error::from_raw_os_error(errno).to_string(),
            });
        }
        let kind = match slot.op {
            Op::Read => ErrorKind::Read,
            Op::Write | Op::Trim => ErrorKind::Write,
        };
        if self.stops_run(slot.workload, kind, errno) {
            self.stop_for_error();
        }
    }

    /// A read of `workload` found a mismatch: the run stops when the workload's own
    /// policy does not continue on verify errors (fio's `verify_fatal`); under the
    /// run's `--on-error` mismatches are counted only.
    #[inline(never)]
    fn mismatched(&self, workload: u32) {
        if self.shapes[workload as usize]
            .on_error
            .as_ref()
            .is_some_and(|p| !p.continues_on_mismatch())
        {
            self.stop_for_error();
        }
    }

    /// Frees a slot and gives its stream the chance to issue again.
    #[inline(always)]
    fn release(&mut self, tag: usize) {
        let slot = &mut self.table.slots[tag];
        slot.state = SlotState::Free;
        let si = slot.stream as usize;
        // SAFETY: a slot's stream is one of the worker's streams, which has its own
        // free list (`own`).
        let s = unsafe { own_mut(&mut self.setup.streams, si) };
        s.inflight -= 1;
        self.inflight -= 1;
        unsafe { own_mut(&mut self.table.free, si) }.push(tag as u32);
        if s.schedule.is_some() {
            if self.waiting[si] {
                self.waiting[si] = false;
                if let Some(d) = s.next_due_ns() {
                    self.timers.push(Reverse((d, si as u32)));
                }
            }
        } else if s.thinking {
            if s.inflight == 0 {
                // The batch is complete: think from now.
                self.held
                    .push(Reverse((now_ns().saturating_add(s.think_ns), si as u32)));
            }
        } else if s.bytes_left > 0 || s.extras.read_back_due() {
            self.ready.push(si as u32);
        }
        if s.bytes_left == 0
            && s.inflight == 0
            && !s.extras.read_back_due()
            && self.shapes[s.workload as usize].exit_all
        {
            // fio's exitall: this stream has done its I/O, so the run stops.
            self.setup.stop.store(true, Ordering::Relaxed);
        }
    }

    /// Fails every request older than the I/O timeout: counted as a timeout error
    /// and abandoned; an abandoned request is re-issued under `--on-error retry=N`,
    /// one the engine cannot abandon keeps its slot until it completes.
    fn expire(&mut self, now: u64) {
        let Some(timeout) = self.setup.io_timeout_ns else {
            self.next_deadline_ns = u64::MAX;
            return;
        };
        let mut next = u64::MAX;
        for tag in 0..self.table.slots.len() {
            let slot = self.table.slots[tag];
            if slot.state != SlotState::InFlight {
                continue;
            }
            let deadline = slot.submit_ns + timeout;
            if deadline > now {
                next = next.min(deadline);
                continue;
            }
            let detail = format!(
                "{} {}+{} unanswered after {:.3} s",
                slot.op.name(),
                slot.offset,
                slot.len,
                (now - slot.submit_ns) as f64 / 1e9
            );
            self.event(
                now,
                slot.target,
                slot.conn,
                EngineEventKind::Timeout,
                detail,
            );
            let conn = self.conn_index(slot.target, slot.conn);
            self.conns[conn].timeouts += 1;
            if self.engine.abandon(tag as u64) {
                // Gone from the engine: settle it as a failed completion (re-issued
                // under retry=N, its slot reused at once otherwise).
                self.complete(
                    Completion {
                        tag: tag as u64,
                        result: -(libc::ETIMEDOUT as i64),
                        done_ns: now,
                    },
                    now,
                );
                if self.table.slots[tag].state == SlotState::InFlight {
                    next = next.min(now + timeout);
                }
            } else {
                self.table.slots[tag].state = SlotState::TimedOut;
                self.timed_out += 1;
                self.stats[slot.workload as usize].ops[slot.op.index()].errors += 1;
                self.count_conn(tag, 0, 1);
                self.error(tag, libc::ETIMEDOUT);
            }
        }
        self.next_deadline_ns = next;
    }

    /// Records an event of this interval: at most [`MAX_EVENTS`] in all, and up to
    /// [`MAX_LINK_EVENTS`] more for connections going down or up, so a flood of
    /// timeouts cannot hide the `down` they caused.
    fn event(&mut self, at_ns: u64, target: u32, conn: u32, kind: EngineEventKind, detail: String) {
        let cap = match kind {
            EngineEventKind::Down | EngineEventKind::Up => MAX_EVENTS + MAX_LINK_EVENTS,
            EngineEventKind::Timeout | EngineEventKind::Reissue => MAX_EVENTS,
        };
        if self.events.len() < cap {
            let conn = self.conn_index(target, conn) as u32;
            self.events.push(EventRecord {
                at_ns,
                conn,
                kind: kind.name(),
                detail,
            });
        }
    }

    /// Waits for what is still in flight; those completions fall after the end and
    /// are not counted. Buffers must outlive them: what never comes back (within
    /// the I/O timeout, or 30 s without one) keeps its buffers forever.
    fn drain(&mut self) {
        let wait_ns = self
            .setup
            .io_timeout_ns
            .map_or(DRAIN_NS, |t| t.min(DRAIN_NS));
        let deadline = now_ns() + wait_ns;
        while self.inflight > 0 && now_ns() < deadline {
            if self
                .engine
                .submit_and_reap(1, Some(100_000_000), &mut self.completions)
                .is_err()
            {
                break;
            }
            self.inflight -= self.completions.len() as u32;
            self.engine.take_reissued_writes(&mut self.reissued_writes);
            for i in 0..self.completions.len() {
                if self.completions[i].tag & FLUSH_TAG != 0 {
                    continue;
                }
                let tag = self.completions[i].tag as usize;
                let reissued = self.was_reissued(tag);
                // Not checked: the request ended after the run; release its tickets.
                self.table
                    .release_tickets(&mut self.setup.data, tag, reissued, now_ns());
            }
            self.completions.clear();
            self.reissued_writes.clear();
        }
    }

    /// Sends the last snapshot.
    fn finish(mut self) {
        self.fill_conns();
        if let Some(sink) = &self.setup.recorded {
            let mut all = sink.lock().unwrap_or_else(|p| p.into_inner());
            all.append(&mut self.recorded);
        }
        if let Err(e) = self.setup.data.finish() {
            self.fatal.get_or_insert(WorkerError::Journal(e));
        }
        if self.inflight > 0 {
            // The kernel (or a connection) may still write into these buffers.
            self.table.leak_pool();
        }
        let paths = self.path_samples();
        let cpu_ns = self.cpu_since_mark();
        let _ = self.setup.tx.send(Snapshot {
            worker: self.setup.index,
            index: self.interval,
            end_ns: now_ns(),
            last: true,
            workloads: self.stats,
            error_samples: self.samples,
            fatal: self.fatal.as_ref().map(WorkerError::chain),
            verify: std::mem::take(&mut self.setup.data.counts),
            pacing: self.setup.pacer.take_stats(),
            connections: self.conns,
            events: self.events,
            paths,
            cpu_ns,
        });
    }

    /// This thread's CPU time since the last snapshot; moves the mark.
    fn cpu_since_mark(&mut self) -> u64 {
        let now = crate::clock::thread_cpu_ns();
        now.saturating_sub(std::mem::replace(&mut self.cpu_mark_ns, now))
    }

    /// The engine's per-path figures of this interval (multipath engines only).
    fn path_samples(&mut self) -> Vec<crate::engine::multipath::path::PathSample> {
        let mut out = Vec::new();
        self.engine.take_path_samples(&mut out);
        out
    }
}

/// Readies the streams for the loop: stop times made absolute, and each stream's
/// first tokens (closed loop), first timer (open loop) or hold (start delay).
/// Returns (ready tokens, timers, holds).
fn first_turn(setup: &mut WorkerSetup, total_slots: usize) -> (Vec<u32>, Timed, Timed) {
    let mut ready = Vec::with_capacity(total_slots);
    let mut timers = BinaryHeap::with_capacity(setup.streams.len());
    let mut held = BinaryHeap::new();
    let start_ns = setup.clock.start_ns;
    for (si, s) in setup.streams.iter_mut().enumerate() {
        // What the stream may leave off its I/O path, now that it is complete.
        s.mark_plain();
        s.stop_at_ns = match s.stop_at_ns {
            0 => u64::MAX,
            after => start_ns.saturating_add(after),
        };
        if let Some(sched) = s.schedule.as_mut() {
            sched.next_due_ns += start_ns as f64;
            timers.push(Reverse((sched.next_due_ns as u64, si as u32)));
        } else if s.start_delay_ns > 0 {
            held.push(Reverse((start_ns + s.start_delay_ns, si as u32)));
        } else {
            ready.extend(std::iter::repeat(si as u32).take(s.qd as usize));
        }
    }
    (ready, timers, held)
}

/// The end of interval `interval` or of the next own warm-up, whichever is first.
fn next_tick(setup: &WorkerSetup, interval: u64) -> u64 {
    let boundary = setup.clock.boundary_ns(interval);
    match setup.ramps.last() {
        Some(&(at, _)) => boundary.min(setup.clock.start_ns.saturating_add(at)),
        None => boundary,
    }
}

fn new_stats_from(shapes: &[WorkloadShape]) -> Vec<WorkloadStats> {
    shapes
        .iter()
        .map(|s| WorkloadStats::new(s.open_loop))
        .collect()
}

/// Ends a worker that could not start (e.g. its engine could not be built) with a
/// last snapshot carrying the reason.
pub fn fail(setup: WorkerSetup, e: WorkerError) {
    let _ = setup.tx.send(fatal_snapshot(&setup, &e));
}

fn fatal_snapshot(setup: &WorkerSetup, e: &WorkerError) -> Snapshot {
    Snapshot {
        worker: setup.index,
        index: 0,
        end_ns: now_ns(),
        last: true,
        workloads: new_stats_from(&setup.shapes),
        error_samples: Vec::new(),
        fatal: Some(e.chain()),
        verify: Default::default(),
        pacing: Default::default(),
        connections: Vec::new(),
        events: Vec::new(),
        paths: Vec::new(),
        cpu_ns: 0,
    }
}

/// A trim that succeeded counts its whole range: io_uring's fallocate and discard
/// commands complete with 0, the inline engines and NBD with the length.
#[inline(always)]
fn trim_result(c: Completion, op: Op, len: u32) -> Completion {
    if c.result == 0 && op == Op::Trim {
        Completion {
            result: i64::from(len),
            ..c
        }
    } else {
        c
    }
}
