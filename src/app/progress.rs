//! The status line on standard error (`--progress`): where the whole command stands
//! (elapsed and remaining over every planned run: sweeps, curve points, rounds) and
//! the last interval's figures. It is redrawn in place at every interval end
//! (`\r`, the line, clear to its end) and wiped before any other line is printed, so
//! interval lines never share a line with it. `auto` shows it only when both stdout
//! and stderr are terminals: a pipe or a file gets exactly the output it got before.
//! The trade-off: remaining time is the planned run time left, not a forecast; a
//! curve's SLA search or a steady-state stop can end the command sooner, and runs
//! bounded by passes rather than time make it unknown (`?`).

use super::Output;
use crate::plan::settings::declared::PROGRESS;
use crate::report::terminal::{progress_line, Whereabouts};
use crate::result::Interval;
use std::io::Write;

/// How the status line is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Redrawn in place on a terminal.
    Redraw,
    /// A new line at every interval (fio's `--eta-newline`).
    Lines,
}

/// What the status line knows about the whole command.
#[derive(Debug, Clone)]
pub struct Progress {
    mode: Mode,
    /// Seconds the planned runs take in all (`None`: not known ahead).
    total_s: Option<f64>,
    /// Seconds of runs already finished.
    done_s: f64,
    runs_total: Option<usize>,
    runs_done: usize,
    /// Whether a line is on the screen now (wiped before other output).
    shown: bool,
}

/// The mode `--progress` asks for, given where stdout and stderr go.
pub fn mode(out: &Output) -> Option<Mode> {
    match out.settings.get(&PROGRESS).as_str() {
        "always" => Some(Mode::Redraw),
        "lines" => Some(Mode::Lines),
        "never" => None,
        _ => {
            // SAFETY: isatty only inspects the descriptor.
            let tty = unsafe { libc::isatty(1) == 1 && libc::isatty(2) == 1 };
            (tty && !out.quiet && !out.stdout_is_doc()).then_some(Mode::Redraw)
        }
    }
}

/// Planned seconds of a run: its warm-up and duration (`None`: bounded by passes).
pub fn run_s(r: &crate::plan::model::RunSpec) -> Option<f64> {
    r.duration_ns.map(|d| (r.warmup_ns + d) as f64 / 1e9)
}

impl Progress {
    /// A status line for `runs` planned runs of `total_s` seconds in all.
    pub fn new(mode: Mode, runs: Option<usize>, total_s: Option<f64>) -> Self {
        Progress {
            mode,
            total_s,
            done_s: 0.0,
            runs_total: runs,
            runs_done: 0,
            shown: false,
        }
    }

    /// What the command now expects in all (a curve or PTS that knows its plan).
    pub fn expect(&mut self, runs: Option<usize>, total_s: Option<f64>) {
        self.runs_total = runs.map(|n| n + self.runs_done);
        self.total_s = total_s.map(|t| t + self.done_s);
    }

    /// Shows the line for interval `iv` of a run planned to take `run_s`.
    pub fn show(&mut self, iv: &Interval, run_s: Option<f64>) {
        let in_run = run_s.map_or(iv.t_s, |r| iv.t_s.min(r));
        let at = Whereabouts {
            elapsed_s: self.done_s + in_run,
            total_s: self.total_s,
            run: self.runs_done + 1,
            runs: self.runs_total,
        };
        let line = progress_line(&at, iv);
        let text = match self.mode {
            Mode::Redraw => format!("\r{line}\x1b[K"),
            Mode::Lines => format!("{line}\n"),
        };
        self.shown = self.mode == Mode::Redraw;
        // A closed stderr is no reason to stop measuring.
        let _ = std::io::stderr().write_all(text.as_bytes());
    }

    /// Wipes the line before something else is printed.
    pub fn clear(&mut self) {
        if std::mem::take(&mut self.shown) {
            let _ = std::io::stderr().write_all(b"\r\x1b[K");
        }
    }

    /// A run has ended after `run_s` planned seconds.
    pub fn run_done(&mut self, run_s: Option<f64>) {
        self.clear();
        self.runs_done += 1;
        match run_s {
            Some(s) => self.done_s += s,
            // A run bounded by passes: the rest of the plan is still known, where
            // the command is in it is not.
            None => self.total_s = None,
        }
    }
}
