//! The declared settings: the one place a setting's name, kind, default, scope, doc,
//! command-line flag and result field are written. Everything that reads, writes,
//! documents or echoes a setting takes it from here (see [`super`]); foreign formats
//! map their keys onto these in their own option tables.
//!
//! To add a setting: declare it here, add it to [`ALL`], map the foreign keys that
//! mean it in their tables, and write the code that acts on it.

use super::{Decl, Kind, Scope, Value};

/// Every declared setting, in the order the docs and `--help` list them.
pub static ALL: &[&Decl] = &[&INVALIDATE];

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
};
