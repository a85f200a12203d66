//! vdbench file-system workloads (`fsd=`, `fwd=`, and the `rd=`s that run them) →
//! [`Plan`] on `tree:` targets ([`crate::plan::file_tree`]).
//!
//! An fsd is a directory tree: its anchor, depth, width, files and size become a
//! `tree:` URI. Each fwd becomes one workload per fsd it names, on the engine its
//! operation needs: reads and writes (`rdpct=` mixes them) on the sync engine over
//! the tree's files (`fileselect=` picks the file, `fileio=` the place in it,
//! `xfersize=` the size of each I/O), `create` on filecreate, `delete` on
//! filedelete, `getattr` on filestat, `mkdir`/`rmdir` on dircreate/dirdelete (the
//! tree's directories), `open`, `close`, `setattr`, `access`, `copy`, `move` on
//! their engines. A workload on another engine than the byte one
//! needs a target of its own (an engine that creates or removes files does not share
//! its target), so each such workload's tree is its own target entry with the same
//! URI. An operation that finds nothing to act on (no missing file to create, none
//! left to delete; vdbench blocks it) is counted as the workload's skip, not an
//! error, and the run goes on.
//!
//! `format=yes` (or `restart`, `only`) puts a run before the rd's, named
//! `format_for_RD`: the tree's files laid out as holes and written once, in order,
//! so the formatting is timed and reported on its own; `format=only` runs only it.
//! Each rd is one run: `elapsed` (less the warm-up, the first interval unless
//! `warmup=` says) is its duration, `fwdrate=N` is divided among its workloads by
//! their fwds' `skew=` (evenly among those without; under `fwdrate=max` a skew holds
//! them to operation counts in proportion), `operations=` replaces each fwd's
//! operation (a list makes one workload per operation). `fileio=(random,shared)`
//! lets an fwd's threads use one file at the same time, as ioscope's streams may;
//! vdbench then hands files out in order, so the fwd's file service is sequential.
//! `-v`/`-j`/`validate=yes` verify the trees' bytes as for raw I/O (keys per unit
//! over the tree's address space, the journal in `-o`); the file-operation
//! workloads are kept out, and those that replace whole files are listed.
//! Two or more `hd=` bind each fwd's trees to the hosts it runs on ([`hosts`]).
//! See docs/compat-vdbench.md.

use super::{general, list, perr, xfersize, Param};
use crate::plan::compat::{base_run, CompatError, Loc, Translated, UnsupportedList};
use crate::plan::file_service::FileService;
use crate::plan::model::{
    AccessPattern, BlockSizes, DataSettings, FileCreate, Plan, Rate, RunSpec, TargetSpec, Workload,
};
use crate::plan::settings::declared::FSYNC_EACH_FILE;
use crate::plan::settings::Value;
use crate::plan::units::{
    parse_count, parse_duration_ns, parse_duration_ns_allow_zero, parse_size,
};

/// Parameters an fsd reads, then those it accepts without effect, with why.
const FSD_KEYS: &[&str] = &[
    "anchor",
    "depth",
    "width",
    "files",
    "size",
    "sizes",
    "openflags",
    "count",
    "totalsize",
    "workingsetsize",
    "wss",
    "distribution",
    "shared",
];
const FSD_NO_EFFECT: &[(&str, &str)] = &[(
    "log",
    "vdbench's debugging log of each block read and written under data validation \
     (with debug=107); nothing measured",
)];
const FWD_KEYS: &[&str] = &[
    "fsd",
    "operation",
    "xfersizes",
    "fileio",
    "fileselect",
    "threads",
    "rdpct",
    "stopafter",
    "skew",
    "host",
    "openflags",
];
const FWD_NO_EFFECT: &[(&str, &str)] = &[];
/// `sizes=`: vdbench's other spelling of `size=` (a list of sizes and percentages).
const FSD_SIZES: &str = "sizes";
const RD_KEYS: &[&str] = &[
    "fwd",
    "fwdrate",
    "format",
    "elapsed",
    "interval",
    "warmup",
    "operations",
    "forxfersize",
    "forthreads",
    "forrdpct",
    "foroperations",
    "forfwdrate",
    "maxdata",
    "maxdataread",
    "maxdatawritten",
    "pause",
    "openflags",
];
const RD_NO_EFFECT: &[(&str, &str)] = &[];

/// Whether a parameter file describes file-system workloads (an `fsd=` or `fwd=`).
pub(super) fn is_file_system(tokens: &[Param]) -> bool {
    tokens.iter().any(|p| p.key == "fsd" || p.key == "fwd")
}

/// One fsd, fwd or rd with its parameters (`xx=default` ones first).
#[derive(Debug, Clone)]
struct FsDef {
    kind: &'static str,
    name: String,
    loc: Loc,
    params: Vec<Param>,
}

impl FsDef {
    fn get(&self, key: &str) -> Option<&Param> {
        self.params.iter().rev().find(|p| p.key == key)
    }
}

/// Translates a file-system parameter file's parameters.
pub(super) fn translate(
    source_name: &str,
    tokens: Vec<Param>,
    cmd: &super::VdbArgs,
    mut unsupported: UnsupportedList,
) -> Result<Translated, CompatError> {
    let mut data = DataSettings::default();
    let mut make_anchors = false;
    let (mut defs, format) =
        fs_definitions(tokens, &mut data, &mut make_anchors, &mut unsupported)?;
    command_line(cmd, &mut defs, &mut data);
    let of = |k: &str| {
        defs.iter()
            .filter(|d| d.kind == k)
            .cloned()
            .collect::<Vec<_>>()
    };
    let fwds = of("fwd");
    let fsds: Vec<FsDef> = (of("fsd").iter().map(fsd_count::expand))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect();
    let rds: Vec<FsDef> = (of("rd").iter().map(loops::expand))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect();
    if rds.is_empty() {
        return Err(Loc::Line {
            source: source_name.into(),
            line: 0,
        }
        .error("no rd= (run definition): nothing to run"));
    }
    let fsds = fsds
        .iter()
        .map(|d| Fsd::read(d, make_anchors, &mut unsupported))
        .collect::<Result<Vec<_>, _>>()?;
    let fwds = fwds
        .iter()
        .map(|d| Fwd::read(d, &fsds, &mut unsupported))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Output {
        validate: data.verify || data.journal.is_some(),
        format,
        hosts: hosts::defs(&of("hd"))?,
        ..Output::default()
    };
    for rd in &rds {
        rd_runs(rd, &fsds, &fwds, &mut out, &mut unsupported)?;
    }
    hosts::unify(&mut out.runs);
    Ok(Translated {
        plan: Plan {
            targets: out.targets,
            runs: out.runs,
            warnings: Vec::new(),
            data,
        },
        unsupported: unsupported.0,
    })
}

