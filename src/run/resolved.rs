//! A workload's geometry as setup resolved it against its target, read by the
//! launcher (offsets, streams) and the zone tables (`run::zbd`).

/// A workload's resolved geometry.
pub(super) struct Resolved {
    pub target: u32,
    pub ws_start: u64,
    pub ws_len: u64,
    /// On a file set read and written as bytes: each file's length (0 otherwise),
    /// its stride when the files differ in length.
    pub file_bytes: u64,
    /// Each file's own length when they differ.
    pub file_lens: Option<std::sync::Arc<[u64]>>,
}
