//! The multipath engine: one target reached over several paths, each served by its
//! own inner engine (an nbd or iscsi engine holding one connection). Every request
//! goes to a path chosen by the policy (`policy`); a request that fails with a
//! transport error, or is not answered within the per-path deadline, takes its path
//! down and is issued again on a healthy path, so the workload sees nothing but the
//! extra latency. A path that is down is probed in the background every retry
//! interval (connecting may hang on a stalled server, so never on the worker's
//! thread) and put back when it answers. Only when no path is left does a request
//! fail towards the workload.
//!
//! The engine keeps per-path counters and service-time histograms per interval and a
//! list of path events (down, up, timeout, reissue) for the worker to collect.

pub mod path;
pub mod policy;

use super::{Completion, Engine, EngineError, EngineEvent, EngineEventKind, IoRequest};
use crate::plan::paths::{Failback, PathPolicy};
use path::{InnerEngine, Path, PathSample, PathState};
use policy::{PathLoad, Selector};
use std::sync::Arc;

/// Opens a fresh inner engine for path `i` (used at start and by probes, on a
/// probe thread), giving up when its connection set-up (NBD's connection and
/// handshake, iSCSI's connection and login, an SMB channel's binding) has taken the
/// second argument in ns.
pub type Connect = Arc<dyn Fn(usize, u64) -> Result<InnerEngine, EngineError> + Send + Sync>;

/// Settings of a multipath engine.
#[derive(Debug, Clone, Copy)]
pub struct MultipathSettings {
    pub policy: PathPolicy,
    pub failback: Failback,
    /// Per-path deadline of one request.
    pub timeout_ns: u64,
    /// Interval between probes of a path that is down.
    pub retry_ns: u64,
}

impl MultipathSettings {
    /// How long one connection attempt (at start, or a probe) may take: the longer
    /// of the I/O deadline and the probe interval.
    pub fn connect_limit_ns(&self) -> u64 {
        self.timeout_ns.max(self.retry_ns)
    }
}

/// A request the engine holds until some path has answered it.
#[derive(Debug, Clone, Copy)]
struct Pending {
    req: IoRequest,
    path: u32,
    sent_ns: u64,
    /// It was re-issued after a timeout (a write may then land twice).
    after_timeout: bool,
    /// It was sent on a path that then failed and was issued again on another: a
    /// write's first copy may still be executed by that path's server.
    moved: bool,
}

/// Errnos that say the path (connection, session, link) failed rather than the
/// storage behind it; only these move a request to another path.
fn is_path_error(errno: i64) -> bool {
    [
        libc::ESHUTDOWN,
        libc::ENOTCONN,
        libc::ECONNRESET,
        libc::ECONNABORTED,
        libc::EPIPE,
        libc::ETIMEDOUT,
        libc::EHOSTUNREACH,
        libc::ENETUNREACH,
        libc::ENOLINK,
    ]
    .contains(&(errno as i32))
}

/// How long a wait on one path lasts while others also have requests out, for inner
/// engines without descriptors to wait on (NBD and iSCSI have them).
const WAIT_SLICE_NS: u64 = 100_000;

/// One worker's multipath engine.
pub struct MultipathEngine {
    paths: Vec<Path>,
    selector: Selector,
    connect: Connect,
    settings: MultipathSettings,
    /// Indexed by the inner tag.
    slots: Vec<Option<Pending>>,
    free: Vec<u32>,
    /// Requests finished here (failed with no path left), returned at the next reap.
    ready: Vec<Completion>,
    scratch: Vec<Completion>,
    /// The busy paths' descriptors of the current wait.
    fds: Vec<libc::pollfd>,
    loads: Vec<PathLoad>,
    /// Path events for the worker (`conn` is the path index).
    events: Vec<EngineEvent>,
    /// Writes issued again after a timeout, over the engine's life.
    pub rewrites_after_timeout: u64,
    /// Tags of completed writes that had been moved to another path, for the worker.
    reissued_writes: Vec<u64>,
    next_deadline_check_ns: u64,
}

