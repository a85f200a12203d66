//! The HTML report: one self-contained file (inline CSS, inline SVG, no script, no
//! fonts, no network) that can be mailed or attached to a ticket and opened years
//! later. Every chart plots values read straight from the result model — interval
//! IOPS, MB/s and latency against time, the stored percentile spectrum, run totals —
//! so the page can never disagree with the JSON it came from. A strict
//! Content-Security-Policy makes the "no fetches" promise checkable by the browser.

use std::fmt::Write;

use serde_json::Value;

use super::analysis;
use super::format::{esc, human, utc_datetime};
use super::svg::{Axis, Band, BarChart, Chart, Mark, Series, PALETTE};
use crate::result::{
    Interval, LatencyStats, OpTotals, ResultDoc, RunResult, ScheduleResult, VerifyResult,
};

const ERROR_COLOR: &str = "#d62728";
const WARMUP_COLOR: &str = "#e8e3d3";

/// Renders a whole result document as one self-contained HTML page.
pub fn render_html(doc: &ResultDoc) -> String {
    let title = match doc.runs.as_slice() {
        [one] => format!("ioscope result — {}", one.name),
        runs => format!("ioscope result — {} runs", runs.len()),
    };
    let mut out = String::with_capacity(64 * 1024);
    page_head(&mut out, &title);
    doc_header(&mut out, doc);

    out.push_str("<section id=\"totals\"><h2>Totals</h2>");
    out.push_str(&totals_table(&doc.runs));
    out.push_str("</section>\n");

    out.push_str(&analysis::curve_sections(doc));
    if let Some(st) = &doc.steady_state {
        out.push_str(&analysis::steady_section(st));
    }
    if let Some(sweep) = analysis::sweep_section(&doc.runs) {
        out.push_str(&sweep);
    }
    if doc.runs.len() > 1 {
        out.push_str("<section id=\"runs\"><h2>Runs side by side</h2>");
        out.push_str(&runs_charts(&doc.runs));
        out.push_str("</section>\n");
    }

    for (i, run) in doc.runs.iter().enumerate() {
        run_section(&mut out, i, run);
    }

    if let Some(env) = &doc.env {
        out.push_str("<section id=\"env\"><h2>Environment</h2>");
        out.push_str(&kv_table(env, 0));
        out.push_str("</section>\n");
    }
    if let Some(plan) = &doc.plan {
        out.push_str("<section id=\"plan\"><details><summary>Effective plan</summary>");
        out.push_str(&kv_table(plan, 0));
        out.push_str("</details></section>\n");
    }
    page_foot(&mut out, doc);
    out
}

/// Doctype, CSP, inline style and the opening of the body.
pub(crate) fn page_head(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{}</title><style>{}</style></head><body><main>\n<h1>{}</h1>\n",
        esc(title),
        CSS,
        esc(title)
    );
}

pub(crate) fn page_foot(out: &mut String, doc: &ResultDoc) {
    let _ = write!(
        out,
        "<footer>Rendered by {} {} from a {} result. Charts plot only values stored in the result JSON.</footer>\n</main></body></html>\n",
        esc(&doc.tool.name),
        esc(&doc.tool.version),
        esc(&doc.schema)
    );
}

const CSS: &str = "\
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1d232a;background:#fff;margin:0}\
main{max-width:920px;margin:0 auto;padding:12px 20px 40px}\
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d5dae0}\
h3{font-size:15px;margin:18px 0 6px}\
.meta{color:#4a545e}.meta code{font-size:12px;background:#f2f4f6;padding:1px 4px}\
.warn{background:#fff4e0;border-left:4px solid #e6780b;padding:6px 10px}\
table{border-collapse:collapse;margin:6px 0;font-size:13px}\
th,td{border:1px solid #d5dae0;padding:3px 7px;text-align:left;vertical-align:top}\
th{background:#f2f4f6;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}\
tr.sub td{color:#4a545e}tr.sub td:first-child{padding-left:18px}\
table.kv table.kv{margin:0}\
figure.chart{margin:10px 0}svg{max-width:100%;height:auto;font-size:11px}\
svg .title{font-size:13px;font-weight:600;fill:#1d232a}\
svg .grid line{stroke:#e3e7eb}svg .grid .frame{fill:none;stroke:#9aa4ad}\
svg .grid text,svg .cats text,svg .legend text{fill:#4a545e}\
svg .yt{text-anchor:end}svg .xt,svg .xl,svg .yl{text-anchor:middle}\
svg .ln{stroke-width:1.5;stroke-linejoin:round}svg .flags{stroke:none}\
svg .band{opacity:.8}\
.caption{color:#4a545e;font-size:12px;margin:-4px 0 10px}\
td.better{color:#1b7a2e;font-weight:600}td.worse{color:#b3261e;font-weight:600}td.noise{color:#6b757e}\
footer{margin-top:32px;color:#6b757e;font-size:12px}\
@media (prefers-color-scheme:dark){body{background:#15191d;color:#dfe4e8}\
th{background:#222a31}th,td{border-color:#38424b}.meta code{background:#222a31}\
.warn{background:#3a2d17}svg .title{fill:#dfe4e8}svg .grid line{stroke:#2b343c}\
svg .grid text,svg .cats text,svg .legend text{fill:#aab4bd}svg .band{opacity:.25}}\
";

