//! Integration test modules and shared helpers. A test that runs ioscope for its
//! result goes through one helper: [`run_json`] (quiet, must succeed),
//! [`ioscope_result`] / [`ioscope_to`] (any exit code, chosen result path), or
//! [`Spawned`] for a run signalled mid-way, which waits for the run's first interval
//! line rather than a fixed time. Each gives a [`Ran`]: exit code, output, the result in
//! the typed model (`ioscope::result::ResultDoc`) and as written.

mod cli_errors;
mod compat;
mod data;
mod diskspd;
mod dm_multipath;
mod error_policy;
mod exact;
mod exitall;
mod fastpath;
mod file_sets;
mod file_trees;
mod fio_published;
mod generate;
mod histograms;
mod html;
mod load;
mod loopdev;
mod metrics;
mod metrics_net;
#[cfg(feature = "mpi")]
mod mpi;
mod net;
mod net_fio;
mod net_iscsi;
mod net_iscsi_multipath;
mod net_multipath;
mod net_multipath_verify;
mod net_nbd;
mod net_nfs;
#[cfg(feature = "smb")]
mod net_smb;
#[cfg(feature = "smb")]
mod net_smb_channels;
#[cfg(feature = "smb")]
mod net_smb_dir;
mod nfs_trees;
mod op_engines;
mod output;
mod own_settings;
mod pipes;
mod progress;
mod repeat;
mod replay;
mod reports_cli;
mod request_flags;
mod settings;
mod shapes;
mod sim;
#[cfg(feature = "smb")]
mod smb_trees;
mod trim;
mod vdbench_output;
mod vdbench_published;
mod verify_fio;
mod zbd;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ioscope::result::{Interval, ResultDoc, RunResult};

/// The binary under test.
pub fn ioscope() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ioscope"))
}

/// Runs ioscope with `args`, returning its output.
pub fn run(args: &[&str]) -> Output {
    ioscope().args(args).output().expect("spawn ioscope")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A fresh temporary directory under the system temp dir (ext4 here, so O_DIRECT works).
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ioscope-test")
        .tempdir_in(std::env::temp_dir())
        .expect("tempdir")
}

/// Asserts that `got` is what `expected` (a file beside the fixtures) pins; with
/// IOSCOPE_BLESS=1 in the environment it rewrites the file first.
#[track_caller]
pub fn assert_pinned(expected: &Path, got: &str) {
    if std::env::var_os("IOSCOPE_BLESS").is_some() {
        std::fs::write(expected, got).unwrap();
    }
    let want = std::fs::read_to_string(expected).unwrap_or_default();
    assert_eq!(
        got,
        want,
        "{} differs (IOSCOPE_BLESS=1 to accept)",
        expected.display()
    );
}

/// Reads a JSON file that is not a result (`verify --json`, fio's JSON).
pub fn read_json(p: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// One ioscope invocation that wrote a result file, and what it left behind.
pub struct Ran {
    /// Exit code (`None` when a signal ended it).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// The result file in the typed model every reporter reads.
    pub doc: ResultDoc,
    /// The same file as JSON: for the parts the model keeps as open JSON (`plan`,
    /// `env`) and for assertions on the published wire form.
    pub wire: serde_json::Value,
    /// Where the result was written; its interval stream is beside it.
    pub json: PathBuf,
    /// The temporary directory holding `json`, when the helper made one.
    _dir: Option<tempfile::TempDir>,
}

impl Ran {
    /// `runs[i]` of the result.
    pub fn run(&self, i: usize) -> &RunResult {
        self.doc
            .runs
            .get(i)
            .unwrap_or_else(|| panic!("no run {i} in a result of {}", self.doc.runs.len()))
    }

    /// `runs[i]` as written, for assertions on the published wire form.
    pub fn wire_run(&self, i: usize) -> &serde_json::Value {
        &self.wire["runs"][i]
    }

    /// Asserts the exit code, showing stderr when it differs.
    #[track_caller]
    pub fn expect_code(self, want: i32) -> Self {
        assert_eq!(self.code, Some(want), "exit code; stderr: {}", self.stderr);
        self
    }
}

/// Runs ioscope with `args` and `--json JSON`, whatever its exit code (see
/// [`Ran::code`]), and reads the result it wrote (see [`Ran::read`]).
#[track_caller]
pub fn ioscope_to<I, S>(json: &Path, args: I) -> Ran
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    ioscope_cmd_to(ioscope(), json, args)
}

