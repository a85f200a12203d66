//! fio command lines, with the job files they name: `fio --filename=/dev/nvme0n1
//! --ioengine=io_uring examples/sprandom.fio`.
//!
//! fio reads every option first (GNU getopt moves the job files to the end, so an
//! option after a file is read before it) and the job files after. Options before the
//! first `--name` set fio's global defaults; a job file's own `[global]` sections and
//! job sections write over them, so the file wins where both set an option. Each job
//! file after the first starts again from fio's built-in defaults (the command line's
//! globals and the previous file's `[global]` no longer apply) and its first job waits
//! for the jobs before it (stonewall). `--section=NAME` (repeatable) keeps only the
//! named job sections of the first job file and of the command line's `--name` jobs;
//! `[global]` sections are always read. A `--name` job that `--section` leaves out
//! keeps fio's quirk: the options after it set global defaults for the jobs that
//! follow. Locations stay exact: a command-line option is `argument N`, a job-file
//! option `FILE:LINE`.

use super::{
    is_flag, lex_ini, looks_like_option, normalise_key, translate_noted, CompatError, EnvLookup,
    Item, Lexed, Lexing, Loc, Translated,
};
use std::io::Read;
use std::path::Path;

/// The largest job file read: a file named by mistake is not read whole.
const MAX_JOB_FILE_BYTES: u64 = 16 << 20;

/// A fio command line taken apart, before any job file is read.
#[derive(Debug, Default)]
struct CommandLine {
    /// Options and `--name` jobs, in order.
    items: Vec<Item>,
    saw_name: bool,
    /// `--section` values.
    sections: Vec<(String, Loc)>,
    /// Job files, in order.
    files: Vec<(String, Loc)>,
}

/// Translates a fio command line (see the module doc).
pub(super) fn parse(args: &[String], env: EnvLookup<'_>) -> Result<Translated, CompatError> {
    let mut cl = split(args)?;
    let select: Vec<String> = cl.sections.iter().map(|(s, _)| s.clone()).collect();
    let mut lexed = Lexed::default();
    skip_unselected_names(&mut cl.items, &select, &mut lexed.notes);
    check_sections(&cl.sections, &cl.items, &cl.files)?;
    if cl.files.is_empty() {
        if cl.items.is_empty() {
            return Err(CompatError {
                source_name: "command line".into(),
                line: 0,
                column_or_arg: None,
                msg: "no fio options given".into(),
            });
        }
        lexed.items = cl.items;
        if !cl.saw_name {
            // fio wants --name; a lone set of options still describes one job.
            let loc = Loc::Arg {
                index: args.len(),
                text: args.last().cloned().unwrap_or_default(),
            };
            lexed.items.push(Item::Section("job".into(), loc));
        }
        return translate_noted(lexed);
    }
    let has_globals = global_options(&cl.items);
    lexed.items = cl.items;
    for (n, (file, loc)) in cl.files.iter().enumerate() {
        if n > 0 {
            lexed.items.push(Item::ResetGlobal);
            if has_globals && n == 1 {
                lexed.notes.push(format!(
                    "{loc}: fio applies the command line's options to the first job \
                     file only; '{file}' and later files start from fio's defaults, \
                     as here"
                ));
            }
        }
        let first_item = lexed.items.len();
        let text = read_job_file(file, loc)?;
        let base = Path::new(file)
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let at = Lexing {
            source: file,
            base_dir: &base,
            env,
            depth: 0,
        };
        lexed.file_start = first_item;
        // fio forgets --section after the first job file.
        let file_select: &[String] = if n == 0 { &select } else { &[] };
        lex_ini(&at, &text, file_select, &mut lexed)?;
        if n > 0 {
            stonewall_first_job(&mut lexed.items, first_item);
        }
    }
    check_sections(&cl.sections, &lexed.items, &[])?;
    translate_noted(lexed)
}

