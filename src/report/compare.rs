//! Comparing results: runs of several result documents matched up, their totals
//! side by side with ratios against the first (baseline) document, and a verdict per
//! metric that refuses to call noise a win.
//!
//! The noise rule (documented in docs/reports.md): for each metric, take the
//! non-warm-up intervals of both runs, compute each side's standard error of the
//! interval mean (sample standard deviation / √n), pool them (√(se_a² + se_b²)), and
//! call the difference of the totals significant only if it exceeds
//! max(3 × pooled standard error, 2% of the baseline). The 2% floor keeps very
//! steady runs from turning trivia into verdicts. Intervals do not store p99.9, so
//! p99.9 borrows the relative spread of the interval p99. With fewer than two
//! measured intervals on a side only the 2% floor applies, and the text says so.
//!
//! Repeated runs (`--repeat N`, `runs[].repeats`) are compared by what the
//! repetitions say instead, when both sides have them: each side's mean over its
//! repetitions, and Welch's t-test of the two means (`result::repeats::Welch`:
//! unequal variances, Welch–Satterthwaite degrees of freedom). p < 0.05 is better or
//! worse by the metric's direction; otherwise the sides are "not distinguishable".
//! CPU per I/O, which repetitions do not keep, stays with the interval rule.

use std::fmt::Write;

use serde::Serialize;

use super::format::{esc, human, ratio};
use super::html::{page_head, spectrum_chart, timeline_charts};
use crate::result::repeats::{Figure, Repeats, Welch};
use crate::result::{Interval, ResultDoc, RunResult};

/// The metrics compared, in display order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Iops,
    Mbps,
    LatMeanUs,
    LatP50Us,
    LatP99Us,
    LatP99_9Us,
    CpuUsPerIo,
    /// Network runs: payload Gbit/s as the receiver counted it.
    Gbps,
}

impl Metric {
    pub const ALL: [Metric; 7] = [
        Metric::Iops,
        Metric::Mbps,
        Metric::LatMeanUs,
        Metric::LatP50Us,
        Metric::LatP99Us,
        Metric::LatP99_9Us,
        Metric::CpuUsPerIo,
    ];

    /// The metrics of a network run (`kind = "net"`): Gbit/s first; IOPS are
    /// writes (or transactions) per second there.
    pub const NET: [Metric; 8] = [
        Metric::Gbps,
        Metric::Mbps,
        Metric::Iops,
        Metric::LatMeanUs,
        Metric::LatP50Us,
        Metric::LatP99Us,
        Metric::LatP99_9Us,
        Metric::CpuUsPerIo,
    ];

