//! Directory trees on an SMB share (`tree:smb://…`, and vdbench's `anchor=smb://…`)
//! against a real smbd ([`super::net_smb::server`]: started and killed by PID by
//! the test): a format lays out exactly the declared leaf directories and files,
//! checked in the share's directory on this host, a create/delete/read/write mix
//! runs with each operation's counts adding up to the totals, and the same vdbench
//! file that runs on a local anchor and an NFS one runs here.

use super::file_trees::{census, formatted, mix_adds_up};
use super::net_smb::{server, with_password, Smbd, PASSWORD, USER};
use super::*;

/// A vdbench parameter file with a depth 2 × width 2 × files 3 tree of 8 KiB files
/// at `anchor` on `s`'s share, then `body`.
fn parm(dir: &Path, s: &Smbd, body: &str) -> PathBuf {
    let p = dir.join("fs.parm");
    let text = format!(
        "fsd=fsd1,anchor=smb://{USER}@127.0.0.1:{}/share/anchor,depth=2,width=2,files=3,size=8k\n{body}",
        s.port
    );
    std::fs::write(&p, text).unwrap();
    p
}

/// Runs `args` with the share's password in the environment, `--json` into `dir`.
fn run_in(dir: &Path, args: &[&str]) -> Ran {
    ioscope_cmd_to(with_password(PASSWORD), &dir.join("r.json"), args)
}

#[test]
fn a_format_on_an_smb_anchor_lays_out_the_declared_tree() {
    let Some(s) = server() else { return };
    let anchor = s.share().join("anchor");
    std::fs::create_dir(&anchor).unwrap();
    let d = tempdir();
    let p = parm(
        d.path(),
        &s,
        "fwd=fwd1,fsd=fsd1,operation=read,xfersize=4k\n\
         rd=rd1,fwd=fwd1,format=only,elapsed=2,interval=1\n",
    );
    let r = run_in(d.path(), &["run", p.to_str().unwrap()]).expect_code(0);
    assert_eq!(r.run(0).name, "format_for_rd1");
    // 2 + 4 directories; 4 leaves × 3 files, every byte written through the share.
    formatted(
        &anchor,
        &r,
        (6, 12),
        "vdb.1_2.dir/vdb.2_2.dir/vdb_f0003.file",
    );
}

#[test]
fn a_mix_with_deletes_on_an_smb_tree_adds_up_per_operation() {
    let Some(s) = server() else { return };
    std::fs::create_dir(s.share().join("anchor")).unwrap();
    let d = tempdir();
    let p = parm(
        d.path(),
        &s,
        "fwd=default,fsd=fsd1,xfersize=4k,fileio=sequential,fileselect=random\n\
         fwd=fr,operation=read\nfwd=fw,operation=write\nfwd=fc,operation=create\n\
         fwd=fd,operation=delete\nfwd=fs,operation=getattr\n\
         rd=rd1,fwd=f*,fwdrate=max,format=yes,elapsed=3,interval=1\n",
    );
    let r = run_in(d.path(), &["run", p.to_str().unwrap()]);
    mix_adds_up(&r, &["fr", "fw", "fc", "fd", "fs"]);
}

#[test]
fn file_operations_run_on_a_tree_uri_and_mkdir_parents_makes_the_anchor() {
    let Some(s) = server() else { return };
    let uri = format!(
        "tree:smb://{USER}@127.0.0.1:{}/share/made/here?depth=1&width=2&files=2&size=1k&mkdir=parents",
        s.port
    );
    let d = tempdir();
    let r = run_in(
        d.path(),
        &[
            "run", "-t", &uri, "--engine", "filestat", "--bs", "1k", "--rw", "read", "--passes",
            "1",
        ],
    );
    let t = &r.run(0).totals.read;
    assert_eq!((t.ios, t.errors), (4, 0), "one stat per file: {}", r.stderr);
    // The stat run laid the files out with their data before it started.
    let (dirs, files) = census(&s.share().join("made/here"));
    assert_eq!((dirs.len(), files.len()), (2, 4), "{dirs:?} {files:?}");
    assert!(files.iter().all(|(_, len)| *len == 1024), "{files:?}");
}

#[test]
fn reads_and_writes_on_an_smb_tree_take_the_sync_engine_and_a_missing_anchor_is_refused() {
    let Some(s) = server() else { return };
    let base = format!("tree:smb://{USER}@127.0.0.1:{}/share", s.port);
    let d = tempdir();
    let missing = format!("{base}/nowhere?depth=1&width=1&files=1&size=4k");
    let out = with_password(PASSWORD)
        .args(["run", "-t", &missing, "--rw", "write", "--duration", "1s"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("does not exist on the share") && err.contains("mkdir=parents"),
        "{err}"
    );
    assert!(!err.contains(PASSWORD), "{err}");
    assert!(!s.share().join("nowhere").exists(), "nothing was made");

    let uri = format!("{base}/t?depth=1&width=2&files=2&size=8k&mkdir=parents");
    let r = run_in(
        d.path(),
        &[
            "run", "-t", &uri, "--rw", "write", "--bs", "4k", "--passes", "1",
        ],
    );
    let run = r.run(0);
    assert_eq!(run.engine, "sync", "auto's choice: {}", r.stderr);
    // 4 files of 8 KiB, each written once in 4 KiB writes, landed on the share.
    assert_eq!((run.totals.write.ios, run.totals.write.errors), (8, 0));
    let (_, files) = census(&s.share().join("t"));
    assert_eq!(files.len(), 4, "{files:?}");
    assert!(files.iter().all(|(_, len)| *len == 8192), "{files:?}");
    let r = run_in(
        d.path(),
        &[
            "run", "-t", &uri, "--rw", "read", "--bs", "4k", "--passes", "1",
        ],
    );
    assert_eq!(r.run(0).totals.read.bytes, 4 * 8192, "{}", r.stderr);
}
