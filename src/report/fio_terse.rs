//! fio's terse output (`--output-format=terse`, `--minimal`): one line of
//! semicolon-separated fields per job, in the field order of fio's terse versions 3
//! (fio's default), 4 and 5, so scripts that cut fields out of it (`cut -d';' -f8`
//! for read IOPS) read ioscope's runs. Built from the same jobs as fio JSON
//! ([`super::fio_json::jobs`]), so the two never disagree. Latencies are in µs and
//! bandwidth in KiB/s, integer where fio prints integers.
//!
//! What ioscope does not measure is written as fio writes an empty statistic: the
//! submission latency (slat) is 0, and the seven I/O depth distribution fields are
//! 0.0 % (ioscope does not record the depth each I/O was issued at). fio's optional
//! trailing fields (disk utilisation, `continue_on_error` counts, `description`)
//! are not written.

use crate::result::ResultDoc;
use serde_json::Value;
use std::fmt::Write;

/// The terse versions this writer knows.
pub const VERSIONS: [u32; 3] = [3, 4, 5];

/// fio's percentile slots per direction (FIO_IO_U_LIST_MAX_LEN); the unused ones
/// are written `0%=0`.
const PERCENTILE_SLOTS: usize = 20;

/// fio's microsecond and millisecond latency buckets, in its order.
const LAT_US: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];
const LAT_MS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

/// Renders every job of `doc` as terse `version` (one of [`VERSIONS`]) lines.
pub fn render(doc: &ResultDoc, version: u32) -> String {
    let fio_version = format!("ioscope-{}", doc.tool.version);
    let mut out = String::new();
    for job in super::fio_json::jobs(doc, false) {
        out.push_str(&line(&job, version, &fio_version));
        out.push('\n');
    }
    out
}

fn int(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_f64().map(|f| f.max(0.0) as u64))
        .unwrap_or(0)
}

fn float(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// One job's line.
fn line(job: &Value, version: u32, fio_version: &str) -> String {
    let mut s = format!(
        "{version};{fio_version};{};{};{}",
        job["jobname"].as_str().unwrap_or(""),
        int(&job["groupid"]),
        int(&job["error"])
    );
    let dirs: &[&str] = if version >= 4 {
        &["read", "write", "trim"]
    } else {
        &["read", "write"]
    };
    for d in dirs {
        direction(&mut s, &job[*d], version);
    }
    let _ = write!(
        s,
        ";{:.6}%;{:.6}%;{};{};{}",
        float(&job["usr_cpu"]),
        float(&job["sys_cpu"]),
        int(&job["ctx"]),
        int(&job["majf"]),
        int(&job["minf"])
    );
    s.push_str(&";0.0%".repeat(7));
    for (group, keys) in [("latency_us", &LAT_US[..]), ("latency_ms", &LAT_MS[..])] {
        for k in keys {
            let _ = write!(s, ";{:.2}%", float(&job[group][*k]));
        }
    }
    s
}

/// min;max;mean;dev in µs of a `*_ns` latency object (min and max integer).
fn latency(s: &mut String, l: &Value) {
    let _ = write!(
        s,
        ";{};{};{:.6};{:.6}",
        int(&l["min"]) / 1000,
        int(&l["max"]) / 1000,
        float(&l["mean"]) / 1000.0,
        float(&l["stddev"]) / 1000.0
    );
}

/// One direction's fields: sizes and rates, slat, clat, clat percentiles, lat,
/// bandwidth (and, in version 5, the bandwidth sample count and IOPS statistics).
fn direction(s: &mut String, d: &Value, version: u32) {
    let runtime_ms = int(&d["runtime"]);
    let bytes = int(&d["io_bytes"]);
    let ios = int(&d["total_ios"]);
    let (bw_kib, iops) = match runtime_ms {
        0 => (0, 0),
        t => ((1000 * bytes / t) / 1024, 1000 * ios / t),
    };
    let _ = write!(s, ";{};{bw_kib};{iops};{runtime_ms}", bytes >> 10);
    latency(s, &d["slat_ns"]);
    latency(s, &d["clat_ns"]);
    // In fio's order (the JSON object's keys may be sorted as text).
    let pct = &d["clat_ns"]["percentile"];
    let mut slots = 0;
    for (p, key) in super::fio_json::FIO_PERCENTILES {
        if let Some(v) = pct.get(key) {
            let _ = write!(s, ";{p:.6}%={}", int(v) / 1000);
            slots += 1;
        }
    }
    s.push_str(&";0%=0".repeat(PERCENTILE_SLOTS - slots));
    latency(s, &d["lat_ns"]);
    let sampled = ios > 0;
    let (min, max, agg, mean, dev) = if sampled {
        let agg = float(&d["bw_agg"]);
        (
            int(&d["bw_min"]),
            int(&d["bw_max"]),
            agg,
            float(&d["bw_mean"]),
            float(&d["bw_dev"]),
        )
    } else {
        (0, 0, 0.0, 0.0, 0.0)
    };
    let _ = write!(s, ";{min};{max};{agg:.6}%;{mean:.6};{dev:.6}");
    if version == 5 {
        let n = if sampled { int(&d["bw_samples"]) } else { 0 };
        let _ = write!(s, ";{n}");
        if sampled {
            let _ = write!(
                s,
                ";{};{};{:.6};{:.6};{}",
                int(&d["iops_min"]),
                int(&d["iops_max"]),
                float(&d["iops_mean"]),
                float(&d["iops_stddev"]),
                int(&d["iops_samples"])
            );
        } else {
            s.push_str(";0;0;0.000000;0.000000;0");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(version: u32) -> Vec<Vec<String>> {
        let doc = super::super::testdata::fixtures().remove(0).1;
        render(&doc, version)
            .lines()
            .map(|l| l.split(';').map(str::to_string).collect())
            .collect()
    }

    /// fio's documented layout: 121 fields in version 3 (5 general, 41 per read
    /// and write, 5 CPU, 7 depth, 10 µs and 12 ms buckets); version 4 adds trim's
    /// 41, version 5 six more per direction.
    #[test]
    fn field_counts_are_fios() {
        for (v, n) in [(3, 121), (4, 162), (5, 180)] {
            for line in fields(v) {
                assert_eq!(line.len(), n, "version {v}");
                assert_eq!(line[0], v.to_string());
            }
        }
    }

    /// The fields scripts cut out are the result's figures: read IOPS is field 8
    /// (1-based), the read clat p99 is `99.000000%=…` in µs, and write IOPS is field
    /// 49; all agree with the fio JSON of the same result.
    #[test]
    fn fields_carry_the_fio_json_figures() {
        let doc = super::super::testdata::fixtures().remove(0).1;
        let jobs = super::super::fio_json::jobs(&doc, false);
        for (line, job) in fields(3).iter().zip(&jobs) {
            assert_eq!(line[2], job["jobname"].as_str().unwrap());
            for (dir, at) in [("read", 5), ("write", 46)] {
                let d = &job[dir];
                let (ios, t) = (int(&d["total_ios"]), int(&d["runtime"]).max(1));
                assert_eq!(line[at + 2], (1000 * ios / t).to_string(), "{dir} iops");
                assert_eq!(line[at], (int(&d["io_bytes"]) >> 10).to_string());
                if ios > 0 {
                    let p99 = int(&d["clat_ns"]["percentile"]["99.000000"]) / 1000;
                    assert_eq!(line[at + 12 + 12], format!("99.000000%={p99}"), "{dir}");
                }
            }
        }
    }
}
