//! The terminal table after a run of network jobs: one line per job with its
//! endpoint, direction, throughput, messages, lost datagrams and message latency
//! (the round trip with `pingpong`).

use std::fmt::Write as _;

use crate::result::RunResult;

/// The totals table printed after the run.
pub fn totals_table(run: &RunResult) -> String {
    let t = &run.totals;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n{}: {} network job(s), {:.1} s ({})",
        run.name, run.streams, run.duration_s, run.end_reason
    );
    let _ = writeln!(
        s,
        "{:<16} {:<4} {:>9} {:>9} {:>11} {:>9} {:>9} {:>9}  endpoint",
        "job", "dir", "Gbit/s", "MB/s", "messages", "lost", "p50 µs", "p99 µs"
    );
    let streams = t.net.streams.iter().flatten();
    for (st, w) in streams.zip(&run.workloads) {
        let a = &w.totals.all;
        let _ = writeln!(
            s,
            "{:<16} {:<4} {:>9.3} {:>9.1} {:>11} {:>9} {:>9.1} {:>9.1}  {}",
            w.name,
            st.direction,
            st.gbps,
            a.mbps,
            a.ios,
            st.datagrams_lost,
            a.latency_us.p50,
            a.latency_us.p99,
            w.target
        );
    }
    let received = t
        .net
        .streams
        .iter()
        .flatten()
        .any(|st| st.direction == "recv");
    let _ = writeln!(
        s,
        "{} {:.3} Gbit/s ({:.1} MB/s) in all; CPU here {:.1}% user+sys of all CPUs",
        if received { "received" } else { "sent" },
        t.net.gbps.unwrap_or(0.0),
        t.all.mbps,
        run.cpu.user_pct + run.cpu.sys_pct
    );
    s
}
