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
//! connection's other requests fail with ECONNABORTED, a `down` event names the
//! cause, and a later request on it fails the run with "connection to … lost after
//! N s: …".

use crate::target::nbd::ffi;

use super::{Completion, Engine, EngineError, EngineEvent, EngineEventKind, IoRequest, Targets};
use crate::plan::model::Op;
use crate::target::Backing;
use std::collections::HashMap;

/// One connection and the requests it carries.
struct Link {
    /// `None` once the engine closed it (an abandoned request, a dead socket).
    conn: Option<ffi::Conn>,
    fd: i32,
    /// Where the connection goes, for messages ("127.0.0.1:10809", a socket path).
    server: String,
    /// cookie → (tag, len) of each command in flight.
    inflight: HashMap<u64, (u64, u32)>,
    /// When the connection was opened, for "lost after N s" messages.
    opened_ns: u64,
    /// Why it was closed, once it is.
    lost: Option<String>,
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
        inflight: HashMap::with_capacity(capacity),
        opened_ns: crate::clock::now_ns(),
        lost: None,
    })
}

impl Link {
    /// The failure of a connection that died, naming the server.
    fn lost_err(&self, what: &str) -> EngineError {
        let secs = crate::clock::now_ns().saturating_sub(self.opened_ns) as f64 / 1e9;
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
        for (_, (tag, _)) in self.inflight.drain() {
            orphans.push(Completion {
                tag,
                result: -(libc::ECONNABORTED as i64),
                done_ns: 0,
            });
        }
        self.lost = Some(why);
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
            connect_limit_ns: limit_ns,
        })
    }

    /// Retires every finished command of every connection into `out`.
    fn harvest(&mut self, out: &mut Vec<Completion>) {
        out.append(&mut self.orphans);
        for l in self.exports.iter_mut().flatten().flat_map(|e| &mut e.links) {
            let Some(conn) = &l.conn else { continue };
            while let Some(cookie) = conn.peek_completed() {
                let r = conn.retire(cookie);
                let Some((tag, len)) = l.inflight.remove(&cookie) else {
                    continue;
                };
                out.push(Completion {
                    tag,
                    result: match r {
                        Ok(()) => len as i64,
                        Err(e) => -(e.errno as i64),
                    },
                    done_ns: 0,
                });
            }
        }
    }

    /// Fails the run when a connection died on its own (the server closed it or
    /// went away): its commands come back as errors, nothing more can be sent on it,
    /// and no reconnection is attempted. The `down` event records it too.
    fn check_alive(&mut self) -> Result<(), EngineError> {
        for (ti, e) in self.exports.iter_mut().enumerate() {
            let Some(e) = e else { continue };
            for (ci, l) in e.links.iter_mut().enumerate() {
                if l.conn.as_ref().is_some_and(|c| c.is_dead()) {
                    let err = l.lost_err("the server closed it or stopped answering");
                    self.events.push(EngineEvent {
                        at_ns: crate::clock::now_ns(),
                        target: ti as u32,
                        conn: ci as u32,
                        kind: EngineEventKind::Down,
                        detail: crate::errors::chain(&err),
                    });
                    l.close(crate::errors::chain(&err), &mut self.orphans);
                    return Err(err);
                }
            }
        }
        Ok(())
    }

    /// Lets libnbd act on what poll(2) found ready on the connection `(t, c)`.
    fn service(&mut self, t: usize, c: usize, revents: i16) -> Result<(), EngineError> {
        let Some(l) = self.exports[t].as_mut().and_then(|e| e.links.get_mut(c)) else {
            return Ok(());
        };
        let Some(conn) = &l.conn else { return Ok(()) };
        let mut r = Ok(());
        if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
            r = conn.notify_read();
        }
        if r.is_ok() && revents & libc::POLLOUT != 0 {
            r = conn.notify_write();
        }
        match r {
            Ok(()) => Ok(()),
            Err(e) => {
                let err = l.lost_err(&e.msg);
                self.events.push(EngineEvent {
                    at_ns: crate::clock::now_ns(),
                    target: t as u32,
                    conn: c as u32,
                    kind: EngineEventKind::Down,
                    detail: crate::errors::chain(&err),
                });
                l.close(e.msg, &mut self.orphans);
                Err(err)
            }
        }
    }
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
        let Some(conn) = &l.conn else {
            let why = l.lost.clone().unwrap_or_default();
            return Err(l.lost_err(&why));
        };
        // SAFETY: the runner keeps the buffer valid and untouched until this request's
        // completion is returned, which happens only after the command is retired or
        // its connection closed.
        let r = unsafe {
            match req.op {
                Op::Read => conn.aio_pread(req.buf, req.len, req.offset),
                Op::Write => conn.aio_pwrite(req.buf, req.len, req.offset),
            }
        };
        match r {
            Ok(cookie) => {
                l.inflight.insert(cookie, (req.tag, req.len));
                Ok(())
            }
            Err(e) if conn.is_dead() => Err(l.lost_err(&e.msg)),
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
        let deadline = timeout_ns.map(|t| crate::clock::now_ns().saturating_add(t));
        let mut fds = Vec::new();
        loop {
            self.harvest(out);
            self.check_alive()?;
            let got = out.len() - start;
            let pending: usize = self
                .exports
                .iter()
                .flatten()
                .flat_map(|e| &e.links)
                .map(|l| l.inflight.len())
                .sum();
            if got >= min_complete as usize || pending == 0 {
                return Ok(());
            }
            let wait = match deadline {
                Some(d) => {
                    let now = crate::clock::now_ns();
                    if now >= d {
                        return Ok(());
                    }
                    d - now
                }
                None => u64::MAX,
            };
            fds.clear();
            self.poll_fds(&mut fds);
            if fds.is_empty() {
                return Ok(());
            }
            super::wait::poll_until(&mut fds, wait).map_err(|e| EngineError::Io {
                engine: "nbd",
                op: "ppoll",
                source: e,
            })?;
            self.on_ready(&fds)?;
        }
    }

    fn poll_fds(&mut self, out: &mut Vec<libc::pollfd>) {
        self.poll_links.clear();
        for (ti, e) in self.exports.iter().enumerate() {
            let Some(e) = e else { continue };
            for (ci, l) in e.links.iter().enumerate() {
                let Some(conn) = &l.conn else { continue };
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
        self.check_alive()
    }

    fn abandon(&mut self, tag: u64) -> bool {
        for (ti, e) in self.exports.iter_mut().enumerate() {
            let Some(e) = e else { continue };
            for (ci, l) in e.links.iter_mut().enumerate() {
                let Some(cookie) = l
                    .inflight
                    .iter()
                    .find_map(|(&k, &(t, _))| (t == tag).then_some(k))
                else {
                    continue;
                };
                l.inflight.remove(&cookie);
                let why = "no answer within the I/O timeout".to_string();
                self.events.push(EngineEvent {
                    at_ns: crate::clock::now_ns(),
                    target: ti as u32,
                    conn: ci as u32,
                    kind: EngineEventKind::Down,
                    detail: why.clone(),
                });
                l.close(why, &mut self.orphans);
                return true;
            }
        }
        false
    }

    fn take_events(&mut self, out: &mut Vec<EngineEvent>) {
        out.append(&mut self.events);
    }
}
