//! One TCP data connection's loop, on its own thread: write as fast as the socket
//! takes it (or paced to an intended schedule), read to end of file, or run
//! request/response transactions. Each loop owns its buffer and its latency
//! histogram; the only shared state it touches per operation is a plain atomic store
//! of its byte and operation counters (no read-modify-write, no lock). Latency is
//! handed over at interval boundaries: the interval thread bumps an epoch, each loop
//! notices it at its next operation and deposits what it recorded.
//!
//! Sockets carry 200 ms send/receive timeouts so every loop notices the stop flag
//! even when its peer has gone quiet; a timeout is not an error.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::protocol::Role;
use super::sockopt;
use crate::clock::now_ns;
use crate::stats::histogram::LatencyHistogram;

/// How long a reader waits for the end of data after the stop before giving up.
const DRAIN_GRACE_NS: u64 = 5_000_000_000;
/// Socket timeouts: how often a blocked loop looks at the stop flag.
pub const POLL_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(200);

/// What every stream of one test shares with the thread that reports.
#[derive(Debug, Default)]
pub struct Control {
    pub stop: AtomicBool,
    /// When the stop was asked for (ns, [`now_ns`] clock), for the drain grace.
    pub stop_ns: AtomicU64,
    /// Bumped at every interval boundary; loops deposit latency when it changes.
    pub epoch: AtomicU64,
    /// When the streams started: the origin of paced schedules.
    pub start_ns: AtomicU64,
}

impl Control {
    pub fn request_stop(&self) {
        self.stop_ns.store(now_ns(), Ordering::Relaxed);
        self.stop.store(true, Ordering::Release);
    }

    pub(super) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// True when a reader has waited long enough after the stop.
    pub(super) fn drain_expired(&self) -> bool {
        self.stopped()
            && now_ns().saturating_sub(self.stop_ns.load(Ordering::Relaxed)) > DRAIN_GRACE_NS
    }
}

/// One stream as the reporting thread sees it.
#[derive(Debug)]
pub struct StreamState {
    pub index: u32,
    pub role: Role,
    pub sock: TcpStream,
    /// Payload bytes this end wrote and read so far (stored by the loop only).
    pub bytes_out: AtomicU64,
    pub bytes_in: AtomicU64,
    /// Writes (streaming) or completed transactions (request/response).
    pub ops: AtomicU64,
    /// When this end read end of file (ns), 0 before.
    pub eof_ns: AtomicU64,
    pub finished: AtomicBool,
    /// Epoch of the last latency deposit.
    pub acked: AtomicU64,
    /// Latency recorded since the reporting thread last took it.
    pub lat_slot: Mutex<LatencyHistogram>,
    error: Mutex<Option<String>>,
}

impl StreamState {
    pub fn new(index: u32, role: Role, sock: TcpStream) -> Self {
        StreamState {
            index,
            role,
            sock,
            bytes_out: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            ops: AtomicU64::new(0),
            eof_ns: AtomicU64::new(0),
            finished: AtomicBool::new(false),
            acked: AtomicU64::new(0),
            lat_slot: Mutex::new(LatencyHistogram::new()),
            error: Mutex::new(None),
        }
    }

    /// The first failure of this stream, if any.
    pub fn error(&self) -> Option<String> {
        self.error.lock().map(|e| e.clone()).unwrap_or(None)
    }

    pub(super) fn fail(&self, what: String) {
        if let Ok(mut e) = self.error.lock() {
            e.get_or_insert(what);
        }
    }

    /// Takes the latency recorded since the last call.
    pub fn take_latency(&self) -> LatencyHistogram {
        match self.lat_slot.lock() {
            Ok(mut h) => std::mem::take(&mut *h),
            Err(_) => LatencyHistogram::new(),
        }
    }
}

/// What a loop does.
#[derive(Debug, Clone, Copy)]
pub enum Job {
    /// Write `bs` bytes at a time; paced with `gap_ns` between writes when set;
    /// through sendfile(2) with `zerocopy`.
    Send {
        bs: u32,
        gap_ns: Option<u64>,
        zerocopy: bool,
    },
    /// Read `bs` bytes at a time to end of file.
    Recv { bs: u32 },
    /// Client side of request/response: `gap_ns` makes it open loop.
    RrClient {
        req: u32,
        resp: u32,
        gap_ns: Option<u64>,
    },
    /// Server side: read a request, write a response, until end of file.
    RrServer { req: u32, resp: u32 },
}

