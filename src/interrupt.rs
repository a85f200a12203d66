//! Ctrl-C: the first press asks the current run to stop and report what it measured;
//! the second exits at once (code 130). A bottom module: the runner, `net` and `app`
//! all read the one flag.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

static PRESSES: AtomicU32 = AtomicU32::new(0);
/// When the first request came.
static FIRST_AT: OnceLock<Instant> = OnceLock::new();

/// Installs the handler once per process. Errors (a handler already set) are ignored.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        let n = PRESSES.fetch_add(1, Ordering::SeqCst) + 1;
        if n == 1 {
            FIRST_AT.get_or_init(Instant::now);
            eprintln!(
                "\ninterrupted: stopping and writing the results so far (Ctrl-C again to quit now)"
            );
        } else {
            std::process::exit(130);
        }
    });
}

/// True once Ctrl-C (or SIGTERM) was received.
pub fn requested() -> bool {
    PRESSES.load(Ordering::Relaxed) > 0
}

/// Asks the current run to stop as a first Ctrl-C would (used when stdout's reader
/// went away: nobody is left to read the interval lines).
pub fn request() {
    FIRST_AT.get_or_init(Instant::now);
    PRESSES.fetch_max(1, Ordering::SeqCst);
}

/// How long ago the stop was first asked for, once it was.
pub fn since() -> Option<Duration> {
    FIRST_AT.get().map(Instant::elapsed)
}
