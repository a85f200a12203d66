//! Path selection: which healthy path the next request goes to. Pure logic over a
//! snapshot of each path's load, with no engine or clock of its own, so every policy
//! is tested with exact counts.

use crate::plan::paths::{Failback, PathPolicy};

/// What a policy may know about one path when choosing.
#[derive(Debug, Clone, Copy, Default)]
pub struct PathLoad {
    /// The path answers and may take requests.
    pub usable: bool,
    /// Since when it has been usable (clock ns), for timed failback.
    pub up_since_ns: u64,
    /// Requests sent on it and not yet answered.
    pub outstanding_ios: u32,
    pub outstanding_bytes: u64,
    /// Recent mean service time (0 until the path has answered once).
    pub service_ns: u64,
}

/// Chooses paths for requests according to a [`PathPolicy`].
#[derive(Debug, Clone)]
pub struct Selector {
    policy: PathPolicy,
    failback: Failback,
    /// Round robin and failover: the path in use.
    current: Option<usize>,
    /// Round robin: requests left before switching.
    left: u32,
    /// Queue and service time: where the search for a tie starts, rotated so equal
    /// paths share the load.
    start: usize,
}

impl Selector {
    pub fn new(policy: PathPolicy, failback: Failback) -> Self {
        Selector {
            policy,
            failback,
            current: None,
            left: 0,
            start: 0,
        }
    }

    /// The path the next request of `len` bytes goes to, or `None` when no path is
    /// usable.
    pub fn pick(&mut self, paths: &[PathLoad], len: u32, now_ns: u64) -> Option<usize> {
        match self.policy {
            PathPolicy::RoundRobin { n } => self.round_robin(paths, n),
            PathPolicy::Failover => self.failover(paths, now_ns),
            PathPolicy::Queue => self.least(paths, |p| p.outstanding_ios as u128),
            PathPolicy::ServiceTime => self.least(paths, |p| {
                (p.outstanding_bytes + len as u64) as u128 * p.service_ns.max(1) as u128
            }),
        }
    }

    /// Whether path `i` is standing by (usable but not chosen by failover).
    pub fn is_standby(&self, paths: &[PathLoad], i: usize) -> bool {
        self.policy == PathPolicy::Failover && paths[i].usable && self.current != Some(i)
    }

    fn round_robin(&mut self, paths: &[PathLoad], n: u32) -> Option<usize> {
        let cur_ok = self.current.is_some_and(|c| paths[c].usable);
        if !cur_ok || self.left == 0 {
            let from = self.current.map_or(0, |c| c + 1);
            self.current = next_usable(paths, from);
            self.left = n;
        }
        let c = self.current?;
        self.left -= 1;
        Some(c)
    }

    fn failover(&mut self, paths: &[PathLoad], now_ns: u64) -> Option<usize> {
        let first = next_usable_from_zero(paths);
        let cur = self.current.filter(|&c| paths[c].usable);
        self.current = match (cur, first) {
            (None, f) => f,
            (Some(c), Some(f)) if f < c => {
                let back = match self.failback {
                    Failback::Immediate => true,
                    Failback::Manual => false,
                    Failback::AfterNs(d) => now_ns.saturating_sub(paths[f].up_since_ns) >= d,
                };
                Some(if back { f } else { c })
            }
            (Some(c), _) => Some(c),
        };
        self.current
    }

    fn least(&mut self, paths: &[PathLoad], cost: impl Fn(&PathLoad) -> u128) -> Option<usize> {
        let n = paths.len();
        let mut best: Option<(usize, u128)> = None;
        for k in 0..n {
            let i = (self.start + k) % n;
            if !paths[i].usable {
                continue;
            }
            let c = cost(&paths[i]);
            if best.map_or(true, |(_, b)| c < b) {
                best = Some((i, c));
            }
        }
        let (i, _) = best?;
        self.start = (i + 1) % n.max(1);
        Some(i)
    }
}

fn next_usable(paths: &[PathLoad], from: usize) -> Option<usize> {
    let n = paths.len();
    (0..n).map(|k| (from + k) % n).find(|&i| paths[i].usable)
}