/// A loop's private latency recording and its hand-over to the reporting thread.
struct Recorder {
    hist: LatencyHistogram,
    seen: u64,
}

impl Recorder {
    fn new() -> Self {
        Recorder {
            hist: LatencyHistogram::new(),
            seen: 0,
        }
    }

    #[inline]
    fn record(&mut self, lat_ns: u64, st: &StreamState, ctl: &Control) {
        self.hist.record(lat_ns);
        self.maybe_deposit(st, ctl);
    }

    #[inline]
    fn maybe_deposit(&mut self, st: &StreamState, ctl: &Control) {
        let e = ctl.epoch.load(Ordering::Acquire);
        if e != self.seen {
            self.deposit(st);
            self.seen = e;
            st.acked.store(e, Ordering::Release);
        }
    }

    fn deposit(&mut self, st: &StreamState) {
        if self.hist.count() > 0 {
            if let Ok(mut slot) = st.lat_slot.lock() {
                *slot += &self.hist;
            }
            self.hist.reset();
        }
    }
}

/// Runs `job` on `st` until the stop (or end of file), then marks it finished. Pins
/// the thread to `cpu` first when given.
pub fn run(st: Arc<StreamState>, ctl: Arc<Control>, job: Job, cpu: Option<usize>) {
    pin(cpu, [&*st]);
    let _ = st.sock.set_read_timeout(Some(POLL_TIMEOUT));
    let _ = st.sock.set_write_timeout(Some(POLL_TIMEOUT));
    let mut rec = Recorder::new();
    let r = match job {
        Job::Send {
            bs,
            gap_ns,
            zerocopy,
        } => send_loop(&st, &ctl, &mut rec, bs, gap_ns, zerocopy),
        Job::Recv { bs } => recv_loop(&st, &ctl, bs),
        Job::RrClient {
            req,
            resp,
            gap_ns: None,
        } => rr_closed(&st, &ctl, &mut rec, req, resp),
        Job::RrClient {
            req,
            resp,
            gap_ns: Some(gap),
        } => rr_open(&st, &ctl, &mut rec, req, resp, gap),
        Job::RrServer { req, resp } => rr_server(&st, &ctl, req, resp),
    };
    if let Err(e) = r {
        st.fail(crate::errors::chain(&e));
    }
    rec.deposit(&st);
    st.finished.store(true, Ordering::Release);
}

