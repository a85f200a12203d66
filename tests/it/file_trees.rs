//! Directory trees of files (`tree:` targets) through vdbench file-system parameter
//! files: `format=` lays out exactly width^depth leaf directories of `files` files of
//! the declared size, a read/write/create/delete mix and a mix of every fwd
//! operation report each operation per interval, adding up to their totals, and
//! operations that find nothing to act on are skips, not errors.

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

/// Every directory and regular file below `root`, counted.
fn census(root: &Path) -> (Vec<PathBuf>, Vec<(PathBuf, u64)>) {
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
    let d = tempfile::tempdir().unwrap();
    let anchor = d.path().join("anchor");
    std::fs::create_dir(&anchor).unwrap();
    let p = parm(
        d.path(),
        &anchor,
        "fwd=fwd1,fsd=fsd1,operation=read,xfersize=4k\n\
         rd=rd1,fwd=fwd1,format=only,elapsed=2,interval=1\n",
    );
    let r = ioscope_to(&d.path().join("r.json"), ["run", p.to_str().unwrap()]).expect_code(0);
    assert_eq!(r.doc.runs.len(), 1, "format=only runs the format alone");
    assert_eq!(r.run(0).name, "format_for_rd1");
    let (dirs, files) = census(&anchor);
    // 3 + 9 directories; 9 leaves × 4 files, each 8 KiB, in the leaves only.
    assert_eq!(dirs.len(), 12, "{dirs:?}");
    assert_eq!(files.len(), 36);
    assert!(files.iter().all(|(_, len)| *len == 8192), "{files:?}");
    assert!(files
        .iter()
        .all(|(p, _)| p.components().count() == anchor.components().count() + 3));
    assert!(anchor
        .join("vdb.1_3.dir/vdb.2_3.dir/vdb_f0004.file")
        .is_file());
    // The format run wrote every byte once: 36 files × 8 KiB in 4 KiB writes.
    assert_eq!(r.run(0).totals.write.ios, 72);
    assert_eq!(r.run(0).totals.write.bytes, 36 * 8192);
}

#[test]
fn a_mix_reports_each_operation_per_interval() {
    let d = tempfile::tempdir().unwrap();
    let anchor = d.path().join("anchor");
    std::fs::create_dir(&anchor).unwrap();
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
    let measured: Vec<_> = run.intervals.iter().filter(|i| !i.warmup).collect();
    assert!(!measured.is_empty());
    for (k, w) in run.workloads.iter().enumerate() {
        let per_interval: u64 = measured.iter().map(|i| i.workloads[k].ios).sum();
        assert_eq!(
            per_interval, w.totals.all.ios,
            "{}: intervals add up to the total",
            w.name
        );
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
    let d = tempfile::tempdir().unwrap();
    let anchor = d.path().join("anchor");
    std::fs::create_dir(&anchor).unwrap();
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
    let d = tempfile::tempdir().unwrap();
    let anchor = d.path().join("anchor");
    std::fs::create_dir(&anchor).unwrap();
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
