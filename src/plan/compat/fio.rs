//! fio job files (INI) and fio command lines → [`Plan`].
//!
//! Each fio job becomes one workload; `numjobs` clones become streams of it. Jobs that
//! fio runs together (no `stonewall` or `wait_for` between them; `new_group` only
//! starts a reporting group) form one run. Options ioscope cannot reproduce are listed in [`Translated::unsupported`];
//! documented differences go to [`Plan::warnings`]. Defaults follow fio: `bs=4k`,
//! `iodepth=1`, `rw=read`, `ioengine=psync`, buffered I/O, `loops=1`.
//! See docs/compat-fio.md.

use crate::plan::overrides::Amount;
use crate::plan::settings::declared::FILL_FS;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::fio_options::{self, is_flag, normalise_key, parse_bool};
use super::fio_subst;
use super::{
    base_run, is_windows_path, parse_cpu_list, CompatError, Loc, TargetTable, Translated,
    UnsupportedList, TRANSLATED_SEED,
};
use crate::plan::model::{
    AccessPattern, Arrival, BlockSizes, CurveSpec, DataSettings, Distribution, EngineKind, FioLogs,
    Flow, Pauses, Plan, Rate, RunSpec, SeqLayout, SteadyStop, TrimMode, Workload, Zone, Zones,
};
use crate::plan::units::{
    format_duration_ns, parse_count, parse_duration_ns, parse_duration_ns_allow_zero, parse_size,
    parse_size_allow_zero,
};
use crate::plan::zbd::Zbd;

mod block_sizes;
mod clone_files;
mod command_line;
mod errors;
mod file_create;
mod file_sets;
mod net;
mod nfs;
mod op_engines;
mod percentage_random;
mod priority;
mod random_map;
mod size_percent;
mod sprandom;
mod verify;

/// How deep `include` may nest before we assume a cycle.
const MAX_INCLUDE_DEPTH: usize = 16;

/// Looks up environment variables for `${VAR}` and fio's keywords (`$pagesize`) for
/// their substitution (see [`fio_subst::SubstLookup`]).
pub type EnvLookup<'a> = fio_subst::SubstLookup<'a>;

/// The process environment and this machine's keyword values, for [`parse_file`]
/// and [`parse_str`].
pub fn process_env(name: &str) -> Option<String> {
    if name.starts_with('$') {
        return fio_subst::machine_keyword(name);
    }
    std::env::var(name).ok()
}

/// Reads and translates a fio job file (and the files it includes).
pub fn parse_file(path: &Path, env: EnvLookup<'_>) -> Result<Translated, CompatError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| CompatError {
        source_name: name.clone(),
        line: 0,
        column_or_arg: None,
        msg: format!("cannot read: {e}"),
    })?;
    let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    parse_str(&name, &text, &base, env)
}

/// Translates fio job-file text. `include` paths are relative to `base_dir`.
pub fn parse_str(
    source_name: &str,
    text: &str,
    base_dir: &Path,
    env: EnvLookup<'_>,
) -> Result<Translated, CompatError> {
    let mut lexed = Lexed::default();
    let at = Lexing {
        source: source_name,
        base_dir,
        env,
        depth: 0,
    };
    lex_ini(&at, text, &[], &mut lexed)?;
    translate_noted(lexed)
}

/// Translates lexed items; an error in a value that an unset variable emptied says so.
fn translate_noted(lexed: Lexed) -> Result<Translated, CompatError> {
    let Lexed { items, notes, .. } = lexed;
    let unset_at: Vec<String> = notes
        .iter()
        .filter(|n| n.contains(UNSET_NOTE))
        .cloned()
        .collect();
    translate(items, notes).map_err(|mut e| {
        let at = format!("{}:{}: ", e.source_name, e.line);
        if let Some(n) = unset_at.iter().find(|n| n.starts_with(&at)) {
            let why = n.split(" — ").nth(1).unwrap_or(n);
            e.msg = format!("{} ({why})", e.msg);
        }
        e
    })
}

/// Translates a fio command line, argv style (the program name may come first), with
/// the job files it names read as fio reads them (see [`command_line`]). Accepts
/// `--opt=value`, `--opt value`, and fio's single-dash forms `-opt=value` and `-opt
/// value`; `--name` starts a new job and options before the first `--name` are global.
/// `${VAR}` in the job files is looked up in the process environment.
pub fn parse_args(args: &[String]) -> Result<Translated, CompatError> {
    command_line::parse(args, &process_env)
}

/// [`parse_args`] with the job files' `${VAR}` looked up in `env`.
pub fn parse_args_env(args: &[String], env: EnvLookup<'_>) -> Result<Translated, CompatError> {
    command_line::parse(args, env)
}

fn looks_like_option(s: &str) -> bool {
    s.starts_with('-') && s.len() > 1 && !s[1..].starts_with(|c: char| c.is_ascii_digit())
}

/// One lexical item of a job description.
#[derive(Debug, Clone)]
enum Item {
    Section(String, Loc),
    Opt(String, Option<String>, Loc),
    /// fio starts each job file after the first from its built-in defaults: the
    /// global options set so far (command line, earlier files) are forgotten.
    ResetGlobal,
}

/// What lexing produced: the items, and notes that become the plan's warnings.
#[derive(Debug, Default)]
struct Lexed {
    items: Vec<Item>,
    notes: Vec<String>,
    /// Where the current job file's items start (options before its first section
    /// are refused).
    file_start: usize,
}

/// Where the text being lexed comes from.
struct Lexing<'a> {
    source: &'a str,
    /// `include` paths are relative to it.
    base_dir: &'a Path,
    env: EnvLookup<'a>,
    /// How many includes deep.
    depth: usize,
}

/// fio's `--section` rule: with sections selected, a job section not among them is
/// skipped; a section whose name starts with `global` never is.
fn section_selected(name: &str, select: &[String]) -> bool {
    select.is_empty() || name.starts_with("global") || select.iter().any(|s| s == name)
}

/// Lexes job-file text into `out`. With `select` non-empty, job sections not among
/// it are skipped with their options (fio's `--section`); includes in them are not
/// read.
fn lex_ini(
    at: &Lexing<'_>,
    text: &str,
    select: &[String],
    out: &mut Lexed,
) -> Result<(), CompatError> {
    let mut skipping = false;
    for (idx, raw) in text.lines().enumerate() {
        let loc = Loc::Line {
            source: at.source.to_string(),
            line: idx + 1,
        };
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return Err(loc.error(format!("'{line}' is not a [section] line")));
            };
            let name = name.trim();
            if name.is_empty() {
                return Err(loc.error("empty section name"));
            }
            skipping = !section_selected(name, select);
            if !skipping {
                out.items.push(Item::Section(name.to_string(), loc));
            }
            continue;
        }
        if skipping {
            continue;
        }
        if let Some(rest) = line.strip_prefix("include") {
            if rest.starts_with(char::is_whitespace) {
                lex_include(at, rest.trim(), &loc, select, out)?;
                continue;
            }
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
            None => (line.to_string(), None),
        };
        if key.is_empty() {
            return Err(loc.error(format!("'{line}' has no option name")));
        }
        let value = match value {
            Some(v) => Some(substitute(&key, &v, at.env, &loc, &mut out.notes)?),
            None => None,
        };
        if !out.items[out.file_start..]
            .iter()
            .any(|i| matches!(i, Item::Section(..)))
        {
            return Err(loc.error(format!(
                "option '{key}' comes before any [section]; fio options belong to \
                 [global] or a job section"
            )));
        }
        out.items.push(Item::Opt(key, value, loc));
    }
    Ok(())
}

/// Reads an `include FILE` line's file in place.
fn lex_include(
    at: &Lexing<'_>,
    file: &str,
    loc: &Loc,
    select: &[String],
    out: &mut Lexed,
) -> Result<(), CompatError> {
    if at.depth >= MAX_INCLUDE_DEPTH {
        return Err(loc.error(format!(
            "include nested more than {MAX_INCLUDE_DEPTH} deep (a cycle?)"
        )));
    }
    let path: PathBuf = if Path::new(file).is_absolute() {
        PathBuf::from(file)
    } else {
        at.base_dir.join(file)
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| loc.error(format!("cannot read include '{}': {e}", path.display())))?;
    let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let source = path.display().to_string();
    let inner = Lexing {
        source: &source,
        base_dir: &base,
        env: at.env,
        depth: at.depth + 1,
    };
    lex_ini(&inner, &text, select, out)
}

/// An `ioengine=` value as fio loads it: lower case, and fio's own aliases of
/// libaio (`__load_ioengine`: any name starting with `aio` or `linuxaio`) as
/// `libaio`.
fn engine_name_as_fio_loads_it(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    match lower.starts_with("aio") || lower.starts_with("linuxaio") {
        true => "libaio".into(),
        false => lower,
    }
}

/// Cuts a line at its first `;` or `#`, as fio reads every job-file line
/// (`strip_blank_end`): a comment may follow a value with no space before it
/// (`bs=${BLOCK_SIZE}; no. of bytes`), and neither character can be in a value.
fn strip_comment(line: &str) -> &str {
    match line.find([';', '#']) {
        Some(i) => &line[..i],
        None => line,
    }
}

