//! Per-path figures of a multipath run: the collector adds every worker's path
//! samples of an interval into one [`IntervalPath`] per path, and the intervals
//! into the run's [`PathResult`]s. For a kernel dm-multipath device the samples
//! come from sysfs instead ([`DmPaths`]), read when each interval closes. It also
//! splits the measured intervals' latency into the failover window and the rest
//! for the run's [`FailoverCost`].

use crate::engine::multipath::path::{PathSample, PathState};
use crate::result::paths::{FailoverCost, IntervalPath, PathResult};
use crate::result::Interval;
use crate::stats::histogram::LatencyHistogram;
use crate::target::dm_paths::DmPaths;

/// One path's sum over the workers, for one interval.
#[derive(Debug, Clone, Default)]
struct Acc {
    ios: u64,
    bytes: u64,
    errors: u64,
    reissued: u64,
    service: LatencyHistogram,
    /// Workers that saw it down / up (standby otherwise).
    down: bool,
    up: bool,
}

/// The per-path figures of one run.
#[derive(Debug, Default)]
pub struct PathTally {
    /// `(name, uri)` per path; empty for a target with one path.
    names: Vec<(String, String)>,
    interval: Vec<Acc>,
    totals: Vec<PathResult>,
    /// A kernel dm-multipath target: its paths' sysfs counters.
    dm: Option<DmPaths>,
    failover: FailoverTally,
}

/// Latency (from the intended time) of the measured intervals: those in the
/// failover window (a path down, or a path event) and the others.
#[derive(Debug, Default)]
struct FailoverTally {
    window: LatencyHistogram,
    normal: LatencyHistogram,
    intervals: u64,
    window_s: f64,
}

/// Whether an interval belongs to the failover window: some path was down at its
/// end, or something happened to a path during it.
fn in_failover(iv: &Interval) -> bool {
    iv.paths.iter().any(|p| p.state == "down")
        || iv
            .events
            .iter()
            .any(|e| matches!(e.kind.as_str(), "down" | "timeout" | "reissue"))
}

impl PathTally {
    /// `paths` = `(uri, device identifier)` per path, path 0 first.
    pub fn new(paths: &[(String, Option<String>)]) -> Self {
        PathTally {
            names: paths
                .iter()
                .enumerate()
                .map(|(i, (u, _))| (format!("p{i}"), u.clone()))
                .collect(),
            interval: vec![Acc::default(); paths.len()],
            totals: paths
                .iter()
                .enumerate()
                .map(|(i, (u, id))| PathResult {
                    name: format!("p{i}"),
                    uri: u.clone(),
                    state: "up".into(),
                    device_id: id.clone(),
                    ..Default::default()
                })
                .collect(),
            dm: None,
            failover: FailoverTally::default(),
        }
    }

