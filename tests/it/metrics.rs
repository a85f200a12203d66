//! `--metrics`: a real Prometheus server (Debian's `prometheus`) scrapes the endpoint
//! four times a second during a run; its `rate()` agrees with ioscope's own interval IOPS,
//! `promtool check metrics` finds nothing wrong with a scraped body, and the endpoint
//! is gone once the command has ended.

use super::*;
use std::io::{Read, Write};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

pub(super) fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind port 0");
    l.local_addr().expect("local addr").port()
}

/// A plain HTTP/1.0 GET on loopback: (status line and headers, body).
pub(super) fn http_get(port: u16, path: &str) -> std::io::Result<(String, String)> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    Ok((head.to_string(), body.to_string()))
}

/// Percent-encodes a query string value.
fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A Prometheus server started by the test on 127.0.0.1, scraping one target every
/// 250 ms (four scrapes per 1 s interval, so no interval's sample falls between two
/// scrapes however their phases drift); killed and reaped by its PID when dropped, even if the test fails.
struct Prometheus {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    fn start(target_port: u16) -> Option<Prometheus> {
        if std::process::Command::new("prometheus")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("skipped: no prometheus (scripts/test.sh installs Debian's package)");
            return None;
        }
        let dir = tempdir();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 250ms\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: ioscope\n    scrape_interval: 250ms\n    \
                 scrape_timeout: 200ms\n    static_configs:\n      - targets: ['127.0.0.1:{target_port}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = std::process::Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start prometheus");
        let p = Prometheus {
            child,
            port,
            _dir: dir,
        };
        // Ready when its API answers (a loaded machine: up to 60 s).
        let deadline = Instant::now() + Duration::from_secs(60);
        while !matches!(http_get(port, "/-/ready"), Ok((h, _)) if h.contains(" 200")) {
            assert!(
                Instant::now() < deadline,
                "prometheus not ready within 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // Prometheus applies its targets some seconds after start (its scrape manager
        // reloads at most every 5 s); a run started before that loses its first
        // intervals. Ready to measure once the target has been tried (it is down).
        while !p.target_tried() {
            assert!(
                Instant::now() < deadline,
                "prometheus did not scrape its target within 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(p)
    }

    /// Whether the scrape target has been tried at least once.
    fn target_tried(&self) -> bool {
        let Ok((_, body)) = http_get(self.port, "/api/v1/targets") else {
            return false;
        };
        let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        v["data"]["activeTargets"]
            .as_array()
            .is_some_and(|ts| ts.iter().any(|t| t["health"] != "unknown"))
    }

    /// An instant query's vector at unix time `at_s`.
    fn query(&self, q: &str, at_s: f64) -> Vec<serde_json::Value> {
        let path = format!("/api/v1/query?query={}&time={at_s:.3}", encode(q));
        let (_, body) = http_get(self.port, &path).expect("query prometheus");
        let v: serde_json::Value = serde_json::from_str(&body).expect("prometheus JSON");
        assert_eq!(v["status"], "success", "{body}");
        v["data"]["result"].as_array().cloned().unwrap_or_default()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn prometheus_scrapes_the_live_endpoint_and_its_rate_matches_the_intervals() {
    let port = free_port();
    let Some(prom) = Prometheus::start(port) else {
        return;
    };
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let port_s = port.to_string();
    // An open-loop rate: every interval carries the same I/Os, so the comparison is
    // of the two ways of counting them, not of a noisy machine's speed.
    let mut run = Spawned::start([
        "run",
        "-t",
        "null:1g",
        "--rw",
        "randread",
        "--qd",
        "8",
        "--rate",
        "20000",
        "--duration",
        "20s",
        "--warmup",
        "0",
        "--interval",
        "1s",
        "--metrics",
        &port_s,
        "--json",
        json.to_str().unwrap(),
    ]);
    run.wait_intervals(&json, 2, FIRST_INTERVAL_TIMEOUT);
    let (head, body) = http_get(port, "/metrics").expect("scrape the endpoint");
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");
    assert_promtool_clean(&body);
    let ran = run.finish_result(&json);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    // The endpoint went with the command.
    assert!(
        http_get(port, "/metrics").is_err(),
        "the endpoint outlived the command"
    );
    assert_rate_agrees(&prom, &intervals_so_far(&json));
}

/// `promtool check metrics` finds nothing to say about a scraped body.
#[track_caller]
pub(super) fn assert_promtool_clean(body: &str) {
    let mut promtool = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (scripts/test.sh installs Debian's prometheus package)");
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let checked = promtool.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(
        checked.status.success() && said.trim().is_empty(),
        "promtool: {said}\n{body}"
    );
}

/// A sample of the 0.0.4 text format: the value and timestamp (ms; 0 when none) of
/// the series of `name` whose labels contain every one of `labels`.
pub(super) fn sample(body: &str, name: &str, labels: &[&str]) -> Option<(f64, u64)> {
    body.lines().find_map(|l| {
        let (series, rest) = l.split_once(' ')?;
        let (n, ls) = series.split_once('{').unwrap_or((series, ""));
        if n != name || !labels.iter().all(|want| ls.contains(want)) {
            return None;
        }
        let mut it = rest.split_whitespace();
        let v = it.next()?.parse().ok()?;
        Some((v, it.next().and_then(|t| t.parse().ok()).unwrap_or(0)))
    })
}

/// `rate(ioscope_ios_total[5s])` at each interval end against ioscope's own IOPS
/// over the intervals that ended in those 5 s, wherever Prometheus holds the whole
/// window (5 samples; a window the series only starts in is extrapolated low). The
/// samples carry their interval's end as timestamp, so both sides count the same
/// intervals: within 5 % (0.0–0.5 % seen on a quiet host, up to 2.4 % at a load
/// average of 12). One point off is allowed: a collector delayed by more than 750 ms
/// can close two intervals between two scrapes, and Prometheus never sees the
/// first one's sample.
fn assert_rate_agrees(prom: &Prometheus, intervals: &[ioscope::result::Interval]) {
    let mut report = Vec::new();
    let mut off = 0;
    for iv in intervals.iter().filter(|iv| iv.t_s < 19.5) {
        let samples = prom.query("count_over_time(ioscope_ios_total[5s])", iv.unix_s);
        let scraped = samples
            .first()
            .and_then(|r| r["value"][1].as_str())
            .and_then(|v| v.parse::<f64>().ok());
        if scraped.unwrap_or(0.0) < 5.0 {
            continue;
        }
        let window: Vec<_> = intervals
            .iter()
            .filter(|w| w.unix_s > iv.unix_s - 5.0 && w.unix_s <= iv.unix_s + 1e-3)
            .collect();
        let ios: u64 = window.iter().map(|w| w.ios).sum();
        let secs: f64 = window.iter().map(|w| w.duration_s).sum();
        let own = ios as f64 / secs;
        let got = prom.query("sum(rate(ioscope_ios_total[5s]))", iv.unix_s);
        let rate: f64 = got
            .first()
            .and_then(|r| r["value"][1].as_str())
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN);
        let err = (rate - own).abs() / own;
        if err.is_nan() || err > 0.05 {
            off += 1;
        }
        report.push(format!(
            "t={:.1}s prometheus {rate:.0} ioscope {own:.0} ({:.1} %)",
            iv.t_s,
            err * 100.0
        ));
    }
    eprintln!("{}", report.join("\n"));
    assert!(report.len() >= 8, "too few points: {report:?}");
    assert!(
        off <= 1,
        "{off} points off by more than 5 %:\n{}",
        report.join("\n")
    );
}

#[test]
fn an_address_that_cannot_be_served_is_refused_before_anything_is_written() {
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_port = taken.local_addr().unwrap().port().to_string();
    for (given, says) in [
        ("nine", "--metrics 'nine': expected PORT or HOST:PORT"),
        (
            taken_port.as_str(),
            "--metrics: cannot listen on 127.0.0.1:",
        ),
    ] {
        let o = run(&[
            "run",
            "-t",
            "null:1g",
            "--duration",
            "1s",
            "--metrics",
            given,
            "--json",
            json.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
        assert!(!json.exists() && !intervals_jsonl(&json).exists());
    }
}