/// vdbench's `-e`, `-i`, `-w` apply to every rd; `-v`/`-j` turn on data validation
/// (and its journal, in the `-o` directory) as for raw I/O: every block the byte
/// workloads write carries its key and every read of a written block is checked
/// ([`Output::validate`] keeps the file-operation workloads out of it).
fn command_line(cmd: &super::VdbArgs, defs: &mut [FsDef], data: &mut DataSettings) {
    for rd in defs.iter_mut().filter(|d| d.kind == "rd") {
        for (key, value, loc) in &cmd.overrides {
            rd.params.push(Param {
                key: key.to_string(),
                value: value.clone(),
                loc: loc.clone(),
                fresh: false,
            });
        }
    }
    data.verify |= cmd.validate;
    if cmd.journal.is_some() {
        data.journal = cmd.journal.clone();
    }
}

/// Groups parameters into fsd, fwd and rd definitions (general ones before the first
/// definition), applies `xx=default`, and keeps only the keys the kind knows:
/// others are listed as unsupported or, when they have no effect, dropped.
/// `fwd=format` is returned on its own.
fn fs_definitions(
    tokens: Vec<Param>,
    data: &mut DataSettings,
    make_anchors: &mut bool,
    unsupported: &mut UnsupportedList,
) -> Result<(Vec<FsDef>, Option<format_fwd::FormatFwd>), CompatError> {
    let mut defs: Vec<FsDef> = Vec::new();
    for p in tokens {
        let opens = match p.key.as_str() {
            "fsd" | "fwd" | "rd" | "hd" if !is_reference(&p, defs.last()) => Some(opener(&p.key)),
            "sd" | "wd" if p.fresh => {
                return Err(p.loc.error(format!(
                    "{}={}: raw-I/O definitions (sd/wd) beside file-system ones (fsd/fwd) \
                     are not supported; translate them as separate files",
                    p.key, p.value
                )))
            }
            _ => None,
        };
        match (opens, defs.last_mut()) {
            (Some(kind), _) => {
                if p.value.is_empty() {
                    return Err(p.loc.error(format!("{}= needs a name", p.key)));
                }
                defs.push(FsDef {
                    kind,
                    name: p.value.clone(),
                    loc: p.loc.clone(),
                    params: Vec::new(),
                });
            }
            (None, Some(d)) => {
                let p = match format_fwd::is_format(d.kind, &d.name) {
                    true => format_fwd::param(p),
                    false => known(d.kind, p, unsupported),
                };
                if let Some(p) = p {
                    d.params.push(p);
                }
            }
            (None, None) if p.key == "create_anchors" => {
                *make_anchors = create_anchors(&p, unsupported)
            }
            (None, None) => general(&p, data, unsupported)?,
        }
    }
    // fwd=format leaves before defaults apply: it takes only threads= from them.
    let format = format_fwd::take(&mut defs, unsupported)?;
    Ok((split_defaults(defs)?, format))
}

/// `create_anchors=yes`: each fsd's anchor is made, with its missing parents, when
/// the tree opens (`mkdir=parents`); `no` leaves ioscope's rule, an anchor that
/// must exist (vdbench would make the anchor itself, not its parents).
fn create_anchors(p: &Param, unsupported: &mut UnsupportedList) -> bool {
    match p.value.to_ascii_lowercase().chars().next() {
        Some('y') => true,
        Some('n') => false,
        _ => {
            unsupported.push(format!("create_anchors={}", p.value), &p.loc);
            false
        }
    }
}

/// Moves `xx=default` definitions out, laying their parameters under the
/// definitions of their kind that follow them; a name defined twice is an error.
fn split_defaults(defs: Vec<FsDef>) -> Result<Vec<FsDef>, CompatError> {
    let mut out: Vec<FsDef> = Vec::new();
    let mut defaults: Vec<(&'static str, Vec<Param>)> = Vec::new();
    for d in defs {
        if d.name.eq_ignore_ascii_case("default") {
            defaults.push((d.kind, d.params));
            continue;
        }
        if out.iter().any(|o| o.kind == d.kind && o.name == d.name) {
            return Err(d
                .loc
                .error(format!("{}={} is defined twice", d.kind, d.name)));
        }
        let mut params: Vec<Param> = defaults
            .iter()
            .filter(|x| x.0 == d.kind)
            .flat_map(|x| x.1.clone())
            .collect();
        params.extend(d.params);
        out.push(FsDef { params, ..d });
    }
    Ok(out)
}

fn opener(key: &str) -> &'static str {
    match key {
        "fsd" => "fsd",
        "fwd" => "fwd",
        "hd" => "hd",
        _ => "rd",
    }
}

/// `fsd=` inside an fwd and `fwd=` inside an rd are references, unless they open a
/// fresh line.
fn is_reference(p: &Param, current: Option<&FsDef>) -> bool {
    let Some(d) = current else { return false };
    let accepts = matches!((d.kind, p.key.as_str()), ("fwd", "fsd") | ("rd", "fwd"));
    accepts && !p.fresh && !d.params.iter().any(|q| q.key == p.key)
}

/// The parameter under its full name when `kind` reads it (vdbench takes a unique
/// prefix: `th=` is `threads=`); `None` when it has no effect or is listed as
/// unsupported.
fn known(kind: &str, mut p: Param, unsupported: &mut UnsupportedList) -> Option<Param> {
    if kind == "hd" {
        // `system=` names the host and `clients=` repeats it (see `hosts`); the
        // rest is how vdbench reaches it, which mpirun does.
        return matches!(p.key.as_str(), "system" | "clients").then_some(p);
    }
    if kind == "fwd" {
        // vdbench's other spellings of two fwd keys (FwdEntry): `hd=` for `host=`,
        // `readpct=` (by prefix, before `rdpct=`) for `rdpct=`.
        if p.key == "hd" {
            p.key = "host".into();
        } else if "readpct".starts_with(p.key.as_str()) {
            p.key = "rdpct".into();
        }
    }
    let (keys, no_effect) = match kind {
        "fsd" => (FSD_KEYS, FSD_NO_EFFECT),
        "fwd" => (FWD_KEYS, FWD_NO_EFFECT),
        _ => (RD_KEYS, RD_NO_EFFECT),
    };
    let fits: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| k.starts_with(p.key.as_str()))
        .collect();
    match fits.as_slice() {
        [one] => {
            p.key = one.to_string();
            Some(p)
        }
        _ if fits.contains(&p.key.as_str()) => Some(p),
        _ if no_effect.iter().any(|(k, _)| *k == p.key) => None,
        _ => {
            let why = match kind {
                "rd" if p.key.starts_with("for") => " — not a file-system loop vdbench has",
                _ if fits.len() > 1 => " — an ambiguous abbreviation",
                _ => "",
            };
            unsupported.push(format!("{}={}{why}", p.key, p.value), &p.loc);
            None
        }
    }
}

