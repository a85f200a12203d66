//! The mem engine: reads and writes copy to and from an in-process RAM target. It is
//! exact — every byte counted is a byte moved — which makes it the engine for tests of
//! counts, verification and data patterns, and for measuring the tool's memory path.

use super::{Completion, Engine, EngineError, IoRequest, Targets};
use crate::plan::model::Op;
use crate::target::Backing;

/// Copies to and from `mem:` targets.
pub struct MemEngine {
    /// Keeps the mappings behind `bases` alive.
    _targets: Targets,
    bases: Vec<(*mut u8, u64)>,
    done: Vec<Completion>,
}

impl MemEngine {
    pub fn new(targets: &Targets, capacity: usize) -> Self {
        MemEngine {
            _targets: targets.clone(),
            bases: targets
                .iter()
                .map(|t| match &t.backing {
                    Backing::Mem(m) => (m.as_ptr(), m.len() as u64),
                    _ => (std::ptr::null_mut(), 0),
                })
                .collect(),
            done: Vec::with_capacity(capacity),
        }
    }
}

impl Engine for MemEngine {
    fn name(&self) -> &'static str {
        "mem"
    }

    fn completes_inline(&self) -> bool {
        true
    }

    #[inline]
    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let (base, len) = self.bases[req.target as usize];
        let result = if base.is_null() || req.offset + req.len as u64 > len {
            -(libc::EINVAL as i64)
        } else {
            // SAFETY: the range was checked against the mapping; `buf` holds `len` bytes
            // owned by this worker. The mapping outlives the engine (targets are held).
            unsafe {
                let dev = base.add(req.offset as usize);
                match req.op {
                    Op::Read => std::ptr::copy_nonoverlapping(dev, req.buf, req.len as usize),
                    Op::Write => std::ptr::copy_nonoverlapping(req.buf, dev, req.len as usize),
                }
            }
            req.len as i64
        };
        self.done.push(Completion {
            tag: req.tag,
            result,
            done_ns: 0,
        });
        Ok(())
    }

    fn submit_and_reap(
        &mut self,
        _min_complete: u32,
        _timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        out.append(&mut self.done);
        Ok(())
    }
}
