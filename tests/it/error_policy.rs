//! Per-workload error policies (`on_error`) against a real "no space left on device":
//! a small tmpfs filled to the last page, with a sparse target file whose holes
//! cannot be filled. One workload continues on ENOSPC, others do not.

use super::*;

/// A tmpfs of 4 MiB mounted for the test, filled up, holding `sparse.dat` (2 MiB of
/// holes: every write into it fails with ENOSPC) and `full.dat` (1 MiB of data to
/// read). Unmounted on drop.
struct FullFs {
    dir: tempfile::TempDir,
}

impl FullFs {
    fn new() -> Result<FullFs, String> {
        let dir = tempdir();
        let mnt = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("mount: {e}"))?;
        if !mnt.status.success() {
            return Err(format!("mount tmpfs: {}", stderr(&mnt).trim()));
        }
        let fs = FullFs { dir };
        let p = |n: &str| fs.dir.path().join(n);
        std::fs::File::create(p("sparse.dat"))
            .and_then(|f| f.set_len(2 << 20))
            .map_err(|e| format!("sparse file: {e}"))?;
        std::fs::write(p("full.dat"), vec![7u8; 1 << 20]).map_err(|e| format!("data: {e}"))?;
        // Fill what is left; the last write fails with ENOSPC.
        let mut filler = std::fs::File::create(p("filler")).map_err(|e| e.to_string())?;
        let chunk = vec![1u8; 64 << 10];
        loop {
            use std::io::Write;
            match filler.write_all(&chunk) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => return Err(format!("filling: {e}")),
            }
        }
        Ok(fs)
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    /// A job file: `filler` writes into the holes with its own policy, `other` (if
    /// given) is a second workload of the same run.
    fn job(&self, filler_policy: &str, other: &str, duration: &str) -> String {
        format!(
            "[[target]]\nname = \"sparse\"\npath = \"{}\"\n\
             [[target]]\nname = \"full\"\npath = \"{}\"\n\
             [[workload]]\nname = \"filler\"\ntarget = \"sparse\"\nrw = \"randwrite\"\n{filler_policy}\n\
             [[workload]]\nname = \"other\"\n{other}\n\
             [[run]]\nworkloads = [\"filler\", \"other\"]\nduration = \"{duration}\"\nengine = \"sync\"\n",
            self.path("sparse.dat"),
            self.path("full.dat"),
        )
    }
}

impl Drop for FullFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).output();
    }
}

fn run_job(text: &str) -> Ran {
    let out = tempdir();
    let job = out.path().join("job.toml");
    std::fs::write(&job, text).unwrap();
    let r = ioscope_to(
        &out.path().join("r.json"),
        ["run".as_ref(), job.as_os_str(), "-q".as_ref()],
    );
    r
}

/// The filler's write errors.
fn filler_errors(r: &Ran) -> u64 {
    r.wire_run(0)["workloads"][0]["totals"]["write"]["errors"]
        .as_u64()
        .unwrap()
}

