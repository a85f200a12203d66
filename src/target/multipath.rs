//! Opening the further paths of a multipath target and proving that they lead to the
//! same device as path 0 before any I/O: the same kind of target (NBD or iSCSI), the
//! same size, and the same bytes in three probe blocks (the head, the middle, the
//! tail). A path to another device would make every benchmark figure a lie and every
//! write a corruption, so a mismatch is refused naming both paths.
//!
//! iSCSI LUNs are compared the same way: the VPD page 0x83 identifier would be
//! stronger, but the libiscsi bindings do not reach INQUIRY yet.

use super::{open_one, Backing, OpenOptionsIo, OpenTarget, TargetError};
use crate::plan::model::TargetSpec;
use crate::plan::paths::MultipathSpec;
use std::sync::Arc;

/// The paths of a target beyond its own URI, and how to use them.
#[derive(Debug)]
pub struct Paths {
    pub spec: MultipathSpec,
    /// Paths 1.. (path 0 is the target itself).
    pub extra: Vec<Arc<OpenTarget>>,
}

impl Paths {
    /// URIs of all paths, path 0 first.
    pub fn uris<'a>(&'a self, first: &'a OpenTarget) -> Vec<&'a str> {
        std::iter::once(first.uri.as_str())
            .chain(self.extra.iter().map(|p| p.uri.as_str()))
            .collect()
    }
}

/// Bytes compared per probe block.
const PROBE_BYTES: u64 = 4096;

fn mismatch(first: &OpenTarget, other: &str, why: String) -> TargetError {
    TargetError::PathMismatch {
        first: first.uri.clone(),
        other: other.to_string(),
        why,
    }
}

/// Opens paths 1.. of `first` and checks each leads to the same device.
pub fn open_paths(
    first: &OpenTarget,
    spec: &TargetSpec,
    mp: &MultipathSpec,
    opts: OpenOptionsIo,
) -> Result<Paths, TargetError> {
    if !matches!(first.backing, Backing::Nbd(_) | Backing::Iscsi(_)) {
        return Err(TargetError::Invalid {
            uri: first.uri.clone(),
            msg: "several paths need a network target (nbd:// or iscsi://)".into(),
        });
    }
    let mut extra = Vec::with_capacity(mp.paths.len());
    for uri in &mp.paths {
        if *uri == first.uri || extra.iter().any(|p: &Arc<OpenTarget>| p.uri == *uri) {
            return Err(TargetError::Invalid {
                uri: uri.clone(),
                msg: format!("path given twice for target '{}'", first.uri),
            });
        }
        let pspec = TargetSpec {
            uri: uri.clone(),
            size_bytes: None,
            multipath: None,
            ..spec.clone()
        };
        let p = open_one(&pspec, opts)?;
        same_device(first, &p)?;
        extra.push(Arc::new(OpenTarget {
            size_bytes: first.size_bytes,
            ..p
        }));
    }
    Ok(Paths {
        spec: mp.clone(),
        extra,
    })
}

/// Refuses `other` unless it shows the same device as `first`.
fn same_device(first: &OpenTarget, other: &OpenTarget) -> Result<(), TargetError> {
    let kind = |t: &OpenTarget| match t.backing {
        Backing::Nbd(_) => "NBD",
        Backing::Iscsi(_) => "iSCSI",
        _ => "local",
    };
    if kind(first) != kind(other) {
        return Err(mismatch(
            first,
            &other.uri,
            format!("{} target vs {} target", kind(first), kind(other)),
        ));
    }
    let (a, b) = (device_bytes(first), device_bytes(other));
    if a != b {
        return Err(mismatch(
            first,
            &other.uri,
            format!("device size {a} bytes vs {b} bytes"),
        ));
    }
    if first.align_bytes != other.align_bytes {
        return Err(mismatch(
            first,
            &other.uri,
            format!(
                "block size {} vs {} bytes",
                first.align_bytes, other.align_bytes
            ),
        ));
    }
    let len = PROBE_BYTES.max(first.align_bytes).min(a) as usize;
    let mut offsets = vec![
        0,
        (a / 2) - (a / 2) % first.align_bytes.max(1),
        a - len as u64,
    ];
    offsets.dedup();
    let (mut x, mut y) = (vec![0u8; len], vec![0u8; len]);
    for off in offsets {
        read(first, &mut x, off)?;
        read(other, &mut y, off)?;
        if x != y {
            return Err(mismatch(
                first,
                &other.uri,
                format!("the {len} bytes at offset {off} differ"),
            ));
        }
    }
    Ok(())
}

/// The size of the whole device behind a network target (not the `--size` prefix).
fn device_bytes(t: &OpenTarget) -> u64 {
    match &t.backing {
        Backing::Nbd(n) => n.export_bytes,
        Backing::Iscsi(i) => i.lun_bytes,
        _ => t.size_bytes,
    }
}

fn read(t: &OpenTarget, buf: &mut [u8], off: u64) -> Result<(), TargetError> {
    match t.read_at(buf, off) {
        Some(Ok(())) => Ok(()),
        Some(Err(e)) => Err(TargetError::Unavailable {
            uri: t.uri.clone(),
            msg: format!(
                "reading {} bytes at offset {off} to compare paths: {e}",
                buf.len()
            ),
        }),
        None => Err(TargetError::Invalid {
            uri: t.uri.clone(),
            msg: "cannot be read to compare paths".into(),
        }),
    }
}
