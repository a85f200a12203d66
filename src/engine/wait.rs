//! Waiting on descriptors with ppoll(2), the one copy: the worker waits on
//! [`super::Engine::poll_fds`] with it, and the fd-polled network engines use it
//! when `submit_and_reap` is asked to block (callers outside the worker loop). The
//! timespec carries nanoseconds, so the wait is rounded only by ppoll's own
//! resolution. Also here: the descriptor entry an engine hands out, and the
//! deadline a blocking `submit_and_reap` waits until.

/// `fd` polled for `events`.
pub const fn pollfd(fd: i32, events: i16) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

/// When a `submit_and_reap` given `timeout_ns` stops waiting: `u64::MAX` without
/// one; 0 (past) for a reap that does not wait, which needs no clock.
#[inline]
pub fn deadline_ns(timeout_ns: Option<u64>) -> u64 {
    match timeout_ns {
        Some(0) => 0,
        t => t.map_or(u64::MAX, |t| crate::clock::now_ns().saturating_add(t)),
    }
}

/// poll(2) on `fds` for at most `timeout_ns` (nanosecond timespec). EINTR is a
/// normal early return.
pub fn poll_until(fds: &mut [libc::pollfd], timeout_ns: u64) -> std::io::Result<()> {
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000).min(i32::MAX as u64) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `fds` is a valid slice of pollfd for its length; `ts` outlives the
    // call; a null signal mask leaves the mask as it is.
    let r = unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}
