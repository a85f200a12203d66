//! Trim (discard) as a third direction, shown on what the storage itself reports: the
//! holes punched in a file (st_blocks, SEEK_DATA), the discards a loop device's
//! kernel counters saw, and the trims nbdkit counted.

use super::*;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;

/// A file of `mib` MiB written through ioscope (sequential 1 MiB writes, one pass).
fn written_file(dir: &Path, mib: u64) -> PathBuf {
    let path = dir.join("t.dat");
    let size = format!("{mib}m");
    let p = path.to_str().unwrap();
    run_json(&[
        "run", "-t", p, "--size", &size, "--rw", "write", "--bs", "1m", "--passes", "1",
    ]);
    let m = std::fs::metadata(&path).unwrap();
    assert!(m.blocks() * 512 >= mib << 20, "written file is sparse");
    path
}

/// The first data offset at or after `from`, or `None` when the rest is a hole.
fn seek_data(path: &Path, from: u64) -> Option<u64> {
    let f = std::fs::File::open(path).unwrap();
    // SAFETY: plain lseek on our own descriptor.
    let r = unsafe { libc::lseek(f.as_raw_fd(), from as libc::off_t, libc::SEEK_DATA) };
    (r >= 0).then_some(r as u64)
}

#[test]
fn a_trim_pass_punches_the_whole_file_out_on_sync_and_uring() {
    for engine in ["sync", "uring"] {
        let dir = tempdir();
        let path = written_file(dir.path(), 8);
        let p = path.to_str().unwrap();
        let r = run_json(&[
            "run", "-t", p, "--rw", "trim", "--bs", "64k", "--qd", "4", "--passes", "1",
            "--engine", engine,
        ]);
        let t = &r.run(0).totals;
        let trim = t.trim.as_ref().expect("a trim section");
        assert_eq!((trim.ios, trim.bytes), (128, 8 << 20), "{engine}");
        assert_eq!(
            (t.read.ios, t.write.ios, trim.errors),
            (0, 0, 0),
            "{engine}"
        );
        assert_eq!(r.wire_run(0)["workload"]["trim"], "only");
        let m = std::fs::metadata(&path).unwrap();
        assert_eq!(m.len(), 8 << 20, "{engine}: the file keeps its length");
        assert_eq!(m.blocks(), 0, "{engine}: every block released");
        assert_eq!(seek_data(&path, 0), None, "{engine}: all one hole");
        assert!(std::fs::read(&path).unwrap().iter().all(|&b| b == 0));
    }
}

#[test]
fn trimwrite_trims_and_writes_each_block_once_per_pass() {
    let dir = tempdir();
    let path = written_file(dir.path(), 4);
    let p = path.to_str().unwrap();
    let r = run_json(&[
        "run",
        "-t",
        p,
        "--rw",
        "trimwrite",
        "--bs",
        "64k",
        "--passes",
        "1",
        "--engine",
        "sync",
    ]);
    let t = &r.run(0).totals;
    let trim = t.trim.as_ref().expect("a trim section");
    assert_eq!((trim.ios, t.write.ios, t.read.ios), (64, 64, 0));
    assert_eq!(t.all.ios, 128);
    // Each block was written after its trim: allocated again, holding new data.
    let m = std::fs::metadata(&path).unwrap();
    assert!(m.blocks() * 512 >= 4 << 20, "{} blocks", m.blocks());
    assert_eq!(r.wire_run(0)["workload"]["trim"], "then_write");
}

/// Discards completed (field 12) and sectors discarded (field 14) of /sys/block/X/stat.
fn kernel_discards(name: &str) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let v: Vec<u64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
    (v[11], v[13])
}

#[test]
fn device_trims_match_the_kernels_discard_count() {
    let dev = match LoopDev::new(32) {
        Ok(d) => d,
        Err(why) => return skip_or_fail(&format!("loop device: {why}")),
    };
    // sync: BLKDISCARD; uring: the block device's discard command.
    for engine in ["sync", "uring"] {
        let before = kernel_discards(&dev.name());
        let r = run_json(&[
            "run", "-t", &dev.dev, "--rw", "randtrim", "--bs", "256k", "--qd", "4", "--passes",
            "1", "--engine", engine, "--force",
        ]);
        let after = kernel_discards(&dev.name());
        let trim = r.run(0).totals.trim.clone().expect("a trim section");
        assert_eq!((trim.ios, trim.errors), (128, 0), "{engine}");
        assert_eq!(
            after.0 - before.0,
            128,
            "{engine}: discards the kernel completed"
        );
        assert_eq!(after.1 - before.1, 128 * 512, "{engine}: 512-byte sectors");
        assert_eq!(r.run(0).engine, engine);
    }
}

