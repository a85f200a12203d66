//! The workload model: what to run, independent of how it was written down (flags,
//! native TOML, fio, vdbench, diskspd) and of how it will be executed. Every front end
//! produces a [`Plan`]; the runner consumes it. It is plain data, serialisable, so a
//! result can carry the exact effective plan and `ioscope rerun` can repeat it.

use crate::vocab::skip::{is_zero, is_zero_i64};
use serde::{Deserialize, Serialize};

pub use super::engine_kind::EngineKind;
pub use super::outputs::{DedupSet, FioLogs};
// The value types the result's workload echo shares with the plan, declared once in
// `vocab`; the plan's own checks of them against a workload (`misfit`) are below.
pub use crate::vocab::{
    AccessPattern, Arrival, BlockSizes, Distribution, DistributionError, Flow, Op, Pauses,
    Priorities, Rate, SeqLayout, Sprandom, TrimMode, Zbd, Zone, ZoneBytes, Zones,
};

/// Everything one invocation will do: targets and the runs that use them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub targets: Vec<TargetSpec>,
    pub runs: Vec<RunSpec>,
    /// Notes for the user that do not stop the plan (e.g. ignored foreign options).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Write content and verification asked for by the job description (command-line
    /// flags override these).
    #[serde(default, skip_serializing_if = "DataSettings::is_default")]
    pub data: DataSettings,
}

/// Write content and verification settings a job description carries (vdbench's
/// compratio/dedupratio/validate/journal, fio's verify and buffer percentages).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DataSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_unit_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compress_ratio: Option<f64>,
    /// Stamp and check every unit.
    #[serde(default)]
    pub verify: bool,
    /// Read everything back after each run.
    #[serde(default)]
    pub verify_after: bool,
    /// Crash journal directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<String>,
    /// Writes carry this pattern instead of generated content (fio's
    /// `verify_pattern`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<super::fill::FillPattern>,
    /// Duplicates repeat units of a fixed working set rather than recent writes
    /// (fio's `dedupe_mode=working_set`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_set: Option<DedupSet>,
}

impl DataSettings {
    pub fn is_default(&self) -> bool {
        *self == DataSettings::default()
    }
}

/// Where I/O goes, as the user named it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetSpec {
    /// Short name workloads refer to ("t0", or the vdbench sd name).
    pub name: String,
    /// The target as written: a path, `mem:1g`, `null:1g`, `sim:1g?service=10us`.
    pub uri: String,
    /// Size to create a new file with, or to use of an existing target. `None` means
    /// the target's own size (an existing file or a device).
    pub size_bytes: Option<u64>,
    /// O_DIRECT: `None` = on where the target supports it.
    pub direct: Option<bool>,
    /// Further paths to the same storage and how I/O is spread over them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multipath: Option<super::paths::MultipathSpec>,
    /// A file as large as its filesystem can hold (`size = "fill"`, fio's
    /// `fill_device`): its allocated bytes plus the filesystem's free space, rounded
    /// down to the largest block size of the run's workloads on it, created as a
    /// hole so the writes are what fills it. Ignored on other targets.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fill: bool,
    /// How a missing file is created, and an existing one shorter than the working
    /// set extended: with data (the default), as a hole, or allocated but unwritten.
    #[serde(default, skip_serializing_if = "FileCreate::is_data")]
    pub create: FileCreate,
    /// Make the missing directories of a local file's path when the run opens it
    /// (fio does for every job's files; off for native targets, where a missing
    /// directory is more likely a mistyped path). Never under /dev.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub create_dirs: bool,
}

impl TargetSpec {
    /// Target `uri` named `name`, at its own size, O_DIRECT where supported, one
    /// path, created with data: what a target is when nothing more is said.
    pub fn new(name: impl Into<String>, uri: impl Into<String>) -> TargetSpec {
        TargetSpec {
            name: name.into(),
            uri: uri.into(),
            size_bytes: None,
            direct: None,
            multipath: None,
            fill: false,
            create: FileCreate::default(),
            create_dirs: false,
        }
    }
}

