//! fio job files published in public repositories
//! (tests/fixtures/compat/published/fio/), each with the command line its source runs
//! it with (`# run:`): how each converts is pinned, and one runs end to end with its
//! report options as kubestr passes them.

use super::*;
use std::path::PathBuf;

fn published() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compat/published/fio")
}

/// A copy of a published fixture in a fresh directory with its sizes and times
/// scaled down (each `(from, to)` replaced).
fn scaled(name: &str, edits: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let d = tempdir();
    let job = d.path().join(name);
    let mut text = std::fs::read_to_string(published().join(name)).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{name} lacks {from}");
        text = text.replace(from, to);
    }
    std::fs::write(&job, text).unwrap();
    (d, job)
}

/// `ioscope fio JOB --directory D ARGS`, which must succeed; its result.
fn fio_in(d: &tempfile::TempDir, job: &std::path::Path, args: &[&str]) -> Ran {
    let dir = d.path().to_str().unwrap();
    let mut all = vec!["fio", job.to_str().unwrap(), "--directory", dir];
    all.extend_from_slice(args);
    ioscope_to(&d.path().join("r.json"), all).expect_code(0)
}

/// A fixture's `# run:` line: its leading `NAME=value` words (the environment its
/// source sets for `${NAME}`) and the arguments after them.
fn run_line(file: &std::path::Path) -> (Vec<(String, String)>, Vec<String>) {
    let text = std::fs::read_to_string(file).unwrap();
    let words: Vec<String> = text
        .lines()
        .find_map(|l| l.strip_prefix("# run:"))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    let env_words = words
        .iter()
        .take_while(|w| !w.starts_with('-') && w.contains('='))
        .count();
    let env = words[..env_words]
        .iter()
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (env, words[env_words..].to_vec())
}

/// `convert fio FILE ARGS`: clean, drops (what), or refused (the first line).
fn outcome(file: &std::path::Path) -> String {
    let (env, args) = run_line(file);
    let o = ioscope()
        .args(["convert", "fio", file.to_str().unwrap()])
        .args(&args)
        .envs(env)
        .output()
        .unwrap();
    let err = stderr(&o);
    let dropped: Vec<&str> = err
        .lines()
        .filter_map(|l| {
            l.split_once("not translated (unsupported) at ")
                .map(|x| x.1)
        })
        .map(|l| l.split_once(": ").map_or(l, |x| x.1))
        .map(|l| l.split(" — ").next().unwrap_or(l))
        .collect();
    match o.status.code() {
        Some(0) => "clean".into(),
        Some(3) => format!("drops: {}", dropped.join("; ")),
        // Relative to the checkout, which CI clones elsewhere.
        _ => format!("refused: {}", err.lines().next().unwrap_or(""))
            .replace(concat!(env!("CARGO_MANIFEST_DIR"), "/"), ""),
    }
}

// Regression guard for issue 25: a change in how any published job converts shows
// here (IOSCOPE_BLESS=1 rewrites expected.txt).
#[test]
fn published_fio_jobs_convert_as_expected() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(published())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.ends_with(".fio") && !name.ends_with("-include.fio")
        })
        .collect();
    files.sort();
    assert!(files.len() >= 15, "{} published jobs", files.len());
    let got: String = files
        .iter()
        .map(|f| {
            format!(
                "{} | {}\n",
                f.file_name().unwrap().to_string_lossy(),
                outcome(f)
            )
        })
        .collect();
    assert_pinned(&published().join("expected.txt"), &got);
}

