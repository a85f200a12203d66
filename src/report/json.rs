//! JSON output: the result file, written atomically (temp file + rename) after every
//! run so a later failure loses nothing, and the intervals stream (`PATH.intervals.jsonl`),
//! appended and flushed as each interval closes so a killed run keeps what it measured.

use crate::result::{Interval, ResultDoc};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes `doc` to `path` atomically.
pub fn write_atomic(path: &Path, doc: &ResultDoc) -> std::io::Result<()> {
    let mut text = serde_json::to_vec_pretty(doc)?;
    text.push(b'\n');
    write_atomic_bytes(path, &text)
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, fsync, rename.
pub fn write_atomic_bytes(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = tmp_path(path);
    {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Checks at start-up that `path` can be written (creates and removes the temp file),
/// so a bad path fails before any I/O is measured.
pub fn check_writable(path: &Path) -> std::io::Result<()> {
    let tmp = tmp_path(path);
    File::create(&tmp)?;
    std::fs::remove_file(&tmp)
}

/// Path of the intervals stream beside a result file.
pub fn intervals_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".intervals.jsonl");
    path.with_file_name(name)
}

/// Appends one JSON object per interval, tagged with its run.
pub struct IntervalLog {
    out: BufWriter<File>,
}

impl IntervalLog {
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let f = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)?;
        Ok(IntervalLog {
            out: BufWriter::new(f),
        })
    }

    pub fn append(&mut self, run: &str, iv: &Interval) -> std::io::Result<()> {
        #[derive(serde::Serialize)]
        struct Line<'a> {
            run: &'a str,
            #[serde(flatten)]
            iv: &'a Interval,
        }
        serde_json::to_writer(&mut self.out, &Line { run, iv })?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}
