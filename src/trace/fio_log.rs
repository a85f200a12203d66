//! fio's iolog, versions 2 and 3 (fio's iolog.c, `read_iolog`), and the version 3
//! writer for `--record` ([`FioV3Writer`]).
//!
//! The first line is "fio version 2 iolog" or "fio version 3 iolog". Then one
//! action a line, fields separated by blanks: version 3 starts each with the time
//! in microseconds since the job started; `FILE add|open|close`, or
//! `FILE read|write|trim|sync|datasync|wait OFFSET LENGTH`. `wait`'s OFFSET is a
//! delay in microseconds: version 2 replays it, so here it advances the log's
//! clock (a version 2 log without waits is untimed); fio ignores it in version 3.
//! Each FILE is a device. fio skips lines it cannot parse and actions it does not
//! know; here they are errors, as is a number out of range (fio's `%u` would wrap
//! a negative length).

use std::io::BufRead;
use std::path::Path;

use super::build::{Collector, RawIo};
use super::lines::{number, shorten, Lines};
use super::{SkipKind, TraceError, TraceFormat};
use crate::vocab::Op;

pub(super) const V2_HEADER: &str = "fio version 2 iolog";
pub(super) const V3_HEADER: &str = "fio version 3 iolog";

/// One line's fields: TIME (version 3), FILE, ACTION, and OFFSET LENGTH when given.
struct Entry<'a> {
    t_us: Option<u64>,
    file: &'a str,
    action: &'a str,
    range: Option<(u64, u32)>,
}

/// Reads one iolog of `format` (FioV2 or FioV3) into `c`.
pub(super) fn read(
    r: impl BufRead,
    file: &Path,
    format: TraceFormat,
    c: &mut Collector,
) -> Result<(), TraceError> {
    let v3 = format == TraceFormat::FioV3;
    let header = if v3 { V3_HEADER } else { V2_HEADER };
    let mut lines = Lines::new(r, file);
    match lines.next_line()? {
        // fio compares only the header's length (strncmp).
        Some((_, l)) if l.starts_with(header) => {}
        Some((no, l)) => {
            let what = format!("expected '{header}', found '{}'", shorten(l));
            return Err(TraceError::line(file, no, what));
        }
        None => return Err(TraceError::whole(file, "empty file")),
    }
    // Version 2: the sum of the waits so far, in ns.
    let mut clock_ns = 0u64;
    while let Some((no, line)) = lines.next_line()? {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        split(&fields, v3)
            .and_then(|e| apply(&e, c, &mut clock_ns))
            .map_err(|what| TraceError::line(file, no, what))?;
    }
    Ok(())
}

fn split<'a>(fields: &[&'a str], v3: bool) -> Result<Entry<'a>, String> {
    let (t_us, rest) = match fields {
        [t, rest @ ..] if v3 => (Some(number::<u64>(t, "time (µs)")?), rest),
        _ => (None, fields),
    };
    let (file, action, range) = match rest {
        [file, action] => (*file, *action, None),
        [file, action, offset, len] => {
            let offset = number::<u64>(offset, "offset")?;
            let len = number::<u32>(len, "length")?;
            (*file, *action, Some((offset, len)))
        }
        _ => {
            let time = if v3 { "TIME " } else { "" };
            return Err(format!(
                "expected '{time}FILE ACTION [OFFSET LENGTH]', found {} fields",
                fields.len()
            ));
        }
    };
    Ok(Entry {
        t_us,
        file,
        action,
        range,
    })
}

/// What a line asks for.
enum Action {
    Add,
    Skip(SkipKind),
    /// Microseconds.
    Wait(u64),
    Io(Op),
}

fn action(e: &Entry) -> Result<Action, String> {
    Ok(match (e.action, e.range) {
        ("add", None) => Action::Add,
        ("open" | "close", None) => Action::Skip(SkipKind::FileAction),
        ("sync", Some(_)) => Action::Skip(SkipKind::Sync),
        ("datasync", Some(_)) => Action::Skip(SkipKind::Datasync),
        ("wait", Some((delay_us, _))) => Action::Wait(delay_us),
        ("read", Some(_)) => Action::Io(Op::Read),
        ("write", Some(_)) => Action::Io(Op::Write),
        ("trim", Some(_)) => Action::Io(Op::Trim),
        ("add" | "open" | "close", Some(_)) => {
            return Err(format!("'{}' takes no offset and length", e.action))
        }
        ("read" | "write" | "trim" | "sync" | "datasync" | "wait", None) => {
            return Err(format!("'{}' needs an offset and a length", e.action))
        }
        (other, _) => {
            return Err(format!(
                "unknown action '{}' (fio's are add, open, close, read, write, trim, sync, \
                 datasync, wait)",
                shorten(other)
            ))
        }
    })
}

fn apply(e: &Entry, c: &mut Collector, clock_ns: &mut u64) -> Result<(), String> {
    let t_ns = match e.t_us {
        Some(us) => us
            .checked_mul(1000)
            .ok_or_else(|| format!("time {us} µs is beyond 2^64 ns"))?,
        None => *clock_ns,
    };
    c.saw(t_ns);
    match action(e)? {
        Action::Add => {
            c.device(e.file);
            c.skip(SkipKind::FileAction);
        }
        Action::Skip(kind) => c.skip(kind),
        Action::Wait(delay_us) => {
            // Version 2 only: fio ignores waits in version 3.
            if e.t_us.is_none() {
                *clock_ns = delay_us
                    .checked_mul(1000)
                    .and_then(|ns| clock_ns.checked_add(ns))
                    .ok_or_else(|| format!("wait {delay_us} µs takes the time beyond 2^64 ns"))?;
                c.waited();
            }
            c.skip(SkipKind::Wait);
        }
        Action::Io(op) => push_io(c, e, t_ns, op)?,
    }
    Ok(())
}

fn push_io(c: &mut Collector, e: &Entry, t_ns: u64, op: Op) -> Result<(), String> {
    let (offset, len) = e.range.unwrap_or((0, 0));
    if offset.checked_add(u64::from(len)).is_none() {
        return Err(format!(
            "offset {offset} + length {len} is beyond 2^64 bytes"
        ));
    }
    if len == 0 {
        c.skip(SkipKind::ZeroLength);
        return Ok(());
    }
    let dev = c.device(e.file);
    c.push(
        dev,
        RawIo {
            t_ns,
            op,
            offset,
            len,
            done_ns: None,
        },
    );
    Ok(())
}
