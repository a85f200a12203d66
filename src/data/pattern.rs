//! Write content: every unit (the dedup unit, 4 KiB by default) is filled from a fast
//! counter-based PRNG seeded per unit, so by default no two units are alike and none
//! compresses. Two knobs bend that on purpose, with true-ratio (vdbench) semantics:
//!
//! - **dedup ratio R**: each unit is fresh with probability 1/R; otherwise it repeats a
//!   seed drawn uniformly from a ring of this generator's last [`DEDUP_POOL`] fresh
//!   seeds. Duplicates only ever copy content already written, so distinct contents
//!   are 1/R of all units written. Drawing from a large ring keeps duplicates far
//!   apart, so a streaming compressor's window (zstd -1: 512 KiB) rarely sees them and
//!   the compression ratio stays what `compress_ratio` asks.
//! - **compress ratio C**: the first `random_bytes` of each unit are random, the rest
//!   zero; `random_bytes` is `unit / C` less a small calibrated allowance for what a
//!   compressor spends on the zero run (see `docs/data.md` for measured accuracy).
//!
//! The trade-off: content is a function of a 64-bit seed, so it can be regenerated,
//! but it is no cipher — it defeats dedup and compression, not an adversary.
//! Throughput is the point: AES rounds over a counter where the CPU has them
//! ([`super::aes_stream`]), else one 64×64→128 multiply per 8 bytes, four
//! independent words per step, measured above 4 GB/s per core (see
//! `benches/data_gen.rs`).

use crate::data::hash::mix64;
use crate::rng::Rng;

/// How many recent fresh seeds a generator keeps for duplicates to repeat.
pub const DEDUP_POOL: usize = 4096;

/// Golden-ratio increment of the content PRNG (wyrand).
const WY_INC: u64 = 0xa076_1d64_78bd_642f;
const WY_XOR: u64 = 0xe703_7ed1_a0b4_28db;

/// What the bytes of a write look like, per run (or per workload).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataSpec {
    /// Total units written ÷ distinct unit contents (1.0 = every unit unique).
    pub dedup_ratio: f64,
    /// Size of the dedup (and verify) unit, bytes: a power of two, 512..=1 MiB.
    pub dedup_unit: u32,
    /// Target compression ratio of each unit with a common compressor (1.0 = none).
    pub compress_ratio: f64,
    /// A fixed pattern every write carries instead (fio's `verify_pattern`): the
    /// ratios then do not apply.
    pub fill: Option<FillBytes>,
    /// Duplicates repeat a fixed working set of contents rather than recent writes
    /// (fio's `dedupe_mode=working_set`).
    pub working_set: Option<WorkingSet>,
}

/// A fixed set of contents duplicates are drawn from: the first unique units a
/// generator writes are its share of the set (elements `share_index`,
/// `share_index + share_count`, …), later unique units are fresh, and each duplicate
/// repeats an element drawn uniformly from those the generators sharing the set have
/// written by then (this generator's count × `share_count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkingSet {
    /// Contents in the set (at least 1).
    pub units: u64,
    /// Element seeds derive from this when several generators share the set (fio's
    /// `dedupe_global`); `None` = the generator's own set.
    pub shared_seed: Option<u64>,
    pub share_index: u64,
    /// Generators sharing the set (at least 1).
    pub share_count: u64,
}

impl Default for DataSpec {
    fn default() -> Self {
        DataSpec {
            dedup_ratio: 1.0,
            dedup_unit: 4096,
            compress_ratio: 1.0,
            fill: None,
            working_set: None,
        }
    }
}

/// Longest fixed pattern (as `plan::fill::MAX_PATTERN_BYTES`).
pub const MAX_FILL_BYTES: usize = 256;

/// A fixed pattern of 1..=[`MAX_FILL_BYTES`] bytes, repeated over the target by
/// offset: the byte at offset `o` is `bytes[o % len]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FillBytes {
    bytes: [u8; MAX_FILL_BYTES],
    /// 0: the offset form ([`FillBytes::OFFSET`]).
    len: u16,
}

impl FillBytes {
    /// `None` when `pattern` is empty or longer than [`MAX_FILL_BYTES`].
    pub fn new(pattern: &[u8]) -> Option<Self> {
        if pattern.is_empty() || pattern.len() > MAX_FILL_BYTES {
            return None;
        }
        let mut bytes = [0; MAX_FILL_BYTES];
        bytes[..pattern.len()].copy_from_slice(pattern);
        Some(FillBytes {
            bytes,
            len: pattern.len() as u16,
        })
    }

