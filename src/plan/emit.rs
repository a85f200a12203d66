//! Plans written back out: as a native TOML job file (every plan can be) and as a fio
//! job file (where fio can express it), for `ioscope convert` — so people can migrate
//! and diff. The TOML output reads back into the same plan.

use super::engine_kind::FioEngine;
use super::model::*;
use super::overrides::Amount;
use super::settings::declared::{EXIT_ALL, RANDOM_MAP, TRACE};
use super::target_kind::{FioTarget, ProbeKind};
use super::tuning::{IoKeys, IoTuning};
use super::units::{format_duration_ns, format_size};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use std::fmt::Write as _;

fn rw_word(w: &Workload) -> &'static str {
    if let Some(word) = w.trim.rw_word(&w.pattern) {
        return word;
    }
    match (&w.pattern, w.read_pct) {
        (AccessPattern::Random, 100) => "randread",
        (AccessPattern::Random, 0) => "randwrite",
        (AccessPattern::Random, _) => "randrw",
        (AccessPattern::Sequential, 100) => "read",
        (AccessPattern::Sequential, 0) => "write",
        (AccessPattern::Sequential, _) => "rw",
    }
}

/// Why a plan cannot be written as a native job file.
#[derive(Debug, thiserror::Error)]
pub enum TomlEmitError {
    /// A value the job-file format cannot hold (TOML integers are signed 64-bit).
    #[error("run '{run}': seed {seed} is larger than a job file can hold (at most {max})", max = i64::MAX)]
    SeedTooLarge { run: String, seed: u64 },
    /// Host definitions (vdbench `hd=`) are written once, as `[[host]]` tables for
    /// every run: runs with different ones have no job-file form.
    #[error("run '{run}': its host definitions (hd=) differ from the first run's; a job file's [[host]] tables hold for every run")]
    HostDefs { run: String },
    /// The TOML encoder refused the document.
    #[error("cannot encode the job file as TOML")]
    Encode(#[source] toml::ser::Error),
}

/// Why a plan cannot be written as a fio job file: something in it fio cannot express,
/// or ioscope does not translate yet.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FioEmitError {
    #[error("workload '{workload}' names an unknown target")]
    UnknownTarget { workload: String },
    #[error("target '{uri}': {why}")]
    Target { uri: String, why: &'static str },
    /// The engine cannot drive the target (the run's own rule).
    #[error("target '{uri}': {msg}")]
    Fits { uri: String, msg: String },
    #[error("workload '{workload}': its offset distribution is not translated to fio yet")]
    Distribution { workload: String },
    #[error("workload '{workload}': seq_layout {layout} is not translated to fio yet")]
    Stride {
        workload: String,
        layout: &'static str,
    },
    #[error("workload '{workload}': a stop before its run ends is not translated to fio yet")]
    EarlyStop { workload: String },
    #[error("the {engine} engine has no fio equivalent: {why}")]
    Engine {
        engine: &'static str,
        why: &'static str,
    },
    #[error("the {engine} engine is not translated to fio yet")]
    EngineNotYet { engine: &'static str },
    #[error(
        "workload '{workload}': passes of its own (or time-based in a run of passes) are \
         not translated to fio yet"
    )]
    OwnAmount { workload: String },
    #[error(
        "workload '{workload}': a dedup working set needs the size it is a percentage of \
         in fio"
    )]
    DedupSet { workload: String },
    #[error(
        "workload '{workload}': per-I/O priorities that mix shares with and without a \
         block size, or several per direction without one, have no fio equivalent"
    )]
    Priorities { workload: String },
    #[error("workload '{workload}': its error policy {why}")]
    OnError { workload: String, why: &'static str },
    /// fio reserves a file's blocks without writing them only for jobs that do not
    /// read it (and `overwrite=0`): no option says so for any job.
    #[error(
        "target '{uri}': create = \"allocated\" has no fio option (fio allocates a file \
         without writing it only for jobs that never read it)"
    )]
    AllocatedCreate { uri: String },
    #[error("workload '{workload}': setting '{key}' has no fio option")]
    Setting { workload: String, key: &'static str },
    /// fio's `loops` repeats a job but reports the repetitions as one, so `repeat`
    /// has no fio option.
    #[error("run '{run}': setting '{key}' has no fio option")]
    RunSetting { run: String, key: &'static str },
}

/// The plan as a native job file. The document is typed ([`JobFileDoc`]) and encoded
/// by the `toml` crate, so names with quotes, backslashes, control characters or
/// non-ASCII text come out as valid TOML and read back unchanged.
pub fn to_toml(plan: &Plan) -> Result<String, TomlEmitError> {
    let doc = JobFileDoc::from_plan(plan)?;
    let body = toml::to_string(&doc).map_err(TomlEmitError::Encode)?;
    Ok(format!("# written by ioscope convert\n\n{body}"))
}

/// A native job file as written by `convert`: the `[[target]]`, `[[workload]]` and
/// `[[run]]` tables of docs/job-file.md, in that order.
///
/// The tables below are written only as TOML, whose encoder leaves out a key whose
/// value is `None`: an `Option` field is written when it is `Some`, with no
/// `skip_serializing_if` of its own (empty lists and false flags still need one).
#[derive(Debug, Serialize)]
struct JobFileDoc {
    defaults: Option<DefaultsTable>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    target: Vec<TargetTable>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    workload: Vec<WorkloadTable>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    run: Vec<RunTable>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    host: Vec<crate::plan::hosts::HostDef>,
}

/// `[defaults]` as `convert` writes it: only what holds for the whole plan.
#[derive(Debug, Serialize)]
struct DefaultsTable {
    data_unit: String,
}

/// `w` with the plan's data settings (the job description's verify, ratios and
/// pattern) as its own where it has none, so a job file or fio file written from
/// the plan keeps them (neither has a plan-wide place for them).
fn with_plan_data(plan: &Plan, w: &Workload) -> Workload {
    let d = &plan.data;
    let mut w = w.clone();
    let own = &mut w.overrides.data;
    if d.verify {
        own.verify = own.verify.or(Some(true));
    }
    if d.verify_after {
        own.verify_after = own.verify_after.or(Some(true));
    }
    own.compress_ratio = own.compress_ratio.or(d.compress_ratio);
    own.dedup_ratio = own.dedup_ratio.or(d.dedup_ratio);
    if own.pattern.is_none() {
        own.pattern = d.pattern.clone();
    }
    own.dedup_set = own.dedup_set.or(d.dedup_set);
    w
}

#[derive(Debug, Serialize)]
struct TargetTable {
    name: String,
    path: String,
    size: Option<String>,
    direct: Option<bool>,
    /// How a missing file is made, when not laid out with data.
    create: Option<&'static str>,
    /// Missing directories of the path are made when the run opens it.
    create_dirs: Option<bool>,
    /// Multipath (`paths` 1.., path 0 being `path`) and SMB3 multichannel.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    paths: Vec<String>,
    channels: Option<u32>,
    path_policy: Option<String>,
    failback: Option<String>,
    path_retry: Option<String>,
}

#[derive(Debug, Serialize)]
struct WorkloadTable {
    name: String,
    target: String,
    rw: &'static str,
    read_pct: u8,
    bs: BsValue,
    write_bs: Option<BsValue>,
    qd: u32,
    streams: u32,
    rate: Option<f64>,
    offset: Option<String>,
    size: Option<String>,
    dist: Option<String>,
    arrival: Option<&'static str>,
    share: Option<f64>,
    seq_layout: Option<&'static str>,
    align: Option<String>,
    seq_gap: Option<String>,
    offset_increment: Option<String>,
    /// Strided or emulated zones.
    #[serde(flatten)]
    zones: ZoneKeys,
    flow: Option<u32>,
    flow_id: Option<u32>,
    flow_sleep: Option<String>,
    prio: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    cmdprio: Vec<String>,
    precondition: Option<PreconditionTable>,
    file_service: Option<String>,
    /// Late start, think time and stops.
    #[serde(flatten)]
    pauses: PauseKeys,
    engine: Option<&'static str>,
    warmup: Option<String>,
    cpus: Option<String>,
    /// The workload's own io_uring settings (only those that differ from the defaults).
    #[serde(flatten)]
    io: IoKeys,
    verify: Option<bool>,
    verify_after: Option<bool>,
    compress_ratio: Option<f64>,
    dedup_ratio: Option<f64>,
    pattern: Option<String>,
    dedup_set: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    dedup_global: bool,
    on_error: Option<crate::plan::on_error::OnError>,
    /// The workload's own passes, or that it is time-based in a run of passes.
    passes: Option<u64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    time_based: bool,
    /// The workload's own engine options, all of them.
    #[serde(flatten)]
    engine_keys: EngineKeys,
    verify_backlog: Option<u32>,
    verify_backlog_batch: Option<u32>,
    /// The workload's own fio-format logs.
    #[serde(flatten)]
    fio_logs: LogKeys,
    /// The declared settings ([`crate::plan::settings`]) that differ from their
    /// defaults.
    #[serde(flatten)]
    declared: toml::Table,
}

/// A workload's zone keys: strided zones (`zone_size`, `zone_range`, `zone_skip`) or
/// emulated zoned-device zones (`zone_mode = "zbd"` and its limits).
#[derive(Debug, Default, Serialize)]
struct ZoneKeys {
    zone_mode: Option<&'static str>,
    zone_size: Option<String>,
    zone_range: Option<String>,
    zone_skip: Option<String>,
    zone_capacity: Option<String>,
    max_open_zones: Option<u32>,
    stream_max_open_zones: Option<u32>,
    zone_reset_threshold: Option<f64>,
    zone_reset_frequency: Option<f64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    read_beyond_wp: bool,
}

impl ZoneKeys {
    fn of(w: &Workload) -> ZoneKeys {
        ZoneKeys {
            zone_size: w
                .zones
                .map(|z| format_size(z.io_bytes))
                .or(w.zbd.map(|z| format_size(z.zone_bytes))),
            zone_range: w.zones.map(|z| format_size(z.range_bytes)),
            zone_skip: w.zones.map(|z| format_size(z.skip_bytes)),
            zone_mode: w.zbd.map(|_| "zbd"),
            zone_capacity: w
                .zbd
                .filter(|z| z.capacity_bytes != z.zone_bytes)
                .map(|z| format_size(z.capacity_bytes)),
            max_open_zones: w.zbd.map(|z| z.max_open).filter(|&n| n > 0),
            stream_max_open_zones: w.zbd.map(|z| z.stream_max_open).filter(|&n| n > 0),
            zone_reset_threshold: w
                .zbd
                .filter(|z| z.reset_threshold > 0.0)
                .map(|z| z.reset_threshold),
            zone_reset_frequency: w
                .zbd
                .filter(|z| z.reset_frequency > 0.0)
                .map(|z| z.reset_frequency),
            read_beyond_wp: w.zbd.is_some_and(|z| z.read_beyond_wp),
        }
    }
}

/// A workload's pause keys: late start, think time, stops and pass size.
#[derive(Debug, Default, Serialize)]
struct PauseKeys {
    start_delay: Option<String>,
    think: Option<String>,
    think_every: Option<u32>,
    think_io_time: Option<String>,
    stop_after: Option<String>,
    stop_after_ios: Option<u64>,
    pass_size: Option<String>,
}

impl PauseKeys {
    fn of(p: &Pauses) -> PauseKeys {
        PauseKeys {
            start_delay: (p.start_delay_ns > 0).then(|| format_duration_ns(p.start_delay_ns)),
            think: (p.think_ns > 0).then(|| format_duration_ns(p.think_ns)),
            // 1 is the default only when no I/O time paces the thinking.
            think_every: p.think_batch().filter(|&n| n > 1 || p.think_io_ns > 0),
            think_io_time: (p.think_io_ns > 0).then(|| format_duration_ns(p.think_io_ns)),
            stop_after: (p.stop_ns > 0).then(|| format_duration_ns(p.stop_ns)),
            stop_after_ios: (p.stop_after_ios > 0).then_some(p.stop_after_ios),
            pass_size: (p.pass_bytes > 0).then(|| format_size(p.pass_bytes)),
        }
    }
}

/// fio-format log keys, of a `[[run]]` or of a `[[workload]]` (its own share).
#[derive(Debug, Default, Serialize)]
struct LogKeys {
    fio_bw_log: Option<String>,
    fio_lat_log: Option<String>,
    fio_iops_log: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    fio_log_offset: bool,
    fio_log_job: Option<u32>,
}

impl LogKeys {
    fn of(logs: Option<&FioLogs>) -> LogKeys {
        let Some(l) = logs else {
            return LogKeys::default();
        };
        LogKeys {
            fio_bw_log: l.bw.clone(),
            fio_lat_log: l.lat.clone(),
            fio_iops_log: l.iops.clone(),
            fio_log_offset: l.offset,
            fio_log_job: (l.job != 1).then_some(l.job),
        }
    }
}

/// `precondition = { method = "sprandom", op = 0.15, regions = 100, cache = "1m" }`.
#[derive(Debug, Serialize)]
struct PreconditionTable {
    method: &'static str,
    op: f64,
    regions: u32,
    cache: Option<String>,
}

/// `bs = "4k"` or an ordered split `bs = { "4k" = 50, "64k" = 50 }` (the order is the
/// plan's, which a sorted map would lose).
#[derive(Debug)]
enum BsValue {
    One(String),
    Split(Vec<(String, u32)>),
}

impl BsValue {
    /// One size as a string, several as a table of size = weight.
    fn of(split: &[(u64, u32)]) -> BsValue {
        match split {
            [(b, _)] => BsValue::One(format_size(*b)),
            _ => BsValue::Split(
                split
                    .iter()
                    .map(|&(b, weight)| (format_size(b), weight))
                    .collect(),
            ),
        }
    }
}

impl Serialize for BsValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            BsValue::One(size) => s.serialize_str(size),
            BsValue::Split(parts) => {
                let mut map = s.serialize_map(Some(parts.len()))?;
                for (size, weight) in parts {
                    map.serialize_entry(size, weight)?;
                }
                map.end()
            }
        }
    }
}

