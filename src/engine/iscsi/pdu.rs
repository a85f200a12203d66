//! iSCSI PDUs as the own initiator writes and reads them (RFC 7143): the 48-byte
//! basic header segment of each kind it sends, and the fields it reads from the
//! target's. Sequence numbers compare in serial arithmetic (RFC 1982): they wrap.

/// The basic header segment's length.
pub const BHS: usize = 48;
/// The "no task" tag (ITT and TTT).
pub const NO_TAG: u32 = 0xffff_ffff;

pub const OP_NOP_OUT: u8 = 0x00;
pub const OP_SCSI_CMD: u8 = 0x01;
pub const OP_LOGIN_REQ: u8 = 0x03;
pub const OP_DATA_OUT: u8 = 0x05;
pub const OP_NOP_IN: u8 = 0x20;
pub const OP_SCSI_RSP: u8 = 0x21;
pub const OP_LOGIN_RSP: u8 = 0x23;
pub const OP_DATA_IN: u8 = 0x25;
pub const OP_R2T: u8 = 0x31;
pub const OP_ASYNC: u8 = 0x32;
pub const OP_REJECT: u8 = 0x3f;
/// The opcode's immediate-delivery bit (the command takes no CmdSN of its own).
const IMMEDIATE: u8 = 0x40;
/// The final bit of a PDU's flags.
pub const FINAL: u8 = 0x80;
/// Data-In's status bit: the PDU carries the command's status.
pub const DATA_IN_STATUS: u8 = 0x01;

/// `a` is at or before `b` in serial arithmetic.
pub fn sn_le(a: u32, b: u32) -> bool {
    b.wrapping_sub(a) as i32 >= 0
}

/// The 8-byte LUN field: peripheral addressing below 256, flat space above (as
/// libiscsi writes it).
pub fn lun_field(lun: u32) -> [u8; 8] {
    let mut f = [0u8; 8];
    if lun < 256 {
        f[1] = lun as u8;
    } else {
        f[0] = 0x40 | ((lun >> 8) & 0x3f) as u8;
        f[1] = lun as u8;
    }
    f
}

/// Zeros that pad a data segment of `len` bytes to a multiple of four.
pub fn pad(len: usize) -> usize {
    (4 - len % 4) % 4
}

