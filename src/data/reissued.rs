//! Writes issued twice: when the multipath engine re-issues a write on another path
//! after the first path timed out or broke, the first copy may still be executed by
//! the stalled server later — after the re-issued copy, and even after a newer write
//! to the same unit. The unit then legitimately holds the older generation. This
//! table remembers, per unit, the keys of such writes, so verification can accept
//! an intact copy of one of them as "ambiguous but acceptable" instead of calling it
//! a lost write.
//!
//! Re-issues are rare (a path failure), so the table is a plain map behind a mutex;
//! a flag keeps the common case (no re-issue ever) to one atomic load per check.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Keys remembered per unit: the most recent few re-issued writes of it.
const KEYS_PER_UNIT: usize = 8;

/// Per unit, the keys of writes that were issued on more than one path.
#[derive(Debug, Default)]
pub struct ReissuedWrites {
    any: AtomicBool,
    units: Mutex<HashMap<u64, Vec<u16>>>,
}

impl ReissuedWrites {
    /// Remembers that a copy of the write stamped `key` may land on `unit` late.
    pub fn add(&self, unit: u64, key: u16) {
        let mut g = self.units.lock().unwrap_or_else(|p| p.into_inner());
        let keys = g.entry(unit).or_default();
        if !keys.contains(&key) {
            if keys.len() == KEYS_PER_UNIT {
                keys.remove(0);
            }
            keys.push(key);
        }
        self.any.store(true, Ordering::Release);
    }

    /// Whether `unit` may hold a late copy of the write stamped `key`.
    #[inline]
    pub fn contains(&self, unit: u64, key: u16) -> bool {
        if !self.any.load(Ordering::Acquire) {
            return false;
        }
        let g = self.units.lock().unwrap_or_else(|p| p.into_inner());
        g.get(&unit).is_some_and(|k| k.contains(&key))
    }

    /// Units with at least one re-issued write.
    pub fn units(&self) -> usize {
        self.units.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_recent_keys_per_unit() {
        let r = ReissuedWrites::default();
        assert!(!r.contains(3, 7));
        r.add(3, 7);
        r.add(3, 7);
        assert!(r.contains(3, 7));
        assert!(!r.contains(3, 8) && !r.contains(4, 7));
        for k in 10..10 + KEYS_PER_UNIT as u16 {
            r.add(3, k);
        }
        // The oldest key made room for the newest.
        assert!(!r.contains(3, 7) && r.contains(3, 10 + KEYS_PER_UNIT as u16 - 1));
        assert_eq!(r.units(), 1);
    }
}
