//! Rank 0's side of a multi-rank run: collects every rank's interval reports, closes
//! an interval only when every rank has reported it (or has finished before it),
//! merges counters by sum and histograms bucket by bucket (so merged percentiles are
//! the percentiles of the union, never averages), keeps per-rank and merged totals,
//! and tells which ranks have gone quiet for too long. No MPI here: the transport
//! hands it decoded messages and the current time, so it is tested without MPI.

use super::wire::{Done, RankReport, Summary};
use crate::result::paths::PathResult;
use crate::result::{
    ConnectionResult, Interval, LatencyStats, MpiRun, RankResult, RunEvent, Totals, WorkloadResult,
};
use crate::stats::histogram::LatencyHistogram;
use crate::stats::snapshot::{dir_stats, DirStats, OpStats};

/// Adds each direction of `b` to `a`'s.
fn add_dirs(a: &mut DirStats, b: &DirStats) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// Every direction together.
fn combined(dirs: &DirStats) -> OpStats {
    let mut all = dirs[0].clone();
    for d in &dirs[1..] {
        all += d;
    }
    all
}
use std::collections::BTreeMap;

/// An interval as rank 0 closes it: its merged row, and every rank's counters and
/// histograms summed per direction (what the live metrics' merged view adds).
#[derive(Debug, Clone)]
pub struct Merged {
    pub row: Interval,
    pub dirs: DirStats,
}

/// One rank's state as rank 0 sees it.
#[derive(Debug, Clone, Default)]
struct RankState {
    host: String,
    /// The host definition it plays, if the plan has them.
    hd: Option<String>,
    /// Seconds (from the shared origin) at which rank 0 last heard from it.
    last_heard_s: f64,
    reports: u64,
    done: Option<Done>,
    /// Measured (non-warm-up) counters summed over its reports.
    totals: DirStats,
    measure_start_s: Option<f64>,
    last_t_s: f64,
    first_io_unix_ns: u64,
    /// Its whole-run figures (workloads, CPU, environment), once it sent them.
    summary: Option<Summary>,
}

/// Merges the ranks' reports of one run.
#[derive(Debug)]
pub struct Gather {
    ranks: Vec<RankState>,
    /// Reports waiting for the rest of their interval, by index then rank.
    pending: BTreeMap<u64, BTreeMap<u32, RankReport>>,
    next_index: u64,
    prev_end_s: f64,
    /// Longest silence allowed before a rank counts as lost.
    patience_s: f64,
    requested_iops: f64,
    /// Merged measured counters and open-loop lateness.
    pub totals: DirStats,
    pub lag: Option<LatencyHistogram>,
    measure_start_s: Option<f64>,
    /// The merged rows so far.
    pub intervals: Vec<Interval>,
}

impl Gather {
    /// `hosts[r]` is rank r's host; `interval_s` the run's interval; the aggregate
    /// requested rate (0 for closed loop) is for the backlog estimate.
    pub fn new(hosts: &[String], interval_s: f64, requested_iops: f64) -> Self {
        Gather {
            ranks: hosts
                .iter()
                .map(|h| RankState {
                    host: h.clone(),
                    ..Default::default()
                })
                .collect(),
            pending: BTreeMap::new(),
            next_index: 0,
            prev_end_s: 0.0,
            patience_s: 2.0 * interval_s + 10.0,
            requested_iops,
            totals: Default::default(),
            lag: None,
            measure_start_s: None,
            intervals: Vec::new(),
        }
    }

    /// Names the host definition (vdbench `hd=`) each rank plays.
    pub fn set_host_defs(&mut self, of_rank: impl Fn(u32) -> Option<String>) {
        for (r, st) in self.ranks.iter_mut().enumerate() {
            st.hd = of_rank(r as u32);
        }
    }

    /// The silence after which a rank counts as lost (2 intervals + 10 s).
    pub fn patience_s(&self) -> f64 {
        self.patience_s
    }

