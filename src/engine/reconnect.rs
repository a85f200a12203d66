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

/// The reconnect schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reconnect {
    /// How long after the loss the engine keeps trying.
    pub window_ns: u64,
    /// Pause before the second attempt (the first starts at once); doubled after
    /// every failure, up to `max_delay_ns`.
    pub first_delay_ns: u64,
    pub max_delay_ns: u64,
    /// Longest one attempt (connect and handshake or login) may take.
    pub attempt_ns: u64,
}

impl Default for Reconnect {
    fn default() -> Self {
        Reconnect {
            window_ns: 5_000_000_000,
            first_delay_ns: 100_000_000,
            max_delay_ns: 1_000_000_000,
            attempt_ns: 1_000_000_000,
        }
    }
}

/// One lost connection's progress through the schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempts {
    /// When the connection was lost.
    pub since_ns: u64,
    /// Attempts started so far.
    pub tries: u32,
    /// When the next attempt may start (while none is under way), or when the one
    /// under way is given up.
    pub next_ns: u64,
    /// Why the last attempt failed (or why the connection was lost).
    pub last_error: String,
}

impl Attempts {
    /// A connection lost at `now`: the first attempt may start at once.
    pub fn new(now: u64, why: String) -> Self {
        Attempts {
            since_ns: now,
            tries: 0,
            next_ns: now,
            last_error: why,
        }
    }

    /// An attempt starts at `now`: it must succeed by the returned deadline.
    pub fn start(&mut self, now: u64, r: &Reconnect) -> u64 {
        self.tries += 1;
        self.next_ns = now
            + r.attempt_ns
                .min(self.window_end(r).saturating_sub(now))
                .max(1);
        self.next_ns
    }

    /// The attempt under way failed at `now`: `true` with `next_ns` set to the
    /// next attempt, `false` when the window is over.
    pub fn failed(&mut self, now: u64, why: String, r: &Reconnect) -> bool {
        self.last_error = why;
        let shift = self.tries.saturating_sub(1).min(20);
        let delay = r
            .first_delay_ns
            .saturating_mul(1 << shift)
            .min(r.max_delay_ns);
        self.next_ns = now + delay;
        self.next_ns < self.window_end(r)
    }

    fn window_end(&self, r: &Reconnect) -> u64 {
        self.since_ns + r.window_ns
    }

    /// "3 attempts in 5.0 s failed (last: connection refused)", for the message
    /// that ends the run.
    pub fn summary(&self, now: u64) -> String {
        format!(
            "{} reconnect attempt{} in {:.1} s failed (last: {})",
            self.tries,
            if self.tries == 1 { "" } else { "s" },
            now.saturating_sub(self.since_ns) as f64 / 1e9,
            self.last_error
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_back_off_and_end_with_the_window() {
        let r = Reconnect::default();
        let mut a = Attempts::new(0, "reset".into());
        assert_eq!(a.next_ns, 0);
        let mut starts = Vec::new();
        let mut now = 0;
        loop {
            starts.push(now);
            a.start(now, &r);
            // Each attempt fails at once (a refused connection).
            if !a.failed(now, "refused".into(), &r) {
                break;
            }
            now = a.next_ns;
        }
        let ms: Vec<u64> = starts.iter().map(|n| n / 1_000_000).collect();
        assert_eq!(ms, [0, 100, 300, 700, 1500, 2500, 3500, 4500]);
        assert_eq!(a.tries, 8);
        assert!(a
            .summary(5_000_000_000)
            .starts_with("8 reconnect attempts in 5.0 s"));
        // An attempt that hangs is cut at attempt_ns, and never past the window.
        let mut a = Attempts::new(0, "stalled".into());
        assert_eq!(a.start(0, &r), 1_000_000_000);
        assert_eq!(a.start(4_800_000_000, &r), 5_000_000_000);
    }
}
