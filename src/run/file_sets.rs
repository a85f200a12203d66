//! Workloads on a `files:` set read and written as bytes (fio's `nrfiles`,
//! `filename=A:B:C`): the checks that keep every request inside one file, and the
//! file-service policy (fio's `file_service_type`) that picks the file of each I/O.
//!
//! A stream's working set is whole files; its cursor ([`FileCursor`], made on the
//! stream's first I/O, so a single-file workload never has one) remembers which file
//! it is on, how many I/Os are left before it moves on, and each file's own
//! sequential position and share of the pass. As in fio, a file whose share of the
//! pass is done is skipped by round robin, sequential and random service until
//! every file is done, when the next pass starts them all again; the skewed
//! policies (zipf, pareto, normal, exponential) never finish a file, they wrap inside it. The
//! offset inside the chosen file follows the workload's own pattern and
//! distribution.

use super::offsets::{OffsetSampler, Permutation};
use super::RunError;
use crate::plan::file_service::FileService;
use crate::plan::model::{AccessPattern, Distribution, RunSpec, Workload};
use crate::rng::Rng;
use std::sync::Arc;

/// A workload's files as its streams pick them.
#[derive(Debug, Clone)]
pub struct FileShape {
    /// Each file's stride in the address space: its length, or the largest length
    /// when they differ.
    pub file_bytes: u64,
    /// Each file's own length when the files differ (a tree's `size=LEN:PCT,…`),
    /// from the working set's first file.
    lens: Option<Arc<[u64]>>,
    /// Files in one stream's working set.
    pub files: u64,
    pub service: FileService,
    /// Offset slots (of the workload's offset unit) in one file, for its largest
    /// block size.
    pub slots: u64,
    /// The skewed file draws: Zipf or Pareto over the files.
    skew: Option<OffsetSampler>,
    /// Normal draws: the scatter of ranks over the files.
    scatter: Permutation,
}

impl FileShape {
    /// The files of a working set of `ws_len` bytes, `file_bytes` apart, each
    /// `file_bytes` long or as long as `lens` says.
    pub fn new(
        w: &Workload,
        file_bytes: u64,
        ws_len: u64,
        unit: u64,
        lens: Option<Arc<[u64]>>,
    ) -> FileShape {
        let files = (ws_len / file_bytes).max(1);
        let service = w.file_service;
        let skew = match service {
            FileService::Zipf { theta } => {
                Some(OffsetSampler::new(&Distribution::Zipf { theta }, files))
            }
            FileService::Pareto { h } => {
                Some(OffsetSampler::new(&Distribution::Pareto { h }, files))
            }
            _ => None,
        };
        FileShape {
            file_bytes,
            lens,
            files,
            service,
            slots: file_bytes.saturating_sub(w.bs.max_bytes()) / unit.max(1) + 1,
            skew,
            scatter: Permutation::new(files),
        }
    }

    /// The length of file `f` of the working set.
    #[inline]
    pub fn len_of(&self, f: u64) -> u64 {
        match &self.lens {
            Some(l) => l.get(f as usize).copied().unwrap_or(self.file_bytes),
            None => self.file_bytes,
        }
    }

    /// Offset slots in file `f` (fewer than [`FileShape::slots`] in a shorter file).
    fn slots_of(&self, f: u64, max_bs: u64, unit: u64) -> u64 {
        match self.lens {
            None => self.slots,
            Some(_) => self.len_of(f).saturating_sub(max_bs) / unit.max(1) + 1,
        }
    }
}

/// One stream's place among its files: its own run of the working set's files
/// (every file, or its whole-file share of a sequential pass).
#[derive(Debug, Clone)]
pub struct FileCursor {
    /// The stream's first file, counted from the working set's first; `current`,
    /// `next_rr` and the per-file slices count from here.
    first: u64,
    current: u64,
    /// I/Os still to go to the current file before the next is picked.
    left: u32,
    /// Where round robin looks next.
    next_rr: u64,
    /// Per file: where its sequential I/O goes on, from the file's start.
    pos: Box<[u64]>,
    /// Per file: bytes it may still take in this pass (empty for the skewed
    /// policies, which never finish a file).
    budget: Box<[u64]>,
    /// Files whose share of the pass is done.
    done: u64,
    /// The current file may take the next I/O (false before the first pick and
    /// once the current file is finished).
    keep: bool,
}

