//! Which share of a plan one rank runs: by default every workload on every rank,
//! with `--split streams` each workload's streams divided among the ranks; a plan
//! with host definitions (vdbench `hd=`) gives each rank only its definition's
//! targets, divided among the ranks playing it. Rates
//! given for the run are divided the same way, so the ranks together issue what was
//! asked; `{rank}` and `{host}` in target paths become the rank's own; each rank draws
//! its own offsets (the seed is varied by rank).

use super::hostmap;
use crate::plan::model::{Rate, RunSpec, TargetSpec};
use crate::plan::settings::declared::{TRACE, TRACE_SHARE};
use crate::plan::settings::{intern, Value};

/// A `--split` value that is neither `all` nor `streams` (the text given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a split: use 'all' or 'streams'")]
pub struct SplitError(pub String);

/// Why a rank's share of a plan cannot be worked out. Every rank works it out from
/// the same inputs, so all fail alike, before any I/O.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlacementError {
    /// The ranks cannot play the run's host definitions.
    #[error(transparent)]
    Hosts(#[from] hostmap::AssignError),
    /// A host definition with nothing to do in this run.
    #[error(
        "run '{run}' has no workload on the sds of hd={host} ({targets}): every host \
         definition needs one"
    )]
    IdleHost {
        run: String,
        host: String,
        /// The definition's sds, comma-separated.
        targets: String,
    },
    /// `skew=` shares across workloads that different host definitions run.
    #[error(
        "run '{run}': skew= mixes workloads on the sds of several host definitions; give \
         each host its own wd"
    )]
    MixedSkew { run: String },
    /// `--split streams` with fewer streams than ranks.
    #[error(
        "workload '{workload}' has {streams} streams, fewer than the {ranks} ranks running \
         it: --split streams needs at least one per rank"
    )]
    FewStreams {
        workload: String,
        streams: u32,
        ranks: u32,
    },
    /// A plan of several host definitions outside a multi-rank run.
    #[error(
        "the plan defines {hosts} hosts ({names}): run it under mpirun with at least {hosts} \
         ranks (an ioscope built with the `mpi` feature; docs/mpi.md), or remove the hd= \
         lines to run here"
    )]
    NeedsRanks {
        hosts: usize,
        /// The definitions (`hd=NAME`, comma-separated).
        names: String,
    },
}

/// How the ranks divide a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Split {
    /// Every workload, with all its streams, on every rank (rates divided by N).
    #[default]
    All,
    /// Each workload's streams divided among the ranks (rates in proportion).
    Streams,
    /// Each trace workload (one per traced device) on one rank, round-robin; other
    /// workloads as `all`.
    Devices,
}

impl Split {
    /// The word used on the command line and in the result.
    pub fn name(self) -> &'static str {
        match self {
            Split::All => "all",
            Split::Streams => "streams",
            Split::Devices => "devices",
        }
    }

    /// Parses `all`, `streams` or `devices`.
    pub fn parse(s: &str) -> Result<Split, SplitError> {
        match s {
            "all" => Ok(Split::All),
            "streams" => Ok(Split::Streams),
            "devices" => Ok(Split::Devices),
            _ => Err(SplitError(s.to_string())),
        }
    }
}

/// Where this process sits among the ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub rank: u32,
    pub size: u32,
    pub host: String,
}

/// Streams of a workload of `total` streams that rank `rank` of `size` runs.
pub fn streams_of(total: u32, rank: u32, size: u32) -> u32 {
    total / size + u32::from(rank < total % size)
}

/// Who runs what: every rank everything, or, for a plan with host definitions,
/// each rank its definition's targets.
struct Group {
    /// Each rank's definition; `None` = no definitions.
    assignment: Option<hostmap::Assignment>,
    /// Targets of this rank's definition; `None` = all.
    targets: Option<Vec<String>>,
}

impl Group {
    /// This rank's position among the ranks running a workload on `target`, and how
    /// many they are (its rate and streams are divided among them).
    fn runners(&self, run: &RunSpec, place: &Place, target: &str) -> (u32, u32) {
        let Some(a) = &self.assignment else {
            return (place.rank, place.size);
        };
        let on: Vec<usize> = (0..a.of_rank.len())
            .filter(|&r| run.hosts[a.of_rank[r]].targets.iter().any(|t| t == target))
            .collect();
        let index = on.iter().position(|&r| r == place.rank as usize);
        (index.unwrap_or(0) as u32, on.len().max(1) as u32)
    }
}

/// The group of `place` among `hosts` (every rank's host) for `run`; an error when
/// the ranks cannot play the run's host definitions.
fn group(run: &RunSpec, place: &Place, hosts: &[String]) -> Result<Group, PlacementError> {
    if run.hosts.is_empty() {
        return Ok(Group {
            assignment: None,
            targets: None,
        });
    }
    let a = hostmap::assign(&run.hosts, hosts)?;
    // Every definition must have work in this run, so that all ranks fail alike.
    for h in &run.hosts {
        if !run.workloads.iter().any(|w| h.targets.contains(&w.target)) {
            return Err(PlacementError::IdleHost {
                run: run.name.clone(),
                host: h.name.clone(),
                targets: h.targets.join(", "),
            });
        }
    }
    let mine = a.of_rank[place.rank as usize];
    Ok(Group {
        targets: Some(run.hosts[mine].targets.clone()),
        assignment: Some(a),
    })
}

