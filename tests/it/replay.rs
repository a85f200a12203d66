//! Trace replay end to end (issue 27): a fio I/O log written by fio itself replays
//! I/O by I/O and on time; a Poisson trace keeps its rate per interval; a stalling
//! device shows its backlog in the latency counted from the trace's times; an MSR
//! trace keeps its mix and sizes; a bad trace is a located error that writes nothing.

use super::*;

/// `(direction, offset, length)` of each I/O line of a fio v3 I/O log, and each
/// line's time stamp in the log's own unit.
fn fio_log_ios(path: &Path) -> (Vec<(String, u64, u64)>, Vec<u64>) {
    let text = std::fs::read_to_string(path).expect("read the log");
    let mut ios = Vec::new();
    let mut times = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 5 && matches!(f[2], "read" | "write" | "trim") {
            ios.push((
                f[2].to_string(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
            ));
            times.push(f[0].parse().unwrap());
        }
    }
    (ios, times)
}

/// `ioscope replay TRACE --target TARGET --size SIZE EXTRA… -q`, which must succeed.
#[track_caller]
fn replay(trace: &Path, target: &str, size: &str, extra: &[&str]) -> Ran {
    let mut args = vec!["replay", trace.to_str().unwrap(), "--target", target];
    if !size.is_empty() {
        args.extend(["--size", size]);
    }
    args.extend(extra);
    args.push("-q");
    ioscope_result(args).expect_code(0)
}

fn have_fio() -> bool {
    std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A 30 s mixed job run by Debian's fio with `write_iolog` replays against another
/// file with the identical sequence of (direction, offset, length), checked I/O by
/// I/O through `--record`, and ends within 0.5 % of the log's span (the replay's
/// first to last issue against the log's first to last: 0.5 % of 30 s is 150 ms,
/// far above the scheduler's jitter, which is what this bound allows for).
#[test]
fn a_fio_iolog_replays_io_by_io_and_on_time() {
    if !have_fio() {
        skip_or_fail("fio is not installed");
        return;
    }
    let dir = tempdir();
    let (src, log) = (dir.path().join("src.dat"), dir.path().join("fio.iolog"));
    let out = std::process::Command::new("fio")
        .args([
            "--name=mix",
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=4k",
            "--size=8m",
            "--ioengine=psync",
            "--rate_iops=300,130",
            "--time_based",
            "--runtime=30",
            "--output-format=terse",
        ])
        .arg(format!("--filename={}", src.display()))
        .arg(format!("--write_iolog={}", log.display()))
        .output()
        .expect("fio");
    assert!(out.status.success(), "fio: {}", stderr(&out));
    let (want, t) = fio_log_ios(&log);
    assert!(want.len() > 5_000, "fio logged {} I/Os", want.len());
    let (target, rec) = (dir.path().join("dst.dat"), dir.path().join("rec.iolog"));
    let ran = replay(
        &log,
        target.to_str().unwrap(),
        "8m",
        &["--record", rec.to_str().unwrap()],
    );
    let (got, rt) = fio_log_ios(&rec);
    assert_eq!(got.len(), want.len(), "I/O count");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!("I/O {i}: replayed {:?}, logged {:?}", got[i], want[i]);
    }
    let span = |t: &[u64]| (t[t.len() - 1] - t[0]) as f64;
    let (logged, replayed) = (span(&t), span(&rt));
    assert!(
        (replayed - logged).abs() <= 0.005 * logged,
        "replayed span {replayed} against the log's {logged}"
    );
    let r = &ran.run(0).replay[0];
    assert_eq!((r.format.as_str(), r.timing.as_str()), ("fio3", "on-time"));
    assert_eq!(r.recorded_ios, want.len() as u64);
    assert_eq!(r.issued_ios, want.len() as u64);
}

/// A plain CSV trace of `n` I/Os at exponential gaps of mean `1/iops` s; returns
/// the I/Os' times in seconds.
fn poisson_csv(path: &Path, iops: f64, n: usize, write_pct: u64) -> Vec<f64> {
    let mut s = String::from("time_s,op,offset,bytes\n");
    let mut times = Vec::with_capacity(n);
    let mut t = 0f64;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..n {
        let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
        t += -(1.0 - u).ln() / iops;
        let op = if next() % 100 < write_pct {
            "write"
        } else {
            "read"
        };
        let off = (next() % 2048) * 4096;
        s.push_str(&format!("{t:.9},{op},{off},4096\n"));
        times.push((t * 1e9).round() / 1e9);
    }
    std::fs::write(path, s).expect("write the trace");
    times
}

