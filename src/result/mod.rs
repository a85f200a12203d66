//! The result model: the versioned, serialisable record of what a run measured. Every
//! reporter (terminal, JSON, CSV, HTML, compare) renders from these types and nothing
//! else, so a chart can never disagree with the JSON. The wire format is documented in
//! docs/result-schema.md; changing a field's meaning means bumping [`SCHEMA`].
//!
//! This module depends on nothing else in the crate but `vocab` (the value types it
//! shares with the plan): the layers that measure (run, stats) build these types, and
//! the reporters read them. Every field is typed except the two declared extension
//! points of [`ResultDoc`], `env` and `plan` (and each rank's `env`, the same shape as
//! the top-level one), whose shapes belong to the modules that write them.

pub mod hdr;
pub mod io;
pub mod nbd;
pub mod parts;
pub mod paths;
pub mod ranks;
pub mod repeats;
pub mod replay;
pub mod smb;
pub mod threads;
pub mod workload;

pub use ranks::{MpiRun, RankResult};
pub use replay::ReplayResult;

use serde::{Deserialize, Serialize};
pub use workload::{
    AccessPattern, Arrival, BlockSizes, Distribution, NetMode, NetRrEcho, NetWorkloadEcho, Rate,
    RunWorkload, SeqLayout, WorkloadEcho, Zone, ZoneBytes,
};

/// Schema identifier written at the top of every result file.
/// Version 2: `curves` (a list) in place of version 1's `curve` (one object).
pub const SCHEMA: &str = "ioscope.result/2";

/// A list written as a list, or (schema 1's `curve`) a single object.
fn one_or_many<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany<T> {
        Many(Vec<T>),
        One(T),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::Many(v) => v,
        OneOrMany::One(x) => vec![x],
    })
}

/// A whole result file: one or more runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultDoc {
    pub schema: String,
    pub tool: Tool,
    /// Seconds since the Unix epoch when the result was started.
    pub started_unix_s: f64,
    /// The command line that produced it.
    #[serde(default)]
    pub command: Vec<String>,
    /// True when a Ctrl-C (or an error policy) stopped the work early.
    #[serde(default)]
    pub interrupted: bool,
    pub runs: Vec<RunResult>,
    /// Declared extension point: the environment behind the numbers (kernel, CPU,
    /// devices), as `crate::sysinfo::Environment` writes it (docs/environment.md).
    /// Kept as JSON here so the result model does not depend on sysinfo; reporters
    /// show it generically and never read fields out of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<serde_json::Value>,
    /// Declared extension point: the effective plan, as `crate::plan::Plan`
    /// serialises it (docs/job-file.md), so `ioscope rerun` can repeat the run
    /// exactly. Kept as JSON so the result model does not depend on plan; reporters
    /// show it generically, but for diskspd's XML, whose `<Profile>` re-states the
    /// plan (`report::diskspd_xml`: targets' paths, sizes and caching, runs' seeds,
    /// CPUs and intervals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Latency-vs-load curves, in the order measured: one for `ioscope curve`, one
    /// per run that asked for a curve for `ioscope run` (vdbench's `iorate=curve` on
    /// several rds). Results of schema 1 held one, as `curve`; they read as a list.
    #[serde(
        default,
        alias = "curve",
        deserialize_with = "one_or_many",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub curves: Vec<Curve>,
    /// Steady-state detection (SNIA PTS rules), for `--steady-state` and `ioscope pts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyState>,
}

/// Whether a tracked metric settled: SNIA PTS's rule over a window of rounds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// "iops", "mbps" or a latency statistic such as "p99_us".
    pub metric: String,
    /// The metric in every round, in order.
    pub rounds: Vec<f64>,
    /// Runs (indices into `runs`) whose result is the tracked metric of each round.
    pub round_runs: Vec<usize>,
    /// First and last round (0-based, inclusive) of the window judged.
    pub window: (usize, usize),
    pub reached: bool,
    /// Average over the window.
    pub average: f64,
    /// (max - min) / average × 100 over the window (limit 20).
    pub range_pct: f64,
    /// |least-squares slope| × (window length - 1) / average × 100 (limit 10).
    pub slope_pct: f64,
}

