//! Engine kinds as descriptors: each kind of engine is declared once, in
//! [`ENGINES`], with its name and what it is and can do (whether it moves bytes,
//! trims, works file by file, shapes its target); the rest of the code asks the
//! descriptor instead of matching on kinds. How an engine is built and which
//! engine a target gets live with the engines and the run (`engine`, `run`), which
//! read these properties.
//!
//! The trade-off: the table is indexed by the enum's discriminant, so a kind added
//! to the enum must be added to the table at the same place; a unit test holds the
//! two in step.

use serde::{Deserialize, Serialize};

use crate::vocab::Op;

/// How I/O is issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// io_uring where the kernel allows it, else sync.
    Auto,
    Uring,
    Sync,
    Null,
    Mem,
    /// The simulated-device engine for `sim:` targets.
    Sim,
    /// libnbd's asynchronous API for `nbd://` targets.
    Nbd,
    /// libiscsi's asynchronous API for `iscsi://` targets.
    Iscsi,
    /// The smb crate's SMB2/3 client for `smb://` targets.
    Smb,
    /// libnfs's asynchronous API for `nfs://` targets.
    Nfs,
    /// open(O_CREAT) of each file of a `files:` set, timed (fio's filecreate).
    FileCreate,
    /// stat/lstat/statx of each file of a `files:` set (fio's filestat).
    FileStat,
    /// unlink(2) of each file of a `files:` set (fio's filedelete).
    FileDelete,
    /// mkdir(2) of each name of a `files:` set (fio's dircreate).
    DirCreate,
    /// stat of each directory of a `files:` set (fio's dirstat).
    DirStat,
    /// rmdir(2) of each directory of a `files:` set (fio's dirdelete).
    DirDelete,
    /// open(2) of a file, closed after the time is taken (vdbench's open).
    FileOpen,
    /// close(2) of a file opened, untimed, after the previous close (vdbench's close).
    FileClose,
    /// utimensat(2): a file's modification time set to now (vdbench's setattr).
    FileSetattr,
    /// access(2) of a file (vdbench's access).
    FileAccess,
    /// A tree's existing file copied into one of its missing names (vdbench's copy).
    FileCopy,
    /// A tree's existing file renamed to one of its missing names (vdbench's move).
    FileMove,
    /// Burns CPU time instead of doing I/O (fio's cpuio).
    Cpuio,
    /// fallocate(2) of each I/O's range of a file (fio's falloc).
    Falloc,
    /// ftruncate(2) of a file to each write's offset (fio's ftruncate).
    Ftruncate,
    /// Copies to and from a fresh anonymous mapping of each worker's own, so first
    /// touches take page faults (fio's page_fault).
    #[serde(rename = "page_fault")]
    PageFault,
    /// Runs a program for the run's duration (fio's exec).
    Exec,
    /// Moves each write's range of a file onto a donor file's blocks with
    /// EXT4_IOC_MOVE_EXT, as a defragmenter does (fio's e4defrag).
    E4defrag,
    /// Writes to or reads from a plain socket (fio's net): the targets are network
    /// endpoints (`tcp://…`, `udp://…`, `unix://…`, `vsock://…`,
    /// [`super::net_endpoint`]) and the run is driven by `crate::net::peer`.
    Net,
}

/// What a file-by-file engine does with the names of its `files:` set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    /// Makes each name (a file or a directory): each is used once per run.
    Create,
    /// Looks at each existing name; may visit it again.
    Look,
    /// Removes each name: each is used once per run.
    Remove,
}

