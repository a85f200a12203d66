//! A Markdown summary for pasting into a ticket or pull request: one table of run
//! totals with units in the headers, rounded for people (the JSON keeps precision).

use std::fmt::Write;

use super::format::{human, utc_datetime};
use crate::result::ResultDoc;

/// Column headers of the summary table.
pub const HEADERS: [&str; 11] = [
    "run",
    "IOPS",
    "MB/s",
    "mean µs",
    "p50 µs",
    "p99 µs",
    "p99.9 µs",
    "max µs",
    "errors",
    "CPU µs/IO",
    "target / engine",
];

/// A short heading line and a table with one row per run.
pub fn render_markdown(doc: &ResultDoc) -> String {
    let mut out = format!(
        "**{} {}** — {} — {} run{}{}\n\n",
        cell(&doc.tool.name),
        cell(&doc.tool.version),
        utc_datetime(doc.started_unix_s),
        doc.runs.len(),
        if doc.runs.len() == 1 { "" } else { "s" },
        if doc.interrupted {
            " (interrupted)"
        } else {
            ""
        }
    );
    let _ = writeln!(out, "| {} |", HEADERS.join(" | "));
    let align: Vec<&str> = HEADERS
        .iter()
        .map(|h| match *h {
            "run" | "target / engine" => ":--",
            _ => "--:",
        })
        .collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for r in &doc.runs {
        let a = &r.totals.all;
        let l = &a.latency_us;
        let cells = [
            cell(&r.name),
            human(a.iops),
            human(a.mbps),
            human(l.mean),
            human(l.p50),
            human(l.p99),
            human(l.p99_9),
            human(l.max),
            a.errors.to_string(),
            human(r.cpu.cpu_us_per_io),
            format!(
                "`{}` / {}",
                cell(&r.target).replace('`', "'"),
                cell(&r.engine)
            ),
        ];
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    if !doc.warnings.is_empty() {
        out.push('\n');
        for w in &doc.warnings {
            let _ = writeln!(out, "> ⚠ {}", cell(w));
        }
    }
    out
}

/// Table-safe text: pipes escaped, line breaks flattened.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testdata::{doc, run};

    #[test]
    fn table_shape() {
        let d = doc(vec![
            run("qd1", 10_000.0, 100.0, 10, 2, 0.02, 1.0, 1),
            run("qd|32", 80_000.0, 400.0, 10, 2, 0.02, 1.0, 2),
        ]);
        let md = render_markdown(&d);
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(rows.len(), 2 + 2, "header, alignment, one row per run");
        // Every row has the same number of unescaped cell separators.
        let seps = |l: &str| l.replace("\\|", "").matches('|').count();
        assert!(rows.iter().all(|r| seps(r) == HEADERS.len() + 1), "{md}");
        assert!(rows[1].starts_with("|:--|--:|"));
        assert!(rows[3].starts_with("| qd\\|32 | 80,000 |"), "{md}");
    }
}