/// [`ioscope_to`] with `cmd` (the binary under test, with what the test set on it:
/// its environment, [`favoured`]).
#[track_caller]
pub fn ioscope_cmd_to<I, S>(mut cmd: Command, json: &Path, args: I) -> Ran
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let o = cmd
        .args(&args)
        .arg("--json")
        .arg(json)
        .output()
        .expect("spawn ioscope");
    Ran::read(
        json,
        format!("ioscope {args:?}"),
        o.status.code(),
        stdout(&o),
        stderr(&o),
    )
}

impl Ran {
    /// Reads the result `command` left at `json`. Fails the test, naming the command,
    /// its exit code and stderr, when there is no readable result, and when the typed
    /// model does not read back everything the file holds (a field written but dropped
    /// on reading would silently vanish from every report).
    #[track_caller]
    pub fn read(
        json: &Path,
        command: String,
        code: Option<i32>,
        stdout: String,
        stderr: String,
    ) -> Ran {
        let what = || format!("{command} (exit {code:?}; stderr: {stderr})");
        let text = std::fs::read_to_string(json)
            .unwrap_or_else(|e| panic!("{}: no result at {}: {e}", what(), json.display()));
        let wire: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: result is not JSON: {e}", what()));
        let doc: ResultDoc = serde_json::from_value(wire.clone())
            .unwrap_or_else(|e| panic!("{}: result does not fit the model: {e}", what()));
        let back = serde_json::to_value(&doc).expect("serialise the model");
        if let Some(path) = first_difference(&wire, &back, "") {
            panic!(
                "{}: the result model does not read back the file's {path}",
                what()
            );
        }
        Ran {
            code,
            stdout,
            stderr,
            doc,
            wire,
            json: json.to_path_buf(),
            _dir: None,
        }
    }
}

/// How long a test waits for a background run's first interval line. The interval is
/// 1 s; the margin is for a loaded machine and a debug build, and a run that never
/// reports fails the test rather than hanging it.
pub const FIRST_INTERVAL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// An ioscope started in the background, to be signalled (or have its server taken
/// away) mid-run. If the test fails before it has ended, dropping this kills (SIGKILL)
/// and reaps it by its PID.
pub struct Spawned {
    /// `None` once [`Spawned::finish`] has reaped it.
    child: Option<std::process::Child>,
    command: String,
}

