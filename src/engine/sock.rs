//! The socket layer ioscope's own protocol clients (NBD, iSCSI) share below their
//! protocols: a non-blocking connect that tries each of a server's addresses in
//! turn, a receive buffer filled by one `recv` at a time, a send queue of framed
//! messages (a header, the request's own data, padding) that leaves in as few
//! `sendmsg` calls as the socket takes, and the blocking wait for a set-up to finish
//! within the start-up deadline.

use socket2::{SockAddr, Socket, Type};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::net::ToSocketAddrs;
use std::os::fd::AsRawFd;

/// The longest frame header (an iSCSI basic header segment).
pub const HEAD_MAX: usize = 48;
/// Frames per `sendmsg` (three iovecs each, under `IOV_MAX`).
const BATCH: usize = 340;
/// Zeros for padding.
static ZEROS: [u8; 8] = [0; 8];

pub fn os_err(what: &str, e: std::io::Error) -> String {
    format!("{what}: {e}")
}

/// The addresses of `server` ("host:port", or "unix:PATH" for a socket file), each
/// to be tried in turn (`localhost` may resolve to ::1 first for a server on
/// 127.0.0.1); `None` when it does not resolve now.
pub fn resolve(server: &str) -> Option<Vec<SockAddr>> {
    let addrs: Vec<SockAddr> = match server.strip_prefix("unix:") {
        Some(path) => vec![SockAddr::unix(path).ok()?],
        None => (server.to_socket_addrs().ok()?)
            .map(SockAddr::from)
            .collect(),
    };
    (!addrs.is_empty()).then_some(addrs)
}

/// A connection being made to one of a server's addresses.
pub struct Dial {
    pub sock: Socket,
    /// The index of the address `sock` is for.
    pub at: usize,
    /// False while the connect is under way.
    pub connected: bool,
}

impl Dial {
    /// Starts a non-blocking connect to `addrs[from]`, else the next address that
    /// does not fail at once.
    pub fn start(addrs: &[SockAddr], from: usize) -> Result<Dial, String> {
        let mut last = String::from("no address");
        for (at, addr) in addrs.iter().enumerate().skip(from) {
            let sock =
                Socket::new(addr.domain(), Type::STREAM, None).map_err(|e| os_err("socket", e))?;
            sock.set_nonblocking(true)
                .map_err(|e| os_err("socket", e))?;
            if !addr.is_unix() {
                // Requests are batched by the engine; Nagle would only delay them.
                sock.set_tcp_nodelay(true)
                    .map_err(|e| os_err("socket", e))?;
            }
            match sock.connect(addr) {
                Ok(()) => {
                    return Ok(Dial {
                        sock,
                        at,
                        connected: true,
                    })
                }
                Err(e)
                    if e.raw_os_error() == Some(libc::EINPROGRESS)
                        || e.kind() == std::io::ErrorKind::WouldBlock =>
                {
                    return Ok(Dial {
                        sock,
                        at,
                        connected: false,
                    })
                }
                Err(e) => last = os_err("connect", e),
            }
        }
        Err(last)
    }

    /// Acts on poll's `revents` for a connect under way: connected, or on to the
    /// next address (a socket of its own) when this one refused; `Err` when none
    /// is left.
    pub fn advance(&mut self, addrs: &[SockAddr], revents: i16) -> Result<(), String> {
        if let Some(e) = self.sock.take_error().map_err(|e| os_err("connect", e))? {
            if self.at + 1 >= addrs.len() {
                return Err(os_err("connect", e));
            }
            *self = Dial::start(addrs, self.at + 1)?;
            return Ok(());
        }
        if revents & (libc::POLLOUT | libc::POLLERR | libc::POLLHUP) != 0 {
            self.connected = true;
        }
        Ok(())
    }

    pub fn fd(&self) -> i32 {
        self.sock.as_raw_fd()
    }
}

/// What one `recv` or `send` did.
pub enum Moved {
    Bytes(usize),
    /// Nothing now (EAGAIN).
    Later,
}

