//! When a network engine tries again to reach a server it lost. Under
//! `--on-error continue` or `retry=N` a lost NBD connection or iSCSI session is not
//! the end of the run: the engine connects again in the background of the worker's
//! loop (never blocking it), after a short pause that doubles with every failed
//! attempt, for a bounded time. Requests sent to the connection meanwhile wait in
//! the engine (their `--io-timeout` still runs); once it is back they go out on the
//! new connection, and if the window passes first, the run ends naming the server.
//! This module holds the schedule and the state of one link that is reconnecting
//! and its turn ([`Retry::step`]: start an attempt when due, judge the one under
//! way, give up when the window is over), shared by the engines: the fd-polled
//! ones through [`super::driver`], the smb engine on its own runtime.

use super::{Completion, IoRequest};
use crate::clock::now_ns;
pub use crate::target::retry::{Attempts, Reconnect};

/// How a reconnect attempt under way stands.
pub enum Attempt {
    /// Still connecting (or logging in).
    Pending,
    /// Done: the connection can carry requests.
    Ready,
    /// Failed, in the library's words.
    Failed(String),
}

/// What a reconnecting link's turn ([`Retry::step`]) came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing more to do now: an attempt is under way, or the next is not due.
    Wait,
    /// The attempt under way is done: the link can carry requests again.
    Ready,
    /// The window is over: the parked requests were failed, and this summary is
    /// for the run's error.
    GaveUp(String),
}

/// How an engine's reconnect failures read: what an attempt's failure starts with
/// ("reconnecting"), and why one that did not finish in time failed.
#[derive(Debug, Clone, Copy)]
pub struct Words {
    pub retrying: &'static str,
    pub timed_out: &'static str,
}

/// The text of a lost connection's error, naming the server.
pub fn lost_message(server: &str, opened_ns: u64, what: &str, n: usize) -> String {
    let secs = now_ns().saturating_sub(opened_ns) as f64 / 1e9;
    format!("connection to {server} lost after {secs:.1} s: {what} ({n} I/Os in flight)")
}

/// An engine that can set its lost connections up again.
pub trait WithReconnect: Sized {
    /// Reconnects lost connections on schedule `r` instead of failing the run.
    fn with_reconnect(self, r: Reconnect) -> Self;
}

/// A request held while its connection is being set up again.
pub struct Parked(pub IoRequest);

// SAFETY: the request's buffer belongs to the worker that owns the engine holding
// it and is touched by nothing else until the request completes; the engine, and
// the request with it, only ever moves between threads as a whole.
unsafe impl Send for Parked {}

/// A failed completion for a request whose connection is gone.
pub fn aborted(tag: u64) -> Completion {
    Completion::reaped(tag, -(libc::ECONNABORTED as i64))
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

    /// One turn at `now` on schedule `r`: an attempt under way is judged by
    /// `judge` (or failed by what servicing it found, `broken`), given up once its
    /// time is over; with none under way, the next is started with `start` when due.
    /// A failed attempt schedules the next, or ends the window.
    pub fn step(
        &mut self,
        now: u64,
        r: &Reconnect,
        words: Words,
        start: impl FnOnce() -> Result<C, String>,
        judge: impl FnOnce(&C) -> Attempt,
        orphans: &mut Vec<Completion>,
    ) -> Step {
        let due = now >= self.attempts.next_ns;
        let why = match &self.pending {
            Some(_) if self.broken.is_some() => self.broken.take().unwrap_or_default(),
            Some(p) => match judge(p) {
                Attempt::Ready => return Step::Ready,
                Attempt::Failed(e) => format!("{}: {e}", words.retrying),
                Attempt::Pending if due => format!("{}: {}", words.retrying, words.timed_out),
                Attempt::Pending => return Step::Wait,
            },
            None if due => {
                self.attempts.start(now, r);
                match start() {
                    Ok(p) => {
                        self.pending = Some(p);
                        return Step::Wait;
                    }
                    Err(e) => format!("{}: {e}", words.retrying),
                }
            }
            None => return Step::Wait,
        };
        match self.failed(now, why, r, orphans) {
            None => Step::Wait,
            Some(summary) => Step::GaveUp(summary),
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

/// A 512-byte read of target 0 with `tag` and no buffer, for the engines' tests.
#[cfg(test)]
pub(crate) fn req(tag: u64) -> IoRequest {
    IoRequest::plain(
        crate::plan::model::Op::Read,
        0,
        512,
        std::ptr::null_mut(),
        tag,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORDS: Words = Words {
        retrying: "reconnecting",
        timed_out: "no answer in time",
    };
    const S: u64 = 1_000_000_000;

    #[test]
    fn a_step_starts_judges_times_out_and_gives_up_on_schedule() {
        let r = Reconnect::default();
        let mut orphans = Vec::new();
        let mut retry: Retry<u32> = Retry::new(0, "reset");
        retry.parked.push(Parked(req(7)));
        let pending = |_: &u32| Attempt::Pending;
        // The first attempt starts at once and is under way.
        let step = retry.step(0, &r, WORDS, || Ok(1), pending, &mut orphans);
        assert_eq!(
            (step, retry.pending, retry.attempts.tries),
            (Step::Wait, Some(1), 1)
        );
        // Past its 1 s it failed; the next waits 100 ms, then starts.
        let step = retry.step(S, &r, WORDS, || Ok(2), pending, &mut orphans);
        assert_eq!((step, retry.pending), (Step::Wait, None));
        assert!(retry.attempts.last_error.contains("no answer in time"));
        assert_eq!(retry.attempts.next_ns, S + 100_000_000);
        let step = retry.step(S + 100_000_000, &r, WORDS, || Ok(2), pending, &mut orphans);
        assert_eq!((step, retry.pending), (Step::Wait, Some(2)));
        // A failure the service found counts before the judge is asked.
        retry.broken = Some("reconnecting: refused".into());
        let ready = |_: &u32| Attempt::Ready;
        let step = retry.step(S + 200_000_000, &r, WORDS, || Ok(3), ready, &mut orphans);
        assert_eq!(step, Step::Wait);
        assert_eq!(retry.attempts.last_error, "reconnecting: refused");
        // A start that fails at once; past the 5 s window the parked request fails.
        let refused = || Err("refused".to_string());
        let step = retry.step(5 * S, &r, WORDS, refused, ready, &mut orphans);
        let Step::GaveUp(summary) = step else {
            panic!("{step:?}")
        };
        assert!(
            summary.starts_with("3 reconnect attempts in 5.0 s"),
            "{summary}"
        );
        assert_eq!(orphans.len(), 1);
        assert_eq!(
            (orphans[0].tag, orphans[0].result),
            (7, -(libc::ECONNABORTED as i64))
        );
    }

    #[test]
    fn a_ready_attempt_is_ready() {
        let mut retry: Retry<u32> = Retry::new(0, "reset");
        let r = Reconnect::default();
        let mut orphans = Vec::new();
        let judge = |_: &u32| Attempt::Ready;
        assert_eq!(
            retry.step(0, &r, WORDS, || Ok(1), judge, &mut orphans),
            Step::Wait
        );
        assert_eq!(
            retry.step(1, &r, WORDS, || Ok(2), judge, &mut orphans),
            Step::Ready
        );
        assert!(orphans.is_empty());
    }
}
