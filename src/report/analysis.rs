//! HTML sections for results that are more than a list of independent runs: the
//! latency-vs-load curve of `ioscope curve` (with its SLA answer), parameter sweeps
//! (`--bs 4k,8k,…`, `--qd 1,4,16`), and the rounds of a steady-state search.
//!
//! Like the rest of the HTML report they plot only numbers stored in the result:
//! curve points, run totals, steady-state rounds. Reference lines and bands are drawn
//! at stored values (an SLA bound, the judged window, the window average ± 20%); the
//! trade-off is that a sweep is recognised from the stored workloads alone, so only
//! runs whose settings differ in exactly one swept key (bs, qd, streams, read_pct)
//! get a sweep chart — a two-parameter matrix falls back to the per-run bars.

use std::fmt::Write;

use super::format::{esc, human};
use super::svg::{Axis, Band, Chart, HBand, Mark, Marker, Rule, RuleAt, Series, TickUnit, PALETTE};
use crate::result::{
    BlockSizes, Curve, CurvePoint, ResultDoc, RunResult, SteadyState, WorkloadEcho,
};

const SLA_COLOR: &str = "#b3261e";
const WINDOW_COLOR: &str = "#e3ecf7";
const TOLERANCE_COLOR: &str = "#e2f1e4";
const AVERAGE_COLOR: &str = "#2a9d3a";
/// The closed-loop max point of a curve (PALETTE's grey: readable in both themes).
const MAX_COLOR: &str = "#5f6b73";

/// A latency bound as a person writes it: "1 ms", "0.5 ms", "300 µs".
pub(crate) fn bound_label(us: f64) -> String {
    if us >= 1000.0 {
        format!("{} ms", human(us / 1000.0))
    } else {
        format!("{} µs", human(us))
    }
}

/// "p99 ≤ 0.5 ms" for an SLA.
fn sla_condition(percentile: &str, bound_us: f64) -> String {
    format!("{percentile} ≤ {}", bound_label(bound_us))
}

/// The curve sections, one per curve: the chart, the SLA sentence and the table of
/// points. With several (vdbench's `iorate=curve` on several rds), each is headed by
/// its max run's name and the ids after the first are numbered (`curve-2`, …).
pub(crate) fn curve_sections(doc: &ResultDoc) -> String {
    let many = doc.curves.len() > 1;
    let mut out = String::new();
    for (k, curve) in doc.curves.iter().enumerate() {
        let id = if k == 0 {
            "curve".to_string()
        } else {
            format!("curve-{}", k + 1)
        };
        let of = curve
            .points
            .first()
            .and_then(|p| doc.runs.get(p.run))
            .filter(|_| many)
            .map(|r| format!(": {}", esc(&r.name)))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<section id=\"{id}\"><h2>Latency against load{of}</h2>"
        );
        curve_body(&mut out, doc, curve, &id);
        out.push_str("</section>\n");
    }
    out
}

/// One curve's SLA sentence, chart and table.
fn curve_body(out: &mut String, doc: &ResultDoc, curve: &Curve, id: &str) {
    if let Some(sla) = &curve.sla {
        let cond = sla_condition(&sla.percentile, sla.bound_us);
        if sla.iops > 0.0 {
            let probes = match sla.probes.len() {
                0 => "the max run already met the bound".to_string(),
                1 => "found with 1 probe run".to_string(),
                n => format!("found with {n} probe runs"),
            };
            let _ = write!(
                out,
                "<p class=\"sla\"><strong>{} IOPS at {}</strong> (measured {} {} µs; {probes}).</p>",
                human(sla.iops),
                esc(&cond),
                esc(&sla.percentile),
                human(sla.measured_us),
            );
        } else {
            let _ = write!(
                out,
                "<p class=\"sla warn\"><strong>No rate keeps {}</strong>: even the lowest of {} probe runs exceeded it.</p>",
                esc(&cond),
                sla.probes.len(),
            );
        }
    }
    if let Some(why) = &curve.stopped {
        let _ = write!(out, "<p class=\"warn\">The curve {}.</p>", esc(why));
    }
    if !curve.points.is_empty() {
        let mut chart = curve_chart(curve);
        chart.id = id.to_string();
        out.push_str(&chart.render());
        out.push_str("<p class=\"caption\">Latency percentiles against the IOPS achieved: the lines join the runs at requested rates; the grey squares are the closed-loop max run (p50, p99, p99.9), which had no schedule to keep.");
        if curve.sla.is_some() {
            out.push_str(" Red dashed: the SLA bound and the rate the search found.");
        }
        out.push_str("</p>\n");
        out.push_str(&curve_table(curve, &doc.runs));
    }
}