/// A latency-vs-IOPS curve (vdbench's iorate=curve) and an optional SLA search.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// IOPS of the closed-loop (max) run.
    pub max_iops: f64,
    pub points: Vec<CurvePoint>,
    /// Present when a latency bound was searched for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sla: Option<Sla>,
    /// Why the curve stopped early, if it did (--stop-latency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// One point of a curve: a run at a requested rate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Index of the run in `runs`.
    pub run: usize,
    /// Percentage of `max_iops` requested (100 for the max run itself).
    pub pct_of_max: f64,
    /// Requested rate; 0 for the closed-loop max run.
    pub requested_iops: f64,
    pub achieved_iops: f64,
    pub mbps: f64,
    pub latency_us: LatencyStats,
}

/// The answer of an SLA search.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sla {
    /// "p99", "p99.9", "mean", …
    pub percentile: String,
    pub bound_us: f64,
    /// Highest rate found whose percentile stayed within the bound (0 if none).
    pub iops: f64,
    /// The measured percentile at that rate.
    pub measured_us: f64,
    /// Runs (indices into `runs`) the search made.
    pub probes: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Tool {
    pub fn current() -> Self {
        Tool {
            name: "ioscope".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// One measured run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Storage (default, also for files written before the field existed) or net.
    #[serde(default)]
    pub kind: RunKind,
    pub name: String,
    /// Target(s) as given, comma-separated when the run used several.
    pub target: String,
    /// Engine actually used (after any fallback).
    pub engine: String,
    /// Why that engine: "--engine sync" when asked for, or what `auto` saw in the
    /// targets ("auto: /dev/shm/f is a file on tmpfs/ramfs (in RAM): …").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub engine_reason: String,
    /// io_uring settings and write durability in effect (`--fixed-bufs`, `--sqpoll`,
    /// `--write-through`, `--sync-every` …), as the plan's `io` table; absent when
    /// all are defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<io::IoEcho>,
    /// The effective workload settings (the first workload when several ran; the
    /// totals of each are in `workloads`), or a network run's settings.
    #[serde(default)]
    pub workload: RunWorkload,
    /// Measured seconds (warm-up excluded).
    pub duration_s: f64,
    pub warmup_s: f64,
    #[serde(default)]
    pub interrupted: bool,
    /// Why the run ended.
    pub end_reason: EndReason,
    pub workers: usize,
    pub streams: u64,
    pub totals: Totals,
    pub cpu: Cpu,
    /// Per-workload totals when the run had more than one workload.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<WorkloadResult>,
    pub intervals: Vec<Interval>,
    /// Open-loop runs: requested against achieved rate and how far issue fell behind
    /// the schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<ScheduleResult>,
    /// Trace workloads: what each replayed and how close to its trace's schedule.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replay: Vec<ReplayResult>,
    /// Data verification counts and mismatch samples, with --verify / --verify-after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyResult>,
    /// First I/O errors seen (errno and offset), at most a few per run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_samples: Vec<ErrorSample>,
    /// What the SMB sessions of `smb://` targets negotiated (dialect, signing,
    /// encryption, credits), one entry per SMB target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub smb: Vec<smb::SmbSession>,
    /// The reply form each `nbd://` target's connections asked for and got, one
    /// entry per NBD target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nbd: Vec<nbd::NbdSession>,
    // --- connections and events (engine contract; see the block at the end) ---
    /// Per connection to each target, target-major: `connections per target` entries
    /// for the first target, then the second's, …
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<ConnectionResult>,
    /// Per path of a multipath target, path 0 first (absent with one path).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<paths::PathResult>,
    /// Connection events and timed-out or re-issued I/Os, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<RunEvent>,
    /// A target with several paths only: the latency cost of its failovers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failover: Option<paths::FailoverCost>,
    /// Multi-rank (MPI) runs only: each rank's own figures ([`ranks`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankResult>,
    /// Multi-rank (MPI) runs only: how the ranks ran together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi: Option<MpiRun>,
    /// A run that stops once its metric settles (fio's `steadystate`): the rule and
    /// how it was judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_stop: Option<SteadyStopResult>,
    /// A run made by `ioscope merge`: the runs it combined, one per source result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<parts::Part>,
    /// `--repeat N`: each repetition's totals, in order (the entry's own totals and
    /// intervals are the last repetition's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repetitions: Vec<repeats::Repetition>,
    /// `--repeat N`: each figure over the completed repetitions (two or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<repeats::Repeats>,
    /// Per worker thread, per workload: I/O counts over the measured time (they
    /// sum to `totals`). Absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<threads::ThreadResult>,
}

/// How a run's steady-state stop was judged (fio's `steadystate` rule).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SteadyStopResult {
    /// Whose rule: `"fio steadystate"`.
    pub rule: String,
    /// The criterion as fio writes it: `iops:10%`, `bw_slope:0.5%`, `lat:200`.
    pub criterion: String,
    /// The rolling window and the measured time before judging started, seconds.
    pub window_s: f64,
    pub ramp_s: f64,
    /// Intervals in a full window.
    pub window_samples: usize,
    /// Whether the criterion held; the run then ended (`end_reason` `steady_state`).
    pub reached: bool,
    /// When it held, seconds after the start of I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reached_at_s: Option<f64>,
    /// The last judged window: its mean (IOPS, bytes/s or µs) and the value compared
    /// with the limit (largest deviation from the mean, or the slope per interval; in
    /// % of the mean when the limit is a percentage). Absent before a full window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
}

/// Why a run ended (`"duration"`, `"passes"`, `"interrupted"` or `"error"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndReason {
    /// The measured duration ran out.
    #[default]
    Duration,
    /// Every stream finished its passes over its working set (or its I/O budget), or
    /// a stream of an `exit_all` workload (fio's `exitall`) finished its own (or
    /// reached its own stop time).
    Passes,
    /// Ctrl-C stopped it.
    Interrupted,
    /// An I/O error (under the stopping error policy) or a failed worker ended it.
    Error,
    /// Its metric settled (a steady-state stop, fio's `steadystate`).
    #[serde(rename = "steady_state")]
    SteadyState,
    /// The measured intervals moved `stop_after_bytes` (vdbench's `maxdata=`).
    #[serde(rename = "data_limit")]
    DataLimit,
}

