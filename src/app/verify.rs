//! `ioscope verify --journal DIR`: after a crash, power loss or kill -9, read back
//! every unit the journal knows was written and report lost, misplaced and corrupted
//! writes. A write that was in flight at the crash may hold its old or its new content.

use super::{exit, AppError, FlagError, VerifyInvocation};
use crate::data::{check, Journal};
use crate::plan::model::TargetSpec;
use crate::result::VerifyResult;
use crate::run::data::{record, target_id};
use crate::target;
use std::path::{Path, PathBuf};

/// Journal directories under `dir`: itself, or its subdirectories (one per target).
fn journal_dirs(dir: &Path) -> Result<Vec<PathBuf>, AppError> {
    if dir.join("journal.hdr").exists() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let rd = std::fs::read_dir(dir).map_err(|source| AppError::Read {
        what: "--journal",
        path: dir.to_path_buf(),
        source,
    })?;
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("journal.hdr").exists())
        .collect();
    v.sort();
    if v.is_empty() {
        return Err(FlagError::new(
            "--journal",
            dir.display().to_string(),
            "no ioscope journal here",
        )
        .into());
    }
    Ok(v)
}

/// Verifies one journaled target.
fn verify_one(
    dir: &Path,
    target_override: Option<&str>,
) -> Result<(String, VerifyResult), AppError> {
    let rec = Journal::load(dir)?;
    let uri = target_override.unwrap_or(&rec.header.target).to_string();
    let id = target_id(&rec.header.target);
    let unit = rec.header.unit_bytes as u64;
    let t = open_for_reading(&uri)?;
    let units = rec.map.len() as u64;
    let mut out = VerifyResult::default();
    let chunk_units = ((1u64 << 20) / unit).max(1);
    let mut buf = crate::run::buffers::AlignedBuf::new((chunk_units * unit) as usize)
        .ok_or_else(|| AppError::Failed("cannot allocate the verify buffer".into()))?;
    let mut u = 0;
    while u < units {
        // Only written units are read: a file of a tree shorter than its slot ends
        // before the slot does, so a read must not run past what was written.
        let n = (u..units.min(u + chunk_units))
            .take_while(|&v| rec.expectation(v).is_tracked())
            .count() as u64;
        if n == 0 {
            u += 1;
            continue;
        }
        let off = u * unit;
        let data = &mut buf.as_mut_slice()[..(n * unit) as usize];
        t.read_at(data, off)
            .unwrap_or(Ok(()))
            .map_err(|source| AppError::ReadBack {
                uri: uri.clone(),
                offset: off,
                source,
            })?;
        for i in 0..n {
            let o = off + i * unit;
            let unit_data = &data[(i * unit) as usize..((i + 1) * unit) as usize];
            record(
                &mut out,
                check(unit_data, id, o, &rec.expectation(u + i)),
                &uri,
                o,
            );
        }
        u += n;
    }
    Ok((uri, out))
}

/// Opens the journaled target to read it back, making nothing: a file set (a
/// vdbench tree) is read as bytes, and only when every file is there at its length
/// (opening it for I/O would create or extend the missing ones).
fn open_for_reading(uri: &str) -> Result<target::OpenTarget, AppError> {
    let spec = TargetSpec::new("t0", uri);
    let mut opts = target::OpenOptionsIo::default();
    if let Ok(crate::plan::model::TargetKind::Files(_)) = target::parse_uri(uri) {
        opts.set_use = Some(target::fileset::SetUse::Bytes);
        if target::probe(&spec, opts)?.existing_len.is_none() {
            return Err(AppError::Refused(format!(
                "target '{uri}': some of its files are missing or shorter than the set's \
                 length; verify reads back and creates nothing"
            )));
        }
    }
    let t = target::open(&spec, opts)?;
    if !t.is_persistent() {
        return Err(AppError::Refused(format!(
            "target '{uri}': only files, file sets, block devices and network targets can be verified after the fact"
        )));
    }
    Ok(t)
}

/// `ioscope verify`.
pub fn verify(a: &VerifyInvocation) -> Result<i32, AppError> {
    let dirs = journal_dirs(&a.journal)?;
    if a.target.is_some() && dirs.len() > 1 {
        return Err(AppError::Refused(
            "--target names one target, but the journal holds several".into(),
        ));
    }
    let mut all = VerifyResult::default();
    let mut per_target = Vec::new();
    for d in &dirs {
        let (uri, r) = verify_one(d, a.target.as_deref())?;
        outln!(
            "{uri}: {} units checked: {} ok, {} torn (tolerated), {} mismatches ({} corrupted, {} misplaced, {} stale/lost, {} never written, {} unexpected)",
            r.units_checked, r.ok, r.torn, r.mismatches, r.corrupted, r.misplaced, r.stale, r.never_written, r.unexpected
        )?;
        for s in &r.samples {
            outln!("  {}", s.detail)?;
        }
        all += &r;
        per_target.push(serde_json::json!({"target": uri, "verify": r}));
    }
    if let Some(p) = &a.json {
        let v =
            serde_json::json!({"schema": "ioscope.verify/1", "targets": per_target, "total": all});
        crate::report::json::write_atomic_bytes(
            p,
            serde_json::to_string_pretty(&v)
                .unwrap_or_default()
                .as_bytes(),
        )
        .map_err(|source| AppError::Write {
            path: p.clone(),
            source,
        })?;
    }
    Ok(if all.mismatches > 0 {
        exit::VERIFY_MISMATCH
    } else {
        exit::OK
    })
}
