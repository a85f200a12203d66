//! Engines: how I/O is issued. Every engine speaks the same completion-based
//! interface — queue requests, then submit and reap completions — because that is the
//! shape of io_uring and of asynchronous network protocols (NBD, iSCSI) alike. An
//! engine that finishes each request while it is queued (null, mem, sync) is written
//! once as an [`inline::InlineEngine`] over a per-request function.
//!
//! # The contract, step by step
//!
//! A worker owns one engine instance for its whole life; nothing here is shared
//! between threads except the opened targets. The worker drives it like this:
//!
//! 1. **Connect.** Before the first request the worker calls
//!    [`Engine::connect`] with the number of connections per target its streams use
//!    (`N`: 1 unless the run asks for more, and never more than the run's
//!    `--connections`; `run::spread` deals streams to workers by connection). A
//!    network engine opens `N` connections (sessions) to every target it serves; a
//!    local engine has nothing to open and accepts any `N`.
//! 2. **Queue.** [`Engine::push`] queues one [`IoRequest`]; at most `capacity`
//!    requests (the constructor's argument) are queued or in flight at once. The
//!    request names its target *and* its connection (`conn` in `0..N`): the worker
//!    assigns every stream one connection per target (stream number mod the run's
//!    `--connections`, numbered among the worker's own), so per-connection order and
//!    load are the runner's choice, not the engine's.
//! 3. **Submit and reap.** [`Engine::submit_and_reap`] sends everything queued and
//!    appends finished requests to `out`, waiting for at least `min_complete` or
//!    until `timeout_ns` passes. The `tag` of a request comes back unchanged in its
//!    [`Completion`]. A per-I/O failure is a negative `result` (an errno), never an
//!    `Err`; `Err` means the engine as a whole cannot go on.
//! 4. **Wait by file descriptor** (engines with sockets or rings). When
//!    [`Engine::poll_fds`] lists descriptors, the worker never blocks inside the
//!    engine: it calls `submit_and_reap(0, Some(0), …)`, and when that returns
//!    nothing it waits in poll(2) on the engine's descriptors (with the interval
//!    boundary, the next intended time or the next I/O deadline as the timeout),
//!    hands the readiness back with [`Engine::on_ready`], and reaps again without
//!    waiting. A descriptor asking for `POLLIN` alone whose socket already holds
//!    bytes is handed back as ready without the poll ([`wait::Probe`]). A worker can thus wait on an io_uring and on sockets at once, and a
//!    composite engine can merge the descriptors of several engines.
//! 5. **Deadlines.** With `--io-timeout`, the worker watches every request's age
//!    itself (engines need no timers). A request older than the deadline is counted
//!    as a timeout error (an `EngineEventKind::Timeout` event per connection and
//!    interval) and [`Engine::abandon`]ed: an engine that can forget it (the sim
//!    engine; a network engine that discards the late reply into a scratch buffer)
//!    returns `true`, and the worker reuses the slot at once — or re-issues the same
//!    I/O there under `--on-error retry=N`. An engine that cannot (io_uring, whose
//!    kernel may still write into the buffer) returns `false`: the slot stays busy
//!    until the late completion arrives, and that completion is then discarded. At
//!    the end of a run the drain waits at most one deadline for such requests and
//!    leaks their buffers rather than free memory the kernel may still touch.
//! 6. **Events.** [`Engine::take_events`] hands over what happened to connections
//!    (lost, reconnected) since the last call, once per loop turn that reaped; the
//!    worker adds its own timeout and re-issue events. They reach the interval record
//!    and `runs[].events[]` with the connection as their `path`.
//! 7. **Flushes.** Under `--sync-every` the worker offers each flush to
//!    [`Engine::push_flush`]: an engine that can queue one (io_uring's
//!    `IORING_OP_FSYNC`, ordered after every request queued before it) returns `true`
//!    and hands its completion back like any other (result 0 or a negated errno);
//!    the default `false` makes the worker call fsync(2)/fdatasync(2) itself.
//! 8. **Paths.** A multipath engine ([`multipath::MultipathEngine`]) chooses the path
//!    of every request itself, handles per-path deadlines and re-issues internally
//!    (the worker's own `--io-timeout` is off for it), reports path events with the
//!    path as `conn`, and hands per-path figures over with
//!    [`Engine::take_path_samples`] at every interval boundary.
//!
//! Buffers stay valid until the request's completion has been returned (or until
//! `abandon` returned `true`).

pub mod cork;
pub mod cpuio;
pub mod defrag;
pub mod discard;
pub mod driver;
pub mod exec;
pub mod factory;
pub mod fileops;
pub mod inline;
pub mod iscsi;
pub mod mem;
pub mod multipath;
pub mod nbd;
pub mod nfs;
pub mod null;
pub mod page_fault;
pub mod reconnect;
pub mod sim;
#[cfg(feature = "smb")]
pub mod smb;
pub mod sock;
pub mod space;
pub mod sync;
pub mod tag_table;
pub mod tree_bytes;
pub mod uring;
pub mod wait;

