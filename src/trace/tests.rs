//! Tests of the trace module as a whole: fio's own logs (tests/fixtures/trace,
//! written by fio 3.33), the writer read back here and replayed by fio, format
//! detection, errors, and random bytes through every reader.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::*;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/trace");

fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join(name)
}

/// (reads, writes, trims) of a device.
fn counts(d: &TraceDevice) -> [usize; 3] {
    let mut n = [0; 3];
    for io in &d.ios {
        n[io.op.index()] += 1;
    }
    n
}

fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

// `fio --name=x --filename=/tmp/fl/a:/tmp/fl/b --size=8m --rw=randrw --bs=4k
// --write_iolog=… --number_ios=300 --fsync=32 --rate_iops=3000 --ioengine=psync`:
// a 73 reads, 81 writes, 1 sync; b 83 reads, 63 writes, 8 syncs (fio's JSON for
// its replay: read 156, write 144, sync 9).
#[test]
fn fio_v3_log_from_fio() {
    let t = load(&[fixture("fio3-randrw.log")], None, BlkEvent::Queue).unwrap();
    assert_eq!((t.format, t.timed), (TraceFormat::FioV3, true));
    let names: Vec<&str> = t.devices.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["/tmp/fl/a", "/tmp/fl/b"]);
    assert_eq!(counts(&t.devices[0]), [73, 81, 0]);
    assert_eq!(counts(&t.devices[1]), [83, 63, 0]);
    assert_eq!(t.skipped.get(SkipKind::Sync), 9);
    assert_eq!(t.skipped.get(SkipKind::FileAction), 6);
    // "25 /tmp/fl/a add" is the earliest line; "157 /tmp/fl/a read 249856 4096",
    // "796 /tmp/fl/b read 3104768 4096".
    let a0 = t.devices[0].ios[0];
    assert_eq!(
        (a0.t_ns, a0.op, a0.offset, a0.len),
        (132_000, Op::Read, 249_856, 4096)
    );
    let b0 = t.devices[1].ios[0];
    assert_eq!(
        (b0.t_ns, b0.op, b0.offset, b0.len),
        (771_000, Op::Read, 3_104_768, 4096)
    );
    for d in &t.devices {
        assert!(
            d.extent_bytes <= 4 << 20 && d.extent_bytes > 3 << 20,
            "{}",
            d.extent_bytes
        );
        assert!(d.ios.iter().all(|io| io.len == 4096));
        assert!(d.ios.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
        assert_eq!(d.concurrency, None);
    }
}

// The same log as version 2 (`sed -e '1s/version 3/version 2/' -e '2,$s/^[0-9]* //'`:
// fio 3.33 writes only version 3), which fio 3.33 replays with the same counts.
#[test]
fn fio_v2_log_keeps_order_without_times() {
    let v3 = load(&[fixture("fio3-randrw.log")], None, BlkEvent::Queue).unwrap();
    let t = load(&[fixture("fio2-randrw.log")], None, BlkEvent::Queue).unwrap();
    assert_eq!((t.format, t.timed), (TraceFormat::FioV2, false));
    assert_eq!(t.skipped, v3.skipped);
    for (d2, d3) in t.devices.iter().zip(&v3.devices) {
        assert!(d2.ios.iter().all(|io| io.t_ns == 0));
        let strip = |d: &TraceDevice| {
            d.ios
                .iter()
                .map(|i| (i.op, i.offset, i.len))
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(d2), strip(d3));
    }
}

// `fio --name=t --filename=/dev/loop1 --rw=randtrim --bs=8k --number_ios=40 …`.
#[test]
fn fio_v3_trims() {
    let t = load(
        &[fixture("fio3-trim.log")],
        Some(TraceFormat::FioV3),
        BlkEvent::Queue,
    )
    .unwrap();
    assert_eq!(t.devices[0].name, "/dev/loop1");
    assert_eq!(counts(&t.devices[0]), [0, 0, 40]);
    assert!(t.devices[0].ios.iter().all(|io| io.len == 8192));
    assert_eq!(t.devices[0].ios[0].offset, 499_712);
}

