//! The file-operation engines: each "I/O" is one file-system call on one file of a
//! `files:` target — create (`open(O_CREAT)` then close), stat (`fstatat`, `lstat`
//! semantics or `statx`), delete (`unlinkat`), and their directory forms (`mkdirat`,
//! stat, `unlinkat(AT_REMOVEDIR)`) — timed like any I/O, so latency percentiles and
//! operations per second are those of the metadata path (fio's filecreate, filestat,
//! filedelete, dircreate, dirstat, dirdelete). The request's offset names the file:
//! `offset / len` is its index in the set. Names are resolved relative to the set's
//! open directory, so no operation walks the path from the root; fio names each file
//! by its full path, which adds that walk to every call.
//!
//! An operation moves no data: a successful one completes with 0 bytes, so byte
//! rates stay 0 and the I/O counts are the operations. Creating a file that exists
//! fails (`O_EXCL`), so a count of creates is a count of new files.
//!
//! vdbench's other file-system operations are engines here too: open (timed up to
//! the open; the close follows untimed), close (of a file the engine opened, untimed,
//! right after its previous close), setattr (the modification time set to now),
//! access, and on trees copy and move (an existing file copied, or renamed, into a
//! name of the tree that is missing).
//!
//! On a directory tree (`tree:` targets, vdbench's fsd) an operation that finds
//! nothing to act on at its name moves on to the next name of the tree (wrapping)
//! until one serves ([`tree`]) — vdbench looks for a file that does not exist to
//! create and one that does to delete, read or stat — so operations can run side by
//! side for a duration; the directory engines act on the tree's directories. The
//! I/O's time includes those looks; when no name serves, the request completes with
//! [`super::NOTHING_TO_DO`], a counted skip (vdbench waits for one), not an error.

mod tree;

use super::inline::{InlineEngine, PerformIo};
use super::{neg_errno, now_ns, IoRequest, Targets};
use crate::plan::engine_opts::StatCall;
use crate::plan::model::EngineKind;
use crate::target::Backing;
use std::ffi::{CStr, CString};
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};
use std::os::unix::io::RawFd;

/// The call one engine makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    CreateFile,
    StatFile(StatCall),
    DeleteFile,
    MakeDir,
    StatDir(StatCall),
    RemoveDir,
    Open,
    Close,
    SetAttr,
    Access,
    Copy,
    Move,
}

impl FileOp {
    /// The operation of a file-operation engine (`None` for any other engine).
    pub fn of(engine: EngineKind, stat: StatCall) -> Option<FileOp> {
        Some(match engine {
            EngineKind::FileCreate => FileOp::CreateFile,
            EngineKind::FileStat => FileOp::StatFile(stat),
            EngineKind::FileDelete => FileOp::DeleteFile,
            EngineKind::DirCreate => FileOp::MakeDir,
            EngineKind::DirStat => FileOp::StatDir(stat),
            EngineKind::DirDelete => FileOp::RemoveDir,
            EngineKind::FileOpen => FileOp::Open,
            EngineKind::FileClose => FileOp::Close,
            EngineKind::FileSetattr => FileOp::SetAttr,
            EngineKind::FileAccess => FileOp::Access,
            EngineKind::FileCopy => FileOp::Copy,
            EngineKind::FileMove => FileOp::Move,
            _ => return None,
        })
    }
}

/// One target's directory and names, as the engine reaches them.
struct Set {
    dir: RawFd,
    targets: Targets,
    index: usize,
}

/// Performs one file-system call per request.
pub struct FileOpIo {
    op: FileOp,
    sets: Vec<Option<Set>>,
    name: &'static str,
    /// copy's buffer: the file goes through it as through an application's.
    buf: Vec<u8>,
    /// close's next file, opened (untimed) right after the previous close.
    pending: Option<OwnedFd>,
}

