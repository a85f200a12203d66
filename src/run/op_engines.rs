//! Run checks for the engines whose "I/O" is not a read or write of bytes: the
//! file-operation engines (one create, stat or delete per file of a `files:` set),
//! cpuio (CPU time burnt), falloc and ftruncate (space allocated, lengths set). Each
//! combination that would measure something other than what it says is refused
//! here, before anything is opened, naming the engine and the setting — a create run
//! that visits a file twice would time an open of an existing file, not a create.

use super::{RunError, RunOptions};
use crate::plan::engine_kind::FileOp;
use crate::plan::model::{AccessPattern, EngineKind, Op, Rate, RunSpec, TargetKind};
use crate::target::ProbeKind;

/// The operation engines as an extension of the run core: their options, plan,
/// target kinds and file shares checked before the run.
pub(super) const EXTENSION: super::extension::checks::Extension =
    super::extension::checks::Extension {
        check_run: check_options,
        check_group: check_plan,
        engine_misfit: check_targets,
        check_targets: check_shares,
        ..super::extension::checks::Extension::NONE
    };

/// Engine options given to an engine that does not take them: the run's against the
/// run's engine, a workload's own against its engine.
fn check_options(run: &RunSpec) -> Result<(), RunError> {
    let misplaced = |opts: &crate::plan::engine_opts::EngineOptions, engine: EngineKind| {
        opts.misplaced(engine)
            .map(|msg| format!("{msg}, not to the {} engine", engine.name()))
    };
    if let Some(msg) = misplaced(&run.engine_opts, run.engine) {
        return Err(RunError::Setup {
            run: run.name.clone(),
            msg,
        });
    }
    for w in &run.workloads {
        if let Some(msg) = w
            .overrides
            .engine_opts
            .as_ref()
            .and_then(|o| misplaced(o, run.engine_of(w)))
        {
            return Err(RunError::Invalid {
                run: run.name.clone(),
                workload: w.name.clone(),
                msg,
            });
        }
    }
    Ok(())
}

/// The checks on the plan alone (no target looked at), for one worker group: `run`
/// has the group's engine, its options and its workloads.
fn check_plan(run: &RunSpec, opts: &RunOptions) -> Result<(), RunError> {
    let engine = run.engine;
    let setup = |msg: String| RunError::Setup {
        run: run.name.clone(),
        msg,
    };
    if engine.desc().moves_bytes {
        return Ok(());
    }
    let verify = run
        .workloads
        .iter()
        .any(|w| opts.data.for_workload(w).verify);
    // A workload that says `verify = false` keeps out of the journal too: the journal
    // records the writes of the run's other (byte) workloads on the same target.
    let opted_out = run
        .workloads
        .iter()
        .all(|w| w.overrides.data.verify == Some(false));
    if verify || (opts.data.journal.is_some() && !opted_out) {
        let why = if engine == EngineKind::PageFault {
            "keeps each worker's data in a private mapping of its own"
        } else {
            "moves no data"
        };
        return Err(setup(format!(
            "the {} engine {why}: verification and journals do not apply",
            engine.name()
        )));
    }
    if engine == EngineKind::Cpuio {
        match run.engine_opts.cpu {
            Some(c) if (1..=100).contains(&c.load_pct) && c.chunk_ns > 0 => {}
            _ => {
                return Err(setup(
                    "the cpuio engine needs a CPU load: --cpuload 1..100 (and a --cpuchunks longer than 0)".into(),
                ))
            }
        }
    }
    if engine == EngineKind::Exec {
        check_exec(run)?;
    }
    if engine == EngineKind::E4defrag
        && !run
            .engine_opts
            .defrag
            .as_ref()
            .is_some_and(|d| !d.donor.trim().is_empty())
    {
        return Err(setup(
            "the e4defrag engine needs a donor file: defrag_donor = PATH (fio donorname)".into(),
        ));
    }
    for w in &run.workloads {
        check_workload(run, w)?;
    }
    Ok(())
}