    /// The metrics compared for runs like `r`.
    pub fn for_run(r: &RunResult) -> &'static [Metric] {
        if r.kind.is_storage() {
            &Metric::ALL
        } else {
            &Metric::NET
        }
    }

    /// Display name with unit.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Iops => "IOPS",
            Metric::Mbps => "MB/s",
            Metric::LatMeanUs => "mean latency µs",
            Metric::LatP50Us => "p50 latency µs",
            Metric::LatP99Us => "p99 latency µs",
            Metric::LatP99_9Us => "p99.9 latency µs",
            Metric::CpuUsPerIo => "CPU µs per I/O",
            Metric::Gbps => "Gbit/s",
        }
    }

    /// Throughput is better higher; latency and CPU cost are better lower.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Iops | Metric::Mbps | Metric::Gbps)
    }

    /// The run's total for this metric.
    fn total(self, r: &RunResult) -> f64 {
        let a = &r.totals.all;
        match self {
            Metric::Iops => a.iops,
            Metric::Mbps => a.mbps,
            Metric::LatMeanUs => a.latency_us.mean,
            Metric::LatP50Us => a.latency_us.p50,
            Metric::LatP99Us => a.latency_us.p99,
            Metric::LatP99_9Us => a.latency_us.p99_9,
            Metric::CpuUsPerIo => r.cpu.cpu_us_per_io,
            Metric::Gbps => r.totals.net.gbps.unwrap_or(0.0),
        }
    }

    /// This metric's figure over a repeated run's repetitions, where they keep it.
    fn figure(self, r: &Repeats) -> Option<&Figure> {
        let l = &r.latency_us;
        match self {
            Metric::Iops => Some(&r.iops),
            Metric::Mbps => Some(&r.mbps),
            Metric::LatMeanUs => Some(&l.mean),
            Metric::LatP50Us => Some(&l.p50),
            Metric::LatP99Us => Some(&l.p99),
            Metric::LatP99_9Us => Some(&l.p99_9),
            Metric::CpuUsPerIo | Metric::Gbps => None,
        }
    }

    /// The per-interval value whose spread measures this metric's noise.
    fn interval(self, iv: &Interval) -> f64 {
        match self {
            Metric::Iops => iv.iops,
            Metric::Mbps => iv.mbps,
            Metric::LatMeanUs => iv.lat_us.mean,
            Metric::LatP50Us => iv.lat_us.p50,
            // No interval p99.9: use the p99 spread, scaled (see `std_err`).
            Metric::LatP99Us | Metric::LatP99_9Us => iv.lat_us.p99,
            Metric::CpuUsPerIo => iv.cpu.cpu_us_per_io,
            Metric::Gbps => iv.net.as_ref().map_or(0.0, |n| n.gbps),
        }
    }

    /// Standard error of this metric for one run, from its measured intervals;
    /// None with fewer than two.
    fn std_err(self, r: &RunResult) -> Option<f64> {
        let v: Vec<f64> = r
            .intervals
            .iter()
            .filter(|iv| !iv.warmup)
            .map(|iv| self.interval(iv))
            .collect();
        let n = v.len() as f64;
        if v.len() < 2 {
            return None;
        }
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let se = (var / n).sqrt();
        if self == Metric::LatP99_9Us {
            // Same relative spread as the interval p99, applied to the total p99.9.
            return Some(if mean > 0.0 {
                se / mean * self.total(r)
            } else {
                0.0
            });
        }
        Some(se)
    }
}

/// How a difference was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    WithinNoise,
    /// Repeated runs whose means Welch's test cannot tell apart (p ≥ 0.05).
    NotDistinguishable,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::WithinNoise => "within noise",
            Verdict::NotDistinguishable => "not distinguishable",
        }
    }
}

/// How the runs of one [`RunComparison`] were paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    Name,
    Position,
}

/// One side against the baseline for one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delta {
    /// This side's value divided by the baseline's; None when the baseline is 0.
    pub ratio: Option<f64>,
    /// This side minus the baseline, in the metric's unit.
    pub diff: f64,
    /// Pooled standard error of the two sides' interval means; None when a side had
    /// fewer than two measured intervals.
    pub pooled_std_err: Option<f64>,
    /// The smallest |diff| that counts: max(3 × pooled_std_err, 2% of baseline);
    /// 0 when the repetitions decided ([`Delta::welch`]).
    pub threshold: f64,
    /// Both sides repeated: Welch's t-test of their repetition means, which decided
    /// the verdict (the values compared are then those means).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub welch: Option<Welch>,
    pub verdict: Verdict,
}

/// One metric across all sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricRow {
    pub metric: Metric,
    /// One value per document, baseline first.
    pub values: Vec<f64>,
    /// One delta per non-baseline document (so `values.len() - 1` of them).
    pub deltas: Vec<Delta>,
}

/// One run as it appears in every compared document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunComparison {
    /// The baseline run's name.
    pub name: String,
    pub matched_by: MatchedBy,
    /// The matched run of each document, baseline first.
    pub runs: Vec<RunResult>,
    pub metrics: Vec<MetricRow>,
}

/// The comparison of several result documents against the first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Document labels, baseline first.
    pub labels: Vec<String>,
    pub runs: Vec<RunComparison>,
    /// Runs that had no counterpart in some document, as sentences.
    pub unmatched: Vec<String>,
}

/// Relative floor of the noise rule: differences under 2% of the baseline never count.
pub const MIN_RELATIVE_DIFF: f64 = 0.02;
/// Multiple of the pooled standard error a difference must exceed.
pub const STD_ERR_FACTOR: f64 = 3.0;

