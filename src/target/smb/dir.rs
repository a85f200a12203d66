//! A directory on an SMB share, worked on by name: the building blocks of file-tree
//! workloads (`tree:smb://[USER@]HOST[:PORT]/SHARE/DIR?…`). An [`SmbDir`] holds one
//! session and tree connection and a current-thread runtime, and its calls block on
//! it; names are relative to a base directory inside the share, '/'-separated. Every
//! call answers in the local tree operations' convention, 0 or a negated errno (reads
//! and writes: a byte count), with NT statuses turned into errnos by one table
//! ([`super::errno`]).
//!
//! Round trips: the `smb` crate sends no compound requests, so an operation on a name
//! is a CREATE, what the operation needs besides (a SET_INFO for rename and touch),
//! and a CLOSE — two or three round trips where a compound chain would be one. What
//! can be said in the CREATE is: stat reads the times, size and attributes its answer
//! carries (no QUERY_INFO), unlink opens with FILE_DELETE_ON_CLOSE (the name goes
//! when the handle closes), create and mkdir use the create disposition, which fails
//! on an existing name. rmdir needs a SET_INFO (see [`SmbDir::rmdir`]).

use super::client::{connect_share, runtime, shut_down, Connected, OpenError};
use super::credentials::Credentials;
use super::errno::neg_errno;
use crate::plan::model::SmbSpec;
use smb::{
    CreateDisposition, CreateOptions, FileAccessMask, FileAttributes, FileBasicInformation,
    FileCreateArgs, FileDispositionInformation, FileRenameInformation, Resource,
};
use std::sync::Arc;
use tokio::runtime::Runtime;

/// 100 ns intervals from FILETIME's epoch (1601-01-01) to the Unix epoch.
const FILETIME_AT_UNIX_EPOCH: u64 = 116_444_736_000_000_000;

/// A directory on a share, with its own session, tree connection and runtime.
pub struct SmbDir {
    rt: Arc<Runtime>,
    /// Taken in `drop`, which must run the crate's destructors inside the runtime.
    client: Option<smb::Client>,
    /// Connected from `connect` until `drop` takes it.
    tree: Option<Arc<smb::Tree>>,
    /// The base directory inside the share, '\\'-separated ("" for the share's root).
    base: String,
    /// `\\HOST\SHARE\BASE`, for messages.
    pub label: String,
    /// The largest READ and WRITE the server takes (negotiated).
    pub max_read_bytes: u32,
    pub max_write_bytes: u32,
}

/// A file opened by [`SmbDir::open_read`], [`SmbDir::open_existing`] or
/// [`SmbDir::create_write`]. Give it back with [`SmbDir::close`]; one merely dropped
/// is closed in the background.
pub struct SmbFile {
    file: Option<smb::File>,
    /// What the handle was opened for: a read or write it was not opened for is
    /// refused here, as on a local descriptor.
    readable: bool,
    writable: bool,
    rt: Arc<Runtime>,
}

impl Drop for SmbFile {
    fn drop(&mut self) {
        // The crate closes a dropped handle from a task it spawns: that needs the
        // runtime entered (and runs at its next `block_on`).
        let _entered = self.rt.enter();
        self.file.take();
    }
}

/// What [`SmbDir::stat_info`] learns from a CREATE's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmbStat {
    pub is_dir: bool,
    /// End of file (0 for a directory).
    pub size_bytes: u64,
    /// Last write time.
    pub mtime_unix_ns: u64,
}

/// Why a directory could not be reached or laid out, with the path at fault.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    #[error(transparent)]
    Connect(#[from] OpenError),
    /// A call failed with an errno (as the call itself reports it, negated).
    #[error("{op} {path}: {}", std::io::Error::from_raw_os_error(*errno))]
    Op {
        op: &'static str,
        path: String,
        errno: i32,
    },
}

/// Connects to `spec`'s share with the configured credentials (`IOSCOPE_SMB_PASSWORD`
/// or `--credentials`) and makes `spec.path` the base directory, creating it and its
/// parents when missing, as a local tree's directory is.
pub fn open(spec: &SmbSpec) -> Result<SmbDir, crate::target::TargetError> {
    open_at(spec, true)
}

