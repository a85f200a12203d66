//! Hand-built results for reporter tests: deterministic, with known totals and a
//! small, seeded interval noise, so tests can check structure and verdicts.

use crate::result::*;

/// A deterministic pseudo-random sequence in [-1, 1] (an LCG; quality is irrelevant).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// Latency stats around `mean_us` with a spectrum of `points` percentiles.
pub fn latency(mean_us: f64, with_spectrum: bool) -> LatencyStats {
    let pcts = [
        0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 100.0,
    ];
    let at = |p: f64| mean_us * (0.5 + 0.6 * super::svg::nines(p).min(5.0));
    LatencyStats {
        min: at(0.0),
        mean: mean_us,
        stddev: mean_us * 0.3,
        max: at(100.0),
        p50: at(50.0),
        p90: at(90.0),
        p95: at(95.0),
        p99: at(99.0),
        p99_9: at(99.9),
        p99_99: at(99.99),
        spectrum: if with_spectrum {
            pcts.iter().map(|&p| (p, at(p))).collect()
        } else {
            Vec::new()
        },
        cdf: Vec::new(),
    }
}

/// An interval's latency summary around a mean of `m` µs.
fn interval_latency(m: f64) -> IntervalLatency {
    IntervalLatency {
        mean: m,
        p50: m * 0.9,
        p99: m * 3.0,
        max: m * 5.0,
        stddev: m * 0.3,
        hdr: None,
    }
}

fn op(ios: u64, secs: f64, lat_us: f64, spectrum: bool) -> OpTotals {
    let bytes = ios * 4096;
    OpTotals {
        ios,
        bytes,
        iops: ios as f64 / secs,
        mbps: bytes as f64 / secs / 1e6,
        mibps: bytes as f64 / secs / 1048576.0,
        errors: 0,
        latency_us: latency(lat_us, spectrum),
        service_us: latency(lat_us, spectrum),
        ..Default::default()
    }
}

/// One run of `n` one-second intervals, the first `warmup` of them warm-up, with
/// IOPS and latency varying by ±`noise` (a fraction) around the given values.
/// `read_frac` of the I/Os are reads; write latency is 1.5× read latency.
#[allow(clippy::too_many_arguments)]
pub fn run(
    name: &str,
    iops: f64,
    lat_us: f64,
    n: usize,
    warmup: usize,
    noise: f64,
    read_frac: f64,
    seed: u64,
) -> RunResult {
    let mut rng = Noise(seed);
    let secs = (n - warmup.min(n)) as f64;
    let total_ios = (iops * secs).round() as u64;
    let reads = (total_ios as f64 * read_frac).round() as u64;
    let mut all = op(total_ios, secs.max(1.0), lat_us, true);
    all.latency_us.spectrum.clear();
    all.service_us.spectrum.clear();
    let read = op(reads, secs.max(1.0), lat_us, true);
    let write = op(total_ios - reads, secs.max(1.0), lat_us * 1.5, true);
    let intervals = (0..n)
        .map(|i| {
            let f = 1.0 + noise * rng.next();
            let g = 1.0 + noise * rng.next();
            let ios = (iops * f).round() as u64;
            let lat = interval_latency;
            Interval {
                index: i as u64,
                t_s: (i + 1) as f64,
                duration_s: 1.0,
                unix_s: 1_700_000_000.0 + (i + 1) as f64,
                warmup: i < warmup,
                ios,
                bytes: ios * 4096,
                iops: iops * f,
                mbps: iops * f * 4096.0 / 1e6,
                read_pct: read_frac * 100.0,
                errors: 0,
                lat_us: lat(lat_us * g),
                read_lat_us: lat(lat_us * g),
                write_lat_us: lat(lat_us * g * 1.5),
                queue_depth: iops * f * lat_us * g / 1e6,
                cpu: Cpu {
                    user_pct: 2.0,
                    sys_pct: 5.0,
                    system_pct: 9.0,
                    cpu_us_per_io: 1.2 * g,
                    online_cpus: Some(8),
                },
                ..Default::default()
            }
        })
        .collect();
    RunResult {
        kind: Default::default(),
        name: name.into(),
        target: "/dev/nvme0n1".into(),
        engine: "uring".into(),
        engine_reason: String::new(),
        io: None,
        workload: RunWorkload::default(),
        duration_s: secs,
        warmup_s: warmup as f64,
        interrupted: false,
        end_reason: EndReason::Duration,
        workers: 1,
        streams: 1,
        totals: Totals {
            all,
            read,
            write,
            trim: None,
            queue_depth: iops * lat_us / 1e6,
            flush: None,
            zone_resets: None,
            net: Default::default(),
        },
        cpu: Cpu {
            user_pct: 2.0,
            sys_pct: 5.0,
            system_pct: 9.0,
            cpu_us_per_io: 1.2,
            online_cpus: Some(8),
        },
        workloads: Vec::new(),
        intervals,
        ..RunResult::empty()
    }
}

