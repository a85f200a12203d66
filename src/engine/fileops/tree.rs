//! The file operations on a directory tree (`tree:` targets): each looks, from the
//! request's name on (wrapping), for a name it can act on — a missing file to
//! create, a present one to delete, open or stat, a missing directory whose parent
//! exists to make, an empty one to remove — as vdbench's operations look for a file
//! or directory in the right state. Looking is part of the operation's time; a tree
//! with no name to act on answers [`NOTHING_TO_DO`]. copy and move take an existing
//! file as the source and the first missing name after it as the destination.

use super::{call, At, FileOp};
use crate::engine::NOTHING_TO_DO;
use crate::target::tree_dir::{FileId, TreeDir};
use std::ffi::CStr;

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

/// Opens, with `open`, the first name from `from` on that opens, passing over
/// those failing with an errno in `skip`; `Err` with any other errno.
fn open_first(
    at: &At,
    from: usize,
    open: impl Fn(&CStr) -> Result<FileId, i64>,
    skip: &[i32],
) -> Result<Option<(usize, FileId)>, i64> {
    let n = at.names.len();
    for k in 0..n {
        let j = (from + k) % n;
        match open(&at.names[j]) {
            Ok(f) => return Ok(Some((j, f))),
            Err(e) if skip.iter().any(|&x| e == -i64::from(x)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// A file of the tree that exists, opened for reading, from name `from` on.
pub(super) fn open_existing(at: &At, from: usize) -> Option<FileId> {
    open_first(at, from, |n| at.dir.open(n, false), &[libc::ENOENT])
        .ok()
        .flatten()
        .map(|(_, f)| f)
}

/// copy: an existing file read through `buf` and written to the first missing name
/// after it.
pub(super) fn copy(at: &At, buf: &mut [u8]) -> i64 {
    if !at.tree {
        return -(libc::EINVAL as i64);
    }
    let dir = at.dir;
    let (s, src) = match open_first(at, at.i, |n| dir.open(n, false), &[libc::ENOENT]) {
        Ok(Some(x)) => x,
        Ok(None) => return NOTHING_TO_DO,
        Err(e) => return e,
    };
    let taken = [libc::EEXIST, libc::ENOENT];
    let dst = match open_first(at, s + 1, |n| dir.create_new(n), &taken) {
        Ok(Some((d, f))) if d == s => {
            // Every other name exists: the source's own name is no destination.
            dir.close(f);
            Err(NOTHING_TO_DO)
        }
        Ok(Some((_, f))) => Ok(f),
        Ok(None) => Err(NOTHING_TO_DO),
        Err(e) => Err(e),
    };
    let r = match &dst {
        Ok(d) => copy_bytes(dir, &src, d, buf),
        Err(e) => *e,
    };
    dir.close(src);
    if let Ok(d) = dst {
        dir.close(d);
    }
    r
}

/// Copies `src` into `dst` through `buf`, from the start: 0, or a negated errno.
fn copy_bytes(dir: &dyn TreeDir, src: &FileId, dst: &FileId, buf: &mut [u8]) -> i64 {
    let mut at = 0u64;
    loop {
        let got = dir.read_at(src, buf, at);
        if got <= 0 {
            return got;
        }
        let mut off = 0usize;
        while off < got as usize {
            let w = dir.write_at(dst, &buf[off..got as usize], at + off as u64);
            if w < 0 {
                return w;
            }
            off += w as usize;
        }
        at += got as u64;
    }
}

/// move: an existing file renamed (without replacing: renameat2's
/// RENAME_NOREPLACE locally) to the first name after it that takes it: one that is
/// missing, in a directory that exists.
pub(super) fn rename(at: &At) -> i64 {
    if !at.tree {
        return -(libc::EINVAL as i64);
    }
    let n = at.names.len();
    let Some(s) = (0..n)
        .map(|k| (at.i + k) % n)
        .find(|&j| at.dir.exists(&at.names[j]))
    else {
        return NOTHING_TO_DO;
    };
    for k in 1..n {
        let r = at
            .dir
            .rename_noreplace(&at.names[s], &at.names[(s + k) % n]);
        // EEXIST: taken; ENOENT: its directory is gone (or, if another worker took
        // the source meanwhile, every name answers so and the request is a skip).
        if r != -i64::from(libc::EEXIST) && r != -i64::from(libc::ENOENT) {
            return r;
        }
    }
    NOTHING_TO_DO
}
