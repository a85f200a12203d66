//! The direction of one I/O: read, write or trim. The smallest word of the
//! vocabulary, here because a priority share (`vocab::priority`) and a block-size
//! split (`vocab::block_sizes`) are per direction; results count per direction with
//! [`Op::index`]. The trade-off: its serde spelling (`"read"`) is the wire format's.

use serde::{Deserialize, Serialize};

/// Read, write or trim (discard: the range's blocks are released, fio's `trim`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    Trim,
}

impl Op {
    /// Directions results count apart: read, write, trim.
    pub const COUNT: usize = 3;

    pub fn index(self) -> usize {
        match self {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
        }
    }
}
