//! The interval loop of a network-job run and its result: per interval the bytes
//! and messages of every job since the last tick; at the end, per job its bytes/s
//! over the measured time (after the warm-up), message latency (a round trip with
//! `pingpong`) and lost datagrams, as `totals.streams[]` and as one workload each.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::job::{JobCounters, JobPlan, RunControl};
use crate::result::{
    EndReason, Interval, NetInterval, NetMode, NetStreamInterval, NetStreamTotals, NetTotals,
    NetWorkloadEcho, OpTotals, RunKind, RunResult, RunWorkload, Totals, WorkloadResult,
};
use crate::stats::cpu::CpuSample;
use crate::stats::histogram::LatencyHistogram;

/// What the interval loop saw.
pub struct Measured {
    intervals: Vec<Interval>,
    /// Bytes and messages of each job when the warm-up ended.
    mark: Vec<(u64, u64)>,
    mark_s: f64,
    end_s: f64,
    cpu_mark: CpuSample,
    cpu_end: CpuSample,
    end_reason: EndReason,
}

fn sample(counters: &[std::sync::Arc<JobCounters>]) -> Vec<(u64, u64)> {
    counters
        .iter()
        .map(|c| {
            (
                c.bytes.load(Ordering::Relaxed),
                c.ops.load(Ordering::Relaxed),
            )
        })
        .collect()
}

/// Ticks every interval until every job is done, reporting each interval.
pub fn measure(
    run: &crate::plan::RunSpec,
    plans: &[JobPlan],
    counters: &[std::sync::Arc<JobCounters>],
    ctl: &RunControl,
    on_interval: &mut dyn FnMut(&Interval),
) -> Measured {
    let step = Duration::from_nanos(run.interval_ns.max(10_000_000));
    let warm = Duration::from_nanos(run.warmup_ns);
    let mut prev = vec![(0u64, 0u64); plans.len()];
    let mut cpu_prev = CpuSample::now();
    let mut m = Measured {
        intervals: Vec::new(),
        mark: prev.clone(),
        mark_s: 0.0,
        end_s: 0.0,
        cpu_mark: cpu_prev,
        cpu_end: cpu_prev,
        end_reason: EndReason::Passes,
    };
    let mut t_prev = 0.0f64;
    loop {
        let next = ctl.start + step * (m.intervals.len() as u32 + 1);
        let all_done = wait_tick(next, counters);
        let now_s = ctl.start.elapsed().as_secs_f64();
        let cur = sample(counters);
        let warmup = now_s <= warm.as_secs_f64() && !warm.is_zero();
        let iv = interval(
            plans,
            &prev,
            &cur,
            (t_prev, now_s),
            warmup,
            &mut cpu_prev,
            m.intervals.len(),
        );
        if warmup {
            // The warm-up ends with its last interval.
            (m.mark, m.mark_s, m.cpu_mark) = (cur.clone(), now_s, cpu_prev);
        }
        on_interval(&iv);
        m.intervals.push(iv);
        (prev, t_prev) = (cur, now_s);
        if all_done {
            break;
        }
    }
    m.end_s = t_prev;
    m.cpu_end = cpu_prev;
    m.end_reason = end_reason(counters, ctl);
    m
}

/// Sleeps until `next` or until every job is done (true).
fn wait_tick(next: Instant, counters: &[std::sync::Arc<JobCounters>]) -> bool {
    loop {
        let done = counters.iter().all(|c| c.done.load(Ordering::Acquire));
        let now = Instant::now();
        if done {
            return true;
        }
        if now >= next {
            return false;
        }
        std::thread::sleep((next - now).min(Duration::from_millis(20)));
    }
}

fn end_reason(counters: &[std::sync::Arc<JobCounters>], ctl: &RunControl) -> EndReason {
    if counters
        .iter()
        .any(|c| c.error.lock().map(|e| e.is_some()).unwrap_or(true))
    {
        EndReason::Error
    } else if crate::interrupt::requested() {
        EndReason::Interrupted
    } else if ctl.deadline.is_some_and(|d| Instant::now() >= d) {
        EndReason::Duration
    } else {
        EndReason::Passes
    }
}