/// [`open`], making the base directory (and its parents) only with `make_base`;
/// without, a missing base is left for the caller to find ([`SmbDir::stat_info`]
/// of "").
pub fn open_at(spec: &SmbSpec, make_base: bool) -> Result<SmbDir, crate::target::TargetError> {
    use crate::target::TargetError;
    let creds = super::credentials::resolve(spec.user.as_deref()).map_err(|source| {
        TargetError::Credentials {
            uri: spec.uri.clone(),
            source,
        }
    })?;
    let opts = super::credentials::options();
    SmbDir::connect_at(spec, &creds, opts.require_encryption, make_base).map_err(|e| match e {
        DirError::Connect(e) => TargetError::Unavailable {
            uri: spec.uri.clone(),
            msg: e.to_string(),
        },
        e => TargetError::Invalid {
            uri: spec.uri.clone(),
            msg: e.to_string(),
        },
    })
}

/// Create arguments with no attributes asked for.
fn args(
    disposition: CreateDisposition,
    access: FileAccessMask,
    opts: CreateOptions,
) -> FileCreateArgs {
    FileCreateArgs {
        disposition,
        attributes: FileAttributes::new(),
        options: opts,
        desired_access: access,
    }
}

fn read_attributes() -> FileAccessMask {
    FileAccessMask::new().with_file_read_attributes(true)
}

fn delete() -> FileAccessMask {
    FileAccessMask::new().with_delete(true)
}

/// Closes what a CREATE opened: 0 or a negated errno.
async fn close_resource(r: &Resource) -> i64 {
    let closed = match r {
        Resource::File(f) => f.close().await,
        Resource::Directory(d) => d.close().await,
        Resource::Pipe(p) => p.close().await,
    };
    closed.map_or_else(|e| neg_errno(&e), |()| 0)
}

/// An I/O error of a READ or WRITE as a negated errno. The crate keeps only the text
/// of the server's status there, so that is EIO; its one error of its own, a file the
/// server grants no write access to, is EACCES.
fn io_errno(e: &std::io::Error) -> i64 {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => -i64::from(libc::EACCES),
        _ => -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
    }
}

/// `name` ('/'-separated) below `base` ('\\'-separated, "" for the share's root),
/// as a path inside the share.
fn join(base: &str, name: &str) -> String {
    let name = name.trim_matches('/').replace('/', "\\");
    if name.is_empty() {
        // "" names the base itself.
        base.to_string()
    } else if base.is_empty() {
        name
    } else {
        format!("{base}\\{name}")
    }
}

/// Each directory from the share's root down to `base`, parents first.
fn prefixes(base: &str) -> Vec<&str> {
    base.match_indices('\\')
        .map(|(i, _)| &base[..i])
        .chain(std::iter::once(base))
        .filter(|p| !p.is_empty())
        .collect()
}

/// Now, as a FILETIME.
fn filetime_now() -> u64 {
    let since_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    FILETIME_AT_UNIX_EPOCH + (since_unix.as_nanos() / 100) as u64
}

impl SmbDir {
    /// Connects with `creds` (the caller resolved them; [`open`] takes ioscope's own)
    /// and makes `spec.path` the base directory, creating it and its parents when
    /// missing.
    pub fn connect(
        spec: &SmbSpec,
        creds: &Credentials,
        require_encryption: bool,
    ) -> Result<SmbDir, DirError> {
        Self::connect_at(spec, creds, require_encryption, true)
    }

    /// [`SmbDir::connect`], making the base directory only with `make_base`.
    pub fn connect_at(
        spec: &SmbSpec,
        creds: &Credentials,
        require_encryption: bool,
        make_base: bool,
    ) -> Result<SmbDir, DirError> {
        let rt = runtime()?;
        let other = |what: &str, e: smb::Error| OpenError::Other(format!("{what}: {e}"));
        let (client, tree, share, max_read_bytes, max_write_bytes) = rt.block_on(async {
            let Connected {
                client,
                conn,
                share,
                ..
            } = connect_share(spec, creds, require_encryption).await?;
            let tree = client
                .get_tree(&share)
                .await
                .map_err(|e| other("the share's tree", e))?;
            let n = conn.conn_info().map(|ci| &ci.negotiation);
            let read = n.map_or(65536, |n| n.max_read_size);
            let write = n.map_or(65536, |n| n.max_write_size);
            Ok::<_, OpenError>((client, tree, share, read, write))
        })?;
        let base = spec.path.trim_matches('/').replace('/', "\\");
        let mut dir = SmbDir {
            label: share.to_string(),
            rt,
            client: Some(client),
            tree: Some(tree),
            base: String::new(),
            max_read_bytes,
            max_write_bytes,
        };
        if make_base {
            dir.make_dirs(&prefixes(&base))?;
        }
        dir.label = format!("{share}\\{base}");
        dir.base = base;
        Ok(dir)
    }