/// Why a time in fio's microsecond default unit was refused.
#[derive(Debug, thiserror::Error)]
enum UsecError {
    #[error("must be positive and under 584 years")]
    Range,
    #[error(transparent)]
    Unit(#[from] crate::plan::units::UnitError),
}

/// How the warning for an unset `${VAR}` goes on after the variable's name.
const UNSET_NOTE: &str = "is not set; fio substitutes an empty string, and so does ioscope";

/// fio's substitutions in one option value (see [`fio_subst`]): what fio would
/// parse, with a warning for each unset variable and each keyword replaced.
fn substitute(
    key: &str,
    value: &str,
    env: EnvLookup<'_>,
    loc: &Loc,
    notes: &mut Vec<String>,
) -> Result<String, CompatError> {
    let key_n = normalise_key(key);
    let s = fio_subst::substitute(value, env, fio_options::is_time(&key_n))
        .map_err(|e| loc.error(format!("{key}={value}: {e}")))?;
    for name in &s.unset {
        notes.push(format!(
            "{loc}: {key}={value} — environment variable '{name}' {UNSET_NOTE}"
        ));
    }
    if !s.keywords.is_empty() {
        let used: Vec<String> = s.keywords.iter().map(|(k, v)| format!("{k}={v}")).collect();
        notes.push(format!(
            "{loc}: {key}={value} → {} (this machine's {}, as fio substitutes them where \
             it runs)",
            s.value,
            used.join(", ")
        ));
    }
    Ok(s.value)
}

/// The effective options of one job: later settings win, each remembers its location.
#[derive(Debug, Clone, Default)]
struct Opts {
    map: BTreeMap<String, (Option<String>, Loc, String)>,
    order: Vec<String>,
    /// Every option name the translator asked about, so a test can hold the
    /// translator and the option table ([`fio_options::OPTIONS`]) in step.
    asked: RefCell<BTreeSet<String>>,
}

impl Opts {
    fn ask(&self, key: &str) {
        self.asked.borrow_mut().insert(key.to_string());
    }
    fn set(&mut self, raw_key: &str, value: Option<String>, loc: Loc) {
        let key = normalise_key(raw_key);
        if !self.map.contains_key(&key) {
            self.order.push(key.clone());
        }
        self.map
            .insert(key, (value, loc, raw_key.trim().to_string()));
    }
    /// The option's value and place. A value with a `$` left after fio's
    /// substitutions is listed as unsupported by [`JobCx::report_unsupported`] and
    /// reads as absent.
    fn get(&self, key: &str) -> Option<(&str, &Loc)> {
        self.ask(key);
        self.map
            .get(key)
            .map(|(v, l, _)| (v.as_deref().unwrap_or(""), l))
            .filter(|(v, _)| !v.contains('$'))
    }
    fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Gives in bytes every number whose unit fio reads otherwise than ioscope
    /// under the job's `kb_base` ([`fio_subst::fio_units`]), each said once.
    fn read_units(&mut self, notes: &mut Vec<String>) -> Result<(), CompatError> {
        let kb_base = match self.get("kb_base") {
            None => 1024,
            Some((v, loc)) => match v.trim() {
                "1024" => 1024,
                "1000" => 1000,
                _ => return Err(loc.error(format!("kb_base={v}: fio takes 1000 or 1024"))),
            },
        };
        for (key, (value, loc, raw)) in self.map.iter_mut() {
            let text = fio_subst::TEXT_OPTIONS.contains(&key.as_str());
            let Some(v) = value
                .as_deref()
                .filter(|_| !text && !fio_options::is_time(key))
            else {
                continue;
            };
            let Some(bytes) = fio_subst::fio_units(v, kb_base) else {
                continue;
            };
            let (iec, si) = if kb_base == 1024 {
                (1000, 1024)
            } else {
                (1024, 1000)
            };
            let note = format!(
                "{loc}: {raw}={v} → {bytes}: with kb_base={kb_base}{} fio reads KiB, MiB, … \
                 as powers of {iec} and k, m, Gi, … as powers of {si}; the translation runs \
                 what fio runs",
                if kb_base == 1024 {
                    " (its default)"
                } else {
                    ""
                },
            );
            if !notes.contains(&note) {
                notes.push(note);
            }
            *value = Some(bytes);
        }
        Ok(())
    }
    fn flag(&self, key: &str) -> Result<bool, CompatError> {
        self.ask(key);
        match self.map.get(key) {
            None => Ok(false),
            Some((v, loc, raw)) => parse_bool(v.as_deref()).ok_or_else(|| {
                loc.error(format!(
                    "{raw}={} is not a boolean (use 0 or 1)",
                    v.as_deref().unwrap_or("")
                ))
            }),
        }
    }
}

/// One fio job after option resolution.
#[derive(Clone)]
struct Job {
    name: String,
    loc: Loc,
    /// exitall: which jobs end when this one does, and where it was asked for.
    exit: Option<(ExitWhat, Loc)>,
    /// When the job starts: with the jobs before it, or after them (`stonewall`), or
    /// after one named job (`wait_for`).
    starts_group: GroupStart,
    target_uri: String,
    target_size: Option<u64>,
    direct: Option<bool>,
    /// create_on_open (its own open creates its file, empty) or allow_file_create=0
    /// (it must exist).
    create: crate::plan::model::FileCreate,
    workload: Workload,
    engine: EngineKind,
    /// stat_type, cpuload/cpuchunks/cpumode.
    engine_opts: crate::plan::engine_opts::EngineOptions,
    duration_ns: Option<u64>,
    passes: Option<u64>,
    warmup_ns: u64,
    cpus: Option<Vec<usize>>,
    /// `None`: a seed drawn for every run (`randrepeat=0`, the run's `fresh_seed`).
    seed: Option<u64>,
    /// (option text, location) for the run-level settings, to report mismatches.
    run_opts: Vec<(&'static str, String, Loc)>,
    /// verify / buffer_compress_percentage / dedupe_percentage.
    data: DataSettings,
    /// latency_target: the SLA search its run becomes.
    curve: Option<CurveSpec>,
    /// write_bw_log / write_lat_log / write_iops_log, and log_avg_msec as the
    /// interval length.
    fio_logs: Option<(FioLogs, Option<u64>)>,
    /// io_uring and durability options (fixedbufs, sqthread_poll, fsync=, sync= …).
    io: crate::plan::tuning::IoTuning,
    /// steadystate: the run's steady-state stop, and steadystate_check_interval as
    /// the interval length.
    steady: Option<(SteadyStop, Option<u64>)>,
    /// Each clone's own file, when its clones have one each (see [`clone_files`]);
    /// empty otherwise.
    clone_files: Vec<String>,
    /// Which clone of its job this is, when the job became one per clone.
    clone: Option<u32>,
}

fn translate(items: Vec<Item>, notes: Vec<String>) -> Result<Translated, CompatError> {
    let mut jobs = group_jobs(items)?;
    let mut unsupported = UnsupportedList::default();
    let mut warnings = notes;
    for (_, _, opts) in &mut jobs {
        opts.read_units(&mut warnings)?;
    }
    let mut resolved = Vec::new();
    let exitall_anywhere = jobs.iter().any(|(_, _, o)| o.map.contains_key("exitall"));
    for (section, loc, opts) in &jobs {
        let mut cx = JobCx::new(section, loc, opts, &mut unsupported, &mut warnings);
        cx.exitall_anywhere = exitall_anywhere;
        let mut job = cx.resolve()?;
        random_map::fit(&mut job, opts, &mut warnings)?;
        resolved.extend(clone_files::per_clone(job));
    }
    let data = common_data(&mut resolved);
    one_data_unit(&resolved, &data, &mut unsupported);
    let created = file_create::settle(resolved.iter().map(|j| (j.target_uri.as_str(), j.create)));
    let (mut targets, mut runs) = group_runs(resolved, &mut unsupported);
    unique_workload_names(&mut runs, &mut warnings);
    file_create::mark(&mut targets, &created);
    file_create::mark_dirs(&mut targets);
    Ok(Translated {
        plan: Plan {
            targets,
            runs,
            warnings,
            data,
        },
        unsupported: unsupported.0,
    })
}

/// Each job section with its effective options ([global] settings before it, then
/// its own). A description with no job is an error.
fn group_jobs(items: Vec<Item>) -> Result<Vec<(String, Loc, Opts)>, CompatError> {
    let mut global = Opts::default();
    let mut jobs: Vec<(String, Loc, Opts)> = Vec::new();
    let mut in_global = false;
    for item in items {
        match item {
            Item::Section(name, loc) => {
                // fio takes any section named global… as [global].
                if name.starts_with("global") {
                    in_global = true;
                } else {
                    in_global = false;
                    jobs.push((name, loc, global.clone()));
                }
            }
            Item::ResetGlobal => {
                global = Opts::default();
                in_global = false;
            }
            Item::Opt(k, v, loc) => {
                if in_global {
                    global.set(&k, v, loc);
                } else if let Some((_, _, opts)) = jobs.last_mut() {
                    opts.set(&k, v, loc);
                }
            }
        }
    }
    if jobs.is_empty() {
        let loc = match global.order.first().and_then(|k| global.map.get(k)) {
            Some((_, l, _)) => l.clone(),
            None => Loc::Line {
                source: "fio job".into(),
                line: 0,
            },
        };
        return Err(loc.error("no jobs defined (only [global] or nothing)"));
    }
    Ok(jobs)
}

/// The plan's data settings: the first job's (its pattern only when every job has
/// it). A job whose verify, buffer or pattern settings differ carries its own (`overrides.data`), so each job's data is what it asked for.
fn common_data(resolved: &mut [Job]) -> DataSettings {
    let mut data = resolved.first().map(|j| j.data.clone()).unwrap_or_default();
    // A workload's own pattern cannot say "none": a plan-wide pattern only when every
    // job has it.
    if resolved.iter().any(|j| j.data.pattern != data.pattern) {
        data.pattern = None;
    }
    // Likewise a working set.
    if resolved.iter().any(|j| j.data.dedup_set != data.dedup_set) {
        data.dedup_set = None;
    }
    for job in resolved.iter_mut() {
        if job.data != data {
            let own = &mut job.workload.overrides.data;
            own.verify = Some(job.data.verify);
            own.verify_after = Some(job.data.verify_after);
            own.compress_ratio = Some(job.data.compress_ratio.unwrap_or(1.0));
            own.dedup_ratio = Some(job.data.dedup_ratio.unwrap_or(1.0));
            own.pattern = job.data.pattern.clone();
            own.dedup_set = job.data.dedup_set;
        }
    }
    data
}

/// `verify_interval` sets the data unit of the whole plan: a job that asks for
/// another one is listed (the first job's is used).
fn one_data_unit(resolved: &[Job], data: &DataSettings, unsupported: &mut UnsupportedList) {
    for job in resolved {
        if job.data.dedup_unit_bytes != data.dedup_unit_bytes {
            let (text, loc) = match job.data.dedup_unit_bytes {
                Some(b) => (format!("verify_interval={b}"), &job.loc),
                None => ("no verify_interval".to_string(), &job.loc),
            };
            unsupported.push(
                format!(
                    "{text} in job '{}' — differs from the first job's; ioscope's verify \
                     unit is one per command",
                    job.name
                ),
                loc,
            );
        }
    }
}

/// Targets and runs: jobs run together until one starts a new group; run-level
/// settings that differ within a run are listed (the first job's win).
fn group_runs(
    resolved: Vec<Job>,
    unsupported: &mut UnsupportedList,
) -> (Vec<crate::plan::model::TargetSpec>, Vec<RunSpec>) {
    let mut targets = TargetTable::default();
    let mut runs: Vec<RunSpec> = Vec::new();
    let mut run_opts: Vec<Vec<RunOpt>> = Vec::new();
    // Per run: each job's cpus_allowed and amount, settled by own_cpus, own_amounts.
    let mut per_job: Vec<Vec<PerJob>> = Vec::new();
    // Per run, each workload's exitall.
    let mut exits: Vec<Vec<Option<(ExitWhat, Loc)>>> = Vec::new();
    // fio numbers its jobs from 1 in file order, each clone its own (log file names).
    let mut job_number = 1u32;
    // The first run since the last stonewall: where jobs that wait for nothing go.
    let mut segment_start = 0usize;
    for mut job in resolved {
        let streams = job.workload.streams.max(1);
        if let Some(why) = job.workload.zones.and_then(|z| z.misfit(&job.workload)) {
            unsupported.push(format!("zonemode=strided — {why}"), &job.loc);
            job.workload.zones = None;
        }
        if let Some(why) = job.workload.sprandom.and_then(|s| s.misfit(&job.workload)) {
            unsupported.push(format!("sprandom=1 — {why}"), &job.loc);
            job.workload.sprandom = None;
        }
        if let Some(why) = job.workload.zbd.and_then(|z| z.misfit(&job.workload)) {
            unsupported.push(format!("zonemode=zbd — {why}"), &job.loc);
            job.workload.zbd = None;
        }
        // The job's own runtime rides in stop_ns until own_runtimes settles it.
        if let (Some(d), None) = (job.duration_ns, job.passes) {
            job.workload.pauses.stop_ns = d;
        }
        let tname = targets.intern_per_direct(
            &job.target_uri,
            job.target_size,
            job.direct,
            unsupported,
            &job.loc,
        );
        if job.workload.settings.flag(&FILL_FS) && job.target_size.is_none() {
            // fio's fill_device without a size: as large as the filesystem holds.
            targets.fill(&tname);
        }
        job.workload.target = tname;
        let Some(ri) = run_for(&job, &per_job, &mut segment_start, unsupported) else {
            per_job.push(vec![PerJob::of(&job)]);
            let (run, opts, exit) = first_job_run(job, job_number);
            runs.push(run);
            job_number += streams;
            run_opts.push(opts);
            exits.push(vec![exit]);
            continue;
        };
        per_job[ri].push(PerJob::of(&job));
        exits[ri].push(job.exit.clone());
        let (run, first) = (&mut runs[ri], &run_opts[ri]);
        own_settings(run, &mut job);
        report_mismatches(run, first, &job, unsupported);
        if run.workloads.len() == 1 {
            run.name = format!("{}+", run.name);
        }
        own_logs(run, &mut job, job_number, unsupported);
        if run.curve.is_none() {
            run.curve = job.curve;
        }
        job_number += streams;
        run.workloads.push(job.workload);
    }
    for ((run, jobs), exits) in runs.iter_mut().zip(&per_job).zip(&exits) {
        own_cpus(run, jobs);
        if !own_amounts(run, jobs, exits, unsupported) {
            own_runtimes(run, exits);
        }
    }
    exit_what_all(&mut runs, &exits);
    name_runs(&mut runs, &per_job);
    (targets.targets, runs)
}

/// fio lets jobs share a name (two `[a]` sections; a job `[a.1]` beside the clones
/// `a.0`, `a.1` of a job split per clone); a run's workloads need names of their own
/// (a job file lists them by name). A repeated name gets `-2`, `-3`, … and is said.
fn unique_workload_names(runs: &mut [RunSpec], warnings: &mut Vec<String>) {
    for run in runs.iter_mut() {
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..run.workloads.len() {
            let name = run.workloads[i].name.clone();
            let mut unique = name.clone();
            let mut k = 1;
            while !seen.insert(unique.clone()) {
                k += 1;
                unique = format!("{name}-{k}");
            }
            if unique != name {
                warnings.push(format!(
                    "job '{name}': another job of its run has that name; its workload is \
                     named '{unique}'"
                ));
                run.workloads[i].name = unique;
            }
        }
    }
}

/// Runs with several jobs are named after all of them (a job whose clones became
/// workloads of their own, once).
fn name_runs(runs: &mut [RunSpec], per_job: &[Vec<PerJob>]) {
    for (run, jobs) in runs.iter_mut().zip(per_job) {
        if run.workloads.len() > 1 {
            let names: Vec<&str> = jobs
                .iter()
                .filter(|j| !j.later_clone)
                .map(|j| j.name.as_str())
                .collect();
            run.name = names.join("+");
        }
    }
}

/// When a fio job starts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum GroupStart {
    /// With the jobs before it.
    Together,
    /// After every job before it (`stonewall`, `wait_for_previous`).
    AfterAll,
    /// After the named job's workers are done (`wait_for`).
    After(String),
}

/// The run `job` joins, or `None` for a run of its own (its index then `runs.len()`).
/// fio starts the jobs between two stonewalls together, except that a `wait_for`
/// job starts once its waitee is done. So a job that waits for nothing joins the
/// first run since the last stonewall (`segment_start`, moved by a stonewall), and a
/// `wait_for` job joins the run after its waitee's (jobs waiting for the same job
/// start together there), or starts that run. A waitee no job before it has is
/// listed, and the job starts after all, as after a stonewall.
fn run_for(
    job: &Job,
    runs: &[Vec<PerJob>],
    segment_start: &mut usize,
    unsupported: &mut UnsupportedList,
) -> Option<usize> {
    let after_all = |segment_start: &mut usize| {
        *segment_start = runs.len();
        None
    };
    match &job.starts_group {
        _ if runs.is_empty() => after_all(segment_start),
        GroupStart::Together => Some(*segment_start),
        GroupStart::AfterAll => after_all(segment_start),
        GroupStart::After(waitee) => {
            let has = |r: &Vec<PerJob>| r.iter().any(|j| &j.name == waitee);
            match runs.iter().rposition(has) {
                Some(i) if i + 1 < runs.len() => Some(i + 1),
                Some(_) => None,
                None => {
                    unsupported.push(
                        format!(
                            "wait_for={waitee} — no job before this one is named so; it \
                             starts after all"
                        ),
                        &job.loc,
                    );
                    after_all(segment_start)
                }
            }
        }
    }
}

/// The run a job starts (the first of a file or of a group), its run-level options
/// and its exitall. `number` is its fio job number, for its logs' file names.
fn first_job_run(job: Job, number: u32) -> (RunSpec, Vec<RunOpt>, Option<(ExitWhat, Loc)>) {
    let run = RunSpec {
        name: job.name.clone(),
        workloads: vec![job.workload],
        engine: job.engine,
        engine_opts: job.engine_opts,
        duration_ns: job.duration_ns,
        passes: job.passes,
        warmup_ns: job.warmup_ns,
        cpus: job.cpus.clone(),
        seed: job.seed.unwrap_or(TRANSLATED_SEED),
        curve: job.curve,
        io: job.io,
        interval_ns: job
            .fio_logs
            .as_ref()
            .and_then(|l| l.1)
            .or(job.steady.as_ref().and_then(|s| s.1))
            .unwrap_or(base_run().interval_ns),
        steady_stop: job.steady.map(|s| s.0),
        fio_logs: job.fio_logs.map(|l| numbered(l.0, number)),
        ..base_run()
    };
    let mut run = run;
    if job.seed.is_none() {
        run.settings.set(
            &crate::plan::settings::declared::FRESH_SEED,
            crate::plan::settings::Value::Flag(true),
        );
    }
    (run, job.run_opts, job.exit)
}

/// Logs under the job's fio number, unless `per_job_logs=0` asked for none (job 0).
fn numbered(logs: FioLogs, number: u32) -> FioLogs {
    let job = if logs.job == 0 { 0 } else { number };
    FioLogs { job, ..logs }
}

/// fio's per-job logs in a run of several jobs: each job's logs become its workload's
/// own (written from its share of each interval), the first job's too once a second
/// joins. Their `log_avg_msec` is the run's interval; a later job's differing one is
/// listed once the run's interval is settled by earlier logs or a steady-state check.
fn own_logs(run: &mut RunSpec, job: &mut Job, number: u32, unsupported: &mut UnsupportedList) {
    if let Some(first) = run.fio_logs.take() {
        run.workloads[0].overrides.fio_logs = Some(first);
    }
    let Some((logs, avg_ns)) = job.fio_logs.take() else {
        return;
    };
    if let Some(avg_ns) = avg_ns.filter(|&a| a != run.interval_ns) {
        let settled = run.steady_stop.is_some()
            || run.workloads.iter().any(|w| w.overrides.fio_logs.is_some());
        if settled {
            unsupported.push(
                format!(
                    "log_avg_msec={} of job '{}' — differs from the run's interval of {} ms \
                     (set by an earlier job); ioscope's intervals are per run",
                    avg_ns / 1_000_000,
                    job.name,
                    run.interval_ns / 1_000_000
                ),
                &job.loc,
            );
        } else {
            run.interval_ns = avg_ns;
        }
    }
    job.workload.overrides.fio_logs = Some(numbered(logs, number));
}

/// Lists the run-level options of a later job of a run that differ from the first
/// job's and that a job cannot keep for itself (the first job's are used).
fn report_mismatches(
    run: &RunSpec,
    first: &[RunOpt],
    job: &Job,
    unsupported: &mut UnsupportedList,
) {
    // A net job (socket peers, not workers) cannot share a run with another engine.
    let engines_mix = job.engine == run.engine
        || [job.engine, run.engine]
            .iter()
            .all(|&e| crate::plan::overrides::mixes_with_others(e));
    for (what, text, loc) in &job.run_opts {
        if PER_JOB.contains(what) && (*what != "ioengine" || engines_mix) {
            continue;
        }
        if let Some((_, first_text, _)) = first.iter().find(|(w, _, _)| w == what) {
            // Jobs keep their own runtimes and passes (own_amounts, own_runtimes).
            if first_text != text && *what != "runtime" {
                let why = match *what {
                    "ioengine" => "the net engine's jobs are socket peers and need a run of their own (stonewall)",
                    "durability" => "a target is opened once per run, with or without O_DSYNC",
                    _ => "ioscope uses one setting per run",
                };
                unsupported.push(
                    format!(
                        "{text} — differs from {first_text} of job '{}' in the \
                         same run; {why}",
                        run.name
                    ),
                    loc,
                );
            }
        }
    }
}

/// Run-level options a job of a run may set for itself: they become the workload's
/// own settings ([`own_settings`], [`own_cpus`]) rather than mismatches.
const PER_JOB: &[&str] = &["ioengine", "engine options", "ramp_time", "cpus_allowed"];

/// A later job of a run keeps its own engine and engine options, io_uring options,
/// flushes and warm-up where they differ from the run's (the first job's).
fn own_settings(run: &RunSpec, job: &mut Job) {
    let own = &mut job.workload.overrides;
    let mixes = |e| crate::plan::overrides::mixes_with_others(e);
    // Otherwise listed as unsupported by group_runs, the run's engine being used.
    if job.engine != run.engine && mixes(job.engine) && mixes(run.engine) {
        own.engine = Some(job.engine);
    }
    // The options of its engine (a donor, a program, a CPU load), where the run's
    // (the first job's) would give it others.
    let engine = own.engine.unwrap_or(run.engine);
    if job.engine_opts.for_engine(engine) != run.engine_opts.for_engine(engine) {
        own.engine_opts = Some(job.engine_opts.clone());
    }
    if job.io.uring != run.io.uring {
        own.uring = Some(job.io.uring.clone());
    }
    // A workload that never writes never flushes, whatever it says.
    if job.io.flushes() != run.io.flushes() && job.workload.read_pct < 100 {
        own.flushes = Some(job.io.flushes());
    }
    if job.warmup_ns != run.warmup_ns {
        own.warmup_ns = Some(job.warmup_ns);
    }
}

/// `cpus_allowed` per job: one set for the whole run when the jobs agree, otherwise
/// no run-level set and each job that names one pins its own workers to it.
fn own_cpus(run: &mut RunSpec, jobs: &[PerJob]) {
    if jobs.iter().all(|j| j.cpus == jobs[0].cpus) {
        return;
    }
    run.cpus = None;
    for (w, j) in run.workloads.iter_mut().zip(jobs) {
        w.overrides.cpus = j.cpus.clone();
    }
}

/// fio runs each time-based job for its own runtime, after its own start delay: the
/// run lasts until the last of them ends, and a job that ends before that stops
/// issuing then (`pauses.stop_ns`). With `exitall` the run ends instead when the
/// first job that carries it ends (fio stops the others of its group then). Each
/// job's runtime is in `stop_ns` on entry (see [`group_runs`]); runs that are not
/// time-based are left as they are (there `declared::EXIT_ALL` stops the run when a
/// stream of the job has done its I/O).
fn own_runtimes(run: &mut RunSpec, exits: &[Option<(ExitWhat, Loc)>]) {
    // A job counts from the later of its start delay and its own warm-up (which the
    // translation measures from the run's start, start delay included).
    let ends: Option<Vec<u64>> = run
        .workloads
        .iter()
        .map(|w| {
            let own = w.pauses.stop_ns;
            let from = w.pauses.start_delay_ns.max(run.warmup_of(w));
            (own > 0).then(|| from.saturating_add(own))
        })
        .collect();
    for w in &mut run.workloads {
        w.pauses.stop_ns = 0;
    }
    let (Some(ends), None) = (ends, run.passes) else {
        // Jobs that end on their I/O amounts: the workers stop the run when a stream
        // of an exitall workload has done its share (declared::EXIT_ALL).
        return;
    };
    let Some(&latest) = ends.iter().max() else {
        return;
    };
    // exitall: the run ends when the first job that carries it ends.
    let first_exit = ends
        .iter()
        .zip(exits)
        .filter(|(_, e)| e.is_some())
        .map(|(&end, _)| end)
        .min();
    let last = first_exit.map_or(latest, |e| e.min(latest));
    run.duration_ns = Some(last.saturating_sub(run.warmup_ns));
    for (w, end) in run.workloads.iter_mut().zip(ends) {
        if end < last {
            w.pauses.stop_ns = end;
        }
    }
}

/// What a job of a run does, for settling the run's amounts: its passes (`None`:
/// time-based), its runtime, its CPUs, and its runtime as written (for the list).
struct PerJob {
    cpus: Option<Vec<usize>>,
    passes: Option<u64>,
    runtime_ns: Option<u64>,
    name: String,
    runtime: Option<(String, Loc)>,
    /// A clone after the first of a job made one workload per clone.
    later_clone: bool,
}

impl PerJob {
    fn of(job: &Job) -> PerJob {
        PerJob {
            cpus: job.cpus.clone(),
            passes: job.passes,
            runtime_ns: job.duration_ns,
            name: job.name.clone(),
            runtime: job
                .run_opts
                .iter()
                .find(|(w, _, _)| *w == "runtime")
                .map(|(_, t, l)| (t.clone(), l.clone())),
            later_clone: job.clone.is_some_and(|n| n > 0),
        }
    }
}

/// Jobs of one run that do not all run for the same time or the same passes: fio
/// runs each until its own runtime or, without `time_based`, until its passes are
/// done if that is sooner; the group lasts until the last job ends. The run becomes
/// one of passes (the first such job's), each job with other passes or time-based
/// keeps that as its own amount, each job with a runtime stops at its own end, and
/// the run's duration is the last end when every job has one (else the run ends
/// when the last job's passes are done). With `exitall` the run ends instead when
/// the first job carrying it ends: at the earliest runtime of such a job (the run's
/// duration), or when one of them has done its passes (`declared::EXIT_ALL`, in the
/// workers), whichever comes first. Returns false when the jobs agree, or are all
/// time-based (see [`own_runtimes`]), or the run is a `latency_target` search
/// (listed: each probe of ioscope's SLA search runs the whole run for one length).
fn own_amounts(
    run: &mut RunSpec,
    jobs: &[PerJob],
    exits: &[Option<(ExitWhat, Loc)>],
    unsupported: &mut UnsupportedList,
) -> bool {
    let same = |j: &PerJob| (j.passes, j.runtime_ns) == (jobs[0].passes, jobs[0].runtime_ns);
    let Some(passes) = jobs.iter().find_map(|j| j.passes) else {
        return false;
    };
    if jobs.iter().all(same) {
        return false;
    }
    if run.curve.is_some() {
        let first = jobs[0].runtime.as_ref().map_or("", |r| r.0.as_str());
        for (text, loc) in jobs
            .iter()
            .filter(|j| !same(j))
            .filter_map(|j| j.runtime.as_ref())
        {
            unsupported.push(
                format!(
                    "{text} — differs from {first} of job '{}' in the same run; with \
                     latency_target each probe of ioscope's SLA search runs every job for \
                     the probe's length",
                    jobs[0].name
                ),
                loc,
            );
        }
        return false;
    }
    let ends: Vec<Option<u64>> = run
        .workloads
        .iter()
        .zip(jobs)
        .map(|(w, j)| {
            let from = w.pauses.start_delay_ns.max(run.warmup_of(w));
            j.runtime_ns.map(|r| from.saturating_add(r))
        })
        .collect();
    let last = ends.iter().copied().collect::<Option<Vec<u64>>>();
    let last = last.and_then(|e| e.into_iter().max());
    // exitall: the first runtime of a job carrying it ends the run (one that ends on
    // its passes stops it from the workers).
    let first_exit = ends
        .iter()
        .zip(exits)
        .filter(|(_, e)| e.is_some())
        .filter_map(|(&end, _)| end)
        .min();
    let run_end = match (last, first_exit) {
        (Some(l), Some(e)) => Some(l.min(e)),
        (l, e) => l.or(e),
    };
    run.passes = Some(passes);
    run.duration_ns = run_end.map(|l| l.saturating_sub(run.warmup_ns));
    for ((w, j), end) in run.workloads.iter_mut().zip(jobs).zip(ends) {
        w.overrides.amount = match j.passes {
            None => Some(Amount::TimeBased),
            Some(p) if p != passes => Some(Amount::Passes(p)),
            Some(_) => None,
        };
        w.pauses.stop_ns = end
            .filter(|&e| run_end.map_or(true, |r| e < r))
            .unwrap_or(0);
    }
    true
}

/// `exit_what=all`: when a job with `exitall` ends, fio stops every job, so the runs
/// after its run never start.
fn exit_what_all(runs: &mut Vec<RunSpec>, exits: &[Vec<Option<(ExitWhat, Loc)>>]) {
    let stop_after = exits
        .iter()
        .position(|e| e.iter().flatten().any(|(w, _)| *w == ExitWhat::All));
    if let Some(i) = stop_after {
        runs.truncate(i + 1);
    }
}

/// fio's `exit_what`: which jobs a job with `exitall` stops when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExitWhat {
    /// The jobs of its group (fio's default): ioscope's run.
    Group,
    /// The jobs running now, across groups; as ioscope runs one run at a time, the
    /// run's.
    Stonewall,
    /// Every job, including those of later groups, which then never start.
    All,
}

/// A run-level setting as one job wrote it: (which, option text, where), so that
/// jobs of one run that disagree can be reported.
type RunOpt = (&'static str, String, Loc);

/// Resolving one job: its options, and where to report what cannot be carried over.
struct JobCx<'a> {
    name: String,
    section_loc: &'a Loc,
    o: &'a Opts,
    unsupported: &'a mut UnsupportedList,
    warnings: &'a mut Vec<String>,
    run_opts: Vec<RunOpt>,
    /// Some job of the file names `exitall` (any value): fio's flag is then the
    /// whole process's, so every job that ends stops its group.
    exitall_anywhere: bool,
    /// `zonesize` under zonemode=strided or zbd: what a size in zones (`8z`) counts.
    zone_bytes: Option<u64>,
    /// `size=N%` on one file or device: the working set's `range_to_pct`.
    range_to_pct: Option<f64>,
    /// Each clone's own file (fio's name with `$jobnum`), set by the job's target.
    clone_files: Vec<String>,
    /// fio gives each clone a file of its own where ioscope runs them on one (an
    /// NFS export's): how the clones walk it is said, not changed.
    clones_apart: bool,
}

/// Whether a job says how large its file is: a size, or `fill_device` (`fill_fs`),
/// under which fio writes until the filesystem is full (the target is then sized to
/// the filesystem).
fn sized(o: &Opts, size: Option<u64>) -> bool {
    size.is_some() || o.has("size") || o.has("filesize") || o.flag("fill_device").unwrap_or(false)
}

/// Where a job's data goes, as its options say.
struct JobTarget {
    uri: String,
    size: Option<u64>,
    offset: u64,
    /// No filename: fio creates `DIRECTORY/JOBNAME.0.0`.
    from_directory: bool,
    /// `offset_increment`: each clone's region starts this much after the last's.
    increment: u64,
    /// How far the last clone's region starts past the first's.
    spread: u64,
    /// On a file set: which file each I/O goes to (`file_service_type`).
    file_service: crate::plan::file_service::FileService,
}

impl JobTarget {
    /// How long the target must be: the region of the clone furthest in.
    fn extent(&self) -> Option<u64> {
        self.size
            .map(|s| s.saturating_add(self.offset + self.spread))
    }

