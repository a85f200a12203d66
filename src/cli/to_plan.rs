//! Flags → Plan. Every value is parsed with the plan's unit parsers; an error names the
//! flag and the exact text given, so "--bs 4kk" says which flag and why.

use super::RunArgs;
use crate::plan::model::*;
use crate::plan::units::{
    parse_count, parse_cpu_list, parse_duration_ns, parse_duration_ns_allow_zero, parse_size,
    parse_size_allow_zero,
};

/// A flag whose value was refused.
#[derive(Debug, thiserror::Error)]
#[error("{flag} '{value}': {msg}")]
pub struct FlagError {
    pub flag: &'static str,
    pub value: String,
    pub msg: String,
}

fn bad(flag: &'static str, value: &str, msg: impl ToString) -> FlagError {
    FlagError {
        flag,
        value: value.to_string(),
        msg: msg.to_string(),
    }
}

/// Parses an access word into (pattern, default read %).
pub fn parse_rw(text: &str) -> Option<(AccessPattern, u8)> {
    Some(match text.to_ascii_lowercase().as_str() {
        "read" => (AccessPattern::Sequential, 100),
        "write" => (AccessPattern::Sequential, 0),
        "randread" => (AccessPattern::Random, 100),
        "randwrite" => (AccessPattern::Random, 0),
        "rw" | "readwrite" => (AccessPattern::Sequential, 50),
        "randrw" => (AccessPattern::Random, 50),
        _ => return None,
    })
}

fn parse_bool(flag: &'static str, v: &str) -> Result<bool, FlagError> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(bad(flag, v, "expected true or false")),
    }
}

fn parse_engine(v: &str) -> Result<EngineKind, FlagError> {
    Ok(match v.to_ascii_lowercase().as_str() {
        "auto" => EngineKind::Auto,
        "uring" | "io_uring" => EngineKind::Uring,
        "sync" | "psync" => EngineKind::Sync,
        "null" => EngineKind::Null,
        "mem" => EngineKind::Mem,
        "sim" => EngineKind::Sim,
        "nbd" => EngineKind::Nbd,
        "smb" => EngineKind::Smb,
        _ => {
            return Err(bad(
                "--engine",
                v,
                "expected auto, uring, sync, null, mem, sim, nbd or smb",
            ))
        }
    })
}

fn count(flag: &'static str, v: &str) -> Result<u64, FlagError> {
    parse_count(v).map_err(|e| bad(flag, v, e))
}

/// Parses "max" or a positive IOPS number.
pub fn parse_rate(v: &str) -> Result<Rate, String> {
    if v.eq_ignore_ascii_case("max") {
        return Ok(Rate::Max);
    }
    let t = v.trim().to_ascii_lowercase();
    let (num, mult) = if let Some(n) = t.strip_suffix('k') {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 1e6)
    } else {
        (t.as_str(), 1.0)
    };
    match num.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(Rate::Iops(r * mult)),
        _ => Err("expected max or a positive number of IOPS (e.g. 5000 or 5k)".into()),
    }
}

/// Builds the plan for `ioscope run` from flags alone (no job file).
pub fn plan_from_flags(a: &RunArgs) -> Result<Plan, FlagError> {
    let targets_given = if a.target.is_empty() {
        return Err(bad(
            "--target",
            "",
            "no target given: name a file, a block device, mem:SIZE or null:SIZE",
        ));
    } else {
        a.target.clone()
    };
    let size = a
        .size
        .as_deref()
        .map(|v| parse_size(v).map_err(|e| bad("--size", v, e)))
        .transpose()?;
    let direct = a
        .direct
        .as_deref()
        .map(|v| parse_bool("--direct", v))
        .transpose()?;
    let targets: Vec<TargetSpec> = targets_given
        .iter()
        .enumerate()
        .map(|(i, uri)| TargetSpec {
            name: format!("t{i}"),
            uri: uri.clone(),
            size_bytes: size,
            direct,
        })
        .collect();
    let mut runs = Vec::new();
    for (label, a) in sweep_combinations(a) {
        runs.push(run_from_flags(&a, &targets, size, label)?);
    }
    Ok(Plan {
        targets,
        runs,
        warnings: Vec::new(),
        data: Default::default(),
    })
}

