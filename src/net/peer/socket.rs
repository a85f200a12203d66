//! Plain sockets of every family a network job may name (IPv4/IPv6 TCP and UDP, unix
//! stream sockets, AF_VSOCK), opened from a [`NetEndpoint`]: bind and listen, accept
//! within a deadline, connect within a deadline, and the options (TCP_NODELAY,
//! TCP_MAXSEG, socket buffers, multicast TTL, interface and membership). Raw
//! descriptors through libc because std has no vsock, no SO_REUSEPORT before bind
//! and no IP_MULTICAST_IF. Every blocking call wakes every [`TICK`] so a job sees a
//! stop request.

use std::io;
use std::mem::size_of;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use crate::net::sockopt::set_int;
use crate::plan::net_endpoint::{NetEndpoint, NetProtocol};

/// How long a blocking call waits before it looks at the stop flag again.
pub const TICK: Duration = Duration::from_millis(100);

/// A socket address of any family, as the kernel takes it.
#[derive(Clone, Copy)]
pub struct Addr {
    storage: libc::sockaddr_storage,
    len: libc::socklen_t,
}

impl Addr {
    fn from_raw<T>(sa: &T) -> Addr {
        // SAFETY: sockaddr_storage is larger than every sockaddr type and all-zero is
        // a valid value of it; T is one of those plain C structs.
        let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        unsafe {
            std::ptr::copy_nonoverlapping(
                sa as *const T as *const u8,
                &mut storage as *mut _ as *mut u8,
                size_of::<T>(),
            )
        };
        Addr {
            storage,
            len: size_of::<T>() as libc::socklen_t,
        }
    }

    fn inet(a: SocketAddr) -> Addr {
        match a {
            SocketAddr::V4(v4) => {
                // SAFETY: all-zero is a valid sockaddr_in.
                let mut sin: libc::sockaddr_in = unsafe { std::mem::zeroed() };
                sin.sin_family = libc::AF_INET as libc::sa_family_t;
                sin.sin_port = v4.port().to_be();
                sin.sin_addr.s_addr = u32::from(*v4.ip()).to_be();
                Addr::from_raw(&sin)
            }
            SocketAddr::V6(v6) => {
                // SAFETY: all-zero is a valid sockaddr_in6.
                let mut sin6: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
                sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                sin6.sin6_port = v6.port().to_be();
                sin6.sin6_addr.s6_addr = v6.ip().octets();
                sin6.sin6_scope_id = v6.scope_id();
                Addr::from_raw(&sin6)
            }
        }
    }

    fn unix(path: &str) -> io::Result<Addr> {
        // SAFETY: all-zero is a valid sockaddr_un.
        let mut sun: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        let bytes = path.as_bytes();
        if bytes.len() >= sun.sun_path.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "unix socket path is longer than {} bytes",
                    sun.sun_path.len() - 1
                ),
            ));
        }
        sun.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (d, s) in sun.sun_path.iter_mut().zip(bytes) {
            *d = *s as libc::c_char;
        }
        Ok(Addr::from_raw(&sun))
    }

    fn vsock(cid: u32, port: u16) -> Addr {
        // SAFETY: all-zero is a valid sockaddr_vm.
        let mut svm: libc::sockaddr_vm = unsafe { std::mem::zeroed() };
        svm.svm_family = libc::AF_VSOCK as libc::sa_family_t;
        svm.svm_cid = cid;
        svm.svm_port = port as u32;
        Addr::from_raw(&svm)
    }

    fn ptr(&self) -> *const libc::sockaddr {
        &self.storage as *const _ as *const libc::sockaddr
    }

    fn empty() -> Addr {
        // SAFETY: all-zero is a valid sockaddr_storage.
        Addr {
            storage: unsafe { std::mem::zeroed() },
            len: size_of::<libc::sockaddr_storage>() as libc::socklen_t,
        }
    }
}