    /// Takes one report at time `now_s`; returns the intervals it completed, merged.
    pub fn add(&mut self, rep: RankReport, now_s: f64) -> Vec<Merged> {
        let Some(st) = self.ranks.get_mut(rep.rank as usize) else {
            return Vec::new();
        };
        st.last_heard_s = now_s;
        st.reports += 1;
        if st.first_io_unix_ns == 0 {
            st.first_io_unix_ns = rep.first_io_unix_ns;
        }
        if rep.index >= self.next_index {
            self.pending
                .entry(rep.index)
                .or_default()
                .insert(rep.rank, rep);
        }
        self.close_ready()
    }

    /// Takes a rank's closing message; returns the intervals that no longer wait.
    pub fn done(&mut self, d: Done, now_s: f64) -> Vec<Merged> {
        if let Some(st) = self.ranks.get_mut(d.rank as usize) {
            st.last_heard_s = now_s;
            st.done = Some(d);
            if st.first_io_unix_ns == 0 {
                st.first_io_unix_ns = d.first_io_unix_ns;
            }
        }
        self.close_ready()
    }

    /// Takes a rank's whole-run summary (sent right before its closing message).
    pub fn summary(&mut self, sum: Summary, now_s: f64) {
        if let Some(st) = self.ranks.get_mut(sum.rank as usize) {
            st.last_heard_s = now_s;
            st.summary = Some(sum);
        }
    }

    /// Every rank has finished and every interval is merged.
    pub fn complete(&self) -> bool {
        self.ranks.iter().all(|r| r.done.is_some()) && self.pending.is_empty()
    }

    /// Ranks not finished and silent for longer than the patience, at `now_s`.
    pub fn overdue(&self, now_s: f64) -> Vec<u32> {
        self.ranks
            .iter()
            .enumerate()
            .filter(|(_, r)| r.done.is_none() && now_s - r.last_heard_s > self.patience_s)
            .map(|(i, _)| i as u32)
            .collect()
    }

    /// Ranks that have finished.
    pub fn finished(&self) -> Vec<u32> {
        (0..self.ranks.len() as u32)
            .filter(|&r| self.ranks[r as usize].done.is_some())
            .collect()
    }

    /// Ranks that have not finished.
    pub fn unfinished(&self) -> Vec<u32> {
        (0..self.ranks.len() as u32)
            .filter(|&r| self.ranks[r as usize].done.is_none())
            .collect()
    }

    /// Rank `r` with its host, for messages.
    pub fn name(&self, r: u32) -> String {
        let host = self.ranks.get(r as usize).map_or("?", |s| s.host.as_str());
        format!("rank {r} on host {host}")
    }

    fn close_ready(&mut self) -> Vec<Merged> {
        let mut out = Vec::new();
        loop {
            let k = self.next_index;
            let have = self.pending.get(&k);
            // A rank's closing message comes after all its reports (MPI keeps order
            // between two ranks), so a finished rank will not report `k` any more.
            let ready = self.ranks.iter().enumerate().all(|(r, st)| {
                have.is_some_and(|m| m.contains_key(&(r as u32))) || st.done.is_some()
            });
            if !ready || (have.is_none() && self.pending.is_empty()) {
                return out;
            }
            let reps = self.pending.remove(&k).unwrap_or_default();
            if let Some(iv) = self.merge(k, reps.into_values().collect()) {
                out.push(iv);
            }
            self.next_index += 1;
        }
    }

