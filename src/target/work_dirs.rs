//! The missing directories of a file target's path, made when the target is opened
//! for the run, as fio's `create_work_dirs` (filesetup.c) makes them before a job's
//! files are set up: every missing component after the longest existing one, mode
//! 0700. A target asks for it with `create_dirs` (set by the fio reader, off for
//! native targets, so a mistyped path is an error rather than a new tree). Probing
//! makes nothing: it looks at the nearest directory that exists. Nothing is ever made
//! under `/dev`, whatever the path says (a mistyped device name must not become a
//! directory in devtmpfs).

use super::TargetError;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// The directory a file at `path` goes in (`.` for a bare name).
pub(super) fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The nearest directory of `dir` (itself or an ancestor) that exists, when the
/// missing ones below it may be made: refused under `/dev`.
pub(super) fn nearest_existing(uri: &str, dir: &Path) -> Result<PathBuf, TargetError> {
    let found = dir
        .ancestors()
        .find(|a| a.as_os_str().is_empty() || a.is_dir())
        .map(|a| match a.as_os_str().is_empty() {
            true => Path::new("."),
            false => a,
        })
        .unwrap_or(Path::new("/"));
    // Resolved, so a symbolic link into /dev is seen for what it is.
    let real = std::fs::canonicalize(found).unwrap_or_else(|_| found.to_path_buf());
    if real.starts_with("/dev") {
        return Err(TargetError::Invalid {
            uri: uri.to_string(),
            msg: format!(
                "directory '{}' does not exist, and ioscope makes no directory under /dev",
                dir.display()
            ),
        });
    }
    Ok(found.to_path_buf())
}

/// Makes `dir` and its missing parents (mode 0700, as fio), after checking that
/// none of them is under `/dev`.
pub(super) fn make(uri: &str, dir: &Path) -> Result<(), TargetError> {
    if dir.is_dir() {
        return Ok(());
    }
    nearest_existing(uri, dir)?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(super::io_err(dir, "creating the directory"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn makes_every_missing_component_with_fios_mode() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b/c");
        assert_eq!(nearest_existing("u", &dir).unwrap(), tmp.path());
        assert!(!tmp.path().join("a").exists(), "looking makes nothing");
        make("u", &dir).unwrap();
        for d in ["a", "a/b", "a/b/c"] {
            let md = std::fs::metadata(tmp.path().join(d)).unwrap();
            assert!(md.is_dir());
            assert_eq!(md.permissions().mode() & 0o777, 0o700, "{d}");
        }
        make("u", &dir).unwrap();
    }

    #[test]
    fn nothing_is_made_under_dev() {
        let e = make("u", Path::new("/dev/ioscope-no-such/x")).unwrap_err();
        assert!(e.to_string().contains("under /dev") || format!("{e:?}").contains("under /dev"));
        assert!(!Path::new("/dev/ioscope-no-such").exists());
        assert_eq!(parent_of(Path::new("f")), Path::new("."));
    }
}
