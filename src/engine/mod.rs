//! Engines: how I/O is issued. Every engine speaks the same completion-based
//! interface — queue requests, then submit and reap completions — because that is the
//! shape of io_uring and of asynchronous network protocols (NBD, iSCSI) alike. A
//! synchronous engine simply completes each request as it is queued. An engine may
//! hold several connections (paths) to one volume; requests carry a tag that comes
//! back with the completion, so the runner never cares which path served it.
//!
//! A worker owns one engine instance for its whole life; nothing here is shared
//! between threads except the opened targets.

pub mod iscsi;
pub mod mem;
pub mod nbd;
pub mod null;
pub mod sim;
pub mod sync;
pub mod uring;

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
}

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
    #[error("{engine}: {op}")]
    Io {
        engine: &'static str,
        op: &'static str,
        source: std::io::Error,
    },
}

/// The interface every engine implements.
///
/// Contract: the runner calls [`Engine::push`] for at most `capacity` requests not
/// yet completed, then [`Engine::submit_and_reap`]. Buffers stay valid until the
/// request's completion has been returned.
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