    /// Merges one interval's reports into one row (and, outside warm-up, the totals).
    fn merge(&mut self, k: u64, reps: Vec<RankReport>) -> Option<Merged> {
        if reps.is_empty() {
            return None;
        }
        let mut dirs = dir_stats(false);
        let mut lag: Option<LatencyHistogram> = None;
        let mut end_s = self.prev_end_s;
        let mut warmup = false;
        let (mut connections, mut paths, mut events) = (Vec::new(), Vec::new(), Vec::new());
        for r in &reps {
            // Lists follow the rank order of the run's connections, paths and events.
            connections.extend(r.lists.connections.iter().cloned());
            paths.extend(r.lists.paths.iter().cloned());
            events.extend(self.tagged(r.rank, &r.lists.events));
            // Each rank's own figures count only merged intervals, so the ranks
            // always add up to the merged totals (also after a lost rank).
            if let Some(st) = self.ranks.get_mut(r.rank as usize) {
                if r.warmup {
                    st.measure_start_s = Some(r.t_s);
                } else {
                    st.measure_start_s.get_or_insert(0.0);
                    add_dirs(&mut st.totals, &r.ops);
                }
                st.last_t_s = st.last_t_s.max(r.t_s);
            }
            end_s = end_s.max(r.t_s);
            warmup |= r.warmup;
            add_dirs(&mut dirs, &r.ops);
            if let Some(l) = &r.lag {
                *lag.get_or_insert_with(LatencyHistogram::new) += l;
            }
        }
        let all = combined(&dirs);
        let dur_s = (end_s - self.prev_end_s).max(1e-9);
        // Rank 0's CPU figures (each rank measures its own host).
        let cpu = reps
            .iter()
            .find(|r| r.rank == 0)
            .unwrap_or(&reps[0])
            .cpu
            .clone();
        let iv = Interval {
            index: k,
            t_s: end_s,
            unix_s: crate::clock::unix_s(),
            warmup,
            cpu,
            connections,
            paths,
            events,
            net: None,
            ..crate::stats::interval_figures(&all, &dirs, lag.as_ref(), dur_s, self.requested_iops)
        };
        if warmup {
            self.measure_start_s = Some(end_s);
        } else {
            self.measure_start_s.get_or_insert(0.0);
            add_dirs(&mut self.totals, &dirs);
            if let Some(l) = &lag {
                *self.lag.get_or_insert_with(LatencyHistogram::new) += l;
            }
        }
        self.prev_end_s = end_s;
        self.intervals.push(iv.clone());
        Some(Merged { row: iv, dirs })
    }

    /// Events of rank `rank`, tagged with it and its host.
    fn tagged(&self, rank: u32, events: &[RunEvent]) -> Vec<RunEvent> {
        let host = self.ranks.get(rank as usize).map(|s| s.host.clone());
        events
            .iter()
            .map(|e| RunEvent {
                rank: Some(rank),
                host: host.clone(),
                ..e.clone()
            })
            .collect()
    }

    /// Per-workload totals merged over the ranks that ran each (by name, in rank
    /// then plan order), when there is more than one workload; `dur_s` is the
    /// merged measured time. Ranks that never sent their summary (lost) are missing.
    pub fn workload_results(&self, dur_s: f64) -> Vec<WorkloadResult> {
        let mut merged: Vec<(String, String, DirStats)> = Vec::new();
        for w in self
            .ranks
            .iter()
            .filter_map(|r| r.summary.as_ref())
            .flat_map(|s| &s.workloads)
        {
            match merged.iter_mut().find(|m| m.0 == w.name) {
                Some(m) => {
                    add_dirs(&mut m.2, &w.ops);
                }
                None => merged.push((w.name.clone(), w.target.clone(), w.ops.clone())),
            }
        }
        if merged.len() <= 1 {
            return Vec::new();
        }
        merged
            .into_iter()
            .map(|(name, target, ops)| {
                let all = combined(&ops);
                WorkloadResult {
                    name,
                    target,
                    // Each rank ran its share of the rate (and streams): the plan
                    // holds the workload's settings.
                    settings: None,
                    totals: Totals {
                        all: crate::stats::op_totals(&all, dur_s, false),
                        read: crate::stats::op_totals(&ops[0], dur_s, false),
                        write: crate::stats::op_totals(&ops[1], dur_s, false),
                        trim: crate::stats::trim_totals(&ops[2], dur_s, false),
                        queue_depth: if dur_s > 0.0 {
                            all.service_sum_ns() as f64 / (dur_s * 1e9)
                        } else {
                            0.0
                        },
                        ..Default::default()
                    },
                }
            })
            .collect()
    }

