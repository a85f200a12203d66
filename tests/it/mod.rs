//! Integration test modules and shared helpers.

mod cli_errors;
mod compat;
mod data;
mod exact;
mod fastpath;
mod html;
mod load;
mod loopdev;
mod net_nbd;
mod output;
mod reports_cli;
mod sim;

use std::path::PathBuf;
use std::process::{Command, Output};

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

/// Reads a result JSON file.
pub fn read_json(p: &PathBuf) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("read result")).expect("parse result")
}

/// Runs ioscope quietly with `--json` into a temp file, asserts success, returns the
/// result.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let d = tempdir();
    let json = d.path().join("r.json");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-q", "--json", json.to_str().unwrap()]);
    let o = run(&all);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    read_json(&json)
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