pub fn moved(rc: isize, what: &str) -> Result<Moved, String> {
    if rc >= 0 {
        return Ok(Moved::Bytes(rc as usize));
    }
    let e = std::io::Error::last_os_error();
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted => Ok(Moved::Later),
        _ => Err(os_err(what, e)),
    }
}

/// Sends what of `bytes` the socket takes now: the count sent.
pub fn send_some(fd: i32, bytes: &[u8]) -> Result<usize, String> {
    // SAFETY: a live buffer of `bytes.len()` bytes.
    let rc = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
    Ok(match moved(rc, "send")? {
        Moved::Bytes(n) => n,
        Moved::Later => 0,
    })
}

/// Receives into `len` bytes at `at`.
///
/// # Safety
/// `at` is valid for `len` bytes of writes.
pub unsafe fn recv_into(fd: i32, at: *mut u8, len: usize) -> Result<Moved, String> {
    // SAFETY: the caller's promise.
    moved(unsafe { libc::recv(fd, at.cast(), len, 0) }, "recv")
}

/// A read's data of at least this many bytes still to come is received straight
/// into the read's buffer rather than through the receive buffer (one copy less).
pub const DIRECT_BYTES: usize = 32 * 1024;

/// What a client's receive loop ([`receive`]) asks of its protocol.
///
/// # Safety
/// The pointer [`Receive::direct`] returns is valid for writes of the length it
/// gives, until [`Receive::landed`] is called.
pub unsafe trait Receive: Link {
    /// Consumes the whole messages (and the data arriving) the buffer holds.
    fn parse(&mut self) -> Result<(), String>;
    /// A read whose data is still to come: where the rest goes and how much of it
    /// there is ([`receive`] takes it straight there from [`DIRECT_BYTES`] on).
    fn direct(&self) -> Option<(*mut u8, usize)>;
    /// `n` bytes arrived where [`Receive::direct`] said.
    fn landed(&mut self, n: usize);
}

/// Receives and parses until the socket is drained (a receive shorter than the
/// room it had, or nothing there); `peer` names the other side in the error when
/// it closed the connection.
#[inline]
pub fn receive<R: Receive>(r: &mut R, peer: &str) -> Result<(), String> {
    loop {
        r.parse()?;
        let direct = r.direct().filter(|&(_, left)| left >= DIRECT_BYTES);
        let w = r.wire_mut();
        let (rx, fd) = (&mut w.rx, w.dial.fd());
        let (n, space) = match direct {
            Some((at, left)) if rx.is_empty() => {
                // SAFETY: `direct`'s promise (the trait's contract).
                let m = unsafe { recv_into(fd, at, left) }?;
                if let Moved::Bytes(n) = m {
                    r.landed(n);
                }
                (m, left)
            }
            _ => {
                let space = rx.room();
                (rx.fill(fd)?, space)
            }
        };
        match n {
            Moved::Later => return Ok(()),
            Moved::Bytes(0) => return Err(format!("the {peer} closed the connection")),
            // A short receive drained the socket: poll says when there is more.
            Moved::Bytes(n) if n < space => return r.parse(),
            Moved::Bytes(_) => {}
        }
    }
}

/// Received bytes not yet consumed: `buf[lo..hi]`.
pub struct Rx {
    buf: Box<[u8]>,
    lo: usize,
    hi: usize,
}

impl Rx {
    pub fn with_capacity(bytes: usize) -> Rx {
        Rx {
            buf: vec![0; bytes].into_boxed_slice(),
            lo: 0,
            hi: 0,
        }
    }

    /// The bytes held.
    pub fn held(&self) -> &[u8] {
        &self.buf[self.lo..self.hi]
    }

    /// Consumes `n` held bytes.
    pub fn take(&mut self, n: usize) {
        debug_assert!(n <= self.hi - self.lo);
        self.lo += n;
    }

    pub fn is_empty(&self) -> bool {
        self.lo == self.hi
    }

