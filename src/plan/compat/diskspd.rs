//! diskspd command lines → [`Plan`], meaning what diskspd 2.x means by each switch.
//!
//! diskspd runs threads, each pinned to one target (`-t`, per target) or to all of
//! them (`-F`, shared). Each target becomes one workload whose streams are the
//! threads on it and whose queue depth is `-o`; the run gets one worker (OS thread)
//! per diskspd thread, so a `-F` thread's streams of every target share one worker,
//! as diskspd's do, and the result's per-thread counts are diskspd's. Windows targets
//! (`C:\x`, `#1`) name nothing here: they are refused with a hint to use `--target`.
//! Where the translation substitutes something for what diskspd does, the plan's
//! warnings say so in one line each; what it cannot reproduce is listed. The
//! SQLIO reader ([`super::sqlio`]) shares the switch helpers. See
//! docs/compat-diskspd.md.

use super::diskspd_options::{self, Effect, Switch};
use super::{is_windows_path, CompatError, Loc, Translated, UnsupportedList};
use crate::plan::units::{parse_count, parse_duration_ns, parse_duration_ns_allow_zero};

mod line;
mod profile;
mod profile_merge;

use line::DiskspdLine;

/// Looks switch `flag` up in the tool's table: true when its own code reads it.
/// Otherwise it is accepted without effect, listed as unsupported with the table's
/// reason, or refused; a switch missing from the table is an error, as in the tool.
pub(super) fn table_reads(
    (table, tool): (&'static [Switch], &str),
    a: &str,
    flag: &str,
    rest: &str,
    loc: &Loc,
    un: &mut UnsupportedList,
) -> Result<bool, CompatError> {
    let Some(s) = diskspd_options::lookup(table, flag) else {
        return Err(loc.error(format!("unknown {tool} option '{a}'")));
    };
    match s.effect {
        Effect::Maps(_) | Effect::Sets(_) | Effect::SetsAs(..) => return Ok(true),
        Effect::NoEffect(_) | Effect::Warn(_) => {}
        Effect::NoEffectWhen { accepts, why } => {
            if !accepts(Some(rest)) {
                un.push(format!("{a} — accepted only as {why}"), loc);
            }
        }
        Effect::Unsupported(why) => un.push(format!("{a} — {why}"), loc),
        Effect::Refused(why) => return Err(loc.error(why)),
    }
    Ok(false)
}

/// A switch the table maps that the reader has no code for: listed, so a table row
/// without a reader shows (a unit test keeps this from happening).
pub(super) fn not_read(a: &str, loc: &Loc, un: &mut UnsupportedList) {
    un.push(format!("{a} — mapped in the table, not read"), loc);
}

pub(super) fn arg_loc(args: &[String], i: usize) -> Loc {
    Loc::Arg {
        index: i + 1,
        text: args[i].clone(),
    }
}

/// 1 when `args` starts with the program (`diskspd`, `C:\run\diskspd.exe`, `.\diskspd`).
pub(super) fn skip_program(args: &[String], names: &[&str]) -> usize {
    match args.first() {
        Some(a) => {
            let prog = a
                .rsplit(['/', '\\'])
                .next()
                .unwrap_or(a)
                .to_ascii_lowercase();
            let prog = prog.trim_end_matches(".exe");
            usize::from(names.contains(&prog))
        }
        None => 0,
    }
}

/// Resolves a target path: Windows paths need the override.
pub(super) fn target_uri(path: &str, over: Option<&str>, loc: &Loc) -> Result<String, CompatError> {
    if let Some(o) = over {
        return Ok(o.to_string());
    }
    if path.starts_with('#') {
        return Err(loc.error(format!(
            "{path} names a Windows physical disk by number; give a device on this \
             machine with --target"
        )));
    }
    if is_windows_path(path) {
        return Err(loc.error(format!(
            "{path} is a Windows path; give a path on this machine with --target"
        )));
    }
    Ok(path.to_string())
}

/// A whole number of seconds.
pub(super) fn secs(text: &str, allow_zero: bool, loc: &Loc) -> Result<u64, CompatError> {
    if !text.chars().all(|c| c.is_ascii_digit()) || text.is_empty() {
        return Err(loc.error(format!("'{text}' is not a whole number of seconds")));
    }
    let r = if allow_zero {
        parse_duration_ns_allow_zero(text)
    } else {
        parse_duration_ns(text)
    };
    r.map_err(|e| loc.error(e.to_string()))
}

pub(super) fn cnt(text: &str, loc: &Loc) -> Result<u64, CompatError> {
    parse_count(text).map_err(|e| loc.error(e.to_string()))
}

pub(super) fn pct(text: &str, loc: &Loc) -> Result<u8, CompatError> {
    text.parse::<u8>()
        .ok()
        .filter(|&p| p <= 100)
        .ok_or_else(|| loc.error(format!("'{text}' is not a percentage 0..100")))
}

pub(super) fn to_u32(v: u64, loc: &Loc) -> Result<u32, CompatError> {
    u32::try_from(v).map_err(|_| loc.error("value is too large"))
}

/// A diskspd size: a whole number of bytes, or with K, M, G, T (binary) or `b`
/// (blocks of the line's `-b`), in either case, as diskspd reads it. The rest of
/// the text, after the size, is returned for switches that go on (`-B1G:2G`).
fn ds_size_rest<'a>(text: &'a str, block: u64, loc: &Loc) -> Result<(u64, &'a str), CompatError> {
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    let n: u64 = text[..digits].parse().map_err(|_| {
        loc.error(format!(
            "'{text}' is not a size (bytes, K, M, G, T or b blocks)"
        ))
    })?;
    let rest = &text[digits..];
    let (mult, rest) = match rest.chars().next().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (1u64 << 10, &rest[1..]),
        Some('M') => (1 << 20, &rest[1..]),
        Some('G') => (1 << 30, &rest[1..]),
        Some('T') => (1 << 40, &rest[1..]),
        Some('B') => (block, &rest[1..]),
        _ => (1, rest),
    };
    let v = n
        .checked_mul(mult)
        .ok_or_else(|| loc.error(format!("'{text}' is too large")))?;
    Ok((v, rest))
}

