//! The data side of a worker: what each write carries and how each read is checked.
//! Every write gets fresh content from the worker's generator (unique and
//! incompressible by default, or at the requested dedup/compress ratios). With
//! verification, each unit is stamped with a header and a key from the target's shared
//! key map, optionally journaled; each read of a written unit is checked and any
//! mismatch classified. Nothing here allocates per I/O.

use crate::data::{
    check, stamp, DataSpec, Generator, Journal, JournalError, JournalWriter, KeyExpectation,
    KeyMap, MismatchKind, ReadTicket, ReissuedWrites, SyncPolicy, Verified, WriteTicket,
};
use crate::result::{VerifyResult, VerifySample};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Data settings of an invocation.
#[derive(Debug, Clone, Default)]
pub struct DataOptions {
    pub spec: DataSpec,
    /// Stamp every written unit and check every read of one.
    pub verify: bool,
    /// Read back every written unit after each run.
    pub verify_after: bool,
    /// Crash journal directory.
    pub journal: Option<PathBuf>,
    /// Key maps and journals shared by the runs of this invocation.
    pub registry: Arc<Registry>,
}

/// One workload's data settings as run: its own over the invocation's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkloadDataOptions {
    pub spec: DataSpec,
    /// Its writes are stamped and its reads checked.
    pub verify: bool,
    /// Its target is read back after the run.
    pub verify_after: bool,
}

/// The runtime's form of a plan's fill pattern (fixed bytes, or the offset form).
pub fn fill_bytes(p: &crate::plan::fill::FillPattern) -> Option<crate::data::FillBytes> {
    if p.is_offset() {
        return Some(crate::data::FillBytes::OFFSET);
    }
    crate::data::FillBytes::new(p.bytes())
}

impl DataOptions {
    /// `w`'s data settings: its own where it has them, else these.
    pub fn for_workload(&self, w: &crate::plan::model::Workload) -> WorkloadDataOptions {
        let own = &w.overrides.data;
        let verify_after = own.verify_after.unwrap_or(self.verify_after);
        WorkloadDataOptions {
            spec: DataSpec {
                dedup_ratio: own.dedup_ratio.unwrap_or(self.spec.dedup_ratio),
                compress_ratio: own.compress_ratio.unwrap_or(self.spec.compress_ratio),
                fill: match &own.pattern {
                    Some(p) => fill_bytes(p),
                    None => self.spec.fill,
                },
                working_set: match own.dedup_set {
                    Some(w) => Some(crate::data::WorkingSet::of_bytes(
                        w.bytes,
                        self.spec.dedup_unit,
                        w.global,
                    )),
                    None => self.spec.working_set,
                },
                ..self.spec
            },
            // A read-back during the run checks what it reads: it verifies.
            verify: own.verify.unwrap_or(self.verify)
                || verify_after
                || own.verify_backlog.is_some(),
            verify_after,
        }
    }

    /// [`DataOptions::for_workload`] of every workload of `run`, in order.
    pub fn per_workload(&self, run: &crate::plan::model::RunSpec) -> Vec<WorkloadDataOptions> {
        run.workloads.iter().map(|w| self.for_workload(w)).collect()
    }
}

/// Why a target's verification state (key map, crash journal) cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum VerifyStateError {
    /// A worker panicked while holding the registry.
    #[error("verify registry poisoned")]
    Poisoned,
    /// The journal directory cannot be created.
    #[error("journal '{}'", dir.display())]
    JournalDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    /// The journal cannot be opened, replayed or written.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// A file of a file set (a vdbench tree) ends inside a unit, whose key could
    /// not be checked whole (vdbench refuses such files too).
    #[error(
        "'{uri}': files of {len_bytes} bytes end inside a {unit_bytes}-byte unit; \
         verification needs file lengths in whole units (see --dedup-unit)"
    )]
    FileLength {
        uri: String,
        len_bytes: u64,
        unit_bytes: u64,
    },
}

/// Every length a file set's files have must be whole units; other targets pass.
fn check_file_lengths(uri: &str, unit_bytes: u64) -> Result<(), VerifyStateError> {
    let Ok(crate::plan::model::TargetKind::Files(set)) = crate::target::parse_uri(uri) else {
        return Ok(());
    };
    let lens = set.file_lens().unwrap_or_else(|| vec![set.file_bytes]);
    match lens.into_iter().find(|l| l % unit_bytes != 0) {
        Some(len_bytes) => Err(VerifyStateError::FileLength {
            uri: uri.to_string(),
            len_bytes,
            unit_bytes,
        }),
        None => Ok(()),
    }
}

/// Per-target verify state that outlives a run, so a read run after a write run in
/// the same invocation checks what the first one wrote.
#[derive(Debug, Default)]
pub struct Registry {
    targets: Mutex<HashMap<String, TargetState>>,
}