use crate::plan::model::Op;
use crate::target::OpenTarget;
use std::sync::Arc;

/// One I/O to issue. `buf` points into the worker's aligned buffer pool, which
/// outlives every request the worker queues.
#[derive(Debug, Clone, Copy)]
pub struct IoRequest {
    pub op: Op,
    /// Index into the engine's target list.
    pub target: u32,
    pub offset: u64,
    pub len: u32,
    pub buf: *mut u8,
    /// Returned unchanged in the [`Completion`].
    pub tag: u64,
    /// Connection to the target that carries this request, in `0..N` where `N` is
    /// what [`Engine::connect`] was given. Local engines ignore it.
    pub conn: u32,
    /// The request's I/O priority (io_uring's `sqe->ioprio`); 0 = the issuing
    /// thread's (ioprio_set). Only the uring engine sets it per request; the run's
    /// checks refuse per-request priorities on others.
    pub ioprio: u16,
    /// A write that must land whole or not at all (RWF_ATOMIC; uring and sync). The
    /// run's checks refuse it on other engines and on targets without atomic writes
    /// of its size.
    pub atomic: bool,
}

impl IoRequest {
    /// A request on target 0 over connection 0, at the thread's priority and not
    /// atomic: what the engines' tests push.
    #[cfg(test)]
    pub(crate) fn plain(op: Op, offset: u64, len: u32, buf: *mut u8, tag: u64) -> IoRequest {
        IoRequest {
            op,
            target: 0,
            offset,
            len,
            buf,
            tag,
            conn: 0,
            ioprio: 0,
            atomic: false,
        }
    }
}

/// pwritev2(2)'s and io_uring's flag for a write that lands whole or not at all
/// (include/uapi/linux/fs.h, Linux 6.11).
pub const RWF_ATOMIC: i32 = 0x40;

/// A finished request.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub tag: u64,
    /// Bytes transferred, or a negated errno.
    pub result: i64,
    /// Monotonic completion time in ns, when the engine knows it precisely (sync
    /// engines); 0 means "when reaped", and the runner reads the clock once per reap.
    pub done_ns: u64,
}

impl Completion {
    /// Request `tag` finished with `result`, timed when the runner reaps it.
    #[inline]
    pub const fn reaped(tag: u64, result: i64) -> Completion {
        Completion {
            tag,
            result,
            done_ns: 0,
        }
    }
}

/// A [`Completion::result`] meaning "nothing to act on": a tree operation that found
/// no file (or directory) it could serve — no missing name to create, none left to
/// delete. vdbench waits and goes on; the runner counts it as a skip of the workload,
/// neither an operation nor an error.
pub const NOTHING_TO_DO: i64 = i64::MIN;

/// Errors an engine returns for the ring or connection as a whole (not per I/O:
/// per-I/O failures arrive as negative `Completion::result`).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{engine}: setting up")]
    Setup {
        engine: &'static str,
        source: std::io::Error,
    },
    /// An option the kernel, the device or the target does not support.
    #[error("{option}: {msg}")]
    Unsupported { option: &'static str, msg: String },
    /// An option whose setup the kernel refused (a polling ring, registered buffers).
    #[error("{option}: {what}")]
    Refused {
        option: &'static str,
        what: String,
        source: std::io::Error,
    },
    /// Polled completions (`--hipri`) that this target cannot have.
    #[error("--hipri")]
    Hipri(#[source] uring::HipriError),
    /// The target needs an engine this build leaves out (a cargo feature).
    #[error("this ioscope was built without {feature} support")]
    NotBuiltIn { feature: &'static str },
    #[error("{engine}: {op}")]
    Io {
        engine: &'static str,
        op: &'static str,
        source: std::io::Error,
    },
}

/// What happened to an engine's connection (or, from the worker, to one I/O).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineEvent {
    /// Clock reading when it happened ([`now_ns`]).
    pub at_ns: u64,
    /// Target index and connection number (see [`IoRequest::conn`]).
    pub target: u32,
    pub conn: u32,
    pub kind: EngineEventKind,
    /// Human-readable cause, e.g. the error that broke the connection.
    pub detail: String,
}

impl EngineEvent {
    /// An event of connection `conn` to target `target`, happening now.
    pub fn now(target: usize, conn: usize, kind: EngineEventKind, detail: String) -> Self {
        EngineEvent {
            at_ns: now_ns(),
            target: target as u32,
            conn: conn as u32,
            kind,
            detail,
        }
    }
}

/// Kinds of [`EngineEvent`]; the names are the result's `events[].kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineEventKind {
    /// The connection broke or stopped answering.
    Down,
    /// The connection is back.
    Up,
    /// An I/O on the connection passed `--io-timeout`.
    Timeout,
    /// A timed-out or failed I/O was issued again.
    Reissue,
}

