//! `ioscope net run`: connects, hands the server the test, opens the data
//! connections, and reports every interval from the streams' counters and each
//! socket's TCP_INFO; at the end it takes the server's report (bytes received,
//! retransmits of the server's senders, server CPU) and builds the result.
//!
//! Totals are what the receiving end counted over the measured time (after the
//! warm-up mark), so data still in socket buffers when the clock stops is not
//! counted as delivered; interval lines show what this end moved.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::config::{Direction, NetRunConfig};
use super::env::{self, NetEnv};
use super::measured::{Measured, Tracked};
use super::outcome::NetOutcome;
use super::protocol::{self, ConnKind, Ctrl, DataHello, Role, ServerStream, TestParams};
use super::report as term;
use super::sockopt::{self, SocketOpts};
use super::stream::{self, Control, Job, StreamState};
use super::tcp_info::{self, TcpSample};
use super::NetError;
use crate::clock::now_ns;
use crate::result::{EndReason, Interval, NetInterval, NetStreamInterval};
use crate::stats::cpu::CpuSample;
use crate::stats::histogram::LatencyHistogram;

/// How long the server has to answer the hello, to start, and to report.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the interval loop looks for a stop, a failed stream or a lost server.
const WATCH_SLICE_NS: u64 = 50_000_000;

fn connect_err(cfg: &NetRunConfig, what: String) -> NetError {
    NetError::Connect {
        addr: cfg.addr_text.clone(),
        what,
    }
}

fn proto_err(cfg: &NetRunConfig, what: String) -> NetError {
    NetError::Protocol {
        addr: cfg.addr_text.clone(),
        what,
    }
}

/// The roles of the data connections, in the order they are opened.
fn roles(cfg: &NetRunConfig) -> Vec<(u32, Role)> {
    let n = cfg.streams;
    if cfg.rr.is_some() {
        return (0..n).map(|i| (i, Role::Rr)).collect();
    }
    match cfg.direction {
        Direction::Send => (0..n).map(|i| (i, Role::Send)).collect(),
        Direction::Reverse => (0..n).map(|i| (i, Role::Recv)).collect(),
        Direction::Bidir => (0..n)
            .map(|i| (i, Role::Send))
            .chain((0..n).map(|i| (i, Role::Recv)))
            .collect(),
    }
}

