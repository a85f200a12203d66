//! The metric families of the registry, their label sets and their names: the one
//! place a metric's name, help text and labels are written (docs/metrics.md lists
//! them).

use super::buckets::BucketHistogram;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;
use std::sync::atomic::{AtomicU64, Ordering};

/// The families fed at interval ends: their samples carry the interval's end as
/// their timestamp (see [`Families::fed_at`]).
const FED: [&str; 6] = [
    "ioscope_ios",
    "ioscope_bytes",
    "ioscope_errors",
    "ioscope_latency_seconds",
    "ioscope_connection_",
    "ioscope_path_",
];

/// A workload's I/O in one direction on its target.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct IoLabels {
    pub workload: String,
    /// `read`, `write`, `trim`, or `net` for a network run's whole traffic.
    pub direction: String,
    pub target: String,
}

impl IoLabels {
    pub fn new(workload: &str, direction: &str, target: &str) -> Self {
        IoLabels {
            workload: workload.to_string(),
            direction: direction.to_string(),
            target: target.to_string(),
        }
    }
}

/// A workload's latency in one direction.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LatLabels {
    pub workload: String,
    pub direction: String,
}

/// One connection to a target (its index among that target's connections).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ConnLabels {
    pub target: String,
    pub connection: String,
}

/// One path of a multipath target (its index in the target's path list).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PathLabels {
    pub target: String,
    pub path: String,
}

/// A path's state: one series per state, 1 for the path's current one.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PathStateLabels {
    pub target: String,
    pub path: String,
    pub state: String,
}

/// The states a path is in (`IntervalPath::state`).
const PATH_STATES: [&str; 3] = ["up", "down", "standby"];

/// The build and command info metric's labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct InfoLabels {
    version: String,
    command: String,
}

/// Every family, and the registry that renders them.
pub struct Families {
    registry: Registry,
    pub ios: Family<IoLabels, Counter>,
    pub bytes: Family<IoLabels, Counter>,
    pub errors: Family<IoLabels, Counter>,
    pub latency: Family<LatLabels, BucketHistogram>,
    pub conn_ios: Family<ConnLabels, Counter>,
    pub conn_bytes: Family<ConnLabels, Counter>,
    pub conn_errors: Family<ConnLabels, Counter>,
    pub path_ios: Family<PathLabels, Counter>,
    pub path_errors: Family<PathLabels, Counter>,
    pub path_state: Family<PathStateLabels, Gauge>,
    pub inflight: Gauge<f64, AtomicU64>,
    pub warmup: Gauge,
    pub run: Gauge,
    pub runs: Gauge,
    pub curve_point: Gauge,
    pub round: Gauge,
    /// Unix ms of the last interval end fed (0: none yet).
    fed_at_ms: AtomicU64,
}

impl Families {
    pub fn new(command: &str) -> Self {
        let f = Families {
            registry: Registry::default(),
            ios: Default::default(),
            bytes: Default::default(),
            errors: Default::default(),
            latency: Default::default(),
            conn_ios: Default::default(),
            conn_bytes: Default::default(),
            conn_errors: Default::default(),
            path_ios: Default::default(),
            path_errors: Default::default(),
            path_state: Default::default(),
            inflight: Default::default(),
            warmup: Default::default(),
            run: Default::default(),
            runs: Default::default(),
            curve_point: Default::default(),
            round: Default::default(),
            fed_at_ms: AtomicU64::new(0),
        };
        f.registered(command)
    }

    // fn-length: flat list
    fn registered(mut self, command: &str) -> Self {
        let r = &mut self.registry;
        r.register(
            "ioscope_build",
            "ioscope's version and the command running",
            Info::new(InfoLabels {
                version: env!("CARGO_PKG_VERSION").to_string(),
                command: command.to_string(),
            }),
        );
        r.register(
            "ioscope_ios",
            "I/Os completed without error, warm-up included",
            self.ios.clone(),
        );
        r.register(
            "ioscope_bytes",
            "Bytes moved by completed I/Os",
            self.bytes.clone(),
        );
        r.register(
            "ioscope_errors",
            "I/Os that failed or timed out",
            self.errors.clone(),
        );
        r.register(
            "ioscope_latency_seconds",
            "Latency of completed I/Os from their intended issue time",
            self.latency.clone(),
        );
        r.register(
            "ioscope_connection_ios",
            "I/Os completed on one connection to a target",
            self.conn_ios.clone(),
        );
        r.register(
            "ioscope_connection_bytes",
            "Bytes moved on one connection to a target",
            self.conn_bytes.clone(),
        );
        r.register(
            "ioscope_connection_errors",
            "I/Os failed on one connection to a target",
            self.conn_errors.clone(),
        );
        r.register(
            "ioscope_path_ios",
            "I/Os answered by one path of a multipath target",
            self.path_ios.clone(),
        );
        r.register(
            "ioscope_path_errors",
            "I/Os failed on one path of a multipath target",
            self.path_errors.clone(),
        );
        r.register(
            "ioscope_path_state",
            "1 for a path's state at the last interval end (up, down, standby)",
            self.path_state.clone(),
        );
        r.register(
            "ioscope_inflight_requests",
            "Requests in flight, averaged over the last interval (Little's law)",
            self.inflight.clone(),
        );
        r.register(
            "ioscope_warmup",
            "1 while the current run is in its warm-up",
            self.warmup.clone(),
        );
        r.register(
            "ioscope_run",
            "The run in progress, from 1 (sweep step, curve point, round, ...)",
            self.run.clone(),
        );
        r.register(
            "ioscope_runs_planned",
            "Runs the command plans (0 when not known ahead)",
            self.runs.clone(),
        );
        r.register(
            "ioscope_curve_point",
            "A curve's point in progress (0: its max run)",
            self.curve_point.clone(),
        );
        r.register(
            "ioscope_round",
            "The steady-state or PTS round in progress, from 1",
            self.round.clone(),
        );
        self
    }

