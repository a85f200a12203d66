//! Targets: opening what a plan names — a file, a block device, `mem:SIZE`,
//! `null:SIZE` — and learning its size and alignment rules before any I/O starts, so
//! that a misaligned block size under O_DIRECT is refused up front rather than
//! failing with EINVAL mid-run. Safety checks for block devices live in `safety`.

pub mod dm_paths;
pub mod dylib;
pub mod fileset;
pub mod fileset_bytes;
pub mod fill;
pub mod iscsi;
pub mod multipath;
pub mod nbd;
pub mod nfs;
pub mod retry;
pub mod safety;
pub mod sim;
pub mod smb;
pub mod uri;

use crate::plan::model::{TargetKind, TargetSpec};
use crate::plan::units::parse_size;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Why a target could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("target '{uri}': {msg}")]
    Invalid { uri: String, msg: String },
    /// A network target URI (`nbd://`, `iscsi://`, `smb://`) that does not parse.
    #[error("target '{uri}'")]
    Uri { uri: String, source: uri::UriError },
    /// No credentials for a target that needs them (SMB).
    #[error("target '{uri}'")]
    Credentials {
        uri: String,
        source: smb::credentials::CredentialsError,
    },
    /// A server name that gives no address (SMB multichannel paths).
    #[error("target '{uri}'")]
    Address {
        uri: String,
        source: smb::AddressError,
    },
    #[error("target '{uri}'")]
    Sim {
        uri: String,
        source: sim::SimSpecError,
    },
    #[error("target '{}': {op}", path.display())]
    Io {
        path: PathBuf,
        op: &'static str,
        source: std::io::Error,
    },
    /// The target exists in principle but cannot be reached here (library missing,
    /// server down): a run-time failure (exit 1), not bad input.
    #[error("target '{uri}': {msg}")]
    Unavailable { uri: String, msg: String },
    /// A further path of a multipath target leads somewhere else than path 0.
    #[error("target '{first}': path '{other}' does not lead to the same device ({why}); refusing to use them as paths of one target")]
    PathMismatch {
        first: String,
        other: String,
        why: String,
    },
    #[error("target '{}': {reason}. Refusing to write to it; pass --force if you really mean to destroy its contents", path.display())]
    Unsafe { path: PathBuf, reason: String },
}

/// Parses a target URI into its kind. No I/O.
pub fn parse_uri(uri: &str) -> Result<TargetKind, TargetError> {
    let invalid = |msg: String| TargetError::Invalid {
        uri: uri.to_string(),
        msg,
    };
    if let Some(rest) = uri.strip_prefix("mem:") {
        let size = parse_size(rest).map_err(|e| invalid(format!("bad size: {e}")))?;
        return Ok(TargetKind::Mem(size));
    }
    if let Some(rest) = uri.strip_prefix("null:") {
        let size = parse_size(rest).map_err(|e| invalid(format!("bad size: {e}")))?;
        return Ok(TargetKind::Null(size));
    }
    if let Some(rest) = uri.strip_prefix("sim:") {
        return sim::parse_spec(rest)
            .map(TargetKind::Sim)
            .map_err(|source| TargetError::Sim {
                uri: uri.to_string(),
                source,
            });
    }
    let bad_uri = |source| TargetError::Uri {
        uri: uri.to_string(),
        source,
    };
    if uri.starts_with("nbd") && uri.contains("://") {
        return nbd::parse(uri).map(TargetKind::Nbd).map_err(bad_uri);
    }
    if uri.starts_with("iscsi://") {
        return iscsi::parse(uri).map(TargetKind::Iscsi).map_err(bad_uri);
    }
    if let Some(rest) = uri.strip_prefix("files:") {
        return crate::plan::fileset::FileSetSpec::parse(rest)
            .map(TargetKind::Files)
            .map_err(|e| invalid(e.to_string()));
    }
    if uri.starts_with("smb://") {
        return smb::parse(uri).map(TargetKind::Smb).map_err(bad_uri);
    }
    if uri.starts_with("nfs://") {
        return nfs::parse(uri).map(TargetKind::Nfs).map_err(bad_uri);
    }
    if uri.is_empty() {
        return Err(invalid("empty target".into()));
    }
    if let Some((scheme, _)) = uri.split_once("://") {
        return Err(invalid(format!(
            "the '{scheme}://' target type is not supported yet (supported: a path, mem:SIZE, null:SIZE, sim:SIZE, nbd://HOST[:PORT][/EXPORT], nbd+unix:///EXPORT?socket=PATH, iscsi://HOST[:PORT]/IQN/LUN, smb://[USER@]HOST[:PORT]/SHARE/PATH, nfs://HOST[:PORT]/EXPORT/PATH, files:DIR?count=N)"
        )));
    }
    Ok(TargetKind::Path(PathBuf::from(uri)))
}

/// How a target's bytes are reached.
#[derive(Debug)]
pub enum Backing {
    /// A file or block device; or a `files:` set read and written as bytes, whose
    /// `file` and `path` are then its first file's (what the engine choice and the
    /// checks look at) and whose I/O goes through `set`.
    File {
        file: File,
        path: PathBuf,
        is_block: bool,
        set: Option<Box<fileset_bytes::ByteFiles>>,
    },
    Mem(MemStore),
    Null,
    /// A simulated device: its shared queue state (see `crate::engine::sim`).
    Sim(sim::SimDevice),
    /// An NBD export reached through libnbd.
    Nbd(nbd::NbdTarget),
    /// An iSCSI LUN reached through libiscsi.
    Iscsi(iscsi::IscsiTarget),
    /// A file on an SMB share (cargo feature `smb`).
    Smb(Box<smb::SmbTarget>),
    /// A file on an NFS export reached through libnfs.
    Nfs(Box<nfs::NfsTarget>),
    /// N files in a directory, for the file-operation engines.
    Files(fileset::FileSetTarget),
}

