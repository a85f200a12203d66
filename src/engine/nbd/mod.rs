//! The nbd engine: NBD targets through libnbd's asynchronous API, driven from the
//! worker's own loop. Each worker opens its own connections to every NBD target —
//! `N` of them when the run asks for `--connections N` (NBD multi-conn, which the
//! target allows only when the server advertises it). Requests go out with
//! `nbd_aio_pread`/`pwrite` on the connection the request names; the engine lists
//! the sockets in the directions libnbd asks for ([`Engine::poll_fds`]), the worker
//! waits on them in poll(2), the engine notifies libnbd of what is ready
//! ([`Engine::on_ready`]) and retires finished commands with
//! `nbd_aio_peek_command_completed`/`nbd_aio_command_completed`. Many I/Os are in
//! flight per connection and no thread is spent per I/O.
//!
//! A request past `--io-timeout` is abandoned by closing its connection (libnbd
//! cannot forget one command, and its buffer must not be touched afterwards): the
//! connection's other requests fail with ECONNABORTED and a `down` event names the
//! cause. A connection the server drops is lost the same way. Then, under the stop
//! policy, a later request on it fails the run with "connection to … lost after
//! N s: …"; under `--on-error continue` or `retry=N` the engine connects again
//! without blocking the worker ([`super::reconnect`]: `nbd_aio_connect_uri`, its
//! socket polled like the others), holds the requests sent to the connection
//! meanwhile, sends them once it is back (an `up` event) and fails the run only
//! when the reconnect window passes.

mod inflight;

use crate::target::nbd::ffi;
use inflight::Inflight;

use super::reconnect::{aborted, Parked, Reconnect, Retry};
use super::{Completion, Engine, EngineError, EngineEvent, EngineEventKind, IoRequest, Targets};
use crate::clock::now_ns;
use crate::plan::model::Op;
use crate::target::Backing;

/// One connection and the requests it carries.
struct Link {
    /// `None` once the engine closed it (an abandoned request, a dead socket).
    conn: Option<ffi::Conn>,
    /// The socket to poll: the connection's, or the reconnect attempt's.
    fd: i32,
    /// Where the connection goes, for messages ("127.0.0.1:10809", a socket path).
    server: String,
    /// The commands in flight, and where libnbd reports them finished.
    inflight: Inflight,
    /// When the connection was opened, for "lost after N s" messages.
    opened_ns: u64,
    /// Why it was closed, once it is.
    lost: Option<String>,
    /// While it reconnects.
    retry: Option<Retry<ffi::Conn>>,
}

/// One NBD target: its URI and its connections.
struct Export {
    uri: String,
    server: String,
    multi_conn: bool,
    links: Vec<Link>,
}

/// One worker's connections to the NBD targets it serves.
pub struct NbdEngine {
    /// Indexed like the target list; `None` for a target that is not NBD.
    exports: Vec<Option<Export>>,
    /// (target, connection) of each entry last handed out by `poll_fds`.
    poll_links: Vec<(usize, usize)>,
    /// Completions of requests on closed connections, returned at the next reap.
    orphans: Vec<Completion>,
    events: Vec<EngineEvent>,
    capacity: usize,
    /// Reconnect lost connections on this schedule (`None`: a loss ends the run).
    reconnect: Option<Reconnect>,
    /// Bound on each connection's set-up (0: none).
    connect_limit_ns: u64,
}

fn io_err(op: &'static str, msg: String) -> EngineError {
    EngineError::Io {
        engine: "nbd",
        op,
        source: std::io::Error::other(msg),
    }
}

/// Opens one connection; `limit_ns` > 0 bounds the connection and handshake.
fn open_link(uri: &str, server: &str, capacity: usize, limit_ns: u64) -> Result<Link, EngineError> {
    let setup = |msg: String| EngineError::Setup {
        engine: "nbd",
        source: std::io::Error::other(msg),
    };
    let conn = ffi::Conn::connect_within(uri, limit_ns)
        .map_err(|e| setup(format!("connecting to {server}: {e}")))?;
    let fd = conn.fd().map_err(|e| setup(format!("{server}: {e}")))?;
    Ok(Link {
        conn: Some(conn),
        fd,
        server: server.to_string(),
        inflight: Inflight::with_capacity(capacity),
        opened_ns: now_ns(),
        lost: None,
        retry: None,
    })
}

