//! A `files:` set read and written as bytes by the sync and uring engines (fio's
//! `nrfiles`, `filename=A:B:C`): each file is opened like a file target of its own
//! (created or extended with data to the set's file size, O_DIRECT decided the same
//! way), and the set is one target whose address space is the files one after the
//! other — file `i` holds offsets `i × file_bytes .. (i + 1) × file_bytes`. The
//! engines map an offset to a descriptor with [`ByteFiles::locate`]; a single-file
//! target never pays for it. Every file stays open for the whole run (fio's
//! `openfiles` limit is not modelled: it changes the descriptor count only).
//!
//! What the run created is remembered per file, so a run refused after opening
//! removes exactly those files and truncates back the ones it extended, and
//! `unlink=1` removes after the run only files this run created — never one that
//! was there before.

use super::{io_err, Backing, OpenOptionsIo, OpenTarget, Probe, ProbeKind, TargetError};
use crate::plan::fileset::FileSetSpec;
use crate::plan::model::TargetSpec;
use std::fs::File;
use std::os::unix::io::{AsRawFd, RawFd};
use std::path::PathBuf;

/// The opened files of a byte-I/O file set.
#[derive(Debug)]
pub struct ByteFiles {
    /// Length of each file's part of the address space.
    pub file_bytes: u64,
    files: Vec<File>,
    fds: Box<[RawFd]>,
    paths: Vec<PathBuf>,
    /// Per file: its length before the run; `None` when this run created it.
    existing: Vec<Option<u64>>,
    /// Per file: its own length (shorter than `file_bytes` in a set of files of
    /// several lengths: the rest of its stride is never written).
    lens: Vec<u64>,
    /// Remove the created files after the run (fio's `unlink`).
    pub unlink: bool,
}

impl ByteFiles {
    /// Each file's descriptor, in set order.
    pub fn fds(&self) -> &[RawFd] {
        &self.fds
    }

    /// The file holding `offset` and the offset inside it.
    #[inline]
    pub fn locate(&self, offset: u64) -> (RawFd, u64) {
        let i = (offset / self.file_bytes) as usize;
        (
            self.fds[i.min(self.fds.len() - 1)],
            offset % self.file_bytes,
        )
    }

    /// The files' paths, in set order.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// Reads `buf.len()` bytes of the set's address space at `offset`, across files
    /// where the range spans more than one. Past a file's own length (inside its
    /// stride, where no I/O goes) the bytes read as zeros.
    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let mut done = 0usize;
        while done < buf.len() {
            let at = offset + done as u64;
            let i = (at / self.file_bytes) as usize;
            let within = at % self.file_bytes;
            let (file, len) = self
                .files
                .get(i)
                .zip(self.lens.get(i))
                .ok_or_else(|| std::io::Error::other("read past the file set's end"))?;
            let n = ((self.file_bytes - within) as usize).min(buf.len() - done);
            let data = (len.saturating_sub(within) as usize).min(n);
            file.read_exact_at(&mut buf[done..done + data], within)?;
            buf[done + data..done + n].fill(0);
            done += n;
        }
        Ok(())
    }

    /// Undoes what opening did (a run refused before its first I/O): removes the
    /// files it created, truncates back the ones it extended. Best effort.
    pub fn undo(&self) {
        for (path, &len) in self.paths.iter().zip(&self.existing) {
            let _ = super::undo_open(path, len);
        }
    }

    /// Removes the files this run created (fio's `unlink`), leaving every file that
    /// was there before the run. Returns the removed paths and the failures.
    pub fn unlink_created(&self) -> (Vec<PathBuf>, Vec<(PathBuf, std::io::Error)>) {
        let mut removed = Vec::new();
        let mut failed = Vec::new();
        for (path, len) in self.paths.iter().zip(&self.existing) {
            if len.is_some() {
                continue;
            }
            match std::fs::remove_file(path) {
                Ok(()) => removed.push(path.clone()),
                Err(e) => failed.push((path.clone(), e)),
            }
        }
        (removed, failed)
    }

    /// How many of the files were there before the run.
    pub fn existing_count(&self) -> usize {
        self.existing.iter().filter(|l| l.is_some()).count()
    }
}

