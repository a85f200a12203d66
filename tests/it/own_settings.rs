//! Workloads with settings of their own in one run (issue 17): fio jobs of one group
//! with their own `ioengine`, `cpus_allowed`, `ramp_time` and `verify` run as written,
//! and the result names what each workload ran with.

use super::*;

/// A worker thread of a running ioscope: its name, reads by read(2)-family calls,
/// and the CPUs it may run on.
#[derive(Debug)]
struct Task {
    comm: String,
    syscr: u64,
    cpus_allowed: String,
}

/// The threads of process `pid` named `ioscope-w*` (the workers).
fn worker_tasks(pid: u32) -> Vec<Task> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for e in dir.flatten() {
        let p = e.path();
        let comm = std::fs::read_to_string(p.join("comm")).unwrap_or_default();
        let comm = comm.trim().to_string();
        if !comm.starts_with("ioscope-w") {
            continue;
        }
        let field = |file: &str, key: &str| -> String {
            std::fs::read_to_string(p.join(file))
                .unwrap_or_default()
                .lines()
                .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()))
                .unwrap_or_default()
        };
        out.push(Task {
            syscr: field("io", "syscr:").parse().unwrap_or(0),
            cpus_allowed: field("status", "Cpus_allowed_list:"),
            comm,
        });
    }
    out
}

fn allowed_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Two jobs of one group, one `ioengine=psync` pinned to CPU 0 and one
/// `ioengine=libaio` (io_uring here) pinned to CPU 1: each runs on workers of its own
/// engine and CPU. The sync job's worker reads with pread(2) (its thread's `syscr`
/// counts them), the io_uring job's worker issues no read call at all (io_uring reads
/// bypass vfs_read), and each worker thread may run only on its job's CPU.
#[test]
fn fio_jobs_with_their_own_engines_and_cpus_run_on_workers_of_their_own() {
    if allowed_cpus() < 2 {
        eprintln!(
            "skipped: needs 2 CPUs, this process may use {}",
            allowed_cpus()
        );
        return;
    }
    let d = tempdir();
    let job = d.path().join("engines.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nsize=8m\nruntime=3\ntime_based\nrw=randread\nbs=4k\n\
             [sync]\nioengine=psync\ncpus_allowed=0\n\
             [ring]\nioengine=libaio\niodepth=8\ncpus_allowed=1\n",
            d.path().join("data").display()
        ),
    )
    .unwrap();
    let json = d.path().join("r.json");
    let mut child = Spawned::start([
        "run".as_ref(),
        job.as_os_str(),
        "-q".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
    ]);
    child.wait_first_interval(&json, FIRST_INTERVAL_TIMEOUT);
    let tasks = worker_tasks(child.pid());
    let ran = child.finish_result(&json).expect_code(0);
    let run = ran.run(0);
    assert_eq!(run.engine, "sync+uring", "{}", run.engine_reason);
    let settings = |i: usize| run.workloads[i].settings.as_ref().unwrap();
    let (s, r) = (settings(0), settings(1));
    assert_eq!(s.engine.as_deref(), Some("sync"));
    assert_eq!(r.engine.as_deref(), Some("uring"));
    assert_eq!(
        (s.cpus.clone(), r.cpus.clone()),
        (Some(vec![0]), Some(vec![1]))
    );
    let (sw, rw) = (s.workers.clone().unwrap(), r.workers.clone().unwrap());
    assert!(sw.iter().all(|w| !rw.contains(w)), "{sw:?} {rw:?}");
    let task = |w: usize| {
        tasks
            .iter()
            .find(|t| t.comm == format!("ioscope-w{w}"))
            .unwrap_or_else(|| panic!("no thread ioscope-w{w} among {tasks:?}"))
    };
    for &w in &sw {
        let t = task(w);
        assert_eq!(t.cpus_allowed, "0", "{t:?}");
        assert!(
            t.syscr > 1000,
            "the sync worker made {} reads: {t:?}",
            t.syscr
        );
    }
    for &w in &rw {
        let t = task(w);
        assert_eq!(t.cpus_allowed, "1", "{t:?}");
        assert!(t.syscr < 100, "the io_uring worker made read calls: {t:?}");
    }
    assert!(
        run.workloads[1].totals.all.ios > 10_000,
        "{:?}",
        run.workloads[1].totals
    );
}

/// Per-job `ramp_time`: each job's own warm-up is left out of its own figures. On a
/// simulated device (virtual time) a QD 1 job on a 100 µs device does 10 000 IOPS:
/// over its own 4 s that is 40 000 I/Os, whether it ramped 1 s or 3 s.
#[test]
fn fio_ramp_time_per_job_leaves_each_jobs_own_ramp_out() {
    let d = tempdir();
    let job = d.path().join("ramps.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=sim\\:64m?service=100us&servers=4&time=virtual\nsize=64m\n\
         ioengine=io_uring\nruntime=4\ntime_based\nrw=randread\nbs=4k\n\
         [short]\nramp_time=1\n\
         [long]\nramp_time=3\n",
    )
    .unwrap();
    let ran =
        ioscope_result(["run", job.to_str().unwrap(), "--engine", "sim", "-q"]).expect_code(0);
    let run = ran.run(0);
    // The run's warm-up is the shortest; it lasts until the long job's 3 + 4 s end.
    assert_eq!(run.warmup_s, 1.0);
    assert!(
        (run.duration_s - 6.0).abs() < 0.05,
        "ran {} s",
        run.duration_s
    );
    for (i, ramp_ns) in [(0, 1_000_000_000), (1, 3_000_000_000)] {
        let w = &run.workloads[i];
        let s = w.settings.as_ref().unwrap();
        assert_eq!(s.warmup_ns, Some(ramp_ns), "{}", w.name);
        let ios = w.totals.all.ios as f64;
        assert!(
            (ios - 40_000.0).abs() < 0.01 * 40_000.0,
            "{} counted {ios} I/Os",
            w.name
        );
        // Virtual time: 10 000 IOPS exactly here.
        assert!(
            (w.totals.all.iops - 10_000.0).abs() < 100.0,
            "{}: {} IOPS",
            w.name,
            w.totals.all.iops
        );
    }
}

