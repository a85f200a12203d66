//! Why a worker stopped before its run ended, as a type. A worker cannot return an
//! error to anyone — it runs on its own thread — so its last snapshot carries the
//! error's cause chain as text ([`WorkerError::chain`]) and the run reports it as a
//! warning ("a worker failed: …"). Display strings hold only their own context.

use crate::engine::EngineError;

/// A failure that ends one worker (the run goes on with the others' figures).
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The slot table's buffer pool could not be allocated.
    #[error("cannot allocate {bytes} bytes of I/O buffers")]
    Buffers { bytes: usize },
    /// The engine as a whole cannot go on (not a failed I/O: those are counted).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The crash journal could not be written.
    #[error("journal")]
    Journal(#[source] std::io::Error),
    /// Waiting on the engine's descriptors failed.
    #[error("poll")]
    Poll(#[source] std::io::Error),
}

impl WorkerError {
    /// The error and its causes as one line, for the worker's last snapshot.
    pub fn chain(&self) -> String {
        crate::errors::chain(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_reads_as_before_without_repeating_the_cause() {
        let e = WorkerError::Journal(std::io::Error::from_raw_os_error(libc::ENOSPC));
        let text = e.chain();
        assert!(text.starts_with("journal: "), "{text}");
        assert_eq!(text.matches("No space left").count(), 1, "{text}");
        let e = WorkerError::Buffers { bytes: 4096 };
        assert_eq!(e.chain(), "cannot allocate 4096 bytes of I/O buffers");
    }
}
