//! Native job files (TOML): `[defaults]`, `[[target]]`, `[[workload]]` and `[[run]]`
//! tables become a [`Plan`]. The format is documented in `docs/job-file.md`.
//!
//! The reader walks a tree in which every key and value keeps its byte span, rather
//! than deriving serde structs, so that every refusal — an unknown key, a wrong type,
//! a bad unit, a dangling name — points at the exact `file:line:column` of the text
//! that caused it and says what would have been accepted. The price is a little more
//! code than `#[derive(Deserialize)]`; the gain is error messages a user can act on.
//! Pure: nothing here touches the file system.

use std::fmt;
use std::ops::Range;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use toml::Spanned;

use super::engine_opts::{
    CpuBurn, CpuMode, EngineOptions, ExecSpec, StatCall, DEFAULT_CPU_CHUNK_NS,
    DEFAULT_EXEC_GRACE_NS,
};
use super::model::{
    AccessPattern, Arrival, BlockSizes, CurveSpec, Distribution, EngineKind, FileCreate, FioLogs,
    Flow, Pacing, Pauses, Plan, Rate, RunSpec, SeqLayout, Sprandom, SteadyStop, TargetSpec,
    TrimMode, Workload, Zones,
};
use super::on_error::{self, Errno, ErrorKind, OnError};
use super::overrides::{Amount, VerifyBacklog, WorkloadOverrides};
use super::paths::MultipathSpec;
use super::priority::{IoPriority, PrioShare, Priorities};
use super::settings::declared::FILL_FS;
use super::settings::{self, Input, RunSettings, Scope, ScopeMark, SettingMap, WorkloadSettings};
use super::tuning::{IoKeys, SyncKind, DURABILITY_KEYS, FLUSH_KEYS, URING_KEYS};
use super::units::{self, UnitError};
use super::zbd::Zbd;

/// A job-file error with its location.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}:{column}: {msg}")]
pub struct JobFileError {
    pub file: String,
    /// 1-based line of the offending key or value.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    pub msg: String,
}

/// Parses a native TOML job file. `file` is only used to label errors.
pub fn parse(file: &str, text: &str) -> Result<Plan, JobFileError> {
    let cx = Ctx {
        file,
        text,
        own_uring: Default::default(),
    };
    let root = toml::from_str::<Spanned<Node>>(text).map_err(|e| cx.toml_error(&e))?;
    cx.plan(&root)
}

// ---------------------------------------------------------------------------------
// Keys each table accepts. Error messages list them, and docs/job-file.md mirrors them.

const TOP_KEYS: &[&str] = &["defaults", "target", "workload", "run", "host"];
/// Keys of a `[[host]]` table (vdbench's `hd=`).
const HOST_KEYS: &[&str] = &["name", "system", "targets"];
/// The run settings a `[defaults]` or `[[run]]` table takes, in the order error
/// messages list them: the run's own, then its io_uring, durability and engine keys.
const SETTINGS_KEYS: &[&[&str]] = &[RUN_KEYS, URING_KEYS, DURABILITY_KEYS, ENGINE_KEYS];
const RUN_KEYS: &[&str] = &[
    "engine",
    "duration",
    "warmup",
    "interval",
    "passes",
    "cpus",
    "workers",
    "seed",
    "pacing",
    "connections",
    "io_timeout",
];
/// The engine-option keys, in a `[[workload]]` its own options.
const ENGINE_KEYS: &[&str] = &[
    "stat_type",
    "cpu_load",
    "cpu_chunk",
    "cpu_mode",
    "exec_program",
    "exec_args",
    "exec_grace",
    "exec_output",
    "defrag_donor",
    "defrag_inplace",
];
/// fio-format log keys: a run's, or a workload's own from its share of each interval.
const FIO_LOG_KEYS: &[&str] = &[
    "fio_bw_log",
    "fio_lat_log",
    "fio_iops_log",
    "fio_log_offset",
    "fio_log_job",
];
/// `[defaults]` keys that hold for the whole file rather than for each run: the data
/// (dedup and verify) unit, `--dedup-unit` (fio's `verify_interval`).
const PLAN_KEYS: &[&str] = &["data_unit"];
const TARGET_KEYS: &[&str] = &[
    "name",
    "path",
    "size",
    "direct",
    "create",
    "create_dirs",
    "paths",
    "path_policy",
    "failback",
    "path_retry",
    "channels",
];
/// A `[[workload]]`'s keys: its own, then its own values of run settings (fio gives
/// each job its own), all engine options (in place of the run's) and its own logs.
const WORKLOAD_KEYS: &[&[&str]] = &[
    WORKLOAD_OWN_KEYS,
    &["engine", "warmup", "cpus"],
    URING_KEYS,
    FLUSH_KEYS,
    WORKLOAD_RUN_KEYS,
    ENGINE_KEYS,
    &["verify_backlog", "verify_backlog_batch", "write_bs"],
    FIO_LOG_KEYS,
];
const WORKLOAD_OWN_KEYS: &[&str] = &[
    "name",
    "target",
    "rw",
    "read_pct",
    "bs",
    "qd",
    "streams",
    "rate",
    "offset",
    "size",
    "dist",
    "arrival",
    "share",
    "seq_layout",
    "start_delay",
    "think",
    "think_every",
    "think_io_time",
    "stop_after",
    "stop_after_ios",
    "pass_size",
    "align",
    "seq_gap",
    "offset_increment",
    "zone_size",
    "zone_range",
    "zone_skip",
    "zone_mode",
    "zone_capacity",
    "max_open_zones",
    "stream_max_open_zones",
    "zone_reset_threshold",
    "zone_reset_frequency",
    "read_beyond_wp",
    "flow",
    "flow_id",
    "flow_sleep",
    "prio",
    "cmdprio",
    "precondition",
    "file_service",
];
/// Its own values of run settings after the io_uring keys: data, errors, amount.
const WORKLOAD_RUN_KEYS: &[&str] = &[
    "verify",
    "verify_after",
    "compress_ratio",
    "dedup_ratio",
    "pattern",
    "dedup_set",
    "dedup_global",
    "on_error",
    "passes",
    "time_based",
];
/// The keys of a workload's `on_error` table.
const ON_ERROR_KEYS: &[&str] = &["continue", "read_errnos", "write_errnos"];
const RUN_ONLY_KEYS: &[&[&str]] = &[
    &[
        "name",
        "workloads",
        "curve_points",
        "curve_stop_latency",
        "curve_max_latency",
        "curve_origin",
    ],
    FIO_LOG_KEYS,
    &["steady_stop", "steady_window", "steady_ramp"],
];
/// Latency statistics a curve bound may name (`p99=400us`), as `ioscope curve` reads
/// them.
const CURVE_STATS: &[&str] = &[
    "mean", "p50", "p90", "p95", "p99", "p99.9", "p99_9", "p99.99", "p99_99", "max",
];

/// Block size of a workload that names none (run settings a job file leaves out come
/// from [`RunSpec::default`]).
const DEFAULT_BS_BYTES: u64 = 4096;
/// Highest CPU number a CPU list may name; bounds what "0-999999999" can allocate.
use crate::plan::units::MAX_CPU;

// ---------------------------------------------------------------------------------
// The spanned tree.

/// A TOML value whose children keep their spans. Tables keep document order.
#[derive(Debug)]
enum Node {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Array(Vec<Spanned<Node>>),
    Table(Vec<(Spanned<String>, Spanned<Node>)>),
}

impl Node {
    fn type_name(&self) -> &'static str {
        match self {
            Node::Str(_) => "a string",
            Node::Int(_) => "an integer",
            Node::Float(_) => "a float",
            Node::Bool(_) => "a boolean",
            Node::Array(_) => "an array",
            Node::Table(_) => "a table",
        }
    }
}

/// "a string \"8\"", "an integer 8", "a table": what was found, for type errors.
struct Found<'a>(&'a Node);

