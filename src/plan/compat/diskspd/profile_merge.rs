//! A diskspd profile's lines → one plan: each `<Target>` of a `<TimeSpan>` is read as a
//! command line of its own (the time span's switches, then the target's), so targets
//! keep their own block size, mix, queue depth, pacing and access; their workloads
//! then make one run per time span. What ioscope holds per run or per plan rather
//! than per workload (write-through, the write content) must agree between targets,
//! or the profile is refused at the target that differs: never merged silently.

use super::{read_line, Word};
use crate::plan::compat::{CompatError, Loc, TargetTable, UnsupportedList};
use crate::plan::model::{DataSettings, Plan, RunSpec};

/// One `<TimeSpan>`: its own words and each target's (the path last).
pub(super) struct Span {
    pub words: Vec<Word>,
    pub targets: Vec<Vec<Word>>,
    /// `<ThreadCount>` above 0: threads shared by the targets (`-F`).
    pub shared_threads: bool,
    pub loc: Loc,
}

/// The plan of `spans`; several time spans are several runs, in order.
pub(super) fn translate(
    spans: Vec<Span>,
    target_override: Option<&str>,
    un: &mut UnsupportedList,
) -> Result<Plan, CompatError> {
    let several = spans.len() > 1;
    let mut table = TargetTable::default();
    let mut runs = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let mut data: Option<DataSettings> = None;
    for (i, span) in spans.iter().enumerate() {
        let mut run: Option<RunSpec> = None;
        for target in &span.targets {
            let loc = target.last().map_or(span.loc.clone(), |w| w.loc.clone());
            let mut words = span.words.clone();
            words.extend(target.iter().cloned());
            let mut own = UnsupportedList::default();
            let line = read_line(&words, target_override, &mut own)?;
            let t = line.into_translated(own)?;
            for u in t.unsupported {
                if !un.0.contains(&u) {
                    un.0.push(u);
                }
            }
            let Plan {
                targets,
                runs: mut line_runs,
                warnings: said,
                data: content,
            } = t.plan;
            for w in said {
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
            let mut r = line_runs.remove(0);
            // A target that only reads writes no content to disagree about.
            if r.workloads.iter().any(|w| w.read_pct < 100) {
                match &data {
                    Some(d) if *d != content => {
                        return Err(loc.error(
                            "this <Target> writes other content (<WriteBufferContent>, \
                         <RandomWriteData>) than the one before: ioscope writes one \
                         content per plan",
                        ))
                    }
                    _ => data = Some(content),
                }
            }
            let spec = &targets[0];
            let name = table.intern(&spec.uri, spec.size_bytes, spec.direct, un, &loc);
            for w in &mut r.workloads {
                w.target.clone_from(&name);
            }
            run = Some(match run {
                None => r,
                Some(acc) => join(acc, r, span.shared_threads, &loc)?,
            });
        }
        let Some(mut run) = run else {
            return Err(span.loc.error("<TimeSpan> has no <Targets><Target>"));
        };
        for (n, w) in run.workloads.iter_mut().enumerate() {
            w.name = format!("w{n}");
        }
        if several {
            run.name = format!("timespan{}", i + 1);
        }
        runs.push(run);
    }
    Ok(Plan {
        targets: table.targets,
        runs,
        warnings,
        data: data.unwrap_or_default(),
    })
}

/// One time span's run so far and the next target's: their workloads together, the
/// threads summed (`<ThreadsPerFile>`) or shared (`<ThreadCount>`, `-F`).
fn join(
    mut acc: RunSpec,
    next: RunSpec,
    shared_threads: bool,
    loc: &Loc,
) -> Result<RunSpec, CompatError> {
    if acc.io != next.io {
        return Err(loc.error(
            "this <Target> is opened write-through (<WriteThrough>, <DisableAllCache>) \
             and the first is not, or the other way round: ioscope opens a run's \
             targets write-through alike",
        ));
    }
    let bare = |r: &RunSpec| RunSpec {
        workloads: Vec::new(),
        workers: None,
        ..r.clone()
    };
    if bare(&acc) != bare(&next) {
        return Err(loc.error(
            "this <Target> needs run settings other than the first target's; ioscope \
             holds them per run",
        ));
    }
    if !shared_threads {
        acc.workers = match (acc.workers, next.workers) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }
    acc.workloads.extend(next.workloads);
    Ok(acc)
}
