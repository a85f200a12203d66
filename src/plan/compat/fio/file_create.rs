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
    use crate::plan::compat::fio::parse_str;
    use crate::plan::compat::Translated;
    use std::path::Path;

    fn parse(text: &str) -> Translated {
        parse_str("t.fio", text, Path::new("."), &|_| None).unwrap()
    }

    #[test]
    fn create_on_open_makes_the_file_an_empty_target() {
        // The file opened both O_DIRECT and buffered (two targets) by two jobs that
        // both ask for it; a third file shared with a job that does not ask is laid
        // out, as fio lays it out for that job.
        let t = parse(
            "[global]\nsize=1m\ncreate_on_open=1\n[d]\nfilename=/tmp/e\ndirect=1\n\
             rw=randwrite\n[b]\nfilename=/tmp/e\nrw=randread\n\
             [x]\nfilename=/tmp/l\nrw=write\n[y]\nfilename=/tmp/l\nrw=read\n\
             create_on_open=0\n",
        );
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let create: Vec<(&str, FileCreate)> = t
            .plan
            .targets
            .iter()
            .map(|t| (t.uri.as_str(), t.create))
            .collect();
        assert_eq!(
            create,
            [
                ("/tmp/e", FileCreate::Empty),
                ("/tmp/e", FileCreate::Empty),
                ("/tmp/l", FileCreate::Data),
            ]
        );
        // fallocate does not change it: fio never preallocates a file it creates
        // on open.
        let t = parse("[a]\nfilename=/tmp/e\nsize=1m\ncreate_on_open=1\nfallocate=posix\n");
        assert_eq!(t.plan.targets[0].create, FileCreate::Empty);
        // create_on_open=0 is fio's default.
        let t = parse("[a]\nfilename=/tmp/e\nsize=1m\ncreate_on_open=0\n");
        assert_eq!(t.plan.targets[0].create, FileCreate::Data);
    }

    #[test]
    fn a_file_is_created_empty_only_when_every_job_on_it_asks() {
        let files =
            files_created_on_open([("/a", true), ("/b", true), ("/a", false), ("/c", true)]);
        assert_eq!(files, vec!["/b".to_string(), "/c".to_string()]);
    }
}
