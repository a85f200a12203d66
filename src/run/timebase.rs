//! The run's time base: real time, or the simulation's virtual time. The choice is
//! made here, in run setup, before any target opens — a simulated device takes its
//! origin from the clock when it opens, and virtual time, once on, is the whole
//! process's clock for the rest of its life (`crate::clock`). Opening a target never
//! switches the clock itself; a `time=virtual` target opened on real time is refused
//! by `crate::target::open`.

use crate::plan::model::{RunSpec, TargetKind, TargetSpec};
use crate::target;

/// Puts the process on virtual time when a target this run uses is a `sim:` target
/// with `time=virtual`, and says whether the process runs on virtual time now (it
/// may already, from an earlier run). Call before opening the run's targets.
pub fn choose_clock(run: &RunSpec, specs: &[TargetSpec]) -> bool {
    let used = specs
        .iter()
        .filter(|s| run.workloads.iter().any(|w| w.target == s.name));
    if wants_virtual_time(used) {
        crate::clock::use_virtual_time();
    }
    crate::clock::is_virtual()
}

/// Whether any of these targets asks for virtual time. Unparsable URIs do not: their
/// error comes when they are opened.
pub fn wants_virtual_time<'a>(specs: impl IntoIterator<Item = &'a TargetSpec>) -> bool {
    specs
        .into_iter()
        .any(|s| matches!(target::parse_uri(&s.uri), Ok(TargetKind::Sim(sim)) if sim.virtual_time))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(uri: &str) -> TargetSpec {
        TargetSpec::new("t", uri)
    }

    // Only the decision is tested here: switching the clock is process-wide and
    // permanent, so unit tests (one process) must never do it. The integration tests
    // on `time=virtual` targets run the whole path.
    #[test]
    fn only_a_virtual_sim_target_asks_for_virtual_time() {
        for (uris, want) in [
            (vec!["sim:1g?time=virtual"], true),
            (vec!["mem:1m", "sim:1g?service=1us&time=virtual"], true),
            (vec!["sim:1g"], false),
            (vec!["sim:1g?time=real"], false),
            (vec!["mem:1m", "null:1g", "/tmp/x"], false),
            (vec!["sim:1g?time=later"], false),
            (vec![], false),
        ] {
            let specs: Vec<TargetSpec> = uris.iter().map(|u| spec(u)).collect();
            assert_eq!(wants_virtual_time(&specs), want, "{uris:?}");
        }
        assert!(
            !crate::clock::is_virtual(),
            "the decision switched the clock"
        );
    }
}