    /// The targets of all ranks, each once, in rank order (ranks that play other
    /// host definitions, or put `{rank}` in a path, drive other targets).
    pub fn targets(&self) -> String {
        let mut seen: Vec<&str> = Vec::new();
        for st in &self.ranks {
            let Some(sum) = &st.summary else { continue };
            for t in sum.extras.target.split(',').filter(|t| !t.is_empty()) {
                if !seen.contains(&t) {
                    seen.push(t);
                }
            }
        }
        seen.join(",")
    }

    /// Every rank's connections, paths and events over the run, tagged with it.
    pub fn run_lists(&self) -> (Vec<ConnectionResult>, Vec<PathResult>, Vec<RunEvent>) {
        let (mut conns, mut paths, mut events) = (Vec::new(), Vec::new(), Vec::new());
        for (r, st) in self.ranks.iter().enumerate() {
            let Some(sum) = &st.summary else { continue };
            let rank = Some(r as u32);
            conns.extend(
                sum.extras
                    .connections
                    .iter()
                    .map(|c| ConnectionResult { rank, ..c.clone() }),
            );
            paths.extend(
                sum.extras
                    .paths
                    .iter()
                    .map(|p| PathResult { rank, ..p.clone() }),
            );
            events.extend(self.tagged(r as u32, &sum.extras.events));
        }
        events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        (conns, paths, events)
    }

    /// Start and end (seconds from the shared origin) of the merged measured time.
    pub fn measured_span_s(&self) -> (f64, f64) {
        let start = self.measure_start_s.unwrap_or(self.prev_end_s);
        (start, self.prev_end_s)
    }

    /// Each rank's own figures.
    pub fn rank_results(&self) -> Vec<RankResult> {
        self.ranks
            .iter()
            .enumerate()
            .map(|(i, st)| {
                let mut all = st.totals[0].clone();
                all += &st.totals[1];
                let start = st.measure_start_s.unwrap_or(st.last_t_s);
                let end = st.last_t_s;
                let dur_s = end - start;
                RankResult {
                    rank: i as u32,
                    host: st.host.clone(),
                    hd: st.hd.clone(),
                    engine: st.summary.as_ref().map(|s| s.extras.engine.clone()),
                    cpu: st.summary.as_ref().map(|s| s.extras.cpu.clone()),
                    env: st.summary.as_ref().and_then(|s| s.extras.env.clone()),
                    ios: all.ios,
                    bytes: all.bytes,
                    iops: if dur_s > 0.0 {
                        all.ios as f64 / dur_s
                    } else {
                        0.0
                    },
                    latency_us: summary(&all.lat),
                    first_io_unix_ns: st.first_io_unix_ns,
                    done_s: st.done.map(|d| d.end_s),
                    lost: st.done.is_none(),
                }
            })
            .collect()
    }

    /// The run-wide block: first/last done with the merged rate up to each.
    pub fn mpi_run(&self, split: &str, error: Option<String>) -> MpiRun {
        let ends: Vec<f64> = self
            .ranks
            .iter()
            .filter_map(|r| r.done.map(|d| d.end_s))
            .collect();
        let first_done_s = ends.iter().copied().fold(f64::INFINITY, f64::min);
        let last_done_s = ends.iter().copied().fold(0.0, f64::max);
        let (start, _) = self.measured_span_s();
        let rate_until = |t: f64| {
            let ios: u64 = self
                .intervals
                .iter()
                .filter(|iv| !iv.warmup && iv.t_s <= t + 1e-6)
                .map(|iv| iv.ios)
                .sum();
            let until = self
                .intervals
                .iter()
                .filter(|iv| !iv.warmup && iv.t_s <= t + 1e-6)
                .map(|iv| iv.t_s)
                .fold(start, f64::max);
            if until > start {
                ios as f64 / (until - start)
            } else {
                0.0
            }
        };
        let firsts: Vec<u64> = self
            .ranks
            .iter()
            .map(|r| r.first_io_unix_ns)
            .filter(|&t| t > 0)
            .collect();
        let spread_ns = firsts.iter().max().unwrap_or(&0) - firsts.iter().min().unwrap_or(&0);
        MpiRun {
            ranks: self.ranks.len() as u32,
            split: split.into(),
            first_done_s: if ends.is_empty() { 0.0 } else { first_done_s },
            first_done_iops: if ends.is_empty() {
                0.0
            } else {
                rate_until(first_done_s)
            },
            last_done_s,
            last_done_iops: rate_until(last_done_s),
            first_io_spread_ms: spread_ns as f64 / 1e6,
            error,
        }
    }
}

