//! iSCSI targets: `iscsi://HOST[:PORT]/IQN/LUN`. Parsing checks the URI's shape
//! without I/O; opening logs in once through libiscsi to learn the LUN's size and
//! block size (READ CAPACITY 16), its device identifier (INQUIRY, VPD page 0x83: see
//! [`vpd`]) and to look at its head before anything is written.
//! That session stays with the target for the `--verify-after` pass; the engine's
//! workers log in with their own. CHAP credentials come only from `--credentials
//! FILE` or the environment (`IOSCOPE_ISCSI_USER`, `IOSCOPE_ISCSI_PASSWORD`), never
//! from the URI, so they
//! never reach results or messages.

pub mod ffi;
pub mod vpd;

use super::uri::{split_host_port, UriError};
use super::TargetError;
use crate::plan::model::IscsiSpec;
use std::sync::Mutex;

/// The iSCSI port when a URI gives none.
pub const DEFAULT_PORT: u16 = 3260;

/// Parses `iscsi://HOST[:PORT]/IQN/LUN` (`%XX` escapes in the IQN are decoded, as
/// libiscsi's own URLs allow).
pub fn parse(uri: &str) -> Result<IscsiSpec, UriError> {
    let rest = uri
        .strip_prefix("iscsi://")
        .ok_or(UriError::Shape("expected iscsi://HOST[:PORT]/IQN/LUN"))?;
    if rest.contains('?') {
        return Err(UriError::Secret("iscsi:// URIs take no query parameters (CHAP credentials come from IOSCOPE_ISCSI_USER and IOSCOPE_ISCSI_PASSWORD)"));
    }
    let (authority, path) = rest
        .split_once('/')
        .ok_or(UriError::Shape("expected iscsi://HOST[:PORT]/IQN/LUN"))?;
    if authority.contains('@') {
        return Err(UriError::Secret("user names or passwords do not belong in the URI; set IOSCOPE_ISCSI_USER and IOSCOPE_ISCSI_PASSWORD"));
    }
    let (host, port) = split_host_port(authority, DEFAULT_PORT)?;
    let (iqn, lun) = path.rsplit_once('/').ok_or(UriError::Shape(
        "expected iscsi://HOST[:PORT]/IQN/LUN (the LUN is missing)",
    ))?;
    let lun: u32 = lun
        .parse()
        .ok()
        .filter(|&l| l < 16384)
        .ok_or_else(|| UriError::Lun(lun.to_string()))?;
    let iqn = percent_decode(iqn)?;
    if iqn.is_empty() {
        return Err(UriError::Shape("no target name (IQN)"));
    }
    let portal = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    Ok(IscsiSpec {
        uri: uri.to_string(),
        portal,
        iqn,
        lun,
    })
}

fn percent_decode(s: &str) -> Result<String, UriError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| UriError::Escape(s.to_string()))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| UriError::Utf8(s.to_string()))
}

/// CHAP credentials: from `--credentials FILE` when given (the same
/// `username = …` / `password = …` file SMB reads, mode 0600), else from
/// `IOSCOPE_ISCSI_USER` / `IOSCOPE_ISCSI_PASSWORD`.
pub fn chap_from_env() -> Result<Option<ffi::Chap>, ffi::IscsiError> {
    use crate::target::smb::credentials;
    if let Some(p) = credentials::options().credentials_file {
        // IscsiError keeps its causes as text (its callers format it into messages):
        // the whole chain goes in.
        let (user, password) = credentials::read_file(&p).map_err(|e| crate::errors::chain(&e))?;
        let user = user.ok_or_else(|| {
            format!(
                "--credentials '{}': no 'username =' line (CHAP needs one)",
                p.display()
            )
        })?;
        return Ok(Some(ffi::Chap { user, password }));
    }
    match (
        std::env::var("IOSCOPE_ISCSI_USER").ok(),
        std::env::var("IOSCOPE_ISCSI_PASSWORD").ok(),
    ) {
        (None, None) => Ok(None),
        (Some(user), Some(password)) => Ok(Some(ffi::Chap { user, password })),
        _ => Err(
            "set both IOSCOPE_ISCSI_USER and IOSCOPE_ISCSI_PASSWORD for CHAP, or neither".into(),
        ),
    }
}

