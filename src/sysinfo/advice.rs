//! Tuning advice: settings that make a measurement describe the tuning rather than
//! the storage. Each item says what was seen, why it matters, and the command (or
//! udev rule, to make it persist) that changes it. ioscope never applies a fix
//! itself: changing a shared machine is the operator's decision.

use super::{BlockInfo, DmInfo, Environment, LoopInfo};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Read-ahead above this (KiB) is called out for random workloads.
const LARGE_READ_AHEAD_KB: u32 = 128;

/// How much an item matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdviceLevel {
    /// Likely to distort the numbers; fix before measuring.
    Warn,
    /// Worth knowing when reading the numbers.
    Info,
}

/// One piece of advice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Advice {
    pub level: AdviceLevel,
    /// What the advice is about (`sda: scheduler`, `cpu governor`).
    pub item: String,
    /// What was seen and why it matters.
    pub reason: String,
    /// The command or udev rule that applies the change.
    pub fix: String,
}

/// Advice for measuring in `env`. `planned_qd` is the deepest queue depth the plan
/// will keep outstanding on one device, when known. Warnings come before infos.
pub fn advise(env: &Environment, planned_qd: Option<u32>) -> Vec<Advice> {
    let mut out = Vec::new();
    host_advice(env, &mut out);
    // Two targets on one disk must not repeat its advice.
    let mut seen = BTreeSet::new();
    for t in &env.targets {
        if let Some(b) = &t.block {
            if seen.insert(b.name.clone()) {
                block_advice(b, planned_qd, &mut out);
            }
        }
    }
    out.sort_by_key(|a| a.level);
    out
}

fn host_advice(env: &Environment, out: &mut Vec<Advice>) {
    let h = &env.host;
    if let Some(g) = &h.scaling_governor {
        if g != "performance" {
            out.push(Advice {
                level: AdviceLevel::Warn,
                item: "cpu governor".into(),
                reason: format!(
                    "scaling governor is '{g}', not 'performance': CPUs clock down between \
                     I/Os, which adds wake-up and ramp latency to every completion and \
                     makes results vary from run to run"
                ),
                fix: "cpupower frequency-set -g performance\n\
                      (or: echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)"
                    .into(),
            });
        }
    }
    if h.irqbalance_running == Some(true) {
        out.push(Advice {
            level: AdviceLevel::Info,
            item: "irq affinity".into(),
            reason: "irqbalance is running: it may move storage interrupts between CPUs \
                     during a run, so completion latency can shift mid-measurement"
                .into(),
            fix: "systemctl stop irqbalance, then pin each storage IRQ: \
                  echo CPU > /proc/irq/N/smp_affinity_list (IRQ numbers in /proc/interrupts)"
                .into(),
        });
    }
    if let Some(irq) = &h.storage_irqs {
        if irq.lines > 1 && irq.cpus_serving == 1 && irq.cpus_total > 1 {
            out.push(Advice {
                level: AdviceLevel::Info,
                item: "irq affinity".into(),
                reason: format!(
                    "all {} storage interrupt lines have been served by one CPU of {}: at \
                     high IOPS that CPU saturates before the device does",
                    irq.lines, irq.cpus_total
                ),
                fix: "spread them: echo CPU > /proc/irq/N/smp_affinity_list for each storage \
                      IRQ in /proc/interrupts, or run irqbalance before (not during) the run"
                    .into(),
            });
        }
    }
}

fn udev_rule(dev: &str, attr: &str, value: &str) -> String {
    format!(
        "persist with a udev rule, e.g. /etc/udev/rules.d/60-ioscope.rules:\n\
         ACTION==\"add|change\", KERNEL==\"{dev}\", ATTR{{queue/{attr}}}=\"{value}\""
    )
}