impl MultipathEngine {
    /// Connects every path; a path that cannot be reached now starts down and is
    /// probed. Fails only when no path can be reached.
    pub fn new(
        npaths: usize,
        capacity: usize,
        settings: MultipathSettings,
        connect: Connect,
    ) -> Result<Self, EngineError> {
        let now = crate::clock::now_ns();
        let mut paths = Vec::with_capacity(npaths);
        let mut events = Vec::new();
        let mut first_err = None;
        let limit_ns = settings.connect_limit_ns();
        for i in 0..npaths {
            match connect(i, limit_ns) {
                Ok(e) => paths.push(Path::new(e, now)),
                Err(e) => {
                    let why = crate::errors::chain(&e);
                    let mut p = Path::new(Box::new(NoEngine), now);
                    p.take_down(now, why.clone());
                    p.health = path::Health::Down {
                        since_ns: now,
                        next_probe_ns: now + settings.retry_ns,
                    };
                    events.push(EngineEvent {
                        at_ns: now,
                        target: 0,
                        conn: i as u32,
                        kind: EngineEventKind::Down,
                        detail: format!("cannot connect: {why}"),
                    });
                    paths.push(p);
                    first_err.get_or_insert(e);
                }
            }
        }
        if let (false, Some(e)) = (paths.iter().any(|p| p.is_up()), first_err) {
            return Err(e);
        }
        Ok(MultipathEngine {
            paths,
            selector: Selector::new(settings.policy, settings.failback),
            connect,
            settings,
            slots: vec![None; capacity.max(1)],
            free: (0..capacity.max(1) as u32).rev().collect(),
            ready: Vec::new(),
            scratch: Vec::with_capacity(capacity),
            fds: Vec::new(),
            loads: Vec::with_capacity(npaths),
            events,
            rewrites_after_timeout: 0,
            reissued_writes: Vec::new(),
            next_deadline_check_ns: 0,
        })
    }

    /// Each path's figures since the last call, in path order.
    fn samples(&mut self, out: &mut Vec<PathSample>) {
        self.refresh_loads();
        for i in 0..self.paths.len() {
            let state = if !self.paths[i].is_up() {
                PathState::Down
            } else if self.selector.is_standby(&self.loads, i) {
                PathState::Standby
            } else {
                PathState::Up
            };
            out.push(self.paths[i].take_sample(state));
        }
    }

    /// Requests in flight on any path.
    fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    fn refresh_loads(&mut self) {
        self.loads.clear();
        self.loads.extend(self.paths.iter().map(Path::load));
    }

    fn event(&mut self, at_ns: u64, path: usize, kind: EngineEventKind, detail: String) {
        // A stalled path can time out thousands of requests: one event per path
        // failure is kept, the counts carry the rest.
        if self.events.len() < 1000 {
            self.events.push(EngineEvent {
                at_ns,
                target: 0,
                conn: path as u32,
                kind,
                detail,
            });
        }
    }

    /// Sends the request in `slot` down a path, moving on to the next path while
    /// pushes fail; fails it towards the workload when no path is left.
    fn route(&mut self, slot: u32, now: u64) {
        loop {
            let Some(pend) = self.slots[slot as usize] else {
                return;
            };
            self.refresh_loads();
            let Some(p) = self.selector.pick(&self.loads, pend.req.len, now) else {
                self.fail_slot(
                    slot,
                    if pend.after_timeout {
                        libc::ETIMEDOUT
                    } else {
                        libc::EIO
                    },
                );
                return;
            };
            let inner = IoRequest {
                target: 0,
                tag: slot as u64,
                ..pend.req
            };
            let r = match self.paths[p].engine.as_mut() {
                Some(e) => e.push(inner),
                None => continue,
            };
            match r {
                Ok(()) => {
                    let path = &mut self.paths[p];
                    path.outstanding_ios += 1;
                    path.outstanding_bytes += pend.req.len as u64;
                    self.slots[slot as usize] = Some(Pending {
                        path: p as u32,
                        sent_ns: now,
                        ..pend
                    });
                    return;
                }
                Err(e) => {
                    // Marks the path down and re-routes what it held, this slot too.
                    self.slots[slot as usize] = Some(Pending {
                        path: p as u32,
                        ..pend
                    });
                    self.path_failed(p, now, crate::errors::chain(&e), false);
                    return;
                }
            }
        }
    }