impl Spawned {
    /// Starts ioscope with `args`, its stdout and stderr piped (read by `finish`).
    pub fn start<I, S>(args: I) -> Spawned
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Self::start_with(ioscope(), args)
    }

    /// [`Spawned::start`] inside the network namespace `ns` (`ip netns exec`, which
    /// execs ioscope: the child's PID is ioscope's own).
    pub fn start_in_netns<I, S>(ns: &str, args: I) -> Spawned
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_ioscope")]);
        Self::start_with(cmd, args)
    }

    /// [`Spawned::start`] of `cmd` (ioscope, or a command that execs it).
    pub fn start_with<I, S>(mut cmd: Command, args: I) -> Spawned
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let child = cmd
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn ioscope");
        Spawned {
            child: Some(child),
            command: format!("ioscope {args:?}"),
        }
    }

    fn child(&mut self) -> &mut std::process::Child {
        self.child.as_mut().expect("child not yet reaped")
    }

    /// The child's PID (it has not been reaped yet, so the PID is still its).
    pub fn pid(&mut self) -> u32 {
        self.child().id()
    }

    /// Waits until the interval stream beside `json` (`--json JSON`) holds its first
    /// complete line: the run is measuring and has closed one interval. Fails the test
    /// with what it saw when the child ends first or `timeout` passes.
    #[track_caller]
    pub fn wait_first_interval(&mut self, json: &Path, timeout: std::time::Duration) -> Interval {
        self.wait_interval(json, timeout, "an interval", |_| true)
    }

    /// Waits until the interval stream beside `json` holds `n` complete lines and
    /// returns them.
    #[track_caller]
    pub fn wait_intervals(
        &mut self,
        json: &Path,
        n: usize,
        timeout: std::time::Duration,
    ) -> Vec<Interval> {
        let last = n.saturating_sub(1) as u64;
        self.wait_interval(json, timeout, &format!("{n} intervals"), |iv| {
            iv.index >= last
        });
        intervals_so_far(json).into_iter().take(n).collect()
    }

    /// Waits until the interval stream beside `json` holds a complete line for which
    /// `seen` is true (`what` names it in the failure), and returns that interval: the
    /// event a test acts on — the run has reached a time of its clock, a path went
    /// down or carries I/O. Fails the test, with the intervals so far, the child's
    /// output and `what`, when the child ends first or `timeout` passes.
    #[track_caller]
    pub fn wait_interval(
        &mut self,
        json: &Path,
        timeout: std::time::Duration,
        what: &str,
        seen: impl Fn(&Interval) -> bool,
    ) -> Interval {
        let stream = intervals_jsonl(json);
        let start = std::time::Instant::now();
        loop {
            let so_far = intervals_so_far(json);
            if let Some(iv) = so_far.iter().find(|iv| seen(iv)) {
                return iv.clone();
            }
            let ended = self.child().try_wait().expect("try_wait");
            if ended.is_some() || start.elapsed() > timeout {
                let why = match ended {
                    Some(status) => format!("ended ({status}) before"),
                    None => format!("did not within {timeout:?} write"),
                };
                let out = self.finish_now();
                let times: Vec<f64> = so_far.iter().map(|iv| iv.t_s).collect();
                panic!(
                    "{} {why} {what} to {} (intervals ending at {times:?} s); stdout: {}; stderr: {}",
                    self.command,
                    stream.display(),
                    stdout(&out),
                    stderr(&out)
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Whether the child still runs (false once it has ended; it is reaped by
    /// [`Spawned::finish`] as before).
    pub fn running(&mut self) -> bool {
        self.child().try_wait().expect("try_wait").is_none()
    }

    /// Sends `signal` to the child.
    pub fn signal(&mut self, signal: i32) {
        let pid = libc::pid_t::try_from(self.child().id()).expect("pid fits pid_t");
        // SAFETY: kill(2) on the PID of our own child, which has not been reaped yet
        // (only `finish` and drop reap it), so the PID is still its.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(rc, 0, "kill({pid}, {signal}) failed");
    }

    /// Waits for the child to end and collects its output.
    pub fn finish(mut self) -> Output {
        let child = self.child.take().expect("child not yet reaped");
        child.wait_with_output().expect("wait for ioscope")
    }

    /// [`Spawned::finish`], then reads the result at `json` into a [`Ran`].
    #[track_caller]
    pub fn finish_result(self, json: &Path) -> Ran {
        let command = self.command.clone();
        let o = self.finish();
        Ran::read(json, command, o.status.code(), stdout(&o), stderr(&o))
    }

    /// Kills the child if it still runs, and collects its output.
    fn finish_now(&mut self) -> Output {
        let mut child = self.child.take().expect("child not yet reaped");
        if let Ok(None) = child.try_wait() {
            let _ = child.kill();
        }
        child.wait_with_output().expect("wait for ioscope")
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.finish_now();
        }
    }
}

/// The run lost a connection and connected again: a `down` event, then an `up`
/// event saying "reconnected to `server`", which is returned.
#[track_caller]
pub fn reconnected<'a>(run: &'a RunResult, server: &str) -> &'a ioscope::result::RunEvent {
    eprintln!("events: {:?}", run.events);
    let kinds: Vec<&str> = run.events.iter().map(|e| e.kind.as_str()).collect();
    let down = kinds.iter().position(|&k| k == "down");
    let up = kinds.iter().position(|&k| k == "up");
    assert!(down.is_some() && up > down, "{:?}", run.events);
    let up = &run.events[up.unwrap()];
    assert!(
        up.detail.contains(&format!("reconnected to {server}")),
        "{up:?}"
    );
    up
}

/// A test server that can be killed outright and started again where it was.
pub trait Restartable {
    /// Kills the server (SIGKILL by PID) and reaps it.
    fn kill(&mut self);
    /// Starts it again on the same port(s), configuration and storage, returning
    /// once it answers.
    fn start_again(&mut self) -> Result<(), String>;
}

/// Runs `cmd` (ioscope, with what the target needs in its environment): 10 s of
/// verified 4 KiB randrw at QD 8 and `rate_iops` against `uri` under `--on-error
/// retry=2`, with 500 ms intervals and a read-back after the run. After six
/// intervals `srv` is killed and started again. The run must reconnect to `server`
/// (a `down`, then an `up` event), end by its duration with no error (the I/Os the
/// loss aborted are issued again), find no mismatch, and be back to its rate within
/// 5 s of the server's return. Returns the result for the caller's own checks.
///
/// The rate is the caller's, about half what the slowest interval of a debug build
/// moved on a loaded two-core host: unpaced, the comparison was of the host's
/// moods, not of the session (a CPU-bound debug SMB client's cost per I/O swings
/// 500-780 us from one 4 s stretch to the next with nothing killed, and a fresh-clone
/// CI saw 75 % for 5 s after a clean reconnect). A session back at under half its
/// former speed, or not sending what it holds, still fails.
#[track_caller]
pub fn assert_run_survives_restart(
    cmd: Command,
    uri: &str,
    server: &str,
    srv: &mut impl Restartable,
    rate_iops: u32,
) -> Ran {
    let rate = rate_iops.to_string();
    let d = tempdir();
    let json = d.path().join("r.json");
    let mut child = Spawned::start_with(
        cmd,
        [
            "run",
            "-t",
            uri,
            "--size",
            "16m",
            "--rw",
            "randrw",
            "--bs",
            "4k",
            "--qd",
            "8",
            "--rate",
            rate.as_str(),
            "--duration",
            "10s",
            "--interval",
            "500ms",
            "--verify",
            "--verify-after",
            "--on-error",
            "retry=2",
            "-q",
            "--json",
        ]
        .map(OsStr::new)
        .into_iter()
        .chain([json.as_os_str()]),
    );
    // Six intervals (3 s) of steady I/O to compare the return with: the median of
    // five (the first holds the start) stands up to one odd interval either way.
    child.wait_intervals(&json, 6, FIRST_INTERVAL_TIMEOUT);
    let killed = unix_now_s();
    srv.kill();
    srv.start_again().expect("the server again where it was");
    let back = unix_now_s();
    let mut r = child.finish_result(&json).expect_code(0);
    let run = r.run(0);
    assert_eq!(run.end_reason, ioscope::result::EndReason::Duration);
    reconnected(run, server);
    assert_eq!(run.totals.all.errors, 0, "{:?}", run.totals);
    let v = run.verify.as_ref().expect("verify counts");
    assert_eq!(v.mismatches, 0, "{v:?}");
    assert!(v.units_checked > 0, "{v:?}");
    // The bound: reconnect attempts are at most 1 s apart, and one 500 ms interval
    // must then pass whole; the rest of the 5 s is spread for a loaded machine.
    assert_throughput_back(run, killed, back, 5.0);
    r._dir = Some(d);
    r
}

/// Runs `run -t uri --rw randread --qd 8 --duration duration` under `--on-error
/// continue`. After the first interval `kill` kills the server outright; once the run
/// has noticed (an interval holds the `down`) `start_again` starts it on the same
/// port, so the engine's first attempts meet a closed port. The run must end by its
/// duration with exit 1 (the I/Os the loss aborted are counted errors), reconnect
/// to `server`, count as errors what was in flight (QD 8) and no more, and carry
/// over 100 I/Os after its `up`. Returns what `start_again` made (the new server)
/// and those I/Os.
#[track_caller]
pub fn assert_run_continues_after_restart<T>(
    uri: &str,
    duration: &str,
    server: &str,
    kill: impl FnOnce(),
    start_again: impl FnOnce() -> T,
) -> (T, u64) {
    let d = tempdir();
    let json = d.path().join("r.json");
    let mut child = Spawned::start([
        "run",
        "-t",
        uri,
        "--rw",
        "randread",
        "--qd",
        "8",
        "--duration",
        duration,
        "--interval",
        "500ms",
        "--on-error",
        "continue",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    child.wait_first_interval(&json, FIRST_INTERVAL_TIMEOUT);
    kill();
    child.wait_interval(&json, FIRST_INTERVAL_TIMEOUT, "the `down`", |iv| {
        iv.events.iter().any(|e| e.kind == "down")
    });
    let again = start_again();
    let r = child.finish_result(&json).expect_code(1);
    let run = r.run(0);
    assert_eq!(
        run.end_reason,
        ioscope::result::EndReason::Duration,
        "{}",
        r.stderr
    );
    let up = reconnected(run, server);
    let errors = run.totals.all.errors;
    assert!((1..=8).contains(&errors), "{errors} errors");
    let after: u64 = run
        .intervals
        .iter()
        .filter(|iv| iv.t_s > up.t_s + 0.5)
        .map(|iv| iv.ios)
        .sum();
    assert!(
        after > 100,
        "{after} I/Os after the `up`: {:?}",
        run.intervals
    );
    (again, after)
}

/// Now, in Unix seconds: the clock the result's `intervals[].unix_s` are on.
pub fn unix_now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is past 1970")
        .as_secs_f64()
}

/// A run whose server was killed at `killed_s` and answered again at `back_s` (Unix
/// seconds) went on as before: some interval that began after the server's return
/// and ended within `within_s` of it moved at least 90 % of the I/Os per second of
/// the median interval before the kill (the first interval, which holds the start,
/// left out). Prints the figures either way.
#[track_caller]
pub fn assert_throughput_back(run: &RunResult, killed_s: f64, back_s: f64, within_s: f64) {
    let mut before: Vec<f64> = run
        .intervals
        .iter()
        .skip(1)
        .filter(|iv| iv.unix_s <= killed_s)
        .map(|iv| iv.iops)
        .collect();
    assert!(
        !before.is_empty(),
        "no interval before the kill: {:?}",
        run.intervals
    );
    before.sort_by(f64::total_cmp);
    let median = before[before.len() / 2];
    let after: Vec<(f64, f64)> = run
        .intervals
        .iter()
        .filter(|iv| iv.unix_s - iv.duration_s >= back_s && iv.unix_s <= back_s + within_s)
        .map(|iv| (iv.unix_s - back_s, iv.iops))
        .collect();
    let best = after.iter().map(|&(_, iops)| iops).fold(0.0, f64::max);
    eprintln!(
        "IOPS before the kill: {before:.0?}, median {median:.0}; after the return, (s since, IOPS): {after:.1?}; down {:.2} s",
        back_s - killed_s
    );
    assert!(
        best >= 0.9 * median,
        "within {within_s} s of the server's return the best interval made {best:.0} IOPS, \
         under 90 % of {median:.0} before the kill: {after:?}"
    );
}

/// [`ioscope_to`] into a fresh temporary directory, kept as long as the [`Ran`].
#[track_caller]
pub fn ioscope_result<I, S>(args: I) -> Ran
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let d = tempdir();
    let mut r = ioscope_to(&d.path().join("r.json"), args);
    r._dir = Some(d);
    r
}

/// `run --target TARGET --rw randread --bs 4k --qd QD --duration DURATION` and then
/// `extra`: the closed-loop random-read command line the sim, repeat and report
/// tests start from.
pub fn randread_args<'a>(
    target: &'a str,
    qd: &'a str,
    duration: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--target",
        target,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        qd,
        "--duration",
        duration,
    ];
    args.extend_from_slice(extra);
    args
}

