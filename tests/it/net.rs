//! `ioscope net`: loopback throughput with 1 and 4 streams (every byte the client
//! says it sent is a byte the server says it received), request/response timing
//! consistent with the transaction rate, iperf3's JSON layout, and the faults — a
//! server that dies mid-run, nothing listening, a client that vanishes, a stranger
//! speaking another protocol. With root, a token-bucket-limited veth pair between two
//! namespaces of the test's own checks the figure against a known 1 Gbit/s.

use super::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A running `ioscope net serve`, killed by PID on drop (also when a test fails).
pub(super) struct Server {
    child: Child,
    pub(super) addr: String,
    stderr_path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    /// Starts a server on `bind` (port 0 picks a free one) with `args`, optionally
    /// inside a network namespace, and waits for its "listening on" line.
    fn start_in(netns: Option<&str>, bind: &str, args: &[&str]) -> Server {
        let dir = tempdir();
        let stderr_path = dir.path().join("server.err");
        let mut cmd = match netns {
            // The one server in a namespace measures a shaped link's rate: it is
            // favoured like its client, or a receiver starved by the load beside it
            // closes the window (0.86 Gbit/s under a 1 Gbit/s bucket at load 8).
            Some(ns) => {
                let mut c = favoured(Command::new("ip"));
                c.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_ioscope")]);
                c
            }
            None => ioscope(),
        };
        let mut child = cmd
            .args(["net", "serve", "--bind", bind])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .expect("spawn server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split("listening on ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("no listening line: {line:?}"))
            .to_string();
        Server {
            child,
            addr,
            stderr_path,
            _dir: dir,
        }
    }

    pub(super) fn start() -> Server {
        Server::start_in(None, "127.0.0.1:0", &[])
    }