/// How a file target that does not exist yet is made before the run (and how the
/// missing end of a shorter existing file is added). Laying data out costs the whole
/// size on the filesystem before the first measured I/O, but reads then find real
/// blocks; a file left empty is what fio's `create_on_open` starts from: the run's
/// writes are what allocate it, and reads of blocks not yet written find zeros.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileCreate {
    /// Written with data before the run.
    #[default]
    Data,
    /// A hole of the target's size: nothing allocated, nothing written.
    Empty,
    /// Blocks reserved with fallocate(2) but not written: the writes cannot run out
    /// of space, and reads of unwritten blocks find zeros (unwritten extents).
    Allocated,
    /// Never created: a missing file is an error before anything is written (fio's
    /// `allow_file_create=0`, which guards against a mistyped device path becoming
    /// a file in /dev); an existing shorter one is extended with data.
    Never,
}

impl FileCreate {
    pub fn is_data(&self) -> bool {
        *self == FileCreate::Data
    }

    /// Whether a missing or shorter file is made a hole rather than written.
    pub fn is_sparse(&self) -> bool {
        matches!(self, FileCreate::Empty | FileCreate::Allocated)
    }

    /// The job-file word (`create = "…"`).
    pub fn name(self) -> &'static str {
        match self {
            FileCreate::Data => "data",
            FileCreate::Empty => "empty",
            FileCreate::Allocated => "allocated",
            FileCreate::Never => "never",
        }
    }

    /// Whether a target URI names a file ioscope itself creates (a local path, not
    /// `mem:`, `null:`, `sim:`, a `files:` set or a network URI); only there does
    /// anything but `Data` mean something.
    pub fn applies_to(uri: &str) -> bool {
        !uri.contains("://")
            && !["mem:", "null:", "sim:", "files:"]
                .iter()
                .any(|p| uri.starts_with(p))
    }

    /// Parses the job-file word.
    pub fn parse(s: &str) -> Option<FileCreate> {
        match s {
            "data" => Some(FileCreate::Data),
            "empty" => Some(FileCreate::Empty),
            "allocated" => Some(FileCreate::Allocated),
            "never" => Some(FileCreate::Never),
            _ => None,
        }
    }
}

/// What kind of storage a target URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetKind {
    /// A regular file or a block device.
    Path(std::path::PathBuf),
    /// In-process RAM of the given size.
    Mem(u64),
    /// Nothing at all: every I/O completes at once.
    Null(u64),
    /// A simulated device: a timing model, no storage (`sim:SIZE?service=…`).
    Sim(SimSpec),
    /// An NBD export (`nbd://HOST[:PORT][/EXPORT]`, `nbd+unix:///EXPORT?socket=PATH`).
    Nbd(NbdSpec),
    /// An iSCSI LUN (`iscsi://HOST[:PORT]/IQN/LUN`).
    Iscsi(IscsiSpec),
    /// A file on an SMB share (`smb://[USER@]HOST[:PORT]/SHARE/PATH`).
    Smb(SmbSpec),
    /// A file on an NFS export (`nfs://HOST[:PORT]/EXPORT/PATH`).
    Nfs(NfsSpec),
    /// N files in a directory, for the file-operation engines
    /// (`files:DIR?count=N&…`, [`super::fileset`]).
    Files(super::fileset::FileSetSpec),
}

pub use super::nfs_spec::NfsSpec;
pub use super::smb_spec::SmbSpec;

/// Where an iSCSI LUN is, as parsed by `crate::target::iscsi::parse`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IscsiSpec {
    /// The URI as given (it carries no credentials).
    pub uri: String,
    /// `HOST:PORT`.
    pub portal: String,
    pub iqn: String,
    pub lun: u32,
}

/// Where an NBD export is, as parsed by `crate::target::nbd::parse`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NbdSpec {
    /// The URI as given, handed to libnbd.
    pub uri: String,
    /// `HOST:PORT` or `unix:PATH`, for messages.
    pub server: String,
    pub export: String,
}

