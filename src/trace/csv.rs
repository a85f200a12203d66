//! The plain CSV trace: a header line naming the columns `time_s`, `op`, `offset`
//! and `bytes` (in any order), then one I/O a line — time in seconds from any
//! origin (a decimal fraction, up to ns), `read`/`write`/`trim`, offset and length
//! in bytes. The file is one device, named after the file.

use std::io::BufRead;
use std::path::Path;

use super::build::{Collector, RawIo};
use super::lines::{number, shorten, Lines};
use super::{SkipKind, TraceError};
use crate::vocab::Op;

const COLUMNS: [&str; 4] = ["time_s", "op", "offset", "bytes"];

/// Where each of [`COLUMNS`] is on a line.
type Order = [usize; 4];

/// The line is a header naming exactly the four columns.
pub(super) fn is_header(line: &str) -> bool {
    header_order(line).is_ok()
}

fn header_order(line: &str) -> Result<Order, String> {
    let names: Vec<&str> = line.split(',').map(str::trim).collect();
    let mut order = [0; 4];
    for (slot, column) in order.iter_mut().zip(COLUMNS) {
        *slot = names.iter().position(|n| *n == column).ok_or_else(|| {
            format!(
                "expected a header line naming time_s,op,offset,bytes, found '{}'",
                shorten(line)
            )
        })?;
    }
    if names.len() != COLUMNS.len() {
        return Err(format!(
            "header has {} columns: time_s,op,offset,bytes only",
            names.len()
        ));
    }
    Ok(order)
}

/// Reads one CSV trace into `c`: its device is the file's name.
pub(super) fn read(r: impl BufRead, file: &Path, c: &mut Collector) -> Result<(), TraceError> {
    let mut lines = Lines::new(r, file);
    let mut order = None;
    let name = file
        .file_name()
        .unwrap_or(file.as_os_str())
        .to_string_lossy();
    while let Some((no, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let at = |what| TraceError::line(file, no, what);
        let Some(order) = order else {
            order = Some(header_order(line).map_err(at)?);
            continue;
        };
        let (t_ns, op, offset, len) = parse_line(line, &order).map_err(at)?;
        c.saw(t_ns);
        if len == 0 {
            c.skip(SkipKind::ZeroLength);
            continue;
        }
        let dev = c.device(&name);
        let done_ns = None;
        c.push(
            dev,
            RawIo {
                t_ns,
                op,
                offset,
                len,
                done_ns,
            },
        );
    }
    if order.is_none() {
        return Err(TraceError::whole(file, "empty file"));
    }
    Ok(())
}

fn parse_line(line: &str, order: &Order) -> Result<(u64, Op, u64, u32), String> {
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    if f.len() != COLUMNS.len() {
        return Err(format!(
            "expected 4 comma-separated fields, found {}",
            f.len()
        ));
    }
    let field = |i: usize| order.get(i).and_then(|&k| f.get(k)).copied().unwrap_or("");
    let t_ns = seconds_to_ns(field(0))?;
    let op = match field(1) {
        o if o.eq_ignore_ascii_case("read") => Op::Read,
        o if o.eq_ignore_ascii_case("write") => Op::Write,
        o if o.eq_ignore_ascii_case("trim") => Op::Trim,
        other => {
            return Err(format!(
                "unknown op '{}' (read, write or trim)",
                shorten(other)
            ))
        }
    };
    let offset = number::<u64>(field(2), "offset")?;
    let len = number::<u32>(field(3), "bytes")?;
    if offset.checked_add(u64::from(len)).is_none() {
        return Err(format!(
            "offset {offset} + bytes {len} is beyond 2^64 bytes"
        ));
    }
    Ok((t_ns, op, offset, len))
}

/// "12.5" → 12_500_000_000: digits, an optional fraction (digits past the ninth
/// are dropped), no sign or exponent.
fn seconds_to_ns(s: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "bad time_s '{}': expected seconds like 12 or 0.000250",
            shorten(s)
        )
    };
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty()) || !digits(whole) || !digits(frac) {
        return Err(bad());
    }
    let whole_s: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    let mut frac_ns = 0u64;
    for (i, b) in frac.bytes().take(9).enumerate() {
        frac_ns += u64::from(b - b'0') * 10u64.pow(8 - i as u32);
    }
    whole_s
        .checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(frac_ns))
        .ok_or_else(|| format!("time_s {} is beyond 2^64 ns", shorten(s)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceFormat;

    fn load(text: &str) -> Result<crate::trace::Trace, TraceError> {
        let mut c = Collector::default();
        read(text.as_bytes(), Path::new("dir/app.csv"), &mut c)?;
        c.finish(TraceFormat::Csv)
            .map_err(|w| TraceError::whole(Path::new("app.csv"), w))
    }

    #[test]
    fn columns_in_any_order() {
        let t = load(
            "op,time_s,bytes,offset\nwrite,10.5,4096,0\nread,10.000000001,512,8192\ntrim,11,0,0\n",
        )
        .unwrap();
        let d = &t.devices[0];
        assert_eq!(d.name, "app.csv");
        let ios: Vec<(u64, Op, u64, u32)> = d
            .ios
            .iter()
            .map(|i| (i.t_ns, i.op, i.offset, i.len))
            .collect();
        assert_eq!(
            ios,
            [(0, Op::Read, 8192, 512), (499_999_999, Op::Write, 0, 4096)]
        );
        assert_eq!(d.extent_bytes, 8704);
        assert_eq!(t.skipped.get(SkipKind::ZeroLength), 1);
    }

    #[test]
    fn seconds_exactly() {
        assert_eq!(seconds_to_ns("0.000250"), Ok(250_000));
        assert_eq!(seconds_to_ns(".5"), Ok(500_000_000));
        assert_eq!(seconds_to_ns("3."), Ok(3_000_000_000));
        assert_eq!(seconds_to_ns("1.0000000019"), Ok(1_000_000_001));
        assert_eq!(seconds_to_ns("18446744073.709551615"), Ok(u64::MAX));
        for bad in [
            "",
            ".",
            "-1",
            "+1",
            "1e3",
            "1.2.3",
            " 1",
            "18446744073.709551616",
            "99999999999999999999",
        ] {
            assert!(seconds_to_ns(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_lines_name_their_line() {
        let h = "time_s,op,offset,bytes\n";
        let cases = [
            (
                format!("{h}0,read,0,512\n1,flush,0,0\n"),
                3,
                "unknown op 'flush'",
            ),
            (format!("{h}-1,read,0,512\n"), 2, "bad time_s '-1'"),
            (
                format!("{h}0,read,0,512,9\n"),
                2,
                "expected 4 comma-separated fields, found 5",
            ),
            (
                format!("{h}0,read,18446744073709551615,1\n"),
                2,
                "offset 18446744073709551615 + bytes 1",
            ),
            (
                "time,op,offset,bytes\n0,read,0,1\n".to_string(),
                1,
                "expected a header line",
            ),
            (
                "time_s,op,offset,bytes,extra\n".to_string(),
                1,
                "header has 5 columns",
            ),
            ("\n\n".to_string(), 0, "empty file"),
        ];
        for (text, line, what) in cases {
            let e = load(&text).unwrap_err();
            assert_eq!(e.record, line, "{e}");
            assert!(e.what.starts_with(what), "{e}");
        }
    }
}
