//! The iSCSI engine's own initiator for the data path: one non-blocking socket, the
//! login of [`super::login`], then READ (16) and WRITE (16) commands and the PDUs
//! that answer them. What it buys over libiscsi is system calls: the commands a
//! worker queues in one turn (with their write data) leave in one `sendmsg`, and one
//! `recv` takes every PDU that has arrived (a read's data is copied out of it, or
//! received straight into its buffer when much is still to come), where libiscsi
//! writes each PDU and reads each header and data segment with calls of its own.
//!
//! A command's initiator task tag is its slot here, so a PDU finds its command
//! without a map; completions are recorded in the same per-thread list libiscsi's
//! callback fills ([`ffi::report`]), so the engine above is the same for both. It
//! keeps the command window (CmdSN up to the target's MaxCmdSN: commands past it
//! wait), answers R2Ts with Data-Out PDUs of the agreed size, and answers the
//! target's NOP-In pings. Closing the session reports its commands cancelled, as
//! libiscsi does. Sessions with CHAP go through libiscsi.

use super::login::{self, Agreed, Established, Login};
use super::pdu::{self, In, Numbers, BHS, NO_TAG};
use crate::engine::sock::{self, Client, Frame, Link, Moved, Phase, Wire};
use crate::plan::model::{IscsiSpec, Op};
use crate::target::iscsi::ffi;
use socket2::SockAddr;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};

/// What one `recv` may take: the longest data segment the initiator declares, with
/// its header (and a deep queue's worth of 4 KiB reads).
const RX_BYTES: usize = login::RECV_SEGMENT_BYTES + BHS;
/// libiscsi's status for a command the target answered with a failed response.
const STATUS_ERROR: i32 = 0x0f00_0001;
/// The task tag of the TEST UNIT READYs after the login (slots never reach it).
const TEST_ITT: u32 = 0x8000_0000;
/// TEST UNIT READYs the unit attentions of a new session may take.
const TESTS_MAX: u32 = 10;

/// Where a LUN is: the portal's addresses (each tried in turn), the target's name,
/// the LUN and its block size.
#[derive(Debug, Clone)]
pub struct Dest {
    addrs: Vec<SockAddr>,
    iqn: String,
    lun: [u8; 8],
    block_bytes: u32,
}

impl Dest {
    /// `None` when the portal does not resolve now (libiscsi then tries).
    pub fn of(spec: &IscsiSpec, block_bytes: u32) -> Option<Dest> {
        let portal = spec.portal.replace(['[', ']'], "");
        let addrs = sock::resolve(&portal).or_else(|| sock::resolve(&spec.portal))?;
        Some(Dest {
            addrs,
            iqn: spec.iqn.clone(),
            lun: pdu::lun_field(spec.lun),
            block_bytes,
        })
    }
}

/// A session identifier of the random kind, distinct for every session of this
/// process (the counter) and unlikely to meet another process's (pid and clock):
/// a target takes a login with the same initiator name and ISID for the same
/// session and would end the other.
fn isid() -> [u8; 6] {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mix = std::process::id().wrapping_mul(0x9e37_79b9) ^ crate::clock::now_ns() as u32;
    let m = mix.to_be_bytes();
    [0x80, m[1], m[2], m[3], (n >> 8) as u8, n as u8]
}

/// One command the session carries, in the slot its task tag names.
#[derive(Clone, Copy)]
struct Slot {
    tag: u64,
    op: Op,
    buf: *mut u8,
    len: u32,
    lba: u64,
    busy: bool,
}

/// A Data-In segment arriving: its command, where in its buffer the next byte
/// goes, bytes of the segment and then of padding still to come, and the status
/// the PDU carried (reported once the data is in).
#[derive(Clone, Copy)]
struct Incoming {
    slot: u32,
    at: usize,
    left: usize,
    pad: usize,
    status: Option<u8>,
}

/// The session's set-up stages.
pub enum Stage {
    Login(Box<Login>),
    /// Logged in; TEST UNIT READY takes the unit attentions a new session
    /// reports (a power-on or reset), as libiscsi's login does: the count sent.
    Testing(u32),
}