/// Runs one test against the server and writes the outputs.
pub fn run(cfg: &NetRunConfig) -> Result<NetOutcome, NetError> {
    super::outcome::check_outputs(&cfg.output)?;
    let addr = super::server::resolve(&cfg.addr_text, "address")?;
    if let Some(c) = cfg.cpus.as_deref().and_then(sockopt::disallowed_cpu) {
        return Err(NetError::Input(format!(
            "--cpus: CPU {c} is not available to this process"
        )));
    }
    crate::interrupt::install();
    let started_unix_s = crate::clock::unix_s();
    let timeout = Duration::from_nanos(cfg.connect_timeout_ns);
    let mut ctrl = TcpStream::connect_timeout(&addr, timeout)
        .map_err(|e| connect_err(cfg, format!("cannot connect: {e}")))?;
    let _ = ctrl.set_nodelay(true);
    let _ = ctrl.set_read_timeout(Some(ANSWER_TIMEOUT));
    let params = TestParams {
        streams: cfg.streams,
        direction: cfg.direction,
        bs_bytes: cfg.bs_bytes,
        window_bytes: cfg.window_bytes,
        nodelay: cfg.nodelay,
        zerocopy: cfg.zerocopy,
        cpus: cfg.remote_cpus.clone(),
        rate_bps: cfg.rate.filter(|_| cfg.rr.is_none()),
        rr: cfg.rr,
    };
    let hello = ctrl
        .write_all(&protocol::preamble(ConnKind::Control))
        .and_then(|_| protocol::write_frame(&mut ctrl, &Ctrl::Hello { params }));
    hello.map_err(|e| connect_err(cfg, format!("sending the hello: {e}")))?;
    let (cookie_hex, remote_env) = match protocol::read_frame(&mut ctrl) {
        Ok(Ctrl::Welcome { cookie, env }) => (cookie, *env),
        Ok(Ctrl::Refused { reason }) => {
            return Err(proto_err(cfg, format!("the server refused the test: {reason}")))
        }
        Ok(other) => return Err(proto_err(cfg, format!("unexpected answer {other:?}"))),
        Err(e) => {
            return Err(proto_err(
                cfg,
                format!("not an ioscope server, or another protocol version (no answer to the handshake: {e})"),
            ))
        }
    };
    let cookie = protocol::cookie_from_hex(&cookie_hex)
        .ok_or_else(|| proto_err(cfg, "malformed session cookie".into()))?;
    let opts = SocketOpts {
        window_bytes: cfg.window_bytes,
        mss_bytes: cfg.mss_bytes,
        nodelay: cfg.nodelay || cfg.rr.is_some(),
    };
    let mut socks = Vec::new();
    for (index, role) in roles(cfg) {
        let mut s = sockopt::connect(&addr, &opts, cfg.connect_timeout_ns)
            .map_err(|e| connect_err(cfg, format!("data connection {index}: {e}")))?;
        let hello = DataHello {
            cookie,
            index,
            role,
        };
        s.write_all(&protocol::preamble(ConnKind::Data))
            .and_then(|_| s.write_all(&hello.encode()))
            .map_err(|e| connect_err(cfg, format!("data connection {index}: {e}")))?;
        socks.push((s, index, role));
    }
    match protocol::read_frame(&mut ctrl) {
        Ok(Ctrl::Start) => {}
        Ok(other) => return Err(proto_err(cfg, format!("expected start, got {other:?}"))),
        Err(e) => {
            return Err(proto_err(
                cfg,
                format!("the server did not start the test: {e}"),
            ))
        }
    }
    let local_env = env::capture(&socks[0].0);
    let local_addrs = socks
        .iter()
        .map(|(s, _, _)| {
            (
                s.local_addr().map(|a| a.to_string()).unwrap_or_default(),
                s.peer_addr().map(|a| a.to_string()).unwrap_or_default(),
            )
        })
        .collect();
    let m = measure(cfg, &mut ctrl, socks)?;
    let m = Measured {
        addr,
        cookie: cookie_hex,
        local_addrs,
        local_env,
        remote_env: m.remote_env.or(Some(remote_env)),
        started_unix_s,
        ..m
    };
    super::outcome::finish(m)
}

fn job_for(cfg: &NetRunConfig, role: Role, senders: usize) -> Job {
    match (role, cfg.rr) {
        (_, Some(rr)) => Job::RrClient {
            req: rr.req_bytes,
            resp: rr.resp_bytes,
            gap_ns: cfg
                .rate
                .map(|tps| ((1e9 * cfg.streams as f64) / tps).max(1.0) as u64),
        },
        (Role::Send, None) => Job::Send {
            bs: cfg.bs_bytes,
            gap_ns: cfg
                .rate
                .map(|r| stream::send_gap_ns(cfg.bs_bytes, r / senders as f64)),
            zerocopy: cfg.zerocopy,
        },
        _ => Job::Recv { bs: cfg.bs_bytes },
    }
}

