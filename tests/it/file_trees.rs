//! Directory trees of files (`tree:` targets) through vdbench file-system parameter
//! files: `format=` lays out exactly width^depth leaf directories of `files` files of
//! the declared size, a read/write/create/delete mix and a mix of every fwd
//! operation report each operation per interval, adding up to their totals, and
//! operations that find nothing to act on are skips, not errors. A published file
//! runs with its size distribution, made anchor, skew and shared files.

use super::*;

/// A vdbench parameter file on a tree under `anchor`, with `fwds` and `rd` lines.
fn parm(dir: &Path, anchor: &Path, body: &str) -> PathBuf {
    let p = dir.join("fs.parm");
    let text = format!(
        "fsd=fsd1,anchor={},depth=2,width=3,files=4,size=8k\n{body}",
        anchor.display()
    );
    std::fs::write(&p, text).unwrap();
    p
}

/// A temporary directory holding an empty `anchor` directory, and that anchor.
fn with_anchor() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let anchor = d.path().join("anchor");
    std::fs::create_dir(&anchor).unwrap();
    (d, anchor)
}

/// Runs a parameter file whose `fsd1` on a fresh anchor takes `fsd` (its keys after
/// `anchor=`) and whose fwds and rds are `body`; exit 0 expected.
fn run_fsd(fsd: &str, body: &str) -> (tempfile::TempDir, PathBuf, Ran) {
    let (d, anchor) = with_anchor();
    let p = d.path().join("fs.parm");
    let text = format!("fsd=fsd1,anchor={},{fsd}\n{body}", anchor.display());
    std::fs::write(&p, text).unwrap();
    let r = ioscope_to(&d.path().join("r.json"), ["run", p.to_str().unwrap()]).expect_code(0);
    (d, anchor, r)
}

/// Every directory and regular file below `root`, counted.
pub(super) fn census(root: &Path) -> (Vec<PathBuf>, Vec<(PathBuf, u64)>) {
    let (mut dirs, mut files) = (Vec::new(), Vec::new());
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let md = e.metadata().unwrap();
            if md.is_dir() {
                dirs.push(e.path());
                todo.push(e.path());
            } else {
                files.push((e.path(), md.len()));
            }
        }
    }
    (dirs, files)
}

#[test]
fn format_only_lays_out_the_declared_tree() {
    let (d, anchor) = with_anchor();
    let p = parm(
        d.path(),
        &anchor,
        "fwd=fwd1,fsd=fsd1,operation=read,xfersize=4k\n\
         rd=rd1,fwd=fwd1,format=only,elapsed=2,interval=1\n",
    );
    let r = ioscope_to(&d.path().join("r.json"), ["run", p.to_str().unwrap()]).expect_code(0);
    assert_eq!(r.doc.runs.len(), 1, "format=only runs the format alone");
    assert_eq!(r.run(0).name, "format_for_rd1");
    // 3 + 9 directories; 9 leaves × 4 files.
    formatted(
        &anchor,
        &r,
        (12, 36),
        "vdb.1_3.dir/vdb.2_3.dir/vdb_f0004.file",
    );
}

/// Each workload's measured intervals' counts in `run` add up to its total.
pub(super) fn adds_up(run: &ioscope::result::RunResult) {
    let measured: Vec<_> = run.intervals.iter().filter(|i| !i.warmup).collect();
    assert!(!measured.is_empty());
    for (k, w) in run.workloads.iter().enumerate() {
        let per_interval: u64 = measured.iter().map(|i| i.workloads[k].ios).sum();
        assert_eq!(
            per_interval, w.totals.all.ios,
            "{}: intervals add up to the total",
            w.name
        );
    }
}