/// A 5 k IOPS Poisson trace replayed on time on tmpfs keeps to the trace's
/// schedule at every interval's end: the I/Os issued by then are the I/Os the
/// trace had due by then, within 100 ms of the trace's rate (500 I/Os). A worker
/// preempted near a boundary issues its backlog in the next interval, so one
/// interval's own rate is not the figure to bound (beside `stress-ng --cpu 4` one
/// interval of the 20 k version read 19,276 IOPS against 20,272 due and the next
/// made it good). Measured beside `stress-ng --cpu 4` and three debug builds (load
/// 5–7): deficits of 0–24 I/Os, median issue lag 0.04–19 µs. A replay that ran
/// slow fails instead: its deficit grows with the run, and its median issue lag
/// passes the 1 ms bound. The rate is 5 k, not 20 k, because a debug build at
/// 20 k IOPS needs most of a core: at load 7 it fell 2,000–22,000 I/Os behind, a
/// starved machine rather than a replay fault. The acceptance figure (0.5 % per
/// interval at 20 k) is measured on a quiet machine by benches/replay_vs_fio.py.
#[test]
fn a_poisson_trace_keeps_its_rate_in_every_interval() {
    const IOPS: f64 = 5_000.0;
    let dir = tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| tempdir());
    let trace = dir.path().join("p.csv");
    let times = poisson_csv(&trace, IOPS, 15_000, 30);
    let target = dir.path().join("t.dat");
    let ran = replay(
        &trace,
        target.to_str().unwrap(),
        "8m",
        &["--interval", "500ms"],
    );
    let run = ran.run(0);
    let due_by = |t_s: f64| times.partition_point(|&t| t <= t_s) as f64;
    let mut issued = 0f64;
    let mut rows = Vec::new();
    let mut worst = 0f64;
    // Every interval but the last (the trace ends inside it).
    for iv in &run.intervals[..run.intervals.len() - 1] {
        issued += iv.ios as f64;
        let deficit = due_by(iv.t_s) - issued;
        worst = worst.max(deficit.abs());
        rows.push(format!(
            "#{} t={:.3} s: {:.0} IOPS (trace {:.0}), {} issued, {} due",
            iv.index,
            iv.t_s,
            iv.iops,
            iv.recorded_iops.unwrap_or(f64::NAN),
            issued,
            due_by(iv.t_s)
        ));
    }
    assert!(rows.len() >= 4, "{} intervals", rows.len());
    assert!(
        worst <= 0.100 * IOPS,
        "off the trace's schedule by {worst} I/Os at an interval's end:\n{}",
        rows.join("\n")
    );
    let r = &run.replay[0];
    assert_eq!(r.issued_ios, 15_000);
    let lag = r.lag_us.as_ref().expect("issue lag of an on-time replay");
    assert!(lag.p50 <= 1_000.0, "median issue lag {} us", lag.p50);
    assert!(r.late_ios.is_some());
}

/// Replaying a steady trace (1000 IOPS, one at a time) against a simulated device
/// that stalls 100 ms every second: latency counted from the trace's times holds the
/// backlog (about 100 I/Os wait up to 100 ms each stall: p99 ≥ 50 ms), while service
/// time (from submission) does not (one I/O per stall is in the device: 0.1 %).
#[test]
fn a_stalling_device_shows_its_backlog_in_latency_from_the_trace_times() {
    let dir = tempdir();
    let trace = dir.path().join("steady.csv");
    let mut s = String::from("time_s,op,offset,bytes\n");
    for i in 0..3000u64 {
        s.push_str(&format!(
            "{:.6},read,{},4096\n",
            i as f64 / 1000.0,
            (i % 256) * 4096
        ));
    }
    std::fs::write(&trace, s).unwrap();
    let ran = replay(
        &trace,
        "sim:64m?service=50us&stall=100ms@1s",
        "",
        &["--qd", "1"],
    );
    let t = &ran.run(0).totals.read;
    // 90 ms and 86 µs here: the stall's 100 ms against the 50 µs service.
    assert!(
        t.latency_us.p99 >= 50_000.0,
        "latency p99 {}",
        t.latency_us.p99
    );
    let service = &t.service_us;
    assert!(service.p99 < 50_000.0, "service p99 {}", service.p99);
}

