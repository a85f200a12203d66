//! Foreign job descriptions → [`Plan`]: fio job files and command lines, vdbench
//! parameter files, diskspd and SQLIO command lines. People arrive with job files they
//! trust; these readers let them run those files unchanged.
//!
//! The trade-off: a translation is only useful if it is honest. Every option that
//! ioscope cannot reproduce exactly is reported in [`Translated::unsupported`] (never
//! dropped silently), and behaviour that differs in a documented way is noted in
//! [`Plan::warnings`]. Options that cannot be read at all are a [`CompatError`] with the
//! file and line (or the argument number) of the offending text.
//!
//! The readers are pure: the only I/O is reading files that a job file includes
//! (fio `include`, SQLIO `-F`). See docs/compat-fio.md, docs/compat-vdbench.md,
//! docs/compat-diskspd.md and docs/compat-sqlio.md for the option tables.

pub mod diskspd;
pub mod diskspd_options;
pub mod fio;
pub mod fio_options;
pub mod fio_subst;
mod fio_tuning;
pub mod sqlio;
pub mod vdbench;
pub mod vdbench_args;
mod vdbench_hosts;
mod vdbench_lines;
pub mod vdbench_options;

use std::fmt;

use serde::Serialize;

use super::model::{Plan, RunSpec};

/// Seed used when the foreign description names none. fio's default `randrepeat=1`
/// makes its runs repeatable; a fixed seed keeps ioscope's translation repeatable too.
/// It differs from [`RunSpec::default`]'s seed for history's sake: every translated
/// plan (and the fixture corpus that pins them) carries it.
pub const TRANSLATED_SEED: u64 = 0x89;

/// The run every reader starts from: [`RunSpec::default`] (interval, duration,
/// engine, pacing) with the translations' seed; readers set what their format says.
pub(crate) fn base_run() -> RunSpec {
    RunSpec {
        seed: TRANSLATED_SEED,
        ..RunSpec::default()
    }
}

/// Where in the input an error was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Position {
    /// A column (1-based) on the error's line.
    Column(usize),
    /// An argv-style argument: its 1-based index and its text.
    Arg { index: usize, text: String },
}

/// A foreign job description that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
pub struct CompatError {
    /// The file name, or "command line".
    pub source_name: String,
    /// 1-based line, 0 when the error concerns the whole input or an argument.
    pub line: usize,
    pub column_or_arg: Option<Position>,
    pub msg: String,
}

impl fmt::Display for CompatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.column_or_arg {
            Some(Position::Arg { index, text }) => {
                write!(f, "argument {index} ('{text}'): {}", self.msg)
            }
            _ if self.line == 0 => write!(f, "{}: {}", self.source_name, self.msg),
            Some(Position::Column(col)) => {
                write!(f, "{}:{}:{col}: {}", self.source_name, self.line, self.msg)
            }
            _ => write!(f, "{}:{}: {}", self.source_name, self.line, self.msg),
        }
    }
}

/// Where an option came from, for errors and for the unsupported list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Loc {
    Line {
        source: String,
        line: usize,
    },
    /// A place in a structured file (an XML element): 1-based line and column.
    At {
        source: String,
        line: usize,
        column: usize,
    },
    Arg {
        index: usize,
        text: String,
    },
}

impl Loc {
    pub(crate) fn error(&self, msg: impl Into<String>) -> CompatError {
        match self {
            Loc::Line { source, line } => CompatError {
                source_name: source.clone(),
                line: *line,
                column_or_arg: None,
                msg: msg.into(),
            },
            Loc::At {
                source,
                line,
                column,
            } => CompatError {
                source_name: source.clone(),
                line: *line,
                column_or_arg: Some(Position::Column(*column)),
                msg: msg.into(),
            },
            Loc::Arg { index, text } => CompatError {
                source_name: "command line".into(),
                line: 0,
                column_or_arg: Some(Position::Arg {
                    index: *index,
                    text: text.clone(),
                }),
                msg: msg.into(),
            },
        }
    }
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Loc::Line { source, line } => write!(f, "{source}:{line}"),
            Loc::At {
                source,
                line,
                column,
            } => write!(f, "{source}:{line}:{column}"),
            Loc::Arg { index, .. } => write!(f, "argument {index}"),
        }
    }
}

/// A foreign option that was read but that ioscope does not reproduce (yet).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unsupported {
    /// The option as written, with its value (`random_distribution=zipf:1.2`), and
    /// for approximations a short reason after " — ".
    pub option: String,
    /// "file:line" or "argument N".
    pub location: String,
}

