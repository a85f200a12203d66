//! `ioscope net serve`: accepts control connections, runs one test per control
//! connection (several clients at once are fine), and reports back what it counted
//! and its own CPU time. Anything that does not open with the ioscope preamble is
//! dropped without a reply; a client that disappears is logged and the server keeps
//! serving. Binds to 127.0.0.1 unless told otherwise.

use std::collections::HashMap;
use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::config::{Direction, ServeConfig};
use super::env;
use super::protocol::{self, ConnKind, Ctrl, DataHello, Role, ServerStream, TestParams};
use super::sockopt::{self, SocketOpts};
use super::stream::{self, Control, Job, StreamState};
use super::tcp_info;
use super::NetError;
use crate::clock::now_ns;
use crate::stats::cpu::CpuSample;

/// How long a new connection has to present its preamble (and a client its hello).
const HELLO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a session waits for all its data connections.
const DATA_CONNECT_TIMEOUT_NS: u64 = 10_000_000_000;
/// Limits on what a client may ask for.
const MAX_STREAMS: u32 = 1024;
const MAX_BS_BYTES: u32 = 64 << 20;

type Sessions = Arc<Mutex<HashMap<[u8; 16], mpsc::Sender<(TcpStream, DataHello)>>>>;

/// Parses ADDR:PORT (a bare address gets the default port).
pub fn resolve(text: &str, flag: &str) -> Result<SocketAddr, NetError> {
    use std::net::ToSocketAddrs;
    let with_port = if text.parse::<std::net::IpAddr>().is_ok() || !text.contains(':') {
        if text.contains(':') {
            format!("[{text}]:{}", super::DEFAULT_PORT)
        } else {
            format!("{text}:{}", super::DEFAULT_PORT)
        }
    } else {
        text.to_string()
    };
    with_port
        .to_socket_addrs()
        .map_err(|e| NetError::Input(format!("{flag} '{text}': not an address: {e}")))?
        .next()
        .ok_or_else(|| NetError::Input(format!("{flag} '{text}': no address")))
}

/// Runs the server until Ctrl-C (or after one test with `once`).
pub fn serve(cfg: &ServeConfig) -> Result<i32, NetError> {
    let addr = resolve(&cfg.bind, "--bind")?;
    if let Some(c) = cfg.cpus.as_deref().and_then(sockopt::disallowed_cpu) {
        return Err(NetError::Input(format!(
            "--cpus: CPU {c} is not available to this process"
        )));
    }
    let listener = TcpListener::bind(addr).map_err(|e| NetError::Connect {
        addr: addr.to_string(),
        what: format!("cannot listen: {e}"),
    })?;
    let bound = listener
        .local_addr()
        .map_err(|e| NetError::io("listener address", e))?;
    crate::interrupt::install();
    // Flushed at once: a script waits for this line to learn the port. A reader that
    // goes away afterwards (`| head -1`) is fine: nothing else goes to stdout.
    crate::stdout::println(&format!(
        "ioscope net: listening on {bound} (protocol v{})",
        protocol::VERSION
    ))?;
    let sessions: Sessions = Arc::default();
    let done = Arc::new(AtomicBool::new(false));
    let cfg = Arc::new(cfg.clone());
    while !done.load(Ordering::Acquire) && !crate::interrupt::requested() {
        let mut pfd = libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; a 200 ms timeout keeps the stop checks coming.
        let n = unsafe { libc::poll(&mut pfd, 1, 200) };
        if n <= 0 {
            continue;
        }
        let (sock, peer) = match listener.accept() {
            Ok(x) => x,
            Err(e) => {
                eprintln!("ioscope net: accept: {e}");
                continue;
            }
        };
        let (sessions, done, cfg) = (sessions.clone(), done.clone(), cfg.clone());
        std::thread::spawn(move || handle_conn(sock, peer, &sessions, &done, &cfg));
    }
    Ok(0)
}

