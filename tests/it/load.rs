//! Latency at a given load: rate accuracy, the coordinated-omission correction, curves,
//! SLA search and sweeps — checked against the simulated device's known truth.

use super::*;

#[test]
fn requested_rates_are_achieved_within_one_percent() {
    let d = tempdir();
    for rate in ["1000", "10000", "100000", "500000"] {
        // The top rate leaves the debug-build worker room to catch up after the
        // machine takes its CPU away for a moment. On 2026-11-27 one debug worker
        // did 1.38-1.42 M IOPS closed loop on null:, and paced at 1 M it ran at the
        // edge even on a quiet machine: lag p99 14-380 ms, achieved 72-100 % (the
        // build of the session before alike: 83-86 %), and a fresh-clone CI failed
        // at 96.19 %. At 500 k: 100.000 %, lag p99 17-85 µs. Favoured (nice −20)
        // against other processes' CPU use.
        let r = ioscope_cmd_to(
            favoured(ioscope()),
            &d.path().join("r.json"),
            [
                "run",
                "--target",
                "null:1g",
                "--rate",
                rate,
                "--arrival",
                "uniform",
                "--duration",
                "5s",
                "-q",
            ],
        )
        .expect_code(0);
        let s = r
            .run(0)
            .schedule
            .as_ref()
            .expect("an open-loop run has a schedule");
        let pct = s.achieved_pct;
        eprintln!(
            "rate {rate}: achieved {pct:.3}%, lag p99 {:.0} us",
            s.lag_us.p99
        );
        // What falls short is the I/Os due in the lag at the end; 1% is 50 ms of the
        // 5 s. Seen favoured: 100.000% at every rate, lag p99 0-463 µs, alone and
        // beside four CPU hogs.
        assert!((pct - 100.0).abs() <= 1.0, "rate {rate}: achieved {pct}%");
        assert!(
            s.lag_us.p99.is_finite(),
            "rate {rate}: lag p99 {}",
            s.lag_us.p99
        );
    }
}

#[test]
fn pacing_modes_trade_cpu_for_jitter_and_report_it() {
    let mut cpu = std::collections::HashMap::new();
    for mode in ["spin", "hybrid", "sleep"] {
        let r = run_json(&[
            "run",
            "--target",
            "null:1g",
            "--rate",
            "2000",
            "--arrival",
            "uniform",
            "--pacing",
            mode,
            "--duration",
            "2s",
            "--workers",
            "1",
        ]);
        let run = r.run(0);
        let s = run.schedule.as_ref().expect("schedule");
        let pct = s.achieved_pct;
        // 99.998-100% here: 2000 IOPS is little work, and 1% is 20 ms of lag at the
        // end of the 2 s.
        assert!((pct - 100.0).abs() <= 1.0, "{mode}: achieved {pct}%");
        let p = s.pacing.as_ref().expect("pacing");
        assert_eq!(p.mode, mode);
        assert_eq!(r.wire["plan"]["runs"][0]["pacing"], mode);
        let (spin_s, sleeps) = (p.spin_s, p.sleeps);
        match mode {
            // 500 µs gaps: sleep, then busy-wait the fixed 100 µs margin before each I/O.
            // The busy-wait is the margin less the sleep's wake-up lateness, which on a
            // shared VM reaches 50-60 µs (a fresh-clone CI run measured 0.18 s of the
            // 0.4 s at most): require a clear busy-wait, not most of the margin.
            "spin" => {
                assert!(spin_s > 0.05, "{mode}: spin {spin_s} s");
                assert_eq!(p.margin_us, 100.0);
            }
            "hybrid" => {
                let m = p.margin_us;
                assert!((1.0..=200.0).contains(&m), "learned margin {m} us");
            }
            _ => assert_eq!(spin_s, 0.0, "sleep mode never busy-waits"),
        }
        assert!(sleeps > 1000, "{mode}: {sleeps} sleeps");
        assert!(p.wake_late_us.p50 > 0.0);
        let total = run.cpu.cpu_us_per_io;
        let excl = p.cpu_us_per_io_excl_spin;
        assert!(excl <= total + 1e-9, "{mode}: {excl} > {total}");
        let spin_us_per_io = spin_s * 1e6 / run.totals.all.ios.max(1) as f64;
        cpu.insert(mode, (total, spin_us_per_io));
    }
    // The busy-wait spin mode reports is paid in CPU, and sleep mode does not pay it:
    // sleep's CPU per I/O is below spin's by at least half of spin's busy-wait per
    // I/O. (A fixed ratio of the two does not hold across hosts: a timer wake-up
    // costs 40-50 µs of CPU on this VM, so sleep/spin moved between 0.41 and 0.55
    // for the same build.)
    let ((sleep, _), (spin, spin_wait)) = (cpu["sleep"], cpu["spin"]);
    assert!(
        spin_wait > 10.0 && sleep < spin - 0.5 * spin_wait,
        "CPU per I/O: sleep {sleep} us, spin {spin} us of which busy-wait {spin_wait} us"
    );
}

