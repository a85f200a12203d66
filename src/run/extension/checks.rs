//! The descriptor of an optional feature's checks before the run
//! ([`Extension`]); the features declare one each and `super::EXTENSIONS` lists
//! them. Apart from the list so that a feature's module depends on this type
//! alone, not on the list that names it.

use crate::plan::model::{EngineKind, RunSpec, TargetSpec, Workload};
use crate::run::{RunError, RunOptions};
use crate::target::ProbeKind;

/// One optional feature's checks before anything is opened or written. A hook a
/// feature does not need is [`Extension::NONE`]'s.
pub struct Extension {
    /// The run's plan as a whole (workloads against each other).
    pub check_run: fn(&RunSpec) -> Result<(), RunError>,
    /// One worker group: `run` holds the group's engine, options and workloads.
    pub check_group: fn(&RunSpec, &RunOptions) -> Result<(), RunError>,
    /// A workload it cannot run as written, with the reason.
    pub misfit: fn(&Workload) -> Option<String>,
    /// It chooses the workload's offsets itself (partial randomness, `random_pct`,
    /// needs offsets the stream draws).
    pub places_offsets: fn(&Workload) -> bool,
    /// Its streams end by themselves (an order of the feature's own, past one
    /// pass) rather than by their byte budget.
    pub ends_streams: fn(&Workload) -> bool,
    /// Why `engine` cannot drive targets of these kinds.
    pub engine_misfit: fn(EngineKind, &[ProbeKind]) -> Option<String>,
    /// A worker group's workloads against their targets' specifications.
    pub check_targets: fn(&RunSpec, &[TargetSpec]) -> Result<(), RunError>,
    /// The working set of `w` on the target `uri`: `ws_len` bytes narrowed to what
    /// the feature needs, or refused.
    pub working_set: fn(&RunSpec, &Workload, &str, u64) -> Result<u64, RunError>,
}

impl Extension {
    /// Every hook passes.
    pub const NONE: Extension = Extension {
        check_run: |_| Ok(()),
        check_group: |_, _| Ok(()),
        misfit: |_| None,
        places_offsets: |_| false,
        ends_streams: |_| false,
        engine_misfit: |_, _| None,
        check_targets: |_, _| Ok(()),
        working_set: |_, _, _, ws_len| Ok(ws_len),
    };
}
