//! Everything ioscope prints on stdout goes through here, so a reader that goes away
//! (`ioscope report r.json --format csv | head -1`) ends the command quietly with
//! exit 0 instead of a `println!` panic (exit 101).
//!
//! Why not reset SIGPIPE to its default, as some tools do: the process would then die
//! by the signal (a shell shows 141, not 0), without running destructors — `quick`'s
//! scratch file would stay behind — and without writing the results measured so far.
//! A broken pipe here is an ordinary error value ([`StdoutError::Closed`]) that
//! travels up like any other; the binary maps it to a quiet exit 0.
//!
//! A top-level building block rather than part of `app` (which re-exports it as
//! `app::stdout`) because `net`, which `app` calls, prints through it too.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Set once a write found stdout closed; later writes are skipped.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// fio's `--output FILE`: what would go to stdout goes to this file instead, created
/// (truncated) at the first write, so a command refused before it prints makes none.
static TO_FILE: Mutex<Option<(PathBuf, Option<std::fs::File>)>> = Mutex::new(None);

/// Sends everything printed from now on to `path` instead of stdout.
pub fn redirect(path: PathBuf) {
    *TO_FILE.lock().unwrap_or_else(|p| p.into_inner()) = Some((path, None));
}

/// Writes `text` to the redirect file when there is one (Some), else returns None.
fn to_file(text: &str) -> Option<Result<(), StdoutError>> {
    let mut g = TO_FILE.lock().unwrap_or_else(|p| p.into_inner());
    let (path, file) = g.as_mut()?;
    let fail = |e| StdoutError::File(path.clone(), e);
    let f = match file {
        Some(f) => f,
        None => match std::fs::File::create(&*path) {
            Ok(f) => file.insert(f),
            Err(e) => return Some(Err(fail(e))),
        },
    };
    Some(f.write_all(text.as_bytes()).map_err(fail))
}

/// Writing to stdout failed.
#[derive(Debug, thiserror::Error)]
pub enum StdoutError {
    /// The reader closed the pipe (EPIPE): not a failure, the command just ends.
    #[error("stdout was closed by its reader")]
    Closed,
    /// Any other write error (a full disk behind a redirection, …).
    #[error("writing to stdout")]
    Failed(#[source] std::io::Error),
    /// Writing the file output was redirected to (fio's `--output FILE`).
    #[error("writing the output file {}", .0.display())]
    File(PathBuf, #[source] std::io::Error),
}

/// Writes `text` to stdout and flushes it.
pub fn print(text: &str) -> Result<(), StdoutError> {
    if let Some(r) = to_file(text) {
        return r;
    }
    if closed() {
        return Err(StdoutError::Closed);
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
            Err(StdoutError::Closed)
        }
        Err(e) => Err(StdoutError::Failed(e)),
    }
}

/// Writes `text` and a newline to stdout.
pub fn println(text: &str) -> Result<(), StdoutError> {
    let mut s = String::with_capacity(text.len() + 1);
    s.push_str(text);
    s.push('\n');
    print(&s)
}

/// Writes raw bytes (a generated completion script, a man page) to stdout.
pub fn print_bytes(bytes: &[u8]) -> Result<(), StdoutError> {
    print(&String::from_utf8_lossy(bytes))
}

/// True once a write found stdout closed.
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}
