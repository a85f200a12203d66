//! Flags → Plan. The flags arrive typed (see [`values`](super::values)); this applies
//! them to a plan built from flags alone or read from a job file, and expands comma
//! lists into a sweep. The checks that need more than one value (a --target count that
//! must match the job file's) are made here and name their flag.

use super::RunArgs;
use crate::app::FlagError;
use crate::plan::model::*;
use crate::plan::tuning::IoTuning;
use crate::plan::units::format_size;

/// Builds the plan for `ioscope run` from flags alone (no job file).
pub fn plan_from_flags(a: &RunArgs) -> Result<Plan, FlagError> {
    if a.target.is_empty() {
        return Err(FlagError::new(
            "--target",
            "",
            "no target given: name a file, a block device, mem:SIZE or null:SIZE",
        ));
    }
    let targets: Vec<TargetSpec> = a
        .target
        .iter()
        .enumerate()
        .map(|(i, uri)| TargetSpec {
            size_bytes: a.size,
            direct: a.direct,
            ..TargetSpec::new(format!("t{i}"), uri.clone())
        })
        .collect();
    let runs = sweep_combinations(a)
        .into_iter()
        .map(|(label, a)| run_from_flags(&a, &targets, label))
        .collect();
    let mut plan = Plan {
        targets,
        runs,
        warnings: Vec::new(),
        data: Default::default(),
    };
    apply_path_flags(a, &mut plan)?;
    Ok(plan)
}

/// Applies --path, --channels, --path-policy, --failback and --path-retry to the
/// first target.
fn apply_path_flags(a: &RunArgs, plan: &mut Plan) -> Result<(), FlagError> {
    use crate::plan::paths::{MultipathSpec, DEFAULT_PATH_RETRY_NS};
    let tuning = [
        ("--path-policy", a.path_policy.is_some()),
        ("--failback", a.failback.is_some()),
        ("--path-retry", a.path_retry.is_some()),
    ];
    let Some(t) = plan.targets.first_mut() else {
        return Ok(());
    };
    if let (Some(n), false) = (a.channels, t.uri.starts_with("smb://")) {
        return Err(FlagError::new(
            "--channels",
            n.to_string(),
            "applies to an smb:// target (SMB3 multichannel)",
        ));
    }
    if !a.path.is_empty() || a.channels.is_some() {
        let mp = t.multipath.get_or_insert_with(|| MultipathSpec {
            paths: Vec::new(),
            policy: Default::default(),
            retry_ns: DEFAULT_PATH_RETRY_NS,
            failback: Default::default(),
            channels: None,
        });
        if !a.path.is_empty() {
            mp.paths = a.path.clone();
        }
        if a.channels.is_some() {
            mp.channels = a.channels;
        }
    }
    let Some(mp) = t.multipath.as_mut() else {
        if let Some((flag, _)) = tuning.iter().find(|(_, given)| *given) {
            return Err(FlagError::new(
                *flag,
                "",
                "applies to a target with several paths; add --path URI (or --channels N for smb://)",
            ));
        }
        return Ok(());
    };
    if let Some(p) = a.path_policy {
        mp.policy = p;
    }
    if let Some(f) = a.failback {
        mp.failback = f;
    }
    if let Some(r) = a.path_retry {
        mp.retry_ns = r;
    }
    Ok(())
}

/// Expands lists in --bs, --qd, --streams and --read-pct (vdbench's
/// forxfersize/forthreads/forrdpct) into one set of flags per combination, each with
/// a label naming the swept values ("bs=4k qd=8"); no lists gives one unlabelled set
/// (each of those flags then holds at most one value).
pub fn sweep_combinations(a: &RunArgs) -> Vec<(Option<String>, RunArgs)> {
    let mut out: Vec<(Vec<String>, RunArgs)> = vec![(Vec::new(), a.clone())];
    let axes: [(&str, usize); 4] = [
        ("bs", a.bs.len()),
        ("qd", a.qd.len()),
        ("streams", a.streams.len()),
        ("read%", a.read_pct.len()),
    ];
    for (axis, n) in axes {
        if n < 2 {
            continue;
        }
        let mut next = Vec::new();
        for (labels, base) in &out {
            for i in 0..n {
                let mut b = base.clone();
                let value = match axis {
                    "bs" => {
                        b.bs = vec![a.bs[i]];
                        format_size(a.bs[i])
                    }
                    "qd" => {
                        b.qd = vec![a.qd[i]];
                        a.qd[i].to_string()
                    }
                    "streams" => {
                        b.streams = vec![a.streams[i]];
                        a.streams[i].to_string()
                    }
                    _ => {
                        b.read_pct = vec![a.read_pct[i]];
                        a.read_pct[i].to_string()
                    }
                };
                let mut l = labels.clone();
                l.push(format!("{axis}={value}"));
                next.push((l, b));
            }
        }
        out = next;
    }
    out.into_iter()
        .map(|(l, b)| ((!l.is_empty()).then(|| l.join(" ")), b))
        .collect()
}

