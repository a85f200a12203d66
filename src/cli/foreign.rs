//! Foreign command lines (fio, vdbench, diskspd, SQLIO) with ioscope's own options
//! mixed in: `ioscope sqlio -s10 -o16 -b8 -frandom F --json r.json`. This splits
//! ioscope's options out and leaves the rest, in order, for the foreign parser.

use crate::app::{FlagError, Output};
use crate::report::export::{Form, Format, Place};
use std::path::PathBuf;

/// ioscope's own options found among foreign arguments.
#[derive(Debug, Clone, Default)]
pub struct OwnArgs {
    pub output: Output,
    pub target: Option<String>,
    pub ignore_unsupported: bool,
    pub force: bool,
    /// `--split all|streams` under mpirun, as `ioscope run` has it.
    pub split: crate::cluster::Split,
}

/// Options that take a value.
const WITH_VALUE: [&str; 13] = [
    // fio's report file (fio mode only).
    "--output",
    "--metrics",
    // fio's terse version (3, 4 or 5; fio mode only).
    "--terse-version",
    "--progress",
    // fio's own status-line options, read as `--progress` (fio mode only).
    "--eta",
    "--eta-newline",
    "--split",
    "--json",
    "--html",
    "--csv",
    "--fio-json",
    "--output-format",
    "--target",
];
/// Options that are flags.
const FLAGS: [&str; 4] = [
    "--markdown",
    "--ignore-unsupported",
    "--force",
    "--metrics-per-rank",
];

/// Splits ioscope's own options from the foreign ones. `fio_mode` maps fio's own
/// `--output-format=json` to fio-compatible JSON, which is what a fio user expects.
pub fn split_own(args: &[String], fio_mode: bool) -> Result<(OwnArgs, Vec<String>), FlagError> {
    let mut own = OwnArgs::default();
    let mut rest = Vec::new();
    let mut terse_version = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let fio_only = matches!(
            name,
            "--eta" | "--eta-newline" | "--terse-version" | "--output"
        );
        if WITH_VALUE.contains(&name) && (fio_mode || !fio_only) {
            let value = match inline {
                Some(v) => v,
                None => {
                    i += 1;
                    args.get(i).cloned().ok_or_else(|| {
                        FlagError::new(name, "", format!("argument {i}: {name} needs a value"))
                    })?
                }
            };
            match name {
                "--split" => {
                    own.split = super::values::split(&value)
                        .map_err(|e| FlagError::new("--split", value.as_str(), e))?
                }
                "--json" => own.output.json = Some(PathBuf::from(value)),
                "--html" => own.output.html = Some(PathBuf::from(value)),
                "--csv" => own.output.csv = Some(PathBuf::from(value)),
                "--fio-json" => own.output.fio_json = Some(PathBuf::from(value)),
                "--terse-version" => terse_version = Some(terse(&value)?),
                "--output-format" => own.output.stdout_doc = stdout_form(&value, fio_mode)?,
                "--target" => own.target = Some(value),
                "--output" => own.output.stdout_file = Some(PathBuf::from(value)),
                _ => command_setting(&mut own.output, name, &value)?,
            }
        } else if fio_mode && name == "--minimal" && inline.is_none() {
            own.output.stdout_doc = Some(Format::FioTerse(3));
        } else if FLAGS.contains(&name) && inline.is_none() {
            match name {
                "--markdown" => own.output.markdown = true,
                "--ignore-unsupported" => own.ignore_unsupported = true,
                "--metrics-per-rank" => command_setting(&mut own.output, name, "true")?,
                _ => own.force = true,
            }
        } else {
            rest.push(a.clone());
        }
        i += 1;
    }
    if let (Some(v), Some(Format::FioTerse(_))) = (terse_version, own.output.stdout_doc) {
        own.output.stdout_doc = Some(Format::FioTerse(v));
    }
    Ok((own, rest))
}

/// `--output-format` among foreign arguments: a stdout form by its name, or in fio mode
/// by fio's own word for it (`json` is then fio's JSON, `json+` and `terse` fio's).
fn stdout_form(value: &str, fio_mode: bool) -> Result<Option<Format>, FlagError> {
    let fio = fio_mode.then(|| Form::fio_named(value)).flatten();
    let form = fio
        .or_else(|| Form::named(Place::Stdout, value))
        .ok_or_else(|| {
            FlagError::new(
                "--output-format",
                value,
                format!(
                    "expected {} (json, json+ and terse as fio's own)",
                    Form::names(Place::Stdout)
                ),
            )
        })?;
    Ok(form.format)
}

/// fio's `--terse-version`: one of the versions ioscope writes.
fn terse(value: &str) -> Result<u32, FlagError> {
    use crate::report::fio_terse::VERSIONS;
    value
        .trim()
        .parse()
        .ok()
        .filter(|v| VERSIONS.contains(v))
        .ok_or_else(|| {
            FlagError::new(
                "--terse-version",
                value,
                "ioscope writes fio's terse versions 3 (fio's default), 4 and 5",
            )
        })
}

