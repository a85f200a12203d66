//! diskspd's XML result (`-Rxml`), written from an ioscope result so that the tools
//! built around diskspd (VM Fleet's collectors, PerfKitBenchmarker's parser,
//! PowerShell scripts reading `Results/TimeSpan/Thread/Target`) read ioscope's runs.
//!
//! The element names and nesting are diskspd's (its XmlResultParser and profile
//! writer); what ioscope does not measure is left out rather than made up: per-thread
//! counts come from the result's `threads` (one worker per diskspd thread in a
//! translated line), latency only at the TimeSpan level (ioscope keeps no per-thread
//! latency), IOPS buckets from the run's interval rows. See docs/compat-diskspd.md.

use super::format::esc;
use crate::result::{hdr, LatencyStats, OpTotals, ResultDoc, RunResult, RunWorkload, WorkloadEcho};
use crate::stats::histogram::{LatencyHistogram, Moments};

/// An indented XML text, two spaces per level, as diskspd writes it.
struct Xml {
    out: String,
    depth: usize,
}

impl Xml {
    fn open(&mut self, tag: &str) {
        self.line(&format!("<{tag}>"));
        self.depth += 1;
    }

    fn close(&mut self, tag: &str) {
        self.depth -= 1;
        self.line(&format!("</{tag}>"));
    }

    fn leaf(&mut self, tag: &str, value: impl std::fmt::Display) {
        self.line(&format!("<{tag}>{}</{tag}>", esc(&value.to_string())));
    }

    fn line(&mut self, s: &str) {
        self.out.push_str(&"  ".repeat(self.depth));
        self.out.push_str(s);
        self.out.push('\n');
    }
}

/// The result's target names and the paths they stand for (from its plan).
type Paths = std::collections::HashMap<String, String>;

fn paths(doc: &ResultDoc) -> Paths {
    let targets = doc.plan.as_ref().and_then(|p| p.get("targets"));
    targets
        .and_then(|t| t.as_array())
        .into_iter()
        .flatten()
        .filter_map(|t| {
            Some((
                t.get("name")?.as_str()?.into(),
                t.get("uri")?.as_str()?.into(),
            ))
        })
        .collect()
}

/// The whole result as diskspd's `<Results>`: one `TimeSpan` per run.
pub fn render(doc: &ResultDoc) -> String {
    let mut x = Xml {
        out: String::new(),
        depth: 0,
    };
    let paths = paths(doc);
    x.open("Results");
    system(&mut x, doc);
    x.open("Profile");
    x.leaf("Progress", 0);
    x.leaf("ResultFormat", "xml");
    x.leaf("Verbose", "false");
    x.open("TimeSpans");
    doc.runs
        .iter()
        .for_each(|r| profile_timespan(&mut x, r, &paths, interval_ms(doc, r)));
    x.close("TimeSpans");
    x.close("Profile");
    for r in &doc.runs {
        timespan(&mut x, r, &paths, interval_ms(doc, r));
    }
    x.close("Results");
    x.out
}

/// `<System>`: the host and the tool.
fn system(x: &mut Xml, doc: &ResultDoc) {
    let host = doc
        .env
        .as_ref()
        .and_then(|e| e.pointer("/host/hostname"))
        .and_then(|h| h.as_str())
        .unwrap_or("");
    x.open("System");
    x.leaf("ComputerName", host);
    x.open("Tool");
    x.leaf("Version", format!("ioscope {}", doc.tool.version));
    x.close("Tool");
    x.leaf("RunTime", super::format::utc_datetime(doc.started_unix_s));
    x.close("System");
}

/// The run's workloads in plan order (its own echo each, or the run's when it has
/// one), with their targets' paths in place of their names.
fn echoes(r: &RunResult, paths: &Paths) -> Vec<WorkloadEcho> {
    let mut ws: Vec<WorkloadEcho> = if r.workloads.is_empty() {
        match &r.workload {
            RunWorkload::Storage(w) => vec![w.clone()],
            RunWorkload::Net(_) => Vec::new(),
        }
    } else {
        r.workloads
            .iter()
            .map(|w| w.settings.clone().unwrap_or_default())
            .collect()
    };
    for w in &mut ws {
        if let Some(p) = paths.get(&w.target) {
            w.target = p.clone();
        }
    }
    ws
}

/// How a run's workers ran its workloads, in the two ways a diskspd profile has.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Threads {
    /// `<ThreadCount>n` (`-F<n>`): n threads, each running one stream of every target.
    Shared(usize),
    /// `<ThreadCount>0`: each target its own threads (`<ThreadsPerFile>`, `-t`);
    /// `exact` when each of them was a worker of its own in the run, as diskspd's are.
    PerTarget { exact: bool },
}

