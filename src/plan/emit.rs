//! Plans written back out: as a native TOML job file (every plan can be) and as a fio
//! job file (where fio can express it), for `ioscope convert` — so people can migrate
//! and diff. The TOML output reads back into the same plan.

use super::model::*;
use super::units::{format_duration_ns, format_size};
use std::fmt::Write as _;

fn rw_word(w: &Workload) -> &'static str {
    match (&w.pattern, w.read_pct) {
        (AccessPattern::Random, 100) => "randread",
        (AccessPattern::Random, 0) => "randwrite",
        (AccessPattern::Random, _) => "randrw",
        (AccessPattern::Sequential, 100) => "read",
        (AccessPattern::Sequential, 0) => "write",
        (AccessPattern::Sequential, _) => "rw",
    }
}

fn toml_str(s: &str) -> String {
    format!("{:?}", s)
}

/// The plan as a native job file.
pub fn to_toml(plan: &Plan) -> String {
    let mut s = String::from("# written by ioscope convert\n");
    for t in &plan.targets {
        let _ = writeln!(
            s,
            "\n[[target]]\nname = {}\npath = {}",
            toml_str(&t.name),
            toml_str(&t.uri)
        );
        if let Some(b) = t.size_bytes {
            let _ = writeln!(s, "size = {}", toml_str(&format_size(b)));
        }
        if let Some(d) = t.direct {
            let _ = writeln!(s, "direct = {d}");
        }
    }
    // Workloads are written once per run under a run-qualified name when runs differ.
    for (ri, r) in plan.runs.iter().enumerate() {
        for w in &r.workloads {
            let _ = writeln!(
                s,
                "\n[[workload]]\nname = {}\ntarget = {}\nrw = {:?}\nread_pct = {}",
                toml_str(&format!("r{ri}-{}", w.name)),
                toml_str(&w.target),
                rw_word(w),
                w.read_pct
            );
            match w.bs.single() {
                Some(b) => {
                    let _ = writeln!(s, "bs = {}", toml_str(&format_size(b)));
                }
                None => {
                    let parts: Vec<String> =
                        w.bs.split
                            .iter()
                            .map(|&(b, wt)| format!("{} = {wt}", toml_str(&format_size(b))))
                            .collect();
                    let _ = writeln!(s, "bs = {{ {} }}", parts.join(", "));
                }
            }
            let _ = writeln!(s, "qd = {}\nstreams = {}", w.qd, w.streams);
            if let Rate::Iops(r) = w.rate {
                let _ = writeln!(s, "rate = {r}");
            }
            if w.offset_bytes > 0 {
                let _ = writeln!(s, "offset = {}", toml_str(&format_size(w.offset_bytes)));
            }
            if let Some(z) = w.size_bytes {
                let _ = writeln!(s, "size = {}", toml_str(&format_size(z)));
            }
            if w.dist != Distribution::Uniform {
                let _ = writeln!(s, "dist = {}", toml_str(&w.dist.spec()));
            }
            if matches!(w.rate, Rate::Iops(_)) && w.arrival != Arrival::default() {
                let _ = writeln!(s, "arrival = \"uniform\"");
            }
            if let Some(p) = w.share_pct {
                let _ = writeln!(s, "share = {p}");
            }
            if !w.seq_layout.is_regions() {
                let _ = writeln!(s, "seq_layout = {}", toml_str(w.seq_layout.name()));
            }
        }
    }
    for (ri, r) in plan.runs.iter().enumerate() {
        let names: Vec<String> = r
            .workloads
            .iter()
            .map(|w| toml_str(&format!("r{ri}-{}", w.name)))
            .collect();
        let _ = writeln!(
            s,
            "\n[[run]]\nname = {}\nworkloads = [{}]\nengine = {:?}",
            toml_str(&r.name),
            names.join(", "),
            r.engine.name()
        );
        if let Some(d) = r.duration_ns {
            let _ = writeln!(s, "duration = {}", toml_str(&format_duration_ns(d)));
        }
        if let Some(p) = r.passes {
            let _ = writeln!(s, "passes = {p}");
        }
        let _ = writeln!(
            s,
            "warmup = {}\ninterval = {}\nseed = {}",
            toml_str(&format_duration_ns(r.warmup_ns)),
            toml_str(&format_duration_ns(r.interval_ns)),
            r.seed
        );
        if let Some(c) = &r.cpus {
            let list: Vec<String> = c.iter().map(|x| x.to_string()).collect();
            let _ = writeln!(s, "cpus = {}", toml_str(&list.join(",")));
        }
        if let Some(w) = r.workers {
            let _ = writeln!(s, "workers = {w}");
        }
        if r.pacing != Pacing::default() {
            let _ = writeln!(s, "pacing = {}", toml_str(r.pacing.name()));
        }
    }
    s
}

