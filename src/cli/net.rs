//! Flags of `ioscope net serve` and `ioscope net run`, turned into the typed
//! [`NetRunConfig`]/[`ServeConfig`] of `crate::net`. Every value is checked here, so
//! a bad flag is refused (exit 2) before any connection is made, with the flag and
//! the text named.

use clap::{Args, Subcommand};
use std::path::PathBuf;

use crate::app::FlagError;
use crate::net::{Direction, NetOutput, NetRunConfig, RrSize, ServeConfig};
use crate::plan::units;

/// Network throughput and latency, measured like iperf3/netperf.
#[derive(Debug, Args, Clone)]
pub struct NetArgs {
    #[command(subcommand)]
    pub command: NetCommand,
}

#[derive(Debug, Subcommand, Clone)]
pub enum NetCommand {
    /// Serve tests to `ioscope net run` clients until stopped (Ctrl-C).
    Serve(NetServeArgs),
    /// Measure throughput (or request/response latency) to a server.
    Run(Box<NetRunArgs>),
}

#[derive(Debug, Args, Clone)]
pub struct NetServeArgs {
    /// Address and port to listen on (default 127.0.0.1:5301; loopback only unless
    /// you say otherwise).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:5301")]
    pub bind: String,
    /// Serve one test, then exit.
    #[arg(long)]
    pub once: bool,
    /// Pin the server's stream threads to these CPUs, e.g. 0-3 (a client's
    /// --remote-cpus wins).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Log only problems, not every test.
    #[arg(long, short)]
    pub quiet: bool,
    /// The declared command settings `net` takes: `--metrics`.
    #[command(flatten)]
    pub command: super::settings::NetCommandFlags,
}

#[derive(Debug, Args, Clone)]
pub struct NetRunArgs {
    /// The server, ADDR:PORT (port 5301 when left out).
    #[arg(value_name = "ADDR:PORT")]
    pub addr: String,
    /// Parallel TCP connections (each way with --bidir).
    #[arg(long, short = 'P', value_name = "N", default_value = "1")]
    pub streams: String,
    /// Measured time, e.g. 10s.
    #[arg(long, short = 't', value_name = "DUR", default_value = "10s")]
    pub duration: String,
    /// Warm-up, shown but left out of the totals (iperf3's --omit).
    #[arg(long, value_name = "DUR", default_value = "0")]
    pub warmup: String,
    /// Reporting interval.
    #[arg(long, value_name = "DUR", default_value = "1s")]
    pub interval: String,
    /// The server sends, the client receives (iperf3 -R).
    #[arg(long, short = 'R', conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both directions at once, --streams connections each way.
    #[arg(long)]
    pub bidir: bool,
    /// Size of each write and of the read buffer [default: 1m; 128k with --rate,
    /// which paces whole writes]. iperf3's default is 128k; on this project's VM,
    /// 1 MiB writes move loopback TCP at about 1.7× the rate for 0.6× the CPU per
    /// byte (docs/benchmarks.md), with half the cross-CPU wake-ups per byte.
    #[arg(long, value_name = "SIZE")]
    pub bs: Option<String>,
    /// Socket buffer size (SO_SNDBUF and SO_RCVBUF) on both ends, e.g. 4m.
    #[arg(long, value_name = "SIZE")]
    pub window: Option<String>,
    /// TCP maximum segment size (TCP_MAXSEG) of the client's connections.
    #[arg(long, value_name = "BYTES")]
    pub mss: Option<String>,
    /// Disable Nagle's algorithm (TCP_NODELAY); always on with --rr.
    #[arg(long)]
    pub nodelay: bool,
    /// Send with sendfile(2) from an in-memory file instead of write(2): no copy
    /// from user space (iperf3 -Z).
    #[arg(long, short = 'Z')]
    pub zerocopy: bool,
    /// Pin the client's stream threads to these CPUs, e.g. 0-3.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Pin the server's stream threads to these CPUs.
    #[arg(long, value_name = "LIST")]
    pub remote_cpus: Option<String>,
    /// Open loop: total bits per second over all streams, e.g. 900m or 2.5g (decimal
    /// suffixes k, m, g, t); with --rr, total transactions per second. Latency is
    /// measured from each send's intended time.
    #[arg(long, short = 'b', value_name = "RATE")]
    pub rate: Option<String>,
    /// Request/response test (netperf TCP_RR): request and response sizes, e.g. 1,1
    /// or 64,4k.
    #[arg(long, value_name = "REQ,RESP")]
    pub rr: Option<String>,
    /// Give up connecting after this long.
    #[arg(long, value_name = "DUR", default_value = "3s")]
    pub connect_timeout: String,
    /// Write the result JSON here.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write an HTML report here.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,
    /// Write iperf3's JSON layout (`iperf3 -J`) here.
    #[arg(long, value_name = "PATH")]
    pub iperf3_json: Option<PathBuf>,
    /// What stdout carries: text (default) or json (the result only).
    #[arg(long, value_name = "FORMAT")]
    pub output_format: Option<String>,
    /// No interval lines.
    #[arg(long, short)]
    pub quiet: bool,
    /// The declared command settings `net` takes: `--metrics`.
    #[command(flatten)]
    pub command: super::settings::NetCommandFlags,
}

