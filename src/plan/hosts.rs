//! Host definitions of a plan (vdbench `hd=`): the hosts a multi-host run spans and
//! which targets each of them drives. They travel with each run so that, under
//! `mpirun`, every rank can work out which host definition it plays
//! (src/cluster/hostmap.rs) and keep only that host's targets and workloads.

use serde::{Deserialize, Serialize};

/// One host of a multi-host plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostDef {
    /// The definition's label (`hd=NAME`).
    pub name: String,
    /// The host's network name or address (`system=`); `None` = the label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// Names of the targets this host drives.
    pub targets: Vec<String>,
}

impl HostDef {
    /// The name a rank's host is compared with: `system=`, else the label.
    pub fn system_name(&self) -> &str {
        self.system.as_deref().unwrap_or(&self.name)
    }
}