// fn-length: flat list
fn block_advice(b: &BlockInfo, planned_qd: Option<u32>, out: &mut Vec<Advice>) {
    let q = &b.queue_device;
    let is_loop = b.loop_dev.is_some();

    if let (Some(false), Some(s)) = (b.rotational, b.scheduler.as_deref()) {
        if s != "none" && s != "mq-deadline" && b.schedulers_available.iter().any(|a| a == "none") {
            out.push(Advice {
                level: AdviceLevel::Warn,
                item: format!("{q}: scheduler"),
                reason: format!(
                    "non-rotational device uses the '{s}' I/O scheduler: its per-request \
                     accounting costs CPU and caps IOPS on fast devices, so results measure \
                     the scheduler; 'none' (or 'mq-deadline') is the usual choice for SSD/NVMe"
                ),
                fix: format!(
                    "echo none > /sys/block/{q}/queue/scheduler\n{}",
                    udev_rule(q, "scheduler", "none")
                ),
            });
        }
    }

    if let (Some(qd), Some(nr)) = (planned_qd, b.nr_requests) {
        if nr < qd {
            out.push(Advice {
                level: AdviceLevel::Warn,
                item: format!("{q}: nr_requests"),
                reason: format!(
                    "nr_requests is {nr}, below the planned queue depth {qd}: the block layer \
                     holds back the excess, so the device never sees depth {qd} and the extra \
                     wait shows up as latency"
                ),
                fix: format!(
                    "echo {qd} > /sys/block/{q}/queue/nr_requests (the driver may cap it at its \
                     tag count)\n{}",
                    udev_rule(q, "nr_requests", &qd.to_string())
                ),
            });
        }
    }

    if let Some(l) = &b.loop_dev {
        loop_advice(b, l, out);
    }

    if let Some(ra) = b.read_ahead_kb {
        if ra > LARGE_READ_AHEAD_KB {
            out.push(Advice {
                level: AdviceLevel::Info,
                item: format!("{q}: read_ahead_kb"),
                reason: format!(
                    "read-ahead is {ra} KiB: buffered random reads each pull in up to \
                     {ra} KiB that is never used, inflating device bandwidth and latency \
                     (O_DIRECT I/O is not affected)"
                ),
                fix: format!(
                    "echo {LARGE_READ_AHEAD_KB} > /sys/block/{q}/queue/read_ahead_kb (for random \
                     workloads)\n{}",
                    udev_rule(q, "read_ahead_kb", &LARGE_READ_AHEAD_KB.to_string())
                ),
            });
        }
    }

    // A loop device's cache flag says nothing about the disk under its backing file.
    match b.write_cache.as_deref().filter(|_| !is_loop) {
        Some("write back") => out.push(Advice {
            level: AdviceLevel::Info,
            item: format!("{q}: write cache"),
            reason: "the device has a volatile write cache (write back): writes complete when \
                     cached, so write latency is cache latency until the cache fills or the \
                     workload flushes; sustained results need a long enough run"
                .into(),
            fix: format!(
                "to measure media, turn the device cache off: hdparm -W 0 /dev/{q} (SATA), \
                 sdparm --clear=WCE /dev/{q} (SAS), nvme set-feature /dev/{q} -f 6 -v 0 (NVMe). \
                 Do not echo 'write through' into queue/write_cache for this: that only stops \
                 the kernel sending flushes and risks data loss"
            ),
        }),
        Some("write through") => out.push(Advice {
            level: AdviceLevel::Info,
            item: format!("{q}: write cache"),
            reason: "the kernel treats this device as write-through (no volatile cache, or the \
                     cache is non-volatile): flushes are skipped, so fsync-heavy results will \
                     look better here than on a device with a volatile cache"
                .into(),
            fix: format!(
                "none needed; check with: cat /sys/block/{q}/queue/write_cache and hdparm -W \
                 /dev/{q} or nvme get-feature /dev/{q} -f 6"
            ),
        }),
        _ => {}
    }

    if let Some(dm) = &b.dm {
        path_advice(q, dm, out);
    }
}

/// A loop device's flags: rotational over a file on an SSD, no direct I/O.
fn loop_advice(b: &BlockInfo, l: &LoopInfo, out: &mut Vec<Advice>) {
    let q = &b.queue_device;
    if b.rotational == Some(true) && l.backing_rotational != Some(true) {
        let on = l
            .backing_device
            .as_deref()
            .map(|d| format!(" (backing device {d} is not known to be rotational)"))
            .unwrap_or_default();
        out.push(Advice {
            level: AdviceLevel::Warn,
            item: format!("{q}: rotational"),
            reason: format!(
                "loop device reports rotational=1{on}: usually it sits on a file on an \
                 SSD, and the flag makes the kernel and filesystems treat it as a hard \
                 disk (scheduler choice, merging, read-ahead)"
            ),
            fix: format!("echo 0 > /sys/block/{q}/queue/rotational"),
        });
    }
    if l.direct_io == Some(false) {
        out.push(Advice {
            level: AdviceLevel::Warn,
            item: format!("{q}: direct I/O"),
            reason: "loop device does not use direct I/O on its backing file: every I/O \
                     goes through the page cache too, so reads can be served from RAM and \
                     memory is used twice — the numbers describe the cache, not the storage"
                .into(),
            fix: format!(
                "losetup --direct-io=on /dev/{q} (or create it with: losetup --find --show \
                 --direct-io=on FILE)"
            ),
        });
    }
}