/// A run of a vdbench file with a format run, then a mix of fwds `names_want`
/// (read first, write second): each operation's per-interval counts add up to its
/// total, none fails, every one acted, and they add up to the run's.
pub(super) fn mix_adds_up(r: &Ran, names_want: &[&str]) {
    let samples: Vec<_> = r.doc.runs.iter().map(|x| &x.error_samples).collect();
    assert_eq!(r.code, Some(0), "{samples:?}\n{}", r.stderr);
    assert_eq!(r.doc.runs.len(), 2, "the format run, then rd1");
    let run = r.run(1);
    let names: Vec<&str> = run.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, names_want);
    adds_up(run);
    for w in &run.workloads {
        assert_eq!(w.totals.all.errors, 0, "{}: {}", w.name, r.stderr);
        // A read finds no file (deletes) or an empty one (creates) at times: a
        // skip. Every workload acted or looked.
        let acted = w.totals.all.ios + w.totals.all.skipped;
        assert!(acted > 0, "{} did nothing: {}", w.name, r.stderr);
    }
    assert!(run.workloads[1].totals.write.bytes > 0, "writes wrote");
    let total: u64 = run.workloads.iter().map(|w| w.totals.all.ios).sum();
    assert_eq!(
        total, run.totals.all.ios,
        "the operations add up to the run's"
    );
    assert_eq!(run.workloads[0].totals.write.ios, 0, "reads only read");
}

/// What a format (run 0 of `r`) of a depth-2 tree of 8 KiB files left below
/// `anchor`: `dirs` directories and `files` files, each 8 KiB, in the leaves only,
/// `last` among them, and every byte written once, each file in one write (vdbench's
/// format writes 128 KiB, at most a file).
pub(super) fn formatted(anchor: &Path, r: &Ran, (dirs, files): (usize, usize), last: &str) {
    let (d, f) = census(anchor);
    assert_eq!(d.len(), dirs, "{d:?}");
    assert_eq!(f.len(), files, "{f:?}");
    assert!(f.iter().all(|(_, len)| *len == 8192), "{f:?}");
    assert!(f
        .iter()
        .all(|(p, _)| p.components().count() == anchor.components().count() + 3));
    assert!(anchor.join(last).is_file(), "{last}");
    assert_eq!(r.run(0).totals.write.ios, files as u64);
    assert_eq!(r.run(0).totals.write.bytes, files as u64 * 8192);
}

#[test]
fn a_mix_reports_each_operation_per_interval() {
    let (d, anchor) = with_anchor();
    let p = parm(
        d.path(),
        &anchor,
        "fwd=default,fsd=fsd1,xfersize=4k,fileio=sequential,fileselect=random\n\
         fwd=fr,operation=read\nfwd=fw,operation=write\n\
         fwd=fc,operation=create\nfwd=fd,operation=delete\n\
         rd=rd1,fwd=f*,fwdrate=max,format=yes,elapsed=4,interval=1\n",
    );
    // Regression: a create that found no missing file, or a delete none left, was
    // counted as an error (exit 1); vdbench waits and completes, and so does the run:
    // it is a skip of the workload.
    let r = ioscope_to(&d.path().join("r.json"), ["run", p.to_str().unwrap()]).expect_code(0);
    assert_eq!(r.doc.runs.len(), 2, "the format run, then rd1");
    let run = r.run(1);
    assert_eq!(
        run.end_reason,
        ioscope::result::EndReason::Duration,
        "{}",
        r.stderr
    );
    let names: Vec<&str> = run.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["fr", "fw", "fc", "fd"]);
    adds_up(run);
    let measured: Vec<_> = run.intervals.iter().filter(|i| !i.warmup).collect();
    for (k, w) in run.workloads.iter().enumerate() {
        assert!(w.totals.all.ios > 0, "{} did nothing: {}", w.name, r.stderr);
        let lat = if k == 0 {
            &w.totals.read.latency_us
        } else {
            &w.totals.write.latency_us
        };
        assert!(lat.mean > 0.0, "{} has a response time", w.name);
    }
    for i in &measured {
        let sum: u64 = i.workloads.iter().map(|w| w.ios).sum();
        assert_eq!(sum, i.ios, "interval {}: the operations add up", i.index);
    }
    assert_eq!(run.workloads[0].totals.write.ios, 0, "reads only read");
}

#[test]
fn format_yes_lays_out_the_tree_before_the_run() {
    let (d, anchor) = with_anchor();
    let p = parm(
        d.path(),
        &anchor,
        "fwd=fwd1,fsd=fsd1,operation=getattr,fileselect=random\n\
         rd=rd1,fwd=fwd1,format=yes,elapsed=2,interval=1\n",
    );
    let r = ioscope_to(&d.path().join("r.json"), ["run", p.to_str().unwrap()]).expect_code(0);
    assert_eq!(r.doc.runs.len(), 2, "the format run, then rd1");
    let (dirs, files) = census(&anchor);
    // width^depth = 3^2 leaves (12 directories with the first level), 4 files each.
    assert_eq!(dirs.len(), 3 + 9, "{dirs:?}");
    assert_eq!(files.len(), 9 * 4);
    assert!(files.iter().all(|(_, len)| *len == 8192), "{files:?}");
    assert!(r.run(1).totals.all.ios > 0, "getattr ran: {}", r.stderr);
}