/// The session: its socket layer and the commands it carries.
pub struct Inner {
    w: Wire<Stage>,
    dest: Dest,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Commands waiting for the command window to open.
    held: VecDeque<u32>,
    agreed: Agreed,
    cmd_sn: u32,
    max_cmd_sn: u32,
    exp_stat_sn: u32,
    incoming: Option<Incoming>,
    /// Bytes of the current PDU to pass over (sense data, an event's data).
    skip: usize,
    /// Ping data echoed by NOP-Outs still queued (their frames point into it).
    echoes: Vec<Box<[u8]>>,
}

/// One session to an iSCSI target.
pub type Session = Client<Inner>;

// SAFETY: the raw pointers (request buffers) point at memory the engine owns and
// keeps valid while the command is in flight; the session is used only by the
// thread that owns the engine, and moves with it.
unsafe impl Send for Client<Inner> {}

impl Client<Inner> {
    /// Starts connecting and logging in to `d` without blocking.
    pub fn start(d: &Dest) -> Result<Session, String> {
        let mut s = Inner {
            w: Wire::start(&d.addrs, RX_BYTES)?,
            dest: d.clone(),
            slots: Vec::new(),
            free: Vec::new(),
            held: VecDeque::new(),
            agreed: Agreed {
                send_segment_bytes: 0,
                first_burst_bytes: 0,
                max_burst_bytes: 0,
                immediate_data: false,
                initial_r2t: true,
            },
            cmd_sn: 0,
            max_cmd_sn: 0,
            exp_stat_sn: 0,
            incoming: None,
            skip: 0,
            echoes: Vec::new(),
        };
        if s.w.dial.connected {
            s.begin_login();
        }
        Ok(Client::new(s))
    }

    /// Connects and logs in, within `limit_ns` (0: no limit).
    pub fn connect(d: &Dest, limit_ns: u64) -> Result<Session, String> {
        sock::ready_within(Session::start(d)?, limit_ns, "login")
    }

    /// Queues READ (16) or WRITE (16) of `len` bytes at byte `offset`, reported
    /// with `tag`; it leaves at the next [`Client::flush`].
    ///
    /// # Safety
    /// `buf` stays valid and untouched until the command is reported, or the session
    /// is dropped.
    pub unsafe fn submit(
        &self,
        op: Op,
        buf: *mut u8,
        len: u32,
        offset: u64,
        tag: u64,
    ) -> Result<(), String> {
        if op == Op::Trim {
            return Err("ioscope sends no SCSI UNMAP: trims are refused on iSCSI".into());
        }
        self.when_ready("session", |g| {
            let lba = offset / g.dest.block_bytes as u64;
            let s = Slot {
                tag,
                op,
                buf,
                len,
                lba,
                busy: true,
            };
            let slot = match g.free.pop() {
                Some(i) => {
                    g.slots[i as usize] = s;
                    i
                }
                None => {
                    g.slots.push(s);
                    g.slots.len() as u32 - 1
                }
            };
            if g.held.is_empty() && pdu::sn_le(g.cmd_sn, g.max_cmd_sn) {
                g.issue(slot);
            } else {
                g.held.push_back(slot);
            }
            Ok(())
        })
    }
}

impl Link for Inner {
    type Stage = Stage;

    fn wire(&self) -> &Wire<Stage> {
        &self.w
    }

    fn wire_mut(&mut self) -> &mut Wire<Stage> {
        &mut self.w
    }

    fn service(&mut self, revents: i16) -> Result<(), String> {
        Inner::service(self, revents)
    }

    fn flush(&mut self) -> Result<(), String> {
        self.send_queued()
    }
}

