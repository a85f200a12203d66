//! How big a file must be to fill its filesystem (fio's `fill_device`): the bytes
//! the file already holds plus what the filesystem still gives an unprivileged
//! writer (`statvfs`'s `f_bavail`). Only a regular file (or a path not created yet)
//! has such a size: a block device is filled by its own size.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The size that fills the filesystem holding `path`, rounded down to `unit`:
/// its allocated bytes (0 when it does not exist yet) plus the free bytes. `None`
/// for a block device or when the filesystem cannot be asked.
pub fn fill_size_bytes(path: &Path, unit: u64) -> Option<u64> {
    let allocated = match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_file() => m.blocks() * 512,
        Ok(_) => return None,
        Err(_) => 0,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let free = free_bytes(dir)?;
    let unit = unit.max(1);
    Some((allocated + free) / unit * unit)
}

/// Bytes an unprivileged writer may still allocate on the filesystem of `dir`.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is plain data; zeroed is a valid value for it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a NUL-terminated path and st a valid out pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_fills_the_free_space_in_whole_units() {
        let dir = std::env::temp_dir();
        let path = dir.join("ioscope-fill-size-probe-that-does-not-exist");
        let got = fill_size_bytes(&path, 65536).expect("temp dir has a filesystem");
        assert_eq!(got % 65536, 0);
        let free = free_bytes(&dir).unwrap();
        // Free space moves while other programs run; it is the same order.
        assert!(got <= free + (1 << 30) && got + (1 << 30) >= free / 65536 * 65536);
    }

    #[test]
    fn a_block_device_has_no_fill_size() {
        assert_eq!(fill_size_bytes(Path::new("/dev/null"), 4096), None);
    }
}
