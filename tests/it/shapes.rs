//! fio's access shapes run for real and checked on what they leave: a sequence
//! distribution writes exactly its blocks, per-direction block sizes give each
//! direction its own mean transfer size, and fio's random map reads every block once
//! per pass (`norandommap`: independent draws).

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

/// (offset, length) of every I/O of a fio version 3 I/O log, in issue order.
fn logged_ios(path: &Path) -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 5 && matches!(f[2], "read" | "write"))
        .map(|f| (f[3].parse().unwrap(), f[4].parse().unwrap()))
        .collect()
}

/// `ioscope run JOB --record LOG` for a job of one partly random workload: the
/// recorded (offset, length) of its I/Os, after checking the plan's `random_pct`.
fn recorded_run(dir: &Path, job: &Path, random_pct: f64) -> Vec<(u64, u64)> {
    let rec = dir.join("rec.iolog");
    let r = ioscope_to(
        &dir.join("r.json"),
        [
            "run",
            job.to_str().unwrap(),
            "--record",
            rec.to_str().unwrap(),
        ],
    )
    .expect_code(0);
    let w = &r.wire["plan"]["runs"][0]["workloads"][0];
    assert_eq!(w["random_pct"], random_pct, "{w}");
    logged_ios(&rec)
}

/// The share of `ios` that start where their predecessor ended is `want`, within
/// 4 σ of a binomial share (σ = sqrt(p(1-p)/n)) plus `slack` for the few I/Os that
/// follow by other means (a wrap to the start, a random draw that lands just after).
#[track_caller]
fn assert_following_share(ios: &[(u64, u64)], want: f64, slack: f64) {
    let follow = ios.windows(2).filter(|w| w[1].0 == w[0].0 + w[0].1).count();
    let share = follow as f64 / (ios.len() - 1) as f64;
    let sigma = (want * (1.0 - want) / ios.len() as f64).sqrt();
    assert!(
        (share - want).abs() <= 4.0 * sigma + slack,
        "{share:.4} of {} I/Os continued their predecessor, not {want}",
        ios.len()
    );
}

// vdbench's seekpct=30: each I/O is random with probability 30 %, else it continues
// from the previous one (WG_entry.wg_random_or_seq). Recorded with --record and
// counted: one thread, so the log's order is the stream's; about 30,000 I/Os (the
// warm-up's included) give σ ≈ 0.003; the slack covers wraps (a 64 MiB set of 8 KiB
// blocks: at most 3 here) and random I/Os that land just after (1 in 8192).
#[test]
fn a_partly_random_vdbench_wd_continues_from_its_previous_io_as_often_as_it_says() {
    let dir = tempdir();
    let parm = dir.path().join("mix.parm");
    std::fs::write(
        &parm,
        "sd=sd1,lun=sim:64m?service=100us&servers=1&time=virtual,threads=1\n\
         wd=wd1,sd=sd1,xfersize=8k,rdpct=70,seekpct=30\n\
         rd=rd1,wd=wd1,iorate=max,elapsed=3,interval=1\n",
    )
    .unwrap();
    let ios = recorded_run(dir.path(), &parm, 30.0);
    assert!(ios.len() > 4000, "{} I/Os recorded", ios.len());
    assert_following_share(&ios, 0.70, 0.005);
    // The other 30 % are spread over the whole set, not a second sweep.
    let highest_jump = ios
        .windows(2)
        .filter(|w| w[1].0 != w[0].0 + w[0].1)
        .map(|w| w[1].0)
        .max();
    assert!(highest_jump > Some(48 << 20), "random I/Os stay low");
}

// fio's percentage_random=80 on a random job: 20 % of the I/Os continue from the
// previous one, the same way (fio's get_next_block); 5,000 I/Os on a 16 MiB file of
// 8 KiB blocks (a random I/O lands after its predecessor 1 in 2048).
#[test]
fn fio_percentage_random_gives_the_same_mix() {
    let dir = tempdir();
    let job = dir.path().join("mix.fio");
    let text = format!(
        "[mix]\nfilename={}\nsize=16m\nioengine=psync\nrw=randread\nbs=8k\n\
         percentage_random=80\nnumber_ios=5000\ntime_based\nruntime=60\n",
        dir.path().join("mix.dat").display()
    );
    std::fs::write(&job, text).unwrap();
    let ios = recorded_run(dir.path(), &job, 80.0);
    assert_eq!(ios.len(), 5000, "I/Os recorded");
    assert_following_share(&ios, 0.20, 0.001);
}

/// `ioscope run` of a fio job of 4 KiB random reads over a 512 KiB file (128
/// blocks), recorded: the plan's `random_map` and the blocks read, in issue order.
fn random_blocks(dir: &Path, extra: &str, ios: u64) -> (serde_json::Value, Vec<u64>) {
    let job = dir.join("rand.fio");
    let text = format!(
        "[rand]\nfilename={}\nsize=512k\nioengine=psync\nrw=randread\nbs=4k\n\
         number_ios={ios}\n{extra}",
        dir.join("rand.dat").display()
    );
    std::fs::write(&job, text).unwrap();
    let rec = dir.join("rand.iolog");
    let args = [
        "run",
        job.to_str().unwrap(),
        "--record",
        rec.to_str().unwrap(),
    ];
    let r = ioscope_to(&dir.join("r.json"), args).expect_code(0);
    let map = r.wire["runs"][0]["workload"]["random_map"].clone();
    let blocks = logged_ios(&rec)
        .into_iter()
        .map(|(o, len)| {
            assert_eq!((o % (4 * K), len), (0, 4 * K), "a 4 KiB block");
            o / (4 * K)
        })
        .collect();
    (map, blocks)
}

/// The distinct blocks of `pass`.
fn distinct(pass: &[u64]) -> usize {
    pass.iter().collect::<std::collections::BTreeSet<_>>().len()
}

// fio keeps a random map unless norandommap: 128 random reads of a 128-block file
// read every block once. Regression: ioscope drew each offset independently, and
// read 82 distinct blocks.
#[test]
fn a_fio_random_job_reads_every_block_once_per_pass() {
    let dir = tempdir();
    let (map, blocks) = random_blocks(dir.path(), "", 128);
    assert_eq!(map, true, "the translation keeps fio's random map");
    assert_eq!(blocks.len(), 128);
    assert_eq!(distinct(&blocks), 128, "every block once: {blocks:?}");
    assert!(blocks.iter().all(|&b| b < 128));
    // Two passes: each touches every block once, in another order.
    let (_, two) = random_blocks(dir.path(), "loops=2\n", 256);
    let (first, second) = two.split_at(128);
    assert_eq!((distinct(first), distinct(second)), (128, 128));
    assert_ne!(first, second, "the second pass repeats the first's order");
}

// norandommap: fio draws each offset independently, and so does the translation —
// 128 draws over 128 blocks touch about 81 (128 × (1 − (127/128)^128)).
#[test]
fn norandommap_draws_offsets_independently() {
    let dir = tempdir();
    let (map, blocks) = random_blocks(dir.path(), "norandommap\n", 128);
    assert_eq!(map, false);
    assert_eq!(blocks.len(), 128);
    let n = distinct(&blocks);
    assert!((60..=100).contains(&n), "{n} distinct blocks of 128 draws");
}