/// [`ds_size_rest`] for a switch whose whole value is the size.
fn ds_size(text: &str, block: u64, loc: &Loc) -> Result<u64, CompatError> {
    match ds_size_rest(text, block, loc)? {
        (v, "") => Ok(v),
        (_, rest) => Err(loc.error(format!(
            "'{rest}' after the size in '{text}' (sizes are bytes, K, M, G, T or b blocks)"
        ))),
    }
}

/// The block size `-b` gives the line (the last one; diskspd's default 64 KiB), which
/// sizes written in blocks (`-c100b`, `-s1b`) count in, wherever they stand.
fn line_block(words: &[Word]) -> Result<u64, CompatError> {
    let mut block = 64 * 1024;
    for w in words {
        if let Some(v) = w.text.strip_prefix("-b") {
            block = ds_size(v, 64 * 1024, &w.loc)?;
            if block == 0 || block >= u64::from(u32::MAX) {
                return Err(w.loc.error("-b needs a block size above 0 and below 4 GiB"));
            }
        }
    }
    Ok(block)
}

/// One word of a diskspd line as the reader takes it: the switch or target, how
/// messages show it (as written, or the profile element it was read from), and where
/// it stands.
#[derive(Debug, Clone)]
pub(super) struct Word {
    pub text: String,
    pub shown: String,
    pub loc: Loc,
}

