//! The host: kernel, distribution, CPU, NUMA, frequency governor, memory and how
//! storage interrupts are spread. Parsers take the file text so tests need no host.

use super::Root;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Machine-wide facts that move storage numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: Option<String>,
    /// `uname -r`.
    pub kernel_release: Option<String>,
    /// `uname -v` (build number, date, preemption model).
    pub kernel_version: Option<String>,
    pub arch: Option<String>,
    /// `PRETTY_NAME` from /etc/os-release.
    pub distribution: Option<String>,
    pub cpu_model: Option<String>,
    /// Online logical CPUs.
    pub logical_cpus: Option<u32>,
    /// Online NUMA nodes.
    pub numa_nodes: Option<u32>,
    /// cpufreq scaling governor; several comma-separated when CPUs differ; `None`
    /// when cpufreq is absent (common in VMs).
    pub scaling_governor: Option<String>,
    pub memory_total_bytes: Option<u64>,
    /// Whether an irqbalance daemon is running.
    pub irqbalance_running: Option<bool>,
    pub storage_irqs: Option<IrqSummary>,
}

/// How storage controller interrupts (NVMe, virtio-blk/scsi, AHCI, SAS/FC HBAs) are
/// spread over CPUs, from /proc/interrupts counts since boot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IrqSummary {
    /// Storage interrupt lines found.
    pub lines: u32,
    /// CPUs that have handled at least one of them.
    pub cpus_serving: u32,
    /// CPU columns in /proc/interrupts.
    pub cpus_total: u32,
}

pub(crate) fn capture_host(root: &Root) -> HostInfo {
    let uts = uname();
    let cpuinfo = root.read("/proc/cpuinfo");
    HostInfo {
        hostname: uts
            .as_ref()
            .map(|u| u.nodename.clone())
            .or_else(|| root.read("/proc/sys/kernel/hostname")),
        kernel_release: uts
            .as_ref()
            .map(|u| u.release.clone())
            .or_else(|| root.read("/proc/sys/kernel/osrelease")),
        kernel_version: uts
            .as_ref()
            .map(|u| u.version.clone())
            .or_else(|| root.read("/proc/sys/kernel/version")),
        arch: uts.as_ref().map(|u| u.machine.clone()),
        distribution: root
            .read("/etc/os-release")
            .or_else(|| root.read("/usr/lib/os-release"))
            .and_then(|s| parse_os_release(&s)),
        cpu_model: cpuinfo.as_deref().and_then(parse_cpu_model),
        logical_cpus: root
            .read("/sys/devices/system/cpu/online")
            .and_then(|s| parse_cpu_list(&s))
            .map(|v| v.len() as u32)
            .or_else(|| cpuinfo.as_deref().map(count_processors).filter(|&n| n > 0))
            .or_else(|| {
                std::thread::available_parallelism()
                    .ok()
                    .map(|n| n.get() as u32)
            }),
        numa_nodes: root
            .read("/sys/devices/system/node/online")
            .and_then(|s| parse_cpu_list(&s))
            .map(|v| v.len() as u32),
        scaling_governor: governors(root),
        memory_total_bytes: root
            .read("/proc/meminfo")
            .and_then(|s| parse_meminfo_total(&s)),
        irqbalance_running: irqbalance_running(root),
        storage_irqs: root
            .read("/proc/interrupts")
            .and_then(|s| parse_interrupts(&s)),
    }
}

struct Uts {
    nodename: String,
    release: String,
    version: String,
    machine: String,
}

fn uname() -> Option<Uts> {
    // SAFETY: utsname is plain old data, so all-zero is a valid value; uname(2)
    // only writes into the struct we own and NUL-terminates each field.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Some(Uts {
        nodename: field(&u.nodename),
        release: field(&u.release),
        version: field(&u.version),
        machine: field(&u.machine),
    })
}

/// `PRETTY_NAME` from os-release text (quotes removed), else `NAME VERSION_ID`.
pub(crate) fn parse_os_release(text: &str) -> Option<String> {
    let mut name = None;
    let mut version = None;
    for line in text.lines() {
        let Some((k, v)) = line.trim().split_once('=') else {
            continue;
        };
        let v = v.trim().trim_matches(|c| c == '"' || c == '\'').to_string();
        match k {
            "PRETTY_NAME" if !v.is_empty() => return Some(v),
            "NAME" => name = Some(v),
            "VERSION_ID" => version = Some(v),
            _ => {}
        }
    }
    match (name, version) {
        (Some(n), Some(v)) => Some(format!("{n} {v}")),
        (n, _) => n,
    }
}

/// The CPU model from /proc/cpuinfo: `model name` on x86, with fallbacks for
/// arm64 (`Hardware`, `CPU implementer/part`), POWER (`cpu`) and others.
pub(crate) fn parse_cpu_model(text: &str) -> Option<String> {
    let get = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key && !v.trim().is_empty()).then(|| v.trim().to_string())
        })
    };
    get("model name")
        .or_else(|| get("Hardware"))
        .or_else(|| get("cpu model"))
        .or_else(|| get("cpu"))
        .or_else(|| {
            let imp = get("CPU implementer")?;
            let part = get("CPU part").unwrap_or_default();
            Some(format!("implementer {imp} part {part}"))
        })
}

fn count_processors(text: &str) -> u32 {
    text.lines()
        .filter(|l| l.split(':').next().map(str::trim) == Some("processor"))
        .count() as u32
}

/// Parses a kernel CPU/node list such as `0-3,8,10-11`.
pub(crate) fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 1 << 16 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.trim().parse().ok()?),
        }
    }
    Some(out)
}