// kubestr's random read/write check as kubestr runs it (`--directory DIR
// --output-format=json`), with fio's `--output FILE` added and its size and times
// scaled down: 75 % reads of 4 KiB at QD 64, and fio's JSON in FILE alone.
#[test]
fn kubestr_randrw_runs_with_fio_json_written_to_its_output_file() {
    let (d, job) = scaled(
        "kubestr-randrw.fio",
        &[
            ("size=4G", "size=8m"),
            ("ramp_time=2s", "ramp_time=0"),
            ("runtime=15s", "runtime=1s"),
        ],
    );
    let out = d.path().join("fio.json");
    let r = fio_in(
        &d,
        &job,
        &["--output-format=json", "--output", out.to_str().unwrap()],
    );
    assert!(r.stdout.is_empty(), "stdout: {}", r.stdout);
    let w = &r.wire["plan"]["runs"][0]["workloads"][0];
    assert_eq!(
        (w["read_pct"].as_u64(), w["qd"].as_u64()),
        (Some(75), Some(64))
    );
    let fio = read_json(&out);
    let job = &fio["jobs"][0];
    let t = &r.run(0).totals;
    assert!(t.read.ios > 0 && t.write.ios > 0);
    assert_eq!(job["read"]["total_ios"].as_u64(), Some(t.read.ios));
    assert_eq!(job["write"]["total_ios"].as_u64(), Some(t.write.ios));
}

// The Azure Disk CSI driver's PostgreSQL profile, scaled down: a checkpointer that
// starts write-back of what it wrote every 32 writes (sync_file_range) and fsyncs its
// file on close, a WAL writer that fdatasyncs every write, and a reader that never
// flushes — each job on its own schedule, as fio runs them.
#[test]
fn postgresql_profile_flushes_each_job_on_its_own_schedule() {
    let (d, job) = scaled(
        "azuredisk-csi-postgresql.fio",
        &[
            ("runtime=120", "runtime=1"),
            ("size=4GiB", "size=8m"),
            ("size=2GiB", "size=4m"),
            ("size=10GiB", "size=8m"),
        ],
    );
    let r = fio_in(&d, &job, &[]);
    let ws = r.wire["runs"][0]["workloads"].as_array().unwrap();
    let by_name = |n: &str| {
        ws.iter()
            .find(|w| w["name"].as_str().unwrap().ends_with(n))
            .unwrap_or_else(|| panic!("no workload {n}"))
    };
    let writes = |w: &serde_json::Value| w["totals"]["write"]["ios"].as_u64().unwrap();
    let flush = |w: &serde_json::Value| w["totals"]["flush"].clone();
    let cp = by_name("checkpointer");
    assert!(writes(cp) >= 32, "{}", writes(cp));
    assert_eq!(flush(cp)["kind"], "sync_file_range:write");
    // One range per 32 writes of its one stream, and the fsync on close.
    assert_eq!(flush(cp)["ios"].as_u64(), Some(writes(cp) / 32 + 1));
    assert_eq!(cp["settings"]["fsync_on_close"], true);
    let wal = by_name("wal");
    assert_eq!(flush(wal)["kind"], "fdatasync");
    assert_eq!(flush(wal)["ios"].as_u64(), Some(writes(wal)));
    assert_eq!(wal["settings"]["flushes"]["every"], 1);
    let rd = by_name("large_read");
    assert!(flush(rd).is_null() && rd["settings"]["flushes"].is_null());
    assert!(rd["totals"]["read"]["ios"].as_u64().unwrap() > 0);
    assert_eq!(r.wire["runs"][0]["totals"]["flush"]["kind"], "mixed");
}

