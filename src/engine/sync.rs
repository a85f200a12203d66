//! The sync engine: pread(2)/pwrite(2), one request at a time, each timed by itself;
//! a trim punches a hole in a file or discards a block device's range
//! ([`super::discard`]).
//! Queue depth above one gains nothing here (the calls are serial), exactly like fio's
//! psync; use several streams or the uring engine for concurrency.

use super::inline::{InlineEngine, PerformIo};
use super::{neg_errno, now_ns, IoRequest, Targets};
use crate::plan::model::Op;
use std::os::unix::io::RawFd;

/// Performs one request with pread(2)/pwrite(2).
pub struct SyncIo {
    fds: Vec<RawFd>,
    /// Per target: a block device (trims are `BLKDISCARD`, else hole punches).
    is_block: Vec<bool>,
    /// Per target: a file set's descriptors and file length, whose offsets name a
    /// file and a place in it (empty when no target is a set).
    sets: Vec<Option<(Box<[RawFd]>, u64)>>,
}

impl SyncIo {
    /// The descriptor and file offset of `req`.
    #[inline(always)]
    fn locate(&self, req: &IoRequest) -> (RawFd, u64) {
        let t = req.target as usize;
        match self.sets.get(t) {
            Some(Some((fds, file_bytes))) => {
                let i = (req.offset / file_bytes) as usize;
                (fds[i.min(fds.len() - 1)], req.offset % file_bytes)
            }
            _ => (self.fds[t], req.offset),
        }
    }
}

impl PerformIo for SyncIo {
    const NAME: &'static str = "sync";

    fn perform(&mut self, req: &IoRequest) -> (i64, u64) {
        let (fd, offset) = self.locate(req);
        if req.op == Op::Trim {
            let is_block = self.is_block[req.target as usize];
            return (
                super::discard::discard(fd, is_block, offset, req.len),
                now_ns(),
            );
        }
        let mut done_bytes: i64 = 0;
        // Short transfers are continued, as an application would; an error ends it.
        let result = loop {
            let remaining = req.len as usize - done_bytes as usize;
            // SAFETY: buf points to at least `len` bytes of the worker's buffer pool,
            // valid and not aliased by any other in-flight request.
            let r = unsafe {
                let p = req.buf.add(done_bytes as usize) as *mut libc::c_void;
                let off = (offset + done_bytes as u64) as libc::off_t;
                match req.op {
                    Op::Read => libc::pread(fd, p, remaining, off),
                    Op::Write if req.atomic => {
                        let iov = libc::iovec {
                            iov_base: p,
                            iov_len: remaining,
                        };
                        libc::pwritev2(fd, &iov, 1, off, super::RWF_ATOMIC)
                    }
                    Op::Write | Op::Trim => libc::pwrite(fd, p, remaining, off),
                }
            };
            if r < 0 {
                let e = neg_errno();
                if e == -(libc::EINTR as i64) {
                    continue;
                }
                break e;
            }
            if r == 0 {
                // End of file: report what was transferred (a short read).
                break done_bytes;
            }
            done_bytes += r as i64;
            if done_bytes as u32 >= req.len {
                break done_bytes;
            }
        };
        (result, now_ns())
    }
}

/// Per target, a file set's descriptors and file length; empty when no target is a
/// set, so single-file targets look no further than their own descriptor.
pub(crate) fn set_fds(targets: &Targets) -> Vec<Option<(Box<[RawFd]>, u64)>> {
    if targets.iter().all(|t| t.byte_files().is_none()) {
        return Vec::new();
    }
    targets
        .iter()
        .map(|t| t.byte_files().map(|s| (s.fds().into(), s.file_bytes)))
        .collect()
}

/// Performs each request synchronously as it is queued.
pub type SyncEngine = InlineEngine<SyncIo>;

impl SyncEngine {
    pub fn new(targets: &Targets, capacity: usize) -> Self {
        InlineEngine::with(
            SyncIo {
                fds: targets.iter().map(|t| t.fd().unwrap_or(-1)).collect(),
                is_block: targets.iter().map(|t| t.is_block_device()).collect(),
                sets: set_fds(targets),
            },
            capacity,
        )
    }
}