/// The common case: `args` with `-q`, which must succeed (exit 0).
#[track_caller]
pub fn run_json(args: &[&str]) -> Ran {
    ioscope_result(args.iter().chain(&["-q"])).expect_code(0)
}

/// The interval stream ioscope writes beside a `--json` result.
pub fn intervals_jsonl(json: &Path) -> PathBuf {
    let mut p = json.as_os_str().to_owned();
    p.push(".intervals.jsonl");
    PathBuf::from(p)
}

/// The complete lines of the interval stream beside `json` so far, in the typed
/// model (none before the file exists; a line still being written is left out).
#[track_caller]
pub fn intervals_so_far(json: &Path) -> Vec<Interval> {
    let text = std::fs::read_to_string(intervals_jsonl(json)).unwrap_or_default();
    let complete = text.rsplit_once('\n').map_or("", |(lines, _)| lines);
    complete
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("interval line {l:?} does not parse: {e}"))
        })
        .collect()
}

/// The first JSON path at which `a` and `b` differ, if any.
fn first_difference(a: &serde_json::Value, b: &serde_json::Value, at: &str) -> Option<String> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                let (p, q) = (x.get(k), y.get(k));
                let here = format!("{at}.{k}");
                match (p, q) {
                    (Some(p), Some(q)) => first_difference(p, q, &here),
                    _ => Some(format!("{here} (present on one side only)")),
                }
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}[{i}]"))),
        _ if a == b => None,
        _ => Some(format!("{at}: {a} read back as {b}")),
    }
}