/// Translates a diskspd command line, argv style (the program name may come first).
/// `target_override` replaces every target (the `--target` option), which also lets
/// Windows paths through. A line with `-X<profile.xml>` runs the profile
/// ([`profile`]).
pub fn parse_diskspd(
    args: &[String],
    target_override: Option<&str>,
) -> Result<Translated, CompatError> {
    let start = skip_program(args, &["diskspd"]);
    if args[start..].iter().any(|a| a.starts_with("-X")) {
        return profile::parse_profile(args, start, target_override);
    }
    let words: Vec<Word> = (start..args.len())
        .map(|i| Word {
            text: args[i].clone(),
            shown: args[i].clone(),
            loc: arg_loc(args, i),
        })
        .collect();
    let mut un = UnsupportedList::default();
    read_line(&words, target_override, &mut un)?.into_translated(un)
}

/// The switches that decide diskspd's output (`-R…`): the line's, after a profile's
/// `<ResultFormat>` when the line runs one (`-X`), as diskspd lets the line override it.
pub fn result_switches(args: &[String]) -> Vec<String> {
    let mut out: Vec<String> = args
        .iter()
        .filter_map(|a| a.strip_prefix("-X"))
        .filter_map(profile::result_format)
        .collect();
    out.extend(args.iter().cloned());
    out
}

/// Dashes that are not ASCII '-': en dash, em dash, minus sign, non-breaking hyphen.
const DASHES: [char; 4] = ['\u{2013}', '\u{2014}', '\u{2212}', '\u{2011}'];

/// Reads the words of one line, switches then targets, each switch first through the
/// table ([`table_reads`]).
fn read_line(
    words: &[Word],
    target_override: Option<&str>,
    un: &mut UnsupportedList,
) -> Result<DiskspdLine, CompatError> {
    let mut line = DiskspdLine::new(line_block(words)?);
    for w in words {
        let (a, loc) = (&w.shown, &w.loc);
        let Some(opt) = w.text.strip_prefix('-').filter(|o| !o.is_empty()) else {
            // A dash a word processor made typographic (`–c8G`, copied from a web
            // page): diskspd takes the word as a target too; say why.
            if let Some(dash) = w.text.chars().next().filter(|c| DASHES.contains(c)) {
                return Err(loc.error(format!(
                    "'{a}' starts with '{dash}' (U+{:04X}), not '-': a switch copied from \
                     a web page or document; write it with '-'",
                    u32::from(dash)
                )));
            }
            line.targets
                .push((target_uri(&w.text, target_override, loc)?, loc.clone()));
            continue;
        };
        if !line.targets.is_empty() {
            return Err(loc.error(format!(
                "'{a}': diskspd takes its switches before the targets"
            )));
        }
        let (flag, rest) = opt.split_at(opt.chars().next().map_or(0, char::len_utf8));
        let table = (diskspd_options::DISKSPD, "diskspd");
        if table_reads(table, a, flag, rest, loc, un)? {
            line.option(a, flag, rest, loc, un)?;
        }
    }
    Ok(line)
}

/// `-a` CPU numbers in diskspd's order (threads go round-robin over them), with its
/// processor groups: group 0 is this machine's CPUs (`-ag0,0,1,2` = `-a0,1,2`); CPUs
/// of another group are not named here. `None`: `-a`/`-ag` alone, the default.
fn affinity(rest: &str, loc: &Loc) -> Result<Option<Vec<usize>>, CompatError> {
    if rest.is_empty() || rest == "g" {
        return Ok(None);
    }
    let mut cpus = Vec::new();
    let mut group = 0u32;
    for p in rest.split(',') {
        if let Some(g) = p.strip_prefix('g') {
            group = g
                .parse()
                .map_err(|_| loc.error(format!("'{p}' is not a processor group (g0, g1, …)")))?;
        } else if group != 0 {
            return Err(loc.error(format!(
                "processor group {group}: Linux numbers CPUs without groups; give them \
                 in group 0 (-a0,1,…) as this machine numbers them"
            )));
        } else {
            cpus.push(
                p.parse::<usize>()
                    .map_err(|_| loc.error(format!("'{p}' is not a CPU number")))?,
            );
        }
    }
    if cpus.is_empty() {
        return Err(loc.error(format!("'-a{rest}' names no CPU")));
    }
    Ok(Some(cpus))
}

#[cfg(test)]
pub(crate) mod tests;