#[test]
fn latency_counts_from_the_intended_time_through_a_stall() {
    // On virtual time the model's truth comes out exactly: no host noise.
    let at_1000_iops = |target: &'static str| {
        run_json(&[
            "run",
            "--target",
            target,
            "--rate",
            "1000",
            "--qd",
            "1",
            "--duration",
            "3s",
        ])
    };
    let r = at_1000_iops("sim:1g?service=1us&stall=100ms@1s&time=virtual");
    let t = &r.run(0).totals.all;
    let lat_p99 = t.latency_us.p99;
    let svc_p99 = t.service_us.p99;
    // About 100 of every 1 000 I/Os arrive during or just behind a stall.
    assert!(
        lat_p99 >= 50_000.0,
        "latency p99 {lat_p99} us should show the stall's backlog"
    );
    // Measured from the actual submission, at QD 1 only the one I/O in flight when a
    // stall begins waits it out: the service time hides the stall.
    assert!(svc_p99 <= 2.0, "service p99 {svc_p99} us should hide it");
    // Each 1 s interval holds one 100 ms stall (the first partly before the run's
    // start): ~100 I/Os pile up behind it, and the issue lag reaches most of its length.
    for iv in &r.run(0).intervals {
        let backlog = iv.backlog_ios.expect("open loop: backlog_ios");
        let lag_max = iv.lag_us.as_ref().expect("open loop: lag_us").max;
        assert!(
            backlog >= 50.0 && lag_max >= 50_000.0,
            "interval backlog {backlog}, lag max {lag_max} us: {iv:?}"
        );
    }
    let r = at_1000_iops("sim:1g?service=1us&time=virtual");
    let lat_max = r.run(0).totals.all.latency_us.max;
    // Poisson arrivals now and then land within 1 µs of each other; at QD 1 the
    // second waits for the first.
    assert!(
        lat_max <= 2.01,
        "no stall: every I/O takes its 1 us service, yet max {lat_max} us"
    );
    for iv in &r.run(0).intervals {
        // The backlog is the worst issue lag times the rate: here a fraction of 1.
        assert!(iv.backlog_ios.expect("backlog_ios") < 0.01, "{iv:?}");
    }
}

/// A latency on the real clock of this shared VM, which now and then loses its CPU to
/// the host for milliseconds: the stall still dominates.
#[test]
fn a_stall_shows_on_the_real_clock_too() {
    let _g = super::sim::REALTIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let r = run_json(&[
        "run",
        "--target",
        "sim:1g?service=1us&stall=100ms@1s",
        "--rate",
        "1000",
        "--qd",
        "1",
        "--duration",
        "2s",
    ]);
    let lat = &r.run(0).totals.all.latency_us;
    let (lat_p99, lat_p50) = (lat.p99, lat.p50);
    // 80 ms here against 50: the stall's backlog, which host noise only adds to; and
    // a p50 of 4 µs against 1 ms: a host taking the CPU for milliseconds is rare.
    assert!(lat_p99 >= 50_000.0, "latency p99 {lat_p99} us");
    assert!(lat_p50 < 1_000.0, "latency p50 {lat_p50} us");
}

