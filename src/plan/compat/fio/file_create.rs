//! How fio's jobs may create their files. `create_on_open`: the job's file is not
//! laid out before the job runs; the job's own open creates it, empty, and its
//! writes are what allocate it (fio then never preallocates it either, whatever
//! `fallocate` says). Such a file becomes a target with `create = "empty"`: ioscope
//! creates it as a hole of the job's file size, so reads of blocks the run has not
//! written find zeros, where fio's file is still shorter and the read comes back
//! empty. A file that another job of the file uses without the option is laid out,
//! as fio lays it out for that job. `allow_file_create=0`: the file must exist
//! (`create = "never"`), whichever job of the file says so. fio makes the missing
//! directories of every job's files at job set-up (filesetup.c's
//! `create_work_dirs`): the targets say `create_dirs`.
//!
//! `overwrite`: fio lays out a missing file with data only for a job that reads
//! (which forces `overwrite=1`) or asks for `overwrite=1`; a job that only writes,
//! with fio's default `overwrite=0`, leaves the file to its writes, which extend
//! and allocate it (filesetup.c's `can_extend`). Such a job's file is a hole too,
//! as under `create_on_open`, and so is laid out only when some job of the file
//! reads it or asks for `overwrite=1`.

use super::{CompatError, JobCx};
use crate::plan::model::{FileCreate, TargetSpec};
use std::collections::HashMap;

impl JobCx<'_> {
    /// How the job would have its file created: `Empty` when it asks for
    /// `create_on_open` on the file it reads and writes (the file-operation engines
    /// time their own creates, see `op_engines`), `Never` with `allow_file_create=0`.
    pub(super) fn file_creation(&self, file_op: bool) -> Result<FileCreate, CompatError> {
        let o = self.o;
        if o.has("allow_file_create") && !o.flag("allow_file_create")? {
            return Ok(FileCreate::Never);
        }
        let overwrite = o.has("overwrite") && o.flag("overwrite")?;
        let left_to_writes = !overwrite && !reads(o.get("rw").map(|(v, _)| v));
        Ok(match o.flag("create_on_open")? || left_to_writes {
            true if !file_op => FileCreate::Empty,
            _ => FileCreate::Data,
        })
    }
}

/// Whether a job with fio's `rw=` value (`None`: fio's default, `read`) reads.
fn reads(rw: Option<&str>) -> bool {
    let pattern = rw.map_or("read", |v| v.split(':').next().unwrap_or(v).trim());
    matches!(
        pattern.to_ascii_lowercase().as_str(),
        "read" | "randread" | "rw" | "readwrite" | "randrw"
    )
}

/// How each file is created, from (file, the job's wish) per job: `never` when any
/// job forbids creating it, `empty` when every job asks for `create_on_open`, else
/// laid out with data.
pub(super) fn settle<'a>(
    jobs: impl IntoIterator<Item = (&'a str, FileCreate)>,
) -> Vec<(String, FileCreate)> {
    let mut all: HashMap<&str, (bool, bool)> = HashMap::new();
    let mut order = Vec::new();
    for (uri, wish) in jobs {
        let e = all.entry(uri).or_insert_with(|| {
            order.push(uri);
            (false, true)
        });
        e.0 |= wish == FileCreate::Never;
        e.1 &= wish == FileCreate::Empty;
    }
    order
        .into_iter()
        .filter_map(|u| match all[u] {
            (true, _) => Some((u.to_string(), FileCreate::Never)),
            (false, true) => Some((u.to_string(), FileCreate::Empty)),
            _ => None,
        })
        .collect()
}

/// Marks the targets of those files (every target of a file, as a file opened both
/// O_DIRECT and buffered has one target per way).
pub(super) fn mark(targets: &mut [TargetSpec], files: &[(String, FileCreate)]) {
    for t in targets {
        if let Some((_, c)) = files.iter().find(|(f, _)| *f == t.uri) {
            if FileCreate::applies_to(&t.uri) {
                t.create = *c;
            }
        }
    }
}

/// Marks the targets whose missing directories the run makes, as fio does: a local
/// file outside `/dev` (nothing is made there) or a file set.
pub(super) fn mark_dirs(targets: &mut [TargetSpec]) {
    for t in targets {
        let local = FileCreate::applies_to(&t.uri) && !t.uri.starts_with("/dev/");
        t.create_dirs = local || t.uri.starts_with("files:");
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
        use FileCreate::*;
        let files = settle([("/a", Empty), ("/b", Empty), ("/a", Data), ("/c", Empty)]);
        assert_eq!(
            files,
            vec![("/b".to_string(), Empty), ("/c".to_string(), Empty)]
        );
        // One job that forbids creating a file decides for it.
        let files = settle([("/a", Empty), ("/a", Never), ("/b", Data)]);
        assert_eq!(files, vec![("/a".to_string(), Never)]);
    }

    /// allow_file_create=0 (fio's guard against a mistyped device becoming a file):
    /// the target is never created; create_on_open beside it changes nothing.
    #[test]
    fn allow_file_create_0_makes_the_target_never_created() {
        let t = parse(
            "[global]\nallow_file_create=0\n[a]\nfilename=/tmp/nvme\nsize=1m\n\
             create_on_open=1\n[b]\nfilename=/tmp/other\nsize=1m\nallow_file_create=1\n",
        );
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let create: Vec<FileCreate> = t.plan.targets.iter().map(|t| t.create).collect();
        assert_eq!(create, [FileCreate::Never, FileCreate::Data]);
    }
}
