//! One network job on its own thread: a sender connects (after its start delay) and
//! writes `bs`-byte messages, a receiver accepts (or, over UDP, waits for the link-open
//! message) and reads them; with `pingpong` every message is answered before the
//! next. Each message is one operation: its bytes and its time (from the start of
//! the send or receive to the end of the answer, if any) go to counters the
//! interval loop reads and to the job's own latency histogram.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::socket::{self, Got, Sock};
use super::wire;
use crate::plan::net_endpoint::NetEndpoint;
use crate::stats::histogram::LatencyHistogram;

/// How long a connecting end tries to reach its peer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// A UDP receiver whose senders in this run have all finished stops after this long
/// without a datagram (their close message may have been dropped).
const UDP_IDLE_END: Duration = Duration::from_millis(300);

/// What a job does, resolved from its workload and target.
#[derive(Debug, Clone)]
pub struct JobPlan {
    pub name: String,
    pub uri: String,
    pub endpoint: NetEndpoint,
    pub send: bool,
    pub bs: usize,
    /// Bytes to move; `None` = until the run ends.
    pub size_bytes: Option<u64>,
    pub start_delay: Duration,
    /// Stop issuing this long after the run's start; `None` = the run's end.
    pub stop_after: Option<Duration>,
}

/// Shared by every job of a run and the interval loop.
pub struct RunControl {
    pub start: Instant,
    pub stop: AtomicBool,
    /// The run's end (warm-up included); `None` = when the jobs are done.
    pub deadline: Option<Instant>,
    /// Senders of this run still sending.
    pub senders_left: AtomicUsize,
    /// The run has senders of its own (a UDP receiver may then end on their end).
    pub has_senders: bool,
}

