//! The application layer: runs a plan end to end — checks every run before the first
//! I/O, executes runs in order, prints interval lines and summaries, writes the JSON
//! result after every run and streams intervals — and implements `quick`.
//! It takes typed [`Invocation`]s (built by the binary's command-line layer) and knows
//! nothing of flags; the binary maps [`AppError`] to exit codes; nothing here exits
//! the process. Everything printed on stdout goes through [`stdout`].

/// `outln!(…)` is `println!` through [`stdout::println`]: a closed pipe is an error
/// value, not a panic.
macro_rules! outln {
    () => { $crate::app::stdout::println("") };
    ($($t:tt)*) => { $crate::app::stdout::println(&format!($($t)*)) };
}
/// `out!(…)` is `print!` through [`stdout::print`].
macro_rules! out {
    ($($t:tt)*) => { $crate::app::stdout::print(&format!($($t)*)) };
}

mod curve;
mod error;
mod fio_logs;
mod foreign;
mod invocation;
mod live;
mod merge;
mod merge_error;
mod progress;
mod quick;
mod repeat;
mod steady;
mod tools;
mod verify;

/// Every write to stdout (kept in the top-level [`crate::stdout`] so `net`, which
/// `app` calls, can use it too).
pub use crate::stdout;
pub use curve::curve;
pub use error::{chain, AppError, BoundError, FlagError};
pub use foreign::{accept as accept_translated, foreign, read_job_file};
pub use invocation::Tool as ForeignTool;
pub use invocation::*;
pub use merge::merge;
pub use merge_error::MergeError;
pub use quick::quick;
pub use steady::{pts, steady_run};
pub use tools::{compare, convert, net_run, net_serve, report, rerun, sysinfo};
pub use verify::verify;

use crate::plan::model::*;
use crate::report::json::{check_writable, intervals_path, write_atomic_bytes, IntervalLog};
use crate::report::terminal;
use crate::result::{ResultDoc, RunResult, SCHEMA};
use crate::run::{self, RunOptions};

/// Exit codes, documented in the README.
pub mod exit {
    /// Everything ran.
    pub const OK: i32 = 0;
    /// A failure during a run (I/O error, engine failure).
    pub const RUN_FAILED: i32 = 1;
    /// Bad input: flags, job file, target; nothing was run.
    pub const BAD_INPUT: i32 = 2;
    /// Verification found a mismatch.
    pub const VERIFY_MISMATCH: i32 = 3;
    /// `convert` printed a translation but had to drop unsupported options, so it is
    /// not faithful (the same code as a mismatch: "done, but not what you asked").
    pub const CONVERT_DROPPED: i32 = 3;
    /// Interrupted by Ctrl-C (results so far were written).
    pub const INTERRUPTED: i32 = 130;
}

/// Executes one command; returns its exit code.
pub fn execute(inv: Invocation) -> Result<i32, AppError> {
    match inv {
        Invocation::Run(r) => match r.steady {
            Some(st) => steady_run(&r, st),
            None => Ok(run_plan(&r.plan, &r.output, &r.opts, r.command)?.exit_code),
        },
        Invocation::Curve(c) => curve(c),
        Invocation::Pts(p) => pts(&p),
        Invocation::Quick(q) => quick(q).map(|o| o.exit_code),
        Invocation::Foreign(f) => foreign(f),
        Invocation::Rerun(r) => rerun(r),
        Invocation::Convert(c) => convert(&c),
        Invocation::Report(r) => report(&r),
        Invocation::Compare(c) => compare(&c),
        Invocation::Merge(m) => merge(&m),
        Invocation::Verify(v) => verify(&v),
        Invocation::Sysinfo(s) => sysinfo(&s),
    }
}

/// What a finished command produced.
pub struct Outcome {
    pub doc: ResultDoc,
    pub exit_code: i32,
}