/// An opened target, shared by every worker that issues I/O to it.
#[derive(Debug)]
pub struct OpenTarget {
    pub name: String,
    pub uri: String,
    pub backing: Backing,
    pub size_bytes: u64,
    /// O_DIRECT is in effect.
    pub direct: bool,
    /// Offsets and lengths must be multiples of this (512 or the device's logical
    /// block size under O_DIRECT; 1 otherwise).
    pub align_bytes: u64,
    /// Further paths to the same storage, when the target has several.
    pub multipath: Option<multipath::Paths>,
}

impl OpenTarget {
    /// The descriptor of a file or device target; of a byte-I/O file set, its first
    /// file's (engines map each offset with [`OpenTarget::byte_files`]).
    pub fn fd(&self) -> Option<RawFd> {
        match &self.backing {
            Backing::File { file, .. } => Some(file.as_raw_fd()),
            _ => None,
        }
    }
    /// The files of a `files:` set read and written as bytes.
    pub fn byte_files(&self) -> Option<&fileset_bytes::ByteFiles> {
        match &self.backing {
            Backing::File { set: Some(s), .. } => Some(s),
            _ => None,
        }
    }

    /// Whether the target's data outlives this process (files, devices, network
    /// targets; not mem:, null:, sim:), so it can be checked after the fact.
    pub fn is_persistent(&self) -> bool {
        matches!(
            self.backing,
            Backing::File { .. }
                | Backing::Nbd(_)
                | Backing::Iscsi(_)
                | Backing::Smb(_)
                | Backing::Nfs(_)
        )
    }

    /// Reads `buf.len()` bytes at `offset` outside any engine (the after-the-fact
    /// `verify` command); `None` for targets that are not [`OpenTarget::is_persistent`].
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> Option<std::io::Result<()>> {
        use std::os::unix::fs::FileExt;
        match &self.backing {
            Backing::File { set: Some(s), .. } => Some(s.read_exact_at(buf, offset)),
            Backing::File { file, .. } => Some(file.read_exact_at(buf, offset)),
            Backing::Nbd(n) => Some(n.read_at(buf, offset)),
            Backing::Iscsi(i) => Some(i.read_at(buf, offset)),
            Backing::Smb(s) => Some(s.read_at(buf, offset)),
            Backing::Nfs(n) => Some(n.read_at(buf, offset)),
            Backing::Mem(_) | Backing::Null | Backing::Sim(_) | Backing::Files(_) => None,
        }
    }

    pub fn is_block_device(&self) -> bool {
        matches!(self.backing, Backing::File { is_block: true, .. })
    }

    /// The sizes of write that can land atomically (RWF_ATOMIC), smallest and largest,
    /// as statx(STATX_WRITE_ATOMIC) reports them for this file or device (Linux
    /// 6.11+); `None` when it has none (or is not a file or device).
    pub fn atomic_write_limits(&self) -> Option<(u64, u64)> {
        let Backing::File { file, .. } = &self.backing else {
            return None;
        };
        // SAFETY: statx fills the zeroed struct; the empty path with AT_EMPTY_PATH
        // names the open descriptor.
        let mut stx: libc::statx = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::statx(
                file.as_raw_fd(),
                c"".as_ptr(),
                libc::AT_EMPTY_PATH,
                libc::STATX_WRITE_ATOMIC,
                &mut stx,
            )
        };
        const STATX_ATTR_WRITE_ATOMIC: u64 = 0x0040_0000;
        let ok = r == 0
            && stx.stx_mask & libc::STATX_WRITE_ATOMIC != 0
            && stx.stx_attributes & STATX_ATTR_WRITE_ATOMIC != 0
            && stx.stx_atomic_write_unit_max > 0;
        ok.then(|| {
            (
                u64::from(stx.stx_atomic_write_unit_min),
                u64::from(stx.stx_atomic_write_unit_max),
            )
        })
    }
}

/// Options for [`open`].
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenOptionsIo {
    /// Some workload writes to this target.
    pub writes: bool,
    /// The user passed --force.
    pub force: bool,
    /// Working set end needed (offset + size) for creating or extending a file.
    pub min_size_bytes: u64,
    /// Open with O_DSYNC: each write is stable when it completes (`--write-through`).
    pub write_through: bool,
    /// A `files:` target: what the run does with it (`None`: an engine that cannot
    /// use one, refused by the run's checks).
    pub set_use: Option<fileset::SetUse>,
    /// A `files:` target's slot per file: the block size of its workloads.
    pub slot_bytes: u64,
    /// Create a missing file as a hole of the working set's length rather than
    /// filled with data (the falloc and ftruncate engines allocate it themselves).
    pub sparse: bool,
    /// With `sparse`: reserve the hole's blocks with fallocate(2), still unwritten
    /// (`create = "allocated"`).
    pub allocate: bool,
}

/// Opens a target: creates a missing file at the requested size, refuses unsafe
/// writes to block devices, decides O_DIRECT, and learns size and alignment.
pub fn open(spec: &TargetSpec, opts: OpenOptionsIo) -> Result<OpenTarget, TargetError> {
    let mut t = open_one(spec, opts)?;
    if let Some(mp) = &spec.multipath {
        t.multipath = Some(multipath::open_paths(&t, spec, mp, opts)?);
    }
    Ok(t)
}

