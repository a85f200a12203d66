//! The shared key map: two bytes per unit (`AtomicU16`) naming the write a unit should
//! hold, so a 1 TiB working set of 4 KiB units costs 512 MiB. Entry = 15-bit key
//! (1..=32767, 0 = never written; keys wrap 32767 → 1) | bit 15 `UNCERTAIN`. Beside
//! it, a small striped table of in-flight write counts (`AtomicU32`, at most 2^20
//! stripes = 4 MiB, one stripe per unit for working sets up to a million units).
//!
//! Protocol (argued case by case in `docs/data.md`):
//! - `begin_write`: stripe count += 1 (result `n0`); CAS the entry to the next key,
//!   setting `UNCERTAIN` if `n0 > 0` (another write may be in flight), else keeping the
//!   old flag; reload the count (`n1`). The write is *alone* if `n0 == 0 && n1 == 1`.
//!   The CAS makes concurrent writers of one unit take distinct, ordered keys.
//! - `end_write`: an alone, successful write whose key is still the entry's key clears
//!   `UNCERTAIN` (it certainly landed last); a failed write sets it; count -= 1.
//! - `begin_read` / `end_read`: load entry then count at submit, count then entry at
//!   completion. No change and no write in flight → the exact key is expected.
//!   Otherwise every key from the one possibly on disk at submit up to the newest
//!   issued by completion is accepted, and torn content is not reported.
//! - `UNCERTAIN` (writes overlapped, or one failed): the unit holds one of them or,
//!   on storage without atomic unit writes, a mix. Any key up to half the ring older
//!   is accepted and torn content is not reported until the next alone write lands.
//!   Stale and corruption detection pause on that unit; misplacement does not.
//!
//! Cost: two atomic RMWs plus two loads per written unit, two loads per read unit at
//! each end — only with verify on. Stripe collisions only make the map more lenient,
//! never stricter. Limit: a read that overlaps exactly a multiple of 32767 writes to
//! its unit, with none in flight at either end, is checked as if none had happened.

use std::sync::atomic::{AtomicU16, AtomicU32, Ordering::SeqCst};

/// Bits of an entry that hold the key.
pub const KEY_MASK: u16 = 0x7fff;
/// Entry flag: the unit's content is one of several recent keys.
pub const UNCERTAIN: u16 = 0x8000;
/// Number of distinct keys (1..=32767).
const RING: u32 = KEY_MASK as u32;
/// Half the ring: how far back an uncertain unit's key may be.
pub const HALF: u16 = KEY_MASK / 2;
/// Most in-flight-count stripes.
const MAX_STRIPES: u64 = 1 << 20;

/// The key after `k` (0, never written, is followed by 1; 32767 by 1).
#[inline]
pub fn next_key(k: u16) -> u16 {
    if k >= KEY_MASK {
        1
    } else {
        k + 1
    }
}

/// The key before `k` on the ring (`k` nonzero).
#[inline]
pub fn prev_key(k: u16) -> u16 {
    if k <= 1 {
        KEY_MASK
    } else {
        k - 1
    }
}

/// Steps forward from `older` to `newer` on the key ring (both nonzero).
#[inline]
pub fn key_distance(newer: u16, older: u16) -> u16 {
    ((newer as u32 + RING - older as u32) % RING) as u16
}

/// The set of keys a read may find in a unit: `newest` and up to `older` keys before
/// it. Built by [`KeyMap::end_read`] (or from a recovered journal) and consumed by
/// [`crate::data::check`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyExpectation {
    /// Newest acceptable key; 0 = the unit was never written: nothing to check.
    pub newest: u16,
    /// How many keys before `newest` are also acceptable.
    pub older: u16,
    /// The unit may still hold content from before its first write (no header).
    pub may_be_absent: bool,
    /// A write overlapped (or was in flight at a crash): content may be torn, so a
    /// checksum failure or missing header is not reported.
    pub raced: bool,
}

impl KeyExpectation {
    /// Exactly `key`, nothing else.
    pub fn exact(key: u16) -> Self {
        KeyExpectation {
            newest: key,
            older: 0,
            may_be_absent: key == 0,
            raced: false,
        }
    }

    /// What a map entry promises for a unit at rest (no write in flight).
    pub fn at_rest(entry: u16) -> Self {
        let key = entry & KEY_MASK;
        if entry & UNCERTAIN != 0 && key != 0 {
            KeyExpectation {
                newest: key,
                older: HALF,
                may_be_absent: true,
                // Overlapping writes without an atomic-write guarantee may leave a
                // mix of both; a failed write may leave anything.
                raced: true,
            }
        } else {
            KeyExpectation::exact(key)
        }
    }

    /// Whether there is anything to check (the unit has been written).
    #[inline]
    pub fn is_tracked(&self) -> bool {
        self.newest != 0
    }