fn doc_header(out: &mut String, doc: &ResultDoc) {
    let _ = write!(
        out,
        "<p class=\"meta\">{} {} · started {} · {} run{}",
        esc(&doc.tool.name),
        esc(&doc.tool.version),
        utc_datetime(doc.started_unix_s),
        doc.runs.len(),
        if doc.runs.len() == 1 { "" } else { "s" }
    );
    if !doc.command.is_empty() {
        let _ = write!(
            out,
            "<br>command: <code>{}</code>",
            esc(&doc.command.join(" "))
        );
    }
    out.push_str("</p>\n");
    if doc.interrupted {
        out.push_str(
            "<p class=\"warn\">The work was interrupted: the numbers cover only what ran.</p>\n",
        );
    }
    if !doc.warnings.is_empty() {
        out.push_str("<div class=\"warn\"><strong>Warnings</strong><ul>");
        for w in &doc.warnings {
            let _ = write!(out, "<li>{}</li>", esc(w));
        }
        out.push_str("</ul></div>\n");
    }
}

fn num_td(v: f64) -> String {
    format!("<td class=\"n\">{}</td>", human(v))
}

/// Totals per run: one row for all I/O, plus read and write rows for mixed runs.
fn totals_table(runs: &[RunResult]) -> String {
    let mut t = String::from(
        "<table class=\"totals\"><thead><tr><th>run</th><th>IOPS</th><th>MB/s</th>\
<th>mean µs</th><th>p50 µs</th><th>p99 µs</th><th>p99.9 µs</th><th>max µs</th>\
<th>errors</th><th>CPU user %</th><th>CPU sys %</th><th>CPU µs/IO</th></tr></thead><tbody>",
    );
    for run in runs {
        let row = |t: &mut String, label: &str, o: &OpTotals, cls: &str| {
            let l = &o.latency_us;
            let _ = write!(
                t,
                "<tr{cls}><td>{}</td>{}{}{}{}{}{}{}<td class=\"n\">{}</td>",
                esc(label),
                num_td(o.iops),
                num_td(o.mbps),
                num_td(l.mean),
                num_td(l.p50),
                num_td(l.p99),
                num_td(l.p99_9),
                num_td(l.max),
                o.errors
            );
        };
        row(&mut t, &run.name, &run.totals.all, "");
        let _ = write!(
            t,
            "{}{}{}</tr>",
            num_td(run.cpu.user_pct),
            num_td(run.cpu.sys_pct),
            num_td(run.cpu.cpu_us_per_io)
        );
        if run.totals.read.ios > 0 && run.totals.write.ios > 0 {
            for (label, o) in [("read", &run.totals.read), ("write", &run.totals.write)] {
                row(&mut t, label, o, " class=\"sub\"");
                t.push_str("<td></td><td></td><td></td></tr>");
            }
        }
    }
    t.push_str("</tbody></table>");
    t
}

/// IOPS, MB/s and latency per run, for documents with several runs.
fn runs_charts(runs: &[RunResult]) -> String {
    let names: Vec<String> = runs.iter().map(|r| r.name.clone()).collect();
    let bars = |id: &str, title: &str, ylabel: &str, list: Vec<(&str, &str, Vec<f64>)>| {
        let all: Vec<f64> = list.iter().flat_map(|s| s.2.iter().copied()).collect();
        let series = list
            .iter()
            .enumerate()
            .map(|(k, (name, label, vals))| {
                let mut s = Series::line(
                    name,
                    label,
                    PALETTE[k % PALETTE.len()],
                    vals.iter()
                        .enumerate()
                        .map(|(i, &v)| (i as f64, v))
                        .collect(),
                );
                s.tips = vals
                    .iter()
                    .zip(&names)
                    .map(|(v, n)| format!("{n}: {} {label}", human(*v)))
                    .collect();
                s
            })
            .collect();
        BarChart {
            id: id.into(),
            title: title.into(),
            width: 860.0,
            height: 220.0,
            categories: names.clone(),
            series,
            y: Axis::linear(ylabel, all),
        }
        .render()
    };
    let mut out = String::new();
    out.push_str(&bars(
        "runs-iops",
        "IOPS per run",
        "IOPS",
        vec![(
            "iops",
            "IOPS",
            runs.iter().map(|r| r.totals.all.iops).collect(),
        )],
    ));
    out.push_str(&bars(
        "runs-mbps",
        "Throughput per run",
        "MB/s (10^6 B/s)",
        vec![(
            "mbps",
            "MB/s",
            runs.iter().map(|r| r.totals.all.mbps).collect(),
        )],
    ));
    out.push_str(&bars(
        "runs-latency",
        "Latency per run",
        "latency (µs)",
        vec![
            (
                "lat_p50_us",
                "p50",
                runs.iter().map(|r| r.totals.all.latency_us.p50).collect(),
            ),
            (
                "lat_p99_us",
                "p99",
                runs.iter().map(|r| r.totals.all.latency_us.p99).collect(),
            ),
        ],
    ));
    out
}

