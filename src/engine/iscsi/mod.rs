//! The iscsi engine: iSCSI LUNs through libiscsi's asynchronous API, driven from the
//! worker's own loop. Each worker logs in its own sessions to every iSCSI target —
//! `N` of them with `--connections N`. Requests go out as READ (16)/WRITE (16)
//! tasks (`iscsi_read16_task`, `iscsi_write16_task`) on the session the request
//! names; the engine lists the sessions' sockets with the events
//! `iscsi_which_events` asks for ([`Engine::poll_fds`]), the worker waits on them in
//! poll(2), and [`Engine::on_ready`] hands them to `iscsi_service`, which runs the
//! completion callback for every finished task. Many I/Os are in flight per session
//! and no thread is spent per I/O.
//!
//! A request past `--io-timeout` is abandoned by destroying its session (libiscsi
//! cancels its tasks and touches none of their buffers afterwards): the session's
//! other requests fail with ECONNABORTED and a `down` event names the cause. A
//! session libiscsi loses is lost the same way. Then, under the stop policy, a later
//! request on it fails the run with "connection to … lost after N s: …"; under
//! `--on-error continue` or `retry=N` the engine logs in again without blocking the
//! worker ([`super::reconnect`]: `iscsi_full_connect_async`, serviced like the
//! other sessions), holds the requests sent to it meanwhile and sends them once it
//! is back (an `up` event).
//!
//! The loop, the losses and the reconnects are the shared [`super::driver`]'s;
//! this file holds only the sessions' calls ([`Iscsi`]): every session is serviced
//! at each turn (libiscsi runs its timers there), a blocking reap's first turn
//! always polls and no wait is longer than 100 ms, and a session libiscsi cancelled
//! or logged out is lost to the engine too.
//!
//! Without CHAP credentials the sessions are ioscope's own initiator ([`wire`]),
//! which sends a turn's commands in one system call and takes every PDU that
//! arrived in another; with CHAP they are libiscsi's. Both report completions into
//! the same per-thread list, so everything above the session is shared.

mod login;
mod pdu;
mod wire;

use super::driver::{Attempt, Driver, Pacing, Protocol, Reconnects};
use super::tag_table::{tag_table_bookkeeping, TagTable};
use super::{Completion, EngineError, IoRequest};
use crate::plan::model::IscsiSpec;
use crate::plan::model::Op;
use crate::target::iscsi::{self, ffi};
use crate::target::{Backing, OpenTarget};
use std::sync::Arc;

/// One worker's sessions to the iSCSI targets it serves.
pub type IscsiEngine = Driver<Iscsi>;

/// libiscsi's calls for the driver, and the requests in flight on all sessions
/// (with their SCSI status once libiscsi reports them).
pub struct Iscsi {
    tags: TagTable<i32>,
}

/// One iSCSI target: where it is and its block size.
pub struct Lun {
    spec: IscsiSpec,
    block_bytes: u32,
    /// Where ioscope's own initiator connects; `None`: through libiscsi (CHAP).
    wire: Option<wire::Dest>,
}

/// One session: ioscope's own initiator, or libiscsi's.
pub enum Session {
    Wire(Box<wire::Session>),
    Lib(ffi::Session),
}

impl Session {
    fn fd(&self) -> i32 {
        match self {
            Session::Wire(w) => w.fd(),
            Session::Lib(s) => s.fd(),
        }
    }

    fn which_events(&self) -> i16 {
        match self {
            Session::Wire(w) => w.events(),
            Session::Lib(s) => s.which_events(),
        }
    }

    fn error(&self) -> String {
        match self {
            Session::Wire(w) => w.error().unwrap_or_else(|| "no error".into()),
            Session::Lib(s) => s.error(),
        }
    }
}

impl Protocol for Iscsi {
    const NAME: &'static str = "iscsi";
    const KIND: &'static str = "an iSCSI";
    const LINK: &'static str = "session";
    const RETRYING: &'static str = "logging in again";
    // iscsi_service also runs timers, and libiscsi may ask for no events for a
    // while: serviced at every turn, at least every 100 ms.
    const PACING: Pacing = Pacing::OWN_TIMERS;
    const LOSES_ONCE: bool = true;

    type Spec = Lun;
    type Conn = Session;

    fn spec(t: &Arc<OpenTarget>) -> Option<Lun> {
        let Backing::Iscsi(it) = &t.backing else {
            return None;
        };
        // CHAP (or credentials that do not read: libiscsi's login says why).
        let own = matches!(iscsi::chap_from_env(), Ok(None));
        Some(Lun {
            spec: it.spec.clone(),
            block_bytes: it.block_bytes,
            wire: own
                .then(|| wire::Dest::of(&it.spec, it.block_bytes))
                .flatten(),
        })
    }

    fn server(u: &Lun) -> &str {
        &u.spec.portal
    }

    fn open(&self, u: &Lun, limit_ns: u64) -> Result<Session, EngineError> {
        let spec = &u.spec;
        let r = match &u.wire {
            Some(d) => wire::Session::connect(d, limit_ns).map(|w| Session::Wire(Box::new(w))),
            None => iscsi::connect_within(spec, limit_ns)
                .map(Session::Lib)
                .map_err(|e| e.to_string()),
        };
        r.map_err(|e| EngineError::Setup {
            engine: "iscsi",
            source: std::io::Error::other(format!(
                "logging in to {} at {}: {e}",
                spec.iqn, spec.portal
            )),
        })
    }

