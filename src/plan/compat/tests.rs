//! Fixture tests: every input under tests/fixtures/compat/ is translated and compared
//! with its insta snapshot, stored beside the input as `NAME.snap` (input and expected
//! translation side by side, so the corpus reads as documentation of the mapping). A
//! difference fails with a diff; review and accept changes with `cargo insta review`
//! (or `INSTA_UPDATE=always cargo test --lib plan::compat`, then read `git diff`) —
//! they must be right, not just recorded.

use std::path::{Path, PathBuf};

use super::*;
use crate::plan::model::{AccessPattern, EngineKind, Rate};

fn fixtures() -> PathBuf {
    // Relative to the package root (the test's working directory) so that locations in
    // expectations do not depend on where the repository is checked out.
    PathBuf::from("tests/fixtures/compat")
}

fn env(name: &str) -> Option<String> {
    match name {
        "TESTDIR" => Some("/data/test".into()),
        "DEV" => Some("/dev/nvme0n1".into()),
        "BS" => Some("16k".into()),
        // fio's keywords, as a machine with 4 KiB pages, 8 GiB and 4 CPUs has them.
        "$pagesize" => Some("4096".into()),
        "$mb_memory" => Some("8192".into()),
        "$ncpus" => Some("4".into()),
        _ => None,
    }
}

fn render(r: &Result<Translated, CompatError>) -> serde_json::Value {
    match r {
        Ok(t) => serde_json::to_value(t).expect("serialisable"),
        Err(e) => serde_json::json!({ "error": e.to_string() }),
    }
}

/// Snapshot of one fixture: `actual`, pretty-printed by serde_json (the accepted
/// snapshots were written that way, so their text is the JSON a reader would see), is
/// compared with `NAME.snap` in the input's directory. A mismatch is recorded in
/// `failures` rather than ending the test, so one run shows (and, with
/// `INSTA_UPDATE=new`, writes `.snap.new` files for) every fixture that changed.
fn check(input: &Path, name: &str, actual: &serde_json::Value, failures: &mut Vec<String>) {
    let text = serde_json::to_string_pretty(actual).expect("json");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(input.parent().expect("fixture dir"));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        insta::with_settings!({
            snapshot_path => dir,
            prepend_module_to_snapshot => false,
            input_file => input,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(name, text);
        });
    }));
    if outcome.is_err() {
        failures.push(input.display().to_string());
    }
}

/// The snapshot name of an input: its file name without the extension.
fn snapshot_name(p: &Path) -> String {
    p.file_stem()
        .expect("file name")
        .to_string_lossy()
        .into_owned()
}

fn fail_listing(failures: &[String]) -> String {
    format!(
        "{} fixture(s) differ from their snapshots (diffs above): {}",
        failures.len(),
        failures.join(", ")
    )
}

fn files_with(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

fn translate_fio_fixture(p: &Path) -> Result<Translated, CompatError> {
    let text = std::fs::read_to_string(p).expect("read fixture");
    let name = p.file_name().unwrap().to_string_lossy().to_string();
    if p.extension().is_some_and(|e| e == "cmd") {
        fio::parse_args(&split_command_line(&text)?)
    } else {
        fio::parse_str(&name, &text, p.parent().unwrap(), &env)
    }
}

#[test]
fn fio_fixtures_match_expectations() {
    let dir = fixtures().join("fio");
    let mut failures = Vec::new();
    let mut n = 0;
    for ext in ["fio", "cmd"] {
        for p in files_with(&dir, ext) {
            n += 1;
            check(
                &p,
                &snapshot_name(&p),
                &render(&translate_fio_fixture(&p)),
                &mut failures,
            );
        }
    }
    assert!(n >= 40, "only {n} fio fixtures");
    assert!(failures.is_empty(), "{}", fail_listing(&failures));
}

#[test]
fn vdbench_fixtures_match_expectations() {
    let dir = fixtures().join("vdbench");
    let mut failures = Vec::new();
    let files = files_with(&dir, "parm");
    assert!(files.len() >= 10, "only {} vdbench fixtures", files.len());
    for p in files {
        let text = std::fs::read_to_string(&p).expect("read fixture");
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        check(
            &p,
            &snapshot_name(&p),
            &render(&vdbench::parse_str(&name, &text)),
            &mut failures,
        );
    }
    assert!(failures.is_empty(), "{}", fail_listing(&failures));
}

/// Parameter files published in public repositories (tests/fixtures/compat/published/
/// vdbench/, each naming its source), translated with the command-line arguments
/// their `* run:` line gives, as their sources run them; scripts/published.py
/// tabulates how `convert` fares on them for docs/compat-vdbench.md.
#[test]
fn published_vdbench_files_match_expectations() {
    let dir = fixtures().join("published").join("vdbench");
    let mut failures = Vec::new();
    let files = files_with(&dir, "parm");
    assert!(
        files.len() >= 15,
        "only {} published vdbench files",
        files.len()
    );
    for p in files {
        let text = std::fs::read_to_string(&p).expect("read fixture");
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let args: Vec<String> = text
            .lines()
            .find_map(|l| l.strip_prefix("* run:"))
            .map(|a| a.split_whitespace().map(String::from).collect())
            .unwrap_or_default();
        // A Windows lun names nothing here: on `--target`, as scripts/published.py.
        let windows = text.contains("lun=\\\\") || text.contains(":\\");
        let target = windows.then_some("/tmp/x");
        let translated = vdbench::parse_text(&name, &text, &dir, &args, target);
        check(&p, &snapshot_name(&p), &render(&translated), &mut failures);
    }
    assert!(failures.is_empty(), "{}", fail_listing(&failures));
}

/// One command per line; `#` lines are comments.
#[test]
fn diskspd_and_sqlio_lines_match_expectations() {
    let p = fixtures().join("diskspd").join("lines.txt");
    let text = std::fs::read_to_string(&p).expect("read fixture");
    let mut results = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let r = split_command_line(l).and_then(|args| match detect(l) {
            Format::Sqlio => sqlio::parse_sqlio(&args, &fixtures().join("diskspd"), None),
            _ => diskspd::parse_diskspd(&args, None),
        });
        results.push(serde_json::json!({ "line": l, "result": render(&r) }));
    }
    assert!(results.len() >= 10, "only {} lines", results.len());
    let mut failures = Vec::new();
    check(
        &p,
        "lines",
        &serde_json::Value::Array(results),
        &mut failures,
    );
    assert!(failures.is_empty(), "{}", fail_listing(&failures));
}

