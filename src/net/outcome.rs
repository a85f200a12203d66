//! From measurements to the result: per-stream totals as the receiving end counted
//! them, transactions and latency for `--rr`, service demand of both ends, the
//! environment of both ends with advice; then the outputs (result JSON, HTML,
//! iperf3 JSON) and the totals table.

use std::path::Path;

use super::config::{Direction, NetOutput, NetRunConfig};
use super::measured::{Measured, Tracked};
use super::protocol::{CpuTimes, Role, ServerStream};
use super::NetError;
use crate::report::json::{check_writable, write_atomic, write_atomic_bytes};
use crate::result::{
    Cpu, EndReason, NetMode, NetRrEcho, NetStreamTotals, NetTotals, NetWorkloadEcho, OpTotals,
    ResultDoc, RrTotals, RunKind, RunResult, RunWorkload, ServiceDemand, Tool, Totals, SCHEMA,
};
use crate::stats::histogram::LatencyHistogram;
use crate::stats::timed_totals;

/// What a finished test produced.
pub struct NetOutcome {
    pub doc: ResultDoc,
    pub exit_code: i32,
}

/// Refuses unwritable output paths before anything is sent.
pub fn check_outputs(o: &NetOutput) -> Result<(), NetError> {
    for (flag, p) in [
        ("--json", &o.json),
        ("--html", &o.html),
        ("--iperf3-json", &o.iperf3_json),
    ] {
        if let Some(p) = p {
            check_writable(p).map_err(|e| {
                NetError::Input(format!("{flag} '{}': cannot write there: {e}", p.display()))
            })?;
        }
    }
    Ok(())
}

/// One stream's measured figures.
struct StreamFigures {
    totals: NetStreamTotals,
    /// Payload bytes delivered in the measured time (receiver's count).
    measured_bytes: u64,
    /// Of which towards the client.
    measured_bytes_in: u64,
    ops: u64,
}

fn stream_figures(m: &Measured, t: &Tracked, srv: Option<&ServerStream>) -> StreamFigures {
    let measured_s = m.end_ns.saturating_sub(m.mark_ns).max(1) as f64 / 1e9;
    let out = t.st.bytes_out.load(std::sync::atomic::Ordering::Relaxed);
    let inn = t.st.bytes_in.load(std::sync::atomic::Ordering::Relaxed);
    let ops =
        t.st.ops
            .load(std::sync::atomic::Ordering::Relaxed)
            .saturating_sub(t.mark_ops);
    let eof = t.st.eof_ns.load(std::sync::atomic::Ordering::Relaxed);
    let (direction, sent, received, bytes, bytes_in, secs, retrans, rtt) = match t.st.role {
        Role::Send => {
            let (bytes, secs) = match srv.filter(|s| s.recv_ns_after_mark > 0) {
                Some(s) => (
                    s.bytes_received - s.bytes_received_at_mark,
                    s.recv_ns_after_mark as f64 / 1e9,
                ),
                None => (out - t.mark_out, measured_s),
            };
            let received = srv.map(|s| s.bytes_received).unwrap_or(0);
            (
                "send",
                out,
                received,
                bytes,
                0,
                secs,
                t.tcp.total_retrans,
                t.tcp.rtt_us,
            )
        }
        Role::Recv => {
            let secs = if eof > m.mark_ns {
                (eof - m.mark_ns) as f64 / 1e9
            } else {
                measured_s
            };
            let bytes = inn - t.mark_in;
            (
                "recv",
                srv.map(|s| s.bytes_sent).unwrap_or(0),
                inn,
                bytes,
                bytes,
                secs,
                srv.map(|s| s.retransmits).unwrap_or(0),
                srv.map(|s| s.rtt_us).unwrap_or(t.tcp.rcv_rtt_us),
            )
        }
        Role::Rr => {
            let bytes_in = inn - t.mark_in;
            (
                "rr",
                out,
                srv.map(|s| s.bytes_received).unwrap_or(0),
                (out - t.mark_out) + bytes_in,
                bytes_in,
                measured_s,
                t.tcp.total_retrans,
                t.tcp.rtt_us,
            )
        }
    };
    let rr = t.st.role == Role::Rr;
    StreamFigures {
        totals: NetStreamTotals {
            direction: direction.into(),
            gbps: bytes as f64 * 8.0 / secs.max(1e-9) / 1e9,
            retransmits: retrans,
            rtt_us: rtt,
            bytes_sent: sent,
            bytes_received: received,
            tps: rr.then(|| ops as f64 / measured_s),
            latency_us: rr.then(|| t.hist.summary_us(false)),
            ..Default::default()
        },
        measured_bytes: bytes,
        measured_bytes_in: bytes_in,
        ops,
    }
}

