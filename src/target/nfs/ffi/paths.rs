//! libnfs's blocking calls on paths, for directory trees on an export: a
//! [`Client`] mounted with no file open ([`Client::mount_dir`]), then mkdir, rmdir,
//! unlink, stat, access, utimes, rename, create and open by path (each path from the
//! export's root), and pread/pwrite/close on the handles they open. Each call is one
//! round trip (after libnfs's LOOKUPs of the path's components), answered as 0 or
//! bytes, or a negated errno, as libnfs's synchronous calls answer.

use super::{Client, FileHandle, NfsError, OpenHow, Stat64};
use std::ffi::{c_int, c_void, CStr};

/// How long a blocking path call waits for the server's reply.
const CALL_TIMEOUT_MS: c_int = 10_000;

/// How many times libnfs connects a lost connection again before failing.
const RECONNECTS: c_int = 10;

/// A file a path call opened: libnfs's handle, owned by the caller until
/// [`Client::close_file`].
pub struct PathFile(*mut FileHandle);

// SAFETY: the handle is a pointer into its Client's context, which moves between
// threads with it; it is used only through that Client.
unsafe impl Send for PathFile {}

impl PathFile {
    /// The handle as a number (the tree's `FileId`).
    pub fn into_raw(self) -> u64 {
        self.0 as usize as u64
    }

    /// A handle from [`PathFile::into_raw`].
    ///
    /// # Safety
    /// `raw` must come from `into_raw` of a handle of the same Client, not closed.
    pub unsafe fn from_raw(raw: u64) -> PathFile {
        PathFile(raw as usize as *mut FileHandle)
    }
}

/// libnfs's answer: 0 or more as it is, a negative one as a negated errno (-EIO
/// when libnfs failed before sending, its -1).
fn answer(r: c_int) -> i64 {
    match r {
        -1 => -(libc::EIO as i64),
        r => r as i64,
    }
}

impl Client {
    /// Mounts the export `url` names (blocking), opening nothing: the URL's last
    /// component is a directory whose paths the calls below are given.
    pub fn mount_dir(url: &str) -> Result<Client, NfsError> {
        let how = OpenHow {
            write: false,
            create: false,
        };
        let c = Client::mounted(url, how)?;
        // SAFETY: a valid context. A blocking call waits for its reply at most
        // this long (-ETIMEDOUT after), so a server that stops answering fails the
        // worker's request instead of holding the worker for ever.
        unsafe { (c.lib.set_timeout)(c.ctx, CALL_TIMEOUT_MS) };
        // SAFETY: a valid context. Unlike the asynchronous engine, which connects
        // a lost connection again itself, a blocking caller has no loop to do it
        // in: libnfs reconnects (and sends the calls in flight again) itself.
        unsafe { (c.lib.set_autoreconnect)(c.ctx, RECONNECTS) };
        Ok(c)
    }

    /// The URL's path after the export (from its root, starting with '/').
    pub fn url_path(&self) -> String {
        self.handle.file.to_string_lossy().into_owned()
    }

    // SAFETY (each call below): a valid, mounted context and NUL-terminated paths,
    // which libnfs reads during the call only.
    pub fn mkdir(&self, path: &CStr) -> i64 {
        answer(unsafe { (self.lib.mkdir)(self.ctx, path.as_ptr()) })
    }

    pub fn rmdir(&self, path: &CStr) -> i64 {
        answer(unsafe { (self.lib.rmdir)(self.ctx, path.as_ptr()) })
    }

    pub fn unlink(&self, path: &CStr) -> i64 {
        answer(unsafe { (self.lib.unlink)(self.ctx, path.as_ptr()) })
    }

    /// GETATTR of `path` (following a last symbolic link): 0, or a negated errno.
    pub fn stat(&self, path: &CStr) -> i64 {
        let mut st = Stat64::default();
        // SAFETY: as above; st has libnfs.h's layout and is written during the call.
        answer(unsafe { (self.lib.stat64)(self.ctx, path.as_ptr(), &mut st) })
    }

