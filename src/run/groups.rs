//! Worker groups: which workers run which workloads when workloads of one run ask
//! for different engines, io_uring options or CPUs (fio jobs with their own
//! `ioengine` or `cpus_allowed`). A worker owns one engine instance and its loop is
//! compiled for that engine, so the streams of workloads with different engines
//! cannot share a worker without a per-I/O dispatch; instead each kind of worker is a
//! group with workers of its own, and every stream goes to a worker of its workload's
//! group. A run whose workloads all follow the run's settings is one group: exactly
//! the workers, placement and hot path of a run without per-workload settings.
//!
//! Each group is checked as a run of its own (its engine and engine options against
//! its workloads and targets, its io_uring options against the kernel and devices)
//! through [`Group::run`], a copy of the run with the group's settings and workloads.
//! So an operation engine (exec, cpuio, e4defrag, the file operations …) runs beside
//! engines that move bytes, each group under its own engine's rules.

use crate::plan::model::RunSpec;
use crate::plan::overrides::WorkerKey;

/// One kind of worker and the workloads it runs.
#[derive(Debug, Clone)]
pub(super) struct Group {
    pub key: WorkerKey,
    /// Indices into the run's workloads.
    pub workloads: Vec<usize>,
    /// The run as this group's checks see it: the group's engine, io_uring options
    /// and CPUs, and only its workloads.
    pub run: RunSpec,
}

/// The run's worker groups, in order of their first workload. A share mix belongs to
/// its first workload's group (its streams are that workload's).
pub(super) fn groups(run: &RunSpec) -> Vec<Group> {
    let lead = run.workloads.iter().position(|w| w.share_pct.is_some());
    let mut out: Vec<Group> = Vec::new();
    for (i, w) in run.workloads.iter().enumerate() {
        let owner = match (w.share_pct, lead) {
            (Some(_), Some(l)) => &run.workloads[l],
            _ => w,
        };
        let key = run.worker_key(owner);
        match out.iter_mut().find(|g| g.key == key) {
            Some(g) => g.workloads.push(i),
            None => out.push(Group {
                key,
                workloads: vec![i],
                run: RunSpec::default(),
            }),
        }
    }
    for g in &mut out {
        let mut r = run.clone();
        r.engine = g.key.engine;
        r.engine_opts = g.key.opts.clone();
        r.io.uring = g.key.uring.clone();
        r.cpus = g.key.cpus.clone();
        r.workloads = g
            .workloads
            .iter()
            .map(|&i| run.workloads[i].clone())
            .collect();
        g.run = r;
    }
    out
}

/// The group of each workload (by index into the run's workloads).
pub(super) fn group_of(groups: &[Group], nworkloads: usize) -> Vec<usize> {
    let mut of = vec![0; nworkloads];
    for (gi, g) in groups.iter().enumerate() {
        for &w in &g.workloads {
            of[w] = gi;
        }
    }
    of
}

/// Why a run's workloads cannot have workers of their own kinds, if they cannot: the
/// `net` engine is not run by workers; an engine that shapes its target (a `files:` set created, visited or deleted by the
/// file operations; a file created as a hole for falloc and ftruncate) cannot share
/// that target with workloads of another engine, and the members of a share mix run
/// on one set of streams, so they need one engine and CPU set.
pub(super) fn check(run: &RunSpec) -> Result<(), String> {
    if run.mixes_workers() {
        let odd = run
            .workloads
            .iter()
            .map(|w| run.engine_of(w))
            .find(|&e| !crate::plan::overrides::mixes_with_others(e));
        if let Some(e) = odd {
            return Err(format!(
                "the {} engine runs socket peers, not workers, and needs a run of its own; \
                 this run's workloads ask for different engines or CPUs",
                e.name()
            ));
        }
    }
    for w in &run.workloads {
        let engine = run.engine_of(w);
        if !shapes_target(engine) {
            continue;
        }
        let other = run
            .workloads
            .iter()
            .find(|o| o.target == w.target && run.engine_of(o) != engine);
        if let Some(o) = other {
            return Err(format!(
                "workload '{}' (the {} engine) and workload '{}' (the {} engine) use target \
                 '{}'; the {} engine shapes its target (creates, removes or allocates it), so \
                 it cannot share it with another engine: give each its own target",
                w.name,
                engine.name(),
                o.name,
                run.engine_of(o).name(),
                w.target,
                engine.name()
            ));
        }
    }
    let mut mix = run.workloads.iter().filter(|w| w.share_pct.is_some());
    if let Some(first) = mix.next() {
        let key = run.worker_key(first);
        if let Some(other) = mix.find(|w| run.worker_key(w) != key) {
            return Err(format!(
                "workloads '{}' and '{}' share streams (a share mix) but ask for different \
                 engines, io_uring options or CPUs; give them the same",
                first.name, other.name
            ));
        }
    }
    Ok(())
}

/// Engines whose target is theirs alone in a run: the file operations (their
/// `files:` set) and falloc, ftruncate (a missing file is created as a hole for them).
pub(super) fn shapes_target(engine: crate::plan::model::EngineKind) -> bool {
    engine.is_file_op() || engine.desc().shapes_target
}