impl fmt::Display for Found<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Node::Str(s) => write!(f, "a string {s:?}"),
            Node::Int(i) => write!(f, "an integer {i}"),
            Node::Float(x) => write!(f, "a float {x}"),
            Node::Bool(b) => write!(f, "a boolean {b}"),
            other => f.write_str(other.type_name()),
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct NodeVisitor;
        impl<'de> Visitor<'de> for NodeVisitor {
            type Value = Node;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a TOML value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
                Ok(Node::Str(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
                Ok(Node::Str(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
                Ok(Node::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
                i64::try_from(v)
                    .map(Node::Int)
                    .map_err(|_| E::custom("integer is too large"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
                Ok(Node::Float(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
                Ok(Node::Bool(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Node::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    let value = map.next_value()?;
                    entries.push((key, value));
                }
                Ok(Node::Table(entries))
            }
        }
        d.deserialize_any(NodeVisitor)
    }
}

// ---------------------------------------------------------------------------------
// Reading context: turns spans into locations.

struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
    /// Workloads' own io_uring keys, by workload name: laid over each run's when the
    /// run is built (a workload may be in several runs with different settings).
    own_uring: std::cell::RefCell<Vec<(String, IoKeys)>>,
}

/// One table of the job file, with its unknown keys already refused.
struct Section<'n> {
    /// Start of the table (its header, for `[[x]]` tables).
    span: Range<usize>,
    entries: &'n [(Spanned<String>, Spanned<Node>)],
}

impl<'n> Section<'n> {
    fn get(&self, key: &str) -> Option<&'n Spanned<Node>> {
        self.entries
            .iter()
            .find(|(k, _)| k.get_ref() == key)
            .map(|(_, v)| v)
    }
}

type Res<T> = Result<T, JobFileError>;

impl<'a> Ctx<'a> {
    /// An error at the start of `span`.
    fn err(&self, span: Range<usize>, msg: impl Into<String>) -> JobFileError {
        let (line, column) = line_col(self.text, span.start);
        JobFileError {
            file: self.file.to_string(),
            line,
            column,
            msg: msg.into(),
        }
    }

    fn toml_error(&self, e: &toml::de::Error) -> JobFileError {
        let span = e.span().unwrap_or(0..0);
        let raw = e.message().trim();
        // toml 0.8 hands a datetime to a visitor as a private one-key table, which a
        // spanned key cannot hold: the resulting error names that private key.
        let msg = if raw.contains("$__toml_private_datetime") {
            "a date or time is not a valid value in a job file; put it in quotes if it is \
             meant as text"
                .to_string()
        } else {
            let joined: Vec<&str> = raw
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            format!("invalid TOML: {}", joined.join(": "))
        };
        self.err(span, msg)
    }

    /// Views `node` as a table that may hold only `allowed` keys.
    fn section<'n>(
        &self,
        label: String,
        node: &'n Spanned<Node>,
        allowed: &[&str],
    ) -> Res<Section<'n>> {
        let Node::Table(entries) = node.get_ref() else {
            return Err(self.err(
                node.span(),
                format!("{label} must be a table, found {}", Found(node.get_ref())),
            ));
        };
        for (key, _) in entries {
            if !allowed.contains(&key.get_ref().as_str()) {
                return Err(self.err(key.span(), unknown_key_msg(key.get_ref(), &label, allowed)));
            }
        }
        Ok(Section {
            span: node.span(),
            entries,
        })
    }

    fn type_err(&self, key: &str, v: &Spanned<Node>, want: &str) -> JobFileError {
        self.err(
            v.span(),
            format!("'{key}' must be {want}, found {}", Found(v.get_ref())),
        )
    }

    fn unit_err(&self, key: &str, v: &Spanned<Node>, e: UnitError) -> JobFileError {
        self.err(v.span(), format!("'{key}': {e}"))
    }

    fn string<'n>(&self, key: &str, v: &'n Spanned<Node>) -> Res<&'n str> {
        match v.get_ref() {
            Node::Str(s) => Ok(s),
            _ => Err(self.type_err(key, v, "a string")),
        }
    }

    /// A non-empty name.
    fn name(&self, key: &str, v: &Spanned<Node>) -> Res<String> {
        let s = self.string(key, v)?;
        if s.trim().is_empty() {
            return Err(self.err(v.span(), format!("'{key}' must not be empty")));
        }
        Ok(s.to_string())
    }

    fn boolean(&self, key: &str, v: &Spanned<Node>) -> Res<bool> {
        match v.get_ref() {
            Node::Bool(b) => Ok(*b),
            _ => Err(self.type_err(key, v, "true or false")),
        }
    }

    fn integer(&self, key: &str, v: &Spanned<Node>) -> Res<i64> {
        match v.get_ref() {
            Node::Int(i) => Ok(*i),
            _ => Err(self.type_err(key, v, "an integer")),
        }
    }

    /// A whole number of at least 1 that fits `T`.
    fn count<T: TryFrom<i64>>(&self, key: &str, v: &Spanned<Node>) -> Res<T> {
        let i = self.integer(key, v)?;
        if i < 1 {
            return Err(self.err(v.span(), format!("'{key}' must be at least 1, found {i}")));
        }
        T::try_from(i).map_err(|_| self.err(v.span(), format!("'{key}' = {i} is too large")))
    }

    /// The text a unit parser should see: strings as written, integers as digits.
    fn unit_text(&self, key: &str, v: &Spanned<Node>, want: &str) -> Res<String> {
        match v.get_ref() {
            Node::Str(s) => Ok(s.clone()),
            Node::Int(i) => Ok(i.to_string()),
            _ => Err(self.type_err(key, v, want)),
        }
    }

    fn size(&self, key: &str, v: &Spanned<Node>, allow_zero: bool) -> Res<u64> {
        let text = self.unit_text(key, v, "a size such as \"4k\" or a number of bytes")?;
        let parsed = if allow_zero {
            units::parse_size_allow_zero(&text)
        } else {
            units::parse_size(&text)
        };
        parsed.map_err(|e| self.unit_err(key, v, e))
    }

    fn duration(&self, key: &str, v: &Spanned<Node>, allow_zero: bool) -> Res<u64> {
        let text = self.unit_text(key, v, "a duration such as \"30s\" or a number of seconds")?;
        let parsed = if allow_zero {
            units::parse_duration_ns_allow_zero(&text)
        } else {
            units::parse_duration_ns(&text)
        };
        parsed.map_err(|e| self.unit_err(key, v, e))
    }

    // -----------------------------------------------------------------------------
    // The document.

    fn plan(&self, root: &Spanned<Node>) -> Res<Plan> {
        if let Node::Table(entries) = root.get_ref() {
            for (key, _) in entries {
                let key_text = key.get_ref().as_str();
                if SETTINGS_KEYS.concat().contains(&key_text)
                    || settings::lookup(key_text).is_some_and(|d| d.scope == Scope::Run)
                {
                    return Err(self.err(
                        key.span(),
                        format!(
                            "'{}' is a run setting; put it under [defaults] or in a [[run]]",
                            key.get_ref()
                        ),
                    ));
                }
            }
        }
        let top = self.section("the top level".into(), root, TOP_KEYS)?;
        let mut data = crate::plan::model::DataSettings::default();
        let defaults = match top.get("defaults") {
            Some(node) => {
                let fixed = [SETTINGS_KEYS, &[PLAN_KEYS]].concat().concat();
                let allowed = settings::keys_with(&fixed, Scope::Run);
                let sec = self.section("[defaults]".into(), node, &allowed)?;
                if let Some(v) = sec.get("data_unit") {
                    data.dedup_unit_bytes = Some(self.size("data_unit", v, false)?);
                }
                self.settings(&sec)?
            }
            None => Settings::default(),
        };
        let targets = self.targets(&top)?;
        let workloads = self.workloads(&top, &targets)?;
        let mut runs = self.runs(&top, &defaults, &workloads)?;
        let hosts = self.hosts(&top, &targets)?;
        for (r, _) in &mut runs {
            r.hosts = hosts.clone();
        }
        let warnings = self.unused(&targets, &workloads, &runs);
        Ok(Plan {
            targets: targets.into_iter().map(|(t, _)| t).collect(),
            runs: runs.into_iter().map(|(r, _)| r).collect(),
            warnings,
            data,
        })
    }

    /// The `[[host]]` tables (vdbench's `hd=`): the hosts a multi-host plan spans
    /// under mpirun, each with the targets it drives (docs/mpi.md); every run has
    /// them. Names are unique and each target named must exist.
    fn hosts(
        &self,
        top: &Section<'_>,
        targets: &[(TargetSpec, Range<usize>)],
    ) -> Res<Vec<crate::plan::hosts::HostDef>> {
        let mut hosts: Vec<(crate::plan::hosts::HostDef, Range<usize>)> = Vec::new();
        for (i, node) in self.table_array(top, "host")?.iter().enumerate() {
            let sec = self.section(label_of("host", i, node), node, HOST_KEYS)?;
            let Some(name_v) = sec.get("name") else {
                return Err(self.err(sec.span.clone(), "a [[host]] needs a 'name'"));
            };
            let name = self.name("name", name_v)?;
            self.unique("host", &hosts, &name, &name_v.span())?;
            let system = match sec.get("system") {
                Some(v) => Some(self.name("system", v)?),
                None => None,
            };
            let Some(tv) = sec.get("targets") else {
                return Err(self.err(
                    sec.span.clone(),
                    format!("[[host]] '{name}' needs 'targets'"),
                ));
            };
            let Node::Array(items) = tv.get_ref() else {
                return Err(self.type_err("targets", tv, "a list of target names"));
            };
            let mut names = Vec::new();
            for item in items {
                let t = self.name("targets", item)?;
                if !targets.iter().any(|(x, _)| x.name == t) {
                    return Err(self.err(
                        item.span(),
                        format!("[[host]] '{name}': no target named '{t}'"),
                    ));
                }
                names.push(t);
            }
            let def = crate::plan::hosts::HostDef {
                name,
                system,
                targets: names,
            };
            hosts.push((def, sec.span.clone()));
        }
        Ok(hosts.into_iter().map(|(h, _)| h).collect())
    }

    /// The `[[target]]` tables, each with where it was defined; names are unique.
    fn targets(&self, top: &Section<'_>) -> Res<Vec<(TargetSpec, Range<usize>)>> {
        let mut targets: Vec<(TargetSpec, Range<usize>)> = Vec::new();
        for (i, node) in self.table_array(top, "target")?.iter().enumerate() {
            let (spec, span) = self.target(i, node)?;
            self.unique("target", &targets, spec.name(), &span)?;
            targets.push((spec, span));
        }
        Ok(targets)
    }

    /// Refuses `name` at `at` when an earlier table of `kind` already took it.
    fn unique<T: Named>(
        &self,
        kind: &str,
        earlier: &[(T, Range<usize>)],
        name: &str,
        at: &Range<usize>,
    ) -> Res<()> {
        match earlier.iter().find(|(x, _)| x.name() == name) {
            Some((_, first)) => Err(self.err(
                at.clone(),
                format!(
                    "duplicate {kind} name '{name}' (first defined at line {})",
                    line_col(self.text, first.start).0
                ),
            )),
            None => Ok(()),
        }
    }

    /// The `[[workload]]` tables (at least one), each with where it was defined;
    /// names are unique.
    fn workloads(
        &self,
        top: &Section<'_>,
        targets: &[(TargetSpec, Range<usize>)],
    ) -> Res<Vec<(Workload, Range<usize>)>> {
        let workload_tables = self.table_array(top, "workload")?;
        if workload_tables.is_empty() {
            return Err(self.err(
                0..0,
                "the job file defines no workload; add a [[workload]] table",
            ));
        }
        let mut workloads: Vec<(Workload, Range<usize>)> = Vec::new();
        for (i, node) in workload_tables.iter().enumerate() {
            let (w, span) = self.workload(i, node, targets)?;
            self.unique("workload", &workloads, w.name(), &span)?;
            workloads.push((w, span));
        }
        Ok(workloads)
    }

    /// The `[[run]]` tables over `[defaults]`; without any, one run of every
    /// workload.
    fn runs(
        &self,
        top: &Section<'_>,
        defaults: &Settings,
        workloads: &[(Workload, Range<usize>)],
    ) -> Res<Vec<(RunSpec, Range<usize>)>> {
        let run_tables = self.table_array(top, "run")?;
        let mut runs: Vec<(RunSpec, Range<usize>)> = Vec::new();
        if run_tables.is_empty() {
            let all = workloads.iter().map(|(w, _)| w.clone()).collect();
            let mut run = defaults.clone().into_run("run".into(), all);
            self.apply_own_uring(&mut run, &defaults.io);
            runs.push((run, 0..0));
        }
        let allowed_run_keys = [RUN_ONLY_KEYS, SETTINGS_KEYS].concat().concat();
        let allowed_run_keys = settings::keys_with(&allowed_run_keys, Scope::Run);
        for (i, node) in run_tables.iter().enumerate() {
            let sec = self.section(label_of("run", i, node), node, &allowed_run_keys)?;
            let name = match sec.get("name") {
                Some(v) => self.name("name", v)?,
                None if run_tables.len() == 1 => "run".to_string(),
                None => format!("run{i}"),
            };
            let at = sec.get("name").map_or(sec.span.clone(), |v| v.span());
            self.unique("run", &runs, &name, &at)?;
            let chosen = match sec.get("workloads") {
                Some(v) => self.run_workloads(v, workloads)?,
                None => workloads.iter().map(|(w, _)| w.clone()).collect(),
            };
            let settings = defaults.clone().overlay(self.settings(&sec)?);
            let io = settings.io.clone();
            let mut run = settings.into_run(name, chosen);
            self.apply_own_uring(&mut run, &io);
            run.curve = self.curve(&sec)?;
            run.fio_logs = self.fio_logs(&sec)?;
            run.steady_stop = self.steady_stop(&sec)?;
            runs.push((run, sec.span.clone()));
        }
        Ok(runs)
    }

    /// A run measured as a latency curve: `curve_points` (% of the measured maximum),
    /// `curve_stop_latency` and `curve_max_latency` (bounds as `ioscope curve` takes
    /// them, `p99=400us`), `curve_origin` (where it came from, for the result).
    fn curve(&self, sec: &Section<'_>) -> Res<Option<CurveSpec>> {
        let keys = [
            "curve_points",
            "curve_stop_latency",
            "curve_max_latency",
            "curve_origin",
        ];
        if !keys.iter().any(|k| sec.get(k).is_some()) {
            return Ok(None);
        }
        let mut points_pct = Vec::new();
        if let Some(v) = sec.get("curve_points") {
            let Node::Array(items) = v.get_ref() else {
                return Err(self.type_err("curve_points", v, "a list of percentages"));
            };
            for item in items {
                let p = match item.get_ref() {
                    Node::Int(i) => *i as f64,
                    Node::Float(x) => *x,
                    _ => return Err(self.type_err("curve_points", item, "a percentage")),
                };
                if !(p.is_finite() && p > 0.0 && p <= 1000.0) {
                    return Err(self.err(
                        item.span(),
                        format!("'curve_points': {p} is not a percentage (0 < p ≤ 1000)"),
                    ));
                }
                points_pct.push(p);
            }
        }
        let bound = |key: &str| -> Res<Option<String>> {
            let Some(v) = sec.get(key) else {
                return Ok(None);
            };
            let text = self.string(key, v)?;
            let ok = text.split_once('=').is_some_and(|(stat, dur)| {
                CURVE_STATS.contains(&stat.trim().to_ascii_lowercase().as_str())
                    && units::parse_duration_ns(dur.trim()).is_ok()
            });
            if !ok {
                return Err(self.err(
                    v.span(),
                    format!(
                        "'{key}' = {text:?}: expected STAT=DURATION with STAT one of {}",
                        CURVE_STATS.join(", ")
                    ),
                ));
            }
            Ok(Some(text.to_string()))
        };
        Ok(Some(CurveSpec {
            points_pct,
            stop_latency: bound("curve_stop_latency")?,
            max_latency: bound("curve_max_latency")?,
            origin: sec
                .get("curve_origin")
                .map(|v| self.name("curve_origin", v))
                .transpose()?,
        }))
    }

    /// `steady_stop` (fio's criterion, `"iops:10%"`), `steady_window` (the rolling
    /// window, required with it) and `steady_ramp` (measured time before judging).
    fn steady_stop(&self, sec: &Section<'_>) -> Res<Option<SteadyStop>> {
        let Some(v) = sec.get("steady_stop") else {
            for k in ["steady_window", "steady_ramp"] {
                if let Some(v) = sec.get(k) {
                    return Err(self.err(v.span(), format!("'{k}' needs 'steady_stop'")));
                }
            }
            return Ok(None);
        };
        let text = self.string("steady_stop", v)?;
        let (metric, slope, limit, limit_is_pct) = SteadyStop::parse_criterion(text)
            .map_err(|e| self.err(v.span(), format!("'steady_stop': {e}")))?;
        let Some(w) = sec.get("steady_window") else {
            return Err(self.err(
                v.span(),
                "'steady_stop' needs 'steady_window' (the rolling window it judges)",
            ));
        };
        Ok(Some(SteadyStop {
            metric,
            slope,
            limit,
            limit_is_pct,
            window_ns: self.duration("steady_window", w, false)?,
            ramp_ns: sec
                .get("steady_ramp")
                .map(|r| self.duration("steady_ramp", r, true))
                .transpose()?
                .unwrap_or(0),
        }))
    }

    /// fio-format logs written from the run's intervals: `fio_bw_log`, `fio_lat_log`,
    /// `fio_iops_log` (each a file prefix).
    fn fio_logs(&self, sec: &Section<'_>) -> Res<Option<FioLogs>> {
        let prefix = |k: &str| sec.get(k).map(|v| self.name(k, v)).transpose();
        let logs = FioLogs {
            bw: prefix("fio_bw_log")?,
            lat: prefix("fio_lat_log")?,
            iops: prefix("fio_iops_log")?,
            offset: match sec.get("fio_log_offset") {
                Some(v) => self.boolean("fio_log_offset", v)?,
                None => false,
            },
            job: match sec.get("fio_log_job") {
                Some(v) => {
                    let n = self.integer("fio_log_job", v)?;
                    u32::try_from(n).map_err(|_| {
                        self.err(
                            v.span(),
                            format!("'fio_log_job' must be 0 (no number) or more, found {n}"),
                        )
                    })?
                }
                None => 1,
            },
        };
        Ok((!logs.is_empty()).then_some(logs))
    }

    /// Warnings for workloads no run uses and targets no workload uses.
    fn unused(
        &self,
        targets: &[(TargetSpec, Range<usize>)],
        workloads: &[(Workload, Range<usize>)],
        runs: &[(RunSpec, Range<usize>)],
    ) -> Vec<String> {
        let mut warnings = Vec::new();
        for (w, span) in workloads {
            if !runs
                .iter()
                .any(|(r, _)| r.workloads.iter().any(|x| x.name == w.name))
            {
                let (line, _) = line_col(self.text, span.start);
                warnings.push(format!(
                    "{}:{line}: workload '{}' is not used by any run",
                    self.file, w.name
                ));
            }
        }
        for (t, span) in targets {
            if !workloads.iter().any(|(w, _)| w.target == t.name) {
                let (line, _) = line_col(self.text, span.start);
                warnings.push(format!(
                    "{}:{line}: target '{}' is not used by any workload",
                    self.file, t.name
                ));
            }
        }
        warnings
    }

    /// The `[[key]]` tables; an absent key is an empty list.
    fn table_array<'n>(&self, top: &Section<'n>, key: &str) -> Res<&'n [Spanned<Node>]> {
        let Some(v) = top.get(key) else {
            return Ok(&[]);
        };
        match v.get_ref() {
            Node::Array(items) => Ok(items),
            _ => Err(self.err(
                v.span(),
                format!(
                    "'{key}' must be a list of tables, written [[{key}]], found {}",
                    Found(v.get_ref())
                ),
            )),
        }
    }

    fn target(&self, i: usize, node: &Spanned<Node>) -> Res<(TargetSpec, Range<usize>)> {
        let sec = self.section(label_of("target", i, node), node, TARGET_KEYS)?;
        let name = match sec.get("name") {
            Some(v) => self.name("name", v)?,
            None => format!("t{i}"),
        };
        let label = format!("[[target]] '{name}'");
        let Some(path_v) = sec.get("path") else {
            return Err(self.err(
                sec.span.clone(),
                format!("{label} has no 'path' (a file, a block device, mem:SIZE or null:SIZE)"),
            ));
        };
        let uri = self.name("path", path_v)?;
        for prefix in ["mem:", "null:"] {
            if let Some(rest) = uri.strip_prefix(prefix) {
                units::parse_size(rest).map_err(|e| {
                    self.err(
                        path_v.span(),
                        format!("'path' {uri:?}: bad {prefix} size: {e}"),
                    )
                })?;
            }
        }
        // `size = "fill"`: as large as the filesystem holds (fio's fill_device).
        let fill = sec
            .get("size")
            .is_some_and(|v| matches!(v.get_ref(), Node::Str(t) if t == "fill"));
        let size_bytes = sec
            .get("size")
            .filter(|_| !fill)
            .map(|v| self.size("size", v, false))
            .transpose()?;
        let direct = sec
            .get("direct")
            .map(|v| self.boolean("direct", v))
            .transpose()?;
        let at = sec.get("name").map_or(sec.span.clone(), |v| v.span());
        let multipath = self.multipath(&sec)?;
        let create = match sec.get("create") {
            Some(v) => self.file_create(&uri, v)?,
            None => FileCreate::Data,
        };
        let create_dirs = match sec.get("create_dirs") {
            Some(v) if self.boolean("create_dirs", v)? => {
                if !FileCreate::applies_to(&uri) && !uri.starts_with("files:") {
                    return Err(self.err(
                        v.span(),
                        format!(
                            "'create_dirs' applies to a local file or file set; {uri:?} is neither"
                        ),
                    ));
                }
                true
            }
            _ => false,
        };
        Ok((
            TargetSpec {
                name,
                uri,
                size_bytes,
                direct,
                multipath,
                fill,
                create,
                create_dirs,
            },
            at,
        ))
    }

    /// `create` of a target: how a missing file is made. Only a local file is
    /// created by ioscope (a device exists, the other targets are not files here).
    fn file_create(&self, uri: &str, v: &Spanned<Node>) -> Res<FileCreate> {
        let word = self.string("create", v)?;
        let Some(create) = FileCreate::parse(word) else {
            return Err(self.err(
                v.span(),
                format!(
                    "'create' = {word:?}: expected \"data\" (laid out before the run), \
                     \"empty\" (a hole), \"allocated\" (fallocate, unwritten) or \"never\" \
                     (it must exist)"
                ),
            ));
        };
        if !FileCreate::applies_to(uri) && create != FileCreate::Data {
            return Err(self.err(
                v.span(),
                format!("'create' applies to a local file; {uri:?} is not one"),
            ));
        }
        Ok(create)
    }

    /// `paths`, `channels`, `path_policy`, `failback`, `path_retry` of a target.
    fn multipath(&self, sec: &Section<'_>) -> Res<Option<MultipathSpec>> {
        use crate::plan::paths::{parse_failback, parse_policy, DEFAULT_PATH_RETRY_NS};
        let smb = sec
            .get("path")
            .is_some_and(|p| matches!(p.get_ref(), Node::Str(s) if s.starts_with("smb://")));
        let channels = match sec.get("channels") {
            Some(v) if !smb => {
                return Err(self.err(
                    v.span(),
                    "'channels' applies to an smb:// target (SMB3 multichannel)",
                ))
            }
            Some(v) => match self.count::<u32>("channels", v)? {
                c @ 1..=32 => Some(c),
                c => return Err(self.err(v.span(), format!("'channels' is 1 to 32, found {c}"))),
            },
            None => None,
        };
        let paths = match sec.get("paths") {
            Some(v) => Some(self.path_list(v)?),
            None => channels.map(|_| Vec::new()),
        };
        let Some(paths) = paths else {
            if let Some(k) = ["path_policy", "failback", "path_retry"]
                .into_iter()
                .find(|k| sec.get(k).is_some())
            {
                let v = sec.get(k).expect("found above");
                return Err(self.err(
                    v.span(),
                    format!(
                        "'{k}' applies to a target with several paths; add paths = [\"URI\", ...]"
                    ),
                ));
            }
            return Ok(None);
        };
        let text = |k: &str| sec.get(k).map(|v| self.string(k, v).map(|s| (s, v)));
        let policy = match text("path_policy").transpose()? {
            Some((s, v)) => {
                parse_policy(s).map_err(|e| self.err(v.span(), format!("'path_policy': {e}")))?
            }
            None => Default::default(),
        };
        let failback = match text("failback").transpose()? {
            Some((s, v)) => {
                parse_failback(s).map_err(|e| self.err(v.span(), format!("'failback': {e}")))?
            }
            None => Default::default(),
        };
        let retry_ns = sec
            .get("path_retry")
            .map(|v| self.duration("path_retry", v, false))
            .transpose()?
            .unwrap_or(DEFAULT_PATH_RETRY_NS);
        Ok(Some(MultipathSpec {
            paths,
            policy,
            retry_ns,
            failback,
            channels,
        }))
    }

    /// The `paths` list: at least one URI.
    fn path_list(&self, v: &Spanned<Node>) -> Res<Vec<String>> {
        let Node::Array(items) = v.get_ref() else {
            return Err(self.type_err("paths", v, "a list of URIs"));
        };
        if items.is_empty() {
            return Err(self.err(v.span(), "'paths' must list at least one further path"));
        }
        items.iter().map(|i| self.name("paths", i)).collect()
    }

    fn workload(
        &self,
        i: usize,
        node: &Spanned<Node>,
        targets: &[(TargetSpec, Range<usize>)],
    ) -> Res<(Workload, Range<usize>)> {
        let keys = settings::keys_with(&WORKLOAD_KEYS.concat(), Scope::Workload);
        let sec = self.section(label_of("workload", i, node), node, &keys)?;
        let name = match sec.get("name") {
            Some(v) => self.name("name", v)?,
            None => format!("w{i}"),
        };
        let label = format!("[[workload]] '{name}'");
        let target = self.workload_target(&sec, &label, targets)?;
        let (pattern, read_pct, trim) = self.mix(&sec)?;
        let bs = self.workload_bs(&sec)?;
        let qd = sec.get("qd").map(|v| self.count("qd", v)).transpose()?;
        let streams = sec
            .get("streams")
            .map(|v| self.count("streams", v))
            .transpose()?;
        let rate = match sec.get("rate") {
            Some(v) => self.rate(v)?,
            None => Rate::Max,
        };
        let dist = self
            .parsed(&sec, "dist", crate::plan::units::parse_dist)?
            .unwrap_or(Distribution::Uniform);
        let file_service = self
            .parsed(
                &sec,
                "file_service",
                crate::plan::file_service::FileService::parse,
            )?
            .unwrap_or_default();
        let arrival = self.arrival(&sec)?;
        let seq_layout = self.seq_layout(&sec)?;
        let share_pct = sec.get("share").map(|v| self.share(v)).transpose()?;
        let (offset_bytes, size_bytes) = self.region(&sec)?;
        let pauses = self.pauses(&sec, &rate)?;
        let align_bytes = self.align(&sec, &bs)?;
        let seq_gap_bytes = self.seq_gap(&sec, &pattern, seq_layout)?;
        let (zones, zbd) = self.zone_modes(&sec)?;
        let offset_increment_bytes = match sec.get("offset_increment") {
            Some(v) => self.size("offset_increment", v, true)?,
            None => 0,
        };
        let flow = self.flow(&sec, &rate, share_pct)?;
        let priority = self.priorities(&sec, &bs)?;
        let settings = self.declared(&sec)?;
        self.fill_fits(&sec, read_pct, &settings)?;
        let overrides = self.overrides(&sec, &name)?;
        let sprandom = sec
            .get("precondition")
            .map(|v| self.precondition(v))
            .transpose()?;
        if let (Some(v), Rate::Iops(_)) = (sec.get("verify_backlog"), &rate) {
            return Err(self.err(
                v.span(),
                "'verify_backlog' is for closed-loop workloads; one with a 'rate' issues on \
                 its schedule",
            ));
        }
        let at = sec.get("name").map_or(sec.span.clone(), |v| v.span());
        Ok((
            Workload {
                name,
                target,
                read_pct,
                trim,
                pattern,
                bs,
                qd: qd.unwrap_or(1),
                streams: streams.unwrap_or(1),
                rate,
                offset_bytes,
                size_bytes,
                dist,
                arrival,
                share_pct,
                seq_layout,
                align_bytes,
                seq_gap_bytes,
                offset_increment_bytes,
                zones,
                zbd,
                flow,
                pauses,
                priority,
                sprandom,
                file_service,
                overrides,
                settings,
            },
            at,
        ))
        .and_then(|(w, at)| match w.sprandom.and_then(|s| s.misfit(&w)) {
            Some(why) => Err(self.err(
                sec.get("precondition")
                    .map_or(sec.span.clone(), |v| v.span()),
                format!("'precondition' (sprandom): {why}"),
            )),
            None => Ok((w, at)),
        })
    }

    /// `fill_fs` is for workloads that write: it writes until the file system is full.
    fn fill_fits(&self, sec: &Section<'_>, read_pct: u8, s: &WorkloadSettings) -> Res<()> {
        match sec.get("fill_fs") {
            Some(v) if s.flag(&FILL_FS) && read_pct == 100 => Err(self.err(
                v.span(),
                "'fill_fs' is for workloads that write (it writes until the filesystem is \
                 full)",
            )),
            _ => Ok(()),
        }
    }

    /// The declared settings ([`settings`]) of `scope` that a table gives.
    fn declared<S: ScopeMark>(&self, sec: &Section<'_>) -> Res<SettingMap<S>> {
        let mut out = SettingMap::<S>::default();
        for d in settings::of_scope(S::SCOPE) {
            let Some(v) = sec.get(d.key) else { continue };
            let input = match v.get_ref() {
                Node::Bool(b) => Input::Bool(*b),
                Node::Int(i) => Input::Int(*i),
                Node::Str(s) => Input::Str(s),
                Node::Float(x) => Input::Float(*x),
                other => Input::Other(other.type_name()),
            };
            let value = d
                .parse_input(input)
                .map_err(|e| self.err(v.span(), format!("'{}' {e}", d.key)))?;
            out.set(d, value);
        }
        Ok(out)
    }

    /// A string key read by `parse`; its error is reported at the value.
    fn parsed<T, E: std::fmt::Display>(
        &self,
        sec: &Section<'_>,
        key: &str,
        parse: impl Fn(&str) -> Result<T, E>,
    ) -> Res<Option<T>> {
        let Some(v) = sec.get(key) else {
            return Ok(None);
        };
        let text = self.string(key, v)?;
        parse(text)
            .map(Some)
            .map_err(|e| self.err(v.span(), format!("'{key}' = {text:?}: {e}")))
    }

    /// `precondition = { method = "sprandom", op = 0.15, regions = 100, cache = "0" }`:
    /// fio's SPRandom (`op`, `regions`, `cache` default to fio's 0.15, 100 and 0).
    fn precondition(&self, v: &Spanned<Node>) -> Res<Sprandom> {
        let want = "a table such as { method = \"sprandom\", op = 0.15, regions = 100 }";
        let Node::Table(entries) = v.get_ref() else {
            return Err(self.type_err("precondition", v, want));
        };
        let mut spr = Sprandom::default();
        let mut method = None;
        for (key, val) in entries {
            match key.get_ref().as_str() {
                "method" => method = Some((self.string("precondition.method", val)?, val)),
                "op" => {
                    spr.op = match val.get_ref() {
                        Node::Float(x) => *x,
                        Node::Int(i) => *i as f64,
                        _ => {
                            return Err(self.type_err(
                                "precondition.op",
                                val,
                                "a ratio such as 0.15",
                            ))
                        }
                    };
                    if !(spr.op > 0.0 && spr.op < 1.0) {
                        return Err(self.err(
                            val.span(),
                            format!(
                                "'precondition.op' must be between 0 and 1 (exclusive), found {}",
                                spr.op
                            ),
                        ));
                    }
                }
                "regions" => spr.regions = self.count("precondition.regions", val)?,
                "cache" => spr.cache_bytes = self.size("precondition.cache", val, true)?,
                other => {
                    return Err(self.err(
                        key.span(),
                        format!(
                        "unknown key 'precondition.{other}' (expected method, op, regions, cache)"
                    ),
                    ))
                }
            }
        }
        match method {
            Some(("sprandom", _)) => Ok(spr),
            Some((m, val)) => Err(self.err(
                val.span(),
                format!("'precondition.method' = {m:?}: the one method is \"sprandom\""),
            )),
            None => Err(self.err(v.span(), "'precondition' needs method = \"sprandom\"")),
        }
    }

    /// `prio` (`CLASS[/LEVEL[/HINT]]`) and `cmdprio` (one share
    /// `[read:|write:][BS:]PCT%PRIORITY` or a list of them).
    fn priorities(&self, sec: &Section<'_>, bs: &BlockSizes) -> Res<Priorities> {
        let mut p = Priorities::default();
        if let Some(v) = sec.get("prio") {
            let text = self.string("prio", v)?;
            p.job = Some(
                IoPriority::parse(text).map_err(|e| self.err(v.span(), format!("'prio' = {e}")))?,
            );
        }
        let Some(v) = sec.get("cmdprio") else {
            return Ok(p);
        };
        let items = match v.get_ref() {
            Node::Array(items) => items.iter().collect(),
            _ => vec![v],
        };
        for item in items {
            let text = self.string("cmdprio", item)?;
            let share = PrioShare::parse(text)
                .map_err(|e| self.err(item.span(), format!("'cmdprio' = {e}")))?;
            p.per_io.push(share);
        }
        let sizes: Vec<u64> = bs.all().map(|&(b, _)| b).collect();
        p.check(&sizes)
            .map_err(|why| self.err(v.span(), format!("'cmdprio': {why}")))?;
        Ok(p)
    }

    /// The workload's own `engine`, `warmup`, `cpus`, io_uring keys, engine options
    /// (all of them when any is given), `passes` or `time_based`, and data keys
    /// (`verify`, `verify_after`, `compress_ratio`, `dedup_ratio`). The io_uring keys
    /// are laid over the run's when the run is built ([`Ctx::own_uring`]).
    fn overrides(&self, sec: &Section<'_>, name: &str) -> Res<WorkloadOverrides> {
        let mut o = WorkloadOverrides::default();
        if let Some(v) = sec.get("engine") {
            o.engine = Some(self.engine(v)?);
        }
        if let Some(v) = sec.get("warmup") {
            o.warmup_ns = Some(self.duration("warmup", v, true)?);
        }
        if let Some(v) = sec.get("cpus") {
            o.cpus = Some(self.cpus(v)?);
        }
        if [URING_KEYS, FLUSH_KEYS]
            .concat()
            .iter()
            .any(|k| sec.get(k).is_some())
        {
            let io = self.io_settings(sec)?;
            self.own_uring.borrow_mut().push((name.to_string(), io));
        }
        let flag = |key: &str| sec.get(key).map(|v| self.boolean(key, v)).transpose();
        if ENGINE_KEYS.iter().any(|k| sec.get(k).is_some()) {
            o.engine_opts = Some(self.engine_settings(sec)?.into_options());
        }
        o.amount = self.own_amount(sec)?;
        o.data.verify = flag("verify")?;
        o.data.verify_after = flag("verify_after")?;
        if let Some(v) = sec.get("pattern") {
            let text = self.unit_text("pattern", v, "a pattern such as \"0xaa555aa5\"")?;
            let p = crate::plan::fill::FillPattern::parse_fio(&text)
                .map_err(|e| self.err(v.span(), format!("'pattern' = {text}: {e}")))?;
            o.data.pattern = Some(p);
        }
        if let Some(v) = sec.get("dedup_set") {
            let global = flag("dedup_global")?.unwrap_or(false);
            let bytes = self.size("dedup_set", v, false)?;
            o.data.dedup_set = Some(crate::plan::model::DedupSet { bytes, global });
        } else if let Some(v) = sec.get("dedup_global") {
            return Err(self.err(v.span(), "'dedup_global' needs 'dedup_set'"));
        }
        if let Some(v) = sec.get("on_error") {
            o.on_error = Some(self.on_error(v)?);
        }
        o.data.verify_backlog = self.verify_backlog(sec)?;
        o.fio_logs = self.fio_logs(sec)?;
        for (key, slot) in [
            ("compress_ratio", &mut o.data.compress_ratio),
            ("dedup_ratio", &mut o.data.dedup_ratio),
        ] {
            if let Some(v) = sec.get(key) {
                let r = match v.get_ref() {
                    Node::Int(i) => *i as f64,
                    Node::Float(f) => *f,
                    _ => return Err(self.type_err(key, v, "a number of at least 1")),
                };
                if !(r.is_finite() && r >= 1.0) {
                    return Err(self.err(
                        v.span(),
                        format!("'{key}' must be at least 1 (1 = none), found {r}"),
                    ));
                }
                *slot = Some(r);
            }
        }
        Ok(o)
    }

    /// A workload's `on_error` table: `continue` (kinds: read, write, verify, io,
    /// all, none), and the errnos `read_errnos` / `write_errnos` that alone continue
    /// for their kind (names or numbers).
    fn on_error(&self, v: &Spanned<Node>) -> Res<OnError> {
        let sec = self.section("'on_error'".into(), v, ON_ERROR_KEYS)?;
        let words = |key: &str| -> Res<Option<Vec<&Spanned<Node>>>> {
            match sec.get(key) {
                None => Ok(None),
                Some(n) => match n.get_ref() {
                    Node::Array(items) => Ok(Some(items.iter().collect())),
                    _ => Err(self.type_err(key, n, "an array")),
                },
            }
        };
        let mut p = OnError::default();
        for item in words("continue")?.unwrap_or_default() {
            let w = self.string("continue", item)?;
            let kinds = on_error::parse_kinds(w)
                .map_err(|e| self.err(item.span(), format!("'on_error.continue': {e}")))?;
            p.set_kinds(&kinds);
        }
        for (key, kind) in [
            ("read_errnos", ErrorKind::Read),
            ("write_errnos", ErrorKind::Write),
        ] {
            let Some(items) = words(key)? else {
                continue;
            };
            if !p.continue_on.contains(&kind) {
                return Err(self.err(
                    sec.get(key).map_or(sec.span.clone(), |n| n.span()),
                    format!(
                        "'on_error.{key}' needs \"{}\" in 'on_error.continue'",
                        kind.name()
                    ),
                ));
            }
            if items.is_empty() {
                return Err(self.err(
                    sec.get(key).map_or(sec.span.clone(), |n| n.span()),
                    format!(
                        "'on_error.{key}' must name at least one errno (leave it out to \
                         continue on any)"
                    ),
                ));
            }
            let mut list = Vec::with_capacity(items.len());
            for item in items {
                let text = self.unit_text(key, item, "an errno name or number")?;
                let e = Errno::parse(&text)
                    .map_err(|e| self.err(item.span(), format!("'on_error.{key}': {e}")))?;
                list.push(e);
            }
            match kind {
                ErrorKind::Read => p.read_errnos = Some(list),
                _ => p.write_errnos = Some(list),
            }
        }
        Ok(p)
    }

    /// `passes = N` (its own passes) or `time_based = true` (no pass limit in a run
    /// of passes: until its `stop_after` or the run's end).
    fn own_amount(&self, sec: &Section<'_>) -> Res<Option<Amount>> {
        let time_based = match sec.get("time_based") {
            Some(v) => self.boolean("time_based", v)?,
            None => false,
        };
        match (sec.get("passes"), time_based) {
            (Some(v), true) => Err(self.err(
                v.span(),
                "'passes' and 'time_based' = true contradict each other: give one",
            )),
            (Some(v), false) => Ok(Some(Amount::Passes(self.count("passes", v)?))),
            (None, true) => Ok(Some(Amount::TimeBased)),
            (None, false) => Ok(None),
        }
    }

    /// `verify_backlog` (writes between read-backs) and `verify_backlog_batch`
    /// (blocks read back each time, default the former); both at least 1.
    fn verify_backlog(&self, sec: &Section<'_>) -> Res<Option<VerifyBacklog>> {
        let positive = |key: &str| -> Res<Option<u32>> {
            let Some(v) = sec.get(key) else {
                return Ok(None);
            };
            match self.count::<u32>(key, v)? {
                0 => Err(self.err(v.span(), format!("'{key}' must be at least 1"))),
                n => Ok(Some(n)),
            }
        };
        let batch = positive("verify_backlog_batch")?;
        match (
            positive("verify_backlog")?,
            batch,
            sec.get("verify_backlog_batch"),
        ) {
            (Some(every_writes), _, _) => Ok(Some(VerifyBacklog {
                every_writes,
                batch_reads: batch.unwrap_or(every_writes),
            })),
            (None, _, Some(v)) => {
                Err(self.err(v.span(), "'verify_backlog_batch' needs 'verify_backlog'"))
            }
            (None, _, None) => Ok(None),
        }
    }

    /// Lays each workload's own io_uring and flush keys over the run's (`io`).
    fn apply_own_uring(&self, run: &mut RunSpec, io: &IoKeys) {
        let own = self.own_uring.borrow();
        for w in &mut run.workloads {
            if let Some((_, partial)) = own.iter().find(|(n, _)| *n == w.name) {
                let tuning = io.clone().overlay(partial.clone()).into_tuning();
                if partial.sync_every.is_some() || partial.sync_kind.is_some() {
                    w.overrides.flushes = Some(tuning.flushes());
                }
                if partial.clone().with_uring_only() != IoKeys::default() {
                    w.overrides.uring = Some(tuning.uring);
                }
            }
        }
    }

    /// `flow` (a weight), `flow_id` and `flow_sleep`: fio's flow control, for
    /// closed-loop workloads outside a share mix.
    fn flow(&self, sec: &Section<'_>, rate: &Rate, share: Option<f64>) -> Res<Option<Flow>> {
        let Some(v) = sec.get("flow") else {
            for k in ["flow_id", "flow_sleep"] {
                if let Some(v) = sec.get(k) {
                    return Err(self.err(v.span(), format!("'{k}' is only used with 'flow'")));
                }
            }
            return Ok(None);
        };
        let weight: u32 = self.count("flow", v)?;
        if matches!(rate, Rate::Iops(_)) || share.is_some() {
            return Err(self.err(
                v.span(),
                "'flow' holds closed-loop workloads in a ratio; not with 'rate' or 'share'",
            ));
        }
        let id = match sec.get("flow_id") {
            Some(i) => {
                let n = self.integer("flow_id", i)?;
                u32::try_from(n).map_err(|_| {
                    self.err(
                        i.span(),
                        format!("'flow_id' must be 0 to {}, found {n}", u32::MAX),
                    )
                })?
            }
            None => 0,
        };
        let sleep_ns = match sec.get("flow_sleep") {
            Some(d) => self.duration("flow_sleep", d, true)?,
            None => 0,
        };
        Ok(Some(Flow {
            id,
            weight,
            sleep_ns,
        }))
    }

    /// `seq_gap`: bytes added to a sequential offset after each I/O (`"-8k"` walks
    /// backwards). Only for a sequential workload whose streams walk their own
    /// regions (interleaved streams already step over each other's blocks).
    fn seq_gap(&self, sec: &Section<'_>, pattern: &AccessPattern, layout: SeqLayout) -> Res<i64> {
        let Some(v) = sec.get("seq_gap") else {
            return Ok(0);
        };
        let text = self.unit_text("seq_gap", v, "a size such as \"-8k\" or \"4k\"")?;
        let (neg, digits) = match text.trim().strip_prefix('-') {
            Some(rest) => (true, rest.to_string()),
            None => (false, text.trim().to_string()),
        };
        let bytes =
            units::parse_size_allow_zero(&digits).map_err(|e| self.unit_err("seq_gap", v, e))?;
        let bytes =
            i64::try_from(bytes).map_err(|_| self.err(v.span(), "'seq_gap' is too large"))?;
        if bytes != 0 && !matches!(pattern, AccessPattern::Sequential) {
            return Err(self.err(
                v.span(),
                "'seq_gap' is for sequential workloads (rw = read, write or rw)",
            ));
        }
        if bytes != 0 && layout == SeqLayout::Stride {
            return Err(self.err(
                v.span(),
                "'seq_gap' does not go with seq_layout = \"stride\" (interleaved streams already step over each other's blocks)",
            ));
        }
        Ok(if neg { -bytes } else { bytes })
    }

    /// `align`: random offsets are multiples of it; a multiple of the smallest block
    /// size.
    fn align(&self, sec: &Section<'_>, bs: &BlockSizes) -> Res<Option<u64>> {
        let Some(v) = sec.get("align") else {
            return Ok(None);
        };
        let bytes = self.size("align", v, false)?;
        let min = bs.min_bytes().max(1);
        if !crate::plan::model::align_fits(bytes, min) {
            return Err(self.err(
                v.span(),
                format!(
                    "'align' must be a multiple of the smallest block size ({}), or a \
                     multiple of 512 that divides it, found {}",
                    units::format_size(min),
                    units::format_size(bytes)
                ),
            ));
        }
        Ok(Some(bytes))
    }

    /// `zone_size`, `zone_range` (default: `zone_size`), `zone_skip` (default 0):
    /// fio's strided zones.
    fn zones(&self, sec: &Section<'_>) -> Res<Option<Zones>> {
        let Some(v) = sec.get("zone_size") else {
            if let Some(v) = sec.get("zone_range").or_else(|| sec.get("zone_skip")) {
                return Err(self.err(v.span(), "'zone_range' and 'zone_skip' need 'zone_size'"));
            }
            return Ok(None);
        };
        let io_bytes = self.size("zone_size", v, false)?;
        let range_bytes = match sec.get("zone_range") {
            Some(r) => self.size("zone_range", r, false)?,
            None => io_bytes,
        };
        let skip_bytes = match sec.get("zone_skip") {
            Some(s) => self.size("zone_skip", s, true)?,
            None => 0,
        };
        Ok(Some(Zones {
            io_bytes,
            range_bytes,
            skip_bytes,
        }))
    }

    /// `zone_mode`: `"strided"` (the default when `zone_size` is given: see
    /// [`Self::zones`]) or `"zbd"`, emulated zones of `zone_size` with
    /// `zone_capacity`, `max_open_zones`, `stream_max_open_zones`,
    /// `zone_reset_threshold`, `zone_reset_frequency` and `read_beyond_wp`.
    fn zone_modes(&self, sec: &Section<'_>) -> Res<(Option<Zones>, Option<Zbd>)> {
        const ZBD_KEYS: [&str; 6] = [
            "zone_capacity",
            "max_open_zones",
            "stream_max_open_zones",
            "zone_reset_threshold",
            "zone_reset_frequency",
            "read_beyond_wp",
        ];
        let mode = sec.get("zone_mode");
        let zbd_mode = match mode {
            None => false,
            Some(v) => match self.string("zone_mode", v)? {
                "strided" => false,
                "zbd" => true,
                other => {
                    return Err(self.err(
                        v.span(),
                        format!("'zone_mode' must be \"strided\" or \"zbd\", found {other:?}"),
                    ))
                }
            },
        };
        if !zbd_mode {
            if let Some(k) = ZBD_KEYS.iter().find(|k| sec.get(k).is_some()) {
                let v = sec.get(k).expect("found above");
                return Err(self.err(v.span(), format!("'{k}' needs zone_mode = \"zbd\"")));
            }
            if let (Some(v), None) = (mode, sec.get("zone_size")) {
                return Err(self.err(v.span(), "'zone_mode' needs 'zone_size'"));
            }
            return Ok((self.zones(sec)?, None));
        }
        let mode = mode.expect("zbd_mode");
        if let Some(v) = sec.get("zone_range").or_else(|| sec.get("zone_skip")) {
            return Err(self.err(
                v.span(),
                "'zone_range' and 'zone_skip' are for strided zones, not zone_mode = \"zbd\"",
            ));
        }
        let Some(size) = sec.get("zone_size") else {
            return Err(self.err(mode.span(), "zone_mode = \"zbd\" needs 'zone_size'"));
        };
        let zone_bytes = self.size("zone_size", size, false)?;
        let open = |k: &str| -> Res<u32> {
            match sec.get(k) {
                None => Ok(0),
                Some(v) => self.count(k, v),
            }
        };
        let ratio = |k: &str| -> Res<f64> {
            let Some(v) = sec.get(k) else { return Ok(0.0) };
            let x = match v.get_ref() {
                Node::Int(i) => *i as f64,
                Node::Float(x) => *x,
                _ => return Err(self.type_err(k, v, "a number from 0 to 1")),
            };
            if !(0.0..=1.0).contains(&x) {
                return Err(self.err(v.span(), format!("'{k}' must be from 0 to 1, found {x}")));
            }
            Ok(x)
        };
        let z = Zbd {
            zone_bytes,
            capacity_bytes: match sec.get("zone_capacity") {
                Some(v) => self.size("zone_capacity", v, false)?,
                None => zone_bytes,
            },
            max_open: open("max_open_zones")?,
            stream_max_open: open("stream_max_open_zones")?,
            reset_threshold: ratio("zone_reset_threshold")?,
            reset_frequency: ratio("zone_reset_frequency")?,
            read_beyond_wp: match sec.get("read_beyond_wp") {
                Some(v) => self.boolean("read_beyond_wp", v)?,
                None => false,
            },
        };
        if let Some(why) = z.invalid() {
            return Err(self.err(mode.span(), format!("zone_mode = \"zbd\": {why}")));
        }
        Ok((None, Some(z)))
    }

    /// `start_delay`, `think`, `think_every`, `stop_after` and `stop_after_ios` (think time is for closed-loop
    /// workloads: an open-loop one issues on its schedule).
    fn pauses(&self, sec: &Section<'_>, rate: &Rate) -> Res<Pauses> {
        let dur = |k: &str| {
            sec.get(k)
                .map(|v| self.duration(k, v, true))
                .transpose()
                .map(Option::unwrap_or_default)
        };
        let pauses = Pauses {
            start_delay_ns: dur("start_delay")?,
            think_ns: dur("think")?,
            think_every_ios: sec
                .get("think_every")
                .map(|v| self.count("think_every", v))
                .transpose()?
                .unwrap_or(0),
            think_io_ns: sec
                .get("think_io_time")
                .map(|v| self.duration("think_io_time", v, false))
                .transpose()?
                .unwrap_or(0),
            stop_ns: sec
                .get("stop_after")
                .map(|v| self.duration("stop_after", v, false))
                .transpose()?
                .unwrap_or(0),
            stop_after_ios: sec
                .get("stop_after_ios")
                .map(|v| self.count("stop_after_ios", v))
                .transpose()?
                .unwrap_or(0),
            pass_bytes: sec
                .get("pass_size")
                .map(|v| self.size("pass_size", v, false))
                .transpose()?
                .unwrap_or(0),
        };
        if let (Some(v), Rate::Iops(_)) = (sec.get("think"), rate) {
            if pauses.think_ns > 0 {
                return Err(self.err(
                    v.span(),
                    "'think' is for closed-loop workloads; one with a 'rate' issues on its \
                     schedule",
                ));
            }
        }
        for key in ["think_every", "think_io_time"] {
            if let (Some(v), 0) = (sec.get(key), pauses.think_ns) {
                return Err(self.err(v.span(), format!("'{key}' needs 'think'")));
            }
        }
        Ok(pauses)
    }

    /// A workload's `target`: a defined target, or the only one there is.
    fn workload_target(
        &self,
        sec: &Section<'_>,
        label: &str,
        targets: &[(TargetSpec, Range<usize>)],
    ) -> Res<String> {
        if let Some(v) = sec.get("target") {
            let t = self.string("target", v)?;
            if !targets.iter().any(|(spec, _)| spec.name == t) {
                return Err(self.err(
                    v.span(),
                    format!("unknown target '{t}'; {}", known("targets", targets)),
                ));
            }
            return Ok(t.to_string());
        }
        match targets {
            [(only, _)] => Ok(only.name.clone()),
            [] => Err(self.err(
                sec.span.clone(),
                format!("{label} needs a target, but the job file defines no [[target]]"),
            )),
            _ => Err(self.err(
                sec.span.clone(),
                format!(
                    "{label} has no 'target' and there are several; {}",
                    known("targets", targets)
                ),
            )),
        }
    }

    /// `rw` and `read_pct`: (pattern, read_pct, trim mode). Without `rw`, random
    /// reads, or a random mix when `read_pct` asks for one; a `read_pct` that
    /// contradicts `rw` is an error. The trim words (trim, randtrim, trimwrite,
    /// randtrimwrite) mean no reads.
    fn mix(&self, sec: &Section<'_>) -> Res<(AccessPattern, u8, TrimMode)> {
        let mut trim = TrimMode::None;
        let (pattern, implied_read_pct, rw_given) = match sec.get("rw") {
            Some(v) => {
                let word = self.string("rw", v)?;
                let trim_word = TrimMode::parse_rw(word);
                let (p, pct) = match word {
                    _ if trim_word.is_some() => {
                        let (p, t) = trim_word.unzip();
                        trim = t.unwrap_or_default();
                        (p.unwrap_or(AccessPattern::Random), Some(0))
                    }
                    "read" => (AccessPattern::Sequential, Some(100)),
                    "write" => (AccessPattern::Sequential, Some(0)),
                    "randread" => (AccessPattern::Random, Some(100)),
                    "randwrite" => (AccessPattern::Random, Some(0)),
                    "rw" | "readwrite" => (AccessPattern::Sequential, None),
                    "randrw" => (AccessPattern::Random, None),
                    other => {
                        return Err(self.err(
                            v.span(),
                            format!(
                                "'rw' = {other:?} is not known; use read, write, randread, \
                                 randwrite, rw, randrw, trim, randtrim, trimwrite or \
                                 randtrimwrite"
                            ),
                        ))
                    }
                };
                (p, pct, Some(v))
            }
            None if sec.get("read_pct").is_some() => (AccessPattern::Random, None, None),
            None => (AccessPattern::Random, Some(100), None),
        };
        let Some(v) = sec.get("read_pct") else {
            return Ok((pattern, implied_read_pct.unwrap_or(50), trim));
        };
        let pct = self.integer("read_pct", v)?;
        if !(0..=100).contains(&pct) {
            return Err(self.err(
                v.span(),
                format!("'read_pct' must be between 0 and 100, found {pct}"),
            ));
        }
        let pct = pct as u8;
        if let (Some(implied), Some(rw_v)) = (implied_read_pct, rw_given) {
            if implied != pct {
                return Err(self.err(
                    v.span(),
                    format!(
                        "'read_pct' = {pct} contradicts rw = {:?} (which means {implied}% \
                         reads); use rw = \"rw\" or \"randrw\" for a mix",
                        self.string("rw", rw_v)?
                    ),
                ));
            }
        }
        Ok((pattern, pct, trim))
    }

    /// `arrival` (default exponential).
    fn arrival(&self, sec: &Section<'_>) -> Res<Arrival> {
        let Some(v) = sec.get("arrival") else {
            return Ok(Arrival::Exponential);
        };
        match self.string("arrival", v)? {
            "exponential" | "poisson" => Ok(Arrival::Exponential),
            "uniform" => Ok(Arrival::Uniform),
            other => Err(self.err(
                v.span(),
                format!("'arrival' = {other:?}: expected \"exponential\" or \"uniform\""),
            )),
        }
    }

    /// `seq_layout` (default regions).
    fn seq_layout(&self, sec: &Section<'_>) -> Res<SeqLayout> {
        let Some(v) = sec.get("seq_layout") else {
            return Ok(SeqLayout::Regions);
        };
        let name = self.string("seq_layout", v)?;
        SeqLayout::parse(name).ok_or_else(|| {
            self.err(
                v.span(),
                format!(
                    "'seq_layout' = {name:?}: expected \"regions\", \"stride\", \"whole\" \
                     or \"shared\""
                ),
            )
        })
    }

    /// `share`: a positive percentage of the run's I/O.
    fn share(&self, v: &Spanned<Node>) -> Res<f64> {
        let p = match v.get_ref() {
            Node::Int(i) => *i as f64,
            Node::Float(x) => *x,
            _ => {
                return Err(self.type_err(
                    "share",
                    v,
                    "a positive number (percent of the run's I/O)",
                ))
            }
        };
        if !(p.is_finite() && p > 0.0) {
            return Err(self.err(
                v.span(),
                format!("'share' must be a positive number, found {p}"),
            ));
        }
        Ok(p)
    }

    /// `offset` and `size`: (start, length); their sum must be a byte offset.
    fn region(&self, sec: &Section<'_>) -> Res<(u64, Option<u64>)> {
        let offset_bytes = match sec.get("offset") {
            Some(v) => self.size("offset", v, true)?,
            None => 0,
        };
        let Some(v) = sec.get("size") else {
            return Ok((offset_bytes, None));
        };
        let size = self.size("size", v, false)?;
        if offset_bytes.checked_add(size).is_none() {
            return Err(self.err(
                v.span(),
                "'offset' + 'size' is beyond the largest possible byte offset",
            ));
        }
        Ok((offset_bytes, Some(size)))
    }

    /// `bs` (every I/O's sizes, or the reads' when `write_bs` is given) and
    /// `write_bs` (the writes' and trims').
    fn workload_bs(&self, sec: &Section<'_>) -> Res<BlockSizes> {
        let read = match sec.get("bs") {
            Some(v) => self.block_sizes("bs", v)?,
            None => vec![(DEFAULT_BS_BYTES, 100)],
        };
        Ok(match sec.get("write_bs") {
            Some(v) => BlockSizes::per_direction(read, self.block_sizes("write_bs", v)?),
            None => BlockSizes::of(read),
        })
    }

    /// `KEY = "8k"`, `KEY = 8192`, or a weighted split `KEY = { "4k" = 50, "64k" = 50 }`.
    fn block_sizes(&self, key_name: &str, v: &Spanned<Node>) -> Res<Vec<(u64, u32)>> {
        let Node::Table(entries) = v.get_ref() else {
            return match v.get_ref() {
                Node::Str(_) | Node::Int(_) => Ok(vec![(self.size(key_name, v, false)?, 100)]),
                _ => Err(self.type_err(
                    key_name,
                    v,
                    "a size such as \"4k\" or a split such as { \"4k\" = 50, \"64k\" = 50 }",
                )),
            };
        };
        if entries.is_empty() {
            return Err(self.err(
                v.span(),
                format!("'{key_name}' split is empty; give at least one size = weight pair"),
            ));
        }
        let mut split: Vec<(u64, u32)> = Vec::with_capacity(entries.len());
        for (key, weight_v) in entries {
            let bytes = units::parse_size(key.get_ref())
                .map_err(|e| self.err(key.span(), format!("'{key_name}' split: {e}")))?;
            if split.iter().any(|&(b, _)| b == bytes) {
                return Err(self.err(
                    key.span(),
                    format!(
                        "'{key_name}' split names {} more than once",
                        units::format_size(bytes)
                    ),
                ));
            }
            let weight = self.count::<u32>(&format!("{key_name}.{}", key.get_ref()), weight_v)?;
            split.push((bytes, weight));
        }
        Ok(split)
    }

    /// `rate = "max"` or a positive number of IOPS (integer, float, or as a string).
    fn rate(&self, v: &Spanned<Node>) -> Res<Rate> {
        let bad = |what: String| {
            self.err(
                v.span(),
                format!("'rate' must be \"max\" or a positive number of IOPS, found {what}"),
            )
        };
        let iops = match v.get_ref() {
            Node::Str(s) if s.trim().eq_ignore_ascii_case("max") => return Ok(Rate::Max),
            Node::Str(s) => s.trim().parse::<f64>().map_err(|_| bad(format!("{s:?}")))?,
            Node::Int(i) => *i as f64,
            Node::Float(x) => *x,
            other => return Err(bad(Found(other).to_string())),
        };
        if !(iops.is_finite() && iops > 0.0) {
            return Err(bad(iops.to_string()));
        }
        Ok(Rate::Iops(iops))
    }

    /// `workloads = ["oltp", "scan"]` in a run: names resolved to copies of the workloads.
    fn run_workloads(
        &self,
        v: &Spanned<Node>,
        workloads: &[(Workload, Range<usize>)],
    ) -> Res<Vec<Workload>> {
        let Node::Array(items) = v.get_ref() else {
            return Err(self.type_err("workloads", v, "a list of workload names"));
        };
        if items.is_empty() {
            return Err(self.err(v.span(), "'workloads' is empty; name at least one workload"));
        }
        let mut chosen: Vec<Workload> = Vec::with_capacity(items.len());
        for item in items {
            let name = self.string("workloads", item)?;
            let Some((w, _)) = workloads.iter().find(|(w, _)| w.name == name) else {
                return Err(self.err(
                    item.span(),
                    format!(
                        "unknown workload '{name}'; {}",
                        known("workloads", workloads)
                    ),
                ));
            };
            if chosen.iter().any(|c| c.name == name) {
                return Err(self.err(
                    item.span(),
                    format!("workload '{name}' is listed twice in this run"),
                ));
            }
            chosen.push(w.clone());
        }
        Ok(chosen)
    }

    /// An `engine` value.
    fn engine(&self, v: &Spanned<Node>) -> Res<EngineKind> {
        let name = self.string("engine", v)?;
        EngineKind::parse(name).ok_or_else(|| {
            self.err(
                v.span(),
                format!(
                    "'engine' = {name:?} is not known; use one of {}",
                    EngineKind::names()
                ),
            )
        })
    }

    /// The run settings a `[defaults]` or `[[run]]` table gives.
    fn settings(&self, sec: &Section<'_>) -> Res<Settings> {
        let mut s = Settings::default();
        if let Some(v) = sec.get("engine") {
            s.engine = Some(self.engine(v)?);
        }
        if let Some(v) = sec.get("duration") {
            s.duration_ns = Some(self.duration("duration", v, false)?);
        }
        if let Some(v) = sec.get("warmup") {
            s.warmup_ns = Some(self.duration("warmup", v, true)?);
        }
        if let Some(v) = sec.get("interval") {
            s.interval_ns = Some(self.duration("interval", v, false)?);
        }
        if let Some(v) = sec.get("passes") {
            s.passes = Some(self.count("passes", v)?);
        }
        if let Some(v) = sec.get("cpus") {
            s.cpus = Some(self.cpus(v)?);
        }
        if let Some(v) = sec.get("workers") {
            s.workers = Some(self.count("workers", v)?);
        }
        if let Some(v) = sec.get("pacing") {
            let name = self.string("pacing", v)?.to_string();
            s.pacing = Some(Pacing::parse(&name).ok_or_else(|| {
                self.err(
                    v.span(),
                    format!("'pacing' = {name:?}: expected \"spin\", \"hybrid\" or \"sleep\""),
                )
            })?);
        }
        if let Some(v) = sec.get("connections") {
            s.connections = Some(self.count("connections", v)?);
        }
        if let Some(v) = sec.get("io_timeout") {
            s.io_timeout_ns = Some(self.duration("io_timeout", v, false)?);
        }
        s.io = self.io_settings(sec)?;
        s.engine_opts = self.engine_settings(sec)?;
        s.declared = self.declared(sec)?;
        if let Some(v) = sec.get("seed") {
            let seed = self.integer("seed", v)?;
            s.seed = Some(u64::try_from(seed).map_err(|_| {
                self.err(
                    v.span(),
                    format!("'seed' must not be negative, found {seed}"),
                )
            })?);
        }
        Ok(s)
    }

    /// The io_uring and durability keys of a `[defaults]` or `[[run]]` table (the
    /// `--fixed-bufs`, `--sqpoll`, `--write-through`, `--sync-every` … flags).
    /// `stat_type`, `cpu_load` (1..=100), `cpu_chunk` and `cpu_mode`.
    fn engine_settings(&self, sec: &Section<'_>) -> Res<EngineSettings> {
        let mut e = EngineSettings::default();
        if let Some(v) = sec.get("stat_type") {
            let name = self.string("stat_type", v)?;
            e.stat = Some(StatCall::parse(name).ok_or_else(|| {
                self.err(
                    v.span(),
                    format!("'stat_type' = {name:?}: expected \"stat\", \"lstat\" or \"statx\""),
                )
            })?);
        }
        if let Some(v) = sec.get("cpu_load") {
            let n = self.integer("cpu_load", v)?;
            e.cpu_load = Some(
                u8::try_from(n)
                    .ok()
                    .filter(|p| (1..=100).contains(p))
                    .ok_or_else(|| {
                        self.err(
                            v.span(),
                            format!("'cpu_load' must be 1..=100 (%), found {n}"),
                        )
                    })?,
            );
        }
        if let Some(v) = sec.get("cpu_chunk") {
            e.cpu_chunk_ns = Some(self.duration("cpu_chunk", v, false)?);
        }
        if let Some(v) = sec.get("exec_program") {
            e.exec_program = Some(self.name("exec_program", v)?);
        }
        if let Some(v) = sec.get("exec_args") {
            e.exec_args = Some(match v.get_ref() {
                Node::Array(items) => items
                    .iter()
                    .map(|i| self.string("exec_args", i).map(str::to_string))
                    .collect::<Res<Vec<_>>>()?,
                _ => self
                    .string("exec_args", v)?
                    .split_whitespace()
                    .map(str::to_string)
                    .collect(),
            });
        }
        if let Some(v) = sec.get("exec_grace") {
            e.exec_grace_ns = Some(self.duration("exec_grace", v, true)?);
        }
        if let Some(v) = sec.get("exec_output") {
            e.exec_output = Some(self.name("exec_output", v)?);
        }
        if let Some(v) = sec.get("defrag_donor") {
            e.defrag_donor = Some(self.name("defrag_donor", v)?);
        }
        if let Some(v) = sec.get("defrag_inplace") {
            e.defrag_inplace = Some(self.boolean("defrag_inplace", v)?);
        }
        if let Some(v) = sec.get("cpu_mode") {
            let name = self.string("cpu_mode", v)?;
            e.cpu_mode = Some(CpuMode::parse(name).ok_or_else(|| {
                self.err(
                    v.span(),
                    format!("'cpu_mode' = {name:?}: expected \"noop\" or \"qsort\""),
                )
            })?);
        }
        Ok(e)
    }

    fn io_settings(&self, sec: &Section<'_>) -> Res<IoKeys> {
        let flag = |key: &str| sec.get(key).map(|v| self.boolean(key, v)).transpose();
        let number = |key: &str| -> Res<Option<u32>> {
            sec.get(key)
                .map(|v| {
                    let n = self.integer(key, v)?;
                    u32::try_from(n).map_err(|_| {
                        self.err(
                            v.span(),
                            format!("'{key}' must be 0..={}, found {n}", u32::MAX),
                        )
                    })
                })
                .transpose()
        };
        let sync_kind = match sec.get("sync_kind") {
            Some(v) => {
                let name = self.string("sync_kind", v)?;
                Some(SyncKind::parse(name).ok_or_else(|| {
                    self.err(
                        v.span(),
                        format!("'sync_kind' = {name:?}: expected {}", SyncKind::EXPECTED),
                    )
                })?)
            }
            None => None,
        };
        Ok(IoKeys {
            fixed_bufs: flag("fixed_bufs")?,
            register_files: flag("register_files")?,
            sqpoll: flag("sqpoll")?,
            sqpoll_cpu: number("sqpoll_cpu")?,
            hipri: flag("hipri")?,
            batch_submit: number("batch_submit")?,
            batch_complete_min: number("batch_complete_min")?,
            batch_complete_max: number("batch_complete_max")?,
            write_through: flag("write_through")?,
            sync_every: number("sync_every")?,
            sync_kind,
        })
    }

    /// `cpus = "0-3,6"` or `cpus = [0, 1, 2, 3, 6]`.
    fn cpus(&self, v: &Spanned<Node>) -> Res<Vec<usize>> {
        let list = match v.get_ref() {
            Node::Str(s) => crate::plan::units::parse_cpu_list(s)
                .map_err(|e| self.err(v.span(), format!("'cpus': {e}")))?,
            Node::Array(items) => {
                let mut list = Vec::with_capacity(items.len());
                for item in items {
                    let n = self.integer("cpus", item)?;
                    let cpu = usize::try_from(n)
                        .ok()
                        .filter(|&c| c <= MAX_CPU)
                        .ok_or_else(|| {
                            self.err(
                                item.span(),
                                format!("'cpus': {n} is not a CPU number (0..={MAX_CPU})"),
                            )
                        })?;
                    if list.contains(&cpu) {
                        return Err(
                            self.err(item.span(), format!("'cpus': CPU {cpu} is listed twice"))
                        );
                    }
                    list.push(cpu);
                }
                list
            }
            _ => {
                return Err(self.type_err(
                    "cpus",
                    v,
                    "a CPU list such as \"0-3,6\" or a list of CPU numbers",
                ))
            }
        };
        if list.is_empty() {
            return Err(self.err(v.span(), "'cpus' is empty; name at least one CPU"));
        }
        Ok(list)
    }
}

