//! The verify header: 32 bytes at the start of every unit naming where and by which
//! write it was written, plus a checksum of the whole unit. Little-endian layout:
//!
//! | bytes  | field      | meaning                                              |
//! |--------|------------|------------------------------------------------------|
//! | 0..4   | magic      | `b"IOsc"`: absent = the unit never held our data      |
//! | 4..6   | target     | target id (index in the run's target list)           |
//! | 6..8   | key        | per-unit write key (1..=32767, see `keymap`)          |
//! | 8..12  | stream     | stream that wrote it (diagnostics only)              |
//! | 12..16 | unit_bytes | unit size, so another unit size reads as misplaced   |
//! | 16..24 | offset     | byte offset of the unit in the target                |
//! | 24..32 | checksum   | `hash64(unit[32..], seed = hash64(header[0..24]))`   |
//!
//! `check` classifies in a fixed order, so each class means one thing: no magic →
//! never written; checksum fails → corrupted; wrong place → misplaced; older key →
//! stale (lost write); newer key → unexpected. The header makes every unit unique, so
//! with verify on, dedup applies to the unit body after it (`docs/data.md`).

use crate::data::hash::hash64;
use crate::data::keymap::KeyExpectation;
use std::fmt;

/// Bytes of the header at the start of each unit.
pub const HEADER_BYTES: usize = 32;
/// First four bytes of every stamped unit.
pub const MAGIC: [u8; 4] = *b"IOsc";

#[inline(always)]
fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}
#[inline(always)]
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().unwrap())
}
#[inline(always)]
fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().unwrap())
}

/// Checksum of a unit whose header fields (bytes 0..24) are as given.
#[inline]
fn checksum(head: &[u8], body: &[u8]) -> u64 {
    hash64(body, hash64(&head[..24], 0x10_5c0e))
}

/// Writes the header into `unit` (the whole unit, after its content is generated).
/// `unit.len()` must be at least [`HEADER_BYTES`] and is recorded as the unit size.
#[inline]
pub fn stamp(unit: &mut [u8], target: u16, offset: u64, stream: u32, key: u16) {
    let (h, body) = unit.split_at_mut(HEADER_BYTES);
    h[0..4].copy_from_slice(&MAGIC);
    h[4..6].copy_from_slice(&target.to_le_bytes());
    h[6..8].copy_from_slice(&key.to_le_bytes());
    h[8..12].copy_from_slice(&stream.to_le_bytes());
    h[12..16].copy_from_slice(&((body.len() + HEADER_BYTES) as u32).to_le_bytes());
    h[16..24].copy_from_slice(&offset.to_le_bytes());
    let c = checksum(h, body);
    h[24..32].copy_from_slice(&c.to_le_bytes());
}

/// What a good read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verified {
    /// Header intact, right place, acceptable key.
    Ok,
    /// The map says the unit was never written: nothing to check.
    Untracked,
    /// No header, and the unit may legitimately not have been written yet.
    Absent,
    /// A write overlapped the read (or was in flight at a crash) and the content is a
    /// mix: expected, not reported.
    Torn,
}

/// Class of a verify failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MismatchKind {
    /// The header is there but the checksum does not match the unit.
    Corrupted,
    /// A valid unit, written for another offset, target or unit size.
    Misplaced,
    /// A valid unit with an older key than expected: a lost (or stale) write.
    Stale,
    /// No header where the map says a write completed.
    NeverWritten,
    /// A valid unit with a key newer than any this run issued (another run wrote it
    /// without the journal, or the journal lost intents).
    Unexpected,
}

impl MismatchKind {
    /// Lower-case name for reports.
    pub fn name(self) -> &'static str {
        match self {
            MismatchKind::Corrupted => "corrupted",
            MismatchKind::Misplaced => "misplaced",
            MismatchKind::Stale => "stale",
            MismatchKind::NeverWritten => "never-written",
            MismatchKind::Unexpected => "unexpected",
        }
    }
}

/// The header fields as read (meaningful only where `magic` is true).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub magic: bool,
    pub target: u16,
    pub key: u16,
    pub stream: u32,
    pub unit_bytes: u32,
    pub offset: u64,
    pub checksum_stored: u64,
    pub checksum_computed: u64,
}

