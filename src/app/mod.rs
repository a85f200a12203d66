//! The application layer: runs a plan end to end — checks every run before the first
//! I/O, executes runs in order, prints interval lines and summaries, writes the JSON
//! result after every run and streams intervals — and implements `quick`.
//! The binary maps [`AppError`] to exit codes; nothing here exits the process.

mod curve;
mod foreign;
mod quick;
mod steady;
mod tools;
mod verify;

pub use curve::curve;
pub use foreign::{accept as accept_translated, foreign, read_job_file, Tool as ForeignTool};
pub use quick::quick;
pub use steady::{pts, steady_run};
pub use tools::{compare, convert, report, rerun, sysinfo};
pub use verify::verify;

use crate::cli::OutputArgs;
use crate::plan::model::*;
use crate::report::json::{
    check_writable, intervals_path, write_atomic, write_atomic_bytes, IntervalLog,
};
use crate::report::terminal;
use crate::result::{ResultDoc, RunResult, Tool, SCHEMA};
use crate::run::{self, RunOptions};
use std::path::Path;

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
    /// Interrupted by Ctrl-C (results so far were written).
    pub const INTERRUPTED: i32 = 130;
}

/// An error that ends the command.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The user's input was refused before any I/O.
    #[error("{0}")]
    Input(String),
    /// Something failed while running.
    #[error("{0}")]
    Runtime(String),
}

impl AppError {
    pub fn exit_code(&self) -> i32 {
        match self {
            AppError::Input(_) => exit::BAD_INPUT,
            AppError::Runtime(_) => exit::RUN_FAILED,
        }
    }
}

/// What a finished command produced.
pub struct Outcome {
    pub doc: ResultDoc,
    pub exit_code: i32,
}

/// Formats an error with its whole cause chain.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        let cs = c.to_string();
        if !s.contains(&cs) {
            s.push_str(": ");
            s.push_str(&cs);
        }
        src = c.source();
    }
    s
}

fn input_err(e: run::RunError) -> AppError {
    // A target that cannot be reached here (library missing, server down) is a
    // run-time failure, not bad input.
    if matches!(
        e,
        run::RunError::Target(crate::target::TargetError::Unavailable { .. })
    ) {
        return AppError::Runtime(chain(&e));
    }
    AppError::Input(chain(&e))
}

/// One measuring command in progress: the result document, the outputs it rewrites
/// after every run, and the intervals stream. `run_plan` drives it over a fixed list
/// of runs; `curve` over runs it decides as it goes.
pub struct Session<'a> {
    pub doc: ResultDoc,
    targets: Vec<TargetSpec>,
    out: &'a OutputArgs,
    opts: &'a RunOptions,
    log: Option<IntervalLog>,
    quiet: bool,
    /// Live progress line on a terminal.
    progress: Option<Progress>,
    pub exit_code: i32,
}

/// What the live progress line knows about the whole plan.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// Seconds the planned runs take in all (0 = unknown, e.g. adaptive curves).
    pub total_s: f64,
    /// Seconds of runs already finished.
    pub done_s: f64,
    pub runs_total: usize,
    pub runs_done: usize,
}

impl<'a> Session<'a> {
    /// Checks outputs, installs Ctrl-C handling and captures the environment.
    pub fn start(
        plan: &Plan,
        out: &'a OutputArgs,
        opts: &'a RunOptions,
        command: Vec<String>,
    ) -> Result<Self, AppError> {
        let log = check_outputs(out)?;
        run::interrupt::install();
        let doc = ResultDoc {
            schema: SCHEMA.into(),
            tool: Tool::current(),
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
            curve: None,
            steady_state: None,
        };
        for w in &plan.warnings {
            eprintln!("warning: {w}");
        }
        let quiet = out.quiet || stdout_is_json(out);
        // SAFETY: isatty only inspects the descriptor.
        let tty = unsafe { libc::isatty(1) == 1 && libc::isatty(2) == 1 };
        let total_s: f64 = plan
            .runs
            .iter()
            .map(|r| (r.warmup_ns + r.duration_ns.unwrap_or(0)) as f64 / 1e9)
            .sum();
        Ok(Session {
            doc,
            targets: plan.targets.clone(),
            out,
            opts,
            log,
            quiet,
            progress: (tty && !quiet).then(|| Progress {
                total_s,
                runs_total: plan.runs.len(),
                ..Default::default()
            }),
            exit_code: exit::OK,
        })
    }