/// The events of a run over one path per target are its connections'.
const CONNECTION_EVENTS: super::html_paths::EventsOf = super::html_paths::EventsOf {
    title: "Connection events",
    column: "connection",
    who: "",
};

fn run_section(out: &mut String, i: usize, run: &RunResult) {
    let _ = writeln!(
        out,
        "<section class=\"run\" id=\"run-{i}\"><h2>Run: {}</h2><p class=\"meta\">target <code>{}</code> · engine {} · {} worker{} · {} stream{} · measured {} s after {} s warm-up · ended by {} · average queue depth {}</p>",
        esc(&run.name),
        esc(&run.target),
        esc(&run.engine),
        run.workers,
        if run.workers == 1 { "" } else { "s" },
        run.streams,
        if run.streams == 1 { "" } else { "s" },
        human(run.duration_s),
        human(run.warmup_s),
        run.end_reason.name(),
        human(run.totals.queue_depth),
    );
    if run.interrupted {
        out.push_str("<p class=\"warn\">This run was interrupted.</p>\n");
    }
    timeline_section(out, i, run);
    out.push_str(&super::html_paths::paths_section(run, &format!("run{i}")));
    out.push_str(&super::net_html::net_section(run, &format!("run{i}")));
    out.push_str(&super::ranks_html::ranks_section(run));
    if let Some(chart) = spectrum_chart(&format!("run{i}-spectrum"), &[("", run)]) {
        out.push_str("<h3>Latency percentiles</h3>");
        out.push_str(&chart.render());
        out.push_str("<p class=\"caption\">Latency at each percentile of the measured I/Os; each step right adds a nine (90 → 99 → 99.9). Dashed: service time, when it differs from latency (rate-limited runs).</p>\n");
    }
    out.push_str(&super::repeats::html_table(run));
    schedule_table(out, run);
    if let Some(v) = &run.verify {
        verify_table(out, v);
    }
    if run.workloads.len() > 1 {
        out.push_str("<h3>Workloads</h3><table><thead><tr><th>workload</th><th>target</th><th>IOPS</th><th>MB/s</th><th>mean µs</th><th>p99 µs</th><th>errors</th></tr></thead><tbody>");
        for w in &run.workloads {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td>{}{}{}{}<td class=\"n\">{}</td></tr>",
                esc(&w.name),
                esc(&w.target),
                num_td(w.totals.all.iops),
                num_td(w.totals.all.mbps),
                num_td(w.totals.all.latency_us.mean),
                num_td(w.totals.all.latency_us.p99),
                w.totals.all.errors
            );
        }
        out.push_str("</tbody></table>\n");
    }
    if !run.error_samples.is_empty() {
        out.push_str("<h3>First errors</h3><table><thead><tr><th>op</th><th>target</th><th>offset</th><th>length</th><th>errno</th><th>message</th></tr></thead><tbody>");
        for e in &run.error_samples {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                esc(&e.op),
                esc(&e.target),
                e.offset,
                e.len,
                e.errno,
                esc(&e.message)
            );
        }
        out.push_str("</tbody></table>\n");
    }
    out.push_str("<details><summary>Workload settings</summary>");
    out.push_str(&kv_table(
        &serde_json::to_value(&run.workload).unwrap_or_default(),
        0,
    ));
    out.push_str("</details></section>\n");
}

/// A run's timeline charts, with a one-path run's connection events flagged on its
/// IOPS chart and listed.
fn timeline_section(out: &mut String, i: usize, run: &RunResult) {
    if run.intervals.is_empty() {
        out.push_str("<p class=\"caption\">No intervals were recorded for this run.</p>\n");
    } else {
        out.push_str("<h3>Timeline</h3>");
        let mut charts = timeline_charts(&format!("run{i}"), &[("", &run.intervals)]);
        // A run over one path per target: its connections' events flag the IOPS
        // chart (a multipath run has them on its paths' chart, below).
        let flagged = run.paths.is_empty() && !run.events.is_empty();
        if let Some(c) = charts.first_mut().filter(|_| flagged) {
            let top = c.y.hi;
            let flags = super::html_paths::event_flags(&run.events, top, "connection ");
            c.series.extend(flags);
        }
        for chart in charts {
            out.push_str(&chart.render());
        }
        out.push_str("<p class=\"caption\">One point per interval, at the interval's end. Shaded: warm-up (not in the totals). Red triangles: intervals with I/O errors.");
        if flagged {
            out.push_str(" Flags on IOPS: connection events (down, timeout, re-issue, up; hover for the connection and detail).");
        }
        out.push_str("</p>\n");
        if flagged {
            super::html_paths::list_events(out, &run.events, &CONNECTION_EVENTS);
        }
    }
}

/// What each trace workload replayed and how faithfully, then the rate schedule.
fn schedule_table(out: &mut String, run: &RunResult) {
    for rp in &run.replay {
        let _ = writeln!(
            out,
            "<p class=\"replay\">{}</p>",
            esc(&super::terminal::replay_line(rp))
        );
    }
    if let Some(s) = &run.schedule {
        rate_table(out, s);
    }
}

