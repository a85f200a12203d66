//! The default is the fast path: what `--engine auto` picks and says, io_uring options
//! recorded and refused clearly, write-through and periodic flushes counted apart.

use super::*;

/// The result of a successful quiet run as written (JSON), for its wire fields.
fn result_json(args: &[&str]) -> serde_json::Value {
    run_json(args).wire
}

fn shm_path(tag: &str) -> String {
    format!("/dev/shm/ioscope-fastpath-{tag}-{}", std::process::id())
}

#[test]
fn auto_engine_runs_sync_on_tmpfs_and_says_why() {
    let f = shm_path("auto");
    let r = result_json(&[
        "run",
        "--target",
        &f,
        "--size",
        "4m",
        "--rw",
        "randread",
        "--duration",
        "1s",
        "--direct",
        "false",
    ]);
    let rr = &r["runs"][0];
    assert_eq!(rr["engine"], "sync");
    let why = rr["engine_reason"].as_str().unwrap();
    assert!(why.starts_with("auto: ") && why.contains("tmpfs"), "{why}");
    // An explicit engine is obeyed, and the reason says it was asked for.
    let r = result_json(&[
        "run",
        "--target",
        &f,
        "--rw",
        "randread",
        "--duration",
        "1s",
        "--engine",
        "uring",
    ]);
    assert_eq!(r["runs"][0]["engine"], "uring");
    assert_eq!(r["runs"][0]["engine_reason"], "--engine uring");
    // The terminal says it in one line.
    let o = run(&[
        "run",
        "--target",
        &f,
        "--rw",
        "randread",
        "--duration",
        "1s",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let line = stdout(&o)
        .lines()
        .find(|l| l.starts_with("engine sync: auto: "))
        .map(str::to_string);
    assert!(line.is_some(), "{}", stdout(&o));
    std::fs::remove_file(&f).unwrap();
}

#[test]
fn auto_engine_runs_uring_on_a_direct_disk_file() {
    let d = tempdir();
    let f = d.path().join("f");
    let run = |qd: &str| {
        result_json(&[
            "run",
            "--target",
            f.to_str().unwrap(),
            "--size",
            "4m",
            "--rw",
            "randread",
            "--qd",
            qd,
            "--duration",
            "1s",
        ])
    };
    let r = run("4");
    let rr = &r["runs"][0];
    let why = rr["engine_reason"].as_str().unwrap();
    if why.contains("tmpfs") {
        return skip_or_fail("the temp dir is on tmpfs");
    }
    assert_eq!(rr["engine"], "uring", "{why}");
    assert!(why.contains("O_DIRECT"), "{why}");
    // One request in flight (one stream at QD 1): nothing to overlap, pread.
    let r = run("1");
    let rr = &r["runs"][0];
    let why = rr["engine_reason"].as_str().unwrap();
    assert_eq!(rr["engine"], "sync", "{why}");
    assert!(why.contains("one request in flight"), "{why}");
}

#[test]
fn uring_options_are_recorded_and_sqpoll_runs_a_kernel_thread() {
    let d = tempdir();
    let f = d.path().join("f");
    let json = d.path().join("r.json");
    let mut child = ioscope()
        .args([
            "run",
            "--target",
            f.to_str().unwrap(),
            "--size",
            "4m",
            "--rw",
            "randread",
            "--duration",
            "2s",
            "--qd",
            "4",
            "--sqpoll",
            "--fixed-bufs",
            "--batch-submit",
            "2",
            "--batch-complete-max",
            "8",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let task = format!("/proc/{}/task", child.id());
    // Looked for while the run runs (its 2 s, however late a loaded machine starts
    // it), not for a fixed time from the spawn.
    let mut seen = false;
    while !seen && child.try_wait().expect("try_wait").is_none() {
        seen = std::fs::read_dir(&task)
            .into_iter()
            .flatten()
            .flatten()
            .any(|t| {
                std::fs::read_to_string(t.path().join("comm"))
                    .is_ok_and(|c| c.starts_with("iou-sqp-"))
            });
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let status = child.wait().expect("wait");
    assert!(status.success());
    assert!(
        seen,
        "no iou-sqp-* thread in {task} while running with --sqpoll"
    );
    let r = read_json(&json);
    let rr = &r["runs"][0];
    assert_eq!(rr["engine"], "uring");
    assert!(rr["engine_reason"].as_str().unwrap().contains("sqpoll"));
    let u = &rr["io"]["uring"];
    assert_eq!(u["sqpoll"], true);
    assert_eq!(u["fixed_bufs"], true);
    assert_eq!(u["batch_submit"], 2);
    assert_eq!(u["batch_complete_max"], 8);
    assert!(rr["totals"]["ios"].as_u64().unwrap() > 0);
}

#[test]
fn hipri_on_a_file_without_polling_is_a_clear_error() {
    let f = shm_path("hipri");
    std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    let o = run(&[
        "run",
        "--target",
        &f,
        "--direct",
        "false",
        "--rw",
        "randread",
        "--duration",
        "1s",
        "--hipri",
    ]);
    std::fs::remove_file(&f).unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("--hipri") && e.contains("O_DIRECT"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn sync_every_issues_one_flush_per_n_writes() {
    let d = tempdir();
    let f = d.path().join("f");
    // Queued on io_uring (IORING_OP_FSYNC after the writes), called by the sync engine.
    for (kind, streams, engine) in [
        ("fsync", "1", "uring"),
        ("fdatasync", "2", "uring"),
        ("fsync", "1", "sync"),
        ("fdatasync", "2", "sync"),
    ] {
        let r = result_json(&[
            "run",
            "--engine",
            engine,
            "--target",
            f.to_str().unwrap(),
            "--size",
            "1m",
            "--rw",
            "write",
            "--bs",
            "4k",
            "--passes",
            "1",
            "--streams",
            streams,
            "--sync-every",
            "8",
            "--sync-kind",
            kind,
            "--write-through",
        ]);
        let t = &r["runs"][0]["totals"];
        let writes = t["write"]["ios"].as_u64().unwrap();
        assert_eq!(writes, 256);
        let flush = &t["flush"];
        assert_eq!(flush["kind"], kind);
        assert_eq!(r["runs"][0]["engine"], engine);
        assert_eq!(
            flush["ios"].as_u64().unwrap(),
            writes / 8,
            "{engine}: {flush}"
        );
        assert_eq!(flush["errors"], 0);
        assert!(flush["latency_us"]["max"].as_f64().unwrap() > 0.0);
        // A flush is not a write.
        assert_eq!(t["ios"].as_u64().unwrap(), writes);
        assert_eq!(r["runs"][0]["io"]["write_through"], true);
    }
    // No --sync-every, no flush totals.
    let r = result_json(&[
        "run",
        "--target",
        f.to_str().unwrap(),
        "--rw",
        "write",
        "--bs",
        "4k",
        "--passes",
        "1",
    ]);
    assert!(r["runs"][0]["totals"].get("flush").is_none());
}

// Flushes are per workload: the run's `sync_every` needs a file descriptor only on
// the targets of workloads that write. A read workload on a RAM target runs beside a
// flushing writer; one that writes there is refused before any I/O, naming the flag.
#[test]
fn only_the_targets_of_flushing_workloads_need_a_file() {
    let d = tempdir();
    let job = |mem_rw: &str| {
        format!(
            "[defaults]\npasses = 1\nsync_every = 2\n\
             [[target]]\nname = \"f\"\npath = {:?}\nsize = \"1m\"\n\
             [[target]]\nname = \"m\"\npath = \"mem:1m\"\n\
             [[workload]]\nname = \"w\"\ntarget = \"f\"\nrw = \"write\"\n\
             [[workload]]\nname = \"r\"\ntarget = \"m\"\nengine = \"mem\"\nrw = {mem_rw:?}\n",
            d.path().join("f").to_str().unwrap()
        )
    };
    let file = d.path().join("j.toml");
    std::fs::write(&file, job("read")).unwrap();
    let r = ioscope_to(&d.path().join("r.json"), ["run", file.to_str().unwrap()]).expect_code(0);
    let ws = r.wire["runs"][0]["workloads"].as_array().unwrap();
    let flushes = |i: usize| ws[i]["totals"]["flush"]["ios"].as_u64();
    // One pass of 4 KiB writes over 1 MiB: every flush is waited for.
    assert_eq!(ws[0]["totals"]["write"]["ios"].as_u64(), Some(256));
    assert_eq!(flushes(0), Some(128));
    assert_eq!(flushes(1), None, "the reader never flushes");
    std::fs::write(&file, job("write")).unwrap();
    let o = run(&["run", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("--sync-every works on files and block devices, not on 'mem:1m'"),
        "{err}"
    );
}

#[test]
fn fio_sync_keys_translate_and_run() {
    let d = tempdir();
    let f = d.path().join("f");
    let json = d.path().join("r.json");
    let o = run(&[
        "fio",
        "--name=j",
        "--rw=write",
        "--bs=4k",
        "--size=256k",
        &format!("--filename={}", f.display()),
        "--fdatasync=4",
        "--sync=1",
        "--ioengine=psync",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = read_json(&json);
    let t = &r["runs"][0]["totals"];
    assert_eq!(t["write"]["ios"], 64);
    assert_eq!(t["flush"]["ios"], 16);
    assert_eq!(t["flush"]["kind"], "fdatasync");
    assert_eq!(r["runs"][0]["io"]["write_through"], true);
}

#[test]
fn bad_tuning_flags_are_refused_and_create_nothing() {
    let d = tempdir();
    let f = d.path().join("never");
    for args in [
        &["--batch-complete-min", "8", "--batch-complete-max", "4"][..],
        &["--sync-kind", "fdatasync"][..],
        &["--sync-kind", "sometimes", "--sync-every", "2"][..],
        &["--register-files", "maybe"][..],
        &["--sqpoll-cpu", "x"][..],
    ] {
        let mut all = vec!["run", "--target", f.to_str().unwrap(), "--size", "1m"];
        all.extend_from_slice(args);
        let o = run(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(args[0]), "{args:?}: {}", stderr(&o));
        assert!(!f.exists(), "{args:?} created the target");
    }
    // Flushes and O_DSYNC need a file descriptor.
    for flag in [&["--sync-every", "4"][..], &["--write-through"][..]] {
        let mut all = vec!["run", "--target", "mem:1m", "--rw", "write"];
        all.extend_from_slice(flag);
        let o = run(&all);
        assert_eq!(o.status.code(), Some(2), "{flag:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(flag[0]), "{}", stderr(&o));
    }
}

#[test]
fn rejected_io_uring_options_and_late_failures_leave_no_file() {
    let d = tempdir();
    let f = d.path().join("never");
    let shm = shm_path("never");
    let target = f.to_str().unwrap();
    // Refused by the kernel or the device: bad input, found before the file exists.
    for (t, args) in [
        (target, &["--sqpoll", "--sqpoll-cpu", "100000"][..]),
        (target, &["--hipri", "--direct", "false"][..]),
        (shm.as_str(), &["--hipri", "--direct", "true"][..]),
    ] {
        let mut all = vec!["run", "--target", t, "--size", "1m", "--duration", "1s"];
        all.extend_from_slice(args);
        let o = run(&all);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        let option = if args[0] == "--sqpoll" {
            "--sqpoll-cpu"
        } else {
            args[0]
        };
        assert!(e.contains(option), "{args:?}: {e}");
        assert!(
            !std::path::Path::new(t).exists(),
            "{args:?} left {t} behind"
        );
    }
    // A failure after the file was created (the journal cannot be made): the run
    // fails, and removes the file it created.
    let o = run(&[
        "run",
        "--target",
        target,
        "--size",
        "1m",
        "--rw",
        "write",
        "--duration",
        "1s",
        "--verify",
        "--journal",
        "/proc/ioscope-no-such-dir",
    ]);
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("journal"), "{}", stderr(&o));
    assert!(!f.exists(), "the failed run left its file behind");
}
