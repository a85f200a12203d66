//! Buffer contents and data verification: what every write carries and how every
//! read of it is checked. See `docs/data.md` for the design, the measured figures and
//! the cases the key protocol covers.
//!
//! - [`pattern`]: fast unique / deduplicable / compressible unit content;
//!   [`aes_stream`] is its stream on CPUs with AES instructions.
//! - [`header`]: the 32-byte verify header stamped at the start of each unit, and the
//!   check that classifies a mismatch.
//! - [`keymap`]: the shared per-unit key map (two bytes per unit) and the protocol that
//!   keeps reads racing writes free of false alarms.
//! - [`journal`]: the on-disk intent/commit log that lets `ioscope verify` find lost
//!   writes after a crash, and lets a later run continue the key sequence.
//! - [`reissued`]: keys of writes the multipath engine issued on two paths, whose
//!   late first copy verification accepts.
//! - [`hash`]: the 64-bit checksum used by headers and journal records.

pub mod aes_stream;
pub mod hash;
pub mod header;
pub mod journal;
pub mod keymap;
pub mod pattern;
pub mod reissued;

pub use header::{check, stamp, Found, Mismatch, MismatchKind, Verified, HEADER_BYTES};
pub use journal::{InFlight, Journal, JournalError, JournalWriter, Recovered, SyncPolicy};
pub use keymap::{KeyExpectation, KeyMap, ReadTicket, WriteTicket};
pub use pattern::{DataSpec, DataSpecError, FillBytes, Generator};
pub use reissued::ReissuedWrites;