/// The address family and socket type of a protocol.
fn family(p: NetProtocol) -> (libc::c_int, libc::c_int) {
    match p {
        NetProtocol::Tcp => (libc::AF_INET, libc::SOCK_STREAM),
        NetProtocol::TcpV6 => (libc::AF_INET6, libc::SOCK_STREAM),
        NetProtocol::Udp => (libc::AF_INET, libc::SOCK_DGRAM),
        NetProtocol::UdpV6 => (libc::AF_INET6, libc::SOCK_DGRAM),
        NetProtocol::Unix => (libc::AF_UNIX, libc::SOCK_STREAM),
        NetProtocol::Vsock => (libc::AF_VSOCK, libc::SOCK_STREAM),
    }
}

/// The address an endpoint names (for a listener with no host: every address).
pub fn address(e: &NetEndpoint) -> io::Result<Addr> {
    match e.protocol {
        NetProtocol::Unix => Addr::unix(&e.host),
        NetProtocol::Vsock => {
            let cid = if e.host.is_empty() {
                libc::VMADDR_CID_ANY
            } else {
                e.host.parse::<u32>().map_err(|_| {
                    io::Error::new(io::ErrorKind::InvalidInput, "the CID is not a number")
                })?
            };
            Ok(Addr::vsock(cid, e.port))
        }
        p => {
            let v6 = p.is_ipv6();
            if e.host.is_empty() {
                let any: IpAddr = if v6 {
                    std::net::Ipv6Addr::UNSPECIFIED.into()
                } else {
                    std::net::Ipv4Addr::UNSPECIFIED.into()
                };
                return Ok(Addr::inet(SocketAddr::new(any, e.port)));
            }
            let found = (e.host.as_str(), e.port)
                .to_socket_addrs()?
                .find(|a| a.is_ipv6() == v6)
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::NotFound,
                        format!("'{}' has no IPv{} address", e.host, if v6 { 6 } else { 4 }),
                    )
                })?;
            Ok(Addr::inet(found))
        }
    }
}

/// One open socket; `peer` is where datagrams go (a UDP sender's destination, or
/// the source of the last datagram a receiver answers).
pub struct Sock {
    pub fd: OwnedFd,
    pub peer: Option<Addr>,
    pub datagram: bool,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn new_socket(p: NetProtocol) -> io::Result<OwnedFd> {
    let (domain, ty) = family(p);
    // SAFETY: plain socket(2) call; the descriptor is owned at once.
    let fd = cvt(unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: fd was just returned by socket(2) and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Options both ends set before connecting or binding.
fn common_options(fd: RawFd, e: &NetEndpoint) -> io::Result<()> {
    if let Some(w) = e.window_bytes {
        let w = w.min(i32::MAX as u32) as libc::c_int;
        set_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, w)?;
        set_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, w)?;
    }
    if e.protocol.is_tcp() {
        if let Some(m) = e.mss_bytes {
            set_int(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_MAXSEG,
                m.min(i32::MAX as u32) as libc::c_int,
            )?;
        }
        if e.nodelay {
            set_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)?;
        }
    }
    Ok(())
}

fn set_timeouts(fd: RawFd) -> io::Result<()> {
    let tv = libc::timeval {
        tv_sec: 0,
        tv_usec: TICK.as_micros() as libc::suseconds_t,
    };
    for opt in [libc::SO_RCVTIMEO, libc::SO_SNDTIMEO] {
        // SAFETY: tv outlives the call; the length is its size.
        cvt(unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                &tv as *const _ as *const libc::c_void,
                size_of::<libc::timeval>() as libc::socklen_t,
            )
        })?;
    }
    Ok(())
}

