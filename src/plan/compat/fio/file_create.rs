//! fio's `create_on_open`: the job's file is not laid out before the job runs; the
//! job's own open creates it, empty, and its writes are what allocate it (fio then
//! never preallocates it either, whatever `fallocate` says). Such a file becomes a
//! target with `create = "empty"`: ioscope creates it as a hole of the job's file
//! size, so reads of blocks the run has not written find zeros, where fio's file is
//! still shorter and the read comes back empty. A file that another job of the file
//! uses without the option is laid out, as fio lays it out for that job.

use super::{parse_bool, JobCx};
use crate::plan::model::{FileCreate, TargetSpec};
use std::collections::HashMap;

impl JobCx<'_> {
    /// Whether the job asks for `create_on_open` on the file it reads and writes
    /// (the file-operation engines time their own creates, see `op_engines`).
    pub(super) fn create_on_open(&self, file_op: bool) -> bool {
        !file_op
            && self
                .o
                .get("create_on_open")
                .is_some_and(|(v, _)| parse_bool(Some(v)) != Some(false))
    }
}

/// The files every job of which asked for `create_on_open`, from (file, asked) per
/// job.
pub(super) fn files_created_on_open<'a>(
    jobs: impl IntoIterator<Item = (&'a str, bool)>,
) -> Vec<String> {
    let mut all: HashMap<&str, bool> = HashMap::new();
    let mut order = Vec::new();
    for (uri, asked) in jobs {
        all.entry(uri)
            .and_modify(|a| *a &= asked)
            .or_insert_with(|| {
                order.push(uri);
                asked
            });
    }
    order
        .into_iter()
        .filter(|u| all[u])
        .map(str::to_string)
        .collect()
}

/// Marks the targets of those files `create = "empty"` (every target of a file, as
/// a file opened both O_DIRECT and buffered has one target per way).
pub(super) fn mark_empty(targets: &mut [TargetSpec], files: &[String]) {
    for t in targets {
        if files.contains(&t.uri) && FileCreate::applies_to(&t.uri) {
            t.create = FileCreate::Empty;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_created_empty_only_when_every_job_on_it_asks() {
        let files = files_created_on_open([("/a", true), ("/b", true), ("/a", false), ("/c", true)]);
        assert_eq!(files, vec!["/b".to_string(), "/c".to_string()]);
    }
}