/// Opens one path of a target (its own URI).
fn open_one(spec: &TargetSpec, opts: OpenOptionsIo) -> Result<OpenTarget, TargetError> {
    match parse_uri(&spec.uri)? {
        TargetKind::Mem(size) => Ok(OpenTarget {
            name: spec.name.clone(),
            uri: spec.uri.clone(),
            backing: Backing::Mem(MemStore::new(size).map_err(|e| TargetError::Io {
                path: PathBuf::from(&spec.uri),
                op: "allocating memory",
                source: e,
            })?),
            size_bytes: size,
            direct: false,
            align_bytes: 1,
            multipath: None,
        }),
        TargetKind::Null(size) => Ok(OpenTarget {
            name: spec.name.clone(),
            uri: spec.uri.clone(),
            backing: Backing::Null,
            size_bytes: size,
            direct: false,
            align_bytes: 1,
            multipath: None,
        }),
        TargetKind::Sim(sim) => {
            // The run chose the clock before opening (crate::run::timebase): a device
            // on virtual time must not take its origin from the real clock.
            if sim.virtual_time && !crate::clock::is_virtual() {
                return Err(TargetError::Invalid {
                    uri: spec.uri.clone(),
                    msg: "time=virtual needs the process on virtual time, which only a run \
                          sets up (before it opens its targets)"
                        .into(),
                });
            }
            Ok(OpenTarget {
                name: spec.name.clone(),
                uri: spec.uri.clone(),
                size_bytes: sim.size_bytes,
                backing: Backing::Sim(sim::SimDevice::new(sim)),
                direct: false,
                align_bytes: 1,
                multipath: None,
            })
        }
        TargetKind::Nbd(n) => open_nbd(spec, &n, opts),
        TargetKind::Iscsi(i) => open_iscsi(spec, &i, opts),
        TargetKind::Smb(s) => open_smb(spec, &s, opts),
        TargetKind::Nfs(n) => open_nfs(spec, &n, opts),
        TargetKind::Path(path) => open_path(spec, &path, opts),
        TargetKind::Files(set) if opts.set_use == Some(fileset::SetUse::Bytes) => {
            fileset_bytes::open(spec, &set, opts)
        }
        TargetKind::Files(set) => Ok(OpenTarget {
            name: spec.name.clone(),
            uri: spec.uri.clone(),
            size_bytes: set.count.saturating_mul(opts.slot_bytes.max(1)),
            backing: Backing::Files(fileset::open(&spec.uri, &set, opts.set_use)?),
            direct: false,
            align_bytes: 1,
            multipath: None,
        }),
    }
}

/// An NBD export: its size is the server's, or the `--size` prefix of it.
fn open_nbd(
    spec: &TargetSpec,
    n: &crate::plan::model::NbdSpec,
    opts: OpenOptionsIo,
) -> Result<OpenTarget, TargetError> {
    let opened = nbd::open(n, opts.writes, opts.force)?;
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
    Ok(OpenTarget {
        name: spec.name.clone(),
        uri: spec.uri.clone(),
        backing: Backing::Nbd(opened.target),
        size_bytes,
        direct: false,
        align_bytes: 1,
        multipath: None,
    })
}

/// A file on an SMB share, created or grown to the working set like a local file.
fn open_smb(
    spec: &TargetSpec,
    s: &crate::plan::model::SmbSpec,
    opts: OpenOptionsIo,
) -> Result<OpenTarget, TargetError> {
    let want = opts.min_size_bytes.max(spec.size_bytes.unwrap_or(0));
    let opened = smb::open(s, opts.writes, want, opts.write_through)?;
    Ok(OpenTarget {
        name: spec.name.clone(),
        uri: spec.uri.clone(),
        backing: Backing::Smb(Box::new(opened.target)),
        size_bytes: spec.size_bytes.unwrap_or(opened.file_bytes),
        direct: false,
        align_bytes: 1,
        multipath: None,
    })
}

/// A file on an NFS export, created or grown to the working set like a local file.
fn open_nfs(
    spec: &TargetSpec,
    n: &crate::plan::model::NfsSpec,
    opts: OpenOptionsIo,
) -> Result<OpenTarget, TargetError> {
    let want = opts.min_size_bytes.max(spec.size_bytes.unwrap_or(0));
    let opened = nfs::open(n, opts.writes, want)?;
    Ok(OpenTarget {
        name: spec.name.clone(),
        uri: spec.uri.clone(),
        backing: Backing::Nfs(Box::new(opened.target)),
        size_bytes: spec.size_bytes.unwrap_or(opened.file_bytes),
        direct: false,
        align_bytes: 1,
        multipath: None,
    })
}

/// An iSCSI LUN: its size is the LUN's, or the `--size` prefix of it; every I/O must
/// be whole blocks.
fn open_iscsi(
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
        name: spec.name.clone(),
        uri: spec.uri.clone(),
        backing: Backing::Iscsi(opened.target),
        size_bytes,
        direct: false,
        align_bytes: block,
        multipath: None,
    })
}

fn io_err<'a>(path: &'a Path, op: &'static str) -> impl FnOnce(std::io::Error) -> TargetError + 'a {
    move |source| TargetError::Io {
        path: path.to_path_buf(),
        op,
        source,
    }
}

/// What opening a target will find or make, learned with no side effect: nothing is
/// created, extended, allocated, or switched (a `sim:` target's virtual time is not
/// turned on). The runner checks a plan against this before [`open`] creates or
/// extends anything, so a rejected command line leaves no file behind.
#[derive(Debug, Clone)]
pub struct Probe {
    pub uri: String,
    pub kind: ProbeKind,
    /// Size the target has, or will have once [`open`] creates or extends it.
    pub size_bytes: u64,
    /// O_DIRECT will be in effect.
    pub direct: bool,
    /// Offsets and lengths must be multiples of this; `None` when it cannot be known
    /// before the file exists (then [`open`]'s result is checked again).
    pub align_bytes: Option<u64>,
    /// A file's length before the run, `None` when [`open`] will create it. Lets
    /// the runner undo what it created or extended if a later check fails.
    pub existing_len: Option<u64>,
}