/// [`timed_totals`] at `gbps` (10^9 bits per second).
fn op_totals(ios: u64, bytes: u64, gbps: f64, secs: f64, lat: &LatencyHistogram) -> OpTotals {
    timed_totals(ios, bytes, secs, gbps * 1e3 / 8.0, lat)
}

/// The server's CPU use over the test, as the server reported it.
fn remote_cpu(c: &CpuTimes, ios: u64) -> Cpu {
    let wall = c.wall_ns.max(1) as f64 * c.cpus.max(1) as f64;
    Cpu {
        user_pct: 100.0 * c.user_ns as f64 / wall,
        sys_pct: 100.0 * c.sys_ns as f64 / wall,
        system_pct: 0.0,
        cpu_us_per_io: if ios > 0 {
            (c.user_ns + c.sys_ns) as f64 / 1e3 / ios as f64
        } else {
            0.0
        },
        online_cpus: Some(c.cpus.max(1)),
    }
}

/// The test's settings as the result echoes them.
fn workload_echo(c: &NetRunConfig, mode: NetMode) -> NetWorkloadEcho {
    NetWorkloadEcho {
        mode,
        streams: c.streams,
        bs: c.bs_bytes,
        window: c.window_bytes,
        mss: c.mss_bytes,
        nodelay: c.nodelay,
        zerocopy: c.zerocopy,
        rate: c.rate,
        rr: c.rr.map(|r| NetRrEcho {
            req: r.req_bytes,
            resp: r.resp_bytes,
        }),
        cpus: c.cpus.clone(),
        remote_cpus: c.remote_cpus.clone(),
    }
}

/// The run record of a finished (or failed) test.
fn build_run(m: &Measured) -> RunResult {
    let measured_s = m.end_ns.saturating_sub(m.mark_ns).max(1) as f64 / 1e9;
    let find = |t: &Tracked| {
        m.server.as_ref().and_then(|(ss, _)| {
            ss.iter()
                .find(|s| s.index == t.st.index && s.role == Some(t.st.role))
        })
    };
    let figs: Vec<StreamFigures> = m
        .streams
        .iter()
        .map(|t| stream_figures(m, t, find(t)))
        .collect();
    let mut lat = LatencyHistogram::new();
    for t in &m.streams {
        lat += &t.hist;
    }
    let gbps: f64 = figs.iter().map(|f| f.totals.gbps).sum();
    let bytes: u64 = figs.iter().map(|f| f.measured_bytes).sum();
    let bytes_in: u64 = figs.iter().map(|f| f.measured_bytes_in).sum();
    let ios: u64 = figs.iter().map(|f| f.ops).sum();
    let share = |part: u64| {
        if bytes > 0 {
            gbps * part as f64 / bytes as f64
        } else {
            0.0
        }
    };
    let empty = LatencyHistogram::new();
    let cpu = m.cpu_end.since(&m.cpu_mark, ios);
    let kib = bytes as f64 / 1024.0;
    let local_us = (m.cpu_end.self_user_ns + m.cpu_end.self_sys_ns)
        .saturating_sub(m.cpu_mark.self_user_ns + m.cpu_mark.self_sys_ns) as f64
        / 1e3;
    let remote = m.server.as_ref().map(|(_, c)| c);
    let remote_cpu = remote.map(|c| remote_cpu(c, ios));
    let rr = m.cfg.rr.is_some();
    let totals = Totals {
        all: op_totals(ios, bytes, gbps, measured_s, &lat),
        read: op_totals(0, bytes_in, share(bytes_in), measured_s, &empty),
        write: op_totals(
            0,
            bytes - bytes_in,
            share(bytes - bytes_in),
            measured_s,
            &empty,
        ),
        trim: None,
        queue_depth: 0.0,
        net: NetTotals {
            gbps: Some(gbps),
            streams: Some(figs.iter().map(|f| f.totals.clone()).collect()),
            service_demand_us_per_kb: (kib > 0.0).then(|| ServiceDemand {
                local: local_us / kib,
                remote: remote.map(|c| (c.user_ns + c.sys_ns) as f64 / 1e3 / kib),
            }),
            rr: rr.then(|| RrTotals {
                tps: ios as f64 / measured_s,
                latency_us: lat.summary_us(true),
            }),
            remote_cpu,
        },
        flush: None,
        zone_resets: None,
    };
    let c = &m.cfg;
    let mode = match (c.rr, c.direction) {
        (Some(_), _) => NetMode::Rr,
        (None, Direction::Send) => NetMode::Send,
        (None, Direction::Reverse) => NetMode::Reverse,
        (None, Direction::Bidir) => NetMode::Bidir,
    };
    RunResult {
        kind: RunKind::Net,
        name: format!("net-{}", mode.name()),
        target: c.addr_text.clone(),
        engine: if c.zerocopy { "tcp-sendfile" } else { "tcp" }.into(),
        engine_reason: String::new(),
        io: None,
        workload: RunWorkload::Net(workload_echo(c, mode)),
        duration_s: measured_s,
        warmup_s: m.mark_ns.saturating_sub(m.start_ns) as f64 / 1e9,
        interrupted: m.end_reason == EndReason::Interrupted,
        end_reason: m.end_reason,
        workers: m.streams.len(),
        streams: m.streams.len() as u64,
        totals,
        cpu,
        workloads: Vec::new(),
        intervals: m.intervals.clone(),
        ..RunResult::empty()
    }
}

