//! The e4defrag engine (fio's e4defrag): each write moves its range of an ext4 file
//! onto a donor file's blocks with the EXT4_IOC_MOVE_EXT ioctl, as a defragmenter
//! does; the file's bytes stay the same, its layout changes. The donor is allocated
//! once, the target's size (or, `inplace`, for each move and freed after it). A
//! request completes with the bytes the kernel moved (whole file-system blocks,
//! capped at the request's length); reads have no meaning here and fail EINVAL, as
//! in fio. The target is flushed and dropped from the page cache first: ext4 does
//! not move blocks whose cached pages it cannot release (EBUSY), which is what fio
//! 3.33 meets on a freshly written file (Linux 6.18).

use super::inline::{InlineEngine, PerformIo};
use super::{neg_errno, now_ns, IoRequest, Targets};
use crate::plan::engine_opts::DefragSpec;
use crate::plan::model::Op;
use std::ffi::CString;
use std::io;
use std::os::unix::io::RawFd;

/// `struct move_extent` of linux/ext4.h.
#[repr(C)]
#[derive(Default)]
struct MoveExtent {
    reserved: u32,
    donor_fd: u32,
    orig_start: u64,
    donor_start: u64,
    len: u64,
    moved_len: u64,
}

/// `_IOWR('f', 15, struct move_extent)`.
const EXT4_IOC_MOVE_EXT: libc::c_ulong = (3 << 30)
    | ((std::mem::size_of::<MoveExtent>() as libc::c_ulong) << 16)
    | ((b'f' as libc::c_ulong) << 8)
    | 15;

/// ext4's `f_type` in statfs(2).
const EXT4_SUPER_MAGIC: i64 = 0xEF53;

/// One worker's donor and the targets' descriptors.
pub struct DefragIo {
    fds: Vec<RawFd>,
    donor: RawFd,
    inplace: bool,
    /// The donor's block size: moves are in whole blocks.
    block_bytes: u64,
}

impl Drop for DefragIo {
    fn drop(&mut self) {
        // SAFETY: the donor descriptor is ours and closed once.
        unsafe { libc::close(self.donor) };
    }
}

fn retry_eintr(mut f: impl FnMut() -> libc::c_int) -> libc::c_int {
    loop {
        let r = f();
        if r == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return r;
        }
    }
}

impl PerformIo for DefragIo {
    const NAME: &'static str = "e4defrag";

    fn perform(&mut self, req: &IoRequest) -> (i64, u64) {
        if req.op != Op::Write {
            return (-(libc::EINVAL as i64), now_ns());
        }
        let (off, len) = (req.offset, req.len as u64);
        let donor = self.donor;
        // SAFETY: fallocate/ftruncate on our donor descriptor touch no memory of ours.
        if self.inplace
            && retry_eintr(|| unsafe {
                libc::fallocate(donor, 0, off as libc::off_t, len as libc::off_t)
            }) != 0
        {
            return (neg_errno(), now_ns());
        }
        let b = self.block_bytes;
        let mut me = MoveExtent {
            donor_fd: donor as u32,
            orig_start: off / b,
            donor_start: off / b,
            len: (off + len).div_ceil(b) - off / b,
            ..Default::default()
        };
        let fd = self.fds[req.target as usize];
        // SAFETY: me is a valid move_extent for the call's duration; fd is the
        // target's descriptor (or -1, which fails EBADF).
        let mut r = retry_eintr(|| unsafe { libc::ioctl(fd, EXT4_IOC_MOVE_EXT as _, &mut me) });
        if r != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EBUSY) {
            // A block moved moments ago still has a dirty cached page (random moves
            // may repeat a block): write the range back, drop it, and move once more.
            // SAFETY: as above; fdatasync/posix_fadvise touch no memory of ours.
            r = unsafe {
                libc::fdatasync(fd);
                libc::posix_fadvise(
                    fd,
                    off as libc::off_t,
                    len as libc::off_t,
                    libc::POSIX_FADV_DONTNEED,
                );
                libc::ioctl(fd, EXT4_IOC_MOVE_EXT as _, &mut me)
            };
        }
        let result = if r != 0 {
            neg_errno()
        } else {
            match (me.moved_len * b).min(len) {
                0 => -(libc::EINVAL as i64),
                n => n as i64,
            }
        };
        // SAFETY: as above.
        if self.inplace && unsafe { libc::ftruncate(donor, 0) } != 0 && result >= 0 {
            return (neg_errno(), now_ns());
        }
        (result, now_ns())
    }
}

/// The e4defrag engine.
pub type DefragEngine = InlineEngine<DefragIo>;

impl DefragEngine {
    /// Opens (creating) the donor and, unless `inplace`, allocates it the size of
    /// the first target it moves; refuses such a target that is not on ext4. `used`:
    /// which of `targets` this worker moves (the run's other targets, of workloads on
    /// other engines, are left alone).
    pub fn new(
        targets: &Targets,
        used: &[bool],
        spec: &DefragSpec,
        capacity: usize,
    ) -> io::Result<Self> {
        let mine = |i: usize| used.get(i).copied().unwrap_or(true);
        let fds: Vec<RawFd> = targets
            .iter()
            .enumerate()
            .map(|(i, t)| if mine(i) { t.fd().unwrap_or(-1) } else { -1 })
            .collect();
        for &fd in fds.iter().filter(|&&fd| fd >= 0) {
            // SAFETY: statfs fills the zeroed struct we pass.
            let mut st: libc::statfs = unsafe { std::mem::zeroed() };
            if unsafe { libc::fstatfs(fd, &mut st) } != 0 {
                return Err(io::Error::last_os_error());
            }
            if st.f_type as i64 != EXT4_SUPER_MAGIC {
                return Err(io::Error::other(
                    "the e4defrag engine needs its target on an ext4 file system (EXT4_IOC_MOVE_EXT)",
                ));
            }
            // ext4 refuses to move blocks whose cached pages it cannot release
            // (EBUSY): start from the file at rest, on disk and out of the cache, as
            // a defragmenter finds it.
            // SAFETY: fdatasync/posix_fadvise on the target's descriptor.
            if unsafe { libc::fdatasync(fd) } != 0
                || unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED) } != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        let path = CString::new(spec.donor.as_bytes()).map_err(io::Error::other)?;
        // SAFETY: path is NUL-terminated; the descriptor is owned by DefragIo.
        let donor = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                0o644,
            )
        };
        if donor < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("donor '{}': {e}", spec.donor),
            ));
        }
        let io = DefragIo {
            fds,
            donor,
            inplace: spec.inplace,
            block_bytes: 4096,
        };
        let mut io = io;
        // SAFETY: fstat fills the zeroed struct we pass.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(donor, &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        io.block_bytes = (st.st_blksize as u64).max(512);
        let size = (0..targets.len())
            .find(|&i| mine(i))
            .map_or(0, |i| targets[i].size_bytes);
        // SAFETY: fallocate on our donor descriptor.
        if !spec.inplace
            && size > 0
            && retry_eintr(|| unsafe { libc::fallocate(donor, 0, 0, size as libc::off_t) }) != 0
        {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("allocating the donor '{}': {e}", spec.donor),
            ));
        }
        Ok(InlineEngine::with(io, capacity))
    }
}
