//! Run checks for workloads that trim (discard, fio's `rw=trim|randtrim|trimwrite|
//! randtrimwrite`). A trim is refused before anything is opened when its engine
//! cannot send one (iSCSI, SMB, the engines that move no bytes), and after the
//! targets are opened when the target cannot take one (an NBD server that did not
//! advertise trim). Verification with trims is refused too: a discarded range's
//! content afterwards is the device's choice (zeros on a punched file, zeros or the
//! old data on a device or an NBD export), which ioscope's per-unit write keys do
//! not model.

use super::{RunError, RunOptions};
use crate::engine::Targets;
use crate::plan::model::{EngineKind, RunSpec, TrimMode, Workload};
use crate::target::Backing;

/// Where trims can go, for messages.
const TRIM_ENGINES: &str = "sync, uring, falloc and nbd, and mem:, null: and sim: targets";

/// The checks on the plan alone: each trimming workload's engine and data settings.
pub(super) fn check_plan(run: &RunSpec, opts: &RunOptions) -> Result<(), RunError> {
    for w in trimming(run) {
        check_engine(run, w, run.engine_of(w))?;
        if w.read_pct != 0 {
            return Err(invalid(
                run,
                w,
                format!(
                    "{} issues no reads: a read percentage ({}) has no meaning with it",
                    rw_word(w),
                    w.read_pct
                ),
            ));
        }
        let data = opts.data.for_workload(w);
        if data.verify || opts.data.journal.is_some() {
            return Err(invalid(
                run,
                w,
                format!(
                    "verification with trims ({}): ioscope does not know what a discarded \
                     range reads back as on every target (zeros on a file with a punched \
                     hole, zeros or the old data on a device), so it does not verify runs \
                     that trim; drop --verify/--verify-after/--journal (fio's \
                     trim_verify_zero is not reproduced)",
                    rw_word(w)
                ),
            ));
        }
    }
    Ok(())
}

/// The checks once the targets of one worker group are open and its engine is
/// chosen: the engine (after `auto`) and each target must take trims.
pub(super) fn check_opened(
    run: &RunSpec,
    engine: EngineKind,
    targets: &Targets,
) -> Result<(), RunError> {
    let Some(w) = trimming(run).next() else {
        return Ok(());
    };
    check_engine(run, w, engine)?;
    for t in targets.iter() {
        if let Backing::Nbd(n) = &t.backing {
            if !n.can_trim {
                return Err(invalid(
                    run,
                    w,
                    format!(
                        "the NBD server at {} does not accept trims (it did not advertise \
                         NBD_FLAG_SEND_TRIM)",
                        n.server
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The run's workloads that trim.
fn trimming(run: &RunSpec) -> impl Iterator<Item = &Workload> {
    run.workloads.iter().filter(|w| w.trim != TrimMode::None)
}

fn check_engine(run: &RunSpec, w: &Workload, engine: EngineKind) -> Result<(), RunError> {
    if engine.trims() {
        return Ok(());
    }
    let why = match engine {
        EngineKind::Iscsi => "ioscope sends no SCSI UNMAP",
        EngineKind::Smb => "ioscope's SMB client sends no trim (FSCTL_FILE_LEVEL_TRIM)",
        EngineKind::Nfs => "NFSv3 has no trim, and ioscope sends none",
        _ => "it moves no bytes of a range",
    };
    Err(invalid(
        run,
        w,
        format!(
            "{} on the {} engine: {why}; trims run on {TRIM_ENGINES}",
            rw_word(w),
            engine.name()
        ),
    ))
}

fn rw_word(w: &Workload) -> String {
    let word = w.trim.rw_word(&w.pattern).unwrap_or("trim");
    format!("rw {word}")
}

fn invalid(run: &RunSpec, w: &Workload, msg: String) -> RunError {
    RunError::Invalid {
        run: run.name.clone(),
        workload: w.name.clone(),
        msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::AccessPattern;

    fn run(engine: EngineKind, trim: TrimMode) -> RunSpec {
        RunSpec {
            engine,
            workloads: vec![Workload {
                read_pct: 0,
                trim,
                pattern: AccessPattern::Random,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn engines_that_cannot_trim_are_refused_by_name() {
        let opts = RunOptions::default();
        for (engine, says) in [
            (EngineKind::Iscsi, "UNMAP"),
            (EngineKind::Smb, "SMB"),
            (EngineKind::Ftruncate, "moves no bytes"),
            (EngineKind::FileCreate, "moves no bytes"),
        ] {
            let e = check_plan(&run(engine, TrimMode::Only), &opts).unwrap_err();
            let msg = e.to_string() + &format!("{e:?}");
            assert!(msg.contains("randtrim") && msg.contains(says), "{msg}");
        }
        for engine in [EngineKind::Sync, EngineKind::Uring, EngineKind::Nbd] {
            check_plan(&run(engine, TrimMode::ThenWrite), &opts).unwrap();
        }
        // No trim, no check.
        check_plan(&run(EngineKind::Iscsi, TrimMode::None), &opts).unwrap();
    }

    #[test]
    fn verification_with_trims_is_refused() {
        let mut opts = RunOptions::default();
        opts.data.verify = true;
        let e = check_plan(&run(EngineKind::Sync, TrimMode::Only), &opts).unwrap_err();
        assert!(
            format!("{e:?}").contains("verification with trims"),
            "{e:?}"
        );
    }
}