/// A directory tree.
#[derive(Clone)]
struct Fsd {
    name: String,
    uri: String,
    file_bytes: u64,
    /// `openflags=`, for the fwds and format runs that give none of their own.
    flags: open_flags::OpenFlags,
    /// `workingsetsize=`: `&wss=BYTES` on the tree its rds' workloads use (not its
    /// format or clean runs); empty without one.
    wss_query: String,
    /// `shared=yes`, where it was given: vdbench's hosts each take every n-th file.
    shared: Option<Loc>,
    /// The share of it one host of several uses (J of N, from 0; [`shared`]).
    share: Option<(u64, u64)>,
}

impl Fsd {
    fn read(
        d: &FsDef,
        make_anchor: bool,
        unsupported: &mut UnsupportedList,
    ) -> Result<Fsd, CompatError> {
        let anchor = d.get("anchor").ok_or_else(|| {
            d.loc.error(format!(
                "fsd={}: anchor= (the tree's directory) is required",
                d.name
            ))
        })?;
        let n = |key: &str, default: u64| -> Result<u64, CompatError> {
            d.get(key).map_or(Ok(default), |p| {
                parse_count(&p.value)
                    .or_else(|e| if p.value == "0" { Ok(0) } else { Err(e) })
                    .map_err(|e| perr(p, &e))
            })
        };
        let (depth, width, files) = (n("depth", 1)?, n("width", 1)?, n("files", 1)?);
        let size = d
            .get("size")
            .or_else(|| d.get(FSD_SIZES))
            .ok_or_else(|| d.loc.error(format!("fsd={}: size= is required", d.name)))?;
        let (size_query, file_bytes) = file_sizes(size, unsupported)?;
        let given = open_flags::given(d.get("openflags"), unsupported);
        let flags = given.as_ref().map(|g| g.0).unwrap_or_default();
        let (dir, server_query) = anchor_parts(d, anchor, flags.direct)?;
        if let (Some((f, loc)), Some(_)) = (&given, &server_query) {
            no_fsync_there(f, loc, unsupported);
        }
        let dist = match d.get("distribution").map(|p| (p, p.value.trim())) {
            None | Some((_, "bottom")) => "",
            Some((_, "all")) => "&dist=all",
            Some((p, other)) => {
                return Err(p.loc.error(format!(
                    "fsd={}: distribution={other}: expected bottom or all, as vdbench",
                    d.name
                )))
            }
        };
        let total = match d.get("totalsize") {
            Some(p) => format!("&total={}", parse_size(&p.value).map_err(|e| perr(p, &e))?),
            None => String::new(),
        };
        let query = format!(
            "depth={depth}&width={width}&files={files}{}{dist}{total}&size={size_query}",
            if make_anchor { "&mkdir=parents" } else { "" }
        );
        // The tree's own keys are checked here; a server anchor's server part is
        // read when the target is (crate::target::{nfs,smb}::tree_*).
        let local_dir = if server_query.is_none() {
            dir
        } else {
            "/anchor"
        };
        crate::plan::fileset::FileSetSpec::parse_tree(&format!("{local_dir}?{query}"))
            .map_err(|e| d.loc.error(format!("fsd={}: {e}", d.name)))?;
        let uri = format!("tree:{dir}?{query}{}", server_query.unwrap_or_default());
        Ok(Fsd {
            name: d.name.clone(),
            uri,
            file_bytes,
            flags,
            share: None,
            shared: (d.get("shared"))
                .filter(|p| p.value.trim().to_ascii_lowercase().starts_with('y'))
                .map(|p| p.loc.clone()),
            wss_query: match d.get("workingsetsize").or_else(|| d.get("wss")) {
                Some(p) => format!("&wss={}", parse_size(&p.value).map_err(|e| perr(p, &e))?),
                None => String::new(),
            },
        })
    }
}

/// The anchor's directory and, for a tree on an NFS export
/// (`anchor=nfs://HOST[:PORT]/EXPORT/DIR[?mountport=N]`) or an SMB share
/// (`anchor=smb://[USER@]HOST[:PORT]/SHARE/DIR`), the server's query keys
/// (`&`-prefixed, empty when none); other URL schemes are refused, as is O_DIRECT
/// there (neither client has a cache to bypass).
fn anchor_parts<'a>(
    d: &FsDef,
    anchor: &'a Param,
    direct: bool,
) -> Result<(&'a str, Option<String>), CompatError> {
    let value = anchor.value.trim_end_matches('/');
    if !value.contains("://") {
        return Ok((value, None));
    }
    let Some(scheme) = ["nfs", "smb"]
        .into_iter()
        .find(|s| value.starts_with(&format!("{s}://")))
    else {
        return Err(anchor.loc.error(format!(
            "fsd={}: anchor={value}: trees on this kind of server are not supported; an anchor \
             is a local directory, nfs://HOST[:PORT]/EXPORT/DIR or \
             smb://[USER@]HOST[:PORT]/SHARE/DIR",
            d.name
        )));
    };
    if direct {
        return Err(anchor.loc.error(format!(
            "fsd={}: openflags=o_direct on an {scheme}:// anchor: ioscope's {scheme} client \
             keeps no cache, so there is nothing to bypass; remove openflags",
            d.name
        )));
    }
    let (base, query) = value.split_once('?').unwrap_or((value, ""));
    let extra = query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| format!("&{kv}"))
        .collect();
    Ok((base.trim_end_matches('/'), Some(extra)))
}

/// `size=` (or `sizes=`): one length, or lengths each with the percentage of the
/// files that get it, drawn per file from the run's seed (vdbench draws them from
/// its own fixed seed). Returns the `tree:` URI's size (and seed) and the largest
/// length. `(N,0)`, vdbench's lengths spread around an average of N, is listed.
fn file_sizes(
    size: &Param,
    unsupported: &mut UnsupportedList,
) -> Result<(String, u64), CompatError> {
    let sizes = list(&size.value);
    let bytes = |v: &str| parse_size(v).map_err(|e| perr(size, &e));
    match sizes.as_slice() {
        [one] => return bytes(one).map(|b| (b.to_string(), b)),
        [avg, zero] if zero.trim() == "0" => {
            let why = format!("lengths spread around an average of {avg}; every file gets {avg}");
            unsupported.push(format!("size={} — {why}", size.value), &size.loc);
            return bytes(avg).map(|b| (b.to_string(), b));
        }
        _ => {}
    }
    let bad = |why: &str| {
        size.loc.error(format!(
            "size={}: {why}; vdbench takes one length, or pairs of a length and the \
             percentage of the files that get it, adding up to 100",
            size.value
        ))
    };
    if sizes.len() % 2 != 0 {
        return Err(bad("an odd number of values"));
    }
    let mut parts = Vec::new();
    for pair in sizes.chunks(2) {
        parts.push(format!("{}:{}", bytes(&pair[0])?, pair[1].trim()));
    }
    let seed = base_run().seed;
    let split =
        crate::plan::file_sizes::FileSizes::parse(&parts.join(","), seed).map_err(|e| bad(&e))?;
    Ok((format!("{}&seed={seed}", split.text()), split.largest()))
}

