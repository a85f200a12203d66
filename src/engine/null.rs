//! The null engine: every request completes at once without touching storage. It
//! measures the tool itself — scheduling, bookkeeping, histogram recording — which is
//! the ceiling any real engine's numbers sit under.

use super::inline::{InlineEngine, PerformIo};
use super::IoRequest;

/// Completes every request at once with its full length.
#[derive(Debug, Default)]
pub struct NullIo;

impl PerformIo for NullIo {
    const NAME: &'static str = "null";

    #[inline]
    fn perform(&mut self, req: &IoRequest) -> (i64, u64) {
        (req.len as i64, 0)
    }
}

/// Completes everything immediately.
pub type NullEngine = InlineEngine<NullIo>;

impl NullEngine {
    pub fn new(capacity: usize) -> Self {
        InlineEngine::with(NullIo, capacity)
    }
}
