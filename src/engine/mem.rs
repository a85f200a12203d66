//! The mem engine: reads and writes copy to and from an in-process RAM target (a trim
//! zeroes its range, as a hole punched in a file reads back). It is
//! exact — every byte counted is a byte moved — which makes it the engine for tests of
//! counts, verification and data patterns, and for measuring the tool's memory path.
//! The copies go through [`crate::target::MemStore`]'s range locks, so workers
//! writing overlapping ranges never race.

use super::inline::{InlineEngine, PerformIo};
use super::{IoRequest, Targets};
use crate::plan::model::Op;
use crate::target::Backing;

/// Copies one request to or from its `mem:` target.
pub struct MemIo {
    targets: Targets,
}

impl PerformIo for MemIo {
    const NAME: &'static str = "mem";

    #[inline]
    fn perform(&mut self, req: &IoRequest) -> (i64, u64) {
        let Backing::Mem(m) = &self.targets[req.target as usize].backing else {
            return (-(libc::EINVAL as i64), 0);
        };
        let len = req.len as usize;
        // SAFETY: `buf` holds `len` bytes of the worker's buffer pool, owned by this
        // request until it completes, which is when `perform` returns.
        let done = unsafe {
            match req.op {
                Op::Read => m.read_into(req.offset, req.buf, len),
                Op::Write => m.write_from(req.offset, req.buf, len),
                // A trim leaves zeros, as a punched hole reads back.
                Op::Trim => m.zero(req.offset, len),
            }
        };
        if done {
            (req.len as i64, 0)
        } else {
            (-(libc::EINVAL as i64), 0)
        }
    }
}

/// Copies to and from `mem:` targets.
pub type MemEngine = InlineEngine<MemIo>;

impl MemEngine {
    pub fn new(targets: &Targets, capacity: usize) -> Self {
        InlineEngine::with(
            MemIo {
                targets: targets.clone(),
            },
            capacity,
        )
    }
}
