//! The `hdr_log` setting: each measured interval's latency histograms written, as the
//! interval closes, in HdrHistogram's interval log format (`#[StartTime: …]`,
//! `#[BaseTime: …]`, then `Tag=read,START,LENGTH,MAX,BASE64` lines; values in ns,
//! timestamps in seconds from the base time), so HdrHistogram's own tools and
//! libraries (the Java HistogramLogProcessor, Python's `HistogramLogReader`) read it.
//! Lines are written by the hdrhistogram crate's log writer with the same V2 deflate
//! encoding as the result's `hdr` fields.
//!
//! Workloads naming one file share it: their I/Os are added per direction. A file is
//! created by the first run of the command that names it and appended to by later
//! runs, under the first run's base time, so a sweep is one time line. A direction
//! gets a line every interval from its first I/O on (an interval without I/Os is an
//! empty histogram, not a gap). Warm-up intervals are left out, as from the totals.
//! A log that cannot be opened or written is a warning: the run itself happened.

use crate::plan::model::RunSpec;
use crate::plan::settings::declared::HDR_LOG;
use crate::stats::snapshot::{dir_stats, WorkloadStats};
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, UNIX_EPOCH};

/// Directions as the log tags them, in `Op::index` order.
const TAGS: [&str; 3] = ["read", "write", "trim"];

/// The base time (Unix seconds) of every log file this process has begun.
fn begun() -> &'static Mutex<BTreeMap<PathBuf, f64>> {
    static BEGUN: OnceLock<Mutex<BTreeMap<PathBuf, f64>>> = OnceLock::new();
    BEGUN.get_or_init(Default::default)
}

/// One log file and the workloads that write to it.
struct LogFile {
    path: PathBuf,
    out: BufWriter<File>,
    serializer: V2DeflateSerializer,
    workloads: Vec<usize>,
    base_unix_s: f64,
    /// Per direction: whether it has had an I/O yet.
    active: [bool; 3],
}

/// The run's interval logs.
#[derive(Default)]
pub(super) struct HdrLogs {
    files: Vec<LogFile>,
}

impl HdrLogs {
    /// Opens the files the run's workloads name; `start_unix_s` is the run's start.
    /// Files that cannot be opened are left out, each with a warning.
    pub fn open(run: &RunSpec, start_unix_s: f64, warnings: &mut Vec<String>) -> HdrLogs {
        let mut by_path: BTreeMap<PathBuf, Vec<usize>> = BTreeMap::new();
        for (i, w) in run.workloads.iter().enumerate() {
            let path = w.settings.get(&HDR_LOG).as_str();
            if !path.is_empty() {
                by_path.entry(PathBuf::from(path)).or_default().push(i);
            }
        }
        let mut logs = HdrLogs::default();
        for (path, workloads) in by_path {
            match open_file(&path, start_unix_s) {
                Ok((out, base_unix_s)) => logs.files.push(LogFile {
                    path,
                    out,
                    serializer: V2DeflateSerializer::new(),
                    workloads,
                    base_unix_s,
                    active: [false; 3],
                }),
                Err(e) => warnings.push(format!(
                    "run '{}': the HdrHistogram log '{}' cannot be written: {e}",
                    run.name,
                    path.display()
                )),
            }
        }
        logs
    }

    /// Writes one measured interval (`merged`: its per-workload counters) that began
    /// at `start_unix_s` and lasted `dur_s`. A file that fails is closed with a warning.
    pub fn write(
        &mut self,
        merged: &[WorkloadStats],
        start_unix_s: f64,
        dur_s: f64,
        warnings: &mut Vec<String>,
    ) {
        self.files
            .retain_mut(|f| match f.write(merged, start_unix_s, dur_s) {
                Ok(()) => true,
                Err(e) => {
                    warnings.push(format!(
                        "the HdrHistogram log '{}' could not be written, and stops here: {e}",
                        f.path.display()
                    ));
                    false
                }
            });
    }
}

impl LogFile {
    fn write(
        &mut self,
        merged: &[WorkloadStats],
        start_unix_s: f64,
        dur_s: f64,
    ) -> Result<(), String> {
        let mut dirs = dir_stats(false);
        for &i in &self.workloads {
            for (d, o) in dirs.iter_mut().zip(&merged[i].ops) {
                *d += o;
            }
        }
        let start = Duration::from_secs_f64((start_unix_s - self.base_unix_s).max(0.0));
        let length = Duration::from_secs_f64(dur_s.max(0.0));
        let mut log = IntervalLogWriterBuilder::new()
            .begin_log_with(&mut self.out, &mut self.serializer)
            .map_err(|e| e.to_string())?;
        for (k, d) in dirs.iter().enumerate() {
            self.active[k] |= d.lat.count() > 0;
            if self.active[k] {
                log.write_histogram(&d.lat.to_hdr(), start, length, Tag::new(TAGS[k]))
                    .map_err(|e| e.to_string())?;
            }
        }
        self.out.flush().map_err(|e| e.to_string())
    }
}

/// The file at `path`, with the base time its lines are written against: begun with
/// its header by the first run of this process that names it, appended to after.
fn open_file(path: &PathBuf, start_unix_s: f64) -> std::io::Result<(BufWriter<File>, f64)> {
    let mut begun = begun().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&base) = begun.get(path) {
        let f = std::fs::OpenOptions::new().append(true).open(path)?;
        return Ok((BufWriter::new(f), base));
    }
    let mut out = BufWriter::new(File::create(path)?);
    let at = UNIX_EPOCH + Duration::from_secs_f64(start_unix_s.max(0.0));
    IntervalLogWriterBuilder::new()
        .add_comment(&format!(
            "ioscope {}: latency histograms per interval, values in ns, tagged read, write, trim",
            env!("CARGO_PKG_VERSION")
        ))
        .with_start_time(at)
        .with_base_time(at)
        .begin_log_with(&mut out, &mut V2DeflateSerializer::new())?;
    out.flush()?;
    begun.insert(path.clone(), start_unix_s);
    Ok((out, start_unix_s))
}
