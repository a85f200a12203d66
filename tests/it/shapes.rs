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