/// Latency (p50, p99, p99.9) against achieved IOPS, one point per curve point.
pub(crate) fn curve_chart(curve: &Curve) -> Chart {
    let mut pts: Vec<_> = curve.points.iter().collect();
    pts.sort_by(|a, b| a.achieved_iops.total_cmp(&b.achieved_iops));
    type Pick = fn(&crate::result::LatencyStats) -> f64;
    let picks: [(&str, &str, Pick, bool); 3] = [
        ("lat_p50_us", "p50", |l| l.p50, false),
        ("lat_p99_us", "p99", |l| l.p99, false),
        ("lat_p99_9_us", "p99.9", |l| l.p99_9, true),
    ];
    let mut xs: Vec<f64> = pts.iter().map(|p| p.achieved_iops).collect();
    let mut ys: Vec<f64> = pts
        .iter()
        .flat_map(|p| picks.iter().map(|(_, _, f, _)| f(&p.latency_us)))
        .collect();
    if let Some(sla) = &curve.sla {
        xs.push(sla.iops);
        // Room above the bound line so it and its label stay off the frame.
        ys.push(sla.bound_us * 1.15);
    }
    let y = Axis::auto("latency (µs)", &ys, 20.0);
    let y = if y.scale == super::svg::Scale::Log10 {
        Axis::log10("latency (µs, log scale)", ys.iter().copied())
    } else {
        y
    };
    let mut c = Chart::new(
        "curve",
        "Latency against achieved IOPS",
        Axis::linear("achieved IOPS", xs),
        y,
    );
    c.height = 300.0;
    // The lines join the points at requested rates; the closed-loop max run is a
    // different kind of measurement (no schedule, its own queueing), so it stands
    // apart as squares instead of extending the lines.
    let (max, rated): (Vec<&CurvePoint>, Vec<&CurvePoint>) =
        pts.iter().partition(|p| p.requested_iops <= 0.0);
    for (k, (name, label, pick, dashed)) in picks.iter().enumerate() {
        if rated.is_empty() {
            break;
        }
        let mut s = Series::line(
            name,
            label,
            PALETTE[k],
            rated
                .iter()
                .map(|p| (p.achieved_iops, pick(&p.latency_us)))
                .collect(),
        );
        s.dashed = *dashed;
        s.tips = rated
            .iter()
            .map(|p| {
                format!(
                    "{}: {} IOPS achieved, {label} {} µs",
                    point_label(p.requested_iops, p.pct_of_max),
                    human(p.achieved_iops),
                    human(pick(&p.latency_us))
                )
            })
            .collect();
        c.series.push(s);
    }
    if !max.is_empty() {
        let points_tips: Vec<((f64, f64), String)> = max
            .iter()
            .flat_map(|p| {
                picks.iter().map(move |(_, label, pick, _)| {
                    (
                        (p.achieved_iops, pick(&p.latency_us)),
                        format!(
                            "closed-loop max: {} IOPS, {label} {} µs",
                            human(p.achieved_iops),
                            human(pick(&p.latency_us))
                        ),
                    )
                })
            })
            .collect();
        let (points, tips) = points_tips.into_iter().unzip();
        let mut s = Series::line("max", "closed-loop max", MAX_COLOR, points);
        s.mark = Mark::Squares;
        s.tips = tips;
        c.series.push(s);
    }
    if let Some(sla) = &curve.sla {
        c.rules.push(Rule {
            kind: "sla-bound".into(),
            label: sla_condition(&sla.percentile, sla.bound_us),
            at: RuleAt::Y(sla.bound_us),
            color: SLA_COLOR.into(),
            dashed: true,
        });
        if sla.iops > 0.0 {
            c.rules.push(Rule {
                kind: "sla-iops".into(),
                label: format!("{} IOPS", human(sla.iops)),
                at: RuleAt::X(sla.iops),
                color: SLA_COLOR.into(),
                dashed: true,
            });
            c.markers.push(Marker {
                kind: "sla".into(),
                label: format!(
                    "{} IOPS at {} {} µs",
                    human(sla.iops),
                    sla.percentile,
                    human(sla.measured_us)
                ),
                x: sla.iops,
                y: sla.measured_us,
                color: SLA_COLOR.into(),
            });
        }
    }
    c
}

