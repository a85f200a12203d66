//! What ioscope knows about each vdbench parameter, in one table per definition kind
//! (general parameters, `hd=`, `sd=`, `wd=`, `rd=`, and the definition keywords
//! themselves): its name and other spellings, and what the translation does with it
//! (maps it, accepts it without effect and why, lists it as unsupported, or refuses
//! the file). The vdbench reader resolves every key through this table, so a key it
//! does not know is listed as unknown, never ignored; docs/compat-vdbench.md is the
//! long form of the same table, and unit tests hold both against it.
//!
//! vdbench matches a keyword by prefix (`"elapsed".startsWith(keyword)` in its
//! parsers), so `el=`, `in=`, `th=`, `xf=`, `forx=`, `seek=` are its everyday short
//! forms. vdbench takes the first keyword in its own order that the prefix fits; this
//! table accepts a prefix only when it fits one parameter of the kind, and lists an
//! ambiguous one (`e=` in an rd: elapsed or endcmd) with the candidates rather than
//! guess. Keywords vdbench compares in full (`sd=` in a wd, `dedupratio=`) are
//! marked [`VdbOption::exact`].

pub use super::fio_options::Effect;

/// Where a parameter is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A keyword that opens a definition (`sd=`, `wd=`, `rd=`, `hd=`, `fsd=`, `fwd=`).
    Definition,
    /// General parameters, before the first definition.
    General,
    /// Host definitions (`hd=`).
    Host,
    /// Storage definitions (`sd=`).
    Storage,
    /// Workload definitions (`wd=`).
    Workload,
    /// Run definitions (`rd=`).
    Run,
}

impl Kind {
    /// The kind of definition a definition keyword opens (`sd` → [`Kind::Storage`]).
    pub fn opened_by(keyword: &str) -> Option<Kind> {
        match keyword {
            "hd" => Some(Kind::Host),
            "sd" => Some(Kind::Storage),
            "wd" => Some(Kind::Workload),
            "rd" => Some(Kind::Run),
            _ => None,
        }
    }

    /// How docs/compat-vdbench.md names the kind in its tables.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Definition => "definition",
            Kind::General => "general",
            Kind::Host => "hd",
            Kind::Storage => "sd",
            Kind::Workload => "wd",
            Kind::Run => "rd",
        }
    }
}

/// One vdbench parameter of one definition kind.
#[derive(Debug, Clone, Copy)]
pub struct VdbOption {
    pub kind: Kind,
    /// The name the translator uses (vdbench's, lower case).
    pub name: &'static str,
    /// Other spellings vdbench accepts for it (`readpct` for `rdpct`).
    pub aliases: &'static [&'static str],
    /// vdbench compares it in full: no abbreviation.
    pub exact: bool,
    pub effect: Effect,
}

const fn row(kind: Kind, name: &'static str, effect: Effect) -> VdbOption {
    VdbOption {
        kind,
        name,
        aliases: &[],
        exact: false,
        effect,
    }
}

const fn exact(mut o: VdbOption) -> VdbOption {
    o.exact = true;
    o
}

const fn aka(mut o: VdbOption, aliases: &'static [&'static str]) -> VdbOption {
    o.aliases = aliases;
    o
}

use Effect::{Maps, NoEffect, Unsupported};
use Kind::{Definition as D, General as G, Host as H, Run as R, Storage as S, Workload as W};

const NO_DEDUP: Effect = Unsupported("dedup tuning beyond dedupratio/dedupunit/dedupsets");
const NO_CMD: Effect = Unsupported("runs a command around the run; run it yourself");
const NO_FILE_LOOP: Effect =
    Unsupported("a file-system (fwd) parameter: read on an rd of fwds (see the file-system table), meaningless on an rd of sds");
const NO_HIT: Effect =
    Unsupported("cache-hit workloads (hitarea, rhpct, whpct) are not reproduced");
