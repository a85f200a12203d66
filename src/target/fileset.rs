//! Opening a `files:` target ([`crate::plan::fileset`]): the directory, held open so
//! the engines can name each file relative to it (`openat`, `fstatat`, `unlinkat`,
//! `mkdirat` — no path walk from `/` per operation), and the files' names rendered
//! once. What the run needs to find there depends on its engine: a create run must
//! find none of the names (creating over an existing file would time an open, not a
//! create), a stat or delete run finds them or has them laid out here, before the
//! first timed operation — and [`FileSetTarget::undo`] removes what was laid out
//! when the run is refused after opening.

use super::TargetError;
use crate::plan::fileset::FileSetSpec;
use std::ffi::CString;
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::{AsRawFd, RawFd};
use std::sync::Mutex;

/// What a run will do with a file set, which decides what must already be there:
/// a fact of the run's engine kind.
pub use crate::plan::engine_kind::SetUse;

/// An opened file set.
#[derive(Debug)]
pub struct FileSetTarget {
    pub spec: FileSetSpec,
    dir: File,
    /// File `i`'s name, relative to the directory.
    pub names: Vec<CString>,
    /// A tree's directories, parents first, relative to the directory (empty for a
    /// set that is no tree): what the directory engines act on in a tree.
    pub dirs: Vec<CString>,
    /// Indices this process laid out before the run (undone if the run is refused).
    laid_out: Mutex<Vec<u64>>,
}

fn invalid(uri: &str, msg: String) -> TargetError {
    TargetError::Invalid {
        uri: uri.to_string(),
        msg,
    }
}

/// Most names rendered up front (a name is a few dozen bytes).
const MAX_FILES: u64 = 100_000_000;

/// Checks what [`open`] will find, creating nothing: the directory exists, and for a
/// create run none of the names does. Returns the names.
pub fn probe(
    uri: &str,
    spec: &FileSetSpec,
    use_: Option<SetUse>,
) -> Result<Vec<CString>, TargetError> {
    if spec.count > MAX_FILES {
        return Err(invalid(
            uri,
            format!(
                "{} files is more than the {MAX_FILES} a set may have",
                spec.count
            ),
        ));
    }
    // A tree that makes its anchor checks nothing in it before it is made.
    let made_later = spec.tree.is_some_and(|t| t.make_anchor) && !spec.dir.exists();
    if !made_later && !spec.dir.is_dir() {
        return Err(invalid(
            uri,
            format!("directory '{}' does not exist", spec.dir.display()),
        ));
    }
    let dir = match made_later {
        true => None,
        false => {
            Some(open_dir(spec).map_err(|e| super::io_err(&spec.dir, "opening the directory")(e))?)
        }
    };
    let mut names = Vec::with_capacity(spec.count as usize);
    let mut existing = 0u64;
    let mut first_existing = None;
    for i in 0..spec.count {
        let name = CString::new(spec.file_name(i))
            .map_err(|_| invalid(uri, "a file name holds a NUL byte".into()))?;
        // A tree's creates look for a name that does not exist (vdbench's rule).
        let once = spec.tree.is_none();
        if once
            && use_ == Some(SetUse::Create)
            && dir
                .as_ref()
                .is_some_and(|d| exists_at(d.as_raw_fd(), &name))
        {
            existing += 1;
            first_existing.get_or_insert_with(|| spec.file_name(i));
        }
        names.push(name);
    }
    if let Some(first) = first_existing {
        return Err(invalid(
            uri,
            format!(
                "{existing} of the {} names already exist (first: '{first}'); a create run \
                 would time opens of existing files or fail with EEXIST, not creates. \
                 Remove them or name another directory",
                spec.count
            ),
        ));
    }
    Ok(names)
}

/// Opens the set for a run that will `use_` it, laying out what a stat or delete run
/// needs.
pub fn open(
    uri: &str,
    spec: &FileSetSpec,
    use_: Option<SetUse>,
) -> Result<FileSetTarget, TargetError> {
    let names = probe(uri, spec, use_)?;
    make_set_dirs(uri, spec)?;
    let dir = open_dir(spec).map_err(|e| super::io_err(&spec.dir, "opening the directory")(e))?;
    let dirs = spec.tree.iter().flat_map(|t| t.dirs()).map(|d| {
        CString::new(d).map_err(|_| invalid(uri, "a directory name holds a NUL byte".into()))
    });
    let t = FileSetTarget {
        spec: spec.clone(),
        dir,
        names,
        dirs: dirs.collect::<Result<_, _>>()?,
        laid_out: Mutex::new(Vec::new()),
    };
    // A tree's directories are made above; its names are files, never laid out as
    // directories.
    let tree_dirs = spec.tree.is_some() && use_ == Some(SetUse::Dirs);
    if let (Some(u @ (SetUse::Files | SetUse::Dirs)), false) = (use_, tree_dirs) {
        if let Err(e) = t.lay_out(u) {
            t.undo();
            return Err(e);
        }
    }
    Ok(t)
}