fn handle_conn(
    mut sock: TcpStream,
    peer: SocketAddr,
    sessions: &Sessions,
    done: &AtomicBool,
    cfg: &ServeConfig,
) {
    let _ = sock.set_nonblocking(false);
    let _ = sock.set_read_timeout(Some(HELLO_TIMEOUT));
    let mut pre = [0u8; protocol::PREAMBLE_BYTES];
    if let Err(e) = sock.read_exact(&mut pre) {
        eprintln!("ioscope net: dropped {peer}: no ioscope preamble ({e})");
        return;
    }
    match protocol::parse_preamble(&pre) {
        Err(e) => {
            if matches!(e, protocol::PreambleError::Version(_)) {
                let _ = protocol::write_frame(
                    &mut sock,
                    &Ctrl::Refused {
                        reason: e.to_string(),
                    },
                );
            }
            eprintln!("ioscope net: dropped {peer}: {e}");
        }
        Ok(ConnKind::Data) => {
            let mut b = [0u8; protocol::DATA_HELLO_BYTES];
            let hello = sock
                .read_exact(&mut b)
                .ok()
                .and_then(|_| DataHello::decode(&b));
            let tx = hello.and_then(|h| {
                sessions
                    .lock()
                    .ok()
                    .and_then(|m| m.get(&h.cookie).cloned())
                    .map(|tx| (tx, h))
            });
            match tx {
                Some((tx, h)) => {
                    let _ = tx.send((sock, h));
                }
                None => {
                    eprintln!("ioscope net: dropped data connection from {peer}: unknown session")
                }
            }
        }
        Ok(ConnKind::Control) => {
            let started = session(sock, peer, sessions, cfg);
            if started && cfg.once {
                done.store(true, Ordering::Release);
            }
        }
    }
}

/// Test parameters this server refuses; the text goes back to the client as the
/// refusal's reason.
#[derive(Debug, thiserror::Error)]
enum ParamsError {
    #[error("{0} streams: this server takes 1 to {MAX_STREAMS}")]
    Streams(u32),
    #[error("write size {0}: 1 byte to 64 MiB")]
    WriteSize(u32),
    #[error("CPU {0} is not available to the server")]
    Cpu(usize),
    #[error("request/response sizes: 1 byte to 64 MiB")]
    RrSizes,
}

fn check_params(p: &TestParams) -> Result<(), ParamsError> {
    if p.streams == 0 || p.streams > MAX_STREAMS {
        return Err(ParamsError::Streams(p.streams));
    }
    if p.bs_bytes == 0 || p.bs_bytes > MAX_BS_BYTES {
        return Err(ParamsError::WriteSize(p.bs_bytes));
    }
    if let Some(c) = p.cpus.as_deref().and_then(sockopt::disallowed_cpu) {
        return Err(ParamsError::Cpu(c));
    }
    if let Some(rr) = p.rr {
        if rr.req_bytes == 0 || rr.resp_bytes == 0 || rr.req_bytes.max(rr.resp_bytes) > MAX_BS_BYTES
        {
            return Err(ParamsError::RrSizes);
        }
    }
    Ok(())
}

/// Why the server gave up on one test (it goes on serving).
#[derive(Debug, thiserror::Error)]
enum SessionError {
    #[error("client went away {when}")]
    ClientGone {
        when: &'static str,
        source: std::io::Error,
    },
    #[error("client went away mid-test: control connection closed")]
    ControlClosed,
}

