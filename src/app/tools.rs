//! Commands that read or describe rather than measure: `sysinfo`, `report`,
//! `compare` and `convert`; and `net serve|run`, handed to the network mode.

use super::{
    exit, stdout, AppError, CompareInvocation, ConvertInvocation, ConvertTo, FlagError,
    ReportInvocation, RerunInvocation, SysinfoInvocation,
};
use crate::plan::settings::CommandSettings;
use crate::report::export::Format;
use std::path::Path;

/// An output file written atomically, or the error naming it.
pub(super) fn write_file(p: &Path, text: &str) -> Result<(), AppError> {
    crate::report::json::write_atomic_bytes(p, text.as_bytes()).map_err(|source| AppError::Write {
        path: p.to_path_buf(),
        source,
    })
}

/// `ioscope sysinfo`: the environment and advice; never changes a setting.
pub fn sysinfo(a: &SysinfoInvocation) -> Result<i32, AppError> {
    let reqs: Vec<crate::sysinfo::TargetInfoRequest> = a
        .targets
        .iter()
        .map(|t| crate::sysinfo::TargetInfoRequest::new(t.clone()))
        .collect();
    let env = crate::sysinfo::capture(&reqs);
    if a.json {
        let text = serde_json::to_string_pretty(&env).unwrap_or_default();
        stdout::println(&text)?;
    } else {
        let advice = crate::sysinfo::advise(&env, a.qd);
        stdout::print(&crate::sysinfo::render_text(&env, &advice))?;
    }
    Ok(exit::OK)
}

pub(super) fn read_result(path: &std::path::Path) -> Result<crate::result::ResultDoc, AppError> {
    let text = std::fs::read_to_string(path).map_err(|source| AppError::Read {
        what: "result",
        path: path.to_path_buf(),
        source,
    })?;
    let doc: crate::result::ResultDoc =
        serde_json::from_str(&text).map_err(|source| AppError::NotAResult {
            path: path.to_path_buf(),
            line: source.line(),
            column: source.column(),
            source,
        })?;
    if !doc.schema.starts_with("ioscope.result/") {
        return Err(AppError::Refused(format!(
            "result '{}': unknown schema '{}'",
            path.display(),
            doc.schema
        )));
    }
    Ok(doc)
}

/// `ioscope report RESULT [-o PATH] [--format F]`.
pub fn report(a: &ReportInvocation) -> Result<i32, AppError> {
    let doc = read_result(&a.result)?;
    let from_ext = a
        .output
        .as_ref()
        .and_then(|p| p.extension())
        .and_then(|e| e.to_str())
        .and_then(Format::from_extension);
    let format = a.format.or(from_ext).unwrap_or(Format::Html);
    let text = format.render(&doc);
    match &a.output {
        Some(p) => write_file(p, &text)?,
        None => stdout::print(&text)?,
    }
    Ok(exit::OK)
}

/// `ioscope compare A B [more…] [--html PATH]`.
pub fn compare(a: &CompareInvocation) -> Result<i32, AppError> {
    use crate::report::compare;
    let docs = a
        .results
        .iter()
        .map(|p| Ok((p.display().to_string(), read_result(p)?)))
        .collect::<Result<Vec<_>, AppError>>()?;
    let c = compare::compare(&docs);
    stdout::print(&compare::render_compare_text(&c))?;
    if let Some(p) = &a.html {
        write_file(p, &compare::render_compare_html(&c))?;
    }
    Ok(exit::OK)
}

