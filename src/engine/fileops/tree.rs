//! The file operations on a directory tree (`tree:` targets): each looks, from the
//! request's name on (wrapping), for a name it can act on — a missing file to
//! create, a present one to delete, open or stat, a missing directory whose parent
//! exists to make, an empty one to remove — as vdbench's operations look for a file
//! or directory in the right state. Looking is part of the operation's time; a tree
//! with no name to act on answers [`NOTHING_TO_DO`]. copy and move take an existing
//! file as the source and the first missing name after it as the destination.

use super::{call, complete, neg_errno, At, FileOp};
use crate::engine::NOTHING_TO_DO;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// What [`serve`] did: a result with its own completion time, or one the caller
/// stamps.
pub(super) enum Served {
    Timed(i64, u64),
    Done(i64),
}

/// The errnos that mean "not this name, look at the next" for `op`.
fn moves_on(op: FileOp) -> &'static [i32] {
    match op {
        // ENOENT: the file's directory was removed (rmdir); vdbench passes it over.
        FileOp::CreateFile => &[libc::EEXIST, libc::ENOENT],
        FileOp::MakeDir => &[libc::EEXIST, libc::ENOENT],
        FileOp::RemoveDir => &[libc::ENOENT, libc::ENOTEMPTY, libc::EEXIST],
        FileOp::StatDir(_) => &[],
        _ => &[libc::ENOENT],
    }
}

/// `op` on the first name from the request's that serves: files, or the tree's
/// directories for the directory operations.
pub(super) fn serve(op: FileOp, at: &At) -> Served {
    let dirs = matches!(op, FileOp::MakeDir | FileOp::RemoveDir | FileOp::StatDir(_));
    let names = if dirs { at.dirs } else { at.names };
    if names.is_empty() {
        return Served::Done(NOTHING_TO_DO);
    }
    let skip = moves_on(op);
    for k in 0..names.len() {
        let name = &names[(at.i + k) % names.len()];
        let (r, done) = match op {
            FileOp::Open => super::open_timed(at.dir, name),
            _ => (call(op, at.dir, name), 0),
        };
        if r >= 0 || !skip.iter().any(|&e| r == -i64::from(e)) {
            return if done == 0 {
                Served::Done(r)
            } else {
                Served::Timed(r, done)
            };
        }
    }
    Served::Done(NOTHING_TO_DO)
}

/// Opens `flags` on the first name from `from` on that opens, passing over those
/// failing with an errno in `skip`; `Err` with any other errno.
fn open_first(
    at: &At,
    from: usize,
    flags: i32,
    skip: &[i32],
) -> Result<Option<(usize, OwnedFd)>, i64> {
    let n = at.names.len();
    for k in 0..n {
        let j = (from + k) % n;
        // SAFETY: at.dir is an open directory and the name NUL-terminated.
        let fd =
            unsafe { libc::openat(at.dir, at.names[j].as_ptr(), flags, 0o600 as libc::c_uint) };
        if fd >= 0 {
            // SAFETY: fd was just opened and is owned here only.
            return Ok(Some((j, unsafe { OwnedFd::from_raw_fd(fd) })));
        }
        let e = neg_errno();
        if !skip.iter().any(|&x| e == -i64::from(x)) {
            return Err(e);
        }
    }
    Ok(None)
}

/// A file of the tree that exists, opened for reading, from name `from` on.
pub(super) fn open_existing(at: &At, from: usize) -> Option<OwnedFd> {
    let flags = libc::O_RDONLY | libc::O_CLOEXEC;
    open_first(at, from, flags, &[libc::ENOENT])
        .ok()
        .flatten()
        .map(|(_, fd)| fd)
}

/// copy: an existing file read through `buf` and written to the first missing name
/// after it.
pub(super) fn copy(at: &At, buf: &mut [u8]) -> i64 {
    if !at.tree {
        return -(libc::EINVAL as i64);
    }
    let read = libc::O_RDONLY | libc::O_CLOEXEC;
    let (s, src) = match open_first(at, at.i, read, &[libc::ENOENT]) {
        Ok(Some(x)) => x,
        Ok(None) => return NOTHING_TO_DO,
        Err(e) => return e,
    };
    let create = libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC;
    let dst = match open_first(at, s + 1, create, &[libc::EEXIST, libc::ENOENT]) {
        Ok(Some((d, _))) if d == s => return NOTHING_TO_DO,
        Ok(Some((_, fd))) => fd,
        Ok(None) => return NOTHING_TO_DO,
        Err(e) => return e,
    };
    loop {
        // SAFETY: src is open for reading and buf writable for its length.
        let got = unsafe { libc::read(src.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        match got {
            0 => return 0,
            n if n < 0 => return neg_errno(),
            n => {
                let mut off = 0usize;
                while off < n as usize {
                    let chunk = &buf[off..n as usize];
                    // SAFETY: dst is open for writing and chunk readable.
                    let w =
                        unsafe { libc::write(dst.as_raw_fd(), chunk.as_ptr().cast(), chunk.len()) };
                    if w < 0 {
                        return neg_errno();
                    }
                    off += w as usize;
                }
            }
        }
    }
}

/// Whether `name` exists in `dir` (a file or anything else).
fn exists(dir: i32, name: &CString) -> bool {
    // SAFETY: stat is plain data; zeroed is valid and fstatat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: dir is an open directory and name NUL-terminated.
    unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) == 0 }
}

/// move: an existing file renamed (renameat2, RENAME_NOREPLACE) to the first name
/// after it that takes it: one that is missing, in a directory that exists.
pub(super) fn rename(at: &At) -> i64 {
    if !at.tree {
        return -(libc::EINVAL as i64);
    }
    let n = at.names.len();
    let Some(s) = (0..n)
        .map(|k| (at.i + k) % n)
        .find(|&j| exists(at.dir, &at.names[j]))
    else {
        return NOTHING_TO_DO;
    };
    let from = at.names[s].as_ptr();
    for k in 1..n {
        let to = at.names[(s + k) % n].as_ptr();
        // SAFETY: at.dir is an open directory and both names NUL-terminated.
        let r = complete(|| unsafe {
            libc::renameat2(at.dir, from, at.dir, to, libc::RENAME_NOREPLACE)
        });
        // EEXIST: taken; ENOENT: its directory is gone (or, if another worker took
        // the source meanwhile, every name answers so and the request is a skip).
        if r != -i64::from(libc::EEXIST) && r != -i64::from(libc::ENOENT) {
            return r;
        }
    }
    NOTHING_TO_DO
}