    /// `uri` whole, from offset 0, for every clone alike; `from_directory` when
    /// fio would make its name from the job's directory.
    fn whole(uri: String, from_directory: bool) -> JobTarget {
        JobTarget {
            uri,
            size: None,
            offset: 0,
            from_directory,
            increment: 0,
            spread: 0,
            file_service: Default::default(),
        }
    }
}

/// A job's warm-up counted from the run's start: fio ramps a job after its start
/// delay, ioscope counts warm-ups from the run's start.
fn ramp_after_delay(ramp_ns: u64, start_delay_ns: u64) -> u64 {
    match ramp_ns {
        0 => 0,
        r => r.saturating_add(start_delay_ns),
    }
}

/// When a job stops.
struct JobTiming {
    duration_ns: Option<u64>,
    passes: Option<u64>,
    warmup_ns: u64,
    /// number_ios: each stream's I/O count limit (0 = none).
    stop_after_ios: u64,
    /// io_size that is not whole passes over size: bytes per pass (0 = none).
    pass_bytes: u64,
}

fn opt_err(loc: &Loc, key: &str, v: &str, e: &dyn std::fmt::Display) -> CompatError {
    loc.error(format!("{key}={v}: {e}"))
}

impl<'a> JobCx<'a> {
    fn new(
        section: &str,
        section_loc: &'a Loc,
        o: &'a Opts,
        unsupported: &'a mut UnsupportedList,
        warnings: &'a mut Vec<String>,
    ) -> Self {
        let name = match o.get("name") {
            Some((v, _)) if !v.is_empty() => v.to_string(),
            _ => section.to_string(),
        };
        JobCx {
            name,
            section_loc,
            o,
            unsupported,
            warnings,
            run_opts: Vec::new(),
            exitall_anywhere: false,
            zone_bytes: None,
            range_to_pct: None,
            clone_files: Vec::new(),
            clones_apart: false,
        }
    }

    /// The job, step by step.
    fn resolve(mut self) -> Result<Job, CompatError> {
        let (zones, zbd) = self.zone_mode()?;
        self.report_unsupported();
        let create = self.file_options()?;
        let (mut read_pct, mut pattern, seq_gap_bytes, trim) = self.mix()?;
        let dist = self.distribution()?;
        let bs = self.block_sizes()?;
        let align_bytes = self.block_align(&bs)?;
        let (numjobs, streams) = self.clones()?;
        let (engine, qd) = self.engine()?;
        let engine_opts = self.engine_options(engine)?;
        let priority = self.priorities(engine, &bs)?;
        let sprandom = self.sprandom(read_pct, &pattern)?;
        self.note_engine_options(&engine_opts);
        let mut data = self.data_settings();
        self.trim_fits(trim, engine, &data);
        let direct = self.direct_for(engine)?;
        let target = self.any_target(engine, read_pct, &pattern, streams, &bs)?;
        self.dedup_set(&mut data, target.size)?;
        let (rate, arrival) = self.rate(read_pct, numjobs, &bs)?;
        let mut pauses = self.pauses(&rate)?;
        let flow = self.flow(&rate)?;
        let verify_backlog = self.verify_backlog(&data, read_pct, trim, &rate)?;
        let mut timing = self.timing(target.size, bs.single())?;
        pauses.stop_after_ios = timing.stop_after_ios;
        pauses.pass_bytes = timing.pass_bytes;
        self.op_engine_mix(engine, &mut read_pct, &mut pattern, &mut timing)?;
        self.exec_timing(engine, &mut timing)?;
        let curve = self.latency_target(timing.duration_ns)?;
        let fio_logs = self.fio_logs()?;
        let steady = self.steady_stop(fio_logs.as_ref().and_then(|l| l.1))?;
        let cpus = self.cpus()?;
        let seed = self.seed()?;
        let name = self.name.clone();
        let seq_layout = self.clones_on_region((&pattern, engine, streams), &target, &mut timing);
        let io = self.io_tuning()?;
        let exit = self.exit_all()?;
        let exit_all = exit.is_some();
        let on_error = self.error_policy(engine)?;
        let starts_group = self.group_start()?;
        let warmup_ns = ramp_after_delay(timing.warmup_ns, pauses.start_delay_ns);
        Ok(Job {
            io,
            steady,
            data,
            name: name.clone(),
            loc: self.section_loc.clone(),
            exit,
            starts_group,
            target_size: target.extent(),
            target_uri: target.uri,
            direct,
            create,
            workload: Workload {
                name,
                target: String::new(),
                read_pct,
                trim,
                pattern,
                bs,
                qd,
                streams,
                rate,
                offset_bytes: target.offset,
                size_bytes: target.size,
                dist,
                arrival,
                share_pct: None,
                seq_layout,
                align_bytes,
                seq_gap_bytes,
                offset_increment_bytes: target.increment,
                zones,
                zbd,
                flow,
                pauses,
                priority,
                sprandom,
                file_service: target.file_service,
                overrides: crate::plan::WorkloadOverrides {
                    on_error,
                    ..verify::backlog_overrides(verify_backlog)
                },
                settings: self.declared_settings(engine, read_pct, &pattern, exit_all)?,
            },
            engine,
            engine_opts,
            duration_ns: curve.as_ref().and_then(|c| c.1).or(timing.duration_ns),
            curve: curve.map(|c| c.0),
            fio_logs,
            passes: timing.passes,
            warmup_ns,
            cpus,
            seed,
            run_opts: self.run_opts,
            clone_files: self.clone_files,
            clone: None,
        })
    }

    /// The engine options go with the run's settings, so that jobs of one run that
    /// differ in them are reported.
    fn note_engine_options(&mut self, o: &crate::plan::engine_opts::EngineOptions) {
        let at = self.section_loc.clone();
        self.run_opts
            .push(("engine options", op_engines::fio_text(o), at));
    }

    /// The declared settings the options of the table's `Sets` rows give: each read
    /// by its declaration, its error naming the option as written.
    fn declared_settings(
        &mut self,
        engine: EngineKind,
        read_pct: u8,
        pattern: &AccessPattern,
        exit_all: bool,
    ) -> Result<crate::plan::settings::WorkloadSettings, CompatError> {
        use crate::plan::settings::{declared::EXIT_ALL, Value};
        let mut out = crate::plan::settings::WorkloadSettings::default();
        if exit_all {
            out.set(&EXIT_ALL, Value::Flag(true));
        }
        for (name, decl, conv) in fio_options::settings() {
            if let Some((v, loc)) = self.o.get(name) {
                let ours = match conv {
                    None => Some(v.to_string()),
                    Some(c) => (c.to_ours)(v),
                };
                let value = ours
                    .ok_or_else(|| format!("'{v}' is not a value of {name}"))
                    .and_then(|t| decl.parse_text(&t))
                    .map_err(|e| opt_err(loc, name, v, &e))?;
                out.set(decl, value);
            }
        }
        self.atomic_fits(engine, &mut out);
        self.fill_fits(read_pct, &mut out);
        self.random_fits(read_pct, pattern, &mut out)?;
        if let Some(p) = self.range_to_pct {
            use crate::plan::settings::{declared::RANGE_TO_PCT, Value};
            out.set(&RANGE_TO_PCT, Value::Ratio(p));
        }
        Ok(out)
    }

    /// fio's clones of a job on one region each make the job's passes (numjobs=4,
    /// size=512k: 4 × 512k); ioscope's streams share a pass of their working set, so
    /// the run makes `streams` times the passes: the same I/Os in all, and each block
    /// as often. Not where each clone has a region or files of its own, nor where each
    /// stream walks the whole region (`whole`).
    fn clone_passes(
        &mut self,
        engine: EngineKind,
        streams: u32,
        target: &JobTarget,
        timing: &mut JobTiming,
    ) {
        let shared = target.increment == 0 && !target.uri.starts_with("files:");
        let Some(p) = timing.passes.filter(|_| streams > 1 && shared) else {
            return;
        };
        if !Self::streams_share_passes(engine) {
            return;
        }
        timing.passes = Some(p.saturating_mul(u64::from(streams)));
        self.warnings.push(format!(
            "job '{}': fio's {streams} clones each make {p} pass(es) over the region; \
             ioscope's {streams} streams share each pass, so the run makes {} passes (the \
             same I/Os in all)",
            self.name,
            p.saturating_mul(u64::from(streams))
        ));
    }

    /// Whether the streams of a job on `engine` share a pass of its working set; the
    /// operation engines and page_fault (a mapping per worker) count their own.
    fn streams_share_passes(engine: EngineKind) -> bool {
        !(engine.is_file_op() || engine.desc().paces_itself || engine == EngineKind::PageFault)
    }

    /// How the job's clones walk its region. fio's sequential clones on one region
    /// each walk the whole of it from its start, as many passes as one job makes:
    /// the `whole` layout, each stream over the whole working set. Clones with files
    /// of their own become workloads of their own ([`clone_files`]); clones with a
    /// region of their own (`offset_increment`) are placed by it; with zones, on an
    /// engine that counts its own passes, or with files of their own ioscope cannot
    /// give them (`clones_apart`), the streams walk as ioscope's do, which is said.
    /// Then [`JobCx::clone_passes`].
    fn clones_on_region(
        &mut self,
        (pattern, engine, streams): (&AccessPattern, EngineKind, u32),
        target: &JobTarget,
        timing: &mut JobTiming,
    ) -> SeqLayout {
        if self.clone_files.len() > 1 {
            return SeqLayout::Regions;
        }
        // Clones in a directory have files of their own only when the name format
        // holds their number; else they share one file, as clones of a filename do.
        // (A file set's streams walk its files as the set's service policy says.)
        let set = target.uri.starts_with("files:");
        let own = target.from_directory && (self.clones_own_files() || set);
        let solo = own || target.increment > 0;
        if matches!(pattern, AccessPattern::Sequential) && streams > 1 && !solo {
            // Zones (strided or zbd, sized by zonesize) place the streams themselves.
            let zoned = self.zone_bytes.is_some();
            if !zoned && !self.clones_apart && Self::streams_share_passes(engine) {
                return SeqLayout::Whole;
            }
            self.warnings.push(format!(
                "job '{}': each fio clone reads the whole region sequentially from its \
                 start; ioscope's {streams} streams each walk their own slice of it",
                self.name
            ));
        }
        self.clone_passes(engine, streams, target, timing);
        SeqLayout::Regions
    }

