//! Where the `smb` crate's per-message buffers live. The crate allocates three buffers
//! the size of each READ response (the received message, the AES-GMAC signer's copy
//! of it, the parsed data) and frees them when the read is done. ioscope's `main`
//! fixes glibc's mmap threshold at 64 KiB (so dropped histograms do not fragment the
//! heap), which makes each of those an mmap, first-touch page faults over every page
//! and an munmap: with 1 MiB reads that was ~65 % of the client's CPU (perf: page
//! faults, zeroing, munmap) and capped 1 MiB sequential reads at ~0.4× smbclient.
//! [`keep_large_buffers`] moves blocks up to 32 MiB (smbd's largest READ is 8 MiB)
//! back into the heap and keeps freed heap memory instead of trimming it, so the
//! buffers are reused from one read to the next.

/// The largest block glibc may then serve from the heap (its ceiling on 64-bit).
const MMAP_THRESHOLD_BYTES: i32 = 32 << 20;

/// Free heap memory kept rather than given back: twice the threshold, as glibc's own
/// sliding threshold would set it.
const TRIM_THRESHOLD_BYTES: i32 = 64 << 20;

/// Raises glibc's mmap and trim thresholds, once per process, before the first SMB
/// session is opened. SMB runs trade the flat resident size of `main`'s setting for
/// reused buffers: a worker keeps about three times its requests' bytes in flight.
pub fn keep_large_buffers() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(target_env = "gnu")]
        // SAFETY: mallopt only changes allocator tuning (glibc takes the main arena's
        // lock while it does); the first SMB session is opened by the main thread
        // while it checks the targets, before any worker allocates.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES);
        }
    });
}