/// Compares `docs` against the first one. Runs are matched by name; runs left over
/// on both sides are then paired in order (by position).
pub fn compare(docs: &[(String, ResultDoc)]) -> Comparison {
    let labels: Vec<String> = docs.iter().map(|d| d.0.clone()).collect();
    let mut unmatched = Vec::new();
    let Some(((base_label, base), others)) = docs.split_first() else {
        return Comparison {
            labels,
            runs: Vec::new(),
            unmatched,
        };
    };
    // For each other document: baseline run index → (its run index, by name?).
    let mut maps: Vec<Vec<Option<(usize, bool)>>> = Vec::new();
    for (label, doc) in others {
        let mut map = vec![None; base.runs.len()];
        let mut used = vec![false; doc.runs.len()];
        for (bi, br) in base.runs.iter().enumerate() {
            if let Some(oi) = (0..doc.runs.len()).find(|&i| !used[i] && doc.runs[i].name == br.name)
            {
                used[oi] = true;
                map[bi] = Some((oi, true));
            }
        }
        let free: Vec<usize> = (0..doc.runs.len()).filter(|&i| !used[i]).collect();
        let mut free = free.into_iter();
        for slot in map.iter_mut().filter(|m| m.is_none()) {
            match free.next() {
                Some(oi) => {
                    used[oi] = true;
                    *slot = Some((oi, false));
                }
                None => break,
            }
        }
        for (oi, r) in doc.runs.iter().enumerate() {
            if !used[oi] {
                unmatched.push(format!(
                    "run \"{}\" of {label} has no counterpart in {base_label}",
                    r.name
                ));
            }
        }
        maps.push(map);
    }
    let mut runs = Vec::new();
    for (bi, br) in base.runs.iter().enumerate() {
        let mut sides = vec![br.clone()];
        let mut by_name = true;
        let mut missing = Vec::new();
        for (k, (label, doc)) in others.iter().enumerate() {
            match maps[k][bi] {
                Some((oi, named)) => {
                    sides.push(doc.runs[oi].clone());
                    by_name &= named;
                }
                None => missing.push(label.as_str()),
            }
        }
        if !missing.is_empty() {
            unmatched.push(format!(
                "run \"{}\" of {base_label} has no counterpart in {}",
                br.name,
                missing.join(", ")
            ));
            continue;
        }
        let metrics = Metric::for_run(br)
            .iter()
            .map(|&m| metric_row(m, &sides))
            .collect();
        runs.push(RunComparison {
            name: br.name.clone(),
            matched_by: if by_name {
                MatchedBy::Name
            } else {
                MatchedBy::Position
            },
            runs: sides,
            metrics,
        });
    }
    Comparison {
        labels,
        runs,
        unmatched,
    }
}

fn metric_row(m: Metric, sides: &[RunResult]) -> MetricRow {
    // Every side repeated: compared by their repetitions.
    let figures: Option<Vec<(&Figure, u32)>> = sides
        .iter()
        .map(|r| r.repeats.as_ref().and_then(|x| Some((m.figure(x)?, x.n))))
        .collect();
    if let Some(figures) = figures {
        return repeated_row(m, &figures);
    }
    let values: Vec<f64> = sides.iter().map(|r| m.total(r)).collect();
    let a = values[0];
    let se_a = m.std_err(&sides[0]);
    let deltas = sides[1..]
        .iter()
        .zip(&values[1..])
        .map(|(r, &b)| {
            let pooled = se_a.zip(m.std_err(r)).map(|(x, y)| (x * x + y * y).sqrt());
            let threshold =
                (STD_ERR_FACTOR * pooled.unwrap_or(0.0)).max(MIN_RELATIVE_DIFF * a.abs());
            let diff = b - a;
            let verdict = if diff.abs() <= threshold || !diff.is_finite() {
                Verdict::WithinNoise
            } else if (diff > 0.0) == m.higher_is_better() {
                Verdict::Better
            } else {
                Verdict::Worse
            };
            Delta {
                ratio: (a != 0.0).then(|| b / a),
                diff,
                pooled_std_err: pooled,
                threshold,
                welch: None,
                verdict,
            }
        })
        .collect();
    MetricRow {
        metric: m,
        values,
        deltas,
    }
}

