//! Opening the further paths of a multipath target and proving that they lead to the
//! same device as path 0 before any I/O: the same kind of target (NBD or iSCSI), the
//! same size, and the same bytes in three probe blocks (the head, the middle, the
//! tail). A path to another device would make every benchmark figure a lie and every
//! write a corruption, so a mismatch is refused naming both paths.
//!
//! iSCSI LUNs are first compared by their logical-unit designators from VPD page
//! 0x83 (NAA, EUI-64, SCSI name, T10 vendor ID): two LUNs of one size and both
//! still zeroed are indistinguishable by content, but never by their names. The
//! size and content checks run as well.
//!
//! An SMB target's paths are the channels of one multichannel session (`--channels`,
//! `--path smb://…` naming further addresses of the server): the same file by
//! construction, since every channel carries the session's one open handle. Opening
//! binds them all once, so a server that cannot do it is found before any I/O.

use super::{open_one, Backing, OpenOptionsIo, OpenTarget, TargetError};
use crate::plan::model::TargetSpec;
use crate::plan::paths::MultipathSpec;
use std::sync::Arc;

/// The paths of a target beyond its own URI, and how to use them.
#[derive(Debug)]
pub struct Paths {
    pub spec: MultipathSpec,
    /// Paths 1.. (path 0 is the target itself); empty for an SMB target.
    pub extra: Vec<Arc<OpenTarget>>,
    /// An SMB target's channels, channel 0 first (empty for other targets).
    pub channels: Vec<SmbChannel>,
}

/// Where one SMB multichannel channel goes.
#[derive(Debug, Clone)]
pub struct SmbChannel {
    pub addr: std::net::SocketAddr,
    /// `smb://[USER@]ADDR:PORT/SHARE/PATH`, for the result.
    pub uri: String,
}

impl Paths {
    /// URIs of all paths, path 0 first.
    pub fn uris<'a>(&'a self, first: &'a OpenTarget) -> Vec<&'a str> {
        if !self.channels.is_empty() {
            return self.channels.iter().map(|c| c.uri.as_str()).collect();
        }
        std::iter::once(first.uri.as_str())
            .chain(self.extra.iter().map(|p| p.uri.as_str()))
            .collect()
    }

