//! Block I/O traces read from files, for replay (issue 27): fio's iolog versions 2
//! and 3, blktrace's binary per-CPU files, the MSR Cambridge / SNIA IOTTA CSV and a
//! plain `time_s,op,offset,bytes` CSV. [`load`] turns any of them into one shape — a
//! [`Trace`] of devices, each a time-ordered list of [`TraceIo`] — and counts what it
//! read but cannot replay (syncs, flushes, completions, …) in [`Skipped`], so the
//! caller can say what the replay leaves out. [`FioV3Writer`] writes the other way, a
//! fio version 3 iolog (`--record`).
//!
//! Times become nanoseconds from the earliest timed record of the whole trace (fio's
//! `add`/`open` lines and blktrace's non-I/O events count; blktrace's notify records
//! do not). Several files: blktrace's per-CPU files `DEV.blktrace.N` are merged by
//! time (a path `DEV` or `DEV.blktrace` that does not exist stands for all of them);
//! in every format a device named in two files is one device, its I/Os merged by time
//! (file order breaks ties), so several fio logs or MSR CSVs of one host add up.
//! Nothing here panics on what a file says: numbers are checked, records bounded.
//!
//! This module reads only `vocab` (for [`Op`]).

mod blktrace;
mod build;
mod csv;
mod error;
mod fio_log;
mod fio_writer;
mod lines;
mod msr;

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use crate::vocab::Op;

pub use error::{RecordUnit, TraceError};
pub use fio_writer::FioV3Writer;

/// One replayable I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceIo {
    /// From the trace's earliest record; non-decreasing along a device's list.
    pub t_ns: u64,
    pub op: Op,
    pub offset: u64,
    /// Never 0: zero-length records are skipped.
    pub len: u32,
}

/// The I/Os of one device (a file in a fio log, `major,minor` in blktrace,
/// `host/disk` in MSR, the file's name for a plain CSV).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceDevice {
    pub name: String,
    pub ios: Vec<TraceIo>,
    /// The largest `offset + len` of its I/Os: how large a target must be.
    pub extent_bytes: u64,
    /// The most I/Os in flight at once, when the trace records completions (MSR's
    /// ResponseTime, blktrace's C events: from the chosen Q or D event to its C);
    /// None otherwise. An I/O whose completion the trace lacks counts as in flight
    /// to the end.
    pub concurrency: Option<u32>,
}

/// The trace file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// fio iolog version 2: `FILE ACTION [OFFSET LENGTH]`, no times.
    FioV2,
    /// fio iolog version 3: `TIME_US FILE ACTION [OFFSET LENGTH]`.
    FioV3,
    /// blktrace's binary `struct blk_io_trace` records (version 7, or 8: `blk_io_trace2`).
    Blktrace,
    /// MSR Cambridge / SNIA IOTTA: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr,
    /// `time_s,op,offset,bytes` with that header line.
    Csv,
}

impl TraceFormat {
    pub const ALL: [TraceFormat; 5] = [
        TraceFormat::FioV2,
        TraceFormat::FioV3,
        TraceFormat::Blktrace,
        TraceFormat::Msr,
        TraceFormat::Csv,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::FioV2 => "fio2",
            TraceFormat::FioV3 => "fio3",
            TraceFormat::Blktrace => "blktrace",
            TraceFormat::Msr => "msr",
            TraceFormat::Csv => "csv",
        }
    }
}

impl std::fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name that is none of [`TraceFormat::name`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown trace format '{0}' (one of fio2, fio3, blktrace, msr, csv)")]
pub struct UnknownFormat(pub String);

impl std::str::FromStr for TraceFormat {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TraceFormat::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// Which blktrace event an I/O is taken from: Q (queued: what the application
/// asked for, before merging; fio's blktrace replay uses these) or D (issued to
/// the driver: what the device saw, after merging and splitting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BlkEvent {
    #[default]
    Queue,
    Issue,
}

impl BlkEvent {
    pub fn name(self) -> &'static str {
        match self {
            BlkEvent::Queue => "queue",
            BlkEvent::Issue => "issue",
        }
    }
}

/// An event name that is neither `queue` (`Q`) nor `issue` (`D`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown blktrace event '{0}' (queue or Q, issue or D)")]
pub struct UnknownBlkEvent(pub String);