/// The host definition rank `rank` plays in `run`, if the run has any.
pub fn host_def_of(run: &RunSpec, hosts: &[String], rank: u32) -> Option<String> {
    let a = hostmap::assign(&run.hosts, hosts).ok()?;
    Some(run.hosts[*a.of_rank.get(rank as usize)?].name.clone())
}

/// The rank's share of a run and its targets (`hosts[r]` is rank r's host); an
/// error names a workload that cannot be divided or host definitions the ranks
/// cannot play.
pub fn localize(
    run: &RunSpec,
    specs: &[TargetSpec],
    place: &Place,
    split: Split,
    hosts: &[String],
) -> Result<(RunSpec, Vec<TargetSpec>), PlacementError> {
    let g = group(run, place, hosts)?;
    let mut run = run.clone();
    run.seed = run
        .seed
        .wrapping_add((place.rank as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    if let Some(keep) = &g.targets {
        let mixed = run.workloads.iter().any(|w| w.share_pct.is_some())
            && run.workloads.iter().any(|w| !keep.contains(&w.target));
        if mixed {
            return Err(PlacementError::MixedSkew {
                run: run.name.clone(),
            });
        }
        run.workloads.retain(|w| keep.contains(&w.target));
    }
    let original = run.clone();
    share_traces(&mut run, &original, &g, place, split);
    for w in run.workloads.iter_mut().filter(|w| !is_trace(w)) {
        let (index, size) = g.runners(&original, place, &w.target);
        let (share, streams) = match split {
            Split::All | Split::Devices => (1.0 / size as f64, w.streams),
            Split::Streams => {
                let mine = streams_of(w.streams, index, size);
                if mine == 0 {
                    return Err(PlacementError::FewStreams {
                        workload: w.name.clone(),
                        streams: w.streams,
                        ranks: size,
                    });
                }
                (mine as f64 / w.streams as f64, mine)
            }
        };
        w.streams = streams;
        if let Rate::Iops(r) = w.rate {
            w.rate = Rate::Iops(r * share);
        }
    }
    let specs = specs
        .iter()
        .filter(|t| g.targets.as_ref().map_or(true, |k| k.contains(&t.name)))
        .map(|t| TargetSpec {
            uri: t
                .uri
                .replace("{rank}", &place.rank.to_string())
                .replace("{host}", &place.host),
            ..t.clone()
        })
        .collect();
    Ok((run, specs))
}

fn is_trace(w: &crate::plan::model::Workload) -> bool {
    !w.settings.get(&TRACE).as_str().is_empty()
}

/// The rank's part of each trace workload: under `devices` the workloads (one per
/// traced device) dealt round-robin to the ranks that share their target, the
/// others dropped; otherwise the rank's time slices of each (`trace_share`), so the
/// ranks replay the whole trace between them, once.
fn share_traces(run: &mut RunSpec, original: &RunSpec, g: &Group, place: &Place, split: Split) {
    let mut dealt = 0usize;
    run.workloads.retain_mut(|w| {
        if !is_trace(w) {
            return true;
        }
        let (index, size) = g.runners(original, place, &w.target);
        if split == Split::Devices {
            dealt += 1;
            return (dealt - 1) % size as usize == index as usize;
        }
        if size > 1 {
            let share = format!("{}/{size}", index + 1);
            w.settings.set(&TRACE_SHARE, Value::Text(intern(&share)));
        }
        true
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::Workload;

    fn plan(streams: u32, rate: Rate) -> (RunSpec, Vec<TargetSpec>) {
        let run = RunSpec {
            name: "r".into(),
            workloads: vec![Workload {
                streams,
                rate,
                ..Default::default()
            }],
            ..RunSpec::default()
        };
        let t = TargetSpec::new("t0", "/data/{host}/f{rank}");
        (run, vec![t])
    }

    fn place(rank: u32, size: u32) -> Place {
        Place {
            rank,
            size,
            host: "nodeA".into(),
        }
    }

    #[test]
    fn every_rank_runs_everything_at_its_share_of_the_rate() {
        let (run, specs) = plan(4, Rate::Iops(40_000.0));
        let (mine, targets) = localize(&run, &specs, &place(2, 4), Split::All, &[]).unwrap();
        assert_eq!(mine.workloads[0].streams, 4);
        assert_eq!(mine.workloads[0].rate, Rate::Iops(10_000.0));
        assert_eq!(targets[0].uri, "/data/nodeA/f2");
        assert_ne!(mine.seed, run.seed, "each rank draws its own offsets");
    }

    /// Two host definitions on one machine, a target each and one shared.
    fn two_hosts() -> (RunSpec, Vec<TargetSpec>) {
        use crate::plan::hosts::HostDef;
        let w = |t: &str| Workload {
            name: format!("w_{t}"),
            target: t.into(),
            streams: 4,
            rate: Rate::Iops(1_000.0),
            ..Default::default()
        };
        let hd = |n: &str, t: &[&str]| HostDef {
            name: n.into(),
            system: Some("localhost".into()),
            targets: t.iter().map(|s| s.to_string()).collect(),
        };
        let run = RunSpec {
            name: "rd1".into(),
            workloads: vec![w("sd1"), w("sd2"), w("shared")],
            hosts: vec![hd("h1", &["sd1", "shared"]), hd("h2", &["sd2", "shared"])],
            ..RunSpec::default()
        };
        let t = |n: &str| TargetSpec::new(n, format!("/data/{n}"));
        (run, vec![t("sd1"), t("sd2"), t("shared")])
    }

    #[test]
    fn host_definitions_keep_each_ranks_own_targets_and_divide_within_the_group() {
        let (run, specs) = two_hosts();
        let hosts: Vec<String> = vec!["vm".into(); 4];
        // Four ranks on one host, two definitions naming it: ranks 0, 2 play h1.
        let mine = |r: u32| {
            let p = Place {
                rank: r,
                size: 4,
                host: "vm".into(),
            };
            localize(&run, &specs, &p, Split::All, &hosts).unwrap()
        };
        let (r0, t0) = mine(0);
        let names: Vec<&str> = t0.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["sd1", "shared"]);
        let targets: Vec<&str> = r0.workloads.iter().map(|w| w.target.as_str()).collect();
        assert_eq!(targets, ["sd1", "shared"]);
        // h1 is played by two ranks: each issues half of sd1's rate; the shared
        // target is driven by all four, each a quarter of its rate.
        assert_eq!(r0.workloads[0].rate, Rate::Iops(500.0));
        assert_eq!(r0.workloads[1].rate, Rate::Iops(250.0));
        let (r1, _) = mine(1);
        assert_eq!(r1.workloads[0].target, "sd2");
        // Together the ranks issue exactly the plan's rate.
        let total: f64 = (0..4).map(|r| mine(r).0.requested_iops()).sum();
        assert!((total - run.requested_iops()).abs() < 1e-9, "{total}");
        assert_eq!(host_def_of(&run, &hosts, 2).as_deref(), Some("h1"));
        assert_eq!(host_def_of(&run, &hosts, 3).as_deref(), Some("h2"));
        // Streams split within the group: h1's two ranks share sd1's 4 streams.
        let p = |r| Place {
            rank: r,
            size: 4,
            host: "vm".into(),
        };
        let s0 = localize(&run, &specs, &p(0), Split::Streams, &hosts)
            .unwrap()
            .0;
        let s2 = localize(&run, &specs, &p(2), Split::Streams, &hosts)
            .unwrap()
            .0;
        assert_eq!(s0.workloads[0].streams + s2.workloads[0].streams, 4);
        // One rank for two definitions: refused on every rank alike.
        let one = vec!["vm".to_string()];
        let err = localize(&run, &specs, &place(0, 1), Split::All, &one).unwrap_err();
        assert!(matches!(err, PlacementError::Hosts(_)), "{err:?}");
        let err = err.to_string();
        assert!(err.contains("name host vm, but only 1 rank"), "{err}");
    }

    #[test]
    fn a_host_definition_without_work_in_the_run_is_refused() {
        let (mut run, specs) = two_hosts();
        run.workloads.retain(|w| w.target == "sd1");
        let hosts: Vec<String> = vec!["vm".into(); 2];
        let err = localize(&run, &specs, &place(0, 2), Split::All, &hosts).unwrap_err();
        assert!(
            err.to_string()
                .contains("no workload on the sds of hd=h2 (sd2, shared)"),
            "{err}"
        );
    }

    #[test]
    fn split_streams_divides_streams_and_rate_in_proportion() {
        let (run, specs) = plan(10, Rate::Iops(1_000.0));
        let mut streams = 0;
        let mut rate = 0.0;
        for r in 0..4 {
            let (mine, _) = localize(&run, &specs, &place(r, 4), Split::Streams, &[]).unwrap();
            streams += mine.workloads[0].streams;
            if let Rate::Iops(x) = mine.workloads[0].rate {
                rate += x;
            }
        }
        assert_eq!(streams, 10);
        assert!((rate - 1_000.0).abs() < 1e-9);
        let (few, _) = plan(2, Rate::Max);
        let err = localize(&few, &specs, &place(3, 4), Split::Streams, &[]).unwrap_err();
        assert!(
            err.to_string()
                .contains("2 streams, fewer than the 4 ranks"),
            "{err}"
        );
        assert_eq!(Split::parse("streams"), Ok(Split::Streams));
        assert_eq!(
            Split::parse("hosts").unwrap_err().to_string(),
            "'hosts' is not a split: use 'all' or 'streams'"
        );
    }
}