/// Expands comma lists in --bs, --qd, --streams and --read-pct (vdbench's
/// forxfersize/forthreads/forrdpct) into one set of flags per combination, each with
/// a label naming the swept values ("bs=4k qd=8"); no lists gives one unlabelled set.
pub fn sweep_combinations(a: &RunArgs) -> Vec<(Option<String>, RunArgs)> {
    let split = |v: &Option<String>| -> Vec<Option<String>> {
        match v {
            Some(s) if s.contains(',') => {
                s.split(',').map(|x| Some(x.trim().to_string())).collect()
            }
            other => vec![other.clone()],
        }
    };
    let axes: [(&str, Vec<Option<String>>); 4] = [
        ("bs", split(&a.bs)),
        ("qd", split(&a.qd)),
        ("streams", split(&a.streams)),
        ("read%", split(&a.read_pct)),
    ];
    let mut out: Vec<(Vec<String>, RunArgs)> = vec![(Vec::new(), a.clone())];
    for (axis, values) in axes {
        if values.len() < 2 {
            continue;
        }
        let mut next = Vec::new();
        for (labels, base) in &out {
            for v in &values {
                let mut b = base.clone();
                match axis {
                    "bs" => b.bs = v.clone(),
                    "qd" => b.qd = v.clone(),
                    "streams" => b.streams = v.clone(),
                    _ => b.read_pct = v.clone(),
                }
                let mut l = labels.clone();
                l.push(format!("{axis}={}", v.as_deref().unwrap_or("")));
                next.push((l, b));
            }
        }
        out = next;
    }
    out.into_iter()
        .map(|(l, b)| ((!l.is_empty()).then(|| l.join(" ")), b))
        .collect()
}

/// One run from single-valued flags.
fn run_from_flags(
    a: &RunArgs,
    targets: &[TargetSpec],
    size: Option<u64>,
    label: Option<String>,
) -> Result<RunSpec, FlagError> {
    let mut workload = Workload {
        size_bytes: size,
        ..Default::default()
    };
    apply_workload_flags(a, &mut workload)?;
    let workloads: Vec<Workload> = targets
        .iter()
        .map(|t| Workload {
            name: if targets.len() == 1 {
                "w".into()
            } else {
                format!("w-{}", t.name)
            },
            target: t.name.clone(),
            ..workload.clone()
        })
        .collect();
    let mut run = RunSpec {
        workloads,
        ..RunSpec::default()
    };
    if let Some(label) = label {
        run.name = label;
    }
    apply_run_flags(a, &mut run)?;
    Ok(run)
}

/// Applies workload flags (rw, bs, qd, …) given on the command line.
pub fn apply_workload_flags(a: &RunArgs, w: &mut Workload) -> Result<(), FlagError> {
    if let Some(v) = &a.rw {
        let (pattern, pct) = parse_rw(v).ok_or_else(|| {
            bad(
                "--rw",
                v,
                "expected read, write, randread, randwrite, rw or randrw",
            )
        })?;
        w.pattern = pattern;
        w.read_pct = pct;
    }
    if let Some(v) = &a.read_pct {
        let n: u8 = v
            .trim()
            .parse()
            .ok()
            .filter(|&n| n <= 100)
            .ok_or_else(|| bad("--read-pct", v, "expected a whole number from 0 to 100"))?;
        w.read_pct = n;
    }
    if let Some(v) = &a.bs {
        w.bs = BlockSizes::fixed(parse_size(v).map_err(|e| bad("--bs", v, e))?);
    }
    if let Some(v) = &a.qd {
        let n = count("--qd", v)?;
        w.qd = u32::try_from(n)
            .ok()
            .filter(|&q| q <= 65536)
            .ok_or_else(|| bad("--qd", v, "at most 65536"))?;
    }
    if let Some(v) = &a.streams {
        let n = count("--streams", v)?;
        w.streams = u32::try_from(n)
            .ok()
            .filter(|&q| q <= 100_000)
            .ok_or_else(|| bad("--streams", v, "at most 100000"))?;
    }
    if let Some(v) = &a.offset {
        w.offset_bytes = parse_size_allow_zero(v).map_err(|e| bad("--offset", v, e))?;
    }
    if let Some(v) = &a.size {
        w.size_bytes = Some(parse_size(v).map_err(|e| bad("--size", v, e))?);
    }
    if let Some(v) = &a.rate {
        w.rate = parse_rate(v).map_err(|e| bad("--rate", v, e))?;
    }
    if let Some(v) = &a.arrival {
        w.arrival = match v.to_ascii_lowercase().as_str() {
            "exponential" | "poisson" => Arrival::Exponential,
            "uniform" | "linear" => Arrival::Uniform,
            _ => return Err(bad("--arrival", v, "expected exponential or uniform")),
        };
    }
    if let Some(v) = &a.dist {
        w.dist = Distribution::parse(v).map_err(|e| bad("--dist", v, e))?;
    }
    if let Some(v) = &a.seq_layout {
        w.seq_layout = crate::plan::model::SeqLayout::parse(v)
            .ok_or_else(|| bad("--seq-layout", v, "expected regions or stride"))?;
    }
    Ok(())
}

