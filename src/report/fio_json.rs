//! fio-compatible JSON: the result model written in fio 3.x's `--output-format=json`
//! layout, so scripts and plotting tools written for fio read ioscope's results
//! unchanged. One fio "job" per ioscope run; a run of several workloads (fio's
//! jobs running side by side, which fio reports one by one unless told
//! `group_reporting`) gives one job per workload, each with its own figures and
//! the share of the run's CPU time its I/Os took (CPU is measured per run). Latency
//! objects follow fio's naming:
//! `slat_ns` (submission: ~0 here, ioscope does not split it out), `clat_ns`
//! (completion latency = ioscope's service time) and `lat_ns` (total = ioscope's
//! latency from the intended time). Bandwidth `bw` is KiB/s, `runtime` ms, as in fio.

use crate::result::{
    EndReason, LatencyStats, OpTotals, ResultDoc, RunResult, Totals, WorkloadEcho,
};
use serde_json::{json, Map, Value};

/// Percentiles fio prints by default, keyed like "99.000000".
pub(super) const FIO_PERCENTILES: [(f64, &str); 17] = [
    (1.0, "1.000000"),
    (5.0, "5.000000"),
    (10.0, "10.000000"),
    (20.0, "20.000000"),
    (30.0, "30.000000"),
    (40.0, "40.000000"),
    (50.0, "50.000000"),
    (60.0, "60.000000"),
    (70.0, "70.000000"),
    (80.0, "80.000000"),
    (90.0, "90.000000"),
    (95.0, "95.000000"),
    (99.0, "99.000000"),
    (99.5, "99.500000"),
    (99.9, "99.900000"),
    (99.95, "99.950000"),
    (99.99, "99.990000"),
];