/// What an fwd asks for.
#[derive(Clone)]
struct Fwd {
    name: String,
    loc: Loc,
    fsds: Vec<usize>,
    operation: String,
    bs: BlockSizes,
    random_io: bool,
    /// `fileselect=`: files in order, at random, or by vdbench's Poisson curve.
    select: select::Selection,
    threads: u64,
    rdpct: Option<u8>,
    stopafter: Option<u64>,
    /// `skew=`: the fwd's percentage of the rd's fwdrate (`None`: a share of what the
    /// skewed fwds leave).
    skew: Option<f64>,
    /// `host=`: the hds that run it (with two or more `hd=`; see [`hosts`]).
    hosts: hosts::FwdHosts,
    /// `openflags=`: replaces its fsds' (the rd's replaces it, [`Rd::point`]).
    openflags: open_flags::Given,
}

/// `skew=N`: a percentage above 0 and at most 100; 0 is vdbench's "not given".
fn skew_pct(p: &Param) -> Result<Option<f64>, CompatError> {
    match p.value.trim().parse::<f64>() {
        Ok(0.0) => Ok(None),
        Ok(v) if v > 0.0 && v <= 100.0 => Ok(Some(v)),
        _ => Err(p.loc.error(format!(
            "skew={}: expected a percentage of the rd's fwdrate, above 0 and at most 100",
            p.value
        ))),
    }
}

/// `fileio=`: whether I/O inside a file is random (vdbench's default is
/// sequential). vdbench reads the words by prefix, takes `shared` only after
/// `random` (the threads share files; ioscope's streams always may, and `fileselect`
/// then stays in order as vdbench requires) and `delete` only after `sequential`
/// (listed here), and refuses `shared` with `fileselect=random`.
fn random_file_io(
    d: &FsDef,
    random_select: bool,
    unsupported: &mut UnsupportedList,
) -> Result<bool, CompatError> {
    let Some(p) = d.get("fileio") else {
        return Ok(false);
    };
    let words: Vec<String> = list(&p.value)
        .iter()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    let is = |i: usize, word: &str| words.get(i).is_some_and(|w| word.starts_with(w.as_str()));
    let bad = || {
        p.loc.error(format!(
            "fileio={}: expected random, sequential, (random,shared) or (sequential,delete)",
            p.value
        ))
    };
    if words.len() > 2 || words.is_empty() {
        return Err(bad());
    }
    if is(0, "sequential") {
        if words.len() == 2 {
            if !is(1, "delete") {
                return Err(bad());
            }
            let why = "each file deleted and created again before it is written";
            unsupported.push(format!("fileio={} — {why}", p.value), &p.loc);
        }
        return Ok(false);
    }
    if !is(0, "random") || (words.len() == 2 && !is(1, "shared")) {
        return Err(bad());
    }
    if let Some(s) = d
        .get("fileselect")
        .filter(|_| random_select && words.len() == 2)
    {
        return Err(s.loc.error(format!(
            "fwd={}: fileio=(random,shared) and fileselect=random are mutually exclusive \
             (vdbench refuses them together)",
            d.name
        )));
    }
    Ok(true)
}

impl Fwd {
    fn read(
        d: &FsDef,
        fsds: &[Fsd],
        unsupported: &mut UnsupportedList,
    ) -> Result<Fwd, CompatError> {
        let fsd_p = d
            .get("fsd")
            .ok_or_else(|| d.loc.error(format!("fwd={}: fsd= is required", d.name)))?;
        let names: Vec<&str> = fsds.iter().map(|f| f.name.as_str()).collect();
        let idx = super::pick(&fsd_p.value, &names)
            .map_err(|pat| fsd_p.loc.error(format!("fwd={}: no fsd={pat}", d.name)))?;
        let skew = d.get("skew").map(skew_pct).transpose()?.flatten();
        let select = select::read(d.get("fileselect"), unsupported)?;
        let random_io = random_file_io(d, select.random, unsupported)?;
        let num = |key: &str| -> Result<Option<u64>, CompatError> {
            d.get(key)
                .map(|p| parse_count(&p.value).map_err(|e| perr(p, &e)))
                .transpose()
        };
        let rdpct = d.get("rdpct").map(super::pct).transpose()?;
        Ok(Fwd {
            name: d.name.clone(),
            loc: d.loc.clone(),
            fsds: idx,
            operation: d
                .get("operation")
                .map_or("read".into(), |p| p.value.to_ascii_lowercase()),
            bs: match d.get("xfersizes") {
                Some(p) => xfersize(p, unsupported)?,
                None => BlockSizes::fixed(4096),
            },
            random_io,
            // In order unless fileselect= says random (vdbench's default).
            select,
            skew,
            threads: num("threads")?.unwrap_or(1),
            rdpct,
            stopafter: num("stopafter")?,
            hosts: d.get("host").map(|p| (list(&p.value), p.loc.clone())),
            openflags: open_flags::given(d.get("openflags"), unsupported),
        })
    }
}

/// What the rds have made so far.
#[derive(Default)]
struct Output {
    targets: Vec<TargetSpec>,
    runs: Vec<RunSpec>,
    /// Data validation is on (`-v`, `-j`, `validate=yes`): the byte workloads
    /// verify, the file-operation ones are marked as not verifying (they write no
    /// bytes), and those that make, remove or copy whole files are refused.
    validate: bool,
    /// How format runs write the trees, when `fwd=format` says.
    format: Option<format_fwd::FormatFwd>,
    /// The host definitions (two or more `hd=`), without their trees.
    hosts: Vec<crate::plan::hosts::HostDef>,
    /// The hosts each target is driven by.
    binding: hosts::Binding,
}

impl Output {
    /// The target for `fsd` used by `engine_use` ("" for reads and writes, else the
    /// operation's name), added on first use. Reads and writes whose `direct`
    /// differs from the fsd's flags open the tree through a target of their own.
    /// With a working set (`workingsetsize=`), the rds' workloads use a target of
    /// their own on its subset.
    fn target(&mut self, fsd: &Fsd, engine_use: &str, formats: bool, direct: bool) -> String {
        let mut name = match engine_use {
            "" if direct == fsd.flags.direct => fsd.name.clone(),
            "" if direct => format!("{}.o_direct", fsd.name),
            "" => format!("{}.buffered", fsd.name),
            op => format!("{}.{op}", fsd.name),
        };
        let wss = !formats && !engine_use.starts_with("clean.") && !fsd.wss_query.is_empty();
        if wss {
            name.push_str(".wss");
        }
        let mut uri = fsd.uri.clone();
        if let Some((j, n)) = fsd.share {
            name.push_str(&format!(".share{}of{n}", j + 1));
            uri.push_str(&format!("&share={j}/{n}"));
        }
        if wss {
            uri.push_str(&fsd.wss_query);
        }
        match self.targets.iter_mut().find(|t| t.name == name) {
            Some(t) if formats => t.create = FileCreate::Empty,
            Some(_) => {}
            None => self.targets.push(TargetSpec {
                name: name.clone(),
                uri,
                size_bytes: None,
                direct: Some(if engine_use.is_empty() {
                    direct
                } else {
                    fsd.flags.direct
                }),
                multipath: None,
                fill: false,
                create: if formats {
                    FileCreate::Empty
                } else {
                    FileCreate::Data
                },
                create_dirs: false,
            }),
        }
        name
    }
}

