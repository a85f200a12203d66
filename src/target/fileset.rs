//! Opening a `files:` target ([`crate::plan::fileset`]): the directory, held open so
//! the engines can name each file relative to it (`openat`, `fstatat`, `unlinkat`,
//! `mkdirat` — no path walk from `/` per operation), and the files' names rendered
//! once. What the run needs to find there depends on its engine: a create run must
//! find none of the names (creating over an existing file would time an open, not a
//! create), a stat or delete run finds them or has them laid out here, before the
//! first timed operation — and [`FileSetTarget::undo`] removes what was laid out
//! when the run is refused after opening. A tree on an NFS export
//! (`tree:nfs://…`) is held as its export's description and one connection for the
//! laying out; each engine connects for itself ([`FileSetTarget::connect`]), and
//! everything here reaches the directory through [`TreeDir`]. A tree on an SMB
//! share (`tree:smb://…`) is held the same way, through its own sessions.

use super::nfs::tree_dir::NfsDir;
use super::smb::tree_dir::SmbTreeDir;
use super::tree_dir::{LocalDir, TreeDir};
use super::TargetError;
use crate::plan::fileset::{FileSetSpec, RemoteDir};
use std::ffi::CString;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::sync::Mutex;

/// What a run will do with a file set, which decides what must already be there:
/// a fact of the run's engine kind.
pub use crate::plan::engine_kind::SetUse;

/// An opened file set.
#[derive(Debug)]
pub struct FileSetTarget {
    pub spec: FileSetSpec,
    root: Root,
    /// File `i`'s name, relative to the directory.
    pub names: Vec<CString>,
    /// A tree's directories, parents first, relative to the directory (empty for a
    /// set that is no tree): what the directory engines act on in a tree.
    pub dirs: Vec<CString>,
    /// Indices this process laid out before the run (undone if the run is refused).
    laid_out: Mutex<Vec<u64>>,
    /// Opened for its files' bytes (a tree on a server read and written by the sync
    /// engine through [`TreeDir`]), not for the file-operation engines.
    pub bytes: bool,
}

fn invalid(uri: &str, msg: String) -> TargetError {
    TargetError::Invalid {
        uri: uri.to_string(),
        msg,
    }
}

/// Where the set's directory is reached.
enum Root {
    /// Held open: the engines name files relative to it.
    Local(File),
    /// On an NFS export: the connection the opener laid out through.
    Nfs(Box<Mutex<NfsDir>>),
    /// On an SMB share: the session the opener laid out through.
    Smb(Box<Mutex<SmbTreeDir>>),
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Root::Local(d) => f.debug_tuple("Local").field(d).finish(),
            Root::Nfs(_) => f.write_str("Nfs"),
            Root::Smb(_) => f.write_str("Smb"),
        }
    }
}

/// Most names rendered up front (a name is a few dozen bytes).
const MAX_FILES: u64 = 100_000_000;

/// Refuses a set of more names than are rendered up front.
fn check_count(uri: &str, spec: &FileSetSpec) -> Result<(), TargetError> {
    if spec.count > MAX_FILES {
        return Err(invalid(
            uri,
            format!(
                "{} files is more than the {MAX_FILES} a set may have",
                spec.count
            ),
        ));
    }
    Ok(())
}

/// The set's names, rendered.
fn names(uri: &str, spec: &FileSetSpec) -> Result<Vec<CString>, TargetError> {
    (0..spec.count)
        .map(|i| {
            CString::new(spec.file_name(i))
                .map_err(|_| invalid(uri, "a file name holds a NUL byte".into()))
        })
        .collect()
}

