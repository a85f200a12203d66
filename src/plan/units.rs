//! Units as storage people write them: sizes with k/m/g/t suffixes (powers of 1024,
//! as in fio and vdbench) and durations with ms/s/m/h. Parsing is strict: "4kk",
//! "-1" and "0" are errors that name the offending text, never a silent default.

use std::fmt;

/// Why a unit string was refused. The caller adds where it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("empty value")]
    Empty,
    #[error("'{0}' is not a number with an optional unit")]
    Malformed(String),
    #[error("'{0}' must be greater than zero")]
    Zero(String),
    #[error("'{0}' is too large")]
    Overflow(String),
    #[error("'{text}' has an unknown unit '{unit}' (expected {expected})")]
    UnknownUnit {
        text: String,
        unit: String,
        expected: &'static str,
    },
}

/// Splits "4.5k" into ("4.5", "k"). Rejects signs and anything but digits and one dot.
fn split_number(text: &str) -> Result<(&str, &str), UnitError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(UnitError::Empty);
    }
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    if num.is_empty() || num.matches('.').count() > 1 || num == "." {
        return Err(UnitError::Malformed(text.to_string()));
    }
    Ok((num, unit.trim()))
}

/// Parses a byte size: plain bytes or a k/m/g/t/p suffix (KiB-based; "kb", "kib" and
/// "b" suffix forms are accepted too). Zero is refused.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let v = parse_size_allow_zero(text)?;
    if v == 0 {
        return Err(UnitError::Zero(text.to_string()));
    }
    Ok(v)
}

/// An offset distribution, its `zoned_abs` lengths read as sizes (`4m`).
pub fn parse_dist(
    text: &str,
) -> Result<crate::vocab::Distribution, crate::vocab::DistributionError> {
    crate::vocab::Distribution::parse_with(text, &|t: &str| parse_size(t).ok())
}

/// Like [`parse_size`] but accepts "0" (used for offsets).
pub fn parse_size_allow_zero(text: &str) -> Result<u64, UnitError> {
    let (num, unit) = split_number(text)?;
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "pb" | "pib" => 1 << 50,
        other => {
            return Err(UnitError::UnknownUnit {
                text: text.to_string(),
                unit: other.to_string(),
                expected: "b, k, m, g, t or p",
            })
        }
    };
    let value = if num.contains('.') {
        let f: f64 = num
            .parse()
            .map_err(|_| UnitError::Malformed(text.to_string()))?;
        let bytes = f * mult as f64;
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(UnitError::Overflow(text.to_string()));
        }
        if bytes.fract() != 0.0 {
            return Err(UnitError::Malformed(text.to_string()));
        }
        bytes as u64
    } else {
        let n: u64 = num
            .parse()
            .map_err(|_| UnitError::Overflow(text.to_string()))?;
        n.checked_mul(mult)
            .ok_or_else(|| UnitError::Overflow(text.to_string()))?
    };
    Ok(value)
}

/// Parses a duration into nanoseconds: "500ms", "30s", "2m", "1h", "10us"; a bare
/// number means seconds (as in fio's runtime). Zero is refused.
pub fn parse_duration_ns(text: &str) -> Result<u64, UnitError> {
    let v = parse_duration_ns_allow_zero(text)?;
    if v == 0 {
        return Err(UnitError::Zero(text.to_string()));
    }
    Ok(v)
}

/// Like [`parse_duration_ns`] but accepts zero ("--warmup 0").
pub fn parse_duration_ns_allow_zero(text: &str) -> Result<u64, UnitError> {
    let (num, unit) = split_number(text)?;
    let mult_ns: f64 = match unit.to_ascii_lowercase().as_str() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "" | "s" | "sec" => 1e9,
        "m" | "min" => 60e9,
        "h" | "hr" => 3600e9,
        other => {
            return Err(UnitError::UnknownUnit {
                text: text.to_string(),
                unit: other.to_string(),
                expected: "ns, us, ms, s, m or h",
            })
        }
    };
    let f: f64 = num
        .parse()
        .map_err(|_| UnitError::Malformed(text.to_string()))?;
    let ns = f * mult_ns;
    if !ns.is_finite() || ns >= u64::MAX as f64 {
        return Err(UnitError::Overflow(text.to_string()));
    }
    Ok(ns.round() as u64)
}

/// Parses a positive integer count ("32"); zero and signs are refused.
pub fn parse_count(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(UnitError::Empty);
    }
    if !t.chars().all(|c| c.is_ascii_digit()) {
        return Err(UnitError::Malformed(text.to_string()));
    }
    let n: u64 = t
        .parse()
        .map_err(|_| UnitError::Overflow(text.to_string()))?;
    if n == 0 {
        return Err(UnitError::Zero(text.to_string()));
    }
    Ok(n)
}

/// Highest CPU number accepted in a CPU list.
pub const MAX_CPU: usize = 65535;

/// Why a CPU list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    #[error("{0:?} is not a CPU list such as \"0-3,6\"")]
    NotAList(String),
    #[error("{0} is not a CPU number (0..={MAX_CPU})")]
    NotACpu(String),
    #[error("range '{0}' runs backwards")]
    Backwards(String),
    #[error("CPU {0} is listed twice")]
    Twice(usize),
}

