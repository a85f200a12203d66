//! The workload echo: the effective settings of a run's workload as the result file
//! publishes them (`runs[].workload`). The echo is a wire type of its own, apart from
//! the plan's internal `Workload`: the run layer fills it (`crate::run::echo`), so a
//! new plan setting cannot silently change the published schema — it fails to compile
//! at that conversion instead. Its value types (pattern, sizes, rate, pauses, zones,
//! priorities) are the `vocab` ones the plan uses: one declaration each.
//!
//! The wire format is the one ioscope has always written (docs/result-schema.md),
//! and reading is lenient: every field has a default, unknown fields are ignored and
//! a block size may be a bare number, so older and hand-written results still load.
//! The trade-off: a missing field reads as the plan default (4 KiB random reads at
//! QD 1 × 1 stream), not as "unknown".

use crate::vocab::skip::{is_false, is_zero, is_zero_i64};
use crate::vocab::Zbd;
use serde::{Deserialize, Serialize};

pub use crate::vocab::{
    AccessPattern, Arrival, BlockSizes, Distribution, Flow, Pauses, Priorities, Rate, SeqLayout,
    Sprandom, TrimMode, Zone, ZoneBytes, Zones,
};

/// The settings a run echoes: a storage workload, or a network test's settings
/// (`ioscope net`, a run of kind `net`). On the wire the two are told apart by the
/// network settings' required `mode`, which no storage workload has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
// A result holds one per run and workload: the size of a storage echo costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum RunWorkload {
    Net(NetWorkloadEcho),
    Storage(WorkloadEcho),
}

impl Default for RunWorkload {
    fn default() -> Self {
        RunWorkload::Storage(WorkloadEcho::default())
    }
}

impl From<WorkloadEcho> for RunWorkload {
    fn from(w: WorkloadEcho) -> Self {
        RunWorkload::Storage(w)
    }
}

impl RunWorkload {
    /// The storage workload, unless this was a network run.
    pub fn storage(&self) -> Option<&WorkloadEcho> {
        match self {
            RunWorkload::Storage(w) => Some(w),
            RunWorkload::Net(_) => None,
        }
    }

    /// Mutable access to the storage workload (for building results in tests).
    pub fn storage_mut(&mut self) -> Option<&mut WorkloadEcho> {
        match self {
            RunWorkload::Storage(w) => Some(w),
            RunWorkload::Net(_) => None,
        }
    }

    /// The network settings, for a network run.
    pub fn net(&self) -> Option<&NetWorkloadEcho> {
        match self {
            RunWorkload::Net(n) => Some(n),
            RunWorkload::Storage(_) => None,
        }
    }
}

/// The settings of a network test (`ioscope net`), as its result echoes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetWorkloadEcho {
    pub mode: NetMode,
    /// TCP connections.
    pub streams: u32,
    /// Bytes per write (and the read buffer).
    pub bs: u32,
    /// SO_SNDBUF/SO_RCVBUF in bytes on both ends; null = the kernel's autotuning.
    pub window: Option<u32>,
    /// TCP_MAXSEG in bytes on the client's data sockets; null = the default.
    pub mss: Option<u32>,
    pub nodelay: bool,
    /// Sent with sendfile(2) instead of write(2).
    pub zerocopy: bool,
    /// Open loop: bits per second in all (streaming) or transactions per second in
    /// all (`rr`); null = as fast as possible.
    pub rate: Option<f64>,
    /// Request and response sizes of a request/response test.
    pub rr: Option<NetRrEcho>,
    /// CPUs the client's stream threads were pinned to.
    pub cpus: Option<Vec<usize>>,
    /// CPUs the server's stream threads were pinned to.
    pub remote_cpus: Option<Vec<usize>>,
}

/// What a network test moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetMode {
    /// This end sends.
    Send,
    /// The server sends.
    Reverse,
    /// Both send.
    Bidir,
    /// Request/response transactions.
    Rr,
    /// fio-style network jobs (`ioengine=net`): each job one end of a plain
    /// socket, per-job figures in `totals.streams` and the run's `workloads`.
    Jobs,
}

impl NetMode {
    pub fn name(self) -> &'static str {
        match self {
            NetMode::Send => "send",
            NetMode::Reverse => "reverse",
            NetMode::Bidir => "bidir",
            NetMode::Rr => "rr",
            NetMode::Jobs => "jobs",
        }
    }
}

/// Request and response sizes in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetRrEcho {
    pub req: u32,
    pub resp: u32,
}