/// Makes the missing directories of a tree target, parents first, or those a named
/// set's name format puts its files in. The directories stay: they are the set's,
/// as the files a run lays out are once it starts.
pub fn make_set_dirs(uri: &str, spec: &FileSetSpec) -> Result<(), TargetError> {
    let Some(tree) = &spec.tree else {
        // A name format with a '/' puts files in subdirectories (fio's filename_format
        // with directories): made as fio makes them, and left, as fio leaves them.
        for rel in spec.name_dirs() {
            super::work_dirs::make(uri, &spec.dir.join(rel))?;
        }
        return Ok(());
    };
    if tree.make_anchor && !spec.dir.exists() {
        std::fs::create_dir_all(&spec.dir)
            .map_err(|e| super::io_err(&spec.dir, "making the tree's anchor directory")(e))?;
    }
    if !spec.dir.is_dir() {
        return Err(invalid(
            uri,
            format!("directory '{}' does not exist", spec.dir.display()),
        ));
    }
    for rel in tree.dirs() {
        let path = spec.dir.join(rel);
        match std::fs::create_dir(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(super::io_err(&path, "making a directory of the tree")(e))
            }
            _ => {}
        }
    }
    Ok(())
}

fn open_dir(spec: &FileSetSpec) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(&spec.dir)
}

fn exists_at(dir: RawFd, name: &CString) -> bool {
    // SAFETY: statbuf is plain data; zeroed is valid and fstatat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: dir is an open directory descriptor and name a NUL-terminated string.
    unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) == 0 }
}

impl FileSetTarget {
    /// The directory descriptor the engines name files relative to.
    pub fn dir_fd(&self) -> RawFd {
        self.dir.as_raw_fd()
    }

    /// Creates the missing files (each its own length, real data) or directories.
    fn lay_out(&self, use_: SetUse) -> Result<(), TargetError> {
        let fd = self.dir_fd();
        let data = vec![0xa5u8; self.spec.file_bytes.min(1 << 20) as usize];
        let mut made = self.laid_out.lock().unwrap_or_else(|p| p.into_inner());
        for (i, name) in self.names.iter().enumerate() {
            if exists_at(fd, name) {
                continue;
            }
            let path = self
                .spec
                .dir
                .join(std::ffi::OsStr::from_bytes(name.as_bytes()));
            let r = match use_ {
                SetUse::Dirs => std::fs::create_dir(&path),
                _ => write_file(&path, &data, self.spec.file_len(i as u64)),
            };
            r.map_err(|e| super::io_err(&path, "laying out")(e))?;
            made.push(i as u64);
        }
        Ok(())
    }

    /// Removes what [`FileSetTarget::lay_out`] created (best effort): a run refused
    /// after opening leaves the directory as it found it.
    pub fn undo(&self) {
        let fd = self.dir_fd();
        let made = std::mem::take(&mut *self.laid_out.lock().unwrap_or_else(|p| p.into_inner()));
        for i in made {
            let name = &self.names[i as usize];
            // SAFETY: fd is an open directory and name a NUL-terminated string.
            unsafe {
                if libc::unlinkat(fd, name.as_ptr(), 0) != 0 {
                    libc::unlinkat(fd, name.as_ptr(), libc::AT_REMOVEDIR);
                }
            }
        }
    }

    /// Forgets what was laid out: the run started, and the files are its own now.
    pub fn keep(&self) {
        self.laid_out
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

fn write_file(path: &std::path::Path, chunk: &[u8], len: u64) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    let mut left = len;
    while left > 0 {
        let n = (left as usize).min(chunk.len());
        f.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(dir: &std::path::Path, count: u64) -> FileSetSpec {
        FileSetSpec::parse(&format!("{}?count={count}&size=100", dir.display())).unwrap()
    }

    #[test]
    fn lays_out_and_undoes() {
        let d = tempfile::tempdir().unwrap();
        let spec = set(d.path(), 3);
        std::fs::write(d.path().join("f.1"), b"mine").unwrap();
        let t = open("u", &spec, Some(SetUse::Files)).unwrap();
        assert_eq!(std::fs::metadata(d.path().join("f.0")).unwrap().len(), 100);
        assert_eq!(std::fs::read(d.path().join("f.1")).unwrap(), b"mine");
        t.undo();
        assert!(!d.path().join("f.0").exists() && !d.path().join("f.2").exists());
        assert!(d.path().join("f.1").exists(), "a file that was there stays");
    }

    #[test]
    fn a_create_run_refuses_existing_names() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("f.2")).unwrap();
        let e = probe("u", &set(d.path(), 3), Some(SetUse::Create)).unwrap_err();
        assert!(
            e.to_string()
                .contains("1 of the 3 names already exist (first: 'f.2')"),
            "{e}"
        );
        assert!(probe("u", &set(&d.path().join("nope"), 3), None).is_err());
    }
}
