//! The content stream on CPUs with AES instructions: four AES rounds over a counter,
//! keyed by the unit's seed. [`super::pattern::fill_random`] uses it when the CPU
//! has them (x86-64 AES-NI, checked once) and its multiply-fold stream otherwise.
//!
//! Why: filling every 4 KiB write with fresh content was a third of ioscope's
//! instructions per NBD write (about 4,500 of 12,000, callgrind), where fio by
//! default reuses one random buffer and rewrites a few bytes per 512. This stream
//! keeps the content's properties (each seed its own incompressible bytes, equal
//! seeds equal bytes, so dedup ratios hold) at about a third of the instructions:
//! per 16 bytes one counter add, four `aesenc` and a store (the counter starts at a
//! seed-derived 128-bit value),
//! where the multiply-fold stream spends two 64×64→128 multiplies and their folds.
//! Four rounds, not two: after two every output byte depends on every input byte,
//! the other two are margin for statistical quality. It is no cipher (the keys are
//! derived from a 64-bit seed); content is not a secret. Where the CPU also has VAES,
//! each `vaesenc` works on two blocks at once (`wide`), which took a 4 KiB write on
//! the null engine from 0.20 to 0.13 µs of CPU; the bytes are the same.

use crate::data::hash::mix64;

/// Whether this CPU runs the AES stream (checked once per process by std).
#[inline]
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("aes")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Fills `dst` with the AES stream of `seed`: 32 bytes per instruction where the
/// CPU has VAES ([`wide`]), 16 otherwise; the bytes are the same either way.
///
/// # Safety
/// The CPU must have AES-NI ([`available`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "aes,sse2")]
pub unsafe fn fill(dst: &mut [u8], seed: u64) {
    let keys = Keys::of(seed);
    let done = match wide::available() {
        // SAFETY: the CPU has VAES and AVX2 (checked just above).
        true => unsafe { wide::fill(dst, &keys) },
        false => 0,
    };
    // SAFETY: the caller's promise (AES-NI).
    unsafe { fill_narrow(&mut dst[done..], &keys, (done / 16) as u64) }
}

/// A seed's two round keys and first counter value.
#[cfg(target_arch = "x86_64")]
struct Keys {
    k1: std::arch::x86_64::__m128i,
    k2: std::arch::x86_64::__m128i,
    ctr: std::arch::x86_64::__m128i,
}

#[cfg(target_arch = "x86_64")]
impl Keys {
    #[target_feature(enable = "sse2")]
    unsafe fn of(seed: u64) -> Keys {
        use std::arch::x86_64::*;
        let key = |a: u64, b: u64| _mm_set_epi64x(mix64(seed ^ a) as i64, mix64(seed ^ b) as i64);
        Keys {
            k1: key(0xa409_3822_299f_31d0, 0x082e_fa98_ec4e_6c89),
            k2: key(0x4528_21e6_38d0_1377, 0xbe54_66cf_34e9_0c6c),
            // The counter starts at a seed-derived 128-bit value (no whitening XOR
            // per block); its low half counts.
            ctr: key(0x243f_6a88_85a3_08d3, 0x1319_8a2e_0370_7344),
        }
    }
}

/// The stream from its block `first` on, 16 bytes per AES-NI instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "aes,sse2")]
unsafe fn fill_narrow(dst: &mut [u8], keys: &Keys, first: u64) {
    use std::arch::x86_64::*;
    let (k1, k2) = (keys.k1, keys.k2);
    let block = |ctr: __m128i| -> __m128i {
        let x = _mm_aesenc_si128(ctr, k1);
        let x = _mm_aesenc_si128(x, k2);
        let x = _mm_aesenc_si128(x, k1);
        _mm_aesenc_si128(x, k2)
    };
    let one = _mm_set_epi64x(0, 1);
    let mut ctr = _mm_add_epi64(keys.ctr, _mm_set_epi64x(0, first as i64));
    let mut quads = dst.chunks_exact_mut(64);
    for q in &mut quads {
        // Four independent blocks per step hide aesenc's latency.
        let c1 = _mm_add_epi64(ctr, one);
        let c2 = _mm_add_epi64(c1, one);
        let c3 = _mm_add_epi64(c2, one);
        let p = q.as_mut_ptr() as *mut __m128i;
        // SAFETY: `q` is 64 bytes; unaligned stores.
        unsafe {
            _mm_storeu_si128(p, block(ctr));
            _mm_storeu_si128(p.add(1), block(c1));
            _mm_storeu_si128(p.add(2), block(c2));
            _mm_storeu_si128(p.add(3), block(c3));
        }
        ctr = _mm_add_epi64(c3, one);
    }
    for part in quads.into_remainder().chunks_mut(16) {
        let mut b = [0u8; 16];
        // SAFETY: `b` is 16 bytes; unaligned store.
        unsafe { _mm_storeu_si128(b.as_mut_ptr() as *mut __m128i, block(ctr)) };
        part.copy_from_slice(&b[..part.len()]);
        ctr = _mm_add_epi64(ctr, one);
    }
}

/// The same stream two blocks per instruction (VAES on 256-bit registers): half the
/// instructions per byte of the AES-NI loop, which was most of a 4 KiB write's
/// instructions on the null engine. Written with `asm!` because Rust's VAES
/// intrinsics and feature detection need a newer compiler than the crate's 1.80.
#[cfg(target_arch = "x86_64")]
mod wide {
    use super::Keys;
    use std::arch::x86_64::*;
    use std::sync::atomic::{AtomicU8, Ordering};

