//! vdbench's multi-host parameter replication, done on the file's lines before any
//! parameter is read: `#hosts` becomes the number of `hd=` hosts everywhere, and an
//! `sd=`, `fsd=`, `wd=` or `fwd=` entry (its first line and the lines up to the next
//! entry) with `$host`, `!host` or `#host` in it is written once per host, `$host`
//! and `!host` becoming the host's name and `#host` its 0-based number among the
//! hosts. So `fwd=fwdW!host,host=!host,fsd=(fsd!host*)` under `hd=host1` and
//! `hd=host2` becomes `fwd=fwdWhost1,…` and `fwd=fwdWhost2,…`, which `fwd=fwdWhost*`
//! on an rd then finds. Each copy keeps the location of the line it came from.
//!
//! As in vdbench (InsertHosts), `rd=` entries are never repeated, `hd=default` is
//! not a host, a host named `fileserver` gets no copy (it keeps its number), and
//! without any `hd=` the one host is `localhost`. Where this differs: vdbench stops
//! copying an entry at its first line without a host token (an entry whose
//! continuation lines lack one loses them); here the whole entry is copied.

use super::Loc;

/// A parameter-file line with where it was written.
pub(super) type Line = (Loc, String);

/// The tokens vdbench replaces with the host's name.
const NAME_TOKENS: [&str; 2] = ["$host", "!host"];
/// The token replaced with the host's 0-based number.
const NUMBER_TOKEN: &str = "#host";
/// The token replaced with the number of hosts (before `#host`, which it contains).
const COUNT_TOKEN: &str = "#hosts";
/// vdbench's host when no `hd=` names one.
const LOCAL_HOST: &str = "localhost";
/// A host vdbench never repeats entries for.
const FILE_SERVER: &str = "fileserver";

/// The lines with `#hosts` replaced and host-token entries repeated per host.
pub(super) fn expand(lines: Vec<Line>) -> Vec<Line> {
    let hosts = host_names(&lines);
    let lines: Vec<Line> = lines
        .into_iter()
        .map(|(loc, l)| (loc, l.replace(COUNT_TOKEN, &hosts.len().to_string())))
        .collect();
    if !lines.iter().any(|(_, l)| has_token(l)) {
        return lines;
    }
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        if !is_repeatable_start(&lines[i].1) {
            out.push(lines[i].clone());
            i += 1;
            continue;
        }
        let end = (i + 1..lines.len())
            .find(|&j| is_entry_start(&lines[j].1))
            .unwrap_or(lines.len());
        let entry = &lines[i..end];
        if entry.iter().any(|(_, l)| has_token(l)) {
            for (number, name) in hosts.iter().enumerate() {
                if name.as_str() == FILE_SERVER {
                    continue;
                }
                out.extend(
                    entry
                        .iter()
                        .map(|(loc, l)| (loc.clone(), for_host(l, name, number))),
                );
            }
        } else {
            out.extend_from_slice(entry);
        }
        i = end;
    }
    out
}

/// The `hd=` names in file order (`hd=default` left out), or `localhost` alone.
fn host_names(lines: &[Line]) -> Vec<String> {
    let names: Vec<String> = lines
        .iter()
        .filter_map(|(_, l)| {
            let rest = l.get(..3).filter(|p| p.eq_ignore_ascii_case("hd="))?;
            let name = l[rest.len()..]
                .split([',', ' ', '\t'])
                .next()
                .unwrap_or("")
                .trim();
            (!name.is_empty() && !name.eq_ignore_ascii_case("default")).then(|| name.to_string())
        })
        .collect();
    if names.is_empty() {
        vec![LOCAL_HOST.to_string()]
    } else {
        names
    }
}

fn has_token(line: &str) -> bool {
    NAME_TOKENS.iter().any(|t| line.contains(t)) || line.contains(NUMBER_TOKEN)
}

/// `line` for host `name`, number `number`: names first, then the number.
fn for_host(line: &str, name: &str, number: usize) -> String {
    let mut out = line.to_string();
    for t in NAME_TOKENS {
        out = out.replace(t, name);
    }
    out.replace(NUMBER_TOKEN, &number.to_string())
}

/// A line that opens an entry, as vdbench tells them: it starts with `sd`, `fsd`,
/// `wd`, `fwd` or `rd`.
fn is_entry_start(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    ["sd", "fsd", "wd", "fwd", "rd"]
        .iter()
        .any(|k| l.starts_with(k))
}