impl EndReason {
    /// The wire name, as in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Duration => "duration",
            EndReason::Passes => "passes",
            EndReason::Interrupted => "interrupted",
            EndReason::Error => "error",
            EndReason::SteadyState => "steady_state",
            EndReason::DataLimit => "data_limit",
        }
    }
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How an open-loop run kept to its schedule.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScheduleResult {
    /// Sum of the open-loop workloads' requested rates.
    pub requested_iops: f64,
    /// I/Os of those workloads issued per second.
    pub achieved_iops: f64,
    /// achieved / requested × 100.
    pub achieved_pct: f64,
    /// Issue lateness against the intended time (jitter when keeping up, backlog
    /// wait when not): p50, p99, max etc. in microseconds.
    pub lag_us: LatencyStats,
    /// Most I/Os that were due but not yet issued at once, estimated as the maximum
    /// lateness × requested rate.
    pub max_backlog_ios: f64,
    /// How the workers waited for intended times, and what the waiting cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<PacingResult>,
}

/// Waiting for intended issue times: the jitter-against-CPU trade of `--pacing`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PacingResult {
    /// `spin`, `hybrid` or `sleep`.
    pub mode: String,
    /// Seconds all workers together spent busy-waiting for intended times.
    pub spin_s: f64,
    /// Seconds all workers together spent asleep waiting for them.
    pub sleep_s: f64,
    /// Timed sleeps taken.
    pub sleeps: u64,
    /// How late those sleeps woke against the time asked for (the host's timer
    /// wake-up latency), microseconds.
    pub wake_late_us: LatencyStats,
    /// The busy-wait margin before each intended time (learned in `hybrid`): the
    /// largest any worker had at the end of a measured interval, microseconds.
    pub margin_us: f64,
    /// ioscope CPU per I/O with the busy-waiting taken out: the cost of the work
    /// itself, comparable with a closed-loop run's `cpu_us_per_io`.
    pub cpu_us_per_io_excl_spin: f64,
}

