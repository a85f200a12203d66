//! `mem:` targets' store: RAM shared by every worker, locked per 64 KiB chunk so
//! that every I/O is atomic against every other (see [`MemStore`]).

use std::sync::atomic::{AtomicU32, Ordering};

/// In-process RAM target: an anonymous mapping, touched lazily.
///
/// Several workers copy in and out of it at once, so every byte is reached only
/// under a lock of the 64 KiB chunk that holds it: a copy takes the locks of the
/// chunks it covers in ascending order (no deadlock), readers share a chunk, a
/// writer has it alone. So there is no data race, and every I/O is atomic against
/// every other: a read sees each overlapping write wholly or not at all, which a
/// real device does not promise but a test can then rely on.
///
/// Cost: one uncontended atomic read-modify-write to take and one to release per
/// chunk covered (two for a 4 KiB I/O); contention only when two I/Os touch the
/// same chunk at the same time.
/// `len` bytes of private anonymous memory, read and written, reserved as pages are
/// first touched (MAP_NORESERVE): a `mem:` target's store, and the page_fault
/// engine's region. The caller unmaps it (munmap) when done.
pub fn map_anonymous(len: usize) -> std::io::Result<*mut u8> {
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing;
    // the result is checked before use.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(p as *mut u8)
}

#[derive(Debug)]
pub struct MemStore {
    ptr: *mut u8,
    len: usize,
    /// Per chunk: number of readers, or [`WRITER`] while a writer holds it.
    locks: Box<[AtomicU32]>,
}

/// Bytes per lock of a [`MemStore`].
const CHUNK_BYTES: usize = 64 << 10;
/// Lock word of a chunk held by a writer.
const WRITER: u32 = u32::MAX;

// SAFETY: the mapping lives as long as the MemStore and is reached only through
// `read_into`/`write_from` (and the raw copies they make under the chunk locks),
// so shared use from several threads never races: see the type's docs.
unsafe impl Send for MemStore {}
unsafe impl Sync for MemStore {}

