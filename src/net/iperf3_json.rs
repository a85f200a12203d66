//! `--iperf3-json`: the result in the layout `iperf3 -J` writes (3.x: `start`,
//! `intervals[].streams[]` and `.sum`, `end.streams[].sender/receiver`,
//! `end.sum_sent`, `end.sum_received`, `end.cpu_utilization_percent`), so tooling
//! built around iperf3 reads ioscope's numbers. The field names and units follow
//! iperf3's: bits per second, seconds, RTT in µs, CPU as a percentage of one CPU
//! (iperf3 divides process CPU time by wall time). With `--bidir` both directions
//! are summed into `sum_sent`/`sum_received` (iperf3 splits them into `*_bidir_reverse`).

use serde_json::{json, Value};
use std::sync::atomic::Ordering;

use super::measured::Measured;
use super::protocol::Role;
use crate::result::RunResult;

fn uname() -> String {
    // SAFETY: utsname is plain data; uname fills the zeroed struct we own.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uname writes only into the utsname we pass.
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::new();
    }
    let f = |a: &[libc::c_char]| {
        let b: Vec<u8> = a
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&b).into_owned()
    };
    format!(
        "{} {} {} {} {}",
        f(&u.sysname),
        f(&u.nodename),
        f(&u.release),
        f(&u.version),
        f(&u.machine)
    )
}

fn split_addr(a: &str) -> (String, u16) {
    match a.parse::<std::net::SocketAddr>() {
        Ok(s) => (s.ip().to_string(), s.port()),
        Err(_) => (a.to_string(), 0),
    }
}

/// iperf3 reports descriptor numbers; stream positions are stable stand-ins.
fn socket(i: usize) -> u64 {
    i as u64 + 5
}

/// The largest value of a stream's per-interval figure over the run.
fn max_of(run: &RunResult, i: usize, pick: fn(&crate::result::NetStreamInterval) -> u64) -> u64 {
    run.intervals
        .iter()
        .filter_map(|iv| iv.net.as_ref().and_then(|n| n.streams.get(i)).map(pick))
        .max()
        .unwrap_or(0)
}

/// (min, max, mean) of a stream's per-interval smoothed RTT, µs.
fn rtt_stats(run: &RunResult, i: usize) -> (f64, f64, f64) {
    let v: Vec<f64> = run
        .intervals
        .iter()
        .filter_map(|iv| {
            iv.net
                .as_ref()
                .and_then(|n| n.streams.get(i))
                .map(|s| s.rtt_us)
        })
        .filter(|r| *r > 0.0)
        .collect();
    if v.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let min = v.iter().copied().fold(f64::MAX, f64::min);
    let max = v.iter().copied().fold(0.0, f64::max);
    (min, max, v.iter().sum::<f64>() / v.len() as f64)
}

fn sender_here(m: &Measured, i: usize) -> bool {
    m.streams[i].st.role != Role::Recv
}

/// The iperf3-layout document of a finished test.
pub fn render(m: &Measured, run: &RunResult) -> Value {
    let (streams, sums) = end_streams(m, run);
    json!({
        "start": start(m),
        "intervals": intervals(m, run),
        "end": end(m, run, streams, sums),
    })
}

fn start(m: &Measured) -> Value {
    let connected: Vec<Value> = m
        .local_addrs
        .iter()
        .enumerate()
        .map(|(i, (l, r))| {
            let (lh, lp) = split_addr(l);
            let (rh, rp) = split_addr(r);
            json!({"socket": socket(i), "local_host": lh, "local_port": lp, "remote_host": rh, "remote_port": rp})
        })
        .collect();
    let c = &m.cfg;
    let (host, port) = split_addr(&m.addr.to_string());
    json!({
        "connected": connected,
        "version": format!("ioscope {}", env!("CARGO_PKG_VERSION")),
        "system_info": uname(),
        "timestamp": {
            "time": crate::report::format::utc_datetime(m.started_unix_s),
            "timesecs": m.started_unix_s as u64,
        },
        "connecting_to": {"host": host, "port": port},
        "cookie": m.cookie,
        "tcp_mss_default": m.streams.first().map(|t| t.tcp.snd_mss).unwrap_or(0),
        "target_bitrate": c.rate.filter(|_| c.rr.is_none()).unwrap_or(0.0) as u64,
        "sock_bufsize": c.window_bytes.unwrap_or(0),
        "sndbuf_actual": m.local_env.sndbuf_bytes.unwrap_or(0),
        "rcvbuf_actual": m.local_env.rcvbuf_bytes.unwrap_or(0),
        "test_start": {
            "protocol": "TCP", "num_streams": c.streams, "blksize": c.bs_bytes,
            "omit": c.warmup_ns as f64 / 1e9, "duration": c.duration_ns as f64 / 1e9,
            "bytes": 0, "blocks": 0,
            "reverse": i32::from(c.direction == super::config::Direction::Reverse),
            "bidir": i32::from(c.direction == super::config::Direction::Bidir),
            "tos": 0,
            "target_bitrate": c.rate.filter(|_| c.rr.is_none()).unwrap_or(0.0) as u64,
        },
    })
}