    /// Whether the session should stop (Ctrl-C).
    pub fn stopped(&self) -> bool {
        self.doc.interrupted || run::interrupt::requested()
    }

    /// Prints a line unless quiet.
    pub fn say(&self, text: &str) {
        if !self.quiet {
            println!("{text}");
        }
    }

    /// Executes one run, prints it, records it and rewrites the outputs.
    pub fn run(&mut self, r: &RunSpec, label: &str) -> Result<&RunResult, AppError> {
        let quiet = self.quiet;
        if !quiet {
            println!(
                "\n{}{}: {}",
                r.name,
                label,
                terminal::workload_words(
                    &serde_json::to_value(&r.workloads[0]).unwrap_or_default()
                )
            );
            println!("{}", terminal::interval_header());
        }
        let mut n = 0u64;
        let mut log_err: Option<std::io::Error> = None;
        let name = r.name.clone();
        let log = &mut self.log;
        let progress = self.progress.clone();
        let run_s = (r.warmup_ns + r.duration_ns.unwrap_or(0)) as f64 / 1e9;
        let (result, mut warnings) = run::execute(r, &self.targets, self.opts, &mut |iv| {
            n += 1;
            if !quiet {
                if progress.is_some() {
                    eprint!("\r\x1b[K");
                }
                println!("{}", terminal::interval_line(iv, n));
            }
            if let Some(p) = &progress {
                eprint!(
                    "{}",
                    terminal::progress_line(
                        p.done_s,
                        p.total_s,
                        p.runs_done,
                        p.runs_total,
                        iv.t_s,
                        run_s,
                        iv
                    )
                );
            }
            if let Some(l) = log.as_mut() {
                if let Err(e) = l.append(&name, iv) {
                    log_err.get_or_insert(e);
                }
            }
        })
        .map_err(|e| AppError::Runtime(chain(&e)))?;
        if let Some(p) = self.progress.as_mut() {
            eprint!("\r\x1b[K");
            p.done_s += run_s;
            p.runs_done += 1;
        }
        if let Some(sc) = &result.schedule {
            if sc.achieved_pct < 99.0 && !result.interrupted {
                warnings.push(format!(
                    "run '{}': achieved {:.0} IOPS, only {:.1}% of the requested {:.0}: the target (or ioscope) could not keep up; latency_us includes the backlog",
                    result.name, sc.achieved_iops, sc.achieved_pct, sc.requested_iops
                ));
            }
        }
        for w in &warnings {
            eprintln!("warning: {w}");
        }
        self.doc.warnings.extend(warnings);
        if let Some(e) = log_err {
            eprintln!("warning: writing the intervals file failed: {e}");
        }
        if !stdout_is_json(self.out) && !self.out.no_run_summaries {
            print!("{}", terminal::run_summary(&result));
        }
        if result.verify.as_ref().is_some_and(|v| v.mismatches > 0) && self.exit_code == exit::OK {
            self.exit_code = exit::VERIFY_MISMATCH;
        }
        // Any I/O error fails the command; the policy only decided whether the run
        // went on.
        if result.end_reason == "error" || result.totals.all.errors > 0 {
            self.exit_code = exit::RUN_FAILED;
        }
        if result.interrupted {
            self.doc.interrupted = true;
            self.exit_code = exit::INTERRUPTED;
        }
        self.doc.runs.push(result);
        write_outputs(self.out, &self.doc)?;
        Ok(self.doc.runs.last().expect("just pushed"))
    }