/// An MSR Cambridge trace (the published seven columns, Windows filetime, two disks
/// of one host) replays with its read/write mix and sizes exactly: a workload per
/// disk, each with the trace's counts and bytes per direction.
#[test]
fn an_msr_trace_keeps_its_mix_and_sizes_per_disk() {
    let dir = tempdir();
    let trace = dir.path().join("src1_0.csv");
    let mut s = String::new();
    let mut want = [[0u64; 4]; 2];
    for i in 0..400u64 {
        let disk = i % 2;
        let write = i % 3 == 0;
        let size = [4096u64, 8192, 65536][(i % 5 % 3) as usize];
        let ts = 128_166_372_003_061_629 + i * 2_000; // 0.2 ms apart
        let kind = if write { "Write" } else { "Read" };
        s.push_str(&format!(
            "{ts},src1,{disk},{kind},{},{size},{}\n",
            (i * 7919 % 1000) * 65536,
            1500
        ));
        let d = &mut want[disk as usize];
        let k = if write { 2 } else { 0 };
        d[k] += 1;
        d[k + 1] += size;
    }
    std::fs::write(&trace, s).unwrap();
    let target = dir.path().join("t.dat");
    let ran = replay(
        &trace,
        target.to_str().unwrap(),
        "16m",
        &["--timing", "asap"],
    );
    let run = ran.run(0);
    assert_eq!(run.workloads.len(), 2, "a workload per disk");
    for (w, want) in run.workloads.iter().zip(want) {
        let t = &w.totals;
        assert_eq!(
            [t.read.ios, t.read.bytes, t.write.ios, t.write.bytes],
            want,
            "{}",
            w.name
        );
    }
    // 64 MiB of recorded extent onto 16 MiB: offsets past it were remapped.
    assert!(run.replay.iter().all(|r| r.remapped_ios > 0));
}

/// A garbled line and a truncated blktrace record are errors naming the file and
/// the record, and the target is not created.
#[test]
fn a_bad_trace_is_a_located_error_and_nothing_is_written() {
    let dir = tempdir();
    let bad = dir.path().join("bad.csv");
    std::fs::write(
        &bad,
        "time_s,op,offset,bytes\n0.001,read,0,4096\n0.002,reed,4096,4096\n",
    )
    .unwrap();
    let target = dir.path().join("never.dat");
    let o = run(&[
        "replay",
        bad.to_str().unwrap(),
        "--target",
        target.to_str().unwrap(),
        "--size",
        "1m",
    ]);
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("bad.csv") && e.contains("line 3"), "{e}");
    assert!(!target.exists(), "the target was created");
}

/// `--record` output is a log fio itself replays: fio's read_iolog does the same
/// number of I/Os.
#[test]
fn a_recorded_log_is_replayed_by_fio() {
    if !have_fio() {
        skip_or_fail("fio is not installed");
        return;
    }
    let dir = tempdir();
    let (target, rec) = (dir.path().join("t.dat"), dir.path().join("rec.iolog"));
    run_json(&[
        "run",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "4m",
        "--rw",
        "randrw",
        "--passes",
        "1",
        "--record",
        rec.to_str().unwrap(),
    ]);
    let (ios, _) = fio_log_ios(&rec);
    assert_eq!(ios.len(), 1024, "4 MiB in 4 KiB I/Os");
    let out = std::process::Command::new("fio")
        .args(["--name=r", "--ioengine=psync", "--output-format=json"])
        .arg(format!("--read_iolog={}", rec.display()))
        .output()
        .expect("fio");
    assert!(out.status.success(), "fio: {}", stderr(&out));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("fio JSON");
    let job = &j["jobs"][0];
    let n =
        job["read"]["total_ios"].as_u64().unwrap() + job["write"]["total_ios"].as_u64().unwrap();
    assert_eq!(n, 1024, "fio replayed {n} I/Os");
}

/// fio's replay options translate: a job with read_iolog and replay_no_stall runs
/// the log asap; replay_time_scale=200 is twice the speed.
#[test]
fn fio_replay_options_translate_onto_the_trace_settings() {
    let dir = tempdir();
    let trace = dir.path().join("p.csv");
    let _ = poisson_csv(&trace, 1000.0, 200, 50);
    let target = dir.path().join("t.dat");
    let job = dir.path().join("r.fio");
    std::fs::write(
        &job,
        format!(
            "[r]\nfilename={}\nsize=8m\nread_iolog={}\nreplay_time_scale=200\n\
             replay_scale=2\nreplay_align=8192\n",
            target.display(),
            trace.display()
        ),
    )
    .unwrap();
    let out = run(&["convert", job.to_str().unwrap()]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        text.contains("trace = ")
            && text.contains("trace_speed = 2.0")
            && text.contains("trace_scale = 2")
            && text.contains("trace_align = \"8k\""),
        "{text}"
    );
    let back = run(&["convert", job.to_str().unwrap(), "--to", "fio"]);
    let fio = stdout(&back);
    assert!(
        fio.contains("read_iolog=")
            && fio.contains("replay_time_scale=200")
            && fio.contains("replay_scale=2")
            && fio.contains("replay_align=8192"),
        "{fio}{}",
        stderr(&back)
    );
    let ran = ioscope_result(["fio", job.to_str().unwrap()]).expect_code(0);
    let r = &ran.run(0).replay[0];
    assert_eq!((r.speed, r.recorded_ios, r.issued_ios), (2.0, 200, 200));
}