/// An rd with what its format and clean runs read: its fsds, fwds, and the hosts
/// running each of its fwds.
#[derive(Clone, Copy)]
struct RdTrees<'a> {
    d: &'a FsDef,
    rd: &'a Rd,
    fsds: &'a [Fsd],
    fwds: &'a [Fwd],
    on: &'a [Vec<usize>],
    /// Per fsd: the hosts that take a share of it each (`shared=yes`, [`shared`]).
    shares: &'a [Option<Vec<usize>>],
}

impl<'a> RdTrees<'a> {
    fn new(
        d: &'a FsDef,
        rd: &'a Rd,
        (fsds, fwds): (&'a [Fsd], &'a [Fwd]),
        on: &'a [Vec<usize>],
        shares: &'a [Option<Vec<usize>>],
    ) -> Self {
        RdTrees {
            d,
            rd,
            fsds,
            fwds,
            on,
            shares,
        }
    }
}

/// What an rd sets for its run.
struct Rd {
    fwds: Vec<usize>,
    rate: Rate,
    format: Format,
    /// `format=(only,limited)`: the format run ends at the rd's `elapsed=` or
    /// `maxdata=`, if it has not written every file before.
    format_limited: bool,
    elapsed_ns: u64,
    interval_ns: u64,
    warmup_ns: Option<u64>,
    /// `operations=`: replaces each fwd's operation (one workload per entry).
    operations: Option<Vec<String>>,
    /// A `for…` loop's point ([`loops`]): replaces each fwd's xfersize, threads or
    /// rdpct.
    bs: Option<BlockSizes>,
    threads: Option<u64>,
    rdpct: Option<u8>,
    /// `maxdata=`, `maxdataread=`, `maxdatawritten=` (`vdbench::MAXDATA`): the run
    /// ends once its measured intervals moved (read, wrote) this many bytes.
    maxdata_bytes: [Option<u64>; 3],
    /// `pause=`: idle time after the run.
    pause_ns: u64,
    /// `openflags=`: replaces the fwds' and fsds' for the run and its format.
    openflags: open_flags::Given,
}

/// `format=`: what is done to the trees before the rd's run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    No,
    Yes,
    Only,
    /// Delete the trees' files and directories, and nothing more.
    Clean,
}

impl Rd {
    /// `fwd` at this rd's point of its loops (itself without loops).
    fn point(&self, fwd: &Fwd) -> Fwd {
        let mut f = fwd.clone();
        f.bs = self.bs.clone().unwrap_or(f.bs);
        f.threads = self.threads.unwrap_or(f.threads);
        f.rdpct = self.rdpct.or(f.rdpct);
        f.openflags = self.openflags.clone().or(f.openflags);
        f
    }

    fn read(d: &FsDef, fwds: &[Fwd], unsupported: &mut UnsupportedList) -> Result<Rd, CompatError> {
        let fwd_p = d
            .get("fwd")
            .ok_or_else(|| d.loc.error(format!("rd={}: fwd= is required", d.name)))?;
        let names: Vec<&str> = fwds.iter().map(|f| f.name.as_str()).collect();
        let idx = super::pick(&fwd_p.value, &names)
            .map_err(|pat| fwd_p.loc.error(format!("rd={}: no fwd={pat}", d.name)))?;
        let dur = |key: &str| -> Result<Option<u64>, CompatError> {
            d.get(key)
                .map(|p| parse_duration_ns(&p.value).map_err(|e| perr(p, &e)))
                .transpose()
        };
        let rate = match d.get("fwdrate") {
            None => Rate::Max,
            Some(p) if p.value.eq_ignore_ascii_case("max") => Rate::Max,
            Some(p) => match p.value.trim().parse::<f64>() {
                Ok(n) if n > 0.0 && n.is_finite() => Rate::Iops(n),
                _ => {
                    return Err(p.loc.error(format!(
                        "fwdrate={}: expected max or operations per second",
                        p.value
                    )))
                }
            },
        };
        let (format, format_limited) = format(d, unsupported)?;
        Ok(Rd {
            fwds: idx,
            rate,
            format,
            format_limited,
            elapsed_ns: dur("elapsed")?.unwrap_or(30_000_000_000),
            interval_ns: dur("interval")?.unwrap_or(1_000_000_000),
            // warmup=0 reports every interval (a duration is otherwise above 0).
            warmup_ns: match d.get("warmup") {
                Some(p) if p.value.trim() == "0" => Some(0),
                _ => dur("warmup")?,
            },
            operations: d.get("operations").map(|p| {
                list(&p.value)
                    .iter()
                    .map(|o| o.to_ascii_lowercase())
                    .collect()
            }),
            bs: d
                .get("xfersize")
                .map(|p| xfersize(p, unsupported))
                .transpose()?,
            threads: (d.get("threads"))
                .map(|p| parse_count(&p.value).map_err(|e| perr(p, &e)))
                .transpose()?,
            rdpct: d.get("rdpct").map(super::pct).transpose()?,
            maxdata_bytes: {
                let limit = |(key, _)| d.get(key).map(maxdata).transpose();
                let [a, r, w] = super::MAXDATA;
                [limit(a)?, limit(r)?, limit(w)?]
            },
            pause_ns: match d.get("pause") {
                Some(p) => parse_duration_ns_allow_zero(&p.value).map_err(|e| perr(p, &e))?,
                None => 0,
            },
            openflags: open_flags::given(d.get("openflags"), unsupported),
        })
    }
}

/// An fs rd's `maxdata=` (or `maxdataread=`, `maxdatawritten=`): a number of bytes. Up to 100 vdbench reads it as a
/// multiple of the sds' size: below 100 it refuses it on a file-system rd, and 100
/// itself would be 100 × no sds, a limit of 0 that ends the rd after its first
/// interval (`CollectSlaveStats.getLimit`); both are refused here.
fn maxdata(p: &Param) -> Result<u64, CompatError> {
    if p.value.parse::<f64>().is_ok_and(|n| n <= 100.0) {
        return Err(p.loc.error(format!(
            "{}={}: up to 100 it is a multiple of the sds' size, which vdbench \
             allows only for sd workloads",
            p.key, p.value
        )));
    }
    parse_size(&p.value).map_err(|e| perr(p, &e))
}

