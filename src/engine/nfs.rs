//! The nfs engine: files on NFS exports through libnfs's asynchronous API, driven
//! from the worker's own loop. Each worker mounts the export and opens the file on
//! its own connections to every NFS target — `N` of them with `--connections N`.
//! Requests go out as `nfs_pread_async`/`nfs_pwrite_async` on the connection the
//! request names; the engine lists the connections' sockets with the events
//! `nfs_which_events` asks for ([`Engine::poll_fds`]), the worker waits on them in
//! poll(2), and [`Engine::on_ready`] hands them to `nfs_service`, which runs the
//! completion callback of every finished request. Many I/Os are in flight per
//! connection and no thread is spent per I/O.
//!
//! A lost connection (or a request past `--io-timeout`, abandoned by destroying its
//! connection: libnfs cancels its requests and touches none of their buffers
//! afterwards) fails its requests with ECONNABORTED, raises a `down` event, and ends
//! the run with "connection to … lost after N s": this engine does not reconnect.

use super::{Completion, Engine, EngineError, EngineEvent, EngineEventKind, IoRequest, Targets};
use crate::clock::now_ns;
use crate::plan::model::Op;
use crate::target::nfs::{ffi, NfsTarget};
use crate::target::Backing;
use std::collections::HashMap;
use std::sync::Arc;

/// One connection.
struct Link {
    /// `None` once lost.
    client: Option<ffi::Client>,
    opened_ns: u64,
    lost: Option<String>,
}

/// One NFS target: where it is and its connections.
struct Share {
    target: Arc<crate::target::OpenTarget>,
    links: Vec<Link>,
}

impl Share {
    fn nfs(&self) -> &NfsTarget {
        match &self.target.backing {
            Backing::Nfs(n) => n,
            _ => unreachable!("a Share is built only for NFS targets"),
        }
    }
}

/// One worker's connections to the NFS targets it serves.
pub struct NfsEngine {
    /// Indexed like the target list; `None` for a target that is not NFS.
    shares: Vec<Option<Share>>,
    /// tag → (target, connection, len) of each request in flight.
    inflight: HashMap<u64, (u32, u32, u32)>,
    done: Vec<(u64, i64)>,
    /// (target, connection) of each entry last handed out by `poll_fds`.
    poll_links: Vec<(usize, usize)>,
    events: Vec<EngineEvent>,
}

fn io_err(op: &'static str, msg: String) -> EngineError {
    EngineError::Io {
        engine: "nfs",
        op,
        source: std::io::Error::other(msg),
    }
}

fn open_link(n: &NfsTarget) -> Result<Link, EngineError> {
    let client = n.connect().map_err(|e| EngineError::Setup {
        engine: "nfs",
        source: std::io::Error::other(format!(
            "{}: opening {}{}/{}: {e}",
            n.server, n.server, n.spec.export, n.spec.file
        )),
    })?;
    Ok(Link {
        client: Some(client),
        opened_ns: now_ns(),
        lost: None,
    })
}

fn lost_err(server: &str, l: &Link, what: &str, inflight: usize) -> EngineError {
    let secs = now_ns().saturating_sub(l.opened_ns) as f64 / 1e9;
    io_err(
        "connection",
        format!(
            "connection to {server} lost after {secs:.1} s: {what} ({inflight} I/Os in flight)"
        ),
    )
}

impl NfsEngine {
    /// Opens one connection per NFS target ([`Engine::connect`] opens the rest).
    pub fn new(targets: &Targets, capacity: usize) -> Result<Self, EngineError> {
        let mut shares = Vec::with_capacity(targets.len());
        for t in targets.iter() {
            let Backing::Nfs(n) = &t.backing else {
                shares.push(None);
                continue;
            };
            let link = open_link(n)?;
            shares.push(Some(Share {
                target: t.clone(),
                links: vec![link],
            }));
        }
        Ok(NfsEngine {
            shares,
            inflight: HashMap::with_capacity(capacity),
            done: Vec::with_capacity(capacity),
            poll_links: Vec::new(),
            events: Vec::new(),
        })
    }

    /// Connection `(t, c)` is lost: a `down` event, and dropping it cancels its
    /// requests (failed with ECONNABORTED by `harvest`); the loss is the error.
    fn lose(&mut self, t: usize, c: usize, why: &str) -> EngineError {
        let inflight = self.inflight.len();
        let s = self.shares[t].as_mut().expect("an NFS target");
        let server = match &s.target.backing {
            Backing::Nfs(n) => n.server.clone(),
            _ => String::new(),
        };
        let l = &mut s.links[c];
        let err = lost_err(&server, l, why, inflight);
        l.client = None;
        l.lost = Some(why.to_string());
        self.events.push(EngineEvent::now(
            t,
            c,
            EngineEventKind::Down,
            crate::errors::chain(&err),
        ));
        err
    }