    /// `direct`, where it means something: not to an engine that reads and writes no
    /// bytes.
    /// Where a job that replays a log (`read_iolog`) replays it: `replay_redirect`'s
    /// device; else, without a `filename`, the file a fio log names in its first
    /// `add` line (fio replays onto the log's files). `None` for any other job.
    fn replay_target(&self) -> Option<String> {
        use std::io::{BufRead, Read};
        self.o.get("read_iolog")?;
        if let Some((r, _)) = self.o.get("replay_redirect").filter(|(r, _)| !r.is_empty()) {
            return Some(r.to_string());
        }
        if self.o.get("filename").is_some_and(|(f, _)| !f.is_empty()) {
            return None;
        }
        // The head of the log is enough: fio writes its `add` lines first.
        let (log, _) = self.o.get("read_iolog")?;
        let head = std::fs::File::open(log).ok()?.take(64 << 10);
        std::io::BufReader::new(head)
            .lines()
            .map_while(Result::ok)
            .find_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                match f.as_slice() {
                    [.., file, "add"] if file.starts_with('/') => Some(file.to_string()),
                    _ => None,
                }
            })
    }

    fn direct_for(&self, engine: EngineKind) -> Result<Option<bool>, CompatError> {
        let no_bytes = engine.is_file_op()
            || matches!(
                engine,
                EngineKind::Cpuio | EngineKind::PageFault | EngineKind::Exec | EngineKind::Net
            );
        if no_bytes {
            Ok(None)
        } else {
            self.direct()
        }
    }

    /// The job's target: a network peer, an operation engine's directory or files,
    /// else the file or device it names.
    fn any_target(
        &mut self,
        engine: EngineKind,
        read_pct: u8,
        pattern: &AccessPattern,
        streams: u32,
        bs: &BlockSizes,
    ) -> Result<JobTarget, CompatError> {
        self.nbd_needs_uri(engine)?;
        let (t, bytes) = if let Some(t) = self.net_target(engine, read_pct, pattern, streams)? {
            (t, false)
        } else if let Some(t) = self.nfs_target(engine, streams)? {
            (t, true)
        } else if let Some(t) = self.op_engine_target(engine, streams, bs.max_bytes())? {
            (t, false)
        } else {
            // The engines that read and write files can spread a job over several.
            let sets = matches!(
                engine,
                EngineKind::Auto | EngineKind::Sync | EngineKind::Uring
            )
            .then(|| bs.min_bytes());
            (
                self.target(streams, engine == EngineKind::Auto, sets)?,
                true,
            )
        };
        self.size_percent_fits(&t, bytes, bs)?;
        Ok(t)
    }

    /// fio's `--readonly` (its safety check against writes): a job that would write or
    /// trim is refused, as fio refuses it, before anything is created.
    fn read_only_kept(&self, read_pct: u8, trim: TrimMode) -> Result<(), CompatError> {
        if !self.o.flag("readonly")? || (read_pct == 100 && trim == TrimMode::None) {
            return Ok(());
        }
        Err(self.o.map["readonly"].1.error(format!(
            "readonly: job '{}' writes or trims (read share {read_pct} %{}), which \
             fio's --readonly refuses; nothing was created",
            self.name,
            if trim == TrimMode::None {
                ""
            } else {
                ", trims"
            }
        )))
    }

    /// `randseed`; else the translation's fixed seed, or `None` under `randrepeat=0`
    /// (`allrandrepeat=0`): fio then draws a new seed every run, and so does the run
    /// (`fresh_seed`), saying so.
    fn seed(&mut self) -> Result<Option<u64>, CompatError> {
        if let Some((v, loc)) = self.o.get("randseed") {
            return v
                .trim()
                .parse::<u64>()
                .map(Some)
                .map_err(|e| opt_err(loc, "randseed", v, &e));
        }
        if self.o.has("randrepeat") && !self.o.flag("randrepeat")? {
            self.warnings.push(format!(
                "job '{}': randrepeat=0 draws a new seed for every run, as fio does \
                 (fresh_seed); the result's plan records the seed that ran",
                self.name
            ));
            return Ok(None);
        }
        Ok(Some(TRANSLATED_SEED))
    }

    /// `offset_increment`: bytes between the starts of successive clones' regions
    /// (a percentage or a size in zones is listed).
    fn offset_increment(&mut self) -> Result<u64, CompatError> {
        let Some((v, loc)) = self.o.get("offset_increment") else {
            return Ok(0);
        };
        if let Some(bytes) = self.in_zones("offset_increment", v, loc) {
            return bytes;
        }
        let t = v.trim().to_ascii_lowercase();
        if t.ends_with('%') || t.ends_with('z') {
            self.unsupported.push(
                format!("offset_increment={v} — a percentage or a size in zones"),
                loc,
            );
            return Ok(0);
        }
        parse_size_allow_zero(v).map_err(|e| opt_err(loc, "offset_increment", v, &e))
    }

    /// `random_distribution` (uniform when not given), with `random_sequence_stride`
    /// for a sequence (which alone it does not change).
    fn distribution(&mut self) -> Result<Distribution, CompatError> {
        let stride = self.o.flag("random_sequence_stride")?;
        match self.o.get("random_distribution") {
            Some((v, loc)) => random_distribution(v, loc, stride, self.unsupported),
            None => Ok(Distribution::Uniform),
        }
    }

    /// A trim job needs an engine ioscope can discard with, and no verification
    /// (ioscope does not verify runs that trim).
    fn trim_fits(&mut self, trim: TrimMode, engine: EngineKind, data: &DataSettings) {
        if trim == TrimMode::None {
            return;
        }
        let (rw, loc) = self.o.get("rw").unwrap_or(("trim", self.section_loc));
        if !engine.trims() {
            let why = match engine {
                EngineKind::Iscsi => "ioscope's iSCSI engine sends no SCSI UNMAP",
                EngineKind::Nfs => "NFSv3 has no trim, and ioscope's nfs engine sends none",
                _ => "that engine moves no bytes of a range",
            };
            self.unsupported.push(
                format!("rw={rw} with ioengine={} — {why}", engine.name()),
                loc,
            );
        }
        if data.verify {
            let (v, vloc) = self.o.get("verify").unwrap_or(("1", loc));
            self.unsupported.push(
                format!(
                    "verify={v} with rw={rw} — ioscope does not verify runs that trim (fio's \
                     trim_verify_zero, zeros read back from a discarded block, is not \
                     reproduced)"
                ),
                vloc,
            );
        }
    }

    /// `ioengine=nbd` addresses its export by `uri=`.
    fn nbd_needs_uri(&self, engine: EngineKind) -> Result<(), CompatError> {
        if engine == EngineKind::Nbd && !self.o.get("uri").is_some_and(|(u, _)| !u.is_empty()) {
            let at = self
                .o
                .get("uri")
                .map(|(_, l)| l)
                .unwrap_or(self.section_loc);
            return Err(at.error(format!(
                "job '{}': ioengine=nbd needs uri= (the NBD export, nbd://HOST/NAME)",
                self.name
            )));
        }
        Ok(())
    }

    /// io_uring and durability options. The io_uring ones and periodic flushes are
    /// the job's own (see `own_settings`); O_DSYNC is per run (a target is opened
    /// once), so it is noted for `report_mismatches`.
    fn io_tuning(&mut self) -> Result<crate::plan::tuning::IoTuning, CompatError> {
        let io = super::fio_tuning::io_tuning(|k| self.o.get(k))?;
        self.run_opts.push((
            "durability",
            format!("sync={}", u8::from(io.write_through)),
            self.section_loc.clone(),
        ));
        Ok(io)
    }

    /// Lists each of `keys` that is given without `main`, which they qualify.
    fn only_with(&mut self, main: &str, keys: &[&str]) {
        for key in keys {
            if let Some((v, l)) = self.o.get(key) {
                self.unsupported
                    .push(format!("{key}={v} — only used with {main}"), l);
            }
        }
    }

    /// Lists the options the table calls unknown or unsupported, and values that use
    /// fio's arithmetic.
    fn report_unsupported(&mut self) {
        for key in &self.o.order {
            let (v, loc, raw) = &self.o.map[key];
            let text = match v {
                Some(v) => format!("{raw}={v}"),
                None => raw.clone(),
            };
            if fio_options::is_unsupported(key, v.as_deref()) {
                let text = match fio_options::unsupported_reason(key) {
                    Some(why) => format!("{text} — {why}"),
                    None => text,
                };
                self.unsupported.push(text, loc);
            } else if v.as_deref().is_some_and(|v| v.contains('$')) && key != "filename_format" {
                // Job files come here substituted; what is left is not fio's
                // (filename_format's $jobname/$jobnum/$filenum are names, read by
                // op_engines::file_options).
                self.unsupported.push(
                    format!(
                        "{text} — '$' left after fio's substitutions (${{VAR}}, $pagesize, \
                         $mb_memory, $ncpus, which fio makes in job files, not on its \
                         command line)"
                    ),
                    loc,
                );
            } else if let Some(why) = fio_options::warning(key) {
                self.warnings
                    .push(format!("job '{}': {text} — {why}", self.name));
            }
        }
    }

    /// [`JobCx::rw_mix`], kept within fio's `--readonly`.
    fn mix(&mut self) -> Result<(u8, AccessPattern, i64, TrimMode), CompatError> {
        let m = self.rw_mix()?;
        self.read_only_kept(m.0, m.3)?;
        Ok(m)
    }

    /// `rw` and the read/write mix: (read_pct, pattern, bytes added to a sequential
    /// offset after each I/O, trim mode).
    fn rw_mix(&mut self) -> Result<(u8, AccessPattern, i64, TrimMode), CompatError> {
        let o = self.o;
        let (rw, rw_loc) = o.get("rw").unwrap_or(("read", self.section_loc));
        let (rw_base, rw_suffix) = match rw.split_once(':') {
            Some((a, b)) => (a, Some(b)),
            None => (rw, None),
        };
        let word = rw_base.trim().to_ascii_lowercase();
        let trim = TrimMode::parse_rw(&word).map_or(TrimMode::None, |(_, t)| t);
        let (mixed, pattern) = match word.as_str() {
            "read" => (Some(100u8), AccessPattern::Sequential),
            "write" => (Some(0), AccessPattern::Sequential),
            "randread" => (Some(100), AccessPattern::Random),
            "randwrite" => (Some(0), AccessPattern::Random),
            "rw" | "readwrite" => (None, AccessPattern::Sequential),
            "randrw" => (None, AccessPattern::Random),
            "trim" | "trimwrite" => (Some(0), AccessPattern::Sequential),
            "randtrim" | "randtrimwrite" => (Some(0), AccessPattern::Random),
            other => {
                return Err(rw_loc.error(format!(
                    "rw={other}: expected read, write, randread, randwrite, rw, readwrite, \
                     randrw, trim, randtrim, trimwrite or randtrimwrite"
                )))
            }
        };
        let read_pct = match mixed {
            Some(p) => p,
            None => {
                if let Some((v, loc)) = o.get("rwmixread") {
                    pct(v).ok_or_else(|| opt_err(loc, "rwmixread", v, &"expected 0..100"))?
                } else if let Some((v, loc)) = o.get("rwmixwrite") {
                    100 - pct(v).ok_or_else(|| opt_err(loc, "rwmixwrite", v, &"expected 0..100"))?
                } else {
                    50
                }
            }
        };
        let gap = match rw_suffix {
            None => 0,
            Some(s) => self.offset_modifier(rw, s, &pattern, rw_loc)?,
        };
        Ok((read_pct, pattern, gap, trim))
    }

    /// `rw=read:N`: fio adds N bytes (fio's size units, negative walks backwards) to
    /// the offset after each sequential I/O. On random I/O the suffix counts I/Os
    /// before a new random offset, which is listed.
    fn offset_modifier(
        &mut self,
        rw: &str,
        suffix: &str,
        pattern: &AccessPattern,
        loc: &Loc,
    ) -> Result<i64, CompatError> {
        if !matches!(pattern, AccessPattern::Sequential) {
            self.unsupported.push(
                format!(
                    "rw={rw} — ':{suffix}' on random I/O: fio issues that many I/Os before \
                     a new random offset; ioscope draws one for every I/O"
                ),
                loc,
            );
            return Ok(0);
        }
        let s = suffix.trim();
        let (neg, digits) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let bytes = parse_size_allow_zero(digits)
            .ok()
            .and_then(|b| i64::try_from(b).ok())
            .ok_or_else(|| opt_err(loc, "rw", rw, &"the ':N' offset modifier must be a size"))?;
        Ok(if neg { -bytes } else { bytes })
    }

    /// `blockalign` (`ba`): random offsets are multiples of it. One value for every
    /// direction, a multiple of the smallest block size (smaller ones would make
    /// unaligned I/O, which ioscope does not issue).
    fn block_align(&mut self, bs: &BlockSizes) -> Result<Option<u64>, CompatError> {
        let Some((v, loc)) = self.o.get("blockalign") else {
            return Ok(None);
        };
        let mut sizes = Vec::new();
        for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            sizes.push(parse_size(part).map_err(|e| opt_err(loc, "blockalign", v, &e))?);
        }
        let min = bs.min_bytes().max(1);
        match sizes.as_slice() {
            [a, rest @ ..] if rest.iter().all(|b| b == a) && *a % min == 0 => Ok(Some(*a)),
            [a, rest @ ..] if rest.iter().all(|b| b == a) => {
                self.unsupported.push(
                    format!(
                        "blockalign={v} — not a multiple of the smallest block size ({min} \
                         bytes); ioscope aligns offsets to at least that"
                    ),
                    loc,
                );
                Ok(None)
            }
            _ => {
                self.unsupported
                    .push(format!("blockalign={v} — per-direction alignments"), loc);
                Ok(None)
            }
        }
    }

    /// `numjobs`: (clones, streams).
    fn clones(&self) -> Result<(u64, u32), CompatError> {
        let numjobs = count_opt(self.o, "numjobs")?.unwrap_or(1);
        let streams = u32::try_from(numjobs).map_err(|_| {
            self.o
                .get("numjobs")
                .map(|(_, l)| l)
                .unwrap_or(self.section_loc)
                .error("numjobs is too large")
        })?;
        Ok((numjobs, streams))
    }

    /// `ioengine` and `iodepth`: (engine, queue depth). A synchronous engine runs at
    /// depth 1, as in fio.
    fn engine(&mut self) -> Result<(EngineKind, u32), CompatError> {
        let mut qd = match count_opt(self.o, "iodepth")? {
            Some(q) => {
                u32::try_from(q).map_err(|_| self.section_loc.error("iodepth is too large"))?
            }
            None => 1,
        };
        let (engine_name, engine_loc) = self
            .o
            .get("ioengine")
            .unwrap_or(("psync", self.section_loc));
        let lower = engine_name_as_fio_loads_it(engine_name);
        let blkio_driver = self.o.get("libblkio_driver");
        let same = EngineKind::from_fio(&lower);
        let (engine, mapped) = match lower.as_str() {
            _ if same.is_some() => (same.unwrap_or(EngineKind::Auto), None),
            "cpp_null" => (
                EngineKind::Null,
                Some("fio's C++ example of its null engine; every I/O completes at once"),
            ),
            "libblkio" if blkio_driver.is_some_and(|(d, _)| d.trim() == "io_uring") => (
                EngineKind::Uring,
                Some("libblkio's io_uring driver submits through io_uring to libblkio_path; ioscope's own io_uring engine does the same"),
            ),
            "libblkio" => {
                let (d, l) = blkio_driver.unwrap_or(("(none)", engine_loc));
                self.unsupported.push(
                    format!(
                        "libblkio_driver={d} — ioscope has no libblkio; only its io_uring \
                         driver maps (to ioscope's io_uring engine)"
                    ),
                    l,
                );
                (EngineKind::Auto, None)
            }
            "sync" | "vsync" => (EngineKind::Sync, None),
            "libaio" | "posixaio" | "windowsaio" => (
                EngineKind::Uring,
                Some("asynchronous submission at the queue depth, through io_uring"),
            ),
            "pvsync" | "pvsync2" => (
                EngineKind::Sync,
                Some("one positioned read/write per I/O (pvsync2's per-I/O flags such as hipri are not set)"),
            ),
            "filecreate" | "filestat" | "filedelete" | "dircreate" | "dirstat" | "dirdelete"
            | "cpuio" | "page_fault" | "exec" => {
                (EngineKind::parse(&lower).unwrap_or(EngineKind::Auto), None)
            }
            "falloc" => (
                EngineKind::Falloc,
                Some("a new file is created as a hole, so each fallocate allocates (fio \
                      preallocates a file it lays out unless fallocate=none)"),
            ),
            "net" => (EngineKind::Net, None),
            "e4defrag" => (EngineKind::E4defrag, None),
            "netsplice" => (
                EngineKind::Net,
                Some("the same sockets and bytes; ioscope copies with send/recv instead of splice(2) through a pipe"),
            ),
            "mmap" => (
                EngineKind::Sync,
                Some("pread/pwrite through the page cache instead of copies to and from a mapping (no page faults are measured)"),
            ),
            other => {
                self.unsupported.push(unknown_engine(other), engine_loc);
                (EngineKind::Auto, None)
            }
        };
        if let Some(how) = mapped {
            self.warnings.push(format!(
                "job '{}': ioengine={engine_name} runs on ioscope's {} engine: {how}",
                self.name,
                engine.name()
            ));
        }
        self.run_opts.push((
            "ioengine",
            format!("ioengine={engine_name}"),
            engine_loc.clone(),
        ));
        if engine.desc().serial && qd > 1 {
            self.warnings.push(format!(
                "job '{}': iodepth={qd} has no effect with the synchronous engine \
                 '{engine_name}' in fio; using queue depth 1",
                self.name
            ));
            qd = 1;
        }
        Ok((engine, qd))
    }

    /// Write content and verification (fio's percentages as true ratios: P % of a
    /// buffer compressible → about 100/(100-P):1).
    fn data_settings(&mut self) -> DataSettings {
        let mut data = DataSettings::default();
        if let Some((v, _)) = self.o.get("verify") {
            if !matches!(v, "0" | "none" | "") {
                data.verify = true;
                data.verify_after = true;
            }
        }
        // do_verify=0: fio writes the verify headers but skips the read-back.
        if let Some((v, loc)) = self.o.get("do_verify") {
            match parse_bool(Some(v)) {
                Some(on) => data.verify_after &= on,
                None => self
                    .unsupported
                    .push(format!("do_verify={v} — not a boolean"), loc),
            }
        }
        self.verify_pattern(&mut data);
        for (key, slot) in [
            ("buffer_compress_percentage", &mut data.compress_ratio),
            ("dedupe_percentage", &mut data.dedup_ratio),
        ] {
            if let Some((v, loc)) = self.o.get(key) {
                match v.trim().parse::<f64>() {
                    Ok(p) if (0.0..100.0).contains(&p) => {
                        *slot = (p > 0.0).then(|| 100.0 / (100.0 - p))
                    }
                    _ => self
                        .unsupported
                        .push(format!("{key}={v} — needs 0 to 99"), loc),
                }
            }
        }
        data
    }

    /// `verify_pattern` (what writes carry) and `verify_interval` (the verify unit: a
    /// header every that many bytes, which is ioscope's data unit). Values ioscope
    /// cannot reproduce are listed.
    fn verify_pattern(&mut self, data: &mut DataSettings) {
        if let Some((v, loc)) = self.o.get("verify_pattern") {
            match crate::plan::fill::FillPattern::parse_fio(v) {
                Ok(p) => data.pattern = Some(p),
                Err(e) => self
                    .unsupported
                    .push(format!("verify_pattern={v} — {e}"), loc),
            }
        }
        if let Some((v, loc)) = self.o.get("verify_interval") {
            match parse_size(v) {
                Ok(b) if b.is_power_of_two() && (512..=1 << 20).contains(&b) => {
                    data.dedup_unit_bytes = Some(b)
                }
                _ => self.unsupported.push(
                    format!(
                        "verify_interval={v} — ioscope's verify unit is a power of two from \
                         512 bytes to 1m"
                    ),
                    loc,
                ),
            }
        }
    }

    /// `dedupe_mode`, `dedupe_working_set_percentage` (of the job's size) and
    /// `dedupe_global`: where duplicates come from.
    fn dedup_set(&mut self, data: &mut DataSettings, size: Option<u64>) -> Result<(), CompatError> {
        let o = self.o;
        let working_set = match o.get("dedupe_mode") {
            None => false,
            Some((v, loc)) => match v.trim().to_ascii_lowercase().as_str() {
                "repeat" => false,
                "working_set" => true,
                _ => {
                    return Err(opt_err(
                        loc,
                        "dedupe_mode",
                        v,
                        &"expected repeat or working_set",
                    ))
                }
            },
        };
        // An explicit dedupe_mode=repeat leaves the set options (from [global], say)
        // unused, as fio does; without any dedupe_mode they are listed.
        if !working_set && o.has("dedupe_mode") {
            return Ok(());
        }
        if !working_set {
            self.only_with(
                "dedupe_mode=working_set",
                &["dedupe_working_set_percentage", "dedupe_global"],
            );
            return Ok(());
        }
        let pct = match o.get("dedupe_working_set_percentage") {
            None => 5,
            Some((v, loc)) => match v.trim().parse::<u64>() {
                Ok(p) if (1..=100).contains(&p) => p,
                _ => {
                    return Err(opt_err(
                        loc,
                        "dedupe_working_set_percentage",
                        v,
                        &"expected 1 to 100",
                    ))
                }
            },
        };
        let global = o.flag("dedupe_global")?;
        let Some(size) = size else {
            let (v, loc) = o.get("dedupe_mode").expect("read above");
            self.unsupported.push(
                format!("dedupe_mode={v} — the working set is a percentage of size=, which the job does not give"),
                loc,
            );
            return Ok(());
        };
        let bytes = u64::try_from(u128::from(size) * u128::from(pct) / 100).unwrap_or(u64::MAX);
        data.dedup_set = Some(crate::plan::model::DedupSet { bytes, global });
        Ok(())
    }

    /// Direct or buffered (fio's default: buffered).
    fn direct(&self) -> Result<Option<bool>, CompatError> {
        let mut direct = Some(false);
        if self.o.has("buffered") {
            direct = Some(!self.o.flag("buffered")?);
        }
        if self.o.has("direct") {
            direct = Some(self.o.flag("direct")?);
        }
        Ok(direct)
    }

    /// `zonemode`: `none` is ioscope's own way (one contiguous region); `strided`
    /// becomes the workload's zones; `zbd` its emulated zoned device.
    fn zone_mode(&mut self) -> Result<(Option<Zones>, Option<Zbd>), CompatError> {
        const STRIDED: [&str; 3] = ["zonesize", "zonerange", "zoneskip"];
        const ZBD: [&str; 6] = [
            "zonecapacity",
            "max_open_zones",
            "job_max_open_zones",
            "zone_reset_threshold",
            "zone_reset_frequency",
            "read_beyond_wp",
        ];
        let mode = self.o.get("zonemode");
        let mode_name = mode.map(|(v, _)| v.trim().to_ascii_lowercase());
        let strided = match mode_name.as_deref() {
            None => self.o.get("zonesize").is_some(),
            m => m == Some("strided"),
        };
        if strided && self.open_files()? > 1 {
            // fio's fixup_options: strided zones only work with one open file, so
            // with more it turns them off and walks each file whole.
            self.warnings.push(format!(
                "job '{}': fio turns strided zones off for a job with more than one open \
                 file, so zonesize, zonerange and zoneskip change nothing here either",
                self.name
            ));
            return Ok((None, None));
        }
        match mode_name.as_deref() {
            // fio's own default: a zonesize without a zonemode means strided zones
            // (its fixup_options), as the X-Ray prefill writes 2G every 32G.
            None if self.o.get("zonesize").is_some() => {
                self.only_with("zonemode=zbd", &ZBD);
                let (_, loc) = self.o.get("zonesize").expect("matched above");
                let loc = loc.clone();
                Ok((self.strided_zones("strided", &loc)?, None))
            }
            Some("none") if self.o.get("zonesize").is_some() => {
                let (v, loc) = self.o.get("zonesize").expect("matched above");
                Err(opt_err(
                    loc,
                    "zonesize",
                    v,
                    &"zonemode=none and zonesize do not go together (fio refuses the job)",
                ))
            }
            None | Some("none") => {
                self.only_with("zonemode=strided", &STRIDED);
                self.only_with("zonemode=zbd", &ZBD);
                Ok((None, None))
            }
            Some("strided") => {
                self.only_with("zonemode=zbd", &ZBD);
                let (v, loc) = mode.expect("matched above");
                Ok((self.strided_zones(v, loc)?, None))
            }
            Some("zbd") => {
                let (v, loc) = mode.expect("matched above");
                Ok((None, self.zbd_zones(v, loc)?))
            }
            Some(other) => {
                let (_, loc) = mode.expect("matched above");
                Err(opt_err(
                    loc,
                    "zonemode",
                    other,
                    &"expected none, strided or zbd",
                ))
            }
        }
    }

    /// fio's `openfiles`: the files a job keeps open at once, all of them unless
    /// given (those `filename` names, else `nrfiles`).
    fn open_files(&self) -> Result<u64, CompatError> {
        let files = match self.o.get("filename").filter(|(f, _)| !f.is_empty()) {
            Some((f, _)) => split_filenames(f).len() as u64,
            None => count_opt(self.o, "nrfiles")?.unwrap_or(1),
        };
        Ok(count_opt(self.o, "openfiles")?.map_or(files, |n| n.min(files)))
    }

    /// A size or offset given in zones (`8z`, fio's `size_nz`): `Some(bytes)` when
    /// `v` is one and the job has a zone size, `Some(Err)` for a bad count, `None`
    /// when `v` is not in zones or there is no zone size (the caller lists it).
    fn in_zones(&self, key: &str, v: &str, loc: &Loc) -> Option<Result<u64, CompatError>> {
        let t = v.trim().to_ascii_lowercase();
        let n = t.strip_suffix('z')?;
        let zone = self.zone_bytes?;
        Some(
            n.trim()
                .parse::<u64>()
                .ok()
                .and_then(|n| n.checked_mul(zone))
                .ok_or_else(|| opt_err(loc, key, v, &"expected a whole number of zones (e.g. 8z)")),
        )
    }

    /// `zonemode=zbd` with `zonesize` (required: ioscope emulates the zones),
    /// `zonecapacity`, `max_open_zones`, `job_max_open_zones`,
    /// `zone_reset_threshold`, `zone_reset_frequency` and `read_beyond_wp`.
    /// `zonerange` is ignored as fio ignores it; a `zoneskip` other than 0 is listed.
    fn zbd_zones(&mut self, mode: &str, loc: &Loc) -> Result<Option<Zbd>, CompatError> {
        let size = |cx: &Self, key: &str| -> Result<Option<u64>, CompatError> {
            match cx.o.get(key) {
                None => Ok(None),
                Some((v, l)) => parse_size(v).map(Some).map_err(|e| opt_err(l, key, v, &e)),
            }
        };
        let count = |cx: &Self, key: &str| -> Result<u32, CompatError> {
            match cx.o.get(key) {
                None => Ok(0),
                Some((v, l)) => v.trim().parse::<u32>().map_err(|e| opt_err(l, key, v, &e)),
            }
        };
        let ratio = |cx: &Self, key: &str| -> Result<f64, CompatError> {
            match cx.o.get(key) {
                None => Ok(0.0),
                Some((v, l)) => match v.trim().parse::<f64>() {
                    Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
                    _ => Err(opt_err(l, key, v, &"expected a number from 0 to 1")),
                },
            }
        };
        if let Some((v, l)) = self.o.get("zoneskip") {
            if parse_size_allow_zero(v).ok() != Some(0) {
                self.unsupported
                    .push(format!("zoneskip={v} — must be 0 with zonemode=zbd"), l);
            }
        }
        let Some(zone_bytes) = size(self, "zonesize")? else {
            self.unsupported.push(
                format!(
                    "zonemode={mode} without zonesize — the zones of a zoned device come from \
                     the device, which ioscope does not drive; give zonesize to emulate zones"
                ),
                loc,
            );
            return Ok(None);
        };
        self.zone_bytes = Some(zone_bytes);
        let z = Zbd {
            zone_bytes,
            capacity_bytes: size(self, "zonecapacity")?.unwrap_or(zone_bytes),
            max_open: count(self, "max_open_zones")?,
            stream_max_open: count(self, "job_max_open_zones")?,
            reset_threshold: ratio(self, "zone_reset_threshold")?,
            reset_frequency: ratio(self, "zone_reset_frequency")?,
            read_beyond_wp: self.o.flag("read_beyond_wp")?,
        };
        if let Some(why) = z.invalid() {
            self.unsupported
                .push(format!("zonemode={mode} — {why}"), loc);
            return Ok(None);
        }
        Ok(Some(z))
    }

    /// `zonemode=strided` with `zonesize`, `zonerange` (default: zonesize) and
    /// `zoneskip` (default 0). Percentages are listed; `zoneskip` may be in zones.
    fn strided_zones(&mut self, mode: &str, loc: &Loc) -> Result<Option<Zones>, CompatError> {
        let get = |cx: &mut Self, key: &str, zero_ok: bool| -> Result<Option<u64>, CompatError> {
            let Some((v, l)) = cx.o.get(key) else {
                return Ok(None);
            };
            // Of the three, fio counts only zoneskip in zones.
            if let Some(bytes) = (key == "zoneskip")
                .then(|| cx.in_zones(key, v, l))
                .flatten()
            {
                return bytes.map(Some);
            }
            let t = v.trim().to_ascii_lowercase();
            if t.ends_with('z') || t.ends_with('%') {
                cx.unsupported
                    .push(format!("{key}={v} — a size in zones or a percentage"), l);
                return Ok(None);
            }
            let parse = if zero_ok {
                parse_size_allow_zero
            } else {
                parse_size
            };
            parse(v).map(Some).map_err(|e| opt_err(l, key, v, &e))
        };
        let size = get(self, "zonesize", false)?;
        self.zone_bytes = size;
        let range = get(self, "zonerange", false)?;
        let skip = get(self, "zoneskip", true)?.unwrap_or(0);
        let Some(io_bytes) = size else {
            self.unsupported.push(
                format!("zonemode={mode} without zonesize — no zone to do I/O in"),
                loc,
            );
            return Ok(None);
        };
        Ok(Some(Zones {
            io_bytes,
            range_bytes: range.unwrap_or(io_bytes),
            skip_bytes: skip,
        }))
    }

    /// `size`/`filesize` and `offset`: (working-set length, start).
    fn region(&mut self) -> Result<(Option<u64>, u64), CompatError> {
        let mut size = None;
        for key in ["size", "filesize"] {
            if let Some((v, loc)) = self.o.get(key) {
                if v.ends_with('%') {
                    // size=N%: `size_percent_fits`, once the target is known.
                    if key == "filesize" {
                        self.unsupported
                            .push(format!("{key}={v} — percentage of the target"), loc);
                    }
                    size = None;
                } else if v.contains('-') || v.contains(':') {
                    // On a set of files each file's length is drawn from the range
                    // (`file_size_range`); elsewhere it has no meaning here.
                    let set = self.o.get("nrfiles").is_some_and(|(n, _)| n.trim() != "1");
                    if !(key == "filesize" && set) {
                        self.unsupported
                            .push(format!("{key}={v} — size range"), loc);
                    }
                } else if let Some(bytes) = self.in_zones(key, v, loc) {
                    size = Some(bytes?);
                } else if v.trim().to_ascii_lowercase().ends_with('z') {
                    self.unsupported.push(
                        format!("{key}={v} — a size in zones without a zonesize"),
                        loc,
                    );
                } else {
                    size = Some(parse_size(v).map_err(|e| opt_err(loc, key, v, &e))?);
                }
            }
        }
        let mut offset = 0;
        if let Some((v, loc)) = self.o.get("offset") {
            if v.ends_with('%') {
                self.unsupported
                    .push(format!("offset={v} — percentage of the target"), loc);
            } else if let Some(bytes) = self.in_zones("offset", v, loc) {
                offset = bytes?;
            } else if v.trim().to_ascii_lowercase().ends_with('z') {
                self.unsupported.push(
                    format!("offset={v} — an offset in zones without a zonesize"),
                    loc,
                );
            } else {
                offset = parse_size_allow_zero(v).map_err(|e| opt_err(loc, "offset", v, &e))?;
            }
        }
        Ok((size, offset))
    }

    /// The file (`filename`, `directory`, or fio's JOBNAME.0.0) and the region of it.
    /// A job of an engine ioscope does not have (`engine_unknown`, already listed) may
    /// address something other than a file, so a missing size is not an error there.
    /// With `sets` (the job's smallest block size, on an engine that reads and
    /// writes files), a job over several files becomes a file set.
    fn target(
        &mut self,
        streams: u32,
        engine_unknown: bool,
        sets: Option<u64>,
    ) -> Result<JobTarget, CompatError> {
        let (size, offset) = self.region()?;
        if let Some(min_bs) = sets {
            if let Some(t) = self.set_target(streams, size, offset, min_bs)? {
                return Ok(t);
            }
        }
        let o = self.o;
        let name = self.name.clone();
        let directory = o.get("directory").map(|(v, _)| v.to_string());
        // ioengine=libblkio names its file or device with libblkio_path; a replayed
        // log goes where fio replays it (replay_redirect, or the log's own file).
        let blkio_path = o.get("libblkio_path").filter(|(p, _)| !p.trim().is_empty());
        let given = blkio_path
            .map(|(p, _)| p.trim().to_string())
            .or_else(|| self.replay_target());
        let (uri, from_directory) = match o.get("filename") {
            _ if given.is_some() => (given.clone().unwrap_or_default(), false),
            // ioengine=nbd names its export with uri= (filename is ignored by fio).
            _ if o.get("uri").is_some_and(|(u, _)| !u.is_empty()) => (
                o.get("uri").map(|(u, _)| u.to_string()).unwrap_or_default(),
                false,
            ),
            Some((f, loc)) if !f.is_empty() => {
                let first = split_filenames(f);
                if first.len() > 1 {
                    self.unsupported.push(
                        format!("filename={f} — several files per job; using '{}'", first[0]),
                        loc,
                    );
                }
                let f = first[0].clone();
                if is_windows_path(&f) {
                    return Err(loc.error(format!(
                        "filename={f} is a Windows path; give a path on this machine with \
                         --target"
                    )));
                }
                match &directory {
                    Some(d) if !f.starts_with('/') => (format!("{d}/{f}"), false),
                    _ => (f, false),
                }
            }
            _ => {
                let dir = directory.clone().unwrap_or_else(|| ".".into());
                self.clone_files = self.clone_file_uris(streams, &dir);
                (format!("{dir}/{}", self.single_file_name()?), true)
            }
        };
        if from_directory && !sized(o, size) && !engine_unknown {
            return Err(self.section_loc.error(format!(
                "job '{name}' has no filename and no size; fio needs size= to create {uri}"
            )));
        }
        let named = o.get("filename").is_some_and(|(f, _)| !f.is_empty());
        if let Some((v, loc)) = o.get("nrfiles") {
            if v.trim() != "1" && named {
                self.warnings.push(format!(
                    "job '{name}': filename names the job's files, so nrfiles={v} is ignored \
                     (as fio does)"
                ));
            } else if v.trim() != "1" {
                self.unsupported.push(
                    format!(
                        "nrfiles={v} — fio spreads a job over {v} files; ioscope does so on \
                         files read and written by the sync and uring engines, not here"
                    ),
                    loc,
                );
            }
        }
        if let Some((v, loc)) = o.get("unlink") {
            if parse_bool(Some(v)) != Some(false) {
                self.unsupported.push(
                    format!(
                        "unlink={v} — ioscope removes after the run only the files it \
                         created in a file set read and written by the sync or uring engine"
                    ),
                    loc,
                );
            }
        }
        let increment = self.offset_increment()?;
        Ok(JobTarget {
            uri,
            size,
            offset,
            from_directory,
            increment,
            spread: increment.saturating_mul(u64::from(streams.saturating_sub(1))),
            file_service: Default::default(),
        })
    }

    /// Rate and arrival process. fio paces rate-limited I/O evenly (`linear`) unless
    /// told `rate_process=poisson`.
    fn rate(
        &mut self,
        read_pct: u8,
        numjobs: u64,
        bs: &BlockSizes,
    ) -> Result<(Rate, Arrival), CompatError> {
        let rate = match (self.o.get("rate_iops"), self.o.get("rate")) {
            (Some((v, loc)), other) => {
                if let Some((bv, bl)) = other {
                    self.unsupported
                        .push(format!("rate={bv} — rate_iops takes precedence"), bl);
                }
                rate_caps(
                    "rate_iops",
                    v,
                    loc,
                    &self.name,
                    read_pct,
                    numjobs,
                    None,
                    self.unsupported,
                    self.warnings,
                )?
            }
            (None, Some((v, loc))) => match bs.single() {
                Some(b) => rate_caps(
                    "rate",
                    v,
                    loc,
                    &self.name,
                    read_pct,
                    numjobs,
                    Some(b),
                    self.unsupported,
                    self.warnings,
                )?,
                None => {
                    self.unsupported.push(
                        format!(
                            "rate={v} — a bandwidth cap over several block sizes (ioscope \
                             paces I/Os; use rate_iops)"
                        ),
                        loc,
                    );
                    Rate::Max
                }
            },
            (None, None) => Rate::Max,
        };
        let arrival = match self.o.get("rate_process") {
            None => Arrival::Uniform,
            Some((v, loc)) => match v.trim().to_ascii_lowercase().as_str() {
                "linear" => Arrival::Uniform,
                "poisson" => Arrival::Exponential,
                other => {
                    return Err(
                        loc.error(format!("rate_process={other}: expected linear or poisson"))
                    )
                }
            },
        };
        Ok((rate, arrival))
    }

    /// `flow`, `flow_id`, `flow_sleep` (µs): fio's flow control between the jobs of
    /// a flow id, each held to its weight's share of their I/Os. For closed-loop jobs
    /// (a rate-limited job issues on its schedule).
    fn flow(&mut self, rate: &Rate) -> Result<Option<Flow>, CompatError> {
        let o = self.o;
        let weight = match o.get("flow") {
            None => None,
            Some((v, loc)) => match v.trim().parse::<i64>() {
                Ok(0) => None,
                Ok(w) if w > 0 && matches!(rate, Rate::Iops(_)) => {
                    self.unsupported.push(
                        format!(
                            "flow={v} — with a rate limit: ioscope's rate-limited streams issue \
                             on their schedule and are not held by flow control"
                        ),
                        loc,
                    );
                    None
                }
                Ok(w) if w > 0 => {
                    Some(u32::try_from(w).map_err(|_| opt_err(loc, "flow", v, &"too large"))?)
                }
                Ok(_) => {
                    self.unsupported.push(
                        format!(
                            "flow={v} — a negative weight (fio's older signed flow counter); \
                             fio's weights now are positive"
                        ),
                        loc,
                    );
                    None
                }
                Err(e) => return Err(opt_err(loc, "flow", v, &e)),
            },
        };
        let Some(weight) = weight else {
            if !o.has("flow") {
                self.only_with("flow", &["flow_id", "flow_sleep"]);
            }
            return Ok(None);
        };
        let id = match o.get("flow_id") {
            None => 0,
            Some((v, loc)) => v
                .trim()
                .parse::<u32>()
                .map_err(|e| opt_err(loc, "flow_id", v, &e))?,
        };
        let sleep_ns = match o.get("flow_sleep") {
            None => 0,
            Some((v, loc)) => v
                .trim()
                .parse::<u64>()
                .map_err(|e| opt_err(loc, "flow_sleep", v, &e))?
                .saturating_mul(1000),
        };
        Ok(Some(Flow {
            id,
            weight,
            sleep_ns,
        }))
    }

    /// `startdelay` (seconds unless a unit is given) and `thinktime` (µs unless a
    /// unit is given) with `thinktime_blocks`: a late start, and idle time after
    /// every batch of I/Os once the batch has completed (fio quiesces before it
    /// thinks). `thinktime_spin` is part of the think time, spent busy in fio.
    fn pauses(&mut self, rate: &Rate) -> Result<Pauses, CompatError> {
        let o = self.o;
        let mut p = Pauses::default();
        if let Some((v, loc)) = o.get("startdelay") {
            if v.contains('-') || v.contains(':') {
                self.unsupported.push(
                    format!("startdelay={v} — a random delay from a range (ioscope delays by one fixed time)"),
                    loc,
                );
            } else {
                p.start_delay_ns = parse_duration_ns_allow_zero(v)
                    .map_err(|e| opt_err(loc, "startdelay", v, &e))?;
            }
        }
        let Some((v, loc)) = o.get("thinktime") else {
            self.only_with(
                "thinktime",
                &[
                    "thinktime_blocks",
                    "thinktime_spin",
                    "thinktime_blocks_type",
                    "thinktime_iotime",
                ],
            );
            return Ok(p);
        };
        let think_ns = usec_duration_allow_zero(v).map_err(|e| opt_err(loc, "thinktime", v, &e))?;
        if think_ns == 0 {
            return Ok(p);
        }
        if matches!(rate, Rate::Iops(_)) {
            self.unsupported.push(
                format!(
                    "thinktime={v} — with a rate limit: ioscope's rate-limited streams issue on \
                     their schedule and do not think"
                ),
                loc,
            );
            return Ok(p);
        }
        p.think_ns = think_ns;
        // thinktime_iotime (seconds unless a unit is given): think after that long
        // issuing; alone, it sets the pace (fio skips its default of one block).
        if let Some((t, tl)) = o.get("thinktime_iotime") {
            p.think_io_ns = parse_duration_ns_allow_zero(t)
                .map_err(|e| opt_err(tl, "thinktime_iotime", t, &e))?;
        }
        p.think_every_ios = match count_opt(o, "thinktime_blocks")? {
            Some(n) => u32::try_from(n).map_err(|_| loc.error("thinktime_blocks is too large"))?,
            None if p.think_io_ns > 0 => 0,
            None => 1,
        };
        if let Some((t, tl)) = o.get("thinktime_blocks_type") {
            if !matches!(t.trim(), "complete" | "issue") {
                return Err(opt_err(
                    tl,
                    "thinktime_blocks_type",
                    t,
                    &"expected complete or issue",
                ));
            }
        }
        if let Some((s, sl)) = o.get("thinktime_spin") {
            let spin =
                usec_duration_allow_zero(s).map_err(|e| opt_err(sl, "thinktime_spin", s, &e))?;
            if spin > 0 {
                self.warnings.push(format!(
                    "job '{}': thinktime_spin={s} — fio spends that part of the think time \
                     busy; ioscope's worker waits the whole think time without burning a CPU",
                    self.name
                ));
            }
        }
        Ok(p)
    }

    /// Time and passes: `runtime`, `time_based`, `ramp_time`, `loops`, `io_size`.
    fn timing(
        &mut self,
        size: Option<u64>,
        bs_fixed: Option<u64>,
    ) -> Result<JobTiming, CompatError> {
        let o = self.o;
        let runtime = dur_opt(o, "runtime", false)?;
        // fio drops time_based without a runtime ("requires a runtime"): the job
        // makes its passes.
        let time_based = o.flag("time_based")? && runtime.is_some();
        let warmup_ns = dur_opt(o, "ramp_time", true)?.unwrap_or(0);
        let loops = count_opt(o, "loops")?.unwrap_or(1);
        let mut passes = if time_based { None } else { Some(loops) };
        // io_size: whole passes over size, else a pass of its own length that
        // starts at the region's start each loop, as fio's does.
        let mut pass_bytes = 0;
        if let Some((v, loc)) = o.get("io_size").or_else(|| o.get("io_limit")) {
            let io = match self.in_zones("io_size", v, loc) {
                Some(bytes) => bytes?,
                None => parse_size(v).map_err(|e| opt_err(loc, "io_size", v, &e))?,
            };
            match size {
                Some(s) if io % s == 0 => {
                    if !time_based {
                        passes = Some((io / s).saturating_mul(loops));
                    }
                }
                _ => pass_bytes = io,
            }
        }
        let counted_size = size.filter(|_| pass_bytes == 0);
        let (ios_passes, stop_after_ios) = self.number_ios(counted_size, bs_fixed, passes)?;
        if let Some(p) = ios_passes {
            passes = Some(p);
        }
        if o.flag("time_based")? && runtime.is_none() {
            self.warnings.push(format!(
                "job '{}': time_based without runtime is ignored, as fio ignores it: the \
                 job makes its passes",
                self.name
            ));
        }
        let at = |key: &str| {
            o.get(key)
                .map(|(_, l)| l.clone())
                .unwrap_or(self.section_loc.clone())
        };
        let runtime_text = match runtime {
            Some(r) => format!(
                "runtime={}{}",
                format_duration_ns(r),
                if time_based { " time_based" } else { "" }
            ),
            None => "no runtime".to_string(),
        };
        let runtime_at = at("runtime");
        let ramp_at = at("ramp_time");
        self.run_opts.push(("runtime", runtime_text, runtime_at));
        self.run_opts.push((
            "ramp_time",
            format!("ramp_time={}", format_duration_ns(warmup_ns)),
            ramp_at,
        ));
        Ok(JobTiming {
            duration_ns: runtime,
            passes,
            warmup_ns,
            stop_after_ios,
            pass_bytes,
        })
    }

    /// `number_ios=N`: fio stops each clone after N I/Os if nothing stopped it before
    /// (it never extends the job). With a fixed size and block size, N I/Os that reach
    /// `passes` change nothing and N I/Os that cover the working set a whole number of
    /// times are that many passes; otherwise each stream stops after N I/Os
    /// (`Pauses::stop_after_ios`). Returns (passes, I/O limit).
    fn number_ios(
        &mut self,
        size: Option<u64>,
        bs: Option<u64>,
        passes: Option<u64>,
    ) -> Result<(Option<u64>, u64), CompatError> {
        let Some(n) = count_opt(self.o, "number_ios")? else {
            return Ok((None, 0));
        };
        let (Some(s), Some(b)) = (size, bs) else {
            return Ok((None, n));
        };
        let (bytes, size) = (u128::from(n) * u128::from(b), u128::from(s));
        if passes.is_some_and(|p| bytes >= u128::from(p) * size) {
            Ok((None, 0))
        } else if bytes % size == 0 {
            Ok((Some((bytes / size) as u64), 0))
        } else {
            Ok((None, n))
        }
    }

    /// `latency_target`, `latency_window`, `latency_percentile`: fio's search for the
    /// highest load whose latency percentile stays under the target becomes ioscope's
    /// SLA search (a curve with `max_latency`) over the job's run; each probe runs
    /// for `latency_window` when given, else for the run's duration.
    fn latency_target(
        &mut self,
        duration_ns: Option<u64>,
    ) -> Result<Option<(CurveSpec, Option<u64>)>, CompatError> {
        let o = self.o;
        let Some((target, loc)) = o.get("latency_target") else {
            self.only_with("latency_target", &["latency_window", "latency_percentile"]);
            return Ok(None);
        };
        // fio reads a bare number as microseconds.
        let target_ns =
            usec_duration(target).map_err(|e| opt_err(loc, "latency_target", target, &e))?;
        let window_ns = match o.get("latency_window") {
            Some((w, wl)) => {
                Some(usec_duration(w).map_err(|e| opt_err(wl, "latency_window", w, &e))?)
            }
            None => None,
        };
        let pct = match o.get("latency_percentile") {
            None => "max".to_string(),
            Some((p, pl)) => match p.trim().parse::<f64>() {
                Ok(100.0) => "max".into(),
                Ok(x) if [50.0, 90.0, 95.0, 99.0, 99.9, 99.99].contains(&x) => format!("p{x}"),
                _ => {
                    self.unsupported.push(
                        format!(
                            "latency_percentile={p} — ioscope bounds p50, p90, p95, p99, \
                             p99.9, p99.99 or 100 (max); using max"
                        ),
                        pl,
                    );
                    "max".into()
                }
            },
        };
        if window_ns.is_none() && duration_ns.is_none() {
            self.unsupported.push(
                format!(
                    "latency_target={target} — needs runtime or latency_window (the length \
                     of each probe)"
                ),
                loc,
            );
            return Ok(None);
        }
        self.warnings.push(format!(
            "job '{}': latency_target searches the rate (ioscope's SLA search, open loop) \
             rather than fio's queue depth; the answer is the highest rate whose {pct} \
             stays within {}",
            self.name,
            format_duration_ns(target_ns)
        ));
        let spec = CurveSpec {
            points_pct: Vec::new(),
            stop_latency: None,
            max_latency: Some(format!("{pct}={}ns", target_ns)),
            origin: Some("fio latency_target".into()),
        };
        Ok(Some((spec, window_ns)))
    }

    /// `write_bw_log`, `write_lat_log`, `write_iops_log` (a file prefix; the job name
    /// when empty) and `log_avg_msec` (the run's interval length). Without
    /// `log_avg_msec` fio logs every I/O; ioscope logs one sample per interval (1 s).
    fn fio_logs(&mut self) -> Result<Option<(FioLogs, Option<u64>)>, CompatError> {
        let o = self.o;
        let prefix = |key: &str| {
            o.get(key).map(|(v, _)| {
                if v.trim().is_empty() {
                    self.name.clone()
                } else {
                    v.trim().to_string()
                }
            })
        };
        let logs = FioLogs {
            bw: prefix("write_bw_log"),
            lat: prefix("write_lat_log"),
            iops: prefix("write_iops_log"),
            offset: o.flag("log_offset")?,
            ..Default::default()
        };
        // per_job_logs=0: no job number in the names (0 until group_runs numbers jobs).
        let per_job = o.get("per_job_logs").is_none() || o.flag("per_job_logs")?;
        let avg = match o.get("log_avg_msec") {
            None => None,
            Some((v, loc)) => {
                let ms = v
                    .trim()
                    .parse::<u64>()
                    .map_err(|e| opt_err(loc, "log_avg_msec", v, &e))?;
                (ms > 0).then_some(ms * 1_000_000)
            }
        };
        if logs.is_empty() {
            return Ok(None);
        }
        if avg.is_none() {
            self.warnings.push(format!(
                "job '{}': fio logs every I/O without log_avg_msec; ioscope writes one \
                 averaged sample per direction per interval (1 s)",
                self.name
            ));
        }
        // Clones with files of their own are workloads of their own, each with its logs.
        let one_set = self.clone_files.is_empty();
        if let Some(n) = count_opt(o, "numjobs")?.filter(|&n| n > 1 && one_set) {
            self.warnings.push(format!(
                "job '{}': its {n} clones (numjobs) write one set of logs, over all of \
                 their I/O, numbered as the first clone's; fio writes one set per clone",
                self.name
            ));
        }
        Ok(Some((
            FioLogs {
                job: u32::from(per_job),
                ..logs
            },
            avg,
        )))
    }

    /// `steadystate` (`ss`), `steadystate_duration`, `steadystate_ramp_time`,
    /// `steadystate_check_interval`: the run's steady-state stop, judged by fio's rule
    /// on the run's intervals. `log_avg_msec` is the interval length already when
    /// given (`log_interval_ns`); a different check interval is listed.
    fn steady_stop(
        &mut self,
        log_interval_ns: Option<u64>,
    ) -> Result<Option<(SteadyStop, Option<u64>)>, CompatError> {
        let o = self.o;
        let Some((v, loc)) = o.get("steadystate") else {
            self.only_with(
                "steadystate",
                &[
                    "steadystate_duration",
                    "steadystate_ramp_time",
                    "steadystate_check_interval",
                ],
            );
            self.run_opts.push((
                "steadystate",
                "no steadystate".into(),
                self.section_loc.clone(),
            ));
            return Ok(None);
        };
        self.run_opts
            .push(("steadystate", format!("steadystate={v}"), loc.clone()));
        let (metric, slope, limit, limit_is_pct) =
            SteadyStop::parse_criterion(v).map_err(|e| opt_err(loc, "steadystate", v, &e))?;
        // fio's durations here are seconds unless a unit is given.
        let secs = |key: &str| -> Result<Option<u64>, CompatError> {
            match o.get(key) {
                None => Ok(None),
                Some((x, l)) => parse_duration_ns_allow_zero(x)
                    .map(Some)
                    .map_err(|e| opt_err(l, key, x, &e)),
            }
        };
        let window_ns = secs("steadystate_duration")?.unwrap_or(0);
        let ramp_ns = secs("steadystate_ramp_time")?.unwrap_or(0);
        let mut interval_ns = secs("steadystate_check_interval")?.filter(|&n| n > 0);
        if let (Some(i), Some(l)) = (interval_ns, log_interval_ns) {
            if i != l {
                let (x, l_loc) = o.get("steadystate_check_interval").expect("just read");
                self.unsupported.push(
                    format!(
                        "steadystate_check_interval={x} — differs from log_avg_msec, which \
                         sets the run's interval (ioscope samples once per interval)"
                    ),
                    l_loc,
                );
                interval_ns = None;
            }
        }
        if window_ns == 0 {
            self.warnings.push(format!(
                "job '{}': steadystate={v} without steadystate_duration — fio does not judge \
                 steady state then, and neither does ioscope",
                self.name
            ));
            return Ok(None);
        }
        self.warnings.push(format!(
            "job '{}': steadystate={v} ends the run once the run's total (all its jobs and \
             clones together, as fio with group_reporting) holds it over {}",
            self.name,
            format_duration_ns(window_ns)
        ));
        let spec = SteadyStop {
            metric,
            slope,
            limit,
            limit_is_pct,
            window_ns,
            ramp_ns,
        };
        Ok(Some((spec, interval_ns)))
    }

    /// `stonewall`/`wait_for_previous` (after every job before it) or `wait_for=NAME`
    /// (after that job).
    fn group_start(&self) -> Result<GroupStart, CompatError> {
        let o = self.o;
        if o.flag("stonewall")? || o.flag("wait_for_previous")? {
            return Ok(GroupStart::AfterAll);
        }
        Ok(match o.get("wait_for") {
            Some((w, _)) if !w.trim().is_empty() => GroupStart::After(w.trim().to_string()),
            Some(_) => GroupStart::AfterAll,
            None => GroupStart::Together,
        })
    }

    /// `exitall` and `exit_what` (group, stonewall or all): which jobs end when this
    /// one ends. fio keeps `exitall` in one flag for the whole process, set by any
    /// job that names it (even `exitall=0`), so then every job's end stops its group,
    /// by its own `exit_what`. `exit_what` in a file without `exitall` is listed.
    fn exit_all(&mut self) -> Result<Option<(ExitWhat, Loc)>, CompatError> {
        let own = self.o.flag("exitall")?;
        if !own && !self.exitall_anywhere {
            self.only_with("exitall", &["exit_what"]);
            return Ok(None);
        }
        if !own {
            self.warnings.push(format!(
                "job '{}': exitall of another job (fio's exitall holds for every job of \
                 the file, whichever names it, even as exitall=0): this job's end ends its \
                 run too",
                self.name
            ));
        }
        let loc = self
            .o
            .get("exitall")
            .map(|(_, l)| l.clone())
            .unwrap_or_else(|| self.section_loc.clone());
        let what = match self.o.get("exit_what") {
            None => ExitWhat::Group,
            Some((v, l)) => match v.trim().to_ascii_lowercase().as_str() {
                "group" => ExitWhat::Group,
                "stonewall" => ExitWhat::Stonewall,
                "all" => ExitWhat::All,
                _ => {
                    return Err(opt_err(
                        l,
                        "exit_what",
                        v,
                        &"expected group, stonewall or all",
                    ))
                }
            },
        };
        if what == ExitWhat::All {
            self.warnings.push(format!(
                "job '{}': exitall with exit_what=all — when it ends fio stops every job, \
                 so the runs after its run never start, and ioscope leaves them out",
                self.name
            ));
        }
        Ok(Some((what, loc)))
    }

    /// `cpus_allowed`: the run's CPU set.
    fn cpus(&mut self) -> Result<Option<Vec<usize>>, CompatError> {
        let Some((v, loc)) = self.o.get("cpus_allowed") else {
            return Ok(None);
        };
        let c = parse_cpu_list(v)
            .ok_or_else(|| loc.error(format!("cpus_allowed={v}: expected a list like 0-3,8")))?;
        self.run_opts
            .push(("cpus_allowed", format!("cpus_allowed={v}"), loc.clone()));
        Ok(Some(c))
    }
}

