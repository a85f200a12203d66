//! The commands one NBD connection carries, and where libnbd reports them finished.
//! Each command holds a slot: a boxed [`ffi::Ticket`] whose address libnbd passes to
//! the completion callback, plus the request's tag and length on the engine's side.
//! The callback appends the slot to the connection's [`ffi::DoneList`]; the engine
//! turns it back into a completion without a libnbd call, and without a hash map:
//! a slot index is the key.

use crate::target::nbd::ffi::{DoneList, Ticket};

/// Slots of one connection: tickets at stable addresses, free ones reused.
pub struct Inflight {
    /// Where the callback reports; boxed so tickets can point at it while the
    /// engine's vectors move.
    done: Box<DoneList>,
    /// One ticket per slot ever used, each boxed: libnbd holds its address, which
    /// must not move when the vector grows.
    #[allow(clippy::vec_box)]
    tickets: Vec<Box<Ticket>>,
    /// (tag, len) of the request in each slot; `None` when the slot is free.
    reqs: Vec<Option<(u64, u32)>>,
    free: Vec<u32>,
    busy: usize,
    /// Scratch for [`Inflight::finish`].
    scratch: Vec<(u32, i32)>,
}

// SAFETY: the raw pointers inside the tickets point into this value's own boxes;
// moving the whole between threads moves them together, and libnbd runs the
// callback only inside calls made by the thread that owns the engine.
unsafe impl Send for Inflight {}

impl Inflight {
    pub fn with_capacity(n: usize) -> Self {
        Inflight {
            done: Box::default(),
            tickets: Vec::with_capacity(n),
            reqs: Vec::with_capacity(n),
            free: Vec::with_capacity(n),
            busy: 0,
            scratch: Vec::with_capacity(n),
        }
    }

    /// Requests in flight.
    pub fn len(&self) -> usize {
        self.busy
    }

    /// Takes a slot for request `tag` of `len` bytes; the ticket to give libnbd.
    pub fn claim(&mut self, tag: u64, len: u32) -> (u32, &Ticket) {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                let s = self.tickets.len() as u32;
                self.tickets.push(Box::new(Ticket::new(&self.done, s)));
                self.reqs.push(None);
                s
            }
        };
        self.reqs[slot as usize] = Some((tag, len));
        self.busy += 1;
        (slot, &self.tickets[slot as usize])
    }

    /// Frees `slot` (a request that finished, or that libnbd refused); its (tag, len).
    pub fn release(&mut self, slot: u32) -> Option<(u64, u32)> {
        let r = self.reqs.get_mut(slot as usize)?.take()?;
        self.free.push(slot);
        self.busy -= 1;
        Some(r)
    }

    /// Calls `f(tag, result)` for every request libnbd reported finished since the
    /// last call (result: bytes, or a negated errno) and frees their slots.
    pub fn finish(&mut self, mut f: impl FnMut(u64, i64)) {
        if self.done.is_empty() {
            return;
        }
        let mut got = std::mem::take(&mut self.scratch);
        self.done.take(&mut got);
        for &(slot, errno) in &got {
            if let Some((tag, len)) = self.release(slot) {
                f(
                    tag,
                    if errno == 0 {
                        len as i64
                    } else {
                        -(errno as i64)
                    },
                );
            }
        }
        got.clear();
        self.scratch = got;
    }

    /// Frees every slot; the tags of the requests they held. For a closed
    /// connection, whose requests libnbd will never report.
    pub fn drain(&mut self) -> Vec<u64> {
        let tags = (0..self.reqs.len() as u32)
            .filter_map(|s| self.release(s).map(|(tag, _)| tag))
            .collect();
        self.done.take(&mut Vec::new());
        tags
    }

    /// Frees the slot holding request `tag`, if any.
    pub fn forget(&mut self, tag: u64) -> bool {
        let slot = self
            .reqs
            .iter()
            .position(|r| r.is_some_and(|(t, _)| t == tag));
        slot.is_some_and(|s| self.release(s as u32).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_drained() {
        let mut f = Inflight::with_capacity(2);
        let (a, _) = f.claim(10, 4096);
        let (b, _) = f.claim(11, 512);
        assert_ne!(a, b);
        assert_eq!(f.len(), 2);
        assert_eq!(f.release(a), Some((10, 4096)));
        assert_eq!(f.release(a), None, "a slot is freed once");
        let (c, _) = f.claim(12, 8);
        assert_eq!(c, a, "the freed slot is reused");
        assert!(f.forget(11));
        assert!(!f.forget(11));
        assert_eq!(f.drain(), vec![12]);
        assert_eq!(f.len(), 0);
    }
}
