//! The NBD engine's own client for the data path: one non-blocking socket, the
//! handshake of [`super::handshake`], then simple requests and replies. What it buys
//! over libnbd is system calls: the requests a worker queues in one turn leave in
//! one `sendmsg`, and one `recv` takes every reply that has arrived (a read's data
//! is copied out of it; a large read's data is received straight into its buffer),
//! where libnbd sends each request and reads each reply with calls of its own.
//!
//! Requests are numbered by the slot [`super::Inflight`] gave them: the cookie is
//! the slot, so a reply finds its request without a map, and it is reported to the
//! slot's list exactly as libnbd's callback reports. Used for the default simple
//! replies; libnbd serves structured replies (`nbd_structured_replies`).

use super::handshake::Handshake;
use crate::plan::model::Op;
use crate::target::nbd::ffi::{DoneList, Ticket};
use socket2::{SockAddr, Socket, Type};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::net::ToSocketAddrs;
use std::os::fd::AsRawFd;

const REQUEST_MAGIC: u32 = 0x2560_9513;
const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
const REQUEST_BYTES: usize = 28;
const REPLY_BYTES: usize = 16;
const CMD_READ: u16 = 0;
const CMD_WRITE: u16 = 1;
const CMD_DISC: u16 = 2;
const CMD_TRIM: u16 = 4;
/// What one `recv` may take: a deep queue's worth of 4 KiB replies.
const RX_BYTES: usize = 256 * 1024;
/// A read whose data still to come is at least this long, with nothing buffered,
/// is received straight into its own buffer rather than copied through ours.
const DIRECT_BYTES: usize = 32 * 1024;
/// Requests per `sendmsg` (two iovecs each, under `IOV_MAX`).
const BATCH: usize = 512;

/// Where an export is: the server's addresses (each tried in turn, as libnbd
/// does: `localhost` may resolve to ::1 first for a server on 127.0.0.1) and the
/// export's name.
#[derive(Debug, Clone)]
pub struct Dest {
    addrs: Vec<SockAddr>,
    export: Vec<u8>,
}

impl Dest {
    /// The destination of an `nbd://` or `nbd+unix://` URI; `None` for one this
    /// client leaves to libnbd (a percent-encoded export name, a host that does not
    /// resolve now).
    pub fn of(uri: &str) -> Option<Dest> {
        let spec = crate::target::nbd::parse(uri).ok()?;
        if spec.export.contains('%') {
            return None;
        }
        let addrs: Vec<SockAddr> = match spec.server.strip_prefix("unix:") {
            Some(path) => vec![SockAddr::unix(path).ok()?],
            None => (spec.server.to_socket_addrs().ok()?)
                .map(SockAddr::from)
                .collect(),
        };
        if addrs.is_empty() {
            return None;
        }
        Some(Dest {
            addrs,
            export: spec.export.into_bytes(),
        })
    }
}

/// One request the connection carries, in the slot its cookie names.
#[derive(Clone, Copy)]
struct Slot {
    op: Op,
    buf: *mut u8,
    len: u32,
    header: [u8; REQUEST_BYTES],
    busy: bool,
}

const FREE: Slot = Slot {
    op: Op::Read,
    buf: std::ptr::null_mut(),
    len: 0,
    header: [0; REQUEST_BYTES],
    busy: false,
};

/// Where the connection stands.
enum Phase {
    /// The TCP (or unix) connect is under way.
    Connecting,
    Handshake(Handshake),
    Ready,
    Dead(String),
}

