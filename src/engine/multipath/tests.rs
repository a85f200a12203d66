//! The multipath engine over fake inner engines whose paths can be stalled, broken
//! or made unreachable from the test: exact path counts per policy, re-issue after a
//! timeout and after a transport error, probing and failback, and errors only when no
//! path is left.

use super::*;
use crate::plan::model::Op;
use std::sync::Mutex;

#[derive(Debug)]
struct FakeState {
    /// Requests are accepted and never answered.
    stalled: bool,
    /// New connections (probes) fail.
    unreachable: bool,
    /// Every request fails with this errno.
    fail_errno: Option<i32>,
    /// Offsets of the requests this path was given, in order.
    log: Vec<u64>,
    connects: u32,
}

type Shared = Arc<Mutex<FakeState>>;

struct Fake {
    st: Shared,
    /// (tag, len) of each request not yet answered.
    queued: Vec<(u64, u32)>,
}

impl Engine for Fake {
    fn name(&self) -> &'static str {
        "fake"
    }
    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        self.st.lock().unwrap().log.push(req.offset);
        self.queued.push((req.tag, req.len));
        Ok(())
    }
    fn submit_and_reap(
        &mut self,
        min: u32,
        timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        let st = self.st.lock().unwrap();
        if st.stalled {
            drop(st);
            if min > 0 {
                let ns = timeout_ns.unwrap_or(1_000_000).min(1_000_000);
                std::thread::sleep(std::time::Duration::from_nanos(ns));
            }
            return Ok(());
        }
        for (tag, len) in self.queued.drain(..) {
            let result = st.fail_errno.map_or(len as i64, |e| -(e as i64));
            out.push(Completion::reaped(tag, result));
        }
        Ok(())
    }
}

fn state() -> Shared {
    Arc::new(Mutex::new(FakeState {
        stalled: false,
        unreachable: false,
        fail_errno: None,
        log: Vec::new(),
        connects: 0,
    }))
}

/// A fresh fake connection to the path whose state is `st`.
fn fake(st: &Shared) -> InnerEngine {
    Box::new(Fake {
        st: st.clone(),
        queued: Vec::new(),
    })
}

/// rr:1 with immediate failback and the given deadline and probe interval.
fn rr1(timeout_ns: u64, retry_ns: u64) -> MultipathSettings {
    MultipathSettings {
        policy: PathPolicy::RoundRobin { n: 1 },
        failback: Failback::Immediate,
        timeout_ns,
        retry_ns,
    }
}

fn engine(policy: PathPolicy, n: usize, timeout_ns: u64) -> (MultipathEngine, Vec<Shared>) {
    let states: Vec<Shared> = (0..n).map(|_| state()).collect();
    let s2 = states.clone();
    let connect: Connect = Arc::new(move |i, _limit_ns| {
        let mut st = s2[i].lock().unwrap();
        if st.unreachable {
            return Err(EngineError::Setup {
                engine: "fake",
                source: std::io::Error::other("connection refused"),
            });
        }
        st.connects += 1;
        Ok(Box::new(Fake {
            st: s2[i].clone(),
            queued: Vec::new(),
        }) as InnerEngine)
    });
    let settings = MultipathSettings {
        policy,
        failback: Failback::Immediate,
        timeout_ns,
        retry_ns: 20_000_000,
    };
    (
        MultipathEngine::new(n, 64, settings, connect).unwrap(),
        states,
    )
}

fn req(i: u64, op: Op) -> IoRequest {
    IoRequest::plain(op, i * 4096, 4096, std::ptr::null_mut(), i)
}

/// Runs `n` requests one at a time; returns their completions.
fn run_qd1(e: &mut MultipathEngine, from: u64, n: u64) -> Vec<Completion> {
    let mut out = Vec::new();
    for i in from..from + n {
        e.push(req(i, Op::Read)).unwrap();
        let before = out.len();
        while out.len() == before {
            e.submit_and_reap(1, Some(2_000_000_000), &mut out).unwrap();
        }
    }
    out
}

