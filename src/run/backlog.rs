//! fio's `verify_backlog`: a stream reads back blocks it wrote while the run goes
//! on. Each stream remembers its completed writes; once `every_writes` of them have
//! completed since its last read-back, its next `batch_reads` I/Os are reads of them
//! (oldest first; a batch larger than `every_writes` starts over at the oldest, a
//! smaller one leaves the newest unread), issued before it writes again. The reads
//! are checked like any verified read and counted apart from the workload's reads
//! (`VerifyResult::backlog_reads`).

use crate::plan::overrides::VerifyBacklog;
use std::collections::VecDeque;

/// One completed write to read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub workload: u32,
    pub offset: u64,
    pub len: u32,
}

/// A stream's writes waiting for their read-back, and the read-backs due.
#[derive(Debug, Clone)]
pub struct Backlog {
    every: usize,
    batch: usize,
    /// Completed writes since the last read-back, oldest first.
    written: Vec<Written>,
    /// Reads due, in issue order.
    due: VecDeque<Written>,
}

impl Backlog {
    pub fn new(b: VerifyBacklog) -> Self {
        let every = b.every_writes.max(1) as usize;
        Backlog {
            every,
            batch: b.batch_reads.max(1) as usize,
            written: Vec::with_capacity(every),
            due: VecDeque::new(),
        }
    }

    /// A write of the stream completed whole; every `every_writes` of them make a
    /// read-back due.
    pub fn written(&mut self, w: Written) {
        self.written.push(w);
        if self.written.len() >= self.every {
            let n = self.written.len();
            self.due
                .extend((0..self.batch).map(|i| self.written[i % n]));
            self.written.clear();
        }
    }

    /// Whether a read-back is due.
    #[inline]
    pub fn pending(&self) -> bool {
        !self.due.is_empty()
    }

    /// The next block to read back.
    pub fn next_read(&mut self) -> Option<Written> {
        self.due.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(offset: u64) -> Written {
        Written {
            workload: 0,
            offset,
            len: 4096,
        }
    }

    fn reads(every: u32, batch: u32, writes: u64) -> Vec<u64> {
        let mut b = Backlog::new(VerifyBacklog {
            every_writes: every,
            batch_reads: batch,
        });
        let mut out = Vec::new();
        for i in 0..writes {
            b.written(w(i));
            while let Some(r) = b.next_read() {
                out.push(r.offset);
            }
        }
        out
    }

    #[test]
    fn every_n_writes_the_n_are_read_back_oldest_first() {
        assert_eq!(reads(3, 3, 7), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(reads(1, 1, 3), vec![0, 1, 2]);
    }

    #[test]
    fn a_smaller_batch_leaves_the_newest_and_a_larger_one_starts_over() {
        assert_eq!(reads(4, 2, 8), vec![0, 1, 4, 5]);
        assert_eq!(reads(2, 5, 4), vec![0, 1, 0, 1, 0, 2, 3, 2, 3, 2]);
    }

    #[test]
    fn reads_due_before_the_next_batch_completes_stay_in_order() {
        let mut b = Backlog::new(VerifyBacklog {
            every_writes: 2,
            batch_reads: 2,
        });
        for i in 0..4 {
            b.written(w(i));
        }
        let got: Vec<u64> = std::iter::from_fn(|| b.next_read())
            .map(|x| x.offset)
            .collect();
        assert_eq!(got, vec![0, 1, 2, 3]);
        assert!(!b.pending());
    }
}