struct Inner {
    sock: Socket,
    phase: Phase,
    /// The server's addresses and the one `sock` is for.
    addrs: Vec<SockAddr>,
    at: usize,
    export: Vec<u8>,
    /// Handshake bytes still to send, from `hs_sent`.
    hs_out: Vec<u8>,
    hs_sent: usize,
    /// Received bytes not yet consumed: `rx[lo..hi]`.
    rx: Box<[u8]>,
    lo: usize,
    hi: usize,
    slots: Vec<Slot>,
    /// Requests queued and not yet wholly sent; `head_sent` bytes of the first
    /// are on the wire.
    queue: VecDeque<u32>,
    head_sent: usize,
    /// The read whose data is arriving: (slot, bytes so far).
    reading: Option<(u32, usize)>,
    /// Where finished requests are reported (the link's `Inflight`).
    done: *const DoneList,
    iov: Vec<libc::iovec>,
}

/// One connection to an NBD server.
pub struct Conn(RefCell<Inner>);

// SAFETY: the raw pointers (request buffers, the done list) point at memory the
// engine owns and keeps valid while the request is in flight; the connection is
// used only by the thread that owns the engine, and moves with it.
unsafe impl Send for Conn {}

fn os_err(what: &str, e: std::io::Error) -> String {
    format!("{what}: {e}")
}

impl Conn {
    /// Starts connecting to `d` without blocking; drive it with
    /// [`Conn::pollfd`]/[`Conn::service`] until [`Conn::is_ready`].
    pub fn start(d: &Dest) -> Result<Conn, String> {
        let (sock, phase, at) = dial(&d.addrs, 0)?;
        Ok(Conn(RefCell::new(Inner {
            sock,
            phase,
            addrs: d.addrs.clone(),
            at,
            export: d.export.clone(),
            hs_out: Vec::new(),
            hs_sent: 0,
            rx: vec![0; RX_BYTES].into_boxed_slice(),
            lo: 0,
            hi: 0,
            slots: Vec::new(),
            queue: VecDeque::new(),
            head_sent: 0,
            reading: None,
            done: std::ptr::null(),
            iov: Vec::with_capacity(2 * BATCH),
        })))
    }

    /// Connects and completes the handshake, within `limit_ns` (0: no limit).
    pub fn connect(d: &Dest, limit_ns: u64) -> Result<Conn, String> {
        let c = Conn::start(d)?;
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
                    "no handshake within {} ms",
                    limit_ns.div_ceil(1_000_000)
                ));
            }
            let mut fd = [c.pollfd()];
            super::super::wait::poll_until(&mut fd, deadline - now)
                .map_err(|e| os_err("poll", e))?;
            if fd[0].revents != 0 {
                // A failure is kept in the phase and returned above.
                let _ = c.service(fd[0].revents);
            }
        }
    }

    pub fn is_ready(&self) -> bool {
        matches!(self.0.borrow().phase, Phase::Ready)
    }

    /// Why the connection died, once it has.
    pub fn error(&self) -> Option<String> {
        match &self.0.borrow().phase {
            Phase::Dead(e) => Some(e.clone()),
            _ => None,
        }
    }

    /// The socket and the events it waits for now.
    pub fn pollfd(&self) -> libc::pollfd {
        let g = self.0.borrow();
        let events = match &g.phase {
            Phase::Connecting => libc::POLLOUT,
            Phase::Handshake(_) if g.hs_sent < g.hs_out.len() => libc::POLLIN | libc::POLLOUT,
            Phase::Ready if !g.queue.is_empty() => libc::POLLIN | libc::POLLOUT,
            Phase::Dead(_) => 0,
            _ => libc::POLLIN,
        };
        super::super::wait::pollfd(g.sock.as_raw_fd(), events)
    }

    /// Acts on what poll(2) reported; `Err` (kept: [`Conn::error`]) when the
    /// connection failed.
    pub fn service(&self, revents: i16) -> Result<(), String> {
        self.or_dead(|g| g.service(revents))
    }

    /// Sends what is queued, as far as the socket takes it.
    pub fn flush(&self) -> Result<(), String> {
        self.or_dead(Inner::send_queued)
    }

    /// Runs `f` on the connection; a failure kills it, its message kept.
    fn or_dead(&self, f: impl FnOnce(&mut Inner) -> Result<(), String>) -> Result<(), String> {
        let mut g = self.0.borrow_mut();
        let r = f(&mut g);
        if let Err(e) = &r {
            g.phase = Phase::Dead(e.clone());
        }
        r
    }

    /// Queues `op` of `len` bytes at `offset` for the slot `ticket` names; it leaves
    /// at the next [`Conn::flush`] (or when poll finds the socket writable).
    ///
    /// # Safety
    /// `buf` stays valid and untouched until the ticket's list reports the request,
    /// or the connection is dropped.
    pub unsafe fn submit(
        &self,
        op: Op,
        buf: *mut u8,
        len: u32,
        offset: u64,
        ticket: &Ticket,
    ) -> Result<(), String> {
        let mut g = self.0.borrow_mut();
        match &g.phase {
            Phase::Ready => {}
            Phase::Dead(e) => return Err(e.clone()),
            _ => return Err("the connection is not set up".into()),
        }
        let (done, slot) = ticket.parts();
        g.done = done;
        let ty = match op {
            Op::Read => CMD_READ,
            Op::Write => CMD_WRITE,
            Op::Trim => CMD_TRIM,
        };
        if g.slots.len() <= slot as usize {
            g.slots.resize(slot as usize + 1, FREE);
        }
        let s = &mut g.slots[slot as usize];
        *s = Slot {
            op,
            buf,
            len,
            header: request(ty, slot as u64, offset, len),
            busy: true,
        };
        g.queue.push_back(slot);
        Ok(())
    }
}

