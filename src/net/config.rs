//! What a network test is asked to do, as typed values: the CLI layer builds these
//! from flags (and reports bad flags), and the client sends the parts the server
//! needs in its hello. Nothing here parses text or knows about clap.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Port used when an address has none (iperf3 uses 5201; we stay out of its way).
pub const DEFAULT_PORT: u16 = 5301;

/// Which way the payload flows, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The client sends, the server receives (iperf3's default).
    Send,
    /// The server sends (`--reverse`, iperf3 `-R`).
    Reverse,
    /// Both at once, `streams` connections each way (`--bidir`).
    Bidir,
}

/// Request and response sizes of a request/response test (netperf TCP_RR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RrSize {
    pub req_bytes: u32,
    pub resp_bytes: u32,
}

/// Where the client writes its results.
#[derive(Debug, Clone, Default)]
pub struct NetOutput {
    pub json: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub iperf3_json: Option<PathBuf>,
    /// Print the result JSON on stdout (and nothing else there).
    pub json_stdout: bool,
    /// Interval lines off; the totals table stays.
    pub quiet: bool,
}

/// A client test.
#[derive(Debug, Clone)]
pub struct NetRunConfig {
    /// The server address as the user typed it (for messages).
    pub addr_text: String,
    pub streams: u32,
    pub duration_ns: u64,
    pub warmup_ns: u64,
    pub interval_ns: u64,
    pub direction: Direction,
    /// Size of each write (and the read buffer).
    pub bs_bytes: u32,
    /// SO_SNDBUF/SO_RCVBUF on both ends; None leaves the kernel's autotuning.
    pub window_bytes: Option<u32>,
    /// TCP_MAXSEG on the client's data sockets.
    pub mss_bytes: Option<u32>,
    pub nodelay: bool,
    /// Send with sendfile(2) from a memfd instead of write(2) (iperf3 `-Z`).
    pub zerocopy: bool,
    /// CPUs the client's stream threads are pinned to (round robin).
    pub cpus: Option<Vec<usize>>,
    /// CPUs the server's stream threads are pinned to.
    pub remote_cpus: Option<Vec<usize>>,
    /// Open loop: bits per second in all (streaming), or transactions per second in
    /// all (`--rr`); None = as fast as possible.
    pub rate: Option<f64>,
    pub rr: Option<RrSize>,
    /// How long to try to reach the server.
    pub connect_timeout_ns: u64,
    pub output: NetOutput,
    /// The command line, recorded in the result.
    pub command: Vec<String>,
    /// The command's live metrics (`--metrics`), fed every interval.
    pub metrics: Option<crate::metrics::Live>,
}

/// A server.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// ADDR:PORT as given (default 127.0.0.1:5301).
    pub bind: String,
    /// Serve one test, then exit.
    pub once: bool,
    /// CPUs the stream threads are pinned to unless the client asks otherwise.
    pub cpus: Option<Vec<usize>>,
    pub quiet: bool,
    /// The command's live metrics (`--metrics`), sampled during every test.
    pub metrics: Option<crate::metrics::Live>,
}
