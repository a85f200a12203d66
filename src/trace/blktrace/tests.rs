//! Tests of the blktrace reader: the real capture in tests/fixtures/trace (loop
//! device, counted against blkparse), and records written here from the struct
//! layout for what a capture does not hold (big-endian, version 8, payloads,
//! damage).

use super::*;
use crate::trace::{load, Trace, TraceFormat};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/trace");

fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join(name)
}

/// (count, bytes) of each direction of the trace's only device.
fn totals(t: &Trace) -> [(u64, u64); 3] {
    let mut by_op = [(0u64, 0u64); 3];
    for io in &t.devices[0].ios {
        let slot = &mut by_op[io.op.index()];
        slot.0 += 1;
        slot.1 += u64::from(io.len);
    }
    by_op
}

// blkparse -i loop -f "%a %d %S %N\n" on the fixture: Q R 29 (282624 bytes),
// Q WS 35 (356352), Q DS 8 (524288), Q FWS 4 (0 bytes: fsync's flushes); the same
// for D but the flushes (D FN). 460 events: Q, G and D 76 each, C 80, P 72, U 64,
// UT 8, I 8. Its summary: "Reads Queued: 29, 276KiB  Writes Queued: 47, 860KiB".
#[test]
fn capture_matches_blkparse_queue_events() {
    let t = load(&[fixture("loop")], None, BlkEvent::Queue).unwrap();
    assert_eq!(t.format, TraceFormat::Blktrace);
    assert!(t.timed);
    assert_eq!(t.devices.len(), 1);
    assert_eq!(t.devices[0].name, "7,0");
    assert_eq!(totals(&t), [(29, 282_624), (35, 356_352), (8, 524_288)]);
    let s = &t.skipped;
    assert_eq!(s.get(SkipKind::Flush), 4);
    assert_eq!(s.get(SkipKind::Issue), 76);
    assert_eq!(s.get(SkipKind::Completion), 80);
    assert_eq!(s.get(SkipKind::OtherEvent), 76 + 72 + 64 + 8 + 8);
    assert_eq!(s.total() + 72, 460, "every record is an I/O or skipped");
    // blkparse, by time: the first Q at 0.000000000 "Q R 3952 + 8", the last at
    // 0.006612047 "Q WS 25880 + 32".
    let ios = &t.devices[0].ios;
    let first = ios[0];
    assert_eq!(
        (first.t_ns, first.op, first.offset, first.len),
        (0, Op::Read, 3952 * 512, 4096)
    );
    let last = ios[ios.len() - 1];
    assert_eq!(
        (last.t_ns, last.op, last.offset, last.len),
        (6_612_047, Op::Write, 25880 * 512, 16384)
    );
    assert!(ios.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
}

#[test]
fn capture_issue_events_and_concurrency() {
    let q = load(&[fixture("loop")], None, BlkEvent::Queue).unwrap();
    let d = load(
        &[fixture("loop")],
        Some(TraceFormat::Blktrace),
        BlkEvent::Issue,
    )
    .unwrap();
    assert_eq!(totals(&d), [(29, 282_624), (35, 356_352), (8, 524_288)]);
    assert_eq!(d.skipped.get(SkipKind::Flush), 4);
    assert_eq!(d.skipped.get(SkipKind::Queue), 76);
    // blkparse: the first D at 0.000010533, "D R 3952 + 8".
    let first = d.devices[0].ios[0];
    assert_eq!((first.t_ns, first.offset), (10_533, 3952 * 512));
    // blkparse's per-direction depths (D to C) are 3 reads and 5 writes: all
    // directions together at least 5, at most 8. Q to C spans D to C.
    let (qc, dc) = (
        q.devices[0].concurrency.unwrap(),
        d.devices[0].concurrency.unwrap(),
    );
    assert!((5..=8).contains(&dc), "{dc}");
    assert!(qc >= dc, "{qc} < {dc}");
    assert_eq!(d.devices[0].extent_bytes, q.devices[0].extent_bytes);
}

#[test]
fn per_cpu_files_by_any_name() {
    let whole = load(&[fixture("loop")], None, BlkEvent::Queue).unwrap();
    let named = [fixture("loop.blktrace.0"), fixture("loop.blktrace.1")];
    assert_eq!(load(&named, None, BlkEvent::Queue).unwrap(), whole);
    assert_eq!(
        load(&[fixture("loop.blktrace")], None, BlkEvent::Queue).unwrap(),
        whole
    );
    // Given in the other order, the merge by time gives the same trace.
    let swapped = [fixture("loop.blktrace.1"), fixture("loop.blktrace.0")];
    assert_eq!(load(&swapped, None, BlkEvent::Queue).unwrap(), whole);
    let one = load(&[fixture("loop.blktrace.0")], None, BlkEvent::Queue).unwrap();
    assert!(one.devices[0].ios.len() < whole.devices[0].ios.len());
    let e = load(&[fixture("nothing")], None, BlkEvent::Queue).unwrap_err();
    assert!(e.what.starts_with("no such file"), "{e}");
    assert_eq!(per_cpu_files(&fixture("loop")), named);
}

/// A record to encode.
#[derive(Clone)]
struct Rec {
    time: u64,
    sector: u64,
    bytes: u32,
    action: u64,
    device: u32,
    pdu: Vec<u8>,
}

fn rec(time: u64, event: u64, categories: u64, sector: u64, bytes: u32) -> Rec {
    Rec {
        time,
        sector,
        bytes,
        action: categories << 16 | event,
        device: 8 << 20 | 16,
        pdu: Vec::new(),
    }
}

/// `struct blk_io_trace` (v2: `blk_io_trace2`) in either byte order.
fn encode(r: &Rec, v2: bool, be: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut put = |bytes: &[u8]| {
        let mut b = bytes.to_vec();
        if be {
            b.reverse();
        }
        out.extend_from_slice(&b);
    };
    let version = if v2 { VERSION_2 } else { VERSION_1 };
    put(&(MAGIC | version).to_le_bytes());
    put(&7u32.to_le_bytes()); // sequence
    put(&r.time.to_le_bytes());
    put(&r.sector.to_le_bytes());
    put(&r.bytes.to_le_bytes());
    if v2 {
        put(&1234u32.to_le_bytes()); // pid
        put(&r.action.to_le_bytes());
    } else {
        put(&(r.action as u32).to_le_bytes());
        put(&1234u32.to_le_bytes());
    }
    put(&r.device.to_le_bytes());
    put(&1u32.to_le_bytes()); // cpu
    put(&0u16.to_le_bytes()); // error
    put(&(r.pdu.len() as u16).to_le_bytes());
    if v2 {
        out.extend_from_slice(&[0; 12]);
    }
    out.extend_from_slice(&r.pdu);
    out
}

fn read_bytes(bytes: &[u8], want: BlkEvent) -> Result<Trace, TraceError> {
    let mut c = Collector::default();
    let mut events = Vec::new();
    read(bytes, Path::new("t.blktrace.0"), want, &mut c, &mut events)?;
    events.sort_by_key(|e| e.t_ns);
    walk(&events, &mut c);
    c.finish(TraceFormat::Blktrace)
        .map_err(|w| TraceError::whole(Path::new("t"), w))
}

/// Q and C of a read, a write, a discard; a notify, a flush, a PC request, a
/// cgroup-flagged Q with its 8-byte id.
fn sample() -> Vec<Rec> {
    let mut cg = rec(40, TA_QUEUE | 0x100, 1 << 4 | TC_WRITE, 100, 512);
    cg.pdu = vec![9; 8];
    let mut note = rec(1, 0, TC_NOTIFY, 0, 0);
    note.pdu = b"fio\0".to_vec();
    vec![
        note,
        rec(10, TA_QUEUE, 1 << 4 | 1, 8, 4096),
        rec(20, TA_QUEUE, 1 << 4 | TC_WRITE, 16, 8192),
        rec(25, TA_COMPLETE, 1 << 7 | 1, 8, 4096),
        rec(30, TA_QUEUE, 1 << 4 | TC_WRITE | TC_DISCARD, 1024, 1 << 20),
        rec(35, TA_QUEUE, 1 << 4 | TC_WRITE | TC_FLUSH, 0, 0),
        rec(36, TA_QUEUE, 1 << 4 | TC_PC, 0, 96),
        cg,
        rec(50, TA_COMPLETE, 1 << 7 | TC_WRITE, 16, 8192),
    ]
}

#[test]
fn written_records_in_every_layout() {
    for (v2, be) in [(false, false), (false, true), (true, false), (true, true)] {
        let bytes: Vec<u8> = sample().iter().flat_map(|r| encode(r, v2, be)).collect();
        assert!(has_magic(&bytes));
        let t = read_bytes(&bytes, BlkEvent::Queue).unwrap();
        let d = &t.devices[0];
        assert_eq!(d.name, "8,16");
        let got: Vec<(u64, Op, u64, u32)> = d
            .ios
            .iter()
            .map(|i| (i.t_ns, i.op, i.offset, i.len))
            .collect();
        // Times from the first record that is not a notify (10 ns).
        let want = [
            (0, Op::Read, 8 * 512, 4096),
            (10, Op::Write, 16 * 512, 8192),
            (20, Op::Trim, 1024 * 512, 1 << 20),
            (30, Op::Write, 100 * 512, 512),
        ];
        assert_eq!(got, want, "v2 {v2} big-endian {be}");
        assert_eq!(d.extent_bytes, 1024 * 512 + (1 << 20));
        // The read (10..25) and the write (20..50) overlap; the discard and the
        // cgroup write never complete.
        assert_eq!(d.concurrency, Some(3));
        let s = &t.skipped;
        let skipped = [
            (SkipKind::Notify, 1),
            (SkipKind::Flush, 1),
            (SkipKind::Passthrough, 1),
        ];
        for (kind, n) in skipped {
            assert_eq!(s.get(kind), n, "{kind:?}");
        }
        assert_eq!(s.get(SkipKind::Completion), 2);
    }
}

#[test]
fn version_8_zone_commands_are_skipped() {
    let zone_reset = rec(5, TA_QUEUE, 1 << 4 | TC_WRITE | 1 << 17, 0, 0);
    let bytes: Vec<u8> = [zone_reset, rec(6, TA_QUEUE, 1 << 4, 0, 512)]
        .iter()
        .flat_map(|r| encode(r, true, false))
        .collect();
    let t = read_bytes(&bytes, BlkEvent::Queue).unwrap();
    assert_eq!(t.skipped.get(SkipKind::ZoneOp), 1);
    assert_eq!(t.devices[0].ios.len(), 1);
}

#[test]
fn damage_names_the_record() {
    let good: Vec<u8> = sample()
        .iter()
        .take(3)
        .flat_map(|r| encode(r, false, false))
        .collect();
    let third = encode(&sample()[2], false, false).len();
    let cases: Vec<(Vec<u8>, u64, &str)> = vec![
        (
            good[..good.len() - third + 20].to_vec(),
            3,
            "truncated record: 20 of 48 bytes",
        ),
        (
            good[..good.len() - third + 2].to_vec(),
            3,
            "truncated record: 2 of at least 48",
        ),
        (
            [&good[..], &[0u8; 48][..]].concat(),
            4,
            "bad magic 0x00000000",
        ),
        (
            encode(&rec(1, TA_QUEUE, 1 << 4, u64::MAX / 256, 512), false, false),
            1,
            "sector ",
        ),
    ];
    for (bytes, record, what) in cases {
        let e = read_bytes(&bytes, BlkEvent::Queue).unwrap_err();
        assert_eq!(
            (e.record, e.unit),
            (record, crate::trace::RecordUnit::Record),
            "{e}"
        );
        assert!(e.what.starts_with(what), "{e}");
        assert!(
            e.to_string()
                .starts_with(&format!("t.blktrace.0: record {record}: ")),
            "{e}"
        );
    }
    let mut v9 = encode(&sample()[1], false, false);
    v9[0] = 0x09;
    let e = read_bytes(&v9, BlkEvent::Queue).unwrap_err();
    assert!(
        e.what.starts_with("blktrace version 9 not supported"),
        "{e}"
    );
    let mut short_pdu = encode(&sample()[0], false, false);
    short_pdu.pop();
    let e = read_bytes(&short_pdu, BlkEvent::Queue).unwrap_err();
    assert_eq!(e.what, "truncated record: payload of 4 bytes ends after 3");
    let e = read_bytes(&[], BlkEvent::Queue).unwrap_err();
    assert!(e.what.starts_with("no replayable I/O"), "{e}");
}
