//! Files and block devices: probing without side effects, opening (creating,
//! extending or laying out a file), and learning the alignment O_DIRECT needs, so
//! that a misaligned block size is refused before the first I/O.

use super::{io_err, safety, Backing, OpenOptionsIo, OpenTarget, Probe, ProbeKind, TargetError};
use crate::plan::model::TargetSpec;
use crate::plan::units::format_size;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

pub(super) fn probe_path(
    spec: &TargetSpec,
    path: &Path,
    opts: OpenOptionsIo,
) -> Result<Probe, TargetError> {
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
pub(super) fn probe_new_file(
    spec: &TargetSpec,
    path: &Path,
    size: u64,
) -> Result<Probe, TargetError> {
    let invalid = |msg: String| TargetError::Invalid {
        uri: spec.uri.clone(),
        msg,
    };
    let dir = super::work_dirs::parent_of(path);
    // First, so a target sized to fill its filesystem (whose size comes from the
    // directory's filesystem) names the missing directory. With `create_dirs` the
    // opening makes it; probing looks at the nearest directory that exists.
    let nearest;
    let dir = match dir.is_dir() {
        true => dir,
        false if spec.create_dirs => {
            nearest = super::work_dirs::nearest_existing(&spec.uri, dir)?;
            nearest.as_path()
        }
        false => {
            // Under /dev this says that nothing is made there.
            super::work_dirs::nearest_existing(&spec.uri, dir)?;
            return Err(invalid(format!(
                "directory '{}' does not exist (create_dirs = true makes it, as fio does)",
                dir.display()
            )));
        }
    };
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
pub(super) fn open_tmpfile(dir: &Path, direct: bool) -> std::io::Result<File> {
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
pub(super) fn alignment(file: &File, path: &Path, direct: bool, is_block: bool) -> u64 {
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

pub(super) fn open_path(
    spec: &TargetSpec,
    path: &Path,
    opts: OpenOptionsIo,
) -> Result<OpenTarget, TargetError> {
    let probe = probe_path(spec, path, opts)?;
    if probe.existing_len.is_none() {
        create_missing(spec, path, probe.size_bytes, opts)?;
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
            // What was added is taken back if the layout fails.
            fill_file(path, size_bytes, want).inspect_err(|_| {
                let _ = file.set_len(size_bytes);
            })?;
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

pub(super) fn open_file(path: &Path, opts: OpenOptionsIo, direct: bool) -> std::io::Result<File> {
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
pub(super) fn extend_unwritten(
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

/// Creates the missing file of `spec` at `path`, `size` bytes, as `opts` say (a
/// hole, allocated, or laid out with data), after its missing directories when the
/// target makes them.
fn create_missing(
    spec: &TargetSpec,
    path: &Path,
    size: u64,
    opts: OpenOptionsIo,
) -> Result<(), TargetError> {
    if spec.create_dirs {
        super::work_dirs::make(&spec.uri, super::work_dirs::parent_of(path))?;
    }
    if opts.sparse {
        let f = File::create(path).map_err(io_err(path, "creating"))?;
        extend_unwritten(&f, path, 0, size, opts.allocate)
    } else {
        create_file(path, size)
    }
}

/// Creates a file laid out with data; a file that could not be laid out whole (no
/// room, an error, Ctrl-C) is removed again, so a refused run leaves nothing behind.
pub(super) fn create_file(path: &Path, size: u64) -> Result<(), TargetError> {
    File::create(path).map_err(io_err(path, "creating"))?;
    fill_file(path, 0, size).inspect_err(|_| {
        let _ = std::fs::remove_file(path);
    })
}

/// Writes data from `from` to `to`. Refused before the first byte when its file
/// system has less room than that (a 100 GiB layout on a smaller disk used to fill
/// the disk and then fail); stopped by Ctrl-C.
pub(super) fn fill_file(path: &Path, from: u64, to: u64) -> Result<(), TargetError> {
    use std::io::{Seek, SeekFrom, Write};
    let refuse = |msg: String| TargetError::Invalid {
        uri: path.display().to_string(),
        msg,
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Some(free) = super::fill::free_bytes(dir).filter(|&f| f < to - from) {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        return Err(refuse(format!(
            "laying it out takes {} ({:.1} GiB) and its file system has {:.1} GiB free; \
             give a smaller size",
            format_size(to - from),
            gib(to - from),
            gib(free)
        )));
    }
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
        if crate::interrupt::requested() {
            return Err(refuse("interrupted while laying it out".into()));
        }
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

pub(super) fn block_size_bytes(file: &File) -> std::io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which is valid.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64, &mut size as *mut u64) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(size)
}

pub(super) fn logical_block_bytes(file: &File) -> Option<u64> {
    let mut ssz: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int through the pointer, which is valid.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), BLKSSZGET, &mut ssz as *mut libc::c_int) };
    (r == 0 && ssz > 0).then_some(ssz as u64)
}

/// Direct-I/O alignment of a file from statx(STATX_DIOALIGN), when the kernel tells.
pub(super) fn dio_alignment(path: &Path) -> Option<u64> {
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
pub(super) fn dio_alignment_fd(file: &File) -> Option<u64> {
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
