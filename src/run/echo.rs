//! The plan-to-result conversion of a workload: what `runs[].workload` publishes.
//! It lives in the run layer because it is the one place that knows both the plan's
//! internal types and the result's wire types (the result model depends on nothing
//! but `vocab`). The value types are `vocab`'s, shared by both, so they are cloned;
//! the workload itself is taken apart exhaustively, so a new plan setting stops the
//! build until someone decides how (or whether) the result shows it.

use crate::plan::model::Workload;
use crate::plan::tuning::IoTuning;
use crate::result::io::IoEcho;
use crate::result::workload::{WorkloadEcho, ZbdEcho};

/// The result's echo of a run's io settings (`runs[].io`).
pub fn io_echo(io: &IoTuning) -> IoEcho {
    let IoTuning {
        uring,
        write_through,
        sync_every,
        sync_kind,
    } = io;
    IoEcho {
        uring: (!uring.is_default()).then(|| uring.clone()),
        write_through: *write_through,
        sync_every: *sync_every,
        sync_kind: (!sync_kind.is_default()).then_some(*sync_kind),
    }
}

/// The result's echo of a plan workload. The settings it shows as they are are named
/// once, in the list at the end; the pattern is exhaustive, so a new plan setting
/// stops the build here until it is listed or given a conversion of its own.
pub fn workload_echo(w: &Workload) -> WorkloadEcho {
    macro_rules! echo_of {
        ($($same:ident),* $(,)?) => {{
            let Workload {
                $($same,)*
                zbd,
                priority,
                file_service,
                // Effective values need the run and the engine that ran it:
                // `run::own_settings`.
                overrides: _,
                settings,
            } = w.clone();
            WorkloadEcho {
                $($same,)*
                zbd: zbd.as_ref().map(ZbdEcho::from),
                priority: (!priority.is_default()).then_some(priority),
                file_service: (!file_service.is_default()).then(|| file_service.text()),
                declared: settings.echo(),
                // What the run and its engine made of the workload: `own_settings`.
                ..WorkloadEcho::default()
            }
        }};
    }
    echo_of!(
        name,
        target,
        read_pct,
        trim,
        pattern,
        bs,
        qd,
        streams,
        rate,
        offset_bytes,
        size_bytes,
        dist,
        arrival,
        share_pct,
        seq_layout,
        align_bytes,
        seq_gap_bytes,
        offset_increment_bytes,
        zones,
        flow,
        pauses,
        sprandom,
    )
}

#[cfg(test)]
mod tests;
