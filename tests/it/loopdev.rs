//! Real block devices: a loop device with direct I/O, set up and torn down here.

use super::*;

/// Reads completed (field 1) and writes completed (field 5) from /sys/block/X/stat.
fn kernel_ios(name: &str) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let v: Vec<u64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
    (v[0], v[4])
}

#[test]
fn reads_match_the_kernel_count() {
    let dev = match LoopDev::new(256) {
        Ok(d) => d,
        Err(why) => return skip_or_fail(&format!("loop device: {why}")),
    };
    let before = kernel_ios(&dev.name());
    let r = ioscope_result([
        "run",
        "--target",
        &dev.dev,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "16",
        "--duration",
        "2s",
        "-q",
    ]);
    let after = kernel_ios(&dev.name());
    let r = r.expect_code(0);
    let ours = r.run(0).totals.read.ios as f64;
    let kernel = (after.0 - before.0) as f64;
    assert!(ours > 1000.0, "too few I/Os to compare: {ours}");
    let diff = (ours - kernel).abs() / kernel;
    assert!(
        diff <= 0.005,
        "ioscope {ours} vs kernel {kernel}: {:.3}%",
        diff * 100.0
    );
    assert_eq!(after.1, before.1, "a read run must not write");
    assert_eq!(r.run(0).engine, "uring");
}

#[test]
fn writes_to_a_device_with_a_filesystem_are_refused() {
    let dev = match LoopDev::new(64) {
        Ok(d) => d,
        Err(why) => return skip_or_fail(&format!("loop device: {why}")),
    };
    let mk = Command::new("mkfs.ext4")
        .args(["-q", "-F", &dev.dev])
        .output();
    match mk {
        Ok(o) if o.status.success() => {}
        _ => return skip_or_fail("mkfs.ext4 not available"),
    }
    let before = kernel_ios(&dev.name());
    let o = run(&[
        "run",
        "--target",
        &dev.dev,
        "--rw",
        "randwrite",
        "--duration",
        "1s",
    ]);
    let after = kernel_ios(&dev.name());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("ext2/3/4"), "{}", stderr(&o));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(after.1, before.1, "no byte may be written before the check");
    // Reading is fine.
    let o = run(&[
        "run",
        "--target",
        &dev.dev,
        "--rw",
        "randread",
        "--duration",
        "500ms",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // With --force the write runs.
    let o = run(&[
        "run",
        "--target",
        &dev.dev,
        "--rw",
        "randwrite",
        "--duration",
        "500ms",
        "--force",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(kernel_ios(&dev.name()).1 > after.1);
}

#[test]
fn quick_on_a_block_device_only_reads() {
    let dev = match LoopDev::new(128) {
        Ok(d) => d,
        Err(why) => return skip_or_fail(&format!("loop device: {why}")),
    };
    let before = kernel_ios(&dev.name());
    let r = ioscope_result(["quick", &dev.dev, "--duration", "500ms"]).expect_code(0);
    assert_eq!(
        kernel_ios(&dev.name()).1,
        before.1,
        "quick wrote to a block device"
    );
    assert_eq!(r.doc.runs.len(), 2);
}

fn sysfs(dev: &str, attr: &str) -> String {
    std::fs::read_to_string(format!("/sys/block/{dev}/queue/{attr}"))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn result_records_the_device_environment() {
    let dev = match LoopDev::new(64) {
        Ok(d) => d,
        Err(why) => return skip_or_fail(&format!("loop device: {why}")),
    };
    let r = run_json(&["run", "--target", &dev.dev, "--duration", "300ms"]);
    let b = &r.wire["env"]["targets"][0]["block"];
    let name = dev.name();
    let sched = sysfs(&name, "scheduler");
    let active = sched
        .split_whitespace()
        .find(|s| s.starts_with('['))
        .map(|s| s.trim_matches(|c| c == '[' || c == ']').to_string())
        .unwrap_or(sched.clone());
    assert_eq!(b["scheduler"].as_str().unwrap(), active);
    assert_eq!(
        b["rotational"].as_bool().unwrap(),
        sysfs(&name, "rotational") == "1"
    );
    assert_eq!(
        b["logical_block_size"].as_u64().unwrap().to_string(),
        sysfs(&name, "logical_block_size")
    );
    assert_eq!(
        b["physical_block_size"].as_u64().unwrap().to_string(),
        sysfs(&name, "physical_block_size")
    );
    let o = run(&["sysinfo", &dev.dev, "--qd", "65536"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("Advice"), "{text}");
    assert!(text.contains("why:"), "{text}");
}