    /// The registry in the OpenMetrics text format.
    pub fn render(&self) -> String {
        let at_ms = self.fed_at_ms.load(Ordering::Relaxed);
        stamped(&self.open_metrics(), at_ms, |ms| {
            format!("{}.{:03}", ms / 1000, ms % 1000)
        })
    }

    fn open_metrics(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail; a metric that could not encode would
        // leave the body short, which a scraper reports.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    /// Records that the counters now hold everything up to an interval that ended
    /// at `unix_s`. Their samples carry that time: a counter moves only at interval
    /// ends, and stamped with the scrape's time instead, a rate over a few scrapes
    /// would count one interval too many or too few whenever a scrape fell close
    /// to an interval end (25 % off over a 5 s window of 1 s intervals).
    pub fn fed_at(&self, unix_s: f64) {
        let ms = (unix_s * 1e3).round().max(0.0) as u64;
        self.fed_at_ms.fetch_max(ms, Ordering::Relaxed);
    }

    /// The registry in Prometheus' older text format (0.0.4), for a scraper that does
    /// not ask for OpenMetrics (curl, `promtool check metrics`): the same samples;
    /// a counter's HELP and TYPE name its `_total` series, an info metric is a gauge
    /// named `…_info`, and OpenMetrics' `# UNIT` and `# EOF` lines are left out.
    pub fn render_text(&self) -> String {
        let at_ms = self.fed_at_ms.load(Ordering::Relaxed);
        stamped(&to_text_format(&self.open_metrics()), at_ms, |ms| {
            ms.to_string()
        })
    }

    /// Marks `state` as the path's current state.
    pub fn set_path_state(&self, l: &PathLabels, state: &str) {
        for s in PATH_STATES {
            let labels = PathStateLabels {
                target: l.target.clone(),
                path: l.path.clone(),
                state: s.to_string(),
            };
            self.path_state
                .get_or_create(&labels)
                .set(i64::from(s == state));
        }
    }
}

/// `text` with the samples of the [`FED`] families timestamped `at_ms` (written by
/// `form`: seconds in OpenMetrics, milliseconds in the older format); unchanged
/// before the first interval.
fn stamped(text: &str, at_ms: u64, form: impl Fn(u64) -> String) -> String {
    if at_ms == 0 {
        return text.to_string();
    }
    let stamp = form(at_ms);
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    for line in text.lines() {
        out.push_str(line);
        if !line.starts_with('#') && FED.iter().any(|f| line.starts_with(f)) {
            out.push(' ');
            out.push_str(&stamp);
        }
        out.push('\n');
    }
    out
}

/// OpenMetrics text as Prometheus text format 0.0.4 (see [`Families::render_text`]).
fn to_text_format(open_metrics: &str) -> String {
    let mut out = String::with_capacity(open_metrics.len());
    let mut help: Option<&str> = None;
    for line in open_metrics.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            help = Some(rest);
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, "untyped"));
            let (name, kind) = match kind {
                "counter" => (format!("{name}_total"), "counter"),
                "info" => (format!("{name}_info"), "gauge"),
                k => (name.to_string(), k),
            };
            if let Some(h) = help.take() {
                let text = h.split_once(' ').map_or("", |(_, t)| t);
                out.push_str(&format!("# HELP {name} {text}\n"));
            }
            out.push_str(&format!("# TYPE {name} {kind}\n"));
            continue;
        }
        if line.starts_with("# UNIT ") || line == "# EOF" {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_older_text_format_names_counters_and_info_as_their_series() {
        let f = Families::new("run");
        f.ios
            .get_or_create(&IoLabels::new("w", "read", "null:1g"))
            .inc_by(7);
        let text = f.render_text();
        for want in [
            "# HELP ioscope_build_info ioscope's version and the command running.\n\
             # TYPE ioscope_build_info gauge\n\
             ioscope_build_info{version=",
            "# TYPE ioscope_ios_total counter\n\
             ioscope_ios_total{workload=\"w\",direction=\"read\",target=\"null:1g\"} 7\n",
            "# TYPE ioscope_warmup gauge\nioscope_warmup 0\n",
        ] {
            assert!(text.contains(want), "{want}\n---\n{text}");
        }
        assert!(!text.contains("# EOF"));
        assert!(f.render().ends_with("# EOF\n"));
        // Fed: the interval's end stamps the counters (not the gauges), in ms in the
        // older format and in seconds in OpenMetrics.
        f.fed_at(1_700_000_000.25);
        let text = f.render_text();
        assert!(
            text.contains("target=\"null:1g\"} 7 1700000000250\n"),
            "{text}"
        );
        assert!(text.contains("\nioscope_warmup 0\n"), "{text}");
        assert!(f.render().contains("} 7 1700000000.250\n"));
    }
}