/// Mean response time of an M/D/1 queue (Poisson arrivals, fixed service `s_us`) at
/// utilisation `rho`: Pollaczek–Khinchine.
fn md1_mean_us(s_us: f64, rho: f64) -> f64 {
    s_us + rho * s_us / (2.0 * (1.0 - rho))
}

#[test]
fn curve_rises_and_tops_out_at_capacity() {
    let r = run_json(&[
        "curve",
        "--target",
        "sim:1g?service=100us&time=virtual",
        "--qd",
        "4",
        "--duration",
        "4s",
        "--warmup",
        "500ms",
    ]);
    let c = r.doc.curves.first().expect("a curve");
    let max = c.max_iops;
    // Closed loop at QD 4 on one 100 µs server: exactly its capacity.
    assert!(
        (max - 10_000.0).abs() <= 10.0,
        "max {max} vs capacity 10000"
    );
    let pts = &c.points;
    assert_eq!(pts.len(), 7, "max run + 6 points");
    assert_eq!(r.doc.runs.len(), 7);
    let open = &pts[1..];
    for w in open.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert!(b.achieved_iops > a.achieved_iops, "{a:?} -> {b:?}");
        let (pa, pb) = (a.latency_us.p99, b.latency_us.p99);
        assert!(pb > pa, "p99 fell from {pa} to {pb} as load rose");
    }
    // Below saturation the mean is queueing theory's (the curve's arrivals are
    // Poisson). Near saturation a few seconds are too short for the mean to settle.
    // Virtual time: within 0.6% here; 10% is the sampling of a 4 s Poisson run.
    for p in open {
        let requested = p.requested_iops;
        let rho = requested / 10_000.0;
        if rho > 0.85 {
            continue;
        }
        let mean = p.latency_us.mean;
        let want = md1_mean_us(100.0, rho);
        assert!(
            (mean - want).abs() <= 0.1 * want,
            "at {requested} IOPS mean {mean} us, M/D/1 says {want:.1}"
        );
    }
}

#[test]
fn sla_search_finds_the_edge() {
    // The search, then one run 10 % above its answer: the same job but for the rate.
    let at_qd16 = |cmd: &str, flag: &str, value: &str| {
        run_json(&[
            cmd,
            "--target",
            "sim:1g?service=100us&time=virtual",
            "--qd",
            "16",
            "--duration",
            "4s",
            flag,
            value,
        ])
    };
    let r = at_qd16("curve", "--max-latency", "p99=1ms");
    let sla = r
        .doc
        .curves
        .first()
        .and_then(|c| c.sla.clone())
        .expect("an SLA answer");
    assert!(sla.measured_us <= 1000.0, "{sla:?}");
    assert_eq!(sla.percentile, "p99");
    let iops = sla.iops;
    // M/D/1 at 100 µs: p99 reaches 1 ms near 80 % load.
    assert!((6_000.0..9_500.0).contains(&iops), "sla {sla:?}");
    let more = format!("{:.0}", iops * 1.1);
    let r = at_qd16("run", "--rate", &more);
    // Virtual time: 1475 µs here.
    let p99 = r.run(0).totals.all.latency_us.p99;
    assert!(
        p99 > 1000.0,
        "at {more} IOPS p99 is {p99} us, still within the bound ({sla:?})"
    );
}

