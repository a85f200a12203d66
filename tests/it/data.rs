//! Data you can trust: write content, verification classes, the crash journal and the
//! error policy, through the real binary on real files and a loop device.

use super::*;
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

fn verify_json(journal: &std::path::Path) -> (Option<i32>, serde_json::Value, String) {
    let j = journal.with_extension("verify.json");
    let o = run(&[
        "verify",
        "--journal",
        journal.to_str().unwrap(),
        "--json",
        j.to_str().unwrap(),
    ]);
    (o.status.code(), read_json(&j), stdout(&o))
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
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["total"]["mismatches"], 0);
    assert_eq!(v["total"]["ok"], 4096);
    let mut new = std::fs::read(&f).unwrap();
    // 1. flip one byte of unit 100; 2. restore unit 200's older copy; 3. copy unit 300 onto unit 400.
    new[100 * 4096 + 1000] ^= 0x40;
    new[200 * 4096..201 * 4096].copy_from_slice(unit_at(&old, 200));
    let u300 = unit_at(&new, 300).to_vec();
    new[400 * 4096..401 * 4096].copy_from_slice(&u300);
    std::fs::write(&f, &new).unwrap();
    let (code, v, out) = verify_json(&j);
    assert_eq!(code, Some(3), "{out}");
    let t = &v["total"];
    assert_eq!(t["mismatches"], 3, "{out}");
    assert_eq!(t["corrupted"], 1, "{out}");
    assert_eq!(t["stale"], 1, "{out}");
    assert_eq!(t["misplaced"], 1, "{out}");
    let mut found: Vec<(String, u64)> = t["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["kind"].as_str().unwrap().to_string(),
                s["offset"].as_u64().unwrap(),
            )
        })
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
    let mut child = ioscope()
        .args([
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
        ])
        .arg(&j)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // SAFETY: killing our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    let (code, v, out) = verify_json(&j);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(v["total"]["mismatches"], 0, "{out}");
    assert!(v["total"]["ok"].as_u64().unwrap() > 10_000);
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
        if v["total"]["mismatches"] == 0 {
            // That unit was in flight at the kill, so its old content is legitimate.
            devf.write_all_at(unit_at(&now, u), (u * 4096) as u64)
                .unwrap();
            continue;
        }
        assert_eq!(code, Some(3), "{out}");
        assert_eq!(v["total"]["mismatches"], 1, "{out}");
        assert_eq!(v["total"]["stale"], 1, "{out}");
        assert_eq!(
            v["total"]["samples"][0]["offset"].as_u64().unwrap(),
            (u * 4096) as u64
        );
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
        let d = tempdir();
        let json = d.path().join("r.json");
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
            "-q",
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let r = read_json(&json);
        let v = &r["runs"][0]["verify"];
        assert_eq!(v["mismatches"], 0, "{v}");
        assert!(v["ok"].as_u64().unwrap() > 100_000, "{v}");
    }
}

#[test]
fn error_policy_stop_continue_retry() {
    let target = "sim:64m?service=5us&error_rate=0.05";
    let d = tempdir();
    let json = d.path().join("r.json");
    let run_with = |policy: &str| {
        let o = run(&[
            "run",
            "--target",
            target,
            "--duration",
            "1s",
            "--on-error",
            policy,
            "-q",
            "--json",
            json.to_str().unwrap(),
        ]);
        (o.status.code(), read_json(&json), stdout(&o))
    };
    let (code, r, out) = run_with("stop");
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(r["runs"][0]["end_reason"], "error");
    assert_eq!(r["runs"][0]["totals"]["errors"], 1);
    assert_eq!(r["runs"][0]["error_samples"][0]["errno"], libc::EIO);
    assert!(out.contains("error: read at offset"), "{out}");
    let (code, r, _) = run_with("continue");
    assert_eq!(code, Some(1));
    assert_eq!(r["runs"][0]["end_reason"], "duration");
    let t = &r["runs"][0]["totals"];
    let share = t["errors"].as_f64().unwrap()
        / (t["ios"].as_f64().unwrap() + t["errors"].as_f64().unwrap());
    assert!((0.03..0.07).contains(&share), "error share {share}");
    let (_, r, _) = run_with("retry=5");
    let t = &r["runs"][0]["totals"];
    assert!(t["ios"].as_u64().unwrap() > 1000);
    // Six failures in a row at 5% each: about one in 64 million.
    assert_eq!(t["errors"], 0, "{t}");
}