/// One measuring command in progress: the result document, the outputs it rewrites
/// after every run, and the intervals stream. `run_plan` drives it over a fixed list
/// of runs; `curve` over runs it decides as it goes.
pub struct Session<'a> {
    pub doc: ResultDoc,
    targets: Vec<TargetSpec>,
    out: &'a Output,
    opts: &'a RunOptions,
    log: Option<IntervalLog>,
    quiet: bool,
    /// The status line on standard error (`--progress`).
    progress: Option<progress::Progress>,
    /// The command's live metrics (`--metrics`), served until the session ends.
    live: Option<live::Served>,
    /// Runs the whole command plans (`None`: not known ahead).
    runs_planned: Option<usize>,
    pub exit_code: i32,
}

impl<'a> Session<'a> {
    /// Checks outputs, installs Ctrl-C handling and captures the environment.
    pub fn start(
        plan: &Plan,
        out: &'a Output,
        opts: &'a RunOptions,
        command: Vec<String>,
    ) -> Result<Self, AppError> {
        // Before any output file is touched: a refused address writes nothing.
        let name = command.get(1).map_or("ioscope", String::as_str);
        let live = live::serve(&out.settings, name)?;
        let log = check_outputs(out)?;
        crate::interrupt::install();
        let doc = ResultDoc {
            schema: SCHEMA.into(),
            tool: crate::result::Tool::current(),
            started_unix_s: crate::clock::unix_s(),
            command,
            interrupted: false,
            runs: Vec::new(),
            env: serde_json::to_value(crate::sysinfo::capture(
                &plan
                    .targets
                    .iter()
                    .map(|t| crate::sysinfo::TargetInfoRequest::new(t.uri.clone()))
                    .collect::<Vec<_>>(),
            ))
            .ok(),
            plan: serde_json::to_value(plan).ok(),
            warnings: plan.warnings.clone(),
            curves: Vec::new(),
            steady_state: None,
        };
        for w in &plan.warnings {
            eprintln!("warning: {w}");
        }
        let quiet = out.quiet || out.stdout_is_doc();
        // Each repetition (`--repeat`) is a run of the plan's length.
        let total_s: Option<f64> = plan
            .runs
            .iter()
            .map(|r| progress::run_s(r).map(|s| s * repeat::count(r) as f64))
            .sum();
        let runs: usize = plan.runs.iter().map(repeat::count).sum();
        Ok(Session {
            doc,
            targets: plan.targets.clone(),
            out,
            opts,
            log,
            quiet,
            progress: progress::mode(out).map(|m| progress::Progress::new(m, Some(runs), total_s)),
            live,
            runs_planned: Some(runs),
            exit_code: exit::OK,
        })
    }

    /// What the command now expects to run in all, from here on (a curve or PTS
    /// that knows its plan once it starts): runs and seconds, `None` if not known.
    pub fn expect(&mut self, runs: Option<usize>, secs: Option<f64>) {
        if let Some(p) = self.progress.as_mut() {
            p.expect(runs, secs);
        }
        self.runs_planned = runs.map(|n| n + self.doc.runs.len());
    }

    /// Sets a phase gauge of the live metrics (a curve point, a round).
    pub fn phase(&self, p: crate::metrics::Phase) {
        if let Some(l) = &self.live {
            l.phase(p);
        }
    }

    /// Whether the session should stop (Ctrl-C).
    pub fn stopped(&self) -> bool {
        self.doc.interrupted || crate::interrupt::requested()
    }