impl EngineEventKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineEventKind::Down => "down",
            EngineEventKind::Up => "up",
            EngineEventKind::Timeout => "timeout",
            EngineEventKind::Reissue => "reissue",
        }
    }
}

/// The interface every engine implements; the module docs give the whole contract.
///
/// Only `name`, `push` and `submit_and_reap` are required: the rest default to a
/// local engine with one implicit connection, no descriptors, no events, and
/// requests that cannot be abandoned.
pub trait Engine {
    /// Name as reported in results ("uring", "sync", …).
    fn name(&self) -> &'static str;

    /// Queues a request. Synchronous engines perform it here.
    fn push(&mut self, req: IoRequest) -> Result<(), EngineError>;

    /// True when `push` finishes with the request's buffer before it returns (sync,
    /// mem, null): the runner may then let requests share one hot buffer.
    fn completes_inline(&self) -> bool {
        false
    }

    /// Registers the worker's buffer pool with the engine, once, before the first
    /// request (io_uring's fixed buffers). Engines without such a thing ignore it.
    fn register_buffers(&mut self, _base: *mut u8, _len: usize) -> Result<(), EngineError> {
        Ok(())
    }

    /// Submits everything queued and appends completions to `out`, waiting until at
    /// least `min_complete` are available or `timeout_ns` passes (`None` = no limit).
    fn submit_and_reap(
        &mut self,
        min_complete: u32,
        timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError>;

    /// Opens `per_target` connections to every target, before the first `push`.
    /// Requests then carry `conn < per_target`.
    fn connect(&mut self, per_target: u32) -> Result<(), EngineError> {
        let _ = per_target;
        Ok(())
    }

    /// Gives up on the request with `tag` (it passed its deadline). `true`: the
    /// engine has forgotten it — its completion will never be returned and its
    /// buffer is no longer touched. `false`: it is still in flight and will complete
    /// (the default, and io_uring's answer).
    fn abandon(&mut self, tag: u64) -> bool {
        let _ = tag;
        false
    }

    /// Moves connection events since the last call to `out`.
    fn take_events(&mut self, out: &mut Vec<EngineEvent>) {
        let _ = out;
    }

    /// Descriptors the worker should wait on instead of blocking in
    /// `submit_and_reap`, with the poll(2) events wanted now (they may change
    /// between calls, as libiscsi's `iscsi_which_events` does). None by default.
    fn poll_fds(&mut self, out: &mut Vec<libc::pollfd>) {
        let _ = out;
    }

    /// When the engine must be called again (`on_ready` with nothing ready, then a
    /// reap) even if none of its descriptors becomes ready: a timer of its own, such
    /// as the next reconnect attempt ([`reconnect`]). None by default.
    fn wake_ns(&self) -> Option<u64> {
        None
    }

    /// After poll(2): the descriptors from `poll_fds` with `revents` filled in, so
    /// the engine can service them (e.g. `iscsi_service`) before the next reap.
    fn on_ready(&mut self, fds: &[libc::pollfd]) -> Result<(), EngineError> {
        let _ = fds;
        Ok(())
    }

    /// Queues a flush of target `target` — fdatasync(2) when `datasync`, else
    /// fsync(2) — ordered after every request queued before it, whose completion
    /// carries `tag` (result 0, or a negated errno). `false` (the default): the engine
    /// has no asynchronous flush, and the caller flushes the descriptor itself.
    fn push_flush(&mut self, target: u32, datasync: bool, tag: u64) -> Result<bool, EngineError> {
        let _ = (target, datasync, tag);
        Ok(false)
    }

    /// An engine that spreads requests over several paths (multipath): each path's
    /// figures since the last call, in path order, once per interval. None by default.
    fn take_path_samples(&mut self, out: &mut Vec<multipath::path::PathSample>) {
        let _ = out;
    }

    /// Tags of the writes among the completions returned since the last call that
    /// were issued on more than one path (multipath re-issue): their first copy may
    /// still land later, which verification must tolerate. None by default.
    fn take_reissued_writes(&mut self, out: &mut Vec<u64>) {
        let _ = out;
    }
}

/// Clock used by engines that time their own completions; the same one the runner uses.
pub use crate::clock::now_ns;

/// Converts a failed syscall return into a negated errno for a completion.
pub(crate) fn neg_errno() -> i64 {
    -(std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO) as i64)
}

/// The opened targets an engine serves, shared between workers.
pub type Targets = Arc<Vec<Arc<OpenTarget>>>;