/// "max" for the closed-loop run, else the requested share of it ("50%").
fn point_label(requested_iops: f64, pct_of_max: f64) -> String {
    if requested_iops <= 0.0 {
        "max".into()
    } else {
        format!("{}%", human(pct_of_max))
    }
}

fn curve_table(curve: &Curve, runs: &[RunResult]) -> String {
    let mut t = String::from(
        "<table class=\"curve\"><thead><tr><th>point</th><th>run</th><th>requested IOPS</th>\
<th>achieved IOPS</th><th>MB/s</th><th>p50 µs</th><th>p99 µs</th><th>p99.9 µs</th></tr></thead><tbody>",
    );
    for p in &curve.points {
        let run = runs.get(p.run).map_or("", |r| r.name.as_str());
        let requested = if p.requested_iops > 0.0 {
            human(p.requested_iops)
        } else {
            "max".into()
        };
        let _ = write!(
            t,
            "<tr><td>{}</td><td><a href=\"#run-{}\">{}</a></td><td class=\"n\">{}</td>{}{}{}{}{}</tr>",
            point_label(p.requested_iops, p.pct_of_max),
            p.run,
            esc(run),
            requested,
            td(p.achieved_iops),
            td(p.mbps),
            td(p.latency_us.p50),
            td(p.latency_us.p99),
            td(p.latency_us.p99_9),
        );
    }
    t.push_str("</tbody></table>\n");
    t
}

fn td(v: f64) -> String {
    format!("<td class=\"n\">{}</td>", human(v))
}

/// A workload setting runs of a sweep may differ in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SweepKey {
    Bs,
    Qd,
    Streams,
    ReadPct,
}

impl SweepKey {
    const ALL: [SweepKey; 4] = [
        SweepKey::Bs,
        SweepKey::Qd,
        SweepKey::Streams,
        SweepKey::ReadPct,
    ];

    fn title(self) -> &'static str {
        match self {
            SweepKey::Bs => "block size",
            SweepKey::Qd => "queue depth",
            SweepKey::Streams => "streams",
            SweepKey::ReadPct => "read share",
        }
    }

    /// The setting as one number, when the workload has a single value for it (a
    /// block-size split with several sizes has none).
    fn value(self, w: &WorkloadEcho) -> Option<f64> {
        match self {
            SweepKey::Bs => w.bs.single().map(|b| b as f64),
            SweepKey::Qd => Some(w.qd as f64),
            SweepKey::Streams => Some(w.streams as f64),
            SweepKey::ReadPct => Some(w.read_pct as f64),
        }
    }

    /// Whether two workloads differ in this setting.
    fn differs(self, a: &WorkloadEcho, b: &WorkloadEcho) -> bool {
        match self {
            SweepKey::Bs => a.bs != b.bs,
            SweepKey::Qd => a.qd != b.qd,
            SweepKey::Streams => a.streams != b.streams,
            SweepKey::ReadPct => a.read_pct != b.read_pct,
        }
    }

    /// The x axis: log2 for sizes and for counts that are all powers of two.
    fn axis(self, values: &[f64]) -> Axis {
        let pow2 = values
            .iter()
            .all(|v| *v >= 1.0 && v.fract() == 0.0 && (*v as u64).is_power_of_two());
        match self {
            SweepKey::Bs => Axis::log2(
                "block size (bytes, log2 scale)",
                values.iter().copied(),
                TickUnit::Bytes,
            ),
            SweepKey::Qd | SweepKey::Streams if pow2 => Axis::log2(
                &format!("{} (log2 scale)", self.title()),
                values.iter().copied(),
                TickUnit::Count,
            ),
            SweepKey::ReadPct => {
                Axis::linear("reads (% of I/Os)", values.iter().copied().chain([100.0]))
            }
            _ => Axis::linear(self.title(), values.iter().copied()),
        }
    }

    fn show(self, v: f64) -> String {
        match self {
            SweepKey::Bs => super::svg::size_label(v),
            SweepKey::ReadPct => format!("{}% reads", human(v)),
            _ => human(v),
        }
    }
}