/// Run settings as written in one table; `None` = not given there.
#[derive(Debug, Clone, Default)]
struct Settings {
    engine: Option<EngineKind>,
    duration_ns: Option<u64>,
    warmup_ns: Option<u64>,
    interval_ns: Option<u64>,
    passes: Option<u64>,
    cpus: Option<Vec<usize>>,
    workers: Option<usize>,
    seed: Option<u64>,
    pacing: Option<Pacing>,
    connections: Option<u32>,
    io_timeout_ns: Option<u64>,
    io: IoKeys,
    engine_opts: EngineSettings,
    /// The declared run settings given in the table.
    declared: RunSettings,
}

/// Engine options as written in one table (`stat_type`, `cpu_load`, `cpu_chunk`,
/// `cpu_mode`); `None` = not given there.
#[derive(Debug, Clone, Default)]
struct EngineSettings {
    stat: Option<StatCall>,
    cpu_load: Option<u8>,
    cpu_chunk_ns: Option<u64>,
    cpu_mode: Option<CpuMode>,
    exec_program: Option<String>,
    exec_args: Option<Vec<String>>,
    exec_grace_ns: Option<u64>,
    exec_output: Option<String>,
    defrag_donor: Option<String>,
    defrag_inplace: Option<bool>,
}

impl EngineSettings {
    fn overlay(self, over: EngineSettings) -> EngineSettings {
        EngineSettings {
            stat: over.stat.or(self.stat),
            cpu_load: over.cpu_load.or(self.cpu_load),
            cpu_chunk_ns: over.cpu_chunk_ns.or(self.cpu_chunk_ns),
            cpu_mode: over.cpu_mode.or(self.cpu_mode),
            exec_program: over.exec_program.or(self.exec_program),
            exec_args: over.exec_args.or(self.exec_args),
            exec_grace_ns: over.exec_grace_ns.or(self.exec_grace_ns),
            exec_output: over.exec_output.or(self.exec_output),
            defrag_donor: over.defrag_donor.or(self.defrag_donor),
            defrag_inplace: over.defrag_inplace.or(self.defrag_inplace),
        }
    }