/// One test. Returns whether it got past the hello (for `--once`).
fn session(mut ctrl: TcpStream, peer: SocketAddr, sessions: &Sessions, cfg: &ServeConfig) -> bool {
    let params = match protocol::read_frame(&mut ctrl) {
        Ok(Ctrl::Hello { params }) => params,
        Ok(other) => {
            eprintln!("ioscope net: dropped {peer}: expected a hello, got {other:?}");
            return false;
        }
        Err(e) => {
            eprintln!("ioscope net: dropped {peer}: {e}");
            return false;
        }
    };
    if let Err(e) = check_params(&params) {
        eprintln!("ioscope net: refused {peer}: {e}");
        let reason = e.to_string();
        let _ = protocol::write_frame(&mut ctrl, &Ctrl::Refused { reason });
        return true;
    }
    let cookie = protocol::new_cookie();
    let (tx, rx) = mpsc::channel();
    if let Ok(mut m) = sessions.lock() {
        m.insert(cookie, tx);
    }
    let welcome = Ctrl::Welcome {
        cookie: protocol::cookie_hex(&cookie),
        env: Box::new(env::capture(&ctrl)),
    };
    let conns = if protocol::write_frame(&mut ctrl, &welcome).is_ok() {
        collect_data(&rx, &params)
    } else {
        Vec::new()
    };
    if let Ok(mut m) = sessions.lock() {
        m.remove(&cookie);
    }
    let expected = params.streams as usize
        * if params.direction == Direction::Bidir {
            2
        } else {
            1
        };
    if conns.len() < expected {
        eprintln!(
            "ioscope net: {peer}: {} of {expected} data connections arrived; test abandoned",
            conns.len()
        );
        return true;
    }
    if !cfg.quiet {
        eprintln!(
            "ioscope net: {peer}: {} stream(s), {:?}{}",
            params.streams,
            params.direction,
            if params.rr.is_some() {
                ", request/response"
            } else {
                ""
            }
        );
    }
    match run_session(&mut ctrl, conns, &params, cfg) {
        Ok(gbps) if !cfg.quiet => eprintln!("ioscope net: {peer}: done, {gbps:.3} Gbit/s received"),
        Ok(_) => {}
        Err(e) => eprintln!(
            "ioscope net: {peer}: {}; still serving",
            crate::errors::Chain(&e)
        ),
    }
    true
}

fn collect_data(
    rx: &mpsc::Receiver<(TcpStream, DataHello)>,
    p: &TestParams,
) -> Vec<(TcpStream, DataHello)> {
    let expected = p.streams as usize
        * if p.direction == Direction::Bidir {
            2
        } else {
            1
        };
    let deadline = now_ns() + DATA_CONNECT_TIMEOUT_NS;
    let mut conns = Vec::new();
    while conns.len() < expected {
        let left = deadline.saturating_sub(now_ns());
        match rx.recv_timeout(Duration::from_nanos(left.max(1))) {
            Ok(c) => conns.push(c),
            Err(_) => break,
        }
    }
    conns.sort_by_key(|(_, h)| (h.role as u32, h.index));
    conns
}

type Threads = Vec<std::thread::JoinHandle<()>>;

/// Starts the threads that drive the data connections ([`super::group`]), each doing
/// the other half of the client's role.
fn spawn_streams(
    conns: Vec<(TcpStream, DataHello)>,
    p: &TestParams,
    cfg: &ServeConfig,
    ctl: &Arc<Control>,
) -> (Vec<Arc<StreamState>>, Threads) {
    let opts = SocketOpts {
        window_bytes: p.window_bytes,
        mss_bytes: None,
        nodelay: p.nodelay || p.rr.is_some(),
    };
    let cpus = p.cpus.clone().or_else(|| cfg.cpus.clone());
    let senders = conns
        .iter()
        .filter(|(_, h)| h.role == Role::Recv)
        .count()
        .max(1);
    let mut states = Vec::new();
    let mut members = Vec::new();
    for (sock, h) in conns {
        let _ = sockopt::apply(sock.as_raw_fd(), &opts);
        let job = match (h.role, p.rr) {
            (Role::Rr, Some(rr)) => Job::RrServer {
                req: rr.req_bytes,
                resp: rr.resp_bytes,
            },
            (Role::Recv, _) => Job::Send {
                bs: p.bs_bytes,
                gap_ns: p
                    .rate_bps
                    .map(|r| stream::send_gap_ns(p.bs_bytes, r / senders as f64)),
                zerocopy: p.zerocopy,
            },
            _ => Job::Recv { bs: p.bs_bytes },
        };
        let st = Arc::new(StreamState::new(h.index, h.role, sock));
        members.push((st.clone(), job));
        states.push(st);
    }
    let threads = super::group::spawn(members, ctl, cpus.as_deref());
    (states, threads)
}

/// Where the client's warm-up ended: time, CPU and each stream's (in, out) bytes.
struct Mark {
    ns: u64,
    cpu: CpuSample,
    bytes: Vec<(u64, u64)>,
}

