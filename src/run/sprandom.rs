//! SPRandom preconditioning (fio's `sprandom`, from SanDisk): one random-write pass
//! that leaves an SSD's flash in the state long random writing would, in about one
//! physical capacity of writes instead of several.
//!
//! Why it works: a drive writes flash in arrival order, so the write sequence cut into
//! equal stretches is a sequence of flash regions. In steady state under random
//! writes with greedy garbage collection, Desnoyers' model says the share of flash
//! holding blocks of validity v is proportional to 1/v (validity × space is
//! constant), down to the validity of the block GC picks, 1 − 1/WA, where the write
//! amplification WA ≈ 0.5/OP + 0.7. [`validity_targets`] turns that curve into one
//! target validity per equal region, ascending. The generator then writes the
//! physical capacity (logical × (1 + OP)) once: every logical block fresh once, in a
//! shuffled order (`run::block_shuffle`), and each write in region r is marked, with
//! probability 1 − v_r, to be written again in the next region, which makes its copy
//! in region r stale. With a cache size (`spr_cs`) the rewrites of region r go at the
//! end of region r + 1 rather than its start, so a drive's write cache never holds
//! both copies.
//!
//! Trade-offs: the sequence is for one stream (its state is the order itself), needs
//! one block size, and ends when every logical block has been written and the
//! rewrites due are done; the total is the physical capacity within a small
//! statistical margin (the model's rewrites add up to OP of the logical size up to
//! the resampling's error, under 1 % of it). Memory: two lists of block numbers, at
//! most a region's worth each.

use super::block_shuffle::BlockShuffle;
use crate::plan::model::Sprandom;
use crate::rng::Rng;

/// SPRandom as an extension of the run core: its settings against the workload,
/// its layout against the working set; the order itself is the stream's
/// (`StreamExtras`).
pub(super) const EXTENSION: super::extension::checks::Extension =
    super::extension::checks::Extension {
        misfit: |w| {
            let why = w.sprandom.as_ref()?.misfit(w)?;
            Some(format!("sprandom: {why}"))
        },
        places_offsets: |w| w.sprandom.is_some(),
        ends_streams: |w| w.sprandom.is_some(),
        working_set: fit_working_set,
        ..super::extension::checks::Extension::NONE
    };

/// Regions of at least a block, a cache no larger than a region.
fn fit_working_set(
    run: &crate::plan::model::RunSpec,
    w: &crate::plan::model::Workload,
    _uri: &str,
    ws_len: u64,
) -> Result<u64, super::RunError> {
    let Some(spec) = &w.sprandom else {
        return Ok(ws_len);
    };
    Layout::new(spec, ws_len, w.bs.max_bytes()).map_err(|e| super::RunError::Invalid {
        run: run.name.clone(),
        workload: w.name.clone(),
        msg: e.to_string(),
    })?;
    Ok(ws_len)
}

/// Why a sprandom layout cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SprandomError {
    #[error("sprandom: over-provisioning {0} is not between 0 and 1 (exclusive)")]
    Op(f64),
    #[error("sprandom: needs at least one region")]
    NoRegions,
    #[error(
        "sprandom: {physical_blocks} blocks of physical capacity cannot make {regions} regions \
         (a region needs at least one block); use fewer regions or a larger target"
    )]
    TooSmall { physical_blocks: u64, regions: u32 },
    #[error(
        "sprandom: cache of {cache_bytes} bytes is larger than a region ({region_bytes} \
         bytes); use at most {max_regions} regions"
    )]
    Cache {
        cache_bytes: u64,
        region_bytes: u64,
        max_regions: u64,
    },
    #[error("sprandom: block size must be above 0")]
    NoBlock,
}

/// Write amplification of greedy GC at this over-provisioning (the model's
/// approximation of Desnoyers' closed form).
pub fn write_amplification(op: f64) -> f64 {
    0.5 / op + 0.7
}

