//! The null engine: every request completes at once without touching storage. It
//! measures the tool itself — scheduling, bookkeeping, histogram recording — which is
//! the ceiling any real engine's numbers sit under.

use super::{Completion, Engine, EngineError, IoRequest};

/// Completes everything immediately.
#[derive(Debug, Default)]
pub struct NullEngine {
    pending: Vec<Completion>,
}

impl NullEngine {
    pub fn new(capacity: usize) -> Self {
        NullEngine {
            pending: Vec::with_capacity(capacity),
        }
    }
}

impl Engine for NullEngine {
    fn name(&self) -> &'static str {
        "null"
    }

    fn completes_inline(&self) -> bool {
        true
    }

    #[inline]
    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        self.pending.push(Completion {
            tag: req.tag,
            result: req.len as i64,
            done_ns: 0,
        });
        Ok(())
    }

    #[inline]
    fn submit_and_reap(
        &mut self,
        _min_complete: u32,
        _timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        out.append(&mut self.pending);
        Ok(())
    }
}