/// A blktrace capture of fio's I/O on a loop device (tests/fixtures/trace: the
/// kernel's own `struct blk_io_trace` records, split per CPU) replays its queue
/// events with the counts and bytes blkparse reports for the same files: reads
/// queued 29 (276 KiB), writes 35 (348 KiB) and discards 8 (512 KiB), the 4 empty
/// flushes not replayed but counted.
#[test]
fn a_blktrace_capture_replays_with_blkparse_counts_and_bytes() {
    let dir = tempdir();
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/trace/loop.blktrace"
    );
    let target = dir.path().join("t.dat");
    let ran = replay(
        Path::new(trace),
        target.to_str().unwrap(),
        "64m",
        &["--timing", "asap"],
    );
    let run = ran.run(0);
    let t = &run.totals;
    let trim = t.trim.as_ref().expect("the discards");
    assert_eq!(
        [
            t.read.ios,
            t.read.bytes,
            t.write.ios,
            t.write.bytes,
            trim.ios,
            trim.bytes
        ],
        [29, 276 << 10, 35, 348 << 10, 8, 512 << 10]
    );
    let r = &run.replay[0];
    assert_eq!((r.format.as_str(), r.device.as_str()), ("blktrace", "7,0"));
    assert_eq!(r.skipped.get("flush"), Some(&4));
}

/// Two shares of one trace (`--trace-share 1/2` and `2/2`, what two MPI ranks are
/// given) replay it between them: every I/O once, each 10 ms slice by one of them,
/// the second starting at the trace's second slice, on the trace's own clock.
#[test]
fn two_trace_shares_replay_the_whole_trace_once() {
    let dir = tempdir();
    let trace = dir.path().join("p.csv");
    let _ = poisson_csv(&trace, 2_000.0, 2_000, 30);
    let target = dir.path().join("t.dat");
    let mut issued = 0;
    for share in ["1/2", "2/2"] {
        let rec = dir.path().join(format!("share{}.log", &share[..1]));
        let ran = replay(
            &trace,
            target.to_str().unwrap(),
            "8m",
            &["--trace-share", share, "--record", rec.to_str().unwrap()],
        );
        let r = &ran.run(0).replay[0];
        assert_eq!(r.issued_ios, r.recorded_ios, "share {share}");
        issued += r.issued_ios;
        let (_, times) = fio_log_ios(&rec);
        // Share 2's first I/O is in the trace's second 10 ms slice: 10 ms after the
        // run's start at the earliest (times in µs).
        if share == "2/2" {
            assert!(times[0] >= 10_000, "share 2 began at {} us", times[0]);
        }
    }
    assert_eq!(issued, 2_000);
}

/// A fio job that only names its log replays onto the file the log names, as fio
/// does; `replay_redirect` sends it elsewhere.
#[test]
fn a_fio_replay_job_goes_where_fio_would_send_it() {
    let dir = tempdir();
    let (src, other) = (dir.path().join("src.dat"), dir.path().join("other.dat"));
    let log = dir.path().join("l.iolog");
    let s = src.display();
    std::fs::write(
        &log,
        format!("fio version 3 iolog\n0 {s} add\n0 {s} open\n10 {s} read 0 4096\n20 {s} close\n"),
    )
    .unwrap();
    let job = dir.path().join("r.fio");
    let convert = |extra: &str| {
        std::fs::write(
            &job,
            format!("[r]\nsize=1m\nread_iolog={}\n{extra}", log.display()),
        )
        .unwrap();
        let out = run(&["convert", job.to_str().unwrap()]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let toml = convert("");
    assert!(
        toml.contains(&format!("path = {:?}", s.to_string())),
        "{toml}"
    );
    let toml = convert(&format!("replay_redirect={}\n", other.display()));
    assert!(
        toml.contains(&format!("path = {:?}", other.display().to_string())),
        "{toml}"
    );
}