    /// Whether a header carrying `key` is acceptable.
    #[inline]
    pub fn accepts(&self, key: u16) -> bool {
        key != 0 && key <= KEY_MASK && key_distance(self.newest, key) <= self.older
    }

    /// Whether `key` (not accepted) is older than every accepted key — a stale or lost
    /// write — rather than newer than any this run issued.
    pub fn is_older(&self, key: u16) -> bool {
        key != 0 && key <= KEY_MASK && key_distance(self.newest, key) <= HALF
    }

    /// The oldest acceptable key.
    pub fn oldest(&self) -> u16 {
        let mut k = self.newest;
        for _ in 0..self.older.min(HALF) {
            k = prev_key(k);
        }
        k
    }
}

/// What a write holds between `begin_write` and `end_write`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteTicket {
    pub unit: u64,
    /// The key to stamp into the unit's header.
    pub key: u16,
    /// Another write to this stripe was in flight at submit (flag for the journal).
    pub joined: bool,
    alone: bool,
}

/// What a read holds between `begin_read` and `end_read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadTicket {
    pub unit: u64,
    entry: u16,
    busy: u32,
}

/// The shared map of keys per unit for one target. Shared by all workers (`Arc`).
pub struct KeyMap {
    entries: Box<[AtomicU16]>,
    busy: Box<[AtomicU32]>,
    stripe_mask: u64,
}

impl std::fmt::Debug for KeyMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyMap")
            .field("units", &self.entries.len())
            .field("stripes", &self.busy.len())
            .finish()
    }
}

impl KeyMap {
    /// A map of `units` never-written units.
    pub fn new(units: u64) -> Self {
        Self::from_entries(vec![0u16; units as usize])
    }

