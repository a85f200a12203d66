//! SQLIO command lines → [`Plan`]. SQLIO is diskspd's predecessor: one file (or a
//! parameter file of them) per line, each a workload whose streams are SQLIO's
//! threads. Its switches are looked up in SQLIO's table in
//! [`super::diskspd_options`], as diskspd's are; see docs/compat-sqlio.md.

use std::path::{Path, PathBuf};

use super::diskspd::{arg_loc, cnt, not_read, secs, skip_program, table_reads, target_uri, to_u32};
use super::diskspd_options;
use super::{
    base_run, is_windows_path, parse_cpu_mask, CompatError, Loc, TargetTable, Translated,
    UnsupportedList,
};
use crate::plan::model::{AccessPattern, BlockSizes, Plan, Rate, RunSpec, Workload};
use crate::plan::tuning::IoTuning;

/// Translates an SQLIO command line. `-F` parameter files are read relative to
/// `base_dir`. Defaults follow SQLIO's usage text: `-kW -t1 -s30 -f64 -b2 -BN`, one
/// outstanding I/O per thread.
pub fn parse_sqlio(
    args: &[String],
    base_dir: &Path,
    target_override: Option<&str>,
) -> Result<Translated, CompatError> {
    let mut un = UnsupportedList::default();
    let mut line = SqlioLine::default();
    let start = skip_program(args, &["sqlio"]);
    for i in start..args.len() {
        let a = &args[i];
        let loc = arg_loc(args, i);
        let Some(opt) = a.strip_prefix('-').filter(|o| !o.is_empty()) else {
            line.files
                .push((target_uri(a, target_override, &loc)?, None, None, None, loc));
            continue;
        };
        let (flag, rest) = opt.split_at(opt.chars().next().map_or(0, char::len_utf8));
        let table = (diskspd_options::SQLIO, "SQLIO");
        if table_reads(table, a, flag, rest, &loc, &mut un)? {
            line.option(a, flag, rest, &loc, &mut un, base_dir, target_override)?;
        }
    }
    // Where whole-line remarks point: the last argument.
    let end = Loc::Arg {
        index: args.len().max(1),
        text: args.last().cloned().unwrap_or_default(),
    };
    if line.files.is_empty() {
        line.files.push((
            target_uri("testfile.dat", target_override, &end)?,
            None,
            None,
            None,
            end.clone(),
        ));
    }
    line.into_translated(un, &end)
}

/// Everything an SQLIO command line sets, starting from SQLIO's defaults.
struct SqlioLine {
    read: bool,
    duration: u64,
    threads: u64,
    qd: u64,
    bs_kib: u64,
    /// `None` until `-f` says: SQLIO's default is a stripe factor.
    pattern: Option<AccessPattern>,
    direct: bool,
    /// Write-through (O_DSYNC): `-BN` (the default) and `-BS`.
    write_through: bool,
    cpus: Option<Vec<usize>>,
    files: Vec<SqlioFile>,
    warnings: Vec<String>,
}

/// What SQLIO's `-B` letters ask of the caches. SQLIO documents `N` (none), `Y`
/// (all), `H` (hardware only) and `S` (software only); a combined flag such as `-BYRT`
/// adds `R` and `T`, the Windows open hints FILE_FLAG_RANDOM_ACCESS and
/// FILE_ATTRIBUTE_TEMPORARY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SqlioBuffering {
    /// The OS file cache is used (not O_DIRECT).
    os_cache: bool,
    /// Writes may stay in the device's write cache (no write-through).
    device_cache: bool,
    /// `R` or `T` was given.
    hints: bool,
}

/// Why SQLIO's `-B` letters were refused.
#[derive(Debug, PartialEq, thiserror::Error)]
enum BufferingError {
    #[error("-B needs letters: N (none), Y (all), H (hardware), S (software)")]
    NoLetters,
    #[error(
        "-B{letters}: '{letter}' is not a buffering letter (N none, Y all, \
         H hardware, S software; R and T are open hints)"
    )]
    Letter { letters: String, letter: char },
    #[error("-B{letters}: N (no caching) contradicts the other cache letters")]
    Contradiction { letters: String },
}

