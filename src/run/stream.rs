//! A stream: one independent I/O sequence with its own position, RNG, queue depth,
//! byte budget and rate schedule. Streams are plain data owned by one worker; choosing
//! the next I/O costs a few RNG draws and no allocation.

use super::extension::{ShapeExtras, StreamExtras};
use super::offsets::OffsetSampler;
use crate::plan::model::{AccessPattern, Op, Rate, TrimMode, Workload, Zones};
use crate::rng::Rng;

/// Per-workload tables shared by the workload's streams on one worker.
#[derive(Debug, Clone)]
pub struct WorkloadShape {
    pub read_pct: u8,
    /// Trims instead of (or before) writes.
    pub trim: TrimMode,
    pub sequential: bool,
    /// Block-size choice per direction (read, write and trim share theirs).
    pub bs_tables: [BsTable; 2],
    /// Random offsets are multiples of this (the smallest block size).
    pub offset_unit: u64,
    pub ws_start: u64,
    pub ws_len: u64,
    pub target: u32,
    pub max_bs: u32,
    pub open_loop: bool,
    /// Offset slots (of `offset_unit`) in the working set, for the largest size.
    pub slots: u64,
    pub offsets: OffsetSampler,
    /// Sequential streams that walk their own region: bytes added to the offset
    /// after each I/O (fio's `rw=read:N`; negative walks backwards).
    pub seq_gap: i64,
    /// fio's strided zones.
    pub zones: Option<Zones>,
    /// fio's `exitall`: the run stops once a stream of this workload is done.
    pub exit_all: bool,
    /// What the optional features keep for the workload (set by launch).
    pub extras: ShapeExtras,
    /// Shares of I/Os at a priority of their own (fio's cmdprio): empty for most
    /// workloads, which then draw nothing for it.
    pub prio_shares: Box<[PrioDraw]>,
    /// Writes carry RWF_ATOMIC.
    pub atomic_writes: bool,
    /// The workload's own error policy (`None`: the run's `--on-error`).
    pub on_error: Option<crate::plan::on_error::OnError>,
    /// fio's `fill_device`: a write that finds the filesystem full ends the stream.
    pub fill_fs: bool,
    /// A tree operation that finds nothing to act on ends the stream.
    pub stop_when_none_left: bool,
    /// On a file set read as bytes: its files and the policy that picks one per
    /// I/O (`None` for every other target, which never looks further).
    pub files: Option<Box<super::file_sets::FileShape>>,
    /// Its issued I/Os are kept for an I/O log (`record`).
    pub record: bool,
    /// Random access: I/Os per million at a random offset ([`ALL_RANDOM_PPM`] for a
    /// fully random workload); the others continue from the stream's previous I/O
    /// (`random_pct`: vdbench's seekpct=N, fio's percentage_random).
    pub random_ppm: u32,
    /// `random_map`: random offsets walk the stream's [`super::random_map::RandomMap`]
    /// over the `slots` instead of being drawn one by one (uniform only).
    pub random_map: bool,
    /// None of the per-I/O options above is in use (no trims, zones, zone table,
    /// file set, sequence, partial randomness, priorities or atomic writes), so a
    /// plain stream's I/O takes [`Stream::plain_io`]. Set by [`WorkloadShape::mark_plain`]
    /// once the shape is complete; false (the full path) until then.
    pub plain: bool,
}

/// [`WorkloadShape::random_ppm`] of a workload whose every I/O is random.
pub const ALL_RANDOM_PPM: u32 = 1_000_000;

/// One direction's block sizes as the hot path draws them.
#[derive(Debug, Clone)]
pub struct BsTable {
    /// Cumulative weights: (upper bound, bytes).
    pub table: Box<[(u32, u32)]>,
    pub total_weight: u32,
}

impl BsTable {
    fn of(split: &[(u64, u32)]) -> BsTable {
        let mut acc = 0u32;
        let table = split
            .iter()
            .map(|&(b, weight)| {
                acc += weight;
                (acc, b as u32)
            })
            .collect();
        BsTable {
            table,
            total_weight: acc,
        }
    }

    /// The size of the next I/O: the one size, or one drawn by weight.
    #[inline(always)]
    fn draw(&self, rng: &mut Rng, max_bs: u32) -> u32 {
        if self.table.len() == 1 {
            return self.table[0].1;
        }
        let pick = rng.below(self.total_weight as u64) as u32;
        self.table
            .iter()
            .find(|&&(upper, _)| pick < upper)
            .map(|&(_, b)| b)
            .unwrap_or(max_bs)
    }
}

/// One per-I/O priority share as the hot path draws it.
#[derive(Debug, Clone, Copy)]
pub struct PrioDraw {
    pub op: Option<Op>,
    pub len: Option<u32>,
    pub pct: u8,
    pub ioprio: u16,
}

impl PrioDraw {
    fn of(s: &crate::plan::priority::PrioShare) -> PrioDraw {
        PrioDraw {
            op: s.op,
            len: s.bs_bytes.map(|b| b.min(u64::from(u32::MAX)) as u32),
            pct: s.pct,
            ioprio: s.prio.value(),
        }
    }
}