/// The effective settings of one workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkloadEcho {
    pub name: String,
    /// Name of the target (in the plan) it used.
    pub target: String,
    /// Percentage of operations that are reads (0..=100).
    pub read_pct: u8,
    /// Trims (discards): absent = none.
    #[serde(skip_serializing_if = "TrimMode::is_none")]
    pub trim: TrimMode,
    pub pattern: AccessPattern,
    pub bs: BlockSizes,
    /// Operations in flight per stream.
    pub qd: u32,
    /// Independent I/O sequences.
    pub streams: u32,
    pub rate: Rate,
    /// Start of the working set within the target.
    pub offset_bytes: u64,
    /// Length of the working set; `null` = from `offset_bytes` to the target's end.
    pub size_bytes: Option<u64>,
    /// Spread of random offsets.
    pub dist: Distribution,
    /// Arrival process of an open-loop rate.
    pub arrival: Arrival,
    /// Share of the run's I/O, for workloads in a share mix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share_pct: Option<f64>,
    /// How several sequential streams divide the working set (written only when
    /// not the default `regions`).
    #[serde(skip_serializing_if = "SeqLayout::is_regions")]
    pub seq_layout: SeqLayout,
    /// Random offsets are multiples of this (fio's blockalign); absent = the smallest
    /// block size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align_bytes: Option<u64>,
    /// Sequential access: bytes added to the offset after each I/O (fio's
    /// `rw=read:N`; negative walks backwards); absent when 0.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub seq_gap_bytes: i64,
    /// fio's `offset_increment`: stream i's working set starts i × this further on;
    /// absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub offset_increment_bytes: u64,
    /// fio's strided zones: `io_bytes` of I/O per zone of `range_bytes`, then
    /// `skip_bytes` left out; absent when the workload has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zones: Option<Zones>,
    /// SPRandom preconditioning (fio's `sprandom`); absent when the workload's random
    /// writes are plain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprandom: Option<Sprandom>,
    /// fio's emulated zoned block device (`zonemode=zbd`); absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zbd: Option<ZbdEcho>,
    /// fio's flow control: the workload's flow id and weight; absent when free.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<Flow>,
    /// Pauses in issuing (fio's startdelay and thinktime); absent when none.
    #[serde(default, skip_serializing_if = "Pauses::is_none")]
    pub pauses: Pauses,
    /// I/O priorities: of all its I/O and of shares of it; absent when none was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priorities>,
    /// On a file set: how each I/O chose its file, in fio's words (`random`,
    /// `roundrobin:4`, `zipf:1.2`); absent for the default (`roundrobin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_service: Option<String>,
    /// The engine that issued this workload's I/O (each workload of a run may have
    /// its own); written in `runs[].workloads[].settings`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// This workload's own warm-up, ns after the run's I/O started: its I/O before
    /// then is not in its figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_ns: Option<u64>,
    /// CPUs this workload's workers were pinned to; absent = not pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
    /// The workers (by index: thread `ioscope-wN`) that ran this workload's streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<Vec<usize>>,
    /// What this workload's writes carried and whether its data was verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<DataEcho>,
    /// The workload's own error policy; absent: it followed the run's `--on-error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_error: Option<OnErrorEcho>,
    /// The periodic flushes of this workload's writes (its own or the run's); absent:
    /// it made none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flushes: Option<crate::vocab::io::Flushes>,
    /// The declared settings (the settings registry, `plan::settings`), every one
    /// under its own field name, whether given or by default (docs/job-file.md's
    /// settings table names the fields). Results older than a setting lack it.
    #[serde(flatten)]
    pub declared: serde_json::Map<String, serde_json::Value>,
}

/// A workload's own error policy as run: errors of the kinds in `continue` (read,
/// write, verify) were counted while the run went on, every other error of the
/// workload stopped it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OnErrorEcho {
    #[serde(rename = "continue", default)]
    pub continue_on: Vec<String>,
    /// With `read` continued, the errnos that alone continued (names such as
    /// "ENOSPC", or numbers as text); absent: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_errnos: Option<Vec<String>>,
    /// The same for `write` (writes, trims and flushes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_errnos: Option<Vec<String>>,
}