impl RunControl {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || crate::interrupt::requested()
            || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// A job's running figures.
#[derive(Default)]
pub struct JobCounters {
    pub bytes: AtomicU64,
    pub ops: AtomicU64,
    pub lost: AtomicU64,
    pub done: AtomicBool,
    /// The peer connected (or the link-open message came).
    pub linked: AtomicBool,
    /// When it did, and when the last message ended (ns since the run's start): the
    /// job's own time, over which its throughput is figured (as fio does).
    pub linked_ns: AtomicU64,
    pub last_ns: AtomicU64,
    pub error: Mutex<Option<String>>,
    pub latency: Mutex<LatencyHistogram>,
}

impl JobCounters {
    /// Counts one message of `n` bytes sent or received from `t0` until now (its
    /// latency, and the job's last message end, ns after the run's `start`).
    fn count_message(&self, hist: &mut LatencyHistogram, t0: Instant, start: Instant, n: usize) {
        let t1 = Instant::now();
        hist.record((t1 - t0).as_nanos() as u64);
        self.last_ns
            .store((t1 - start).as_nanos() as u64, Ordering::Relaxed);
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        self.ops.fetch_add(1, Ordering::Relaxed);
    }
}

/// Runs one job to its end; a failure is kept in `c.error` and stops the run.
pub fn run(plan: JobPlan, listener: Option<Sock>, ctl: Arc<RunControl>, c: Arc<JobCounters>) {
    let res = if plan.send {
        send(&plan, listener, &ctl, &c)
    } else {
        receive(&plan, listener, &ctl, &c)
    };
    if let Err(e) = res {
        *c.error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
        ctl.stop.store(true, Ordering::Relaxed);
    }
    if plan.send {
        ctl.senders_left.fetch_sub(1, Ordering::AcqRel);
    }
    c.done.store(true, Ordering::Release);
}

/// Whether the job should issue no more.
fn finished(plan: &JobPlan, ctl: &RunControl, moved: u64) -> bool {
    ctl.stopping()
        || plan.size_bytes.is_some_and(|s| moved >= s)
        || plan.stop_after.is_some_and(|d| ctl.start.elapsed() >= d)
}

/// The message size of the next operation (the last one may be short).
fn next_len(plan: &JobPlan, moved: u64) -> usize {
    match plan.size_bytes {
        Some(s) => (s - moved).min(plan.bs as u64) as usize,
        None => plan.bs,
    }
}

fn connect_err(plan: &JobPlan, e: std::io::Error) -> String {
    let mut s = format!("{}: connect: {e}", plan.uri);
    if plan.endpoint.protocol == crate::plan::net_endpoint::NetProtocol::Vsock {
        s.push_str(&super::vsock_hint(&plan.endpoint.host, &e));
    }
    s
}

/// Waits out the start delay; false when the run stopped meanwhile.
fn start_delay(plan: &JobPlan, ctl: &RunControl) -> bool {
    while ctl.start.elapsed() < plan.start_delay {
        if ctl.stopping() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

fn send(
    plan: &JobPlan,
    listener: Option<Sock>,
    ctl: &RunControl,
    c: &JobCounters,
) -> Result<(), String> {
    if !start_delay(plan, ctl) {
        return Ok(());
    }
    let mut sock = match listener {
        // A listening end that sends (TCP, unix, vsock): the peer connects to it.
        Some(l) => match socket::accept(&l, &plan.endpoint, &|| ctl.stopping())
            .map_err(|e| format!("{}: accept: {e}", plan.uri))?
        {
            Some(s) => s,
            None => return Ok(()),
        },
        None => {
            socket::connect(&plan.endpoint, CONNECT_TIMEOUT).map_err(|e| connect_err(plan, e))?
        }
    };
    if sock.datagram {
        send_all(&sock, &wire::open_message(), ctl).map_err(|e| format!("{}: {e}", plan.uri))?;
    }
    c.linked_ns
        .store(ctl.start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    c.linked.store(true, Ordering::Relaxed);
    let mut buf = pattern(plan.bs);
    let mut reply = vec![0u8; plan.bs];
    let (mut moved, mut seq) = (0u64, 0u64);
    let mut hist = LatencyHistogram::new();
    while !finished(plan, ctl, moved) {
        let n = next_len(plan, moved);
        if sock.datagram {
            wire::stamp(&mut buf[..n], seq);
            seq += 1;
        }
        let t0 = Instant::now();
        if !send_all(&sock, &buf[..n], ctl).map_err(|e| format!("{}: send: {e}", plan.uri))? {
            break;
        }
        if plan.endpoint.pingpong
            && !recv_answer(&mut sock, &mut reply[..n], ctl)
                .map_err(|e| format!("{}: answer: {e}", plan.uri))?
        {
            break;
        }
        c.count_message(&mut hist, t0, ctl.start, n);
        moved += n as u64;
    }
    if sock.datagram {
        // The receiver ends on this (fio's close message); a lost one is covered
        // by the receiver's idle end.
        let _ = sock.send(&wire::close_message());
    } else {
        sock.shutdown_write();
    }
    *c.latency.lock().unwrap_or_else(|p| p.into_inner()) += &hist;
    Ok(())
}

/// Writes all of `buf` (one datagram over UDP); false when the run stopped first.
fn send_all(sock: &Sock, buf: &[u8], ctl: &RunControl) -> std::io::Result<bool> {
    let mut off = 0;
    while off < buf.len() {
        if ctl.stop.load(Ordering::Relaxed) || crate::interrupt::requested() {
            return Ok(false);
        }
        let n = sock.send(&buf[off..])?;
        if sock.datagram && n > 0 {
            break;
        }
        off += n;
    }
    Ok(true)
}

/// Reads the answer to one message (all of it on a stream); false when the run
/// stopped or the peer closed first.
fn recv_answer(sock: &mut Sock, buf: &mut [u8], ctl: &RunControl) -> std::io::Result<bool> {
    let mut off = 0;
    while off < buf.len() {
        if ctl.stop.load(Ordering::Relaxed) || crate::interrupt::requested() {
            return Ok(false);
        }
        match sock.recv(&mut buf[off..], false)? {
            Got::Bytes(n) if sock.datagram => return Ok(n > 0 || buf.is_empty()),
            Got::Bytes(n) => off += n,
            Got::Nothing => {}
            Got::Eof => return Ok(false),
        }
    }
    Ok(true)
}

/// A message's content: a repeating byte pattern (the data is not checked).
fn pattern(bs: usize) -> Vec<u8> {
    (0..bs).map(|i| (i % 251) as u8).collect()
}

fn receive(
    plan: &JobPlan,
    listener: Option<Sock>,
    ctl: &RunControl,
    c: &JobCounters,
) -> Result<(), String> {
    let mut sock = match listener {
        Some(l) if l.datagram => l,
        Some(l) => match socket::accept(&l, &plan.endpoint, &|| ctl.stopping())
            .map_err(|e| format!("{}: accept: {e}", plan.uri))?
        {
            Some(s) => s,
            None => return Ok(()),
        },
        // A connecting end that reads (TCP, unix, vsock): it connects, then reads.
        None => {
            socket::connect(&plan.endpoint, CONNECT_TIMEOUT).map_err(|e| connect_err(plan, e))?
        }
    };
    if sock.datagram && !wait_open(plan, &mut sock, ctl)? {
        return Ok(());
    }
    c.linked_ns
        .store(ctl.start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    c.linked.store(true, Ordering::Relaxed);
    let mut buf = vec![0u8; plan.bs.max(wire::LINK_BYTES)];
    let mut loss = wire::LossCounter::default();
    let mut hist = LatencyHistogram::new();
    let mut moved = 0u64;
    let mut last_data = Instant::now();
    while !finished(plan, ctl, moved) {
        let want = next_len(plan, moved).max(if sock.datagram { plan.bs } else { 1 });
        let t0 = Instant::now();
        let n = match sock
            .recv(&mut buf[..want], sock.datagram)
            .map_err(|e| format!("{}: receive: {e}", plan.uri))?
        {
            Got::Eof => break,
            Got::Nothing => {
                if sock.datagram
                    && ctl.has_senders
                    && ctl.senders_left.load(Ordering::Acquire) == 0
                    && last_data.elapsed() >= UDP_IDLE_END
                {
                    break;
                }
                continue;
            }
            Got::Bytes(n) => n,
        };
        last_data = Instant::now();
        if wire::is_close(&buf[..n]) {
            break;
        }
        if sock.datagram {
            if let Some(seq) = wire::sequence(&buf[..n]) {
                loss.saw(seq);
                c.lost.store(loss.lost, Ordering::Relaxed);
            }
        }
        if plan.endpoint.pingpong
            && !send_all(&sock, &buf[..n], ctl).map_err(|e| format!("{}: answer: {e}", plan.uri))?
        {
            break;
        }
        c.count_message(&mut hist, t0, ctl.start, n);
        moved += n as u64;
    }
    *c.latency.lock().unwrap_or_else(|p| p.into_inner()) += &hist;
    Ok(())
}

/// A UDP receiver starts at the sender's link-open message, as fio's does.
fn wait_open(plan: &JobPlan, sock: &mut Sock, ctl: &RunControl) -> Result<bool, String> {
    let mut m = vec![0u8; plan.bs.max(wire::LINK_BYTES)];
    loop {
        if ctl.stopping() {
            return Ok(false);
        }
        match sock.recv(&mut m, true).map_err(|e| format!("{}: receive: {e}", plan.uri))? {
            Got::Bytes(n) if wire::is_open(&m[..n]) => return Ok(true),
            Got::Bytes(n) => {
                return Err(format!(
                    "{}: the first datagram ({n} bytes) is not a sender's link-open message (fio's net engine opens every UDP flow with one)",
                    plan.uri
                ))
            }
            Got::Nothing | Got::Eof => {}
        }
    }
}