/// One engine kind: what it is and what it can do.
#[derive(Debug)]
pub struct EngineDesc {
    pub kind: EngineKind,
    /// The name users give (`--engine`, job files, results).
    pub name: &'static str,
    /// Reads and writes bytes of its target, so data patterns, verification and
    /// journals apply (false: file operations, CPU burning, programs, allocation).
    pub moves_bytes: bool,
    /// Can discard (`Op::Trim`): hole punches and discards on files and devices,
    /// NBD_CMD_TRIM, the in-process and simulated targets. `auto` resolves to one of
    /// them or is refused when run.
    pub trims: bool,
    /// One file-system operation on one name of a `files:` set per I/O.
    pub file_op: Option<FileOp>,
    /// The one direction its operations have, as results count them; `None`: reads
    /// and writes both mean something.
    pub only_op: Option<Op>,
    /// Shapes its file itself (allocates or truncates it), so a missing file is
    /// created as a hole, not laid out with data.
    pub shapes_target: bool,
    /// Changes its target although it writes no buffer (allocation, truncation,
    /// block moves).
    pub writes_target: bool,
}

const fn kind(kind: EngineKind, name: &'static str) -> EngineDesc {
    EngineDesc {
        kind,
        name,
        moves_bytes: true,
        trims: false,
        file_op: None,
        only_op: None,
        shapes_target: false,
        writes_target: false,
    }
}

const fn trims(mut d: EngineDesc) -> EngineDesc {
    d.trims = true;
    d
}

/// An engine that moves no bytes of its target.
const fn no_bytes(mut d: EngineDesc) -> EngineDesc {
    d.moves_bytes = false;
    d
}

const fn files(d: EngineDesc, op: FileOp) -> EngineDesc {
    let mut d = no_bytes(d);
    d.file_op = Some(op);
    d.only_op = Some(match op {
        FileOp::Look => Op::Read,
        FileOp::Create | FileOp::Remove => Op::Write,
    });
    d
}

/// An engine that changes its file without writing a buffer.
const fn changes(d: EngineDesc, shapes: bool) -> EngineDesc {
    let mut d = no_bytes(d);
    d.writes_target = true;
    d.shapes_target = shapes;
    d
}

/// Every engine kind, in the enum's order (the order help texts list them).
pub static ENGINES: [EngineDesc; 29] = [
    trims(kind(EngineKind::Auto, "auto")),
    trims(kind(EngineKind::Uring, "uring")),
    trims(kind(EngineKind::Sync, "sync")),
    trims(kind(EngineKind::Null, "null")),
    trims(kind(EngineKind::Mem, "mem")),
    trims(kind(EngineKind::Sim, "sim")),
    trims(kind(EngineKind::Nbd, "nbd")),
    kind(EngineKind::Iscsi, "iscsi"),
    kind(EngineKind::Smb, "smb"),
    kind(EngineKind::Nfs, "nfs"),
    files(kind(EngineKind::FileCreate, "filecreate"), FileOp::Create),
    files(kind(EngineKind::FileStat, "filestat"), FileOp::Look),
    files(kind(EngineKind::FileDelete, "filedelete"), FileOp::Remove),
    files(kind(EngineKind::DirCreate, "dircreate"), FileOp::Create),
    files(kind(EngineKind::DirStat, "dirstat"), FileOp::Look),
    files(kind(EngineKind::DirDelete, "dirdelete"), FileOp::Remove),
    files(kind(EngineKind::FileOpen, "fileopen"), FileOp::Look),
    files(kind(EngineKind::FileClose, "fileclose"), FileOp::Look),
    {
        let mut d = files(kind(EngineKind::FileSetattr, "filesetattr"), FileOp::Look);
        d.only_op = Some(Op::Write);
        d
    },
    files(kind(EngineKind::FileAccess, "fileaccess"), FileOp::Look),
    files(kind(EngineKind::FileCopy, "filecopy"), FileOp::Create),
    files(kind(EngineKind::FileMove, "filemove"), FileOp::Create),
    no_bytes(kind(EngineKind::Cpuio, "cpuio")),
    trims(changes(kind(EngineKind::Falloc, "falloc"), true)),
    {
        let mut d = changes(kind(EngineKind::Ftruncate, "ftruncate"), true);
        d.only_op = Some(Op::Write);
        d
    },
    no_bytes(kind(EngineKind::PageFault, "page_fault")),
    no_bytes(kind(EngineKind::Exec, "exec")),
    {
        let mut d = changes(kind(EngineKind::E4defrag, "e4defrag"), false);
        d.only_op = Some(Op::Write);
        d
    },
    kind(EngineKind::Net, "net"),
];