/// The target validity of each of `regions` equal regions, lowest (the GC block's,
/// 1 − 1/WA) first, highest (1.0) last.
///
/// The curve is built at equally spaced validities from 1 down to the GC validity,
/// each point taking space ∝ 1/v; the cumulative space is then sampled at equal
/// steps (linear interpolation) so the regions are of equal size.
pub fn validity_targets(regions: u32, op: f64) -> Vec<f64> {
    let n = regions as usize;
    if n == 0 {
        return Vec::new();
    }
    let gc = 1.0 - 1.0 / write_amplification(op);
    let step = |lo: f64, hi: f64, i: usize| {
        if n == 1 {
            lo
        } else {
            lo + (hi - lo) * i as f64 / (n - 1) as f64
        }
    };
    let validity: Vec<f64> = (0..n).map(|i| step(1.0, gc, i)).collect();
    let mut space = Vec::with_capacity(n);
    let mut acc = 0.0;
    for v in &validity {
        acc += 1.0 / v;
        space.push(acc);
    }
    let (first, last) = (space[0], space[n - 1]);
    let mut out: Vec<f64> = (0..n)
        .map(|i| interpolate(&space, &validity, step(first, last, i)))
        .collect();
    out.reverse();
    out
}

/// y at x on the polyline (xs ascending), held flat beyond its ends.
fn interpolate(xs: &[f64], ys: &[f64], x: f64) -> f64 {
    if x <= xs[0] {
        return ys[0];
    }
    for i in 1..xs.len() {
        if x <= xs[i] {
            let (x0, x1) = (xs[i - 1], xs[i]);
            if x1 - x0 < 1e-12 {
                return ys[i - 1];
            }
            return ys[i - 1] + (ys[i] - ys[i - 1]) * (x - x0) / (x1 - x0);
        }
    }
    ys[ys.len() - 1]
}

/// The physical capacity for `logical_bytes` at this over-provisioning, rounded
/// down to whole blocks (logical + ⌈logical × OP⌉, as fio sizes it).
pub fn physical_bytes(logical_bytes: u64, op: f64, block_bytes: u64) -> u64 {
    let size = logical_bytes.saturating_add((logical_bytes as f64 * op).ceil() as u64);
    size - size % block_bytes.max(1)
}

/// How the write sequence is cut: blocks, regions and each region's rewrite share.
#[derive(Debug, Clone)]
pub struct Layout {
    pub logical_blocks: u64,
    pub physical_blocks: u64,
    /// Writes per region; the last region also takes the remainder.
    pub region_blocks: u64,
    /// Per region, the share of its writes to be written again (1 − target validity).
    pub rewrite_share: Vec<f64>,
    /// Rewrites go at the end of the next region (a cache size was given).
    pub deferred: bool,
}

impl Layout {
    /// The layout for a working set of `logical_bytes` written in `block_bytes`.
    pub fn new(
        spec: &Sprandom,
        logical_bytes: u64,
        block_bytes: u64,
    ) -> Result<Self, SprandomError> {
        if !(spec.op > 0.0 && spec.op < 1.0) {
            return Err(SprandomError::Op(spec.op));
        }
        if spec.regions == 0 {
            return Err(SprandomError::NoRegions);
        }
        if block_bytes == 0 {
            return Err(SprandomError::NoBlock);
        }
        let physical = physical_bytes(logical_bytes, spec.op, block_bytes);
        let physical_blocks = physical / block_bytes;
        let region_blocks = physical_blocks / u64::from(spec.regions);
        if region_blocks == 0 {
            return Err(SprandomError::TooSmall {
                physical_blocks,
                regions: spec.regions,
            });
        }
        let region_bytes = physical / u64::from(spec.regions);
        if spec.cache_bytes > region_bytes {
            return Err(SprandomError::Cache {
                cache_bytes: spec.cache_bytes,
                region_bytes,
                max_regions: physical / spec.cache_bytes,
            });
        }
        Ok(Layout {
            logical_blocks: logical_bytes / block_bytes,
            physical_blocks,
            region_blocks,
            rewrite_share: validity_targets(spec.regions, spec.op)
                .iter()
                .map(|v| 1.0 - v)
                .collect(),
            deferred: spec.cache_bytes > 0,
        })
    }

    /// The region a write of this index (0-based, in issue order) lands in.
    pub fn region_of(&self, write_index: u64) -> usize {
        let last = self.rewrite_share.len() - 1;
        ((write_index / self.region_blocks) as usize).min(last)
    }
}