/// Parameters of a simulated device (`sim:SIZE?service=DUR&dist=fixed|exp&servers=N&
/// stall=DUR@PERIOD&error_rate=P&drift=PCT&seed=N&time=real|virtual`): a multi-server
/// FIFO queue. Parsed
/// by `crate::target::sim::parse_spec`; every value is validated (finite, in range).
#[derive(Debug, Clone, PartialEq)]
pub struct SimSpec {
    pub size_bytes: u64,
    /// Mean service time of one request.
    pub service_ns: u64,
    pub dist: SimDist,
    /// Requests served at once.
    pub servers: u32,
    /// No service starts during the first `len_ns` of every `period_ns`.
    pub stall: Option<SimStall>,
    /// Probability that a request completes with EIO.
    pub error_rate: f64,
    /// Service time grows by this many percent per second since the target opened.
    pub drift_pct: f64,
    pub seed: u64,
    /// Run on simulated time (`time=virtual`): the clock jumps from event to event.
    pub virtual_time: bool,
}

// The floats are validated finite when parsed, so equality is reflexive.
impl Eq for SimSpec {}

impl SimSpec {
    /// The device as it draws in repetition `draw` of a run (`--repeat`): its seed
    /// moved on by `draw`, so each repetition is an independent, reproducible draw.
    pub fn draw(mut self, draw: u64) -> Self {
        self.seed = self.seed.wrapping_add(draw);
        self
    }
}

/// Service-time distribution of a simulated device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimDist {
    /// Every request takes exactly the service time.
    Fixed,
    /// Exponentially distributed with the service time as mean.
    Exp,
}

/// Periodic stall windows of a simulated device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimStall {
    pub len_ns: u64,
    pub period_ns: u64,
}

/// How a worker waits for the next intended issue time of an open-loop schedule when
/// nothing is in flight: the trade between issue jitter and idle CPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pacing {
    /// Sleep until a fixed 100 µs before the intended time, then busy-wait: the least
    /// jitter, even on a loaded host, for a busy core per worker at high rates. The
    /// default: the schedule's accuracy is what open-loop latency rests on.
    #[default]
    Spin,
    /// Sleep until shortly before the intended time, by a margin learned from how late
    /// this host's timer wake-ups run (their 99.5th percentile), then busy-wait.
    Hybrid,
    /// Sleep until the intended time and never busy-wait: the least CPU; the issue
    /// jitter is the host's timer wake-up lateness.
    Sleep,
}

impl Pacing {
    pub fn name(self) -> &'static str {
        match self {
            Pacing::Spin => "spin",
            Pacing::Hybrid => "hybrid",
            Pacing::Sleep => "sleep",
        }
    }

    pub fn parse(s: &str) -> Option<Pacing> {
        match s.to_ascii_lowercase().as_str() {
            "spin" => Some(Pacing::Spin),
            "hybrid" => Some(Pacing::Hybrid),
            "sleep" => Some(Pacing::Sleep),
            _ => None,
        }
    }
}