impl std::str::FromStr for BlkEvent {
    type Err = UnknownBlkEvent;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "queue" | "Q" => Ok(BlkEvent::Queue),
            "issue" | "D" => Ok(BlkEvent::Issue),
            _ => Err(UnknownBlkEvent(s.to_string())),
        }
    }
}

/// What a record was that the trace has but a replay leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkipKind {
    /// fio `add`, `open`, `close` lines.
    FileAction,
    /// fio `sync` lines.
    Sync,
    /// fio `datasync` lines.
    Datasync,
    /// fio `wait` lines (version 2 turns them into time; version 3 fio ignores them).
    Wait,
    /// A read, write or trim of 0 bytes.
    ZeroLength,
    /// blktrace: a flush without data.
    Flush,
    /// blktrace: a zone management command (reset, open, close, finish).
    ZoneOp,
    /// blktrace: a SCSI passthrough (PC) request.
    Passthrough,
    /// blktrace C events.
    Completion,
    /// blktrace Q events when I/Os are taken from D.
    Queue,
    /// blktrace D events when I/Os are taken from Q.
    Issue,
    /// blktrace notify records (process names, timestamps, messages).
    Notify,
    /// Every other blktrace event: G, P, U, I, M, F, X, A, R, ….
    OtherEvent,
}

impl SkipKind {
    pub fn name(self) -> &'static str {
        match self {
            SkipKind::FileAction => "add/open/close",
            SkipKind::Sync => "sync",
            SkipKind::Datasync => "datasync",
            SkipKind::Wait => "wait",
            SkipKind::ZeroLength => "zero-length",
            SkipKind::Flush => "flush",
            SkipKind::ZoneOp => "zone command",
            SkipKind::Passthrough => "passthrough",
            SkipKind::Completion => "completion",
            SkipKind::Queue => "queue event",
            SkipKind::Issue => "issue event",
            SkipKind::Notify => "notify",
            SkipKind::OtherEvent => "other event",
        }
    }
}

/// Counts of records read but not replayed, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped(std::collections::BTreeMap<SkipKind, u64>);

impl Skipped {
    pub fn get(&self, kind: SkipKind) -> u64 {
        self.0.get(&kind).copied().unwrap_or(0)
    }
    pub fn total(&self) -> u64 {
        self.0.values().fold(0, |a, b| a.saturating_add(*b))
    }
    /// Kinds with a count, in [`SkipKind`] order.
    pub fn iter(&self) -> impl Iterator<Item = (SkipKind, u64)> + '_ {
        self.0.iter().map(|(k, n)| (*k, *n))
    }
    pub(crate) fn add(&mut self, kind: SkipKind) {
        let n = self.0.entry(kind).or_insert(0);
        *n = n.saturating_add(1);
    }
}

impl std::fmt::Display for Skipped {
    /// "sync 9, add/open/close 6"; "none" when empty.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        let parts: Vec<String> = self
            .iter()
            .map(|(k, n)| format!("{} {n}", k.name()))
            .collect();
        f.write_str(&parts.join(", "))
    }
}

/// A loaded trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    pub format: TraceFormat,
    /// False when the trace has no times (a fio version 2 log without `wait` lines):
    /// every `t_ns` is 0 and a replay can only keep the order.
    pub timed: bool,
    /// In order of first appearance; only devices with at least one I/O.
    pub devices: Vec<TraceDevice>,
    pub skipped: Skipped,
}

/// How many bytes [`detect`] is given by [`load`].
const SNIFF_BYTES: usize = 4096;

/// Reads a trace from `paths` in `format` (None: [`detect`]ed from each file's
/// first bytes; all must agree). `blk_event` only matters for blktrace. Fails on
/// the first record that is not what its format says, and on a trace with no
/// replayable I/O at all.
pub fn load(
    paths: &[PathBuf],
    format: Option<TraceFormat>,
    blk_event: BlkEvent,
) -> Result<Trace, TraceError> {
    let Some(first) = paths.first() else {
        return Err(TraceError::whole(Path::new(""), "no trace file given"));
    };
    let files = expand(paths, format)?;
    let format = match format {
        Some(f) => f,
        None => detect_files(&files)?,
    };
    let mut c = build::Collector::default();
    match format {
        TraceFormat::Blktrace => blktrace::read_files(&files, blk_event, &mut c)?,
        TraceFormat::FioV2 | TraceFormat::FioV3 => {
            each_file(&files, &mut c, |r, f, c| fio_log::read(r, f, format, c))?
        }
        TraceFormat::Msr => each_file(&files, &mut c, msr::read)?,
        TraceFormat::Csv => each_file(&files, &mut c, csv::read)?,
    }
    c.finish(format)
        .map_err(|what| TraceError::whole(first, what))
}

