//! Extension points of the run core. The optional behaviour fio users bring —
//! emulated zones (`zonemode=zbd`), SPRandom preconditioning, flow control, read-backs
//! during the run (`verify_backlog`) and the operation engines — plugs in here, and
//! the set-up, the launch, the stream and the worker call these hooks without naming
//! any of it:
//!
//! - before the run, each feature's [`Extension`] checks the plan, the workloads, the
//!   engine against its targets and the working sets ([`EXTENSIONS`] lists them);
//! - a workload's shape carries [`ShapeExtras`] and each stream [`StreamExtras`],
//!   built here from the plan ([`shape_extras`], [`StreamExtras::of`]);
//! - on the full path (never the plain one, `Stream::mark_plain`) the stream asks
//!   [`StreamExtras`] for the I/O's direction, its own offset and where the I/O is
//!   placed, and the worker asks whether the stream is held, whether a read-back is
//!   due and what to remember of a completed write.
//!
//! A new optional feature is a module of its own, a descriptor in [`EXTENSIONS`] and
//! its state and calls in the two bundles; nothing in `setup`, `launch`, `stream` or
//! `worker` changes. The trade: the per-I/O hooks are plain methods on the two
//! bundles, not trait objects, so a stream that uses none of them pays one test and
//! one that does pays no indirect call.

use super::backlog::Backlog;
use super::flow::FlowShare;
use super::resolved::Resolved;
use super::sprandom::{Layout, SprandomOrder};
use super::zbd::{Placed, ZbdUse};
use super::RunError;
use crate::plan::model::{Op, RunSpec, Workload};

pub(super) mod checks;
pub use checks::Extension;

/// A completed write a stream keeps to read back during the run.
pub use super::backlog::Written as ReadBack;

/// The optional features, each checked in this order.
pub(super) const EXTENSIONS: [&Extension; 3] = [
    &super::zbd::EXTENSION,
    &super::sprandom::EXTENSION,
    &super::op_engines::EXTENSION,
];

/// The first refusal of any feature's hook `check`.
pub(super) fn check_each(
    check: impl Fn(&Extension) -> Result<(), RunError>,
) -> Result<(), RunError> {
    EXTENSIONS.iter().try_for_each(|x| check(x))
}

/// The first reason any feature gives through `misfit`.
pub(super) fn first_misfit(misfit: impl Fn(&Extension) -> Option<String>) -> Option<String> {
    EXTENSIONS.iter().find_map(|x| misfit(x))
}

/// The working set of `w` after every feature has narrowed it (or refused it).
pub(super) fn working_set(
    run: &RunSpec,
    w: &Workload,
    uri: &str,
    ws_len: u64,
) -> Result<u64, RunError> {
    EXTENSIONS
        .iter()
        .try_fold(ws_len, |len, x| (x.working_set)(run, w, uri, len))
}

/// Whether some feature chooses `w`'s offsets itself.
pub(super) fn places_offsets(w: &Workload) -> bool {
    EXTENSIONS.iter().any(|x| (x.places_offsets)(w))
}

/// Whether a stream of `w` ends by itself rather than by its byte budget.
pub(super) fn ends_by_itself(w: &Workload) -> bool {
    EXTENSIONS.iter().any(|x| (x.ends_streams)(w))
}

/// What a workload's shape carries for the optional features.
#[derive(Debug, Clone, Default)]
pub struct ShapeExtras {
    /// fio's `zonemode=zbd`: the workload's use of its target's zone table.
    pub zbd: Option<ZbdUse>,
    /// fio's flow control: the workload's share of its flow group.
    pub flow: Option<FlowShare>,
}

impl ShapeExtras {
    /// Whether a feature moves or redirects the shape's I/Os (the shape is then
    /// not plain).
    pub fn places_io(&self) -> bool {
        self.zbd.is_some()
    }
}

/// Each workload's extras: its use of its target's zone table (the workloads of a
/// target share one) and its share of its flow group. `targets`: the run's targets'
/// (uri, size in bytes), as `resolved` indexes them.
pub(super) fn shape_extras(
    run: &RunSpec,
    resolved: &[Resolved],
    targets: &[(String, u64)],
) -> Result<Vec<ShapeExtras>, RunError> {
    let zbd = super::zbd::tables(run, resolved, targets, &super::zbd::REGISTRY)?;
    Ok(zbd
        .into_iter()
        .zip(super::flow::shares(&run.workloads))
        .map(|(zbd, flow)| ShapeExtras { zbd, flow })
        .collect())
}

