//! Steady-state rounds (`run --steady-state`) and the SNIA PTS matrices (`ioscope
//! pts`). A round is one run (or one pass over a test matrix); the tracked metric of
//! each round feeds `run::steady::judge`, and rounds stop when it says steady or the
//! round limit passes. Every run of every round is kept in the result.

use super::{AppError, Metric, PtsInvocation, PtsTest, RunInvocation, Session, Steady};
use crate::plan::model::*;
use crate::plan::units::format_duration_ns;
use crate::result::SteadyState;
use crate::run::steady::{judge, MAX_ROUNDS, WINDOW};
use crate::run::RunOptions;

/// Repeats `rounds` until the metric is steady; `round(session, i)` runs round `i`
/// and returns the run whose metric is tracked.
fn rounds_until_steady(
    s: &mut Session,
    metric: Metric,
    max_rounds: usize,
    mut round: impl FnMut(&mut Session, usize) -> Result<usize, AppError>,
) -> Result<SteadyState, AppError> {
    let mut st = SteadyState {
        metric: metric.name().to_string(),
        ..Default::default()
    };
    for i in 0..max_rounds {
        if s.stopped() {
            break;
        }
        s.phase(crate::metrics::Phase::Round(i as u64 + 1));
        let run_idx = round(s, i)?;
        let v = metric.of(&s.doc.runs[run_idx]);
        st.rounds.push(v);
        st.round_runs.push(run_idx);
        if let Some(verdict) = judge(&st.rounds) {
            st.window = (st.rounds.len() - WINDOW, st.rounds.len() - 1);
            st.reached = verdict.reached;
            st.average = verdict.average;
            st.range_pct = verdict.range_pct;
            st.slope_pct = verdict.slope_pct;
            s.say(&format!(
                "steady state after round {}: range {:.1}% (≤ 20), slope {:.1}% (≤ 10) of average {:.1} → {}",
                i + 1,
                verdict.range_pct,
                verdict.slope_pct,
                verdict.average,
                if verdict.reached { "steady" } else { "not yet" }
            ))?;
            if verdict.reached {
                break;
            }
        }
        s.doc.steady_state = Some(st.clone());
    }
    Ok(st)
}

fn print_verdict(st: &SteadyState) -> Result<(), AppError> {
    if st.rounds.len() < WINDOW {
        outln!(
            "steady state: not judged ({} rounds, {WINDOW} needed)",
            st.rounds.len()
        )?;
    } else if st.reached {
        outln!(
            "steady state reached in round {} ({} over rounds {}-{}: average {:.1}, range {:.1}%, slope {:.1}%)",
            st.window.1 + 1,
            st.metric,
            st.window.0 + 1,
            st.window.1 + 1,
            st.average,
            st.range_pct,
            st.slope_pct
        )?;
    } else {
        outln!(
            "steady state NOT reached after {} rounds ({}: last window range {:.1}%, slope {:.1}%)",
            st.rounds.len(),
            st.metric,
            st.range_pct,
            st.slope_pct
        )?;
    }
    Ok(())
}

/// `ioscope run --steady-state`.
pub fn steady_run(inv: &RunInvocation, steady: Steady) -> Result<i32, AppError> {
    let RunInvocation {
        plan, opts, output, ..
    } = inv;
    let metric = steady.metric;
    if plan.runs.len() != 1 || plan.runs[0].duration_ns.is_none() {
        return Err(AppError::Refused(
            "--steady-state needs exactly one run with a duration (the round length)".into(),
        ));
    }
    let base = &plan.runs[0];
    crate::run::check(base, &plan.targets, opts).map_err(AppError::Check)?;
    let mut s = Session::start(plan, output, opts, inv.command.clone())?;
    let max_rounds = steady.max_rounds.unwrap_or(MAX_ROUNDS).max(1);
    // At most this long: a steady state ends it sooner.
    let round_s = super::progress::run_s(base);
    s.expect(Some(max_rounds), round_s.map(|t| t * max_rounds as f64));
    let st = rounds_until_steady(&mut s, metric, max_rounds, |s, i| {
        let mut r = base.clone();
        r.name = format!("round {}", i + 1);
        s.run(&r, "")?;
        Ok(s.doc.runs.len() - 1)
    })?;
    print_verdict(&st)?;
    s.doc.steady_state = Some(st);
    s.save()?;
    Ok(s.finish()?.exit_code)
}

/// One PTS test: its matrix and what it tracks.
struct PtsMatrix {
    sizes: Vec<u64>,
    mixes: Vec<u8>,
    pattern: AccessPattern,
    /// (block size, read %) of the tracked cell.
    tracked: (u64, u8),
    metric: Metric,
    qd: u32,
    streams: u32,
}