/// One kind of I/O aimed at one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub name: String,
    /// Name of the [`TargetSpec`] it uses.
    pub target: String,
    /// Percentage of operations that are reads (0..=100).
    pub read_pct: u8,
    /// Discards instead of (or before) writes: fio's trim modes.
    #[serde(default, skip_serializing_if = "TrimMode::is_none")]
    pub trim: TrimMode,
    pub pattern: AccessPattern,
    pub bs: BlockSizes,
    /// Operations in flight per stream.
    pub qd: u32,
    /// Independent I/O sequences.
    pub streams: u32,
    pub rate: Rate,
    /// Start of the working set within the target.
    #[serde(default)]
    pub offset_bytes: u64,
    /// Length of the working set; `None` = from `offset_bytes` to the end of the target.
    pub size_bytes: Option<u64>,
    /// Spread of random offsets.
    #[serde(default)]
    pub dist: Distribution,
    /// Arrival process when `rate` is a number.
    #[serde(default)]
    pub arrival: Arrival,
    /// Share of the run's I/O (vdbench skew). Workloads of a run that have a share
    /// form one mix: the first of them supplies the streams, queue depth and rate,
    /// and each I/O picks its workload by share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_pct: Option<f64>,
    /// How several sequential streams divide the working set.
    #[serde(default, skip_serializing_if = "SeqLayout::is_regions")]
    pub seq_layout: SeqLayout,
    /// Random offsets are multiples of this (fio's `blockalign`); `None` = the
    /// smallest block size. See [`align_fits`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align_bytes: Option<u64>,
    /// Sequential access: bytes added to the offset after each I/O (fio's offset
    /// modifier, `rw=read:N`). Positive leaves holes; negative walks backwards, so
    /// `-2 × bs` reads the region from its end to its start. 0 = contiguous.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub seq_gap_bytes: i64,
    /// fio's `offset_increment`: stream i's working set starts this much further
    /// than stream i-1's (each stream then covers the whole `size` from its own
    /// start, as fio's clones do); 0 = the streams share the working set.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset_increment_bytes: u64,
    /// fio's `zonemode=strided`: I/O stays in one zone of the working set until
    /// `io_bytes` have been done there, then moves `range_bytes + skip_bytes` on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<Zones>,
    /// SPRandom preconditioning (fio's `sprandom`): the random writes follow the
    /// order that leaves an SSD's flash as steady-state random writing would, and
    /// write its physical capacity once (see `run::sprandom`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprandom: Option<Sprandom>,
    /// fio's `zonemode=zbd` on a file or a device that is not zoned: writes go to
    /// the write pointers of emulated zones, reads stay below them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zbd: Option<Zbd>,
    /// fio's flow control: closed-loop workloads sharing a flow id issue I/Os in the
    /// ratio of their weights (per stream, as fio's clones); `None` = free.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<Flow>,
    /// Pauses in issuing: a late start, idle time between batches (fio's
    /// `startdelay` and `thinktime`).
    #[serde(default, skip_serializing_if = "Pauses::is_none")]
    pub pauses: Pauses,
    /// I/O priorities: of all its I/O, and of shares of it (fio's `prio`,
    /// `prioclass`, `cmdprio_*`); empty = the default priority.
    #[serde(default, skip_serializing_if = "Priorities::is_default")]
    pub priority: Priorities,
    /// On a `files:` target read and written as bytes: which file each I/O goes to
    /// (fio's `file_service_type`); ignored on any other target.
    #[serde(
        default,
        skip_serializing_if = "super::file_service::FileService::is_default"
    )]
    pub file_service: super::file_service::FileService,
    /// Run settings this workload sets for itself (engine, warm-up, CPUs, data).
    #[serde(
        default,
        skip_serializing_if = "super::overrides::WorkloadOverrides::is_default"
    )]
    pub overrides: super::overrides::WorkloadOverrides,
    /// The declared settings ([`super::settings`]), as given or by default; in JSON,
    /// flattened into the workload under their echo fields.
    #[serde(flatten)]
    pub settings: super::settings::WorkloadSettings,
}

impl Sprandom {
    /// Why `w` cannot run with SPRandom, if it cannot: the order is one stream's
    /// random writes of one block size over the whole working set.
    pub fn misfit(&self, w: &Workload) -> Option<String> {
        if !(self.op > 0.0 && self.op < 1.0) {
            return Some(format!(
                "op {} must be between 0 and 1 (exclusive)",
                self.op
            ));
        }
        if self.regions == 0 {
            return Some("regions must be at least 1".into());
        }
        if w.read_pct != 0 || w.trim != TrimMode::None {
            return Some("it writes only (rw = \"randwrite\")".into());
        }
        if !matches!(w.pattern, AccessPattern::Random) {
            return Some("its writes are random (rw = \"randwrite\")".into());
        }
        if w.bs.min_bytes() != w.bs.max_bytes() {
            return Some("it takes one block size".into());
        }
        if w.streams != 1 {
            return Some(format!(
                "its order is one stream's; streams = {} (fio: numjobs=1)",
                w.streams
            ));
        }
        if w.dist != Distribution::Uniform
            || w.zones.is_some()
            || w.share_pct.is_some()
            || w.offset_increment_bytes != 0
        {
            return Some(
                "it chooses every offset itself (no dist, zones, share or offset_increment)".into(),
            );
        }
        if w.align_bytes.is_some_and(|a| a != w.bs.max_bytes()) {
            return Some("its offsets are multiples of the block size (align = bs)".into());
        }
        None
    }
}