impl MemStore {
    pub fn new(len: u64) -> std::io::Result<Self> {
        let len = usize::try_from(len).map_err(|_| std::io::Error::other("size too large"))?;
        let ptr = map_anonymous(len)?;
        let chunks = len.div_ceil(CHUNK_BYTES);
        Ok(MemStore {
            ptr,
            len,
            locks: (0..chunks).map(|_| AtomicU32::new(0)).collect(),
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `len` bytes at `offset` into `dst`; false (nothing copied) when the
    /// range is outside the store.
    ///
    /// # Safety
    /// `dst` must be valid for `len` bytes of writes and not alias the store.
    #[inline]
    pub unsafe fn read_into(&self, offset: u64, dst: *mut u8, len: usize) -> bool {
        let Some(chunks) = self.chunks(offset, len) else {
            return false;
        };
        for c in chunks.clone() {
            lock_shared(&self.locks[c]);
        }
        // SAFETY: the range is inside the mapping (checked by `chunks`), every chunk
        // it covers is locked against writers, and the caller vouches for `dst`.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(offset as usize), dst, len) };
        for c in chunks {
            self.locks[c].fetch_sub(1, Ordering::Release);
        }
        true
    }

    /// Copies `len` bytes from `src` to `offset`; false (nothing copied) when the
    /// range is outside the store.
    ///
    /// # Safety
    /// `src` must be valid for `len` bytes of reads and not alias the store.
    #[inline]
    pub unsafe fn write_from(&self, offset: u64, src: *const u8, len: usize) -> bool {
        let Some(chunks) = self.chunks(offset, len) else {
            return false;
        };
        for c in chunks.clone() {
            lock_exclusive(&self.locks[c]);
        }
        // SAFETY: the range is inside the mapping, every chunk it covers is held
        // exclusively, and the caller vouches for `src`.
        unsafe { std::ptr::copy_nonoverlapping(src, self.ptr.add(offset as usize), len) };
        for c in chunks {
            self.locks[c].store(0, Ordering::Release);
        }
        true
    }

    /// Discards `len` bytes at `offset`: they read back as zeros, as a hole punched in
    /// a file does. False (nothing changed) when the range is outside the store.
    pub fn zero(&self, offset: u64, len: usize) -> bool {
        let Some(chunks) = self.chunks(offset, len) else {
            return false;
        };
        for c in chunks.clone() {
            lock_exclusive(&self.locks[c]);
        }
        // SAFETY: the range is inside the mapping and every chunk it covers is held
        // exclusively.
        unsafe { std::ptr::write_bytes(self.ptr.add(offset as usize), 0, len) };
        for c in chunks {
            self.locks[c].store(0, Ordering::Release);
        }
        true
    }

    /// Lock indices covering `offset..offset + len`, if that lies inside the store.
    #[inline]
    fn chunks(&self, offset: u64, len: usize) -> Option<std::ops::Range<usize>> {
        let end = offset.checked_add(len as u64)?;
        if end > self.len as u64 || len == 0 {
            return (len == 0 && end <= self.len as u64).then_some(0..0);
        }
        Some(offset as usize / CHUNK_BYTES..(end as usize - 1) / CHUNK_BYTES + 1)
    }
}

/// Takes a chunk lock shared (as a reader).
#[inline]
fn lock_shared(l: &AtomicU32) {
    let mut spins = 0u32;
    loop {
        let v = l.load(Ordering::Relaxed);
        if v < WRITER - 1
            && l.compare_exchange_weak(v, v + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return;
        }
        backoff(&mut spins);
    }
}

/// Takes a chunk lock exclusively (as a writer).
#[inline]
fn lock_exclusive(l: &AtomicU32) {
    let mut spins = 0u32;
    while l
        .compare_exchange_weak(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        backoff(&mut spins);
    }
}

/// Spins briefly, then yields: holders keep a lock for one memcpy only, but a
/// preempted holder must get the CPU back.
#[inline]
fn backoff(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

impl Drop for MemStore {
    fn drop(&mut self) {
        // SAFETY: unmapping the region mapped in `new`, exactly once.
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.len);
        }
    }
}

#[cfg(test)]
mod mem_store_tests {
    use super::MemStore;

    // Regression: two workers writing overlapping ranges of a mem target raced (the
    // store's Send/Sync rested on intent). Now every copy holds the chunk locks it
    // covers, so a read spanning two chunks sees each write wholly or not at all.
    #[test]
    fn overlapping_writers_never_tear_a_read() {
        const K: usize = 64 << 10;
        let store = MemStore::new(4 * K as u64).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            for (fill, start) in [(0xAAu8, 0usize), (0xBB, K)] {
                let (store, stop) = (&store, &stop);
                s.spawn(move || {
                    let buf = vec![fill; 3 * K];
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        // SAFETY: `buf` holds 3 K bytes and is not part of the store.
                        assert!(unsafe { store.write_from(start as u64, buf.as_ptr(), 3 * K) });
                        // Let the reader in: the locks are not fair, and this loop
                        // does nothing else between writes (a worker does).
                        std::thread::yield_now();
                    }
                });
            }
            let mut buf = vec![0u8; 2 * K];
            let mut seen = [false; 2];
            for _ in 0..2_000 {
                // Spans chunks 1 and 2, which both writers cover.
                // SAFETY: `buf` holds 2 K bytes and is not part of the store.
                assert!(unsafe { store.read_into(K as u64, buf.as_mut_ptr(), 2 * K) });
                let first = buf[0];
                assert!(
                    buf.iter().all(|&b| b == first),
                    "a read saw two writers' bytes mixed"
                );
                if first == 0xAA {
                    seen[0] = true;
                } else if first == 0xBB {
                    seen[1] = true;
                }
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            assert!(seen[0] || seen[1], "the writers never ran");
        });
    }

    #[test]
    fn out_of_range_copies_are_refused() {
        let store = MemStore::new(1 << 20).unwrap();
        let mut buf = [0u8; 8];
        // SAFETY: `buf` holds 8 bytes.
        unsafe {
            assert!(!store.read_into((1 << 20) - 4, buf.as_mut_ptr(), 8));
            assert!(!store.write_from(u64::MAX - 2, buf.as_ptr(), 8));
            assert!(store.write_from((1 << 20) - 8, buf.as_ptr(), 8));
        }
    }
}