    /// The options; a CPU burn exists once any of its keys is given (a chunk or mode
    /// without a load is refused by the run's checks as a load of 0).
    fn into_options(self) -> EngineOptions {
        let burn =
            self.cpu_load.is_some() || self.cpu_chunk_ns.is_some() || self.cpu_mode.is_some();
        let exec_given = self.exec_program.is_some()
            || self.exec_args.is_some()
            || self.exec_grace_ns.is_some()
            || self.exec_output.is_some();
        let defrag_given = self.defrag_donor.is_some() || self.defrag_inplace.is_some();
        EngineOptions {
            defrag: defrag_given.then(|| crate::plan::engine_opts::DefragSpec {
                donor: self.defrag_donor.unwrap_or_default(),
                inplace: self.defrag_inplace.unwrap_or(false),
            }),
            exec: exec_given.then(|| ExecSpec {
                program: self.exec_program.unwrap_or_default(),
                args: self.exec_args.unwrap_or_default(),
                grace_ns: self.exec_grace_ns.unwrap_or(DEFAULT_EXEC_GRACE_NS),
                output: self.exec_output,
            }),
            stat: self.stat.unwrap_or_default(),
            cpu: burn.then(|| CpuBurn {
                load_pct: self.cpu_load.unwrap_or(0),
                chunk_ns: self.cpu_chunk_ns.unwrap_or(DEFAULT_CPU_CHUNK_NS),
                mode: self.cpu_mode.unwrap_or_default(),
            }),
        }
    }
}