    fn tree(&self) -> &smb::Tree {
        // Some from `connect` until `drop`.
        self.tree
            .as_deref()
            .expect("SmbDir's tree is connected until drop")
    }

    /// `name` inside the share.
    fn path(&self, name: &str) -> String {
        join(&self.base, name)
    }

    /// CREATE then CLOSE: for the operations whose whole meaning is in the CREATE.
    fn create_close(&self, name: &str, a: FileCreateArgs) -> i64 {
        let path = self.path(name);
        self.rt.block_on(async {
            match self.tree().create(&path, &a).await {
                Ok(r) => close_resource(&r).await,
                Err(e) => neg_errno(&e),
            }
        })
    }

    /// CREATE, SET_INFO of `info` on the handle, CLOSE: the SET_INFO's result unless
    /// it succeeded and the CLOSE failed.
    fn set_info_at<T: smb::SetFileInfoValue>(&self, name: &str, a: FileCreateArgs, info: T) -> i64 {
        let path = self.path(name);
        self.rt.block_on(async {
            let r = match self.tree().create(&path, &a).await {
                Ok(r) => r,
                Err(e) => return neg_errno(&e),
            };
            let set = resource_handle(&r)
                .set_info(info)
                .await
                .map_or_else(|e| neg_errno(&e), |()| 0);
            let closed = close_resource(&r).await;
            if set == 0 {
                closed
            } else {
                set
            }
        })
    }

    /// Creates a regular file that must not exist yet (`open(O_CREAT|O_EXCL)` then
    /// close): -EEXIST when the name is taken.
    pub fn create_new(&self, name: &str) -> i64 {
        let access = FileAccessMask::new()
            .with_generic_read(true)
            .with_generic_write(true);
        let opts = CreateOptions::new().with_non_directory_file(true);
        self.create_close(name, args(CreateDisposition::Create, access, opts))
    }

    /// 0 when `name` exists (file or directory), -ENOENT when it does not.
    pub fn stat(&self, name: &str) -> i64 {
        self.stat_info(name).err().unwrap_or(0)
    }

    /// What a CREATE for the attributes tells about `name` (CREATE and CLOSE).
    pub fn stat_info(&self, name: &str) -> Result<SmbStat, i64> {
        let path = self.path(name);
        let a = args(
            CreateDisposition::Open,
            read_attributes(),
            CreateOptions::new(),
        );
        self.rt.block_on(async {
            let r = self
                .tree()
                .create(&path, &a)
                .await
                .map_err(|e| neg_errno(&e))?;
            let modified = smb::binrw_util::prelude::FileTime::from(resource_handle(&r).modified());
            let st = SmbStat {
                is_dir: r.is_dir(),
                size_bytes: match &r {
                    Resource::File(f) => smb::GetLen::get_len(f).await.unwrap_or(0),
                    _ => 0,
                },
                mtime_unix_ns: (*modified).saturating_sub(FILETIME_AT_UNIX_EPOCH) * 100,
            };
            match close_resource(&r).await {
                0 => Ok(st),
                e => Err(e),
            }
        })
    }

    /// Removes a regular file (`unlink`): -ENOENT when missing, -EISDIR for a directory.
    pub fn unlink(&self, name: &str) -> i64 {
        let opts = CreateOptions::new()
            .with_non_directory_file(true)
            .with_delete_on_close(true);
        self.create_close(name, args(CreateDisposition::Open, delete(), opts))
    }

    /// Creates a directory: -EEXIST when the name is taken.
    pub fn mkdir(&self, name: &str) -> i64 {
        let a = FileCreateArgs {
            attributes: FileAttributes::new().with_directory(true),
            ..args(
                CreateDisposition::Create,
                read_attributes(),
                CreateOptions::new().with_directory_file(true),
            )
        };
        self.create_close(name, a)
    }

    /// Removes an empty directory: -ENOTEMPTY when it holds anything, -ENOTDIR for a
    /// file. CREATE with DELETE access, SET_INFO of FileDispositionInformation, CLOSE:
    /// FILE_DELETE_ON_CLOSE in the CREATE would save the SET_INFO, but smbd then
    /// accepts a directory that is not empty, and the CLOSE, which cannot remove it,
    /// still answers success.
    pub fn rmdir(&self, name: &str) -> i64 {
        let opts = CreateOptions::new().with_directory_file(true);
        let a = args(CreateDisposition::Open, delete(), opts);
        self.set_info_at(name, a, FileDispositionInformation::default())
    }