    /// 0 unknown, 1 no, 2 yes.
    static VAES: AtomicU8 = AtomicU8::new(0);

    /// Whether the CPU has VAES with AVX2 (CPUID leaf 7, ECX bit 9; AVX2's check
    /// includes the OS saving the 256-bit registers). Checked once per process.
    // `__cpuid_count` became safe after Rust 1.80; the block is for 1.80.
    #[allow(unused_unsafe)]
    pub(super) fn available() -> bool {
        match VAES.load(Ordering::Relaxed) {
            0 => {
                // SAFETY: CPUID leaf 7 exists on every CPU with AVX2, checked first.
                let yes = std::arch::is_x86_feature_detected!("avx2")
                    && unsafe { __cpuid_count(7, 0) }.ecx & (1 << 9) != 0;
                VAES.store(1 + u8::from(yes), Ordering::Relaxed);
                yes
            }
            v => v == 2,
        }
    }

    /// One `vaesenc` round over both 128-bit lanes of `x`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn round(x: __m256i, k: __m256i) -> __m256i {
        let mut x = x;
        // SAFETY: the caller's CPU has VAES; registers only, no memory.
        unsafe {
            std::arch::asm!(
                "vaesenc {x}, {x}, {k}",
                x = inout(ymm_reg) x,
                k = in(ymm_reg) k,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        x
    }

    /// Fills the whole 128-byte steps of `dst` from the stream's first block; returns
    /// the bytes filled (the rest is the narrow loop's, from the block after).
    ///
    /// # Safety
    /// The CPU must have VAES and AVX2 ([`available`]).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn fill(dst: &mut [u8], keys: &Keys) -> usize {
        let (k1, k2) = (
            _mm256_broadcastsi128_si256(keys.k1),
            _mm256_broadcastsi128_si256(keys.k2),
        );
        let block = |c: __m256i| {
            // SAFETY: the caller's promise (VAES).
            unsafe { round(round(round(round(c, k1), k2), k1), k2) }
        };
        // Lane 0 holds block 2n, lane 1 block 2n + 1: stored in order, the bytes
        // are the narrow loop's.
        let lanes = _mm256_set_m128i(_mm_add_epi64(keys.ctr, _mm_set_epi64x(0, 1)), keys.ctr);
        let two = _mm256_set_epi64x(0, 2, 0, 2);
        let mut ctr = lanes;
        let len = dst.len();
        let mut steps = dst.chunks_exact_mut(128);
        for q in &mut steps {
            let c1 = _mm256_add_epi64(ctr, two);
            let c2 = _mm256_add_epi64(c1, two);
            let c3 = _mm256_add_epi64(c2, two);
            let p = q.as_mut_ptr() as *mut __m256i;
            // SAFETY: `q` is 128 bytes; unaligned stores.
            unsafe {
                _mm256_storeu_si256(p, block(ctr));
                _mm256_storeu_si256(p.add(1), block(c1));
                _mm256_storeu_si256(p.add(2), block(c2));
                _mm256_storeu_si256(p.add(3), block(c3));
            }
            ctr = _mm256_add_epi64(c3, two);
        }
        len - steps.into_remainder().len()
    }
}

/// Never called: [`available`] is false off x86-64.
///
/// # Safety
/// None; it panics.
#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn fill(_dst: &mut [u8], _seed: u64) {
    unreachable!("the AES content stream needs x86-64 AES-NI")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        if !available() {
            eprintln!("skipped: this CPU has no AES-NI");
            return;
        }
        let mut a = vec![0u8; 4096 + 37];
        let mut b = a.clone();
        let mut c = a.clone();
        // SAFETY: available() said the CPU has AES-NI.
        unsafe {
            fill(&mut a, 7);
            fill(&mut b, 7);
            fill(&mut c, 8);
        }
        assert_eq!(a, b);
        let same = a.iter().zip(&c).filter(|(x, y)| x == y).count();
        assert!(same < a.len() / 64, "{same} equal bytes for seeds 7 and 8");
        // No 16-byte block repeats within a unit, including the tail.
        let blocks: std::collections::HashSet<_> = a.chunks(16).collect();
        assert_eq!(blocks.len(), a.len().div_ceil(16));
        // Bytes look uniform: every value within 10 % of its share (6 standard
        // deviations for 1 MiB of uniform bytes).
        let mut hist = [0u32; 256];
        let mut big = vec![0u8; 1 << 20];
        // SAFETY: as above.
        unsafe { fill(&mut big, 99) };
        big.iter().for_each(|&x| hist[x as usize] += 1);
        let share = big.len() as u32 / 256;
        assert!(hist
            .iter()
            .all(|&h| h > share * 9 / 10 && h < share * 11 / 10));
    }

    // The VAES loop and the AES-NI loop give the same bytes, whatever the length
    // (whole 128-byte steps, a narrow remainder, a partial block).
    #[test]
    fn the_wide_stream_is_the_narrow_stream() {
        if !available() || !wide::available() {
            eprintln!("skipped: this CPU has no VAES");
            return;
        }
        for len in [0, 16, 127, 128, 129, 4096, 4096 + 37, 65536 + 80] {
            let (mut wide, mut narrow) = (vec![0u8; len], vec![0u8; len]);
            // SAFETY: the CPU has AES-NI and VAES (checked above).
            unsafe {
                let keys = Keys::of(42);
                fill(&mut wide, 42);
                fill_narrow(&mut narrow, &keys, 0);
            }
            assert!(wide == narrow, "{len} bytes differ");
        }
    }
}
