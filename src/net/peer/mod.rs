//! Network jobs as fio's `net` engine runs them: each job is one end of a plain
//! socket (TCP, UDP unicast or multicast, unix, vsock), no control connection and no
//! ioscope protocol, so either end can be fio's. A run's workloads are its jobs and
//! their targets the endpoints ([`crate::plan::net_endpoint`]); every listening end
//! is bound before any job starts, so a receiver and a sender in one run (fio's
//! netio.fio) find each other on loopback. Each job has its own thread; the interval
//! loop here reads their counters and the result is an ordinary network run: bytes/s
//! per job and per interval, and per job its messages' latency and lost datagrams.

mod job;
mod report;
mod result;
mod socket;
mod wire;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::NetError;
use crate::plan::net_endpoint::{NetEndpoint, NetProtocol};
use crate::plan::{AccessPattern, Rate, RunSpec, TargetSpec, Workload};
use crate::result::{Interval, RunResult};
use job::{JobCounters, JobPlan, RunControl};

/// Resolves and checks every job of a network run; nothing is opened.
pub fn check(run: &RunSpec, targets: &[TargetSpec]) -> Result<Vec<JobPlan>, NetError> {
    run.workloads
        .iter()
        .map(|w| job_plan(run, w, targets))
        .collect()
}

fn job_plan(run: &RunSpec, w: &Workload, targets: &[TargetSpec]) -> Result<JobPlan, NetError> {
    let bad =
        |what: String| NetError::Input(format!("run '{}', job '{}': {what}", run.name, w.name));
    let t = targets
        .iter()
        .find(|t| t.name == w.target)
        .ok_or_else(|| bad(format!("no target '{}'", w.target)))?;
    let mut endpoint = NetEndpoint::parse(&t.uri).map_err(|e| bad(format!("{}: {e}", t.uri)))?;
    let send = match w.read_pct {
        0 => true,
        100 => false,
        _ => {
            return Err(bad(
                "a network job reads or writes, not both (rw=read or rw=write)".into(),
            ))
        }
    };
    if !w.trim.is_none() {
        return Err(bad("a network job has nothing to trim (discard)".into()));
    }
    if !matches!(w.pattern, AccessPattern::Sequential) {
        return Err(bad(
            "network I/O has no offsets: use a sequential read or write".into(),
        ));
    }
    if w.streams != 1 {
        return Err(bad(format!(
            "{} streams: a network job is one connection (give each end a job of its own)",
            w.streams
        )));
    }
    if !matches!(w.rate, Rate::Max) {
        return Err(bad("a rate limit on a network job is not supported".into()));
    }
    let bs =
        w.bs.single()
            .ok_or_else(|| bad("a network job has one message size (bs)".into()))?;
    if endpoint.protocol.is_datagram() || endpoint.protocol == NetProtocol::Unix {
        // As fio: the reading end of a datagram flow or unix socket is the one that binds.
        if endpoint.listen && send {
            return Err(bad(format!(
                "{}: over {} the receiving end listens; this job writes",
                t.uri,
                endpoint.protocol.name()
            )));
        }
        endpoint.listen = !send;
    }
    if endpoint.protocol.is_datagram() && bs > 65_507 {
        return Err(bad(format!(
            "bs={bs}: a UDP datagram carries at most 65507 bytes"
        )));
    }
    let size_bytes = w.size_bytes.or(t.size_bytes);
    if size_bytes.is_none() && run.duration_ns.is_none() && w.pauses.stop_ns == 0 {
        return Err(bad(
            "neither a size nor a duration: the job would never end".into(),
        ));
    }
    Ok(JobPlan {
        name: w.name.clone(),
        uri: t.uri.clone(),
        endpoint,
        send,
        bs: bs as usize,
        size_bytes: size_bytes.map(|s| s.saturating_mul(run.passes.unwrap_or(1).max(1))),
        start_delay: Duration::from_nanos(w.pauses.start_delay_ns),
        stop_after: (w.pauses.stop_ns > 0).then(|| Duration::from_nanos(w.pauses.stop_ns)),
    })
}