// SAFETY: `direct` names the rest of a Data-In segment's place in its command's
// buffer (checked against the buffer when the PDU's header was read), which the
// submitter keeps valid while the command is in flight; `landed` follows at once.
unsafe impl sock::Receive for Inner {
    /// Consumes the whole PDUs (and the data arriving) in `rx`.
    fn parse(&mut self) -> Result<(), String> {
        loop {
            if let Some(i) = self.incoming {
                if !self.take_data(i) {
                    return Ok(());
                }
                continue;
            }
            if self.skip > 0 {
                let n = self.skip.min(self.w.rx.held().len());
                self.w.rx.take(n);
                self.skip -= n;
                if self.skip > 0 {
                    return Ok(());
                }
            }
            let held = self.w.rx.held();
            let Some(b) = held.get(..BHS) else {
                return Ok(());
            };
            let mut bhs = [0u8; BHS];
            bhs.copy_from_slice(b);
            let h = In(&bhs);
            let head_len = BHS + h.ahs_bytes();
            if held.len() < head_len {
                return Ok(());
            }
            if !self.pdu(h, head_len)? {
                return Ok(());
            }
        }
    }

    fn direct(&self) -> Option<(*mut u8, usize)> {
        let i = self.incoming?;
        let s = self.slots[i.slot as usize];
        // SAFETY: `at + left` is within the command's buffer.
        Some((unsafe { s.buf.add(i.at) }, i.left))
    }

    fn landed(&mut self, n: usize) {
        if let Some(i) = self.incoming {
            self.incoming = Some(Incoming {
                at: i.at + n,
                left: i.left - n,
                ..i
            });
        }
    }
}

impl Inner {
    fn fd(&self) -> i32 {
        self.w.fd()
    }

    fn begin_login(&mut self) {
        let l = Login::start(isid(), ffi::INITIATOR, &self.dest.iqn, &mut self.w.out);
        self.w.phase = Phase::SettingUp(Stage::Login(Box::new(l)));
    }