/// Applies run flags (duration, warm-up, engine, …) given on the command line.
pub fn apply_run_flags(a: &RunArgs, run: &mut RunSpec) -> Result<(), FlagError> {
    if let Some(v) = &a.engine {
        run.engine = parse_engine(v)?;
    }
    if let Some(v) = &a.passes {
        run.passes = Some(count("--passes", v)?);
        if a.duration.is_none() {
            run.duration_ns = None;
        }
    }
    if let Some(v) = &a.duration {
        run.duration_ns = Some(parse_duration_ns(v).map_err(|e| bad("--duration", v, e))?);
    }
    if let Some(v) = &a.warmup {
        run.warmup_ns = parse_duration_ns_allow_zero(v).map_err(|e| bad("--warmup", v, e))?;
    }
    if let Some(v) = &a.interval {
        let ns = parse_duration_ns(v).map_err(|e| bad("--interval", v, e))?;
        if ns < 10_000_000 {
            return Err(bad("--interval", v, "must be at least 10ms"));
        }
        run.interval_ns = ns;
    }
    if let Some(v) = &a.cpus {
        run.cpus = Some(parse_cpu_list(v).map_err(|e| bad("--cpus", v, e))?);
    }
    if let Some(v) = &a.workers {
        run.workers = Some(count("--workers", v)? as usize);
    }
    if let Some(v) = &a.pacing {
        run.pacing = crate::plan::model::Pacing::parse(v)
            .ok_or_else(|| bad("--pacing", v, "expected spin, hybrid or sleep"))?;
    }
    if let Some(v) = &a.seed {
        run.seed = v
            .trim()
            .parse()
            .map_err(|_| bad("--seed", v, "expected a whole number"))?;
    }
    Ok(())
}

/// Applies command-line overrides to a plan read from a job file.
pub fn apply_overrides(a: &RunArgs, plan: &mut Plan) -> Result<(), FlagError> {
    if !a.target.is_empty() {
        if a.target.len() != plan.targets.len() {
            return Err(bad(
                "--target",
                &a.target.join(","),
                format!(
                    "the job file names {} target(s); give --target once per target, in order",
                    plan.targets.len()
                ),
            ));
        }
        for (t, uri) in plan.targets.iter_mut().zip(&a.target) {
            t.uri = uri.clone();
        }
    }
    if let Some(v) = &a.direct {
        let d = parse_bool("--direct", v)?;
        for t in &mut plan.targets {
            t.direct = Some(d);
        }
    }
    for run in &mut plan.runs {
        apply_run_flags(a, run)?;
        for w in &mut run.workloads {
            apply_workload_flags(a, w)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("max").unwrap(), Rate::Max);
        assert_eq!(parse_rate("5k").unwrap(), Rate::Iops(5000.0));
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("-5").is_err());
    }
}
