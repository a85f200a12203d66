//! The random map (`random_map = true`, fio's default unless `norandommap`): a
//! stream's random offsets visit every block of the working set once per pass over
//! its blocks, in a shuffled order that is new each pass, where independent draws
//! would repeat some blocks and miss others (128 draws over 128 blocks touch about 81).
//!
//! fio keeps a bitmap of the blocks done (its axmap) and, when a drawn block is done,
//! takes the next free one after it. This keeps no per-block state: a pass walks a
//! keyed full-period generator over the smallest power of two ≥ the block count, so
//! a map costs a few words per stream whatever the target's size, and an offset a
//! handful of arithmetic operations per step (fewer than two steps on average) and no
//! memory access beyond the stream. Each pass is keyed from the stream's own seed, so
//! a run repeats with its seed. The trade-off: the set of blocks per pass is fio's,
//! their order is not (fio moves a drawn block already done to the next free one
//! after it, which favours free blocks that follow long runs of done ones).
//!
//! The generator: a linear congruential step `x → (a·x + c) mod 2^bits` with `c` odd
//! and `a ≡ 1 (mod 4)`, which visits all 2^bits states once per period (Hull and
//! Dobell), its output passed through `x ^ (x >> s)` (a bijection on `bits`-bit
//! values) so the low bits do not simply alternate. Outputs at or above the block
//! count are stepped over (cycle-walking): one period holds every block exactly
//! once, and a pass ends at its last, within one period of where it started. fio's
//! own `random_generator=lfsr` walks a Galois LFSR the same way (skipping values past
//! the end), whose successive values are shifts of each other; the LCG costs the
//! same few operations and spreads successive blocks further. SPRandom keeps the
//! Feistel shuffle (`run::block_shuffle`), which it asks by position.

use crate::plan::model::{AccessPattern, Distribution, Workload};
use crate::plan::settings::declared::{RANDOM_MAP, TRACE};
use crate::rng::Rng;

/// One stream's walk over the blocks: the current pass's generator and how far into
/// it the stream is.
#[derive(Debug, Clone)]
pub struct RandomMap {
    blocks: u64,
    /// 2^bits − 1: the generator's values are `0..=mask`.
    mask: u64,
    /// The output's xor-shift.
    shift: u32,
    /// This pass's multiplier (≡ 1 mod 4) and increment (odd).
    mul: u64,
    inc: u64,
    /// The generator's state.
    x: u64,
    /// Blocks handed out in this pass.
    done: u64,
    /// Keys each new pass.
    rng: Rng,
}

impl RandomMap {
    /// A map over `blocks` blocks (0 is taken as 1), its passes keyed from `seed`.
    pub fn new(blocks: u64, seed: u64) -> Self {
        let blocks = blocks.max(1);
        let bits = 64 - (blocks - 1).leading_zeros();
        let mut m = RandomMap {
            blocks,
            mask: if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            },
            shift: bits.div_ceil(2).max(1),
            mul: 1,
            inc: 1,
            x: 0,
            done: 0,
            rng: Rng::new(seed),
        };
        m.new_pass();
        m
    }

    /// The next block of the pass; after the pass's last block, the first of a new
    /// pass in a new order.
    #[inline]
    pub fn next_block(&mut self) -> u64 {
        if self.done == self.blocks {
            self.new_pass();
        }
        self.done += 1;
        loop {
            self.x = self.x.wrapping_mul(self.mul).wrapping_add(self.inc) & self.mask;
            let b = self.x ^ (self.x >> self.shift);
            if b < self.blocks {
                return b;
            }
        }
    }

    /// Starts a new pass (a new order, no block done): at the end of a pass's
    /// blocks, or of a pass's bytes (fio's `io_size` loop, after which fio's map is
    /// empty again).
    #[cold]
    pub fn new_pass(&mut self) {
        self.mul = (self.rng.next_u64() << 2) | 1;
        self.inc = self.rng.next_u64() | 1;
        self.x = self.rng.next_u64() & self.mask;
        self.done = 0;
    }
}

