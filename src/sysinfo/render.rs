//! The text `ioscope sysinfo [TARGET]` prints: aligned `key: value` sections for the
//! host and each target, then the advice. Unknown values print as `unknown` so a
//! reader sees what was looked for and not found.

use super::{Advice, AdviceLevel, BlockInfo, DmInfo, Environment, TargetEnvKind};
use std::fmt::Write;

const KEY_WIDTH: usize = 18;

fn kv(out: &mut String, indent: usize, key: &str, value: impl std::fmt::Display) {
    let _ = writeln!(
        out,
        "{:indent$}{:<w$} {value}",
        "",
        format!("{key}:"),
        w = KEY_WIDTH
    );
}

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref()
        .map_or_else(|| "unknown".to_string(), T::to_string)
}

/// Bytes as a binary-unit size with the exact count: `465.8 GiB (500107862016 bytes)`.
fn size(v: Option<u64>) -> String {
    let Some(b) = v else {
        return "unknown".into();
    };
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut x = b as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{x:.1} {} ({b} bytes)", UNITS[u])
    }
}

fn yes_no(v: Option<bool>, yes: &str, no: &str) -> String {
    match v {
        Some(true) => yes.into(),
        Some(false) => no.into(),
        None => "unknown".into(),
    }
}

/// Renders the environment and advice as plain text.
pub fn render_text(env: &Environment, advice: &[Advice]) -> String {
    let mut out = String::new();
    let h = &env.host;
    let _ = writeln!(out, "ioscope {} environment", env.ioscope_version);
    out.push_str("\nHost\n");
    kv(&mut out, 2, "hostname", opt(&h.hostname));
    kv(
        &mut out,
        2,
        "kernel",
        format!(
            "{} {}",
            opt(&h.kernel_release),
            h.kernel_version.as_deref().unwrap_or("")
        )
        .trim_end(),
    );
    kv(&mut out, 2, "arch", opt(&h.arch));
    kv(&mut out, 2, "distribution", opt(&h.distribution));
    kv(&mut out, 2, "cpu", opt(&h.cpu_model));
    kv(&mut out, 2, "logical cpus", opt(&h.logical_cpus));
    kv(&mut out, 2, "numa nodes", opt(&h.numa_nodes));
    kv(
        &mut out,
        2,
        "governor",
        h.scaling_governor
            .as_deref()
            .unwrap_or("unknown (no cpufreq)"),
    );
    kv(&mut out, 2, "memory", size(h.memory_total_bytes));
    kv(
        &mut out,
        2,
        "irqbalance",
        yes_no(h.irqbalance_running, "running", "not running"),
    );
    if let Some(i) = &h.storage_irqs {
        kv(
            &mut out,
            2,
            "storage irqs",
            format!(
                "{} line{} served by {} of {} cpus",
                i.lines,
                if i.lines == 1 { "" } else { "s" },
                i.cpus_serving,
                i.cpus_total
            ),
        );
    }

    for t in &env.targets {
        let kind = match t.kind {
            TargetEnvKind::Block => "block device",
            TargetEnvKind::File => "file",
            TargetEnvKind::Directory => "directory",
            TargetEnvKind::Mem => "memory",
            TargetEnvKind::Null => "null (no I/O)",
            TargetEnvKind::Network => "network",
            TargetEnvKind::Other => "other",
        };
        let _ = writeln!(out, "\nTarget {} ({kind})", t.uri);
        if let Some(p) = &t.path {
            if p != &t.uri {
                kv(&mut out, 2, "path", p);
            }
        }
        if let Some(n) = &t.note {
            kv(&mut out, 2, "note", n);
        }
        if let Some(fs) = &t.filesystem {
            kv(&mut out, 2, "filesystem", &fs.fs_type);
            kv(&mut out, 2, "mount point", &fs.mount_point);
            kv(
                &mut out,
                2,
                "mount source",
                format!("{} ({})", fs.source, fs.dev),
            );
            kv(&mut out, 2, "mount options", &fs.mount_options);
            kv(&mut out, 2, "fs options", &fs.super_options);
        }
        if let Some(b) = &t.block {
            if t.filesystem.is_some() {
                out.push_str("  backing device\n");
                render_block(&mut out, 4, b);
            } else {
                render_block(&mut out, 2, b);
            }
        }
    }

    out.push_str("\nAdvice\n");
    if advice.is_empty() {
        out.push_str("  nothing to change\n");
    }
    for a in advice {
        let level = match a.level {
            AdviceLevel::Warn => "warn",
            AdviceLevel::Info => "info",
        };
        let _ = writeln!(out, "  [{level}] {}", a.item);
        let _ = writeln!(out, "    why: {}", a.reason);
        let mut lines = a.fix.lines();
        let _ = writeln!(out, "    fix: {}", lines.next().unwrap_or(""));
        for l in lines {
            let _ = writeln!(out, "         {l}");
        }
    }
    out
}

