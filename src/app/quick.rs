//! `ioscope quick`: four short tests on a scratch file (or a given file or device) and
//! a summary table — the first thing a newcomer runs.

use super::{run_plan, AppError, Outcome, Output, QuickInvocation};
use crate::plan::model::*;
use crate::plan::units::HumanBytes;
use crate::result::ResultDoc;
use crate::run::RunOptions;
use std::path::{Path, PathBuf};

/// Removes the scratch file of `quick` however the command ends.
struct Scratch(Option<PathBuf>);

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Free bytes on the filesystem holding `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct; the path is a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Whether `t` names an NBD export or iSCSI LUN rather than a path.
fn is_network(t: &std::path::Path) -> bool {
    use crate::plan::model::TargetKind;
    matches!(
        crate::target::parse_uri(&t.to_string_lossy()),
        Ok(TargetKind::Nbd(_) | TargetKind::Iscsi(_))
    )
}

/// Whether `t` names a file on an NFS export.
fn is_nfs_file(t: &std::path::Path) -> bool {
    use crate::plan::model::TargetKind;
    matches!(
        crate::target::parse_uri(&t.to_string_lossy()),
        Ok(TargetKind::Nfs(_))
    )
}

/// `ioscope quick`: four short tests and a summary table.
pub fn quick(a: QuickInvocation) -> Result<Outcome, AppError> {
    let duration_ns = a.duration_ns;
    let want = a.size_bytes.unwrap_or(1 << 30);
    let (uri, scratch, writes_ok, size) = match &a.target {
        None => {
            let dir = std::env::temp_dir();
            let (p, size) = scratch_in(&dir, want)?;
            (p.display().to_string(), Some(p), true, Some(size))
        }
        Some(t) if t.is_dir() => {
            let (p, size) = scratch_in(t, want)?;
            (p.display().to_string(), Some(p), true, Some(size))
        }
        // A network target (nbd://, iscsi://) is treated like a block device: its
        // contents are someone's, so writes need --force.
        Some(t) if is_network(t) => (t.display().to_string(), None, a.force, None),
        // A file on an NFS export follows a plain file's rules: writes are fine, and
        // --size creates it when missing.
        Some(t) if is_nfs_file(t) => (t.display().to_string(), None, true, a.size_bytes),
        Some(t) => {
            use std::os::unix::fs::FileTypeExt;
            let meta = std::fs::metadata(t).map_err(|source| AppError::Read {
                what: "target",
                path: t.clone(),
                source,
            })?;
            let is_block = meta.file_type().is_block_device();
            (t.display().to_string(), None, !is_block || a.force, None)
        }
    };
    let _guard = Scratch(scratch);
    let target = TargetSpec {
        size_bytes: size,
        ..TargetSpec::new("t0", uri)
    };
    let mk = |name: &str, pattern: AccessPattern, read_pct: u8, bs: u64, qd: u32| RunSpec {
        name: name.into(),
        workloads: vec![Workload {
            name: name.into(),
            target: "t0".into(),
            read_pct,
            pattern,
            bs: BlockSizes::fixed(bs),
            qd,
            streams: 1,
            rate: Rate::Max,
            offset_bytes: 0,
            size_bytes: None,
            ..Default::default()
        }],
        duration_ns: Some(duration_ns),
        warmup_ns: 1_000_000_000,
        ..RunSpec::default()
    };
    let mut runs = vec![mk("4k-randread", AccessPattern::Random, 100, 4096, 32)];
    if writes_ok {
        runs.push(mk("4k-randwrite", AccessPattern::Random, 0, 4096, 32));
    }
    runs.push(mk("1m-seqread", AccessPattern::Sequential, 100, 1 << 20, 8));
    if writes_ok {
        runs.push(mk("1m-seqwrite", AccessPattern::Sequential, 0, 1 << 20, 8));
    }
    let mut warnings = Vec::new();
    if !writes_ok {
        warnings.push(format!(
            "'{}' is a block device or network target: only the read tests run (add --force to run the write tests, destroying its contents)",
            target.uri
        ));
    }
    let plan = Plan {
        targets: vec![target],
        runs,
        warnings,
        data: Default::default(),
    };
    if let Some(s) = size.filter(|_| _guard.0.is_some()) {
        if !a.output.quiet {
            outln!(
                "quick: scratch file of {} ({})",
                HumanBytes(s),
                plan.targets[0].uri
            )?;
        }
    }
    let quiet_out = Output {
        quiet: true,
        markdown: false,
        no_run_summaries: true,
        ..a.output.clone()
    };
    let opts = RunOptions {
        force: a.force,
        ..Default::default()
    };
    let outcome = run_plan(&plan, &quiet_out, &opts, a.command)?;
    if !a.output.stdout_is_doc() {
        outln!("\n{}", quick_table(&outcome.doc))?;
        if a.output.markdown {
            outln!(
                "\n{}",
                crate::report::markdown::render_markdown(&outcome.doc)
            )?;
        }
    }
    Ok(outcome)
}

/// Picks a scratch path and size (1 GiB, or a quarter of the free space when short).
fn scratch_in(dir: &Path, want: u64) -> Result<(PathBuf, u64), AppError> {
    let free = free_bytes(dir)
        .ok_or_else(|| AppError::Refused(format!("'{}': cannot read free space", dir.display())))?;
    let size = want.min(free / 4) / (1 << 20) * (1 << 20);
    if size < 16 << 20 {
        return Err(AppError::Refused(format!(
            "'{}' has only {} free; quick needs a scratch file of at least 16 MiB (a quarter of the free space)",
            dir.display(),
            HumanBytes(free)
        )));
    }
    let p = dir.join(format!("ioscope-quick-{}.dat", std::process::id()));
    Ok((p, size))
}

/// The summary table `quick` prints.
pub fn quick_table(doc: &ResultDoc) -> String {
    let mut s = format!(
        "{:<14} {:>12} {:>10} {:>11} {:>11} {:>11} {:>8}\n",
        "test", "IOPS", "MB/s", "mean lat", "p99 lat", "p99.9 lat", "errors"
    );
    for r in &doc.runs {
        let t = &r.totals.all;
        s.push_str(&format!(
            "{:<14} {:>12.0} {:>10.1} {:>8.1} us {:>8.1} us {:>8.1} us {:>8}\n",
            r.name,
            t.iops,
            t.mbps,
            t.latency_us.mean,
            t.latency_us.p99,
            t.latency_us.p99_9,
            t.errors
        ));
    }
    s.push_str(&format!(
        "target: {} ({} engine)",
        doc.runs.first().map(|r| r.target.as_str()).unwrap_or("-"),
        doc.runs.first().map(|r| r.engine.as_str()).unwrap_or("-")
    ));
    s
}
