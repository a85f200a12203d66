//! The network mode's feed of the command's live metrics (`--metrics`): which
//! direction a data connection's operations count in on each end, the client's feed
//! at every interval, and the server's sampler.
//!
//! The client adds, at each interval end, the very totals its interval line was made
//! from, so a scraped rate and the interval lines agree. The server has no intervals
//! of its own (the client paces the test), so one thread per test reads the
//! connections' totals every [`SERVER_SAMPLE`] and once more when the test ends;
//! samples carry the time they were read, so a rate over them is exact whatever the
//! sampling's jitter.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use super::measured::Tracked;
use super::protocol::Role;
use super::stream::StreamState;
use crate::metrics::{Live, NetConnCounts, NetConnName, NetFeed};
use crate::stats::histogram::LatencyHistogram;

/// How often the server reads its connections' totals into the registry.
const SERVER_SAMPLE: Duration = Duration::from_secs(1);

/// Where a connection's operations count, seen from the client or the server.
fn ops_direction(role: Role, client: bool) -> &'static str {
    match (role, client) {
        (Role::Rr, _) => "rr",
        (Role::Send, true) | (Role::Recv, false) => "send",
        (Role::Send, false) | (Role::Recv, true) => "receive",
    }
}

fn names(roles: impl Iterator<Item = Role>, client: bool) -> Vec<NetConnName> {
    roles
        .enumerate()
        .map(|(i, role)| NetConnName {
            connection: u32::try_from(i).unwrap_or(u32::MAX),
            ops_direction: ops_direction(role, client),
        })
        .collect()
}

fn counts(st: &StreamState) -> NetConnCounts {
    NetConnCounts {
        bytes_out: st.bytes_out.load(Ordering::Relaxed),
        bytes_in: st.bytes_in.load(Ordering::Relaxed),
        ops: st.ops.load(Ordering::Relaxed),
    }
}

/// The client's series: its connections, in the order they were opened.
pub(super) fn client_feed(
    live: Option<&Live>,
    target: &str,
    streams: &[Tracked],
) -> Option<NetFeed> {
    let names = names(streams.iter().map(|t| t.st.role), true);
    live.map(|l| NetFeed::new(l, target, &names, 1))
}

/// Adds one client interval: each connection's totals as the interval read them
/// (`Tracked::prev_*` once the interval is built), its latency and warm-up flag.
pub(super) fn client_interval(
    feed: &mut NetFeed,
    streams: &[Tracked],
    lat: Option<&LatencyHistogram>,
    rr: bool,
    iv: &crate::result::Interval,
) {
    let now: Vec<NetConnCounts> = streams
        .iter()
        .map(|t| NetConnCounts {
            bytes_out: t.prev_out,
            bytes_in: t.prev_in,
            ops: t.prev_ops,
        })
        .collect();
    let dir = if rr { "rr" } else { "send" };
    feed.add(&now, lat.map(|h| (dir, h)), iv.warmup, iv.unix_s);
}

/// The server's sampler of one test; dropping it takes a last sample and ends it.
pub(super) struct Sampler {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    /// Samples `states` (the test's connections, in the order of their roles and
    /// indexes) into `live` under the client's address `peer`.
    pub(super) fn start(live: &Live, peer: SocketAddr, states: &[Arc<StreamState>]) -> Self {
        let names = names(states.iter().map(|s| s.role), false);
        let mut feed = NetFeed::new(live, &peer.to_string(), &names, 0);
        let states = states.to_vec();
        let (tx, rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("ioscope-net-metrics".into())
            .spawn(move || loop {
                let last = !matches!(
                    rx.recv_timeout(SERVER_SAMPLE),
                    Err(mpsc::RecvTimeoutError::Timeout)
                );
                let now: Vec<NetConnCounts> = states.iter().map(|s| counts(s)).collect();
                feed.add(&now, None, false, crate::clock::unix_s());
                if last {
                    return;
                }
            })
            .ok();
        Sampler {
            stop: Some(tx),
            thread,
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
