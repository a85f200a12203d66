//! The collector: merges the workers' per-interval snapshots into interval rows and
//! run totals. Workers never wait on it; it never touches a worker's counters. An
//! interval closes when every worker has delivered it (or finished before it), so
//! rows come out in order however the workers' snapshots interleave.

use super::clock::IntervalClock;
use crate::clock::{now_ns, unix_s};
use crate::engine::Targets;
use crate::plan::model::{Op, Rate, RunSpec};
use crate::plan::settings::declared::{
    HISTOGRAMS, STOP_AFTER_BYTES, STOP_AFTER_READ_BYTES, STOP_AFTER_WRITE_BYTES,
};
use crate::result::{
    ConnectionResult, Cpu, EndReason, Interval, IntervalConnection, PacingResult, RunEvent,
    RunResult, ScheduleResult, Totals, WorkloadResult,
};
use crate::stats::cpu::CpuSample;
use crate::stats::encoded;
use crate::stats::histogram::LatencyHistogram;
use crate::stats::snapshot::{
    dir_stats, ConnStats, DirStats, EventRecord, OpStats, Snapshot, WorkloadStats,
};
use crate::stats::{dir_totals, interval_figures, op_totals, trim_dir_totals, trim_totals};
use std::sync::atomic::Ordering;
use std::sync::mpsc;

/// Merges worker snapshots into intervals and totals.
struct Collector {
    nworkers: usize,
    clock: IntervalClock,
    /// Snapshots waiting for the rest of their interval, by index.
    pending: std::collections::BTreeMap<u64, Vec<Snapshot>>,
    /// Per worker: index of its last snapshot, once it has finished.
    finished_at: Vec<Option<u64>>,
    next_index: u64,
    prev_end_ns: u64,
    cpu_prev: CpuSample,
    cpu_run_start: CpuSample,
    cpu_measure_start: Option<CpuSample>,
    measure_start_ns: Option<u64>,
    last_end_ns: u64,
    totals: Vec<WorkloadStats>,
    /// Waiting for open-loop intended times, over the measured intervals.
    pacing: crate::stats::pacing::PacingStats,
    /// The rows so far, spooled to disk: a long run's memory stays flat.
    intervals: super::spool::IntervalSpool,
    samples: Vec<crate::result::ErrorSample>,
    fatal: Option<String>,
    /// Verification counts from the workers' last snapshots.
    verify: crate::result::VerifyResult,
    nworkloads: usize,
    open_loop: Vec<bool>,
    /// The open-loop workloads' requested rate, for the backlog estimate.
    requested_iops: f64,
    /// Per worker: where its merged snapshots' stats go back for reuse.
    recycle: Vec<mpsc::Sender<Vec<WorkloadStats>>>,
    /// Per connection (target-major), over the measured intervals.
    conn_totals: Vec<ConnStats>,
    /// Every event of the run, in time order per interval.
    events: Vec<RunEvent>,
    /// Per path of a multipath target.
    paths: super::paths::PathTally,
    /// A steady-state stop (fio's `steadystate`) watching the measured intervals.
    steady: Option<super::steady::SteadyWatch>,
    /// `stop_after_bytes` (vdbench's `maxdata=`) watching the measured intervals.
    data_limit: Option<DataLimit>,
    /// `histograms = "intervals"`: each interval row carries its raw histograms.
    interval_hdr: bool,
    /// `hdr_log`: the interval log files of the run's workloads.
    hdr_logs: super::hdr_log::HdrLogs,
    /// Unix seconds at clock time 0, for the interval log's timestamps.
    unix_at_zero_s: f64,
    /// Warnings about the run's outputs (an interval log that failed).
    warnings: Vec<String>,
    /// The command's live metrics (`--metrics`), fed every interval.
    feed: Option<crate::metrics::RunFeed>,
    /// Per worker and workload, over the measured intervals.
    threads: super::thread_tally::ThreadTally,
}

/// `stop_after_bytes`, `stop_after_read_bytes`, `stop_after_write_bytes`: the
/// bytes the measured intervals moved (all, read, written), against the limits.
#[derive(Debug, Clone, Copy)]
struct DataLimit {
    /// Per count (all, read, written): its limit, 0 for none.
    limit_bytes: [u64; 3],
    moved_bytes: [u64; 3],
}

