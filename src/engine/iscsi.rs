//! The iscsi engine: iSCSI LUNs through libiscsi's asynchronous API, driven from the
//! worker's own loop. Each worker logs in its own session to every iSCSI target.
//! Requests go out as READ (16)/WRITE (16) tasks (`iscsi_read16_task`,
//! `iscsi_write16_task`); the engine polls the sessions' sockets for the events
//! `iscsi_which_events` asks for and hands them to `iscsi_service`, which runs the
//! completion callback for every finished task. Many I/Os are in flight per session
//! and no thread is spent per I/O.

use super::{Completion, Engine, EngineError, IoRequest, Targets};
use crate::plan::model::Op;
use crate::target::iscsi::{self, ffi};
use crate::target::Backing;
use std::collections::HashMap;

/// One session and the requests it carries.
struct Link {
    session: ffi::Session,
    portal: String,
    block_bytes: u32,
    opened_ns: u64,
}

/// One worker's sessions to the iSCSI targets it serves.
pub struct IscsiEngine {
    /// Indexed like the target list; `None` for a target that is not iSCSI.
    links: Vec<Option<Link>>,
    /// tag → (link, len) of each request in flight.
    inflight: HashMap<u64, (u32, u32)>,
    done: Vec<(u64, i32)>,
    pollfds: Vec<libc::pollfd>,
    poll_links: Vec<usize>,
}

fn io_err(op: &'static str, msg: String) -> EngineError {
    EngineError::Io {
        engine: "iscsi",
        op,
        source: std::io::Error::other(msg),
    }
}

impl IscsiEngine {
    /// Logs in one session per iSCSI target.
    pub fn new(targets: &Targets, capacity: usize) -> Result<Self, EngineError> {
        let mut links = Vec::with_capacity(targets.len());
        for t in targets.iter() {
            let Backing::Iscsi(it) = &t.backing else {
                links.push(None);
                continue;
            };
            let session = iscsi::connect(&it.spec).map_err(|e| EngineError::Setup {
                engine: "iscsi",
                source: std::io::Error::other(format!(
                    "logging in to {} at {}: {e}",
                    it.spec.iqn, it.spec.portal
                )),
            })?;
            links.push(Some(Link {
                session,
                portal: it.spec.portal.clone(),
                block_bytes: it.block_bytes,
                opened_ns: crate::clock::now_ns(),
            }));
        }
        Ok(IscsiEngine {
            links,
            inflight: HashMap::with_capacity(capacity),
            done: Vec::with_capacity(capacity),
            pollfds: Vec::new(),
            poll_links: Vec::new(),
        })
    }

    fn lost(l: &Link, what: &str, inflight: usize) -> EngineError {
        let secs = crate::clock::now_ns().saturating_sub(l.opened_ns) as f64 / 1e9;
        io_err(
            "session",
            format!(
                "connection to {} lost after {secs:.1} s: {what} ({inflight} I/Os in flight)",
                l.portal
            ),
        )
    }

    /// Turns the callbacks' records into completions. libiscsi cancels every
    /// command of a session it has lost (ioscope never cancels any itself, and
    /// automatic reconnection is off), so a cancelled command means the connection
    /// is gone: that ends the run, naming the portal.
    fn harvest(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        ffi::take_done(&mut self.done);
        let mut lost_link = None;
        for (tag, status) in self.done.drain(..) {
            let Some((li, len)) = self.inflight.remove(&tag) else {
                continue;
            };
            let result = match status {
                ffi::STATUS_GOOD => len as i64,
                ffi::STATUS_TIMEOUT => -(libc::ETIMEDOUT as i64),
                ffi::STATUS_CANCELLED => {
                    lost_link.get_or_insert(li as usize);
                    -(libc::ECANCELED as i64)
                }
                _ => -(libc::EIO as i64),
            };
            out.push(Completion {
                tag,
                result,
                done_ns: 0,
            });
        }
        match lost_link.and_then(|li| self.links[li].as_ref()) {
            Some(l) => Err(Self::lost(
                l,
                &format!("the session was dropped: {}", l.session.error()),
                self.inflight.len(),
            )),
            None => Ok(()),
        }
    }

    /// Polls the sessions' sockets for up to `timeout_ns` and services them.
    fn poll_once(&mut self, timeout_ns: Option<u64>) -> Result<(), EngineError> {
        self.pollfds.clear();
        self.poll_links.clear();
        for (i, l) in self.links.iter().enumerate() {
            let Some(l) = l else { continue };
            self.pollfds.push(libc::pollfd {
                fd: l.session.fd(),
                events: l.session.which_events(),
                revents: 0,
            });
            self.poll_links.push(i);
        }
        if self.pollfds.is_empty() {
            return Ok(());
        }
        // libiscsi may ask for no events for a while (between reconnect attempts):
        // never wait longer than 100 ms without servicing it.
        let wait = timeout_ns.unwrap_or(u64::MAX).min(100_000_000);
        let ts = libc::timespec {
            tv_sec: (wait / 1_000_000_000) as libc::time_t,
            tv_nsec: (wait % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: pollfds is a valid array of its length and ts outlives the call.
        let n = unsafe {
            libc::ppoll(
                self.pollfds.as_mut_ptr(),
                self.pollfds.len() as libc::nfds_t,
                &ts,
                std::ptr::null(),
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                return Ok(());
            }
            return Err(EngineError::Io {
                engine: "iscsi",
                op: "ppoll",
                source: e,
            });
        }
        for k in 0..self.pollfds.len() {
            let (revents, li) = (self.pollfds[k].revents, self.poll_links[k]);
            let Some(l) = &self.links[li] else { continue };
            let r = l.session.service(revents);
            let inflight = self.inflight.len();
            if let Err(e) = r {
                return Err(Self::lost(l, &e, inflight));
            }
            if !l.session.is_logged_in() {
                return Err(Self::lost(l, "the session was logged out", inflight));
            }
        }
        Ok(())
    }
}

impl Engine for IscsiEngine {
    fn name(&self) -> &'static str {
        "iscsi"
    }

    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let li = req.target as usize;
        let Some(l) = self.links.get(li).and_then(|l| l.as_ref()) else {
            return Err(io_err(
                "submit",
                format!("target {} is not an iSCSI target", req.target),
            ));
        };
        let block = l.block_bytes;
        let lba = req.offset / block as u64;
        // SAFETY: the runner keeps the buffer valid and untouched until this request's
        // completion is returned, which happens only after libiscsi reported it.
        let r = unsafe {
            match req.op {
                Op::Read => l.session.read16(req.buf, req.len, lba, block, req.tag),
                Op::Write => l.session.write16(req.buf, req.len, lba, block, req.tag),
            }
        };
        match r {
            Ok(()) => {
                self.inflight.insert(req.tag, (li as u32, req.len));
                Ok(())
            }
            Err(e) => Err(io_err("submit", format!("{}: {e}", l.portal))),
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
        self.poll_once(Some(0))?;
        self.harvest(out)?;
        loop {
            let got = out.len() - start;
            if got >= min_complete as usize || self.inflight.is_empty() {
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
            self.harvest(out)?;
        }
    }
}
