//! Directory trees on an SMB share (`tree:smb://[USER@]HOST[:PORT]/SHARE/DIR?…`):
//! [`SmbTreeDir`], the tree's calls ([`TreeDir`]) made through an [`SmbDir`] whose
//! base is the tree's anchor, on a session of its own (each worker connects for
//! itself, as on NFS), and the probe and directory making done when the tree is
//! opened. Credentials come as for an `smb://` file: `IOSCOPE_SMB_PASSWORD` or
//! `--credentials`, never the URI.
//!
//! What differs from a local directory, said where it happens: SMB has one
//! attribute call, so stat, lstat and statx make the same CREATE; a directory is
//! made with the server's default permissions (SMB2 CREATE carries no mode); an
//! open file is a handle of this session, kept in a table behind its [`FileId`].
//! Without the `smb` cargo feature the tree is refused, naming the feature.

use crate::plan::fileset::FileSetSpec;
use crate::plan::model::SmbSpec;
use crate::target::TargetError;

#[cfg(feature = "smb")]
pub use with_smb::{open, probe, SmbTreeDir};
#[cfg(not(feature = "smb"))]
pub use without_smb::{open, probe, SmbTreeDir};

#[cfg(feature = "smb")]
mod with_smb {
    use super::{FileSetSpec, SmbSpec, TargetError};
    use crate::plan::engine_opts::StatCall;
    use crate::target::smb::dir::{open_at, SmbDir, SmbFile};
    use crate::target::tree_dir::{FileId, TreeDir};
    use std::cell::RefCell;
    use std::ffi::CStr;

    /// The tree's directory on one session, and the files opened through it.
    pub struct SmbTreeDir {
        dir: SmbDir,
        /// Open files by slot (a [`FileId`] is its slot); `None` when closed.
        files: RefCell<Vec<Option<SmbFile>>>,
    }

    /// A name the tree renders is ASCII; one that is not UTF-8 cannot be sent.
    fn utf8(name: &CStr) -> Result<&str, i64> {
        name.to_str().map_err(|_| -i64::from(libc::EINVAL))
    }

    impl SmbTreeDir {
        /// Connects to the share, the anchor as the base; `make_anchor` makes it
        /// (with its parents) when missing.
        pub fn connect(spec: &SmbSpec, make_anchor: bool) -> Result<SmbTreeDir, TargetError> {
            Ok(SmbTreeDir {
                dir: open_at(spec, make_anchor)?,
                files: RefCell::new(Vec::new()),
            })
        }

        /// Keeps `f` in a free slot: its id.
        fn keep(&self, f: SmbFile) -> FileId {
            let mut files = self.files.borrow_mut();
            let slot = match files.iter().position(Option::is_none) {
                Some(s) => s,
                None => {
                    files.push(None);
                    files.len() - 1
                }
            };
            files[slot] = Some(f);
            FileId(slot as u64)
        }

        /// Runs `call` on the open file `f`; -EBADF for one that is not open.
        fn with_file(&self, f: &FileId, call: impl FnOnce(&SmbFile) -> i64) -> i64 {
            let files = self.files.borrow();
            match files.get(f.0 as usize).and_then(Option::as_ref) {
                Some(file) => call(file),
                None => -i64::from(libc::EBADF),
            }
        }
    }

    impl TreeDir for SmbTreeDir {
        fn create(&self, name: &CStr) -> i64 {
            utf8(name).map_or_else(|e| e, |n| self.dir.create_new(n))
        }

        /// SMB has one attribute call: stat, lstat and statx all make it.
        fn stat(&self, name: &CStr, _how: StatCall) -> i64 {
            utf8(name).map_or_else(|e| e, |n| self.dir.stat(n))
        }

        fn exists(&self, name: &CStr) -> bool {
            utf8(name).is_ok_and(|n| self.dir.stat(n) == 0)
        }

        fn unlink(&self, name: &CStr) -> i64 {
            utf8(name).map_or_else(|e| e, |n| self.dir.unlink(n))
        }

        /// An SMB2 CREATE carries no mode: the server's default permissions apply.
        fn mkdir(&self, name: &CStr, _mode: u32) -> i64 {
            utf8(name).map_or_else(|e| e, |n| self.dir.mkdir(n))
        }

        fn rmdir(&self, name: &CStr) -> i64 {
            utf8(name).map_or_else(|e| e, |n| self.dir.rmdir(n))
        }

        fn access(&self, name: &CStr) -> i64 {
            utf8(name).map_or_else(|e| e, |n| self.dir.access(n))
        }

        fn touch(&self, name: &CStr) -> i64 {
            utf8(name).map_or_else(|e| e, |n| self.dir.touch_mtime(n))
        }

        fn rename_noreplace(&self, from: &CStr, to: &CStr) -> i64 {
            match (utf8(from), utf8(to)) {
                (Ok(f), Ok(t)) => self.dir.rename_noreplace(f, t),
                (Err(e), _) | (_, Err(e)) => e,
            }
        }

        fn open(&self, name: &CStr, write: bool) -> Result<FileId, i64> {
            let f = self.dir.open_existing(utf8(name)?, write)?;
            Ok(self.keep(f))
        }

        fn create_new(&self, name: &CStr) -> Result<FileId, i64> {
            let f = self.dir.create_write(utf8(name)?)?;
            Ok(self.keep(f))
        }

        fn read_at(&self, f: &FileId, buf: &mut [u8], offset: u64) -> i64 {
            self.with_file(f, |file| self.dir.read_at(file, buf, offset))
        }