fn interval(
    plans: &[JobPlan],
    prev: &[(u64, u64)],
    cur: &[(u64, u64)],
    (t0, t1): (f64, f64),
    warmup: bool,
    cpu_prev: &mut CpuSample,
    index: usize,
) -> Interval {
    let secs = (t1 - t0).max(1e-9);
    let (mut bytes, mut ops, mut read_bytes) = (0u64, 0u64, 0u64);
    let mut streams = Vec::new();
    for ((p, a), b) in plans.iter().zip(prev).zip(cur) {
        let db = b.0 - a.0;
        bytes += db;
        ops += b.1 - a.1;
        if !p.send {
            read_bytes += db;
        }
        streams.push(NetStreamInterval {
            bytes: db,
            gbps: db as f64 * 8.0 / secs / 1e9,
            ..Default::default()
        });
    }
    let cpu_now = CpuSample::now();
    let cpu = cpu_now.since(cpu_prev, ops);
    *cpu_prev = cpu_now;
    let gbps = gbps_of(plans, streams.iter().map(|s| s.gbps));
    Interval {
        index: index as u64,
        t_s: t1,
        duration_s: secs,
        unix_s: crate::clock::unix_s(),
        warmup,
        ios: ops,
        bytes,
        iops: ops as f64 / secs,
        mbps: gbps * 1e3 / 8.0,
        read_pct: if bytes > 0 {
            100.0 * read_bytes as f64 / bytes as f64
        } else {
            0.0
        },
        cpu,
        net: Some(NetInterval {
            gbps,
            retransmits: 0,
            streams,
        }),
        ..Default::default()
    }
}

/// A run's throughput as the receiving ends counted it (the sending ends' when the
/// run has no receiver).
fn gbps_of(plans: &[JobPlan], per_job: impl Iterator<Item = f64>) -> f64 {
    let any_receiver = plans.iter().any(|p| !p.send);
    plans
        .iter()
        .zip(per_job)
        .filter(|(p, _)| !any_receiver || !p.send)
        .map(|(_, g)| g)
        .sum()
}

/// [`crate::stats::timed_totals`] at the rate `bytes` in `secs` make.
fn op_totals(ios: u64, bytes: u64, secs: f64, lat: &LatencyHistogram) -> OpTotals {
    crate::stats::timed_totals(ios, bytes, secs, bytes as f64 / secs / 1e6, lat)
}

/// One job's totals over the measured time.
struct JobTotals {
    stream: NetStreamTotals,
    workload: WorkloadResult,
    op: OpTotals,
    hist: LatencyHistogram,
}

/// A job's own measured seconds: from the later of the warm-up's end and its link
/// to its last message (a start delay or a wait for the peer is not its time).
fn job_secs(c: &JobCounters, mark_s: f64, run_secs: f64) -> f64 {
    let linked_s = c.linked_ns.load(Ordering::Relaxed) as f64 / 1e9;
    let last_s = c.last_ns.load(Ordering::Relaxed) as f64 / 1e9;
    let secs = last_s - linked_s.max(mark_s);
    if secs > 0.0 {
        secs
    } else {
        run_secs
    }
}

fn job_totals(p: &JobPlan, c: &JobCounters, mark: (u64, u64), run: (f64, f64)) -> JobTotals {
    let (bytes_all, ops_all) = (
        c.bytes.load(Ordering::Relaxed),
        c.ops.load(Ordering::Relaxed),
    );
    let (bytes, ops) = (bytes_all - mark.0, ops_all - mark.1);
    let secs = job_secs(c, run.0, run.1);
    let hist = std::mem::take(&mut *c.latency.lock().unwrap_or_else(|e| e.into_inner()));
    let op = op_totals(ops, bytes, secs, &hist);
    let pingpong = p.endpoint.pingpong;
    let stream = NetStreamTotals {
        direction: if p.send { "send" } else { "recv" }.into(),
        gbps: bytes as f64 * 8.0 / secs / 1e9,
        bytes_sent: if p.send { bytes_all } else { 0 },
        bytes_received: if p.send { 0 } else { bytes_all },
        tps: pingpong.then(|| ops as f64 / secs),
        latency_us: pingpong.then(|| hist.summary_us(false)),
        job: p.name.clone(),
        datagrams_lost: c.lost.load(Ordering::Relaxed),
        ..Default::default()
    };
    let empty = OpTotals::default();
    let workload = WorkloadResult {
        name: p.name.clone(),
        target: p.uri.clone(),
        settings: None,
        totals: Totals {
            all: op.clone(),
            read: if p.send { empty.clone() } else { op.clone() },
            write: if p.send { op.clone() } else { empty },
            ..Default::default()
        },
    };
    JobTotals {
        stream,
        workload,
        op,
        hist,
    }
}

