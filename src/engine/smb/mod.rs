//! The smb engine: files on SMB shares through the `smb` crate, driven from the
//! worker's own thread. Each worker opens its own session to every SMB target, on one
//! current-thread tokio runtime that runs only inside [`Engine::submit_and_reap`]:
//! `push` spawns one task per request (a READ or WRITE on the session's connection,
//! split at the server's maximum I/O size: [`task`]), and reaping runs the runtime
//! until enough tasks have finished. Many requests are in flight per connection, up
//! to the credits the server grants; no thread is spent per I/O.
//!
//! A session whose connection the server closed (killed, restarted) is lost: a
//! request that fails on it makes the engine drop the session's other tasks (each
//! reports ECONNABORTED; none touches its buffer afterwards) and raise a `down`
//! event. Under the stop policy the run then ends with "connection to … lost after
//! N s"; under `--on-error continue` or `retry=N` the engine connects, logs in and
//! opens the file again as a task of its runtime ([`link::Connecting`]), on the
//! reconnect schedule the network engines share ([`super::reconnect`]), holds the
//! requests sent to the target meanwhile, and sends them once it is back (an `up`
//! event). No durable handle is asked for: the file is opened anew.
//!
//! With `--channels` (SMB3 multichannel) each channel of a session is one path of the
//! multipath engine, served by an engine of this kind made with
//! [`SmbEngine::channel`]: its requests carry the channel's id, its tasks run on the
//! channel set's runtime thread, and dropping it (the channel was lost) cancels them
//! before it returns, so a late answer never lands in a reused buffer. The multipath
//! engine takes care of lost channels; such an engine does not reconnect.

mod link;
mod task;

use super::reconnect::{
    aborted, lost_message, Parked, Reconnect, Retry, Step, WithReconnect, Words,
};
use super::{Completion, Engine, EngineError, EngineEvent, EngineEventKind, IoRequest, Targets};
use crate::clock::now_ns;
use crate::target::smb::channels::{Channel, ChannelSet};
use crate::target::Backing;
use link::{Connecting, Lane, Link};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use task::Done;

/// The runtime an engine's tasks run on.
#[derive(Clone)]
enum Drive {
    /// The worker's own current-thread runtime, run only inside `block_on`.
    Own(Arc<tokio::runtime::Runtime>),
    /// A channel set's runtime, driven by its own thread.
    Shared(tokio::runtime::Handle),
}

impl Drive {
    fn block_on<F: Future>(&self, f: F) -> F::Output {
        match self {
            Drive::Own(rt) => rt.block_on(f),
            Drive::Shared(h) => h.block_on(f),
        }
    }

    fn handle(&self) -> &tokio::runtime::Handle {
        match self {
            Drive::Own(rt) => rt.handle(),
            Drive::Shared(h) => h,
        }
    }
}

/// How this engine's reconnect failures read.
const WORDS: Words = Words {
    retrying: "reconnecting",
    timed_out: "no session in time",
};

/// One worker's sessions to the SMB targets it serves, or one channel of a
/// multichannel session.
pub struct SmbEngine {
    drive: Drive,
    /// Indexed like the target list; `None` for a target that is not SMB.
    links: Vec<Option<Link>>,
    /// The channel the lane uses (channel engines); closed when the engine goes.
    channel: Option<Channel>,
    done: Arc<Done>,
    /// Requests in flight on all links.
    inflight: usize,
    /// What the tasks reported, with their targets, being reaped.
    finished: Vec<(u32, Completion)>,
    /// Links found lost while reaping, with the requests they had in flight then;
    /// settled outside the runtime.
    lost: Vec<(usize, usize)>,
    /// Requests failed by the engine itself (a reconnect window that closed).
    orphans: Vec<Completion>,
    events: Vec<EngineEvent>,
    /// Open lost sessions again on this schedule (`None`: a loss ends the run).
    reconnect: Option<Reconnect>,
}

fn setup_err(msg: String) -> EngineError {
    EngineError::Setup {
        engine: "smb",
        source: std::io::Error::other(msg),
    }
}

