//! What a command was asked to do, in typed values and without any command-line
//! parser in sight: the binary's `cli` module parses flags once (sizes, durations,
//! formats, policies are checked there, each error naming its flag) and builds one of
//! these; [`execute`](super::execute) runs it.

use crate::plan::model::{EngineKind, Plan};
use crate::report::export::Format;
use crate::result::RunResult;
use crate::run::RunOptions;
use std::path::PathBuf;

/// Where a measuring command writes its results.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// Result JSON (rewritten atomically after every run); intervals stream beside it.
    pub json: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub fio_json: Option<PathBuf>,
    /// A Markdown summary at the end of stdout.
    pub markdown: bool,
    /// A document stdout carries instead of text (json or fio-json): stdout is then
    /// that document alone.
    pub stdout_doc: Option<Format>,
    /// fio's `--output FILE` (`ioscope fio` only): what stdout would carry goes there.
    pub stdout_file: Option<PathBuf>,
    /// Nothing but errors and the final summary.
    pub quiet: bool,
    /// Leave out the per-run summaries (`quick` prints its own table).
    pub no_run_summaries: bool,
    /// The command settings (`--metrics`, `--progress`; `plan::settings::Scope::Command`).
    pub settings: crate::plan::settings::CommandSettings,
    /// vdbench's `-o DIR`: its `summary.html`, `totals.html` and `flatfile.html`
    /// (`report::vdbench`) written there, rewritten after every run.
    pub vdbench_dir: Option<PathBuf>,
}

impl Output {
    /// True when stdout must carry only a document.
    pub fn stdout_is_doc(&self) -> bool {
        self.stdout_doc.is_some()
    }

    /// The output files, each with the flag that named it and its format.
    pub fn files(&self) -> [(&'static str, Option<&PathBuf>, Format); 4] {
        [
            ("--json", self.json.as_ref(), Format::Json),
            ("--html", self.html.as_ref(), Format::Html),
            ("--csv", self.csv.as_ref(), Format::Csv),
            ("--fio-json", self.fio_json.as_ref(), Format::FioJson),
        ]
    }
}

/// One command, ready to execute.
#[derive(Debug)]
pub enum Invocation {
    Run(RunInvocation),
    Curve(CurveInvocation),
    Pts(PtsInvocation),
    Quick(QuickInvocation),
    Foreign(ForeignInvocation),
    Rerun(RerunInvocation),
    Convert(ConvertInvocation),
    Report(ReportInvocation),
    Compare(CompareInvocation),
    Merge(MergeInvocation),
    Verify(VerifyInvocation),
    Sysinfo(SysinfoInvocation),
}

/// `ioscope run`: a plan (from flags, or a job file with flags over it).
#[derive(Debug)]
pub struct RunInvocation {
    pub plan: Plan,
    pub opts: RunOptions,
    /// `--steady-state`: repeat the (single) run in rounds until steady.
    pub steady: Option<Steady>,
    pub output: Output,
    /// The command line, recorded in the result.
    pub command: Vec<String>,
}

/// Steady-state rounds.
#[derive(Debug, Clone, Copy)]
pub struct Steady {
    pub metric: Metric,
    pub max_rounds: Option<usize>,
}

/// A latency bound: which statistic, and its limit in microseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyBound {
    pub name: String,
    pub bound_us: f64,
}

/// `ioscope curve`.
#[derive(Debug)]
pub struct CurveInvocation {
    pub run: RunInvocation,
    /// % of the measured maximum (None: the default points).
    pub points: Option<Vec<f64>>,
    pub stop_latency: Option<LatencyBound>,
    pub max_latency: Option<LatencyBound>,
}

/// Which SNIA PTS test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PtsTest {
    Iops,
    Throughput,
    Latency,
}

impl PtsTest {
    pub fn name(self) -> &'static str {
        match self {
            PtsTest::Iops => "iops",
            PtsTest::Throughput => "throughput",
            PtsTest::Latency => "latency",
        }
    }
}

