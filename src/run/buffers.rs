//! I/O buffers: one page-aligned allocation per worker, carved into a fixed slot per
//! in-flight request. Page alignment satisfies O_DIRECT on every device we know of
//! (logical blocks are 512 B or 4 KiB), and allocating once keeps the hot path free of
//! the allocator.

use std::alloc::{alloc_zeroed, dealloc, Layout};

/// Alignment of every slot: a page.
pub const BUF_ALIGN: usize = 4096;

/// A page-aligned, zero-initialised byte region owned by one worker.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

impl AlignedBuf {
    /// Allocates `len` bytes (rounded up to a page). Returns `None` if allocation fails.
    pub fn new(len: usize) -> Option<Self> {
        let len = len.max(1).div_ceil(BUF_ALIGN) * BUF_ALIGN;
        let layout = Layout::from_size_align(len, BUF_ALIGN).ok()?;
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(AlignedBuf { ptr, layout })
    }

    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }

    /// The whole region as a mutable slice (for filling with data at setup).
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for layout.size() bytes and uniquely borrowed here.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this exact layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// Rounds a slot size up so every slot starts page-aligned.
pub fn slot_bytes(max_bs: u64) -> usize {
    (max_bs as usize).div_ceil(BUF_ALIGN) * BUF_ALIGN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_rounded() {
        let b = AlignedBuf::new(5000).unwrap();
        assert_eq!(b.as_mut_ptr() as usize % BUF_ALIGN, 0);
        assert_eq!(b.len(), 8192);
        assert_eq!(slot_bytes(512), 4096);
        assert_eq!(slot_bytes(1 << 20), 1 << 20);
    }
}
