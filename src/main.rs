//! The ioscope binary: parse the command line, call the application, map errors to
//! the documented exit codes. Nothing else lives here.

use clap::Parser;
use ioscope::app::{self, exit, AppError};
use ioscope::cli::{to_plan, Cli, Command};
use ioscope::plan::jobfile;
use ioscope::run::{worker::ErrorPolicy, RunOptions};

fn main() {
    let cli = Cli::parse();
    let command: Vec<String> = std::env::args().collect();
    let result = match &cli.command {
        Command::Run(a) => run(a, command),
        Command::Quick(a) => app::quick(a, command).map(|o| o.exit_code),
        Command::Sysinfo(a) => app::sysinfo(a),
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
            let text = std::fs::read_to_string(path)
                .map_err(|e| AppError::Input(format!("job file '{}': {e}", path.display())))?;
            let mut plan = jobfile::parse(&path.display().to_string(), &text)
                .map_err(|e| AppError::Input(e.to_string()))?;
            to_plan::apply_overrides(a, &mut plan).map_err(|e| AppError::Input(e.to_string()))?;
            plan
        }
        None => to_plan::plan_from_flags(a).map_err(|e| AppError::Input(e.to_string()))?,
    };
    let policy = match a.on_error.as_deref() {
        None | Some("stop") => ErrorPolicy::Stop,
        Some("continue") => ErrorPolicy::Continue,
        Some(other) => {
            return Err(AppError::Input(format!(
                "--on-error '{other}': expected stop or continue"
            )))
        }
    };
    let opts = RunOptions {
        force: a.force,
        policy,
    };
    let outcome = app::run_plan(&plan, &a.output, &opts, command)?;
    let _ = exit::OK;
    Ok(outcome.exit_code)
}