/// A workload's data settings as run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DataEcho {
    /// Writes stamped and reads checked.
    pub verify: bool,
    /// Its target read back after the run.
    pub verify_after: bool,
    /// Dedup ratio of its writes (1 = every unit unique).
    pub dedup_ratio: f64,
    /// Compression ratio of its writes (1 = incompressible).
    pub compress_ratio: f64,
    /// The fixed pattern its writes carried (`0x` and hex bytes; fio's
    /// `verify_pattern`); absent: generated content at the ratios above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// fio's `verify_backlog`: each stream, every this many completed writes, read
    /// `verify_backlog_batch` of them back during the run; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_backlog: Option<u32>,
    /// Blocks read back each time (with `verify_backlog`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_backlog_batch: Option<u32>,
}

/// Emulated zones as run (fio's `zonemode=zbd`; see `vocab::Zbd`): a summary of its
/// own, with each limit and the reset settings written only when they are in force.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ZbdEcho {
    pub zone_bytes: u64,
    pub capacity_bytes: u64,
    /// Zones written at once on the target; absent when unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_open: Option<u32>,
    /// Zones written at once by one stream; absent when unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_max_open: Option<u32>,
    /// Reset threshold and frequency; absent when writes never reset zones early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_threshold: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_frequency: Option<f64>,
    /// Reads went past the write pointers; absent when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub read_beyond_wp: bool,
}

impl From<&Zbd> for ZbdEcho {
    /// The plan's zones as the result shows them (limits and resets only when set).
    fn from(z: &Zbd) -> Self {
        ZbdEcho {
            zone_bytes: z.zone_bytes,
            capacity_bytes: z.capacity_bytes,
            max_open: (z.max_open > 0).then_some(z.max_open),
            stream_max_open: (z.stream_max_open > 0).then_some(z.stream_max_open),
            reset_threshold: (z.reset_frequency > 0.0).then_some(z.reset_threshold),
            reset_frequency: (z.reset_frequency > 0.0).then_some(z.reset_frequency),
            read_beyond_wp: z.read_beyond_wp,
        }
    }
}

impl Default for WorkloadEcho {
    /// The plan's default workload: 4 KiB random reads, QD 1 × 1 stream, at full speed.
    fn default() -> Self {
        WorkloadEcho {
            name: String::new(),
            target: String::new(),
            read_pct: 100,
            trim: TrimMode::None,
            pattern: AccessPattern::Random,
            bs: BlockSizes::fixed(4096),
            qd: 1,
            streams: 1,
            rate: Rate::Max,
            offset_bytes: 0,
            size_bytes: None,
            dist: Distribution::Uniform,
            arrival: Arrival::Exponential,
            share_pct: None,
            seq_layout: SeqLayout::Regions,
            align_bytes: None,
            seq_gap_bytes: 0,
            offset_increment_bytes: 0,
            zones: None,
            zbd: None,
            flow: None,
            priority: None,
            sprandom: None,
            file_service: None,
            pauses: Pauses::default(),
            declared: Default::default(),
            engine: None,
            warmup_ns: None,
            cpus: None,
            workers: None,
            data: None,
            on_error: None,
            flushes: None,
        }
    }
}