/// Translates `random_distribution`. fio gives one setting per data direction
/// (`zoned:50/5:50/95,90/10:10/90`); a plan has one per workload, so directions that
/// differ are listed as unsupported and the first is used.
fn random_distribution(
    v: &str,
    loc: &Loc,
    stride: bool,
    unsupported: &mut UnsupportedList,
) -> Result<Distribution, CompatError> {
    if let Some(list) = v.trim().strip_prefix("sequence") {
        // sequence:A,B,C lists block indices with commas; not per-direction settings.
        let blocks = sequence_blocks(list)
            .map_err(|m| loc.error(format!("random_distribution={v}: {m}, e.g. sequence:2,0,1")))?;
        return Ok(Distribution::Sequence { blocks, stride });
    }
    let mut parts = v.split(',').map(str::trim).filter(|s| !s.is_empty());
    let first = parts.next().unwrap_or("random");
    let dist = one_distribution(first, v, loc, unsupported)?;
    for other in parts {
        let mut scratch = UnsupportedList::default();
        if one_distribution(other, v, loc, &mut scratch).ok().as_ref() != Some(&dist) {
            unsupported.push(
                format!("random_distribution={v} — per-direction distributions; using '{first}'"),
                loc,
            );
            break;
        }
    }
    Ok(dist)
}