    /// Every write carries its own offset: 8 little-endian bytes, repeated over the
    /// write from its start (fio's `verify_pattern=%o`).
    pub const OFFSET: FillBytes = FillBytes {
        bytes: [0; MAX_FILL_BYTES],
        len: 0,
    };

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The period a generator repeats: the pattern's length, 8 for the offset form.
    fn period(&self) -> usize {
        match self.len {
            0 => 8,
            n => n as usize,
        }
    }

    /// The pattern repeated to at least 4 KiB plus one more copy, so any run of up to
    /// `tile.len() - len` bytes from any phase is one slice of it.
    fn tile(&self) -> Box<[u8]> {
        let p = self.as_slice();
        if p.is_empty() {
            return Box::default();
        }
        let copies = 4096usize.div_ceil(p.len()) + 1;
        p.repeat(copies).into_boxed_slice()
    }
}

/// Why a [`DataSpec`] is unusable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DataSpecError {
    #[error("dedup ratio {0} must be a finite number >= 1 (1 = no duplicates)")]
    DedupRatio(f64),
    #[error("compress ratio {0} must be a finite number >= 1 (1 = incompressible)")]
    CompressRatio(f64),
    #[error("dedup unit {0} bytes must be a power of two from 512 to 1m")]
    Unit(u32),
}

impl WorkingSet {
    /// The set of a plan's `dedup_set` (its bytes over `unit`): shared or the
    /// generator's own, shares settled per worker by [`WorkingSet::for_worker`].
    pub fn of_bytes(bytes: u64, unit: u32, global: bool) -> Self {
        WorkingSet {
            units: (bytes / u64::from(unit.max(1))).max(1),
            shared_seed: global.then_some(0),
            share_index: 0,
            share_count: 1,
        }
    }

    /// This set as worker `worker` of `workers` uses it: a shared set takes
    /// `shared_seed` (one per run) and the worker's share of it.
    pub fn for_worker(self, worker: u64, workers: u64, shared_seed: u64) -> Self {
        match self.shared_seed {
            None => self,
            Some(_) => WorkingSet {
                shared_seed: Some(shared_seed),
                share_index: worker,
                share_count: workers.max(1),
                ..self
            },
        }
    }
}

impl DataSpec {
    /// Checks the ranges; call once at plan time.
    pub fn validate(&self) -> Result<(), DataSpecError> {
        if !(self.dedup_ratio.is_finite() && self.dedup_ratio >= 1.0) {
            return Err(DataSpecError::DedupRatio(self.dedup_ratio));
        }
        if !(self.compress_ratio.is_finite() && self.compress_ratio >= 1.0) {
            return Err(DataSpecError::CompressRatio(self.compress_ratio));
        }
        if !self.dedup_unit.is_power_of_two() || !(512..=1 << 20).contains(&self.dedup_unit) {
            return Err(DataSpecError::Unit(self.dedup_unit));
        }
        Ok(())
    }

    /// Random bytes at the start of each unit for the compress ratio (the rest is
    /// zero). Calibrated against zstd -1 and gzip -6: each zero run costs a
    /// compressor about [`ZERO_RUN_COST`] bytes, so that much less random data is
    /// written to land on the asked ratio.
    pub fn random_bytes(&self) -> usize {
        let unit = self.dedup_unit as usize;
        if self.compress_ratio <= 1.0 {
            return unit;
        }
        let want = unit as f64 / self.compress_ratio - ZERO_RUN_COST;
        (want.round().max(8.0) as usize).min(unit)
    }
}

/// Bytes a compressor spends per unit on the zero tail (measured; docs/data.md).
pub const ZERO_RUN_COST: f64 = 6.0;

/// Fills `dst` with the content stream of `seed`: AES rounds over a counter where
/// the CPU has AES instructions ([`super::aes_stream`], a third of the
/// instructions), the multiply-fold stream otherwise. Within one process a seed
/// always gives the same bytes.
#[inline]
pub fn fill_random(dst: &mut [u8], seed: u64) {
    if super::aes_stream::available() {
        // SAFETY: the CPU has AES-NI (checked just above).
        unsafe { super::aes_stream::fill(dst, seed) }
    } else {
        fill_wyrand(dst, seed);
    }
}

