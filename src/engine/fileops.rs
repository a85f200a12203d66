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
//! On a directory tree (`tree:` targets, vdbench's fsd) a create that finds its file
//! already there, or a delete that finds it gone, moves on to the next file of the
//! tree (wrapping) until one serves — vdbench looks for a file that does not exist
//! to create and one that does to delete — so creates and deletes can run side by
//! side for a duration. The I/O's time includes those looks; a tree with no file
//! left to create (or delete) completes the I/O with EEXIST (ENOENT).

use super::inline::{InlineEngine, PerformIo};
use super::{neg_errno, now_ns, IoRequest, Targets};
use crate::plan::engine_opts::StatCall;
use crate::plan::model::EngineKind;
use crate::target::Backing;
use std::ffi::CStr;
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
}

impl FileOpIo {
    /// The directory, the names, the index of the request's file, and whether the
    /// set is a tree.
    fn names_of(&self, req: &IoRequest) -> Option<(RawFd, &[std::ffi::CString], usize, bool)> {
        let set = self.sets.get(req.target as usize)?.as_ref()?;
        let Backing::Files(f) = &set.targets[set.index].backing else {
            return None;
        };
        let i = (req.offset / (req.len.max(1) as u64)) as usize;
        (i < f.names.len()).then_some((set.dir, f.names.as_slice(), i, f.spec.tree.is_some()))
    }
}

/// The call on `name` in `dir`.
fn call(op: FileOp, dir: RawFd, name: &CStr) -> i64 {
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
    }
}

/// On a tree: the errno that sends a create or delete on to the next file.
fn moves_on(op: FileOp) -> Option<i64> {
    match op {
        FileOp::CreateFile => Some(-(libc::EEXIST as i64)),
        FileOp::DeleteFile => Some(-(libc::ENOENT as i64)),
        _ => None,
    }
}

/// Runs `call` once (again on EINTR) and turns its result into a completion result.
fn complete(mut call: impl FnMut() -> libc::c_int) -> i64 {
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
        let Some((dir, names, i, tree)) = self.names_of(req) else {
            return (-(libc::EINVAL as i64), 0);
        };
        let mut result = call(self.op, dir, &names[i]);
        if let (true, Some(skip)) = (tree, moves_on(self.op)) {
            for k in 1..names.len() {
                if result != skip {
                    break;
                }
                result = call(self.op, dir, &names[(i + k) % names.len()]);
            }
        }
        (result, now_ns())
    }
}

/// The file-operation engines (one body, the call chosen by [`FileOp`]).
pub type FileOpEngine = InlineEngine<FileOpIo>;

impl FileOpEngine {
    /// An engine making `engine`'s operation on the `files:` targets among `targets`.
    pub fn new(targets: &Targets, engine: EngineKind, op: FileOp, capacity: usize) -> Self {
        let sets = targets
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
        InlineEngine::with(
            FileOpIo {
                op,
                sets,
                name: engine.name(),
            },
            capacity,
        )
    }
}