/// Why a workload cannot have `random_map = true`, if it cannot: its offsets must be
/// uniform random draws over the whole working set by a stream of its own.
pub fn misfit(w: &Workload) -> Option<&'static str> {
    if !w.settings.flag(&RANDOM_MAP) {
        return None;
    }
    if !w.settings.get(&TRACE).as_str().is_empty() {
        return Some("random_map does not apply to a trace replay, whose offsets are the trace's");
    }
    if !matches!(w.pattern, AccessPattern::Random) {
        return Some("random_map needs random access (rw = randread, randwrite, randrw)");
    }
    if !matches!(w.dist, Distribution::Uniform) {
        return Some(
            "random_map needs the uniform distribution (fio too keeps no random map for \
             another; leave dist out)",
        );
    }
    if w.zones.is_some() {
        return Some("random_map is not available with strided zones");
    }
    if w.sprandom.is_some() {
        return Some("random_map does not apply to sprandom, which orders its own writes");
    }
    if w.share_pct.is_some() {
        return Some("random_map is not available on a workload with a share of a mix");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocks of `passes` passes over `n` blocks, one Vec per pass, each checked
    /// to hold every block exactly once.
    fn passes(n: u64, passes: usize, seed: u64) -> Vec<Vec<u64>> {
        let mut m = RandomMap::new(n, seed);
        (0..passes)
            .map(|_| {
                let pass: Vec<u64> = (0..n).map(|_| m.next_block()).collect();
                let mut sorted = pass.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n={n}");
                pass
            })
            .collect()
    }

    #[test]
    fn each_pass_touches_every_block_once_and_the_next_pass_is_another_order() {
        let p = passes(1000, 3, 7);
        assert_ne!(p[0], p[1]);
        assert_ne!(p[1], p[2]);
        // Not a sweep: far from the blocks' own order.
        let in_order = p[0].windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(in_order < 20, "{in_order} steps to the next block");
    }

    #[test]
    fn tiny_working_sets_are_covered_too() {
        assert_eq!(passes(1, 3, 1), vec![vec![0]; 3]);
        passes(2, 4, 1);
        let p = passes(3, 12, 1);
        // Three blocks have six orders: twelve passes do not all repeat one.
        assert!(p.iter().any(|o| o != &p[0]), "{p:?}");
    }

    #[test]
    fn the_same_seed_repeats_the_walk_and_another_does_not() {
        assert_eq!(passes(500, 2, 3), passes(500, 2, 3));
        assert_ne!(passes(500, 1, 3), passes(500, 1, 4));
    }

    #[test]
    fn every_count_is_walked_whole() {
        // Odd and even bit counts, powers of two and one past them.
        for n in [
            1u64, 2, 3, 4, 5, 7, 8, 9, 64, 100, 1000, 1024, 1025, 4099, 65_537,
        ] {
            passes(n, 2, 42);
        }
    }

    #[test]
    fn huge_counts_stay_in_range() {
        for n in [u64::MAX, (1 << 40) + 3] {
            let mut m = RandomMap::new(n, 9);
            let blocks: Vec<u64> = (0..1000).map(|_| m.next_block()).collect();
            let mut distinct = blocks.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(distinct.len(), blocks.len(), "n={n}: a block twice");
            assert!(blocks.iter().all(|&b| b < n), "n={n}");
        }
    }

    /// Successive blocks are as far apart as independent draws would be: near
    /// neighbours (within 1/64 of the range) about 1 time in 32, and the low bit
    /// changing about half the time (a bare power-of-two LCG's alternates).
    #[test]
    fn successive_blocks_are_spread() {
        let n = 65_536u64;
        let pass = &passes(n, 1, 3)[0];
        let steps = (n - 1) as f64;
        let near = pass
            .windows(2)
            .filter(|w| w[0].abs_diff(w[1]) < n / 64)
            .count();
        let near = near as f64 / steps;
        assert!((0.02..0.045).contains(&near), "{near} near neighbours");
        let flips = pass.windows(2).filter(|w| (w[0] ^ w[1]) & 1 == 1).count();
        let flips = flips as f64 / steps;
        assert!((0.4..0.6).contains(&flips), "low bit changes {flips}");
    }

    #[test]
    fn a_new_pass_mid_way_starts_a_whole_pass() {
        let mut m = RandomMap::new(100, 5);
        for _ in 0..37 {
            m.next_block();
        }
        m.new_pass();
        let mut pass: Vec<u64> = (0..100).map(|_| m.next_block()).collect();
        pass.sort_unstable();
        assert_eq!(pass, (0..100).collect::<Vec<_>>());
    }
}