/// The engine options as keys (`stat_type`, `cpu_load` …, `exec_program` …,
/// `defrag_donor` …), of a run or of a workload with options of its own.
#[derive(Debug, Default, Serialize)]
struct EngineKeys {
    stat_type: Option<&'static str>,
    cpu_load: Option<u8>,
    cpu_chunk: Option<String>,
    cpu_mode: Option<&'static str>,
    exec_program: Option<String>,
    exec_args: Option<Vec<String>>,
    exec_grace: Option<String>,
    exec_output: Option<String>,
    defrag_donor: Option<String>,
    defrag_inplace: Option<bool>,
}

impl EngineKeys {
    fn of(o: &crate::plan::engine_opts::EngineOptions) -> EngineKeys {
        EngineKeys {
            stat_type: (!o.stat.is_default()).then(|| o.stat.name()),
            cpu_load: o.cpu.map(|c| c.load_pct),
            cpu_chunk: o.cpu.map(|c| format_duration_ns(c.chunk_ns)),
            cpu_mode: o.cpu.map(|c| c.mode.name()),
            exec_program: o.exec.as_ref().map(|x| x.program.clone()),
            exec_args: o.exec.as_ref().map(|x| x.args.clone()),
            exec_grace: o.exec.as_ref().map(|x| format_duration_ns(x.grace_ns)),
            exec_output: o.exec.as_ref().and_then(|x| x.output.clone()),
            defrag_donor: o.defrag.as_ref().map(|d| d.donor.clone()),
            defrag_inplace: o.defrag.as_ref().map(|d| d.inplace),
        }
    }
}

#[derive(Debug, Serialize)]
struct RunTable {
    name: String,
    workloads: Vec<String>,
    engine: &'static str,
    duration: Option<String>,
    passes: Option<u64>,
    warmup: String,
    interval: String,
    seed: i64,
    cpus: Option<String>,
    workers: Option<usize>,
    pacing: Option<&'static str>,
    connections: Option<u32>,
    io_timeout: Option<String>,
    #[serde(flatten)]
    io: IoKeys,
    #[serde(flatten)]
    engine_keys: EngineKeys,
    curve_points: Option<Vec<f64>>,
    curve_stop_latency: Option<String>,
    curve_max_latency: Option<String>,
    curve_origin: Option<String>,
    #[serde(flatten)]
    fio_logs: LogKeys,
    steady_stop: Option<String>,
    steady_window: Option<String>,
    steady_ramp: Option<String>,
    /// The declared run settings that differ from their defaults.
    #[serde(flatten)]
    declared: toml::Table,
}

/// Workloads are written once per run under a run-qualified name (`r0-oltp`), since
/// runs may give the same workload different settings.
fn qualified(run_index: usize, w: &Workload) -> String {
    format!("r{run_index}-{}", w.name)
}

impl JobFileDoc {
    fn from_plan(plan: &Plan) -> Result<Self, TomlEmitError> {
        let target = plan.targets.iter().map(TargetTable::from_spec).collect();
        let workload = plan
            .runs
            .iter()
            .enumerate()
            .flat_map(|(ri, r)| {
                r.workloads
                    .iter()
                    .map(move |w| WorkloadTable::from_workload(ri, &with_plan_data(plan, w)))
            })
            .collect();
        let run = plan
            .runs
            .iter()
            .enumerate()
            .map(|(ri, r)| RunTable::from_run(ri, r))
            .collect::<Result<_, _>>()?;
        let host = plan
            .runs
            .first()
            .map(|r| r.hosts.clone())
            .unwrap_or_default();
        if let Some(r) = plan.runs.iter().find(|r| r.hosts != host) {
            return Err(TomlEmitError::HostDefs {
                run: r.name.clone(),
            });
        }
        Ok(JobFileDoc {
            defaults: plan.data.dedup_unit_bytes.map(|b| DefaultsTable {
                data_unit: format_size(b),
            }),
            target,
            workload,
            run,
            host,
        })
    }
}

impl TargetTable {
    fn from_spec(t: &TargetSpec) -> Self {
        use crate::plan::paths::{Failback, PathPolicy, DEFAULT_PATH_RETRY_NS};
        let mut table = TargetTable {
            name: t.name.clone(),
            path: t.uri.clone(),
            size: if t.fill {
                Some("fill".into())
            } else {
                t.size_bytes.map(format_size)
            },
            direct: t.direct,
            create: (!t.create.is_data()).then(|| t.create.name()),
            create_dirs: t.create_dirs.then_some(true),
            paths: Vec::new(),
            channels: None,
            path_policy: None,
            failback: None,
            path_retry: None,
        };
        let Some(mp) = &t.multipath else {
            return table;
        };
        // Defaults are left out, as the job file leaves them out; a multipath spec
        // always has further paths or channels, so one of those keys says it is one.
        table.paths = mp.paths.clone();
        table.channels = mp.channels;
        table.path_policy = (mp.policy != PathPolicy::default()).then(|| mp.policy.label());
        table.failback = match mp.failback {
            Failback::Immediate => None,
            Failback::Manual => Some("manual".into()),
            Failback::AfterNs(ns) => Some(format_duration_ns(ns)),
        };
        table.path_retry =
            (mp.retry_ns != DEFAULT_PATH_RETRY_NS).then(|| format_duration_ns(mp.retry_ns));
        table
    }
}

impl WorkloadTable {
    fn from_workload(run_index: usize, w: &Workload) -> Self {
        let rate = match w.rate {
            Rate::Iops(r) => Some(r),
            Rate::Max => None,
        };
        // The job file's default arrival is exponential; only paced workloads have one.
        let arrival = (rate.is_some() && w.arrival != Arrival::default()).then_some("uniform");
        WorkloadTable {
            name: qualified(run_index, w),
            target: w.target.clone(),
            rw: rw_word(w),
            read_pct: w.read_pct,
            bs: BsValue::of(&w.bs.split),
            write_bs: w.bs.write_split.as_deref().map(BsValue::of),
            qd: w.qd,
            streams: w.streams,
            rate,
            offset: (w.offset_bytes > 0).then(|| format_size(w.offset_bytes)),
            size: w.size_bytes.map(format_size),
            dist: (w.dist != Distribution::Uniform).then(|| w.dist.spec()),
            arrival,
            share: w.share_pct,
            seq_layout: (!w.seq_layout.is_regions()).then(|| w.seq_layout.name()),
            align: w.align_bytes.map(format_size),
            seq_gap: (w.seq_gap_bytes != 0).then(|| signed_size(w.seq_gap_bytes)),
            offset_increment: (w.offset_increment_bytes > 0)
                .then(|| format_size(w.offset_increment_bytes)),
            zones: ZoneKeys::of(w),
            flow: w.flow.map(|f| f.weight),
            flow_id: w.flow.map(|f| f.id).filter(|&id| id != 0),
            flow_sleep: w
                .flow
                .filter(|f| f.sleep_ns > 0)
                .map(|f| format_duration_ns(f.sleep_ns)),
            prio: w.priority.job.map(|p| p.to_string()),
            cmdprio: w.priority.per_io.iter().map(|p| p.to_string()).collect(),
            precondition: w.sprandom.map(|spr| PreconditionTable {
                method: "sprandom",
                op: spr.op,
                regions: spr.regions,
                cache: (spr.cache_bytes > 0).then(|| format_size(spr.cache_bytes)),
            }),
            file_service: (!w.file_service.is_default()).then(|| w.file_service.text()),
            pauses: PauseKeys::of(&w.pauses),
            engine: w.overrides.engine.map(EngineKind::name),
            warmup: w.overrides.warmup_ns.map(format_duration_ns),
            cpus: w.overrides.cpus.as_ref().map(|c| cpu_list(c)),
            io: own_io_keys(&w.overrides),
            verify: w.overrides.data.verify,
            verify_after: w.overrides.data.verify_after,
            compress_ratio: w.overrides.data.compress_ratio,
            dedup_ratio: w.overrides.data.dedup_ratio,
            pattern: w.overrides.data.pattern.as_ref().map(|p| p.hex()),
            dedup_set: w.overrides.data.dedup_set.map(|d| format_size(d.bytes)),
            dedup_global: w.overrides.data.dedup_set.is_some_and(|d| d.global),
            on_error: w.overrides.on_error.clone(),
            passes: match w.overrides.amount {
                Some(Amount::Passes(n)) => Some(n),
                _ => None,
            },
            time_based: w.overrides.amount == Some(Amount::TimeBased),
            engine_keys: w
                .overrides
                .engine_opts
                .as_ref()
                .map(EngineKeys::of)
                .unwrap_or_default(),
            verify_backlog: w.overrides.data.verify_backlog.map(|b| b.every_writes),
            verify_backlog_batch: w
                .overrides
                .data
                .verify_backlog
                .filter(|b| b.batch_reads != b.every_writes)
                .map(|b| b.batch_reads),
            fio_logs: LogKeys::of(w.overrides.fio_logs.as_ref()),
            declared: w.settings.to_toml(),
        }
    }
}

