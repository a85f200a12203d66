//! Command-line definitions (clap): the edge of the program. Flags are parsed into
//! typed values once, by the value parsers in [`values`] (the plan's unit parsers, so
//! a refused value names its flag and the text typed), and [`build`] turns them into
//! an [`app::Invocation`](crate::app::Invocation) that holds no clap type. Shell
//! completions and the man page come from the same definitions ([`generate`]).
//! Apart from reading a job file named on the command line, nothing here does I/O.

pub mod build;
pub mod foreign;
pub mod generate;
pub mod net;
pub mod settings;
pub mod to_plan;
pub mod values;

use crate::plan::model::{Arrival, Distribution, EngineKind, Pacing, Rate, SeqLayout};
use crate::plan::tuning::SyncKind;
use crate::report::export::{Form, Place};
use crate::run::worker::ErrorPolicy;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use values::{CpuList, Rw};

/// Storage performance measurement that tells the truth.
#[derive(Debug, Parser)]
#[command(name = "ioscope", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run workloads from flags or from a job file.
    Run(Box<RunArgs>),
    /// Replay a block trace or I/O log against a target, each I/O at its recorded
    /// time (fio I/O logs, blktrace, SNIA/MSR CSV, time_s,op,offset,bytes CSV):
    /// `ioscope replay TRACE --target FILE`. Takes every `run` flag; without
    /// --duration or --passes it replays the whole trace, with no warm-up, at most
    /// --qd I/Os in flight (default 64).
    Replay(Box<ReplayArgs>),
    /// A quick look at a filesystem or device: 4 KiB random read/write, 1 MiB
    /// sequential read/write, a few seconds each.
    Quick(Box<QuickArgs>),
    /// Run a fio job file or fio command-line options: `ioscope fio --name=x --rw=randread …`,
    /// `ioscope fio job.fio`. ioscope's own --json/--html/--csv/--output-format/--target/
    /// --ignore-unsupported may be mixed in.
    #[command(disable_help_flag = true)]
    Fio(ForeignArgs),
    /// Run a vdbench parameter file: `ioscope vdbench -f PARMFILE`.
    #[command(disable_help_flag = true, after_long_help = VDBENCH_HELP)]
    Vdbench(ForeignArgs),
    /// Run a diskspd command line: `ioscope diskspd -b8K -d60 -o4 -t2 -r -w30 FILE`.
    #[command(disable_help_flag = true, after_long_help = DISKSPD_HELP)]
    Diskspd(ForeignArgs),
    /// Run a SQLIO command line: `ioscope sqlio -kR -s10 -o16 -b8 -frandom FILE`.
    #[command(disable_help_flag = true, after_long_help = SQLIO_HELP)]
    Sqlio(ForeignArgs),
    /// Print the native TOML (or a fio job) equivalent of a job file or command line.
    Convert(ConvertArgs),
    /// Latency against load (vdbench's iorate=curve): a max-rate run, then open-loop
    /// runs at fractions of it; optionally find the highest rate within a latency bound.
    Curve(Box<CurveArgs>),
    /// SNIA PTS test matrices (iops, throughput, latency) with preconditioning and
    /// steady-state rounds.
    Pts(Box<PtsArgs>),
    /// Repeat the runs recorded in a result (its effective plan), e.g. after a tuning
    /// change, for `ioscope compare`.
    Rerun(RerunArgs),
    /// Render a result JSON as HTML (default), CSV, Markdown or fio JSON.
    Report(ReportArgs),
    /// Compare results side by side, with ratios and a verdict per metric.
    Compare(CompareArgs),
    /// Combine results of separate hosts or processes that ran one workload between
    /// them: percentiles exactly those of all their I/Os (their raw histograms added),
    /// rates over the time they all ran, each source kept as a part.
    Merge(MergeArgs),
    /// Read back a journaled data set and report lost, misplaced and corrupted writes.
    Verify(VerifyArgs),
    /// Show the environment behind the numbers (kernel, CPU, device queue settings,
    /// filesystem, multipath) and tuning advice. Changes nothing.
    Sysinfo(SysinfoArgs),
    /// Network throughput and latency (iperf3/netperf style): `net serve`, `net run`.
    Net(net::NetArgs),
    /// Print a shell completion script: `ioscope completions bash > /etc/bash_completion.d/ioscope`.
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per subcommand into --dir.
    Man(ManArgs),
}