/// A target's key map and, with `--journal`, its journal.
#[derive(Debug, Clone)]
pub struct TargetState {
    pub map: Arc<KeyMap>,
    pub journal: Option<Arc<Journal>>,
    /// Small stable id written into headers: [`target_id`] of the URI.
    pub id: u16,
    /// Writes a multipath target issued on two paths (their late copies are accepted).
    pub reissued: Arc<ReissuedWrites>,
}

impl TargetState {
    /// Checks one unit (`index` in the map, at byte `offset`) against `e` and adds
    /// the outcome to `out`. An older key that belongs to a write issued on two paths
    /// is the late copy of that write landing after a newer one: ambiguous but not
    /// corruption, counted in `ok` and `reissued_copies`.
    pub fn check_unit(
        &self,
        out: &mut VerifyResult,
        bytes: &[u8],
        index: u64,
        offset: u64,
        e: &KeyExpectation,
        uri: &str,
    ) {
        let r = check(bytes, self.id, offset, e);
        if let Err(m) = &r {
            if matches!(m.kind, MismatchKind::Stale | MismatchKind::Unexpected)
                && self.reissued.contains(index, m.found.key)
            {
                out.units_checked += 1;
                out.ok += 1;
                out.reissued_copies += 1;
                return;
            }
        }
        record(out, r, uri, offset);
    }
}

impl Registry {
    /// The state of target `uri` of `size_bytes`, created on first use (from the
    /// journal when one is given).
    pub fn target(
        &self,
        uri: &str,
        size_bytes: u64,
        opts: &DataOptions,
        journal_dir: Option<PathBuf>,
    ) -> Result<TargetState, VerifyStateError> {
        let mut g = self
            .targets
            .lock()
            .map_err(|_| VerifyStateError::Poisoned)?;
        if let Some(t) = g.get(uri) {
            return Ok(t.clone());
        }
        let unit = opts.spec.dedup_unit as u64;
        check_file_lengths(uri, unit)?;
        let units = size_bytes / unit;
        let (map, journal) = match journal_dir {
            Some(dir) => {
                std::fs::create_dir_all(&dir).map_err(|source| VerifyStateError::JournalDir {
                    dir: dir.clone(),
                    source,
                })?;
                let (j, rec) = Journal::open_or_create(&dir, uri, unit as u32, units * unit)?;
                (
                    KeyMap::from_entries(rec.continue_entries()),
                    Some(Arc::new(j)),
                )
            }
            None => (KeyMap::new(units), None),
        };
        let st = TargetState {
            map: Arc::new(map),
            journal,
            id: target_id(uri),
            reissued: Arc::default(),
        };
        g.insert(uri.to_string(), st.clone());
        Ok(st)
    }
}

/// The id a target's units carry in their headers: 16 bits of a hash of the URI the
/// data set was written through (the journal records that URI, so `ioscope verify`
/// of a renamed device still knows it).
pub fn target_id(uri: &str) -> u16 {
    (crate::data::hash::hash64(uri.as_bytes(), 0x7a26) & 0xffff) as u16
}

/// How a run's workers share a global dedup working set (fio's `dedupe_global`):
/// one seed for the run, each worker writing its share of the set first.
#[derive(Debug, Clone, Copy)]
pub struct SetShare {
    pub workers: u64,
    pub shared_seed: u64,
}

/// Most mismatch samples a worker keeps.
const MAX_SAMPLES: usize = 16;

/// Per-worker data state.
pub struct WorkerData {
    /// The content generator of the first workload's data spec (and of every
    /// workload with the same): a field of its own, so the common one-spec fill is
    /// compiled as it was before workloads had their own (`&mut self` tells the
    /// compiler it cannot alias the buffer; an element of a Vec did not, and the
    /// fill loop took one more instruction per 32 bytes).
    gen: Generator,
    /// Generators of the further data specs; workload's generator `g` > 0 is
    /// `more[g - 1]`.
    more: Vec<Generator>,
    /// Per workload: its generator (0 = `gen`).
    gen_of: Vec<u32>,
    /// Per workload: its reads are checked.
    checks: Vec<bool>,
    unit: usize,
    /// Per engine target: verify state (None = not verified).
    targets: Vec<Option<(TargetState, Option<JournalWriter>)>>,
    /// Some target is verified: without one, [`WorkerData::verifying`] is one test.
    any_verified: bool,
    pub counts: VerifyResult,
}

