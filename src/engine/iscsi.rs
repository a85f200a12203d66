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

use super::reconnect::{aborted, Parked, Reconnect, Retry};
use super::{Completion, Engine, EngineError, EngineEvent, EngineEventKind, IoRequest, Targets};
use crate::clock::now_ns;
use crate::plan::model::IscsiSpec;
use crate::plan::model::Op;
use crate::target::iscsi::{self, ffi};
use crate::target::Backing;
use std::collections::HashMap;

/// One session.
struct Link {
    /// `None` once the engine closed it.
    session: Option<ffi::Session>,
    opened_ns: u64,
    lost: Option<String>,
    /// While it logs in again.
    retry: Option<Retry<ffi::Session>>,
}

impl Link {
    /// The session libiscsi drives on this link now: the live one, or the login
    /// under way.
    fn polled(&self) -> Option<&ffi::Session> {
        self.session
            .as_ref()
            .or_else(|| self.retry.as_ref()?.pending.as_ref())
    }
}

/// One iSCSI target: where it is and its sessions.
struct Lun {
    spec: IscsiSpec,
    block_bytes: u32,
    links: Vec<Link>,
}

/// One worker's sessions to the iSCSI targets it serves.
pub struct IscsiEngine {
    /// Indexed like the target list; `None` for a target that is not iSCSI.
    luns: Vec<Option<Lun>>,
    /// tag → (target, session, len) of each request in flight.
    inflight: HashMap<u64, (u32, u32, u32)>,
    done: Vec<(u64, i32)>,
    /// Requests failed by the engine itself (parked ones whose session never came
    /// back), returned at the next reap.
    orphans: Vec<Completion>,
    /// (target, session) of each entry last handed out by `poll_fds`.
    poll_links: Vec<(usize, usize)>,
    events: Vec<EngineEvent>,
    /// Log in again after a loss on this schedule (`None`: a loss ends the run).
    reconnect: Option<Reconnect>,
    /// Bound of each login `connect` makes (0: none).
    connect_limit_ns: u64,
}

fn io_err(op: &'static str, msg: String) -> EngineError {
    EngineError::Io {
        engine: "iscsi",
        op,
        source: std::io::Error::other(msg),
    }
}

/// Logs in one session; `limit_ns` > 0 bounds the login.
fn open_link(spec: &IscsiSpec, limit_ns: u64) -> Result<Link, EngineError> {
    let session = iscsi::connect_within(spec, limit_ns).map_err(|e| EngineError::Setup {
        engine: "iscsi",
        source: std::io::Error::other(format!(
            "logging in to {} at {}: {e}",
            spec.iqn, spec.portal
        )),
    })?;
    Ok(Link {
        session: Some(session),
        opened_ns: now_ns(),
        lost: None,
        retry: None,
    })
}

fn lost_err(portal: &str, l: &Link, what: &str, inflight: usize) -> EngineError {
    let secs = now_ns().saturating_sub(l.opened_ns) as f64 / 1e9;
    io_err(
        "session",
        format!(
            "connection to {portal} lost after {secs:.1} s: {what} ({inflight} I/Os in flight)"
        ),
    )
}

/// Sends `req` on `session`.
///
/// # Safety
/// The request's buffer stays valid and untouched until its completion has been
/// recorded or the session is dropped.
unsafe fn send(session: &ffi::Session, block: u32, req: &IoRequest) -> Result<(), ffi::IscsiError> {
    let lba = req.offset / block as u64;
    // SAFETY: the caller's promise.
    unsafe {
        match req.op {
            Op::Read => session.read16(req.buf, req.len, lba, block, req.tag),
            Op::Write => session.write16(req.buf, req.len, lba, block, req.tag),
            // Refused before the run (`run::trim`): ioscope sends no UNMAP yet.
            Op::Trim => Err("ioscope sends no SCSI UNMAP: trims are refused on iSCSI".into()),
        }
    }
}

impl IscsiEngine {
    /// Logs in one session per iSCSI target ([`Engine::connect`] opens the rest).
    pub fn new(targets: &Targets, capacity: usize) -> Result<Self, EngineError> {
        Self::new_within(targets, capacity, 0)
    }