#[derive(Debug, Args, Clone)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args, Clone)]
pub struct ManArgs {
    /// Write ioscope.1 and one ioscope-SUBCOMMAND.1 per subcommand into this
    /// directory instead of printing ioscope.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The metric steady state tracks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SteadyMetricArg {
    Iops,
    Mbps,
    #[value(name = "mean_us")]
    MeanUs,
    #[value(name = "p99_us")]
    P99Us,
}

/// The SNIA PTS test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PtsTestArg {
    Iops,
    Throughput,
    Latency,
}

/// PTS preconditioning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PreconditionArg {
    /// 2x the capacity in 128 KiB sequential writes.
    Auto,
    Skip,
}

/// What `convert` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConvertForm {
    Toml,
    Fio,
}

#[derive(Debug, Args, Clone)]
pub struct SysinfoArgs {
    /// Files, directories or block devices to describe.
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,
    /// Queue depth you plan to run at (checked against nr_requests).
    #[arg(long, value_name = "N", value_parser = values::qd)]
    pub qd: Option<u32>,
    /// Print the environment as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Output settings shared by every command that measures.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Write the result JSON here (atomically); intervals stream to PATH.intervals.jsonl.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report with charts here.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Write runs and intervals as CSV here.
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// Write fio-compatible JSON (fio 3.x layout) here.
    #[arg(long, value_name = "PATH")]
    pub fio_json: Option<PathBuf>,
    /// Print a Markdown summary table at the end (for pasting into a ticket).
    #[arg(long)]
    pub markdown: bool,
    /// What stdout carries (default text). Any other form makes stdout that document
    /// alone; progress goes nowhere.
    #[arg(long, value_name = "FORMAT", value_parser = values::form(Place::Stdout))]
    pub output_format: Option<&'static Form>,
    /// Print nothing but errors and the final summary.
    #[arg(long, short)]
    pub quiet: bool,
    /// The declared command settings: `--metrics`, `--metrics-per-rank`, `--progress`.
    #[command(flatten)]
    pub command: settings::CommandFlags,
}

/// `ioscope replay TRACE …`: a run whose workload replays TRACE.
#[derive(Debug, Args, Clone)]
pub struct ReplayArgs {
    /// The trace file (for a blktrace: one of its per-CPU files, or their common
    /// name without the .N).
    #[arg(value_name = "TRACE")]
    pub trace: String,
    #[command(flatten)]
    pub run: RunArgs,
}

