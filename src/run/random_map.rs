//! The random map (`random_map = true`, fio's default unless `norandommap`): a
//! stream's random offsets visit every block of the working set once per pass over
//! its blocks, in a shuffled order that is new each pass, where independent draws
//! would repeat some blocks and miss others (128 draws over 128 blocks touch about 81).
//!
//! fio keeps a bitmap of the blocks done (its axmap) and, when a drawn block is done,
//! takes the next free one after it. This keeps no per-block state: the pass walks a
//! keyed bijection on the blocks (`run::block_shuffle`), so a map costs a few words
//! per stream whatever the target's size, and each offset a few dozen arithmetic
//! operations (four Feistel rounds, walked fewer than twice on average) and no memory
//! access beyond the stream. Each pass is keyed from the stream's own seed, so a run
//! repeats with its seed. The trade-off: the set of blocks per pass is fio's, their
//! order is not (fio moves a drawn block already done to the next free one after
//! it, which favours free blocks that follow long runs of done ones).

use super::block_shuffle::BlockShuffle;
use crate::plan::model::{AccessPattern, Distribution, Workload};
use crate::plan::settings::declared::{RANDOM_MAP, TRACE};
use crate::rng::Rng;

/// One stream's walk over the blocks: the current pass's shuffle and how far into
/// it the stream is.
#[derive(Debug, Clone)]
pub struct RandomMap {
    shuffle: BlockShuffle,
    /// Blocks handed out in this pass.
    done: u64,
    /// Keys each new pass.
    rng: Rng,
}

impl RandomMap {
    /// A map over `blocks` blocks, its passes keyed from `seed`.
    pub fn new(blocks: u64, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        RandomMap {
            shuffle: BlockShuffle::new(blocks, rng.next_u64()),
            done: 0,
            rng,
        }
    }

    /// The next block of the pass; after the pass's last block, the first of a new
    /// pass in a new order.
    #[inline]
    pub fn next_block(&mut self) -> u64 {
        if self.done == self.shuffle.blocks() {
            self.new_pass();
        }
        let b = self.shuffle.map(self.done);
        self.done += 1;
        b
    }

    /// Starts a new pass (a new order, no block done): at the end of a pass's
    /// blocks, or of a pass's bytes (fio's `io_size` loop, after which fio's map is
    /// empty again).
    #[cold]
    pub fn new_pass(&mut self) {
        self.shuffle = BlockShuffle::new(self.shuffle.blocks(), self.rng.next_u64());
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