    /// ACCESS of `path` for `mode` (R_OK, W_OK, X_OK).
    pub fn access(&self, path: &CStr, mode: i32) -> i64 {
        answer(unsafe { (self.lib.access)(self.ctx, path.as_ptr(), mode) })
    }

    /// SETATTR of `path`'s access and modification times to this host's clock
    /// (libnfs sets both from the times given).
    pub fn touch(&self, path: &CStr) -> i64 {
        let mut now = libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        };
        // SAFETY: now is writable; no time zone asked.
        unsafe { libc::gettimeofday(&mut now, std::ptr::null_mut()) };
        let mut times = [now, now];
        // SAFETY: as above; times is the two timevals libnfs reads.
        answer(unsafe { (self.lib.utimes)(self.ctx, path.as_ptr(), times.as_mut_ptr()) })
    }

    /// RENAME, which replaces an existing `to` (NFS has no no-replace form).
    pub fn rename(&self, from: &CStr, to: &CStr) -> i64 {
        answer(unsafe { (self.lib.rename)(self.ctx, from.as_ptr(), to.as_ptr()) })
    }

    /// CREATE of `path` (GUARDED under O_EXCL: EEXIST when it exists), opened with
    /// `flags`.
    pub fn create_file(&self, path: &CStr, flags: i32, mode: i32) -> Result<PathFile, i64> {
        let mut fh = std::ptr::null_mut();
        // SAFETY: as above; fh is written on success.
        let r = unsafe { (self.lib.create)(self.ctx, path.as_ptr(), flags, mode, &mut fh) };
        match answer(r) {
            0 if !fh.is_null() => Ok(PathFile(fh)),
            0 => Err(-(libc::EIO as i64)),
            e => Err(e),
        }
    }

    /// Opens the existing `path` with `flags` (O_RDONLY or O_RDWR).
    pub fn open_file(&self, path: &CStr, flags: i32) -> Result<PathFile, i64> {
        let mut fh = std::ptr::null_mut();
        // SAFETY: as above; fh is written on success.
        let r = unsafe { (self.lib.open)(self.ctx, path.as_ptr(), flags, &mut fh) };
        match answer(r) {
            0 if !fh.is_null() => Ok(PathFile(fh)),
            0 => Err(-(libc::EIO as i64)),
            e => Err(e),
        }
    }

    /// READ of up to `buf.len()` bytes at `offset`: bytes read.
    pub fn read_file(&self, f: &PathFile, buf: &mut [u8], offset: u64) -> i64 {
        let (p, n) = (buf.as_mut_ptr() as *mut c_void, buf.len() as u64);
        // SAFETY: as above; f is an open handle of this context, buf writable.
        Self::transfer_answer(unsafe { (self.lib.pread)(self.ctx, f.0, offset, n, p) })
    }

    /// WRITE of `buf` at `offset`: bytes written.
    pub fn write_file(&self, f: &PathFile, buf: &[u8], offset: u64) -> i64 {
        let (p, n) = (buf.as_ptr() as *const c_void, buf.len() as u64);
        // SAFETY: as above; f is an open handle of this context, buf readable.
        Self::transfer_answer(unsafe { (self.lib.pwrite)(self.ctx, f.0, offset, n, p) })
    }

    /// A read's or write's answer. libnfs 4.0 splits a transfer into READ/WRITE
    /// calls of the server's size and answers one that failed with -EFAULT, the
    /// server's status lost (its error text is not kept either): an I/O error,
    /// which the caller may look into by path (a file removed under an open handle
    /// answers so). The handle itself is not asked again: a GETATTR of a handle
    /// whose file was removed went unanswered by NFS-Ganesha 4.3 at times.
    fn transfer_answer(r: c_int) -> i64 {
        match r {
            r if r == -libc::EFAULT => -(libc::EIO as i64),
            r => answer(r),
        }
    }

    /// Closes a handle (libnfs frees it).
    pub fn close_file(&self, f: PathFile) -> i64 {
        // SAFETY: an open handle of this context, consumed here, so closed once.
        answer(unsafe { (self.lib.close)(self.ctx, f.0) })
    }
}