/// Requested against achieved rate and issue lag of an open-loop run.
fn rate_table(out: &mut String, s: &ScheduleResult) {
    let l = &s.lag_us;
    let _ = write!(
        out,
        "<h3>Rate schedule</h3><table class=\"schedule\"><thead><tr><th>requested IOPS</th><th>achieved IOPS</th><th>achieved %</th>\
<th>lag p50 µs</th><th>lag p99 µs</th><th>lag p99.9 µs</th><th>lag max µs</th><th>max backlog (I/Os)</th></tr></thead>\
<tbody><tr>{}{}{}{}{}{}{}{}</tr></tbody></table>",
        num_td(s.requested_iops),
        num_td(s.achieved_iops),
        num_td(s.achieved_pct),
        num_td(l.p50),
        num_td(l.p99),
        num_td(l.p99_9),
        num_td(l.max),
        num_td(s.max_backlog_ios),
    );
    if let Some(p) = &s.pacing {
        let _ = write!(
            out,
            "<p class=\"pacing\">Pacing <b>{}</b>: {} s busy-waiting and {} s asleep for intended times; \
{} sleeps woke late by p50 {} µs, p99 {} µs (busy-wait margin up to {} µs); CPU per I/O without the busy-wait {} µs.</p>",
            esc(&p.mode),
            human(p.spin_s),
            human(p.sleep_s),
            p.sleeps,
            human(p.wake_late_us.p50),
            human(p.wake_late_us.p99),
            human(p.margin_us),
            human(p.cpu_us_per_io_excl_spin),
        );
    }
    out.push_str("\n<p class=\"caption\">Lag: how late each I/O was issued against its scheduled time. Latency is measured from the scheduled time, so a growing lag shows up in it.</p>\n");
}

/// Verification counts and the stored mismatch samples.
fn verify_table(out: &mut String, v: &VerifyResult) {
    out.push_str("<h3>Verification</h3>");
    if v.mismatches > 0 {
        let _ = write!(
            out,
            "<p class=\"warn\">{} mismatch{} found.</p>",
            v.mismatches,
            if v.mismatches == 1 { "" } else { "es" }
        );
    }
    out.push_str("<table class=\"verify\"><thead><tr>");
    let counts = [
        ("units checked", v.units_checked),
        ("ok", v.ok),
        ("torn (tolerated)", v.torn),
        ("untracked", v.untracked),
        ("mismatches", v.mismatches),
        ("corrupted", v.corrupted),
        ("misplaced", v.misplaced),
        ("stale", v.stale),
        ("never written", v.never_written),
        ("unexpected", v.unexpected),
    ];
    for (name, _) in counts {
        let _ = write!(out, "<th>{name}</th>");
    }
    out.push_str("</tr></thead><tbody><tr>");
    for (_, n) in counts {
        let _ = write!(out, "<td class=\"n\">{n}</td>");
    }
    out.push_str("</tr></tbody></table>\n");
    if !v.samples.is_empty() {
        let _ = write!(
            out,
            "<table class=\"verify-samples\"><thead><tr><th>kind</th><th>target</th><th>offset</th><th>detail</th></tr></thead><tbody>"
        );
        for s in &v.samples {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td><code>{}</code></td></tr>",
                esc(&s.kind),
                esc(&s.target),
                s.offset,
                esc(&s.detail)
            );
        }
        out.push_str("</tbody></table>\n");
        if (v.samples.len() as u64) < v.mismatches {
            let _ = write!(
                out,
                "<p class=\"caption\">The first {} of {} mismatches.</p>",
                v.samples.len(),
                v.mismatches
            );
        }
    }
}

/// Contiguous stretches of warm-up intervals as (start s, end s).
fn warmup_spans(intervals: &[Interval]) -> Vec<(f64, f64)> {
    let mut spans: Vec<(f64, f64)> = Vec::new();
    let mut prev_warm = false;
    for iv in intervals {
        if iv.warmup {
            let start = iv.t_s - iv.duration_s;
            match spans.last_mut() {
                Some(last) if prev_warm => last.1 = iv.t_s,
                _ => spans.push((start, iv.t_s)),
            }
        }
        prev_warm = iv.warmup;
    }
    spans
}

/// The warm-up bands of every side; sides with the same warm-up share one band
/// instead of darkening it.
fn warmup_bands(sides: &[(&str, &Vec<Interval>)]) -> Vec<Band> {
    let mut spans: Vec<(f64, f64)> = Vec::new();
    for (_, ivs) in sides {
        for span in warmup_spans(ivs) {
            if !spans.contains(&span) {
                spans.push(span);
            }
        }
    }
    spans
        .into_iter()
        .map(|(x0, x1)| Band {
            kind: "warmup".into(),
            label: "warm-up".into(),
            x0,
            x1,
            color: WARMUP_COLOR.into(),
        })
        .collect()
}

/// Flags on the intervals with errors, placed on a series' values (None: no errors).
fn error_series(name: &str, ivs: &[Interval], pick: fn(&Interval) -> f64) -> Option<Series> {
    let errs: Vec<&Interval> = ivs.iter().filter(|iv| iv.errors > 0).collect();
    if errs.is_empty() {
        return None;
    }
    let mut s = Series::line(
        name,
        "errors",
        ERROR_COLOR,
        errs.iter().map(|iv| (iv.t_s, pick(iv))).collect(),
    );
    s.mark = Mark::Flags;
    s.tips = errs
        .iter()
        .map(|iv| format!("t={} s: {} I/O errors", human(iv.t_s), iv.errors))
        .collect();
    Some(s)
}