/// Fills `dst` with the PRNG stream of `seed` (wyrand: counter + multiply-fold). The
/// counter form has no loop-carried multiply, so four words per step pipeline.
#[inline]
pub fn fill_wyrand(dst: &mut [u8], seed: u64) {
    #[inline(always)]
    fn wy(s: u64) -> u64 {
        let t = (s as u128) * ((s ^ WY_XOR) as u128);
        (t >> 64) as u64 ^ t as u64
    }
    let mut s = seed;
    let mut blocks = dst.chunks_exact_mut(32);
    for b in &mut blocks {
        let a = wy(s.wrapping_add(WY_INC));
        let c = wy(s.wrapping_add(WY_INC.wrapping_mul(2)));
        let d = wy(s.wrapping_add(WY_INC.wrapping_mul(3)));
        let e = wy(s.wrapping_add(WY_INC.wrapping_mul(4)));
        s = s.wrapping_add(WY_INC.wrapping_mul(4));
        b[0..8].copy_from_slice(&a.to_le_bytes());
        b[8..16].copy_from_slice(&c.to_le_bytes());
        b[16..24].copy_from_slice(&d.to_le_bytes());
        b[24..32].copy_from_slice(&e.to_le_bytes());
    }
    let rest = blocks.into_remainder();
    let mut i = 0;
    while i < rest.len() {
        s = s.wrapping_add(WY_INC);
        let w = wy(s).to_le_bytes();
        let n = (rest.len() - i).min(8);
        rest[i..i + n].copy_from_slice(&w[..n]);
        i += n;
    }
}

/// Per-worker content generator. Owns its state; `fill` neither locks nor allocates.
#[derive(Debug, Clone)]
pub struct Generator {
    unit: usize,
    random_bytes: usize,
    /// A unit is fresh when a draw is below this (`u64::MAX` = always).
    fresh_below: u64,
    rng: Rng,
    base: u64,
    counter: u64,
    pool: Box<[u64]>,
    pool_len: usize,
    pool_next: usize,
    /// A fixed pattern's tile and length (see [`FillBytes`]); empty = none.
    tile: Box<[u8]>,
    tile_period: usize,
    /// The working set duplicates come from, its seed base and how many of this
    /// generator's share are written.
    set: Option<WorkingSet>,
    set_base: u64,
    set_written: u64,
}

impl Generator {
    /// One generator per worker. `seed` must differ between workers, and between runs
    /// whose data must not dedupe against each other (mix in a clock or random value
    /// unless the user asked for reproducible content).
    pub fn new(spec: &DataSpec, seed: u64) -> Self {
        let fresh_below = if spec.dedup_ratio <= 1.0 {
            u64::MAX
        } else {
            ((1.0 / spec.dedup_ratio) * 18_446_744_073_709_551_616.0) as u64
        };
        Generator {
            unit: spec.dedup_unit as usize,
            random_bytes: spec.random_bytes(),
            fresh_below,
            rng: Rng::new(seed ^ 0x5eed_da7a),
            base: mix64(seed ^ 0xd1b5_4a32_d192_ed03),
            counter: 0,
            pool: vec![0u64; DEDUP_POOL].into_boxed_slice(),
            pool_len: 0,
            pool_next: 0,
            tile: spec.fill.map(|f| f.tile()).unwrap_or_default(),
            tile_period: spec.fill.map_or(0, |f| f.period()),
            set: spec.working_set,
            set_base: match spec.working_set.and_then(|w| w.shared_seed) {
                Some(shared) => mix64(shared ^ 0x5e75_e7a1),
                None => mix64(seed ^ 0x5e75_e7a1),
            },
            set_written: 0,
        }
    }