/// A sweep: the key that differs and each run's value of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sweep {
    pub key: SweepKey,
    /// One value per run, in run order.
    pub values: Vec<f64>,
}

/// Recognises a sweep: at least two single-workload runs whose workloads are equal
/// once bs, qd, streams and read_pct are blanked, and differ in exactly one of those
/// (taking at least two distinct values).
pub(crate) fn detect_sweep(runs: &[RunResult]) -> Option<Sweep> {
    if runs.len() < 2 || runs.iter().any(|r| r.workloads.len() > 1) {
        return None;
    }
    // Everything but the swept settings must be equal.
    let blank = |w: &WorkloadEcho| WorkloadEcho {
        bs: BlockSizes::of(Vec::new()),
        qd: 0,
        streams: 0,
        read_pct: 0,
        ..w.clone()
    };
    // Storage runs only: a network run has no block size or queue depth to sweep.
    let ws: Vec<&WorkloadEcho> = runs
        .iter()
        .map(|r| r.workload.storage())
        .collect::<Option<_>>()?;
    let first = blank(ws[0]);
    if ws[1..].iter().any(|w| blank(w) != first) {
        return None;
    }
    let varying: Vec<SweepKey> = SweepKey::ALL
        .into_iter()
        .filter(|k| ws[1..].iter().any(|w| k.differs(ws[0], w)))
        .collect();
    let [key] = varying.as_slice() else {
        return None;
    };
    let values: Vec<f64> = ws.iter().map(|w| key.value(w)).collect::<Option<_>>()?;
    let mut distinct = values.clone();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    (distinct.len() >= 2).then_some(Sweep { key: *key, values })
}

/// The sweep section: IOPS, MB/s and latency against the swept setting.
pub(crate) fn sweep_section(runs: &[RunResult]) -> Option<String> {
    let sweep = detect_sweep(runs)?;
    let mut out = format!(
        "<section id=\"sweep\"><h2>Sweep over {}</h2>",
        sweep.key.title()
    );
    for c in sweep_charts(&sweep, runs) {
        out.push_str(&c.render());
    }
    out.push_str("<p class=\"caption\">One point per run, from the run totals.</p></section>\n");
    Some(out)
}

pub(crate) fn sweep_charts(sweep: &Sweep, runs: &[RunResult]) -> Vec<Chart> {
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| sweep.values[a].total_cmp(&sweep.values[b]));
    let x = sweep.key.axis(&sweep.values);
    let by = sweep.key.title();
    type Pick = fn(&RunResult) -> f64;
    let chart = |id: &str, title: String, axis: Axis, picks: &[(&str, &str, Pick, bool)]| {
        let mut c = Chart::new(id, &title, x.clone(), axis);
        for (k, (name, label, pick, dashed)) in picks.iter().enumerate() {
            let mut s = Series::line(
                name,
                label,
                PALETTE[k],
                order
                    .iter()
                    .map(|&i| (sweep.values[i], pick(&runs[i])))
                    .collect(),
            );
            s.dashed = *dashed;
            s.tips = order
                .iter()
                .map(|&i| {
                    format!(
                        "{} ({}): {} {label}",
                        runs[i].name,
                        sweep.key.show(sweep.values[i]),
                        human(pick(&runs[i]))
                    )
                })
                .collect();
            c.series.push(s);
        }
        c
    };
    let all = |f: Pick| runs.iter().map(f).collect::<Vec<f64>>();
    let lat: Vec<f64> = all(|r| r.totals.all.latency_us.p50)
        .into_iter()
        .chain(all(|r| r.totals.all.latency_us.p99))
        .collect();
    vec![
        chart(
            "sweep-iops",
            format!("IOPS by {by}"),
            Axis::linear("IOPS", all(|r| r.totals.all.iops)),
            &[("iops", "IOPS", |r| r.totals.all.iops, false)],
        ),
        chart(
            "sweep-mbps",
            format!("Throughput by {by}"),
            Axis::linear("MB/s (10^6 B/s)", all(|r| r.totals.all.mbps)),
            &[("mbps", "MB/s", |r| r.totals.all.mbps, false)],
        ),
        chart(
            "sweep-latency",
            format!("Latency by {by}"),
            Axis::auto("latency (µs)", &lat, 30.0),
            &[
                ("lat_p50_us", "p50", |r| r.totals.all.latency_us.p50, false),
                ("lat_p99_us", "p99", |r| r.totals.all.latency_us.p99, true),
            ],
        ),
    ]
}

