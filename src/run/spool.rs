//! The intervals a run has closed so far, kept on disk rather than in memory: each
//! is appended as one JSON line to an unlinked temporary file and read back once,
//! when the result is built. A run's memory then stays flat however long it runs (a
//! 24-hour run at 1 s intervals held ~290 MB of rows in memory before). Should the
//! file be unavailable or a write fail, the rows from there on are held in memory
//! instead, so none is ever lost to the spool.

use crate::result::Interval;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, Write};

/// The rows so far: the first `on_disk` in the file, the rest in `held`. Its
/// default holds them in memory (an empty stand-in costs no file).
#[derive(Default)]
pub struct IntervalSpool {
    file: Option<BufWriter<File>>,
    on_disk: usize,
    held: Vec<Interval>,
}

impl IntervalSpool {
    /// A spool in an unlinked file of the temporary directory, or in memory when
    /// none can be made there.
    pub fn new() -> IntervalSpool {
        IntervalSpool {
            file: tempfile::tempfile().ok().map(BufWriter::new),
            on_disk: 0,
            held: Vec::new(),
        }
    }

    /// How many rows it holds.
    pub fn len(&self) -> usize {
        self.on_disk + self.held.len()
    }

    /// True when it holds no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends a row; once the file has failed, rows stay in memory (after it, in
    /// order).
    pub fn push(&mut self, iv: Interval) {
        if self.held.is_empty() {
            if let Some(f) = self.file.as_mut() {
                let line = serde_json::to_writer(&mut *f, &iv)
                    .map_err(std::io::Error::from)
                    .and_then(|()| f.write_all(b"\n"));
                if line.is_ok() {
                    self.on_disk += 1;
                    return;
                }
                // A partly written line is cut off when the file is read back.
            }
        }
        self.held.push(iv);
    }

    /// Every row in order. A row the file lost (it could not be read back) is
    /// named in the error, with the rows that could be read.
    pub fn into_vec(self) -> (Vec<Interval>, Option<String>) {
        let mut rows = Vec::with_capacity(self.len());
        let mut lost = None;
        if let Some(f) = self.file {
            match read_back(f, self.on_disk, &mut rows) {
                Ok(()) => {}
                Err(e) => {
                    lost = Some(format!(
                        "{} of {} interval rows could not be read back from their \
                         temporary file: {e}",
                        self.on_disk - rows.len(),
                        self.on_disk
                    ))
                }
            }
        }
        rows.extend(self.held);
        (rows, lost)
    }
}

/// Reads the first `n` lines of `f` back into `rows`.
fn read_back(f: BufWriter<File>, n: usize, rows: &mut Vec<Interval>) -> std::io::Result<()> {
    let mut f = f.into_inner().map_err(|e| e.into_error())?;
    f.rewind()?;
    let mut lines = BufReader::new(f).lines();
    for _ in 0..n {
        let line = lines
            .next()
            .unwrap_or_else(|| Err(std::io::ErrorKind::UnexpectedEof.into()))?;
        rows.push(serde_json::from_str(&line)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Cpu, IntervalLatency, RunEvent};

    fn row(i: u64) -> Interval {
        Interval {
            index: i,
            t_s: (i + 1) as f64 / 3.0,
            duration_s: 1.0 / 3.0,
            unix_s: 1.8e9 + i as f64 * 0.1,
            ios: 1000 + i,
            iops: 2_999.999_999_7 + i as f64 / 7.0,
            lat_us: IntervalLatency {
                mean: 123.456_789_012,
                p99: 1e-7 * i as f64,
                ..Default::default()
            },
            cpu: Cpu {
                user_pct: 0.1 + 0.2,
                cpu_us_per_io: f64::MIN_POSITIVE,
                ..Default::default()
            },
            events: vec![RunEvent::default()],
            ..Default::default()
        }
    }

    #[test]
    fn rows_come_back_bit_for_bit_and_in_order() {
        let mut s = IntervalSpool::new();
        assert!(s.file.is_some(), "the temporary directory takes a file");
        let rows: Vec<Interval> = (0..50).map(row).collect();
        for r in &rows {
            s.push(r.clone());
        }
        assert_eq!(s.len(), 50);
        assert!(s.held.is_empty(), "every row went to the file");
        let (back, lost) = s.into_vec();
        assert_eq!(lost, None);
        assert_eq!(back, rows);
    }

    #[test]
    fn rows_after_a_failed_file_stay_in_memory_in_order() {
        let mut s = IntervalSpool::new();
        s.push(row(0));
        s.push(row(1));
        // What a failed write leaves: the file's rows so far, the rest held.
        s.held.push(row(2));
        s.push(row(3));
        assert_eq!(s.on_disk, 2);
        let (back, lost) = s.into_vec();
        assert_eq!(lost, None);
        assert_eq!(back, (0..4).map(row).collect::<Vec<_>>());
        let mut m = IntervalSpool::default();
        m.push(row(7));
        assert_eq!(m.into_vec().0, vec![row(7)]);
    }
}
