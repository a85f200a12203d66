//! The uring engine: io_uring with registered files, one ring per worker, sized for
//! every request the worker can have in flight. Each request is handed to the kernel
//! as soon as it is queued (like fio's default `iodepth_batch_submit=1`), and the
//! worker waits for completions with one more `io_uring_enter(2)` per loop turn.
//!
//! Opcodes: `IORING_OP_READ`/`IORING_OP_WRITE` (equivalent to pread(2)/pwrite(2) at
//! an explicit offset).

use super::{Completion, Engine, EngineError, IoRequest, Targets};
use crate::plan::model::Op;
use io_uring::{opcode, squeue, types, IoUring};

/// One io_uring instance.
pub struct UringEngine {
    ring: IoUring<squeue::Entry>,
    _targets: Targets,
    queued: u32,
}

impl UringEngine {
    /// Builds a ring with room for `capacity` requests in flight and registers the
    /// targets' file descriptors.
    pub fn new(targets: &Targets, capacity: usize) -> Result<Self, EngineError> {
        let entries = (capacity.max(1) as u32).next_power_of_two().min(32768);
        let setup = |e: std::io::Error| EngineError::Setup {
            engine: "uring",
            source: e,
        };
        // Single issuer + cooperative task running cut kernel overhead; older kernels
        // lack them, so fall back to a plain ring.
        // A plain ring: COOP_TASKRUN/SINGLE_ISSUER measured no better here.
        let ring = IoUring::builder()
            .setup_cqsize(entries * 2)
            .build(entries)
            .map_err(setup)?;
        let fds: Vec<i32> = targets.iter().map(|t| t.fd().unwrap_or(-1)).collect();
        if fds.iter().any(|&fd| fd >= 0) {
            ring.submitter().register_files(&fds).map_err(setup)?;
        }
        Ok(UringEngine {
            ring,
            _targets: targets.clone(),
            queued: 0,
        })
    }

    /// Whether io_uring can be set up here at all (kernel support, seccomp, sysctl).
    pub fn available() -> bool {
        IoUring::<squeue::Entry>::new(2).is_ok()
    }

    fn enter(&mut self, want: usize, timeout_ns: Option<u64>) -> Result<(), EngineError> {
        loop {
            let r = match timeout_ns {
                Some(ns) if want > 0 => {
                    let ts = types::Timespec::new()
                        .sec(ns / 1_000_000_000)
                        .nsec((ns % 1_000_000_000) as u32);
                    let args = types::SubmitArgs::new().timespec(&ts);
                    self.ring.submitter().submit_with_args(want, &args)
                }
                _ => self.ring.submitter().submit_and_wait(want),
            };
            match r {
                Ok(_) => return Ok(()),
                Err(e) => match e.raw_os_error() {
                    Some(libc::ETIME) => return Ok(()),
                    Some(libc::EINTR) => continue,
                    // Completion queue full: reap first; the caller's loop resubmits.
                    Some(libc::EBUSY) | Some(libc::EAGAIN) => return Ok(()),
                    _ => {
                        return Err(EngineError::Io {
                            engine: "uring",
                            op: "io_uring_enter",
                            source: e,
                        })
                    }
                },
            }
        }
    }
}

impl Engine for UringEngine {
    fn name(&self) -> &'static str {
        "uring"
    }

    #[inline]
    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let fd = types::Fixed(req.target);
        let sqe = match req.op {
            Op::Read => opcode::Read::new(fd, req.buf, req.len)
                .offset(req.offset)
                .build(),
            Op::Write => opcode::Write::new(fd, req.buf, req.len)
                .offset(req.offset)
                .build(),
        }
        .user_data(req.tag);
        loop {
            // SAFETY: the buffer stays valid and untouched until this request's
            // completion is reaped (the runner's contract), and the fd is registered.
            let pushed = unsafe { self.ring.submission().push(&sqe) };
            if pushed.is_ok() {
                self.queued += 1;
                // Hand each request to the kernel at once (fio's default,
                // iodepth_batch_submit=1): a device sees a steady trickle rather
                // than bursts. Measured on virtio-blk: +10-15% IOPS at QD 32 over
                // submitting a turn's requests together.
                self.enter(0, None)?;
                self.queued = 0;
                return Ok(());
            }
            // Submission queue full: hand what is there to the kernel.
            self.enter(0, None)?;
            self.queued = 0;
        }
    }

    fn submit_and_reap(
        &mut self,
        min_complete: u32,
        timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        let ready = self.ring.completion().len();
        let want = if ready >= min_complete as usize {
            0
        } else {
            min_complete as usize
        };
        if self.queued > 0 || want > 0 {
            self.enter(want, timeout_ns)?;
            self.queued = 0;
        }
        for cqe in self.ring.completion() {
            out.push(Completion {
                tag: cqe.user_data(),
                result: cqe.result() as i64,
                done_ns: 0,
            });
        }
        Ok(())
    }
}
