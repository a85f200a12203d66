//! The value types that the workload model (`plan`) and the result file (`result`)
//! both speak: access patterns, block sizes, rates, pauses, zones, priorities, flush
//! calls. Each is declared once here, with its serde shape, so the plan a run carried
//! and the echo its result publishes are the same type and cannot drift apart. The
//! trade-off: a change to one of these types changes the result's wire format too
//! (docs/result-schema.md), so every field keeps a serde default and writes nothing
//! where the wire format always left it out; types whose result shape differs from
//! the plan's (a workload's echo, emulated zones as run) stay apart, under names of
//! their own. This module reads nothing else in the crate: parsing of text forms that
//! needs the plan's units, and checks against a whole workload, live in `plan`.

pub mod access;
pub mod block_sizes;
pub mod io;
pub mod op;
pub mod priority;
pub mod rate;
pub(crate) mod skip;
pub mod sprandom;
pub mod zones;

pub use access::{
    AccessPattern, Distribution, DistributionError, SeqLayout, TrimMode, Zone, ZoneBytes,
};
pub use block_sizes::BlockSizes;
pub use io::{SyncKind, UringOptions};
pub use op::Op;
pub use priority::{IoPriority, PrioClass, PrioShare, Priorities};
pub use rate::{Arrival, Flow, Pauses, Rate};
pub use sprandom::Sprandom;
pub use zones::{Zbd, Zones};