    /// Whether `name` can be opened (`access(F_OK)`): a CREATE for its attributes,
    /// then CLOSE.
    pub fn access(&self, name: &str) -> i64 {
        let a = args(
            CreateDisposition::Open,
            read_attributes(),
            CreateOptions::new(),
        );
        self.create_close(name, a)
    }

    /// Sets `name`'s last write time to now (`utimensat` of the mtime): CREATE for
    /// writing attributes, SET_INFO of the basic information with every other time
    /// zero (MS-FSCC: "do not change"), CLOSE.
    pub fn touch_mtime(&self, name: &str) -> i64 {
        let access = FileAccessMask::new().with_file_write_attributes(true);
        let a = args(CreateDisposition::Open, access, CreateOptions::new());
        let info = FileBasicInformation {
            creation_time: 0u64.into(),
            last_access_time: 0u64.into(),
            last_write_time: filetime_now().into(),
            change_time: 0u64.into(),
            file_attributes: FileAttributes::new(),
        };
        self.set_info_at(name, a, info)
    }

    /// Renames `from` to `to` (both under the base), failing with -EEXIST when `to`
    /// exists (`renameat2(RENAME_NOREPLACE)`): CREATE with DELETE access, SET_INFO of
    /// FileRenameInformation with ReplaceIfExists false, CLOSE. The source stays.
    pub fn rename_noreplace(&self, from: &str, to: &str) -> i64 {
        let target = self.path(to);
        let a = args(CreateDisposition::Open, delete(), CreateOptions::new());
        let info = FileRenameInformation {
            replace_if_exists: false.into(),
            root_directory: 0,
            file_name: target.as_str().into(),
        };
        self.set_info_at(from, a, info)
    }

    /// Opens an existing regular file for reading.
    pub fn open_read(&self, name: &str) -> Result<SmbFile, i64> {
        let access = FileAccessMask::new().with_generic_read(true);
        self.open_file(
            name,
            args(CreateDisposition::Open, access, file_only()),
            (true, false),
        )
    }

    /// Opens an existing regular file for reading, and for writing too with `write`
    /// (`open(O_RDONLY)` or `open(O_RDWR)`).
    pub fn open_existing(&self, name: &str, write: bool) -> Result<SmbFile, i64> {
        let access = FileAccessMask::new()
            .with_generic_read(true)
            .with_generic_write(write);
        self.open_file(
            name,
            args(CreateDisposition::Open, access, file_only()),
            (true, write),
        )
    }

    /// Creates a regular file for writing (`open(O_CREAT|O_EXCL|O_WRONLY)`):
    /// -EEXIST when the name is taken.
    pub fn create_write(&self, name: &str) -> Result<SmbFile, i64> {
        let access = FileAccessMask::new().with_generic_write(true);
        self.open_file(
            name,
            args(CreateDisposition::Create, access, file_only()),
            (false, true),
        )
    }

    /// Opens `name` as `a` says; `(readable, writable)` is what the handle allows.
    fn open_file(
        &self,
        name: &str,
        a: FileCreateArgs,
        (readable, writable): (bool, bool),
    ) -> Result<SmbFile, i64> {
        let path = self.path(name);
        self.rt.block_on(async {
            match self.tree().create(&path, &a).await {
                Ok(Resource::File(f)) => Ok(SmbFile {
                    file: Some(f),
                    readable,
                    writable,
                    rt: self.rt.clone(),
                }),
                Ok(r) => {
                    close_resource(&r).await;
                    Err(-i64::from(libc::EISDIR))
                }
                Err(e) => Err(neg_errno(&e)),
            }
        })
    }

    /// Reads at `offset` into `buf` (`pread`): the bytes read, at most
    /// [`SmbDir::max_read_bytes`], 0 at the end of the file as it was when opened;
    /// -EBADF on a handle opened for writing only, as on a local `O_WRONLY`
    /// descriptor.
    pub fn read_at(&self, f: &SmbFile, buf: &mut [u8], offset: u64) -> i64 {
        let Some(file) = f.file.as_ref().filter(|_| f.readable) else {
            return -i64::from(libc::EBADF);
        };
        let n = buf.len().min(self.max_read_bytes as usize);
        self.rt
            .block_on(file.read_block(&mut buf[..n], offset, None, false))
            .map_or_else(|e| io_errno(&e), |got| got as i64)
    }