/// Every fwd operation in one run, with creates and deletes that run out of names.
const ALL_OPS: &str = "fwd=default,fsd=fsd1,xfersize=4k,fileio=sequential,fileselect=random\n\
     fwd=f01,operation=read\nfwd=f02,operation=create\nfwd=f03,operation=delete\n\
     fwd=f04,operation=mkdir\nfwd=f05,operation=rmdir\nfwd=f06,operation=open\n\
     fwd=f07,operation=close\nfwd=f08,operation=setattr\nfwd=f09,operation=access\n\
     fwd=f10,operation=copy\nfwd=f11,operation=move\nfwd=f12,operation=getattr\n\
     rd=rd1,fwd=f*,fwdrate=max,format=yes,elapsed=4,interval=1\n";

#[test]
fn every_operation_reports_per_interval_and_nothing_to_do_is_a_skip() {
    let (d, anchor) = with_anchor();
    let p = parm(d.path(), &anchor, ALL_OPS);
    // Creates finding no missing name and deletes finding none left are skips
    // (vdbench waits for one), not errors: the command exits 0.
    let r = ioscope_to(&d.path().join("r.json"), ["run", p.to_str().unwrap()]).expect_code(0);
    let run = r.run(1);
    assert_eq!(run.end_reason, ioscope::result::EndReason::Duration);
    let engines: Vec<&str> = run
        .workloads
        .iter()
        .map(|w| w.settings.as_ref().unwrap().engine.as_deref().unwrap())
        .collect();
    assert_eq!(
        engines,
        [
            "sync",
            "filecreate",
            "filedelete",
            "dircreate",
            "dirdelete",
            "fileopen",
            "fileclose",
            "filesetattr",
            "fileaccess",
            "filecopy",
            "filemove",
            "filestat"
        ]
    );
    let measured: Vec<_> = run.intervals.iter().filter(|i| !i.warmup).collect();
    for (k, w) in run.workloads.iter().enumerate() {
        let t = &w.totals.all;
        assert_eq!(t.errors, 0, "{}: {}", w.name, r.stderr);
        let ios: u64 = measured.iter().map(|i| i.workloads[k].ios).sum();
        let skipped: u64 = measured.iter().map(|i| i.workloads[k].skipped).sum();
        assert_eq!(
            (ios, skipped),
            (t.ios, t.skipped),
            "{}: intervals add up",
            w.name
        );
        assert!(t.ios > 0, "{} did nothing ({} skips)", w.name, t.skipped);
        // The rate is the count over the measured time.
        assert!((t.iops - t.ios as f64 / run.duration_s).abs() < 1e-6 * t.iops.max(1.0));
    }
    // Creates and deletes race over 36 names: some find nothing to do.
    let skips: u64 = run.workloads.iter().map(|w| w.totals.all.skipped).sum();
    assert!(skips > 0, "no skip counted");
    for i in &measured {
        let sum: u64 = i.workloads.iter().map(|w| w.ios).sum();
        assert_eq!(sum, i.ios, "interval {}: the operations add up", i.index);
    }
    let sum: u64 = run.workloads.iter().map(|w| w.totals.all.ios).sum();
    assert_eq!(
        sum, run.totals.all.ios,
        "the operations add up to the run's"
    );
}