impl WorkerData {
    /// `workloads`: each workload's data settings (the run's streams name workloads
    /// by index); `unit`: the run's data unit.
    pub fn new(
        workloads: &[WorkloadDataOptions],
        unit: u32,
        seed: u64,
        targets: Vec<Option<TargetState>>,
        worker: u32,
        share: SetShare,
    ) -> Result<Self, VerifyStateError> {
        let mut out = Vec::with_capacity(targets.len());
        for t in targets {
            out.push(match t {
                Some(st) => {
                    let w = match &st.journal {
                        Some(j) => Some(j.writer(worker, SyncPolicy::default())?),
                        None => None,
                    };
                    Some((st, w))
                }
                None => None,
            });
        }
        let mut specs: Vec<DataSpec> = Vec::new();
        let mut gen_of = Vec::with_capacity(workloads.len());
        for w in workloads {
            let spec = DataSpec {
                dedup_unit: unit,
                working_set: w
                    .spec
                    .working_set
                    .map(|ws| ws.for_worker(u64::from(worker), share.workers, share.shared_seed)),
                ..w.spec
            };
            let i = specs.iter().position(|s| *s == spec).unwrap_or_else(|| {
                specs.push(spec);
                specs.len() - 1
            });
            gen_of.push(i as u32);
        }
        if specs.is_empty() {
            specs.push(DataSpec {
                dedup_unit: unit,
                ..DataSpec::default()
            });
        }
        let mut gens = specs
            .iter()
            .enumerate()
            .map(|(i, s)| Generator::new(s, seed.wrapping_add(i as u64)));
        Ok(WorkerData {
            gen: gens.next().expect("at least one data spec"),
            more: gens.collect(),
            gen_of,
            checks: workloads.iter().map(|w| w.verify).collect(),
            unit: unit as usize,
            any_verified: out.iter().any(Option::is_some),
            targets: out,
            counts: VerifyResult::default(),
        })
    }

    /// Bytes per data unit (the dedup unit; the verify granule).
    pub fn unit(&self) -> usize {
        self.unit
    }

    /// Whether some target is verified.
    pub fn any_verified(&self) -> bool {
        self.any_verified
    }

    /// Whether target `t` is verified.
    #[inline]
    pub fn verifying(&self, t: u32) -> bool {
        self.any_verified && self.targets.get(t as usize).is_some_and(|x| x.is_some())
    }

    /// Fills a write's buffer with its workload's content; on a verified target,
    /// stamps and registers every unit (whatever the workload: another workload's
    /// checks of the unit must know what it holds).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn on_write_submit(
        &mut self,
        target: u32,
        workload: u32,
        offset: u64,
        buf: &mut [u8],
        stream: u32,
        tickets: &mut Vec<WriteTicket>,
        now_ns: u64,
    ) -> std::io::Result<()> {
        match self.gen_of.get(workload as usize) {
            Some(&g) if g > 0 => self.more[g as usize - 1].fill(buf, offset),
            _ => self.gen.fill(buf, offset),
        }
        let Some(Some((st, jw))) = self.targets.get_mut(target as usize) else {
            return Ok(());
        };
        let unit = self.unit;
        for (i, u) in buf.chunks_exact_mut(unit).enumerate() {
            let off = offset + (i * unit) as u64;
            let t = st.map.begin_write(off / unit as u64);
            stamp(u, st.id, off, stream, t.key);
            if let Some(j) = jw.as_mut() {
                j.record_intent(&t, now_ns)?;
            }
            tickets.push(t);
        }
        // The intents must be in the journal file before the write can reach the
        // device, and an engine may submit as soon as the request is pushed (uring
        // does): write them out now, not at the next loop turn.
        // Regression: kill -9 left units holding a key the journal never saw.
        if let Some(j) = jw.as_mut() {
            j.before_submit(now_ns)?;
        }
        Ok(())
    }

    /// Registers the units a read on verified `target` covers (its caller tests
    /// [`WorkerData::verifying`] first, in line).
    #[inline(never)]
    pub fn register_read(
        &mut self,
        target: u32,
        workload: u32,
        offset: u64,
        len: u32,
        tickets: &mut Vec<ReadTicket>,
    ) {
        let Some(Some((st, _))) = self.targets.get(target as usize) else {
            return;
        };
        if !self.checks.get(workload as usize).copied().unwrap_or(true) {
            return;
        }
        let unit = self.unit as u64;
        let mut off = offset;
        while off + unit <= offset + len as u64 {
            tickets.push(st.map.begin_read(off / unit));
            off += unit;
        }
    }

    /// Makes journal intents durable before the requests are submitted.
    #[inline]
    pub fn before_submit(&mut self, now_ns: u64) -> std::io::Result<()> {
        for (_, jw) in self.targets.iter_mut().flatten() {
            if let Some(j) = jw.as_mut() {
                j.before_submit(now_ns)?;
            }
        }
        Ok(())
    }

    /// Commits a write's units. `reissued`: the write was issued on two paths (its
    /// first copy may still land later), so its keys are remembered as acceptable
    /// and the journal keeps the unit uncertain for `ioscope verify`.
    #[inline]
    pub fn on_write_complete(
        &mut self,
        target: u32,
        tickets: &mut Vec<WriteTicket>,
        ok: bool,
        reissued: bool,
        now_ns: u64,
    ) -> std::io::Result<()> {
        let Some(Some((st, jw))) = self.targets.get_mut(target as usize) else {
            tickets.clear();
            return Ok(());
        };
        for t in tickets.drain(..) {
            if reissued {
                st.reissued.add(t.unit, t.key);
            }
            let clean = st.map.end_write(t, ok) && !reissued;
            match jw.as_mut() {
                Some(j) if reissued => j.record_reissued_commit(&t, ok, now_ns)?,
                Some(j) => j.record_commit(&t, ok, clean, now_ns)?,
                None => {}
            }
        }
        Ok(())
    }

    /// Checks a completed read's units.
    #[inline]
    pub fn on_read_complete(
        &mut self,
        target: u32,
        uri: &str,
        offset: u64,
        buf: &[u8],
        tickets: &mut Vec<ReadTicket>,
        ok: bool,
    ) {
        let Some(Some((st, _))) = self.targets.get(target as usize) else {
            tickets.clear();
            return;
        };
        let unit = self.unit;
        for (i, t) in tickets.drain(..).enumerate() {
            let e = st.map.end_read(t);
            if !ok {
                continue;
            }
            let off = offset + (i * unit) as u64;
            let u = &buf[i * unit..(i + 1) * unit];
            st.check_unit(&mut self.counts, u, t.unit, off, &e, uri);
        }
    }

    /// Flushes journals at the end of a run.
    pub fn finish(&mut self) -> std::io::Result<()> {
        for (_, jw) in self.targets.iter_mut().flatten() {
            if let Some(j) = jw.as_mut() {
                j.flush()?;
            }
        }
        Ok(())
    }
}

