//! vdbench parameter files → [`Plan`].
//!
//! `sd=` becomes a target (named after the sd), `wd=` a workload per sd it names, and
//! each `rd=` one run per combination of its `for…` loops. vdbench threads are
//! outstanding I/Os per sd, so `threads=N` becomes N streams at queue depth 1. vdbench
//! leaves the first interval out of its averages, so the warm-up defaults to one
//! interval and the measured duration is `elapsed` minus the warm-up.
//! See docs/compat-vdbench.md.

mod count;
mod dedup;
mod fs;

use super::vdbench_args::{self, VdbArgs};
use super::vdbench_lines::{self, Param};
use super::vdbench_options::{self, Effect, Key, Kind};
use super::{base_run, is_windows_path, CompatError, Loc, Translated, UnsupportedList};
use crate::plan::hosts::HostDef;
use crate::plan::model::{
    AccessPattern, Arrival, BlockSizes, CurveSpec, DataSettings, Distribution, Plan, Rate, RunSpec,
    SeqLayout, TargetSpec, Workload, ZoneBytes, DEFAULT_CURVE_POINTS_PCT,
};
use crate::plan::overrides::{Amount, WorkloadOverrides};
use crate::plan::settings::declared::{RANDOM_PCT, RANGE_FROM_PCT, RANGE_TO_PCT};
use crate::plan::settings::{Value, WorkloadSettings};
use crate::plan::units::{parse_count, parse_duration_ns, parse_size, parse_size_allow_zero};
use std::path::Path;

/// vdbench's default `threads=` per sd.
const DEFAULT_THREADS: u64 = 8;
/// Refuse loop expansions larger than this: a typo like (1-1000000) is not a plan.
const MAX_LOOP_VALUES: usize = 4096;

/// An sd, wd, rd or hd definition; its parameters' keys are the table's names
/// where the table knows them.
#[derive(Debug, Clone)]
struct Def {
    kind: Kind,
    name: String,
    loc: Loc,
    params: Vec<Param>,
}

impl Def {
    /// The last `key=` (a name the table maps for this kind).
    fn get(&self, key: &str) -> Option<&Param> {
        debug_assert!(
            vdbench_options::is_read(self.kind, key),
            "{key} is not mapped for {}",
            self.kind.label()
        );
        self.params.iter().rev().find(|p| p.key == key)
    }
}

/// Writes the table's name for `p`'s key in definitions of `kind` (`el` → `elapsed`);
/// unknown and ambiguous keys stay as written, and [`read`] lists them.
fn normalise(kind: Kind, mut p: Param) -> Param {
    if let Key::Known(o) = vdbench_options::resolve(kind, &p.key) {
        p.key = o.name.to_string();
    }
    p
}

/// True when the translator reads `p` (the table maps it for `kind`). Otherwise it is
/// skipped when the table says it has no effect, or listed as unsupported: known and
/// not reproduced, an ambiguous abbreviation, or unknown.
fn read(kind: Kind, p: &Param, unsupported: &mut UnsupportedList) -> bool {
    let listed = match vdbench_options::resolve(kind, &p.key) {
        Key::Known(o) => match o.effect {
            Effect::Maps(_) | Effect::Sets(_) | Effect::SetsAs(..) => return true,
            Effect::NoEffect(_) | Effect::Warn(_) => return false,
            Effect::NoEffectWhen { accepts, .. } if accepts(Some(&p.value)) => return false,
            _ => format!("{}={}", p.key, p.value),
        },
        Key::Ambiguous(names) => format!(
            "{}={} — an abbreviation of {}; write the parameter in full",
            p.key,
            p.value,
            names.join(" or ")
        ),
        Key::Unknown => format!("{}={}", p.key, p.value),
    };
    unsupported.push(listed, &p.loc);
    false
}

/// A parameter the table maps that the translator has no code for: listed, so a
/// table row without a reader shows (a unit test keeps this from happening).
fn not_read(p: &Param, unsupported: &mut UnsupportedList) {
    unsupported.push(
        format!("{}={} — mapped in the table, not read", p.key, p.value),
        &p.loc,
    );
}

/// Translates vdbench parameter-file text (its `include=` names looked up in the
/// current directory), as `./vdbench -f FILE` would run it.
pub fn parse_str(source_name: &str, text: &str) -> Result<Translated, CompatError> {
    parse_text(source_name, text, Path::new("."), &[], None)
}

/// Translates a parameter file run with vdbench's command line `args` (`-f FILE`
/// among them): the file and its includes are read here.
pub fn parse_command(args: &[String], target: Option<&str>) -> Result<Translated, CompatError> {
    let mut unsupported = UnsupportedList::default();
    let mut cmd = vdbench_args::parse_args(args, &mut unsupported)?;
    cmd.target = target.map(str::to_string);
    let Some(file) = cmd.file.clone() else {
        return Err(Loc::Arg {
            index: 0,
            text: String::new(),
        }
        .error("vdbench needs -f PARMFILE"));
    };
    let text = std::fs::read_to_string(&file).map_err(|e| CompatError {
        source_name: file.clone(),
        line: 0,
        column_or_arg: None,
        msg: format!("cannot read the parameter file: {e}"),
    })?;
    let base = Path::new(&file)
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let src = vdbench_lines::Source {
        name: &file,
        text: &text,
        base_dir: &base,
    };
    translate(&src, &cmd, unsupported)
}

/// vdbench's report directory (`-o DIR`) among its arguments, if given.
pub fn report_dir(args: &[String]) -> Result<Option<String>, CompatError> {
    let mut listed = UnsupportedList::default();
    Ok(vdbench_args::parse_args(args, &mut listed)?.output_dir)
}

/// Translates parameter-file text whose includes are relative to `base_dir`, with
/// vdbench's command-line arguments `args` besides `-f`.
pub fn parse_text(
    source_name: &str,
    text: &str,
    base_dir: &Path,
    args: &[String],
    target: Option<&str>,
) -> Result<Translated, CompatError> {
    let mut unsupported = UnsupportedList::default();
    let mut cmd = vdbench_args::parse_args(args, &mut unsupported)?;
    cmd.target = target.map(str::to_string);
    let src = vdbench_lines::Source {
        name: source_name,
        text,
        base_dir,
    };
    translate(&src, &cmd, unsupported)
}

fn translate(
    src: &vdbench_lines::Source<'_>,
    cmd: &VdbArgs,
    mut unsupported: UnsupportedList,
) -> Result<Translated, CompatError> {
    let mut tokens = vdbench_lines::params(src, &cmd.subst)?;
    host_openers(&mut tokens);
    if fs::is_file_system(&tokens) {
        return fs::translate(src.name, tokens, cmd, unsupported);
    }
    let mut general = General::default();
    let defs = definitions(tokens, &mut general, &mut unsupported)?;
    let General {
        mut data,
        errors_to_go,
        mut warnings,
        dedup_sets,
    } = general;
    let Definitions {
        sds,
        wds,
        mut rds,
        hds,
    } = apply_defaults(defs)?;
    if rds.is_empty() {
        return Err(nothing_to_run(src.name, &sds, &wds));
    }
    command_line_overrides(cmd, &mut rds, &mut data);
    let sd_infos = sds
        .iter()
        .map(|d| resolve_sd(d, cmd.target.as_deref(), &mut unsupported))
        .collect::<Result<Vec<_>, _>>()?;
    // sd journal= turns on data validation with a crash journal (vdbench -j).
    if let Some(j) = sd_infos.iter().find_map(|s| s.journal.clone()) {
        data.verify = true;
        data.journal = Some(j);
    }
    let wd_infos = wds
        .iter()
        .map(|d| resolve_wd(d, &sd_infos, &mut unsupported))
        .collect::<Result<Vec<_>, _>>()?;
    let mut runs = Vec::new();
    let mut used_sds = vec![SdUse::default(); sd_infos.len()];
    for rd in &rds {
        let cx = RdInputs {
            sds: &sd_infos,
            wds: &wd_infos,
        };
        let out = RdOutputs {
            used_sds: &mut used_sds,
            runs: &mut runs,
            unsupported: &mut unsupported,
            warnings: &mut warnings,
        };
        expand_rd(rd, &cx, out)?;
    }
    if let Some(n) = errors_to_go {
        go_on_through_errors(&mut runs, n, &mut warnings);
    }
    let used_bytes = used_sd_bytes(&sd_infos, &used_sds);
    data.dedup_set = dedup::set_of(dedup_sets.as_ref(), &data, used_bytes, &mut warnings)?;
    let used: Vec<bool> = used_sds.iter().map(|u| u.used).collect();
    let hosts = host_defs(&hds, &sd_infos, &used, &mut unsupported)?;
    let targets = used_targets(&sd_infos, &used_sds, &mut unsupported);
    for r in &mut runs {
        r.hosts = hosts.clone();
    }
    Ok(Translated {
        plan: Plan {
            targets,
            runs,
            warnings,
            data,
        },
        unsupported: unsupported.0,
    })
}

/// `host=` before the first storage, workload or run definition opens a host
/// definition: vdbench's older spelling of `hd=` (HostParms; within an sd, wd or
/// fwd it names the hosts that run it, as before).
fn host_openers(tokens: &mut [Param]) {
    const LATER: &[&str] = &["sd", "wd", "fsd", "fwd", "rd", "rg"];
    for p in tokens {
        if LATER.contains(&p.key.as_str()) {
            return;
        }
        if p.key == "host" {
            p.key = "hd".into();
        }
    }
}

/// `-v`/`-j` (validation and its journal) and `-e`/`-i`/`-w` (every rd's elapsed,
/// interval and warm-up, over what the file says).
fn command_line_overrides(cmd: &VdbArgs, rds: &mut [Def], data: &mut DataSettings) {
    data.verify |= cmd.validate;
    if cmd.journal.is_some() {
        data.journal = cmd.journal.clone();
    }
    for rd in rds {
        for (key, value, loc) in &cmd.overrides {
            rd.params.push(Param {
                key: key.to_string(),
                value: value.clone(),
                loc: loc.clone(),
                fresh: false,
            });
        }
    }
}

/// Groups the parameters into sd/wd/rd definitions; parameters before the first
/// definition are general ones (compratio=, …).
fn definitions(
    tokens: Vec<Param>,
    general: &mut General,
    unsupported: &mut UnsupportedList,
) -> Result<Vec<Def>, CompatError> {
    let mut defs: Vec<Def> = Vec::new();
    for p in tokens {
        let opens = match vdbench_options::resolve(Kind::Definition, &p.key) {
            // `sd=` inside a wd and `wd=`/`sd=` inside an rd are references, unless
            // they open a fresh line.
            Key::Known(o) if !is_reference(&p, defs.last()) => Some(o),
            _ => None,
        };
        let Some(o) = opens else {
            match defs.last_mut() {
                Some(d) => d.params.push(normalise(d.kind, p)),
                None => general_param(&normalise(Kind::General, p), general, unsupported)?,
            }
            continue;
        };
        if p.value.is_empty() {
            return Err(p.loc.error(format!("{}= needs a name", p.key)));
        }
        let kind = match (o.effect, Kind::opened_by(o.name)) {
            (Effect::Maps(_), Some(kind)) => kind,
            (effect, _) => {
                return Err(p
                    .loc
                    .error(format!("{}={}: {}", p.key, p.value, effect.text())))
            }
        };
        defs.push(Def {
            kind,
            name: p.value.clone(),
            loc: p.loc.clone(),
            params: Vec::new(),
        });
    }

    Ok(defs)
}