impl FileCursor {
    /// A cursor over `count` files from file `first` of the working set.
    pub fn new(fs: &FileShape, first: u64, count: u64) -> FileCursor {
        let n = count as usize;
        FileCursor {
            first,
            current: 0,
            left: 0,
            next_rr: 0,
            pos: vec![0; n].into_boxed_slice(),
            budget: if fs.service.is_skewed() {
                Box::new([])
            } else {
                (0..n as u64).map(|f| fs.len_of(first + f)).collect()
            },
            done: 0,
            keep: false,
        }
    }

    /// Starts a new pass over every file (all positions back at the start).
    pub fn reset(&mut self, fs: &FileShape) {
        self.pos.fill(0);
        for (f, b) in self.budget.iter_mut().enumerate() {
            *b = fs.len_of(self.first + f as u64);
        }
        self.done = 0;
        self.left = 0;
    }

    /// The offset, from the start of the stream's working set, of its next I/O of
    /// `len` bytes (and its length): the file by the policy, the place in it by the
    /// pattern. An I/O longer than a shorter file of a set whose files differ is
    /// shortened to the file, at its start (vdbench's rule for such a file).
    pub fn next(
        &mut self,
        fs: &FileShape,
        io: &IoShape<'_>,
        rng: &mut Rng,
        len: u32,
    ) -> (u64, u32) {
        let f = self.pick(fs, rng);
        let flen = fs.len_of(self.first + f);
        let mut len = u64::from(len).min(flen);
        let within = if io.sequential {
            let mut p = self.pos[f as usize];
            if p + len > flen {
                match Self::tail(fs, flen - p, io.unit) {
                    Some(rest) => len = rest,
                    None => p = 0,
                }
            }
            self.pos[f as usize] = p + len;
            p
        } else {
            let slots = fs.slots_of(self.first + f, io.max_bs, io.unit);
            let slot = match (slots == fs.slots, io.offsets) {
                (true, _) | (false, OffsetSampler::Uniform) => io.offsets.sample(rng, slots),
                // A shorter file: the draw over a whole file's slots, scaled to its own.
                (false, o) => o.sample(rng, fs.slots) * slots / fs.slots,
            };
            slot * io.unit
        };
        if !self.budget.is_empty() {
            self.spend(fs, f, len, io);
        }
        ((self.first + f) * fs.file_bytes + within, len as u32)
    }

    /// The last, shorter I/O of a sequential walk of a file of its own length: the
    /// `rest` of it when that is whole offset units, so each file is written to its
    /// end (vdbench writes a file's last transfer short, fio shrinks the block to
    /// fit); `None` (go back to the start) in a set of one length, where the blocks
    /// fit or the tail is never touched, as in fio.
    fn tail(fs: &FileShape, rest: u64, unit: u64) -> Option<u64> {
        // The offset unit is the block size by default, larger than a tail; what a
        // tail must be is whole pages (O_DIRECT on a filesystem), or the unit when
        // smaller.
        let grain = unit.clamp(1, TAIL_GRAIN_BYTES);
        (fs.lens.is_some() && rest > 0 && rest % grain == 0).then_some(rest)
    }

    /// Counts `len` bytes against file `f`'s share of the pass; a file whose share
    /// is done (or whose next sequential block would not fit) is finished, and the
    /// last one finished starts the next pass.
    fn spend(&mut self, fs: &FileShape, f: u64, len: u64, io: &IoShape<'_>) {
        let b = &mut self.budget[f as usize];
        *b = b.saturating_sub(len);
        let next = self.pos[f as usize];
        let flen = fs.len_of(self.first + f);
        let full = io.sequential
            && (next >= flen
                || (next + io.max_bs > flen && Self::tail(fs, flen - next, io.unit).is_none()));
        if *b > 0 && !full {
            return;
        }
        *b = 0;
        self.done += 1;
        self.keep = false;
        if self.done >= self.pos.len() as u64 {
            self.reset(fs);
        }
    }

