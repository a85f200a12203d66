//! The nbd engine: NBD targets through libnbd's asynchronous API, driven from the
//! worker's own loop. Each worker opens its own connection to every NBD target (so
//! several workers mean several connections, which the target allows only when the
//! server advertises multi-conn). Requests go out with `nbd_aio_pread`/`pwrite`; the
//! engine then polls the connections' sockets in the directions libnbd asks for,
//! notifies libnbd, and retires finished commands with
//! `nbd_aio_peek_command_completed`/`nbd_aio_command_completed`. Many I/Os are in
//! flight per connection and no thread is spent per I/O.

use crate::target::nbd::ffi;

use super::{Completion, Engine, EngineError, IoRequest, Targets};
use crate::plan::model::Op;
use crate::target::Backing;
use std::collections::HashMap;

/// One connection and the requests it carries.
struct Link {
    conn: ffi::Conn,
    fd: i32,
    /// Where the connection goes, for messages ("127.0.0.1:10809", a socket path).
    server: String,
    /// cookie → (tag, len) of each command in flight.
    inflight: HashMap<u64, (u64, u32)>,
    /// When the connection was opened, for "lost after N s" messages.
    opened_ns: u64,
}

/// One worker's connections to the NBD targets it serves.
pub struct NbdEngine {
    /// Indexed like the target list; `None` for a target that is not NBD.
    links: Vec<Option<Link>>,
    pollfds: Vec<libc::pollfd>,
    /// Which link each entry of `pollfds` belongs to.
    poll_links: Vec<usize>,
}

fn io_err(op: &'static str, msg: String) -> EngineError {
    EngineError::Io {
        engine: "nbd",
        op,
        source: std::io::Error::other(msg),
    }
}

impl NbdEngine {
    /// Opens one connection per NBD target.
    pub fn new(targets: &Targets, capacity: usize) -> Result<Self, EngineError> {
        let mut links = Vec::with_capacity(targets.len());
        for t in targets.iter() {
            let Backing::Nbd(n) = &t.backing else {
                links.push(None);
                continue;
            };
            let conn = ffi::Conn::connect(&n.uri).map_err(|e| EngineError::Setup {
                engine: "nbd",
                source: std::io::Error::other(format!("connecting to {}: {e}", n.server)),
            })?;
            let fd = conn.fd().map_err(|e| EngineError::Setup {
                engine: "nbd",
                source: std::io::Error::other(format!("{}: {e}", n.server)),
            })?;
            links.push(Some(Link {
                conn,
                fd,
                server: n.server.clone(),
                inflight: HashMap::with_capacity(capacity),
                opened_ns: crate::clock::now_ns(),
            }));
        }
        Ok(NbdEngine {
            links,
            pollfds: Vec::new(),
            poll_links: Vec::new(),
        })
    }

    /// Retires every finished command of every connection into `out`.
    fn harvest(&mut self, out: &mut Vec<Completion>) {
        for l in self.links.iter_mut().flatten() {
            while let Some(cookie) = l.conn.peek_completed() {
                let r = l.conn.retire(cookie);
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

    /// Fails when a connection has died: its commands come back as errors
    /// (ESHUTDOWN), but nothing more can be sent on it, so the run cannot go on.
    fn check_alive(&self) -> Result<(), EngineError> {
        match self.links.iter().flatten().find(|l| l.conn.is_dead()) {
            Some(l) => Err(Self::lost(l, "the server closed it or stopped answering")),
            None => Ok(()),
        }
    }

    /// The failure of a connection that died, naming the server.
    fn lost(l: &Link, what: &str) -> EngineError {
        let secs = crate::clock::now_ns().saturating_sub(l.opened_ns) as f64 / 1e9;
        io_err(
            "connection",
            format!(
                "connection to {} lost after {secs:.1} s: {what} ({} I/Os in flight)",
                l.server,
                l.inflight.len()
            ),
        )
    }

    /// Polls the sockets that libnbd waits on, for up to `timeout_ns` (`None` = no
    /// limit), and lets libnbd act on what is ready.
    fn poll_once(&mut self, timeout_ns: Option<u64>) -> Result<(), EngineError> {
        self.pollfds.clear();
        self.poll_links.clear();
        for (i, l) in self.links.iter().enumerate() {
            let Some(l) = l else { continue };
            let dir = l.conn.direction();
            let mut events = 0;
            if dir & ffi::DIRECTION_READ != 0 {
                events |= libc::POLLIN;
            }
            if dir & ffi::DIRECTION_WRITE != 0 {
                events |= libc::POLLOUT;
            }
            if events != 0 {
                self.pollfds.push(libc::pollfd {
                    fd: l.fd,
                    events,
                    revents: 0,
                });
                self.poll_links.push(i);
            }
        }
        if self.pollfds.is_empty() {
            return Ok(());
        }
        let ts = timeout_ns.map(|ns| libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        });
        let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
        // SAFETY: pollfds is a valid array of its length; ts_ptr is null or points to
        // a timespec that outlives the call; no signal mask is changed.
        let n = unsafe {
            libc::ppoll(
                self.pollfds.as_mut_ptr(),
                self.pollfds.len() as libc::nfds_t,
                ts_ptr,
                std::ptr::null(),
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                return Ok(());
            }
            return Err(EngineError::Io {
                engine: "nbd",
                op: "ppoll",
                source: e,
            });
        }
        for (p, &li) in self.pollfds.iter().zip(&self.poll_links) {
            let Some(l) = &self.links[li] else { continue };
            let r = p.revents;
            if r & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                if let Err(e) = l.conn.notify_read() {
                    return Err(Self::lost(l, &e.msg));
                }
            }
            if r & libc::POLLOUT != 0 {
                if let Err(e) = l.conn.notify_write() {
                    return Err(Self::lost(l, &e.msg));
                }
            }
        }
        Ok(())
    }
}

impl Engine for NbdEngine {
    fn name(&self) -> &'static str {
        "nbd"
    }

    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let Some(l) = self
            .links
            .get_mut(req.target as usize)
            .and_then(|l| l.as_mut())
        else {
            return Err(io_err(
                "submit",
                format!("target {} is not an NBD target", req.target),
            ));
        };
        // SAFETY: the runner keeps the buffer valid and untouched until this request's
        // completion is returned, which happens only after the command is retired.
        let r = unsafe {
            match req.op {
                Op::Read => l.conn.aio_pread(req.buf, req.len, req.offset),
                Op::Write => l.conn.aio_pwrite(req.buf, req.len, req.offset),
            }
        };
        match r {
            Ok(cookie) => {
                l.inflight.insert(cookie, (req.tag, req.len));
                Ok(())
            }
            Err(e) if l.conn.is_dead() => Err(Self::lost(l, &e.msg)),
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
        // One non-blocking turn first: send what is queued, read what has arrived.
        self.poll_once(Some(0))?;
        self.harvest(out);
        self.check_alive()?;
        loop {
            let got = out.len() - start;
            let pending: usize = self
                .links
                .iter()
                .flatten()
                .map(|l| l.conn.in_flight())
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
                    Some(d - now)
                }
                None => None,
            };
            self.poll_once(wait)?;
            self.harvest(out);
            self.check_alive()?;
        }
    }
}
