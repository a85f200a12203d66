//! The declared settings: the one place a setting's name, kind, default, scope, doc,
//! command-line flag and result field are written. Everything that reads, writes,
//! documents or echoes a setting takes it from here (see [`super`]); foreign formats
//! map their keys onto these in their own option tables.
//!
//! To add a setting: declare it here, add it to [`ALL`], map the foreign keys that
//! mean it in their tables, and write the code that acts on it.

use super::{Decl, Kind, Scope, Value};

/// Every declared setting, in the order the docs and `--help` list them.
pub static ALL: &[&Decl] = &[&INVALIDATE, &ATOMIC_WRITES, &FILL_FS];

/// fio's `invalidate`: buffered I/O starts from a cold page cache, as fio's does by
/// default.
pub static INVALIDATE: Decl = Decl {
    key: "invalidate",
    kind: Kind::Flag,
    scope: Scope::Workload,
    default: Value::Flag(true),
    doc: "Drop the target's page cache before the run (written back, then \
          posix_fadvise DONTNEED), so buffered I/O starts cold; nothing to drop under \
          O_DIRECT or on mem:, null: and network targets",
    flag: Some("invalidate"),
    heading: "Target",
    echo: "invalidate",
    switch: false,
};

/// fio's `atomic=1`: the checks that the target can take them run before the first
/// I/O (`run::request_flags`).
pub static ATOMIC_WRITES: Decl = Decl {
    key: "atomic_writes",
    kind: Kind::Flag,
    scope: Scope::Workload,
    default: Value::Flag(false),
    doc: "Every write carries RWF_ATOMIC: it lands whole or not at all, never torn by \
          a crash. uring and sync engines, O_DIRECT, on a target whose statx \
          (STATX_WRITE_ATOMIC) limits hold every write size at offsets that are \
          multiples of it; checked before the first I/O",
    flag: Some("atomic-writes"),
    heading: "Workload",
    echo: "atomic_writes",
    switch: true,
};

/// fio's `fill_device`: only for workloads that write (the job-file reader and fio's
/// table check it against the mix); a target's size = "fill" makes the file as large
/// as its file system holds.
pub static FILL_FS: Decl = Decl {
    key: "fill_fs",
    kind: Kind::Flag,
    scope: Scope::Workload,
    default: Value::Flag(false),
    doc: "Write until the file system is full (fio's fill_device): a write that fails \
          with ENOSPC or EDQUOT, or comes back short, ends that stream's I/O, uncounted \
          and not an error; give the target size = \"fill\" for fio's size = the free \
          space; only for workloads that write",
    flag: None,
    heading: "Workload",
    echo: "fill_fs",
    switch: false,
};