/// A command setting among foreign arguments: ioscope's own flags by their
/// declarations, and fio's `--eta=always|never|auto` and `--eta-newline=TIME` as the
/// status line they ask for (`--eta-newline`: a new line every interval).
fn command_setting(out: &mut Output, name: &str, value: &str) -> Result<(), FlagError> {
    use crate::plan::settings::declared::{METRICS, METRICS_PER_RANK, PROGRESS};
    let (decl, text) = match name {
        "--metrics" => (&METRICS, value),
        "--metrics-per-rank" => (&METRICS_PER_RANK, value),
        "--eta-newline" => (&PROGRESS, "lines"),
        _ => (&PROGRESS, value),
    };
    let v = decl
        .parse_text(text)
        .map_err(|e| FlagError::new(name, value, e))?;
    out.settings.set(decl, v);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn own_options_come_out_in_any_form() {
        let (own, rest) = split_own(
            &v(&[
                "-s10",
                "-o16",
                "--json",
                "r.json",
                "-b8",
                "--html=r.html",
                "-frandom",
                "F",
                "--ignore-unsupported",
            ]),
            false,
        )
        .unwrap();
        assert_eq!(rest, v(&["-s10", "-o16", "-b8", "-frandom", "F"]));
        assert_eq!(own.output.json.unwrap().to_str(), Some("r.json"));
        assert_eq!(own.output.html.unwrap().to_str(), Some("r.html"));
        assert!(own.ignore_unsupported);
    }

    #[test]
    fn fio_eta_options_set_the_status_line_and_metrics_are_own_options() {
        use crate::plan::settings::declared::{METRICS, PROGRESS};
        let (own, rest) =
            split_own(&v(&["--name=x", "--eta=never", "--metrics", "9100"]), true).unwrap();
        assert_eq!(rest, v(&["--name=x"]));
        assert_eq!(own.output.settings.get(&PROGRESS).as_str(), "never");
        assert_eq!(own.output.settings.get(&METRICS).as_str(), "9100");
        let (own, _) = split_own(&v(&["--eta-newline=2", "--name=x"]), true).unwrap();
        assert_eq!(own.output.settings.get(&PROGRESS).as_str(), "lines");
        let e = split_own(&v(&["--eta=sometimes"]), true).unwrap_err();
        assert!(e.to_string().contains("sometimes"), "{e}");
        // Other tools' parsers get them as they are.
        let (_, rest) = split_own(&v(&["--eta=never"]), false).unwrap();
        assert_eq!(rest, v(&["--eta=never"]));
    }

    #[test]
    fn fio_output_format_json_means_fio_json() {
        let (own, rest) = split_own(&v(&["--name=x", "--output-format=json"]), true).unwrap();
        assert_eq!(
            own.output.stdout_doc,
            Some(crate::report::export::Format::FioJson)
        );
        assert_eq!(rest, v(&["--name=x"]));
        let (own, _) = split_own(&v(&["--output-format=json+"]), true).unwrap();
        assert_eq!(
            own.output.stdout_doc,
            Some(crate::report::export::Format::FioJsonPlus)
        );
        for args in [
            &["--minimal"][..],
            &["--output-format=terse"],
            &["--output-format", "terse"],
        ] {
            let (own, _) = split_own(&v(args), true).unwrap();
            assert_eq!(own.output.stdout_doc, Some(Format::FioTerse(3)), "{args:?}");
        }
        let (own, _) = split_own(&v(&["--terse-version=5", "--minimal"]), true).unwrap();
        assert_eq!(own.output.stdout_doc, Some(Format::FioTerse(5)));
        let e = split_own(&v(&["--minimal", "--terse-version=2"]), true).unwrap_err();
        assert!(e.to_string().contains("--terse-version"), "{e}");
        // Not fio's: another tool's parser gets it.
        let (own, rest) = split_own(&v(&["--minimal"]), false).unwrap();
        assert_eq!((own.output.stdout_doc, rest), (None, v(&["--minimal"])));
        assert!(split_own(&v(&["--json"]), false).is_err());
        assert!(split_own(&v(&["--output-format=xml"]), false).is_err());
    }

    #[test]
    fn split_is_an_own_option_of_foreign_runs() {
        use crate::cluster::Split;
        let (own, rest) = split_own(&v(&["--name=x", "--split", "streams"]), true).unwrap();
        assert_eq!(own.split, Split::Streams);
        assert_eq!(rest, v(&["--name=x"]));
        let (own, _) = split_own(&v(&["-f", "parm"]), false).unwrap();
        assert_eq!(own.split, Split::All);
        let e = split_own(&v(&["--split=some"]), false).unwrap_err();
        assert!(e.to_string().contains("--split"), "{e}");
    }
}
