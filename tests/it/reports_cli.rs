//! The report commands through the binary: `ioscope compare` calls noise noise and a
//! real change a change (with the ratio pointing the right way), `ioscope report`
//! writes CSV and Markdown with the documented headers, and `compare --html` writes
//! one self-contained page.

use super::*;
use std::path::Path;

/// Runs a closed-loop sim job with `--interval 250ms` and writes its result to `json`.
fn sim_result(target: &str, qd: &str, json: &Path, extra: &[&str]) {
    let mut args = randread_args(target, qd, "3s", &["--interval", "250ms", "-q"]);
    args.extend_from_slice(extra);
    ioscope_to(json, &args).expect_code(0);
}

/// One metric row of `compare`'s text table: (ratio of the second side to the
/// baseline, verdict).
fn row(text: &str, label: &str) -> (f64, String) {
    let line = text
        .lines()
        .find(|l| l.starts_with(label) && l[label.len()..].starts_with("  "))
        .unwrap_or_else(|| panic!("no row {label:?} in\n{text}"));
    let cells: Vec<&str> = line[label.len()..].split_whitespace().collect();
    // baseline value, other value, ratio "1.23×", verdict (one or two words), threshold.
    let ratio: f64 = cells[2].trim_end_matches('×').parse().unwrap();
    let verdict = if line.contains("within noise") {
        "within noise"
    } else if cells[3] == "better" || cells[3] == "worse" {
        cells[3]
    } else {
        panic!("no verdict in {line:?}")
    };
    (ratio, verdict.to_string())
}

const METRICS: [&str; 7] = [
    "IOPS",
    "MB/s",
    "mean latency µs",
    "p50 latency µs",
    "p99 latency µs",
    "p99.9 latency µs",
    "CPU µs per I/O",
];

fn compare_text(a: &Path, b: &Path) -> String {
    let o = run(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn same_job_twice_is_within_noise() {
    let d = tempdir();
    let (a, b) = (d.path().join("a.json"), d.path().join("b.json"));
    // The same job twice, with other random draws: exponential service times from
    // another model seed, offsets from another run seed. On virtual time the only
    // difference between the two is that chance, which is what the noise rule is for.
    // (CPU per I/O is left out: on virtual time it means nothing.)
    for (seed, json) in [("1", &a), ("2", &b)] {
        let target = format!("sim:1g?service=100us&dist=exp&seed={seed}&time=virtual");
        sim_result(&target, "1", json, &["--seed", seed]);
    }
    let text = compare_text(&a, &b);
    let called: Vec<(&str, f64, String)> = METRICS[..6]
        .iter()
        .map(|m| {
            let (r, v) = row(&text, m);
            (*m, r, v)
        })
        .filter(|(_, _, v)| v != "within noise")
        .collect();
    assert!(called.is_empty(), "called different: {called:?}\n{text}");
}

#[test]
fn deeper_queue_is_more_iops_and_more_latency() {
    let d = tempdir();
    let (qd1, qd32) = (d.path().join("qd1.json"), d.path().join("qd32.json"));
    // 8 servers: QD 32 keeps all of them busy (8× the IOPS of QD 1) and queues the
    // rest, so each I/O waits 4 service times. (With as many servers as the queue
    // depth, latency would not change at all.)
    let target = "sim:1g?service=200us&servers=8&time=virtual";
    sim_result(target, "1", &qd1, &[]);
    sim_result(target, "32", &qd32, &[]);
    let text = compare_text(&qd1, &qd32);
    // The ratio column is the compared side over the baseline (labels are the paths).
    let ratio_col = format!("{}/{}", qd32.display(), qd1.display());
    assert!(text.contains(&ratio_col), "{text}");
    for m in ["IOPS", "MB/s"] {
        let (ratio, verdict) = row(&text, m);
        assert_eq!(verdict, "better", "{m}\n{text}");
        assert!((ratio - 8.0).abs() < 0.01, "{m}: {ratio}×\n{text}");
    }
    for m in ["mean latency µs", "p50 latency µs", "p99 latency µs"] {
        let (ratio, verdict) = row(&text, m);
        assert_eq!(verdict, "worse", "{m}\n{text}");
        assert!((ratio - 4.0).abs() < 0.01, "{m}: {ratio}×\n{text}");
    }
}

#[test]
fn report_writes_csv_markdown_and_compare_html() {
    let d = tempdir();
    let json = d.path().join("r.json");
    let r = ioscope_to(
        &json,
        [
            "run",
            "--target",
            "mem:16m",
            "--duration",
            "1s",
            "--interval",
            "250ms",
            "-q",
        ],
    )
    .expect_code(0);

    let csv = d.path().join("x.csv");
    let o = run(&[
        "report",
        json.to_str().unwrap(),
        "-o",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&csv).unwrap();
    // Runs table, one empty line, intervals table.
    let (runs, intervals) = text.split_once("\n\n").expect("two tables");
    let mut lines = runs.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("run,target,engine,workers,streams,duration_s,"),
        "{header}"
    );
    for col in [
        "iops",
        "mbps",
        "lat_p99_us",
        "lat_p99_9_us",
        "cpu_us_per_io",
    ] {
        assert!(header.split(',').any(|c| c == col), "no {col} in {header}");
    }
    assert_eq!(lines.count(), 1, "one run row");
    let ivs = r.run(0).intervals.len();
    let mut lines = intervals.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("run,index,t_s,duration_s,"));
    assert_eq!(lines.count(), ivs, "one row per interval");

    let md = d.path().join("x.md");
    let o = run(&["report", json.to_str().unwrap(), "-o", md.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.starts_with("**ioscope "), "{text}");
    assert!(
        text.contains("| run | IOPS | MB/s | mean µs | p50 µs | p99 µs | p99.9 µs | max µs |"),
        "{text}"
    );
    assert_eq!(text.lines().filter(|l| l.starts_with("| ")).count(), 2);

    let html = d.path().join("cmp.html");
    let o = run(&[
        "compare",
        json.to_str().unwrap(),
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.ends_with("</html>\n"));
    assert!(page.contains("default-src 'none'"), "no CSP");
    for bad in ["http://", "https://", "<script", "src=", "url(", "@import"] {
        assert!(!page.contains(bad), "compare HTML holds {bad:?}");
    }
    assert!(page.contains("within noise"));
}
