//! Jobs spread over several files read and written as bytes (fio's `nrfiles`,
//! `unlink`): the files made, their sizes, the I/O each received (read back by the
//! verify pass), and the files removed after the run — only those the run created.

use super::*;

/// Runs `ioscope run FILE` on a fio job file written into `dir`, expecting exit 0
/// (3 would mean something in it was not translated).
fn run_fio(dir: &Path, job: &str) -> Ran {
    let file = dir.join("job.fio");
    std::fs::write(&file, job).unwrap();
    ioscope_to(&dir.join("r.json"), ["run", file.to_str().unwrap(), "-q"]).expect_code(0)
}

fn sizes(dir: &Path, names: &[&str]) -> Vec<Option<u64>> {
    names
        .iter()
        .map(|n| std::fs::metadata(dir.join(n)).ok().map(|m| m.len()))
        .collect()
}

#[test]
fn nrfiles_makes_four_files_and_every_block_of_each_is_written_and_read_back() {
    for engine in ["psync", "io_uring"] {
        let out = tempdir();
        let work = tempdir();
        let job = format!(
            "[j]\ndirectory={}\nsize=4m\nnrfiles=4\nfile_service_type=random\n\
             rw=write\nbs=64k\nioengine={engine}\niodepth=4\nverify=crc32c\n",
            work.path().display()
        );
        let r = run_fio(out.path(), &job);
        let names = ["j.0.0", "j.0.1", "j.0.2", "j.0.3"];
        assert_eq!(
            sizes(work.path(), &names),
            vec![Some(1 << 20); 4],
            "{engine}"
        );
        let run0 = r.run(0);
        assert!(run0.target.starts_with("files:"), "{}", run0.target);
        // One pass over 4 MiB: 64 writes of 64k, spread over the four files.
        assert_eq!((run0.totals.write.ios, run0.totals.write.errors), (64, 0));
        // The read-back after the run finds every 4k unit of every file written by
        // this run, at the right place: each file got its whole megabyte.
        let v = run0.verify.as_ref().expect("verify counts");
        assert_eq!(
            (v.units_checked, v.ok, v.untracked),
            (1024, 1024, 0),
            "{engine}: {v:?}"
        );
        assert_eq!(v.mismatches, 0, "{engine}: {v:?}");
        assert_eq!(
            r.wire_run(0)["workload"]["file_service"],
            "random",
            "{engine}"
        );
    }
}

#[test]
fn clones_get_files_of_their_own_and_a_random_mix_reaches_every_file() {
    let out = tempdir();
    let work = tempdir();
    let job = format!(
        "[m]\ndirectory={}\nsize=1m\nnrfiles=4\nnumjobs=2\nrw=randrw\nbs=4k\n\
         ioengine=psync\nverify=crc32c\n",
        work.path().display()
    );
    // The files are there beforehand, all zeros: what is not zero afterwards was
    // written by the run.
    for c in 0..2 {
        for f in 0..4 {
            std::fs::write(work.path().join(format!("m.{c}.{f}")), vec![0u8; 256 << 10]).unwrap();
        }
    }
    let r = run_fio(out.path(), &job);
    let names: Vec<String> = (0..2)
        .flat_map(|c| (0..4).map(move |f| format!("m.{c}.{f}")))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(sizes(work.path(), &names), vec![Some(256 << 10); 8]);
    let run0 = r.run(0);
    assert_eq!(run0.totals.read.errors + run0.totals.write.errors, 0);
    assert_eq!(run0.verify.as_ref().unwrap().mismatches, 0);
    // Round robin (the default) sends writes to each of the eight files.
    for n in &names {
        let data = std::fs::read(work.path().join(n)).unwrap();
        let written = data
            .chunks(4096)
            .filter(|b| b.iter().any(|&x| x != 0))
            .count();
        assert!(written > 4, "{n}: {written} blocks written");
    }
}