/// Per-job `verify`: only the verifying job's data is stamped and read back.
#[test]
fn fio_verify_on_one_job_verifies_only_that_jobs_data() {
    let d = tempdir();
    let (a, b) = (d.path().join("a.dat"), d.path().join("b.dat"));
    let job = d.path().join("verify.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nrw=write\nbs=4k\nioengine=psync\n\
             [checked]\nfilename={}\nsize=2m\nverify=crc32c\n\
             [plain]\nfilename={}\nsize=8m\nbuffer_compress_percentage=50\n",
            a.display(),
            b.display()
        ),
    )
    .unwrap();
    let ran = ioscope_result(["run", job.to_str().unwrap(), "-q"]).expect_code(0);
    let run = ran.run(0);
    let v = run.verify.as_ref().expect("a verify section");
    // The checked job's 512 units, read back after the run; none of the plain job's.
    assert_eq!(
        (v.units_checked, v.ok, v.mismatches),
        (512, 512, 0),
        "{v:?}"
    );
    let data = |i: usize| {
        run.workloads[i]
            .settings
            .as_ref()
            .unwrap()
            .data
            .clone()
            .unwrap()
    };
    assert!(data(0).verify && data(0).verify_after);
    assert!(!data(1).verify && !data(1).verify_after);
    assert_eq!(data(1).compress_ratio, 2.0);
    let stamped = |p: &std::path::Path| {
        let bytes = std::fs::read(p).unwrap();
        bytes
            .chunks(4096)
            .filter(|u| u.starts_with(b"IOsc"))
            .count()
    };
    assert_eq!(stamped(&a), 512);
    assert_eq!(
        stamped(&b),
        0,
        "the plain job's writes carry verify headers"
    );
}

/// A native job file: a `[[workload]]`'s own `engine` wins over the run's for that
/// workload only (here the null engine beside the mem engine, each on workers of
/// its own), and `--workers` is divided between them.
#[test]
fn job_file_workload_engine_overrides_the_runs() {
    let d = tempdir();
    let job = d.path().join("own.toml");
    std::fs::write(
        &job,
        "[defaults]\nengine = \"mem\"\nduration = \"1s\"\nworkers = 3\n\
         [[target]]\nname = \"m\"\npath = \"mem:4m\"\n\
         [[target]]\nname = \"n\"\npath = \"null:4m\"\n\
         [[workload]]\nname = \"inmem\"\ntarget = \"m\"\nstreams = 2\n\
         [[workload]]\nname = \"nothing\"\ntarget = \"n\"\nengine = \"null\"\n",
    )
    .unwrap();
    let ran = ioscope_result(["run", job.to_str().unwrap(), "-q"]).expect_code(0);
    let run = ran.run(0);
    assert_eq!(run.engine, "mem+null", "{}", run.engine_reason);
    assert_eq!(run.workers, 3);
    let s = |i: usize| run.workloads[i].settings.clone().unwrap();
    assert_eq!(s(0).engine.as_deref(), Some("mem"));
    assert_eq!(s(1).engine.as_deref(), Some("null"));
    assert_eq!(
        (s(0).workers.unwrap().len(), s(1).workers.unwrap().len()),
        (2, 1)
    );
    assert!(run.workloads.iter().all(|w| w.totals.all.ios > 0));
    assert!(
        run.engine_reason.contains("inmem: mem") && run.engine_reason.contains("nothing: null"),
        "{}",
        run.engine_reason
    );
}

/// Jobs of one group that open one file differently (fio's e4defrag2.fio: a buffered
/// and an O_DIRECT libaio job on one file) each get a target of their own, opened their
/// own way, sharing the file and its verify state: both verify clean.
#[test]
fn fio_jobs_opening_one_file_buffered_and_direct_share_it_in_one_run() {
    let d = tempdir();
    let job = d.path().join("dd.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nsize=4m\nbs=32k\niodepth=8\nioengine=libaio\nrw=randrw\n\
             verify=md5\nruntime=1\ntime_based\n[buffered]\nbuffered=1\n[direct]\ndirect=1\n",
            d.path().join("f").display()
        ),
    )
    .unwrap();
    let o = super::run(&["convert", job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", super::stderr(&o));
    let toml = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(toml.matches("[[target]]").count(), 2, "{toml}");
    assert!(
        toml.contains("direct = false") && toml.contains("direct = true"),
        "{toml}"
    );
    let r = super::ioscope_result(["run", job.to_str().unwrap(), "-q"]).expect_code(0);
    let run = r.run(0);
    assert_ne!(run.workloads[0].target, run.workloads[1].target);
    for w in &run.workloads {
        assert!(w.totals.write.ios > 0 && w.totals.all.errors == 0, "{w:?}");
    }
    let v = run.verify.clone().expect("both jobs verify");
    assert!(v.ok > 0 && v.mismatches == 0, "{v:?}");
}