impl WorkloadShape {
    pub fn new(w: &Workload, target: u32, ws_start: u64, ws_len: u64) -> Self {
        let bs_tables = [
            BsTable::of(w.bs.for_op(Op::Read)),
            BsTable::of(w.bs.for_op(Op::Write)),
        ];
        let offset_unit = w.align_bytes.unwrap_or(w.bs.min_bytes()).max(1);
        let slots = (ws_len - w.bs.max_bytes()) / offset_unit + 1;
        WorkloadShape {
            slots,
            offsets: OffsetSampler::of_working_set(&w.dist, slots, ws_len),
            read_pct: w.read_pct,
            trim: w.trim,
            sequential: matches!(w.pattern, AccessPattern::Sequential),
            bs_tables,
            offset_unit,
            ws_start,
            ws_len,
            target,
            max_bs: w.bs.max_bytes() as u32,
            open_loop: matches!(w.rate, Rate::Iops(_)),
            seq_gap: w.seq_gap_bytes,
            zones: w.zones,
            exit_all: w.settings.flag(&crate::plan::settings::declared::EXIT_ALL),
            extras: ShapeExtras::default(),
            prio_shares: w.priority.per_io.iter().map(PrioDraw::of).collect(),
            atomic_writes: w
                .settings
                .flag(&crate::plan::settings::declared::ATOMIC_WRITES),
            on_error: w.overrides.on_error.clone(),
            fill_fs: w.settings.flag(&crate::plan::settings::declared::FILL_FS),
            stop_when_none_left: w
                .settings
                .flag(&crate::plan::settings::declared::STOP_WHEN_NONE_LEFT),
            record: !w
                .settings
                .get(&crate::plan::settings::declared::RECORD)
                .as_str()
                .is_empty(),
            files: None,
            random_ppm: random_ppm(w),
            random_map: w
                .settings
                .flag(&crate::plan::settings::declared::RANDOM_MAP),
            plain: false,
        }
    }

    /// Marks the complete shape plain when no per-I/O option is in use: its
    /// plain streams then skip the tests for them on every I/O.
    pub fn mark_plain(&mut self) {
        self.plain = self.trim == TrimMode::None
            && !self.extras.places_io()
            && self.files.is_none()
            && self.zones.is_none()
            && !self.offsets.is_sequence()
            && self.random_ppm == ALL_RANDOM_PPM
            && self.prio_shares.is_empty()
            && !self.atomic_writes;
    }

    /// The shape on a file set of `file_bytes` files: random offsets are drawn
    /// inside one file, and each I/O's file is picked by the workload's policy.
    /// `lens`: every file's own length when they differ (from the set's first).
    pub fn with_files(mut self, w: &Workload, file_bytes: u64, lens: Option<&[u64]>) -> Self {
        let first = (self.ws_start / file_bytes.max(1)) as usize;
        let files = (self.ws_len / file_bytes.max(1)) as usize;
        let lens = lens.map(|l| l.iter().skip(first).take(files).copied().collect());
        let fs =
            super::file_sets::FileShape::new(w, file_bytes, self.ws_len, self.offset_unit, lens);
        self.slots = fs.slots;
        self.offsets = OffsetSampler::of_file(&w.dist, fs.slots, file_bytes);
        self.files = Some(Box::new(fs));
        self
    }
}

/// The share of a workload's I/Os at a random offset, per million: all of a random
/// workload's unless `random_pct` says less (`run::setup` refuses it on others).
fn random_ppm(w: &Workload) -> u32 {
    if !matches!(w.pattern, AccessPattern::Random) {
        return ALL_RANDOM_PPM;
    }
    let pct = w
        .settings
        .ratio(&crate::plan::settings::declared::RANDOM_PCT);
    (pct.clamp(0.0, 100.0) * 10_000.0).round() as u32
}

/// Inter-arrival schedule for an open-loop stream.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// Mean gap between intended issue times, ns.
    pub gap_ns: f64,
    pub exponential: bool,
    /// Intended time of the next I/O (fractional ns carried).
    pub next_due_ns: f64,
}

/// One I/O sequence.
#[derive(Debug, Clone)]
pub struct Stream {
    pub workload: u32,
    /// Run-wide stream number (written into verify headers).
    pub id: u32,
    pub rng: Rng,
    /// For sequential access: this stream's region and position in it.
    pub region_start: u64,
    pub region_len: u64,
    pub pos: u64,
    /// Sequential step per I/O in bytes; 0 = the I/O's own length. Interleaved
    /// (stride) streams step over the blocks of the others.
    pub stride_bytes: u64,
    /// diskspd's interlocked `-si`: the position all the workload's streams take
    /// their next offset from (bytes advanced since the start of the region).
    pub shared_pos: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    pub qd: u32,
    pub inflight: u32,
    /// Bytes this stream may still issue (passes budget); `u64::MAX` = unlimited.
    pub bytes_left: u64,
    /// I/Os this stream may still issue (fio's `number_ios`); `u64::MAX` = no count
    /// limit. Reaching 0 spends `bytes_left` too, so the stream ends as one whose
    /// passes are done.
    pub ios_left: u64,
    pub schedule: Option<Schedule>,
    /// A share mix: (cumulative weight, workload) pairs; each I/O picks one.
    pub mix: Option<std::sync::Arc<[(u32, u32)]>>,
    /// Closed loop: nothing is issued before this long after the start.
    pub start_delay_ns: u64,
    /// Nothing is issued at or after this time (absolute once the worker starts;
    /// until then relative to the start, 0 = never).
    pub stop_at_ns: u64,
    /// Think time: after `think_batch` I/Os (0 = never) the stream lets them all
    /// complete, then idles `think_ns`.
    pub think_batch: u32,
    pub think_ns: u64,
    /// Think after this long issuing I/O (0 = by count only), measured from
    /// `io_since_ns`: the end of the last think time, or the first I/O.
    pub think_io_ns: u64,
    pub io_since_ns: u64,
    /// I/Os issued since the last think time.
    pub since_think: u32,
    /// Holding back: waiting for its I/Os to complete, then thinking.
    pub thinking: bool,
    /// Trim-then-write: the range just trimmed, whose write is the next I/O.
    pub pair: Option<(u64, u32)>,
    /// Strided zones: where the current zone starts, and the bytes done in it.
    pub zone_start: u64,
    pub zone_done_bytes: u64,
    /// fio's `offset_increment`: how far this stream's working set is moved.
    pub shift_bytes: u64,
    /// fio's `io_size` as a pass: bytes each pass transfers (`u64::MAX` = a pass is
    /// the working set), and what is left of the current one; a new pass starts at
    /// the region's start.
    pub pass_bytes: u64,
    pub pass_left: u64,
    /// I/Os issued per direction (read, write, trim) under a sequence distribution,
    /// whose next block each count picks (fio's `io_issues`); untouched otherwise.
    pub seq_issued: [u64; Op::COUNT],
    /// The optional features' state (read-backs, flow control, an offset order of
    /// their own, zones).
    pub extras: StreamExtras,
    /// On a file set: which file it is on and each file's position, made at its
    /// first I/O.
    pub files: Option<Box<super::file_sets::FileCursor>>,
    /// A trace workload's stream: where it is in the trace, whose I/Os (and, on
    /// time, whose times) it issues instead of drawing its own.
    pub replay: Option<Box<super::replay::ReplayCursor>>,
    /// `random_map`: this stream's pass over the blocks, made at its first random I/O.
    pub random_map: Option<Box<super::random_map::RandomMap>>,
    /// None of the per-stream options above is in use (no trace, optional feature,
    /// byte passes, workload mix or think time): with a
    /// plain shape its I/O takes [`Stream::plain_io`]. Set by [`Stream::mark_plain`];
    /// false (the full path) until then.
    pub plain: bool,
}