/// Parses Linux CPU-list syntax: "0-3,6,8-9". Order is kept; repeats are refused.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, CpuListError> {
    let parse_one = |s: &str| -> Result<usize, CpuListError> {
        let s = s.trim();
        if s.is_empty() || !s.chars().all(|c| c.is_ascii_digit()) {
            return Err(CpuListError::NotAList(text.to_string()));
        }
        s.parse::<usize>()
            .ok()
            .filter(|&c| c <= MAX_CPU)
            .ok_or_else(|| CpuListError::NotACpu(s.to_string()))
    };
    let mut cpus = Vec::new();
    let mut seen = vec![false; MAX_CPU + 1];
    for part in text.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (parse_one(a)?, parse_one(b)?),
            None => {
                let c = parse_one(part)?;
                (c, c)
            }
        };
        if lo > hi {
            return Err(CpuListError::Backwards(part.trim().to_string()));
        }
        for (cpu, was_seen) in seen.iter_mut().enumerate().take(hi + 1).skip(lo) {
            if std::mem::replace(was_seen, true) {
                return Err(CpuListError::Twice(cpu));
            }
            cpus.push(cpu);
        }
    }
    Ok(cpus)
}

/// Formats bytes the way the parsers read them back: "4k", "1m", "1536".
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 5] = [
        (1 << 50, "p"),
        (1 << 40, "t"),
        (1 << 30, "g"),
        (1 << 20, "m"),
        (1 << 10, "k"),
    ];
    for (mult, suffix) in UNITS {
        if bytes >= mult && bytes % mult == 0 {
            return format!("{}{}", bytes / mult, suffix);
        }
    }
    bytes.to_string()
}

/// Human-readable binary size for terminal output: "4 KiB", "1.5 GiB".
pub struct HumanBytes(pub u64);

impl fmt::Display for HumanBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
        let mut v = self.0 as f64;
        let mut i = 0;
        while v >= 1024.0 && i + 1 < UNITS.len() {
            v /= 1024.0;
            i += 1;
        }
        if v.fract() == 0.0 {
            write!(f, "{} {}", v as u64, UNITS[i])
        } else {
            write!(f, "{:.1} {}", v, UNITS[i])
        }
    }
}

/// Formats a duration in ns compactly: "500ms", "30s", "2m".
pub fn format_duration_ns(ns: u64) -> String {
    if ns % 3_600_000_000_000 == 0 && ns > 0 {
        format!("{}h", ns / 3_600_000_000_000)
    } else if ns % 60_000_000_000 == 0 && ns > 0 {
        format!("{}m", ns / 60_000_000_000)
    } else if ns % 1_000_000_000 == 0 {
        format!("{}s", ns / 1_000_000_000)
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns % 1_000 == 0 {
        format!("{}us", ns / 1_000)
    } else {
        format!("{}ns", ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_kib_based() {
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        assert_eq!(parse_size("2t").unwrap(), 2 << 40);
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("0.5k").unwrap(), 512);
        assert_eq!(parse_size("64KiB").unwrap(), 65536);
    }

    #[test]
    fn bad_sizes_are_refused() {
        assert!(matches!(
            parse_size("4kk"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(parse_size("-1"), Err(UnitError::Malformed(_))));
        assert!(matches!(parse_size("0"), Err(UnitError::Zero(_))));
        assert!(matches!(parse_size(""), Err(UnitError::Empty)));
        assert!(matches!(parse_size("0.3"), Err(UnitError::Malformed(_))));
        assert!(matches!(
            parse_size("99999999999p"),
            Err(UnitError::Overflow(_))
        ));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("500ms").unwrap(), 500_000_000);
        assert_eq!(parse_duration_ns("30s").unwrap(), 30_000_000_000);
        assert_eq!(parse_duration_ns("30").unwrap(), 30_000_000_000);
        assert_eq!(parse_duration_ns("2m").unwrap(), 120_000_000_000);
        assert_eq!(parse_duration_ns("1h").unwrap(), 3_600_000_000_000);
        assert_eq!(parse_duration_ns("10us").unwrap(), 10_000);
        assert!(parse_duration_ns("0").is_err());
        assert_eq!(parse_duration_ns_allow_zero("0").unwrap(), 0);
        assert!(parse_duration_ns("5x").is_err());
    }

    #[test]
    fn round_trip_format() {
        for s in ["4k", "1m", "3g", "1536", "7t"] {
            assert_eq!(format_size(parse_size(s).unwrap()), s);
        }
        assert_eq!(format_duration_ns(parse_duration_ns("2m").unwrap()), "2m");
        assert_eq!(HumanBytes(4096).to_string(), "4 KiB");
        assert_eq!(HumanBytes(1536 << 20).to_string(), "1.5 GiB");
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,6").unwrap(), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list("1").unwrap(), vec![1]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("a").is_err());
        assert!(parse_cpu_list("1,,2").is_err());
        assert_eq!(parse_cpu_list("1,1"), Err(CpuListError::Twice(1)));
        assert_eq!(
            parse_cpu_list("x").unwrap_err().to_string(),
            "\"x\" is not a CPU list such as \"0-3,6\""
        );
        assert!(parse_cpu_list("0-65535").is_ok());
        assert!(parse_cpu_list("70000").is_err());
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("32").unwrap(), 32);
        assert!(parse_count("0").is_err());
        assert!(parse_count("-3").is_err());
        assert!(parse_count("3x").is_err());
    }
}