/// Whether random offsets in multiples of `align` bytes suit blocks of at least
/// `min_bs`: a multiple of the block, or finer (diskspd's `-b8K -r4K`, fio's
/// `blockalign=4k` with `bs=8k`): a multiple of 512 that divides it, so blocks overlap
/// in whole sectors.
pub fn align_fits(align: u64, min_bs: u64) -> bool {
    let min = min_bs.max(1);
    align > 0 && (align % min == 0 || (align % 512 == 0 && min % align == 0))
}

impl Workload {
    /// How far the last stream's working set starts past the first's
    /// (`offset_increment_bytes` × (streams − 1)).
    pub fn stream_spread_bytes(&self) -> u64 {
        self.offset_increment_bytes
            .saturating_mul(u64::from(self.streams.saturating_sub(1)))
    }

    /// The slice each stream walks over a working set of `ws_len` bytes when the
    /// workload is sequential in the `regions` layout without zones: equal, whole
    /// blocks of its smallest size. `None` where the streams walk the whole set
    /// instead: another pattern or layout, zones, or a slice short of the largest
    /// block. `run::launch` places streams by it; `convert --to fio` writes it.
    pub fn region_slice(&self, ws_len: u64) -> Option<u64> {
        let sequential = matches!(self.pattern, AccessPattern::Sequential);
        let unit = self.bs.min_bytes().max(1);
        let slice = (ws_len / u64::from(self.streams.max(1))) / unit * unit;
        let own = sequential && self.seq_layout == SeqLayout::Regions && self.zones.is_none();
        (own && slice >= self.bs.max_bytes()).then_some(slice)
    }
}

impl Zones {
    /// Why `w` cannot run with these zones, if it cannot.
    pub fn misfit(&self, w: &Workload) -> Option<String> {
        if self.io_bytes == 0 || self.range_bytes == 0 {
            return Some("zones need a zone size and range above 0".into());
        }
        if self.range_bytes < w.bs.max_bytes() {
            return Some(format!(
                "a zone range of {} bytes is smaller than the largest block ({} bytes)",
                self.range_bytes,
                w.bs.max_bytes()
            ));
        }
        if w.dist != Distribution::Uniform {
            return Some("zones take uniform random offsets only (no dist)".into());
        }
        if w.seq_gap_bytes != 0
            || w.seq_layout != SeqLayout::Regions
            || w.share_pct.is_some()
            || w.offset_increment_bytes != 0
        {
            return Some(
                "zones walk their own offsets: no seq_gap, stride layout, share or offset \
                 increment"
                    .into(),
            );
        }
        None
    }
}

impl Default for Workload {
    /// One stream of 4 KiB random reads at QD 1 on target "t0".
    fn default() -> Self {
        Workload {
            name: "w".into(),
            target: "t0".into(),
            read_pct: 100,
            trim: TrimMode::None,
            pattern: AccessPattern::Random,
            bs: BlockSizes::fixed(4096),
            qd: 1,
            streams: 1,
            rate: Rate::Max,
            offset_bytes: 0,
            size_bytes: None,
            dist: Distribution::Uniform,
            arrival: Arrival::Exponential,
            share_pct: None,
            seq_layout: SeqLayout::Regions,
            align_bytes: None,
            seq_gap_bytes: 0,
            offset_increment_bytes: 0,
            zones: None,
            zbd: None,
            flow: None,
            pauses: Pauses::default(),
            priority: Default::default(),
            sprandom: None,
            file_service: Default::default(),
            overrides: Default::default(),
            settings: Default::default(),
        }
    }
}