/// The block indices of `:2,0,1` (what follows `sequence`): at most
/// [`FIO_SEQUENCE_MAX`] non-negative integers, as fio takes them.
fn sequence_blocks(list: &str) -> Result<Vec<u64>, String> {
    let Some(list) = list.strip_prefix(':').filter(|l| !l.trim().is_empty()) else {
        return Err("the sequence needs its block indices".into());
    };
    let blocks = list
        .split(',')
        .map(|b| {
            let b = b.trim();
            b.parse::<u64>()
                .map_err(|_| format!("'{b}' is not a block index (a non-negative integer)"))
        })
        .collect::<Result<Vec<u64>, String>>()?;
    if blocks.len() > FIO_SEQUENCE_MAX {
        return Err(format!(
            "{} block indices (fio takes at most {FIO_SEQUENCE_MAX})",
            blocks.len()
        ));
    }
    Ok(blocks)
}

/// The longest sequence fio's `random_distribution=sequence:…` takes.
const FIO_SEQUENCE_MAX: usize = 64;

/// One direction's distribution: `random`, `zipf[:θ[:center]]`, `pareto[:h[:center]]`,
/// `zoned:IO/RANGE:…`, `zoned_abs:IO/SIZE:…`. `normal`/`gauss` are unsupported
/// (uniform used). Values fio itself refuses are errors.
fn one_distribution(
    text: &str,
    whole: &str,
    loc: &Loc,
    unsupported: &mut UnsupportedList,
) -> Result<Distribution, CompatError> {
    let bad = |m: &str| loc.error(format!("random_distribution={whole}: {m}"));
    let (kind, arg) = text.split_once(':').unwrap_or((text, ""));
    let kind = kind.trim().to_ascii_lowercase();
    // zipf and pareto take "value[:center]"; a centre other than 0 moves the hot
    // spot, which the model does not express.
    let mut value_and_center = |default: f64| -> Result<f64, CompatError> {
        let mut it = arg.split(':').map(str::trim);
        let value = match it.next() {
            None | Some("") => default,
            Some(s) => s
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| bad(&format!("'{s}' is not a number")))?,
        };
        if let Some(c) = it.next() {
            let center = c
                .parse::<f64>()
                .ok()
                .filter(|x| (0.0..=1.0).contains(x))
                .ok_or_else(|| bad(&format!("centre '{c}' is not between 0 and 1")))?;
            if center != 0.0 {
                unsupported.push(
                    format!(
                        "random_distribution={whole} — centre {c} shifts the hot spot; \
                         ioscope keeps it at rank 0"
                    ),
                    loc,
                );
            }
        }
        if it.next().is_some() {
            return Err(bad("too many ':' values"));
        }
        Ok(value)
    };
    match kind.as_str() {
        "random" if arg.is_empty() => Ok(Distribution::Uniform),
        // fio's defaults when no value is given: zipf 1.1, pareto 0.2.
        "zipf" => {
            let theta = value_and_center(1.1)?;
            if theta <= 0.0 || theta == 1.0 {
                return Err(bad("zipf theta must be positive and not 1.0"));
            }
            Ok(Distribution::Zipf { theta })
        }
        "pareto" => {
            let h = value_and_center(0.2)?;
            if h <= 0.0 || h >= 1.0 {
                return Err(bad("pareto h must be between 0 and 1"));
            }
            Ok(Distribution::Pareto { h })
        }
        "zoned" => Ok(Distribution::Zoned {
            bands: parse_zoned(arg).map_err(|e| bad(&e.to_string()))?,
        }),
        "zoned_abs" => crate::plan::units::parse_dist(&format!("zoned_abs:{arg}"))
            .map_err(|e| bad(&e.to_string())),
        "normal" | "gauss" => {
            unsupported.push(format!("random_distribution={whole}"), loc);
            Ok(Distribution::Uniform)
        }
        _ => Err(bad(
            "expected random, zipf, pareto, normal, zoned or zoned_abs",
        )),
    }
}

/// Why a percentage split (`random_distribution=zoned:…`, `bssplit=…`) was refused;
/// the caller locates it (file and line or argument, and the option).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum SplitError {
    /// An entry's percentage that is not a number from 0 to 100 (`part` is the entry).
    #[error("'{text}' in '{part}' is not a percentage")]
    ZonePct { text: String, part: String },
    #[error("zoned needs IO%/RANGE% entries, e.g. zoned:60/10:30/20:10/70")]
    NoZones,
    /// The given percentages of `what` ("I/O", "range") exceed 100.
    #[error("{what} percentages add up to {given}, more than 100")]
    ZoneOver { what: &'static str, given: f64 },
    #[error("I/O percentages add up to {total}, not 100")]
    IoTotal { total: f64 },
    #[error("a band with I/O has an empty range")]
    EmptyRange,
    /// A block size that does not parse.
    #[error(transparent)]
    Size(#[from] crate::plan::units::UnitError),
    /// A block size's weight that is not a whole percentage.
    #[error("'{0}' is not a percentage")]
    Weight(String),
    #[error("empty split")]
    Empty,
    #[error("percentages add up to {0}, more than 100")]
    WeightOver(u32),
    #[error("every percentage is zero")]
    AllZero,
}

/// Parses fio's zoned split `60/10:30/20:10/70`: each entry sends its percentage of
/// the I/O to the next percentage of the range. As in fio, entries without a number
/// share what the others leave, the I/O must add up to 100, and a range that adds up
/// to less than 100 leaves the rest of the working set untouched (an extra band with
/// no I/O here).
fn parse_zoned(arg: &str) -> Result<Vec<Zone>, SplitError> {
    let mut raw: Vec<(Option<f64>, Option<f64>)> = Vec::new();
    for part in arg.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let (io, range) = part.split_once('/').unwrap_or((part, ""));
        let num = |s: &str| -> Result<Option<f64>, SplitError> {
            let s = s.trim();
            if s.is_empty() {
                return Ok(None);
            }
            match s.parse::<f64>() {
                Ok(x) if x.is_finite() && (0.0..=100.0).contains(&x) => Ok(Some(x)),
                _ => Err(SplitError::ZonePct {
                    text: s.to_string(),
                    part: part.to_string(),
                }),
            }
        };
        raw.push((num(io)?, num(range)?));
    }
    if raw.is_empty() {
        return Err(SplitError::NoZones);
    }
    let fill = |vals: Vec<Option<f64>>, what: &'static str| -> Result<Vec<f64>, SplitError> {
        let given: f64 = vals.iter().flatten().sum();
        if given > 100.0 + 1e-9 {
            return Err(SplitError::ZoneOver { what, given });
        }
        let blanks = vals.iter().filter(|v| v.is_none()).count();
        let share = if blanks > 0 {
            (100.0 - given) / blanks as f64
        } else {
            0.0
        };
        Ok(vals.into_iter().map(|v| v.unwrap_or(share)).collect())
    };
    let io = fill(raw.iter().map(|r| r.0).collect(), "I/O")?;
    let range = fill(raw.iter().map(|r| r.1).collect(), "range")?;
    let io_total: f64 = io.iter().sum();
    if (io_total - 100.0).abs() > 0.01 {
        return Err(SplitError::IoTotal { total: io_total });
    }
    let mut bands: Vec<Zone> = io
        .into_iter()
        .zip(range)
        .filter(|&(_, r)| r > 0.0)
        .map(|(io_pct, range_pct)| Zone { io_pct, range_pct })
        .collect();
    let io_in_bands: f64 = bands.iter().map(|b| b.io_pct).sum();
    if (io_in_bands - 100.0).abs() > 0.01 {
        return Err(SplitError::EmptyRange);
    }
    let range_total: f64 = bands.iter().map(|b| b.range_pct).sum();
    if range_total < 100.0 - 0.01 {
        bands.push(Zone {
            io_pct: 0.0,
            range_pct: 100.0 - range_total,
        });
    }
    Ok(bands)
}

/// Translates `rate_iops=R[,W]` (per job, per direction; one value caps both), or
/// `rate=R[,W]` in bytes per second when `bytes_per_io` is the job's one block size
/// (the cap in IOPS is then bytes / block size). A pure read or write job takes its
/// direction's cap. In a mix fio caps reads and writes separately; when the caps are
/// in the mix's own proportion (`R×100 = read_pct × (R+W)`) they are a cap on the
/// total, which the plan can express (with a warning about pacing); otherwise the job
/// runs unthrottled and the option is listed.
#[allow(clippy::too_many_arguments)]
fn rate_caps(
    key: &str,
    v: &str,
    loc: &Loc,
    name: &str,
    read_pct: u8,
    numjobs: u64,
    bytes_per_io: Option<u64>,
    unsupported: &mut UnsupportedList,
    warnings: &mut Vec<String>,
) -> Result<Rate, CompatError> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let cap = |s: &str| -> Result<Option<f64>, CompatError> {
        // Empty, or 0 (fio's own default: "no limit"): this direction is not capped.
        if s.is_empty() || s.trim_start_matches('0').is_empty() {
            return Ok(None);
        }
        let n = match bytes_per_io {
            None => parse_count(s).map(|n| n as f64),
            Some(bs) => parse_size(s).map(|b| b as f64 / bs as f64),
        };
        n.map(Some)
            .map_err(|e| loc.error(format!("{key}={v}: {e}")))
    };
    if parts.len() > 3 {
        return Err(loc.error(format!("{key}={v}: at most read,write,trim")));
    }
    // A value not followed by a comma applies to the later directions too.
    let reads = cap(parts[0])?;
    let writes = match parts.get(1) {
        Some(w) => cap(w)?,
        None => reads,
    };
    let total = |per_job: f64| Rate::Iops(per_job * numjobs as f64);
    let in_proportion =
        |r: f64, w: f64| (r * 100.0 - f64::from(read_pct) * (r + w)).abs() <= 1e-9 * (r + w);
    match (read_pct, reads, writes) {
        (100, Some(r), _) => Ok(total(r)),
        (0, _, Some(w)) => Ok(total(w)),
        (100, None, _) | (0, _, None) | (_, None, None) => Ok(Rate::Max),
        (_, Some(r), Some(w)) if in_proportion(r, w) => {
            warnings.push(format!(
                "job '{name}': {key}={v} caps reads and writes separately in fio; \
                 they match rwmixread={read_pct}, so ioscope caps the total at {} IOPS \
                 per job and chooses each I/O's direction by the mix (reads and writes \
                 are not paced separately)",
                r + w
            ));
            Ok(total(r + w))
        }
        _ => {
            unsupported.push(
                format!(
                    "{key}={v} — fio caps reads and writes separately in a mix, not in \
                     the {read_pct}/{} proportion of rwmixread; running unthrottled",
                    100 - read_pct
                ),
                loc,
            );
            Ok(Rate::Max)
        }
    }
}

/// fio's time options without a unit are microseconds (`latency_target=500` is
/// 500 µs).
fn usec_duration(v: &str) -> Result<u64, UsecError> {
    let t = v.trim();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
        // All digits: only too many of them fails to parse.
        let us: u64 = t.parse().map_err(|_| UsecError::Range)?;
        return us
            .checked_mul(1000)
            .filter(|&ns| ns > 0)
            .ok_or(UsecError::Range);
    }
    Ok(parse_duration_ns(t)?)
}

/// As [`usec_duration`], but 0 is allowed (fio's "off").
fn usec_duration_allow_zero(v: &str) -> Result<u64, UsecError> {
    if v.trim().chars().all(|c| c == '0') && !v.trim().is_empty() {
        return Ok(0);
    }
    usec_duration(v)
}

/// Splits fio's `:`-separated filename list (`\:` escapes a colon); a list of no
/// names is the text itself.
fn split_filenames(f: &str) -> Vec<String> {
    let mut out = crate::plan::fileset::split_list(f);
    if out.is_empty() {
        out.push(f.to_string());
    }
    out
}

fn pct(v: &str) -> Option<u8> {
    let n: u8 = v.trim().parse().ok()?;
    (n <= 100).then_some(n)
}

fn count_opt(o: &Opts, key: &str) -> Result<Option<u64>, CompatError> {
    match o.get(key) {
        None => Ok(None),
        Some((v, loc)) => parse_count(v)
            .map(Some)
            .map_err(|e| loc.error(format!("{key}={v}: {e}"))),
    }
}

fn dur_opt(o: &Opts, key: &str, allow_zero: bool) -> Result<Option<u64>, CompatError> {
    match o.get(key) {
        None => Ok(None),
        Some((v, loc)) => {
            let r = if allow_zero {
                parse_duration_ns_allow_zero(v)
            } else {
                parse_duration_ns(v)
            };
            r.map(Some)
                .map_err(|e| loc.error(format!("{key}={v}: {e}")))
        }
    }
}

/// Parses one direction's `4k/50:64k/50` (fio's bssplit). Entries without a
/// percentage share what the others leave.
fn parse_one_bssplit(s: &str) -> Result<Vec<(u64, u32)>, SplitError> {
    let mut entries: Vec<(u64, Option<u32>)> = Vec::new();
    for part in s.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let (size, p) = match part.split_once('/') {
            Some((a, b)) => (a, Some(b.trim())),
            None => (part, None),
        };
        let bytes = parse_size(size)?;
        let weight = match p {
            None | Some("") => None,
            Some(p) => Some(
                p.parse::<u32>()
                    .ok()
                    .filter(|&w| w <= 100)
                    .ok_or_else(|| SplitError::Weight(p.to_string()))?,
            ),
        };
        entries.push((bytes, weight));
    }
    if entries.is_empty() {
        return Err(SplitError::Empty);
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    if given > 100 {
        return Err(SplitError::WeightOver(given));
    }
    let blanks = entries.iter().filter(|e| e.1.is_none()).count() as u32;
    let share = (100 - given).checked_div(blanks).unwrap_or(0);
    let mut out: Vec<(u64, u32)> = Vec::new();
    for (b, w) in entries {
        let w = w.unwrap_or(share);
        if w == 0 {
            continue;
        }
        match out.iter_mut().find(|e| e.0 == b) {
            Some(e) => e.1 += w,
            None => out.push((b, w)),
        }
    }
    if out.is_empty() {
        return Err(SplitError::AllZero);
    }
    Ok(out)
}

/// The drop for an engine ioscope lacks. Network and object-store engines (rbd,
/// rados, http, gfapi…) name no local file: the plan left measures one named after
/// the job.
fn unknown_engine(name: &str) -> String {
    format!(
        "ioengine={name} — not an engine ioscope has; what is left runs on a local file \
         named after the job (give what to measure with --target)"
    )
}

#[cfg(test)]
mod tests {
    use super::fio_options::Effect;
    use super::*;
    use crate::plan::settings::declared::EXIT_ALL;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn parse(text: &str) -> Result<Translated, CompatError> {
        parse_str("t.fio", text, Path::new("."), &no_env)
    }

