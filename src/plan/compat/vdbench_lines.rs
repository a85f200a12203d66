//! The parameters of a vdbench parameter file as vdbench reads them, before any
//! keyword is looked at: `include=` files spliced in, `$name`/`!name` replaced by the
//! values given on the command line (`./vdbench -f parm lun=/dev/sdb`), comment lines
//! (`*`, `#`, `/`) and an `eof` line honoured, each line cut at its first blank or tab
//! (vdbench ignores the rest, which is how people comment a line), a line ending with
//! `,` joined to the next, and the rest split into `key=value` parameters at commas
//! outside parentheses. Quotes keep blanks and commas inside a value.
//!
//! The trade-off: reading includes is the only I/O, done here so the translator
//! itself stays pure; an include within an include is refused, as vdbench does.

use super::{CompatError, Loc};
use std::path::{Path, PathBuf};

/// One `key=value` with where it was written.
#[derive(Debug, Clone)]
pub(super) struct Param {
    pub key: String,
    pub value: String,
    pub loc: Loc,
    /// First on its line, and the line before did not end with ',' (so it cannot be
    /// a continuation).
    pub fresh: bool,
}

/// A parameter file: its name (for locations), text and the directory its
/// relative `include=` names are looked up in.
pub(super) struct Source<'a> {
    pub name: &'a str,
    pub text: &'a str,
    pub base_dir: &'a Path,
}

/// The file's parameters, includes read, `$name`s replaced by `subst` and entries
/// with `$host`/`!host`/`#host` repeated per `hd=` host.
pub(super) fn params(
    src: &Source<'_>,
    subst: &[(String, String)],
) -> Result<Vec<Param>, CompatError> {
    let mut lines = Vec::new();
    read_lines(src, subst, false, &mut lines)?;
    // Per-host copies are made on whole lines, as vdbench makes them, before the
    // lines are split into parameters.
    tokenize(super::vdbench_hosts::expand(lines))
}

/// The non-comment lines of `src` (and of the files it includes), substituted.
fn read_lines(
    src: &Source<'_>,
    subst: &[(String, String)],
    included: bool,
    out: &mut Vec<(Loc, String)>,
) -> Result<(), CompatError> {
    for (idx, raw) in src.text.lines().enumerate() {
        let loc = Loc::Line {
            source: src.name.to_string(),
            line: idx + 1,
        };
        let line = substitute(raw, subst).trim().to_string();
        if line.starts_with("eof") {
            break;
        }
        if line.is_empty() || line.starts_with(['*', '#', '/']) {
            continue;
        }
        let Some(name) = line.strip_prefix("include=") else {
            out.push((loc, line));
            continue;
        };
        if included {
            return Err(loc.error("include= inside an included file (vdbench refuses it too)"));
        }
        let name = cut_at_blank(name).trim_matches('"');
        let path = include_path(src.base_dir, name);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            loc.error(format!(
                "include={name}: cannot read {}: {e}",
                path.display()
            ))
        })?;
        let shown = path.display().to_string();
        let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let inc = Source {
            name: &shown,
            text: &text,
            base_dir: &base,
        };
        read_lines(&inc, subst, true, out)?;
    }
    Ok(())
}

/// vdbench looks a name without a directory up beside the including file, and
/// falls back to the name as given.
fn include_path(base_dir: &Path, name: &str) -> PathBuf {
    let beside = base_dir.join(name);
    if !name.contains('/') || beside.exists() {
        beside
    } else {
        PathBuf::from(name)
    }
}

/// `$key` and `!key` replaced by the command line's `key=value`s, longer keys first
/// so `$lun2` is not taken for `$lun` followed by `2`.
fn substitute(line: &str, subst: &[(String, String)]) -> String {
    let mut keys: Vec<&(String, String)> = subst.iter().collect();
    keys.sort_by_key(|(k, _)| std::cmp::Reverse(k.len()));
    let mut out = line.to_string();
    for (k, v) in keys {
        out = out
            .replace(&format!("${k}"), v)
            .replace(&format!("!{k}"), v);
    }
    out
}

