//! Data you can trust: write content, verification classes, the crash journal and the
//! error policy, through the real binary on real files and a loop device.

use super::*;
use ioscope::result::VerifyResult;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

fn zstd_ratio(path: &std::path::Path) -> f64 {
    let out = Command::new("zstd")
        .args(["-1", "-c", "-q"])
        .arg(path)
        .output()
        .expect("zstd");
    assert!(out.status.success());
    std::fs::metadata(path).unwrap().len() as f64 / out.stdout.len() as f64
}

fn unit_hashes(path: &std::path::Path) -> (usize, usize) {
    let data = std::fs::read(path).unwrap();
    let mut set = HashSet::new();
    for u in data.chunks_exact(4096) {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        u.hash(&mut h);
        set.insert(h.finish());
    }
    (set.len(), data.len() / 4096)
}

fn write_pass(file: &std::path::Path, extra: &[&str]) {
    std::fs::write(file, vec![0u8; 256 << 20]).unwrap();
    let mut args = vec![
        "run",
        "--target",
        file.to_str().unwrap(),
        "--rw",
        "write",
        "--bs",
        "1m",
        "--passes",
        "1",
        "-q",
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn default_writes_are_unique_and_incompressible() {
    let d = tempdir();
    let f = d.path().join("w.dat");
    write_pass(&f, &[]);
    let ratio = zstd_ratio(&f);
    assert!(ratio <= 1.02, "zstd ratio {ratio}");
    let (unique, all) = unit_hashes(&f);
    assert_eq!(
        unique,
        all,
        "{} of {all} 4 KiB units are duplicates",
        all - unique
    );
}

#[test]
fn dedup_and_compress_ratios_hold() {
    let d = tempdir();
    let f = d.path().join("w.dat");
    write_pass(&f, &["--compress-ratio", "2", "--dedup-ratio", "3"]);
    let ratio = zstd_ratio(&f);
    assert!((1.8..=2.2).contains(&ratio), "zstd ratio {ratio}");
    let (unique, all) = unit_hashes(&f);
    let share = unique as f64 / all as f64;
    assert!((0.30..=0.37).contains(&share), "unique share {share}");
}

/// `ioscope verify --journal J --json …`: exit code, the total over all targets (the
/// result model's verification counts) and stdout.
pub(super) fn verify_json(journal: &std::path::Path) -> (Option<i32>, VerifyResult, String) {
    let j = journal.with_extension("verify.json");
    let o = run(&[
        "verify",
        "--journal",
        journal.to_str().unwrap(),
        "--json",
        j.to_str().unwrap(),
    ]);
    let v = read_json(&j);
    assert_eq!(v["schema"], "ioscope.verify/1", "{v}");
    let total = serde_json::from_value(v["total"].clone())
        .unwrap_or_else(|e| panic!("verify total does not fit the model: {e}: {v}"));
    (o.status.code(), total, stdout(&o))
}

fn unit_at(data: &[u8], u: usize) -> &[u8] {
    &data[u * 4096..(u + 1) * 4096]
}

#[test]
fn corruption_stale_and_misplaced_units_are_found_and_classified() {
    let d = tempdir();
    let f = d.path().join("data.dat");
    let j = d.path().join("journal");
    let write = || {
        let o = run(&[
            "run",
            "--target",
            f.to_str().unwrap(),
            "--size",
            "16m",
            "--rw",
            "write",
            "--bs",
            "4k",
            "--qd",
            "8",
            "--passes",
            "1",
            "--journal",
            j.to_str().unwrap(),
            "-q",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    };
    write();
    let old = std::fs::read(&f).unwrap();
    write(); // the journal continues: every unit now holds a newer key
    let (code, v, _) = verify_json(&j);
    assert_eq!(code, Some(0), "{v:?}");
    assert_eq!(v.mismatches, 0);
    assert_eq!(v.ok, 4096);
    let mut new = std::fs::read(&f).unwrap();
    // 1. flip one byte of unit 100; 2. restore unit 200's older copy; 3. copy unit 300 onto unit 400.
    new[100 * 4096 + 1000] ^= 0x40;
    new[200 * 4096..201 * 4096].copy_from_slice(unit_at(&old, 200));
    let u300 = unit_at(&new, 300).to_vec();
    new[400 * 4096..401 * 4096].copy_from_slice(&u300);
    std::fs::write(&f, &new).unwrap();
    let (code, v, out) = verify_json(&j);
    assert_eq!(code, Some(3), "{out}");
    assert_eq!(v.mismatches, 3, "{out}");
    assert_eq!(v.corrupted, 1, "{out}");
    assert_eq!(v.stale, 1, "{out}");
    assert_eq!(v.misplaced, 1, "{out}");
    let mut found: Vec<(String, u64)> = v
        .samples
        .iter()
        .map(|s| (s.kind.clone(), s.offset))
        .collect();
    found.sort_by_key(|x| x.1);
    assert_eq!(
        found,
        [
            ("corrupted".into(), 100 * 4096),
            ("stale".into(), 200 * 4096),
            ("misplaced".into(), 400 * 4096)
        ]
    );
    // --verify-after in a run finds the same damage without a journal? No: a fresh
    // run has no map of the earlier data; it checks what it writes itself.
    let o = run(&[
        "run",
        "--target",
        f.to_str().unwrap(),
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--duration",
        "1s",
        "--verify",
        "--verify-after",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("0 MISMATCHES"), "{}", stdout(&o));
}

#[test]
fn kill_9_loses_nothing_and_a_replaced_unit_is_a_lost_write() {
    let dev = match LoopDev::new(64) {
        Ok(d) => d,
        Err(why) => return skip_or_fail(&format!("loop device: {why}")),
    };
    let d = tempdir();
    let j = d.path().join("journal");
    let o = run(&[
        "run",
        "--target",
        &dev.dev,
        "--rw",
        "write",
        "--bs",
        "64k",
        "--qd",
        "8",
        "--passes",
        "1",
        "--journal",
        j.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let old = std::fs::read(&dev.dev).unwrap();
    // The result file is never written (the run is killed); its interval stream shows
    // when the run is writing.
    let json = d.path().join("r.json");
    let mut child = Spawned::start([
        "run",
        "--target",
        &dev.dev,
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--qd",
        "16",
        "--streams",
        "4",
        "--duration",
        "60s",
        "--journal",
        j.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    // Kill it once it has written for a whole interval.
    let first = child.wait_first_interval(&json, FIRST_INTERVAL_TIMEOUT);
    assert!(first.ios > 0, "{first:?}");
    child.signal(libc::SIGKILL);
    let o = child.finish();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&o.status),
        Some(libc::SIGKILL)
    );
    let (code, v, out) = verify_json(&j);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(v.mismatches, 0, "{out}");
    assert!(v.ok > 10_000, "{v:?}");
    // Put back the previous content of one rewritten unit: exactly that lost write.
    let now = std::fs::read(&dev.dev).unwrap();
    let changed: Vec<usize> = (0..now.len() / 4096)
        .filter(|&u| unit_at(&now, u) != unit_at(&old, u))
        .collect();
    assert!(
        changed.len() > 100,
        "the crash run rewrote only {} units",
        changed.len()
    );
    use std::os::unix::fs::FileExt;
    let devf = std::fs::OpenOptions::new()
        .write(true)
        .open(&dev.dev)
        .unwrap();
    for &u in changed.iter().take(5) {
        devf.write_all_at(unit_at(&old, u), (u * 4096) as u64)
            .unwrap();
        devf.sync_all().unwrap();
        let (code, v, out) = verify_json(&j);
        if v.mismatches == 0 {
            // That unit was in flight at the kill, so its old content is legitimate.
            devf.write_all_at(unit_at(&now, u), (u * 4096) as u64)
                .unwrap();
            continue;
        }
        assert_eq!(code, Some(3), "{out}");
        assert_eq!(v.mismatches, 1, "{out}");
        assert_eq!(v.stale, 1, "{out}");
        assert_eq!(v.samples[0].offset, (u * 4096) as u64);
        return;
    }
    panic!("every tried unit was in flight at the crash");
}

#[test]
fn overlapping_streams_raise_no_false_alarms() {
    for extra in [
        &[][..],
        &["--dedup-ratio", "2", "--compress-ratio", "2"][..],
    ] {
        let mut args = vec![
            "run",
            "--target",
            "mem:8m",
            "--rw",
            "randrw",
            "--streams",
            "8",
            "--qd",
            "4",
            "--duration",
            "60s",
            "--verify",
            "--verify-after",
        ];
        args.extend_from_slice(extra);
        let r = run_json(&args);
        let v = r.run(0).verify.as_ref().expect("verify counts");
        assert_eq!(v.mismatches, 0, "{v:?}");
        assert!(v.ok > 100_000, "{v:?}");
    }
}

#[test]
fn error_policy_stop_continue_retry() {
    let target = "sim:64m?service=5us&error_rate=0.05";
    let run_with = |policy: &str| {
        ioscope_result([
            "run",
            "--target",
            target,
            "--duration",
            "1s",
            "--on-error",
            policy,
            "-q",
        ])
    };
    let r = run_with("stop");
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert_eq!(r.wire_run(0)["end_reason"], "error");
    assert_eq!(r.run(0).totals.all.errors, 1);
    assert_eq!(r.run(0).error_samples[0].errno, libc::EIO);
    assert!(r.stdout.contains("error: read at offset"), "{}", r.stdout);
    let r = run_with("continue");
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(r.wire_run(0)["end_reason"], "duration");
    let t = &r.run(0).totals.all;
    let share = t.errors as f64 / (t.ios as f64 + t.errors as f64);
    assert!((0.03..0.07).contains(&share), "error share {share}");
    let r = run_with("retry=5");
    let t = &r.run(0).totals.all;
    assert!(t.ios > 1000, "{t:?}");
    // Six failures in a row at 5% each: about one in 64 million.
    assert_eq!(t.errors, 0, "{t:?}");
}