    /// A map continuing from recovered entries (see [`crate::data::Recovered`]).
    pub fn from_entries(entries: Vec<u16>) -> Self {
        let units = entries.len() as u64;
        let entries = entries.into_boxed_slice();
        let len = entries.len();
        let ptr = Box::into_raw(entries) as *mut AtomicU16;
        // SAFETY: AtomicU16 has the same size, alignment and bit validity as u16
        // (documented in std), so a boxed [u16] is a valid boxed [AtomicU16] of the
        // same length; ownership moves from the old box to the new one.
        let entries = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) };
        let stripes = units.max(1).next_power_of_two().min(MAX_STRIPES);
        KeyMap {
            entries,
            busy: (0..stripes).map(|_| AtomicU32::new(0)).collect(),
            stripe_mask: stripes - 1,
        }
    }

    /// Number of units.
    pub fn units(&self) -> u64 {
        self.entries.len() as u64
    }

    #[inline]
    fn stripe(&self, unit: u64) -> &AtomicU32 {
        &self.busy[(unit & self.stripe_mask) as usize]
    }

    /// Call before stamping and submitting a write of `unit`; stamp `ticket.key`.
    #[inline]
    pub fn begin_write(&self, unit: u64) -> WriteTicket {
        let stripe = self.stripe(unit);
        let n0 = stripe.fetch_add(1, SeqCst);
        let e = &self.entries[unit as usize];
        let mut cur = e.load(SeqCst);
        let key = loop {
            let key = next_key(cur & KEY_MASK);
            let flag = if n0 > 0 { UNCERTAIN } else { cur & UNCERTAIN };
            match e.compare_exchange_weak(cur, key | flag, SeqCst, SeqCst) {
                Ok(_) => break key,
                Err(x) => cur = x,
            }
        };
        let n1 = stripe.load(SeqCst);
        WriteTicket {
            unit,
            key,
            joined: n0 > 0,
            alone: n0 == 0 && n1 == 1,
        }
    }

    /// Call when the write's completion is reaped. `ok` = the write succeeded in full.
    /// Returns whether the unit is now known to hold exactly this write's key (the
    /// journal's commit record carries it).
    #[inline]
    pub fn end_write(&self, t: WriteTicket, ok: bool) -> bool {
        let e = &self.entries[t.unit as usize];
        let mut clean = false;
        if !ok {
            e.fetch_or(UNCERTAIN, SeqCst);
        } else if t.alone {
            let cur = e.load(SeqCst);
            if cur == t.key {
                clean = true;
            } else if cur == t.key | UNCERTAIN {
                clean = e.compare_exchange(cur, t.key, SeqCst, SeqCst).is_ok();
            }
        }
        self.stripe(t.unit).fetch_sub(1, SeqCst);
        clean
    }

    /// Call just before submitting a read of `unit`.
    #[inline]
    pub fn begin_read(&self, unit: u64) -> ReadTicket {
        let entry = self.entries[unit as usize].load(SeqCst);
        let busy = self.stripe(unit).load(SeqCst);
        ReadTicket { unit, entry, busy }
    }

    /// Call when the read's completion is reaped, before checking the data.
    #[inline]
    pub fn end_read(&self, t: ReadTicket) -> KeyExpectation {
        let busy1 = self.stripe(t.unit).load(SeqCst);
        let e1 = self.entries[t.unit as usize].load(SeqCst);
        let (k0, u0, k1) = (t.entry & KEY_MASK, t.entry & UNCERTAIN != 0, e1 & KEY_MASK);
        let raced = t.busy != 0 || busy1 != 0 || t.entry != e1;
        if !raced {
            return KeyExpectation::at_rest(t.entry);
        }
        if k1 == 0 {
            return KeyExpectation::exact(0);
        }
        let (lo, absent) = if u0 {
            (None, true)
        } else if k0 == 0 {
            (Some(1), true)
        } else if t.busy != 0 {
            // At most one write (key k0) was in flight: the unit held k0 or its
            // predecessor (or nothing, if k0 may be the first key).
            (Some(prev_key(k0)), k0 == 1)
        } else {
            (Some(k0), false)
        };
        let older = match lo {
            Some(lo) => key_distance(k1, lo).min(HALF),
            None => HALF,
        };
        KeyExpectation {
            newest: k1,
            older,
            may_be_absent: absent,
            raced: true,
        }
    }

    /// What a unit at rest should hold (offline verify, or a quiescent run).
    pub fn expect_at_rest(&self, unit: u64) -> KeyExpectation {
        KeyExpectation::at_rest(self.entries[unit as usize].load(SeqCst))
    }

    /// A copy of every entry (for a journal checkpoint). Call when no write is in
    /// flight, or accept that in-flight units are captured mid-change.
    pub fn snapshot(&self) -> Vec<u16> {
        self.entries.iter().map(|e| e.load(SeqCst)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::header::{check, stamp, MismatchKind, Verified};
    use crate::rng::Rng;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::sync::Arc;

    const UNIT: usize = 512;
    const WORDS: usize = UNIT / 8;

    /// A RAM "device" whose units can be torn by concurrent copies, as buffered I/O
    /// or a device without atomic unit writes can tear them.
    struct Device {
        words: Vec<AtomicU64>,
    }

    impl Device {
        fn new(units: usize) -> Self {
            Device {
                words: (0..units * WORDS).map(|_| AtomicU64::new(0)).collect(),
            }
        }
        fn write(&self, unit: u64, buf: &[u8]) {
            for (i, w) in buf.chunks_exact(8).enumerate() {
                let v = u64::from_le_bytes(w.try_into().unwrap());
                self.words[unit as usize * WORDS + i].store(v, Relaxed);
                if i == WORDS / 2 {
                    std::thread::yield_now();
                }
            }
        }
        fn read(&self, unit: u64, buf: &mut [u8]) {
            for (i, w) in buf.chunks_exact_mut(8).enumerate() {
                let v = self.words[unit as usize * WORDS + i].load(Relaxed);
                w.copy_from_slice(&v.to_le_bytes());
            }
        }
    }

    enum Op {
        Write {
            t: WriteTicket,
            buf: Vec<u8>,
            landed: bool,
        },
        Read {
            t: ReadTicket,
            buf: Vec<u8>,
            done: bool,
        },
    }

    #[test]
    fn key_ring_arithmetic() {
        assert_eq!(next_key(0), 1);
        assert_eq!(next_key(KEY_MASK), 1);
        assert_eq!(prev_key(1), KEY_MASK);
        assert_eq!(key_distance(1, KEY_MASK), 1);
        assert_eq!(key_distance(5, 5), 0);
        let e = KeyExpectation {
            newest: 2,
            older: 3,
            may_be_absent: false,
            raced: true,
        };
        assert!(e.accepts(KEY_MASK) && e.accepts(KEY_MASK - 1) && !e.accepts(KEY_MASK - 2));
        assert_eq!(e.oldest(), KEY_MASK - 1);
        assert!(e.is_older(KEY_MASK - 2) && !e.is_older(3));
    }

    // Regression guard: verify must raise no false alarm when streams on several
    // threads write and read the same units concurrently, with out-of-order landing
    // and torn copies.
    #[test]
    fn overlapping_streams_raise_no_false_alarm() {
        const UNITS: u64 = 24;
        let map = Arc::new(KeyMap::new(UNITS));
        let dev = Arc::new(Device::new(UNITS as usize));
        let threads: Vec<_> = (0..8u32)
            .map(|w| {
                let map = Arc::clone(&map);
                let dev = Arc::clone(&dev);
                std::thread::spawn(move || {
                    let mut rng = Rng::new(w as u64 + 100);
                    let mut pending: Vec<Op> = Vec::new();
                    let (mut ok, mut torn, mut other) = (0u64, 0u64, 0u64);
                    for _ in 0..60_000 {
                        if pending.len() < 4 && rng.below(2) == 0 {
                            let unit = rng.below(UNITS);
                            if rng.below(2) == 0 {
                                let t = map.begin_write(unit);
                                let mut buf = vec![0u8; UNIT];
                                crate::data::pattern::fill_random(&mut buf, rng.next_u64());
                                stamp(&mut buf, 0, unit * UNIT as u64, w, t.key);
                                pending.push(Op::Write {
                                    t,
                                    buf,
                                    landed: false,
                                });
                            } else {
                                pending.push(Op::Read {
                                    t: map.begin_read(unit),
                                    buf: vec![0u8; UNIT],
                                    done: false,
                                });
                            }
                            continue;
                        }
                        if pending.is_empty() {
                            continue;
                        }
                        let i = rng.below(pending.len() as u64) as usize;
                        let finished = match &mut pending[i] {
                            Op::Write { t, buf, landed } => {
                                if !*landed {
                                    dev.write(t.unit, buf);
                                    *landed = true;
                                    false
                                } else {
                                    map.end_write(*t, true);
                                    true
                                }
                            }
                            Op::Read { t, buf, done } => {
                                if !*done {
                                    dev.read(t.unit, buf);
                                    *done = true;
                                    false
                                } else {
                                    let e = map.end_read(*t);
                                    match check(buf, 0, t.unit * UNIT as u64, &e) {
                                        Ok(Verified::Ok) => ok += 1,
                                        Ok(Verified::Torn) => torn += 1,
                                        Ok(_) => other += 1,
                                        Err(m) => panic!("false alarm: {m}"),
                                    }
                                    true
                                }
                            }
                        };
                        if finished {
                            pending.swap_remove(i);
                        }
                    }
                    // Drain.
                    for op in pending {
                        if let Op::Write { t, buf, landed } = op {
                            if !landed {
                                dev.write(t.unit, &buf);
                            }
                            map.end_write(t, true);
                        }
                    }
                    (ok, torn, other)
                })
            })
            .collect();
        let mut sum = (0, 0, 0);
        for t in threads {
            let (a, b, c) = t.join().unwrap();
            sum = (sum.0 + a, sum.1 + b, sum.2 + c);
        }
        eprintln!(
            "verified {} ok, {} torn, {} untracked/absent",
            sum.0, sum.1, sum.2
        );
        assert!(sum.0 > 10_000, "{sum:?}");
        // At rest every unit checks exactly, or within its uncertain window.
        for unit in 0..UNITS {
            let mut buf = vec![0u8; UNIT];
            dev.read(unit, &mut buf);
            let e = map.expect_at_rest(unit);
            check(&buf, 0, unit * UNIT as u64, &e).unwrap();
        }
    }

    #[test]
    fn lost_write_is_stale_and_lone_writes_restore_precision() {
        let map = KeyMap::new(4);
        let dev = Device::new(4);
        let write = |landed: bool| {
            let t = map.begin_write(1);
            let mut buf = vec![0u8; UNIT];
            stamp(&mut buf, 0, UNIT as u64, 0, t.key);
            if landed {
                dev.write(1, &buf);
            }
            map.end_write(t, true)
        };
        let read = || {
            let t = map.begin_read(1);
            let mut buf = vec![0u8; UNIT];
            dev.read(1, &mut buf);
            let e = map.end_read(t);
            check(&buf, 0, UNIT as u64, &e)
        };
        // Never written, never read-checked.
        assert_eq!(read(), Ok(Verified::Untracked));
        assert!(write(true));
        assert_eq!(read(), Ok(Verified::Ok));
        // The device acknowledges a write but drops it.
        write(false);
        assert_eq!(read().unwrap_err().kind, MismatchKind::Stale);
        // Two overlapping writes: either may land last; both are accepted.
        let a = map.begin_write(1);
        let b = map.begin_write(1);
        assert!(b.joined);
        let mut buf = vec![0u8; UNIT];
        stamp(&mut buf, 0, UNIT as u64, 0, a.key);
        dev.write(1, &buf);
        assert!(!map.end_write(b, true));
        assert!(!map.end_write(a, true));
        assert_eq!(read(), Ok(Verified::Ok));
        // The next lone write makes the unit exact again.
        assert!(write(true));
        write(false);
        assert_eq!(read().unwrap_err().kind, MismatchKind::Stale);
    }

    #[test]
    fn first_write_in_flight_allows_absent() {
        let map = KeyMap::new(2);
        let r = map.begin_read(0);
        let w = map.begin_write(0);
        let e = map.end_read(r);
        assert!(e.may_be_absent && e.raced && e.accepts(w.key));
        map.end_write(w, true);
        assert_eq!(map.expect_at_rest(0), KeyExpectation::exact(w.key));
    }
}