/// Checks what [`open`] will find, creating nothing: the directory exists, and for a
/// create run none of the names does. Returns the names.
pub fn probe(
    uri: &str,
    spec: &FileSetSpec,
    use_: Option<SetUse>,
) -> Result<Vec<CString>, TargetError> {
    check_count(uri, spec)?;
    // A remote set is a tree, whose creates look for missing names: nothing to
    // check name by name.
    match &spec.remote {
        Some(RemoteDir::Nfs(n)) => {
            super::nfs::tree_dir::probe(uri, n, spec)?;
            return names(uri, spec);
        }
        Some(RemoteDir::Smb(sm)) => {
            super::smb::tree_dir::probe(uri, sm, spec)?;
            return names(uri, spec);
        }
        None => {}
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
    let names = names(uri, spec)?;
    let (mut existing, mut first_existing) = (0u64, None);
    // A tree's creates look for a name that does not exist (vdbench's rule).
    if let (Some(d), true) = (&dir, spec.tree.is_none() && use_ == Some(SetUse::Create)) {
        let d = LocalDir { fd: d.as_raw_fd() };
        for (i, name) in names.iter().enumerate() {
            if d.exists(name) {
                existing += 1;
                first_existing.get_or_insert_with(|| spec.file_name(i as u64));
            }
        }
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
/// needs — unless `lay_out` is false (`create = "never"`: vdbench's `format=clean`
/// deletes what is there and makes nothing, not even the tree's directories).
pub fn open(
    uri: &str,
    spec: &FileSetSpec,
    use_: Option<SetUse>,
    lay_out: bool,
) -> Result<FileSetTarget, TargetError> {
    let (names, root) = match &spec.remote {
        Some(RemoteDir::Nfs(n)) => {
            check_count(uri, spec)?;
            let d = super::nfs::tree_dir::open(uri, n, spec)?;
            (names(uri, spec)?, Root::Nfs(Box::new(Mutex::new(d))))
        }
        Some(RemoteDir::Smb(sm)) => {
            check_count(uri, spec)?;
            let d = super::smb::tree_dir::open(uri, sm, spec)?;
            (names(uri, spec)?, Root::Smb(Box::new(Mutex::new(d))))
        }
        None => {
            let names = probe(uri, spec, use_)?;
            if lay_out {
                make_set_dirs(uri, spec)?;
            }
            let dir =
                open_dir(spec).map_err(|e| super::io_err(&spec.dir, "opening the directory")(e))?;
            (names, Root::Local(dir))
        }
    };
    let dirs = spec.tree.iter().flat_map(|t| t.dirs()).map(|d| {
        CString::new(d).map_err(|_| invalid(uri, "a directory name holds a NUL byte".into()))
    });
    let t = FileSetTarget {
        spec: spec.clone(),
        root,
        names,
        dirs: dirs.collect::<Result<_, _>>()?,
        laid_out: Mutex::new(Vec::new()),
        bytes: false,
    };
    // A tree's directories are made above; its names are files, never laid out as
    // directories.
    let tree_dirs = spec.tree.is_some() && use_ == Some(SetUse::Dirs);
    if let (Some(u @ (SetUse::Files | SetUse::Dirs)), false, true) = (use_, tree_dirs, lay_out) {
        if let Err(e) = t.lay_out(u) {
            t.undo();
            return Err(e);
        }
    }
    Ok(t)
}

/// Opens a tree on a server for its files' bytes (the sync engine reads and writes
/// them through [`TreeDir`]): the directories made, and each missing file created —
/// empty under `sparse` (`create = "empty"`: the run's writes, a format's, give it
/// its length; NFSv3 through libnfs has no hole to make without a write), else
/// laid out with data at its length, as for a stat run.
pub fn open_remote_bytes(
    uri: &str,
    spec: &FileSetSpec,
    sparse: bool,
) -> Result<FileSetTarget, TargetError> {
    if spec.file_bytes == 0 {
        return Err(invalid(
            uri,
            "a file set read and written as bytes needs size=BYTES (each file's length)".into(),
        ));
    }
    let mut t = open(uri, spec, None, true)?;
    t.bytes = true;
    if let Err(e) = t.lay_out_files(SetUse::Files, sparse) {
        t.undo();
        return Err(e);
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

impl FileSetTarget {
    /// A directory of its own for one engine (a worker): the local directory's
    /// descriptor, or a new connection to the NFS export or SMB share.
    pub fn connect(&self) -> Result<Box<dyn TreeDir>, TargetError> {
        match (&self.root, &self.spec.remote) {
            (Root::Local(d), _) => Ok(Box::new(LocalDir { fd: d.as_raw_fd() })),
            (_, Some(RemoteDir::Nfs(n))) => NfsDir::connect(n)
                .map(|d| Box::new(d) as Box<dyn TreeDir>)
                .map_err(|e| TargetError::Unavailable {
                    uri: self.spec.uri(),
                    msg: format!("{}: {e}", super::nfs::server(n)),
                }),
            (_, Some(RemoteDir::Smb(sm))) => {
                SmbTreeDir::connect(sm, false).map(|d| Box::new(d) as Box<dyn TreeDir>)
            }
            (_, None) => Err(invalid(&self.spec.uri(), "no server".into())),
        }
    }

    /// Runs `f` on the opener's own directory (the local descriptor, or the
    /// connection the set was opened through).
    fn with_dir<R>(&self, f: impl FnOnce(&dyn TreeDir) -> R) -> R {
        match &self.root {
            Root::Local(d) => f(&LocalDir { fd: d.as_raw_fd() }),
            Root::Nfs(c) => f(&*c.lock().unwrap_or_else(|p| p.into_inner())),
            Root::Smb(c) => f(&*c.lock().unwrap_or_else(|p| p.into_inner())),
        }
    }

    /// Creates the missing files (each its own length, real data; empty with
    /// `empty`) or directories.
    fn lay_out(&self, use_: SetUse) -> Result<(), TargetError> {
        self.lay_out_files(use_, false)
    }

    fn lay_out_files(&self, use_: SetUse, empty: bool) -> Result<(), TargetError> {
        let data = vec![0xa5u8; self.spec.file_bytes.min(1 << 20) as usize];
        let mut made = self.laid_out.lock().unwrap_or_else(|p| p.into_inner());
        self.with_dir(|dir| {
            for (i, name) in self.names.iter().enumerate() {
                if dir.exists(name) {
                    continue;
                }
                let r = match use_ {
                    SetUse::Dirs => dir.mkdir(name, 0o777),
                    _ if empty => write_file(dir, name, &data, 0),
                    _ => write_file(dir, name, &data, self.spec.file_len(i as u64)),
                };
                if r < 0 {
                    let path = self.spec.dir.join(name.to_string_lossy().as_ref());
                    let e = std::io::Error::from_raw_os_error(-r as i32);
                    return Err(super::io_err(&path, "laying out")(e));
                }
                made.push(i as u64);
            }
            Ok(())
        })
    }

    /// Removes what [`FileSetTarget::lay_out`] created (best effort): a run refused
    /// after opening leaves the directory as it found it.
    pub fn undo(&self) {
        let made = std::mem::take(&mut *self.laid_out.lock().unwrap_or_else(|p| p.into_inner()));
        self.with_dir(|dir| {
            for i in made {
                let name = &self.names[i as usize];
                if dir.unlink(name) != 0 {
                    dir.rmdir(name);
                }
            }
        })
    }

    /// Forgets what was laid out: the run started, and the files are its own now.
    pub fn keep(&self) {
        self.laid_out
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

/// Creates `name` (failing if it exists) and writes `len` bytes of `chunk` into it:
/// 0, or a negated errno.
fn write_file(dir: &dyn TreeDir, name: &CString, chunk: &[u8], len: u64) -> i64 {
    let f = match dir.create_new(name) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let mut at = 0u64;
    let mut r = 0;
    while at < len && r >= 0 {
        let n = ((len - at) as usize).min(chunk.len());
        r = dir.write_at(&f, &chunk[..n], at);
        if r == 0 {
            r = -(libc::EIO as i64);
        }
        at += r.max(0) as u64;
    }
    let closed = dir.close(f);
    if r < 0 {
        r
    } else {
        closed
    }
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
        let t = open("u", &spec, Some(SetUse::Files), true).unwrap();
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