#[test]
fn verify_with_trims_is_refused_before_anything_is_created() {
    let dir = tempdir();
    let path = dir.path().join("never.dat");
    let o = run(&[
        "run",
        "-t",
        path.to_str().unwrap(),
        "--size",
        "1m",
        "--rw",
        "randtrim",
        "--verify",
        "--duration",
        "1s",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("verification with trims"),
        "{}",
        stderr(&o)
    );
    assert!(!path.exists());
    let o = run(&[
        "run",
        "-t",
        "mem:1m",
        "--rw",
        "trim",
        "--read-pct",
        "30",
        "--duration",
        "1s",
    ]);
    assert!(stderr(&o).contains("issues no reads"), "{}", stderr(&o));
}

#[test]
fn sim_and_mem_targets_count_their_trims() {
    let r = run_json(&[
        "run",
        "-t",
        "sim:4m?service=20us",
        "--rw",
        "randtrim",
        "--bs",
        "4k",
        "--qd",
        "2",
        "--passes",
        "1",
    ]);
    let trim = r.run(0).totals.trim.clone().expect("a trim section");
    assert_eq!(trim.ios, 1024);
    // The model serves a trim like any request: at least its service time each.
    assert!(trim.latency_us.min >= 19.0, "{}", trim.latency_us.min);
    let r = run_json(&[
        "run",
        "-t",
        "mem:4m",
        "--rw",
        "trimwrite",
        "--bs",
        "4k",
        "--passes",
        "2",
    ]);
    let t = &r.run(0).totals;
    assert_eq!((t.trim.as_ref().unwrap().ios, t.write.ios), (2048, 2048));
}

/// The hole and data extents of a file: (start, end, is_hole), by SEEK_HOLE/SEEK_DATA.
fn extents(path: &Path) -> Vec<(u64, u64, bool)> {
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len();
    let seek = |from: u64, whence| {
        // SAFETY: plain lseek on our own descriptor.
        let r = unsafe { libc::lseek(f.as_raw_fd(), from as libc::off_t, whence) };
        if r < 0 {
            len
        } else {
            r as u64
        }
    };
    let mut out = Vec::new();
    let mut at = 0;
    while at < len {
        let hole = seek(at, libc::SEEK_HOLE) == at;
        let next = seek(
            at,
            if hole {
                libc::SEEK_DATA
            } else {
                libc::SEEK_HOLE
            },
        );
        out.push((at, next, hole));
        at = next;
    }
    out
}

#[test]
fn strided_zones_trim_zonesize_then_skip_zoneskip() {
    // fio's zonemode=strided, zonesize=64k, zoneskip=192k, over 1 MiB: trims mark
    // exactly where the zones' I/O went.
    let dir = tempdir();
    let path = written_file(dir.path(), 1);
    let job = dir.path().join("zones.fio");
    std::fs::write(
        &job,
        format!(
            "[z]\nfilename={}\nioengine=psync\nrw=trim\nbs=16k\nzonemode=strided\n\
             zonesize=64k\nzoneskip=192k\n",
            path.display()
        ),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let r = ioscope_to(&json, ["fio", job.to_str().unwrap()]).expect_code(0);
    let trim = r.run(0).totals.trim.clone().expect("a trim section");
    // One pass: 4 zones of 4 trims; the skipped bytes complete the pass.
    assert_eq!(trim.ios, 16);
    let k = 1024;
    let holes: Vec<(u64, u64)> = extents(&path)
        .into_iter()
        .filter(|e| e.2)
        .map(|e| (e.0, e.1))
        .collect();
    assert_eq!(
        holes,
        vec![
            (0, 64 * k),
            (256 * k, 320 * k),
            (512 * k, 576 * k),
            (768 * k, 832 * k)
        ]
    );
    let z = &r.wire_run(0)["workload"]["zones"];
    assert_eq!(
        (z["io_bytes"].as_u64(), z["skip_bytes"].as_u64()),
        (Some(64 * k), Some(192 * k))
    );
}

#[test]
fn offset_increment_moves_each_clones_region() {
    // fio's offset_increment: clone i works on [i × 512k, i × 512k + 128k).
    let dir = tempdir();
    let path = written_file(dir.path(), 1);
    let job = dir.path().join("inc.fio");
    std::fs::write(
        &job,
        format!(
            "[inc]\nfilename={}\nioengine=psync\nrw=trim\nbs=64k\nsize=128k\nnumjobs=2\n\
             offset_increment=512k\n",
            path.display()
        ),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let r = ioscope_to(&json, ["fio", job.to_str().unwrap()]).expect_code(0);
    assert_eq!(r.run(0).totals.trim.as_ref().unwrap().ios, 4);
    let k = 1024;
    let holes: Vec<(u64, u64)> = extents(&path)
        .into_iter()
        .filter(|e| e.2)
        .map(|e| (e.0, e.1))
        .collect();
    assert_eq!(holes, vec![(0, 128 * k), (512 * k, 640 * k)]);
    assert_eq!(
        r.wire_run(0)["workload"]["offset_increment_bytes"].as_u64(),
        Some(512 * k)
    );
}
