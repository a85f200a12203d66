//! The smb engine: files on SMB shares through the `smb` crate, driven from the
//! worker's own thread. Each worker opens its own session to every SMB target, on one
//! current-thread tokio runtime that runs only inside [`Engine::submit_and_reap`]:
//! `push` spawns one task per request (a READ or WRITE on the session's connection,
//! split at the server's maximum I/O size), and reaping runs the runtime until enough
//! tasks have finished. Many requests are in flight per connection, up to the credits
//! the server grants; no thread is spent per I/O.
//!
//! With `--channels` (SMB3 multichannel) each channel of a session is one path of the
//! multipath engine, served by an engine of this kind made with
//! [`SmbEngine::channel`]: its requests carry the channel's id, its tasks run on the
//! channel set's runtime thread, and dropping it (the channel was lost) cancels them
//! before it returns, so a late answer never lands in a reused buffer.

use super::{Completion, Engine, EngineError, IoRequest, Targets};
use crate::plan::model::Op;
use crate::target::smb::channels::{Channel, ChannelSet};
use crate::target::smb::client::Session;
use crate::target::Backing;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A request's buffer, handed to the task that fills or sends it.
#[derive(Clone, Copy)]
struct BufPtr(*mut u8);

// SAFETY: the pointer is only dereferenced by the request's task. The runner keeps
// the buffer valid and untouched until the request's completion is returned, and a
// task never outlives that: single-channel tasks run on the worker's own thread
// (current-thread runtime driven only from submit_and_reap); a channel's tasks run on
// the channel set's thread and are cancelled and awaited when the engine is dropped.
unsafe impl Send for BufPtr {}

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

/// Where one target's requests go: the open file and the channel that carries them.
struct Lane {
    file: Arc<smb::File>,
    /// `None`: the session's only channel.
    channel: Option<u32>,
    max_read_bytes: u32,
    max_write_bytes: u32,
}

/// Finished requests, filled by the tasks and drained by reaping.
#[derive(Default)]
struct Done {
    list: Mutex<Vec<Completion>>,
    wake: tokio::sync::Notify,
}

/// One worker's sessions to the SMB targets it serves, or one channel of a
/// multichannel session.
pub struct SmbEngine {
    drive: Drive,
    /// Indexed like the target list; `None` for a target that is not SMB.
    lanes: Vec<Option<Lane>>,
    /// The sessions the lanes use (single-channel engines).
    sessions: Vec<Session>,
    /// The channel the lane uses (channel engines); closed when the engine goes.
    channel: Option<Channel>,
    tasks: tokio::task::JoinSet<()>,
    done: Arc<Done>,
    inflight: usize,
}

fn setup_err(msg: String) -> EngineError {
    EngineError::Setup {
        engine: "smb",
        source: std::io::Error::other(msg),
    }
}

impl SmbEngine {
    /// Opens one session per SMB target.
    pub fn new(targets: &Targets, _capacity: usize) -> Result<Self, EngineError> {
        let rt = crate::target::smb::client::runtime().map_err(|e| setup_err(e.to_string()))?;
        let mut sessions = Vec::with_capacity(targets.len());
        let mut lanes = Vec::with_capacity(targets.len());
        for t in targets.iter() {
            let Backing::Smb(s) = &t.backing else {
                lanes.push(None);
                continue;
            };
            let session = s
                .connect(rt.clone())
                .map_err(|e| setup_err(format!("{}: {e}", s.server)))?;
            lanes.push(Some(Lane {
                file: session.file().clone(),
                channel: None,
                max_read_bytes: session.max_read_bytes,
                max_write_bytes: session.max_write_bytes,
            }));
            sessions.push(session);
        }
        Ok(SmbEngine {
            drive: Drive::Own(rt),
            lanes,
            sessions,
            channel: None,
            tasks: tokio::task::JoinSet::new(),
            done: Arc::new(Done::default()),
            inflight: 0,
        })
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
        Ok(SmbEngine {
            drive: Drive::Shared(set.handle().clone()),
            lanes: vec![Some(Lane {
                file: set.file().clone(),
                channel: Some(ch.id),
                max_read_bytes: set.max_read_bytes,
                max_write_bytes: set.max_write_bytes,
            })],
            sessions: Vec::new(),
            channel: Some(ch),
            tasks: tokio::task::JoinSet::new(),
            done: Arc::new(Done::default()),
            inflight: 0,
        })
    }

