//! Which share of a plan one rank runs: by default every workload on every rank,
//! with `--split streams` each workload's streams divided among the ranks. Rates
//! given for the run are divided the same way, so the ranks together issue what was
//! asked; `{rank}` and `{host}` in target paths become the rank's own; each rank draws
//! its own offsets (the seed is varied by rank).

use crate::plan::model::{Rate, RunSpec, TargetSpec};

/// How the ranks divide a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Split {
    /// Every workload, with all its streams, on every rank (rates divided by N).
    #[default]
    All,
    /// Each workload's streams divided among the ranks (rates in proportion).
    Streams,
}

impl Split {
    /// The word used on the command line and in the result.
    pub fn name(self) -> &'static str {
        match self {
            Split::All => "all",
            Split::Streams => "streams",
        }
    }

    /// Parses `all` or `streams`.
    pub fn parse(s: &str) -> Result<Split, String> {
        match s {
            "all" => Ok(Split::All),
            "streams" => Ok(Split::Streams),
            _ => Err(format!("'{s}' is not a split: use 'all' or 'streams'")),
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

/// The rank's share of a run and its targets; an error names a workload that
/// cannot be divided.
pub fn localize(
    run: &RunSpec,
    specs: &[TargetSpec],
    place: &Place,
    split: Split,
) -> Result<(RunSpec, Vec<TargetSpec>), String> {
    let mut run = run.clone();
    run.seed = run
        .seed
        .wrapping_add((place.rank as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    for w in &mut run.workloads {
        let (share, streams) = match split {
            Split::All => (1.0 / place.size as f64, w.streams),
            Split::Streams => {
                let mine = streams_of(w.streams, place.rank, place.size);
                if mine == 0 {
                    return Err(format!(
                        "workload '{}' has {} streams, fewer than the {} ranks: --split streams needs at least one per rank",
                        w.name, w.streams, place.size
                    ));
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
        let t = TargetSpec {
            name: "t0".into(),
            uri: "/data/{host}/f{rank}".into(),
            size_bytes: None,
            direct: None,
            multipath: None,
        };
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
        let (mine, targets) = localize(&run, &specs, &place(2, 4), Split::All).unwrap();
        assert_eq!(mine.workloads[0].streams, 4);
        assert_eq!(mine.workloads[0].rate, Rate::Iops(10_000.0));
        assert_eq!(targets[0].uri, "/data/nodeA/f2");
        assert_ne!(mine.seed, run.seed, "each rank draws its own offsets");
    }

    #[test]
    fn split_streams_divides_streams_and_rate_in_proportion() {
        let (run, specs) = plan(10, Rate::Iops(1_000.0));
        let mut streams = 0;
        let mut rate = 0.0;
        for r in 0..4 {
            let (mine, _) = localize(&run, &specs, &place(r, 4), Split::Streams).unwrap();
            streams += mine.workloads[0].streams;
            if let Rate::Iops(x) = mine.workloads[0].rate {
                rate += x;
            }
        }
        assert_eq!(streams, 10);
        assert!((rate - 1_000.0).abs() < 1e-9);
        let (few, _) = plan(2, Rate::Max);
        let err = localize(&few, &specs, &place(3, 4), Split::Streams).unwrap_err();
        assert!(err.contains("2 streams, fewer than the 4 ranks"), "{err}");
        assert_eq!(Split::parse("streams"), Ok(Split::Streams));
        assert!(Split::parse("hosts").is_err());
    }
}