/// The sds, wds and rds, each with the `xx=default` definitions before it applied;
/// a name defined twice is an error.
fn apply_defaults(defs: Vec<Def>) -> Result<Definitions, CompatError> {
    // Apply `xx=default` definitions to those that follow them.
    let mut sds = Vec::new();
    let mut wds = Vec::new();
    let mut rds = Vec::new();
    let mut hds = Vec::new();
    let mut defaults: [Vec<Param>; 4] = Default::default();
    for d in defs {
        let slot = match d.kind {
            Kind::Storage => 0,
            Kind::Workload => 1,
            Kind::Host => 3,
            _ => 2,
        };
        if d.name.eq_ignore_ascii_case("default") {
            defaults[slot].extend(d.params);
            continue;
        }
        let mut params = defaults[slot].clone();
        params.extend(d.params);
        let d = Def { params, ..d };
        match slot {
            0 => sds.extend(sd_count(d)?),
            1 => wds.push(d),
            3 => hds.push(d),
            _ => rds.push(d),
        }
    }
    for (kind, list) in [("sd", &sds), ("wd", &wds), ("rd", &rds), ("hd", &hds)] {
        for (i, d) in list.iter().enumerate() {
            if list[..i].iter().any(|o| o.name == d.name) {
                return Err(d.loc.error(format!("{kind}={} is defined twice", d.name)));
            }
        }
    }
    Ok(Definitions { sds, wds, rds, hds })
}

/// The sds `d` stands for: itself without `count=`, or its numbered series
/// ([`count`]), each copy with its own name and lun.
fn sd_count(d: Def) -> Result<Vec<Def>, CompatError> {
    let Some(p) = d.get("count").cloned() else {
        return Ok(vec![d]);
    };
    let mut out = Vec::new();
    for k in count::series(&p, &format!("sd={}", d.name))? {
        let mut one = Def {
            name: count::sd_name(&p, &d.name, k)?,
            params: d
                .params
                .iter()
                .filter(|q| q.key != "count")
                .cloned()
                .collect(),
            kind: d.kind,
            loc: d.loc.clone(),
        };
        for q in one.params.iter_mut().filter(|q| q.key == "lun") {
            q.value = count::sd_name(&p, &q.value, k)?;
        }
        out.push(one);
    }
    Ok(out)
}

/// A parameter file's definitions by kind, defaults applied.
struct Definitions {
    sds: Vec<Def>,
    wds: Vec<Def>,
    rds: Vec<Def>,
    hds: Vec<Def>,
}

fn is_reference(p: &Param, current: Option<&Def>) -> bool {
    let Some(d) = current else { return false };
    // `hd=` inside an sd or wd is vdbench's other spelling of `host=`.
    let accepts = match d.kind {
        Kind::Storage => p.key == "hd",
        Kind::Workload => p.key == "sd" || p.key == "hd",
        Kind::Run => p.key == "wd" || p.key == "sd",
        _ => false,
    };
    accepts && !p.fresh && !d.params.iter().any(|q| q.key == p.key)
}