/// One run from single-valued flags.
fn run_from_flags(a: &RunArgs, targets: &[TargetSpec], label: Option<String>) -> RunSpec {
    let mut workload = Workload {
        size_bytes: a.size,
        ..Default::default()
    };
    apply_workload_flags(a, &mut workload);
    let workloads: Vec<Workload> = targets
        .iter()
        .map(|t| Workload {
            name: if targets.len() == 1 {
                "w".into()
            } else {
                format!("w-{}", t.name)
            },
            target: t.name.clone(),
            ..workload.clone()
        })
        .collect();
    let mut run = RunSpec {
        workloads,
        ..RunSpec::default()
    };
    if let Some(label) = label {
        run.name = label;
    }
    apply_run_flags(a, &mut run);
    run
}

/// The last value of a list flag (a sweep has been expanded before this is used).
fn last<T: Copy>(v: &[T]) -> Option<T> {
    v.last().copied()
}

/// Applies workload flags (rw, bs, qd, …) given on the command line.
pub fn apply_workload_flags(a: &RunArgs, w: &mut Workload) {
    if let Some(rw) = &a.rw {
        w.pattern = rw.pattern;
        w.read_pct = rw.read_pct;
        w.trim = rw.trim;
    }
    if let Some(n) = last(&a.read_pct) {
        w.read_pct = n;
    }
    if let Some(b) = last(&a.bs) {
        w.bs = BlockSizes::fixed(b);
    }
    if let Some(q) = last(&a.qd) {
        w.qd = q;
    }
    if let Some(s) = last(&a.streams) {
        w.streams = s;
    }
    if let Some(o) = a.offset {
        w.offset_bytes = o;
    }
    if let Some(s) = a.size {
        w.size_bytes = Some(s);
    }
    if let Some(r) = &a.rate {
        w.rate = *r;
    }
    if let Some(arr) = &a.arrival {
        w.arrival = *arr;
    }
    if let Some(d) = &a.dist {
        w.dist = d.clone();
    }
    if let Some(l) = &a.seq_layout {
        w.seq_layout = *l;
    }
    if let Some(p) = a.prio {
        w.priority.job = Some(p);
    }
    if !a.cmdprio.is_empty() {
        w.priority.per_io = a.cmdprio.clone();
    }
    a.settings.apply(&mut w.settings);
    apply_own_setting_flags(a, w);
}

/// A flag given on the command line wins over what a job file's workload set for
/// itself, as it does over the run's setting.
fn apply_own_setting_flags(a: &RunArgs, w: &mut Workload) {
    let own = &mut w.overrides;
    if a.engine.is_some() {
        own.engine = None;
    }
    if a.warmup.is_some() {
        own.warmup_ns = None;
    }
    if a.cpus.is_some() {
        own.cpus = None;
    }
    if let Some(u) = own.uring.as_mut() {
        let mut io = crate::plan::IoTuning {
            uring: u.clone(),
            ..Default::default()
        };
        apply_io_flags(a, &mut io);
        *u = io.uring;
    }
    if a.verify || a.verify_after {
        own.data.verify = None;
    }
    if a.verify_after {
        own.data.verify_after = None;
    }
    if a.compress_ratio.is_some() {
        own.data.compress_ratio = None;
    }
    if a.dedup_ratio.is_some() {
        own.data.dedup_ratio = None;
    }
}

/// Applies --stat-type and the cpuio flags (--cpuload, --cpuchunks, --cpumode) over
/// what a job file said.
fn apply_engine_flags(a: &RunArgs, e: &mut crate::plan::engine_opts::EngineOptions) {
    use crate::plan::engine_opts::{CpuBurn, DEFAULT_CPU_CHUNK_NS};
    if let Some(s) = a.stat_type {
        e.stat = s;
    }
    if a.exec_program.is_some()
        || a.exec_args.is_some()
        || a.exec_grace.is_some()
        || a.exec_output.is_some()
    {
        let x = e
            .exec
            .get_or_insert_with(|| crate::plan::engine_opts::ExecSpec {
                program: String::new(),
                args: Vec::new(),
                grace_ns: crate::plan::engine_opts::DEFAULT_EXEC_GRACE_NS,
                output: None,
            });
        if let Some(p) = &a.exec_program {
            x.program = p.clone();
        }
        if let Some(args) = &a.exec_args {
            x.args = args.split_whitespace().map(str::to_string).collect();
        }
        if let Some(g) = a.exec_grace {
            x.grace_ns = g;
        }
        if let Some(o) = &a.exec_output {
            x.output = Some(o.clone());
        }
    }
    if a.cpuload.is_some() || a.cpuchunks.is_some() || a.cpumode.is_some() {
        let burn = e.cpu.get_or_insert(CpuBurn {
            load_pct: 0,
            chunk_ns: DEFAULT_CPU_CHUNK_NS,
            mode: Default::default(),
        });
        if let Some(l) = a.cpuload {
            burn.load_pct = l;
        }
        if let Some(c) = a.cpuchunks {
            burn.chunk_ns = c;
        }
        if let Some(m) = a.cpumode {
            burn.mode = m;
        }
    }
}

