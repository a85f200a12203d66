//! Parsed flags → [`Invocation`]: the one place where clap's structs become the
//! application's typed, clap-free description of the command. A job file named on
//! the command line is read here (through the application), so its flags can be
//! laid over it.

use super::foreign::split_own;
use super::*;
use crate::app::{
    self, AppError, CompareInvocation, ConvertInvocation, ConvertTo, CurveInvocation, FlagError,
    ForeignInvocation, ForeignTool, Invocation, Metric, Output, PtsInvocation, PtsTest,
    QuickInvocation, ReportInvocation, RerunInvocation, RunInvocation, Steady, SysinfoInvocation,
    VerifyInvocation,
};
use crate::plan::model::Plan;
use crate::run::RunOptions;

impl From<&OutputArgs> for Output {
    fn from(o: &OutputArgs) -> Self {
        Output {
            json: o.json.clone(),
            html: o.html.clone(),
            csv: o.csv.clone(),
            fio_json: o.fio_json.clone(),
            markdown: o.markdown,
            stdout_doc: o.output_format.and_then(|f| f.format),
            stdout_file: None,
            quiet: o.quiet,
            no_run_summaries: false,
            settings: o.command.settings(),
            vdbench_dir: None,
        }
    }
}

impl From<SteadyMetricArg> for Metric {
    fn from(m: SteadyMetricArg) -> Self {
        match m {
            SteadyMetricArg::Iops => Metric::Iops,
            SteadyMetricArg::Mbps => Metric::Mbps,
            SteadyMetricArg::MeanUs => Metric::MeanUs,
            SteadyMetricArg::P99Us => Metric::P99Us,
        }
    }
}

/// The invocation for a parsed command line. `command` is the command line as
/// typed, recorded in results. `completions` and `man` are not invocations of the
/// application: the binary handles them with [`generate`](super::generate), and
/// `net` with the network mode ([`crate::net`]).
pub fn invocation(cmd: Command, command: Vec<String>) -> Result<Invocation, AppError> {
    Ok(match cmd {
        Command::Run(a) => Invocation::Run(run_invocation(&a, command)?),
        Command::Replay(a) => Invocation::Run(run_invocation(&a.into_run(), command)?),
        Command::Curve(a) => Invocation::Curve(CurveInvocation {
            run: run_invocation(&a.run, command)?,
            points: a.points,
            stop_latency: a.stop_latency,
            max_latency: a.max_latency,
        }),
        Command::Pts(a) => Invocation::Pts(PtsInvocation {
            test: match a.test {
                PtsTestArg::Iops => PtsTest::Iops,
                PtsTestArg::Throughput => PtsTest::Throughput,
                PtsTestArg::Latency => PtsTest::Latency,
            },
            target: a.target,
            round_ns: a.round,
            precondition: a.precondition == PreconditionArg::Auto,
            precondition_max_bytes: a.precondition_max,
            max_rounds: a.max_rounds,
            size_bytes: a.size,
            engine: a.engine.unwrap_or(crate::plan::model::EngineKind::Auto),
            force: a.force,
            output: (&a.output).into(),
            command,
        }),
        Command::Quick(a) => Invocation::Quick(QuickInvocation {
            target: a.target,
            duration_ns: a.duration,
            size_bytes: a.size,
            force: a.force,
            output: (&a.output).into(),
            command,
        }),
        Command::Fio(a) => foreign(ForeignTool::Fio, &a.args, command)?,
        Command::Vdbench(a) => foreign(ForeignTool::Vdbench, &a.args, command)?,
        Command::Diskspd(a) => foreign(ForeignTool::Diskspd, &a.args, command)?,
        Command::Sqlio(a) => foreign(ForeignTool::Sqlio, &a.args, command)?,
        Command::Rerun(a) => Invocation::Rerun(RerunInvocation {
            result: a.result,
            targets: a.target,
            force: a.force,
            output: (&a.output).into(),
            command,
        }),
        Command::Convert(a) => Invocation::Convert(convert(a)?),
        Command::Report(a) => Invocation::Report(ReportInvocation {
            result: a.result,
            output: a.output,
            format: a.format.and_then(|f| f.format),
        }),
        Command::Compare(a) => Invocation::Compare(CompareInvocation {
            results: a.results,
            html: a.html,
        }),
        Command::Merge(a) => Invocation::Merge(crate::app::MergeInvocation {
            results: a.results,
            output: a.output,
            command,
        }),
        Command::Verify(a) => Invocation::Verify(VerifyInvocation {
            journal: a.journal,
            target: a.target,
            json: a.json,
        }),
        Command::Sysinfo(a) => Invocation::Sysinfo(SysinfoInvocation {
            targets: a.targets,
            qd: a.qd,
            json: a.json,
        }),
        Command::Completions(_) | Command::Man(_) | Command::Net(_) => {
            return Err(AppError::Refused(
                "completions, man pages and net are run by the binary itself".into(),
            ))
        }
    })
}

/// `run` (and the run part of `curve`): the plan from flags or a job file with flags
/// over it, and the options of this invocation.
pub fn run_invocation(a: &RunArgs, command: Vec<String>) -> Result<RunInvocation, AppError> {
    let plan = match &a.job {
        Some(path) => {
            let translated = app::read_job_file(path)?;
            let mut plan = app::accept_translated(translated, a.ignore_unsupported)?;
            to_plan::apply_overrides(a, &mut plan)?;
            plan
        }
        None => to_plan::plan_from_flags(a)?,
    };
    let opts = run_options(a, &plan)?;
    let steady = a.steady_state.then(|| Steady {
        metric: a.steady_metric.map(Metric::from).unwrap_or_default(),
        max_rounds: a.max_rounds,
    });
    Ok(RunInvocation {
        plan,
        opts,
        steady,
        output: (&a.output).into(),
        command,
    })
}