impl DataLimit {
    /// The watch a run asks for (`None`: no limit).
    fn of_run(run: &RunSpec) -> Option<Self> {
        let limit_bytes = [
            &STOP_AFTER_BYTES,
            &STOP_AFTER_READ_BYTES,
            &STOP_AFTER_WRITE_BYTES,
        ]
        .map(|d| run.settings.bytes(d));
        (limit_bytes.iter().any(|&l| l > 0)).then_some(DataLimit {
            limit_bytes,
            moved_bytes: [0; 3],
        })
    }

    /// Counts a closed interval (warm-up ones are not counted, as vdbench's
    /// maxdata counts the totals after its warm-up).
    fn observe(&mut self, iv: &Interval) {
        if !iv.warmup {
            let moved = [iv.bytes, iv.read_bytes, iv.write_bytes];
            for (m, b) in self.moved_bytes.iter_mut().zip(moved) {
                *m += b;
            }
        }
    }

    /// True once more than a limit moved (vdbench's test, `>`).
    fn reached(&self) -> bool {
        (self.limit_bytes.iter().zip(&self.moved_bytes)).any(|(&l, &m)| l > 0 && m > l)
    }
}

/// One interval's snapshots summed.
struct Merged {
    workloads: Vec<WorkloadStats>,
    end_ns: u64,
    pacing: crate::stats::pacing::PacingStats,
    conns: Vec<ConnStats>,
    events: Vec<RunEvent>,
}

impl Collector {
    fn new(run: &RunSpec, nworkers: usize, clock: IntervalClock, nconns: usize) -> Self {
        let cpu = CpuSample::now();
        let open_loop: Vec<bool> = run
            .workloads
            .iter()
            .map(|w| matches!(w.rate, Rate::Iops(_)))
            .collect();
        Collector {
            nworkers,
            clock,
            pending: Default::default(),
            finished_at: vec![None; nworkers],
            next_index: 0,
            prev_end_ns: clock.start_ns,
            cpu_prev: cpu,
            cpu_run_start: cpu,
            cpu_measure_start: if clock.warmup_ns == 0 {
                Some(cpu)
            } else {
                None
            },
            measure_start_ns: if clock.warmup_ns == 0 {
                Some(clock.start_ns)
            } else {
                None
            },
            last_end_ns: clock.start_ns,
            totals: open_loop.iter().map(|&o| WorkloadStats::new(o)).collect(),
            pacing: Default::default(),
            intervals: super::spool::IntervalSpool::new(),
            samples: Vec::new(),
            fatal: None,
            verify: Default::default(),
            nworkloads: run.workloads.len(),
            open_loop,
            requested_iops: run.requested_iops(),
            recycle: Vec::new(),
            conn_totals: vec![ConnStats::default(); nconns],
            events: Vec::new(),
            paths: Default::default(),
            steady: run
                .steady_stop
                .as_ref()
                .map(|s| super::steady::SteadyWatch::new(s, run.interval_ns)),
            data_limit: DataLimit::of_run(run),
            interval_hdr: run
                .workloads
                .iter()
                .any(|w| w.settings.get(&HISTOGRAMS).as_str() == "intervals"),
            hdr_logs: Default::default(),
            unix_at_zero_s: unix_s() - now_ns() as f64 / 1e9,
            warnings: Vec::new(),
            feed: None,
            threads: Default::default(),
        }
        .with_hdr_logs(run)
    }

    /// Among MPI ranks, the workloads' counters and histograms for rank 0's merge.
    fn workload_ops(&self, run: &RunSpec) -> Vec<crate::cluster::wire::WorkloadOps> {
        if !crate::cluster::active() {
            return Vec::new();
        }
        run.workloads
            .iter()
            .zip(&self.totals)
            .map(|(w, t)| crate::cluster::wire::WorkloadOps {
                name: w.name.clone(),
                target: w.target.clone(),
                ops: t.ops.clone(),
            })
            .collect()
    }

    /// Opens the run's interval logs (`hdr_log`).
    fn with_hdr_logs(mut self, run: &RunSpec) -> Self {
        let start_unix_s = self.unix_at_zero_s + self.clock.start_ns as f64 / 1e9;
        self.hdr_logs = super::hdr_log::HdrLogs::open(run, start_unix_s, &mut self.warnings);
        self
    }

