//! What a request carries beside its bytes, seen by the kernel: I/O priorities in
//! `block:block_rq_issue` (each request's class, hint and level on a loop device)
//! and RWF_ATOMIC in `iomap:iomap_dio_rw_begin` (the write's `ATOMIC` flag on XFS,
//! which offers atomic writes on any device since Linux 6.16). Each test traces into
//! a tracefs instance of its own, filtered to its own device, and removes it after.

use super::*;
use std::path::PathBuf;

/// A tracefs instance with one event enabled under a filter; removed on drop.
struct Trace {
    dir: PathBuf,
    event: String,
}

impl Trace {
    /// Traces `event` (`group/name`) where `filter` holds, or says why it cannot.
    fn new(tag: &str, event: &str, filter: &str) -> Result<Trace, String> {
        let root = Path::new("/sys/kernel/tracing");
        if !root.join("instances").is_dir() {
            let _ = Command::new("mount")
                .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
                .status();
        }
        if !root.join("events").join(event).is_dir() {
            return Err(format!("tracefs event {event} not available"));
        }
        let dir = root
            .join("instances")
            .join(format!("ioscope-{tag}-{}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| format!("tracefs instance: {e}"))?;
        let t = Trace {
            dir,
            event: event.to_string(),
        };
        t.write("buffer_size_kb", "8192")?;
        t.write(&format!("events/{event}/filter"), filter)?;
        t.write(&format!("events/{event}/enable"), "1")?;
        Ok(t)
    }

    fn write(&self, file: &str, value: &str) -> Result<(), String> {
        std::fs::write(self.dir.join(file), value).map_err(|e| format!("{file}: {e}"))
    }

    /// The recorded event lines (tracing stops first).
    fn lines(&self) -> Vec<String> {
        let _ = self.write(&format!("events/{}/enable", self.event), "0");
        std::fs::read_to_string(self.dir.join("trace"))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Trace {
    fn drop(&mut self) {
        let _ = self.write(&format!("events/{}/enable", self.event), "0");
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The kernel's dev_t of a block device as trace filters compare it (major << 20 | minor).
fn trace_dev(name: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/sys/block/{name}/dev")).unwrap();
    let (maj, min) = text.trim().split_once(':').unwrap();
    maj.parse::<u64>().unwrap() << 20 | min.parse::<u64>().unwrap()
}

/// Requests per priority in block_rq_issue lines: "… R 4096 () 45536 + 8 be,0,6 [comm]"
/// (class, hint, level).
fn by_priority(lines: &[String]) -> std::collections::BTreeMap<String, u64> {
    let mut out = std::collections::BTreeMap::new();
    for l in lines {
        let Some(before_comm) = l.rsplit_once(" [").map(|(a, _)| a) else {
            continue;
        };
        if let Some(prio) = before_comm.rsplit(' ').next() {
            *out.entry(prio.to_string()).or_insert(0) += 1;
        }
    }
    out
}

fn traced_loop(tag: &str) -> Option<(LoopDev, Trace)> {
    let dev = match LoopDev::new(64) {
        Ok(d) => d,
        Err(why) => {
            skip_or_fail(&format!("loop device: {why}"));
            return None;
        }
    };
    let filter = format!("dev == {}", trace_dev(&dev.name()));
    match Trace::new(tag, "block/block_rq_issue", &filter) {
        Ok(t) => Some((dev, t)),
        Err(why) => {
            skip_or_fail(&why);
            None
        }
    }
}

#[test]
fn every_request_carries_the_job_priority_and_a_share_its_own() {
    let Some((dev, trace)) = traced_loop("prio") else {
        return;
    };
    let r = ioscope_result([
        "run",
        "--target",
        &dev.dev,
        "--engine",
        "uring",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "4",
        "--rate",
        "4000",
        "--duration",
        "1s",
        "--prio",
        "be/6",
        "--cmdprio",
        "30%rt/2",
        "-q",
    ])
    .expect_code(0);
    let seen = by_priority(&trace.lines());
    let (job, share) = (seen.get("be,0,6"), seen.get("rt,0,2"));
    let total: u64 = seen.values().sum();
    assert_eq!(
        job.unwrap_or(&0) + share.unwrap_or(&0),
        total,
        "a request at another priority: {seen:?}"
    );
    let ours = r.run(0).totals.read.ios;
    assert!(total >= ours, "traced {total} of ioscope's {ours} reads");
    let frac = *share.unwrap_or(&0) as f64 / total as f64;
    // 4000 draws of 30 %: a standard deviation of 0.7 points.
    assert!(
        (0.26..=0.34).contains(&frac),
        "rt share {frac:.3}: {seen:?}"
    );
    let echo = &r.wire_run(0)["workload"]["priority"];
    assert_eq!(echo["job"]["class"], "be", "{echo}");
    assert_eq!(echo["per_io"][0]["pct"], 30, "{echo}");
}

#[test]
fn a_sync_worker_issues_at_its_threads_priority_and_refuses_per_request_ones() {
    let Some((dev, trace)) = traced_loop("sync") else {
        return;
    };
    ioscope_result([
        "run",
        "--target",
        &dev.dev,
        "--engine",
        "sync",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--rate",
        "2000",
        "--duration",
        "500ms",
        "--prio",
        "idle",
        "-q",
    ])
    .expect_code(0);
    let seen = by_priority(&trace.lines());
    assert_eq!(seen.keys().collect::<Vec<_>>(), ["idle,0,0"], "{seen:?}");
    let o = run(&[
        "run",
        "--target",
        &dev.dev,
        "--engine",
        "sync",
        "--duration",
        "500ms",
        "--cmdprio",
        "10%rt",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("per-I/O priorities"), "{}", stderr(&o));
}

/// An XFS file system on a loop device, mounted in a temp dir; unmounted on drop.
struct Xfs {
    dev: LoopDev,
    mnt: tempfile::TempDir,
}

impl Xfs {
    fn new() -> Result<Xfs, String> {
        let dev = LoopDev::new(320)?;
        let mk = Command::new("mkfs.xfs")
            .args(["-q", "-f", &dev.dev])
            .output()
            .map_err(|e| format!("mkfs.xfs: {e} (install xfsprogs)"))?;
        if !mk.status.success() {
            return Err(format!("mkfs.xfs: {}", String::from_utf8_lossy(&mk.stderr)));
        }
        let mnt = tempdir();
        let m = Command::new("mount")
            .arg(&dev.dev)
            .arg(mnt.path())
            .output()
            .map_err(|e| format!("mount: {e}"))?;
        if !m.status.success() {
            return Err(format!("mount: {}", String::from_utf8_lossy(&m.stderr)));
        }
        Ok(Xfs { dev, mnt })
    }
}

impl Drop for Xfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mnt.path()).status();
    }
}

/// Direct I/Os traced by iomap (the runs only write), and how many carried ATOMIC.
fn atomic_writes(lines: &[String]) -> (usize, usize) {
    let atomic = lines.iter().filter(|l| l.contains("ATOMIC")).count();
    (lines.len(), atomic)
}

#[test]
fn atomic_writes_reach_the_file_system_with_rwf_atomic() {
    let fs = match Xfs::new() {
        Ok(f) => f,
        Err(why) => return skip_or_fail(&why),
    };
    let filter = format!("dev == {}", trace_dev(&fs.dev.name()));
    let file = fs.mnt.path().join("t.dat");
    let file = file.to_str().unwrap();
    for engine in ["uring", "sync"] {
        let trace = match Trace::new(engine, "iomap/iomap_dio_rw_begin", &filter) {
            Ok(t) => t,
            Err(why) => return skip_or_fail(&why),
        };
        let r = ioscope_result([
            "run",
            "--target",
            file,
            "--size",
            "32m",
            "--engine",
            engine,
            "--rw",
            "randwrite",
            "--bs",
            "16k",
            "--qd",
            "4",
            "--rate",
            "2000",
            "--duration",
            "500ms",
            "--atomic-writes",
            "-q",
        ])
        .expect_code(0);
        let (writes, atomic) = atomic_writes(&trace.lines());
        let ours = r.run(0).totals.write.ios as usize;
        // XFS does each atomic write as a copy-on-write with a log commit: on a busy
        // 2-core VM a sync stream manages 50-500 a second.
        assert!(ours >= 10, "{engine}: too few writes ({ours})");
        assert!(writes >= ours, "{engine}: traced {writes} of {ours} writes");
        assert_eq!(atomic, writes, "{engine}: a write without RWF_ATOMIC");
        assert_eq!(r.wire_run(0)["workload"]["atomic_writes"], true);
    }
    // The same run without the flag: no write carries it.
    let trace = Trace::new("plain", "iomap/iomap_dio_rw_begin", &filter).unwrap();
    ioscope_result([
        "run",
        "--target",
        file,
        "--rw",
        "randwrite",
        "--bs",
        "16k",
        "--rate",
        "1000",
        "--duration",
        "300ms",
        "-q",
    ])
    .expect_code(0);
    let (writes, atomic) = atomic_writes(&trace.lines());
    assert!(
        writes >= 10 && atomic == 0,
        "{writes} writes, {atomic} atomic"
    );
}

#[test]
fn atomic_writes_are_refused_where_the_target_cannot_take_them() {
    // The temp directory's file system (ext4 or tmpfs here) has no atomic writes:
    // refused naming the option. A file the run would create is created before
    // statx can be asked (a directory reports no limits), so that refusal comes from
    // the run (exit 1) and removes the file again; an existing file is refused by
    // the checks (exit 2), unwritten.
    let dir = tempdir();
    let file = dir.path().join("a.dat");
    let args = |f: &str| {
        [
            "run",
            "--target",
            f,
            "--size",
            "8m",
            "--rw",
            "randwrite",
            "--duration",
            "300ms",
            "--atomic-writes",
        ]
        .map(String::from)
    };
    let o = ioscope()
        .args(args(file.to_str().unwrap()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("atomic writes (--atomic-writes, fio atomic=1)"),
        "{e}"
    );
    assert!(e.contains("STATX_WRITE_ATOMIC"), "{e}");
    assert!(!file.exists(), "the refused run left its file behind");
    std::fs::write(&file, vec![7u8; 8 << 20]).unwrap();
    let o = ioscope()
        .args(args(file.to_str().unwrap()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("atomic writes"), "{}", stderr(&o));
    assert!(
        std::fs::read(&file).unwrap().iter().all(|&b| b == 7),
        "written"
    );
    // Where the file system has them, a write larger than its limit is refused with it.
    let fs = match Xfs::new() {
        Ok(f) => f,
        Err(why) => return skip_or_fail(&why),
    };
    let file = fs.mnt.path().join("big.dat");
    std::fs::File::create(&file)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let o = run(&[
        "run",
        "--target",
        file.to_str().unwrap(),
        "--size",
        "64m",
        "--rw",
        "randwrite",
        "--bs",
        "32m",
        "--duration",
        "300ms",
        "--atomic-writes",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("takes atomic writes of"),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        "run",
        "--target",
        file.to_str().unwrap(),
        "--size",
        "64m",
        "--rw",
        "randwrite",
        "--bs",
        "12k",
        "--duration",
        "300ms",
        "--atomic-writes",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("power of two"), "{}", stderr(&o));
}