/// Reads each file of a text format in turn into `c`.
fn each_file(
    files: &[PathBuf],
    c: &mut build::Collector,
    read: impl Fn(BufReader<File>, &Path, &mut build::Collector) -> Result<(), TraceError>,
) -> Result<(), TraceError> {
    for file in files {
        read(BufReader::new(open(file)?), file, c)?;
    }
    Ok(())
}

/// The format of a trace from its first bytes (a few KiB is plenty), by content:
/// fio's version line, blktrace's magic (either byte order), the plain CSV's header,
/// or a line (or header) in MSR's seven-column layout.
pub fn detect(first_bytes: &[u8]) -> Option<TraceFormat> {
    if first_bytes.starts_with(fio_log::V2_HEADER.as_bytes()) {
        return Some(TraceFormat::FioV2);
    }
    if first_bytes.starts_with(fio_log::V3_HEADER.as_bytes()) {
        return Some(TraceFormat::FioV3);
    }
    if blktrace::has_magic(first_bytes) {
        return Some(TraceFormat::Blktrace);
    }
    let line = first_text_line(first_bytes)?;
    if csv::is_header(line) {
        Some(TraceFormat::Csv)
    } else if msr::is_header(line) || msr::parse_line(line).is_ok() {
        Some(TraceFormat::Msr)
    } else {
        None
    }
}

/// The first non-blank line, when it is complete (or the bytes end without a
/// newline) and UTF-8.
fn first_text_line(bytes: &[u8]) -> Option<&str> {
    let mut rest = bytes;
    loop {
        let (line, next) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None if bytes.len() < SNIFF_BYTES => (rest, None),
            None => return None,
        };
        let line = std::str::from_utf8(line).ok()?.trim();
        if !line.is_empty() {
            return Some(line);
        }
        rest = next?;
    }
}

fn open(file: &Path) -> Result<File, TraceError> {
    File::open(file).map_err(|e| TraceError::io(file, "cannot open", e))
}

/// The files to read: each path, or for blktrace (or an undetermined format) a
/// path that does not exist replaced by its per-CPU files.
fn expand(paths: &[PathBuf], format: Option<TraceFormat>) -> Result<Vec<PathBuf>, TraceError> {
    let mut files = Vec::new();
    for p in paths {
        if p.exists() || !matches!(format, None | Some(TraceFormat::Blktrace)) {
            files.push(p.clone());
            continue;
        }
        let per_cpu = blktrace::per_cpu_files(p);
        if per_cpu.is_empty() {
            let what = "no such file, nor per-CPU blktrace files NAME.blktrace.N";
            return Err(TraceError::whole(p, what));
        }
        files.extend(per_cpu);
    }
    Ok(files)
}

/// The one format of all `files` (empty files, such as an idle CPU's blktrace
/// file, say nothing).
fn detect_files(files: &[PathBuf]) -> Result<TraceFormat, TraceError> {
    let mut found: Option<(TraceFormat, &Path)> = None;
    for file in files {
        let mut head = Vec::with_capacity(SNIFF_BYTES);
        open(file)?
            .take(SNIFF_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(|e| TraceError::io(file, "cannot read", e))?;
        if head.is_empty() {
            continue;
        }
        let Some(format) = detect(&head) else {
            let what = "not a trace this reader knows (fio2, fio3, blktrace, msr, csv); \
                        name the format if it is one";
            return Err(TraceError::whole(file, what));
        };
        match found {
            Some((f, other)) if f != format => {
                let what = format!(
                    "is {format}, but {} is {f}: one trace, one format",
                    other.display()
                );
                return Err(TraceError::whole(file, what));
            }
            _ => found = Some((format, file)),
        }
    }
    let first = files.first().map_or(Path::new(""), |f| f.as_path());
    found
        .map(|(f, _)| f)
        .ok_or_else(|| TraceError::whole(first, "empty file"))
}

#[cfg(test)]
mod tests;