#[test]
fn unlink_removes_the_files_the_run_created_and_keeps_one_that_was_there() {
    let out = tempdir();
    let work = tempdir();
    // One of the four files is there before the run, at its full size.
    let mine = work.path().join("u.0.2");
    std::fs::write(&mine, vec![0x5au8; 64 << 10]).unwrap();
    let job = format!(
        "[u]\ndirectory={}\nsize=256k\nnrfiles=4\nrw=randwrite\nbs=4k\nioengine=psync\n\
         unlink=1\n",
        work.path().display()
    );
    let r = run_fio(out.path(), &job);
    assert_eq!(r.run(0).totals.write.ios, 64);
    let left: Vec<String> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        vec!["u.0.2".to_string()],
        "only the file that was there stays"
    );
    assert!(
        r.stderr
            .contains("kept the 1 files that were there before the run"),
        "{}",
        r.stderr
    );
    // A job whose files all are new leaves nothing behind.
    std::fs::remove_file(&mine).unwrap();
    run_fio(out.path(), &job);
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
}

#[test]
fn a_request_larger_than_a_file_is_refused_before_anything_is_made() {
    let work = tempdir();
    let set = format!("files:{}?count=4&size=8k", work.path().display());
    let o = run(&["run", "-t", &set, "--bs", "16k", "--passes", "1", "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no request crosses into the next file"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
}

/// Every file of `dir` named in `lens` (name, expected length): its length, and
/// the 4 KiB blocks of it that are all zeros (a fresh file's holes: never written).
fn zero_blocks(dir: &Path, lens: &[(String, u64)]) -> Vec<String> {
    let mut holes = Vec::new();
    for (name, len) in lens {
        let data = std::fs::read(dir.join(name)).unwrap_or_default();
        assert_eq!(data.len() as u64, *len, "{name}");
        for (k, block) in data.chunks(4096).enumerate() {
            if block.iter().all(|&b| b == 0) {
                holes.push(format!("{name}@{}", k * 4096));
            }
        }
    }
    holes
}

// Several streams over a set in one sequential pass: each writes whole files of its
// own, so every block of every file is written, and once (the bytes written are
// the set's). It used to write each file's first blocks once per stream and never
// the rest (the totals alone were right).
#[test]
fn a_sequential_pass_by_several_streams_writes_every_file_whole_once() {
    for (streams, size) in [
        (2, "256k"),
        (3, "256k"),
        (2, "64k-256k/4k&seed=7"),
        (3, "64k-256k/4k&seed=7"),
        // More streams than files: two streams have none and write nothing.
        (12, "256k"),
    ] {
        let out = tempdir();
        let work = tempdir();
        let set = format!("files:{}?count=10&size={size}", work.path().display());
        let args = [
            "run",
            "-t",
            &set,
            "--rw",
            "write",
            "--bs",
            "128k",
            "--streams",
            &streams.to_string(),
            "--passes",
            "1",
            "-q",
        ];
        // The first run lays the files out (with data); they are then zeroed, so
        // what is not zero after the second run is what it wrote.
        ioscope_to(&out.path().join("r.json"), args).expect_code(0);
        for e in std::fs::read_dir(work.path()).unwrap() {
            let path = e.unwrap().path();
            let len = std::fs::metadata(&path).unwrap().len();
            std::fs::write(&path, vec![0u8; len as usize]).unwrap();
        }
        let r = ioscope_to(&out.path().join("r.json"), args).expect_code(0);
        let mut lens: Vec<(String, u64)> = std::fs::read_dir(work.path())
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| {
                (
                    e.file_name().into_string().unwrap(),
                    e.metadata().unwrap().len(),
                )
            })
            .collect();
        lens.sort();
        assert_eq!(lens.len(), 10, "{streams} × {size}: {lens:?}");
        let total: u64 = lens.iter().map(|l| l.1).sum();
        let w = &r.run(0).totals.write;
        assert_eq!((w.bytes, w.errors), (total, 0), "{streams} × {size}");
        let holes = zero_blocks(work.path(), &lens);
        assert!(
            holes.is_empty(),
            "{streams} × {size}: never written: {holes:?}"
        );
    }
}
