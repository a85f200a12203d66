//! The declared settings: the one place a setting's name, kind, default, scope, doc,
//! command-line flag and result field are written. Everything that reads, writes,
//! documents or echoes a setting takes it from here (see [`super`]); foreign formats
//! map their keys onto these in their own option tables.
//!
//! To add a setting: declare it here, add it to [`ALL`], map the foreign keys that
//! mean it in their tables, and write the code that acts on it.

#[allow(unused_imports)] // the kinds and scopes the declarations below use
use super::{Decl, Kind, Scope, Value};

/// Every declared setting, in the order the docs and `--help` list them.
pub static ALL: &[&Decl] = &[];