/// Splits "(a,b,c)" into its items; a bare value is a list of one.
fn list(value: &str) -> Vec<String> {
    let v = value.trim();
    let inner = v
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(v);
    inner
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// `*` matches any run of characters (vdbench's wildcard in wd= and sd= lists).
fn glob(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ni < n.len() {
        if pi < p.len() && p[pi] != b'*' && p[pi].eq_ignore_ascii_case(&n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            pi += 1;
            mark = ni;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}

struct Sd {
    name: String,
    lun: String,
    size: Option<u64>,
    direct: bool,
    threads: u64,
    offset: u64,
    /// journal= directory (data validation with a crash journal).
    journal: Option<String>,
    /// host= (names or `*` patterns of hds), where the sd is driven from.
    host: Option<Param>,
    /// align=: offsets are multiples of this (vdbench's default: the transfer size).
    align: Option<u64>,
    /// range=: the part of the sd its wds use, unless a wd gives its own.
    range: Option<(RangeEnd, RangeEnd)>,
    /// hitarea=: the first bytes of a wd's range its cache hits go to (vdbench's
    /// default 1 MiB).
    hitarea: u64,
}

/// sd `d`; `target` (`--target`) replaces its lun.
fn resolve_sd(
    d: &Def,
    target: Option<&str>,
    unsupported: &mut UnsupportedList,
) -> Result<Sd, CompatError> {
    let Some(lun) = d.get("lun") else {
        return Err(d.loc.error(format!("sd={} has no lun=", d.name)));
    };
    if target.is_none() && is_windows_path(&lun.value) {
        return Err(lun.loc.error(format!(
            "lun={} is a Windows path; give a path on this machine with --target",
            lun.value
        )));
    }
    let mut sd = Sd {
        name: d.name.clone(),
        lun: target.unwrap_or(&lun.value).to_string(),
        size: None,
        direct: false,
        threads: DEFAULT_THREADS,
        offset: 0,
        journal: None,
        host: None,
        align: None,
        range: None,
        hitarea: 1 << 20,
    };
    for p in &d.params {
        if !read(d.kind, p, unsupported) {
            continue;
        }
        match p.key.as_str() {
            "lun" => {}
            "size" => sd.size = Some(size(p)?),
            "threads" => sd.threads = count(p)?,
            "offset" => sd.offset = parse_size_allow_zero(&p.value).map_err(|e| perr(p, &e))?,
            "openflags" => openflags(p, &mut sd.direct, unsupported),
            "journal" => sd.journal = Some(p.value.clone()),
            "host" => sd.host = Some(p.clone()),
            "align" => sd.align = Some(size(p)?),
            "range" => sd.range = range_param(p, unsupported),
            "hitarea" => sd.hitarea = parse_size_allow_zero(&p.value).map_err(|e| perr(p, &e))?,
            _ => not_read(p, unsupported),
        }
    }
    Ok(sd)
}

fn openflags(p: &Param, direct: &mut bool, unsupported: &mut UnsupportedList) {
    for f in list(&p.value) {
        match f.to_ascii_lowercase().as_str() {
            "o_direct" | "directio" => *direct = true,
            _ => unsupported.push(format!("openflags={f}"), &p.loc),
        }
    }
}

fn perr(p: &Param, e: &dyn std::fmt::Display) -> CompatError {
    p.loc.error(format!("{}={}: {e}", p.key, p.value))
}

fn size(p: &Param) -> Result<u64, CompatError> {
    parse_size(&p.value).map_err(|e| perr(p, &e))
}

fn count(p: &Param) -> Result<u64, CompatError> {
    parse_count(&p.value).map_err(|e| perr(p, &e))
}

struct Wd {
    name: String,
    /// Indexes into the sd list.
    sds: Vec<usize>,
    bs: BlockSizes,
    read_pct: u8,
    seek: Seek,
    /// (start, end) in percent or bytes, resolved per sd.
    range: Option<(RangeEnd, RangeEnd)>,
    /// `hotband=`: the range is a hot band, its random I/O on vdbench's curve.
    hotband: bool,
    direct: bool,
    /// Percentage of the run's I/O (skew=).
    skew: Option<f64>,
    /// rhpct=, whpct=: the percentages of reads and writes that are cache hits,
    /// and where given.
    hits: (f64, f64, Option<Loc>),
    /// `streams=N`: N sequential streams, each in its own Nth of the sd and served
    /// by an Nth of the threads (vdbench's StreamContext; seekpct is ignored).
    streams: Option<(u32, Loc)>,
}

#[derive(Clone, Copy)]
enum RangeEnd {
    Pct(f64),
    Bytes(u64),
}

/// The sds a wd's `sd=` names; none when it names none (an rd's `sd=` must then).
fn wd_sds(d: &Def, sds: &[Sd]) -> Result<Vec<usize>, CompatError> {
    match d.get("sd") {
        Some(p) => pick_sds(p, sds),
        None => Ok(Vec::new()),
    }
}

/// The sds `p` names (names, `*` wildcards and `(sd1-sd8)` ranges), each once, in
/// the order named.
fn pick_sds(p: &Param, sds: &[Sd]) -> Result<Vec<usize>, CompatError> {
    pick(
        &p.value,
        &sds.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
    )
    .map_err(|pat| p.loc.error(format!("sd={pat}: no such sd")))
}

/// The indexes of the `names` that `value` picks (names, `*` wildcards and
/// `(a1-a8)` ranges), each once, in the order named; `Err` with a pattern that
/// picks none.
pub(super) fn pick(value: &str, names: &[&str]) -> Result<Vec<usize>, String> {
    let mut idx = Vec::new();
    for pat in name_list(value) {
        let before = idx.len();
        for (i, n) in names.iter().enumerate() {
            if glob(&pat, n) && !idx.contains(&i) {
                idx.push(i);
            }
        }
        if idx.len() == before {
            return Err(pat);
        }
    }
    Ok(idx)
}

/// A list of names as vdbench reads it: in parentheses, `sd1-sd8` is the names
/// from `sd1` to `sd8` (the same letters, the number counting up); anything else
/// is a name or a wildcard.
fn name_list(value: &str) -> Vec<String> {
    let items = list(value);
    if !value.trim_start().starts_with('(') {
        return items;
    }
    let mut out = Vec::new();
    for it in items {
        match name_range(&it) {
            Some(names) => out.extend(names),
            None => out.push(it),
        }
    }
    out
}

/// `sd1-sd8` → sd1, sd2, … sd8; `None` when `item` is not such a range.
fn name_range(item: &str) -> Option<Vec<String>> {
    let (a, b) = item.split_once('-')?;
    let split = |s: &str| {
        let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (prefix, num) = s.split_at(s.len() - digits);
        Some((prefix.to_string(), num.parse::<u64>().ok()?))
    };
    let ((pa, na), (pb, nb)) = (split(a)?, split(b)?);
    if pa != pb || pa.is_empty() || nb <= na || nb - na > MAX_LOOP_VALUES as u64 {
        return None;
    }
    // As vdbench: the numbers are written without leading zeros.
    Some((na..=nb).map(|n| format!("{pa}{n}")).collect())
}

fn resolve_wd(d: &Def, sds: &[Sd], unsupported: &mut UnsupportedList) -> Result<Wd, CompatError> {
    let mut wd = Wd {
        name: d.name.clone(),
        sds: wd_sds(d, sds)?,
        bs: BlockSizes::fixed(4096),
        read_pct: 100,
        seek: Seek::of(AccessPattern::Random),
        range: None,
        hotband: false,
        direct: false,
        skew: None,
        hits: (0.0, 0.0, None),
        streams: None,
    };
    for p in &d.params {
        if !read(d.kind, p, unsupported) {
            continue;
        }
        match p.key.as_str() {
            "sd" => {}
            "xfersize" => wd.bs = xfersize(p, unsupported)?,
            "rdpct" => wd.read_pct = pct(p)?,
            // vdbench's WD_entry: readpct = 100 - writepct (the last written wins).
            "writepct" => wd.read_pct = 100 - pct(p)?,
            "seekpct" => wd.seek = seekpct(p, &p.value, unsupported)?,
            // As vdbench: range= moves the band; the wd keeps its hotband curve.
            "range" => wd.range = range_param(p, unsupported),
            "hotband" => hotband_param(p, &mut wd, unsupported),
            "openflags" => openflags(p, &mut wd.direct, unsupported),
            "host" => wd.sds = sds_of_hosts(p, &d.name, &wd.sds, sds)?,
            "streams" => match p.value.trim().parse::<u32>() {
                Ok(n) if n > 0 => wd.streams = Some((n, p.loc.clone())),
                _ => {
                    return Err(p
                        .loc
                        .error(format!("streams={}: expected a count", p.value)))
                }
            },
            "rhpct" => (wd.hits.0, wd.hits.2) = (pct(p)? as f64, Some(p.loc.clone())),
            "whpct" => (wd.hits.1, wd.hits.2) = (pct(p)? as f64, Some(p.loc.clone())),
            "skew" => match p.value.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 && v <= 100.0 => wd.skew = Some(v),
                _ => {
                    return Err(p
                        .loc
                        .error(format!("skew={}: expected a percentage above 0", p.value)))
                }
            },
            _ => not_read(p, unsupported),
        }
    }
    Ok(wd)
}

/// A wd's sds that are defined for the hosts its `host=` names (vdbench's
/// `getSdsForHost`: a wd on a host uses that host's sds; an sd without `host=` is
/// on every host). Names and `*` patterns on either side.
fn sds_of_hosts(
    p: &Param,
    wd: &str,
    picked: &[usize],
    sds: &[Sd],
) -> Result<Vec<usize>, CompatError> {
    let wd_hosts = list(&p.value);
    let meet = |a: &str, b: &str| glob(a, b) || glob(b, a);
    let kept: Vec<usize> = picked
        .iter()
        .copied()
        .filter(|&i| match &sds[i].host {
            None => true,
            Some(h) => list(&h.value)
                .iter()
                .any(|s| wd_hosts.iter().any(|w| meet(w, s))),
        })
        .collect();
    if kept.is_empty() && !picked.is_empty() {
        return Err(p.loc.error(format!(
            "wd={wd} host={}: none of its sds is defined for that host",
            p.value
        )));
    }
    Ok(kept)
}

/// vdbench's cache hits (`rhpct=`, `whpct=`): a hit goes to the first `hitarea`
/// bytes of the wd's range, a miss to the rest of it (`WG_entry`'s hit and miss
/// contexts), so a random wd whose reads and writes hit alike is a zoned_abs
/// distribution: the hit share to the hit area, the rest after it. `None`: no hits
/// asked for. `Err`: what cannot be reproduced — hit shares that differ between
/// the reads and writes of a mixed wd, or hits of sequential or partly random I/O
/// (whose sequential runs vdbench keeps in each area), or on a hot band.
fn cache_hits(
    wd: &Wd,
    sd: &Sd,
    read_pct: u8,
    seek: &Seek,
    settings: &WorkloadSettings,
) -> Result<Option<Distribution>, (String, Loc)> {
    let (rh, wh, Some(loc)) = (wd.hits.0, wd.hits.1, wd.hits.2.clone()) else {
        return Ok(None);
    };
    // No hit area (hitarea=0): vdbench's hits and misses share the whole range.
    if (rh == 0.0 && wh == 0.0) || sd.hitarea == 0 {
        return Ok(None);
    }
    let listed = |why: &str| {
        Err((
            format!("rhpct={rh}/whpct={wh} on wd={} — {why}", wd.name),
            loc.clone(),
        ))
    };
    let hit = match read_pct {
        100 => rh,
        0 => wh,
        _ if rh == wh => rh,
        _ => return listed("reads and writes hit in different shares"),
    };
    let random = seek.pattern == AccessPattern::Random && settings.ratio(&RANDOM_PCT) >= 100.0;
    if !random || wd.hotband {
        return listed("hits of sequential, partly random or hot-band I/O");
    }
    // With no hits the band is still there: vdbench keeps the misses out of it.
    let mut bands = vec![ZoneBytes {
        io_pct: hit,
        bytes: sd.hitarea,
    }];
    if hit < 100.0 {
        bands.push(ZoneBytes {
            io_pct: 100.0 - hit,
            bytes: 0,
        });
    }
    Ok(Some(Distribution::ZonedBytes { bands }))
}

/// `hotband=(low,high)`: the band is the wd's range (vdbench sets the same range
/// as `range=`), and its random I/O follows vdbench's hotband curve
/// (`Distribution::VdbenchHotband`). A band wrapping past the end of the sd is
/// listed, and the whole sd is used.
fn hotband_param(p: &Param, wd: &mut Wd, unsupported: &mut UnsupportedList) {
    let ends = list(&p.value)
        .iter()
        .map(|s| hotband_end(s))
        .collect::<Option<Vec<_>>>();
    match ends.as_deref() {
        Some([a, b]) => (wd.range, wd.hotband) = (Some((*a, *b)), true),
        _ => unsupported.push(
            format!(
                "hotband={} — a band wrapping past the end of the sd, or not (low,high)",
                p.value
            ),
            &p.loc,
        ),
    }
}

/// `range=(low,high)`: percent of the sd, or bytes; anything else is listed.
fn range_param(p: &Param, unsupported: &mut UnsupportedList) -> Option<(RangeEnd, RangeEnd)> {
    let ends = list(&p.value)
        .iter()
        .map(|s| range_end(s))
        .collect::<Option<Vec<_>>>();
    match ends.as_deref() {
        Some([a, b]) => Some((*a, *b)),
        _ => {
            unsupported.push(format!("range={}", p.value), &p.loc);
            None
        }
    }
}

fn range_end(s: &str) -> Option<RangeEnd> {
    if s.chars().all(|c| c.is_ascii_digit() || c == '.') {
        let f: f64 = s.parse().ok()?;
        (0.0..=100.0).contains(&f).then_some(RangeEnd::Pct(f))
    } else {
        parse_size_allow_zero(s).ok().map(RangeEnd::Bytes)
    }
}

/// One end of a `hotband=(lo,hi)`: bare numbers up to 100 are percent of the sd, over
/// 200 bytes (vdbench's rule); 100–200 means the band wraps past the end, which a
/// working-set range cannot express.
fn hotband_end(s: &str) -> Option<RangeEnd> {
    if s.chars().all(|c| c.is_ascii_digit() || c == '.') {
        let f: f64 = s.parse().ok().filter(|f: &f64| f.is_finite())?;
        if (0.0..=100.0).contains(&f) {
            Some(RangeEnd::Pct(f))
        } else if f > 200.0 && f < u64::MAX as f64 {
            Some(RangeEnd::Bytes(f as u64))
        } else {
            None
        }
    } else {
        parse_size_allow_zero(s).ok().map(RangeEnd::Bytes)
    }
}

/// A percentage 0..100 (`rdpct=`, `seekpct=`…), refused located otherwise.
pub(super) fn pct(p: &Param) -> Result<u8, CompatError> {
    pct_text(p, &p.value)
}

fn pct_text(p: &Param, v: &str) -> Result<u8, CompatError> {
    v.trim()
        .parse::<u8>()
        .ok()
        .filter(|&n| n <= 100)
        .ok_or_else(|| {
            p.loc
                .error(format!("{}={v}: expected a percentage 0..100", p.key))
        })
}

/// How a wd seeks (`seekpct=`).
#[derive(Clone, Copy, PartialEq)]
struct Seek {
    pattern: AccessPattern,
    /// `seekpct=eof`: sequential, and the wd stops at the end of its range.
    to_eof: bool,
    /// `seekpct=N` between 0 and 100: the percentage of random I/Os, the others
    /// continuing from the previous one (`random_pct`).
    random_pct: Option<f64>,
}

impl Seek {
    fn of(pattern: AccessPattern) -> Seek {
        Seek {
            pattern,
            to_eof: false,
            random_pct: None,
        }
    }

    /// vdbench's threads on a sequential wd take the next block in turn: one sweep
    /// with N outstanding, which is the stride layout.
    fn layout(self) -> SeqLayout {
        match self.pattern {
            AccessPattern::Sequential => SeqLayout::Stride,
            AccessPattern::Random => SeqLayout::Regions,
        }
    }

    /// `random_pct` for a partly random wd.
    fn settings(self) -> WorkloadSettings {
        let mut s = WorkloadSettings::default();
        if let Some(p) = self.random_pct {
            s.set(&RANDOM_PCT, Value::Ratio(p));
        }
        s
    }

    /// seekpct=eof: one sequential pass, then the wd stops (as vdbench's).
    fn overrides(self) -> WorkloadOverrides {
        WorkloadOverrides {
            amount: self.to_eof.then_some(Amount::Passes(1)),
            ..Default::default()
        }
    }
}

/// `seekpct=` as vdbench reads it: a prefix of `sequential` or `random`, `eof`, or
/// a percentage of random I/Os. 0 and 100 are sequential and random; a percentage
/// between them is random with `random_pct` (each I/O random with that probability,
/// else continuing from the previous one: vdbench's `wg_random_or_seq`); `poisson`
/// is listed, random used.
fn seekpct(p: &Param, v: &str, unsupported: &mut UnsupportedList) -> Result<Seek, CompatError> {
    let word = v.trim().to_ascii_lowercase();
    let seq = Seek::of(AccessPattern::Sequential);
    let random = Seek::of(AccessPattern::Random);
    match word.as_str() {
        "eof" => Ok(Seek {
            to_eof: true,
            ..seq
        }),
        "0" => Ok(seq),
        "100" => Ok(random),
        w if !w.is_empty() && "sequential".starts_with(w) => Ok(seq),
        w if !w.is_empty() && "random".starts_with(w) => Ok(random),
        w if !w.is_empty() && "poisson".starts_with(w) => {
            unsupported.push(
                format!(
                    "{}={v} — random offsets drawn from a Poisson distribution around a \
                     midpoint; uniform used",
                    p.key
                ),
                &p.loc,
            );
            Ok(random)
        }
        other => match other.parse::<f64>() {
            Ok(x) if x > 0.0 && x < 100.0 => Ok(Seek {
                random_pct: Some(x),
                ..random
            }),
            Ok(0.0) => Ok(seq),
            Ok(100.0) => Ok(random),
            _ => Err(p
                .loc
                .error(format!("{}={v}: expected a percentage 0..100", p.key))),
        },
    }
}

/// `4k`, `(4k)`, or a distribution `(4k,50,64k,50)`.
fn xfersize(p: &Param, unsupported: &mut UnsupportedList) -> Result<BlockSizes, CompatError> {
    let items = list(&p.value);
    match items.as_slice() {
        [one] => parse_size(one)
            .map(BlockSizes::fixed)
            .map_err(|e| perr(p, &e)),
        _ if items.len() % 2 == 0 => {
            let mut split: Vec<(u64, u32)> = Vec::new();
            for pair in items.chunks(2) {
                let b = parse_size(&pair[0]).map_err(|e| perr(p, &e))?;
                let w: u32 = pair[1].parse().map_err(|_| {
                    p.loc.error(format!(
                        "xfersize={}: '{}' is not a percentage",
                        p.value, pair[1]
                    ))
                })?;
                if w > 0 {
                    split.push((b, w));
                }
            }
            let total: u32 = split.iter().map(|s| s.1).sum();
            if total != 100 {
                return Err(p.loc.error(format!(
                    "xfersize={}: percentages add up to {total}, not 100",
                    p.value
                )));
            }
            Ok(BlockSizes::of(split))
        }
        _ => {
            unsupported.push(format!("xfersize={}", p.value), &p.loc);
            let first = items.first().map(String::as_str).unwrap_or("4k");
            Ok(BlockSizes::fixed(parse_size(first).unwrap_or(4096)))
        }
    }
}

/// One dimension of an rd's loops.
#[derive(Clone, Copy, PartialEq)]
enum Dim {
    Threads,
    Xfersize,
    Rdpct,
    Seekpct,
    Iorate,
}

/// Expands `(1-32,d)` (doubling), `(10-100,10)` (steps) and `(1,2,4)` lists.
fn expand_values(p: &Param, size_units: bool) -> Result<Vec<String>, CompatError> {
    let items = list(&p.value);
    let num = |s: &str| -> Result<u64, CompatError> {
        if size_units {
            parse_size(s).map_err(|e| perr(p, &e))
        } else {
            parse_count(s).map_err(|e| perr(p, &e))
        }
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let it = &items[i];
        if let Some((a, b)) = it.split_once('-') {
            let (a, b) = (num(a)?, num(b)?);
            if b < a {
                return Err(p
                    .loc
                    .error(format!("{}={}: range goes down", p.key, p.value)));
            }
            let step = items.get(i + 1).map(|s| s.to_ascii_lowercase());
            let mut v = a;
            match step.as_deref() {
                Some("d") => {
                    i += 1;
                    while v <= b {
                        out.push(v.to_string());
                        v = v.saturating_mul(2);
                        if out.len() > MAX_LOOP_VALUES || v == 0 {
                            break;
                        }
                    }
                }
                _ => {
                    let s = match step.as_deref() {
                        Some(s) if !s.contains('-') => {
                            i += 1;
                            num(s)?
                        }
                        _ => 1,
                    };
                    while v <= b && out.len() <= MAX_LOOP_VALUES {
                        out.push(v.to_string());
                        v = match v.checked_add(s) {
                            Some(n) => n,
                            None => break,
                        };
                    }
                }
            }
        } else {
            out.push(it.clone());
        }
        if out.len() > MAX_LOOP_VALUES {
            return Err(p.loc.error(format!(
                "{}={}: more than {MAX_LOOP_VALUES} values",
                p.key, p.value
            )));
        }
        i += 1;
    }
    if out.is_empty() {
        return Err(p.loc.error(format!("{}={}: no values", p.key, p.value)));
    }
    Ok(out)
}

/// The hd= definitions with the used sds each drives: an sd with `host=` on the
/// hds it names, one without on every hd. Launch settings (`vdbench=`, `user=`,
/// `shell=`, `jvms=`) are ignored: mpirun starts and places the ranks.
fn host_defs(
    hds: &[Def],
    sds: &[Sd],
    used: &[bool],
    unsupported: &mut UnsupportedList,
) -> Result<Vec<HostDef>, CompatError> {
    let mut out: Vec<HostDef> = Vec::with_capacity(hds.len());
    for d in hds {
        let (mut system, mut clients) = (None, 0);
        for p in &d.params {
            if !read(d.kind, p, unsupported) {
                continue;
            }
            match p.key.as_str() {
                "system" => system = Some(host_system(p)?),
                "clients" => clients = host_clients(p)?,
                _ => not_read(p, unsupported),
            }
        }
        out.extend(host_copies(&d.name, system, clients));
    }
    for (sd, _) in sds.iter().zip(used).filter(|(_, u)| **u) {
        let Some(p) = &sd.host else {
            out.iter_mut().for_each(|h| h.targets.push(sd.name.clone()));
            continue;
        };
        for i in hosts_named(&list(&p.value), &out, &p.loc, &format!("sd={}", sd.name))? {
            if !out[i].targets.contains(&sd.name) {
                out[i].targets.push(sd.name.clone());
            }
        }
    }
    if let Some((h, d)) = out.iter().zip(hds).find(|(h, _)| h.targets.is_empty()) {
        return Err(d.loc.error(format!(
            "hd={} drives no sd that an rd uses: give an sd host={}, or remove the hd",
            h.name, h.name
        )));
    }
    Ok(out)
}

/// An hd's `clients=N`: how many copies of it vdbench makes (0: none asked).
pub(super) fn host_clients(p: &Param) -> Result<u64, CompatError> {
    match parse_count(p.value.trim()) {
        Ok(n) if (1..=1000).contains(&n) => Ok(n),
        _ => Err(p.loc.error(format!(
            "clients={}: expected a count of clients from 1 to 1000",
            p.value
        ))),
    }
}

/// An hd's host definitions: itself, or with `clients=N` N copies on its system
/// labelled `NAME_cl0` … `NAME_cl{N-1}`, as vdbench's HostParms repeats it (each a
/// host of its own; under mpirun, N ranks on that system play them).
pub(super) fn host_copies(name: &str, system: Option<String>, clients: u64) -> Vec<HostDef> {
    if clients == 0 {
        return vec![HostDef {
            name: name.to_string(),
            system,
            targets: Vec::new(),
        }];
    }
    // The copies' system is the hd's, not their own labels.
    let system = system.unwrap_or_else(|| name.to_string());
    (0..clients)
        .map(|j| HostDef {
            name: format!("{name}_cl{j}"),
            system: Some(system.clone()),
            targets: Vec::new(),
        })
        .collect()
}

/// An hd's `system=`: the name ranks are matched with.
pub(super) fn host_system(p: &Param) -> Result<String, CompatError> {
    match p.value.trim() {
        "" => Err(p.loc.error("system= needs a host name or address")),
        v => Ok(v.to_string()),
    }
}

/// The hosts (indexes into `hosts`, each once, first named first) that `host=`
/// patterns name, for `who` (`sd=NAME`, `fwd=NAME`) at `loc`: a pattern naming no
/// hd is refused — except `localhost` without hd= lines, which is this host.
pub(super) fn hosts_named(
    patterns: &[String],
    hosts: &[HostDef],
    loc: &Loc,
    who: &str,
) -> Result<Vec<usize>, CompatError> {
    let mut out = Vec::new();
    for pat in patterns {
        let hits: Vec<usize> = (0..hosts.len())
            .filter(|&i| glob(pat, &hosts[i].name))
            .collect();
        if hits.is_empty() && !(hosts.is_empty() && pat.eq_ignore_ascii_case("localhost")) {
            return Err(loc.error(format!("{who} host={pat}: no such hd= (host definition)")));
        }
        for i in hits {
            if !out.contains(&i) {
                out.push(i);
            }
        }
    }
    Ok(out)
}

/// What expanding an rd reads: the file's sds and wds.
struct RdInputs<'a> {
    sds: &'a [Sd],
    wds: &'a [Wd],
}

/// A file without `rd=`, located at its last definition.
fn nothing_to_run(source: &str, sds: &[Def], wds: &[Def]) -> CompatError {
    let loc = wds.last().or(sds.last()).map(|d| d.loc.clone());
    let loc = loc.unwrap_or(Loc::Line {
        source: source.into(),
        line: 0,
    });
    loc.error("no rd= (run definition): nothing to run")
}

/// The bytes of the sds the runs use (`None`: one of them has no `size=`).
fn used_sd_bytes(sds: &[Sd], used: &[SdUse]) -> Option<u64> {
    sds.iter()
        .zip(used)
        .filter(|(_, u)| u.used)
        .map(|(sd, _)| sd.size)
        .sum()
}

/// How the runs use one sd: at all, and opened with O_DIRECT (by its own, a wd's or
/// an rd's `openflags=`, as vdbench's rd and wd flags override the sd's) or
/// buffered — by which wd/rd first, for a conflict's message.
#[derive(Default, Clone)]
struct SdUse {
    used: bool,
    direct: Option<(String, Loc)>,
    buffered: Option<(String, Loc)>,
}

impl SdUse {
    fn note(&mut self, direct: bool, by: String, loc: &Loc) {
        self.used = true;
        let slot = if direct {
            &mut self.direct
        } else {
            &mut self.buffered
        };
        slot.get_or_insert_with(|| (by, loc.clone()));
    }
}

/// The targets: the sds some run uses, opened with O_DIRECT when every run that
/// uses one asks for it. An sd some runs open directly and others not is opened as
/// the sd says, and the difference listed: ioscope opens a target one way.
fn used_targets(sds: &[Sd], uses: &[SdUse], unsupported: &mut UnsupportedList) -> Vec<TargetSpec> {
    sds.iter()
        .zip(uses)
        .filter(|(_, u)| u.used)
        .map(|(s, u)| {
            let direct = match (&u.direct, &u.buffered) {
                (Some((d, loc)), Some((b, _))) => {
                    unsupported.push(
                        format!(
                            "openflags=o_direct on {d} but not on {b}, both on sd={} — \
                             ioscope opens a target one way",
                            s.name
                        ),
                        loc,
                    );
                    s.direct
                }
                (direct, _) => direct.is_some(),
            };
            TargetSpec {
                size_bytes: s.size,
                direct: Some(direct),
                ..TargetSpec::new(s.name.clone(), s.lun.clone())
            }
        })
        .collect()
}

/// What expanding an rd adds to.
struct RdOutputs<'a> {
    used_sds: &'a mut [SdUse],
    runs: &'a mut Vec<RunSpec>,
    unsupported: &'a mut UnsupportedList,
    warnings: &'a mut Vec<String>,
}