/// Builds the result, writes every output, prints the totals; the exit code says
/// how the test ended.
pub fn finish(m: Measured) -> Result<NetOutcome, NetError> {
    let run = build_run(&m);
    let advice = super::env::advice(&m.local_env, m.remote_env.as_ref(), m.cfg.window_bytes);
    let host = serde_json::to_value(crate::sysinfo::capture(&[])).unwrap_or_default();
    let mut warnings: Vec<String> = m.errors.clone();
    warnings.extend(advice.iter().cloned());
    let doc = ResultDoc {
        schema: SCHEMA.into(),
        tool: Tool::current(),
        started_unix_s: m.started_unix_s,
        command: m.cfg.command.clone(),
        interrupted: run.interrupted,
        runs: vec![run],
        env: Some(serde_json::json!({
            "ioscope_version": env!("CARGO_PKG_VERSION"),
            "host": host.get("host").cloned().unwrap_or_default(),
            "net": {"local": m.local_env, "remote": m.remote_env, "advice": advice},
        })),
        plan: None,
        warnings,
        curves: Vec::new(),
        steady_state: None,
    };
    let o = &m.cfg.output;
    let werr = |p: &Path, e: std::io::Error| NetError::io(format!("writing '{}'", p.display()), e);
    if let Some(p) = &o.json {
        write_atomic(p, &doc).map_err(|e| werr(p, e))?;
    }
    if let Some(p) = &o.html {
        write_atomic_bytes(p, crate::report::html::render_html(&doc).as_bytes())
            .map_err(|e| werr(p, e))?;
    }
    if let Some(p) = &o.iperf3_json {
        let v = super::iperf3_json::render(&m, &doc.runs[0]);
        let text = serde_json::to_string_pretty(&v).unwrap_or_default();
        write_atomic_bytes(p, text.as_bytes()).map_err(|e| werr(p, e))?;
    }
    for w in &doc.warnings {
        eprintln!("warning: {w}");
    }
    // After the outputs are written: a closed stdout (here, or while the interval
    // lines were printed) ends the command quietly with everything measured saved.
    if o.json_stdout {
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        crate::stdout::println(&text)?;
    } else {
        crate::stdout::print(&super::report::totals_table(&doc.runs[0]))?;
    }
    let exit_code = match m.end_reason {
        EndReason::Interrupted => 130,
        EndReason::Error => 1,
        EndReason::Duration | EndReason::Passes | EndReason::SteadyState | EndReason::DataLimit => {
            0
        }
    };
    if exit_code == 1 {
        eprintln!(
            "error: {}: the test ended early: {}",
            m.cfg.addr_text,
            m.errors
                .first()
                .map(String::as_str)
                .unwrap_or("the server went away")
        );
    }
    Ok(NetOutcome { doc, exit_code })
}
