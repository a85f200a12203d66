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
//! A lost connection (the server went away, or a request past `--io-timeout`,
//! abandoned by destroying its connection: libnfs cancels its requests and touches
//! none of their buffers afterwards) fails its requests with ECONNABORTED and raises
//! a `down` event. Under the stop policy the run then ends with "connection to …
//! lost after N s"; under `--on-error continue` or `retry=N` the engine mounts the
//! export and opens the file again without blocking the worker
//! ([`super::reconnect`]: `nfs_mount_async`, then `nfs_open_async`, serviced like
//! the other connections), holds the requests sent to the connection meanwhile and
//! sends them once it is back (an `up` event), as the nbd and iscsi engines do.
//!
//! The loop, the losses and the reconnects are the shared [`super::driver`]'s;
//! this file holds only libnfs's calls ([`Nfs`]). As with libiscsi, every
//! connection is serviced at each turn (libnfs's timers), a blocking reap's first
//! turn always polls and no wait is longer than 100 ms.

use super::driver::{Attempt, Driver, Pacing, Protocol, Reconnects};
use super::tag_table::{tag_table_bookkeeping, TagTable};
use super::{Completion, EngineError, IoRequest};
use crate::plan::model::Op;
use crate::target::nfs::{ffi, NfsTarget};
use crate::target::{Backing, OpenTarget};
use std::sync::Arc;

/// One worker's connections to the NFS targets it serves.
pub type NfsEngine = Driver<Nfs>;

/// libnfs's calls for the driver, and the requests in flight on all connections
/// (with their result once libnfs reports them: bytes, or a negated errno).
pub struct Nfs {
    tags: TagTable<i64>,
}

/// One NFS target.
pub struct Share {
    target: Arc<OpenTarget>,
}

impl Share {
    fn nfs(&self) -> &NfsTarget {
        match &self.target.backing {
            Backing::Nfs(n) => n,
            _ => unreachable!("a Share is built only for NFS targets"),
        }
    }
}

impl Protocol for Nfs {
    const NAME: &'static str = "nfs";
    const KIND: &'static str = "an NFS";
    const RETRYING: &'static str = "mounting again";
    const ATTEMPT_TIMED_OUT: &'static str = "no mount and open in time";
    // nfs_service also runs libnfs's timers: serviced at every turn, at least
    // every 100 ms.
    const PACING: Pacing = Pacing::OWN_TIMERS;
    // Nothing to poll and no reconnect attempt ahead: every connection is lost,
    // and none comes back.
    const RETURN_WHEN_NOTHING_POLLED: bool = true;
    // A link is found by its requests' tags, which stay counted until reaped: an
    // abandoned request's link may be lost already.
    const LOSES_ONCE: bool = true;

    type Spec = Share;
    type Conn = ffi::Client;

    fn spec(t: &Arc<OpenTarget>) -> Option<Share> {
        matches!(t.backing, Backing::Nfs(_)).then(|| Share { target: t.clone() })
    }

    fn server(s: &Share) -> &str {
        &s.nfs().server
    }

    /// Mounts and opens; NFS set-up is not bounded (`limit_ns` is not used).
    fn open(&self, s: &Share, _limit_ns: u64) -> Result<ffi::Client, EngineError> {
        let n = s.nfs();
        n.connect().map_err(|e| EngineError::Setup {
            engine: "nfs",
            source: std::io::Error::other(format!(
                "{}: opening {}{}/{}: {e}",
                n.server, n.server, n.spec.export, n.spec.file
            )),
        })
    }

    fn service(client: &ffi::Client, revents: i16, _live: bool) -> Result<(), String> {
        client.service(revents).map_err(|e| e.to_string())
    }

    unsafe fn send(
        &mut self,
        _s: &Share,
        _state: &mut (),
        client: &ffi::Client,
        at: (usize, usize),
        req: &IoRequest,
    ) -> Result<(), String> {
        // SAFETY: the caller's promise: libnfs reports the request, or its
        // connection is dropped (cancelling it), before the buffer is reused.
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
        r.map_err(|e| e.to_string())?;
        self.tags.sent(req, at);
        Ok(())
    }

    /// Turns the callbacks' records into completions: bytes moved, or the negated
    /// errno libnfs reports (a cancelled request: ECONNABORTED).
    fn reap(d: &mut Driver<Self>, out: &mut Vec<Completion>, _min: u32) -> Result<(), EngineError> {
        let targets = &d.targets;
        d.proto
            .tags
            .finished(ffi::take_done, |tag, result, (t, c), _len| {
                let gone = targets[t]
                    .as_ref()
                    .is_some_and(|s| s.links[c].conn.is_none());
                out.push(if gone && result < 0 {
                    super::reconnect::aborted(tag)
                } else {
                    Completion::reaped(tag, result)
                });
            });
        Ok(())
    }

    /// Dropping the connection cancels its requests: libnfs touches none of their
    /// buffers afterwards. The request stays counted until its link is lost.
    fn abandoned(d: &mut Driver<Self>, tag: u64) -> Option<(usize, usize)> {
        d.proto.tags.link_of(tag)
    }

    fn after_abandon(&mut self, tag: u64) {
        self.tags.remove(tag);
    }

    fn start_attempt(s: &Share) -> Result<ffi::Client, String> {
        s.nfs().start_connect().map_err(|e| e.to_string())
    }

    fn attempt(client: &ffi::Client) -> Attempt {
        match client.progress() {
            ffi::Progress::Pending => Attempt::Pending,
            ffi::Progress::Ready => Attempt::Ready,
            ffi::Progress::Failed(e) => Attempt::Failed(e),
        }
    }

    // Dropping the connections cancels their requests through the callbacks, which
    // record them on this thread: none may stay for another engine.
    tag_table_bookkeeping!(ffi::discard_done);
}

impl Reconnects for Nfs {}