fn bad(flag: &str, text: &str, why: impl std::fmt::Display) -> FlagError {
    FlagError::new(flag, text, why)
}

fn size_u32(flag: &str, text: &str) -> Result<u32, FlagError> {
    let v = units::parse_size(text).map_err(|e| bad(flag, text, e))?;
    u32::try_from(v)
        .ok()
        .filter(|v| *v <= 1 << 30)
        .ok_or_else(|| bad(flag, text, "at most 1 GiB"))
}

fn cpus(flag: &str, text: &Option<String>) -> Result<Option<Vec<usize>>, FlagError> {
    text.as_ref()
        .map(|t| units::parse_cpu_list(t).map_err(|e| bad(flag, t, e)))
        .transpose()
}

/// `--bs` unless given: a closed-loop stream's write (and read) size.
const DEFAULT_BS: &str = "1m";
/// `--bs` unless given, with `--rate`: paced writes are whole writes, and a smaller
/// one keeps the schedule's bursts short (iperf3's size).
const PACED_BS: &str = "128k";

/// A rate with optional decimal suffix: "900m" = 9×10^8.
fn parse_rate(text: &str) -> Result<f64, FlagError> {
    let t = text.trim();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_lowercase()) {
        Some('k') => (&t[..t.len() - 1], 1e3),
        Some('m') => (&t[..t.len() - 1], 1e6),
        Some('g') => (&t[..t.len() - 1], 1e9),
        Some('t') => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    num.parse::<f64>()
        .ok()
        .map(|v| v * mult)
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| {
            bad(
                "--rate",
                text,
                "expected a positive number with an optional k, m, g or t suffix, e.g. 900m",
            )
        })
}

fn parse_rr(text: &str) -> Result<RrSize, FlagError> {
    let (a, b) = text
        .split_once(',')
        .ok_or_else(|| bad("--rr", text, "expected REQ,RESP sizes, e.g. 1,1"))?;
    let req = size_u32("--rr", a.trim())?;
    let resp = size_u32("--rr", b.trim())?;
    if req.max(resp) > 64 << 20 {
        return Err(bad("--rr", text, "sizes up to 64 MiB"));
    }
    Ok(RrSize {
        req_bytes: req,
        resp_bytes: resp,
    })
}

impl NetServeArgs {
    pub fn to_config(&self) -> Result<ServeConfig, FlagError> {
        Ok(ServeConfig {
            bind: self.bind.clone(),
            once: self.once,
            cpus: cpus("--cpus", &self.cpus)?,
            quiet: self.quiet,
            metrics: None,
        })
    }
}

impl NetRunArgs {
    fn direction(&self) -> Direction {
        match (self.bidir, self.reverse) {
            (true, _) => Direction::Bidir,
            (false, true) => Direction::Reverse,
            (false, false) => Direction::Send,
        }
    }

    /// `--bs`, or its default: [`DEFAULT_BS`], [`PACED_BS`] with `--rate`.
    fn bs_bytes(&self) -> Result<u32, FlagError> {
        let text = (self.bs.as_deref()).unwrap_or(match self.rate {
            Some(_) => PACED_BS,
            None => DEFAULT_BS,
        });
        let bytes = size_u32("--bs", text)?;
        if bytes > 64 << 20 {
            return Err(bad("--bs", text, "at most 64 MiB"));
        }
        Ok(bytes)
    }