/// Expands one rd into a run per combination of its `for…` loops. Returns where it
/// asked for a curve, if it did.
fn expand_rd(rd: &Def, inp: &RdInputs<'_>, out: RdOutputs<'_>) -> Result<(), CompatError> {
    let (sds, wds) = (inp.sds, inp.wds);
    let settings = RdSettings::read(rd, inp, out.unsupported)?;
    let cx = RdCx {
        rd,
        sds,
        wds,
        settings: &settings,
    };
    // (wd, sd) pairs; an sd's threads are shared by the wds that use it. The rd's
    // sd= replaces the sds its wds name.
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for &w in &settings.wd_idx {
        let on = settings.sd_override.as_ref().unwrap_or(&wds[w].sds);
        if on.is_empty() {
            return Err(rd.loc.error(format!(
                "wd={} has no sd=, and rd={} names none",
                wds[w].name, rd.name
            )));
        }
        pairs.extend(on.iter().map(|&s| (w, s)));
    }
    for combo in loop_combinations(rd, &settings.loops)? {
        let point = cx.point(&combo, out.unsupported)?;
        let shares = cx.skew_shares(&pairs)?;
        let mut workloads = Vec::new();
        for (pi, &(w, s)) in pairs.iter().enumerate() {
            let direct = wds[w].direct || settings.direct || sds[s].direct;
            let by = format!("wd={}/rd={}", wds[w].name, rd.name);
            out.used_sds[s].note(direct, by, &rd.loc);
            let share = shares.as_ref().map(|v| v[pi]);
            workloads.push(cx.workload(&point, &pairs, (w, s), share, out.unsupported)?);
        }
        note_partly_random(&workloads, out.warnings);
        let mut run = RunSpec {
            name: point.name,
            workloads,
            duration_ns: Some(settings.measured),
            warmup_ns: settings.warmup,
            interval_ns: settings.interval,
            curve: settings.curve.clone(),
            ..base_run()
        };
        use crate::plan::settings::{declared::PAUSE, Value};
        run.settings.set(&PAUSE, Value::Nanos(settings.pause));
        let mut sd_idx: Vec<usize> = pairs.iter().map(|&(_, s)| s).collect();
        sd_idx.sort_unstable();
        sd_idx.dedup();
        let run_sds: Vec<&Sd> = sd_idx.iter().map(|&s| &sds[s]).collect();
        for (m, (_, decl)) in settings.maxdata.iter().zip(MAXDATA) {
            if let Some(b) = m.as_ref().and_then(|m| m.bytes(&run_sds, out.unsupported)) {
                run.settings.set(decl, Value::Bytes(b));
            }
        }
        out.runs.push(run);
    }
    Ok(())
}

/// A partly random wd (`seekpct=50`) on several threads: vdbench's threads take
/// turns continuing the wd's one sequence, ioscope's streams each their own. Said
/// once per percentage.
fn note_partly_random(workloads: &[Workload], warnings: &mut Vec<String>) {
    for w in workloads {
        let pct = w.settings.ratio(&RANDOM_PCT);
        if w.streams < 2 || pct >= 100.0 {
            continue;
        }
        let line = format!(
            "seekpct={pct} on several threads — vdbench's threads take turns continuing \
             their wd's one sequence; ioscope's streams (one per thread) each continue \
             their own"
        );
        if !warnings.contains(&line) {
            warnings.push(line);
        }
    }
}

/// What an rd sets for all of its runs.
struct RdSettings {
    /// Indexes of the wds it runs.
    wd_idx: Vec<usize>,
    /// `sd=` on the rd: the sds every wd of the run uses instead of its own.
    sd_override: Option<Vec<usize>>,
    elapsed: u64,
    interval: u64,
    warmup: u64,
    /// The measured time: `elapsed`, less the first interval without `warmup=`.
    measured: u64,
    /// `pause=`: idle time before the next run.
    pause: u64,
    threads: Option<u64>,
    direct: bool,
    /// The `for…` loops (and a list of iorates), first-written first.
    loops: Vec<(Dim, Vec<String>, Param)>,
    arrival: Arrival,
    /// `iorate=curve` (with `curve=` and `stopcurve=`).
    curve: Option<CurveSpec>,
    /// `maxdata=`, `maxdataread=`, `maxdatawritten=` ([`MAXDATA`]): the run's
    /// `stop_after_bytes`, `stop_after_read_bytes`, `stop_after_write_bytes`.
    maxdata: [Option<Maxdata>; 3],
}

/// vdbench's data limits of an rd and the run settings they are.
pub(super) const MAXDATA: [(&str, &crate::plan::settings::Decl); 3] = {
    use crate::plan::settings::declared::*;
    [
        ("maxdata", &STOP_AFTER_BYTES),
        ("maxdataread", &STOP_AFTER_READ_BYTES),
        ("maxdatawritten", &STOP_AFTER_WRITE_BYTES),
    ]
};