    fn open(&self, f: u64) -> bool {
        self.budget.is_empty() || self.budget[f as usize] > 0
    }

    /// The file of the next I/O.
    fn pick(&mut self, fs: &FileShape, rng: &mut Rng) -> u64 {
        if self.keep && self.open(self.current) {
            match fs.service {
                FileService::Sequential => return self.current,
                FileService::RoundRobin { .. }
                | FileService::Random { .. }
                | FileService::Exponential { .. }
                    if self.left > 0 =>
                {
                    self.left -= 1;
                    return self.current;
                }
                _ => {}
            }
        }
        self.keep = true;
        // The stream's own files (fewer than the shape's when a sequential pass
        // gives each stream its own).
        let n = self.pos.len() as u64;
        self.current = match fs.service {
            FileService::RoundRobin { ios } => {
                self.left = ios - 1;
                self.next_open_from(self.next_rr, n)
            }
            FileService::Sequential => self.next_open_from(self.next_rr, n),
            FileService::Random { ios } => {
                self.left = ios - 1;
                self.random_open(rng, n)
            }
            // The skewed draws are over the shape's files, folded onto the stream's.
            FileService::Zipf { .. } | FileService::Pareto { .. } => {
                fs.skew.as_ref().map_or(0, |s| s.sample(rng, fs.files)) % n
            }
            FileService::Normal { dev_pct } => normal_file(rng, fs.files, dev_pct, &fs.scatter) % n,
            FileService::Exponential { midpoint, ios } => {
                self.left = ios - 1;
                exponential_file(rng, n, midpoint)
            }
        };
        if matches!(
            fs.service,
            FileService::RoundRobin { .. } | FileService::Sequential
        ) {
            self.next_rr = (self.current + 1) % n;
        }
        self.current
    }

    /// The first unfinished file at or after `from`, wrapping.
    fn next_open_from(&self, from: u64, n: u64) -> u64 {
        (0..n)
            .map(|k| (from + k) % n)
            .find(|&f| self.open(f))
            .unwrap_or(from % n)
    }

    /// An unfinished file drawn uniformly: a few draws among all files, then a draw
    /// among the unfinished ones.
    fn random_open(&self, rng: &mut Rng, n: u64) -> u64 {
        for _ in 0..8 {
            let f = rng.below(n);
            if self.open(f) {
                return f;
            }
        }
        let k = rng.below(n.saturating_sub(self.done).max(1));
        (0..n)
            .filter(|&f| self.open(f))
            .nth(k as usize)
            .unwrap_or(0)
    }
}

/// What [`FileCursor::next`] needs of the workload's shape.
pub struct IoShape<'a> {
    pub sequential: bool,
    pub unit: u64,
    pub max_bs: u64,
    pub offsets: &'a OffsetSampler,
}

/// fio's normal file draw: the mean of twelve uniform draws (near the middle file),
/// moved by up to `dev_pct` percent of the set, then scattered over the files.
fn normal_file(rng: &mut Rng, n: u64, dev_pct: f64, scatter: &Permutation) -> u64 {
    let sum: u64 = (0..12).map(|_| rng.below(n)).sum();
    let mut rank = sum.div_ceil(12);
    let width = ((n as f64 * dev_pct / 100.0).ceil() as u64).min(n / 2);
    if width > 0 {
        let mut dev = rng.below(width) as i64 - (width / 2) as i64;
        while rank as i64 + dev >= n as i64 || (rank as i64 + dev) < 0 {
            dev /= 2;
        }
        rank = (rank as i64 + dev) as u64;
    }
    scatter.apply(rank.min(n - 1), n)
}

/// vdbench's Poisson file selection (`ownmath.distPoisson`): an exponential draw
/// with mean n / `midpoint`, folded onto the n files.
fn exponential_file(rng: &mut Rng, n: u64, midpoint: f64) -> u64 {
    let mean = n as f64 / midpoint;
    (rng.exp1() * mean) as u64 % n.max(1)
}

/// The files of a set read as bytes, as setup checks a workload against them.
pub(super) struct SetFiles<'a> {
    /// Each file's stride in the address space (0: not a file set).
    pub stride_bytes: u64,
    /// Each file's own length when they differ.
    pub lens: Option<&'a [u64]>,
}