/// Each file of the set as a file target of its own, `file_bytes` long.
fn members(
    spec: &TargetSpec,
    set: &FileSetSpec,
) -> Result<Vec<(TargetSpec, PathBuf)>, TargetError> {
    let invalid = |msg: String| TargetError::Invalid {
        uri: spec.uri.clone(),
        msg,
    };
    if set.file_bytes == 0 {
        return Err(invalid(
            "a file set read and written as bytes needs size=BYTES (each file's length)".into(),
        ));
    }
    // A tree that makes its anchor (with its parents) makes it when it opens, and
    // so does a set whose target makes its missing directories (fio's).
    let made_later = match set.dir.exists() {
        true => false,
        false if spec.create_dirs => {
            super::work_dirs::nearest_existing(&spec.uri, &set.dir)?;
            true
        }
        false => set.tree.is_some_and(|t| t.make_anchor),
    };
    if !made_later && !set.dir.is_dir() {
        return Err(invalid(format!(
            "directory '{}' does not exist",
            set.dir.display()
        )));
    }
    Ok((0..set.count)
        .map(|i| {
            let path = set.dir.join(set.file_name(i));
            let member = TargetSpec {
                name: spec.name.clone(),
                uri: path.display().to_string(),
                size_bytes: Some(set.file_len(i)),
                direct: spec.direct,
                fill: false,
                multipath: None,
                create: spec.create,
                create_dirs: spec.create_dirs,
            };
            (member, path)
        })
        .collect())
}

/// Options for one file of the set (`len` bytes long): as the set's, sized to it.
fn member_opts(set: &FileSetSpec, opts: OpenOptionsIo, len: u64) -> OpenOptionsIo {
    OpenOptionsIo {
        min_size_bytes: len,
        set_use: None,
        // A tree's files may be laid out as holes (`create = "empty"`), for a
        // format pass whose writes fill them.
        sparse: set.tree.is_some() && opts.sparse,
        ..opts
    }
}

/// What [`open`] will find or make, creating nothing: every file probed as a file
/// target (a device in the set is refused), the set's O_DIRECT and alignment.
pub fn probe(
    spec: &TargetSpec,
    set: &FileSetSpec,
    opts: OpenOptionsIo,
) -> Result<Probe, TargetError> {
    let members = members(spec, set)?;
    let mut direct = None;
    let mut align = Some(1u64);
    let mut all_there = true;
    for (i, (m, path)) in members.iter().enumerate() {
        let len = set.file_len(i as u64);
        // A tree's directories are made when it opens: a file in one not made yet
        // is simply not there.
        if set.tree.is_some() && !path.parent().is_some_and(|d| d.is_dir()) {
            all_there = false;
            continue;
        }
        let p = super::probe_path(m, path, member_opts(set, opts, len))?;
        if p.kind != ProbeKind::File {
            return Err(TargetError::Invalid {
                uri: spec.uri.clone(),
                msg: format!(
                    "'{}' is not a regular file; a file set holds regular files",
                    path.display()
                ),
            });
        }
        same_direct(spec, &mut direct, p.direct)?;
        align = match (align, p.align_bytes) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
        all_there &= p.existing_len.is_some_and(|l| l >= len);
    }
    let size_bytes = set.count.saturating_mul(set.file_bytes);
    Ok(Probe {
        uri: spec.uri.clone(),
        kind: ProbeKind::File,
        size_bytes,
        direct: direct.unwrap_or(false),
        align_bytes: align,
        existing_len: all_there.then_some(size_bytes),
    })
}

/// Every file of a set must agree on O_DIRECT (they share a directory, so they do
/// unless the filesystem changes under them).
fn same_direct(spec: &TargetSpec, seen: &mut Option<bool>, d: bool) -> Result<(), TargetError> {
    match *seen {
        Some(s) if s != d => Err(TargetError::Invalid {
            uri: spec.uri.clone(),
            msg: "its files do not agree on O_DIRECT; give direct explicitly".into(),
        }),
        _ => {
            *seen = Some(d);
            Ok(())
        }
    }
}

