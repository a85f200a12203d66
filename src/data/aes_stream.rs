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
//! derived from a 64-bit seed); content is not a secret.

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

/// Fills `dst` with the AES stream of `seed`.
///
/// # Safety
/// The CPU must have AES-NI ([`available`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "aes,sse2")]
pub unsafe fn fill(dst: &mut [u8], seed: u64) {
    use std::arch::x86_64::*;
    let key = |a: u64, b: u64| _mm_set_epi64x(mix64(seed ^ a) as i64, mix64(seed ^ b) as i64);
    let (k1, k2) = (
        key(0xa409_3822_299f_31d0, 0x082e_fa98_ec4e_6c89),
        key(0x4528_21e6_38d0_1377, 0xbe54_66cf_34e9_0c6c),
    );
    let block = |ctr: __m128i| -> __m128i {
        let x = _mm_aesenc_si128(ctr, k1);
        let x = _mm_aesenc_si128(x, k2);
        let x = _mm_aesenc_si128(x, k1);
        _mm_aesenc_si128(x, k2)
    };
    let one = _mm_set_epi64x(0, 1);
    // The counter starts at a seed-derived 128-bit value (no whitening XOR per
    // block); its low half counts.
    let mut ctr = key(0x243f_6a88_85a3_08d3, 0x1319_8a2e_0370_7344);
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
}