/// A workload on a file set read as bytes: its working set is whole files, no
/// request may cross into the next file (nor past a shorter file's end), and what
/// only makes sense over one address space (zones, sequences, gaps, interleaved
/// streams) is refused.
pub(super) fn check_workload(
    run: &RunSpec,
    w: &Workload,
    files: &SetFiles<'_>,
    uri: &str,
    ws_len: u64,
) -> Result<(), RunError> {
    let file_bytes = files.stride_bytes;
    if file_bytes == 0 {
        return Ok(());
    }
    let shortest = files.lens.and_then(|l| l.iter().min().copied());
    let invalid = |msg: String| RunError::Invalid {
        run: run.name.clone(),
        workload: w.name.clone(),
        msg,
    };
    let size = crate::plan::units::format_size(file_bytes);
    if w.offset_bytes % file_bytes != 0
        || ws_len % file_bytes != 0
        || w.offset_increment_bytes % file_bytes != 0
    {
        return Err(invalid(format!(
            "works on whole files of '{uri}': its offset, size and offset_increment must be \
             multiples of the file size ({size})"
        )));
    }
    // Files of several lengths: an I/O longer than a shorter one is shortened to it.
    if w.bs.max_bytes() > file_bytes {
        return Err(invalid(format!(
            "block size {} is larger than a file of '{uri}' ({size}); no request crosses \
             into the next file",
            crate::plan::units::format_size(w.bs.max_bytes())
        )));
    }
    if shortest.is_some() && (w.offset_increment_bytes != 0 || w.pauses.pass_bytes != 0) {
        return Err(invalid(format!(
            "an offset_increment or a pass size (io_size) is not supported on '{uri}', whose \
             files differ in length; each stream walks whole files"
        )));
    }
    let sequential = matches!(w.pattern, AccessPattern::Sequential);
    let refused = if w.zones.is_some() {
        Some("zones (fio's zonemode=strided)")
    } else if matches!(w.dist, Distribution::Sequence { .. }) {
        Some("a sequence distribution")
    } else if w.dist == Distribution::VdbenchHotband {
        Some("vdbench's hotband distribution (it places offsets in one band)")
    } else if w
        .settings
        .flag(&crate::plan::settings::declared::RANDOM_MAP)
    {
        Some("random_map (offsets are drawn in the file each I/O picks)")
    } else if w.seq_gap_bytes != 0 {
        Some("a sequential gap (fio's rw=read:N)")
    } else if sequential && w.streams > 1 && !w.seq_layout.is_regions() {
        Some("sequential streams that share the working set (seq_layout other than \"regions\")")
    } else {
        None
    };
    match refused {
        Some(what) => Err(invalid(format!(
            "{what} is not supported on a file set ('{uri}'); each file is walked on its own"
        ))),
        None => Ok(()),
    }
}

/// Removes, after a run, the files of its `unlink=1` file sets that the run created
/// (fio's `unlink`); files that were there before stay. Returns a warning per set
/// that kept files or could not remove one.
pub(crate) fn unlink_after(targets: &crate::engine::Targets) -> Vec<String> {
    let mut notes = Vec::new();
    for t in targets.iter() {
        let Some(set) = t.byte_files().filter(|s| s.unlink) else {
            continue;
        };
        let (_, failed) = set.unlink_created();
        let kept = set.existing_count();
        let mut parts = Vec::new();
        if kept > 0 {
            parts.push(format!(
                "unlink kept the {kept} files that were there before the run (ioscope \
                 removes only the files it created)"
            ));
        }
        for (path, e) in failed {
            parts.push(format!("could not remove {}: {e}", path.display()));
        }
        if !parts.is_empty() {
            notes.push(format!("{}: {}", t.uri, parts.join("; ")));
        }
    }
    notes
}

