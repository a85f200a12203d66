//! File sets: a directory and the names of N files (or directories) in it. Written
//! as a target URI,
//! `files:DIR?count=N[&per=M][&name=FORMAT][&size=BYTES][&unlink=1]` (or
//! `files:DIR?list=A:B:C` for names given one by one, fio's `filename=A:B:C`), so
//! that it travels through every front end (flags, native job file, fio's
//! `nrfiles`/`filename_format`) like any other target, and the result records it as
//! given. A set has two uses:
//!
//! - The file-operation engines (`filecreate`, `filestat`, `filedelete`,
//!   `dircreate`, `dirstat`, `dirdelete`) time one file-system call per file rather
//!   than reads and writes of bytes. The set is laid out as N slots of the
//!   workload's block size: the I/O at offset `i × bs` is the operation on file `i`.
//!   Sequential streams therefore walk the files in order, each stream its own
//!   `count / streams` of them, which is fio's layout of `nrfiles` files per clone
//!   of a job.
//! - The byte engines (sync, uring) read and write the files: each is `size` bytes
//!   long, and the set's address space is the files one after the other, so file
//!   `i` holds offsets `i × size .. (i + 1) × size`. A workload picks a file per I/O
//!   by its file-service policy ([`super::file_service`]); no request crosses from
//!   one file into the next. `unlink=1` removes, after the run, the files that the
//!   run itself created (fio's `unlink`), never one that was there before.

use super::file_sizes::FileSizes;
use super::file_tree::TreeShape;
use std::path::PathBuf;

/// A set of files in one directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSetSpec {
    /// Where the files are (must exist).
    pub dir: PathBuf,
    /// Files in the set.
    pub count: u64,
    /// Files per name group: `{clone}` is `i / per`, `{file}` is `i % per` (fio's
    /// `$jobnum` and `$filenum`, with `per` = `nrfiles`). Equal to `count` unless given.
    pub per: u64,
    /// Name of file `i` inside `dir`: `{n}` = i, `{clone}`, `{file}` as above.
    pub name: String,
    /// Length given to each file that a stat or delete run lays out beforehand, and
    /// of each file a byte engine reads and writes.
    pub file_bytes: u64,
    /// Names given one by one (`list=A:B:C`, fio's `filename=A:B:C`): relative to
    /// `dir` or absolute; `count` is their number. `None`: named by `name`.
    pub list: Option<Vec<String>>,
    /// Remove after the run the files this run created (fio's `unlink`).
    pub unlink: bool,
    /// A directory tree (`tree:` URIs, [`super::file_tree`]): the names are its
    /// files, and `count` their number.
    pub tree: Option<TreeShape>,
    /// Files of several lengths (a tree's `size=LEN:PCT,…`): `file_bytes` is then
    /// the largest, each file's stride in the address space.
    pub sizes: Option<FileSizes>,
    /// A tree on a file server rather than a local directory (`tree:nfs://…`):
    /// `dir` is then the anchor's path inside the export, from its root.
    pub remote: Option<RemoteDir>,
}

/// Where a remote tree's anchor is: the server and share or export, reached from
/// user space (no kernel mount).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteDir {
    /// An NFS export (`tree:nfs://HOST[:PORT]/EXPORT/DIR`): the spec's `file` is
    /// the anchor's name inside the export.
    Nfs(Box<super::nfs_spec::NfsSpec>),
    /// An SMB share (`tree:smb://[USER@]HOST[:PORT]/SHARE/DIR`): the spec's `path`
    /// is the anchor's path inside the share. No password is ever held here.
    Smb(Box<super::smb_spec::SmbSpec>),
}