impl WorkloadEcho {
    /// fio's name for the pattern and mix: randread, randwrite, randrw, read, write
    /// or rw.
    pub fn rw(&self) -> &'static str {
        let random = self.pattern == AccessPattern::Random;
        match (self.trim, random) {
            (TrimMode::Only, false) => return "trim",
            (TrimMode::Only, true) => return "randtrim",
            (TrimMode::ThenWrite, false) => return "trimwrite",
            (TrimMode::ThenWrite, true) => return "randtrimwrite",
            (TrimMode::None, _) => {}
        }
        match (self.pattern, self.read_pct) {
            (AccessPattern::Random, 100) => "randread",
            (AccessPattern::Random, 0) => "randwrite",
            (AccessPattern::Random, _) => "randrw",
            (AccessPattern::Sequential, 100) => "read",
            (AccessPattern::Sequential, 0) => "write",
            (AccessPattern::Sequential, _) => "rw",
        }
    }

    /// Whether both reads and writes are issued.
    pub fn is_mixed(&self) -> bool {
        self.read_pct != 0 && self.read_pct != 100
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_the_documented_shape() {
        let w = WorkloadEcho {
            name: "w".into(),
            target: "t0".into(),
            read_pct: 70,
            pattern: AccessPattern::Random,
            bs: BlockSizes {
                split: vec![(4096, 50), (8192, 50)],
                write_split: None,
            },
            qd: 8,
            streams: 2,
            rate: Rate::Iops(5000.0),
            offset_bytes: 4096,
            size_bytes: Some(1 << 20),
            dist: Distribution::Zoned {
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
            },
            arrival: Arrival::Uniform,
            share_pct: Some(30.0),
            seq_layout: SeqLayout::Stride,
            align_bytes: None,
            seq_gap_bytes: 0,
            flow: None,
            priority: None,
            pauses: Pauses::default(),
            ..WorkloadEcho::default()
        };
        let v = serde_json::to_value(&w).unwrap();
        assert_eq!(
            v,
            json!({
                "name": "w", "target": "t0", "read_pct": 70,
                "pattern": {"kind": "random"},
                "bs": {"split": [[4096, 50], [8192, 50]]},
                "qd": 8, "streams": 2, "rate": {"iops": 5000.0},
                "offset_bytes": 4096, "size_bytes": 1048576,
                "dist": {"kind": "zoned", "bands": [
                    {"io_pct": 80.0, "range_pct": 10.0},
                    {"io_pct": 20.0, "range_pct": 90.0}]},
                "arrival": "uniform", "share_pct": 30.0, "seq_layout": "stride"
            })
        );
        let back: WorkloadEcho = serde_json::from_value(v).unwrap();
        assert_eq!(back, w);
        // Defaults are left out where the plan left them out.
        let d = serde_json::to_value(WorkloadEcho::default()).unwrap();
        assert!(d.get("share_pct").is_none() && d.get("seq_layout").is_none());
        assert_eq!(d["rate"], "max");
        assert_eq!(d["size_bytes"], serde_json::Value::Null);
        assert_eq!(d["dist"], json!({"kind": "uniform"}));
    }

    #[test]
    fn reads_old_and_partial_workloads() {
        // The shape the stored report fixtures had before the echo was typed.
        let w: WorkloadEcho =
            serde_json::from_value(json!({"rw": "randread", "bs": 4096, "qd": 1})).unwrap();
        assert_eq!(w.bs.single(), Some(4096));
        assert_eq!((w.qd, w.streams, w.read_pct), (1, 1, 100));
        assert_eq!(w.rw(), "randread");
        let w: WorkloadEcho = serde_json::from_value(json!({
            "pattern": {"kind": "sequential"}, "read_pct": 0,
            "dist": {"kind": "zipf", "theta": 1.2}, "rate": {"iops": 10.0}
        }))
        .unwrap();
        assert_eq!(w.rw(), "write");
        assert_eq!(w.dist, Distribution::Zipf { theta: 1.2 });
        assert_eq!(w.rate, Rate::Iops(10.0));
        // A malformed value is an error, not a silent default.
        assert!(serde_json::from_value::<WorkloadEcho>(json!({"qd": "deep"})).is_err());
        assert!(serde_json::from_value::<WorkloadEcho>(json!({"bs": "4k"})).is_err());
    }

    #[test]
    fn net_and_storage_workloads_are_told_apart() {
        let net = json!({
            "mode": "rr", "streams": 2, "bs": 131072, "window": null, "mss": 1400,
            "nodelay": true, "zerocopy": false, "rate": null,
            "rr": {"req": 64, "resp": 4096}, "cpus": [0, 1], "remote_cpus": null
        });
        let w: RunWorkload = serde_json::from_value(net.clone()).unwrap();
        let n = w.net().expect("a network workload");
        assert_eq!((n.mode, n.streams, n.mss), (NetMode::Rr, 2, Some(1400)));
        assert_eq!(
            n.rr,
            Some(NetRrEcho {
                req: 64,
                resp: 4096
            })
        );
        assert!(w.storage().is_none());
        assert_eq!(serde_json::to_value(&w).unwrap(), net);
        let s: RunWorkload = serde_json::from_value(json!({"qd": 4, "bs": 8192})).unwrap();
        assert_eq!(
            s.storage().map(|w| (w.qd, w.bs.single())),
            Some((4, Some(8192)))
        );
        assert!(s.net().is_none());
    }

    #[test]
    fn rw_names_follow_fio() {
        let mut w = WorkloadEcho::default();
        for (pattern, pct, name, mixed) in [
            (AccessPattern::Random, 100, "randread", false),
            (AccessPattern::Random, 0, "randwrite", false),
            (AccessPattern::Random, 70, "randrw", true),
            (AccessPattern::Sequential, 100, "read", false),
            (AccessPattern::Sequential, 0, "write", false),
            (AccessPattern::Sequential, 50, "rw", true),
        ] {
            w.pattern = pattern;
            w.read_pct = pct;
            assert_eq!((w.rw(), w.is_mixed()), (name, mixed));
        }
    }
}