/// A CPU list as the job file writes it (`0,2,4`).
/// A workload's own io_uring settings and flushes as job-file keys. Its flushes are
/// written whole (`sync_every = 0` too), since they replace the run's.
fn own_io_keys(o: &crate::plan::overrides::WorkloadOverrides) -> IoKeys {
    let mut keys = o
        .uring
        .as_ref()
        .map(|u| {
            IoKeys::from_tuning(&IoTuning {
                uring: u.clone(),
                ..Default::default()
            })
        })
        .unwrap_or_default();
    if let Some(f) = o.flushes {
        keys.sync_every = Some(f.every);
        keys.sync_kind = Some(f.kind);
    }
    keys
}

fn cpu_list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// A workload's alignment, flow control, start delay and think time as fio options.
fn fio_pauses_and_flow(s: &mut String, w: &Workload) {
    if let Some(a) = w.align_bytes {
        let _ = writeln!(s, "blockalign={}", format_size(a));
    }
    if let Some(f) = w.flow {
        let _ = writeln!(
            s,
            "flow={}\nflow_id={}\nflow_sleep={}",
            f.weight,
            f.id,
            f.sleep_ns / 1000
        );
    }
    if w.settings.flag(&EXIT_ALL) {
        let _ = writeln!(s, "exitall");
    }
    if w.pauses.start_delay_ns > 0 {
        let _ = writeln!(s, "startdelay={}us", w.pauses.start_delay_ns / 1000);
    }
    if w.pauses.think_ns > 0 {
        let _ = writeln!(s, "thinktime={}", w.pauses.think_ns / 1000);
        if let Some(every) = w.pauses.think_batch() {
            let _ = writeln!(s, "thinktime_blocks={every}");
        }
        if w.pauses.think_io_ns > 0 {
            let _ = writeln!(s, "thinktime_iotime={}us", w.pauses.think_io_ns / 1000);
        }
    }
    if w.pauses.stop_after_ios > 0 {
        let _ = writeln!(s, "number_ios={}", w.pauses.stop_after_ios);
    }
    if w.pauses.pass_bytes > 0 {
        let _ = writeln!(s, "io_size={}", format_size(w.pauses.pass_bytes));
    }
    if let Some(spr) = w.sprandom {
        let _ = writeln!(
            s,
            "sprandom=1\nspr_op={}\nspr_num_regions={}\nnorandommap=1",
            spr.op, spr.regions
        );
        if spr.cache_bytes > 0 {
            let _ = writeln!(s, "spr_cs={}", spr.cache_bytes);
        }
    }
}

/// A workload's priorities and atomic writes as fio options: `prioclass`/`prio`/
/// `priohint`, then `cmdprio_bssplit` (shares by block size) or `cmdprio_percentage`
/// with `cmdprio_class`/`cmdprio`/`cmdprio_hint` (one share per direction), and
/// `atomic=1`.
fn fio_priorities(s: &mut String, w: &Workload) -> Result<(), FioEmitError> {
    use crate::plan::priority::{IoPriority, PrioShare};
    if let Some(p) = w.priority.job {
        let _ = writeln!(s, "prioclass={}\nprio={}", p.class.number(), p.level);
        if p.hint != 0 {
            let _ = writeln!(s, "priohint={}", p.hint);
        }
    }
    let shares = &w.priority.per_io;
    if shares.is_empty() {
        return Ok(());
    }
    let fail = || FioEmitError::Priorities {
        workload: w.name.clone(),
    };
    let of = |op: Op| {
        shares
            .iter()
            .filter(move |x| x.op.map_or(true, |o| o == op))
    };
    if shares.iter().all(|x| x.bs_bytes.is_some()) {
        let list = |op: Op| {
            of(op)
                .map(|x| {
                    let p = x.prio;
                    let bs = format_size(x.bs_bytes.unwrap_or(0));
                    format!("{bs}/{}/{}/{}/{}", x.pct, p.class.number(), p.level, p.hint)
                })
                .collect::<Vec<_>>()
                .join(":")
        };
        let _ = writeln!(s, "cmdprio_bssplit={},{}", list(Op::Read), list(Op::Write));
        return Ok(());
    }
    if shares.iter().any(|x| x.bs_bytes.is_some()) {
        return Err(fail());
    }
    let one = |op: Op| -> Result<Option<&PrioShare>, FioEmitError> {
        let mut it = of(op);
        let first = it.next();
        match it.next() {
            Some(_) => Err(fail()),
            None => Ok(first),
        }
    };
    let pair = [one(Op::Read)?, one(Op::Write)?];
    let pct = |x: Option<&PrioShare>| x.map_or(0, |x| x.pct);
    let prio = |x: Option<&PrioShare>| x.map(|x| x.prio);
    let field = |f: fn(IoPriority) -> u16| pair.map(|x| prio(x).map_or(0, f).to_string()).join(",");
    let _ = writeln!(
        s,
        "cmdprio_percentage={},{}\ncmdprio_class={}\ncmdprio={}\ncmdprio_hint={}",
        pct(pair[0]),
        pct(pair[1]),
        field(|p| p.class.number()),
        field(|p| u16::from(p.level)),
        field(|p| p.hint)
    );
    Ok(())
}

/// A signed byte count in the job file's size units (`"-8k"`).
fn signed_size(bytes: i64) -> String {
    let text = format_size(bytes.unsigned_abs());
    if bytes < 0 {
        format!("-{text}")
    } else {
        text
    }
}

impl RunTable {
    fn from_run(run_index: usize, r: &RunSpec) -> Result<Self, TomlEmitError> {
        let seed = i64::try_from(r.seed).map_err(|_| TomlEmitError::SeedTooLarge {
            run: r.name.clone(),
            seed: r.seed,
        })?;
        Ok(RunTable {
            name: r.name.clone(),
            workloads: r
                .workloads
                .iter()
                .map(|w| qualified(run_index, w))
                .collect(),
            engine: r.engine.name(),
            duration: r.duration_ns.map(format_duration_ns),
            passes: r.passes,
            warmup: format_duration_ns(r.warmup_ns),
            interval: format_duration_ns(r.interval_ns),
            seed,
            cpus: r.cpus.as_ref().map(|c| {
                c.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            }),
            workers: r.workers,
            pacing: (r.pacing != Pacing::default()).then(|| r.pacing.name()),
            connections: r.connections,
            io_timeout: r.io_timeout_ns.map(format_duration_ns),
            io: IoKeys::from_tuning(&r.io),
            engine_keys: EngineKeys::of(&r.engine_opts),
            // An empty list is how a curve with only a bound is written.
            curve_points: r.curve.as_ref().map(|c| c.points_pct.clone()),
            curve_stop_latency: r.curve.as_ref().and_then(|c| c.stop_latency.clone()),
            curve_max_latency: r.curve.as_ref().and_then(|c| c.max_latency.clone()),
            curve_origin: r.curve.as_ref().and_then(|c| c.origin.clone()),
            fio_logs: LogKeys::of(r.fio_logs.as_ref()),
            steady_stop: r.steady_stop.as_ref().map(SteadyStop::criterion),
            steady_window: r
                .steady_stop
                .as_ref()
                .map(|s| format_duration_ns(s.window_ns)),
            steady_ramp: r
                .steady_stop
                .as_ref()
                .filter(|s| s.ramp_ns > 0)
                .map(|s| format_duration_ns(s.ramp_ns)),
            declared: r.settings.to_toml(),
        })
    }
}

/// The plan as a fio job file, or why fio cannot express it.
pub fn to_fio(plan: &Plan) -> Result<String, FioEmitError> {
    let mut s = String::from("; written by ioscope convert\n");
    for (ri, r) in fio_runs(plan)?.enumerate() {
        for (wi, w) in r.workloads.iter().enumerate() {
            let t = target_of(plan, w)?;
            fio_can_express(w, t)?;
            let _ = writeln!(s, "\n[{}-{}]", r.name, w.name);
            if ri > 0 && wi == 0 {
                s.push_str("stonewall\n");
            }
            let set = fio_engine_and_target(&mut s, w, t, r.engine_of(w))?;
            let _ = writeln!(
                s,
                "rw={}{}\niodepth={}\nnumjobs={}",
                rw_word(w),
                if w.seq_gap_bytes != 0 {
                    format!(":{}", signed_size(w.seq_gap_bytes))
                } else {
                    String::new()
                },
                w.qd,
                w.streams
            );
            if !(w.read_pct == 0 || w.read_pct == 100) {
                let _ = writeln!(s, "rwmixread={}", w.read_pct);
            }
            fio_block_sizes(&mut s, &w.bs);
            fio_region(&mut s, w, t, set);
            if let Rate::Iops(rate) = w.rate {
                let _ = writeln!(
                    s,
                    "rate_iops={}\nrate_process=poisson",
                    (rate / w.streams as f64).round() as u64
                );
            }
            fio_pauses_and_flow(&mut s, w);
            fio_settings(&mut s, w)?;
            fio_priorities(&mut s, w)?;
            fio_on_error(&mut s, w)?;
            if let Some(d) = r.duration_ns {
                let _ = writeln!(s, "time_based\nruntime={}", format_duration_ns(d));
            }
            if let Some(p) = r.passes {
                let _ = writeln!(s, "loops={p}");
            }
            // fio ramps a job after its start delay; the plan counts from the start.
            let ramp_ns = r.warmup_of(w).saturating_sub(w.pauses.start_delay_ns);
            if ramp_ns > 0 {
                let _ = writeln!(s, "ramp_time={}", format_duration_ns(ramp_ns));
            }
            fio_cpus_and_durability(&mut s, r, w);
            let data = with_plan_data(plan, w).overrides.data;
            fio_data(&mut s, &data);
            if let Some(set) = data.dedup_set {
                let size = w
                    .size_bytes
                    .or(t.size_bytes)
                    .filter(|&b| b > 0)
                    .ok_or_else(|| FioEmitError::DedupSet {
                        workload: w.name.clone(),
                    })?;
                let pct = (set.bytes as f64 * 100.0 / size as f64).round() as u64;
                let _ = writeln!(
                    s,
                    "dedupe_mode=working_set\ndedupe_working_set_percentage={pct}"
                );
                if set.global {
                    s.push_str("dedupe_global=1\n");
                }
            }
            if let Some(b) = plan.data.dedup_unit_bytes {
                let _ = writeln!(s, "verify_interval={b}");
            }
            // The run's own logs go with its first job.
            let run_logs = r.fio_logs.as_ref().filter(|_| wi == 0);
            if let Some(logs) = w.overrides.fio_logs.as_ref().or(run_logs) {
                fio_logs(&mut s, logs, r.interval_ns);
            }
            let _ = writeln!(s, "randseed={}\ngroup_reporting", r.seed);
        }
    }
    Ok(s)
}

