//! The exec engine: runs a program for the run's duration (fio's exec) — a monitor
//! such as turbostat or iostat beside a workload, or a load of its own. The first
//! operation starts it; each operation after that is a watch of up to 50 ms (fio's
//! poll interval), so the operation count measures nothing but the run's length. What
//! the engine reports is the program's fate: an operation fails once, with the
//! spawn's errno when it cannot start, or EIO when it exits with a non-zero status or
//! a signal; ioscope's error policy decides whether the run goes on. When the worker
//! ends, a program still running gets SIGTERM, then SIGKILL after the grace time, and
//! is reaped — always this engine's own child, by its PID.

use super::inline::{InlineEngine, PerformIo};
use super::{now_ns, IoRequest};
use crate::plan::engine_opts::ExecSpec;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long one operation watches the program (fio's exec thinktime).
const WATCH: Duration = Duration::from_millis(50);
/// How often a watch looks whether it has ended.
const LOOK: Duration = Duration::from_millis(5);

/// The program and its state.
pub struct ExecIo {
    spec: ExecSpec,
    child: Option<Child>,
    /// The program was started (or failed to start) already.
    started: bool,
    /// Its end was reported already.
    reported: bool,
}

impl ExecIo {
    fn spawn(&mut self) -> i64 {
        let mut cmd = Command::new(&self.spec.program);
        cmd.args(&self.spec.args).stdin(Stdio::null());
        let out = match &self.spec.output {
            Some(prefix) => {
                let open = |ext: &str| std::fs::File::create(format!("{prefix}.{ext}"));
                match (open("stdout"), open("stderr")) {
                    (Ok(o), Ok(e)) => Ok((Stdio::from(o), Stdio::from(e))),
                    (Err(e), _) | (_, Err(e)) => Err(e),
                }
            }
            None => {
                use std::os::fd::AsFd;
                std::io::stderr()
                    .as_fd()
                    .try_clone_to_owned()
                    .and_then(|a| Ok((Stdio::from(a.try_clone()?), Stdio::from(a))))
            }
        };
        let spawned = out.and_then(|(o, e)| cmd.stdout(o).stderr(e).spawn());
        match spawned {
            Ok(c) => {
                self.child = Some(c);
                0
            }
            Err(e) => {
                self.reported = true;
                -(e.raw_os_error().unwrap_or(libc::EIO) as i64)
            }
        }
    }

    /// Watches the program for up to [`WATCH`]; a failure the first time it is seen.
    fn watch(&mut self) -> i64 {
        let deadline = std::time::Instant::now() + WATCH;
        loop {
            let Some(c) = self.child.as_mut() else {
                std::thread::sleep(deadline.saturating_duration_since(std::time::Instant::now()));
                return 0;
            };
            match c.try_wait() {
                Ok(Some(status)) => {
                    self.child = None;
                    if !status.success() && !self.reported {
                        self.reported = true;
                        return -(libc::EIO as i64);
                    }
                }
                Ok(None) if std::time::Instant::now() >= deadline => return 0,
                Ok(None) => std::thread::sleep(LOOK),
                Err(e) => {
                    self.child = None;
                    return -(e.raw_os_error().unwrap_or(libc::EIO) as i64);
                }
            }
        }
    }
}

impl PerformIo for ExecIo {
    const NAME: &'static str = "exec";

    fn perform(&mut self, _req: &IoRequest) -> (i64, u64) {
        let r = if self.started {
            self.watch()
        } else {
            self.started = true;
            self.spawn()
        };
        (r, now_ns())
    }
}

impl Drop for ExecIo {
    fn drop(&mut self) {
        let Some(mut c) = self.child.take() else {
            return;
        };
        if let Ok(None) = c.try_wait() {
            let pid = c.id() as libc::pid_t;
            // SAFETY: pid is our own child, not yet reaped (try_wait said it runs), so
            // the number cannot have been reused.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let until = std::time::Instant::now() + Duration::from_nanos(self.spec.grace_ns);
            while std::time::Instant::now() < until {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(LOOK);
            }
            let _ = c.kill();
        }
        let _ = c.wait();
    }
}

/// Runs a program for the run's duration.
pub type ExecEngine = InlineEngine<ExecIo>;

impl ExecEngine {
    pub fn new(spec: ExecSpec, capacity: usize) -> Self {
        InlineEngine::with(
            ExecIo {
                spec,
                child: None,
                started: false,
                reported: false,
            },
            capacity,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::plan::model::Op;

    fn op(e: &mut ExecEngine, tag: u64) -> i64 {
        e.push(IoRequest::plain(
            Op::Read,
            0,
            4096,
            std::ptr::null_mut(),
            tag,
        ))
        .unwrap();
        let mut out = Vec::new();
        e.submit_and_reap(0, None, &mut out).unwrap();
        out[0].result
    }

    fn spec(program: &str, args: &[&str], output: Option<String>) -> ExecSpec {
        ExecSpec {
            program: program.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            grace_ns: 200_000_000,
            output,
        }
    }

    #[test]
    fn the_program_runs_writes_its_output_and_is_stopped_at_the_end() {
        let d = tempfile::tempdir().unwrap();
        let prefix = d.path().join("job").display().to_string();
        let mut e = ExecEngine::new(
            spec(
                "sh",
                &["-c", "echo started; exec sleep 30"],
                Some(prefix.clone()),
            ),
            4,
        );
        assert_eq!(op(&mut e, 0), 0);
        let pid = e.io().child.as_ref().unwrap().id() as libc::pid_t;
        let t = std::time::Instant::now();
        assert_eq!(op(&mut e, 1), 0);
        assert!(t.elapsed() >= WATCH, "a watch lasts 50 ms");
        drop(e);
        // SAFETY: signal 0 only asks whether the process exists.
        assert_ne!(
            unsafe { libc::kill(pid, 0) },
            0,
            "the program outlived the run"
        );
        let out = std::fs::read_to_string(format!("{prefix}.stdout")).unwrap();
        assert_eq!(out, "started\n");
    }

    #[test]
    fn a_failing_program_is_one_error() {
        let mut e = ExecEngine::new(spec("sh", &["-c", "exit 3"], None), 4);
        assert_eq!(op(&mut e, 0), 0);
        // Watch until the exit is seen, however long sh takes to start on a loaded
        // machine (five watches, 250 ms, once were not enough in CI); 10 s bounds a
        // program that never ends. Then three more watches: the failure counts once.
        let eio = -(libc::EIO as i64);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut results = Vec::new();
        while !results.contains(&eio) && std::time::Instant::now() < deadline {
            results.push(op(&mut e, results.len() as u64 + 1));
        }
        for _ in 0..3 {
            results.push(op(&mut e, results.len() as u64 + 1));
        }
        assert_eq!(
            results
                .iter()
                .filter(|&&r| r == -(libc::EIO as i64))
                .count(),
            1,
            "{results:?}"
        );
        let mut e = ExecEngine::new(spec("/no/such/program", &[], None), 4);
        assert_eq!(op(&mut e, 0), -(libc::ENOENT as i64));
        assert_eq!(op(&mut e, 1), 0);
    }
}