/// The parameters of an rd that are read after the others: they depend on them.
#[derive(Default)]
struct RdLater<'a> {
    warmup: Option<u64>,
    iorate: Option<&'a Param>,
    curve_points: Option<&'a Param>,
    stopcurve: Option<&'a Param>,
}

impl RdSettings {
    fn read(
        rd: &Def,
        inp: &RdInputs<'_>,
        unsupported: &mut UnsupportedList,
    ) -> Result<Self, CompatError> {
        let mut st = RdSettings {
            wd_idx: select_wds(rd, inp.wds)?,
            sd_override: None,
            elapsed: 30_000_000_000,
            interval: 1_000_000_000,
            warmup: 0,
            measured: 0,
            pause: 0,
            threads: None,
            direct: false,
            loops: Vec::new(),
            arrival: Arrival::Exponential,
            curve: None,
            maxdata: [None, None, None],
        };
        let mut later = RdLater::default();
        for p in &rd.params {
            if !read(rd.kind, p, unsupported) {
                continue;
            }
            if let Some(i) = MAXDATA.iter().position(|(key, _)| *key == p.key) {
                st.maxdata[i] = Some(Maxdata::read(p)?);
                continue;
            }
            let dur = |p: &Param| parse_duration_ns(&p.value).map_err(|e| perr(p, &e));
            match p.key.as_str() {
                "wd" => {}
                "sd" => st.sd_override = Some(pick_sds(p, inp.sds)?),
                "elapsed" => st.elapsed = dur(p)?,
                "interval" => st.interval = dur(p)?,
                "pause" => {
                    st.pause = crate::plan::units::parse_duration_ns_allow_zero(&p.value)
                        .map_err(|e| perr(p, &e))?
                }
                "warmup" => later.warmup = Some(dur(p)?),
                "threads" => st.threads = Some(count(p)?),
                "openflags" => openflags(p, &mut st.direct, unsupported),
                "iorate" => later.iorate = Some(p),
                "distribution" => st.arrival = arrival(p, unsupported)?,
                "curve" => later.curve_points = Some(p),
                "stopcurve" => later.stopcurve = Some(p),
                "forthreads" | "forxfersize" | "forrdpct" | "forseekpct" => {
                    let (dim, values) = for_loop(p)?;
                    st.loops.retain(|l| l.0 != dim);
                    st.loops.push((dim, values, p.clone()));
                }
                _ => not_read(p, unsupported),
            }
        }
        st.iorate_and_curve(&later, unsupported)?;
        // vdbench counts elapsed after an explicit warm-up; without one, the first
        // interval is the warm-up and elapsed includes it.
        st.warmup = later.warmup.unwrap_or(st.interval);
        st.measured = match later.warmup {
            Some(_) => st.elapsed,
            None if st.elapsed > st.interval => st.elapsed - st.interval,
            None => {
                return Err(rd.loc.error(format!(
                    "rd={}: elapsed must be longer than one interval ({}s), which vdbench \
                     leaves out as the warm-up",
                    rd.name,
                    st.interval / 1_000_000_000
                )))
            }
        };
        Ok(st)
    }

    /// `iorate=` (a rate, a list or range of rates: one run each, or `curve`) and
    /// the curve's `curve=`/`stopcurve=`.
    fn iorate_and_curve(
        &mut self,
        later: &RdLater<'_>,
        unsupported: &mut UnsupportedList,
    ) -> Result<(), CompatError> {
        if let Some(p) = later.iorate {
            let values = list(&p.value);
            let is_curve = |v: &String| v.eq_ignore_ascii_case("curve");
            if values.iter().any(is_curve) {
                if values.len() > 1 {
                    unsupported.push(
                        format!(
                            "iorate={} — a curve among other rates; running the curve only",
                            p.value
                        ),
                        &p.loc,
                    );
                }
                let spec = curve_spec(later.curve_points, later.stopcurve)?;
                self.curve = Some(spec);
                self.loops
                    .push((Dim::Iorate, vec!["max".into()], p.clone()));
            } else if values.iter().any(|v| v.contains('-')) {
                self.loops
                    .push((Dim::Iorate, expand_values(p, false)?, p.clone()));
            } else {
                self.loops.push((Dim::Iorate, values, p.clone()));
            }
        }
        if self.curve.is_none() {
            for p in [later.curve_points, later.stopcurve].into_iter().flatten() {
                unsupported.push(
                    format!("{}={} — only used with iorate=curve", p.key, p.value),
                    &p.loc,
                );
            }
        }
        Ok(())
    }
}

/// An rd's `maxdata=`.
#[derive(Debug, Clone)]
enum Maxdata {
    Bytes(u64),
    /// Below 100: a multiple of the sds' size.
    TimesSds(f64, Param),
}

impl Maxdata {
    /// `maxdata=` (or `maxdataread=`, `maxdatawritten=`): vdbench ends the rd once
    /// its measured totals pass this many bytes (up to 100, as
    /// `CollectSlaveStats.getLimit` tests it: this many times the size of the sds it
    /// runs).
    fn read(p: &Param) -> Result<Self, CompatError> {
        Ok(match p.value.parse::<f64>() {
            Ok(n) if n <= 100.0 => Maxdata::TimesSds(n, p.clone()),
            _ => Maxdata::Bytes(parse_size(&p.value).map_err(|e| perr(p, &e))?),
        })
    }

    /// The limit in bytes for a run of `sds`; `None` (listed) when one's size is not
    /// known before the run.
    fn bytes(&self, sds: &[&Sd], unsupported: &mut UnsupportedList) -> Option<u64> {
        match self {
            Maxdata::Bytes(b) => Some(*b),
            Maxdata::TimesSds(n, p) => {
                let sizes: Option<Vec<u64>> = sds.iter().map(|sd| sd.size).collect();
                if sizes.is_none() {
                    unsupported.push(
                        format!(
                            "{}={} — times the sds' size, and an sd has no size=",
                            p.key, p.value
                        ),
                        &p.loc,
                    );
                }
                sizes.map(|v| (v.iter().sum::<u64>() as f64 * n) as u64)
            }
        }
    }
}

/// A `for…` loop of an rd: what it varies and its values (ranges expanded).
fn for_loop(p: &Param) -> Result<(Dim, Vec<String>), CompatError> {
    let dim = match p.key.as_str() {
        "forthreads" => Dim::Threads,
        "forxfersize" => Dim::Xfersize,
        "forrdpct" => Dim::Rdpct,
        _ => Dim::Seekpct,
    };
    let values = match dim {
        Dim::Threads => expand_values(p, false)?,
        Dim::Xfersize => expand_values(p, true)?,
        _ => list(&p.value),
    };
    Ok((dim, values))
}

/// vdbench's curve: `curve=(10,50,…)` are the points, % of the maximum (vdbench's
/// default is 10,50,70,80,90,100); `stopcurve=N` stops it at the first point whose
/// mean response time exceeds N ms.
fn curve_spec(points: Option<&Param>, stop: Option<&Param>) -> Result<CurveSpec, CompatError> {
    let points_pct = match points {
        None => DEFAULT_CURVE_POINTS_PCT.to_vec(),
        // `(10-100,10)` steps, as in the for-loops.
        Some(p) if p.value.contains('-') => expand_values(p, false)?
            .iter()
            .map(|v| v.parse::<f64>().unwrap_or(0.0))
            .collect(),
        Some(p) => list(&p.value)
            .iter()
            .map(|v| {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x > 0.0 && *x <= 1000.0)
                    .ok_or_else(|| {
                        p.loc
                            .error(format!("curve={}: '{v}' is not a percentage", p.value))
                    })
            })
            .collect::<Result<_, _>>()?,
    };
    let stop_latency = match stop {
        None => None,
        Some(p) => {
            let ms = p
                .value
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| {
                    p.loc.error(format!(
                        "stopcurve={}: expected a response time in milliseconds",
                        p.value
                    ))
                })?;
            Some(format!("mean={}us", (ms * 1000.0).round()))
        }
    };
    Ok(CurveSpec {
        points_pct,
        stop_latency,
        max_latency: None,
        origin: Some("vdbench iorate=curve".into()),
    })
}

/// The wds an rd's `wd=` names (globs allowed), in the order named.
fn select_wds(rd: &Def, wds: &[Wd]) -> Result<Vec<usize>, CompatError> {
    let Some(wdp) = rd.get("wd") else {
        return Err(rd.loc.error(format!("rd={} has no wd=", rd.name)));
    };
    let mut wd_idx = Vec::new();
    for pat in name_list(&wdp.value) {
        let before = wd_idx.len();
        for (i, w) in wds.iter().enumerate() {
            if glob(&pat, &w.name) && !wd_idx.contains(&i) {
                wd_idx.push(i);
            }
        }
        if wd_idx.len() == before {
            return Err(wdp.loc.error(format!("wd={pat}: no such wd")));
        }
    }
    Ok(wd_idx)
}

/// Inter-arrival times of a fixed iorate (`distribution=`). vdbench's `uniform` draws
/// gaps uniformly between 0 and twice the mean, which the model cannot express.
fn arrival(p: &Param, unsupported: &mut UnsupportedList) -> Result<Arrival, CompatError> {
    match p.value.trim().to_ascii_lowercase().as_str() {
        "exponential" => Ok(Arrival::Exponential),
        "deterministic" => Ok(Arrival::Uniform),
        "uniform" => {
            unsupported.push(
                format!(
                    "distribution={} — gaps uniform in 0..2×mean; using exponential",
                    p.value
                ),
                &p.loc,
            );
            Ok(Arrival::Exponential)
        }
        _ => Err(p.loc.error(format!(
            "distribution={}: expected exponential, uniform or deterministic",
            p.value
        ))),
    }
}

/// Every combination of the loops' value indexes, the first-written loop outermost.
fn loop_combinations(
    rd: &Def,
    loops: &[(Dim, Vec<String>, Param)],
) -> Result<Vec<Vec<usize>>, CompatError> {
    let sizes: Vec<usize> = loops.iter().map(|l| l.1.len()).collect();
    combinations(&sizes).ok_or_else(|| too_many_runs(&rd.loc, &rd.name))
}

/// Every combination of one index per loop of these lengths, the first loop
/// outermost; `None` past [`MAX_LOOP_VALUES`] combinations.
pub(super) fn combinations(lengths: &[usize]) -> Option<Vec<Vec<usize>>> {
    let mut combos: Vec<Vec<usize>> = vec![Vec::new()];
    for &n in lengths {
        combos = (combos.iter())
            .flat_map(|c| (0..n).map(move |i| [c.as_slice(), &[i]].concat()))
            .collect();
        if combos.len() > MAX_LOOP_VALUES {
            return None;
        }
    }
    Some(combos)
}

/// The error for an rd (`name`, at `loc`) whose loops make too many runs.
pub(super) fn too_many_runs(loc: &Loc, name: &str) -> CompatError {
    loc.error(format!(
        "rd={name}: the for-loops expand to more than {MAX_LOOP_VALUES} runs"
    ))
}

/// The values one combination of an rd's loops chose, and the run's name.
struct RdPoint {
    name: String,
    threads: Option<u64>,
    bs: Option<BlockSizes>,
    rdpct: Option<u8>,
    seek: Option<Seek>,
    rate: Rate,
}

/// What expanding one rd reads.
struct RdCx<'a> {
    rd: &'a Def,
    sds: &'a [Sd],
    wds: &'a [Wd],
    settings: &'a RdSettings,
}