impl RemoteDir {
    /// The server part of the URI, `nfs://HOST[:PORT]/EXPORT` (no query).
    fn base(&self) -> String {
        match self {
            RemoteDir::Nfs(n) => {
                let host = match n.host.contains(':') {
                    true => format!("[{}]", n.host),
                    false => n.host.clone(),
                };
                let port = n.nfs_port.map(|p| format!(":{p}")).unwrap_or_default();
                format!("nfs://{host}{port}{}", n.export)
            }
            RemoteDir::Smb(s) => {
                let user = s.user.as_ref().map(|u| format!("{u}@")).unwrap_or_default();
                let host = match s.host.contains(':') {
                    true => format!("[{}]", s.host),
                    false => s.host.clone(),
                };
                format!("smb://{user}{host}:{}/{}", s.port, s.share)
            }
        }
    }

    /// The URI's query parameters that belong to the server, `&`-prefixed.
    fn query(&self) -> String {
        match self {
            RemoteDir::Nfs(n) => n
                .mount_port
                .map(|p| format!("&mountport={p}"))
                .unwrap_or_default(),
            // An SMB server takes no query parameters.
            RemoteDir::Smb(_) => String::new(),
        }
    }
}

/// The name format when none is given: `f.0`, `f.1`, …
pub const DEFAULT_NAME: &str = "f.{n}";

/// Why a `files:` URI was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileSetError {
    #[error("expected files:DIR?count=N[&per=M][&name=FORMAT][&size=BYTES][&unlink=1] or files:DIR?list=A:B:C[&size=BYTES]")]
    Shape,
    #[error("files: needs count=N (the number of files, at least 1)")]
    NoCount,
    #[error("'{key}={value}': {why}")]
    Value {
        key: String,
        value: String,
        why: String,
    },
    #[error("unknown parameter '{0}' (known: count, per, name, list, size, unlink)")]
    Unknown(String),
    #[error("expected tree:DIR?depth=D&width=W&files=F&size=BYTES (or size=LEN:PCT,…&seed=N)")]
    TreeShape,
    #[error("unknown parameter '{0}' (known in a tree: depth, width, files, size, seed)")]
    UnknownInTree(String),
    #[error(
        "name '{0}' must name files inside the directory (a relative path, no '.' or '..' \
         part), with {{n}} or {{file}} so that the names differ"
    )]
    Name(String),
}