fn set_ip_opt<T>(fd: RawFd, opt: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: v outlives the call; the length is its size.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_IP,
            opt,
            v as *const T as *const libc::c_void,
            size_of::<T>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

fn in_addr(a: Option<std::net::Ipv4Addr>) -> libc::in_addr {
    libc::in_addr {
        s_addr: u32::from(a.unwrap_or(std::net::Ipv4Addr::UNSPECIFIED)).to_be(),
    }
}

/// Binds a listening end: a stream socket ready to accept, or a UDP socket ready to
/// receive (a member of the group when the host is a multicast address).
pub fn listen(e: &NetEndpoint) -> io::Result<Sock> {
    let fd = new_socket(e.protocol)?;
    let raw = fd.as_raw_fd();
    let mut addr = address(e)?;
    match e.protocol {
        NetProtocol::Unix => remove_stale_socket(&e.host)?,
        NetProtocol::Vsock => set_int(raw, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?,
        _ => {
            set_int(raw, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
            set_int(raw, libc::SOL_SOCKET, libc::SO_REUSEPORT, 1)?;
        }
    }
    common_options(raw, e)?;
    if e.is_multicast() {
        let group: std::net::Ipv4Addr = e.host.parse().map_err(io::Error::other)?;
        let mreq = libc::ip_mreq {
            imr_multiaddr: in_addr(Some(group)),
            imr_interface: in_addr(e.interface),
        };
        set_ip_opt(raw, libc::IP_ADD_MEMBERSHIP, &mreq)?;
        addr = Addr::inet(SocketAddr::new(group.into(), e.port));
    }
    // SAFETY: addr holds a valid address of len bytes.
    cvt(unsafe { libc::bind(raw, addr.ptr(), addr.len) })?;
    if !e.protocol.is_datagram() {
        // SAFETY: plain listen(2) on our socket.
        cvt(unsafe { libc::listen(raw, 8) })?;
    }
    set_timeouts(raw)?;
    Ok(Sock {
        fd,
        peer: None,
        datagram: e.protocol.is_datagram(),
    })
}

/// fio removes whatever is at a unix socket's path before binding; ioscope removes
/// only a socket left behind, never a file.
fn remove_stale_socket(path: &str) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_socket() => std::fs::remove_file(path),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("'{path}' exists and is not a socket"),
        )),
        Err(_) => Ok(()),
    }
}

/// Waits until `fd` is readable (or writable), at most one tick.
fn wait(fd: RawFd, events: libc::c_short) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut p, 1, TICK.as_millis() as libc::c_int) };
    match n {
        n if n > 0 => Ok(true),
        0 => Ok(false),
        _ => {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(e)
            }
        }
    }
}

/// Accepts one connection on a listening stream socket; `None` when `stop` said so
/// first.
pub fn accept(l: &Sock, e: &NetEndpoint, stop: &dyn Fn() -> bool) -> io::Result<Option<Sock>> {
    loop {
        if stop() {
            return Ok(None);
        }
        if !wait(l.fd.as_raw_fd(), libc::POLLIN)? {
            continue;
        }
        // SAFETY: accept4 on our listening socket; no address wanted.
        let fd = unsafe {
            libc::accept4(
                l.fd.as_raw_fd(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_CLOEXEC,
            )
        };
        if fd < 0 {
            let err = io::Error::last_os_error();
            if matches!(
                err.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ) {
                continue;
            }
            return Err(err);
        }
        // SAFETY: fd was just returned by accept4 and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        if e.nodelay && e.protocol.is_tcp() {
            set_int(fd.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)?;
        }
        set_timeouts(fd.as_raw_fd())?;
        return Ok(Some(Sock {
            fd,
            peer: None,
            datagram: false,
        }));
    }
}