    fn service(s: &Session, revents: i16, live: bool) -> Result<(), String> {
        let s = match s {
            Session::Wire(w) => return w.service(revents),
            Session::Lib(s) => s,
        };
        s.service(revents).map_err(|e| e.to_string())?;
        if live && !s.is_logged_in() {
            return Err("the session was logged out".into());
        }
        Ok(())
    }

    /// libiscsi queues a command's PDU and writes it when serviced with POLLOUT; a
    /// socket that cannot take it yet leaves it queued (EAGAIN is no error there).
    /// libiscsi writes each PDU with a `send(2)` of its own on a `TCP_NODELAY`
    /// socket, one segment each: two or more go out corked, in one segment.
    /// The own initiator sends the turn's commands here, in one call.
    fn flush(s: &Session) -> Option<Result<(), String>> {
        let s = match s {
            Session::Wire(w) => return Some(w.flush()),
            Session::Lib(s) => s,
        };
        if s.which_events() & libc::POLLOUT == 0 {
            return Some(Ok(()));
        }
        let write = || {
            s.service(libc::POLLOUT).map_err(|e| e.to_string())?;
            match s.is_logged_in() {
                true => Ok(()),
                false => Err("the session was logged out".to_string()),
            }
        };
        Some(if s.unsent().is_some_and(|n| n > 1) {
            super::cork::corked(s.fd(), write)
        } else {
            write()
        })
    }

    unsafe fn send(
        &mut self,
        u: &Lun,
        _state: &mut (),
        session: &Session,
        at: (usize, usize),
        req: &IoRequest,
    ) -> Result<(), String> {
        let block = u.block_bytes;
        let lba = req.offset / block as u64;
        let session = match session {
            Session::Wire(w) => {
                // SAFETY: the caller's promise.
                unsafe { w.submit(req.op, req.buf, req.len, req.offset, req.tag) }?;
                self.tags.sent(req, at);
                return Ok(());
            }
            Session::Lib(s) => s,
        };
        // SAFETY: the caller's promise.
        let r = unsafe {
            match req.op {
                Op::Read => session.read16(req.buf, req.len, lba, block, req.tag),
                Op::Write => session.write16(req.buf, req.len, lba, block, req.tag),
                // Refused before the run (`run::trim`): ioscope sends no UNMAP yet.
                Op::Trim => Err("ioscope sends no SCSI UNMAP: trims are refused on iSCSI".into()),
            }
        };
        r.map_err(|e| e.to_string())?;
        self.tags.sent(req, at);
        Ok(())
    }

    /// Turns the callbacks' records into completions. libiscsi cancels every
    /// command of a session it has lost or that the engine closed (ioscope never
    /// cancels single commands, and libiscsi's own reconnection is off): such a
    /// command fails with ECONNABORTED, and a session libiscsi lost on its own is
    /// lost to the engine too.
    fn reap(d: &mut Driver<Self>, out: &mut Vec<Completion>, _min: u32) -> Result<(), EngineError> {
        let mut dropped = Vec::new();
        d.proto
            .tags
            .finished(ffi::take_done, |tag, status, at, len| {
                let result = match status {
                    ffi::STATUS_GOOD => len as i64,
                    ffi::STATUS_TIMEOUT => -(libc::ETIMEDOUT as i64),
                    ffi::STATUS_CANCELLED => {
                        dropped.push(at);
                        -(libc::ECONNABORTED as i64)
                    }
                    _ => -(libc::EIO as i64),
                };
                out.push(Completion::reaped(tag, result));
            });
        for (t, c) in dropped {
            let Some(s) = d.link(t, c).and_then(|l| l.conn.as_ref()) else {
                continue;
            };
            let why = format!("the session was dropped: {}", s.error());
            d.lose(t, c, &why)?;
        }
        Ok(())
    }

    /// Destroying the session cancels its tasks: libiscsi touches none of their
    /// buffers afterwards.
    fn abandoned(d: &mut Driver<Self>, tag: u64) -> Option<(usize, usize)> {
        d.proto.tags.remove(tag)
    }

    fn start_attempt(u: &Lun) -> Result<Session, String> {
        if let Some(d) = &u.wire {
            return wire::Session::start(d).map(|w| Session::Wire(Box::new(w)));
        }
        iscsi::start_connect(&u.spec)
            .map(Session::Lib)
            .map_err(|e| e.to_string())
    }

    fn attempt(s: &Session) -> Attempt {
        let s = match s {
            Session::Wire(w) => {
                return match (w.is_ready(), w.error()) {
                    (true, _) => Attempt::Ready,
                    (false, Some(e)) => Attempt::Failed(e),
                    (false, None) => Attempt::Pending,
                }
            }
            Session::Lib(s) => s,
        };
        match s.login_state() {
            Some(Ok(())) => Attempt::Ready,
            Some(Err(e)) => Attempt::Failed(e.to_string()),
            None => Attempt::Pending,
        }
    }

    // Destroying the sessions (the driver did, just before `dropped`) cancels
    // their commands, and libiscsi records each cancellation in this thread's
    // completion list, which every iscsi engine on the thread drains — also the
    // other paths of a multipath target. Those requests are the owner's to settle
    // now (a multipath engine issues them again on another path, under the same
    // tags), so nothing of them may stay in the list for another engine to take as
    // its own answer: it would end the re-issued request early and mark that
    // engine's session dropped.
    tag_table_bookkeeping!(ffi::discard_done);
}

impl Reconnects for Iscsi {}