/// The kind of storage a probed target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeKind {
    File,
    BlockDevice,
    Mem,
    Null,
    Sim,
    /// A network block device: nothing local is created, whatever the plan.
    Nbd,
    /// An iSCSI LUN: whole blocks only (its block size is `align_bytes`).
    Iscsi,
    /// A file on an SMB share: created or grown on the server, never locally.
    Smb,
    /// A file on an NFS export: created or grown on the server, never locally.
    Nfs,
    /// A set of files in a directory (`files:`), for the file-operation engines.
    Files,
}

/// Learns what [`open`] would find, without creating, extending or allocating
/// anything. Runs every check [`open`] runs (directory, device safety, O_DIRECT
/// support), so a target that passes here fails in [`open`] only on I/O errors.
pub fn probe(spec: &TargetSpec, opts: OpenOptionsIo) -> Result<Probe, TargetError> {
    let fixed = |kind, size_bytes| Probe {
        uri: spec.uri.clone(),
        kind,
        size_bytes,
        direct: false,
        align_bytes: Some(1),
        existing_len: None,
    };
    match parse_uri(&spec.uri)? {
        TargetKind::Mem(size) => Ok(fixed(ProbeKind::Mem, size)),
        TargetKind::Null(size) => Ok(fixed(ProbeKind::Null, size)),
        TargetKind::Sim(sim) => Ok(fixed(ProbeKind::Sim, sim.size_bytes)),
        // The size is the server's: learn it by connecting (the connection is
        // dropped at once; nothing is written).
        TargetKind::Nbd(n) => Ok(fixed(ProbeKind::Nbd, open_nbd(spec, &n, opts)?.size_bytes)),
        TargetKind::Iscsi(_) => {
            let t = open(spec, opts)?;
            Ok(Probe {
                align_bytes: Some(t.align_bytes),
                ..fixed(ProbeKind::Iscsi, t.size_bytes)
            })
        }
        // Connects and authenticates (a wrong password fails here, once), looks the
        // file up, and creates nothing.
        TargetKind::Smb(s) => {
            let want = opts.min_size_bytes.max(spec.size_bytes.unwrap_or(0));
            let size = smb::probe(&s, want)?;
            Ok(fixed(ProbeKind::Smb, spec.size_bytes.unwrap_or(size)))
        }
        // Mounts the export and looks the file up; creates nothing.
        TargetKind::Nfs(n) => {
            let want = opts.min_size_bytes.max(spec.size_bytes.unwrap_or(0));
            let size = nfs::probe(&n, want)?;
            Ok(fixed(ProbeKind::Nfs, spec.size_bytes.unwrap_or(size)))
        }
        TargetKind::Path(path) => probe_path(spec, &path, opts),
        TargetKind::Files(set) if opts.set_use == Some(fileset::SetUse::Bytes) => {
            fileset_bytes::probe(spec, &set, opts)
        }
        TargetKind::Files(set) => {
            fileset::probe(&spec.uri, &set, opts.set_use)?;
            Ok(fixed(
                ProbeKind::Files,
                set.count.saturating_mul(opts.slot_bytes.max(1)),
            ))
        }
    }
}

fn probe_path(spec: &TargetSpec, path: &Path, opts: OpenOptionsIo) -> Result<Probe, TargetError> {
    let invalid = |msg: String| TargetError::Invalid {
        uri: spec.uri.clone(),
        msg,
    };
    let want_size = opts.min_size_bytes.max(spec.size_bytes.unwrap_or(0));
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(_) if spec.create == crate::plan::model::FileCreate::Never => {
            return Err(invalid(
                "does not exist, and its target's create = \"never\" (fio's \
                 allow_file_create=0) forbids creating it"
                    .into(),
            ))
        }
        Err(_) => return probe_new_file(spec, path, want_size),
    };
    let is_block = meta.file_type().is_block_device();
    if meta.is_dir() {
        return Err(invalid("is a directory; name a file inside it".into()));
    }
    if !is_block && !meta.is_file() {
        return Err(invalid(
            "is neither a regular file nor a block device".into(),
        ));
    }
    if is_block && opts.writes && !opts.force {
        if let Some(reason) = safety::block_device_in_use(path).map_err(io_err(path, "checking"))? {
            return Err(TargetError::Unsafe {
                path: path.to_path_buf(),
                reason,
            });
        }
    }
    // Read-only opens: they change nothing, and tell O_DIRECT support and geometry.
    let want = spec
        .direct
        .or_else(|| (!is_block && in_ram_filesystem(path)).then_some(false));
    let ro = OpenOptionsIo::default();
    let direct_file = match want {
        Some(false) => None,
        want => match open_file(path, ro, true) {
            Ok(f) => Some(f),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && want.is_none() => None,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                return Err(invalid(
                    "this filesystem does not support O_DIRECT; use --direct false".into(),
                ))
            }
            Err(e) => return Err(io_err(path, "opening")(e)),
        },
    };
    let direct = direct_file.is_some();
    let file = match direct_file {
        Some(f) => f,
        None => open_file(path, ro, false).map_err(io_err(path, "opening"))?,
    };
    let len = if is_block {
        block_size_bytes(&file).map_err(io_err(path, "reading device size"))?
    } else {
        meta.len()
    };
    Ok(Probe {
        uri: spec.uri.clone(),
        kind: if is_block {
            ProbeKind::BlockDevice
        } else {
            ProbeKind::File
        },
        size_bytes: if is_block { len } else { len.max(want_size) },
        direct,
        align_bytes: Some(alignment(&file, path, direct, is_block)),
        existing_len: Some(len),
    })
}

