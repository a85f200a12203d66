//! NBD targets against a real server: nbdkit on a Unix socket in a temp directory or
//! on 127.0.0.1 with a free port, started per test and stopped by PID on drop. I/O
//! counts are checked against nbdkit's own (its stats filter), not only ours.

use super::*;
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

/// An nbdkit process, killed by PID when dropped (also when a test fails).
struct Nbdkit {
    child: std::process::Child,
    /// The URI to give ioscope.
    uri: String,
    stats: PathBuf,
    _dir: tempfile::TempDir,
}

impl Nbdkit {
    /// Starts nbdkit with `args` (filters, plugin and its parameters) on a Unix socket,
    /// with the stats filter in front, or explains why it cannot.
    fn unix(args: &[&str]) -> Result<Nbdkit, String> {
        let dir = tempdir();
        let sock = dir.path().join("nbd.sock");
        let uri = format!("nbd+unix:///?socket={}", sock.display());
        Self::start(dir, &["-U", sock.to_str().unwrap()], args, uri, |_| {
            sock.exists()
        })
    }

    /// The same on 127.0.0.1 with a free port.
    fn tcp(args: &[&str]) -> Result<Nbdkit, String> {
        let port = free_port();
        let uri = format!("nbd://127.0.0.1:{port}");
        let p = port.to_string();
        Self::start(tempdir(), &["-i", "127.0.0.1", "-p", &p], args, uri, |_| {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        })
    }

    fn start(
        dir: tempfile::TempDir,
        listen: &[&str],
        args: &[&str],
        uri: String,
        ready: impl Fn(&Path) -> bool,
    ) -> Result<Nbdkit, String> {
        if Command::new("nbdkit").arg("--version").output().is_err() {
            return Err("nbdkit is not installed (Debian package nbdkit)".into());
        }
        let stats = dir.path().join("stats.txt");
        let statsfile = format!("statsfile={}", stats.display());
        let child = Command::new("nbdkit")
            .args(["--foreground", "--exit-with-parent", "--filter=stats"])
            .args(listen)
            .args(args)
            .arg(&statsfile)
            .spawn()
            .map_err(|e| format!("starting nbdkit: {e}"))?;
        let mut k = Nbdkit {
            child,
            uri,
            stats,
            _dir: dir,
        };
        let t0 = Instant::now();
        while !ready(k._dir.path()) {
            if let Ok(Some(st)) = k.child.try_wait() {
                return Err(format!("nbdkit exited at start: {st}"));
            }
            if t0.elapsed() > Duration::from_secs(10) {
                return Err("nbdkit did not start listening within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(k)
    }

    /// Stops the server and returns (reads, writes) as nbdkit counted them.
    fn stop_and_count(mut self) -> (u64, u64) {
        self.stop();
        let text = std::fs::read_to_string(&self.stats).expect("nbdkit stats file");
        let ops = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}: ")))
                .and_then(|r| r.split_whitespace().next())
                .map(|n| n.parse::<u64>().unwrap())
                .unwrap_or(0)
        };
        (ops("read"), ops("write"))
    }

    fn stop(&mut self) {
        self.signal(libc::SIGTERM);
    }

    /// Sends `sig` to the server and waits for it to end.
    fn signal(&mut self, sig: i32) {
        // SAFETY: signalling our own child by its PID.
        unsafe { libc::kill(self.child.id() as i32, sig) };
        let _ = self.child.wait();
    }
}

impl Drop for Nbdkit {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}

/// A TCP port nobody listens on right now.
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind port 0");
    l.local_addr().unwrap().port()
}

fn server(args: &[&str]) -> Option<Nbdkit> {
    match Nbdkit::unix(args) {
        Ok(k) => Some(k),
        Err(why) => {
            skip_or_fail(&format!("nbdkit: {why}"));
            None
        }
    }
}

#[test]
fn nbd_randread_counts_match_the_server() {
    let Some(k) = server(&["memory", "16M"]) else {
        return;
    };
    let r = run_json(&[
        "run", "-t", &k.uri, "--rw", "randread", "--bs", "4k", "--qd", "16", "--passes", "1",
    ]);
    let run0 = r.run(0);
    assert_eq!(run0.engine, "nbd");
    // The whole 16 MiB export, from the server's size: 4096 reads of 4 KiB.
    assert_eq!(run0.totals.read.ios, 4096);
    assert_eq!(k.stop_and_count(), (4096, 0));
}

