//! Emulated zones (fio's zonemode=zbd) on a regular file, run through the fio job
//! path: writes go to write pointers and reset full zones, a later job reads what the
//! earlier one wrote, trims reset zones, verification follows the zones, and what
//! ioscope cannot do is refused.

use super::*;

/// Writes `job` (with `FILE` replaced by the target's path) into a temporary
/// directory and runs it; the directory stays alive with the result.
fn run_fio(job: &str, code: i32) -> (Ran, tempfile::TempDir) {
    let dir = tempdir();
    let file = dir.path().join("z.dat");
    let path = dir.path().join("z.fio");
    std::fs::write(&path, job.replace("FILE", file.to_str().unwrap())).unwrap();
    let json = dir.path().join("r.json");
    let r = ioscope_to(&json, ["fio", path.to_str().unwrap()]).expect_code(code);
    (r, dir)
}

#[test]
fn random_writes_reset_full_zones_and_a_later_job_reads_their_data() {
    // 8 zones of 1 MiB; two clones write 24 MiB each at random (fio's io_size is
    // each clone's), so zones fill and are reset; then a stonewalled job reads,
    // below the write pointers.
    let (r, _dir) = run_fio(
        "[global]\nfilename=FILE\nzonemode=zbd\nzonesize=1m\nsize=8z\nbs=64k\n\
         ioengine=psync\n[w]\nrw=randwrite\nnumjobs=2\nio_size=24m\n\
         [r]\nstonewall\nrw=randread\nio_size=4m\n",
        0,
    );
    let w = &r.run(0).totals;
    assert_eq!((w.write.ios, w.write.errors), (768, 0));
    // Each reset throws away one full zone (no threshold), and at most 8 MiB stays:
    // 48 MiB written means 40 to 48 resets.
    let resets = w.zone_resets.expect("zone resets in the result");
    assert!((40..48).contains(&resets), "{resets} zone resets");
    let zbd = &r.wire_run(0)["workload"]["zbd"];
    assert_eq!(zbd["zone_bytes"].as_u64(), Some(1 << 20));
    // The reader found data (an empty target would end it at once) and counts no
    // resets: it neither writes nor trims.
    let rd = &r.run(1).totals;
    assert_eq!((rd.read.ios, rd.read.errors), (64, 0));
    assert_eq!(rd.zone_resets, None);
    assert!(
        r.stdout.contains(&format!("{resets} zone resets")),
        "{}",
        r.stdout
    );
}

#[test]
fn reads_of_an_empty_zoned_target_end_at_once() {
    let (r, _dir) = run_fio(
        "[r]\nfilename=FILE\nsize=4m\nzonemode=zbd\nzonesize=1m\nrw=randread\nbs=4k\n",
        0,
    );
    assert_eq!(r.run(0).totals.read.ios, 0);
}

#[test]
fn zone_sized_trims_reset_written_zones() {
    // Fill 4 zones sequentially, then trim them in a second job: every trim resets
    // a zone that holds data.
    let (r, dir) = run_fio(
        "[global]\nfilename=FILE\nzonemode=zbd\nzonesize=1m\nsize=4z\nioengine=psync\n\
         [w]\nrw=write\nbs=256k\n[t]\nstonewall\nrw=trim\nbs=1m\n",
        0,
    );
    assert_eq!(r.run(0).totals.zone_resets, Some(0));
    let t = &r.run(1).totals;
    assert_eq!(t.trim.as_ref().map(|t| t.ios), Some(4));
    assert_eq!(t.zone_resets, Some(4));
    // The trims discarded the zones' blocks.
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        std::fs::metadata(dir.path().join("z.dat"))
            .unwrap()
            .blocks(),
        0
    );
}

/// Runs `job` that must be refused before anything runs: its exit code and stderr.
fn refused(job: &str) -> (Option<i32>, String) {
    let dir = tempdir();
    let file = dir.path().join("z.dat");
    let path = dir.path().join("z.fio");
    std::fs::write(&path, job.replace("FILE", file.to_str().unwrap())).unwrap();
    let o = run(&["fio", path.to_str().unwrap()]);
    assert!(!file.exists(), "nothing is created for a refused job");
    (o.status.code(), stderr(&o))
}

/// Verification follows the zones: two clones at QD 8 read and write at random over
/// 16 zones with 4 open at once, resetting zones many times over, and every unit
/// checked during the run and in the read-back holds what was last written there.
#[test]
fn zoned_writes_verify_through_zone_resets() {
    let (r, _dir) = run_fio(
        "[w]\nfilename=FILE\nsize=16m\nzonemode=zbd\nzonesize=1m\nmax_open_zones=4\n\
         ioengine=libaio\niodepth=8\ndirect=1\nrw=randrw\nbs=64k\nnumjobs=2\n\
         io_size=64m\nverify=crc32c\n",
        0,
    );
    let t = &r.run(0).totals;
    assert!(
        t.zone_resets.is_some_and(|n| n >= 16),
        "{:?}",
        t.zone_resets
    );
    let v = r.run(0).verify.as_ref().expect("verification counts");
    assert_eq!(v.mismatches, 0, "{v:?}");
    assert!(v.ok >= 4096, "{v:?}");
}

#[test]
fn what_zones_cannot_do_is_refused() {
    let (code, err) =
        refused("[w]\nfilename=FILE\nsize=4m\nzonemode=zbd\nzonesize=1m\nrw=randwrite\nbs=2m\n");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("zonemode=zbd — a write of 2097152 bytes is larger than a zone"),
        "{err}"
    );
}
