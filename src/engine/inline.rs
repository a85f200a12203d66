//! Engines that complete inline: the request is performed (or not) while it is
//! queued, so there is nothing to submit and nothing to wait for. null, mem and sync
//! differ only in what one request does; [`InlineEngine`] is the one body they share
//! — the completion queue, the reap, the inline-buffer promise — and each supplies a
//! [`PerformIo`] for the request itself.

use super::{Completion, Engine, EngineError, IoRequest};

/// What an inline engine does with one request.
pub trait PerformIo {
    /// Engine name as reported in results.
    const NAME: &'static str;

    /// The name of this instance, where one body serves several engines (the
    /// file-operation engines, falloc and ftruncate); [`PerformIo::NAME`] otherwise.
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// Performs `req` and returns (bytes transferred or a negated errno, completion
    /// time in ns or 0 for "when reaped"). The request's buffer is not touched after
    /// this returns.
    fn perform(&mut self, req: &IoRequest) -> (i64, u64);
}

/// An [`Engine`] that performs each request in `push` and hands the completions
/// back at the next reap, never waiting.
pub struct InlineEngine<P> {
    io: P,
    done: Vec<Completion>,
}

impl<P: PerformIo> InlineEngine<P> {
    /// An engine performing requests with `io`, with room for `capacity` completions
    /// between reaps.
    pub fn with(io: P, capacity: usize) -> Self {
        InlineEngine {
            io,
            done: Vec::with_capacity(capacity),
        }
    }

    /// What performs the requests.
    pub fn io(&self) -> &P {
        &self.io
    }
}

impl<P: PerformIo> Engine for InlineEngine<P> {
    fn name(&self) -> &'static str {
        self.io.name()
    }

    fn completes_inline(&self) -> bool {
        true
    }

    #[inline]
    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let (result, done_ns) = self.io.perform(&req);
        self.done.push(Completion {
            tag: req.tag,
            result,
            done_ns,
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
        if out.is_empty() {
            // The usual case: the two lists trade places, nothing is copied.
            std::mem::swap(out, &mut self.done);
        } else {
            out.append(&mut self.done);
        }
        Ok(())
    }
}
