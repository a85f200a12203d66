//! Which engine a run uses, and why. `--engine auto` (the default) looks at what the
//! targets are: I/O that reaches a device (a block device, or a file under O_DIRECT on
//! a disk filesystem) goes to io_uring, which overlaps requests in the kernel; I/O
//! answered from memory (the page cache, tmpfs, ramfs) goes to the sync engine,
//! because pread(2) copies the data in the caller while io_uring hands a page-cache
//! read it cannot finish at once to a kernel worker thread — measured here at 2.7–8.6 µs
//! of CPU per 4 KiB read against 1.2–1.6 µs for pread. An explicit engine is always
//! obeyed; the reason says so.
//!
//! The choice is not refined by what the warm-up measures (issue 10 left that open),
//! for three reasons. The case it was meant for — `auto` on io_uring for a page-cache
//! target whose reads are punted to io-wq workers — does not arise: `auto` picks
//! io_uring there only when io_uring options were given, which is the user's choice.
//! Where `auto` does pick io_uring (O_DIRECT on a disk filesystem, block devices),
//! reads go to the device's queue without io-wq (checked on ext4: no `iou-wrk-*`
//! thread during a QD 8 run). And switching engines after the warm-up means replacing
//! every worker's engine mid-run, in the worker loop, with a warm-up that measured the
//! other engine. A filesystem whose O_DIRECT path does punt (some FUSE or network
//! filesystems) would be better caught by a probe before launch — a few reads on one
//! ring, then a look for `iou-wrk-<tid>` threads — which is not built yet.

use crate::engine::uring::UringEngine;
use crate::plan::model::{EngineKind, RunSpec};
use crate::plan::target_kind::auto_engine;
use crate::plan::tuning::UringOptions;
use crate::target::{Backing, OpenTarget};
use std::sync::Arc;

/// The engine a run will use, with the one-line reason shown in the terminal and
/// recorded in the result (`runs[].engine_reason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineChoice {
    pub kind: EngineKind,
    pub reason: String,
    /// Set when the engine asked for could not be used (a warning for the user).
    pub fallback: Option<String>,
    /// The engines of a run whose workloads use several, as the result names them
    /// (`"sync+uring"`); `None` = `kind`'s name.
    pub mixed: Option<String>,
}

impl EngineChoice {
    /// The engine's name in the result and on the terminal.
    pub fn name(&self) -> String {
        match &self.mixed {
            Some(m) => m.clone(),
            None => self.kind.name().to_string(),
        }
    }
}

/// The run's engine from its worker groups' choices: the one group's, or the engines
/// joined with `+` and each group's reason named by its workloads.
pub(super) fn combined(groups: &[(super::groups::Group, EngineChoice)]) -> EngineChoice {
    if let [(_, only)] = groups {
        return only.clone();
    }
    let mut names: Vec<&str> = Vec::new();
    for (_, c) in groups {
        if !names.contains(&c.kind.name()) {
            names.push(c.kind.name());
        }
    }
    let reason = groups
        .iter()
        .map(|(g, c)| {
            let ws: Vec<&str> = g.run.workloads.iter().map(|w| w.name.as_str()).collect();
            format!("{}: {} ({})", ws.join(","), c.kind.name(), c.reason)
        })
        .collect::<Vec<_>>()
        .join("; ");
    let fallback: Vec<String> = groups
        .iter()
        .filter_map(|(_, c)| c.fallback.clone())
        .collect();
    EngineChoice {
        kind: groups.first().map_or(EngineKind::Auto, |(_, c)| c.kind),
        reason,
        fallback: (!fallback.is_empty()).then(|| fallback.join("; ")),
        mixed: (names.len() > 1).then(|| names.join("+")),
    }
}

/// Where a file target's data is served from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Medium {
    /// A block device or a disk filesystem under O_DIRECT: every I/O reaches a device.
    Device,
    /// Memory: the page cache, or a filesystem that lives in RAM (tmpfs, ramfs) even
    /// under O_DIRECT.
    Memory,
}

/// Whether a file's filesystem keeps its data in RAM (tmpfs, ramfs).
fn in_ram_filesystem(t: &OpenTarget) -> bool {
    match &t.backing {
        Backing::File { path, is_block, .. } => {
            !*is_block && crate::target::in_ram_filesystem(path)
        }
        _ => false,
    }
}

