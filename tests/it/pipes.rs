//! A closed stdout (`ioscope report r.json --format csv | head -1`) ends every command
//! quietly with exit 0: no panic, no error message, and the command's own cleanup
//! still runs.

use super::*;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::Stdio;

/// A pipe whose reading end is already closed: the first write to it fails with
/// EPIPE, however small.
fn closed_pipe() -> OwnedFd {
    let mut fds = [0i32; 2];
    // SAFETY: pipe fills two valid descriptors on success, checked below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors are fresh and owned here; the reader is dropped at once.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(reader);
    writer
}

/// Runs ioscope with stdout on a closed pipe; asserts a quiet exit 0.
fn assert_quiet_on_closed_stdout(args: &[&str]) {
    let o = ioscope()
        .args(args)
        .stdout(Stdio::from(closed_pipe()))
        .stderr(Stdio::piped())
        .output()
        .expect("spawn ioscope");
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(!err.contains("error"), "{args:?}: {err}");
    assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
}

#[test]
fn closed_stdout_ends_every_output_form_quietly() {
    let d = tempdir();
    let r = d.path().join("r.json");
    let r = r.to_str().unwrap();
    let o = run(&[
        "run",
        "--target",
        "mem:4m",
        "--duration",
        "200ms",
        "--interval",
        "100ms",
        "-q",
        "--json",
        r,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let fio_file = format!("--filename={}", d.path().join("f.dat").display());
    let forms: [&[&str]; 15] = [
        &["report", r, "--format", "csv"],
        &["report", r, "--format", "markdown"],
        &["report", r, "--format", "html"],
        &["report", r, "--format", "fio-json"],
        &["compare", r, r],
        &["sysinfo"],
        &["sysinfo", "--json"],
        &[
            "convert",
            "fio",
            "--name=x",
            "--rw=read",
            "--size=1m",
            "--filename=f",
        ],
        &["completions", "bash"],
        &["man"],
        // Terminal interval lines: the run stops at the first line nobody reads.
        &[
            "run",
            "--target",
            "mem:4m",
            "--duration",
            "30s",
            "--interval",
            "100ms",
        ],
        &[
            "run",
            "--target",
            "mem:4m",
            "--duration",
            "200ms",
            "--output-format",
            "json",
        ],
        &[
            "run",
            "--target",
            "mem:4m",
            "--duration",
            "200ms",
            "--markdown",
            "-q",
        ],
        // The sweep table at the end.
        &[
            "run",
            "--target",
            "mem:4m",
            "--duration",
            "100ms",
            "--interval",
            "100ms",
            "--bs",
            "4k,8k",
            "-q",
        ],
        &[
            "fio",
            "--name=x",
            "--rw=read",
            "--size=1m",
            &fio_file,
            "--runtime=200ms",
            "--time_based",
            "--output-format=json",
        ],
    ];
    for args in forms {
        let t = std::time::Instant::now();
        assert_quiet_on_closed_stdout(args);
        // Each form ends in well under a second here (1.2 s for all of them); 20 s
        // tells an end from a command that runs on.
        assert!(
            t.elapsed() < std::time::Duration::from_secs(20),
            "{args:?}: a closed stdout must end the command, not let it run on"
        );
    }
}

#[test]
fn closed_stdout_during_quick_still_removes_the_scratch_file() {
    let d = tempdir();
    assert_quiet_on_closed_stdout(&[
        "quick",
        d.path().to_str().unwrap(),
        "--duration",
        "100ms",
        "--size",
        "16m",
    ]);
    let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert!(left.is_empty(), "scratch file left behind: {left:?}");
}

#[test]
fn closed_stdout_stops_a_run_and_keeps_what_it_measured() {
    use std::io::{BufRead, BufReader};
    // `ioscope run … | head -4`: the reader takes the first lines, then goes away.
    let d = tempdir();
    let json = d.path().join("r.json");
    let mut child = ioscope()
        .args([
            "run",
            "--target",
            "mem:4m",
            "--duration",
            "30s",
            "--interval",
            "100ms",
            "--json",
            json.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ioscope");
    let t = std::time::Instant::now();
    {
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        for _ in 0..4 {
            lines.next().expect("a line").expect("read");
        }
    } // the reader closes here
    let o = child.wait_with_output().expect("wait");
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("error"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
    // 0.15 s here (four 100 ms lines); 20 s tells a stop from the 30 s run.
    assert!(
        t.elapsed() < std::time::Duration::from_secs(20),
        "a closed stdout must stop the run"
    );
    let r = read_json(&json);
    assert_eq!(r["interrupted"], true, "the run was cut short: {r}");
    assert_eq!(r["runs"].as_array().map(Vec::len), Some(1));
    assert!(r["runs"][0]["totals"]["ios"].as_u64() > Some(0));
}

#[test]
fn closed_stdout_ends_net_run_quietly_and_keeps_what_it_measured() {
    let srv = super::net::Server::start();
    let d = tempdir();
    let json = d.path().join("r.json");
    for args in [
        // Interval lines: the test stops at the first line nobody reads.
        &["--duration", "30s", "--interval", "100ms"][..],
        // The totals table at the end.
        &["--duration", "300ms", "-q"][..],
        // The result document on stdout.
        &["--duration", "300ms", "--output-format", "json"][..],
    ] {
        let _ = std::fs::remove_file(&json);
        let mut all = vec!["net", "run", &srv.addr, "--json", json.to_str().unwrap()];
        all.extend_from_slice(args);
        let t = std::time::Instant::now();
        assert_quiet_on_closed_stdout(&all);
        // 0.66 s for the three here; 20 s tells an end from the 30 s test.
        assert!(
            t.elapsed() < std::time::Duration::from_secs(20),
            "{args:?}: a closed stdout must end the test, not let it run on"
        );
        // The outputs were written before stdout was found closed.
        let r = read_json(&json);
        assert_eq!(r["runs"][0]["kind"], "net", "{args:?}");
        if args[1] == "30s" {
            assert_eq!(r["interrupted"], true, "the test was cut short: {r}");
        }
    }
}

#[test]
fn closed_stdout_ends_net_serve_quietly() {
    // Nothing can learn the port: the server ends at once, quietly.
    let t = std::time::Instant::now();
    assert_quiet_on_closed_stdout(&["net", "serve", "--bind", "127.0.0.1:0"]);
    assert!(t.elapsed() < std::time::Duration::from_secs(20));
}