impl Link {
    /// The failure of a connection that died, naming the server.
    fn lost_err(&self, what: &str) -> EngineError {
        let secs = now_ns().saturating_sub(self.opened_ns) as f64 / 1e9;
        io_err(
            "connection",
            format!(
                "connection to {} lost after {secs:.1} s: {what} ({} I/Os in flight)",
                self.server,
                self.inflight.len()
            ),
        )
    }

    /// Closes the connection (libnbd then touches none of its buffers) and fails
    /// its requests into `orphans`.
    fn close(&mut self, why: String, orphans: &mut Vec<Completion>) {
        self.conn = None;
        // What libnbd reported finished keeps its result; the rest never will be.
        self.inflight
            .finish(|tag, result| orphans.push(done(tag, result)));
        orphans.extend(self.inflight.drain().into_iter().map(aborted));
        self.lost = Some(why);
    }

    /// The handle libnbd drives on this link now: the connection, or the reconnect
    /// attempt under way.
    fn polled(&self) -> Option<&ffi::Conn> {
        self.conn
            .as_ref()
            .or_else(|| self.retry.as_ref()?.pending.as_ref())
    }

    /// Sends `req` on the live connection.
    ///
    /// # Safety
    /// As for [`ffi::Conn::aio_pread`]: the request's buffer stays valid and
    /// untouched until its completion is returned.
    unsafe fn send(&mut self, req: &IoRequest) -> Result<(), ffi::NbdError> {
        let Some(conn) = &self.conn else {
            return Err(ffi::NbdError {
                msg: "not connected".into(),
                errno: libc::ENOTCONN,
            });
        };
        let (slot, ticket) = self.inflight.claim(req.tag, req.len);
        // SAFETY: the caller's promise for the buffer; the ticket is boxed in
        // `inflight`, which outlives the connection (declared after it).
        let r = unsafe {
            match req.op {
                Op::Read => conn.aio_pread(req.buf, req.len, req.offset, ticket),
                Op::Write => conn.aio_pwrite(req.buf, req.len, req.offset, ticket),
                Op::Trim => conn.aio_trim(req.len, req.offset, ticket),
            }
        };
        if r.is_err() {
            // Refused: libnbd will not call back for it.
            self.inflight.release(slot);
        }
        r
    }
}

impl NbdEngine {
    /// Opens one connection per NBD target ([`Engine::connect`] opens the rest).
    pub fn new(targets: &Targets, capacity: usize) -> Result<Self, EngineError> {
        Self::new_within(targets, capacity, 0)
    }

    /// [`NbdEngine::new`] with every connection's set-up bounded by `limit_ns` (0:
    /// none): a multipath probe must not hang on a stalled server or a cut link.
    pub fn new_within(
        targets: &Targets,
        capacity: usize,
        limit_ns: u64,
    ) -> Result<Self, EngineError> {
        let mut exports = Vec::with_capacity(targets.len());
        for t in targets.iter() {
            let Backing::Nbd(n) = &t.backing else {
                exports.push(None);
                continue;
            };
            exports.push(Some(Export {
                uri: n.uri.clone(),
                server: n.server.clone(),
                multi_conn: n.multi_conn,
                links: vec![open_link(&n.uri, &n.server, capacity, limit_ns)?],
            }));
        }
        Ok(NbdEngine {
            exports,
            poll_links: Vec::new(),
            orphans: Vec::new(),
            events: Vec::new(),
            capacity,
            reconnect: None,
            connect_limit_ns: limit_ns,
        })
    }

    /// Reconnects lost connections on schedule `r` instead of failing the run.
    pub fn with_reconnect(mut self, r: Reconnect) -> Self {
        self.reconnect = Some(r);
        self
    }