/// iul1an/vdbench-tests' 5050RW.vdb (tests/fixtures/compat/published/vdbench), its
/// tree scaled from 4^4 × 4000 files to 2 × 32 and its hour to 4 s: files of four
/// lengths (25 % each), an anchor made with its parents (create_anchors=yes), two
/// fwds of 25 threads sharing files (fileio=(random,shared)) at skew=50 each under
/// fwdrate=max.
#[test]
fn published_5050rw_runs_with_its_sizes_skew_and_shared_files() {
    let d = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compat/published/vdbench/iul1an-5050rw.parm");
    let text = std::fs::read_to_string(fixture)
        .unwrap()
        .replace("width=4,depth=4,files=4000", "width=2,depth=1,files=32")
        .replace("elapsed=1h,interval=60", "elapsed=4,interval=1");
    let p = d.path().join("5050rw.parm");
    std::fs::write(&p, text).unwrap();
    let anchor = d.path().join("not/made/yet");
    let vars = [
        "vdbench_path=/opt/vdbench".to_string(),
        "host1=localhost".into(),
        format!("anchor1={}", anchor.display()),
    ];
    let mut args = vec!["vdbench".to_string(), "-f".into(), p.display().to_string()];
    args.extend(vars);
    let r = ioscope_to(&d.path().join("r.json"), &args).expect_code(0);
    let (_, files) = census(&anchor);
    assert_eq!(files.len(), 64, "2 leaf directories × 32 files");
    let lens = [64 << 10, 128 << 10, 256 << 10, 1 << 20];
    let mut per = [0u64; 4];
    for (path, len) in &files {
        let k = lens.iter().position(|l| l == len);
        per[k.unwrap_or_else(|| panic!("{}: {len} bytes", path.display()))] += 1;
    }
    // Drawn from the run's seed: each length near a quarter of 64 (16 ± 3.5).
    assert!(per.iter().all(|&n| (5..=27).contains(&n)), "{per:?}");
    let total: u64 = files.iter().map(|f| f.1).sum();
    let line = format!(
        "64 files of 4 lengths drawn with seed 137 (64k × {}",
        per[0]
    );
    assert!(r.stdout.contains(&line), "{line} in: {}", r.stdout);
    let format = r.run(0);
    assert_eq!(format.name, "format_for_rd1");
    assert_eq!(
        format.totals.write.bytes, total,
        "the format wrote every file once"
    );
    // skew=50 each under max: equal operation counts (flow control); 2 % allowed.
    let run = r.run(1);
    let (reads, writes) = (run.totals.read.ios, run.totals.write.ios);
    assert!(
        reads > 100 && writes > 100,
        "{reads} reads, {writes} writes"
    );
    let off = reads.abs_diff(writes) as f64 / (reads + writes) as f64;
    assert!(off < 0.02, "{reads} reads against {writes} writes");
    assert!(r.wire["plan"]["targets"][0]["uri"]
        .as_str()
        .unwrap()
        .ends_with("&size=65536:25,131072:25,262144:25,1048576:25&seed=137"));
}

/// skew= under a rate: fwd a gets 75 % of fwdrate=400, b the 25 % left.
#[test]
fn skew_splits_the_rate_between_fwds() {
    let (d, anchor) = with_anchor();
    let p = parm(
        d.path(),
        &anchor,
        "fwd=default,fsd=fsd1,xfersize=4k,fileio=random\nfwd=a,operation=read,skew=75\n\
         fwd=b,operation=write\nrd=rd1,fwd=(a,b),fwdrate=400,format=yes,elapsed=4,interval=1\n",
    );
    let r = ioscope_to(&d.path().join("r.json"), ["run", p.to_str().unwrap()]).expect_code(0);
    let run = r.run(1);
    let rates: Vec<f64> = run.workloads.iter().map(|w| w.totals.all.iops).collect();
    // 300 and 100 a second over 3 s measured, exponential arrivals: 900 ± 30 and
    // 300 ± 17 operations (one σ); 4 σ allowed.
    let s = run.duration_s;
    assert!((rates[0] * s - 900.0).abs() < 120.0, "{rates:?} over {s} s");
    assert!((rates[1] * s - 300.0).abs() < 70.0, "{rates:?} over {s} s");
}