#[test]
fn a_workload_that_continues_on_enospc_keeps_the_run_going_and_counts_them() {
    let fs = match FullFs::new() {
        Ok(f) => f,
        Err(why) => return skip_or_fail(&format!("full tmpfs: {why}")),
    };
    let policy = "on_error = { continue = [\"write\"], write_errnos = [\"ENOSPC\"] }";
    let reader = "target = \"full\"\nrw = \"randread\"";
    // Any error fails the command (exit 1); the policy decides whether the run goes on.
    let r = run_job(&fs.job(policy, reader, "2s")).expect_code(1);
    let run = r.wire_run(0);
    assert_eq!(run["end_reason"], "duration", "{}", r.stderr);
    let errors = filler_errors(&r);
    assert!(errors > 100, "too few ENOSPC errors counted: {errors}");
    assert_eq!(run["workloads"][0]["totals"]["write"]["ios"], 0);
    // The reader ran the whole time beside it, without errors.
    let reads = &run["workloads"][1]["totals"]["read"];
    assert!(reads["ios"].as_u64().unwrap() > 1000, "{reads}");
    assert_eq!(reads["errors"], 0);
    // Counted per interval, in every interval of the run.
    let per_interval: Vec<u64> = run["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["errors"].as_u64().unwrap())
        .collect();
    assert!(
        per_interval.len() >= 2 && per_interval.iter().all(|&e| e > 0),
        "{per_interval:?}"
    );
    assert_eq!(per_interval.iter().sum::<u64>(), errors);
    for s in run["error_samples"].as_array().unwrap() {
        assert_eq!(
            (s["op"].as_str(), s["errno"].as_i64()),
            (Some("write"), Some(28))
        );
    }
    assert_eq!(
        run["workloads"][0]["settings"]["on_error"],
        serde_json::json!({"continue": ["write"], "write_errnos": ["ENOSPC"]})
    );
    assert!(run["workloads"][1]["settings"].get("on_error").is_none());
}

#[test]
fn a_workload_without_that_policy_stops_the_run_at_its_first_enospc() {
    let fs = match FullFs::new() {
        Ok(f) => f,
        Err(why) => return skip_or_fail(&format!("full tmpfs: {why}")),
    };
    let policy = "on_error = { continue = [\"write\"], write_errnos = [\"ENOSPC\"] }";
    // The second writer follows the run's --on-error (stop).
    let strict = "target = \"sparse\"\nrw = \"randwrite\"\nstart_delay = \"500ms\"";
    let t0 = std::time::Instant::now();
    let r = run_job(&fs.job(policy, strict, "20s")).expect_code(1);
    let run = r.wire_run(0);
    assert_eq!(run["end_reason"], "error", "{}", r.stderr);
    // 0.54 s here (the strict writer starts at 500 ms): 10 s tells a stop from the
    // 20 s run on a loaded machine.
    assert!(
        t0.elapsed().as_secs() < 10,
        "the run was not stopped: {:?}",
        t0.elapsed()
    );
    // The filler's errors before the strict writer's first one were counted.
    assert!(filler_errors(&r) > 10, "{}", filler_errors(&r));
    assert!(
        run["workloads"][1]["totals"]["write"]["errors"]
            .as_u64()
            .unwrap()
            >= 1
    );

    // A policy that continues on other errnos only stops at ENOSPC as well.
    let eio_only = "on_error = { continue = [\"write\"], write_errnos = [\"EIO\"] }";
    let reader = "target = \"full\"\nrw = \"randread\"";
    let r = run_job(&fs.job(eio_only, reader, "20s")).expect_code(1);
    assert_eq!(r.wire_run(0)["end_reason"], "error", "{}", r.stderr);
    assert!(filler_errors(&r) >= 1);
}

/// A verifying reader over a file whose every other unit was damaged after it was
/// written (the journal carries the keys across invocations), under `policy`.
fn read_damaged(policy: &str) -> Ran {
    let d = tempdir();
    let (f, j) = (d.path().join("d.dat"), d.path().join("journal"));
    let (fs, js) = (f.to_str().unwrap(), j.to_str().unwrap());
    let o = run(&[
        "run",
        "--target",
        fs,
        "--size",
        "4m",
        "--rw",
        "write",
        "--bs",
        "4k",
        "--passes",
        "1",
        "--journal",
        js,
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut data = std::fs::read(&f).unwrap();
    for u in (0..1024).step_by(2) {
        data[u * 4096 + 100] ^= 0x40;
    }
    std::fs::write(&f, &data).unwrap();
    let job = d.path().join("job.toml");
    std::fs::write(
        &job,
        format!(
            "[[target]]\nname = \"t\"\npath = \"{fs}\"\n[[workload]]\nname = \"checker\"\n\
             target = \"t\"\nrw = \"randread\"\nverify = true\n{policy}\n\
             [[run]]\nworkloads = [\"checker\"]\nduration = \"1s\"\n"
        ),
    )
    .unwrap();
    let r = ioscope_to(
        &d.path().join("r.json"),
        ["run", job.to_str().unwrap(), "--journal", js, "-q"],
    );
    drop(d);
    r
}

#[test]
fn a_policy_without_verify_stops_at_the_first_mismatch_one_with_it_goes_on() {
    // fio's verify_fatal=1 (continue_on_error=none): the first mismatch ends the run.
    let r = read_damaged("on_error = { continue = [] }").expect_code(1);
    let run = r.run(0);
    assert_eq!(r.wire_run(0)["end_reason"], "error", "{}", r.stderr);
    let v = run.verify.as_ref().expect("verify counts");
    assert_eq!(v.mismatches, 1, "{v:?}");
    assert_eq!(v.corrupted, 1, "{v:?}");
    // continue_on_error=verify: every mismatch is counted and the run goes on.
    let r = read_damaged("on_error = { continue = [\"verify\"] }").expect_code(3);
    let v = r.run(0).verify.as_ref().expect("verify counts");
    assert_eq!(r.wire_run(0)["end_reason"], "duration", "{}", r.stderr);
    assert!(v.mismatches > 100, "{v:?}");
    assert!(v.ok > 100, "{v:?}");
}
