//! Value parsers for flags: each turns the text of one flag into its typed value, so
//! a refused value is reported by clap as `invalid value 'TEXT' for '--FLAG <NAME>':
//! WHY` (exit 2) before anything runs. They reuse the plan's unit parsers, so a size
//! or a duration means the same on the command line as in a job file.

use crate::plan::model::{
    AccessPattern, Arrival, Distribution, EngineKind, Pacing, Rate, SeqLayout, TrimMode,
};
use crate::plan::tuning::SyncKind;
use crate::plan::units::{self, UnitError};
use crate::report::export::{Form, Place};
use crate::run::worker::ErrorPolicy;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

/// Why a flag's text was refused; clap prints it after the flag and the text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// A size, duration or count that does not parse.
    #[error(transparent)]
    Unit(#[from] UnitError),
    /// A word or number outside the accepted set; says what is accepted.
    #[error("expected {0}")]
    Expected(&'static str),
    /// A name outside a list built at run time (the engine kinds' names).
    #[error("expected one of {0}")]
    OneOf(String),
    /// A count above its limit.
    #[error("at most {0}")]
    AtMost(u32),
    /// A reporting interval below 10 ms.
    #[error("must be at least 10ms")]
    IntervalTooShort,
    /// A path policy or failback rule that does not parse.
    #[error(transparent)]
    Path(#[from] crate::plan::paths::PathSpecError),
    /// An offset distribution that does not parse.
    #[error(transparent)]
    Distribution(#[from] crate::plan::model::DistributionError),
    /// A CPU list that does not parse.
    #[error(transparent)]
    CpuList(#[from] units::CpuListError),
    /// A `--split` that is neither `all` nor `streams`.
    #[error(transparent)]
    Split(#[from] crate::cluster::placement::SplitError),
    /// An I/O priority or priority share that does not parse.
    #[error(transparent)]
    Priority(#[from] crate::plan::priority::PriorityError),
}

type Res<T> = Result<T, ValueError>;

/// A byte size greater than zero ("4k", "1m").
pub fn size(text: &str) -> Res<u64> {
    units::parse_size(text).map_err(ValueError::from)
}

/// A byte size, zero allowed (an offset).
pub fn size_or_zero(text: &str) -> Res<u64> {
    units::parse_size_allow_zero(text).map_err(ValueError::from)
}

/// A duration greater than zero, in ns ("30s", "2m").
pub fn duration_ns(text: &str) -> Res<u64> {
    units::parse_duration_ns(text).map_err(ValueError::from)
}

/// A duration, zero allowed, in ns (a warm-up).
pub fn duration_ns_or_zero(text: &str) -> Res<u64> {
    units::parse_duration_ns_allow_zero(text).map_err(ValueError::from)
}

/// A reporting interval: at least 10 ms, in ns.
pub fn interval_ns(text: &str) -> Res<u64> {
    let ns = duration_ns(text)?;
    if ns < 10_000_000 {
        return Err(ValueError::IntervalTooShort);
    }
    Ok(ns)
}

/// A positive count.
pub fn count(text: &str) -> Res<u64> {
    units::parse_count(text).map_err(ValueError::from)
}

/// A positive count up to `max`.
fn bounded(text: &str, max: u32) -> Res<u32> {
    u32::try_from(count(text)?)
        .ok()
        .filter(|&n| n <= max)
        .ok_or(ValueError::AtMost(max))
}

/// Operations in flight per stream (1 to 65536).
pub fn qd(text: &str) -> Res<u32> {
    bounded(text, 65536)
}

/// Independent streams (1 to 100000).
pub fn streams(text: &str) -> Res<u32> {
    bounded(text, 100_000)
}

/// A CPU number (`--sqpoll-cpu`).
pub fn cpu_number(text: &str) -> Res<u32> {
    text.trim()
        .parse()
        .map_err(|_| ValueError::Expected("a CPU number"))
}

/// Writes between flushes (`--sync-every`): a positive count.
pub fn sync_every(text: &str) -> Res<u32> {
    bounded(text, u32::MAX)
}

/// The flush call: fsync, fdatasync or sync_file_range:FLAGS.
pub fn sync_kind(text: &str) -> Res<SyncKind> {
    SyncKind::parse(text).ok_or(ValueError::Expected(SyncKind::EXPECTED))
}

/// A worker count.
pub fn workers(text: &str) -> Res<usize> {
    count(text).map(|n| n as usize)
}

/// A read percentage, 0 to 100.
pub fn read_pct(text: &str) -> Res<u8> {
    text.trim()
        .parse()
        .ok()
        .filter(|&n: &u8| n <= 100)
        .ok_or(ValueError::Expected("a whole number from 0 to 100"))
}

/// A seed: any whole number.
pub fn seed(text: &str) -> Res<u64> {
    text.trim()
        .parse()
        .map_err(|_| ValueError::Expected("a whole number"))
}

/// true/false (also 1/0, yes/no, on/off).
pub fn boolean(text: &str) -> Res<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(ValueError::Expected("true or false")),
    }
}

/// An engine name (fio's io_uring and psync spellings too).
pub fn engine(text: &str) -> Res<EngineKind> {
    match text.to_ascii_lowercase().as_str() {
        "io_uring" => Ok(EngineKind::Uring),
        "psync" => Ok(EngineKind::Sync),
        other => EngineKind::parse(other).ok_or_else(|| ValueError::OneOf(EngineKind::names())),
    }
}

/// The stat call of the filestat/dirstat engines.
pub fn stat_call(text: &str) -> Res<crate::plan::engine_opts::StatCall> {
    crate::plan::engine_opts::StatCall::parse(text)
        .ok_or(ValueError::Expected("stat, lstat or statx"))
}

/// How the cpuio engine burns CPU.
pub fn cpu_mode(text: &str) -> Res<crate::plan::engine_opts::CpuMode> {
    crate::plan::engine_opts::CpuMode::parse(text).ok_or(ValueError::Expected("noop or qsort"))
}

/// A CPU load percentage, 1 to 100.
pub fn cpu_load(text: &str) -> Res<u8> {
    text.trim()
        .parse::<u8>()
        .ok()
        .filter(|p| (1..=100).contains(p))
        .ok_or(ValueError::Expected("a whole percentage from 1 to 100"))
}

/// An access word and the read percentage it implies.
#[derive(Debug, Clone, PartialEq)]
pub struct Rw {
    pub pattern: AccessPattern,
    pub read_pct: u8,
    pub trim: TrimMode,
}

/// Parses an access word: read, write, randread, randwrite, rw (readwrite), randrw,
/// and the trim words trim, randtrim, trimwrite, randtrimwrite.
pub fn rw(text: &str) -> Res<Rw> {
    let lower = text.to_ascii_lowercase();
    if let Some((pattern, trim)) = TrimMode::parse_rw(&lower) {
        return Ok(Rw {
            pattern,
            read_pct: 0,
            trim,
        });
    }
    let (pattern, read_pct) = match lower.as_str() {
        "read" => (AccessPattern::Sequential, 100),
        "write" => (AccessPattern::Sequential, 0),
        "randread" => (AccessPattern::Random, 100),
        "randwrite" => (AccessPattern::Random, 0),
        "rw" | "readwrite" => (AccessPattern::Sequential, 50),
        "randrw" => (AccessPattern::Random, 50),
        _ => {
            return Err(ValueError::Expected(
                "read, write, randread, randwrite, rw, randrw, trim, randtrim, trimwrite or \
                 randtrimwrite",
            ))
        }
    };
    Ok(Rw {
        pattern,
        read_pct,
        trim: TrimMode::None,
    })
}

/// "max" or a positive IOPS number, with an optional k/m multiplier.
pub fn rate(text: &str) -> Res<Rate> {
    if text.eq_ignore_ascii_case("max") {
        return Ok(Rate::Max);
    }
    let t = text.trim().to_ascii_lowercase();
    let (num, mult) = if let Some(n) = t.strip_suffix('k') {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 1e6)
    } else {
        (t.as_str(), 1.0)
    };
    match num.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(Rate::Iops(r * mult)),
        _ => Err(ValueError::Expected(
            "max or a positive number of IOPS (e.g. 5000 or 5k)",
        )),
    }
}

/// An arrival process: exponential (poisson) or uniform (linear).
pub fn arrival(text: &str) -> Res<Arrival> {
    match text.to_ascii_lowercase().as_str() {
        "exponential" | "poisson" => Ok(Arrival::Exponential),
        "uniform" | "linear" => Ok(Arrival::Uniform),
        _ => Err(ValueError::Expected("exponential or uniform")),
    }
}

/// An I/O priority, CLASS[/LEVEL[/HINT]].
pub fn priority(text: &str) -> Res<crate::plan::priority::IoPriority> {
    Ok(crate::plan::priority::IoPriority::parse(text)?)
}

/// A share of I/Os at a priority, [read:|write:][BS:]PCT%CLASS[/LEVEL[/HINT]].
pub fn prio_share(text: &str) -> Res<crate::plan::priority::PrioShare> {
    Ok(crate::plan::priority::PrioShare::parse(text)?)
}

/// An offset distribution (uniform, zipf:THETA, pareto:H, zoned:…, zoned_abs:…,
/// sequence:…).
pub fn dist(text: &str) -> Res<Distribution> {
    crate::plan::units::parse_dist(text).map_err(ValueError::from)
}

/// How sequential streams share the working set.
pub fn seq_layout(text: &str) -> Res<SeqLayout> {
    SeqLayout::parse(text).ok_or(ValueError::Expected("regions, stride, whole or shared"))
}

/// How workers wait for the next issue time.
pub fn pacing(text: &str) -> Res<Pacing> {
    Pacing::parse(text).ok_or(ValueError::Expected("spin, hybrid or sleep"))
}

/// A CPU list ("0-3,6"), kept whole (one flag value, not a list of flag values).
#[derive(Debug, Clone, PartialEq)]
pub struct CpuList(pub Vec<usize>);

/// Parses a CPU list.
pub fn cpus(text: &str) -> Res<CpuList> {
    units::parse_cpu_list(text)
        .map(CpuList)
        .map_err(ValueError::from)
}

/// What an I/O error does: stop, continue, or retry=N.
pub fn on_error(text: &str) -> Res<ErrorPolicy> {
    match text {
        "stop" => Ok(ErrorPolicy::Stop),
        "continue" => Ok(ErrorPolicy::Continue),
        other => match other
            .strip_prefix("retry=")
            .and_then(|n| n.parse::<u32>().ok())
        {
            Some(n) if n > 0 => Ok(ErrorPolicy::Retry(n)),
            _ => Err(ValueError::Expected("stop, continue or retry=N")),
        },
    }
}

/// A data ratio of 1 or more (dedup, compression).
pub fn ratio(text: &str) -> Res<f64> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && *r >= 1.0)
        .ok_or(ValueError::Expected("a ratio of 1 or more, e.g. 2 or 2.5"))
}