impl ReplayArgs {
    /// The run it means: the trace as the workload's `trace` setting, the whole
    /// trace (one pass, no warm-up) unless told otherwise, 64 I/Os in flight at most.
    pub fn into_run(self) -> RunArgs {
        use crate::plan::settings::{declared::TRACE, intern, Value};
        let mut a = self.run;
        a.settings.give(&TRACE, Value::Text(intern(&self.trace)));
        if a.duration.is_none() && a.passes.is_none() {
            a.passes = Some(1);
        }
        a.warmup.get_or_insert(0);
        if a.qd.is_empty() {
            a.qd = vec![64];
        }
        a
    }
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Job file: native TOML, fio or vdbench (detected). Flags below override it.
    #[arg(value_name = "JOBFILE")]
    pub job: Option<PathBuf>,
    /// Target: a file, a block device, mem:SIZE, null:SIZE,
    /// sim:SIZE?service=DUR&dist=fixed|exp&servers=N&stall=DUR@PERIOD&error_rate=P,
    /// nbd://HOST[:PORT][/EXPORT], nbd+unix:///EXPORT?socket=PATH or
    /// iscsi://HOST[:PORT]/IQN/LUN (CHAP from IOSCOPE_ISCSI_USER/IOSCOPE_ISCSI_PASSWORD),
    /// smb://[USER@]HOST[:PORT]/SHARE/PATH (password from IOSCOPE_SMB_PASSWORD or
    /// --credentials), nfs://HOST[:PORT]/EXPORT/PATH[?mountport=N] (libnfs, NFSv3).
    /// Repeatable.
    #[arg(long, short = 't', value_name = "PATH")]
    #[arg(help_heading = "Target")]
    pub target: Vec<String>,
    /// Working-set size; a new file target is created at this size.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = values::size)]
    #[arg(help_heading = "Target")]
    pub size: Option<u64>,
    /// Start of the working set within the target.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = values::size_or_zero)]
    #[arg(help_heading = "Target")]
    pub offset: Option<u64>,
    /// O_DIRECT: true or false (default: true where the target supports it).
    #[arg(long, value_name = "BOOL", value_parser = values::boolean)]
    #[arg(help_heading = "Target")]
    pub direct: Option<bool>,
    /// Allow writes to a block device that looks in use (destroys its contents).
    #[arg(long)]
    #[arg(help_heading = "Target")]
    pub force: bool,
    /// Access: read, write, randread, randwrite, rw, randrw; trim, randtrim (discard),
    /// trimwrite, randtrimwrite (discard each range, then write it).
    #[arg(long, value_name = "RW", value_parser = values::rw)]
    #[arg(help_heading = "Workload")]
    pub rw: Option<Rw>,
    /// Percentage of reads for rw/randrw (default 50). A comma list sweeps.
    #[arg(long, value_name = "N", value_delimiter = ',', allow_hyphen_values = true, value_parser = values::read_pct)]
    #[arg(help_heading = "Workload")]
    pub read_pct: Vec<u8>,
    /// Transfer size, e.g. 4k, 1m. A comma list (4k,64k) sweeps.
    #[arg(long, value_name = "SIZE", value_delimiter = ',', allow_hyphen_values = true, value_parser = values::size)]
    #[arg(help_heading = "Workload")]
    pub bs: Vec<u64>,
    /// Operations in flight per stream. A comma list sweeps.
    #[arg(long, value_name = "N", value_delimiter = ',', allow_hyphen_values = true, value_parser = values::qd)]
    #[arg(help_heading = "Workload")]
    pub qd: Vec<u32>,
    /// Independent I/O streams (multiplexed over workers, not one thread each). A
    /// comma list sweeps.
    #[arg(long, value_name = "N", value_delimiter = ',', allow_hyphen_values = true, value_parser = values::streams)]
    #[arg(help_heading = "Workload")]
    pub streams: Vec<u32>,
    /// Offset distribution for random access: uniform, zipf:THETA, pareto:H,
    /// zoned:IO%/RANGE%:… (e.g. zoned:80/10:20/90, the hot-band form),
    /// zoned_abs:IO%/SIZE:… (bands of a length, e.g. zoned_abs:90/1m:10/; a last
    /// band without a size is the rest), or sequence:B,B,…[:stride] (block indices
    /// in order, repeated).
    #[arg(long, value_name = "DIST", value_parser = values::dist)]
    #[arg(help_heading = "Workload")]
    pub dist: Option<Distribution>,
    /// How several sequential streams share the working set: regions (each its own
    /// slice, default) or stride (interleaved: together one sequential sweep).
    #[arg(long, value_name = "LAYOUT", value_parser = values::seq_layout)]
    #[arg(help_heading = "Workload")]
    pub seq_layout: Option<SeqLayout>,
    /// Seed for offsets and data.
    #[arg(long, value_name = "N", value_parser = values::seed)]
    #[arg(help_heading = "Workload")]
    pub seed: Option<u64>,
    /// I/O priority of the workload's worker threads (ioprio_set; fio prioclass/prio):
    /// CLASS[/LEVEL[/HINT]], CLASS rt, be or idle, LEVEL 0 (highest) to 7.
    #[arg(long, value_name = "PRIO", value_parser = values::priority)]
    #[arg(help_heading = "Workload")]
    pub prio: Option<crate::plan::priority::IoPriority>,
    /// A share of I/Os issued at a priority of their own, per io_uring request (fio
    /// cmdprio_percentage/cmdprio_bssplit): [read:|write:][BS:]PCT%PRIO, e.g. 20%rt or
    /// read:64k:25%rt/1. Repeat or comma-separate for several; uring engine only.
    #[arg(long, value_name = "SHARE", value_delimiter = ',', value_parser = values::prio_share)]
    #[arg(help_heading = "Workload")]
    pub cmdprio: Vec<crate::plan::priority::PrioShare>,
    /// Run a fio/vdbench job even though some of its options are not supported
    /// (they are listed as warnings in the output and the result).
    #[arg(long)]
    #[arg(help_heading = "Workload")]
    pub ignore_unsupported: bool,
    /// Measured time (after warm-up), e.g. 30s, 2m.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, value_parser = values::duration_ns)]
    #[arg(help_heading = "Load and timing")]
    pub duration: Option<u64>,
    /// Stop after N full passes over the working set (whichever of duration or passes
    /// comes first).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = values::count)]
    #[arg(help_heading = "Load and timing")]
    pub passes: Option<u64>,
    /// Warm-up time, shown but left out of the totals.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, value_parser = values::duration_ns_or_zero)]
    #[arg(help_heading = "Load and timing")]
    pub warmup: Option<u64>,
    /// Reporting interval (at least 10ms).
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, value_parser = values::interval_ns)]
    #[arg(help_heading = "Load and timing")]
    pub interval: Option<u64>,
    /// Open-loop rate in IOPS for the workload, or max (closed loop, the default).
    #[arg(long, value_name = "IOPS", allow_hyphen_values = true, value_parser = values::rate)]
    #[arg(help_heading = "Load and timing")]
    pub rate: Option<Rate>,
    /// Arrival process with --rate: exponential (Poisson, default) or uniform.
    #[arg(long, value_name = "PROCESS", value_parser = values::arrival)]
    #[arg(help_heading = "Load and timing")]
    pub arrival: Option<Arrival>,
    /// How workers wait for the next intended issue time with --rate: spin (default:
    /// sleep, then busy-wait the last 100 µs; least jitter), hybrid (busy-wait a margin
    /// learned from the host's wake-up lateness) or sleep (least CPU).
    #[arg(long, value_name = "MODE", value_parser = values::pacing)]
    #[arg(help_heading = "Load and timing")]
    pub pacing: Option<Pacing>,
    /// Repeat the run in rounds until the tracked metric is steady (SNIA PTS rule:
    /// the last 5 rounds within 20% of their average, slope under 10%), or
    /// --max-rounds pass.
    #[arg(long)]
    #[arg(help_heading = "Load and timing")]
    pub steady_state: bool,
    /// Metric tracked for steady state: iops (default), mbps, mean_us, p99_us.
    #[arg(long, value_name = "METRIC", value_enum)]
    #[arg(help_heading = "Load and timing")]
    pub steady_metric: Option<SteadyMetricArg>,
    /// Most rounds for --steady-state (default 25).
    #[arg(long, value_name = "N")]
    #[arg(help_heading = "Load and timing")]
    pub max_rounds: Option<usize>,
    /// Stamp every written unit and check every read of one; mismatches are
    /// classified (corrupted, misplaced, stale, never-written) and exit with 3.
    #[arg(long)]
    #[arg(help_heading = "Data and verification")]
    pub verify: bool,
    /// After each run, read back every written unit and check it.
    #[arg(long)]
    #[arg(help_heading = "Data and verification")]
    pub verify_after: bool,
    /// Crash journal directory: write intents and completions durably so
    /// `ioscope verify --journal DIR` finds lost writes after a crash; a later run with
    /// the same journal continues it.
    #[arg(long, value_name = "DIR")]
    #[arg(help_heading = "Data and verification")]
    pub journal: Option<PathBuf>,
    /// Dedup ratio of written data (vdbench semantics: about 1/R of units unique).
    #[arg(long, value_name = "R", allow_hyphen_values = true, value_parser = values::ratio)]
    #[arg(help_heading = "Data and verification")]
    pub dedup_ratio: Option<f64>,
    /// Unit of deduplication and verification (default 4k).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = values::size)]
    #[arg(help_heading = "Data and verification")]
    pub dedup_unit: Option<u64>,
    /// Compression ratio of written data (each unit compresses about C:1).
    #[arg(long, value_name = "C", allow_hyphen_values = true, value_parser = values::ratio)]
    #[arg(help_heading = "Data and verification")]
    pub compress_ratio: Option<f64>,
    /// What an I/O error does: stop (default), continue, or retry=N.
    #[arg(long, value_name = "POLICY", value_parser = values::on_error)]
    #[arg(help_heading = "Data and verification")]
    pub on_error: Option<ErrorPolicy>,
    /// Open targets with O_DSYNC: every write is stable when it completes.
    #[arg(long)]
    #[arg(help_heading = "Data and verification")]
    pub write_through: bool,
    /// Flush after every N writes of each stream (fio fsync=N); counted apart.
    #[arg(long, value_name = "N", value_parser = values::sync_every)]
    #[arg(help_heading = "Data and verification")]
    pub sync_every: Option<u32>,
    /// The flush --sync-every issues: fsync (default), fdatasync, or
    /// sync_file_range:FLAGS over the bytes written since (FLAGS: write, wait_before, wait_after).
    #[arg(long, value_name = "KIND", value_parser = values::sync_kind)]
    #[arg(help_heading = "Data and verification")]
    pub sync_kind: Option<SyncKind>,
    /// The declared settings' flags (`plan::settings`).
    #[command(flatten)]
    pub settings: settings::SettingFlags,
    #[command(flatten)]
    pub output: OutputArgs,
    /// A further path to the first target's storage (nbd:// or iscsi://, the same
    /// device; smb://, another address of the same server, as a multichannel
    /// channel); --target is path 0. Repeatable.
    #[arg(long = "path", value_name = "URI")]
    #[arg(help_heading = "Network and paths")]
    pub path: Vec<String>,
    /// How I/O is spread over the paths: rr[:N] (switch every N I/Os, default rr:1),
    /// queue (fewest outstanding), service-time, failover.
    #[arg(long, value_name = "POLICY", value_parser = values::path_policy)]
    #[arg(help_heading = "Network and paths")]
    pub path_policy: Option<crate::plan::paths::PathPolicy>,
    /// With --path-policy failover, when I/O returns to a better path that came back:
    /// immediate (default), manual, or after it has been up for DUR.
    #[arg(long, value_name = "WHEN", value_parser = values::failback)]
    #[arg(help_heading = "Network and paths")]
    pub failback: Option<crate::plan::paths::Failback>,
    /// How often a failed path is probed (default 1s).
    #[arg(long, value_name = "DUR", value_parser = values::duration_ns)]
    #[arg(help_heading = "Network and paths")]
    pub path_retry: Option<u64>,
    /// SMB3 multichannel: N channels bound to the smb:// target's one session, over
    /// the --path addresses given or else the interfaces the server advertises; each
    /// channel is a path (policies, failover, per-path figures). 1 to 32.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=32))]
    #[arg(help_heading = "Network and paths")]
    pub channels: Option<u32>,
    /// Connections (NBD multi-conn, iSCSI sessions) each worker opens to every
    /// network target; streams are spread over them. NBD needs a server that
    /// advertises multi-conn for N > 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    #[arg(help_heading = "Network and paths")]
    pub connections: Option<u32>,
    /// Per-I/O deadline, e.g. 500ms or 5s: an I/O unanswered this long counts as a
    /// timeout error (re-issued under --on-error retry=N where the engine allows).
    #[arg(long, value_name = "DUR", value_parser = values::duration_ns)]
    #[arg(help_heading = "Network and paths")]
    pub io_timeout: Option<u64>,
    /// Credentials file for smb:// targets and iSCSI CHAP (smbclient's format:
    /// `username = …`, `password = …`, optional `domain = …`; mode 0600). Default:
    /// IOSCOPE_SMB_USER/IOSCOPE_SMB_PASSWORD, IOSCOPE_ISCSI_USER/IOSCOPE_ISCSI_PASSWORD.
    #[arg(long, value_name = "FILE")]
    #[arg(help_heading = "Network and paths")]
    pub credentials: Option<PathBuf>,
    /// Require SMB encryption: refuse a session the server will not encrypt.
    #[arg(long)]
    #[arg(help_heading = "Network and paths")]
    pub smb_encrypt: bool,
    /// Under mpirun (built with the `mpi` feature): how the ranks divide the plan:
    /// `all` runs every workload on every rank, `streams` divides each workload's
    /// streams among them; rates are divided either way; a trace is shared out by
    /// 10 ms time slices, or with `devices` one traced device per rank (docs/mpi.md).
    #[arg(long, value_name = "HOW", default_value = "all", value_parser = values::split)]
    #[arg(help_heading = "Multi-host")]
    pub split: crate::cluster::Split,
    /// How I/O is issued: auto, uring, sync, null, mem, sim, nbd, iscsi, smb, nfs; or
    /// what stands for it: filecreate, filestat, filedelete, dircreate, dirstat,
    /// dirdelete (one call per file of a files:DIR?count=N target), cpuio (burn CPU,
    /// with --cpuload), falloc, ftruncate, page_fault (a fresh anonymous mapping per
    /// worker, the size of a null:SIZE target), exec (runs --exec-program), e4defrag
    /// (EXT4_IOC_MOVE_EXT onto a job file's defrag_donor); net
    /// (fio's net engine: each workload one end of a tcp://, udp://, unix:// or
    /// vsock:// target, docs/net.md).
    #[arg(long, value_name = "ENGINE", value_parser = values::engine)]
    #[arg(help_heading = "Engine and CPUs")]
    pub engine: Option<EngineKind>,
    /// Pin workers to these CPUs, e.g. 0-3,6.
    #[arg(long, value_name = "LIST", value_parser = values::cpus)]
    #[arg(help_heading = "Engine and CPUs")]
    pub cpus: Option<CpuList>,
    /// Worker threads (default: one per allowed CPU, at most one per stream).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = values::workers)]
    #[arg(help_heading = "Engine and CPUs")]
    pub workers: Option<usize>,
    /// io_uring: register the I/O buffers and issue fixed reads/writes (fio fixedbufs).
    #[arg(long)]
    #[arg(help_heading = "io_uring")]
    pub fixed_bufs: bool,
    /// io_uring: register the targets' descriptors (fio registerfiles; default true).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", value_parser = values::boolean)]
    #[arg(help_heading = "io_uring")]
    pub register_files: Option<bool>,
    /// io_uring: a kernel thread polls the submission queue (fio sqthread_poll).
    #[arg(long)]
    #[arg(help_heading = "io_uring")]
    pub sqpoll: bool,
    /// io_uring: CPU for the submission polling thread (fio sqthread_poll_cpu); implies
    /// --sqpoll.
    #[arg(long, value_name = "CPU", value_parser = values::cpu_number)]
    #[arg(help_heading = "io_uring")]
    pub sqpoll_cpu: Option<u32>,
    /// io_uring: polled completions (fio hipri); needs O_DIRECT and a device with
    /// poll queues.
    #[arg(long)]
    #[arg(help_heading = "io_uring")]
    pub hipri: bool,
    /// io_uring: requests queued before they are submitted (fio iodepth_batch_submit).
    #[arg(long, value_name = "N", value_parser = values::qd)]
    #[arg(help_heading = "io_uring")]
    pub batch_submit: Option<u32>,
    /// io_uring: completions to wait for at least (fio iodepth_batch_complete_min).
    #[arg(long, value_name = "N", value_parser = values::qd)]
    #[arg(help_heading = "io_uring")]
    pub batch_complete_min: Option<u32>,
    /// io_uring: completions reaped at most per wait (fio iodepth_batch_complete_max).
    #[arg(long, value_name = "N", value_parser = values::qd)]
    #[arg(help_heading = "io_uring")]
    pub batch_complete_max: Option<u32>,
    /// filestat/dirstat: the call timed: stat (default), lstat or statx.
    #[arg(long, value_name = "CALL", value_parser = values::stat_call)]
    #[arg(help_heading = "Operation engines")]
    pub stat_type: Option<crate::plan::engine_opts::StatCall>,
    /// cpuio: percentage of each stream's time spent burning CPU (1-100).
    #[arg(long, value_name = "PCT", value_parser = values::cpu_load)]
    #[arg(help_heading = "Operation engines")]
    pub cpuload: Option<u8>,
    /// cpuio: CPU time burnt per operation (default 50ms).
    #[arg(long, value_name = "DUR", value_parser = values::duration_ns)]
    #[arg(help_heading = "Operation engines")]
    pub cpuchunks: Option<u64>,
    /// cpuio: how CPU is burnt: noop (a tight loop, default) or qsort (sorting).
    #[arg(long, value_name = "MODE", value_parser = values::cpu_mode)]
    #[arg(help_heading = "Operation engines")]
    pub cpumode: Option<crate::plan::engine_opts::CpuMode>,
    /// exec: the program to run for the run's duration.
    #[arg(long, value_name = "PROGRAM")]
    #[arg(help_heading = "Operation engines")]
    pub exec_program: Option<String>,
    /// exec: its arguments, split at white space (as fio's `arguments`).
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    #[arg(help_heading = "Operation engines")]
    pub exec_args: Option<String>,
    /// exec: after the run, SIGTERM, then this long before SIGKILL (default 1s).
    #[arg(long, value_name = "DUR", value_parser = values::duration_ns_or_zero)]
    #[arg(help_heading = "Operation engines")]
    pub exec_grace: Option<u64>,
    /// exec: its output goes to PREFIX.stdout and PREFIX.stderr (default: to
    /// ioscope's standard error).
    #[arg(long, value_name = "PREFIX")]
    #[arg(help_heading = "Operation engines")]
    pub exec_output: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct QuickArgs {
    /// A directory (scratch file inside it), a file, or a block device. Default: a
    /// scratch file in the system temp directory.
    #[arg(value_name = "TARGET")]
    pub target: Option<PathBuf>,
    /// Seconds per test (measured), default 4.
    #[arg(long, value_name = "DUR", default_value = "4s", allow_hyphen_values = true, value_parser = values::duration_ns)]
    pub duration: u64,
    /// Scratch file size (default 1g, less when space is short).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = values::size)]
    pub size: Option<u64>,
    /// Allow the write tests on a block device (destroys its contents).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of a foreign tool, passed through as given.
#[derive(Debug, Args, Clone)]
pub struct ForeignArgs {
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    pub args: Vec<String>,
}

impl ForeignArgs {
    /// `--help` given (the tools' own options never take that spelling; diskspd's
    /// `-h` is write-through, so only the long form asks for help), or `-?`.
    pub fn asks_help(&self) -> bool {
        self.args.iter().any(|a| a == "--help") || self.args == ["-?"]
    }
}

/// What `ioscope vdbench --help` adds below the arguments.
const VDBENCH_HELP: &str = "\
vdbench's command line, as vdbench reads it:
  -f PARMFILE      the parameter file (sd/wd/rd, hd, include=)
  name=value       the value of $name (and !name) in the file
  -v               data validation (ioscope's --verify)
  -j               validation with a journal (kept in the -o directory, else ./output)
  -e S, -i S, -w S every rd's elapsed, interval and warm-up
  -o DIR           vdbench's summary.html, totals.html and flatfile.html, in DIR
  -m N             accepted without effect (vdbench's JVMs)
  -vr -vw -vt -jr -jn -jm -s -k -t   listed as unsupported (refused unless
                   --ignore-unsupported)
ioscope's own options may be mixed in: --json/--html/--csv/--fio-json PATH,
--output-format text|json|fio-json, --target PATH (every sd's lun),
--ignore-unsupported, --force, --split all|streams.
Every parameter: docs/compat-vdbench.md. `ioscope convert vdbench -f PARMFILE`
prints the native job file it runs.";

/// What `ioscope diskspd --help` adds below the arguments.
const DISKSPD_HELP: &str = "\
diskspd's switches (-b -d -W -o -t -r -s -w -S -c -f -B -g -a -n -D -z -L ...)
then one or more targets. Every switch: docs/compat-vdbench.md (diskspd section);
one it does not know is an error, one it does not reproduce is listed.
ioscope's own options may be mixed in: --json/--html/--csv/--fio-json PATH,
--output-format text|json|fio-json, --target PATH (replaces every target,
e.g. a #N physical disk), --ignore-unsupported, --force.";

/// What `ioscope sqlio --help` adds below the arguments.
const SQLIO_HELP: &str = "\
SQLIO's switches (-k -s -f -o -b -t -B -L -F PARAMFILE ...) then a target; the
defaults are SQLIO's (-kW -t1 -s30 -f64 -b2 -BN). Every switch:
docs/compat-vdbench.md (SQLIO section).
ioscope's own options may be mixed in: --json/--html/--csv/--fio-json PATH,
--output-format text|json|fio-json, --target PATH, --ignore-unsupported, --force.";

#[derive(Debug, Args, Clone)]
pub struct ConvertArgs {
    /// Output form: toml or fio.
    #[arg(long, value_name = "FORM", value_enum, default_value = "toml")]
    pub to: ConvertForm,
    /// Replaces every target of a diskspd or SQLIO command line, or every lun of
    /// a vdbench file (their Windows paths name nothing here), as `ioscope diskspd
    /// --target` and `ioscope vdbench --target` do.
    #[arg(long, value_name = "PATH")]
    pub target: Option<String>,
    /// A job file (fio, vdbench, native) or a foreign command line (fio …, diskspd …).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true,
        value_name = "FILE|ARGS"
    )]
    pub input: Vec<String>,
}

#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// A result JSON written by --json.
    #[arg(value_name = "RESULT")]
    pub result: PathBuf,
    /// Output file; the form follows --format, or the extension (.html, .csv, .md, .json).
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// The form to render (default: from the output's extension, else html).
    #[arg(long, value_name = "FORMAT", value_parser = values::form(Place::Report))]
    pub format: Option<&'static Form>,
}

#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    /// Two or more result JSON files; the first is the baseline.
    #[arg(value_name = "RESULT", num_args = 2.., required = true)]
    pub results: Vec<PathBuf>,
    /// Also write an HTML comparison with overlaid timelines.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Args, Clone)]
pub struct MergeArgs {
    /// Two or more result JSON files (written by --json), merged run by run.
    #[arg(value_name = "RESULT", num_args = 2.., required = true)]
    pub results: Vec<PathBuf>,
    /// Write the merged result here (atomically); without it, to stdout.
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args, Clone)]
pub struct CurveArgs {
    /// Percentages of the measured maximum to run at (default 10,50,70,80,90,100; none
    /// by default when --max-latency is given).
    #[arg(long, value_name = "LIST", value_delimiter = ',', allow_hyphen_values = true, value_parser = values::percent)]
    pub points: Option<Vec<f64>>,
    /// Stop the curve at the first point whose latency exceeds this, e.g. p99=2ms.
    #[arg(long, value_name = "PCT=DUR", value_parser = values::latency_bound)]
    pub stop_latency: Option<crate::app::LatencyBound>,
    /// Find the highest rate whose latency percentile stays within this bound, e.g.
    /// p99=0.5ms (bracketing and bisection to within 2% of rate).
    #[arg(long, value_name = "PCT=DUR", value_parser = values::latency_bound)]
    pub max_latency: Option<crate::app::LatencyBound>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args, Clone)]