/// What verification checked and found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyResult {
    /// Units (dedup-unit sized) whose content was examined.
    pub units_checked: u64,
    /// Held exactly the expected write.
    pub ok: u64,
    /// Overlapping writes left a legitimate mix (tolerated, not an error).
    pub torn: u64,
    /// Never written under verification, so nothing to compare.
    pub untracked: u64,
    /// All mismatches; the classes below add up to it.
    pub mismatches: u64,
    /// Checksum failed: the bytes changed after they were written.
    pub corrupted: u64,
    /// The header names another offset or target: a write landed in the wrong place.
    pub misplaced: u64,
    /// A valid header with an older key: a write was lost (stale data).
    pub stale: u64,
    /// No header where a write was acknowledged.
    pub never_written: u64,
    /// A key newer than any issued (journal tail lost, or another writer).
    pub unexpected: u64,
    /// Units (counted in `ok`) holding an intact older copy of a write a multipath
    /// target issued on two paths: the first copy, stalled on a failed path, landed
    /// after a newer write. Ambiguous but not corruption. Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub reissued_copies: u64,
    /// Reads of fio's `verify_backlog`: streams reading back their own completed
    /// writes during the run. Their units are in the counts above; their I/Os are
    /// not in the workloads' read figures. Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub backlog_reads: u64,
    /// Bytes those reads returned. Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub backlog_bytes: u64,
    /// The first mismatches, with offsets, expected vs found, and a hex excerpt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<VerifySample>,
}

impl std::ops::AddAssign<&VerifyResult> for VerifyResult {
    fn add_assign(&mut self, o: &VerifyResult) {
        self.units_checked += o.units_checked;
        self.ok += o.ok;
        self.torn += o.torn;
        self.untracked += o.untracked;
        self.mismatches += o.mismatches;
        self.corrupted += o.corrupted;
        self.misplaced += o.misplaced;
        self.stale += o.stale;
        self.never_written += o.never_written;
        self.unexpected += o.unexpected;
        self.reissued_copies += o.reissued_copies;
        self.backlog_reads += o.backlog_reads;
        self.backlog_bytes += o.backlog_bytes;
        for s in &o.samples {
            if self.samples.len() < 32 {
                self.samples.push(s.clone());
            }
        }
    }
}

/// One verification mismatch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifySample {
    /// corrupted, misplaced, stale, never-written or unexpected.
    pub kind: String,
    pub target: String,
    pub offset: u64,
    /// Expected vs found and a hex excerpt.
    pub detail: String,
}

impl RunResult {
    /// A run that measured nothing (for probing field accessors).
    pub fn empty() -> Self {
        RunResult {
            kind: RunKind::Storage,
            name: String::new(),
            target: String::new(),
            engine: String::new(),
            engine_reason: String::new(),
            io: None,
            workload: RunWorkload::default(),
            duration_s: 0.0,
            warmup_s: 0.0,
            interrupted: false,
            end_reason: EndReason::Duration,
            workers: 0,
            streams: 0,
            totals: Totals::default(),
            cpu: Cpu::default(),
            workloads: Vec::new(),
            intervals: Vec::new(),
            schedule: None,
            replay: Vec::new(),
            verify: None,
            error_samples: Vec::new(),
            smb: Vec::new(),
            nbd: Vec::new(),
            connections: Vec::new(),
            paths: Vec::new(),
            events: Vec::new(),
            failover: None,
            ranks: Vec::new(),
            mpi: None,
            steady_stop: None,
            parts: Vec::new(),
            repetitions: Vec::new(),
            repeats: None,
            threads: Vec::new(),
        }
    }
}

/// One workload of a run of several: its own settings as run, and its totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadResult {
    pub name: String,
    pub target: String,
    /// The workload's own settings (block sizes, mix, queue depth, streams, rate,
    /// region, pauses): each workload of a run keeps its own. Absent in results
    /// written before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<workload::WorkloadEcho>,
    pub totals: Totals,
}

/// Totals of a run or workload, all operations together and split by direction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    #[serde(flatten)]
    pub all: OpTotals,
    pub read: OpTotals,
    pub write: OpTotals,
    /// Trims (discards), counted apart from reads and writes; absent when the run
    /// issued none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<OpTotals>,
    /// Average operations in flight (Little's law: summed service time / elapsed).
    pub queue_depth: f64,
    /// Network runs only (see the block at the end of this file).
    #[serde(flatten)]
    pub net: NetTotals,
    /// Flushes issued by `--sync-every` (not counted in `all`, `read` or `write`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<FlushTotals>,
    /// Zone resets (emulated zones, fio's `zonemode=zbd`): by writes that found
    /// their zone full or due for a reset, and by trims; absent without zones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_resets: Option<u64>,
}