/// A file [`open`] would create: its directory must exist, its size must be known,
/// and O_DIRECT support and alignment are learned from an unnamed O_TMPFILE inode in
/// that directory, which vanishes when closed (nothing visible is created).
fn probe_new_file(spec: &TargetSpec, path: &Path, size: u64) -> Result<Probe, TargetError> {
    let invalid = |msg: String| TargetError::Invalid {
        uri: spec.uri.clone(),
        msg,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // First, so a target sized to fill its filesystem (whose size comes from the
    // directory's filesystem) names the missing directory.
    if !dir.is_dir() {
        return Err(invalid(format!(
            "directory '{}' does not exist",
            dir.display()
        )));
    }
    if size == 0 {
        return Err(invalid("does not exist; give --size to create it".into()));
    }
    let want = spec
        .direct
        .or_else(|| in_ram_filesystem(dir).then_some(false));
    let (direct, align_bytes) = match want {
        Some(false) => (false, Some(1)),
        want => match open_tmpfile(dir, true) {
            Ok(f) => (true, Some(alignment(&f, dir, true, false))),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && want.is_none() => (false, Some(1)),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                return Err(invalid(
                    "this filesystem does not support O_DIRECT; use --direct false".into(),
                ))
            }
            // No O_TMPFILE here (or no permission): alignment is known only once the
            // file exists; 512 bytes is the floor every O_DIRECT filesystem needs.
            Err(_) if want == Some(true) => (true, Some(512)),
            Err(_) => (true, None),
        },
    };
    Ok(Probe {
        uri: spec.uri.clone(),
        kind: ProbeKind::File,
        size_bytes: size,
        direct,
        align_bytes,
        existing_len: None,
    })
}

/// Opens an unnamed temporary file in `dir` (O_TMPFILE): no name is ever linked, and
/// the inode is freed when the returned handle closes.
fn open_tmpfile(dir: &Path, direct: bool) -> std::io::Result<File> {
    let mut flags = libc::O_TMPFILE;
    if direct {
        flags |= libc::O_DIRECT;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(flags)
        .open(dir)
}

/// The O_DIRECT alignment of an open file or device (1 without O_DIRECT).
fn alignment(file: &File, path: &Path, direct: bool, is_block: bool) -> u64 {
    if !direct {
        return 1;
    }
    if is_block {
        logical_block_bytes(file).unwrap_or(512)
    } else {
        // The filesystem's direct-I/O alignment from statx; 512 is the safe common
        // floor where the kernel does not tell.
        dio_alignment_fd(file)
            .or_else(|| dio_alignment(path))
            .unwrap_or(512)
    }
}

/// Undoes what [`open`] did to a file the probe saw as `existing_len` (`None`:
/// created, so removed; shorter: truncated back). Used when a check after opening
/// fails, so a rejected run leaves the file as it was.
pub fn undo_open(path: &Path, existing_len: Option<u64>) -> std::io::Result<()> {
    match existing_len {
        None => std::fs::remove_file(path),
        Some(len) => {
            let f = OpenOptions::new().write(true).open(path)?;
            if f.metadata()?.len() > len {
                f.set_len(len)?;
            }
            Ok(())
        }
    }
}

fn open_path(
    spec: &TargetSpec,
    path: &Path,
    opts: OpenOptionsIo,
) -> Result<OpenTarget, TargetError> {
    let probe = probe_path(spec, path, opts)?;
    if probe.existing_len.is_none() {
        if opts.sparse {
            let f = File::create(path).map_err(io_err(path, "creating"))?;
            extend_unwritten(&f, path, 0, probe.size_bytes, opts.allocate)?;
        } else {
            create_file(path, probe.size_bytes)?;
        }
    }
    let is_block = probe.kind == ProbeKind::BlockDevice;
    // O_DIRECT on a file in RAM bypasses nothing (tmpfs accepts it since Linux 6.6 and
    // only adds cost), so "where the target supports it" leaves it off there. Not for
    // device nodes: /dev itself is a devtmpfs, which reports tmpfs's magic.
    let want_direct = spec
        .direct
        .or_else(|| (!is_block && in_ram_filesystem(path)).then_some(false));
    let file = if want_direct != Some(false) {
        match open_file(path, opts, true) {
            Ok(f) => Some(f),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && want_direct.is_none() => None,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                return Err(TargetError::Invalid {
                    uri: spec.uri.clone(),
                    msg: "this filesystem does not support O_DIRECT; use --direct false".into(),
                })
            }
            Err(e) => return Err(io_err(path, "opening")(e)),
        }
    } else {
        None
    };
    let (file, direct) = match file {
        Some(f) => (f, true),
        None => (
            open_file(path, opts, false).map_err(io_err(path, "opening"))?,
            false,
        ),
    };
    let mut size_bytes = if is_block {
        block_size_bytes(&file).map_err(io_err(path, "reading device size"))?
    } else {
        file.metadata().map_err(io_err(path, "stat"))?.len()
    };
    if !is_block && size_bytes < opts.min_size_bytes.max(spec.size_bytes.unwrap_or(0)) {
        // An existing file smaller than the working set: extend it with real data so
        // reads hit allocated blocks, as when it is created.
        let want = opts.min_size_bytes.max(spec.size_bytes.unwrap_or(0));
        if opts.sparse {
            extend_unwritten(&file, path, size_bytes, want, opts.allocate)?;
        } else {
            fill_file(path, size_bytes, want)?;
        }
        size_bytes = want;
    }
    let align_bytes = alignment(&file, path, direct, is_block);
    Ok(OpenTarget {
        name: spec.name.clone(),
        uri: spec.uri.clone(),
        backing: Backing::File {
            file,
            path: path.to_path_buf(),
            is_block,
            set: None,
        },
        size_bytes,
        direct,
        align_bytes,
        multipath: None,
    })
}

