//! The status line (`--progress`): redrawn in place on a terminal (tmux runs
//! ioscope in a pane; capture-pane reads the screen), never in a pipe.

use super::*;
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of the test's own (its own socket), killed by its PID when dropped.
struct Tmux {
    socket: std::path::PathBuf,
    pid: Option<i32>,
    _dir: tempfile::TempDir,
}

impl Tmux {
    fn start(command: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("skipped: no tmux (scripts/test.sh installs it)");
            return None;
        }
        let dir = tempdir();
        let socket = dir.path().join("tmux.sock");
        let ok = Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["new-session", "-d", "-x", "160", "-y", "50", command])
            .status()
            .expect("tmux new-session");
        assert!(ok.success());
        let mut t = Tmux {
            socket,
            pid: None,
            _dir: dir,
        };
        let pid = t.tmux(&["display-message", "-p", "#{pid}"]);
        t.pid = pid.trim().parse().ok();
        assert!(t.pid.is_some(), "tmux server pid: {pid:?}");
        Some(t)
    }

    fn tmux(&self, args: &[&str]) -> String {
        let o = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// The pane's screen now.
    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p"])
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        if let Some(pid) = self.pid {
            // SAFETY: kill(2) on the tmux server this test started (its own socket).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// The seconds an `hms` figure ("42s", "1m05s") stands for.
fn secs(t: &str) -> Option<u64> {
    let (m, s) = match t.split_once('m') {
        Some((m, s)) => (m.parse::<u64>().ok()?, s),
        None => (0, t),
    };
    Some(m * 60 + s.strip_suffix('s')?.parse::<u64>().ok()?)
}

#[test]
fn the_status_line_is_redrawn_in_place_and_counts_down_over_a_sweep() {
    let done = "ioscope-ended";
    let command = format!(
        "{} run -t null:64m --rw randread --qd 1,2,4 --duration 3s --warmup 0 \
         --interval 500ms; echo {done}; sleep 600",
        env!("CARGO_BIN_EXE_ioscope")
    );
    let Some(tmux) = Tmux::start(&command) else {
        return;
    };
    // Read the screen until the command has ended (60 s for a loaded machine).
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen: Vec<(String, u64)> = Vec::new();
    let last = loop {
        let screen = tmux.screen();
        let status: Vec<&str> = screen.lines().filter(|l| l.contains(" ETA ")).collect();
        // Redrawn in place: never two status lines on the screen.
        assert!(status.len() <= 1, "status lines piled up:\n{screen}");
        if let Some(line) = status.first() {
            let run = line
                .split("run ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next());
            let eta = line
                .split("ETA ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next());
            if let (Some(run), Some(eta)) = (run, eta.and_then(secs)) {
                if seen.last().map(|(r, e)| (r.as_str(), *e)) != Some((run, eta)) {
                    seen.push((run.to_string(), eta));
                }
            }
        }
        if screen.contains(&format!("\n{done}")) || screen.starts_with(done) {
            break screen;
        }
        assert!(Instant::now() < deadline, "ioscope did not end:\n{screen}");
        std::thread::sleep(Duration::from_millis(50));
    };
    eprintln!("status lines seen: {seen:?}");
    // The line is wiped when a run ends: the final screen has none.
    assert!(!last.contains(" ETA "), "{last}");
    // ETA over the whole 9 s sweep: it counts down through all three runs.
    let runs: Vec<&str> = seen.iter().map(|(r, _)| r.as_str()).collect();
    for want in ["1/3", "2/3", "3/3"] {
        assert!(runs.contains(&want), "run {want} never shown: {seen:?}");
    }
    assert!(
        seen.windows(2).all(|w| w[1].1 <= w[0].1),
        "ETA went up: {seen:?}"
    );
    assert!(
        seen.first().unwrap().1 >= 6,
        "ETA must cover the sweep: {seen:?}"
    );
}

/// Output with every number masked, and the column padding numbers change, and
/// repeated lines once (a run may close one interval more or less): what two runs
/// of the same command share, line by line.
fn masked(bytes: &[u8]) -> String {
    let mut lines: Vec<String> = String::from_utf8_lossy(bytes)
        .split('\n')
        .map(|line| {
            line.split_whitespace()
                .map(|w| match w.chars().any(|c| c.is_ascii_digit()) {
                    true => "#",
                    false => w,
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    lines.dedup();
    lines.join("\n")
}

#[test]
fn a_pipe_gets_no_status_line_unless_asked() {
    let args = |progress: &str| {
        let mut a = vec![
            "run",
            "-t",
            "null:64m",
            "--rw",
            "randread",
            "--qd",
            "1,2",
            "--duration",
            "1s",
            "--warmup",
            "0",
            "--interval",
            "250ms",
        ];
        if !progress.is_empty() {
            a.extend(["--progress", progress]);
        }
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let plain = ioscope().args(args("never")).output().unwrap();
    let auto = ioscope().args(args("")).output().unwrap();
    for o in [&plain, &auto] {
        assert!(o.status.success(), "{}", stderr(o));
        for bytes in [&o.stdout, &o.stderr] {
            assert!(!bytes.contains(&b'\r') && !bytes.contains(&0x1b), "{o:?}");
        }
    }
    // The same bytes as with the line turned off, numbers aside.
    assert_eq!(auto.stderr, plain.stderr);
    assert_eq!(masked(&auto.stdout), masked(&plain.stdout));
    // Asked for, it goes to stderr even in a pipe: redrawn, or as lines.
    let always = ioscope().args(args("always")).output().unwrap();
    let text = String::from_utf8_lossy(&always.stderr);
    assert!(
        text.contains("\r[") && text.contains(" ETA ") && text.contains("\x1b[K"),
        "{text}"
    );
    assert_eq!(masked(&always.stdout), masked(&plain.stdout));
    let lines = ioscope().args(args("lines")).output().unwrap();
    let text = String::from_utf8_lossy(&lines.stderr);
    assert!(!text.contains('\r'), "{text}");
    assert!(
        text.lines().filter(|l| l.contains(" ETA ")).count() >= 4,
        "{text}"
    );
}