#[test]
fn fio_v2_waits_are_time() {
    let dir = tempfile::tempdir().unwrap();
    let log = "fio version 2 iolog\nf add\nf open\nf read 0 512\nf wait 1500 0\nf write 512 512\n\
               f wait 10 0\nf trim 0 4096\nf read 0 0\n";
    let p = write_file(dir.path(), "w.log", log.as_bytes());
    let t = load(&[p], None, BlkEvent::Queue).unwrap();
    assert!(t.timed);
    let times: Vec<u64> = t.devices[0].ios.iter().map(|i| i.t_ns).collect();
    assert_eq!(times, [0, 1_500_000, 1_510_000]);
    assert_eq!(t.skipped.get(SkipKind::Wait), 2);
    assert_eq!(t.skipped.get(SkipKind::ZeroLength), 1);
}

#[test]
fn writer_output_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = FioV3Writer::new(Vec::new(), &["/dev/sdb", "/dev/sdc"]).unwrap();
    let ios = [
        (1_000, 0, Op::Read, 0, 4096),
        (2_500, 1, Op::Write, 1 << 40, 65536),
        (2_999, 0, Op::Trim, 8192, 512),
        (9_000_000, 0, Op::Read, 4096, 4096),
    ];
    for (t, f, op, off, len) in ios {
        w.add(t, f, op, off, len).unwrap();
    }
    let bytes = w.finish().unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(
        text.starts_with("fio version 3 iolog\n0 /dev/sdb add\n0 /dev/sdc add\n0 /dev/sdb open\n")
    );
    assert!(
        text.ends_with("9000 /dev/sdb close\n9000 /dev/sdc close\n"),
        "{text}"
    );
    let t = load(
        &[write_file(dir.path(), "rec.log", &bytes)],
        None,
        BlkEvent::Queue,
    )
    .unwrap();
    let sdb: Vec<(u64, Op, u64, u32)> = t.devices[0]
        .ios
        .iter()
        .map(|i| (i.t_ns, i.op, i.offset, i.len))
        .collect();
    // Whole microseconds, from the add lines at 0.
    let want = [
        (1_000, Op::Read, 0, 4096),
        (2_000, Op::Trim, 8192, 512),
        (9_000_000, Op::Read, 4096, 4096),
    ];
    assert_eq!(sdb, want);
    assert_eq!(t.devices[1].ios[0].offset, 1 << 40);
    assert_eq!(t.skipped.get(SkipKind::FileAction), 6);
}

#[test]
fn writer_refuses_what_fio_cannot_read() {
    for bad in ["", "a b", "tab\there", &"x".repeat(257)] {
        let e = FioV3Writer::new(Vec::new(), &[bad]).err().unwrap();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{bad}");
    }
    let mut w = FioV3Writer::new(Vec::new(), &["f"]).unwrap();
    let e = w.add(0, 1, Op::Read, 0, 512).unwrap_err();
    assert_eq!(e.to_string(), "file index 1, but the log has 1 files");
}

/// fio itself replays what the writer wrote: the same number of reads and writes
/// per its JSON (fio 3.33 drops trim lines, so there are none). Skips without fio
/// (outside CI).
#[test]
fn writer_output_replays_in_fio() {
    let Ok(out) = std::process::Command::new("fio").arg("--version").output() else {
        assert!(std::env::var_os("CI").is_none(), "fio missing in CI");
        eprintln!("SKIPPED: fio not installed");
        return;
    };
    assert!(out.status.success());
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = ["one", "two"]
        .iter()
        .map(|n| {
            let p = dir.path().join(n);
            std::fs::File::create(&p).unwrap().set_len(1 << 20).unwrap();
            p.to_str().unwrap().to_string()
        })
        .collect();
    let log = dir.path().join("rec.log");
    let mut w = FioV3Writer::new(
        std::io::BufWriter::new(std::fs::File::create(&log).unwrap()),
        &files,
    )
    .unwrap();
    let (mut reads, mut writes) = (0, 0);
    for i in 0..60u64 {
        let op = if i % 3 == 0 { Op::Write } else { Op::Read };
        *(if op == Op::Write {
            &mut writes
        } else {
            &mut reads
        }) += 1;
        let len = 4096 << (i % 3);
        w.add(i * 20_000, (i % 2) as usize, op, (i * 7 % 64) * 8192, len)
            .unwrap();
    }
    w.finish().unwrap().flush().unwrap();
    let json = dir.path().join("out.json");
    let status = std::process::Command::new("fio")
        .args(["--name=r", "--ioengine=psync", "--output-format=json"])
        .arg(format!("--read_iolog={}", log.display()))
        .arg(format!("--output={}", json.display()))
        .status()
        .unwrap();
    assert!(status.success());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let job = &v["jobs"][0];
    assert_eq!(job["error"], 0);
    assert_eq!(
        (
            job["read"]["total_ios"].as_u64(),
            job["write"]["total_ios"].as_u64()
        ),
        (Some(reads), Some(writes))
    );
    let back = load(&[log], None, BlkEvent::Queue).unwrap();
    let n: usize = back.devices.iter().map(|d| d.ios.len()).sum();
    assert_eq!(n, 60);
}

