//! Counts per worker and workload over the measured intervals, for the result's
//! `threads` ([`crate::result::threads`]). The collector adds each measured
//! interval's snapshots here before it merges them, so the counts and the run's
//! totals come from the same snapshots.

use crate::plan::model::Op;
use crate::result::threads::{ThreadResult, ThreadWorkload};
use crate::stats::snapshot::Snapshot;

/// Per worker, per workload: (read, write, trim) × (ios, bytes); per worker, its
/// CPU time.
#[derive(Debug, Default)]
pub(super) struct ThreadTally {
    counts: Vec<Vec<[[u64; 2]; 3]>>,
    cpu_ns: Vec<u64>,
}

impl ThreadTally {
    /// Adds one worker's snapshot of a measured interval.
    pub(super) fn add(&mut self, s: &Snapshot) {
        if self.counts.len() <= s.worker {
            self.counts.resize(s.worker + 1, Vec::new());
            self.cpu_ns.resize(s.worker + 1, 0);
        }
        self.cpu_ns[s.worker] += s.cpu_ns;
        let per = &mut self.counts[s.worker];
        if per.len() < s.workloads.len() {
            per.resize(s.workloads.len(), [[0; 2]; 3]);
        }
        for (c, w) in per.iter_mut().zip(&s.workloads) {
            for (i, op) in [Op::Read, Op::Write, Op::Trim].into_iter().enumerate() {
                let o = &w.ops[op.index()];
                c[i][0] += o.ios;
                c[i][1] += o.bytes;
            }
        }
    }

    /// The result's `threads`: every worker, with the workloads it did I/O for.
    pub(super) fn results(&self, nworkers: usize) -> Vec<ThreadResult> {
        (0..nworkers)
            .map(|worker| ThreadResult {
                worker: worker as u32,
                cpu_us: self.cpu_ns.get(worker).map_or(0, |ns| ns / 1_000),
                workloads: self
                    .counts
                    .get(worker)
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .filter(|(_, c)| c.iter().any(|d| d[0] > 0))
                    .map(|(wi, c)| ThreadWorkload {
                        workload: wi as u32,
                        read_ios: c[0][0],
                        read_bytes: c[0][1],
                        write_ios: c[1][0],
                        write_bytes: c[1][1],
                        trim_ios: c[2][0],
                        trim_bytes: c[2][1],
                    })
                    .collect(),
            })
            .collect()
    }
}