/// Converts a parm of one fsd (8 files of `size` in one directory under a fresh
/// anchor) and `fwd1` read by `rd1` after a format, runs it with the fwd's
/// workload recording its I/O, and gives the run's result and the offsets of the
/// recorded reads (the tree's files end to end). The conversion must keep the
/// files in order (`file_service = "sequential"`).
fn recorded_reads(size: &str, fwd: &str) -> (Ran, Vec<u64>) {
    let (d, anchor) = with_anchor();
    let p = d.path().join("rec.parm");
    std::fs::write(
        &p,
        format!(
            "fsd=fsd1,anchor={},depth=1,width=1,files=8,size={size}\n\
             fwd=fwd1,fsd=fsd1,xfersize=4k,operation=read,{fwd}\n\
             rd=rd1,fwd=fwd1,fwdrate=max,format=yes,elapsed=2,interval=1\n",
            anchor.display()
        ),
    )
    .unwrap();
    let o = run(&["convert", "vdbench", "-f", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let log = d.path().join("rec.log");
    let toml = stdout(&o).replace(
        "name = \"r1-fwd1\"\n",
        &format!("name = \"r1-fwd1\"\nrecord = \"{}\"\n", log.display()),
    );
    assert!(toml.contains("file_service = \"sequential\""), "{toml}");
    let job = d.path().join("rec.toml");
    std::fs::write(&job, toml).unwrap();
    let r = ioscope_to(&d.path().join("r.json"), ["run", job.to_str().unwrap()]).expect_code(0);
    let text = std::fs::read_to_string(&log).unwrap();
    let offsets = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(2) == Some(&"read")).then(|| f[3].parse::<u64>().unwrap())
        })
        .collect();
    (r, offsets)
}

/// fileio=(random,shared): the fwd's threads use one file at the same time. vdbench
/// hands the files out in order; ioscope's threads each walk them in order from
/// the first, a file's bytes on each before the next, so with 4 threads on 1 MiB
/// files read 4 KiB at a time their first 4 × 256 reads fall on the first file.
#[test]
fn shared_files_are_used_by_every_thread_at_once() {
    let (r, offsets) = recorded_reads("1m", "threads=4,fileio=(random,shared)");
    assert_eq!(r.run(1).streams, 4);
    let files: Vec<u64> = offsets.iter().map(|o| o >> 20).take(4 * 256).collect();
    assert_eq!(files.len(), 4 * 256, "{} reads recorded", files.len());
    let first = files.iter().filter(|&&f| f == 0).count();
    assert!(
        first >= 900,
        "{first} of the first 1024 reads on the first file"
    );
}

/// An fwd without `fileselect=` takes the tree's files in order, vdbench's default
/// (`FwdEntry.select_random = false`): one thread reading 64 KiB files 4 KiB at a
/// time, sequentially, records file 0's 16 reads, then file 1's, and so on.
#[test]
fn files_are_taken_in_order_without_fileselect() {
    let (_, offsets) = recorded_reads("64k", "fileio=sequential");
    assert!(offsets.len() >= 8 * 16, "{} reads recorded", offsets.len());
    let expected: Vec<u64> = (0..8 * 16).map(|i| i * 4096).collect();
    assert_eq!(
        offsets[..8 * 16],
        expected,
        "each file's reads in order, then the next file"
    );
}

// vdbench validates file-system data as it does raw I/O: every block a format or
// fwd writes carries its key, reads check it, and -j keeps the keys in a journal
// that a later run (and `ioscope verify`) reads the tree against.
#[test]
fn validation_on_a_tree_passes_intact_data_and_finds_a_corrupted_block() {
    let (d, anchor) = with_anchor();
    let out = d.path().join("out");
    let vdbench = |rd: &str, json: &str| {
        let p = parm(
            d.path(),
            &anchor,
            &format!("fwd=fwd1,fsd=fsd1,operation=read,xfersize=4k\n{rd}\n"),
        );
        let args = ["vdbench", "-j", "-f", p.to_str().unwrap(), "-o"];
        ioscope_to(
            &d.path().join(json),
            args.iter().copied().chain([out.to_str().unwrap()]),
        )
    };
    let r = vdbench("rd=rd1,fwd=fwd1,format=yes,elapsed=3,interval=1", "r1.json").expect_code(0);
    assert_eq!(r.wire["plan"]["data"]["verify"], true, "{}", r.wire["plan"]);
    // The format wrote 36 files × 8 KiB, one write each (vdbench's 128 KiB, at most
    // a file); the rd's reads checked them.
    assert_eq!(r.run(0).totals.write.ios, 36);
    let v = r
        .run(1)
        .verify
        .clone()
        .expect("the rd's reads are verified");
    assert!(v.units_checked >= 72 && v.mismatches == 0, "{v:?}");
    let (code, total, _) = super::data::verify_json(&out);
    assert_eq!(code, Some(0), "{total:?}");
    assert_eq!((total.units_checked, total.mismatches), (72, 0));

    // One block of one file changed behind vdbench's back.
    let victim = anchor.join("vdb.1_2.dir/vdb.2_3.dir/vdb_f0002.file");
    let mut bytes = std::fs::read(&victim).unwrap();
    bytes[4096..4096 + 16].copy_from_slice(b"not what was put");
    std::fs::write(&victim, bytes).unwrap();
    let (code, total, _) = super::data::verify_json(&out);
    assert_eq!(code, Some(3), "verify exits 3 on a mismatch: {total:?}");
    assert_eq!(total.mismatches, 1, "{total:?}");

    // A second run on the same journal reads the tree and finds it too.
    let r = vdbench("rd=rd2,fwd=fwd1,format=no,elapsed=3,interval=1", "r2.json").expect_code(3);
    let v = r.run(0).verify.clone().expect("verified");
    assert!(v.mismatches >= 1 && v.units_checked > 1, "{v:?}");
}

