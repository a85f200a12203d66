//! One SMB request as a task of the engine's runtime: a READ or WRITE on the lane's
//! file, split at the server's maximum I/O size, whose end is reported exactly once
//! into the engine's [`Done`] list — its result, or ECONNABORTED when the task is
//! cancelled first (its connection was lost and the engine dropped its tasks).

use crate::engine::Completion;
use crate::plan::model::Op;
use std::sync::{Arc, Mutex};

/// A request's buffer, handed to the task that fills or sends it.
#[derive(Clone, Copy)]
pub struct BufPtr(pub *mut u8);

// SAFETY: the pointer is only dereferenced by the request's task. The runner keeps
// the buffer valid and untouched until the request's completion is returned, and a
// task never outlives that: single-channel tasks run on the worker's own thread
// (current-thread runtime driven only from submit_and_reap) and are dropped (the
// connection was lost) before their completion is returned; a channel's tasks run on
// the channel set's thread and are cancelled and awaited when the engine is dropped.
unsafe impl Send for BufPtr {}

/// Finished requests with the target each was for, filled by the tasks and drained
/// by reaping; `wake` is also rung when a reconnect attempt ends.
#[derive(Default)]
pub struct Done {
    list: Mutex<Vec<(u32, Completion)>>,
    pub wake: tokio::sync::Notify,
}

impl Done {
    fn push(&self, target: u32, c: Completion) {
        self.list
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((target, c));
        self.wake.notify_one();
    }

    /// Moves what finished into `out`.
    pub fn take(&self, out: &mut Vec<(u32, Completion)>) {
        out.append(&mut self.list.lock().unwrap_or_else(|p| p.into_inner()));
    }
}

/// Reports a request's end when dropped: `result`, which stays ECONNABORTED unless
/// the request ran to its end.
struct Report {
    target: u32,
    tag: u64,
    result: i64,
    done: Arc<Done>,
}

impl Drop for Report {
    fn drop(&mut self) {
        let c = Completion {
            tag: self.tag,
            result: self.result,
            done_ns: crate::clock::now_ns(),
        };
        self.done.push(self.target, c);
    }
}

/// What one request's task does: `op` of `len` bytes at `offset` of `file` (on
/// `channel`, or the session's only one) with `buf`, in pieces of at most `max`.
pub struct Request {
    pub file: Arc<smb::File>,
    pub channel: Option<u32>,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    pub buf: BufPtr,
    pub max: usize,
    pub target: u32,
    pub tag: u64,
}

impl Request {
    /// The task: performs the request and reports its end into `done`, once.
    pub async fn task(self, done: Arc<Done>) {
        let mut report = Report {
            target: self.target,
            tag: self.tag,
            result: -(libc::ECONNABORTED as i64),
            done,
        };
        report.result = self.perform().await;
    }

    /// Bytes done or -errno.
    async fn perform(self) -> i64 {
        let (buf, file, len) = (self.buf, &self.file, self.len as usize);
        let mut done = 0usize;
        while done < len {
            let end = len.min(done + self.max);
            let off = self.offset + done as u64;
            let r = match self.op {
                Op::Read => {
                    // SAFETY: see BufPtr; [done, end) lies inside the request's buffer.
                    let s = unsafe { std::slice::from_raw_parts_mut(buf.0.add(done), end - done) };
                    // SAFETY: the read's future is awaited here, inside this task, which
                    // is run to its end or dropped, never leaked while the buffer is
                    // used again (BufPtr); the data lands in the buffer straight from
                    // the socket (vendor/smb/PATCHED.md, 5).
                    unsafe { file.read_block_into(s, off, self.channel) }.await
                }
                Op::Write => {
                    // SAFETY: as above; the crate copies the bytes before sending them.
                    let s = unsafe { std::slice::from_raw_parts(buf.0.add(done), end - done) };
                    file.write_block(s, off, self.channel).await
                }
                // Refused before the run (`run::trim`): no SMB trim is sent.
                Op::Trim => return -(libc::EOPNOTSUPP as i64),
            };
            match r {
                Ok(0) => return -(libc::EIO as i64),
                Ok(n) => done += n,
                Err(e) => return -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
            }
        }
        done as i64
    }
}