/// Starts a non-blocking connect to `addrs[from]`, else the next address that does
/// not fail at once: the socket, its phase and its address's index.
fn dial(addrs: &[SockAddr], from: usize) -> Result<(Socket, Phase, usize), String> {
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
            Ok(()) => return Ok((sock, Phase::Handshake(Handshake::Greeting), at)),
            Err(e)
                if e.raw_os_error() == Some(libc::EINPROGRESS)
                    || e.kind() == std::io::ErrorKind::WouldBlock =>
            {
                return Ok((sock, Phase::Connecting, at))
            }
            Err(e) => last = os_err("connect", e),
        }
    }
    Err(last)
}

/// One request's header.
fn request(ty: u16, cookie: u64, offset: u64, len: u32) -> [u8; REQUEST_BYTES] {
    let mut h = [0u8; REQUEST_BYTES];
    h[0..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
    h[6..8].copy_from_slice(&ty.to_be_bytes());
    h[8..16].copy_from_slice(&cookie.to_be_bytes());
    h[16..24].copy_from_slice(&offset.to_be_bytes());
    h[24..28].copy_from_slice(&len.to_be_bytes());
    h
}

/// The errno an NBD error value stands for: the protocol's values are Linux's
/// numbers; one it does not define is EINVAL, as the protocol asks.
fn errno(nbd: u32) -> i32 {
    match nbd as i32 {
        e @ (libc::EPERM
        | libc::EIO
        | libc::ENOMEM
        | libc::EINVAL
        | libc::ENOSPC
        | libc::EOVERFLOW
        | libc::EOPNOTSUPP
        | libc::ESHUTDOWN) => e,
        _ => libc::EINVAL,
    }
}

/// What one `recv` or `sendmsg` did.
enum Moved {
    Bytes(usize),
    /// Nothing now (EAGAIN).
    Later,
}

fn moved(rc: isize, what: &str) -> Result<Moved, String> {
    if rc >= 0 {
        return Ok(Moved::Bytes(rc as usize));
    }
    let e = std::io::Error::last_os_error();
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted => Ok(Moved::Later),
        _ => Err(os_err(what, e)),
    }
}

impl Inner {
    fn fd(&self) -> i32 {
        self.sock.as_raw_fd()
    }

