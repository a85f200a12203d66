//! Why `ioscope merge` refuses its input: each variant names the source file, the
//! run and what cannot be merged exactly, so the user knows which result to redo.

use crate::result::hdr::HdrError;

/// Why results cannot be merged; nothing is written.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(
        "'{first}' holds {first_runs} runs and '{other}' {other_runs}: results merge run \
         by run, so each must hold as many"
    )]
    RunCount {
        first: String,
        first_runs: usize,
        other: String,
        other_runs: usize,
    },
    #[error(
        "run {run} of '{source_path}' has {ios} {dir}s but no raw histogram (`hdr`): it \
         was written before results carried them, so its percentiles cannot be merged \
         exactly; run it again with this version"
    )]
    NoHistogram {
        source_path: String,
        run: usize,
        dir: &'static str,
        ios: u64,
    },
    #[error("run {run} of '{source_path}': its {dir} histogram")]
    Histogram {
        source_path: String,
        run: usize,
        dir: &'static str,
        source: HdrError,
    },
    #[error(
        "run {run} of '{source_path}': its {dir} histogram has another bucket layout \
         than ioscope's (1 ns, 3 significant digits), so its buckets cannot be added"
    )]
    Layout {
        source_path: String,
        run: usize,
        dir: &'static str,
    },
    #[error(
        "run {run}: '{first}' and '{other}' ran different workloads ({what}: {a} vs {b}); \
         only parts of one workload merge (targets, queue depths, streams and rates may \
         differ, the transfer sizes, read share and access pattern may not)"
    )]
    Shape {
        run: usize,
        first: String,
        other: String,
        what: &'static str,
        a: String,
        b: String,
    },
    #[error("run {run} of '{source_path}' is a network run; only storage runs merge")]
    Network { source_path: String, run: usize },
}
