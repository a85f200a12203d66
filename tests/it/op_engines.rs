//! The engines whose I/O is not a read or write of bytes: file operations on a
//! `files:` target (what is on disk afterwards, and the operation counts), cpuio (the
//! CPU time it burns), falloc (the blocks it allocates), ftruncate (the length it
//! sets), their refusals, and fio job files that use them.

use super::{ioscope_result, ioscope_to, run, stderr, tempdir, Ran};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Runs ioscope with `args`, its result in `dir`, and expects exit 0.
#[track_caller]
fn ran(dir: &Path, args: &[&str]) -> Ran {
    let json = dir.join(format!("r{}.json", std::fs::read_dir(dir).unwrap().count()));
    ioscope_to(&json, ["run"].iter().chain(args).chain(&["-q"])).expect_code(0)
}

/// `ioscope run ARGS`, for its exit code and messages.
fn refused(args: &[&str]) -> std::process::Output {
    run(&[&["run"], args].concat())
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn filecreate_filestat_filedelete_make_count_and_remove_exactly_the_files() {
    let out = tempdir();
    let work = tempdir();
    let d = work.path().display().to_string();
    let set = format!("files:{d}?count=400&per=200&name=j.{{clone}}.{{file}}&size=4k");
    let base = ["--target", set.as_str(), "--streams", "2"];
    let with = |engine: &str, rw: &str| -> Vec<String> {
        let mut a: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        a.extend(["--engine", engine, "--rw", rw].map(String::from));
        a
    };
    let once = |engine: &str, rw: &str| {
        let mut a = with(engine, rw);
        a.extend(["--passes", "1"].map(String::from));
        a
    };
    let args = once("filecreate", "write");
    let create = ran(
        out.path(),
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let r = create.run(0);
    assert_eq!(r.engine, "filecreate");
    assert_eq!((r.totals.write.ios, r.totals.write.errors), (400, 0));
    assert_eq!((r.totals.read.ios, r.totals.write.bytes), (0, 0));
    assert!(r.totals.write.latency_us.mean > 0.0);
    let names = names_in(work.path());
    assert_eq!(names.len(), 400);
    assert!(names.contains(&"j.0.0".to_string()) && names.contains(&"j.1.199".to_string()));
    let f = work.path().join("j.1.7");
    assert!(f.is_file() && f.metadata().unwrap().len() == 0);

    // A second create run would time opens of existing files: refused, unchanged.
    let o = refused(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("400 of the 400 names already exist"),
        "{}",
        stderr(&o)
    );

    // Three passes of stat over the 400 files (statx), each stream its own 200.
    let mut args = with("filestat", "randread");
    args.extend(["--passes", "3", "--stat-type", "statx"].map(String::from));
    let stat = ran(
        out.path(),
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let r = stat.run(0);
    assert_eq!(r.engine, "filestat");
    assert_eq!(
        (r.totals.read.ios, r.totals.read.errors, r.totals.write.ios),
        (1200, 0, 0)
    );
    assert_eq!(stat.wire["plan"]["runs"][0]["engine_opts"]["stat"], "statx");

    let args = once("filedelete", "write");
    let del = ran(
        out.path(),
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(del.run(0).engine, "filedelete");
    assert_eq!(
        (del.run(0).totals.write.ios, del.run(0).totals.write.errors),
        (400, 0)
    );
    assert!(
        names_in(work.path()).is_empty(),
        "filedelete left files behind"
    );
}

#[test]
fn filestat_and_filedelete_lay_out_missing_files_first() {
    let out = tempdir();
    let work = tempdir();
    let set = format!("files:{}?count=50&size=8k", work.path().display());
    let stat = ran(
        out.path(),
        &[
            "--engine", "filestat", "--target", &set, "--rw", "read", "--passes", "2",
        ],
    );
    assert_eq!(stat.run(0).totals.read.ios, 100);
    let names = names_in(work.path());
    assert_eq!(names.len(), 50);
    assert!(names
        .iter()
        .all(|n| work.path().join(n).metadata().unwrap().len() == 8192));
    let del = ran(
        out.path(),
        &[
            "--engine",
            "filedelete",
            "--target",
            &set,
            "--rw",
            "write",
            "--passes",
            "1",
        ],
    );
    assert_eq!(del.run(0).totals.write.ios, 50);
    assert!(names_in(work.path()).is_empty());
}

#[test]
fn dircreate_dirstat_dirdelete_work_on_directories() {
    let out = tempdir();
    let work = tempdir();
    let set = format!("files:{}?count=60&name=d{{n}}", work.path().display());
    let one = |engine: &str, rw: &str| {
        ran(
            out.path(),
            &[
                "--engine",
                engine,
                "--target",
                &set,
                "--rw",
                rw,
                "--passes",
                "1",
                "--streams",
                "3",
            ],
        )
    };
    assert_eq!(one("dircreate", "write").run(0).totals.write.ios, 60);
    let names = names_in(work.path());
    assert_eq!(names.len(), 60);
    assert!(names.iter().all(|n| work.path().join(n).is_dir()));
    let stat = one("dirstat", "read");
    assert_eq!(
        (stat.run(0).engine.as_str(), stat.run(0).totals.read.ios),
        ("dirstat", 60)
    );
    assert_eq!(one("dirdelete", "write").run(0).totals.write.errors, 0);
    assert!(names_in(work.path()).is_empty());
}

#[test]
fn combinations_that_would_measure_something_else_are_refused_and_create_nothing() {
    let work = tempdir();
    let d = work.path().display().to_string();
    let set = format!("files:{d}?count=10");
    let elsewhere = tempdir();
    let plain_path = elsewhere.path().join("plain.dat");
    std::fs::write(&plain_path, vec![0u8; 1 << 20]).unwrap();
    let plain = plain_path.display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "--engine",
                "filecreate",
                "-t",
                &set,
                "--rw",
                "read",
                "--passes",
                "1",
            ],
            "only changes the file system",
        ),
        (
            vec![
                "--engine",
                "filecreate",
                "-t",
                &set,
                "--rw",
                "randwrite",
                "--passes",
                "1",
            ],
            "random order repeats files",
        ),
        (
            vec![
                "--engine",
                "filedelete",
                "-t",
                &set,
                "--rw",
                "write",
                "--duration",
                "1s",
            ],
            "run one pass",
        ),
        (
            vec![
                "--engine",
                "filecreate",
                "-t",
                &set,
                "--rw",
                "write",
                "--passes",
                "1",
                "--warmup",
                "1s",
            ],
            "warm-up",
        ),
        (
            vec![
                "--engine",
                "filecreate",
                "-t",
                &set,
                "--rw",
                "write",
                "--passes",
                "1",
                "--streams",
                "3",
            ],
            "do not divide among 3 streams",
        ),
        (
            vec![
                "--engine", "filestat", "-t", &set, "--rw", "write", "--passes", "1",
            ],
            "only looks at files",
        ),
        (
            vec!["--engine", "filestat", "-t", &plain, "--rw", "read"],
            "works on files:DIR?count=N targets",
        ),
        (
            vec!["--engine", "null", "-t", &set, "--rw", "read"],
            "a files: target is for the file-operation engines",
        ),
        // sync and uring (and auto) read and write a set's files: each needs a size.
        (
            vec!["--engine", "sync", "-t", &set, "--rw", "read"],
            "a file set read and written as bytes needs size=BYTES",
        ),
        (
            vec!["-t", &set, "--rw", "read"],
            "a file set read and written as bytes needs size=BYTES",
        ),
        (
            vec![
                "--engine",
                "filecreate",
                "-t",
                &set,
                "--rw",
                "write",
                "--passes",
                "1",
                "--stat-type",
                "lstat",
            ],
            "applies to the filestat and dirstat engines",
        ),
        (
            vec!["--engine", "cpuio", "-t", "null:1m"],
            "needs a CPU load",
        ),
        (
            vec![
                "--engine",
                "cpuio",
                "--cpuload",
                "50",
                "-t",
                &plain,
                "--size",
                "1m",
            ],
            "give it a null:SIZE target",
        ),
        (
            vec!["--engine", "null", "--cpuload", "50", "-t", "null:1m"],
            "applies to the cpuio engine",
        ),
        (
            vec![
                "--engine",
                "ftruncate",
                "-t",
                &plain,
                "--size",
                "1m",
                "--rw",
                "read",
            ],
            "only changes the file system",
        ),
        (
            vec!["--engine", "falloc", "-t", "null:1m", "--rw", "write"],
            "works on regular files",
        ),
    ];
    for (args, want) in cases {
        let o = refused(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(want),
            "{args:?}: expected '{want}' in: {}",
            stderr(&o)
        );
    }
    assert!(
        names_in(work.path()).is_empty(),
        "a refused run created {:?}",
        names_in(work.path())
    );
}

#[test]
fn cpuio_burns_its_chunk_of_cpu_per_operation_then_idles_for_the_load() {
    let out = tempdir();
    let chunk_s = 0.02;
    let r = ran(
        out.path(),
        &[
            "--engine",
            "cpuio",
            "--cpuload",
            "40",
            "--cpuchunks",
            "20ms",
            "-t",
            "null:1m",
            "--duration",
            "3s",
        ],
    );
    let run = r.run(0);
    assert_eq!(run.engine, "cpuio");
    let ios = run.totals.read.ios as f64;
    assert!(ios >= 5.0, "only {ios} chunks in 3 s");
    // Each chunk is 20 ms of the thread's CPU time, so at least 20 ms of wall time.
    assert!(
        run.totals.read.latency_us.min >= 0.99 * chunk_s * 1e6,
        "{:?}",
        run.totals.read.latency_us
    );
    // The process used the chunks' CPU time (plus a little of its own).
    let cpus = run.cpu.online_cpus.expect("online cpus") as f64;
    let cpu_s = (run.cpu.user_pct + run.cpu.sys_pct) / 100.0 * cpus * run.duration_s;
    let burnt = ios * chunk_s;
    assert!(
        cpu_s > 0.85 * burnt && cpu_s < 1.15 * burnt + 0.1,
        "process CPU {cpu_s:.3} s for {ios} chunks of {chunk_s} s"
    );
    // After each chunk the stream idles 1.5 × the chunk (40 % load): the chunks'
    // wall time plus the idle time fill the run. Without the idle time the figure
    // would be 2.5; a loaded host wakes the stream late, which lowers it.
    let idle_s = chunk_s * 60.0 / 40.0;
    let cycle_s = run.totals.read.latency_us.mean / 1e6 + idle_s;
    let filled = ios * cycle_s / run.duration_s;
    assert!(
        (0.6..1.2).contains(&filled),
        "{ios} cycles of {cycle_s:.4} s fill {filled:.2} of the run"
    );
}

#[test]
fn falloc_allocates_the_blocks_of_a_hole_and_ftruncate_sets_the_length() {
    let out = tempdir();
    let work = tempdir();
    let f = work.path().join("hole.dat");
    std::fs::File::create(&f).unwrap().set_len(8 << 20).unwrap();
    assert_eq!(
        f.metadata().unwrap().blocks(),
        0,
        "the file starts as a hole"
    );
    let p = f.display().to_string();
    let r = ran(
        out.path(),
        &[
            "--engine", "falloc", "-t", &p, "--rw", "write", "--bs", "1m", "--passes", "1",
            "--direct", "false",
        ],
    );
    assert_eq!(r.run(0).engine, "falloc");
    assert_eq!(
        (r.run(0).totals.write.ios, r.run(0).totals.write.bytes),
        (8, 8 << 20)
    );
    let m = f.metadata().unwrap();
    assert!(
        m.blocks() * 512 >= 8 << 20,
        "{} bytes allocated",
        m.blocks() * 512
    );
    assert_eq!(m.len(), 8 << 20);

    // A read allocates without changing the length (FALLOC_FL_KEEP_SIZE): a new file
    // of 4 MiB, created as a hole by the run.
    let g = work.path().join("keep.dat");
    let q = g.display().to_string();
    let r = ran(
        out.path(),
        &[
            "--engine", "falloc", "-t", &q, "--size", "4m", "--rw", "read", "--bs", "1m",
            "--passes", "1", "--direct", "false",
        ],
    );
    assert_eq!(r.run(0).totals.read.ios, 4);
    let m = g.metadata().unwrap();
    assert_eq!(m.len(), 4 << 20);
    assert!(m.blocks() * 512 >= 4 << 20);

    let t = work.path().join("trunc.dat");
    let tp = t.display().to_string();
    let r = ran(
        out.path(),
        &[
            "--engine",
            "ftruncate",
            "-t",
            &tp,
            "--size",
            "1m",
            "--rw",
            "write",
            "--bs",
            "4k",
            "--passes",
            "1",
        ],
    );
    assert_eq!(r.run(0).engine, "ftruncate");
    assert_eq!(
        (r.run(0).totals.write.ios, r.run(0).totals.write.errors),
        (256, 0)
    );
    // The last write truncated the file to its own offset.
    assert_eq!(t.metadata().unwrap().len(), (1 << 20) - 4096);
    assert_eq!(
        t.metadata().unwrap().blocks(),
        0,
        "ftruncate allocates nothing"
    );
}

#[test]
fn fio_file_operation_jobs_run_as_fio_names_their_files() {
    let out = tempdir();
    let work = tempdir();
    let job = out.path().join("meta.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\ndirectory={}\nnrfiles=40\nfilesize=4k\nnumjobs=2\n\
             [mk]\nioengine=filecreate\ncreate_on_open=1\nopenfiles=1\n\
             [look]\nstonewall\nioengine=filestat\nstat_type=lstat\nfilename_format=mk.$jobnum.$filenum\n\
             [rm]\nstonewall\nioengine=filedelete\nfilename_format=mk.$jobnum.$filenum\n",
            work.path().display()
        ),
    )
    .unwrap();
    let r = ran(out.path(), &[job.to_str().unwrap()]);
    let engines: Vec<&str> = r.doc.runs.iter().map(|x| x.engine.as_str()).collect();
    assert_eq!(engines, ["filecreate", "filestat", "filedelete"]);
    assert_eq!(r.run(0).totals.write.ios, 80);
    assert_eq!(r.run(1).totals.read.ios, 80);
    assert_eq!(r.run(2).totals.write.ios, 80);
    assert!(
        names_in(work.path()).is_empty(),
        "left: {:?}",
        names_in(work.path())
    );

    // Only the create run: fio's names, JOBNAME.CLONE.FILE.
    let only = out.path().join("mk.fio");
    std::fs::write(
        &only,
        format!(
            "[mk]\ndirectory={}\nnrfiles=3\nnumjobs=2\nioengine=filecreate\n",
            work.path().display()
        ),
    )
    .unwrap();
    ran(out.path(), &[only.to_str().unwrap()]);
    assert_eq!(
        names_in(work.path()),
        ["mk.0.0", "mk.0.1", "mk.0.2", "mk.1.0", "mk.1.1", "mk.1.2"]
    );
}

