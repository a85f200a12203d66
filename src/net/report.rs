//! Terminal output of a network run, vdbench style: a time-of-day column, one line
//! per interval with Gbit/s, MB/s (10^6 bytes), the per-stream spread (slowest and
//! fastest stream), retransmits, mean RTT and summed congestion window from
//! TCP_INFO, and CPU; `--rr` adds transactions/s and latency. After the run, a totals
//! table per stream and in all, with service demand of both ends.

use std::fmt::Write as _;

use crate::report::terminal::time_of_day;
use crate::result::{Interval, RunResult};

/// The header printed before the intervals.
pub fn interval_header(rr: bool) -> String {
    let mut s = format!(
        "{:<12} {:>8} {:>9} {:>9} {:>17} {:>8} {:>8} {:>9} {:>6}",
        "", "interval", "Gbit/s", "MB/s", "stream min/max", "retrans", "rtt µs", "cwnd KiB", "cpu%"
    );
    if rr {
        let _ = write!(s, " {:>10} {:>8} {:>8}", "trans/s", "p50 µs", "p99 µs");
    }
    s
}

/// One interval line; warm-up intervals carry a 'w' after their number.
pub fn interval_line(iv: &Interval, rr: bool) -> String {
    let label = format!("{}{}", iv.index + 1, if iv.warmup { "w" } else { "" });
    let net = iv.net.clone().unwrap_or_default();
    let (min, max) = net.streams.iter().fold((f64::MAX, 0f64), |(lo, hi), s| {
        (lo.min(s.gbps), hi.max(s.gbps))
    });
    let min = if net.streams.is_empty() { 0.0 } else { min };
    let rtt = if net.streams.is_empty() {
        0.0
    } else {
        net.streams.iter().map(|s| s.rtt_us).sum::<f64>() / net.streams.len() as f64
    };
    let cwnd: u64 = net.streams.iter().map(|s| s.cwnd_bytes).sum();
    let mut s = format!(
        "{:<12} {:>8} {:>9.3} {:>9.1} {:>8.3}/{:<8.3} {:>8} {:>8.0} {:>9} {:>6.1}",
        time_of_day(iv.unix_s),
        label,
        net.gbps,
        iv.mbps,
        min,
        max,
        net.retransmits,
        rtt,
        cwnd / 1024,
        iv.cpu.user_pct + iv.cpu.sys_pct
    );
    if rr {
        let _ = write!(
            s,
            " {:>10.0} {:>8.1} {:>8.1}",
            iv.iops, iv.lat_us.p50, iv.lat_us.p99
        );
    }
    s
}

/// The totals table printed after the run.
pub fn totals_table(run: &RunResult) -> String {
    let t = &run.totals;
    let rr = t.net.rr.is_some();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n{}: {} stream(s) to {}, {:.1} s measured ({})",
        run.name, run.streams, run.target, run.duration_s, run.end_reason
    );
    let _ = write!(
        s,
        "{:<7} {:<5} {:>10} {:>9} {:>9} {:>15} {:>15}",
        "stream", "dir", "Gbit/s", "retrans", "rtt µs", "bytes sent", "bytes received"
    );
    if rr {
        let _ = write!(
            s,
            " {:>10} {:>8} {:>8} {:>8}",
            "trans/s", "p50 µs", "p99 µs", "p99.9 µs"
        );
    }
    s.push('\n');
    for (i, st) in t.net.streams.iter().flatten().enumerate() {
        let _ = write!(
            s,
            "{:<7} {:<5} {:>10.3} {:>9} {:>9.0} {:>15} {:>15}",
            i, st.direction, st.gbps, st.retransmits, st.rtt_us, st.bytes_sent, st.bytes_received
        );
        if let (Some(tps), Some(l)) = (st.tps, &st.latency_us) {
            let _ = write!(
                s,
                " {:>10.0} {:>8.1} {:>8.1} {:>8.1}",
                tps, l.p50, l.p99, l.p99_9
            );
        }
        s.push('\n');
    }
    let retrans: u64 = t.net.streams.iter().flatten().map(|x| x.retransmits).sum();
    let _ = write!(
        s,
        "{:<7} {:<5} {:>10.3} {:>9} {:>9} {:>15} {:>15}",
        "all",
        "",
        t.net.gbps.unwrap_or(0.0),
        retrans,
        "",
        "",
        ""
    );
    if let Some(r) = &t.net.rr {
        let l = &r.latency_us;
        let _ = write!(
            s,
            " {:>10.0} {:>8.1} {:>8.1} {:>8.1}",
            r.tps, l.p50, l.p99, l.p99_9
        );
    }
    s.push('\n');
    let _ = writeln!(
        s,
        "{:.1} MB/s; CPU here {:.1}% user+sys of all CPUs{}",
        t.all.mbps,
        run.cpu.user_pct + run.cpu.sys_pct,
        t.net
            .remote_cpu
            .as_ref()
            .map(|c| format!(", server {:.1}%", c.user_pct + c.sys_pct))
            .unwrap_or_default()
    );
    if let Some(d) = &t.net.service_demand_us_per_kb {
        let _ = writeln!(
            s,
            "service demand: {:.4} µs/KiB here, {} on the server",
            d.local,
            d.remote
                .map(|r| format!("{r:.4} µs/KiB"))
                .unwrap_or_else(|| "unknown (no report)".into())
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{NetInterval, NetStreamInterval};

    #[test]
    fn interval_line_shows_spread_and_tcp_info() {
        let iv = Interval {
            index: 0,
            warmup: true,
            mbps: 1250.0,
            net: Some(NetInterval {
                gbps: 10.0,
                retransmits: 3,
                streams: vec![
                    NetStreamInterval {
                        gbps: 4.0,
                        rtt_us: 20.0,
                        cwnd_bytes: 2048,
                        ..Default::default()
                    },
                    NetStreamInterval {
                        gbps: 6.0,
                        rtt_us: 40.0,
                        cwnd_bytes: 2048,
                        ..Default::default()
                    },
                ],
            }),
            ..Default::default()
        };
        let l = interval_line(&iv, false);
        assert!(l.contains(" 1w "), "{l}");
        assert!(l.contains("10.000") && l.contains("4.000/6.000"), "{l}");
        assert!(l.contains(" 30 ") && l.contains(" 4 "), "{l}");
    }
}
