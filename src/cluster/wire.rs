//! What ranks send rank 0 during a multi-rank (MPI) run, as bytes: one report per
//! closed interval (counters and the histograms themselves, in the project's own
//! bucket layout, so rank 0 merges them exactly), one summary per run (per-workload
//! counters and histograms, CPU, environment) and one closing message per run.
//! Hand-written little-endian framing (with small JSON parts for rare lists and the
//! per-run extras): no schema crate, and a decoder that refuses short or malformed
//! input instead of panicking.

use crate::result::paths::{IntervalPath, PathResult};
use crate::result::{ConnectionResult, Cpu, IntervalConnection, RunEvent};
use crate::stats::histogram::LatencyHistogram;
use crate::stats::snapshot::{DirStats, OpStats};
use serde::{Deserialize, Serialize};

/// Message kinds, the first byte of every message.
const KIND_INTERVAL: u8 = 1;
const KIND_DONE: u8 = 2;
const KIND_SUMMARY: u8 = 3;

/// An interval's lists (per connection, per multipath path, events): rare and small,
/// so they travel as JSON inside the binary report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalLists {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<IntervalConnection>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<IntervalPath>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<RunEvent>,
}

impl IntervalLists {
    fn is_empty(&self) -> bool {
        self.connections.is_empty() && self.paths.is_empty() && self.events.is_empty()
    }
}

/// One workload's measured counters on a rank, histograms included.
#[derive(Debug, Clone, Default)]
pub struct WorkloadOps {
    pub name: String,
    pub target: String,
    pub ops: DirStats,
}

/// What a rank measured over a whole run besides its intervals: CPU, environment,
/// engine, connections, paths and events, as JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankExtras {
    pub cpu: Cpu,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<serde_json::Value>,
    pub engine: String,
    /// The rank's targets as its result names them (`runs[].target`).
    #[serde(default)]
    pub target: String,
    #[serde(default)]
    pub connections: Vec<ConnectionResult>,
    #[serde(default)]
    pub paths: Vec<PathResult>,
    #[serde(default)]
    pub events: Vec<RunEvent>,
}

/// A rank's whole-run figures, sent once right before its [`Done`].
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub rank: u32,
    pub workloads: Vec<WorkloadOps>,
    pub extras: RankExtras,
}

/// One rank's share of one interval.
#[derive(Debug, Clone, Default)]
pub struct RankReport {
    pub rank: u32,
    /// Interval index (warm-up intervals included), the same on every rank.
    pub index: u64,
    pub warmup: bool,
    /// Seconds from the shared clock origin to the end of this interval on the rank.
    pub t_s: f64,
    /// Read and write counters with their latency (and service-time) histograms.
    pub ops: DirStats,
    /// Open-loop issue lateness.
    pub lag: Option<LatencyHistogram>,
    /// The rank's own CPU figures over the interval.
    pub cpu: Cpu,
    /// Unix ns at which the rank's first worker started issuing (0 = not yet).
    pub first_io_unix_ns: u64,
    /// The rank's connections, paths and events of the interval.
    pub lists: IntervalLists,
}

/// A rank has finished its run: it sent `reports` interval reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Done {
    pub rank: u32,
    pub reports: u64,
    /// Seconds from the shared origin to the rank's last I/O completion (its end).
    pub end_s: f64,
    pub first_io_unix_ns: u64,
}

