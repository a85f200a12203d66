//! What a run leaves besides its result, and what its writes repeat: fio-format log
//! files ([`FioLogs`]) and the dedup working set ([`DedupSet`]). Their own file so
//! that the workload model and a workload's own settings (`overrides`) both name
//! them without reading each other.

use crate::vocab::skip::is_false;
use serde::{Deserialize, Serialize};

/// Where duplicates come from (fio's `dedupe_mode=working_set`): a set of
/// `bytes / unit` contents, the first unique units written; each duplicate repeats one
/// of them, drawn uniformly. `global` (fio's `dedupe_global`): one set shared by every
/// workload of the run that has it, each worker writing an equal share of it first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DedupSet {
    pub bytes: u64,
    #[serde(default, skip_serializing_if = "is_false")]
    pub global: bool,
}

/// fio-format logs of a run (or of one workload of it), one averaged sample per
/// direction per interval: each prefix names files `PREFIX_bw.N.log` (KiB/s),
/// `PREFIX_lat.N.log` (mean latency, ns) and `PREFIX_iops.N.log`, lines `time_ms,
/// value, direction, bs, offset` as fio writes them with `log_avg_msec`. `N` is
/// fio's job number ([`FioLogs::job`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FioLogs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bw: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops: Option<String>,
    /// fio's `log_offset`: lines carry an offset column (0: an averaged sample has
    /// none, as fio writes it) before the priority column.
    #[serde(default, skip_serializing_if = "is_false")]
    pub offset: bool,
    /// The number in the file names: fio numbers its jobs from 1 in job-file order,
    /// each clone (`numjobs`) its own; ioscope's workload of clones writes one set
    /// of logs, under its first clone's number. 0: no number, and the lines are
    /// appended to what the file holds (fio's `per_job_logs=0`).
    #[serde(default = "first_job", skip_serializing_if = "is_first_job")]
    pub job: u32,
}

impl Default for FioLogs {
    fn default() -> Self {
        FioLogs {
            bw: None,
            lat: None,
            iops: None,
            offset: false,
            job: 1,
        }
    }
}

impl FioLogs {
    /// True when no log is asked for.
    pub fn is_empty(&self) -> bool {
        self.bw.is_none() && self.lat.is_none() && self.iops.is_none()
    }
}

fn first_job() -> u32 {
    1
}

fn is_first_job(n: &u32) -> bool {
    *n == 1
}