/// The run's layout, from the workers each workload's streams ran on (its echo's
/// `workers`, recorded at launch): the same workers for every target, one stream on
/// each, is diskspd's `-F`; anything else is written per target. A run of one
/// workload is written per target, which is the same run.
fn threads_of(r: &RunResult, ws: &[WorkloadEcho]) -> Threads {
    let lists: Option<Vec<&Vec<usize>>> = ws.iter().map(|w| w.workers.as_ref()).collect();
    let one_each = |w: &WorkloadEcho, l: &Vec<usize>| w.streams as usize == l.len();
    let Some(lists) = lists.filter(|l| !l.is_empty()) else {
        // Not recorded (one workload, or a result older than the field).
        let exact = matches!(ws, [w] if w.streams as usize == r.workers);
        return Threads::PerTarget { exact };
    };
    let shared = ws.len() > 1
        && ws
            .iter()
            .zip(&lists)
            .all(|(w, l)| *l == lists[0] && one_each(w, l));
    if shared {
        return Threads::Shared(lists[0].len());
    }
    let mut all: Vec<usize> = lists.iter().flat_map(|l| l.iter().copied()).collect();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    let exact = all.len() == n && ws.iter().zip(&lists).all(|(w, l)| one_each(w, l));
    Threads::PerTarget { exact }
}

/// The run's profile, in diskspd's `TimeSpan`/`Targets`/`Target` elements.
fn profile_timespan(x: &mut Xml, r: &RunResult, paths: &Paths, step_ms: u64) {
    let ws = echoes(r, paths);
    let threads = threads_of(r, &ws);
    x.open("TimeSpan");
    x.leaf("MeasureLatency", "true");
    x.leaf("CalculateIopsStdDev", "true");
    x.leaf("Duration", r.duration_s.round());
    x.leaf("Warmup", r.warmup_s.round());
    x.leaf("Cooldown", 0);
    match threads {
        Threads::Shared(n) => x.leaf("ThreadCount", n),
        Threads::PerTarget { exact } => {
            if !exact {
                x.line(&format!(
                    "<!-- ioscope ran these targets' {} streams on {} workers; a diskspd \
                     profile gives each stream a thread of its own -->",
                    r.streams, r.workers
                ));
            }
            x.leaf("ThreadCount", 0);
        }
    }
    x.leaf("IoBucketDuration", step_ms);
    x.open("Targets");
    for w in ws {
        profile_target(x, &w, threads);
    }
    x.close("Targets");
    x.close("TimeSpan");
}

fn profile_target(x: &mut Xml, w: &WorkloadEcho, threads: Threads) {
    use crate::result::{AccessPattern, Rate, SeqLayout};
    let bs = w.bs.max_bytes();
    x.open("Target");
    x.leaf("Path", &w.target);
    x.leaf("BlockSize", bs);
    x.leaf("BaseFileOffset", w.offset_bytes);
    match w.pattern {
        AccessPattern::Random => {
            x.leaf("Random", w.align_bytes.unwrap_or(bs));
            // Mixed random/sequential (-rs): diskspd writes the ratio only below 100.
            let pct = w.declared.get("random_pct").and_then(|v| v.as_f64());
            if let Some(p) = pct.filter(|&p| p < 100.0) {
                x.leaf("RandomRatio", p.round());
            }
        }
        AccessPattern::Sequential => {
            x.leaf("StrideSize", (bs as i64 + w.seq_gap_bytes).max(0));
            x.leaf("InterlockedSequential", w.seq_layout == SeqLayout::Shared);
        }
    }
    x.leaf("ThreadStride", w.offset_increment_bytes);
    x.leaf(
        "MaxFileSize",
        w.size_bytes.map_or(0, |s| s + w.offset_bytes),
    );
    x.leaf("RequestCount", w.qd);
    x.leaf("WriteRatio", 100 - u32::from(w.read_pct));
    if let Rate::Iops(iops) = w.rate {
        x.line(&format!(
            "<Throughput unit=\"IOPS\">{:.0}</Throughput>",
            iops / f64::from(w.streams.max(1))
        ));
    }
    // Under `<ThreadCount>` diskspd writes (and takes no other than) 1 per target.
    let per_file = match threads {
        Threads::Shared(_) => 1,
        Threads::PerTarget { .. } => w.streams,
    };
    x.leaf("ThreadsPerFile", per_file);
    x.close("Target");
}