/// Logs in to the LUN `spec` names, with CHAP from the environment.
pub fn connect(spec: &IscsiSpec) -> Result<ffi::Session, ffi::IscsiError> {
    connect_within(spec, 0)
}

/// [`connect`] given at most `limit_ns` (0: no limit; [`ffi::Session::connect_within`]).
pub fn connect_within(spec: &IscsiSpec, limit_ns: u64) -> Result<ffi::Session, ffi::IscsiError> {
    let chap = chap_from_env()?;
    ffi::Session::connect_within(spec, chap.as_ref(), limit_ns)
}

/// Starts the same login without blocking ([`ffi::Session::start_connect`]).
pub fn start_connect(spec: &IscsiSpec) -> Result<ffi::Session, ffi::IscsiError> {
    let chap = chap_from_env()?;
    ffi::Session::start_connect(spec, chap.as_ref())
}

/// An opened iSCSI LUN.
pub struct IscsiTarget {
    pub spec: IscsiSpec,
    /// Logical block size in bytes: offsets and lengths must be multiples of it.
    pub block_bytes: u32,
    /// The whole LUN's size (a run may use a prefix of it).
    pub lun_bytes: u64,
    /// The LUN's logical-unit designators from VPD page 0x83; `None` when the LUN
    /// does not answer that INQUIRY or names itself with none.
    pub device_id: Option<vpd::DeviceId>,
    /// The session opened to inspect the LUN, kept for the verify pass.
    session: Mutex<ffi::Session>,
}

impl std::fmt::Debug for IscsiTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IscsiTarget")
            .field("spec", &self.spec)
            .field("block_bytes", &self.block_bytes)
            .field("device_id", &self.device_id)
            .finish()
    }
}

impl IscsiTarget {
    /// Blocking read through the inspection session (verify pass). `offset` and
    /// `buf.len()` are multiples of the block size.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let s = self.session.lock().unwrap_or_else(|p| p.into_inner());
        read_blocking(&s, buf, offset, self.block_bytes)
            .map_err(|e| std::io::Error::other(format!("{}: {e}", self.spec.portal)))
    }
}

/// The tag of the one command a blocking call has in flight (workers use others).
const BLOCKING_TAG: u64 = u64::MAX >> 1;

/// Reads `buf` at `offset` through `s`, waiting for the answer (30 s at most).
fn read_blocking(
    s: &ffi::Session,
    buf: &mut [u8],
    offset: u64,
    block: u32,
) -> Result<(), ffi::IscsiError> {
    // SAFETY: buf outlives wait_blocking below, which runs until the command
    // completes or the session fails (then its commands are cancelled).
    unsafe {
        s.read16(
            buf.as_mut_ptr(),
            buf.len() as u32,
            offset / block as u64,
            block,
            BLOCKING_TAG,
        )?
    };
    wait_blocking(s, "READ (16)")
}

/// Asks the LUN for its Device Identification VPD page (0x83) and parses it.
pub fn read_device_id(s: &ffi::Session) -> Result<vpd::DeviceId, ffi::IscsiError> {
    let mut page = vec![0u8; vpd::PAGE_MAX_BYTES];
    // SAFETY: page outlives wait_blocking below (see read_blocking).
    unsafe { s.inquiry_vpd(&mut page, vpd::PAGE_DEVICE_ID, BLOCKING_TAG)? };
    wait_blocking(s, "INQUIRY (VPD page 0x83)")?;
    vpd::parse(&page).map_err(|e| format!("INQUIRY (VPD page 0x83): {e}").into())
}

