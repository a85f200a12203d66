//! Live metrics (`--metrics ADDR:PORT`): a Prometheus / OpenMetrics endpoint served
//! while a command runs (docs/metrics.md lists every metric).
//!
//! One registry per command ([`Live`], owned by the command's session in `app`),
//! so counters only grow within a command, across all its runs. Nothing here is on
//! the I/O path: each run's collector hands the registry the interval it has just
//! merged ([`RunFeed::interval`]), and the registry adds it to counters and to the
//! latency histogram ([`buckets`]). The trade-off: a scrape sees the figures as of
//! the last interval end, so a rate over a window shorter than a few intervals
//! jumps; `--interval` sets how fresh they are. The HTTP side ([`endpoint`]) is one
//! thread of its own, closed when the command ends.

pub mod buckets;
pub mod endpoint;
mod families;
mod net_feed;

pub use endpoint::{Endpoint, EndpointError, MetricsAddr};
pub use net_feed::{NetConnCounts, NetConnName, NetFeed};

use crate::result::Interval;
use crate::stats::snapshot::{ConnStats, DirStats, OpStats, WorkloadStats};
use crate::vocab::Op;
use buckets::BucketHistogram;
use families::{ConnLabels, Families, IoLabels, LatLabels, PathLabels};
use prometheus_client::metrics::counter::Counter;
use std::sync::Arc;

/// The command's metrics registry; clones share it.
#[derive(Clone)]
pub struct Live {
    families: Arc<Families>,
    /// Rank 0 under mpirun: fed every rank's merged intervals, not its own.
    merging_ranks: bool,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Live")
    }
}

/// Where the command is: the phase gauges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Run `k` (1-based) of `n` planned (`n` = 0: not known ahead, as a curve's).
    Run { k: u64, n: u64 },
    /// A curve's point `k` (0: its max run).
    CurvePoint(u64),
    /// A steady-state or PTS round `k` (1-based).
    Round(u64),
}

impl Live {
    /// An empty registry for the command `command` (its name in the info metric).
    pub fn new(command: &str) -> Self {
        Live {
            families: Arc::new(Families::new(command)),
            merging_ranks: false,
        }
    }

    /// The same registry as rank 0's merged view of all MPI ranks.
    pub fn merging_ranks(self) -> Self {
        Live {
            merging_ranks: true,
            ..self
        }
    }

    /// Whether runs feed it the ranks' merged intervals instead of their own.
    pub fn merges_ranks(&self) -> bool {
        self.merging_ranks
    }

    /// The whole registry in the OpenMetrics text format.
    pub fn render(&self) -> String {
        self.families.render()
    }

    /// The whole registry in Prometheus' text format 0.0.4.
    pub fn render_text(&self) -> String {
        self.families.render_text()
    }

    /// Sets a phase gauge.
    pub fn phase(&self, p: Phase) {
        let f = &self.families;
        let g = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        match p {
            Phase::Run { k, n } => {
                f.run.set(g(k));
                f.runs.set(g(n));
            }
            Phase::CurvePoint(k) => {
                f.curve_point.set(g(k));
            }
            Phase::Round(k) => {
                f.round.set(g(k));
            }
        }
    }

    /// Adds a network run's interval, whose figures come whole (`net` counts per
    /// run, not per workload and direction): its I/Os (sends and receives) and bytes.
    pub fn net_interval(&self, workload: &str, target: &str, iv: &Interval) {
        let labels = IoLabels::new(workload, "net", target);
        let f = &self.families;
        f.ios.get_or_create(&labels).inc_by(iv.ios);
        f.bytes.get_or_create(&labels).inc_by(iv.bytes);
        f.errors.get_or_create(&labels).inc_by(iv.errors);
        f.warmup.set(i64::from(iv.warmup));
        f.fed_at(iv.unix_s);
    }
}

/// The directions, in `DirStats`' order.
const OPS: [Op; Op::COUNT] = [Op::Read, Op::Write, Op::Trim];

/// The `workload` and `target` of rank 0's merged view under mpirun: every workload
/// of every rank, per direction.
const ALL: WorkloadName<'static> = WorkloadName {
    name: "all",
    target: "all",
};

/// One direction of one workload: its series, bound once per run.
struct DirFeed {
    ios: Counter,
    bytes: Counter,
    errors: Counter,
    latency: BucketHistogram,
}

impl DirFeed {
    fn new(live: &Live, w: &WorkloadName<'_>, op: Op) -> Self {
        let f = &live.families;
        let io = IoLabels::new(w.name, op.name(), w.target);
        let lat = LatLabels {
            workload: w.name.to_string(),
            direction: op.name().to_string(),
        };
        DirFeed {
            ios: f.ios.get_or_create_owned(&io),
            bytes: f.bytes.get_or_create_owned(&io),
            errors: f.errors.get_or_create_owned(&io),
            latency: f.latency.get_or_create_owned(&lat),
        }
    }

