//! The one clock every timestamp comes from: CLOCK_MONOTONIC in nanoseconds, read
//! through the vDSO (about 20 ns, no syscall). One read per event; completions reaped
//! together share one read.

/// Monotonic nanoseconds since an arbitrary fixed point (boot).
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall-clock seconds since the Unix epoch (for result timestamps only).
pub fn unix_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
