//! `ioscope verify --journal DIR`: after a crash, power loss or kill -9, read back
//! every unit the journal knows was written and report lost, misplaced and corrupted
//! writes. A write that was in flight at the crash may hold its old or its new content.

use super::{exit, AppError};
use crate::cli::VerifyArgs;
use crate::data::{check, Journal};
use crate::plan::model::TargetSpec;
use crate::result::VerifyResult;
use crate::run::data::{record, target_id};
use crate::target::{self, Backing};
use std::path::{Path, PathBuf};

/// Journal directories under `dir`: itself, or its subdirectories (one per target).
fn journal_dirs(dir: &Path) -> Result<Vec<PathBuf>, AppError> {
    if dir.join("journal.hdr").exists() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let rd = std::fs::read_dir(dir)
        .map_err(|e| AppError::Input(format!("--journal '{}': {e}", dir.display())))?;
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("journal.hdr").exists())
        .collect();
    v.sort();
    if v.is_empty() {
        return Err(AppError::Input(format!(
            "--journal '{}': no ioscope journal here",
            dir.display()
        )));
    }
    Ok(v)
}

/// Verifies one journaled target.
fn verify_one(
    dir: &Path,
    target_override: Option<&str>,
) -> Result<(String, VerifyResult), AppError> {
    let rec = Journal::load(dir)
        .map_err(|e| AppError::Input(format!("journal '{}': {e}", dir.display())))?;
    let uri = target_override.unwrap_or(&rec.header.target).to_string();
    let id = target_id(&rec.header.target);
    let unit = rec.header.unit_bytes as u64;
    let t = target::open(
        &TargetSpec {
            name: "t0".into(),
            uri: uri.clone(),
            size_bytes: None,
            direct: None,
        },
        target::OpenOptionsIo::default(),
    )
    .map_err(|e| AppError::Input(super::chain(&e)))?;
    if !matches!(
        t.backing,
        Backing::File { .. } | Backing::Nbd(_) | Backing::Smb(_)
    ) {
        return Err(AppError::Input(format!(
            "target '{uri}': only files, block devices, NBD exports and SMB files can be verified after the fact"
        )));
    }
    let read_at = |data: &mut [u8], off: u64| -> std::io::Result<()> {
        match &t.backing {
            Backing::File { file, .. } => {
                use std::os::unix::fs::FileExt;
                file.read_exact_at(data, off)
            }
            Backing::Nbd(n) => n.read_at(data, off),
            Backing::Smb(s) => s.read_at(data, off),
            _ => Err(std::io::Error::other("this target cannot be read back")),
        }
    };
    let units = rec.map.len() as u64;
    let mut out = VerifyResult::default();
    let chunk_units = ((1u64 << 20) / unit).max(1);
    let mut buf = crate::run::buffers::AlignedBuf::new((chunk_units * unit) as usize)
        .ok_or_else(|| AppError::Runtime("cannot allocate the verify buffer".into()))?;
    let mut u = 0;
    while u < units {
        if !rec.expectation(u).is_tracked() {
            u += 1;
            continue;
        }
        let n = chunk_units.min(units - u);
        let off = u * unit;
        let data = &mut buf.as_mut_slice()[..(n * unit) as usize];
        read_at(data, off)
            .map_err(|e| AppError::Runtime(format!("reading '{uri}' at {off}: {e}")))?;
        for i in 0..n {
            let e = rec.expectation(u + i);
            if !e.is_tracked() {
                continue;
            }
            let o = off + i * unit;
            record(
                &mut out,
                check(
                    &data[(i * unit) as usize..((i + 1) * unit) as usize],
                    id,
                    o,
                    &e,
                ),
                &uri,
                o,
            );
        }
        u += n;
    }
    Ok((uri, out))
}

/// `ioscope verify`.
pub fn verify(a: &VerifyArgs) -> Result<i32, AppError> {
    let dirs = journal_dirs(&a.journal)?;
    if a.target.is_some() && dirs.len() > 1 {
        return Err(AppError::Input(
            "--target names one target, but the journal holds several".into(),
        ));
    }
    let mut all = VerifyResult::default();
    let mut per_target = Vec::new();
    for d in &dirs {
        let (uri, r) = verify_one(d, a.target.as_deref())?;
        println!(
            "{uri}: {} units checked: {} ok, {} torn (tolerated), {} mismatches ({} corrupted, {} misplaced, {} stale/lost, {} never written, {} unexpected)",
            r.units_checked, r.ok, r.torn, r.mismatches, r.corrupted, r.misplaced, r.stale, r.never_written, r.unexpected
        );
        for s in &r.samples {
            println!("  {}", s.detail);
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
        .map_err(|e| AppError::Runtime(format!("writing '{}': {e}", p.display())))?;
    }
    Ok(if all.mismatches > 0 {
        exit::VERIFY_MISMATCH
    } else {
        exit::OK
    })
}
