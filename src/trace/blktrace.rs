//! blktrace's binary files, read directly (no blkparse): a sequence of
//! `struct blk_io_trace` records (include/uapi/linux/blktrace_api.h), each
//! followed by `pdu_len` bytes of payload, one file per CPU (`DEV.blktrace.N`).
//!
//! Version 7 (`blk_io_trace`, 48 bytes): magic, sequence, time (ns), sector,
//! bytes, action (u32), pid, device, cpu, error (u16), pdu_len (u16). Version 8
//! (`blk_io_trace2`, 64 bytes, kernels from 6.18): the same fields with pid before
//! a 64-bit action, then 12 bytes of padding. The magic `0x65617400 | version`
//! gives the byte order: the writer's, whatever the reader's. An action is
//! `categories << 16 | event`; the event's low byte is what happened (1 = Q
//! queued, 7 = D issued, 8 = C completed, …; bit 8 flags a cgroup id in the
//! payload), the categories say read or write, discard, flush, notify, ….
//!
//! An I/O is taken from each Q (or D, [`BlkEvent`]) with data: a discard is a
//! trim, a write category a write, anything else a read (blkparse's rule). C events
//! give each device's concurrency: a C completes the pending I/Os that start in
//! its range (a request's C covers the bios merged into it).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use super::build::{Collector, RawIo};
use super::{open, BlkEvent, SkipKind, TraceError};
use crate::vocab::Op;

const MAGIC: u32 = 0x6561_7400;
const VERSION_1: u32 = 0x07;
const VERSION_2: u32 = 0x08;
const V1_BYTES: usize = 48;
const V2_BYTES: usize = 64;

/// Categories (`enum blktrace_cat`), after the shift.
const TC_WRITE: u64 = 1 << 1;
const TC_FLUSH: u64 = 1 << 2;
const TC_PC: u64 = 1 << 9;
const TC_NOTIFY: u64 = 1 << 10;
const TC_DISCARD: u64 = 1 << 13;
/// Version 8: zone reset, reset all, finish, open, close.
const TC_ZONE_MGMT: u64 = 0x1F << 17;

/// Events (`enum blktrace_act`).
const TA_QUEUE: u64 = 1;
const TA_ISSUE: u64 = 7;
const TA_COMPLETE: u64 = 8;

const SECTOR_BYTES: u64 = 512;

/// The fields of one record this reader uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Header {
    time_ns: u64,
    sector: u64,
    bytes: u32,
    action: u64,
    device: u32,
    pdu_len: u16,
}

/// What a record is to the replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Io(Op),
    /// A C event with data.
    Done,
    Skip(SkipKind),
}

/// An I/O or completion, kept until every file is read and they are in time order.
#[derive(Debug, Clone, Copy)]
struct Event {
    t_ns: u64,
    offset: u64,
    len: u32,
    device: u32,
    /// None: a completion.
    op: Option<Op>,
}

/// The first 4 bytes are a blktrace magic, in either byte order.
pub(super) fn has_magic(bytes: &[u8]) -> bool {
    let Some(m) = bytes.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok()) else {
        return false;
    };
    [u32::from_le_bytes(m), u32::from_be_bytes(m)]
        .into_iter()
        .any(|v| v & !0xFF == MAGIC && matches!(v & 0xFF, VERSION_1 | VERSION_2))
}

