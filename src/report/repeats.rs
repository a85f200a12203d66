//! How a repeated run's figures (`runs[].repeats`, `--repeat N`) are shown: one
//! terminal line per run and a small table in the run's HTML section. Each figure is
//! its mean ± the half width of its 95 % confidence interval (as a share of the mean)
//! and its coefficient of variation; a figure whose interval is wider than ±5 % of
//! its mean is marked unstable. Nothing is computed here but the display shares.

use std::fmt::Write as _;

use super::format::{esc, human};
use crate::result::repeats::{Figure, Repeats};
use crate::result::RunResult;

/// The figures in display order: label, unit, figure.
fn figures(r: &Repeats) -> [(&'static str, &'static str, &Figure); 6] {
    let l = &r.latency_us;
    [
        ("IOPS", "", &r.iops),
        ("MB/s", "", &r.mbps),
        ("mean latency", " µs", &l.mean),
        ("p50", " µs", &l.p50),
        ("p99", " µs", &l.p99),
        ("p99.9", " µs", &l.p99_9),
    ]
}

fn pct(share: f64) -> String {
    format!("{}%", human(share * 100.0))
}

/// The terminal line of a repeated run; `None` for a run measured once.
pub fn terminal_line(r: &RunResult) -> Option<String> {
    if r.repetitions.is_empty() {
        return None;
    }
    let total = r.repetitions.len();
    let Some(rep) = &r.repeats else {
        return Some(format!(
            "repeats: {} of {total} repetitions completed, too few for a spread",
            r.repetitions.iter().filter(|x| !x.interrupted).count()
        ));
    };
    let parts: Vec<String> = figures(rep)
        .iter()
        .map(|(label, unit, f)| {
            format!(
                "{label} {}{unit} ±{} (CV {}){}",
                human(f.mean),
                pct(f.half_width_rel()),
                pct(f.cv),
                if f.unstable { " UNSTABLE" } else { "" }
            )
        })
        .collect();
    Some(format!(
        "repeats: mean of {} repetitions ±95% CI (Student's t): {}",
        rep.n,
        parts.join(", ")
    ))
}

/// The HTML table of a repeated run, for its section; empty for a run measured once.
pub fn html_table(r: &RunResult) -> String {
    let Some(rep) = &r.repeats else {
        return String::new();
    };
    let mut out = String::from(
        "<h3>Repetitions</h3><table class=\"repeats\"><thead><tr><th>figure</th><th>mean</th>\
         <th>95% CI</th><th>± of mean</th><th>stddev</th><th>CV</th><th></th></tr></thead><tbody>",
    );
    for (label, unit, f) in figures(rep) {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{} – {}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td{}>{}</td></tr>",
            esc(&format!("{label}{unit}")),
            human(f.mean),
            human(f.ci95[0]),
            human(f.ci95[1]),
            pct(f.half_width_rel()),
            human(f.stddev),
            pct(f.cv),
            if f.unstable { " class=\"worse\"" } else { "" },
            if f.unstable { "unstable" } else { "" }
        );
    }
    let _ = writeln!(
        out,
        "</tbody></table><p class=\"caption\">{} repetitions of this run, each with its own \
         warm-up; the run's other figures are the last repetition's. Unstable: the 95% \
         confidence interval (Student's t) is wider than ±5% of the mean.</p>",
        rep.n
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repeated(iops: &[f64]) -> RunResult {
        crate::report::testdata::repeated(RunResult::empty(), iops)
    }

    #[test]
    fn a_steady_run_has_no_unstable_figure_and_a_noisy_one_is_marked() {
        let steady = terminal_line(&repeated(&[10_000.0, 10_050.0, 9_990.0])).unwrap();
        assert!(
            steady.starts_with("repeats: mean of 3 repetitions"),
            "{steady}"
        );
        assert!(steady.contains("IOPS 10,013 ±"), "{steady}");
        assert!(!steady.contains("UNSTABLE"), "{steady}");
        let noisy = repeated(&[10_000.0, 14_000.0, 7_000.0]);
        let line = terminal_line(&noisy).unwrap();
        assert!(line.contains("UNSTABLE"), "{line}");
        let html = html_table(&noisy);
        assert!(html.contains("<td class=\"worse\">unstable</td>"), "{html}");
        assert!(terminal_line(&RunResult::empty()).is_none());
        assert!(html_table(&RunResult::empty()).is_empty());
        let one = terminal_line(&repeated(&[10_000.0])).unwrap();
        assert!(one.contains("1 of 1 repetitions completed"), "{one}");
    }
}