#[test]
fn page_fault_copies_through_a_fresh_mapping_of_the_targets_size() {
    let out = tempdir();
    let r = ran(
        out.path(),
        &[
            "--engine",
            "page_fault",
            "-t",
            "null:16m",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--passes",
            "1",
        ],
    );
    let run = r.run(0);
    assert_eq!(run.engine, "page_fault");
    assert_eq!(
        (
            run.totals.write.ios,
            run.totals.write.bytes,
            run.totals.write.errors
        ),
        (256, 16 << 20, 0)
    );
    // A fio job names it as fio does; its region is size=.
    let job = out.path().join("pf.fio");
    std::fs::write(
        &job,
        "[pf]\nioengine=page_fault\nsize=8m\nrw=randrw\nbs=4k\n",
    )
    .unwrap();
    let r = ran(out.path(), &[job.to_str().unwrap()]);
    let t = &r.run(0).totals;
    assert_eq!(
        (r.run(0).engine.as_str(), t.read.ios + t.write.ios),
        ("page_fault", 2048)
    );
}

#[test]
fn exec_runs_the_program_for_the_run_and_stops_it_at_the_end() {
    let out = tempdir();
    let prefix = out.path().join("mon").display().to_string();
    let script = out.path().join("mon.sh");
    std::fs::write(&script, "#!/bin/sh\necho $$\nexec sleep \"$1\"\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let r = ran(
        out.path(),
        &[
            "--engine",
            "exec",
            "--exec-program",
            script.to_str().unwrap(),
            "--exec-args",
            "60",
            "--exec-output",
            &prefix,
            "--exec-grace",
            "100ms",
            "-t",
            "null:4k",
            "--duration",
            "1s",
        ],
    );
    let run = r.run(0);
    assert_eq!((run.engine.as_str(), run.totals.read.errors), ("exec", 0));
    assert!(
        run.totals.read.ios >= 5,
        "{} watches of 50 ms in 1 s",
        run.totals.read.ios
    );
    let pid = std::fs::read_to_string(format!("{prefix}.stdout")).unwrap();
    let pid = pid.trim();
    assert!(
        !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()),
        "{pid:?}"
    );
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the program {pid} outlived the run"
    );

    // A program that fails is an error of the run.
    let json = out.path().join("fail.json");
    let r = ioscope_to(
        &json,
        [
            "run",
            "-q",
            "--engine",
            "exec",
            "--exec-program",
            "false",
            "-t",
            "null:4k",
            "--duration",
            "1s",
        ],
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(r.run(0).totals.read.errors, 1);
}