/// The IOPS, MB/s and latency timelines. With several sides (compare), each side's
/// series is named after its label and overlaid; warm-up bands come from every side.
/// A value of an interval that a timeline chart plots.
type Pick = fn(&Interval) -> f64;

/// One series of a timeline chart: its name in the data, its label, what it plots
/// and whether its line is dashed.
type Plotted = (&'static str, &'static str, Pick, bool);

/// The IOPS chart's title and series: the IOPS achieved, and beside them on a trace
/// replay on time the rate its trace asked for.
fn iops_series(sides: &[(&str, &Vec<Interval>)]) -> (&'static str, &'static [Plotted]) {
    let replayed = sides
        .iter()
        .any(|(_, ivs)| ivs.iter().any(|iv| iv.recorded_iops.is_some()));
    if !replayed {
        return ("IOPS", &[("iops", "", |iv| iv.iops, false)]);
    }
    (
        "IOPS, achieved / recorded",
        &[
            ("iops", "achieved", |iv| iv.iops, false),
            (
                "recorded_iops",
                "recorded",
                |iv| iv.recorded_iops.unwrap_or(0.0),
                true,
            ),
        ],
    )
}

/// The higher of an interval's achieved and recorded IOPS, for the IOPS axis.
fn iops_peak(iv: &Interval) -> f64 {
    iv.iops.max(iv.recorded_iops.unwrap_or(0.0))
}

pub(crate) fn timeline_charts(id: &str, sides: &[(&str, &Vec<Interval>)]) -> Vec<Chart> {
    let overlay = sides.len() > 1;
    let xs = sides
        .iter()
        .flat_map(|(_, ivs)| ivs.iter().flat_map(|iv| [iv.t_s, iv.t_s - iv.duration_s]));
    let x = Axis::linear("time since start (s)", xs.collect::<Vec<_>>());
    let bands = warmup_bands(sides);
    let series_name = |label: &str, base: &str| {
        if overlay {
            format!("{label}:{base}")
        } else {
            base.to_string()
        }
    };
    let metric = |chart_id: &str, title: &str, axis: Axis, picks: &[(&str, &str, Pick, bool)]| {
        let mut c = Chart::new(chart_id, title, x.clone(), axis);
        c.bands = bands.clone();
        for (si, (side, ivs)) in sides.iter().enumerate() {
            for (pi, (name, label, pick, dashed)) in picks.iter().enumerate() {
                // Overlay: one colour per side (p99 dashed); single run: one per series.
                let k = if overlay { si } else { pi };
                let legend = match (overlay, label.is_empty()) {
                    (true, true) => side.to_string(),
                    (true, false) => format!("{side} {label}"),
                    (false, true) => title.to_string(),
                    (false, false) => label.to_string(),
                };
                let mut s = Series::line(
                    &series_name(side, name),
                    &legend,
                    PALETTE[k % PALETTE.len()],
                    ivs.iter().map(|iv| (iv.t_s, pick(iv))).collect(),
                );
                s.dashed = *dashed;
                s.tips = ivs
                    .iter()
                    .map(|iv| {
                        format!(
                            "{side}{}t={} s: {} {}{}",
                            if side.is_empty() { "" } else { " " },
                            human(iv.t_s),
                            human(pick(iv)),
                            if label.is_empty() { title } else { label },
                            if iv.warmup { " (warm-up)" } else { "" }
                        )
                    })
                    .collect();
                c.series.push(s);
            }
            // Intervals with errors, flagged on the first series of this side.
            let (_, _, pick, _) = picks[0];
            c.series
                .extend(error_series(&series_name(side, "errors"), ivs, pick));
        }
        c
    };
    let all = |f: Pick| -> Vec<f64> {
        sides
            .iter()
            .flat_map(|(_, ivs)| ivs.iter().map(f))
            .collect()
    };
    let lat: Vec<f64> = all(|iv| iv.lat_us.p50)
        .into_iter()
        .chain(all(|iv| iv.lat_us.p99))
        .collect();
    let (iops_title, iops_picks) = iops_series(sides);
    let mut charts = vec![
        metric(
            &format!("{id}-iops"),
            iops_title,
            Axis::linear("IOPS", all(iops_peak)),
            iops_picks,
        ),
        metric(
            &format!("{id}-mbps"),
            "MB/s",
            Axis::linear("MB/s (10^6 B/s)", all(|iv| iv.mbps)),
            &[("mbps", "", |iv| iv.mbps, false)],
        ),
        metric(
            &format!("{id}-latency"),
            "Latency p50 / p99",
            Axis::auto("latency (µs)", &lat, 30.0),
            &[
                ("lat_p50_us", "p50", |iv| iv.lat_us.p50, false),
                ("lat_p99_us", "p99", |iv| iv.lat_us.p99, true),
            ],
        ),
    ];
    // Open loop: how far issue fell behind the schedule, interval by interval.
    let has_lag = sides
        .iter()
        .any(|(_, ivs)| ivs.iter().any(|iv| iv.lag_us.is_some()));
    if has_lag {
        let lag_p99 = |iv: &Interval| iv.lag_us.as_ref().map_or(0.0, |l| l.p99);
        let lag_max = |iv: &Interval| iv.lag_us.as_ref().map_or(0.0, |l| l.max);
        let lags: Vec<f64> = all(lag_p99).into_iter().chain(all(lag_max)).collect();
        charts.push(metric(
            &format!("{id}-lag"),
            "Issue lag behind the schedule p99 / max",
            Axis::auto("issue lag (µs)", &lags, 30.0),
            &[
                ("lag_p99_us", "p99", lag_p99, false),
                ("lag_max_us", "max", lag_max, true),
            ],
        ));
        let backlog = |iv: &Interval| iv.backlog_ios.unwrap_or(0.0);
        charts.push(metric(
            &format!("{id}-backlog"),
            "Backlog (I/Os due, not yet issued; estimated)",
            Axis::linear("I/Os", all(backlog)),
            &[("backlog_ios", "", backlog, false)],
        ));
    }
    charts
}

