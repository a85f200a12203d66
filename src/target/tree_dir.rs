//! The directory a file set or tree lives in, as the file-operation engines and the
//! set's opener reach it: one trait, [`TreeDir`], with the calls they make on a name
//! relative to that directory, each answering 0 (or a count of bytes) or a negated
//! errno, as a completion does. [`LocalDir`] makes them relative to an open
//! directory descriptor (`openat`, `fstatat`, `unlinkat`: no path walk from `/`);
//! `target::nfs::tree_dir` makes them through libnfs on a connection of its own
//! (a path from the export's root each time), and an SMB share can be a third. The
//! trait lives in `target` so the engines (which read `target`) and the opener share
//! it; a worker gets its own [`TreeDir`] from the opened set, so nothing here is
//! shared between threads.

use crate::plan::engine_opts::StatCall;
use std::ffi::CStr;
use std::os::unix::io::RawFd;

/// A file a [`TreeDir`] opened: closed with [`TreeDir::close`] on the same directory
/// (not `Clone`, so it is closed once). The number is the directory's own (a
/// descriptor, or a handle's address).
#[derive(Debug, PartialEq, Eq)]
pub struct FileId(pub(crate) u64);

/// The calls on names inside one directory. Results: 0 (or bytes moved) on success,
/// a negated errno on failure.
pub trait TreeDir: Send {
    /// Creates `name`, failing with EEXIST when it exists (O_EXCL), then closes it.
    fn create(&self, name: &CStr) -> i64;
    /// stat (`lstat`, `statx` where the directory has them) of `name`.
    fn stat(&self, name: &CStr, how: StatCall) -> i64;
    /// Whether `name` exists (not following a last symbolic link).
    fn exists(&self, name: &CStr) -> bool;
    fn unlink(&self, name: &CStr) -> i64;
    /// Makes directory `name` with `mode` (where the server takes one).
    fn mkdir(&self, name: &CStr, mode: u32) -> i64;
    fn rmdir(&self, name: &CStr) -> i64;
    /// Whether `name` may be read (access(2) with R_OK).
    fn access(&self, name: &CStr) -> i64;
    /// Sets `name`'s modification time to now.
    fn touch(&self, name: &CStr) -> i64;
    /// Renames `from` to `to`, failing with EEXIST when `to` exists.
    fn rename_noreplace(&self, from: &CStr, to: &CStr) -> i64;
    /// Opens the existing file `name`, for reading (and writing with `write`).
    fn open(&self, name: &CStr, write: bool) -> Result<FileId, i64>;
    /// Creates `name` for writing, failing with EEXIST when it exists.
    fn create_new(&self, name: &CStr) -> Result<FileId, i64>;
    /// Reads into `buf` at `offset` of an open file: bytes read (0 at its end).
    fn read_at(&self, f: &FileId, buf: &mut [u8], offset: u64) -> i64;
    /// Writes `buf` at `offset` of an open file: bytes written.
    fn write_at(&self, f: &FileId, buf: &[u8], offset: u64) -> i64;
    fn close(&self, f: FileId) -> i64;
}

/// A local directory, reached through its open descriptor (held by the opened set,
/// which outlives every engine using it).
#[derive(Debug, Clone, Copy)]
pub struct LocalDir {
    pub fd: RawFd,
}

/// Runs `call` once (again on EINTR) and turns its result into 0 or a negated
/// errno.
pub fn complete(mut call: impl FnMut() -> libc::c_int) -> i64 {
    loop {
        if call() >= 0 {
            return 0;
        }
        let e = neg_errno();
        if e != -(libc::EINTR as i64) {
            return e;
        }
    }
}

/// The calling thread's errno, negated.
pub fn neg_errno() -> i64 {
    -(std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO) as i64)
}

impl LocalDir {
    fn open_flags(&self, name: &CStr, flags: i32, mode: u32) -> Result<FileId, i64> {
        loop {
            // SAFETY: fd is an open directory and name NUL-terminated.
            let fd = unsafe { libc::openat(self.fd, name.as_ptr(), flags, mode as libc::c_uint) };
            if fd >= 0 {
                return Ok(FileId(fd as u64));
            }
            let e = neg_errno();
            if e != -(libc::EINTR as i64) {
                return Err(e);
            }
        }
    }

    /// A byte count, or the negated errno of a failed read or write.
    fn bytes(n: isize) -> i64 {
        if n < 0 {
            neg_errno()
        } else {
            n as i64
        }
    }
}

impl TreeDir for LocalDir {
    fn create(&self, name: &CStr) -> i64 {
        let flags = libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC;
        match self.open_flags(name, flags, 0o600) {
            Ok(f) => {
                self.close(f);
                0
            }
            Err(e) => e,
        }
    }

    fn stat(&self, name: &CStr, how: StatCall) -> i64 {
        complete(|| match how {
            StatCall::Statx => {
                // SAFETY: statx is plain data; zeroed is valid and the call fills it.
                let mut stx: libc::statx = unsafe { std::mem::zeroed() };
                // SAFETY: fd is an open directory, name NUL-terminated, stx writable.
                unsafe { libc::statx(self.fd, name.as_ptr(), 0, libc::STATX_BASIC_STATS, &mut stx) }
            }
            _ => {
                let flags = match how == StatCall::Lstat {
                    true => libc::AT_SYMLINK_NOFOLLOW,
                    false => 0,
                };
                // SAFETY: stat is plain data; zeroed is valid and the call fills it.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                // SAFETY: fd is an open directory, name NUL-terminated, st writable.
                unsafe { libc::fstatat(self.fd, name.as_ptr(), &mut st, flags) }
            }
        })
    }