    /// A server on a free loopback port, given `args` besides.
    pub(super) fn start_with(args: &[&str]) -> Server {
        Server::start_in(None, "127.0.0.1:0", args)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a client against `addr` with `--json`, returning (exit code, stderr, result).
/// The client is [`favoured`]: its rates and latencies are its own, not the load's
/// beside it.
fn client(addr: &str, args: &[&str]) -> (Option<i32>, String, Option<Value>) {
    let d = tempdir();
    let json = d.path().join("r.json");
    let o = favoured(ioscope())
        .args(["net", "run", addr, "-q", "--json", json.to_str().unwrap()])
        .args(args)
        .output()
        .expect("spawn ioscope");
    let v = std::fs::read_to_string(&json)
        .ok()
        .map(|s| serde_json::from_str(&s).unwrap());
    (o.status.code(), stderr(&o), v)
}

fn f(v: &Value, path: &str) -> f64 {
    let mut cur = v;
    for k in path.split('.') {
        cur = match k.parse::<usize>() {
            Ok(i) => &cur[i],
            Err(_) => &cur[k],
        };
    }
    cur.as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number: {cur}"))
}

#[test]
fn net_loopback_counts_every_byte_with_one_and_four_streams() {
    let srv = Server::start();
    let d = tempdir();
    let html = d.path().join("r.html");
    let mut saved = Vec::new();
    for streams in ["1", "4"] {
        let (code, err, v) = client(
            &srv.addr,
            &[
                "--streams",
                streams,
                "--duration",
                "2s",
                "--warmup",
                "1s",
                "--html",
                html.to_str().unwrap(),
            ],
        );
        assert_eq!(code, Some(0), "{err}");
        let v = v.unwrap();
        let r = &v["runs"][0];
        assert_eq!(r["kind"], "net");
        let per = r["totals"]["streams"].as_array().unwrap();
        assert_eq!(per.len(), streams.parse::<usize>().unwrap());
        let mut sum = 0.0;
        for s in per {
            let sent = s["bytes_sent"].as_u64().unwrap();
            assert!(sent > 1 << 20, "{s}");
            // Exact: what the client wrote is what the server read.
            assert_eq!(sent, s["bytes_received"].as_u64().unwrap(), "{s}");
            assert!(s["rtt_us"].as_f64().unwrap() > 0.0, "{s}");
            sum += s["gbps"].as_f64().unwrap();
        }
        let gbps = f(r, "totals.gbps");
        assert!(
            gbps > 0.1 && (gbps - sum).abs() < 1e-6 * gbps,
            "{gbps} vs {sum}"
        );
        // MB/s in the storage fields is the same figure.
        assert!((f(r, "totals.mbps") - gbps * 125.0).abs() < 1e-6 * gbps * 125.0);
        assert!(f(r, "totals.service_demand_us_per_kb.local") > 0.0);
        assert!(f(r, "totals.service_demand_us_per_kb.remote") > 0.0);
        let ivs = r["intervals"].as_array().unwrap();
        assert!(ivs.len() >= 3, "{}", ivs.len());
        assert_eq!(ivs[0]["warmup"], true);
        assert_eq!(
            ivs[1]["net"]["streams"].as_array().unwrap().len(),
            per.len()
        );
        let env = &v["env"]["net"]["local"];
        assert_eq!(env["interface"], "lo");
        assert!(env["path_mtu"].as_u64().unwrap() >= 1500);
        assert!(env["rcvbuf_bytes"].as_u64().unwrap() > 0);
        assert!(v["env"]["net"]["remote"]["rmem_max"].as_u64().is_some());
        let p = d.path().join(format!("s{streams}.json"));
        std::fs::write(&p, v.to_string()).unwrap();
        saved.push(p);
    }
    // The HTML of the 4-stream run has a per-stream timeline with four lines.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("data-chart=\"run0-streams-gbps\""));
    assert!(page.contains("data-series=\"stream3_gbps\""));
    // compare reads net results and leads with Gbit/s.
    let o = run(&[
        "compare",
        saved[0].to_str().unwrap(),
        saved[1].to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).lines().any(|l| l.starts_with("Gbit/s ")),
        "{}",
        stdout(&o)
    );
}

/// More streams than cores: the client's eight streams (four each way) share the one
/// CPU it is given, driven from one thread (`net::group`), and
/// the server's share its two CPUs. Every stream still moves data, and every byte
/// either end wrote is a byte the other end read.
#[test]
fn net_bidir_streams_sharing_a_core_each_count_every_byte() {
    let srv = Server::start();
    let (code, err, v) = client(
        &srv.addr,
        &[
            "--bidir",
            "--streams",
            "4",
            "--cpus",
            "0",
            "--duration",
            "2s",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let v = v.unwrap();
    let per = v["runs"][0]["totals"]["streams"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(per.len(), 8);
    for dir in ["send", "recv"] {
        let n = per.iter().filter(|s| s["direction"] == dir).count();
        assert_eq!(n, 4, "{dir}: {per:?}");
    }
    for s in &per {
        let sent = s["bytes_sent"].as_u64().unwrap();
        // At least 1 MiB each in 2 s (loopback moves gigabytes): no stream starved
        // behind the others on the shared thread.
        assert!(sent > 1 << 20, "{s}");
        assert_eq!(sent, s["bytes_received"].as_u64().unwrap(), "{s}");
    }
}

#[test]
fn net_rr_rate_matches_mean_latency_per_stream() {
    let srv = Server::start();
    // Closed loop, one transaction in flight: the rate is 1/latency, up to the loop's
    // own time between transactions, and the time the host takes the thread away
    // there — which the favoured client is spared (it reached the 5 % bound at the
    // normal priority on this shared 2-CPU host).
    let (code, err, v) = client(
        &srv.addr,
        &["--rr", "1,1", "--streams", "2", "--duration", "2s"],
    );
    assert_eq!(code, Some(0), "{err}");
    let r = &v.unwrap()["runs"][0];
    let mut worst = 0f64;
    for s in r["totals"]["streams"].as_array().unwrap() {
        let tps = s["tps"].as_f64().unwrap();
        let mean_us = f(s, "latency_us.mean");
        assert!(tps > 100.0, "{s}");
        worst = worst.max((1e6 / mean_us / tps - 1.0).abs());
        assert!(f(s, "latency_us.p50") <= f(s, "latency_us.p99"));
        assert!(f(s, "latency_us.p99") <= f(s, "latency_us.p99_9"));
    }
    let rr = &r["totals"]["rr"];
    assert!(f(rr, "tps") > 200.0);
    assert!(f(rr, "latency_us.p99_9") > 0.0);
    eprintln!(
        "1/(mean latency) against transactions/s: {:.2}% apart",
        100.0 * worst
    );
    // 1.0-2.0% apart here in seven runs, three of them beside four CPU hogs.
    assert!(
        worst < 0.05,
        "1/(mean latency) against transactions/s, worst stream: {worst}"
    );
}

#[test]
fn net_iperf3_json_has_iperf3_fields() {
    let srv = Server::start();
    let d = tempdir();
    let ip = d.path().join("iperf3.json");
    let (code, err, v) = client(
        &srv.addr,
        &[
            "--streams",
            "2",
            "--duration",
            "2s",
            "--iperf3-json",
            ip.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let i3 = read_json(&ip);
    let gbps = f(&v.unwrap()["runs"][0], "totals.gbps");
    let received = f(&i3, "end.sum_received.bits_per_second");
    assert!(
        (received / 1e9 - gbps).abs() < 1e-6 * gbps,
        "{received} vs {gbps}"
    );
    assert!(f(&i3, "end.sum_sent.bits_per_second") > 0.0);
    let ivs = i3["intervals"].as_array().unwrap();
    assert!(ivs.len() >= 2);
    for iv in ivs {
        assert!(f(iv, "sum.bits_per_second") > 0.0);
        assert_eq!(iv["streams"].as_array().unwrap().len(), 2);
    }
    assert!(f(&i3, "end.cpu_utilization_percent.host_total") > 0.0);
    assert!(f(&i3, "end.cpu_utilization_percent.remote_total") > 0.0);
    assert_eq!(i3["start"]["test_start"]["num_streams"], 2);
    assert_eq!(i3["start"]["test_start"]["protocol"], "TCP");
    // Every field iperf3 3.12 writes for a TCP test is there, e.g. these TCP_INFO ones.
    assert!(ivs[0]["streams"][0]["snd_wnd"].as_u64().is_some());
    assert!(ivs[0]["streams"][0]["snd_cwnd"].as_u64().unwrap() > 0);
    let sender = &i3["end"]["streams"][0]["sender"];
    assert!(sender["max_snd_wnd"].as_u64().is_some());
    assert!(sender["max_rtt"].as_u64().unwrap() >= sender["min_rtt"].as_u64().unwrap());
    assert!(i3["end"]["sender_tcp_congestion"].as_str().is_some());
}

/// A `net run` client whose interval lines (stdout) are read as they come, so a
/// test can act on the run's progress; its stderr is collected by [`Client::finish`].
pub(super) struct Client {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Client {
    /// Starts `ioscope net run ARGS` (without `-q`: the interval lines are the events).
    pub(super) fn start(args: &[&str]) -> Client {
        let mut child = ioscope()
            .args(["net", "run"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Client { child, lines }
    }

    /// Waits for the run's `n`-th interval line ("HH:MM:SS.mmm  N  …"); fails the test
    /// when stdout ends first or `timeout` passes.
    #[track_caller]
    pub(super) fn wait_intervals(&mut self, n: usize, timeout: Duration) {
        let until = Instant::now() + timeout;
        let mut seen = Vec::new();
        while seen.len() < n {
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    let b = l.as_bytes();
                    if b.len() > 12 && b[2] == b':' && b[5] == b':' && b[8] == b'.' {
                        seen.push(l);
                    }
                }
                Err(e) => panic!("{e:?} before interval line {n}; lines so far {seen:?}"),
            }
        }
    }

    /// Waits for the client to end; its exit code and stderr.
    pub(super) fn finish(mut self) -> (Option<i32>, String) {
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut err).unwrap();
        }
        let status = self.child.wait().unwrap();
        (status.code(), err)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn net_server_dying_mid_run_keeps_the_intervals_so_far() {
    let mut srv = Server::start();
    let d = tempdir();
    let json = d.path().join("r.json");
    let mut c = Client::start(&[
        &srv.addr,
        "--duration",
        "8s",
        "--json",
        json.to_str().unwrap(),
    ]);
    // Killed once two intervals are out (the result must keep them).
    c.wait_intervals(2, FIRST_INTERVAL_TIMEOUT);
    srv.child.kill().unwrap();
    let t = Instant::now();
    let (code, err) = c.finish();
    eprintln!(
        "net client ended {:?} after its server was killed",
        t.elapsed()
    );
    // The kill resets the connections, so the client ends at once: 55-62 ms after
    // it here, beside a CPU hog too. 4 s tells that from one waiting out its 8 s.
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&srv.addr), "{err}");
    let v = read_json(&json);
    let r = &v["runs"][0];
    assert_eq!(r["end_reason"], "error");
    // The two seen, one more if its boundary passed before the loss was noticed, and
    // the partial interval the loss ends.
    let n = r["intervals"].as_array().unwrap().len();
    assert!((2..=4).contains(&n), "{n} intervals");
    assert!(f(r, "totals.gbps") > 0.0);
}

#[test]
fn net_connect_refused_names_the_address_quickly() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    drop(l);
    let t = Instant::now();
    let (code, err, v) = client(&addr, &["--duration", "1s"]);
    // A refused connect is answered at once (the whole test takes a few ms here);
    // 5 s tells that from a connect that waits for TCP's retries.
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&addr) && err.contains("refused"), "{err}");
    assert!(v.is_none(), "a failed connect writes no result");
    // Bad input is exit 2 and names the flag.
    let (code, err, _) = client(&addr, &["--rate", "lots"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--rate 'lots'"), "{err}");
}

#[test]
fn net_server_survives_vanishing_clients_and_strangers() {
    let srv = Server::start();
    // A client killed mid-test, once it measures (its first interval line is out).
    let mut c = Client::start(&[&srv.addr, "--duration", "10s"]);
    c.wait_intervals(1, FIRST_INTERVAL_TIMEOUT);
    drop(c);
    // Something that is not ioscope: dropped without a reply.
    let mut s = std::net::TcpStream::connect(&srv.addr).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut buf = [0u8; 64];
    let n = std::io::Read::read(&mut s, &mut buf).unwrap_or(0);
    assert_eq!(n, 0, "the server answered a stranger");
    // And it still serves.
    let (code, err, _) = client(&srv.addr, &["--duration", "1s"]);
    assert_eq!(code, Some(0), "{err}");
    let log = srv.log();
    assert!(log.contains("client went away"), "{log}");
    assert!(log.contains("not the ioscope protocol"), "{log}");
}

#[test]
fn net_netns_veth_with_tbf_measures_one_gigabit() {
    let ns = match NetnsPair::new("tbf", Some("1gbit")) {
        Ok(n) => n,
        Err(why) => return skip_or_fail(&format!("network namespace test: {why}")),
    };
    let srv = Server::start_in(Some(&ns.server_ns), "10.251.0.2:0", &[]);
    let d = tempdir();
    let json = d.path().join("r.json");
    let sent_before = ns.client_sent_bytes().unwrap();
    // Two streams keep the bucket fuller than one. TCP itself does not always fill
    // a token bucket on a loaded host: iperf3 gets 0.93-0.98 Gbit/s on this veth pair
    // too, from stalls of the sender longer than the bucket's 50 ms queue. The client
    // is favoured, so other programs do not stall it.
    let o = favoured(Command::new("ip"))
        .args([
            "netns",
            "exec",
            &ns.client_ns,
            env!("CARGO_BIN_EXE_ioscope"),
        ])
        .args([
            "net",
            "run",
            &srv.addr,
            "-q",
            "--duration",
            "3s",
            "--warmup",
            "1s",
            "--streams",
            "2",
        ])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let wire = ns.client_sent_bytes().unwrap() - sent_before;
    let v = read_json(&json);
    // The payload ioscope counts against the frames the kernel's qdisc sent: each
    // 9000-byte frame carries 8948 bytes after 66 of headers (Ethernet, IP, TCP
    // with timestamps), 0.74 % more on the wire; the control connection and the
    // handshakes add a few kB. Seen: 1.0074–1.0075.
    let payload: u64 = v["runs"][0]["totals"]["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["bytes_sent"].as_u64().unwrap())
        .sum();
    let ratio = wire as f64 / payload as f64;
    eprintln!("tbf 1gbit: {wire} bytes on the wire for {payload} of payload: {ratio}");
    assert!((1.0..=1.02).contains(&ratio), "wire/payload {ratio}");
    // Payload under a 1 Gbit/s bucket that also counts 66 bytes of headers per
    // 9000-byte frame: at most 0.993 Gbit/s. Whether TCP keeps the bucket full is
    // the scheduler's doing as much as the tool's (the byte count above is the
    // measurement's truth): seen 0.992-0.994 alone; 0.963-0.993 with both ends
    // favoured beside `stress-ng --cpu 6` and three builds (load 7.5); 0.864 in a
    // CI run at load 8 before the server was favoured. 0.90 allows that spread.
    let gbps = f(&v["runs"][0], "totals.gbps");
    eprintln!("tbf 1gbit: {gbps} Gbit/s");
    assert!(gbps >= 0.90, "{gbps} Gbit/s");
    assert!(gbps < 1.0, "{gbps} Gbit/s: faster than the bucket");
    let r = &v["runs"][0];
    let s = &r["totals"]["streams"][0];
    assert!(s["retransmits"].as_u64().is_some(), "{s}");
    assert!(s["rtt_us"].as_f64().unwrap() > 0.0, "{s}");
    let env = &v["env"]["net"]["local"];
    assert_eq!(env["interface_mtu"], 9000);
    assert_eq!(env["path_mtu"], 9000);
}

#[test]
fn net_rate_is_kept_and_latency_is_from_the_intended_time() {
    let srv = Server::start();
    let (code, err, v) = client(
        &srv.addr,
        &[
            "--rate",
            "200m",
            "--streams",
            "2",
            "--duration",
            "2s",
            "--warmup",
            "500ms",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let r = &v.unwrap()["runs"][0];
    let gbps = f(r, "totals.gbps");
    // 0.1991 Gbit/s here (0.4% under): paced writes land on their intended times.
    assert!(
        (gbps / 0.2 - 1.0).abs() < 0.02,
        "{gbps} Gbit/s for 200 Mbit/s"
    );
    // Every paced write has a latency from its intended time.
    let writes = r["totals"]["ios"].as_u64().unwrap();
    assert!(writes > 0);
    assert!(f(r, "totals.latency_us.p50") > 0.0);
    assert!(f(r, "totals.latency_us.max") >= f(r, "totals.latency_us.p99"));
}