fn put32(h: &mut [u8; BHS], at: usize, v: u32) {
    h[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

/// A header with its opcode, flags and data segment length.
fn head(opcode: u8, flags: u8, data_len: u32) -> [u8; BHS] {
    let mut h = [0u8; BHS];
    h[0] = opcode;
    h[1] = flags;
    h[5..8].copy_from_slice(&data_len.to_be_bytes()[1..]);
    h
}

/// The numbers every command carries.
#[derive(Debug, Clone, Copy)]
pub struct Numbers {
    pub itt: u32,
    pub cmd_sn: u32,
    pub exp_stat_sn: u32,
}

/// A Login Request: `flags` are T, C, CSG and NSG; `text` bytes of keys follow.
pub fn login(flags: u8, isid: [u8; 6], tsih: u16, n: Numbers, text: u32) -> [u8; BHS] {
    let mut h = head(OP_LOGIN_REQ | IMMEDIATE, flags, text);
    h[8..14].copy_from_slice(&isid);
    h[14..16].copy_from_slice(&tsih.to_be_bytes());
    put32(&mut h, 16, n.itt);
    put32(&mut h, 24, n.cmd_sn);
    put32(&mut h, 28, n.exp_stat_sn);
    h
}

/// A SCSI Command for READ (16) or WRITE (16) of `blocks` blocks at `lba`:
/// `expected` bytes move in all, `immediate` of them in this PDU's data segment;
/// `more_unsolicited`: Data-Out PDUs follow without an R2T.
pub struct Rw {
    pub write: bool,
    pub lun: [u8; 8],
    pub lba: u64,
    pub blocks: u32,
    pub expected: u32,
    pub immediate: u32,
    pub more_unsolicited: bool,
}

pub fn command(c: &Rw, n: Numbers) -> [u8; BHS] {
    // F unless unsolicited Data-Out follows; R or W; task attribute Simple.
    let dir = if c.write { 0x20 } else { 0x40 };
    let fin = if c.more_unsolicited { 0 } else { FINAL };
    let mut h = head(OP_SCSI_CMD, fin | dir | 0x01, c.immediate);
    h[8..16].copy_from_slice(&c.lun);
    put32(&mut h, 16, n.itt);
    put32(&mut h, 20, c.expected);
    put32(&mut h, 24, n.cmd_sn);
    put32(&mut h, 28, n.exp_stat_sn);
    // The CDB: READ (16) 0x88 or WRITE (16) 0x8a, LBA, transfer length in blocks.
    h[32] = if c.write { 0x8a } else { 0x88 };
    h[34..42].copy_from_slice(&c.lba.to_be_bytes());
    h[42..46].copy_from_slice(&c.blocks.to_be_bytes());
    h
}

/// TEST UNIT READY: no data either way.
pub fn test_unit_ready(lun: [u8; 8], n: Numbers) -> [u8; BHS] {
    let mut h = head(OP_SCSI_CMD, FINAL | 0x01, 0);
    h[8..16].copy_from_slice(&lun);
    put32(&mut h, 16, n.itt);
    put32(&mut h, 24, n.cmd_sn);
    put32(&mut h, 28, n.exp_stat_sn);
    h
}

/// The sense key of fixed (0x70, 0x71) or descriptor (0x72, 0x73) sense data.
pub fn sense_key(sense: &[u8]) -> Option<u8> {
    match sense.first()? & 0x7f {
        0x70 | 0x71 => sense.get(2).map(|k| k & 0x0f),
        0x72 | 0x73 => sense.get(1).map(|k| k & 0x0f),
        _ => None,
    }
}

/// One Data-Out PDU of a write: `len` bytes at `offset` of its buffer, answering
/// the R2T `ttt` ([`NO_TAG`]: unsolicited).
pub struct DataOut {
    pub lun: [u8; 8],
    pub itt: u32,
    pub ttt: u32,
    pub data_sn: u32,
    pub offset: u32,
    pub len: u32,
    pub last: bool,
}

pub fn data_out(d: &DataOut, exp_stat_sn: u32) -> [u8; BHS] {
    let mut h = head(OP_DATA_OUT, if d.last { FINAL } else { 0 }, d.len);
    h[8..16].copy_from_slice(&d.lun);
    put32(&mut h, 16, d.itt);
    put32(&mut h, 20, d.ttt);
    put32(&mut h, 28, exp_stat_sn);
    put32(&mut h, 36, d.data_sn);
    put32(&mut h, 40, d.offset);
    h
}

/// The NOP-Out that answers a target's ping (`ttt`), echoing `len` bytes of its
/// data; immediate, so it takes no CmdSN.
pub fn nop_reply(lun: [u8; 8], ttt: u32, cmd_sn: u32, exp_stat_sn: u32, len: u32) -> [u8; BHS] {
    let mut h = head(OP_NOP_OUT | IMMEDIATE, FINAL, len);
    h[8..16].copy_from_slice(&lun);
    put32(&mut h, 16, NO_TAG);
    put32(&mut h, 20, ttt);
    put32(&mut h, 24, cmd_sn);
    put32(&mut h, 28, exp_stat_sn);
    h
}

/// A target's header.
#[derive(Clone, Copy)]
pub struct In<'a>(pub &'a [u8]);

impl In<'_> {
    fn u32_at(&self, at: usize) -> u32 {
        u32::from_be_bytes(self.0[at..at + 4].try_into().expect("4 bytes"))
    }
    pub fn opcode(&self) -> u8 {
        self.0[0] & 0x3f
    }
    pub fn flags(&self) -> u8 {
        self.0[1]
    }
    /// Byte 2: a SCSI Response's response, a Reject's reason.
    pub fn byte2(&self) -> u8 {
        self.0[2]
    }
    /// Byte 3: the SCSI status of a SCSI Response or a Data-In with status.
    pub fn status(&self) -> u8 {
        self.0[3]
    }
    /// Bytes after the header: additional header segments, then the data
    /// segment and its padding.
    pub fn ahs_bytes(&self) -> usize {
        self.0[4] as usize * 4
    }
    pub fn data_len(&self) -> usize {
        u32::from_be_bytes([0, self.0[5], self.0[6], self.0[7]]) as usize
    }
    pub fn itt(&self) -> u32 {
        self.u32_at(16)
    }
    pub fn ttt(&self) -> u32 {
        self.u32_at(20)
    }
    pub fn stat_sn(&self) -> u32 {
        self.u32_at(24)
    }
    pub fn exp_cmd_sn(&self) -> u32 {
        self.u32_at(28)
    }
    pub fn max_cmd_sn(&self) -> u32 {
        self.u32_at(32)
    }
    /// Data-In's and R2T's buffer offset.
    pub fn buffer_offset(&self) -> u32 {
        self.u32_at(40)
    }
    /// R2T's desired data transfer length.
    pub fn desired_len(&self) -> u32 {
        self.u32_at(44)
    }
    /// An Async Message's event.
    pub fn async_event(&self) -> u8 {
        self.0[36]
    }
    /// A Login Response's status class and detail.
    pub fn login_status(&self) -> (u8, u8) {
        (self.0[36], self.0[37])
    }
    pub fn tsih(&self) -> u16 {
        u16::from_be_bytes([self.0[14], self.0[15]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_command_carries_its_cdb_numbers_and_immediate_data() {
        let c = Rw {
            write: true,
            lun: lun_field(1),
            lba: 0x1_0000_0002,
            blocks: 8,
            expected: 4096,
            immediate: 4096,
            more_unsolicited: false,
        };
        let n = Numbers {
            itt: 7,
            cmd_sn: 0xffff_fffe,
            exp_stat_sn: 3,
        };
        let h = command(&c, n);
        assert_eq!(&h[..8], &[0x01, 0xa1, 0, 0, 0, 0, 0x10, 0]);
        assert_eq!(&h[8..10], &[0, 1], "LUN 1, peripheral addressing");
        let i = In(&h);
        assert_eq!((i.itt(), i.ttt(), i.stat_sn()), (7, 4096, 0xffff_fffe));
        assert_eq!(i.data_len(), 4096);
        assert_eq!(
            &h[32..48],
            &[0x8a, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 8, 0, 0]
        );
        assert_eq!(lun_field(300)[..2], [0x41, 0x2c]);
    }

    #[test]
    fn sequence_numbers_compare_across_the_wrap() {
        assert!(sn_le(5, 5) && sn_le(5, 6) && !sn_le(6, 5));
        assert!(sn_le(0xffff_fff0, 3) && !sn_le(3, 0xffff_fff0));
        assert_eq!((pad(4096), pad(5), pad(7)), (0, 3, 1));
        // tgtd's unit attention after a login: fixed sense, key 6, ASC 0x29.
        let sense = [0x70, 0, 6, 0, 0, 0, 0, 0x0a, 0, 0, 0, 0, 0x29, 0];
        assert_eq!(sense_key(&sense), Some(6));
        assert_eq!(sense_key(&[0x72, 0x05]), Some(5));
        assert_eq!(sense_key(&[]), None);
    }
}
