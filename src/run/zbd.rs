//! Emulated zones at run time (fio's `zonemode=zbd` on a file or a device that is
//! not zoned): one zone table per target, shared by every stream of every workload
//! that uses it, as fio shares a file's zone information between its jobs.
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

use super::setup::Resolved;
use super::RunError;
use crate::plan::model::{AccessPattern, Op, RunSpec};
use crate::plan::zbd::Zbd;
use std::sync::{Arc, Mutex};

/// At most this many zones in one table (8 bytes each).
const MAX_ZONES: u64 = 1 << 24;

/// The zones of one target.
#[derive(Debug)]
pub struct ZoneTable {
    zone_bytes: u64,
    capacity_bytes: u64,
    /// Zone number (from the target's start) of the table's first zone.
    first_zone: u64,
    /// Zones written at once over the whole target; 0 = no limit.
    max_open: u32,
    state: Mutex<State>,
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
    /// Zone resets per workload of the run.
    resets: Vec<u64>,
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
    workload: u32,
}

impl ZoneTable {
    fn new(z: &Zbd, first_zone: u64, zones: usize, workloads: usize) -> ZoneTable {
        ZoneTable {
            zone_bytes: z.zone_bytes,
            capacity_bytes: z.capacity_bytes,
            first_zone,
            max_open: z.max_open,
            state: Mutex::new(State {
                wp: vec![0; zones],
                open: Vec::new(),
                valid_bytes: 0,
                write_cnt: 0,
                resets: vec![0; workloads],
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A stream that panicked holding the lock leaves pointers that are still
        // consistent (each change is one assignment), so go on with them.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Zone resets of workload `w` so far.
    pub fn resets_of(&self, w: usize) -> u64 {
        self.lock().resets.get(w).copied().unwrap_or(0)
    }

    fn zone_start(&self, z: u32) -> u64 {
        (self.first_zone + u64::from(z)) * self.zone_bytes
    }
}

impl State {
    /// Empties zone `z`; counts a reset when it held data.
    fn reset(&mut self, z: u32, workload: u32) {
        let w = std::mem::take(&mut self.wp[z as usize]);
        if w > 0 {
            self.valid_bytes = self.valid_bytes.saturating_sub(w);
            self.resets[workload as usize] += 1;
        }
    }

    fn close(&mut self, z: u32) {
        self.open.retain(|o| o.zone != z);
    }
}

impl ZbdUse {
    /// The table index of the zone `offset` falls in, kept in the workload's zones.
    fn slot_of(&self, offset: u64) -> u32 {
        let t = &self.table;
        let z = (offset / t.zone_bytes).saturating_sub(t.first_zone);
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
            st.reset(z, self.workload);
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
        let max_open = self.table.max_open as usize;
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
        st.reset(z, self.workload);
        st.close(z);
        Some((self.table.zone_start(z), self.table.zone_bytes))
    }
}

/// Checks zoned workloads before anything is opened: their own settings, that they
/// fit the workload, that workloads on one target agree on the zones, and that no
/// zoned workload verifies its data.
pub(super) fn check_plan(run: &RunSpec, opts: &super::RunOptions) -> Result<(), RunError> {
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
        let data = opts.data.for_workload(w);
        if data.verify || data.verify_after {
            return Err(invalid(
                "verification is not supported with zones (a zone reset leaves old data \
                 under the write pointer that the verifier would take for new)"
                    .into(),
            ));
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
pub(super) fn whole_zones(z: &Zbd, ws_len: u64) -> Option<u64> {
    let len = ws_len / z.zone_bytes * z.zone_bytes;
    (len > 0).then_some(len)
}

/// Refuses a real zoned block device: ioscope emulates zones and issues no zone
/// commands, so its writes would fail on one (and its resets would not reset).
pub(super) fn refuse_zoned_device(run: &RunSpec, uri: &str) -> Result<(), RunError> {
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
/// zones); the workloads of one target share one table.
pub(super) fn tables(
    run: &RunSpec,
    resolved: &[Resolved],
) -> Result<Vec<Option<ZbdUse>>, RunError> {
    let mut uses = vec![None; run.workloads.len()];
    let mut targets: Vec<u32> = resolved.iter().map(|r| r.target).collect();
    targets.sort_unstable();
    targets.dedup();
    for t in targets {
        let users: Vec<usize> = (0..run.workloads.len())
            .filter(|&i| resolved[i].target == t && run.workloads[i].zbd.is_some())
            .collect();
        let Some(&first) = users.first() else {
            continue;
        };
        let z = run.workloads[first].zbd.expect("filtered above");
        let zb = z.zone_bytes;
        let lo = users
            .iter()
            .map(|&i| resolved[i].ws_start / zb)
            .min()
            .unwrap_or(0);
        let hi = users
            .iter()
            .map(|&i| (resolved[i].ws_start + resolved[i].ws_len) / zb)
            .max()
            .unwrap_or(0);
        if hi - lo > MAX_ZONES {
            return Err(RunError::Invalid {
                run: run.name.clone(),
                workload: run.workloads[first].name.clone(),
                msg: format!(
                    "zone_mode = \"zbd\": {} zones of {zb} bytes is more than {MAX_ZONES}; \
                     use larger zones",
                    hi - lo
                ),
            });
        }
        check_reset_ranges(run, resolved, &users)?;
        let table = Arc::new(ZoneTable::new(
            &z,
            lo,
            (hi - lo) as usize,
            run.workloads.len(),
        ));
        if let Some(every) = users
            .iter()
            .map(|&i| reset_every(&run.workloads[i]))
            .find(|&e| e > 0)
        {
            table.lock().write_cnt = every;
        }
        for &i in &users {
            uses[i] = Some(use_of(run, resolved, i, &table, lo));
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

fn use_of(
    run: &RunSpec,
    resolved: &[Resolved],
    i: usize,
    table: &Arc<ZoneTable>,
    lo: u64,
) -> ZbdUse {
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
        min_zone: (r.ws_start / z.zone_bytes - lo) as u32,
        max_zone: ((r.ws_start + r.ws_len) / z.zone_bytes - lo) as u32,
        ws_start: r.ws_start,
        ws_len: r.ws_len,
        stream_max_open: z.stream_max_open,
        threshold_bytes: (r.ws_len as f64 * z.reset_threshold) as u64,
        reset_every: reset_every(w),
        read_beyond_wp: z.read_beyond_wp,
        random: !matches!(w.pattern, AccessPattern::Sequential),
        min_bs: [min_of(Op::Read), min_of(Op::Write)],
        workload: i as u32,
    }
}

/// Writes the zone resets into the result: the run's total, and each workload's
/// when the result lists workloads.
pub(super) fn count_resets(
    result: &mut crate::result::RunResult,
    run: &RunSpec,
    uses: &[Option<ZbdUse>],
) {
    let per: Vec<Option<u64>> = uses
        .iter()
        .enumerate()
        .map(|(i, u)| u.as_ref().map(|u| u.table.resets_of(i)))
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
