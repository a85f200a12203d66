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

    /// The same, with nbdkit's debug log (`-v`) written to `nbdkit.log` beside the
    /// socket: the handshake's negotiation is in it.
    fn unix_logged(args: &[&str]) -> Result<Nbdkit, String> {
        let mut with_v = vec!["-v"];
        with_v.extend_from_slice(args);
        Self::unix(&with_v)
    }

    /// The debug log of a server started with [`Nbdkit::unix_logged`].
    fn log(&self) -> String {
        let bytes = std::fs::read(self._dir.path().join("nbdkit.log")).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The same on 127.0.0.1 with a free port.
    fn tcp(args: &[&str]) -> Result<Nbdkit, String> {
        Self::tcp_on(free_port(), args)
    }

    /// The same on 127.0.0.1 with `port` (a server started again where it was).
    fn tcp_on(port: u16, args: &[&str]) -> Result<Nbdkit, String> {
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
        // With -v, the debug log goes to a file of the test's own (it is long).
        let stderr = match args.first() {
            Some(&"-v") => std::process::Stdio::from(
                std::fs::File::create(dir.path().join("nbdkit.log"))
                    .map_err(|e| format!("nbdkit log: {e}"))?,
            ),
            _ => std::process::Stdio::inherit(),
        };
        let child = Command::new("nbdkit")
            .args(["--foreground", "--exit-with-parent", "--filter=stats"])
            .args(listen)
            .args(args)
            .arg(&statsfile)
            .stderr(stderr)
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
    fn stop_and_count(self) -> (u64, u64) {
        let [r, w, _] = self.stop_and_count_all();
        (r, w)
    }

    /// Stops the server and returns (reads, writes, trims) as nbdkit counted them.
    fn stop_and_count_all(mut self) -> [u64; 3] {
        self.stop();
        let text = std::fs::read_to_string(&self.stats).expect("nbdkit stats file");
        let ops = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}: ")))
                .and_then(|r| r.split_whitespace().next())
                .map(|n| n.parse::<u64>().unwrap())
                .unwrap_or(0)
        };
        [ops("read"), ops("write"), ops("trim")]
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
    let run = r.run(0);
    assert!(!run.intervals.is_empty());
    // The loss is an event of the run, naming the server, though it stopped it.
    let down: Vec<_> = run.events.iter().filter(|e| e.kind == "down").collect();
    assert_eq!(down.len(), 1, "{:?}", run.events);
    assert!(down[0].detail.contains("lost after"), "{:?}", down[0]);
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

#[test]
fn nbd_four_connections_each_carry_io_and_sum_to_the_total() {
    // nbdkit's memory plugin advertises multi-conn: one worker, 4 connections, 8
    // streams spread over them; the per-connection counts are the engine's own.
    let Some(k) = Nbdkit::tcp(&["memory", "64M"])
        .map_err(|e| skip_or_fail(&e))
        .ok()
    else {
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
        "4",
        "--streams",
        "8",
        "--workers",
        "1",
        "--connections",
        "4",
        "--duration",
        "2s",
        "--interval",
        "500ms",
    ]);
    let run = r.run(0);
    assert_eq!(run.connections.len(), 4, "{:?}", run.connections);
    let total = run.totals.all.ios;
    assert!(total > 0);
    for (i, c) in run.connections.iter().enumerate() {
        assert_eq!(c.index as usize, i);
        assert_eq!(c.uri, k.uri);
        assert!(
            c.ios > 0,
            "connection {i} carried no I/O: {:?}",
            run.connections
        );
        assert_eq!(c.bytes, c.ios * 4096);
        assert_eq!(c.errors, 0);
    }
    assert_eq!(run.connections.iter().map(|c| c.ios).sum::<u64>(), total);
    let per_interval: u64 = run
        .intervals
        .iter()
        .flat_map(|iv| iv.connections.iter().map(|c| c.ios))
        .sum();
    let interval_total: u64 = run.intervals.iter().map(|iv| iv.ios).sum();
    assert_eq!(per_interval, interval_total);
    assert!(run.intervals.iter().all(|iv| iv.connections.len() == 4));
    // Client CPU per I/O per connection: the one worker's CPU split by I/Os, so the
    // four shares add up to the worker's CPU time (each interval's split floors to
    // the ns: at most 1 ns per connection and interval is lost, 1 µs allows it).
    assert_eq!(run.threads.len(), 1, "{:?}", run.threads);
    let worker_us = run.threads[0].cpu_us as f64;
    assert!(worker_us > 0.0, "{:?}", run.threads);
    let shared_us: f64 = run
        .connections
        .iter()
        .map(|c| c.cpu_us_per_io.expect("every connection carried I/O") * c.ios as f64)
        .sum();
    assert!(
        (shared_us - worker_us).abs() <= 1.0 + worker_us * 1e-9,
        "connections {shared_us} µs vs worker {worker_us} µs"
    );
    // The worker is one thread of the process: its CPU per I/O is below the
    // process's. The two are sampled up to one scheduling delay apart at interval
    // closes (the worker's snapshot, the collector's read of the process), so the
    // bound allows 25 %.
    let worker_per_io = worker_us / total as f64;
    assert!(
        worker_per_io <= run.cpu.cpu_us_per_io * 1.25,
        "worker {worker_per_io} µs/IO vs process {} µs/IO",
        run.cpu.cpu_us_per_io
    );
    // The server saw every I/O (the counts are real, not derived).
    let (reads, writes) = k.stop_and_count();
    assert!(reads >= total && writes == 0, "server {reads} vs {total}");
}