    /// Ends a request towards the workload with `-errno`.
    fn fail_slot(&mut self, slot: u32, errno: i32) {
        if let Some(p) = self.slots[slot as usize].take() {
            self.free.push(slot);
            if p.moved && p.req.op == crate::plan::model::Op::Write {
                self.reissued_writes.push(p.req.tag);
            }
            self.ready
                .push(Completion::reaped(p.req.tag, -(errno as i64)));
        }
    }

    /// Takes path `p` down and issues everything it held again elsewhere.
    fn path_failed(&mut self, p: usize, now: u64, why: String, timeout: bool) {
        if !self.paths[p].is_up() {
            return;
        }
        self.paths[p].take_down(now, why.clone());
        self.event(now, p, EngineEventKind::Down, why);
        let moved: Vec<u32> = (0..self.slots.len() as u32)
            .filter(|&s| self.slots[s as usize].is_some_and(|x| x.path == p as u32))
            .collect();
        if moved.is_empty() {
            return;
        }
        let mut writes = 0u64;
        for &s in &moved {
            if let Some(x) = self.slots[s as usize].as_mut() {
                x.after_timeout |= timeout;
                x.moved = true;
                if timeout && x.req.op == crate::plan::model::Op::Write {
                    writes += 1;
                }
            }
        }
        self.rewrites_after_timeout += writes;
        self.paths[p].interval.reissued += moved.len() as u64;
        self.paths[p].interval.errors += 1;
        self.event(
            now,
            p,
            EngineEventKind::Reissue,
            format!(
                "{} I/Os re-issued on other paths{}",
                moved.len(),
                if writes > 0 {
                    format!(" ({writes} writes may land twice)")
                } else {
                    String::new()
                }
            ),
        );
        for s in moved {
            self.route(s, now);
        }
    }

    /// Starts and collects probes; checks deadlines.
    fn tend(&mut self, now: u64) {
        for p in 0..self.paths.len() {
            let down_since = match self.paths[p].health {
                path::Health::Down { since_ns, .. } => since_ns,
                path::Health::Up { .. } => now,
            };
            if let Some(Ok(())) = self.paths[p].poll_probe(now, self.settings.retry_ns) {
                let detail = format!(
                    "answered a probe after {:.1} s down",
                    now.saturating_sub(down_since) as f64 / 1e9
                );
                self.event(now, p, EngineEventKind::Up, detail);
            }
            if self.paths[p].probe_due(now) {
                self.start_probe(p, now);
            }
        }
        if now >= self.next_deadline_check_ns {
            self.next_deadline_check_ns = now + (self.settings.timeout_ns / 20).max(1_000_000);
            self.check_deadlines(now);
        }
    }

    /// Starts the path's one probe thread. It is waited for, never abandoned: a new
    /// probe starts only after the last one answered, so a server that stalls for
    /// minutes costs one thread per path, not one per connection limit.
    fn start_probe(&mut self, p: usize, now: u64) {
        let (tx, rx) = std::sync::mpsc::channel();
        let connect = self.connect.clone();
        let limit_ns = self.settings.connect_limit_ns();
        let spawned = std::thread::Builder::new()
            .name(format!("ioscope-probe{p}"))
            .spawn(move || {
                // The engine may be gone when the probe ends; then it has no reader.
                let _ = tx.send(connect(p, limit_ns));
            });
        match spawned {
            Ok(_) => {
                self.paths[p].probe = Some(rx);
            }
            Err(_) => {
                if let path::Health::Down { since_ns, .. } = self.paths[p].health {
                    self.paths[p].health = path::Health::Down {
                        since_ns,
                        next_probe_ns: now + self.settings.retry_ns,
                    };
                }
            }
        }
    }