/// A percentage of the measured maximum (a curve point), "50" or "50%".
pub fn percent(text: &str) -> Res<f64> {
    text.trim()
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0 && *v <= 1000.0)
        .ok_or(ValueError::Expected("a percentage above 0, e.g. 50 or 50%"))
}

/// A latency bound ("p99=0.5ms").
pub fn latency_bound(text: &str) -> Result<crate::app::LatencyBound, crate::app::BoundError> {
    crate::app::LatencyBound::parse(text)
}

/// A multipath policy: rr[:N], queue, service-time, failover.
pub fn path_policy(text: &str) -> Res<crate::plan::paths::PathPolicy> {
    Ok(crate::plan::paths::parse_policy(text)?)
}

/// A failback rule: immediate, manual or a duration.
pub fn failback(text: &str) -> Res<crate::plan::paths::Failback> {
    Ok(crate::plan::paths::parse_failback(text)?)
}

/// `--split all|streams`.
pub fn split(s: &str) -> Res<crate::cluster::Split> {
    Ok(crate::cluster::Split::parse(s)?)
}

/// The value parser of a flag naming an output form at `place`: the names, aliases
/// and help lines of [`FORMS`](crate::report::export::FORMS), so `--help`, the man
/// page and completions list what the table holds.
pub fn form(place: Place) -> impl TypedValueParser<Value = &'static Form> {
    let values = Form::at(place).map(|f| {
        PossibleValue::new(f.name)
            .help(f.doc)
            .aliases(f.aliases.iter().copied())
    });
    PossibleValuesParser::new(values).try_map(move |name| {
        Form::named(place, &name).ok_or_else(|| format!("expected {}", Form::names(place)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(rate("max").unwrap(), Rate::Max);
        assert_eq!(rate("5k").unwrap(), Rate::Iops(5000.0));
        assert!(rate("0").is_err());
        assert!(rate("-5").is_err());
    }

    #[test]
    fn policies_and_bounds() {
        assert_eq!(on_error("retry=3").unwrap(), ErrorPolicy::Retry(3));
        assert!(on_error("retry=0").is_err());
        assert!(on_error("sometimes").is_err());
        assert_eq!(qd("65536").unwrap(), 65536);
        assert_eq!(qd("65537").unwrap_err().to_string(), "at most 65536");
        assert!(streams("0").is_err());
        assert!(read_pct("101").is_err());
        assert!(interval_ns("5ms").is_err());
        assert!(ratio("0.5").is_err());
        assert_eq!(percent("50%").unwrap(), 50.0);
        assert_eq!(rw("RandRW").unwrap().read_pct, 50);
        let t = rw("randtrim").unwrap();
        assert_eq!(
            (t.pattern, t.read_pct, t.trim),
            (AccessPattern::Random, 0, TrimMode::Only)
        );
        assert_eq!(rw("trimwrite").unwrap().trim, TrimMode::ThenWrite);
        assert_eq!(engine("io_uring").unwrap(), EngineKind::Uring);
    }
}