/// Whether `path` lives on a filesystem that keeps its data in RAM (tmpfs, ramfs):
/// every read of a regular file there is a memory copy, with or without O_DIRECT. For
/// a device node this says where the node is (devtmpfs), not where its data is.
pub fn in_ram_filesystem(path: &Path) -> bool {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statfs is plain data; zeroed is a valid value for it.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a NUL-terminated path and st a valid out pointer.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    let magic = st.f_type as i64;
    magic == TMPFS_MAGIC || magic == RAMFS_MAGIC
}

fn open_file(path: &Path, opts: OpenOptionsIo, direct: bool) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(opts.writes);
    let mut flags = 0;
    if direct {
        flags |= libc::O_DIRECT;
    }
    if opts.write_through {
        flags |= libc::O_DSYNC;
    }
    o.custom_flags(flags);
    o.open(path)
}

/// Creates a file of `size` bytes filled with pseudo-random data, so reads measure
/// real allocated blocks rather than holes that the filesystem answers from nothing.
/// Makes `file` `to` bytes long without writing `from..to`: a hole, or with
/// `allocate` blocks reserved by fallocate(2) as unwritten extents. Either way a
/// read of that range finds zeros until the run writes it.
fn extend_unwritten(
    file: &File,
    path: &Path,
    from: u64,
    to: u64,
    allocate: bool,
) -> Result<(), TargetError> {
    if allocate && to > from {
        // SAFETY: fallocate on our own open descriptor touches no memory of ours.
        let r = unsafe {
            libc::fallocate(
                file.as_raw_fd(),
                0,
                from as libc::off_t,
                (to - from) as libc::off_t,
            )
        };
        if r != 0 {
            return Err(io_err(path, "allocating (create = \"allocated\")")(
                std::io::Error::last_os_error(),
            ));
        }
    }
    file.set_len(to).map_err(io_err(path, "extending"))
}

fn create_file(path: &Path, size: u64) -> Result<(), TargetError> {
    File::create(path).map_err(io_err(path, "creating"))?;
    fill_file(path, 0, size)
}

fn fill_file(path: &Path, from: u64, to: u64) -> Result<(), TargetError> {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io_err(path, "opening to fill"))?;
    f.seek(SeekFrom::Start(from))
        .map_err(io_err(path, "seeking"))?;
    let mut chunk = vec![0u8; 1 << 20];
    let mut rng = crate::rng::Rng::new(0x5eed_f11e ^ from);
    let mut pos = from;
    while pos < to {
        for w in chunk.chunks_exact_mut(8) {
            w.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        let n = ((to - pos) as usize).min(chunk.len());
        f.write_all(&chunk[..n]).map_err(io_err(path, "filling"))?;
        pos += n as u64;
    }
    f.sync_all().map_err(io_err(path, "syncing"))?;
    Ok(())
}

fn block_size_bytes(file: &File) -> std::io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which is valid.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64, &mut size as *mut u64) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(size)
}

fn logical_block_bytes(file: &File) -> Option<u64> {
    let mut ssz: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int through the pointer, which is valid.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), BLKSSZGET, &mut ssz as *mut libc::c_int) };
    (r == 0 && ssz > 0).then_some(ssz as u64)
}

/// Direct-I/O alignment of a file from statx(STATX_DIOALIGN), when the kernel tells.
fn dio_alignment(path: &Path) -> Option<u64> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statx fills the zeroed struct; the path is a valid C string.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            c.as_ptr(),
            0,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if r != 0 || stx.stx_mask & libc::STATX_DIOALIGN == 0 || stx.stx_dio_offset_align == 0 {
        return None;
    }
    Some((stx.stx_dio_offset_align as u64).max(stx.stx_dio_mem_align as u64))
}

/// Direct-I/O alignment of an open file from statx(STATX_DIOALIGN) on its descriptor.
fn dio_alignment_fd(file: &File) -> Option<u64> {
    // SAFETY: statx fills the zeroed struct; the empty path with AT_EMPTY_PATH names
    // the open descriptor.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if r != 0 || stx.stx_mask & libc::STATX_DIOALIGN == 0 || stx.stx_dio_offset_align == 0 {
        return None;
    }
    Some((stx.stx_dio_offset_align as u64).max(stx.stx_dio_mem_align as u64))
}

const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
const BLKSSZGET: libc::c_ulong = 0x1268;

/// In-process RAM target: an anonymous mapping, touched lazily.
///
/// Several workers copy in and out of it at once, so every byte is reached only
/// under a lock of the 64 KiB chunk that holds it: a copy takes the locks of the
/// chunks it covers in ascending order (no deadlock), readers share a chunk, a
/// writer has it alone. So there is no data race, and every I/O is atomic against
/// every other: a read sees each overlapping write wholly or not at all, which a
/// real device does not promise but a test can then rely on.
///
/// Cost: one uncontended atomic read-modify-write to take and one to release per
/// chunk covered (two for a 4 KiB I/O); contention only when two I/Os touch the
/// same chunk at the same time.
#[derive(Debug)]
pub struct MemStore {
    ptr: *mut u8,
    len: usize,
    /// Per chunk: number of readers, or [`WRITER`] while a writer holds it.
    locks: Box<[AtomicU32]>,
}

/// Bytes per lock of a [`MemStore`].
const CHUNK_BYTES: usize = 64 << 10;
/// Lock word of a chunk held by a writer.
const WRITER: u32 = u32::MAX;

