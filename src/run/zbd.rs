//! Emulated zones at run time (fio's `zonemode=zbd` on a file or a device that is
//! not zoned): one zone table per target, shared by every stream of every workload
//! that uses it, as fio shares a file's zone information between its jobs. The
//! table outlives the run: a later run of the same process on the same target (a
//! fio job after a stonewall) finds the write pointers the earlier runs left, as
//! fio's later jobs do; all zones are empty when the process first uses the target.
//!
//! Each zone has a write pointer; all zones start empty. A stream draws its offset
//! as ever, then the table moves it: a write goes to the write pointer of the zone
//! the offset falls in (or, at the open-zone limit, of an open zone), a read stays
//! below the write pointer, a trim resets the zone. The pointer moves when the I/O
//! is issued, as fio moves it when it queues the I/O.
//!
//! The trade: one mutex per target, taken once per I/O of a zoned workload. Zones
//! are for devices where writes are serialised per zone anyway, and workloads
//! without zones never see the table (their shape has none), so their hot path has
//! no lock.

use super::resolved::Resolved;
use super::RunError;
use crate::plan::model::{AccessPattern, Op, RunSpec};
use crate::plan::zbd::Zbd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// At most this many zones in one table (8 bytes each).
const MAX_ZONES: u64 = 1 << 24;

/// The zones of one target, from its start.
#[derive(Debug)]
pub struct ZoneTable {
    zone_bytes: u64,
    capacity_bytes: u64,
    state: Mutex<State>,
}

/// The zone tables of the process, one per target and zone layout.
pub struct Registry(Mutex<Vec<(String, Arc<ZoneTable>)>>);

/// The process's tables: runs of one invocation share their targets' zones.
pub static REGISTRY: Registry = Registry::new();

impl Default for Registry {
    fn default() -> Registry {
        Registry::new()
    }
}

impl Registry {
    pub const fn new() -> Registry {
        Registry(Mutex::new(Vec::new()))
    }

    /// The table of target `uri` with `zones` zones laid out as `z`: the one the
    /// process has, or a new one with every zone empty (also when the layout
    /// changed).
    fn table(&self, uri: &str, z: &Zbd, zones: usize) -> Arc<ZoneTable> {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let fits = |t: &ZoneTable| {
            (t.zone_bytes, t.capacity_bytes) == (z.zone_bytes, z.capacity_bytes)
                && t.lock().wp.len() == zones
        };
        if let Some((_, t)) = all.iter().find(|(u, t)| u == uri && fits(t)) {
            return Arc::clone(t);
        }
        all.retain(|(u, _)| u != uri);
        let t = Arc::new(ZoneTable::new(z, zones));
        all.push((uri.to_string(), Arc::clone(&t)));
        t
    }
}

#[derive(Debug)]
struct State {
    /// Bytes written in each zone (its write pointer, from the zone's start).
    wp: Vec<u64>,
    /// The zones being written, when there is an open-zone limit, with the stream
    /// that opened each.
    open: Vec<OpenZone>,
    /// Bytes below the write pointers, summed (fio's valid data bytes).
    valid_bytes: u64,
    /// Writes left until the next reset under the reset threshold.
    write_cnt: u32,
}

#[derive(Debug, Clone, Copy)]
struct OpenZone {
    zone: u32,
    owner: u32,
}

/// Where the table put an I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    Io {
        offset: u64,
        len: u32,
    },
    /// Nothing fits: no zone has data to read or room to write (fio's eof).
    Eof,
}

/// One workload's use of its target's zone table.
#[derive(Debug, Clone)]
pub struct ZbdUse {
    pub table: Arc<ZoneTable>,
    /// The workload's zones: table indices `min_zone..max_zone`.
    min_zone: u32,
    max_zone: u32,
    /// Zones written at once over the whole target; 0 = no limit.
    max_open: u32,
    /// This run's zone resets by this workload.
    resets: Arc<AtomicU64>,
    ws_start: u64,
    ws_len: u64,
    stream_max_open: u32,
    /// Valid bytes from which writes start resetting zones.
    threshold_bytes: u64,
    /// A write in every this many resets its zone above the threshold; 0 = never.
    reset_every: u32,
    pub read_beyond_wp: bool,
    random: bool,
    /// Smallest read and write sizes.
    min_bs: [u64; 2],
}

