//! Writes a fio version 3 iolog (`--record`): what fio's own `write_iolog` writes
//! and its `read_iolog` replays — the version line, `0 FILE add` and `0 FILE open`
//! for each file (fio 3.33 asserts on I/O to a file the log never opened), one
//! `TIME_US FILE read|write|trim OFFSET LENGTH` line per I/O, and `TIME_US FILE
//! close` lines at the end. fio before 3.34 drops `trim` lines on replay ("bad
//! ddir"); later versions replay them.

use std::io::{self, Write};

use super::fio_log::V3_HEADER;
use crate::vocab::Op;

/// fio reads a file name with `%256s`: at most 256 bytes, no blanks.
const MAX_NAME_BYTES: usize = 256;

/// A fio version 3 iolog being written. Give it a buffered writer: each I/O is one
/// short `write!`.
pub struct FioV3Writer<W: Write> {
    w: W,
    names: Vec<String>,
    /// The latest time written, in µs: the close lines' time.
    last_us: u64,
}

impl<W: Write> FioV3Writer<W> {
    /// Starts a log of I/O to `file_names` (indexed from 0 by [`FioV3Writer::add`]).
    /// A name that fio could not read back (empty, with blanks, over 256 bytes) is
    /// an `InvalidInput` error.
    pub fn new<S: AsRef<str>>(mut w: W, file_names: &[S]) -> io::Result<Self> {
        let names: Vec<String> = file_names.iter().map(|s| s.as_ref().to_string()).collect();
        for name in &names {
            check_name(name)?;
        }
        writeln!(w, "{V3_HEADER}")?;
        for name in &names {
            writeln!(w, "0 {name} add")?;
        }
        for name in &names {
            writeln!(w, "0 {name} open")?;
        }
        Ok(FioV3Writer {
            w,
            names,
            last_us: 0,
        })
    }

    /// One I/O at `t_ns` from the start (written in whole µs, fio's unit) to file
    /// `file`. An index without a file is an `InvalidInput` error.
    pub fn add(&mut self, t_ns: u64, file: usize, op: Op, offset: u64, len: u32) -> io::Result<()> {
        let Some(name) = self.names.get(file) else {
            let what = format!(
                "file index {file}, but the log has {} files",
                self.names.len()
            );
            return Err(io::Error::new(io::ErrorKind::InvalidInput, what));
        };
        let t_us = t_ns / 1000;
        self.last_us = self.last_us.max(t_us);
        writeln!(self.w, "{t_us} {name} {} {offset} {len}", op.name())
    }

    /// Closes every file, flushes, and hands the writer back.
    pub fn finish(mut self) -> io::Result<W> {
        for name in &self.names {
            writeln!(self.w, "{} {name} close", self.last_us)?;
        }
        self.w.flush()?;
        Ok(self.w)
    }
}

fn check_name(name: &str) -> io::Result<()> {
    let bad = if name.is_empty() {
        "is empty"
    } else if name.len() > MAX_NAME_BYTES {
        "is longer than the 256 bytes fio reads"
    } else if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        "has blanks or control characters, which fio's iolog cannot hold"
    } else {
        return Ok(());
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("file name '{name}' {bad}"),
    ))
}