    /// Rewrites the outputs (after changing the document, e.g. the curve summary).
    pub fn save(&self) -> Result<(), AppError> {
        write_outputs(self.out, &self.doc)
    }

    /// Final stdout output; returns what was measured.
    pub fn finish(self) -> Outcome {
        finish_stdout(self.out, &self.doc);
        Outcome {
            exit_code: self.exit_code,
            doc: self.doc,
        }
    }
}

/// Run options (error policy, data content, verification) from `run` flags over
/// what the plan's job description asked for (flags win).
pub fn run_options(
    a: &crate::cli::RunArgs,
    plan: &crate::plan::model::DataSettings,
) -> Result<RunOptions, AppError> {
    use crate::run::worker::ErrorPolicy;
    crate::target::smb::credentials::configure(crate::target::smb::credentials::SmbOptions {
        credentials_file: a.credentials.clone(),
        require_encryption: a.smb_encrypt,
    })
    .map_err(AppError::Input)?;
    let policy = match a.on_error.as_deref() {
        None | Some("stop") => ErrorPolicy::Stop,
        Some("continue") => ErrorPolicy::Continue,
        Some(other) => match other
            .strip_prefix("retry=")
            .and_then(|n| n.parse::<u32>().ok())
        {
            Some(n) if n > 0 => ErrorPolicy::Retry(n),
            _ => {
                return Err(AppError::Input(format!(
                    "--on-error '{other}': expected stop, continue or retry=N"
                )))
            }
        },
    };
    let ratio = |flag: &str, v: &Option<String>| -> Result<Option<f64>, AppError> {
        match v {
            None => Ok(None),
            Some(t) => t
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|r| r.is_finite() && *r >= 1.0)
                .map(Some)
                .ok_or_else(|| {
                    AppError::Input(format!(
                        "{flag} '{t}': expected a ratio of 1 or more, e.g. 2 or 2.5"
                    ))
                }),
        }
    };
    let mut settings = plan.clone();
    if let Some(r) = ratio("--dedup-ratio", &a.dedup_ratio)? {
        settings.dedup_ratio = Some(r);
    }
    if let Some(r) = ratio("--compress-ratio", &a.compress_ratio)? {
        settings.compress_ratio = Some(r);
    }
    if let Some(u) = &a.dedup_unit {
        settings.dedup_unit_bytes = Some(
            crate::plan::units::parse_size(u)
                .map_err(|e| AppError::Input(format!("--dedup-unit '{u}': {e}")))?,
        );
    }
    settings.verify |= a.verify;
    settings.verify_after |= a.verify_after;
    if let Some(j) = &a.journal {
        settings.journal = Some(j.display().to_string());
    }
    Ok(RunOptions {
        force: a.force,
        policy,
        data: data_options(&settings)?,
    })
}

