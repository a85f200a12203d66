//! Buffer contents and data verification (work in progress).
pub mod hash;
pub mod header;
pub mod keymap;
pub mod pattern;
pub use pattern::{DataSpec, DataSpecError, Generator};