/// The run's result (and the warnings to print: each job's failure, and ends that
/// never met their peer).
pub fn build(
    run: &crate::plan::RunSpec,
    plans: &[JobPlan],
    counters: &[std::sync::Arc<JobCounters>],
    m: Measured,
) -> (RunResult, Vec<String>) {
    let secs = (m.end_s - m.mark_s).max(1e-9);
    let jobs: Vec<JobTotals> = plans
        .iter()
        .zip(counters)
        .zip(&m.mark)
        .map(|((p, c), &mark)| job_totals(p, c, mark, (m.mark_s, secs)))
        .collect();
    let warnings = job_warnings(run, plans, counters);
    let mut all_lat = LatencyHistogram::new();
    let (mut read, mut write) = (OpTotals::default(), OpTotals::default());
    for (p, j) in plans.iter().zip(&jobs) {
        all_lat += &j.hist;
        let side = if p.send { &mut write } else { &mut read };
        side.ios += j.op.ios;
        side.bytes += j.op.bytes;
    }
    let read = op_totals(read.ios, read.bytes, secs, &LatencyHistogram::new());
    let write = op_totals(write.ios, write.bytes, secs, &LatencyHistogram::new());
    let all = op_totals(
        read.ios + write.ios,
        read.bytes + write.bytes,
        secs,
        &all_lat,
    );
    let gbps = gbps_of(plans, jobs.iter().map(|j| j.stream.gbps));
    // The run's bytes/s is the receiving ends' (gbps), not both ends added up.
    let mut all = all;
    all.mbps = gbps * 1e3 / 8.0;
    all.mibps = gbps * 1e9 / 8.0 / (1u64 << 20) as f64;
    let first = &plans[0].endpoint;
    let cpu = m.cpu_end.since(&m.cpu_mark, all.ios);
    let result = RunResult {
        kind: RunKind::Net,
        name: run.name.clone(),
        target: plans
            .iter()
            .map(|p| p.uri.as_str())
            .collect::<Vec<_>>()
            .join(","),
        engine: "net".into(),
        engine_reason: String::new(),
        io: None,
        workload: RunWorkload::Net(NetWorkloadEcho {
            mode: NetMode::Jobs,
            streams: plans.len() as u32,
            bs: plans[0].bs as u32,
            window: first.window_bytes,
            mss: first.mss_bytes,
            nodelay: first.nodelay,
            zerocopy: false,
            rate: None,
            rr: None,
            cpus: None,
            remote_cpus: None,
        }),
        duration_s: secs,
        warmup_s: m.mark_s,
        interrupted: m.end_reason == EndReason::Interrupted,
        end_reason: m.end_reason,
        workers: plans.len(),
        streams: plans.len() as u64,
        totals: Totals {
            all,
            read,
            write,
            trim: None,
            queue_depth: 0.0,
            net: NetTotals {
                gbps: Some(gbps),
                streams: Some(jobs.iter().map(|j| j.stream.clone()).collect()),
                ..Default::default()
            },
            flush: None,
            zone_resets: None,
        },
        cpu,
        workloads: jobs.into_iter().map(|j| j.workload).collect(),
        intervals: m.intervals,
        ..RunResult::empty()
    };
    (result, warnings)
}

fn job_warnings(
    run: &crate::plan::RunSpec,
    plans: &[JobPlan],
    counters: &[std::sync::Arc<JobCounters>],
) -> Vec<String> {
    let mut w = Vec::new();
    for (p, c) in plans.iter().zip(counters) {
        if let Some(e) = c.error.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            w.push(format!("run '{}', job '{}' failed: {e}", run.name, p.name));
        } else if !c.linked.load(Ordering::Relaxed) {
            w.push(format!(
                "run '{}', job '{}': {} never met its peer (nothing {} it before the run ended)",
                run.name,
                p.name,
                p.uri,
                if p.endpoint.listen {
                    "connected to"
                } else {
                    "answered"
                }
            ));
        }
    }
    w
}