/// A decoded message.
#[derive(Debug, Clone)]
pub enum Message {
    Interval(Box<RankReport>),
    Done(Done),
    Summary(Box<Summary>),
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_f64(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_hist(out: &mut Vec<u8>, h: Option<&LatencyHistogram>) {
    match h {
        Some(h) => {
            out.push(1);
            h.to_wire(out);
        }
        None => out.push(0),
    }
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u64(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A JSON part (empty for `None`, read back as the type's default).
fn put_json<T: Serialize>(out: &mut Vec<u8>, v: Option<&T>) {
    let bytes = v
        .and_then(|v| serde_json::to_vec(v).ok())
        .unwrap_or_default();
    put_bytes(out, &bytes);
}

fn put_ops(out: &mut Vec<u8>, o: &OpStats) {
    put_u64(out, o.ios);
    put_u64(out, o.bytes);
    put_u64(out, o.errors);
    put_u64(out, o.skipped);
    put_hist(out, Some(&o.lat));
    put_hist(out, o.svc.as_ref());
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn bytes<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.bytes::<1>().map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.bytes().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.bytes().map(u64::from_le_bytes)
    }
    fn f64(&mut self) -> Option<f64> {
        self.bytes().map(f64::from_le_bytes)
    }
    fn bytes_vec(&mut self) -> Option<&[u8]> {
        let n = usize::try_from(self.u64()?).ok()?;
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn text(&mut self) -> Option<String> {
        String::from_utf8(self.bytes_vec()?.to_vec()).ok()
    }
    fn json<T: serde::de::DeserializeOwned + Default>(&mut self) -> Option<T> {
        match self.bytes_vec()? {
            [] => Some(T::default()),
            b => serde_json::from_slice(b).ok(),
        }
    }
    fn ops(&mut self) -> Option<OpStats> {
        let mut o = OpStats {
            ios: self.u64()?,
            bytes: self.u64()?,
            errors: self.u64()?,
            skipped: self.u64()?,
            ..Default::default()
        };
        o.lat = self.hist()??;
        o.svc = self.hist()?;
        Some(o)
    }
    fn hist(&mut self) -> Option<Option<LatencyHistogram>> {
        match self.u8()? {
            0 => Some(None),
            1 => LatencyHistogram::from_wire(&mut self.0).map(Some),
            _ => None,
        }
    }
}

impl RankReport {
    /// The report as one message.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![KIND_INTERVAL];
        out.extend_from_slice(&self.rank.to_le_bytes());
        put_u64(&mut out, self.index);
        out.push(self.warmup as u8);
        put_f64(&mut out, self.t_s);
        for o in &self.ops {
            put_ops(&mut out, o);
        }
        put_hist(&mut out, self.lag.as_ref());
        put_f64(&mut out, self.cpu.user_pct);
        put_f64(&mut out, self.cpu.sys_pct);
        put_f64(&mut out, self.cpu.system_pct);
        put_f64(&mut out, self.cpu.cpu_us_per_io);
        out.extend_from_slice(&self.cpu.online_cpus.unwrap_or(0).to_le_bytes());
        put_u64(&mut out, self.first_io_unix_ns);
        // Most intervals have no lists: an empty part rather than "{}".
        put_json(&mut out, (!self.lists.is_empty()).then_some(&self.lists));
        out
    }

    fn decode(r: &mut Reader) -> Option<Self> {
        let rank = r.u32()?;
        let index = r.u64()?;
        let warmup = r.u8()? != 0;
        let t_s = r.f64()?;
        let ops = [r.ops()?, r.ops()?, r.ops()?];
        let lag = r.hist()?;
        let cpu = Cpu {
            user_pct: r.f64()?,
            sys_pct: r.f64()?,
            system_pct: r.f64()?,
            cpu_us_per_io: r.f64()?,
            online_cpus: Some(r.u32()?).filter(|&n| n > 0),
        };
        let first_io_unix_ns = r.u64()?;
        let lists = r.json()?;
        Some(RankReport {
            rank,
            index,
            warmup,
            t_s,
            ops,
            lag,
            cpu,
            first_io_unix_ns,
            lists,
        })
    }
}

impl Summary {
    /// The summary as one message.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![KIND_SUMMARY];
        out.extend_from_slice(&self.rank.to_le_bytes());
        put_u64(&mut out, self.workloads.len() as u64);
        for w in &self.workloads {
            put_bytes(&mut out, w.name.as_bytes());
            put_bytes(&mut out, w.target.as_bytes());
            for o in &w.ops {
                put_ops(&mut out, o);
            }
        }
        put_json(&mut out, Some(&self.extras));
        out
    }

    fn decode(r: &mut Reader) -> Option<Self> {
        let rank = r.u32()?;
        let n = r.u64()?;
        let mut workloads = Vec::new();
        for _ in 0..n {
            workloads.push(WorkloadOps {
                name: r.text()?,
                target: r.text()?,
                ops: [r.ops()?, r.ops()?, r.ops()?],
            });
        }
        let extras = r.json()?;
        Some(Summary {
            rank,
            workloads,
            extras,
        })
    }
}

impl Done {
    /// The closing message.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![KIND_DONE];
        out.extend_from_slice(&self.rank.to_le_bytes());
        put_u64(&mut out, self.reports);
        put_f64(&mut out, self.end_s);
        put_u64(&mut out, self.first_io_unix_ns);
        out
    }
}

impl Message {
    /// Decodes one message; `None` when the bytes are not one whole message.
    pub fn decode(bytes: &[u8]) -> Option<Message> {
        let mut r = Reader(bytes);
        let msg = match r.u8()? {
            KIND_INTERVAL => Message::Interval(Box::new(RankReport::decode(&mut r)?)),
            KIND_SUMMARY => Message::Summary(Box::new(Summary::decode(&mut r)?)),
            KIND_DONE => Message::Done(Done {
                rank: r.u32()?,
                reports: r.u64()?,
                end_s: r.f64()?,
                first_io_unix_ns: r.u64()?,
            }),
            _ => return None,
        };
        r.0.is_empty().then_some(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_round_trip() {
        let mut rep = RankReport {
            rank: 3,
            index: 7,
            warmup: true,
            t_s: 8.0,
            first_io_unix_ns: 1_700_000_000_123_456_789,
            ..Default::default()
        };
        rep.ops[0] = OpStats::new(true);
        for v in [100, 2_000, 30_000] {
            rep.ops[0].lat.record(v);
            rep.ops[0].svc.as_mut().unwrap().record(v / 2);
        }
        rep.ops[0].ios = 3;
        rep.ops[0].bytes = 3 * 4096;
        rep.ops[1].errors = 1;
        rep.ops[1].skipped = 2;
        rep.cpu.user_pct = 12.5;
        rep.cpu.online_cpus = Some(2);
        let bytes = rep.encode();
        let Some(Message::Interval(back)) = Message::decode(&bytes) else {
            panic!("not an interval report");
        };
        assert_eq!((back.rank, back.index, back.warmup), (3, 7, true));
        assert_eq!(back.t_s, 8.0);
        assert_eq!(back.first_io_unix_ns, rep.first_io_unix_ns);
        assert_eq!(back.ops[0].ios, 3);
        assert_eq!(back.ops[0].bytes, 3 * 4096);
        assert_eq!(back.ops[1].errors, 1);
        assert_eq!(back.ops[1].skipped, 2);
        assert_eq!(back.ops[0].lat.count(), 3);
        assert_eq!(back.ops[0].svc.as_ref().unwrap().max_ns(), 15_000);
        assert!(back.ops[1].svc.is_none() && back.lag.is_none());
        assert_eq!(back.cpu, rep.cpu);
        // Truncated or padded input is refused, never a panic.
        assert!(Message::decode(&bytes[..bytes.len() - 1]).is_none());
        let mut long = bytes.clone();
        long.push(0);
        assert!(Message::decode(&long).is_none());
        assert!(Message::decode(&[]).is_none());
    }

    #[test]
    fn summary_and_interval_lists_round_trip() {
        let mut w = WorkloadOps {
            name: "wd1/sd2".into(),
            target: "sd2".into(),
            ..Default::default()
        };
        w.ops[1] = OpStats::new(false);
        w.ops[1].lat.record(5_000);
        w.ops[1].ios = 1;
        let sum = Summary {
            rank: 2,
            workloads: vec![w],
            extras: RankExtras {
                engine: "uring".into(),
                env: Some(serde_json::json!({"host": {"hostname": "n2"}})),
                events: vec![RunEvent {
                    kind: "down".into(),
                    ..Default::default()
                }],
                ..Default::default()
            },
        };
        let bytes = sum.encode();
        let Some(Message::Summary(back)) = Message::decode(&bytes) else {
            panic!("not a summary");
        };
        assert_eq!(back.rank, 2);
        assert_eq!(back.workloads[0].name, "wd1/sd2");
        assert_eq!(back.workloads[0].ops[1].lat.max_ns(), 5_000);
        assert_eq!(back.extras, sum.extras);
        assert!(Message::decode(&bytes[..bytes.len() - 3]).is_none());
        let rep = RankReport {
            lists: IntervalLists {
                connections: vec![IntervalConnection { ios: 7 }],
                ..Default::default()
            },
            ..Default::default()
        };
        match Message::decode(&rep.encode()) {
            Some(Message::Interval(back)) => assert_eq!(back.lists, rep.lists),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn done_round_trip() {
        let d = Done {
            rank: 1,
            reports: 5,
            end_s: 5.01,
            first_io_unix_ns: 42,
        };
        match Message::decode(&d.encode()) {
            Some(Message::Done(back)) => assert_eq!(back, d),
            other => panic!("{other:?}"),
        }
    }
}