    /// Idles for the run's `pause` (vdbench's `pause=`) before the next run: the
    /// device settles, nothing is measured. Ctrl-C ends it at once.
    pub fn pause(&self, r: &RunSpec) -> Result<(), AppError> {
        let pause_ns = r.settings.nanos(&crate::plan::settings::declared::PAUSE);
        if pause_ns == 0 || self.stopped() {
            return Ok(());
        }
        self.say(&format!(
            "pause: {} after run '{}'",
            crate::plan::units::format_duration_ns(pause_ns),
            r.name
        ))?;
        let end = std::time::Instant::now() + std::time::Duration::from_nanos(pause_ns);
        while !self.stopped() {
            let left = end.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(std::time::Duration::from_millis(50)));
        }
        Ok(())
    }

    /// The plan's targets, as the session opens them.
    pub fn plan_targets(&self) -> &[TargetSpec] {
        &self.targets
    }

    /// Prints a line unless quiet.
    pub fn say(&self, text: &str) -> Result<(), AppError> {
        if !self.quiet {
            stdout::println(text)?;
        }
        Ok(())
    }

    /// `opts` with the command's live metrics in them.
    fn with_metrics<'o>(&self, opts: &'o RunOptions) -> std::borrow::Cow<'o, RunOptions> {
        match &self.live {
            Some(l) => std::borrow::Cow::Owned(RunOptions {
                metrics: Some(l.live.clone()),
                ..opts.clone()
            }),
            None => std::borrow::Cow::Borrowed(opts),
        }
    }

    /// Executes one run (each of its repetitions under `--repeat`), prints it,
    /// records it and rewrites the outputs.
    pub fn run(&mut self, r: &RunSpec, label: &str) -> Result<&RunResult, AppError> {
        let n = r.settings.count(&crate::plan::settings::declared::REPEAT);
        if n > 1 {
            return repeat::run(self, r, label, n);
        }
        let opts = self.opts;
        let (result, warnings) = self.measure(r, label, opts)?;
        self.record(r, result, warnings)
    }

    /// Executes one run and prints its interval lines; records nothing.
    fn measure(
        &mut self,
        r: &RunSpec,
        label: &str,
        opts: &RunOptions,
    ) -> Result<(RunResult, Vec<String>), AppError> {
        self.phase(crate::metrics::Phase::Run {
            k: self.doc.runs.len() as u64 + 1,
            n: self.runs_planned.unwrap_or(0) as u64,
        });
        if r.engine == crate::plan::EngineKind::Net {
            return self.run_net(r, label);
        }
        let quiet = self.quiet;
        if !quiet {
            outln!(
                "\n{}{}: {}",
                r.name,
                label,
                terminal::workload_words(&crate::run::echo::workload_echo(&r.workloads[0]))
            )?;
            outln!("{}", terminal::interval_header())?;
        }
        let mut n = 0u64;
        let mut log_err: Option<std::io::Error> = None;
        let name = r.name.clone();
        let run_s = progress::run_s(r);
        let opts = self.with_metrics(opts);
        let log = &mut self.log;
        let progress = &mut self.progress;
        let (result, warnings) = run::execute(r, &self.targets, &opts, &mut |iv| {
            n += 1;
            if !quiet && !stdout::closed() {
                if let Some(p) = progress.as_mut() {
                    p.clear();
                }
                // A closed stdout ends the run as Ctrl-C would: what was measured so
                // far is kept, and the command then ends quietly.
                if stdout::println(&terminal::interval_line(iv, n)).is_err() {
                    crate::interrupt::request();
                }
            }
            if let Some(p) = progress.as_mut() {
                p.show(iv, run_s);
            }
            if let Some(l) = log.as_mut() {
                if let Err(e) = l.append(&name, iv) {
                    log_err.get_or_insert(e);
                }
            }
        })
        .map_err(AppError::Run)?;
        if let Some(p) = self.progress.as_mut() {
            p.run_done(run_s);
        }
        if let Some(e) = log_err {
            eprintln!("warning: writing the intervals file failed: {e}");
        }
        Ok((result, warnings))
    }

    /// Prints a finished run's warnings, records it, sets the exit code and
    /// rewrites the outputs.
    fn record(
        &mut self,
        r: &RunSpec,
        result: RunResult,
        mut warnings: Vec<String>,
    ) -> Result<&RunResult, AppError> {
        if let Some(sc) = &result.schedule {
            if sc.achieved_pct < 99.0 && !result.interrupted {
                warnings.push(format!(
                    "run '{}': achieved {:.0} IOPS, only {:.1}% of the requested {:.0}: the target (or ioscope) could not keep up; latency_us includes the backlog",
                    result.name, sc.achieved_iops, sc.achieved_pct, sc.requested_iops
                ));
            }
        }
        if let Some(w) = idle_connections(&result) {
            warnings.push(w);
        }
        for w in &warnings {
            eprintln!("warning: {w}");
        }
        self.doc.warnings.extend(warnings);
        if result.verify.as_ref().is_some_and(|v| v.mismatches > 0) && self.exit_code == exit::OK {
            self.exit_code = exit::VERIFY_MISMATCH;
        }
        // Any I/O error fails the command; the policy only decided whether the run
        // went on.
        if result.end_reason == crate::result::EndReason::Error || result.totals.all.errors > 0 {
            self.exit_code = exit::RUN_FAILED;
        }
        if result.interrupted {
            self.doc.interrupted = true;
            self.exit_code = exit::INTERRUPTED;
        }
        for path in fio_logs::write(r, &result.intervals)? {
            self.say(&format!("fio log: {}", path.display()))?;
        }
        self.doc.runs.push(result);
        write_outputs(self.out, &self.doc)?;
        let result = self.doc.runs.last().expect("just pushed");
        // After the outputs are written: a closed stdout (here, or while the interval
        // lines were printed) ends the command with everything measured saved.
        if stdout::closed() {
            return Err(stdout::StdoutError::Closed.into());
        }
        if !self.out.stdout_is_doc() && !self.out.no_run_summaries {
            if result.kind == crate::result::RunKind::Net {
                out!("{}", crate::net::peer::summary(result))?;
            } else {
                out!("{}", terminal::run_summary(result))?;
            }
        }
        Ok(result)
    }

    /// A run of network jobs (engine `net`): printed with the network mode's
    /// interval lines, appended to the intervals file like any run.
    fn run_net(&mut self, r: &RunSpec, label: &str) -> Result<(RunResult, Vec<String>), AppError> {
        let quiet = self.quiet;
        if !quiet {
            outln!(
                "\n{}{}: {} network job(s)",
                r.name,
                label,
                r.workloads.len()
            )?;
            outln!("{}", crate::net::peer::interval_header())?;
        }
        let mut log_err: Option<std::io::Error> = None;
        let log = &mut self.log;
        let name = r.name.clone();
        let run_s = progress::run_s(r);
        let progress = &mut self.progress;
        let live = self.live.as_ref().map(|l| &l.live);
        // A network run counts its jobs together: one series for the run.
        let (workload, target) = match r.workloads.as_slice() {
            [w] => (w.name.as_str(), w.target.as_str()),
            _ => ("all", "all"),
        };
        let res = crate::net::peer::execute(r, &self.targets, &mut |iv| {
            if let Some(p) = progress.as_mut() {
                p.clear();
            }
            if !quiet
                && !stdout::closed()
                && stdout::println(&crate::net::peer::interval_line(iv)).is_err()
            {
                crate::interrupt::request();
            }
            if let Some(p) = progress.as_mut() {
                p.show(iv, run_s);
            }
            if let Some(l) = live {
                l.net_interval(workload, target, iv);
            }
            if let Some(l) = log.as_mut() {
                if let Err(e) = l.append(&name, iv) {
                    log_err.get_or_insert(e);
                }
            }
        })?;
        if let Some(p) = self.progress.as_mut() {
            p.run_done(run_s);
        }
        if let Some(e) = log_err {
            eprintln!("warning: writing the intervals file failed: {e}");
        }
        Ok(res)
    }

    /// Rewrites the outputs (after changing the document, e.g. the curve summary).
    pub fn save(&self) -> Result<(), AppError> {
        write_outputs(self.out, &self.doc)
    }

    /// Final stdout output; returns what was measured.
    pub fn finish(self) -> Result<Outcome, AppError> {
        finish_stdout(self.out, &self.doc)?;
        Ok(Outcome {
            exit_code: self.exit_code,
            doc: self.doc,
        })
    }
}

