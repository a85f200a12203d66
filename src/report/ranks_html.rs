//! The multi-rank part of a run's HTML section (`mpirun -n N ioscope …`, docs/mpi.md):
//! one line per host and per rank (IOPS, MB/s, latency, CPU, start and end), the
//! spread between ranks, and the run-wide first/last-done figures. Rendered from
//! `runs[].ranks` and `runs[].mpi` only; empty for single-process runs.

use std::fmt::Write;

use super::format::{esc, human};
use crate::result::{RankResult, RunResult};

fn td(v: f64) -> String {
    format!("<td class=\"n\">{}</td>", human(v))
}

/// MB/s of a rank over its own measured time (bytes per I/O × IOPS).
fn mbps(r: &RankResult) -> f64 {
    if r.ios == 0 {
        0.0
    } else {
        r.bytes as f64 / r.ios as f64 * r.iops / 1e6
    }
}

/// Largest over smallest, as a % above the smallest (0 when there is one value).
fn spread_pct(values: impl Iterator<Item = f64>) -> f64 {
    let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
    if lo.is_finite() && lo > 0.0 {
        100.0 * (hi - lo) / lo
    } else {
        0.0
    }
}

/// Per-host and per-rank tables of a multi-rank run; empty otherwise.
pub fn ranks_section(run: &RunResult) -> String {
    let mut out = String::new();
    if run.ranks.is_empty() {
        return out;
    }
    out.push_str("<h3>Hosts and ranks</h3>");
    if let Some(m) = &run.mpi {
        let _ = write!(
            out,
            "<p class=\"meta\">{} ranks (split {}) · first I/Os {} ms apart · first rank done at {} s ({} IOPS merged until then) · last at {} s ({} IOPS)</p>",
            m.ranks,
            esc(&m.split),
            human(m.first_io_spread_ms),
            human(m.first_done_s),
            human(m.first_done_iops),
            human(m.last_done_s),
            human(m.last_done_iops),
        );
        if let Some(e) = &m.error {
            let _ = write!(out, "<p class=\"warn\">{}</p>", esc(e));
        }
    }
    hosts_table(&mut out, &run.ranks);
    let first_ns = run
        .ranks
        .iter()
        .map(|r| r.first_io_unix_ns)
        .filter(|&t| t > 0)
        .min()
        .unwrap_or(0);
    let with_hd = run.ranks.iter().any(|r| r.hd.is_some());
    let _ = write!(
        out,
        "<table class=\"ranks\"><thead><tr><th>rank</th><th>host</th>{}<th>IOPS</th><th>MB/s</th>\
<th>mean µs</th><th>p50 µs</th><th>p99 µs</th><th>p99.9 µs</th><th>max µs</th>\
<th>CPU %</th><th>first I/O +ms</th><th>done s</th></tr></thead><tbody>",
        if with_hd { "<th>hd</th>" } else { "" }
    );
    for r in &run.ranks {
        let l = &r.latency_us;
        let cpu = r
            .cpu
            .as_ref()
            .map_or(String::from("<td></td>"), |c| td(c.user_pct + c.sys_pct));
        let first = if r.first_io_unix_ns > 0 {
            td(r.first_io_unix_ns.saturating_sub(first_ns) as f64 / 1e6)
        } else {
            "<td></td>".into()
        };
        let done = match (r.done_s, r.lost) {
            (_, true) => "<td class=\"warn\">lost</td>".to_string(),
            (Some(d), _) => td(d),
            (None, _) => "<td></td>".into(),
        };
        let _ = write!(
            out,
            "<tr><td class=\"n\">{}</td><td>{}</td>{}{}{}{}{}{}{}{}{}{}{}</tr>",
            r.rank,
            esc(&r.host),
            if with_hd {
                format!("<td>{}</td>", esc(r.hd.as_deref().unwrap_or("")))
            } else {
                String::new()
            },
            td(r.iops),
            td(mbps(r)),
            td(l.mean),
            td(l.p50),
            td(l.p99),
            td(l.p99_9),
            td(l.max),
            cpu,
            first,
            done,
        );
    }
    out.push_str("</tbody></table>\n");
    let _ = writeln!(
        out,
        "<p class=\"caption\">Each rank over its own measured intervals; they add up to the run's totals. \
Spread between ranks: IOPS {}%, p99 {}% (largest over smallest). CPU: the rank's own use of its host.</p>",
        human(spread_pct(run.ranks.iter().map(|r| r.iops))),
        human(spread_pct(run.ranks.iter().map(|r| r.latency_us.p99))),
    );
    out
}

/// One line per host: its ranks' IOPS and MB/s summed, their latency range.
fn hosts_table(out: &mut String, ranks: &[RankResult]) {
    let mut hosts: Vec<&str> = Vec::new();
    for r in ranks {
        if !hosts.contains(&r.host.as_str()) {
            hosts.push(&r.host);
        }
    }
    out.push_str(
        "<table class=\"hosts\"><thead><tr><th>host</th><th>ranks</th><th>IOPS</th><th>MB/s</th>\
<th>p99 µs (lowest rank)</th><th>p99 µs (highest rank)</th></tr></thead><tbody>",
    );
    for h in hosts {
        let on: Vec<&RankResult> = ranks.iter().filter(|r| r.host == h).collect();
        let p99 = on.iter().map(|r| r.latency_us.p99);
        let lo = p99.clone().fold(f64::INFINITY, f64::min);
        let hi = p99.fold(0.0, f64::max);
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td>{}{}{}{}</tr>",
            esc(h),
            on.len(),
            td(on.iter().map(|r| r.iops).sum()),
            td(on.iter().map(|r| mbps(r)).sum()),
            td(lo),
            td(hi),
        );
    }
    out.push_str("</tbody></table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::MpiRun;

    fn rank(rank: u32, host: &str, iops: f64, p99: f64) -> RankResult {
        let mut r = RankResult {
            rank,
            host: host.into(),
            ios: 1000,
            bytes: 4096 * 1000,
            iops,
            first_io_unix_ns: 1_000_000_000 + rank as u64 * 2_000_000,
            done_s: Some(5.0),
            ..Default::default()
        };
        r.latency_us.p99 = p99;
        r
    }

    #[test]
    fn hosts_and_ranks_with_their_spread() {
        let mut run = crate::report::testdata::run("r", 1000.0, 100.0, 5, 0, 0.0, 1.0, 1);
        assert_eq!(ranks_section(&run), "", "nothing for one process");
        run.ranks = vec![
            rank(0, "a", 1000.0, 100.0),
            rank(1, "a", 1000.0, 150.0),
            rank(2, "b<x>", 500.0, 300.0),
        ];
        run.ranks[2].lost = true;
        run.mpi = Some(MpiRun {
            ranks: 3,
            split: "all".into(),
            error: Some("rank 2 on host b stopped reporting".into()),
            ..Default::default()
        });
        let html = ranks_section(&run);
        assert!(
            html.contains("<td>a</td><td class=\"n\">2</td><td class=\"n\">2,000</td>"),
            "{html}"
        );
        assert!(html.contains("b&lt;x&gt;"), "host names are escaped");
        assert!(html.contains("<td class=\"warn\">lost</td>"));
        assert!(html.contains("IOPS 100%, p99 200%"), "{html}");
        assert!(html.contains("rank 2 on host b stopped reporting"));
        // First I/Os relative to the earliest: rank 2 started 4 ms after rank 0.
        assert!(html.contains("<td class=\"n\">4</td>"), "{html}");
    }
}