impl EngineKind {
    /// Every engine a user can name, in the order help texts list them.
    pub const ALL: [EngineKind; 29] = {
        let mut all = [EngineKind::Auto; 29];
        let mut i = 0;
        while i < all.len() {
            all[i] = ENGINES[i].kind;
            i += 1;
        }
        all
    };

    /// This kind's descriptor.
    pub fn desc(self) -> &'static EngineDesc {
        &ENGINES[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.desc().name
    }

    /// The engine named `name` (its [`EngineKind::name`]).
    pub fn parse(name: &str) -> Option<EngineKind> {
        let lower = name.trim().to_ascii_lowercase();
        ENGINES.iter().find(|d| d.name == lower).map(|d| d.kind)
    }

    /// The names of [`EngineKind::ALL`], comma-separated, for messages.
    pub fn names() -> String {
        EngineKind::ALL.map(EngineKind::name).join(", ")
    }

    /// Engines whose I/O is one file-system operation on one file of a `files:` set.
    pub fn is_file_op(self) -> bool {
        self.desc().file_op.is_some()
    }

    /// Engines that use each file once per run (creating or removing it): a second
    /// visit would time something else (an open of an existing file, an ENOENT).
    pub fn consumes_files(self) -> bool {
        matches!(self.desc().file_op, Some(FileOp::Create | FileOp::Remove))
    }

    /// Engines that can discard ([`EngineDesc::trims`]).
    pub fn trims(self) -> bool {
        self.desc().trims
    }

    /// The one direction an engine's operations have ([`EngineDesc::only_op`]).
    pub fn only_op(self) -> Option<Op> {
        self.desc().only_op
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_follows_the_enum_and_names_are_unique() {
        let mut names = std::collections::BTreeSet::new();
        for (i, d) in ENGINES.iter().enumerate() {
            assert_eq!(d.kind as usize, i, "{} out of place", d.name);
            assert!(names.insert(d.name), "{} twice", d.name);
            assert_eq!(EngineKind::parse(d.name), Some(d.kind));
            // The serde spelling is the name.
            assert_eq!(serde_json::to_value(d.kind).unwrap(), d.name);
        }
    }

    #[test]
    fn properties_as_before() {
        use EngineKind::*;
        let trimming: Vec<_> = EngineKind::ALL.into_iter().filter(|k| k.trims()).collect();
        assert_eq!(trimming, [Auto, Uring, Sync, Null, Mem, Sim, Nbd, Falloc]);
        let consuming: Vec<_> = EngineKind::ALL
            .into_iter()
            .filter(|k| k.consumes_files())
            .collect();
        assert_eq!(
            consuming,
            [FileCreate, FileDelete, DirCreate, DirDelete, FileCopy, FileMove]
        );
        let reads: Vec<_> = EngineKind::ALL
            .into_iter()
            .filter(|k| k.only_op() == Some(Op::Read))
            .collect();
        assert_eq!(reads, [FileStat, DirStat, FileOpen, FileClose, FileAccess]);
        let writes: Vec<_> = EngineKind::ALL
            .into_iter()
            .filter(|k| k.only_op() == Some(Op::Write))
            .collect();
        assert_eq!(
            writes,
            [
                FileCreate,
                FileDelete,
                DirCreate,
                DirDelete,
                FileSetattr,
                FileCopy,
                FileMove,
                Ftruncate,
                E4defrag
            ]
        );
        let no_bytes: Vec<_> = EngineKind::ALL
            .into_iter()
            .filter(|k| !k.desc().moves_bytes)
            .collect();
        assert_eq!(
            no_bytes,
            [
                FileCreate,
                FileStat,
                FileDelete,
                DirCreate,
                DirStat,
                DirDelete,
                FileOpen,
                FileClose,
                FileSetattr,
                FileAccess,
                FileCopy,
                FileMove,
                Cpuio,
                Falloc,
                Ftruncate,
                PageFault,
                Exec,
                E4defrag
            ]
        );
    }
}