    fn service(&mut self, revents: i16) -> Result<(), String> {
        match self.phase {
            Phase::Connecting => {
                if let Some(e) = self.sock.take_error().map_err(|e| os_err("connect", e))? {
                    if self.at + 1 >= self.addrs.len() {
                        return Err(os_err("connect", e));
                    }
                    // The next address, on a socket of its own.
                    (self.sock, self.phase, self.at) = dial(&self.addrs, self.at + 1)?;
                    return Ok(());
                }
                if revents & (libc::POLLOUT | libc::POLLERR | libc::POLLHUP) != 0 {
                    self.phase = Phase::Handshake(Handshake::Greeting);
                }
                Ok(())
            }
            Phase::Handshake(h) => self.handshake(h, revents),
            Phase::Ready => {
                if revents & libc::POLLOUT != 0 {
                    self.send_queued()?;
                }
                if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                    self.receive()?;
                }
                Ok(())
            }
            Phase::Dead(ref e) => Err(e.clone()),
        }
    }

    fn handshake(&mut self, mut h: Handshake, revents: i16) -> Result<(), String> {
        if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
            if let Moved::Bytes(0) = self.fill()? {
                return Err("the server closed the connection during the handshake".into());
            }
            let used = h.step(&self.rx[self.lo..self.hi], &self.export, &mut self.hs_out)?;
            self.lo += used;
            self.phase = match h {
                Handshake::Done => Phase::Ready,
                h => Phase::Handshake(h),
            };
        }
        while self.hs_sent < self.hs_out.len() {
            let rest = &self.hs_out[self.hs_sent..];
            // SAFETY: a live buffer of `rest.len()` bytes.
            let rc = unsafe {
                libc::send(
                    self.fd(),
                    rest.as_ptr().cast(),
                    rest.len(),
                    libc::MSG_NOSIGNAL,
                )
            };
            match moved(rc, "send")? {
                Moved::Bytes(n) => self.hs_sent += n,
                Moved::Later => break,
            }
        }
        Ok(())
    }

    /// Receives into `rx` after what it holds (moved to the front first).
    fn fill(&mut self) -> Result<Moved, String> {
        if self.lo > 0 {
            self.rx.copy_within(self.lo..self.hi, 0);
            self.hi -= self.lo;
            self.lo = 0;
        }
        let fd = self.fd();
        let space = &mut self.rx[self.hi..];
        // SAFETY: a live buffer of `space.len()` bytes.
        let rc = unsafe { libc::recv(fd, space.as_mut_ptr().cast(), space.len(), 0) };
        let m = moved(rc, "recv")?;
        if let Moved::Bytes(n) = m {
            self.hi += n;
        }
        Ok(m)
    }

    /// Takes every reply that has arrived.
    fn receive(&mut self) -> Result<(), String> {
        loop {
            self.parse()?;
            let (n, space) = match self.reading {
                Some((slot, got)) if self.lo == self.hi => {
                    let s = self.slots[slot as usize];
                    let left = s.len as usize - got;
                    if left < DIRECT_BYTES {
                        // Nothing buffered: the whole buffer is free.
                        (self.fill()?, RX_BYTES)
                    } else {
                        // SAFETY: the request's buffer has `len` bytes (the
                        // submitter's promise); `got + left` is its end.
                        let rc = unsafe { libc::recv(self.fd(), s.buf.add(got).cast(), left, 0) };
                        let m = moved(rc, "recv")?;
                        if let Moved::Bytes(n) = m {
                            self.read_into(slot, got + n);
                        }
                        (m, left)
                    }
                }
                _ => {
                    let space = RX_BYTES - (self.hi - self.lo);
                    (self.fill()?, space)
                }
            };
            match n {
                Moved::Later => return Ok(()),
                Moved::Bytes(0) => return Err("the server closed the connection".into()),
                // A short receive drained the socket: poll says when there is more.
                Moved::Bytes(n) if n < space => return self.parse(),
                Moved::Bytes(_) => {}
            }
        }
    }

    /// The read in `slot` has `got` bytes of its data.
    fn read_into(&mut self, slot: u32, got: usize) {
        if got == self.slots[slot as usize].len as usize {
            self.reading = None;
            self.finish(slot, 0);
        } else {
            self.reading = Some((slot, got));
        }
    }

    /// Consumes the whole replies (and read data) in `rx`.
    fn parse(&mut self) -> Result<(), String> {
        loop {
            if let Some((slot, got)) = self.reading {
                let s = self.slots[slot as usize];
                let take = (s.len as usize - got).min(self.hi - self.lo);
                // SAFETY: `take` bytes fit both the buffered data and the request's
                // buffer after `got` (its `len` bytes, the submitter's promise).
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        self.rx.as_ptr().add(self.lo),
                        s.buf.add(got),
                        take,
                    )
                };
                self.lo += take;
                self.read_into(slot, got + take);
                if self.reading.is_some() {
                    return Ok(());
                }
                continue;
            }
            if self.hi - self.lo < REPLY_BYTES {
                return Ok(());
            }
            let r = &self.rx[self.lo..self.lo + REPLY_BYTES];
            let magic = u32::from_be_bytes(r[0..4].try_into().expect("4 bytes"));
            let error = u32::from_be_bytes(r[4..8].try_into().expect("4 bytes"));
            let cookie = u64::from_be_bytes(r[8..16].try_into().expect("8 bytes"));
            if magic != SIMPLE_REPLY_MAGIC {
                return Err(format!(
                    "a reply with magic {magic:#x}, not a simple reply: the server broke the protocol"
                ));
            }
            self.lo += REPLY_BYTES;
            let slot = u32::try_from(cookie)
                .ok()
                .filter(|&s| self.slots.get(s as usize).is_some_and(|s| s.busy))
                .ok_or_else(|| format!("a reply for request {cookie}, which is not in flight"))?;
            if self.slots[slot as usize].op == Op::Read && error == 0 {
                self.reading = Some((slot, 0));
            } else {
                self.finish(slot, if error == 0 { 0 } else { errno(error) });
            }
        }
    }

    fn finish(&mut self, slot: u32, errno: i32) {
        self.slots[slot as usize].busy = false;
        // SAFETY: `done` is the list of the link whose requests these are, which
        // outlives the connection (declared after it in the link).
        unsafe { (*self.done).push(slot, errno) };
    }

    /// Sends the queue's requests (headers and write data) in as few `sendmsg`
    /// calls as the socket allows.
    fn send_queued(&mut self) -> Result<(), String> {
        while !self.queue.is_empty() {
            self.iov.clear();
            let mut skip = self.head_sent;
            let mut total = 0;
            for &slot in self.queue.iter().take(BATCH) {
                let s = &self.slots[slot as usize];
                let data = if s.op == Op::Write { s.len as usize } else { 0 };
                for (p, n) in [
                    (s.header.as_ptr(), REQUEST_BYTES),
                    (s.buf.cast_const(), data),
                ] {
                    let k = skip.min(n);
                    skip -= k;
                    if n > k {
                        self.iov.push(libc::iovec {
                            // SAFETY: within the header or the request's buffer.
                            iov_base: unsafe { p.add(k) }.cast_mut().cast(),
                            iov_len: n - k,
                        });
                        total += n - k;
                    }
                }
            }
            // SAFETY: all-zero is a valid msghdr; the iovecs point at live headers
            // and request buffers.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_iov = self.iov.as_mut_ptr();
            msg.msg_iovlen = self.iov.len();
            // SAFETY: msg and what it points at are live for the call.
            let rc = unsafe { libc::sendmsg(self.fd(), &msg, libc::MSG_NOSIGNAL) };
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
        while let Some(&slot) = self.queue.front() {
            let s = &self.slots[slot as usize];
            let whole = REQUEST_BYTES + if s.op == Op::Write { s.len as usize } else { 0 };
            let left = whole - self.head_sent;
            if n < left {
                self.head_sent += n;
                return;
            }
            n -= left;
            self.head_sent = 0;
            self.queue.pop_front();
        }
    }
}

