//! The application layer: runs a plan end to end — checks every run before the first
//! I/O, executes runs in order, prints interval lines and summaries, writes the JSON
//! result after every run and streams intervals — and implements `quick`.
//! The binary maps [`AppError`] to exit codes; nothing here exits the process.

use crate::cli::{OutputArgs, QuickArgs};
use crate::plan::model::*;
use crate::plan::units::{parse_duration_ns, HumanBytes};
use crate::report::json::{check_writable, intervals_path, write_atomic, IntervalLog};
use crate::report::model::{ResultDoc, Tool, SCHEMA};
use crate::report::terminal;
use crate::run::{self, RunOptions};
use std::path::{Path, PathBuf};

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
    AppError::Input(chain(&e))
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
    let mut log = match &out.json {
        Some(p) => {
            check_writable(p).map_err(|e| {
                AppError::Input(format!("--json '{}': cannot write there: {e}", p.display()))
            })?;
            Some(IntervalLog::create(&intervals_path(p)).map_err(|e| {
                AppError::Input(format!(
                    "cannot create '{}': {e}",
                    intervals_path(p).display()
                ))
            })?)
        }
        None => None,
    };
    run::interrupt::install();
    let mut doc = ResultDoc {
        schema: SCHEMA.into(),
        tool: Tool::current(),
        started_unix_s: crate::stats::clock::unix_s(),
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
    };
    for w in &plan.warnings {
        eprintln!("warning: {w}");
    }
    if plan.runs.len() > 1 && !out.quiet {
        let secs: f64 = plan
            .runs
            .iter()
            .map(|r| (r.warmup_ns + r.duration_ns.unwrap_or(0)) as f64 / 1e9)
            .sum();
        println!(
            "plan: {} runs, about {:.0} s{}",
            plan.runs.len(),
            secs,
            if plan.runs.iter().any(|r| r.duration_ns.is_none()) {
                " plus pass-limited runs"
            } else {
                ""
            }
        );
    }
    let mut exit_code = exit::OK;
    for (ri, r) in plan.runs.iter().enumerate() {
        if run::interrupt::requested() {
            break;
        }
        if !out.quiet {
            println!(
                "\n{} ({}/{}): {}",
                r.name,
                ri + 1,
                plan.runs.len(),
                terminal::workload_words(
                    &serde_json::to_value(&r.workloads[0]).unwrap_or_default()
                )
            );
            println!("{}", terminal::interval_header());
        }
        let mut n = 0u64;
        let mut log_err: Option<std::io::Error> = None;
        let quiet = out.quiet;
        let name = r.name.clone();
        let (result, warnings) = run::execute(r, &plan.targets, opts, &mut |iv| {
            n += 1;
            if !quiet {
                println!("{}", terminal::interval_line(iv, n));
            }
            if let Some(l) = log.as_mut() {
                if let Err(e) = l.append(&name, iv) {
                    log_err.get_or_insert(e);
                }
            }
        })
        .map_err(|e| AppError::Runtime(chain(&e)))?;
        let mut warnings = warnings;
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
        doc.warnings.extend(warnings);
        if let Some(e) = log_err {
            eprintln!("warning: writing the intervals file failed: {e}");
        }
        print!("{}", terminal::run_summary(&result));
        if result.end_reason == "error" {
            exit_code = exit::RUN_FAILED;
        }
        if result.interrupted {
            doc.interrupted = true;
            exit_code = exit::INTERRUPTED;
        }
        doc.runs.push(result);
        if let Some(p) = &out.json {
            write_atomic(p, &doc)
                .map_err(|e| AppError::Runtime(format!("writing '{}': {e}", p.display())))?;
        }
        if doc.interrupted {
            break;
        }
    }
    Ok(Outcome { doc, exit_code })
}

/// `ioscope sysinfo`: the environment and advice; never changes a setting.
pub fn sysinfo(a: &crate::cli::SysinfoArgs) -> Result<i32, AppError> {
    let reqs: Vec<crate::sysinfo::TargetInfoRequest> = a
        .targets
        .iter()
        .map(|t| crate::sysinfo::TargetInfoRequest::new(t.clone()))
        .collect();
    let env = crate::sysinfo::capture(&reqs);
    if a.json {
        let text = serde_json::to_string_pretty(&env)
            .map_err(|e| AppError::Runtime(format!("serialising: {e}")))?;
        println!("{text}");
    } else {
        let advice = crate::sysinfo::advise(&env, a.qd);
        print!("{}", crate::sysinfo::render_text(&env, &advice));
    }
    Ok(exit::OK)
}

