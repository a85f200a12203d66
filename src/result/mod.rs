//! The result model: the versioned, serialisable record of what a run measured. Every
//! reporter (terminal, JSON, CSV, HTML, compare) renders from these types and nothing
//! else, so a chart can never disagree with the JSON. The wire format is documented in
//! docs/result-schema.md; changing a field's meaning means bumping [`SCHEMA`].

pub mod smb;

use serde::{Deserialize, Serialize};

/// Schema identifier written at the top of every result file.
pub const SCHEMA: &str = "ioscope.result/1";

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
    /// Environment behind the numbers (kernel, CPU, devices); filled by sysinfo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<serde_json::Value>,
    /// The effective plan, so the run can be repeated exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Latency-vs-load curve, for `ioscope curve`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<Curve>,
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
    pub name: String,
    /// Target(s) as given, comma-separated when the run used several.
    pub target: String,
    /// Engine actually used (after any fallback).
    pub engine: String,
    /// The effective workload settings (the first workload when several ran; all of
    /// them are in `workloads`).
    pub workload: serde_json::Value,
    /// Measured seconds (warm-up excluded).
    pub duration_s: f64,
    pub warmup_s: f64,
    #[serde(default)]
    pub interrupted: bool,
    /// Why the run ended: "duration", "passes", "interrupted", "error".
    pub end_reason: String,
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
            name: String::new(),
            target: String::new(),
            engine: String::new(),
            workload: serde_json::Value::Null,
            duration_s: 0.0,
            warmup_s: 0.0,
            interrupted: false,
            end_reason: String::new(),
            workers: 0,
            streams: 0,
            totals: Totals::default(),
            cpu: Cpu::default(),
            workloads: Vec::new(),
            intervals: Vec::new(),
            schedule: None,
            verify: None,
            error_samples: Vec::new(),
            smb: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadResult {
    pub name: String,
    pub target: String,
    pub totals: Totals,
}

/// Totals of a run or workload, all operations together and split by direction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    #[serde(flatten)]
    pub all: OpTotals,
    pub read: OpTotals,
    pub write: OpTotals,
    /// Average operations in flight (Little's law: summed service time / elapsed).
    pub queue_depth: f64,
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
    /// Latency as the application sees it (from the intended issue time).
    pub latency_us: LatencyStats,
    /// Service time (from the actual submission). Equal to `latency_us` in closed loop.
    pub service_us: LatencyStats,
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
    pub iops: f64,
    pub mbps: f64,
    pub read_pct: f64,
    pub errors: u64,
    pub lat_us: IntervalLatency,
    pub read_lat_us: IntervalLatency,
    pub write_lat_us: IntervalLatency,
    pub queue_depth: f64,
    pub cpu: Cpu,
    /// Open-loop runs: issue lateness against the intended times in this interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_us: Option<IntervalLatency>,
    /// Open-loop runs: most I/Os due but not yet issued in this interval, estimated
    /// as the interval's maximum lateness × the requested rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog_ios: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalLatency {
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub stddev: f64,
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