/// The runner's data options from a plan's (or merged) data settings.
pub fn data_options(
    d: &crate::plan::model::DataSettings,
) -> Result<crate::run::data::DataOptions, AppError> {
    let mut spec = crate::data::DataSpec {
        dedup_ratio: d.dedup_ratio.unwrap_or(1.0),
        compress_ratio: d.compress_ratio.unwrap_or(1.0),
        fill: d.pattern.as_ref().and_then(crate::run::data::fill_bytes),
        ..Default::default()
    };
    if let Some(b) = d.dedup_unit_bytes {
        spec.dedup_unit = u32::try_from(b).unwrap_or(u32::MAX);
    }
    spec.working_set = d
        .dedup_set
        .map(|w| crate::data::WorkingSet::of_bytes(w.bytes, spec.dedup_unit, w.global));
    spec.validate()?;
    let verify = d.verify || d.verify_after || d.journal.is_some();
    if verify && spec.dedup_ratio > 1.0 {
        eprintln!(
            "warning: with verification each unit carries a unique header, so block-level dedup sees every unit as unique; the dedup ratio applies to the unit bodies only"
        );
    }
    Ok(crate::run::data::DataOptions {
        spec,
        verify,
        verify_after: d.verify_after,
        journal: d.journal.as_ref().map(std::path::PathBuf::from),
        registry: Default::default(),
    })
}

