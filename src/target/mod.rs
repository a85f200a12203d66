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
mod local;
mod mem_store;
pub mod multipath;
pub mod nbd;
mod network;
pub mod nfs;
pub mod retry;
pub mod safety;
pub mod sim;
pub mod smb;
pub mod tree_dir;
pub mod uri;
mod work_dirs;

pub use local::{in_ram_filesystem, undo_open};
use local::{open_path, probe_path};
pub use mem_store::{map_anonymous, MemStore};
use network::{open_iscsi, open_nbd, open_nfs, open_smb};

use crate::plan::model::{TargetKind, TargetSpec};
use crate::plan::units::parse_size;
use std::fs::File;
use std::os::unix::io::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};

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
    /// A network target that did not answer its start-up probe in time (a stalled
    /// server, a link that drops everything): not tried again ([`retry::answered_within`]).
    #[error("target '{uri}': {msg}")]
    NoAnswer { uri: String, msg: String },
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
    if let Some(rest) = uri.strip_prefix("tree:") {
        // A tree on a server by its scheme, else a local directory.
        let spec = if rest.starts_with("nfs://") {
            nfs::tree_dir::parse_tree(rest)
        } else if rest.starts_with("smb://") {
            smb::tree_uri::parse_tree(rest)
        } else {
            crate::plan::fileset::FileSetSpec::parse_tree(rest).map_err(|e| e.to_string())
        };
        return spec.map(TargetKind::Files).map_err(invalid);
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

/// True for a target reached over the network (NBD, iSCSI, SMB, NFS), whose
/// start-up can wait on a server that never answers.
pub fn over_network(uri: &str) -> bool {
    ProbeKind::of_uri(uri).is_some_and(|k| k.desc().engine.desc().network)
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
    Files(Box<fileset::FileSetTarget>),
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
    /// Target `spec` on `backing`, `size_bytes` long, without O_DIRECT, alignment
    /// rules (1) or further paths: how memory, null, sim, network and file-set
    /// targets open.
    pub fn buffered(spec: &TargetSpec, backing: Backing, size_bytes: u64) -> OpenTarget {
        OpenTarget {
            name: spec.name.clone(),
            uri: spec.uri.clone(),
            backing,
            size_bytes,
            direct: false,
            align_bytes: 1,
            multipath: None,
        }
    }

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

    /// A tree on a server opened for its bytes (no descriptors: the sync engine
    /// reaches its files through their directory, `tree_dir::TreeDir`).
    pub fn remote_byte_tree(&self) -> Option<&fileset::FileSetTarget> {
        match &self.backing {
            Backing::Files(f) if f.bytes => Some(f),
            _ => None,
        }
    }

    /// The length of each file's part of the address space, for a file set read
    /// and written as bytes.
    pub fn set_stride_bytes(&self) -> Option<u64> {
        self.byte_files()
            .map(|s| s.file_bytes)
            .or_else(|| self.remote_byte_tree().map(|f| f.spec.file_bytes))
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

    /// The kind of this target, as its probe would say.
    pub fn probe_kind(&self) -> ProbeKind {
        match &self.backing {
            Backing::File { is_block: true, .. } => ProbeKind::BlockDevice,
            Backing::File { .. } => ProbeKind::File,
            Backing::Mem(_) => ProbeKind::Mem,
            Backing::Null => ProbeKind::Null,
            Backing::Sim(_) => ProbeKind::Sim,
            Backing::Nbd(_) => ProbeKind::Nbd,
            Backing::Iscsi(_) => ProbeKind::Iscsi,
            Backing::Smb(_) => ProbeKind::Smb,
            Backing::Nfs(_) => ProbeKind::Nfs,
            // A tree on a server opened for its bytes, as its probe says.
            Backing::Files(f) if f.bytes => ProbeKind::File,
            Backing::Files(_) => ProbeKind::Files,
        }
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
    /// Which draw of a `sim:` device's randomness: its seed + this (a run's
    /// repetition under `--repeat`; 0 otherwise).
    pub draw: u64,
    /// The reply form NBD connections ask for (the run's `nbd_structured_replies`).
    pub nbd_replies: nbd::ffi::Replies,
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
        TargetKind::Mem(size) => Ok(OpenTarget::buffered(
            spec,
            Backing::Mem(MemStore::new(size).map_err(|e| TargetError::Io {
                path: PathBuf::from(&spec.uri),
                op: "allocating memory",
                source: e,
            })?),
            size,
        )),
        TargetKind::Null(size) => Ok(OpenTarget::buffered(spec, Backing::Null, size)),
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
            let size_bytes = sim.size_bytes;
            Ok(OpenTarget::buffered(
                spec,
                Backing::Sim(sim::SimDevice::new(sim.draw(opts.draw))),
                size_bytes,
            ))
        }
        TargetKind::Nbd(n) => open_nbd(spec, &n, opts),
        TargetKind::Iscsi(i) => open_iscsi(spec, &i, opts),
        TargetKind::Smb(s) => open_smb(spec, &s, opts),
        TargetKind::Nfs(n) => open_nfs(spec, &n, opts),
        TargetKind::Path(path) => open_path(spec, &path, opts),
        TargetKind::Files(set) if set.remote.is_some() && byte_use(opts) => {
            let t = fileset::open_remote_bytes(&spec.uri, &set, opts.sparse)?;
            let size = set.count.saturating_mul(set.file_bytes);
            Ok(OpenTarget::buffered(
                spec,
                Backing::Files(Box::new(t)),
                size,
            ))
        }
        TargetKind::Files(set) if opts.set_use == Some(fileset::SetUse::Bytes) => {
            fileset_bytes::open(spec, &set, opts)
        }
        TargetKind::Files(set) => Ok(OpenTarget::buffered(
            spec,
            Backing::Files({
                // A remote tree's anchor is made on the server, by its opener.
                if spec.create_dirs && set.remote.is_none() {
                    work_dirs::make(&spec.uri, &set.dir)?;
                }
                let lay_out = spec.create != crate::plan::model::FileCreate::Never;
                Box::new(fileset::open(&spec.uri, &set, opts.set_use, lay_out)?)
            }),
            set.count.saturating_mul(opts.slot_bytes.max(1)),
        )),
    }
}

/// A run reads or writes a set's bytes.
fn byte_use(opts: OpenOptionsIo) -> bool {
    opts.set_use == Some(fileset::SetUse::Bytes)
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

pub use crate::plan::target_kind::ProbeKind;

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
        // Mounts the export and looks at the anchor; creates nothing.
        TargetKind::Files(set) if set.remote.is_some() && byte_use(opts) => {
            fileset::probe(&spec.uri, &set, None)?;
            let size = set.count.saturating_mul(set.file_bytes);
            Ok(fixed(ProbeKind::File, size))
        }
        TargetKind::Files(set) if opts.set_use == Some(fileset::SetUse::Bytes) => {
            fileset_bytes::probe(spec, &set, opts)
        }
        TargetKind::Files(set) => {
            // A directory the opening makes holds nothing yet: nothing to look at.
            if spec.create_dirs && set.remote.is_none() && !set.dir.exists() {
                work_dirs::nearest_existing(&spec.uri, &set.dir)?;
            } else {
                fileset::probe(&spec.uri, &set, opts.set_use)?;
            }
            Ok(fixed(
                ProbeKind::Files,
                set.count.saturating_mul(opts.slot_bytes.max(1)),
            ))
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
            size_bytes: Some(1 << 20),
            ..TargetSpec::new("t0", dir.path().join("f").to_string_lossy().into_owned())
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
        TargetSpec::new("t0", uri)
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
