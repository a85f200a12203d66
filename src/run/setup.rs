//! Run setup: everything between a [`RunSpec`] and the first I/O — the plan's own
//! checks, the targets' probes and opening, the engine choice, verification state.
//!
//! Order matters here, because a rejected command line must leave nothing behind:
//! checks on the plan alone run first, then the targets are *probed* (nothing is
//! created, extended or allocated) and every workload is checked against what the
//! probe found, and io_uring options and durability against the probed targets (a
//! ring set up as asked, polled completions on the device a new file will live on).
//! Only then are targets opened — which creates or extends files — and the workloads
//! are checked once more against the opened targets (a new file's O_DIRECT alignment
//! may be known only now), as are the engine's options; if that or anything else
//! before the first I/O fails, what opening did is undone ([`Prepared::undo`]).

use super::resolved::Resolved;
use super::{RunError, RunOptions};
use crate::engine::uring::{PollSite, UringEngine};
use crate::engine::Targets;
use crate::plan::model::{EngineKind, FileCreate, Rate, RunSpec, TargetKind, TargetSpec};
use crate::target::{self, Backing, OpenTarget, Probe, ProbeKind};
use std::sync::Arc;

/// What a workload is checked against: a probed or an opened target.
struct Geometry<'a> {
    uri: &'a str,
    size_bytes: u64,
    direct: bool,
    /// `None`: not known before the target is opened.
    align_bytes: Option<u64>,
    /// Whole blocks of `align_bytes` only, whatever O_DIRECT says (an iSCSI LUN).
    blocks: bool,
    /// A file set read and written as bytes: each file's length (0 otherwise).
    file_bytes: u64,
    /// ... and when its files differ in length, each one's (`file_bytes` is then the
    /// largest, each file's stride).
    file_lens: Option<Arc<[u64]>>,
}

impl<'a> From<&'a Probe> for Geometry<'a> {
    fn from(p: &'a Probe) -> Self {
        Geometry {
            uri: &p.uri,
            size_bytes: p.size_bytes,
            direct: p.direct,
            align_bytes: p.align_bytes,
            blocks: p.kind == ProbeKind::Iscsi,
            file_bytes: set_file_bytes(&p.uri, p.kind),
            file_lens: set_file_lens(&p.uri, p.kind == ProbeKind::File),
        }
    }
}

impl<'a> From<&'a OpenTarget> for Geometry<'a> {
    fn from(t: &'a OpenTarget) -> Self {
        Geometry {
            uri: &t.uri,
            size_bytes: t.size_bytes,
            direct: t.direct,
            align_bytes: Some(t.align_bytes),
            blocks: matches!(t.backing, Backing::Iscsi(_)),
            file_bytes: t.set_stride_bytes().unwrap_or(0),
            file_lens: set_file_lens(&t.uri, t.set_stride_bytes().is_some()),
        }
    }
}

/// Each file's length when a probed target is a file set read as bytes (its probe
/// says "file"), else 0.
fn set_file_bytes(uri: &str, kind: ProbeKind) -> u64 {
    match (kind, target::parse_uri(uri)) {
        (ProbeKind::File, Ok(TargetKind::Files(set))) => set.file_bytes,
        _ => 0,
    }
}

/// Each file's length when a file set read as bytes has files of several lengths.
fn set_file_lens(uri: &str, bytes: bool) -> Option<Arc<[u64]>> {
    match target::parse_uri(uri) {
        Ok(TargetKind::Files(set)) if bytes => set.file_lens().map(Arc::from),
        _ => None,
    }
}

/// io_uring and durability options that cannot work here (the kernel, the device,
/// the target), refused before any I/O with the option named.
fn check_uring(run: &RunSpec, engine: EngineKind, targets: &Targets) -> Result<(), RunError> {
    let setup = |msg: String| RunError::Setup {
        run: run.name.clone(),
        msg,
    };
    for t in targets.iter() {
        for (on, flag, smb_too) in durability(run, &t.name) {
            let unfit = t.fd().is_none() && !(smb_too && matches!(t.backing, Backing::Smb(_)));
            if on && unfit {
                return Err(setup(durability_msg(flag, &t.uri)));
            }
        }
    }
    if engine == EngineKind::Uring {
        UringEngine::check_options(targets, &run.io.uring).map_err(|source| RunError::Options {
            run: run.name.clone(),
            source,
        })?;
    }
    Ok(())
}

/// [`check_uring`] on the probed targets, so that a run which would create a file is
/// refused before it does: durability needs a file descriptor, and io_uring options
/// the kernel or the device refuses are refused here when io_uring will run.
fn check_tuning_probed(
    run: &RunSpec,
    specs: &[TargetSpec],
    used: &[usize],
    probes: &[Probe],
) -> Result<(), RunError> {
    let setup = |msg: String| RunError::Setup {
        run: run.name.clone(),
        msg,
    };
    let has_fd = |p: &Probe| matches!(p.kind, ProbeKind::File | ProbeKind::BlockDevice);
    for (p, &ti) in probes.iter().zip(used) {
        for (on, flag, smb_too) in durability(run, &specs[ti].name) {
            if on && !(has_fd(p) || (smb_too && p.kind == ProbeKind::Smb)) {
                return Err(setup(durability_msg(flag, &p.uri)));
            }
        }
    }
    let uring = &run.io.uring;
    // As `engine_choice::resolve` will decide: io_uring options make `auto` pick it.
    let will_use_uring = match run.engine {
        EngineKind::Uring => true,
        EngineKind::Auto => !uring.is_default() && probes.iter().all(has_fd),
        _ => false,
    };
    if !will_use_uring || uring.is_default() || !UringEngine::available() {
        return Ok(());
    }
    let mut sites = Vec::with_capacity(probes.len());
    for (&ti, p) in used.iter().zip(probes).filter(|(_, p)| has_fd(p)) {
        let Ok(TargetKind::Path(path)) = target::parse_uri(&specs[ti].uri) else {
            continue;
        };
        // A file not created yet lives on its directory's device.
        let stat_path = if path.exists() {
            path
        } else {
            match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => ".".into(),
            }
        };
        sites.push(PollSite {
            uri: &p.uri,
            stat_path,
            is_block: p.kind == ProbeKind::BlockDevice,
            direct: p.direct,
        });
    }
    UringEngine::check_sites(&sites, uring).map_err(|source| RunError::Options {
        run: run.name.clone(),
        source,
    })
}