    /// The raw histograms of an interval's directions, when the run asked for them,
    /// and its line in the interval logs when measured.
    fn interval_histograms(&mut self, iv: &mut Interval, dirs: &DirStats, m: &[WorkloadStats]) {
        if self.interval_hdr {
            iv.read_lat_us.hdr = encoded(&dirs[Op::Read.index()].lat);
            iv.write_lat_us.hdr = encoded(&dirs[Op::Write.index()].lat);
            if let Some(t) = iv.trim_lat_us.as_mut() {
                t.hdr = encoded(&dirs[Op::Trim.index()].lat);
            }
        }
        if !iv.warmup {
            let start_unix_s = self.unix_at_zero_s + self.prev_end_ns as f64 / 1e9;
            self.hdr_logs
                .write(m, start_unix_s, iv.duration_s, &mut self.warnings);
        }
    }

    /// What the collector works with beyond the counters: the workers' return
    /// channels, the paths it follows and the command's live metrics.
    fn attach(
        &mut self,
        recycle: Vec<mpsc::Sender<Vec<WorkloadStats>>>,
        run: &RunSpec,
        targets: &Targets,
        live: Option<&crate::metrics::Live>,
    ) {
        self.recycle = recycle;
        self.follow_paths(targets);
        if let Some(live) = live {
            self.feed_metrics(live, run, targets);
        }
    }

    /// Binds the run's series in the command's metrics registry.
    fn feed_metrics(&mut self, live: &crate::metrics::Live, run: &RunSpec, targets: &Targets) {
        use crate::metrics::{RunFeed, WorkloadName};
        let workloads: Vec<WorkloadName> = run
            .workloads
            .iter()
            .map(|w| WorkloadName {
                name: &w.name,
                target: targets
                    .iter()
                    .find(|t| t.name == w.target)
                    .map_or(w.target.as_str(), |t| t.uri.as_str()),
            })
            .collect();
        let per_target = (self.conn_totals.len() / targets.len().max(1)).max(1);
        let conns: Vec<(&str, u32)> = (0..self.conn_totals.len())
            .map(|i| {
                (
                    targets[i / per_target].uri.as_str(),
                    (i % per_target) as u32,
                )
            })
            .collect();
        let paths_of = targets.first().map_or("", |t| t.uri.as_str());
        self.feed = Some(RunFeed::new(live, &workloads, &conns, paths_of));
    }

    fn add(&mut self, s: Snapshot, on_interval: &mut dyn FnMut(&Interval)) {
        if s.last {
            self.finished_at[s.worker] = Some(s.index);
        }
        if let Some(f) = &s.fatal {
            self.fatal.get_or_insert_with(|| f.clone());
        }
        self.verify += &s.verify;
        self.pending.entry(s.index).or_default().push(s);
        // Close every interval that every worker has delivered (or finished before).
        loop {
            let k = self.next_index;
            let have = self.pending.get(&k).map_or(0, |v| v.len());
            let done_before = self
                .finished_at
                .iter()
                .filter(|f| f.is_some_and(|i| i < k))
                .count();
            if have == 0 && done_before == self.nworkers {
                return;
            }
            if have + done_before < self.nworkers {
                return;
            }
            let snaps = self.pending.remove(&k).unwrap_or_default();
            self.close_interval(k, snaps, on_interval);
            self.next_index += 1;
        }
    }

    fn close_interval(
        &mut self,
        k: u64,
        snaps: Vec<Snapshot>,
        on_interval: &mut dyn FnMut(&Interval),
    ) {
        // A worker's closing snapshot just after the final boundary holds nothing: it
        // is not an interval of its own.
        let empty = snaps.iter().all(|s| {
            s.last
                && s.workloads
                    .iter()
                    .all(|w| w.ops.iter().all(|o| o.ios == 0 && o.errors == 0))
        });
        if empty && !snaps.is_empty() {
            for s in snaps {
                // Flushes made once the I/O was over (`fsync_on_close`) count in the
                // totals, not in an interval.
                for (t, w) in self.totals.iter_mut().zip(&s.workloads) {
                    t.flush += &w.flush;
                }
                self.samples.extend(s.error_samples);
                let events: Vec<RunEvent> = s.events.iter().map(|e| self.event(e)).collect();
                self.events.extend(events);
            }
            return;
        }
        if !self.clock.is_warmup(k) {
            snaps.iter().for_each(|s| self.threads.add(s));
        }
        let merged = self.merge(snaps);
        self.close_merged(k, merged, on_interval);
    }