/// Applies run flags (duration, warm-up, engine, …) given on the command line.
pub fn apply_run_flags(a: &RunArgs, run: &mut RunSpec) {
    if let Some(e) = a.engine {
        run.engine = e;
    }
    apply_engine_flags(a, &mut run.engine_opts);
    if let Some(p) = a.passes {
        run.passes = Some(p);
        if a.duration.is_none() {
            run.duration_ns = None;
        }
    }
    if let Some(d) = a.duration {
        run.duration_ns = Some(d);
    }
    if let Some(w) = a.warmup {
        run.warmup_ns = w;
    }
    if let Some(i) = a.interval {
        run.interval_ns = i;
    }
    if let Some(c) = &a.cpus {
        run.cpus = Some(c.0.clone());
    }
    if let Some(w) = a.workers {
        run.workers = Some(w);
    }
    if let Some(p) = &a.pacing {
        run.pacing = *p;
    }
    if let Some(s) = a.seed {
        run.seed = s;
    }
    if let Some(c) = a.connections {
        run.connections = Some(c);
    }
    if let Some(t) = a.io_timeout {
        run.io_timeout_ns = Some(t);
    }
    apply_io_flags(a, &mut run.io);
    a.settings.apply_run(&mut run.settings);
}

/// Applies io_uring and write-durability flags (`--fixed-bufs`, `--sync-every` …).
/// Combinations that cannot work (`--sync-kind` without `--sync-every`) are refused
/// by [`IoTuning::check`] before any target is touched.
fn apply_io_flags(a: &RunArgs, io: &mut IoTuning) {
    let u = &mut io.uring;
    u.fixed_bufs |= a.fixed_bufs;
    u.sqpoll |= a.sqpoll || a.sqpoll_cpu.is_some();
    u.hipri |= a.hipri;
    u.register_files = a.register_files.or(u.register_files);
    u.sqpoll_cpu = a.sqpoll_cpu.or(u.sqpoll_cpu);
    u.batch_submit = a.batch_submit.unwrap_or(u.batch_submit);
    u.batch_complete_min = a.batch_complete_min.unwrap_or(u.batch_complete_min);
    u.batch_complete_max = a.batch_complete_max.unwrap_or(u.batch_complete_max);
    io.write_through |= a.write_through;
    io.sync_every = a.sync_every.unwrap_or(io.sync_every);
    if let Some(k) = a.sync_kind {
        io.sync_kind = k;
    }
}

/// Applies command-line overrides to a plan read from a job file.
pub fn apply_overrides(a: &RunArgs, plan: &mut Plan) -> Result<(), FlagError> {
    let lists = [
        ("--bs", a.bs.len()),
        ("--qd", a.qd.len()),
        ("--streams", a.streams.len()),
        ("--read-pct", a.read_pct.len()),
    ];
    if let Some((flag, _)) = lists.iter().find(|(_, n)| *n > 1) {
        return Err(FlagError::new(
            *flag,
            "",
            "a list (sweep) cannot override a job file; give one value",
        ));
    }
    if !a.target.is_empty() {
        if a.target.len() != plan.targets.len() {
            return Err(FlagError::new(
                "--target",
                a.target.join(","),
                format!(
                    "the job file names {} target(s); give --target once per target, in order",
                    plan.targets.len()
                ),
            ));
        }
        for (t, uri) in plan.targets.iter_mut().zip(&a.target) {
            t.uri = uri.clone();
        }
    }
    if let Some(d) = a.direct {
        for t in &mut plan.targets {
            t.direct = Some(d);
        }
    }
    apply_path_flags(a, plan)?;
    for run in &mut plan.runs {
        apply_run_flags(a, run);
        for w in &mut run.workloads {
            apply_workload_flags(a, w);
        }
    }
    Ok(())
}