    /// The paths of a kernel dm-multipath device, sampled from sysfs per interval
    /// (named after the slaves; no service time: sysfs has no percentiles).
    pub fn for_dm(dm: DmPaths) -> Self {
        let described = dm.described();
        let uris: Vec<(String, Option<String>)> =
            described.iter().map(|(_, u)| (u.clone(), None)).collect();
        let mut t = Self::new(&uris);
        for ((n, r), (name, _)) in t.names.iter_mut().zip(&mut t.totals).zip(described) {
            n.0 = name.clone();
            r.name = name;
        }
        t.dm = Some(dm);
        t
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Adds one worker's samples of the current interval.
    pub fn add(&mut self, samples: &[PathSample]) {
        for (a, s) in self.interval.iter_mut().zip(samples) {
            a.ios += s.counts.ios;
            a.bytes += s.counts.bytes;
            a.errors += s.counts.errors;
            a.reissued += s.counts.reissued;
            a.service += &s.service;
            match s.state {
                PathState::Down => a.down = true,
                PathState::Up => a.up = true,
                PathState::Standby => {}
            }
        }
    }

    /// Closes the interval of `duration_s`: its per-path entries. `measured` adds it
    /// to the run's totals (not during warm-up).
    pub fn close(&mut self, duration_s: f64, measured: bool) -> Vec<IntervalPath> {
        if let Some(dm) = self.dm.as_mut() {
            for (a, d) in self.interval.iter_mut().zip(dm.sample()) {
                a.ios += d.ios;
                a.bytes += d.bytes;
                if d.up {
                    a.up = true;
                } else {
                    a.down = true;
                }
            }
        }
        let mut out = Vec::with_capacity(self.interval.len());
        for (a, t) in self.interval.iter_mut().zip(self.totals.iter_mut()) {
            let state = if a.down {
                "down"
            } else if a.up {
                "up"
            } else {
                "standby"
            };
            out.push(IntervalPath {
                ios: a.ios,
                mbps: if duration_s > 0.0 {
                    a.bytes as f64 / duration_s / 1e6
                } else {
                    0.0
                },
                service_us_p99: if a.service.count() > 0 {
                    a.service.percentile_ns(99.0) as f64 / 1e3
                } else {
                    0.0
                },
                errors: a.errors,
                state: state.into(),
            });
            if measured {
                t.ios += a.ios;
                t.bytes += a.bytes;
                t.errors += a.errors;
                t.reissued += a.reissued;
            }
            t.state = state.into();
            *a = Acc::default();
        }
        out
    }

    /// The run's per-path totals.
    pub fn results(&self) -> Vec<PathResult> {
        self.totals.clone()
    }

    /// Adds a measured interval's latency (`lat`, all I/Os of `iv`) to the failover
    /// window or to the normal share.
    pub fn add_latency(&mut self, iv: &Interval, lat: &LatencyHistogram) {
        if self.names.is_empty() {
            return;
        }
        let f = &mut self.failover;
        if in_failover(iv) {
            f.window += lat;
            f.intervals += 1;
            f.window_s += iv.duration_s;
        } else {
            f.normal += lat;
        }
    }

    /// What the failovers cost (`None` for a target with one path).
    pub fn failover_cost(&self) -> Option<FailoverCost> {
        if self.names.is_empty() {
            return None;
        }
        let f = &self.failover;
        let mut normal = f.normal.clone();
        if normal.count() == 0 {
            normal += &f.window;
        }
        let p99_ns = normal.percentile_ns(99.0);
        let (over, extra_ns) = f.window.excess_over_ns(p99_ns);
        Some(FailoverCost {
            intervals: f.intervals,
            window_s: f.window_s,
            normal_p99_us: p99_ns as f64 / 1e3,
            normal_max_us: normal.max_ns() as f64 / 1e3,
            window_ios: f.window.count(),
            ios_over_p99: over,
            extra_ms: extra_ns as f64 / 1e6,
            max_us: f.window.max_ns() as f64 / 1e3,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::multipath::path::PathCounts;

    fn sample(ios: u64, state: PathState) -> PathSample {
        let mut service = LatencyHistogram::new();
        for _ in 0..ios {
            service.record(100_000);
        }
        PathSample {
            counts: PathCounts {
                ios,
                bytes: ios * 4096,
                errors: 0,
                reissued: 0,
            },
            service,
            state,
        }
    }

    #[test]
    fn workers_add_up_and_a_path_down_anywhere_is_down() {
        let mut t = PathTally::new(&[("nbd://a".into(), None), ("nbd://b".into(), None)]);
        t.add(&[sample(10, PathState::Up), sample(5, PathState::Up)]);
        t.add(&[sample(10, PathState::Up), sample(0, PathState::Down)]);
        let iv = t.close(0.5, true);
        assert_eq!((iv[0].ios, iv[1].ios), (20, 5));
        assert_eq!((iv[0].state.as_str(), iv[1].state.as_str()), ("up", "down"));
        assert!((iv[0].mbps - 20.0 * 4096.0 / 0.5 / 1e6).abs() < 1e-9);
        assert!(
            (iv[0].service_us_p99 - 100.0).abs() < 2.0,
            "{}",
            iv[0].service_us_p99
        );
        t.add(&[sample(3, PathState::Up), sample(0, PathState::Standby)]);
        t.close(0.5, false);
        let r = t.results();
        assert_eq!((r[0].ios, r[1].ios), (20, 5));
        assert_eq!((r[0].name.as_str(), r[1].uri.as_str()), ("p0", "nbd://b"));
        assert_eq!(r[1].state, "standby");
    }

    fn lat(ms: &[u64]) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for &m in ms {
            h.record(m * 1_000_000);
        }
        h
    }

    fn interval(p1_state: &str, event: Option<&str>) -> Interval {
        Interval {
            duration_s: 0.5,
            paths: vec![
                IntervalPath {
                    state: "up".into(),
                    ..Default::default()
                },
                IntervalPath {
                    state: p1_state.into(),
                    ..Default::default()
                },
            ],
            events: event
                .map(|k| crate::result::RunEvent {
                    kind: k.into(),
                    path: 1,
                    ..Default::default()
                })
                .into_iter()
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn failover_cost_counts_the_ios_caught_above_the_normal_p99() {
        let mut t = PathTally::new(&[("nbd://a".into(), None), ("nbd://b".into(), None)]);
        // Normal intervals: 1 ms, 200 I/Os each.
        for _ in 0..4 {
            t.add_latency(&interval("up", None), &lat(&[1; 200]));
        }
        // The timeout interval: 3 I/Os waited ~1 s, the rest were normal.
        let mut caught = vec![1; 100];
        caught.extend([1000, 1001, 1002]);
        t.add_latency(&interval("down", Some("timeout")), &lat(&caught));
        // Path 1 still down, nothing slow; then the path is up again (an `up` event
        // alone is not a failure).
        t.add_latency(&interval("down", None), &lat(&[1; 50]));
        t.add_latency(&interval("up", Some("up")), &lat(&[1; 50]));
        let c = t.failover_cost().unwrap();
        assert_eq!((c.intervals, c.window_ios, c.ios_over_p99), (2, 153, 3));
        assert!((c.window_s - 1.0).abs() < 1e-9);
        assert!((c.normal_p99_us - 1000.0).abs() < 2.0, "{c:?}");
        assert!((c.max_us - 1_002_000.0).abs() < 1.0, "{c:?}");
        // (1000 + 1001 + 1002) − 3 × 1 ms beyond the normal p99, within 0.1 %.
        assert!((c.extra_ms - 3000.0).abs() < 3.0, "{c:?}");
        // One path: no cost at all.
        assert!(PathTally::new(&[]).failover_cost().is_none());
    }
}