/// Starts the threads that drive the data connections ([`super::group`]).
fn spawn_streams(
    cfg: &NetRunConfig,
    socks: Vec<(TcpStream, u32, Role)>,
    ctl: &Arc<Control>,
) -> (Vec<Tracked>, Vec<std::thread::JoinHandle<()>>) {
    let senders = socks.iter().filter(|s| s.2 == Role::Send).count().max(1);
    let mut streams = Vec::new();
    let mut members = Vec::new();
    for (sock, index, role) in socks {
        let st = Arc::new(StreamState::new(index, role, sock));
        members.push((st.clone(), job_for(cfg, role, senders)));
        streams.push(Tracked {
            st,
            prev_out: 0,
            prev_in: 0,
            prev_ops: 0,
            prev_retrans: 0,
            mark_out: 0,
            mark_in: 0,
            mark_ops: 0,
            hist: LatencyHistogram::new(),
            tcp: TcpSample::default(),
        });
    }
    let threads = super::group::spawn(members, ctl, cfg.cpus.as_deref());
    (streams, threads)
}

/// The intervals of a test and where its measured part began.
struct Timeline {
    intervals: Vec<Interval>,
    /// Whether the warm-up ended (the server was sent its mark).
    marked: bool,
    mark_ns: u64,
    cpu_mark: CpuSample,
    end_reason: EndReason,
}

/// Reports intervals until warm-up + duration pass (or the test fails), sending the
/// server its mark when the warm-up ends.
fn run_intervals(
    cfg: &NetRunConfig,
    ctrl: &mut TcpStream,
    streams: &mut [Tracked],
    ctl: &Control,
    start_ns: u64,
) -> Timeline {
    let timed = cfg.rr.is_some() || cfg.rate.is_some();
    let quiet = cfg.output.quiet || cfg.output.json_stdout;
    if !quiet {
        say(&term::interval_header(cfg.rr.is_some()));
    }
    let warm_end = start_ns + cfg.warmup_ns;
    let end_at = warm_end + cfg.duration_ns;
    let mut cpu_prev = CpuSample::now();
    let mut tl = Timeline {
        intervals: Vec::new(),
        marked: cfg.warmup_ns == 0,
        mark_ns: start_ns,
        cpu_mark: cpu_prev,
        end_reason: EndReason::Duration,
    };
    if tl.marked {
        let _ = protocol::write_frame(ctrl, &Ctrl::Mark);
    }
    let mut t_prev = start_ns;
    let mut next_tick = start_ns + cfg.interval_ns;
    let peer = streams[0].st.sock.peer_addr().map(|a| a.to_string());
    let peer = peer.unwrap_or_else(|_| cfg.addr_text.clone());
    let mut feed = super::live::client_feed(cfg.metrics.as_ref(), &peer, streams);
    loop {
        let target = next_tick.min(if tl.marked { end_at } else { warm_end });
        let why = watch_until(target, ctrl, streams);
        let now = now_ns();
        if let Some(w) = why {
            tl.end_reason = w;
        }
        if now.saturating_sub(t_prev) >= 10_000_000 || why.is_none() {
            let (iv, lat) = interval(
                streams,
                ctl,
                timed,
                tl.intervals.len() as u64,
                (t_prev, now, start_ns),
                !tl.marked,
                &mut cpu_prev,
            );
            // Fed before the line is printed: a scrape after line k holds interval k.
            if let Some(f) = feed.as_mut() {
                super::live::client_interval(
                    f,
                    streams,
                    timed.then_some(&lat),
                    cfg.rr.is_some(),
                    &iv,
                );
            }
            if !quiet {
                say(&term::interval_line(&iv, cfg.rr.is_some()));
            }
            tl.intervals.push(iv);
            t_prev = now;
        }
        if !tl.marked && now >= warm_end && why.is_none() {
            let _ = protocol::write_frame(ctrl, &Ctrl::Mark);
            (tl.mark_ns, tl.cpu_mark, tl.marked) = (now, cpu_prev, true);
            for t in streams.iter_mut() {
                (t.mark_out, t.mark_in, t.mark_ops) = (t.prev_out, t.prev_in, t.prev_ops);
                t.hist.reset();
            }
        }
        if why.is_some() || now >= end_at {
            return tl;
        }
        if now >= next_tick {
            next_tick += cfg.interval_ns;
        }
    }
}