/// A result document holding `runs`, with a nested environment.
pub fn doc(runs: Vec<RunResult>) -> ResultDoc {
    ResultDoc {
        schema: SCHEMA.into(),
        tool: Tool {
            name: "ioscope".into(),
            version: "0.1.0".into(),
        },
        started_unix_s: 1_700_000_000.0,
        command: vec!["ioscope".into(), "run".into(), "job.toml".into()],
        interrupted: false,
        runs,
        env: Some(serde_json::json!({
            "kernel": "6.8.0",
            "cpu": {"model": "Test CPU <script>alert(1)</script>", "cores": 8},
            "devices": [{"name": "nvme0n1", "scheduler": "none"}],
            "flags": ["a", "b"],
        })),
        plan: None,
        warnings: Vec::new(),
        curves: Vec::new(),
        steady_state: None,
    }
}

/// The documents stored under tests/fixtures/results/, by file name.
pub fn fixtures() -> Vec<(&'static str, ResultDoc)> {
    let mut warm = run("randrw-qd4", 40_000.0, 95.0, 30, 5, 0.04, 0.7, 11);
    warm.intervals[17].errors = 3;
    warm.intervals[18].errors = 1;
    warm.totals.all.errors = 4;
    warm.totals.write.errors = 4;
    warm.error_samples.push(ErrorSample {
        op: "write".into(),
        target: "/dev/nvme0n1".into(),
        offset: 1_048_576,
        len: 4096,
        errno: 5,
        message: "Input/output error".into(),
    });
    let warm = doc(vec![warm]);
    let two = doc(vec![
        run("randread-qd1", 10_000.0, 100.0, 12, 2, 0.02, 1.0, 21),
        run("randread-qd32", 80_000.0, 400.0, 12, 2, 0.02, 1.0, 22),
    ]);
    vec![("run-with-warmup.json", warm), ("two-runs.json", two)]
}

/// `r` as a repeated run whose repetitions measured `iops` (one each, in order), its
/// latency and MB/s following from them, with their `repeats` summary.
pub fn repeated(mut r: RunResult, iops: &[f64]) -> RunResult {
    use crate::result::repeats::{LatencyFigures, Repeats, Repetition};
    r.repetitions = iops
        .iter()
        .map(|&x| Repetition {
            iops: x,
            mbps: x / 250.0,
            latency_us: LatencyFigures {
                mean: 1e6 / x,
                p50: 1e6 / x,
                p99: 3e6 / x,
                p99_9: 4e6 / x,
            },
            ..Default::default()
        })
        .collect();
    r.repeats = Repeats::of(&r.repetitions);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::{render_html, tests::series_counts};

    const STORED: [(&str, &str); 2] = [
        (
            "run-with-warmup.json",
            include_str!("../../tests/fixtures/results/run-with-warmup.json"),
        ),
        (
            "two-runs.json",
            include_str!("../../tests/fixtures/results/two-runs.json"),
        ),
    ];

    /// Regenerates the fixture files: `cargo test --lib write_fixtures -- --ignored`.
    /// Set IOSCOPE_PREVIEW_DIR to also write their HTML reports there.
    #[test]
    #[ignore]
    fn write_fixtures() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/results");
        for (name, d) in fixtures() {
            let json = serde_json::to_string_pretty(&d).unwrap() + "\n";
            std::fs::write(format!("{dir}/{name}"), json).unwrap();
            if let Ok(preview) = std::env::var("IOSCOPE_PREVIEW_DIR") {
                let html = render_html(&d);
                std::fs::write(format!("{preview}/{name}.html"), html).unwrap();
            }
        }
    }

    // Guards the fixtures later browser tests load: they must stay parseable by the
    // current model, keep the shape those tests rely on, and render consistently.
    // (Exact equality with `fixtures()` is not asserted: serde_json's default float
    // parsing may differ from the written value in the last bit.)
    #[test]
    fn stored_fixtures_parse_and_render() {
        let built = fixtures();
        for ((name, text), (bname, d)) in STORED.iter().zip(&built) {
            assert_eq!(name, bname);
            let parsed: ResultDoc = serde_json::from_str(text).unwrap();
            assert_eq!(parsed.runs.len(), d.runs.len(), "{name} is stale");
            for (p, b) in parsed.runs.iter().zip(&d.runs) {
                assert_eq!(p.name, b.name, "{name} is stale");
                assert_eq!(p.intervals.len(), b.intervals.len(), "{name} is stale");
                let warm = |r: &RunResult| r.intervals.iter().filter(|i| i.warmup).count();
                assert_eq!(warm(p), warm(b), "{name} is stale");
                assert!(warm(p) > 0, "{name}: fixtures must show a warm-up band");
            }
            for (chart, series, declared, found) in series_counts(&render_html(&parsed)) {
                assert_eq!(declared, found, "{name}: {chart}/{series}");
            }
        }
    }
}
