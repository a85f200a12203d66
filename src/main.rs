//! The ioscope binary: parse the command line, hand the typed invocation to the
//! application, map errors to the documented exit codes. Nothing else lives here.

use clap::Parser;
use ioscope::app::{self, AppError};
use ioscope::cli::{build, generate, Cli, Command};

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
    // Under mpirun (with the `mpi` feature): join the other ranks first.
    let split = match &cli.command {
        Command::Run(a) => a.split,
        Command::Replay(a) => a.run.split,
        Command::Curve(a) => a.run.split,
        Command::Fio(a) | Command::Vdbench(a) | Command::Diskspd(a) | Command::Sqlio(a) => {
            // A bad value is refused with the other own options, in build.
            ioscope::cli::foreign::split_own(&a.args, false)
                .map(|(own, _)| own.split)
                .unwrap_or_default()
        }
        _ => ioscope::cluster::Split::All,
    };
    if let Err(e) = ioscope::cluster::init(split) {
        eprintln!("error: {e}");
        ioscope::cluster::exit(app::exit::RUN_FAILED);
    }
    let result = match cli.command {
        Command::Completions(a) => generate::completions(a.shell),
        Command::Man(a) => generate::man(a.dir.as_deref()),
        Command::Net(a) => net(&a, command),
        Command::Vdbench(a) if a.asks_help() => generate::subcommand_help("vdbench"),
        Command::Diskspd(a) if a.asks_help() => generate::subcommand_help("diskspd"),
        Command::Sqlio(a) if a.asks_help() => generate::subcommand_help("sqlio"),
        cmd => build::invocation(cmd, command).and_then(app::execute),
    };
    match result {
        Ok(code) => ioscope::cluster::exit(code),
        Err(e) => exit_with(&e),
    }
}

/// Prints the error with its causes ("context: cause: root cause") and exits with
/// the code its type implies; a closed stdout ends quietly.
fn exit_with(e: &AppError) -> ! {
    if !e.is_quiet() {
        eprintln!("error: {}", app::chain(e));
    }
    ioscope::cluster::exit(e.exit_code())
}

/// `ioscope net …`: flags to typed settings (bad ones exit 2), then the network mode.
fn net(a: &ioscope::cli::net::NetArgs, command: Vec<String>) -> Result<i32, AppError> {
    use ioscope::cli::net::NetCommand;
    match &a.command {
        NetCommand::Serve(s) => app::net_serve(s.to_config()?, &s.command.settings()),
        NetCommand::Run(r) => app::net_run(r.to_config(command)?, &r.command.settings()),
    }
}