/// Prints one interval line. A closed stdout (`ioscope net run … | head -1`) ends
/// the test as Ctrl-C would: what was measured so far is kept and written, and the
/// command then ends quietly (the totals print finds stdout closed).
fn say(line: &str) {
    if !crate::stdout::closed() && crate::stdout::println(line).is_err() {
        crate::interrupt::request();
    }
}

/// Why the server's report did not arrive (the test's figures are then this end's).
#[derive(Debug, thiserror::Error)]
enum ReportError {
    #[error("expected the server's report, got {0}")]
    Unexpected(String),
    #[error("no report from the server")]
    Missing(#[source] std::io::Error),
}

/// The server's report after the stop, or why there is none.
fn server_report(
    ctrl: &mut TcpStream,
) -> Result<(Vec<ServerStream>, protocol::CpuTimes, NetEnv), ReportError> {
    match protocol::read_frame(ctrl) {
        Ok(Ctrl::Report { streams, cpu, env }) => Ok((streams, cpu, *env)),
        Ok(other) => Err(ReportError::Unexpected(format!("{other:?}"))),
        Err(e) => Err(ReportError::Missing(e)),
    }
}

/// Runs the streams for warm-up + duration, printing intervals; then stops them and
/// collects the server's report.
fn measure(
    cfg: &NetRunConfig,
    ctrl: &mut TcpStream,
    socks: Vec<(TcpStream, u32, Role)>,
) -> Result<Measured, NetError> {
    let ctl = Arc::new(Control::default());
    let start_ns = now_ns();
    ctl.start_ns.store(start_ns, Ordering::Release);
    let (mut streams, threads) = spawn_streams(cfg, socks, &ctl);
    let tl = run_intervals(cfg, ctrl, &mut streams, &ctl, start_ns);
    let end_ns = now_ns();
    let cpu_end = CpuSample::now();
    ctl.request_stop();
    let _ = protocol::write_frame(ctrl, &Ctrl::Stop);
    for t in threads {
        let _ = t.join();
    }
    let mut errors = Vec::new();
    // What the loops recorded after the last interval belongs to the measured total.
    for t in &mut streams {
        let h = t.st.take_latency();
        if tl.marked {
            t.hist += &h;
        }
        t.tcp = tcp_info::sample(t.st.sock.as_raw_fd()).unwrap_or(t.tcp);
        if let Some(e) = t.st.error() {
            errors.push(e);
        }
    }
    let mut end_reason = tl.end_reason;
    let (server, remote_env) = if end_reason == EndReason::Error {
        (None, None)
    } else {
        match server_report(ctrl) {
            Ok((s, cpu, env)) => (Some((s, cpu)), Some(env)),
            Err(e) => {
                errors.push(crate::errors::chain(&e));
                (None, None)
            }
        }
    };
    if server.is_none() && end_reason == EndReason::Duration {
        end_reason = EndReason::Error;
    }
    Ok(Measured {
        cfg: cfg.clone(),
        addr: ctrl
            .peer_addr()
            .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0))),
        cookie: String::new(),
        local_addrs: Vec::new(),
        streams,
        intervals: tl.intervals,
        start_ns,
        mark_ns: if tl.marked { tl.mark_ns } else { end_ns },
        end_ns,
        cpu_mark: tl.cpu_mark,
        cpu_end,
        end_reason,
        errors,
        server,
        local_env: NetEnv::default(),
        remote_env,
        started_unix_s: 0.0,
    })
}