impl ZoneTable {
    fn new(z: &Zbd, zones: usize) -> ZoneTable {
        ZoneTable {
            zone_bytes: z.zone_bytes,
            capacity_bytes: z.capacity_bytes,
            state: Mutex::new(State {
                wp: vec![0; zones],
                open: Vec::new(),
                valid_bytes: 0,
                write_cnt: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A stream that panicked holding the lock leaves pointers that are still
        // consistent (each change is one assignment), so go on with them.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn zone_start(&self, z: u32) -> u64 {
        u64::from(z) * self.zone_bytes
    }
}

impl State {
    /// Empties zone `z`; counts a reset in `resets` when it held data.
    fn reset(&mut self, z: u32, resets: &AtomicU64) {
        let w = std::mem::take(&mut self.wp[z as usize]);
        if w > 0 {
            self.valid_bytes = self.valid_bytes.saturating_sub(w);
            resets.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn close(&mut self, z: u32) {
        self.open.retain(|o| o.zone != z);
    }
}

impl ZbdUse {
    /// This run's zone resets by this workload so far.
    pub fn resets(&self) -> u64 {
        self.resets.load(Ordering::Relaxed)
    }

    /// The table index of the zone `offset` falls in, kept in the workload's zones.
    fn slot_of(&self, offset: u64) -> u32 {
        let z = offset / self.table.zone_bytes;
        z.clamp(u64::from(self.min_zone), u64::from(self.max_zone - 1)) as u32
    }

    /// Moves an I/O of `op` drawn at `offset` to where zones allow it. `owner` is
    /// the stream (for the per-stream open-zone limit).
    pub fn place(&self, op: Op, offset: u64, len: u32, owner: u32) -> Placed {
        if op == Op::Read && self.read_beyond_wp {
            return Placed::Io { offset, len };
        }
        let mut st = self.table.lock();
        let placed = match op {
            Op::Read => self.read(&st, offset, u64::from(len)),
            Op::Write => self.write(&mut st, offset, u64::from(len), owner),
            Op::Trim => self.trim(&mut st, offset),
        };
        match placed {
            Some((offset, len)) => Placed::Io {
                offset,
                len: len as u32,
            },
            None => Placed::Eof,
        }
    }

    /// A read below the write pointer: in the zone of `offset` when it holds at
    /// least one block, else in the next zone that does (sequential) or the nearest
    /// one either way (random); random reads keep their spread inside the data.
    fn read(&self, st: &State, offset: u64, len: u64) -> Option<(u64, u64)> {
        let t = &self.table;
        let min_bs = self.min_bs[0];
        let first = self.slot_of(offset);
        let first_start = t.zone_start(first);
        let mut z = first;
        let mut offset = offset.max(first_start);
        let wp = |z: u32| st.wp[z as usize];
        if wp(z) < min_bs || (!self.random && offset + min_bs > first_start + wp(z)) {
            z = self.find_data(st, first, min_bs)?;
            if !self.random {
                offset = t.zone_start(z);
            }
        }
        let (start, range) = (t.zone_start(z), wp(z));
        if range <= len {
            offset = start;
        } else if self.random {
            offset = start + (offset - first_start) % (range - len) / min_bs * min_bs;
        }
        let len = len.min(start + range - offset) / min_bs * min_bs;
        Some((offset, len))
    }

    /// The zone nearest `from` with at least `min_bytes` written: later zones only
    /// for sequential I/O, both ways (later first) for random I/O.
    fn find_data(&self, st: &State, from: u32, min_bytes: u64) -> Option<u32> {
        let (lo, hi) = (self.min_zone, self.max_zone);
        for d in 1..(hi - lo).max(1) {
            let up = from.checked_add(d).filter(|&z| z < hi);
            let down = from.checked_sub(d).filter(|&z| z >= lo);
            if up.is_none() && (down.is_none() || !self.random) {
                break;
            }
            if let Some(z) = up.filter(|&z| st.wp[z as usize] >= min_bytes) {
                return Some(z);
            }
            if self.random {
                if let Some(z) = down.filter(|&z| st.wp[z as usize] >= min_bytes) {
                    return Some(z);
                }
            }
        }
        None
    }

    /// A write at the write pointer of the zone `offset` falls in (or of an open
    /// zone, at the open-zone limit). A zone without room for the smallest write,
    /// or picked by the reset threshold and frequency, is reset first; a zone left
    /// with less room than the smallest write is finished and closed.
    fn write(&self, st: &mut State, offset: u64, len: u64, owner: u32) -> Option<(u64, u64)> {
        let t = &self.table;
        let min_bs = self.min_bs[1];
        let z = self.write_zone(st, self.slot_of(offset), offset, owner)?;
        let mut reset = false;
        if self.reset_every > 0 && st.valid_bytes >= self.threshold_bytes {
            st.write_cnt = st.write_cnt.saturating_sub(1);
            if st.write_cnt == 0 {
                st.write_cnt = self.reset_every;
                reset = true;
            }
        }
        if reset || t.capacity_bytes - st.wp[z as usize] < min_bs {
            st.reset(z, &self.resets);
        }
        let wp = st.wp[z as usize];
        let offset = t.zone_start(z) + wp;
        let len = len.min(t.capacity_bytes - wp) / min_bs * min_bs;
        let mut new_wp = wp + len;
        if t.capacity_bytes - new_wp < min_bs {
            // Too little room for another write: finish the zone (fio's zone finish).
            new_wp = t.capacity_bytes;
            st.close(z);
        }
        st.wp[z as usize] = new_wp;
        st.valid_bytes += new_wp - wp;
        Some((offset, len))
    }

    /// The zone a write drawn in zone `z` goes to: `z` itself without an open-zone
    /// limit, when it is open, or when it can be opened; otherwise one of the open
    /// zones of the workload's range, picked from the offset's place in the working
    /// set (fio's quasi-random pick). `None` when no open zone is in the range.
    fn write_zone(&self, st: &mut State, z: u32, offset: u64, owner: u32) -> Option<u32> {
        let max_open = self.max_open as usize;
        if max_open == 0 || st.open.iter().any(|o| o.zone == z) {
            return Some(z);
        }
        let mine = st.open.iter().filter(|o| o.owner == owner).count();
        let stream_room = self.stream_max_open == 0 || mine < self.stream_max_open as usize;
        if stream_room && st.open.len() < max_open {
            st.open.push(OpenZone { zone: z, owner });
            return Some(z);
        }
        let n = st.open.len();
        let pos = u128::from(offset.saturating_sub(self.ws_start)) * n as u128;
        let first = (pos / u128::from(self.ws_len.max(1))) as usize;
        (0..n)
            .map(|k| st.open[(first + k) % n].zone)
            .find(|&o| (self.min_zone..self.max_zone).contains(&o))
    }

    /// A trim resets a zone: the zone of `offset`, or for random trims of an empty
    /// zone the nearest zone with data. The trim covers the whole zone.
    fn trim(&self, st: &mut State, offset: u64) -> Option<(u64, u64)> {
        let mut z = self.slot_of(offset);
        if self.random && st.wp[z as usize] == 0 {
            z = self.find_data(st, z, 1)?;
        }
        st.reset(z, &self.resets);
        st.close(z);
        Some((self.table.zone_start(z), self.table.zone_bytes))
    }
}

/// Emulated zones as an extension of the run core: the plan's zoned workloads
/// checked together, a real zoned device refused, the working set cut to whole
/// zones; the zone table itself is the workload's `ShapeExtras::zbd`.
pub(super) const EXTENSION: super::extension::checks::Extension =
    super::extension::checks::Extension {
        check_run: check_plan,
        places_offsets: |w| w.zbd.is_some(),
        working_set: fit_working_set,
        ..super::extension::checks::Extension::NONE
    };

/// A zoned workload's working set on target `uri`: whole zones of it, on a device
/// that is not zoned.
fn fit_working_set(
    run: &RunSpec,
    w: &crate::plan::model::Workload,
    uri: &str,
    ws_len: u64,
) -> Result<u64, RunError> {
    let Some(z) = &w.zbd else {
        return Ok(ws_len);
    };
    refuse_zoned_device(run, uri)?;
    whole_zones(z, ws_len).ok_or_else(|| RunError::Invalid {
        run: run.name.clone(),
        workload: w.name.clone(),
        msg: format!(
            "zone_mode = \"zbd\": the working set ({ws_len} bytes) holds not one zone of {} \
             bytes",
            z.zone_bytes
        ),
    })
}

/// Checks zoned workloads before anything is opened: their own settings, that they
/// fit the workload, and that workloads on one target agree on the zones. (Zoned
/// workloads verify like any other: their writes are stamped where the zone table
/// puts them, and a reset zone of an emulated device still holds its last data.)
fn check_plan(run: &RunSpec) -> Result<(), RunError> {
    for w in &run.workloads {
        let Some(z) = &w.zbd else { continue };
        let invalid = |msg: String| RunError::Invalid {
            run: run.name.clone(),
            workload: w.name.clone(),
            msg: format!("zone_mode = \"zbd\": {msg}"),
        };
        if let Some(why) = z.misfit(w) {
            return Err(invalid(why));
        }
        let other = run
            .workloads
            .iter()
            .filter(|o| o.target == w.target)
            .find(|o| match &o.zbd {
                None => true,
                Some(oz) => {
                    (oz.zone_bytes, oz.capacity_bytes, oz.max_open)
                        != (z.zone_bytes, z.capacity_bytes, z.max_open)
                }
            });
        if let Some(o) = other {
            return Err(invalid(format!(
                "workload '{}' uses target '{}' with other zones (or none): every workload \
                 of a target must have the same zone size, capacity and open-zone limit",
                o.name, w.target
            )));
        }
    }
    Ok(())
}

/// A working set cut down to whole zones (fio rounds a zoned job's size down to
/// whole zones); `None` when not one zone is left.
fn whole_zones(z: &Zbd, ws_len: u64) -> Option<u64> {
    let len = ws_len / z.zone_bytes * z.zone_bytes;
    (len > 0).then_some(len)
}

/// Refuses a real zoned block device: ioscope emulates zones and issues no zone
/// commands, so its writes would fail on one (and its resets would not reset).
fn refuse_zoned_device(run: &RunSpec, uri: &str) -> Result<(), RunError> {
    let Ok(crate::plan::model::TargetKind::Path(path)) = crate::target::parse_uri(uri) else {
        return Ok(());
    };
    match crate::sysinfo::zoned_model_at(std::path::Path::new(&path)) {
        None => Ok(()),
        Some(model) => Err(RunError::Setup {
            run: run.name.clone(),
            msg: format!(
                "'{uri}' is a zoned block device ({model}): ioscope emulates zones on files \
                 and devices that are not zoned, and does not issue zone commands (report, \
                 reset, finish) that a zoned device needs"
            ),
        }),
    }
}

/// Each workload's use of its target's zone table (`None` for workloads without
/// zones); the workloads of one target share one table, taken from `registry`.
/// `targets` are the run's targets' (uri, size in bytes), as `resolved` indexes them.
pub(super) fn tables(
    run: &RunSpec,
    resolved: &[Resolved],
    targets: &[(String, u64)],
    registry: &Registry,
) -> Result<Vec<Option<ZbdUse>>, RunError> {
    let mut uses = vec![None; run.workloads.len()];
    for (t, (uri, size)) in targets.iter().enumerate() {
        let users: Vec<usize> = (0..run.workloads.len())
            .filter(|&i| resolved[i].target as usize == t && run.workloads[i].zbd.is_some())
            .collect();
        let Some(&first) = users.first() else {
            continue;
        };
        let z = run.workloads[first].zbd.expect("filtered above");
        let zb = z.zone_bytes;
        let zones = users
            .iter()
            .map(|&i| (resolved[i].ws_start + resolved[i].ws_len) / zb)
            .fold(size / zb, u64::max);
        if zones > MAX_ZONES {
            return Err(RunError::Invalid {
                run: run.name.clone(),
                workload: run.workloads[first].name.clone(),
                msg: format!(
                    "zone_mode = \"zbd\": '{uri}' holds {zones} zones of {zb} bytes, more \
                     than {MAX_ZONES}; use larger zones"
                ),
            });
        }
        check_reset_ranges(run, resolved, &users)?;
        let table = registry.table(uri, &z, zones as usize);
        // Each run counts its writes to the next reset afresh (fio: at each job's
        // start).
        if let Some(every) = users
            .iter()
            .map(|&i| reset_every(&run.workloads[i]))
            .find(|&e| e > 0)
        {
            table.lock().write_cnt = every;
        }
        for &i in &users {
            uses[i] = Some(use_of(run, resolved, i, &table));
        }
    }
    Ok(uses)
}

/// Writes between resets above the threshold: 1 / frequency, 0 = never.
fn reset_every(w: &crate::plan::model::Workload) -> u32 {
    match w.zbd {
        Some(z) if z.reset_frequency > 0.0 => {
            (1.0 / z.reset_frequency).min(f64::from(u32::MAX)) as u32
        }
        _ => 0,
    }
}

/// The reset threshold counts the written bytes of the whole table against one
/// working set, so writers with a threshold must share one working set (fio
/// refuses different write ranges with `zone_reset_threshold` too).
fn check_reset_ranges(
    run: &RunSpec,
    resolved: &[Resolved],
    users: &[usize],
) -> Result<(), RunError> {
    let writers: Vec<usize> = users
        .iter()
        .copied()
        .filter(|&i| run.workloads[i].read_pct < 100)
        .collect();
    let range = |i: usize| (resolved[i].ws_start, resolved[i].ws_len);
    let Some(&with) = writers
        .iter()
        .find(|&&i| reset_every(&run.workloads[i]) > 0)
    else {
        return Ok(());
    };
    match writers.iter().find(|&&i| range(i) != range(with)) {
        None => Ok(()),
        Some(&i) => Err(RunError::Invalid {
            run: run.name.clone(),
            workload: run.workloads[i].name.clone(),
            msg: format!(
                "zone_mode = \"zbd\": a zone reset threshold needs every writer of the \
                 target to write the same working set as workload '{}'",
                run.workloads[with].name
            ),
        }),
    }
}

fn use_of(run: &RunSpec, resolved: &[Resolved], i: usize, table: &Arc<ZoneTable>) -> ZbdUse {
    let w = &run.workloads[i];
    let z = w.zbd.expect("a zoned workload");
    let r = &resolved[i];
    let min_of = |op: Op| {
        w.bs.for_op(op)
            .iter()
            .map(|&(b, _)| b)
            .min()
            .unwrap_or(1)
            .max(1)
    };
    ZbdUse {
        table: Arc::clone(table),
        min_zone: (r.ws_start / z.zone_bytes) as u32,
        max_zone: ((r.ws_start + r.ws_len) / z.zone_bytes) as u32,
        max_open: z.max_open,
        resets: Arc::new(AtomicU64::new(0)),
        ws_start: r.ws_start,
        ws_len: r.ws_len,
        stream_max_open: z.stream_max_open,
        threshold_bytes: (r.ws_len as f64 * z.reset_threshold) as u64,
        reset_every: reset_every(w),
        read_beyond_wp: z.read_beyond_wp,
        random: !matches!(w.pattern, AccessPattern::Sequential),
        min_bs: [min_of(Op::Read), min_of(Op::Write)],
    }
}

/// Writes the zone resets into the result: the run's total, and each workload's
/// when the result lists workloads.
pub(super) fn count_resets(
    result: &mut crate::result::RunResult,
    run: &RunSpec,
    uses: &[Option<ZbdUse>],
) {
    // As fio, only workloads that write or trim count zone resets.
    let per: Vec<Option<u64>> = uses
        .iter()
        .zip(&run.workloads)
        .map(|(u, w)| {
            let resets = w.read_pct < 100 || w.trim != crate::plan::model::TrimMode::None;
            u.as_ref().filter(|_| resets).map(ZbdUse::resets)
        })
        .collect();
    if per.iter().all(Option::is_none) {
        return;
    }
    result.totals.zone_resets = Some(per.iter().flatten().sum());
    for wr in &mut result.workloads {
        if let Some(i) = run.workloads.iter().position(|w| w.name == wr.name) {
            wr.totals.zone_resets = per.get(i).copied().flatten();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::{BlockSizes, EngineKind, TrimMode, Workload};
    use crate::rng::Rng;

    const MIB: u64 = 1 << 20;
    const KIB: u64 = 1 << 10;

    fn run_of(workloads: Vec<Workload>) -> RunSpec {
        RunSpec {
            name: "r".into(),
            workloads,
            engine: EngineKind::Mem,
            ..Default::default()
        }
    }

    fn zoned(zbd: Zbd, read_pct: u8, bs: u64, pattern: AccessPattern) -> Workload {
        Workload {
            read_pct,
            bs: BlockSizes::fixed(bs),
            pattern,
            zbd: Some(zbd),
            ..Default::default()
        }
    }

    /// Each workload's use of one table over `ws_start..ws_start + ws_len`.
    fn uses(workloads: Vec<Workload>, ws_start: u64, ws_len: u64) -> Vec<ZbdUse> {
        let run = run_of(workloads);
        let resolved: Vec<Resolved> = run
            .workloads
            .iter()
            .map(|_| Resolved {
                target: 0,
                ws_start,
                ws_len,
                file_bytes: 0,
                file_lens: None,
            })
            .collect();
        let size = ws_start + ws_len;
        tables(&run, &resolved, &[("t".into(), size)], &Registry::new())
            .unwrap()
            .into_iter()
            .map(Option::unwrap)
            .collect()
    }

    fn io(p: Placed) -> (u64, u64) {
        match p {
            Placed::Io { offset, len } => (offset, u64::from(len)),
            Placed::Eof => panic!("expected an I/O, got eof"),
        }
    }

    fn wps(u: &ZbdUse) -> Vec<u64> {
        u.table.lock().wp.clone()
    }

    fn random_offset(rng: &mut Rng, ws_start: u64, ws_len: u64, bs: u64) -> u64 {
        ws_start + rng.below(ws_len / bs) * bs
    }

    #[test]
    fn random_writes_land_at_the_write_pointers() {
        // 8 zones of 1 MiB at 2 MiB into the target; 64 KiB random writes.
        let (start, len) = (2 * MIB, 8 * MIB);
        let u = &uses(
            vec![zoned(Zbd::of_size(MIB), 0, 64 * KIB, AccessPattern::Random)],
            start,
            len,
        )[0];
        let mut rng = Rng::new(3);
        let mut shadow = [0u64; 8];
        let mut resets_seen = 0;
        for _ in 0..2000 {
            let drawn = random_offset(&mut rng, start, len, 64 * KIB);
            let (offset, n) = io(u.place(Op::Write, drawn, 64 * KIB as u32, 0));
            let z = ((offset - start) / MIB) as usize;
            // The write goes to the zone its offset was drawn in (no open limit).
            assert_eq!(z as u64, (drawn - start) / MIB);
            let resets = u.resets();
            if resets > resets_seen {
                // A reset: the zone was full and the write starts it again.
                assert_eq!(shadow[z], MIB, "only a full zone is reset");
                shadow[z] = 0;
                resets_seen = resets;
            }
            // Sequential within the zone: exactly at its write pointer.
            assert_eq!(offset, start + z as u64 * MIB + shadow[z]);
            assert_eq!(n, 64 * KIB);
            shadow[z] += n;
            assert!(shadow[z] <= MIB);
            assert_eq!(wps(u)[(offset / MIB) as usize], shadow[z]);
        }
        // 2000 writes of 64 KiB are 125 MiB into 8 MiB of zones: many resets.
        assert!(resets_seen > 100, "{resets_seen} resets");
        assert_eq!(u.table.lock().valid_bytes, shadow.iter().sum::<u64>());
    }

    #[test]
    fn open_zone_limits_hold() {
        let z = Zbd {
            max_open: 3,
            stream_max_open: 2,
            ..Zbd::of_size(MIB)
        };
        let (start, len) = (0, 16 * MIB);
        let u = &uses(
            vec![zoned(z, 0, 128 * KIB, AccessPattern::Random)],
            start,
            len,
        )[0];
        let mut rng = Rng::new(11);
        let mut written = std::collections::BTreeSet::new();
        for i in 0..3000u32 {
            let drawn = random_offset(&mut rng, start, len, 128 * KIB);
            let owner = i % 3;
            let (offset, _) = io(u.place(Op::Write, drawn, 128 * KIB as u32, owner));
            written.insert(offset / MIB);
            let st = u.table.lock();
            // Partly written zones are the open ones: never more than the limit.
            let partial = st.wp.iter().filter(|&&w| w > 0 && w < MIB).count();
            assert!(partial <= 3, "{partial} zones partly written");
            assert!(st.open.len() <= 3);
            for o in 0..3 {
                assert!(st.open.iter().filter(|z| z.owner == o).count() <= 2);
            }
        }
        // The writes still wander over the zones as zones fill and close.
        assert!(written.len() > 8, "{written:?}");
    }

    #[test]
    fn reset_threshold_and_frequency_reset_every_nth_write() {
        // 4 zones of 1 MiB, 256 KiB writes; above 2 MiB written every 4th write
        // resets its zone first.
        let z = Zbd {
            reset_threshold: 0.5,
            reset_frequency: 0.25,
            ..Zbd::of_size(MIB)
        };
        let u = &uses(
            vec![zoned(z, 0, 256 * KIB, AccessPattern::Random)],
            0,
            4 * MIB,
        )[0];
        // Zone by zone, four writes each.
        for zone in 0..4 {
            for _ in 0..4 {
                io(u.place(Op::Write, zone * MIB, 256 * KIB as u32, 0));
            }
        }
        // Writes 9..=16 are above the threshold: the 12th resets zone 2 (768 KiB
        // in it), the 16th zone 3.
        assert_eq!(u.resets(), 2);
        assert_eq!(wps(u), vec![MIB, MIB, 256 * KIB, 256 * KIB]);
        // Without a frequency, full zones are the only ones reset.
        let u = &uses(
            vec![zoned(
                Zbd::of_size(MIB),
                0,
                256 * KIB,
                AccessPattern::Random,
            )],
            0,
            4 * MIB,
        )[0];
        for zone in 0..4 {
            for _ in 0..4 {
                io(u.place(Op::Write, zone * MIB, 256 * KIB as u32, 0));
            }
        }
        assert_eq!(u.resets(), 0);
        io(u.place(Op::Write, MIB, 256 * KIB as u32, 0));
        assert_eq!(u.resets(), 1);
    }

    #[test]
    fn reads_stay_below_the_write_pointers() {
        let z = Zbd::of_size(MIB);
        let all = uses(
            vec![
                zoned(z, 0, 64 * KIB, AccessPattern::Random),
                zoned(z, 100, 128 * KIB, AccessPattern::Random),
                zoned(z, 100, 64 * KIB, AccessPattern::Sequential),
            ],
            0,
            8 * MIB,
        );
        let (w, r, seq) = (&all[0], &all[1], &all[2]);
        // Nothing written: nothing to read (fio's eof).
        assert_eq!(r.place(Op::Read, 3 * MIB, 128 * KIB as u32, 1), Placed::Eof);
        assert_eq!(seq.place(Op::Read, 0, 64 * KIB as u32, 2), Placed::Eof);
        // Zone 1 gets 320 KiB, zone 5 gets 64 KiB.
        for _ in 0..5 {
            io(w.place(Op::Write, MIB, 64 * KIB as u32, 0));
        }
        io(w.place(Op::Write, 5 * MIB, 64 * KIB as u32, 0));
        let mut rng = Rng::new(5);
        for _ in 0..500 {
            let drawn = random_offset(&mut rng, 0, 8 * MIB, 128 * KIB);
            let (offset, n) = io(r.place(Op::Read, drawn, 128 * KIB as u32, 1));
            // Zone 5 holds less than one 128 KiB read: only zone 1 is read.
            assert_eq!(offset / MIB, 1, "read at {offset}");
            assert_eq!(n, 128 * KIB);
            assert!(offset + n <= MIB + 320 * KIB);
        }
        // Sequential reads skip to the next zone with data and end at its pointer.
        let (o, n) = io(seq.place(Op::Read, 0, 64 * KIB as u32, 2));
        assert_eq!((o, n), (MIB, 64 * KIB));
        let (o, _) = io(seq.place(Op::Read, MIB + 320 * KIB, 64 * KIB as u32, 2));
        assert_eq!(o, 5 * MIB);
        assert_eq!(
            seq.place(Op::Read, 6 * MIB, 64 * KIB as u32, 2),
            Placed::Eof
        );
        // read_beyond_wp leaves the offset alone.
        let free = &uses(
            vec![zoned(
                Zbd {
                    read_beyond_wp: true,
                    ..z
                },
                100,
                4096,
                AccessPattern::Random,
            )],
            0,
            8 * MIB,
        )[0];
        assert_eq!(
            free.place(Op::Read, 7 * MIB, 4096, 0),
            Placed::Io {
                offset: 7 * MIB,
                len: 4096
            }
        );
    }

    #[test]
    fn trims_reset_zones_with_data() {
        let z = Zbd::of_size(MIB);
        let trimmer = Workload {
            trim: TrimMode::Only,
            ..zoned(z, 0, MIB, AccessPattern::Random)
        };
        let all = uses(
            vec![zoned(z, 0, 64 * KIB, AccessPattern::Random), trimmer],
            0,
            4 * MIB,
        );
        let (w, t) = (&all[0], &all[1]);
        assert_eq!(t.place(Op::Trim, 0, MIB as u32, 1), Placed::Eof);
        io(w.place(Op::Write, 2 * MIB, 64 * KIB as u32, 0));
        // A random trim of an empty zone moves to the nearest zone with data.
        assert_eq!(
            io(t.place(Op::Trim, 3 * MIB, MIB as u32, 1)),
            (2 * MIB, MIB)
        );
        assert_eq!(wps(w), vec![0; 4]);
        assert_eq!((w.resets(), t.resets()), (0, 1));
        assert_eq!(w.table.lock().valid_bytes, 0);
    }

    #[test]
    fn capacity_below_the_zone_size_is_written_and_finished() {
        // 1 MiB zones of 600 KiB capacity, 256 KiB writes: two fit, then the zone is
        // finished (88 KiB left over is less than a write).
        let z = Zbd {
            capacity_bytes: 600 * KIB,
            max_open: 1,
            ..Zbd::of_size(MIB)
        };
        let u = &uses(
            vec![zoned(z, 0, 256 * KIB, AccessPattern::Random)],
            0,
            2 * MIB,
        )[0];
        assert_eq!(
            io(u.place(Op::Write, 0, 256 * KIB as u32, 0)),
            (0, 256 * KIB)
        );
        assert_eq!(
            io(u.place(Op::Write, MIB, 256 * KIB as u32, 0)),
            (256 * KIB, 256 * KIB)
        );
        assert_eq!(wps(u)[0], 600 * KIB);
        assert!(u.table.lock().open.is_empty());
        assert_eq!(
            io(u.place(Op::Write, MIB, 256 * KIB as u32, 0)),
            (MIB, 256 * KIB)
        );
    }

    #[test]
    fn plans_are_checked() {
        let z = Zbd::of_size(MIB);
        let w = zoned(z, 0, 64 * KIB, AccessPattern::Random);
        assert!(check_plan(&run_of(vec![w.clone()])).is_ok());
        let big = zoned(z, 0, 2 * MIB, AccessPattern::Random);
        let e = check_plan(&run_of(vec![big])).unwrap_err().to_string();
        assert!(e.contains("larger than a zone"), "{e}");
        let other = Workload {
            name: "other".into(),
            zbd: Some(Zbd::of_size(2 * MIB)),
            ..w.clone()
        };
        let e = check_plan(&run_of(vec![w.clone(), other]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("same zone size"), "{e}");
        assert_eq!(whole_zones(&z, 3 * MIB + 5), Some(3 * MIB));
        assert_eq!(whole_zones(&z, MIB - 1), None);
    }

    #[test]
    fn later_runs_on_a_target_find_its_write_pointers() {
        let registry = Registry::new();
        let z = Zbd::of_size(MIB);
        let tables_of = |w: Workload, zbd: Zbd| {
            let run = run_of(vec![Workload {
                zbd: Some(zbd),
                ..w
            }]);
            let r = [Resolved {
                target: 0,
                ws_start: 0,
                ws_len: 4 * MIB,
                file_bytes: 0,
                file_lens: None,
            }];
            tables(&run, &r, &[("f".into(), 4 * MIB)], &registry).unwrap()[0]
                .clone()
                .unwrap()
        };
        let w = tables_of(zoned(z, 0, 64 * KIB, AccessPattern::Random), z);
        io(w.place(Op::Write, 2 * MIB, 64 * KIB as u32, 0));
        // The next run's reader finds the data; its resets count from 0.
        let r = tables_of(zoned(z, 100, 64 * KIB, AccessPattern::Sequential), z);
        assert_eq!(
            io(r.place(Op::Read, 0, 64 * KIB as u32, 0)),
            (2 * MIB, 64 * KIB)
        );
        assert_eq!(r.resets(), 0);
        // Another zone layout starts empty.
        let other = Zbd::of_size(2 * MIB);
        let r = tables_of(
            zoned(other, 100, 64 * KIB, AccessPattern::Sequential),
            other,
        );
        assert_eq!(r.place(Op::Read, 0, 64 * KIB as u32, 0), Placed::Eof);
    }
}