fn matrix(test: PtsTest) -> PtsMatrix {
    let k = 1024u64;
    match test {
        PtsTest::Iops => PtsMatrix {
            sizes: vec![1024 * k, 128 * k, 64 * k, 32 * k, 16 * k, 8 * k, 4 * k, 512],
            mixes: vec![100, 95, 65, 50, 35, 5, 0],
            pattern: AccessPattern::Random,
            tracked: (4 * k, 0),
            metric: Metric::Iops,
            qd: 32,
            streams: 1,
        },
        PtsTest::Throughput => PtsMatrix {
            sizes: vec![1024 * k, 128 * k],
            mixes: vec![100, 0],
            pattern: AccessPattern::Sequential,
            tracked: (1024 * k, 0),
            metric: Metric::Mbps,
            qd: 32,
            streams: 1,
        },
        PtsTest::Latency => PtsMatrix {
            sizes: vec![512, 4 * k, 8 * k],
            mixes: vec![100, 65, 0],
            pattern: AccessPattern::Random,
            tracked: (4 * k, 0),
            metric: Metric::MeanUs,
            qd: 1,
            streams: 1,
        },
    }
}

/// Runs PTS's preconditioning, if asked for (capped at `cap` bytes), then tells the
/// session what `rounds` rounds of `cells` take at most: a steady state ends them
/// sooner.
fn precondition_then_rounds(
    s: &mut Session,
    precondition: Option<RunSpec>,
    cap: Option<u64>,
    cells: &[RunSpec],
    rounds: usize,
) -> Result<(), AppError> {
    if let Some(mut p) = precondition {
        if let Some(cap) = cap {
            // Bound the work: a duration long enough for `cap` bytes is not knowable, so
            // cap the working set the passes cover instead.
            p.workloads[0].size_bytes = Some(cap / 2);
        }
        // Preconditioning runs by passes: how long it takes is not known ahead.
        s.expect(None, None);
        s.run(&p, " (2x capacity of 128 KiB sequential writes)")?;
    }
    let cells_s: Option<f64> = cells.iter().map(super::progress::run_s).sum();
    s.expect(
        Some(cells.len() * rounds),
        cells_s.map(|t| t * rounds as f64),
    );
    Ok(())
}

/// `ioscope pts iops|throughput|latency TARGET`.
pub fn pts(a: &PtsInvocation) -> Result<i32, AppError> {
    let PtsMatrix {
        sizes,
        mixes,
        pattern,
        tracked,
        metric,
        qd,
        streams,
    } = matrix(a.test);
    let (round_ns, size, engine, cap) =
        (a.round_ns, a.size_bytes, a.engine, a.precondition_max_bytes);
    let targets = vec![TargetSpec {
        size_bytes: size,
        ..TargetSpec::new("t0", a.target.clone())
    }];
    let cell = |name: String, bs: u64, read_pct: u8, pattern: AccessPattern| RunSpec {
        name,
        workloads: vec![Workload {
            name: "pts".into(),
            target: "t0".into(),
            read_pct,
            pattern,
            bs: BlockSizes::fixed(bs),
            qd,
            streams,
            ..Default::default()
        }],
        engine,
        duration_ns: Some(round_ns),
        warmup_ns: 0,
        interval_ns: round_ns.min(DEFAULT_INTERVAL_NS),
        ..RunSpec::default()
    };
    let mut runs: Vec<RunSpec> = Vec::new();
    let mut precondition = None;
    if a.precondition {
        let mut p = cell(
            "precondition".into(),
            128 * 1024,
            0,
            AccessPattern::Sequential,
        );
        p.duration_ns = None;
        p.passes = Some(2);
        p.workloads[0].qd = 32;
        precondition = Some(p);
    }
    for &bs in &sizes {
        for &mix in &mixes {
            runs.push(cell(
                format!("{}k {}/{}", bs as f64 / 1024.0, mix, 100 - mix),
                bs,
                mix,
                pattern,
            ));
        }
    }
    let plan = Plan {
        targets,
        runs: precondition
            .iter()
            .cloned()
            .chain(runs.iter().cloned())
            .collect(),
        warnings: Vec::new(),
        data: Default::default(),
    };
    let opts = RunOptions {
        force: a.force,
        ..Default::default()
    };
    for r in &plan.runs {
        crate::run::check(r, &plan.targets, &opts).map_err(AppError::Check)?;
    }
    let mut s = Session::start(&plan, &a.output, &opts, a.command.clone())?;
    s.say(&format!(
        "PTS {}: {} cells of {} per round, up to {} rounds{}",
        a.test.name(),
        runs.len(),
        format_duration_ns(a.round_ns),
        a.max_rounds,
        if precondition.is_some() {
            ", after preconditioning"
        } else {
            ""
        }
    ))?;
    precondition_then_rounds(&mut s, precondition, cap, &runs, a.max_rounds.max(1))?;
    let st = rounds_until_steady(&mut s, metric, a.max_rounds.max(1), |s, i| {
        let mut tracked_idx = 0;
        for r in &runs {
            let mut r = r.clone();
            r.name = format!("round {} {}", i + 1, r.name);
            s.run(&r, "")?;
            let w = &r.workloads[0];
            if w.bs.single() == Some(tracked.0) && w.read_pct == tracked.1 {
                tracked_idx = s.doc.runs.len() - 1;
            }
        }
        Ok(tracked_idx)
    })?;
    print_verdict(&st)?;
    s.doc.steady_state = Some(st);
    s.save()?;
    Ok(s.finish()?.exit_code)
}