    /// Writes `buf` at `offset` (`pwrite`): the bytes written, at most
    /// [`SmbDir::max_write_bytes`]; -EBADF on a handle opened for reading.
    pub fn write_at(&self, f: &SmbFile, buf: &[u8], offset: u64) -> i64 {
        let Some(file) = f.file.as_ref().filter(|_| f.writable) else {
            return -i64::from(libc::EBADF);
        };
        let n = buf.len().min(self.max_write_bytes as usize);
        self.rt
            .block_on(file.write_block(&buf[..n], offset, None))
            .map_or_else(|e| io_errno(&e), |put| put as i64)
    }

    /// Closes a file: 0 or a negated errno.
    pub fn close(&self, mut f: SmbFile) -> i64 {
        let Some(file) = f.file.take() else {
            return 0;
        };
        self.rt.block_on(async move {
            let r = file.close().await;
            drop(file);
            r.map_or_else(|e| neg_errno(&e), |()| 0)
        })
    }
}

fn file_only() -> CreateOptions {
    CreateOptions::new().with_non_directory_file(true)
}

/// The handle every kind of resource carries.
fn resource_handle(r: &Resource) -> &smb::ResourceHandle {
    match r {
        Resource::File(f) => f,
        Resource::Directory(d) => d,
        Resource::Pipe(p) => p,
    }
}

/// Laying a tree out: what its opener needs before a run, with errors that name the
/// path at fault.
impl SmbDir {
    /// Creates each directory of `paths` in order (so parents come first); one that
    /// exists already is left as it is.
    pub fn make_dirs(&self, paths: &[&str]) -> Result<(), DirError> {
        for p in paths {
            match self.mkdir(p) {
                0 => {}
                e if e == -i64::from(libc::EEXIST) => {}
                e => return Err(self.op_error("creating the directory", p, e)),
            }
        }
        Ok(())
    }

    /// Creates the regular file `name` (it must not exist) holding `len_bytes` bytes:
    /// `chunk` over and over, each WRITE at most the server's largest.
    pub fn write_file(&self, name: &str, len_bytes: u64, chunk: &[u8]) -> Result<(), DirError> {
        let f = self
            .create_write(name)
            .map_err(|e| self.op_error("creating", name, e))?;
        let piece = chunk.len().min(self.max_write_bytes as usize).max(1);
        let mut at = 0u64;
        while at < len_bytes && !chunk.is_empty() {
            let n = (len_bytes - at).min(piece as u64) as usize;
            match self.write_at(&f, &chunk[..n], at) {
                w if w > 0 => at += w as u64,
                0 => return Err(self.op_error("writing", name, -i64::from(libc::EIO))),
                e => return Err(self.op_error("writing", name, e)),
            }
        }
        match self.close(f) {
            0 => Ok(()),
            e => Err(self.op_error("closing", name, e)),
        }
    }

    fn op_error(&self, op: &'static str, name: &str, neg_errno: i64) -> DirError {
        DirError::Op {
            op,
            path: format!("{}\\{}", self.label, name.replace('/', "\\")),
            errno: i32::try_from(-neg_errno).unwrap_or(libc::EIO),
        }
    }
}

impl Drop for SmbDir {
    fn drop(&mut self) {
        // Log off politely; the tree goes with the client, inside the runtime.
        let tree = self.tree.take();
        shut_down(&self.rt, self.client.take(), async {}, tree);
        // Let the tasks the destructors spawned take their turn.
        self.rt.block_on(tokio::task::yield_now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_join_the_base_with_backslashes() {
        assert_eq!(join("t\\base", "a/b/f"), "t\\base\\a\\b\\f");
        assert_eq!(join("", "/a/"), "a");
        assert_eq!(join("t\\base", ""), "t\\base");
        assert_eq!(prefixes("t\\u\\v"), ["t", "t\\u", "t\\u\\v"]);
        assert!(prefixes("").is_empty());
    }

    #[test]
    fn now_is_a_filetime_after_2020() {
        // 2020-01-01 as a FILETIME: 13221830400 s after 1601.
        assert!(filetime_now() > 132_218_304_000_000_000);
    }

    #[test]
    fn a_dir_and_its_files_may_move_to_a_worker_thread() {
        fn send<T: Send>() {}
        send::<SmbDir>();
        send::<SmbFile>();
    }
}
