//! Coalescing what one library call writes to a TCP socket: [`corked`] sets
//! `TCP_CORK` for the call and clears it after, so requests the call writes one
//! `send(2)` at a time leave in as few segments as their bytes need instead of one
//! segment each (the library's sockets run with `TCP_NODELAY`). Each segment on a
//! loopback costs the sender its transmit and, in the same softirq, the receiver's
//! TCP processing and wake-up; a worker turn that sends k iSCSI commands then pays
//! that once instead of k times. Clearing the option sends what it held at once, so
//! nothing waits for the kernel's 200 ms cork limit.

/// Runs `f` with `TCP_CORK` set on `fd` and clears it after, which sends what `f`
/// wrote. A socket that refuses the option (not TCP) just runs `f`.
pub fn corked<R>(fd: i32, f: impl FnOnce() -> R) -> R {
    let on = set_cork(fd, true);
    let r = f();
    if on {
        set_cork(fd, false);
    }
    r
}

/// Sets or clears `TCP_CORK` on `fd`; false when the socket refused it.
fn set_cork(fd: i32, on: bool) -> bool {
    let v: libc::c_int = on.into();
    // SAFETY: a valid pointer to an int of the length given.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CORK,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    r == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;
    use std::time::{Duration, Instant};

    /// Segments `s` has sent so far (`tcpi_segs_out` of TCP_INFO).
    fn segs_out(s: &TcpStream) -> u32 {
        // SAFETY: tcp_info is plain data; getsockopt writes at most `len` bytes.
        let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        // SAFETY: valid pointers to the struct and its length.
        let r = unsafe {
            libc::getsockopt(
                s.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_INFO,
                (&mut info as *mut libc::tcp_info).cast(),
                &mut len,
            )
        };
        assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
        info.tcpi_segs_out
    }

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (rx, _) = l.accept().unwrap();
        tx.set_nodelay(true).unwrap();
        (tx, rx)
    }

    /// Four 48-byte writes (four iSCSI command PDUs) from one call.
    fn four_writes(tx: &mut TcpStream) {
        for k in 0..4u8 {
            tx.write_all(&[k; 48]).unwrap();
        }
    }

    fn read_all(rx: &mut TcpStream) -> Vec<u8> {
        let mut got = vec![0u8; 4 * 48];
        rx.read_exact(&mut got).unwrap();
        got
    }

    #[test]
    fn a_corked_call_sends_its_writes_in_one_segment_at_once() {
        let (mut tx, mut rx) = pair();
        let before = segs_out(&tx);
        corked(tx.as_raw_fd(), || four_writes(&mut tx));
        assert_eq!(segs_out(&tx) - before, 1, "one segment for four writes");
        // Sent when the call ended, not at the kernel's 200 ms cork limit.
        rx.set_read_timeout(Some(Duration::from_millis(150)))
            .unwrap();
        let t = Instant::now();
        let got = read_all(&mut rx);
        assert!(t.elapsed() < Duration::from_millis(150));
        assert_eq!((got[0], got[48 * 3]), (0, 3));
    }

    #[test]
    fn uncorked_the_same_writes_take_a_segment_each() {
        let (mut tx, mut rx) = pair();
        let before = segs_out(&tx);
        four_writes(&mut tx);
        read_all(&mut rx);
        assert_eq!(segs_out(&tx) - before, 4);
    }

    #[test]
    fn a_socket_without_tcp_options_just_runs_the_call() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(corked(a.as_raw_fd(), || 7), 7);
    }
}