    /// Sums one interval's snapshots; hands their emptied stats back for reuse.
    fn merge(&mut self, snaps: Vec<Snapshot>) -> Merged {
        let mut m = Merged {
            workloads: self
                .open_loop
                .iter()
                .map(|&o| WorkloadStats::new(o))
                .collect(),
            end_ns: self.prev_end_ns,
            pacing: Default::default(),
            conns: vec![ConnStats::default(); self.conn_totals.len()],
            events: Vec::new(),
        };
        for mut s in snaps {
            crate::stats::snapshot::share_cpu(&mut s.connections, s.cpu_ns);
            m.end_ns = m.end_ns.max(s.end_ns);
            m.pacing += &s.pacing;
            for (a, w) in m.workloads.iter_mut().zip(&s.workloads) {
                *a += w;
            }
            for (a, c) in m.conns.iter_mut().zip(&s.connections) {
                *a += c;
            }
            m.events.extend(s.events.iter().map(|e| self.event(e)));
            self.paths.add(&s.paths);
            for e in s.error_samples {
                if self.samples.len() < 16 {
                    self.samples.push(e);
                }
            }
            if !s.last {
                if let Some(back) = self.recycle.get(s.worker) {
                    let mut stats = s.workloads;
                    stats.iter_mut().for_each(WorkloadStats::reset);
                    // A worker that has ended no longer listens; that is fine.
                    let _ = back.send(stats);
                }
            }
        }
        m.events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        m
    }

    /// A worker's event as the result records it.
    fn event(&self, e: &EventRecord) -> RunEvent {
        RunEvent {
            t_s: e.at_ns.saturating_sub(self.clock.start_ns) as f64 / 1e9,
            path: e.conn,
            kind: e.kind.into(),
            detail: e.detail.clone(),
            rank: None,
            host: None,
        }
    }

    /// Turns one interval's merged counters into its row and adds them to the totals.
    fn close_merged(&mut self, k: u64, m: Merged, on_interval: &mut dyn FnMut(&Interval)) {
        let Merged {
            workloads: merged,
            end_ns,
            pacing,
            conns,
            events,
        } = m;
        let warmup = self.clock.is_warmup(k);
        let dur_s = end_ns.saturating_sub(self.prev_end_ns).max(1) as f64 / 1e9;
        let mut all = OpStats::new(self.open_loop.iter().any(|&o| o));
        let mut dirs = dir_stats(false);
        let mut lag: Option<LatencyHistogram> = None;
        for w in &merged {
            if let Some(l) = &w.lag {
                *lag.get_or_insert_with(LatencyHistogram::new) += l;
            }
            for (d, o) in dirs.iter_mut().zip(&w.ops) {
                all += o;
                *d += o;
            }
        }
        let cpu_now = CpuSample {
            at_ns: end_ns,
            ..CpuSample::now()
        };
        let cpu = cpu_now.since(&self.cpu_prev, all.ios);
        self.cpu_prev = cpu_now;
        let mut iv = Interval {
            index: k,
            t_s: end_ns.saturating_sub(self.clock.start_ns) as f64 / 1e9,
            unix_s: unix_s(),
            warmup,
            cpu,
            connections: conns
                .iter()
                .map(|c| IntervalConnection { ios: c.ios })
                .collect(),
            events,
            paths: self.paths.close(dur_s, !warmup),
            net: None,
            workloads: if self.nworkloads > 1 {
                merged
                    .iter()
                    .map(|w| crate::stats::workload_interval(w, dur_s))
                    .collect()
            } else {
                Vec::new()
            },
            ..interval_figures(&all, &dirs, lag.as_ref(), dur_s, self.requested_iops)
        };
        self.interval_histograms(&mut iv, &dirs, &merged);
        if let Some(f) = self.feed.as_mut() {
            let end_unix_s = unix_s() - now_ns().saturating_sub(end_ns) as f64 / 1e9;
            f.interval(&merged, &conns, &iv, end_unix_s);
        }
        self.show(&iv, &dirs, lag.as_ref(), on_interval);
        if !warmup {
            self.paths.add_latency(&iv, &all.lat);
        }
        self.events.extend(iv.events.iter().cloned());
        self.intervals.push(iv);
        if warmup {
            // Measurement starts where warm-up ends.
            self.measure_start_ns = Some(end_ns);
            self.cpu_measure_start = Some(cpu_now);
        } else {
            for (t, m) in self.totals.iter_mut().zip(&merged) {
                *t += m;
            }
            for (t, c) in self.conn_totals.iter_mut().zip(&conns) {
                *t += c;
            }
            self.pacing += &pacing;
        }
        self.prev_end_ns = end_ns;
        self.last_end_ns = end_ns;
    }