/// The line up to its first blank or tab outside quotes: vdbench ignores the rest.
fn cut_at_blank(line: &str) -> &str {
    let mut quote = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quote = !quote,
            c if c.is_whitespace() && !quote => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Splits the lines into parameters: commas separate them outside parentheses and
/// quotes, a line ending with ',' continues on the next.
fn tokenize(lines: Vec<(Loc, String)>) -> Result<Vec<Param>, CompatError> {
    let mut out = Vec::new();
    let mut continued = false;
    for (loc, line) in lines {
        let line = cut_at_blank(&line);
        let words = split_words(&loc, line)?;
        let was_continued = continued;
        continued = line.ends_with(',');
        for (i, w) in words.into_iter().enumerate() {
            let Some((k, v)) = w.split_once('=') else {
                return Err(loc.error(format!("'{w}' is not key=value")));
            };
            if let Some(var) = unresolved(v) {
                return Err(loc.error(format!(
                    "'{w}': ${var} has no value; give {var}=VALUE after the parameter \
                     file, as vdbench takes it (ioscope vdbench -f FILE {var}=VALUE)"
                )));
            }
            out.push(Param {
                key: k.trim().to_ascii_lowercase(),
                value: v.trim().to_string(),
                loc: loc.clone(),
                fresh: i == 0 && !was_continued,
            });
        }
    }
    Ok(out)
}

/// The name of a `$name` left in a value (no command-line value replaced it).
fn unresolved(value: &str) -> Option<&str> {
    let at = value.find('$')? + 1;
    let rest = &value[at..];
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The comma-separated words of one line, parentheses kept, quotes removed.
fn split_words(loc: &Loc, line: &str) -> Result<Vec<String>, CompatError> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    let mut quote = false;
    for c in line.chars() {
        match c {
            '"' => quote = !quote,
            '(' if !quote => {
                depth += 1;
                cur.push(c)
            }
            ')' if !quote => {
                if depth == 0 {
                    return Err(loc.error("')' without '('"));
                }
                depth -= 1;
                cur.push(c)
            }
            ',' if !quote && depth == 0 => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if quote {
        return Err(loc.error("unterminated '\"'"));
    }
    if depth != 0 {
        return Err(loc.error("'(' without ')' on the same line"));
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str, subst: &[(&str, &str)]) -> Result<Vec<(String, String, bool)>, String> {
        let subst: Vec<(String, String)> = subst
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let src = Source {
            name: "x.parm",
            text,
            base_dir: Path::new("."),
        };
        params(&src, &subst)
            .map(|ps| ps.into_iter().map(|p| (p.key, p.value, p.fresh)).collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_line_ends_at_its_first_blank_or_tab() {
        let got = keys(
            "compratio=2.3\t\t# 65% compression\nsd=s1,lun=/dev/x  my disk\n",
            &[],
        )
        .unwrap();
        let kv: Vec<_> = got
            .iter()
            .map(|(k, v, _)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(kv, [("compratio", "2.3"), ("sd", "s1"), ("lun", "/dev/x")]);
    }

    #[test]
    fn continuation_comments_and_eof() {
        let got = keys("* c\n# c\n/ c\nsd=s1,\n  lun=/dev/x\neof\nwd=w1\n", &[]).unwrap();
        assert_eq!(
            got,
            [
                ("sd".into(), "s1".into(), true),
                ("lun".into(), "/dev/x".into(), false)
            ]
        );
    }

    #[test]
    fn command_line_values_replace_dollar_and_bang_names() {
        let got = keys(
            "sd=s1,lun=$lun,size=!size,threads=$lun2\n",
            &[("lun", "/dev/sdb"), ("lun2", "4"), ("size", "1g")],
        )
        .unwrap();
        let vals: Vec<_> = got.iter().map(|(_, v, _)| v.as_str()).collect();
        assert_eq!(vals, ["s1", "/dev/sdb", "1g", "4"]);
        let e = keys("sd=s1,lun=$lun\n", &[]).unwrap_err();
        assert!(e.contains("x.parm:1") && e.contains("lun=VALUE"), "{e}");
    }

    #[test]
    fn quotes_keep_blanks_and_commas() {
        let got = keys("rd=r1,sd=(\"sd*\"),wd=\"a b,c\"\n", &[]).unwrap();
        let vals: Vec<_> = got.iter().map(|(_, v, _)| v.as_str()).collect();
        assert_eq!(vals, ["r1", "(sd*)", "a b,c"]);
    }

    #[test]
    fn includes_are_read_beside_the_file_once_deep() {
        let dir = std::env::temp_dir().join(format!("ioscope-vdb-inc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("luns"), "sd=s1,lun=/dev/x\n").unwrap();
        std::fs::write(dir.join("deep"), "include=luns\n").unwrap();
        let src = Source {
            name: "p.parm",
            text: "include=luns\nwd=w1,sd=s1\n",
            base_dir: &dir,
        };
        let ps = params(&src, &[]).unwrap();
        assert_eq!(ps.len(), 4);
        assert!(ps[0].loc.to_string().ends_with("luns:1"), "{}", ps[0].loc);
        let nested = Source {
            name: "p.parm",
            text: "include=deep\n",
            base_dir: &dir,
        };
        assert!(params(&nested, &[]).is_err());
        let missing = Source {
            name: "p.parm",
            text: "include=nope\n",
            base_dir: &dir,
        };
        let e = params(&missing, &[]).unwrap_err().to_string();
        assert!(e.starts_with("p.parm:1: include=nope"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