/// diskspd XML profiles, each read as `diskspd -X<file>` reads it; a profile whose
/// comment says `same as: <line>` must give the very plan that line gives.
#[test]
fn diskspd_profiles_match_expectations() {
    let dir = fixtures().join("diskspd");
    let files = files_with(&dir, "xml");
    assert!(files.len() >= 4, "only {} profiles", files.len());
    let mut failures = Vec::new();
    let mut same = 0;
    for p in files {
        let t = diskspd::parse_diskspd(&[format!("-X{}", p.display())], None);
        check(&p, &snapshot_name(&p), &render(&t), &mut failures);
        let text = std::fs::read_to_string(&p).expect("read fixture");
        if let Some(line) = text.lines().find_map(|l| l.split("same as: ").nth(1)) {
            let line = line.trim_end_matches("-->").trim();
            let want = diskspd::parse_diskspd(&split_command_line(line).unwrap(), None).unwrap();
            let got = t
                .as_ref()
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert_eq!(got.plan, want.plan, "{} and '{line}'", p.display());
            same += 1;
        }
    }
    assert!(same >= 1, "no profile says which line it equals");
    assert!(failures.is_empty(), "{}", fail_listing(&failures));
}

fn case(name: &str) -> String {
    // The shared cases live beside the repository in CI; the copies under
    // tests/fixtures keep the test self-contained elsewhere.
    let shared = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/cases")
        .join(name);
    std::fs::read_to_string(&shared)
        .or_else(|_| std::fs::read_to_string(fixtures().join("cases").join(name)))
        .expect("case file")
}

#[test]
fn shared_case_fio_xfs_500_jobs() {
    let text = case("fio-xfs-500jobs.txt");
    assert_eq!(detect(&text), Format::FioArgs);
    let t = fio::parse_args(&split_command_line(&text).unwrap()).unwrap();
    assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
    assert_eq!(t.plan.runs.len(), 1);
    let run = &t.plan.runs[0];
    assert_eq!(run.engine, EngineKind::Uring);
    assert_eq!(run.duration_ns, Some(500_000_000_000));
    assert_eq!(run.workloads.len(), 1);
    let w = &run.workloads[0];
    assert_eq!((w.streams, w.qd, w.read_pct), (500, 1, 100));
    assert_eq!(w.pattern, AccessPattern::Random);
    assert_eq!(w.bs.single(), Some(4096));
    assert_eq!(w.rate, Rate::Max);
    assert_eq!(t.plan.targets.len(), 1);
    assert_eq!(t.plan.targets[0].uri, "/mnt/tom/fio/test");
    assert_eq!(t.plan.targets[0].direct, Some(true));
    assert_eq!(t.plan.targets[0].size_bytes, Some(1_000_000_000_001));
}

#[test]
fn shared_case_vdbench_ib_srp() {
    let text = case("vdbench-ib-srp.parm");
    assert_eq!(detect(&text), Format::Vdbench);
    let t = vdbench::parse_str("vdbench-ib-srp.parm", &text).unwrap();
    assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
    let streams: Vec<u64> = t.plan.runs.iter().map(|r| r.total_streams()).collect();
    assert_eq!(streams, vec![14, 16]);
    for run in &t.plan.runs {
        let w = &run.workloads[0];
        assert_eq!((w.qd, w.read_pct, w.bs.single()), (1, 100, Some(4096)));
        assert_eq!(w.pattern, AccessPattern::Random);
        assert_eq!(w.rate, Rate::Max);
        assert_eq!(run.interval_ns, 5_000_000_000);
    }
    assert_eq!(t.plan.targets[0].uri, "/dev/dm-39");
    assert_eq!(t.plan.targets[0].direct, Some(true));
}