/// Splits argv into options, `--name` jobs, `--section` values and job files.
fn split(args: &[String]) -> Result<CommandLine, CompatError> {
    let mut cl = CommandLine::default();
    let mut i = 0;
    if let Some(first) = args.first() {
        let prog = first.rsplit('/').next().unwrap_or(first);
        if prog == "fio" || prog == "fio.exe" {
            i = 1;
        }
    }
    let mut only_files = false;
    while i < args.len() {
        let arg = &args[i];
        let loc = Loc::Arg {
            index: i + 1,
            text: arg.clone(),
        };
        i += 1;
        if arg == "--" && !only_files {
            // getopt's end of options: the rest are job files.
            only_files = true;
            continue;
        }
        let body = match arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) {
            Some(b) if !only_files && !b.is_empty() => b,
            _ => {
                cl.files.push((arg.clone(), loc));
                continue;
            }
        };
        let (key, value) = match body.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => {
                let key = body.to_string();
                let takes_value = !is_flag(&normalise_key(&key));
                match args.get(i) {
                    Some(next) if takes_value && !looks_like_option(next) => {
                        i += 1;
                        (key, Some(next.clone()))
                    }
                    _ => (key, None),
                }
            }
        };
        cl.push(key, value, loc)?;
    }
    Ok(cl)
}

impl CommandLine {
    /// Files one option: `--section`, `--name`, or a job option.
    fn push(&mut self, key: String, value: Option<String>, loc: Loc) -> Result<(), CompatError> {
        match normalise_key(&key).as_str() {
            "section" => {
                let Some(v) = value.filter(|v| !v.is_empty()) else {
                    return Err(loc.error("--section needs a job section's name"));
                };
                if v == "global" {
                    return Err(
                        loc.error("--section=global: [global] is always read; name a job section")
                    );
                }
                self.sections.push((v, loc));
            }
            "name" => {
                let Some(v) = value else {
                    return Err(loc.error("--name needs a value"));
                };
                self.saw_name = true;
                self.items.push(Item::Section(v, loc));
            }
            _ => {
                if !self.items.iter().any(|it| matches!(it, Item::Section(..))) {
                    self.items.push(Item::Section("global".into(), loc.clone()));
                }
                self.items.push(Item::Opt(key, value, loc));
            }
        }
        Ok(())
    }
}

/// `--name` jobs that `--section` leaves out: fio drops the job, and the options
/// after it (until the next `--name`) set global defaults, so the section reads as
/// `[global]`.
fn skip_unselected_names(items: &mut [Item], select: &[String], notes: &mut Vec<String>) {
    for item in items.iter_mut() {
        if let Item::Section(name, loc) = item {
            if !super::section_selected(name, select) {
                notes.push(format!(
                    "{loc}: --name={name} is not among the --section names: fio skips \
                     the job, and the options after it apply as global options to the \
                     jobs that follow, as here"
                ));
                *name = "global".into();
            }
        }
    }
}

/// The first job section from `start` on waits for the jobs before it, as fio
/// separates job files.
fn stonewall_first_job(items: &mut Vec<Item>, start: usize) {
    let first = items[start..]
        .iter()
        .position(|i| matches!(i, Item::Section(n, _) if !n.starts_with("global")));
    if let Some(at) = first.map(|p| p + start) {
        if let Item::Section(_, loc) = &items[at] {
            let stonewall = Item::Opt("stonewall".into(), None, loc.clone());
            items.insert(at + 1, stonewall);
        }
    }
}

/// True when the command line sets global options (options outside `--name` jobs).
fn global_options(items: &[Item]) -> bool {
    let mut in_global = false;
    items.iter().any(|i| match i {
        Item::Section(n, _) => {
            in_global = n.starts_with("global");
            false
        }
        Item::Opt(..) => in_global,
        Item::ResetGlobal => false,
    })
}

/// A `--section` that names no job is refused: fio would silently run nothing of it.
/// With job files still to read (`files`), the check waits for them.
fn check_sections(
    sections: &[(String, Loc)],
    items: &[Item],
    files: &[(String, Loc)],
) -> Result<(), CompatError> {
    if !files.is_empty() {
        return Ok(());
    }
    for (name, loc) in sections {
        let found = items
            .iter()
            .any(|i| matches!(i, Item::Section(n, _) if n == name));
        if !found {
            return Err(loc.error(format!(
                "--section={name}: no job section [{name}] in the first job file \
                 (nor a --name={name} job)"
            )));
        }
    }
    Ok(())
}