        fn write_at(&self, f: &FileId, buf: &[u8], offset: u64) -> i64 {
            self.with_file(f, |file| self.dir.write_at(file, buf, offset))
        }

        fn close(&self, f: FileId) -> i64 {
            let file = self
                .files
                .borrow_mut()
                .get_mut(f.0 as usize)
                .and_then(Option::take);
            match file {
                Some(file) => self.dir.close(file),
                None => -i64::from(libc::EBADF),
            }
        }
    }

    /// Connects and looks at the anchor, creating nothing: it must exist unless the
    /// tree makes it (`mkdir=parents`).
    pub fn probe(uri: &str, spec: &SmbSpec, set: &FileSetSpec) -> Result<SmbTreeDir, TargetError> {
        looked_at(uri, spec, set).map(|(d, _)| d)
    }

    /// [`probe`]'s session, and whether the anchor exists.
    fn looked_at(
        uri: &str,
        spec: &SmbSpec,
        set: &FileSetSpec,
    ) -> Result<(SmbTreeDir, bool), TargetError> {
        let d = SmbTreeDir::connect(spec, false)?;
        let made_later = set.tree.is_some_and(|t| t.make_anchor);
        match d.dir.stat_info("") {
            Ok(st) if st.is_dir => Ok((d, true)),
            Ok(_) => Err(TargetError::Invalid {
                uri: uri.to_string(),
                msg: format!("'{}' on the share is a file, not a directory", d.dir.label),
            }),
            Err(e) if e == -i64::from(libc::ENOENT) && made_later => Ok((d, false)),
            Err(e) if e == -i64::from(libc::ENOENT) => Err(TargetError::Invalid {
                uri: uri.to_string(),
                msg: format!(
                    "directory '{}' does not exist on the share (add mkdir=parents to make it)",
                    d.dir.label
                ),
            }),
            Err(e) => Err(TargetError::Unavailable {
                uri: uri.to_string(),
                msg: format!(
                    "{}: {}",
                    d.dir.label,
                    std::io::Error::from_raw_os_error(-e as i32)
                ),
            }),
        }
    }

    /// Makes the anchor when the tree makes it (connecting again to do so; an
    /// existing anchor keeps the probe's session) and the tree's missing
    /// directories, parents first (they stay, as a local tree's do).
    pub fn open(uri: &str, spec: &SmbSpec, set: &FileSetSpec) -> Result<SmbTreeDir, TargetError> {
        let d = match looked_at(uri, spec, set)? {
            (d, true) => d,
            (_, false) => SmbTreeDir::connect(spec, true)?,
        };
        let dirs: Vec<String> = set.tree.iter().flat_map(|t| t.dirs()).collect();
        let paths: Vec<&str> = dirs.iter().map(String::as_str).collect();
        d.dir.make_dirs(&paths).map_err(|e| TargetError::Invalid {
            uri: uri.to_string(),
            msg: e.to_string(),
        })?;
        Ok(d)
    }
}

#[cfg(not(feature = "smb"))]
mod without_smb {
    use super::{FileSetSpec, SmbSpec, TargetError};
    use crate::plan::engine_opts::StatCall;
    use crate::target::tree_dir::{FileId, TreeDir};
    use std::ffi::CStr;

    /// No SMB client in this build: no value of it exists.
    pub enum SmbTreeDir {}

    impl SmbTreeDir {
        pub fn connect(spec: &SmbSpec, _make_anchor: bool) -> Result<SmbTreeDir, TargetError> {
            Err(TargetError::Unavailable {
                uri: spec.uri.clone(),
                msg: "this ioscope was built without SMB support; rebuild with \
                      `cargo build --features smb`"
                    .into(),
            })
        }
    }

    impl TreeDir for SmbTreeDir {
        fn create(&self, _: &CStr) -> i64 {
            match *self {}
        }
        fn stat(&self, _: &CStr, _: StatCall) -> i64 {
            match *self {}
        }
        fn exists(&self, _: &CStr) -> bool {
            match *self {}
        }
        fn unlink(&self, _: &CStr) -> i64 {
            match *self {}
        }
        fn mkdir(&self, _: &CStr, _: u32) -> i64 {
            match *self {}
        }
        fn rmdir(&self, _: &CStr) -> i64 {
            match *self {}
        }
        fn access(&self, _: &CStr) -> i64 {
            match *self {}
        }
        fn touch(&self, _: &CStr) -> i64 {
            match *self {}
        }
        fn rename_noreplace(&self, _: &CStr, _: &CStr) -> i64 {
            match *self {}
        }
        fn open(&self, _: &CStr, _: bool) -> Result<FileId, i64> {
            match *self {}
        }
        fn create_new(&self, _: &CStr) -> Result<FileId, i64> {
            match *self {}
        }
        fn read_at(&self, _: &FileId, _: &mut [u8], _: u64) -> i64 {
            match *self {}
        }
        fn write_at(&self, _: &FileId, _: &[u8], _: u64) -> i64 {
            match *self {}
        }
        fn close(&self, _: FileId) -> i64 {
            match *self {}
        }
    }

    /// Refused: this build has no SMB client.
    pub fn probe(_: &str, spec: &SmbSpec, _: &FileSetSpec) -> Result<SmbTreeDir, TargetError> {
        SmbTreeDir::connect(spec, false)
    }

    /// Refused: this build has no SMB client.
    pub fn open(_: &str, spec: &SmbSpec, _: &FileSetSpec) -> Result<SmbTreeDir, TargetError> {
        SmbTreeDir::connect(spec, false)
    }
}