/// One measured execution of a set of workloads running together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    pub name: String,
    pub workloads: Vec<Workload>,
    pub engine: EngineKind,
    /// Measured time after warm-up. `None` = until `passes` are done.
    pub duration_ns: Option<u64>,
    /// Stop after this many passes over each working set.
    pub passes: Option<u64>,
    pub warmup_ns: u64,
    pub interval_ns: u64,
    /// CPUs to pin workers to; `None` = every allowed CPU, unpinned choice of count.
    pub cpus: Option<Vec<usize>>,
    /// Worker threads; `None` = one per allowed CPU (never more than streams).
    pub workers: Option<usize>,
    pub seed: u64,
    /// How open-loop workers wait for intended issue times.
    #[serde(default)]
    pub pacing: Pacing,
    /// io_uring settings and write durability.
    #[serde(
        default,
        skip_serializing_if = "crate::plan::tuning::IoTuning::is_default"
    )]
    pub io: crate::plan::tuning::IoTuning,
    /// Settings of the engine itself (stat call, CPU burn).
    #[serde(
        default,
        skip_serializing_if = "crate::plan::engine_opts::EngineOptions::is_default"
    )]
    pub engine_opts: crate::plan::engine_opts::EngineOptions,
    /// Run as a latency curve rather than once (vdbench's `iorate=curve`, fio's
    /// `latency_target`): `ioscope run` then measures it as `ioscope curve` does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<CurveSpec>,
    /// fio-format log files to write from the run's intervals (fio's
    /// `write_bw_log`/`write_lat_log`/`write_iops_log`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_logs: Option<FioLogs>,
    /// Host definitions (vdbench `hd=`): under `mpirun` each rank plays one of them
    /// and drives only its targets (docs/mpi.md). Empty = every rank runs everything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<super::hosts::HostDef>,
    /// Connections per network target (`--connections`); `None` = the invocation's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u32>,
    /// Per-I/O deadline (`--io-timeout`); `None` = the invocation's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_timeout_ns: Option<u64>,
    /// End the run early once a metric has settled (fio's `steadystate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_stop: Option<SteadyStop>,
    /// The declared run settings (`plan::settings`, scope run: `repeat`), flattened
    /// as the workloads' are; only those that differ from their defaults are written.
    #[serde(default, flatten)]
    pub settings: super::settings::RunSettings,
}

/// Stop a run once its metric has settled over a rolling window of intervals, by
/// fio's `steadystate` rule: `iops:10%` — every sample within 10 % of the window's
/// mean; `iops_slope:0.1%` — the least-squares slope per sample within 0.1 % of the
/// mean (`bw`, `lat` likewise; an absolute limit without `%` is in the metric's own
/// unit: IOPS, bytes/s, µs). Samples are the run's intervals (all workloads together),
/// counted once `ramp_ns` of measured time has passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyStop {
    pub metric: SteadyMetric,
    /// Judge the slope rather than the spread.
    pub slope: bool,
    pub limit: f64,
    /// `limit` is a percentage of the window's mean.
    pub limit_is_pct: bool,
    pub window_ns: u64,
    #[serde(default)]
    pub ramp_ns: u64,
}

/// What fio's steady state tracks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SteadyMetric {
    Iops,
    /// Bytes per second.
    Bw,
    /// Mean latency, µs.
    Lat,
}

/// Why a steady-state criterion (`iops:10%`) was refused.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum CriterionError {
    #[error("'{0}': expected METRIC:LIMIT, e.g. iops:10%")]
    Shape(String),
    #[error("'{0}': expected iops, iops_slope, bw, bw_slope, lat or lat_slope")]
    Metric(String),
    #[error("'{0}' is not a non-negative number")]
    Limit(String),
}