    /// Connection `(t, c)` is lost: a `down` event, its requests fail with
    /// ECONNABORTED; then it reconnects, or (without a schedule) the loss is the
    /// returned error.
    fn lose(&mut self, t: usize, c: usize, why: &str) -> Result<(), EngineError> {
        let Some(l) = self.exports[t].as_mut().and_then(|e| e.links.get_mut(c)) else {
            return Ok(());
        };
        let err = l.lost_err(why);
        let detail = crate::errors::chain(&err);
        l.close(why.to_string(), &mut self.orphans);
        if self.reconnect.is_some() {
            l.retry = Some(Retry::new(now_ns(), why));
        }
        self.events
            .push(EngineEvent::now(t, c, EngineEventKind::Down, detail));
        match self.reconnect {
            Some(_) => Ok(()),
            None => Err(err),
        }
    }

    /// Moves every command libnbd reported finished into `out`; true when one of
    /// them failed (its connection may have died).
    fn harvest(&mut self, out: &mut Vec<Completion>) -> bool {
        out.append(&mut self.orphans);
        let mut failed = false;
        for l in self.exports.iter_mut().flatten().flat_map(|e| &mut e.links) {
            l.inflight.finish(|tag, result| {
                failed |= result < 0;
                out.push(done(tag, result));
            });
        }
        failed
    }

    /// Every live connection that died on its own (the server closed it or went
    /// away) is lost: its commands come back as errors and, without reconnecting,
    /// the run fails naming the server.
    fn check_alive(&mut self) -> Result<(), EngineError> {
        let mut dead = Vec::new();
        for (ti, e) in self.exports.iter().enumerate() {
            let Some(e) = e else { continue };
            for (ci, l) in e.links.iter().enumerate() {
                if l.conn.as_ref().is_some_and(|c| c.is_dead()) {
                    dead.push((ti, ci));
                }
            }
        }
        for (t, c) in dead {
            self.lose(t, c, "the server closed it or stopped answering")?;
        }
        Ok(())
    }

    /// Moves every reconnecting link along its schedule: starts attempts that are
    /// due, finishes those whose handshake is done (an `up` event, the parked
    /// requests sent) or failed; `Err` when a link's window is over.
    fn tend(&mut self) -> Result<(), EngineError> {
        let Some(r) = self.reconnect else {
            return Ok(());
        };
        for t in 0..self.exports.len() {
            let nlinks = self.exports[t].as_ref().map_or(0, |e| e.links.len());
            for c in 0..nlinks {
                self.tend_link(t, c, &r)?;
            }
        }
        Ok(())
    }

    fn tend_link(&mut self, t: usize, c: usize, r: &Reconnect) -> Result<(), EngineError> {
        let now = now_ns();
        let e = self.exports[t].as_mut().expect("an NBD target");
        let l = &mut e.links[c];
        let Some(retry) = l.retry.as_mut() else {
            return Ok(());
        };
        let due = now >= retry.attempts.next_ns;
        let failure = match &retry.pending {
            Some(_) if retry.broken.is_some() => retry.broken.take(),
            Some(p) if p.is_ready() => None,
            Some(p) if p.is_dead() => Some(format!("reconnecting: {}", p.last_error())),
            Some(_) if due => Some("reconnecting: no handshake in time".to_string()),
            Some(_) => return Ok(()),
            None if due => {
                retry.attempts.start(now, r);
                match ffi::Conn::start_connect(&e.uri).and_then(|p| Ok((p.fd()?, p))) {
                    Ok((fd, p)) => {
                        l.fd = fd;
                        retry.pending = Some(p);
                        return Ok(());
                    }
                    Err(e) => Some(format!("reconnecting: {e}")),
                }
            }
            None => return Ok(()),
        };
        let Some(why) = failure else {
            let detail = up(l, now, &mut self.orphans);
            self.events
                .push(EngineEvent::now(t, c, EngineEventKind::Up, detail));
            return Ok(());
        };
        let Some(summary) = retry.failed(now, why, r, &mut self.orphans) else {
            return Ok(());
        };
        // The window is over: what waited failed, and so does the run.
        l.retry = None;
        let why = format!("{}; {summary}", l.lost.as_deref().unwrap_or("lost"));
        l.lost = Some(why.clone());
        Err(l.lost_err(&why))
    }

