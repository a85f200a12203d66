//! Checks of what a request carries beside its bytes: a priority of its own
//! (io_uring's per-request ioprio, fio's `cmdprio_*`) and RWF_ATOMIC (fio's
//! `atomic=1`). Both are refused where they would be silently dropped or fail on
//! every write: per-request priorities on an engine other than uring, atomic writes
//! on an engine without pwritev2/io_uring flags, without O_DIRECT, or on a target
//! whose statx limits do not hold the workload's write sizes and offsets. Run on the
//! opened targets, before the first I/O (a created file is removed again).

use super::RunError;
use crate::plan::model::{AccessPattern, EngineKind, RunSpec, Workload};
use crate::plan::settings::declared::ATOMIC_WRITES;
use crate::plan::units::format_size;
use crate::target::OpenTarget;
use std::sync::Arc;

/// Checks the workloads of one worker group, issued by `engine`, on `targets`.
pub(super) fn check(
    run: &RunSpec,
    engine: EngineKind,
    targets: &[Arc<OpenTarget>],
) -> Result<(), RunError> {
    for w in &run.workloads {
        let invalid = |msg: String| RunError::Invalid {
            run: run.name.clone(),
            workload: w.name.clone(),
            msg,
        };
        if !w.priority.per_io.is_empty() && engine != EngineKind::Uring {
            return Err(invalid(format!(
                "per-I/O priorities (--cmdprio; fio cmdprio_percentage/cmdprio_bssplit) are \
                 set on each io_uring request; the {} engine cannot carry them: use --engine \
                 uring",
                engine.name()
            )));
        }
        if w.settings.flag(&ATOMIC_WRITES) && w.read_pct < 100 {
            let t = targets.iter().find(|t| t.name == w.target);
            atomic(w, engine, t.map(|t| &**t)).map_err(|m| {
                invalid(format!(
                    "atomic writes (--atomic-writes, fio atomic=1): {m}"
                ))
            })?;
        }
    }
    Ok(())
}

/// Why `w`'s writes cannot be atomic on `t` through `engine`, if they cannot.
fn atomic(w: &Workload, engine: EngineKind, t: Option<&OpenTarget>) -> Result<(), String> {
    if !matches!(engine, EngineKind::Uring | EngineKind::Sync) {
        return Err(format!(
            "RWF_ATOMIC is a flag of io_uring and pwritev2 writes (the uring and sync \
             engines), not of the {} engine",
            engine.name()
        ));
    }
    let Some(t) = t else {
        return Err("the workload's target is not open".into());
    };
    if !t.direct {
        return Err(format!(
            "{} is opened through the page cache; atomic writes need O_DIRECT (--direct \
             true, fio direct=1)",
            t.uri
        ));
    }
    let Some((min, max)) = t.atomic_write_limits() else {
        return Err(format!(
            "{} takes no atomic writes (statx reports no STATX_WRITE_ATOMIC limits: the \
             device or file system does not offer them)",
            t.uri
        ));
    };
    let limits = format!(
        "{} takes atomic writes of {} to {} (statx), each a power of two",
        t.uri,
        format_size(min),
        format_size(max)
    );
    for &(b, _) in w.bs.for_op(crate::plan::model::Op::Write) {
        if !b.is_power_of_two() || b < min || b > max {
            return Err(format!("a write of {} bytes: {limits}", b));
        }
    }
    aligned(w).map_err(|m| format!("{m}; {limits}, at offsets that are multiples of their size"))
}

/// Whether every write offset is a multiple of the write's size, as RWF_ATOMIC needs.
fn aligned(w: &Workload) -> Result<(), String> {
    let max = w.bs.max_bytes();
    if w.offset_bytes % max != 0 {
        return Err(format!(
            "the offset {} is not a multiple of {max}",
            w.offset_bytes
        ));
    }
    let several = w.bs.single().is_none();
    match w.pattern {
        AccessPattern::Random => {
            let unit = w.align_bytes.unwrap_or(w.bs.min_bytes());
            if unit % max != 0 {
                return Err(format!(
                    "random offsets are multiples of {unit} bytes, smaller than a {max}-byte \
                     write (give an alignment of {max}: --align, fio blockalign)"
                ));
            }
        }
        AccessPattern::Sequential if several || w.seq_gap_bytes % max as i64 != 0 => {
            return Err(
                "sequential writes of several sizes (or with a gap) land at offsets that are \
                 not multiples of each size"
                    .into(),
            );
        }
        AccessPattern::Sequential => {}
    }
    Ok(())
}
