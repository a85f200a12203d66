//! The sources of a merged run (`ioscope merge`): each part is one run of one source
//! result, kept with the host that measured it and its measured window, so a reader
//! of the merged result sees what it is made of and over which time.

use serde::{Deserialize, Serialize};

/// One source run of a merged run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// The host that measured it (its result's `env.host.hostname`; empty when the
    /// source did not record one).
    pub host: String,
    /// Start of its measured time (after warm-up), Unix seconds.
    pub start_unix_s: f64,
    /// End of its measured time, Unix seconds.
    pub end_unix_s: f64,
    /// The result file it came from, as given to `merge`.
    pub source: String,
    /// Its own I/Os (all directions) and their rate over its own measured time.
    pub ios: u64,
    pub iops: f64,
}
