//! The one error of trace reading: which file, which line or record, what is wrong
//! with it. An I/O error is its source (`Display` does not repeat it; print the
//! chain with `crate::errors::chain`).

use std::path::{Path, PathBuf};

/// What the `record` of a [`TraceError`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordUnit {
    /// Text formats: 1-based line numbers.
    Line,
    /// blktrace: 1-based record numbers within the (per-CPU) file.
    Record,
}

/// A trace file that cannot be read as its format says.
#[derive(Debug)]
pub struct TraceError {
    pub file: PathBuf,
    /// 1-based line or record number (see `unit`); 0 = the whole file.
    pub record: u64,
    pub unit: RecordUnit,
    pub what: String,
    pub source: Option<std::io::Error>,
}

impl TraceError {
    pub(crate) fn whole(file: &Path, what: impl Into<String>) -> Self {
        TraceError {
            file: file.to_path_buf(),
            record: 0,
            unit: RecordUnit::Line,
            what: what.into(),
            source: None,
        }
    }
    pub(crate) fn line(file: &Path, line: u64, what: impl Into<String>) -> Self {
        TraceError {
            record: line,
            ..TraceError::whole(file, what)
        }
    }
    pub(crate) fn record(file: &Path, record: u64, what: impl Into<String>) -> Self {
        TraceError {
            record,
            unit: RecordUnit::Record,
            ..TraceError::whole(file, what)
        }
    }
    pub(crate) fn io(file: &Path, what: impl Into<String>, source: std::io::Error) -> Self {
        TraceError {
            source: Some(source),
            ..TraceError::whole(file, what)
        }
    }
}

impl std::fmt::Display for TraceError {
    /// "FILE: line N: what", "FILE: record N: what", or "FILE: what".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: ", self.file.display())?;
        match (self.record, self.unit) {
            (0, _) => {}
            (n, RecordUnit::Line) => write!(f, "line {n}: ")?,
            (n, RecordUnit::Record) => write!(f, "record {n}: ")?,
        }
        f.write_str(&self.what)
    }
}

impl std::error::Error for TraceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}