/// Where one request acts: the set's directory, its names, the request's index.
pub(super) struct At<'a> {
    pub dir: RawFd,
    pub names: &'a [CString],
    /// A tree's directories (empty for a set that is no tree).
    pub dirs: &'a [CString],
    pub i: usize,
    pub tree: bool,
}

/// Where `req` acts, among the engine's `sets`.
fn at_of<'a>(sets: &'a [Option<Set>], req: &IoRequest) -> Option<At<'a>> {
    {
        let set = sets.get(req.target as usize)?.as_ref()?;
        let Backing::Files(f) = &set.targets[set.index].backing else {
            return None;
        };
        let i = (req.offset / (req.len.max(1) as u64)) as usize;
        (i < f.names.len()).then_some(At {
            dir: set.dir,
            names: &f.names,
            dirs: &f.dirs,
            i,
            tree: f.spec.tree.is_some(),
        })
    }
}

impl FileOpIo {
    /// close: the file opened after the previous close (or, the first time, one
    /// opened now: that close's time includes an open), then the next one opened
    /// once the time is taken.
    fn close(&mut self, req: &IoRequest) -> (i64, u64) {
        let Some(at) = at_of(&self.sets, req) else {
            return (-(libc::EINVAL as i64), 0);
        };
        let fd = match self.pending.take() {
            Some(fd) => fd,
            None => match tree::open_existing(&at, at.i) {
                Some(fd) => fd,
                None => return (super::NOTHING_TO_DO, now_ns()),
            },
        };
        // SAFETY: the descriptor is ours (taken from an OwnedFd) and closed once.
        // close is not retried on EINTR: Linux has released the descriptor by then.
        let r = unsafe { libc::close(fd.into_raw_fd()) };
        let result = if r == 0 { 0 } else { neg_errno() };
        let done = now_ns();
        self.pending = tree::open_existing(&at, at.i + 1);
        (result, done)
    }
}

/// The call on `name` in `dir`.
pub(super) fn call(op: FileOp, dir: RawFd, name: &CStr) -> i64 {
    let p = name.as_ptr();
    match op {
        FileOp::CreateFile => {
            let flags = libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC;
            let mut fd = -1;
            // SAFETY: dir is an open directory and p a NUL-terminated name.
            let r = complete(|| {
                fd = unsafe { libc::openat(dir, p, flags, 0o600 as libc::c_uint) };
                fd
            });
            if fd >= 0 {
                // SAFETY: fd was opened just above and is closed once, here.
                unsafe { libc::close(fd) };
            }
            r
        }
        FileOp::StatFile(how) | FileOp::StatDir(how) => stat_at(dir, name, how),
        // SAFETY (the four calls below): dir is an open directory and p a
        // NUL-terminated name; none of them keeps either pointer.
        FileOp::DeleteFile => complete(|| unsafe { libc::unlinkat(dir, p, 0) }),
        FileOp::MakeDir => complete(|| unsafe { libc::mkdirat(dir, p, 0o700) }),
        FileOp::RemoveDir => complete(|| unsafe { libc::unlinkat(dir, p, libc::AT_REMOVEDIR) }),
        FileOp::Access => complete(|| unsafe { libc::faccessat(dir, p, libc::R_OK, 0) }),
        FileOp::SetAttr => {
            let times = [
                libc::timespec {
                    tv_sec: 0,
                    tv_nsec: libc::UTIME_OMIT,
                },
                libc::timespec {
                    tv_sec: 0,
                    tv_nsec: libc::UTIME_NOW,
                },
            ];
            // SAFETY: as above; times is two timespecs, read only.
            complete(|| unsafe { libc::utimensat(dir, p, times.as_ptr(), 0) })
        }
        // open, close, copy and move are made by their own functions.
        FileOp::Open | FileOp::Close | FileOp::Copy | FileOp::Move => -(libc::EINVAL as i64),
    }
}