/// The run's interval as planned (its plan's `interval_ns`, by the run's name), else
/// as its first measured row lasted, which can overrun the plan by a millisecond.
fn interval_ms(doc: &ResultDoc, r: &RunResult) -> u64 {
    let runs = doc.plan.as_ref().and_then(|p| p.get("runs")?.as_array());
    let planned = runs
        .into_iter()
        .flatten()
        .find(|p| p.get("name").and_then(|n| n.as_str()) == Some(r.name.as_str()))
        .and_then(|p| p.get("interval_ns")?.as_u64());
    planned.map_or_else(
        || {
            r.intervals
                .iter()
                .find(|i| !i.warmup)
                .map_or(1000, |i| (i.duration_s * 1000.0).round() as u64)
        },
        |ns| ns / 1_000_000,
    )
}

/// One run's measured figures: counts per thread and target, latency, IOPS.
fn timespan(x: &mut Xml, r: &RunResult, paths: &Paths, step_ms: u64) {
    x.open("TimeSpan");
    if r.totals.all.ios == 0 && r.interrupted {
        x.leaf(
            "Error",
            "The test was interrupted before the measurements began. No results are displayed.",
        );
        x.close("TimeSpan");
        return;
    }
    x.leaf("TestTimeSeconds", format!("{:.2}", r.duration_s));
    x.leaf("ThreadCount", r.workers);
    x.leaf("RequestCount", 0);
    x.leaf("ProcCount", r.cpu.online_cpus.unwrap_or(0));
    x.open("CpuUtilization");
    x.open("Average");
    let busy = r.cpu.system_pct;
    x.leaf("UsagePercent", format!("{busy:.2}"));
    x.leaf("UserPercent", format!("{:.2}", r.cpu.user_pct));
    x.leaf("KernelPercent", format!("{:.2}", r.cpu.sys_pct));
    x.leaf("IdlePercent", format!("{:.2}", (100.0 - busy).max(0.0)));
    x.close("Average");
    x.close("CpuUtilization");
    latency(x, &r.totals.read, &r.totals.write);
    iops(x, r, step_ms);
    threads(x, r, paths);
    x.close("TimeSpan");
}

/// Per thread (worker), per target (workload): diskspd's counts.
fn threads(x: &mut Xml, r: &RunResult, paths: &Paths) {
    let paths: Vec<String> = echoes(r, paths).into_iter().map(|w| w.target).collect();
    for t in &r.threads {
        x.open("Thread");
        x.leaf("Id", t.worker);
        for w in &t.workloads {
            x.open("Target");
            x.leaf(
                "Path",
                paths.get(w.workload as usize).map_or("", String::as_str),
            );
            x.leaf("BytesCount", w.read_bytes + w.write_bytes);
            x.leaf("FileSize", 0);
            x.leaf("IOCount", w.read_ios + w.write_ios);
            x.leaf("ReadBytes", w.read_bytes);
            x.leaf("ReadCount", w.read_ios);
            x.leaf("WriteBytes", w.write_bytes);
            x.leaf("WriteCount", w.write_ios);
            x.close("Target");
        }
        x.close("Thread");
    }
}

/// A direction's histogram, rebuilt from the result's encoding.
fn histogram(t: &OpTotals) -> Option<LatencyHistogram> {
    let h = hdr::decode(t.hdr.as_deref()?).ok()?;
    if h.is_empty() {
        return None;
    }
    LatencyHistogram::from_hdr(&h, Moments::of_summary_us(&t.latency_us, t.ios))
}

/// `<Latency>`: averages and diskspd's percentile buckets (0, 1–99, 99.9 … 100).
fn latency(x: &mut Xml, read: &OpTotals, write: &OpTotals) {
    let (r, w) = (histogram(read), histogram(write));
    let mut total = r.clone();
    match (&mut total, &w) {
        (Some(t), Some(w)) => *t += w,
        (None, Some(w)) => total = Some(w.clone()),
        _ => {}
    }
    x.open("Latency");
    let ms = |s: &LatencyStats| (s.mean / 1000.0, s.stddev / 1000.0);
    for (h, s, avg, sd) in [
        (
            &r,
            &read.latency_us,
            "AverageReadMilliseconds",
            "ReadLatencyStdev",
        ),
        (
            &w,
            &write.latency_us,
            "AverageWriteMilliseconds",
            "WriteLatencyStdev",
        ),
    ] {
        if h.is_some() {
            x.leaf(avg, format!("{:.3}", ms(s).0));
            x.leaf(sd, format!("{:.3}", ms(s).1));
        }
    }
    if let Some(t) = &total {
        x.leaf(
            "AverageTotalMilliseconds",
            format!("{:.3}", t.mean_ns() / 1e6),
        );
        x.leaf("LatencyStdev", format!("{:.3}", t.stddev_ns() / 1e6));
    }
    let mut points: Vec<(String, f64)> = vec![("0".into(), 0.0)];
    points.extend((1..=99).map(|p| (p.to_string(), f64::from(p))));
    for (d, p) in [
        (1, 99.9),
        (2, 99.99),
        (3, 99.999),
        (4, 99.9999),
        (5, 99.99999),
    ] {
        points.push((format!("{p:.d$}"), p));
    }
    points.push(("100".into(), 100.0));
    for (name, p) in points {
        x.open("Bucket");
        x.leaf("Percentile", name);
        for (tag, h) in [
            ("ReadMilliseconds", &r),
            ("WriteMilliseconds", &w),
            ("TotalMilliseconds", &total),
        ] {
            if let Some(h) = h {
                x.leaf(tag, format!("{:.3}", h.percentile_ns(p) as f64 / 1e6));
            }
        }
        x.close("Bucket");
    }
    x.close("Latency");
}