/// What the last, short I/O of a file must be a multiple of (a page: O_DIRECT on a
/// filesystem takes it).
const TAIL_GRAIN_BYTES: u64 = 4096;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::BlockSizes;

    const K: u64 = 4096;

    fn shape(service: &str, files: u64, file_bytes: u64) -> (FileShape, OffsetSampler) {
        let w = Workload {
            bs: BlockSizes::fixed(K),
            file_service: FileService::parse(service).unwrap(),
            ..Default::default()
        };
        let fs = FileShape::new(&w, file_bytes, files * file_bytes, K, None);
        let offsets = OffsetSampler::new(&Distribution::Uniform, fs.slots);
        (fs, offsets)
    }

    /// (file, offset inside it) of `n` I/Os.
    fn walk(
        service: &str,
        files: u64,
        file_bytes: u64,
        sequential: bool,
        n: usize,
    ) -> Vec<(u64, u64)> {
        let (fs, offsets) = shape(service, files, file_bytes);
        let io = IoShape {
            sequential,
            unit: K,
            max_bs: K,
            offsets: &offsets,
        };
        let mut c = FileCursor::new(&fs, 0, fs.files);
        let mut rng = Rng::new(5);
        (0..n)
            .map(|_| {
                let (o, _) = c.next(&fs, &io, &mut rng, K as u32);
                (o / file_bytes, o % file_bytes)
            })
            .collect()
    }

    // Files of their own lengths, blocks of two units: a pass writes each file to
    // its end (the last block of the long file short) and touches no file twice.
    #[test]
    fn a_pass_over_files_of_several_lengths_writes_each_to_its_end_once() {
        let w = Workload {
            bs: BlockSizes::fixed(2 * K),
            ..Default::default()
        };
        let lens: Arc<[u64]> = vec![K, 3 * K, K].into();
        let fs = FileShape::new(&w, 3 * K, 9 * K, K, Some(lens));
        let offsets = OffsetSampler::new(&Distribution::Uniform, fs.slots);
        let io = IoShape {
            sequential: true,
            unit: K,
            max_bs: 2 * K,
            offsets: &offsets,
        };
        let mut c = FileCursor::new(&fs, 0, fs.files);
        let mut rng = Rng::new(5);
        let got: Vec<(u64, u64, u32)> = (0..4)
            .map(|_| {
                let (o, len) = c.next(&fs, &io, &mut rng, 2 * K as u32);
                (o / (3 * K), o % (3 * K), len)
            })
            .collect();
        let k = K as u32;
        assert_eq!(got, [(0, 0, k), (1, 0, 2 * k), (2, 0, k), (1, 2 * K, k)]);
        // The next I/O starts the next pass, at a file's start.
        let (o, _) = c.next(&fs, &io, &mut rng, 2 * K as u32);
        assert_eq!(o % (3 * K), 0);
    }

    // A stream's own run of files (a sequential pass split in whole files): its
    // offsets start at its first file, each file's own length counted from there.
    #[test]
    fn a_cursor_over_its_own_files_walks_only_those_from_their_start() {
        let w = Workload {
            bs: BlockSizes::fixed(K),
            file_service: FileService::Sequential,
            ..Default::default()
        };
        let lens: Arc<[u64]> = vec![K, K, 2 * K, K].into();
        let fs = FileShape::new(&w, 2 * K, 8 * K, K, Some(lens));
        let offsets = OffsetSampler::new(&Distribution::Uniform, fs.slots);
        let io = IoShape {
            sequential: true,
            unit: K,
            max_bs: K,
            offsets: &offsets,
        };
        let mut c = FileCursor::new(&fs, 2, 2);
        let mut rng = Rng::new(5);
        let got: Vec<u64> = (0..4)
            .map(|_| c.next(&fs, &io, &mut rng, K as u32).0)
            .collect();
        // Files 2 (two blocks) and 3 (one), then the next pass from file 2.
        assert_eq!(got, [4 * K, 5 * K, 6 * K, 4 * K]);
    }

    #[test]
    fn round_robin_switches_after_each_io_or_every_n() {
        let files: Vec<u64> = walk("roundrobin", 3, 4 * K, true, 7)
            .iter()
            .map(|x| x.0)
            .collect();
        assert_eq!(files, [0, 1, 2, 0, 1, 2, 0]);
        let files: Vec<u64> = walk("roundrobin:2", 3, 4 * K, true, 7)
            .iter()
            .map(|x| x.0)
            .collect();
        assert_eq!(files, [0, 0, 1, 1, 2, 2, 0]);
    }

    #[test]
    fn each_file_keeps_its_own_sequential_position() {
        let got = walk("roundrobin", 2, 3 * K, true, 6);
        assert_eq!(
            got,
            [(0, 0), (1, 0), (0, K), (1, K), (0, 2 * K), (1, 2 * K)]
        );
        // Then a new pass starts every file again from its start.
        let got = walk("roundrobin", 2, 2 * K, true, 6);
        assert_eq!(got, [(0, 0), (1, 0), (0, K), (1, K), (0, 0), (1, 0)]);
    }

    #[test]
    fn sequential_service_finishes_a_file_before_the_next() {
        let got = walk("sequential", 3, 2 * K, true, 7);
        assert_eq!(
            got,
            [(0, 0), (0, K), (1, 0), (1, K), (2, 0), (2, K), (0, 0)]
        );
        // Random offsets: each file takes its share (two blocks) before the next.
        let files: Vec<u64> = walk("sequential", 3, 2 * K, false, 6)
            .iter()
            .map(|x| x.0)
            .collect();
        assert_eq!(files, [0, 0, 1, 1, 2, 2]);
    }

    #[test]
    fn random_service_covers_every_file_and_finishes_each_once_a_pass() {
        let got = walk("random", 8, 4 * K, true, 32);
        let mut per = [0u32; 8];
        for &(f, _) in &got {
            per[f as usize] += 1;
        }
        // One pass: each file's four blocks exactly once, in order within it.
        assert_eq!(per, [4; 8], "{got:?}");
        for f in 0..8 {
            let offs: Vec<u64> = got.iter().filter(|x| x.0 == f).map(|x| x.1).collect();
            assert_eq!(offs, [0, K, 2 * K, 3 * K]);
        }
        assert_ne!(
            got.iter().map(|x| x.0).take(8).collect::<Vec<_>>(),
            (0..8).collect::<Vec<_>>(),
            "not round robin"
        );
        // random:4 stays four I/Os on each file it draws.
        let files: Vec<u64> = walk("random:4", 8, 64 * K, false, 40)
            .iter()
            .map(|x| x.0)
            .collect();
        for chunk in files.chunks(4) {
            assert!(chunk.iter().all(|&f| f == chunk[0]), "{files:?}");
        }
    }

    #[test]
    fn skewed_service_prefers_some_files_and_wraps_inside_them() {
        for service in ["zipf:1.2", "pareto:0.3", "normal:10"] {
            let got = walk(service, 16, 2 * K, true, 4000);
            let mut per = [0u32; 16];
            for &(f, o) in &got {
                per[f as usize] += 1;
                assert!(o < 2 * K);
            }
            let max = *per.iter().max().unwrap();
            assert!(max > 4000 / 16 * 2, "{service}: {per:?}");
        }
    }

    // vdbench's poisson with midpoint 5 over 100 files: a mean file of 20, so
    // 1 − e⁻¹ ≈ 63.2 % of the picks fall on the first 20 files (±1.5 % covers
    // 5 standard deviations of 2000 picks). Each pick keeps its file for 4 I/Os,
    // read from its start to its end.
    #[test]
    fn exponential_service_is_vdbench_s_poisson_file_selection() {
        let got = walk("exponential:5:4", 100, 4 * K, true, 8000);
        let mut first_20 = 0;
        for (pick, chunk) in got.chunks(4).enumerate() {
            let offsets: Vec<u64> = chunk.iter().map(|x| x.1).collect();
            assert!(chunk.iter().all(|x| x.0 == chunk[0].0), "{pick}: {chunk:?}");
            assert_eq!(offsets, [0, K, 2 * K, 3 * K], "{pick}");
            first_20 += u32::from(chunk[0].0 < 20);
        }
        let share = f64::from(first_20) / 2000.0;
        assert!((share - (1.0 - (-1f64).exp())).abs() < 0.015, "{share}");
    }

    #[test]
    fn offsets_stay_inside_each_file() {
        for (i, (f, o)) in walk("random", 5, 3 * K, false, 500).into_iter().enumerate() {
            assert!(f < 5 && o + K <= 3 * K && o % K == 0, "{i}: {f} {o}");
        }
    }
}