/// Says, before the first run, what each tree of files of several lengths holds
/// (each length's count and the bytes in all): the tree a run creates is drawn,
/// so its total is not the URI's.
fn say_file_sizes(session: &Session, plan: &Plan) -> Result<(), AppError> {
    for t in &plan.targets {
        if let Ok(crate::plan::model::TargetKind::Files(set)) = crate::target::parse_uri(&t.uri) {
            if let Some(line) = set.sizes_summary() {
                session.say(&format!("target {}: {line}", t.name))?;
            }
        }
    }
    Ok(())
}

/// Runs every run of `plan` in order.
pub fn run_plan(
    plan: &Plan,
    out: &Output,
    opts: &RunOptions,
    command: Vec<String>,
) -> Result<Outcome, AppError> {
    let plan = &*fresh_seeds(plan);
    // A run that asks for a curve (vdbench's iorate=curve, fio's latency_target) is
    // measured as one, in its place among the other runs; the result holds a curve
    // summary for each.
    if let (Some(spec), 1) = (
        plan.runs.iter().find_map(|r| r.curve.as_ref()),
        plan.runs.len(),
    ) {
        let req = curve::CurveRequest::from_spec(spec)?;
        return curve::run_curve(plan, &req, out, opts, command);
    }
    // Every check that can fail happens before the first I/O of the first run.
    for r in &plan.runs {
        if let Some(spec) = &r.curve {
            curve::CurveRequest::from_spec(spec)?;
            curve::check_curve_run(r)?;
        }
        if r.engine == crate::plan::EngineKind::Net {
            crate::net::peer::check(r, &plan.targets)?;
        } else {
            run::check(r, &plan.targets, opts).map_err(AppError::Check)?;
        }
    }
    let mut session = Session::start(plan, out, opts, command)?;
    if plan.runs.len() > 1 {
        let secs: f64 = plan.runs.iter().map(planned_s).sum();
        session.say(&format!(
            "plan: {} runs, about {:.0} s{}",
            plan.runs.len(),
            secs,
            if plan.runs.iter().any(|r| r.duration_ns.is_none()) {
                " plus pass-limited runs"
            } else {
                ""
            }
        ))?;
    }
    say_file_sizes(&session, plan)?;
    for (ri, r) in plan.runs.iter().enumerate() {
        if session.stopped() {
            break;
        }
        if let Some(spec) = &r.curve {
            let req = curve::CurveRequest::from_spec(spec)?;
            // Among other runs, a curve's runs carry its run's name ("rd1 max").
            curve::measure_curve(&mut session, r, &format!("{} ", r.name), &req)?;
        } else {
            session.run(r, &format!(" ({}/{})", ri + 1, plan.runs.len()))?;
        }
        if ri + 1 < plan.runs.len() {
            session.pause(r)?;
        }
    }
    if !out.stdout_is_doc() {
        if let Some(t) = terminal::sweep_table(&session.doc) {
            outln!("\n{t}")?;
        }
    }
    session.finish()
}

/// The plan with a seed drawn now for each run whose `fresh_seed` is set (fio's
/// `randrepeat=0`): before the session records the plan, so the result says which
/// seed ran and `rerun` repeats exactly that.
fn fresh_seeds(plan: &Plan) -> std::borrow::Cow<'_, Plan> {
    use crate::plan::settings::declared::FRESH_SEED;
    if !plan.runs.iter().any(|r| r.settings.flag(&FRESH_SEED)) {
        return std::borrow::Cow::Borrowed(plan);
    }
    let mut plan = plan.clone();
    for r in plan
        .runs
        .iter_mut()
        .filter(|r| r.settings.flag(&FRESH_SEED))
    {
        let mut bytes = [0u8; 8];
        // SAFETY: getrandom(2) writes at most `bytes.len()` bytes into the buffer.
        let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
        r.seed = match n {
            8 => u64::from_le_bytes(bytes),
            _ => crate::clock::now_ns() ^ u64::from(std::process::id()).rotate_left(32),
        } >> 1; // a job file's seed is a TOML integer: at most i64::MAX
    }
    std::borrow::Cow::Owned(plan)
}