fn samples(e: &mut MultipathEngine) -> Vec<PathSample> {
    let mut s = Vec::new();
    Engine::take_path_samples(e, &mut s);
    s
}

fn log_of(st: &Shared) -> Vec<u64> {
    st.lock().unwrap().log.clone()
}

#[test]
fn rr1_alternates_exactly() {
    let (mut e, st) = engine(PathPolicy::RoundRobin { n: 1 }, 2, 5_000_000_000);
    let done = run_qd1(&mut e, 0, 1000);
    assert!(done.iter().all(|c| c.result == 4096));
    let s = samples(&mut e);
    assert_eq!((s[0].counts.ios, s[1].counts.ios), (500, 500));
    assert_eq!(s[0].counts.bytes, 500 * 4096);
    assert!(log_of(&st[0]).iter().all(|o| (o / 4096) % 2 == 0));
}

#[test]
fn rr1000_moves_in_blocks_of_1000() {
    let (mut e, st) = engine(PathPolicy::RoundRobin { n: 1000 }, 2, 5_000_000_000);
    run_qd1(&mut e, 0, 4000);
    let l0: Vec<u64> = log_of(&st[0]).iter().map(|o| o / 4096).collect();
    let want: Vec<u64> = (0..1000).chain(2000..3000).collect();
    assert_eq!(l0, want);
    assert_eq!(log_of(&st[1]).len(), 2000);
}

#[test]
fn failover_uses_path_0_only() {
    let (mut e, st) = engine(PathPolicy::Failover, 2, 5_000_000_000);
    run_qd1(&mut e, 0, 500);
    let s = samples(&mut e);
    assert_eq!((s[0].counts.ios, s[1].counts.ios), (500, 0));
    assert_eq!(
        (s[0].state, s[1].state),
        (PathState::Up, PathState::Standby)
    );
    assert!(log_of(&st[1]).is_empty());
}

#[test]
fn queue_prefers_the_idle_path() {
    let (mut e, st) = engine(PathPolicy::Queue, 2, 5_000_000_000);
    st[0].lock().unwrap().stalled = true;
    // The first request goes to path 0 (both idle) and stays there; every later one
    // finds path 1 idle and path 0 busy.
    e.push(req(0, Op::Read)).unwrap();
    let done = run_qd1(&mut e, 1, 20);
    assert_eq!(done.len(), 20);
    assert_eq!(log_of(&st[0]), [0]);
    assert_eq!(log_of(&st[1]).len(), 20);
}

