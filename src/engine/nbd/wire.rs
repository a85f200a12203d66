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
use crate::engine::sock::{self, Client, Frame, Link, Moved, Phase, SetUp, Wire};
use crate::plan::model::Op;
use crate::target::nbd::ffi::{DoneList, Ticket};
use socket2::SockAddr;

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

/// Where an export is: the server's addresses (each tried in turn, as libnbd
/// does) and the export's name.
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
        Some(Dest {
            addrs: sock::resolve(&spec.server)?,
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
    busy: bool,
}

const FREE: Slot = Slot {
    op: Op::Read,
    buf: std::ptr::null_mut(),
    len: 0,
    busy: false,
};

/// The connection: its socket layer (set up by the handshake; `tx` holds requests,
/// their headers and write data, not yet wholly sent) and the requests it carries.
pub struct Inner {
    w: Wire<Handshake>,
    export: Vec<u8>,
    slots: Vec<Slot>,
    /// The read whose data is arriving: (slot, bytes so far).
    reading: Option<(u32, usize)>,
    /// Where finished requests are reported (the link's `Inflight`).
    done: *const DoneList,
}

/// One connection to an NBD server.
pub type Conn = Client<Inner>;

// SAFETY: the raw pointers (request buffers, the done list) point at memory the
// engine owns and keeps valid while the request is in flight; the connection is
// used only by the thread that owns the engine, and moves with it.
unsafe impl Send for Client<Inner> {}

impl Client<Inner> {
    /// Starts connecting to `d` without blocking; drive it with
    /// [`Client::pollfd`]/[`Client::service`] until [`Client::is_ready`].
    pub fn start(d: &Dest) -> Result<Conn, String> {
        let mut w = Wire::start(&d.addrs, RX_BYTES)?;
        if w.dial.connected {
            w.phase = Phase::SettingUp(Handshake::Greeting);
        }
        Ok(Client::new(Inner {
            w,
            export: d.export.clone(),
            slots: Vec::new(),
            reading: None,
            done: std::ptr::null(),
        }))
    }

    /// Connects and completes the handshake, within `limit_ns` (0: no limit).
    pub fn connect(d: &Dest, limit_ns: u64) -> Result<Conn, String> {
        sock::ready_within(Conn::start(d)?, limit_ns, "handshake")
    }

    /// The socket and the events it waits for now.
    pub fn pollfd(&self) -> libc::pollfd {
        SetUp::pollfd(self)
    }

    /// Queues `op` of `len` bytes at `offset` for the slot `ticket` names; it leaves
    /// at the next [`Client::flush`] (or when poll finds the socket writable).
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
        self.when_ready("connection", |g| {
            let (done, slot) = ticket.parts();
            g.done = done;
            let (ty, data) = match op {
                Op::Read => (CMD_READ, 0),
                Op::Write => (CMD_WRITE, len),
                Op::Trim => (CMD_TRIM, 0),
            };
            if g.slots.len() <= slot as usize {
                g.slots.resize(slot as usize + 1, FREE);
            }
            g.slots[slot as usize] = Slot {
                op,
                buf,
                len,
                busy: true,
            };
            let head = request(ty, slot as u64, offset, len);
            g.w.tx.push(Frame::new(&head, buf, data, 0));
            Ok(())
        })
    }
}

impl Link for Inner {
    type Stage = Handshake;

    fn wire(&self) -> &Wire<Handshake> {
        &self.w
    }

    fn wire_mut(&mut self) -> &mut Wire<Handshake> {
        &mut self.w
    }

    fn service(&mut self, revents: i16) -> Result<(), String> {
        Inner::service(self, revents)
    }
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

// SAFETY: `direct` names the rest of a read's buffer, `len` bytes the submitter
// keeps valid while the read is in flight; `landed` is called before it completes.
unsafe impl sock::Receive for Inner {
    /// Consumes the whole replies (and read data) in `rx`.
    fn parse(&mut self) -> Result<(), String> {
        loop {
            if let Some((slot, got)) = self.reading {
                let s = self.slots[slot as usize];
                let held = self.w.rx.held();
                let take = (s.len as usize - got).min(held.len());
                // SAFETY: `take` bytes fit both the buffered data and the request's
                // buffer after `got` (its `len` bytes, the submitter's promise).
                unsafe { std::ptr::copy_nonoverlapping(held.as_ptr(), s.buf.add(got), take) };
                self.w.rx.take(take);
                self.read_into(slot, got + take);
                if self.reading.is_some() {
                    return Ok(());
                }
                continue;
            }
            let Some(r) = self.w.rx.held().get(..REPLY_BYTES) else {
                return Ok(());
            };
            let magic = u32::from_be_bytes(r[0..4].try_into().expect("4 bytes"));
            let error = u32::from_be_bytes(r[4..8].try_into().expect("4 bytes"));
            let cookie = u64::from_be_bytes(r[8..16].try_into().expect("8 bytes"));
            if magic != SIMPLE_REPLY_MAGIC {
                return Err(format!(
                    "a reply with magic {magic:#x}, not a simple reply: the server broke the protocol"
                ));
            }
            self.w.rx.take(REPLY_BYTES);
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

    fn direct(&self) -> Option<(*mut u8, usize)> {
        let (slot, got) = self.reading?;
        let s = self.slots[slot as usize];
        // SAFETY: `got` < `len`, within the request's buffer.
        Some((unsafe { s.buf.add(got) }, s.len as usize - got))
    }

    fn landed(&mut self, n: usize) {
        if let Some((slot, got)) = self.reading {
            self.read_into(slot, got + n);
        }
    }
}

impl Inner {
    fn fd(&self) -> i32 {
        self.w.fd()
    }

    fn service(&mut self, revents: i16) -> Result<(), String> {
        match self.w.phase {
            Phase::Connecting => {
                if self.w.connecting(revents)? {
                    self.w.phase = Phase::SettingUp(Handshake::Greeting);
                }
                Ok(())
            }
            Phase::SettingUp(h) => self.handshake(h, revents),
            Phase::Ready => {
                if revents & libc::POLLOUT != 0 {
                    self.w.tx.send(self.fd())?;
                }
                if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                    sock::receive(self, "server")?;
                }
                Ok(())
            }
            Phase::Dead(ref e) => Err(e.clone()),
        }
    }

    fn handshake(&mut self, mut h: Handshake, revents: i16) -> Result<(), String> {
        if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
            if let Moved::Bytes(0) = self.w.rx.fill(self.fd())? {
                return Err("the server closed the connection during the handshake".into());
            }
            let used = h.step(self.w.rx.held(), &self.export, &mut self.w.out)?;
            self.w.rx.take(used);
            self.w.phase = match h {
                Handshake::Done => Phase::Ready,
                h => Phase::SettingUp(h),
            };
        }
        self.w.send_out()
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

    fn finish(&mut self, slot: u32, errno: i32) {
        self.slots[slot as usize].busy = false;
        // SAFETY: `done` is the list of the link whose requests these are, which
        // outlives the connection (declared after it in the link).
        unsafe { (*self.done).push(slot, errno) };
    }
}

impl Drop for Inner {
    /// Says goodbye (`NBD_CMD_DISC`) when nothing is half sent, so the server
    /// closes its side cleanly; then the socket closes.
    fn drop(&mut self) {
        if matches!(self.w.phase, Phase::Ready) && !self.w.tx.is_half_sent() {
            let h = request(CMD_DISC, 0, 0, 0);
            // The result does not matter.
            let _ = sock::send_some(self.fd(), &h);
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