/// Whether `p` is on ext4 (statfs f_type 0xEF53).
fn on_ext4(p: &Path) -> bool {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: statfs fills the zeroed struct we pass; c is NUL-terminated.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    unsafe { libc::statfs(c.as_ptr(), &mut st) == 0 && st.f_type as i64 == 0xEF53 }
}

#[test]
fn e4defrag_moves_every_block_onto_the_donor_and_keeps_the_bytes() {
    let d = tempdir();
    let f = d.path().join("file1");
    let data: Vec<u8> = (0..4u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&f, &data).unwrap();
    // fio's e4defrag.fio shape: the whole file in 64k moves onto a preallocated donor;
    // then e4defrag2's fuzzer: random 4k moves, the donor allocated for each.
    for (text, ios) in [
        ("rw=write\nbs=64k\ninplace=0\n", 64u64),
        ("rw=randwrite\nbs=4k\ninplace=1\nnumber_ios=200\n", 200),
    ] {
        let job = d.path().join("e4.fio");
        std::fs::write(
            &job,
            format!(
                "[e4defrag]\nioengine=e4defrag\ndirectory={}\nfilename=file1\n\
                 donorname=file.def\nsize=4m\nbuffered=0\n{text}",
                d.path().display()
            ),
        )
        .unwrap();
        let r = ioscope_result(["run", job.to_str().unwrap(), "-q"]);
        if !on_ext4(d.path()) {
            r.expect_code(1);
            return;
        }
        let r = r.expect_code(0);
        let w = &r.run(0).totals.write;
        assert_eq!((w.ios, w.errors), (ios, 0), "{text}");
        if ios == 64 {
            assert_eq!(w.bytes, 4 << 20);
        }
        assert_eq!(r.run(0).engine, "e4defrag");
        assert!(
            std::fs::read(&f).unwrap() == data,
            "{text}: the file's bytes changed"
        );
        assert!(d.path().join("file.def").exists());
    }
    let job = d.path().join("bad.fio");
    std::fs::write(
        &job,
        "[r]\nioengine=e4defrag\nfilename=x\nsize=1m\nrw=write\n",
    )
    .unwrap();
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs donorname"), "{}", stderr(&o));
    let o = refused(&[
        "--engine",
        "e4defrag",
        "--target",
        f.to_str().unwrap(),
        "--rw",
        "read",
    ]);
    assert!(stderr(&o).contains("e4defrag"), "{}", stderr(&o));
}

