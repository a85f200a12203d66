//! The few bytes fio's net engine puts on the wire besides the payload, so an
//! ioscope end and a fio end understand each other over UDP: the 8-byte link
//! messages (a magic word and a command: "open" before the first datagram, "close"
//! after the last) and the 24-byte trailer a UDP sender stamps at the end of every
//! datagram of at least 24 bytes (a magic word, a sequence number, the datagram's
//! size), from which the receiver counts lost datagrams. fio writes the open
//! message in network byte order and the close message and trailer in little
//! endian; both are kept as fio has them.

/// The magic word of the link messages.
const LINK_MAGIC: u32 = 0x6c69_6e6b;
/// Link message commands.
const LINK_OPEN: u32 = 0x98;
const LINK_CLOSE: u32 = 0x89;
/// The magic word of a sequence trailer.
const SEQ_MAGIC: u64 = 0x6573_7571_6e55_6563;

/// Bytes of a link message.
pub const LINK_BYTES: usize = 8;
/// Bytes of a sequence trailer.
pub const SEQ_BYTES: usize = 24;

/// The message a UDP sender sends before its first datagram.
pub fn open_message() -> [u8; LINK_BYTES] {
    let mut m = [0u8; LINK_BYTES];
    m[..4].copy_from_slice(&LINK_MAGIC.to_be_bytes());
    m[4..].copy_from_slice(&LINK_OPEN.to_be_bytes());
    m
}

/// The message a sender sends after its last datagram.
pub fn close_message() -> [u8; LINK_BYTES] {
    let mut m = [0u8; LINK_BYTES];
    m[..4].copy_from_slice(&LINK_MAGIC.to_le_bytes());
    m[4..].copy_from_slice(&LINK_CLOSE.to_le_bytes());
    m
}

pub fn is_open(b: &[u8]) -> bool {
    b == open_message()
}

pub fn is_close(b: &[u8]) -> bool {
    b == close_message()
}

/// Stamps the trailer of datagram number `seq` (nothing when `buf` is too short).
pub fn stamp(buf: &mut [u8], seq: u64) {
    let n = buf.len();
    if n < SEQ_BYTES {
        return;
    }
    let t = &mut buf[n - SEQ_BYTES..];
    t[..8].copy_from_slice(&SEQ_MAGIC.to_le_bytes());
    t[8..16].copy_from_slice(&seq.to_le_bytes());
    t[16..].copy_from_slice(&(n as u64).to_le_bytes());
}

/// The sequence number a received datagram carries, if it has a trailer whose
/// size matches its own.
pub fn sequence(buf: &[u8]) -> Option<u64> {
    let n = buf.len();
    if n < SEQ_BYTES {
        return None;
    }
    let t = &buf[n - SEQ_BYTES..];
    let word = |r: std::ops::Range<usize>| u64::from_le_bytes(t[r].try_into().unwrap_or([0; 8]));
    (word(0..8) == SEQ_MAGIC && word(16..24) == n as u64).then(|| word(8..16))
}

/// Counts datagrams lost from the sequence numbers seen.
#[derive(Debug, Default)]
pub struct LossCounter {
    next: u64,
    pub lost: u64,
}

impl LossCounter {
    pub fn saw(&mut self, seq: u64) {
        if seq > self.next {
            self.lost += seq - self.next;
        }
        self.next = self.next.max(seq + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailer_reads_back_and_gaps_count_as_lost() {
        let mut b = vec![0u8; 64];
        stamp(&mut b, 7);
        assert_eq!(sequence(&b), Some(7));
        assert_eq!(sequence(&b[..40]), None);
        let mut c = LossCounter::default();
        for s in [0, 1, 4, 5, 3] {
            c.saw(s);
        }
        assert_eq!(c.lost, 2);
        assert!(is_open(&open_message()) && is_close(&close_message()));
        assert!(!is_open(&close_message()));
    }
}