/// Pins the calling thread to `cpu` when given; a failure is each of `streams`'
/// error (the thread drives them all).
pub(super) fn pin<'a>(cpu: Option<usize>, streams: impl IntoIterator<Item = &'a StreamState>) {
    let Some(c) = cpu else { return };
    if let Err(e) = sockopt::pin_current_thread(c) {
        for st in streams {
            st.fail(format!("pinning stream {} to CPU {c}: {e}", st.index));
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// Why one data stream stopped before the test ended. The stream keeps its cause
/// chain as text ([`StreamState::error`]): it travels to the other end in the report.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// The peer reset or closed the connection.
    #[error("stream {stream} {what}: the peer went away")]
    PeerGone {
        stream: u32,
        what: &'static str,
        source: io::Error,
    },
    /// Any other socket failure.
    #[error("stream {stream} {what}")]
    Socket {
        stream: u32,
        what: &'static str,
        source: io::Error,
    },
    #[error("stream {stream}: no end of data within 5 s of the stop")]
    NoEnd { stream: u32 },
    #[error("stream {stream}: no answer within 5 s of the stop")]
    NoAnswer { stream: u32 },
    #[error("stream {stream}: end of data mid-message")]
    MidMessage { stream: u32 },
    #[error("stream {stream}: peer stopped reading")]
    PeerStopped { stream: u32 },
    #[error("stream {stream}: server closed mid-test")]
    ServerClosed { stream: u32 },
    #[error("memfd for sendfile")]
    Memfd(#[source] io::Error),
    #[error("request sender panicked")]
    SenderPanicked,
}

/// A socket error of stream `st` while it did `what` ("send", "receive").
pub(super) fn describe(e: io::Error, st: &StreamState, what: &'static str) -> StreamError {
    let stream = st.index;
    match e.kind() {
        io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe => StreamError::PeerGone {
            stream,
            what,
            source: e,
        },
        _ => StreamError::Socket {
            stream,
            what,
            source: e,
        },
    }
}

/// A buffer with a non-trivial pattern (so nothing along the path can shortcut
/// zero pages).
pub(super) fn pattern(bs: u32) -> Vec<u8> {
    (0..bs as usize).map(|i| (i * 31 + 7) as u8).collect()
}

/// A memfd holding one buffer's worth of the pattern, for sendfile(2).
pub(super) fn memfd_with(buf: &[u8]) -> io::Result<std::fs::File> {
    // SAFETY: the name is a NUL-terminated literal; the returned descriptor is owned
    // by the File right below.
    let fd = unsafe { libc::memfd_create(c"ioscope-net".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    let mut f = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    f.write_all(buf)?;
    Ok(f)
}

/// Writes up to `len` bytes of the buffer (or the memfd) once; Ok(0) on a timeout.
pub(super) fn write_once(
    sock: &TcpStream,
    buf: &[u8],
    memfd: Option<&std::fs::File>,
    from: usize,
) -> io::Result<usize> {
    match memfd {
        Some(f) => {
            let mut off = from as libc::off_t;
            // SAFETY: both descriptors are open for the call; off is a live off_t.
            let n = unsafe {
                libc::sendfile(sock.as_raw_fd(), f.as_raw_fd(), &mut off, buf.len() - from)
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                return if is_timeout(&e) { Ok(0) } else { Err(e) };
            }
            Ok(n as usize)
        }
        None => match (&*sock).write(&buf[from..]) {
            Ok(n) => Ok(n),
            Err(e) if is_timeout(&e) => Ok(0),
            Err(e) => Err(e),
        },
    }
}

fn send_loop(
    st: &StreamState,
    ctl: &Control,
    rec: &mut Recorder,
    bs: u32,
    gap_ns: Option<u64>,
    zerocopy: bool,
) -> Result<(), StreamError> {
    let buf = pattern(bs);
    let memfd = if zerocopy {
        Some(memfd_with(&buf).map_err(StreamError::Memfd)?)
    } else {
        None
    };
    let start = ctl.start_ns.load(Ordering::Acquire);
    let (mut bytes, mut ops) = (0u64, 0u64);
    'outer: while !ctl.stopped() {
        let intended = match gap_ns {
            Some(gap) => {
                let at = start + ops * gap;
                // Sleep in slices so a stop is seen within 100 ms.
                let now = now_ns();
                if now < at {
                    crate::clock::sleep_until(at.min(now + 100_000_000));
                    continue;
                }
                Some(at)
            }
            None => None,
        };
        // Closed loop: count what the socket took. Paced: the whole write.
        let mut done = 0usize;
        loop {
            let n = write_once(&st.sock, &buf, memfd.as_ref(), done)
                .map_err(|e| describe(e, st, "send"))?;
            done += n;
            bytes += n as u64;
            st.bytes_out.store(bytes, Ordering::Relaxed);
            if done == buf.len() || (intended.is_none() && n > 0) {
                break;
            }
            if ctl.stopped() {
                break 'outer;
            }
        }
        ops += 1;
        st.ops.store(ops, Ordering::Relaxed);
        match intended {
            Some(at) => rec.record(now_ns().saturating_sub(at), st, ctl),
            None => rec.maybe_deposit(st, ctl),
        }
    }
    let _ = st.sock.shutdown(Shutdown::Write);
    Ok(())
}

fn recv_loop(st: &StreamState, ctl: &Control, bs: u32) -> Result<(), StreamError> {
    let mut buf = vec![0u8; bs.max(4096) as usize];
    let mut bytes = 0u64;
    let mut ops = 0u64;
    loop {
        match (&st.sock).read(&mut buf) {
            Ok(0) => {
                st.eof_ns.store(now_ns(), Ordering::Release);
                return Ok(());
            }
            Ok(n) => {
                bytes += n as u64;
                ops += 1;
                st.bytes_in.store(bytes, Ordering::Relaxed);
                st.ops.store(ops, Ordering::Relaxed);
            }
            Err(e) if is_timeout(&e) => {
                if ctl.drain_expired() {
                    return Err(StreamError::NoEnd { stream: st.index });
                }
            }
            Err(e) => return Err(describe(e, st, "receive")),
        }
    }
}

/// Reads exactly `buf.len()` bytes, riding out timeouts until the drain grace after
/// a stop. Ok(false) on a clean end of file before the first byte.
fn read_full(st: &StreamState, ctl: &Control, buf: &mut [u8]) -> Result<bool, StreamError> {
    let mut got = 0;
    while got < buf.len() {
        match (&st.sock).read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(StreamError::MidMessage { stream: st.index }),
            Ok(n) => got += n,
            Err(e) if is_timeout(&e) => {
                if ctl.drain_expired() {
                    return Err(StreamError::NoAnswer { stream: st.index });
                }
            }
            Err(e) => return Err(describe(e, st, "receive")),
        }
    }
    Ok(true)
}

fn write_full(st: &StreamState, ctl: &Control, buf: &[u8]) -> Result<(), StreamError> {
    let mut done = 0;
    while done < buf.len() {
        match (&st.sock).write(&buf[done..]) {
            Ok(n) => done += n,
            Err(e) if is_timeout(&e) => {
                if ctl.drain_expired() {
                    return Err(StreamError::PeerStopped { stream: st.index });
                }
            }
            Err(e) => return Err(describe(e, st, "send")),
        }
    }
    Ok(())
}

fn rr_closed(
    st: &StreamState,
    ctl: &Control,
    rec: &mut Recorder,
    req: u32,
    resp: u32,
) -> Result<(), StreamError> {
    let out = pattern(req);
    let mut inb = vec![0u8; resp as usize];
    let mut ops = 0u64;
    while !ctl.stopped() {
        let t0 = now_ns();
        write_full(st, ctl, &out)?;
        if !read_full(st, ctl, &mut inb)? {
            return Err(StreamError::ServerClosed { stream: st.index });
        }
        let lat = now_ns().saturating_sub(t0);
        ops += 1;
        st.bytes_out.store(ops * req as u64, Ordering::Relaxed);
        st.bytes_in.store(ops * resp as u64, Ordering::Relaxed);
        st.ops.store(ops, Ordering::Relaxed);
        rec.record(lat, st, ctl);
    }
    let _ = st.sock.shutdown(Shutdown::Write);
    Ok(())
}

/// Open-loop transactions: a sender thread writes requests at their intended times
/// whatever the responses do; this thread reads responses in order (TCP keeps them
/// in order) and measures each from its request's intended time, so a stall shows
/// up in the latency of every request scheduled behind it.
fn rr_open(
    st: &Arc<StreamState>,
    ctl: &Arc<Control>,
    rec: &mut Recorder,
    req: u32,
    resp: u32,
    gap_ns: u64,
) -> Result<(), StreamError> {
    let start = ctl.start_ns.load(Ordering::Acquire);
    let sent = Arc::new(AtomicU64::new(0));
    let sender_done = Arc::new(AtomicBool::new(false));
    let sender = {
        let (st, ctl, sent, done) = (st.clone(), ctl.clone(), sent.clone(), sender_done.clone());
        std::thread::spawn(move || -> Result<(), StreamError> {
            let out = pattern(req);
            let mut i = 0u64;
            let r = (|| {
                while !ctl.stopped() {
                    let at = start + i * gap_ns;
                    let now = now_ns();
                    if now < at {
                        crate::clock::sleep_until(at.min(now + 100_000_000));
                        continue;
                    }
                    write_full(&st, &ctl, &out)?;
                    i += 1;
                    sent.store(i, Ordering::Release);
                    st.bytes_out.store(i * req as u64, Ordering::Relaxed);
                }
                Ok(())
            })();
            done.store(true, Ordering::Release);
            r
        })
    };
    // Block in read (woken by the response itself); the 200 ms socket timeout lets
    // the loop see that the sender has finished and every response is in.
    let mut inb = vec![0u8; resp as usize];
    let (mut got, mut partial) = (0u64, 0usize);
    let r = loop {
        if sender_done.load(Ordering::Acquire) && got >= sent.load(Ordering::Acquire) {
            break Ok(());
        }
        match (&st.sock).read(&mut inb[partial..]) {
            Ok(0) => break Err(StreamError::ServerClosed { stream: st.index }),
            Ok(n) => partial += n,
            Err(e) if is_timeout(&e) => {
                rec.maybe_deposit(st, ctl);
                if ctl.drain_expired() {
                    break Err(StreamError::NoAnswer { stream: st.index });
                }
                continue;
            }
            Err(e) => break Err(describe(e, st, "receive")),
        }
        if partial < inb.len() {
            continue;
        }
        partial = 0;
        let lat = now_ns().saturating_sub(start + got * gap_ns);
        got += 1;
        st.bytes_in.store(got * resp as u64, Ordering::Relaxed);
        st.ops.store(got, Ordering::Relaxed);
        rec.record(lat, st, ctl);
    };
    let sr = sender.join().unwrap_or(Err(StreamError::SenderPanicked));
    let _ = st.sock.shutdown(Shutdown::Write);
    r.and(sr)
}

fn rr_server(st: &StreamState, ctl: &Control, req: u32, resp: u32) -> Result<(), StreamError> {
    let out = pattern(resp);
    let mut inb = vec![0u8; req as usize];
    let mut ops = 0u64;
    while read_full(st, ctl, &mut inb)? {
        write_full(st, ctl, &out)?;
        ops += 1;
        st.bytes_in.store(ops * req as u64, Ordering::Relaxed);
        st.bytes_out.store(ops * resp as u64, Ordering::Relaxed);
        st.ops.store(ops, Ordering::Relaxed);
    }
    st.eof_ns.store(now_ns(), Ordering::Release);
    let _ = st.sock.shutdown(Shutdown::Write);
    Ok(())
}

/// Gap between writes of `bs` bytes for `bits_per_s` on one stream.
pub fn send_gap_ns(bs: u32, bits_per_s: f64) -> u64 {
    ((bs as f64 * 8.0 * 1e9) / bits_per_s).max(1.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (TcpStream, TcpStream) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        (c, s)
    }

    /// Runs a client and a server loop for `ms`; returns both and the nanoseconds
    /// from the schedule's start to the stop.
    fn go(job_c: Job, job_s: Job, ms: u64) -> (Arc<StreamState>, Arc<StreamState>, u64) {
        let (c, s) = pair();
        let ctl = Arc::new(Control::default());
        ctl.start_ns.store(now_ns(), Ordering::Release);
        let sc = Arc::new(StreamState::new(0, Role::Send, c));
        let ss = Arc::new(StreamState::new(0, Role::Send, s));
        let h1 = {
            let (st, ctl) = (sc.clone(), ctl.clone());
            std::thread::spawn(move || run(st, ctl, job_c, None))
        };
        let h2 = {
            let (st, ctl) = (ss.clone(), Arc::new(Control::default()));
            std::thread::spawn(move || run(st, ctl, job_s, None))
        };
        std::thread::sleep(std::time::Duration::from_millis(ms));
        ctl.request_stop();
        h1.join().unwrap();
        h2.join().unwrap();
        let ran_ns = ctl.stop_ns.load(Ordering::Relaxed) - ctl.start_ns.load(Ordering::Relaxed);
        (sc, ss, ran_ns)
    }

    #[test]
    fn every_byte_sent_is_received() {
        for zerocopy in [false, true] {
            let (c, s, _) = go(
                Job::Send {
                    bs: 64 * 1024,
                    gap_ns: None,
                    zerocopy,
                },
                Job::Recv { bs: 64 * 1024 },
                200,
            );
            let sent = c.bytes_out.load(Ordering::Relaxed);
            assert!(sent > 1 << 20, "{sent}");
            assert_eq!(sent, s.bytes_in.load(Ordering::Relaxed));
            assert!(c.error().is_none() && s.error().is_none());
            assert!(s.eof_ns.load(Ordering::Relaxed) > 0);
        }
    }

    #[test]
    fn paced_sender_keeps_its_rate() {
        // 1000 writes/s of 1 KiB: one write per elapsed millisecond (the first at 0).
        let (c, _, ran_ns) = go(
            Job::Send {
                bs: 1024,
                gap_ns: Some(send_gap_ns(1024, 1024.0 * 8.0 * 1000.0)),
                zerocopy: false,
            },
            Job::Recv { bs: 1024 },
            300,
        );
        let ops = c.ops.load(Ordering::Relaxed);
        let due = ran_ns / 1_000_000 + 1;
        // Never ahead of the schedule; behind only by what a descheduled thread had
        // not yet caught up on when the stop came (it catches up at once when late).
        assert!(ops <= due && ops * 10 >= due * 9, "{ops} writes, {due} due");
        assert_eq!(c.take_latency().count(), ops);
    }

    #[test]
    fn transactions_are_counted_and_timed() {
        for gap in [None, Some(200_000)] {
            let (c, s, _) = go(
                Job::RrClient {
                    req: 1,
                    resp: 1,
                    gap_ns: gap,
                },
                Job::RrServer { req: 1, resp: 1 },
                200,
            );
            let ops = c.ops.load(Ordering::Relaxed);
            assert!(ops > 100, "{ops}");
            assert_eq!(ops, s.ops.load(Ordering::Relaxed));
            assert_eq!(c.take_latency().count(), ops);
        }
    }
}