// SAFETY: the mapping lives as long as the MemStore and is reached only through
// `read_into`/`write_from` (and the raw copies they make under the chunk locks),
// so shared use from several threads never races: see the type's docs.
unsafe impl Send for MemStore {}
unsafe impl Sync for MemStore {}

impl MemStore {
    pub fn new(len: u64) -> std::io::Result<Self> {
        let len = usize::try_from(len).map_err(|_| std::io::Error::other("size too large"))?;
        // SAFETY: anonymous private mapping; the result is checked.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let chunks = len.div_ceil(CHUNK_BYTES);
        Ok(MemStore {
            ptr: ptr as *mut u8,
            len,
            locks: (0..chunks).map(|_| AtomicU32::new(0)).collect(),
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `len` bytes at `offset` into `dst`; false (nothing copied) when the
    /// range is outside the store.
    ///
    /// # Safety
    /// `dst` must be valid for `len` bytes of writes and not alias the store.
    #[inline]
    pub unsafe fn read_into(&self, offset: u64, dst: *mut u8, len: usize) -> bool {
        let Some(chunks) = self.chunks(offset, len) else {
            return false;
        };
        for c in chunks.clone() {
            lock_shared(&self.locks[c]);
        }
        // SAFETY: the range is inside the mapping (checked by `chunks`), every chunk
        // it covers is locked against writers, and the caller vouches for `dst`.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(offset as usize), dst, len) };
        for c in chunks {
            self.locks[c].fetch_sub(1, Ordering::Release);
        }
        true
    }

    /// Copies `len` bytes from `src` to `offset`; false (nothing copied) when the
    /// range is outside the store.
    ///
    /// # Safety
    /// `src` must be valid for `len` bytes of reads and not alias the store.
    #[inline]
    pub unsafe fn write_from(&self, offset: u64, src: *const u8, len: usize) -> bool {
        let Some(chunks) = self.chunks(offset, len) else {
            return false;
        };
        for c in chunks.clone() {
            lock_exclusive(&self.locks[c]);
        }
        // SAFETY: the range is inside the mapping, every chunk it covers is held
        // exclusively, and the caller vouches for `src`.
        unsafe { std::ptr::copy_nonoverlapping(src, self.ptr.add(offset as usize), len) };
        for c in chunks {
            self.locks[c].store(0, Ordering::Release);
        }
        true
    }

    /// Discards `len` bytes at `offset`: they read back as zeros, as a hole punched in
    /// a file does. False (nothing changed) when the range is outside the store.
    pub fn zero(&self, offset: u64, len: usize) -> bool {
        let Some(chunks) = self.chunks(offset, len) else {
            return false;
        };
        for c in chunks.clone() {
            lock_exclusive(&self.locks[c]);
        }
        // SAFETY: the range is inside the mapping and every chunk it covers is held
        // exclusively.
        unsafe { std::ptr::write_bytes(self.ptr.add(offset as usize), 0, len) };
        for c in chunks {
            self.locks[c].store(0, Ordering::Release);
        }
        true
    }

    /// Lock indices covering `offset..offset + len`, if that lies inside the store.
    #[inline]
    fn chunks(&self, offset: u64, len: usize) -> Option<std::ops::Range<usize>> {
        let end = offset.checked_add(len as u64)?;
        if end > self.len as u64 || len == 0 {
            return (len == 0 && end <= self.len as u64).then_some(0..0);
        }
        Some(offset as usize / CHUNK_BYTES..(end as usize - 1) / CHUNK_BYTES + 1)
    }
}

/// Takes a chunk lock shared (as a reader).
#[inline]
fn lock_shared(l: &AtomicU32) {
    let mut spins = 0u32;
    loop {
        let v = l.load(Ordering::Relaxed);
        if v < WRITER - 1
            && l.compare_exchange_weak(v, v + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return;
        }
        backoff(&mut spins);
    }
}

/// Takes a chunk lock exclusively (as a writer).
#[inline]
fn lock_exclusive(l: &AtomicU32) {
    let mut spins = 0u32;
    while l
        .compare_exchange_weak(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        backoff(&mut spins);
    }
}

/// Spins briefly, then yields: holders keep a lock for one memcpy only, but a
/// preempted holder must get the CPU back.
#[inline]
fn backoff(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

impl Drop for MemStore {
    fn drop(&mut self) {
        // SAFETY: unmapping the region mapped in `new`, exactly once.
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.len);
        }
    }
}

#[cfg(test)]
mod mem_store_tests {
    use super::MemStore;

    // Regression: two workers writing overlapping ranges of a mem target raced (the
    // store's Send/Sync rested on intent). Now every copy holds the chunk locks it
    // covers, so a read spanning two chunks sees each write wholly or not at all.
    #[test]
    fn overlapping_writers_never_tear_a_read() {
        const K: usize = 64 << 10;
        let store = MemStore::new(4 * K as u64).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            for (fill, start) in [(0xAAu8, 0usize), (0xBB, K)] {
                let (store, stop) = (&store, &stop);
                s.spawn(move || {
                    let buf = vec![fill; 3 * K];
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        // SAFETY: `buf` holds 3 K bytes and is not part of the store.
                        assert!(unsafe { store.write_from(start as u64, buf.as_ptr(), 3 * K) });
                        // Let the reader in: the locks are not fair, and this loop
                        // does nothing else between writes (a worker does).
                        std::thread::yield_now();
                    }
                });
            }
            let mut buf = vec![0u8; 2 * K];
            let mut seen = [false; 2];
            for _ in 0..2_000 {
                // Spans chunks 1 and 2, which both writers cover.
                // SAFETY: `buf` holds 2 K bytes and is not part of the store.
                assert!(unsafe { store.read_into(K as u64, buf.as_mut_ptr(), 2 * K) });
                let first = buf[0];
                assert!(
                    buf.iter().all(|&b| b == first),
                    "a read saw two writers' bytes mixed"
                );
                if first == 0xAA {
                    seen[0] = true;
                } else if first == 0xBB {
                    seen[1] = true;
                }
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            assert!(seen[0] || seen[1], "the writers never ran");
        });
    }

