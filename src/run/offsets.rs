//! Random offset distributions: uniform, Zipf, Pareto and zoned (hot bands). Each maps
//! one or two RNG draws to a block index in `0..n`; none allocates per I/O. A sequence
//! (fio's `sequence:2,0,1`) draws nothing: the stream's I/O count picks the block.
//! vdbench's hotband curve places an I/O by its size and direction, so it gives a
//! byte offset instead ([`super::hotband`]).
//!
//! Zipf uses inversion of the continuous power law x^-θ on [1, n+1) (one `powf` per
//! sample, no O(n) set-up, any θ > 0); it matches the discrete Zipf closely except for
//! the first few ranks. Pareto follows fio's `pareto:h` (rank = (n-1)·u^(ln h / ln(1-h))).
//! Skewed ranks are scattered over the range by a multiplicative permutation so the
//! hot blocks are not all at the start of the device (as fio does by default).

use super::hotband::Hotband;
use crate::plan::model::Distribution;
use crate::rng::Rng;

/// A prepared sampler for one working set of `n` blocks.
#[derive(Debug, Clone)]
pub enum OffsetSampler {
    Uniform,
    Zipf {
        theta: f64,
        /// (n+1)^(1-θ) - 1, precomputed (θ ≠ 1).
        span: f64,
        ln_n1: f64,
        perm: Permutation,
    },
    Pareto {
        pow: f64,
        perm: Permutation,
    },
    Zoned {
        /// Cumulative I/O share (0..1] and the band's [start, end) as fractions.
        bands: Vec<(f64, f64, f64)>,
    },
    /// Block indices in order, repeated; `stride` moves each repetition on by the
    /// sequence's length. Not drawn: [`OffsetSampler::sequence_block`] maps the
    /// stream's I/O count of a direction to the block.
    Sequence {
        blocks: Box<[u64]>,
        stride: bool,
    },
    /// vdbench's hotband curve: not drawn as a block; the stream asks
    /// [`Hotband::offset`] with the I/O's size and direction.
    Hotband(Hotband),
}

/// A bijection on 0..n: k → (k·p + c) mod n with gcd(p, n) = 1.
#[derive(Debug, Clone, Copy)]
pub struct Permutation {
    mult: u64,
    add: u64,
}

impl Permutation {
    pub(crate) fn new(n: u64) -> Self {
        const PRIMES: [u64; 4] = [
            0x9E37_79B9_7F4A_7C15 | 1,
            2_654_435_761,
            1_000_000_007,
            998_244_353,
        ];
        let n = n.max(1);
        let mult = PRIMES
            .iter()
            .map(|&p| p % n)
            .find(|&p| p != 0 && gcd(p, n) == 1)
            .unwrap_or(1);
        Permutation { mult, add: n / 3 }
    }

