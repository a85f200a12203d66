//! fio's verify_backlog and fill_device run for real: read-backs during the run on
//! a file, and a small ext4 filesystem on a loop device filled, then read back.

use super::*;

/// Runs `ioscope run FILE` on a fio job file written into `dir` (refused, exit
/// 3, if anything in it were not translated).
fn run_fio(dir: &Path, job: &str) -> Ran {
    let file = dir.join("job.fio");
    std::fs::write(&file, job).unwrap();
    ioscope_to(&dir.join("r.json"), ["run", file.to_str().unwrap(), "-q"])
}

#[test]
fn verify_backlog_reads_back_what_each_stream_wrote_apart_from_its_reads() {
    let d = tempdir();
    let f = d.path().join("f.dat");
    // Two clones, each of which writes the job's 4 MiB (fio 3.33 counts 2048
    // writes for this job): ioscope's two streams share the 4 MiB working set and
    // make two passes over it, 1024 writes of 4k per stream.
    let job = |backlog: &str| {
        format!(
            "[w]\nfilename={}\nsize=4m\nbs=4k\nrw=randwrite\nioengine=io_uring\n\
             iodepth=4\nnumjobs=2\nverify=crc32c\ndo_verify=0\n{backlog}\n",
            f.display()
        )
    };
    let r = run_fio(d.path(), &job("verify_backlog=8")).expect_code(0);
    let run0 = r.run(0);
    let v = run0.verify.as_ref().expect("verify counts");
    assert_eq!(run0.totals.write.ios, 2048);
    // Every write read back (1024 per stream is a whole number of 8s) …
    assert_eq!(v.backlog_reads, 2048, "{v:?}");
    assert_eq!(v.backlog_bytes, 2048 * 4096, "{v:?}");
    // … and checked (do_verify=0: no pass after the run), all clean …
    assert_eq!(v.units_checked, 2048, "{v:?}");
    assert_eq!((v.ok, v.mismatches), (2048, 0), "{v:?}");
    // … but not the workload's reads.
    assert_eq!(run0.totals.read.ios, 0);
    assert_eq!(r.wire_run(0)["verify"]["backlog_reads"], 2048);

    // A batch of 3 every 8 writes: 1024 / 8 × 3 per stream.
    let r = run_fio(d.path(), &job("verify_backlog=8\nverify_backlog_batch=3")).expect_code(0);
    let v = r.run(0).verify.clone().expect("verify counts");
    assert_eq!((v.backlog_reads, v.units_checked), (768, 768), "{v:?}");
    assert_eq!(v.mismatches, 0, "{v:?}");
    // Without verify_backlog, nothing is read during the run.
    let r = run_fio(d.path(), &job("")).expect_code(0);
    let v = r.run(0).verify.clone().unwrap_or_default();
    assert_eq!((v.backlog_reads, v.units_checked), (0, 0), "{v:?}");
}

/// A loop device with a fresh ext4 on it, mounted in a directory of its own;
/// unmounted (then detached) on drop.
struct MountedExt4 {
    mnt: tempfile::TempDir,
    _dev: LoopDev,
}

impl MountedExt4 {
    fn new(size_mib: u64) -> Result<Self, String> {
        let dev = LoopDev::new(size_mib)?;
        let mk = Command::new("mkfs.ext4")
            .args(["-q", "-F", &dev.dev])
            .output()
            .map_err(|e| format!("mkfs.ext4: {e}"))?;
        if !mk.status.success() {
            return Err(format!(
                "mkfs.ext4: {}",
                String::from_utf8_lossy(&mk.stderr)
            ));
        }
        let mnt = tempdir();
        let o = Command::new("mount")
            .arg(&dev.dev)
            .arg(mnt.path())
            .output()
            .map_err(|e| format!("mount: {e}"))?;
        if !o.status.success() {
            return Err(format!("mount: {}", String::from_utf8_lossy(&o.stderr)));
        }
        Ok(MountedExt4 { mnt, _dev: dev })
    }

    fn free_bytes(&self) -> u64 {
        // SAFETY: statvfs is plain data; zeroed is a valid value for it.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        let c = std::ffi::CString::new(self.mnt.path().to_str().unwrap()).unwrap();
        // SAFETY: c is a NUL-terminated path and st a valid out pointer.
        assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
        st.f_bavail as u64 * st.f_frsize as u64
    }
}