impl Settings {
    /// `over`'s values win where it has them ([[run]] over [defaults]).
    fn overlay(self, over: Settings) -> Settings {
        Settings {
            engine: over.engine.or(self.engine),
            duration_ns: over.duration_ns.or(self.duration_ns),
            warmup_ns: over.warmup_ns.or(self.warmup_ns),
            interval_ns: over.interval_ns.or(self.interval_ns),
            passes: over.passes.or(self.passes),
            cpus: over.cpus.or(self.cpus),
            workers: over.workers.or(self.workers),
            seed: over.seed.or(self.seed),
            pacing: over.pacing.or(self.pacing),
            connections: over.connections.or(self.connections),
            io_timeout_ns: over.io_timeout_ns.or(self.io_timeout_ns),
            io: self.io.overlay(over.io),
            engine_opts: self.engine_opts.overlay(over.engine_opts),
            declared: self.declared.overlay(over.declared),
        }
    }

    fn into_run(self, name: String, workloads: Vec<Workload>) -> RunSpec {
        let base = RunSpec::default();
        // A run bounded by passes has no time limit unless one is written down.
        let duration_ns = match (self.duration_ns, self.passes) {
            (Some(d), _) => Some(d),
            (None, Some(_)) => None,
            (None, None) => base.duration_ns,
        };
        RunSpec {
            name,
            workloads,
            engine: self.engine.unwrap_or(base.engine),
            engine_opts: self.engine_opts.into_options(),
            duration_ns,
            passes: self.passes,
            warmup_ns: self.warmup_ns.unwrap_or(base.warmup_ns),
            interval_ns: self.interval_ns.unwrap_or(base.interval_ns),
            cpus: self.cpus,
            workers: self.workers,
            seed: self.seed.unwrap_or(base.seed),
            pacing: self.pacing.unwrap_or(base.pacing),
            io: self.io.into_tuning(),
            curve: None,
            fio_logs: None,
            hosts: Vec::new(),
            connections: self.connections,
            io_timeout_ns: self.io_timeout_ns,
            steady_stop: None,
            settings: self.declared,
        }
    }
}

