//! SPRandom's settings (fio's `sprandom`): preconditioning that writes an SSD's
//! physical capacity once in the order steady-state random writing would leave it.
//! Only the settings are here, shared by the plan and the result's echo; the check
//! against a workload stays in `plan` and the order itself is `run::sprandom`.

use serde::{Deserialize, Serialize};

/// SPRandom's settings (fio's `spr_op`, `spr_num_regions`, `spr_cs`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sprandom {
    /// The drive's over-provisioning ratio, 0 < op < 1 (fio's default 0.15).
    pub op: f64,
    /// Equal regions the physical capacity is cut into (fio's default 100).
    pub regions: u32,
    /// The drive's write cache; above 0, rewrites wait a region (fio's default 0).
    #[serde(default)]
    pub cache_bytes: u64,
}

impl Default for Sprandom {
    fn default() -> Self {
        Sprandom {
            op: 0.15,
            regions: 100,
            cache_bytes: 0,
        }
    }
}