/// vdbench's own example `delete_files`, scaled down: an rd that deletes every file
/// and one that removes every directory, each with `elapsed` far longer than the
/// work, end when nothing is left (vdbench shuts the fwd's threads down then),
/// having deleted each file and directory exactly once.
#[test]
fn deleting_every_file_ends_the_rd_when_none_is_left() {
    let (d, anchor) = with_anchor();
    let p = d.path().join("fs.parm");
    std::fs::write(
        &p,
        format!(
            "fsd=fsd1,anchor={},depth=2,width=3,files=4,size=8k\n\
             fwd=default,threads=3\n\
             fwd=fwd0,fsd=fsd1,operation=read\n\
             fwd=fwd1,fsd=fsd1,operation=delete\n\
             fwd=fwd2,fsd=fsd1,operation=rmdir\n\
             rd=format,fwd=fwd0,fwdrate=1,format=yes,elapsed=2,interval=1\n\
             rd=rd_delete,fwd=fwd1,fwdrate=max,elapsed=600,interval=1,warmup=0\n\
             rd=rd_rmdir,fwd=fwd2,fwdrate=max,elapsed=600,interval=1,warmup=0\n",
            anchor.display()
        ),
    )
    .unwrap();
    let r = ioscope_to(&d.path().join("r.json"), ["run", p.to_str().unwrap()]).expect_code(0);
    let names: Vec<&str> = r.doc.runs.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        ["format_for_format", "format", "rd_delete", "rd_rmdir"]
    );
    // 3 + 9 directories, 9 leaves × 4 files.
    for (k, want) in [(2, 36), (3, 12)] {
        let run = r.run(k);
        assert_eq!(run.end_reason.name(), "passes", "{}", run.name);
        // Far inside the 600 s: the bound only says the run did not wait it out.
        assert!(run.duration_s < 60.0, "{}: {} s", run.name, run.duration_s);
        let t = &run.totals.all;
        assert_eq!((t.ios, t.errors), (want, 0), "{}: {}", run.name, r.stderr);
    }
    let (dirs, files) = census(&anchor);
    assert!(dirs.is_empty() && files.is_empty(), "{dirs:?} {files:?}");
}

// A format by several threads (fwd=format,threads=4) over files of two lengths:
// each thread writes whole files of its own, so every file is written to its end
// and the bytes written are the tree's, once each (the files start as holes).
#[test]
fn a_format_by_several_threads_writes_every_file_whole() {
    let (d, anchor) = with_anchor();
    let p = d.path().join("fs.parm");
    let text = format!(
        "fsd=fsd1,anchor={},depth=1,width=2,files=5,size=(64k,50,192k,50)\n\
         fwd=format,threads=4,xfersize=32k\n\
         fwd=fwd1,fsd=fsd1,operation=read,xfersize=4k\n\
         rd=rd1,fwd=fwd1,format=only,elapsed=2,interval=1\n",
        anchor.display()
    );
    std::fs::write(&p, text).unwrap();
    let r = ioscope_to(&d.path().join("r.json"), ["run", p.to_str().unwrap()]).expect_code(0);
    let (_, files) = census(&anchor);
    assert_eq!(files.len(), 10, "{files:?}");
    let mut holes = Vec::new();
    for (path, len) in &files {
        assert!(*len == 64 << 10 || *len == 192 << 10, "{path:?}: {len}");
        let data = std::fs::read(path).unwrap();
        for (k, block) in data.chunks(4096).enumerate() {
            if block.iter().all(|&b| b == 0) {
                holes.push(format!("{}@{}", path.display(), k * 4096));
            }
        }
    }
    assert!(holes.is_empty(), "never written: {holes:?}");
    let total: u64 = files.iter().map(|f| f.1).sum();
    let w = &r.run(0).totals.write;
    assert_eq!((w.bytes, w.errors), (total, 0));
    assert_eq!(r.run(0).streams, 4, "the format's threads");
}