/// The durability options in force on target `name`: (on, flag, an SMB file takes it
/// too). Flushes and O_DSYNC act on file descriptors: other targets would silently
/// skip them. An SMB file is opened with FILE_WRITE_THROUGH instead of O_DSYNC.
/// Flushes are per workload, so only the targets of workloads that flush need one.
fn durability(run: &RunSpec, name: &str) -> [(bool, &'static str, bool); 4] {
    let mut own = run.workloads.iter().filter(|w| w.target == name);
    let flushes = own.clone().any(|w| run.flushes_of(w).every > 0);
    let on_close = own.clone().any(|w| run.fsyncs_on_close(w));
    let each_file = own.any(|w| run.fsyncs_each_file(w));
    [
        (flushes, "--sync-every", false),
        (on_close, "--fsync-on-close", false),
        (each_file, "--fsync-each-file", false),
        (run.io.write_through, "--write-through", true),
    ]
}

fn durability_msg(flag: &str, uri: &str) -> String {
    format!("{flag} works on files and block devices, not on '{uri}'")
}

/// Whether `engine` can drive targets of these kinds: the operation engines' needs,
/// then the target kinds' rule (`plan::target_kind::engine_fits`).
fn check_engine_fits(
    run: &RunSpec,
    engine: EngineKind,
    kinds: &[ProbeKind],
) -> Result<(), RunError> {
    let why = super::extension::first_misfit(|x| (x.engine_misfit)(engine, kinds));
    why.map_or(Ok(()), Err)
        .and_then(|()| crate::plan::target_kind::engine_fits(engine, kinds))
        .map_err(|msg| RunError::Setup {
            run: run.name.clone(),
            msg,
        })
}

/// Each worker opens its own connections to an NBD export (the ones its streams
/// use, [`super::spread`]), so more than one connection in all needs a server that advertises
/// multi-conn (otherwise the connections may not see each other's writes). Needs the
/// opened targets: the server says it when connected.
fn check_network(
    run: &RunSpec,
    engine: EngineKind,
    targets: &Targets,
    connections: u32,
) -> Result<(), RunError> {
    if engine != EngineKind::Nbd {
        return Ok(());
    }
    let streams: usize = run.workloads.iter().map(|w| w.streams as usize).sum();
    let cpus = run
        .cpus
        .as_ref()
        .map_or_else(|| allowed_cpus().len(), Vec::len);
    let spread = super::spread::plan(run.workers, cpus, streams, connections, true);
    let workers = spread.nworkers;
    let total = super::spread::opened_connections(&spread, streams, connections);
    if total <= 1 && connections <= 1 {
        return Ok(());
    }
    for t in targets.iter() {
        if let Backing::Nbd(n) = &t.backing {
            if !n.multi_conn {
                let how = if connections > 1 {
                    format!("--connections {connections} would open {total} connections")
                } else {
                    format!("{workers} workers would open {workers} connections")
                };
                return Err(RunError::Setup {
                    run: run.name.clone(),
                    msg: format!(
                        "{how} to {}, but that server does not advertise multi-conn (connections might not see each other's writes); use --workers 1 --connections 1",
                        n.server
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Checks that need the plan and this invocation only: no target is looked at.
fn check_plan(run: &RunSpec, opts: &RunOptions) -> Result<(), RunError> {
    let setup = |msg: String| RunError::Setup {
        run: run.name.clone(),
        msg,
    };
    if run.workloads.is_empty() {
        return Err(setup("has no workloads".into()));
    }
    if run.duration_ns.is_none() && run.passes.is_none() {
        return Err(setup("needs a duration or a number of passes".into()));
    }
    check_endless(run)?;
    for g in super::groups::groups(run) {
        g.run.io.check().map_err(|source| RunError::Tuning {
            run: run.name.clone(),
            source,
        })?;
    }
    super::groups::check(run).map_err(setup)?;
    if opts.connections == 0 {
        return Err(setup("needs at least 1 connection per target".into()));
    }
    if opts.io_timeout_ns == Some(0) {
        return Err(setup("the I/O timeout must be longer than 0".into()));
    }
    let allowed = allowed_cpus();
    let cpu_sets = std::iter::once(run.cpus.as_ref())
        .chain(run.workloads.iter().map(|w| w.overrides.cpus.as_ref()));
    for cpus in cpu_sets.flatten() {
        if let Some(c) = cpus.iter().find(|c| !allowed.contains(c)) {
            return Err(setup(format!(
                "CPU {c} is not available to this process (allowed: {allowed:?})"
            )));
        }
    }
    for w in &run.workloads {
        let invalid = |msg: String| RunError::Invalid {
            run: run.name.clone(),
            workload: w.name.clone(),
            msg,
        };
        if w.read_pct > 100 {
            return Err(invalid(format!(
                "read percentage {} is over 100",
                w.read_pct
            )));
        }
        if w.qd == 0 || w.streams == 0 {
            return Err(invalid("queue depth and streams must be at least 1".into()));
        }
        if w.bs.split.is_empty()
            || w.bs.write_split.as_ref().is_some_and(Vec::is_empty)
            || w.bs.min_bytes() == 0
        {
            return Err(invalid("block size must be at least 1 byte".into()));
        }
        if w.bs.max_bytes() > u32::MAX as u64 / 2 {
            return Err(invalid("block size over 2 GiB is not supported".into()));
        }
        if let Some(a) = w.align_bytes {
            if !crate::plan::model::align_fits(a, w.bs.min_bytes()) {
                let min = w.bs.min_bytes();
                return Err(invalid(format!("alignment {a} bytes does not fit {min}-byte blocks (a multiple of them, or of 512 dividing them)")));
            }
        }
        if let Some(why) = w.zones.as_ref().and_then(|z| z.misfit(w)) {
            return Err(invalid(why));
        }
        if let Some(why) = super::extension::first_misfit(|x| (x.misfit)(w)) {
            return Err(invalid(why));
        }
        check_shares_and_ranges(w).map_err(invalid)?;
        let sizes: Vec<u64> = w.bs.all().map(|&(b, _)| b).collect();
        w.priority.check(&sizes).map_err(invalid)?;
        let data = opts.data.for_workload(w);
        data.spec.validate().map_err(|e| invalid(e.to_string()))?;
        if data.verify {
            let unit = opts.data.spec.dedup_unit as u64;
            if w.offset_bytes % unit != 0 || w.bs.all().any(|&(b, _)| b % unit != 0) {
                return Err(invalid(format!(
                    "verification needs block sizes and offsets in whole units of {unit} bytes (see --dedup-unit)"
                )));
            }
        }
    }
    super::trim::check_plan(run, opts)?;
    super::extension::check_each(|x| (x.check_run)(run))?;
    for g in super::groups::groups(run) {
        super::extension::check_each(|x| (x.check_group)(&g.run, opts))?;
    }
    Ok(())
}

/// A time-based workload in a run of passes with no duration ends at its own stop
/// time; without one it would never end.
fn check_endless(run: &RunSpec) -> Result<(), RunError> {
    if run.duration_ns.is_some() {
        return Ok(());
    }
    let endless = run
        .workloads
        .iter()
        .find(|w| run.passes_of(w).is_none() && w.pauses.stop_ns == 0);
    match endless {
        Some(w) => Err(RunError::Invalid {
            run: run.name.clone(),
            workload: w.name.clone(),
            msg: "is time-based in a run of passes without a duration: give it a stop \
                  time (stop_after) or the run a duration"
                .into(),
        }),
        None => Ok(()),
    }
}

/// Indices into `specs` of the targets the run uses, in first-use order.
fn used_targets(run: &RunSpec, specs: &[TargetSpec]) -> Result<Vec<usize>, RunError> {
    let mut used: Vec<usize> = Vec::new();
    for w in &run.workloads {
        let ti = specs
            .iter()
            .position(|t| t.name == w.target)
            .ok_or_else(|| RunError::Invalid {
                run: run.name.clone(),
                workload: w.name.clone(),
                msg: format!("unknown target '{}'", w.target),
            })?;
        if !used.contains(&ti) {
            used.push(ti);
        }
    }
    Ok(used)
}

/// How a target is to be opened for this run: written or not, and how large.
fn open_options(run: &RunSpec, spec: &TargetSpec, opts: &RunOptions) -> target::OpenOptionsIo {
    // The engine of the target's workloads; such an engine that shapes its target
    // has it alone (`groups::check`).
    let target_engine = run
        .workloads
        .iter()
        .find(|w| w.target == spec.name)
        .map(|w| run.engine_of(w));
    let writes = run.workloads.iter().any(|w| {
        let engine = run.engine_of(w);
        w.target == spec.name
            && ((w.read_pct < 100 && engine != EngineKind::Null) || engine.desc().writes_target)
    });
    let mut min_size = run
        .workloads
        .iter()
        .filter(|w| w.target == spec.name)
        .map(|w| w.offset_bytes + w.stream_spread_bytes() + w.size_bytes.unwrap_or(0))
        .max()
        .unwrap_or(0);
    // `size = "fill"`: a file as large as its filesystem can hold, created as a
    // hole so the writes are what fills it.
    let fill = fill_size(run, spec);
    if let Some(bytes) = fill {
        min_size = min_size.max(bytes);
    }
    target::OpenOptionsIo {
        writes,
        force: opts.force,
        min_size_bytes: min_size,
        write_through: run.io.write_through,
        set_use: target_engine.and_then(|e| e.desc().set_use),
        slot_bytes: run
            .workloads
            .iter()
            .filter(|w| w.target == spec.name)
            .map(|w| w.bs.max_bytes())
            .max()
            .unwrap_or(1),
        // A filling workload's file is created as a hole: its writes fill it; so is
        // a file the job description wants created empty or only allocated.
        sparse: target_engine.is_some_and(|e| e.desc().shapes_target)
            || fill.is_some()
            || spec.create.is_sparse()
            || run.workloads.iter().any(|w| {
                w.target == spec.name && w.settings.flag(&crate::plan::settings::declared::FILL_FS)
            }),
        allocate: spec.create == FileCreate::Allocated,
        draw: opts.repetition,
        nbd_replies: if run
            .settings
            .flag(&crate::plan::settings::declared::NBD_STRUCTURED_REPLIES)
        {
            target::nbd::ffi::Replies::Structured
        } else {
            target::nbd::ffi::Replies::Simple
        },
    }
}

/// A file target sized to fill its filesystem (`size = "fill"`, fio's
/// `fill_device`): that size, in whole blocks of the run's largest size on it.
fn fill_size(run: &RunSpec, spec: &TargetSpec) -> Option<u64> {
    if !spec.fill {
        return None;
    }
    let unit = run
        .workloads
        .iter()
        .filter(|w| w.target == spec.name)
        .map(|w| w.bs.max_bytes())
        .max()?;
    let Ok(crate::plan::model::TargetKind::Path(path)) = target::parse_uri(&spec.uri) else {
        return None;
    };
    target::fill::fill_size_bytes(&path, unit)
}

/// Under O_DIRECT (unless the null engine runs it), a workload's block sizes and
/// offsets must be multiples of the target's alignment.
fn check_direct(
    run: &RunSpec,
    w: &crate::plan::model::Workload,
    t: &Geometry,
) -> Result<(), String> {
    let (true, Some(a)) = (
        t.direct && run.engine_of(w) != EngineKind::Null,
        t.align_bytes,
    ) else {
        return Ok(());
    };
    if let Some(&(b, _)) = w.bs.all().find(|&&(b, _)| b % a != 0) {
        return Err(format!(
            "block size {b} is not a multiple of {a} bytes, which O_DIRECT on '{}' requires (use a multiple of {a} or --direct false)",
            t.uri
        ));
    }
    if w.offset_bytes % a != 0 || w.offset_increment_bytes % a != 0 {
        return Err(format!(
            "offset {} is not a multiple of {a} bytes, which O_DIRECT on '{}' requires",
            w.offset_bytes, t.uri
        ));
    }
    Ok(())
}

/// Checks every workload against its target's geometry and resolves its working set.
fn resolve_workloads(
    run: &RunSpec,
    specs: &[TargetSpec],
    used: &[usize],
    geometry: &[Geometry],
) -> Result<Vec<Resolved>, RunError> {
    let mut resolved = Vec::with_capacity(run.workloads.len());
    for w in &run.workloads {
        let invalid = |msg: String| RunError::Invalid {
            run: run.name.clone(),
            workload: w.name.clone(),
            msg,
        };
        let ti = used
            .iter()
            .position(|&i| specs[i].name == w.target)
            .unwrap_or(0);
        let t = &geometry[ti];
        if w.offset_bytes >= t.size_bytes {
            return Err(invalid(format!(
                "offset {} is beyond the end of target '{}' ({} bytes)",
                w.offset_bytes, t.uri, t.size_bytes
            )));
        }
        // offset_increment: the last stream's working set starts `spread` further.
        let spread = w.stream_spread_bytes();
        let room = t.size_bytes - w.offset_bytes;
        let (ws_start, mut ws_len) = narrowed(
            w,
            w.offset_bytes,
            w.size_bytes.unwrap_or(room.saturating_sub(spread)),
        );
        ws_len = super::extension::working_set(run, w, t.uri, ws_len)?;
        if w.offset_bytes + spread + ws_len > t.size_bytes || ws_len == 0 {
            return Err(invalid(format!(
                "working set {}..{} extends beyond the end of target '{}' ({} bytes){}",
                w.offset_bytes,
                w.offset_bytes + spread + ws_len,
                t.uri,
                t.size_bytes,
                if spread > 0 {
                    format!(" with its last stream {spread} bytes further (offset_increment)")
                } else {
                    String::new()
                }
            )));
        }
        if w.bs.max_bytes() > ws_len {
            return Err(invalid(format!(
                "block size {} is larger than the working set ({} bytes)",
                crate::plan::units::format_size(w.bs.max_bytes()),
                ws_len
            )));
        }
        check_blocks(run, w, t)?;
        check_dist(run, w, ws_len)?;
        let files = super::file_sets::SetFiles {
            stride_bytes: t.file_bytes,
            lens: t.file_lens.as_deref(),
        };
        super::file_sets::check_workload(run, w, &files, t.uri, ws_len)?;
        check_direct(run, w, t).map_err(invalid)?;
        resolved.push(Resolved {
            target: ti as u32,
            ws_start,
            ws_len,
            file_bytes: t.file_bytes,
            file_lens: t.file_lens.clone(),
        });
    }
    Ok(resolved)
}

/// A workload's share, rate, partly random access, random map and narrowed range:
/// numbers in their ranges, and a partly random or mapped workload one whose offsets
/// the stream draws.
fn check_shares_and_ranges(w: &crate::plan::model::Workload) -> Result<(), String> {
    use crate::plan::settings::declared::{RANDOM_PCT, RANGE_FROM_PCT, RANGE_TO_PCT};
    if let Some(p) = w.share_pct.filter(|p| !(p.is_finite() && *p > 0.0)) {
        return Err(format!("share {p} must be a positive number"));
    }
    if let Rate::Iops(r) = w.rate {
        if !(r.is_finite() && r > 0.0) {
            return Err(format!("rate {r} must be a positive number"));
        }
    }
    let partly = w.settings.ratio(&RANDOM_PCT) < 100.0;
    let drawn = matches!(w.pattern, crate::plan::model::AccessPattern::Random)
        && w.zones.is_none()
        && !super::extension::places_offsets(w)
        && !matches!(w.dist, crate::plan::model::Distribution::Sequence { .. });
    if partly && !drawn {
        return Err(
            "random_pct below 100 needs random access without zones, zbd, \
                    sprandom or a sequence distribution"
                .into(),
        );
    }
    if let Some(why) = super::random_map::misfit(w) {
        return Err(why.into());
    }
    let (from, to) = (
        w.settings.ratio(&RANGE_FROM_PCT),
        w.settings.ratio(&RANGE_TO_PCT),
    );
    if from >= to {
        return Err(format!(
            "range_from_pct ({from}) must be below range_to_pct ({to})"
        ));
    }
    Ok(())
}

/// The working set `(start, len)` narrowed to its part from `range_from_pct` to
/// `range_to_pct`, both ends rounded down to a multiple of the largest block size
/// from its start (as vdbench rounds a range); unchanged without them.
fn narrowed(w: &crate::plan::model::Workload, start: u64, len: u64) -> (u64, u64) {
    use crate::plan::settings::declared::{RANGE_FROM_PCT, RANGE_TO_PCT};
    let (from, to) = (
        w.settings.ratio(&RANGE_FROM_PCT),
        w.settings.ratio(&RANGE_TO_PCT),
    );
    if from <= 0.0 && to >= 100.0 {
        return (start, len);
    }
    let unit = w.bs.max_bytes().max(1);
    let at = |pct: f64| ((len as f64 * pct / 100.0) as u64).min(len) / unit * unit;
    let (a, b) = (at(from), at(to));
    (start + a, b.saturating_sub(a))
}

/// A sequence distribution's blocks must all lie in the working set (fio refuses a
/// base block past it too), and only random access takes one; vdbench's hotband
/// needs a band it can use (`hotband::misfit`).
fn check_dist(
    run: &RunSpec,
    w: &crate::plan::model::Workload,
    ws_len: u64,
) -> Result<(), RunError> {
    let invalid = |msg: String| RunError::Invalid {
        run: run.name.clone(),
        workload: w.name.clone(),
        msg,
    };
    if let Some(why) = super::hotband::misfit(w, ws_len) {
        return Err(invalid(why));
    }
    let crate::plan::model::Distribution::Sequence { blocks, .. } = &w.dist else {
        return Ok(());
    };
    if blocks.is_empty() {
        return Err(invalid(
            "a sequence distribution needs at least one block".into(),
        ));
    }
    if !matches!(w.pattern, crate::plan::model::AccessPattern::Random) || w.zones.is_some() {
        return Err(invalid(
            "a sequence distribution orders random offsets: it needs random access \
             without zones"
                .into(),
        ));
    }
    let unit = w.align_bytes.unwrap_or(w.bs.min_bytes()).max(1);
    let slots = (ws_len - w.bs.max_bytes()) / unit + 1;
    if let Some(b) = blocks.iter().find(|&&b| b >= slots) {
        return Err(invalid(format!(
            "sequence block {b} is past the working set, which has {slots} blocks of \
             {unit} bytes (0..{})",
            slots - 1
        )));
    }
    Ok(())
}

/// An iSCSI LUN takes only whole blocks: block sizes, offset and size must be
/// multiples of its block size.
fn check_blocks(
    run: &RunSpec,
    w: &crate::plan::model::Workload,
    t: &Geometry,
) -> Result<(), RunError> {
    let (true, Some(a)) = (t.blocks, t.align_bytes) else {
        return Ok(());
    };
    let invalid = |msg: String| RunError::Invalid {
        run: run.name.clone(),
        workload: w.name.clone(),
        msg,
    };
    if let Some(&(b, _)) = w.bs.all().find(|&&(b, _)| b % a != 0) {
        return Err(invalid(format!(
            "block size {b} is not a multiple of the LUN's {a}-byte blocks ('{}')",
            t.uri
        )));
    }
    if w.offset_bytes % a != 0 || w.size_bytes.is_some_and(|s| s % a != 0) {
        return Err(invalid(format!(
            "offset and size must be multiples of the LUN's {a}-byte blocks ('{}')",
            t.uri
        )));
    }
    Ok(())
}

/// Every check that needs no target to be opened for writing: the plan, the
/// clock, the engine against the targets' kinds, the workloads against the probed
/// targets. Creates, extends and allocates nothing.
fn check_probed(
    run: &RunSpec,
    specs: &[TargetSpec],
    opts: &RunOptions,
) -> Result<(Vec<usize>, Vec<Probe>), RunError> {
    check_plan(run, opts)?;
    check_clock(run, specs)?;
    let used = used_targets(run, specs)?;
    for g in super::groups::groups(run) {
        super::extension::check_each(|x| (x.check_targets)(&g.run, specs))?;
    }
    check_paths(run, specs, &used, opts)?;
    let probes = used
        .iter()
        .map(|&ti| {
            let io = open_options(run, &specs[ti], opts);
            again(&specs[ti], (opts, true), io, target::probe)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let kinds: Vec<ProbeKind> = probes.iter().map(|p| p.kind).collect();
    check_mixed(run, &kinds)?;
    for g in super::groups::groups(run) {
        let own = group_targets(&g.run, specs, &used);
        let kinds: Vec<ProbeKind> = own.iter().map(|&i| probes[i].kind).collect();
        check_engine_fits(run, g.run.engine, &kinds)?;
        let (used, probes): (Vec<usize>, Vec<Probe>) =
            own.iter().map(|&i| (used[i], probes[i].clone())).unzip();
        check_tuning_probed(&g.run, specs, &used, &probes)?;
    }
    let geometry: Vec<Geometry> = probes.iter().map(Geometry::from).collect();
    resolve_workloads(run, specs, &used, &geometry)?;
    Ok((used, probes))
}

/// Positions in `used` of the targets `run`'s workloads use (a group's own).
pub(super) fn group_targets(run: &RunSpec, specs: &[TargetSpec], used: &[usize]) -> Vec<usize> {
    let mut own: Vec<usize> = Vec::new();
    for w in &run.workloads {
        if let Some(p) = used.iter().position(|&ti| specs[ti].name == w.target) {
            if !own.contains(&p) {
                own.push(p);
            }
        }
    }
    own
}

/// Workloads with engines or CPUs of their own run on workers of their own, which
/// open their own engines on the run's targets: local targets only (a network target
/// has its connections and multi-conn rules per run).
fn check_mixed(run: &RunSpec, kinds: &[ProbeKind]) -> Result<(), RunError> {
    if run.mixes_workers() && kinds.iter().any(|k| k.desc().engine.desc().network) {
        return Err(RunError::Setup {
            run: run.name.clone(),
            msg: "workloads with an engine, io_uring options or CPUs of their own need local \
                  targets (files, devices, mem:, null:, sim:); this run has a network target"
                .into(),
        });
    }
    Ok(())
}

/// A target with several paths: the run's only target, one connection per path and
/// worker, and a per-path deadline of at least 100 ms.
fn check_paths(
    run: &RunSpec,
    specs: &[TargetSpec],
    used: &[usize],
    opts: &RunOptions,
) -> Result<(), RunError> {
    let Some(t) = used
        .iter()
        .map(|&i| &specs[i])
        .find(|t| t.multipath.is_some())
    else {
        return Ok(());
    };
    let setup = |msg: String| RunError::Setup {
        run: run.name.clone(),
        msg,
    };
    if used.len() > 1 {
        return Err(setup(format!(
            "target '{}' has several paths and must be the run's only target",
            t.uri
        )));
    }
    if opts.connections > 1 {
        return Err(setup(
            "a target with several paths uses one connection per path; --connections does not apply".into(),
        ));
    }
    if let Some(ns) = opts.io_timeout_ns {
        crate::plan::paths::check_path_timeout(&format!("{}ms", ns / 1_000_000), ns).map_err(
            |source| RunError::Paths {
                run: run.name.clone(),
                source,
            },
        )?;
    }
    Ok(())
}

/// Checks a run against its targets (safety, sizes, alignment, engine) without
/// creating, extending or writing anything, and without issuing any I/O.
pub fn check(run: &RunSpec, specs: &[TargetSpec], opts: &RunOptions) -> Result<(), RunError> {
    let outcome = check_local(run, specs, opts);
    // Among MPI ranks: one rank's failed check stops all of them, naming it.
    let failure = outcome
        .as_ref()
        .err()
        .map(|e| crate::errors::Chain(e).to_string());
    let agreed = crate::cluster::agree(failure).map_err(|source| RunError::Cluster {
        run: run.name.clone(),
        source,
    });
    // Rank 0 speaks for all: its message names every rank that failed, itself too.
    match (outcome, agreed) {
        (Err(own), Err(all)) if !crate::cluster::is_writer() || !crate::cluster::active() => {
            drop(all);
            Err(own)
        }
        (_, Err(all)) => Err(all),
        (outcome, Ok(())) => outcome,
    }
}

/// Among MPI ranks, this rank's share of `run` and its targets with their paths
/// resolved ({rank}, {host}); `None`: the run as given (no launcher).
pub(super) fn rank_share(
    run: &RunSpec,
    specs: &[TargetSpec],
) -> Result<Option<(RunSpec, Vec<TargetSpec>)>, RunError> {
    crate::cluster::localize(run, specs).map_err(|source| RunError::Placement {
        run: run.name.clone(),
        source,
    })
}

/// [`check`] on this process alone.
fn check_local(run: &RunSpec, specs: &[TargetSpec], opts: &RunOptions) -> Result<(), RunError> {
    let expanded = super::replay::expand(run)?;
    let run = expanded.as_ref().unwrap_or(run);
    // Among MPI ranks: the rank's own share and target paths ({rank}, {host}).
    let local = rank_share(run, specs)?;
    let (run, specs) = local
        .as_ref()
        .map_or((run, specs), |(r, t)| (r, t.as_slice()));
    // Trace workloads: the trace read (a bad one is bad input).
    let replayed = super::replay::prepare(run)?;
    let run = replayed.as_ref().map_or(run, |(r, _)| r);
    let opts = &*opts.for_run(run);
    let (_, probes) = check_probed(run, specs, opts)?;
    // Opening (network targets below, and every later open) needs the clock chosen.
    super::timebase::choose_clock(run, specs);
    // Nothing to create or extend (network targets, devices, files already large
    // enough, RAM): open them and run the checks that need an open target (io_uring
    // options, durability, multi-conn) here too, so they fail as bad input.
    // A file set may be laid out when opened (stat and delete runs).
    let creates = |p: &Probe| {
        matches!(p.kind, ProbeKind::File) && p.existing_len.map_or(true, |l| l < p.size_bytes)
            || p.kind == ProbeKind::Files
    };
    if !probes.iter().any(creates) {
        // Network targets only (nothing local to create): what the servers say when
        // connected (multi-conn) decides the rest.
        prepare(run, specs, opts)?;
    }
    Ok(())
}

/// A run's opened targets, checked and ready to launch.
pub(super) struct Prepared {
    pub targets: Targets,
    pub resolved: Vec<Resolved>,
    /// The run's engine as the result names it (the groups' joined when they differ).
    pub choice: super::engine_choice::EngineChoice,
    /// Each worker group with the engine chosen for its targets.
    pub groups: Vec<(super::groups::Group, super::engine_choice::EngineChoice)>,
    /// Each opened target's length before the run (`None`: this run created it).
    existing_lens: Vec<Option<u64>>,
}

impl Prepared {
    /// Undoes what opening did — removes the files it created, truncates the ones it
    /// extended — when the run fails before its first I/O. Best effort: the error
    /// that made us undo is the one to report.
    pub fn undo(&self) {
        undo_open(&self.targets, &self.existing_lens);
    }
}

fn undo_open(opened: &[Arc<OpenTarget>], existing_lens: &[Option<u64>]) {
    for t in opened {
        if let Backing::Files(set) = &t.backing {
            set.undo();
        }
        if let Some(set) = t.byte_files() {
            set.undo();
        }
    }
    for (t, &len) in opened.iter().zip(existing_lens) {
        if let Backing::File {
            path,
            is_block: false,
            set: None,
            ..
        } = &t.backing
        {
            let _ = target::undo_open(path, len);
        }
    }
}

/// Checks a run, then opens its targets (creating or extending files), checks the
/// workloads against them and chooses the engine, and runs the checks that need
/// open targets (io_uring options, durability, multi-conn); a failure after opening
/// undoes what opening did.
pub(super) fn prepare(
    run: &RunSpec,
    specs: &[TargetSpec],
    opts: &RunOptions,
) -> Result<Prepared, RunError> {
    let (used, probes) = check_probed(run, specs, opts)?;
    let existing_lens: Vec<Option<u64>> = probes.iter().map(|p| p.existing_len).collect();
    let mut opened: Vec<Arc<OpenTarget>> = Vec::with_capacity(used.len());
    for &ti in &used {
        match open_target(&specs[ti], open_options(run, &specs[ti], opts), opts) {
            Ok(t) => opened.push(Arc::new(t)),
            Err(e) => {
                undo_open(&opened, &existing_lens);
                return Err(e.into());
            }
        }
    }
    invalidate_caches(run, specs, &used, &opened);
    let geometry: Vec<Geometry> = opened.iter().map(|t| Geometry::from(&**t)).collect();
    let resolved = match resolve_workloads(run, specs, &used, &geometry) {
        Ok(r) => r,
        Err(e) => {
            undo_open(&opened, &existing_lens);
            return Err(e);
        }
    };
    let targets: Targets = Arc::new(opened);
    let groups: Vec<_> = super::groups::groups(run)
        .into_iter()
        .map(|g| {
            let own: Vec<Arc<OpenTarget>> = group_targets(&g.run, specs, &used)
                .into_iter()
                .map(|i| targets[i].clone())
                .collect();
            let mut choice = super::engine_choice::resolve(g.key.engine, &own, &g.key.uring);
            if g.key.uring.is_default() {
                super::engine_choice::one_in_flight(&mut choice, g.key.engine, &g.run);
            }
            (g, choice)
        })
        .collect();
    let prepared = Prepared {
        targets,
        resolved,
        choice: super::engine_choice::combined(&groups),
        groups,
        existing_lens,
    };
    match check_opened(run, specs, &used, &prepared, opts) {
        Ok(()) => Ok(prepared),
        Err(e) => {
            prepared.undo();
            Err(e)
        }
    }
}

/// Opens a target; under `--on-error continue` or `retry=N` a server that fails its
/// start-up probe (connection, login, the read of the first bytes) is tried again on
/// the reconnect schedule, as a lost connection is during the run, and the run says
/// so on standard error.
fn open_target(
    spec: &TargetSpec,
    io: target::OpenOptionsIo,
    opts: &RunOptions,
) -> Result<OpenTarget, target::TargetError> {
    again(spec, (opts, false), io, target::open)
}

/// `attempt` (a probe or an open of `spec`), tried again as [`open_target`] says.
/// With `answer`, a network target's attempt (the probe, which connects, logs in and
/// reads the first bytes but lays nothing out) must answer within the start-up
/// deadline ([`target::retry::answered_within`]).
fn again<T: Send + 'static>(
    spec: &TargetSpec,
    (opts, answer): (&RunOptions, bool),
    io: target::OpenOptionsIo,
    attempt: fn(&TargetSpec, target::OpenOptionsIo) -> Result<T, target::TargetError>,
) -> Result<T, target::TargetError> {
    let limit_ns = target::retry::startup_limit_ns(opts.io_timeout_ns);
    let network = answer && target::over_network(&spec.uri);
    let once = || {
        if !network {
            return attempt(spec, io);
        }
        let own = spec.clone();
        target::retry::answered_within(&spec.uri, limit_ns, move || attempt(&own, io))
    };
    if opts.policy == super::ErrorPolicy::Stop {
        return once();
    }
    target::retry::open_again(&target::retry::Reconnect::default(), once, |how| {
        eprintln!("ioscope: target '{}': {how}", spec.uri)
    })
}

/// The declared setting `invalidate` (fio's): the page cache of each buffered file or
/// device a workload asks it of is dropped before the run, so buffered reads start
/// cold. Dirty pages survive POSIX_FADV_DONTNEED, so they are written back first.
/// Under O_DIRECT the cache is never read, and other targets have none. Advisory, as
/// in fio: a file system that keeps its pages anyway (tmpfs) is not an error.
fn invalidate_caches(
    run: &RunSpec,
    specs: &[TargetSpec],
    used: &[usize],
    opened: &[Arc<OpenTarget>],
) {
    use crate::plan::settings::declared::INVALIDATE;
    for (&ti, t) in used.iter().zip(opened) {
        let asks =
            |w: &crate::plan::Workload| w.target == specs[ti].name && w.settings.flag(&INVALIDATE);
        if t.direct || !run.workloads.iter().any(asks) {
            continue;
        }
        let fds: Vec<i32> = match t.byte_files() {
            Some(set) => set.fds().to_vec(),
            None => t.fd().into_iter().collect(),
        };
        for fd in fds {
            // SAFETY: `fd` belongs to the open target, which outlives this call;
            // fdatasync and posix_fadvise read and write no memory of ours.
            unsafe {
                libc::fdatasync(fd);
                libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
    }
}

/// The checks that need the opened targets and the engine chosen for them, group by
/// group.
fn check_opened(
    run: &RunSpec,
    specs: &[TargetSpec],
    used: &[usize],
    p: &Prepared,
    opts: &RunOptions,
) -> Result<(), RunError> {
    for (g, choice) in &p.groups {
        let own: Vec<Arc<OpenTarget>> = group_targets(&g.run, specs, used)
            .into_iter()
            .map(|i| p.targets[i].clone())
            .collect();
        let own: Targets = Arc::new(own);
        check_uring(&g.run, choice.kind, &own)?;
        super::request_flags::check(&g.run, choice.kind, &own)?;
        let kinds: Vec<_> = own.iter().map(|t| t.probe_kind()).collect();
        check_engine_fits(run, choice.kind, &kinds)?;
        check_network(&g.run, choice.kind, &own, opts.connections)?;
        super::trim::check_opened(&g.run, choice.kind, &own)?;
    }
    Ok(())
}

/// Virtual time is the whole process's clock once one target asks for it: then every
/// target of the plan must be a simulated device on it.
pub(super) fn check_clock(run: &RunSpec, specs: &[TargetSpec]) -> Result<(), RunError> {
    let on_virtual_time = |s: &TargetSpec| matches!(target::parse_uri(&s.uri), Ok(TargetKind::Sim(sim)) if sim.virtual_time);
    let Some(v) = specs.iter().find(|s| on_virtual_time(s)) else {
        return Ok(());
    };
    match specs.iter().find(|s| !on_virtual_time(s)) {
        Some(real) => Err(RunError::Setup {
            run: run.name.clone(),
            msg: format!(
                "'{}' runs on real time, but '{}' puts the process on virtual time: \
                 every target must then be a sim target with time=virtual",
                real.uri, v.uri
            ),
        }),
        None => Ok(()),
    }
}

/// On virtual time (a target asked for it when opened): only the sim engine can run,
/// and the run says what its figures mean. Returns the warning to show.
pub(super) fn check_virtual_time(
    run: &RunSpec,
    specs: &[TargetSpec],
    engine: EngineKind,
) -> Result<Option<String>, RunError> {
    if !crate::clock::is_virtual() {
        return Ok(None);
    }
    check_clock(run, specs)?;
    if engine != EngineKind::Sim {
        return Err(RunError::Setup {
            run: run.name.clone(),
            msg: format!("virtual time needs the sim engine, not {}", engine.name()),
        });
    }
    Ok(Some(format!(
        "run '{}': on virtual time: IOPS and latency are the simulated device's exact figures; \
         CPU figures compare real CPU time with simulated time and mean nothing",
        run.name
    )))
}

/// Verification state per engine target (shared by workers and later runs): for the
/// targets a verifying workload uses (every target with `--journal`).
pub(super) fn verify_states(
    run: &RunSpec,
    targets: &Targets,
    opts: &RunOptions,
) -> Result<Vec<Option<super::data::TargetState>>, RunError> {
    let verified = |t: &OpenTarget| {
        opts.data.journal.is_some()
            || run
                .workloads
                .iter()
                .any(|w| w.target == t.name && opts.data.for_workload(w).verify)
    };
    let multi = targets.len() > 1;
    targets
        .iter()
        .map(|t| {
            if !verified(t) {
                return Ok(None);
            }
            let dir =
                opts.data
                    .journal
                    .as_ref()
                    .map(|d| if multi { d.join(&t.name) } else { d.clone() });
            opts.data
                .registry
                .target(&t.uri, t.size_bytes, &opts.data, dir)
                .map(Some)
                .map_err(|source| RunError::VerifyState {
                    run: run.name.clone(),
                    source,
                })
        })
        .collect()
}

/// CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills the zeroed set we pass.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let v: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect();
            if !v.is_empty() {
                return v;
            }
        }
    }
    (0..crate::stats::cpu::online_cpus()).collect()
}

#[cfg(test)]
mod tests {
    use crate::plan::settings::declared::{RANDOM_PCT, RANGE_FROM_PCT, RANGE_TO_PCT};
    use crate::plan::settings::Value;

    // vdbench's range=(10,20) on a 1 GiB device: 10 % to 20 % of it, both ends
    // rounded down to the largest transfer size (64 KiB here), after the offset.
    #[test]
    fn a_range_in_percent_narrows_the_working_set_to_whole_blocks() {
        let mut w = crate::plan::model::Workload {
            bs: crate::plan::model::BlockSizes::of(vec![(4096, 50), (65536, 50)]),
            ..Default::default()
        };
        let gib = 1u64 << 30;
        assert_eq!(super::narrowed(&w, 4096, gib), (4096, gib));
        w.settings.set(&RANGE_FROM_PCT, Value::Ratio(10.0));
        w.settings.set(&RANGE_TO_PCT, Value::Ratio(20.0));
        let down = |b: u64| b / 65536 * 65536;
        let (from, to) = (down(gib / 10), down(gib / 5));
        assert_eq!(super::narrowed(&w, 4096, gib), (4096 + from, to - from));
        let mut bad = w.clone();
        bad.settings.set(&RANGE_FROM_PCT, Value::Ratio(30.0));
        let e = super::check_shares_and_ranges(&bad).unwrap_err();
        assert!(e.contains("must be below range_to_pct"), "{e}");
    }

    #[test]
    fn random_pct_below_100_needs_drawn_random_offsets() {
        let mut w = crate::plan::model::Workload {
            pattern: crate::plan::model::AccessPattern::Sequential,
            bs: crate::plan::model::BlockSizes::fixed(4096),
            ..Default::default()
        };
        w.settings.set(&RANDOM_PCT, Value::Ratio(50.0));
        let e = super::check_shares_and_ranges(&w).unwrap_err();
        assert!(
            e.contains("random_pct below 100 needs random access"),
            "{e}"
        );
        w.pattern = crate::plan::model::AccessPattern::Random;
        assert_eq!(super::check_shares_and_ranges(&w), Ok(()));
    }
}