/// Reads `-B`'s letters (any order, any case, repeats allowed). Without a cache letter
/// SQLIO's default `N` holds; `N` with another cache letter contradicts itself.
fn sqlio_buffering(letters: &str) -> Result<SqlioBuffering, BufferingError> {
    let (mut none, mut os, mut dev, mut hints) = (false, false, false, false);
    if letters.is_empty() {
        return Err(BufferingError::NoLetters);
    }
    for c in letters.chars() {
        match c.to_ascii_uppercase() {
            'N' => none = true,
            'Y' => (os, dev) = (true, true),
            'H' => dev = true,
            'S' => os = true,
            'R' | 'T' => hints = true,
            letter => {
                return Err(BufferingError::Letter {
                    letters: letters.to_string(),
                    letter,
                })
            }
        }
    }
    if none && (os || dev) {
        return Err(BufferingError::Contradiction {
            letters: letters.to_string(),
        });
    }
    Ok(SqlioBuffering {
        os_cache: os,
        device_cache: dev,
        hints,
    })
}

impl Default for SqlioLine {
    fn default() -> Self {
        SqlioLine {
            read: false,
            duration: 30_000_000_000,
            threads: 1,
            qd: 1,
            bs_kib: 2,
            pattern: None,
            direct: true,
            write_through: true,
            cpus: None,
            files: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

impl SqlioLine {
    /// One `-X…` option.
    #[allow(clippy::too_many_arguments)]
    fn option(
        &mut self,
        a: &str,
        flag: &str,
        rest: &str,
        loc: &Loc,
        un: &mut UnsupportedList,
        base_dir: &Path,
        target_override: Option<&str>,
    ) -> Result<(), CompatError> {
        match flag {
            "k" => match rest.to_ascii_uppercase().as_str() {
                "R" => self.read = true,
                "W" => self.read = false,
                _ => return Err(loc.error("-k takes R (reads) or W (writes)")),
            },
            "s" => self.duration = secs(rest, false, loc)?,
            "t" => self.threads = cnt(rest, loc)?,
            "o" => self.qd = cnt(rest, loc)?,
            "b" => self.bs_kib = cnt(rest, loc)?,
            "f" => match rest.to_ascii_lowercase().as_str() {
                "random" => self.pattern = Some(AccessPattern::Random),
                "sequential" => self.pattern = Some(AccessPattern::Sequential),
                _ => {
                    cnt(rest, loc)?;
                    un.push(format!("{a} — stripe factor"), loc);
                    self.pattern = Some(AccessPattern::Sequential);
                }
            },
            "B" => {
                let b = sqlio_buffering(rest).map_err(|e| loc.error(e.to_string()))?;
                self.direct = !b.os_cache;
                // No device write cache (N, S): every write is stable when it completes.
                self.write_through = !b.device_cache;
                if b.hints {
                    self.warnings.push(format!(
                        "{a}: R and T are Windows open hints (random access, temporary \
                         file) that steer its cache manager; Linux has no equivalent, so \
                         they change nothing here"
                    ));
                }
            }
            "a" => {
                let mask = rest.trim_start_matches(['R', 'I', 'r', 'i']);
                self.cpus =
                    Some(parse_cpu_mask(mask).ok_or_else(|| {
                        loc.error(format!("'{mask}' is not a hexadecimal CPU mask"))
                    })?);
                if mask.len() != rest.len() {
                    un.push(format!("{a} — round-robin/ideal affinity"), loc);
                }
            }
            "F" => {
                if rest.is_empty() {
                    return Err(loc.error("-F needs a parameter file name"));
                }
                read_param_file(rest, base_dir, target_override, loc, &mut self.files)?;
            }
            _ => not_read(a, loc, un),
        }
        Ok(())
    }

    /// The plan: one workload per file, one run. `end` locates remarks about the line
    /// as a whole.
    fn into_translated(
        mut self,
        mut un: UnsupportedList,
        end: &Loc,
    ) -> Result<Translated, CompatError> {
        let pattern = match self.pattern {
            Some(p) => p,
            None => {
                un.push(
                    "-f64 (SQLIO's default stripe factor) — give -frandom or -fsequential",
                    end,
                );
                AccessPattern::Sequential
            }
        };
        let bs = self.bs_kib.checked_mul(1024).ok_or_else(|| CompatError {
            source_name: "command line".into(),
            line: 0,
            column_or_arg: None,
            msg: "-b is too large".into(),
        })?;
        let mut table = TargetTable::default();
        let mut workloads = Vec::new();
        for (uri, t, fcpus, size, loc) in &self.files {
            if fcpus.is_some() {
                if self.cpus.is_none() {
                    self.cpus = fcpus.clone();
                } else if &self.cpus != fcpus {
                    un.push("per-file CPU mask — ioscope pins one CPU set per run", loc);
                }
            }
            let name = table.intern(uri, *size, Some(self.direct), &mut un, loc);
            workloads.push(Workload {
                name: format!("w{}", workloads.len()),
                target: name,
                read_pct: if self.read { 100 } else { 0 },
                pattern,
                bs: BlockSizes::fixed(bs),
                qd: to_u32(self.qd, loc)?,
                streams: to_u32(t.unwrap_or(self.threads), loc)?,
                rate: Rate::Max,
                offset_bytes: 0,
                size_bytes: None,
                ..Default::default()
            });
        }
        Ok(Translated {
            plan: Plan {
                targets: table.targets,
                runs: vec![RunSpec {
                    name: "sqlio".into(),
                    workloads,
                    duration_ns: Some(self.duration),
                    warmup_ns: 0,
                    cpus: self.cpus,
                    io: IoTuning {
                        write_through: self.write_through,
                        ..Default::default()
                    },
                    ..base_run()
                }],
                warnings: self.warnings,
                data: Default::default(),
            },
            unsupported: un.0,
        })
    }
}

/// One SQLIO target: (path, threads, CPUs, size in bytes, where it was named).
type SqlioFile = (String, Option<u64>, Option<Vec<usize>>, Option<u64>, Loc);

/// SQLIO parameter file: one target per line, `path threads mask size_MiB`.
fn read_param_file(
    name: &str,
    base_dir: &Path,
    target_override: Option<&str>,
    arg: &Loc,
    files: &mut Vec<SqlioFile>,
) -> Result<(), CompatError> {
    if is_windows_path(name) {
        return Err(arg.error(format!(
            "parameter file {name} is a Windows path; give its path on this machine"
        )));
    }
    let path: PathBuf = base_dir.join(name);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| arg.error(format!("cannot read {}: {e}", path.display())))?;
    for (idx, raw) in text.lines().enumerate() {
        let loc = Loc::Line {
            source: name.to_string(),
            line: idx + 1,
        };
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let uri = target_uri(f[0], target_override, &loc)?;
        let threads = f.get(1).map(|t| cnt(t, &loc)).transpose()?;
        let cpus = match f.get(2) {
            Some(m) if u128::from_str_radix(m.trim_start_matches("0x"), 16).ok() == Some(0) => None,
            Some(m) => Some(
                parse_cpu_mask(m)
                    .ok_or_else(|| loc.error(format!("'{m}' is not a hexadecimal CPU mask")))?,
            ),
            None => None,
        };
        let size = f
            .get(3)
            .map(|s| {
                cnt(s, &loc)?
                    .checked_mul(1 << 20)
                    .ok_or_else(|| loc.error("size is too large"))
            })
            .transpose()?;
        files.push((uri, threads, cpus, size, loc));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn every_combination_of_buffering_letters() {
        let b = |l: &str| sqlio_buffering(l).map(|b| (b.os_cache, b.device_cache, b.hints));
        assert_eq!(b("N"), Ok((false, false, false)));
        assert_eq!(b("Y"), Ok((true, true, false)));
        assert_eq!(b("H"), Ok((false, true, false)));
        assert_eq!(b("S"), Ok((true, false, false)));
        assert_eq!(b("HS"), Ok((true, true, false)));
        assert_eq!(b("sh"), Ok((true, true, false)));
        assert_eq!(b("YRT"), Ok((true, true, true)));
        assert_eq!(b("NR"), Ok((false, false, true)));
        assert_eq!(b("T"), Ok((false, false, true)));
        assert!(b("NY").unwrap_err().to_string().contains("contradicts"));
        assert!(b("HN").is_err());
        assert!(b("YX").unwrap_err().to_string().contains("'X'"));
        assert!(b("").is_err());
    }

    #[test]
    fn combined_buffering_flag_runs_buffered_with_a_warning() {
        let t = parse_sqlio(
            &args("sqlio -kR -frandom -BYRT /tmp/f"),
            Path::new("."),
            None,
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        assert_eq!(t.plan.targets[0].direct, Some(false));
        assert!(
            t.plan.warnings[0].contains("-BYRT"),
            "{:?}",
            t.plan.warnings
        );
        let e = parse_sqlio(&args("sqlio -kR -BNY /tmp/f"), Path::new("."), None).unwrap_err();
        assert!(e.to_string().starts_with("argument 3 ('-BNY')"), "{e}");
    }
}