/// Opens a sending end: a connected stream socket, or a UDP socket that sends to
/// the endpoint (with the multicast TTL and interface when it is a group).
pub fn connect(e: &NetEndpoint, timeout: Duration) -> io::Result<Sock> {
    let fd = new_socket(e.protocol)?;
    let raw = fd.as_raw_fd();
    let addr = address(e)?;
    common_options(raw, e)?;
    if e.protocol.is_datagram() {
        if e.is_multicast() {
            if e.interface.is_some() {
                set_ip_opt(raw, libc::IP_MULTICAST_IF, &in_addr(e.interface))?;
            }
            set_ip_opt(raw, libc::IP_MULTICAST_TTL, &(e.ttl as libc::c_int))?;
        }
        set_timeouts(raw)?;
        return Ok(Sock {
            fd,
            peer: Some(addr),
            datagram: true,
        });
    }
    connect_within(raw, &addr, timeout)?;
    set_timeouts(raw)?;
    Ok(Sock {
        fd,
        peer: None,
        datagram: false,
    })
}

fn connect_within(fd: RawFd, addr: &Addr, timeout: Duration) -> io::Result<()> {
    // SAFETY: fcntl on our own descriptor.
    let flags = cvt(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    cvt(unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) })?;
    // SAFETY: addr holds a valid address of len bytes.
    let r = unsafe { libc::connect(fd, addr.ptr(), addr.len) };
    if r < 0 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(err);
        }
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if wait(fd, libc::POLLOUT)? {
                break;
            }
            if std::time::Instant::now() >= deadline {
                return Err(io::Error::from_raw_os_error(libc::ETIMEDOUT));
            }
        }
        let so_err = crate::net::sockopt::get_int(fd, libc::SOL_SOCKET, libc::SO_ERROR)?;
        if so_err != 0 {
            return Err(io::Error::from_raw_os_error(so_err));
        }
    }
    // SAFETY: as above.
    cvt(unsafe { libc::fcntl(fd, libc::F_SETFL, flags) })?;
    Ok(())
}

/// What one receive call got.
pub enum Got {
    Bytes(usize),
    /// The tick passed with nothing to read.
    Nothing,
    /// The peer closed the connection.
    Eof,
}

impl Sock {
    /// Sends `buf` once (datagram) or part of it (stream); `Ok(0)` when the tick
    /// passed with no room.
    pub fn send(&self, buf: &[u8]) -> io::Result<usize> {
        let fd = self.fd.as_raw_fd();
        // SAFETY: buf is valid for its length; peer holds a valid address.
        let n = unsafe {
            match &self.peer {
                Some(a) => libc::sendto(
                    fd,
                    buf.as_ptr() as *const libc::c_void,
                    buf.len(),
                    libc::MSG_NOSIGNAL,
                    a.ptr(),
                    a.len,
                ),
                None => libc::send(
                    fd,
                    buf.as_ptr() as *const libc::c_void,
                    buf.len(),
                    libc::MSG_NOSIGNAL,
                ),
            }
        };
        if n < 0 {
            let err = io::Error::last_os_error();
            return match err.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(err),
            };
        }
        Ok(n as usize)
    }

    /// Receives into `buf`; a datagram receiver remembers the sender as `peer` when
    /// `remember` (to answer it).
    pub fn recv(&mut self, buf: &mut [u8], remember: bool) -> io::Result<Got> {
        let fd = self.fd.as_raw_fd();
        let mut from = Addr::empty();
        // SAFETY: buf is valid for its length; from has room for any address.
        let n = unsafe {
            libc::recvfrom(
                fd,
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
                0,
                &mut from.storage as *mut _ as *mut libc::sockaddr,
                &mut from.len,
            )
        };
        if n < 0 {
            let err = io::Error::last_os_error();
            return match err.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(Got::Nothing),
                _ => Err(err),
            };
        }
        if n == 0 && !self.datagram && !buf.is_empty() {
            return Ok(Got::Eof);
        }
        if remember {
            self.peer = Some(from);
        }
        Ok(Got::Bytes(n as usize))
    }

    /// Half-closes a stream socket so the receiver sees the end.
    pub fn shutdown_write(&self) {
        // SAFETY: shutdown(2) on our own socket; failure is harmless here.
        unsafe { libc::shutdown(self.fd.as_raw_fd(), libc::SHUT_WR) };
    }
}
