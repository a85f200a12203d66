//! The multipath part of the HTML report: the "pull one of four links" picture. Each
//! path's throughput is stacked over time (`runs[].intervals[].paths[].mbps`), so a
//! failing path shows as its layer thinning to nothing while the others widen, with
//! the path events (`runs[].events[]`: down, up, timeout, reissue) flagged on it and
//! every interval in which a path was down shaded. Under it, on the same time axis,
//! the latency from the intended time (p50, p99, max per interval) shows what the
//! workload paid for the failover, next to the one-line failover cost, the per-path
//! totals and the event list. Like the rest of the report it only places numbers the
//! result holds; stacking (running totals of the per-path MB/s) is the one
//! arithmetic it does.

use std::fmt::Write;

use super::format::{esc, human};
use super::svg::{Axis, Band, Chart, Mark, Rule, RuleAt, Series, PALETTE};
use crate::result::{Interval, RunEvent, RunResult};

const DOWN_COLOR: &str = "#f4c7c3";
/// Flag colour and height (as a fraction of the chart's top) of each event kind.
const EVENT_KINDS: [(&str, &str, f64); 4] = [
    ("down", "#d62728", 0.97),
    ("timeout", "#e6780b", 0.89),
    ("reissue", "#9467bd", 0.81),
    ("up", "#2a9d3a", 0.73),
];
/// Events listed in the table; the rest are counted.
const EVENT_ROWS: usize = 60;

/// The section for a run over several paths; empty for any other run.
pub(crate) fn paths_section(run: &RunResult, id: &str) -> String {
    if run.paths.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h3>Paths</h3>");
    if let Some(f) = &run.failover {
        let _ = writeln!(
            out,
            "<p class=\"failover\">{}</p>",
            esc(&super::terminal::failover_line(f))
        );
    }
    let ivs: Vec<&Interval> = run
        .intervals
        .iter()
        .filter(|iv| iv.paths.len() == run.paths.len())
        .collect();
    if !ivs.is_empty() {
        out.push_str(&throughput_chart(run, &ivs, id).render());
        out.push_str(&latency_chart(run, &ivs, id).render());
        out.push_str("<p class=\"caption\">Top: each path's MB/s, stacked (path 0 at the bottom), one point per interval at its end. Flags: path events (down, timeout, re-issue, up; hover for the path and detail). Shaded: intervals in which a path was down. Bottom: latency from the intended issue time over the same intervals, so the cost of a failover shows where the flags are.</p>\n");
    }
    paths_table(&mut out, run);
    events_table(&mut out, &run.events);
    out
}

/// The x axis both charts share.
fn time_axis(ivs: &[&Interval]) -> Axis {
    Axis::linear(
        "time since start (s)",
        ivs.iter()
            .flat_map(|iv| [iv.t_s, iv.t_s - iv.duration_s])
            .collect::<Vec<_>>(),
    )
}

/// Shaded spans of the intervals in which some path was down (adjacent ones joined).
fn down_bands(ivs: &[&Interval]) -> Vec<Band> {
    let mut spans: Vec<(f64, f64, Vec<String>)> = Vec::new();
    for iv in ivs {
        let down: Vec<String> = iv
            .paths
            .iter()
            .enumerate()
            .filter(|(_, p)| p.state == "down")
            .map(|(k, _)| format!("p{k}"))
            .collect();
        if down.is_empty() {
            continue;
        }
        let x0 = iv.t_s - iv.duration_s;
        match spans.last_mut() {
            Some(last) if (last.1 - x0).abs() < 1e-6 => {
                last.1 = iv.t_s;
                for d in down {
                    if !last.2.contains(&d) {
                        last.2.push(d);
                    }
                }
            }
            _ => spans.push((x0, iv.t_s, down)),
        }
    }
    spans
        .into_iter()
        .map(|(x0, x1, who)| Band {
            kind: "path-down".into(),
            label: format!("path down ({})", who.join(", ")),
            x0,
            x1,
            color: DOWN_COLOR.into(),
        })
        .collect()
}

fn throughput_chart(run: &RunResult, ivs: &[&Interval], id: &str) -> Chart {
    let n = run.paths.len();
    // Running totals: layer k's top is the sum of paths 0..=k.
    let tops: Vec<Vec<f64>> = ivs
        .iter()
        .map(|iv| {
            iv.paths
                .iter()
                .scan(0.0, |acc, p| {
                    *acc += p.mbps;
                    Some(*acc)
                })
                .collect()
        })
        .collect();
    let highest = tops.iter().filter_map(|t| t.last().copied());
    let y = Axis::linear("MB/s (10^6 B/s)", highest.collect::<Vec<_>>());
    let mut c = Chart::new(
        &format!("{id}-paths"),
        "Throughput per path (stacked)",
        time_axis(ivs),
        y,
    );
    c.bands = down_bands(ivs);
    // Tallest layer first, so each lower layer paints over it.
    for k in (0..n).rev() {
        let name = &run.paths[k].name;
        let mut s = Series::line(
            &format!("path_{name}_mbps"),
            name,
            PALETTE[k % PALETTE.len()],
            ivs.iter()
                .zip(&tops)
                .map(|(iv, t)| (iv.t_s, t[k]))
                .collect(),
        );
        s.mark = Mark::Area;
        s.tips = ivs
            .iter()
            .map(|iv| {
                let p = &iv.paths[k];
                format!(
                    "{name} t={} s: {} MB/s, {} I/Os, {}",
                    human(iv.t_s),
                    human(p.mbps),
                    p.ios,
                    p.state
                )
            })
            .collect();
        c.series.push(s);
    }
    let top = c.y.hi;
    for s in event_flags(&run.events, top, "p") {
        c.series.push(s);
    }
    c
}