/// "IOPS", "MB/s", "mean latency (µs)" for a steady-state metric name.
fn metric_label(metric: &str) -> String {
    match metric {
        "iops" => "IOPS".into(),
        "mbps" => "MB/s (10^6 B/s)".into(),
        m => match m.strip_suffix("_us") {
            Some(stat) => format!("{stat} latency (µs)"),
            None => m.to_string(),
        },
    }
}

/// The steady-state section: the verdict and the rounds chart.
pub(crate) fn steady_section(st: &SteadyState) -> String {
    let mut out = String::from("<section id=\"steady\"><h2>Steady state</h2>");
    let (a, b) = st.window;
    let metric = metric_label(&st.metric);
    let _ = write!(
        out,
        "<p class=\"{}\"><strong>{}</strong> after {} round{}: over rounds {}–{} the {} averaged {}; range {}% of the average (limit 20%), slope {}% (limit 10%).</p>",
        if st.reached { "verdict" } else { "warn" },
        if st.reached {
            "Steady state reached"
        } else {
            "Steady state not reached"
        },
        st.rounds.len(),
        if st.rounds.len() == 1 { "" } else { "s" },
        a + 1,
        b + 1,
        esc(&metric),
        human(st.average),
        human(st.range_pct),
        human(st.slope_pct),
    );
    if !st.rounds.is_empty() {
        out.push_str(&steady_chart(st).render());
        out.push_str("<p class=\"caption\">The tracked metric of each round. Blue band: the rounds judged; green band: their average ± 20%; green line: the average. (The rule limits max − min to 20% of the average, so staying inside the band is necessary but not sufficient.)</p>\n");
    }
    out.push_str("</section>\n");
    out
}