/// `<Iops>`: the measured intervals' rates, their standard deviations and one
/// bucket per interval.
fn iops(x: &mut Xml, r: &RunResult, step_ms: u64) {
    let rows: Vec<(f64, f64)> = r
        .intervals
        .iter()
        .filter(|i| !i.warmup)
        .map(|i| {
            let read = i.iops * i.read_pct / 100.0;
            (read, i.iops - read)
        })
        .collect();
    let sd = |v: &[f64]| {
        let n = v.len().max(1) as f64;
        let mean = v.iter().sum::<f64>() / n;
        (v.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / n).sqrt()
    };
    let reads: Vec<f64> = rows.iter().map(|r| r.0).collect();
    let writes: Vec<f64> = rows.iter().map(|r| r.1).collect();
    let totals: Vec<f64> = rows.iter().map(|r| r.0 + r.1).collect();
    x.open("Iops");
    x.leaf("ReadIopsStdDev", format!("{:.3}", sd(&reads)));
    x.leaf("WriteIopsStdDev", format!("{:.3}", sd(&writes)));
    x.leaf("IopsStdDev", format!("{:.3}", sd(&totals)));
    for (i, (rd, wr)) in rows.iter().enumerate() {
        x.line(&format!(
            "<Bucket SampleMillisecond=\"{}\" Read=\"{rd:.0}\" Write=\"{wr:.0}\" Total=\"{:.0}\"/>",
            step_ms * (i as u64 + 1),
            rd + wr
        ));
    }
    x.close("Iops");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(workers: usize, layout: &[(u32, Option<Vec<usize>>)]) -> (RunResult, Vec<WorkloadEcho>) {
        let r = RunResult {
            workers,
            ..RunResult::empty()
        };
        let ws = layout
            .iter()
            .map(|(streams, on)| WorkloadEcho {
                streams: *streams,
                workers: on.clone(),
                ..Default::default()
            })
            .collect();
        (r, ws)
    }

    fn threads(workers: usize, layout: &[(u32, Option<Vec<usize>>)]) -> Threads {
        let (r, ws) = run(workers, layout);
        threads_of(&r, &ws)
    }

    #[test]
    fn the_profile_says_shared_threads_only_when_every_target_ran_on_each_worker() {
        // -F2 over two targets: one stream of each on workers 0 and 1.
        let f2 = [(2, Some(vec![0, 1])), (2, Some(vec![0, 1]))];
        assert_eq!(threads(2, &f2), Threads::Shared(2));
        // VM Fleet's SQL profile: 4 threads on one target, 1 on the other.
        let t41 = [(4, Some(vec![0, 1, 2, 3])), (1, Some(vec![4]))];
        assert_eq!(threads(5, &t41), Threads::PerTarget { exact: true });
        // -F2 -p -o4: eight streams of each target on the same two workers.
        let p = [(8, Some(vec![0, 1])), (8, Some(vec![0, 1]))];
        assert_eq!(threads(2, &p), Threads::PerTarget { exact: false });
        // Overlapping but unequal worker sets are no diskspd layout either.
        let odd = [(2, Some(vec![0, 1])), (2, Some(vec![1, 2]))];
        assert_eq!(threads(3, &odd), Threads::PerTarget { exact: false });
        // One workload (no per-workload echo of its workers): exact when each
        // stream had a worker.
        assert_eq!(threads(3, &[(3, None)]), Threads::PerTarget { exact: true });
        assert_eq!(
            threads(2, &[(3, None)]),
            Threads::PerTarget { exact: false }
        );
    }
}