/// Services `s` until the command tagged [`BLOCKING_TAG`] completes (30 s at most).
fn wait_blocking(s: &ffi::Session, what: &str) -> Result<(), ffi::IscsiError> {
    const TAG: u64 = BLOCKING_TAG;
    let deadline = crate::clock::now_ns() + 30_000_000_000;
    let mut done = Vec::new();
    loop {
        let mut p = libc::pollfd {
            fd: s.fd(),
            events: s.which_events(),
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, 100) };
        s.service(if n > 0 { p.revents } else { 0 })?;
        ffi::take_done(&mut done);
        if let Some(&(_, status)) = done.iter().find(|(t, _)| *t == TAG) {
            return if status == ffi::STATUS_GOOD {
                Ok(())
            } else {
                Err(format!("{what} failed with SCSI status {status:#x}: {}", s.error()).into())
            };
        }
        done.clear();
        if crate::clock::now_ns() > deadline {
            return Err(format!("no answer to {what} within 30 s").into());
        }
    }
}

/// What opening a LUN learnt: the target and the LUN's size.
pub struct Opened {
    pub target: IscsiTarget,
    pub lun_bytes: u64,
}

/// Logs in, learns the LUN's size and block size, and refuses writes that would
/// destroy a partition table or filesystem without `force`.
pub fn open(spec: &IscsiSpec, writes: bool, force: bool) -> Result<Opened, TargetError> {
    let unavailable = |msg: String| TargetError::Unavailable {
        uri: spec.uri.clone(),
        msg,
    };
    ffi::available().map_err(|e| unavailable(e.to_string()))?;
    let session = connect(spec).map_err(|e| {
        unavailable(format!(
            "cannot log in to {} LUN {} at {}: {e}",
            spec.iqn, spec.lun, spec.portal
        ))
    })?;
    let (blocks, block_bytes) = session
        .read_capacity()
        .map_err(|e| unavailable(format!("{}: {e}", spec.portal)))?;
    if block_bytes == 0 || !block_bytes.is_power_of_two() {
        return Err(unavailable(format!(
            "{}: the LUN reports a block size of {block_bytes} bytes",
            spec.portal
        )));
    }
    let lun_bytes = blocks * block_bytes as u64;
    if writes && !force {
        let want = lun_bytes.min(128 * 1024) as usize;
        let mut head = vec![0u8; want - want % block_bytes as usize];
        if !head.is_empty() {
            read_blocking(&session, &mut head, 0, block_bytes).map_err(|e| {
                unavailable(format!(
                    "{}: reading the LUN's first bytes: {e}",
                    spec.portal
                ))
            })?;
        }
        if let Some(s) = super::safety::signature(&head) {
            return Err(TargetError::Unsafe {
                path: spec.uri.clone().into(),
                reason: format!("it carries a {s} signature"),
            });
        }
    }
    // A LUN without the page (rare: SPC-3 made it mandatory) is still usable; paths
    // to it are then compared by size and content only.
    let device_id = read_device_id(&session)
        .ok()
        .filter(|id| !id.designators.is_empty());
    Ok(Opened {
        target: IscsiTarget {
            spec: spec.clone(),
            block_bytes,
            lun_bytes,
            device_id,
            session: Mutex::new(session),
        },
        lun_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_iscsi_uris() {
        let s = parse("iscsi://127.0.0.1:3261/iqn.2026-11.io.ioscope:t1/1").unwrap();
        assert_eq!(s.portal, "127.0.0.1:3261");
        assert_eq!(s.iqn, "iqn.2026-11.io.ioscope:t1");
        assert_eq!(s.lun, 1);
        let s = parse("iscsi://h/iqn.x%3Ay/0").unwrap();
        assert_eq!((s.portal.as_str(), s.iqn.as_str()), ("h:3260", "iqn.x:y"));
    }

    #[test]
    fn refuses_malformed_iscsi_uris() {
        for (uri, want) in [
            ("iscsi://h", "IQN/LUN"),
            ("iscsi://h/iqn", "LUN is missing"),
            ("iscsi://h/iqn/x", "bad LUN"),
            ("iscsi://h//1", "no target name"),
            ("iscsi://u%p@h/iqn/1", "IOSCOPE_ISCSI_USER"),
            ("iscsi://h/iqn/1?user=x", "no query"),
            ("iscsi://:3260/iqn/1", "no host"),
            ("iscsi://h/iq%zz/1", "%-escape"),
        ] {
            let e = parse(uri).unwrap_err();
            assert!(e.to_string().contains(want), "{uri}: {e}");
        }
    }
}