/// How many workers each group gets: the user's `--workers` divided over the groups
/// by their streams (at least one each), or `None` for each to choose as a run does.
pub(super) fn worker_counts(
    workers: Option<usize>,
    streams_per_group: &[usize],
) -> Vec<Option<usize>> {
    let Some(total) = workers else {
        return vec![None; streams_per_group.len()];
    };
    let n = streams_per_group.len().max(1);
    let all: usize = streams_per_group.iter().sum::<usize>().max(1);
    let spare = total.saturating_sub(n);
    let mut counts: Vec<usize> = streams_per_group
        .iter()
        .map(|&s| 1 + spare * s / all)
        .collect();
    // What rounding down left goes to the groups with the most streams.
    let left = total.saturating_sub(counts.iter().sum());
    let mut order: Vec<usize> = (0..counts.len()).collect();
    order.sort_by_key(|&g| std::cmp::Reverse(streams_per_group[g]));
    for g in order.into_iter().cycle().take(left) {
        counts[g] += 1;
    }
    counts.into_iter().map(Some).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::{EngineKind, Workload};

    fn run(engines: &[Option<EngineKind>]) -> RunSpec {
        RunSpec {
            engine: EngineKind::Sync,
            workloads: engines
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let mut w = Workload {
                        name: format!("w{i}"),
                        ..Default::default()
                    };
                    w.overrides.engine = *e;
                    w
                })
                .collect(),
            ..RunSpec::default()
        }
    }

    #[test]
    fn workloads_of_one_kind_share_a_group() {
        let r = run(&[None, Some(EngineKind::Uring), Some(EngineKind::Sync), None]);
        let g = groups(&r);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].workloads, vec![0, 2, 3]);
        assert_eq!(g[1].workloads, vec![1]);
        assert_eq!(g[1].run.engine, EngineKind::Uring);
        assert_eq!(g[1].run.workloads.len(), 1);
        assert_eq!(group_of(&g, 4), vec![0, 1, 0, 0]);
        assert_eq!(groups(&run(&[None, None])).len(), 1);
    }

    #[test]
    fn workers_are_divided_by_streams_at_least_one_each() {
        assert_eq!(worker_counts(None, &[3, 1]), vec![None, None]);
        assert_eq!(worker_counts(Some(2), &[3, 1]), vec![Some(1), Some(1)]);
        assert_eq!(worker_counts(Some(5), &[3, 1]), vec![Some(4), Some(1)]);
        assert_eq!(worker_counts(Some(4), &[2, 2]), vec![Some(2), Some(2)]);
        // Fewer than the groups: each still has one.
        assert_eq!(worker_counts(Some(1), &[2, 2]), vec![Some(1), Some(1)]);
    }

    #[test]
    fn operation_engines_mix_but_keep_a_target_they_shape_to_themselves() {
        // exec beside cpuio, e4defrag beside uring on one target: groups of their own.
        let mut r = run(&[Some(EngineKind::Exec), Some(EngineKind::Cpuio)]);
        assert!(check(&r).is_ok());
        assert_eq!(groups(&r).len(), 2);
        r = run(&[Some(EngineKind::E4defrag), Some(EngineKind::Uring)]);
        assert!(check(&r).is_ok());
        // A file operation or falloc sharing its target with another engine.
        for e in [EngineKind::FileCreate, EngineKind::Falloc] {
            r = run(&[Some(e), None]);
            let why = check(&r).unwrap_err();
            assert!(why.contains("shapes its target"), "{why}");
            r.workloads[1].target = "other".into();
            assert!(check(&r).is_ok());
        }
        // net runs socket peers, never beside workers.
        r = run(&[Some(EngineKind::Net), None]);
        assert!(check(&r).unwrap_err().contains("socket peers"));
    }

    #[test]
    fn other_engine_options_make_another_group() {
        use crate::plan::engine_opts::{DefragSpec, EngineOptions};
        let mut r = run(&[Some(EngineKind::E4defrag), Some(EngineKind::E4defrag), None]);
        let donor = |d: &str| {
            Some(EngineOptions {
                defrag: Some(DefragSpec {
                    donor: d.into(),
                    inplace: false,
                }),
                ..Default::default()
            })
        };
        r.workloads[0].overrides.engine_opts = donor("a");
        r.workloads[1].overrides.engine_opts = donor("b");
        // The sync workload ignores a donor: its key has none.
        r.workloads[2].overrides.engine_opts = donor("c");
        let g = groups(&r);
        assert_eq!(g.len(), 3);
        assert_eq!(g[1].run.engine_opts, donor("b").unwrap());
        assert_eq!(g[2].key.opts, EngineOptions::default());
        r.workloads[1].overrides.engine_opts = donor("a");
        assert_eq!(groups(&r).len(), 2);
    }

    #[test]
    fn a_share_mix_needs_one_kind_of_worker() {
        let mut r = run(&[None, Some(EngineKind::Uring)]);
        for w in &mut r.workloads {
            w.share_pct = Some(50.0);
        }
        assert!(check(&r).unwrap_err().contains("share streams"));
        r.workloads[1].overrides.engine = None;
        assert!(check(&r).is_ok());
    }
}