fn intervals(m: &Measured, run: &RunResult) -> Vec<Value> {
    run
        .intervals
        .iter()
        .map(|iv| {
            let start = (iv.t_s - iv.duration_s).max(0.0);
            let net = iv.net.clone().unwrap_or_default();
            let streams: Vec<Value> = net
                .streams
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    json!({
                        "socket": socket(i), "start": start, "end": iv.t_s, "seconds": iv.duration_s,
                        "bytes": s.bytes, "bits_per_second": s.gbps * 1e9,
                        "retransmits": s.retransmits, "snd_cwnd": s.cwnd_bytes,
                        "snd_wnd": s.snd_wnd_bytes, "rtt": s.rtt_us as u64, "rttvar": s.rttvar_us as u64, "pmtu": m.local_env.path_mtu.unwrap_or(0),
                        "omitted": iv.warmup, "sender": sender_here(m, i),
                    })
                })
                .collect();
            json!({
                "streams": streams,
                "sum": {
                    "start": start, "end": iv.t_s, "seconds": iv.duration_s, "bytes": iv.bytes,
                    "bits_per_second": net.gbps * 1e9, "retransmits": net.retransmits,
                    "omitted": iv.warmup, "sender": (0..m.streams.len()).any(|i| sender_here(m, i)),
                },
            })
        })
        .collect()
}

/// Bytes sent, bytes received and retransmits over all streams.
type Sums = (u64, u64, u64);

fn end_streams(m: &Measured, run: &RunResult) -> (Vec<Value>, Sums) {
    let secs = run.duration_s;
    let server = m.server.as_ref();
    let totals = run.totals.net.streams.clone().unwrap_or_default();
    let mut sent_bytes = 0u64;
    let mut recv_bytes = 0u64;
    let mut retrans = 0u64;
    let end_streams: Vec<Value> = m
        .streams
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let tot = totals.get(i).cloned().unwrap_or_default();
            let srv = server.and_then(|(ss, _)| {
                ss.iter()
                    .find(|s| s.index == t.st.index && s.role == Some(t.st.role))
            });
            let sent = match t.st.role {
                Role::Recv => srv.map(|s| s.bytes_sent - s.bytes_sent_at_mark).unwrap_or(0),
                _ => t.st.bytes_out.load(Ordering::Relaxed) - t.mark_out,
            };
            let received = (tot.gbps * 1e9 / 8.0 * secs) as u64;
            let received = match t.st.role {
                Role::Recv => t.st.bytes_in.load(Ordering::Relaxed) - t.mark_in,
                Role::Send => srv
                    .map(|s| s.bytes_received - s.bytes_received_at_mark)
                    .unwrap_or(received),
                Role::Rr => t.st.bytes_in.load(Ordering::Relaxed) - t.mark_in,
            };
            let rtt = rtt_stats(run, i);
            sent_bytes += sent;
            recv_bytes += received;
            retrans += tot.retransmits;
            json!({
                "sender": {
                    "socket": socket(i), "start": 0, "end": secs, "seconds": secs, "bytes": sent,
                    "bits_per_second": sent as f64 * 8.0 / secs, "retransmits": tot.retransmits,
                    "max_snd_cwnd": max_of(run, i, |s| s.cwnd_bytes), "max_snd_wnd": max_of(run, i, |s| s.snd_wnd_bytes), "max_rtt": rtt.1 as u64,
                    "min_rtt": rtt.0 as u64, "mean_rtt": rtt.2 as u64,
                    "sender": sender_here(m, i),
                },
                "receiver": {
                    "socket": socket(i), "start": 0, "end": secs, "seconds": secs, "bytes": received,
                    "bits_per_second": tot.gbps * 1e9, "sender": sender_here(m, i),
                },
            })
        })
        .collect();
    (end_streams, (sent_bytes, recv_bytes, retrans))
}

fn end(m: &Measured, run: &RunResult, end_streams: Vec<Value>, sums: Sums) -> Value {
    let c = &m.cfg;
    let secs = run.duration_s;
    let (sent_bytes, recv_bytes, retrans) = sums;
    let local_wall = m.cpu_end.at_ns.saturating_sub(m.cpu_mark.at_ns).max(1) as f64;
    let lu = m
        .cpu_end
        .self_user_ns
        .saturating_sub(m.cpu_mark.self_user_ns) as f64;
    let ls = m.cpu_end.self_sys_ns.saturating_sub(m.cpu_mark.self_sys_ns) as f64;
    let (ru, rs) = m
        .server
        .as_ref()
        .map(|(_, c)| {
            let w = c.wall_ns.max(1) as f64;
            (100.0 * c.user_ns as f64 / w, 100.0 * c.sys_ns as f64 / w)
        })
        .unwrap_or((0.0, 0.0));
    let cc_local = m.local_env.congestion.clone().unwrap_or_default();
    let cc_remote = m
        .remote_env
        .as_ref()
        .and_then(|e| e.congestion.clone())
        .unwrap_or_default();
    let (sender_cc, receiver_cc) = if c.direction == super::config::Direction::Reverse {
        (cc_remote, cc_local)
    } else {
        (cc_local, cc_remote)
    };
    json!({
        "streams": end_streams,
        "sum_sent": {
            "start": 0, "end": secs, "seconds": secs, "bytes": sent_bytes,
            "bits_per_second": sent_bytes as f64 * 8.0 / secs, "retransmits": retrans, "sender": true,
        },
        "sum_received": {
            "start": 0, "end": secs, "seconds": secs, "bytes": recv_bytes,
            "bits_per_second": run.totals.net.gbps.unwrap_or(0.0) * 1e9, "sender": true,
        },
        "cpu_utilization_percent": {
            "host_total": 100.0 * (lu + ls) / local_wall,
            "host_user": 100.0 * lu / local_wall,
            "host_system": 100.0 * ls / local_wall,
            "remote_total": ru + rs,
            "remote_user": ru,
            "remote_system": rs,
        },
        "sender_tcp_congestion": sender_cc,
        "receiver_tcp_congestion": receiver_cc,
    })
}
