//! What a worker hands over at each interval boundary: counters and histograms per
//! workload and direction. Workers fill their own snapshot with no sharing; the
//! collector merges snapshots with `+=`. This is the only traffic between a worker and
//! the rest of the program while a run is going, once per interval.

use super::histogram::LatencyHistogram;
use crate::result::ErrorSample;
use std::ops::AddAssign;

/// Counters for one direction of one workload.
#[derive(Debug, Clone, Default)]
pub struct OpStats {
    pub ios: u64,
    pub bytes: u64,
    pub errors: u64,
    /// Requests that found nothing to act on (`engine::NOTHING_TO_DO`).
    pub skipped: u64,
    /// Latency from the intended issue time (the application's view).
    pub lat: LatencyHistogram,
    /// Service time from the actual submission; recorded only in open loop, where it
    /// differs from `lat`.
    pub svc: Option<LatencyHistogram>,
}

impl OpStats {
    pub fn new(open_loop: bool) -> Self {
        OpStats {
            svc: open_loop.then(LatencyHistogram::new),
            ..Default::default()
        }
    }

    /// The service-time histogram (the latency one in closed loop).
    pub fn service(&self) -> &LatencyHistogram {
        self.svc.as_ref().unwrap_or(&self.lat)
    }

    /// Summed service time, for average queue depth by Little's law.
    pub fn service_sum_ns(&self) -> u128 {
        self.service().sum_ns()
    }
}

impl AddAssign<&OpStats> for OpStats {
    fn add_assign(&mut self, o: &OpStats) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.errors += o.errors;
        self.skipped += o.skipped;
        self.lat += &o.lat;
        match (&mut self.svc, &o.svc) {
            (Some(a), Some(b)) => *a += b,
            (None, Some(b)) => self.svc = Some(b.clone()),
            _ => {}
        }
    }
}

/// Counters per direction, indexed by [`crate::plan::model::Op::index`]: read,
/// write, trim.
pub type DirStats = [OpStats; crate::plan::model::Op::COUNT];

/// Empty counters for every direction.
pub fn dir_stats(open_loop: bool) -> DirStats {
    std::array::from_fn(|_| OpStats::new(open_loop))
}

/// Read, write and trim counters of one workload.
#[derive(Debug, Clone, Default)]
pub struct WorkloadStats {
    /// Indexed by [`crate::plan::model::Op::index`].
    pub ops: DirStats,
    /// Open loop only: how late each I/O was issued against its intended time.
    pub lag: Option<LatencyHistogram>,
    /// Flushes (fsync/fdatasync) issued every N writes: counted apart, since a flush
    /// moves no data of its own. `lat` is the flush call's duration.
    pub flush: OpStats,
}

impl WorkloadStats {
    pub fn new(open_loop: bool) -> Self {
        WorkloadStats {
            ops: dir_stats(open_loop),
            lag: open_loop.then(LatencyHistogram::new),
            flush: OpStats::default(),
        }
    }

    /// Empties every counter and histogram, keeping their allocations.
    pub fn reset(&mut self) {
        for o in &mut self.ops {
            o.ios = 0;
            o.bytes = 0;
            o.errors = 0;
            o.skipped = 0;
            o.lat.reset();
            if let Some(s) = o.svc.as_mut() {
                s.reset();
            }
        }
        if let Some(l) = self.lag.as_mut() {
            l.reset();
        }
        self.flush.ios = 0;
        self.flush.errors = 0;
        self.flush.lat.reset();
    }

    /// Every direction together.
    pub fn combined(&self) -> OpStats {
        let mut all = self.ops[0].clone();
        for o in &self.ops[1..] {
            all += o;
        }
        all
    }
}

impl AddAssign<&WorkloadStats> for WorkloadStats {
    fn add_assign(&mut self, o: &WorkloadStats) {
        for (a, b) in self.ops.iter_mut().zip(&o.ops) {
            *a += b;
        }
        self.flush += &o.flush;
        match (&mut self.lag, &o.lag) {
            (Some(a), Some(b)) => *a += b,
            (None, Some(b)) => self.lag = Some(b.clone()),
            _ => {}
        }
    }
}

