//! The SMB file-tree building blocks (`ioscope::target::smb::dir::SmbDir`) against a
//! real smbd (started as in `net_smb`): every call's answer in the errno convention,
//! checked against what the share's directory on local disk, which the test owns,
//! holds afterwards.

use super::net_smb::{server, Smbd, PASSWORD, USER};
use ioscope::target::smb::client::OpenError;
use ioscope::target::smb::credentials::Credentials;
use ioscope::target::smb::dir::{DirError, SmbDir};

fn neg(errno: i32) -> i64 {
    -i64::from(errno)
}

/// An `SmbDir` on `base` inside the share (created with its parents).
fn connect(s: &Smbd, base: &str) -> SmbDir {
    let uri = format!("smb://{USER}@127.0.0.1:{}/share/{base}", s.port);
    let spec = ioscope::target::smb::parse(&uri).unwrap();
    SmbDir::connect(&spec, &Credentials::new(USER, PASSWORD.into()), false)
        .unwrap_or_else(|e| panic!("connecting to {uri}: {e}"))
}

#[test]
fn smb_dir_name_calls_answer_in_errnos() {
    let Some(s) = server() else { return };
    let d = connect(&s, "t/base");
    let local = s.share().join("t/base");
    assert!(local.is_dir(), "the base and its parent were created");

    assert_eq!(d.create_new("f"), 0);
    assert!(local.join("f").is_file());
    assert_eq!(d.create_new("f"), neg(libc::EEXIST));
    assert_eq!(d.stat("f"), 0);
    assert_eq!(d.stat("missing"), neg(libc::ENOENT));
    assert_eq!(d.stat("nodir/f"), neg(libc::ENOENT));
    assert_eq!(d.access("f"), 0);
    assert_eq!(d.access("missing"), neg(libc::ENOENT));

    assert_eq!(d.mkdir("d"), 0);
    assert!(local.join("d").is_dir());
    assert_eq!(d.mkdir("d"), neg(libc::EEXIST));
    assert!(d.stat_info("d").unwrap().is_dir);
    assert_eq!(d.create_new("d/inner"), 0);
    assert_eq!(d.rmdir("d"), neg(libc::ENOTEMPTY));
    assert!(
        local.join("d/inner").is_file(),
        "a refused rmdir removed nothing"
    );
    assert_eq!(d.unlink("d"), neg(libc::EISDIR));
    assert_eq!(d.rmdir("f"), neg(libc::ENOTDIR));
    assert_eq!(d.unlink("d/inner"), 0);
    assert!(!local.join("d/inner").exists());
    assert_eq!(d.unlink("d/inner"), neg(libc::ENOENT));
    assert_eq!(d.rmdir("d"), 0);
    assert!(!local.join("d").exists());
    assert_eq!(d.rmdir("d"), neg(libc::ENOENT));

    assert_eq!(d.create_new("g"), 0);
    assert_eq!(d.rename_noreplace("f", "g"), neg(libc::EEXIST));
    assert!(
        local.join("f").is_file(),
        "the source of a refused rename stays"
    );
    assert_eq!(d.rename_noreplace("f", "h"), 0);
    assert!(!local.join("f").exists() && local.join("h").is_file());
    assert_eq!(d.rename_noreplace("f", "i"), neg(libc::ENOENT));
}