/// `MemTotal` in bytes from /proc/meminfo.
pub(crate) fn parse_meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut it = line["MemTotal:".len()..].split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    let mult = match it.next() {
        Some("kB") | Some("KB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    n.checked_mul(mult)
}

/// Distinct scaling governors across CPUs, comma-separated, sorted.
fn governors(root: &Root) -> Option<String> {
    let dir = std::fs::read_dir(root.path("/sys/devices/system/cpu")).ok()?;
    let set: BTreeSet<String> = dir
        .flatten()
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.strip_prefix("cpu")
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| super::read_trimmed(&e.path().join("cpufreq/scaling_governor")))
        .collect();
    summarize_governors(set)
}

pub(crate) fn summarize_governors(set: BTreeSet<String>) -> Option<String> {
    (!set.is_empty()).then(|| set.into_iter().collect::<Vec<_>>().join(","))
}

fn irqbalance_running(root: &Root) -> Option<bool> {
    let dir = std::fs::read_dir(root.path("/proc")).ok()?;
    let mut saw_any = false;
    for e in dir.flatten() {
        let name = e.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Some(comm) = super::read_trimmed(&e.path().join("comm")) {
            saw_any = true;
            if comm == "irqbalance" {
                return Some(true);
            }
        }
    }
    saw_any.then_some(false)
}

/// Interrupt names that belong to storage controllers.
fn is_storage_irq(name: &str) -> bool {
    const PATTERNS: &[&str] = &[
        "nvme",
        "ahci",
        "megasas",
        "megaraid",
        "mpt2sas",
        "mpt3sas",
        "mpi3mr",
        "qla2xxx",
        "lpfc",
        "hpsa",
        "smartpqi",
        "aacraid",
        "pvscsi",
        "storvsc",
        "ata_piix",
        "sata_",
        "virtio-scsi",
    ];
    let n = name.to_ascii_lowercase();
    // virtio-blk queues are `virtioN-req.M`; virtio-scsi request queues `virtioN-request`.
    let virtio_blk = n.contains("virtio") && (n.contains("-req.") || n.ends_with("-request"));
    virtio_blk || PATTERNS.iter().any(|p| n.contains(p))
}

/// Summarises storage interrupts from /proc/interrupts text; `None` when the text
/// has no CPU header.
pub(crate) fn parse_interrupts(text: &str) -> Option<IrqSummary> {
    let mut lines = text.lines();
    let header = lines.next()?;
    let ncpu = header
        .split_whitespace()
        .filter(|w| w.starts_with("CPU"))
        .count();
    if ncpu == 0 {
        return None;
    }
    let mut serving = vec![false; ncpu];
    let mut count = 0u32;
    for line in lines {
        let mut it = line.split_whitespace();
        let Some(id) = it.next().and_then(|t| t.strip_suffix(':')) else {
            continue;
        };
        if !id.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let tokens: Vec<&str> = it.collect();
        let counts: Vec<u64> = tokens
            .iter()
            .take(ncpu)
            .map_while(|t| t.parse().ok())
            .collect();
        let name = tokens[counts.len()..].join(" ");
        if !is_storage_irq(&name) {
            continue;
        }
        count += 1;
        for (cpu, &c) in counts.iter().enumerate() {
            if c > 0 {
                serving[cpu] = true;
            }
        }
    }
    Some(IrqSummary {
        lines: count,
        cpus_serving: serving.iter().filter(|&&s| s).count() as u32,
        cpus_total: ncpu as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_release_pretty_name_and_fallback() {
        let t = "NAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        assert_eq!(
            parse_os_release(t).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        let t = "NAME='Alpine Linux'\nVERSION_ID=3.20.0\n";
        assert_eq!(parse_os_release(t).as_deref(), Some("Alpine Linux 3.20.0"));
        assert_eq!(parse_os_release("# nothing\n"), None);
    }

    #[test]
    fn cpu_model_x86_and_arm() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6338\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6338\n";
        assert_eq!(
            parse_cpu_model(x86).as_deref(),
            Some("Intel(R) Xeon(R) Gold 6338")
        );
        assert_eq!(count_processors(x86), 2);
        let arm = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";
        assert_eq!(
            parse_cpu_model(arm).as_deref(),
            Some("implementer 0x41 part 0xd0c")
        );
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn meminfo_total() {
        let t = "MemTotal:       24684096 kB\nMemFree:         1000 kB\n";
        assert_eq!(parse_meminfo_total(t), Some(24684096 * 1024));
        assert_eq!(parse_meminfo_total("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn governor_summary() {
        let one: BTreeSet<String> = ["performance".to_string()].into();
        assert_eq!(summarize_governors(one).as_deref(), Some("performance"));
        let mixed: BTreeSet<String> = ["powersave".to_string(), "performance".to_string()].into();
        assert_eq!(
            summarize_governors(mixed).as_deref(),
            Some("performance,powersave")
        );
        assert_eq!(summarize_governors(BTreeSet::new()), None);
    }

    #[test]
    fn interrupts_storage_summary() {
        let t = "           CPU0       CPU1       CPU2       CPU3\n\
  24:          1          0          0          0  IO-APIC   5-edge      ACPI:Ged\n\
  36:          0      37578          0          0  PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n\
  40:         10          0          0          0  PCI-MSIX-0000:01:00.0   0-edge      nvme0q0\n\
  41:          0          0          0          0  PCI-MSIX-0000:01:00.0   1-edge      nvme0q1\n\
 NMI:          0          0          0          0   Non-maskable interrupts\n\
 ERR:          0\n";
        let s = parse_interrupts(t).unwrap();
        assert_eq!(
            s,
            IrqSummary {
                lines: 3,
                cpus_serving: 2,
                cpus_total: 4
            }
        );
        assert_eq!(parse_interrupts(""), None);
    }
}