/// `format=no|yes|only|restart|clean|limited|(…)`, as vdbench's `FormatFlags`
/// reads it: any `no` → none; `clean` deletes the trees and does nothing more (it
/// implies `only`); `only` formats and runs no workload; yes and restart lay the
/// trees out and write them (restart, which only completes what is missing in
/// vdbench, writes every file too); `limited` (with `only`, as vdbench requires)
/// bounds the format by the rd's elapsed and maxdata: the flag returned;
/// `complete` without `no` is refused, as vdbench refuses it; `directories` is
/// listed with why. Other words are listed.
fn format(d: &FsDef, unsupported: &mut UnsupportedList) -> Result<(Format, bool), CompatError> {
    let Some(p) = d.get("format") else {
        return Ok((Format::No, false));
    };
    let words: Vec<String> = list(&p.value)
        .iter()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    if words
        .iter()
        .any(|w| "no".starts_with(w.as_str()) && !w.is_empty())
    {
        return Ok((Format::No, false));
    }
    let (mut f, mut limited) = (Format::No, false);
    for w in &words {
        match w.as_str() {
            "clean" => f = Format::Clean,
            "only" if f != Format::Clean => f = Format::Only,
            "only" => {}
            "limited" => limited = true,
            // `once`: yes, before the first of the rd's loop runs only (`loops`).
            "yes" | "restart" | "create" | "once" if f == Format::No => f = Format::Yes,
            "yes" | "restart" | "create" | "once" => {}
            "complete" => {
                return Err(p.loc.error(format!(
                    "rd={}: format=complete without no: vdbench refuses it ('format=yes' \
                     and 'format=complete' are mutually exclusive); format=(no,complete) \
                     runs on the files as they are",
                    d.name
                )))
            }
            // vdbench tests `directories` first, by prefix (`format=dir`).
            w if !w.is_empty() && "directories".starts_with(w) => unsupported.push(
                format!(
                    "format={w} — a format of the directories alone is not reproduced: \
                     ioscope lays a tree's directories and files out when it opens it"
                ),
                &p.loc,
            ),
            other => unsupported.push(
                format!(
                    "format={other} — only yes, restart, once, only, limited and clean \
                     are translated"
                ),
                &p.loc,
            ),
        }
    }
    if limited && f != Format::Only {
        return Err(p.loc.error(format!(
            "rd={}: format=limited needs format=(only,limited), as vdbench requires",
            d.name
        )));
    }
    Ok((if limited { Format::Only } else { f }, limited))
}

/// An fwd operation's engine: the byte engine for reads and writes, a
/// file-operation engine for the others (on a tree, each looks for a name it can act
/// on; finding none is a counted skip, as vdbench waits and goes on).
fn operation_engine(op: &str) -> Option<crate::plan::model::EngineKind> {
    use crate::plan::model::EngineKind as E;
    Some(match op {
        "read" | "write" => E::Sync,
        "create" => E::FileCreate,
        "delete" => E::FileDelete,
        "getattr" => E::FileStat,
        "mkdir" => E::DirCreate,
        "rmdir" => E::DirDelete,
        "open" => E::FileOpen,
        "close" => E::FileClose,
        "setattr" => E::FileSetattr,
        "access" => E::FileAccess,
        "copy" => E::FileCopy,
        "move" => E::FileMove,
        _ => return None,
    })
}

/// An fwd's workload name: the fwd's, with the operation when the rd runs several
/// and the fsd when the fwd has several.
fn workload_name(fwd: &Fwd, op: &str, ops: usize, fsd: &str) -> String {
    match (ops > 1, fwd.fsds.len() > 1) {
        (_, true) => format!("{}.{op}/{fsd}", fwd.name),
        (true, false) => format!("{}.{op}", fwd.name),
        (false, false) => fwd.name.clone(),
    }
}

/// The runs of one rd: its format run, then (unless `format=only`) the rd's own.
fn rd_runs(
    d: &FsDef,
    fsds: &[Fsd],
    fwds: &[Fwd],
    out: &mut Output,
    unsupported: &mut UnsupportedList,
) -> Result<(), CompatError> {
    let rd = Rd::read(d, fwds, unsupported)?;
    let warmup_ns = rd.warmup_ns.unwrap_or(rd.interval_ns);
    if rd.format == Format::No && warmup_ns >= rd.elapsed_ns {
        return Err(d.loc.error(format!(
            "rd={}: elapsed must be longer than the warm-up (the first interval when warmup= \
             is not given)",
            d.name
        )));
    }
    let on = rd.hosts_on(fwds, &out.hosts)?;
    let shares = shared::hosts_of_trees(&rd, fsds, fwds, &on);
    let cx = RdTrees::new(d, &rd, (fsds, fwds), &on, &shares);
    if rd.format == Format::Clean {
        for run in clean::runs(&cx, out) {
            out.runs.push(run);
        }
        return Ok(());
    }
    if rd.format != Format::No {
        let run = format_run(&cx, out, unsupported)?;
        out.runs.push(run);
    }
    if rd.format == Format::Only {
        return Ok(());
    }
    let (mut workloads, mut skews, mut run_ops) = (Vec::new(), Vec::new(), Vec::new());
    let mut run_hosts = out.hosts.clone();
    for (k, &f) in rd.fwds.iter().enumerate() {
        let fwd = &rd.point(&fwds[f]);
        let ops = rd
            .operations
            .clone()
            .unwrap_or_else(|| vec![fwd.operation.clone()]);
        for op in &ops {
            for &s in &fwd.fsds {
                let name = workload_name(fwd, op, ops.len(), &fsds[s].name);
                for (hosts, name) in cx.per_host(s, &on[k], name, out) {
                    let tree = cx.tree(s, &hosts);
                    let mut w = fwd_workload(fwd, op, &tree, name, out, unsupported)?;
                    if !hosts.is_empty() {
                        // `threads` on each host that runs the fwd.
                        w.streams = w.streams.saturating_mul(hosts.len() as u32);
                        (out.binding).drive(
                            &mut out.targets,
                            &mut run_hosts,
                            &hosts,
                            &mut w.target,
                        );
                    }
                    workloads.push(validated(w, fwd, op, out.validate, unsupported));
                    // A split fwd's skew is its hosts' together.
                    let parts = (on[k].len() / hosts.len().max(1)).max(1);
                    skews.push(fwd.skew.map(|x| x / parts as f64));
                    run_ops.push(op.clone());
                }
            }
        }
    }
    stop_when_none_left(&mut workloads, &run_ops);
    let shares = skew_shares(&skews).map_err(|e| d.loc.error(format!("rd={}: {e}", d.name)))?;
    share_rate(
        rd.rate,
        &mut workloads,
        &shares,
        skews.iter().any(Option::is_some),
    );
    out.runs.push(rd.run(d, workloads, warmup_ns, run_hosts));
    Ok(())
}