pub struct PtsArgs {
    /// Which test: iops, throughput or latency.
    #[arg(value_name = "TEST", value_enum)]
    pub test: PtsTestArg,
    /// The device or file under test.
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// Length of each matrix cell in a round (PTS: 1m).
    #[arg(long, value_name = "DUR", default_value = "1m", allow_hyphen_values = true, value_parser = values::duration_ns)]
    pub round: u64,
    /// Preconditioning: auto (2x the capacity in 128 KiB sequential writes) or skip.
    #[arg(long, value_name = "MODE", value_enum, default_value = "auto")]
    pub precondition: PreconditionArg,
    /// Bound the preconditioning writes for large targets, e.g. 64g.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = values::size)]
    pub precondition_max: Option<u64>,
    /// Most steady-state rounds (PTS: 25).
    #[arg(long, value_name = "N", default_value_t = 25)]
    pub max_rounds: usize,
    /// Working-set size (creates a file target at this size if missing).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = values::size)]
    pub size: Option<u64>,
    /// Engine (default auto).
    #[arg(long, value_name = "ENGINE", value_parser = values::engine)]
    pub engine: Option<EngineKind>,
    /// Allow writes to a block device that looks in use (destroys its contents).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args, Clone)]
pub struct VerifyArgs {
    /// The journal directory given to --journal.
    #[arg(long, value_name = "DIR")]
    pub journal: PathBuf,
    /// Read this target instead of the one recorded in the journal (e.g. a renamed
    /// device).
    #[arg(long, value_name = "PATH")]
    pub target: Option<String>,
    /// Write the verification result as JSON here.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Args, Clone)]
pub struct RerunArgs {
    /// A result JSON written by --json.
    #[arg(value_name = "RESULT")]
    pub result: PathBuf,
    /// Point the plan's target(s) elsewhere, in order.
    #[arg(long, value_name = "PATH")]
    pub target: Vec<String>,
    /// Allow writes to a block device that looks in use (destroys its contents).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}