    pub fn to_config(&self, command: Vec<String>) -> Result<NetRunConfig, FlagError> {
        let dur = |flag: &str, t: &str, zero_ok: bool| {
            if zero_ok {
                units::parse_duration_ns_allow_zero(t)
            } else {
                units::parse_duration_ns(t)
            }
            .map_err(|e| bad(flag, t, e))
        };
        let streams =
            units::parse_count(&self.streams).map_err(|e| bad("--streams", &self.streams, e))?;
        if streams > 1024 {
            return Err(bad("--streams", &self.streams, "at most 1024"));
        }
        let interval_ns = dur("--interval", &self.interval, false)?;
        if interval_ns < 10_000_000 {
            return Err(bad("--interval", &self.interval, "at least 10ms"));
        }
        let bs_bytes = self.bs_bytes()?;
        let rr_text = self.rr.as_deref().unwrap_or_default();
        let rr = self.rr.as_deref().map(parse_rr).transpose()?;
        if rr.is_some() && (self.reverse || self.bidir || self.zerocopy) {
            return Err(bad(
                "--rr",
                rr_text,
                "request/response runs both ways already; leave out --reverse, --bidir and --zerocopy",
            ));
        }
        let json_stdout = match self.output_format.as_deref() {
            None | Some("text") => false,
            Some("json") => true,
            Some(o) => return Err(bad("--output-format", o, "expected text or json")),
        };
        Ok(NetRunConfig {
            addr_text: self.addr.clone(),
            streams: streams as u32,
            duration_ns: dur("--duration", &self.duration, false)?,
            warmup_ns: dur("--warmup", &self.warmup, true)?,
            interval_ns,
            direction: self.direction(),
            bs_bytes,
            window_bytes: self
                .window
                .as_deref()
                .map(|w| size_u32("--window", w))
                .transpose()?,
            mss_bytes: self
                .mss
                .as_deref()
                .map(|m| {
                    units::parse_size(m)
                        .ok()
                        .filter(|v| (88..=65535).contains(v))
                        .map(|v| v as u32)
                        .ok_or_else(|| bad("--mss", m, "expected 88 to 65535 bytes"))
                })
                .transpose()?,
            nodelay: self.nodelay,
            zerocopy: self.zerocopy,
            cpus: cpus("--cpus", &self.cpus)?,
            remote_cpus: cpus("--remote-cpus", &self.remote_cpus)?,
            rate: self.rate.as_deref().map(parse_rate).transpose()?,
            rr,
            connect_timeout_ns: dur("--connect-timeout", &self.connect_timeout, false)?,
            output: NetOutput {
                json: self.json.clone(),
                html: self.html.clone(),
                iperf3_json: self.iperf3_json.clone(),
                json_stdout,
                quiet: self.quiet,
            },
            command,
            metrics: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(subcommand)]
        c: NetCommand,
    }

    /// A command line refused by clap or by the checks after it.
    #[derive(Debug, thiserror::Error)]
    enum CfgError {
        #[error(transparent)]
        Clap(#[from] clap::Error),
        #[error(transparent)]
        Flag(#[from] FlagError),
    }

    fn cfg(args: &[&str]) -> Result<NetRunConfig, CfgError> {
        let mut v = vec!["t", "run", "127.0.0.1:1"];
        v.extend_from_slice(args);
        match T::try_parse_from(v)?.c {
            NetCommand::Run(r) => Ok(r.to_config(vec![])?),
            NetCommand::Serve(_) => unreachable!(),
        }
    }

    #[test]
    fn flags_become_typed_values() {
        let c = cfg(&["--streams", "4", "--rate", "2.5g", "--bs", "64k", "-R"]).unwrap();
        assert_eq!(c.streams, 4);
        assert_eq!(c.rate, Some(2.5e9));
        assert_eq!(c.bs_bytes, 65536);
        assert_eq!(c.direction, Direction::Reverse);
        // Unless given: 1 MiB writes, 128 KiB when paced.
        assert_eq!(cfg(&[]).unwrap().bs_bytes, 1 << 20);
        assert_eq!(cfg(&["--rate", "1g"]).unwrap().bs_bytes, 128 << 10);
        let c = cfg(&["--rr", "1,4k"]).unwrap();
        assert_eq!(
            c.rr,
            Some(RrSize {
                req_bytes: 1,
                resp_bytes: 4096
            })
        );
    }

    #[test]
    fn bad_values_name_the_flag() {
        for (args, flag) in [
            (&["--streams", "0"][..], "--streams '0'"),
            (&["--rate", "fast"][..], "--rate 'fast'"),
            (&["--rr", "1"][..], "--rr '1'"),
            (&["--mss", "10"][..], "--mss '10'"),
            (&["--duration", "1parsec"][..], "--duration '1parsec'"),
            (&["--rr", "1,1", "-R"][..], "--rr '1,1': request/response"),
        ] {
            let e = cfg(args).unwrap_err().to_string();
            assert!(e.contains(flag), "{args:?}: {e}");
        }
    }
}