    /// Takes down every path with a request older than the deadline. A path is
    /// judged only after what already reached its socket has been read: a worker
    /// that was not scheduled for a while (a loaded machine) would otherwise find
    /// every path "late" with the answers waiting unread, take them all down and
    /// fail the workload's I/O.
    fn check_deadlines(&mut self, now: u64) {
        let t = self.settings.timeout_ns;
        let oldest_late = |me: &Self, p: usize| {
            me.slots
                .iter()
                .flatten()
                .find(|x| x.path as usize == p && now.saturating_sub(x.sent_ns) > t)
                .map(|x| x.req)
        };
        for p in 0..self.paths.len() {
            if !self.paths[p].is_up() || oldest_late(self, p).is_none() {
                continue;
            }
            let mut got = Vec::new();
            self.drain_path(p, &mut got);
            self.ready.append(&mut got);
            let Some(req) = oldest_late(self, p).filter(|_| self.paths[p].is_up()) else {
                continue;
            };
            let detail = format!(
                "{} of {} bytes at offset {} unanswered after {:.1} s",
                match req.op {
                    crate::plan::model::Op::Read => "read",
                    crate::plan::model::Op::Write => "write",
                    crate::plan::model::Op::Trim => "trim",
                },
                req.len,
                req.offset,
                t as f64 / 1e9
            );
            self.event(now, p, EngineEventKind::Timeout, detail.clone());
            self.path_failed(p, now, format!("timeout: {detail}"), true);
        }
    }

    /// Reads what has arrived on path `p`'s sockets without waiting (a zero-timeout
    /// poll, the inner engine's `on_ready`) and collects what it finished.
    fn drain_path(&mut self, p: usize, out: &mut Vec<Completion>) {
        let mut fds = std::mem::take(&mut self.fds);
        fds.clear();
        if let Some(e) = self.paths[p].engine.as_mut() {
            e.poll_fds(&mut fds);
        }
        if !fds.is_empty() {
            let _ = super::wait::poll_until(&mut fds, 0);
            if fds.iter().any(|f| f.revents != 0) {
                if let Some(Err(e)) = self.paths[p].engine.as_mut().map(|e| e.on_ready(&fds)) {
                    self.fds = fds;
                    let now = crate::clock::now_ns();
                    self.path_failed(p, now, crate::errors::chain(&e), false);
                    return;
                }
            }
        }
        self.fds = fds;
        self.reap_path(p, 0, out);
    }

    /// Collects what path `p` has finished, without waiting unless `wait_ns` > 0.
    fn reap_path(&mut self, p: usize, wait_ns: u64, out: &mut Vec<Completion>) {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let r = match self.paths[p].engine.as_mut() {
            Some(e) => e.submit_and_reap(u32::from(wait_ns > 0), Some(wait_ns), &mut scratch),
            None => Ok(()),
        };
        let now = crate::clock::now_ns();
        let mut broken = None;
        for c in scratch.drain(..) {
            let slot = c.tag as u32;
            let Some(pend) = self.slots.get(slot as usize).copied().flatten() else {
                continue;
            };
            if pend.path != p as u32 {
                continue;
            }
            if c.result < 0 && is_path_error(-c.result) {
                broken.get_or_insert_with(|| {
                    format!(
                        "I/O failed: {}",
                        std::io::Error::from_raw_os_error(-c.result as i32)
                    )
                });
                continue;
            }
            let path = &mut self.paths[p];
            path.outstanding_ios = path.outstanding_ios.saturating_sub(1);
            path.outstanding_bytes = path.outstanding_bytes.saturating_sub(pend.req.len as u64);
            if c.result >= 0 {
                let done = if c.done_ns != 0 { c.done_ns } else { now };
                path.answered(c.result as u64, done.saturating_sub(pend.sent_ns));
            } else {
                path.interval.errors += 1;
            }
            self.slots[slot as usize] = None;
            self.free.push(slot);
            if pend.moved && pend.req.op == crate::plan::model::Op::Write {
                self.reissued_writes.push(pend.req.tag);
            }
            out.push(Completion {
                tag: pend.req.tag,
                ..c
            });
        }
        self.scratch = scratch;
        if let Err(e) = r {
            broken = Some(crate::errors::chain(&e));
        }
        if let Some(why) = broken {
            self.path_failed(p, now, why, false);
        }
    }

    /// Waits up to `wait_ns` for something to finish on some path.
    fn wait(&mut self, wait_ns: u64, out: &mut Vec<Completion>) {
        let busy: Vec<usize> = (0..self.paths.len())
            .filter(|&p| self.paths[p].is_up() && self.paths[p].outstanding_ios > 0)
            .collect();
        match busy.as_slice() {
            [] => std::thread::sleep(std::time::Duration::from_nanos(wait_ns.min(1_000_000))),
            [p] => self.reap_path(*p, wait_ns, out),
            _ => {
                if !self.wait_on_fds(&busy, wait_ns, out) {
                    let slice = (wait_ns / busy.len() as u64).clamp(1, WAIT_SLICE_NS);
                    for p in busy {
                        self.reap_path(p, slice, out);
                    }
                }
            }
        }
    }