    fn exists(&self, name: &CStr) -> bool {
        // SAFETY: stat is plain data; zeroed is valid and fstatat fills it.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fd is an open directory and name NUL-terminated.
        unsafe { libc::fstatat(self.fd, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) == 0 }
    }

    // SAFETY (the calls below): fd is an open directory and each name
    // NUL-terminated; none of the calls keeps a pointer.
    fn unlink(&self, name: &CStr) -> i64 {
        complete(|| unsafe { libc::unlinkat(self.fd, name.as_ptr(), 0) })
    }

    fn mkdir(&self, name: &CStr, mode: u32) -> i64 {
        complete(|| unsafe { libc::mkdirat(self.fd, name.as_ptr(), mode as libc::mode_t) })
    }

    fn rmdir(&self, name: &CStr) -> i64 {
        complete(|| unsafe { libc::unlinkat(self.fd, name.as_ptr(), libc::AT_REMOVEDIR) })
    }

    fn access(&self, name: &CStr) -> i64 {
        complete(|| unsafe { libc::faccessat(self.fd, name.as_ptr(), libc::R_OK, 0) })
    }

    fn touch(&self, name: &CStr) -> i64 {
        let omit = libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        };
        let now = libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_NOW,
        };
        let times = [omit, now];
        // SAFETY: as above; times is two timespecs, read only.
        complete(|| unsafe { libc::utimensat(self.fd, name.as_ptr(), times.as_ptr(), 0) })
    }

    fn rename_noreplace(&self, from: &CStr, to: &CStr) -> i64 {
        let (d, f, t) = (self.fd, from.as_ptr(), to.as_ptr());
        // SAFETY: as above.
        complete(|| unsafe { libc::renameat2(d, f, d, t, libc::RENAME_NOREPLACE) })
    }

    fn open(&self, name: &CStr, write: bool) -> Result<FileId, i64> {
        let access = if write { libc::O_RDWR } else { libc::O_RDONLY };
        self.open_flags(name, access | libc::O_CLOEXEC, 0)
    }

    fn create_new(&self, name: &CStr) -> Result<FileId, i64> {
        let flags = libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC;
        // 0o666 less the umask, as std's File::create makes a file.
        self.open_flags(name, flags, 0o666)
    }

    fn read_at(&self, f: &FileId, buf: &mut [u8], offset: u64) -> i64 {
        // SAFETY: f is a descriptor this directory opened and has not closed; buf is
        // writable for its length.
        Self::bytes(unsafe {
            libc::pread(
                f.0 as RawFd,
                buf.as_mut_ptr().cast(),
                buf.len(),
                offset as libc::off_t,
            )
        })
    }

    fn write_at(&self, f: &FileId, buf: &[u8], offset: u64) -> i64 {
        // SAFETY: as in read_at; buf is readable for its length.
        Self::bytes(unsafe {
            libc::pwrite(
                f.0 as RawFd,
                buf.as_ptr().cast(),
                buf.len(),
                offset as libc::off_t,
            )
        })
    }

    fn close(&self, f: FileId) -> i64 {
        // SAFETY: the descriptor is this directory's, and FileId (not Clone) is
        // consumed, so it is closed once. Not retried on EINTR: Linux has released
        // the descriptor by then.
        match unsafe { libc::close(f.0 as RawFd) } {
            0 => 0,
            _ => neg_errno(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::io::AsRawFd;

    #[test]
    fn local_calls_answer_as_the_kernel_does() {
        let d = tempfile::tempdir().unwrap();
        let fd = std::fs::File::open(d.path()).unwrap();
        let dir = LocalDir { fd: fd.as_raw_fd() };
        let eexist = -(libc::EEXIST as i64);
        assert_eq!(dir.create(c"a"), 0);
        assert_eq!(dir.create(c"a"), eexist, "O_EXCL");
        let f = dir.create_new(c"b").unwrap();
        assert_eq!(dir.write_at(&f, b"hello", 3), 5);
        assert_eq!(dir.close(f), 0);
        let f = dir.open(c"b", false).unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(dir.read_at(&f, &mut buf, 3), 5);
        assert_eq!(&buf[..5], b"hello");
        assert_eq!(dir.close(f), 0);
        assert_eq!(dir.rename_noreplace(c"a", c"b"), eexist, "no replace");
        assert_eq!(dir.rename_noreplace(c"a", c"c"), 0);
        assert!(!dir.exists(c"a") && dir.exists(c"c"));
        assert_eq!(dir.stat(c"c", StatCall::Statx), 0);
        assert_eq!((dir.access(c"c"), dir.touch(c"c")), (0, 0));
        assert_eq!(dir.mkdir(c"sub", 0o700), 0);
        assert_eq!(dir.rmdir(c"sub"), 0);
        assert_eq!(dir.unlink(c"c"), 0);
        assert_eq!(dir.unlink(c"c"), -(libc::ENOENT as i64));
    }
}