    /// [`IscsiEngine::new`] with every login bounded by `limit_ns` (0: none): a
    /// multipath probe must not hang on a stalled target or a cut link.
    pub fn new_within(
        targets: &Targets,
        capacity: usize,
        limit_ns: u64,
    ) -> Result<Self, EngineError> {
        let mut luns = Vec::with_capacity(targets.len());
        for t in targets.iter() {
            let Backing::Iscsi(it) = &t.backing else {
                luns.push(None);
                continue;
            };
            luns.push(Some(Lun {
                spec: it.spec.clone(),
                block_bytes: it.block_bytes,
                links: vec![open_link(&it.spec, limit_ns)?],
            }));
        }
        Ok(IscsiEngine {
            luns,
            inflight: HashMap::with_capacity(capacity),
            done: Vec::with_capacity(capacity),
            orphans: Vec::new(),
            poll_links: Vec::new(),
            events: Vec::new(),
            reconnect: None,
            connect_limit_ns: limit_ns,
        })
    }

    /// Logs lost sessions in again on schedule `r` instead of failing the run.
    pub fn with_reconnect(mut self, r: Reconnect) -> Self {
        self.reconnect = Some(r);
        self
    }

    /// Session `(t, c)` is lost: a `down` event, and destroying it cancels its tasks
    /// (failed with ECONNABORTED by `harvest`); then it logs in again, or (without a
    /// schedule) the loss is the returned error.
    fn lose(&mut self, t: usize, c: usize, why: &str) -> Result<(), EngineError> {
        let inflight = self.inflight.len();
        let reconnect = self.reconnect.is_some();
        let Some(u) = self.luns[t].as_mut() else {
            return Ok(());
        };
        let Some(l) = u.links.get_mut(c) else {
            return Ok(());
        };
        if l.session.is_none() {
            return Ok(());
        }
        let err = lost_err(&u.spec.portal, l, why, inflight);
        l.session = None;
        l.lost = Some(why.to_string());
        if reconnect {
            l.retry = Some(Retry::new(now_ns(), why));
        }
        self.events.push(EngineEvent::now(
            t,
            c,
            EngineEventKind::Down,
            crate::errors::chain(&err),
        ));
        if reconnect {
            Ok(())
        } else {
            Err(err)
        }
    }

    /// Turns the callbacks' records into completions. libiscsi cancels every
    /// command of a session it has lost or that the engine closed (ioscope never
    /// cancels single commands, and libiscsi's own reconnection is off): such a
    /// command fails with ECONNABORTED, and a session libiscsi lost on its own is
    /// lost to the engine too.
    fn harvest(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        out.append(&mut self.orphans);
        ffi::take_done(&mut self.done);
        let mut dropped = Vec::new();
        for (tag, status) in self.done.drain(..) {
            let Some((t, c, len)) = self.inflight.remove(&tag) else {
                continue;
            };
            let result = match status {
                ffi::STATUS_GOOD => len as i64,
                ffi::STATUS_TIMEOUT => -(libc::ETIMEDOUT as i64),
                ffi::STATUS_CANCELLED => {
                    dropped.push((t as usize, c as usize));
                    -(libc::ECONNABORTED as i64)
                }
                _ => -(libc::EIO as i64),
            };
            out.push(Completion {
                tag,
                result,
                done_ns: 0,
            });
        }
        for (t, c) in dropped {
            let Some(s) = self.luns[t]
                .as_ref()
                .and_then(|u| u.links.get(c))
                .and_then(|l| l.session.as_ref())
            else {
                continue;
            };
            let why = format!("the session was dropped: {}", s.error());
            self.lose(t, c, &why.to_string())?;
        }
        Ok(())
    }

    /// Moves every session that is logging in again along its schedule: starts
    /// attempts that are due, finishes those whose login ended (an `up` event, the
    /// parked requests sent) or failed; `Err` when a session's window is over.
    fn tend(&mut self) -> Result<(), EngineError> {
        let Some(r) = self.reconnect else {
            return Ok(());
        };
        for t in 0..self.luns.len() {
            let nlinks = self.luns[t].as_ref().map_or(0, |u| u.links.len());
            for c in 0..nlinks {
                self.tend_link(t, c, &r)?;
            }
        }
        Ok(())
    }

