//! diskspd and SQLIO command lines → [`Plan`].
//!
//! Both are Windows tools, so their targets are usually Windows paths, which name
//! nothing here: those are refused with a hint to use `--target`, or replaced when the
//! caller passes the override. Each target becomes one workload whose streams are the
//! tool's threads per target and whose queue depth is its outstanding I/Os per thread.
//! See docs/compat-vdbench.md (diskspd and SQLIO sections).

use std::path::{Path, PathBuf};

use super::diskspd_options::{self, Effect, Switch};
use super::{
    base_run, is_windows_path, parse_cpu_list, parse_cpu_mask, CompatError, Loc, TargetTable,
    Translated, UnsupportedList,
};
use crate::plan::model::{AccessPattern, BlockSizes, Plan, Rate, RunSpec, Workload};
use crate::plan::tuning::IoTuning;
use crate::plan::units::{
    parse_count, parse_duration_ns, parse_duration_ns_allow_zero, parse_size, parse_size_allow_zero,
};

/// Looks switch `flag` up in the tool's table: true when its own code reads it.
/// Otherwise it is accepted without effect, listed as unsupported with the table's
/// reason, or refused; a switch missing from the table is an error, as in the tool.
fn table_reads(
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
fn not_read(a: &str, loc: &Loc, un: &mut UnsupportedList) {
    un.push(format!("{a} — mapped in the table, not read"), loc);
}

fn arg_loc(args: &[String], i: usize) -> Loc {
    Loc::Arg {
        index: i + 1,
        text: args[i].clone(),
    }
}

fn skip_program(args: &[String], names: &[&str]) -> usize {
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
fn target_uri(path: &str, over: Option<&str>, loc: &Loc) -> Result<String, CompatError> {
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

/// diskspd size: bytes or K/M/G/T. diskspd's `b` suffix (block multiples) is refused.
fn ds_size(text: &str, allow_zero: bool, loc: &Loc) -> Result<u64, CompatError> {
    let t = text.trim();
    if t.ends_with(['b', 'B']) && t[..t.len() - 1].chars().all(|c| c.is_ascii_digit()) {
        return Err(loc.error(format!(
            "'{t}': sizes in blocks ('b' suffix) are not supported; write bytes or K/M/G"
        )));
    }
    let r = if allow_zero {
        parse_size_allow_zero(t)
    } else {
        parse_size(t)
    };
    r.map_err(|e| loc.error(e.to_string()))
}

fn secs(text: &str, allow_zero: bool, loc: &Loc) -> Result<u64, CompatError> {
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

fn cnt(text: &str, loc: &Loc) -> Result<u64, CompatError> {
    parse_count(text).map_err(|e| loc.error(e.to_string()))
}

fn pct(text: &str, loc: &Loc) -> Result<u8, CompatError> {
    text.parse::<u8>()
        .ok()
        .filter(|&p| p <= 100)
        .ok_or_else(|| loc.error(format!("'{text}' is not a percentage 0..100")))
}

fn to_u32(v: u64, loc: &Loc) -> Result<u32, CompatError> {
    u32::try_from(v).map_err(|_| loc.error("value is too large"))
}

/// Translates a diskspd command line, argv style (the program name may come first).
/// `target_override` replaces every target (the `--target` option), which also lets
/// Windows paths through.
pub fn parse_diskspd(
    args: &[String],
    target_override: Option<&str>,
) -> Result<Translated, CompatError> {
    let mut un = UnsupportedList::default();
    let mut line = DiskspdLine::default();
    let start = skip_program(args, &["diskspd"]);
    for i in start..args.len() {
        let a = &args[i];
        let loc = arg_loc(args, i);
        let Some(opt) = a.strip_prefix('-').filter(|o| !o.is_empty()) else {
            line.targets
                .push((target_uri(a, target_override, &loc)?, loc));
            continue;
        };
        let (flag, rest) = opt.split_at(opt.chars().next().map_or(0, char::len_utf8));
        let table = (diskspd_options::DISKSPD, "diskspd");
        if !table_reads(table, a, flag, rest, &loc, &mut un)? {
            continue;
        }
        if !line.workload_option(a, flag, rest, &loc, &mut un)? {
            line.run_option(a, flag, rest, &loc, &mut un)?;
        }
    }
    line.into_translated(un)
}

/// Everything a diskspd command line sets, starting from diskspd's own defaults
/// (`-b64K -d10 -W5 -o2 -t1`, sequential reads, cached I/O).
struct DiskspdLine {
    bs: u64,
    duration: u64,
    warmup: u64,
    qd: u64,
    threads: u64,
    random: bool,
    write_pct: u8,
    direct: bool,
    /// Write-through (O_DSYNC): `-Sw`, `-Sh`, `-h`.
    write_through: bool,
    create_size: Option<u64>,
    max_size: Option<u64>,
    base: u64,
    /// `-g`: (amount, true for I/Os rather than bytes, where).
    rate: Option<(u64, bool, Loc)>,
    cpus: Option<Vec<usize>>,
    interval: u64,
    seed: u64,
    targets: Vec<(String, Loc)>,
    /// `-s` without `i`: each thread starts at the same offset.
    seq_private: bool,
}

impl Default for DiskspdLine {
    fn default() -> Self {
        let run = base_run();
        DiskspdLine {
            bs: 64 * 1024,
            duration: 10_000_000_000,
            warmup: 5_000_000_000,
            qd: 2,
            threads: 1,
            random: false,
            write_pct: 0,
            direct: false,
            write_through: false,
            create_size: None,
            max_size: None,
            base: 0,
            rate: None,
            cpus: None,
            interval: run.interval_ns,
            seed: run.seed,
            targets: Vec::new(),
            seq_private: false,
        }
    }
}

impl DiskspdLine {
    /// Options that shape the I/O (size, mix, pattern, caching, region). Returns false
    /// for a flag it does not own.
    fn workload_option(
        &mut self,
        a: &str,
        flag: &str,
        rest: &str,
        loc: &Loc,
        un: &mut UnsupportedList,
    ) -> Result<bool, CompatError> {
        match flag {
            "b" => self.bs = ds_size(rest, false, loc)?,
            "d" => self.duration = secs(rest, false, loc)?,
            "W" => {
                self.warmup = if rest.is_empty() {
                    0
                } else {
                    secs(rest, true, loc)?
                }
            }
            "C" => {
                if !rest.is_empty() && secs(rest, true, loc)? > 0 {
                    un.push(format!("{a} — cool-down"), loc);
                }
            }
            "o" => self.qd = cnt(rest, loc)?,
            "t" => self.threads = cnt(rest, loc)?,
            "r" => {
                if rest.starts_with('s') {
                    un.push(format!("{a} — mixed random/sequential"), loc);
                } else if !rest.is_empty() {
                    let align = ds_size(rest, false, loc)?;
                    if align != self.bs {
                        un.push(
                            format!("{a} — random alignment other than the block size"),
                            loc,
                        );
                    }
                }
                self.random = true;
            }
            "s" => {
                self.random = false;
                let stride = match rest.strip_prefix('i') {
                    Some(s) => s,
                    None => {
                        self.seq_private = true;
                        rest
                    }
                };
                if !stride.is_empty() && ds_size(stride, false, loc)? != self.bs {
                    un.push(format!("{a} — stride other than the block size"), loc);
                }
            }
            "w" => self.write_pct = pct(rest, loc)?,
            "S" | "h" => {
                // -S = -Su; letters combine: u unbuffered, w write-through, h = uw
                // (-h is the old spelling of -Sh), b buffered.
                let mode = if flag == "h" { "h" } else { rest };
                if mode.is_empty() {
                    self.direct = true;
                }
                for c in mode.chars() {
                    match c {
                        'u' => self.direct = true,
                        'w' => self.write_through = true,
                        'h' => {
                            self.direct = true;
                            self.write_through = true;
                        }
                        'b' => self.direct = false,
                        _ => un.push(format!("{a} — cache mode '{c}'"), loc),
                    }
                }
            }
            "c" => self.create_size = Some(ds_size(rest, false, loc)?),
            "f" => {
                if rest.starts_with(['r', 's', 't', 'p']) {
                    un.push(format!("{a} — access hint"), loc);
                } else {
                    self.max_size = Some(ds_size(rest, false, loc)?);
                }
            }
            "B" => self.base = ds_size(rest, true, loc)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Options of the run as a whole (rate, affinity, output, seed).
    fn run_option(
        &mut self,
        a: &str,
        flag: &str,
        rest: &str,
        loc: &Loc,
        un: &mut UnsupportedList,
    ) -> Result<(), CompatError> {
        match flag {
            "g" => {
                let (n, iops) = match rest.strip_suffix('i') {
                    Some(n) => (n, true),
                    None => (rest, false),
                };
                self.rate = Some((cnt(n, loc)?, iops, loc.clone()));
            }
            "a" => {
                if rest == "g" || rest.is_empty() {
                    // Group-wide round-robin affinity: the default, nothing to pin.
                } else if rest.starts_with('g') {
                    un.push(format!("{a} — processor-group affinity"), loc);
                } else {
                    self.cpus = Some(parse_cpu_list(rest).ok_or_else(|| {
                        loc.error(format!("'{rest}' is not a CPU list like 0,1,2"))
                    })?);
                }
            }
            "n" if rest.is_empty() => self.cpus = None,
            "n" => return Err(loc.error(format!("unknown diskspd option '{a}'"))),
            "R" => {
                if !matches!(rest, "" | "text" | "ptext" | "p") {
                    un.push(format!("{a} — output format"), loc);
                }
            }
            "D" => {
                if !rest.is_empty() {
                    let ms = cnt(rest, loc)?;
                    self.interval = ms.saturating_mul(1_000_000);
                }
            }
            "z" => {
                if !rest.is_empty() {
                    self.seed = rest
                        .parse()
                        .map_err(|_| loc.error(format!("'{rest}' is not a seed")))?;
                }
            }
            _ => not_read(a, loc, un),
        }
        Ok(())
    }

    /// The plan: one workload per target, one run.
    fn into_translated(self, mut un: UnsupportedList) -> Result<Translated, CompatError> {
        if self.targets.is_empty() {
            return Err(CompatError {
                source_name: "command line".into(),
                line: 0,
                column_or_arg: None,
                msg: "diskspd needs at least one target".into(),
            });
        }
        let read_pct = 100 - self.write_pct;
        let mut warnings = Vec::new();
        if !self.random && self.seq_private && self.threads > 1 {
            warnings.push(format!(
                "each diskspd thread reads sequentially from the same start; ioscope's \
                 {} streams each walk their own slice (-si is the closer match)",
                self.threads
            ));
        }
        let threads = self.threads;
        let rate = match self.rate {
            None => Rate::Max,
            Some((n, true, _)) => Rate::Iops(n as f64 * threads as f64),
            // bytes per millisecond per thread → I/Os per second per thread.
            Some((n, false, _)) => Rate::Iops(n as f64 * 1000.0 / self.bs as f64 * threads as f64),
        };
        let mut table = TargetTable::default();
        let mut workloads = Vec::new();
        for (uri, loc) in &self.targets {
            let name = table.intern(uri, self.create_size, Some(self.direct), &mut un, loc);
            workloads.push(Workload {
                name: format!("w{}", workloads.len()),
                target: name,
                read_pct,
                pattern: if self.random {
                    AccessPattern::Random
                } else {
                    AccessPattern::Sequential
                },
                bs: BlockSizes::fixed(self.bs),
                qd: to_u32(self.qd, loc)?,
                streams: to_u32(threads, loc)?,
                rate,
                offset_bytes: self.base,
                size_bytes: self.max_size.map(|m| m.saturating_sub(self.base)),
                ..Default::default()
            });
        }
        Ok(Translated {
            plan: Plan {
                targets: table.targets,
                runs: vec![RunSpec {
                    name: "diskspd".into(),
                    workloads,
                    duration_ns: Some(self.duration),
                    warmup_ns: self.warmup,
                    interval_ns: self.interval,
                    cpus: self.cpus,
                    seed: self.seed,
                    io: IoTuning {
                        write_through: self.write_through,
                        ..Default::default()
                    },
                    ..base_run()
                }],
                warnings,
                data: Default::default(),
            },
            unsupported: un.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn windows_paths_need_the_override() {
        let e = parse_diskspd(&args(r"diskspd -b8K C:\test.dat"), None).unwrap_err();
        assert!(e.to_string().contains("--target"), "{e}");
        let t = parse_diskspd(&args(r"diskspd -b8K C:\test.dat"), Some("/tmp/x")).unwrap();
        assert_eq!(t.plan.targets[0].uri, "/tmp/x");
    }

    #[test]
    fn cache_flags_map_to_direct_and_write_through() {
        let ds = |flag: &str| {
            let t = parse_diskspd(&args(&format!("diskspd -w50 {flag} /tmp/f")), None).unwrap();
            assert!(t.unsupported.is_empty(), "{flag}: {:?}", t.unsupported);
            (t.plan.targets[0].direct, t.plan.runs[0].io.write_through)
        };
        assert_eq!(ds("-Sh"), (Some(true), true));
        assert_eq!(ds("-h"), (Some(true), true));
        assert_eq!(ds("-Suw"), (Some(true), true));
        assert_eq!(ds("-Sw"), (Some(false), true));
        assert_eq!(ds("-Su"), (Some(true), false));
        assert_eq!(ds("-Sb"), (Some(false), false));
        let sq = |flag: &str| {
            let t = parse_sqlio(
                &args(&format!("sqlio -kW {flag} /tmp/f")),
                Path::new("."),
                None,
            )
            .unwrap();
            (t.plan.targets[0].direct, t.plan.runs[0].io.write_through)
        };
        assert_eq!(sq(""), (Some(true), true));
        assert_eq!(sq("-BN"), (Some(true), true));
        assert_eq!(sq("-BH"), (Some(true), false));
        assert_eq!(sq("-BS"), (Some(false), true));
        assert_eq!(sq("-BY"), (Some(false), false));
    }

    #[test]
    fn the_readers_read_exactly_the_switches_the_tables_map() {
        let line = format!("diskspd {DISKSPD_MAPPED} /tmp/f");
        let t = parse_diskspd(&args(&line), None);
        reads_all(diskspd_options::DISKSPD, DISKSPD_MAPPED, t);
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compat/diskspd");
        let t = parse_sqlio(&args(&format!("sqlio {SQLIO_MAPPED}")), &dir, None);
        reads_all(diskspd_options::SQLIO, SQLIO_MAPPED, t);
    }

    #[test]
    fn the_tables_decide_what_is_unknown_listed_or_refused() {
        let ds = |line: &str| parse_diskspd(&args(&format!("diskspd {line} /tmp/f")), None);
        let listed = |t: Translated| -> Vec<String> {
            t.unsupported.into_iter().map(|u| u.option).collect()
        };
        assert_eq!(listed(ds("-v -P -L").unwrap()), Vec::<String>::new());
        assert_eq!(
            listed(ds("-x -Lx").unwrap()),
            [
                "-x — completion routines instead of completion ports",
                "-Lx — accepted only as -L, latency statistics, which ioscope always measures"
            ]
        );
        let e = ds("-q").unwrap_err().to_string();
        assert!(e.contains("unknown diskspd option '-q'"), "{e}");
        let e = ds("-Xp.xml").unwrap_err().to_string();
        assert!(e.contains("argument 2 ('-Xp.xml'): XML profiles"), "{e}");
        let sq = |line: &str| {
            parse_sqlio(
                &args(&format!("sqlio -frandom {line} /tmp/f")),
                Path::new("."),
                None,
            )
        };
        assert_eq!(listed(sq("-LP -T100").unwrap()), Vec::<String>::new());
        assert_eq!(
            listed(sq("-T50 -m8").unwrap()),
            [
                "-T50 — accepted only as -T100: every I/O goes to the target",
                "-m8 — multi-block I/O (copy or scatter/gather)"
            ]
        );
        let e = sq("-U").unwrap_err().to_string();
        assert!(e.contains("unknown SQLIO option '-U'"), "{e}");
    }
}