    #[inline]
    pub(crate) fn apply(&self, k: u64, n: u64) -> u64 {
        ((k as u128 * self.mult as u128 + self.add as u128) % n as u128) as u64
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl OffsetSampler {
    /// Prepares a sampler for `n` blocks of a working set of `ws_bytes`.
    pub fn of_working_set(dist: &Distribution, n: u64, ws_bytes: u64) -> Self {
        match dist {
            Distribution::VdbenchHotband => OffsetSampler::Hotband(Hotband::new(ws_bytes)),
            Distribution::ZonedBytes { .. } => Self::new(&dist.in_fractions(ws_bytes), n),
            _ => Self::new(dist, n),
        }
    }

    /// Prepares a sampler for `n` blocks inside one file of `file_bytes` (a file
    /// set): a zoned_abs distribution's bands measured in the file.
    pub fn of_file(dist: &Distribution, n: u64, file_bytes: u64) -> Self {
        match dist {
            Distribution::ZonedBytes { .. } => Self::new(&dist.in_fractions(file_bytes), n),
            _ => Self::new(dist, n),
        }
    }

    /// Prepares a sampler for `n` blocks (of no known size in bytes: vdbench's
    /// hotband, which counts bytes, gets a band of none).
    pub fn new(dist: &Distribution, n: u64) -> Self {
        let n = n.max(1);
        match dist {
            Distribution::Uniform => OffsetSampler::Uniform,
            Distribution::Zipf { theta } => OffsetSampler::Zipf {
                theta: *theta,
                span: ((n + 1) as f64).powf(1.0 - theta) - 1.0,
                ln_n1: ((n + 1) as f64).ln(),
                perm: Permutation::new(n),
            },
            Distribution::Pareto { h } => OffsetSampler::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
                perm: Permutation::new(n),
            },
            Distribution::Zoned { bands } => {
                let total_io: f64 = bands.iter().map(|b| b.io_pct).sum();
                let mut cum_io = 0.0;
                let mut start = 0.0;
                let out = bands
                    .iter()
                    .map(|b| {
                        cum_io += b.io_pct / total_io;
                        let s = start;
                        start += b.range_pct / 100.0;
                        (cum_io, s, start.min(1.0))
                    })
                    .collect();
                OffsetSampler::Zoned { bands: out }
            }
            Distribution::Sequence { blocks, stride } => OffsetSampler::Sequence {
                blocks: blocks.clone().into_boxed_slice(),
                stride: *stride,
            },
            Distribution::VdbenchHotband => OffsetSampler::Hotband(Hotband::new(0)),
            // Measured in a set of no known size: the whole set one band.
            Distribution::ZonedBytes { .. } => OffsetSampler::Uniform,
        }
    }

    /// The block of the I/O after `issued` I/Os of its direction under a sequence, or
    /// `None` once a strided sequence has moved past the last of the `n` blocks (the
    /// stream then ends, as fio's job does). `None` for every other distribution.
    #[inline]
    pub fn sequence_block(&self, issued: u64, n: u64) -> Option<u64> {
        let OffsetSampler::Sequence { blocks, stride } = self else {
            return None;
        };
        let len = blocks.len().max(1) as u64;
        let base = blocks.get((issued % len) as usize).copied().unwrap_or(0);
        let block = if *stride {
            (issued / len).checked_mul(len)?.checked_add(base)?
        } else {
            base
        };
        (block < n).then_some(block)
    }

    /// True for a sequence, whose blocks come from [`OffsetSampler::sequence_block`].
    #[inline(always)]
    pub fn is_sequence(&self) -> bool {
        matches!(self, OffsetSampler::Sequence { .. })
    }

    /// A block index in `0..n`. The uniform case is inlined into the issue path;
    /// the skewed ones are a call.
    #[inline(always)]
    pub fn sample(&self, rng: &mut Rng, n: u64) -> u64 {
        match self {
            OffsetSampler::Uniform => rng.below(n),
            _ => self.sample_skewed(rng, n),
        }
    }

    /// A block index in `0..n` under a skewed distribution.
    #[inline(never)]
    fn sample_skewed(&self, rng: &mut Rng, n: u64) -> u64 {
        match self {
            // A sequence's blocks are not drawn (the stream asks `sequence_block`), nor
            // the hotband's (the stream asks `Hotband::offset`).
            OffsetSampler::Uniform | OffsetSampler::Sequence { .. } | OffsetSampler::Hotband(_) => {
                rng.below(n)
            }
            OffsetSampler::Zipf {
                theta,
                span,
                ln_n1,
                perm,
            } => {
                let u = rng.unit_f64();
                let x = if (*theta - 1.0).abs() < 1e-9 {
                    (u * ln_n1).exp()
                } else {
                    (u * span + 1.0).powf(1.0 / (1.0 - theta))
                };
                let rank = (x as u64).saturating_sub(1).min(n - 1);
                perm.apply(rank, n)
            }
            OffsetSampler::Pareto { pow, perm } => {
                let u = rng.unit_f64();
                let rank = (((n - 1) as f64) * u.powf(*pow)) as u64;
                perm.apply(rank.min(n - 1), n)
            }
            OffsetSampler::Zoned { bands } => {
                let u = rng.unit_f64();
                let &(_, s, e) = bands
                    .iter()
                    .find(|b| u < b.0)
                    .unwrap_or_else(|| bands.last().expect("validated non-empty"));
                let lo = (s * n as f64) as u64;
                let hi = ((e * n as f64) as u64).clamp(lo + 1, n);
                lo + rng.below(hi - lo)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::Zone;

    fn hits(d: &Distribution, n: u64, draws: usize) -> Vec<u64> {
        let s = OffsetSampler::new(d, n);
        let mut rng = Rng::new(3);
        let mut h = vec![0u64; n as usize];
        for _ in 0..draws {
            let b = s.sample(&mut rng, n);
            assert!(b < n);
            h[b as usize] += 1;
        }
        h
    }

    /// Share of all hits that land on the hottest `frac` of blocks.
    fn top_share(mut h: Vec<u64>, frac: f64) -> f64 {
        let total: u64 = h.iter().sum();
        h.sort_unstable_by(|a, b| b.cmp(a));
        let k = ((h.len() as f64) * frac) as usize;
        h[..k].iter().sum::<u64>() as f64 / total as f64
    }

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 7, 100, 4096, 1_000_003] {
            let p = Permutation::new(n);
            if n <= 4096 {
                let mut seen = vec![false; n as usize];
                for k in 0..n {
                    let v = p.apply(k, n) as usize;
                    assert!(!seen[v]);
                    seen[v] = true;
                }
            }
        }
    }

    #[test]
    fn uniform_is_flat() {
        let top = top_share(hits(&Distribution::Uniform, 1000, 1_000_000), 0.1);
        assert!(top < 0.12, "{top}");
    }

    #[test]
    fn zipf_is_skewed_and_theta_orders_it() {
        let z08 = top_share(
            hits(&Distribution::Zipf { theta: 0.8 }, 10_000, 1_000_000),
            0.1,
        );
        let z12 = top_share(
            hits(&Distribution::Zipf { theta: 1.2 }, 10_000, 1_000_000),
            0.1,
        );
        assert!(z08 > 0.4, "zipf 0.8 top10% {z08}");
        assert!(z12 > z08, "1.2 {z12} vs 0.8 {z08}");
    }

    #[test]
    fn pareto_is_skewed() {
        let p = top_share(
            hits(&Distribution::Pareto { h: 0.8 }, 10_000, 1_000_000),
            0.2,
        );
        assert!(p > 0.6, "pareto 0.8 top 20% {p}");
    }

    #[test]
    fn zoned_bands_get_their_share() {
        let d = Distribution::Zoned {
            bands: vec![
                Zone {
                    io_pct: 80.0,
                    range_pct: 10.0,
                },
                Zone {
                    io_pct: 20.0,
                    range_pct: 90.0,
                },
            ],
        };
        let h = hits(&d, 1000, 1_000_000);
        let first: u64 = h[..100].iter().sum();
        let share = first as f64 / 1e6;
        assert!((share - 0.8).abs() < 0.01, "{share}");
    }

    // zoned_abs on a working set of 1000 blocks of 4 KiB: 30 % of the draws in its
    // first 400 KiB (100 blocks), the rest after them, none before.
    #[test]
    fn zoned_abs_bands_are_measured_in_the_working_set() {
        let d = crate::plan::units::parse_dist("zoned_abs:30/400k:70/").unwrap();
        let s = OffsetSampler::of_working_set(&d, 1000, 1000 * 4096);
        let mut rng = Rng::new(5);
        let (mut first, n) = (0u64, 1_000_000);
        for _ in 0..n {
            first += u64::from(s.sample(&mut rng, 1000) < 100);
        }
        let share = first as f64 / n as f64;
        // 1e6 draws: one σ is 0.00046; 0.005 is over 10 σ.
        assert!((share - 0.3).abs() < 0.005, "{share}");
        // On a set smaller than the bands, they are cut at its end.
        let d = crate::plan::units::parse_dist("zoned_abs:50/1m:50/1m").unwrap();
        let Distribution::Zoned { bands } = d.in_fractions(1 << 20) else {
            panic!()
        };
        assert_eq!(bands.len(), 1);
        assert_eq!((bands[0].io_pct, bands[0].range_pct), (100.0, 100.0));
        // A set larger than the bands keeps its rest untouched.
        let Distribution::Zoned { bands } = d.in_fractions(4 << 20) else {
            panic!()
        };
        let got: Vec<(f64, f64)> = bands.iter().map(|b| (b.io_pct, b.range_pct)).collect();
        assert_eq!(got, [(50.0, 25.0), (50.0, 25.0), (0.0, 50.0)]);
    }

    fn sequence(spec: &str, n: u64, ios: u64) -> Vec<Option<u64>> {
        let s = OffsetSampler::new(&Distribution::parse(spec).unwrap(), n);
        assert!(s.is_sequence());
        (0..ios).map(|i| s.sequence_block(i, n)).collect()
    }

    #[test]
    fn a_sequence_repeats_its_blocks_in_order() {
        let got = sequence("sequence:2,0,1", 12, 7);
        let want = [2, 0, 1, 2, 0, 1, 2].map(Some);
        assert_eq!(got, want);
    }

    #[test]
    fn a_strided_sequence_moves_on_by_its_length_and_ends_past_the_last_block() {
        let got = sequence("sequence:2,0,1:stride", 8, 9);
        // Groups 0..3, 3..6, then 6..9: block 8 is past the 8 blocks, so the walk ends.
        let mut want: Vec<Option<u64>> = [2, 0, 1, 5, 3, 4].map(Some).to_vec();
        want.extend([None, Some(6), Some(7)]);
        assert_eq!(got, want);
        let uniform = OffsetSampler::new(&Distribution::Uniform, 8);
        assert_eq!(uniform.sequence_block(0, 8), None);
    }
}
