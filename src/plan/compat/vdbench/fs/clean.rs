//! `format=clean`: vdbench deletes the trees an rd's fwds use (their files, then
//! their directories) and does nothing more in that rd (`FormatFlags`, `OpFormat`:
//! "if we only did deletes, exit now"). Here that is two runs of the
//! file-operation engines on each tree: `clean_for_RD` deletes every file of the
//! declared tree, `clean_dirs_for_RD` every directory, deepest first (a directory
//! is removed once it is empty). Each is one pass, one stream per tree, and ends
//! when nothing is left to delete (`stop_when_none_left`), so a tree already gone
//! costs nothing: their targets (`FSD.clean.delete`, `FSD.clean.rmdir`) are
//! `create = "never"`, so nothing is laid out for them first. Only the declared tree's names are deleted: anything else in the
//! anchor stays (vdbench deletes what its control file lists).

use super::{base_run, FileService, Fsd, Output, RdTrees, Workload};
use crate::plan::model::{AccessPattern, BlockSizes, EngineKind, FileCreate, RunSpec};
use crate::plan::settings::{declared::STOP_WHEN_NONE_LEFT, Value};

/// The runs that delete the trees of `rd`'s fwds: files, then directories.
pub(super) fn runs(cx: &RdTrees<'_>, out: &mut Output) -> Vec<RunSpec> {
    let steps = [
        ("clean_for", "delete", EngineKind::FileDelete),
        ("clean_dirs_for", "rmdir", EngineKind::DirDelete),
    ];
    let trees = cx.rd.trees(cx.fwds);
    steps
        .into_iter()
        .map(|(run, op, engine)| {
            let mut hosts = out.hosts.clone();
            let workloads: Vec<Workload> = (trees.iter())
                .map(|&s| {
                    let mut w = delete_all(&cx.fsds[s], op, engine, out);
                    // A tree shared among hosts is deleted by one of them: two
                    // hosts deleting the same names would fail on each other's.
                    let mut drivers = cx.drivers(s);
                    if cx.shares[s].is_some() {
                        drivers.truncate(1);
                    }
                    (out.binding).drive(&mut out.targets, &mut hosts, &drivers, &mut w.target);
                    w
                })
                .collect();
            RunSpec {
                name: format!("{run}_{}", cx.d.name),
                hosts,
                workloads,
                duration_ns: None,
                passes: Some(1),
                warmup_ns: 0,
                interval_ns: cx.rd.interval_ns,
                ..base_run()
            }
        })
        .collect()
}

/// One stream deleting every file (or directory) of `fsd`'s tree, in order.
fn delete_all(fsd: &Fsd, op: &str, engine: EngineKind, out: &mut Output) -> Workload {
    let target = out.target(fsd, &format!("clean.{op}"), false, fsd.flags.direct);
    // Nothing laid out before the deletes (not even the directories).
    if let Some(t) = out.targets.iter_mut().find(|t| t.name == target) {
        t.create = FileCreate::Never;
    }
    let mut w = Workload {
        name: format!("{op}/{}", fsd.name),
        target,
        read_pct: 0,
        pattern: AccessPattern::Sequential,
        bs: BlockSizes::fixed(4096),
        qd: 1,
        streams: 1,
        file_service: FileService::Sequential,
        ..Default::default()
    };
    w.overrides.engine = Some(engine);
    w.settings.set(&STOP_WHEN_NONE_LEFT, Value::Flag(true));
    w
}
