//! When a network engine tries again to reach a server it lost. Under
//! `--on-error continue` or `retry=N` a lost NBD connection or iSCSI session is not
//! the end of the run: the engine connects again in the background of the worker's
//! loop (never blocking it), after a short pause that doubles with every failed
//! attempt, for a bounded time. Requests sent to the connection meanwhile wait in
//! the engine (their `--io-timeout` still runs); once it is back they go out on the
//! new connection, and if the window passes first, the run ends naming the server.
//! This module holds the schedule and the state of one link that is reconnecting,
//! shared by the engines.

use super::{Completion, IoRequest};
pub use crate::target::retry::{Attempts, Reconnect};

/// A request held while its connection is being set up again.
pub struct Parked(pub IoRequest);

// SAFETY: the request's buffer belongs to the worker that owns the engine holding
// it and is touched by nothing else until the request completes; the engine, and
// the request with it, only ever moves between threads as a whole.
unsafe impl Send for Parked {}

/// A failed completion for a request whose connection is gone.
pub fn aborted(tag: u64) -> Completion {
    Completion {
        tag,
        result: -(libc::ECONNABORTED as i64),
        done_ns: 0,
    }
}

/// A lost connection being set up again; `C` is the engine's connection handle.
pub struct Retry<C> {
    pub attempts: Attempts,
    /// The attempt under way: a connection in its handshake or login.
    pub pending: Option<C>,
    /// Why servicing the attempt under way failed, for the next look at it.
    pub broken: Option<String>,
    /// Requests sent to the connection meanwhile, in order.
    pub parked: Vec<Parked>,
}

impl<C> Retry<C> {
    /// A connection lost at `now` for `why`.
    pub fn new(now: u64, why: &str) -> Self {
        Retry {
            attempts: Attempts::new(now, why.to_string()),
            pending: None,
            broken: None,
            parked: Vec::new(),
        }
    }

    /// Forgets the parked request `tag` (its deadline passed); true if it was here.
    pub fn forget(&mut self, tag: u64) -> bool {
        match self.parked.iter().position(|p| p.0.tag == tag) {
            Some(k) => {
                self.parked.remove(k);
                true
            }
            None => false,
        }
    }

    /// The attempt under way failed at `now` for `why`: `None` while the window
    /// lasts (the next attempt is scheduled); once it is over, the parked requests
    /// fail into `orphans` and the summary for the run's error is returned.
    pub fn failed(
        &mut self,
        now: u64,
        why: String,
        r: &Reconnect,
        orphans: &mut Vec<Completion>,
    ) -> Option<String> {
        self.pending = None;
        if self.attempts.failed(now, why, r) {
            return None;
        }
        orphans.extend(self.parked.drain(..).map(|Parked(req)| aborted(req.tag)));
        Some(self.attempts.summary(now))
    }

    /// The `up` event's text once the connection to `server` is back at `now`.
    pub fn up_detail(&self, server: &str, now: u64) -> String {
        format!(
            "reconnected to {server} after {:.1} s (attempt {})",
            now.saturating_sub(self.attempts.since_ns) as f64 / 1e9,
            self.attempts.tries
        )
    }
}
