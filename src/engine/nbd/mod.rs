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
//!
//! The loop, the losses and the reconnects are the shared [`super::driver`]'s;
//! this file holds only libnbd's calls ([`Nbd`]). Unlike libiscsi and libnfs,
//! libnbd is serviced only when poll(2) found its socket ready, each command's
//! completion is kept on its own connection ([`Inflight`]), and a connection is
//! asked whether it died after servicing (libnbd reports a dead socket that way).
//!
//! With simple replies (the default) the connections are ioscope's own NBD client
//! ([`wire`]), which sends a turn's requests in one system call and takes every
//! reply that arrived in another; structured replies go through libnbd. Both report
//! into the same [`Inflight`] slots, so everything above the connection is shared.

mod handshake;
mod inflight;
mod wire;

use crate::target::nbd::ffi;
use inflight::Inflight;

use super::driver::{Attempt, Driver, Pacing, Protocol, Reconnects, Target};
use super::{Completion, EngineError, IoRequest};
use crate::plan::model::Op;
use crate::target::{Backing, OpenTarget};
use std::sync::Arc;

/// One worker's connections to the NBD targets it serves.
pub type NbdEngine = Driver<Nbd>;

/// libnbd's calls for the driver; holds the capacity each connection's slots are
/// sized for.
pub struct Nbd {
    capacity: usize,
}

/// One NBD target.
pub struct Export {
    uri: String,
    /// Where the connection goes, for messages ("127.0.0.1:10809", a socket path).
    server: String,
    multi_conn: bool,
    /// The reply form to ask for (the run's `nbd_structured_replies`).
    replies: ffi::Replies,
    /// Where ioscope's own client connects; `None`: through libnbd.
    wire: Option<wire::Dest>,
}

/// One connection: ioscope's own client, or a libnbd handle and its socket (asked
/// once: `nbd_aio_get_fd` is a call).
pub enum Conn {
    Wire(Box<wire::Conn>),
    Lib { conn: ffi::Conn, fd: i32 },
}

impl Conn {
    fn new(conn: ffi::Conn) -> Result<Conn, ffi::NbdError> {
        Ok(Conn::Lib {
            fd: conn.fd()?,
            conn,
        })
    }
}

impl Protocol for Nbd {
    const NAME: &'static str = "nbd";
    const KIND: &'static str = "an NBD";
    const ATTEMPT_TIMED_OUT: &'static str = "no handshake in time";
    // Serviced when ready, but every reap starts by sending the turn's requests
    // (`flush`): the own client queues them until then.
    const PACING: Pacing = Pacing {
        first_turn_polls: true,
        ..Pacing::WHEN_READY
    };
    // libnbd reports a socket that died by the handle's state.
    const CHECKS_LIVENESS: bool = true;

    type Spec = Export;
    type Conn = Conn;
    type LinkState = Inflight;

    fn spec(t: &Arc<OpenTarget>) -> Option<Export> {
        let Backing::Nbd(n) = &t.backing else {
            return None;
        };
        Some(Export {
            uri: n.uri.clone(),
            server: n.server.clone(),
            multi_conn: n.multi_conn,
            replies: n.replies,
            wire: match n.replies {
                ffi::Replies::Simple => wire::Dest::of(&n.uri),
                ffi::Replies::Structured => None,
            },
        })
    }

    fn server(spec: &Export) -> &str {
        &spec.server
    }

    fn open(&self, e: &Export, limit_ns: u64) -> Result<Conn, EngineError> {
        let setup = |msg: String| EngineError::Setup {
            engine: "nbd",
            source: std::io::Error::other(msg),
        };
        if let Some(d) = &e.wire {
            return wire::Conn::connect(d, limit_ns)
                .map(|w| Conn::Wire(Box::new(w)))
                .map_err(|err| setup(format!("connecting to {}: {err}", e.server)));
        }
        let conn = ffi::Conn::connect_within(&e.uri, e.replies, limit_ns)
            .map_err(|err| setup(format!("connecting to {}: {err}", e.server)))?;
        Conn::new(conn).map_err(|err| setup(format!("{}: {err}", e.server)))
    }

    fn with_capacity(capacity: usize) -> Nbd {
        Nbd { capacity }
    }

    fn link_state(&self) -> Inflight {
        Inflight::with_capacity(self.capacity)
    }

    fn may_connect(e: &Export, per_target: u32) -> Result<(), EngineError> {
        if per_target > 1 && !e.multi_conn {
            return Err(EngineError::Unsupported {
                option: "--connections",
                msg: format!(
                    "{} does not advertise multi-conn, so {per_target} connections might not see each other's writes",
                    e.server
                ),
            });
        }
        Ok(())
    }

    fn pollfd(c: &Conn) -> libc::pollfd {
        let (conn, fd) = match c {
            Conn::Wire(w) => return w.pollfd(),
            Conn::Lib { conn, fd } => (conn, *fd),
        };
        let dir = conn.direction();
        let mut events = 0;
        if dir & ffi::DIRECTION_READ != 0 {
            events |= libc::POLLIN;
        }
        if dir & ffi::DIRECTION_WRITE != 0 {
            events |= libc::POLLOUT;
        }
        super::wait::pollfd(fd, events)
    }

