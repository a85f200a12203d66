//! fio job files published in public repositories
//! (tests/fixtures/compat/published/fio/), each with the command line its source runs
//! it with (`# run:`): how each converts is pinned, and one runs end to end with its
//! report options as kubestr passes them.

use super::*;
use std::path::PathBuf;

fn published() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compat/published/fio")
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
        _ => format!("refused: {}", err.lines().next().unwrap_or("")),
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
    let d = tempdir();
    let job = d.path().join("randrw.fio");
    let text = std::fs::read_to_string(published().join("kubestr-randrw.fio"))
        .unwrap()
        .replace("size=4G", "size=8m")
        .replace("ramp_time=2s", "ramp_time=0")
        .replace("runtime=15s", "runtime=1s");
    std::fs::write(&job, text).unwrap();
    let out = d.path().join("fio.json");
    let r = ioscope_to(
        &d.path().join("r.json"),
        [
            "fio",
            job.to_str().unwrap(),
            "--directory",
            d.path().to_str().unwrap(),
            "--output-format=json",
            "--output",
            out.to_str().unwrap(),
        ],
    )
    .expect_code(0);
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