/// The (percentile, µs) points to plot for one direction: the stored spectrum, or
/// when the result has none, the fixed percentiles it does store.
pub(crate) fn spectrum_points(l: &LatencyStats) -> Vec<(f64, f64)> {
    if !l.spectrum.is_empty() {
        return l.spectrum.clone();
    }
    std::iter::once((0.0, l.min))
        .chain(l.named())
        .chain(std::iter::once((100.0, l.max)))
        .collect()
}

/// Read and write latency spectra (and service time when it differs), overlaid for
/// several sides in compare. None when no side did any I/O.
pub(crate) fn spectrum_chart(id: &str, sides: &[(&str, &RunResult)]) -> Option<Chart> {
    let mut series = Vec::new();
    let mut k = 0;
    for (side, run) in sides {
        for (dir, o) in [("read", &run.totals.read), ("write", &run.totals.write)] {
            if o.ios == 0 {
                continue;
            }
            let prefix = if side.is_empty() {
                String::new()
            } else {
                format!("{side}:")
            };
            let label = if side.is_empty() {
                dir.to_string()
            } else {
                format!("{side} {dir}")
            };
            let color = PALETTE[k % PALETTE.len()];
            k += 1;
            let mk = |name: String, label: String, l: &LatencyStats, dashed: bool| {
                let pts = spectrum_points(l);
                let mut s = Series::line(&name, &label, color, pts.clone());
                s.dashed = dashed;
                s.tips = pts
                    .iter()
                    .map(|(p, us)| format!("{label} p{}: {} µs", human(*p), human(*us)))
                    .collect();
                s
            };
            series.push(mk(
                format!("{prefix}{dir}"),
                label.clone(),
                &o.latency_us,
                false,
            ));
            if o.service_us != o.latency_us && o.service_us.max > 0.0 {
                series.push(mk(
                    format!("{prefix}{dir}_service"),
                    format!("{label} service"),
                    &o.service_us,
                    true,
                ));
            }
        }
    }
    if series.is_empty() {
        return None;
    }
    let x = Axis::nines(
        "percentile (%)",
        series.iter().flat_map(|s| s.points.iter().map(|p| p.0)),
    );
    let y = Axis::log10(
        "latency (µs, log scale)",
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
    );
    let mut c = Chart::new(id, "Latency by percentile", x, y);
    c.height = 280.0;
    c.series = series;
    Some(c)
}

