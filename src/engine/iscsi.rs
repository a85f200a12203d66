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
//! other requests fail with ECONNABORTED, a `down` event names the cause, and a
//! later request on it fails the run with "connection to … lost after N s: …".

use super::{Completion, Engine, EngineError, EngineEvent, EngineEventKind, IoRequest, Targets};
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
    /// (target, session) of each entry last handed out by `poll_fds`.
    poll_links: Vec<(usize, usize)>,
    events: Vec<EngineEvent>,
}

fn io_err(op: &'static str, msg: String) -> EngineError {
    EngineError::Io {
        engine: "iscsi",
        op,
        source: std::io::Error::other(msg),
    }
}

fn open_link(spec: &IscsiSpec) -> Result<Link, EngineError> {
    let session = iscsi::connect(spec).map_err(|e| EngineError::Setup {
        engine: "iscsi",
        source: std::io::Error::other(format!(
            "logging in to {} at {}: {e}",
            spec.iqn, spec.portal
        )),
    })?;
    Ok(Link {
        session: Some(session),
        opened_ns: crate::clock::now_ns(),
        lost: None,
    })
}

fn lost_err(portal: &str, l: &Link, what: &str, inflight: usize) -> EngineError {
    let secs = crate::clock::now_ns().saturating_sub(l.opened_ns) as f64 / 1e9;
    io_err(
        "session",
        format!(
            "connection to {portal} lost after {secs:.1} s: {what} ({inflight} I/Os in flight)"
        ),
    )
}

impl IscsiEngine {
    /// Logs in one session per iSCSI target ([`Engine::connect`] opens the rest).
    pub fn new(targets: &Targets, capacity: usize) -> Result<Self, EngineError> {
        let mut luns = Vec::with_capacity(targets.len());
        for t in targets.iter() {
            let Backing::Iscsi(it) = &t.backing else {
                luns.push(None);
                continue;
            };
            luns.push(Some(Lun {
                spec: it.spec.clone(),
                block_bytes: it.block_bytes,
                links: vec![open_link(&it.spec)?],
            }));
        }
        Ok(IscsiEngine {
            luns,
            inflight: HashMap::with_capacity(capacity),
            done: Vec::with_capacity(capacity),
            poll_links: Vec::new(),
            events: Vec::new(),
        })
    }

    /// Closes session `(t, c)` with a `down` event; its tasks come back cancelled
    /// (and are failed with ECONNABORTED by `harvest`).
    fn close(&mut self, t: usize, c: usize, why: String) {
        let Some(l) = self.luns[t].as_mut().and_then(|u| u.links.get_mut(c)) else {
            return;
        };
        if l.session.is_none() {
            return;
        }
        self.events.push(EngineEvent {
            at_ns: crate::clock::now_ns(),
            target: t as u32,
            conn: c as u32,
            kind: EngineEventKind::Down,
            detail: why.clone(),
        });
        l.session = None;
        l.lost = Some(why);
    }

    /// Turns the callbacks' records into completions. libiscsi cancels every
    /// command of a session it has lost or that the engine closed (ioscope never
    /// cancels single commands, and automatic reconnection is off): such a command
    /// fails with ECONNABORTED; a session libiscsi lost on its own ends the run,
    /// naming the portal (no reconnection is attempted).
    fn harvest(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError> {
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
            let Some(u) = self.luns[t].as_ref() else {
                continue;
            };
            let Some(l) = u.links.get(c) else { continue };
            let Some(s) = &l.session else { continue };
            let why = format!("the session was dropped: {}", s.error());
            let err = lost_err(&u.spec.portal, l, &why, self.inflight.len());
            self.close(t, c, crate::errors::chain(&err));
            return Err(err);
        }
        Ok(())
    }
}

impl Engine for IscsiEngine {
    fn name(&self) -> &'static str {
        "iscsi"
    }

    fn connect(&mut self, per_target: u32) -> Result<(), EngineError> {
        for u in self.luns.iter_mut().flatten() {
            while u.links.len() < per_target as usize {
                u.links.push(open_link(&u.spec)?);
            }
        }
        Ok(())
    }

    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let t = req.target as usize;
        let Some(u) = self.luns.get(t).and_then(|l| l.as_ref()) else {
            return Err(io_err(
                "submit",
                format!("target {} is not an iSCSI target", req.target),
            ));
        };
        let c = req.conn as usize % u.links.len();
        let l = &u.links[c];
        let Some(session) = &l.session else {
            let why = l.lost.clone().unwrap_or_default();
            return Err(lost_err(&u.spec.portal, l, &why, self.inflight.len()));
        };
        let block = u.block_bytes;
        let lba = req.offset / block as u64;
        // SAFETY: the runner keeps the buffer valid and untouched until this request's
        // completion is returned, which happens only after libiscsi reported it (or
        // its session was destroyed).
        let r = unsafe {
            match req.op {
                Op::Read => session.read16(req.buf, req.len, lba, block, req.tag),
                Op::Write => session.write16(req.buf, req.len, lba, block, req.tag),
            }
        };
        match r {
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
        let deadline = timeout_ns.map(|t| crate::clock::now_ns().saturating_add(t));
        let mut fds = Vec::new();
        let mut first = true;
        loop {
            self.harvest(out)?;
            let got = out.len() - start;
            if !first && (got >= min_complete as usize || self.inflight.is_empty()) {
                return Ok(());
            }
            let wait = match deadline {
                Some(d) => d.saturating_sub(crate::clock::now_ns()),
                None => u64::MAX,
            };
            if !first && wait == 0 {
                return Ok(());
            }
            fds.clear();
            self.poll_fds(&mut fds);
            if fds.is_empty() {
                return Ok(());
            }
            // The first turn only sends what is queued and reads what has arrived.
            // libiscsi may ask for no events for a while: never wait longer than
            // 100 ms without servicing it.
            let wait = if first { 0 } else { wait.min(100_000_000) };
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
                let Some(s) = &l.session else { continue };
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
        r
    }

    fn abandon(&mut self, tag: u64) -> bool {
        let Some((t, c, _)) = self.inflight.remove(&tag) else {
            return false;
        };
        let (t, c) = (t as usize, c as usize);
        let why = "no answer within the I/O timeout".to_string();
        // Destroying the session cancels its tasks: libiscsi touches none of their
        // buffers afterwards.
        self.close(t, c, why);
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
            let Some(s) = self.luns[t]
                .as_ref()
                .and_then(|u| u.links.get(c))
                .and_then(|l| l.session.as_ref())
            else {
                continue;
            };
            // iscsi_service also runs timers, so it is called even with no revents.
            let why = match s.service(fd.revents) {
                Err(e) => Some(e),
                Ok(()) if !s.is_logged_in() => Some("the session was logged out".into()),
                Ok(()) => None,
            };
            if let Some(why) = why {
                let u = self.luns[t].as_ref().expect("polled target");
                let err = lost_err(&u.spec.portal, &u.links[c], &why, self.inflight.len());
                self.close(t, c, crate::errors::chain(&err));
                return Err(err);
            }
        }
        Ok(())
    }
}