/// The tracked metric per round (x = round number from 1), the judged window and the
/// window average ± 20%.
pub(crate) fn steady_chart(st: &SteadyState) -> Chart {
    let metric = metric_label(&st.metric);
    let pts: Vec<(f64, f64)> = st
        .rounds
        .iter()
        .enumerate()
        .map(|(i, &v)| ((i + 1) as f64, v))
        .collect();
    let (a, b) = st.window;
    let (x0, x1) = (a as f64 + 0.5, b as f64 + 1.5);
    let x = Axis::linear("round", pts.iter().map(|p| p.0).chain([x1]));
    let y = Axis::linear(&metric, st.rounds.iter().copied().chain([st.average * 1.2]));
    let mut c = Chart::new("steady", &format!("{metric} per round"), x, y);
    let mut s = Series::line(&st.metric, &metric, PALETTE[0], pts);
    s.tips = st
        .rounds
        .iter()
        .enumerate()
        .map(|(i, v)| format!("round {}: {} {metric}", i + 1, human(*v)))
        .collect();
    c.series.push(s);
    c.bands.push(Band {
        kind: "window".into(),
        label: "judged rounds".into(),
        x0,
        x1,
        color: WINDOW_COLOR.into(),
    });
    c.hbands.push(HBand {
        kind: "tolerance".into(),
        label: "average ± 20%".into(),
        y0: st.average * 0.8,
        y1: st.average * 1.2,
        color: TOLERANCE_COLOR.into(),
    });
    c.rules.push(Rule {
        kind: "average".into(),
        label: format!("average {}", human(st.average)),
        at: RuleAt::Y(st.average),
        color: AVERAGE_COLOR.into(),
        dashed: true,
    });
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::{render_html, tests::series_counts};
    use crate::report::testdata::{doc, latency, run};
    use crate::result::{CurvePoint, RunWorkload, Sla};

    fn curve_doc(sla_iops: f64) -> ResultDoc {
        let mut runs = vec![run("max", 60_000.0, 300.0, 5, 1, 0.02, 1.0, 1)];
        let mut points = vec![CurvePoint {
            run: 0,
            pct_of_max: 100.0,
            requested_iops: 0.0,
            achieved_iops: 60_000.0,
            mbps: 245.8,
            latency_us: latency(300.0, false),
        }];
        for (k, pct) in [10.0, 50.0, 80.0].into_iter().enumerate() {
            let iops = 600.0 * pct;
            runs.push(run(
                &format!("{pct}%"),
                iops,
                60.0 + pct * 2.0,
                5,
                1,
                0.02,
                1.0,
                2 + k as u64,
            ));
            points.push(CurvePoint {
                run: k + 1,
                pct_of_max: pct,
                requested_iops: iops,
                achieved_iops: iops * 0.99,
                mbps: iops * 4096.0 / 1e6,
                latency_us: latency(60.0 + pct * 2.0, false),
            });
        }
        let mut d = doc(runs);
        d.curves = vec![Curve {
            max_iops: 60_000.0,
            points,
            sla: Some(Sla {
                percentile: "p99".into(),
                bound_us: 500.0,
                iops: sla_iops,
                measured_us: 480.0,
                probes: vec![4, 5],
            }),
            stopped: None,
        }];
        d
    }

    #[test]
    fn curve_chart_has_one_point_per_curve_point_and_the_sla() {
        let d = curve_doc(62_400.0);
        let html = render_html(&d);
        let n = d.curves[0].points.len();
        let curve: Vec<_> = series_counts(&html)
            .into_iter()
            .filter(|c| c.0 == "curve")
            .collect();
        let names: Vec<&str> = curve.iter().map(|c| c.1.as_str()).collect();
        assert_eq!(names, ["lat_p50_us", "lat_p99_us", "lat_p99_9_us", "max"]);
        // The lines hold the points at requested rates; the max run is three
        // squares (p50, p99, p99.9) of its own.
        for (chart, series, declared, found) in &curve {
            let want = if series == "max" { 3 } else { n - 1 };
            assert_eq!((*declared, *found), (want, want), "{chart}/{series}");
        }
        assert!(html.contains("62,400 IOPS at p99 ≤ 500 µs"));
        assert!(html.contains("data-rule=\"sla-bound\""));
        assert!(html.contains("data-rule=\"sla-iops\""));
        assert!(html.contains("data-marker=\"sla\""));
        // The table lists every point; the max run is labelled as such.
        let table = html.split("<table class=\"curve\">").nth(1).unwrap();
        let table = table.split("</table>").next().unwrap();
        assert_eq!(table.matches("<tr><td>").count(), n);
        assert!(table.contains("<tr><td>max</td>"));
        // Placed right after the totals, before the runs.
        let (totals, curve_at, run0) = (
            html.find("id=\"totals\"").unwrap(),
            html.find("id=\"curve\"").unwrap(),
            html.find("id=\"run-0\"").unwrap(),
        );
        assert!(totals < curve_at && curve_at < run0);
    }

    // Regression: the closed-loop max point was the last vertex of the rate lines, as
    // if it were one more requested rate.
    #[test]
    fn curve_max_point_is_its_own_marker_with_a_legend() {
        let d = curve_doc(62_400.0);
        let curve = &d.curves[0];
        let svg = curve_chart(curve).render();
        let group = |name: &str| {
            let at = svg
                .find(&format!("data-series=\"{name}\""))
                .unwrap_or_else(|| panic!("no series {name}"));
            let g = &svg[svg[..at].rfind("<g ").unwrap()..];
            g[..g.find("</g>").unwrap()].to_string()
        };
        let c = curve_chart(curve);
        // The frame spans x = 64 .. width - 16 (svg.rs's margins).
        let x_px =
            |iops: f64| super::super::format::coord(64.0 + c.x.frac(iops) * (c.width - 80.0));
        let max_x = x_px(60_000.0);
        // No line reaches the max run's IOPS; each ends at the highest rated point.
        for name in ["lat_p50_us", "lat_p99_us", "lat_p99_9_us"] {
            let g = group(name);
            let d = g.split(" d=\"").nth(1).unwrap().split('"').next().unwrap();
            assert_eq!(d.matches(['M', 'L']).count(), 3, "{name}: {d}");
            assert!(
                !d.contains(&format!("L{max_x} ")),
                "{name} runs into the max point: {d}"
            );
            assert!(
                d.contains(&format!("L{} ", x_px(48_000.0 * 0.99))),
                "{name}: {d}"
            );
        }
        // The max run: hollow squares at its IOPS, one per percentile, with tips.
        let g = group("max");
        assert!(g.starts_with("<g class=\"series squares\""), "{g}");
        assert!(!g.contains("class=\"ln\""), "squares are not joined: {g}");
        assert_eq!(g.matches(&format!("d=\"M{max_x} ")).count(), 3, "{g}");
        for p in ["p50", "p99", "p99.9"] {
            assert!(
                g.contains(&format!("closed-loop max: 60,000 IOPS, {p} ")),
                "{p}: {g}"
            );
        }
        // Its legend entry is a square, not a line.
        let legend = svg.split("<g class=\"legend\">").nth(1).unwrap();
        let legend = &legend[..legend.find("</g>").unwrap()];
        assert!(legend.contains(">closed-loop max</text>"), "{legend}");
        assert_eq!(legend.matches("class=\"lg-square\"").count(), 1, "{legend}");
        assert_eq!(legend.matches("<line ").count(), 3, "{legend}");
        if let Ok(dir) = std::env::var("IOSCOPE_PREVIEW_DIR") {
            std::fs::write(format!("{dir}/curve.html"), render_html(&d)).unwrap();
        }
    }

    #[test]
    fn curve_of_only_the_max_run_draws_no_empty_lines() {
        let mut d = curve_doc(0.0);
        let curve = &mut d.curves[0];
        curve.points.truncate(1);
        curve.sla = None;
        let c = curve_chart(curve);
        let names: Vec<&str> = c.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["max"]);
        assert_eq!(c.series[0].points.len(), 3);
    }

    #[test]
    fn curve_without_a_passing_rate_says_so() {
        let html = render_html(&curve_doc(0.0));
        assert!(html.contains("No rate keeps p99 ≤ 500 µs"));
        assert!(html.contains("data-rule=\"sla-bound\""));
        assert!(!html.contains("data-rule=\"sla-iops\""));
        assert!(!html.contains("data-marker"));
    }

    #[test]
    fn curve_latency_axis_turns_log_over_20x() {
        let mut d = curve_doc(62_400.0);
        let c = curve_chart(&d.curves[0]);
        // 300 µs mean with tails up to ~3.3× vs 80 µs p50 at 10%: within 20×.
        assert_eq!(c.y.scale, crate::report::svg::Scale::Linear);
        d.curves[0].points[0].latency_us = latency(30_000.0, false);
        let c = curve_chart(&d.curves[0]);
        assert_eq!(c.y.scale, crate::report::svg::Scale::Log10);
        assert!(c.y.label.contains("µs"));
    }

    /// The storage workload of a test run.
    fn sw(r: &mut RunResult) -> &mut WorkloadEcho {
        r.workload.storage_mut().unwrap()
    }

    fn bs_sweep() -> Vec<RunResult> {
        [4096u64, 8192, 16384, 32768]
            .into_iter()
            .enumerate()
            .map(|(k, bs)| {
                let mut r = run(
                    &format!("bs={}k", bs / 1024),
                    100_000.0 / (k + 1) as f64,
                    50.0,
                    4,
                    0,
                    0.02,
                    1.0,
                    k as u64,
                );
                r.workload = RunWorkload::Storage(WorkloadEcho {
                    bs: BlockSizes::fixed(bs),
                    ..WorkloadEcho::default()
                });
                r
            })
            .collect()
    }

    #[test]
    fn sweep_is_recognised_only_when_one_key_differs() {
        let runs = bs_sweep();
        let s = detect_sweep(&runs).unwrap();
        assert_eq!(s.key, SweepKey::Bs);
        assert_eq!(s.values, [4096.0, 8192.0, 16384.0, 32768.0]);
        // Two keys differ: not a one-parameter sweep.
        let mut two = runs.clone();
        sw(&mut two[1]).qd = 4;
        assert_eq!(detect_sweep(&two), None);
        // Anything else differs (the rate of a curve): not a sweep.
        let mut other = runs.clone();
        sw(&mut other[2]).rate = crate::result::Rate::Iops(1000.0);
        assert_eq!(detect_sweep(&other), None);
        // Identical workloads (steady-state rounds): not a sweep.
        let same = vec![runs[0].clone(), runs[0].clone()];
        assert_eq!(detect_sweep(&same), None);
        // A mixed block-size split has no single value to place.
        let mut split = runs.clone();
        sw(&mut split[0]).bs = BlockSizes {
            split: vec![(4096, 50), (8192, 50)],
            write_split: None,
        };
        assert_eq!(detect_sweep(&split), None);
        // Plain-number settings (qd) work too.
        let mut qd = vec![runs[0].clone(); 3];
        for (r, q) in qd.iter_mut().zip([1, 4, 32]) {
            sw(r).qd = q;
        }
        assert_eq!(detect_sweep(&qd).unwrap().key, SweepKey::Qd);
    }

    #[test]
    fn sweep_charts_plot_one_point_per_run_on_a_log2_axis() {
        let runs = bs_sweep();
        let html = render_html(&doc(runs.clone()));
        assert!(html.contains("<h2>Sweep over block size</h2>"));
        let counts: Vec<_> = series_counts(&html)
            .into_iter()
            .filter(|c| c.0.starts_with("sweep-"))
            .collect();
        let charts: Vec<&str> = counts.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(
            charts,
            ["sweep-iops", "sweep-mbps", "sweep-latency", "sweep-latency"]
        );
        for (chart, series, declared, found) in &counts {
            assert_eq!(
                (*declared, *found),
                (runs.len(), runs.len()),
                "{chart}/{series}"
            );
        }
        let s = detect_sweep(&runs).unwrap();
        let c = &sweep_charts(&s, &runs)[0];
        assert_eq!(c.x.scale, crate::report::svg::Scale::Log2);
        let labels: Vec<String> = c.x.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["4k", "8k", "16k", "32k"]);
        // Queue depths that are not all powers of two get a linear axis.
        assert_eq!(
            SweepKey::Qd.axis(&[1.0, 3.0, 8.0]).scale,
            crate::report::svg::Scale::Linear
        );
        assert_eq!(
            SweepKey::Qd.axis(&[1.0, 4.0, 32.0]).scale,
            crate::report::svg::Scale::Log2
        );
    }

    fn steady(reached: bool) -> SteadyState {
        SteadyState {
            metric: "iops".into(),
            rounds: vec![
                80_000.0, 62_000.0, 55_000.0, 53_000.0, 52_500.0, 54_000.0, 53_200.0,
            ],
            round_runs: (0..7).collect(),
            window: (2, 6),
            reached,
            average: 53_540.0,
            range_pct: 5.6,
            slope_pct: 1.2,
        }
    }

    #[test]
    fn steady_state_chart_shades_the_window_and_band() {
        let mut d = doc(vec![run("round-1", 80_000.0, 50.0, 4, 0, 0.02, 1.0, 1)]);
        d.steady_state = Some(steady(true));
        let html = render_html(&d);
        assert!(html.contains("Steady state reached</strong> after 7 rounds: over rounds 3–7"));
        let c: Vec<_> = series_counts(&html)
            .into_iter()
            .filter(|c| c.0 == "steady")
            .collect();
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].2, c[0].3), (7, 7));
        assert_eq!(html.matches("data-band=\"window\"").count(), 1);
        assert_eq!(html.matches("data-band=\"tolerance\"").count(), 1);
        assert!(html.contains("data-rule=\"average\""));
        d.steady_state = Some(steady(false));
        assert!(render_html(&d).contains("Steady state not reached"));
    }

    #[test]
    fn bound_labels_read_like_the_cli() {
        assert_eq!(bound_label(500.0), "500 µs");
        assert_eq!(bound_label(1000.0), "1 ms");
        assert_eq!(bound_label(2500.0), "2.5 ms");
    }
}