/// A verify failure, with what was expected and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub kind: MismatchKind,
    pub target: u16,
    pub offset: u64,
    pub expected: KeyExpectation,
    pub found: Found,
    /// The first 48 bytes of the unit, hex.
    pub excerpt_hex: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &self.expected;
        let g = &self.found;
        write!(
            f,
            "{}: target {} offset {} (0x{:x}): expected key ",
            self.kind.name(),
            self.target,
            self.offset,
            self.offset
        )?;
        if e.older == 0 {
            write!(f, "{}", e.newest)?;
        } else {
            write!(f, "{}..={}", e.oldest(), e.newest)?;
        }
        if g.magic {
            write!(
                f,
                ", found target {} offset {} key {} stream {} unit {} checksum {:016x} (computed {:016x})",
                g.target, g.offset, g.key, g.stream, g.unit_bytes, g.checksum_stored, g.checksum_computed
            )?;
        } else {
            write!(f, ", found no header")?;
        }
        write!(f, "; bytes: {}", self.excerpt_hex)
    }
}

impl std::error::Error for Mismatch {}

fn hex(b: &[u8]) -> String {
    use fmt::Write;
    let mut s = String::with_capacity(b.len() * 3);
    for (i, x) in b.iter().enumerate() {
        if i > 0 && i % 8 == 0 {
            s.push(' ');
        }
        let _ = write!(s, "{x:02x}");
    }
    s
}

