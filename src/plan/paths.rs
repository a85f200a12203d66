//! Multipath settings of a target: the further paths to the same storage (path 0 is
//! the target's own URI), how I/O is spread over them, and how a failed path is
//! probed and taken back. Plain data parsed from flags or a job file, without I/O, so
//! a bad policy is a located input error before anything is opened.

use super::units::{parse_duration_ns, UnitError};
use serde::{Deserialize, Serialize};

/// The default per-path I/O deadline of a multipath target.
pub const DEFAULT_PATH_TIMEOUT_NS: u64 = 5_000_000_000;
/// The shortest per-path I/O deadline accepted.
pub const MIN_PATH_TIMEOUT_NS: u64 = 100_000_000;
/// The default interval between probes of a path that is down.
pub const DEFAULT_PATH_RETRY_NS: u64 = 1_000_000_000;

/// Several paths to one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultipathSpec {
    /// Paths 1.. (path 0 is the target's URI).
    pub paths: Vec<String>,
    #[serde(default)]
    pub policy: PathPolicy,
    /// When a path that failed is tried again.
    #[serde(default = "default_retry")]
    pub retry_ns: u64,
    /// When I/O moves back to a preferred path that came back (failover only).
    #[serde(default)]
    pub failback: Failback,
    /// SMB3 multichannel: how many channels to bind to the session (`--channels`);
    /// `None` for other targets, or one channel per address given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<u32>,
}

fn default_retry() -> u64 {
    DEFAULT_PATH_RETRY_NS
}

/// How requests are spread over the healthy paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathPolicy {
    /// Switch to the next path every `n` I/Os (ESXi iops=N, dm-multipath rr_min_io).
    RoundRobin { n: u32 },
    /// The path with the fewest I/Os outstanding.
    Queue,
    /// The path with the fewest bytes outstanding, weighted by its recent service time.
    ServiceTime,
    /// Everything on the first healthy path; the others stand by.
    Failover,
}

impl Default for PathPolicy {
    fn default() -> Self {
        PathPolicy::RoundRobin { n: 1 }
    }
}

impl PathPolicy {
    /// The policy as written on the command line ("rr:1", "queue", …).
    pub fn label(&self) -> String {
        match self {
            PathPolicy::RoundRobin { n } => format!("rr:{n}"),
            PathPolicy::Queue => "queue".into(),
            PathPolicy::ServiceTime => "service-time".into(),
            PathPolicy::Failover => "failover".into(),
        }
    }
}

/// When a failover target moves I/O back to a better path that came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Failback {
    /// As soon as it answers a probe.
    #[default]
    Immediate,
    /// Never by itself: I/O stays where it went.
    Manual,
    /// After it has been up this long.
    AfterNs(u64),
}

/// Why a policy or failback text is not understood.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum PathSpecError {
    #[error("unknown path policy '{0}': expected rr[:N], queue, service-time or failover")]
    UnknownPolicy(String),
    #[error("'{0}': the round-robin count must be a whole number from 1 to 1000000")]
    BadCount(String),
    #[error("failback '{text}': expected immediate, manual or a duration such as 30s ({source})")]
    BadFailback { text: String, source: UnitError },
    #[error("io timeout '{0}' is too short for a multipath target: at least 100ms")]
    TimeoutTooShort(String),
}

/// Parses `rr`, `rr:N`, `queue`, `service-time` or `failover`.
pub fn parse_policy(text: &str) -> Result<PathPolicy, PathSpecError> {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("rr") {
        let n = match rest.strip_prefix(':') {
            None if rest.is_empty() => 1,
            Some(n) => n
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=1_000_000).contains(n))
                .ok_or_else(|| PathSpecError::BadCount(text.to_string()))?,
            None => return Err(PathSpecError::UnknownPolicy(text.to_string())),
        };
        return Ok(PathPolicy::RoundRobin { n });
    }
    match t {
        "queue" | "queue-length" => Ok(PathPolicy::Queue),
        "service-time" => Ok(PathPolicy::ServiceTime),
        "failover" => Ok(PathPolicy::Failover),
        _ => Err(PathSpecError::UnknownPolicy(text.to_string())),
    }
}

/// Parses `immediate`, `manual` or a duration.
pub fn parse_failback(text: &str) -> Result<Failback, PathSpecError> {
    match text.trim() {
        "immediate" => Ok(Failback::Immediate),
        "manual" => Ok(Failback::Manual),
        d => parse_duration_ns(d)
            .map(Failback::AfterNs)
            .map_err(|source| PathSpecError::BadFailback {
                text: text.to_string(),
                source,
            }),
    }
}

/// Checks a per-path I/O deadline against the multipath floor.
pub fn check_path_timeout(text: &str, ns: u64) -> Result<u64, PathSpecError> {
    if ns < MIN_PATH_TIMEOUT_NS {
        return Err(PathSpecError::TimeoutTooShort(text.to_string()));
    }
    Ok(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse() {
        assert_eq!(parse_policy("rr").unwrap(), PathPolicy::RoundRobin { n: 1 });
        assert_eq!(
            parse_policy("rr:1000").unwrap(),
            PathPolicy::RoundRobin { n: 1000 }
        );
        assert_eq!(parse_policy("queue").unwrap(), PathPolicy::Queue);
        assert_eq!(
            parse_policy("service-time").unwrap(),
            PathPolicy::ServiceTime
        );
        assert_eq!(parse_policy("failover").unwrap(), PathPolicy::Failover);
        assert_eq!(
            parse_policy("rr:0").unwrap_err(),
            PathSpecError::BadCount("rr:0".into())
        );
        assert!(matches!(
            parse_policy("rrr"),
            Err(PathSpecError::UnknownPolicy(_))
        ));
        assert!(matches!(
            parse_policy("random"),
            Err(PathSpecError::UnknownPolicy(_))
        ));
        for p in ["rr:7", "queue", "service-time", "failover"] {
            assert_eq!(parse_policy(p).unwrap().label(), p);
        }
    }

    #[test]
    fn failback_parses() {
        assert_eq!(parse_failback("manual").unwrap(), Failback::Manual);
        assert_eq!(parse_failback("immediate").unwrap(), Failback::Immediate);
        assert_eq!(
            parse_failback("30s").unwrap(),
            Failback::AfterNs(30_000_000_000)
        );
        assert!(parse_failback("later").is_err());
        assert!(check_path_timeout("50ms", 50_000_000).is_err());
        assert_eq!(
            check_path_timeout("1s", 1_000_000_000).unwrap(),
            1_000_000_000
        );
    }
}