    fn service(&mut self, revents: i16) -> Result<(), String> {
        match self.w.phase {
            Phase::Connecting => {
                if self.w.connecting(revents)? {
                    self.begin_login();
                    self.w.send_out()?;
                }
                Ok(())
            }
            Phase::SettingUp(Stage::Login(_)) => self.login(revents),
            Phase::Ready | Phase::SettingUp(Stage::Testing(_)) => {
                if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                    sock::receive(self, "target")?;
                }
                // R2Ts, pings and commands the window let go wait to be sent.
                self.send_queued()
            }
            Phase::Dead(ref e) => Err(e.clone()),
        }
    }

    fn login(&mut self, revents: i16) -> Result<(), String> {
        if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
            if let Moved::Bytes(0) = self.w.rx.fill(self.fd())? {
                return Err("the target closed the connection during the login".into());
            }
            while let Phase::SettingUp(Stage::Login(l)) = &mut self.w.phase {
                let (used, done) = l.step(self.w.rx.held(), &mut self.w.out)?;
                self.w.rx.take(used);
                if let Some(e) = done {
                    self.established(e);
                    return self.send_queued();
                }
                if used == 0 {
                    break;
                }
            }
        }
        self.w.send_out()
    }

    fn established(&mut self, e: Established) {
        self.agreed = e.agreed;
        self.cmd_sn = e.cmd_sn;
        self.max_cmd_sn = e.max_cmd_sn;
        self.exp_stat_sn = e.exp_stat_sn;
        self.test_unit(0);
    }

    /// Queues TEST UNIT READY number `n`.
    fn test_unit(&mut self, n: u32) {
        let num = Numbers {
            itt: TEST_ITT,
            cmd_sn: self.cmd_sn,
            exp_stat_sn: self.exp_stat_sn,
        };
        self.cmd_sn = self.cmd_sn.wrapping_add(1);
        let head = pdu::test_unit_ready(self.dest.lun, num);
        self.w.tx.push(Frame::new(&head, std::ptr::null(), 0, 0));
        self.w.phase = Phase::SettingUp(Stage::Testing(n + 1));
    }

    /// The answer to a TEST UNIT READY, its sense data in `sense`: another after a
    /// unit attention; otherwise the session is ready (a LUN not ready fails the
    /// commands themselves, as with libiscsi).
    fn tested(&mut self, status: u8, sense: &[u8]) -> Result<(), String> {
        let Phase::SettingUp(Stage::Testing(n)) = self.w.phase else {
            return Err("an answer to a TEST UNIT READY that was not sent".into());
        };
        const CHECK_CONDITION: u8 = 2;
        const UNIT_ATTENTION: u8 = 6;
        if status == CHECK_CONDITION && pdu::sense_key(sense) == Some(UNIT_ATTENTION) {
            if n >= TESTS_MAX {
                return Err(format!(
                    "the LUN still reports a unit attention after {n} TEST UNIT READYs"
                ));
            }
            self.test_unit(n);
        } else {
            self.w.phase = Phase::Ready;
        }
        Ok(())
    }

    fn send_queued(&mut self) -> Result<(), String> {
        if self.w.tx.is_empty() {
            return Ok(());
        }
        self.w.tx.send(self.fd())?;
        if self.w.tx.is_empty() {
            self.echoes.clear();
        }
        Ok(())
    }

    /// Queues the command in `slot` with its CmdSN, and the write data that goes
    /// without an R2T: in the command's own PDU (immediate data) and in
    /// unsolicited Data-Out PDUs up to the first burst.
    fn issue(&mut self, slot: u32) {
        let s = self.slots[slot as usize];
        let write = s.op == Op::Write;
        let (immediate, unsolicited) = match write {
            true => without_r2t(s.len, &self.agreed),
            false => (0, 0),
        };
        let rw = pdu::Rw {
            write,
            lun: self.dest.lun,
            lba: s.lba,
            blocks: s.len / self.dest.block_bytes,
            expected: s.len,
            immediate,
            more_unsolicited: unsolicited > immediate,
        };
        let n = Numbers {
            itt: slot,
            cmd_sn: self.cmd_sn,
            exp_stat_sn: self.exp_stat_sn,
        };
        self.cmd_sn = self.cmd_sn.wrapping_add(1);
        let pad = pdu::pad(immediate as usize) as u8;
        self.w
            .tx
            .push(Frame::new(&pdu::command(&rw, n), s.buf, immediate, pad));
        if unsolicited > immediate {
            self.data_out(slot, NO_TAG, immediate, unsolicited - immediate);
        }
    }

    /// Queues Data-Out PDUs carrying `len` bytes of `slot`'s data from `offset`, in
    /// segments the target takes, answering the R2T `ttt`.
    fn data_out(&mut self, slot: u32, ttt: u32, offset: u32, len: u32) {
        let s = self.slots[slot as usize];
        let seg = self.agreed.send_segment_bytes;
        let mut sent = 0;
        let mut data_sn = 0;
        while sent < len {
            let n = (len - sent).min(seg);
            let d = pdu::DataOut {
                lun: self.dest.lun,
                itt: slot,
                ttt,
                data_sn,
                offset: offset + sent,
                len: n,
                last: sent + n == len,
            };
            let head = pdu::data_out(&d, self.exp_stat_sn);
            // SAFETY: offset + sent + n <= len: within the command's buffer.
            let at = unsafe { s.buf.add((offset + sent) as usize) };
            let pad = pdu::pad(n as usize) as u8;
            self.w.tx.push(Frame::new(&head, at, n, pad));
            sent += n;
            data_sn += 1;
        }
    }

    /// The target's window and status numbers, from a PDU that carries them.
    fn numbers(&mut self, h: In, has_status: bool) {
        let (exp, max) = (h.exp_cmd_sn(), h.max_cmd_sn());
        // A MaxCmdSN below ExpCmdSN - 1 is to be ignored (RFC 7143 §4.2.2.1).
        if pdu::sn_le(exp.wrapping_sub(1), max) && pdu::sn_le(self.max_cmd_sn, max) {
            self.max_cmd_sn = max;
        }
        if has_status {
            let next = h.stat_sn().wrapping_add(1);
            if pdu::sn_le(self.exp_stat_sn, next) {
                self.exp_stat_sn = next;
            }
        }
        while let Some(&slot) = self.held.front() {
            if !pdu::sn_le(self.cmd_sn, self.max_cmd_sn) {
                break;
            }
            self.held.pop_front();
            self.issue(slot);
        }
    }

    /// Copies what `rx` holds of the arriving Data-In segment into its buffer: true
    /// once the segment (and its padding) is in.
    fn take_data(&mut self, mut i: Incoming) -> bool {
        let held = self.w.rx.held();
        let take = i.left.min(held.len());
        let s = self.slots[i.slot as usize];
        // SAFETY: `take` bytes fit the buffered data and the command's buffer after
        // `at` (checked against its length when the header was read).
        unsafe { std::ptr::copy_nonoverlapping(held.as_ptr(), s.buf.add(i.at), take) };
        self.w.rx.take(take);
        i.at += take;
        i.left -= take;
        let pad = i.pad.min(self.w.rx.held().len());
        self.w.rx.take(pad);
        i.pad -= pad;
        if i.left > 0 || i.pad > 0 {
            self.incoming = Some(i);
            return false;
        }
        self.incoming = None;
        if let Some(status) = i.status {
            self.finish(i.slot, status as i32);
        }
        true
    }

    /// Acts on one PDU whose header (`head_len` bytes) is in `rx`: false when more
    /// bytes must arrive first.
    fn pdu(&mut self, h: In, head_len: usize) -> Result<bool, String> {
        let whole = head_len + h.data_len() + pdu::pad(h.data_len());
        match h.opcode() {
            pdu::OP_DATA_IN => self.data_in(h, head_len)?,
            pdu::OP_SCSI_RSP if h.itt() == TEST_ITT => {
                let Some(d) = self.w.rx.held().get(head_len..whole) else {
                    return Ok(false);
                };
                let sense = d.get(2..h.data_len()).unwrap_or_default().to_vec();
                self.w.rx.take(whole);
                self.numbers(h, true);
                self.tested(h.status(), &sense)?;
            }
            pdu::OP_SCSI_RSP => {
                let slot = self.command_of(h, self.op_of(h))?;
                self.w.rx.take(head_len);
                self.skip = whole - head_len;
                self.numbers(h, true);
                let status = match h.byte2() {
                    0 => h.status() as i32,
                    _ => STATUS_ERROR,
                };
                self.finish(slot, status);
            }
            pdu::OP_R2T => self.r2t(h, head_len)?,
            pdu::OP_NOP_IN => {
                if self.w.rx.held().len() < whole {
                    return Ok(false);
                }
                if h.ttt() != NO_TAG {
                    self.ping(h, head_len);
                }
                self.w.rx.take(whole);
                self.numbers(h, h.itt() != NO_TAG);
            }
            pdu::OP_ASYNC => match h.async_event() {
                1 => return Err("the target asked to log out".into()),
                2 | 3 => return Err("the target announced it is dropping the connection".into()),
                _ => {
                    self.w.rx.take(head_len);
                    self.skip = whole - head_len;
                    self.numbers(h, true);
                }
            },
            pdu::OP_REJECT => {
                return Err(format!(
                    "the target rejected a PDU (reason {:#04x})",
                    h.byte2()
                ))
            }
            op => {
                return Err(format!(
                    "the target sent an unexpected PDU (opcode {op:#04x})"
                ))
            }
        }
        Ok(true)
    }

    /// A Data-In: its segment goes into the read's buffer at the PDU's offset.
    fn data_in(&mut self, h: In, head_len: usize) -> Result<(), String> {
        let slot = self.command_of(h, Op::Read)?;
        let (at, data) = (h.buffer_offset() as usize, h.data_len());
        let len = self.slots[slot as usize].len;
        if at + data > len as usize {
            return Err(format!(
                "the target sent {data} bytes at offset {at} for a {len}-byte read"
            ));
        }
        let has_status = h.flags() & pdu::DATA_IN_STATUS != 0;
        self.w.rx.take(head_len);
        self.numbers(h, has_status);
        self.incoming = Some(Incoming {
            slot,
            at,
            left: data,
            pad: pdu::pad(data),
            status: has_status.then(|| h.status()),
        });
        Ok(())
    }

    /// An R2T: the write's data it asks for goes in Data-Out PDUs.
    fn r2t(&mut self, h: In, head_len: usize) -> Result<(), String> {
        let slot = self.command_of(h, Op::Write)?;
        let (at, len) = (h.buffer_offset(), h.desired_len());
        let total = self.slots[slot as usize].len;
        if at as u64 + len as u64 > total as u64 {
            return Err(format!(
                "the target asked for {len} bytes at offset {at} of a {total}-byte write"
            ));
        }
        self.w.rx.take(head_len);
        self.numbers(h, false);
        self.data_out(slot, h.ttt(), at, len);
        Ok(())
    }

    /// Answers the target's ping (a NOP-In wholly in `rx`), echoing its data.
    fn ping(&mut self, h: In, head_len: usize) {
        let data = h.data_len();
        let echo: Box<[u8]> = self.w.rx.held()[head_len..head_len + data].into();
        let head = pdu::nop_reply(
            self.dest.lun,
            h.ttt(),
            self.cmd_sn,
            self.exp_stat_sn,
            data as u32,
        );
        let pad = pdu::pad(data) as u8;
        self.w
            .tx
            .push(Frame::new(&head, echo.as_ptr(), data as u32, pad));
        self.echoes.push(echo);
    }

    /// The operation of the command a SCSI Response answers.
    fn op_of(&self, h: In) -> Op {
        self.slots.get(h.itt() as usize).map_or(Op::Read, |s| s.op)
    }

    /// The slot of the `op` command in flight that `h` is for.
    fn command_of(&self, h: In, op: Op) -> Result<u32, String> {
        let itt = h.itt();
        match self.slots.get(itt as usize) {
            Some(s) if s.busy && s.op == op => Ok(itt),
            _ => Err(format!(
                "the target answered task {itt:#x}, which is not a {} in flight (opcode {:#04x})",
                if op == Op::Read { "read" } else { "write" },
                h.opcode()
            )),
        }
    }

    fn finish(&mut self, slot: u32, status: i32) {
        let s = &mut self.slots[slot as usize];
        s.busy = false;
        ffi::report(s.tag, status);
        self.free.push(slot);
    }
}

