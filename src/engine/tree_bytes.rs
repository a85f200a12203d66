//! The sync engine on a tree on a file server (`tree:nfs://…` read and written as
//! bytes): each worker reaches the tree through a directory of its own
//! ([`TreeDir`]: for NFS, its own mount of the export), and file `i` holds offsets
//! `i × stride ..` as on a local tree. Each file is opened (read-write, or read-only
//! where the server refuses writing) at the first I/O that lands in it and stays
//! open to the end, one handle per file per worker; the request is one blocking
//! call on that handle (libnfs's `nfs_pread`/`nfs_pwrite`), so a worker has one I/O
//! in flight, as the sync engine has on local files. The blocking calls are the
//! trade-off: the asynchronous nfs engine addresses one file per target, and a tree
//! of thousands of files would need as many handles per connection before the
//! first I/O.

use super::inline::{InlineEngine, PerformIo};
use super::{now_ns, EngineError, IoRequest, Targets};
use crate::plan::model::Op;
use crate::target::tree_dir::{FileId, TreeDir};

/// How many times a failed I/O's file is opened again by name (a stale handle).
/// In a create/delete/read/write mix on NFS-Ganesha about 1 in 150 reopened files
/// was removed again before its I/O; the next open finds it gone or made anew.
const MAX_REOPENS: usize = 4;

/// One tree: the worker's directory on it, its file stride and open handles.
struct Tree {
    dir: Box<dyn TreeDir>,
    names: Vec<std::ffi::CString>,
    stride_bytes: u64,
    files: Vec<Option<FileId>>,
}

/// Performs each request as one blocking call on its file's handle.
pub struct TreeBytesIo {
    trees: Vec<Option<Tree>>,
}

impl Tree {
    /// Opens file `i` at its first use.
    fn open(&mut self, i: usize) -> Result<(), i64> {
        if self.files[i].is_none() {
            let name = &self.names[i];
            let f = self
                .dir
                .open(name, true)
                .or_else(|_| self.dir.open(name, false))?;
            self.files[i] = Some(f);
        }
        Ok(())
    }
}

impl Drop for TreeBytesIo {
    fn drop(&mut self) {
        for t in self.trees.iter_mut().flatten() {
            for f in t.files.iter_mut().filter_map(Option::take) {
                t.dir.close(f);
            }
        }
    }
}

impl PerformIo for TreeBytesIo {
    const NAME: &'static str = "sync";

    fn perform(&mut self, req: &IoRequest) -> (i64, u64) {
        let Some(Some(t)) = self.trees.get_mut(req.target as usize) else {
            return (-(libc::EINVAL as i64), 0);
        };
        let i = (req.offset / t.stride_bytes.max(1)) as usize;
        let within = req.offset % t.stride_bytes.max(1);
        if i >= t.files.len() {
            return (-(libc::EINVAL as i64), now_ns());
        }
        let mut r = t.transfer(i, req, within);
        for _ in 0..MAX_REOPENS {
            if r >= 0 || t.files[i].is_none() {
                break;
            }
            // The handle may be stale: its file removed (and maybe made again)
            // since it was opened, which NFSv3 answers with an error on the handle
            // (libnfs reports it as an I/O error). Opened again by name; another
            // worker's delete may take the file again between that open and the
            // I/O, so this is tried a few times.
            if let Some(f) = t.files[i].take() {
                t.dir.close(f);
            }
            r = t.transfer(i, req, within);
        }
        // A file that is not there (a delete took it) or holds nothing where the
        // read lands (a create made it anew) has nothing for this I/O: vdbench's
        // read and write look for a file that has data, so it is the workload's
        // skip, not an error, as the tree's other operations count it.
        let missing = r == -(libc::ENOENT as i64) || (r == 0 && req.op == Op::Read);
        (if missing { super::NOTHING_TO_DO } else { r }, now_ns())
    }
}

impl Tree {
    /// `req` on file `i` at `within`: bytes moved, or a negated errno.
    fn transfer(&mut self, i: usize, req: &IoRequest, within: u64) -> i64 {
        if let Err(e) = self.open(i) {
            return e;
        }
        let Some(f) = self.files[i].as_ref() else {
            return -(libc::EBADF as i64);
        };
        let t = &*self;
        let len = req.len as usize;
        // SAFETY: the worker keeps the request's buffer valid for `len` bytes until
        // its completion is reaped, and this call returns before that.
        unsafe {
            match req.op {
                Op::Read => {
                    let buf = std::slice::from_raw_parts_mut(req.buf, len);
                    t.dir.read_at(f, buf, within)
                }
                Op::Write => {
                    let buf = std::slice::from_raw_parts(req.buf as *const u8, len);
                    t.dir.write_at(f, buf, within)
                }
                // Refused before the run (`run::trim`): a tree has no discard.
                Op::Trim => -(libc::EOPNOTSUPP as i64),
            }
        }
    }
}

/// The sync engine over trees on a server.
pub type TreeBytesEngine = InlineEngine<TreeBytesIo>;

impl TreeBytesEngine {
    /// An engine on the remote trees among `targets`, each through a directory of
    /// its own.
    pub fn new(targets: &Targets, capacity: usize) -> Result<Self, EngineError> {
        let mut trees = Vec::with_capacity(targets.len());
        for t in targets.iter() {
            let Some(f) = t.remote_byte_tree() else {
                trees.push(None);
                continue;
            };
            let dir = f.connect().map_err(|e| EngineError::Setup {
                engine: "sync",
                source: std::io::Error::other(e.to_string()),
            })?;
            trees.push(Some(Tree {
                dir,
                names: f.names.clone(),
                stride_bytes: f.spec.file_bytes,
                files: (0..f.names.len()).map(|_| None).collect(),
            }));
        }
        Ok(InlineEngine::with(TreeBytesIo { trees }, capacity))
    }
}