/// How messages name the `i`th `[[kind]]` table: by its name if it has one, else by
/// its position ("[[workload]] 'oltp'", "[[run]] #2").
fn label_of(kind: &str, i: usize, node: &Spanned<Node>) -> String {
    let name = match node.get_ref() {
        Node::Table(entries) => entries.iter().find_map(|(k, v)| match v.get_ref() {
            Node::Str(s) if k.get_ref() == "name" => Some(s.as_str()),
            _ => None,
        }),
        _ => None,
    };
    match name {
        Some(name) => format!("[[{kind}]] '{name}'"),
        None => format!("[[{kind}]] #{}", i + 1),
    }
}

fn unknown_key_msg(key: &str, label: &str, allowed: &[&str]) -> String {
    let mut msg = format!("unknown key '{key}' in {label}");
    if let Some(near) = allowed
        .iter()
        .filter(|a| edit_distance(key, a) <= 2)
        .min_by_key(|a| edit_distance(key, a))
    {
        msg.push_str(&format!("; did you mean '{near}'?"));
    }
    msg.push_str(&format!(" (valid keys: {})", allowed.join(", ")));
    msg
}

/// "known targets: data, logs" for unknown-name errors.
fn known<T: Named>(what: &str, items: &[(T, Range<usize>)]) -> String {
    if items.is_empty() {
        return format!("the job file defines no {what}");
    }
    let names: Vec<&str> = items.iter().map(|(t, _)| t.name()).collect();
    format!("known {what}: {}", names.join(", "))
}

trait Named {
    fn name(&self) -> &str;
}
impl Named for TargetSpec {
    fn name(&self) -> &str {
        &self.name
    }
}
impl Named for Workload {
    fn name(&self) -> &str {
        &self.name
    }
}
impl Named for crate::plan::hosts::HostDef {
    fn name(&self) -> &str {
        &self.name
    }
}
impl Named for RunSpec {
    fn name(&self) -> &str {
        &self.name
    }
}

/// Levenshtein distance, for "did you mean" hints on short key names.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// 1-based line and column (in characters) of a byte offset; clamps out-of-range offsets.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut off = offset.min(text.len());
    while !text.is_char_boundary(off) {
        off -= 1;
    }
    let before = &text[..off];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = r#"# optional defaults applied to every run
[defaults]
engine = "uring"
duration = "30s"
warmup = "5s"
interval = "1s"
cpus = "0-3,6"
seed = 7

[[target]]
name = "data"
path = "/mnt/array/ioscope.dat"
size = "10g"
direct = true

[[target]]
name = "scratch"
path = "mem:1g"

[[workload]]
name = "oltp"
target = "data"
rw = "randrw"
read_pct = 70
bs = "8k"
qd = 8
streams = 4
rate = "max"
offset = "0"
size = "8g"

[[workload]]
name = "scan"
target = "scratch"
rw = "read"
bs = "1m"
qd = 2
rate = 500

[[run]]
name = "mixed"
workloads = ["oltp", "scan"]
duration = "60s"

