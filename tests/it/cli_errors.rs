//! Bad input never panics and never starts I/O: one clear message, exit code 2.

use super::*;

fn assert_bad(args: &[&str], needle: &str) {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "args {args:?}: stderr {err}");
    assert!(
        err.contains(needle),
        "args {args:?}: expected '{needle}' in: {err}"
    );
    assert!(!err.contains("panicked"), "panic on {args:?}: {err}");
}

#[test]
fn bad_units_name_the_value() {
    assert_bad(&["run", "--target", "mem:1m", "--bs", "4kk"], "'4kk'");
    assert_bad(&["run", "--target", "mem:1m", "--bs", "-1"], "'-1'");
    // Values are parsed by the flag's value parser: clap names the value and the flag.
    assert_bad(
        &["run", "--target", "mem:1m", "--bs", "0"],
        "'0' for '--bs <SIZE>'",
    );
    assert_bad(
        &["run", "--target", "mem:1m", "--bs", "4k,0"],
        "'0' for '--bs <SIZE>'",
    );
    assert_bad(
        &["run", "--target", "mem:1m", "--duration", "5x"],
        "'5x' for '--duration <DUR>'",
    );
    assert_bad(
        &["run", "--target", "mem:1m", "--qd", "0"],
        "'0' for '--qd <N>'",
    );
    assert_bad(&["run", "--target", "mem:0"], "mem:0");
    assert_bad(
        &[
            "run", "--target", "mem:1m", "--rate", "1000", "--pacing", "fast",
        ],
        "'fast' for '--pacing <MODE>'",
    );
}

#[test]
fn typed_flags_refuse_unknown_words_before_anything_is_written() {
    let d = tempdir();
    let json = d.path().join("r.json");
    let j = json.to_str().unwrap();
    let cases: [(&[&str], &str); 7] = [
        (
            &["run", "--target", "mem:1m", "--on-error", "sometimes"],
            "'sometimes' for '--on-error <POLICY>'",
        ),
        (
            &["run", "--target", "mem:1m", "--output-format", "xml"],
            "'xml' for '--output-format <FORMAT>'",
        ),
        (
            &[
                "run",
                "--target",
                "mem:1m",
                "--steady-state",
                "--steady-metric",
                "p42",
            ],
            "'p42' for '--steady-metric <METRIC>'",
        ),
        (
            &["run", "--target", "mem:1m", "--engine", "warp"],
            "'warp' for '--engine <ENGINE>'",
        ),
        (
            &["curve", "--target", "mem:1m", "--max-latency", "p42=1ms"],
            "'p42=1ms' for '--max-latency <PCT=DUR>'",
        ),
        (&["pts", "speed", "mem:1m"], "'speed' for '<TEST>'"),
        (
            &["report", "r.json", "--format", "pdf"],
            "'pdf' for '--format <FORMAT>'",
        ),
    ];
    for (args, needle) in cases {
        let mut all = args.to_vec();
        all.extend(["--json", j]);
        if args[0] == "report" {
            all.truncate(args.len());
        }
        assert_bad(&all, needle);
        assert!(!json.exists(), "{args:?}: nothing may be written");
    }
    assert_bad(
        &["convert", "--to", "xml", "job.fio"],
        "'xml' for '--to <FORM>'",
    );
    assert_bad(&["convert", "job.fio", "--to", "xml"], "--to 'xml'");
}

#[test]
fn unknown_flag_is_refused() {
    assert_bad(
        &["run", "--target", "mem:1m", "--blocksize", "4k"],
        "--blocksize",
    );
}

#[test]
fn block_size_larger_than_working_set() {
    assert_bad(
        &["run", "--target", "mem:1m", "--bs", "2m"],
        "larger than the working set",
    );
}

#[test]
fn missing_target_and_missing_dir() {
    let d = tempdir();
    let missing = d.path().join("nope.dat");
    assert_bad(
        &["run", "--target", missing.to_str().unwrap()],
        "does not exist",
    );
    assert!(!missing.exists(), "nothing may be created");
    let in_missing_dir = d.path().join("no/such/dir/f.dat");
    assert_bad(
        &[
            "run",
            "--target",
            in_missing_dir.to_str().unwrap(),
            "--size",
            "1m",
        ],
        "does not exist",
    );
    assert_bad(&["run"], "no target");
}