    fn tend_link(&mut self, t: usize, c: usize, r: &Reconnect) -> Result<(), EngineError> {
        let now = now_ns();
        let u = self.luns[t].as_mut().expect("an iSCSI target");
        let l = &mut u.links[c];
        let Some(retry) = l.retry.as_mut() else {
            return Ok(());
        };
        let due = now >= retry.attempts.next_ns;
        let failure = match (&retry.pending, retry.broken.take()) {
            (Some(_), Some(why)) => Some(why),
            (Some(p), None) => match p.login_state() {
                Some(Ok(())) => None,
                Some(Err(e)) => Some(format!("logging in again: {e}")),
                None if due => Some("logging in again: no answer in time".into()),
                None => return Ok(()),
            },
            (None, _) if due => {
                retry.attempts.start(now, r);
                match iscsi::start_connect(&u.spec) {
                    Ok(p) => {
                        retry.pending = Some(p);
                        return Ok(());
                    }
                    Err(e) => Some(format!("logging in again: {e}")),
                }
            }
            (None, _) => return Ok(()),
        };
        let Some(why) = failure else {
            let retry = l.retry.take().expect("a reconnecting session");
            let detail = retry.up_detail(&u.spec.portal, now);
            l.session = retry.pending;
            l.opened_ns = now;
            l.lost = None;
            let session = l.session.as_ref().expect("logged in");
            for Parked(req) in retry.parked {
                // SAFETY: parked requests were pushed under push's contract and not
                // touched since.
                match unsafe { send(session, u.block_bytes, &req) } {
                    Ok(()) => {
                        self.inflight.insert(req.tag, (t as u32, c as u32, req.len));
                    }
                    Err(_) => self.orphans.push(aborted(req.tag)),
                }
            }
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
        Err(lost_err(&u.spec.portal, l, &why, self.inflight.len()))
    }

    /// Requests the engine holds: in flight, or parked while logging in again.
    fn pending(&self) -> usize {
        let parked: usize = self
            .luns
            .iter()
            .flatten()
            .flat_map(|u| &u.links)
            .filter_map(|l| l.retry.as_ref().map(|r| r.parked.len()))
            .sum();
        self.inflight.len() + parked
    }

    /// The next reconnect attempt, or the end of the one under way.
    fn next_attempt_ns(&self) -> Option<u64> {
        self.luns
            .iter()
            .flatten()
            .flat_map(|u| &u.links)
            .filter_map(|l| l.retry.as_ref().map(|r| r.attempts.next_ns))
            .min()
    }
}

impl Drop for IscsiEngine {
    fn drop(&mut self) {
        // Destroying the sessions cancels their commands, and libiscsi records each
        // cancellation in this thread's completion list, which every iscsi engine on
        // the thread drains — also the other paths of a multipath target. Those
        // requests are the owner's to settle now (a multipath engine issues them
        // again on another path, under the same tags), so nothing of them may stay in
        // the list for another engine to take as its own answer: it would end the
        // re-issued request early and mark that engine's session dropped.
        self.luns.clear();
        ffi::discard_done(|tag| self.inflight.contains_key(&tag));
    }
}

impl Engine for IscsiEngine {
    fn name(&self) -> &'static str {
        "iscsi"
    }

