//! What `ioscope net run` measured, as the client collected it: the streams it
//! tracked between intervals and everything the result builder (`outcome`) and the
//! iperf3 writer (`iperf3_json`) read.

use std::net::SocketAddr;
use std::sync::Arc;

use super::config::NetRunConfig;
use super::env::NetEnv;
use super::protocol::{self, ServerStream};
use super::stream::StreamState;
use super::tcp_info::TcpSample;
use crate::result::{EndReason, Interval};
use crate::stats::cpu::CpuSample;
use crate::stats::histogram::LatencyHistogram;

/// One stream as the client tracks it between intervals.
pub(super) struct Tracked {
    pub st: Arc<StreamState>,
    pub(super) prev_out: u64,
    pub(super) prev_in: u64,
    pub(super) prev_ops: u64,
    pub(super) prev_retrans: u64,
    /// Counters at the warm-up mark.
    pub mark_out: u64,
    pub mark_in: u64,
    pub mark_ops: u64,
    /// Latency over the measured intervals.
    pub hist: LatencyHistogram,
    /// The last TCP_INFO sample.
    pub tcp: TcpSample,
}

/// Everything measured, for the result builder and the iperf3 writer.
pub(super) struct Measured {
    pub cfg: NetRunConfig,
    pub addr: SocketAddr,
    pub cookie: String,
    pub local_addrs: Vec<(String, String)>,
    pub streams: Vec<Tracked>,
    pub intervals: Vec<Interval>,
    pub start_ns: u64,
    pub mark_ns: u64,
    pub end_ns: u64,
    pub cpu_mark: CpuSample,
    pub cpu_end: CpuSample,
    pub end_reason: EndReason,
    pub errors: Vec<String>,
    pub server: Option<(Vec<ServerStream>, protocol::CpuTimes)>,
    pub local_env: NetEnv,
    pub remote_env: Option<NetEnv>,
    pub started_unix_s: f64,
}