/// Flushes (fsync/fdatasync) a run issued, and how long each call took.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FlushTotals {
    /// "fsync" or "fdatasync".
    pub kind: String,
    pub ios: u64,
    pub errors: u64,
    /// Flushes per second of measured time.
    pub per_s: f64,
    /// Duration of each flush call.
    pub latency_us: LatencyStats,
}

/// Counters and latency for one direction (or both).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpTotals {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mbps: f64,
    /// 2^20 bytes per second.
    pub mibps: f64,
    pub errors: u64,
    /// Requests that found nothing to act on (a tree with no missing file to create,
    /// none left to delete: `engine::NOTHING_TO_DO`): neither operations nor errors.
    #[serde(default, skip_serializing_if = "crate::vocab::skip::is_zero")]
    pub skipped: u64,
    /// Latency as the application sees it (from the intended issue time).
    pub latency_us: LatencyStats,
    /// Service time (from the actual submission). Equal to `latency_us` in closed loop.
    pub service_us: LatencyStats,
    /// The latency histogram (`latency_us`'s) in HdrHistogram's V2 deflate encoding,
    /// base64, values in ns ([`hdr`]): a run's read, write and trim totals carry it,
    /// so results merge exactly. Absent elsewhere and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hdr: Option<String>,
    /// The service-time histogram, encoded as `hdr`; only in open loop, where it
    /// differs from the latency one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_hdr: Option<String>,
}

/// Latency summary in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    pub min: f64,
    pub mean: f64,
    pub stddev: f64,
    pub max: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub p99_99: f64,
    /// Percentile spectrum as (percentile, microseconds) pairs, for plots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spectrum: Vec<(f64, f64)>,
    /// Cumulative distribution at fixed edges: (microseconds, % of I/Os at or below),
    /// at 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 ns, the same in µs and ms, and
    /// 2000 ms (fio's latency buckets). Totals only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cdf: Vec<(f64, f64)>,
}

impl LatencyStats {
    /// The named percentiles as (percentile, µs) pairs, p50 to p99.99.
    pub fn named(&self) -> [(f64, f64); 6] {
        [
            (50.0, self.p50),
            (90.0, self.p90),
            (95.0, self.p95),
            (99.0, self.p99),
            (99.9, self.p99_9),
            (99.99, self.p99_99),
        ]
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    /// ioscope's own user CPU time as % of all online CPUs (100 = every CPU busy).
    pub user_pct: f64,
    /// ioscope's own system (kernel) CPU time, same scale as `user_pct`.
    pub sys_pct: f64,
    /// Whole-system busy CPU % (all processes) over the same time.
    pub system_pct: f64,
    /// ioscope CPU seconds (user + sys) per I/O, in microseconds.
    pub cpu_us_per_io: f64,
    /// CPUs online on the measuring machine: the denominator of the percentages
    /// above (so `user_pct × online_cpus` is % of one CPU, fio's `usr_cpu`). Absent
    /// in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub online_cpus: Option<u32>,
}

/// One reporting interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub index: u64,
    /// Seconds since the run started, at the end of the interval.
    pub t_s: f64,
    pub duration_s: f64,
    /// Unix time at the end of the interval.
    pub unix_s: f64,
    pub warmup: bool,
    pub ios: u64,
    pub bytes: u64,
    /// Of `bytes`, those read and those written (absent when 0, and in results
    /// from before they were counted).
    #[serde(default, skip_serializing_if = "crate::vocab::skip::is_zero")]
    pub read_bytes: u64,
    #[serde(default, skip_serializing_if = "crate::vocab::skip::is_zero")]
    pub write_bytes: u64,
    pub iops: f64,
    pub mbps: f64,
    pub read_pct: f64,
    pub errors: u64,
    pub lat_us: IntervalLatency,
    pub read_lat_us: IntervalLatency,
    pub write_lat_us: IntervalLatency,
    /// Trims' latency, in intervals that had trims.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_lat_us: Option<IntervalLatency>,
    pub queue_depth: f64,
    pub cpu: Cpu,
    /// Open-loop runs: issue lateness against the intended times in this interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_us: Option<IntervalLatency>,
    /// Open-loop runs: most I/Os due but not yet issued in this interval, estimated
    /// as the interval's maximum lateness × the requested rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog_ios: Option<f64>,
    /// Trace replays on time: the I/Os per second the trace's schedule asked for in
    /// this interval (against `iops`, what was achieved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_iops: Option<f64>,
    // --- connections and events (engine contract; see the block at the end) ---
    /// Per connection, in the order of the run's `connections`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<IntervalConnection>,
    /// Per path of a multipath target, in the order of the run's `paths`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<paths::IntervalPath>,
    /// Events of this interval (also in the run's `events`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<RunEvent>,
    /// Network runs only: throughput, retransmits and TCP_INFO per stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net: Option<NetInterval>,
    /// Runs of several workloads: each workload's share of this interval, in the
    /// order of the run's `workloads`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<IntervalWorkload>,
}