/// The per-CPU files `NAME.blktrace.N` (or `NAME.N` when `p` ends in `.blktrace`)
/// next to `p`, by CPU number; empty when there are none.
pub(super) fn per_cpu_files(p: &Path) -> Vec<PathBuf> {
    let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let prefix = if name.ends_with(".blktrace") {
        format!("{name}.")
    } else {
        format!("{name}.blktrace.")
    };
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(u64, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let file = e.file_name().to_str()?.to_string();
            let cpu = file.strip_prefix(&prefix)?;
            let n = cpu
                .parse::<u64>()
                .ok()
                .filter(|_| cpu.bytes().all(|b| b.is_ascii_digit()))?;
            Some((n, dir.join(file)))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

/// Reads every file, merges their events by time, and fills `c`.
pub(super) fn read_files(
    files: &[PathBuf],
    want: BlkEvent,
    c: &mut Collector,
) -> Result<(), TraceError> {
    let mut events = Vec::new();
    for file in files {
        let r = BufReader::new(open(file)?);
        read(r, file, want, c, &mut events)?;
    }
    events.sort_by_key(|e| e.t_ns); // stable: file order breaks ties
    walk(&events, c);
    Ok(())
}

/// One file's records: skipped ones counted, I/Os and completions into `events`.
fn read(
    mut r: impl Read,
    file: &Path,
    want: BlkEvent,
    c: &mut Collector,
    events: &mut Vec<Event>,
) -> Result<(), TraceError> {
    let mut big_endian = None;
    let mut no = 0u64;
    loop {
        no = no.saturating_add(1);
        let h = match read_record(&mut r, &mut big_endian) {
            Ok(Some(h)) => h,
            Ok(None) => return Ok(()),
            Err(Bad::Io(e)) => {
                return Err(TraceError::io(file, format!("cannot read record {no}"), e))
            }
            Err(Bad::Record(what)) => return Err(TraceError::record(file, no, what)),
        };
        let class = classify(&h, want);
        if class != Class::Skip(SkipKind::Notify) {
            c.saw(h.time_ns);
        }
        let op = match class {
            Class::Skip(kind) => {
                c.skip(kind);
                continue;
            }
            Class::Done => {
                c.skip(SkipKind::Completion);
                None
            }
            Class::Io(op) => Some(op),
        };
        let offset = byte_offset(&h).map_err(|what| TraceError::record(file, no, what))?;
        events.push(Event {
            t_ns: h.time_ns,
            offset,
            len: h.bytes,
            device: h.device,
            op,
        });
    }
}

/// Why a record could not be read.
enum Bad {
    Io(io::Error),
    Record(String),
}

/// The next record's header with its payload skipped; None at a clean end of file.
/// The first record's magic fixes the file's byte order.
fn read_record(r: &mut impl Read, big_endian: &mut Option<bool>) -> Result<Option<Header>, Bad> {
    let mut buf = [0u8; V2_BYTES];
    let got = read_full(r, &mut buf[..4]).map_err(Bad::Io)?;
    if got == 0 {
        return Ok(None);
    }
    if got < 4 {
        return Err(Bad::Record(format!(
            "truncated record: {got} of at least {V1_BYTES} bytes"
        )));
    }
    let magic = [buf[0], buf[1], buf[2], buf[3]];
    let be = match *big_endian {
        Some(be) => be,
        None => u32::from_le_bytes(magic) & !0xFF != MAGIC,
    };
    let m = if be {
        u32::from_be_bytes(magic)
    } else {
        u32::from_le_bytes(magic)
    };
    if m & !0xFF != MAGIC {
        let what = format!("bad magic {m:#010x}: not a blktrace record (or the file is corrupt)");
        return Err(Bad::Record(what));
    }
    *big_endian = Some(be);
    let size = match m & 0xFF {
        VERSION_1 => V1_BYTES,
        VERSION_2 => V2_BYTES,
        v => {
            let what =
                format!("blktrace version {v} not supported (7: blk_io_trace, 8: blk_io_trace2)");
            return Err(Bad::Record(what));
        }
    };
    let got = read_full(r, &mut buf[4..size]).map_err(Bad::Io)?;
    if got < size - 4 {
        let what = format!("truncated record: {} of {size} bytes", got + 4);
        return Err(Bad::Record(what));
    }
    let h = parse_header(&buf, size == V2_BYTES, be);
    let pdu = u64::from(h.pdu_len);
    let skipped = io::copy(&mut r.take(pdu), &mut io::sink()).map_err(Bad::Io)?;
    if skipped < pdu {
        let what = format!("truncated record: payload of {pdu} bytes ends after {skipped}");
        return Err(Bad::Record(what));
    }
    Ok(Some(h))
}

/// Fills `buf` as far as the reader goes; the count read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn parse_header(b: &[u8; V2_BYTES], v2: bool, be: bool) -> Header {
    let u16_at = |at: usize| {
        let a = [b[at], b[at + 1]];
        if be {
            u16::from_be_bytes(a)
        } else {
            u16::from_le_bytes(a)
        }
    };
    let u32_at = |at: usize| {
        let a = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        if be {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        }
    };
    let u64_at = |at: usize| {
        let a = [
            b[at],
            b[at + 1],
            b[at + 2],
            b[at + 3],
            b[at + 4],
            b[at + 5],
            b[at + 6],
            b[at + 7],
        ];
        if be {
            u64::from_be_bytes(a)
        } else {
            u64::from_le_bytes(a)
        }
    };
    // Offsets of action, device and pdu_len: version 7, version 8.
    let (action, device, pdu_len) = if v2 {
        (u64_at(32), u32_at(40), u16_at(50))
    } else {
        (u64::from(u32_at(28)), u32_at(36), u16_at(46))
    };
    Header {
        time_ns: u64_at(8),
        sector: u64_at(16),
        bytes: u32_at(24),
        action,
        device,
        pdu_len,
    }
}

fn classify(h: &Header, want: BlkEvent) -> Class {
    let cat = h.action >> 16;
    let event = h.action & 0xFF;
    if cat & TC_NOTIFY != 0 {
        return Class::Skip(SkipKind::Notify);
    }
    let chosen = match want {
        BlkEvent::Queue => TA_QUEUE,
        BlkEvent::Issue => TA_ISSUE,
    };
    match event {
        TA_COMPLETE if h.bytes == 0 || cat & TC_PC != 0 => Class::Skip(SkipKind::Completion),
        TA_COMPLETE => Class::Done,
        e if e != chosen && e == TA_QUEUE => Class::Skip(SkipKind::Queue),
        e if e != chosen && e == TA_ISSUE => Class::Skip(SkipKind::Issue),
        e if e != chosen => Class::Skip(SkipKind::OtherEvent),
        _ if cat & TC_PC != 0 => Class::Skip(SkipKind::Passthrough),
        _ if cat & TC_ZONE_MGMT != 0 => Class::Skip(SkipKind::ZoneOp),
        _ if h.bytes == 0 && cat & TC_FLUSH != 0 => Class::Skip(SkipKind::Flush),
        _ if h.bytes == 0 => Class::Skip(SkipKind::ZeroLength),
        _ if cat & TC_DISCARD != 0 => Class::Io(Op::Trim),
        _ if cat & TC_WRITE != 0 => Class::Io(Op::Write),
        _ => Class::Io(Op::Read),
    }
}

fn byte_offset(h: &Header) -> Result<u64, String> {
    h.sector
        .checked_mul(SECTOR_BYTES)
        .filter(|o| o.checked_add(u64::from(h.bytes)).is_some())
        .ok_or_else(|| {
            format!(
                "sector {} + {} bytes is beyond 2^64 bytes",
                h.sector, h.bytes
            )
        })
}

/// `major,minor` as blkparse prints a kernel dev_t (20 minor bits).
fn device_name(dev: u32) -> String {
    format!("{},{}", dev >> 20, dev & 0xF_FFFF)
}

/// Feeds the time-ordered events to `c`: I/Os, and which of them each completion
/// finished (per device, pending I/Os by start offset, oldest first).
fn walk(events: &[Event], c: &mut Collector) {
    let mut devices: HashMap<u32, usize> = HashMap::new();
    let mut pending: HashMap<usize, BTreeMap<u64, VecDeque<usize>>> = HashMap::new();
    for e in events {
        let dev = *devices
            .entry(e.device)
            .or_insert_with(|| c.device(&device_name(e.device)));
        let waiting = pending.entry(dev).or_default();
        let Some(op) = e.op else {
            c.has_completions(dev);
            let end = e.offset.saturating_add(u64::from(e.len));
            let starts: Vec<u64> = waiting.range(e.offset..end).map(|(s, _)| *s).collect();
            for start in starts {
                let Some(q) = waiting.get_mut(&start) else {
                    continue;
                };
                if let Some(io) = q.pop_front() {
                    c.complete(dev, io, e.t_ns);
                }
                if q.is_empty() {
                    waiting.remove(&start);
                }
            }
            continue;
        };
        let io = RawIo {
            t_ns: e.t_ns,
            op,
            offset: e.offset,
            len: e.len,
            done_ns: None,
        };
        let i = c.push(dev, io);
        waiting.entry(e.offset).or_default().push_back(i);
    }
}

#[cfg(test)]
mod tests;