/// `cmd` at the highest CPU priority when the tests run as root, for a test whose
/// claim needs a CPU for the program (a rate of 1 M IOPS is most of a core's work):
/// programs at the normal priority — a CPU hog, a parallel build — then get what it
/// leaves instead of their share, and the test measures the program rather than the
/// load beside it. Nice −20 alone is not enough: with the kernel's autogroups
/// (`/proc/sys/kernel/sched_autogroup_enabled`) CPU is first shared among sessions,
/// and nice only orders the processes of one session (a nice −20 spinner got 9-73%
/// of a CPU beside another session's build here). So the child starts a session of
/// its own, whose autogroup gets nice −20 too (99% of a CPU beside the same build).
/// Without root, `cmd` as it was.
pub fn favoured(mut cmd: Command) -> Command {
    if is_root() {
        use std::os::unix::process::CommandExt;
        // SAFETY: between fork and exec only async-signal-safe system calls, on
        // the child itself, with no allocation.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Absent without autogroups: then nice alone is what counts.
                let fd = libc::open(c"/proc/self/autogroup".as_ptr(), libc::O_WRONLY);
                if fd >= 0 {
                    libc::write(fd, b"-20".as_ptr().cast(), 3);
                    libc::close(fd);
                }
                if libc::setpriority(libc::PRIO_PROCESS, 0, -20) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
    }
    cmd
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A loop device over a temp file, detached on drop (also when a test fails).
pub struct LoopDev {
    pub dev: String,
    _dir: tempfile::TempDir,
}

impl LoopDev {
    /// Creates one of `size_mib` MiB with direct I/O on, or explains why it can't.
    pub fn new(size_mib: u64) -> Result<Self, String> {
        if !is_root() {
            return Err("not root".into());
        }
        let dir = tempdir();
        let file = dir.path().join("backing.img");
        let f = std::fs::File::create(&file).map_err(|e| e.to_string())?;
        f.set_len(size_mib << 20).map_err(|e| e.to_string())?;
        let out = Command::new("losetup")
            .args(["--find", "--show", "--direct-io=on"])
            .arg(&file)
            .output()
            .map_err(|e| format!("losetup: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "losetup failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Ok(LoopDev { dev, _dir: dir })
    }

    /// The kernel name, e.g. "loop3".
    pub fn name(&self) -> String {
        self.dev.trim_start_matches("/dev/").to_string()
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// In CI every prerequisite must be there: a skip there is a failure.
pub fn skip_or_fail(why: &str) {
    if std::env::var_os("CI").is_some() {
        panic!("prerequisite missing in CI: {why}");
    }
    eprintln!("SKIPPED: {why}");
}

/// Two network namespaces of the test's own joined by a veth pair (client side
/// 10.251.0.1, server side 10.251.0.2, MTU 9000; the addresses exist only inside the
/// namespaces), deleted on drop, also when the test fails. Tests that talk over it
/// run their programs with `ip netns exec` ([`Spawned::start_in_netns`]).
pub struct NetnsPair {
    pub client_ns: String,
    pub server_ns: String,
    /// The veth end inside the server namespace (taking it down cuts the link).
    pub server_dev: String,
    /// The veth end inside the client namespace (the token bucket's device).
    pub client_dev: String,
}

impl NetnsPair {
    pub fn ip(args: &[&str]) -> Result<(), String> {
        let o = Command::new("ip")
            .args(args)
            .output()
            .map_err(|e| format!("ip: {e}"))?;
        if o.status.success() {
            Ok(())
        } else {
            Err(format!(
                "ip {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&o.stderr)
            ))
        }
    }

    /// The pair, named after `tag` and this process (so tests running at once do
    /// not meet), with a token bucket of `rate` on the client's egress when given.
    pub fn new(tag: &str, rate: Option<&str>) -> Result<NetnsPair, String> {
        if !is_root() {
            return Err("not root".into());
        }
        let pid = std::process::id();
        let (vc, vs) = (format!("ioc{pid}"), format!("ios{pid}"));
        let pair = NetnsPair {
            client_ns: format!("ioscope-{tag}-c{pid}"),
            server_ns: format!("ioscope-{tag}-s{pid}"),
            server_dev: vs.clone(),
            client_dev: vc.clone(),
        };
        let (c, s) = (pair.client_ns.clone(), pair.server_ns.clone());
        Self::ip(&["netns", "add", &c])?;
        Self::ip(&["netns", "add", &s])?;
        veth_link(&c, &s, (&vc, "10.251.0.1/24"), (&vs, "10.251.0.2/24"))?;
        for ns in [&c, &s] {
            Self::ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        if let Some(rate) = rate {
            token_bucket(&c, &vc, rate)?;
        }
        Ok(pair)
    }

    /// Bytes the client's egress qdisc has sent (the kernel's count, `tc -s`):
    /// frames with their Ethernet, IP and TCP headers.
    pub fn client_sent_bytes(&self) -> Result<u64, String> {
        let o = Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.client_ns,
                "tc",
                "-s",
                "qdisc",
                "show",
            ])
            .args(["dev", &self.client_dev])
            .output()
            .map_err(|e| format!("tc: {e}"))?;
        let text = String::from_utf8_lossy(&o.stdout);
        text.split_whitespace()
            .skip_while(|w| *w != "Sent")
            .nth(1)
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("no \"Sent N bytes\" in tc's output: {text}"))
    }

    /// Takes the server's veth end down (`up = false`: packets vanish, nothing is
    /// reset, like a pulled cable) or up again.
    pub fn set_link(&self, up: bool) -> Result<(), String> {
        let state = if up { "up" } else { "down" };
        Self::ip(&[
            "-n",
            &self.server_ns,
            "link",
            "set",
            &self.server_dev,
            state,
        ])
    }
}

impl Drop for NetnsPair {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth end inside it (and so its peer).
        let _ = Command::new("ip")
            .args(["netns", "del", &self.client_ns])
            .status();
        let _ = Command::new("ip")
            .args(["netns", "del", &self.server_ns])
            .status();
    }
}

/// A veth pair from namespace `c` (device and address `client`) to namespace `s`
/// (`server`), MTU 9000, both ends up.
fn veth_link(c: &str, s: &str, client: (&str, &str), server: (&str, &str)) -> Result<(), String> {
    let ((vc, ca), (vs, sa)) = (client, server);
    NetnsPair::ip(&[
        "-n", c, "link", "add", vc, "mtu", "9000", "type", "veth", "peer", "name", vs, "netns", s,
        "mtu", "9000",
    ])?;
    NetnsPair::ip(&["-n", c, "addr", "add", ca, "dev", vc])?;
    NetnsPair::ip(&["-n", s, "addr", "add", sa, "dev", vs])?;
    NetnsPair::ip(&["-n", c, "link", "set", vc, "up"])?;
    NetnsPair::ip(&["-n", s, "link", "set", vs, "up"])
}

/// The MAC address of `dev` in namespace `ns`.
fn mac_of(ns: &str, dev: &str) -> Result<String, String> {
    let o = Command::new("ip")
        .args(["-n", ns, "-br", "link", "show", "dev", dev])
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    let text = String::from_utf8_lossy(&o.stdout);
    text.split_whitespace()
        .nth(2)
        .map(str::to_string)
        .ok_or_else(|| format!("no MAC address of {dev} in {ns}: {text:?}"))
}

/// A token bucket filter of `rate` (tc's syntax, `200mbit`) on `dev`'s egress in
/// namespace `ns`: 128 kB of burst, packets queued up to 50 ms, the rest dropped.
fn token_bucket(ns: &str, dev: &str, rate: &str) -> Result<(), String> {
    let o = Command::new("ip")
        .args([
            "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf",
        ])
        .args(["rate", rate, "burst", "128kb", "latency", "50ms"])
        .output()
        .map_err(|e| format!("tc: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!("tc: {}", String::from_utf8_lossy(&o.stderr)))
    }
}

/// A client and a server namespace of the test's own joined by `n` veth pairs — `n`
/// links, like the cables of a host with several NICs to one storage server. Link
/// `k` is 10.252.`k`.1 (client) — 10.252.`k`.2 (server); the addresses exist only
/// inside the namespaces. With a `rate`, each link's server end sends no faster
/// (a token bucket on its egress: the direction reads flow), so the links, not the
/// CPU, limit what the paths carry. Each side knows the other's MAC address for
/// good (a permanent neighbour entry), so a cut link drops packets silently however
/// long it lasts — like a cut beyond a switch, with no ARP failure turning a lost SYN
/// into "no route to host". Deleted on drop, also when the test fails.
pub struct NetnsLinks {
    pub client_ns: String,
    pub server_ns: String,
    /// The veth end of each link inside the server namespace.
    pub server_devs: Vec<String>,
}

impl NetnsLinks {
    pub fn new(tag: &str, n: usize, rate: Option<&str>) -> Result<NetnsLinks, String> {
        if !is_root() {
            return Err("not root".into());
        }
        let pid = std::process::id();
        let mut links = NetnsLinks {
            client_ns: format!("ioscope-{tag}-c{pid}"),
            server_ns: format!("ioscope-{tag}-s{pid}"),
            server_devs: Vec::new(),
        };
        let (c, s) = (links.client_ns.clone(), links.server_ns.clone());
        // `links` exists already: a step that fails drops it, deleting what was made.
        NetnsPair::ip(&["netns", "add", &c])?;
        NetnsPair::ip(&["netns", "add", &s])?;
        for ns in [&c, &s] {
            NetnsPair::ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        for k in 0..n {
            let (vc, vs) = (format!("lkc{k}-{pid}"), format!("lks{k}-{pid}"));
            let (ca, sa) = (format!("10.252.{k}.1/24"), format!("10.252.{k}.2/24"));
            veth_link(&c, &s, (&vc, &ca), (&vs, &sa))?;
            let (cmac, smac) = (mac_of(&c, &vc)?, mac_of(&s, &vs)?);
            for (ns, dev, peer, mac) in [(&c, &vc, &sa, &smac), (&s, &vs, &ca, &cmac)] {
                let peer = peer.trim_end_matches("/24");
                NetnsPair::ip(&[
                    "-n",
                    ns,
                    "neigh",
                    "replace",
                    peer,
                    "lladdr",
                    mac,
                    "dev",
                    dev,
                    "nud",
                    "permanent",
                ])?;
            }
            if let Some(rate) = rate {
                token_bucket(&s, &vs, rate)?;
            }
            links.server_devs.push(vs);
        }
        Ok(links)
    }

    /// The server's address on link `k`.
    pub fn server_addr(k: usize) -> String {
        format!("10.252.{k}.2")
    }

    /// Takes link `k`'s server end down (`up = false`: packets vanish, nothing is
    /// reset, like a pulled cable) or up again.
    pub fn set_link(&self, k: usize, up: bool) -> Result<(), String> {
        let state = if up { "up" } else { "down" };
        NetnsPair::ip(&[
            "-n",
            &self.server_ns,
            "link",
            "set",
            &self.server_devs[k],
            state,
        ])
    }
}

impl Drop for NetnsLinks {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth ends inside it (and so their peers).
        for ns in [&self.client_ns, &self.server_ns] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}