fn io_err(op: &'static str, msg: String) -> EngineError {
    EngineError::Io {
        engine: "smb",
        op,
        source: std::io::Error::other(msg),
    }
}

impl SmbEngine {
    /// Opens one session per SMB target.
    pub fn new(targets: &Targets, _capacity: usize) -> Result<Self, EngineError> {
        let rt = crate::target::smb::client::runtime().map_err(|e| setup_err(e.to_string()))?;
        let mut links = Vec::with_capacity(targets.len());
        for t in targets.iter() {
            let Backing::Smb(s) = &t.backing else {
                links.push(None);
                continue;
            };
            let session = s
                .connect(rt.clone())
                .map_err(|e| setup_err(format!("{}: {e}", s.server)))?;
            links.push(Some(Link::own(session, t.clone(), s.server.clone())));
        }
        Ok(Self::with_links(Drive::Own(rt), links, None))
    }

    /// An engine for channel `i` of `set` (a path of the multipath engine): binds the
    /// channel (or takes the session's own connection for channel 0 the first time),
    /// giving up after `limit`.
    pub fn channel(
        set: &ChannelSet,
        i: usize,
        limit: std::time::Duration,
    ) -> Result<Self, EngineError> {
        let ch = set
            .channel(i, limit)
            .map_err(|e| setup_err(format!("channel {i}: {e}")))?;
        let lane = Lane {
            file: set.file().clone(),
            channel: Some(ch.id),
            max_read_bytes: set.max_read_bytes,
            max_write_bytes: set.max_write_bytes,
        };
        let link = Link::channel(lane, format!("channel {i}"));
        let drive = Drive::Shared(set.handle().clone());
        Ok(Self::with_links(drive, vec![Some(link)], Some(ch)))
    }

    fn with_links(drive: Drive, links: Vec<Option<Link>>, channel: Option<Channel>) -> Self {
        SmbEngine {
            drive,
            links,
            channel,
            done: Arc::new(Done::default()),
            inflight: 0,
            finished: Vec::new(),
            lost: Vec::new(),
            orphans: Vec::new(),
            events: Vec::new(),
            reconnect: None,
        }
    }

    /// Moves what the tasks reported into `out`; returns how many. A failed request
    /// on a session the server closed marks its link lost (settled by
    /// [`SmbEngine::settle_losses`]).
    fn drain(&mut self, out: &mut Vec<Completion>) -> usize {
        self.done.take(&mut self.finished);
        let n = self.finished.len();
        for (t, c) in self.finished.drain(..) {
            if let Some(l) = self.links.get_mut(t as usize).and_then(|l| l.as_mut()) {
                let t = t as usize;
                if c.result < 0 && l.session_lost() && !self.lost.iter().any(|&(u, _)| u == t) {
                    self.lost.push((t, l.inflight));
                }
                l.inflight -= 1;
            }
            out.push(c);
        }
        self.inflight -= n;
        for l in self.links.iter_mut().flatten() {
            while l.tasks.try_join_next().is_some() {}
        }
        n
    }

    /// Requests the engine holds: in flight, or parked while a session is opened
    /// again.
    fn pending(&self) -> usize {
        let parked: usize = self
            .links
            .iter()
            .flatten()
            .filter_map(|l| l.retry.as_ref().map(|r| r.parked.len()))
            .sum();
        self.inflight + parked
    }

    /// When a reconnect attempt is due to start, or to be given up.
    fn next_attempt_ns(&self) -> Option<u64> {
        self.links
            .iter()
            .flatten()
            .filter_map(|l| l.retry.as_ref().map(|r| r.attempts.next_ns))
            .min()
    }

    /// Starts request `req` on link `t`'s lane (one that has none, its session
    /// lost, fails it).
    fn start(&mut self, t: usize, req: &IoRequest) {
        let Some(l) = self.links[t].as_mut() else {
            return self.orphans.push(aborted(req.tag));
        };
        let Some(lane) = &l.lane else {
            return self.orphans.push(aborted(req.tag));
        };
        let task = lane.request(t as u32, req).task(self.done.clone());
        l.tasks.spawn_on(task, self.drive.handle());
        l.inflight += 1;
        self.inflight += 1;
    }