#[test]
fn detection() {
    assert_eq!(detect("; c\n[global]\nrw=read\n"), Format::Fio);
    assert_eq!(detect("* c\nsd=sd1,lun=/dev/x\n"), Format::Vdbench);
    assert_eq!(detect("compratio=2\nsd=sd1,lun=/dev/x\n"), Format::Vdbench);
    assert_eq!(detect("fio --name=x"), Format::FioArgs);
    assert_eq!(detect("diskspd.exe -b8K x"), Format::Diskspd);
    // A quoted program path, as PowerShell's `&` passes it, is one word.
    assert_eq!(
        detect("\"C:\\Program Files\\DiskSpd\\diskspd.exe\" -b8K x"),
        Format::Diskspd
    );
    assert_eq!(detect("sqlio -kR x"), Format::Sqlio);
    assert_eq!(
        detect("<?xml version=\"1.0\"?>\n<Profile><TimeSpans/></Profile>"),
        Format::DiskspdProfile
    );
    assert_eq!(detect("hello world"), Format::Unknown);
}

#[test]
fn target_override_replaces_every_uri() {
    let mut t = fio::parse_str(
        "t.fio",
        "[a]\nfilename=/a\n[b]\nfilename=/b\n",
        Path::new("."),
        &env,
    )
    .unwrap();
    apply_target_override(&mut t.plan, "/mnt/x");
    assert!(t.plan.targets.iter().all(|t| t.uri == "/mnt/x"));
}

#[test]
fn error_display_forms() {
    let e = CompatError {
        source_name: "job.fio".into(),
        line: 3,
        column_or_arg: None,
        msg: "bad".into(),
    };
    assert_eq!(e.to_string(), "job.fio:3: bad");
    let e = CompatError {
        source_name: "command line".into(),
        line: 0,
        column_or_arg: Some(Position::Arg {
            index: 2,
            text: "-b0".into(),
        }),
        msg: "bad".into(),
    };
    assert_eq!(e.to_string(), "argument 2 ('-b0'): bad");
}

#[test]
fn shell_splitting() {
    assert_eq!(
        split_command_line("a 'b c' \"d\\\"e\" f\\ g \\\n h C:\\x\\y \\\\srv\\s").unwrap(),
        vec!["a", "b c", "d\"e", "f g", "h", "C:\\x\\y", "\\\\srv\\s"]
    );
    assert!(split_command_line("a 'b").is_err());
}

/// Small deterministic generator for the no-panic test.
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn feed_all_parsers(text: &str) {
    let _ = detect(text);
    let _ = fio::parse_str("fuzz.fio", text, Path::new("/nonexistent"), &env);
    let _ = vdbench::parse_str("fuzz.parm", text);
    let _ = diskspd::tests::parse_profile_text(text, &[]);
    if let Ok(args) = split_command_line(text) {
        let _ = fio::parse_args(&args);
        let _ = diskspd::parse_diskspd(&args, None);
        let _ = sqlio::parse_sqlio(&args, Path::new("/nonexistent"), None);
        let _ = diskspd::parse_diskspd(&args, Some("/tmp/x"));
    }
    let words: Vec<String> = text.split_whitespace().map(String::from).collect();
    let _ = fio::parse_args(&words);
    let _ = diskspd::parse_diskspd(&words, None);
    let _ = sqlio::parse_sqlio(&words, Path::new("/nonexistent"), None);
}

// Guards the "never panic on any input" rule: truncations, byte flips and random
// bytes of every fixture go through every parser.
#[test]
fn no_parser_panics_on_mangled_input() {
    let mut inputs = Vec::new();
    for sub in ["fio", "vdbench", "diskspd", "cases"] {
        for e in std::fs::read_dir(fixtures().join(sub)).expect("fixture dir") {
            let p = e.expect("entry").path();
            // Snapshots (and pending `.snap.new` files) are expectations, not inputs.
            if p.to_string_lossy().contains(".snap") {
                continue;
            }
            inputs.push(std::fs::read(&p).expect("read"));
        }
    }
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let alphabet = b"=,()[]-:/\\'\"*#;$%{}0123456789kmgKMG \n\txsdrw";
    for bytes in &inputs {
        for cut in (0..bytes.len()).step_by(7) {
            feed_all_parsers(&String::from_utf8_lossy(&bytes[..cut]));
        }
        for _ in 0..40 {
            let mut b = bytes.clone();
            for _ in 0..1 + rng.next() % 6 {
                if b.is_empty() {
                    break;
                }
                let i = (rng.next() as usize) % b.len();
                b[i] = alphabet[(rng.next() as usize) % alphabet.len()];
            }
            feed_all_parsers(&String::from_utf8_lossy(&b));
        }
    }
    for _ in 0..300 {
        let len = (rng.next() % 200) as usize;
        let b: Vec<u8> = (0..len)
            .map(|_| alphabet[(rng.next() as usize) % alphabet.len()])
            .collect();
        feed_all_parsers(&String::from_utf8_lossy(&b));
        let raw: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        feed_all_parsers(&String::from_utf8_lossy(&raw));
    }
}