/// A metric of repeated runs: their repetition means, judged by Welch's t-test.
fn repeated_row(m: Metric, figures: &[(&Figure, u32)]) -> MetricRow {
    let (base, n_base) = figures[0];
    let a = base.mean;
    let deltas = figures[1..]
        .iter()
        .map(|&(f, n)| {
            let welch = Welch::test(base, n_base, f, n);
            let diff = f.mean - a;
            let verdict = match welch {
                Some(w) if w.distinguishable() && diff != 0.0 => {
                    if (diff > 0.0) == m.higher_is_better() {
                        Verdict::Better
                    } else {
                        Verdict::Worse
                    }
                }
                _ => Verdict::NotDistinguishable,
            };
            Delta {
                ratio: (a != 0.0).then(|| f.mean / a),
                diff,
                pooled_std_err: None,
                threshold: 0.0,
                welch,
                verdict,
            }
        })
        .collect();
    MetricRow {
        metric: m,
        values: figures.iter().map(|(f, _)| f.mean).collect(),
        deltas,
    }
}

/// The noise rule in one sentence, shared by the text and HTML renderings.
pub const NOISE_RULE: &str = "A difference counts only if it exceeds max(3 × the pooled standard error of the two runs' non-warm-up interval means, 2% of the baseline); otherwise it is \"within noise\".";

/// How repeated runs are judged, for the text and HTML renderings.
pub const WELCH_RULE: &str = "Runs repeated on every side (--repeat) are compared by their repetitions' means with Welch's t-test: p < 0.05 is better or worse, otherwise \"not distinguishable\".";

/// The rules `c` was judged by: the noise rule, and Welch's when any metric was
/// judged by its repetitions.
fn rules(c: &Comparison) -> String {
    let repeated = c
        .runs
        .iter()
        .flat_map(|r| &r.metrics)
        .flat_map(|m| &m.deltas)
        .any(|d| d.welch.is_some());
    match repeated {
        true => format!("{NOISE_RULE}\n{WELCH_RULE}"),
        false => NOISE_RULE.to_string(),
    }
}

fn run_heading(c: &Comparison, rc: &RunComparison) -> String {
    let names: Vec<String> = rc
        .runs
        .iter()
        .zip(&c.labels)
        .map(|(r, l)| format!("\"{}\" ({l})", r.name))
        .collect();
    format!(
        "{} — matched by {}",
        names.join(" vs "),
        match rc.matched_by {
            MatchedBy::Name => "name",
            MatchedBy::Position => "position",
        }
    )
}

fn delta_note(d: &Delta) -> String {
    if let Some(w) = &d.welch {
        return match w.p {
            p if p < 0.001 => "Welch p<0.001".to_string(),
            p => format!("Welch p={}", human(p)),
        };
    }
    match d.pooled_std_err {
        Some(_) => format!("±{}", human(d.threshold)),
        None => format!("±{} (2% floor only: too few intervals)", human(d.threshold)),
    }
}