// Regression for issue 25: azure-readwrite's clones (numjobs=4, no filename) each have
// a file of their own in fio, `DIR/JOB.N.0`, with their own pass and their own
// rate_iops; ioscope ran all four as streams on the first clone's file, four passes
// over it, at four times the rate. Scaled down (1 MiB, QD 4, 50 IOPS per writer, a
// 2 s runtime, buffered on a temporary directory), each clone now reads or writes
// its own file at its own figures.
#[test]
fn azure_readwrite_clones_each_run_on_a_file_of_their_own() {
    const CLONES: usize = 4;
    const WRITER_IOPS: f64 = 50.0;
    let d = tempdir();
    let dir = d.path().to_str().unwrap();
    let text = std::fs::read_to_string(published().join("azure-readwrite.fio"))
        .unwrap()
        .replace("size=200g", "size=1m")
        .replace("direct=1", "direct=0")
        .replace("iodepth=128", "iodepth=4")
        .replace("rate_iops=3200", "rate_iops=50")
        .replace("directory=/mnt/", &format!("directory={dir}/"));
    let job = d.path().join("azure.fio");
    std::fs::write(&job, text).unwrap();
    let r = ioscope_to(
        &d.path().join("r.json"),
        ["fio", job.to_str().unwrap(), "--runtime", "2"],
    )
    .expect_code(0);
    let run = r.run(0);
    assert_eq!(run.workloads.len(), 2 * CLONES, "one workload per clone");
    for (job, sub) in [("reader1", "readcache"), ("writer1", "nocache")] {
        for n in 0..CLONES {
            let name = format!("{job}.{n}");
            let w = run
                .workloads
                .iter()
                .find(|w| w.name == name)
                .unwrap_or_else(|| panic!("no workload {name}"));
            // fio's name for clone n's file, laid out at the job's size.
            let file = d.path().join(sub).join(format!("{job}.{n}.0"));
            let uri = r.wire["plan"]["targets"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == w.target.as_str())
                .map(|t| t["uri"].as_str().unwrap_or_default());
            assert_eq!(uri, file.to_str(), "{name}");
            assert_eq!(std::fs::metadata(&file).unwrap().len(), 1 << 20, "{name}");
            let s = w.settings.as_ref().unwrap();
            assert_eq!((s.streams, s.qd), (1, 4), "{name}: one stream at iodepth");
            let t = &w.totals;
            if job == "reader1" {
                // One pass over its own 1 MiB: 256 reads of 4 KiB, each block once.
                assert_eq!((t.read.ios, t.write.ios), (256, 0), "{name}");
            } else {
                // Its own 50 IOPS for the 2 s runtime (4 × 50 in all): ~100 writes.
                // Arrivals are evenly spaced (fio's rate_process=linear), so the
                // count is off by one or two at the ends; ±20 % leaves room for a
                // loaded machine starting a clone late, not for 4 × the rate.
                assert_eq!(t.read.ios, 0, "{name}");
                assert!(
                    (WRITER_IOPS * 0.8..=WRITER_IOPS * 1.2).contains(&t.write.iops),
                    "{name}: {} IOPS, {} writes",
                    t.write.iops,
                    t.write.ios
                );
            }
        }
    }
}

// Portworx's low-I/O check: 10,000 files whose lengths fio draws between 1 MiB and
// 10 MiB (`filesize=1M-10M`), written at 64 IOPS with crc32c verification. It was
// refused (`filesize` read as one size with an unknown unit). Scaled to 20 files of
// 16–64 KiB for 1 s: each file is laid out at its own drawn length in whole 4 KiB
// blocks inside the range, the writes stay inside them, and the verify pass reads
// back every block written.
#[test]
fn portworx_file_lengths_are_drawn_from_the_filesize_range() {
    let (d, job) = scaled(
        "portworx-torpedo-low-io.fio",
        &[
            ("filesize=1M-10M", "filesize=16k-64k"),
            ("nrfiles=10000", "nrfiles=20"),
            ("runtime=99999999", "runtime=1"),
            ("direct=1", "direct=0"),
            ("directory=/scratch/\n", ""),
        ],
    );
    let r = fio_in(&d, &job, &["--eta=never"]);
    let lens: Vec<u64> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with("fio-rand-RW."))
        .map(|e| e.metadata().unwrap().len())
        .collect();
    assert_eq!(lens.len(), 20);
    assert!(
        lens.iter()
            .all(|&l| l % 4096 == 0 && (16 << 10..64 << 10).contains(&l)),
        "{lens:?}"
    );
    let distinct: std::collections::BTreeSet<_> = lens.iter().collect();
    assert!(distinct.len() > 3, "drawn lengths all alike: {lens:?}");
    let run = &r.wire["runs"][0];
    assert!(run["totals"]["write"]["ios"].as_u64().unwrap() > 0);
    let v = &run["verify"];
    assert!(v["units_checked"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["mismatches"], 0, "{v}");
}
