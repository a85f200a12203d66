//! Exact numbers: with the mem engine every counted byte moved, so counts are exact.

use super::*;

#[test]
fn mem_passes_give_exact_counts() {
    let r = run_json(&[
        "run",
        "--target",
        "mem:64m",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--streams",
        "4",
        "--qd",
        "8",
        "--passes",
        "2",
    ]);
    let t = &r.run(0).totals;
    assert_eq!(t.all.ios, 2 * (64 << 20) / 4096);
    assert_eq!(t.all.bytes, 2 * (64 << 20));
    assert_eq!(t.read.ios, 2 * (64 << 20) / 4096);
    assert_eq!(t.write.ios, 0);
    assert_eq!(r.wire_run(0)["end_reason"], "passes");
    // Intervals add up to the totals when there is no warm-up.
    let sum: u64 = r.run(0).intervals.iter().map(|i| i.ios).sum();
    assert_eq!(sum, t.all.ios);
}

#[test]
fn mem_sequential_mixed_passes_exact() {
    let r = run_json(&[
        "run",
        "--target",
        "mem:16m",
        "--rw",
        "rw",
        "--read-pct",
        "30",
        "--bs",
        "64k",
        "--streams",
        "2",
        "--passes",
        "3",
    ]);
    let t = &r.run(0).totals;
    assert_eq!(t.all.bytes, 3 * (16 << 20));
    let reads = t.read.ios as f64;
    let all = t.all.ios as f64;
    assert!(
        (reads / all - 0.30).abs() < 0.03,
        "read share {}",
        reads / all
    );
}

#[test]
fn data_written_to_mem_reads_back() {
    // A write pass then a read pass in one job would need a job file; here the run
    // just checks writes are counted exactly in bytes.
    let r = run_json(&[
        "run", "--target", "mem:8m", "--rw", "write", "--bs", "1m", "--passes", "1",
    ]);
    assert_eq!(r.run(0).totals.write.bytes, 8 << 20);
    assert_eq!(r.run(0).totals.write.ios, 8);
}

#[test]
fn many_streams_few_threads() {
    let r = run_json(&[
        "run",
        "--target",
        "null:1g",
        "--streams",
        "500",
        "--qd",
        "1",
        "--duration",
        "1s",
    ]);
    let run = r.run(0);
    assert_eq!(run.streams, 500);
    assert!(run.workers <= 4, "workers {}", run.workers);
    assert!(run.totals.all.ios > 0);
}

#[test]
fn shares_split_the_io_between_workloads() {
    let d = tempdir();
    let job = d.path().join("skew.toml");
    std::fs::write(
        &job,
        r#"
[defaults]
duration = "1s"

[[target]]
name = "m"
path = "mem:64m"

[[workload]]
name = "small-reads"
rw = "randread"
bs = "4k"
qd = 4
streams = 2
share = 70

[[workload]]
name = "big-writes"
rw = "write"
bs = "64k"
share = 30
dist = "uniform"
"#,
    )
    .unwrap();
    let r = run_json(&["run", job.to_str().unwrap()]);
    let run = r.run(0);
    assert_eq!(
        run.streams, 2,
        "a share mix runs on its first workload's streams"
    );
    let w = &run.workloads;
    let small = w[0].totals.all.ios as f64;
    let big = w[1].totals.all.ios as f64;
    let share = small / (small + big);
    assert!((share - 0.7).abs() < 0.02, "small-read share {share}");
    assert_eq!(w[0].totals.write.ios, 0);
    assert_eq!(w[1].totals.read.ios, 0);
    assert_eq!(w[1].totals.all.bytes % 65536, 0);
}

#[test]
fn stride_streams_write_every_block_exactly_once() {
    let r = run_json(&[
        "run",
        "--target",
        "mem:16m",
        "--rw",
        "write",
        "--bs",
        "4k",
        "--streams",
        "4",
        "--qd",
        "2",
        "--seq-layout",
        "stride",
        "--passes",
        "1",
        "--verify-after",
    ]);
    assert_eq!(r.run(0).totals.all.ios, (16 << 20) / 4096);
    assert_eq!(r.wire_run(0)["workload"]["seq_layout"], "stride");
    // Every unit was written (none untracked) and holds its own write.
    let v = r.run(0).verify.as_ref().expect("verify counts");
    assert_eq!(v.untracked, 0, "{v:?}");
    assert_eq!(v.mismatches, 0, "{v:?}");
    assert_eq!(v.ok, (16 << 20) / 4096, "{v:?}");
}