    /// `(uri, device identifier)` of all paths, path 0 first (for the result).
    pub fn described(&self, first: &OpenTarget) -> Vec<(String, Option<String>)> {
        if !self.channels.is_empty() {
            return self
                .channels
                .iter()
                .map(|c| (c.uri.clone(), None))
                .collect();
        }
        std::iter::once(first)
            .chain(self.extra.iter().map(|p| p.as_ref()))
            .map(|p| (p.uri.clone(), device_id(p)))
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
    if let Backing::Smb(s) = &first.backing {
        return Ok(Paths {
            spec: mp.clone(),
            extra: Vec::new(),
            channels: smb_channels(s, mp)?,
        });
    }
    if mp.channels.is_some() {
        return Err(TargetError::Invalid {
            uri: first.uri.clone(),
            msg: "--channels applies to smb:// targets (SMB3 multichannel)".into(),
        });
    }
    if !matches!(first.backing, Backing::Nbd(_) | Backing::Iscsi(_)) {
        return Err(TargetError::Invalid {
            uri: first.uri.clone(),
            msg: "several paths need a network target (nbd://, iscsi:// or smb://)".into(),
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
        channels: Vec::new(),
    })
}

/// The channels of an SMB target: one per `--path` address (the target's own first),
/// cycled up to `--channels`, or `--channels` over the interfaces the server
/// advertises. Every channel is bound once here to prove the server takes it.
#[cfg(feature = "smb")]
fn smb_channels(
    s: &super::smb::SmbTarget,
    mp: &MultipathSpec,
) -> Result<Vec<SmbChannel>, TargetError> {
    use super::smb::channels::ChannelPlan;
    let invalid = |uri: &str, msg: String| TargetError::Invalid {
        uri: uri.to_string(),
        msg,
    };
    let first = &s.spec;
    let no_address = |uri: &str, source| TargetError::Address {
        uri: uri.to_string(),
        source,
    };
    let mut addrs = vec![super::smb::address(first).map_err(|e| no_address(&first.uri, e))?];
    for uri in &mp.paths {
        let p = super::smb::parse(uri).map_err(|source| TargetError::Uri {
            uri: uri.clone(),
            source,
        })?;
        if (&p.share, &p.path, &p.user) != (&first.share, &first.path, &first.user) {
            return Err(mismatch_smb(first, uri));
        }
        let a = super::smb::address(&p).map_err(|e| no_address(uri, e))?;
        if addrs.contains(&a) {
            return Err(invalid(
                uri,
                format!("address {a} given twice for target '{}'", first.uri),
            ));
        }
        addrs.push(a);
    }
    let given = addrs.len();
    let n = mp.channels.map_or(given, |c| c as usize);
    if n < given {
        return Err(invalid(
            &first.uri,
            format!("--channels {n} is fewer than the {given} addresses given (the target and each --path)"),
        ));
    }
    let plan = if given > 1 {
        ChannelPlan::Addresses((0..n).map(|i| addrs[i % given]).collect())
    } else {
        ChannelPlan::Advertised(n)
    };
    let set = s
        .open_channels(&plan)
        .map_err(|e| TargetError::Unavailable {
            uri: first.uri.clone(),
            msg: format!("multichannel: {e}"),
        })?;
    for i in 0..set.addrs.len() {
        set.channel(i, std::time::Duration::MAX)
            .map_err(|e| TargetError::Unavailable {
                uri: first.uri.clone(),
                msg: format!("multichannel: {e}"),
            })?;
    }
    Ok(set
        .addrs
        .iter()
        .map(|&addr| SmbChannel {
            addr,
            uri: super::smb::uri_at(first, addr),
        })
        .collect())
}

/// Without the `smb` feature no SMB target opens, so this is never reached.
#[cfg(not(feature = "smb"))]
fn smb_channels(
    s: &super::smb::SmbTarget,
    _mp: &MultipathSpec,
) -> Result<Vec<SmbChannel>, TargetError> {
    match *s {}
}

#[cfg(feature = "smb")]
fn mismatch_smb(first: &crate::plan::model::SmbSpec, other: &str) -> TargetError {
    TargetError::PathMismatch {
        first: first.uri.clone(),
        other: other.to_string(),
        why: "a channel must name the same user, share and file as the target; only the address may differ".into(),
    }
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
    same_device_id(first, other)?;
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

/// iSCSI: refuses `other` when both LUNs name themselves (VPD page 0x83) and the
/// names differ. A LUN naming itself on one path and not on the other is refused
/// too: the same LUN answers the same INQUIRY on every path.
fn same_device_id(first: &OpenTarget, other: &OpenTarget) -> Result<(), TargetError> {
    let (Backing::Iscsi(a), Backing::Iscsi(b)) = (&first.backing, &other.backing) else {
        return Ok(());
    };
    let show = |id: &Option<super::iscsi::vpd::DeviceId>| match id {
        Some(id) => format!("device identifier {}", id.describe()),
        None => "no device identifier".to_string(),
    };
    match (&a.device_id, &b.device_id) {
        (None, None) => Ok(()),
        (x, y) if x == y => Ok(()),
        (x, y) => Err(mismatch(
            first,
            &other.uri,
            format!("VPD page 0x83: {} vs {}", show(x), show(y)),
        )),
    }
}

/// The device identifier path `t` reported (iSCSI VPD page 0x83), for the result.
pub fn device_id(t: &OpenTarget) -> Option<String> {
    match &t.backing {
        Backing::Iscsi(i) => i.device_id.as_ref().and_then(|d| d.primary()),
        _ => None,
    }
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