    /// Runs the runtime until `need` requests have finished (moved into `out`),
    /// none is in flight (and no session is being opened again), clock time `until`
    /// passes, a link was found lost or, while a session is opened again, anything
    /// woke it. Returns how many finished.
    fn turn(&mut self, need: usize, until: u64, out: &mut Vec<Completion>) -> usize {
        let drive = self.drive.clone();
        let done = self.done.clone();
        let reconnecting = self.links.iter().flatten().any(|l| l.retry.is_some());
        let deadline = (until != u64::MAX).then(|| {
            let left = Duration::from_nanos(until.saturating_sub(now_ns()));
            tokio::time::Instant::now() + left
        });
        drive.block_on(async {
            // Let every runnable task take a step (send what was pushed, read what
            // has arrived) before looking at what finished.
            tokio::task::yield_now().await;
            let mut got = 0;
            loop {
                got += self.drain(out);
                let idle = self.inflight == 0 && !reconnecting;
                if got >= need || idle || !self.lost.is_empty() {
                    return got;
                }
                let wake = done.wake.notified();
                let timed_out = match deadline {
                    Some(d) => tokio::time::timeout_at(d, wake).await.is_err(),
                    None => {
                        wake.await;
                        false
                    }
                };
                if timed_out || reconnecting {
                    return got + self.drain(out);
                }
            }
        })
    }

    /// Loses every link found lost while reaping, then reaps what their cancelled
    /// tasks reported into `out`.
    fn settle_losses(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let lost = std::mem::take(&mut self.lost);
        for &(t, n) in &lost {
            self.lose(t, "the server closed it or went away", n)?;
        }
        if !lost.is_empty() {
            self.drain(out);
            // Reports of requests cancelled with their session, not a new loss.
            self.lost.clear();
        }
        Ok(())
    }

    /// Link `t`'s session, which had `n` requests in flight, is lost: its tasks are
    /// dropped (each reports ECONNABORTED), the session closed, a `down` event
    /// raised; then it is opened again, or (without a schedule) the loss is the
    /// returned error.
    fn lose(&mut self, t: usize, why: &str, n: usize) -> Result<(), EngineError> {
        let Some(l) = self.links[t].as_mut() else {
            return Ok(());
        };
        let err = io_err("connection", lost_message(&l.server, l.opened_ns, why, n));
        l.tasks.abort_all();
        let (tasks, lane) = (&mut l.tasks, l.lane.take());
        self.drive.block_on(async {
            while tasks.join_next().await.is_some() {}
            // Inside the runtime: a file handle's last reference closes it there.
            drop(lane);
        });
        // Outside the runtime: closing a session runs it.
        drop(l.session.take());
        l.lost = Some(why.to_string());
        if self.reconnect.is_some() {
            l.retry = Some(Retry::new(now_ns(), why));
        }
        let detail = crate::errors::chain(&err);
        self.events
            .push(EngineEvent::now(t, 0, EngineEventKind::Down, detail));
        match self.reconnect {
            Some(_) => Ok(()),
            None => Err(err),
        }
    }

    /// Moves every link whose session is being opened again along the schedule:
    /// starts attempts that are due, takes a session that is ready (an `up` event,
    /// the parked requests sent), gives up when a link's window is over (`Err`).
    fn tend(&mut self) -> Result<(), EngineError> {
        let (Some(r), Drive::Own(rt)) = (self.reconnect, &self.drive) else {
            return Ok(());
        };
        let rt = rt.clone();
        for t in 0..self.links.len() {
            let Some(l) = self.links[t].as_mut() else {
                continue;
            };
            let (Some(retry), Some(target)) = (l.retry.as_mut(), l.target.as_ref()) else {
                continue;
            };
            let now = now_ns();
            let start = || Connecting::start(target, &rt, &self.done);
            match retry.step(now, &r, WORDS, start, Connecting::judge, &mut self.orphans) {
                Step::Wait => {}
                Step::Ready => {
                    let (parked, detail) = l.up(now);
                    for Parked(req) in parked {
                        self.start(t, &req);
                    }
                    self.events
                        .push(EngineEvent::now(t, 0, EngineEventKind::Up, detail));
                }
                Step::GaveUp(summary) => {
                    l.retry = None;
                    let why = format!("{}; {summary}", l.lost.as_deref().unwrap_or("lost"));
                    let msg = lost_message(&l.server, l.opened_ns, &why, 0);
                    l.lost = Some(why);
                    return Err(io_err("connection", msg));
                }
            }
        }
        Ok(())
    }
}

