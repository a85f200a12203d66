//! The incumbents' languages through the real binary: the shared real-world cases
//! run with only the target path (and sizes/durations) changed.

use super::*;

fn case(name: &str) -> String {
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/cases")
        .join(name);
    let local = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compat/cases")
        .join(name);
    std::fs::read_to_string(if shared.exists() { shared } else { local }).unwrap()
}

#[test]
fn vdbench_srp_case_gives_two_runs_of_14_and_16_streams() {
    let d = tempdir();
    let target = d.path().join("lun.dat");
    let parm = case("vdbench-ib-srp.parm")
        .replace(
            "lun=/dev/dm-39",
            &format!("lun={},size=32m", target.display()),
        )
        .replace("elapsed=30", "elapsed=2")
        .replace("interval=5", "interval=1");
    let pf = d.path().join("srp.parm");
    std::fs::write(&pf, parm).unwrap();
    let r = ioscope_to(
        &d.path().join("r.json"),
        ["vdbench", "-f", pf.to_str().unwrap()],
    )
    .expect_code(0);
    let streams: Vec<u64> = r.doc.runs.iter().map(|r| r.streams).collect();
    assert_eq!(streams, [14, 16]);
    for (i, run) in r.doc.runs.iter().enumerate() {
        assert_eq!(r.wire_run(i)["workload"]["qd"], 1);
        assert_eq!(r.wire_run(i)["workload"]["read_pct"], 100);
        assert!(run.totals.read.ios > 0, "{:?}", run.totals);
    }
    // The same file through `ioscope run` (format auto-detected).
    let o = run(&["run", pf.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn fio_500_jobs_case_runs_500_streams_at_qd1() {
    let d = tempdir();
    let target = d.path().join("test");
    let line = case("fio-xfs-500jobs.txt")
        .replace("/mnt/tom/fio/test", target.to_str().unwrap())
        .replace("-runtime=500", "-runtime=2 -time_based")
        .replace("-size=1000000000001", "-size=64m");
    let mut args: Vec<String> = vec!["fio".into()];
    args.extend(line.split_whitespace().skip(1).map(String::from));
    args.extend([
        "--fio-json".into(),
        d.path().join("f.json").to_str().unwrap().into(),
    ]);
    let r = ioscope_to(&d.path().join("r.json"), &args).expect_code(0);
    assert_eq!(r.doc.runs.len(), 1);
    let run0 = r.run(0);
    assert_eq!(run0.streams, 500);
    assert_eq!(r.wire_run(0)["workload"]["qd"], 1);
    assert_eq!(r.wire_run(0)["workload"]["bs"]["split"][0][0], 4096);
    assert_eq!(run0.engine, "uring");
    assert!(run0.workers <= 4, "workers {}", run0.workers);
    assert!(run0.totals.all.ios > 0);
}

/// fio-plot (louwrentius/fio-plot) reads these paths from fio's JSON output.
#[test]
fn fio_json_has_the_paths_fio_plot_reads() {
    let d = tempdir();
    let out = ioscope()
        .args([
            "fio",
            "--name=j",
            "--ioengine=io_uring",
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=4k",
            "--iodepth=4",
        ])
        .arg(format!("--filename={}", d.path().join("f.dat").display()))
        .args([
            "--size=16m",
            "--runtime=1",
            "--time_based",
            "--output-format=json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // stdout must be pure JSON.
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("pure JSON on stdout");
    assert!(v["fio version"].is_string());
    let job = &v["jobs"][0];
    assert_eq!(job["jobname"], "j");
    for k in ["rw", "bs", "iodepth", "numjobs"] {
        assert!(job["job options"][k].is_string(), "job options.{k}");
    }
    assert_eq!(job["job options"]["iodepth"], "4");
    for dir in ["read", "write"] {
        let d = &job[dir];
        assert!(d["iops"].as_f64().unwrap() > 0.0, "{dir}.iops");
        assert!(d["bw"].as_u64().unwrap() > 0, "{dir}.bw");
        assert!(d["io_bytes"].as_u64().unwrap() > 0);
        assert!(d["runtime"].as_u64().unwrap() >= 900);
        for lat in ["lat_ns", "clat_ns"] {
            assert!(d[lat]["mean"].as_f64().unwrap() > 0.0, "{dir}.{lat}.mean");
            assert!(d[lat]["stddev"].is_number());
            assert!(d[lat]["percentile"]["99.000000"].as_u64().unwrap() > 0);
        }
    }
    let read_iops = job["read"]["iops"].as_f64().unwrap();
    let write_iops = job["write"]["iops"].as_f64().unwrap();
    let share = read_iops / (read_iops + write_iops);
    assert!((share - 0.7).abs() < 0.05, "read share {share}");
    let buckets: f64 = ["latency_ns", "latency_us", "latency_ms"]
        .iter()
        .flat_map(|k| {
            job[*k]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_f64().unwrap())
        })
        .sum();
    assert!(
        (buckets - 100.0).abs() < 0.5,
        "latency buckets sum to {buckets}"
    );
    assert!(job["usr_cpu"].is_number() && job["sys_cpu"].is_number());
}

#[test]
fn unsupported_options_refuse_the_run_unless_ignored() {
    let d = tempdir();
    let f = d.path().join("f.dat");
    let args = |extra: &[&str]| {
        let mut v = vec![
            "sqlio".to_string(),
            "-kR".into(),
            "-s1".into(),
            "-o4".into(),
            "-b8".into(),
            "-frandom".into(),
            "-T50".into(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v.push(f.to_str().unwrap().to_string());
        v
    };
    std::fs::write(&f, vec![7u8; 8 << 20]).unwrap();
    let o = ioscope().args(args(&[])).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not supported"), "{}", stderr(&o));
    let r = ioscope_to(&d.path().join("r.json"), args(&["--ignore-unsupported"])).expect_code(0);
    assert!(
        r.doc.warnings.iter().any(|w| w.contains("unsupported")),
        "{:?}",
        r.doc.warnings
    );
    assert_eq!(r.wire_run(0)["workload"]["qd"], 4);
    assert_eq!(r.wire_run(0)["workload"]["bs"]["split"][0][0], 8192);
}

#[test]
fn windows_paths_suggest_target() {
    let o = run(&["diskspd", "-b8K", "-d1", "C:\\test.dat"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--target"), "{}", stderr(&o));
}

#[test]
fn convert_prints_toml_that_runs() {
    let d = tempdir();
    let f = format!("--filename={}", d.path().join("c.dat").display());
    let o = run(&[
        "convert",
        "fio",
        "--name=a",
        "--rw=randread",
        "--bs=8k",
        "--ioengine=io_uring",
        "--iodepth=2",
        &f,
        "--size=16m",
        "--runtime=1",
        "--time_based",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let toml = d.path().join("c.toml");
    std::fs::write(&toml, stdout(&o)).unwrap();
    let r = run_json(&["run", toml.to_str().unwrap()]);
    assert_eq!(r.wire_run(0)["workload"]["qd"], 2);
    assert_eq!(r.wire_run(0)["workload"]["bs"]["split"][0][0], 8192);
    // And as a fio job again.
    let o = run(&["convert", toml.to_str().unwrap(), "--to", "fio"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("iodepth=2"), "{}", stdout(&o));
}
