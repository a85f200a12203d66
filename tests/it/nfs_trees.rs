//! Directory trees on an NFS export (`tree:nfs://…`, and vdbench's `anchor=nfs://…`)
//! against a real NFS-Ganesha ([`super::net_nfs::server`]: started and killed by
//! PID by the test): a format lays out exactly the declared leaf directories and
//! files, checked through the export's backing directory on this host, and a
//! create/delete/read/write mix runs on the export with each operation's counts
//! adding up to the totals.

use super::file_trees::{census, formatted, mix_adds_up};
use super::net_nfs::{server, Ganesha};
use super::*;

/// A vdbench parameter file with a depth 2 × width 2 × files 3 tree of 8 KiB files
/// at `anchor` on `g`'s export, then `body`.
fn parm(dir: &Path, g: &Ganesha, body: &str) -> PathBuf {
    let p = dir.join("fs.parm");
    let text = format!(
        "fsd=fsd1,anchor=nfs://127.0.0.1:{}/nfs/anchor?mountport={},depth=2,width=2,files=3,size=8k\n{body}",
        g.nfs_port, g.mount_port
    );
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_format_on_an_nfs_anchor_lays_out_the_declared_tree() {
    let Some(g) = server() else {
        return;
    };
    let anchor = g.export_dir.join("anchor");
    std::fs::create_dir(&anchor).unwrap();
    let d = tempdir();
    let p = parm(
        d.path(),
        &g,
        "fwd=fwd1,fsd=fsd1,operation=read,xfersize=4k\n\
         rd=rd1,fwd=fwd1,format=only,elapsed=2,interval=1\n",
    );
    let r = ioscope_to(&d.path().join("r.json"), ["run", p.to_str().unwrap()]).expect_code(0);
    assert_eq!(r.run(0).name, "format_for_rd1");
    // 2 + 4 directories; 4 leaves × 3 files, every byte written through the export.
    formatted(
        &anchor,
        &r,
        (6, 12),
        "vdb.1_2.dir/vdb.2_2.dir/vdb_f0003.file",
    );
}

/// A mix of `fwds` (read first, write second) on a formatted tree for 3 seconds:
/// each operation's per-interval counts add up to its total, none fails, and they
/// add up to the run's.
fn mix(fwds: &str, names_want: &[&str]) {
    let Some(g) = server() else {
        return;
    };
    std::fs::create_dir(g.export_dir.join("anchor")).unwrap();
    let d = tempdir();
    let p = parm(
        d.path(),
        &g,
        &format!(
            "fwd=default,fsd=fsd1,xfersize=4k,fileio=sequential,fileselect=random\n{fwds}\
             rd=rd1,fwd=f*,fwdrate=max,format=yes,elapsed=3,interval=1\n"
        ),
    );
    let r = ioscope_to(&d.path().join("r.json"), ["run", p.to_str().unwrap()]);
    mix_adds_up(&r, names_want);
}

#[test]
fn a_mix_on_an_nfs_tree_adds_up_per_operation() {
    // No delete: reads and writes never meet a file removed under them. No create
    // either: with every file formatted and nothing deleting, vdbench shuts a
    // create's threads down at once (`stop_when_none_left`), so it would do
    // nothing to count.
    mix(
        "fwd=fr,operation=read\nfwd=fw,operation=write\nfwd=fs,operation=getattr\n",
        &["fr", "fw", "fs"],
    );
}

// Known broken: about 1 run in 4, a READ or WRITE sent on a handle just opened
// (by name) for a file another worker is deleting gets no reply from
// NFS-Ganesha 4.3, and the worker waits out libnfs's 10 s call timeout (seen in
// gdb: nfs_pread/nfs_pwrite waiting), so a workload may do nothing in the run.
#[test]
#[ignore = "Ganesha 4.3 leaves some READ/WRITEs racing a delete unanswered (10 s stall)"]
fn a_mix_with_deletes_on_an_nfs_tree_adds_up_per_operation() {
    mix(
        "fwd=fr,operation=read\nfwd=fw,operation=write\n\
         fwd=fc,operation=create\nfwd=fd,operation=delete\nfwd=fs,operation=getattr\n",
        &["fr", "fw", "fc", "fd", "fs"],
    );
}

#[test]
fn file_operations_run_on_a_tree_uri_and_mkdir_parents_makes_the_anchor() {
    let Some(g) = server() else {
        return;
    };
    let uri = format!(
        "tree:nfs://127.0.0.1:{}/nfs/made?depth=1&width=2&files=2&size=1k&mkdir=parents&mountport={}",
        g.nfs_port, g.mount_port
    );
    let r = run_json(&[
        "run", "-t", &uri, "--engine", "filestat", "--bs", "1k", "--rw", "read", "--passes", "1",
    ]);
    let t = &r.run(0).totals.read;
    assert_eq!((t.ios, t.errors), (4, 0), "one stat per file: {}", r.stderr);
    // The stat run laid the files out with their data before it started.
    let (dirs, files) = census(&g.export_dir.join("made"));
    assert_eq!((dirs.len(), files.len()), (2, 4), "{dirs:?} {files:?}");
    assert!(files.iter().all(|(_, len)| *len == 1024), "{files:?}");
}

#[test]
fn reads_on_an_nfs_tree_take_the_sync_engine() {
    let Some(g) = server() else {
        return;
    };
    let uri = format!(
        "tree:nfs://127.0.0.1:{}/nfs/t?depth=1&width=2&files=2&size=8k&mkdir=parents&mountport={}",
        g.nfs_port, g.mount_port
    );
    let r = run_json(&[
        "run", "-t", &uri, "--rw", "read", "--bs", "4k", "--passes", "1",
    ]);
    let run = r.run(0);
    assert_eq!(run.engine, "sync", "auto's choice: {}", r.stderr);
    // 4 files of 8 KiB laid out with data, each read once in 4 KiB reads.
    assert_eq!((run.totals.read.ios, run.totals.read.errors), (8, 0));
    assert_eq!(run.totals.read.bytes, 4 * 8192);
    let out = super::run(&[
        "run", "-t", &uri, "--rw", "read", "--bs", "4k", "--passes", "1", "--engine", "uring",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("by the sync engine only"), "{stderr}");
}
