//! What every format's reader fills: devices by name with their I/Os at the
//! trace's own times (in ns, not yet rebased), the earliest time seen, and the
//! skipped counts. [`Collector::finish`] sorts each device by time (stably: file and
//! record order break ties), rebases times to the earliest record, and works out
//! each device's extent and, where completions were recorded, its concurrency.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use super::{SkipKind, Skipped, Trace, TraceDevice, TraceFormat, TraceIo};
use crate::vocab::Op;

/// One I/O as a reader found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct RawIo {
    /// The trace's own clock, in ns.
    pub t_ns: u64,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    /// When it completed, on the same clock, if the trace says.
    pub done_ns: Option<u64>,
}

#[derive(Debug, Default)]
struct RawDevice {
    name: String,
    ios: Vec<RawIo>,
    /// The trace records completions for this device: its concurrency is known.
    completions: bool,
}

#[derive(Debug, Default)]
pub(super) struct Collector {
    devices: Vec<RawDevice>,
    by_name: HashMap<String, usize>,
    earliest_ns: Option<u64>,
    /// fio version 2: a `wait` line gave times.
    waited: bool,
    skipped: Skipped,
}

impl Collector {
    /// The device's index, added on first mention.
    pub fn device(&mut self, name: &str) -> usize {
        if let Some(&i) = self.by_name.get(name) {
            return i;
        }
        let i = self.devices.len();
        self.devices.push(RawDevice {
            name: name.to_string(),
            ..RawDevice::default()
        });
        self.by_name.insert(name.to_string(), i);
        i
    }

    /// A timed record of any kind: the trace's times start at the earliest.
    pub fn saw(&mut self, t_ns: u64) {
        self.earliest_ns = Some(self.earliest_ns.map_or(t_ns, |e| e.min(t_ns)));
    }

    pub fn skip(&mut self, kind: SkipKind) {
        self.skipped.add(kind);
    }

    pub fn waited(&mut self) {
        self.waited = true;
    }

    /// Adds an I/O to device `dev` (from [`Collector::device`]); returns its index
    /// there, for [`Collector::complete`].
    pub fn push(&mut self, dev: usize, io: RawIo) -> usize {
        self.saw(io.t_ns);
        match self.devices.get_mut(dev) {
            Some(d) => {
                d.ios.push(io);
                d.ios.len() - 1
            }
            None => 0,
        }
    }

    /// The trace records completions on device `dev`.
    pub fn has_completions(&mut self, dev: usize) {
        if let Some(d) = self.devices.get_mut(dev) {
            d.completions = true;
        }
    }

    /// I/O `io` of device `dev` completed at `done_ns`.
    pub fn complete(&mut self, dev: usize, io: usize, done_ns: u64) {
        if let Some(x) = self.devices.get_mut(dev).and_then(|d| d.ios.get_mut(io)) {
            x.done_ns = Some(done_ns);
        }
    }

    /// The trace, or why there is none (no replayable I/O).
    pub fn finish(self, format: TraceFormat) -> Result<Trace, String> {
        let earliest = self.earliest_ns.unwrap_or(0);
        let devices: Vec<TraceDevice> = self
            .devices
            .into_iter()
            .filter(|d| !d.ios.is_empty())
            .map(|d| finish_device(d, earliest))
            .collect();
        if devices.is_empty() {
            return Err(format!(
                "no replayable I/O in the trace (skipped: {})",
                self.skipped
            ));
        }
        let timed = format != TraceFormat::FioV2 || self.waited;
        Ok(Trace {
            format,
            timed,
            devices,
            skipped: self.skipped,
        })
    }
}

fn finish_device(mut d: RawDevice, earliest_ns: u64) -> TraceDevice {
    d.ios.sort_by_key(|io| io.t_ns); // stable
    let concurrency = d.completions.then(|| max_in_flight(&d.ios));
    let extent_bytes = d
        .ios
        .iter()
        .map(|io| io.offset.saturating_add(u64::from(io.len)))
        .max()
        .unwrap_or(0);
    let ios = d
        .ios
        .iter()
        .map(|io| TraceIo {
            t_ns: io.t_ns.saturating_sub(earliest_ns),
            op: io.op,
            offset: io.offset,
            len: io.len,
        })
        .collect();
    TraceDevice {
        name: d.name,
        ios,
        extent_bytes,
        concurrency,
    }
}

/// The most I/Os in flight at once, over I/Os sorted by start: one that completes
/// when (or before) another starts does not overlap it; one without a completion
/// stays in flight to the end.
fn max_in_flight(ios: &[RawIo]) -> u32 {
    let mut ends: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let mut most = 0usize;
    for io in ios {
        while ends.peek().is_some_and(|Reverse(e)| *e <= io.t_ns) {
            ends.pop();
        }
        ends.push(Reverse(io.done_ns.unwrap_or(u64::MAX).max(io.t_ns)));
        most = most.max(ends.len());
    }
    u32::try_from(most).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(t_ns: u64, done_ns: Option<u64>) -> RawIo {
        RawIo {
            t_ns,
            op: Op::Read,
            offset: 0,
            len: 512,
            done_ns,
        }
    }

    #[test]
    fn in_flight_counts_overlaps_only() {
        // [0,10) [5,15) [10,20) [10,10]: at 10 the first is done, three overlap.
        let ios = [
            io(0, Some(10)),
            io(5, Some(15)),
            io(10, Some(20)),
            io(10, Some(10)),
        ];
        assert_eq!(max_in_flight(&ios), 3);
        assert_eq!(max_in_flight(&[io(0, Some(1)), io(1, Some(2))]), 1);
        assert_eq!(max_in_flight(&[io(0, None), io(100, Some(101))]), 2);
        assert_eq!(max_in_flight(&[]), 0);
    }

    #[test]
    fn finish_sorts_stably_and_rebases() {
        let mut c = Collector::default();
        c.saw(1_000);
        let d = c.device("d");
        for (t, off) in [(3_000, 1), (2_000, 2), (3_000, 3)] {
            c.push(
                d,
                RawIo {
                    offset: off,
                    ..io(t, None)
                },
            );
        }
        let empty = c.device("empty");
        assert_eq!(empty, 1);
        let t = c.finish(TraceFormat::Csv).unwrap();
        assert_eq!(t.devices.len(), 1, "a device without I/O is left out");
        let got: Vec<(u64, u64)> = t.devices[0]
            .ios
            .iter()
            .map(|i| (i.t_ns, i.offset))
            .collect();
        assert_eq!(got, [(1_000, 2), (2_000, 1), (2_000, 3)]);
        assert_eq!(t.devices[0].extent_bytes, 515);
        assert_eq!(t.devices[0].concurrency, None);
    }

    #[test]
    fn nothing_to_replay_is_an_error() {
        let mut c = Collector::default();
        c.skip(SkipKind::Sync);
        let e = c.finish(TraceFormat::FioV3).unwrap_err();
        assert_eq!(e, "no replayable I/O in the trace (skipped: sync 1)");
    }
}