/// The workload's CPUs, O_DSYNC and periodic flushes, in fio's words.
fn fio_cpus_and_durability(s: &mut String, r: &RunSpec, w: &Workload) {
    use crate::plan::tuning::SyncKind;
    if let Some(c) = r.cpus_of(w) {
        let _ = writeln!(s, "cpus_allowed={}", cpu_list(c));
    }
    if r.io.write_through {
        s.push_str("sync=1\n");
    }
    let f = r.flushes_of(w);
    if f.every == 0 {
        return;
    }
    let _ = match f.kind {
        SyncKind::Fsync => writeln!(s, "fsync={}", f.every),
        SyncKind::Fdatasync => writeln!(s, "fdatasync={}", f.every),
        SyncKind::SyncFileRange(_) => {
            let flags = f.kind.name().trim_start_matches("sync_file_range:");
            writeln!(s, "sync_file_range={flags}:{}", f.every)
        }
    };
}

/// The target a workload names.
fn target_of<'p>(plan: &'p Plan, w: &Workload) -> Result<&'p TargetSpec, FioEmitError> {
    plan.targets
        .iter()
        .find(|t| t.name == w.target)
        .ok_or_else(|| FioEmitError::UnknownTarget {
            workload: w.name.clone(),
        })
}

/// The plan's runs, once none sets a declared run setting: fio has none of them.
fn fio_runs(plan: &Plan) -> Result<std::slice::Iter<'_, RunSpec>, FioEmitError> {
    for r in &plan.runs {
        if let Some((d, _)) = r.settings.changed().next() {
            return Err(FioEmitError::RunSetting {
                run: r.name.clone(),
                key: d.key,
            });
        }
    }
    Ok(plan.runs.iter())
}

/// The declared settings that differ from their defaults, as the fio options that
/// mean them (fio's option table); one that no fio option means is refused.
fn fio_settings(s: &mut String, w: &Workload) -> Result<(), FioEmitError> {
    fio_random_map(s, w);
    for (d, v) in w.settings.changed() {
        // fio's exitall is written with the workload's stops.
        if std::ptr::eq(d, &RANDOM_MAP) || std::ptr::eq(d, &EXIT_ALL) {
            continue;
        }
        let missing = || FioEmitError::Setting {
            workload: w.name.clone(),
            key: d.key,
        };
        let (name, _, conv) = crate::plan::compat::fio_options::settings()
            .find(|(_, decl, _)| std::ptr::eq(*decl, d))
            .ok_or_else(missing)?;
        let value = match conv {
            None => v.to_fio(),
            Some(c) => (c.to_fio)(v).ok_or_else(missing)?,
        };
        let _ = writeln!(s, "{name}={value}");
    }
    Ok(())
}

/// `random_map` as fio says it: fio keeps its random map unless told `norandommap`,
/// so a random workload without one gets `norandommap=1` (sprandom writes its own).
/// With several block sizes fio's map also shortens an I/O that would reach a block
/// done before; a comment says so.
fn fio_random_map(s: &mut String, w: &Workload) {
    let random = matches!(w.pattern, AccessPattern::Random);
    let replay = !w.settings.get(&TRACE).as_str().is_empty();
    if !random || w.sprandom.is_some() || replay {
        return;
    }
    if !w.settings.flag(&RANDOM_MAP) {
        s.push_str("norandommap=1\n");
    } else if w.bs.min_bytes() != w.bs.max_bytes() {
        s.push_str(
            "; fio's random map shortens an I/O that would reach a block done before in \
             the pass; ioscope's random_map does not\n",
        );
    }
}

/// fio-format logs as fio's options: the prefixes, and the interval as
/// `log_avg_msec` (fio numbers the files itself, by the job's place in the file).
fn fio_logs(s: &mut String, logs: &FioLogs, interval_ns: u64) {
    for (key, prefix) in [
        ("write_bw_log", &logs.bw),
        ("write_lat_log", &logs.lat),
        ("write_iops_log", &logs.iops),
    ] {
        if let Some(p) = prefix {
            let _ = writeln!(s, "{key}={p}");
        }
    }
    let _ = writeln!(s, "log_avg_msec={}", (interval_ns / 1_000_000).max(1));
    if logs.offset {
        s.push_str("log_offset=1\n");
    }
}

/// A `files:` target as fio's file options (`directory`, `nrfiles` and
/// `filename_format`, or `filename=A:B:C`; `filesize`, `file_service_type`,
/// `unlink`), one per line.
fn fio_files(w: &Workload, t: &TargetSpec) -> Result<String, FioEmitError> {
    let bad = |why: &'static str| FioEmitError::Target {
        uri: t.uri.clone(),
        why,
    };
    let rest = t.uri.strip_prefix("files:").ok_or(bad(
        "a tree of existing files (vdbench's) is not translated to fio yet",
    ))?;
    let set = crate::plan::fileset::FileSetSpec::parse(rest)
        .map_err(|_| bad("does not parse as a file set"))?;
    let mut s = format!("directory={}\n", set.dir.display());
    match &set.list {
        Some(names) => {
            let escaped: Vec<String> = names.iter().map(|n| n.replace(':', "\\:")).collect();
            let _ = writeln!(s, "filename={}", escaped.join(":"));
        }
        None => {
            let clones = set.count / set.per.max(1);
            if clones != 1 && clones != u64::from(w.streams) {
                return Err(bad(
                    "its files are not one group per clone (per × numjobs), which fio cannot name",
                ));
            }
            if set.name.contains("{n}") && set.per != set.count {
                return Err(bad(
                    "names files with {n} across clones, which fio cannot name",
                ));
            }
            let fmt = set
                .name
                .replace("{n}", "$filenum")
                .replace("{clone}", "$jobnum")
                .replace("{file}", "$filenum");
            let _ = writeln!(s, "nrfiles={}\nfilename_format={fmt}", set.per);
        }
    }
    let _ = writeln!(s, "filesize={}", format_size(set.file_bytes));
    if !w.file_service.is_default() {
        let _ = writeln!(s, "file_service_type={}", w.file_service.text());
    }
    if set.unlink {
        s.push_str("unlink=1\n");
    }
    Ok(s)
}

/// Refuses what fio has no words for (or words with another meaning).
fn fio_can_express(w: &Workload, t: &TargetSpec) -> Result<(), FioEmitError> {
    if t.create == FileCreate::Allocated {
        return Err(FioEmitError::AllocatedCreate { uri: t.uri.clone() });
    }
    let workload = || w.name.clone();
    if w.dist != Distribution::Uniform {
        // fio has these too, but the parameterisation differs; say so.
        return Err(FioEmitError::Distribution {
            workload: workload(),
        });
    }
    // fio's own clones each walk the whole region from its start: `whole` with no
    // increment is plain numjobs.
    let fio_clones = w.seq_layout == SeqLayout::Whole && w.offset_increment_bytes == 0;
    if !w.seq_layout.is_regions() && w.streams > 1 && !fio_clones {
        return Err(FioEmitError::Stride {
            workload: workload(),
            layout: w.seq_layout.name(),
        });
    }
    if w.pauses.stop_ns > 0 {
        return Err(FioEmitError::EarlyStop {
            workload: workload(),
        });
    }
    if w.overrides.amount.is_some() {
        return Err(FioEmitError::OwnAmount {
            workload: workload(),
        });
    }
    Ok(())
}

/// fio's `ioengine=` and the options that name the target, as the engine's and the
/// target's kind descriptors say, or why fio has no form for them; true for a file
/// set's options.
fn fio_engine_and_target(
    s: &mut String,
    w: &Workload,
    t: &TargetSpec,
    asked: EngineKind,
) -> Result<bool, FioEmitError> {
    let refuse = |why| FioEmitError::Target {
        uri: t.uri.clone(),
        why,
    };
    let kind = ProbeKind::of_uri(&t.uri).ok_or(refuse("fio has no equivalent"))?;
    let own = kind.desc().engine;
    let engine = Some(asked)
        .filter(|&e| e != EngineKind::Auto)
        .unwrap_or(own);
    super::target_kind::engine_fits(engine, &[kind]).map_err(|msg| FioEmitError::Fits {
        uri: t.uri.clone(),
        msg,
    })?;
    let escaped = t.uri.replace(':', "\\:");
    let _ = match kind.desc().fio {
        FioTarget::Path | FioTarget::IscsiUrl => writeln!(s, "filename={escaped}"),
        FioTarget::Set => writeln!(s, "{}", fio_files(w, t)?.trim_end()),
        FioTarget::NbdUri => writeln!(s, "uri={}", t.uri),
        FioTarget::NfsUrl => writeln!(s, "{}", fio_nfs(&t.uri).ok_or(refuse("does not parse"))?),
        FioTarget::Missing(why) => return Err(refuse(why)),
    };
    let name = engine.name();
    let ioengine = match engine.desc().fio {
        FioEngine::Same(e) => format!("ioengine={e}"),
        FioEngine::Near(e, differs) => format!("; {differs}; fio runs {e}\nioengine={e}"),
        FioEngine::NotYet => return Err(FioEmitError::EngineNotYet { engine: name }),
        FioEngine::Missing(why) => return Err(FioEmitError::Engine { engine: name, why }),
    };
    let _ = writeln!(s, "{ioengine}");
    Ok(kind.desc().fio == FioTarget::Set)
}

/// An `nfs://HOST[:PORT]/EXPORT/FILE[?mountport=N]` target as fio's nfs options:
/// the export in `nfs_url` (the port as libnfs's `nfsport`), the file in `filename`.
fn fio_nfs(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("nfs://")?;
    let (rest, query) = rest
        .split_once('?')
        .map_or((rest, None), |(r, q)| (r, Some(q)));
    let (authority, path) = rest.split_once('/')?;
    let (export, file) = path.trim_end_matches('/').rsplit_once('/')?;
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !p.ends_with(']') => (h, Some(format!("nfsport={p}"))),
        _ => (authority, None),
    };
    let args: Vec<String> = port.into_iter().chain(query.map(str::to_string)).collect();
    let args = if args.is_empty() {
        String::new()
    } else {
        format!("?{}", args.join("&"))
    };
    Some(format!(
        "nfs_url=nfs://{host}/{export}{args}\nfilename={file}"
    ))
}

/// `bs=` for one size per direction, else `bssplit=` with the weights as
/// percentages; `READ,WRITE` when writes have sizes of their own.
fn fio_block_sizes(s: &mut String, bs: &BlockSizes) {
    let lists: Vec<&[(u64, u32)]> = match &bs.write_split {
        Some(w) => vec![&bs.split, w],
        None => vec![&bs.split],
    };
    if lists.iter().all(|l| l.len() == 1) {
        let sizes: Vec<String> = lists.iter().map(|l| format_size(l[0].0)).collect();
        let _ = writeln!(s, "bs={}", sizes.join(","));
        return;
    }
    let splits: Vec<String> = lists
        .iter()
        .map(|l| {
            let total: u32 = l.iter().map(|&(_, wt)| wt).sum();
            let parts: Vec<String> = l
                .iter()
                .map(|&(b, wt)| format!("{}/{}", format_size(b), wt * 100 / total.max(1)))
                .collect();
            parts.join(":")
        })
        .collect();
    let _ = writeln!(s, "bssplit={}", splits.join(","));
}

