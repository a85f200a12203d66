//! The network part of a run's HTML section (`ioscope net` results): a per-stream
//! timeline of Gbit/s, a timeline of retransmits and RTT, and the per-stream totals
//! table. Rendered from the result model's net fields only, like every chart.

use std::fmt::Write;

use super::format::{esc, human};
use super::svg::{Axis, Band, Chart, Series, PALETTE};
use crate::result::{Interval, RunResult};

fn warmup_band(ivs: &[Interval]) -> Vec<Band> {
    let warm: Vec<&Interval> = ivs.iter().filter(|iv| iv.warmup).collect();
    match (warm.first(), warm.last()) {
        (Some(a), Some(b)) => vec![Band {
            kind: "warmup".into(),
            label: "warm-up".into(),
            x0: a.t_s - a.duration_s,
            x1: b.t_s,
            color: "#e8e3d3".into(),
        }],
        _ => Vec::new(),
    }
}

/// The per-stream charts and table of a net run; empty for storage runs.
pub fn net_section(run: &RunResult, id: &str) -> String {
    let mut out = String::new();
    let Some(streams) = &run.totals.net.streams else {
        return out;
    };
    let ivs = &run.intervals;
    let n = ivs
        .iter()
        .filter_map(|iv| iv.net.as_ref().map(|n| n.streams.len()))
        .max()
        .unwrap_or(0);
    if n > 0 {
        let xs: Vec<f64> = ivs
            .iter()
            .flat_map(|iv| [iv.t_s - iv.duration_s, iv.t_s])
            .collect();
        let x = Axis::linear("time since start (s)", xs.clone());
        let per = |k: usize, iv: &Interval| {
            iv.net
                .as_ref()
                .and_then(|n| n.streams.get(k).cloned())
                .unwrap_or_default()
        };
        let gb: Vec<f64> = ivs
            .iter()
            .flat_map(|iv| (0..n).map(move |k| per(k, iv).gbps))
            .collect();
        let mut c = Chart::new(
            &format!("{id}-streams-gbps"),
            "Throughput per stream",
            x.clone(),
            Axis::linear("Gbit/s", gb),
        );
        c.bands = warmup_band(ivs);
        for k in 0..n {
            let mut s = Series::line(
                &format!("stream{k}_gbps"),
                &format!("stream {k}"),
                PALETTE[k % PALETTE.len()],
                ivs.iter().map(|iv| (iv.t_s, per(k, iv).gbps)).collect(),
            );
            s.tips = ivs
                .iter()
                .map(|iv| {
                    format!(
                        "stream {k}, t={} s: {} Gbit/s",
                        human(iv.t_s),
                        human(per(k, iv).gbps)
                    )
                })
                .collect();
            c.series.push(s);
        }
        out.push_str("<h3>Streams</h3>");
        out.push_str(&c.render());
        let rtts: Vec<f64> = ivs
            .iter()
            .flat_map(|iv| (0..n).map(move |k| per(k, iv).rtt_us))
            .collect();
        let mut r = Chart::new(
            &format!("{id}-streams-rtt"),
            "Round-trip time per stream (TCP_INFO)",
            x,
            Axis::linear("RTT (µs)", rtts),
        );
        r.bands = warmup_band(ivs);
        for k in 0..n {
            r.series.push(Series::line(
                &format!("stream{k}_rtt_us"),
                &format!("stream {k}"),
                PALETTE[k % PALETTE.len()],
                ivs.iter().map(|iv| (iv.t_s, per(k, iv).rtt_us)).collect(),
            ));
        }
        out.push_str(&r.render());
        out.push_str("<p class=\"caption\">One point per interval and stream, as this end's sockets saw it. Shaded: warm-up.</p>\n");
    }
    out.push_str("<table><thead><tr><th>stream</th><th>direction</th><th>Gbit/s</th><th>retransmits</th><th>RTT µs</th><th>bytes sent</th><th>bytes received</th><th>trans/s</th><th>p99 µs</th></tr></thead><tbody>");
    for (k, s) in streams.iter().enumerate() {
        let _ = write!(
            out,
            "<tr><td class=\"n\">{k}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&s.direction),
            human(s.gbps),
            s.retransmits,
            human(s.rtt_us),
            s.bytes_sent,
            s.bytes_received,
            s.tps.map(human).unwrap_or_default(),
            s.latency_us.as_ref().map(|l| human(l.p99)).unwrap_or_default(),
        );
    }
    out.push_str("</tbody></table>\n");
    let t = &run.totals.net;
    let _ = writeln!(
        out,
        "<p class=\"meta\">{} Gbit/s in all{}</p>",
        human(t.gbps.unwrap_or(0.0)),
        t.service_demand_us_per_kb
            .as_ref()
            .map(|d| format!(
                " · service demand {} µs/KiB here, {} on the server",
                human(d.local),
                d.remote
                    .map(|r| format!("{} µs/KiB", human(r)))
                    .unwrap_or_else(|| "unknown".into())
            ))
            .unwrap_or_default()
    );
    out
}