    /// Lets libnbd act on what poll(2) found ready on the connection `(t, c)`.
    fn service(&mut self, t: usize, c: usize, revents: i16) -> Result<(), EngineError> {
        let Some(l) = self.exports[t].as_mut().and_then(|e| e.links.get_mut(c)) else {
            return Ok(());
        };
        let live = l.conn.is_some();
        let Some(conn) = l.polled() else {
            return Ok(());
        };
        let mut r = Ok(());
        if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
            r = conn.notify_read();
        }
        if r.is_ok() && revents & libc::POLLOUT != 0 {
            r = conn.notify_write();
        }
        match (r, l.retry.as_mut()) {
            (Err(e), _) if live => self.lose(t, c, &e.msg),
            // A reconnect attempt's failure is the attempt's, seen by `tend`.
            (Err(e), Some(retry)) => {
                retry.broken = Some(format!("reconnecting: {}", e.msg));
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// When the engine must be called again even if no socket is ready: the next
    /// reconnect attempt, or the end of the one under way.
    fn next_attempt_ns(&self) -> Option<u64> {
        self.exports
            .iter()
            .flatten()
            .flat_map(|e| &e.links)
            .filter_map(|l| l.retry.as_ref().map(|r| r.attempts.next_ns))
            .min()
    }

    /// Requests the engine holds: in flight, or parked while reconnecting.
    fn pending(&self) -> usize {
        self.exports
            .iter()
            .flatten()
            .flat_map(|e| &e.links)
            .map(|l| l.inflight.len() + l.retry.as_ref().map_or(0, |r| r.parked.len()))
            .sum()
    }
}

/// The completion of request `tag`: bytes moved, or a negated errno.
fn done(tag: u64, result: i64) -> Completion {
    Completion {
        tag,
        result,
        done_ns: 0,
    }
}

/// A reconnect attempt's handshake is done: the link is live again and the
/// requests parked meanwhile go out on it (one that cannot is failed into
/// `orphans`). Returns the `up` event's text.
fn up(l: &mut Link, now: u64, orphans: &mut Vec<Completion>) -> String {
    let retry = l.retry.take().expect("a reconnecting link");
    let detail = retry.up_detail(&l.server, now);
    l.conn = retry.pending;
    l.opened_ns = now;
    l.lost = None;
    for Parked(req) in retry.parked {
        // SAFETY: parked requests were pushed under push's contract and not
        // touched since.
        if unsafe { l.send(&req) }.is_err() {
            orphans.push(aborted(req.tag));
        }
    }
    detail
}

impl Engine for NbdEngine {
    fn name(&self) -> &'static str {
        "nbd"
    }

    fn connect(&mut self, per_target: u32) -> Result<(), EngineError> {
        let (capacity, limit_ns) = (self.capacity, self.connect_limit_ns);
        for e in self.exports.iter_mut().flatten() {
            if per_target > 1 && !e.multi_conn {
                return Err(EngineError::Unsupported {
                    option: "--connections",
                    msg: format!(
                        "{} does not advertise multi-conn, so {per_target} connections might not see each other's writes",
                        e.server
                    ),
                });
            }
            while e.links.len() < per_target as usize {
                e.links
                    .push(open_link(&e.uri, &e.server, capacity, limit_ns)?);
            }
        }
        Ok(())
    }

    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let Some(e) = self
            .exports
            .get_mut(req.target as usize)
            .and_then(|l| l.as_mut())
        else {
            return Err(io_err(
                "submit",
                format!("target {} is not an NBD target", req.target),
            ));
        };
        let n = e.links.len();
        let l = &mut e.links[req.conn as usize % n];
        if l.conn.is_none() {
            if let Some(retry) = l.retry.as_mut() {
                retry.parked.push(Parked(req));
                return Ok(());
            }
            let why = l.lost.clone().unwrap_or_default();
            return Err(l.lost_err(&why));
        }
        // SAFETY: the runner keeps the buffer valid and untouched until this request's
        // completion is returned, which happens only after the command is retired or
        // its connection closed.
        match unsafe { l.send(&req) } {
            Ok(()) => Ok(()),
            Err(e) if l.conn.as_ref().is_some_and(|c| c.is_dead()) => Err(l.lost_err(&e.msg)),
            Err(e) => Err(io_err("submit", format!("{}: {e}", l.server))),
        }
    }