impl Drop for Inner {
    /// Says goodbye (`NBD_CMD_DISC`) when nothing is half sent, so the server
    /// closes its side cleanly; then the socket closes.
    fn drop(&mut self) {
        if matches!(self.phase, Phase::Ready) && self.head_sent == 0 {
            let h = request(CMD_DISC, 0, 0, 0);
            // SAFETY: a live 28-byte buffer; the result does not matter.
            unsafe {
                libc::send(
                    self.fd(),
                    h.as_ptr().cast(),
                    h.len(),
                    libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
                )
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_carry_their_slot_as_cookie_and_errors_map_to_errnos() {
        let h = request(CMD_WRITE, 7, 4096, 512);
        assert_eq!(&h[0..4], &REQUEST_MAGIC.to_be_bytes());
        assert_eq!(u16::from_be_bytes([h[6], h[7]]), 1);
        assert_eq!(u64::from_be_bytes(h[8..16].try_into().unwrap()), 7);
        assert_eq!(u64::from_be_bytes(h[16..24].try_into().unwrap()), 4096);
        assert_eq!(u32::from_be_bytes(h[24..28].try_into().unwrap()), 512);
        assert_eq!(errno(5), libc::EIO);
        assert_eq!(errno(28), libc::ENOSPC);
        assert_eq!(errno(1234), libc::EINVAL);
    }

    // A refused address is skipped for the next one, as libnbd does (`localhost`
    // resolving to ::1 first for a server on 127.0.0.1): here a closed port, then a
    // listener that greets, takes the GO option and acknowledges it.
    #[test]
    fn a_refused_address_is_skipped_for_the_next() {
        use std::io::{Read, Write};
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let closed_addr = closed.local_addr().unwrap();
        drop(closed);
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap();
        let t = std::thread::spawn(move || {
            let (mut s, _) = server.accept().unwrap();
            let mut greeting = b"NBDMAGICIHAVEOPT".to_vec();
            greeting.extend_from_slice(&3u16.to_be_bytes());
            s.write_all(&greeting).unwrap();
            // Client flags, then GO: magic, option, length, name length, name, 0 infos.
            let mut head = [0u8; 4 + 16];
            s.read_exact(&mut head).unwrap();
            let len = u32::from_be_bytes(head[16..20].try_into().unwrap()) as usize;
            let mut data = vec![0u8; len];
            s.read_exact(&mut data).unwrap();
            let mut ack = 0x0003_e889_0455_65a9u64.to_be_bytes().to_vec();
            ack.extend_from_slice(&7u32.to_be_bytes());
            ack.extend_from_slice(&1u32.to_be_bytes());
            ack.extend_from_slice(&0u32.to_be_bytes());
            s.write_all(&ack).unwrap();
            // Held open until the client says goodbye and closes.
            let _ = s.read_to_end(&mut Vec::new());
            data
        });
        let d = Dest {
            addrs: vec![SockAddr::from(closed_addr), SockAddr::from(addr)],
            export: b"x".to_vec(),
        };
        let c = Conn::connect(&d, 5_000_000_000).unwrap();
        assert!(c.is_ready());
        drop(c);
        let go = t.join().unwrap();
        assert_eq!(
            go,
            [0, 0, 0, 1, b'x', 0, 0],
            "the export's name, no info requests"
        );
    }

    #[test]
    fn destinations_resolve_and_percent_encoded_exports_go_to_libnbd() {
        let d = Dest::of("nbd://127.0.0.1:10900/disk").unwrap();
        assert_eq!(d.export, b"disk");
        assert!(d.addrs[0].as_socket().is_some());
        let d = Dest::of("nbd+unix:///x?socket=/tmp/s.sock").unwrap();
        assert!(d.addrs[0].is_unix());
        assert!(Dest::of("nbd://127.0.0.1/a%20b").is_none());
    }
}
