//! The HTML report in a real headless Chromium: it renders without console errors,
//! every chart holds exactly the points the JSON holds, and a 1-hour result stays
//! small and opens fast. Screenshots land in target/test-screenshots/ for a human look.

use super::*;
use std::time::Instant;

pub(super) fn chromium() -> Option<&'static str> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
}

/// Runs headless Chromium on a file; returns (dumped DOM, stderr, seconds).
pub(super) fn render(
    browser: &str,
    html: &std::path::Path,
    screenshot: Option<&std::path::Path>,
) -> (String, String, f64) {
    let profile = tempdir();
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1280,2400",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()));
    match screenshot {
        Some(p) => cmd.arg(format!("--screenshot={}", p.display())),
        None => cmd.arg("--dump-dom"),
    };
    cmd.arg(format!("file://{}", html.display()));
    let t = Instant::now();
    let out = cmd.output().expect("run chromium");
    let secs = t.elapsed().as_secs_f64();
    (stdout(&out), stderr(&out), secs)
}

/// (series name, declared count, drawn points) for every series in the DOM.
pub(super) fn series(dom: &str) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    for part in dom.split("<g class=\"series").skip(1) {
        let head = &part[..part.find('>').unwrap()];
        let attr = |name: &str| {
            let i = head.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
            head[i..i + head[i..].find('"').unwrap()].to_string()
        };
        let declared: usize = attr("data-count").parse().unwrap();
        let body = &part[..part.find("</g>").unwrap_or(part.len())];
        let pts = body.matches("class=\"pt\"").count();
        let drawn = if pts > 0 {
            pts
        } else {
            // Compact form: one path whose vertices are the points.
            let d = body
                .split(" d=\"")
                .nth(1)
                .map(|s| &s[..s.find('"').unwrap()])
                .unwrap_or("");
            d.matches(['M', 'L']).count()
        };
        out.push((attr("data-series"), declared, drawn));
    }
    out
}

pub(super) fn screenshot_dir() -> std::path::PathBuf {
    let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-screenshots");
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn run_report_renders_with_every_point() {
    let Some(browser) = chromium() else {
        return skip_or_fail("chromium is not installed");
    };
    let d = tempdir();
    let html = d.path().join("r.html");
    let r = ioscope_to(
        &d.path().join("r.json"),
        [
            "run",
            "--target",
            "mem:64m",
            "--rw",
            "randrw",
            "--duration",
            "3s",
            "--warmup",
            "1s",
            "--interval",
            "250ms",
            "-q",
            "--html",
            html.to_str().unwrap(),
        ],
    )
    .expect_code(0);
    let n = r.run(0).intervals.len();
    let (dom, err, _) = render(browser, &html, None);
    assert!(!err.contains(":CONSOLE("), "console output: {err}");
    let s = series(&dom);
    assert!(s.len() >= 4, "series: {s:?}");
    for (name, declared, drawn) in &s {
        assert_eq!(declared, drawn, "series {name}");
    }
    // Timeline series carry one point per interval.
    let timeline: Vec<_> = s
        .iter()
        .filter(|(n, _, _)| n == "iops" || n == "lat_p99_us")
        .collect();
    assert_eq!(timeline.len(), 2, "{s:?}");
    // The spectrum series carry one point per stored percentile.
    let spectrum = r.run(0).totals.read.latency_us.spectrum.len();
    assert!(
        s.iter().any(|(n, c, _)| n == "read" && *c == spectrum),
        "{s:?} vs {spectrum}"
    );
    for (name, declared, _) in timeline {
        assert_eq!(*declared, n, "series {name} vs {n} intervals");
    }
    let shot = screenshot_dir().join("run.png");
    let _ = render(browser, &html, Some(&shot));
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000);
}

#[test]
fn hour_long_result_stays_small_and_opens_fast() {
    let Some(browser) = chromium() else {
        return skip_or_fail("chromium is not installed");
    };
    let d = tempdir();
    let mut r = run_json(&["run", "--target", "mem:16m", "--duration", "2s"]).doc;
    // Stretch the measured result to 3600 one-second intervals.
    let run0 = &mut r.runs[0];
    let iv = run0.intervals[0].clone();
    run0.intervals = (0..3600u64)
        .map(|k| {
            let mut v = iv.clone();
            v.index = k;
            v.t_s = (k + 1) as f64;
            v.iops = iv.iops * (1.0 + 0.1 * ((k as f64) / 50.0).sin());
            v
        })
        .collect();
    let big = d.path().join("big.json");
    std::fs::write(&big, serde_json::to_vec(&r).unwrap()).unwrap();
    let html = d.path().join("big.html");
    let o = run(&[
        "report",
        big.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let size = std::fs::metadata(&html).unwrap().len();
    assert!(size < 2_000_000, "HTML is {size} bytes");
    // Time against an empty page so Chromium's own start-up is not counted.
    let empty = d.path().join("empty.html");
    std::fs::write(&empty, "<!doctype html><title>x</title>").unwrap();
    let (_, _, base) = render(browser, &empty, None);
    let (dom, err, secs) = render(browser, &html, None);
    assert!(!err.contains(":CONSOLE("), "{err}");
    // -0.04 s here: Chromium's own timing noise; 2 s tells a page slow to draw.
    assert!(
        secs - base < 2.0,
        "opening took {:.2} s beyond an empty page",
        secs - base
    );
    for (name, declared, drawn) in series(&dom) {
        assert_eq!(declared, drawn, "series {name}");
    }
    println!(
        "3600-interval HTML: {size} bytes, {:.2} s beyond an empty page",
        secs - base
    );
}

/// The series of one chart (`data-chart="ID"`) in the DOM, as [`series`] gives them.
pub(super) fn chart_series(dom: &str, id: &str) -> Vec<(String, usize, usize)> {
    series(chart_fragment(dom, id))
}

/// The figure of one chart (`data-chart="ID"`) in the DOM, or "" without it.
fn chart_fragment<'a>(dom: &'a str, id: &str) -> &'a str {
    let Some(start) = dom.find(&format!("data-chart=\"{id}\"")) else {
        return "";
    };
    let fig = &dom[start..];
    &fig[..fig.find("</figure>").unwrap_or(fig.len())]
}

