//! Socket options and the few raw socket calls std does not offer: options that must
//! be set before `connect` (window, MSS), a connect with a deadline, CPU pinning of
//! the calling thread, and reading back what the kernel actually put in effect.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};

/// Options a data socket gets before it connects.
#[derive(Debug, Clone, Copy, Default)]
pub struct SocketOpts {
    pub window_bytes: Option<u32>,
    pub mss_bytes: Option<u32>,
    pub nodelay: bool,
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// setsockopt with an int value.
pub fn set_int(fd: RawFd, level: libc::c_int, opt: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: we pass a pointer to a live c_int and its exact size.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// getsockopt of an int value.
pub fn get_int(fd: RawFd, level: libc::c_int, opt: libc::c_int) -> io::Result<libc::c_int> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: v and len are live and len holds v's size; the kernel writes at most that.
    check(unsafe {
        libc::getsockopt(
            fd,
            level,
            opt,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    })?;
    Ok(v)
}

/// Applies `o` to a socket (before connect for the client, after accept for the
/// server, where the window then only bounds growth).
pub fn apply(fd: RawFd, o: &SocketOpts) -> io::Result<()> {
    if let Some(w) = o.window_bytes {
        let w = w.min(i32::MAX as u32) as libc::c_int;
        set_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, w)?;
        set_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, w)?;
    }
    if let Some(m) = o.mss_bytes {
        set_int(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, m as libc::c_int)?;
    }
    if o.nodelay {
        set_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)?;
    }
    Ok(())
}

/// Connects to `addr` within `timeout_ns`, with `o` applied before the SYN so the
/// window scale and MSS are negotiated from them.
pub fn connect(addr: &SocketAddr, o: &SocketOpts, timeout_ns: u64) -> io::Result<TcpStream> {
    let domain = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // SAFETY: plain socket creation; the descriptor is owned by `stream` right below.
    let fd = check(unsafe {
        libc::socket(
            domain,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    })?;
    // SAFETY: fd is a fresh socket nobody else owns; TcpStream closes it on drop.
    let stream = unsafe { TcpStream::from_raw_fd(fd) };
    apply(fd, o)?;
    let (storage, len) = sockaddr(addr);
    // SAFETY: storage holds a sockaddr of `len` bytes matching the socket's family.
    let rc = unsafe { libc::connect(fd, (&storage as *const libc::sockaddr_storage).cast(), len) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLOUT,
            revents: 0,
        };
        let ms = (timeout_ns / 1_000_000).clamp(1, i32::MAX as u64) as libc::c_int;
        // SAFETY: one valid pollfd.
        let n = check(unsafe { libc::poll(&mut pfd, 1, ms) })?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no answer within {} ms", ms),
            ));
        }
        let err = get_int(fd, libc::SOL_SOCKET, libc::SO_ERROR)?;
        if err != 0 {
            return Err(io::Error::from_raw_os_error(err));
        }
    }
    stream.set_nonblocking(false)?;
    Ok(stream)
}

fn sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data; all-zero is a valid value.
    let mut st: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than sockaddr_in and suitably aligned.
            unsafe { std::ptr::write((&mut st as *mut libc::sockaddr_storage).cast(), sin) };
            (
                st,
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than sockaddr_in6 and suitably aligned.
            unsafe { std::ptr::write((&mut st as *mut libc::sockaddr_storage).cast(), sin6) };
            (
                st,
                std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
            )
        }
    }
}

/// Pins the calling thread to `cpu`; a CPU outside the allowed set is an error.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET writes within it (cpu is bounds
    // checked by the macro's implementation against the set size).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        libc::CPU_SET(cpu, &mut set);
        check(libc::sched_setaffinity(
            0,
            std::mem::size_of::<libc::cpu_set_t>(),
            &set,
        ))?;
    }
    Ok(())
}

/// The first CPU in `cpus` this process may not run on, if any.
pub fn disallowed_cpu(cpus: &[usize]) -> Option<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills the set we own, and
    // CPU_ISSET reads within it for indices below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        cpus.iter()
            .copied()
            .find(|&c| c >= libc::CPU_SETSIZE as usize || !libc::CPU_ISSET(c, &set))
    }
}

/// The socket buffer sizes in effect (SO_SNDBUF, SO_RCVBUF as the kernel reports
/// them: twice what was asked, capped by wmem_max/rmem_max).
pub fn buffers(s: &TcpStream) -> (Option<u64>, Option<u64>) {
    let fd = s.as_raw_fd();
    let g = |opt| get_int(fd, libc::SOL_SOCKET, opt).ok().map(|v| v as u64);
    (g(libc::SO_SNDBUF), g(libc::SO_RCVBUF))
}

/// The path MTU the kernel holds for a connected socket (IP_MTU / IPV6_MTU).
pub fn path_mtu(s: &TcpStream) -> Option<u64> {
    let fd = s.as_raw_fd();
    let v6 = s.peer_addr().ok()?.is_ipv6();
    let r = if v6 {
        get_int(fd, libc::IPPROTO_IPV6, libc::IPV6_MTU)
    } else {
        get_int(fd, libc::IPPROTO_IP, libc::IP_MTU)
    };
    r.ok().map(|v| v as u64)
}

/// The congestion control algorithm of a socket (TCP_CONGESTION).
pub fn congestion(s: &TcpStream) -> Option<String> {
    let mut buf = [0u8; 32];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf and len are live; the kernel writes at most len bytes.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc < 0 {
        return None;
    }
    let end = buf[..len as usize]
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(len as usize);
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_applies_options_and_reports_refusal() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let o = SocketOpts {
            window_bytes: Some(256 * 1024),
            mss_bytes: None,
            nodelay: true,
        };
        let s = connect(&addr, &o, 2_000_000_000).unwrap();
        assert_eq!(
            get_int(s.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_NODELAY).unwrap(),
            1
        );
        let (snd, rcv) = buffers(&s);
        assert!(snd.unwrap() >= 4096 && rcv.unwrap() >= 4096);
        assert!(path_mtu(&s).unwrap() >= 1280);
        drop(l);
        let e = connect(&addr, &o, 2_000_000_000).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
    }

    #[test]
    fn cpus_outside_the_affinity_are_found() {
        assert_eq!(disallowed_cpu(&[0]), None);
        assert_eq!(disallowed_cpu(&[0, 100_000]), Some(100_000));
    }
}