    /// Room for one receive: the buffer less what it holds.
    pub fn room(&self) -> usize {
        self.buf.len() - (self.hi - self.lo)
    }

    /// Receives after what it holds (moved to the front first).
    pub fn fill(&mut self, fd: i32) -> Result<Moved, String> {
        if self.lo > 0 {
            self.buf.copy_within(self.lo..self.hi, 0);
            self.hi -= self.lo;
            self.lo = 0;
        }
        let space = &mut self.buf[self.hi..];
        // SAFETY: a live buffer of `space.len()` bytes.
        let m = unsafe { recv_into(fd, space.as_mut_ptr(), space.len()) }?;
        if let Moved::Bytes(n) = m {
            self.hi += n;
        }
        Ok(m)
    }
}

/// One message to send: a header, then `data_len` bytes at `data` (a request's
/// buffer, which the submitter keeps valid until the request is reported), then
/// `pad` zeros.
#[derive(Clone, Copy)]
pub struct Frame {
    head: [u8; HEAD_MAX],
    head_len: u8,
    pad: u8,
    data_len: u32,
    data: *const u8,
}

impl Frame {
    pub fn new(head: &[u8], data: *const u8, data_len: u32, pad: u8) -> Frame {
        let mut h = [0; HEAD_MAX];
        h[..head.len()].copy_from_slice(head);
        Frame {
            head: h,
            head_len: head.len() as u8,
            pad,
            data_len,
            data,
        }
    }

    fn bytes(&self) -> usize {
        self.head_len as usize + self.data_len as usize + self.pad as usize
    }
}

/// Frames queued and not yet wholly sent; `head_sent` bytes of the first are on
/// the wire.
#[derive(Default)]
pub struct Tx {
    frames: VecDeque<Frame>,
    head_sent: usize,
    iov: Vec<libc::iovec>,
}