#[test]
fn block_size_sweep_gives_runs_and_halving_ratios() {
    let r = ioscope_result([
        "run",
        "--target",
        "mem:64m",
        "--bs",
        "4k,8k,16k,32k",
        "--duration",
        "500ms",
        "-q",
    ])
    .expect_code(0);
    let bs: Vec<u64> = (0..r.doc.runs.len())
        .map(|i| {
            r.wire_run(i)["workload"]["bs"]["split"][0][0]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(bs, [4096, 8192, 16384, 32768]);
    let out = &r.stdout;
    assert!(
        out.contains("IOPS ratio each time the block size halves"),
        "{out}"
    );
    assert_eq!(out.matches("IOPS x").count(), 3, "{out}");
}

#[test]
fn skewed_distributions_run() {
    for dist in ["zipf:1.2", "pareto:0.9", "zoned:80/10:20/90"] {
        let r = run_json(&[
            "run",
            "--target",
            "mem:16m",
            "--dist",
            dist,
            "--duration",
            "300ms",
        ]);
        assert!(r.run(0).totals.all.ios > 0);
        assert_ne!(r.wire_run(0)["workload"]["dist"]["kind"], "uniform");
    }
    let o = run(&["run", "--target", "mem:16m", "--dist", "zoned:80/10:30/90"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_share_mix_keeps_one_rate_for_the_whole_mix() {
    // Regression: the mix's rate was counted once per workload, so a mix that kept
    // its 5 000 IOPS was reported at 50 % of a requested 10 000.
    let d = tempdir();
    let job = d.path().join("mix.toml");
    std::fs::write(
        &job,
        "[[target]]\nname = \"t\"\npath = \"null:1g\"\n[defaults]\nduration = 2\n\
         [[workload]]\nname = \"a\"\ntarget = \"t\"\nrate = 5000\nshare = 70\n\
         [[workload]]\nname = \"b\"\ntarget = \"t\"\nrw = \"randwrite\"\nrate = 5000\nshare = 30\n",
    )
    .unwrap();
    let r = run_json(&["run", job.to_str().unwrap()]);
    let s = r.run(0).schedule.as_ref().expect("schedule");
    assert_eq!(s.requested_iops, 5000.0);
    let pct = s.achieved_pct;
    // 99.27% in every run here, 99.05% once beside four CPU hogs; 2% is 40 ms of
    // the 2 s.
    assert!((pct - 100.0).abs() <= 2.0, "achieved {pct}%");
    let w = &r.run(0).workloads;
    let a = w[0].totals.all.ios as f64;
    let b = w[1].totals.all.ios as f64;
    assert!(
        (a / (a + b) - 0.7).abs() < 0.02,
        "share of a: {}",
        a / (a + b)
    );
}

/// `--stop-after-read-bytes` (vdbench's `maxdataread=`) ends a mixed run once its
/// measured reads pass the limit, whatever it wrote; `--stop-after-write-bytes`
/// likewise for writes. Each interval splits its bytes into read and written.
#[test]
fn a_read_or_write_data_limit_ends_a_mixed_run_on_its_own_direction() {
    let d = tempdir();
    for (flag, dir) in [
        ("--stop-after-read-bytes", "read"),
        ("--stop-after-write-bytes", "write"),
    ] {
        let r = ioscope_to(
            &d.path().join("r.json"),
            [
                "run",
                "--target",
                "mem:64m",
                "--rw",
                "randrw",
                "--read-pct",
                "75",
                "--bs",
                "4k",
                "--rate",
                "2000",
                "--duration",
                "60s",
                "--interval",
                "1s",
                flag,
                "2m",
                "-q",
            ],
        )
        .expect_code(0);
        let run = r.run(0);
        assert_eq!(run.end_reason.name(), "data_limit", "{flag}");
        let measured: Vec<_> = run.intervals.iter().filter(|i| !i.warmup).collect();
        for i in &measured {
            assert_eq!(i.read_bytes + i.write_bytes, i.bytes, "{flag}: {i:?}");
        }
        let moved: u64 = measured
            .iter()
            .map(|i| {
                if dir == "read" {
                    i.read_bytes
                } else {
                    i.write_bytes
                }
            })
            .sum();
        assert!(moved > 2 << 20, "{flag}: {moved}");
        // 1500 reads (500 writes) of 4 KiB a second pass 2 MiB in 1 s (5 s); 40 s
        // leaves room for a loaded machine and is still well short of the 60 s.
        assert!(run.duration_s < 40.0, "{flag}: {}", run.duration_s);
    }
}