fn medium(t: &OpenTarget) -> Medium {
    if t.direct && (t.is_block_device() || !in_ram_filesystem(t)) {
        Medium::Device
    } else {
        Medium::Memory
    }
}

/// A short description of a target for the reason line: "tmpfs file", "block device".
fn describe(t: &OpenTarget) -> &'static str {
    if t.is_block_device() {
        if t.direct {
            "block device with O_DIRECT"
        } else {
            "block device through the page cache"
        }
    } else if in_ram_filesystem(t) {
        "file on tmpfs/ramfs (in RAM)"
    } else if t.direct {
        "file with O_DIRECT"
    } else {
        "file through the page cache"
    }
}

/// Resolves `kind` for the opened targets.
/// io_uring options given (`--fixed-bufs`, `--sqpoll` …) make `auto` pick io_uring,
/// and draw a warning from any other explicit engine.
pub fn resolve(
    kind: EngineKind,
    targets: &[Arc<OpenTarget>],
    uring: &UringOptions,
) -> EngineChoice {
    let uring_ok = UringEngine::available();
    if uring.is_default() {
        return resolve_with(kind, targets, uring_ok);
    }
    let asked = uring.summary();
    match kind {
        EngineKind::Auto if targets.iter().all(|t| t.fd().is_some()) => {
            if uring_ok {
                EngineChoice {
                    kind: EngineKind::Uring,
                    reason: format!("auto: io_uring options given ({asked})"),
                    fallback: None,
                    mixed: None,
                }
            } else {
                resolve_with(EngineKind::Uring, targets, false)
            }
        }
        EngineKind::Uring => resolve_with(kind, targets, uring_ok),
        _ => {
            let mut c = resolve_with(kind, targets, uring_ok);
            if c.kind != EngineKind::Uring {
                c.fallback = Some(format!(
                    "io_uring options ({asked}) are ignored: the {} engine runs",
                    c.kind.name()
                ));
            }
            c
        }
    }
}

/// `auto`'s io_uring for a worker group that has a single request in flight (one
/// workload, one stream, QD 1, no per-request priorities): io_uring has nothing to
/// overlap, and pread costs less CPU per I/O. On an O_DIRECT ext4 file at QD 1
/// io_uring reached 0.94× of sync twice in three-round runs (docs/benchmarks.md,
/// session 8). The caller leaves io_uring to groups given io_uring options.
pub fn one_in_flight(choice: &mut EngineChoice, asked: EngineKind, run: &RunSpec) {
    let single = match run.workloads.as_slice() {
        [w] => w.qd == 1 && w.streams == 1 && w.priority.is_default(),
        _ => false,
    };
    if asked == EngineKind::Auto
        && choice.kind == EngineKind::Uring
        && choice.fallback.is_none()
        && single
    {
        choice.kind = EngineKind::Sync;
        choice.reason = "auto: one request in flight (one stream at QD 1): nothing for \
                         io_uring to overlap, and pread costs less CPU"
            .into();
    }
}

