//! diskspd lines end to end: published lines through `convert`, and diskspd's XML
//! result (`-Rxml`) read back by an XML reader using diskspd's element names.

use super::*;
use std::path::PathBuf;

fn published() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compat/published/diskspd")
}

/// `convert`'s outcome for one file: clean (exit 0, nothing said), said (exit 0
/// with notes of what is done another way), drops (exit 3, with what was dropped)
/// or refused (with why).
fn outcome(file: &std::path::Path) -> String {
    let o = run(&["convert", "--target", "/tmp/x", file.to_str().unwrap()]);
    let err = stderr(&o);
    // Each line's head: the switch it is about (`-C30`, `-g500i`), or its first
    // words (a clock seed differs from run to run; its head does not).
    let first = |prefix: &str| {
        err.lines()
            .filter_map(|l| l.strip_prefix(prefix))
            .map(|l| {
                let l = l.split(" — ").next().unwrap_or(l);
                match l.split_once(':') {
                    Some((head, _)) if l.starts_with('-') => head.to_string(),
                    _ => l.split_whitespace().take(4).collect::<Vec<_>>().join(" "),
                }
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    match o.status.code() {
        Some(0) if err.contains("note: ") => format!("said: {}", first("note: ")),
        Some(0) => "clean".into(),
        Some(3) => format!(
            "drops: {}",
            first("warning: not translated (unsupported) at ")
        ),
        _ => format!("refused: {}", err.lines().next().unwrap_or("")),
    }
}

// Regression guard for issue 25: real users' diskspd lines and XML profiles, each
// with its source in its first line; a change in how any of them converts shows here.
#[test]
fn published_diskspd_lines_convert_as_expected() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(published())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt" || e == "xml"))
        .filter(|p| !p.ends_with("expected.txt"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "{} published lines", files.len());
    let got: String = files
        .iter()
        .map(|f| {
            let name = f.file_stem().unwrap().to_string_lossy().into_owned();
            format!("{name} | {}\n", outcome(f))
        })
        .collect();
    assert_pinned(&published().join("expected.txt"), &got);
}

/// Sums of the XML's per-thread, per-target counts by diskspd's element names, read
/// by Python's xml.etree, as JSON: {"threads": n, "targets": {path: [rc, rb, wc, wb]},
/// "all": [...], "percentiles": n}.
const SUM_XML: &str = r#"
import json, sys, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.read())
ts = root.find("TimeSpan")
out = {"threads": 0, "targets": {}, "all": [0, 0, 0, 0, 0, 0]}
for th in ts.findall("Thread"):
    out["threads"] += 1
    int(th.find("Id").text)
    for t in th.findall("Target"):
        v = [int(t.find(k).text) for k in ("ReadCount", "ReadBytes", "WriteCount", "WriteBytes", "IOCount", "BytesCount")]
        s = out["targets"].setdefault(t.find("Path").text, [0, 0, 0, 0, 0, 0])
        for i in range(6):
            s[i] += v[i]
            out["all"][i] += v[i]
out["percentiles"] = len(ts.find("Latency").findall("Bucket"))
out["iops_stddev"] = float(ts.find("Iops").find("IopsStdDev").text)
out["profile_targets"] = len(root.find("Profile").find("TimeSpans").find("TimeSpan").find("Targets").findall("Target"))
print(json.dumps(out))
"#;

fn sum_xml(xml: &str) -> Option<serde_json::Value> {
    use std::io::Write;
    let mut child = std::process::Command::new("python3")
        .args(["-c", SUM_XML])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(xml.as_bytes()).ok()?;
    let o = child.wait_with_output().ok()?;
    assert!(
        o.status.success(),
        "python3: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(serde_json::from_slice(&o.stdout).unwrap())
}

// Acceptance (issue 25): -Rxml of a 2-thread, 2-target run parses with an XML reader
// by diskspd's element names, and the per-thread/per-target counts sum exactly to the
// totals of ioscope's own result.
#[test]
fn diskspd_xml_counts_add_up_to_the_result_per_thread_and_target() {
    // tmpfs when there is one: small files, no disk wear; cached I/O (no -S) works there.
    let shm = std::path::Path::new("/dev/shm");
    let d = if shm.is_dir() {
        tempfile::Builder::new()
            .prefix("ioscope-ds")
            .tempdir_in(shm)
            .unwrap()
    } else {
        tempdir()
    };
    let (a, b) = (d.path().join("a.dat"), d.path().join("b.dat"));
    let json = d.path().join("r.json");
    let o = ioscope()
        .args([
            "diskspd", "-b4K", "-d1", "-W0", "-t2", "-o2", "-r", "-w30", "-c4M", "-n", "-Rxml",
        ])
        .args([a.to_str().unwrap(), b.to_str().unwrap()])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let xml = stdout(&o);
    assert!(
        xml.starts_with("<Results>"),
        "{}",
        &xml[..xml.len().min(200)]
    );
    let Some(sums) = sum_xml(&xml) else {
        return skip_or_fail("python3 is not installed");
    };
    let doc = read_json(&json);
    let run = &doc["runs"][0];
    assert_eq!(sums["threads"], 4, "2 threads on each of 2 targets");
    assert_eq!(run["workers"], 4);
    let t = &run["totals"];
    let want = [
        &t["read"]["ios"],
        &t["read"]["bytes"],
        &t["write"]["ios"],
        &t["write"]["bytes"],
        &t["ios"],
        &t["bytes"],
    ];
    for (i, w) in want.iter().enumerate() {
        assert_eq!(&sums["all"][i], *w, "column {i}: {sums}");
    }
    assert!(t["ios"].as_u64().unwrap() > 0, "the run did I/O");
    for (i, p) in [&a, &b].iter().enumerate() {
        let wt = &run["workloads"][i]["totals"];
        let got = &sums["targets"][p.to_str().unwrap()];
        assert_eq!(got[0], wt["read"]["ios"], "{}", p.display());
        assert_eq!(got[2], wt["write"]["ios"], "{}", p.display());
        assert_eq!(got[5], wt["bytes"], "{}", p.display());
    }
    // Percentiles 0, 1–99, 99.9 … 99.99999 and 100, as diskspd writes them.
    assert_eq!(sums["percentiles"], 106);
    assert_eq!(sums["profile_targets"], 2);
}

/// `-rs30`: 30 % of the I/Os at a random offset, the others starting where the
/// thread's previous I/O ended (diskspd's mixed mode), recorded in issue order
/// (one thread, one I/O in flight); `-Rxml` writes the ratio as diskspd does.
#[test]
fn mixed_random_and_sequential_io_continues_from_the_previous_io() {
    let d = tempdir();
    let file = d.path().join("a.dat");
    let line = |out: &str| {
        let o = ioscope()
            .args([
                "diskspd", "-b4K", "-d1", "-W0", "-t1", "-o1", "-rs30", "-w50",
            ])
            .args(["-c4M", "-n", out, file.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    assert!(line("-Rxml").contains("<RandomRatio>30</RandomRatio>"));
    let log = d.path().join("rec.log");
    let toml = line("-Rp").replace(
        "name = \"r0-w0\"\n",
        &format!("name = \"r0-w0\"\nrecord = \"{}\"\n", log.display()),
    );
    assert!(toml.contains("random_pct = 30.0"), "{toml}");
    let job = d.path().join("j.toml");
    std::fs::write(&job, toml).unwrap();
    ioscope_to(&d.path().join("r.json"), ["run", job.to_str().unwrap()]).expect_code(0);
    let ios: Vec<(u64, u64)> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            matches!(f.get(2), Some(&"read" | &"write"))
                .then(|| (f[3].parse().unwrap(), f[4].parse().unwrap()))
        })
        .collect();
    // The first 5000 (diskspd's seed 0: the same draws every run).
    assert!(ios.len() >= 5000, "{} I/Os recorded", ios.len());
    let next = ios[..5000]
        .windows(2)
        .filter(|p| p[1].0 == p[0].0 + p[0].1)
        .count();
    let share = next as f64 / 4999.0;
    // 70 % continue (± 4.6 σ); a random one lands on the next block 1 time in 1024.
    assert!(
        (0.67..0.73).contains(&share),
        "{share:.3} continue the previous I/O"
    );
}

/// Runs `switches` on two small files (`-c1M`) with `-Rxml`, reads the `<Profile>`
/// it wrote back with `-X`, and returns (the profile, the line's plan, the profile's
/// plan) as `-Rp` prints them; the whole result read with `-X`, and `convert` of
/// either, give the same plan.
fn profile_round_trip(switches: &[&str]) -> (String, String, String) {
    let d = tempdir();
    let files: Vec<String> = ["a.dat", "b.dat"]
        .iter()
        .map(|f| d.path().join(f).to_str().unwrap().to_string())
        .collect();
    let line = |out: &str| {
        let o = ioscope()
            .args(["diskspd", "-b4K", "-d1", "-W0", "-o2", "-c1M", out])
            .args(switches)
            .args(&files)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    let xml = line("-Rxml");
    let (start, end) = (xml.find("<Profile>"), xml.find("</Profile>"));
    let (Some(start), Some(end)) = (start, end) else {
        panic!("no <Profile> in the result: {xml}");
    };
    let profile = xml[start..end + "</Profile>".len()].to_string();
    let path = d.path().join("profile.xml");
    std::fs::write(&path, &profile).unwrap();
    let o = run(&["diskspd", &format!("-X{}", path.display()), "-Rp"]);
    assert_eq!(o.status.code(), Some(0), "{}\n{profile}", stderr(&o));
    // The whole result reads as its <Profile>, and `convert` reads either as -X does.
    let whole = d.path().join("result.xml");
    std::fs::write(&whole, &xml).unwrap();
    let w = run(&["diskspd", &format!("-X{}", whole.display()), "-Rp"]);
    assert_eq!(
        (w.status.code(), stdout(&w)),
        (Some(0), stdout(&o)),
        "{}",
        stderr(&w)
    );
    for file in [&path, &whole] {
        let c = run(&["convert", file.to_str().unwrap()]);
        assert_eq!(
            (c.status.code(), stdout(&c)),
            (Some(0), stdout(&o)),
            "convert {}: {}",
            file.display(),
            stderr(&c)
        );
    }
    (profile, line("-Rp"), stdout(&o))
}

/// The profile `switches` write over two targets says `<ThreadCount>` `count` and
/// `<ThreadsPerFile>` `per_file` for each target, and reads back as the line's plan
/// (`workers` workers).
fn assert_profile_round_trip(switches: &[&str], count: u32, per_file: u32, workers: u32) {
    let (profile, line, back) = profile_round_trip(switches);
    let has = |tag: &str, n: u32| profile.matches(&format!("<{tag}>{n}</{tag}>")).count();
    assert_eq!(has("ThreadCount", count), 1, "{profile}");
    assert_eq!(has("ThreadsPerFile", per_file), 2, "{profile}");
    let want = format!("workers = {workers}");
    assert!(line.lines().any(|l| l == want), "{line}");
    assert_eq!(back, line, "the profile's plan differs from the line's");
}

// Regression (issue 25): the profile of a -t2 run over two targets said
// <ThreadCount>4</ThreadCount> (the run's workers), which diskspd and ioscope read as
// -F4, threads shared by the targets: read back, the run had 2 workers, not 4.
#[test]
fn profile_of_threads_per_target_reads_back_as_the_same_plan() {
    assert_profile_round_trip(&["-t2"], 0, 2, 4);
}

// Regression (issue 25): the profile of a -F2 run said <ThreadsPerFile>2</…> beside
// <ThreadCount>2</…>, which diskspd refuses (-F with -t); it writes 1 per target, and
// ioscope read that 1 as -t1 (one thread per target) until -F won over -t1.
#[test]
fn profile_of_shared_threads_reads_back_as_the_same_plan() {
    assert_profile_round_trip(&["-F2"], 2, 1, 2);
}

// Regression (issue 25): the profile of -Rxml left out <FileSize> (-c), the caching
// (-Sh/-Su/-Sw), <Distribution> (-rdpct/-rdabs), <WriteBufferContent> and
// <RandomWriteData> (-Z, -Zr), <DisableAffinity> (-n), <RandSeed> (-z) and
// <BurstSize>/<ThinkTime> (-i/-j), so a
// profile cut from ioscope's own result ran another plan: cached, uniform, counting
// bytes, seed 0.
#[test]
fn profile_of_cache_content_distribution_affinity_and_seed_reads_back_as_the_same_plan() {
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &["-r", "-rdpct10/50:20/10", "-w30", "-Sh", "-Z", "-z7", "-n"],
            &[
                "<DisableAffinity>true</DisableAffinity>",
                "<RandSeed>7</RandSeed>",
                "<DisableOSCache>true</DisableOSCache>",
                "<WriteThrough>true</WriteThrough>",
                "<Pattern>zero</Pattern>",
                "<FileSize>1048576</FileSize>",
                "<Percent>",
                "<Range IO=\"20\">10</Range>",
            ],
        ),
        (
            // 100K of 1M is no whole percent: the ranges stay in bytes.
            &["-r", "-rdabs20/100K", "-w50", "-Su", "-Zr", "-z3", "-a0"],
            &[
                "<DisableAffinity>false</DisableAffinity>",
                "<RandomWriteData>true</RandomWriteData>",
                "<AffinityGroupAssignment Group=\"0\" Processor=\"0\"/>",
                "<Absolute>",
                "<Range IO=\"20\">102400</Range>",
            ],
        ),
        (
            &["-s", "-w100", "-Sw"],
            &[
                "<Pattern>sequential</Pattern>",
                "<RandSeed>0</RandSeed>",
                "<WriteThrough>true</WriteThrough>",
            ],
        ),
        (
            // Bursts of 6 I/Os shared by 2 threads, then a 1 ms pause (-i, -j).
            &["-s", "-w0", "-t2", "-i6", "-j1"],
            &["<BurstSize>6</BurstSize>", "<ThinkTime>1</ThinkTime>"],
        ),
    ];
    for (switches, elements) in cases {
        let (profile, line, back) = profile_round_trip(switches);
        for e in elements {
            // The time span's elements once, the targets' once per target.
            let span = [
                "<DisableAffinity>",
                "<RandSeed>",
                "<RandomWriteData>",
                "<Affinity",
            ];
            let n = if span.iter().any(|s| e.starts_with(s)) {
                1
            } else {
                2
            };
            assert_eq!(profile.matches(e).count(), n, "{e} in {profile}");
        }
        assert!(line.contains("size = \"1m\""), "{line}");
        assert_eq!(
            back, line,
            "{switches:?}: the profile's plan differs from the line's"
        );
    }
}