/// An rd's `maxdata=` ends it once its measured intervals moved more than that many
/// bytes (vdbench checks at each interval's end, after the warm-up), long before its
/// `elapsed=60`: `end_reason` says why.
#[test]
fn maxdata_ends_the_rd_after_that_many_bytes() {
    let (d, anchor) = with_anchor();
    let p = parm(
        d.path(),
        &anchor,
        "fwd=fr,fsd=fsd1,operation=read,xfersize=4k,fileio=sequential,fileselect=random\n\
         rd=rd1,fwd=fr,fwdrate=1000,format=yes,elapsed=60,interval=1,maxdata=2m\n",
    );
    let r = ioscope_to(&d.path().join("r.json"), ["run", p.to_str().unwrap()]).expect_code(0);
    let run = r.run(1);
    assert_eq!(
        r.wire["plan"]["runs"][1]["stop_after_bytes"].as_u64(),
        Some(2 << 20)
    );
    assert_eq!(run.end_reason.name(), "data_limit");
    // 1000 reads of 4 KiB a second pass 2 MiB in the first measured interval.
    let measured: u64 = run
        .intervals
        .iter()
        .filter(|i| !i.warmup)
        .map(|i| i.bytes)
        .sum();
    assert!(measured > 2 << 20, "{measured}");
    assert_eq!(run.totals.all.bytes, measured);
    // About 1 s of measured time; 30 s leaves room for a loaded machine, and is
    // still half the rd's elapsed.
    assert!(run.duration_s < 30.0, "{}", run.duration_s);
}

/// `openflags=fsync` on an fwd: vdbench fsyncs each file before it closes it, as a
/// thread moves on to its next file. One thread writing each 8 KiB file in two
/// 4 KiB writes moves on after every second write, and fsyncs the last file when
/// its I/O is over: ⌈writes / 2⌉ fsyncs, counted with its flushes. The read fwd
/// with `o_direct` on the same tree, and the format run (its fsd has no
/// openflags), flush nothing.
#[test]
fn openflags_fsync_fsyncs_each_file_as_the_writes_move_on() {
    let (d, anchor) = with_anchor();
    let p = parm(
        d.path(),
        &anchor,
        "fwd=w,fsd=fsd1,operation=write,xfersize=4k,openflags=fsync\n\
         fwd=r,fsd=fsd1,operation=read,xfersize=4k,openflags=o_direct\n\
         rd=rd1,fwd=(w,r),fwdrate=max,format=yes,elapsed=2,interval=1,warmup=0\n",
    );
    let r = ioscope_to(&d.path().join("r.json"), ["run", p.to_str().unwrap()]).expect_code(0);
    let totals = |run: usize, w: usize| r.wire["runs"][run]["workloads"][w]["totals"].clone();
    let count = |t: &serde_json::Value, op: &str| t[op]["ios"].as_u64().unwrap_or(0);
    let ws = &r.wire["plan"]["runs"][1]["workloads"];
    assert_eq!(ws[0]["fsync_each_file"], true, "{}", ws[0]);
    assert!(ws[1].get("fsync_each_file").is_none(), "{}", ws[1]);
    let w = totals(1, 0);
    let writes = count(&w, "write");
    assert!(writes >= 2, "{w}");
    assert_eq!(count(&w, "flush"), writes.div_ceil(2), "{w}");
    assert_eq!(count(&totals(1, 1), "flush"), 0);
    assert_eq!(
        count(&totals(0, 0), "flush"),
        0,
        "the format run does not fsync"
    );
}

