//! Declared settings end to end (issue 24): a setting declared once in the registry
//! is read from a job file, a flag and a fio job, written back by `convert`, echoed in
//! the result and acted on. `invalidate` is the first: fio's page-cache drop.

use super::*;

/// Bytes of `path` in the page cache, as util-linux's fincore counts them.
fn resident_bytes(path: &Path) -> u64 {
    let out = std::process::Command::new("fincore")
        .args(["--bytes", "--noheadings", "--output", "RES"])
        .arg(path)
        .output()
        .expect("fincore (util-linux)");
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("fincore said {text:?}"))
}

/// Reads the whole file through the page cache, so all of it is resident.
fn warm(path: &Path) -> u64 {
    std::fs::read(path).expect("read");
    resident_bytes(path)
}

/// A buffered read of 64 KiB at the end of a 16 MiB file that was all in the page
/// cache: by default (fio's `invalidate=1`) the cache is dropped first, so what is
/// left resident afterwards is the 64 KiB read plus readahead; with
/// `--invalidate false` all 16 MiB stay resident. The result echoes the setting.
#[test]
fn invalidate_drops_the_page_cache_before_a_buffered_run() {
    let dir = tempdir();
    let fs = std::process::Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(dir.path())
        .output()
        .expect("stat");
    if String::from_utf8_lossy(&fs.stdout).trim() == "tmpfs" {
        skip_or_fail("the temp dir is on tmpfs, whose pages are the storage itself");
        return;
    }
    const FILE_BYTES: u64 = 16 << 20;
    let file = dir.path().join("f.dat");
    let data: Vec<u8> = (0..FILE_BYTES).map(|i| (i * 7 + i / 4096) as u8).collect();
    std::fs::write(&file, data).expect("write");
    let job = dir.path().join("j.toml");
    std::fs::write(
        &job,
        format!(
            "[[target]]\npath = {:?}\ndirect = false\n\n[[workload]]\nrw = \"read\"\n\
             bs = \"4k\"\noffset = \"15m\"\nsize = \"64k\"\n\n[[run]]\nworkloads = [\"w0\"]\n\
             passes = 1\n",
            file.display().to_string()
        ),
    )
    .expect("job file");
    let job = job.to_str().unwrap();

    assert_eq!(warm(&file), FILE_BYTES, "the warmed file is all resident");
    let ran = ioscope_result(["run", job]).expect_code(0);
    // 64 KiB read plus the kernel's readahead (at most a few MiB): far below the
    // 16 MiB that stay resident without the drop.
    let left = resident_bytes(&file);
    assert!(
        left < 4 << 20,
        "{left} bytes still resident after invalidate"
    );
    assert_eq!(ran.wire["runs"][0]["workload"]["invalidate"], true);

    assert_eq!(warm(&file), FILE_BYTES);
    let ran = ioscope_result(["run", job, "--invalidate", "false"]).expect_code(0);
    assert_eq!(
        resident_bytes(&file),
        FILE_BYTES,
        "--invalidate false drops nothing"
    );
    assert_eq!(ran.wire["runs"][0]["workload"]["invalidate"], false);
}

/// fio's `invalidate=0` becomes the job file's `invalidate = false` and goes back to
/// fio as `invalidate=0`; a flag that is not a boolean is refused naming it.
#[test]
fn invalidate_translates_from_fio_and_back_and_bad_values_are_refused() {
    let dir = tempdir();
    let fio = dir.path().join("j.fio");
    std::fs::write(
        &fio,
        "[j]\nfilename=/tmp/x\nrw=read\nsize=1m\ninvalidate=0\n",
    )
    .unwrap();
    let toml = run(&["convert", fio.to_str().unwrap()]);
    assert!(toml.status.success(), "{}", stderr(&toml));
    assert!(
        stdout(&toml).contains("invalidate = false"),
        "{}",
        stdout(&toml)
    );
    let native = dir.path().join("j.toml");
    std::fs::write(&native, stdout(&toml)).unwrap();
    let back = run(&["convert", native.to_str().unwrap(), "--to", "fio"]);
    assert!(back.status.success(), "{}", stderr(&back));
    assert!(
        stdout(&back).contains("\ninvalidate=0\n"),
        "{}",
        stdout(&back)
    );

    let bad = run(&["run", "--target", "mem:1m", "--invalidate", "maybe"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("--invalidate") && stderr(&bad).contains("'maybe'"),
        "{}",
        stderr(&bad)
    );
    let job = dir.path().join("bad.toml");
    std::fs::write(
        &job,
        "[[target]]\npath = \"mem:1m\"\n\n[[workload]]\ninvalidate = \"yes\"\n",
    )
    .unwrap();
    let bad = run(&["run", job.to_str().unwrap()]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("bad.toml:5:14: 'invalidate' must be true or false"),
        "{}",
        stderr(&bad)
    );
}
