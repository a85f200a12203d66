//! Plans: the workload model, units, and the readers that build a plan from flags or
//! from a native job file. Pure: nothing here opens a target or issues I/O.

pub mod compat;
pub mod effective;
pub mod emit;
pub mod engine_kind;
pub mod engine_opts;
pub mod file_service;
pub mod file_sizes;
pub mod file_subset;
pub mod file_tree;
pub mod fileset;
pub mod fill;
#[cfg(test)]
pub(crate) mod generated_docs;
pub mod hosts;
pub mod jobfile;
pub mod model;
pub mod net_endpoint;
pub mod nfs_spec;
pub mod on_error;
pub mod outputs;
pub mod overrides;
pub mod paths;
pub mod priority;
pub mod settings;
pub mod smb_spec;
pub mod target_kind;
pub mod tuning;
pub mod units;
pub mod zbd;

pub use hosts::HostDef;
pub use model::*;
pub use overrides::{WorkloadData, WorkloadOverrides};
pub use tuning::{IoTuning, SyncKind, UringOptions};