/// Of a `len`-byte write, the bytes that go in the command's own PDU and the bytes
/// that go without an R2T in all (those and unsolicited Data-Outs): the first burst,
/// but only immediate data when the target wants an R2T first (InitialR2T=Yes).
fn without_r2t(len: u32, a: &Agreed) -> (u32, u32) {
    let first = len.min(a.first_burst_bytes);
    let immediate = match a.immediate_data {
        true => first.min(a.send_segment_bytes),
        false => 0,
    };
    (immediate, if a.initial_r2t { immediate } else { first })
}

impl Drop for Inner {
    /// Closing the session reports its commands cancelled, as libiscsi's does, and
    /// touches none of their buffers afterwards.
    fn drop(&mut self) {
        for s in self.slots.iter().filter(|s| s.busy) {
            ffi::report(s.tag, ffi::STATUS_CANCELLED);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writes_data_goes_unsolicited_only_as_far_as_the_target_agreed() {
        let a = Agreed {
            send_segment_bytes: 8192,
            first_burst_bytes: 65536,
            max_burst_bytes: 262_144,
            immediate_data: true,
            initial_r2t: true,
        };
        assert_eq!(without_r2t(4096, &a), (4096, 4096));
        assert_eq!(without_r2t(1 << 20, &a), (8192, 8192), "the rest on R2T");
        let no_r2t = Agreed {
            initial_r2t: false,
            ..a
        };
        assert_eq!(without_r2t(1 << 20, &no_r2t), (8192, 65536));
        let none = Agreed {
            immediate_data: false,
            ..a
        };
        assert_eq!(without_r2t(1 << 20, &none), (0, 0));
        let none_no_r2t = Agreed {
            immediate_data: false,
            initial_r2t: false,
            ..a
        };
        assert_eq!(without_r2t(4096, &none_no_r2t), (0, 4096));
    }

    #[test]
    fn sessions_get_distinct_random_isids() {
        let (a, b) = (isid(), isid());
        assert_eq!(a[0], 0x80);
        assert_ne!(a[4..], b[4..]);
    }
}