/// Arbitrary JSON as nested key/value tables; scalar arrays become one line.
pub(crate) fn kv_table(v: &Value, depth: usize) -> String {
    if depth > 8 {
        return format!("<code>{}</code>", esc(&v.to_string()));
    }
    match v {
        Value::Object(map) if !map.is_empty() => {
            let mut t = String::from("<table class=\"kv\">");
            for (k, v) in map {
                let _ = write!(
                    t,
                    "<tr><th>{}</th><td>{}</td></tr>",
                    esc(k),
                    kv_table(v, depth + 1)
                );
            }
            t.push_str("</table>");
            t
        }
        Value::Array(items) if items.iter().any(|i| i.is_object() || i.is_array()) => {
            let mut t = String::from("<table class=\"kv\">");
            for (i, v) in items.iter().enumerate() {
                let _ = write!(
                    t,
                    "<tr><th>{i}</th><td>{}</td></tr>",
                    kv_table(v, depth + 1)
                );
            }
            t.push_str("</table>");
            t
        }
        Value::Array(items) => items
            .iter()
            .map(|i| kv_table(i, depth + 1))
            .collect::<Vec<_>>()
            .join(", "),
        Value::String(s) => esc(s),
        Value::Null => "–".into(),
        Value::Object(_) => "{}".into(),
        other => esc(&other.to_string()),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::report::testdata::{doc, latency, run};

    /// Every `<g class="series …" data-series=… data-count=N>` in `html`, with the
    /// number of plotted points actually found in it: `pt` elements, or the `M`/`L`
    /// vertices of its path when it has no per-point elements.
    pub(crate) fn series_counts(html: &str) -> Vec<(String, String, usize, usize)> {
        let mut out = Vec::new();
        for fig in html.split("<figure class=\"chart\" data-chart=\"").skip(1) {
            let chart = fig.split('"').next().unwrap().to_string();
            let fig = fig.split("</figure>").next().unwrap();
            for g in fig.split("<g class=\"series").skip(1) {
                let g = g.split("</g>").next().unwrap();
                let attr = |name: &str| {
                    g.split(&format!("{name}=\""))
                        .nth(1)
                        .unwrap()
                        .split('"')
                        .next()
                        .unwrap()
                        .to_string()
                };
                let declared: usize = attr("data-count").parse().unwrap();
                let pts = g.matches("class=\"pt\"").count();
                let found = if pts > 0 || declared == 0 {
                    pts
                } else {
                    let d = attr(" d");
                    d.matches(['M', 'L']).count()
                };
                out.push((chart.clone(), attr("data-series"), declared, found));
            }
        }
        out
    }

    fn sample() -> ResultDoc {
        let mut r = run("randread-qd1", 10_000.0, 100.0, 20, 3, 0.03, 0.7, 1);
        r.intervals[10].errors = 2;
        r.intervals[12].errors = 1;
        doc(vec![r])
    }

    #[test]
    fn self_contained() {
        let html = render_html(&sample());
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.ends_with("</html>\n"));
        for bad in ["http://", "https://", "<script", "src=", "url(", "@import"] {
            assert!(!html.contains(bad), "found {bad:?}");
        }
        // The environment's hostile string is escaped, not executed.
        assert!(html.contains("Test CPU &lt;script&gt;"));
    }

    #[test]
    fn every_series_count_matches_the_json() {
        let d = sample();
        let r = &d.runs[0];
        let html = render_html(&d);
        let counts = series_counts(&html);
        let expect = |chart: &str, series: &str| -> usize {
            match (chart, series) {
                (_, "errors") => r.intervals.iter().filter(|i| i.errors > 0).count(),
                ("run0-spectrum", "read") => r.totals.read.latency_us.spectrum.len(),
                ("run0-spectrum", "write") => r.totals.write.latency_us.spectrum.len(),
                (_, _) => r.intervals.len(),
            }
        };
        let charts: Vec<&str> = counts.iter().map(|c| c.0.as_str()).collect();
        for want in ["run0-iops", "run0-mbps", "run0-latency", "run0-spectrum"] {
            assert!(charts.contains(&want), "missing chart {want}");
        }
        // iops+errors, mbps+errors, p50+p99+errors, read+write spectra.
        assert_eq!(counts.len(), 2 + 2 + 3 + 2);
        for (chart, series, declared, found) in counts {
            assert_eq!(declared, found, "{chart}/{series}");
            assert_eq!(declared, expect(&chart, &series), "{chart}/{series}");
        }
        assert_eq!(expect("run0-iops", "errors"), 2);
    }

    #[test]
    fn a_replay_draws_the_recorded_rate_beside_the_achieved_one() {
        let mut d = sample();
        let run = &mut d.runs[0];
        for iv in &mut run.intervals {
            iv.recorded_iops = Some(iv.iops * 1.01);
        }
        run.replay.push(crate::result::ReplayResult {
            trace: "prod.iolog".into(),
            format: "fio3".into(),
            timing: "on-time".into(),
            speed: 1.0,
            recorded_ios: 10,
            issued_ios: 10,
            ..Default::default()
        });
        let n = run.intervals.len();
        let html = render_html(&d);
        let iops: Vec<_> = series_counts(&html)
            .into_iter()
            .filter(|c| c.0 == "run0-iops" && c.1 != "errors")
            .map(|c| (c.1, c.2))
            .collect();
        assert_eq!(
            iops,
            [("iops".to_string(), n), ("recorded_iops".to_string(), n)]
        );
        assert!(html.contains("IOPS, achieved / recorded"));
        assert!(html.contains("replay prod.iolog (fio3"), "the replay line");
    }

    #[test]
    fn a_lost_and_reconnected_connection_is_flagged_on_the_timeline() {
        let mut d = sample();
        let ev = |t_s: f64, kind: &str, detail: &str| crate::result::RunEvent {
            t_s,
            path: 0,
            kind: kind.into(),
            detail: detail.into(),
            rank: None,
            host: None,
        };
        d.runs[0].events = vec![
            ev(4.0, "down", "connection to 127.0.0.1:2049 lost after 4.0 s"),
            ev(
                4.5,
                "up",
                "reconnected to 127.0.0.1:2049 after 0.5 s (attempt 2)",
            ),
        ];
        let html = render_html(&d);
        let flags: Vec<_> = series_counts(&html)
            .into_iter()
            .filter(|c| c.1.starts_with("event_"))
            .collect();
        assert_eq!(
            flags,
            [
                ("run0-iops".into(), "event_down".into(), 1, 1),
                ("run0-iops".into(), "event_up".into(), 1, 1)
            ]
        );
        assert!(html.contains("<summary>Connection events</summary>"));
        assert!(html.contains("reconnected to 127.0.0.1:2049 after 0.5 s (attempt 2)"));
        // Without events: neither flags nor the table.
        let html = render_html(&sample());
        assert!(!html.contains("event_down") && !html.contains("Connection events"));
    }

    #[test]
    fn warmup_band_and_tables() {
        let html = render_html(&sample());
        // One warm-up band on each of the three timelines.
        assert_eq!(html.matches("data-band=\"warmup\"").count(), 3);
        assert!(html.contains("<table class=\"totals\">"));
        // Mixed read/write run: the all row plus read and write sub-rows.
        assert_eq!(html.matches("<tr class=\"sub\">").count(), 2);
        assert!(html.contains("<th>kernel</th><td>6.8.0</td>"));
        assert!(html.contains("<th>flags</th><td>a, b</td>"));
    }

    #[test]
    fn several_runs_get_per_run_charts() {
        let d = doc(vec![
            run("qd1", 10_000.0, 100.0, 10, 2, 0.02, 1.0, 1),
            run("qd32", 80_000.0, 400.0, 10, 2, 0.02, 1.0, 2),
        ]);
        let html = render_html(&d);
        let counts = series_counts(&html);
        for (chart, series, declared, found) in &counts {
            assert_eq!(declared, found, "{chart}/{series}");
            if chart.starts_with("runs-") {
                assert_eq!(*declared, 2);
            }
        }
        assert!(counts.iter().any(|c| c.0 == "runs-iops"));
        assert!(counts.iter().any(|c| c.0 == "runs-mbps"));
        assert!(html.contains("id=\"run-1\""));
        // Read-only runs: no write spectrum series.
        assert!(!counts
            .iter()
            .any(|c| c.0 == "run0-spectrum" && c.1 == "write"));
    }

    #[test]
    fn long_run_stays_small() {
        let mut r = run("soak", 50_000.0, 200.0, 3600, 60, 0.05, 0.7, 7);
        for i in (100..3600).step_by(97) {
            r.intervals[i].errors = 1;
        }
        let d = doc(vec![r]);
        let html = render_html(&d);
        eprintln!("3600-interval HTML: {} bytes", html.len());
        assert!(html.len() < 2_000_000, "{} bytes", html.len());
        for (chart, series, declared, found) in series_counts(&html) {
            assert_eq!(declared, found, "{chart}/{series}");
            if series != "errors" && !chart.ends_with("spectrum") {
                assert_eq!(declared, 3600);
            }
        }
    }

    #[test]
    fn spectrum_falls_back_to_stored_percentiles() {
        let mut d = sample();
        d.runs[0].totals.read.latency_us.spectrum.clear();
        d.runs[0].totals.read.service_us.spectrum.clear();
        let html = render_html(&d);
        let c = series_counts(&html);
        let read = c
            .iter()
            .find(|c| c.0 == "run0-spectrum" && c.1 == "read")
            .unwrap();
        assert_eq!((read.2, read.3), (8, 8));
    }

    #[test]
    fn schedule_and_verification_are_shown() {
        use crate::result::{ScheduleResult, VerifyResult, VerifySample};
        let mut d = sample();
        d.runs[0].schedule = Some(ScheduleResult {
            requested_iops: 5000.0,
            achieved_iops: 4950.0,
            achieved_pct: 99.0,
            lag_us: latency(12.0, false),
            max_backlog_ios: 3.5,
            pacing: Some(crate::result::PacingResult {
                mode: "hybrid".into(),
                spin_s: 0.25,
                sleep_s: 2.5,
                sleeps: 2700,
                wake_late_us: latency(9.0, false),
                margin_us: 31.5,
                cpu_us_per_io_excl_spin: 1.5,
            }),
        });
        d.runs[0].verify = Some(VerifyResult {
            units_checked: 1000,
            ok: 996,
            torn: 1,
            mismatches: 3,
            stale: 2,
            corrupted: 1,
            samples: vec![VerifySample {
                kind: "stale".into(),
                target: "/dev/nvme0n1".into(),
                offset: 8192,
                detail: "expected key 7, found 5 <00 ff>".into(),
            }],
            ..Default::default()
        });
        for iv in &mut d.runs[0].intervals {
            iv.lag_us = Some(crate::result::IntervalLatency {
                p99: 4.0,
                max: 40.0,
                ..Default::default()
            });
            iv.backlog_ios = Some(0.2);
        }
        let html = render_html(&d);
        assert!(html.contains("Issue lag behind the schedule p99 / max"));
        assert!(html.contains("Backlog (I/Os due, not yet issued; estimated)"));
        let sched = html.split("<table class=\"schedule\">").nth(1).unwrap();
        assert!(sched.contains("<td class=\"n\">5,000</td><td class=\"n\">4,950</td>"));
        assert!(html.contains("Pacing <b>hybrid</b>: 0.25 s busy-waiting"));
        assert!(html.contains("3 mismatches found."));
        assert!(html.contains("<th>stale</th>"));
        assert!(html.contains("expected key 7, found 5 &lt;00 ff&gt;"));
        assert!(html.contains("The first 1 of 3 mismatches."));
        // Runs without them show neither.
        let plain = render_html(&sample());
        assert!(!plain.contains("Rate schedule") && !plain.contains("Verification"));
        assert!(!plain.contains("Issue lag behind the schedule"));
    }
}