/// Writes what the features counted into the result (zone resets).
pub(super) fn finish(result: &mut crate::result::RunResult, run: &RunSpec, shapes: &[ShapeExtras]) {
    let zbd: Vec<Option<ZbdUse>> = shapes.iter().map(|s| s.zbd.clone()).collect();
    super::zbd::count_resets(result, run, &zbd);
}

/// A stream's state for the optional features of its workload.
#[derive(Debug, Clone, Default)]
pub struct StreamExtras {
    /// Flow control: I/Os issued in the flow group; `None` once the stream has left
    /// it (or never had one).
    flow_issued: Option<u64>,
    /// Held by flow control until its hold is over (one hold at a time).
    flow_held: bool,
    /// `verify_backlog`: its completed writes to read back during the run.
    backlog: Option<Box<Backlog>>,
    /// SPRandom preconditioning: the order of its writes, which ends the stream.
    sprandom: Option<Box<SprandomOrder>>,
    /// Zoned workloads: whether the stream has issued a write (a mixed stream's first
    /// I/O is a write until then, as fio's `zbd_adjust_ddir` makes it).
    zbd_wrote: bool,
}

impl StreamExtras {
    /// A stream of `w` on its resolved working set; `open_loop` streams read nothing
    /// back (a read-back would break their schedule).
    pub(super) fn of(w: &Workload, r: &Resolved, seed: u64, open_loop: bool) -> Self {
        StreamExtras {
            flow_issued: w.flow.map(|_| 0),
            flow_held: false,
            backlog: match (w.overrides.data.verify_backlog, open_loop) {
                (Some(b), false) => Some(Box::new(Backlog::new(b))),
                _ => None,
            },
            // Its layout was checked with the working set before the run.
            sprandom: w.sprandom.and_then(|spec| {
                let layout = Layout::new(&spec, r.ws_len, w.bs.max_bytes()).ok()?;
                Some(Box::new(SprandomOrder::new(layout, seed)))
            }),
            zbd_wrote: false,
        }
    }

    /// None of the features has state in this stream (it may be plain).
    pub fn none(&self) -> bool {
        self.flow_issued.is_none() && self.backlog.is_none() && self.sprandom.is_none()
    }

    /// Held back by a feature until the worker releases it.
    #[inline(always)]
    pub fn held(&self) -> bool {
        self.flow_held
    }

    /// Its hold is over.
    #[inline(always)]
    pub fn release(&mut self) {
        self.flow_held = false;
    }

    /// `None` when the stream may issue now, else how long it is held (flow
    /// control: ahead of its share of the group).
    #[inline]
    pub fn hold(&mut self, shape: &ShapeExtras) -> Option<u64> {
        let (Some(f), Some(own)) = (&shape.flow, self.flow_issued) else {
            return None;
        };
        if f.may_issue(own) {
            return None;
        }
        self.flow_held = true;
        Some(f.hold_ns)
    }

    /// The stream issued one I/O.
    #[inline]
    pub fn issued(&mut self, shape: &ShapeExtras) {
        if let (Some(f), Some(own)) = (&shape.flow, self.flow_issued.as_mut()) {
            f.count();
            *own += 1;
        }
    }

    /// The stream issues no more: it leaves its flow group (once), so the group's
    /// other streams are measured against those still running, as fio's exiting
    /// jobs do.
    pub fn leave(&mut self, shape: &ShapeExtras) {
        if let (Some(f), Some(own)) = (&shape.flow, self.flow_issued.take()) {
            f.leave(own);
        }
    }

    /// Whether a read-back of its own writes is due before its next I/O.
    #[inline(always)]
    pub fn read_back_due(&self) -> bool {
        self.backlog.as_ref().is_some_and(|b| b.pending())
    }

    /// The next write to read back.
    pub fn next_read_back(&mut self) -> Option<ReadBack> {
        self.backlog.as_mut()?.next_read()
    }

    /// Whether it keeps its completed writes to read back.
    #[inline(always)]
    pub fn keeps_writes(&self) -> bool {
        self.backlog.is_some()
    }

    /// A write of the stream completed whole.
    pub fn written(&mut self, w: ReadBack) {
        if let Some(b) = self.backlog.as_mut() {
            b.written(w);
        }
    }