#[test]
fn nbd_randwrite_with_verify_after_is_clean_and_exact() {
    let Some(k) = server(&["memory", "64M"]) else {
        return;
    };
    let r = run_json(&[
        "run",
        "-t",
        &k.uri,
        "--rw",
        "randwrite",
        "--bs",
        "8k",
        "--qd",
        "16",
        "--size",
        "4m",
        "--passes",
        "2",
        "--verify-after",
    ]);
    let run0 = r.run(0);
    assert_eq!(run0.totals.write.ios, 1024);
    let v = run0.verify.as_ref().expect("verify counts");
    assert_eq!(v.mismatches, 0, "{v:?}");
    assert!(v.units_checked >= 512, "{v:?}");
    let (reads, writes) = k.stop_and_count();
    assert_eq!(writes, 1024);
    // The safety look at the head (once at check, once at the run) and the
    // verify pass: reads happened, and no more writes than ours.
    assert!(reads >= 3, "{reads}");
}

#[test]
fn nbd_over_tcp_and_a_size_prefix() {
    let k = match Nbdkit::tcp(&["memory", "32M"]) {
        Ok(k) => k,
        Err(why) => return skip_or_fail(&format!("nbdkit: {why}")),
    };
    let r = run_json(&[
        "run", "-t", &k.uri, "--rw", "read", "--bs", "64k", "--qd", "4", "--passes", "1", "--size",
        "1m",
    ]);
    assert_eq!(r.run(0).totals.read.ios, 16);
    let o = run(&[
        "run", "-t", &k.uri, "--rw", "read", "--size", "64m", "--passes", "1", "-q",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("larger than"), "{}", stderr(&o));
}

#[test]
fn nbd_unreachable_server_or_export_is_a_run_failure_naming_it() {
    let port = free_port();
    let o = run(&[
        "run",
        "-t",
        &format!("nbd://127.0.0.1:{port}/x"),
        "--rw",
        "randread",
        "--duration",
        "1s",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("127.0.0.1:{port}")),
        "{}",
        stderr(&o)
    );

    let Some(k) = server(&[
        "--filter=exportname",
        "memory",
        "1M",
        "exportname=good",
        "exportname-strict=true",
    ]) else {
        return;
    };
    let bad = k.uri.replacen(":///", ":///wrong", 1);
    let o = run(&[
        "run",
        "-t",
        &bad,
        "--rw",
        "randread",
        "--duration",
        "1s",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("export 'wrong'") && e.contains("unix:"), "{e}");
}

#[test]
fn nbd_without_libnbd_names_the_package() {
    let o = ioscope()
        .env("IOSCOPE_LIBNBD", "/nonexistent/libnbd.so.0")
        .args([
            "run",
            "-t",
            "nbd://127.0.0.1:1/x",
            "--rw",
            "randread",
            "--duration",
            "1s",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("libnbd0"), "{}", stderr(&o));
    // Local targets work without it.
    let o = ioscope()
        .env("IOSCOPE_LIBNBD", "/nonexistent/libnbd.so.0")
        .args([
            "run", "-t", "mem:1m", "--rw", "randread", "--passes", "1", "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn nbd_writes_to_an_export_with_a_filesystem_are_refused() {
    let d = tempdir();
    let img = d.path().join("disk.img");
    let mut bytes = vec![0u8; 4 << 20];
    bytes[1080] = 0x53;
    bytes[1081] = 0xEF;
    std::fs::write(&img, &bytes).unwrap();
    let file = format!("file={}", img.display());
    let Some(k) = server(&["file", &file]) else {
        return;
    };
    let o = run(&[
        "run",
        "-t",
        &k.uri,
        "--rw",
        "randwrite",
        "--passes",
        "1",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("ext2/3/4"), "{}", stderr(&o));
    assert_eq!(k.stop_and_count().1, 0, "a refused command wrote");
    let k = server(&["file", &file]).unwrap();
    let o = run(&[
        "run",
        "-t",
        &k.uri,
        "--rw",
        "randwrite",
        "--passes",
        "1",
        "--force",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(k.stop_and_count().1, 1024);
}

#[test]
fn nbd_server_killed_mid_run_fails_fast_naming_it() {
    let Some(mut k) = server(&["memory", "64M"]) else {
        return;
    };
    let d = tempdir();
    let json = d.path().join("r.json");
    let mut child = Spawned::start([
        "run",
        "-t",
        &k.uri,
        "--rw",
        "randread",
        "--qd",
        "8",
        "--duration",
        "30s",
        "--interval",
        "500ms",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    // Take the server away once the run has measured an interval through it.
    child.wait_first_interval(&json, FIRST_INTERVAL_TIMEOUT);
    let t0 = Instant::now();
    // Killed outright, so the connection drops without the server's goodbye (on
    // SIGTERM nbdkit answers what is in flight with ESHUTDOWN: per-I/O errors).
    k.signal(libc::SIGKILL);
    let r = child.finish_result(&json);
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    let r = r.expect_code(1);
    let e = format!("{}{}", r.stdout, r.stderr);
    assert!(
        e.contains("connection to unix:") && e.contains("lost after"),
        "{e}"
    );
    assert!(!r.run(0).intervals.is_empty());
}

#[test]
fn nbd_several_workers_need_multi_conn() {
    // nbdkit's memory plugin advertises multi-conn: two workers, two connections,
    // and every I/O reaches the server once.
    let Some(k) = server(&["memory", "8M"]) else {
        return;
    };
    let r = run_json(&[
        "run",
        "-t",
        &k.uri,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "8",
        "--streams",
        "2",
        "--workers",
        "2",
        "--passes",
        "1",
    ]);
    assert_eq!(r.run(0).totals.read.ios, 2048);
    assert_eq!(k.stop_and_count(), (2048, 0));
    // Without multi-conn, more than one connection is refused with the reason.
    let Some(k) = server(&[
        "--filter=multi-conn",
        "memory",
        "8M",
        "multi-conn-mode=disable",
    ]) else {
        return;
    };
    let o = run(&[
        "run",
        "-t",
        &k.uri,
        "--rw",
        "randread",
        "--streams",
        "2",
        "--workers",
        "2",
        "--passes",
        "1",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("multi-conn"), "{}", stderr(&o));
    assert_eq!(k.stop_and_count(), (0, 0));
}

#[test]
fn nbd_damage_behind_the_servers_back_is_found_by_verify() {
    let d = tempdir();
    let img = d.path().join("disk.img");
    std::fs::write(&img, vec![0u8; 4 << 20]).unwrap();
    let file = format!("file={}", img.display());
    let Some(k) = server(&["file", &file]) else {
        return;
    };
    let journal = d.path().join("journal");
    let o = run(&[
        "run",
        "-t",
        &k.uri,
        "--rw",
        "write",
        "--bs",
        "64k",
        "--size",
        "1m",
        "--passes",
        "1",
        "--journal",
        journal.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&["verify", "--journal", journal.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let mut bytes = std::fs::read(&img).unwrap();
    assert!(
        bytes[..1 << 20].iter().any(|&b| b != 0),
        "nothing reached the export"
    );
    for b in &mut bytes[300_000..300_016] {
        *b ^= 0xff;
    }
    std::fs::write(&img, &bytes).unwrap();
    let o = run(&["verify", "--journal", journal.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}{}", stdout(&o), stderr(&o));
    // The 4 KiB unit holding byte 300000 is named, and only it.
    let out = stdout(&o);
    assert!(
        out.contains("1 mismatches") && out.contains("offset 299008"),
        "{out}"
    );
}

#[test]
fn nbd_quick_reads_only_unless_forced() {
    let Some(k) = server(&["memory", "64M"]) else {
        return;
    };
    let r = run_json(&["quick", &k.uri, "--duration", "1s"]);
    let names: Vec<&str> = r.doc.runs.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["4k-randread", "1m-seqread"]);
    assert!(r.doc.runs.iter().all(|x| x.engine == "nbd"));
    assert_eq!(k.stop_and_count().1, 0, "quick wrote without --force");
}

#[test]
fn nbd_fio_job_with_ioengine_nbd_runs() {
    let Some(k) = server(&["memory", "16M"]) else {
        return;
    };
    let d = tempdir();
    let job = d.path().join("j.fio");
    std::fs::write(
        &job,
        format!(
            "[j]\nioengine=nbd\nuri={}\nrw=randread\nbs=4k\niodepth=16\nsize=4m\n",
            k.uri
        ),
    )
    .unwrap();
    let r = run_json(&["run", job.to_str().unwrap()]);
    assert_eq!(r.run(0).engine, "nbd");
    assert_eq!(r.run(0).totals.read.ios, 1024);
    assert_eq!(k.stop_and_count(), (1024, 0));
}