    /// Jobs of one run that share a name (fio allows it, and a job split per clone
    /// makes `a.0`, `a.1`) become workloads with names of their own, and it is said.
    #[test]
    fn jobs_sharing_a_name_become_workloads_named_apart() {
        let t =
            parse("[global]\ndirectory=/tmp/d\nsize=64k\nrw=read\n[a]\nnumjobs=2\n[a.1]\n[a]\n")
                .unwrap();
        let names: Vec<&str> = (t.plan.runs[0].workloads.iter())
            .map(|w| w.name.as_str())
            .collect();
        assert_eq!(names, ["a.0", "a.1", "a.1-2", "a"]);
        let said = |n: &str| t.plan.warnings.iter().any(|w| w.contains(n));
        assert!(
            said("its workload is named 'a.1-2'"),
            "{:?}",
            t.plan.warnings
        );
        let back = crate::plan::emit::to_toml(&t.plan).unwrap();
        let back = crate::plan::jobfile::parse("back.toml", &back).unwrap();
        assert_eq!(back.runs[0].workloads.len(), 4);
    }

    /// Per-job logs in a group: each job's logs are its workload's own, numbered as
    /// fio numbers jobs (clones count); the first log_avg_msec sets the interval and
    /// a later, different one is listed.
    #[test]
    fn per_job_logs_are_the_workloads_own_and_numbered_as_fio_numbers_jobs() {
        let t = parse(
            "[global]\nfilename=/tmp/x\nsize=1m\n[a]\nnumjobs=3\nrw=read\n\
             [b]\nrw=write\nwrite_bw_log=bee\nlog_avg_msec=250\n\
             [c]\nwrite_iops_log\nlog_avg_msec=250\nlog_offset=1\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let r = &t.plan.runs[0];
        assert!(r.fio_logs.is_none());
        assert_eq!(r.interval_ns, 250_000_000);
        let logs: Vec<_> = r
            .workloads
            .iter()
            .map(|w| w.overrides.fio_logs.clone())
            .collect();
        assert_eq!(logs[0], None);
        let b = logs[1].as_ref().unwrap();
        assert_eq!((b.bw.as_deref(), b.job), (Some("bee"), 4));
        let c = logs[2].as_ref().unwrap();
        assert_eq!((c.iops.as_deref(), c.job, c.offset), (Some("c"), 5, true));
        // A later job's other averaging time is listed; the first one's stays.
        let t = parse(
            "[global]\nfilename=/tmp/x\nsize=1m\n[a]\nwrite_lat_log=a\nlog_avg_msec=500\n\
             [b]\nwrite_lat_log=b\nlog_avg_msec=100\n",
        )
        .unwrap();
        assert_eq!(t.unsupported.len(), 1, "{:?}", t.unsupported);
        assert!(t.unsupported[0]
            .option
            .starts_with("log_avg_msec=100 of job 'b'"));
        let r = &t.plan.runs[0];
        assert_eq!(r.interval_ns, 500_000_000);
        assert_eq!(r.workloads[0].overrides.fio_logs.as_ref().unwrap().job, 1);
        assert_eq!(r.workloads[1].overrides.fio_logs.as_ref().unwrap().job, 2);
        // per_job_logs=0: no numbers (job 0: appended to one file per name).
        let t = parse(
            "[global]\nfilename=/tmp/x\nsize=1m\nper_job_logs=0\nwrite_iops_log=x\n\
             log_avg_msec=500\n[a]\n[b]\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        for w in &t.plan.runs[0].workloads {
            assert_eq!(w.overrides.fio_logs.as_ref().unwrap().job, 0);
        }
    }

    /// The option names the translator asks about while resolving every job of
    /// `text`.
    fn asked(text: &str) -> BTreeSet<String> {
        let mut lexed = Lexed::default();
        let at = Lexing {
            source: "t.fio",
            base_dir: Path::new("."),
            env: &no_env,
            depth: 0,
        };
        lex_ini(&at, text, &[], &mut lexed).unwrap();
        let items = lexed.items;
        let mut names = BTreeSet::new();
        let (mut un, mut warnings) = (UnsupportedList::default(), Vec::new());
        for (section, loc, mut opts) in group_jobs(items).unwrap() {
            opts.read_units(&mut warnings).unwrap();
            let mut job = JobCx::new(&section, &loc, &opts, &mut un, &mut warnings)
                .resolve()
                .unwrap();
            random_map::fit(&mut job, &opts, &mut warnings).unwrap();
            names.extend(opts.asked.borrow().iter().cloned());
        }
        names
    }

    #[test]
    fn verify_pattern_and_interval_are_the_plans_pattern_and_unit() {
        let t = parse(
            "[global]\nfilename=/tmp/x\nsize=1m\nverify=crc32c\nverify_interval=1k\n\
             [a]\nverify_pattern=0x0102\"ab\"\n[b]\nverify_pattern=7\n\
             [c]\nstonewall\nverify_interval=3000\n",
        )
        .unwrap();
        // Jobs with different patterns carry their own; one with none has none.
        assert_eq!(t.plan.data.pattern, None);
        assert_eq!(t.plan.data.dedup_unit_bytes, Some(1024));
        let own = |r: usize, w: usize| {
            let d = &t.plan.runs[r].workloads[w].overrides.data;
            d.pattern.as_ref().map(|p| p.bytes().to_vec())
        };
        assert_eq!(own(0, 0), Some(vec![1, 2, b'a', b'b']));
        assert_eq!(own(0, 1), Some(vec![7]));
        assert_eq!(own(1, 0), None);
        let listed: Vec<&str> = t.unsupported.iter().map(|u| u.option.as_str()).collect();
        assert_eq!(listed.len(), 2, "{listed:?}");
        assert!(listed[0].starts_with("verify_interval=3000 — ioscope's verify unit is a power"));
        assert!(
            listed[1].starts_with("no verify_interval in job 'c'"),
            "{listed:?}"
        );
    }

    #[test]
    fn dedupe_working_set_is_a_share_of_the_jobs_size() {
        let t = parse(
            "[a]\nfilename=/tmp/x\nsize=64m\ndedupe_percentage=50\ndedupe_mode=working_set\n\
             dedupe_working_set_percentage=25\n[b]\nfilename=/tmp/y\nsize=8m\n\
             dedupe_mode=working_set\ndedupe_global=1\n\
             [c]\nfilename=/tmp/z\ndedupe_global=1\n",
        )
        .unwrap();
        let set = |w: usize| t.plan.runs[0].workloads[w].overrides.data.dedup_set;
        assert_eq!(set(0).map(|s| (s.bytes, s.global)), Some((16 << 20, false)));
        // fio's default share is 5 %.
        assert_eq!(
            set(1).map(|s| (s.bytes, s.global)),
            Some(((8 << 20) / 20, true))
        );
        assert_eq!(set(2), None);
        let listed: Vec<&str> = t.unsupported.iter().map(|u| u.option.as_str()).collect();
        assert_eq!(
            listed,
            ["dedupe_global=1 — only used with dedupe_mode=working_set"]
        );
        let e = parse("[a]\nsize=1m\ndedupe_mode=fancy\n").unwrap_err();
        assert!(
            e.to_string().contains("expected repeat or working_set"),
            "{e}"
        );
    }

    #[test]
    fn number_ios_short_of_a_pass_is_a_per_stream_io_limit() {
        let t = parse(
            "[a]\nfilename=/tmp/x\nsize=1m\nbs=4k\nnumjobs=2\nnumber_ios=100\n\
             [b]\nstonewall\nfilename=/dev/sdz\nbssplit=4k/50:8k/50\nnumber_ios=7\n\
             [c]\nstonewall\nfilename=/tmp/x\nsize=1m\nbs=4k\nnumber_ios=256\nloops=3\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let ios = |r: usize| t.plan.runs[r].workloads[0].pauses.stop_after_ios;
        // Two clones, each over the whole file (`whole`): each stream's 100 I/Os stop
        // it before its pass of 256 is done.
        assert_eq!((ios(0), t.plan.runs[0].passes), (100, Some(1)));
        assert_eq!(t.plan.runs[0].workloads[0].seq_layout, SeqLayout::Whole);
        assert_eq!(ios(1), 7, "no size or one block size: a count all the same");
        // 256 × 4k is one whole pass of 1m: a pass limit, no count.
        assert_eq!((ios(2), t.plan.runs[2].passes), (0, Some(1)));
    }

    /// fio's guides name a job's file with `filename_format` (and a directory in it);
    /// `file_append=0` is fio's default. Both translate with nothing dropped.
    #[test]
    fn filename_format_names_a_jobs_one_file_and_file_append_0_is_the_default() {
        let t = parse(
            "[global]\ndirectory=/mnt/t\nsize=1m\nfile_append=0\n\
             [a]\nfilename_format=$jobname/f.$jobnum.$filenum\nnumjobs=2\n\
             [b]\nstonewall\nfilename_format=shared.$filenum\nnumjobs=2\n\
             [c]\nstonewall\nfilename=/tmp/x\nfilename_format=other.$jobnum\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let uris: Vec<&str> = t.plan.targets.iter().map(|x| x.uri.as_str()).collect();
        // a's clones have a file each ($jobnum): a workload each.
        assert_eq!(
            uris,
            [
                "/mnt/t/a/f.0.0",
                "/mnt/t/a/f.1.0",
                "/mnt/t/shared.0",
                "/tmp/x"
            ]
        );
        let names: Vec<&str> = t.plan.runs[0]
            .workloads
            .iter()
            .map(|w| w.name.as_str())
            .collect();
        assert_eq!(
            (names, t.plan.runs[0].name.as_str()),
            (vec!["a.0", "a.1"], "a")
        );
        let said = |needle: &str| t.plan.warnings.iter().any(|w| w.contains(needle));
        // fio makes a/ under /mnt/t when the job starts; so does the run.
        assert!(t.plan.targets.iter().all(|x| x.create_dirs));
        assert!(!said("its own file"), "{:?}", t.plan.warnings);
        assert!(
            !said("'b': fio gives each"),
            "b's clones share one file, as in fio"
        );
        assert!(said("filename_format=other.$jobnum is ignored"));
        let bad = parse("[a]\nsize=1m\nfilename_format=$host.x\n").unwrap_err();
        assert!(bad.to_string().contains("ioscope knows $jobname"), "{bad}");
        let t = parse("[a]\nfilename=/tmp/x\nsize=1m\nfile_append=1\n").unwrap();
        assert!(t
            .unsupported
            .iter()
            .any(|u| u.option.starts_with("file_append")));
    }

    #[test]
    fn io_size_short_of_a_pass_is_a_pass_of_its_own_length() {
        let t = parse(
            "[a]\nfilename=/tmp/x\nsize=48k\nio_size=24k\nbs=4k\n\
             [b]\nstonewall\nfilename=/tmp/x\nsize=48k\nio_size=72k\nbs=4k\nnumber_ios=10\n\
             [c]\nstonewall\nfilename=/tmp/x\nsize=48k\nio_size=96k\nbs=4k\nnumjobs=2\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let w = |r: usize| &t.plan.runs[r].workloads[0].pauses;
        // Half a pass: one pass of 24k bytes.
        assert_eq!(
            (w(0).pass_bytes, t.plan.runs[0].passes),
            (24 << 10, Some(1))
        );
        // 1.5 passes: one pass of 72k, and number_ios's 10 I/Os stop it first.
        assert_eq!((w(1).pass_bytes, w(1).stop_after_ios), (72 << 10, 10));
        // A whole multiple of size: passes, no pass length of its own. Two clones of
        // two passes each, each over the whole file (`whole`).
        assert_eq!((w(2).pass_bytes, t.plan.runs[2].passes), (0, Some(2)));
    }

    #[test]
    fn the_translator_reads_exactly_the_options_the_table_maps() {
        // Two jobs between them take every branch that reads an option (rwmixread
        // before rwmixwrite, bssplit before bs, io_size before io_limit, a replay
        // without a filename for replay_redirect).
        let asked = asked(
            "[a]\nfilename=/tmp/x\nsize=1m\nrw=randrw\nrwmixread=70\nbssplit=4k/50:8k/50\n\
             io_size=2m\n\
             [b]\nsize=1m\nrw=randrw\nrwmixwrite=30\nbs=4k\nio_limit=2m\n\
             read_iolog=/nonexistent.iolog\n",
        );
        let maps: BTreeSet<String> = fio_options::OPTIONS
            .iter()
            .filter(|o| {
                matches!(
                    o.effect,
                    Effect::Maps(_) | Effect::Sets(_) | Effect::SetsAs(..)
                )
            })
            .map(|o| o.name.to_string())
            .collect();
        let unmapped: Vec<_> = asked.difference(&maps).collect();
        assert!(
            unmapped.is_empty(),
            "read but not in the table as mapped: {unmapped:?}"
        );
        let unread: Vec<_> = maps.difference(&asked).collect();
        assert!(
            unread.is_empty(),
            "mapped in the table but never read: {unread:?}"
        );
    }

    #[test]
    fn every_option_fio_output_writes_is_one_the_table_maps() {
        let plan = parse(
            "[j]\nfilename=/tmp/x\nsize=1m\nrw=randrw\nbssplit=4k/50:8k/50\n\
                          rate_iops=100\nruntime=5\ntime_based\nramp_time=1\n\
                          cpus_allowed=0\n[k]\nstonewall\nfilename=/tmp/x\nloops=2\n",
        )
        .unwrap()
        .plan;
        let text = crate::plan::emit::to_fio(&plan).unwrap();
        for line in text
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with([';', '[']))
        {
            let key = line.split('=').next().unwrap_or(line);
            let known = fio_options::lookup(key).map(|o| o.effect);
            assert!(
                matches!(
                    known,
                    Some(
                        Effect::Maps(_)
                            | Effect::Sets(_)
                            | Effect::SetsAs(..)
                            | Effect::NoEffect(_)
                    )
                ),
                "to_fio writes '{key}', which the table does not map: {known:?}"
            );
        }
    }

    /// Each job of one run keeps its own workload settings.
    #[test]
    fn jobs_of_one_run_keep_their_own_settings() {
        let t = parse(
            "[global]\nfilename=/tmp/x\nsize=64m\nioengine=io_uring\nruntime=2\ntime_based\n\
             [reader]\nrw=randread\nbs=4k\niodepth=4\nrate_iops=2000\nstartdelay=500ms\n\
             [writer]\nrw=write\nbs=64k\niodepth=16\noffset=32m\nsize=16m\n\
             thinktime=100\nthinktime_blocks=8\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let run = &t.plan.runs[0];
        let (r, w) = (&run.workloads[0], &run.workloads[1]);
        assert_eq!(
            (r.bs.single(), r.qd, r.rate, r.read_pct),
            (Some(4096), 4, Rate::Iops(2000.0), 100)
        );
        assert_eq!(r.pauses.start_delay_ns, 500_000_000);
        assert_eq!(
            (w.bs.single(), w.qd, w.rate, w.read_pct),
            (Some(65536), 16, Rate::Max, 0)
        );
        assert_eq!((w.offset_bytes, w.size_bytes), (32 << 20, Some(16 << 20)));
        assert_eq!((w.pauses.think_ns, w.pauses.think_every_ios), (100_000, 8));
    }

    /// wait_for=NAME: jobs waiting for the same job start together, in the run after
    /// its run; waiting for a job of the last run starts a new one; an unknown
    /// waitee is listed and the job starts after all.
    #[test]
    fn wait_for_groups_jobs_that_wait_for_the_same_finished_job() {
        let t = parse(
            "[global]\nfilename=/tmp/x\nsize=1m\n[a]\n[b]\nwait_for=a\n[c]\nwait_for=a\n\
             [d]\nwait_for=c\n[e]\nwait_for=nobody\n",
        )
        .unwrap();
        let runs: Vec<Vec<&str>> = t
            .plan
            .runs
            .iter()
            .map(|r| r.workloads.iter().map(|w| w.name.as_str()).collect())
            .collect();
        assert_eq!(runs, [vec!["a"], vec!["b", "c"], vec!["d"], vec!["e"]]);
        assert_eq!(t.unsupported.len(), 1, "{:?}", t.unsupported);
        assert!(t.unsupported[0].option.starts_with("wait_for=nobody"));
        // A job that waits for nothing starts with the first run since the last
        // stonewall (fio starts it at once); one waiting for a job of an earlier run
        // starts in the run after that job's; a stonewall starts after all.
        let t = parse(
            "[global]\nfilename=/tmp/x\nsize=1m\n[a]\n[b]\nwait_for=a\n[c]\nwait_for=b\n\
             [d]\n[e]\nwait_for=a\n[f]\nstonewall\n[g]\n",
        )
        .unwrap();
        let runs: Vec<Vec<&str>> = t
            .plan
            .runs
            .iter()
            .map(|r| r.workloads.iter().map(|w| w.name.as_str()).collect())
            .collect();
        assert_eq!(
            runs,
            [vec!["a", "d"], vec!["b", "e"], vec!["c"], vec!["f", "g"]]
        );
    }

    // fio cuts each job-file line at its first `;` or `#` (`strip_blank_end`), with
    // or without a space before; `8KiB` is 8000 bytes in fio (kb_base=1024).
    #[test]
    fn comments_end_a_value_and_units_are_read_as_fio_reads_them() {
        let t = parse("[j]\nfilename=/tmp/x\nbs=8KiB; no. of bytes\nsize=1m#total\n").unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let w = &t.plan.runs[0].workloads[0];
        assert_eq!((w.bs.max_bytes(), w.size_bytes), (8000, Some(1 << 20)));
        assert!(
            t.plan.warnings.iter().any(|n| n.contains("bs=8KiB → 8000")),
            "{:?}",
            t.plan.warnings
        );
    }

    // kb_base=1000 turns fio's units round (k… powers of 1000, KiB… of 1024); the
    // engine names fio takes for libaio (`aio…`, `linuxaio…`); bs with more than
    // three values keeps the first three; nowait=0 is fio's default.
    #[test]
    fn kb_base_engine_aliases_and_long_bs_lists_read_as_fio_reads_them() {
        let t = parse(
            "[global]\nkb_base=1000\n[j]\nfilename=/tmp/x\nsize=2GiB\nbs=64k\nioengine=aiolib\n\
             nowait=0\nunit_base=8\nclocksource=gettimeofday\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let w = &t.plan.runs[0].workloads[0];
        assert_eq!((w.bs.max_bytes(), w.size_bytes), (64_000, Some(2 << 30)));
        assert_eq!(t.plan.runs[0].engine, EngineKind::Uring);
        // A path is text: no units read there.
        let t = parse("[j]\nkb_base=1000\ndirectory=/mnt/4k\nsize=1m\n").unwrap();
        let uri = &t.plan.targets[0].uri;
        assert!(uri.starts_with("/mnt/4k/"), "{uri}");
        let t = parse("[j]\nfilename=/tmp/x\nsize=1m\nbs=4k,8k,8k,16k,32k\nrw=randrw\n").unwrap();
        assert_eq!(t.plan.runs[0].workloads[0].bs.max_bytes(), 8192);
        assert!(t.plan.warnings.iter().any(|w| w.contains("first three")));
        let t = parse("[j]\nfilename=/tmp/x\nsize=1m\nnowait=1\n").unwrap();
        assert!(t
            .unsupported
            .iter()
            .any(|u| u.option.starts_with("nowait=1")));
        let e = parse("[j]\nfilename=/tmp/x\nkb_base=2\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("kb_base=2: fio takes 1000 or 1024"), "{e}");
    }

    /// thinktime_iotime: seconds unless a unit is given; alone it paces the thinking
    /// (no count), with thinktime_blocks whichever comes first.
    #[test]
    fn thinktime_iotime_paces_thinking_by_io_time() {
        let p = |extra: &str| {
            let t = parse(&format!("[j]\nfilename=/tmp/x\nthinktime=1s\n{extra}")).unwrap();
            assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
            t.plan.runs[0].workloads[0].pauses
        };
        let alone = p("thinktime_iotime=9\n");
        assert_eq!(
            (alone.think_io_ns, alone.think_every_ios),
            (9_000_000_000, 0)
        );
        assert_eq!(alone.think_batch(), None);
        let both = p("thinktime_iotime=250ms\nthinktime_blocks=16\n");
        assert_eq!(
            (both.think_io_ns, both.think_batch()),
            (250_000_000, Some(16))
        );
        assert_eq!(p("").think_batch(), Some(1));
    }

    #[test]
    fn readonly_refuses_a_job_that_writes_or_trims() {
        for rw in ["write", "randrw", "trim", "randtrimwrite"] {
            let e = parse(&format!("[j]\nfilename=/tmp/x\nrw={rw}\nreadonly\n")).unwrap_err();
            assert!(e.to_string().contains("readonly: job 'j'"), "{rw}: {e}");
        }
        let t = parse("[j]\nfilename=/tmp/x\nrw=randread\nreadonly\n").unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
    }

    #[test]
    fn guides_buffer_and_hint_options_are_said_not_dropped() {
        let t = parse(
            "[j]\nfilename=/tmp/x\nrw=randwrite\nrefill_buffers\nscramble_buffers=1\n\
             allrandrepeat=1\nfadvise_hint=0\nioengine=windowsaio\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let w = t.plan.warnings.join("\n");
        assert!(
            w.contains("fadvise_hint=0") && w.contains("windowsaio"),
            "{w}"
        );
        // fio's same buffer written again and again is not what ioscope writes.
        let t = parse("[j]\nfilename=/tmp/x\nrw=write\nscramble_buffers=0\n").unwrap();
        assert_eq!(t.unsupported.len(), 1, "{:?}", t.unsupported);
    }

    #[test]
    fn randrepeat_0_draws_a_seed_for_every_run_unless_randseed_fixes_it() {
        use crate::plan::settings::declared::FRESH_SEED;
        let t = parse("[j]\nfilename=/tmp/x\nrw=randread\nrandrepeat=0\n").unwrap();
        assert!(t.plan.runs[0].settings.flag(&FRESH_SEED));
        assert!(t.plan.warnings.iter().any(|w| w.contains("randrepeat=0")));
        let t = parse("[j]\nfilename=/tmp/x\nrw=randread\nrandrepeat=0\nrandseed=7\n").unwrap();
        assert!(!t.plan.runs[0].settings.flag(&FRESH_SEED));
        assert_eq!(t.plan.runs[0].seed, 7);
        let t = parse("[j]\nfilename=/tmp/x\nrw=randread\n").unwrap();
        assert!(!t.plan.runs[0].settings.flag(&FRESH_SEED));
    }

    #[test]
    fn a_rate_of_zero_is_no_limit_as_in_fio() {
        for opt in ["rate_iops=0", "rate=0", "rate_iops=0,0", "rate_iops=00"] {
            let t = parse(&format!("[j]\nfilename=/tmp/x\nrw=randrw\n{opt}\n")).unwrap();
            assert_eq!(t.plan.runs[0].workloads[0].rate, Rate::Max, "{opt}");
            assert!(t.unsupported.is_empty(), "{opt}: {:?}", t.unsupported);
        }
        // Reads capped, writes not: fio paces only the reads; not reproducible.
        let t = parse("[j]\nfilename=/tmp/x\nrw=randrw\nrate_iops=100,0\n").unwrap();
        assert_eq!(t.plan.runs[0].workloads[0].rate, Rate::Max);
        assert!(!t.unsupported.is_empty());
    }

    #[test]
    fn bandwidth_rate_becomes_iops_and_think_time_needs_closed_loop() {
        let t = parse("[j]\nfilename=/tmp/x\nrw=read\nbs=64k\nrate=1m\n").unwrap();
        assert_eq!(t.plan.runs[0].workloads[0].rate, Rate::Iops(16.0));
        let t = parse("[j]\nfilename=/tmp/x\nrw=read\nbssplit=4k/50:8k/50\nrate=1m\n").unwrap();
        assert_eq!(t.plan.runs[0].workloads[0].rate, Rate::Max);
        assert!(
            t.unsupported[0].option.starts_with("rate=1m — "),
            "{:?}",
            t.unsupported
        );
        let t = parse("[j]\nfilename=/tmp/x\nrw=read\nrate_iops=100\nthinktime=50\n").unwrap();
        assert!(t.plan.runs[0].workloads[0].pauses.is_none());
        assert!(
            t.unsupported[0]
                .option
                .starts_with("thinktime=50 — with a rate limit"),
            "{:?}",
            t.unsupported
        );
        let t = parse("[j]\nfilename=/tmp/x\nstartdelay=1-4\n").unwrap();
        assert_eq!(t.unsupported.len(), 1, "{:?}", t.unsupported);
    }

    #[test]
    fn libblkio_io_uring_and_cpp_null_map_with_a_warning() {
        let t = parse(
            "[j]\nioengine=libblkio\nlibblkio_driver=io_uring\nlibblkio_path=/dev/nvme0n1\n\
             rw=randread\n[k]\nioengine=cpp_null\nsize=1g\nstonewall\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        assert_eq!(t.plan.targets[0].uri, "/dev/nvme0n1");
        assert_eq!(t.plan.runs[0].engine, EngineKind::Uring);
        assert_eq!(t.plan.runs[1].engine, EngineKind::Null);
        assert_eq!(t.plan.warnings.len(), 2, "{:?}", t.plan.warnings);
        let t = parse(
            "[j]\nioengine=libblkio\nlibblkio_driver=virtio-blk-vfio-pci\n\
             libblkio_path=/sys/bus/pci/devices/0000:00:01.0\n",
        )
        .unwrap();
        assert!(
            t.unsupported[0]
                .option
                .starts_with("libblkio_driver=virtio-blk-vfio-pci — "),
            "{:?}",
            t.unsupported
        );
    }

    #[test]
    fn blockalign_aligns_random_offsets() {
        let t = parse("[j]\nfilename=/tmp/x\nrw=randrw\nbssplit=512/10:4k/90\nba=4k\n").unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        assert_eq!(t.plan.runs[0].workloads[0].align_bytes, Some(4096));
        let t = parse("[j]\nfilename=/tmp/x\nbs=4k\nblockalign=512\n").unwrap();
        assert_eq!(t.plan.runs[0].workloads[0].align_bytes, None);
        assert!(
            t.unsupported[0]
                .option
                .starts_with("blockalign=512 — not a multiple"),
            "{:?}",
            t.unsupported
        );
    }

    #[test]
    fn steadystate_becomes_the_runs_steady_stop() {
        let t = parse(
            "[j]\nfilename=/tmp/x\nss=bw_slope:0.5%\nss_dur=30s\nss_ramp=10\nss_interval=2\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let r = &t.plan.runs[0];
        let s = r.steady_stop.as_ref().unwrap();
        assert_eq!(s.criterion(), "bw_slope:0.5%");
        assert_eq!((s.window_ns, s.ramp_ns), (30_000_000_000, 10_000_000_000));
        assert_eq!(r.interval_ns, 2_000_000_000);
        // Without a window fio does not judge; a check interval unlike log_avg_msec is
        // listed; a bad criterion is an error at its line.
        let t = parse("[j]\nfilename=/tmp/x\nss=iops:10%\n").unwrap();
        assert!(t.plan.runs[0].steady_stop.is_none());
        let t = parse(
            "[j]\nfilename=/tmp/x\nss=iops:10%\nss_dur=5\nss_interval=2\n\
             write_iops_log=x\nlog_avg_msec=1000\n",
        )
        .unwrap();
        assert_eq!(t.unsupported.len(), 1, "{:?}", t.unsupported);
        assert_eq!(t.plan.runs[0].interval_ns, 1_000_000_000);
        let e = parse("[j]\nfilename=/tmp/x\nss=wobble:3\n").unwrap_err();
        assert!(
            e.to_string().starts_with("t.fio:3: steadystate=wobble:3"),
            "{e}"
        );
    }

    #[test]
    fn unsupported_options_say_why() {
        let t = parse("[j]\nfilename=/tmp/x\nzonemode=zbd\n").unwrap();
        assert!(
            t.unsupported[0]
                .option
                .starts_with("zonemode=zbd without zonesize — the zones of a zoned device"),
            "{:?}",
            t.unsupported
        );
        let t = parse("[j]\nfilename=/tmp/x\nmd_per_io_size=64\n").unwrap();
        assert!(
            t.unsupported[0]
                .option
                .contains("io_uring_cmd and xnvme engines"),
            "{:?}",
            t.unsupported
        );
        assert!(parse("[j]\nfilename=/tmp/x\nzonemode=wobble\n").is_err());
        // The last setting wins, as in fio.
        let t = parse("[j]\nfilename=/tmp/x\nflow=-2\nzonemode=strided\nzonemode=none\n").unwrap();
        let opts: Vec<&str> = t.unsupported.iter().map(|u| u.option.as_str()).collect();
        assert_eq!(opts.len(), 1, "{opts:?}");
        assert!(
            opts[0].starts_with("flow=-2 — a negative weight"),
            "{opts:?}"
        );
        // Strided zones translate; zbd and zone sizes without strided are listed.
        let t =
            parse("[j]\nfilename=/tmp/x\nzonemode=strided\nzonesize=1m\nzoneskip=3m\n").unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let z = t.plan.runs[0].workloads[0].zones.unwrap();
        assert_eq!(
            (z.io_bytes, z.range_bytes, z.skip_bytes),
            (1 << 20, 1 << 20, 3 << 20)
        );
        let t = parse("[j]\nfilename=/tmp/x\nzonemode=strided\n").unwrap();
        assert!(t.unsupported[0].option.contains("without zonesize"));
        // fio turns strided zones off for a job with several open files.
        let t = parse("[j]\ndirectory=/tmp\nnrfiles=4\nsize=4m\nzonesize=1m\n").unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        assert!(t.plan.runs[0].workloads[0].zones.is_none());
        assert!(t
            .plan
            .warnings
            .iter()
            .any(|w| w.contains("turns strided zones off")));
        // fio: a zonesize with no zonemode is strided; with zonemode=none, refused.
        let t = parse("[j]\nfilename=/tmp/x\nzonesize=1m\nzoneskip=3m\n").unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let z = t.plan.runs[0].workloads[0].zones.unwrap();
        assert_eq!((z.io_bytes, z.skip_bytes), (1 << 20, 3 << 20));
        let e = parse("[j]\nfilename=/tmp/x\nzonemode=none\nzonesize=1m\n").unwrap_err();
        assert!(e.to_string().contains("do not go together"), "{e}");
        let t = parse("[j]\nfilename=/tmp/x\nzoneskip=1m\n").unwrap();
        assert!(t.unsupported[0]
            .option
            .contains("only used with zonemode=strided"));
        let t = parse("[j]\nfilename=/tmp/x\nzonemode=zbd\nzonesize=1m\n").unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let t = parse("[j]\nfilename=/tmp/x\nmax_open_zones=4\n").unwrap();
        assert!(t.unsupported[0]
            .option
            .contains("only used with zonemode=zbd"));
    }

    #[test]
    fn zbd_zones_translate_with_sizes_in_zones() {
        let t = parse(
            "[j]\nfilename=/tmp/x\nrw=randwrite\nbs=64k\nzonemode=zbd\nzonesize=1m\n\
             zonecapacity=768k\nmax_open_zones=4\njob_max_open_zones=2\n\
             zone_reset_threshold=0.7\nzone_reset_frequency=0.125\nread_beyond_wp=1\n\
             offset=2z\nsize=8z\nio_size=16z\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let w = &t.plan.runs[0].workloads[0];
        assert_eq!((w.offset_bytes, w.size_bytes), (2 << 20, Some(8 << 20)));
        assert_eq!(t.plan.runs[0].passes, Some(2));
        let z = w.zbd.unwrap();
        assert_eq!(
            (
                z.zone_bytes,
                z.capacity_bytes,
                z.max_open,
                z.stream_max_open
            ),
            (1 << 20, 768 << 10, 4, 2)
        );
        assert_eq!((z.reset_threshold, z.reset_frequency), (0.7, 0.125));
        assert!(z.read_beyond_wp);
        // A size in zones needs a zone size; zonerange is never in zones.
        let t = parse("[j]\nfilename=/tmp/x\nsize=8z\n").unwrap();
        assert!(t.unsupported[0].option.contains("without a zonesize"));
        // Writes larger than a zone, or a trim of other than one zone, are listed.
        let t = parse("[j]\nfilename=/tmp/x\nrw=randwrite\nbs=2m\nzonemode=zbd\nzonesize=1m\n")
            .unwrap();
        assert!(
            t.unsupported[0].option.contains("larger than a zone"),
            "{:?}",
            t.unsupported
        );
        let t = parse("[j]\nfilename=/tmp/x\nrw=randtrim\nbs=64k\nzonemode=zbd\nzonesize=1m\n")
            .unwrap();
        assert!(
            t.unsupported[0].option.contains("zone size"),
            "{:?}",
            t.unsupported
        );
        assert!(
            parse("[j]\nfilename=/tmp/x\nzonemode=zbd\nzonesize=1m\nzone_reset_threshold=2\n")
                .is_err()
        );
    }

    #[test]
    fn bssplit_shares_the_remainder() {
        assert_eq!(
            parse_one_bssplit("4k/50:64k/50").unwrap(),
            vec![(4096, 50), (65536, 50)]
        );
        assert_eq!(
            parse_one_bssplit("4k/20:8k:16k").unwrap(),
            vec![(4096, 20), (8192, 40), (16384, 40)]
        );
        assert_eq!(
            parse_one_bssplit("4k/80:8k/30"),
            Err(SplitError::WeightOver(110))
        );
        assert_eq!(
            parse_one_bssplit("4k/x").unwrap_err().to_string(),
            "'x' is not a percentage"
        );
        assert_eq!(parse_one_bssplit("4k/0"), Err(SplitError::AllZero));
        assert_eq!(
            parse_zoned("60/10:50/20").unwrap_err().to_string(),
            "I/O percentages add up to 110, more than 100"
        );
        assert_eq!(
            parse_zoned("60/x").unwrap_err().to_string(),
            "'x' in '60/x' is not a percentage"
        );
    }

    #[test]
    fn stonewall_splits_runs() {
        let t = parse(
            "[global]\nfilename=/tmp/x\nsize=1m\n[a]\nrw=read\n[b]\nrw=write\n\
             [c]\nstonewall\nrw=randread\n",
        )
        .unwrap();
        assert_eq!(t.plan.runs.len(), 2);
        assert_eq!(t.plan.runs[0].workloads.len(), 2);
        assert_eq!(t.plan.runs[0].name, "a+b");
        assert_eq!(t.plan.targets.len(), 1);
    }

    #[test]
    fn env_expansion_as_fio_does_it() {
        let env = |k: &str| match k {
            "DEV" => Some("/dev/nvme0n1".to_string()),
            "$pagesize" => Some("4096".to_string()),
            _ => None,
        };
        let t = parse_str(
            "t.fio",
            "[j]\nfilename=${DEV}\nrw=randread\nbs=$pagesize\n",
            Path::new("."),
            &env,
        )
        .unwrap();
        assert_eq!(t.plan.targets[0].uri, "/dev/nvme0n1");
        assert_eq!(t.plan.runs[0].workloads[0].bs.single(), Some(4096));
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        assert!(
            t.plan.warnings.iter().any(|w| w.contains("$pagesize=4096")),
            "{:?}",
            t.plan.warnings
        );
        // Unset: fio substitutes nothing, and the translation says so.
        let t = parse_str(
            "t.fio",
            "[j]\ndirectory=/mnt${NOPE}\nsize=1m\n",
            Path::new("."),
            &env,
        )
        .unwrap();
        assert_eq!(t.plan.targets[0].uri, "/mnt/j.0.0");
        assert!(
            t.plan
                .warnings
                .iter()
                .any(|w| w.starts_with("t.fio:2: ") && w.contains("'NOPE' is not set")),
            "{:?}",
            t.plan.warnings
        );
        // Section names are not substituted, as in fio.
        let t = parse_str("t.fio", "[${DEV}]\nsize=1m\n", Path::new("."), &env).unwrap();
        assert_eq!(t.plan.runs[0].workloads[0].name, "${DEV}");
    }

    #[test]
    fn single_dash_command_line() {
        let args: Vec<String> = "fio -name iops -rw=randread -iodepth 1 -bs=4k -filename /dev/x"
            .split(' ')
            .map(String::from)
            .collect();
        let t = parse_args(&args).unwrap();
        let w = &t.plan.runs[0].workloads[0];
        assert_eq!(w.name, "iops");
        assert_eq!(w.read_pct, 100);
        assert_eq!(w.pattern, AccessPattern::Random);
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
    }

    #[test]
    fn bad_value_names_argument() {
        let args: Vec<String> = ["fio", "--name=x", "--rw=sideways"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let e = parse_args(&args).unwrap_err();
        assert!(
            e.to_string().starts_with("argument 3 ('--rw=sideways'): "),
            "{e}"
        );
    }

    #[test]
    fn jobs_with_and_without_time_based_keep_their_own_amounts() {
        // A time-based job of 4 s beside a job of 2 passes bounded by 3 s, after a
        // 1 s start delay: the run of 2 passes lasts up to 4 s.
        let t = parse(
            "[global]\nfilename=/tmp/x\nsize=1m\n[t]\ntime_based\nruntime=4\n\
             [p]\nloops=2\nruntime=3\nstartdelay=1\n[q]\nloops=3\nruntime=1\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let run = &t.plan.runs[0];
        assert_eq!(
            (run.passes, run.duration_ns),
            (Some(2), Some(4_000_000_000))
        );
        let own = |i: usize| {
            (
                run.workloads[i].overrides.amount,
                run.passes_of(&run.workloads[i]),
            )
        };
        assert_eq!(own(0), (Some(Amount::TimeBased), None));
        assert_eq!(own(1), (None, Some(2)));
        assert_eq!(own(2), (Some(Amount::Passes(3)), Some(3)));
        let stops: Vec<u64> = run.workloads.iter().map(|w| w.pauses.stop_ns).collect();
        assert_eq!(stops, [0, 0, 1_000_000_000], "the last end is the run's");
        // A job without a runtime: no duration, the run ends with the last job.
        let t =
            parse("[global]\nfilename=/tmp/x\nsize=1m\n[t]\ntime_based\nruntime=4\n[p]\n").unwrap();
        let run = &t.plan.runs[0];
        assert_eq!((run.passes, run.duration_ns), (Some(1), None));
        assert_eq!(run.workloads[0].pauses.stop_ns, 4_000_000_000);
        // With latency_target the runtimes are listed (one length per probe).
        let t = parse(
            "[global]\nfilename=/tmp/x\nsize=1m\n[t]\ntime_based\nruntime=4\n\
             latency_target=10ms\n[p]\n",
        )
        .unwrap();
        assert_eq!(t.unsupported.len(), 1, "{:?}", t.unsupported);
        assert!(
            t.unsupported[0].option.contains("latency_target"),
            "{:?}",
            t.unsupported
        );
    }

    #[test]
    fn exitall_ends_the_run_with_the_first_runtime_of_a_job_carrying_it() {
        // A time-based job of 4 s with exitall beside a job of one pass: the run of
        // passes lasts 4 s at most, its pass may end it sooner only without exitall.
        let t =
            parse("[global]\nfilename=/tmp/x\nsize=1m\n[t]\ntime_based\nruntime=4\nexitall\n[p]\n")
                .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let run = &t.plan.runs[0];
        assert_eq!(
            (run.passes, run.duration_ns),
            (Some(1), Some(4_000_000_000))
        );
        let w = &run.workloads;
        assert_eq!(w[0].overrides.amount, Some(Amount::TimeBased));
        // fio's flag is the process's: p's end would end the run too.
        assert!(w[0].settings.flag(&EXIT_ALL) && w[1].settings.flag(&EXIT_ALL));
        assert_eq!((w[0].pauses.stop_ns, w[1].pauses.stop_ns), (0, 0));
        // The reverse: a job of passes with exitall beside a time-based job of 60 s
        // (exitall too, fio's flag being the process's): the run lasts 60 s at
        // most, and the passes job stops it sooner from the workers.
        let t = parse(
            "[global]\nfilename=/tmp/x\nsize=1m\n[p]\nexitall\n[t]\ntime_based\nruntime=60\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let run = &t.plan.runs[0];
        assert_eq!(
            (run.passes, run.duration_ns),
            (Some(1), Some(60_000_000_000))
        );
        let w = &run.workloads;
        assert!(w[0].settings.flag(&EXIT_ALL) && w[0].overrides.amount.is_none());
        assert_eq!(w[1].overrides.amount, Some(Amount::TimeBased));
        assert_eq!(w[1].pauses.stop_ns, 0);
        // Two exitall jobs with runtimes (one also bounded by passes) and a later
        // one with exitall=0, which in fio sets the same process-wide flag: the first
        // end (2 s, after a 1 s start delay) is the run's, and the 5 s job ends
        // with it.
        let t = parse(
            "[global]\nfilename=/tmp/x\nsize=1m\nexitall\n[a]\ntime_based\nruntime=5\n\
             [b]\nloops=2\nruntime=1\nstartdelay=1\n[c]\nexitall=0\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let run = &t.plan.runs[0];
        assert_eq!(run.duration_ns, Some(2_000_000_000));
        let stops: Vec<u64> = run.workloads.iter().map(|w| w.pauses.stop_ns).collect();
        assert_eq!(stops, [0, 0, 0]);
        // The run's passes are the first job of passes' (b's 2): c keeps its one.
        assert_eq!(run.passes, Some(2));
        assert_eq!(run.workloads[2].overrides.amount, Some(Amount::Passes(1)));
        assert!(run.workloads[2].settings.flag(&EXIT_ALL));
        assert!(
            t.plan
                .warnings
                .iter()
                .any(|w| w.contains("job 'c': exitall of another")),
            "{:?}",
            t.plan.warnings
        );
        // Without exitall anywhere nobody stops the run.
        let t = parse("[global]\nfilename=/tmp/x\nsize=1m\n[a]\n[b]\nstonewall\n").unwrap();
        assert!(t
            .plan
            .runs
            .iter()
            .all(|r| r.workloads.iter().all(|w| !w.settings.flag(&EXIT_ALL))));
    }
}
