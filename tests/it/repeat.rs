//! `--repeat N` through the binary (issue 26 item 3): repetitions on the simulated
//! device, whose service-time distribution, and so the true mean latency, is known;
//! and `compare` of repeated results.
//!
//! Every run here is on virtual time (`time=virtual`), where a run with the same
//! seeds is the same run: repetition i draws from the sim's seed + i, so each
//! assertion is about one specific, reproducible draw and cannot flake. (A 95 %
//! interval misses the true mean in 5 % of draws by definition; the draws used here
//! are ones where it does not, which the first test checks by rerunning.)

use super::*;

use ioscope::result::repeats::Repeats;

/// A closed-loop QD 1 random-read run on `target`, repeated `n` times.
fn repeated(target: &str, duration: &str, n: &str, extra: &[&str]) -> Ran {
    let mut args = randread_args(
        target,
        "1",
        duration,
        &["--interval", "100ms", "--repeat", n],
    );
    args.extend_from_slice(extra);
    run_json(&args)
}

fn repeats(r: &Ran) -> &Repeats {
    r.run(0)
        .repeats
        .as_ref()
        .unwrap_or_else(|| panic!("no repeats in {}", r.wire_run(0)))
}

// Exponential service times with a mean of 100 µs: at QD 1 the true mean latency is
// 100 µs and the true IOPS 10,000.
const EXP_100US: &str = "sim:1g?service=100us&dist=exp&time=virtual";

#[test]
fn five_repetitions_cover_the_true_mean_latency() {
    let r = repeated(EXP_100US, "1s", "5", &[]);
    assert_eq!(r.doc.runs.len(), 1, "one entry per planned run");
    let run = r.run(0);
    let seeds: Vec<u64> = run.repetitions.iter().map(|x| x.seed).collect();
    assert_eq!(seeds, [1, 2, 3, 4, 5]);
    // Independent draws: no two repetitions measured the same mean.
    let means: Vec<f64> = run.repetitions.iter().map(|x| x.latency_us.mean).collect();
    for (i, a) in means.iter().enumerate() {
        assert!(!means[i + 1..].contains(a), "repeated draw: {means:?}");
    }
    // The entry's own totals are the last repetition's.
    assert_eq!(run.totals.all.ios, run.repetitions[4].ios);
    let rep = repeats(&r);
    assert_eq!(rep.n, 5);
    let lat = &rep.latency_us.mean;
    // This draw: [98.3, 102.3] µs.
    assert!(
        lat.ci95[0] < 100.0 && 100.0 < lat.ci95[1],
        "95% CI of mean latency {:?} misses the true 100 µs",
        lat.ci95
    );
    assert!(lat.stddev > 0.0 && lat.ci95[0] < lat.mean && lat.mean < lat.ci95[1]);
    assert!(
        rep.iops.ci95[0] < 10_000.0 && 10_000.0 < rep.iops.ci95[1],
        "{:?}",
        rep.iops
    );
    // The published wire form: {mean, stddev, cv, ci95: [low, high], unstable}.
    let wire = &r.wire_run(0)["repeats"]["latency_us"]["p99"];
    for key in ["mean", "stddev", "cv", "unstable"] {
        assert!(wire.get(key).is_some(), "{key} missing in {wire}");
    }
    assert_eq!(wire["ci95"].as_array().map(Vec::len), Some(2), "{wire}");
    // The same seeds draw the same repetitions again.
    let again = repeated(EXP_100US, "1s", "5", &[]);
    assert_eq!(again.run(0).repetitions, run.repetitions);
}

#[test]
fn a_stable_shape_reports_a_small_cv_in_every_output() {
    let d = tempdir();
    let html = d.path().join("r.html");
    let html_arg = html.to_str().unwrap();
    let r = repeated(EXP_100US, "2s", "3", &["--html", html_arg]);
    let rep = repeats(&r);
    for (name, f) in [("iops", &rep.iops), ("mean latency", &rep.latency_us.mean)] {
        // 20,000 draws per repetition: the repetitions agree within about 1 %.
        assert!(f.cv > 0.0 && f.cv < 0.02, "{name}: {f:?}");
        assert!(!f.unstable, "{name}: {f:?}");
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<h3>Repetitions</h3>"),
        "no repetitions table"
    );
    // Printed: one summary line per repetition, the last over all three.
    let out = ioscope()
        .args([
            "run",
            "--target",
            EXP_100US,
            "--duration",
            "500ms",
            "--repeat",
            "2",
        ])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(text.contains("repetition 2/2"), "{text}");
    let line = text
        .lines()
        .rfind(|l| l.starts_with("repeats: mean of 2 repetitions"))
        .unwrap_or_else(|| panic!("no repeats line in {text}"));
    assert!(line.contains("IOPS ") && line.contains("(CV "), "{line}");
    // Two repetitions of half a second: t(0.975, 1) = 12.7 makes every interval wide.
    assert!(line.contains("UNSTABLE"), "{line}");
}

#[test]
fn one_repetition_has_no_repeats_section() {
    let r = repeated(EXP_100US, "200ms", "1", &[]);
    assert!(r.wire_run(0).get("repeats").is_none());
    assert!(r.wire_run(0).get("repetitions").is_none());
}

/// The `compare` row of `metric` (its first cells), from compare's text table.
fn compare_row(a: &Path, b: &Path, metric: &str) -> String {
    let out = ioscope()
        .arg("compare")
        .args([a, b])
        .output()
        .expect("spawn ioscope compare");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Welch's t-test"), "{text}");
    text.lines()
        .find(|l| l.starts_with(metric))
        .unwrap_or_else(|| panic!("no {metric} row in {text}"))
        .to_string()
}

#[test]
fn compare_tells_20_percent_apart_and_not_1_percent() {
    let d = tempdir();
    // Short repetitions (2,000 draws each) on a noisy shape: each repetition's mean
    // latency varies by about 1.5 %, so 1 % is within what five repetitions resolve
    // and 20 % far outside it. Each side draws its own seeds.
    let side = |name: &str, service_us: u32, seed: u32| {
        let target = format!("sim:1g?service={service_us}us&dist=exp&time=virtual&seed={seed}");
        let json = d.path().join(name);
        let args = [
            "run",
            "--target",
            &target,
            "--rw",
            "randread",
            "--qd",
            "1",
            "--duration",
            "200ms",
            "--interval",
            "100ms",
            "--repeat",
            "5",
            "-q",
        ];
        ioscope_to(&json, args).expect_code(0);
        json
    };
    let base = side("base.json", 100, 700);
    let one_pct = side("one.json", 101, 707);
    let twenty_pct = side("twenty.json", 120, 840);
    for metric in ["IOPS", "mean latency µs", "p99 latency µs"] {
        let row = compare_row(&base, &one_pct, metric);
        assert!(row.contains("not distinguishable"), "{row}");
        assert!(row.contains("Welch p="), "{row}");
        let row = compare_row(&base, &twenty_pct, metric);
        assert!(row.contains("worse"), "{row}");
    }
    // Better the other way round: lower latency, higher IOPS.
    for metric in ["IOPS", "mean latency µs"] {
        let row = compare_row(&twenty_pct, &base, metric);
        assert!(row.contains("better"), "{row}");
    }
}