/// Opens every file of the set (creating or extending it with data), undoing what
/// was done to the earlier files if a later one fails.
pub fn open(
    spec: &TargetSpec,
    set: &FileSetSpec,
    opts: OpenOptionsIo,
) -> Result<OpenTarget, TargetError> {
    let members = members(spec, set)?;
    if spec.create_dirs {
        super::work_dirs::make(&spec.uri, &set.dir)?;
    }
    super::fileset::make_set_dirs(&spec.uri, set)?;
    let mut files = Vec::with_capacity(members.len());
    let mut paths = Vec::with_capacity(members.len());
    let mut existing = Vec::with_capacity(members.len());
    let undo = |paths: &[PathBuf], existing: &[Option<u64>]| {
        for (p, &l) in paths.iter().zip(existing) {
            let _ = super::undo_open(p, l);
        }
    };
    let mut direct = None;
    let mut align = 1u64;
    for (i, (m, path)) in members.iter().enumerate() {
        let before = std::fs::metadata(path).ok().map(|md| md.len());
        let o = member_opts(set, opts, set.file_len(i as u64));
        let opened = super::open_path(m, path, o).and_then(|t| {
            same_direct(spec, &mut direct, t.direct)?;
            Ok(t)
        });
        let t = match opened {
            Ok(t) => t,
            Err(e) => {
                undo(&paths, &existing);
                return Err(e);
            }
        };
        align = align.max(t.align_bytes);
        let Backing::File { file, .. } = t.backing else {
            unreachable!("open_path opens a file")
        };
        files.push(file);
        paths.push(path.clone());
        existing.push(before);
    }
    let first = files[0]
        .try_clone()
        .map_err(|e| io_err(&paths[0], "duplicating the descriptor")(e));
    let first = match first {
        Ok(f) => f,
        Err(e) => {
            undo(&paths, &existing);
            return Err(e);
        }
    };
    let fds = files.iter().map(|f| f.as_raw_fd()).collect();
    let first_path = paths[0].clone();
    Ok(OpenTarget {
        name: spec.name.clone(),
        uri: spec.uri.clone(),
        size_bytes: set.count.saturating_mul(set.file_bytes),
        backing: Backing::File {
            file: first,
            path: first_path,
            is_block: false,
            set: Some(Box::new(ByteFiles {
                file_bytes: set.file_bytes,
                files,
                fds,
                paths,
                existing,
                lens: (0..set.count).map(|i| set.file_len(i)).collect(),
                unlink: set.unlink,
            })),
        },
        direct: direct.unwrap_or(false),
        align_bytes: align,
        multipath: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(uri: String) -> (TargetSpec, FileSetSpec) {
        let set = FileSetSpec::parse(uri.strip_prefix("files:").unwrap()).unwrap();
        (
            TargetSpec {
                direct: Some(false),
                ..TargetSpec::new("t", uri)
            },
            set,
        )
    }

    #[test]
    fn opens_each_file_and_maps_offsets_to_them() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f.1"), vec![7u8; 8192]).unwrap();
        let (t, set) = spec(format!(
            "files:{}?count=3&size=4k&unlink=1",
            d.path().display()
        ));
        let opts = OpenOptionsIo {
            writes: true,
            ..Default::default()
        };
        let p = probe(&t, &set, opts).unwrap();
        assert_eq!((p.size_bytes, p.existing_len), (3 * 4096, None));
        let o = open(&t, &set, opts).unwrap();
        assert_eq!(o.size_bytes, 3 * 4096);
        let b = o.byte_files().unwrap();
        for i in 0..3 {
            let len = std::fs::metadata(d.path().join(format!("f.{i}")))
                .unwrap()
                .len();
            assert_eq!(len, if i == 1 { 8192 } else { 4096 }, "file {i}");
        }
        assert_eq!(b.locate(4096 + 10), (b.fds()[1], 10));
        assert_eq!(b.locate(2 * 4096), (b.fds()[2], 0));
        // A read across the boundary of files 0 and 1 takes from both.
        let mut buf = [0u8; 8];
        b.read_exact_at(&mut buf, 4092).unwrap();
        assert_eq!(buf[4..], [7u8; 4]);
        assert_eq!(b.existing_count(), 1);
        let (removed, failed) = b.unlink_created();
        assert!(failed.is_empty());
        assert_eq!(removed.len(), 2);
        assert!(d.path().join("f.1").exists(), "a file that was there stays");
        assert!(!d.path().join("f.0").exists() && !d.path().join("f.2").exists());
    }

    #[test]
    fn a_set_needs_a_file_size_and_undo_leaves_what_was_there() {
        let d = tempfile::tempdir().unwrap();
        let (t, set) = spec(format!("files:{}?count=2", d.path().display()));
        let e = probe(&t, &set, OpenOptionsIo::default()).unwrap_err();
        assert!(e.to_string().contains("needs size=BYTES"), "{e}");
        std::fs::write(d.path().join("f.0"), b"mine").unwrap();
        let (t, set) = spec(format!("files:{}?count=2&size=4k", d.path().display()));
        let o = open(&t, &set, OpenOptionsIo::default()).unwrap();
        o.byte_files().unwrap().undo();
        assert_eq!(std::fs::read(d.path().join("f.0")).unwrap(), b"mine");
        assert!(!d.path().join("f.1").exists());
    }
}