/// The header of the interval lines (the network mode's).
pub fn interval_header() -> String {
    super::report::interval_header(false)
}

/// One interval line.
pub fn interval_line(iv: &Interval) -> String {
    super::report::interval_line(iv, false)
}

/// The totals table printed after the run.
pub fn summary(run: &RunResult) -> String {
    report::totals_table(run)
}

/// What to add to a vsock failure: why it is likely to fail on this kernel.
pub(crate) fn vsock_hint(cid: &str, e: &std::io::Error) -> String {
    if e.raw_os_error() == Some(libc::EAFNOSUPPORT) {
        return " (vsock: this kernel has no AF_VSOCK; load the vsock modules)".into();
    }
    let lacking = matches!(
        e.raw_os_error(),
        Some(libc::ETIMEDOUT) | Some(libc::ENODEV) | Some(libc::EHOSTUNREACH)
    );
    match (cid, lacking) {
        ("1", true) => " (vsock: CID 1 is this machine, reached through the kernel's vsock loopback transport, module vsock_loopback; this kernel has AF_VSOCK but answers as if it had no such transport)".into(),
        ("1", false) => " (vsock: nothing listens on that port at CID 1, this machine)".into(),
        (_, true) => format!(" (vsock: no transport reaches CID {cid} from here: is that VM up?)"),
        (_, false) => format!(" (vsock: nothing listens on that port at CID {cid})"),
    }
}

/// Runs a network run: binds the listening ends, starts every job, reports each
/// interval through `on_interval`, and returns the run's result and warnings.
pub fn execute(
    run: &RunSpec,
    targets: &[TargetSpec],
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<(RunResult, Vec<String>), NetError> {
    let plans = check(run, targets)?;
    let listeners = bind_all(&plans)?;
    let start = Instant::now();
    let deadline = run
        .duration_ns
        .map(|d| start + Duration::from_nanos(d.saturating_add(run.warmup_ns)));
    let ctl = Arc::new(RunControl {
        start,
        stop: AtomicBool::new(false),
        deadline,
        senders_left: AtomicUsize::new(plans.iter().filter(|p| p.send).count()),
        has_senders: plans.iter().any(|p| p.send),
    });
    let counters: Vec<Arc<JobCounters>> = plans.iter().map(|_| Arc::default()).collect();
    let mut handles = Vec::new();
    for ((p, l), c) in plans.iter().zip(listeners).zip(&counters) {
        let (p, ctl, c) = (p.clone(), ctl.clone(), c.clone());
        let h = std::thread::Builder::new()
            .name(format!("net-{}", p.name))
            .spawn(move || job::run(p, l, ctl, c))
            .map_err(|e| NetError::io("starting a job thread", e))?;
        handles.push(h);
    }
    let measured = result::measure(run, &plans, &counters, &ctl, on_interval);
    ctl.stop.store(true, Ordering::Relaxed);
    for h in handles {
        let _ = h.join();
    }
    Ok(result::build(run, &plans, &counters, measured))
}

/// Binds every listening end before any job starts (a sender of the same run may
/// connect at once); a bind that fails names its job.
fn bind_all(plans: &[JobPlan]) -> Result<Vec<Option<socket::Sock>>, NetError> {
    plans
        .iter()
        .map(|p| {
            if !p.endpoint.listen {
                return Ok(None);
            }
            socket::listen(&p.endpoint).map(Some).map_err(|e| {
                let mut op = format!("job '{}': {}: listen", p.name, p.uri);
                if p.endpoint.protocol == NetProtocol::Vsock {
                    op.push_str(&vsock_hint(&p.endpoint.host, &e));
                }
                NetError::io(op, e)
            })
        })
        .collect()
}
