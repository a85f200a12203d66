//! Engine kinds as descriptors: each kind of engine is declared once, in
//! [`ENGINES`], with its name and what it is and can do (whether it moves bytes,
//! trims, works file by file and what it needs of a `files:` set, shapes its
//! target, has connections of its own, paces itself, performs one request at a
//! time, fio's engine for it); the rest of the code asks the descriptor instead of
//! matching on kinds. How an engine is built and which
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

/// What a run on an engine does with a `files:` target, which decides what must
/// already be there when the target is opened (`crate::target::fileset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetUse {
    /// Create the files or directories: none may exist yet.
    Create,
    /// Stat or delete files: missing ones are created (of the set's file size) first.
    Files,
    /// Stat or remove directories: missing ones are made first.
    Dirs,
    /// Read and write the files' bytes (the sync and uring engines): opened by
    /// `crate::target::fileset_bytes`, not as a set of names.
    Bytes,
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
    /// What it does with a `files:` target; `None`: it takes none. `auto` reads and
    /// writes the files' bytes, as the sync and uring engines it chooses between do.
    pub set_use: Option<SetUse>,
    /// Works on a tree's files only (`tree:`): fills its missing names from the
    /// files there (copy, move).
    pub trees_only: bool,
    /// Reaches its targets over connections of its own (nbd, iscsi, smb, nfs).
    pub network: bool,
    /// Paces itself (it burns CPU or runs a program for the run's duration): a rate
    /// or think time does not apply.
    pub paces_itself: bool,
    /// Takes the stat call option (`--stat-type`, fio's `stat_type`).
    pub stat_call: bool,
    /// Performs one request at a time inside its submit call, as fio's synchronous
    /// engines do: a queue depth above one gains nothing.
    pub serial: bool,
    /// fio's engine for it, for `convert --to fio`.
    pub fio: FioEngine,
}

/// fio's engine for an engine kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FioEngine {
    /// fio's engine of this name does the same.
    Same(&'static str),
    /// fio's engine of this name, and what differs (written as a comment above it).
    Near(&'static str, &'static str),
    /// fio has one, which ioscope does not write jobs for yet.
    NotYet,
    /// fio has none: why.
    Missing(&'static str),
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
        set_use: None,
        trees_only: false,
        network: false,
        paces_itself: false,
        stat_call: false,
        serial: false,
        fio: FioEngine::NotYet,
    }
}

const fn fio(mut d: EngineDesc, fio: FioEngine) -> EngineDesc {
    d.fio = fio;
    d
}

const AUTO_FIO: FioEngine = FioEngine::Near(
    "io_uring",
    "ioscope's auto engine chooses when it opens the target: psync for files answered \
     from memory (page cache, tmpfs) and for one request in flight, io_uring otherwise",
);
/// vdbench's file operations, which fio's file engines do not have.
const VDBENCH: FioEngine = FioEngine::Missing("fio has no engine for this vdbench operation");

const fn trims(mut d: EngineDesc) -> EngineDesc {
    d.trims = true;
    d
}

/// An engine that moves no bytes of its target.
const fn no_bytes(mut d: EngineDesc) -> EngineDesc {
    d.moves_bytes = false;
    d
}

/// A file-by-file engine: `op` on each name, which the set must hold as `set_use`
/// says; one name per request.
const fn files(d: EngineDesc, op: FileOp, set_use: SetUse) -> EngineDesc {
    let mut d = serial(no_bytes(d));
    d.file_op = Some(op);
    d.set_use = Some(set_use);
    d.only_op = Some(match op {
        FileOp::Look => Op::Read,
        FileOp::Create | FileOp::Remove => Op::Write,
    });
    d
}

/// An engine that changes its file without writing a buffer.
const fn changes(d: EngineDesc, shapes: bool) -> EngineDesc {
    let mut d = serial(no_bytes(d));
    d.writes_target = true;
    d.shapes_target = shapes;
    d
}