impl RdCx<'_> {
    /// The loop values of `combo`; the run is named after them (`rd1 threads=4`).
    fn point(
        &self,
        combo: &[usize],
        unsupported: &mut UnsupportedList,
    ) -> Result<RdPoint, CompatError> {
        let mut pt = RdPoint {
            name: self.rd.name.clone(),
            threads: self.settings.threads,
            bs: None,
            rdpct: None,
            seek: None,
            rate: Rate::Max,
        };
        for ((dim, values, p), &i) in self.settings.loops.iter().zip(combo) {
            let v = &values[i];
            let label = match dim {
                Dim::Threads => {
                    pt.threads = Some(parse_count(v).map_err(|e| perr(p, &e))?);
                    "threads"
                }
                Dim::Xfersize => {
                    let b = parse_size(v).map_err(|e| perr(p, &e))?;
                    pt.bs = Some(BlockSizes::fixed(b));
                    "xfersize"
                }
                Dim::Rdpct => {
                    pt.rdpct = Some(pct_text(p, v)?);
                    "rdpct"
                }
                Dim::Seekpct => {
                    pt.seek = Some(seekpct(p, v, unsupported)?);
                    "seekpct"
                }
                Dim::Iorate => {
                    pt.rate = iorate(p, v)?;
                    if values.len() == 1 {
                        continue;
                    }
                    "iorate"
                }
            };
            if matches!(dim, Dim::Xfersize) {
                pt.name.push_str(&format!(
                    " {label}={}",
                    crate::plan::units::format_size(
                        pt.bs.as_ref().map(|b| b.max_bytes()).unwrap_or(0),
                    )
                ));
            } else {
                pt.name.push_str(&format!(" {label}={v}"));
            }
        }
        Ok(pt)
    }

    /// skew: the wds of the run form one share mix (wds without a skew split what
    /// the others leave, as vdbench does); a wd on several sds spreads its skew
    /// evenly over them, as vdbench splits a wd's skew over its workload
    /// generators. Per (wd, sd) pair; `None` without skew.
    fn skew_shares(&self, pairs: &[(usize, usize)]) -> Result<Option<Vec<f64>>, CompatError> {
        let (rd, wds) = (self.rd, self.wds);
        let mut used: Vec<usize> = pairs.iter().map(|p| p.0).collect();
        used.sort_unstable();
        used.dedup();
        if !used.iter().any(|&w| wds[w].skew.is_some()) {
            return Ok(None);
        }
        let given: f64 = used.iter().filter_map(|&w| wds[w].skew).sum();
        let rest = used.iter().filter(|&&w| wds[w].skew.is_none()).count();
        if given > 100.0 + 1e-9 || (rest == 0 && (given - 100.0).abs() > 0.01) {
            return Err(rd.loc.error(format!(
                "rd={}: the wds' skew adds up to {given}%, not 100%",
                rd.name
            )));
        }
        let each = if rest > 0 {
            (100.0 - given) / rest as f64
        } else {
            0.0
        };
        if rest > 0 && each <= 0.0 {
            return Err(rd.loc.error(format!(
                "rd={}: skew leaves nothing for the wds without one",
                rd.name
            )));
        }
        Ok(Some(
            pairs
                .iter()
                .map(|&(w, _)| {
                    let on = pairs.iter().filter(|p| p.0 == w).count() as f64;
                    wds[w].skew.unwrap_or(each) / on
                })
                .collect(),
        ))
    }

    /// The streams of a share mix: every sd's threads, as each sd of vdbench's
    /// skewed run keeps its own.
    fn mix_streams(&self, pt: &RdPoint, pairs: &[(usize, usize)]) -> u64 {
        let mut sds: Vec<usize> = pairs.iter().map(|p| p.1).collect();
        sds.sort_unstable();
        sds.dedup();
        sds.iter()
            .map(|&s| pt.threads.unwrap_or(self.sds[s].threads))
            .sum()
    }

    /// The workload of wd `w` on sd `s` at this point of the loops; `share` is its
    /// part of a skew mix.
    fn workload(
        &self,
        pt: &RdPoint,
        pairs: &[(usize, usize)],
        (w, s): (usize, usize),
        share: Option<f64>,
        unsupported: &mut UnsupportedList,
    ) -> Result<Workload, CompatError> {
        let (wd, sd) = (&self.wds[w], &self.sds[s]);
        let mine = self.threads_of(pt, pairs, (w, s), share.is_some())?;
        let region = self.region(wd, sd, unsupported);
        let (seek, streams, qd) = self.streams_of(wd, mine, share.is_some())?;
        let seek = seek.or(pt.seek).unwrap_or(wd.seek);
        let mut settings = seek.settings();
        if let Some((from, to)) = region.pct {
            settings.set(&RANGE_FROM_PCT, Value::Ratio(from));
            settings.set(&RANGE_TO_PCT, Value::Ratio(to));
        }
        let wrate = match pt.rate {
            Rate::Max => Rate::Max,
            // A share mix is paced as a whole by its first workload.
            Rate::Iops(n) if share.is_some() => Rate::Iops(n),
            Rate::Iops(n) => Rate::Iops(n / pairs.len() as f64),
        };
        // vdbench draws a hot band's random I/O on its curve (sequential I/O just
        // stays in the band).
        let dist = if wd.hotband && seek.pattern == AccessPattern::Random {
            Distribution::VdbenchHotband
        } else {
            Distribution::Uniform
        };
        let read_pct = pt.rdpct.unwrap_or(wd.read_pct);
        let dist = match cache_hits(wd, sd, read_pct, &seek, &settings) {
            Ok(Some(hits)) => hits,
            Ok(None) => dist,
            Err((why, loc)) => {
                unsupported.push(why, &loc);
                dist
            }
        };
        Ok(Workload {
            name: if pairs.iter().filter(|p| p.0 == w).count() > 1 {
                format!("{}/{}", wd.name, sd.name)
            } else {
                wd.name.clone()
            },
            target: sd.name.clone(),
            read_pct,
            pattern: seek.pattern,
            bs: pt.bs.clone().unwrap_or(wd.bs.clone()),
            qd,
            streams,
            rate: wrate,
            offset_bytes: region.offset,
            size_bytes: region.len,
            dist,
            arrival: self.settings.arrival,
            share_pct: share,
            seq_layout: match wd.streams {
                Some(_) => SeqLayout::Regions,
                None => seek.layout(),
            },
            align_bytes: sd.align,
            overrides: seek.overrides(),
            settings,
            ..Default::default()
        })
    }

    /// The threads that serve wd `w` on sd `s`: the sd's (or the rd's) shared among
    /// the wds on it; in a share mix every I/O comes from the mix's one pool.
    fn threads_of(
        &self,
        pt: &RdPoint,
        pairs: &[(usize, usize)],
        (w, s): (usize, usize),
        mix: bool,
    ) -> Result<u64, CompatError> {
        let (rd, sd) = (self.rd, &self.sds[s]);
        let sharing: Vec<usize> = pairs.iter().filter(|p| p.1 == s).map(|p| p.0).collect();
        let total = pt.threads.unwrap_or(sd.threads);
        let k = sharing.len() as u64;
        let pos = sharing.iter().position(|&x| x == w).unwrap_or(0) as u64;
        let mine = if mix {
            self.mix_streams(pt, pairs)
        } else {
            total / k + u64::from(pos < total % k)
        };
        if mine == 0 {
            return Err(rd.loc.error(format!(
                "rd={}: {total} threads on sd={} cannot serve {k} workloads",
                rd.name, sd.name
            )));
        }
        Ok(mine)
    }

    /// A workload's seek, streams and queue depth when `mine` threads serve it: one
    /// stream per thread, or with the wd's `streams=N` N sequential streams (in the
    /// regions layout: each its own Nth), the threads shared among them (vdbench
    /// requires threads to be a multiple of N), whatever the seek.
    fn streams_of(
        &self,
        wd: &Wd,
        mine: u64,
        mix: bool,
    ) -> Result<(Option<Seek>, u32, u32), CompatError> {
        let too_large = || self.rd.loc.error("threads is too large");
        let Some((n, loc)) = &wd.streams else {
            return Ok((None, u32::try_from(mine).map_err(|_| too_large())?, 1));
        };
        if mix || wd.range.is_some() {
            return Err(loc.error(format!(
                "wd={}: streams= {} is not reproduced; give the wd alone, on the whole sd",
                wd.name,
                if mix { "in a skew mix" } else { "with range=" }
            )));
        }
        if mine % u64::from(*n) != 0 {
            return Err(loc.error(format!(
                "wd={}: threads={mine} must be a multiple of streams={n}, as vdbench requires",
                wd.name
            )));
        }
        let qd = u32::try_from(mine / u64::from(*n)).map_err(|_| too_large())?;
        Ok((Some(Seek::of(AccessPattern::Sequential)), *n, qd))
    }

    /// Where a wd works on an sd: the wd's range= within the sd, or the sd. A range
    /// in percent of an sd without size= is narrowed once the device's size is known
    /// (`range_from_pct`, `range_to_pct`).
    fn region(&self, wd: &Wd, sd: &Sd, unsupported: &mut UnsupportedList) -> Region {
        let whole = Region {
            offset: sd.offset,
            len: sd.size,
            pct: None,
        };
        // vdbench: a wd's range= wins over its sd's; (0,100) is the whole sd.
        let Some((a, b)) = wd.range.or(sd.range) else {
            return whole;
        };
        match (a, b, sd.size) {
            (RangeEnd::Pct(lo), RangeEnd::Pct(hi), _) if lo == 0.0 && hi == 100.0 => return whole,
            (RangeEnd::Pct(lo), RangeEnd::Pct(hi), None) if lo < hi => {
                return Region {
                    pct: Some((lo, hi)),
                    ..whole
                }
            }
            _ => {}
        }
        if let Some((o, l)) = range_bytes(a, b, sd.size) {
            if let Some(offset) = sd.offset.checked_add(o) {
                return Region {
                    offset,
                    len: Some(l),
                    pct: None,
                };
            }
        }
        let why = match sd.size {
            None => {
                "a percentage of an sd without size= beside a size in bytes (give size= on the sd)"
            }
            Some(_) => "empty or backwards",
        };
        unsupported.push(
            format!("range on wd={} — {why}; the whole sd is used", wd.name),
            &self.rd.loc,
        );
        whole
    }
}

/// Where a wd works on an sd: bytes, or a part in percent of a size known only when
/// the device is open.
struct Region {
    offset: u64,
    len: Option<u64>,
    /// (from, to) percent of the sd.
    pct: Option<(f64, f64)>,
}

/// One iorate value: `max` or a positive number of I/Os per second.
fn iorate(p: &Param, v: &str) -> Result<Rate, CompatError> {
    if v.eq_ignore_ascii_case("max") {
        return Ok(Rate::Max);
    }
    let n: f64 = v
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n > 0.0)
        .ok_or_else(|| {
            p.loc
                .error(format!("iorate={v}: expected max or a positive number"))
        })?;
    Ok(Rate::Iops(n))
}

/// Resolves a wd range against the sd size: (offset, length) in bytes.
fn range_bytes(a: RangeEnd, b: RangeEnd, sd_size: Option<u64>) -> Option<(u64, u64)> {
    let abs = |e: RangeEnd| match e {
        RangeEnd::Bytes(n) => Some(n),
        RangeEnd::Pct(p) => sd_size.map(|s| (s as f64 * p / 100.0) as u64),
    };
    let (a, b) = (abs(a)?, abs(b)?);
    // `then`, not `then_some`: the length must not be computed for a backwards range.
    (b > a).then(|| (a, b - a))
}

/// A general parameter of a file-system parameter file (`fs`): its data settings;
/// what only block workloads carry out (`data_errors=N`, notes) is listed as not
/// applied rather than dropped unsaid.
fn general(
    p: &Param,
    data: &mut DataSettings,
    unsupported: &mut UnsupportedList,
) -> Result<(), CompatError> {
    let mut g = General {
        data: std::mem::take(data),
        ..Default::default()
    };
    let r = general_param(p, &mut g, unsupported);
    *data = g.data;
    if g.errors_to_go.is_some() || !g.warnings.is_empty() || g.dedup_sets.is_some() {
        let listed = format!(
            "{}={} — not applied to file-system workloads yet",
            p.key, p.value
        );
        unsupported.push(listed, &p.loc);
    }
    r
}