impl Stream {
    /// Marks the stream plain when none of its per-stream options is in use.
    pub fn mark_plain(&mut self) {
        self.plain = self.replay.is_none()
            && self.extras.none()
            && self.pass_bytes == u64::MAX
            && self.mix.is_none()
            && self.think_batch == 0
            && self.think_io_ns == 0;
    }
}

/// The next I/O a stream wants.
#[derive(Debug, Clone, Copy)]
pub struct NextIo {
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    /// Per-request priority (io_uring's sqe ioprio); 0 = the thread's.
    pub ioprio: u16,
    /// A write with RWF_ATOMIC.
    pub atomic: bool,
}

impl Stream {
    /// The workload of the next I/O: the stream's own, or one picked by share.
    #[inline]
    pub fn pick_workload(&mut self) -> u32 {
        match &self.mix {
            None => self.workload,
            Some(m) => {
                let total = m.last().map_or(1, |&(c, _)| c.max(1));
                let r = self.rng.below(total as u64) as u32;
                m.iter()
                    .find(|&&(c, _)| r < c)
                    .map_or(self.workload, |&(_, w)| w)
            }
        }
    }

    /// Every workload this stream may issue for.
    pub fn workloads(&self) -> Vec<u32> {
        match &self.mix {
            None => vec![self.workload],
            Some(m) => m.iter().map(|&(_, w)| w).collect(),
        }
    }

    /// Chooses the next I/O, or `None` when the budget is spent. A trim-then-write
    /// workload alternates: a trim at a new offset, then the write of that range
    /// (issued after the trim, not after its completion, as fio does); the budget
    /// counts the writes, so a pass trims and writes every block once.
    #[inline(always)]
    pub fn next_io(&mut self, shape: &WorkloadShape) -> Option<NextIo> {
        if self.bytes_left == 0 {
            return None;
        }
        if self.plain && shape.plain {
            return Some(self.plain_io(shape));
        }
        self.full_io(shape)
    }

    /// The next I/O of a plain stream of a plain shape: a direction, a size and an
    /// offset drawn, the budget charged — the tests for every option it does not
    /// use left out.
    #[inline(always)]
    fn plain_io(&mut self, shape: &WorkloadShape) -> NextIo {
        let op = match shape.read_pct {
            100 => Op::Read,
            0 => Op::Write,
            p if self.rng.below(100) < u64::from(p) => Op::Read,
            _ => Op::Write,
        };
        let len = shape.bs_tables[usize::from(op != Op::Read)].draw(&mut self.rng, shape.max_bs);
        let offset = if shape.sequential {
            self.sequential_offset(shape, len)
        } else {
            self.random_offset(shape, len, op)
        };
        self.bytes_left = self.bytes_left.saturating_sub(u64::from(len));
        self.ios_left -= 1;
        if self.ios_left == 0 {
            self.bytes_left = 0;
        }
        NextIo {
            op,
            offset,
            len,
            ioprio: 0,
            atomic: false,
        }
    }