    /// Moves finished requests into `out`; returns how many.
    fn drain(&mut self, out: &mut Vec<Completion>) -> usize {
        let mut list = self.done.list.lock().unwrap_or_else(|p| p.into_inner());
        let n = list.len();
        out.append(&mut list);
        self.inflight -= n;
        drop(list);
        while self.tasks.try_join_next().is_some() {}
        n
    }
}

/// Performs one request, in pieces of at most `max` bytes; bytes done or -errno.
async fn perform(
    file: Arc<smb::File>,
    channel: Option<u32>,
    op: Op,
    offset: u64,
    len: u32,
    buf: BufPtr,
    max: usize,
) -> i64 {
    let len = len as usize;
    let mut done = 0usize;
    while done < len {
        let end = len.min(done + max);
        let off = offset + done as u64;
        let r = match op {
            Op::Read => {
                // SAFETY: see BufPtr; [done, end) lies inside the request's buffer.
                let s = unsafe { std::slice::from_raw_parts_mut(buf.0.add(done), end - done) };
                file.read_block(s, off, channel, false).await
            }
            Op::Write => {
                // SAFETY: as above; the crate copies the bytes before sending them.
                let s = unsafe { std::slice::from_raw_parts(buf.0.add(done), end - done) };
                file.write_block(s, off, channel).await
            }
            // Refused before the run (`run::trim`): no SMB trim is sent.
            Op::Trim => return -(libc::EOPNOTSUPP as i64),
        };
        match r {
            Ok(0) => return -(libc::EIO as i64),
            Ok(n) => done += n,
            Err(e) => return -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        }
    }
    done as i64
}

impl Engine for SmbEngine {
    fn name(&self) -> &'static str {
        "smb"
    }

    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let Some(s) = self.lanes.get(req.target as usize).and_then(|s| s.as_ref()) else {
            return Err(EngineError::Io {
                engine: "smb",
                op: "submit",
                source: std::io::Error::other(format!(
                    "target {} is not an SMB target",
                    req.target
                )),
            });
        };
        let max = match req.op {
            Op::Read => s.max_read_bytes,
            Op::Write | Op::Trim => s.max_write_bytes,
        }
        .max(4096) as usize;
        let (file, channel) = (s.file.clone(), s.channel);
        let done = self.done.clone();
        let buf = BufPtr(req.buf);
        let (op, offset, len, tag) = (req.op, req.offset, req.len, req.tag);
        let task = async move {
            let result = perform(file, channel, op, offset, len, buf, max).await;
            let c = Completion {
                tag,
                result,
                done_ns: crate::clock::now_ns(),
            };
            done.list.lock().unwrap_or_else(|p| p.into_inner()).push(c);
            done.wake.notify_one();
        };
        self.tasks.spawn_on(task, self.drive.handle());
        self.inflight += 1;
        Ok(())
    }

    fn submit_and_reap(
        &mut self,
        min_complete: u32,
        timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        let mut got = 0usize;
        let drive = self.drive.clone();
        let done = self.done.clone();
        let deadline = timeout_ns.map(|t| tokio::time::Instant::now() + Duration::from_nanos(t));
        drive.block_on(async {
            // Let every runnable task take a step (send what was pushed, read what
            // has arrived) before looking at what finished.
            tokio::task::yield_now().await;
            loop {
                got += self.drain(out);
                if got >= min_complete as usize || self.inflight == 0 {
                    return;
                }
                let wake = done.wake.notified();
                match deadline {
                    Some(d) => {
                        if tokio::time::timeout_at(d, wake).await.is_err() {
                            got += self.drain(out);
                            return;
                        }
                    }
                    None => wake.await,
                }
            }
        });
        Ok(())
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
            self.tasks.abort_all();
            let tasks = &mut self.tasks;
            drive.block_on(async {
                let _ = tokio::time::timeout(Duration::from_secs(5), async {
                    while tasks.join_next().await.is_some() {}
                })
                .await;
            });
            if !self.tasks.is_empty() {
                // A task still running after that (a poll that never returns): never
                // free what it might touch.
                std::mem::forget(std::mem::take(&mut self.tasks));
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
            for s in self.sessions.drain(..) {
                std::mem::forget(s);
            }
        }
    }
}
