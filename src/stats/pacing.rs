//! Waiting counters of open-loop pacing: how long a worker spun or slept waiting for
//! intended issue times, and how late its sleeps woke. The pacer in `run::pacing`
//! fills them; snapshots carry them to the collector and the result.

use super::histogram::LatencyHistogram;

/// Waiting counters of one worker over one interval.
#[derive(Debug, Clone, Default)]
pub struct PacingStats {
    /// Time spent busy-waiting for an intended time.
    pub spin_ns: u64,
    /// Time spent asleep waiting for one.
    pub sleep_ns: u64,
    /// How late sleeps woke against the time asked for.
    pub wake_late: LatencyHistogram,
    /// The margin at the end of the interval; merging keeps the largest (over workers
    /// and, in the run's totals, over intervals).
    pub margin_ns: u64,
}

impl std::ops::AddAssign<&PacingStats> for PacingStats {
    fn add_assign(&mut self, o: &PacingStats) {
        self.spin_ns += o.spin_ns;
        self.sleep_ns += o.sleep_ns;
        self.wake_late += &o.wake_late;
        self.margin_ns = self.margin_ns.max(o.margin_ns);
    }
}
