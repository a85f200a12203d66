//! Each workload's own settings as run, added to its echo in the result
//! (`runs[].workloads[].settings`): the engine of its workers, its warm-up, the CPUs
//! and workers it ran on, its data settings and its error policy. Apart from the
//! plan-to-result conversion (`run::echo`) because these need the launched run, not
//! the plan alone; the trade-off is two places that write one echo.

use crate::plan::model as plan;
use crate::result::workload as wire;

/// Fills each workload's echo in `result.workloads` with what it ran with: the
/// engine of its workers, its warm-up, the CPUs its workers were pinned to, the
/// workers themselves, its data settings and its flushes (each workload may have
/// its own).
pub(super) fn own_settings(
    result: &mut crate::result::RunResult,
    run: &plan::RunSpec,
    groups: &[(super::groups::Group, super::engine_choice::EngineChoice)],
    placed: &super::launch::Placed,
    opts: &super::RunOptions,
) {
    let group_of = super::groups::group_of(
        &groups.iter().map(|(g, _)| g.clone()).collect::<Vec<_>>(),
        run.workloads.len(),
    );
    for (i, (w, r)) in run.workloads.iter().zip(&mut result.workloads).enumerate() {
        let Some(echo) = r.settings.as_mut() else {
            continue;
        };
        let workers = placed.workers.get(i).cloned().unwrap_or_default();
        let mut cpus: Vec<usize> = workers
            .iter()
            .filter_map(|&wi| placed.cpus.get(wi).copied().flatten())
            .collect();
        cpus.sort_unstable();
        cpus.dedup();
        let d = opts.data.for_workload(w);
        echo.engine = groups
            .get(group_of[i])
            .map(|(_, c)| c.kind.name().to_string());
        echo.warmup_ns = Some(run.warmup_of(w));
        echo.cpus = (!cpus.is_empty()).then_some(cpus);
        echo.workers = Some(workers);
        echo.data = Some(wire::DataEcho {
            verify: d.verify,
            verify_after: d.verify_after,
            dedup_ratio: d.spec.dedup_ratio,
            compress_ratio: d.spec.compress_ratio,
            pattern: d.spec.fill.map(|f| {
                let hex: String = f.as_slice().iter().map(|b| format!("{b:02x}")).collect();
                format!("0x{hex}")
            }),
            verify_backlog: w.overrides.data.verify_backlog.map(|b| b.every_writes),
            verify_backlog_batch: w.overrides.data.verify_backlog.map(|b| b.batch_reads),
        });
        echo.on_error = w.overrides.on_error.as_ref().map(on_error_echo);
        echo.flushes = Some(run.flushes_of(w)).filter(|f| f.every > 0);
    }
}

/// A workload's own error policy as the result records it.
fn on_error_echo(p: &crate::plan::on_error::OnError) -> wire::OnErrorEcho {
    let names = |l: &Option<Vec<crate::plan::on_error::Errno>>| {
        l.as_ref()
            .map(|l| l.iter().map(|e| e.to_string()).collect())
    };
    wire::OnErrorEcho {
        continue_on: p.continue_on.iter().map(|k| k.name().to_string()).collect(),
        read_errnos: names(&p.read_errnos),
        write_errnos: names(&p.write_errnos),
    }
}
