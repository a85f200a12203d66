//! The sim engine: drives `sim:` targets, whose device model lives in
//! `crate::target::sim`. Each request is scheduled on its target's model when pushed.
//!
//! Each [`SimEngine`] keeps its own in-flight requests in a min-heap by completion time
//! and hands them back once the clock has reached their completion time `d`, sleeping
//! for long waits and spinning for the last ~200 µs so completions are on time within
//! microseconds (on virtual time it parks until the simulation reaches `d`). Every
//! completion carries `done_ns = d`, so the latency ioscope records is the model's own.

use super::{Completion, Engine, EngineError, IoRequest, Targets};
use crate::clock::{self, now_ns};
use crate::target::Backing;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Waits shorter than this are spun (re-reading the clock) rather than slept, because
/// a thread sleep can overshoot by tens of microseconds.
const SPIN_NS: u64 = 200_000;

/// Drives `sim:` targets: each request is scheduled on its target's model when pushed
/// and handed back when the clock reaches its completion time.
pub struct SimEngine {
    targets: Targets,
    /// In flight, by completion time: (done_ns, tag, result).
    inflight: BinaryHeap<Reverse<(u64, u64, i64)>>,
    /// With [`SimEngine::waiting_by_fd`]: a timerfd armed at the next completion,
    /// so the worker waits in poll(2) as it would on a socket.
    timer: Option<std::os::fd::OwnedFd>,
}

impl SimEngine {
    pub fn new(targets: &Targets, capacity: usize) -> Self {
        SimEngine {
            targets: targets.clone(),
            inflight: BinaryHeap::with_capacity(capacity),
            timer: None,
        }
    }

    /// A sim engine the worker waits on by file descriptor (a timerfd on
    /// CLOCK_MONOTONIC armed at the next completion), exercising the readiness path
    /// network engines use. Real time only.
    pub fn waiting_by_fd(targets: &Targets, capacity: usize) -> std::io::Result<Self> {
        use std::os::fd::FromRawFd;
        // SAFETY: timerfd_create has no memory arguments; the result is checked.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut e = SimEngine::new(targets, capacity);
        // SAFETY: `fd` is a fresh descriptor this engine now owns alone.
        e.timer = Some(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) });
        Ok(e)
    }

    /// Requests queued and not yet returned.
    pub fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    /// Moves every request done by `now` to `out`; returns how many.
    fn reap_ready(&mut self, now: u64, out: &mut Vec<Completion>) -> u32 {
        let mut n = 0;
        while let Some(&Reverse((d, tag, result))) = self.inflight.peek() {
            if d > now {
                break;
            }
            self.inflight.pop();
            out.push(Completion {
                tag,
                result,
                done_ns: d,
            });
            n += 1;
        }
        n
    }
}

/// Returns once the clock reads at least `t`: sleeps while far off, spins near it.
/// On virtual time, parks until the simulation gets there.
fn wait_until(t: u64) {
    if clock::is_virtual() {
        clock::sleep_until(t);
        return;
    }
    loop {
        let now = now_ns();
        if now >= t {
            return;
        }
        let left = t - now;
        if left > SPIN_NS {
            std::thread::sleep(std::time::Duration::from_nanos(left - SPIN_NS));
        } else {
            std::hint::spin_loop();
        }
    }
}