fn render_block(out: &mut String, ind: usize, b: &BlockInfo) {
    let dev = match &b.parent {
        Some(p) => format!("{} ({}), partition of {p}", b.name, b.dev),
        None => format!("{} ({})", b.name, b.dev),
    };
    kv(out, ind, "device", dev);
    let model = match (&b.vendor, &b.model) {
        (Some(v), Some(m)) => Some(format!("{v} {m}")),
        (None, Some(m)) => Some(m.clone()),
        _ => None,
    };
    kv(out, ind, "model", opt(&model));
    kv(out, ind, "size", size(b.size_bytes));
    kv(
        out,
        ind,
        "block size",
        format!(
            "logical {} / physical {}",
            opt(&b.logical_block_size),
            opt(&b.physical_block_size)
        ),
    );
    kv(out, ind, "rotational", yes_no(b.rotational, "yes", "no"));
    let sched = match (&b.scheduler, b.schedulers_available.len()) {
        (Some(s), n) if n > 1 => format!("{s} (available: {})", b.schedulers_available.join(" ")),
        (s, _) => opt(s),
    };
    kv(out, ind, "scheduler", sched);
    kv(out, ind, "nr_requests", opt(&b.nr_requests));
    kv(out, ind, "read_ahead_kb", opt(&b.read_ahead_kb));
    kv(out, ind, "max_sectors_kb", opt(&b.max_sectors_kb));
    kv(out, ind, "write cache", opt(&b.write_cache));
    kv(out, ind, "rq_affinity", opt(&b.rq_affinity));
    kv(out, ind, "nomerges", opt(&b.nomerges));
    if let Some(l) = &b.loop_dev {
        kv(out, ind, "loop backing file", opt(&l.backing_file));
        kv(
            out,
            ind,
            "loop direct I/O",
            yes_no(l.direct_io, "on", "off"),
        );
        if let Some(d) = &l.backing_device {
            kv(
                out,
                ind,
                "loop backing dev",
                format!(
                    "{d} (rotational: {})",
                    yes_no(l.backing_rotational, "yes", "no")
                ),
            );
        }
    }
    if let Some(dm) = &b.dm {
        render_dm(out, ind, dm);
    }
}

fn render_dm(out: &mut String, ind: usize, dm: &DmInfo) {
    kv(out, ind, "dm name", opt(&dm.name));
    kv(
        out,
        ind,
        "dm type",
        match (&dm.kind, dm.multipath) {
            (_, true) => "multipath".to_string(),
            (k, false) => opt(k),
        },
    );
    for s in &dm.slaves {
        let mut line = s.name.clone();
        if let Some(st) = &s.state {
            let _ = write!(line, " state={st}");
        }
        if let Some(r) = s.rotational {
            let _ = write!(line, " rotational={}", u8::from(r));
        }
        if let Some(sc) = &s.scheduler {
            let _ = write!(line, " scheduler={sc}");
        }
        kv(
            out,
            ind + 2,
            if dm.multipath { "path" } else { "slave" },
            line,
        );
        if let Some(inner) = &s.dm {
            render_dm(out, ind + 4, inner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::{HostInfo, TargetEnv};

    #[test]
    fn sections_and_advice_layout() {
        let env = Environment {
            ioscope_version: "9.9.9".into(),
            host: HostInfo {
                hostname: Some("box".into()),
                kernel_release: Some("6.8.0".into()),
                kernel_version: Some("#1 SMP".into()),
                arch: None,
                distribution: None,
                cpu_model: Some("Xeon".into()),
                logical_cpus: Some(4),
                numa_nodes: Some(1),
                scaling_governor: None,
                memory_total_bytes: Some(16 << 30),
                irqbalance_running: None,
                storage_irqs: None,
            },
            targets: vec![TargetEnv {
                uri: "mem:1g".into(),
                kind: TargetEnvKind::Mem,
                path: None,
                note: None,
                filesystem: None,
                block: None,
            }],
        };
        let advice = [Advice {
            level: AdviceLevel::Warn,
            item: "cpu governor".into(),
            reason: "slow".into(),
            fix: "line one\nline two".into(),
        }];
        let text = render_text(&env, &advice);
        assert!(text.starts_with("ioscope 9.9.9 environment\n"), "{text}");
        assert!(
            text.contains("  kernel:            6.8.0 #1 SMP\n"),
            "{text}"
        );
        assert!(text.contains("  arch:              unknown\n"), "{text}");
        assert!(
            text.contains("  memory:            16.0 GiB (17179869184 bytes)\n"),
            "{text}"
        );
        assert!(text.contains("\nTarget mem:1g (memory)\n"), "{text}");
        assert!(
            text.ends_with(
                "  [warn] cpu governor\n    why: slow\n    fix: line one\n         line two\n"
            ),
            "{text}"
        );
        assert!(render_text(&env, &[]).contains("nothing to change"));
    }
}