/// Where a workload's I/O goes as fio options: direct, how the file is created,
/// size, offset and strided zones. With `set`, the target is a file set whose
/// clones' own files already place each clone (`offset_increment` is implied, not
/// written).
fn fio_region(s: &mut String, w: &Workload, t: &TargetSpec, set: bool) {
    let _ = writeln!(s, "direct={}", if t.direct == Some(false) { 0 } else { 1 });
    match t.create {
        // fio creates the file when the job opens it, empty, and never preallocates
        // it then.
        FileCreate::Empty => s.push_str("create_on_open=1\n"),
        FileCreate::Never => s.push_str("allow_file_create=0\n"),
        FileCreate::Data | FileCreate::Allocated => {}
    }
    let size = w.size_bytes.or(t.size_bytes);
    // Sequential streams in their own slices: fio's clones each walk all of their
    // region, so each clone gets the slice as its size and the next one further on.
    let slice = size.and_then(|z| own_slice(w, z)).filter(|_| !set);
    if let Some(z) = slice.or(size) {
        let _ = writeln!(s, "size={}", format_size(z));
    }
    if w.offset_bytes > 0 {
        let _ = writeln!(s, "offset={}", format_size(w.offset_bytes));
    }
    if let Some(inc) = slice.or(Some(w.offset_increment_bytes).filter(|&b| b > 0 && !set)) {
        let _ = writeln!(s, "offset_increment={}", format_size(inc));
    }
    if let Some(z) = w.zones {
        let _ = writeln!(
            s,
            "zonemode=strided\nzonesize={}\nzonerange={}\nzoneskip={}",
            format_size(z.io_bytes),
            format_size(z.range_bytes),
            format_size(z.skip_bytes)
        );
    }
    if let Some(z) = w.zbd {
        fio_zbd(s, &z);
    }
}

/// The slice each stream of a sequential workload walks over `size` bytes
/// ([`Workload::region_slice`]), when it has several streams that split the region
/// (no `offset_increment`, no emulated zones).
fn own_slice(w: &Workload, size: u64) -> Option<u64> {
    let split = w.streams > 1 && w.offset_increment_bytes == 0 && w.zbd.is_none();
    w.region_slice(size).filter(|_| split)
}

/// Emulated zones as fio's `zonemode=zbd` options.
fn fio_zbd(s: &mut String, z: &crate::plan::zbd::Zbd) {
    let _ = writeln!(s, "zonemode=zbd\nzonesize={}", format_size(z.zone_bytes));
    if z.capacity_bytes != z.zone_bytes {
        let _ = writeln!(s, "zonecapacity={}", format_size(z.capacity_bytes));
    }
    if z.max_open > 0 {
        let _ = writeln!(s, "max_open_zones={}", z.max_open);
    }
    if z.stream_max_open > 0 {
        let _ = writeln!(s, "job_max_open_zones={}", z.stream_max_open);
    }
    if z.reset_frequency > 0.0 {
        let _ = writeln!(
            s,
            "zone_reset_threshold={}\nzone_reset_frequency={}",
            z.reset_threshold, z.reset_frequency
        );
    }
    if z.read_beyond_wp {
        let _ = writeln!(s, "read_beyond_wp=1");
    }
}

/// A workload's own error policy as fio's `continue_on_error` and `ignore_error`.
/// fio continues on EIO and EILSEQ alone unless given the errnos, so a kind
/// continued on any errno has no fio equivalent.
fn fio_on_error(s: &mut String, w: &Workload) -> Result<(), FioEmitError> {
    use crate::plan::on_error::{Errno, ErrorKind::*};
    let Some(p) = &w.overrides.on_error else {
        return Ok(());
    };
    let refuse = |why| FioEmitError::OnError {
        workload: w.name.clone(),
        why,
    };
    let word = match p.continue_on.as_slice() {
        [] => "none",
        [Read] => "read",
        [Write] => "write",
        [Read, Write] => "io",
        [Verify] => "verify",
        [Read, Write, Verify] => "all",
        _ => return Err(refuse("continues on a set of kinds fio has no word for")),
    };
    let list = |kind, errnos: &Option<Vec<Errno>>| match errnos {
        _ if !p.continue_on.contains(&kind) => Ok(String::new()),
        Some(l) => Ok(l.iter().map(Errno::to_string).collect::<Vec<_>>().join(":")),
        None => Err(refuse(
            "continues on any errno; fio continues on EIO and EILSEQ unless given a list",
        )),
    };
    let (read, write) = (list(Read, &p.read_errnos)?, list(Write, &p.write_errnos)?);
    let _ = writeln!(s, "continue_on_error={word}");
    if !(read.is_empty() && write.is_empty()) {
        let _ = writeln!(s, "ignore_error={read},{write}");
    }
    Ok(())
}