impl SteadyStop {
    /// Reads fio's criterion text: `iops:10%`, `bw_slope:0.5%`, `lat:200`.
    pub fn parse_criterion(text: &str) -> Result<(SteadyMetric, bool, f64, bool), CriterionError> {
        let (kind, limit) = text
            .split_once(':')
            .ok_or_else(|| CriterionError::Shape(text.to_string()))?;
        let (metric, slope) = match kind.trim().to_ascii_lowercase().as_str() {
            "iops" => (SteadyMetric::Iops, false),
            "iops_slope" => (SteadyMetric::Iops, true),
            "bw" => (SteadyMetric::Bw, false),
            "bw_slope" => (SteadyMetric::Bw, true),
            "lat" => (SteadyMetric::Lat, false),
            "lat_slope" => (SteadyMetric::Lat, true),
            other => return Err(CriterionError::Metric(other.to_string())),
        };
        let limit = limit.trim();
        let (num, pct) = match limit.strip_suffix('%') {
            Some(n) => (n, true),
            None => (limit, false),
        };
        let value: f64 = num
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| CriterionError::Limit(limit.to_string()))?;
        Ok((metric, slope, value, pct))
    }

    /// The criterion as fio writes it (`iops_slope:0.1%`).
    pub fn criterion(&self) -> String {
        let metric = match self.metric {
            SteadyMetric::Iops => "iops",
            SteadyMetric::Bw => "bw",
            SteadyMetric::Lat => "lat",
        };
        format!(
            "{metric}{}:{}{}",
            if self.slope { "_slope" } else { "" },
            self.limit,
            if self.limit_is_pct { "%" } else { "" }
        )
    }
}

/// Curve points, % of the measured maximum, when none are given (vdbench's curve).
pub const DEFAULT_CURVE_POINTS_PCT: [f64; 6] = [10.0, 50.0, 70.0, 80.0, 90.0, 100.0];

/// A latency curve over one run: a closed-loop run measures the maximum, open-loop
/// runs at percentages of it trace the curve, and an optional SLA search finds the
/// highest rate whose latency stays within a bound. Bounds are written as
/// `ioscope curve` takes them: `mean=5ms`, `p99=0.5ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveSpec {
    /// Points, % of the measured maximum, in the order run.
    pub points_pct: Vec<f64>,
    /// Stop at the first point whose latency exceeds this (vdbench's `stopcurve`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_latency: Option<String>,
    /// Search for the highest rate within this bound (fio's `latency_target`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_latency: Option<String>,
    /// Where the curve came from, for the result ("vdbench iorate=curve").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

/// Measured time of a run that names neither a duration nor passes.
pub const DEFAULT_DURATION_NS: u64 = 10_000_000_000;
/// Length of one reported interval unless told otherwise.
pub const DEFAULT_INTERVAL_NS: u64 = 1_000_000_000;
/// Seed of a run that names none: runs are repeatable by default.
pub const DEFAULT_SEED: u64 = 1;

impl Default for RunSpec {
    /// The one source of run defaults (flags, job files and the foreign readers all
    /// start from it): a 10 s measured run, 1 s intervals, no warm-up, the automatic
    /// engine, seed 1, no workloads yet.
    fn default() -> Self {
        RunSpec {
            name: "run".into(),
            workloads: Vec::new(),
            engine: EngineKind::Auto,
            engine_opts: Default::default(),
            duration_ns: Some(DEFAULT_DURATION_NS),
            passes: None,
            warmup_ns: 0,
            interval_ns: DEFAULT_INTERVAL_NS,
            cpus: None,
            workers: None,
            seed: DEFAULT_SEED,
            pacing: Pacing::default(),
            io: Default::default(),
            curve: None,
            fio_logs: None,
            hosts: Vec::new(),
            connections: None,
            io_timeout_ns: None,
            steady_stop: None,
            settings: Default::default(),
        }
    }
}

impl RunSpec {
    /// The workloads that own streams: all but the later members of a share mix,
    /// whose first workload supplies the mix's streams, queue depth and rate.
    pub fn stream_owners(&self) -> impl Iterator<Item = (usize, &Workload)> {
        let lead = self.workloads.iter().position(|w| w.share_pct.is_some());
        self.workloads
            .iter()
            .enumerate()
            .filter(move |(i, w)| w.share_pct.is_none() || Some(*i) == lead)
    }

    /// Total streams over all workloads (a share mix counts its first workload's).
    pub fn total_streams(&self) -> u64 {
        self.stream_owners().map(|(_, w)| w.streams as u64).sum()
    }

    /// Sum of the requested open-loop rates (a share mix is paced as a whole by its
    /// first workload, so the others of the mix add nothing).
    pub fn requested_iops(&self) -> f64 {
        self.stream_owners()
            .map(|(_, w)| match w.rate {
                Rate::Iops(r) => r,
                Rate::Max => 0.0,
            })
            .sum()
    }
}