    /// The direction of the stream's next I/O, drawn as `op`: a zoned mixed
    /// workload's read before the stream's first write becomes a write (nothing is
    /// written yet to read), unless reads may pass the write pointer.
    #[inline]
    pub fn direction(&self, shape: &ShapeExtras, op: Op, read_pct: u8) -> Op {
        match &shape.zbd {
            Some(z) if op == Op::Read && !self.zbd_wrote && read_pct < 100 && !z.read_beyond_wp => {
                Op::Write
            }
            _ => op,
        }
    }

    /// `None` when the stream draws its own offsets; else the block (in offset
    /// units from the working set's start) a feature chose, or `Some(None)` when its
    /// order is over and the stream is done (SPRandom).
    #[inline]
    pub fn own_block(&mut self) -> Option<Option<u64>> {
        self.sprandom.as_mut().map(|o| o.next_block())
    }

    /// Where the I/O drawn at `offset` goes: moved by the zone table, or `None`
    /// when nothing fits and the stream's I/O is over (fio's end of file).
    #[inline]
    pub fn place(
        &mut self,
        shape: &ShapeExtras,
        io: (Op, u64, u32),
        stream_id: u32,
    ) -> Option<(u64, u32)> {
        let (op, offset, len) = io;
        let Some(z) = &shape.zbd else {
            return Some((offset, len));
        };
        match z.place(op, offset, len, stream_id) {
            Placed::Io { offset, len } => {
                self.zbd_wrote |= op == Op::Write;
                Some((offset, len))
            }
            Placed::Eof => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::{BlockSizes, Flow, Sprandom, Zbd};
    use crate::plan::overrides::VerifyBacklog;

    fn resolved() -> Resolved {
        Resolved {
            target: 0,
            ws_start: 0,
            ws_len: 16 << 20,
            file_bytes: 0,
            file_lens: None,
        }
    }

    /// Whether streams of `w` (closed or open loop) carry a feature's state, and its
    /// shape places I/Os: what keeps the plain path for workloads without them.
    fn carried(w: Workload, open_loop: bool) -> (bool, bool) {
        let run = RunSpec {
            workloads: vec![w.clone()],
            ..Default::default()
        };
        let targets = [("t".to_string(), 16 << 20)];
        let shapes = shape_extras(&run, &[resolved()], &targets).unwrap();
        let stream = StreamExtras::of(&w, &resolved(), 7, open_loop);
        (!stream.none(), shapes[0].places_io())
    }

    #[test]
    fn only_the_workloads_that_use_a_feature_leave_the_plain_path() {
        let plain = Workload::default();
        assert_eq!(carried(plain.clone(), false), (false, false));
        let flow = Workload {
            flow: Some(Flow {
                id: 1,
                weight: 1,
                sleep_ns: 0,
            }),
            ..plain.clone()
        };
        assert_eq!(carried(flow, false), (true, false));
        let mut backlog = plain.clone();
        backlog.overrides.data.verify_backlog = Some(VerifyBacklog {
            every_writes: 4,
            batch_reads: 4,
        });
        assert_eq!(carried(backlog.clone(), false), (true, false));
        // An open-loop stream reads nothing back: its schedule is its load.
        assert_eq!(carried(backlog, true), (false, false));
        let sprandom = Workload {
            read_pct: 0,
            sprandom: Some(Sprandom::default()),
            ..plain.clone()
        };
        assert_eq!(carried(sprandom, false), (true, false));
        let zoned = Workload {
            bs: BlockSizes::fixed(64 << 10),
            zbd: Some(Zbd::of_size(1 << 20)),
            ..plain
        };
        assert_eq!(carried(zoned, false), (false, true));
    }

    #[test]
    fn a_zoned_mixed_stream_writes_before_it_reads() {
        let w = Workload {
            read_pct: 50,
            zbd: Some(Zbd::of_size(1 << 20)),
            ..Workload::default()
        };
        let run = RunSpec {
            workloads: vec![w.clone()],
            ..Default::default()
        };
        let targets = [("t".to_string(), 16 << 20)];
        let shapes = shape_extras(&run, &[resolved()], &targets).unwrap();
        let mut s = StreamExtras::of(&w, &resolved(), 7, false);
        assert_eq!(s.direction(&shapes[0], Op::Read, 50), Op::Write);
        let placed = s.place(&shapes[0], (Op::Write, 0, 4096), 0);
        assert_eq!(placed, Some((0, 4096)));
        assert_eq!(s.direction(&shapes[0], Op::Read, 50), Op::Read);
    }
}