/// `ioscope convert FILE|ARGS --to toml|fio`.
pub fn convert(a: &ConvertInvocation) -> Result<i32, AppError> {
    use super::foreign::{read_job_file_for, translate_args};
    use super::invocation::Tool;
    let Some(first) = a.input.first().map(String::as_str) else {
        return Err(AppError::Refused(
            "convert needs a job file or a command line".into(),
        ));
    };
    let target = a.target.as_deref();
    let translated = match first {
        "fio" => translate_args(Tool::Fio, &a.input[1..], None)?,
        "vdbench" => translate_args(Tool::Vdbench, &a.input[1..], target)?,
        "diskspd" => translate_args(Tool::Diskspd, &a.input[1..], target)?,
        "sqlio" => translate_args(Tool::Sqlio, &a.input[1..], target)?,
        _ if a.input.len() == 1 => read_job_file_for(Path::new(first), target)?,
        _ => translate_args(Tool::Fio, &a.input, None)?,
    };
    for u in &translated.unsupported {
        eprintln!(
            "warning: not translated (unsupported) at {}: {}",
            u.location, u.option
        );
    }
    // What the translation does another way than the source: one line each.
    for w in &translated.plan.warnings {
        eprintln!("note: {w}");
    }
    // The native job file carries curves; a fio job file does not. A run's own
    // fio-format logs (over all its workloads) become its first job's in fio.
    let mut curves = Vec::new();
    if matches!(a.to, ConvertTo::Fio) {
        curves = curves_not_written(&translated.plan);
    }
    curves.extend(
        translated
            .plan
            .runs
            .iter()
            .filter(|r| {
                r.fio_logs.is_some() && r.workloads.len() > 1 && matches!(a.to, ConvertTo::Fio)
            })
            .map(|r| {
                format!(
                    "run '{}' writes fio-format logs over all its workloads; in fio they \
                     are its first job's own",
                    r.name
                )
            }),
    );
    for c in &curves {
        eprintln!("warning: not translated: {c}");
    }
    let text = match a.to {
        ConvertTo::Toml => crate::plan::emit::to_toml(&translated.plan)?,
        ConvertTo::Fio => crate::plan::emit::to_fio(&translated.plan).map_err(AppError::EmitFio)?,
    };
    stdout::print(&text)?;
    let dropped = translated.unsupported.len() + curves.len();
    if dropped == 0 {
        return Ok(exit::OK);
    }
    eprintln!(
        "convert: {dropped} option(s) dropped; the translation is partial (exit {})",
        exit::CONVERT_DROPPED
    );
    Ok(exit::CONVERT_DROPPED)
}

/// A curve (vdbench's iorate=curve, fio's latency_target) has no form in fio output:
/// one line per such run saying how to run it instead.
fn curves_not_written(plan: &crate::plan::model::Plan) -> Vec<String> {
    plan.runs
        .iter()
        .filter_map(|r| r.curve.as_ref().map(|c| (r, c)))
        .map(|(r, c)| {
            let pts: Vec<String> = c.points_pct.iter().map(|p| p.to_string()).collect();
            let mut flags = Vec::new();
            if !pts.is_empty() {
                flags.push(format!("--points {}", pts.join(",")));
            }
            for (flag, v) in [
                ("--stop-latency", &c.stop_latency),
                ("--max-latency", &c.max_latency),
            ] {
                if let Some(v) = v {
                    flags.push(format!("{flag} {v}"));
                }
            }
            format!(
                "run '{}' is a latency curve{}; the output runs it once — use \
                 `ioscope curve JOB {}`",
                r.name,
                c.origin
                    .as_deref()
                    .map(|o| format!(" ({o})"))
                    .unwrap_or_default(),
                flags.join(" ")
            )
        })
        .collect()
}

/// `ioscope rerun RESULT`: the effective plan recorded in a result, run again.
pub fn rerun(a: RerunInvocation) -> Result<i32, AppError> {
    let doc = read_result(&a.result)?;
    let plan_json = doc.plan.ok_or_else(|| {
        AppError::Refused(format!(
            "result '{}' holds no plan (written by a command that records none)",
            a.result.display()
        ))
    })?;
    let mut plan: crate::plan::model::Plan =
        serde_json::from_value(plan_json).map_err(|source| AppError::PlanUnreadable {
            path: a.result.clone(),
            source,
        })?;
    if !a.targets.is_empty() {
        if a.targets.len() != plan.targets.len() {
            return Err(FlagError::new(
                "--target",
                a.targets.join(","),
                format!(
                    "the plan has {} target(s); give --target once per target, in order",
                    plan.targets.len()
                ),
            )
            .into());
        }
        for (t, uri) in plan.targets.iter_mut().zip(&a.targets) {
            t.uri = uri.clone();
        }
    }
    let opts = crate::run::RunOptions {
        force: a.force,
        data: super::data_options(&plan.data)?,
        ..Default::default()
    };
    Ok(super::run_plan(&plan, &a.output, &opts, a.command)?.exit_code)
}

/// `ioscope net serve`: answers network tests until stopped, feeding `--metrics`'
/// registry from every test it serves.
pub fn net_serve(
    mut cfg: crate::net::ServeConfig,
    settings: &CommandSettings,
) -> Result<i32, AppError> {
    let served = super::live::serve(settings, "net serve")?;
    cfg.metrics = served.as_ref().map(|s| s.live.clone());
    Ok(crate::net::serve(&cfg)?)
}

/// `ioscope net run`: one network test, its intervals fed to `--metrics`' registry;
/// the exit code says how it ended.
pub fn net_run(
    mut cfg: crate::net::NetRunConfig,
    settings: &CommandSettings,
) -> Result<i32, AppError> {
    let served = super::live::serve(settings, "net run")?;
    cfg.metrics = served.as_ref().map(|s| s.live.clone());
    Ok(crate::net::run(&cfg)?.exit_code)
}