/// One flag series per event kind that occurred, at a fixed height per kind; a
/// flag's tip names the path or connection as `who` and its index ("p0").
pub(crate) fn event_flags(events: &[RunEvent], top: f64, who: &str) -> Vec<Series> {
    let mut out = Vec::new();
    for (kind, color, height) in EVENT_KINDS {
        let evs: Vec<&RunEvent> = events.iter().filter(|e| e.kind == kind).collect();
        if evs.is_empty() {
            continue;
        }
        let mut s = Series::line(
            &format!("event_{kind}"),
            kind,
            color,
            evs.iter().map(|e| (e.t_s, top * height)).collect(),
        );
        s.mark = Mark::Flags;
        s.tips = evs
            .iter()
            .map(|e| {
                let t = human(e.t_s);
                format!("t={t} s: {who}{} {}: {}", e.path, e.kind, e.detail)
            })
            .collect();
        out.push(s);
    }
    out
}

fn latency_chart(run: &RunResult, ivs: &[&Interval], id: &str) -> Chart {
    type Pick = fn(&Interval) -> f64;
    let picks: [(&str, &str, Pick, bool); 3] = [
        ("lat_p50_us", "p50", |iv| iv.lat_us.p50, false),
        ("lat_p99_us", "p99", |iv| iv.lat_us.p99, true),
        ("lat_max_us", "max", |iv| iv.lat_us.max, false),
    ];
    let values: Vec<f64> = picks
        .iter()
        .flat_map(|(_, _, pick, _)| ivs.iter().map(|iv| pick(iv)))
        .collect();
    let mut c = Chart::new(
        &format!("{id}-paths-latency"),
        "Latency from the intended time (p50 / p99 / max)",
        time_axis(ivs),
        Axis::auto("latency (µs)", &values, 30.0),
    );
    c.bands = down_bands(ivs);
    for (k, (name, label, pick, dashed)) in picks.iter().enumerate() {
        let mut s = Series::line(
            name,
            label,
            PALETTE[k % PALETTE.len()],
            ivs.iter().map(|iv| (iv.t_s, pick(iv))).collect(),
        );
        s.dashed = *dashed;
        s.tips = ivs
            .iter()
            .map(|iv| format!("t={} s: {label} {} µs", human(iv.t_s), human(pick(iv))))
            .collect();
        c.series.push(s);
    }
    if let Some(f) = run.failover.as_ref().filter(|f| f.intervals > 0) {
        c.rules.push(Rule {
            kind: "normal-p99".into(),
            label: format!("normal p99 {} µs", human(f.normal_p99_us)),
            at: RuleAt::Y(f.normal_p99_us),
            color: "#5f6b73".into(),
            dashed: true,
        });
    }
    c
}

fn paths_table(out: &mut String, run: &RunResult) {
    let total: u64 = run.paths.iter().map(|p| p.ios).sum();
    out.push_str("<table class=\"paths\"><thead><tr><th>path</th><th>URI</th><th>I/Os</th><th>share</th><th>MB</th><th>errors</th><th>re-issued</th><th>state at end</th></tr></thead><tbody>");
    for p in &run.paths {
        let _ = write!(
            out,
            "<tr><td>{}</td><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}%</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&p.name),
            esc(&p.uri),
            p.ios,
            human(100.0 * p.ios as f64 / total.max(1) as f64),
            human(p.bytes as f64 / 1e6),
            p.errors,
            p.reissued,
            esc(&p.state)
        );
    }
    out.push_str("</tbody></table>\n");
}

/// Whose events a table lists: its title, the column's name and the index prefix.
pub(crate) struct EventsOf {
    pub title: &'static str,
    pub column: &'static str,
    pub who: &'static str,
}

const PATH_EVENTS: EventsOf = EventsOf {
    title: "Path events",
    column: "path",
    who: "p",
};

fn events_table(out: &mut String, events: &[RunEvent]) {
    if events.is_empty() {
        out.push_str("<p class=\"caption\">No path events: every path stayed up.</p>\n");
        return;
    }
    list_events(out, events, &PATH_EVENTS);
}