/// A workload's own data settings, merged with the plan's ([`with_plan_data`]), as
/// fio options (true ratios back to fio's percentages: ratio R → 100 − 100/R).
/// Verification without the read-back after the run is fio's `do_verify=0`: once
/// merged, an unset `verify_after` is the plan's `false`.
fn fio_data(s: &mut String, d: &crate::plan::overrides::WorkloadData) {
    match (d.verify, d.verify_after) {
        (Some(true), Some(false) | None) => s.push_str("verify=crc32c\ndo_verify=0\n"),
        (Some(true), _) | (_, Some(true)) => s.push_str("verify=crc32c\n"),
        (Some(false), _) => s.push_str("verify=0\n"),
        _ => {}
    }
    for (key, ratio) in [
        ("buffer_compress_percentage", d.compress_ratio),
        ("dedupe_percentage", d.dedup_ratio),
    ] {
        if let Some(r) = ratio {
            let _ = writeln!(s, "{key}={}", (100.0 - 100.0 / r).round() as u32);
        }
    }
    if let Some(p) = &d.pattern {
        let _ = writeln!(s, "verify_pattern={}", p.hex());
    }
    if let Some(b) = d.verify_backlog {
        let _ = writeln!(
            s,
            "verify_backlog={}\nverify_backlog_batch={}",
            b.every_writes, b.batch_reads
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads fio text written by `to_fio` back through the fio translator, which
    /// must keep every option.
    fn read_back_fio(text: &str) -> crate::plan::compat::Translated {
        let t = crate::plan::compat::fio::parse_str(
            "c.fio",
            text,
            std::path::Path::new("/tmp"),
            &|_| None,
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        t
    }

    // vdbench hd= definitions are written as [[host]] tables and read back into
    // every run; runs with different ones are refused, not written wrong.
    #[test]
    fn host_definitions_round_trip_as_host_tables() {
        let t = crate::plan::compat::vdbench::parse_str(
            "h.parm",
            "hd=default,user=root,shell=ssh\nhd=a,system=node-a\nhd=b,system=node-b\n\
             sd=s1,host=a,lun=/dev/x\nsd=s2,host=b,lun=/dev/y\nwd=w1,sd=s*\n\
             rd=r1,wd=w1,elapsed=10\nrd=r2,wd=w1,elapsed=10\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let text = to_toml(&t.plan).unwrap();
        assert!(text.contains("[[host]]"), "{text}");
        let back = crate::plan::jobfile::parse("h.toml", &text).unwrap();
        for r in &back.runs {
            assert_eq!(r.hosts, t.plan.runs[0].hosts);
        }
        assert_eq!(back.runs[0].hosts[1].targets, ["s2"]);
        let mut differ = t.plan.clone();
        differ.runs[1].hosts.pop();
        assert!(matches!(
            to_toml(&differ),
            Err(TomlEmitError::HostDefs { run }) if run == "r2"
        ));
        let bad = text.replace("targets = [\"s2\"]", "targets = [\"nope\"]");
        let e = crate::plan::jobfile::parse("h.toml", &bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no target named 'nope'"), "{e}");
    }

    fn sample() -> Plan {
        Plan {
            targets: vec![TargetSpec {
                size_bytes: Some(1 << 30),
                direct: Some(true),
                ..TargetSpec::new("t0", "/tmp/x.dat")
            }],
            runs: vec![RunSpec {
                name: "run".into(),
                workloads: vec![Workload {
                    read_pct: 70,
                    bs: BlockSizes {
                        split: vec![(4096, 50), (65536, 50)],
                        write_split: None,
                    },
                    qd: 8,
                    streams: 2,
                    rate: Rate::Iops(5000.0),
                    arrival: Arrival::Uniform,
                    dist: Distribution::Zoned {
                        bands: vec![
                            Zone {
                                io_pct: 80.0,
                                range_pct: 10.0,
                            },
                            Zone {
                                io_pct: 20.0,
                                range_pct: 90.0,
                            },
                        ],
                    },
                    seq_layout: SeqLayout::Stride,
                    ..Default::default()
                }],
                engine: EngineKind::Uring,
                engine_opts: Default::default(),
                duration_ns: Some(30_000_000_000),
                passes: None,
                warmup_ns: 5_000_000_000,
                interval_ns: 1_000_000_000,
                cpus: Some(vec![0, 1]),
                workers: None,
                seed: 7,
                pacing: Pacing::Sleep,
                io: Default::default(),
                curve: None,
                fio_logs: None,
                hosts: Vec::new(),
                connections: None,
                io_timeout_ns: None,
                steady_stop: None,
                settings: Default::default(),
            }],
            warnings: vec![],
            data: Default::default(),
        }
    }

    #[test]
    fn multipath_and_smb_channels_read_back_from_toml() {
        use crate::plan::paths::{Failback, MultipathSpec, PathPolicy};
        let mut p = sample();
        p.targets[0].uri = "smb://u@10.0.0.1:4450/share/f.dat".into();
        p.targets[0].direct = None;
        for mp in [
            MultipathSpec {
                paths: vec!["smb://u@10.0.1.1:4450/share/f.dat".into()],
                policy: PathPolicy::Failover,
                retry_ns: 250_000_000,
                failback: Failback::AfterNs(5_000_000_000),
                channels: Some(4),
            },
            // Channels over the advertised interfaces: no paths, all defaults.
            MultipathSpec {
                paths: Vec::new(),
                policy: PathPolicy::default(),
                retry_ns: crate::plan::paths::DEFAULT_PATH_RETRY_NS,
                failback: Failback::Immediate,
                channels: Some(2),
            },
            MultipathSpec {
                paths: vec!["smb://u@10.0.1.1:4450/share/f.dat".into()],
                policy: PathPolicy::RoundRobin { n: 100 },
                retry_ns: crate::plan::paths::DEFAULT_PATH_RETRY_NS,
                failback: Failback::Manual,
                channels: None,
            },
        ] {
            p.targets[0].multipath = Some(mp);
            let text = to_toml(&p).unwrap();
            let back = crate::plan::jobfile::parse("converted.toml", &text).unwrap();
            assert_eq!(back.targets, p.targets, "{text}");
        }
    }

    #[test]
    fn engine_options_and_file_sets_read_back_from_toml() {
        use crate::plan::engine_opts::{CpuBurn, CpuMode, EngineOptions, ExecSpec, StatCall};
        let mut p = sample();
        p.targets[0].uri = "files:/tmp/meta?count=40&per=20&name=j.{clone}.{file}".into();
        for (engine, opts) in [
            (
                EngineKind::FileStat,
                EngineOptions {
                    stat: StatCall::Lstat,
                    ..Default::default()
                },
            ),
            (
                EngineKind::Cpuio,
                EngineOptions {
                    stat: StatCall::Stat,
                    cpu: Some(CpuBurn {
                        load_pct: 30,
                        chunk_ns: 20_000_000,
                        mode: CpuMode::Qsort,
                    }),
                    ..Default::default()
                },
            ),
            (
                EngineKind::Exec,
                EngineOptions {
                    exec: Some(ExecSpec {
                        program: "/usr/bin/iostat".into(),
                        args: vec!["-x".into(), "a b".into()],
                        grace_ns: 0,
                        output: Some("mon".into()),
                    }),
                    ..Default::default()
                },
            ),
        ] {
            p.runs[0].engine = engine;
            p.runs[0].engine_opts = opts.clone();
            let text = to_toml(&p).unwrap();
            let back = crate::plan::jobfile::parse("converted.toml", &text).unwrap();
            assert_eq!(back.targets, p.targets);
            assert_eq!(back.runs[0].engine, engine);
            assert_eq!(back.runs[0].engine_opts, opts, "{text}");
        }
        p.targets[0].uri = "/tmp/x.dat".into();
        p.runs[0].workloads[0].dist = Distribution::Uniform;
        p.runs[0].workloads[0].seq_layout = SeqLayout::Regions;
        assert!(matches!(
            to_fio(&p),
            Err(FioEmitError::EngineNotYet { engine: "exec" })
        ));
        p.runs[0].engine = EngineKind::Falloc;
        p.runs[0].engine_opts = Default::default();
        let fio = to_fio(&p).unwrap();
        assert!(fio.contains("ioengine=falloc"), "{fio}");
    }

    #[test]
    fn per_direction_block_sizes_are_written_for_fio_and_read_back_from_toml() {
        let mut p = sample();
        p.runs[0].workloads[0].bs =
            BlockSizes::per_direction(vec![(65536, 40), (1 << 20, 60)], vec![(1 << 20, 100)]);
        let w = &mut p.runs[0].workloads[0];
        (w.dist, w.seq_layout) = (Distribution::Uniform, SeqLayout::Regions);
        w.pauses.stop_ns = 0;
        let fio = to_fio(&p).unwrap();
        assert!(fio.contains("bssplit=64k/40:1m/60,1m/100\n"), "{fio}");
        let text = to_toml(&p).unwrap();
        assert!(text.contains("write_bs = \"1m\""), "{text}");
        let back = crate::plan::jobfile::parse("converted.toml", &text).unwrap();
        assert_eq!(back.runs[0].workloads[0].bs, p.runs[0].workloads[0].bs);
        p.runs[0].workloads[0].bs = BlockSizes::per_direction(vec![(4096, 1)], vec![(16384, 1)]);
        assert!(to_fio(&p).unwrap().contains("bs=4k,16k\n"));
    }

    #[test]
    fn emulated_zones_read_back_from_toml_and_fio() {
        let mut p = sample();
        let zbd = crate::plan::zbd::Zbd {
            capacity_bytes: 768 << 10,
            max_open: 8,
            stream_max_open: 2,
            reset_threshold: 0.7,
            reset_frequency: 0.125,
            read_beyond_wp: true,
            ..crate::plan::zbd::Zbd::of_size(1 << 20)
        };
        let w = &mut p.runs[0].workloads[0];
        (w.dist, w.seq_layout) = (Distribution::Uniform, SeqLayout::Regions);
        w.pauses.stop_ns = 0;
        w.rate = Rate::Max;
        w.zbd = Some(zbd);
        let text = to_toml(&p).unwrap();
        assert!(text.contains("zone_mode = \"zbd\""), "{text}");
        let back = crate::plan::jobfile::parse("converted.toml", &text).unwrap();
        assert_eq!(back.runs[0].workloads[0].zbd, Some(zbd), "{text}");
        let fio = to_fio(&p).unwrap();
        let t =
            crate::plan::compat::fio::parse_str("e.fio", &fio, std::path::Path::new("."), &|_| {
                None
            })
            .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}\n{fio}", t.unsupported);
        assert_eq!(t.plan.runs[0].workloads[0].zbd, Some(zbd), "{fio}");
    }

    #[test]
    fn toml_reads_back_into_the_same_plan() {
        let p = sample();
        let text = to_toml(&p).unwrap();
        let back = crate::plan::jobfile::parse("converted.toml", &text).unwrap();
        assert_eq!(back.targets, p.targets);
        assert_eq!(back.runs.len(), 1);
        let (a, b) = (&back.runs[0], &p.runs[0]);
        assert_eq!(a.duration_ns, b.duration_ns);
        assert_eq!(a.warmup_ns, b.warmup_ns);
        assert_eq!(a.cpus, b.cpus);
        assert_eq!(a.seed, b.seed);
        let (wa, wb) = (&a.workloads[0], &b.workloads[0]);
        assert_eq!(
            (wa.read_pct, wa.qd, wa.streams),
            (wb.read_pct, wb.qd, wb.streams)
        );
        assert_eq!(wa.bs, wb.bs);
        assert_eq!(wa.pattern, wb.pattern);
        // Everything else too, but the run-qualified name.
        let renamed = Workload {
            name: wb.name.clone(),
            ..wa.clone()
        };
        assert_eq!(&renamed, wb);
        assert_eq!(a.pacing, b.pacing);
    }

    /// A workload's own engine, io_uring settings, warm-up, CPUs and data settings
    /// survive TOML and fio output: the second workload keeps them, the first follows
    /// its run.
    #[test]
    fn sequential_streams_in_slices_go_to_fio_as_clones_a_slice_apart() {
        let text = "[[target]]\npath = \"/tmp/x\"\nsize = \"1m\"\n\
                    [[workload]]\nrw = \"read\"\nbs = \"4k\"\nstreams = 4\n\
                    [[run]]\npasses = 1\n";
        let p = crate::plan::jobfile::parse("s.toml", text).unwrap();
        let fio = to_fio(&p).unwrap();
        assert!(
            fio.contains("numjobs=4\n")
                && fio.contains("size=256k\n")
                && fio.contains("offset_increment=256k\n"),
            "{fio}"
        );
        // Read back, each clone walks its own quarter: the same I/O.
        let back = read_back_fio(&fio);
        let w = &back.plan.runs[0].workloads[0];
        assert_eq!(
            (w.streams, w.size_bytes, w.offset_increment_bytes),
            (4, Some(256 << 10), 256 << 10)
        );
    }

    #[test]
    fn own_flushes_read_back_from_fio() {
        use crate::plan::tuning::{Flushes, SyncKind};
        let mut p = sample();
        let w0 = &mut p.runs[0].workloads[0];
        (w0.dist, w0.seq_layout, w0.rate) = (Distribution::Uniform, SeqLayout::Regions, Rate::Max);
        w0.read_pct = 0;
        p.runs[0].io.sync_every = 8;
        let mut own = p.runs[0].workloads[0].clone();
        own.name = "own".into();
        own.overrides.flushes = Some(Flushes {
            every: 4,
            kind: SyncKind::SyncFileRange(3),
        });
        p.runs[0].workloads.push(own);
        let text = to_fio(&p).unwrap();
        assert!(
            text.contains("sync_file_range=wait_before,write:4"),
            "{text}"
        );
        let back = read_back_fio(&text);
        let r = &back.plan.runs[0];
        let flushes: Vec<_> = r.workloads.iter().map(|w| r.flushes_of(w)).collect();
        let run = &p.runs[0];
        assert_eq!(
            flushes,
            [
                run.flushes_of(&run.workloads[0]),
                run.flushes_of(&run.workloads[1])
            ]
        );
    }

    #[test]
    fn own_settings_read_back_from_toml_and_fio() {
        let mut p = sample();
        let w0 = &mut p.runs[0].workloads[0];
        (w0.dist, w0.seq_layout, w0.rate) = (Distribution::Uniform, SeqLayout::Regions, Rate::Max);
        let mut w1 = Workload {
            name: "own".into(),
            ..p.runs[0].workloads[0].clone()
        };
        w1.overrides = crate::plan::overrides::WorkloadOverrides {
            engine: Some(EngineKind::Sync),
            warmup_ns: Some(2_000_000_000),
            cpus: Some(vec![1]),
            data: crate::plan::overrides::WorkloadData {
                verify: Some(true),
                verify_after: Some(true),
                compress_ratio: Some(2.0),
                dedup_ratio: None,
                pattern: crate::plan::fill::FillPattern::parse_fio("0x5a").ok(),
                dedup_set: Some(crate::plan::model::DedupSet {
                    // A quarter of the workload's 1g: fio writes it as a percentage.
                    bytes: 256 << 20,
                    global: true,
                }),
                verify_backlog: Some(crate::plan::overrides::VerifyBacklog {
                    every_writes: 8,
                    batch_reads: 4,
                }),
            },
            on_error: Some(crate::plan::on_error::OnError {
                continue_on: vec![crate::plan::on_error::ErrorKind::Write],
                read_errnos: None,
                write_errnos: Some(vec![
                    crate::plan::on_error::Errno(libc::ENOSPC),
                    crate::plan::on_error::Errno(4000),
                ]),
            }),
            fio_logs: Some(FioLogs {
                bw: None,
                lat: Some("own".into()),
                iops: None,
                offset: false,
                job: 2,
            }),
            ..Default::default()
        };
        p.runs[0].workloads.push(w1.clone());
        let back = crate::plan::jobfile::parse("c.toml", &to_toml(&p).unwrap()).unwrap();
        assert!(back.runs[0].workloads[0].overrides.is_default());
        assert_eq!(back.runs[0].workloads[1].overrides, w1.overrides);
        // An operation engine of its own with its options, and amounts of its own.
        let mut op = w1.clone();
        op.overrides.engine = Some(EngineKind::E4defrag);
        op.overrides.amount = Some(crate::plan::overrides::Amount::TimeBased);
        op.overrides.engine_opts = Some(crate::plan::engine_opts::EngineOptions {
            defrag: Some(crate::plan::engine_opts::DefragSpec {
                donor: "/mnt/d.def".into(),
                inplace: true,
            }),
            ..Default::default()
        });
        let mut passes = w1.clone();
        passes.name = "passes".into();
        passes.overrides.amount = Some(crate::plan::overrides::Amount::Passes(3));
        let mut q = p.clone();
        q.runs[0].workloads[1] = op.clone();
        q.runs[0].workloads.push(passes.clone());
        let back = crate::plan::jobfile::parse("c.toml", &to_toml(&q).unwrap()).unwrap();
        assert_eq!(back.runs[0].workloads[1].overrides, op.overrides);
        assert_eq!(back.runs[0].workloads[2].overrides, passes.overrides);
        assert!(to_fio(&q).is_err(), "e4defrag has no fio export");
        q.runs[0].workloads.remove(1);
        assert!(matches!(to_fio(&q), Err(FioEmitError::OwnAmount { .. })));
        let mut uring = w1.clone();
        uring.overrides.engine = None;
        uring.overrides.uring = Some(crate::plan::UringOptions {
            batch_submit: 4,
            ..Default::default()
        });
        p.runs[0].workloads[1] = uring.clone();
        let back = crate::plan::jobfile::parse("c.toml", &to_toml(&p).unwrap()).unwrap();
        assert_eq!(back.runs[0].workloads[1].overrides, uring.overrides);
        // fio: the engine, ramp, CPUs and verify come back per job (the data
        // settings as the job's own, since the first job has none).
        p.runs[0].workloads[1] = w1.clone();
        let text = to_fio(&p).unwrap();
        let t = read_back_fio(&text);
        let run = &t.plan.runs[0];
        let own = &run.workloads[1];
        assert_eq!(run.engine_of(own), EngineKind::Sync);
        assert_eq!(run.warmup_of(own), 2_000_000_000);
        assert_eq!(run.warmup_of(&run.workloads[0]), 5_000_000_000);
        assert_eq!(run.cpus_of(own), Some(&vec![1]));
        assert_eq!(run.cpus_of(&run.workloads[0]), Some(&vec![0, 1]));
        assert_eq!(own.overrides.data.verify, Some(true));
        assert_eq!(own.overrides.data.compress_ratio, Some(2.0));
        assert!(text.contains("continue_on_error=write\nignore_error=,ENOSPC:4000\n"));
        assert_eq!(own.overrides.on_error, w1.overrides.on_error);
        assert_eq!(run.workloads[0].overrides.on_error, None);
    }

    /// fio's `do_verify=0` (stamp, no read-back) survives fio → plan → fio, also when
    /// the plan holds it plan-wide (verify on, `verify_after` off) rather than per job.
    #[test]
    fn verify_without_read_back_goes_back_to_fio_as_do_verify_0() {
        let t =
            read_back_fio("[j]\nfilename=/tmp/x\nsize=1m\nrw=write\nverify=crc32c\ndo_verify=0\n");
        let text = to_fio(&t.plan).unwrap();
        assert!(text.contains("verify=crc32c\ndo_verify=0\n"), "{text}");
        let back = read_back_fio(&text);
        assert!(
            back.plan.data.verify
                || back.plan.runs[0].workloads[0].overrides.data.verify == Some(true)
        );
        assert!(!back.plan.data.verify_after);
        // With the read-back, plain verify=crc32c.
        let t = read_back_fio("[j]\nfilename=/tmp/x\nsize=1m\nrw=write\nverify=crc32c\n");
        let text = to_fio(&t.plan).unwrap();
        assert!(
            text.contains("verify=crc32c\n") && !text.contains("do_verify"),
            "{text}"
        );
    }

    /// An error policy fio has no words for is refused, not approximated.
    #[test]
    fn error_policies_fio_cannot_express_are_refused() {
        use crate::plan::on_error::{ErrorKind::*, OnError};
        let mut p = sample();
        p.targets[0].uri = "/tmp/x.dat".into();
        let w = &mut p.runs[0].workloads[0];
        (w.dist, w.seq_layout) = (Distribution::Uniform, SeqLayout::Regions);
        for (kinds, why) in [(vec![Read, Verify], "no word"), (vec![Write], "any errno")] {
            p.runs[0].workloads[0].overrides.on_error = Some(OnError {
                continue_on: kinds,
                ..Default::default()
            });
            let e = to_fio(&p).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
        p.runs[0].workloads[0].overrides.on_error = Some(OnError {
            continue_on: vec![Verify],
            ..Default::default()
        });
        assert!(to_fio(&p).unwrap().contains("continue_on_error=verify\n"));
    }

    /// Start delay and think time survive TOML and fio output and come back the same.
    #[test]
    fn pauses_read_back_from_toml_and_fio() {
        let mut p = sample();
        p.targets[0].uri = "/tmp/x.dat".into();
        let w = &mut p.runs[0].workloads[0];
        w.rate = Rate::Max;
        w.dist = Distribution::Uniform;
        w.seq_layout = SeqLayout::Regions;
        let pauses = Pauses {
            start_delay_ns: 1_500_000_000,
            think_ns: 250_000,
            think_every_ios: 4,
            think_io_ns: 0,
            stop_ns: 0,
            stop_after_ios: 1000,
            pass_bytes: 3 << 20,
        };
        w.pauses = pauses;
        let text = to_toml(&p).unwrap();
        assert!(
            text.contains("start_delay = ")
                && text.contains("think_every = 4")
                && text.contains("stop_after_ios = 1000")
                && text.contains("pass_size = \"3m\""),
            "{text}"
        );
        let back = crate::plan::jobfile::parse("converted.toml", &text).unwrap();
        assert_eq!(back.runs[0].workloads[0].pauses, pauses);
        let mut stopping = p.clone();
        stopping.runs[0].workloads[0].pauses.stop_ns = 7_000_000_000;
        let back = crate::plan::jobfile::parse("s.toml", &to_toml(&stopping).unwrap()).unwrap();
        assert_eq!(back.runs[0].workloads[0].pauses.stop_ns, 7_000_000_000);
        assert!(to_fio(&stopping).is_err());
        let fio = to_fio(&p).unwrap();
        let t = crate::plan::compat::fio::parse_str(
            "out.fio",
            &fio,
            std::path::Path::new("."),
            &|_| None,
        )
        .unwrap();
        assert_eq!(t.plan.runs[0].workloads[0].pauses, pauses, "{fio}");
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        // Thinking paced by I/O time (fio's thinktime_iotime), alone or with a count
        // of 1, comes back as it was from both forms.
        for every in [0, 1] {
            let timed = Pauses {
                think_every_ios: every,
                think_io_ns: 9_000_000_000,
                ..pauses
            };
            p.runs[0].workloads[0].pauses = timed;
            let back = crate::plan::jobfile::parse("t.toml", &to_toml(&p).unwrap()).unwrap();
            assert_eq!(back.runs[0].workloads[0].pauses, timed);
            let fio = to_fio(&p).unwrap();
            let t = crate::plan::compat::fio::parse_str(
                "t.fio",
                &fio,
                std::path::Path::new("."),
                &|_| None,
            )
            .unwrap();
            assert_eq!(t.plan.runs[0].workloads[0].pauses, timed, "{fio}");
        }
    }

    /// A run's curve and fio logs are written to the job file and read back.
    #[test]
    fn curve_and_fio_logs_read_back_from_toml() {
        let mut p = sample();
        p.runs[0].curve = Some(CurveSpec {
            points_pct: vec![10.0, 50.0, 100.0],
            stop_latency: Some("mean=5ms".into()),
            max_latency: Some("p99.9=400us".into()),
            origin: Some("fio latency_target".into()),
        });
        p.runs[0].fio_logs = Some(FioLogs {
            bw: Some("a".into()),
            lat: None,
            iops: Some("c".into()),
            offset: true,
            job: 3,
        });
        p.runs[0].steady_stop = Some(SteadyStop {
            metric: SteadyMetric::Bw,
            slope: true,
            limit: 0.5,
            limit_is_pct: true,
            window_ns: 30_000_000_000,
            ramp_ns: 10_000_000_000,
        });
        let text = to_toml(&p).unwrap();
        let back = crate::plan::jobfile::parse("converted.toml", &text).unwrap();
        assert_eq!(back.runs[0].curve, p.runs[0].curve, "{text}");
        assert_eq!(back.runs[0].fio_logs, p.runs[0].fio_logs, "{text}");
        assert_eq!(back.runs[0].steady_stop, p.runs[0].steady_stop, "{text}");
        assert!(text.contains("steady_stop = \"bw_slope:0.5%\""), "{text}");
        p.runs[0].curve.as_mut().unwrap().points_pct.clear();
        let back = crate::plan::jobfile::parse("c.toml", &to_toml(&p).unwrap()).unwrap();
        assert_eq!(back.runs[0].curve, p.runs[0].curve);
        let bad = text.replace("p99.9=400us", "p42=400us");
        let e = crate::plan::jobfile::parse("bad.toml", &bad)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("bad.toml:") && e.contains("'curve_max_latency'"),
            "{e}"
        );
    }

    #[test]
    fn io_tuning_reads_back_from_toml_and_defaults_write_nothing() {
        use crate::plan::tuning::{SyncKind, UringOptions};
        let mut p = sample();
        let text = to_toml(&p).unwrap();
        assert!(
            !text.contains("sqpoll") && !text.contains("sync_every"),
            "{text}"
        );
        p.runs[0].io = IoTuning {
            uring: UringOptions {
                fixed_bufs: true,
                register_files: Some(false),
                sqpoll: true,
                sqpoll_cpu: Some(1),
                hipri: true,
                batch_submit: 8,
                batch_complete_min: 2,
                batch_complete_max: 16,
            },
            write_through: true,
            sync_every: 4,
            sync_kind: SyncKind::Fdatasync,
        };
        let text = to_toml(&p).unwrap();
        let back = crate::plan::jobfile::parse("converted.toml", &text).unwrap();
        assert_eq!(back.runs[0].io, p.runs[0].io, "{text}");
    }

    #[test]
    fn pause_reads_back_and_a_run_overrides_the_defaults() {
        let mut p = sample();
        assert!(!to_toml(&p).unwrap().contains("pause"));
        use crate::plan::settings::{declared::PAUSE, Value};
        p.runs[0].settings.set(&PAUSE, Value::Nanos(10_000_000_000));
        let text = to_toml(&p).unwrap();
        let back = crate::plan::jobfile::parse("converted.toml", &text).unwrap();
        assert_eq!(
            back.runs[0].settings.nanos(&PAUSE),
            10_000_000_000,
            "{text}"
        );
        let text = "[defaults]\npause = \"2s\"\n\
                    [[target]]\nname = \"t\"\npath = \"mem:1m\"\n\
                    [[workload]]\nname = \"a\"\ntarget = \"t\"\n\
                    [[run]]\nname = \"one\"\nworkloads = [\"a\"]\n\
                    [[run]]\nname = \"two\"\nworkloads = [\"a\"]\npause = 0\n";
        let p = crate::plan::jobfile::parse("pause.toml", text).unwrap();
        let got: Vec<u64> = p.runs.iter().map(|r| r.settings.nanos(&PAUSE)).collect();
        assert_eq!(got, [2_000_000_000, 0]);
    }

    #[test]
    fn connections_and_io_timeout_read_back_and_runs_override_defaults() {
        let mut p = sample();
        let text = to_toml(&p).unwrap();
        assert!(
            !text.contains("connections") && !text.contains("io_timeout"),
            "{text}"
        );
        p.runs[0].connections = Some(4);
        p.runs[0].io_timeout_ns = Some(1_500_000_000);
        let text = to_toml(&p).unwrap();
        assert!(text.contains("connections = 4"), "{text}");
        let back = crate::plan::jobfile::parse("converted.toml", &text).unwrap();
        assert_eq!(back.runs[0].connections, Some(4), "{text}");
        assert_eq!(back.runs[0].io_timeout_ns, Some(1_500_000_000), "{text}");
        let text = "[defaults]\nconnections = 2\nio_timeout = \"5s\"\n\
                    [[target]]\nname = \"t\"\npath = \"nbd://127.0.0.1\"\n\
                    [[workload]]\nname = \"a\"\ntarget = \"t\"\n\
                    [[run]]\nname = \"one\"\nworkloads = [\"a\"]\nconnections = 4\n\
                    [[run]]\nname = \"two\"\nworkloads = [\"a\"]\nio_timeout = 2\n";
        let p = crate::plan::jobfile::parse("net.toml", text).unwrap();
        let got: Vec<_> = p
            .runs
            .iter()
            .map(|r| (r.connections, r.io_timeout_ns))
            .collect();
        assert_eq!(
            got,
            [
                (Some(4), Some(5_000_000_000)),
                (Some(2), Some(2_000_000_000))
            ]
        );
        for (bad, want) in [
            ("connections = 4", "connections = 0"),
            ("io_timeout = 2", "io_timeout = \"0s\""),
            ("io_timeout = 2", "io_timeout = \"soon\""),
        ] {
            let e = crate::plan::jobfile::parse("net.toml", &text.replace(bad, want))
                .unwrap_err()
                .to_string();
            let key = want.split(' ').next().unwrap();
            assert!(e.contains("net.toml:") && e.contains(key), "{want}: {e}");
        }
    }

    #[test]
    fn a_run_overrides_the_io_keys_of_defaults() {
        let text = "[defaults]\nsqpoll = true\nsync_every = 8\nwrite_through = true\n\
                    [[target]]\nname = \"t\"\npath = \"/tmp/x\"\nsize = \"1m\"\n\
                    [[workload]]\nname = \"a\"\ntarget = \"t\"\n\
                    [[run]]\nworkloads = [\"a\"]\nsync_every = 2\nsync_kind = \"fdatasync\"\n";
        let p = crate::plan::jobfile::parse("io.toml", text).unwrap();
        let io = &p.runs[0].io;
        assert!(io.uring.sqpoll && io.write_through);
        assert_eq!(io.sync_every, 2);
        assert_eq!(io.sync_kind.name(), "fdatasync");
        let e = crate::plan::jobfile::parse("io.toml", &text.replace("\"fdatasync\"", "\"never\""))
            .unwrap_err();
        assert!(e.to_string().contains("'sync_kind' = \"never\""), "{e}");
    }

    // Regression: names were written with Rust's `{:?}` escapes ("\u{1}"), not TOML.
    #[test]
    fn awkward_names_read_back_unchanged() {
        for name in [
            "q\"b\\s",
            "ctl\u{1}\u{7f}\u{1b}",
            "nl\n\r\t",
            "é日本",
            "'''\"\"\"",
        ] {
            let mut p = sample();
            p.runs[0].name = name.into();
            p.runs[0].workloads[0].name = name.into();
            p.targets[0].uri = format!("/tmp/{name}");
            let text = to_toml(&p).unwrap();
            let back = crate::plan::jobfile::parse("converted.toml", &text)
                .unwrap_or_else(|e| panic!("{name:?}: {e}\n{text}"));
            assert_eq!(back.targets, p.targets);
            let mut expect = p.runs[0].clone();
            expect.workloads[0].name = format!("r0-{name}");
            assert_eq!(back.runs, vec![expect]);
        }
    }

    #[test]
    fn a_seed_beyond_toml_integers_is_refused() {
        let mut p = sample();
        p.runs[0].seed = u64::MAX;
        let e = to_toml(&p).unwrap_err();
        assert!(e.to_string().contains("seed 18446744073709551615"), "{e}");
    }

    #[test]
    fn a_share_mix_survives_conversion() {
        let mut p = sample();
        let mut w2 = p.runs[0].workloads[0].clone();
        w2.name = "b".into();
        w2.share_pct = Some(30.0);
        p.runs[0].workloads[0].share_pct = Some(70.0);
        p.runs[0].workloads.push(w2);
        let back = crate::plan::jobfile::parse("converted.toml", &to_toml(&p).unwrap()).unwrap();
        let shares: Vec<_> = back.runs[0].workloads.iter().map(|w| w.share_pct).collect();
        assert_eq!(shares, vec![Some(70.0), Some(30.0)]);
    }

    #[test]
    fn fio_job_reads_back_through_the_fio_reader() {
        let mut p = sample();
        p.runs[0].workloads[0].dist = Distribution::Uniform;
        let stride = to_fio(&p).unwrap_err();
        assert!(matches!(stride, FioEmitError::Stride { .. }), "{stride}");
        assert!(stride.to_string().contains("stride"), "{stride}");
        p.runs[0].workloads[0].seq_layout = SeqLayout::Regions;
        p.runs[0].workloads[0].rate = Rate::Max;
        let text = to_fio(&p).unwrap();
        let t = read_back_fio(&text);
        let w = &t.plan.runs[0].workloads[0];
        assert_eq!((w.read_pct, w.qd, w.streams), (70, 8, 2));
        assert_eq!(w.bs.split.len(), 2);
        assert_eq!(t.plan.runs[0].duration_ns, Some(30_000_000_000));
    }

    /// A plan fio can take, on `uri` with `engine`.
    fn on(uri: &str, engine: EngineKind) -> Plan {
        let mut p = sample();
        let w = &mut p.runs[0].workloads[0];
        (w.dist, w.seq_layout, w.rate) = (Distribution::Uniform, SeqLayout::Regions, Rate::Max);
        (p.targets[0].uri, p.runs[0].engine) = (uri.into(), engine);
        p
    }

    // Regression: every target and engine fio had no word for was written as
    // ioengine=io_uring (nbd, iscsi, nfs, sim, smb, page_fault, …).
    #[test]
    #[rustfmt::skip] // a table: one target a line
    fn each_target_kind_is_written_as_its_fio_engine_or_refused() {
        for (uri, text) in [
            ("nbd://127.0.0.1:10809/e", "uri=nbd://127.0.0.1:10809/e\nioengine=nbd\n"),
            ("nbd+unix:///e?socket=/s", "uri=nbd+unix:///e?socket=/s\nioengine=nbd\n"),
            ("iscsi://127.0.0.1:3260/iqn.2016-02.com.fio:system:fio/1",
             "filename=iscsi\\://127.0.0.1\\:3260/iqn.2016-02.com.fio\\:system\\:fio/1\nioengine=libiscsi\n"),
            ("nfs://127.0.0.1:2049/srv/nfs/f.dat?mountport=20048",
             "nfs_url=nfs://127.0.0.1/srv/nfs?nfsport=2049&mountport=20048\nfilename=f.dat\nioengine=nfs\n"),
            ("nfs://fs1/e/f", "nfs_url=nfs://fs1/e\nfilename=f\nioengine=nfs\n"),
        ] {
            let fio = to_fio(&on(uri, EngineKind::Auto)).unwrap();
            assert!(fio.contains(text), "{fio}");
            let back = read_back_fio(&fio).plan;
            assert_eq!(back.targets[0].uri, uri);
            assert_eq!(back.runs[0].engine, ProbeKind::of_uri(uri).unwrap().desc().engine);
        }
        let fio = to_fio(&on("/tmp/x.dat", EngineKind::Auto)).unwrap();
        let comment = "; ioscope's auto engine chooses when it opens the target: psync for \
                       files answered from memory (page cache, tmpfs) and for one request in \
                       flight, io_uring otherwise; fio runs io_uring\nioengine=io_uring\n";
        assert!(fio.contains(comment), "{fio}");
        let fio = to_fio(&on("/tmp/x.dat", EngineKind::Uring)).unwrap();
        assert!(fio.contains("filename=/tmp/x.dat\nioengine=io_uring\n"), "{fio}");
    }

    #[test]
    #[rustfmt::skip] // a table: one refusal a line
    fn targets_and_engines_fio_has_no_form_for_are_refused_with_the_reason() {
        use EngineKind::*;
        for (uri, engine, why) in [
            ("sim:1g", Auto, "target 'sim:1g': fio has no equivalent: sim: is a simulated"),
            ("mem:1g", Auto, "target 'mem:1g': fio has no equivalent: mem: is memory"),
            ("null:1g", Auto, "target 'null:1g': not translated to fio yet"),
            ("smb://h/s/f", Auto, "target 'smb://h/s/f': fio has no SMB client engine"),
            ("rbd://p/i", Auto, "target 'rbd://p/i': fio has no equivalent"),
            ("tree:/d?depth=1", FileCopy, "target 'tree:/d?depth=1': a tree of existing files"),
            ("/tmp/x.dat", Sim, "target '/tmp/x.dat': the sim engine works only with sim:SIZE targets"),
            ("files:/d?count=4", FileOpen, "the fileopen engine has no fio equivalent: fio has no engine for this vdbench"),
            ("/tmp/x.dat", PageFault, "the page_fault engine is not translated"),
            ("/tmp/x.dat", Nbd, "target '/tmp/x.dat': the nbd engine works only with nbd:// targets"),
            ("nbd://h/e", Uring, "target 'nbd://h/e': an NBD target needs the nbd engine, not uring"),
        ] {
            let e = to_fio(&on(uri, engine)).unwrap_err().to_string();
            assert!(e.starts_with(why), "{uri} {engine:?}: {e}");
        }
    }

    /// A file created empty is fio's `create_on_open=1` and reads back so; one
    /// only allocated has no fio option and is refused.
    #[test]
    fn file_creation_is_written_for_fio_or_refused() {
        let mut p = sample();
        p.runs[0].workloads[0].dist = Distribution::Uniform;
        p.runs[0].workloads[0].seq_layout = SeqLayout::Regions;
        p.runs[0].workloads[0].rate = Rate::Max;
        p.targets[0].create = FileCreate::Empty;
        let fio = to_fio(&p).unwrap();
        assert!(fio.contains("create_on_open=1\n"), "{fio}");
        let t = read_back_fio(&fio);
        assert_eq!(t.plan.targets[0].create, FileCreate::Empty);
        p.targets[0].create = FileCreate::Allocated;
        let e = to_fio(&p).unwrap_err();
        assert!(matches!(e, FioEmitError::AllocatedCreate { .. }), "{e}");
        p.targets[0].create = FileCreate::Never;
        let fio = to_fio(&p).unwrap();
        assert!(fio.contains("allow_file_create=0\n"), "{fio}");
        assert_eq!(
            read_back_fio(&fio).plan.targets[0].create,
            FileCreate::Never
        );
        let back = crate::plan::jobfile::parse("n.toml", &to_toml(&p).unwrap()).unwrap();
        assert_eq!(back.targets[0].create, FileCreate::Never);
        p.targets[0].create = FileCreate::Data;
        assert!(!to_fio(&p).unwrap().contains("create_on_open"));
    }

    /// A sequential gap (fio's `rw=read:-8k`) and flow control survive TOML and fio
    /// output.
    #[test]
    fn a_sequential_gap_and_flow_survive_conversion() {
        let mut p = sample();
        let w = &mut p.runs[0].workloads[0];
        w.pattern = crate::plan::model::AccessPattern::Sequential;
        w.seq_layout = SeqLayout::Regions;
        w.dist = Distribution::Uniform;
        w.rate = Rate::Max;
        w.seq_gap_bytes = -8192;
        w.flow = Some(crate::plan::model::Flow {
            id: 3,
            weight: 8,
            sleep_ns: 1_000_000,
        });
        w.settings
            .set(&EXIT_ALL, crate::plan::settings::Value::Flag(true));
        let text = to_toml(&p).unwrap();
        assert!(text.contains("seq_gap = \"-8k\""), "{text}");
        let back = crate::plan::jobfile::parse("converted.toml", &text).unwrap();
        assert_eq!(back.runs[0].workloads[0].seq_gap_bytes, -8192);
        assert_eq!(back.runs[0].workloads[0].flow, p.runs[0].workloads[0].flow);
        assert!(back.runs[0].workloads[0].settings.flag(&EXIT_ALL));
        let fio = to_fio(&p).unwrap();
        assert!(fio.contains("rw=rw:-8k\n"), "{fio}");
        let t = read_back_fio(&fio);
        assert_eq!(t.plan.runs[0].workloads[0].seq_gap_bytes, -8192);
        assert_eq!(
            t.plan.runs[0].workloads[0].flow,
            p.runs[0].workloads[0].flow
        );
        assert!(t.plan.runs[0].workloads[0].settings.flag(&EXIT_ALL));
    }
}