/// Run options (error policy, data content, verification) from `run` flags over what
/// the plan's job description asked for (flags win).
fn run_options(a: &RunArgs, plan: &Plan) -> Result<RunOptions, AppError> {
    use crate::target::smb::credentials;
    credentials::configure(credentials::SmbOptions {
        credentials_file: a.credentials.clone(),
        require_encryption: a.smb_encrypt,
    })?;
    let mut settings = plan.data.clone();
    if let Some(r) = a.dedup_ratio {
        settings.dedup_ratio = Some(r);
    }
    if let Some(r) = a.compress_ratio {
        settings.compress_ratio = Some(r);
    }
    if let Some(u) = a.dedup_unit {
        settings.dedup_unit_bytes = Some(u);
    }
    settings.verify |= a.verify;
    settings.verify_after |= a.verify_after;
    if let Some(j) = &a.journal {
        settings.journal = Some(j.display().to_string());
    }
    Ok(RunOptions {
        force: a.force,
        policy: a.on_error.unwrap_or(crate::run::worker::ErrorPolicy::Stop),
        data: app::data_options(&settings)?,
        io_timeout_ns: a.io_timeout,
        repetition: 0,
        connections: a.connections.unwrap_or(1),
        metrics: None,
    })
}

/// A foreign tool's arguments, with ioscope's own options split out.
fn foreign(
    tool: ForeignTool,
    args: &[String],
    command: Vec<String>,
) -> Result<Invocation, AppError> {
    let (own, rest) = split_own(args, tool == ForeignTool::Fio)?;
    Ok(Invocation::Foreign(ForeignInvocation {
        tool,
        args: rest,
        target: own.target,
        ignore_unsupported: own.ignore_unsupported,
        force: own.force,
        output: own.output,
        command,
    }))
}

/// `convert`: `--to` may also come after the input, where clap left it in the
/// trailing list.
fn convert(a: ConvertArgs) -> Result<ConvertInvocation, AppError> {
    let mut to = a.to;
    let mut target = a.target;
    let mut input: Vec<String> = Vec::with_capacity(a.input.len());
    let mut it = a.input.into_iter();
    let parse = |v: &str| {
        ConvertForm::from_str(v, false)
            .map_err(|_| FlagError::new("--to", v, "expected toml or fio"))
    };
    while let Some(x) = it.next() {
        if x == "--to" {
            let v = it
                .next()
                .ok_or_else(|| FlagError::new("--to", "", "needs a value"))?;
            to = parse(&v)?;
        } else if let Some(v) = x.strip_prefix("--to=") {
            to = parse(v)?;
        } else if x == "--target" {
            target = Some(
                it.next()
                    .ok_or_else(|| FlagError::new("--target", "", "needs a value"))?,
            );
        } else if let Some(v) = x.strip_prefix("--target=") {
            target = Some(v.to_string());
        } else {
            input.push(x);
        }
    }
    Ok(ConvertInvocation {
        to: match to {
            ConvertForm::Toml => ConvertTo::Toml,
            ConvertForm::Fio => ConvertTo::Fio,
        },
        input,
        target,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn run_args(args: &[&str]) -> RunArgs {
        let mut all = vec!["ioscope", "run"];
        all.extend_from_slice(args);
        match Cli::try_parse_from(all).unwrap().command {
            Command::Run(a) => *a,
            _ => unreachable!(),
        }
    }

    #[test]
    fn flags_arrive_typed_and_sweeps_expand() {
        let a = run_args(&["--target", "mem:1m", "--bs", "4k,64k", "--qd", "1,8"]);
        assert_eq!(a.bs, vec![4096, 65536]);
        let plan = to_plan::plan_from_flags(&a).unwrap();
        let names: Vec<&str> = plan.runs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            ["bs=4k qd=1", "bs=4k qd=8", "bs=64k qd=1", "bs=64k qd=8"]
        );
        assert_eq!(plan.runs[3].workloads[0].qd, 8);
    }

    #[test]
    fn refused_values_name_the_flag() {
        for (args, flag) in [
            (vec!["--bs", "4kk"], "--bs"),
            (vec!["--qd", "0"], "--qd"),
            (vec!["--on-error", "maybe"], "--on-error"),
            (vec!["--interval", "1ms"], "--interval"),
            (vec!["--output-format", "xml"], "--output-format"),
        ] {
            let mut all = vec!["ioscope", "run", "--target", "mem:1m"];
            all.extend(args);
            let e = Cli::try_parse_from(&all).unwrap_err().to_string();
            assert!(e.contains(flag), "{all:?}: {e}");
        }
    }

    #[test]
    fn convert_takes_to_after_the_input() {
        let c = convert(ConvertArgs {
            to: ConvertForm::Toml,
            target: None,
            input: vec![
                "job.fio".into(),
                "--to".into(),
                "fio".into(),
                "--target=/tmp/x".into(),
            ],
        })
        .unwrap();
        assert_eq!(c.to, ConvertTo::Fio);
        assert_eq!(c.input, vec!["job.fio".to_string()]);
        assert_eq!(c.target.as_deref(), Some("/tmp/x"));
        assert!(convert(ConvertArgs {
            to: ConvertForm::Toml,
            target: None,
            input: vec!["job.fio".into(), "--to=xml".into()],
        })
        .is_err());
    }
}
