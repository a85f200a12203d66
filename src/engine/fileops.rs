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
use super::{now_ns, EngineError, IoRequest, Targets};
use crate::plan::engine_opts::StatCall;
use crate::plan::model::EngineKind;
use crate::target::tree_dir::{FileId, TreeDir};
use crate::target::Backing;
use std::ffi::{CStr, CString};

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

/// One target's directory (the engine's own: a descriptor, or its own connection
/// to the server) and names, as the engine reaches them.
struct Set {
    dir: Box<dyn TreeDir>,
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
    /// close's next file (with its target), opened (untimed) right after the
    /// previous close.
    pending: Option<(usize, FileId)>,
}

/// Where one request acts: the set's directory, its names, the request's index.
pub(super) struct At<'a> {
    pub dir: &'a dyn TreeDir,
    pub names: &'a [CString],
    /// A tree's directories (empty for a set that is no tree).
    pub dirs: &'a [CString],
    pub i: usize,
    pub tree: bool,
}

/// Where file `i` of target `target` is, among the engine's `sets`.
fn at_index(sets: &[Option<Set>], target: usize, i: usize) -> Option<At<'_>> {
    let set = sets.get(target)?.as_ref()?;
    let Backing::Files(f) = &set.targets[set.index].backing else {
        return None;
    };
    (i < f.names.len()).then_some(At {
        dir: &*set.dir,
        names: &f.names,
        dirs: &f.dirs,
        i,
        tree: f.spec.tree.is_some(),
    })
}

/// Where `req` acts, among the engine's `sets`.
fn at_of<'a>(sets: &'a [Option<Set>], req: &IoRequest) -> Option<At<'a>> {
    let i = (req.offset / (req.len.max(1) as u64)) as usize;
    at_index(sets, req.target as usize, i)
}

impl FileOpIo {
    /// close: the file opened after the previous close (or, the first time, one
    /// opened now: that close's time includes an open), then the next one opened
    /// once the time is taken.
    fn close(&mut self, req: &IoRequest) -> (i64, u64) {
        let Some(at) = at_of(&self.sets, req) else {
            return (-(libc::EINVAL as i64), 0);
        };
        let (t, f) = match self.pending.take() {
            Some(p) => p,
            None => match tree::open_existing(&at, at.i) {
                Some(f) => (req.target as usize, f),
                None => return (super::NOTHING_TO_DO, now_ns()),
            },
        };
        let result = match at_index(&self.sets, t, 0) {
            Some(owner) => owner.dir.close(f),
            None => -(libc::EBADF as i64),
        };
        let done = now_ns();
        self.pending = tree::open_existing(&at, at.i + 1).map(|f| (req.target as usize, f));
        (result, done)
    }
}

impl Drop for FileOpIo {
    /// close's file still open at the end is closed through its directory.
    fn drop(&mut self) {
        if let Some((t, f)) = self.pending.take() {
            if let Some(Some(set)) = self.sets.get(t) {
                set.dir.close(f);
            }
        }
    }
}

/// The call on `name` in `dir`.
pub(super) fn call(op: FileOp, dir: &dyn TreeDir, name: &CStr) -> i64 {
    match op {
        FileOp::CreateFile => dir.create(name),
        FileOp::StatFile(how) | FileOp::StatDir(how) => dir.stat(name, how),
        FileOp::DeleteFile => dir.unlink(name),
        FileOp::MakeDir => dir.mkdir(name, 0o700),
        FileOp::RemoveDir => dir.rmdir(name),
        FileOp::Access => dir.access(name),
        FileOp::SetAttr => dir.touch(name),
        // open, close, copy and move are made by their own functions.
        FileOp::Open | FileOp::Close | FileOp::Copy | FileOp::Move => -(libc::EINVAL as i64),
    }
}

/// open: the time is taken once the file is open; the close comes after it.
pub(super) fn open_timed(dir: &dyn TreeDir, name: &CStr) -> (i64, u64) {
    match dir.open(name, false) {
        Ok(f) => {
            let done = now_ns();
            dir.close(f);
            (0, done)
        }
        Err(e) => (e, now_ns()),
    }
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
    /// An engine making `engine`'s operation on the `files:` targets among
    /// `targets`, each reached through a directory of its own (a tree on a server:
    /// a connection of this engine's).
    pub fn new(
        targets: &Targets,
        engine: EngineKind,
        op: FileOp,
        capacity: usize,
    ) -> Result<Self, EngineError> {
        let mut sets = Vec::with_capacity(targets.len());
        for (index, t) in targets.iter().enumerate() {
            let Backing::Files(f) = &t.backing else {
                sets.push(None);
                continue;
            };
            let dir = f.connect().map_err(|e| EngineError::Setup {
                engine: engine.name(),
                source: std::io::Error::other(e.to_string()),
            })?;
            sets.push(Some(Set {
                dir,
                targets: targets.clone(),
                index,
            }));
        }
        // close's first file is opened here, before the run, so no close's time
        // includes an open.
        let first = (op == FileOp::Close)
            .then(|| sets.iter().position(|s| s.is_some()))
            .flatten()
            .and_then(|t| Some((t, tree::open_existing(&at_index(&sets, t, 0)?, 0)?)));
        let buf = match op == FileOp::Copy {
            true => vec![0u8; COPY_BUF_BYTES],
            false => Vec::new(),
        };
        Ok(InlineEngine::with(
            FileOpIo {
                op,
                sets,
                name: engine.name(),
                buf,
                pending: first,
            },
            capacity,
        ))
    }
}