impl Drop for MountedExt4 {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mnt.path()).status();
    }
}

/// The surface-scan shape: one job fills the filesystem with verified pattern
/// blocks, the next (after a stonewall) reads the file back and checks it.
fn fill_then_scan(file: &Path, size: &str) -> String {
    format!(
        "[global]\nbs=64k\ndirect=1\nioengine=sync\nverify=meta\n\
         verify_pattern=0xaa555aa5\nverify_interval=512\n\
         [fill]\nfilename={f}\nrw=write\nfill_device=1\ndo_verify=0\n{size}\n\
         [scan]\nstonewall\nfilename={f}\nrw=read\ndo_verify=1\n",
        f = file.display()
    )
}

#[test]
fn fill_device_fills_a_small_filesystem_and_the_next_job_reads_it_back_clean() {
    let fs = match MountedExt4::new(32) {
        Ok(m) => m,
        Err(why) => return skip_or_fail(&format!("ext4 on a loop device: {why}")),
    };
    let d = tempdir();
    let file = fs.mnt.path().join("data.tmp");
    let free = fs.free_bytes();
    let r = run_fio(d.path(), &fill_then_scan(&file, "")).expect_code(0);
    let (fill, scan) = (r.run(0), r.run(1));
    // The file is the free space in whole 64k blocks, written to the end.
    let len = std::fs::metadata(&file).unwrap().len();
    assert_eq!(len, free / 65536 * 65536, "free was {free}");
    assert_eq!(fill.totals.write.errors, 0);
    assert_eq!(fill.totals.write.bytes, len);
    assert!(fs.free_bytes() < 65536, "left {} free", fs.free_bytes());
    // The scan reads it all back and checks every 512-byte unit, twice (its own
    // reads and the pass after the run), with no mismatch.
    assert_eq!(scan.totals.read.bytes, len);
    let v = scan.verify.as_ref().expect("verify counts");
    assert_eq!(v.mismatches, 0, "{v:?}");
    assert_eq!(v.ok, 2 * len / 512, "{v:?}");
}

#[test]
fn fill_device_with_a_size_beyond_the_filesystem_ends_at_enospc_without_an_error() {
    let fs = match MountedExt4::new(32) {
        Ok(m) => m,
        Err(why) => return skip_or_fail(&format!("ext4 on a loop device: {why}")),
    };
    let d = tempdir();
    let file = fs.mnt.path().join("data.tmp");
    let free = fs.free_bytes();
    // 64 MiB asked on a 32 MiB filesystem: the writes run into ENOSPC.
    let r = run_fio(d.path(), &fill_then_scan(&file, "size=64m")).expect_code(0);
    let (fill, scan) = (r.run(0), r.run(1));
    assert_eq!(fill.totals.write.errors, 0);
    let written = fill.totals.write.bytes;
    assert!(
        written < 64 << 20 && written + (1 << 20) >= free,
        "wrote {written} of {free} free"
    );
    assert!(fs.free_bytes() < 65536, "left {} free", fs.free_bytes());
    // What was written reads back clean; the rest of the 64 MiB was never written.
    let v = scan.verify.as_ref().expect("verify counts");
    assert_eq!(v.mismatches, 0, "{v:?}");
    assert!(v.ok >= 2 * written / 512, "{v:?}");
    assert_eq!(scan.totals.read.errors, 0);
}