/// open: the time is taken once the file is open; the close comes after it.
pub(super) fn open_timed(dir: RawFd, name: &CStr) -> (i64, u64) {
    // SAFETY: dir is an open directory and name NUL-terminated.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    let result = if fd >= 0 { 0 } else { neg_errno() };
    let done = now_ns();
    if fd >= 0 {
        // SAFETY: fd was opened just above and is owned (and closed) here only.
        drop(unsafe { OwnedFd::from_raw_fd(fd) });
    }
    (result, done)
}

/// Runs `call` once (again on EINTR) and turns its result into a completion result.
pub(super) fn complete(mut call: impl FnMut() -> libc::c_int) -> i64 {
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

/// stat, lstat or statx of `name` in `dir`.
fn stat_at(dir: RawFd, name: &CStr, how: StatCall) -> i64 {
    complete(|| match how {
        StatCall::Statx => {
            // SAFETY: statx is plain data; zeroed is valid and the call fills it.
            let mut stx: libc::statx = unsafe { std::mem::zeroed() };
            // SAFETY: dir is an open directory, name NUL-terminated, stx writable.
            unsafe { libc::statx(dir, name.as_ptr(), 0, libc::STATX_BASIC_STATS, &mut stx) }
        }
        _ => {
            let flags = if how == StatCall::Lstat {
                libc::AT_SYMLINK_NOFOLLOW
            } else {
                0
            };
            // SAFETY: stat is plain data; zeroed is valid and the call fills it.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: dir is an open directory, name NUL-terminated, st writable.
            unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, flags) }
        }
    })
}

impl PerformIo for FileOpIo {
    const NAME: &'static str = "filecreate";

    fn name(&self) -> &'static str {
        self.name
    }

    fn perform(&mut self, req: &IoRequest) -> (i64, u64) {
        if self.op == FileOp::Close {
            return self.close(req);
        }
        let op = self.op;
        let Some(at) = at_of(&self.sets, req) else {
            return (-(libc::EINVAL as i64), 0);
        };
        let result = match op {
            FileOp::Copy => tree::copy(&at, &mut self.buf),
            FileOp::Move => tree::rename(&at),
            _ if at.tree => match tree::serve(op, &at) {
                tree::Served::Timed(r, done) => return (r, done),
                tree::Served::Done(r) => r,
            },
            FileOp::Open => return open_timed(at.dir, &at.names[at.i]),
            _ => call(op, at.dir, &at.names[at.i]),
        };
        (result, now_ns())
    }
}

/// copy's buffer (vdbench copies through its own buffers, a transfer at a time).
const COPY_BUF_BYTES: usize = 128 << 10;

/// The file-operation engines (one body, the call chosen by [`FileOp`]).
pub type FileOpEngine = InlineEngine<FileOpIo>;

impl FileOpEngine {
    /// An engine making `engine`'s operation on the `files:` targets among `targets`.
    pub fn new(targets: &Targets, engine: EngineKind, op: FileOp, capacity: usize) -> Self {
        let sets: Vec<Option<Set>> = targets
            .iter()
            .enumerate()
            .map(|(index, t)| match &t.backing {
                Backing::Files(f) => Some(Set {
                    dir: f.dir_fd(),
                    targets: targets.clone(),
                    index,
                }),
                _ => None,
            })
            .collect();
        // close's first file is opened here, before the run, so no close's time
        // includes an open.
        let first = (op == FileOp::Close)
            .then(|| sets.iter().flatten().next())
            .flatten()
            .and_then(|set| {
                let Backing::Files(f) = &set.targets[set.index].backing else {
                    return None;
                };
                let at = At {
                    dir: set.dir,
                    names: &f.names,
                    dirs: &f.dirs,
                    i: 0,
                    tree: f.spec.tree.is_some(),
                };
                tree::open_existing(&at, 0)
            });
        InlineEngine::with(
            FileOpIo {
                op,
                sets,
                name: engine.name(),
                buf: if op == FileOp::Copy {
                    vec![0u8; COPY_BUF_BYTES]
                } else {
                    Vec::new()
                },
                pending: first,
            },
            capacity,
        )
    }
}