/// Follows the control connection until the client's stop, noting its mark.
fn await_stop(ctrl: &mut TcpStream, states: &[Arc<StreamState>]) -> Result<Mark, SessionError> {
    let mut mark = Mark {
        ns: now_ns(),
        cpu: CpuSample::now(),
        bytes: vec![(0, 0); states.len()],
    };
    let _ = ctrl.set_read_timeout(None);
    loop {
        match protocol::read_frame(ctrl) {
            Ok(Ctrl::Mark) => {
                mark.cpu = CpuSample::now();
                mark.ns = now_ns();
                for (m, st) in mark.bytes.iter_mut().zip(states) {
                    *m = (
                        st.bytes_in.load(Ordering::Relaxed),
                        st.bytes_out.load(Ordering::Relaxed),
                    );
                }
            }
            Ok(Ctrl::Stop) => return Ok(mark),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(SessionError::ControlClosed)
            }
            Err(source) => {
                return Err(SessionError::ClientGone {
                    when: "mid-test",
                    source,
                })
            }
        }
    }
}

/// Runs the streams until the client's stop, then sends the report. Returns the
/// received Gbit/s for the log line.
fn run_session(
    ctrl: &mut TcpStream,
    conns: Vec<(TcpStream, DataHello)>,
    p: &TestParams,
    cfg: &ServeConfig,
) -> Result<f64, SessionError> {
    let ctl = Arc::new(Control::default());
    ctl.start_ns.store(now_ns(), Ordering::Release);
    let (states, threads) = spawn_streams(conns, p, cfg, &ctl);
    let sampler = match (&cfg.metrics, ctrl.peer_addr()) {
        (Some(live), Ok(peer)) => Some(super::live::Sampler::start(live, peer, &states)),
        _ => None,
    };
    // After the options are applied: the buffers in effect for the test.
    let env = env::capture(&states[0].sock);
    let started =
        protocol::write_frame(ctrl, &Ctrl::Start).map_err(|source| SessionError::ClientGone {
            when: "before the start",
            source,
        });
    let mark = started.and_then(|_| await_stop(ctrl, &states));
    ctl.request_stop();
    for t in threads {
        let _ = t.join();
    }
    // Its last sample holds every byte the streams moved.
    drop(sampler);
    let mark = mark?;
    let (mark_ns, cpu_mark, at_mark) = (mark.ns, mark.cpu, mark.bytes);
    let cpu_end = CpuSample::now();
    let streams: Vec<ServerStream> = states
        .iter()
        .zip(&at_mark)
        .map(|(st, m)| {
            let ti = tcp_info::sample(st.sock.as_raw_fd()).unwrap_or_default();
            let eof = st.eof_ns.load(Ordering::Acquire);
            ServerStream {
                index: st.index,
                role: Some(st.role),
                bytes_received: st.bytes_in.load(Ordering::Relaxed),
                bytes_received_at_mark: m.0,
                bytes_sent: st.bytes_out.load(Ordering::Relaxed),
                bytes_sent_at_mark: m.1,
                recv_ns_after_mark: eof.saturating_sub(mark_ns),
                retransmits: ti.total_retrans,
                rtt_us: ti.rtt_for(st.role == Role::Recv),
                error: st.error(),
            }
        })
        .collect();
    let secs = cpu_end.at_ns.saturating_sub(mark_ns).max(1) as f64 / 1e9;
    let gbps = streams
        .iter()
        .map(|s| (s.bytes_received - s.bytes_received_at_mark) as f64)
        .sum::<f64>()
        * 8.0
        / secs
        / 1e9;
    let report = Ctrl::Report {
        streams,
        cpu: protocol::CpuTimes {
            user_ns: cpu_end.self_user_ns.saturating_sub(cpu_mark.self_user_ns),
            sys_ns: cpu_end.self_sys_ns.saturating_sub(cpu_mark.self_sys_ns),
            wall_ns: cpu_end.at_ns.saturating_sub(cpu_mark.at_ns),
            cpus: crate::stats::cpu::online_cpus() as u32,
        },
        env: Box::new(env),
    };
    protocol::write_frame(ctrl, &report).map_err(|source| SessionError::ClientGone {
        when: "before the report",
        source,
    })?;
    Ok(gbps)
}
