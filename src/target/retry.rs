//! Trying again: the schedule a lost connection is set up again on (network engines,
//! `engine::reconnect`) and that a start-up probe of a target is repeated on under
//! `--on-error continue` or `retry=N`. Attempts start at once, then after a pause that
//! doubles with every failure up to a ceiling, for a bounded window; the summary of a
//! window that closed names the attempts and the last error. It lives with the
//! targets, below the engines, because opening a target is the first thing that can
//! need it.

use std::time::Duration;

use super::TargetError;

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

/// Opens (or probes) a target with `attempt`, trying again on the reconnect schedule
/// while it fails for want of the server (`TargetError::Unavailable`: no connection,
/// a failed login, a read of the first bytes that failed). Any other error, and the
/// last failure once the window has closed, is returned with the attempts named.
/// `retried` hears of an open that needed more than one attempt.
pub fn open_again<T>(
    r: &Reconnect,
    mut attempt: impl FnMut() -> Result<T, TargetError>,
    mut retried: impl FnMut(String),
) -> Result<T, TargetError> {
    let now = || crate::clock::now_ns();
    let mut tries = Attempts::new(now(), String::new());
    loop {
        tries.start(now(), r);
        let why = match attempt() {
            Ok(t) => {
                if tries.tries > 1 {
                    retried(format!(
                        "opened at attempt {} after {:.1} s (last failure: {})",
                        tries.tries,
                        now().saturating_sub(tries.since_ns) as f64 / 1e9,
                        tries.last_error
                    ));
                }
                return Ok(t);
            }
            Err(TargetError::Unavailable { uri, msg }) => (uri, msg),
            Err(other) => return Err(other),
        };
        let (uri, msg) = why;
        if !tries.failed(now(), msg.clone(), r) {
            return Err(TargetError::Unavailable {
                uri,
                msg: format!("{msg}; {}", tries.summary(now())),
            });
        }
        std::thread::sleep(Duration::from_nanos(tries.next_ns.saturating_sub(now())));
    }
}

/// Runs one start-up `attempt` of the network target `uri` (a probe or an open: a
/// connection, a handshake or login, the read of the first bytes) on a thread of its
/// own and waits for it at most `limit_ns`. A server whose kernel accepts the
/// connection while the server itself is stopped, or a link that drops every packet,
/// would otherwise hold the run before its first I/O for as long as TCP keeps trying
/// (minutes), or for ever. Past the deadline the attempt is left to end on its own
/// thread (it holds nothing the run needs; the run is ending) and the error names the
/// target and the deadline. Not tried again by [`open_again`]: a target that failed
/// is worth another attempt, one that never answered already had its time.
pub fn answered_within<T: Send + 'static>(
    uri: &str,
    limit_ns: u64,
    attempt: impl FnOnce() -> Result<T, TargetError> + Send + 'static,
) -> Result<T, TargetError> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("ioscope-open".into())
        .spawn(move || {
            // The receiver is gone only when the deadline passed: nothing to tell.
            let _ = tx.send(attempt());
        });
    let no_answer = |msg: String| TargetError::NoAnswer {
        uri: uri.to_string(),
        msg,
    };
    spawned.map_err(|e| no_answer(format!("cannot start the opening thread: {e}")))?;
    match rx.recv_timeout(Duration::from_nanos(limit_ns)) {
        Ok(r) => r,
        Err(_) => Err(no_answer(format!(
            "no answer within {:.1} s (the start-up deadline: --io-timeout + 1 s, else {:.0} s)",
            limit_ns as f64 / 1e9,
            STARTUP_LIMIT_NS as f64 / 1e9
        ))),
    }
}

/// How long a network target's start-up probe may take without `--io-timeout`.
pub const STARTUP_LIMIT_NS: u64 = 10_000_000_000;

/// The start-up deadline of a network target's probe: `--io-timeout` (a per-I/O
/// deadline) plus a second for the connection, handshake or login and its
/// negotiation around the I/O, else [`STARTUP_LIMIT_NS`].
pub fn startup_limit_ns(io_timeout_ns: Option<u64>) -> u64 {
    io_timeout_ns.map_or(STARTUP_LIMIT_NS, |t| t.saturating_add(1_000_000_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attempt_past_its_deadline_is_no_answer_and_not_tried_again() {
        // Each attempt waits on a channel whose sender is held here until the end: a
        // server that never answers.
        let mut held = Vec::new();
        let t0 = std::time::Instant::now();
        let r: Result<(), _> = open_again(
            &Reconnect::default(),
            || {
                let (hold, wait) = std::sync::mpsc::channel::<()>();
                held.push(hold);
                answered_within("nbd://x", 50_000_000, move || {
                    let _ = wait.recv();
                    Ok(())
                })
            },
            |_| {},
        );
        let tries = held.len();
        drop(held);
        assert!(matches!(r, Err(TargetError::NoAnswer { .. })), "{r:?}");
        assert_eq!(tries, 1);
        // 50 ms deadline; the bound allows 2 s for a thread start on a loaded machine.
        assert!(t0.elapsed() < Duration::from_secs(2));
        let ok = answered_within("nbd://x", 1_000_000_000, || Ok(7));
        assert_eq!(ok.unwrap(), 7);
    }

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
