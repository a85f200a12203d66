//! `--repeat N` (the run setting `repeat`): a run measured N times over, each
//! repetition a full run — targets opened afresh, its own warm-up — with the run's
//! seed + i and a `sim:` device's seed + i (i from 0), so repetitions are independent
//! draws and an invocation repeats them exactly.
//!
//! The run keeps one entry in `runs[]`: after each repetition the entry is replaced
//! by that repetition's (its totals, intervals and everything else are the last
//! repetition's), carrying every repetition's totals so far in `repetitions[]` and
//! their summary in `repeats` (`result::repeats`). So the JSON grows by a few hundred
//! bytes per repetition, not by a run's intervals, and the outputs rewritten after
//! each repetition lose nothing to a later failure or Ctrl-C (an interrupted
//! repetition is kept, marked, and left out of the summary).

use super::{AppError, Session};
use crate::plan::model::RunSpec;
use crate::plan::settings::declared::REPEAT;
use crate::result::repeats::{LatencyFigures, Repeats, Repetition};
use crate::result::RunResult;
use crate::run::RunOptions;

/// How many times `r` is measured (`repeat`, at least 1).
pub(super) fn count(r: &RunSpec) -> usize {
    usize::try_from(r.settings.count(&REPEAT))
        .unwrap_or(usize::MAX)
        .max(1)
}

/// Measures `r` `n` times and records it as one run.
pub(super) fn run<'s>(
    session: &'s mut Session<'_>,
    r: &RunSpec,
    label: &str,
    n: u64,
) -> Result<&'s RunResult, AppError> {
    let mut kept: Vec<Repetition> = Vec::new();
    for i in 0..n {
        if i > 0 && session.stopped() {
            break;
        }
        let spec = RunSpec {
            seed: r.seed.wrapping_add(i),
            ..r.clone()
        };
        let opts = RunOptions {
            repetition: i,
            ..session.opts.clone()
        };
        let rep_label = format!("{label} repetition {}/{n}", i + 1);
        let (mut result, mut warnings) = session.measure(&spec, &rep_label, &opts)?;
        // A warning every repetition gives is said once.
        warnings.retain(|w| i == 0 || !session.doc.warnings.contains(w));
        if i > 0 {
            // The previous repetition's entry: this one replaces it.
            session.doc.runs.pop();
        }
        kept.push(repetition_of(&result, spec.seed));
        result.repetitions = kept.clone();
        result.repeats = Repeats::of(&kept);
        session.record(&spec, result, warnings)?;
    }
    Ok(session.doc.runs.last().expect("a repetition was recorded"))
}

/// What a repetition keeps of its run's totals.
fn repetition_of(r: &RunResult, seed: u64) -> Repetition {
    let all = &r.totals.all;
    let l = &all.latency_us;
    Repetition {
        seed,
        duration_s: r.duration_s,
        ios: all.ios,
        errors: all.errors,
        iops: all.iops,
        mbps: all.mbps,
        latency_us: LatencyFigures {
            mean: l.mean,
            p50: l.p50,
            p99: l.p99,
            p99_9: l.p99_9,
        },
        interrupted: r.interrupted,
    }
}