/// exec runs one program for the run's duration: a program, one stream, a duration.
fn check_exec(run: &RunSpec) -> Result<(), RunError> {
    let setup = |msg: &str| RunError::Setup {
        run: run.name.clone(),
        msg: format!("the exec engine {msg}"),
    };
    match &run.engine_opts.exec {
        Some(x) if !x.program.trim().is_empty() => {}
        _ => return Err(setup("needs a program: --exec-program PROGRAM")),
    }
    if run.total_streams() != 1 || run.workloads.len() != 1 {
        return Err(setup(
            "runs one program: give it one workload of one stream",
        ));
    }
    let w = &run.workloads[0];
    let timed = run.duration_ns.is_some() || w.pauses.stop_ns > 0;
    if !timed || run.passes_of(w).is_some() {
        return Err(setup(
            "runs its program for the run's duration: give --duration, not --passes",
        ));
    }
    Ok(())
}

/// One workload against its engine's rules.
fn check_workload(run: &RunSpec, w: &crate::plan::model::Workload) -> Result<(), RunError> {
    let engine = run.engine;
    let name = engine.name();
    let invalid = |msg: String| RunError::Invalid {
        run: run.name.clone(),
        workload: w.name.clone(),
        msg,
    };
    match engine.only_op() {
        Some(Op::Write) if w.read_pct != 0 => {
            return Err(invalid(format!(
                "the {name} engine only changes the file system (counted as writes); \
                 reads have no meaning for it: use --rw write (fio rw=write)"
            )))
        }
        Some(Op::Read) if w.read_pct != 100 => {
            return Err(invalid(format!(
                "the {name} engine only looks at files (counted as reads); writes have no \
                 meaning for it: use --rw read (or randread), fio rw=read"
            )))
        }
        _ => {}
    }
    if engine.desc().paces_itself {
        if w.rate != Rate::Max || w.pauses.think_ns > 0 {
            return Err(invalid(format!(
                "the {name} engine paces itself; a rate or think time does not apply"
            )));
        }
        return Ok(());
    }
    if !engine.is_file_op() {
        return Ok(());
    }
    if w.bs.single().is_none() {
        return Err(invalid(format!(
            "each I/O of the {name} engine is one file: give one block size, not a mix"
        )));
    }
    if w.offset_bytes != 0 || w.size_bytes.is_some() {
        return Err(invalid(format!(
            "the {name} engine works on every file of its files: target; --offset and --size do not apply"
        )));
    }
    Ok(())
}

/// Create and delete engines use each file exactly once: in order, one pass, no
/// warm-up, every stream its own equal share of the files.
fn check_once_each(run: &RunSpec, w: &crate::plan::model::Workload) -> Result<(), RunError> {
    let name = run.engine.name();
    let invalid = |msg: String| RunError::Invalid {
        run: run.name.clone(),
        workload: w.name.clone(),
        msg,
    };
    if !matches!(w.pattern, AccessPattern::Sequential) {
        return Err(invalid(format!(
            "the {name} engine uses each file once; random order repeats files (the second \
             visit would not be a {}): use sequential access (--rw write, fio rw=write)",
            what(run.engine)
        )));
    }
    if run.passes_of(w) != Some(1) {
        return Err(invalid(format!(
            "the {name} engine uses each file once: run one pass (--passes 1, fio's default \
             without time_based), optionally bounded by a duration"
        )));
    }
    if run.warmup_ns > 0 {
        return Err(invalid(format!(
            "the {name} engine uses each file once: a warm-up would use files without \
             counting them; drop --warmup (fio ramp_time)"
        )));
    }
    if w.share_pct.is_some() {
        return Err(invalid(format!(
            "the {name} engine does not take a share mix"
        )));
    }
    Ok(())
}