/// The value of attribute `name` in the tag text `tag`.
fn attr_f64(tag: &str, name: &str) -> Option<f64> {
    let i = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[i..i + tag[i..].find('"')?].parse().ok()
}

/// The drawn points (cx, cy in pixels) of series `series` in chart `id`, in order.
pub(super) fn series_points(dom: &str, id: &str, series: &str) -> Vec<(f64, f64)> {
    let fig = chart_fragment(dom, id);
    let Some(start) = fig.find(&format!("data-series=\"{series}\"")) else {
        return Vec::new();
    };
    let body = &fig[start..];
    let body = &body[..body.find("</g>").unwrap_or(body.len())];
    body.split("<circle class=\"pt\"")
        .skip(1)
        .filter_map(|c| {
            let tag = &c[..c.find('>')?];
            Some((attr_f64(tag, "cx")?, attr_f64(tag, "cy")?))
        })
        .collect()
}

/// The shaded bands of chart `id`: (kind, tooltip, x, width) in pixels.
pub(super) fn chart_bands(dom: &str, id: &str) -> Vec<(String, String, f64, f64)> {
    let fig = chart_fragment(dom, id);
    fig.split("<rect class=\"band ")
        .skip(1)
        .filter_map(|r| {
            let tag = &r[..r.find('>')?];
            let kind = tag[..tag.find('"')?].to_string();
            let title = r.split_once("<title>")?.1;
            let title = title[..title.find("</title>")?].to_string();
            Some((kind, title, attr_f64(tag, "x")?, attr_f64(tag, "width")?))
        })
        .collect()
}

#[test]
fn curve_report_plots_every_curve_point() {
    let Some(browser) = chromium() else {
        return skip_or_fail("chromium is not installed");
    };
    let d = tempdir();
    let html = d.path().join("r.html");
    let r = ioscope_to(
        &d.path().join("r.json"),
        [
            "curve",
            "--target",
            "sim:1g?service=100us&time=virtual",
            "--qd",
            "4",
            "--duration",
            "1s",
            "--warmup",
            "200ms",
            "--max-latency",
            "p99=1ms",
            "--points",
            "50,80",
            "-q",
            "--html",
            html.to_str().unwrap(),
        ],
    )
    .expect_code(0);
    let curve = r.doc.curves.first().expect("a curve");
    // The lines join the points at requested rates; the closed-loop max run is drawn
    // apart, as one square per percentile (p50, p99, p99.9).
    let max_runs = curve
        .points
        .iter()
        .filter(|p| p.requested_iops <= 0.0)
        .count();
    let rated = curve.points.len() - max_runs;
    assert!(rated >= 2 && max_runs == 1, "{curve:?}");
    let (dom, err, _) = render(browser, &html, None);
    assert!(!err.contains(":CONSOLE("), "console output: {err}");
    let curve = chart_series(&dom, "curve");
    let names: Vec<&str> = curve.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        names,
        ["lat_p50_us", "lat_p99_us", "lat_p99_9_us", "max"],
        "{curve:?}"
    );
    for (name, declared, drawn) in &curve {
        let want = if name == "max" { 3 * max_runs } else { rated };
        assert_eq!(*declared, want, "curve series {name}");
        assert_eq!(declared, drawn, "curve series {name}");
    }
    for (name, declared, drawn) in series(&dom) {
        assert_eq!(declared, drawn, "series {name}");
    }
    // The SLA answer is stated in words and drawn as a bound line.
    assert!(dom.contains("data-rule=\"sla-bound\""), "no SLA line");
    assert!(dom.contains("p99 ≤ 1 ms"), "no SLA sentence");
    let shot = screenshot_dir().join("curve.png");
    let _ = render(browser, &html, Some(&shot));
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000);
}

#[test]
fn sweep_report_plots_one_point_per_run() {
    let Some(browser) = chromium() else {
        return skip_or_fail("chromium is not installed");
    };
    let d = tempdir();
    let html = d.path().join("r.html");
    let runs = ioscope_to(
        &d.path().join("r.json"),
        [
            "run",
            "--target",
            "mem:64m",
            "--bs",
            "4k,8k,16k,32k",
            "--duration",
            "300ms",
            "-q",
            "--html",
            html.to_str().unwrap(),
        ],
    )
    .expect_code(0)
    .doc
    .runs
    .len();
    assert_eq!(runs, 4);
    let (dom, err, _) = render(browser, &html, None);
    assert!(!err.contains(":CONSOLE("), "console output: {err}");
    assert!(dom.contains("Sweep over block size"));
    for id in ["sweep-iops", "sweep-mbps", "sweep-latency"] {
        let s = chart_series(&dom, id);
        assert!(!s.is_empty(), "no chart {id}");
        for (name, declared, drawn) in s {
            assert_eq!(declared, runs, "{id}/{name}");
            assert_eq!(drawn, runs, "{id}/{name}");
        }
    }
    // Block sizes are labelled as sizes on the log2 axis.
    for tick in [">4k<", ">8k<", ">16k<", ">32k<"] {
        assert!(dom.contains(tick), "missing tick {tick}");
    }
    let shot = screenshot_dir().join("sweep.png");
    let _ = render(browser, &html, Some(&shot));
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000);
}
