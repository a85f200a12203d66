//! Kernel dm-multipath targets, seen through sysfs. This machine has no device
//! mapper, so a loop device stands in for the map and a fake sysfs tree
//! (`IOSCOPE_SYSFS_ROOT`) declares it a multipath map with two slaves, whose `stat`
//! counters and `device/state` the test advances while ioscope runs: what ioscope
//! reports per path must be exactly what the tree said.

use super::*;
use std::time::{Duration, Instant};

/// Replaces `p` at once (a reader never sees it half written, as in real sysfs).
fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let tmp = p.with_extension("new");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, p).unwrap();
}

/// Writes a slave's `stat` with `reads` reads of 4 KiB (8 sectors) each.
fn stat(sys: &Path, slave: &str, reads: u64) {
    write(
        &sys.join(format!("block/{slave}/stat")),
        &format!("{reads} 0 {} 0 0 0 0 0 0 0 0 0 0 0 0\n", reads * 8),
    );
}

#[test]
fn dm_multipath_paths_are_sampled_from_sysfs_per_interval() {
    let dev = match LoopDev::new(64) {
        Ok(d) => d,
        Err(why) => return skip_or_fail(&format!("loop device: {why}")),
    };
    let d = tempdir();
    let sys = d.path().join("sys");
    write(
        &sys.join(format!("block/{}/dm/uuid", dev.name())),
        "mpath-36001405fake\n",
    );
    for s in ["sdx", "sdy"] {
        write(&sys.join(format!("block/{}/slaves/{s}", dev.name())), "");
        stat(&sys, s, 1000);
    }
    write(&sys.join("block/sdy/device/state"), "running\n");
    let json = d.path().join("r.json");
    let mut cmd = ioscope();
    cmd.env("IOSCOPE_SYSFS_ROOT", &sys);
    let mut child = Spawned::start_with(
        cmd,
        [
            "run",
            "-t",
            &dev.dev,
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--qd",
            "1",
            "--rate",
            "200",
            "--duration",
            "3s",
            "--interval",
            "500ms",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    // The kernel's paths, as the fake tree tells them: sdx 10 reads per 50 ms, sdy
    // 30 until 1.5 s of the run, then sdy goes offline and carries nothing. The run's
    // clock is read off its interval lines (the first closes at 0.5 s), not counted
    // from the spawn: a loaded machine can take seconds to start it.
    let t0 = Instant::now();
    let mut run_clock: Option<(f64, Instant)> = None;
    let (mut x, mut y) = (1000, 1000);
    while child.running() && t0.elapsed() < Duration::from_secs(30) {
        if run_clock.is_none() {
            run_clock = intervals_so_far(&json)
                .first()
                .map(|iv| (iv.t_s, Instant::now()));
        }
        let run_t = run_clock.map_or(0.0, |(t_s, seen)| t_s + seen.elapsed().as_secs_f64());
        x += 10;
        stat(&sys, "sdx", x);
        if run_t < 1.5 {
            y += 30;
            stat(&sys, "sdy", y);
        } else {
            write(&sys.join("block/sdy/device/state"), "offline\n");
        }
        // The stimulus's own pace (10 and 30 reads per step), not a wait.
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.finish();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = read_json(&json);
    let run = &r["runs"][0];
    let paths = run["paths"].as_array().expect("runs[].paths[]");
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert_eq!(
        (paths[0]["name"].as_str(), paths[1]["name"].as_str()),
        (Some("sdx"), Some("sdy"))
    );
    assert_eq!(paths[1]["uri"], "/dev/sdy");
    assert_eq!(paths[1]["state"], "down");
    assert_eq!(paths[0]["state"], "up");
    let (px, py) = (
        paths[0]["ios"].as_u64().unwrap(),
        paths[1]["ios"].as_u64().unwrap(),
    );
    assert!(px > 0 && py > 0, "{paths:?}");
    assert_eq!(paths[0]["bytes"].as_u64().unwrap(), px * 4096);
    // Per interval: sdy carried 3× sdx while running, then nothing, marked down.
    let ivs = run["intervals"].as_array().unwrap();
    let iv = |i: usize, p: usize, k: &str| ivs[i]["paths"][p][k].clone();
    assert_eq!(iv(0, 1, "state"), "up");
    // The intervals wholly before sdy went offline (all "up" ones but the last,
    // which may hold the change): 3 reads on sdy per read on sdx.
    let up: Vec<usize> = (0..ivs.len())
        .filter(|&i| iv(i, 1, "state") == "up")
        .collect();
    let before = &up[..up.len().saturating_sub(1)];
    let sum = |p: usize| -> u64 {
        before
            .iter()
            .map(|&i| iv(i, p, "ios").as_u64().unwrap())
            .sum()
    };
    let (ix, iy) = (sum(0), sum(1));
    assert!(
        ix > 0 && (iy as f64 / ix as f64 - 3.0).abs() < 0.5,
        "before the change: {ix} / {iy}"
    );
    let last = ivs.len() - 1;
    assert_eq!(iv(last, 1, "state"), "down");
    assert_eq!(iv(last, 1, "ios"), 0);
    assert!(iv(last, 0, "ios").as_u64().unwrap() > 0);
    // The totals are the intervals' sums.
    let sum: u64 = ivs
        .iter()
        .map(|i| i["paths"][0]["ios"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, px);
}