/// An engine that reads and writes the bytes of a `files:` set's files (the sync
/// and uring engines, and `auto`, which picks one of them).
const fn sets(mut d: EngineDesc) -> EngineDesc {
    d.set_use = Some(SetUse::Bytes);
    d
}

/// An engine with connections of its own to its targets.
const fn network(mut d: EngineDesc) -> EngineDesc {
    d.network = true;
    d
}

/// A file-by-file engine that takes the stat call option.
const fn stats(mut d: EngineDesc) -> EngineDesc {
    d.stat_call = true;
    d
}

/// An engine whose every operation counts as a write.
const fn writes_only(mut d: EngineDesc) -> EngineDesc {
    d.only_op = Some(Op::Write);
    d
}

/// An engine that performs one request at a time.
const fn serial(mut d: EngineDesc) -> EngineDesc {
    d.serial = true;
    d
}

/// An engine that moves no bytes, does no I/O and sets its own pace.
const fn self_paced(d: EngineDesc) -> EngineDesc {
    let mut d = serial(no_bytes(d));
    d.paces_itself = true;
    d
}

/// A file-by-file engine working on trees only, making a missing name of each.
const fn trees(d: EngineDesc) -> EngineDesc {
    let mut d = files(d, FileOp::Create, SetUse::Create);
    d.trees_only = true;
    d
}

