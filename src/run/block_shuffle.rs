//! A keyed shuffle of the block numbers `0..n` that stores nothing per block: a
//! bijection computed on demand, so a pass that visits every block once in a random
//! order costs a few arithmetic operations per block and a few words in all, however
//! large the target, and any position's block can be asked in any order. SPRandom's
//! fresh writes (`run::sprandom`) walk it; the random map (`run::random_map`), which
//! only ever asks for the next block, walks a cheaper generator of its own.
//!
//! How: a four-round Feistel network on the smallest power of two ≥ n (its bits split
//! into a high and a low half, unequal when the count is odd; the halves trade widths
//! each round, so an even number of rounds comes back to the same split and every
//! round is invertible), with splitmix64's finaliser keyed per round as the round
//! function; a value at or above n is walked on (cycle-walking) until it falls below
//! n, which keeps the map a bijection on `0..n`. The trade-off: at most twice as many
//! network evaluations as blocks on average (2^bits < 2n), in exchange for no memory;
//! the order is a pseudo-random permutation, good for spreading I/O, not for
//! cryptography.

use crate::rng::Rng;

/// A keyed bijection on `0..n` (see the module doc).
#[derive(Debug, Clone)]
pub struct BlockShuffle {
    n: u64,
    /// Bits of the low half; the high half holds the rest of the domain's bits.
    low_bits: u32,
    high_bits: u32,
    keys: [u64; 4],
}

impl BlockShuffle {
    /// The shuffle of `0..n` for this seed (n = 0 is taken as 1).
    pub fn new(n: u64, seed: u64) -> Self {
        let n = n.max(1);
        let bits = 64 - (n - 1).leading_zeros();
        let low_bits = bits / 2;
        let mut rng = Rng::new(seed);
        BlockShuffle {
            n,
            low_bits,
            high_bits: bits - low_bits,
            keys: [
                rng.next_u64(),
                rng.next_u64(),
                rng.next_u64(),
                rng.next_u64(),
            ],
        }
    }

    /// How many blocks it shuffles.
    pub fn blocks(&self) -> u64 {
        self.n
    }

    /// The block in place `i` (`i < n`) of the shuffled order.
    #[inline]
    pub fn map(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut x = i;
        loop {
            x = self.permute(x);
            if x < self.n {
                return x;
            }
        }
    }

    /// One pass of the network over the whole power-of-two domain.
    #[inline]
    fn permute(&self, x: u64) -> u64 {
        let mut left = x >> self.low_bits;
        let mut right = x & mask(self.low_bits);
        let (mut left_bits, mut right_bits) = (self.high_bits, self.low_bits);
        for k in self.keys {
            let f = mix(right ^ k) & mask(left_bits);
            (left, right) = (right, left ^ f);
            (left_bits, right_bits) = (right_bits, left_bits);
        }
        debug_assert_eq!(left_bits, self.high_bits);
        (left << right_bits) | right
    }
}

/// The low `bits` bits set (`bits` ≤ 32 here: half of at most 64).
#[inline(always)]
fn mask(bits: u32) -> u64 {
    (1u64 << bits) - 1
}

/// splitmix64's finaliser.
#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every place's block, checked to be each block of `0..n` once.
    fn order(n: u64, seed: u64) -> Vec<u64> {
        let s = BlockShuffle::new(n, seed);
        assert_eq!(s.blocks(), n);
        let out: Vec<u64> = (0..n).map(|i| s.map(i)).collect();
        let mut seen = vec![false; n as usize];
        for &b in &out {
            assert!(
                b < n && !seen[b as usize],
                "n={n}: block {b} twice or out of range"
            );
            seen[b as usize] = true;
        }
        out
    }

    #[test]
    fn it_is_a_bijection_for_any_count() {
        // Odd and even bit counts, powers of two and one past them.
        for n in [
            1u64, 2, 3, 4, 5, 7, 8, 9, 64, 100, 1000, 1024, 1025, 4099, 65_537,
        ] {
            order(n, 42);
        }
    }

    #[test]
    fn seeds_give_different_orders_that_are_not_the_identity() {
        let a = order(1000, 1);
        let b = order(1000, 2);
        assert_ne!(a, b);
        let in_place = a
            .iter()
            .enumerate()
            .filter(|&(i, &x)| i as u64 == x)
            .count();
        assert!(in_place < 20, "{in_place} blocks left in place");
    }

    #[test]
    fn a_large_count_maps_into_range() {
        let s = BlockShuffle::new(u64::MAX, 9);
        for i in [0, 1, u64::MAX / 2, u64::MAX - 1] {
            assert!(s.map(i) < u64::MAX);
        }
        let s = BlockShuffle::new((1 << 40) + 3, 9);
        let (a, b) = (s.map(5), s.map(6));
        assert!(a != b && a < (1 << 40) + 3 && b < (1 << 40) + 3);
    }
}
