//! Where a file (or a tree's anchor) on an NFS export is: its own file so that the
//! target model (`model`) and file sets (`fileset`, whose remote trees name an
//! export) both read it without reading each other.

/// Where a file on an NFS export is, as parsed by `crate::target::nfs::parse`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NfsSpec {
    /// The URI as given.
    pub uri: String,
    pub host: String,
    /// The NFS service's port (`None`: the one the server's portmapper names).
    pub nfs_port: Option<u16>,
    /// The MOUNT service's port (`?mountport=N`; `None`: the portmapper's).
    pub mount_port: Option<u16>,
    /// The export's path on the server, starting with '/'.
    pub export: String,
    /// The file's name inside the export (no '/').
    pub file: String,
}