/// Every engine kind, in the enum's order (the order help texts list them).
#[rustfmt::skip] // a table: one kind a line
pub static ENGINES: [EngineDesc; 29] = [
    fio(sets(trims(kind(EngineKind::Auto, "auto"))), AUTO_FIO),
    fio(sets(trims(kind(EngineKind::Uring, "uring"))), FioEngine::Same("io_uring")),
    fio(serial(sets(trims(kind(EngineKind::Sync, "sync")))), FioEngine::Same("psync")),
    fio(trims(kind(EngineKind::Null, "null")), FioEngine::Same("null")),
    fio(trims(kind(EngineKind::Mem, "mem")), FioEngine::Missing("it keeps the data in ioscope's own memory")),
    fio(trims(kind(EngineKind::Sim, "sim")), FioEngine::Missing("it simulates a device's timing (a queueing model of service times)")),
    fio(network(trims(kind(EngineKind::Nbd, "nbd"))), FioEngine::Same("nbd")),
    fio(network(kind(EngineKind::Iscsi, "iscsi")), FioEngine::Same("libiscsi")),
    fio(network(kind(EngineKind::Smb, "smb")), FioEngine::Missing("fio has no SMB client engine")),
    fio(network(kind(EngineKind::Nfs, "nfs")), FioEngine::Same("nfs")),
    files(kind(EngineKind::FileCreate, "filecreate"), FileOp::Create, SetUse::Create),
    stats(files(kind(EngineKind::FileStat, "filestat"), FileOp::Look, SetUse::Files)),
    files(kind(EngineKind::FileDelete, "filedelete"), FileOp::Remove, SetUse::Files),
    files(kind(EngineKind::DirCreate, "dircreate"), FileOp::Create, SetUse::Create),
    stats(files(kind(EngineKind::DirStat, "dirstat"), FileOp::Look, SetUse::Dirs)),
    files(kind(EngineKind::DirDelete, "dirdelete"), FileOp::Remove, SetUse::Dirs),
    fio(files(kind(EngineKind::FileOpen, "fileopen"), FileOp::Look, SetUse::Files), VDBENCH),
    fio(files(kind(EngineKind::FileClose, "fileclose"), FileOp::Look, SetUse::Files), VDBENCH),
    fio(writes_only(files(kind(EngineKind::FileSetattr, "filesetattr"), FileOp::Look, SetUse::Files)), VDBENCH),
    fio(files(kind(EngineKind::FileAccess, "fileaccess"), FileOp::Look, SetUse::Files), VDBENCH),
    fio(trees(kind(EngineKind::FileCopy, "filecopy")), VDBENCH),
    fio(trees(kind(EngineKind::FileMove, "filemove")), VDBENCH),
    self_paced(kind(EngineKind::Cpuio, "cpuio")),
    fio(trims(changes(kind(EngineKind::Falloc, "falloc"), true)), FioEngine::Near("falloc", "ioscope creates a missing file as a hole, so each fallocate allocates (fio preallocates a file it lays out unless fallocate=none)")),
    fio(writes_only(changes(kind(EngineKind::Ftruncate, "ftruncate"), true)), FioEngine::Same("ftruncate")),
    serial(no_bytes(kind(EngineKind::PageFault, "page_fault"))),
    self_paced(kind(EngineKind::Exec, "exec")),
    writes_only(changes(kind(EngineKind::E4defrag, "e4defrag"), false)),
    serial(kind(EngineKind::Net, "net")),
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

    /// The engine fio's engine `name` is the same as ([`FioEngine::Same`]).
    pub fn from_fio(name: &str) -> Option<EngineKind> {
        let same = |k: &EngineKind| matches!(k.desc().fio, FioEngine::Same(n) if n == name);
        EngineKind::ALL.into_iter().find(same)
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

    /// One descriptor's facts, one word each, in the fields' order.
    fn facts(d: &EngineDesc) -> String {
        let word = |on: bool, w: &str| on.then(|| w.to_string());
        let lower = |v: &dyn std::fmt::Debug| format!("{v:?}").to_lowercase();
        [
            word(!d.moves_bytes, "no-bytes"),
            word(d.trims, "trims"),
            d.file_op.map(|o| format!("op={}", lower(&o))),
            d.only_op.map(|o| format!("only={}", lower(&o))),
            word(d.shapes_target, "shapes"),
            word(d.writes_target, "writes"),
            d.set_use.map(|u| format!("set={}", lower(&u))),
            word(d.trees_only, "trees"),
            word(d.network, "network"),
            word(d.paces_itself, "paced"),
            word(d.stat_call, "stat"),
            word(d.serial, "serial"),
        ]
        .into_iter()
        .flatten()
        .fold(format!("{}:", d.name), |line, w| line + " " + &w)
    }

    // Regression: the facts were lists of kinds in the run checks, the fio reader
    // and the engine set-up; moved here, each kind keeps what those lists said.
    #[test]
    fn properties_as_before() {
        let all: Vec<String> = ENGINES.iter().map(facts).collect();
        let expected = "\
auto: trims set=bytes
uring: trims set=bytes
sync: trims set=bytes serial
null: trims
mem: trims
sim: trims
nbd: trims network
iscsi: network
smb: network
nfs: network
filecreate: no-bytes op=create only=write set=create serial
filestat: no-bytes op=look only=read set=files stat serial
filedelete: no-bytes op=remove only=write set=files serial
dircreate: no-bytes op=create only=write set=create serial
dirstat: no-bytes op=look only=read set=dirs stat serial
dirdelete: no-bytes op=remove only=write set=dirs serial
fileopen: no-bytes op=look only=read set=files serial
fileclose: no-bytes op=look only=read set=files serial
filesetattr: no-bytes op=look only=write set=files serial
fileaccess: no-bytes op=look only=read set=files serial
filecopy: no-bytes op=create only=write set=create trees serial
filemove: no-bytes op=create only=write set=create trees serial
cpuio: no-bytes paced serial
falloc: no-bytes trims shapes writes serial
ftruncate: no-bytes only=write shapes writes serial
page_fault: no-bytes serial
exec: no-bytes paced serial
e4defrag: no-bytes only=write writes serial
net: serial";
        assert_eq!(all.join("\n"), expected);
        let consuming = EngineKind::ALL.into_iter().filter(|k| k.consumes_files());
        let consuming: Vec<_> = consuming.map(EngineKind::name).collect();
        let expected = "filecreate filedelete dircreate dirdelete filecopy filemove";
        assert_eq!(consuming.join(" "), expected);
    }
}
