//! One target of an smb engine ("link"): where its requests go ([`Lane`]), the tasks
//! carrying them, and for a worker's own session, what losing and reconnecting it
//! needs — the session, the target to open it again from, and while it is being
//! opened again, the [`Retry`] of the shared reconnect schedule whose attempt is a
//! [`Connecting`] task on the engine's runtime.

use super::task::{BufPtr, Done, Request};
use crate::clock::now_ns;
use crate::engine::reconnect::{Attempt, Parked, Retry};
use crate::engine::IoRequest;
use crate::plan::model::Op;
use crate::target::smb::client::Session;
use crate::target::{Backing, OpenTarget};
use std::sync::{Arc, Mutex};

/// Where one target's requests go: the open file and the channel that carries them.
pub struct Lane {
    pub file: Arc<smb::File>,
    /// `None`: the session's only channel.
    pub channel: Option<u32>,
    pub max_read_bytes: u32,
    pub max_write_bytes: u32,
}

impl Lane {
    /// The lane of a session's only channel.
    pub fn of(session: &Session) -> Lane {
        Lane {
            file: session.file().clone(),
            channel: None,
            max_read_bytes: session.max_read_bytes,
            max_write_bytes: session.max_write_bytes,
        }
    }

    /// What request `req` of target `target` asks of this lane.
    pub fn request(&self, target: u32, req: &IoRequest) -> Request {
        let max = match req.op {
            Op::Read => self.max_read_bytes,
            Op::Write | Op::Trim => self.max_write_bytes,
        }
        .max(4096) as usize;
        Request {
            file: self.file.clone(),
            channel: self.channel,
            op: req.op,
            offset: req.offset,
            len: req.len,
            buf: BufPtr(req.buf),
            max,
            target,
            tag: req.tag,
        }
    }
}

/// Where a session being opened again leaves its result.
type Slot = Arc<Mutex<Option<Result<Session, String>>>>;

/// A session being opened again: a task on the engine's runtime that leaves the
/// session (or why it failed) in its slot and wakes the engine. Dropping it (the
/// attempt took too long) cancels the task.
pub struct Connecting {
    slot: Slot,
    task: tokio::task::AbortHandle,
}

impl Connecting {
    /// Starts opening a session to `target` on `rt`, ringing `done` when it ends.
    pub fn start(
        target: &OpenTarget,
        rt: &Arc<tokio::runtime::Runtime>,
        done: &Arc<Done>,
    ) -> Result<Connecting, String> {
        let Backing::Smb(s) = &target.backing else {
            return Err(format!("{} is not an SMB target", target.uri));
        };
        let open = s.connect_async(rt.clone());
        let slot: Slot = Arc::default();
        let (to, wake) = (slot.clone(), done.clone());
        let task = rt.spawn(async move {
            let r = open.await.map_err(|e| e.to_string());
            *to.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            wake.wake.notify_one();
        });
        Ok(Connecting {
            slot,
            task: task.abort_handle(),
        })
    }

    /// How the attempt stands.
    pub fn judge(&self) -> Attempt {
        match &*self.slot.lock().unwrap_or_else(|p| p.into_inner()) {
            None => Attempt::Pending,
            Some(Ok(_)) => Attempt::Ready,
            Some(Err(e)) => Attempt::Failed(e.clone()),
        }
    }

    /// The session, once the attempt is [`Attempt::Ready`].
    fn session(&self) -> Option<Session> {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        match slot.take() {
            Some(Ok(s)) => Some(s),
            other => {
                *slot = other;
                None
            }
        }
    }
}

impl Drop for Connecting {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One target of an engine: its lane, the tasks in flight on it and, for a worker's
/// own session, how the session stands.
pub struct Link {
    /// `None` once its session was lost (until it is back).
    pub lane: Option<Lane>,
    pub tasks: tokio::task::JoinSet<()>,
    /// Requests in flight (tasks whose end is not yet reaped).
    pub inflight: usize,
    /// The worker's own session: `None` for a channel engine's link (the channel
    /// set holds the session), and while it is being opened again.
    pub session: Option<Session>,
    /// What the session is opened again from (a worker's own session only).
    pub target: Option<Arc<OpenTarget>>,
    /// `HOST:PORT`, for messages.
    pub server: String,
    /// While the session is opened again.
    pub retry: Option<Retry<Connecting>>,
    /// Why the session was lost, once it is.
    pub lost: Option<String>,
    /// When the session was opened, for "lost after N s" messages.
    pub opened_ns: u64,
}

impl Link {
    /// A link on `session`, a worker's own, to `target`.
    pub fn own(session: Session, target: Arc<OpenTarget>, server: String) -> Link {
        Link {
            lane: Some(Lane::of(&session)),
            tasks: tokio::task::JoinSet::new(),
            inflight: 0,
            session: Some(session),
            target: Some(target),
            server,
            retry: None,
            lost: None,
            opened_ns: now_ns(),
        }
    }

    /// A link on `lane`, a channel of a session the engine does not hold.
    pub fn channel(lane: Lane, server: String) -> Link {
        Link {
            lane: Some(lane),
            tasks: tokio::task::JoinSet::new(),
            inflight: 0,
            session: None,
            target: None,
            server,
            retry: None,
            lost: None,
            opened_ns: now_ns(),
        }
    }

    /// True when its session was lost (the server closed the connection).
    pub fn session_lost(&self) -> bool {
        self.session.as_ref().is_some_and(Session::is_lost)
    }

    /// The reconnect attempt is done at `now`: the new session takes the lost one's
    /// place. Returns the requests parked meanwhile and the `up` event's text.
    pub fn up(&mut self, now: u64) -> (Vec<Parked>, String) {
        let retry = self.retry.take().expect("a reconnecting link");
        let session = retry
            .pending
            .as_ref()
            .and_then(Connecting::session)
            .expect("a ready attempt holds its session");
        let detail = retry.up_detail(&self.server, now);
        self.lane = Some(Lane::of(&session));
        self.session = Some(session);
        self.opened_ns = now;
        self.lost = None;
        (retry.parked, detail)
    }
}
