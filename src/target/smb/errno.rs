//! NT status codes as errnos: the one table that lets SMB file operations report in
//! the same convention as the local ones (0 or a negated errno), so a file-tree
//! workload counts "already exists" or "not empty" alike on both. Only the statuses
//! the tree operations expect to meet have an errno of their own; everything else is
//! EIO, which the workloads count as a real failure.

/// NT status → errno, the whole mapping (MS-ERREF 2.3 for the codes).
pub const STATUS_ERRNOS: [(u32, i32, &str); 8] = [
    (0xC000_0035, libc::EEXIST, "STATUS_OBJECT_NAME_COLLISION"),
    (0xC000_0034, libc::ENOENT, "STATUS_OBJECT_NAME_NOT_FOUND"),
    (0xC000_003A, libc::ENOENT, "STATUS_OBJECT_PATH_NOT_FOUND"),
    // Another handle asked for the name's removal; it goes at that handle's last
    // close. A local unlink takes the name at once, so an open of it then finds
    // nothing.
    (0xC000_0056, libc::ENOENT, "STATUS_DELETE_PENDING"),
    (0xC000_0101, libc::ENOTEMPTY, "STATUS_DIRECTORY_NOT_EMPTY"),
    (0xC000_0022, libc::EACCES, "STATUS_ACCESS_DENIED"),
    (0xC000_0103, libc::ENOTDIR, "STATUS_NOT_A_DIRECTORY"),
    (0xC000_00BA, libc::EISDIR, "STATUS_FILE_IS_A_DIRECTORY"),
];

/// The errno for an NT status: the table's, or EIO.
pub fn errno_of(status: u32) -> i32 {
    STATUS_ERRNOS
        .iter()
        .find(|(s, _, _)| *s == status)
        .map_or(libc::EIO, |&(_, e, _)| e)
}

/// A failed request as a negated errno: the server's status through the table; EIO
/// when no status came back (the connection broke, the reply did not parse).
pub fn neg_errno(e: &smb::Error) -> i64 {
    -i64::from(super::client::status(e).map_or(libc::EIO, errno_of))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_each_status_in_the_table_and_the_rest_to_eio() {
        assert_eq!(errno_of(0xC000_0035), libc::EEXIST);
        assert_eq!(errno_of(0xC000_0034), libc::ENOENT);
        assert_eq!(errno_of(0xC000_003A), libc::ENOENT);
        assert_eq!(errno_of(0xC000_0056), libc::ENOENT);
        assert_eq!(errno_of(0xC000_0101), libc::ENOTEMPTY);
        assert_eq!(errno_of(0xC000_0022), libc::EACCES);
        assert_eq!(errno_of(0xC000_0103), libc::ENOTDIR);
        assert_eq!(errno_of(0xC000_00BA), libc::EISDIR);
        // STATUS_DISK_FULL and STATUS_INVALID_PARAMETER: not in the table.
        assert_eq!(errno_of(0xC000_007F), libc::EIO);
        assert_eq!(errno_of(0xC000_000D), libc::EIO);
        let statuses: std::collections::HashSet<u32> =
            STATUS_ERRNOS.iter().map(|(s, _, _)| *s).collect();
        assert_eq!(statuses.len(), STATUS_ERRNOS.len(), "a status listed twice");
    }

    #[test]
    fn a_server_status_goes_through_the_table_and_a_broken_link_is_eio() {
        let e = smb::Error::UnexpectedMessageStatus(0xC000_0101);
        assert_eq!(neg_errno(&e), -i64::from(libc::ENOTEMPTY));
        let e = smb::Error::InvalidState("closed".into());
        assert_eq!(neg_errno(&e), -i64::from(libc::EIO));
    }
}