impl Rd {
    /// The hosts running each of its fwds (none: one host).
    fn hosts_on(
        &self,
        fwds: &[Fwd],
        hosts: &[crate::plan::hosts::HostDef],
    ) -> Result<Vec<Vec<usize>>, CompatError> {
        match hosts.is_empty() {
            true => Ok(vec![Vec::new(); self.fwds.len()]),
            false => (self.fwds.iter())
                .map(|&f| hosts::of_fwd(&fwds[f], hosts))
                .collect(),
        }
    }

    /// The fsds its fwds use, each once, first-used first.
    fn trees(&self, fwds: &[Fwd]) -> Vec<usize> {
        let mut used: Vec<usize> = Vec::new();
        for &f in &self.fwds {
            for &s in &fwds[f].fsds {
                if !used.contains(&s) {
                    used.push(s);
                }
            }
        }
        used
    }

    /// The rd's own run of `workloads` (its format run aside).
    fn run(
        &self,
        d: &FsDef,
        workloads: Vec<Workload>,
        warmup_ns: u64,
        hosts: Vec<crate::plan::hosts::HostDef>,
    ) -> RunSpec {
        use crate::plan::settings::declared::PAUSE;
        let mut run = RunSpec {
            name: d.name.clone(),
            workloads,
            duration_ns: Some(
                self.elapsed_ns
                    .saturating_sub(warmup_ns)
                    .max(self.interval_ns),
            ),
            warmup_ns,
            interval_ns: self.interval_ns,
            hosts,
            ..base_run()
        };
        run.settings.set(&PAUSE, Value::Nanos(self.pause_ns));
        self.limit_data(&mut run);
        run
    }

    /// The rd's `maxdata=`, `maxdataread=`, `maxdatawritten=` on `run`.
    fn limit_data(&self, run: &mut RunSpec) {
        for (b, (_, decl)) in self.maxdata_bytes.iter().zip(super::MAXDATA) {
            if let Some(b) = b {
                run.settings.set(decl, Value::Bytes(*b));
            }
        }
    }
}

/// vdbench shuts an fwd's threads down when its operation finds nothing to act on
/// and no other fwd of the run can change that (`FwgThread.canWeGetMoreFiles`,
/// `canWeGetMoreDirectories`): a create when every file exists and nothing
/// deletes, a delete, getattr, setattr or access when no file exists and nothing
/// creates, a mkdir or rmdir likewise with rmdir or mkdir. Those workloads stop
/// their streams then (`stop_when_none_left`), so an rd of `elapsed=99999` that
/// deletes every file ends when the last is gone, as vdbench's example
/// `delete_files` says it does. `ops[k]` is `workloads[k]`'s operation.
fn stop_when_none_left(workloads: &mut [Workload], ops: &[String]) {
    use crate::plan::settings::{declared::STOP_WHEN_NONE_LEFT, Value};
    for (w, op) in workloads.iter_mut().zip(ops) {
        let source = match op.as_str() {
            "create" => "delete",
            "delete" | "getattr" | "setattr" | "access" => "create",
            "mkdir" => "rmdir",
            "rmdir" => "mkdir",
            _ => continue,
        };
        if !ops.iter().any(|o| o == source) {
            w.settings.set(&STOP_WHEN_NONE_LEFT, Value::Flag(true));
        }
    }
}

/// A workload under data validation (`validating`): reads and writes verify as
/// they are; a file-operation workload is marked as not verifying (it writes no
/// bytes), and one that creates, deletes, copies or moves whole files is listed:
/// vdbench forgets a file's keys when it creates or deletes it, ioscope's
/// file-operation engines keep them, so a later read would report the file's
/// blocks as lost.
fn validated(
    mut w: Workload,
    fwd: &Fwd,
    op: &str,
    validating: bool,
    unsupported: &mut UnsupportedList,
) -> Workload {
    if !validating || operation_engine(op) == Some(crate::plan::model::EngineKind::Sync) {
        return w;
    }
    w.overrides.data.verify = Some(false);
    if matches!(op, "create" | "delete" | "copy" | "move") {
        unsupported.push(
            format!(
                "fwd={} operation={op} with data validation — ioscope keeps a removed or \
                 replaced file's keys (vdbench forgets them), so its blocks would read as lost",
                fwd.name
            ),
            &fwd.loc,
        );
    }
    w
}

/// Each workload's percentage of the rd's fwdrate, as vdbench's `FwgRun.calcSkew`
/// sets it: a skewed fwd's own, and what those leave shared evenly among the others;
/// the total must be 100.
fn skew_shares(skews: &[Option<f64>]) -> Result<Vec<f64>, String> {
    let given: f64 = skews.iter().flatten().sum();
    let others = skews.iter().filter(|s| s.is_none()).count();
    let rest = if others > 0 {
        (100.0 - given) / others as f64
    } else {
        0.0
    };
    let total = given + rest * others as f64;
    if skews.is_empty() {
        return Ok(Vec::new());
    }
    if !(99.9999..=100.0001).contains(&total) || (others > 0 && rest <= 0.0) {
        return Err(format!(
            "the fwds' skew= adds up to {given:.2} %{}; it must come to 100 % (vdbench \
             refuses the rd)",
            match others {
                0 => String::new(),
                n => format!(", leaving nothing for the {n} fwds without skew="),
            }
        ));
    }
    Ok(skews.iter().map(|s| s.unwrap_or(rest)).collect())
}

