//! Directory trees on an NFS export (`tree:nfs://HOST[:PORT]/EXPORT/DIR?depth=…`):
//! the URI's reading (the last path component is the tree's anchor, everything
//! before it the export, as for a file), the [`NfsDir`] that makes the tree's calls
//! through libnfs's blocking path calls on a connection of its own (each worker
//! mounts the export once and names every file by its path from the export's root:
//! NFSv3 has no directory descriptor to resolve names against, so each call's LOOKUPs
//! are part of its time, as an application on a kernel mount pays them on a cold
//! dentry cache), and the probe and directory making done when the tree is opened.

use super::ffi::{self, paths::PathFile, Client};
use crate::plan::engine_opts::StatCall;
use crate::plan::fileset::{FileSetSpec, RemoteDir};
use crate::plan::model::NfsSpec;
use crate::target::tree_dir::{FileId, TreeDir};
use crate::target::TargetError;
use std::ffi::{CStr, CString};

/// Reads what follows `tree:` when it is an `nfs://` URI: the server's part (with
/// `mountport=`) by [`super::parse`], the tree's query keys by
/// [`FileSetSpec::parse_tree`]. `Err`: why, in words.
pub fn parse_tree(rest: &str) -> Result<FileSetSpec, String> {
    let (base, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (mut server_keys, mut tree_keys) = (Vec::new(), Vec::new());
    for kv in query.split('&').filter(|p| !p.is_empty()) {
        match kv.starts_with("mountport=") {
            true => server_keys.push(kv),
            false => tree_keys.push(kv),
        }
    }
    let nfs_uri = match server_keys.is_empty() {
        true => base.to_string(),
        false => format!("{base}?{}", server_keys.join("&")),
    };
    let nfs = super::parse(&nfs_uri).map_err(|e| match e {
        crate::target::uri::UriError::Shape(_) => format!(
            "{e} (in a tree: tree:nfs://HOST[:PORT]/EXPORT/DIR?depth=D&width=W&files=F&size=BYTES, \
             DIR the tree's anchor inside the export)"
        ),
        e => e.to_string(),
    })?;
    let anchor = format!("/{}", nfs.file);
    let mut spec = FileSetSpec::parse_tree(&format!("{anchor}?{}", tree_keys.join("&")))
        .map_err(|e| e.to_string())?;
    spec.remote = Some(RemoteDir::Nfs(Box::new(nfs)));
    Ok(spec)
}

/// The tree's directory on one connection: every name joined to its path.
pub struct NfsDir {
    client: Client,
    /// The anchor's path from the export's root ("/DIR").
    base: String,
}

/// `name` (relative to the anchor) as a path from the export's root.
pub fn join(base: &str, name: &CStr) -> CString {
    let mut p = Vec::with_capacity(base.len() + name.to_bytes().len() + 1);
    p.extend_from_slice(base.trim_end_matches('/').as_bytes());
    p.push(b'/');
    p.extend_from_slice(name.to_bytes());
    // Neither part holds a NUL: base is a C string's text and name a C string.
    CString::new(p).unwrap_or_default()
}

impl NfsDir {
    /// Mounts the export `spec` names, on a connection of its own.
    pub fn connect(spec: &NfsSpec) -> Result<NfsDir, ffi::NfsError> {
        let client = Client::mount_dir(&super::libnfs_url(spec))?;
        let base = client.url_path();
        Ok(NfsDir { client, base })
    }

    fn path(&self, name: &CStr) -> CString {
        join(&self.base, name)
    }
}

/// A path call's answer as a local call's: NFS3ERR_STALE on a path means an
/// object on it was removed between libnfs's LOOKUP and the call (another worker's
/// delete or rmdir), which a local call sees as ENOENT.
fn local_errno(r: i64) -> i64 {
    match r == -(libc::ESTALE as i64) {
        true => -(libc::ENOENT as i64),
        false => r,
    }
}

impl NfsDir {
    /// The anchor's own path.
    fn anchor(&self) -> CString {
        CString::new(self.base.clone()).unwrap_or_default()
    }

    /// GETATTR of the anchor itself: 0, or a negated errno (-ENOENT: missing).
    pub fn stat_anchor(&self) -> i64 {
        self.client.stat(&self.anchor())
    }

    /// libnfs's last error on the connection.
    pub fn error(&self) -> String {
        self.client.error()
    }
}

/// A handle of this connection back from a [`FileId`].
fn file(f: &FileId) -> PathFile {
    // SAFETY: every FileId an NfsDir hands out is a PathFile of its own client
    // (`into_raw`), and a closed one is consumed by `close`.
    unsafe { PathFile::from_raw(f.0) }
}

impl TreeDir for NfsDir {
    fn create(&self, name: &CStr) -> i64 {
        match self
            .client
            .create_file(&self.path(name), libc::O_EXCL | libc::O_RDWR, 0o600)
        {
            Ok(f) => {
                self.client.close_file(f);
                0
            }
            Err(e) => local_errno(e),
        }
    }

    /// NFS has one attribute call (GETATTR): stat, lstat and statx all make it.
    fn stat(&self, name: &CStr, _how: StatCall) -> i64 {
        local_errno(self.client.stat(&self.path(name)))
    }

    fn exists(&self, name: &CStr) -> bool {
        self.client.stat(&self.path(name)) == 0
    }

    fn unlink(&self, name: &CStr) -> i64 {
        local_errno(self.client.unlink(&self.path(name)))
    }

    /// libnfs's nfs_mkdir takes no mode: the server's default applies.
    fn mkdir(&self, name: &CStr, _mode: u32) -> i64 {
        local_errno(self.client.mkdir(&self.path(name)))
    }

    fn rmdir(&self, name: &CStr) -> i64 {
        local_errno(self.client.rmdir(&self.path(name)))
    }

    fn access(&self, name: &CStr) -> i64 {
        local_errno(self.client.access(&self.path(name), libc::R_OK))
    }

    fn touch(&self, name: &CStr) -> i64 {
        local_errno(self.client.touch(&self.path(name)))
    }

    /// NFSv3's RENAME replaces an existing destination, and has no flag against it:
    /// the destination is looked up first, and renamed onto only when missing. That
    /// leaves a race: another client (or worker) that creates the destination
    /// between the lookup and the RENAME has its file replaced.
    fn rename_noreplace(&self, from: &CStr, to: &CStr) -> i64 {
        let to = self.path(to);
        match local_errno(self.client.stat(&to)) {
            0 => -(libc::EEXIST as i64),
            e if e == -(libc::ENOENT as i64) => {
                local_errno(self.client.rename(&self.path(from), &to))
            }
            e => e,
        }
    }

    fn open(&self, name: &CStr, write: bool) -> Result<FileId, i64> {
        let flags = if write { libc::O_RDWR } else { libc::O_RDONLY };
        let f = self
            .client
            .open_file(&self.path(name), flags)
            .map_err(local_errno)?;
        Ok(FileId(f.into_raw()))
    }

    fn create_new(&self, name: &CStr) -> Result<FileId, i64> {
        let flags = libc::O_EXCL | libc::O_RDWR;
        let f = self
            .client
            .create_file(&self.path(name), flags, 0o644)
            .map_err(local_errno)?;
        Ok(FileId(f.into_raw()))
    }

    fn read_at(&self, f: &FileId, buf: &mut [u8], offset: u64) -> i64 {
        self.client.read_file(&file(f), buf, offset)
    }

    fn write_at(&self, f: &FileId, buf: &[u8], offset: u64) -> i64 {
        self.client.write_file(&file(f), buf, offset)
    }

    fn close(&self, f: FileId) -> i64 {
        self.client.close_file(file(&f))
    }
}

/// Why a tree on `spec`'s export cannot be reached, as a target error.
fn unavailable(uri: &str, spec: &NfsSpec, e: impl std::fmt::Display) -> TargetError {
    TargetError::Unavailable {
        uri: uri.to_string(),
        msg: format!("{}: {e}", super::server(spec)),
    }
}

/// Mounts the export and looks at the anchor, creating nothing: it must exist
/// unless the tree makes it (`mkdir=parents`).
pub fn probe(uri: &str, spec: &NfsSpec, set: &FileSetSpec) -> Result<NfsDir, TargetError> {
    ffi::available().map_err(|e| TargetError::Unavailable {
        uri: uri.to_string(),
        msg: e.to_string(),
    })?;
    let d = NfsDir::connect(spec).map_err(|e| unavailable(uri, spec, e))?;
    let made_later = set.tree.is_some_and(|t| t.make_anchor);
    match d.stat_anchor() {
        0 => Ok(d),
        e if e == -(libc::ENOENT as i64) && made_later => Ok(d),
        e if e == -(libc::ENOENT as i64) => Err(TargetError::Invalid {
            uri: uri.to_string(),
            msg: format!(
                "directory '{}' does not exist on the export {} (add mkdir=parents to make it)",
                d.base, spec.export
            ),
        }),
        _ => Err(unavailable(uri, spec, d.error())),
    }
}

/// Mounts the export, makes the anchor when the tree makes it and the tree's
/// directories that are missing, parents first (they stay, as a local tree's do).
pub fn open(uri: &str, spec: &NfsSpec, set: &FileSetSpec) -> Result<NfsDir, TargetError> {
    let d = probe(uri, spec, set)?;
    let failed = |what: String, e: i64| TargetError::Io {
        path: std::path::PathBuf::from(format!("{}{}", spec.export, what)),
        op: "making a directory of the tree",
        source: std::io::Error::from_raw_os_error(-e as i32),
    };
    let exists = -(libc::EEXIST as i64);
    if d.stat_anchor() != 0 {
        let r = d.client.mkdir(&d.anchor());
        if r != 0 && r != exists {
            return Err(failed(d.base.clone(), r));
        }
    }
    for rel in set.tree.iter().flat_map(|t| t.dirs()) {
        let name = CString::new(rel.clone()).unwrap_or_default();
        match d.mkdir(&name, 0o777) {
            0 => {}
            r if r == exists => {}
            r => return Err(failed(format!("{}/{rel}", d.base), r)),
        }
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_names_to_the_anchor() {
        assert_eq!(
            join("/t", c"vdb.1_1.dir/vdb_f0001.file").to_bytes(),
            b"/t/vdb.1_1.dir/vdb_f0001.file"
        );
        assert_eq!(join("/t/", c"f").to_bytes(), b"/t/f");
        assert_eq!(join("", c"f").to_bytes(), b"/f");
    }

    #[test]
    fn reads_a_tree_uri() {
        let s = parse_tree(
            "nfs://127.0.0.1:20491/srv/x/t?depth=2&width=2&files=3&size=4k&mountport=20492",
        )
        .unwrap();
        let Some(RemoteDir::Nfs(n)) = &s.remote else {
            panic!("no remote: {s:?}")
        };
        assert_eq!((n.export.as_str(), n.file.as_str()), ("/srv/x", "t"));
        assert_eq!((n.nfs_port, n.mount_port), (Some(20491), Some(20492)));
        assert_eq!(s.dir, std::path::PathBuf::from("/t"));
        assert_eq!((s.count, s.file_bytes), (12, 4096));
        assert_eq!(
            s.uri(),
            "tree:nfs://127.0.0.1:20491/srv/x/t?depth=2&width=2&files=3&size=4096&mountport=20492"
        );
        assert_eq!(
            parse_tree(s.uri().strip_prefix("tree:").unwrap()).unwrap(),
            s
        );
    }

    #[test]
    fn refuses_bad_tree_uris() {
        for (rest, want) in [
            (
                "nfs://h/export?depth=1&width=1&files=1",
                "anchor inside the export",
            ),
            (
                "nfs://h/e/t?depth=1&width=1&files=1&mountport=x",
                "bad port 'x'",
            ),
            (
                "nfs://h/e/t?depth=1&width=1&files=1&count=3",
                "unknown parameter 'count'",
            ),
            ("nfs://u@h/e/t?depth=1", "no user name"),
        ] {
            let e = parse_tree(rest).unwrap_err();
            assert!(e.contains(want), "{rest}: {e}");
        }
    }
}