/// A full latency summary (with spectrum) of a histogram.
fn summary(h: &LatencyHistogram) -> LatencyStats {
    h.summary_us(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn report(rank: u32, index: u64, rng: &mut Rng, n: u64) -> RankReport {
        let mut rep = RankReport {
            rank,
            index,
            t_s: (index + 1) as f64,
            first_io_unix_ns: 1_000 + rank as u64,
            ..Default::default()
        };
        for _ in 0..n {
            // Each rank its own latency range, so the union differs from any average.
            rep.ops[0]
                .lat
                .record(1_000 * (rank as u64 + 1) + rng.below(50_000));
        }
        rep.ops[0].ios = n;
        rep.ops[0].bytes = n * 4096;
        rep
    }

    fn hosts(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("h{i}")).collect()
    }

    #[test]
    fn merges_only_when_every_rank_reported_and_exactly() {
        let mut g = Gather::new(&hosts(3), 1.0, 0.0);
        let mut rng = Rng::new(1);
        let mut union = LatencyHistogram::new();
        let mut rows = Vec::new();
        for k in 0..2 {
            for r in 0..3 {
                let rep = report(r, k, &mut rng, 1000 + 100 * r as u64);
                union += &rep.ops[0].lat;
                let closed = g.add(rep, k as f64);
                if r < 2 {
                    assert!(closed.is_empty(), "interval {k} closed before rank 2");
                }
                rows.extend(closed);
            }
        }
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].row.ios, 3300);
        // The merged counters and histogram are the ranks' sums, bucket for bucket.
        assert_eq!(rows[0].dirs[0].ios, 3300);
        let both = rows[0].dirs[0].lat.clone();
        let mut both = both;
        both += &rows[1].dirs[0].lat;
        assert_eq!(both.count(), union.count());
        assert_eq!(both.percentile_ns(99.0), union.percentile_ns(99.0));
        for r in 0..3 {
            g.done(
                Done {
                    rank: r,
                    reports: 2,
                    end_s: 2.0,
                    first_io_unix_ns: 0,
                },
                2.0,
            );
        }
        assert!(g.complete());
        let ranks = g.rank_results();
        assert_eq!(ranks.iter().map(|r| r.ios).sum::<u64>(), g.totals[0].ios);
        assert_eq!(
            ranks.iter().map(|r| r.bytes).sum::<u64>(),
            g.totals[0].bytes
        );
        assert_eq!(
            g.totals[0].lat.percentile_ns(99.0),
            union.percentile_ns(99.0)
        );
        assert_eq!(g.totals[0].lat.count(), union.count());
        assert_eq!(ranks[2].first_io_unix_ns, 1_002);
        let m = g.mpi_run("all", None);
        assert_eq!(m.first_io_spread_ms, 2e-6);
        assert_eq!(m.last_done_s, 2.0);
    }

    #[test]
    fn workloads_lists_and_extras_are_merged_across_ranks() {
        use super::super::wire::{IntervalLists, RankExtras, WorkloadOps};
        use crate::result::IntervalConnection;
        let mut g = Gather::new(&hosts(2), 1.0, 0.0);
        let mut rng = Rng::new(5);
        let mut union = LatencyHistogram::new();
        for r in 0..2u32 {
            let mut rep = report(r, 0, &mut rng, 100);
            rep.lists = IntervalLists {
                connections: vec![IntervalConnection { ios: 100 }],
                events: vec![RunEvent {
                    kind: "down".into(),
                    t_s: 0.5 - r as f64 * 0.1,
                    ..Default::default()
                }],
                ..Default::default()
            };
            let shared = WorkloadOps {
                name: "wd1/shared".into(),
                target: "shared".into(),
                ops: rep.ops.clone(),
            };
            union += &rep.ops[0].lat;
            let own = WorkloadOps {
                name: format!("wd1/sd{r}"),
                target: format!("sd{r}"),
                ops: dir_stats(false),
            };
            g.add(rep, 1.0);
            let extras = RankExtras {
                engine: "sync".into(),
                target: format!("/d/sd{r},/d/shared"),
                ..Default::default()
            };
            g.summary(
                Summary {
                    rank: r,
                    workloads: vec![own, shared],
                    extras,
                },
                1.0,
            );
        }
        let iv = &g.intervals[0];
        assert_eq!(
            iv.connections.len(),
            2,
            "one connection per rank, in rank order"
        );
        let tags: Vec<_> = iv.events.iter().map(|e| (e.rank, e.host.clone())).collect();
        assert_eq!(
            tags,
            [(Some(0), Some("h0".into())), (Some(1), Some("h1".into()))]
        );
        let ws = g.workload_results(1.0);
        let names: Vec<&str> = ws.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["wd1/sd0", "wd1/shared", "wd1/sd1"]);
        assert_eq!(ws[1].totals.all.ios, 200);
        assert_eq!(
            ws[1].totals.all.latency_us.p99,
            union.summary_us(false).p99,
            "the shared workload's p99 is the union's"
        );
        assert_eq!(g.targets(), "/d/sd0,/d/shared,/d/sd1");
        let ranks = g.rank_results();
        assert_eq!(ranks[1].engine.as_deref(), Some("sync"));
    }

    #[test]
    fn after_a_lost_rank_ranks_still_add_up_to_the_totals() {
        let mut g = Gather::new(&hosts(2), 1.0, 0.0);
        let mut rng = Rng::new(4);
        g.add(report(0, 0, &mut rng, 10), 1.0);
        g.add(report(1, 0, &mut rng, 20), 1.0);
        // Rank 1 is lost: rank 0's interval 1 is never merged.
        g.add(report(0, 1, &mut rng, 30), 2.0);
        let ranks = g.rank_results();
        assert_eq!(g.intervals.len(), 1);
        assert_eq!(g.totals[0].ios, 30);
        assert_eq!(ranks.iter().map(|r| r.ios).sum::<u64>(), 30);
        assert!(ranks.iter().all(|r| r.lost));
    }

    #[test]
    fn a_finished_rank_does_not_hold_intervals_back() {
        let mut g = Gather::new(&hosts(2), 1.0, 0.0);
        let mut rng = Rng::new(2);
        assert!(g.add(report(0, 0, &mut rng, 10), 1.0).is_empty());
        let d = Done {
            rank: 1,
            reports: 0,
            end_s: 0.5,
            first_io_unix_ns: 0,
        };
        let rows = g.done(d, 1.0);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].row.ios, 10);
    }

    #[test]
    fn silent_ranks_are_overdue_after_two_intervals_and_ten_seconds() {
        let mut g = Gather::new(&hosts(2), 1.0, 0.0);
        let mut rng = Rng::new(3);
        g.add(report(0, 0, &mut rng, 5), 1.0);
        g.add(report(1, 0, &mut rng, 5), 1.0);
        g.add(report(0, 1, &mut rng, 5), 2.0);
        // Rank 1 was last heard at 1 s, rank 0 at 2 s; patience is 2 × 1 s + 10 s.
        assert_eq!(g.patience_s(), 12.0);
        assert!(g.overdue(12.9).is_empty());
        assert_eq!(g.overdue(13.1), vec![1]);
        assert_eq!(g.overdue(14.1), vec![0, 1]);
        g.add(report(0, 2, &mut rng, 5), 14.0);
        assert_eq!(g.overdue(14.1), vec![1]);
        assert_eq!(g.name(1), "rank 1 on host h1");
        assert_eq!(g.intervals.len(), 1, "interval 1 still waits for rank 1");
    }
}
