//! Trim (discard) of a byte range, done in the calling thread: the engines that
//! complete inline (sync, falloc) share it. A regular file gets its range punched out
//! with fallocate(2) `FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE` (the blocks are
//! released and read back as zeros; the file keeps its length); a block device gets
//! the `BLKDISCARD` ioctl (the device may or may not return zeros afterwards). A
//! successful trim completes with its length, as fio counts trimmed bytes.

use super::neg_errno;
use std::os::unix::io::RawFd;

/// `BLKDISCARD` from linux/fs.h: `_IO(0x12, 119)`; the argument is `u64 [start, len]`.
pub const BLKDISCARD: libc::c_ulong = 0x1277;

/// The fallocate(2) mode of a trim on a regular file.
pub const PUNCH_HOLE_MODE: i32 = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;

/// Discards `len` bytes at `offset` of `fd` (a block device when `is_block`):
/// `len` on success, else a negated errno. Interrupted calls are repeated.
pub fn discard(fd: RawFd, is_block: bool, offset: u64, len: u32) -> i64 {
    loop {
        let r = if is_block {
            let range: [u64; 2] = [offset, u64::from(len)];
            // SAFETY: BLKDISCARD reads two u64 from the pointer, which points at
            // `range` for the duration of the call.
            unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) }
        } else {
            // SAFETY: fallocate touches no memory of ours; a bad fd fails EBADF.
            unsafe {
                libc::fallocate(
                    fd,
                    PUNCH_HOLE_MODE,
                    offset as libc::off_t,
                    libc::off_t::from(len),
                )
            }
        };
        if r == 0 {
            return i64::from(len);
        }
        let e = neg_errno();
        if e != -(libc::EINTR as i64) {
            return e;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::io::AsRawFd;

    #[test]
    fn a_trim_punches_a_hole_that_reads_back_as_zeros() {
        let dir = std::env::temp_dir().join(format!("ioscope-discard-{}", std::process::id()));
        let mut f = std::fs::File::create(&dir).unwrap();
        f.write_all(&vec![0xa5u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        let before = f.metadata().unwrap().blocks();
        let r = discard(f.as_raw_fd(), false, 256 << 10, 512 << 10);
        let meta = std::fs::metadata(&dir).unwrap();
        let data = std::fs::read(&dir).unwrap();
        std::fs::remove_file(&dir).unwrap();
        if r == -(libc::EOPNOTSUPP as i64) {
            eprintln!("skipped: the temp file system cannot punch holes");
            return;
        }
        assert_eq!(r, 512 << 10);
        assert_eq!(meta.len(), 1 << 20, "KEEP_SIZE: the length stays");
        assert!(
            meta.blocks() < before,
            "{} -> {} blocks",
            before,
            meta.blocks()
        );
        assert!(data[256 << 10..768 << 10].iter().all(|&b| b == 0));
        assert!(data[..256 << 10].iter().all(|&b| b == 0xa5));
        assert!(data[768 << 10..].iter().all(|&b| b == 0xa5));
    }

    #[test]
    fn a_bad_descriptor_is_an_errno_not_a_panic() {
        assert_eq!(discard(-1, false, 0, 4096), -(libc::EBADF as i64));
        assert_eq!(discard(-1, true, 0, 4096), -(libc::EBADF as i64));
    }
}