/// Renders a whole result document in fio's JSON layout; `bins`: fio's `json+`,
/// with each direction's completion-latency histogram.
pub fn render(doc: &ResultDoc, bins: bool) -> String {
    let v = json!({
        "fio version": format!("ioscope-{}", doc.tool.version),
        "timestamp": doc.started_unix_s as u64,
        "timestamp_ms": (doc.started_unix_s * 1000.0) as u64,
        "time": "",
        "global options": {},
        "jobs": jobs(doc, bins),
        "disk_util": [],
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

/// fio's `jobs` array for a result document: one job per run (one per network job
/// of a network run); `bins` adds json+'s latency bins.
pub fn jobs(doc: &ResultDoc, bins: bool) -> Vec<Value> {
    doc.runs
        .iter()
        .enumerate()
        .flat_map(
            |(i, r)| match net_jobs(i, r).or_else(|| workload_jobs(i, r, bins)) {
                Some(jobs) => jobs,
                None => {
                    let mut j = job(i, r, &r.totals);
                    if bins {
                        add_bins(&mut j, &r.totals);
                    }
                    vec![j]
                }
            },
        )
        .collect()
}

/// Percentile value at `p` from the stats, in ns: the exact named percentiles where
/// the result has them, else linear interpolation in the spectrum.
fn percentile_ns(l: &LatencyStats, p: f64) -> f64 {
    if let Some(&(_, v)) = l.named().iter().find(|&&(q, _)| (q - p).abs() < 1e-9) {
        return v * 1000.0;
    }
    let sp = &l.spectrum;
    for w in sp.windows(2) {
        let ((p0, v0), (p1, v1)) = (w[0], w[1]);
        if p >= p0 && p <= p1 {
            let t = if p1 > p0 { (p - p0) / (p1 - p0) } else { 0.0 };
            return (v0 + t * (v1 - v0)) * 1000.0;
        }
    }
    l.max * 1000.0
}

fn lat_obj(l: &LatencyStats, n: u64, with_percentiles: bool) -> Value {
    let mut o = json!({
        "min": (l.min * 1000.0) as u64,
        "max": (l.max * 1000.0) as u64,
        "mean": l.mean * 1000.0,
        "stddev": l.stddev * 1000.0,
        "N": n,
    });
    if with_percentiles && n > 0 {
        let pct: Map<String, Value> = FIO_PERCENTILES
            .iter()
            .map(|&(p, k)| (k.to_string(), json!(percentile_ns(l, p) as u64)))
            .collect();
        o["percentile"] = Value::Object(pct);
    }
    o
}

/// fio's `sync` section from the run's flushes (`--sync-every`, fio's `fsync=N` or
/// `fdatasync=N`): their count and the latency of each call with its percentiles, as
/// the etcd disk check reads them (`jobs[].sync.lat_ns.percentile["99.000000"]`).
fn sync_obj(flush: Option<&crate::result::FlushTotals>) -> Value {
    match flush {
        Some(f) => json!({"total_ios": f.ios, "lat_ns": lat_obj(&f.latency_us, f.ios, true)}),
        None => json!({"total_ios": 0, "lat_ns": lat_obj(&LatencyStats::default(), 0, false)}),
    }
}

fn dir_obj(t: &OpTotals, runtime_ms: u64) -> Value {
    let kib_s = t.bytes as f64 / 1024.0 / (runtime_ms.max(1) as f64 / 1000.0);
    json!({
        "io_bytes": t.bytes,
        "io_kbytes": t.bytes / 1024,
        "bw_bytes": (t.mibps * 1048576.0) as u64,
        "bw": kib_s as u64,
        "iops": t.iops,
        "runtime": runtime_ms,
        "total_ios": t.ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
        "clat_ns": lat_obj(&t.service_us, t.ios, true),
        "lat_ns": lat_obj(&t.latency_us, t.ios, true),
        "bw_min": kib_s as u64,
        "bw_max": kib_s as u64,
        "bw_agg": 100.0,
        "bw_mean": kib_s,
        "bw_dev": 0.0,
        "bw_samples": 1,
        "iops_min": t.iops as u64,
        "iops_max": t.iops as u64,
        "iops_mean": t.iops,
        "iops_stddev": 0.0,
        "iops_samples": 1,
    })
}

/// fio's json+ `clat_ns.bins` of each direction: its completion-latency (service
/// time) histogram's non-empty buckets, keyed by the bucket's value in ns, from the
/// raw histogram the totals carry (results without one get no bins).
fn add_bins(job: &mut Value, totals: &Totals) {
    let dirs = [
        ("read", Some(&totals.read)),
        ("write", Some(&totals.write)),
        ("trim", totals.trim.as_ref()),
    ];
    for (name, t) in dirs {
        let Some(text) = t.and_then(|t| t.service_hdr.as_ref().or(t.hdr.as_ref())) else {
            continue;
        };
        let Ok(h) = crate::result::hdr::decode(text) else {
            continue;
        };
        let bins: Map<String, Value> = crate::result::hdr::bins_ns(&h)
            .into_iter()
            .map(|(ns, n)| (ns.to_string(), json!(n)))
            .collect();
        job[name]["clat_ns"]["bins"] = Value::Object(bins);
    }
}

/// fio's latency_ns/us/ms bucket objects from the totals' cumulative distribution.
fn latency_buckets(l: &LatencyStats) -> (Value, Value, Value) {
    let keys = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ];
    let mut groups = [Map::new(), Map::new(), Map::new()];
    let mut prev = 0.0;
    for (i, &(_, cum)) in l.cdf.iter().enumerate() {
        let share = (cum - prev).max(0.0);
        prev = cum;
        if i < 30 {
            groups[i / 10].insert(keys[i % 10].to_string(), json!(share));
        } else {
            groups[2].insert("2000".into(), json!(share));
        }
    }
    if !l.cdf.is_empty() {
        groups[2].insert(">=2000".into(), json!((100.0 - prev).max(0.0)));
    }
    let [ns, us, ms] = groups;
    (Value::Object(ns), Value::Object(us), Value::Object(ms))
}

/// CPUs online on the machine that measured `r`, which fio's `usr_cpu`/`sys_cpu`
/// (percent of one CPU) need to scale ioscope's percent-of-all-CPUs figures: the
/// recorded `cpu.online_cpus`; for results written before it was recorded, derived
/// from the run's own CPU time (`cpu_us_per_io` × I/Os over the measured seconds is
/// the CPUs kept busy, of which `user_pct + sys_pct` is the share); 1 when neither
/// is possible (no I/Os or no CPU time measured), leaving the figures as they are.
/// Never the rendering machine's count: a result renders the same everywhere.
pub fn measuring_cpus(r: &RunResult) -> f64 {
    if let Some(n) = r.cpu.online_cpus.filter(|&n| n > 0) {
        return n as f64;
    }
    let c = &r.cpu;
    let share_pct = c.user_pct + c.sys_pct;
    let ios = r.totals.all.ios as f64;
    if share_pct > 0.0 && ios > 0.0 && r.duration_s > 0.0 && c.cpu_us_per_io > 0.0 {
        let busy_cpus = c.cpu_us_per_io * ios / 1e6 / r.duration_s;
        let n = (busy_cpus * 100.0 / share_pct).round();
        if n >= 1.0 {
            return n;
        }
    }
    1.0
}

/// fio's job options for a storage workload; a network run has none of them (no
/// rw, block size or queue depth in fio's sense), so they are left out.
fn workload_options(opts: &mut Value, w: &WorkloadEcho) {
    opts["rw"] = json!(w.rw());
    opts["bs"] = json!(crate::plan::units::format_size(w.bs.first_bytes()));
    opts["iodepth"] = json!(w.qd.to_string());
    opts["numjobs"] = json!(w.streams.to_string());
    if w.is_mixed() {
        opts["rwmixread"] = json!(w.read_pct.to_string());
    }
}

/// fio's job for run `r` (the `i`th) with the figures of `t`: the run's totals, or
/// one of its workloads'.
fn job(i: usize, r: &RunResult, t: &Totals) -> Value {
    let runtime_ms = (r.duration_s * 1000.0).round() as u64;
    let (ns, us, ms) = latency_buckets(&t.all.latency_us);
    let cpus = measuring_cpus(r);
    let mut opts = json!({
        "name": r.name,
        "filename": r.target,
        "ioengine": r.engine,
        "runtime": format!("{}", r.duration_s.round() as u64),
    });
    let storage = r.workload.storage();
    if let Some(w) = storage {
        workload_options(&mut opts, w);
    }
    json!({
        "jobname": r.name,
        "groupid": i,
        "error": if r.end_reason == EndReason::Error { 5 } else { 0 },
        "eta": 0,
        "elapsed": (r.duration_s + r.warmup_s).round() as u64,
        "job options": opts,
        "read": dir_obj(&t.read, runtime_ms),
        "write": dir_obj(&t.write, runtime_ms),
        "trim": dir_obj(t.trim.as_ref().unwrap_or(&OpTotals::default()), runtime_ms),
        "sync": sync_obj(t.flush.as_ref()),
        "job_runtime": runtime_ms,
        "usr_cpu": r.cpu.user_pct * cpus,
        "sys_cpu": r.cpu.sys_pct * cpus,
        "ctx": 0,
        "majf": 0,
        "minf": 0,
        "iodepth_level": {},
        "latency_ns": ns,
        "latency_us": us,
        "latency_ms": ms,
        "latency_depth": storage.map_or(1, |w| w.qd),
        "latency_target": 0,
        "latency_percentile": 100.0,
        "latency_window": 0,
    })
}

/// A run of fio-style network jobs as fio reports it: one job per network job,
/// its direction's figures over its own time, `bw_*`/`iops_*` from its intervals
/// and `drop_ios` from the datagrams it found lost. `None` for any other run.
fn net_jobs(i: usize, r: &RunResult) -> Option<Vec<Value>> {
    let streams = r.totals.net.streams.as_ref()?;
    if r.kind != crate::result::RunKind::Net || r.workloads.len() != streams.len() {
        return None;
    }
    let jobs = r
        .workloads
        .iter()
        .zip(streams)
        .enumerate()
        .map(|(k, (w, st))| {
            let t = &w.totals.all;
            let secs = if t.mbps > 0.0 {
                t.bytes as f64 / (t.mbps * 1e6)
            } else {
                r.duration_s
            };
            let runtime_ms = (secs * 1000.0).round() as u64;
            let mut v = job(i, r, &r.totals);
            v["jobname"] = json!(w.name);
            let o = &mut v["job options"];
            o["name"] = json!(w.name);
            o["filename"] = json!(w.target);
            o["rw"] = json!(if st.direction == "send" {
                "write"
            } else {
                "read"
            });
            o["runtime"] = json!(format!("{}", secs.round() as u64));
            v["job_runtime"] = json!(runtime_ms);
            let (ns, us, ms) = latency_buckets(&t.latency_us);
            (v["latency_ns"], v["latency_us"], v["latency_ms"]) = (ns, us, ms);
            for (dir, totals) in [("read", &w.totals.read), ("write", &w.totals.write)] {
                let mut d = dir_obj(totals, runtime_ms);
                if totals.ios > 0 {
                    interval_stats(&mut d, r, k);
                    if dir == "read" {
                        d["drop_ios"] = json!(st.datagrams_lost);
                    }
                }
                v[dir] = d;
            }
            v
        })
        .collect();
    Some(jobs)
}

/// A storage run of several workloads as fio reports jobs that run side by side:
/// one job per workload, named as it is, with its own figures, options and flushes,
/// and `usr_cpu`/`sys_cpu` scaled to its share of the run's I/Os. `None` for a
/// network run or a run of one workload. `bins`: json+'s latency bins.
fn workload_jobs(i: usize, r: &RunResult, bins: bool) -> Option<Vec<Value>> {
    if r.workload.storage().is_none() || r.workloads.len() < 2 {
        return None;
    }
    let all_ios = r.workloads.iter().map(|w| w.totals.all.ios).sum::<u64>();
    let jobs = r
        .workloads
        .iter()
        .map(|w| {
            let mut v = job(i, r, &w.totals);
            v["jobname"] = json!(w.name);
            let o = &mut v["job options"];
            o["name"] = json!(w.name);
            o["filename"] = json!(w.target);
            if let Some(settings) = &w.settings {
                workload_options(o, settings);
            }
            v["latency_depth"] = json!(w.settings.as_ref().map_or(1, |s| s.qd));
            let share = match all_ios {
                0 => 1.0 / r.workloads.len() as f64,
                n => w.totals.all.ios as f64 / n as f64,
            };
            for key in ["usr_cpu", "sys_cpu"] {
                v[key] = json!(v[key].as_f64().unwrap_or(0.0) * share);
            }
            if bins {
                add_bins(&mut v, &w.totals);
            }
            v
        })
        .collect();
    Some(jobs)
}

/// fio's bandwidth and IOPS sample statistics from network job `k`'s measured
/// intervals in which it moved bytes.
fn interval_stats(d: &mut Value, r: &RunResult, k: usize) {
    let samples: Vec<(f64, f64)> = r
        .intervals
        .iter()
        .filter(|iv| !iv.warmup && iv.duration_s > 0.0)
        .filter_map(|iv| {
            let s = iv.net.as_ref()?.streams.get(k)?;
            (s.bytes > 0).then(|| (s.bytes as f64 / 1024.0 / iv.duration_s, iv.duration_s))
        })
        .collect();
    if samples.is_empty() {
        return;
    }
    let n = samples.len() as f64;
    let kib: Vec<f64> = samples.iter().map(|s| s.0).collect();
    let mean = kib.iter().sum::<f64>() / n;
    let dev = (kib.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    let min = kib.iter().cloned().fold(f64::MAX, f64::min);
    let max = kib.iter().cloned().fold(0.0, f64::max);
    d["bw_min"] = json!(min as u64);
    d["bw_max"] = json!(max as u64);
    d["bw_mean"] = json!(mean);
    d["bw_dev"] = json!(dev);
    d["bw_samples"] = json!(samples.len());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testdata::{doc, run};
    use crate::result::{AccessPattern, BlockSizes};

    fn job_of(r: RunResult) -> Value {
        let v: Value = serde_json::from_str(&render(&doc(vec![r]), false)).unwrap();
        v["jobs"][0].clone()
    }

    // Regression: usr_cpu/sys_cpu were scaled by the CPU count of the machine that
    // rendered the report, so one result gave different figures on different hosts.
    #[test]
    fn cpu_is_scaled_by_the_measuring_machines_cpus() {
        // A count this host does not have, so the host's cannot pass for it.
        let host = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        for n in [1, host + 3, 96] {
            let mut r = run("r", 1000.0, 100.0, 3, 0, 0.0, 1.0, 1);
            r.cpu.user_pct = 2.5;
            r.cpu.sys_pct = 0.75;
            r.cpu.online_cpus = Some(n);
            let j = job_of(r);
            let usr = j["usr_cpu"].as_f64().unwrap();
            let sys = j["sys_cpu"].as_f64().unwrap();
            assert!(
                (usr - 2.5 * n as f64).abs() < 1e-9,
                "{n} CPUs: usr_cpu {usr}"
            );
            assert!(
                (sys - 0.75 * n as f64).abs() < 1e-9,
                "{n} CPUs: sys_cpu {sys}"
            );
        }
    }

    #[test]
    fn older_results_derive_the_cpu_count_from_their_own_cpu_time() {
        // 16 CPUs: 2 CPU-seconds per second busy is 12.5 % of all of them.
        let mut r = run("r", 1000.0, 100.0, 10, 0, 0.0, 1.0, 1);
        r.cpu.online_cpus = None;
        r.cpu.user_pct = 10.0;
        r.cpu.sys_pct = 2.5;
        // 10 s × 1000 IOPS = 10,000 I/Os; 20 CPU-seconds over them = 2000 µs each.
        assert_eq!(r.totals.all.ios, 10_000);
        r.cpu.cpu_us_per_io = 2000.0;
        assert_eq!(measuring_cpus(&r), 16.0);
        let j = job_of(r.clone());
        assert!((j["usr_cpu"].as_f64().unwrap() - 160.0).abs() < 1e-9);
        assert!((j["sys_cpu"].as_f64().unwrap() - 40.0).abs() < 1e-9);
        // No I/Os to derive it from: the percentages stay as recorded.
        r.totals.all.ios = 0;
        assert_eq!(measuring_cpus(&r), 1.0);
        // A result without the field parses (written before it was recorded).
        let mut v = serde_json::to_value(doc(vec![r])).unwrap();
        v["runs"][0]["cpu"]
            .as_object_mut()
            .unwrap()
            .remove("online_cpus");
        let back: ResultDoc = serde_json::from_value(v).unwrap();
        assert_eq!(back.runs[0].cpu.online_cpus, None);
    }

    #[test]
    fn a_run_of_two_workloads_is_two_jobs_with_their_own_figures() {
        let mut r = run("pg", 1000.0, 100.0, 3, 0, 0.0, 0.5, 1);
        r.cpu.user_pct = 30.0;
        r.cpu.online_cpus = Some(1);
        let reader = run("reader", 750.0, 100.0, 3, 0, 0.0, 1.0, 1);
        let mut writer = run("wal", 250.0, 100.0, 3, 0, 0.0, 0.0, 1);
        writer.totals.flush = Some(crate::result::FlushTotals {
            ios: 7,
            ..Default::default()
        });
        let echo = |qd| WorkloadEcho {
            qd,
            ..WorkloadEcho::default()
        };
        r.workloads = vec![
            crate::result::WorkloadResult {
                name: "reader".into(),
                target: "/t/a".into(),
                settings: Some(echo(8)),
                totals: reader.totals.clone(),
            },
            crate::result::WorkloadResult {
                name: "wal".into(),
                target: "/t/b".into(),
                settings: Some(echo(1)),
                totals: writer.totals.clone(),
            },
        ];
        let v: Value = serde_json::from_str(&render(&doc(vec![r]), false)).unwrap();
        let jobs = v["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(
            (&jobs[0]["jobname"], &jobs[1]["jobname"]),
            (&json!("reader"), &json!("wal"))
        );
        assert_eq!(jobs[0]["read"]["total_ios"], reader.totals.read.ios);
        assert_eq!(jobs[1]["write"]["total_ios"], writer.totals.write.ios);
        assert_eq!(jobs[1]["job options"]["filename"], "/t/b");
        assert_eq!(
            (&jobs[0]["latency_depth"], &jobs[1]["latency_depth"]),
            (&json!(8), &json!(1))
        );
        // The flushes are the writer's own; the reader made none.
        assert_eq!(
            (&jobs[0]["sync"]["total_ios"], &jobs[1]["sync"]["total_ios"]),
            (&json!(0), &json!(7))
        );
        // 30 % of one CPU split by I/O share: 3 of 4 I/Os were the reader's.
        let usr = |k: usize| jobs[k]["usr_cpu"].as_f64().unwrap();
        assert!((usr(0) - 22.5).abs() < 1e-9 && (usr(1) - 7.5).abs() < 1e-9);
    }

    #[test]
    fn job_options_come_from_the_workload_echo() {
        let mut r = run("mix", 1000.0, 100.0, 3, 0, 0.0, 0.7, 1);
        r.workload = crate::result::RunWorkload::Storage(WorkloadEcho {
            read_pct: 70,
            pattern: AccessPattern::Sequential,
            bs: BlockSizes {
                split: vec![(65536, 80), (4096, 20)],
                write_split: None,
            },
            qd: 16,
            streams: 4,
            ..WorkloadEcho::default()
        });
        r.end_reason = EndReason::Error;
        let j = job_of(r);
        let o = &j["job options"];
        assert_eq!(o["rw"], "rw");
        assert_eq!(o["rwmixread"], "70");
        assert_eq!(o["bs"], "64k");
        assert_eq!(
            (o["iodepth"].as_str(), o["numjobs"].as_str()),
            (Some("16"), Some("4"))
        );
        assert_eq!(j["latency_depth"], 16);
        assert_eq!(j["error"], 5);
        let plain = job_of(run("r", 1000.0, 100.0, 3, 0, 0.0, 1.0, 1));
        assert_eq!(plain["job options"]["rw"], "randread");
        assert!(plain["job options"].get("rwmixread").is_none());
        assert_eq!(plain["error"], 0);
    }
}
