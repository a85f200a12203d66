//! The requests in flight of a driver protocol whose library reports completions by
//! tag into one list per thread (libiscsi, libnfs: `thread_done_list!` in
//! `target::dylib`), shared by every engine on the thread. The table says which
//! reports are this engine's and on which link each request went; a hash map keyed
//! by tag (Fx hashing: a few instructions, where SipHash took ~280 per I/O),
//! preallocated for the engine's capacity, so a request costs no allocation.

use super::IoRequest;
use rustc_hash::FxHashMap;

/// The bookkeeping of a driver protocol whose requests in flight are its one `tags`
/// table for all its links, a link keeping nothing of its own (libiscsi, libnfs): the
/// table made for the engine's capacity; each connection polled for the events the
/// library asks for; every request in flight counted in a lost link's message and by
/// the driver; and, when the engine goes away, this engine's reports dropped from the
/// thread's list with the library's `discard_done` (`$discard`), so none stays for
/// another engine on the thread to take as its own.
macro_rules! tag_table_bookkeeping {
    ($discard:path) => {
        type LinkState = ();

        fn with_capacity(capacity: usize) -> Self {
            let tags = $crate::engine::tag_table::TagTable::with_capacity(capacity);
            Self { tags }
        }

        fn link_state(&self) {}

        fn pollfd(conn: &Self::Conn) -> libc::pollfd {
            $crate::engine::wait::pollfd(conn.fd(), conn.which_events())
        }

        fn loss_count(&self, _state: &()) -> usize {
            self.tags.len()
        }

        fn in_flight(&self, _: &[Option<$crate::engine::driver::Target<Self>>]) -> usize {
            self.tags.len()
        }

        fn dropped(&mut self) {
            $discard(|tag| self.tags.holds(tag));
        }
    };
}
pub(crate) use tag_table_bookkeeping;

/// Tag → (target, link, len) of each request in flight, and the scratch the
/// thread's reports are drained into (`V`: the library's result for one request).
pub struct TagTable<V> {
    inflight: FxHashMap<u64, (u32, u32, u32)>,
    done: Vec<(u64, V)>,
}

impl<V> TagTable<V> {
    pub fn with_capacity(capacity: usize) -> Self {
        TagTable {
            inflight: FxHashMap::with_capacity_and_hasher(capacity, Default::default()),
            done: Vec::with_capacity(capacity),
        }
    }

    /// Requests in flight.
    pub fn len(&self) -> usize {
        self.inflight.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inflight.is_empty()
    }

    /// `req` went out on link `(t, c)`.
    pub fn sent(&mut self, req: &IoRequest, (t, c): (usize, usize)) {
        self.inflight.insert(req.tag, (t as u32, c as u32, req.len));
    }

    /// The link request `tag` went out on, if it is in flight.
    pub fn link_of(&self, tag: u64) -> Option<(usize, usize)> {
        let &(t, c, _) = self.inflight.get(&tag)?;
        Some((t as usize, c as usize))
    }

    /// Forgets request `tag`; the link it went out on.
    pub fn remove(&mut self, tag: u64) -> Option<(usize, usize)> {
        let (t, c, _) = self.inflight.remove(&tag)?;
        Some((t as usize, c as usize))
    }

    /// Whether request `tag` is this engine's and in flight.
    pub fn holds(&self, tag: u64) -> bool {
        self.inflight.contains_key(&tag)
    }

    /// Drains the thread's reports with `take` and calls `f(tag, result, (t, c),
    /// len)` for each of this engine's, forgetting it; reports of requests not in
    /// the table are dropped.
    pub fn finished(
        &mut self,
        take: impl FnOnce(&mut Vec<(u64, V)>),
        mut f: impl FnMut(u64, V, (usize, usize), u32),
    ) {
        take(&mut self.done);
        for (tag, v) in self.done.drain(..) {
            if let Some((t, c, len)) = self.inflight.remove(&tag) {
                f(tag, v, (t as usize, c as usize), len);
            }
        }
    }
}