/// A translated plan and what could not be carried over.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Translated {
    pub plan: Plan,
    pub unsupported: Vec<Unsupported>,
}

/// Collects unsupported options in input order without duplicates.
#[derive(Debug, Default)]
pub(crate) struct UnsupportedList(pub Vec<Unsupported>);

impl UnsupportedList {
    pub(crate) fn push(&mut self, option: impl Into<String>, loc: &Loc) {
        let u = Unsupported {
            option: option.into(),
            location: loc.to_string(),
        };
        if !self.0.contains(&u) {
            self.0.push(u);
        }
    }
}

/// Input formats the readers understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// fio INI job file.
    Fio,
    /// A fio command line (`fio --name=x ...`).
    FioArgs,
    /// vdbench parameter file.
    Vdbench,
    /// diskspd command line.
    Diskspd,
    /// diskspd XML profile (`<Profile>`, what `diskspd -X` reads).
    DiskspdProfile,
    /// SQLIO command line.
    Sqlio,
    Unknown,
}

/// Guesses the format of a job description: fio INI has `[section]` lines, vdbench has
/// lines starting `sd=`/`wd=`/`rd=` (or `hd=`/`fsd=`), command lines start with the
/// program name, and an XML document with a `<Profile>` is a diskspd profile.
pub fn detect(text: &str) -> Format {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('<') && t.contains("<Profile") {
        return Format::DiskspdProfile;
    }
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with(['#', ';', '*']) || line.starts_with("/*") {
            continue;
        }
        let lower = line.to_ascii_lowercase();
        if line.starts_with('[') && line.contains(']') {
            return Format::Fio;
        }
        for key in ["sd=", "wd=", "rd=", "hd=", "fsd=", "fwd="] {
            if lower.starts_with(key) {
                return Format::Vdbench;
            }
        }
        // The first word as a shell splits it: a quoted program path
        // (`"C:\Program Files\…\diskspd.exe" …`) is one word.
        let words = split_command_line(&lower).unwrap_or_default();
        let first = words.first().map_or("", String::as_str);
        let prog = first
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(first)
            .trim_end_matches(".exe");
        match prog {
            "fio" => return Format::FioArgs,
            "diskspd" => return Format::Diskspd,
            "sqlio" => return Format::Sqlio,
            _ => {}
        }
        // vdbench general parameters (compratio=, messagescan=, ...) come before sd=;
        // vdbench ignores a line after its first blank or tab (`compratio=2<TAB># …`).
        if first.contains('=') && !first.starts_with('"') {
            continue;
        }
        return Format::Unknown;
    }
    Format::Unknown
}

/// Replaces every target's URI (for `--target`): a job file written for another machine
/// runs against a path on this one.
pub fn apply_target_override(plan: &mut Plan, target: &str) {
    for t in &mut plan.targets {
        t.uri = target.to_string();
    }
}

/// Splits a command line the way a POSIX shell would for simple cases: whitespace
/// separates words, single and double quotes group, and a backslash before a newline
/// joins lines. Unlike a shell, a backslash escapes only whitespace and quotes and is
/// otherwise literal, so pasted Windows command lines keep their paths intact.
pub fn split_command_line(text: &str) -> Result<Vec<String>, CompatError> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    let mut line = 1;
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => {
                            if ch == '\n' {
                                line += 1;
                            }
                            cur.push(ch)
                        }
                        None => return Err(unterminated(line, '\'')),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') if matches!(chars.peek(), Some('"' | '\\' | '$')) => {
                            cur.push(chars.next().unwrap_or('\\'))
                        }
                        Some(ch) => {
                            if ch == '\n' {
                                line += 1;
                            }
                            cur.push(ch)
                        }
                        None => return Err(unterminated(line, '"')),
                    }
                }
            }
            '\\' => match chars.peek().copied() {
                Some('\n') => {
                    chars.next();
                    line += 1
                }
                Some(ch) if ch.is_whitespace() || ch == '\'' || ch == '"' => {
                    chars.next();
                    in_word = true;
                    cur.push(ch)
                }
                // Literal otherwise, so Windows paths (C:\x, \\server\share)
                // survive unquoted.
                _ => {
                    in_word = true;
                    cur.push('\\')
                }
            },
            c if c.is_whitespace() => {
                if c == '\n' {
                    line += 1;
                }
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c)
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

fn unterminated(line: usize, quote: char) -> CompatError {
    CompatError {
        source_name: "command line".into(),
        line,
        column_or_arg: None,
        msg: format!("unterminated {quote} quote"),
    }
}

