//! Waiting on descriptors with ppoll(2), the one copy: the worker waits on
//! [`super::Engine::poll_fds`] with it, and the fd-polled network engines use it
//! when `submit_and_reap` is asked to block (callers outside the worker loop). The
//! timespec carries nanoseconds, so the wait is rounded only by ppoll's own
//! resolution. Also here: the descriptor entry an engine hands out, the
//! deadline a blocking `submit_and_reap` waits until, and [`Probe`], which finds a
//! reply already queued on a socket without the wait.

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

/// Turns a probe that found nothing keeps the probe off: a miss costs one ioctl(2),
/// so a client that waits on its server pays for it on one turn in this many.
pub const PROBE_BACKOFF_TURNS: u8 = 8;

/// Finds a reply already queued on a socket without polling for it: a client that
/// is busier than its server (a deep queue) finds the next reply waiting after every
/// one it handles, and a `FIONREAD` ioctl(2) is cheaper than a ppoll(2) that would
/// return at once (profiled: ppoll was ~10 % of the NBD worker's CPU at QD 16,
/// one per I/O). Only descriptors asking for `POLLIN` alone are probed — the answer
/// must be what poll(2) would have said — and after a probe that finds nothing the
/// next [`PROBE_BACKOFF_TURNS`] turns wait in poll(2) directly.
#[derive(Debug, Default)]
pub struct Probe {
    /// Turns left before probing again.
    off_turns: u8,
}

impl Probe {
    /// True when at least one of `fds` (each asking for `POLLIN` alone) already
    /// holds bytes: its `revents` is set to `POLLIN`, as poll(2) would, and the wait
    /// can be skipped. False (nothing changed): wait in poll(2) as usual.
    pub fn ready(&mut self, fds: &mut [libc::pollfd]) -> bool {
        if self.off_turns > 0 {
            self.off_turns -= 1;
            return false;
        }
        if fds.is_empty() || fds.iter().any(|p| p.events != libc::POLLIN) {
            return false;
        }
        let mut any = false;
        for p in fds.iter_mut() {
            let mut queued: libc::c_int = 0;
            // SAFETY: FIONREAD writes one int through the pointer, which is valid.
            let r = unsafe { libc::ioctl(p.fd, libc::FIONREAD, &mut queued) };
            if r == 0 && queued > 0 {
                p.revents = libc::POLLIN;
                any = true;
            }
        }
        if !any {
            self.off_turns = PROBE_BACKOFF_TURNS;
        }
        any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_probe_finds_queued_bytes_and_backs_off_after_a_miss() {
        let (mut tx, rx) = UnixStream::pair().unwrap();
        let fd = rx.as_raw_fd();
        let mut probe = Probe::default();
        let mut fds = [pollfd(fd, libc::POLLIN)];
        assert!(!probe.ready(&mut fds), "nothing queued yet");
        assert_eq!(fds[0].revents, 0);
        tx.write_all(b"reply").unwrap();
        // Off for the turns after the miss, though a reply is now queued.
        for turn in 0..PROBE_BACKOFF_TURNS {
            assert!(!probe.ready(&mut fds), "turn {turn} after the miss");
        }
        assert!(probe.ready(&mut fds));
        assert_eq!(fds[0].revents, libc::POLLIN);
    }

    #[test]
    fn a_descriptor_waiting_to_write_is_left_to_poll() {
        let (mut tx, rx) = UnixStream::pair().unwrap();
        tx.write_all(b"reply").unwrap();
        let mut probe = Probe::default();
        let mut fds = [
            pollfd(rx.as_raw_fd(), libc::POLLIN),
            pollfd(tx.as_raw_fd(), libc::POLLIN | libc::POLLOUT),
        ];
        assert!(!probe.ready(&mut fds));
        assert!(fds.iter().all(|p| p.revents == 0));
        // Not a miss: the next turn probes.
        assert!(probe.ready(&mut fds[..1]));
    }
}