/// An entry vdbench repeats per host: any but an `rd=`.
fn is_repeatable_start(line: &str) -> bool {
    is_entry_start(line) && !line.to_ascii_lowercase().starts_with("rd=")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Line> {
        text.lines()
            .enumerate()
            .map(|(i, l)| {
                let loc = Loc::Line {
                    source: "p".into(),
                    line: i + 1,
                };
                (loc, l.to_string())
            })
            .collect()
    }

    fn text(ls: &[Line]) -> Vec<(usize, String)> {
        ls.iter()
            .map(|(loc, l)| match loc {
                Loc::Line { line, .. } => (*line, l.clone()),
                _ => (0, l.clone()),
            })
            .collect()
    }

    #[test]
    fn bang_and_dollar_host_become_the_name_and_hash_host_the_number() {
        let out = expand(lines(
            "hd=default,user=u\nhd=h1,system=a\nhd=h2,system=b\n\
             fwd=w!host,host=$host,fsd=(fsd#host*)\nrd=r,fwd=(w*),threads=#hosts",
        ));
        assert_eq!(
            text(&out),
            vec![
                (1, "hd=default,user=u".to_string()),
                (2, "hd=h1,system=a".to_string()),
                (3, "hd=h2,system=b".to_string()),
                (4, "fwd=wh1,host=h1,fsd=(fsd0*)".to_string()),
                (4, "fwd=wh2,host=h2,fsd=(fsd1*)".to_string()),
                (5, "rd=r,fwd=(w*),threads=2".to_string()),
            ]
        );
    }

    #[test]
    fn a_whole_entry_repeats_with_its_continuation_lines_and_rd_never() {
        let out = expand(lines(
            "hd=a\nhd=fileserver\nhd=c\nsd=s!host,\nlun=/d/#host\nsd=plain\nrd=r!host",
        ));
        let got: Vec<String> = text(&out).into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            got,
            [
                "hd=a",
                "hd=fileserver",
                "hd=c",
                "sd=sa,",
                "lun=/d/0",
                "sd=sc,",
                "lun=/d/2"
            ]
            .iter()
            .map(|s| s.to_string())
            .chain(["sd=plain".to_string(), "rd=r!host".to_string()])
            .collect::<Vec<_>>()
        );
    }

    #[test]
    fn without_hd_the_host_is_localhost_and_untouched_files_stay() {
        let out = expand(lines("fsd=f!host,anchor=/t/!host"));
        assert_eq!(
            text(&out),
            vec![(1, "fsd=flocalhost,anchor=/t/localhost".into())]
        );
        let plain = lines("hd=a\nsd=s1,lun=/x");
        assert_eq!(text(&expand(plain.clone())), text(&plain));
    }

    #[test]
    fn copies_reach_the_translator_with_their_hosts_and_lines() {
        use crate::plan::compat::vdbench::parse_str;
        let raw = "hd=default,system=x\nhd=a,system=h1\nhd=b,system=h2\n\
                   sd=s!host,host=!host,lun=/l#host,size=1m\nwd=w,sd=s*\n\
                   rd=r,wd=w,elapsed=2,interval=1\n";
        let t = parse_str("p", raw).unwrap_or_else(|e| panic!("{e}"));
        let luns: Vec<(&str, &str)> = t
            .plan
            .targets
            .iter()
            .map(|t| (t.name.as_str(), t.uri.as_str()))
            .collect();
        assert_eq!(luns, [("sa", "/l0"), ("sb", "/l1")]);
        let hosts: Vec<(&str, Vec<String>)> = t.plan.runs[0]
            .hosts
            .iter()
            .map(|h| (h.name.as_str(), h.targets.clone()))
            .collect();
        assert_eq!(hosts, [("a", vec!["sa".into()]), ("b", vec!["sb".into()])]);
        // An error in a copy names the line it was copied from.
        let fs =
            "hd=a\nhd=b\nfsd=f!host,anchor=/t!host,size=1m\nfwd=w!host,fsd=g!host\nrd=r,fwd=w*\n";
        let e = parse_str("p", fs).unwrap_err().to_string();
        assert_eq!(e, "p:4: fwd=wa: no fsd=ga");
    }
}
