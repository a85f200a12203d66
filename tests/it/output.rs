//! The result file and terminal output hold what the schema promises.

use super::*;

#[test]
fn result_json_has_the_binding_fields() {
    let d = tempdir();
    let json = d.path().join("r.json");
    let o = run(&[
        "run",
        "--target",
        "mem:32m",
        "--rw",
        "randrw",
        "--duration",
        "2s",
        "--warmup",
        "1s",
        "--interval",
        "500ms",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = read_json(&json);
    assert_eq!(r["schema"], "ioscope.result/1");
    assert!(r["tool"]["version"].is_string());
    let run = &r["runs"][0];
    for k in [
        "name",
        "target",
        "engine",
        "workload",
        "duration_s",
        "totals",
        "cpu",
        "intervals",
    ] {
        assert!(!run[k].is_null(), "missing {k}");
    }
    let t = &run["totals"];
    for k in ["ios", "bytes", "iops", "mbps", "errors"] {
        assert!(t[k].is_number(), "totals.{k}");
        assert!(t["read"][k].is_number(), "totals.read.{k}");
        assert!(t["write"][k].is_number(), "totals.write.{k}");
    }
    for k in [
        "min", "mean", "stddev", "max", "p50", "p90", "p95", "p99", "p99_9", "p99_99",
    ] {
        assert!(t["latency_us"][k].is_number(), "latency_us.{k}");
    }
    assert!(run["cpu"]["user_pct"].is_number() && run["cpu"]["sys_pct"].is_number());
    let ivs = run["intervals"].as_array().unwrap();
    assert_eq!(ivs.iter().filter(|i| i["warmup"] == true).count(), 2);
    assert!(ivs.iter().filter(|i| i["warmup"] == false).count() >= 4);
    for i in ivs {
        for k in ["t_s", "iops", "mbps", "read_pct"] {
            assert!(i[k].is_number(), "interval {k}");
        }
        for k in ["mean", "p99", "max"] {
            assert!(i["lat_us"][k].is_number());
        }
    }
    // Warm-up is excluded from the totals.
    let measured: u64 = ivs
        .iter()
        .filter(|i| i["warmup"] == false)
        .map(|i| i["ios"].as_u64().unwrap())
        .sum();
    assert_eq!(measured, t["ios"].as_u64().unwrap());
    let dur = run["duration_s"].as_f64().unwrap();
    assert!((dur - 2.0).abs() < 0.1, "duration {dur}");
    // The interval stream holds the same intervals.
    let jl = std::fs::read_to_string(d.path().join("r.json.intervals.jsonl")).unwrap();
    assert_eq!(jl.lines().count(), ivs.len());
    // The terminal marks warm-up intervals.
    assert!(stdout(&o).contains("1w"), "{}", stdout(&o));
    assert!(stdout(&o).contains("resp"), "vdbench-style header");
}

#[test]
fn ctrl_c_writes_what_was_measured() {
    let d = tempdir();
    let json = d.path().join("r.json");
    let mut child = ioscope()
        .args([
            "run",
            "--target",
            "mem:32m",
            "--duration",
            "60s",
            "-q",
            "--json",
        ])
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let r = read_json(&json);
    assert_eq!(r["interrupted"], true);
    assert_eq!(r["runs"][0]["interrupted"], true);
    assert!(r["runs"][0]["totals"]["ios"].as_u64().unwrap() > 0);
    assert!(r["runs"][0]["duration_s"].as_f64().unwrap() < 10.0);
}

#[test]
fn quick_on_a_directory_cleans_up() {
    let d = tempdir();
    let json = d.path().join("q.json");
    let o = run(&[
        "quick",
        d.path().to_str().unwrap(),
        "--duration",
        "1s",
        "--size",
        "64m",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = read_json(&json);
    let names: Vec<&str> = r["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["4k-randread", "4k-randwrite", "1m-seqread", "1m-seqwrite"]
    );
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("ioscope-quick"))
        .collect();
    assert!(left.is_empty(), "scratch file left behind");
    assert!(stdout(&o).contains("4k-randread"));
}

#[test]
fn rerun_repeats_the_recorded_plan() {
    let d = tempdir();
    let a = d.path().join("a.json");
    let b = d.path().join("b.json");
    let o = run(&[
        "run",
        "--target",
        "mem:16m",
        "--rw",
        "randrw",
        "--read-pct",
        "70",
        "--qd",
        "4",
        "--bs",
        "8k",
        "--duration",
        "500ms",
        "-q",
        "--json",
        a.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&[
        "rerun",
        a.to_str().unwrap(),
        "-q",
        "--json",
        b.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (ra, rb) = (read_json(&a), read_json(&b));
    assert_eq!(ra["plan"], rb["plan"]);
    assert_eq!(rb["runs"][0]["workload"]["read_pct"], 70);
    assert!(rb["runs"][0]["totals"]["ios"].as_u64().unwrap() > 0);
}
