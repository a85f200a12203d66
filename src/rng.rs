//! A small, fast, seedable PRNG (xoshiro256++) for offsets, mixes and data. Every
//! stream owns one, seeded from the run seed and its stream index, so a run with the
//! same seed issues the same offsets. Not cryptographic, and need not be.

/// xoshiro256++ state.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// Seeds the state through splitmix64 so that nearby seeds give unrelated streams.
    pub fn new(seed: u64) -> Self {
        let mut z = seed;
        let mut next = || {
            z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut x = z;
            x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            x ^ (x >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform integer in `0..n` (Lemire's multiply-shift; bias below 2^-64 · n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform float in [0, 1).
    #[inline]
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// An exponential variate with mean 1 (ziggurat, usually one draw, no `ln`).
    #[inline]
    pub fn exp1(&mut self) -> f64 {
        use rand_distr::Distribution;
        rand_distr::Exp1.sample(self)
    }
}

/// Lets rand_distr's samplers draw from the stream RNG.
impl rand_core::RngCore for Rng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        Rng::next_u64(self)
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        for chunk in dst.chunks_mut(8) {
            let v = Rng::next_u64(self).to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(Rng::new(7).next_u64(), Rng::new(8).next_u64());
    }

    #[test]
    fn exp1_has_mean_and_variance_one() {
        let mut r = Rng::new(3);
        let n = 400_000;
        let (mut sum, mut sq) = (0.0, 0.0);
        let mut over2 = 0;
        for _ in 0..n {
            let x = r.exp1();
            assert!(x >= 0.0);
            sum += x;
            sq += x * x;
            if x > 2.0 {
                over2 += 1;
            }
        }
        let mean = sum / n as f64;
        let var = sq / n as f64 - mean * mean;
        assert!((mean - 1.0).abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.03, "variance {var}");
        // P(X > 2) = e^-2 = 0.1353.
        let tail = over2 as f64 / n as f64;
        assert!((tail - 0.1353).abs() < 0.003, "tail {tail}");
    }

    #[test]
    fn below_is_in_range_and_spread() {
        let mut r = Rng::new(1);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            let v = r.below(10);
            counts[v as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }
}