/// Checks one unit read from `target` at `offset` against what the key map expects.
/// Allocates only when it reports a mismatch.
#[inline]
pub fn check(
    unit: &[u8],
    target: u16,
    offset: u64,
    expect: &KeyExpectation,
) -> Result<Verified, Mismatch> {
    if !expect.is_tracked() {
        return Ok(Verified::Untracked);
    }
    let (h, body) = unit.split_at(HEADER_BYTES);
    let stored = u64_at(h, 24);
    let magic = h[0..4] == MAGIC;
    let computed = checksum(h, body);
    let found = Found {
        magic,
        target: u16_at(h, 4),
        key: u16_at(h, 6),
        stream: u32_at(h, 8),
        unit_bytes: u32_at(h, 12),
        offset: u64_at(h, 16),
        checksum_stored: stored,
        checksum_computed: computed,
    };
    let fail = |kind| {
        Err(Mismatch {
            kind,
            target,
            offset,
            expected: *expect,
            found,
            excerpt_hex: hex(&unit[..unit.len().min(48)]),
        })
    };
    if !magic {
        if expect.raced {
            return Ok(Verified::Torn);
        }
        if expect.may_be_absent {
            return Ok(Verified::Absent);
        }
        // A header whose magic alone rotted is corruption, not absence.
        let mut fixed = [0u8; 24];
        fixed.copy_from_slice(&h[..24]);
        fixed[0..4].copy_from_slice(&MAGIC);
        if checksum(&fixed, body) == stored {
            return fail(MismatchKind::Corrupted);
        }
        return fail(MismatchKind::NeverWritten);
    }
    if computed != stored {
        if expect.raced {
            return Ok(Verified::Torn);
        }
        return fail(MismatchKind::Corrupted);
    }
    let placed =
        found.target == target && found.offset == offset && found.unit_bytes as usize == unit.len();
    if placed && expect.accepts(found.key) {
        return Ok(Verified::Ok);
    }
    if expect.may_be_absent {
        // The unit may still hold what was there before this run first wrote it,
        // and that can be an earlier run's whole unit: its header is valid but its
        // key belongs to that run's sequence, not this one's.
        return Ok(Verified::Absent);
    }
    if !placed {
        return fail(MismatchKind::Misplaced);
    }
    if expect.is_older(found.key) {
        fail(MismatchKind::Stale)
    } else {
        fail(MismatchKind::Unexpected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::pattern::{DataSpec, Generator};

    fn unit(key: u16, offset: u64) -> Vec<u8> {
        let mut g = Generator::new(&DataSpec::default(), 9);
        let mut u = vec![0u8; 4096];
        g.fill(&mut u, offset);
        stamp(&mut u, 3, offset, 7, key);
        u
    }

    #[test]
    fn round_trip() {
        let u = unit(5, 8192);
        assert_eq!(
            check(&u, 3, 8192, &KeyExpectation::exact(5)),
            Ok(Verified::Ok)
        );
        assert_eq!(
            check(&u, 3, 8192, &KeyExpectation::exact(0)),
            Ok(Verified::Untracked)
        );
    }

    #[test]
    fn each_mismatch_class() {
        let kind = |u: &[u8], off, e: KeyExpectation| check(u, 3, off, &e).unwrap_err().kind;
        let mut u = unit(5, 8192);
        u[1000] ^= 0x10;
        assert_eq!(
            kind(&u, 8192, KeyExpectation::exact(5)),
            MismatchKind::Corrupted
        );
        let mut u = unit(5, 8192);
        u[0] ^= 1;
        assert_eq!(
            kind(&u, 8192, KeyExpectation::exact(5)),
            MismatchKind::Corrupted
        );
        let u = unit(5, 8192);
        assert_eq!(
            kind(&u, 4096, KeyExpectation::exact(5)),
            MismatchKind::Misplaced
        );
        assert_eq!(
            check(&u, 4, 8192, &KeyExpectation::exact(5))
                .unwrap_err()
                .kind,
            MismatchKind::Misplaced
        );
        assert_eq!(
            kind(&u, 8192, KeyExpectation::exact(6)),
            MismatchKind::Stale
        );
        assert_eq!(
            kind(&u, 8192, KeyExpectation::exact(4)),
            MismatchKind::Unexpected
        );
        let zero = vec![0u8; 4096];
        let m = check(&zero, 3, 8192, &KeyExpectation::exact(5)).unwrap_err();
        assert_eq!(m.kind, MismatchKind::NeverWritten);
        let text = m.to_string();
        assert!(
            text.contains("never-written") && text.contains("0x2000"),
            "{text}"
        );
        // Wrap: key 32767 is one older than key 1.
        let u = unit(32767, 0);
        assert_eq!(kind(&u, 0, KeyExpectation::exact(1)), MismatchKind::Stale);
        let u = unit(1, 0);
        assert_eq!(
            kind(&u, 0, KeyExpectation::exact(32767)),
            MismatchKind::Unexpected
        );
    }

    #[test]
    fn raced_reads_tolerate_torn_and_ranges() {
        let mut u = unit(5, 0);
        let raced = KeyExpectation {
            newest: 7,
            older: 3,
            may_be_absent: false,
            raced: true,
        };
        assert_eq!(check(&u, 3, 0, &raced), Ok(Verified::Ok));
        assert_eq!(raced.oldest(), 4);
        u[2000] ^= 1;
        assert_eq!(check(&u, 3, 0, &raced), Ok(Verified::Torn));
        let u = unit(3, 0);
        assert_eq!(
            check(&u, 3, 0, &raced).unwrap_err().kind,
            MismatchKind::Stale
        );
        let absent = KeyExpectation {
            may_be_absent: true,
            raced: false,
            ..raced
        };
        assert_eq!(check(&[0u8; 4096], 3, 0, &absent), Ok(Verified::Absent));
    }

    #[test]
    fn a_unit_not_yet_written_by_this_run_may_hold_an_earlier_runs_unit() {
        // A read racing this run's first write (key 1) of a unit finds the unit an
        // earlier run left there (its key 2): that is the content from before the
        // write, not a mismatch. Once the write is known to have landed, it is.
        let first_write = KeyExpectation {
            newest: 1,
            older: 0,
            may_be_absent: true,
            raced: true,
        };
        let earlier = unit(2, 8192);
        assert_eq!(check(&earlier, 3, 8192, &first_write), Ok(Verified::Absent));
        assert_eq!(
            check(&unit(1, 8192), 3, 8192, &first_write),
            Ok(Verified::Ok)
        );
        assert_eq!(
            check(&earlier, 3, 8192, &KeyExpectation::exact(1))
                .unwrap_err()
                .kind,
            MismatchKind::Unexpected
        );
    }
}