/// Seconds a run is planned to take: warm-up and duration, each repetition.
fn planned_s(r: &RunSpec) -> f64 {
    (r.warmup_ns + r.duration_ns.unwrap_or(0)) as f64 / 1e9 * repeat::count(r) as f64
}

/// Checks every output path before the first I/O and opens the intervals stream.
fn check_outputs(out: &Output) -> Result<Option<IntervalLog>, AppError> {
    // Among MPI ranks only rank 0 writes (docs/mpi.md).
    if !crate::cluster::is_writer() {
        return Ok(None);
    }
    for (flag, path, _) in out.files() {
        if let Some(p) = path {
            check_writable(p).map_err(|source| AppError::Unwritable {
                flag,
                path: p.clone(),
                source,
            })?;
        }
    }
    if let Some(dir) = &out.vdbench_dir {
        let probe = dir.join("summary.html");
        std::fs::create_dir_all(dir)
            .and_then(|()| check_writable(&probe))
            .map_err(|source| AppError::Unwritable {
                flag: "-o",
                path: probe.clone(),
                source,
            })?;
    }
    match &out.json {
        Some(p) => {
            let path = intervals_path(p);
            match IntervalLog::create(&path) {
                Ok(log) => Ok(Some(log)),
                Err(source) => Err(AppError::Unwritable {
                    flag: "--json",
                    path,
                    source,
                }),
            }
        }
        None => Ok(None),
    }
}

/// Rewrites every output file from the results so far (after each run).
pub fn write_outputs(out: &Output, doc: &ResultDoc) -> Result<(), AppError> {
    if !crate::cluster::is_writer() {
        return Ok(());
    }
    for (_, path, format) in out.files() {
        if let Some(p) = path {
            write_atomic_bytes(p, format.render(doc).as_bytes()).map_err(|source| {
                AppError::Write {
                    path: p.clone(),
                    source,
                }
            })?;
        }
    }
    if let Some(dir) = &out.vdbench_dir {
        let name = dir
            .file_name()
            .map_or("output".into(), |n| n.to_string_lossy());
        for (file, text) in crate::report::vdbench::files(doc, &name) {
            let p = dir.join(file);
            write_atomic_bytes(&p, text.as_bytes())
                .map_err(|source| AppError::Write { path: p, source })?;
        }
    }
    Ok(())
}

/// What goes to stdout at the very end: the document stdout carries, or Markdown.
fn finish_stdout(out: &Output, doc: &ResultDoc) -> Result<(), AppError> {
    use crate::report::export::Format;
    match out.stdout_doc {
        Some(f) => stdout::print(&f.render(doc))?,
        None if out.markdown => stdout::print(&format!("\n{}", Format::Markdown.render(doc)))?,
        None => {}
    }
    Ok(())
}

/// A run whose connections were not all used: each stream keeps to one connection
/// (stream i to connection i mod N), so fewer streams than connections leave the
/// rest idle, and a user who asked for N connections should hear it.
/// Only a run with several connections per target is told: one over several
/// targets of one connection each (a tree and its file-operation entries, whose
/// engines keep no per-connection counts) has none to spare.
fn idle_connections(result: &RunResult) -> Option<String> {
    let conns = &result.connections;
    let several = conns.iter().any(|c| c.index > 0);
    let idle = conns.iter().filter(|c| c.ios == 0 && c.errors == 0).count();
    (several && idle > 0 && !result.interrupted).then(|| {
        format!(
            "run '{}': {idle} of {} connections carried no I/O: each stream keeps to one \
             connection (stream i to connection i mod N), so N connections need at least \
             N streams (--streams)",
            result.name,
            conns.len()
        )
    })
}