#[test]
fn nbd_connections_without_multi_conn_are_refused_with_the_reason() {
    let Some(k) = server(&[
        "--filter=multi-conn",
        "memory",
        "8M",
        "multi-conn-mode=disable",
    ]) else {
        return;
    };
    let d = tempdir();
    let json = d.path().join("r.json");
    let o = run(&[
        "run",
        "-t",
        &k.uri,
        "--rw",
        "randread",
        "--workers",
        "1",
        "--connections",
        "2",
        "--passes",
        "1",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--connections 2") && e.contains("multi-conn"),
        "{e}"
    );
    assert!(!json.exists());
    assert_eq!(k.stop_and_count(), (0, 0));
    // 0 connections is bad input too.
    let o = run(&["run", "-t", "mem:1M", "--connections", "0", "--passes", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// Runs randread against a server that is stopped (SIGSTOP: the connection stays
/// up, nothing answers) after the first interval, with `--io-timeout 1s` and
/// `extra` options; returns the result and how long the run took after the stop.
fn against_a_stopped_server(extra: &[&str]) -> Option<(Ran, Duration)> {
    let k = Nbdkit::tcp(&["memory", "64M"])
        .map_err(|e| skip_or_fail(&e))
        .ok()?;
    let d = tempdir();
    let json = d.path().join("r.json");
    let mut args = vec![
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
        "--io-timeout",
        "1s",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let mut child = Spawned::start(&args);
    child.wait_first_interval(&json, FIRST_INTERVAL_TIMEOUT);
    let pid = k.child.id() as i32;
    // SAFETY: signalling our own child by its PID.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let t0 = Instant::now();
    let r = child.finish_result(&json);
    let took = t0.elapsed();
    // SAFETY: as above; the server must run again to be stopped on drop.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    drop(k);
    drop(d);
    Some((r, took))
}

#[test]
fn nbd_server_that_stops_answering_times_out_within_the_io_timeout() {
    // Default policy: the timeout is an error that ends the run.
    let Some((r, took)) = against_a_stopped_server(&[]) else {
        return;
    };
    assert!(took < Duration::from_secs(3), "took {took:?}");
    eprintln!(
        "stopped server, default policy: exit {:?}: {}",
        r.code, r.stderr
    );
    assert_ne!(r.code, Some(0), "{}", r.stderr);
    let run = r.run(0);
    assert!(!run.intervals.is_empty());
    assert!(run.connections[0].timeouts >= 1, "{:?}", run.connections);
    assert!(
        run.events.iter().any(|e| e.kind == "timeout"),
        "{:?}",
        run.events
    );
    // The connection the deadline closed is in the events, after the timeout,
    // though the stop policy ended the run at that same deadline.
    let down = run.events.iter().position(|e| e.kind == "down");
    let timeout = run.events.iter().position(|e| e.kind == "timeout");
    assert!(down.is_some() && down > timeout, "{:?}", run.events);
    // Carrying on: every stalled I/O is a counted timeout, the connection is
    // closed and connected again — the TCP connect succeeds, the stopped server
    // never answers the handshake — until the reconnect window (5 s here, 30 s by
    // default) ends the run with the server named.
    let continuing = ["--on-error", "continue", "--reconnect-window", "5s"];
    let Some((r, took)) = against_a_stopped_server(&continuing) else {
        return;
    };
    // 5.74 s here: the 5 s window, then the attempt under way; 8 s allows a loaded
    // machine's late wake-ups.
    assert!(took < Duration::from_secs(8), "took {took:?}");
    assert!(took > Duration::from_secs(5), "gave up after {took:?}");
    let r = r.expect_code(1);
    let e = format!("{}{}", r.stdout, r.stderr);
    eprintln!("stopped server, continue: {e} {:?}", r.run(0).events);
    assert!(
        e.contains("connection to 127.0.0.1:")
            && e.contains("lost after")
            && e.contains("reconnect attempts in"),
        "{e}"
    );
    assert!(!r.run(0).events.iter().any(|e| e.kind == "up"));
    let run = r.run(0);
    assert!(run.connections[0].timeouts >= 1, "{:?}", run.connections);
    assert!(run.totals.all.errors >= 1);
    assert!(!run.intervals.is_empty());
}

#[test]
fn nbd_error_filter_with_on_error_continue_counts_errors_per_interval() {
    let Some(k) = server(&["--filter=error", "memory", "64M", "error-rate=1%"]) else {
        return;
    };
    let r = ioscope_result(
        [
            "run",
            "-t",
            &k.uri,
            "--rw",
            "randrw",
            "--qd",
            "8",
            "--duration",
            "3s",
            "--interval",
            "500ms",
            "--on-error",
            "continue",
            "-q",
        ]
        .iter(),
    );
    let run = r.run(0);
    let ios = run.totals.all.ios;
    let errors = run.totals.all.errors;
    assert!(ios > 1000, "{ios}");
    // About 1% of the I/Os fail (the filter draws at random).
    assert!(errors > 0 && errors * 100 < ios * 5, "{errors} of {ios}");
    let per_interval: u64 = run.intervals.iter().map(|iv| iv.errors).sum();
    assert_eq!(per_interval, errors);
    assert!(run.intervals.iter().filter(|iv| iv.errors > 0).count() >= 2);
    assert_eq!(
        run.end_reason,
        ioscope::result::EndReason::Duration,
        "exit {:?}: {}",
        r.code,
        r.stderr
    );
}

/// Runs a pass of randread over `streams` streams and `connections` connections
/// against a fresh nbdkit with its log filter; returns the result and how many
/// connections the server saw (the target's inspection connections included).
fn count_connections(streams: &str, connections: &str, extra: &[&str]) -> Option<(Ran, usize)> {
    let d = tempdir();
    let log = d.path().join("log.txt");
    let logfile = format!("logfile={}", log.display());
    let k = server(&["--filter=log", "memory", "16M", &logfile])?;
    let mut args = vec![
        "run",
        "-t",
        &k.uri,
        "--rw",
        "randread",
        "--qd",
        "4",
        "--streams",
        streams,
        "--connections",
        connections,
        "--passes",
        "1",
    ];
    args.extend_from_slice(extra);
    let r = run_json(&args);
    drop(k);
    let text = std::fs::read_to_string(&log).expect("nbdkit log");
    Some((r, text.lines().filter(|l| l.contains(" Connect ")).count()))
}

#[test]
fn nbd_connections_are_spread_over_workers_each_opened_once() {
    // The baseline: one stream, one connection, one worker.
    let Some((_, base)) = count_connections("1", "1", &["--workers", "1"]) else {
        return;
    };
    // 4 connections and no --workers: as many workers as CPUs allow (a divisor of
    // 4), each opening only the connections its streams use — 4 in all, not 4 per
    // worker — and each carrying a quarter of the I/O.
    let Some((r, four)) = count_connections("8", "4", &[]) else {
        return;
    };
    assert_eq!(four - base, 3, "{four} connections against {base} for one");
    let run = r.run(0);
    assert!(
        run.engine_reason.contains("4 connections over"),
        "{}",
        run.engine_reason
    );
    let ios: Vec<u64> = run.connections.iter().map(|c| c.ios).collect();
    assert_eq!(ios, [1024; 4], "{:?}", run.connections);
    // An explicit --workers is obeyed and not explained.
    let Some((r, two)) = count_connections("8", "4", &["--workers", "1"]) else {
        return;
    };
    assert_eq!(two - base, 3);
    assert!(!r.run(0).engine_reason.contains("connections over"));
}

#[test]
fn connections_left_idle_by_too_few_streams_are_warned_about() {
    // One stream keeps to one connection: of 3 connections, 2 carry nothing, and
    // the user who asked for 3 hears why, on stderr and in the result.
    let Some((r, _)) = count_connections("1", "3", &[]) else {
        return;
    };
    let ios: Vec<u64> = r.run(0).connections.iter().map(|c| c.ios).collect();
    assert_eq!(ios.iter().filter(|&&n| n == 0).count(), 2, "{ios:?}");
    let said = "2 of 3 connections carried no I/O";
    assert!(r.stderr.contains(said), "{}", r.stderr);
    assert!(
        r.doc.warnings.iter().any(|w| w.contains(said)),
        "{:?}",
        r.doc.warnings
    );
    // As many streams as connections: every connection works, nothing is said.
    let Some((r, _)) = count_connections("3", "3", &[]) else {
        return;
    };
    assert!(r.run(0).connections.iter().all(|c| c.ios > 0));
    assert!(!r.stderr.contains("carried no I/O"), "{}", r.stderr);
}

#[test]
fn nbd_server_restarted_mid_run_is_reconnected_under_on_error_continue() {
    let Some(mut k) = Nbdkit::tcp(&["memory", "64M"])
        .map_err(|e| skip_or_fail(&e))
        .ok()
    else {
        return;
    };
    let port: u16 = k.uri.rsplit(':').next().unwrap().parse().unwrap();
    let uri = k.uri.clone();
    // Killed outright (the connection resets), then started again on the same port.
    let (k2, after) = assert_run_continues_after_restart(
        &uri,
        "5s",
        "127.0.0.1:",
        || k.signal(libc::SIGKILL),
        || Nbdkit::tcp_on(port, &["memory", "64M"]).expect("nbdkit again on its port"),
    );
    // I/O went on after the reconnection, and reached the new server.
    let (reads, _) = k2.stop_and_count();
    assert!(
        reads >= after,
        "new server saw {reads} reads, the run {after}"
    );
}

#[test]
fn nbd_trims_match_the_servers_count_and_need_its_trim_support() {
    let Some(k) = server(&["memory", "8M"]) else {
        return;
    };
    let r = run_json(&[
        "run",
        "-t",
        &k.uri,
        "--rw",
        "randtrimwrite",
        "--bs",
        "64k",
        "--qd",
        "4",
        "--passes",
        "1",
        "--force",
    ]);
    let t = &r.run(0).totals;
    let trims = t.trim.as_ref().expect("a trim section").ios;
    assert_eq!((trims, t.write.ios, t.read.ios), (128, 128, 0));
    assert_eq!(k.stop_and_count_all(), [0, 128, 128]);
    // A server without trim (nbdkit's eval plugin with no trim method) is refused.
    let Some(k) = server(&[
        "eval",
        "get_size=echo 8388608",
        "pread=head -c $3 /dev/zero",
        "pwrite=cat >/dev/null",
    ]) else {
        return;
    };
    let o = run(&[
        "run",
        "-t",
        &k.uri,
        "--rw",
        "randtrim",
        "--duration",
        "1s",
        "--force",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("does not accept trims"),
        "{}",
        stderr(&o)
    );
}

/// Waits until nbdkit's log filter has logged a read (the start-up probe's read of
/// the export's first bytes reached the server).
fn wait_for_logged_read(log: &Path) {
    let t0 = Instant::now();
    while !std::fs::read_to_string(log)
        .unwrap_or_default()
        .contains("Read id=")
    {
        // A generous bound: the probe's read comes right after the connection.
        assert!(t0.elapsed() < Duration::from_secs(20), "no read logged");
        std::thread::sleep(Duration::from_millis(10));
    }
}

// Regression (issue 28): with nbdkit's error filter on, the start-up safety probe's
// read of the export's first bytes hit an injected EIO and the run ended with exit 1
// before any I/O, although the user said `--on-error continue`. Now the probe is
// tried again on the reconnect schedule and the run says so; with the default policy
// it stops, naming the read.
#[test]
fn a_start_up_probe_that_fails_is_tried_again_under_on_error_continue() {
    let dir = tempdir();
    let log = dir.path().join("log.txt");
    let errors_on = dir.path().join("errors-on");
    let logfile = format!("logfile={}", log.display());
    let error_file = format!("error-file={}", errors_on.display());
    std::fs::write(&errors_on, "").unwrap();
    let Some(k) = server(&[
        "--filter=log",
        "--filter=error",
        "memory",
        "16M",
        &logfile,
        "error-rate=100%",
        &error_file,
    ]) else {
        return;
    };
    let args = [
        "run", "-t", &k.uri, "--rw", "randrw", "--qd", "4", "--passes", "1",
    ];
    // The default policy: the first failed read ends the run before any I/O.
    let stopped = run(&args);
    assert_eq!(stopped.status.code(), Some(1), "{}", stderr(&stopped));
    assert!(
        stderr(&stopped).contains("reading the export's first bytes"),
        "{}",
        stderr(&stopped)
    );

    let json = dir.path().join("r.json");
    let mut go = args.to_vec();
    go.extend(["--on-error", "continue", "--json", json.to_str().unwrap()]);
    std::fs::write(&log, "").unwrap();
    let child = Spawned::start(&go);
    // The probe's read has failed at least once; the server recovers.
    wait_for_logged_read(&log);
    std::fs::remove_file(&errors_on).unwrap();
    let out = child.finish();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("opened at attempt"),
        "{}",
        stderr(&out)
    );
    let r = read_json(&json);
    assert!(r["runs"][0]["totals"]["ios"].as_u64().unwrap() > 0);
    drop(k);
}

// Issue 28: a server stopped before the run (its kernel accepts the TCP connection,
// nothing answers the handshake) held the start-up probe for ever, under every error
// policy. Now the start-up probe has the I/O timeout's time and a second, is not
// tried again, and the error names the target.
#[test]
fn a_target_that_never_answers_at_start_up_is_an_error_within_the_io_timeout() {
    let Some(k) = Nbdkit::tcp(&["memory", "64M"])
        .map_err(|e| skip_or_fail(&e))
        .ok()
    else {
        return;
    };
    let pid = k.child.id() as i32;
    // SAFETY: signalling our own child by its PID.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    for policy in ["stop", "continue"] {
        let t0 = Instant::now();
        let r = ioscope()
            .args(["run", "-t", &k.uri, "--rw", "randwrite", "--duration", "2s"])
            .args(["--io-timeout", "1s", "--on-error", policy, "-q"])
            .output()
            .unwrap();
        let took = t0.elapsed();
        let e = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{policy}: {e}");
        assert!(
            e.contains(&k.uri) && e.contains("no answer within 2.0 s"),
            "{policy}: {e}"
        );
        // The deadline is --io-timeout + 1 s; the issue allows --io-timeout + 2 s:
        // the second left is for a loaded machine's process start and exit (2.02 s
        // here).
        assert!(took < Duration::from_secs(3), "{policy}: took {took:?}");
    }
    // SAFETY: as above; the server must run again to be stopped on drop.
    unsafe { libc::kill(pid, libc::SIGCONT) };
}

#[test]
fn nbd_asks_for_simple_replies_unless_structured_ones_are_asked_for() {
    // What the client asked for is read from the server's side of the handshake
    // (nbdkit -v logs NBD_OPT_STRUCTURED_REPLY when a client requests it), and the
    // data must come back intact either way: a verified run each.
    let negotiation = |extra: &[&str]| -> Option<String> {
        let k = Nbdkit::unix_logged(&["memory", "16M"])
            .map_err(|e| skip_or_fail(&format!("nbdkit: {e}")))
            .ok()?;
        verified_randrw(&k, extra);
        Some(k.log())
    };
    let Some(simple) = negotiation(&[]) else {
        return;
    };
    assert!(
        simple.contains("newstyle negotiation"),
        "the log is nbdkit's debug log"
    );
    assert!(
        !simple.contains("NBD_OPT_STRUCTURED_REPLY"),
        "structured replies were asked for by default"
    );
    let structured = negotiation(&["--nbd-structured-replies"]).expect("nbdkit ran before");
    assert!(
        structured.contains("client requested structured replies"),
        "--nbd-structured-replies did not ask for them"
    );
}

/// A verified randrw run of 2 passes over 4 MiB of `k`'s export with `extra`; its
/// result's NBD entry, after checking the data read back was what was written.
fn verified_randrw(k: &Nbdkit, extra: &[&str]) -> ioscope::result::nbd::NbdSession {
    let mut args = vec!["run", "-t", &k.uri];
    args.extend(
        "--rw randrw --bs 4k --qd 16 --size 4m --passes 2 --verify --verify-after".split(' '),
    );
    args.extend_from_slice(extra);
    let r = run_json(&args);
    let run0 = r.run(0);
    assert!(run0.totals.read.ios > 0 && run0.totals.write.ios > 0);
    let v = run0.verify.as_ref().expect("verify counts");
    assert_eq!(v.mismatches, 0, "{extra:?}: {v:?}");
    assert!(v.units_checked >= 1024, "{extra:?}: {v:?}");
    assert_eq!(run0.nbd.len(), 1, "{extra:?}");
    run0.nbd[0].clone()
}

#[test]
fn nbd_reply_form_is_the_one_asked_for_and_reads_verify_either_way() {
    let Some(k) = server(&["memory", "64M"]) else {
        return;
    };
    // The default: simple replies (the cheaper form; ioscope needs nothing else).
    let s = verified_randrw(&k, &[]);
    assert!(!s.structured_replies_requested);
    assert_eq!(s.structured_replies, Some(false), "{s:?}");
    // Asked for, and nbdkit agrees.
    let s = verified_randrw(&k, &["--nbd-structured-replies"]);
    assert!(s.structured_replies_requested);
    assert_eq!(s.structured_replies, Some(true), "{s:?}");
    let s = verified_randrw(&k, &["--nbd-structured-replies=false"]);
    assert_eq!(s.structured_replies, Some(false), "{s:?}");
}

#[test]
fn nbd_server_refusing_structured_replies_is_reported_and_still_read_right() {
    let Some(k) = server(&["--no-sr", "memory", "64M"]) else {
        return;
    };
    let s = verified_randrw(&k, &["--nbd-structured-replies"]);
    assert!(s.structured_replies_requested);
    assert_eq!(s.structured_replies, Some(false), "{s:?}");
}
