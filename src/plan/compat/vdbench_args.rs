//! vdbench's own command line (`./vdbench -f parmfile -j -e 60 lun=/dev/sdb`), read
//! the way vdbench reads it: `-f` the parameter file, `-v`/`-j` data validation and
//! its journal, `-e`/`-i`/`-w` overriding every rd's elapsed, interval and warm-up,
//! `-o` the report directory, and `name=value` words giving the values of `$name`
//! in the file. Every option is translated, accepted without effect (its reason
//! kept), or listed as unsupported; an option vdbench does not have is an error.

use super::{CompatError, Loc, UnsupportedList};

/// What a vdbench command line asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VdbArgs {
    /// The parameter file (`-f`).
    pub file: Option<String>,
    /// `name=value` words: the values of `$name` and `!name` in the file.
    pub subst: Vec<(String, String)>,
    /// `-v` (or `-j`): data validation.
    pub validate: bool,
    /// `-j`: validation with a journal, kept in this directory (`-o`, else
    /// vdbench's default output directory `output`).
    pub journal: Option<String>,
    /// `-o`: vdbench's report directory, where `summary.html`, `totals.html` and
    /// `flatfile.html` are written.
    pub output_dir: Option<String>,
    /// `-e`, `-i`, `-w`: every rd's elapsed, interval and warm-up, with the argument
    /// that gave it.
    pub(crate) overrides: Vec<(&'static str, String, Loc)>,
    /// ioscope's `--target PATH`: every sd's lun, in place of the file's (a
    /// Windows path names nothing here).
    pub target: Option<String>,
}

/// Options that change only vdbench's own reports or processes.
const NO_EFFECT: &[(&str, &str)] = &[
    ("-m", "Java VMs per host; ioscope's workers are threads"),
    (
        "-c",
        "vdbench's own format/clean flags for file systems; nothing measured",
    ),
];

/// Options vdbench has that ioscope does not reproduce, with the reason.
const LISTED: &[(&str, &str)] = &[
    ("-vr", "re-reading each block right after it is written"),
    ("-vw", "writes without reading the block first"),
    ("-vt", "a timestamp kept with each validated block"),
    (
        "-jr",
        "journal recovery; read the data set back with `ioscope verify JOURNAL`",
    ),
    ("-jn", "a journal written without waiting for it"),
    ("-jm", "a journal of its map only"),
    (
        "-s",
        "a simulated run; `ioscope convert` shows what would run",
    ),
    ("-k", "Solaris kstat reporting"),
    ("-t", "vdbench's built-in test run"),
];

/// Reads vdbench's arguments; options it does not reproduce go to `unsupported`.
pub(crate) fn parse_args(
    args: &[String],
    unsupported: &mut UnsupportedList,
) -> Result<VdbArgs, CompatError> {
    let mut out = VdbArgs::default();
    let mut output_dir = None;
    let mut journal = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let loc = Loc::Arg {
            index: i + 1,
            text: a.to_string(),
        };
        let at = loc.clone();
        // An option's value: glued (`-fparm`) or the next argument.
        let mut value = |flag: &str| -> Result<String, CompatError> {
            match a.strip_prefix(flag).filter(|v| !v.is_empty()) {
                Some(v) => Ok(v.to_string()),
                None => {
                    i += 1;
                    args.get(i)
                        .cloned()
                        .ok_or_else(|| at.error(format!("{flag} needs a value")))
                }
            }
        };
        match a {
            _ if !a.starts_with('-') => match a.split_once('=') {
                Some((k, v)) if !k.is_empty() => out.subst.push((k.to_string(), v.to_string())),
                _ => {
                    return Err(loc
                        .error("expected an option or name=value (a value for $name in the file)"))
                }
            },
            "-v" => out.validate = true,
            "-j" => journal = true,
            _ if a.starts_with("-f") => out.file = Some(value("-f")?),
            _ if a.starts_with("-o") => output_dir = Some(value("-o")?),
            _ if a.starts_with("-e") => out.overrides.push(("elapsed", value("-e")?, loc)),
            _ if a.starts_with("-i") => out.overrides.push(("interval", value("-i")?, loc)),
            _ if a.starts_with("-w") => out.overrides.push(("warmup", value("-w")?, loc)),
            _ if a.starts_with("-m") => {
                value("-m")?;
            }
            _ if LISTED.iter().any(|(f, _)| *f == a) => {
                let why = LISTED.iter().find(|(f, _)| *f == a).map_or("", |x| x.1);
                unsupported.push(format!("{a} — {why}"), &loc);
                if a.starts_with("-j") {
                    journal = true;
                }
            }
            _ if a == "-c" || a.starts_with("-c") => {}
            _ => return Err(loc.error("not a vdbench option (see `ioscope vdbench --help`)")),
        }
        i += 1;
    }
    if journal {
        out.validate = true;
        out.journal = Some(output_dir.clone().unwrap_or_else(|| "output".into()));
    }
    out.output_dir = output_dir;
    Ok(out)
}

/// The options accepted without effect, and why (for the docs and `--help`).
pub fn no_effect() -> &'static [(&'static str, &'static str)] {
    NO_EFFECT
}

/// The options listed as unsupported, and why.
pub fn listed() -> &'static [(&'static str, &'static str)] {
    LISTED
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> (Result<VdbArgs, CompatError>, Vec<String>) {
        let v: Vec<String> = s.split_whitespace().map(String::from).collect();
        let mut u = UnsupportedList::default();
        let r = parse_args(&v, &mut u);
        (r, u.0.into_iter().map(|x| x.option).collect())
    }

    #[test]
    fn vdbench_options_read_as_vdbench_reads_them() {
        let (a, listed) = args("-f parm -j -e 60 -i5 lun=/dev/sdb -o out");
        let a = a.unwrap();
        assert_eq!(a.file.as_deref(), Some("parm"));
        assert!(a.validate);
        assert_eq!(a.journal.as_deref(), Some("out"));
        assert_eq!(a.subst, [("lun".to_string(), "/dev/sdb".to_string())]);
        let ov: Vec<_> = a
            .overrides
            .iter()
            .map(|(k, v, _)| (*k, v.as_str()))
            .collect();
        assert_eq!(ov, [("elapsed", "60"), ("interval", "5")]);
        assert!(listed.is_empty(), "{listed:?}");
        let (a, _) = args("-fparm -v");
        let a = a.unwrap();
        assert!(a.validate && a.journal.is_none());
    }

    #[test]
    fn unreproduced_options_are_listed_and_unknown_ones_refused() {
        let (a, listed) = args("-f parm -jr");
        assert_eq!(a.unwrap().journal.as_deref(), Some("output"));
        assert_eq!(listed.len(), 1);
        assert!(
            listed[0].starts_with("-jr — journal recovery"),
            "{listed:?}"
        );
        let (e, _) = args("-f parm -z");
        assert!(e.unwrap_err().to_string().contains("argument 3 ('-z')"));
        let (e, _) = args("-f");
        assert!(e.unwrap_err().to_string().contains("-f needs a value"));
    }
}
