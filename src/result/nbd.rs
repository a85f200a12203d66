//! What the NBD connections of a run negotiated, recorded with each run that used
//! `nbd://` targets: the client's CPU per I/O depends on the reply form, so a figure
//! is read with it. Filled in from the export's opening (`target::nbd`).

use serde::{Deserialize, Serialize};

/// One NBD export of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NbdSession {
    /// The target URI.
    pub target: String,
    /// `HOST:PORT` or `unix:PATH`.
    pub server: String,
    /// The run asked for structured replies (`nbd_structured_replies`).
    pub structured_replies_requested: bool,
    /// The server agreed to them (absent: a libnbd too old to tell, before 1.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_replies: Option<bool>,
}