/// Removes the scratch file of `quick` however the command ends.
struct Scratch(Option<PathBuf>);

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Free bytes on the filesystem holding `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct; the path is a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// `ioscope quick`: four short tests and a summary table.
pub fn quick(a: &QuickArgs, command: Vec<String>) -> Result<Outcome, AppError> {
    let duration_ns = parse_duration_ns(&a.duration)
        .map_err(|e| AppError::Input(format!("--duration '{}': {e}", a.duration)))?;
    let want = match &a.size {
        Some(v) => crate::plan::units::parse_size(v)
            .map_err(|e| AppError::Input(format!("--size '{v}': {e}")))?,
        None => 1 << 30,
    };
    let (uri, scratch, writes_ok, size) = match &a.target {
        None => {
            let dir = std::env::temp_dir();
            let (p, size) = scratch_in(&dir, want)?;
            (p.display().to_string(), Some(p), true, Some(size))
        }
        Some(t) if t.is_dir() => {
            let (p, size) = scratch_in(t, want)?;
            (p.display().to_string(), Some(p), true, Some(size))
        }
        Some(t) => {
            use std::os::unix::fs::FileTypeExt;
            let meta = std::fs::metadata(t)
                .map_err(|e| AppError::Input(format!("target '{}': {e}", t.display())))?;
            let is_block = meta.file_type().is_block_device();
            (t.display().to_string(), None, !is_block || a.force, None)
        }
    };
    let _guard = Scratch(scratch);
    let target = TargetSpec {
        name: "t0".into(),
        uri,
        size_bytes: size,
        direct: None,
    };
    let mk = |name: &str, pattern: AccessPattern, read_pct: u8, bs: u64, qd: u32| RunSpec {
        name: name.into(),
        workloads: vec![Workload {
            name: name.into(),
            target: "t0".into(),
            read_pct,
            pattern,
            bs: BlockSizes::fixed(bs),
            qd,
            streams: 1,
            rate: Rate::Max,
            offset_bytes: 0,
            size_bytes: None,
            ..Default::default()
        }],
        engine: EngineKind::Auto,
        duration_ns: Some(duration_ns),
        passes: None,
        warmup_ns: 1_000_000_000,
        interval_ns: 1_000_000_000,
        cpus: None,
        workers: None,
        seed: 1,
    };
    let mut runs = vec![mk("4k-randread", AccessPattern::Random, 100, 4096, 32)];
    if writes_ok {
        runs.push(mk("4k-randwrite", AccessPattern::Random, 0, 4096, 32));
    }
    runs.push(mk("1m-seqread", AccessPattern::Sequential, 100, 1 << 20, 8));
    if writes_ok {
        runs.push(mk("1m-seqwrite", AccessPattern::Sequential, 0, 1 << 20, 8));
    }
    let mut warnings = Vec::new();
    if !writes_ok {
        warnings.push(format!(
            "'{}' is a block device: only the read tests run (add --force to run the write tests, destroying its contents)",
            target.uri
        ));
    }
    let plan = Plan {
        targets: vec![target],
        runs,
        warnings,
    };
    if let Some(s) = size {
        if !a.output.quiet {
            println!(
                "quick: scratch file of {} ({})",
                HumanBytes(s),
                plan.targets[0].uri
            );
        }
    }
    let quiet_out = OutputArgs {
        json: a.output.json.clone(),
        quiet: true,
    };
    let opts = RunOptions {
        force: a.force,
        ..Default::default()
    };
    let outcome = run_plan(&plan, &quiet_out, &opts, command)?;
    println!("\n{}", quick_table(&outcome.doc));
    Ok(outcome)
}

/// Picks a scratch path and size (1 GiB, or a quarter of the free space when short).
fn scratch_in(dir: &Path, want: u64) -> Result<(PathBuf, u64), AppError> {
    let free = free_bytes(dir)
        .ok_or_else(|| AppError::Input(format!("'{}': cannot read free space", dir.display())))?;
    let size = want.min(free / 4) / (1 << 20) * (1 << 20);
    if size < 16 << 20 {
        return Err(AppError::Input(format!(
            "'{}' has only {} free; quick needs a scratch file of at least 16 MiB (a quarter of the free space)",
            dir.display(),
            HumanBytes(free)
        )));
    }
    let p = dir.join(format!("ioscope-quick-{}.dat", std::process::id()));
    Ok((p, size))
}

/// The summary table `quick` prints.
pub fn quick_table(doc: &ResultDoc) -> String {
    let mut s = format!(
        "{:<14} {:>12} {:>10} {:>11} {:>11} {:>11} {:>8}\n",
        "test", "IOPS", "MB/s", "mean lat", "p99 lat", "p99.9 lat", "errors"
    );
    for r in &doc.runs {
        let t = &r.totals.all;
        s.push_str(&format!(
            "{:<14} {:>12.0} {:>10.1} {:>8.1} us {:>8.1} us {:>8.1} us {:>8}\n",
            r.name,
            t.iops,
            t.mbps,
            t.latency_us.mean,
            t.latency_us.p99,
            t.latency_us.p99_9,
            t.errors
        ));
    }
    s.push_str(&format!(
        "target: {} ({} engine)",
        doc.runs.first().map(|r| r.target.as_str()).unwrap_or("-"),
        doc.runs.first().map(|r| r.engine.as_str()).unwrap_or("-")
    ));
    s
}