/// A job file's text. Only a regular file is read: a device or `-` (standard input)
/// named by mistake is refused rather than read whole.
fn read_job_file(file: &str, loc: &Loc) -> Result<String, CompatError> {
    if file == "-" {
        return Err(
            loc.error("job file '-' (standard input) is not read here; give the job file's path")
        );
    }
    let meta = std::fs::metadata(file)
        .map_err(|e| loc.error(format!("cannot read job file '{file}': {e}")))?;
    if !meta.is_file() {
        return Err(loc.error(format!(
            "'{file}' is not a regular file; a fio job file was expected here \
             (a device or target goes in --filename)"
        )));
    }
    let cannot = |e: std::io::Error| loc.error(format!("cannot read job file '{file}': {e}"));
    let mut text = String::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_JOB_FILE_BYTES + 1).read_to_string(&mut text))
        .map_err(cannot)?;
    if text.len() as u64 > MAX_JOB_FILE_BYTES {
        return Err(loc.error(format!(
            "'{file}' is over {} MiB; not a fio job file",
            MAX_JOB_FILE_BYTES >> 20
        )));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::super::parse_args_env;
    use crate::plan::compat::Translated;
    use crate::plan::model::EngineKind;
    use std::path::PathBuf;

    fn env(name: &str) -> Option<String> {
        (name == "FIO_BS").then(|| "8k".to_string())
    }

    /// A job file in a fresh directory; the directory lives as long as the handle.
    fn job_file(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(name);
        std::fs::write(&p, text).unwrap();
        (d, p)
    }

    fn args(line: &[&str]) -> Vec<String> {
        line.iter().map(|s| s.to_string()).collect()
    }

    fn parse(line: &[&str]) -> Translated {
        parse_args_env(&args(line), &env).unwrap()
    }

    const FILE: &str = "[global]\nioengine=io_uring\nrw=randwrite\nbs=${FIO_BS}\niodepth=8\n\
                        [a]\nsize=1m\n[b]\nsize=2m\niodepth=2\n";

    // On fio's command line only its set-only options (time_based, group_reporting,
    // …) may stand alone; a yes/no option takes the next word as its value
    // (getopt's required argument): `--lat_percentiles 1` is not a job file `1`.
    #[test]
    fn a_yes_no_option_takes_the_next_word() {
        let t = parse(&[
            "fio",
            "--name=j",
            "--filename=/tmp/t",
            "--lat_percentiles",
            "1",
            "--time_based",
        ]);
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        assert_eq!(t.plan.runs.len(), 1);
    }

    #[test]
    fn command_line_options_are_defaults_the_file_overrides() {
        let (_d, f) = job_file("j.fio", FILE);
        let f = f.to_str().unwrap();
        // Before and after the file alike: getopt reads every option first.
        for line in [
            &[
                "fio",
                "--filename=/tmp/t",
                "--iodepth=32",
                "--ioengine=sync",
                f,
            ][..],
            &[
                "fio",
                f,
                "--filename=/tmp/t",
                "--iodepth=32",
                "--ioengine=sync",
            ],
            &[
                "fio",
                "--filename",
                "/tmp/t",
                "--iodepth",
                "32",
                "-ioengine=sync",
                f,
            ],
        ] {
            let t = parse(line);
            assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
            let run = &t.plan.runs[0];
            assert_eq!(run.workloads.len(), 2);
            assert_eq!(t.plan.targets[0].uri, "/tmp/t");
            // The file's [global] wins over the command line (io_uring over sync,
            // iodepth=8 over 32); job b's own iodepth=2 over both.
            assert_eq!(run.engine, EngineKind::Uring);
            assert_eq!(run.workloads[0].qd, 8);
            assert_eq!(run.workloads[1].qd, 2);
            assert_eq!(
                run.workloads[0].bs.max_bytes(),
                8192,
                "${{FIO_BS}} from env"
            );
        }
    }

    #[test]
    fn section_keeps_only_the_named_jobs_and_global() {
        let (_d, f) = job_file("j.fio", FILE);
        let f = f.to_str().unwrap();
        let t = parse(&["fio", "--filename=/tmp/t", "--section=b", f]);
        let names: Vec<&str> = t.plan.runs[0]
            .workloads
            .iter()
            .map(|w| w.name.as_str())
            .collect();
        assert_eq!(names, ["b"]);
        assert_eq!(t.plan.runs[0].workloads[0].qd, 2);
        // Twice: both.
        let t = parse(&[
            "fio",
            "--filename=/tmp/t",
            "--section",
            "b",
            "--section=a",
            f,
        ]);
        assert_eq!(t.plan.runs[0].workloads.len(), 2);
        // A name the file lacks, and global, are refused at their argument.
        let e = parse_args_env(&args(&["fio", "--filename=/tmp/t", f, "--section=c"]), &env)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("argument 4 ('--section=c'): "), "{e}");
        assert!(e.contains("no job section [c]"), "{e}");
        let e = parse_args_env(&args(&["fio", "--section=global", f]), &env).unwrap_err();
        assert!(e.to_string().contains("[global] is always read"), "{e}");
    }

    #[test]
    fn each_further_file_starts_from_defaults_behind_a_stonewall() {
        let (d, f1) = job_file("one.fio", "[x]\nsize=1m\n");
        let f2 = d.path().join("two.fio");
        std::fs::write(
            &f2,
            "[y]\nsize=1m\nfilename=/tmp/u\n[z]\nsize=1m\nfilename=/tmp/u\n",
        )
        .unwrap();
        let t = parse(&[
            "fio",
            "--filename=/tmp/t",
            "--ioengine=io_uring",
            "--iodepth=4",
            "--section=x",
            f1.to_str().unwrap(),
            f2.to_str().unwrap(),
        ]);
        // Two runs: x, then y and z together (the stonewall is on y only).
        assert_eq!(t.plan.runs.len(), 2, "{:?}", t.plan.runs);
        assert_eq!(t.plan.runs[0].workloads[0].qd, 4);
        let second = &t.plan.runs[1];
        assert_eq!(
            second.workloads.len(),
            2,
            "--section applies to the first file"
        );
        assert_eq!(
            second.engine,
            EngineKind::Sync,
            "fio's default (psync), not the command line's"
        );
        assert!(
            t.plan
                .warnings
                .iter()
                .any(|w| w.contains("first job file only")),
            "{:?}",
            t.plan.warnings
        );
    }

    #[test]
    fn name_jobs_run_beside_the_files_jobs() {
        let (_d, f) = job_file("j.fio", "[f]\nsize=1m\nfilename=/tmp/t\n");
        let t = parse(&[
            "fio",
            "--name=c",
            "--size=1m",
            "--filename=/tmp/c",
            f.to_str().unwrap(),
        ]);
        let names: Vec<&str> = t.plan.runs[0]
            .workloads
            .iter()
            .map(|w| w.name.as_str())
            .collect();
        assert_eq!(names, ["c", "f"], "one run, the command line's job first");
        // A --name job --section leaves out: its options become globals (fio's quirk).
        let t = parse(&[
            "fio",
            "--section=f",
            "--name=c",
            "--ioengine=io_uring",
            "--iodepth=16",
            f.to_str().unwrap(),
        ]);
        let run = &t.plan.runs[0];
        assert_eq!(run.workloads.len(), 1);
        assert_eq!(
            (run.workloads[0].name.as_str(), run.workloads[0].qd),
            ("f", 16)
        );
    }

    #[test]
    fn file_errors_keep_file_and_line() {
        let (_d, f) = job_file("bad.fio", "[global]\nsize=1m\n[a]\nrw=sideways\n");
        let f = f.to_str().unwrap();
        let e = parse_args_env(&args(&["fio", "--filename=/tmp/t", f]), &env).unwrap_err();
        assert!(e.to_string().starts_with(&format!("{f}:4: ")), "{e}");
        // A command-line value keeps its argument number.
        let (_d2, g) = job_file("ok.fio", "[a]\nsize=1m\n");
        let e = parse_args_env(&args(&["fio", "--rw=sideways", g.to_str().unwrap()]), &env)
            .unwrap_err();
        assert!(
            e.to_string().starts_with("argument 2 ('--rw=sideways'): "),
            "{e}"
        );
        // Missing file, a device, standard input.
        for (file, says) in [
            ("/nonexistent/x.fio", "cannot read job file"),
            ("/dev/null", "not a regular file"),
            ("-", "standard input"),
        ] {
            let e = parse_args_env(&args(&["fio", "--size=1m", file]), &env).unwrap_err();
            let e = e.to_string();
            assert!(e.starts_with("argument 3 ") && e.contains(says), "{e}");
        }
        // Options before the second file's first section are refused in that file.
        let (_d3, h) = job_file("h.fio", "size=1m\n[a]\n");
        let e = parse_args_env(
            &args(&["fio", g.to_str().unwrap(), h.to_str().unwrap()]),
            &env,
        )
        .unwrap_err();
        assert!(e.to_string().contains("h.fio:1: "), "{e}");
    }
}