/// The runner's data options from a plan's (or merged) data settings.
pub fn data_options(
    d: &crate::plan::model::DataSettings,
) -> Result<crate::run::data::DataOptions, AppError> {
    let mut spec = crate::data::DataSpec {
        dedup_ratio: d.dedup_ratio.unwrap_or(1.0),
        compress_ratio: d.compress_ratio.unwrap_or(1.0),
        ..Default::default()
    };
    if let Some(b) = d.dedup_unit_bytes {
        spec.dedup_unit =
            u32::try_from(b).map_err(|_| AppError::Input(format!("dedup unit {b}: too large")))?;
    }
    spec.validate()
        .map_err(|e| AppError::Input(format!("data settings: {e}")))?;
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

/// Runs every run of `plan` in order.
pub fn run_plan(
    plan: &Plan,
    out: &OutputArgs,
    opts: &RunOptions,
    command: Vec<String>,
) -> Result<Outcome, AppError> {
    // Every check that can fail happens before the first I/O of the first run.
    for r in &plan.runs {
        run::check(r, &plan.targets, opts).map_err(input_err)?;
    }
    let mut session = Session::start(plan, out, opts, command)?;
    if plan.runs.len() > 1 {
        let secs: f64 = plan
            .runs
            .iter()
            .map(|r| (r.warmup_ns + r.duration_ns.unwrap_or(0)) as f64 / 1e9)
            .sum();
        session.say(&format!(
            "plan: {} runs, about {:.0} s{}",
            plan.runs.len(),
            secs,
            if plan.runs.iter().any(|r| r.duration_ns.is_none()) {
                " plus pass-limited runs"
            } else {
                ""
            }
        ));
    }
    for (ri, r) in plan.runs.iter().enumerate() {
        if session.stopped() {
            break;
        }
        session.run(r, &format!(" ({}/{})", ri + 1, plan.runs.len()))?;
    }
    if !stdout_is_json(out) {
        if let Some(t) = terminal::sweep_table(&session.doc) {
            println!("\n{t}");
        }
    }
    Ok(session.finish())
}

/// True when stdout must carry only JSON.
pub fn stdout_is_json(out: &OutputArgs) -> bool {
    matches!(
        out.output_format.as_deref(),
        Some("json") | Some("fio-json")
    )
}

/// Checks every output path before the first I/O and opens the intervals stream.
fn check_outputs(out: &OutputArgs) -> Result<Option<IntervalLog>, AppError> {
    if let Some(f) = out.output_format.as_deref() {
        if !matches!(f, "text" | "json" | "fio-json") {
            return Err(AppError::Input(format!(
                "--output-format '{f}': expected text, json or fio-json"
            )));
        }
    }
    let paths = [
        ("--json", &out.json),
        ("--html", &out.html),
        ("--csv", &out.csv),
        ("--fio-json", &out.fio_json),
    ];
    for (flag, p) in paths {
        if let Some(p) = p {
            check_writable(p).map_err(|e| {
                AppError::Input(format!("{flag} '{}': cannot write there: {e}", p.display()))
            })?;
        }
    }
    match &out.json {
        Some(p) => Ok(Some(IntervalLog::create(&intervals_path(p)).map_err(
            |e| {
                AppError::Input(format!(
                    "cannot create '{}': {e}",
                    intervals_path(p).display()
                ))
            },
        )?)),
        None => Ok(None),
    }
}

/// Rewrites every output file from the results so far (after each run).
pub fn write_outputs(out: &OutputArgs, doc: &ResultDoc) -> Result<(), AppError> {
    let werr =
        |p: &Path, e: std::io::Error| AppError::Runtime(format!("writing '{}': {e}", p.display()));
    if let Some(p) = &out.json {
        write_atomic(p, doc).map_err(|e| werr(p, e))?;
    }
    type Render = fn(&ResultDoc) -> String;
    let rendered: [(&Option<std::path::PathBuf>, Render); 3] = [
        (&out.html, crate::report::html::render_html),
        (&out.csv, crate::report::csv::render_csv),
        (&out.fio_json, crate::report::fio_json::render),
    ];
    for (path, render) in rendered {
        if let Some(p) = path {
            write_atomic_bytes(p, render(doc).as_bytes()).map_err(|e| werr(p, e))?;
        }
    }
    Ok(())
}

/// What goes to stdout at the very end: Markdown, or the JSON forms.
fn finish_stdout(out: &OutputArgs, doc: &ResultDoc) {
    match out.output_format.as_deref() {
        Some("json") => println!("{}", serde_json::to_string_pretty(doc).unwrap_or_default()),
        Some("fio-json") => print!("{}", crate::report::fio_json::render(doc)),
        _ => {
            if out.markdown {
                println!("\n{}", crate::report::markdown::render_markdown(doc));
            }
        }
    }
}