/// A plain-text table per matched run, for terminals and logs.
pub fn render_compare_text(c: &Comparison) -> String {
    let mut out = String::new();
    if let Some((base, others)) = c.labels.split_first() {
        let _ = writeln!(out, "Baseline: {base}; compared: {}", others.join(", "));
    }
    let _ = writeln!(out, "{}", rules(c));
    for rc in &c.runs {
        let _ = writeln!(out, "\nRun {}", run_heading(c, rc));
        let mut header = vec!["metric".to_string()];
        for (i, l) in c.labels.iter().enumerate() {
            header.push(l.clone());
            if i > 0 {
                header.push(format!("{l}/{}", c.labels[0]));
                header.push("verdict".into());
                header.push("threshold".into());
            }
        }
        let mut rows = vec![header];
        for m in &rc.metrics {
            let mut row = vec![m.metric.label().to_string(), human(m.values[0])];
            for (v, d) in m.values[1..].iter().zip(&m.deltas) {
                row.push(human(*v));
                row.push(d.ratio.map(ratio).unwrap_or_else(|| "–".into()));
                row.push(d.verdict.as_str().into());
                row.push(delta_note(d));
            }
            rows.push(row);
        }
        let cols = rows[0].len();
        let widths: Vec<usize> = (0..cols)
            .map(|i| {
                rows.iter()
                    .map(|r| r.get(i).map_or(0, |s| s.chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for row in &rows {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                let pad = widths[i] - cell.chars().count();
                // Text columns left-aligned, numbers right-aligned.
                let text = i == 0 || rows[0][i] == "verdict" || rows[0][i] == "threshold";
                if text {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad));
                } else {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                }
                line.push_str("  ");
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    if c.runs.is_empty() {
        let _ = writeln!(out, "\nNo runs could be matched.");
    }
    for u in &c.unmatched {
        let _ = writeln!(out, "Note: {u}");
    }
    out
}

/// A self-contained HTML page: the tables of [`render_compare_text`] plus the runs'
/// timelines and latency spectra overlaid.
pub fn render_compare_html(c: &Comparison) -> String {
    let title = format!("ioscope compare — {}", c.labels.join(" vs "));
    let mut out = String::with_capacity(64 * 1024);
    page_head(&mut out, &title);
    if let Some(base) = c.labels.first() {
        let _ = writeln!(
            out,
            "<p class=\"meta\">Baseline: <strong>{}</strong>. Ratios are side / baseline. {}</p>",
            esc(base),
            esc(&rules(c))
        );
    }
    for (ri, rc) in c.runs.iter().enumerate() {
        let _ = write!(
            out,
            "<section class=\"run\" id=\"cmp-{ri}\"><h2>{}</h2><table class=\"compare\"><thead><tr><th>metric</th>",
            esc(&run_heading(c, rc))
        );
        for (i, l) in c.labels.iter().enumerate() {
            let _ = write!(out, "<th>{}</th>", esc(l));
            if i > 0 {
                let _ = write!(
                    out,
                    "<th>{} / {}</th><th>verdict</th>",
                    esc(l),
                    esc(&c.labels[0])
                );
            }
        }
        out.push_str("</tr></thead><tbody>");
        for m in &rc.metrics {
            let _ = write!(
                out,
                "<tr><td>{}</td><td class=\"n\">{}</td>",
                esc(m.metric.label()),
                human(m.values[0])
            );
            for (v, d) in m.values[1..].iter().zip(&m.deltas) {
                let cls = match d.verdict {
                    Verdict::Better => "better",
                    Verdict::Worse => "worse",
                    Verdict::WithinNoise | Verdict::NotDistinguishable => "noise",
                };
                let _ = write!(
                    out,
                    "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"{cls}\" title=\"{}\">{}</td>",
                    human(*v),
                    d.ratio.map(ratio).unwrap_or_else(|| "–".into()),
                    esc(&format!("difference {} vs threshold {}", human(d.diff), delta_note(d))),
                    d.verdict.as_str()
                );
            }
            out.push_str("</tr>");
        }
        out.push_str("</tbody></table>\n");
        let sides: Vec<(&str, &Vec<Interval>)> = c
            .labels
            .iter()
            .zip(&rc.runs)
            .map(|(l, r)| (l.as_str(), &r.intervals))
            .collect();
        if sides.iter().any(|s| !s.1.is_empty()) {
            out.push_str("<h3>Timelines, overlaid</h3>");
            for chart in timeline_charts(&format!("cmp{ri}"), &sides) {
                out.push_str(&chart.render());
            }
        }
        let sides: Vec<(&str, &RunResult)> =
            c.labels.iter().map(String::as_str).zip(&rc.runs).collect();
        if let Some(chart) = spectrum_chart(&format!("cmp{ri}-spectrum"), &sides) {
            out.push_str("<h3>Latency percentiles, overlaid</h3>");
            out.push_str(&chart.render());
        }
        out.push_str("</section>\n");
    }
    if !c.unmatched.is_empty() {
        out.push_str("<section id=\"unmatched\"><h2>Not compared</h2><ul>");
        for u in &c.unmatched {
            let _ = write!(out, "<li>{}</li>", esc(u));
        }
        out.push_str("</ul></section>\n");
    }
    out.push_str("<footer>Rendered by ioscope compare. Charts plot only values stored in the result files.</footer>\n</main></body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::tests::series_counts;
    use crate::report::testdata::{doc, run};

    fn verdicts(c: &Comparison, run: usize) -> Vec<(Metric, Verdict)> {
        c.runs[run]
            .metrics
            .iter()
            .map(|m| (m.metric, m.deltas[0].verdict))
            .collect()
    }

    #[test]
    fn same_data_twice_is_within_noise() {
        let d = doc(vec![
            run("a", 10_000.0, 100.0, 30, 5, 0.03, 0.7, 1),
            run("b", 20_000.0, 200.0, 30, 5, 0.03, 0.7, 2),
        ]);
        let c = compare(&[("A".into(), d.clone()), ("B".into(), d)]);
        assert_eq!(c.runs.len(), 2);
        assert!(c.unmatched.is_empty());
        for r in 0..2 {
            assert_eq!(c.runs[r].matched_by, MatchedBy::Name);
            for (m, v) in verdicts(&c, r) {
                assert_eq!(v, Verdict::WithinNoise, "{m:?}");
            }
        }
    }

    #[test]
    fn qd1_vs_qd32_directions() {
        let a = doc(vec![run("qd1", 10_000.0, 100.0, 30, 5, 0.03, 1.0, 1)]);
        let b = doc(vec![run("qd32", 80_000.0, 400.0, 30, 5, 0.03, 1.0, 2)]);
        let c = compare(&[("qd1".into(), a), ("qd32".into(), b)]);
        assert_eq!(c.runs.len(), 1);
        assert_eq!(c.runs[0].matched_by, MatchedBy::Position);
        let v = verdicts(&c, 0);
        let get = |m: Metric| v.iter().find(|x| x.0 == m).unwrap().1;
        assert_eq!(get(Metric::Iops), Verdict::Better);
        assert_eq!(get(Metric::Mbps), Verdict::Better);
        for m in [
            Metric::LatMeanUs,
            Metric::LatP50Us,
            Metric::LatP99Us,
            Metric::LatP99_9Us,
        ] {
            assert_eq!(get(m), Verdict::Worse, "{m:?}");
        }
        let iops = &c.runs[0].metrics[0];
        assert!((iops.deltas[0].ratio.unwrap() - 8.0).abs() < 1e-9);
        let text = render_compare_text(&c);
        assert!(text.contains("8.00×"), "{text}");
        assert!(text
            .lines()
            .any(|l| l.starts_with("IOPS") && l.contains("better")));
        assert!(text
            .lines()
            .any(|l| l.starts_with("p99 latency µs") && l.contains("worse")));
    }

    #[test]
    fn noise_decides_small_differences() {
        // 5% more IOPS: significant when intervals are steady, noise when they swing.
        let steady = |iops, seed| doc(vec![run("r", iops, 100.0, 60, 0, 0.005, 1.0, seed)]);
        let c = compare(&[
            ("A".into(), steady(10_000.0, 1)),
            ("B".into(), steady(10_500.0, 2)),
        ]);
        assert_eq!(verdicts(&c, 0)[0], (Metric::Iops, Verdict::Better));
        let noisy = |iops, seed| doc(vec![run("r", iops, 100.0, 60, 0, 0.6, 1.0, seed)]);
        let c = compare(&[
            ("A".into(), noisy(10_000.0, 1)),
            ("B".into(), noisy(10_500.0, 2)),
        ]);
        assert_eq!(verdicts(&c, 0)[0], (Metric::Iops, Verdict::WithinNoise));
        // 1% is under the floor however steady the runs.
        let c = compare(&[
            ("A".into(), steady(10_000.0, 1)),
            ("B".into(), steady(10_100.0, 2)),
        ]);
        assert_eq!(verdicts(&c, 0)[0], (Metric::Iops, Verdict::WithinNoise));
    }

    #[test]
    fn repeated_runs_are_judged_by_welch_only_when_every_side_repeated() {
        let repeated = |iops: &[f64]| {
            let r = run("r", iops[0], 100.0, 30, 0, 0.03, 1.0, 1);
            doc(vec![crate::report::testdata::repeated(r, iops)])
        };
        let a = repeated(&[10_000.0, 10_400.0, 9_600.0]);
        let near = repeated(&[10_100.0, 10_500.0, 9_700.0]);
        let far = repeated(&[12_000.0, 12_100.0, 11_900.0]);
        let c = compare(&[("A".into(), a.clone()), ("B".into(), near)]);
        assert_eq!(
            verdicts(&c, 0)[0],
            (Metric::Iops, Verdict::NotDistinguishable)
        );
        let iops = &c.runs[0].metrics[0];
        assert_eq!(iops.values, [10_000.0, 10_100.0], "the repetitions' means");
        assert!(iops.deltas[0].welch.is_some_and(|w| w.p > 0.05));
        let c = compare(&[("A".into(), a.clone()), ("B".into(), far.clone())]);
        let v = verdicts(&c, 0);
        assert_eq!(v[0], (Metric::Iops, Verdict::Better));
        assert_eq!(v[2], (Metric::LatMeanUs, Verdict::Better));
        // CPU per I/O is not repeated: the interval rule.
        assert_eq!(v[6], (Metric::CpuUsPerIo, Verdict::WithinNoise));
        assert!(render_compare_text(&c).contains("Welch's t-test"));
        // One side measured once: the interval rule for every metric.
        let once = doc(vec![run("r", 12_000.0, 100.0, 30, 0, 0.03, 1.0, 2)]);
        let c = compare(&[("A".into(), a), ("B".into(), once)]);
        assert!(c.runs[0]
            .metrics
            .iter()
            .all(|m| m.deltas[0].welch.is_none()));
        assert!(!render_compare_text(&c).contains("Welch"));
    }

    #[test]
    fn unmatched_runs_are_reported() {
        let a = doc(vec![
            run("x", 1.0, 1.0, 3, 0, 0.0, 1.0, 1),
            run("y", 1.0, 1.0, 3, 0, 0.0, 1.0, 1),
        ]);
        let b = doc(vec![run("y", 1.0, 1.0, 3, 0, 0.0, 1.0, 1)]);
        let c = compare(&[("A".into(), a), ("B".into(), b)]);
        assert_eq!(c.runs.len(), 1);
        assert_eq!(c.runs[0].name, "y");
        assert_eq!(c.unmatched.len(), 1);
        assert!(render_compare_text(&c).contains("Note: run \"x\" of A"));
    }

    #[test]
    fn html_overlays_both_sides() {
        let a = doc(vec![run("qd1", 10_000.0, 100.0, 20, 4, 0.03, 0.7, 1)]);
        let b = doc(vec![run("qd32", 80_000.0, 400.0, 25, 4, 0.03, 0.7, 2)]);
        let c = compare(&[("qd1".into(), a), ("qd32".into(), b)]);
        let html = render_compare_html(&c);
        for bad in ["http://", "https://", "<script"] {
            assert!(!html.contains(bad), "found {bad:?}");
        }
        let counts = series_counts(&html);
        for (chart, series, declared, found) in &counts {
            assert_eq!(declared, found, "{chart}/{series}");
            match series.as_str() {
                "qd1:iops" => assert_eq!(*declared, 20),
                "qd32:iops" => assert_eq!(*declared, 25),
                _ => {}
            }
        }
        assert!(counts.iter().any(|c| c.1 == "qd1:iops"));
        assert!(counts.iter().any(|c| c.1 == "qd32:iops"));
        assert!(counts.iter().any(|c| c.1 == "qd32:write"));
        assert!(html.contains("<td class=\"better\""));
        assert!(html.contains("<td class=\"worse\""));
    }
}
