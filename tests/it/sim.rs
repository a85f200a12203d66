//! The simulated device through the binary: ioscope's measured numbers must match the
//! model's truth (a multi-server FIFO queue with known service time).

use super::*;

/// The timing tests run one at a time. The sim engine spins for the last stretch
/// before each completion, so several runs at once on a small machine would take CPU
/// from each other, and a closed loop whose worker is descheduled issues late: the
/// latencies stay true but the IOPS no longer show the model's capacity.
pub static REALTIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs a closed-loop sim workload and returns `runs[0]` of the result.
fn sim_run(target: &str, qd: &str, extra: &[&str]) -> RunResult {
    let _serial = REALTIME.lock().unwrap_or_else(|e| e.into_inner());
    let r = ioscope_result(randread_args(target, qd, "2s", &[&["-q"], extra].concat()));
    // Any counted I/O error makes the exit code 1 (the policy only says whether the
    // run went on); otherwise the run must succeed.
    let want = if r.run(0).totals.all.errors > 0 { 1 } else { 0 };
    r.expect_code(want).doc.runs.swap_remove(0)
}

/// IOPS and mean latency of a result's totals.
fn iops_and_mean(r: &RunResult) -> (f64, f64) {
    (r.totals.all.iops, r.totals.all.latency_us.mean)
}

#[test]
fn sim_qd1_latency_is_the_service_time() {
    // On the real clock: the latency is the model's, 50 µs plus the few hundred ns
    // between the worker's timestamp and the push. It holds however busy the machine
    // is, because the completion time comes from the model.
    let r = sim_run("sim:1g?service=50us", "1", &[]);
    assert_eq!(r.engine, "sim");
    let (iops, mean) = iops_and_mean(&r);
    eprintln!("sim:1g?service=50us QD1: mean latency {mean:.2} us, {iops:.0} IOPS");
    // 50.36 µs here; 10 µs is room for the timestamps, not for the host.
    assert!((50.0..=60.0).contains(&mean), "mean latency {mean} us");
    // One request per (service + the tool's turnaround): never above 20,000 a second.
    // (How far below depends on how promptly the worker gets a CPU.)
    assert!(iops <= 20_050.0, "{iops} IOPS");
    // On virtual time the tool takes no time at all: exactly one request per 50 µs.
    let r = sim_run("sim:1g?service=50us&time=virtual", "1", &[]);
    let (iops, mean) = iops_and_mean(&r);
    assert_eq!(mean, 50.0);
    assert!((iops - 20_000.0).abs() <= 1.0, "{iops} IOPS");
}

#[test]
fn sim_qd4_one_server_queues() {
    // The server never idles: capacity is exactly 1 / 50 µs. Each request waits
    // behind three others: 4 × 50 µs.
    let r = sim_run("sim:1g?service=50us&time=virtual", "4", &[]);
    let (iops, mean) = iops_and_mean(&r);
    assert!((iops - 20_000.0).abs() <= 1.0, "{iops} IOPS");
    assert!((mean - 200.0).abs() < 0.1, "mean latency {mean} us");
}

#[test]
fn sim_four_servers_scale_throughput() {
    // Four 200 µs servers: 4 × the 5,000 IOPS of one. Eight requests in flight keep
    // two per server: each waits one service time and takes one, 400 µs. The same
    // from four workers of one stream each: the virtual clock waits for every worker,
    // so together they see the model exactly, as one worker does.
    for (qd, extra) in [
        ("8", &[][..]),
        ("2", &["--streams", "4", "--workers", "4"][..]),
    ] {
        let r = sim_run("sim:1g?service=200us&servers=4&time=virtual", qd, extra);
        let (iops, mean) = iops_and_mean(&r);
        assert!((iops - 20_000.0).abs() <= 4.0, "{extra:?}: {iops} IOPS");
        assert!(
            (mean - 400.0).abs() < 0.5,
            "{extra:?}: mean latency {mean} us"
        );
        if !extra.is_empty() {
            assert_eq!(r.workers, 4);
        }
    }
}