/// [`resolve`] with io_uring's availability given (for tests).
fn resolve_with(kind: EngineKind, targets: &[Arc<OpenTarget>], uring_ok: bool) -> EngineChoice {
    let choice = |kind, reason: String| EngineChoice {
        kind,
        reason,
        fallback: None,
        mixed: None,
    };
    let no_uring = |asked: &str| {
        EngineChoice {
        kind: EngineKind::Sync,
        reason: format!("{asked}, but io_uring is not available here: sync"),
        fallback: Some(
            "io_uring is not available here (kernel, seccomp or sysctl); falling back to the sync engine"
                .into(),
        ),
        mixed: None,
    }
    };
    let kinds: Vec<_> = targets.iter().map(|t| t.probe_kind()).collect();
    if let (EngineKind::Auto, Some(d)) = (kind, auto_engine(&kinds)) {
        // A network target has its own engine; a mix is refused by the run's checks.
        let why = format!(
            "auto: {} targets use the {} engine",
            d.what,
            d.engine.name()
        );
        return choice(d.engine, why);
    }
    if let (EngineKind::Auto, Some(t)) = (
        kind,
        targets.iter().find(|t| t.remote_byte_tree().is_some()),
    ) {
        let why = format!(
            "auto: {} is a tree on a file server, reached with blocking calls",
            t.uri
        );
        return choice(EngineKind::Sync, why);
    }
    match kind {
        EngineKind::Auto => {
            let files: Vec<&Arc<OpenTarget>> =
                targets.iter().filter(|t| t.fd().is_some()).collect();
            match files.iter().find(|t| medium(t) == Medium::Memory) {
                Some(t) => choice(
                    EngineKind::Sync,
                    format!(
                        "auto: {} is a {}: pread completes in the worker, io_uring would hand \
                         the read to a kernel thread",
                        t.uri,
                        describe(t)
                    ),
                ),
                None if !uring_ok => no_uring("auto"),
                None => {
                    let what = files.first().map_or("device", |t| describe(t));
                    choice(
                        EngineKind::Uring,
                        format!("auto: {what}: io_uring overlaps requests in the device's queue"),
                    )
                }
            }
        }
        EngineKind::Uring if !uring_ok => no_uring("--engine uring"),
        k => choice(k, format!("--engine {}", k.name())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::TargetSpec;
    use crate::target::{open, OpenOptionsIo};

    fn target(uri: &str, direct: Option<bool>) -> Arc<OpenTarget> {
        let spec = TargetSpec {
            size_bytes: Some(1 << 20),
            direct,
            ..TargetSpec::new("t0", uri)
        };
        Arc::new(open(&spec, OpenOptionsIo::default()).unwrap())
    }

    #[test]
    fn page_cache_and_tmpfs_go_to_sync_direct_disk_files_to_uring() {
        let shm = format!("/dev/shm/ioscope-choice-{}", std::process::id());
        let t = target(&shm, Some(false));
        let c = resolve_with(EngineKind::Auto, &[t], true);
        assert_eq!(c.kind, EngineKind::Sync, "{c:?}");
        assert!(c.reason.contains("tmpfs"), "{}", c.reason);
        // By default a tmpfs file opens without O_DIRECT (it bypasses nothing there);
        // asked for, O_DIRECT on tmpfs is still RAM.
        let t = target(&shm, None);
        assert!(!t.direct);
        assert_eq!(
            resolve_with(EngineKind::Auto, &[t], true).kind,
            EngineKind::Sync
        );
        let t = target(&shm, Some(true));
        assert_eq!(
            resolve_with(EngineKind::Auto, &[t], true).kind,
            EngineKind::Sync
        );
        std::fs::remove_file(&shm).unwrap();

        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let disk = dir.path().join("f").to_string_lossy().into_owned();
        let direct = target(&disk, None);
        if direct.direct && !in_ram_filesystem(&direct) {
            let c = resolve_with(EngineKind::Auto, &[direct], true);
            assert_eq!(c.kind, EngineKind::Uring, "{c:?}");
            assert!(c.reason.contains("O_DIRECT"), "{}", c.reason);
        }
        let cached = target(&disk, Some(false));
        let c = resolve_with(EngineKind::Auto, std::slice::from_ref(&cached), true);
        assert_eq!(c.kind, EngineKind::Sync, "{c:?}");
        assert!(c.reason.contains("page cache"), "{}", c.reason);
        // An explicit engine is obeyed, whatever the target.
        let c = resolve_with(EngineKind::Uring, std::slice::from_ref(&cached), true);
        assert_eq!(
            (c.kind, c.reason.as_str()),
            (EngineKind::Uring, "--engine uring")
        );
        let c = resolve_with(EngineKind::Uring, &[cached], false);
        assert_eq!(c.kind, EngineKind::Sync);
        assert!(c.fallback.is_some());
    }

    #[test]
    fn synthetic_targets_keep_their_engines() {
        for (uri, kind) in [
            ("null:1m", EngineKind::Null),
            ("mem:1m", EngineKind::Mem),
            ("sim:1m?service=10us", EngineKind::Sim),
        ] {
            let c = resolve_with(EngineKind::Auto, &[target(uri, None)], true);
            assert_eq!(c.kind, kind, "{uri}");
        }
    }
}