    #[test]
    fn out_of_range_copies_are_refused() {
        let store = MemStore::new(1 << 20).unwrap();
        let mut buf = [0u8; 8];
        // SAFETY: `buf` holds 8 bytes.
        unsafe {
            assert!(!store.read_into((1 << 20) - 4, buf.as_mut_ptr(), 8));
            assert!(!store.write_from(u64::MAX - 2, buf.as_ptr(), 8));
            assert!(store.write_from((1 << 20) - 8, buf.as_ptr(), 8));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::FileCreate;

    fn status_flags(t: &OpenTarget) -> i32 {
        // SAFETY: F_GETFL on a descriptor the target holds open.
        unsafe { libc::fcntl(t.fd().unwrap(), libc::F_GETFL) }
    }

    #[test]
    fn write_through_opens_with_o_dsync() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let spec = TargetSpec {
            name: "t0".into(),
            uri: dir.path().join("f").to_string_lossy().into_owned(),
            size_bytes: Some(1 << 20),
            direct: None,
            multipath: None,
            fill: false,
            create: Default::default(),
        };
        let opts = OpenOptionsIo {
            writes: true,
            write_through: true,
            ..Default::default()
        };
        let t = open(&spec, opts).unwrap();
        assert_ne!(status_flags(&t) & libc::O_DSYNC, 0, "O_DSYNC missing");
        let plain = open(
            &spec,
            OpenOptionsIo {
                writes: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(status_flags(&plain) & libc::O_DSYNC, 0);
        // Buffered too.
        let buffered = TargetSpec {
            direct: Some(false),
            ..spec
        };
        let t = open(&buffered, opts).unwrap();
        assert!(!t.direct);
        assert_ne!(status_flags(&t) & libc::O_DSYNC, 0);
    }

    /// Blocks of 512 bytes the file holds on disk.
    fn allocated_bytes(path: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).unwrap().blocks() * 512
    }

    #[test]
    fn create_modes_lay_out_leave_a_hole_or_only_allocate() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let size = 4u64 << 20;
        let mut found = Vec::new();
        for create in [FileCreate::Data, FileCreate::Empty, FileCreate::Allocated] {
            let path = dir.path().join(create.name());
            let spec = TargetSpec {
                size_bytes: Some(size),
                direct: Some(false),
                create,
                ..spec(&path.to_string_lossy())
            };
            let opts = OpenOptionsIo {
                writes: true,
                min_size_bytes: size,
                sparse: !create.is_data(),
                allocate: create == FileCreate::Allocated,
                ..Default::default()
            };
            let t = open(&spec, opts).unwrap();
            assert_eq!(t.size_bytes, size);
            assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
            let mut head = vec![0xffu8; 4096];
            std::fs::File::open(&path)
                .and_then(|f| std::os::unix::fs::FileExt::read_exact_at(&f, &mut head, 8192))
                .unwrap();
            found.push((create, allocated_bytes(&path), head.iter().all(|&b| b == 0)));
        }
        // Laid out: every block allocated and holding data.
        assert!(found[0].1 >= size && !found[0].2, "{found:?}");
        // A hole: nothing allocated, zeros read.
        assert!(found[1].1 < size / 8 && found[1].2, "{found:?}");
        // Allocated (where the filesystem can; /var/tmp here): blocks, zeros read.
        assert!(found[2].1 >= size && found[2].2, "{found:?}");
    }

    /// create = "never" (fio's allow_file_create=0): a missing file is refused by the
    /// probe and by open, and nothing is created; an existing one opens as usual.
    #[test]
    fn a_never_created_target_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nvme0n1");
        let spec = TargetSpec {
            size_bytes: Some(1 << 20),
            create: FileCreate::Never,
            ..spec(&path.to_string_lossy())
        };
        let opts = OpenOptionsIo {
            writes: true,
            min_size_bytes: 1 << 20,
            ..Default::default()
        };
        for e in [probe(&spec, opts).err(), open(&spec, opts).err()] {
            let e = e.expect("refused").to_string();
            assert!(e.contains("does not exist") && e.contains("never"), "{e}");
        }
        assert!(!path.exists());
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        assert_eq!(open(&spec, opts).unwrap().size_bytes, 1 << 20);
    }

    fn spec(uri: &str) -> TargetSpec {
        TargetSpec {
            name: "t0".into(),
            uri: uri.into(),
            size_bytes: None,
            direct: None,
            multipath: None,
            fill: false,
            create: Default::default(),
        }
    }

    // Regression: opening a `time=virtual` sim target switched the whole process to
    // virtual time as a side effect; the run now chooses the clock before opening.
    #[test]
    fn opening_a_virtual_sim_target_does_not_switch_the_clock() {
        let Err(e) = open(&spec("sim:1g?time=virtual"), OpenOptionsIo::default()) else {
            panic!("a virtual-time target on real time must be refused");
        };
        assert!(e.to_string().contains("time=virtual"), "{e}");
        assert!(!crate::clock::is_virtual(), "opening switched the clock");
        let t = open(&spec("sim:1g?time=real"), OpenOptionsIo::default()).unwrap();
        assert!(matches!(t.backing, Backing::Sim(_)));
        assert!(!crate::clock::is_virtual());
    }
}