impl Tx {
    pub fn push(&mut self, f: Frame) {
        self.frames.push_back(f);
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Part of a frame is on the wire (a goodbye now would break the stream).
    pub fn is_half_sent(&self) -> bool {
        self.head_sent > 0
    }

    /// Sends the queue in as few `sendmsg` calls as the socket allows.
    pub fn send(&mut self, fd: i32) -> Result<(), String> {
        while !self.frames.is_empty() {
            self.iov.clear();
            let mut skip = self.head_sent;
            let mut total = 0;
            for f in self.frames.iter().take(BATCH) {
                for (p, n) in [
                    (f.head.as_ptr(), f.head_len as usize),
                    (f.data, f.data_len as usize),
                    (ZEROS.as_ptr(), f.pad as usize),
                ] {
                    let k = skip.min(n);
                    skip -= k;
                    if n > k {
                        self.iov.push(libc::iovec {
                            // SAFETY: within the header, the request's buffer or ZEROS.
                            iov_base: unsafe { p.add(k) }.cast_mut().cast(),
                            iov_len: n - k,
                        });
                        total += n - k;
                    }
                }
            }
            // SAFETY: all-zero is a valid msghdr; the iovecs point at the queue's
            // headers, live request buffers and ZEROS.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_iov = self.iov.as_mut_ptr();
            msg.msg_iovlen = self.iov.len();
            // SAFETY: msg and what it points at are live for the call.
            let rc = unsafe { libc::sendmsg(fd, &msg, libc::MSG_NOSIGNAL) };
            let Moved::Bytes(n) = moved(rc, "send")? else {
                return Ok(());
            };
            self.sent(n);
            if n < total {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Retires `n` bytes from the front of the queue.
    fn sent(&mut self, mut n: usize) {
        while let Some(f) = self.frames.front() {
            let left = f.bytes() - self.head_sent;
            if n < left {
                self.head_sent += n;
                return;
            }
            n -= left;
            self.head_sent = 0;
            self.frames.pop_front();
        }
    }
}

/// Where a connection of an own client stands; `S`: the protocol's set-up stage
/// (handshake, login).
pub enum Phase<S> {
    /// The TCP (or unix) connect is under way.
    Connecting,
    SettingUp(S),
    Ready,
    Dead(String),
}

/// What every own client's connection holds below its protocol: the socket (and
/// the addresses it may move on to), where it stands, the set-up bytes still to
/// send, the receive buffer and the send queue.
pub struct Wire<S> {
    pub dial: Dial,
    addrs: Vec<SockAddr>,
    pub phase: Phase<S>,
    /// Set-up bytes to send, from `out_sent`.
    pub out: Vec<u8>,
    out_sent: usize,
    pub rx: Rx,
    pub tx: Tx,
}

impl<S> Wire<S> {
    /// Starts dialling `addrs` without blocking; `rx_bytes`: what one `recv` may
    /// take. The protocol starts its set-up once `dial.connected` (it may be at once).
    pub fn start(addrs: &[SockAddr], rx_bytes: usize) -> Result<Wire<S>, String> {
        Ok(Wire {
            dial: Dial::start(addrs, 0)?,
            addrs: addrs.to_vec(),
            phase: Phase::Connecting,
            out: Vec::new(),
            out_sent: 0,
            rx: Rx::with_capacity(rx_bytes),
            tx: Tx::default(),
        })
    }

    pub fn fd(&self) -> i32 {
        self.dial.fd()
    }

    /// Moves a connect under way along (`revents` from poll): true once connected.
    pub fn connecting(&mut self, revents: i16) -> Result<bool, String> {
        self.dial.advance(&self.addrs, revents)?;
        Ok(self.dial.connected)
    }

    /// Sends what of the set-up bytes the socket takes now.
    pub fn send_out(&mut self) -> Result<(), String> {
        while self.out_sent < self.out.len() {
            match send_some(self.fd(), &self.out[self.out_sent..])? {
                0 => break,
                n => self.out_sent += n,
            }
        }
        Ok(())
    }

    /// The poll(2) events it waits for now.
    fn events(&self) -> i16 {
        let sending = self.out_sent < self.out.len() || !self.tx.is_empty();
        match &self.phase {
            Phase::Connecting => libc::POLLOUT,
            Phase::Dead(_) => 0,
            _ if sending => libc::POLLIN | libc::POLLOUT,
            _ => libc::POLLIN,
        }
    }
}

/// A protocol's connection as the shared [`Client`] shell drives it.
pub trait Link {
    /// The protocol's set-up stages.
    type Stage;
    fn wire(&self) -> &Wire<Self::Stage>;
    fn wire_mut(&mut self) -> &mut Wire<Self::Stage>;
    /// Acts on what poll(2) reported.
    fn service(&mut self, revents: i16) -> Result<(), String>;
    /// Sends what is queued, as far as the socket takes it.
    fn flush(&mut self) -> Result<(), String> {
        let w = self.wire_mut();
        w.tx.send(w.dial.fd())
    }
}

/// One connection of an own client (`L`: the protocol's state), shared by
/// reference with the driver: a failure kills it, and its message is kept for
/// every later call.
pub struct Client<L>(RefCell<L>);

impl<L: Link> Client<L> {
    pub fn new(link: L) -> Client<L> {
        Client(RefCell::new(link))
    }

    pub fn is_ready(&self) -> bool {
        matches!(self.0.borrow().wire().phase, Phase::Ready)
    }

    /// Why the connection died, once it has.
    pub fn error(&self) -> Option<String> {
        match &self.0.borrow().wire().phase {
            Phase::Dead(e) => Some(e.clone()),
            _ => None,
        }
    }

    pub fn fd(&self) -> i32 {
        self.0.borrow().wire().fd()
    }

    /// The events the socket waits for now (none once dead).
    pub fn events(&self) -> i16 {
        self.0.borrow().wire().events()
    }

    /// Acts on what poll(2) reported; `Err` (kept: [`Client::error`]) when the
    /// connection failed.
    pub fn service(&self, revents: i16) -> Result<(), String> {
        self.or_dead(|l| l.service(revents))
    }

    /// Sends what is queued, as far as the socket takes it.
    pub fn flush(&self) -> Result<(), String> {
        self.or_dead(L::flush)
    }

    /// Runs `f` on a connection that is ready; `what` names the connection in the
    /// error when it is still being set up.
    pub fn when_ready<T>(
        &self,
        what: &str,
        f: impl FnOnce(&mut L) -> Result<T, String>,
    ) -> Result<T, String> {
        let mut g = self.0.borrow_mut();
        match &g.wire().phase {
            Phase::Ready => f(&mut g),
            Phase::Dead(e) => Err(e.clone()),
            _ => Err(format!("the {what} is not set up")),
        }
    }

    /// Runs `f` on the connection; a failure kills it, its message kept.
    fn or_dead(&self, f: impl FnOnce(&mut L) -> Result<(), String>) -> Result<(), String> {
        let mut g = self.0.borrow_mut();
        if let Phase::Dead(e) = &g.wire().phase {
            return Err(e.clone());
        }
        let r = f(&mut g);
        if let Err(e) = &r {
            g.wire_mut().phase = Phase::Dead(e.clone());
        }
        r
    }
}

impl<L: Link> SetUp for Client<L> {
    fn pollfd(&self) -> libc::pollfd {
        super::wait::pollfd(self.fd(), self.events())
    }
    fn service(&self, revents: i16) -> Result<(), String> {
        Client::service(self, revents)
    }
    fn is_ready(&self) -> bool {
        Client::is_ready(self)
    }
    fn error(&self) -> Option<String> {
        Client::error(self)
    }
}

/// A client being set up without blocking, as [`ready_within`] drives it.
pub trait SetUp {
    fn pollfd(&self) -> libc::pollfd;
    /// Acts on what poll(2) reported; a failure is kept for [`SetUp::error`].
    fn service(&self, revents: i16) -> Result<(), String>;
    fn is_ready(&self) -> bool;
    fn error(&self) -> Option<String>;
}

/// Drives `c` until it is ready, within `limit_ns` (0: no limit); `what` names
/// the set-up in the time-out's message ("handshake").
pub fn ready_within<C: SetUp>(c: C, limit_ns: u64, what: &str) -> Result<C, String> {
    let deadline = match limit_ns {
        0 => u64::MAX,
        l => crate::clock::now_ns().saturating_add(l),
    };
    loop {
        if c.is_ready() {
            return Ok(c);
        }
        if let Some(e) = c.error() {
            return Err(e);
        }
        let now = crate::clock::now_ns();
        if now >= deadline {
            return Err(format!(
                "no {what} within {} ms",
                limit_ns.div_ceil(1_000_000)
            ));
        }
        let mut fd = [c.pollfd()];
        super::wait::poll_until(&mut fd, deadline - now).map_err(|e| os_err("poll", e))?;
        if fd[0].revents != 0 {
            // A failure is kept and returned above.
            let _ = c.service(fd[0].revents);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Frames leave whole and in order across short sends: the queue resumes in the
    // middle of a header, of the data and of the padding.
    #[test]
    fn frames_leave_in_order_with_their_data_and_padding() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let data = *b"abcdef";
        let mut tx = Tx::default();
        tx.push(Frame::new(&[1, 2, 3], data.as_ptr(), 6, 2));
        tx.push(Frame::new(&[9; 48], std::ptr::null(), 0, 0));
        tx.sent(4);
        assert!(tx.is_half_sent());
        tx.send(a.as_raw_fd()).unwrap();
        assert!(tx.is_empty());
        let mut got = vec![0u8; 7 + 48];
        use std::io::Read;
        (&b).read_exact(&mut got).unwrap();
        assert_eq!(&got[..7], b"bcdef\0\0", "the rest of the first frame");
        assert_eq!(&got[7..], &[9; 48]);
    }

    #[test]
    fn servers_resolve_to_addresses() {
        assert!(resolve("127.0.0.1:10900").unwrap()[0].as_socket().is_some());
        assert!(resolve("unix:/tmp/s.sock").unwrap()[0].is_unix());
    }
}