[[run]]
name = "oltp-only"
workloads = ["oltp"]
engine = "sync"
passes = 2
"#;

    /// Parses `text` expecting an error; returns (line, message).
    fn err(text: &str) -> (usize, String) {
        match parse("job.toml", text) {
            Ok(plan) => panic!("expected an error, got {plan:?}"),
            Err(e) => {
                assert_eq!(e.file, "job.toml");
                (e.line, e.msg)
            }
        }
    }

    fn assert_err(text: &str, line: usize, needle: &str) {
        let (l, msg) = err(text);
        assert!(msg.contains(needle), "message {msg:?} lacks {needle:?}");
        assert_eq!(l, line, "wrong line for {msg:?}");
    }

    const T: &str = "[[target]]\nname = \"t\"\npath = \"mem:1m\"\n";

    #[test]
    fn full_example() {
        let plan = parse("job.toml", FULL).unwrap();
        assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
        assert_eq!(plan.targets.len(), 2);
        assert_eq!(
            plan.targets[0],
            TargetSpec {
                size_bytes: Some(10 << 30),
                direct: Some(true),
                ..TargetSpec::new("data", "/mnt/array/ioscope.dat")
            }
        );
        assert_eq!(plan.targets[1].size_bytes, None);
        assert_eq!(plan.targets[1].direct, None);

        assert_eq!(plan.runs.len(), 2);
        let mixed = &plan.runs[0];
        assert_eq!(mixed.name, "mixed");
        assert_eq!(mixed.engine, EngineKind::Uring);
        assert_eq!(mixed.duration_ns, Some(60_000_000_000));
        assert_eq!(mixed.warmup_ns, 5_000_000_000);
        assert_eq!(mixed.interval_ns, 1_000_000_000);
        assert_eq!(mixed.cpus, Some(vec![0, 1, 2, 3, 6]));
        assert_eq!(mixed.seed, 7);
        assert_eq!(mixed.passes, None);
        assert_eq!(mixed.workloads.len(), 2);

        let oltp = &mixed.workloads[0];
        assert_eq!(
            *oltp,
            Workload {
                name: "oltp".into(),
                target: "data".into(),
                read_pct: 70,
                pattern: AccessPattern::Random,
                bs: BlockSizes::fixed(8192),
                qd: 8,
                streams: 4,
                rate: Rate::Max,
                offset_bytes: 0,
                size_bytes: Some(8 << 30),
                ..Default::default()
            }
        );
        let scan = &mixed.workloads[1];
        assert_eq!(scan.pattern, AccessPattern::Sequential);
        assert_eq!(scan.read_pct, 100);
        assert_eq!(scan.rate, Rate::Iops(500.0));
        assert_eq!(scan.streams, 1);

        // A run's own keys win over [defaults]; the duration from [defaults] still
        // caps a passes-bounded run because it was written down.
        let only = &plan.runs[1];
        assert_eq!(only.engine, EngineKind::Sync);
        assert_eq!(only.passes, Some(2));
        assert_eq!(only.duration_ns, Some(30_000_000_000));
        assert_eq!(only.workloads, vec![oltp.clone()]);
    }

    #[test]
    fn defaults_when_keys_are_absent() {
        let plan = parse("job.toml", &format!("{T}[[workload]]\n")).unwrap();
        assert_eq!(plan.runs.len(), 1);
        let run = &plan.runs[0];
        assert_eq!(run.name, "run");
        assert_eq!(run.engine, EngineKind::Auto);
        assert_eq!(run.duration_ns, Some(10_000_000_000));
        assert_eq!(run.passes, None);
        assert_eq!(run.warmup_ns, 0);
        assert_eq!(run.interval_ns, 1_000_000_000);
        assert_eq!(run.cpus, None);
        assert_eq!(run.workers, None);
        assert_eq!(run.seed, 1);
        let w = &run.workloads[0];
        assert_eq!(w.name, "w0");
        assert_eq!(w.target, "t", "the only target is used when none is named");
        assert_eq!(w.read_pct, 100);
        assert_eq!(w.pattern, AccessPattern::Random);
        assert_eq!(w.bs, BlockSizes::fixed(4096));
        assert_eq!((w.qd, w.streams), (1, 1));
        assert_eq!(w.rate, Rate::Max);
        assert_eq!((w.offset_bytes, w.size_bytes), (0, None));
    }

    #[test]
    fn run_settings_come_from_defaults_and_runs_and_round_trip() {
        use crate::plan::settings::declared::REPEAT;
        let text = format!(
            "[defaults]\nrepeat = 3\n{T}[[workload]]\n[[run]]\nname = \"a\"\n\
             [[run]]\nname = \"b\"\nrepeat = 5\n"
        );
        let plan = parse("job.toml", &text).unwrap();
        let counts: Vec<u64> = plan
            .runs
            .iter()
            .map(|r| r.settings.count(&REPEAT))
            .collect();
        assert_eq!(counts, [3, 5], "a run's own value wins over [defaults]");
        let written = crate::plan::emit::to_toml(&plan).unwrap();
        assert!(written.contains("repeat = 5"), "{written}");
        let back = parse("job.toml", &written).unwrap();
        let back_counts: Vec<u64> = back
            .runs
            .iter()
            .map(|r| r.settings.count(&REPEAT))
            .collect();
        assert_eq!(back_counts, counts, "{written}");
        let json = serde_json::to_value(&plan.runs[1]).unwrap();
        assert_eq!(json["repeat"], 5, "the plan's JSON echoes it");
        let e = crate::plan::emit::to_fio(&plan).unwrap_err().to_string();
        assert!(e.contains("'repeat' has no fio option"), "{e}");
        assert_err(
            &format!("{T}[[workload]]\n[[run]]\nrepeat = 0\n"),
            6,
            "'repeat' must be at least 1, found 0",
        );
        assert_err(
            &format!("repeat = 2\n{T}[[workload]]\n"),
            1,
            "'repeat' is a run setting",
        );
    }

    #[test]
    fn seq_gap_is_signed_and_not_for_interleaved_streams() {
        let w = |body: &str| parse("job.toml", &format!("{T}[[workload]]\n{body}"));
        let plan = w("rw = \"read\"\nseq_gap = \"-8k\"\n").unwrap();
        assert_eq!(plan.runs[0].workloads[0].seq_gap_bytes, -8192);
        let plan = w("rw = \"write\"\nseq_gap = \"112k\"\n").unwrap();
        assert_eq!(plan.runs[0].workloads[0].seq_gap_bytes, 112 * 1024);
        let e = w("rw = \"randread\"\nseq_gap = \"4k\"\n").unwrap_err();
        assert!(e.to_string().contains("sequential"), "{e}");
        let e = w("rw = \"read\"\nstreams = 2\nseq_layout = \"stride\"\nseq_gap = \"4k\"\n")
            .unwrap_err();
        assert!(e.to_string().contains("stride"), "{e}");
        // diskspd's -b256K -si4K: streams sharing one position, 4 KiB apart.
        let plan = w("rw = \"read\"\nstreams = 2\nseq_layout = \"shared\"\nseq_gap = \"-252k\"\n")
            .unwrap();
        assert_eq!(plan.runs[0].workloads[0].seq_layout, SeqLayout::Shared);
        assert!(w("rw = \"read\"\nseq_gap = \"-x\"\n").is_err());
    }

    #[test]
    fn verify_backlog_fill_and_pass_size_keys() {
        let w = |body: &str| parse("job.toml", &format!("{T}[[workload]]\n{body}"));
        let plan = w("rw = \"write\"\nverify_backlog = 8\n").unwrap();
        let b = plan.runs[0].workloads[0]
            .overrides
            .data
            .verify_backlog
            .unwrap();
        assert_eq!((b.every_writes, b.batch_reads), (8, 8));
        let plan = w("rw = \"write\"\nverify_backlog = 8\nverify_backlog_batch = 2\n").unwrap();
        let b = plan.runs[0].workloads[0]
            .overrides
            .data
            .verify_backlog
            .unwrap();
        assert_eq!((b.every_writes, b.batch_reads), (8, 2));
        for (body, want) in [
            ("verify_backlog_batch = 2\n", "needs 'verify_backlog'"),
            ("verify_backlog = 0\n", "at least 1"),
            ("rate = 100\nverify_backlog = 4\n", "closed-loop"),
            ("rw = \"read\"\nfill_fs = true\n", "workloads that write"),
        ] {
            let e = w(body).unwrap_err().to_string();
            assert!(e.contains(want) && e.contains("job.toml:"), "{body}: {e}");
        }
        let plan = w("rw = \"write\"\nfill_fs = true\npass_size = \"3m\"\n").unwrap();
        let wl = &plan.runs[0].workloads[0];
        assert!(wl.settings.flag(&FILL_FS));
        assert_eq!(wl.pauses.pass_bytes, 3 << 20);
        let plan = parse(
            "job.toml",
            "[[target]]\nname = \"t\"\npath = \"/tmp/f\"\nsize = \"fill\"\n[[workload]]\n",
        )
        .unwrap();
        assert!(plan.targets[0].fill && plan.targets[0].size_bytes.is_none());
        let text = crate::plan::emit::to_toml(&plan).unwrap();
        assert!(text.contains("size = \"fill\""), "{text}");
    }

    /// `exit_all`, moved into the settings registry, reads and fails as before: at
    /// the value's line and column, with a did-you-mean for a misspelt key.
    #[test]
    fn declared_exit_all_is_read_and_its_errors_are_located() {
        use crate::plan::settings::declared::EXIT_ALL;
        let w = |body: &str| parse("job.toml", &format!("{T}[[workload]]\n{body}"));
        let plan = w("exit_all = true\n").unwrap();
        assert!(plan.runs[0].workloads[0].settings.flag(&EXIT_ALL));
        assert!(!w("").unwrap().runs[0].workloads[0].settings.flag(&EXIT_ALL));
        let e = w("rw = \"read\"\nexit_all = \"yes\"\n").unwrap_err();
        assert_eq!((e.line, e.column), (6, 12), "{e}");
        assert!(
            e.msg
                .contains("'exit_all' must be true or false, found a string \"yes\""),
            "{e}"
        );
        let e = w("exit_al = true\n").unwrap_err();
        assert_eq!((e.line, e.column), (5, 1), "{e}");
        assert!(e.msg.contains("did you mean 'exit_all'?"), "{e}");
    }

    #[test]
    fn target_create_key() {
        let t = |path: &str, create: &str| {
            parse(
                "job.toml",
                &format!(
                    "[[target]]\nname = \"t\"\npath = \"{path}\"\nsize = \"1m\"\n\
                     create = {create}\n[[workload]]\n"
                ),
            )
        };
        for (word, want) in [
            ("data", FileCreate::Data),
            ("empty", FileCreate::Empty),
            ("allocated", FileCreate::Allocated),
        ] {
            let plan = t("/tmp/f", &format!("\"{word}\"")).unwrap();
            assert_eq!(plan.targets[0].create, want);
            // Written back only when not the default, and read back the same.
            let text = crate::plan::emit::to_toml(&plan).unwrap();
            assert_eq!(
                text.contains("create = "),
                want != FileCreate::Data,
                "{text}"
            );
            let back = parse("converted.toml", &text).unwrap();
            assert_eq!(back.targets[0].create, want);
        }
        for (path, create, want) in [
            (
                "/tmp/f",
                "\"sparse\"",
                "job.toml:5:10: 'create' = \"sparse\": expected",
            ),
            ("/tmp/f", "true", "'create'"),
            ("mem:1m", "\"empty\"", "applies to a local file"),
            ("nbd://h/e", "\"allocated\"", "applies to a local file"),
        ] {
            let e = t(path, create).unwrap_err().to_string();
            assert!(e.contains(want), "{path} {create}: {e}");
        }
        // The default on any target.
        assert!(t("mem:1m", "\"data\"").is_ok());
    }

    #[test]
    fn passes_without_duration_means_no_time_limit() {
        let plan = parse(
            "job.toml",
            &format!("{T}[defaults]\npasses = 1\n[[workload]]\nrw = \"write\"\n"),
        )
        .unwrap();
        assert_eq!(plan.runs[0].passes, Some(1));
        assert_eq!(plan.runs[0].duration_ns, None);
    }

    #[test]
    fn read_pct_alone_means_random_mix_and_mixes_default_to_half() {
        let plan = parse(
            "job.toml",
            &format!("{T}[[workload]]\nread_pct = 30\n[[workload]]\nrw = \"rw\"\n"),
        )
        .unwrap();
        let ws = &plan.runs[0].workloads;
        assert_eq!(
            (ws[0].read_pct, &ws[0].pattern),
            (30, &AccessPattern::Random)
        );
        assert_eq!(
            (ws[1].read_pct, &ws[1].pattern),
            (50, &AccessPattern::Sequential)
        );
    }

    #[test]
    fn bs_split_and_numeric_forms() {
        let text = format!(
            "{T}[[workload]]\nbs = {{ \"4k\" = 50, \"64k\" = 30, \"1m\" = 20 }}\n\
             [[workload]]\nbs = 512\nsize = 1048576\n"
        );
        let plan = parse("job.toml", &text).unwrap();
        let ws = &plan.runs[0].workloads;
        assert_eq!(ws[0].bs.split, vec![(4096, 50), (65536, 30), (1 << 20, 20)]);
        assert_eq!(ws[1].bs, BlockSizes::fixed(512));
        assert_eq!(ws[1].size_bytes, Some(1 << 20));
    }

    #[test]
    fn durations_accept_bare_seconds_and_cpus_accept_a_list() {
        let plan = parse(
            "job.toml",
            &format!("{T}[defaults]\nduration = 3\nwarmup = 0\ncpus = [2, 0]\nworkers = 2\n[[workload]]\n"),
        )
        .unwrap();
        let run = &plan.runs[0];
        assert_eq!(run.duration_ns, Some(3_000_000_000));
        assert_eq!(run.warmup_ns, 0);
        assert_eq!(run.cpus, Some(vec![2, 0]));
        assert_eq!(run.workers, Some(2));
    }

    #[test]
    fn unused_workloads_and_targets_are_warned_about() {
        let text = format!(
            "{T}[[target]]\nname = \"spare\"\npath = \"null:1g\"\n\
             [[workload]]\nname = \"a\"\ntarget = \"t\"\n[[workload]]\nname = \"b\"\ntarget = \"t\"\n\
             [[run]]\nworkloads = [\"a\"]\n"
        );
        let plan = parse("job.toml", &text).unwrap();
        assert_eq!(plan.warnings.len(), 2, "{:?}", plan.warnings);
        assert!(plan.warnings[0].contains("workload 'b' is not used"));
        assert!(plan.warnings[1].contains("target 'spare' is not used"));
        assert!(plan.warnings[1].starts_with("job.toml:5:"));
    }

    #[test]
    fn error_display_is_file_line_column_msg() {
        let e = parse("jobs/x.toml", "[defaults]\n  engin = \"uring\"\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 3));
        assert!(e.to_string().starts_with(
            "jobs/x.toml:2:3: unknown key 'engin' in [defaults]; did you mean 'engine'?"
        ));
    }

    #[test]
    fn error_unknown_key_lists_valid_keys() {
        let text = format!("{T}[[workload]]\nname = \"w\"\niodepth = 8\n");
        let (line, msg) = err(&text);
        assert_eq!(line, 6);
        assert!(
            msg.contains("unknown key 'iodepth' in [[workload]] 'w'"),
            "{msg}"
        );
        assert!(
            msg.contains("valid keys: name, target, rw, read_pct, bs, qd"),
            "{msg}"
        );
    }

    #[test]
    // Regression guard: the key lists are joined from shared parts, so a part
    // listed twice would make a key valid twice over and its error list repeat.
    fn joined_key_lists_name_each_key_once() {
        for parts in [SETTINGS_KEYS, WORKLOAD_KEYS, RUN_ONLY_KEYS] {
            let keys = parts.concat();
            let distinct: std::collections::BTreeSet<_> = keys.iter().collect();
            assert_eq!(distinct.len(), keys.len(), "{keys:?}");
        }
    }

    #[test]
    fn error_unknown_section() {
        assert_err(
            "\nengine = \"sync\"\n",
            2,
            "'engine' is a run setting; put it under [defaults] or in a [[run]]",
        );
        assert_err(
            "[default]\nengine = \"sync\"\n",
            1,
            "unknown key 'default' in the top level; did you mean 'defaults'?",
        );
    }

    #[test]
    fn error_wrong_type() {
        assert_err(
            &format!("{T}[[workload]]\nqd = \"8\"\n"),
            5,
            "'qd' must be an integer, found a string \"8\"",
        );
        assert_err(
            &format!("{T}[[workload]]\n[defaults]\nseed = 1.5\n"),
            6,
            "'seed' must be an integer, found a float 1.5",
        );
        assert_err("[target]\npath = \"x\"\n", 1, "written [[target]]");
    }

    #[test]
    fn a_zoned_abs_dist_reads_sizes_round_trips_and_refuses_bad_sums() {
        let text = format!("{T}[[workload]]\ndist = \"zoned_abs:25/1m:75/\"\n");
        let plan = parse("job.toml", &text).unwrap();
        let d = &plan.runs[0].workloads[0].dist;
        assert_eq!(d.spec(), "zoned_abs:25/1048576:75/");
        assert_eq!(Distribution::parse(&d.spec()).as_ref(), Ok(d));
        assert_err(
            &format!("{T}[[workload]]\ndist = \"zoned_abs:25/1m:70/\"\n"),
            5,
            "bands must add up to 100% of I/O",
        );
        assert_err(
            &format!("{T}[[workload]]\ndist = \"zoned_abs:25/:75/1m\"\n"),
            5,
            "band '25/' needs non-negative numbers",
        );
    }

    #[test]
    fn a_sequence_dist_parses_round_trips_and_refuses_a_bad_list() {
        let text = format!(
            "{T}[[workload]]\ndist = \"sequence:2,0,1\"\n\
             [[workload]]\ndist = \"sequence: 4, 1 :stride\"\n"
        );
        let plan = parse("job.toml", &text).unwrap();
        let ws = &plan.runs[0].workloads;
        let want = Distribution::Sequence {
            blocks: vec![2, 0, 1],
            stride: false,
        };
        assert_eq!(ws[0].dist, want);
        assert_eq!(Distribution::parse(&want.spec()), Ok(want));
        assert_eq!(ws[1].dist.spec(), "sequence:4,1:stride");
        assert_err(
            &format!("{T}[[workload]]\ndist = \"sequence:2,-1\"\n"),
            5,
            "'dist' = \"sequence:2,-1\": sequence '2,-1' is not a list of block indices",
        );
        assert_err(
            &format!("{T}[[workload]]\ndist = \"sequence:2,1:strid\"\n"),
            5,
            "is not a list of block indices, e.g. sequence:2,0,1 or sequence:2,0,1:stride",
        );
    }

    #[test]
    fn error_bad_unit_names_the_text() {
        assert_err(
            &format!("{T}[[workload]]\nname = \"w\"\nbs = \"4kk\"\n"),
            6,
            "'bs': '4kk' has an unknown unit 'kk'",
        );
        assert_err(
            &format!("{T}[[workload]]\n[defaults]\nduration = \"5x\"\n"),
            6,
            "'duration': '5x' has an unknown unit 'x'",
        );
        assert_err(
            &format!("{T}[[workload]]\nbs = {{ \"4k\" = 1, \"8q\" = 1 }}\n"),
            5,
            "'bs' split: '8q' has an unknown unit",
        );
    }

    #[test]
    fn error_zero_and_negative() {
        assert_err(
            &format!("{T}[[workload]]\nqd = 0\n"),
            5,
            "'qd' must be at least 1, found 0",
        );
        assert_err(
            &format!("{T}[[workload]]\n\nstreams = -2\n"),
            6,
            "'streams' must be at least 1, found -2",
        );
        assert_err(
            &format!("{T}[[workload]]\nsize = \"0\"\n"),
            5,
            "'size': '0' must be greater than zero",
        );
        assert_err(
            &format!("{T}[[workload]]\nbs = -4096\n"),
            5,
            "'bs': '-4096' is not a number",
        );
        assert_err(
            &format!("{T}[[workload]]\nrate = 0\n"),
            5,
            "'rate' must be \"max\" or a positive number of IOPS, found 0",
        );
        assert_err(
            &format!("{T}[[workload]]\nbs = {{ \"4k\" = 0 }}\n"),
            5,
            "'bs.4k' must be at least 1",
        );
    }

    #[test]
    fn error_read_pct() {
        assert_err(
            &format!("{T}[[workload]]\nrw = \"randrw\"\nread_pct = 101\n"),
            6,
            "'read_pct' must be between 0 and 100, found 101",
        );
        assert_err(
            &format!("{T}[[workload]]\nrw = \"randread\"\nread_pct = 70\n"),
            6,
            "'read_pct' = 70 contradicts rw = \"randread\"",
        );
    }

    #[test]
    fn a_workload_error_policy_reads_kinds_and_errnos() {
        use crate::plan::on_error::{Errno, ErrorKind};
        let base = "[[target]]\nname = \"t\"\npath = \"/tmp/x\"\n[[workload]]\nname = \"w\"\n";
        let plan = parse(
            "job.toml",
            &format!(
                "{base}on_error = {{ continue = [\"io\", \"verify\"], write_errnos = [\"enospc\", 122] }}\n"
            ),
        )
        .unwrap();
        let p = plan.runs[0].workloads[0]
            .overrides
            .on_error
            .clone()
            .unwrap();
        assert_eq!(
            p.continue_on,
            vec![ErrorKind::Read, ErrorKind::Write, ErrorKind::Verify]
        );
        assert_eq!(p.read_errnos, None);
        assert_eq!(
            p.write_errnos,
            Some(vec![Errno(libc::ENOSPC), Errno(libc::EDQUOT)])
        );
        let none = parse(
            "job.toml",
            &format!("{base}[workload.on_error]\ncontinue = []\n"),
        )
        .unwrap();
        assert_eq!(
            none.runs[0].workloads[0].overrides.on_error,
            Some(Default::default())
        );
        assert_err(
            &format!("{base}on_error = {{ continue = [\"writes\"] }}\n"),
            6,
            "'on_error.continue': unknown error kind 'writes'",
        );
        assert_err(
            &format!("{base}on_error = {{ continue = [\"write\"], write_errnos = [\"ENOPE\"] }}\n"),
            6,
            "'on_error.write_errnos': unknown errno 'ENOPE'",
        );
        assert_err(
            &format!("{base}on_error = {{ continue = [\"write\"], read_errnos = [\"EIO\"] }}\n"),
            6,
            "'on_error.read_errnos' needs \"read\"",
        );
        assert_err(
            &format!("{base}on_error = {{ continue = [\"read\"], read_errnos = [] }}\n"),
            6,
            "at least one errno",
        );
        assert_err(
            &format!("{base}on_error = {{ continue = [\"read\"], read_errnos = [0] }}\n"),
            6,
            "unknown errno '0'",
        );
        assert_err(
            &format!("{base}on_error = {{ stop = true }}\n"),
            6,
            "unknown key 'stop'",
        );
        assert_err(
            &format!("{base}on_error = \"continue\"\n"),
            6,
            "must be a table",
        );
    }

    #[test]
    fn a_workload_overrides_run_settings_for_itself() {
        let plan = parse(
            "job.toml",
            &format!(
                "{T}[defaults]\nengine = \"sync\"\nwarmup = \"1s\"\nbatch_submit = 4\n\
                 sqpoll = true\n[[workload]]\nname = \"a\"\n[[workload]]\nname = \"b\"\n\
                 engine = \"uring\"\nwarmup = \"3s\"\ncpus = \"0\"\nbatch_submit = 8\n\
                 verify = true\ncompress_ratio = 2\ndedup_ratio = 1.5\n"
            ),
        )
        .unwrap();
        let run = &plan.runs[0];
        let (a, b) = (&run.workloads[0], &run.workloads[1]);
        assert!(a.overrides.is_default(), "{:?}", a.overrides);
        assert_eq!(run.engine_of(a), EngineKind::Sync);
        assert_eq!(run.engine_of(b), EngineKind::Uring);
        assert_eq!(
            (run.warmup_of(a), run.warmup_of(b)),
            (1_000_000_000, 3_000_000_000)
        );
        assert_eq!(run.cpus_of(b), Some(&vec![0]));
        // The workload's io_uring keys lie over the run's.
        let u = run.uring_of(b);
        assert_eq!((u.batch_submit, u.sqpoll), (8, true));
        assert_eq!(run.uring_of(a).batch_submit, 4);
        let d = &b.overrides.data;
        assert_eq!(
            (d.verify, d.compress_ratio, d.dedup_ratio),
            (Some(true), Some(2.0), Some(1.5))
        );
        assert!(run.mixes_workers());
    }

    #[test]
    fn a_workload_flushes_on_its_own_schedule_over_the_runs() {
        use crate::plan::tuning::{Flushes, SyncKind};
        let plan = parse(
            "job.toml",
            &format!(
                "{T}[defaults]\nsync_every = 32\nsync_kind = \"sync_file_range:write\"\n\
                 [[workload]]\nname = \"a\"\nrw = \"write\"\n\
                 [[workload]]\nname = \"b\"\nrw = \"write\"\nsync_every = 1\n\
                 sync_kind = \"fdatasync\"\n\
                 [[workload]]\nname = \"c\"\nrw = \"write\"\nsync_every = 0\n\
                 [[workload]]\nname = \"d\"\nrw = \"read\"\n"
            ),
        )
        .unwrap();
        let run = &plan.runs[0];
        let of = |i: usize| run.flushes_of(&run.workloads[i]);
        let range = Flushes {
            every: 32,
            kind: SyncKind::SyncFileRange(2),
        };
        assert_eq!(of(0), range);
        assert_eq!(
            of(1),
            Flushes {
                every: 1,
                kind: SyncKind::Fdatasync
            }
        );
        assert_eq!(of(2).every, 0, "its own 0 wins over the run's 32");
        assert_eq!(of(3).every, 0, "a workload that never writes never flushes");
        // Written back and read again, each keeps its own.
        let back = parse("back.toml", &crate::plan::emit::to_toml(&plan).unwrap()).unwrap();
        let r = &back.runs[0];
        let flushes: Vec<_> = r.workloads.iter().map(|w| r.flushes_of(w)).collect();
        assert_eq!(flushes, [of(0), of(1), of(2), of(3)]);
        assert_err(
            &format!("{T}[[workload]]\nsync_kind = \"sync_file_range:flush\"\n"),
            5,
            "expected fsync, fdatasync or sync_file_range:FLAGS",
        );
    }

    #[test]
    fn error_unknown_names() {
        assert_err(
            &format!("{T}[[workload]]\ntarget = \"dta\"\n"),
            5,
            "unknown target 'dta'; known targets: t",
        );
        assert_err(
            &format!("{T}[[workload]]\nname = \"a\"\n[[run]]\nworkloads = [\"a\",\n  \"b\"]\n"),
            8,
            "unknown workload 'b'; known workloads: a",
        );
        assert_err(
            &format!("{T}[[workload]]\nduration = \"5s\"\n"),
            5,
            "unknown key 'duration' in [[workload]] #1",
        );
        assert_err(
            &format!("{T}[[workload]]\nengine = \"aio\"\n"),
            5,
            "'engine' = \"aio\" is not known",
        );
        assert_err(
            &format!("{T}[[workload]]\ncompress_ratio = 0.5\n"),
            5,
            "'compress_ratio' must be at least 1",
        );
        assert_err(
            &format!("{T}[[workload]]\n[defaults]\nengine = \"aio\"\n"),
            6,
            "'engine' = \"aio\" is not known",
        );
        assert_err(
            &format!("{T}[[workload]]\nrw = \"randomread\"\n"),
            5,
            "'rw' = \"randomread\" is not known",
        );
        assert_err(
            &format!("{T}[[workload]]\n[defaults]\npacing = \"fast\"\n"),
            6,
            "'pacing' = \"fast\": expected \"spin\", \"hybrid\" or \"sleep\"",
        );
    }

    #[test]
    fn pacing_is_a_run_setting_with_a_default() {
        let text = format!(
            "{T}[defaults]\npacing = \"sleep\"\n[[workload]]\nname = \"a\"\n\
             [[run]]\nworkloads = [\"a\"]\n[[run]]\nworkloads = [\"a\"]\npacing = \"hybrid\"\n"
        );
        let plan = parse("job.toml", &text).unwrap();
        assert_eq!(plan.runs[0].pacing, Pacing::Sleep);
        assert_eq!(plan.runs[1].pacing, Pacing::Hybrid);
        let plain = parse("job.toml", &format!("{T}[[workload]]\n")).unwrap();
        assert_eq!(plain.runs[0].pacing, Pacing::Spin);
    }

    #[test]
    fn error_missing_pieces() {
        assert_err("[[target]]\npath = \"mem:1g\"\n", 1, "defines no workload");
        assert_err("[[workload]]\nqd = 2\n", 1, "defines no [[target]]");
        assert_err(
            &format!("{T}[[target]]\nname = \"u\"\npath = \"null:1g\"\n\n[[workload]]\n"),
            8,
            "has no 'target' and there are several; known targets: t, u",
        );
        assert_err(
            "\n[[target]]\nname = \"t\"\n[[workload]]\n",
            2,
            "has no 'path'",
        );
        assert_err(
            &format!("{T}[[workload]]\n[[run]]\nworkloads = []\n"),
            6,
            "'workloads' is empty",
        );
    }

    #[test]
    fn error_duplicate_names() {
        assert_err(
            &format!("{T}[[target]]\nname = \"t\"\npath = \"null:1g\"\n"),
            5,
            "duplicate target name 't' (first defined at line 2)",
        );
        assert_err(
            &format!("{T}[[workload]]\nname = \"w\"\n[[workload]]\nname = \"w\"\n"),
            7,
            "duplicate workload name 'w' (first defined at line 5)",
        );
        assert_err(
            &format!("{T}[[workload]]\n[[run]]\nname = \"r\"\n[[run]]\nname = \"r\"\n"),
            8,
            "duplicate run name 'r'",
        );
        assert_err(
            &format!("{T}[[workload]]\nname = \"a\"\n[[run]]\nworkloads = [\"a\", \"a\"]\n"),
            7,
            "workload 'a' is listed twice",
        );
        assert_err(
            &format!("{T}[[workload]]\nbs = {{ \"4k\" = 1, \"4096\" = 1 }}\n"),
            5,
            "'bs' split names 4k more than once",
        );
    }

    #[test]
    fn error_toml_syntax_is_located() {
        let e = parse("job.toml", "[defaults]\nengine = uring\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 10));
        assert!(e.msg.starts_with("invalid TOML: "), "{}", e.msg);
        assert_err(
            "[defaults]\nseed = 1\nseed = 2\n",
            3,
            "invalid TOML: duplicate key",
        );
        assert_err(
            "[defaults]\nseed = 1979-05-27\n",
            2,
            "a date or time is not a valid value",
        );
    }

    #[test]
    fn error_bad_targets_and_cpus() {
        assert_err(
            "[[target]]\npath = \"mem:lots\"\n[[workload]]\n",
            2,
            "'path' \"mem:lots\": bad mem: size",
        );
        assert_err(
            &format!("{T}[[workload]]\n[defaults]\ncpus = \"3-1\"\n"),
            6,
            "'cpus': range '3-1' runs backwards",
        );
        assert_err(
            &format!("{T}[[workload]]\n[defaults]\ncpus = \"0-99999999999\"\n"),
            6,
            "is not a CPU number",
        );
        assert_err(
            &format!("{T}[[workload]]\n[defaults]\ncpus = \"0,1,0\"\n"),
            6,
            "CPU 0 is listed twice",
        );
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let e = parse("job.toml", "[[target]]\nname = \"é\"\npath = \"\"\n").unwrap_err();
        assert_eq!((e.line, e.column), (3, 8));
        assert!(e.msg.contains("'path' must not be empty"));
        assert_eq!(line_col("aé\nb", 999), (2, 2));
        assert_eq!(line_col("aé", 2), (1, 2), "inside a character clamps back");
    }

    #[test]
    fn example_fixture_parses() {
        let text = include_str!("../../tests/fixtures/jobs/example.toml");
        let plan = parse("example.toml", text).unwrap();
        assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
        assert_eq!(plan.targets.len(), 2);
        assert!(plan.runs.iter().any(|r| {
            let targets: std::collections::HashSet<_> =
                r.workloads.iter().map(|w| w.target.as_str()).collect();
            targets.len() == 2
        }));
    }

    #[test]
    fn never_panics_on_mangled_input() {
        // Every prefix of a valid file, and a few hostile shapes, give Ok or an error.
        let mut cut = 0;
        while cut <= FULL.len() {
            if FULL.is_char_boundary(cut) {
                let _ = parse("job.toml", &FULL[..cut]);
            }
            cut += 1;
        }
        for text in [
            "",
            "\u{feff}",
            "a = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
            &format!("x = {}", "[".repeat(5000)),
            "[[workload]]\nqd = 9223372036854775807\n",
            "[[workload]]\nsize = \"99999999999999p\"\n",
            "[[target]]\npath=\"mem:1g\"\n[[workload]]\noffset = \"16e\"\nsize = \"16e\"\n",
            "[[target]]\npath=\"mem:1g\"\n[[workload]]\noffset = 9223372036854775807\nsize = 9223372036854775807\n",
            "[[target]]\npath=\"mem:1g\"\n[[workload]]\nrate = nan\n",
            "[[target]]\npath=\"mem:1g\"\n[[workload]]\nrate = \"inf\"\n",
            "[defaults]\ncpus = \",,-\"\n",
        ] {
            let _ = parse("job.toml", text);
        }
    }

    #[test]
    fn smb_channels_key_makes_a_multichannel_target() {
        let base = "[[target]]\npath = \"smb://u@h/s/f\"\n";
        let w = "[[workload]]\nrw = \"read\"\n";
        let plan = parse(
            "job.toml",
            &format!("{base}channels = 4\npath_policy = \"queue\"\n{w}"),
        )
        .unwrap();
        let mp = plan.targets[0].multipath.as_ref().unwrap();
        assert_eq!((mp.channels, mp.paths.len()), (Some(4), 0));
        assert_eq!(mp.policy, crate::plan::paths::PathPolicy::Queue);
        let plan = parse(
            "job.toml",
            &format!("{base}paths = [\"smb://u@h2/s/f\"]\nchannels = 2\n{w}"),
        )
        .unwrap();
        let mp = plan.targets[0].multipath.as_ref().unwrap();
        assert_eq!((mp.channels, mp.paths.len()), (Some(2), 1));
        let mem = "[[target]]\npath = \"mem:1m\"\n";
        for (base, bad, want) in [
            (base, "channels = 0", "at least 1"),
            (base, "channels = 33", "1 to 32"),
            (mem, "channels = 2", "smb://"),
        ] {
            let e = parse("job.toml", &format!("{base}{bad}\n{w}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want) && e.contains("job.toml:3"), "{e}");
        }
    }

    #[test]
    fn zone_mode_zbd_reads_its_keys() {
        let base = "[[target]]\nname = \"t\"\npath = \"/tmp/x\"\nsize = \"64m\"\n\
                    [[workload]]\nname = \"w\"\ntarget = \"t\"\nrw = \"randwrite\"\n";
        let run = "[[run]]\nname = \"r\"\nworkloads = [\"w\"]\nduration = \"1s\"\n";
        let p = parse(
            "z.toml",
            &format!(
                "{base}zone_mode = \"zbd\"\nzone_size = \"1m\"\nzone_capacity = \"512k\"\n\
                 max_open_zones = 4\nstream_max_open_zones = 2\nzone_reset_threshold = 0.5\n\
                 zone_reset_frequency = 0.25\nread_beyond_wp = true\n{run}"
            ),
        )
        .unwrap();
        let z = p.runs[0].workloads[0].zbd.unwrap();
        assert_eq!(
            (
                z.zone_bytes,
                z.capacity_bytes,
                z.max_open,
                z.stream_max_open
            ),
            (1 << 20, 512 << 10, 4, 2)
        );
        assert_eq!(
            (z.reset_threshold, z.reset_frequency, z.read_beyond_wp),
            (0.5, 0.25, true)
        );
        assert!(p.runs[0].workloads[0].zones.is_none());
        for (extra, want) in [
            (
                "max_open_zones = 4\n",
                "'max_open_zones' needs zone_mode = \"zbd\"",
            ),
            ("zone_mode = \"zbd\"\n", "needs 'zone_size'"),
            ("zone_mode = \"zoned\"\n", "'zone_mode' must be"),
            (
                "zone_mode = \"zbd\"\nzone_size = \"1m\"\nzone_skip = \"1m\"\n",
                "are for strided zones",
            ),
            (
                "zone_mode = \"zbd\"\nzone_size = \"1m\"\nzone_capacity = \"2m\"\n",
                "capacity",
            ),
            (
                "zone_mode = \"zbd\"\nzone_size = \"1m\"\nzone_reset_threshold = 1.5\n",
                "from 0 to 1",
            ),
        ] {
            let e = parse("z.toml", &format!("{base}{extra}{run}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{extra}: {e}");
        }
    }
}