impl WithReconnect for SmbEngine {
    /// Opens lost sessions again on schedule `r` instead of failing the run (a
    /// channel engine's links have no session of their own to open again).
    fn with_reconnect(mut self, r: Reconnect) -> Self {
        self.reconnect = Some(r);
        self
    }
}

impl Engine for SmbEngine {
    fn name(&self) -> &'static str {
        "smb"
    }

    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let t = req.target as usize;
        let Some(l) = self.links.get_mut(t).and_then(|l| l.as_mut()) else {
            let msg = format!("target {} is not an SMB target", req.target);
            return Err(io_err("submit", msg));
        };
        if let Some(retry) = l.retry.as_mut() {
            retry.parked.push(Parked(req));
            return Ok(());
        }
        if let Some(why) = &l.lost {
            let msg = lost_message(&l.server, l.opened_ns, why, l.inflight);
            return Err(io_err("connection", msg));
        }
        self.start(t, &req);
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
            self.tend()?;
            out.append(&mut self.orphans);
            let need = (min_complete as usize).saturating_sub(out.len() - start);
            let until = self.next_attempt_ns().map_or(deadline, |a| a.min(deadline));
            self.turn(need, until, out);
            self.settle_losses(out)?;
            let got = out.len() - start;
            if got >= min_complete as usize || self.pending() == 0 || now_ns() >= deadline {
                return Ok(());
            }
        }
    }

    fn wake_ns(&self) -> Option<u64> {
        self.reconnect.and_then(|_| self.next_attempt_ns())
    }

    fn take_events(&mut self, out: &mut Vec<EngineEvent>) {
        out.append(&mut self.events);
    }
}

impl Drop for SmbEngine {
    /// A channel engine cancels what it still has in flight and waits until none of
    /// its tasks can run again (the channel was lost: its answers may never come). A
    /// single-channel engine lets requests still in flight finish (their buffers
    /// belong to the worker, which outlives the engine) before the sessions close, for
    /// at most a few seconds.
    fn drop(&mut self) {
        if self.inflight == 0 {
            return;
        }
        let drive = self.drive.clone();
        if self.channel.is_some() {
            let links = &mut self.links;
            let all_joined = drive.block_on(async {
                tokio::time::timeout(Duration::from_secs(5), async {
                    for l in links.iter_mut().flatten() {
                        l.tasks.abort_all();
                        while l.tasks.join_next().await.is_some() {}
                    }
                })
                .await
                .is_ok()
            });
            if !all_joined {
                // A task still running after that (a poll that never returns): never
                // free what it might touch.
                for l in self.links.iter_mut().flatten() {
                    std::mem::forget(std::mem::take(&mut l.tasks));
                }
            }
            return;
        }
        let done = self.done.clone();
        let mut sink = Vec::new();
        drive.block_on(async {
            let _ = tokio::time::timeout(Duration::from_secs(5), async {
                while self.inflight > 0 {
                    let wake = done.wake.notified();
                    self.drain(&mut sink);
                    if self.inflight == 0 {
                        break;
                    }
                    wake.await;
                }
            })
            .await;
        });
        if self.inflight > 0 {
            // Still running after the grace period: never poll those tasks again (a
            // session's close would), so they cannot touch buffers being freed.
            for l in self.links.iter_mut().flatten() {
                std::mem::forget(l.session.take());
                std::mem::forget(std::mem::take(&mut l.tasks));
            }
        }
    }
}