    fn service(c: &Conn, revents: i16, _live: bool) -> Result<(), String> {
        let conn = match c {
            Conn::Wire(w) => return w.service(revents),
            Conn::Lib { conn, .. } => conn,
        };
        let mut r = Ok(());
        if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
            r = conn.notify_read();
        }
        if r.is_ok() && revents & libc::POLLOUT != 0 {
            r = conn.notify_write();
        }
        r.map_err(|e| e.msg)
    }

    /// The own client sends the turn's requests here, in one call; libnbd sent
    /// each as it was queued.
    fn flush(c: &Conn) -> Option<Result<(), String>> {
        Some(match c {
            Conn::Wire(w) => w.flush(),
            Conn::Lib { .. } => Ok(()),
        })
    }

    fn is_dead(c: &Conn) -> bool {
        match c {
            Conn::Wire(w) => w.error().is_some(),
            Conn::Lib { conn, .. } => conn.is_dead(),
        }
    }

    unsafe fn send(
        &mut self,
        _spec: &Export,
        inflight: &mut Inflight,
        c: &Conn,
        _at: (usize, usize),
        req: &IoRequest,
    ) -> Result<(), String> {
        let (slot, ticket) = inflight.claim(req.tag, req.len);
        // SAFETY: the caller's promise for the buffer; the ticket is boxed in
        // `inflight`, which outlives the connection (declared after it in the link).
        let r = unsafe {
            match (c, req.op) {
                (Conn::Wire(w), op) => w.submit(op, req.buf, req.len, req.offset, ticket),
                (Conn::Lib { conn, .. }, Op::Read) => conn
                    .aio_pread(req.buf, req.len, req.offset, ticket)
                    .map_err(|e| e.msg),
                (Conn::Lib { conn, .. }, Op::Write) => conn
                    .aio_pwrite(req.buf, req.len, req.offset, ticket)
                    .map_err(|e| e.msg),
                (Conn::Lib { conn, .. }, Op::Trim) => conn
                    .aio_trim(req.len, req.offset, ticket)
                    .map_err(|e| e.msg),
            }
        };
        if r.is_err() {
            // Refused: no completion will be reported for it.
            inflight.release(slot);
        }
        r
    }

    /// Closing the handle makes libnbd touch none of its buffers: what it reported
    /// finished keeps its result, the rest never will be.
    fn closed(inflight: &mut Inflight, orphans: &mut Vec<Completion>) {
        inflight.finish(|tag, result| orphans.push(Completion::reaped(tag, result)));
        orphans.extend(inflight.drain().into_iter().map(super::reconnect::aborted));
    }

    fn loss_count(&self, inflight: &Inflight) -> usize {
        inflight.len()
    }

    fn in_flight(&self, targets: &[Option<Target<Self>>]) -> usize {
        targets
            .iter()
            .flatten()
            .flat_map(|e| &e.links)
            .map(|l| l.state.len())
            .sum()
    }

    /// Moves every command libnbd reported finished into `out`. A connection that
    /// died fails its commands (libnbd reports them with ENOTCONN) or shows in poll
    /// (on_ready checks): only then is it worth asking libnbd about every
    /// connection's state.
    fn reap(
        d: &mut Driver<Self>,
        out: &mut Vec<Completion>,
        min_complete: u32,
    ) -> Result<(), EngineError> {
        let mut failed = false;
        for l in d.links_mut() {
            l.state.finish(|tag, result| {
                failed |= result < 0;
                out.push(Completion::reaped(tag, result));
            });
        }
        if failed || min_complete > 0 {
            d.check_alive()?;
        }
        Ok(())
    }

    fn abandoned(d: &mut Driver<Self>, tag: u64) -> Option<(usize, usize)> {
        let mut found = None;
        for (ti, e) in d.targets.iter_mut().enumerate() {
            let Some(e) = e else { continue };
            for (ci, l) in e.links.iter_mut().enumerate() {
                if l.state.forget(tag) {
                    found = Some((ti, ci));
                }
            }
        }
        found
    }

    fn start_attempt(e: &Export) -> Result<Conn, String> {
        if let Some(d) = &e.wire {
            return wire::Conn::start(d).map(|w| Conn::Wire(Box::new(w)));
        }
        ffi::Conn::start_connect(&e.uri, e.replies)
            .and_then(Conn::new)
            .map_err(|e| e.msg)
    }

    fn attempt(c: &Conn) -> Attempt {
        let (ready, failed) = match c {
            Conn::Wire(w) => (w.is_ready(), w.error()),
            Conn::Lib { conn, .. } => (conn.is_ready(), conn.is_dead().then(|| conn.last_error())),
        };
        match (ready, failed) {
            (true, _) => Attempt::Ready,
            (false, Some(e)) => Attempt::Failed(e),
            (false, None) => Attempt::Pending,
        }
    }
}

impl Reconnects for Nbd {}