/// `ioscope convert FILE` for its exit code and messages (0: nothing dropped).
fn converts_whole(job: &Path) {
    let o = run(&["convert", job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("not translated"), "{}", stderr(&o));
}

/// fio's exec.fio shape: a monitoring program (exec) beside cpuio burners in one
/// group, each job on its own engine with its own options, then two burners of
/// another mode and load in a group of their own.
#[test]
fn exec_beside_cpuio_in_one_run_each_on_its_own_engine() {
    let d = tempdir();
    let script = d.path().join("mon.sh");
    std::fs::write(&script, "#!/bin/sh\necho $$ > \"$1\"\nexec sleep \"$2\"\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let pid_file = d.path().join("pid");
    let job = d.path().join("exec.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\ntime_based\nruntime=2\n\
             [monitor]\nioengine=exec\nprogram={}\narguments={} %r\nstd_redirect=0\ngrace_time=0\n\
             [burn]\nioengine=cpuio\ncpuload=50\ncpuchunks=20000\nnumjobs=2\ncpumode=qsort\n\
             [burn2]\nstonewall\nioengine=cpuio\ncpuload=20\nruntime=1\n",
            script.display(),
            pid_file.display()
        ),
    )
    .unwrap();
    converts_whole(&job);
    let r = ioscope_result(["run", job.to_str().unwrap(), "-q"]).expect_code(0);
    let run = r.run(0);
    assert_eq!(run.engine, "exec+cpuio", "{}", run.engine_reason);
    let engine = |i: usize| run.workloads[i].settings.as_ref().unwrap().engine.clone();
    assert_eq!(
        (engine(0).as_deref(), engine(1).as_deref()),
        (Some("exec"), Some("cpuio"))
    );
    let (mon, burn) = (&run.workloads[0].totals.read, &run.workloads[1].totals.read);
    assert!(mon.ios > 0 && mon.errors == 0, "{mon:?}");
    // 2 burners of 20 ms at 50 % for 2 s: up to 100 chunks; at least some.
    assert!(burn.ios > 2 && burn.errors == 0, "{burn:?}");
    let workers = run.workloads[1].settings.as_ref().unwrap().workers.clone();
    assert_eq!(
        workers.map(|w| w.len()),
        Some(2),
        "a cpuio worker per burner"
    );
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    assert!(
        !Path::new(&format!("/proc/{}", pid.trim())).exists(),
        "the program {pid} outlived the run"
    );
    // The second group alone: cpuio with its own load, for its own runtime.
    assert_eq!(r.run(1).engine, "cpuio");
    assert!(r.run(1).totals.read.ios > 0);
}

/// fio's e4defrag.fio shape: a time-based defragmenter beside a random read job of one
/// pass on the same file (the file's bytes unchanged after both), and, on another
/// file, beside a verifying random read/write job whose data the moves keep.
#[test]
fn e4defrag_beside_a_byte_engine_on_the_same_file() {
    let d = tempdir();
    if !on_ext4(d.path()) {
        eprintln!("skipped: {} is not on ext4", d.path().display());
        return;
    }
    let data: Vec<u8> = (0..4u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    std::fs::write(d.path().join("file1"), &data).unwrap();
    let job = d.path().join("e4.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=e4defrag\ndirectory={}\nsize=4m\ndonorname=file.def\nbs=32k\n\
             [defrag]\nfilename=file1\nbuffered=0\ninplace=0\nrw=write\ntime_based\nruntime=2\n\
             [reader]\nioengine=libaio\nfilename=file1\ndirect=1\nbs=64k\niodepth=8\n\
             rw=randread\nruntime=2\n\
             [defrag2]\nstonewall\nfilename=file2\ndonorname=file2.def\ninplace=1\nbs=4k\n\
             rw=randwrite\ntime_based\nruntime=2\ndirect=1\n\
             [writer]\nioengine=libaio\nfilename=file2\ndirect=1\nbs=16k\niodepth=8\n\
             rw=randrw\nverify=md5\nnumjobs=2\nruntime=2\n",
            d.path().display()
        ),
    )
    .unwrap();
    converts_whole(&job);
    let r = ioscope_result(["run", job.to_str().unwrap(), "-q"]).expect_code(0);
    for i in 0..2 {
        let run = r.run(i);
        assert_eq!(run.engine, "e4defrag+uring", "{}", run.engine_reason);
        let s = |w: usize| run.workloads[w].settings.as_ref().unwrap();
        assert_eq!(s(0).engine.as_deref(), Some("e4defrag"));
        assert_eq!(s(1).engine.as_deref(), Some("uring"));
        let (moves, io) = (&run.workloads[0].totals, &run.workloads[1].totals);
        assert!(moves.write.ios > 0 && moves.write.errors == 0, "{moves:?}");
        assert!(io.all.ios > 0 && io.all.errors == 0, "{io:?}");
    }
    // The writer's data is checked, and the moves beside it registered no writes of
    // their own (they write no bytes): no unit reads as lost or never written.
    let v = r.run(1).verify.clone().expect("the writer verifies");
    assert!(v.ok > 0 && v.mismatches == 0, "{v:?}");
    // The reader made exactly its one pass (4 MiB in 64 KiB) while the defragmenter
    // ran for its time.
    assert_eq!(r.run(0).workloads[1].totals.read.ios, 64);
    assert_eq!(
        std::fs::read(d.path().join("file1")).unwrap(),
        data,
        "the moves changed the file's bytes"
    );
    assert!(d.path().join("file.def").exists() && d.path().join("file2.def").exists());
}

/// A job file's workloads on three engines in one run: file creates on a `files:` set,
/// io_uring reads of a file, page faults on `null:` — each group on its own target,
/// each counting what its engine does.
#[test]
fn a_job_file_mixes_file_operations_page_faults_and_reads_in_one_run() {
    let d = tempdir();
    let set = d.path().join("set");
    std::fs::create_dir(&set).unwrap();
    let job = d.path().join("mix.toml");
    let write_job = |extra: &str| {
        std::fs::write(
            &job,
            format!(
                "[[target]]\nname = \"set\"\npath = \"files:{}?count=8\"\n\
                 [[target]]\nname = \"f\"\npath = \"{}\"\nsize = \"1m\"\n\
                 [[target]]\nname = \"mem\"\npath = \"null:64k\"\n\
                 [[workload]]\nname = \"create\"\ntarget = \"set\"\nrw = \"write\"\nbs = \"4k\"\n\
                 engine = \"filecreate\"\n\
                 [[workload]]\nname = \"read\"\ntarget = \"f\"\nrw = \"randread\"\nbs = \"4k\"\n\
                 qd = 4\nengine = \"uring\"\n{extra}\
                 [[workload]]\nname = \"pf\"\ntarget = \"mem\"\nrw = \"write\"\nbs = \"4k\"\n\
                 engine = \"page_fault\"\n\
                 [[run]]\nname = \"mix\"\nworkloads = [\"create\", \"read\", \"pf\"]\n\
                 engine = \"sync\"\npasses = 1\n",
                set.display(),
                d.path().join("data").display()
            ),
        )
        .unwrap()
    };
    write_job("");
    let r = ioscope_result(["run", job.to_str().unwrap(), "-q"]).expect_code(0);
    let mix = r.run(0);
    assert_eq!(
        mix.engine, "filecreate+uring+page_fault",
        "{}",
        mix.engine_reason
    );
    let t = |i: usize| &mix.workloads[i].totals;
    assert_eq!(
        (t(0).write.ios, t(0).write.errors),
        (8, 0),
        "one create per file"
    );
    assert_eq!(t(1).read.ios, 256, "one pass of 1 MiB in 4 KiB");
    assert_eq!(t(2).write.ios, 16, "one pass of 64 KiB in 4 KiB");
    assert_eq!(names_in(&set).len(), 8);

    // A time-based workload in a run of passes needs its own stop (or a duration).
    std::fs::remove_dir_all(&set).unwrap();
    std::fs::create_dir(&set).unwrap();
    write_job("time_based = true\n");
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("stop_after"), "{}", stderr(&o));
    assert!(names_in(&set).is_empty(), "a refused run created files");
    write_job("time_based = true\npasses = 2\n");
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("contradict"), "{}", stderr(&o));

    // A file operation does not share its target with another engine.
    let text = std::fs::read_to_string(&job)
        .unwrap()
        .replace("target = \"f\"", "target = \"set\"")
        .replace("time_based = true\npasses = 2\n", "");
    std::fs::write(&job, text).unwrap();
    let o = run(&["run", job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("shapes its target"), "{}", stderr(&o));
}