/// One worker's contribution to one interval.
#[derive(Debug)]
pub struct Snapshot {
    pub worker: usize,
    /// Interval index (0-based, warm-up intervals included).
    pub index: u64,
    /// Monotonic ns at which the worker closed this snapshot.
    pub end_ns: u64,
    /// The worker has stopped; this is its last snapshot.
    pub last: bool,
    /// Per workload of the run, in plan order.
    pub workloads: Vec<WorkloadStats>,
    pub error_samples: Vec<ErrorSample>,
    /// A whole-engine failure that ended this worker.
    pub fatal: Option<String>,
    /// Verification counts (in the worker's last snapshot).
    pub verify: crate::result::VerifyResult,
    /// Waiting for open-loop intended times.
    pub pacing: crate::stats::pacing::PacingStats,
    /// Per connection, indexed target × connections per target + connection.
    pub connections: Vec<ConnStats>,
    /// What happened to connections (and timed-out I/Os) in this interval.
    pub events: Vec<EventRecord>,
    /// Per path of a multipath target, in path order (empty otherwise).
    pub paths: Vec<crate::stats::paths::PathSample>,
    /// The worker thread's CPU time (user + system) since its previous snapshot.
    pub cpu_ns: u64,
}

/// Counters of one connection to a target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnStats {
    pub ios: u64,
    pub bytes: u64,
    /// Failed I/Os, timeouts included.
    pub errors: u64,
    /// I/Os that passed the I/O timeout.
    pub timeouts: u64,
    /// The CPU time of the worker that drove it, its share by I/Os ([`share_cpu`]).
    pub cpu_ns: u64,
}

impl AddAssign<&ConnStats> for ConnStats {
    fn add_assign(&mut self, o: &ConnStats) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.errors += o.errors;
        self.timeouts += o.timeouts;
        self.cpu_ns += o.cpu_ns;
    }
}

/// Splits one worker's CPU time of an interval over the connections it drove, in
/// proportion to their I/Os: within one worker every I/O is taken to cost the same,
/// so each connection's CPU per I/O is its worker's. An interval in which the
/// worker's connections completed nothing (a reconnect, a stall) attributes nothing;
/// that CPU stays in the run's and the thread's figures only.
pub fn share_cpu(conns: &mut [ConnStats], cpu_ns: u64) {
    let ios: u64 = conns.iter().map(|c| c.ios).sum();
    if ios == 0 {
        return;
    }
    for c in conns.iter_mut().filter(|c| c.ios > 0) {
        c.cpu_ns = (u128::from(cpu_ns) * u128::from(c.ios) / u128::from(ios)) as u64;
    }
}

/// An engine or worker event, as a worker hands it over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRecord {
    /// Clock reading when it happened.
    pub at_ns: u64,
    /// Connection index, as in [`Snapshot::connections`].
    pub conn: u32,
    /// `down`, `up`, `timeout` or `reissue`.
    pub kind: &'static str,
    pub detail: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(ios: u64) -> ConnStats {
        ConnStats {
            ios,
            ..Default::default()
        }
    }

    #[test]
    fn a_workers_cpu_is_split_over_its_connections_by_ios() {
        let mut c = [conn(300), conn(0), conn(100)];
        share_cpu(&mut c, 4_000);
        assert_eq!(c.map(|c| c.cpu_ns), [3_000, 0, 1_000]);
        // Each connection's CPU per I/O is the worker's: 10 ns.
        assert_eq!(c[0].cpu_ns / c[0].ios, c[2].cpu_ns / c[2].ios);
    }

    #[test]
    fn an_interval_without_ios_attributes_no_cpu() {
        let mut c = [conn(0), conn(0)];
        share_cpu(&mut c, 4_000);
        assert_eq!(c.map(|c| c.cpu_ns), [0, 0]);
    }
}
