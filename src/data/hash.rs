//! A small, fast, non-cryptographic 64-bit hash for unit checksums and journal
//! records. Four independent multiply-rotate lanes over 8-byte words keep the
//! multiplier busy (about 8 bytes per cycle), and each step is a bijection of the lane
//! state, so any single changed word always changes the result; the final avalanche
//! spreads every lane into every output bit. It guards against accidents (torn,
//! misdirected, stale or rotted data), not adversaries — no crate needed for that.

const P1: u64 = 0x9e37_79b1_85eb_ca87;
const P2: u64 = 0xc2b2_ae3d_27d4_eb4f;
const P3: u64 = 0x1656_67b1_9e37_79f9;
const P4: u64 = 0x85eb_ca77_c2b2_ae63;

#[inline(always)]
fn word(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().unwrap())
}

#[inline(always)]
fn round(acc: u64, w: u64) -> u64 {
    (acc ^ w).wrapping_mul(P1).rotate_left(31)
}

/// Final avalanche (the splitmix64/murmur3 finaliser).
#[inline(always)]
pub fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Hashes `data` with `seed`. Any length; fastest on multiples of 32 bytes.
pub fn hash64(data: &[u8], seed: u64) -> u64 {
    let mut a = seed ^ P1;
    let mut b = seed ^ P2;
    let mut c = seed ^ P3;
    let mut d = seed ^ P4;
    let mut blocks = data.chunks_exact(32);
    for blk in &mut blocks {
        a = round(a, word(&blk[0..]));
        b = round(b, word(&blk[8..]));
        c = round(c, word(&blk[16..]));
        d = round(d, word(&blk[24..]));
    }
    let rest = blocks.remainder();
    let mut words = rest.chunks_exact(8);
    for w in &mut words {
        a = round(a, word(w));
        a = a.rotate_left(7) ^ b;
    }
    let mut tail = [0u8; 8];
    let t = words.remainder();
    tail[..t.len()].copy_from_slice(t);
    b = round(b, u64::from_le_bytes(tail) ^ ((t.len() as u64) << 56));
    let h = a.rotate_left(1)
        ^ b.rotate_left(7)
        ^ c.rotate_left(12)
        ^ d.rotate_left(18)
        ^ (data.len() as u64).wrapping_mul(P3);
    mix64(h ^ mix64(a.wrapping_add(c)) ^ mix64(b.wrapping_add(d)).rotate_left(32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_single_bit_flip_changes_the_hash() {
        let mut buf = vec![0u8; 4096 + 13];
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i * 31 + 7) as u8;
        }
        let h = hash64(&buf, 1);
        for i in (0..buf.len()).step_by(7) {
            for bit in [0u8, 3, 7] {
                buf[i] ^= 1 << bit;
                assert_ne!(hash64(&buf, 1), h, "byte {i} bit {bit}");
                buf[i] ^= 1 << bit;
            }
        }
        assert_ne!(hash64(&buf, 2), h);
        assert_ne!(hash64(&buf[..buf.len() - 1], 1), h);
    }

    #[test]
    fn swapped_words_change_the_hash() {
        let mut buf = vec![0u8; 64];
        buf[0] = 1;
        let h = hash64(&buf, 0);
        buf.swap(0, 32);
        assert_ne!(hash64(&buf, 0), h);
    }
}