/// A create or delete run on a `files:` set uses each file once and gives each
/// stream its own equal share of the files: the count must divide by the streams, or
/// the files past the last whole share would never be visited. On a tree (`tree:`)
/// a create looks for a missing file and a delete for a present one, so neither
/// rule applies; the directory engines work on the tree's directories. copy and
/// move (a file into a missing name) work on trees only.
fn check_shares(run: &RunSpec, specs: &[crate::plan::model::TargetSpec]) -> Result<(), RunError> {
    for w in &run.workloads {
        let Some(spec) = specs.iter().find(|t| t.name == w.target) else {
            continue;
        };
        let Ok(TargetKind::Files(set)) = crate::target::parse_uri(&spec.uri) else {
            continue;
        };
        let invalid = |msg: String| RunError::Invalid {
            run: run.name.clone(),
            workload: w.name.clone(),
            msg,
        };
        let name = run.engine.name();
        if set.tree.is_some() {
            continue;
        }
        let own = run.engine_of(w);
        if own.desc().trees_only {
            return Err(invalid(format!(
                "the {} engine works on tree: targets (it fills a tree's missing names \
                 from its files); a files: set has none",
                own.name()
            )));
        }
        if !run.engine.consumes_files() {
            continue;
        }
        check_once_each(run, w)?;
        if set.count % w.streams as u64 != 0 {
            return Err(invalid(format!(
                "{} files do not divide among {} streams; the {name} engine gives each \
                 stream an equal share (give a count that is a multiple of the streams)",
                set.count, w.streams
            )));
        }
    }
    Ok(())
}

fn what(engine: EngineKind) -> &'static str {
    match engine.desc().file_op {
        Some(FileOp::Create) => "create",
        _ => "delete",
    }
}

/// The engine against the kinds of its targets: file sets for the file-operation
/// engines (and nothing else for them), `null:` for cpuio, regular files for falloc
/// and ftruncate. `None`: not one of these engines, and no file set involved.
fn check_targets(engine: EngineKind, kinds: &[ProbeKind]) -> Option<String> {
    let all = |k: ProbeKind| kinds.iter().all(|&x| x == k);
    let name = engine.name();
    if engine.is_file_op() {
        return (!all(ProbeKind::Files)).then(|| {
            format!("the {name} engine works on files:DIR?count=N targets (a set of files in a directory)")
        });
    }
    if kinds.contains(&ProbeKind::Files) {
        return Some(format!(
            "a files: target is for the file-operation engines (filecreate, filestat, \
             filedelete, dircreate, dirstat, dirdelete) and for reads and writes on the \
             sync and uring engines, not {name}"
        ));
    }
    match engine {
        EngineKind::Cpuio | EngineKind::Exec if !all(ProbeKind::Null) => Some(format!(
            "the {name} engine does no I/O: give it a null:SIZE target"
        )),
        EngineKind::PageFault if !(all(ProbeKind::Null) && kinds.len() == 1) => Some(
            "the page_fault engine maps its own memory: give it one null:SIZE target (the size of each worker's mapping)".into(),
        ),
        EngineKind::E4defrag if !all(ProbeKind::File) => Some(
            "the e4defrag engine works on regular files of an ext4 file system (EXT4_IOC_MOVE_EXT)"
                .into(),
        ),
        EngineKind::Falloc | EngineKind::Ftruncate if !all(ProbeKind::File) => Some(format!(
            "the {name} engine works on regular files (it calls {} on them)",
            if engine == EngineKind::Falloc {
                "fallocate(2)"
            } else {
                "ftruncate(2)"
            }
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_and_targets_fit() {
        assert!(check_targets(EngineKind::FileCreate, &[ProbeKind::Files]).is_none());
        assert!(check_targets(EngineKind::FileCreate, &[ProbeKind::File]).is_some());
        assert!(check_targets(EngineKind::Sync, &[ProbeKind::Files]).is_some());
        assert!(check_targets(EngineKind::Auto, &[ProbeKind::Files]).is_some());
        assert!(check_targets(EngineKind::Cpuio, &[ProbeKind::Null]).is_none());
        assert!(check_targets(EngineKind::Cpuio, &[ProbeKind::File]).is_some());
        assert!(check_targets(EngineKind::Falloc, &[ProbeKind::BlockDevice]).is_some());
        assert!(check_targets(EngineKind::Sync, &[ProbeKind::File]).is_none());
    }
}