    /// [`Stream::next_io`] with every option considered.
    #[inline(always)]
    fn full_io(&mut self, shape: &WorkloadShape) -> Option<NextIo> {
        if self.replay.is_some() {
            return self.replayed_io(shape);
        }
        if let Some((offset, len)) = self.pair.take() {
            self.charge(len, shape);
            return Some(self.with_flags(shape, Op::Write, offset, len));
        }
        let mut op = match (shape.trim, shape.read_pct) {
            (TrimMode::Only | TrimMode::ThenWrite, _) => Op::Trim,
            (TrimMode::None, 100) => Op::Read,
            (TrimMode::None, 0) => Op::Write,
            (TrimMode::None, p) => {
                if self.rng.below(100) < p as u64 {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        };
        op = self.extras.direction(&shape.extras, op, shape.read_pct);
        let table = &shape.bs_tables[usize::from(op != Op::Read)];
        let mut len = table.draw(&mut self.rng, shape.max_bs);
        let offset = if let Some(fs) = &shape.files {
            let (o, fits) = self.file_offset(fs, shape, len);
            len = fits;
            o
        } else if let Some(z) = &shape.zones {
            self.zoned_offset(z, len, shape)
        } else if shape.sequential {
            self.sequential_offset(shape, len)
        } else if let Some(block) = self.extras.own_block() {
            let Some(b) = block else {
                // The feature's order is over (SPRandom: every block written and the
                // rewrites done): the stream is done.
                self.bytes_left = 0;
                return None;
            };
            shape.ws_start + b * shape.offset_unit
        } else if shape.offsets.is_sequence() {
            let Some(o) = self.sequence_offset(shape, op) else {
                // A strided sequence past the working set's end: the stream is done.
                self.bytes_left = 0;
                return None;
            };
            o
        } else if shape.random_ppm < ALL_RANDOM_PPM {
            self.partly_random_offset(shape, len, op)
        } else {
            self.random_offset(shape, len, op)
        };
        let (offset, len) = self.placed(shape, op, offset, len)?;
        if shape.trim == TrimMode::ThenWrite {
            self.pair = Some((offset, len));
            self.charge(0, shape);
        } else {
            self.charge(len, shape);
        }
        Some(self.with_flags(shape, op, offset, len))
    }

    /// The next offset of a sequential stream: from the position the workload's
    /// streams share (diskspd's `-si`), or its own, wrapping at its region's end.
    #[inline(always)]
    fn sequential_offset(&mut self, shape: &WorkloadShape, len: u32) -> u64 {
        if let Some(shared) = &self.shared_pos {
            return self.shared_offset(shared, len, shape);
        }
        if self.pos.saturating_add(len as u64) > self.region_start + self.region_len {
            self.pos = self.region_start;
        }
        let o = self.pos;
        self.pos = if self.stride_bytes > 0 {
            o + self.stride_bytes
        } else {
            self.step_from(o, len, shape)
        };
        o
    }

    /// The trace's next I/O; at its end the stream is done.
    #[inline(never)]
    fn replayed_io(&mut self, shape: &WorkloadShape) -> Option<NextIo> {
        let Some(io) = self.replay.as_mut()?.take() else {
            self.bytes_left = 0;
            return None;
        };
        self.charge(io.len, shape);
        Some(self.with_flags(shape, io.op, io.offset, io.len))
    }

    /// Where the optional features put the I/O drawn at `offset`; `None` (the
    /// stream's I/O is over) when nothing fits, as fio's job meets its end of file.
    /// A sequential stream goes on from a moved I/O.
    #[inline(always)]
    fn placed(&mut self, shape: &WorkloadShape, op: Op, at: u64, len: u32) -> Option<(u64, u32)> {
        if !shape.extras.places_io() {
            return Some((at, len));
        }
        self.moved(shape, op, at, len)
    }

    /// [`Stream::placed`] when a feature places the I/O.
    #[inline(never)]
    fn moved(&mut self, shape: &WorkloadShape, op: Op, at: u64, len: u32) -> Option<(u64, u32)> {
        let Some((offset, len)) = self.extras.place(&shape.extras, (op, at, len), self.id) else {
            self.bytes_left = 0;
            return None;
        };
        if shape.sequential {
            self.pos = offset + u64::from(len);
        }
        Some((offset, len))
    }

    /// The I/O with what its request carries beside its bytes: a priority drawn from
    /// the workload's shares (none drawn when it has none) and RWF_ATOMIC on writes.
    #[inline(always)]
    fn with_flags(&mut self, shape: &WorkloadShape, op: Op, offset: u64, len: u32) -> NextIo {
        let ioprio = if shape.prio_shares.is_empty() || op == Op::Trim {
            0
        } else {
            self.draw_prio(shape, op, len)
        };
        NextIo {
            op,
            offset,
            len,
            ioprio,
            atomic: shape.atomic_writes && op == Op::Write,
        }
    }

    /// `random_pct` below 100: the I/O is random with that probability, else it
    /// starts where the stream's previous I/O ended (random or not), as vdbench's
    /// seekpct and fio's percentage_random do; past the working set's end it wraps to
    /// its start.
    #[inline(never)]
    fn partly_random_offset(&mut self, shape: &WorkloadShape, len: u32, op: Op) -> u64 {
        let base = shape.ws_start + self.shift_bytes;
        let end = base + shape.ws_len;
        let o = if self.rng.below(u64::from(ALL_RANDOM_PPM)) < u64::from(shape.random_ppm) {
            self.random_offset(shape, len, op)
        } else if self.pos < base || self.pos.saturating_add(u64::from(len)) > end {
            base
        } else {
            self.pos
        };
        self.pos = o + u64::from(len);
        o
    }

    /// A random offset in the working set: a block drawn from the distribution, or
    /// vdbench's hotband curve, which places an I/O by its size and direction.
    #[inline(always)]
    fn random_offset(&mut self, shape: &WorkloadShape, len: u32, op: Op) -> u64 {
        let base = shape.ws_start + self.shift_bytes;
        // The usual case first: one test of the sampler, one of the map.
        match &shape.offsets {
            OffsetSampler::Uniform if !shape.random_map => {
                base + self.rng.below(shape.slots) * shape.offset_unit
            }
            OffsetSampler::Hotband(h) => base + h.offset(self.rng.unit_f64(), len, op != Op::Read),
            _ if shape.random_map => base + self.mapped_block(shape.slots) * shape.offset_unit,
            s => base + s.sample(&mut self.rng, shape.slots) * shape.offset_unit,
        }
    }

    /// The next block of the stream's random map over `slots` blocks: a few
    /// operations, so in line; the map is made at the first call.
    #[inline(always)]
    fn mapped_block(&mut self, slots: u64) -> u64 {
        match self.random_map.as_deref_mut() {
            Some(m) => m.next_block(),
            None => self.first_mapped_block(slots),
        }
    }

    /// Makes the stream's random map (keyed from the stream's generator) and takes
    /// its first block.
    #[cold]
    #[inline(never)]
    fn first_mapped_block(&mut self, slots: u64) -> u64 {
        let seed = self.rng.next_u64();
        self.random_map
            .insert(Box::new(super::random_map::RandomMap::new(slots, seed)))
            .next_block()
    }

    /// The offset of an I/O of `len` bytes on a file set (and its length, shortened
    /// to a shorter file): in the file the policy picks, where the pattern says.
    #[inline(never)]
    fn file_offset(
        &mut self,
        fs: &super::file_sets::FileShape,
        shape: &WorkloadShape,
        len: u32,
    ) -> (u64, u32) {
        let io = super::file_sets::IoShape {
            sequential: shape.sequential,
            unit: shape.offset_unit,
            max_bs: u64::from(shape.max_bs),
            offsets: &shape.offsets,
        };
        // The stream's files are its region's (every file but under a sequential
        // pass, which gives each stream its own whole files, `run::launch`).
        let fb = fs.file_bytes.max(1);
        let region = self.region_start.saturating_sub(shape.ws_start);
        let first = region.saturating_sub(self.shift_bytes) / fb;
        let count = (self.region_len / fb).min(fs.files.saturating_sub(first));
        let cursor = self
            .files
            .get_or_insert_with(|| Box::new(super::file_sets::FileCursor::new(fs, first, count)));
        let (o, len) = cursor.next(fs, &io, &mut self.rng, len);
        (shape.ws_start + self.shift_bytes + o, len)
    }

    /// The offset of the next `op` under a sequence distribution (each direction
    /// walks the sequence with its own count, as fio's do), or `None` once a strided
    /// sequence has left the working set.
    #[inline(never)]
    fn sequence_offset(&mut self, shape: &WorkloadShape, op: Op) -> Option<u64> {
        let issued = &mut self.seq_issued[op.index()];
        let block = shape.offsets.sequence_block(*issued, shape.slots)?;
        *issued += 1;
        Some(shape.ws_start + self.shift_bytes + block * shape.offset_unit)
    }

    /// The offset of an I/O of `len` bytes under strided zones: in the current zone;
    /// once the zone's I/O is done the next zone starts `range + skip` further on
    /// (back at the working set's start when it would begin past the end), and the
    /// skip counts towards the pass, so the budget can end before the next I/O.
    #[inline(never)]
    fn zoned_offset(&mut self, z: &Zones, len: u32, shape: &WorkloadShape) -> u64 {
        let (start, end) = (shape.ws_start, shape.ws_start + shape.ws_len);
        let len = u64::from(len);
        let zone_end = (self.zone_start + z.range_bytes).min(end);
        let o = if shape.sequential {
            if self.pos + len > zone_end {
                self.pos = self.zone_start;
            }
            let o = self.pos;
            self.pos += len;
            o
        } else {
            let unit = shape.offset_unit;
            let room = zone_end.saturating_sub(self.zone_start + u64::from(shape.max_bs));
            self.zone_start + self.rng.below(room / unit + 1) * unit
        };
        self.zone_done_bytes += len;
        if self.zone_done_bytes >= z.io_bytes {
            self.zone_done_bytes = 0;
            let next = self.zone_start + z.range_bytes + z.skip_bytes;
            let min_len = u64::from(shape.max_bs);
            self.zone_start = if next.saturating_add(min_len) > end {
                start
            } else {
                next
            };
            self.pos = self.zone_start;
            self.bytes_left = self.bytes_left.saturating_sub(z.skip_bytes);
        }
        o
    }

    /// Counts an issued I/O of `len` budgeted bytes against the stream's budgets.
    #[inline(always)]
    fn charge(&mut self, len: u32, shape: &WorkloadShape) {
        self.bytes_left = self.bytes_left.saturating_sub(len as u64);
        self.ios_left -= 1;
        if self.ios_left == 0 {
            self.bytes_left = 0;
        }
        if self.pass_bytes != u64::MAX {
            self.end_of_pass(len, shape);
        }
    }

    /// Counts `len` bytes against the current pass of a workload whose passes are
    /// a byte count (fio's `io_size`); a pass done starts the next at the region's
    /// start, as fio restarts each loop.
    #[cold]
    fn end_of_pass(&mut self, len: u32, shape: &WorkloadShape) {
        self.pass_left = self.pass_left.saturating_sub(u64::from(len));
        if self.pass_left == 0 {
            self.pass_left = self.pass_bytes;
            if let (Some(c), Some(fs)) = (self.files.as_mut(), shape.files.as_deref()) {
                c.reset(fs);
            }
            self.pos = self.region_start;
            self.zone_start = self.region_start;
            self.zone_done_bytes = 0;
            if let Some(m) = self.random_map.as_mut() {
                // fio's map is empty again at each loop.
                m.new_pass();
            }
        }
    }

    /// The priority of an I/O of `op` and `len` bytes: one draw from 0 to 99 walks
    /// the shares that cover it; past them (or none), 0.
    #[cold]
    fn draw_prio(&mut self, shape: &WorkloadShape, op: Op, len: u32) -> u16 {
        let r = self.rng.below(100) as u32;
        let mut acc = 0u32;
        for d in shape.prio_shares.iter() {
            if d.op.map_or(true, |o| o == op) && d.len.map_or(true, |l| l == len) {
                acc += u32::from(d.pct);
                if r < acc {
                    return d.ioprio;
                }
            }
        }
        0
    }

    /// The next offset of the position the streams share (diskspd's `-si`): it
    /// advances by the I/O's length (and `seq_gap`) for whichever stream asks, and
    /// wraps at the last step at which an I/O of `len` bytes still fits.
    #[inline]
    fn shared_offset(
        &self,
        shared: &std::sync::atomic::AtomicU64,
        len: u32,
        shape: &WorkloadShape,
    ) -> u64 {
        let step = (i128::from(len) + i128::from(shape.seq_gap)).max(1) as u64;
        let room = self.region_len.saturating_sub(u64::from(len));
        let span = (room / step + 1) * step;
        let k = shared.fetch_add(step, std::sync::atomic::Ordering::Relaxed);
        self.region_start + k % span
    }

    /// The sequential position after an I/O of `len` bytes at `o`: the next block,
    /// or `seq_gap` bytes further (fio's `rw=read:N`). A backward walk that passes
    /// the region's start goes on from its last whole block.
    #[inline]
    fn step_from(&self, o: u64, len: u32, shape: &WorkloadShape) -> u64 {
        let next = i128::from(o) + i128::from(len) + i128::from(shape.seq_gap);
        if next >= i128::from(self.region_start) {
            return u64::try_from(next).unwrap_or(u64::MAX);
        }
        let unit = shape.offset_unit.max(1);
        let room = self.region_len.saturating_sub(u64::from(shape.max_bs));
        self.region_start + room / unit * unit
    }

    /// Advances the schedule by one arrival and returns the intended time of the I/O
    /// being issued.
    #[inline]
    pub fn take_due(&mut self) -> u64 {
        let Some(s) = self.schedule.as_mut() else {
            return 0;
        };
        let due = s.next_due_ns;
        let gap = if let Some(r) = self.replay.as_deref() {
            // The trace's own gap to its next I/O.
            r.next_t_ns().map_or(0, |n| n.saturating_sub(r.last_t_ns())) as f64
        } else if s.exponential {
            s.gap_ns * self.rng.exp1()
        } else {
            s.gap_ns
        };
        s.next_due_ns += gap;
        due as u64
    }

    /// Counts an I/O issued at `now_ns`; true when the stream must now stop to think
    /// (after its batch of I/Os, or once it has issued for its think I/O time).
    #[inline]
    pub fn count_for_think(&mut self, now_ns: u64) -> bool {
        if self.think_io_ns > 0 {
            if self.io_since_ns == 0 {
                self.io_since_ns = now_ns;
            }
            if now_ns.saturating_sub(self.io_since_ns) >= self.think_io_ns {
                self.since_think = 0;
                self.thinking = true;
                return true;
            }
        }
        if self.think_batch == 0 {
            return self.thinking;
        }
        self.since_think += 1;
        if self.since_think >= self.think_batch {
            self.since_think = 0;
            self.thinking = true;
        }
        self.thinking
    }

    pub fn next_due_ns(&self) -> Option<u64> {
        if self
            .replay
            .as_ref()
            .is_some_and(|r| r.next_t_ns().is_none())
        {
            return None;
        }
        self.schedule.map(|s| s.next_due_ns as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::BlockSizes;

    fn stream() -> Stream {
        Stream {
            workload: 0,
            id: 0,
            rng: Rng::new(7),
            region_start: 0,
            region_len: 1 << 20,
            pos: 0,
            stride_bytes: 0,
            shared_pos: None,
            qd: 1,
            inflight: 0,
            bytes_left: u64::MAX,
            ios_left: u64::MAX,
            schedule: None,
            mix: None,
            start_delay_ns: 0,
            stop_at_ns: u64::MAX,
            think_batch: 3,
            think_ns: 1000,
            think_io_ns: 0,
            io_since_ns: 0,
            since_think: 0,
            thinking: false,
            pair: None,
            zone_start: 0,
            zone_done_bytes: 0,
            shift_bytes: 0,
            pass_bytes: u64::MAX,
            pass_left: u64::MAX,
            seq_issued: [0; Op::COUNT],
            extras: StreamExtras::default(),
            files: None,
            replay: None,
            random_map: None,
            plain: false,
        }
    }

    /// The plain path draws exactly what the full path draws for the same stream:
    /// mixed directions, several sizes, random (with and without a map), skewed and
    /// sequential (own and strided) offsets, and an I/O count that ends the stream.
    #[test]
    fn the_plain_path_draws_what_the_full_path_draws() {
        use crate::plan::model::Distribution;
        let k = 1u64 << 10;
        let bs = BlockSizes::of(vec![(4 * k, 60), (16 * k, 30), (64 * k, 10)]);
        let random = Workload {
            read_pct: 70,
            bs: bs.clone(),
            ..Default::default()
        };
        let zipf = Workload {
            dist: Distribution::Zipf { theta: 1.2 },
            ..random.clone()
        };
        let seq = Workload {
            pattern: AccessPattern::Sequential,
            ..random.clone()
        };
        let cases: [(&Workload, Stream); 5] = [
            (&random, stream()),
            (&zipf, stream()),
            (&seq, stream()),
            (
                &seq,
                Stream {
                    stride_bytes: 128 * k,
                    ..stream()
                },
            ),
            (
                &random,
                Stream {
                    ios_left: 500,
                    ..stream()
                },
            ),
        ];
        for (i, (w, s)) in cases.into_iter().enumerate() {
            let mut shape = WorkloadShape::new(w, 0, 0, 64 << 20);
            let full: Vec<_> = draws(
                &shape,
                Stream {
                    think_batch: 0,
                    ..s.clone()
                },
            );
            shape.mark_plain();
            let mut plain = Stream {
                think_batch: 0,
                ..s
            };
            plain.mark_plain();
            assert!(shape.plain && plain.plain, "case {i}");
            assert_eq!(draws(&shape, plain), full, "case {i}");
        }
        let mut mapped = WorkloadShape::new(&random, 0, 0, 64 << 20);
        mapped.random_map = true;
        let full = draws(
            &mapped,
            Stream {
                think_batch: 0,
                ..stream()
            },
        );
        mapped.mark_plain();
        let mut plain = Stream {
            think_batch: 0,
            ..stream()
        };
        plain.mark_plain();
        assert_eq!(draws(&mapped, plain), full);
        // Every option that needs the full path keeps a shape or a stream off it.
        let mut trims = WorkloadShape::new(&random, 0, 0, 64 << 20);
        trims.trim = TrimMode::Only;
        trims.mark_plain();
        let mut thinks = stream();
        thinks.mark_plain();
        assert!(!trims.plain && !thinks.plain);
    }

    /// (op, offset, len) of a stream's I/Os until it ends or 2,000 are drawn.
    fn draws(shape: &WorkloadShape, mut s: Stream) -> Vec<(Op, u64, u32)> {
        std::iter::from_fn(|| s.next_io(shape))
            .take(2000)
            .map(|io| (io.op, io.offset, io.len))
            .collect()
    }

    #[test]
    fn aligned_workloads_draw_offsets_on_the_alignment() {
        let w = Workload {
            bs: BlockSizes {
                split: vec![(512, 50), (4096, 50)],
                write_split: None,
            },
            align_bytes: Some(4096),
            ..Default::default()
        };
        let shape = WorkloadShape::new(&w, 0, 0, 1 << 20);
        let mut s = stream();
        let mut small = 0;
        for _ in 0..2000 {
            let io = s.next_io(&shape).unwrap();
            assert_eq!(io.offset % 4096, 0, "{io:?}");
            small += usize::from(io.len == 512);
        }
        assert!(small > 500, "512-byte I/Os are still drawn ({small})");
        // Without the alignment, offsets fall on 512-byte steps too.
        let shape = WorkloadShape::new(
            &Workload {
                align_bytes: None,
                ..w
            },
            0,
            0,
            1 << 20,
        );
        assert!((0..200).any(|_| s.next_io(&shape).unwrap().offset % 4096 != 0));
    }

    #[test]
    fn a_stream_thinks_after_each_batch() {
        let mut s = stream();
        assert!(!s.count_for_think(1));
        assert!(!s.count_for_think(2));
        assert!(s.count_for_think(3));
        assert!(s.thinking && s.since_think == 0);
    }

    /// fio's thinktime_iotime: the stream thinks once it has issued for its I/O time
    /// since its first I/O (then since its last think ended); with a count as well,
    /// whichever comes first.
    #[test]
    fn a_stream_thinks_after_its_io_time() {
        let mut s = stream();
        (s.think_batch, s.think_io_ns) = (0, 1_000);
        assert!(!s.count_for_think(5_000));
        assert!(!s.count_for_think(5_999));
        assert!(s.count_for_think(6_000));
        // The think ended at 10_000: the clock starts over from there.
        (s.thinking, s.io_since_ns) = (false, 10_000);
        assert!(!s.count_for_think(10_500));
        assert!(s.count_for_think(11_000));
        // With a count of 3 too: the count comes first here.
        (s.thinking, s.io_since_ns, s.think_batch) = (false, 20_000, 3);
        assert!(!s.count_for_think(20_001));
        assert!(!s.count_for_think(20_002));
        assert!(s.count_for_think(20_003));
    }

    fn sequential_offsets(gap: i64, region: u64, n: usize) -> Vec<u64> {
        let w = Workload {
            pattern: AccessPattern::Sequential,
            seq_gap_bytes: gap,
            ..Default::default()
        };
        let shape = WorkloadShape::new(&w, 0, 0, region);
        let mut s = Stream {
            region_len: region,
            ..stream()
        };
        (0..n).map(|_| s.next_io(&shape).unwrap().offset).collect()
    }

    #[test]
    fn a_negative_gap_walks_the_region_backwards() {
        // rw=read:-8k at bs=4k over 16 KiB: the start, then from the last block down.
        let k = 4096;
        assert_eq!(
            sequential_offsets(-8192, 4 * k, 9),
            vec![0, 3 * k, 2 * k, k, 0, 3 * k, 2 * k, k, 0]
        );
    }

    #[test]
    fn a_positive_gap_leaves_holes_and_wraps() {
        let k = 4096;
        assert_eq!(
            sequential_offsets(4096, 8 * k, 6),
            vec![0, 2 * k, 4 * k, 6 * k, 0, 2 * k]
        );
        // No gap: every block in turn.
        assert_eq!(sequential_offsets(0, 2 * k, 3), vec![0, k, 0]);
    }
    fn zoned_offsets(pattern: AccessPattern, zones: Zones, ws: u64, n: usize) -> Vec<u64> {
        let w = Workload {
            pattern,
            zones: Some(zones),
            ..Default::default()
        };
        let shape = WorkloadShape::new(&w, 0, 0, ws);
        let mut s = Stream {
            region_len: ws,
            think_batch: 0,
            ..stream()
        };
        (0..n).map(|_| s.next_io(&shape).unwrap().offset).collect()
    }

    #[test]
    fn strided_zones_do_their_io_then_skip() {
        let k = 4096;
        // zonesize=8k zoneskip=8k over 32 KiB: two blocks, skip two, and wrap.
        let z = Zones {
            io_bytes: 2 * k,
            range_bytes: 2 * k,
            skip_bytes: 2 * k,
        };
        assert_eq!(
            zoned_offsets(AccessPattern::Sequential, z, 8 * k, 6),
            vec![0, k, 4 * k, 5 * k, 0, k]
        );
        // zonesize above zonerange: the zone is walked again before moving on.
        let z = Zones {
            io_bytes: 3 * k,
            range_bytes: 2 * k,
            skip_bytes: 0,
        };
        assert_eq!(
            zoned_offsets(AccessPattern::Sequential, z, 8 * k, 7),
            vec![0, k, 0, 2 * k, 3 * k, 2 * k, 4 * k]
        );
        // Random offsets stay inside their zone.
        let z = Zones {
            io_bytes: 16 * k,
            range_bytes: 16 * k,
            skip_bytes: 48 * k,
        };
        let offs = zoned_offsets(AccessPattern::Random, z, 256 * k, 64);
        assert!(offs[..16].iter().all(|&o| o < 16 * k), "{offs:?}");
        assert!(offs[16..32].iter().all(|&o| (64 * k..80 * k).contains(&o)));
        assert!(offs[16..32].iter().any(|&o| o != offs[16]), "random inside");
    }

    #[test]
    fn a_sequence_walks_its_blocks_per_direction_and_a_stride_ends_the_stream() {
        let k = 4096;
        let w = Workload {
            read_pct: 50,
            dist: crate::plan::model::Distribution::parse("sequence:2,0,1").unwrap(),
            ..Default::default()
        };
        // A working set of 12 blocks from 8k: reads and writes each walk 2,0,1 over.
        let shape = WorkloadShape::new(&w, 0, 2 * k, 12 * k);
        let mut s = stream();
        let (mut reads, mut writes) = (Vec::new(), Vec::new());
        for _ in 0..60 {
            let io = s.next_io(&shape).unwrap();
            let block = (io.offset - 2 * k) / k;
            match io.op {
                Op::Read => reads.push(block),
                _ => writes.push(block),
            }
        }
        assert!(
            reads.len() > 15 && writes.len() > 15,
            "{reads:?} {writes:?}"
        );
        for got in [&reads, &writes] {
            let want: Vec<u64> = [2, 0, 1].iter().cycle().take(got.len()).copied().collect();
            assert_eq!(got, &want);
        }
        // Strided over 7 blocks: 2,0,1, 5,3,4, then 8 is past the end and the stream
        // is done (its budget spent), as fio's job ends.
        let w = Workload {
            dist: crate::plan::model::Distribution::parse("sequence:2,0,1:stride").unwrap(),
            ..Default::default()
        };
        let shape = WorkloadShape::new(&w, 0, 0, 7 * k);
        let mut s = stream();
        let blocks: Vec<u64> = std::iter::from_fn(|| s.next_io(&shape))
            .map(|io| io.offset / k)
            .collect();
        assert_eq!(blocks, vec![2, 0, 1, 5, 3, 4]);
        assert_eq!(s.bytes_left, 0);
    }

    #[test]
    fn a_pass_over_zones_counts_the_skipped_bytes() {
        let k = 4096;
        let w = Workload {
            pattern: AccessPattern::Sequential,
            zones: Some(Zones {
                io_bytes: 16 * k,
                range_bytes: 16 * k,
                skip_bytes: 48 * k,
            }),
            ..Default::default()
        };
        let shape = WorkloadShape::new(&w, 0, 0, 256 * k);
        let mut s = Stream {
            region_len: 256 * k,
            bytes_left: 256 * k,
            think_batch: 0,
            ..stream()
        };
        let mut n = 0;
        while s.next_io(&shape).is_some() {
            n += 1;
        }
        // 4 zones of 16 blocks and their skips make the pass (256 blocks).
        assert_eq!(n, 64);
    }

    /// A stream of a zoned workload on 4 zones of 64 KiB, with its own table.
    fn zoned_stream(read_pct: u8, pattern: AccessPattern) -> (Stream, WorkloadShape) {
        let w = Workload {
            read_pct,
            pattern,
            bs: BlockSizes::fixed(16 << 10),
            zbd: Some(crate::plan::zbd::Zbd::of_size(64 << 10)),
            ..Workload::default()
        };
        let run = crate::plan::model::RunSpec {
            workloads: vec![w.clone()],
            ..Default::default()
        };
        let resolved = [super::super::resolved::Resolved {
            target: 0,
            ws_start: 0,
            ws_len: 256 << 10,
            file_bytes: 0,
            file_lens: None,
        }];
        let registry = super::super::zbd::Registry::new();
        let targets = [("t".to_string(), 256 << 10)];
        let zbd = super::super::zbd::tables(&run, &resolved, &targets, &registry).unwrap();
        let shape = WorkloadShape {
            extras: ShapeExtras {
                zbd: zbd[0].clone(),
                flow: None,
            },
            ..WorkloadShape::new(&w, 0, 0, 256 << 10)
        };
        let mut s = stream();
        s.region_len = 256 << 10;
        (s, shape)
    }

    #[test]
    fn zoned_mixed_streams_write_first_and_read_what_was_written() {
        let (mut s, shape) = zoned_stream(90, AccessPattern::Random);
        let first = s.next_io(&shape).unwrap();
        assert_eq!(
            first.op,
            Op::Write,
            "nothing written yet: the first I/O writes"
        );
        let mut written = [0u64; 4];
        written[(first.offset >> 16) as usize] = u64::from(first.len);
        for _ in 0..2000 {
            let io = s.next_io(&shape).unwrap();
            let z = (io.offset >> 16) as usize;
            let zone_start = (z as u64) << 16;
            match io.op {
                Op::Write => {
                    assert!(io.offset == zone_start + written[z] || io.offset == zone_start);
                    if io.offset == zone_start {
                        written[z] = 0;
                    }
                    written[z] += u64::from(io.len);
                }
                _ => assert!(io.offset + u64::from(io.len) <= zone_start + written[z]),
            }
        }
    }

    #[test]
    fn zoned_sequential_writes_fill_zone_after_zone() {
        let (mut s, shape) = zoned_stream(0, AccessPattern::Sequential);
        let offsets: Vec<u64> = (0..20).map(|_| s.next_io(&shape).unwrap().offset).collect();
        let k = 16 << 10;
        // 16 writes fill the 4 zones in order; then the first zone is reset once and
        // written again.
        let want: Vec<u64> = (0..20u64).map(|i| (i % 16) * k).collect();
        assert_eq!(offsets, want);
        assert_eq!(shape.extras.zbd.as_ref().unwrap().resets(), 1);
    }
}
