//! Waiting for the next intended issue time of an open-loop schedule.
//!
//! A worker with nothing in flight and nothing due must wait until the next I/O's
//! intended time. Sleeping costs a timer wake-up (a few microseconds of CPU here) and
//! wakes late by the host's wake-up latency; busy-waiting is exact but burns the core.
//! The [`Pacer`] sleeps until a margin before the intended time and busy-waits the
//! rest. With [`Pacing::Hybrid`] the margin is learned: it is the second-largest of
//! the last 256 wake-up latenesses of this thread (about their 99.5th percentile),
//! recomputed every 32 sleeps, so on a quiet host it shrinks to a few microseconds
//! within a fraction of a second and on a loaded one it grows, keeping jitter low in
//! both.
//!
//! The time spent busy-waiting is counted, so the result can say how much of the CPU
//! ioscope used was deliberate waiting and how much was work.

use crate::clock::{self, now_ns};
use crate::plan::model::Pacing;
pub use crate::stats::pacing::PacingStats;

/// The fixed margin of [`Pacing::Spin`].
const SPIN_MARGIN_NS: u64 = 100_000;
/// Where the learned margin starts, and its bounds.
const START_MARGIN_NS: u64 = 20_000;
const MIN_MARGIN_NS: u64 = 1_000;
const MAX_MARGIN_NS: u64 = 200_000;
/// Wake-up latenesses the learned margin is taken from.
const WINDOW: usize = 256;
/// The margin is recomputed after this many new samples.
const RELEARN_EVERY: usize = 32;
/// Rank from the top of the window that becomes the margin (1 = the largest).
const RANK: usize = 2;
/// Hybrid mode does not sleep for less than this: a wake-up costs about as much CPU.
const MIN_SLEEP_NS: u64 = 4_000;

/// One worker's waiting policy and its learned state.
#[derive(Debug)]
pub struct Pacer {
    mode: Pacing,
    margin_ns: u64,
    /// Ring of recent wake-up latenesses (hybrid only).
    recent_ns: Vec<u64>,
    next: usize,
    since_relearn: usize,
    pub stats: PacingStats,
}

impl Pacer {
    pub fn new(mode: Pacing) -> Self {
        Pacer {
            mode,
            margin_ns: match mode {
                Pacing::Spin => SPIN_MARGIN_NS,
                Pacing::Hybrid => START_MARGIN_NS,
                Pacing::Sleep => 0,
            },
            recent_ns: Vec::with_capacity(if mode == Pacing::Hybrid { WINDOW } else { 0 }),
            next: 0,
            since_relearn: 0,
            stats: PacingStats::default(),
        }
    }

    /// Hands over this interval's counters and starts new ones.
    pub fn take_stats(&mut self) -> PacingStats {
        let mut s = std::mem::take(&mut self.stats);
        s.margin_ns = self.margin_ns;
        s
    }

    /// Waits from `now` until `until_ns` (monotonic) and returns the time read after
    /// waiting; never returns before `until_ns` unless woken to check for a stop.
    pub fn wait_until(&mut self, now: u64, until_ns: u64) -> u64 {
        if until_ns <= now {
            return now;
        }
        if clock::is_virtual() {
            // Simulated time has no late wake-ups and nothing to spin for.
            clock::sleep_until(until_ns);
            self.stats.sleep_ns += until_ns - now;
            self.stats.wake_late.record(0);
            return now_ns();
        }
        let margin = self.margin_ns;
        let left = until_ns - now;
        let mut t = now;
        let sleep = match self.mode {
            Pacing::Sleep => true,
            Pacing::Spin | Pacing::Hybrid => left > margin + MIN_SLEEP_NS,
        };
        if sleep {
            let wake_at = until_ns - margin;
            clock::sleep_until(wake_at);
            t = now_ns();
            self.stats.sleep_ns += t - now;
            let late = t.saturating_sub(wake_at);
            self.stats.wake_late.record(late);
            if self.mode == Pacing::Hybrid {
                self.learn(late);
            }
            if self.mode == Pacing::Sleep {
                return t;
            }
        }
        let spin_from = t;
        while t < until_ns {
            std::hint::spin_loop();
            t = now_ns();
        }
        self.stats.spin_ns += t - spin_from;
        t
    }

    /// Adds a wake-up lateness to the window and, every few samples, takes the margin
    /// from the window's top ranks.
    fn learn(&mut self, late_ns: u64) {
        if self.recent_ns.len() < WINDOW {
            self.recent_ns.push(late_ns);
        } else {
            self.recent_ns[self.next] = late_ns;
            self.next = (self.next + 1) % WINDOW;
        }
        self.since_relearn += 1;
        if self.since_relearn < RELEARN_EVERY {
            return;
        }
        self.since_relearn = 0;
        let mut w = [0u64; WINDOW];
        let w = &mut w[..self.recent_ns.len()];
        w.copy_from_slice(&self.recent_ns);
        let k = w.len().saturating_sub(RANK);
        let (_, kth, _) = w.select_nth_unstable(k);
        self.margin_ns = (*kth).clamp(MIN_MARGIN_NS, MAX_MARGIN_NS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_returns_early() {
        for mode in [Pacing::Spin, Pacing::Hybrid, Pacing::Sleep] {
            let mut p = Pacer::new(mode);
            for gap in [0u64, 2_000, 50_000, 300_000] {
                let now = now_ns();
                let t = p.wait_until(now, now + gap);
                assert!(
                    t >= now + gap,
                    "{mode:?} returned {} ns early",
                    now + gap - t
                );
                assert!(now_ns() >= now + gap);
            }
        }
    }

    #[test]
    fn learned_margin_tracks_a_high_quantile() {
        let mut p = Pacer::new(Pacing::Hybrid);
        // Lateness uniform over 0..10 µs: the top ranks of 256 lie near 9.9 µs.
        let mut x: u64 = 12345;
        for _ in 0..1_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            p.learn((x >> 33) % 10_000);
        }
        assert!(
            (9_000..10_000).contains(&p.margin_ns),
            "margin {} ns",
            p.margin_ns
        );
        // A loaded host: late by 50 µs. The margin follows within one window.
        for _ in 0..WINDOW + RELEARN_EVERY {
            p.learn(50_000);
        }
        assert_eq!(p.margin_ns, 50_000);
        // Then the host gets quiet: the margin comes down to its floor of 1 µs.
        for _ in 0..WINDOW + RELEARN_EVERY {
            p.learn(500);
        }
        assert_eq!(p.margin_ns, MIN_MARGIN_NS);
    }

    #[test]
    fn spin_time_is_counted_and_sleep_mode_never_spins() {
        let mut p = Pacer::new(Pacing::Spin);
        let now = now_ns();
        p.wait_until(now, now + 30_000);
        let s = p.take_stats();
        assert!(s.spin_ns >= 25_000, "spin {}", s.spin_ns);
        let mut p = Pacer::new(Pacing::Sleep);
        let now = now_ns();
        p.wait_until(now, now + 300_000);
        let s = p.take_stats();
        assert_eq!(s.spin_ns, 0);
        assert!(s.sleep_ns >= 300_000);
        assert_eq!(s.wake_late.count(), 1);
    }
}