/// The cross-stripe shape on a loop device: clones each write one 16k block in
/// every 128k of their own region, `io_size` per loop, twice, reading every block
/// back right after it is written.
#[test]
fn cross_stripe_read_backs_cover_every_write_of_every_loop_on_a_device() {
    let dev = match LoopDev::new(64) {
        Ok(d) => d,
        Err(why) => return skip_or_fail(&format!("loop device: {why}")),
    };
    let d = tempdir();
    let job = format!(
        "[global]\nbs=16k\ndirect=1\nrw=write:112k\nverify=crc32c\nfilename={}\n\
         verify_backlog=1\noffset_increment=16m\nio_size=1m\noffset=120k\n\
         group_reporting\nverify_dump=1\nloops=2\n[write-verify]\nnumjobs=3\n",
        dev.dev
    );
    let r = run_fio(d.path(), &job).expect_code(0);
    let run0 = r.run(0);
    // 1 MiB of 16k writes per loop and clone: 64 × 2 loops × 3 clones.
    assert_eq!(run0.totals.write.ios, 384);
    assert_eq!(run0.totals.write.errors, 0);
    assert_eq!(
        run0.totals.read.ios, 0,
        "read-backs are not the job's reads"
    );
    let v = run0.verify.as_ref().expect("verify counts");
    assert_eq!(v.backlog_reads, 384, "{v:?}");
    assert_eq!(v.mismatches, 0, "{v:?}");
    // The second loop rewrote the first one's blocks (each loop starts at the
    // region's start): the pass after the run finds 64 × 3 distinct blocks of
    // 4 units, on top of the read-backs' 384 × 4.
    assert_eq!(v.units_checked, 384 * 4 + 192 * 4, "{v:?}");
}

/// The atomic-verify shape without RWF_ATOMIC (a file has no atomic write
/// limits): clones overwrite each other's blocks at random with
/// `verify_write_sequence=0`, and the check after the run raises no false alarm.
#[test]
fn overlapping_writers_without_the_sequence_check_raise_no_false_alarm() {
    let d = tempdir();
    let job = format!(
        "[write-and-verify]\nfilename={}\nsize=2m\nrw=randwrite\nbs=4k\ndirect=1\n\
         ioengine=libaio\niodepth=16\nverify=crc64\nverify_write_sequence=0\n\
         numjobs=6\nloops=4\n",
        d.path().join("f.dat").display()
    );
    let r = run_fio(d.path(), &job).expect_code(0);
    let v = r.run(0).verify.clone().expect("verify counts");
    assert_eq!(v.mismatches, 0, "{v:?}");
    assert!(
        v.ok > 0 && v.ok + v.torn + v.untracked == v.units_checked,
        "{v:?}"
    );
}

/// Blocks damaged behind the tool's back during the job are found by the
/// read-backs themselves: with `do_verify=0` and a job that only writes, nothing
/// else reads. A thread keeps zeroing the block at 16 KiB while the job rewrites
/// the file and reads each block back right after writing it.
#[test]
fn verify_backlog_finds_a_block_damaged_during_the_job() {
    use std::os::unix::fs::FileExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let d = tempdir();
    let f = d.path().join("f.dat");
    let job = format!(
        "[w]\nfilename={}\nsize=64k\nbs=4k\nrw=write\ndirect=1\nioengine=psync\n\
         verify=crc32c\ndo_verify=0\nverify_backlog=1\nruntime=2\ntime_based\n",
        f.display()
    );
    let done = Arc::new(AtomicBool::new(false));
    let hammer = {
        let (done, f) = (done.clone(), f.clone());
        std::thread::spawn(move || {
            let zeros = [0u8; 4096];
            let mut hits = 0u64;
            while !done.load(Ordering::Relaxed) {
                match std::fs::OpenOptions::new().write(true).open(&f) {
                    Ok(file) => {
                        while !done.load(Ordering::Relaxed) {
                            file.write_at(&zeros, 16384).unwrap();
                            hits += 1;
                        }
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
                }
            }
            hits
        })
    };
    let r = run_fio(d.path(), &job);
    done.store(true, Ordering::Relaxed);
    assert!(hammer.join().unwrap() > 0, "the file was never damaged");
    // Mismatches make the exit code 3 (nothing was refused: that would be 2).
    let r = r.expect_code(3);
    let v = r.run(0).verify.clone().expect("verify counts");
    // At least one whole pass over the 16 blocks was written and read back.
    assert!(v.backlog_reads >= 16, "{v:?}");
    assert_eq!(v.units_checked, v.backlog_reads, "{v:?}");
    assert!(v.mismatches > 0, "{v:?}");
    // Only the damaged block, reported as holding no header where a write was
    // acknowledged.
    assert_eq!(v.never_written, v.mismatches, "{v:?}");
    assert!(
        v.samples.iter().all(|s| s.offset == 16384),
        "{:?}",
        v.samples
    );
}