#[test]
fn detect_by_content() {
    let blk = [0x07, 0x74, 0x61, 0x65, 0, 0, 0, 0];
    let cases: [(&[u8], Option<TraceFormat>); 9] = [
        (b"fio version 2 iolog\n", Some(TraceFormat::FioV2)),
        (b"fio version 3 iolog\n0 f add\n", Some(TraceFormat::FioV3)),
        (&blk, Some(TraceFormat::Blktrace)),
        (&[0x65, 0x61, 0x74, 0x08], Some(TraceFormat::Blktrace)),
        (b"\ntime_s,op,offset,bytes\n", Some(TraceFormat::Csv)),
        (
            b"128166372003061629,hm,0,Read,3218333696,4096,7366\r\n",
            Some(TraceFormat::Msr),
        ),
        (
            b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n",
            Some(TraceFormat::Msr),
        ),
        (b"fio version 1 iolog\n", None),
        (b"", None),
    ];
    for (bytes, want) in cases {
        assert_eq!(detect(bytes), want, "{:?}", String::from_utf8_lossy(bytes));
    }
    assert_eq!(detect(&[0x65, 0x61, 0x74, 0x09]), None);
    assert_eq!(detect(&[0xff; 10]), None);
}

#[test]
fn format_and_event_names() {
    for f in TraceFormat::ALL {
        assert_eq!(f.name().parse::<TraceFormat>(), Ok(f));
    }
    let e = "fio".parse::<TraceFormat>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown trace format 'fio' (one of fio2, fio3, blktrace, msr, csv)"
    );
    let events = [
        ("queue", BlkEvent::Queue),
        ("Q", BlkEvent::Queue),
        ("issue", BlkEvent::Issue),
        ("D", BlkEvent::Issue),
    ];
    for (s, e) in events {
        assert_eq!(s.parse::<BlkEvent>(), Ok(e));
    }
    assert!("C".parse::<BlkEvent>().is_err());
}