#[test]
fn sim_virtual_time_refuses_real_targets_beside_it() {
    let o = run(&[
        "run",
        "--target",
        "sim:1g?time=virtual",
        "--target",
        "null:1g",
        "--duration",
        "1s",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("'null:1g' runs on real time"), "{e}");
    let o = run(&["run", "--target", "sim:1g?time=later", "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("'later' is not real or virtual"));
}

#[test]
fn sim_stalls_show_in_max_latency() {
    let r = sim_run(
        "sim:1g?service=50us&stall=100ms@500ms&time=virtual",
        "1",
        &[],
    );
    let t = &r.totals.all;
    let (max, iops) = (t.latency_us.max, t.iops);
    // A request caught by a window waits out the rest of it: one arrives at its start.
    assert!(max >= 99_000.0, "max latency {max} us");
    // One fifth of the time nothing is served.
    assert!((iops - 16_000.0).abs() <= 0.02 * 16_000.0, "{iops} IOPS");
}

#[test]
fn sim_errors_are_counted() {
    let r = sim_run(
        "sim:1g?service=20us&error_rate=0.1&time=virtual",
        "4",
        &["--on-error", "continue"],
    );
    let errors = r.totals.all.errors as f64;
    let ios = r.totals.all.ios as f64;
    let share = errors / (errors + ios);
    // 2 s at 50 000 requests a second: 100 000 draws, sd of the share 0.001.
    assert!((0.097..=0.103).contains(&share), "error share {share}");
}

#[test]
fn sim_bad_parameter_is_refused() {
    let o = run(&[
        "run",
        "--target",
        "sim:1g?speed=10us",
        "--duration",
        "1s",
        "-q",
    ]);
    assert_ne!(o.status.code(), Some(0));
    let e = stderr(&o);
    assert!(e.contains("unknown parameter 'speed'"), "{e}");
    assert!(e.contains("service, dist, servers, stall"), "{e}");
    let o = run(&[
        "run",
        "--target",
        "sim:1g?service=fast",
        "--duration",
        "1s",
        "-q",
    ]);
    assert_ne!(o.status.code(), Some(0));
    let e = stderr(&o);
    assert!(e.contains("'service'") && e.contains("fast"), "{e}");
}

#[test]
fn sim_drift_never_settles() {
    // Service time grows 100% per second: 50 µs at open, ~150 µs two seconds on. Each
    // interval's latency is higher than the one before — no steady state.
    let r = sim_run(
        "sim:1g?service=50us&drift=100&time=virtual",
        "1",
        &["--interval", "500ms"],
    );
    let means: Vec<f64> = r
        .intervals
        .iter()
        .filter(|i| i.ios > 100)
        .map(|i| i.lat_us.mean)
        .collect();
    eprintln!("sim drift=100%/s: interval mean latencies {means:.1?} us");
    assert!(means.len() >= 4, "{means:?}");
    assert!(means.windows(2).all(|w| w[1] > w[0] * 1.05), "{means:?}");
    assert!(means[0] >= 50.0 && means[0] < 90.0, "{means:?}");
    assert!(*means.last().unwrap() > 120.0, "{means:?}");
}

// The per-I/O deadline (engine contract): a device stall longer than --io-timeout
// gives counted timeouts per connection and `timeout` events, and the run goes on
// to its end instead of hanging on the stalled I/Os.
#[test]
fn io_timeout_fails_stalled_ios_and_the_run_ends() {
    let started = std::time::Instant::now();
    let r = sim_run(
        "sim:1g?service=100us&stall=400ms@500ms",
        "4",
        &[
            "--io-timeout",
            "50ms",
            "--on-error",
            "continue",
            "--interval",
            "100ms",
        ],
    );
    // 2.17 s here for the 2 s run: 10 s tells an end from I/Os waited on for ever.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "the run took {:?}",
        started.elapsed()
    );
    assert_eq!(r.end_reason.to_string(), "duration");
    let c = &r.connections[0];
    // 2 s with 400 ms of stall per 500 ms, 4 slots timing out every ~50 ms.
    assert!(c.timeouts >= 16, "{c:?}");
    assert_eq!(c.errors, c.timeouts, "{c:?}");
    assert!(c.ios > 100, "the open windows served I/O: {c:?}");
    assert!(!r.events.is_empty());
    assert!(r.events.iter().all(|e| e.kind == "timeout" && e.path == 0));
    // Per-interval connection counts add up to the interval's I/Os.
    for iv in &r.intervals {
        let per_conn: u64 = iv.connections.iter().map(|c| c.ios).sum();
        assert_eq!(per_conn, iv.ios, "interval {}", iv.index);
    }
}

// Under retry=N a timed-out I/O the engine gave up is issued again (a `reissue`
// event), and only the last try's failure counts.
#[test]
fn io_timeout_with_retry_reissues() {
    let r = sim_run(
        "sim:1g?service=100us&stall=400ms@500ms",
        "1",
        &["--io-timeout", "50ms", "--on-error", "retry=2"],
    );
    let kinds: Vec<&str> = r.events.iter().map(|e| e.kind.as_str()).collect();
    assert!(kinds.contains(&"reissue"), "{kinds:?}");
    assert!(kinds.contains(&"timeout"), "{kinds:?}");
}