/// `ioscope pts`.
#[derive(Debug)]
pub struct PtsInvocation {
    pub test: PtsTest,
    pub target: String,
    pub round_ns: u64,
    /// Precondition (2× capacity of 128 KiB sequential writes) before the rounds.
    pub precondition: bool,
    pub precondition_max_bytes: Option<u64>,
    pub max_rounds: usize,
    pub size_bytes: Option<u64>,
    pub engine: EngineKind,
    pub force: bool,
    pub output: Output,
    pub command: Vec<String>,
}

/// `ioscope quick`.
#[derive(Debug)]
pub struct QuickInvocation {
    pub target: Option<PathBuf>,
    pub duration_ns: u64,
    pub size_bytes: Option<u64>,
    pub force: bool,
    pub output: Output,
    pub command: Vec<String>,
}

/// `ioscope fio|vdbench|diskspd|sqlio ARGS…`: the foreign arguments, and ioscope's own
/// options found among them.
#[derive(Debug)]
pub struct ForeignInvocation {
    pub tool: Tool,
    pub args: Vec<String>,
    pub target: Option<String>,
    pub ignore_unsupported: bool,
    pub force: bool,
    pub output: Output,
    pub command: Vec<String>,
}

/// `ioscope rerun`.
#[derive(Debug)]
pub struct RerunInvocation {
    pub result: PathBuf,
    pub targets: Vec<String>,
    pub force: bool,
    pub output: Output,
    pub command: Vec<String>,
}

/// What `convert` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvertTo {
    Toml,
    Fio,
}

/// `ioscope convert`.
#[derive(Debug)]
pub struct ConvertInvocation {
    pub to: ConvertTo,
    /// A job file, or a foreign command line starting with its tool's name.
    pub input: Vec<String>,
    /// `--target`: replaces every target of a diskspd or SQLIO line.
    pub target: Option<String>,
}

/// `ioscope report`.
#[derive(Debug)]
pub struct ReportInvocation {
    pub result: PathBuf,
    pub output: Option<PathBuf>,
    /// None: from the output's extension, else HTML.
    pub format: Option<Format>,
}

/// `ioscope compare`.
#[derive(Debug)]
pub struct CompareInvocation {
    pub results: Vec<PathBuf>,
    pub html: Option<PathBuf>,
}

/// `ioscope merge`: results combined run by run (`app::merge`).
#[derive(Debug)]
pub struct MergeInvocation {
    pub results: Vec<PathBuf>,
    /// None: the merged result goes to stdout.
    pub output: Option<PathBuf>,
    pub command: Vec<String>,
}

/// `ioscope verify`.
#[derive(Debug)]
pub struct VerifyInvocation {
    pub journal: PathBuf,
    pub target: Option<String>,
    pub json: Option<PathBuf>,
}

/// `ioscope sysinfo`.
#[derive(Debug)]
pub struct SysinfoInvocation {
    pub targets: Vec<String>,
    pub qd: Option<u32>,
    pub json: bool,
}

/// Which foreign tool's language the arguments are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Fio,
    Vdbench,
    Diskspd,
    Sqlio,
}

/// The metric tracked for steady state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Metric {
    #[default]
    Iops,
    Mbps,
    MeanUs,
    P99Us,
}

impl Metric {
    /// The name recorded in the result (`steady_state.metric`).
    pub fn name(self) -> &'static str {
        match self {
            Metric::Iops => "iops",
            Metric::Mbps => "mbps",
            Metric::MeanUs => "mean_us",
            Metric::P99Us => "p99_us",
        }
    }

    /// The metric's value in a run.
    pub fn of(self, r: &RunResult) -> f64 {
        let t = &r.totals.all;
        match self {
            Metric::Iops => t.iops,
            Metric::Mbps => t.mbps,
            Metric::MeanUs => t.latency_us.mean,
            Metric::P99Us => t.latency_us.p99,
        }
    }
}
