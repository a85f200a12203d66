use super::*;
use crate::report::testdata;

/// The header line's words and the data lines split on blanks, as parseflat reads
/// them.
fn parse(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = text
        .lines()
        .filter(|l| !l.starts_with('*') && !l.starts_with('<'));
    let head: Vec<String> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect();
    let rows = lines
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    (head, rows)
}

#[test]
fn flatfile_has_a_line_per_interval_and_the_average_in_named_columns() {
    let doc = testdata::doc(vec![testdata::run(
        "rd1 threads=4",
        1000.0,
        100.0,
        5,
        1,
        0.0,
        0.7,
        1,
    )]);
    let text = render_flatfile(&doc, "out");
    assert!(text.starts_with("<title>Vdbench out/flatfile.html</title><pre>\n"));
    let header = text.lines().find(|l| l.starts_with(' ')).unwrap();
    assert!(header.trim_start().starts_with("tod"), "{header}");
    let (head, rows) = parse(&text);
    assert_eq!(&head[..4], ["tod", "timestamp", "Run", "Interval"]);
    assert_eq!(head.len(), 2 + flat_columns_raw());
    assert_eq!(rows.len(), 6, "five intervals and the average");
    for r in &rows {
        assert_eq!(r.len(), head.len(), "{r:?}");
    }
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    assert_eq!(rows[0][col("Run")], "rd1");
    assert_eq!(rows[5][col("Interval")], "avg_2-5");
    let rate: f64 = rows[2][col("rate")].parse().unwrap();
    assert!(
        (rate - doc.runs[0].intervals[2].iops).abs() < 1e-3,
        "{rate}"
    );
}

// A run translated from rhpct=30 on a read-only wd: its zoned_abs hit band is the
// flatfile's rhpct; whpct stays 0 (the workload writes nothing).
#[test]
fn flatfile_hit_columns_come_from_a_hit_band() {
    let mut run = testdata::run("rd1", 1000.0, 100.0, 2, 1, 0.0, 1.0, 1);
    let w = run.workload.storage_mut().unwrap();
    w.read_pct = 100;
    w.dist = crate::result::Distribution::ZonedBytes {
        bands: vec![
            crate::result::ZoneBytes {
                io_pct: 30.0,
                bytes: 1 << 20,
            },
            crate::result::ZoneBytes {
                io_pct: 70.0,
                bytes: 0,
            },
        ],
    };
    let text = render_flatfile(&testdata::doc(vec![run]), "out");
    let (head, rows) = parse(&text);
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    assert_eq!(rows[0][col("rhpct")].parse::<f64>().unwrap(), 30.0);
    assert_eq!(rows[0][col("whpct")].parse::<f64>().unwrap(), 0.0);
}

fn flat_columns_raw() -> usize {
    28
}

#[test]
fn summary_lines_follow_the_header() {
    let doc = testdata::doc(vec![testdata::run("rd1", 1000.0, 100.0, 3, 1, 0.0, 1.0, 1)]);
    let text = render_summary(&doc, "out");
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.len() > 12 && l.as_bytes()[2] == b':')
        .collect();
    // The start line, three intervals and the average.
    assert_eq!(lines.len(), 5, "{text}");
    assert!(lines[0].contains("Starting RD=rd1"));
    assert!(
        lines[4].split_whitespace().nth(1) == Some("avg_2-3"),
        "{}",
        lines[4]
    );
    let totals = render_totals(&doc, "out");
    assert_eq!(totals.matches("avg_2-3").count(), 1);
}

#[test]
fn numbers_fit_their_columns() {
    assert_eq!(fs_ops::fit(12.345, 6, 3), "12.345");
    assert_eq!(fs_ops::fit(123456.7, 6, 1), "123457");
    assert_eq!(fs_ops::fit(1.5, 6, 1), "   1.5");
}
