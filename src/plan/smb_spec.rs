//! Where a file (or a tree's anchor) on an SMB share is: its own file so that the
//! target model (`model`) and file sets (`fileset`, whose remote trees name a share)
//! both read it without reading each other.

/// Where a file on an SMB share is, as parsed by `crate::target::smb::parse`. Holds no
/// secret: the password comes from the environment or a credentials file at open time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmbSpec {
    /// The URI as given.
    pub uri: String,
    /// The user named in the URI, if any (else `IOSCOPE_SMB_USER` or the credentials file).
    pub user: Option<String>,
    pub host: String,
    pub port: u16,
    pub share: String,
    /// The file's path inside the share, '/'-separated, never empty.
    pub path: String,
}
