//! The incumbents' languages through the real binary: the shared real-world cases
//! run with only the target path (and sizes/durations) changed.

use super::*;

pub(super) fn case(name: &str) -> String {
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

/// The three TechEd SQLIO lines, `-BYRT` among them, run as written: only the file
/// (through `--target`) and the 1000 s duration are changed.
#[test]
fn teched_sqlio_lines_run_with_only_the_target_changed() {
    let d = tempdir();
    let f = d.path().join("t.dat");
    std::fs::write(&f, vec![7u8; 16 << 20]).unwrap();
    let lines: Vec<String> = case("teched-sqlio.txt")
        .lines()
        .filter(|l| l.starts_with("sqlio2.exe"))
        .map(|l| l.replace("-s1000", "-s1"))
        .collect();
    assert_eq!(lines.len(), 3);
    for (i, line) in lines.iter().enumerate() {
        let mut args: Vec<String> = vec!["sqlio".into()];
        args.extend(line.split_whitespace().skip(1).map(String::from));
        args.extend(["--target".into(), f.to_str().unwrap().into()]);
        let r = ioscope_to(&d.path().join(format!("r{i}.json")), &args).expect_code(0);
        let bs = if line.contains("-b32") { 32768 } else { 8192 };
        let qd = if line.contains("-o16") { 16 } else { 32 };
        assert_eq!(r.wire_run(0)["workload"]["bs"]["split"][0][0], bs, "{line}");
        assert_eq!(r.wire_run(0)["workload"]["qd"], qd, "{line}");
        assert!(r.run(0).totals.all.ios > 0, "{line}");
        let direct = r.wire["plan"]["targets"][0]["direct"].as_bool();
        assert_eq!(direct, Some(!line.contains("-BYRT")), "{line}");
        if line.contains("-BYRT") {
            assert!(
                r.doc.warnings.iter().any(|w| w.contains("-BYRT")),
                "{:?}",
                r.doc.warnings
            );
        }
    }
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

/// A TOML file as Python's tomllib reads it, as JSON; `None` when python3 with tomllib
/// (3.11+) is not available.
fn tomllib_load(path: &std::path::Path) -> Option<serde_json::Value> {
    let script = "import json,sys,tomllib\n\
                  print(json.dumps(tomllib.load(open(sys.argv[1], 'rb'))))";
    let o = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .ok()?;
    if !o.status.success() && stderr(&o).contains("No module named 'tomllib'") {
        return None;
    }
    assert!(
        o.status.success(),
        "tomllib refused {}: {}\n{}",
        path.display(),
        stderr(&o),
        std::fs::read_to_string(path).unwrap_or_default()
    );
    Some(serde_json::from_str(&stdout(&o)).expect("python printed JSON"))
}

/// The strings at `key` of each table in the array `array`.
fn names_in(doc: &serde_json::Value, array: &str, key: &str) -> Vec<String> {
    doc[array]
        .as_array()
        .unwrap_or_else(|| panic!("no [[{array}]] in {doc}"))
        .iter()
        .map(|t| t[key].as_str().expect("a string name").to_string())
        .collect()
}

// Regression: `convert --to toml` wrote names with Rust's `{:?}` escapes ("\u{1}"),
// which is not TOML; now the toml crate's encoder writes the document.
#[test]
fn convert_writes_valid_toml_for_any_job_name() {
    let d = tempdir();
    let target = d.path().join("n.dat");
    // Section names in a job file: quotes, backslashes, control characters, DEL,
    // non-ASCII, a tab, and TOML's own quoting sequences.
    let file_names = [
        "a\"q\\b",
        "ctl\u{1}\u{1b}\u{7f}",
        "é日本🙂",
        "tab\there",
        "'''x\"\"\"",
    ];
    let mut job = format!("[global]\nfilename={}\nsize=1m\n", target.display());
    for n in file_names {
        job.push_str(&format!("[{n}]\nrw=randread\n"));
    }
    let fio = d.path().join("names.fio");
    std::fs::write(&fio, job).unwrap();
    let mut cases: Vec<(Vec<String>, Vec<&str>)> = vec![(
        vec!["convert".into(), fio.to_str().unwrap().into()],
        file_names.to_vec(),
    )];
    // A command line can also carry newlines and carriage returns.
    let arg_name = "line1\nline2\r\\n";
    cases.push((
        vec![
            "convert".into(),
            "fio".into(),
            format!("--name={arg_name}"),
            format!("--filename={}", target.display()),
            "--size=1m".into(),
        ],
        vec![arg_name],
    ));
    for (i, (args, names)) in cases.iter().enumerate() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let first = d.path().join(format!("c{i}.toml"));
        std::fs::write(&first, stdout(&o)).unwrap();
        let Some(doc) = tomllib_load(&first) else {
            eprintln!("skipped: python3 with tomllib (3.11+) is not installed");
            return;
        };
        assert_eq!(names_in(&doc, "run", "name"), vec![names.join("+")]);
        let qualified: Vec<String> = names.iter().map(|n| format!("r0-{n}")).collect();
        assert_eq!(names_in(&doc, "workload", "name"), qualified);
        // Read back by ioscope's own job-file parser and written again: the same
        // plan, so the same document, except that workload names gain one more run
        // prefix.
        let o = run(&["convert", first.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let second = d.path().join(format!("c{i}-again.toml"));
        std::fs::write(&second, stdout(&o)).unwrap();
        let mut again = tomllib_load(&second).expect("python3 found above");
        let unprefix = |v: &mut serde_json::Value| {
            let n = v.as_str().unwrap().strip_prefix("r0-").unwrap().to_string();
            *v = n.into();
        };
        for w in again["workload"].as_array_mut().unwrap() {
            unprefix(&mut w["name"]);
        }
        for r in again["run"].as_array_mut().unwrap() {
            r["workloads"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .for_each(unprefix);
        }
        assert_eq!(again, doc);
    }
}

/// fio's clones of a pass-limited job each make the job's passes: `numjobs=4
/// size=512k bs=4k` is 512 I/Os in fio (fio 3.33 counted 512 for both of these), and
/// in ioscope, random and sequential alike.
#[test]
fn fio_clones_each_make_the_jobs_passes() {
    let d = tempdir();
    for rw in ["randread", "read"] {
        let job = d.path().join(format!("{rw}.fio"));
        std::fs::write(
            &job,
            format!(
                "[c]\nfilename={}\nsize=512k\nbs=4k\nrw={rw}\nnumjobs=4\n",
                d.path().join("f").display()
            ),
        )
        .unwrap();
        let ran = ioscope_to(
            &d.path().join(format!("{rw}.json")),
            ["fio", job.to_str().unwrap()],
        )
        .expect_code(0);
        assert_eq!(ran.doc.runs[0].totals.all.ios, 512, "{rw}");
    }
}

/// vdbench's `iorate=curve` on several runs (here one per `forthreads=` value): each
/// run measures its own curve, in order, and the result and the HTML report hold one
/// curve summary per run.
#[test]
fn vdbench_iorate_curve_in_several_runs_measures_a_curve_for_each() {
    let d = tempdir();
    let parm = d.path().join("curves.parm");
    std::fs::write(
        &parm,
        "sd=sd1,lun=sim:64m?service=100us&servers=4&time=virtual,size=64m\n\
         wd=wd1,sd=sd1,xfersize=4k,rdpct=100,seekpct=100\n\
         rd=rd1,wd=wd1,iorate=curve,curve=(25,75),forthreads=(2,8),elapsed=2,\
         interval=1,warmup=1\n",
    )
    .unwrap();
    let html = d.path().join("curves.html");
    let ran = ioscope_to(
        &d.path().join("run.json"),
        [
            "run",
            parm.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
    )
    .expect_code(0);
    assert_eq!(ran.wire["schema"], "ioscope.result/2");
    let curves = &ran.doc.curves;
    assert_eq!(curves.len(), 2, "one curve per run");
    let names: Vec<&str> = ran.doc.runs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names.len(), 6, "{names:?}");
    for (k, c) in curves.iter().enumerate() {
        let pcts: Vec<f64> = c.points.iter().map(|p| p.pct_of_max).collect();
        assert_eq!(pcts, [100.0, 25.0, 75.0], "curve {k}");
        let runs: Vec<usize> = c.points.iter().map(|p| p.run).collect();
        assert_eq!(
            runs,
            [3 * k, 3 * k + 1, 3 * k + 2],
            "curve {k} points at its own runs"
        );
        assert!(names[3 * k].ends_with(" max"), "{names:?}");
    }
    assert_ne!(
        names[0], names[3],
        "each curve's runs carry their run's name"
    );
    // Virtual time with 4 servers: 2 threads cannot fill them, 8 can.
    assert!(
        curves[1].max_iops > 1.5 * curves[0].max_iops,
        "{} vs {}",
        curves[0].max_iops,
        curves[1].max_iops
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("id=\"curve\"") && page.contains("id=\"curve-2\""));
    // convert keeps both curves: nothing dropped.
    let o = run(&["convert", parm.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).matches("curve_points = [25.0, 75.0]").count(), 2);
}

/// vdbench's `iorate=curve` with `curve=` and `stopcurve=` runs the curve inside
/// `ioscope run`, with the result laid out as `ioscope curve` lays it out (on a
/// virtual-time sim target, so both measure the same curve).
#[test]
fn vdbench_iorate_curve_runs_the_curve_in_run() {
    let d = tempdir();
    let parm = d.path().join("curve.parm");
    std::fs::write(
        &parm,
        "sd=sd1,lun=sim:64m?service=100us&servers=4&time=virtual,size=64m\n\
         wd=wd1,sd=sd1,xfersize=4k,rdpct=100,seekpct=100\n\
         rd=rd1,wd=wd1,iorate=curve,curve=(20,60,90),stopcurve=50,elapsed=2,\
         interval=1,warmup=1,threads=8\n",
    )
    .unwrap();
    let p = parm.to_str().unwrap();
    let ran = ioscope_to(&d.path().join("run.json"), ["run", p]).expect_code(0);
    let curved = ioscope_to(
        &d.path().join("curve.json"),
        [
            "curve",
            p,
            "--points",
            "20,60,90",
            "--stop-latency",
            "mean=50ms",
        ],
    )
    .expect_code(0);
    let names = |r: &Ran| {
        r.doc
            .runs
            .iter()
            .map(|x| x.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&ran), ["max", "20%", "60%", "90%"]);
    assert_eq!(names(&ran), names(&curved));
    let (a, b) = (
        ran.doc.curves.first().expect("run wrote a curve"),
        curved.doc.curves.first().expect("curve wrote a curve"),
    );
    let pcts =
        |c: &ioscope::result::Curve| c.points.iter().map(|p| p.pct_of_max).collect::<Vec<_>>();
    assert_eq!(pcts(a), [100.0, 20.0, 60.0, 90.0]);
    assert_eq!(pcts(a), pcts(b));
    // Virtual time, no host noise: 40 000 IOPS from both here.
    assert!(
        (a.max_iops - b.max_iops).abs() <= 0.01 * b.max_iops,
        "{} vs {}",
        a.max_iops,
        b.max_iops
    );
    // The plan in the result says where the curve came from.
    assert_eq!(
        ran.wire["plan"]["runs"][0]["curve"]["origin"],
        "vdbench iorate=curve"
    );
    // The native job file carries the curve; it reads back into the same plan.
    let o = run(&["convert", p]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let toml = d.path().join("curve.toml");
    std::fs::write(&toml, stdout(&o)).unwrap();
    let o = run(&["convert", toml.to_str().unwrap(), "--to", "toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("curve_points = [20.0, 60.0, 90.0]")
            && stdout(&o).contains("curve_stop_latency = \"mean=50000us\""),
        "{}",
        stdout(&o)
    );
    // fio output cannot write a curve: it says how to run it and exits 3.
    let on_file = d.path().join("file.parm");
    let text = std::fs::read_to_string(&parm).unwrap().replace(
        "sim:64m?service=100us&servers=4&time=virtual",
        d.path().join("x.dat").to_str().unwrap(),
    );
    std::fs::write(&on_file, text).unwrap();
    let o = run(&["convert", on_file.to_str().unwrap(), "--to", "fio"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--points 20,60,90 --stop-latency mean=50000us"),
        "{}",
        stderr(&o)
    );
}

/// fio's `latency_target` becomes ioscope's SLA search: `ioscope run` on the fio job
/// finds the same rate as `ioscope curve --max-latency` on the job without it (on a
/// virtual-time sim target, within 5 %).
#[test]
fn fio_latency_target_matches_curve_max_latency() {
    let d = tempdir();
    let job = |extra: &str| {
        format!(
            "[global]\nfilename=sim\\:64m?service=100us&servers=4&time=virtual\nsize=64m\n\
             rw=randread\nbs=4k\niodepth=8\nnumjobs=4\nioengine=io_uring\n\
             [device]\nruntime=2\ntime_based\n{extra}"
        )
    };
    let with = d.path().join("lt.fio");
    std::fs::write(&with, job("latency_target=400\nlatency_percentile=99\n")).unwrap();
    let without = d.path().join("plain.fio");
    std::fs::write(&without, job("")).unwrap();
    let ran = ioscope_to(
        &d.path().join("run.json"),
        ["run", with.to_str().unwrap(), "--engine", "sim"],
    )
    .expect_code(0);
    let curved = ioscope_to(
        &d.path().join("curve.json"),
        [
            "curve",
            without.to_str().unwrap(),
            "--engine",
            "sim",
            "--max-latency",
            "p99=400us",
        ],
    )
    .expect_code(0);
    let sla = |r: &Ran| {
        r.doc
            .curves
            .first()
            .and_then(|c| c.sla.clone())
            .expect("an SLA search in the result")
    };
    let (a, b) = (sla(&ran), sla(&curved));
    assert_eq!(a.percentile, "p99");
    assert!((a.bound_us - 400.0).abs() < 1e-9, "{}", a.bound_us);
    assert!(b.iops > 0.0, "{b:?}");
    // Virtual time, no host noise: 39 375 IOPS from both here.
    assert!(
        (a.iops - b.iops).abs() <= 0.05 * b.iops,
        "latency_target found {} IOPS, curve --max-latency {}",
        a.iops,
        b.iops
    );
    assert_eq!(
        ran.wire["plan"]["runs"][0]["curve"]["origin"],
        "fio latency_target"
    );
}

/// A latency_target job beside plain groups: the plain runs run in their place and
/// the SLA search is measured for its group only, in one result.
#[test]
fn fio_latency_target_beside_other_groups_searches_its_own_group() {
    let d = tempdir();
    let job = d.path().join("mixed.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=sim\\:64m?service=100us&servers=4&time=virtual\nsize=64m\n\
         rw=randread\nbs=4k\nioengine=io_uring\nruntime=1\ntime_based\n\
         [before]\niodepth=2\n\
         [device]\nstonewall\niodepth=8\nnumjobs=4\nlatency_target=400\nlatency_percentile=99\n\
         [after]\nstonewall\niodepth=1\n",
    )
    .unwrap();
    let ran = ioscope_to(
        &d.path().join("r.json"),
        ["run", job.to_str().unwrap(), "--engine", "sim"],
    )
    .expect_code(0);
    let names: Vec<&str> = ran.doc.runs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names.first(), Some(&"before"), "{names:?}");
    assert_eq!(names.last(), Some(&"after"), "{names:?}");
    let c = ran.doc.curves.first().expect("the curve summary");
    let sla = c.sla.as_ref().expect("an SLA search");
    assert!(sla.iops > 0.0, "{sla:?}");
    // The curve's runs (its max run and probes) lie between the two plain runs.
    let max_run = c.points[0].run;
    assert!(
        max_run >= 1
            && sla
                .probes
                .iter()
                .all(|&p| p > max_run && p < names.len() - 1)
    );
    // Two latency_target groups: each searches its own group, in its place, and
    // the result holds a curve (with its SLA answer) for each.
    std::fs::write(
        &job,
        "[global]\nfilename=sim\\:64m?service=100us&servers=4&time=virtual\nsize=64m\n\
         runtime=1\ntime_based\nlatency_target=400\n[a]\n[b]\nstonewall\n",
    )
    .unwrap();
    let two = ioscope_to(
        &d.path().join("two.json"),
        ["run", job.to_str().unwrap(), "--engine", "sim"],
    )
    .expect_code(0);
    assert_eq!(two.doc.curves.len(), 2);
    for (c, group) in two.doc.curves.iter().zip(["a", "b"]) {
        let sla = c.sla.as_ref().expect("an SLA answer per group");
        assert_eq!(sla.bound_us, 400.0);
        let runs = c
            .points
            .iter()
            .map(|p| p.run)
            .chain(sla.probes.iter().copied());
        for r in runs {
            let name = &two.doc.runs[r].name;
            assert!(
                name.starts_with(&format!("{group} ")),
                "{name} in {group}'s curve"
            );
        }
    }
}

/// `write_bw_log`/`write_lat_log`/`write_iops_log` with `log_avg_msec` write fio's
/// averaged log files (time_ms, value, direction, bs, offset) from the intervals,
/// in the working directory as fio does.
#[test]
fn fio_logs_are_written_in_fio_format() {
    let d = tempdir();
    let job = d.path().join("logs.fio");
    std::fs::write(
        &job,
        "[mix]\nfilename=mem\\:16m\nsize=16m\nrw=randrw\nrwmixread=70\nbs=8k\n\
         runtime=2\ntime_based\nlog_avg_msec=500\nwrite_bw_log=x\nwrite_lat_log=x\n\
         write_iops_log=x\n",
    )
    .unwrap();
    let o = ioscope()
        .current_dir(d.path())
        .args(["run", "logs.fio", "--engine", "mem", "--json", "r.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = read_json(&d.path().join("r.json"));
    let ends_ms: Vec<u64> = r["runs"][0]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|iv| (iv["t_s"].as_f64().unwrap() * 1000.0).round() as u64)
        .collect();
    for kind in ["bw", "lat", "iops"] {
        let text = std::fs::read_to_string(d.path().join(format!("x_{kind}.1.log")))
            .unwrap_or_else(|e| panic!("x_{kind}.1.log: {e}"));
        let rows: Vec<Vec<u64>> = text
            .lines()
            .map(|l| {
                l.split(", ")
                    .map(|c| c.parse().unwrap_or_else(|_| panic!("'{l}' in x_{kind}")))
                    .collect()
            })
            .collect();
        // 2 s at 500 ms: four intervals, a read and a write line each.
        assert_eq!(rows.len(), 8, "x_{kind}:\n{text}");
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(r.len(), 5, "x_{kind}: {r:?}");
            // The time is the interval's end as the run measured it, exactly; that
            // is its boundary or a little after (a worker notices a boundary when
            // the scheduler lets it: 0-25 ms late here beside a CPU hog, 126 and
            // 333 ms once each in 30 runs), and before the next one.
            assert_eq!(r[0], ends_ms[i / 2], "x_{kind} time: {r:?}");
            let want_ms = 500 * (i as u64 / 2 + 1);
            assert!(
                (want_ms..want_ms + 500).contains(&r[0]),
                "x_{kind} time: {r:?}"
            );
            assert_eq!(r[2], i as u64 % 2, "x_{kind} direction: {r:?}");
            assert_eq!((r[3], r[4]), (8192, 0), "x_{kind}: {r:?}");
            assert!(r[1] > 0, "x_{kind}: {r:?}");
        }
    }
}

/// fio's per-job logs in a group of several jobs: each job's files carry its own
/// figures (its share of each interval), numbered as fio numbers its jobs — clones
/// (numjobs) count — and the run's JSON has each workload's share per interval.
#[test]
fn fio_per_job_logs_in_one_group_carry_each_jobs_own_figures() {
    let d = tempdir();
    std::fs::write(
        d.path().join("two.fio"),
        "[global]\nfilename=mem\\:16m\nsize=16m\nruntime=3\ntime_based\nlog_avg_msec=500\n\
         [r]\nrw=randread\nrate_iops=200\nnumjobs=2\nwrite_iops_log=r\n\
         [w]\nrw=randwrite\nbs=8k\nrate_iops=500\nwrite_iops_log=w\nwrite_bw_log=w\n",
    )
    .unwrap();
    let o = ioscope()
        .current_dir(d.path())
        .args(["run", "two.fio", "--engine", "mem", "--json", "r.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = |name: &str| -> Vec<Vec<u64>> {
        let text =
            std::fs::read_to_string(d.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        text.lines()
            .map(|l| l.split(", ").map(|c| c.parse().unwrap()).collect())
            .collect()
    };
    // r's two clones are jobs 1 and 2 (one set of logs, the first clone's number);
    // w is job 3. Each file holds only its job's direction and rate.
    let (r, w, wbw) = (
        rows("r_iops.1.log"),
        rows("w_iops.3.log"),
        rows("w_bw.3.log"),
    );
    assert!(!d.path().join("r_iops.2.log").exists());
    for (name, rows, dir, want, bs) in [
        ("r_iops", &r, 0, 400.0, 4096),
        ("w_iops", &w, 1, 500.0, 8192),
        ("w_bw", &wbw, 1, 500.0 * 8.0, 8192),
    ] {
        assert!(rows.len() >= 5, "{name}: {rows:?}");
        for row in rows.iter() {
            assert_eq!((row[2], row[3]), (dir, bs), "{name}: {row:?}");
        }
        // Paced rates: the middle samples within 5% of the job's own rate.
        for row in &rows[1..rows.len() - 1] {
            let got = row[1] as f64;
            assert!(
                (got / want - 1.0).abs() < 0.05,
                "{name}: {row:?}, want {want}"
            );
        }
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("r.json")).unwrap()).unwrap();
    let ivs = doc["runs"][0]["intervals"].as_array().unwrap();
    let shares = ivs[2]["workloads"].as_array().expect("per-workload shares");
    assert_eq!(shares.len(), 2);
    assert_eq!(shares[0]["read_pct"], 100.0);
    assert_eq!(shares[1]["read_pct"], 0.0);
    let sum: u64 = shares.iter().map(|s| s["ios"].as_u64().unwrap()).sum();
    assert_eq!(sum, ivs[2]["ios"].as_u64().unwrap());
}

#[test]
fn vdbench_host_definitions_without_mpirun_are_refused_before_anything_is_created() {
    let d = tempdir();
    let parm = format!(
        "hd=default,vdbench=/opt/vdbench,user=root,shell=ssh\n\
         hd=h1,system=node-a\n\
         hd=h2,system=node-b\n\
         sd=sd1,host=h1,lun={p}/a.dat,size=4m\n\
         sd=sd2,host=h2,lun={p}/b.dat,size=4m\n\
         wd=wd1,sd=sd*\n\
         rd=rd1,wd=wd1,elapsed=2,interval=1\n",
        p = d.path().display()
    );
    let pf = d.path().join("hosts.parm");
    std::fs::write(&pf, parm).unwrap();
    let o = run(&["vdbench", "-f", pf.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("the plan defines 2 hosts (hd=h1, hd=h2): run it under mpirun"),
        "{err}"
    );
    assert!(!d.path().join("a.dat").exists() && !d.path().join("b.dat").exists());
    // One host definition is this host: it runs here.
    let one = std::fs::read_to_string(&pf)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("hd=h2") && !l.starts_with("sd=sd2"))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&pf, one).unwrap();
    let o = run(&["vdbench", "-f", pf.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// `ioscope run JOB --engine sim`, which must succeed, into a fresh result.
#[track_caller]
fn run_on_sim(job: &std::path::Path) -> Ran {
    ioscope_result(["run", job.to_str().unwrap(), "--engine", "sim", "-q"]).expect_code(0)
}

/// Issue 17's two-job group: a `rate_iops=2000` random reader at QD 4 beside a
/// saturating 64k sequential writer at QD 16, in one run. Each keeps its own rate,
/// block size and depth, and the result's `workloads[]` shows each one's settings
/// and figures.
#[test]
fn fio_jobs_in_one_group_keep_their_own_settings() {
    let d = tempdir();
    let job = d.path().join("two.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=sim\\:64m?service=100us&servers=4&time=virtual\nsize=64m\n\
         ioengine=io_uring\nruntime=2\ntime_based\n\
         [reader]\nrw=randread\nbs=4k\niodepth=4\nrate_iops=2000\n\
         [writer]\nrw=write\nbs=64k\niodepth=16\n",
    )
    .unwrap();
    let ran = run_on_sim(&job);
    let run = ran.run(0);
    assert_eq!(run.workloads.len(), 2, "{:?}", run.workloads);
    let (r, w) = (&run.workloads[0], &run.workloads[1]);
    let (rs, ws) = (r.settings.as_ref().unwrap(), w.settings.as_ref().unwrap());
    assert_eq!(
        (rs.bs.split.clone(), rs.qd, rs.read_pct),
        (vec![(4096, 100)], 4, 100)
    );
    assert_eq!(
        (ws.bs.split.clone(), ws.qd, ws.read_pct),
        (vec![(65536, 100)], 16, 0)
    );
    assert_eq!(rs.rate, ioscope::result::workload::Rate::Iops(2000.0));
    assert_eq!(ws.rate, ioscope::result::workload::Rate::Max);
    let r_iops = r.totals.all.iops;
    // Virtual time, no host noise: 2000 IOPS exactly here.
    assert!(
        (r_iops - 2000.0).abs() <= 0.01 * 2000.0,
        "the rate-limited reader ran at {r_iops} IOPS"
    );
    assert_eq!(r.totals.write.ios, 0);
    assert_eq!(w.totals.read.ios, 0);
    assert_eq!(r.totals.all.bytes, r.totals.all.ios * 4096);
    assert_eq!(w.totals.all.bytes, w.totals.all.ios * 65536);
    // The writer saturates what the reader leaves: 4 servers of 100 µs minus 2000/s.
    assert!(
        w.totals.all.iops > 10.0 * r_iops,
        "writer {} IOPS",
        w.totals.all.iops
    );
    assert!(
        (w.totals.queue_depth - 16.0).abs() < 1.0 && (r.totals.queue_depth) < 4.0,
        "reader QD {}, writer QD {}",
        r.totals.queue_depth,
        w.totals.queue_depth
    );
}

/// fio's `startdelay` holds a job back from the run's start (the run lasting until
/// the last job's own runtime is over), and `thinktime` idles each stream after
/// every batch once it has completed.
#[test]
fn fio_startdelay_and_thinktime_pace_their_own_job() {
    let d = tempdir();
    let job = d.path().join("pauses.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=sim\\:64m?service=100us&servers=8&time=virtual\nsize=64m\n\
         ioengine=io_uring\nruntime=4\ntime_based\nrw=randread\nbs=4k\n\
         [now]\n\
         [late]\nstartdelay=2\n\
         [thinker]\nthinktime=900\niodepth=4\nthinktime_blocks=4\n",
    )
    .unwrap();
    let ran = run_on_sim(&job);
    let run = ran.run(0);
    let ios = |i: usize| run.workloads[i].totals.all.ios as f64;
    // As in fio, the late job runs its full 4 s after its 2 s delay: the run lasts
    // 6 s, and the others stop issuing at 4 s.
    assert!(
        (run.duration_s - 6.0).abs() < 0.05,
        "ran {} s",
        run.duration_s
    );
    // QD 1 on a 100 µs device: 10 000 IOPS over each job's own 4 s (exactly here:
    // virtual time has no host noise).
    for i in [0, 1] {
        assert!(
            (ios(i) - 40_000.0).abs() <= 0.01 * 40_000.0,
            "job {i} did {} I/Os",
            ios(i)
        );
        let iops = run.workloads[i].totals.all.iops;
        assert!((iops - 10_000.0).abs() <= 100.0, "job {i} at {iops} IOPS");
    }
    assert_eq!(
        run.workloads[0].settings.as_ref().unwrap().pauses.stop_ns,
        4_000_000_000
    );
    assert_eq!(
        run.workloads[1].settings.as_ref().unwrap().pauses.stop_ns,
        0
    );
    // Batches of 4 at QD 4: 100 µs of service, then 900 µs of think → 4 per ms.
    let think_iops = run.workloads[2].totals.all.iops;
    assert!(
        (think_iops - 4000.0).abs() <= 0.05 * 4000.0,
        "thinking job ran at {think_iops} IOPS"
    );
    let s = run.workloads[2].settings.as_ref().unwrap();
    assert_eq!((s.pauses.think_ns, s.pauses.think_every_ios), (900_000, 4));
    assert_eq!(
        run.workloads[1]
            .settings
            .as_ref()
            .unwrap()
            .pauses
            .start_delay_ns,
        2_000_000_000
    );
}

/// fio's `steadystate` ends the run once the run's total holds the criterion over
/// the window (after the ramp), with fio's rule named in the result; a drifting
/// device never holds it and the run goes its full time.
#[test]
fn fio_steadystate_stops_the_run_by_fios_rule() {
    let d = tempdir();
    let job = |service: &str, ss: &str, runtime: u32| {
        format!(
            "[global]\nfilename=sim\\:64m?service={service}&servers=4&time=virtual\n\
             size=64m\nioengine=io_uring\niodepth=8\nrw=randread\nruntime={runtime}\n\
             time_based\n[steady]\nss={ss}\nss_dur=3s\nss_ramp=1s\n"
        )
    };
    let steady = d.path().join("steady.fio");
    std::fs::write(&steady, job("100us", "iops:5%", 30)).unwrap();
    let ran = run_on_sim(&steady);
    let run = ran.run(0);
    assert_eq!(run.end_reason.name(), "steady_state");
    let st = run
        .steady_stop
        .as_ref()
        .expect("a steady-state stop in the result");
    assert_eq!(
        (st.rule.as_str(), st.criterion.as_str()),
        ("fio steadystate", "iops:5%")
    );
    assert_eq!((st.window_s, st.ramp_s, st.window_samples), (3.0, 1.0, 3));
    assert!(st.reached && st.reached_at_s == Some(4.0), "{st:?}");
    // The collector holds the virtual clock at each boundary until it has judged the
    // interval, so the workers stop at their next event, not whenever it catches up.
    assert!(
        (run.duration_s - 4.0).abs() < 0.005,
        "ran {} s",
        run.duration_s
    );
    assert!(st.value.unwrap().abs() <= 5.0, "{st:?}");

    let drifting = d.path().join("drift.fio");
    std::fs::write(&drifting, job("100us&drift=30", "iops_slope:1%", 6)).unwrap();
    let ran = run_on_sim(&drifting);
    let run = ran.run(0);
    assert_eq!(run.end_reason.name(), "duration");
    let st = run.steady_stop.as_ref().unwrap();
    assert!(!st.reached && st.reached_at_s.is_none(), "{st:?}");
    assert!(st.value.unwrap().abs() > 1.0, "{st:?}");
    // Virtual time: 6 s exactly here.
    assert!(
        (run.duration_s - 6.0).abs() < 0.1,
        "ran {} s",
        run.duration_s
    );
}

/// fio's offset modifier `rw=write:4k` leaves a 4 KiB hole after every 4 KiB block:
/// on a zeroed file one pass writes the even blocks (twice over, wrapping at the end,
/// as fio does) and never touches the odd ones.
#[test]
fn fio_offset_modifier_leaves_holes_in_the_file() {
    let d = tempdir();
    let data = d.path().join("holes.dat");
    std::fs::write(&data, vec![0u8; 64 << 10]).unwrap();
    let job = d.path().join("holes.fio");
    std::fs::write(
        &job,
        format!(
            "[holes]\nfilename={}\nsize=64k\nbs=4k\nrw=write:4k\nioengine=psync\n",
            data.display()
        ),
    )
    .unwrap();
    let o = ioscope()
        .args(["run", job.to_str().unwrap(), "-q"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let bytes = std::fs::read(&data).unwrap();
    for (i, block) in bytes.chunks(4096).enumerate() {
        let written = block.iter().any(|&b| b != 0);
        assert_eq!(written, i % 2 == 0, "block {i} written: {written}");
    }
}

/// fio's flow control (flow.fio's shape): a writer of weight 1 and a reader of
/// weight 8 in one flow group issue I/Os 1:8 on a target that would give them the
/// same share; and jobs that end on passes leave their group, so the one left is not
/// held for ever.
#[test]
fn fio_flow_holds_jobs_to_the_ratio_of_their_weights() {
    let d = tempdir();
    let job = d.path().join("flow.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=sim\\:64m?service=50us&servers=8&time=virtual\nsize=16m\nbs=4k\n\
         ioengine=io_uring\niodepth=4\nruntime=1\ntime_based\nflow_sleep=20\n\
         [job2]\nrw=write\nflow=1\n[job1]\nrw=randread\nflow=8\n",
    )
    .unwrap();
    let ran = run_on_sim(&job);
    let run = ran.run(0);
    let (w, r) = (&run.workloads[0], &run.workloads[1]);
    let ratio = r.totals.all.ios as f64 / w.totals.all.ios as f64;
    assert!(
        (ratio - 8.0).abs() < 0.16,
        "reads {} / writes {} = {ratio}",
        r.totals.all.ios,
        w.totals.all.ios
    );
    // Pass-limited: each job does its one pass and the run ends.
    let passes = d.path().join("passes.fio");
    std::fs::write(
        &passes,
        "[global]\nsize=4m\nbs=4k\nioengine=io_uring\niodepth=4\n\
         [w]\nfilename=sim\\:4m?service=50us&time=virtual\nrw=write\nflow=1\n\
         [r]\nfilename=sim\\:4m?service=50us&time=virtual\nrw=read\nflow=8\n",
    )
    .unwrap();
    let ran = run_on_sim(&passes);
    for w in &ran.run(0).workloads {
        assert_eq!(w.totals.all.bytes, 4 << 20, "{}", w.name);
    }
}

/// fio's `exitall`: the run ends when the first job carrying it ends (a 1 s job
/// beside a 5 s one), and `exit_what=all` leaves the later groups out.
#[test]
fn fio_exitall_ends_the_run_with_the_first_job() {
    let d = tempdir();
    let job = d.path().join("exitall.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=sim\\:64m?service=100us&servers=4&time=virtual\nsize=64m\n\
         ioengine=io_uring\niodepth=4\ntime_based\n\
         [short]\nrw=randread\nruntime=1\nexitall\nexit_what=all\n\
         [long]\nrw=randwrite\nruntime=5\n\
         [later]\nstonewall\nrw=read\nruntime=1\n",
    )
    .unwrap();
    let ran = run_on_sim(&job);
    assert_eq!(
        ran.doc.runs.len(),
        1,
        "exit_what=all leaves the later run out"
    );
    let run = ran.run(0);
    // Virtual time: 1 s exactly here.
    assert!(
        (run.duration_s - 1.0).abs() < 0.05,
        "the run lasted {} s",
        run.duration_s
    );
    assert!(run.workloads.iter().all(|w| w.totals.all.ios > 0));
    // Jobs that end on their I/O amounts: the run stops when the 1 MiB reader with
    // exitall is done, long before the 64 MiB writer beside it.
    let passes = d.path().join("passes.fio");
    std::fs::write(
        &passes,
        "[global]\nfilename=sim\\:64m?service=100us&servers=4&time=virtual\n\
         ioengine=io_uring\niodepth=4\n\
         [small]\nrw=read\nsize=1m\nexitall\n[big]\nrw=write\nsize=64m\n",
    )
    .unwrap();
    let ran = run_on_sim(&passes);
    let (small, big) = (&ran.run(0).workloads[0], &ran.run(0).workloads[1]);
    assert_eq!(small.totals.all.bytes, 1 << 20);
    assert!(
        big.totals.all.bytes > 0 && big.totals.all.bytes < 8 << 20,
        "the writer went on to {} bytes",
        big.totals.all.bytes
    );
}

/// fio's `number_ios` that is not a whole number of passes: each clone stops after
/// exactly N I/Os, whatever its queue depth, in a pass-limited job and beside a
/// time-based one (which then runs on alone until its runtime).
#[test]
fn fio_number_ios_stops_each_clone_after_exactly_n_ios() {
    let d = tempdir();
    let job = d.path().join("number-ios.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=sim\\:64m?service=50us&servers=4&time=virtual\nsize=64m\n\
         bs=4k\nioengine=io_uring\niodepth=8\n\
         [counted]\nrw=randread\nnumjobs=3\nnumber_ios=1001\n\
         [timed]\nstonewall\nrw=randwrite\nruntime=2\ntime_based\nnumber_ios=777\n",
    )
    .unwrap();
    let ran = run_on_sim(&job);
    assert_eq!(ran.run(0).totals.all.ios, 3 * 1001);
    let timed = ran.run(1);
    assert_eq!(timed.totals.all.ios, 777);
    // Virtual time: 9.75 ms here, against its 2 s runtime.
    assert!(
        timed.duration_s < 2.0,
        "ended on its count: {}",
        timed.duration_s
    );
    assert_eq!(
        ran.wire_run(1)["workload"]["pauses"]["stop_after_ios"],
        777,
        "the limit is echoed in the result"
    );
}

/// fio's `verify_pattern` with `verify_interval` (surface-scan.fio's shape): the file
/// holds the pattern after each 512-byte unit's header, the verify phase checks every
/// unit, and a byte of the pattern changed on disk is caught as corruption.
#[test]
fn fio_verify_pattern_is_written_and_a_changed_byte_is_caught() {
    let d = tempdir();
    let f = d.path().join("datafile.tmp");
    let journal = d.path().join("journal");
    let global = format!(
        "[global]\nbs=64k\nsize=1m\nioengine=sync\nverify=meta\nverify_pattern=0xaa555aa5\n\
         verify_interval=512\nfilename={}\n",
        f.display()
    );
    let read_phase = "[verify-phase]\nrw=read\ndo_verify=1\n";
    let both = d.path().join("scan.fio");
    std::fs::write(
        &both,
        format!("{global}[write-phase]\nrw=write\ndo_verify=0\n{read_phase}stonewall\n"),
    )
    .unwrap();
    let j = journal.to_str().unwrap();
    let ran = ioscope_result(["run", both.to_str().unwrap(), "--journal", j, "-q"]).expect_code(0);
    let v = ran.run(1).verify.as_ref().expect("the verify phase checks");
    assert_eq!((v.mismatches, v.ok % 2048, v.ok > 0), (0, 0, true), "{v:?}");
    assert!(
        ran.wire["plan"]
            .to_string()
            .contains("\"pattern\":\"0xaa555aa5\""),
        "the result's plan carries the pattern"
    );
    let mut bytes = std::fs::read(&f).unwrap();
    assert_eq!(bytes.len(), 1 << 20);
    let pattern = [0xaa, 0x55, 0x5a, 0xa5];
    for (u, unit) in bytes.chunks(512).enumerate() {
        assert_eq!(&unit[..4], b"IOsc", "unit {u} has its header");
        for (i, b) in unit.iter().enumerate().skip(32) {
            assert_eq!(*b, pattern[i % 4], "unit {u} byte {i}");
        }
    }
    // One byte of the pattern changed on disk: the next check finds that unit.
    bytes[700 * 512 + 100] ^= 0x01;
    std::fs::write(&f, &bytes).unwrap();
    let again = d.path().join("again.fio");
    std::fs::write(&again, format!("{global}{read_phase}")).unwrap();
    let ran = ioscope_result(["run", again.to_str().unwrap(), "--journal", j, "-q"]);
    let v = ran.run(0).verify.as_ref().expect("checked");
    assert!(v.corrupted > 0 && v.mismatches == v.corrupted, "{v:?}");
    assert!(
        v.samples.iter().all(|s| s.offset == 700 * 512),
        "{:?}",
        v.samples
    );
}

/// fio's dedupe-global.fio on two 8 MiB files: duplicates come from a working set
/// of half a file shared by both jobs, so the two files together dedupe about 2:1
/// (fio's own tool: 25747 distinct of 51200) while each alone dedupes less, and
/// most of one file's duplicates are found in the other.
#[test]
fn fio_dedupe_working_set_is_shared_between_jobs() {
    let d = tempdir();
    let job = d.path().join("dedupe.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\ndirectory={}\nsize=8m\nbs=4k\nrw=write\ndedupe_mode=working_set\n\
             dedupe_global=1\ndedupe_percentage=50\ndedupe_working_set_percentage=50\n\
             [a]\n[b]\n",
            d.path().display()
        ),
    )
    .unwrap();
    let o = run(&["convert", job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "nothing dropped: {}", stderr(&o));
    ioscope_result(["run", job.to_str().unwrap(), "-q"]).expect_code(0);
    let files: Vec<Vec<u8>> = ["a.0.0", "b.0.0"]
        .iter()
        .map(|f| std::fs::read(d.path().join(f)).unwrap())
        .collect();
    let distinct = |bufs: &[&Vec<u8>]| {
        let set: std::collections::HashSet<&[u8]> =
            bufs.iter().flat_map(|b| b.chunks(4096)).collect();
        set.len()
    };
    let (a, b) = (distinct(&[&files[0]]), distinct(&[&files[1]]));
    let both = distinct(&[&files[0], &files[1]]);
    eprintln!("distinct 4k units: a {a}, b {b} of 2048 each; both {both} of 4096");
    // 2048 units per file, 4096 in all.
    assert!(
        (1900..2250).contains(&both),
        "both files: {both} distinct of 4096"
    );
    assert!(a > 1100 && b > 1100, "each file alone: {a}, {b} of 2048");
    assert!(
        a + b > both + 500,
        "the files share contents: {a} + {b} vs {both}"
    );
}

/// fio's common form `fio --filename=DEV --size=… JOBFILE`: the command line's
/// options are defaults for the job file's jobs, which its own [global] and job
/// sections override, and `--section` keeps only the named job.
#[test]
fn fio_command_line_options_apply_to_the_job_files_jobs() {
    let d = tempdir();
    let target = d.path().join("target.dat");
    let job = d.path().join("seq.fio");
    std::fs::write(
        &job,
        "[global]\nrw=write\nbs=4k\n\n[fill]\n\n[other]\nrw=read\n",
    )
    .unwrap();
    let r = ioscope_to(
        &d.path().join("r.json"),
        [
            "fio",
            &format!("--filename={}", target.display()),
            "--size=1m",
            "--bs=64k",
            "--ioengine=sync",
            "--section=fill",
            job.to_str().unwrap(),
        ],
    )
    .expect_code(0);
    assert_eq!(r.doc.runs.len(), 1);
    let run0 = r.run(0);
    assert_eq!(run0.name, "fill", "--section=fill left out [other]");
    // One pass of 1 MiB (the command line's size) in the file's 4k blocks, not the
    // command line's 64k.
    assert_eq!(run0.totals.write.bytes, 1 << 20);
    assert_eq!(run0.totals.write.ios, 256);
    assert_eq!(run0.totals.read.ios, 0);
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 1 << 20);
    // An error in the job file names its line.
    std::fs::write(&job, "[global]\nrw=write\n[fill]\nbs=sixteen\n").unwrap();
    let o = run(&[
        "fio",
        &format!("--filename={}", target.display()),
        "--size=1m",
        job.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("{}:4: ", job.display())),
        "{}",
        stderr(&o)
    );
}

/// SPRandom from a native job file against a temp file: the stream writes the
/// physical capacity (logical × 1.15) once, in 4k random writes, and stops there.
#[test]
fn sprandom_precondition_writes_the_physical_capacity_once() {
    let d = tempdir();
    let target = d.path().join("ssd.img");
    let job = d.path().join("spr.toml");
    std::fs::write(
        &job,
        format!(
            "[[target]]\nname = \"t\"\npath = {:?}\nsize = \"16m\"\n\n\
             [[workload]]\nname = \"spr\"\ntarget = \"t\"\nrw = \"randwrite\"\nbs = \"4k\"\n\
             qd = 8\nprecondition = {{ method = \"sprandom\", op = 0.15, regions = 10 }}\n\n\
             [[run]]\nname = \"pre\"\nworkloads = [\"spr\"]\nengine = \"uring\"\n",
            target.display().to_string()
        ),
    )
    .unwrap();
    let r = ioscope_to(
        &d.path().join("r.json"),
        ["run", job.to_str().unwrap(), "-q"],
    )
    .expect_code(0);
    let run0 = r.run(0);
    let logical_blocks = 4096u64; // 16 MiB of 4k
    let physical = (logical_blocks as f64 * 1.15) * 4096.0;
    let written = run0.totals.write.bytes as f64;
    assert_eq!(run0.totals.write.bytes, run0.totals.write.ios * 4096);
    assert_eq!(run0.totals.read.ios, 0);
    assert!(
        (written / physical - 1.0).abs() < 0.01,
        "wrote {written} bytes for a physical capacity of {physical}"
    );
    assert_eq!(r.wire_run(0)["workload"]["sprandom"]["regions"], 10);
    // Too many regions for the target: refused before any I/O, naming the workload.
    let bad = std::fs::read_to_string(&job)
        .unwrap()
        .replace("regions = 10", "regions = 100000");
    std::fs::write(&job, bad).unwrap();
    let o = run(&["run", job.to_str().unwrap(), "-q"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("sprandom"), "{}", stderr(&o));
}

/// fio's examples/sprandom.fio as its comment runs it, on a loop device with direct
/// I/O: `FIO_BS=4096 fio --filename=/dev/loopN examples/sprandom.fio`.
#[test]
fn fio_sprandom_example_runs_on_a_loop_device() {
    let dev = match LoopDev::new(64) {
        Ok(d) => d,
        Err(why) => return skip_or_fail(&format!("loop device: {why}")),
    };
    let d = tempdir();
    let job = d.path().join("sprandom.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=libaio\nrw=randwrite\nbs=${FIO_BS}\nblockalign=${FIO_BS}\n\
         direct=1\nnorandommap=1\niodepth=64\n[preconditioning]\nsprandom=1\n\
         spr_op=0.15\nspr_num_regions=100\n",
    )
    .unwrap();
    let json = d.path().join("r.json");
    let o = ioscope()
        .env("FIO_BS", "4096")
        .args([
            "fio",
            &format!("--filename={}", dev.dev),
            "--ioengine=io_uring",
        ])
        .arg(&job)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = read_json(&json);
    let w = &v["runs"][0]["totals"]["write"];
    let physical = 64.0 * 1.15 * 1048576.0;
    let bytes = w["bytes"].as_f64().unwrap();
    assert!(
        (bytes / physical - 1.0).abs() < 0.01,
        "wrote {bytes} bytes to {} for a physical capacity of {physical}",
        dev.dev
    );
    assert_eq!(v["runs"][0]["workload"]["sprandom"]["op"], 0.15);
}

/// The etcd disk check (etcd's docs, "tuning": fio with `--fdatasync=1`) reads
/// `jobs[].sync.lat_ns.percentile["99.000000"]`; the section had N = 0 and no
/// percentiles. Its N is the flushes made, its percentiles ioscope's own flush
/// percentiles (issue 25).
#[test]
fn fio_json_sync_section_carries_the_flushes_etcd_checks() {
    let d = tempdir();
    let json = d.path().join("r.json");
    let out = ioscope()
        .args(["fio", "--rw=write", "--ioengine=sync", "--fdatasync=1"])
        .arg(format!("--directory={}", d.path().display()))
        .args(["--size=2200k", "--bs=2300", "--name=mytest"])
        .args(["--output-format=json", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("pure JSON on stdout");
    let sync = &v["jobs"][0]["sync"];
    let own = read_json(&json);
    let flush = &own["runs"][0]["totals"]["flush"];
    // 2200 KiB in 2300-byte writes, one fdatasync after each.
    assert_eq!(flush["ios"], 979);
    assert_eq!(sync["total_ios"], flush["ios"]);
    assert_eq!(sync["lat_ns"]["N"], flush["ios"]);
    for (fio_key, own_key) in [
        ("50.000000", "p50"),
        ("99.000000", "p99"),
        ("99.900000", "p99_9"),
    ] {
        let fio_ns = sync["lat_ns"]["percentile"][fio_key].as_u64().unwrap();
        let own_ns = (flush["latency_us"][own_key].as_f64().unwrap() * 1000.0) as u64;
        assert_eq!(fio_ns, own_ns, "{fio_key}");
        assert!(fio_ns > 0);
    }
}

/// Two fio jobs side by side, a writer with `end_fsync=1` (fio's one fsync when the
/// job's writes are over) and a reader: fio's JSON has one job each, as fio reports
/// them without `group_reporting`, and the writer's `sync` section is its one fsync,
/// the reader's empty.
#[test]
fn end_fsync_is_one_flush_of_the_writer_reported_in_its_own_fio_job() {
    let d = tempdir();
    let json = d.path().join("r.json");
    let out = ioscope()
        .args(["fio", "--ioengine=sync", "--size=1m", "--bs=64k"])
        .arg(format!("--directory={}", d.path().display()))
        .args(["--name=writer", "--rw=write", "--end_fsync=1"])
        .args(["--name=reader", "--rw=read"])
        .args(["--output-format=json", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("pure JSON on stdout");
    let jobs = v["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["writer", "reader"]);
    let own = read_json(&json);
    let ws = own["runs"][0]["workloads"].as_array().unwrap();
    assert_eq!(ws[0]["totals"]["flush"]["ios"], 1, "{}", ws[0]["totals"]);
    assert_eq!(ws[0]["settings"]["fsync_on_close"], true);
    assert_eq!(jobs[0]["sync"]["total_ios"], 1);
    assert_eq!(
        jobs[0]["write"]["total_ios"],
        ws[0]["totals"]["write"]["ios"]
    );
    assert_eq!(jobs[1]["sync"]["total_ios"], 0);
    assert_eq!(jobs[1]["read"]["total_ios"], ws[1]["totals"]["read"]["ios"]);
}

/// fio lays out a new file with data only for a job that reads or says
/// `overwrite=1`; a job that only writes (fio's default `overwrite=0`) leaves the file
/// to its writes. Eight 4 KiB random writes to a new 4 MiB file allocate those
/// blocks only; with `overwrite=1` all 4 MiB are written before the run.
#[test]
fn a_write_only_job_leaves_its_new_file_to_its_writes_unless_overwrite() {
    use std::os::unix::fs::MetadataExt;
    for (overwrite, laid_out) in [(None, false), (Some("--overwrite=1"), true)] {
        let d = tempdir();
        let mut cmd = ioscope();
        cmd.args(["fio", "--name=w", "--rw=randwrite", "--size=4m", "--bs=4k"])
            .args(["--number_ios=8", "--ioengine=sync"])
            .arg(format!("--directory={}", d.path().display()))
            .args(["--json", d.path().join("r.json").to_str().unwrap()])
            .args(overwrite);
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let md = std::fs::metadata(d.path().join("w.0.0")).unwrap();
        let allocated = md.blocks() * 512;
        assert_eq!(md.len(), 4 << 20);
        // Laid out: every block allocated. Left to the writes: the 8 written blocks
        // (a filesystem may allocate a little around them; far from 4 MiB).
        match laid_out {
            true => assert!(allocated >= 4 << 20, "{overwrite:?}: {allocated}"),
            false => assert!(allocated <= 1 << 20, "{overwrite:?}: {allocated}"),
        }
    }
}

/// vdbench's `pause=` idles before the next run (Reporter.prepareNextRun), not after
/// the last: two runs on a virtual-time device take milliseconds of wall time, so a
/// command that takes at least the one pause between them (and says so) paused. Only
/// a lower bound: a loaded host may take longer, never shorter.
#[test]
fn vdbench_pause_idles_between_runs() {
    let d = tempdir();
    let pf = d.path().join("pause.parm");
    std::fs::write(
        &pf,
        "sd=sd1,lun=sim:16m?service=100us&time=virtual,threads=1\n\
         wd=wd1,sd=sd1,xfersize=4k,rdpct=100,seekpct=50\n\
         rd=rd1,wd=wd1,iorate=max,elapsed=2,interval=1,pause=1,forthreads=(1,2)\n",
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    let r = ioscope_to(
        &d.path().join("r.json"),
        ["vdbench", "-f", pf.to_str().unwrap()],
    )
    .expect_code(0);
    let took = t0.elapsed().as_secs_f64();
    assert_eq!(r.doc.runs.len(), 2);
    assert_eq!(r.wire["plan"]["runs"][0]["pause_ns"], 1_000_000_000u64);
    assert!(took >= 1.0, "two runs and one pause took {took:.3} s");
    assert_eq!(
        r.stdout.matches("pause: 1s after run").count(),
        1,
        "{}",
        r.stdout
    );
}

/// fio's `size=N%` on an existing file: the job works on N % of it, from its start.
/// 50 % of a 1 MiB file read at random 4 KiB at a time: one pass is 512 KiB of
/// reads (fio's io_size is then the region), none past the first 512 KiB.
#[test]
fn fio_size_percent_keeps_the_io_in_that_share_of_the_file() {
    let d = tempdir();
    let (file, log) = (d.path().join("data"), d.path().join("rec.log"));
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let job = d.path().join("job.fio");
    std::fs::write(
        &job,
        format!(
            "[j]\nfilename={}\nsize=50%\nrw=randread\nbs=4k\nwrite_iolog={}\n",
            file.display(),
            log.display()
        ),
    )
    .unwrap();
    ioscope_to(
        &d.path().join("r.json"),
        ["run", job.to_str().unwrap(), "-q"],
    )
    .expect_code(0);
    let ends: Vec<u64> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(2) == Some(&"read"))
                .then(|| f[3].parse::<u64>().unwrap() + f[4].parse::<u64>().unwrap())
        })
        .collect();
    // One pass over the region, as fio's io_size is then 50 % of the file.
    assert_eq!(ends.len(), 128, "512 KiB read");
    // Over the whole file, 128 reads would all stay in its first half 1 time in 2^128.
    assert!(ends.iter().all(|&e| e <= 512 << 10), "{ends:?}");
}

// fio makes the missing directories of a job's file at job set-up (filesetup.c's
// create_work_dirs, mode 0700); `ioscope fio` does when the run opens the target,
// `convert` makes nothing, and a native target without create_dirs stays strict.
#[test]
fn fio_makes_missing_directories_of_a_jobs_file_when_it_runs() {
    let d = tempdir();
    let top = d.path().join("x");
    let job = d.path().join("dirs.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\ndirectory={}\nsize=64k\nbs=4k\n[a]\nrw=write\nfilename_format=$jobname/f.$jobnum\n",
            top.join("y").display()
        ),
    )
    .unwrap();
    let conv = run(&["convert", job.to_str().unwrap()]);
    assert!(conv.status.success(), "{}", stderr(&conv));
    assert!(
        stdout(&conv).contains("create_dirs = true"),
        "{}",
        stdout(&conv)
    );
    assert!(!top.exists(), "convert makes nothing");
    let native = d.path().join("native.toml");
    std::fs::write(&native, stdout(&conv).replace("create_dirs = true\n", "")).unwrap();
    let strict = run(&["run", native.to_str().unwrap()]);
    assert!(!strict.status.success());
    assert!(
        stderr(&strict).contains("create_dirs = true makes it"),
        "{}",
        stderr(&strict)
    );
    assert!(
        !top.exists(),
        "a native target without create_dirs makes nothing"
    );

    let r = ioscope_to(&d.path().join("r.json"), ["fio", job.to_str().unwrap()]).expect_code(0);
    assert_eq!(r.run(0).totals.write.ios, 16);
    let file = top.join("y/a/f.0");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 64 << 10);
    use std::os::unix::fs::PermissionsExt;
    for dir in [top.clone(), top.join("y"), top.join("y/a")] {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
    }
}

// A job of several files whose filename_format has directories: the set's files go in
// subdirectories of `directory=`, made when the run opens the set (fio's
// create_work_dirs); a format that climbs out of the directory is refused.
#[test]
fn fio_file_sets_with_directories_in_their_names_run_there() {
    let d = tempdir();
    let job = d.path().join("sub.fio");
    let text = |fmt: &str| {
        format!(
            "[global]\ndirectory={}\nsize=64k\nbs=4k\nnrfiles=2\nnumjobs=2\n[a]\nrw=write\n\
             filename_format={fmt}\n",
            d.path().display()
        )
    };
    std::fs::write(&job, text("$jobname/$jobnum/f.$filenum")).unwrap();
    let r = ioscope_to(&d.path().join("r.json"), ["fio", job.to_str().unwrap()]).expect_code(0);
    // 2 jobs × 64 KiB in 4 KiB writes, each job over its own two files.
    assert_eq!(r.run(0).totals.write.ios, 32);
    for clone in 0..2 {
        for file in 0..2 {
            let f = d.path().join(format!("a/{clone}/f.{file}"));
            assert_eq!(
                std::fs::metadata(&f).unwrap().len(),
                32 << 10,
                "{}",
                f.display()
            );
        }
    }
    std::fs::write(&job, text("../$jobname.$filenum")).unwrap();
    let bad = run(&["convert", job.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("sub.fio:") && stderr(&bad).contains("outside the directory"),
        "{}",
        stderr(&bad)
    );
}
