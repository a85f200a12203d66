//! CPU accounting: ioscope's own user and system time (getrusage) and the whole
//! system's busy share (/proc/stat), sampled at interval ends. Percentages are of all
//! online CPUs, so 100 % means every CPU was busy.

use crate::result::Cpu;

/// A point-in-time CPU reading.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuSample {
    pub self_user_ns: u64,
    pub self_sys_ns: u64,
    /// Jiffies busy and total, summed over all CPUs, from /proc/stat.
    pub sys_busy_ticks: u64,
    pub sys_total_ticks: u64,
    pub at_ns: u64,
}

/// CPUs online, as the percentages' denominator.
pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        n as usize
    } else {
        1
    }
}

impl CpuSample {
    pub fn now() -> Self {
        // SAFETY: getrusage fills the zeroed struct we pass.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
        let (busy, total) = proc_stat_ticks().unwrap_or((0, 0));
        CpuSample {
            self_user_ns: tv(ru.ru_utime),
            self_sys_ns: tv(ru.ru_stime),
            sys_busy_ticks: busy,
            sys_total_ticks: total,
            at_ns: crate::clock::now_ns(),
        }
    }

    /// CPU use between `earlier` and `self`; `ios` for the per-I/O cost.
    pub fn since(&self, earlier: &CpuSample, ios: u64) -> Cpu {
        let wall = self.at_ns.saturating_sub(earlier.at_ns).max(1) as f64;
        let online = online_cpus();
        let cpus = online as f64;
        let user = self.self_user_ns.saturating_sub(earlier.self_user_ns) as f64;
        let sys = self.self_sys_ns.saturating_sub(earlier.self_sys_ns) as f64;
        let busy = self.sys_busy_ticks.saturating_sub(earlier.sys_busy_ticks) as f64;
        let total = self.sys_total_ticks.saturating_sub(earlier.sys_total_ticks) as f64;
        Cpu {
            user_pct: 100.0 * user / wall / cpus,
            sys_pct: 100.0 * sys / wall / cpus,
            system_pct: if total > 0.0 {
                100.0 * busy / total
            } else {
                0.0
            },
            cpu_us_per_io: if ios > 0 {
                (user + sys) / 1000.0 / ios as f64
            } else {
                0.0
            },
            online_cpus: Some(online as u32),
        }
    }
}

/// (busy, total) jiffies over all CPUs from the first line of /proc/stat.
fn proc_stat_ticks() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/stat").ok()?;
    let line = s.lines().next()?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() < 4 {
        return None;
    }
    let total: u64 = v.iter().take(8).sum();
    let idle = v[3] + v.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_the_cpu_count_it_divides_by() {
        let a = CpuSample {
            at_ns: 0,
            ..Default::default()
        };
        // One CPU-second of user time over one second of wall time.
        let b = CpuSample {
            self_user_ns: 1_000_000_000,
            at_ns: 1_000_000_000,
            ..Default::default()
        };
        let c = b.since(&a, 1000);
        let n = online_cpus();
        assert_eq!(c.online_cpus, Some(n as u32));
        // % of all CPUs × CPUs = % of one CPU.
        assert!((c.user_pct * n as f64 - 100.0).abs() < 1e-9);
        assert!((c.cpu_us_per_io - 1000.0).abs() < 1e-9);
    }
}