/// Gives each workload its share (percent) of the rd's rate. A rate in operations
/// per second is split; under `fwdrate=max` a skew holds the workloads to operation
/// counts in its proportion (flow control, each stream weighted by its workload's
/// share over its thread count), as vdbench's FwgWaiter releases their operations in
/// that proportion however fast each could go. Without a skew, `max` leaves them free.
fn share_rate(rate: Rate, workloads: &mut [Workload], shares: &[f64], skewed: bool) {
    /// Weight of a whole rate: fine enough that rounding a stream's weight moves
    /// the proportion by under 0.1 % up to 1,000 threads at 1 %.
    const WEIGHT_OF_100_PCT: f64 = 100_000_000.0;
    let weights: Vec<u32> = workloads
        .iter()
        .zip(shares)
        .map(|(w, pct)| {
            let each = pct / 100.0 * WEIGHT_OF_100_PCT / f64::from(w.streams.max(1));
            (each.round() as u32).max(1)
        })
        .collect();
    let gcd = weights.iter().fold(0, |a, &b| gcd(a, b)).max(1);
    let flow = matches!(rate, Rate::Max) && skewed && workloads.len() > 1;
    for ((w, pct), weight) in workloads.iter_mut().zip(shares).zip(weights) {
        w.rate = match rate {
            Rate::Iops(r) => Rate::Iops(r * pct / 100.0),
            other => other,
        };
        if flow {
            w.flow = Some(crate::plan::model::Flow {
                id: 0,
                weight: weight / gcd,
                sleep_ns: 0,
            });
        }
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The workload of fwd `fwd` doing `op` on `fsd`.
fn fwd_workload(
    fwd: &Fwd,
    op: &str,
    fsd: &Fsd,
    name: String,
    out: &mut Output,
    unsupported: &mut UnsupportedList,
) -> Result<Workload, CompatError> {
    let engine = operation_engine(op).ok_or_else(|| {
        fwd.loc.error(format!(
            "fwd={}: operation={op}: unknown operation",
            fwd.name
        ))
    })?;
    let bytes = engine == crate::plan::model::EngineKind::Sync;
    let reads = match engine.only_op() {
        Some(o) => o == crate::plan::model::Op::Read,
        None => op == "read",
    };
    let flags = fsd.flags_with(&fwd.openflags, unsupported)?;
    let target = out.target(fsd, if bytes { "" } else { op }, false, flags.direct);
    let per_file = (fsd.file_bytes / fwd.bs.max_bytes().max(1)).max(1);
    let ios = fwd
        .stopafter
        .unwrap_or(per_file)
        .clamp(1, u64::from(u32::MAX)) as u32;
    let random = if bytes {
        fwd.random_io
    } else {
        fwd.select.random
    };
    let mut w = Workload {
        name,
        target,
        read_pct: match (bytes, fwd.rdpct) {
            (true, Some(p)) => p,
            _ if reads => 100,
            _ => 0,
        },
        pattern: if random {
            AccessPattern::Random
        } else {
            AccessPattern::Sequential
        },
        bs: if bytes {
            fwd.bs.clone()
        } else {
            BlockSizes::fixed(4096)
        },
        qd: 1,
        streams: u32::try_from(fwd.threads).map_err(|_| fwd.loc.error("threads is too large"))?,
        file_service: match &fwd.select {
            select::Selection {
                poisson: Some((midpoint, _)),
                ..
            } if bytes => FileService::Exponential {
                midpoint: *midpoint,
                ios,
            },
            s if s.random => FileService::Random { ios },
            _ => FileService::Sequential,
        },
        ..Default::default()
    };
    w.overrides.engine = Some(engine);
    if !bytes {
        fwd.select.list_poisson_for_names(unsupported);
    }
    if bytes && flags.fsync && !fsd.is_remote() {
        w.settings.set(&FSYNC_EACH_FILE, Value::Flag(true));
    }
    Ok(w)
}

/// `openflags=fsync` on a tree on a file server: listed, as ioscope's NFS and SMB
/// clients have no descriptor to fsync.
fn no_fsync_there(f: &open_flags::OpenFlags, loc: &Loc, unsupported: &mut UnsupportedList) {
    if f.fsync {
        unsupported.push(
            "openflags=fsync — on an nfs:// or smb:// anchor the files are not fsynced \
             before they are closed",
            loc,
        );
    }
}

impl Fsd {
    /// Whether the tree is on a file server (NFS, SMB).
    fn is_remote(&self) -> bool {
        !self.uri.starts_with("tree:/")
    }

    /// The flags its files are opened with by a workload or format run that gives
    /// `given` (an fwd's or rd's, which replaces the fsd's): O_DIRECT on a file
    /// server's tree is refused, as on the fsd; fsync there is listed.
    fn flags_with(
        &self,
        given: &open_flags::Given,
        unsupported: &mut UnsupportedList,
    ) -> Result<open_flags::OpenFlags, CompatError> {
        let Some((f, loc)) = given else {
            return Ok(self.flags);
        };
        if self.is_remote() {
            if f.direct {
                return Err(loc.error(format!(
                    "openflags=o_direct on fsd={}, a tree on a file server: ioscope's NFS \
                     and SMB clients keep no cache, so there is nothing to bypass",
                    self.name
                )));
            }
            no_fsync_there(f, loc, unsupported);
        }
        Ok(*f)
    }
}

/// `format_for_RD`: each tree the rd's fwds use, laid out as holes and written once
/// in order, one workload per tree, with `fwd=format`'s threads and xfersize, or
/// without one vdbench's 8 threads of 128 KiB; at most the file length.
/// With host definitions, each tree is formatted by the hosts of the fwds that use
/// it (`on`, per fwd of the rd).
fn format_run(
    cx: &RdTrees<'_>,
    out: &mut Output,
    unsupported: &mut UnsupportedList,
) -> Result<RunSpec, CompatError> {
    let (d, rd) = (cx.d, cx.rd);
    let format = out.format.clone().unwrap_or(format_fwd::DEFAULT);
    // vdbench's format takes the fsd's flags, then fwd=format's, then the rd's.
    let given = rd.openflags.clone().or(format.openflags.clone());
    let mut workloads = Vec::new();
    let mut run_hosts = out.hosts.clone();
    for (fsd, drivers) in cx.format_trees() {
        let flags = fsd.flags_with(&given, unsupported)?;
        let (bs, streams) = (format.xfer_bytes, format.threads);
        let bs = bs.min(fsd.file_bytes.max(1));
        let mut w = Workload {
            name: format!("format/{}", fsd.name),
            target: out.target(&fsd, "", true, flags.direct),
            read_pct: 0,
            pattern: AccessPattern::Sequential,
            bs: BlockSizes::fixed(bs),
            qd: 1,
            streams,
            file_service: FileService::Sequential,
            ..Default::default()
        };
        if let Some((j, n)) = fsd.share {
            w.name = format!("format/{}.share{}of{n}", fsd.name, j + 1);
        }
        w.overrides.engine = Some(crate::plan::model::EngineKind::Sync);
        if flags.fsync && !fsd.is_remote() {
            w.settings.set(&FSYNC_EACH_FILE, Value::Flag(true));
        }
        (out.binding).drive(&mut out.targets, &mut run_hosts, &drivers, &mut w.target);
        workloads.push(w);
    }
    let mut run = RunSpec {
        name: format!("format_for_{}", d.name),
        workloads,
        // Every file written once; `limited`: or the rd's time, if that ends first.
        duration_ns: rd.format_limited.then_some(rd.elapsed_ns),
        passes: Some(1),
        warmup_ns: 0,
        interval_ns: rd.interval_ns,
        hosts: run_hosts,
        ..base_run()
    };
    if rd.format_limited {
        rd.limit_data(&mut run);
    }
    Ok(run)
}

mod clean;
mod format_fwd;
mod fsd_count;
mod hosts;
mod loops;
mod open_flags;
mod select;
mod shared;
#[cfg(test)]
mod tests;
