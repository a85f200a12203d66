//! The page_fault engine: reads and writes copy to and from an anonymous private
//! mapping that the engine maps fresh, untouched, so the first write to each page
//! takes a page fault that allocates it and the first read of an untouched page maps
//! the shared zero page (fio's page_fault). It measures the kernel's anonymous-memory
//! fault path — allocation, zeroing, the zero page, transparent huge pages where they
//! apply — rather than storage. Each worker maps its own region the size of the
//! target (fio maps one per job clone), so the memory used is workers × size.

use super::inline::{InlineEngine, PerformIo};
use super::{EngineError, IoRequest};
use crate::plan::model::Op;

/// One worker's mapping.
pub struct PageFaultIo {
    base: *mut u8,
    len: usize,
}

impl PerformIo for PageFaultIo {
    const NAME: &'static str = "page_fault";

    #[inline]
    fn perform(&mut self, req: &IoRequest) -> (i64, u64) {
        let (off, n) = (req.offset as usize, req.len as usize);
        if off.checked_add(n).map_or(true, |end| end > self.len) {
            return (-(libc::EINVAL as i64), 0);
        }
        // SAFETY: off + n is within the mapping (checked above), which lives until
        // drop; buf holds n bytes of the worker's pool, owned by this request until
        // perform returns; the two never overlap (the pool is not in the mapping).
        unsafe {
            let at = self.base.add(off);
            match req.op {
                Op::Read => std::ptr::copy_nonoverlapping(at, req.buf, n),
                Op::Write => std::ptr::copy_nonoverlapping(req.buf, at, n),
                // Refused before the run (`run::op_engines`); nothing to release.
                Op::Trim => return (-(libc::EOPNOTSUPP as i64), 0),
            }
        }
        (req.len as i64, 0)
    }
}

impl Drop for PageFaultIo {
    fn drop(&mut self) {
        // SAFETY: base/len are the mapping made in `PageFaultEngine::new`, unmapped
        // once, here; no request refers to it any more.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// Copies to and from a fresh anonymous mapping.
pub type PageFaultEngine = InlineEngine<PageFaultIo>;

impl PageFaultEngine {
    /// Maps `len_bytes` of anonymous memory for this worker.
    pub fn new(len_bytes: u64, capacity: usize) -> Result<Self, EngineError> {
        let setup = |source| EngineError::Setup {
            engine: "page_fault",
            source,
        };
        let len = usize::try_from(len_bytes.max(1))
            .map_err(|_| setup(std::io::Error::other("the region does not fit in memory")))?;
        let base = crate::target::map_anonymous(len).map_err(setup)?;
        Ok(InlineEngine::with(PageFaultIo { base, len }, capacity))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;

    fn minor_faults() -> i64 {
        // SAFETY: rusage is plain data; getrusage fills it for this thread.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: ru is a valid out pointer.
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        ru.ru_minflt
    }

    #[test]
    fn first_writes_fault_each_page_and_rewrites_do_not() {
        let pages = 256u64;
        let mut e = PageFaultEngine::new(pages * 4096, 4).unwrap();
        let mut buf = vec![7u8; 4096];
        let mut pass = |op| {
            let before = minor_faults();
            for i in 0..pages {
                e.push(IoRequest::plain(op, i * 4096, 4096, buf.as_mut_ptr(), i))
                    .unwrap();
            }
            let mut out = Vec::new();
            e.submit_and_reap(0, None, &mut out).unwrap();
            assert!(out.iter().all(|c| c.result == 4096));
            minor_faults() - before
        };
        let first = pass(Op::Write);
        let again = pass(Op::Write);
        assert!(
            first >= pages as i64 / 2,
            "{first} faults for {pages} fresh pages"
        );
        assert!(again < 16, "{again} faults rewriting mapped pages");
        let read = pass(Op::Read);
        assert!(read < 16, "{read} faults reading mapped pages");
        assert_eq!(buf[0], 7);
    }
}