/// Adds one unit's check to the counts.
pub fn record(
    c: &mut VerifyResult,
    r: Result<Verified, crate::data::Mismatch>,
    uri: &str,
    offset: u64,
) {
    c.units_checked += 1;
    match r {
        Ok(Verified::Ok) => c.ok += 1,
        Ok(Verified::Torn) => c.torn += 1,
        Ok(Verified::Absent) | Ok(Verified::Untracked) => c.untracked += 1,
        Err(m) => {
            c.mismatches += 1;
            match m.kind {
                MismatchKind::Corrupted => c.corrupted += 1,
                MismatchKind::Misplaced => c.misplaced += 1,
                MismatchKind::Stale => c.stale += 1,
                MismatchKind::NeverWritten => c.never_written += 1,
                MismatchKind::Unexpected => c.unexpected += 1,
            }
            if c.samples.len() < MAX_SAMPLES {
                c.samples.push(VerifySample {
                    kind: m.kind.name().to_string(),
                    target: uri.to_string(),
                    offset,
                    detail: m.to_string(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::KeyMap;

    // Regression: a multipath write re-issued after a timeout whose first copy landed
    // after a newer write was reported as a stale (lost) write.
    #[test]
    fn a_late_copy_of_a_reissued_write_is_accepted_and_counted() {
        const UNIT: usize = 4096;
        let st = TargetState {
            map: Arc::new(KeyMap::new(4)),
            journal: None,
            id: 7,
            reissued: Arc::default(),
        };
        // Unit 1 gets key 1 (the re-issued write), then key 2; the disk holds key 1.
        let (mut old, mut new) = (vec![0u8; UNIT], vec![0u8; UNIT]);
        let t1 = st.map.begin_write(1);
        stamp(&mut old, st.id, UNIT as u64, 0, t1.key);
        st.map.end_write(t1, true);
        let t2 = st.map.begin_write(1);
        stamp(&mut new, st.id, UNIT as u64, 0, t2.key);
        st.map.end_write(t2, true);
        let e = st.map.expect_at_rest(1);
        let mut v = VerifyResult::default();
        st.check_unit(&mut v, &old, 1, UNIT as u64, &e, "nbd://x");
        assert_eq!((v.mismatches, v.stale), (1, 1), "{v:?}");
        st.reissued.add(1, t1.key);
        let mut v = VerifyResult::default();
        st.check_unit(&mut v, &old, 1, UNIT as u64, &e, "nbd://x");
        st.check_unit(&mut v, &new, 1, UNIT as u64, &e, "nbd://x");
        assert_eq!((v.mismatches, v.ok, v.reissued_copies), (0, 2, 1), "{v:?}");
        // Damage is still damage.
        old[100] ^= 1;
        st.check_unit(&mut v, &old, 1, UNIT as u64, &e, "nbd://x");
        assert_eq!(v.corrupted, 1, "{v:?}");
    }
}
