//! fio's flow control (`flow`, `flow_id`, `flow_sleep`): closed-loop workloads that
//! share a flow id are held to I/O counts in the ratio of their weights. Each stream
//! is one of fio's jobs (a clone): it counts its own I/Os, and may issue the next one
//! only while its share of the group's count is no larger than its share of the
//! group's weight; otherwise it is held for the flow's sleep and asks again. A stream
//! that ends takes its count and weight out of the group, as fio's jobs do when they
//! exit, so the others are not held back by a finished one.
//!
//! The trade-off: the group's counters are shared atomics read without a lock, so
//! workers on different CPUs may both pass a check that only one of them should, for
//! an I/O or two; over a run the ratio holds (the test measures it). Under mpirun
//! each rank holds its own groups.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::plan::model::Workload;

/// How long a held stream waits before it asks again when the job gave no
/// `flow_sleep` (fio then retries on its next loop turn, spinning; a short wait does
/// the same without burning the CPU).
pub const FLOW_RETRY_NS: u64 = 20_000;

/// The counters of one flow id, shared by the workers.
#[derive(Debug)]
pub struct FlowGroup {
    /// I/Os issued by the group's live streams, plus one (fio starts it at 1, so the
    /// first check divides by something).
    issued: AtomicU64,
    /// Weight of the group's live streams.
    weight: AtomicU64,
}

/// A workload's place in its flow group.
#[derive(Debug, Clone)]
pub struct FlowShare {
    group: Arc<FlowGroup>,
    /// Weight of each of the workload's streams.
    weight: u64,
    /// Wait before asking again, once held.
    pub hold_ns: u64,
}

impl FlowShare {
    /// True when a stream that has issued `own` I/Os may issue one more now.
    #[inline]
    pub fn may_issue(&self, own: u64) -> bool {
        let issued = self.group.issued.load(Ordering::Relaxed).max(1) as f64;
        let weight = self.group.weight.load(Ordering::Relaxed).max(1) as f64;
        own as f64 / issued <= self.weight as f64 / weight
    }

    /// Counts one I/O of a stream (its own count is the caller's).
    #[inline]
    pub fn count(&self) {
        self.group.issued.fetch_add(1, Ordering::Relaxed);
    }

    /// A stream that has issued `own` I/Os ends: its count and weight leave the group.
    pub fn leave(&self, own: u64) {
        self.group.issued.fetch_sub(own, Ordering::Relaxed);
        self.group.weight.fetch_sub(self.weight, Ordering::Relaxed);
    }
}

/// Each workload's flow share (`None` without `flow`), the groups' weights being the
/// sum over their workloads' streams.
pub fn shares(workloads: &[Workload]) -> Vec<Option<FlowShare>> {
    let mut groups: Vec<(u32, Arc<FlowGroup>)> = Vec::new();
    workloads
        .iter()
        .map(|w| {
            let f = w.flow?;
            let group = match groups.iter().find(|(id, _)| *id == f.id) {
                Some((_, g)) => g.clone(),
                None => {
                    let g = Arc::new(FlowGroup {
                        issued: AtomicU64::new(1),
                        weight: AtomicU64::new(0),
                    });
                    groups.push((f.id, g.clone()));
                    g
                }
            };
            let weight = u64::from(f.weight);
            group
                .weight
                .fetch_add(weight * u64::from(w.streams), Ordering::Relaxed);
            Some(FlowShare {
                group,
                weight,
                hold_ns: if f.sleep_ns > 0 {
                    f.sleep_ns
                } else {
                    FLOW_RETRY_NS
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::Flow;

    fn flow_workload(id: u32, weight: u32, streams: u32) -> Workload {
        Workload {
            streams,
            flow: Some(Flow {
                id,
                weight,
                sleep_ns: 0,
            }),
            ..Default::default()
        }
    }

    /// Two streams taking turns whenever allowed issue in the ratio of their weights.
    #[test]
    fn streams_issue_in_the_ratio_of_their_weights() {
        let ws = [flow_workload(0, 1, 1), flow_workload(0, 8, 1)];
        let s = shares(&ws);
        let (a, b) = (s[0].clone().unwrap(), s[1].clone().unwrap());
        let mut own = [0u64; 2];
        for _ in 0..9000 {
            for (i, f) in [&a, &b].into_iter().enumerate() {
                if f.may_issue(own[i]) {
                    f.count();
                    own[i] += 1;
                }
            }
        }
        let ratio = own[1] as f64 / own[0] as f64;
        assert!((ratio - 8.0).abs() < 0.1, "{own:?}");
        // Once the heavy one leaves, the light one is never held.
        b.leave(own[1]);
        for _ in 0..100 {
            assert!(a.may_issue(own[0]));
            a.count();
            own[0] += 1;
        }
    }

    #[test]
    fn groups_are_per_id_and_workloads_without_flow_have_none() {
        let ws = [
            flow_workload(0, 1, 2),
            Workload::default(),
            flow_workload(1, 3, 1),
        ];
        let s = shares(&ws);
        assert!(s[1].is_none());
        let (a, c) = (s[0].as_ref().unwrap(), s[2].as_ref().unwrap());
        assert!(!Arc::ptr_eq(&a.group, &c.group));
        assert_eq!(a.group.weight.load(Ordering::Relaxed), 2);
        assert_eq!(c.group.weight.load(Ordering::Relaxed), 3);
        assert_eq!(a.hold_ns, FLOW_RETRY_NS);
    }
}