impl Engine for SimEngine {
    fn name(&self) -> &'static str {
        "sim"
    }

    /// A simulated request can simply be forgotten: the model keeps the device busy
    /// as scheduled (as a real device would), but the completion never comes.
    fn abandon(&mut self, tag: u64) -> bool {
        self.inflight.retain(|Reverse((_, t, _))| *t != tag);
        true
    }

    fn poll_fds(&mut self, out: &mut Vec<libc::pollfd>) {
        use std::os::fd::AsRawFd;
        let (Some(timer), Some(Reverse((next, _, _)))) = (&self.timer, self.inflight.peek()) else {
            return;
        };
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (next / 1_000_000_000) as libc::time_t,
                // A zero it_value would disarm the timer: 1 ns is as good as due.
                tv_nsec: ((next % 1_000_000_000).max(1)) as libc::c_long,
            },
        };
        // SAFETY: valid descriptor and itimerspec; the old value is not wanted.
        unsafe {
            libc::timerfd_settime(
                timer.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
        out.push(super::wait::pollfd(timer.as_raw_fd(), libc::POLLIN));
    }

    fn on_ready(&mut self, fds: &[libc::pollfd]) -> Result<(), EngineError> {
        use std::os::fd::AsRawFd;
        if let Some(timer) = &self.timer {
            if fds
                .iter()
                .any(|p| p.fd == timer.as_raw_fd() && p.revents & libc::POLLIN != 0)
            {
                let mut expirations = 0u64;
                // SAFETY: reads 8 bytes into a u64; the descriptor is non-blocking.
                unsafe {
                    libc::read(
                        timer.as_raw_fd(),
                        &mut expirations as *mut u64 as *mut libc::c_void,
                        8,
                    )
                };
            }
        }
        Ok(())
    }

    fn push(&mut self, req: IoRequest) -> Result<(), EngineError> {
        let t = &self.targets[req.target as usize];
        let entry = match &t.backing {
            Backing::Sim(dev) if req.offset + req.len as u64 <= t.size_bytes => {
                // No data is kept: a read leaves the buffer as it is, a write goes nowhere.
                let s = dev.schedule_now();
                let result = if s.failed {
                    -(libc::EIO as i64)
                } else {
                    req.len as i64
                };
                (s.done_ns, req.tag, result)
            }
            _ => (now_ns(), req.tag, -(libc::EINVAL as i64)),
        };
        self.inflight.push(Reverse(entry));
        Ok(())
    }

    fn submit_and_reap(
        &mut self,
        min_complete: u32,
        timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        let start = now_ns();
        let deadline = super::wait::deadline_ns(timeout_ns);
        let mut got = self.reap_ready(start, out);
        while got < min_complete {
            let Some(&Reverse((next, _, _))) = self.inflight.peek() else {
                // Nothing more can complete.
                break;
            };
            wait_until(next.min(deadline));
            let now = now_ns();
            got += self.reap_ready(now, out);
            if now >= deadline {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::model::{Op, SimSpec};
    use crate::target::sim::{parse_spec, SimDevice};
    use crate::target::OpenTarget;
    use std::sync::{Arc, Mutex};

    fn spec(q: &str) -> SimSpec {
        parse_spec(q).unwrap_or_else(|e| panic!("{q}: {e}"))
    }

    /// Tests that wait on the real clock run one at a time: on a small machine,
    /// several spinning at once would starve each other and time out of order.
    static REAL_TIME: Mutex<()> = Mutex::new(());

    fn real_time() -> std::sync::MutexGuard<'static, ()> {
        REAL_TIME.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn sim_targets(q: &str) -> Targets {
        let s = spec(q);
        Arc::new(vec![Arc::new(OpenTarget {
            name: "t0".into(),
            uri: format!("sim:{q}"),
            size_bytes: s.size_bytes,
            backing: Backing::Sim(SimDevice::new(s)),
            direct: false,
            align_bytes: 1,
            multipath: None,
        })])
    }

    fn device(t: &Targets) -> &SimDevice {
        match &t[0].backing {
            Backing::Sim(d) => d,
            _ => unreachable!(),
        }
    }

    fn req(tag: u64, offset: u64) -> IoRequest {
        IoRequest::plain(Op::Read, offset, 4096, std::ptr::null_mut(), tag)
    }

    /// Pushes `n` requests at once and reaps them all; returns completions in order
    /// and the clock after each reap call, checking none came back early.
    fn push_and_reap_all(e: &mut SimEngine, n: u64) -> Vec<Completion> {
        for tag in 0..n {
            e.push(req(tag, tag * 4096 % (1 << 20))).unwrap();
        }
        let mut out = Vec::new();
        while out.len() < n as usize {
            let before = out.len();
            e.submit_and_reap(1, None, &mut out).unwrap();
            let now = now_ns();
            for c in &out[before..] {
                assert!(c.done_ns <= now, "completion returned before its time");
            }
        }
        assert_eq!(e.in_flight(), 0);
        out
    }

    #[test]
    fn sim_engine_single_server_spacing_exact() {
        let _serial = real_time();
        let t = sim_targets("1g?service=100us");
        let mut e = SimEngine::new(&t, 1000);
        let t0 = now_ns();
        let out = push_and_reap_all(&mut e, 1000);
        let elapsed = now_ns() - t0;
        for w in out.windows(2) {
            assert_eq!(w[1].done_ns - w[0].done_ns, 100_000);
            assert_eq!(w[1].tag, w[0].tag + 1, "FIFO order");
        }
        assert!(out.iter().all(|c| c.result == 4096));
        // 1000 × 100 µs = 100 ms of real time, give or take scheduling.
        assert!(
            (100_000_000..500_000_000).contains(&elapsed),
            "{elapsed} ns"
        );
    }

    #[test]
    fn sim_engine_four_servers_four_times_throughput() {
        let _serial = real_time();
        let t = sim_targets("1g?service=100us&servers=4");
        let mut e = SimEngine::new(&t, 1000);
        let out = push_and_reap_all(&mut e, 1000);
        let first_start = out[0].done_ns - 100_000;
        let span = out.last().unwrap().done_ns - first_start;
        // 250 rounds of 100 µs, plus the few ns between the first four arrivals.
        assert!((25_000_000..25_100_000).contains(&span), "span {span} ns");
        // Each server's completions are exactly 100 µs apart.
        for w in out.windows(5) {
            assert_eq!(w[4].done_ns - w[0].done_ns, 100_000);
        }
    }

    #[test]
    fn sim_engine_respects_stall_windows() {
        let _serial = real_time();
        let t = sim_targets("1g?service=200us&stall=5ms@20ms");
        let dev = device(&t);
        let mut e = SimEngine::new(&t, 200);
        let out = push_and_reap_all(&mut e, 200);
        for c in &out {
            let start = c.done_ns - 200_000;
            assert!(!dev.in_stall(start), "a request started inside a stall");
        }
        // 200 × 200 µs = 40 ms of service over 15 ms of open time per 20 ms period:
        // the last completion lands in the third period.
        let last = out.last().unwrap().done_ns - dev.origin_ns();
        assert!((45_000_000..60_000_000).contains(&last), "{last}");
    }

    #[test]
    fn sim_engine_error_rate() {
        let _serial = real_time();
        let t = sim_targets("1g?service=1us&servers=64&error_rate=0.05&seed=11");
        let mut e = SimEngine::new(&t, 10_000);
        let out = push_and_reap_all(&mut e, 10_000);
        let eio = out
            .iter()
            .filter(|c| c.result == -(libc::EIO as i64))
            .count();
        let ok = out.iter().filter(|c| c.result == 4096).count();
        assert_eq!(eio + ok, 10_000);
        // Binomial(10k, 0.05): sd 22; allow 4 sd.
        assert!((412..=588).contains(&eio), "{eio} errors");
    }

    #[test]
    fn sim_engine_out_of_range_is_einval() {
        let t = sim_targets("1m");
        let mut e = SimEngine::new(&t, 1);
        e.push(req(7, (1 << 20) - 100)).unwrap();
        let mut out = Vec::new();
        e.submit_and_reap(1, None, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].tag, 7);
        assert_eq!(out[0].result, -(libc::EINVAL as i64));
    }

    #[test]
    fn sim_engine_timeout_and_min_zero() {
        let _serial = real_time();
        // A 1 s service time, so that neither reap below can see the completion
        // however long a loaded host keeps this thread off the CPU (with 50 ms, a
        // preemption between push and reap once made the completion due already).
        let t = sim_targets("1g?service=1s");
        let mut e = SimEngine::new(&t, 1);
        e.push(req(1, 0)).unwrap();
        let mut out = Vec::new();
        e.submit_and_reap(0, None, &mut out).unwrap();
        assert!(out.is_empty());
        let t0 = now_ns();
        e.submit_and_reap(1, Some(5_000_000), &mut out).unwrap();
        let waited = now_ns() - t0;
        assert!(out.is_empty());
        // At least the timeout; at most half the service time, which a wait for the
        // completion instead of the timeout could not be (allows 495 ms of delay).
        assert!((5_000_000..500_000_000).contains(&waited), "{waited}");
        e.submit_and_reap(1, None, &mut out).unwrap();
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn sim_engine_completions_are_on_time() {
        let _serial = real_time();
        // Closed loop at QD 1: how late after the model's completion time does the
        // engine hand a request back? Spinning keeps it to microseconds.
        let t = sim_targets("1g?service=50us");
        let mut e = SimEngine::new(&t, 1);
        let mut late = Vec::new();
        let mut out = Vec::new();
        for tag in 0..200 {
            e.push(req(tag, 0)).unwrap();
            out.clear();
            e.submit_and_reap(1, None, &mut out).unwrap();
            late.push(now_ns() - out[0].done_ns);
        }
        late.sort_unstable();
        assert!(late[100] < 50_000, "median lateness {} ns", late[100]);
    }

    #[test]
    fn sim_engine_abandon_forgets_the_request() {
        let t = sim_targets("1g?service=1ms");
        let mut e = SimEngine::new(&t, 2);
        e.push(req(0, 0)).unwrap();
        e.push(req(1, 4096)).unwrap();
        assert!(e.abandon(0));
        let mut out = Vec::new();
        e.submit_and_reap(1, None, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].tag, 1);
        assert_eq!(e.in_flight(), 0);
    }

    // Readiness by file descriptor: the worker waits in poll(2) on the engine's
    // descriptors, then reaps without waiting.
    #[test]
    fn sim_engine_waits_by_fd() {
        let _serial = real_time();
        let t = sim_targets("1g?service=2ms");
        let mut e = SimEngine::waiting_by_fd(&t, 4).unwrap();
        let mut fds = Vec::new();
        e.poll_fds(&mut fds);
        assert!(fds.is_empty(), "nothing in flight, nothing to wait on");
        let t0 = now_ns();
        e.push(req(5, 0)).unwrap();
        let mut out = Vec::new();
        e.submit_and_reap(0, Some(0), &mut out).unwrap();
        assert!(out.is_empty(), "not due yet");
        e.poll_fds(&mut fds);
        assert_eq!(fds.len(), 1);
        let ts = libc::timespec {
            tv_sec: 1,
            tv_nsec: 0,
        };
        // SAFETY: one valid pollfd; `ts` outlives the call.
        let n = unsafe { libc::ppoll(fds.as_mut_ptr(), 1, &ts, std::ptr::null()) };
        assert_eq!(n, 1, "the timerfd became ready");
        e.on_ready(&fds).unwrap();
        e.submit_and_reap(0, Some(0), &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].tag, 5);
        let waited = now_ns() - t0;
        assert!((2_000_000..500_000_000).contains(&waited), "{waited} ns");
    }
}