    /// Hands a closed interval on. Among MPI ranks it goes to rank 0's merge, which
    /// shows merged ones (and judges a steady-state stop on them, see
    /// `observe_merged`).
    fn show(
        &mut self,
        iv: &Interval,
        dirs: &crate::stats::snapshot::DirStats,
        lag: Option<&LatencyHistogram>,
        on_interval: &mut dyn FnMut(&Interval),
    ) {
        let mut rows = Vec::new();
        let feed = &mut self.feed;
        let tapped = crate::cluster::tap(iv, dirs, lag, &mut |m| {
            show_merged(m, feed.as_mut(), on_interval);
            rows.push(m.row.clone());
        });
        if tapped {
            self.observe_merged(&rows);
        } else {
            on_interval(iv);
            if let (Some(w), false) = (self.steady.as_mut(), iv.warmup) {
                w.observe(iv);
            }
            if let Some(d) = self.data_limit.as_mut() {
                d.observe(iv);
            }
        }
    }

    /// Among MPI ranks: rank 0 takes the others' reports and shows and feeds the
    /// merged rows. `true` when the run must stop (a lost rank, or rank 0's
    /// steady-state stop).
    fn poll_ranks(&mut self, on_interval: &mut dyn FnMut(&Interval)) -> bool {
        let mut rows = Vec::new();
        let feed = &mut self.feed;
        let stop = crate::cluster::poll(&mut |m| {
            show_merged(m, feed.as_mut(), on_interval);
            rows.push(m.row.clone());
        });
        self.observe_merged(&rows);
        stop
    }

    /// Among MPI ranks (rank 0): a steady-state stop judges the merged intervals, and
    /// once it holds every rank is told to stop.
    fn observe_merged(&mut self, rows: &[Interval]) {
        for row in rows {
            if let (Some(w), false) = (self.steady.as_mut(), row.warmup) {
                w.observe(row);
            }
            if let Some(d) = self.data_limit.as_mut() {
                d.observe(row);
            }
        }
        if self.steady_reached() || self.data_reached() {
            crate::cluster::stop_all();
        }
    }

    /// True once the measured intervals moved more than a `stop_after_*bytes` limit.
    fn data_reached(&self) -> bool {
        self.data_limit.is_some_and(|d| d.reached())
    }

    /// True once a steady-state stop's criterion has held.
    fn steady_reached(&self) -> bool {
        self.steady
            .as_ref()
            .is_some_and(|w| w.reached_at_s.is_some())
    }

    /// The paths of the first target, when it has several: a multipath target's own,
    /// or a device-mapper multipath device's.
    fn follow_paths(&mut self, targets: &Targets) {
        let Some(t) = targets.first() else { return };
        if let Some(mp) = &t.multipath {
            self.paths = super::paths::PathTally::new(&mp.described(t));
        } else if t.is_block_device() {
            if let Some(dm) =
                crate::target::dm_paths::DmPaths::discover(std::path::Path::new(&t.uri))
            {
                self.paths = super::paths::PathTally::for_dm(dm);
            }
        }
    }

    /// Per workload: its issue lateness (open loop) and the I/Os it issued.
    fn by_workload(&self) -> Vec<(Option<LatencyHistogram>, u64)> {
        self.totals
            .iter()
            .map(|t| {
                let ios = t.ops.iter().map(|o| o.ios + o.errors).sum();
                (t.lag.clone(), ios)
            })
            .collect()
    }

    /// Requested vs achieved rate and issue lateness of the open-loop workloads.
    fn schedule_result(&self, run: &RunSpec, dur_s: f64, cpu: &Cpu) -> Option<ScheduleResult> {
        let requested = self.requested_iops;
        let mut ios = 0u64;
        let mut lag = LatencyHistogram::new();
        for (w, t) in run.workloads.iter().zip(&self.totals) {
            if matches!(w.rate, Rate::Iops(_)) {
                ios += t.ops.iter().map(|o| o.ios + o.errors).sum::<u64>();
                if let Some(l) = &t.lag {
                    lag += l;
                }
            }
        }
        if requested == 0.0 {
            return None;
        }
        let achieved = if dur_s > 0.0 { ios as f64 / dur_s } else { 0.0 };
        Some(ScheduleResult {
            requested_iops: requested,
            achieved_iops: achieved,
            achieved_pct: 100.0 * achieved / requested,
            lag_us: lag.summary_us(false),
            max_backlog_ios: lag.max_ns() as f64 / 1e9 * requested,
            pacing: Some(self.pacing_result(run, cpu)),
        })
    }

