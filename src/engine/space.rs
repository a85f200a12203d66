//! Engines that change a file's space rather than its bytes (fio's falloc and
//! ftruncate): a request's range is allocated with fallocate(2) — a write extends
//! the file (mode 0), a read allocates without changing its length
//! (FALLOC_FL_KEEP_SIZE), a trim releases it (FALLOC_FL_PUNCH_HOLE) — or a write sets the file's length to its offset with
//! ftruncate(2). The run creates a missing target as a hole, so the allocation is the
//! engine's own. A successful request completes with its length for falloc (bytes
//! allocated) and 0 for ftruncate (nothing allocated or moved).

use super::inline::{InlineEngine, PerformIo};
use super::{neg_errno, now_ns, IoRequest, Targets};
use crate::plan::model::Op;
use std::os::unix::io::RawFd;

/// Which call a request makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpaceCall {
    Fallocate,
    Ftruncate,
}

/// Performs one fallocate(2) or ftruncate(2) per request.
pub struct SpaceIo {
    call: SpaceCall,
    fds: Vec<RawFd>,
}

impl PerformIo for SpaceIo {
    const NAME: &'static str = "falloc";

    fn name(&self) -> &'static str {
        match self.call {
            SpaceCall::Fallocate => "falloc",
            SpaceCall::Ftruncate => "ftruncate",
        }
    }

    fn perform(&mut self, req: &IoRequest) -> (i64, u64) {
        let fd = self.fds[req.target as usize];
        let off = req.offset as libc::off_t;
        let result = loop {
            // SAFETY: fd is the target's open descriptor (or -1, which fails EBADF);
            // neither call touches memory of ours.
            let r = unsafe {
                match (self.call, req.op) {
                    (SpaceCall::Fallocate, Op::Write) => {
                        libc::fallocate(fd, 0, off, req.len as libc::off_t)
                    }
                    (SpaceCall::Fallocate, Op::Read) => {
                        libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, off, req.len as libc::off_t)
                    }
                    (SpaceCall::Ftruncate, Op::Write) => libc::ftruncate(fd, off),
                    // fio's falloc trims by punching the range out.
                    (SpaceCall::Fallocate, Op::Trim) => libc::fallocate(
                        fd,
                        super::discard::PUNCH_HOLE_MODE,
                        off,
                        req.len as libc::off_t,
                    ),
                    (SpaceCall::Ftruncate, Op::Read | Op::Trim) => {
                        break -(libc::EINVAL as i64);
                    }
                }
            };
            if r == 0 {
                break match self.call {
                    SpaceCall::Fallocate => req.len as i64,
                    SpaceCall::Ftruncate => 0,
                };
            }
            let e = neg_errno();
            if e != -(libc::EINTR as i64) {
                break e;
            }
        };
        (result, now_ns())
    }
}

/// The falloc and ftruncate engines (one body, the call chosen by [`SpaceCall`]).
pub type SpaceEngine = InlineEngine<SpaceIo>;

impl SpaceEngine {
    pub fn new(targets: &Targets, call: SpaceCall, capacity: usize) -> Self {
        let fds = targets.iter().map(|t| t.fd().unwrap_or(-1)).collect();
        InlineEngine::with(SpaceIo { call, fds }, capacity)
    }
}