    fn submit_and_reap(
        &mut self,
        min_complete: u32,
        timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        let start = out.len();
        let deadline = timeout_ns.map_or(u64::MAX, |t| now_ns().saturating_add(t));
        let mut fds = Vec::new();
        loop {
            self.tend()?;
            // A connection that died fails its commands (libnbd reports them with
            // ENOTCONN) or shows in poll (on_ready checks): only then is it worth
            // asking libnbd about every connection's state.
            if self.harvest(out) || min_complete > 0 {
                self.check_alive()?;
            }
            let got = out.len() - start;
            if got >= min_complete as usize || self.pending() == 0 {
                return Ok(());
            }
            let now = now_ns();
            if now >= deadline {
                return Ok(());
            }
            let until = self.next_attempt_ns().map_or(deadline, |a| a.min(deadline));
            fds.clear();
            self.poll_fds(&mut fds);
            if fds.is_empty() && until == u64::MAX {
                return Ok(());
            }
            super::wait::poll_until(&mut fds, until.saturating_sub(now)).map_err(|e| {
                EngineError::Io {
                    engine: "nbd",
                    op: "ppoll",
                    source: e,
                }
            })?;
            self.on_ready(&fds)?;
        }
    }

    fn poll_fds(&mut self, out: &mut Vec<libc::pollfd>) {
        self.poll_links.clear();
        for (ti, e) in self.exports.iter().enumerate() {
            let Some(e) = e else { continue };
            for (ci, l) in e.links.iter().enumerate() {
                let Some(conn) = l.polled() else { continue };
                let dir = conn.direction();
                let mut events = 0;
                if dir & ffi::DIRECTION_READ != 0 {
                    events |= libc::POLLIN;
                }
                if dir & ffi::DIRECTION_WRITE != 0 {
                    events |= libc::POLLOUT;
                }
                out.push(libc::pollfd {
                    fd: l.fd,
                    events,
                    revents: 0,
                });
                self.poll_links.push((ti, ci));
            }
        }
    }

    fn on_ready(&mut self, fds: &[libc::pollfd]) -> Result<(), EngineError> {
        for (k, fd) in fds.iter().enumerate() {
            let Some(&(t, c)) = self.poll_links.get(k) else {
                break;
            };
            if fd.revents != 0 {
                self.service(t, c, fd.revents)?;
            }
        }
        self.tend()?;
        self.check_alive()
    }

    fn wake_ns(&self) -> Option<u64> {
        self.reconnect.and_then(|_| self.next_attempt_ns())
    }

    fn abandon(&mut self, tag: u64) -> bool {
        let mut found = None;
        for (ti, e) in self.exports.iter_mut().enumerate() {
            let Some(e) = e else { continue };
            for (ci, l) in e.links.iter_mut().enumerate() {
                // Never sent: forgetting it is enough.
                if l.retry.as_mut().is_some_and(|r| r.forget(tag)) {
                    return true;
                }
                if l.inflight.forget(tag) {
                    found = Some((ti, ci));
                }
            }
        }
        let Some((t, c)) = found else {
            return false;
        };
        // Closing the connection is the only way to make libnbd forget a command.
        // Without reconnecting, the loss fails the run at the next request on it.
        let _ = self.lose(t, c, "no answer within the I/O timeout");
        true
    }

    fn take_events(&mut self, out: &mut Vec<EngineEvent>) {
        out.append(&mut self.events);
    }
}
