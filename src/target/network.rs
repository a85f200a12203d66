//! Opening network targets (`nbd://`, `iscsi://`, `smb://`, `nfs://`) through their
//! client libraries, each as an [`OpenTarget`] with its backing connection.

use super::{iscsi, nbd, nfs, smb, Backing, OpenOptionsIo, OpenTarget, TargetError};
use crate::plan::model::TargetSpec;

/// An NBD export: its size is the server's, or the `--size` prefix of it.
pub(super) fn open_nbd(
    spec: &TargetSpec,
    n: &crate::plan::model::NbdSpec,
    opts: OpenOptionsIo,
) -> Result<OpenTarget, TargetError> {
    let opened = nbd::open(n, opts.writes, opts.force, opts.nbd_replies)?;
    let size_bytes = match spec.size_bytes {
        Some(s) if s > opened.export_bytes => {
            return Err(TargetError::Invalid {
                uri: spec.uri.clone(),
                msg: format!(
                    "size {s} is larger than the export ({} bytes); a network target cannot grow",
                    opened.export_bytes
                ),
            })
        }
        Some(s) => s,
        None => opened.export_bytes,
    };
    Ok(OpenTarget::buffered(
        spec,
        Backing::Nbd(opened.target),
        size_bytes,
    ))
}

/// A file on an SMB share, created or grown to the working set like a local file.
pub(super) fn open_smb(
    spec: &TargetSpec,
    s: &crate::plan::model::SmbSpec,
    opts: OpenOptionsIo,
) -> Result<OpenTarget, TargetError> {
    let want = opts.min_size_bytes.max(spec.size_bytes.unwrap_or(0));
    let opened = smb::open(s, opts.writes, want, opts.write_through)?;
    Ok(OpenTarget::buffered(
        spec,
        Backing::Smb(Box::new(opened.target)),
        spec.size_bytes.unwrap_or(opened.file_bytes),
    ))
}

/// A file on an NFS export, created or grown to the working set like a local file.
pub(super) fn open_nfs(
    spec: &TargetSpec,
    n: &crate::plan::model::NfsSpec,
    opts: OpenOptionsIo,
) -> Result<OpenTarget, TargetError> {
    let want = opts.min_size_bytes.max(spec.size_bytes.unwrap_or(0));
    let opened = nfs::open(n, opts.writes, want)?;
    Ok(OpenTarget::buffered(
        spec,
        Backing::Nfs(Box::new(opened.target)),
        spec.size_bytes.unwrap_or(opened.file_bytes),
    ))
}

/// An iSCSI LUN: its size is the LUN's, or the `--size` prefix of it; every I/O must
/// be whole blocks.
pub(super) fn open_iscsi(
    spec: &TargetSpec,
    i: &crate::plan::model::IscsiSpec,
    opts: OpenOptionsIo,
) -> Result<OpenTarget, TargetError> {
    let opened = iscsi::open(i, opts.writes, opts.force)?;
    let block = opened.target.block_bytes as u64;
    let size_bytes = match spec.size_bytes {
        Some(s) if s > opened.lun_bytes => {
            return Err(TargetError::Invalid {
                uri: spec.uri.clone(),
                msg: format!(
                    "size {s} is larger than the LUN ({} bytes); a network target cannot grow",
                    opened.lun_bytes
                ),
            })
        }
        Some(s) => s - s % block,
        None => opened.lun_bytes,
    };
    Ok(OpenTarget {
        align_bytes: block,
        ..OpenTarget::buffered(spec, Backing::Iscsi(opened.target), size_bytes)
    })
}