/// Parses a CPU list such as "0-3,8,10-11".
pub(crate) fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if let Some((a, b)) = part.split_once('-') {
            let a: usize = a.trim().parse().ok()?;
            let b: usize = b.trim().parse().ok()?;
            if b < a || b - a > 65_536 {
                return None;
            }
            cpus.extend(a..=b);
        } else {
            cpus.push(part.parse().ok()?);
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        None
    } else {
        Some(cpus)
    }
}

/// Parses a hexadecimal CPU mask ("0xf", "f") into CPU numbers.
pub(crate) fn parse_cpu_mask(text: &str) -> Option<Vec<usize>> {
    let t = text.trim();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    if t.is_empty() || t.len() > 32 {
        return None;
    }
    let mask = u128::from_str_radix(t, 16).ok()?;
    let cpus: Vec<usize> = (0..128).filter(|i| mask & (1u128 << i) != 0).collect();
    if cpus.is_empty() {
        None
    } else {
        Some(cpus)
    }
}

/// Assigns target names ("t0", "t1", ...) to distinct URIs, merging sizes and flagging
/// conflicting O_DIRECT settings.
#[derive(Debug, Default)]
pub(crate) struct TargetTable {
    pub targets: Vec<super::model::TargetSpec>,
}

impl TargetTable {
    /// Returns the name of the target for `uri`, adding it if new. The size grows to the
    /// largest requested; a different `direct` setting is reported as unsupported.
    pub(crate) fn intern(
        &mut self,
        uri: &str,
        size_bytes: Option<u64>,
        direct: Option<bool>,
        unsupported: &mut UnsupportedList,
        loc: &Loc,
    ) -> String {
        let i = match self.targets.iter().position(|t| t.uri == uri) {
            Some(i) => i,
            None => return self.add(uri, size_bytes, direct),
        };
        self.merge(i, size_bytes, direct, unsupported, loc)
    }

    /// [`TargetTable::intern`] for a fio job: a file that jobs open
    /// differently (O_DIRECT in one, buffered in another, as fio jobs may, in one
    /// group or in groups separated by a stonewall) becomes one target per setting,
    /// each opened its own way; they share the file, and its verify state (the key
    /// map is the URI's).
    pub(crate) fn intern_per_direct(
        &mut self,
        uri: &str,
        size_bytes: Option<u64>,
        direct: Option<bool>,
        unsupported: &mut UnsupportedList,
        loc: &Loc,
    ) -> String {
        let own = self
            .targets
            .iter()
            .position(|t| t.uri == uri && t.direct == direct);
        let Some(i) = own else {
            return self.add(uri, size_bytes, direct);
        };
        self.merge(i, size_bytes, direct, unsupported, loc)
    }

    /// Sizes target `name` to fill its filesystem (fio's `fill_device`).
    pub(crate) fn fill(&mut self, name: &str) {
        if let Some(t) = self.targets.iter_mut().find(|t| t.name == name) {
            t.fill = true;
        }
    }

    /// Adds a target for `uri` and returns its name.
    fn add(&mut self, uri: &str, size_bytes: Option<u64>, direct: Option<bool>) -> String {
        let name = format!("t{}", self.targets.len());
        self.targets.push(super::model::TargetSpec {
            name: name.clone(),
            uri: uri.to_string(),
            size_bytes,
            direct,
            multipath: None,
            fill: false,
            create: Default::default(),
            create_dirs: false,
        });
        name
    }

    /// Another job's use of target `i`: the size grows to the largest asked for; a
    /// different `direct` is reported.
    fn merge(
        &mut self,
        i: usize,
        size_bytes: Option<u64>,
        direct: Option<bool>,
        unsupported: &mut UnsupportedList,
        loc: &Loc,
    ) -> String {
        let t = &mut self.targets[i];
        t.size_bytes = match (t.size_bytes, size_bytes) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        if t.direct != direct {
            unsupported.push(
                format!(
                    "direct={} on {} — another job of the same run opens it with \
                     direct={}; ioscope opens a target one way per run",
                    fmt_direct(direct),
                    t.uri,
                    fmt_direct(t.direct)
                ),
                loc,
            );
        }
        t.name.clone()
    }
}

fn fmt_direct(d: Option<bool>) -> &'static str {
    match d {
        Some(true) => "1",
        Some(false) => "0",
        None => "auto",
    }
}

/// True for `C:\x`, `C:/x`, `C:` and `\\server\share` paths, which name nothing here.
pub(crate) fn is_windows_path(p: &str) -> bool {
    let b = p.as_bytes();
    p.starts_with("\\\\")
        || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
        || p.contains('\\')
}

#[cfg(test)]
mod tests;
