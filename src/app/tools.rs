//! Commands that read or describe rather than measure: `sysinfo`, `report`,
//! `compare` and `convert`.

use super::{exit, AppError};

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

fn read_result(path: &std::path::Path) -> Result<crate::result::ResultDoc, AppError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| AppError::Input(format!("result '{}': {e}", path.display())))?;
    let doc: crate::result::ResultDoc = serde_json::from_str(&text).map_err(|e| {
        AppError::Input(format!(
            "result '{}':{}:{}: not an ioscope result: {e}",
            path.display(),
            e.line(),
            e.column()
        ))
    })?;
    if !doc.schema.starts_with("ioscope.result/") {
        return Err(AppError::Input(format!(
            "result '{}': unknown schema '{}'",
            path.display(),
            doc.schema
        )));
    }
    Ok(doc)
}

/// `ioscope report RESULT [-o PATH] [--format F]`.
pub fn report(a: &crate::cli::ReportArgs) -> Result<i32, AppError> {
    use crate::report::{csv, fio_json, html, markdown};
    let doc = read_result(&a.result)?;
    let ext = a
        .output
        .as_ref()
        .and_then(|p| p.extension())
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    let format = a
        .format
        .clone()
        .or_else(|| match ext.as_deref() {
            Some("csv") => Some("csv".into()),
            Some("md") => Some("markdown".into()),
            Some("json") => Some("fio-json".into()),
            _ => None,
        })
        .unwrap_or_else(|| "html".into());
    let text = match format.as_str() {
        "html" => html::render_html(&doc),
        "csv" => csv::render_csv(&doc),
        "markdown" | "md" => markdown::render_markdown(&doc),
        "fio-json" => fio_json::render(&doc),
        other => {
            return Err(AppError::Input(format!(
                "--format '{other}': expected html, csv, markdown or fio-json"
            )))
        }
    };
    match &a.output {
        Some(p) => crate::report::json::write_atomic_bytes(p, text.as_bytes())
            .map_err(|e| AppError::Runtime(format!("writing '{}': {e}", p.display())))?,
        None => print!("{text}"),
    }
    Ok(exit::OK)
}

/// `ioscope compare A B [more…] [--html PATH]`.
pub fn compare(a: &crate::cli::CompareArgs) -> Result<i32, AppError> {
    use crate::report::compare;
    let docs = a
        .results
        .iter()
        .map(|p| Ok((p.display().to_string(), read_result(p)?)))
        .collect::<Result<Vec<_>, AppError>>()?;
    let c = compare::compare(&docs);
    print!("{}", compare::render_compare_text(&c));
    if let Some(p) = &a.html {
        crate::report::json::write_atomic_bytes(p, compare::render_compare_html(&c).as_bytes())
            .map_err(|e| AppError::Runtime(format!("writing '{}': {e}", p.display())))?;
    }
    Ok(exit::OK)
}

/// `ioscope convert FILE|ARGS --to toml|fio`.
pub fn convert(a: &crate::cli::ConvertArgs) -> Result<i32, AppError> {
    use super::foreign::{read_job_file, translate_args, Tool};
    // `--to` may also come after the input, where clap left it in the trailing list.
    let mut to = a.to.clone();
    let mut input: Vec<String> = Vec::with_capacity(a.input.len());
    let mut it = a.input.iter();
    while let Some(x) = it.next() {
        if x == "--to" {
            to = it
                .next()
                .cloned()
                .ok_or_else(|| AppError::Input("--to needs a value".into()))?;
        } else if let Some(v) = x.strip_prefix("--to=") {
            to = v.to_string();
        } else {
            input.push(x.clone());
        }
    }
    let Some(first) = input.first().map(String::as_str) else {
        return Err(AppError::Input(
            "convert needs a job file or a command line".into(),
        ));
    };
    let a = crate::cli::ConvertArgs {
        to,
        input: input.clone(),
    };
    let translated = match first {
        "fio" => translate_args(Tool::Fio, &a.input[1..], None)?,
        "vdbench" => translate_args(Tool::Vdbench, &a.input[1..], None)?,
        "diskspd" => translate_args(Tool::Diskspd, &a.input[1..], None)?,
        "sqlio" => translate_args(Tool::Sqlio, &a.input[1..], None)?,
        _ if a.input.len() == 1 => read_job_file(std::path::Path::new(first))?,
        _ => translate_args(Tool::Fio, &a.input, None)?,
    };
    for u in &translated.unsupported {
        eprintln!(
            "warning: not translated (unsupported) at {}: {}",
            u.location, u.option
        );
    }
    let text = match a.to.as_str() {
        "toml" => crate::plan::emit::to_toml(&translated.plan)
            .map_err(|e| AppError::Input(format!("cannot write as TOML: {e}")))?,
        "fio" => crate::plan::emit::to_fio(&translated.plan)
            .map_err(|e| AppError::Input(format!("cannot write as fio: {e}")))?,
        other => {
            return Err(AppError::Input(format!(
                "--to '{other}': expected toml or fio"
            )))
        }
    };
    print!("{text}");
    Ok(exit::OK)
}

/// `ioscope rerun RESULT`: the effective plan recorded in a result, run again.
pub fn rerun(a: &crate::cli::RerunArgs, command: Vec<String>) -> Result<i32, AppError> {
    let doc = read_result(&a.result)?;
    let plan_json = doc.plan.ok_or_else(|| {
        AppError::Input(format!(
            "result '{}' holds no plan (written by a command that records none)",
            a.result.display()
        ))
    })?;
    let mut plan: crate::plan::model::Plan = serde_json::from_value(plan_json).map_err(|e| {
        AppError::Input(format!(
            "result '{}': its plan cannot be read: {e}",
            a.result.display()
        ))
    })?;
    if !a.target.is_empty() {
        if a.target.len() != plan.targets.len() {
            return Err(AppError::Input(format!(
                "--target: the plan has {} target(s); give --target once per target, in order",
                plan.targets.len()
            )));
        }
        for (t, uri) in plan.targets.iter_mut().zip(&a.target) {
            t.uri = uri.clone();
        }
    }
    let opts = crate::run::RunOptions {
        force: a.force,
        data: super::data_options(&plan.data)?,
        ..Default::default()
    };
    Ok(super::run_plan(&plan, &a.output, &opts, command)?.exit_code)
}
