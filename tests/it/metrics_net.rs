//! `--metrics` on `ioscope net run` and `ioscope net serve`: both ends serve the
//! registry during a loopback test, the client's byte counter holds exactly the
//! bytes of the interval lines printed so far and its rate agrees with their
//! throughput, the server's rate agrees too and its last sample holds every byte it
//! read, and `promtool check metrics` finds nothing wrong with either body.

use super::metrics::{assert_promtool_clean, free_port, http_get, sample};
use super::net::{Client, Server};
use super::*;
use std::time::Duration;

/// One scrape: (bytes sent, its timestamp in ms) of the client, and (bytes
/// received, timestamp) of the server.
struct Scrape {
    client: (f64, u64),
    server: (f64, u64),
}

fn scrape(port: u16, direction: &str) -> ((f64, u64), String) {
    let (_, body) = http_get(port, "/metrics").expect("scrape the endpoint");
    let want = format!("direction=\"{direction}\"");
    let s = sample(&body, "ioscope_bytes_total", &["workload=\"net\"", &want])
        .unwrap_or_else(|| panic!("no {direction} bytes in\n{body}"));
    (s, body)
}

#[test]
fn net_client_and_server_serve_byte_counters_that_agree_with_the_intervals() {
    let srv_port = free_port();
    let srv = Server::start_with(&["--metrics", &srv_port.to_string()]);
    let cli_port = free_port();
    let dir = tempdir();
    let json = dir.path().join("r.json");
    // Paced at 200 Mbit/s (25 MB/s): every interval moves the same bytes, so the
    // server's rate, read at its own sampling times, can be held against the
    // client's intervals; unpaced loopback on a shared host swings by far more.
    let mut c = Client::start(&[
        &srv.addr,
        "--duration",
        "6s",
        "--rate",
        "200m",
        "--interval",
        "1s",
        "--metrics",
        &cli_port.to_string(),
        "--json",
        json.to_str().unwrap(),
    ]);
    // The client feeds an interval before it prints its line, so the scrape after
    // line k holds intervals 1..k. Lines 1 to 5: the 6th ends the test.
    let mut scrapes = Vec::new();
    let mut bodies = Vec::new();
    for _ in 0..5 {
        c.wait_intervals(1, FIRST_INTERVAL_TIMEOUT);
        let (client, cb) = scrape(cli_port, "send");
        let (server, sb) = scrape(srv_port, "receive");
        scrapes.push(Scrape { client, server });
        bodies = vec![cb, sb];
    }
    for b in &bodies {
        assert_promtool_clean(b);
    }
    assert!(bodies[0].contains("command=\"net run\""), "{}", bodies[0]);
    assert!(bodies[1].contains("command=\"net serve\""), "{}", bodies[1]);
    let (code, err) = c.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(
        http_get(cli_port, "/metrics").is_err(),
        "client endpoint left"
    );
    let v = read_json(&json);
    let run = &v["runs"][0];
    let ivs: Vec<Interval> = serde_json::from_value(run["intervals"].clone()).unwrap();
    // Exact: the client's counter is the sum of the intervals printed so far.
    for (k, s) in scrapes.iter().enumerate() {
        let printed: u64 = ivs[..=k].iter().map(|iv| iv.bytes).sum();
        assert_eq!(s.client.0 as u64, printed, "after interval line {}", k + 1);
    }
    // Rates over lines 1 to 5, each end's as its timestamps say. The client's is
    // its own intervals' bytes over the span of their stamps; within 5 % (what
    // separates them is the wall clock's stamps against the monotonic clock's
    // durations: under 0.1 % seen in four runs). The server's counts what it read by
    // its sampling times (every second), against the same intervals' throughput:
    // what sits in socket buffers at either sample may differ by a few hundred KB
    // of 25 MB/s × 3-4 s; under 0.1 % seen in four runs, 5 % allowed for a loaded
    // host whose sampler wakes late.
    let (first, last) = (&scrapes[0], &scrapes[4]);
    let rate = |a: (f64, u64), b: (f64, u64)| (b.0 - a.0) / ((b.1 - a.1) as f64 / 1e3);
    let own: f64 = ivs[1..5].iter().map(|iv| iv.bytes as f64).sum::<f64>()
        / ivs[1..5].iter().map(|iv| iv.duration_s).sum::<f64>();
    let client = rate(first.client, last.client);
    // The server's first sample comes a second into the test (before it, its series
    // carry no timestamp).
    let from = scrapes.iter().find(|s| s.server.1 > 0).unwrap().server;
    let server = rate(from, last.server);
    eprintln!("intervals {own:.0} B/s, client metrics {client:.0}, server metrics {server:.0}");
    assert!(
        (client - own).abs() / own < 0.05,
        "client {client} vs {own}"
    );
    assert!(
        last.server.1 - from.1 >= 2_000,
        "the server sampled over less than 2 s: {} ms",
        last.server.1 - from.1
    );
    assert!(
        (server - own).abs() / own < 0.05,
        "server {server} vs {own}"
    );
    // The server's last sample, taken once the streams ended and before its report,
    // holds every byte it read: the result's bytes received.
    let (_, body) = http_get(srv_port, "/metrics").expect("scrape the server");
    let (got, _) = sample(&body, "ioscope_bytes_total", &["direction=\"receive\""]).unwrap();
    let received = run["totals"]["streams"][0]["bytes_received"]
        .as_u64()
        .unwrap();
    assert_eq!(got as u64, received, "{body}");
    let conn = sample(
        &body,
        "ioscope_connection_bytes_total",
        &["connection=\"0\""],
    )
    .unwrap();
    assert_eq!(conn.0 as u64, received, "{body}");
    drop(srv);
    // Wait for the server's endpoint to go with it: an event, up to 10 s.
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while http_get(srv_port, "/metrics").is_ok() {
        assert!(std::time::Instant::now() < until, "server endpoint left");
        std::thread::sleep(Duration::from_millis(20));
    }
}