/// One workload's share of an interval: its own rate, mix and latency.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalWorkload {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub mbps: f64,
    /// Reads as a percentage of its I/Os.
    pub read_pct: f64,
    pub errors: u64,
    /// Requests that found nothing to act on (a tree with no missing file to create,
    /// none left to delete: `engine::NOTHING_TO_DO`): neither operations nor errors.
    #[serde(default, skip_serializing_if = "crate::vocab::skip::is_zero")]
    pub skipped: u64,
    pub read_lat_us: IntervalLatency,
    pub write_lat_us: IntervalLatency,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalLatency {
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub stddev: f64,
    /// The interval's histogram, encoded as [`OpTotals::hdr`]: per direction, with
    /// the `histograms = "intervals"` setting only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hdr: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorSample {
    pub op: String,
    pub target: String,
    pub offset: u64,
    pub len: u64,
    pub errno: i32,
    pub message: String,
}

// ---------------------------------------------------------------------------------
// Connections and events (the engine contract, docs/architecture.md). Kept as one
// block: network engines (NBD, iSCSI) and multipath report through these.
// ---------------------------------------------------------------------------------

/// Totals of one connection to a target over the measured time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnectionResult {
    /// The target the connection leads to.
    pub uri: String,
    /// Multi-rank (MPI) runs: the rank that held the connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// Connection number on that target (0-based).
    pub index: u32,
    pub ios: u64,
    pub bytes: u64,
    /// Failed I/Os, timeouts included.
    pub errors: u64,
    /// I/Os that passed `--io-timeout`.
    #[serde(default)]
    pub timeouts: u64,
    /// CPU time (user + system) of the worker thread that drove the connection, per
    /// I/O, over the measured intervals: a worker's CPU split over its connections
    /// by I/Os. What one client core can drive per connection, whatever the cores of
    /// the machine it was measured on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_io: Option<f64>,
}

/// One connection's share of an interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalConnection {
    pub ios: u64,
}

/// Something that happened to a connection (path) during a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunEvent {
    /// Seconds since the run started.
    pub t_s: f64,
    /// Index into the run's `connections`.
    pub path: u32,
    /// `down`, `up`, `timeout` or `reissue`.
    pub kind: String,
    pub detail: String,
    /// Multi-rank (MPI) runs: the rank it happened on, and its host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

// ---- Network runs (`ioscope net`) ------------------------------------------------
// Everything below belongs to the network mode. The fields it adds to the storage
// types above (`RunResult::kind`, `Totals::net`, `Interval::net`) default to the
// storage meaning, so storage results read and write exactly as before.

/// What a run measured: storage I/O (the default, and what every older file holds)
/// or a network link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    #[default]
    Storage,
    Net,
}

impl RunKind {
    pub fn is_storage(&self) -> bool {
        *self == RunKind::Storage
    }
}

/// Totals only a network run has; all absent for storage runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetTotals {
    /// Payload throughput over the measured time, 10^9 bits per second, as the
    /// receiving end counted it (both directions together with `--bidir`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gbps: Option<f64>,
    /// One entry per TCP stream (connection), in stream order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<Vec<NetStreamTotals>>,
    /// CPU microseconds per KiB (1024 bytes) moved, netperf's service demand, from
    /// each process's own CPU time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_demand_us_per_kb: Option<ServiceDemand>,
    /// Request/response runs (`--rr`): transactions per second and their latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rr: Option<RrTotals>,
    /// The server's CPU use over the measured time, as it reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_cpu: Option<Cpu>,
}

