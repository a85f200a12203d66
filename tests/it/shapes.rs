//! fio's access shapes run for real and checked on what they leave: a sequence
//! distribution writes exactly its blocks, and per-direction block sizes give each
//! direction its own mean transfer size.

use super::*;

const K: u64 = 1024;

/// A file of `blocks` zeroed 4 KiB blocks.
fn zeroed(dir: &Path, blocks: u64) -> PathBuf {
    let path = dir.join("seq.dat");
    std::fs::write(&path, vec![0u8; (blocks * 4 * K) as usize]).unwrap();
    path
}

/// The 4 KiB blocks of `path` that hold anything but zeros.
fn written_blocks(path: &Path) -> Vec<u64> {
    let data = std::fs::read(path).unwrap();
    data.chunks(4 * K as usize)
        .enumerate()
        .filter(|(_, c)| c.iter().any(|&b| b != 0))
        .map(|(i, _)| i as u64)
        .collect()
}

/// Runs the fio job `body` (after a `filename=` line for `path`) through ioscope.
fn run_fio_job(dir: &Path, path: &Path, body: &str) -> Ran {
    let job = dir.join("seq.fio");
    let text = format!("[seq]\nfilename={}\nioengine=psync\n{body}", path.display());
    std::fs::write(&job, text).unwrap();
    ioscope_to(&dir.join("r.json"), ["fio", job.to_str().unwrap()]).expect_code(0)
}

#[test]
fn a_sequence_writes_exactly_its_blocks() {
    let dir = tempdir();
    let path = zeroed(dir.path(), 16);
    // io_size is half a pass: six writes, 5,1,3 twice.
    let r = run_fio_job(
        dir.path(),
        &path,
        "rw=randwrite\nbs=4k\nsize=64k\nio_size=24k\nrandom_distribution=sequence:5,1,3\n",
    );
    assert_eq!(r.run(0).totals.write.ios, 6);
    assert_eq!(written_blocks(&path), vec![1, 3, 5]);
    assert_eq!(
        r.wire_run(0)["workload"]["dist"],
        serde_json::json!({"kind": "sequence", "blocks": [5, 1, 3]})
    );
}

#[test]
fn a_strided_sequence_walks_on_and_ends_past_the_working_set() {
    let dir = tempdir();
    let path = zeroed(dir.path(), 12);
    // 10 blocks: 2,0,1, 5,3,4, 8,6,7, then block 11 is past the end and the job ends
    // after 9 writes (fio's job ends there too), leaving block 9 untouched.
    let r = run_fio_job(
        dir.path(),
        &path,
        "rw=randwrite\nbs=4k\nsize=40k\nrandom_distribution=sequence:2,0,1\n\
         random_sequence_stride=1\n",
    );
    assert_eq!(r.run(0).totals.write.ios, 9);
    assert_eq!(written_blocks(&path), (0..9).collect::<Vec<u64>>());
    assert_eq!(r.wire_run(0)["workload"]["dist"]["stride"], true);
}

#[test]
fn per_direction_block_sizes_give_each_direction_its_mean_size() {
    // fio's bssplit=64k/40:1024k/60,1024k/100 as a job file: reads 40 % 64 KiB and
    // 60 % 1 MiB, writes 1 MiB only.
    let dir = tempdir();
    let job = dir.path().join("split.toml");
    std::fs::write(
        &job,
        r#"
[defaults]
passes = 1

[[target]]
name = "s"
path = "sim:64g?service=10us&time=virtual"

[[workload]]
rw = "randrw"
read_pct = 50
bs = { "64k" = 40, "1m" = 60 }
write_bs = "1m"
qd = 4
stop_after_ios = 20000
pattern = "0xab"
"#,
    )
    .unwrap();
    let r = run_json(&["run", job.to_str().unwrap()]);
    let t = &r.run(0).totals;
    assert_eq!(t.all.ios, 20000);
    let mean = |bytes: u64, ios: u64| bytes as f64 / ios as f64;
    let want_read = 0.4 * 65536.0 + 0.6 * 1048576.0;
    let read = mean(t.read.bytes, t.read.ios);
    assert!(
        (read / want_read - 1.0).abs() < 0.02,
        "read mean {read} vs {want_read}"
    );
    assert_eq!(t.write.bytes, t.write.ios * 1048576, "every write is 1 MiB");
    assert!(t.write.ios > 9000, "writes {}", t.write.ios);
    let bs = &r.wire_run(0)["workload"]["bs"];
    assert_eq!(bs["write_split"], serde_json::json!([[1048576, 100]]));
}

#[test]
fn fio_bssplit_per_direction_runs_with_its_cmdprio_shares() {
    // The shape of fio's cmdprio-bssplit example on io_uring: the 64 KiB reads at a
    // priority of their own (best effort 0), writes of 1 MiB at the job's.
    let dir = tempdir();
    let job = dir.path().join("prio.fio");
    let file = dir.path().join("prio.dat");
    std::fs::write(
        &job,
        format!(
            "[p]\nfilename={}\nioengine=io_uring\niodepth=4\nrw=randrw\nsize=8m\n\
             number_ios=400\nloops=60\nverify_pattern=0xab\nbssplit=64k/40:1024k/60,1024k/100\n\
             cmdprio_bssplit=64k/100:1024k/0,1024k/0\ncmdprio_class=2\ncmdprio=0\n",
            file.display()
        ),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let r = ioscope_to(&json, ["fio", job.to_str().unwrap()]).expect_code(0);
    let t = &r.run(0).totals;
    assert_eq!(t.all.ios, 400);
    assert_eq!(t.write.bytes, t.write.ios * 1048576, "every write is 1 MiB");
    let read = t.read.bytes as f64 / t.read.ios as f64;
    assert!(
        read > 65536.0 && read < 1048576.0,
        "reads of both sizes: {read}"
    );
    let w = &r.wire_run(0)["workload"];
    assert_eq!(
        w["bs"]["split"],
        serde_json::json!([[65536, 40], [1048576, 60]])
    );
    assert_eq!(w["bs"]["write_split"], serde_json::json!([[1048576, 100]]));
}