#[test]
fn smb_dir_file_calls_write_read_and_touch() {
    let Some(s) = server() else { return };
    let d = connect(&s, "io");
    let local = s.share().join("io");

    let w = d.create_write("data").unwrap();
    assert_eq!(d.create_write("data").err(), Some(neg(libc::EEXIST)));
    let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7 + 3) as u8).collect();
    assert_eq!(d.write_at(&w, &bytes, 4096), bytes.len() as i64);
    assert_eq!(
        d.read_at(&w, &mut [0; 8], 0),
        neg(libc::EBADF),
        "a write-only handle"
    );
    assert_eq!(d.close(w), 0);
    let on_disk = std::fs::read(local.join("data")).unwrap();
    assert_eq!(on_disk.len(), 4096 + bytes.len());
    assert_eq!(&on_disk[4096..], &bytes[..]);
    assert_eq!(
        d.stat_info("data").unwrap().size_bytes,
        on_disk.len() as u64
    );

    let r = d.open_read("data").unwrap();
    let mut back = vec![0u8; bytes.len()];
    assert_eq!(d.read_at(&r, &mut back, 4096), bytes.len() as i64);
    assert_eq!(back, bytes);
    assert_eq!(
        d.read_at(&r, &mut back, on_disk.len() as u64),
        0,
        "end of file"
    );
    assert_eq!(
        d.write_at(&r, &bytes, 0),
        neg(libc::EBADF),
        "a read-only handle"
    );
    assert_eq!(d.close(r), 0);
    assert_eq!(d.open_read("missing").err(), Some(neg(libc::ENOENT)));
    assert_eq!(d.create_new("sub"), 0);
    // A file in the middle of a path: STATUS_OBJECT_PATH_NOT_FOUND, so ENOENT where
    // a local open says ENOTDIR (SMB does not tell the two apart).
    assert_eq!(d.open_read("sub/x").err(), Some(neg(libc::ENOENT)));

    // An old mtime on disk, then touch through the share: the disk sees now.
    let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
    let f = std::fs::File::options()
        .write(true)
        .open(local.join("data"))
        .unwrap();
    f.set_modified(old).unwrap();
    drop(f);
    let before = std::time::SystemTime::now() - std::time::Duration::from_secs(2);
    assert_eq!(d.touch_mtime("data"), 0);
    let mtime = std::fs::metadata(local.join("data"))
        .unwrap()
        .modified()
        .unwrap();
    assert!(mtime >= before, "mtime {mtime:?} not moved to now");
    let seen_ns = d.stat_info("data").unwrap().mtime_unix_ns;
    let disk_ns = mtime
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    assert!(
        seen_ns.abs_diff(disk_ns) < 1_000_000_000,
        "{seen_ns} vs {disk_ns}"
    );
    assert_eq!(d.touch_mtime("missing"), neg(libc::ENOENT));

    // A handle that outlives its directory (a worker's error path) drops quietly.
    let leftover = d.open_read("data").unwrap();
    drop(d);
    drop(leftover);
}

#[test]
fn smb_dir_lays_out_directories_and_files() {
    let Some(s) = server() else { return };
    let d = connect(&s, "tree");
    let local = s.share().join("tree");

    d.make_dirs(&["a", "a/b", "a/b/c"]).unwrap();
    d.make_dirs(&["a", "a/b"])
        .expect("existing directories are fine");
    assert!(local.join("a/b/c").is_dir());
    // 3 MiB and a bit in WRITEs of the 64 KiB chunk.
    let len_bytes = (3 << 20) + 5;
    d.write_file("a/b/c/f", len_bytes, &[0x5a; 65536]).unwrap();
    let on_disk = std::fs::read(local.join("a/b/c/f")).unwrap();
    assert_eq!(on_disk.len() as u64, len_bytes);
    assert!(on_disk.iter().all(|&b| b == 0x5a));

    match d.write_file("a/b/c/f", 1, &[1]) {
        Err(e @ DirError::Op { errno, .. }) => {
            assert_eq!(errno, libc::EEXIST);
            let msg = e.to_string();
            assert!(msg.contains(r"tree\a\b\c\f"), "{msg}");
        }
        other => panic!("a second write_file: {other:?}"),
    }
    match d.make_dirs(&["x/y"]) {
        Err(DirError::Op { errno, .. }) => assert_eq!(errno, libc::ENOENT),
        other => panic!("a directory without its parent: {other:?}"),
    }
}

#[test]
fn smb_dir_refusals_name_the_user_or_the_path_never_the_password() {
    let Some(s) = server() else { return };
    let spec = |base: &str| {
        let uri = format!("smb://{USER}@127.0.0.1:{}/share/{base}", s.port);
        ioscope::target::smb::parse(&uri).unwrap()
    };
    let wrong = "Not-The-Password-1";
    match SmbDir::connect(&spec("x"), &Credentials::new(USER, wrong.into()), false) {
        Err(e @ DirError::Connect(OpenError::Auth { .. })) => {
            assert!(!format!("{e} {e:?}").contains(wrong), "{e:?}");
        }
        Err(e) => panic!("a wrong password: {e}"),
        Ok(_) => panic!("a wrong password was accepted"),
    }
    // A base below a file cannot be made: the error names where.
    std::fs::write(s.share().join("plain"), b"x").unwrap();
    let creds = Credentials::new(USER, PASSWORD.into());
    match SmbDir::connect(&spec("plain/sub"), &creds, false) {
        Err(e @ DirError::Op { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(r"\share\plain\sub"), "{msg}");
            assert!(!msg.contains(PASSWORD));
        }
        Err(e) => panic!("a base below a file: {e}"),
        Ok(_) => panic!("a base below a file was made"),
    }
}
