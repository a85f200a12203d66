//! Settings that belong to one engine only: which stat call the stat engines time,
//! and how the cpuio engine burns CPU. They sit beside the run's engine in the plan
//! (fio keeps them as engine options of a job: `stat_type`, `cpuload`, `cpuchunks`,
//! `cpumode`), and each is refused with any other engine. A workload with an engine
//! of its own may carry its own options too (`WorkloadOverrides::engine_opts`).

use super::model::EngineKind;
use serde::{Deserialize, Serialize};

/// Engine-specific settings of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineOptions {
    /// The call `filestat`/`dirstat` time.
    #[serde(default, skip_serializing_if = "StatCall::is_default")]
    pub stat: StatCall,
    /// How `cpuio` burns CPU; `None` with cpuio is refused (it needs a load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuBurn>,
    /// The program the `exec` engine runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecSpec>,
    /// The donor file of the `e4defrag` engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defrag: Option<DefragSpec>,
}

/// Where the e4defrag engine takes its blocks from (fio's `donorname`, `inplace`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefragSpec {
    /// The donor file, created when missing; on the target's ext4 file system.
    pub donor: String,
    /// Allocate the donor's blocks for each move and free them after it (fio's
    /// `inplace=1`); otherwise the donor is allocated once, the target's size.
    #[serde(default)]
    pub inplace: bool,
}

impl EngineOptions {
    pub fn is_default(&self) -> bool {
        *self == EngineOptions::default()
    }

    /// Only the options `engine` uses: what decides whether two workloads of that
    /// engine can share an engine instance.
    pub fn for_engine(&self, engine: EngineKind) -> EngineOptions {
        EngineOptions {
            stat: if engine.desc().stat_call {
                self.stat
            } else {
                StatCall::default()
            },
            cpu: self.cpu.filter(|_| engine == EngineKind::Cpuio),
            exec: self.exec.clone().filter(|_| engine == EngineKind::Exec),
            defrag: self
                .defrag
                .clone()
                .filter(|_| engine == EngineKind::E4defrag),
        }
    }

    /// The option given that `engine` does not take, if any (its name as a flag).
    pub fn misplaced(&self, engine: EngineKind) -> Option<&'static str> {
        if !self.stat.is_default() && !engine.desc().stat_call {
            return Some("stat type (--stat-type) applies to the filestat and dirstat engines");
        }
        if self.cpu.is_some() && engine != EngineKind::Cpuio {
            return Some("CPU load (--cpuload/--cpuchunks/--cpumode) applies to the cpuio engine");
        }
        if self.defrag.is_some() && engine != EngineKind::E4defrag {
            return Some("a donor file (defrag_donor) applies to the e4defrag engine");
        }
        if self.exec.is_some() && engine != EngineKind::Exec {
            return Some(
                "a program (--exec-program/--exec-args/--exec-grace) applies to the exec engine",
            );
        }
        None
    }
}

/// A program the exec engine runs for the run's duration (fio's `program`,
/// `arguments`, `grace_time`, `std_redirect`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecSpec {
    /// Looked up in `PATH` when it has no `/`.
    pub program: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// After the run, SIGTERM, then this long before SIGKILL.
    pub grace_ns: u64,
    /// Its standard output and error go to `PREFIX.stdout` and `PREFIX.stderr`;
    /// `None`: to ioscope's standard error (never to its stdout, which may carry JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

/// fio's `grace_time` default: 1 s.
pub const DEFAULT_EXEC_GRACE_NS: u64 = 1_000_000_000;

/// The system call a stat engine times.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatCall {
    /// stat(2): follows a symbolic link.
    #[default]
    Stat,
    /// lstat(2): the link itself.
    Lstat,
    /// statx(2) asking for every basic field.
    Statx,
}

impl StatCall {
    pub fn is_default(&self) -> bool {
        *self == StatCall::Stat
    }

    pub fn name(self) -> &'static str {
        match self {
            StatCall::Stat => "stat",
            StatCall::Lstat => "lstat",
            StatCall::Statx => "statx",
        }
    }

    pub fn parse(s: &str) -> Option<StatCall> {
        match s.trim().to_ascii_lowercase().as_str() {
            "stat" => Some(StatCall::Stat),
            "lstat" => Some(StatCall::Lstat),
            "statx" => Some(StatCall::Statx),
            _ => None,
        }
    }
}

/// What the cpuio engine does: each "I/O" burns `chunk_ns` of the thread's own CPU
/// time, and the stream then idles long enough for the burn to be `load_pct` of its
/// time (fio's `cpuload`, `cpuchunks`, `cpumode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuBurn {
    /// 1..=100.
    pub load_pct: u8,
    /// CPU time burnt per operation.
    pub chunk_ns: u64,
    pub mode: CpuMode,
}

/// fio's `cpuchunks` default: 50 ms.
pub const DEFAULT_CPU_CHUNK_NS: u64 = 50_000_000;

impl CpuBurn {
    /// Idle time after each chunk that makes the chunk `load_pct` of the cycle.
    pub fn idle_ns(&self) -> u64 {
        let load = self.load_pct.clamp(1, 100) as u64;
        self.chunk_ns.saturating_mul(100 - load) / load
    }
}

/// How the CPU is kept busy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuMode {
    /// A tight loop (fio's `noop`): the core's pipeline, no memory traffic.
    #[default]
    Noop,
    /// Sorting 1 MiB of pseudo-random integers over and over (fio's `qsort`): caches
    /// and memory too.
    Qsort,
}

impl CpuMode {
    pub fn name(self) -> &'static str {
        match self {
            CpuMode::Noop => "noop",
            CpuMode::Qsort => "qsort",
        }
    }

    pub fn parse(s: &str) -> Option<CpuMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "noop" => Some(CpuMode::Noop),
            "qsort" => Some(CpuMode::Qsort),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_makes_the_burn_the_load() {
        let b = |load_pct| CpuBurn {
            load_pct,
            chunk_ns: 50_000_000,
            mode: CpuMode::Noop,
        };
        assert_eq!(b(50).idle_ns(), 50_000_000);
        assert_eq!(b(100).idle_ns(), 0);
        assert_eq!(b(25).idle_ns(), 150_000_000);
    }

    #[test]
    fn options_belong_to_their_engine() {
        let stat = EngineOptions {
            stat: StatCall::Statx,
            ..Default::default()
        };
        assert_eq!(stat.misplaced(EngineKind::FileStat), None);
        assert!(stat.misplaced(EngineKind::FileCreate).is_some());
        let cpu = EngineOptions {
            cpu: Some(CpuBurn {
                load_pct: 10,
                chunk_ns: 1,
                mode: CpuMode::Qsort,
            }),
            ..Default::default()
        };
        assert_eq!(cpu.misplaced(EngineKind::Cpuio), None);
        assert!(cpu.misplaced(EngineKind::Sync).is_some());
    }
}
