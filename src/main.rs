//! The ioscope binary: parse the command line, call the application, map errors to
//! the documented exit codes. Nothing else lives here.

use clap::Parser;
use ioscope::app::{self, exit, AppError, ForeignTool};
use ioscope::cli::{to_plan, Cli, Command};

fn main() {
    // Histograms of a few hundred KiB are built and dropped at every interval. With
    // glibc's sliding mmap threshold they end up in the heap, whose fragments make the
    // resident size wander by ~0.5 MiB from one interval to the next. A fixed
    // threshold keeps large blocks mapped and returns them on free, so memory stays
    // flat over a long run.
    // SAFETY: mallopt only changes allocator tuning; called before any threads start.
    #[cfg(target_env = "gnu")]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 * 1024)
    };
    let cli = Cli::parse();
    let command: Vec<String> = std::env::args().collect();
    let result = match &cli.command {
        Command::Run(a) => run(a, command),
        Command::Quick(a) => app::quick(a, command).map(|o| o.exit_code),
        Command::Sysinfo(a) => app::sysinfo(a),
        Command::Fio(a) => app::foreign(ForeignTool::Fio, &a.args, command),
        Command::Vdbench(a) => app::foreign(ForeignTool::Vdbench, &a.args, command),
        Command::Diskspd(a) => app::foreign(ForeignTool::Diskspd, &a.args, command),
        Command::Sqlio(a) => app::foreign(ForeignTool::Sqlio, &a.args, command),
        Command::Convert(a) => app::convert(a),
        Command::Verify(a) => app::verify(a),
        Command::Rerun(a) => app::rerun(a, command),
        Command::Curve(a) => app::curve(a, command),
        Command::Pts(a) => app::pts(a, command),
        Command::Report(a) => app::report(a),
        Command::Compare(a) => app::compare(a),
        Command::Net(a) => net(a, command),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(e.exit_code());
        }
    }
}

fn run(a: &ioscope::cli::RunArgs, command: Vec<String>) -> Result<i32, AppError> {
    let plan = match &a.job {
        Some(path) => {
            let translated = app::read_job_file(path)?;
            let mut plan = app::accept_translated(translated, a.ignore_unsupported)?;
            to_plan::apply_overrides(a, &mut plan).map_err(|e| AppError::Input(e.to_string()))?;
            plan
        }
        None => to_plan::plan_from_flags(a).map_err(|e| AppError::Input(e.to_string()))?,
    };
    let opts = app::run_options(a, &plan.data)?;
    if a.steady_state {
        return app::steady_run(
            &plan,
            &a.output,
            &opts,
            a.steady_metric.as_deref(),
            a.max_rounds,
            command,
        );
    }
    let outcome = app::run_plan(&plan, &a.output, &opts, command)?;
    let _ = exit::OK;
    Ok(outcome.exit_code)
}

/// `ioscope net …`: flags to typed settings (bad ones exit 2), then the network mode.
fn net(a: &ioscope::cli::net::NetArgs, command: Vec<String>) -> Result<i32, AppError> {
    use ioscope::cli::net::NetCommand;
    let net_err = |e: ioscope::net::NetError| match e.exit_code() {
        exit::BAD_INPUT => AppError::Input(e.to_string()),
        _ => AppError::Runtime(e.to_string()),
    };
    match &a.command {
        NetCommand::Serve(s) => {
            ioscope::net::serve(&s.to_config().map_err(AppError::Input)?).map_err(net_err)
        }
        NetCommand::Run(r) => ioscope::net::run(&r.to_config(command).map_err(AppError::Input)?)
            .map(|o| o.exit_code)
            .map_err(net_err),
    }
}