#[test]
fn a_stalled_path_times_out_and_its_io_moves_unseen() {
    let (mut e, st) = engine(PathPolicy::RoundRobin { n: 1 }, 2, 100_000_000);
    st[1].lock().unwrap().stalled = true;
    st[1].lock().unwrap().unreachable = true;
    e.push(req(0, Op::Read)).unwrap();
    e.push(req(1, Op::Write)).unwrap();
    let t0 = crate::clock::now_ns();
    let mut out = Vec::new();
    while out.len() < 2 {
        e.submit_and_reap(2, Some(2_000_000_000), &mut out).unwrap();
    }
    let waited_ms = (crate::clock::now_ns() - t0) / 1_000_000;
    assert!(out.iter().all(|c| c.result == 4096), "{out:?}");
    // The deadline is 100 ms; the upper bound only says "not the 2 s reap limit", with
    // room for a loaded machine's scheduling delays.
    assert!((100..1900).contains(&waited_ms), "{waited_ms} ms");
    assert_eq!(e.rewrites_after_timeout, 1);
    let mut ev = Vec::new();
    e.take_events(&mut ev);
    let kinds: Vec<(u32, &str)> = ev.iter().map(|x| (x.conn, x.kind.name())).collect();
    assert_eq!(kinds, [(1, "timeout"), (1, "down"), (1, "reissue")]);
    assert!(
        ev[2].detail.contains("1 writes may land twice"),
        "{}",
        ev[2].detail
    );
    // While path 1 is down everything goes to path 0.
    run_qd1(&mut e, 10, 10);
    let s = samples(&mut e);
    assert_eq!(s[1].state, PathState::Down);
    assert_eq!((s[0].counts.ios, s[1].counts.ios), (12, 0));
    assert_eq!(s[1].counts.reissued, 1);
    // The server answers again: a probe brings the path back and rr uses it.
    {
        let mut s1 = st[1].lock().unwrap();
        s1.stalled = false;
        s1.unreachable = false;
    }
    // The probe runs on its own thread: poll for its answer rather than trusting a
    // fixed sleep, which a loaded machine can outlast.
    let deadline = crate::clock::now_ns() + 5_000_000_000;
    loop {
        std::thread::sleep(std::time::Duration::from_millis(30));
        e.submit_and_reap(0, Some(0), &mut Vec::new()).unwrap();
        e.take_events(&mut ev);
        if ev.last().map(|x| (x.conn, x.kind)) == Some((1, EngineEventKind::Up)) {
            break;
        }
        assert!(
            crate::clock::now_ns() < deadline,
            "path 1 never came back: {ev:?}"
        );
    }
    run_qd1(&mut e, 100, 10);
    let s = samples(&mut e);
    assert_eq!(s[1].state, PathState::Up);
    assert!(s[1].counts.ios >= 4, "{:?}", s[1].counts);
}

#[test]
fn a_transport_error_moves_the_io_and_a_target_error_does_not() {
    let (mut e, st) = engine(PathPolicy::RoundRobin { n: 1 }, 2, 5_000_000_000);
    st[0].lock().unwrap().fail_errno = Some(libc::ECONNRESET);
    st[0].lock().unwrap().unreachable = true;
    let done = run_qd1(&mut e, 0, 4);
    assert!(done.iter().all(|c| c.result == 4096), "{done:?}");
    assert_eq!(log_of(&st[1]).len(), 4);
    // A medium error is the storage's answer on every path: it reaches the workload.
    st[1].lock().unwrap().fail_errno = Some(libc::EIO);
    let done = run_qd1(&mut e, 10, 1);
    assert_eq!(done[0].result, -(libc::EIO as i64));
}

#[test]
fn errors_reach_the_workload_only_when_no_path_is_left() {
    let (mut e, st) = engine(PathPolicy::RoundRobin { n: 1 }, 2, 5_000_000_000);
    for s in &st {
        let mut s = s.lock().unwrap();
        s.fail_errno = Some(libc::ESHUTDOWN);
        s.unreachable = true;
    }
    let done = run_qd1(&mut e, 0, 3);
    assert!(
        done.iter().all(|c| c.result == -(libc::EIO as i64)),
        "{done:?}"
    );
    let mut ev = Vec::new();
    e.take_events(&mut ev);
    assert_eq!(
        ev.iter()
            .filter(|x| x.kind == EngineEventKind::Down)
            .count(),
        2
    );
}

#[test]
fn a_path_unreachable_at_start_starts_down_and_joins_later() {
    let states: Vec<Shared> = (0..2).map(|_| state()).collect();
    states[1].lock().unwrap().unreachable = true;
    let s2 = states.clone();
    let connect: Connect = Arc::new(move |i, _limit_ns| {
        if s2[i].lock().unwrap().unreachable {
            return Err(EngineError::Setup {
                engine: "fake",
                source: std::io::Error::other("refused"),
            });
        }
        Ok(fake(&s2[i]))
    });
    let mut e = MultipathEngine::new(2, 8, rr1(1_000_000_000, 10_000_000), connect).unwrap();
    run_qd1(&mut e, 0, 4);
    assert_eq!(log_of(&states[0]).len(), 4);
    states[1].lock().unwrap().unreachable = false;
    // The probe is due after the retry interval, starts on a reap and delivers its
    // connection (from its own thread) to a later one: reaped until path 1 is up,
    // not for a fixed time, which a loaded machine can outlast.
    let t0 = std::time::Instant::now();
    while !e.paths[1].is_up() {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(5),
            "path 1 never joined"
        );
        e.submit_and_reap(0, Some(1_000_000), &mut Vec::new())
            .unwrap();
    }
    run_qd1(&mut e, 10, 4);
    assert_eq!(log_of(&states[1]).len(), 2);
}

