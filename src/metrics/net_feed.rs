//! `ioscope net run|serve`'s view of the registry: the same families a storage run
//! feeds, filled from a network test's data connections.
//!
//! A connection's counters are cumulative atomics its stream thread stores; the feed
//! is handed those totals as its owner reads them (the client once per interval, the
//! very values its interval line is made of; the server once per sampling tick) and
//! adds what grew since the last call, so the registry never counts a byte twice and
//! nothing is added on the data path. Bytes go to `direction="send"` or `"receive"`
//! as this end moved them; a connection's operations (writes, reads, or
//! request/response transactions) go to the direction word its owner gives it.

use super::families::{ConnLabels, IoLabels, LatLabels};
use super::Live;
use crate::stats::histogram::LatencyHistogram;
use prometheus_client::metrics::counter::Counter;

/// One data connection's cumulative counts on this end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetConnCounts {
    pub bytes_out: u64,
    pub bytes_in: u64,
    /// Writes, reads or transactions, as the connection's stream counts them.
    pub ops: u64,
}

/// One data connection as its series name it.
#[derive(Debug, Clone)]
pub struct NetConnName {
    /// Its position among the test's data connections (the same on both ends).
    pub connection: u32,
    /// Where its operations count: `send`, `receive` or `rr`.
    pub ops_direction: &'static str,
}

/// One connection's series, bound once.
struct ConnFeed {
    ios: Counter,
    bytes: Counter,
    /// This connection's operations' direction.
    dir_ios: Counter,
    prev: NetConnCounts,
}

/// A network test's series: `workload="net"`, the peer as `target`.
pub struct NetFeed {
    live: Live,
    conns: Vec<ConnFeed>,
    send_bytes: Counter,
    recv_bytes: Counter,
}

impl NetFeed {
    /// Binds a test's series against `target` (the peer's address). Counts the test
    /// as a run in the phase gauges; `planned` runs in all (0: not known ahead, as a
    /// server's).
    pub fn new(live: &Live, target: &str, conns: &[NetConnName], planned: u64) -> Self {
        let f = &live.families;
        f.run.inc();
        if planned > 0 {
            f.runs.set(i64::try_from(planned).unwrap_or(i64::MAX));
        }
        let bytes = |dir: &str| {
            f.bytes
                .get_or_create_owned(&IoLabels::new("net", dir, target))
        };
        let conns = conns
            .iter()
            .map(|c| {
                let l = ConnLabels {
                    target: target.to_string(),
                    connection: c.connection.to_string(),
                };
                let io = IoLabels::new("net", c.ops_direction, target);
                // Present from the start, so a rate over the first scrapes is defined.
                let _ = f.errors.get_or_create(&io);
                ConnFeed {
                    ios: f.conn_ios.get_or_create_owned(&l),
                    bytes: f.conn_bytes.get_or_create_owned(&l),
                    dir_ios: f.ios.get_or_create_owned(&io),
                    prev: NetConnCounts::default(),
                }
            })
            .collect();
        NetFeed {
            live: live.clone(),
            conns,
            send_bytes: bytes("send"),
            recv_bytes: bytes("receive"),
        }
    }

    /// Adds what each connection moved since the last call (`now[i]` are connection
    /// i's totals), the latency recorded meanwhile (`direction` of the latency series:
    /// `send` for paced sends, `rr` for transactions), whether the test is in its
    /// warm-up, and the time the totals were read (the samples' timestamp).
    pub fn add(
        &mut self,
        now: &[NetConnCounts],
        latency: Option<(&str, &LatencyHistogram)>,
        warmup: bool,
        at_unix_s: f64,
    ) {
        for (c, n) in self.conns.iter_mut().zip(now) {
            let out = n.bytes_out.saturating_sub(c.prev.bytes_out);
            let inn = n.bytes_in.saturating_sub(c.prev.bytes_in);
            let ops = n.ops.saturating_sub(c.prev.ops);
            c.ios.inc_by(ops);
            c.dir_ios.inc_by(ops);
            c.bytes.inc_by(out + inn);
            self.send_bytes.inc_by(out);
            self.recv_bytes.inc_by(inn);
            c.prev = *n;
        }
        let f = &self.live.families;
        if let Some((direction, h)) = latency.filter(|(_, h)| h.count() > 0) {
            let l = LatLabels {
                workload: "net".into(),
                direction: direction.into(),
            };
            f.latency.get_or_create(&l).add(h);
        }
        f.warmup.set(i64::from(warmup));
        f.fed_at(at_unix_s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_are_added_once_by_direction_and_connection() {
        let live = Live::new("net run");
        let names = [
            NetConnName {
                connection: 0,
                ops_direction: "send",
            },
            NetConnName {
                connection: 1,
                ops_direction: "receive",
            },
        ];
        let mut feed = NetFeed::new(&live, "127.0.0.1:5301", &names, 1);
        let c = |o, i, n| NetConnCounts {
            bytes_out: o,
            bytes_in: i,
            ops: n,
        };
        feed.add(&[c(100, 0, 2), c(0, 50, 5)], None, true, 1.0);
        let mut h = LatencyHistogram::new();
        h.record(1_000_000);
        feed.add(&[c(300, 0, 4), c(0, 80, 9)], Some(("send", &h)), false, 2.0);
        let text = live.render_text();
        let t = "target=\"127.0.0.1:5301\"";
        for want in [
            format!("ioscope_bytes_total{{workload=\"net\",direction=\"send\",{t}}} 300 2000\n"),
            format!("ioscope_bytes_total{{workload=\"net\",direction=\"receive\",{t}}} 80 2000\n"),
            format!("ioscope_ios_total{{workload=\"net\",direction=\"send\",{t}}} 4 2000\n"),
            format!("ioscope_ios_total{{workload=\"net\",direction=\"receive\",{t}}} 9 2000\n"),
            format!("ioscope_connection_bytes_total{{{t},connection=\"1\"}} 80 2000\n"),
            "ioscope_latency_seconds_count{workload=\"net\",direction=\"send\"} 1 2000\n".into(),
            "ioscope_run 1\n".into(),
            "ioscope_runs_planned 1\n".into(),
            "ioscope_warmup 0\n".into(),
        ] {
            assert!(text.contains(&want), "{want}---\n{text}");
        }
    }
}