const NO_COMP_LOOP: Effect = Unsupported("a loop over the data's compressibility");
const REPORTING: &str = "changes vdbench's own reports only; ioscope writes its own";

/// Every vdbench parameter ioscope knows, by kind.
pub static OPTIONS: &[VdbOption] = &[
    // Definition keywords: compared in full.
    exact(row(
        D,
        "sd",
        Maps("a storage definition → a target named after it"),
    )),
    exact(row(
        D,
        "wd",
        Maps("a workload definition → a workload per sd it names"),
    )),
    exact(row(
        D,
        "rd",
        Maps("a run definition → a run per combination of its loops"),
    )),
    exact(row(
        D,
        "hd",
        Maps("a host definition → MPI ranks playing that host"),
    )),
    exact(row(
        D,
        "fsd",
        Maps("a file-system definition → a `tree:` target (anchor, depth, width, files, size) on a local directory"),
    )),
    exact(row(
        D,
        "fwd",
        Maps("a file-system workload → a workload per operation on its fsd's tree"),
    )),
    // General parameters.
    row(
        G,
        "compratio",
        Maps("data compressibility (--compress-ratio)"),
    ),
    exact(row(
        G,
        "dedupratio",
        Maps("duplicate blocks (--dedup-ratio)"),
    )),
    exact(row(
        G,
        "dedupunit",
        Maps("the dedup block size (--dedup-unit)"),
    )),
    row(G, "validate", Maps("yes/no → data validation (--verify)")),
    row(
        G,
        "messagescan",
        NoEffect("vdbench's scan of the system log; nothing measured"),
    ),
    exact(row(
        G,
        "compression",
        Unsupported("compression as a percentage; give compratio"),
    )),
    row(
        G,
        "compressionseed",
        Unsupported("ioscope seeds its data from the run's seed"),
    ),
    exact(row(G, "dedupacross", NO_DEDUP)),
    exact(row(
        G,
        "dedupsets",
        Maps("the distinct contents the duplicates repeat (dedup_set)"),
    )),
    exact(row(G, "deduphotsets", NO_DEDUP)),
    exact(row(G, "dedupflipflop", NO_DEDUP)),
    exact(row(G, "dedupmaxkey", NO_DEDUP)),
    exact(row(
        G,
        "journal",
        Unsupported("journal on the command line; give it on the sd"),
    )),
    row(
        G,
        "port",
        Unsupported("vdbench's master/slave socket; ioscope runs under mpirun"),
    ),
    row(G, "pattern", Unsupported("a data pattern file")),
    exact(row(
        G,
        "pattern_buffer",
        Unsupported("the size of vdbench's pattern buffer"),
    )),
    aka(
        row(
            G,
            "data_errors",
            Maps(
                "1: the run stops at its first error, as ioscope's does; N above 1: \
                 errors are counted and the run goes on (every workload's own error \
                 policy), said in a warning: vdbench would end it at the N-th",
            ),
        ),
        &["dataerrors"],
    ),
    row(G, "swat", Unsupported(REPORTING)),
    exact(aka(row(G, "startcmd", NO_CMD), &["start_cmd"])),
    exact(aka(row(G, "endcmd", NO_CMD), &["end_cmd"])),
    exact(row(G, "heartbeat_error", NO_CMD)),
    exact(row(
        G,
        "debug",
        Maps("vdbench's debugging switches: accepted, said in a warning, no effect"),
    )),
    row(
        G,
        "unix2windows",
        Unsupported("path translation between hosts"),
    ),
    row(
        G,
        "formatxfersize",
        Unsupported("the transfer size of vdbench's format run"),
    ),
    row(
        G,
        "create_anchors",
        Maps(
            "yes: each fsd's anchor directory is made, with its missing parents, when the \
             tree opens (a tree's mkdir=parents); no effect on raw-I/O (sd) runs",
        ),
    ),
    row(
        G,
        "formatsds",
        Unsupported("vdbench's pre-format run; fill the target first"),
    ),
    row(G, "report", Unsupported(REPORTING)),
    row(G, "report_run_totals", Unsupported(REPORTING)),
    row(
        G,
        "histogram",
        Unsupported("histogram buckets; ioscope's histogram is fixed"),
    ),
    row(G, "psrset", Unsupported("Solaris processor sets")),
    row(G, "auxreport", Unsupported(REPORTING)),
    row(
        G,
        "monitor",
        Unsupported("a file that stops vdbench from outside"),
    ),
    row(
        G,
        "concatenatesds",
        Unsupported("sds concatenated into one address space"),
    ),
    row(
        G,
        "abort_failed_skew",
        Unsupported("aborting when skew is missed"),
    ),
    row(G, "misc", Unsupported("vdbench's miscellaneous switches")),
    exact(row(G, "showlba", Unsupported("logging every LBA"))),
    exact(row(
        G,
        "loop",
        Unsupported("repeating the whole parameter file"),
    )),
    // Host definitions.
    row(H, "system", Maps("matched with the MPI ranks' host names")),
    row(
        H,
        "vdbench",
        NoEffect("where vdbench is installed; mpirun starts the ranks"),
    ),
    row(
        H,
        "user",
        NoEffect("the remote user; mpirun starts the ranks"),
    ),
    row(
        H,
        "shell",
        NoEffect("how vdbench reaches the host; mpirun starts the ranks"),
    ),
    row(
        H,
        "jvms",
        NoEffect("Java VMs per host; mpirun places the ranks"),
    ),
    row(
        H,
        "clients",
        Maps("N copies of the host on its system, NAME_cl0 … NAME_clN-1, as vdbench makes them"),
    ),
    row(H, "mount", Unsupported("mount commands run on the host")),
    // Storage definitions.
    row(S, "lun", Maps("the target URI")),
    row(S, "size", Maps("target size and working set")),
    row(S, "threads", Maps("streams at queue depth 1")),
    row(S, "offset", Maps("working-set start")),
    row(
        S,
        "openflags",
        Maps("o_direct/directio → O_DIRECT; other flags listed"),
    ),
    row(
        S,
        "journal",
        Maps("data validation with a crash journal (--journal)"),
    ),
    aka(
        row(S, "host", Maps("the hds that drive the sd under mpirun")),
        &["hd"],
    ),
    row(S, "count", Maps("a numbered series of sds on numbered luns")),
    row(
        S,
        "hitarea",
        Maps("the cache-hit area of rhpct/whpct: the first bytes of the range"),
    ),
    row(
        S,
        "align",
        Maps("the offsets' alignment (default: the transfer size)"),
    ),
    row(S, "kstat", Unsupported("Solaris kstat names for reports")),
    row(
        S,
        "instance",
        Unsupported("Solaris kstat instance for reports"),
    ),
    row(S, "replay", Unsupported("I/O trace replay")),
    row(S, "resetlun", Unsupported("SCSI resets during the run")),
    row(S, "resetbus", Unsupported("SCSI resets during the run")),
    row(
        S,
        "range",
        Maps("offset and length within the sd, for wds without one"),
    ),
    row(
        S,
        "streams",
        Unsupported("no longer an sd parameter in vdbench"),
    ),
    exact(row(S, "dedupratio", NO_DEDUP)),
    exact(row(S, "dedupunit", NO_DEDUP)),
    exact(row(S, "dedupsets", NO_DEDUP)),
    exact(row(S, "deduphotsets", NO_DEDUP)),
    exact(row(S, "dedupflipflop", NO_DEDUP)),
    // Workload definitions.
    exact(row(
        W,
        "sd",
        Maps("the sds it runs on (names, wildcards, lists)"),
    )),
    row(
        W,
        "xfersize",
        Maps("block size, or a (size,%,…) distribution"),
    ),
    aka(row(W, "rdpct", Maps("read percentage")), &["readpct"]),
    row(
        W,
        "seekpct",
        Maps(
            "0/seq → sequential, 100/random → random, N between → random_pct N \
             (the others continue from the previous I/O); poisson listed",
        ),
    ),
    row(
        W,
        "range",
        Maps("offset and length within the sd; percent of an sd without size= → range_from_pct/range_to_pct"),
    ),
    row(
        W,
        "hotband",
        Maps("a range within the sd, its random I/O on vdbench's hotband curve (vdbench_hotband)"),
    ),
    row(W, "openflags", Maps("o_direct on its sds, when every run using them agrees")),
    row(
        W,
        "skew",
        Maps("the wd's share of the run's I/O (a share mix), spread evenly over its sds"),
    ),
    aka(
        row(W, "writepct", Maps("read percentage: 100 minus it")),
        &["wrpct"],
    ),
    row(
        W,
        "iorate",
        Unsupported("a rate per wd; give iorate on the rd"),
    ),
    row(
        W,
        "rhpct",
        Maps("the share of reads in the sd's hitarea (a zoned_abs distribution)"),
    ),
    row(
        W,
        "whpct",
        Maps("the share of writes in the sd's hitarea (a zoned_abs distribution)"),
    ),
    row(W, "priority", Unsupported("priorities between wds")),
    row(W, "stride", Unsupported("a random stride between I/Os")),
    aka(
        row(
            W,
            "host",
            Maps("the wd runs on the sds defined for those hosts (vdbench's getSdsForHost)"),
        ),
        &["hd"],
    ),
    exact(row(W, "user", Unsupported("a user-written workload class"))),
    row(
        W,
        "threads",
        Unsupported("threads per wd; give threads on the sd or rd"),
    ),
    row(
        W,
        "streams",
        Maps("N sequential streams, each in its own Nth of the sd, the threads shared among them (seekpct ignored)"),
    ),
    // Run definitions.
    exact(row(
        R,
        "wd",
        Maps("the wds it runs (names, wildcards, lists)"),
    )),
    row(R, "elapsed", Maps("run length, warm-up included")),
    row(R, "interval", Maps("interval length")),
    row(R, "warmup", Maps("warm-up (default one interval; `warmup=0` reports every interval)")),
    row(R, "threads", Maps("streams, instead of the sd's threads")),
    row(R, "openflags", Maps("o_direct on its sds, when every run using them agrees")),
    row(
        R,
        "iorate",
        Maps("max, a rate, a list of rates (one run each), or curve"),
    ),
    row(
        R,
        "distribution",
        Maps("inter-arrival times at a fixed iorate"),
    ),
    row(R, "curve", Maps("the points of iorate=curve")),
    row(
        R,
        "stopcurve",
        Maps("ends iorate=curve at a mean response time"),
    ),
    row(R, "forthreads", Maps("a run per thread count")),
    aka(
        row(R, "forxfersize", Maps("a run per block size")),
        &["xfersize"],
    ),
    aka(
        row(R, "forrdpct", Maps("a run per read percentage")),
        &["rdpct"],
    ),
    aka(
        row(R, "forseekpct", Maps("a run per seek percentage")),
        &["seekpct"],
    ),
    exact(row(
        R,
        "sd",
        Maps("the sds its wds run on, instead of their own"),
    )),
    exact(row(
        R,
        "maxdata",
        Maps("the run's stop_after_bytes: it ends at the first interval whose measured total passes it"),
    )),
    exact(row(
        R,
        "maxdataread",
        Maps("the run's stop_after_read_bytes: as maxdata, counting reads"),
    )),
    exact(row(
        R,
        "maxdatawritten",
        Maps("the run's stop_after_write_bytes: as maxdata, counting writes"),
    )),
    row(
        R,
        "pause",
        Maps("idle seconds before the next run (the run's pause)"),
    ),
    exact(row(R, "replay", Unsupported("I/O trace replay"))),
    aka(row(R, "startcmd", NO_CMD), &["start_cmd"]),
    aka(row(R, "endcmd", NO_CMD), &["end_cmd"]),
    row(R, "fwdrate", NO_FILE_LOOP),
    row(R, "operations", NO_FILE_LOOP),
    row(
        R,
        "format",
        NoEffect("on sds vdbench reads it and does nothing with it (its format runs are the file-system rds'; formatsds= fills sds)"),
    ),
    row(R, "mount", Unsupported("mount commands")),
    aka(row(R, "forrhpct", NO_HIT), &["rhpct"]),
    aka(row(R, "forwhpct", NO_HIT), &["whpct"]),
    aka(row(R, "forhitarea", NO_HIT), &["hitarea"]),
    aka(row(R, "forcompratio", NO_COMP_LOOP), &["compratio"]),
    aka(row(R, "forcompression", NO_COMP_LOOP), &["compression"]),
    aka(row(R, "fordepth", NO_FILE_LOOP), &["depth"]),
    aka(row(R, "forwidth", NO_FILE_LOOP), &["width"]),
    aka(row(R, "forfiles", NO_FILE_LOOP), &["files"]),
    aka(row(R, "forsizes", NO_FILE_LOOP), &["sizes"]),
    aka(row(R, "fortotalsize", NO_FILE_LOOP), &["totalsize"]),
    aka(
        row(R, "forwss", NO_FILE_LOOP),
        &["forworkingsetsize", "wss", "workingsetsize"],
    ),
    aka(row(R, "foroperations", NO_FILE_LOOP), &["foroperation"]),
];