    /// Waits on the sockets of every busy path at once (the inner engines'
    /// [`Engine::poll_fds`]), up to `wait_ns`, hands each path its readiness and
    /// reaps the paths that had some. False, having waited for nothing, when an inner
    /// engine has no descriptors to offer; the caller then waits path by path.
    fn wait_on_fds(&mut self, busy: &[usize], wait_ns: u64, out: &mut Vec<Completion>) -> bool {
        let mut fds = std::mem::take(&mut self.fds);
        fds.clear();
        let mut spans = Vec::with_capacity(busy.len());
        for &p in busy {
            let start = fds.len();
            if let Some(e) = self.paths[p].engine.as_mut() {
                e.poll_fds(&mut fds);
            }
            if fds.len() == start {
                self.fds = fds;
                return false;
            }
            spans.push((p, start, fds.len()));
        }
        // An interrupted or failed poll only ends the wait early: the paths are
        // reaped (without waiting) all the same at the caller's next turn.
        let _ = super::wait::poll_until(&mut fds, wait_ns);
        for (p, a, b) in spans {
            let ready = &fds[a..b];
            if ready.iter().all(|f| f.revents == 0) || !self.paths[p].is_up() {
                continue;
            }
            let r = match self.paths[p].engine.as_mut() {
                Some(e) => e.on_ready(ready),
                None => continue,
            };
            match r {
                Ok(()) => self.reap_path(p, 0, out),
                Err(e) => {
                    // Takes the path down: what it held goes to the others.
                    let now = crate::clock::now_ns();
                    self.path_failed(p, now, crate::errors::chain(&e), false);
                }
            }
        }
        self.fds = fds;
        true
    }
}

impl Engine for MultipathEngine {
    fn name(&self) -> &'static str {
        "multipath"
    }

    fn take_events(&mut self, out: &mut Vec<EngineEvent>) {
        out.append(&mut self.events);
    }

    fn take_path_samples(&mut self, out: &mut Vec<PathSample>) {
        self.samples(out);
    }

    fn take_reissued_writes(&mut self, out: &mut Vec<u64>) {
        out.append(&mut self.reissued_writes);
    }

    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let Some(slot) = self.free.pop() else {
            return Err(EngineError::Io {
                engine: "multipath",
                op: "submit",
                source: std::io::Error::other("more requests than the engine's capacity"),
            });
        };
        self.slots[slot as usize] = Some(Pending {
            req,
            path: u32::MAX,
            sent_ns: 0,
            after_timeout: false,
            moved: false,
        });
        self.route(slot, crate::clock::now_ns());
        Ok(())
    }

    fn submit_and_reap(
        &mut self,
        min_complete: u32,
        timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        let start = out.len();
        let deadline = super::wait::deadline_ns(timeout_ns);
        loop {
            let now = crate::clock::now_ns();
            self.tend(now);
            out.append(&mut self.ready);
            for p in 0..self.paths.len() {
                if self.paths[p].is_up() {
                    self.reap_path(p, 0, out);
                }
            }
            out.append(&mut self.ready);
            if out.len() - start >= min_complete as usize || self.in_flight() == 0 {
                return Ok(());
            }
            let now = crate::clock::now_ns();
            if now >= deadline {
                return Ok(());
            }
            let wait_ns = self.next_deadline_check_ns.saturating_sub(now).max(1);
            let wait_ns = wait_ns.min(deadline - now);
            // Probes are collected in `tend`: come back to it at least every 10 ms.
            self.wait(wait_ns.min(10_000_000), out);
        }
    }
}

/// Stands in for the engine of a path that could not be connected at start; it is
/// dropped at once (the path starts down), never used.
struct NoEngine;

impl Engine for NoEngine {
    fn name(&self) -> &'static str {
        "none"
    }
    fn push(&mut self, _req: IoRequest) -> Result<(), EngineError> {
        Err(EngineError::Io {
            engine: "none",
            op: "submit",
            source: std::io::Error::other("path not connected"),
        })
    }
    fn submit_and_reap(
        &mut self,
        _min: u32,
        _timeout: Option<u64>,
        _out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