/// Sleeps until `at_ns` in slices, returning early with the reason when the user
/// interrupts, a stream fails, or the server closes the control connection.
fn watch_until(at_ns: u64, ctrl: &TcpStream, streams: &[Tracked]) -> Option<EndReason> {
    loop {
        if crate::interrupt::requested() {
            return Some(EndReason::Interrupted);
        }
        if streams.iter().any(|t| t.st.error().is_some()) {
            return Some(EndReason::Error);
        }
        let mut pfd = libc::pollfd {
            fd: ctrl.as_raw_fd(),
            events: libc::POLLIN | libc::POLLRDHUP,
            revents: 0,
        };
        // SAFETY: one valid pollfd, no wait.
        let n = unsafe { libc::poll(&mut pfd, 1, 0) };
        if n > 0 {
            // Nothing is expected from the server mid-test: this is its end.
            return Some(EndReason::Error);
        }
        let now = now_ns();
        if now >= at_ns {
            return None;
        }
        crate::clock::sleep_until(at_ns.min(now + WATCH_SLICE_NS));
    }
}

/// Builds one interval from the streams' counters, TCP_INFO and latency (the
/// interval's histogram beside it, empty unless sends are timed).
fn interval(
    streams: &mut [Tracked],
    ctl: &Control,
    timed: bool,
    index: u64,
    (t0, t1, start): (u64, u64, u64),
    warmup: bool,
    cpu_prev: &mut CpuSample,
) -> (Interval, LatencyHistogram) {
    let mut lat = LatencyHistogram::new();
    if timed {
        let epoch = ctl.epoch.fetch_add(1, Ordering::AcqRel) + 1;
        let deadline = now_ns() + 20_000_000;
        while now_ns() < deadline
            && streams.iter().any(|t| {
                !t.st.finished.load(Ordering::Acquire) && t.st.acked.load(Ordering::Acquire) < epoch
            })
        {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    let dur_ns = t1.saturating_sub(t0).max(1);
    let secs = dur_ns as f64 / 1e9;
    let (mut bytes, mut bytes_in, mut ops, mut retrans) = (0u64, 0u64, 0u64, 0u64);
    let mut per = Vec::new();
    for t in streams.iter_mut() {
        let out = t.st.bytes_out.load(Ordering::Relaxed);
        let inn = t.st.bytes_in.load(Ordering::Relaxed);
        let o = t.st.ops.load(Ordering::Relaxed);
        let s = tcp_info::sample(t.st.sock.as_raw_fd()).unwrap_or(t.tcp);
        let b = (out - t.prev_out) + (inn - t.prev_in);
        let r = s.total_retrans.saturating_sub(t.prev_retrans);
        bytes += b;
        bytes_in += inn - t.prev_in;
        ops += o - t.prev_ops;
        retrans += r;
        per.push(NetStreamInterval {
            bytes: b,
            gbps: b as f64 * 8.0 / secs / 1e9,
            retransmits: r,
            rtt_us: s.rtt_for(t.st.role != Role::Recv),
            cwnd_bytes: s.cwnd_bytes,
            rttvar_us: s.rttvar_us,
            snd_wnd_bytes: s.snd_wnd_bytes,
        });
        (t.prev_out, t.prev_in, t.prev_ops, t.prev_retrans, t.tcp) =
            (out, inn, o, s.total_retrans, s);
        if timed {
            let h = t.st.take_latency();
            lat += &h;
            if !warmup {
                t.hist += &h;
            }
        }
    }
    let cpu_now = CpuSample::now();
    let cpu = cpu_now.since(cpu_prev, ops);
    *cpu_prev = cpu_now;
    let iv = Interval {
        index,
        t_s: t1.saturating_sub(start) as f64 / 1e9,
        duration_s: secs,
        unix_s: crate::clock::unix_s(),
        warmup,
        ios: ops,
        bytes,
        iops: ops as f64 / secs,
        mbps: bytes as f64 / secs / 1e6,
        read_pct: 100.0 * bytes_in as f64 / bytes.max(1) as f64,
        errors: 0,
        lat_us: crate::stats::interval_latency(&lat),
        cpu,
        net: Some(NetInterval {
            gbps: bytes as f64 * 8.0 / secs / 1e9,
            retransmits: retrans,
            streams: per,
        }),
        ..Default::default()
    };
    (iv, lat)
}
