//! Interval boundaries of a run, shared by every worker so their snapshots line up:
//! warm-up is cut into intervals of the normal length (the last one shorter, so the
//! measured part starts exactly when warm-up ends), then measured intervals follow.

/// Boundaries of a run's intervals.
#[derive(Debug, Clone, Copy)]
pub struct IntervalClock {
    /// Monotonic ns at which the run started.
    pub start_ns: u64,
    pub warmup_ns: u64,
    pub interval_ns: u64,
}

impl IntervalClock {
    /// A run's clock before its start is known: it counts from 0.
    pub fn unstarted(run: &crate::plan::model::RunSpec) -> Self {
        IntervalClock {
            start_ns: 0,
            warmup_ns: run.warmup_ns,
            interval_ns: run.interval_ns,
        }
    }

    /// Intervals that fall inside warm-up.
    pub fn warmup_intervals(&self) -> u64 {
        self.warmup_ns.div_ceil(self.interval_ns)
    }

    /// End of interval `k`, in ns since the run started.
    pub fn end_rel_ns(&self, k: u64) -> u64 {
        let nw = self.warmup_intervals();
        if k < nw {
            ((k + 1) * self.interval_ns).min(self.warmup_ns)
        } else {
            self.warmup_ns + (k - nw + 1) * self.interval_ns
        }
    }

    /// End of interval `k` on the monotonic clock.
    pub fn boundary_ns(&self, k: u64) -> u64 {
        self.start_ns + self.end_rel_ns(k)
    }

    pub fn is_warmup(&self, k: u64) -> bool {
        k < self.warmup_intervals()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warmup_then_measured() {
        let c = IntervalClock {
            start_ns: 0,
            warmup_ns: 2_500,
            interval_ns: 1_000,
        };
        assert_eq!(c.warmup_intervals(), 3);
        assert_eq!(c.end_rel_ns(0), 1_000);
        assert_eq!(c.end_rel_ns(2), 2_500);
        assert_eq!(c.end_rel_ns(3), 3_500);
        assert!(c.is_warmup(2));
        assert!(!c.is_warmup(3));
        let none = IntervalClock {
            start_ns: 10,
            warmup_ns: 0,
            interval_ns: 1_000,
        };
        assert_eq!(none.warmup_intervals(), 0);
        assert_eq!(none.boundary_ns(0), 1_010);
    }
}