/// The table of `events` (the first [`EVENT_ROWS`], the rest counted).
pub(crate) fn list_events(out: &mut String, events: &[RunEvent], of: &EventsOf) {
    let _ = write!(
        out,
        "<details open><summary>{}</summary><table class=\"events\"><thead><tr><th>t (s)</th><th>{}</th><th>event</th><th>detail</th></tr></thead><tbody>",
        of.title, of.column
    );
    for e in events.iter().take(EVENT_ROWS) {
        let _ = write!(
            out,
            "<tr class=\"ev-{k}\"><td class=\"n\">{:.3}</td><td>{}{}</td><td>{k}</td><td>{}</td></tr>",
            e.t_s,
            of.who,
            e.path,
            esc(&e.detail),
            k = esc(&e.kind)
        );
    }
    out.push_str("</tbody></table>");
    if events.len() > EVENT_ROWS {
        let _ = write!(
            out,
            "<p class=\"caption\">… and {} more events in the JSON.</p>",
            events.len() - EVENT_ROWS
        );
    }
    out.push_str("</details>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::tests::series_counts;
    use crate::result::paths::{FailoverCost, IntervalPath, PathResult};

    /// Four paths at 100 MB/s each over 20 half-second intervals; path 2 down over
    /// t = 4 … 7 s, with its events.
    fn four_links() -> RunResult {
        let mut run = crate::report::testdata::run("links", 1000.0, 900.0, 20, 0, 0.0, 1.0, 1);
        for (k, iv) in run.intervals.iter_mut().enumerate() {
            iv.t_s = (k + 1) as f64 * 0.5;
            iv.duration_s = 0.5;
            let down = (4.0..7.0).contains(&(iv.t_s - 0.25));
            iv.paths = (0..4)
                .map(|p| {
                    let cut = p == 2 && down;
                    IntervalPath {
                        ios: if cut { 0 } else { 50 },
                        mbps: if cut { 0.0 } else { 100.0 },
                        service_us_p99: 900.0,
                        errors: 0,
                        state: if cut { "down" } else { "up" }.into(),
                    }
                })
                .collect();
        }
        run.paths = (0..4)
            .map(|p| PathResult {
                name: format!("p{p}"),
                uri: format!("nbd://127.0.0.1:1090{p}"),
                ios: 1000,
                bytes: 1000 << 20,
                state: "up".into(),
                ..Default::default()
            })
            .collect();
        let ev = |t_s: f64, kind: &str| RunEvent {
            t_s,
            path: 2,
            kind: kind.into(),
            detail: format!("{kind} <detail>"),
            ..Default::default()
        };
        run.events = vec![
            ev(4.0, "timeout"),
            ev(4.0, "down"),
            ev(4.0, "reissue"),
            ev(7.0, "up"),
        ];
        run.failover = Some(FailoverCost {
            intervals: 6,
            window_s: 3.0,
            normal_p99_us: 1200.0,
            normal_max_us: 2000.0,
            window_ios: 900,
            ios_over_p99: 8,
            extra_ms: 7990.0,
            max_us: 1_001_000.0,
        });
        run
    }

    #[test]
    fn stacked_layers_one_per_path_with_events_and_down_band() {
        let run = four_links();
        let html = paths_section(&run, "run0");
        let s = series_counts(&html);
        let layers: Vec<_> = s.iter().filter(|x| x.0 == "run0-paths").collect();
        let names: Vec<&str> = layers.iter().map(|x| x.1.as_str()).collect();
        assert_eq!(
            names,
            [
                "path_p3_mbps",
                "path_p2_mbps",
                "path_p1_mbps",
                "path_p0_mbps",
                "event_down",
                "event_timeout",
                "event_reissue",
                "event_up"
            ]
        );
        for (_, name, declared, found) in &s {
            assert_eq!(declared, found, "{name}");
        }
        assert!(layers.iter().take(4).all(|x| x.2 == 20));
        assert!(layers.iter().skip(4).all(|x| x.2 == 1));
        assert_eq!(html.matches("class=\"area\"").count(), 4);
        // One shaded span for path 2's six down intervals.
        let chart = html.split("data-chart=\"run0-paths\"").nth(1).unwrap();
        let chart = chart.split("</figure>").next().unwrap();
        assert_eq!(chart.matches("data-band=\"path-down\"").count(), 1);
        assert!(chart.contains("path down (p2)"));
        // The top layer reaches the sum of the four paths (400 MB/s) where all are up.
        assert!(html.contains("p3 t=0.5 s: 100 MB/s, 50 I/Os, up"));
        assert!(html.contains("p2 t=4.5 s: 0 MB/s, 0 I/Os, down"));
        assert!(html.contains("down &lt;detail&gt;"), "details are escaped");
        assert!(html.contains("failover cost: 8 of 900 I/Os"));
        assert!(html.contains("data-rule=\"normal-p99\""));
        let lat: Vec<_> = s.iter().filter(|x| x.0 == "run0-paths-latency").collect();
        assert_eq!(lat.len(), 3);
    }

    #[test]
    fn a_run_with_one_path_has_no_section() {
        let run = crate::report::testdata::run("one", 1000.0, 900.0, 5, 0, 0.0, 1.0, 1);
        assert!(paths_section(&run, "run0").is_empty());
    }
}
