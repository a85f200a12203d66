//! The one clock every timestamp comes from: CLOCK_MONOTONIC in nanoseconds, read
//! through the vDSO (about 20 ns, no syscall). One read per event; completions reaped
//! together share one read.
//!
//! A run whose targets include a `sim:` target with `time=virtual` switches this
//! clock to virtual time ([`virtual_time`]) in its setup, before it opens them
//! (`crate::run::timebase`), for the rest of the process's life: every read and every
//! wait ([`sleep_until`]) then goes to the simulation's clock.

pub mod virtual_time;

use std::sync::atomic::{AtomicBool, Ordering};
use virtual_time::VirtualClock;

/// Set once virtual time is in use; never cleared.
static VIRTUAL_ON: AtomicBool = AtomicBool::new(false);

/// The process's virtual clock (idle until [`use_virtual_time`]).
pub static VIRTUAL: VirtualClock = VirtualClock::new();

/// Monotonic nanoseconds since an arbitrary fixed point (boot), or the virtual time.
#[inline]
pub fn now_ns() -> u64 {
    if VIRTUAL_ON.load(Ordering::Relaxed) {
        return VIRTUAL.now_ns();
    }
    real_now_ns()
}

/// The calling thread's CPU time (user + system), ns. A system call, not the vDSO:
/// for once per interval or per chunk of work, never per I/O.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CLOCK_MONOTONIC in ns, whatever clock the process uses.
#[inline]
pub fn real_now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

#[inline(always)]
fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass; both ids above always exist.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Switches the process to virtual time, starting from the real clock's reading.
pub fn use_virtual_time() {
    if !VIRTUAL_ON.load(Ordering::Acquire) {
        VIRTUAL.start_at(real_now_ns());
        VIRTUAL_ON.store(true, Ordering::Release);
    }
}

/// Whether the process runs on virtual time.
#[inline]
pub fn is_virtual() -> bool {
    VIRTUAL_ON.load(Ordering::Relaxed)
}

/// Blocks until [`now_ns`] reads at least `at_ns`: an absolute sleep on the real clock
/// (no drift from the call itself; a signal may end it early), or, on virtual time, a
/// park until the simulation reaches `at_ns` (the caller must be a participant).
pub fn sleep_until(at_ns: u64) {
    if is_virtual() {
        VIRTUAL.wait_until(at_ns);
        return;
    }
    let ts = libc::timespec {
        tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (at_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: clock_nanosleep reads the timespec we pass; the remainder pointer may be
    // null with TIMER_ABSTIME. An early return on a signal only shortens the sleep.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}

/// Wall-clock seconds since the Unix epoch (for result timestamps only).
pub fn unix_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
