//! Environment capture and tuning advice: the record of the machine behind the
//! numbers (kernel, CPU, memory, and for each target its device queue settings,
//! filesystem, device-mapper topology), stored under `env` in every result, plus
//! advice on settings known to distort measurements.
//!
//! The trade-off: every read is best-effort. A file missing from sysfs or procfs
//! (containers, VMs, older kernels, non-Linux) becomes `None`, never an error, so an
//! unusual machine still gets a result — the price is that a consumer must treat
//! every field as optional. Parsing is split from reading (pure functions over
//! strings) so it is tested without the machine, and all paths are read under a
//! root directory so whole fake sysfs trees can be tested too. ioscope never changes
//! a setting: [`advise`] only says what to change and how.

mod advice;
mod block;
mod host;
mod mount;
mod render;

pub use advice::{advise, Advice, AdviceLevel};
pub(crate) use block::zoned_model_at;
pub use block::{BlockInfo, DmInfo, LoopInfo, SlaveInfo};
pub use host::{HostInfo, IrqSummary};
pub use mount::FsInfo;
pub use render::render_text;

use serde::{Deserialize, Serialize};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What to describe: a target as the user wrote it, and optionally the path it
/// resolves to when the caller already knows it (otherwise derived from `uri`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetInfoRequest {
    pub uri: String,
    pub path: Option<PathBuf>,
}

impl TargetInfoRequest {
    /// A request for a target URI; a plain path is taken from the URI itself.
    pub fn new(uri: impl Into<String>) -> Self {
        TargetInfoRequest {
            uri: uri.into(),
            path: None,
        }
    }
}

impl From<&str> for TargetInfoRequest {
    fn from(uri: &str) -> Self {
        TargetInfoRequest::new(uri)
    }
}

/// The environment a run happened in; serialised as the result's top-level `env`.
/// The wire format is documented in docs/environment.md.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// Version of ioscope that captured this.
    pub ioscope_version: String,
    pub host: HostInfo,
    #[serde(default)]
    pub targets: Vec<TargetEnv>,
}

/// What a target turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetEnvKind {
    /// A block device node (`/dev/sda`, `/dev/mapper/x`, `/dev/loop0`).
    Block,
    /// A regular file, or a path that does not exist yet (see `note`).
    File,
    /// A directory (files will be created inside it).
    Directory,
    /// `mem:SIZE`: RAM, no device.
    Mem,
    /// `null:SIZE`: no I/O at all.
    Null,
    /// `scheme://…`: network storage; nothing local to describe.
    Network,
    /// Anything else (a character device, a socket…).
    Other,
}

/// The environment of one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetEnv {
    /// The target as given.
    pub uri: String,
    pub kind: TargetEnvKind,
    /// The local path examined, after resolving symlinks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Anything the reader should know about how this was captured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Filesystem holding a file or directory target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<FsInfo>,
    /// The block device: the target itself, or the device backing its filesystem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<BlockInfo>,
}

/// Describes the host and each target. Never fails: what cannot be read is `None`.
pub fn capture(targets: &[TargetInfoRequest]) -> Environment {
    capture_with_root(&Root::system(), targets)
}

pub(crate) fn capture_with_root(root: &Root, targets: &[TargetInfoRequest]) -> Environment {
    let mounts = root
        .read("/proc/self/mountinfo")
        .map(|s| mount::parse_mountinfo(&s))
        .unwrap_or_default();
    Environment {
        ioscope_version: env!("CARGO_PKG_VERSION").to_string(),
        host: host::capture_host(root),
        targets: targets
            .iter()
            .map(|t| capture_target(root, &mounts, t))
            .collect(),
    }
}