#[test]
fn misaligned_direct_io_is_refused_before_the_run() {
    let d = tempdir();
    let f = d.path().join("f.dat");
    let o = run(&[
        "run",
        "--target",
        f.to_str().unwrap(),
        "--size",
        "1m",
        "--bs",
        "1000",
        "--direct",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("O_DIRECT"), "{}", stderr(&o));
    assert!(!stdout(&o).contains("interval"), "no run may start");
}

#[test]
fn permission_denied_is_input_error() {
    if !is_root() {
        // As a normal user, /proc/kcore or a root-only file gives EACCES.
        let o = run(&["run", "--target", "/etc/shadow", "--bs", "4k"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        return;
    }
    // Root bypasses permissions; a read-only filesystem path gives EROFS/EACCES instead.
    let o = run(&[
        "run",
        "--target",
        "/proc/version",
        "--bs",
        "4k",
        "--rw",
        "randwrite",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn bad_json_path_fails_before_the_run() {
    let o = run(&[
        "run",
        "--target",
        "mem:1m",
        "--duration",
        "1s",
        "--json",
        "/no/such/dir/r.json",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--json"), "{}", stderr(&o));
}

// Regression (issue 10): a rejected command line left a 16 MiB file behind, because
// the target was created before the plan's checks ran. Every check that can fail
// on the plan alone now runs first, and an existing file is not extended either.
#[test]
fn rejected_command_lines_create_no_file() {
    let d = tempdir();
    let f = d.path().join("new.dat");
    let p = f.to_str().unwrap();
    let rejected: &[&[&str]] = &[
        &["--size", "16m", "--bs", "1000", "--direct", "true"],
        &["--size", "16m", "--bs", "1000"],
        &["--size", "1m", "--bs", "2m"],
        &["--size", "16m", "--cpus", "4095"],
        &["--size", "16m", "--engine", "mem"],
        &["--size", "16m", "--qd", "0"],
        &["--size", "16m", "--on-error", "sometimes"],
        &["--size", "16m", "--io-timeout", "soon"],
    ];
    for extra in rejected {
        let mut args = vec!["run", "--target", p, "--duration", "1s", "-q"];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(
            !stderr(&o).contains("panicked"),
            "{extra:?}: {}",
            stderr(&o)
        );
        assert!(!f.exists(), "{extra:?} created {}", f.display());
    }
    // An existing, smaller file is neither extended nor changed.
    std::fs::write(&f, vec![7u8; 8192]).unwrap();
    let o = run(&[
        "run", "--target", p, "--size", "16m", "--bs", "1000", "--direct", "true", "-q",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        std::fs::metadata(&f).unwrap().len(),
        8192,
        "the file was extended"
    );
    assert_eq!(std::fs::read(&f).unwrap(), vec![7u8; 8192]);
}

#[test]
fn channels_apply_only_to_smb_targets_and_create_nothing() {
    let d = tempdir();
    let f = d.path().join("new.dat");
    let t = f.to_str().unwrap();
    assert_bad(
        &["run", "-t", t, "--size", "1m", "--channels", "2"],
        "--channels",
    );
    assert!(!f.exists(), "a rejected command line created {t}");
    assert_bad(&["run", "-t", "mem:1m", "--channels", "0"], "--channels");
    assert_bad(&["run", "-t", "mem:1m", "--channels", "33"], "--channels");
}

// Regression: a file target larger than its file system's free space (fio's
// examples ask for size=100g) was laid out until ENOSPC, filling the disk, and the
// half-written file stayed behind. It is refused before the first byte, naming both
// sizes, and nothing is left.
#[test]
fn a_file_larger_than_the_free_space_is_refused_before_anything_is_written() {
    let dir = tempdir();
    let file = dir.path().join("big.dat");
    let o = run(&[
        "run",
        "--target",
        file.to_str().unwrap(),
        "--size",
        "100t",
        "--rw",
        "read",
        "--duration",
        "1s",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("laying it out takes 100t (102400.0 GiB)") && e.contains("GiB free"),
        "{e}"
    );
    assert!(!file.exists(), "the refused file was left behind");
}

// random_map walks uniform random offsets: on a sequential workload or a skewed
// distribution it is refused before any I/O, saying what it needs.
#[test]
fn random_map_is_refused_where_offsets_are_not_uniform_random_draws() {
    let base = [
        "run",
        "--target",
        "mem:1m",
        "--duration",
        "1s",
        "--random-map",
    ];
    let args = |more: &[&'static str]| [&base[..], more].concat();
    assert_bad(&args(&["--rw", "read"]), "random_map needs random access");
    assert_bad(
        &args(&["--rw", "randread", "--dist", "zipf:1.2"]),
        "random_map needs the uniform distribution",
    );
}
