//! Running foreign job descriptions: `ioscope fio|vdbench|diskspd|sqlio ARGS…` and
//! `ioscope run FILE` for fio and vdbench files. Unsupported options are never
//! silently ignored: the run is refused with their list and locations unless
//! `--ignore-unsupported`, which repeats the list as warnings in the output and result.

use super::invocation::Tool;
use super::{run_plan, AppError, ForeignInvocation};
use crate::plan::compat::{self, diskspd, fio, sqlio, vdbench, Format, Translated};
use crate::plan::model::Plan;
use crate::run::RunOptions;
use std::path::Path;

fn refused(e: impl std::fmt::Display) -> AppError {
    AppError::Refused(e.to_string())
}

/// Translates a foreign command line into a plan (no I/O).
pub fn translate_args(
    tool: Tool,
    args: &[String],
    target: Option<&str>,
) -> Result<Translated, AppError> {
    match tool {
        // Options, `--name` jobs and job files, as fio reads them.
        Tool::Fio => Ok(fio::parse_args(args)?),
        // `-f PARMFILE`, vdbench's other options and `name=value` substitutions.
        Tool::Vdbench => Ok(vdbench::parse_command(args, target)?),
        Tool::Diskspd => Ok(diskspd::parse_diskspd(args, target)?),
        Tool::Sqlio => Ok(sqlio::parse_sqlio(args, Path::new("."), target)?),
    }
}

/// Reads a job file of any supported kind: native TOML, fio, vdbench, or a file that
/// holds one fio/diskspd/SQLIO command line.
pub fn read_job_file(path: &Path) -> Result<Translated, AppError> {
    read_job_file_for(path, None)
}

/// [`read_job_file`], with `target` replacing every target of a diskspd or SQLIO
/// line or every lun of a vdbench file (`convert --target`). Lines starting with `#` in a command-line file are
/// comments (a source note above a published line).
pub fn read_job_file_for(path: &Path, target: Option<&str>) -> Result<Translated, AppError> {
    let text = std::fs::read_to_string(path).map_err(|source| AppError::Read {
        what: "job file",
        path: path.to_path_buf(),
        source,
    })?;
    let name = path.display().to_string();
    let native = path.extension().is_some_and(|e| e == "toml")
        || text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("[[") || l.starts_with("[defaults]")
        });
    if native {
        let plan = crate::plan::jobfile::parse(&name, &text)?;
        return Ok(Translated {
            plan,
            unsupported: Vec::new(),
        });
    }
    let words = || -> Result<Vec<String>, AppError> {
        let lines: Vec<&str> = text
            .lines()
            .map(|l| {
                if l.trim_start().starts_with('#') {
                    ""
                } else {
                    l
                }
            })
            .collect();
        let mut w = compat::split_command_line(&lines.join("\n"))?;
        if !w.is_empty() {
            w.remove(0);
        }
        Ok(w)
    };
    match compat::detect(&text) {
        Format::Fio => Ok(fio::parse_file(path, &fio::process_env)?),
        Format::Vdbench => Ok(vdbench::parse_text(
            &name,
            &text,
            path.parent().unwrap_or(Path::new(".")),
            &[],
            target,
        )?),
        Format::FioArgs => Ok(fio::parse_args(&words()?)?),
        Format::Diskspd => Ok(diskspd::parse_diskspd(&words()?, target)?),
        // A profile runs as `diskspd -X<file>` does.
        Format::DiskspdProfile => Ok(diskspd::parse_diskspd(
            &[format!("-X{}", path.display())],
            target,
        )?),
        Format::Sqlio => Ok(sqlio::parse_sqlio(
            &words()?,
            path.parent().unwrap_or(Path::new(".")),
            target,
        )?),
        Format::Unknown => {
            let plan = crate::plan::jobfile::parse(&name, &text)?;
            Ok(Translated {
                plan,
                unsupported: Vec::new(),
            })
        }
    }
}

/// Refuses a plan with unsupported options unless told to ignore them.
pub fn accept(t: Translated, ignore_unsupported: bool) -> Result<Plan, AppError> {
    let Translated {
        mut plan,
        unsupported,
    } = t;
    if unsupported.is_empty() {
        return Ok(plan);
    }
    let list: Vec<String> = unsupported
        .iter()
        .map(|u| format!("  {}: {}", u.location, u.option))
        .collect();
    if !ignore_unsupported {
        return Err(refused(format!(
            "these options are not supported (nothing was run):\n{}\nadd --ignore-unsupported to run without them",
            list.join("\n")
        )));
    }
    for u in unsupported {
        plan.warnings.push(format!(
            "ignored unsupported option at {}: {}",
            u.location, u.option
        ));
    }
    Ok(plan)
}

/// `ioscope fio|vdbench|diskspd|sqlio ARGS…`.
pub fn foreign(a: ForeignInvocation) -> Result<i32, AppError> {
    if a.args.is_empty() {
        return Err(refused(
            format!("no {:?} arguments given", a.tool).to_lowercase(),
        ));
    }
    let translated = translate_args(a.tool, &a.args, a.target.as_deref())?;
    let mut a = a;
    if a.tool == Tool::Diskspd {
        match diskspd_output(&diskspd::result_switches(&a.args)) {
            // -Rp…: diskspd checks the profile and prints it without running.
            DiskspdOutput::ProfileOnly => {
                let text = crate::plan::emit::to_toml(&translated.plan)?;
                crate::stdout::print(&text)?;
                return Ok(super::exit::OK);
            }
            DiskspdOutput::Xml if a.output.stdout_doc.is_none() => {
                a.output.stdout_doc = Some(crate::report::export::Format::DiskspdXml)
            }
            _ => {}
        }
    }
    if a.tool == Tool::Vdbench {
        a.output.vdbench_dir = vdbench::report_dir(&a.args)?.map(std::path::PathBuf::from);
    }
    let mut plan = accept(translated, a.ignore_unsupported)?;
    if let Some(path) = &a.output.stdout_file {
        crate::stdout::redirect(path.clone());
    }
    if let Some(t) = &a.target {
        compat::apply_target_override(&mut plan, t);
    }
    let opts = RunOptions {
        force: a.force,
        data: super::data_options(&plan.data)?,
        ..Default::default()
    };
    Ok(run_plan(&plan, &a.output, &opts, a.command)?.exit_code)
}

/// What diskspd's `-R` asks of the output.
#[derive(Debug, PartialEq, Eq)]
enum DiskspdOutput {
    Text,
    Xml,
    ProfileOnly,
}

/// diskspd's last `-R` among its switches (before the first target).
fn diskspd_output(args: &[String]) -> DiskspdOutput {
    let mut out = DiskspdOutput::Text;
    for a in args.iter().take_while(|a| a.starts_with('-')) {
        if let Some(r) = a.strip_prefix("-R") {
            out = match r {
                _ if r.starts_with('p') => DiskspdOutput::ProfileOnly,
                "xml" => DiskspdOutput::Xml,
                _ => DiskspdOutput::Text,
            };
        }
    }
    out
}