    /// Turns the callbacks' records into completions: bytes moved, or the negated
    /// errno libnfs reports (a cancelled request: ECONNABORTED).
    fn harvest(&mut self, out: &mut Vec<Completion>) {
        ffi::take_done(&mut self.done);
        for (tag, result) in self.done.drain(..) {
            let Some((t, c, _len)) = self.inflight.remove(&tag) else {
                continue;
            };
            let gone = self.shares[t as usize]
                .as_ref()
                .is_some_and(|s| s.links[c as usize].client.is_none());
            out.push(Completion {
                tag,
                result: if gone && result < 0 {
                    -(libc::ECONNABORTED as i64)
                } else {
                    result
                },
                done_ns: 0,
            });
        }
    }

    /// Services the connections poll(2) looked at (`links[k]` is `fds[k]`'s).
    fn service_ready(
        &mut self,
        links: &[(usize, usize)],
        fds: &[libc::pollfd],
    ) -> Result<(), EngineError> {
        for (&(t, c), fd) in links.iter().zip(fds) {
            let Some(l) = self.shares[t].as_ref().and_then(|s| s.links.get(c)) else {
                continue;
            };
            let Some(client) = &l.client else { continue };
            // nfs_service also runs libnfs's timers, so it is called with no revents.
            if let Err(e) = client.service(fd.revents) {
                return Err(self.lose(t, c, &e.to_string()));
            }
        }
        Ok(())
    }
}

impl Drop for NfsEngine {
    fn drop(&mut self) {
        // Dropping the connections cancels their requests through the callbacks,
        // which record them on this thread: none may stay for another engine.
        self.shares.clear();
        ffi::discard_done(|tag| self.inflight.contains_key(&tag));
    }
}

impl Engine for NfsEngine {
    fn name(&self) -> &'static str {
        "nfs"
    }

    fn connect(&mut self, per_target: u32) -> Result<(), EngineError> {
        for s in self.shares.iter_mut().flatten() {
            while s.links.len() < per_target as usize {
                let link = open_link(s.nfs())?;
                s.links.push(link);
            }
        }
        Ok(())
    }

    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let t = req.target as usize;
        let inflight = self.inflight.len();
        let Some(s) = self.shares.get(t).and_then(|s| s.as_ref()) else {
            return Err(io_err(
                "submit",
                format!("target {} is not an NFS target", req.target),
            ));
        };
        let c = req.conn as usize % s.links.len();
        let l = &s.links[c];
        let server = &s.nfs().server;
        let Some(client) = &l.client else {
            let why = l.lost.clone().unwrap_or_default();
            return Err(lost_err(server, l, &why, inflight));
        };
        // SAFETY: the runner keeps the buffer valid and untouched until this
        // request's completion is returned, which happens only after libnfs reported
        // it (or its connection was dropped, cancelling it).
        let r = unsafe {
            match req.op {
                Op::Read => client.pread(req.buf, req.len, req.offset, req.tag),
                Op::Write => client.pwrite(req.buf, req.len, req.offset, req.tag),
                // Refused before the run (`run::trim`).
                Op::Trim => Err(ffi::NfsError::Library(
                    "ioscope sends no NFS trim: trims are refused on NFS".into(),
                )),
            }
        };
        match r {
            Ok(()) => {
                self.inflight.insert(req.tag, (t as u32, c as u32, req.len));
                Ok(())
            }
            Err(e) => Err(io_err("submit", format!("{server}: {e}"))),
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
            self.harvest(out);
            let got = out.len() - start;
            if !first && (got >= min_complete as usize || self.inflight.is_empty()) {
                return Ok(());
            }
            let now = now_ns();
            if !first && now >= deadline {
                return Ok(());
            }
            fds.clear();
            self.poll_fds(&mut fds);
            if fds.is_empty() {
                return Ok(());
            }
            // The first turn only sends what is queued and reads what has arrived;
            // libnfs's timers want servicing at least every 100 ms.
            let wait = if first {
                0
            } else {
                deadline.saturating_sub(now).min(100_000_000)
            };
            super::wait::poll_until(&mut fds, wait).map_err(|e| EngineError::Io {
                engine: "nfs",
                op: "ppoll",
                source: e,
            })?;
            self.on_ready(&fds)?;
            first = false;
        }
    }

    fn poll_fds(&mut self, out: &mut Vec<libc::pollfd>) {
        self.poll_links.clear();
        for (t, s) in self.shares.iter().enumerate() {
            let Some(s) = s else { continue };
            for (c, l) in s.links.iter().enumerate() {
                let Some(client) = &l.client else { continue };
                out.push(libc::pollfd {
                    fd: client.fd(),
                    events: client.which_events(),
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
        let Some(&(t, c, _)) = self.inflight.get(&tag) else {
            return false;
        };
        // Dropping the connection cancels its requests: libnfs touches none of
        // their buffers afterwards. The loss fails the run at the next request on it.
        let _ = self.lose(t as usize, c as usize, "no answer within the I/O timeout");
        self.inflight.remove(&tag);
        true
    }

    fn take_events(&mut self, out: &mut Vec<EngineEvent>) {
        out.append(&mut self.events);
    }
}