fn next_usable_from_zero(paths: &[PathLoad]) -> Option<usize> {
    paths.iter().position(|p| p.usable)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(n: usize) -> Vec<PathLoad> {
        vec![
            PathLoad {
                usable: true,
                ..Default::default()
            };
            n
        ]
    }

    fn counts(sel: &mut Selector, paths: &[PathLoad], ios: usize) -> Vec<usize> {
        let mut c = vec![0; paths.len()];
        for _ in 0..ios {
            c[sel.pick(paths, 4096, 0).unwrap()] += 1;
        }
        c
    }

    #[test]
    fn rr1_alternates() {
        let p = up(2);
        let mut s = Selector::new(PathPolicy::RoundRobin { n: 1 }, Failback::Immediate);
        let seq: Vec<usize> = (0..6).map(|_| s.pick(&p, 4096, 0).unwrap()).collect();
        assert_eq!(seq, [0, 1, 0, 1, 0, 1]);
        assert_eq!(counts(&mut s, &p, 1000), [500, 500]);
    }

    #[test]
    fn rr1000_switches_in_blocks_of_1000() {
        let p = up(2);
        let mut s = Selector::new(PathPolicy::RoundRobin { n: 1000 }, Failback::Immediate);
        let seq: Vec<usize> = (0..4000).map(|_| s.pick(&p, 4096, 0).unwrap()).collect();
        for (block, chunk) in seq.chunks(1000).enumerate() {
            assert!(chunk.iter().all(|&x| x == block % 2), "block {block}");
        }
    }

    #[test]
    fn rr_skips_a_down_path_and_takes_it_back() {
        let mut p = up(3);
        let mut s = Selector::new(PathPolicy::RoundRobin { n: 1 }, Failback::Immediate);
        p[1].usable = false;
        assert_eq!(counts(&mut s, &p, 10), [5, 0, 5]);
        p[1].usable = true;
        assert_eq!(counts(&mut s, &p, 9), [3, 3, 3]);
        p.iter_mut().for_each(|x| x.usable = false);
        assert_eq!(s.pick(&p, 4096, 0), None);
    }

    #[test]
    fn failover_puts_everything_on_path_0() {
        let p = up(2);
        let mut s = Selector::new(PathPolicy::Failover, Failback::Immediate);
        assert_eq!(counts(&mut s, &p, 1000), [1000, 0]);
        assert!(s.is_standby(&p, 1) && !s.is_standby(&p, 0));
    }

    #[test]
    fn failover_moves_and_fails_back_per_rule() {
        for (fb, back_at) in [
            (Failback::Immediate, Some(0)),
            (Failback::Manual, None),
            (Failback::AfterNs(1000), Some(1000)),
        ] {
            let mut p = up(2);
            let mut s = Selector::new(PathPolicy::Failover, fb);
            assert_eq!(s.pick(&p, 1, 0), Some(0));
            p[0].usable = false;
            assert_eq!(s.pick(&p, 1, 0), Some(1), "{fb:?}");
            p[0].usable = true;
            p[0].up_since_ns = 5000;
            let now_then = |dt: u64| 5000 + dt;
            assert_eq!(
                s.pick(&p, 1, now_then(0)),
                Some(if back_at == Some(0) { 0 } else { 1 }),
                "{fb:?}"
            );
            if let Some(d) = back_at {
                assert_eq!(s.pick(&p, 1, now_then(d)), Some(0), "{fb:?}");
            } else {
                assert_eq!(s.pick(&p, 1, now_then(1 << 40)), Some(1));
            }
        }
    }

    #[test]
    fn queue_prefers_the_idle_path_and_shares_ties() {
        let mut p = up(2);
        let mut s = Selector::new(PathPolicy::Queue, Failback::Immediate);
        p[0].outstanding_ios = 8;
        assert_eq!(counts(&mut s, &p, 100), [0, 100]);
        p[0].outstanding_ios = 0;
        assert_eq!(counts(&mut s, &p, 100), [50, 50]);
        p[1].outstanding_ios = 3;
        p[0].outstanding_ios = 2;
        assert_eq!(s.pick(&p, 1, 0), Some(0));
    }

    #[test]
    fn service_time_weighs_bytes_by_speed() {
        let mut p = up(2);
        let mut s = Selector::new(PathPolicy::ServiceTime, Failback::Immediate);
        // Path 0 is 4× slower: counting the new request, path 1 wins until it would
        // carry 4× path 0's outstanding bytes.
        p[0].service_ns = 400_000;
        p[1].service_ns = 100_000;
        p[0].outstanding_bytes = 4096;
        p[1].outstanding_bytes = 4096;
        assert_eq!(s.pick(&p, 4096, 0), Some(1));
        p[1].outstanding_bytes = 6 * 4096;
        assert_eq!(s.pick(&p, 4096, 0), Some(1));
        p[1].outstanding_bytes = 8 * 4096;
        assert_eq!(s.pick(&p, 4096, 0), Some(0));
    }
}