/// What a key written in a definition of some kind means.
#[derive(Debug, Clone, PartialEq)]
pub enum Key {
    /// A table row: written in full, as an alias, or as an unambiguous prefix.
    Known(&'static VdbOption),
    /// A prefix of several rows' names (their names).
    Ambiguous(Vec<&'static str>),
    /// No row of the kind.
    Unknown,
}

impl PartialEq for VdbOption {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.name == other.name
    }
}

/// Resolves `key` (lower case) among the rows of `kind`: an exact name or alias
/// first, then a prefix of one row's name or alias. Definition keywords are never
/// abbreviated.
pub fn resolve(kind: Kind, key: &str) -> Key {
    let rows = || OPTIONS.iter().filter(move |o| o.kind == kind);
    let spellings =
        |o: &'static VdbOption| std::iter::once(o.name).chain(o.aliases.iter().copied());
    if let Some(o) = rows().find(|o| spellings(o).any(|n| n == key)) {
        return Key::Known(o);
    }
    if kind == Kind::Definition || key.is_empty() {
        return Key::Unknown;
    }
    let hits: Vec<&'static VdbOption> = rows()
        .filter(|o| !o.exact && spellings(o).any(|n| n.starts_with(key)))
        .collect();
    match hits.as_slice() {
        [] => Key::Unknown,
        [o] => Key::Known(o),
        _ => Key::Ambiguous(hits.iter().map(|o| o.name).collect()),
    }
}

/// True when the translator reads `name` (a row's name) in definitions of `kind`.
pub fn is_read(kind: Kind, name: &str) -> bool {
    OPTIONS.iter().any(|o| {
        o.kind == kind
            && o.name == name
            && matches!(o.effect, Maps(_) | Effect::Sets(_) | Effect::SetsAs(..))
    })
}

/// docs/compat-vdbench.md's table of every parameter, one row per [`OPTIONS`] entry:
/// kind, names (and whether vdbench takes them only in full), effect, how or why.
pub fn markdown_table() -> String {
    let mut s = String::from(
        "| Kind | Parameter | Effect | How, or why |\n|------|-----------|--------|-------------|\n",
    );
    for o in OPTIONS {
        let names: Vec<String> = std::iter::once(&o.name)
            .chain(o.aliases)
            .map(|n| format!("`{n}`"))
            .collect();
        let effect = match o.effect {
            Effect::Maps(_) | Effect::Sets(_) | Effect::SetsAs(..) => "maps",
            Effect::NoEffect(_) | Effect::NoEffectWhen { .. } | Effect::Warn(_) => "no effect",
            Effect::Unsupported(_) => "unsupported",
            Effect::Refused(_) => "refused",
        };
        s.push_str(&format!(
            "| {} | {}{} | {effect} | {} |\n",
            o.kind.label(),
            names.join(", "),
            if o.exact { " (in full)" } else { "" },
            o.effect.text()
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_per_kind_lower_case_and_described() {
        let mut seen = std::collections::BTreeSet::new();
        for o in OPTIONS {
            assert!(!o.effect.text().is_empty(), "'{}' says nothing", o.name);
            for n in std::iter::once(&o.name).chain(o.aliases) {
                assert!(
                    seen.insert((o.kind.label(), *n)),
                    "'{n}' appears twice among the {} rows",
                    o.kind.label()
                );
                assert_eq!(*n, n.to_ascii_lowercase(), "'{n}' is not lower case");
            }
        }
    }

    /// docs/compat-vdbench.md's table of every parameter is generated from
    /// [`OPTIONS`]; this fails when it is stale (`IOSCOPE_BLESS=1` rewrites it).
    #[test]
    fn vdbench_options_table_in_the_docs_is_current() {
        crate::plan::generated_docs::check_section(
            "docs/compat-vdbench.md",
            "<!-- vdbench-options:begin (generated from src/plan/compat/vdbench_options.rs; \
             IOSCOPE_BLESS=1 cargo test vdbench_options_table rewrites it) -->\n",
            "<!-- vdbench-options:end -->",
            &markdown_table(),
            "the parameter table",
            "vdbench_options_table",
        );
    }

    #[test]
    fn vdbench_short_forms_resolve_to_the_parameter() {
        let name = |kind, key| match resolve(kind, key) {
            Key::Known(o) => o.name,
            other => panic!("{key}: {other:?}"),
        };
        for (key, full) in [
            ("el", "elapsed"),
            ("in", "interval"),
            ("io", "iorate"),
            ("th", "threads"),
            ("wa", "warmup"),
            ("forx", "forxfersize"),
            ("forth", "forthreads"),
            ("xf", "forxfersize"),
            ("seek", "forseekpct"),
            ("di", "distribution"),
        ] {
            assert_eq!(name(Kind::Run, key), full, "rd {key}=");
        }
        for (key, full) in [("xf", "xfersize"), ("rd", "rdpct"), ("seek", "seekpct")] {
            assert_eq!(name(Kind::Workload, key), full, "wd {key}=");
        }
        assert_eq!(name(Kind::Workload, "readpct"), "rdpct");
        assert_eq!(name(Kind::Storage, "th"), "threads");
        assert_eq!(name(Kind::Storage, "l"), "lun");
        assert_eq!(name(Kind::General, "compra"), "compratio");
        assert_eq!(name(Kind::Host, "sys"), "system");
    }

    #[test]
    fn ambiguous_and_exact_only_keys_are_not_guessed() {
        assert_eq!(
            resolve(Kind::Run, "e"),
            Key::Ambiguous(vec!["elapsed", "endcmd"])
        );
        assert!(matches!(resolve(Kind::Storage, "s"), Key::Ambiguous(_)));
        // `dedupratio` is compared in full by vdbench.
        assert_eq!(resolve(Kind::General, "dedupr"), Key::Unknown);
        assert_eq!(resolve(Kind::Definition, "s"), Key::Unknown);
        assert_eq!(resolve(Kind::Run, "no_such_parameter"), Key::Unknown);
    }
}
