//! diskspd's XML result (`-Rxml`), written from an ioscope result so that the tools
//! built around diskspd (VM Fleet's collectors, PerfKitBenchmarker's parser,
//! PowerShell scripts reading `Results/TimeSpan/Thread/Target`) read ioscope's runs.
//!
//! The element names and nesting are diskspd's (its XmlResultParser and profile
//! writer); what ioscope does not measure is left out rather than made up: per-thread
//! counts come from the result's `threads` (one worker per diskspd thread in a
//! translated line), latency only at the TimeSpan level (ioscope keeps no per-thread
//! latency), IOPS buckets from the run's interval rows. The `<Profile>` it holds is
//! [`profile`]'s. See docs/compat-diskspd.md.

mod hot_ranges;
mod profile;

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

    /// `<!-- text -->`; a `--`, which a comment cannot hold, loses its second dash.
    fn comment(&mut self, text: &str) {
        self.line(&format!("<!-- {} -->", text.replace("--", "-")));
    }

    fn line(&mut self, s: &str) {
        self.out.push_str(&"  ".repeat(self.depth));
        self.out.push_str(s);
        self.out.push('\n');
    }
}

/// What the writer reads of the result's plan, kept there as JSON
/// (`ResultDoc::plan`): each target's path, size and caching, each run's interval,
/// seed and CPUs. Without a plan (an older result) the elements they give are left out.
struct PlanView<'a> {
    plan: Option<&'a serde_json::Value>,
}

impl<'a> PlanView<'a> {
    /// The entry of list `key` (`targets`, `runs`) named `name`.
    fn named(&self, key: &str, name: &str) -> Option<&'a serde_json::Value> {
        let list = self.plan?.get(key)?.as_array()?;
        list.iter()
            .find(|v| v.get("name").and_then(|n| n.as_str()) == Some(name))
    }

    fn run(&self, name: &str) -> Option<&'a serde_json::Value> {
        self.named("runs", name)
    }

    /// The path target `name` stands for (the name when the plan does not say).
    fn path(&self, name: &str) -> String {
        let uri = self
            .named("targets", name)
            .and_then(|t| t.get("uri")?.as_str());
        uri.unwrap_or(name).to_string()
    }

    fn target_u64(&self, name: &str, field: &str) -> Option<u64> {
        self.named("targets", name)?.get(field)?.as_u64()
    }

    fn target_bool(&self, name: &str, field: &str) -> bool {
        let t = self.named("targets", name).and_then(|t| t.get(field));
        t.and_then(|v| v.as_bool()).unwrap_or(false)
    }
}

/// The whole result as diskspd's `<Results>`: one `TimeSpan` per run.
pub fn render(doc: &ResultDoc) -> String {
    let mut x = Xml {
        out: String::new(),
        depth: 0,
    };
    let plan = PlanView {
        plan: doc.plan.as_ref(),
    };
    let steps: Vec<u64> = doc.runs.iter().map(|r| interval_ms(&plan, r)).collect();
    x.open("Results");
    system(&mut x, doc);
    profile::profile(&mut x, &doc.runs, &plan, &steps);
    for (r, &step) in doc.runs.iter().zip(&steps) {
        timespan(&mut x, r, &plan, step);
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

/// The run's workloads in plan order: its own echo each, or the run's when it has one.
fn echoes(r: &RunResult) -> Vec<WorkloadEcho> {
    if r.workloads.is_empty() {
        match &r.workload {
            RunWorkload::Storage(w) => vec![w.clone()],
            RunWorkload::Net(_) => Vec::new(),
        }
    } else {
        r.workloads
            .iter()
            .map(|w| w.settings.clone().unwrap_or_default())
            .collect()
    }
}

/// The run's interval as planned (its plan's `interval_ns`, by the run's name), else
/// as its first measured row lasted, which can overrun the plan by a millisecond.
fn interval_ms(plan: &PlanView, r: &RunResult) -> u64 {
    let planned = plan
        .run(&r.name)
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
fn timespan(x: &mut Xml, r: &RunResult, plan: &PlanView, step_ms: u64) {
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
    threads(x, r, plan);
    x.close("TimeSpan");
}

/// Per thread (worker), per target (workload): diskspd's counts.
fn threads(x: &mut Xml, r: &RunResult, plan: &PlanView) {
    let paths: Vec<String> = echoes(r).iter().map(|w| plan.path(&w.target)).collect();
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