    fn connect(&mut self, per_target: u32) -> Result<(), EngineError> {
        let limit_ns = self.connect_limit_ns;
        for u in self.luns.iter_mut().flatten() {
            while u.links.len() < per_target as usize {
                u.links.push(open_link(&u.spec, limit_ns)?);
            }
        }
        Ok(())
    }

    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let t = req.target as usize;
        let inflight = self.inflight.len();
        let Some(u) = self.luns.get_mut(t).and_then(|l| l.as_mut()) else {
            return Err(io_err(
                "submit",
                format!("target {} is not an iSCSI target", req.target),
            ));
        };
        let c = req.conn as usize % u.links.len();
        let l = &mut u.links[c];
        let Some(session) = &l.session else {
            if let Some(retry) = l.retry.as_mut() {
                retry.parked.push(Parked(req));
                return Ok(());
            }
            let why = l.lost.clone().unwrap_or_default();
            return Err(lost_err(&u.spec.portal, l, &why, inflight));
        };
        // SAFETY: the runner keeps the buffer valid and untouched until this request's
        // completion is returned, which happens only after libiscsi reported it (or
        // its session was destroyed).
        match unsafe { send(session, u.block_bytes, &req) } {
            Ok(()) => {
                self.inflight.insert(req.tag, (t as u32, c as u32, req.len));
                Ok(())
            }
            Err(e) => Err(io_err("submit", format!("{}: {e}", u.spec.portal))),
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
        let mut first = true;
        loop {
            self.tend()?;
            self.harvest(out)?;
            let got = out.len() - start;
            if !first && (got >= min_complete as usize || self.pending() == 0) {
                return Ok(());
            }
            let now = now_ns();
            if !first && now >= deadline {
                return Ok(());
            }
            let until = self.next_attempt_ns().map_or(deadline, |a| a.min(deadline));
            fds.clear();
            self.poll_fds(&mut fds);
            if fds.is_empty() && until == u64::MAX {
                return Ok(());
            }
            // The first turn only sends what is queued and reads what has arrived.
            // libiscsi may ask for no events for a while: never wait longer than
            // 100 ms without servicing it.
            let wait = if first {
                0
            } else {
                until.saturating_sub(now).min(100_000_000)
            };
            super::wait::poll_until(&mut fds, wait).map_err(|e| EngineError::Io {
                engine: "iscsi",
                op: "ppoll",
                source: e,
            })?;
            self.on_ready(&fds)?;
            first = false;
        }
    }

    fn poll_fds(&mut self, out: &mut Vec<libc::pollfd>) {
        self.poll_links.clear();
        for (t, u) in self.luns.iter().enumerate() {
            let Some(u) = u else { continue };
            for (c, l) in u.links.iter().enumerate() {
                let Some(s) = l.polled() else { continue };
                out.push(libc::pollfd {
                    fd: s.fd(),
                    events: s.which_events(),
                    revents: 0,
                });
                self.poll_links.push((t, c));
            }
        }
    }

    fn on_ready(&mut self, fds: &[libc::pollfd]) -> Result<(), EngineError> {
        let links = std::mem::take(&mut self.poll_links);
        let r = self.service_ready(&links, fds);
        self.poll_links = links;
        r?;
        self.tend()
    }

    fn wake_ns(&self) -> Option<u64> {
        self.reconnect.and_then(|_| self.next_attempt_ns())
    }

    fn abandon(&mut self, tag: u64) -> bool {
        for l in self.luns.iter_mut().flatten().flat_map(|u| &mut u.links) {
            // Never sent: forgetting it is enough.
            if l.retry.as_mut().is_some_and(|r| r.forget(tag)) {
                return true;
            }
        }
        let Some((t, c, _)) = self.inflight.remove(&tag) else {
            return false;
        };
        // Destroying the session cancels its tasks: libiscsi touches none of their
        // buffers afterwards. Without reconnecting, the loss fails the run at the
        // next request on it.
        let _ = self.lose(t as usize, c as usize, "no answer within the I/O timeout");
        true
    }

    fn take_events(&mut self, out: &mut Vec<EngineEvent>) {
        out.append(&mut self.events);
    }
}

impl IscsiEngine {
    /// Services the sessions poll(2) looked at (`links[k]` is `fds[k]`'s session).
    fn service_ready(
        &mut self,
        links: &[(usize, usize)],
        fds: &[libc::pollfd],
    ) -> Result<(), EngineError> {
        for (&(t, c), fd) in links.iter().zip(fds) {
            let Some(l) = self.luns[t].as_mut().and_then(|u| u.links.get_mut(c)) else {
                continue;
            };
            let Some(s) = l.polled() else { continue };
            // iscsi_service also runs timers, so it is called even with no revents.
            let r = s.service(fd.revents);
            if l.session.is_none() {
                // A login under way: a failure is the attempt's, seen by `tend`.
                if let (Err(e), Some(retry)) = (r, l.retry.as_mut()) {
                    retry.broken = Some(format!("logging in again: {e}"));
                }
                continue;
            }
            let why = match r {
                Err(e) => Some(e),
                Ok(()) if !s.is_logged_in() => Some("the session was logged out".into()),
                Ok(()) => None,
            };
            if let Some(why) = why {
                self.lose(t, c, &why.to_string())?;
            }
        }
        Ok(())
    }
}