/// What the general parameters (before the first sd=) set.
#[derive(Default)]
struct General {
    /// Data content and validation.
    data: DataSettings,
    /// `data_errors=N` above 1: the errors vdbench goes on through.
    errors_to_go: Option<u64>,
    warnings: Vec<String>,
    /// `dedupsets=`, sized once the sds the runs use are known.
    dedup_sets: Option<(dedup::Sets, Loc)>,
}

/// `data_errors=N` above 1: every workload counts its errors and goes on (its own
/// error policy continues reads, writes and mismatches); vdbench would end the run
/// at the N-th, which ioscope cannot, and the warning says so.
fn go_on_through_errors(runs: &mut [RunSpec], n: u64, warnings: &mut Vec<String>) {
    use crate::plan::on_error::{ErrorKind, OnError};
    let mut policy = OnError::default();
    policy.set_kinds(&[ErrorKind::Read, ErrorKind::Write, ErrorKind::Verify]);
    for w in runs.iter_mut().flat_map(|r| r.workloads.iter_mut()) {
        w.overrides.on_error = Some(policy.clone());
    }
    warnings.push(format!(
        "data_errors={n}: I/O errors and mismatches are counted and every run goes on \
         to its end; vdbench would end the run at the {n}th"
    ));
}

/// A general parameter (before the first sd=): data content and validation, the
/// errors to go on through, vdbench's debug switches.
fn general_param(
    p: &Param,
    general: &mut General,
    unsupported: &mut UnsupportedList,
) -> Result<(), CompatError> {
    let data = &mut general.data;
    let ratio = |p: &Param| -> Result<f64, CompatError> {
        p.value
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|r| r.is_finite() && *r >= 1.0)
            .ok_or_else(|| {
                p.loc.error(format!(
                    "{}={}: expected a ratio of 1 or more",
                    p.key, p.value
                ))
            })
    };
    if !read(Kind::General, p, unsupported) {
        return Ok(());
    }
    match p.key.as_str() {
        "compratio" => data.compress_ratio = Some(ratio(p)?),
        "dedupratio" => data.dedup_ratio = Some(ratio(p)?),
        "dedupsets" => general.dedup_sets = Some(dedup::parse(p)?),
        "dedupunit" => {
            data.dedup_unit_bytes = Some(
                crate::plan::units::parse_size(&p.value)
                    .map_err(|e| p.loc.error(format!("dedupunit={}: {e}", p.value)))?,
            )
        }
        "validate" => match p.value.to_ascii_lowercase().as_str() {
            "yes" | "y" | "true" => data.verify = true,
            "no" | "n" | "false" => data.verify = false,
            _ => unsupported.push(format!("validate={}", p.value), &p.loc),
        },
        "data_errors" => match parse_count(p.value.trim()) {
            Ok(0 | 1) => {}
            Ok(n) => general.errors_to_go = Some(n),
            // A command to run, or remove_device.
            Err(_) => unsupported.push(format!("data_errors={}", p.value), &p.loc),
        },
        // Anchors are fsd directories; a raw-I/O run has none (the file-system
        // reader reads this one itself).
        "create_anchors" => {}
        "debug" => general.warnings.push(format!(
            "{}: debug={} — vdbench's debugging switches change its own logging and \
             internal checks (86: how an fsd format truncates files), nothing measured \
             here; ignored",
            p.loc, p.value
        )),
        _ => not_read(p, unsupported),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("4K_Random_Read*", "4K_Random_Read"));
        assert!(glob("wd*", "wd12"));
        assert!(glob("*x*", "axb"));
        assert!(!glob("wd1", "wd12"));
    }

    #[test]
    fn loop_values() {
        let p = |v: &str| Param {
            key: "forthreads".into(),
            value: v.into(),
            loc: Loc::Line {
                source: "x".into(),
                line: 1,
            },
            fresh: true,
        };
        assert_eq!(
            expand_values(&p("(1-32,d)"), false).unwrap(),
            ["1", "2", "4", "8", "16", "32"]
        );
        assert_eq!(
            expand_values(&p("(1,2,4)"), false).unwrap(),
            ["1", "2", "4"]
        );
        assert_eq!(
            expand_values(&p("(10-30,10)"), false).unwrap(),
            ["10", "20", "30"]
        );
        assert_eq!(expand_values(&p("14"), false).unwrap(), ["14"]);
        assert!(expand_values(&p("(1-9999999)"), false).is_err());
    }

    // Regression (found by fuzz target `vdbench`): a backwards byte range such as
    // range=(10g,2g) panicked with a subtraction overflow instead of being listed.
    #[test]
    fn backwards_range_is_listed_not_a_panic() {
        let t = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/x\nwd=w1,sd=s1,range=(10g,2g)\nrd=r1,wd=w1,elapsed=10\n",
        )
        .unwrap();
        assert!(t.unsupported[0].option.starts_with("range on wd=w1"));
        assert_eq!(t.plan.runs[0].workloads[0].size_bytes, None);
    }

    #[test]
    fn maxdata_below_100_is_times_the_sds_size_or_listed_without_one() {
        use crate::plan::settings::declared::STOP_AFTER_BYTES;
        let t = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/x,size=1g\nsd=s2,lun=/dev/y,size=3g\nwd=w1,sd=(s1,s2)\n\
             wd=w2,sd=(s1,s2)\nrd=r1,wd=(w1,w2),elapsed=10,maxdata=2\n",
        )
        .unwrap();
        let limit = t.plan.runs[0].settings.bytes(&STOP_AFTER_BYTES);
        assert_eq!(
            limit,
            8 << 30,
            "each sd counted once, however many wds use it"
        );
        assert!(t.unsupported.is_empty());
        let t = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/x\nwd=w1,sd=s1\nrd=r1,wd=w1,elapsed=10,maxdata=2\n",
        )
        .unwrap();
        assert_eq!(t.plan.runs[0].settings.bytes(&STOP_AFTER_BYTES), 0);
        assert!(t.unsupported[0]
            .option
            .starts_with("maxdata=2 — times the sds' size"));
        // 100 is still a multiple (vdbench's `<= 100`); 101 is bytes.
        for (v, want) in [("100", 100u64 << 30), ("101", 101)] {
            let t = parse_str(
                "x.parm",
                &format!("sd=s1,lun=/dev/x,size=1g\nwd=w1,sd=s1\nrd=r1,wd=w1,maxdata={v}\n"),
            )
            .unwrap();
            assert_eq!(
                t.plan.runs[0].settings.bytes(&STOP_AFTER_BYTES),
                want,
                "{v}"
            );
        }
    }

    // Regression (found while fixing the above): an sd offset plus a wd range past
    // u64::MAX overflowed.
    #[test]
    fn offset_plus_range_overflow_is_listed_not_a_panic() {
        let t = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/x,offset=18446744073709551615\nwd=w1,sd=s1,range=(1g,2g)\n\
             rd=r1,wd=w1,elapsed=10\n",
        )
        .unwrap();
        assert!(t.unsupported[0].option.starts_with("range on wd=w1"));
    }

    #[test]
    fn a_random_wd_with_hotband_draws_on_vdbenchs_curve_in_its_band() {
        let t = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/x,size=100g\n\
             wd=hot,sd=s1,seekpct=rand,hotband=(25,29)\n\
             wd=seq,sd=s1,seekpct=seq,hotband=(25,29)\n\
             wd=moved,sd=s1,seekpct=rand,hotband=(25,29),range=(50,60)\n\
             rd=r1,wd=*,elapsed=10\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let ws = &t.plan.runs[0].workloads;
        let gb = 1u64 << 30;
        assert_eq!(ws[0].dist, Distribution::VdbenchHotband);
        assert_eq!(
            (ws[0].offset_bytes, ws[0].size_bytes),
            (25 * gb, Some(4 * gb))
        );
        // vdbench draws only random I/O on the curve: a sequential wd stays in the band.
        assert_eq!(ws[1].dist, Distribution::Uniform);
        assert_eq!(ws[1].offset_bytes, 25 * gb);
        // range= after hotband= moves the band; the curve stays (vdbench keeps it).
        assert_eq!(ws[2].dist, Distribution::VdbenchHotband);
        assert_eq!(ws[2].offset_bytes, 50 * gb);
    }

    #[test]
    fn a_wrapping_hotband_is_listed_and_leaves_access_uniform() {
        let t = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/x,size=100g\nwd=w1,sd=s1,hotband=(90,110)\nrd=r1,wd=w1,elapsed=10\n",
        )
        .unwrap();
        assert!(t.unsupported[0].option.starts_with("hotband=(90,110)"));
        assert_eq!(t.plan.runs[0].workloads[0].dist, Distribution::Uniform);
    }

    #[test]
    fn skew_on_wds_over_several_sds_spreads_each_wds_share_over_its_sds() {
        let t = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/a,threads=2\nsd=s2,lun=/dev/b,threads=4\nsd=s3,lun=/dev/c\n\
             wd=w1,sd=(s1,s2),skew=70\nwd=w2,sd=(s1-s3)\n\
             rd=r1,wd=w*,elapsed=10,iorate=1000\n\
             rd=r2,wd=w*,elapsed=10,threads=3\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let got: Vec<(&str, &str, f64)> = t.plan.runs[0]
            .workloads
            .iter()
            .map(|w| (w.name.as_str(), w.target.as_str(), w.share_pct.unwrap()))
            .collect();
        // w1 has 70 % over two sds; w2 the 30 % left, over three.
        let want = [
            ("w1/s1", "s1", 35.0),
            ("w1/s2", "s2", 35.0),
            ("w2/s1", "s1", 10.0),
            ("w2/s2", "s2", 10.0),
            ("w2/s3", "s3", 10.0),
        ];
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert_eq!((g.0, g.1), (w.0, w.1));
            assert!((g.2 - w.2).abs() < 1e-9, "{g:?} vs {w:?}");
        }
        let run = &t.plan.runs[0];
        // The mix's streams: every sd's threads (2 + 4 + vdbench's default 8); the
        // rate is the run's total, paced by the mix as a whole.
        assert_eq!(run.total_streams(), 14);
        assert_eq!(run.requested_iops(), 1000.0);
        // rd threads= gives every sd that many: 3 × 3.
        assert_eq!(t.plan.runs[1].total_streams(), 9);
    }

    #[test]
    fn skews_over_several_sds_adding_past_100_are_an_error() {
        let e = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/a\nsd=s2,lun=/dev/b\nwd=w1,sd=(s1,s2),skew=70\n\
             wd=w2,sd=s2,skew=40\nrd=r1,wd=w*,elapsed=10\n",
        )
        .unwrap_err();
        assert!(e.msg.contains("adds up to 110"), "{}", e.msg);
    }

    // vdbench opens an sd with its rd's (else its wd's) openflags: a raw-device
    // file giving o_direct only on the rd opens its sds directly.
    #[test]
    fn openflags_on_the_rd_or_wd_open_the_sds_directly_unless_runs_differ() {
        let t = parse_str(
            "x.parm",
            "sd=s0,lun=/dev/a\nsd=s1,lun=/dev/b\nwd=w1,sd=s*\n\
             rd=r1,wd=w1,openflags=o_direct,elapsed=10\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        assert!(t.plan.targets.iter().all(|x| x.direct == Some(true)));
        let t = parse_str(
            "x.parm",
            "sd=s0,lun=/dev/a\nwd=w1,sd=s0,openflags=o_direct\nwd=w2,sd=s0\n\
             rd=r1,wd=w1,elapsed=10\nrd=r2,wd=w2,elapsed=10\n",
        )
        .unwrap();
        assert_eq!(t.plan.targets[0].direct, Some(false));
        let u = &t.unsupported[0].option;
        assert!(
            u.contains("o_direct on wd=w1/rd=r1 but not on wd=w2/rd=r2, both on sd=s0"),
            "{u}"
        );
    }

    // vdbench's hits go to the sd's hitarea (the range's first bytes), misses to
    // the rest: a zoned_abs distribution when reads and writes hit alike.
    #[test]
    fn cache_hits_send_their_share_to_the_hit_area() {
        let dist = |wd: &str| {
            let t = parse_str(
                "x.parm",
                &format!("sd=s1,lun=/dev/a,hitarea=4m\nwd=w1,sd=s1,{wd}\nrd=r1,wd=w1,elapsed=10\n"),
            )
            .unwrap();
            let u: Vec<String> = t.unsupported.iter().map(|u| u.option.clone()).collect();
            (t.plan.runs[0].workloads[0].dist.spec(), u)
        };
        assert_eq!(
            dist("rdpct=100,rhpct=100"),
            ("zoned_abs:100/4194304".into(), vec![])
        );
        assert_eq!(
            dist("rdpct=70,rhpct=20,whpct=20"),
            ("zoned_abs:20/4194304:80/".into(), vec![])
        );
        // Writes only: whpct decides; its reads' rhpct does not matter.
        assert_eq!(
            dist("rdpct=0,rhpct=50,whpct=0"),
            ("zoned_abs:0/4194304:100/".into(), vec![])
        );
        let (d, u) = dist("rdpct=70,rhpct=20,whpct=0");
        assert_eq!(d, "uniform");
        assert!(
            u[0].contains("reads and writes hit in different shares"),
            "{u:?}"
        );
        let (d, u) = dist("rdpct=100,rhpct=20,seekpct=0");
        assert_eq!(d, "uniform");
        assert!(u[0].contains("hits of sequential"), "{u:?}");
    }

    // `host=` among the general parameters opens a host definition: vdbench's
    // older spelling of `hd=` (HostParms); in an sd it still names the sd's hosts.
    #[test]
    fn host_before_the_definitions_is_a_host_definition() {
        let t = parse_str(
            "x.parm",
            "host=default,user=ceph,shell=ssh\nhd=one,system=h1\nsd=s1,lun=/dev/a,host=one\nwd=w1,sd=s1\nrd=r1,wd=w1,elapsed=10\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
    }

    // A wd's host= keeps the sds defined for those hosts (getSdsForHost); an rd's
    // format= does nothing on sds, as in vdbench.
    #[test]
    fn a_wd_on_a_host_uses_that_hosts_sds_and_format_on_sds_is_nothing() {
        let t = parse_str(
            "x.parm",
            "hd=h0,system=a\nhd=h1,system=b\n\
             sd=s0,lun=/dev/a,host=h0\nsd=s1,lun=/dev/b,host=h1\nsd=s2,lun=/dev/c\n\
             wd=w0,host=h0,sd=s*\nwd=w1,host=h1,sd=s*\nrd=r1,wd=w*,elapsed=10,format=yes\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let on: Vec<String> = t.plan.runs[0]
            .workloads
            .iter()
            .map(|w| w.name.clone())
            .collect();
        assert_eq!(on, ["w0/s0", "w0/s2", "w1/s1", "w1/s2"]);
    }

    // hd clients=N: N copies of the host on its system, labelled NAME_cl0 …, as
    // vdbench's HostParms makes them; hd=default passes it on.
    #[test]
    fn host_clients_are_copies_of_the_host_on_its_system() {
        let t = parse_str(
            "x.parm",
            "hd=default,clients=2\nhd=h1,system=a\nhd=h2\n\
             sd=s1,lun=/dev/a,host=h1_cl*\nsd=s2,lun=/dev/b\n\
             wd=w1,sd=s*\nrd=r1,wd=w1,elapsed=10\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let hosts: Vec<(&str, &str, Vec<&str>)> = (t.plan.runs[0].hosts.iter())
            .map(|h| {
                let sds = h.targets.iter().map(String::as_str).collect();
                (h.name.as_str(), h.system_name(), sds)
            })
            .collect();
        assert_eq!(
            hosts,
            [
                ("h1_cl0", "a", vec!["s1", "s2"]),
                ("h1_cl1", "a", vec!["s1", "s2"]),
                ("h2_cl0", "h2", vec!["s2"]),
                ("h2_cl1", "h2", vec!["s2"]),
            ]
        );
        let e = parse_str(
            "x.parm",
            "hd=h1,clients=0\nsd=s1,lun=/dev/a\nwd=w1,sd=s1\nrd=r1,wd=w1,elapsed=10\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("x.parm:1") && e.contains("clients=0"), "{e}");
    }

    // vdbench's streams=N (StreamContext): N sequential streams, each in its own
    // Nth of the sd, each served by threads/N threads; seekpct does not matter.
    #[test]
    fn streams_are_sequential_regions_sharing_the_threads() {
        let t = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/a,threads=32\nwd=w1,sd=s1,seekpct=100,rdpct=70,streams=4\nrd=r1,wd=w1,elapsed=10\n",
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let w = &t.plan.runs[0].workloads[0];
        assert_eq!((w.streams, w.qd), (4, 8));
        assert_eq!(w.pattern, AccessPattern::Sequential);
        assert_eq!(w.seq_layout, SeqLayout::Regions);
        let e = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/a,threads=6\nwd=w1,sd=s1,streams=4\nrd=r1,wd=w1,elapsed=10\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("multiple of streams=4") && e.contains("x.parm:2"),
            "{e}"
        );
    }

    #[test]
    fn target_replaces_every_lun_windows_paths_included() {
        let text = "sd=sd1,lun=\\\\.\\PhysicalDrive1\nsd=sd2,lun=/dev/b\n\
                    wd=w1,sd=*\nrd=r1,wd=w1,elapsed=10\n";
        let e = parse_str("x.parm", text).unwrap_err();
        assert!(e.msg.contains("Windows path"), "{}", e.msg);
        let t = parse_text("x.parm", text, Path::new("."), &[], Some("/tmp/t")).unwrap();
        assert!(t.plan.targets.iter().all(|x| x.uri == "/tmp/t"));
    }

    #[test]
    fn continuation_lines_join() {
        let t = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/x,\n  threads=4\nwd=w1,sd=s1,\n xfersize=8k\nrd=r1,wd=w1,elapsed=10\n",
        )
        .unwrap();
        let w = &t.plan.runs[0].workloads[0];
        assert_eq!((w.streams, w.bs.single()), (4, Some(8192)));
    }
}

#[cfg(test)]
mod table_tests {
    use super::*;
    use std::collections::BTreeSet;

    /// A parameter file that writes every parameter the table maps, once.
    const EVERY_MAPPED: &str = "\
compratio=2,dedupratio=2,dedupunit=4k,dedupsets=3,validate=yes,data_errors=2,debug=86,create_anchors=yes
hd=h1,system=localhost,clients=1
sd=s,lun=/dev/x,count=(1,1),size=1g,threads=2,offset=0,openflags=o_direct,journal=/tmp/j,host=h1_cl0,align=4k,range=(0,50),hitarea=2m
wd=w1,sd=s1,xfersize=4k,writepct=30,rdpct=50,seekpct=0,range=(0,50),hotband=(0,50),openflags=o_direct,skew=100,rhpct=10,whpct=10
wd=w2,sd=s1,streams=2,host=h1_cl0
rd=r1,wd=w1,sd=s1,maxdata=999t,maxdataread=998t,maxdatawritten=997t,pause=1,elapsed=10,interval=1,warmup=2,threads=2,openflags=o_direct,iorate=100,distribution=exponential,curve=(10,50),stopcurve=5,forthreads=(1,2),forxfersize=(4k,8k),forrdpct=(0,100),forseekpct=(0,100)
";

    /// (kind, key) of every parameter [`EVERY_MAPPED`] writes.
    fn written() -> BTreeSet<(&'static str, String)> {
        let mut out = BTreeSet::new();
        for line in EVERY_MAPPED.lines() {
            // Words without '=' are the rest of a parenthesised list.
            let mut words = line
                .split(',')
                .filter_map(|w| w.split_once('=').map(|(k, _)| k));
            let first = words.clone().next().unwrap_or("");
            let kind = match Kind::opened_by(first) {
                Some(k) => {
                    words.next();
                    k
                }
                None => Kind::General,
            };
            out.extend(words.map(|k| (kind.label(), k.to_string())));
        }
        out
    }

    // The translator reads a parameter only when the table maps it (`read`), and
    // `Def::get` asserts that every parameter it asks for by name is mapped; this
    // holds the other direction: every mapped row has code that reads it.
    #[test]
    fn the_translator_reads_exactly_the_parameters_the_table_maps() {
        let maps: BTreeSet<(&'static str, String)> = vdbench_options::OPTIONS
            .iter()
            .filter(|o| o.kind != Kind::Definition)
            .filter(|o| {
                matches!(
                    o.effect,
                    Effect::Maps(_) | Effect::Sets(_) | Effect::SetsAs(..)
                )
            })
            .map(|o| (o.kind.label(), o.name.to_string()))
            .collect();
        assert_eq!(
            written(),
            maps,
            "EVERY_MAPPED and the table's mapped rows differ"
        );
        let t = parse_str("x.parm", EVERY_MAPPED).unwrap();
        let unread: Vec<_> = t
            .unsupported
            .iter()
            .filter(|u| u.option.contains("not read"))
            .collect();
        assert!(unread.is_empty(), "mapped but not read: {unread:?}");
    }

    #[test]
    fn abbreviations_read_as_the_parameter() {
        let full = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/x,threads=4\nwd=w1,sd=s1,xfersize=8k,rdpct=70,seekpct=0\n\
             rd=r1,wd=w1,elapsed=20,interval=2,iorate=100,forthreads=(1,2)\n",
        )
        .unwrap();
        let short = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/x,th=4\nwd=w1,sd=s1,xf=8k,rd=70,seek=0\n\
             rd=r1,wd=w1,el=20,in=2,io=100,forth=(1,2)\n",
        );
        // `rd=` opens a run definition, even inside a wd line, as in vdbench.
        assert!(short.is_err());
        let short = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/x,th=4\nwd=w1,sd=s1,xf=8k,readpct=70,seek=0\n\
             rd=r1,wd=w1,el=20,in=2,io=100,forth=(1,2)\n",
        )
        .unwrap();
        assert_eq!(short, full);
        assert!(full.unsupported.is_empty(), "{:?}", full.unsupported);
        // writepct= (wrpct=) is 100 minus the read percentage, the last written
        // of the two winning, as vdbench's WD_entry reads them.
        for wd in [
            "writepct=30",
            "wrpct=30",
            "rdpct=10,writepct=30",
            "writepct=90,rdpct=70",
        ] {
            let t = parse_str(
                "x.parm",
                &format!(
                    "sd=s1,lun=/dev/x,threads=4\nwd=w1,sd=s1,xfersize=8k,{wd},seekpct=0\n\
                     rd=r1,wd=w1,elapsed=20,interval=2,iorate=100,forthreads=(1,2)\n"
                ),
            )
            .unwrap();
            assert_eq!(t.plan.runs[0].workloads[0].read_pct, 70, "{wd}");
            assert!(t.unsupported.is_empty(), "{wd}: {:?}", t.unsupported);
        }
    }

    #[test]
    fn ambiguous_and_unknown_keys_are_listed_where_written() {
        let t = parse_str(
            "x.parm",
            "sd=s1,lun=/dev/x,s=1g\nwd=w1,sd=s1,bogus=1\nrd=r1,wd=w1,elapsed=10,e=5\n",
        )
        .unwrap();
        let listed: Vec<_> = t
            .unsupported
            .iter()
            .map(|u| (u.option.as_str(), u.location.as_str()))
            .collect();
        assert_eq!(
            listed,
            [
                (
                    "s=1g — an abbreviation of size or streams; write the parameter in full",
                    "x.parm:1"
                ),
                ("bogus=1", "x.parm:2"),
                (
                    "e=5 — an abbreviation of elapsed or endcmd; write the parameter in full",
                    "x.parm:3"
                ),
            ]
        );
        let e = parse_str("x.parm", "fsd=f1,anchor=/tmp\n").unwrap_err();
        assert!(e.to_string().contains("no rd="), "{e}");
    }
}