    /// What waiting for intended times cost; the spin is taken out of the CPU per I/O
    /// (capped at the CPU measured, since a preempted spin counts wall time).
    fn pacing_result(&self, run: &RunSpec, cpu: &Cpu) -> PacingResult {
        let p = &self.pacing;
        let ios: u64 = self
            .totals
            .iter()
            .flat_map(|t| t.ops.iter().map(|o| o.ios))
            .sum();
        let cpu_us = cpu.cpu_us_per_io * ios as f64;
        let spin_us = p.spin_ns as f64 / 1e3;
        PacingResult {
            mode: run.pacing.name().into(),
            spin_s: p.spin_ns as f64 / 1e9,
            sleep_s: p.sleep_ns as f64 / 1e9,
            sleeps: p.wake_late.count(),
            wake_late_us: p.wake_late.summary_us(false),
            margin_us: p.margin_ns as f64 / 1e3,
            cpu_us_per_io_excl_spin: if ios > 0 {
                (cpu_us - spin_us).max(0.0) / ios as f64
            } else {
                0.0
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        mut self,
        run: &RunSpec,
        targets: &Targets,
        engine: &super::engine_choice::EngineChoice,
        end_reason: EndReason,
        interrupted: bool,
        nworkers: usize,
    ) -> RunResult {
        // Flush any interval left open (a worker that ended without peers).
        for k in self.pending.keys().copied().collect::<Vec<u64>>() {
            if let Some(snaps) = self.pending.remove(&k) {
                self.close_interval(k, snaps, &mut |_| {});
            }
        }
        let measure_start = self.measure_start_ns.unwrap_or(self.last_end_ns);
        let dur_ns = self.last_end_ns.saturating_sub(measure_start);
        let dur_s = dur_ns as f64 / 1e9;
        let mut all_ops = dir_stats(false);
        let mut combined = OpStats::new(self.open_loop.iter().any(|&o| o));
        for w in &self.totals {
            for (d, o) in all_ops.iter_mut().zip(&w.ops) {
                combined += o;
                *d += o;
            }
        }
        let totals = Totals {
            all: op_totals(&combined, dur_s, true),
            read: dir_totals(&all_ops[0], dur_s),
            write: dir_totals(&all_ops[1], dur_s),
            trim: trim_dir_totals(&all_ops[Op::Trim.index()], dur_s),
            queue_depth: if dur_ns > 0 {
                combined.service_sum_ns() as f64 / dur_ns as f64
            } else {
                0.0
            },
            net: Default::default(),
            flush: super::flush::totals(&self.totals, run, None, dur_s),
            zone_resets: None,
        };
        let cpu_end = CpuSample {
            at_ns: self.last_end_ns.max(self.cpu_prev.at_ns),
            ..self.cpu_prev
        };
        let cpu = cpu_end.since(
            self.cpu_measure_start
                .as_ref()
                .unwrap_or(&self.cpu_run_start),
            combined.ios,
        );
        RunResult {
            kind: Default::default(),
            schedule: self.schedule_result(run, dur_s, &cpu),
            workloads: self.workload_results(run, dur_s),
            name: run.name.clone(),
            target: uri_list(targets),
            engine: engine.name(),
            engine_reason: engine.reason.clone(),
            io: (!run.io.is_default()).then(|| super::echo::io_echo(&run.io)),
            workload: super::echo::workload_echo(&run.workloads[0]).into(),
            duration_s: dur_s,
            warmup_s: run.warmup_ns as f64 / 1e9,
            interrupted,
            end_reason,
            workers: nworkers,
            streams: run.total_streams(),
            totals,
            cpu,
            connections: self.connection_results(targets),
            paths: self.paths.results(),
            error_samples: self.samples,
            events: self.events,
            failover: self.paths.failover_cost(),
            smb: smb_sessions(targets),
            nbd: nbd_sessions(targets),
            steady_stop: self.steady.as_ref().map(super::steady::SteadyWatch::result),
            threads: self.threads.results(nworkers),
            // No ranks (the cluster adds them), repetitions (`app`) or parts (merge).
            ..RunResult::empty()
        }
    }

    /// Per-workload totals, when the run had more than one workload.
    fn workload_results(&self, run: &RunSpec, dur_s: f64) -> Vec<WorkloadResult> {
        if self.nworkloads <= 1 {
            return Vec::new();
        }
        run.workloads
            .iter()
            .zip(&self.totals)
            .enumerate()
            .map(|(i, (w, t))| {
                let c = t.combined();
                let dur_s = active_s(w, run, dur_s).max(1e-9);
                WorkloadResult {
                    name: w.name.clone(),
                    target: w.target.clone(),
                    settings: Some(super::echo::workload_echo(w)),
                    totals: Totals {
                        all: op_totals(&c, dur_s, false),
                        read: op_totals(&t.ops[Op::Read.index()], dur_s, false),
                        write: op_totals(&t.ops[Op::Write.index()], dur_s, false),
                        trim: trim_totals(&t.ops[Op::Trim.index()], dur_s, false),
                        queue_depth: if dur_s > 0.0 {
                            c.service_sum_ns() as f64 / (dur_s * 1e9)
                        } else {
                            0.0
                        },
                        net: Default::default(),
                        flush: super::flush::totals(std::slice::from_ref(t), run, Some(i), dur_s),
                        zone_resets: None,
                    },
                }
            })
            .collect()
    }

    /// Per-connection totals, target-major.
    fn connection_results(&self, targets: &Targets) -> Vec<ConnectionResult> {
        let per_target = self.conn_totals.len() / targets.len().max(1);
        self.conn_totals
            .iter()
            .enumerate()
            .map(|(i, c)| ConnectionResult {
                uri: targets[i / per_target.max(1)].uri.clone(),
                rank: None,
                index: (i % per_target.max(1)) as u32,
                ios: c.ios,
                bytes: c.bytes,
                errors: c.errors,
                timeouts: c.timeouts,
                cpu_us_per_io: (c.ios > 0 && c.cpu_ns > 0)
                    .then(|| c.cpu_ns as f64 / 1e3 / c.ios as f64),
            })
            .collect()
    }
}

/// Everything a run's workers report, and how the run ended.
pub(super) struct Collected {
    pub result: RunResult,
    pub verify: crate::result::VerifyResult,
    pub interrupted: bool,
    pub fatal: Option<String>,
    /// Per-workload counters with histograms, kept only among MPI ranks.
    pub workload_ops: Vec<crate::cluster::wire::WorkloadOps>,
    /// Per workload: its issue lateness (open loop) and the I/Os it issued.
    pub by_workload: Vec<(Option<LatencyHistogram>, u64)>,
    /// The run's live metrics series, for the merged rows that close after it.
    pub feed: Option<crate::metrics::RunFeed>,
}

/// A workload's own measured seconds: the run's, less what passed before its start
/// delay and own warm-up ended and after it stopped (fio reports a job over its own runtime).
fn active_s(w: &crate::plan::model::Workload, run: &RunSpec, run_s: f64) -> f64 {
    let warmup_s = run.warmup_ns as f64 / 1e9;
    // Counting starts when both its start delay and its own warm-up are over.
    let counted_from_ns = w.pauses.start_delay_ns.max(run.warmup_of(w));
    let start_s = (counted_from_ns as f64 / 1e9 - warmup_s).max(0.0);
    let end_s = match w.pauses.stop_ns {
        0 => run_s,
        stop => (stop as f64 / 1e9 - warmup_s).clamp(0.0, run_s),
    };
    (end_s - start_s).max(0.0).min(run_s)
}

/// On virtual time with a steady-state stop, the collector is one of the clock's
/// participants: once it has closed (and judged) every interval up to `held`, it
/// lets time run to the next boundary and no further. Time stands still while it
/// judges, so the workers see a stop at their next event instead of running ahead
/// on the simulated clock while the collector catches up in real time.
fn hold_at_boundary(
    judge: &crate::clock::virtual_time::Participant<'static>,
    closed: u64,
    held: &mut u64,
    clock: &super::clock::IntervalClock,
) {
    if closed == *held {
        judge.0.wait_until(clock.boundary_ns(*held));
        *held += 1;
    }
}

/// Why a run ended, once its workers have: the first cause that holds, in order.
/// `error_stop`: an error stopped the workers; `end_at`: the end of measured time.
fn end_reason(
    interrupted: bool,
    error_stop: bool,
    end_at: Option<u64>,
    coll: &Collector,
) -> EndReason {
    if interrupted {
        EndReason::Interrupted
    } else if error_stop || coll.fatal.is_some() {
        EndReason::Error
    } else if coll.steady_reached() {
        EndReason::SteadyState
    } else if coll.data_reached() {
        EndReason::DataLimit
    } else if end_at.is_some_and(|e| now_ns() >= e) {
        EndReason::Duration
    } else {
        EndReason::Passes
    }
}

/// Receives the workers' snapshots until every worker has ended, stopping them at
/// the end of the measured time or on an interrupt, and merges them into the result.
pub(super) fn collect(
    run: &RunSpec,
    targets: &Targets,
    engine: &super::engine_choice::EngineChoice,
    launched: super::launch::Launched,
    opts: &super::RunOptions,
    on_interval: &mut dyn FnMut(&Interval),
    warnings: &mut Vec<String>,
) -> Collected {
    let mut coll = Collector::new(run, launched.nworkers, launched.clock, launched.nconns);
    coll.attach(launched.recycle, run, targets, opts.metrics.as_ref());
    let mut interrupted = false;
    let mut held = 0;
    loop {
        if !interrupted && crate::interrupt::requested() {
            interrupted = true;
            launched.stop.store(true, Ordering::Relaxed);
        }
        if launched.end_at.is_some_and(|end| now_ns() >= end)
            || coll.steady_reached()
            || coll.data_reached()
        {
            launched.stop.store(true, Ordering::Relaxed);
        }
        if let Some(j) = &launched.judge {
            hold_at_boundary(j, coll.intervals.len() as u64, &mut held, &launched.clock);
        }
        if coll.poll_ranks(on_interval) {
            launched.stop.store(true, Ordering::Relaxed);
        }
        match launched
            .rx
            .recv_timeout(std::time::Duration::from_millis(20))
        {
            Ok(s) => coll.add(s, on_interval),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    for h in launched.handles {
        let _ = h.join();
    }
    let error_stop = launched.error_stop.load(Ordering::Relaxed);
    let end_reason = end_reason(interrupted, error_stop, launched.end_at, &coll);
    let fatal = coll.fatal.clone();
    let verify = std::mem::take(&mut coll.verify);
    let workload_ops = coll.workload_ops(run);
    let by_workload = coll.by_workload();
    warnings.append(&mut coll.warnings);
    let feed = coll.feed.take();
    let (rows, lost) = std::mem::take(&mut coll.intervals).into_vec();
    warnings.extend(lost);
    let mut result = coll.finish(
        run,
        targets,
        engine,
        end_reason,
        interrupted,
        launched.nworkers,
    );
    result.intervals = rows;
    Collected {
        result,
        verify,
        interrupted,
        fatal,
        workload_ops,
        by_workload,
        feed,
    }
}

/// Shows an interval merged from every MPI rank and, on rank 0's merged metrics
/// view, feeds it.
pub(super) fn show_merged(
    m: &crate::cluster::Merged,
    feed: Option<&mut crate::metrics::RunFeed>,
    on_interval: &mut dyn FnMut(&Interval),
) {
    on_interval(&m.row);
    if let Some(f) = feed {
        f.merged(&m.dirs, &m.row);
    }
}

/// The targets as the result names them: their URIs, comma-separated.
fn uri_list(targets: &Targets) -> String {
    let uris: Vec<&str> = targets.iter().map(|t| t.uri.as_str()).collect();
    uris.join(",")
}

/// The reply form the NBD targets' connections asked for and got, for the result.
fn nbd_sessions(targets: &crate::engine::Targets) -> Vec<crate::result::nbd::NbdSession> {
    use crate::target::nbd::ffi::Replies;
    targets
        .iter()
        .filter_map(|t| match &t.backing {
            crate::target::Backing::Nbd(n) => Some(crate::result::nbd::NbdSession {
                target: n.uri.clone(),
                server: n.server.clone(),
                structured_replies_requested: n.replies == Replies::Structured,
                structured_replies: n.negotiated.map(|r| r == Replies::Structured),
            }),
            _ => None,
        })
        .collect()
}

/// What the SMB targets' sessions negotiated, for the result.
fn smb_sessions(targets: &crate::engine::Targets) -> Vec<crate::result::smb::SmbSession> {
    #[cfg(feature = "smb")]
    {
        targets
            .iter()
            .filter_map(|t| match &t.backing {
                crate::target::Backing::Smb(s) => {
                    let mut info = s.info.clone();
                    if let Some(mp) = t.multipath.as_ref().filter(|m| !m.channels.is_empty()) {
                        info.channels = mp.channels.len() as u32;
                    }
                    Some(info)
                }
                _ => None,
            })
            .collect()
    }
    #[cfg(not(feature = "smb"))]
    {
        let _ = targets;
        Vec::new()
    }
}