/// One TCP stream's totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetStreamTotals {
    /// "send" (this end wrote), "recv" (the server wrote) or "rr".
    #[serde(default)]
    pub direction: String,
    pub gbps: f64,
    /// Segments the sending end retransmitted (TCP_INFO `tcpi_total_retrans`).
    pub retransmits: u64,
    /// Smoothed round-trip time at the end, microseconds (TCP_INFO `tcpi_rtt`).
    pub rtt_us: f64,
    /// Payload bytes the sending end wrote over the whole connection (warm-up too).
    #[serde(default)]
    pub bytes_sent: u64,
    /// Payload bytes the receiving end read over the whole connection.
    #[serde(default)]
    pub bytes_received: u64,
    /// Transactions per second of this stream (`--rr` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tps: Option<f64>,
    /// Per-transaction latency of this stream (`--rr` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us: Option<LatencyStats>,
    /// The network job this stream is (runs of fio-style `net` jobs).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub job: String,
    /// Datagrams a UDP receiver found missing from the senders' sequence numbers.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub datagrams_lost: u64,
}

/// Service demand of both ends.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServiceDemand {
    /// This process (the client).
    pub local: f64,
    /// The server process, as it reported its own CPU time; null when the server
    /// sent no report (it went away).
    pub remote: Option<f64>,
}

/// Request/response totals (netperf TCP_RR).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RrTotals {
    /// Completed transactions per second, all streams.
    pub tps: f64,
    /// Transaction latency, request write to last response byte (from the intended
    /// send time with `--rate`).
    pub latency_us: LatencyStats,
}

/// One interval of a network run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetInterval {
    pub gbps: f64,
    /// Retransmits in this interval, all streams (this end's sockets).
    pub retransmits: u64,
    pub streams: Vec<NetStreamInterval>,
}

/// One stream in one interval, with its TCP_INFO sample at the interval's end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetStreamInterval {
    pub bytes: u64,
    pub gbps: f64,
    pub retransmits: u64,
    pub rtt_us: f64,
    /// Congestion window, bytes (snd_cwnd × snd_mss).
    pub cwnd_bytes: u64,
    /// RTT variation, µs (TCP_INFO `tcpi_rttvar`).
    #[serde(default)]
    pub rttvar_us: f64,
    /// The peer's advertised receive window, bytes (TCP_INFO `tcpi_snd_wnd`).
    #[serde(default)]
    pub snd_wnd_bytes: u64,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_reason_is_written_as_before() {
        for (r, name) in [
            (EndReason::Duration, "duration"),
            (EndReason::Passes, "passes"),
            (EndReason::Interrupted, "interrupted"),
            (EndReason::Error, "error"),
        ] {
            assert_eq!(serde_json::to_value(r).unwrap(), name);
            assert_eq!(serde_json::from_value::<EndReason>(name.into()).unwrap(), r);
            assert_eq!(r.to_string(), name);
        }
        assert!(serde_json::from_value::<EndReason>("timeout".into()).is_err());
    }

    /// A schema-1 result's one `curve` object reads as a list of one; schema 2
    /// writes `curves` and reads it back as written.
    #[test]
    fn schema_one_curve_reads_as_a_list_of_one() {
        let mut v: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/results/two-runs.json"))
                .unwrap();
        assert_eq!(v["schema"], "ioscope.result/1");
        v["curve"] = serde_json::json!({"max_iops": 1000.0, "points": []});
        let doc: ResultDoc = serde_json::from_value(v).unwrap();
        assert_eq!(doc.curves.len(), 1);
        assert_eq!(doc.curves[0].max_iops, 1000.0);
        let mut two = doc.clone();
        two.curves.push(Curve::default());
        let wire = serde_json::to_value(&two).unwrap();
        assert!(wire.get("curve").is_none() && wire["curves"].as_array().unwrap().len() == 2);
        assert_eq!(serde_json::from_value::<ResultDoc>(wire).unwrap(), two);
    }
}