    /// The seed of working-set element `i`.
    #[inline]
    fn set_seed(&self, i: u64) -> u64 {
        mix64(
            self.set_base
                .wrapping_add((i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        )
    }

    /// The next unit's seed with a working set: fresh units fill this generator's
    /// share of the set first; duplicates repeat an element written by then.
    #[inline(never)]
    fn working_set_seed(&mut self, ws: WorkingSet) -> u64 {
        let written = (self.set_written * ws.share_count).min(ws.units);
        if written > 0 && self.rng.next_u64() >= self.fresh_below {
            let i = self.rng.below(written);
            return self.set_seed(i);
        }
        let next = ws.share_index + self.set_written * ws.share_count;
        if next < ws.units {
            self.set_written += 1;
            return self.set_seed(next);
        }
        self.fresh_seed()
    }

    /// Fills `buf` (to be written at `offset`) with the fixed pattern, or (no tile)
    /// with the offset form: `offset` as 8 little-endian bytes, repeated.
    fn fill_pattern(&self, buf: &mut [u8], offset: u64) {
        if self.tile.is_empty() {
            let word = offset.to_le_bytes();
            for (k, b) in buf.iter_mut().enumerate() {
                *b = word[k % 8];
            }
            return;
        }
        let period = self.tile_period;
        let run = self.tile.len() - period;
        let mut at = 0;
        while at < buf.len() {
            let phase = ((offset + at as u64) % period as u64) as usize;
            let n = run.min(buf.len() - at);
            buf[at..at + n].copy_from_slice(&self.tile[phase..phase + n]);
            at += n;
        }
    }

    /// Unit size in bytes.
    pub fn unit_bytes(&self) -> usize {
        self.unit
    }

    /// Fills `buf`, which will be written at target `offset`, unit by unit: every
    /// whole unit on the unit grid (`offset` multiples of the unit) gets its own
    /// fresh or duplicate content; a partial unit at either end gets fresh random
    /// bytes. With verify on, call [`crate::data::stamp`] on each unit afterwards.
    #[inline]
    pub fn fill(&mut self, buf: &mut [u8], offset: u64) {
        if self.tile_period > 0 {
            return self.fill_pattern(buf, offset);
        }
        let unit = self.unit;
        let head = ((unit as u64 - offset % unit as u64) % unit as u64) as usize;
        let head = head.min(buf.len());
        let (first, rest) = buf.split_at_mut(head);
        if !first.is_empty() {
            let s = self.fresh_seed();
            fill_random(first, s);
        }
        let mut units = rest.chunks_exact_mut(unit);
        for u in &mut units {
            self.fill_unit(u);
        }
        let tail = units.into_remainder();
        if !tail.is_empty() {
            let s = self.fresh_seed();
            fill_random(tail, s);
        }
    }

    /// Fills exactly one unit (`u.len()` must be the unit size).
    #[inline]
    pub fn fill_unit(&mut self, u: &mut [u8]) {
        debug_assert_eq!(u.len(), self.unit);
        let seed = self.next_unit_seed();
        if self.random_bytes >= u.len() {
            fill_random(u, seed);
        } else {
            let (r, z) = u.split_at_mut(self.random_bytes);
            fill_random(r, seed);
            z.fill(0);
        }
    }

    #[inline]
    fn fresh_seed(&mut self) -> u64 {
        self.counter += 1;
        // mix64 is a bijection: distinct counters give distinct seeds.
        mix64(
            self.base
                .wrapping_add(self.counter.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        )
    }

    /// The seed of the next unit: fresh (and remembered for duplicates), or repeated.
    #[inline]
    fn next_unit_seed(&mut self) -> u64 {
        if self.fresh_below == u64::MAX {
            return self.fresh_seed();
        }
        if let Some(ws) = self.set {
            return self.working_set_seed(ws);
        }
        if self.pool_len > 0 && self.rng.next_u64() >= self.fresh_below {
            return self.pool[self.rng.below(self.pool_len as u64) as usize];
        }
        let s = self.fresh_seed();
        self.pool[self.pool_next] = s;
        self.pool_next = (self.pool_next + 1) % DEDUP_POOL;
        self.pool_len = (self.pool_len + 1).min(DEDUP_POOL);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::io::Write;
    use std::process::{Command, Stdio};

    /// fio's dedupe-global.fio: two files of 25600 units, dedupe_percentage=50 and a
    /// working set of 50 % of a file shared by both. fio's own tool reported 16817
    /// and 17009 distinct units in each file and 25747 over both; a set of one's own
    /// per file (not global) makes each file alone about 2:1.
    #[test]
    fn a_working_set_shared_by_two_generators_dedupes_as_fio_reports() {
        let units = 25600u64;
        let run = |global: bool| {
            let files: Vec<Vec<u8>> = (0..2u64)
                .map(|w| {
                    let ws = WorkingSet::of_bytes(units / 2 * 4096, 4096, global);
                    let spec = DataSpec {
                        dedup_ratio: 2.0,
                        working_set: Some(ws.for_worker(w, 2, 99)),
                        ..Default::default()
                    };
                    generate(&spec, (units * 4096) as usize, 7 + w)
                })
                .collect();
            let each: Vec<usize> = files.iter().map(|f| distinct_units(f, 4096)).collect();
            (each, distinct_units(&files.concat(), 4096))
        };
        let (each, both) = run(true);
        for e in &each {
            assert!((16000..17700).contains(e), "one file: {each:?}");
        }
        assert!((24500..27000).contains(&both), "both files: {both}");
        let (each, both) = run(false);
        for e in &each {
            assert!((12300..13300).contains(e), "own sets, one file: {each:?}");
        }
        assert_eq!(both, each.iter().sum::<usize>(), "own sets share nothing");
    }

    #[test]
    fn the_offset_form_writes_each_writes_offset_over_it() {
        let spec = DataSpec {
            fill: Some(FillBytes::OFFSET),
            ..Default::default()
        };
        let mut g = Generator::new(&spec, 1);
        for (offset, len) in [(0u64, 8usize), (4096, 4096), (0x0102_0304_0506_0708, 20)] {
            let mut buf = vec![0xeeu8; len];
            g.fill(&mut buf, offset);
            for (i, b) in buf.iter().enumerate() {
                assert_eq!(*b, offset.to_le_bytes()[i % 8], "offset {offset:#x} + {i}");
            }
        }
    }

    #[test]
    fn a_fixed_pattern_repeats_by_target_offset() {
        let spec = DataSpec {
            fill: FillBytes::new(&[0xaa, 0x55, 0x5a]),
            dedup_ratio: 3.0,
            ..Default::default()
        };
        let mut g = Generator::new(&spec, 1);
        for (offset, len) in [(0u64, 3usize), (4096, 8192), (5, 20000), (12289, 1)] {
            let mut buf = vec![0u8; len];
            g.fill(&mut buf, offset);
            for (i, b) in buf.iter().enumerate() {
                let want = [0xaa, 0x55, 0x5a][((offset + i as u64) % 3) as usize];
                assert_eq!(*b, want, "offset {offset} + {i}");
            }
        }
        assert!(FillBytes::new(&[]).is_none() && FillBytes::new(&[0; 257]).is_none());
        // diskspd's default write content: the bytes 0..=255, by offset.
        let counting: Vec<u8> = (0..=255u8).collect();
        let spec = DataSpec {
            fill: FillBytes::new(&counting),
            ..Default::default()
        };
        let mut g = Generator::new(&spec, 1);
        let mut buf = vec![0u8; 8192];
        g.fill(&mut buf, 4096 + 7);
        assert!(buf
            .iter()
            .enumerate()
            .all(|(i, &b)| b == ((7 + i) % 256) as u8));
    }

    /// Compression ratio of `data` by an external compressor (`zstd -1` / `gzip -6`),
    /// or `None` (with the reason printed) when the binary is missing.
    fn ratio_with(cmd: &str, args: &[&str], data: &[u8]) -> Option<f64> {
        let mut child = match Command::new(cmd)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                eprintln!("skipped: cannot run {cmd}: {e}");
                return None;
            }
        };
        let mut stdin = child.stdin.take().unwrap();
        let owned = data.to_vec();
        let feeder = std::thread::spawn(move || stdin.write_all(&owned));
        let out = child.wait_with_output().unwrap();
        feeder.join().unwrap().unwrap();
        assert!(out.status.success());
        Some(data.len() as f64 / out.stdout.len() as f64)
    }

    fn generate(spec: &DataSpec, bytes: usize, seed: u64) -> Vec<u8> {
        let mut g = Generator::new(spec, seed);
        let mut buf = vec![0u8; bytes];
        // Fill in 128 KiB writes, as a worker would.
        for (i, chunk) in buf.chunks_mut(128 << 10).enumerate() {
            g.fill(chunk, (i as u64) << 17);
        }
        buf
    }

    fn distinct_units(buf: &[u8], unit: usize) -> usize {
        buf.chunks_exact(unit)
            .map(|u| crate::data::hash::hash64(u, 0))
            .collect::<HashSet<_>>()
            .len()
    }

    #[test]
    fn default_content_is_unique_and_incompressible() {
        let spec = DataSpec::default();
        let buf = generate(&spec, 256 << 20, 1);
        let units = buf.len() / 4096;
        assert_eq!(
            distinct_units(&buf, 4096),
            units,
            "two 4 KiB units are equal"
        );
        if let Some(r) = ratio_with("zstd", &["-1", "-c", "-q"], &buf) {
            eprintln!("zstd -1 ratio of default content: {r:.4}");
            assert!(r <= 1.02, "default content compressed {r:.4}:1");
        }
    }

    #[test]
    fn compress_2_dedup_3_hits_both_ratios() {
        let spec = DataSpec {
            dedup_ratio: 3.0,
            dedup_unit: 4096,
            compress_ratio: 2.0,
            fill: None,
            working_set: None,
        };
        let buf = generate(&spec, 256 << 20, 2);
        let units = buf.len() / 4096;
        let distinct = distinct_units(&buf, 4096);
        let frac = distinct as f64 / units as f64;
        eprintln!("distinct units: {frac:.4} (want 1/3)");
        assert!((0.30..=0.37).contains(&frac), "distinct fraction {frac}");
        if let Some(r) = ratio_with("zstd", &["-1", "-c", "-q"], &buf) {
            eprintln!("zstd -1 ratio at compress_ratio 2: {r:.4}");
            assert!((1.8..=2.2).contains(&r), "zstd ratio {r}");
        }
        if let Some(r) = ratio_with("gzip", &["-6", "-c"], &buf[..64 << 20]) {
            eprintln!("gzip -6 ratio at compress_ratio 2: {r:.4}");
            assert!((1.7..=2.3).contains(&r), "gzip ratio {r}");
        }
    }

    #[test]
    fn compress_ratios_track_the_request() {
        for c in [1.5, 3.0, 4.0, 8.0] {
            let spec = DataSpec {
                compress_ratio: c,
                ..DataSpec::default()
            };
            let buf = generate(&spec, 32 << 20, 3);
            if let Some(r) = ratio_with("zstd", &["-1", "-c", "-q"], &buf) {
                eprintln!("compress_ratio {c}: zstd -1 gives {r:.3}");
                assert!((r / c - 1.0).abs() < 0.1, "asked {c}, got {r}");
            }
        }
    }

    #[test]
    fn dedup_ratios_track_the_request() {
        for r in [1.5, 2.0, 5.0, 10.0] {
            let spec = DataSpec {
                dedup_ratio: r,
                ..DataSpec::default()
            };
            let buf = generate(&spec, 64 << 20, 4);
            let units = buf.len() / 4096;
            let got = units as f64 / distinct_units(&buf, 4096) as f64;
            eprintln!("dedup_ratio {r}: got {got:.3}");
            assert!((got / r - 1.0).abs() < 0.05, "asked {r}, got {got}");
        }
    }

    #[test]
    fn verify_headers_keep_compression_and_body_dedup() {
        let spec = DataSpec {
            dedup_ratio: 3.0,
            dedup_unit: 4096,
            compress_ratio: 2.0,
            fill: None,
            working_set: None,
        };
        let mut buf = generate(&spec, 64 << 20, 5);
        for (i, u) in buf.chunks_exact_mut(4096).enumerate() {
            crate::data::stamp(u, 0, i as u64 * 4096, 1, 1);
        }
        let units = buf.len() / 4096;
        assert_eq!(
            distinct_units(&buf, 4096),
            units,
            "headers make units unique"
        );
        let bodies: HashSet<u64> = buf
            .chunks_exact(4096)
            .map(|u| crate::data::hash::hash64(&u[32..], 0))
            .collect();
        let frac = bodies.len() as f64 / units as f64;
        eprintln!("with verify: distinct bodies {frac:.4}");
        assert!((0.30..=0.37).contains(&frac), "{frac}");
        if let Some(r) = ratio_with("zstd", &["-1", "-c", "-q"], &buf) {
            eprintln!("with verify: zstd -1 ratio at compress_ratio 2: {r:.4}");
            assert!((1.8..=2.2).contains(&r), "zstd ratio {r}");
        }
    }

    #[test]
    fn unaligned_buffers_and_seeds_differ() {
        let spec = DataSpec::default();
        let mut a = Generator::new(&spec, 1);
        let mut b = Generator::new(&spec, 2);
        let mut x = vec![0u8; 3 * 4096 + 100];
        let mut y = vec![0u8; 3 * 4096 + 100];
        a.fill(&mut x, 1000);
        b.fill(&mut y, 1000);
        assert_ne!(x, y);
        assert!(x.chunks(4096).all(|c| c.iter().any(|&b| b != 0)));
    }

    #[test]
    fn spec_validation() {
        assert!(DataSpec::default().validate().is_ok());
        let bad = |d, u, c| {
            DataSpec {
                dedup_ratio: d,
                dedup_unit: u,
                compress_ratio: c,
                fill: None,
                working_set: None,
            }
            .validate()
            .is_err()
        };
        assert!(bad(0.5, 4096, 1.0));
        assert!(bad(1.0, 4096, f64::NAN));
        assert!(bad(1.0, 3000, 1.0));
        assert!(bad(1.0, 256, 1.0));
    }
}