fn capture_target(root: &Root, mounts: &[mount::MountEntry], req: &TargetInfoRequest) -> TargetEnv {
    let mut env = TargetEnv {
        uri: req.uri.clone(),
        kind: TargetEnvKind::Other,
        path: None,
        note: None,
        filesystem: None,
        block: None,
    };
    let path = match (&req.path, uri_kind(&req.uri)) {
        (Some(p), _) => p.clone(),
        (None, UriKind::Path) => PathBuf::from(&req.uri),
        (None, UriKind::Mem) => {
            env.kind = TargetEnvKind::Mem;
            return env;
        }
        (None, UriKind::Null) => {
            env.kind = TargetEnvKind::Null;
            return env;
        }
        (None, UriKind::Network) => {
            env.kind = TargetEnvKind::Network;
            return env;
        }
    };

    // A path that does not exist yet will be created; its filesystem is that of the
    // nearest existing ancestor.
    let (existing, missing) = match std::fs::metadata(&path) {
        Ok(md) => (Some((path.clone(), md)), false),
        Err(_) => (
            path.ancestors()
                .skip(1)
                .find_map(|a| std::fs::metadata(a).ok().map(|md| (a.to_path_buf(), md))),
            true,
        ),
    };
    let Some((found, md)) = existing else {
        env.kind = TargetEnvKind::File;
        env.note = Some("path and all its parents are unreadable".into());
        return env;
    };
    let canonical = std::fs::canonicalize(&found).unwrap_or(found);
    env.path = Some(canonical.to_string_lossy().into_owned());
    let ft = md.file_type();
    if missing {
        env.kind = TargetEnvKind::File;
        env.note = Some(format!(
            "does not exist yet; filesystem of {} shown",
            canonical.display()
        ));
    } else if ft.is_block_device() {
        env.kind = TargetEnvKind::Block;
        let (maj, min) = block::dev_major_minor(md.rdev());
        env.block = block::block_info(root, maj, min);
        return env;
    } else if ft.is_dir() {
        env.kind = TargetEnvKind::Directory;
    } else if ft.is_file() {
        env.kind = TargetEnvKind::File;
    } else {
        env.kind = TargetEnvKind::Other;
        return env;
    }

    let mount = mount::find_mount(mounts, &canonical);
    // st_dev names the backing device for most filesystems; btrfs, ZFS, overlay and
    // network filesystems use anonymous device numbers, so fall back to the mount
    // source when it is a /dev node.
    let (maj, min) = block::dev_major_minor(md.dev());
    env.block = block::block_info(root, maj, min).or_else(|| {
        let source = mount?.source.as_str();
        if !source.starts_with("/dev/") {
            return None;
        }
        let smd = std::fs::metadata(source).ok()?;
        if !smd.file_type().is_block_device() {
            return None;
        }
        let (maj, min) = block::dev_major_minor(smd.rdev());
        block::block_info(root, maj, min)
    });
    env.filesystem = mount.map(FsInfo::from);
    env
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UriKind {
    Path,
    Mem,
    Null,
    Network,
}

fn uri_kind(uri: &str) -> UriKind {
    if uri.starts_with("mem:") {
        UriKind::Mem
    } else if uri.starts_with("null:") {
        UriKind::Null
    } else if uri.contains("://") {
        UriKind::Network
    } else {
        UriKind::Path
    }
}

/// The directory that `/sys` and `/proc` are read under: `/` on a real system, a
/// temporary tree in tests.
#[derive(Debug, Clone)]
pub(crate) struct Root(PathBuf);

impl Root {
    pub(crate) fn system() -> Self {
        Root(PathBuf::from("/"))
    }

    #[cfg(test)]
    pub(crate) fn at(dir: &Path) -> Self {
        Root(dir.to_path_buf())
    }

    /// Maps an absolute system path into this root.
    pub(crate) fn path(&self, abs: &str) -> PathBuf {
        self.0.join(abs.trim_start_matches('/'))
    }

    /// Reads a system file, trimmed; `None` when missing, unreadable or empty.
    pub(crate) fn read(&self, abs: &str) -> Option<String> {
        read_trimmed(&self.path(abs))
    }
}

/// Reads a file and trims it; `None` when missing, unreadable or empty.
pub(crate) fn read_trimmed(path: &Path) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_kinds() {
        assert_eq!(uri_kind("mem:1g"), UriKind::Mem);
        assert_eq!(uri_kind("null:1g"), UriKind::Null);
        assert_eq!(uri_kind("nbd://host/export"), UriKind::Network);
        assert_eq!(uri_kind("/dev/sda"), UriKind::Path);
        assert_eq!(uri_kind("data.bin"), UriKind::Path);
    }

    #[test]
    fn live_capture_root_and_mem_does_not_panic() {
        let env = capture(&["/".into(), "mem:1g".into(), "null:1g".into()]);
        assert_eq!(env.ioscope_version, env!("CARGO_PKG_VERSION"));
        assert!(env.host.kernel_release.is_some(), "{env:#?}");
        assert!(env.host.kernel_version.is_some());
        assert!(env.host.logical_cpus.unwrap_or(0) >= 1, "{env:#?}");
        assert!(env.host.cpu_model.is_some(), "{env:#?}");
        assert_eq!(env.targets[0].kind, TargetEnvKind::Directory);
        let fs = env.targets[0].filesystem.as_ref().expect("mount of /");
        assert_eq!(fs.mount_point, "/");
        assert_eq!(env.targets[1].kind, TargetEnvKind::Mem);
        assert_eq!(env.targets[2].kind, TargetEnvKind::Null);
        // The result model stores it as JSON; it must round-trip.
        let json = serde_json::to_string(&env).unwrap();
        let back: Environment = serde_json::from_str(&json).unwrap();
        assert_eq!(back, env);
        let text = render_text(&env, &advise(&env, Some(32)));
        assert!(text.contains("kernel"), "{text}");
    }

    #[test]
    fn missing_file_reports_parent_filesystem() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("not-yet/created.dat");
        let env = capture(&[TargetInfoRequest::new(p.to_string_lossy())]);
        let t = &env.targets[0];
        assert_eq!(t.kind, TargetEnvKind::File);
        assert!(t.note.as_deref().unwrap().contains("does not exist yet"));
        assert!(t.filesystem.is_some());
    }

    /// Detaches a loop device when dropped, so a failing assertion leaks nothing.
    struct LoopGuard(String);

    impl Drop for LoopGuard {
        fn drop(&mut self) {
            let _ = std::process::Command::new("losetup")
                .args(["-d", &self.0])
                .status();
        }
    }

    // Needs root and losetup; CI runs as root, so there it always runs.
    #[test]
    fn loop_device_matches_sysfs() {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped loop_device_matches_sysfs: needs root to create a loop device");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("loop.img");
        std::fs::File::create(&file)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        let out = match std::process::Command::new("losetup")
            .args(["--find", "--show", "--direct-io=on"])
            .arg(&file)
            .output()
        {
            Ok(o) if o.status.success() => o,
            Ok(o) => {
                eprintln!(
                    "skipped loop_device_matches_sysfs: losetup failed: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                return;
            }
            Err(e) => {
                eprintln!("skipped loop_device_matches_sysfs: cannot run losetup: {e}");
                return;
            }
        };
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let guard = LoopGuard(dev.clone());
        let name = dev.trim_start_matches("/dev/").to_string();
        let sys = |f: &str| read_trimmed(Path::new(&format!("/sys/block/{name}/{f}")));

        let env = capture(&[TargetInfoRequest::new(&guard.0)]);
        let t = &env.targets[0];
        assert_eq!(t.kind, TargetEnvKind::Block, "{t:#?}");
        let b = t.block.as_ref().expect("block info for the loop device");
        assert_eq!(b.name, name);
        assert_eq!(b.size_bytes, Some(64 << 20));
        assert_eq!(
            b.scheduler,
            sys("queue/scheduler").and_then(|s| block::parse_scheduler(&s).0)
        );
        assert_eq!(b.rotational, sys("queue/rotational").map(|s| s == "1"));
        assert_eq!(
            b.logical_block_size,
            sys("queue/logical_block_size").and_then(|s| s.parse().ok())
        );
        let l = b.loop_dev.as_ref().expect("loop info");
        assert_eq!(
            l.backing_file.as_deref().map(Path::new),
            Some(std::fs::canonicalize(&file).unwrap().as_path())
        );
        assert_eq!(l.direct_io, sys("loop/dio").map(|s| s == "1"));

        // A queue depth above nr_requests always yields advice.
        let qd = b.nr_requests.expect("nr_requests") + 1;
        let advice = advise(&env, Some(qd));
        assert!(!advice.is_empty());
        assert!(advice.iter().all(|a| !a.reason.is_empty()), "{advice:#?}");
        assert!(advice
            .iter()
            .any(|a| a.item == format!("{name}: nr_requests")));
        let text = render_text(&env, &advice);
        assert!(text.contains("loop direct I/O"), "{text}");
    }
}