/// Device-mapper paths that are not running (a degraded multipath).
fn path_advice(q: &str, dm: &DmInfo, out: &mut Vec<Advice>) {
    for s in &dm.slaves {
        if let Some(state) = s.state.as_deref().filter(|&st| st != "running") {
            out.push(Advice {
                level: AdviceLevel::Warn,
                item: format!("{q}: path {}", s.name),
                reason: format!(
                    "{} path {} is '{state}': I/O runs over the remaining paths only, so \
                     the result describes a degraded setup",
                    if dm.multipath {
                        "multipath"
                    } else {
                        "device-mapper"
                    },
                    s.name
                ),
                fix: format!(
                    "inspect with multipath -ll; bring the path back (echo running > \
                     /sys/block/{}/device/state) or fix the link, then re-run",
                    s.name
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::{
        DmInfo, HostInfo, IrqSummary, LoopInfo, SlaveInfo, TargetEnv, TargetEnvKind,
    };

    fn host() -> HostInfo {
        HostInfo {
            hostname: Some("h".into()),
            kernel_release: Some("6.8.0".into()),
            kernel_version: Some("#1 SMP".into()),
            arch: Some("x86_64".into()),
            distribution: None,
            cpu_model: Some("cpu".into()),
            logical_cpus: Some(8),
            numa_nodes: Some(1),
            scaling_governor: Some("performance".into()),
            memory_total_bytes: Some(1 << 34),
            irqbalance_running: Some(false),
            storage_irqs: None,
        }
    }

    /// A tuned NVMe disk: no advice expected for it.
    fn good_disk(name: &str) -> BlockInfo {
        BlockInfo {
            name: name.into(),
            dev: "259:0".into(),
            parent: None,
            queue_device: name.into(),
            model: Some("NVMe".into()),
            vendor: None,
            size_bytes: Some(1 << 40),
            logical_block_size: Some(512),
            physical_block_size: Some(4096),
            rotational: Some(false),
            scheduler: Some("none".into()),
            schedulers_available: vec!["none".into(), "mq-deadline".into(), "bfq".into()],
            nr_requests: Some(1023),
            read_ahead_kb: Some(128),
            max_sectors_kb: Some(128),
            write_cache: None,
            rq_affinity: Some(1),
            nomerges: Some(0),
            dm: None,
            loop_dev: None,
        }
    }

    fn env_with(blocks: Vec<BlockInfo>) -> Environment {
        Environment {
            ioscope_version: "0".into(),
            host: host(),
            targets: blocks
                .into_iter()
                .map(|b| TargetEnv {
                    uri: format!("/dev/{}", b.name),
                    kind: TargetEnvKind::Block,
                    path: None,
                    note: None,
                    filesystem: None,
                    block: Some(b),
                })
                .collect(),
        }
    }

    fn items(a: &[Advice]) -> Vec<&str> {
        a.iter().map(|x| x.item.as_str()).collect()
    }

    #[test]
    fn tuned_system_gets_no_advice() {
        assert!(advise(&env_with(vec![good_disk("nvme0n1")]), Some(256)).is_empty());
    }

    #[test]
    fn scheduler_on_ssd() {
        let mut d = good_disk("sda");
        d.scheduler = Some("bfq".into());
        let a = advise(&env_with(vec![d.clone()]), None);
        assert_eq!(items(&a), ["sda: scheduler"]);
        assert_eq!(a[0].level, AdviceLevel::Warn);
        assert!(a[0]
            .fix
            .contains("echo none > /sys/block/sda/queue/scheduler"));
        assert!(a[0].fix.contains("ATTR{queue/scheduler}=\"none\""));
        // mq-deadline is fine; a rotational disk may keep bfq.
        d.scheduler = Some("mq-deadline".into());
        assert!(advise(&env_with(vec![d.clone()]), None).is_empty());
        d.scheduler = Some("bfq".into());
        d.rotational = Some(true);
        assert!(advise(&env_with(vec![d]), None).is_empty());
    }

    #[test]
    fn partition_advice_names_the_parent_queue() {
        let mut d = good_disk("sda1");
        d.queue_device = "sda".into();
        d.parent = Some("sda".into());
        d.scheduler = Some("kyber".into());
        let a = advise(&env_with(vec![d]), None);
        assert!(a[0].fix.contains("/sys/block/sda/queue/scheduler"), "{a:?}");
    }

    #[test]
    fn nr_requests_below_queue_depth() {
        let mut d = good_disk("nvme0n1");
        d.nr_requests = Some(64);
        let env = env_with(vec![d]);
        assert!(advise(&env, Some(64)).is_empty());
        assert!(advise(&env, None).is_empty());
        let a = advise(&env, Some(128));
        assert_eq!(items(&a), ["nvme0n1: nr_requests"]);
        assert!(a[0]
            .fix
            .starts_with("echo 128 > /sys/block/nvme0n1/queue/nr_requests"));
    }

    #[test]
    fn loop_rotational_and_buffered() {
        let mut d = good_disk("loop0");
        d.rotational = Some(true);
        d.loop_dev = Some(LoopInfo {
            backing_file: Some("/data/f".into()),
            direct_io: Some(false),
            backing_device: Some("nvme0n1".into()),
            backing_rotational: Some(false),
        });
        let a = advise(&env_with(vec![d.clone()]), None);
        assert_eq!(items(&a), ["loop0: rotational", "loop0: direct I/O"]);
        assert_eq!(a[0].fix, "echo 0 > /sys/block/loop0/queue/rotational");
        assert!(a[1].fix.contains("losetup --direct-io=on /dev/loop0"));
        // A loop over a real hard disk is rightly rotational.
        let l = d.loop_dev.as_mut().unwrap();
        l.backing_rotational = Some(true);
        l.direct_io = Some(true);
        assert!(advise(&env_with(vec![d]), None).is_empty());
    }

    #[test]
    fn governor_readahead_write_cache_irq() {
        let mut env = env_with(vec![]);
        env.host.scaling_governor = Some("powersave".into());
        env.host.irqbalance_running = Some(true);
        env.host.storage_irqs = Some(IrqSummary {
            lines: 8,
            cpus_serving: 1,
            cpus_total: 8,
        });
        let mut d = good_disk("sdb");
        d.read_ahead_kb = Some(4096);
        d.write_cache = Some("write back".into());
        env.targets = env_with(vec![d]).targets;
        let a = advise(&env, None);
        assert_eq!(
            items(&a),
            [
                "cpu governor",
                "irq affinity",
                "irq affinity",
                "sdb: read_ahead_kb",
                "sdb: write cache"
            ]
        );
        assert_eq!(a[0].level, AdviceLevel::Warn);
        assert!(a[1..].iter().all(|x| x.level == AdviceLevel::Info));
        assert!(a.iter().all(|x| !x.reason.is_empty() && !x.fix.is_empty()));
        assert!(a[0].fix.contains("performance"));
    }

    #[test]
    fn offline_multipath_path_and_dedup() {
        let mut d = good_disk("dm-0");
        d.dm = Some(DmInfo {
            name: Some("mpatha".into()),
            uuid: Some("mpath-x".into()),
            kind: Some("mpath".into()),
            multipath: true,
            slaves: ["running", "offline"]
                .iter()
                .enumerate()
                .map(|(i, s)| SlaveInfo {
                    name: format!("sd{}", (b'b' + i as u8) as char),
                    state: Some(s.to_string()),
                    rotational: Some(false),
                    scheduler: Some("none".into()),
                    dm: None,
                })
                .collect(),
        });
        // The same device as two targets yields one set of advice.
        let a = advise(&env_with(vec![d.clone(), d]), None);
        assert_eq!(items(&a), ["dm-0: path sdc"]);
        assert!(a[0].reason.contains("offline"));
    }
}