// Regression: a probe that had not answered within the connection limit was
// abandoned and a new one started, so a server stalled for a minute collected one
// blocked probe thread per limit and worker.
#[test]
fn a_hanging_probe_is_waited_for_not_multiplied() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let states: Vec<Shared> = (0..2).map(|_| state()).collect();
    let hang = Arc::new(AtomicBool::new(false));
    let (live, peak, attempts) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let (s2, h2, l2, p2, a2) = (
        states.clone(),
        hang.clone(),
        live.clone(),
        peak.clone(),
        attempts.clone(),
    );
    let connect: Connect = Arc::new(move |i, _limit_ns| {
        if i == 1 && h2.load(Ordering::SeqCst) {
            // Like a login to a stalled iSCSI portal: no bound, ends when released.
            a2.fetch_add(1, Ordering::SeqCst);
            let now = l2.fetch_add(1, Ordering::SeqCst) + 1;
            p2.fetch_max(now, Ordering::SeqCst);
            while h2.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            l2.fetch_sub(1, Ordering::SeqCst);
        }
        Ok(fake(&s2[i]))
    });
    let mut e = MultipathEngine::new(2, 8, rr1(20_000_000, 5_000_000), connect).unwrap();
    states[1].lock().unwrap().stalled = true;
    hang.store(true, Ordering::SeqCst);
    e.push(req(0, Op::Read)).unwrap();
    e.push(req(1, Op::Read)).unwrap();
    // 15 connection limits (20 ms each) with path 1 down and its probe hanging.
    let t0 = std::time::Instant::now();
    let mut out = Vec::new();
    while t0.elapsed() < std::time::Duration::from_millis(300) {
        e.submit_and_reap(0, Some(5_000_000), &mut out).unwrap();
    }
    assert_eq!(out.len(), 2, "both reads answered on path 0: {out:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 1, "probes started");
    assert_eq!(peak.load(Ordering::SeqCst), 1, "probe threads at once");
    // Released, the one probe delivers its connection and the path is back.
    states[1].lock().unwrap().stalled = false;
    hang.store(false, Ordering::SeqCst);
    let t1 = std::time::Instant::now();
    while !e.paths[1].is_up() && t1.elapsed() < std::time::Duration::from_secs(2) {
        e.submit_and_reap(0, Some(5_000_000), &mut out).unwrap();
    }
    assert!(e.paths[1].is_up(), "path 1 did not come back");
    assert_eq!(live.load(Ordering::SeqCst), 0);
}

// Regression: the deadline check ran before anything was read, so a worker that
// had not been scheduled for longer than the deadline (a loaded machine) found
// every path late with the answers waiting unread, took all of them down and
// failed the workload's I/O with ETIMEDOUT.
#[test]
fn answers_waiting_unread_are_not_late() {
    let (mut e, st) = engine(PathPolicy::RoundRobin { n: 1 }, 2, 20_000_000);
    e.push(req(0, Op::Read)).unwrap();
    e.push(req(1, Op::Read)).unwrap();
    // The worker is away for 2.5 deadlines; both answers are there when it returns.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let mut out = Vec::new();
    while out.len() < 2 {
        e.submit_and_reap(2, Some(1_000_000_000), &mut out).unwrap();
    }
    assert!(out.iter().all(|c| c.result == 4096), "{out:?}");
    let mut ev = Vec::new();
    e.take_events(&mut ev);
    assert!(ev.is_empty(), "{ev:?}");
    assert_eq!((log_of(&st[0]).len(), log_of(&st[1]).len()), (1, 1));
}
