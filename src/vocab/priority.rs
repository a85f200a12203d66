//! I/O priorities of a workload: the priority of all its I/O (ioprio_set(2) on the
//! threads that issue it) and priorities of a share of its I/Os, per direction and
//! optionally per block size (io_uring's per-request `ioprio`). The types and their
//! kernel encoding live here, shared by the plan and the result's echo; the text
//! forms (`be/7`, `read:64k:25%rt/1`) and the check that shares fit stay in
//! `plan::priority`, because they read the plan's size units. The trade-off: one
//! type's methods in two files, so that this module reads nothing above it.

use super::op::Op;
use super::skip::is_zero_u16;
use serde::{Deserialize, Serialize};

/// Linux's I/O priority classes (include/uapi/linux/ioprio.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrioClass {
    /// Real time: served first (needs CAP_SYS_ADMIN or CAP_SYS_NICE).
    Rt,
    /// Best effort: the default class.
    Be,
    /// Served only when nothing else asks.
    Idle,
}

impl PrioClass {
    pub fn name(self) -> &'static str {
        match self {
            PrioClass::Rt => "rt",
            PrioClass::Be => "be",
            PrioClass::Idle => "idle",
        }
    }

    /// The kernel's number (IOPRIO_CLASS_RT = 1 …).
    pub fn number(self) -> u16 {
        match self {
            PrioClass::Rt => 1,
            PrioClass::Be => 2,
            PrioClass::Idle => 3,
        }
    }
}

/// One I/O priority: class, level within it (0 highest … 7) and hint (command
/// duration limit descriptor on devices that have them; 0 = none, left out of the
/// JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoPriority {
    pub class: PrioClass,
    #[serde(default)]
    pub level: u8,
    #[serde(default, skip_serializing_if = "is_zero_u16")]
    pub hint: u16,
}

/// The largest level (IOPRIO_NR_LEVELS − 1) and hint (10 bits) the kernel takes.
pub const MAX_LEVEL: u8 = 7;
pub const MAX_HINT: u16 = 1023;

impl IoPriority {
    /// The 16-bit value of ioprio_set(2) and io_uring's `sqe->ioprio`:
    /// class << 13 | hint << 3 | level.
    pub fn value(&self) -> u16 {
        self.class.number() << 13 | (self.hint & MAX_HINT) << 3 | u16::from(self.level & 7)
    }
}

/// A share of a workload's I/Os issued at a priority of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrioShare {
    /// The direction it applies to; `None` = reads and writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<Op>,
    /// The block size it applies to; `None` = every size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs_bytes: Option<u64>,
    /// Percentage (1..=100) of those I/Os.
    pub pct: u8,
    pub prio: IoPriority,
}

impl PrioShare {
    /// Whether an I/O of `op` and `len` bytes is one this share draws from.
    pub fn covers(&self, op: Op, len: u64) -> bool {
        self.op.map_or(true, |o| o == op) && self.bs_bytes.map_or(true, |b| b == len)
    }
}

/// A workload's priorities. Empty: every I/O at the issuing thread's default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Priorities {
    /// The priority of the threads that issue this workload's I/O (ioprio_set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<IoPriority>,
    /// Shares of its I/Os issued at priorities of their own (io_uring only); an I/O
    /// no share draws keeps `job`'s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_io: Vec<PrioShare>,
}

impl Priorities {
    pub fn is_default(&self) -> bool {
        *self == Priorities::default()
    }
}
