//! The MSR Cambridge block traces as SNIA's IOTTA repository publishes them: CSV
//! lines `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, no header
//! (one that names those columns is accepted). Timestamp is a Windows filetime and
//! ResponseTime a duration, both in 100 ns ticks; Type is `Read` or `Write`; Offset
//! and Size are bytes. Each `Hostname/DiskNumber` is a device; the response times
//! give its concurrency.

use std::io::BufRead;
use std::path::Path;

use super::build::{Collector, RawIo};
use super::lines::{number, shorten, Lines};
use super::{SkipKind, TraceError};
use crate::vocab::Op;

/// A filetime tick.
const TICK_NS: u64 = 100;
const COLUMNS: [&str; 7] = [
    "Timestamp",
    "Hostname",
    "DiskNumber",
    "Type",
    "Offset",
    "Size",
    "ResponseTime",
];

/// One line's values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Line<'a> {
    pub t_ns: u64,
    pub host: &'a str,
    pub disk: &'a str,
    pub op: Op,
    pub offset: u64,
    /// Checked to fit a `u32` and `offset + size` to fit a `u64`.
    pub size: u32,
    pub response_ns: u64,
}

/// The line names MSR's seven columns (case and blanks aside).
pub(super) fn is_header(line: &str) -> bool {
    let names: Vec<&str> = line.split(',').map(str::trim).collect();
    names.len() == COLUMNS.len()
        && names
            .iter()
            .zip(COLUMNS)
            .all(|(n, c)| n.eq_ignore_ascii_case(c))
}