/// The plan as a fio job file, or why fio cannot express it.
pub fn to_fio(plan: &Plan) -> Result<String, String> {
    let mut s = String::from("; written by ioscope convert\n");
    for (ri, r) in plan.runs.iter().enumerate() {
        for (wi, w) in r.workloads.iter().enumerate() {
            let t = plan
                .targets
                .iter()
                .find(|t| t.name == w.target)
                .ok_or_else(|| format!("workload '{}' names an unknown target", w.name))?;
            if t.uri.contains(':') && !t.uri.starts_with('/') {
                return Err(format!("target '{}' has no fio equivalent", t.uri));
            }
            if w.dist != Distribution::Uniform {
                // fio has these too, but the parameterisation differs; say so.
                return Err(format!(
                    "workload '{}': its offset distribution is not translated to fio yet",
                    w.name
                ));
            }
            if !w.seq_layout.is_regions() && w.streams > 1 {
                return Err(format!(
                    "workload '{}': seq_layout stride is not translated to fio yet",
                    w.name
                ));
            }
            let _ = writeln!(s, "\n[{}-{}]", r.name, w.name);
            if ri > 0 && wi == 0 {
                s.push_str("stonewall\n");
            }
            let engine = match r.engine {
                EngineKind::Sync => "psync",
                EngineKind::Null => "null",
                EngineKind::Mem => return Err("the mem engine has no fio equivalent".into()),
                _ => "io_uring",
            };
            let _ = writeln!(
                s,
                "filename={}\nioengine={engine}\nrw={}\niodepth={}\nnumjobs={}",
                t.uri,
                rw_word(w),
                w.qd,
                w.streams
            );
            if !(w.read_pct == 0 || w.read_pct == 100) {
                let _ = writeln!(s, "rwmixread={}", w.read_pct);
            }
            match w.bs.single() {
                Some(b) => {
                    let _ = writeln!(s, "bs={}", format_size(b));
                }
                None => {
                    let total: u32 = w.bs.split.iter().map(|&(_, wt)| wt).sum();
                    let parts: Vec<String> = w
                        .bs
                        .split
                        .iter()
                        .map(|&(b, wt)| format!("{}/{}", format_size(b), wt * 100 / total.max(1)))
                        .collect();
                    let _ = writeln!(s, "bssplit={}", parts.join(":"));
                }
            }
            let _ = writeln!(s, "direct={}", if t.direct == Some(false) { 0 } else { 1 });
            if let Some(z) = w.size_bytes.or(t.size_bytes) {
                let _ = writeln!(s, "size={}", format_size(z));
            }
            if w.offset_bytes > 0 {
                let _ = writeln!(s, "offset={}", format_size(w.offset_bytes));
            }
            if let Rate::Iops(rate) = w.rate {
                let _ = writeln!(
                    s,
                    "rate_iops={}\nrate_process=poisson",
                    (rate / w.streams as f64).round() as u64
                );
            }
            if let Some(d) = r.duration_ns {
                let _ = writeln!(s, "time_based\nruntime={}", format_duration_ns(d));
            }
            if let Some(p) = r.passes {
                let _ = writeln!(s, "loops={p}");
            }
            if r.warmup_ns > 0 {
                let _ = writeln!(s, "ramp_time={}", format_duration_ns(r.warmup_ns));
            }
            if let Some(c) = &r.cpus {
                let list: Vec<String> = c.iter().map(|x| x.to_string()).collect();
                let _ = writeln!(s, "cpus_allowed={}", list.join(","));
            }
            let _ = writeln!(s, "randseed={}\ngroup_reporting", r.seed);
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Plan {
        Plan {
            targets: vec![TargetSpec {
                name: "t0".into(),
                uri: "/tmp/x.dat".into(),
                size_bytes: Some(1 << 30),
                direct: Some(true),
            }],
            runs: vec![RunSpec {
                name: "run".into(),
                workloads: vec![Workload {
                    read_pct: 70,
                    bs: BlockSizes {
                        split: vec![(4096, 50), (65536, 50)],
                    },
                    qd: 8,
                    streams: 2,
                    rate: Rate::Iops(5000.0),
                    arrival: Arrival::Uniform,
                    dist: Distribution::Zoned {
                        bands: vec![
                            Zone {
                                io_pct: 80.0,
                                range_pct: 10.0,
                            },
                            Zone {
                                io_pct: 20.0,
                                range_pct: 90.0,
                            },
                        ],
                    },
                    seq_layout: SeqLayout::Stride,
                    ..Default::default()
                }],
                engine: EngineKind::Uring,
                duration_ns: Some(30_000_000_000),
                passes: None,
                warmup_ns: 5_000_000_000,
                interval_ns: 1_000_000_000,
                cpus: Some(vec![0, 1]),
                workers: None,
                seed: 7,
                pacing: Pacing::Sleep,
                io: Default::default(),
            }],
            warnings: vec![],
            data: Default::default(),
        }
    }

    #[test]
    fn toml_reads_back_into_the_same_plan() {
        let p = sample();
        let text = to_toml(&p);
        let back = crate::plan::jobfile::parse("converted.toml", &text).unwrap();
        assert_eq!(back.targets, p.targets);
        assert_eq!(back.runs.len(), 1);
        let (a, b) = (&back.runs[0], &p.runs[0]);
        assert_eq!(a.duration_ns, b.duration_ns);
        assert_eq!(a.warmup_ns, b.warmup_ns);
        assert_eq!(a.cpus, b.cpus);
        assert_eq!(a.seed, b.seed);
        let (wa, wb) = (&a.workloads[0], &b.workloads[0]);
        assert_eq!(
            (wa.read_pct, wa.qd, wa.streams),
            (wb.read_pct, wb.qd, wb.streams)
        );
        assert_eq!(wa.bs, wb.bs);
        assert_eq!(wa.pattern, wb.pattern);
        // Everything else too, but the run-qualified name.
        let renamed = Workload {
            name: wb.name.clone(),
            ..wa.clone()
        };
        assert_eq!(&renamed, wb);
        assert_eq!(a.pacing, b.pacing);
    }

    #[test]
    fn a_share_mix_survives_conversion() {
        let mut p = sample();
        let mut w2 = p.runs[0].workloads[0].clone();
        w2.name = "b".into();
        w2.share_pct = Some(30.0);
        p.runs[0].workloads[0].share_pct = Some(70.0);
        p.runs[0].workloads.push(w2);
        let back = crate::plan::jobfile::parse("converted.toml", &to_toml(&p)).unwrap();
        let shares: Vec<_> = back.runs[0].workloads.iter().map(|w| w.share_pct).collect();
        assert_eq!(shares, vec![Some(70.0), Some(30.0)]);
    }

    #[test]
    fn fio_job_reads_back_through_the_fio_reader() {
        let mut p = sample();
        p.runs[0].workloads[0].dist = Distribution::Uniform;
        let stride = to_fio(&p).unwrap_err();
        assert!(stride.contains("stride"), "{stride}");
        p.runs[0].workloads[0].seq_layout = SeqLayout::Regions;
        p.runs[0].workloads[0].rate = Rate::Max;
        let text = to_fio(&p).unwrap();
        let t = crate::plan::compat::fio::parse_str(
            "c.fio",
            &text,
            std::path::Path::new("/tmp"),
            &|_| None,
        )
        .unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let w = &t.plan.runs[0].workloads[0];
        assert_eq!((w.read_pct, w.qd, w.streams), (70, 8, 2));
        assert_eq!(w.bs.split.len(), 2);
        assert_eq!(t.plan.runs[0].duration_ns, Some(30_000_000_000));
    }
}