    /// Adds one interval's figures of this direction.
    fn add(&self, o: &OpStats) {
        self.ios.inc_by(o.ios);
        self.bytes.inc_by(o.bytes);
        self.errors.inc_by(o.errors);
        self.latency.add(&o.lat);
    }
}

/// Adds `dirs` to a workload's direction series, binding a direction's when it
/// first has I/O (so a read-only workload shows no write histogram).
fn add_dirs(
    live: &Live,
    feed: &mut [Option<DirFeed>; Op::COUNT],
    w: &WorkloadName,
    dirs: &DirStats,
) {
    for ((d, o), op) in feed.iter_mut().zip(dirs).zip(OPS) {
        if d.is_none() && o.ios + o.errors == 0 {
            continue;
        }
        d.get_or_insert_with(|| DirFeed::new(live, w, op)).add(o);
    }
}

/// A workload as its series name it.
#[derive(Debug, Clone)]
pub struct WorkloadName<'a> {
    pub name: &'a str,
    /// The target's URI.
    pub target: &'a str,
}

/// One run's view of the registry: the series its workloads and connections write,
/// looked up once (a direction's when it first has I/O, so a read-only workload
/// shows no write histogram).
pub struct RunFeed {
    live: Live,
    names: Vec<(String, String)>,
    workloads: Vec<[Option<DirFeed>; Op::COUNT]>,
    /// Rank 0's merged view under mpirun.
    all: [Option<DirFeed>; Op::COUNT],
    /// Per connection, target-major: (ios, bytes, errors).
    conns: Vec<[Counter; 3]>,
    /// The first target's URI, which the per-path series name.
    path_target: String,
}

impl RunFeed {
    /// Binds a run's series: its workloads, and its connections as (target URI,
    /// connection index among the target's). `paths_of` is the target whose paths
    /// `Interval::paths` lists (the first).
    pub fn new(
        live: &Live,
        workloads: &[WorkloadName<'_>],
        conns: &[(&str, u32)],
        paths_of: &str,
    ) -> Self {
        let f = &live.families;
        // Rank 0's merged view has no per-connection figures (the ranks' own have).
        let conns = conns
            .iter()
            .filter(|_| !live.merges_ranks())
            .map(|&(target, index)| {
                let l = ConnLabels {
                    target: target.to_string(),
                    connection: index.to_string(),
                };
                [
                    f.conn_ios.get_or_create_owned(&l),
                    f.conn_bytes.get_or_create_owned(&l),
                    f.conn_errors.get_or_create_owned(&l),
                ]
            })
            .collect();
        RunFeed {
            live: live.clone(),
            names: workloads
                .iter()
                .map(|w| (w.name.to_string(), w.target.to_string()))
                .collect(),
            workloads: workloads.iter().map(|_| Default::default()).collect(),
            all: Default::default(),
            conns,
            path_target: paths_of.to_string(),
        }
    }

    /// Adds one merged interval that ended at `end_unix_s` (its boundary on the
    /// workers' clock, not the moment the collector closed it, which a loaded host
    /// delays): each workload's counters and latencies, each connection's counters,
    /// the paths' I/Os and states, the in-flight average and whether it was warm-up.
    /// Nothing when the registry is rank 0's merged view (see [`RunFeed::merged`]).
    pub fn interval(
        &mut self,
        workloads: &[WorkloadStats],
        conns: &[ConnStats],
        iv: &Interval,
        end_unix_s: f64,
    ) {
        if self.live.merges_ranks() {
            return;
        }
        for ((feed, w), (name, target)) in self.workloads.iter_mut().zip(workloads).zip(&self.names)
        {
            add_dirs(&self.live, feed, &WorkloadName { name, target }, &w.ops);
        }
        for (feed, c) in self.conns.iter().zip(conns) {
            feed[0].inc_by(c.ios);
            feed[1].inc_by(c.bytes);
            feed[2].inc_by(c.errors);
        }
        let f = &self.live.families;
        for (i, p) in iv.paths.iter().enumerate() {
            let l = PathLabels {
                target: self.path_target.clone(),
                path: i.to_string(),
            };
            f.path_ios.get_or_create(&l).inc_by(p.ios);
            f.path_errors.get_or_create(&l).inc_by(p.errors);
            f.set_path_state(&l, &p.state);
        }
        f.inflight.set(iv.queue_depth);
        f.warmup.set(i64::from(iv.warmup));
        f.fed_at(end_unix_s);
    }

    /// Rank 0 under mpirun: adds one interval merged from every rank (`dirs`: the
    /// ranks' counters and histograms summed, bucket by bucket) to the series of
    /// `workload="all"`, `target="all"`, and the merged row's in-flight sum and
    /// warm-up flag. Nothing unless the registry is the merged view.
    pub fn merged(&mut self, dirs: &DirStats, row: &Interval) {
        if !self.live.merges_ranks() {
            return;
        }
        add_dirs(&self.live, &mut self.all, &ALL, dirs);
        let f = &self.live.families;
        f.inflight.set(row.queue_depth);
        f.warmup.set(i64::from(row.warmup));
        f.fed_at(row.unix_s);
    }
}