/// `format=(clean,only)`: vdbench deletes the rd's trees and does nothing more.
/// After a format lays out 12 directories and 36 files, the clean's two runs
/// delete exactly those (files, then directories, deepest first), leave the anchor
/// empty and run no workload; a second clean finds nothing and ends at once.
#[test]
fn format_clean_deletes_the_tree_and_runs_nothing_else() {
    let (d, anchor) = with_anchor();
    let p = parm(
        d.path(),
        &anchor,
        "fwd=r,fsd=fsd1,operation=read,xfersize=4k\n\
         rd=fmt,fwd=r,format=(restart,only),elapsed=2,interval=1\n\
         rd=cl,fwd=r,format=(clean,only),elapsed=2,interval=1\n\
         rd=again,fwd=r,format=clean,elapsed=2,interval=1\n",
    );
    let r = ioscope_to(&d.path().join("r.json"), ["run", p.to_str().unwrap()]).expect_code(0);
    let names: Vec<&str> = r.doc.runs.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "format_for_fmt",
            "clean_for_cl",
            "clean_dirs_for_cl",
            "clean_for_again",
            "clean_dirs_for_again"
        ]
    );
    assert_eq!(r.run(1).totals.all.ios, 36, "every file deleted once");
    assert_eq!(r.run(2).totals.all.ios, 12, "every directory removed once");
    assert_eq!((r.run(3).totals.all.ios, r.run(4).totals.all.ios), (0, 0));
    let (dirs, files) = census(&anchor);
    assert!(dirs.is_empty() && files.is_empty(), "{dirs:?} {files:?}");
}

/// An fsd's `totalsize=`: vdbench uses only the files its fixed-seed draw
/// (java.util.Random(0)) picks until they hold that many bytes. Of 90 files of
/// 4 KiB, 100 KiB is 25 files: the format lays out exactly those, the first drawn
/// being file 65 (⌊0.7309… × 90⌋) as in vdbench, and the reads touch no other.
/// `workingsetsize=40k` draws 10 of those for the rd's reads (not the format's
/// writes): a target of their own on that subset.
#[test]
fn totalsize_uses_vdbench_s_subset_of_the_files() {
    let (_d, anchor, r) = run_fsd(
        "depth=2,width=3,files=10,size=4k,totalsize=100k,workingsetsize=40k",
        "fwd=r,fsd=fsd1,operation=read,xfersize=4k,fileselect=random\n\
         rd=rd1,fwd=r,format=yes,elapsed=2,interval=1\n",
    );
    let (dirs, files) = census(&anchor);
    assert_eq!((dirs.len(), files.len()), (12, 25));
    assert!(files.iter().all(|(_, len)| *len == 4096));
    // File 65: leaf directory 6 in vdbench's order (every parent's first, then
    // every parent's second, then third: vdb.1_1/vdb.2_3), its sixth file.
    let first = anchor.join("vdb.1_1.dir/vdb.2_3.dir/vdb_f0006.file");
    assert!(files.iter().any(|(f, _)| *f == first), "{files:?}");
    assert_eq!(r.run(0).totals.write.bytes, 25 * 4096);
    assert_eq!(r.run(1).totals.all.errors, 0);
    let w = &r.wire["plan"]["runs"][1]["workloads"][0];
    assert_eq!(w["target"], "fsd1.wss");
    let t = (r.wire["plan"]["targets"].as_array().unwrap().iter())
        .find(|t| t["name"] == "fsd1.wss")
        .unwrap();
    assert!(t["uri"].as_str().unwrap().contains("&wss=40960"), "{t}");
}

/// `distribution=all`: vdbench puts `files=` files in every directory of the
/// tree, not only the last level's: 12 directories × 2 files, each written whole.
#[test]
fn distribution_all_formats_files_in_every_directory() {
    let (_d, anchor, r) = run_fsd(
        "depth=2,width=3,files=2,size=8k,distribution=all",
        "fwd=r,fsd=fsd1,operation=read,xfersize=4k\n\
         rd=rd1,fwd=r,format=only,elapsed=2,interval=1\n",
    );
    let (dirs, files) = census(&anchor);
    assert_eq!((dirs.len(), files.len()), (12, 24));
    for dir in &dirs {
        let here = files
            .iter()
            .filter(|(f, _)| f.parent() == Some(dir.as_path()));
        assert_eq!(here.count(), 2, "{}", dir.display());
    }
    assert!(files.iter().all(|(_, len)| *len == 8192));
    assert_eq!(r.run(0).totals.write.bytes, 24 * 8192);
}