/// The write sequence, one block number at a time (see the module doc).
#[derive(Debug, Clone)]
pub struct SprandomOrder {
    layout: Layout,
    shuffle: BlockShuffle,
    /// Fresh blocks handed out so far.
    fresh_done: u64,
    region: usize,
    written_in_region: u64,
    /// Blocks written in this region that are to be written again.
    marked: Vec<u64>,
    /// The previous region's marked blocks, still to be written in this one.
    due: Vec<u64>,
    rng: Rng,
}

impl SprandomOrder {
    pub fn new(layout: Layout, seed: u64) -> Self {
        SprandomOrder {
            shuffle: BlockShuffle::new(layout.logical_blocks, seed),
            layout,
            fresh_done: 0,
            region: 0,
            written_in_region: 0,
            marked: Vec::new(),
            due: Vec::new(),
            rng: Rng::new(seed ^ 0x5350_5241_4e44_4f4d),
        }
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The next block to write, or `None` when the sequence is over.
    pub fn next_block(&mut self) -> Option<u64> {
        let last_region = self.layout.rewrite_share.len() - 1;
        if self.region < last_region && self.written_in_region >= self.layout.region_blocks {
            // The next region: this one's marked blocks fall due in it.
            debug_assert!(self.due.is_empty());
            std::mem::swap(&mut self.due, &mut self.marked);
            self.region += 1;
            self.written_in_region = 0;
        }
        let fresh_left = self.fresh_done < self.layout.logical_blocks;
        let due_now = if self.layout.deferred {
            // After the region's fresh writes (or when none are left).
            let room = self
                .layout
                .region_blocks
                .saturating_sub(self.written_in_region);
            !fresh_left || self.due.len() as u64 >= room
        } else {
            true
        };
        let block = match self.due.pop() {
            Some(b) if due_now || !fresh_left => b,
            Some(b) => {
                self.due.push(b);
                self.fresh()
            }
            None if fresh_left => self.fresh(),
            None => return None,
        };
        self.written_in_region += 1;
        if self.rng.unit_f64() < self.layout.rewrite_share[self.region] {
            self.marked.push(block);
        }
        Some(block)
    }

    fn fresh(&mut self) -> u64 {
        let b = self.shuffle.map(self.fresh_done);
        self.fresh_done += 1;
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(op: f64, regions: u32, cache_bytes: u64) -> Sprandom {
        Sprandom {
            op,
            regions,
            cache_bytes,
        }
    }

    /// Replays the whole sequence: every block number, and per region the share of
    /// its writes that are the last write of their block (its valid data).
    fn replay(layout: Layout, seed: u64) -> (Vec<u64>, Vec<f64>) {
        let mut order = SprandomOrder::new(layout.clone(), seed);
        let mut seq = Vec::new();
        while let Some(b) = order.next_block() {
            seq.push(b);
            assert!(seq.len() as u64 <= 2 * layout.physical_blocks, "runaway");
        }
        let mut last = vec![u64::MAX; layout.logical_blocks as usize];
        for (i, &b) in seq.iter().enumerate() {
            last[b as usize] = i as u64;
        }
        let regions = layout.rewrite_share.len();
        let (mut valid, mut total) = (vec![0u64; regions], vec![0u64; regions]);
        for (i, &b) in seq.iter().enumerate() {
            let r = layout.region_of(i as u64);
            total[r] += 1;
            if last[b as usize] == i as u64 {
                valid[r] += 1;
            }
        }
        let frac = valid
            .iter()
            .zip(&total)
            .map(|(&v, &t)| v as f64 / t.max(1) as f64)
            .collect();
        (seq, frac)
    }

    #[test]
    fn targets_follow_the_model() {
        let v = validity_targets(100, 0.15);
        assert_eq!(v.len(), 100);
        // The GC block's validity at OP 15 %: 1 − 1/(0.5/0.15 + 0.7).
        let gc = 1.0 - 1.0 / (0.5 / 0.15 + 0.7);
        assert!((v[0] - gc).abs() < 1e-9, "{}", v[0]);
        assert!((v[99] - 1.0).abs() < 1e-9);
        assert!(v.windows(2).all(|w| w[0] <= w[1]), "ascending");
        // Equal regions: low validities take more space, so more of the regions sit
        // low and the mean validity is below the midpoint of [gc, 1].
        let mean = v.iter().sum::<f64>() / 100.0;
        assert!(mean < (1.0 + gc) / 2.0 - 0.003, "{mean}");
        // The rewrites add up to about OP of the logical size (1 − mean = OP/(1+OP)).
        assert!((1.0 - mean - 0.15 / 1.15).abs() < 0.002, "{mean}");
        assert_eq!(validity_targets(1, 0.15), vec![1.0]);
    }

    #[test]
    fn the_sequence_writes_the_physical_capacity_once_with_the_model_validity() {
        for (cache, seed) in [(0u64, 7u64), (4096, 11)] {
            let bs = 4096;
            let logical = 200_000 * bs;
            let layout = Layout::new(&spec(0.15, 20, cache), logical, bs).unwrap();
            assert_eq!(layout.physical_blocks, 230_000);
            let targets = validity_targets(20, 0.15);
            let (seq, valid) = replay(layout.clone(), seed);
            // Every logical block written, each at least once.
            let mut seen = vec![false; 200_000];
            for &b in &seq {
                assert!(b < 200_000, "block {b} out of range");
                seen[b as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "a block never written");
            // The total is the physical capacity within 0.5 %.
            let total = seq.len() as f64;
            assert!(
                (total / 230_000.0 - 1.0).abs() < 0.005,
                "cache {cache}: {total} writes"
            );
            // Each region's valid share matches its target (binomial noise on 11 500
            // writes is under 0.005; the last region holds any remainder).
            for (r, (&got, &want)) in valid.iter().zip(&targets).enumerate() {
                assert!(
                    (got - want).abs() < 0.02,
                    "cache {cache}: region {r}: valid {got:.4}, target {want:.4}"
                );
            }
            let err: f64 = valid
                .iter()
                .zip(&targets)
                .map(|(g, w)| (g - w).abs())
                .sum::<f64>()
                / 20.0;
            assert!(err < 0.006, "cache {cache}: mean error {err}");
        }
    }

    #[test]
    fn deferred_rewrites_stay_a_cache_away_from_their_first_copy() {
        // With a cache size, a block's rewrite follows its first write by at least the
        // fresh writes of a region, never within the same region.
        let bs = 4096;
        let layout = Layout::new(&spec(0.28, 10, 64 * bs), 20_000 * bs, bs).unwrap();
        let r = layout.region_blocks;
        let mut order = SprandomOrder::new(layout.clone(), 3);
        let mut first: std::collections::HashMap<u64, u64> = Default::default();
        let mut i = 0u64;
        let mut min_gap = u64::MAX;
        while let Some(b) = order.next_block() {
            if let Some(&at) = first.get(&b) {
                assert!(
                    layout.region_of(i) > layout.region_of(at),
                    "rewrite in its own region"
                );
                min_gap = min_gap.min(i - at);
            }
            first.insert(b, i);
            i += 1;
        }
        assert!(min_gap >= r / 2, "gap {min_gap} of a region of {r}");
    }

    #[test]
    fn bad_layouts_are_refused() {
        let bs = 4096;
        assert_eq!(
            Layout::new(&spec(0.0, 10, 0), 1 << 20, bs).unwrap_err(),
            SprandomError::Op(0.0)
        );
        assert!(Layout::new(&spec(1.0, 10, 0), 1 << 20, bs).is_err());
        assert_eq!(
            Layout::new(&spec(0.15, 0, 0), 1 << 20, bs).unwrap_err(),
            SprandomError::NoRegions
        );
        assert!(matches!(
            Layout::new(&spec(0.15, 1000, 0), 1 << 20, bs),
            Err(SprandomError::TooSmall { .. })
        ));
        assert!(matches!(
            Layout::new(&spec(0.15, 10, 1 << 20), 1 << 20, bs),
            Err(SprandomError::Cache { .. })
        ));
    }
}