/// Reads one MSR CSV into `c`.
pub(super) fn read(r: impl BufRead, file: &Path, c: &mut Collector) -> Result<(), TraceError> {
    let mut lines = Lines::new(r, file);
    let mut first = true;
    while let Some((no, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        if std::mem::take(&mut first) && is_header(line) {
            continue;
        }
        let l = parse_line(line).map_err(|what| TraceError::line(file, no, what))?;
        add(&l, c).map_err(|what| TraceError::line(file, no, what))?;
    }
    Ok(())
}

fn add(l: &Line, c: &mut Collector) -> Result<(), String> {
    c.saw(l.t_ns);
    if l.size == 0 {
        c.skip(SkipKind::ZeroLength);
        return Ok(());
    }
    let done_ns = l
        .t_ns
        .checked_add(l.response_ns)
        .ok_or("Timestamp + ResponseTime is beyond 2^64 ns")?;
    let dev = c.device(&format!("{}/{}", l.host, l.disk));
    c.has_completions(dev);
    let io = RawIo {
        t_ns: l.t_ns,
        op: l.op,
        offset: l.offset,
        len: l.size,
        done_ns: Some(done_ns),
    };
    c.push(dev, io);
    Ok(())
}

/// One data line, or what is wrong with it.
pub(super) fn parse_line(line: &str) -> Result<Line<'_>, String> {
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    let [t, host, disk, kind, offset, size, response] = f[..] else {
        return Err(format!(
            "expected 7 comma-separated fields ({}), found {}",
            COLUMNS.join(","),
            f.len()
        ));
    };
    let ticks = |s: &str, what: &str| -> Result<u64, String> {
        let n = number::<u64>(s, what)?;
        n.checked_mul(TICK_NS)
            .ok_or_else(|| format!("{what} {n} (100 ns ticks) is beyond 2^64 ns"))
    };
    let t_ns = ticks(t, "Timestamp")?;
    if host.is_empty() || disk.is_empty() {
        return Err("empty Hostname or DiskNumber".into());
    }
    let op = match kind {
        k if k.eq_ignore_ascii_case("read") => Op::Read,
        k if k.eq_ignore_ascii_case("write") => Op::Write,
        other => return Err(format!("unknown Type '{}' (Read or Write)", shorten(other))),
    };
    let offset = number::<u64>(offset, "Offset")?;
    let size = number::<u32>(size, "Size")?;
    if offset.checked_add(u64::from(size)).is_none() {
        return Err(format!(
            "Offset {offset} + Size {size} is beyond 2^64 bytes"
        ));
    }
    Ok(Line {
        t_ns,
        host,
        disk,
        op,
        offset,
        size,
        response_ns: ticks(response, "ResponseTime")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceFormat;

    /// Two devices, reads and writes of known sizes, the published layout (no
    /// header), one line out of order, CRLF endings.
    const SAMPLE: &str = "\
128166372003061629,hm,0,Read,3218333696,4096,7366\r
128166372003061629,hm,1,Write,0,512,100\r
128166372003071629,hm,0,Write,3218337792,65536,20000\r
128166372003066629,hm,0,Read,1024,8192,1000\r
128166372003081629,hm,1,Write,512,0,10\r
";

    fn load(text: &str) -> Result<crate::trace::Trace, TraceError> {
        let mut c = Collector::default();
        read(text.as_bytes(), Path::new("msr.csv"), &mut c)?;
        c.finish(TraceFormat::Msr)
            .map_err(|w| TraceError::whole(Path::new("msr.csv"), w))
    }

    #[test]
    fn devices_mix_sizes_and_filetime() {
        let t = load(SAMPLE).unwrap();
        let names: Vec<&str> = t.devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["hm/0", "hm/1"]);
        let hm0: Vec<(u64, Op, u64, u32)> = t.devices[0]
            .ios
            .iter()
            .map(|i| (i.t_ns, i.op, i.offset, i.len))
            .collect();
        // 10000 ticks = 1 ms; the out-of-order line (5000 ticks) sorts between.
        assert_eq!(
            hm0,
            [
                (0, Op::Read, 3_218_333_696, 4096),
                (500_000, Op::Read, 1024, 8192),
                (1_000_000, Op::Write, 3_218_337_792, 65536),
            ]
        );
        assert_eq!(t.devices[0].extent_bytes, 3_218_337_792 + 65536);
        // [0, 736.6 µs) overlaps [500 µs, 600 µs); the write starts after both.
        assert_eq!(t.devices[0].concurrency, Some(2));
        assert_eq!(t.devices[1].ios.len(), 1);
        assert_eq!(t.devices[1].concurrency, Some(1));
        assert_eq!(t.skipped.get(SkipKind::ZeroLength), 1);
        assert!(t.timed);
    }

    #[test]
    fn header_accepted_once() {
        let with = format!("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n{SAMPLE}");
        assert_eq!(load(&with).unwrap(), load(SAMPLE).unwrap());
        let twice =
            format!("{SAMPLE}Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n");
        let e = load(&twice).unwrap_err();
        assert_eq!(e.record, 6);
        assert!(e.what.starts_with("bad Timestamp 'Timestamp'"), "{e}");
    }

    #[test]
    fn bad_lines_name_their_line() {
        let cases = [
            (
                "1,h,0,Read,0,4096,1\n1,h,0,Flush,0,0,1\n",
                2,
                "unknown Type 'Flush' (Read or Write)",
            ),
            ("1,h,0,Read,-4096,4096,1\n", 1, "bad Offset '-4096'"),
            ("1,h,0,Read,0,4294967296,1\n", 1, "bad Size '4294967296'"),
            (
                "184467440737095517,h,0,Read,0,1,1\n",
                1,
                "Timestamp 184467440737095517 (100 ns",
            ),
            ("1,h,0,Read,0,1\n", 1, "expected 7 comma-separated fields"),
            (
                "1,h,0,Read,18446744073709551615,1,1\n",
                1,
                "Offset 18446744073709551615 + Size 1",
            ),
            (
                "1,h,0,Read,0,1,184467440737095516\n",
                1,
                "Timestamp + ResponseTime",
            ),
        ];
        for (text, line, what) in cases {
            let e = load(text).unwrap_err();
            assert_eq!(e.record, line, "{e}");
            assert!(e.what.starts_with(what), "{e}");
        }
    }
}