/// Whether a name format stays inside the set's directory: a relative path whose
/// parts are neither empty nor `.` or `..` (`sub/f.{n}` names files in `sub`, made
/// when the set is opened, as fio makes a `filename_format`'s directories).
pub fn inside(name: &str) -> bool {
    !name.is_empty()
        && name
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

impl FileSetSpec {
    /// The directories, relative to `dir`, that the files of a named set go in
    /// (none for names without a `/`, or for a tree or a list), parents first.
    pub fn name_dirs(&self) -> Vec<String> {
        if self.tree.is_some() || self.list.is_some() || !self.name.contains('/') {
            return Vec::new();
        }
        let mut dirs: Vec<String> = (0..self.count)
            .filter_map(|i| {
                let n = self.file_name(i);
                n.rsplit_once('/').map(|(d, _)| d.to_string())
            })
            .collect();
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// Parses what follows `files:`.
    pub fn parse(rest: &str) -> Result<FileSetSpec, FileSetError> {
        let (dir, query) = rest.split_once('?').ok_or(FileSetError::NoCount)?;
        if dir.is_empty() {
            return Err(FileSetError::Shape);
        }
        let mut count = None;
        let mut per = None;
        let mut name = DEFAULT_NAME.to_string();
        let mut lengths = Lengths::default();
        let mut list = None;
        let mut unlink = false;
        for part in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').ok_or(FileSetError::Shape)?;
            let bad = |why: String| FileSetError::Value {
                key: key.into(),
                value: value.into(),
                why,
            };
            if let Some(r) = lengths.take(key, value) {
                r?;
                continue;
            }
            match key {
                "count" => {
                    count = Some(super::units::parse_count(value).map_err(|e| bad(e.to_string()))?)
                }
                "per" => {
                    per = Some(super::units::parse_count(value).map_err(|e| bad(e.to_string()))?)
                }
                "name" => name = value.to_string(),
                "list" => list = Some(split_list(value)),
                "unlink" => {
                    unlink = match value {
                        "0" => false,
                        "1" => true,
                        _ => return Err(bad("expected 0 or 1".into())),
                    }
                }
                other => return Err(FileSetError::Unknown(other.into())),
            }
        }
        let (file_bytes, sizes) = lengths.finish()?;
        if let Some(names) = &list {
            if sizes.is_some() {
                return Err(FileSetError::Value {
                    key: "size".into(),
                    value: sizes.map(|z| z.text()).unwrap_or_default(),
                    why: "files named one by one take one length".into(),
                });
            }
            return Self::listed(dir, names, count, file_bytes, unlink);
        }
        let count = count.ok_or(FileSetError::NoCount)?;
        let per = per.unwrap_or(count);
        if count % per != 0 {
            return Err(FileSetError::Value {
                key: "per".into(),
                value: per.to_string(),
                why: format!("count {count} is not a multiple of it"),
            });
        }
        let distinct = name.contains("{n}")
            || (name.contains("{file}") && (per == count || name.contains("{clone}")));
        if !inside(&name) || !distinct {
            return Err(FileSetError::Name(name));
        }
        Ok(FileSetSpec {
            dir: PathBuf::from(dir),
            count,
            per,
            name,
            file_bytes,
            list: None,
            unlink,
            tree: None,
            sizes,
            remote: None,
        })
    }

    /// A set whose names are given one by one.
    fn listed(
        dir: &str,
        names: &[String],
        count: Option<u64>,
        file_bytes: u64,
        unlink: bool,
    ) -> Result<FileSetSpec, FileSetError> {
        let bad = |value: String, why: String| FileSetError::Value {
            key: "list".into(),
            value,
            why,
        };
        let joined = names.join(":");
        if names.is_empty() {
            return Err(bad(joined, "names no file".into()));
        }
        if let Some(c) = count.filter(|&c| c != names.len() as u64) {
            return Err(FileSetError::Value {
                key: "count".into(),
                value: c.to_string(),
                why: format!("the list names {} files", names.len()),
            });
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(dup) = names.iter().find(|n| !seen.insert(n.as_str())) {
            return Err(bad(joined.clone(), format!("'{dup}' is named twice")));
        }
        Ok(FileSetSpec {
            dir: PathBuf::from(dir),
            count: names.len() as u64,
            per: names.len() as u64,
            name: DEFAULT_NAME.into(),
            file_bytes,
            list: Some(names.to_vec()),
            unlink,
            tree: None,
            sizes: None,
            remote: None,
        })
    }

    /// Parses what follows `tree:` (`DIR?depth=D&width=W&files=F&size=BYTES`).
    pub fn parse_tree(rest: &str) -> Result<FileSetSpec, FileSetError> {
        let (dir, query) = rest.split_once('?').unwrap_or((rest, ""));
        if dir.is_empty() {
            return Err(FileSetError::TreeShape);
        }
        let mut tree = TreeShape::default();
        let mut lengths = Lengths::default();
        for part in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').ok_or(FileSetError::TreeShape)?;
            if let Some(r) = lengths.take(key, value) {
                r?;
                continue;
            }
            match tree.take(key, value) {
                Some(r) => r.map_err(|why| FileSetError::Value {
                    key: key.into(),
                    value: value.into(),
                    why,
                })?,
                None => return Err(FileSetError::UnknownInTree(key.into())),
            }
        }
        let (file_bytes, sizes) = lengths.finish()?;
        let count = tree.file_count().ok_or_else(|| FileSetError::Value {
            key: "files".into(),
            value: tree.files.to_string(),
            why: format!("width^depth × files is past 2^64 ({})", tree.query()),
        })?;
        let mut spec = FileSetSpec {
            dir: PathBuf::from(dir),
            count,
            per: count,
            name: DEFAULT_NAME.into(),
            file_bytes,
            list: None,
            unlink: false,
            tree: Some(tree),
            sizes,
            remote: None,
        };
        if let Some((j, n)) = tree.share {
            spec.take_share(j, n);
        }
        for (key, bytes) in [("total", tree.total_bytes), ("wss", tree.wss_bytes)] {
            if let Some(b) = bytes {
                spec.use_subset(key, b)?;
            }
        }
        Ok(spec)
    }

    /// A tree's `share=J/N`: every N-th file from file J, as vdbench's host J of N
    /// takes them (`FileAnchor.createFileList`), named in `list`.
    fn take_share(&mut self, j: u64, n: u64) {
        let names: Vec<String> = (j..self.count)
            .step_by(n as usize)
            .map(|i| self.file_name(i))
            .collect();
        self.count = names.len() as u64;
        self.per = self.count;
        self.list = Some(names);
    }

    /// A tree's `total=` or `wss=` (vdbench's `totalsize=`, `workingsetsize=`): its
    /// files become the subset vdbench draws of them ([`super::file_subset`]), named
    /// in `list`, their lengths drawn anew for the subset from the same distribution.
    fn use_subset(&mut self, key: &str, bytes: u64) -> Result<(), FileSetError> {
        const MAX_FILES: u64 = 1 << 24;
        let error = |why: String| FileSetError::Value {
            key: key.into(),
            value: bytes.to_string(),
            why,
        };
        if self.count > MAX_FILES {
            return Err(error(format!("more than {MAX_FILES} files")));
        }
        let lens: Vec<u64> = (0..self.count).map(|i| self.file_len(i)).collect();
        let picked = super::file_subset::subset(&lens, bytes).map_err(error)?;
        self.list = Some(picked.iter().map(|&i| self.file_name(i)).collect());
        self.count = picked.len() as u64;
        self.per = self.count;
        Ok(())
    }

    /// The URI [`FileSetSpec::parse`] (or [`FileSetSpec::parse_tree`]) reads back.
    pub fn uri(&self) -> String {
        if let Some(t) = &self.tree {
            let dir = match &self.remote {
                Some(r) => format!("{}{}", r.base(), self.dir.display()),
                None => self.dir.display().to_string(),
            };
            let mut s = format!("tree:{dir}?{}", t.query());
            match &self.sizes {
                Some(z) => s.push_str(&format!("&size={}&seed={}", z.text(), z.seed)),
                None if self.file_bytes > 0 => s.push_str(&format!("&size={}", self.file_bytes)),
                None => {}
            }
            if let Some(r) = &self.remote {
                s.push_str(&r.query());
            }
            return s;
        }
        if let Some(names) = &self.list {
            let escaped: Vec<String> = names.iter().map(|n| n.replace(':', "\\:")).collect();
            let mut s = format!("files:{}?list={}", self.dir.display(), escaped.join(":"));
            if self.file_bytes > 0 {
                s.push_str(&format!("&size={}", self.file_bytes));
            }
            if self.unlink {
                s.push_str("&unlink=1");
            }
            return s;
        }
        let mut s = format!("files:{}?count={}", self.dir.display(), self.count);
        if self.per != self.count {
            s.push_str(&format!("&per={}", self.per));
        }
        if self.name != DEFAULT_NAME {
            s.push_str(&format!("&name={}", self.name));
        }
        match &self.sizes {
            Some(z) => s.push_str(&format!("&size={}&seed={}", z.text(), z.seed)),
            None if self.file_bytes > 0 => s.push_str(&format!("&size={}", self.file_bytes)),
            None => {}
        }
        if self.unlink {
            s.push_str("&unlink=1");
        }
        s
    }

    /// The length of file `i`: its draw from [`FileSetSpec::sizes`], else
    /// `file_bytes`.
    pub fn file_len(&self, i: u64) -> u64 {
        self.sizes.as_ref().map_or(self.file_bytes, |s| s.of(i))
    }

    /// Every file's length, when they differ (`None`: each is `file_bytes`).
    pub fn file_lens(&self) -> Option<Vec<u64>> {
        let s = self.sizes.as_ref()?;
        Some((0..self.count).map(|i| s.of(i)).collect())
    }

    /// What a set of files of several lengths holds, in a line: each length with
    /// the number of files that drew it, and the bytes in all (`None`: one length).
    pub fn sizes_summary(&self) -> Option<String> {
        let z = self.sizes.as_ref()?;
        if let Some(u) = &z.uniform {
            let total = self
                .file_lens()?
                .iter()
                .fold(0u64, |t, &l| t.saturating_add(l));
            return Some(format!(
                "{} files of lengths from {} to under {} in whole {}, drawn with seed {}, {} in all",
                self.count,
                super::units::format_size(u.low_bytes),
                super::units::format_size(u.high_bytes),
                super::units::format_size(u.unit_bytes),
                z.seed,
                super::units::format_size(total)
            ));
        }
        let mut counts = vec![0u64; z.split.len()];
        let mut total = 0u64;
        for len in self.file_lens()? {
            total = total.saturating_add(len);
            if let Some(k) = z.split.iter().position(|s| s.0 == len) {
                counts[k] += 1;
            }
        }
        let parts: Vec<String> = z
            .split
            .iter()
            .zip(&counts)
            .map(|(&(b, _), n)| format!("{} × {n}", super::units::format_size(b)))
            .collect();
        Some(format!(
            "{} files of {} lengths drawn with seed {} ({}), {} in all",
            self.count,
            z.split.len(),
            z.seed,
            parts.join(", "),
            super::units::format_size(total)
        ))
    }

    /// The name of file `i` (inside [`FileSetSpec::dir`], or absolute for a listed
    /// name that is).
    pub fn file_name(&self, i: u64) -> String {
        if let Some(names) = &self.list {
            return names.get(i as usize).cloned().unwrap_or_default();
        }
        if let Some(t) = &self.tree {
            return t.file_name(i);
        }
        self.name
            .replace("{n}", &i.to_string())
            .replace("{clone}", &(i / self.per).to_string())
            .replace("{file}", &(i % self.per).to_string())
    }
}

/// Splits fio's `:`-separated list of names (a backslash before `:` keeps the colon
/// inside a name).
/// A set's `size=` and `seed=`: one length for every file, or lengths drawn from
/// a split (`LEN:PCT,…`) or a range (`LOW-HIGH/UNIT`) with the seed.
#[derive(Default)]
struct Lengths {
    one_bytes: u64,
    drawn: Option<String>,
    seed: Option<u64>,
}

impl Lengths {
    /// Takes `key=value` when it is one of the two (`None`: another key).
    fn take(&mut self, key: &str, value: &str) -> Option<Result<(), FileSetError>> {
        let bad = |why: String| FileSetError::Value {
            key: key.into(),
            value: value.into(),
            why,
        };
        Some(match key {
            "size" if value.contains(':') || value.contains('-') => {
                self.drawn = Some(value.to_string());
                Ok(())
            }
            "size" => super::units::parse_size_allow_zero(value)
                .map(|b| self.one_bytes = b)
                .map_err(|e| bad(e.to_string())),
            "seed" => value
                .parse::<u64>()
                .map(|s| self.seed = Some(s))
                .map_err(|e| bad(e.to_string())),
            _ => return None,
        })
    }

    /// (each file's stride in bytes, the drawn lengths if any).
    fn finish(self) -> Result<(u64, Option<FileSizes>), FileSetError> {
        match (self.drawn, self.seed) {
            (Some(v), seed) => {
                let z =
                    FileSizes::parse(&v, seed.unwrap_or(0)).map_err(|why| FileSetError::Value {
                        key: "size".into(),
                        value: v.clone(),
                        why,
                    })?;
                Ok((z.largest(), Some(z)))
            }
            (None, Some(s)) => Err(FileSetError::Value {
                key: "seed".into(),
                value: s.to_string(),
                why: "a seed draws the lengths of size=LEN:PCT,… or LOW-HIGH; one size needs \
                      none"
                    .into(),
            }),
            (None, None) => Ok((self.one_bytes, None)),
        }
    }
}

pub(crate) fn split_list(v: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                out.last_mut().expect("non-empty").push(':');
                chars.next();
            }
            ':' => out.push(String::new()),
            c => out.last_mut().expect("non-empty").push(c),
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_writes_back() {
        let s = FileSetSpec::parse("/d?count=6&per=3&name=t0.{clone}.{file}&size=4k").unwrap();
        assert_eq!(s.count, 6);
        assert_eq!(s.file_name(0), "t0.0.0");
        assert_eq!(s.file_name(4), "t0.1.1");
        assert_eq!(s.file_bytes, 4096);
        assert_eq!(
            FileSetSpec::parse(s.uri().strip_prefix("files:").unwrap()),
            Ok(s)
        );
        let d = FileSetSpec::parse("dir?count=2").unwrap();
        assert_eq!((d.file_name(1).as_str(), d.per), ("f.1", 2));
        let l = FileSetSpec::parse("/d?list=a:/abs/b:c\\:d&size=1m&unlink=1").unwrap();
        assert_eq!(l.count, 3);
        assert_eq!(l.file_name(1), "/abs/b");
        assert_eq!(l.file_name(2), "c:d");
        assert!(l.unlink);
        assert_eq!(
            FileSetSpec::parse(l.uri().strip_prefix("files:").unwrap()),
            Ok(l)
        );
    }

    #[test]
    fn refuses_what_cannot_name_distinct_files() {
        assert_eq!(FileSetSpec::parse("/d"), Err(FileSetError::NoCount));
        assert!(matches!(
            FileSetSpec::parse("/d?count=0"),
            Err(FileSetError::Value { .. })
        ));
        assert!(matches!(
            FileSetSpec::parse("/d?count=5&per=2"),
            Err(FileSetError::Value { .. })
        ));
        assert!(matches!(
            FileSetSpec::parse("/d?count=5&name=same"),
            Err(FileSetError::Name(_))
        ));
        assert!(matches!(
            FileSetSpec::parse("/d?count=4&per=2&name=x.{file}"),
            Err(FileSetError::Name(_))
        ));
        for outside in ["../{n}", "/abs/{n}", "a//{n}", "./{n}", "a/../{n}"] {
            assert!(
                matches!(
                    FileSetSpec::parse(&format!("/d?count=4&name={outside}")),
                    Err(FileSetError::Name(_))
                ),
                "{outside}"
            );
        }
        // Subdirectories of the set's directory are fio's filename_format with a '/'.
        let sub = FileSetSpec::parse("/d?count=4&per=2&name=s{clone}/x/f.{file}").unwrap();
        assert_eq!(sub.file_name(3), "s1/x/f.1");
        assert_eq!(sub.name_dirs(), ["s0/x", "s1/x"]);
        assert!(FileSetSpec::parse("/d?count=4")
            .unwrap()
            .name_dirs()
            .is_empty());
        assert_eq!(
            FileSetSpec::parse("/d?count=4&x=1"),
            Err(FileSetError::Unknown("x".into()))
        );
        assert!(FileSetSpec::parse("/d?list=a:b:a").is_err());
        assert!(FileSetSpec::parse("/d?list=a:b&count=3").is_err());
        assert!(FileSetSpec::parse("/d?count=2&unlink=yes").is_err());
    }

    // vdbench's totalsize= then workingsetsize=: each a draw among what the one
    // before kept, written back and read again as the same files.
    #[test]
    fn a_tree_s_total_and_working_set_are_subsets_of_subsets() {
        let all = FileSetSpec::parse_tree("/a?depth=2&width=3&files=10&size=4k").unwrap();
        let t = FileSetSpec::parse_tree("/a?depth=2&width=3&files=10&size=4k&total=100k").unwrap();
        let w = FileSetSpec::parse_tree("/a?depth=2&width=3&files=10&size=4k&total=100k&wss=40k")
            .unwrap();
        assert_eq!((all.count, t.count, w.count), (90, 25, 10));
        let names = |s: &FileSetSpec| (0..s.count).map(|i| s.file_name(i)).collect::<Vec<_>>();
        let (kept, used) = (names(&t), names(&w));
        assert!(used.iter().all(|n| kept.contains(n)), "{used:?}");
        assert!(kept.contains(&all.file_name(65)), "vdbench's first pick");
        assert_eq!(
            w.uri(),
            "tree:/a?depth=2&width=3&files=10&total=102400&wss=40960&size=4096"
        );
        assert_eq!(
            FileSetSpec::parse_tree(w.uri().strip_prefix("tree:").unwrap()),
            Ok(w)
        );
        assert!(FileSetSpec::parse_tree("/a?files=2&size=4k&total=9k").is_err());
        // shared=yes on 3 hosts: host 1 (from 0) takes files 1, 4, 7 of 9.
        let h = FileSetSpec::parse_tree("/a?depth=1&width=1&files=9&size=4k&share=1/3").unwrap();
        let got: Vec<String> = (0..h.count).map(|i| h.file_name(i)).collect();
        assert_eq!(
            got,
            [
                "vdb.1_1.dir/vdb_f0002.file",
                "vdb.1_1.dir/vdb_f0005.file",
                "vdb.1_1.dir/vdb_f0008.file"
            ]
        );
        assert_eq!(
            FileSetSpec::parse_tree(h.uri().strip_prefix("tree:").unwrap()),
            Ok(h)
        );
        assert!(FileSetSpec::parse_tree("/a?files=9&size=4k&share=3/3").is_err());
    }

    #[test]
    fn a_tree_parses_and_writes_back() {
        let t = FileSetSpec::parse_tree("/a?depth=2&width=3&files=4&size=8k").unwrap();
        assert_eq!((t.count, t.file_bytes), (36, 8192));
        assert_eq!(t.file_name(4), "vdb.1_2.dir/vdb.2_1.dir/vdb_f0001.file");
        assert_eq!(t.uri(), "tree:/a?depth=2&width=3&files=4&size=8192");
        assert_eq!(
            FileSetSpec::parse_tree(t.uri().strip_prefix("tree:").unwrap()),
            Ok(t)
        );
        assert_eq!(
            FileSetSpec::parse_tree("/a?count=3"),
            Err(FileSetError::UnknownInTree("count".into()))
        );
        assert!(FileSetSpec::parse_tree("/a?width=0").is_err());
        let z = FileSetSpec::parse_tree("/a?files=3&size=4k:50,16k:50&seed=9").unwrap();
        assert_eq!(z.file_bytes, 16384, "the stride is the largest length");
        assert!((0..3).all(|i| [4096, 16384].contains(&z.file_len(i))));
        assert_eq!(
            z.uri(),
            "tree:/a?depth=1&width=1&files=3&size=4096:50,16384:50&seed=9"
        );
        assert_eq!(
            FileSetSpec::parse_tree(z.uri().strip_prefix("tree:").unwrap()),
            Ok(z.clone())
        );
        let line = z.sizes_summary().unwrap();
        assert!(
            line.starts_with("3 files of 2 lengths drawn with seed 9 ("),
            "{line}"
        );
        assert!(FileSetSpec::parse_tree("/a?size=4k:50,16k:40").is_err());
        assert!(FileSetSpec::parse_tree("/a?size=4k&seed=3").is_err());
        assert!(FileSetSpec::parse_tree("?depth=1").is_err());
    }
}