#[test]
fn bad_fio_lines_name_their_line() {
    let h = "fio version 3 iolog\n";
    let cases = [
        (
            format!("{h}1 f add\n2 f frobnicate 0 1\n"),
            3,
            "unknown action 'frobnicate'",
        ),
        (
            format!("{h}1 f read\n"),
            2,
            "'read' needs an offset and a length",
        ),
        (
            format!("{h}1 f open 0 1\n"),
            2,
            "'open' takes no offset and length",
        ),
        (
            format!("{h}1 f read 0\n"),
            2,
            "expected 'TIME FILE ACTION [OFFSET LENGTH]', found 4",
        ),
        (format!("{h}1 f read -4096 4096\n"), 2, "bad offset '-4096'"),
        (
            format!("{h}1 f read 0 4294967296\n"),
            2,
            "bad length '4294967296'",
        ),
        (
            format!("{h}18446744073709552 f read 0 1\n"),
            2,
            "time 18446744073709552 µs is beyond",
        ),
        (format!("{h}x f read 0 1\n"), 2, "bad time (µs) 'x'"),
        (
            format!("{h}1 f read 18446744073709551615 1\n"),
            2,
            "offset 18446744073709551615 + length 1",
        ),
        (
            "fio version 2 iolog\nf wait 18446744073709552 0\n".into(),
            2,
            "wait 18446744073709552 µs",
        ),
        (
            "fio version 3 iolog\n".into(),
            0,
            "no replayable I/O in the trace",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (text, line, what) in cases {
        let p = write_file(dir.path(), "bad.log", text.as_bytes());
        let e = load(std::slice::from_ref(&p), None, BlkEvent::Queue).unwrap_err();
        assert_eq!((e.record, e.unit), (line, RecordUnit::Line), "{e}");
        assert!(e.what.starts_with(what), "{e}");
        let at = if line == 0 {
            String::new()
        } else {
            format!("line {line}: ")
        };
        assert_eq!(e.to_string(), format!("{}: {at}{}", p.display(), e.what));
    }
}

#[test]
fn fio_header_and_text_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_file(
        dir.path(),
        "bin.log",
        b"fio version 2 iolog\nf read 0 1\n\xff\n",
    );
    let e = load(&[p], None, BlkEvent::Queue).unwrap_err();
    assert_eq!((e.record, e.what.as_str()), (3, "not UTF-8 text"));
    let p = write_file(dir.path(), "v1.log", b"f read 0 1\n");
    let e = load(&[p], Some(TraceFormat::FioV3), BlkEvent::Queue).unwrap_err();
    assert_eq!(
        (e.record, e.what.as_str()),
        (1, "expected 'fio version 3 iolog', found 'f read 0 1'")
    );
}

#[test]
fn whole_file_errors() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write_file(dir.path(), "empty", b"");
    let e = load(std::slice::from_ref(&empty), None, BlkEvent::Queue).unwrap_err();
    assert_eq!(e.to_string(), format!("{}: empty file", empty.display()));
    let e = load(&[empty], Some(TraceFormat::FioV2), BlkEvent::Queue).unwrap_err();
    assert_eq!(e.what, "empty file");
    let junk = write_file(dir.path(), "junk", b"hello\n");
    let e = load(&[junk], None, BlkEvent::Queue).unwrap_err();
    assert!(e.what.starts_with("not a trace this reader knows"), "{e}");
    let csv = write_file(
        dir.path(),
        "a.csv",
        b"time_s,op,offset,bytes\n0,read,0,512\n",
    );
    let e = load(&[csv, fixture("fio3-trim.log")], None, BlkEvent::Queue).unwrap_err();
    assert!(e.what.starts_with("is fio3, but "), "{e}");
    let e = load(&[], None, BlkEvent::Queue).unwrap_err();
    assert_eq!(e.what, "no trace file given");
    let missing = dir.path().join("missing.csv");
    let e = load(&[missing], Some(TraceFormat::Csv), BlkEvent::Queue).unwrap_err();
    assert_eq!(e.what, "cannot open");
    assert!(std::error::Error::source(&e).is_some());
}

#[test]
fn same_device_in_two_files_is_one() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_file(
        dir.path(),
        "a.log",
        b"fio version 3 iolog\n10 f read 0 512\n30 f read 512 512\n",
    );
    let b = write_file(
        dir.path(),
        "b.log",
        b"fio version 3 iolog\n20 f write 0 512\n30 g write 0 512\n",
    );
    let t = load(&[a, b], None, BlkEvent::Queue).unwrap();
    assert_eq!(t.devices.len(), 2);
    let f: Vec<(u64, Op)> = t.devices[0].ios.iter().map(|i| (i.t_ns, i.op)).collect();
    assert_eq!(f, [(0, Op::Read), (10_000, Op::Write), (20_000, Op::Read)]);
    assert_eq!(t.devices[1].ios[0].t_ns, 20_000);
}

/// xorshift64*: random bytes without a crate.
fn noise(seed: &mut u64, n: usize) -> Vec<u8> {
    (0..n)
        .map(|_| {
            *seed ^= *seed >> 12;
            *seed ^= *seed << 25;
            *seed ^= *seed >> 27;
            (seed.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

/// Random bytes, alone and after each format's valid start, through detection
/// and every reader: errors, never a panic.
#[test]
fn random_bytes_never_panic() {
    let starts: [(&[u8], TraceFormat); 6] = [
        (b"fio version 2 iolog\nf add\n", TraceFormat::FioV2),
        (b"fio version 3 iolog\n1 f read ", TraceFormat::FioV3),
        (&[0x07, 0x74, 0x61, 0x65], TraceFormat::Blktrace),
        (b"1,h,0,Read,", TraceFormat::Msr),
        (b"time_s,op,offset,bytes\n1.5,", TraceFormat::Csv),
        (b"", TraceFormat::Csv),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for round in 0..300 {
        let (start, format) = starts[round % starts.len()];
        let len = (noise(&mut seed, 1)[0] as usize) * (1 + round % 4);
        let bytes = [start, &noise(&mut seed, len)].concat();
        let _ = detect(&bytes);
        let p = write_file(dir.path(), "r", &bytes);
        for f in [Some(format), None] {
            let _ = load(std::slice::from_ref(&p), f, BlkEvent::Queue);
        }
        let _ = load(&[p], Some(TraceFormat::Blktrace), BlkEvent::Issue);
    }
}
