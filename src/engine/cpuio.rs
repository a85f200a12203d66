//! The cpuio engine: each "I/O" burns a chunk of CPU time instead of touching storage
//! (fio's cpuio), so a run can load cores beside an I/O workload or measure what a
//! busy host does to it. The stream then idles (its think time, set by the runner
//! from `cpuload`) so that the burn is the asked share of its time.
//!
//! The chunk is measured in the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), not
//! the wall clock: on a contended core the burn takes longer but burns exactly the
//! chunk, so the CPU the run uses is the one asked for (fio spins on the wall clock,
//! which burns less when the core is shared). The operation's latency is the burn's
//! wall time, which shows that contention. `noop` spins; `qsort` sorts windows of a
//! 1 MiB array of pseudo-random integers, re-scrambled each time, until the chunk is
//! spent (fio sorts the whole array once per I/O and adapts its idle time to how long
//! that took; here the chunk is fixed and the idle time with it).

use super::inline::{InlineEngine, PerformIo};
use super::{now_ns, IoRequest};
use crate::plan::engine_opts::{CpuBurn, CpuMode};

/// Integers in the qsort array (1 MiB of i32, as fio's 256 Ki entries).
const QSORT_LEN: usize = 256 * 1024;
/// Integers sorted between two looks at the clock.
const QSORT_WINDOW: usize = 4096;

use crate::clock::thread_cpu_ns;

/// Burns CPU per request.
pub struct CpuIo {
    burn: CpuBurn,
    data: Vec<i32>,
    window: usize,
    rng: crate::rng::Rng,
}

impl CpuIo {
    fn spin(&mut self, until_cpu_ns: u64) {
        while thread_cpu_ns() < until_cpu_ns {
            for _ in 0..256 {
                std::hint::spin_loop();
            }
        }
    }

    fn sort(&mut self, until_cpu_ns: u64) {
        while thread_cpu_ns() < until_cpu_ns {
            let start = self.window * QSORT_WINDOW;
            self.window = (self.window + 1) % (QSORT_LEN / QSORT_WINDOW);
            let w = &mut self.data[start..start + QSORT_WINDOW];
            for v in w.iter_mut() {
                *v = self.rng.next_u64() as i32;
            }
            w.sort_unstable();
            w.sort_unstable_by(|a, b| b.cmp(a));
            std::hint::black_box(&w[0]);
        }
    }
}

impl PerformIo for CpuIo {
    const NAME: &'static str = "cpuio";

    fn perform(&mut self, _req: &IoRequest) -> (i64, u64) {
        let until = thread_cpu_ns() + self.burn.chunk_ns;
        match self.burn.mode {
            CpuMode::Noop => self.spin(until),
            CpuMode::Qsort => self.sort(until),
        }
        (0, now_ns())
    }
}

/// Burns CPU instead of doing I/O.
pub type CpuEngine = InlineEngine<CpuIo>;

impl CpuEngine {
    pub fn new(burn: CpuBurn, capacity: usize) -> Self {
        let data = match burn.mode {
            CpuMode::Qsort => vec![0; QSORT_LEN],
            CpuMode::Noop => Vec::new(),
        };
        InlineEngine::with(
            CpuIo {
                burn,
                data,
                window: 0,
                rng: crate::rng::Rng::new(0x5eed_c0de),
            },
            capacity,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::plan::model::Op;

    #[test]
    fn each_request_burns_its_chunk_of_cpu() {
        for mode in [CpuMode::Noop, CpuMode::Qsort] {
            let burn = CpuBurn {
                load_pct: 50,
                chunk_ns: 20_000_000,
                mode,
            };
            let mut e = CpuEngine::new(burn, 4);
            let before = thread_cpu_ns();
            for tag in 0..3 {
                e.push(IoRequest::plain(
                    Op::Read,
                    0,
                    4096,
                    std::ptr::null_mut(),
                    tag,
                ))
                .unwrap();
            }
            let used = thread_cpu_ns() - before;
            assert!(
                (60_000_000..80_000_000).contains(&used),
                "{mode:?}: {used} ns"
            );
            let mut out = Vec::new();
            e.submit_and_reap(0, None, &mut out).unwrap();
            assert_eq!(out.len(), 3);
            assert!(out.iter().all(|c| c.result == 0));
        }
    }
}
