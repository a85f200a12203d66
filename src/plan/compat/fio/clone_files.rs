//! fio clones with files of their own: a job without `filename` whose file name
//! holds the clone's number (`$jobnum`, as fio's default `$jobname.$jobnum.$filenum`
//! does) gives each of its `numjobs` clones its own file, `DIR/JOB.N.0`. A workload
//! has one target, so such a job becomes one workload per clone, each one stream at
//! the job's depth on its clone's file, with the clone's own rate, region and passes:
//! what fio runs, clone by clone (and each clone's figures are its workload's, as
//! fio reports clones without `group_reporting`). The trade-off: a plan of `numjobs`
//! workloads and targets where the job was one, so only jobs whose clones really
//! differ in their files are split; clones on one shared file stay streams of one
//! workload.

use super::op_engines::{first_file_of, FIO_NAME_FORMAT};
use super::{GroupStart, Job, JobCx};
use crate::plan::model::Rate;

impl JobCx<'_> {
    /// The job's file name format: `filename_format`, else fio's default.
    pub(super) fn file_name_format(&self) -> &str {
        match self.o.map.get("filename_format") {
            Some((Some(v), _, _)) => v.as_str(),
            _ => FIO_NAME_FORMAT,
        }
    }

    /// Whether fio gives each clone its own file when the job names none: the name
    /// format holds the clone's number. Without it the clones share one file.
    pub(super) fn clones_own_files(&self) -> bool {
        self.file_name_format().contains("$jobnum")
    }

    /// Each clone's file when the job's file name holds the clone's number and it has
    /// more than one clone: `dir/NAME` with `$jobnum` = 0, 1, …; else empty.
    pub(super) fn clone_file_uris(&self, streams: u32, dir: &str) -> Vec<String> {
        let format = self.file_name_format();
        if streams < 2 || !self.clones_own_files() {
            return Vec::new();
        }
        (0..streams)
            .map(|n| {
                format!(
                    "{dir}/{}",
                    first_file_of(format, &self.name, &n.to_string())
                )
            })
            .collect()
    }
}

/// The job as fio runs it: itself, or one job per clone when its clones have files
/// of their own (`clone_files`). Clone `n` is workload `JOB.n` on its file, one
/// stream, `1/numjobs` of the job's rate (fio's `rate_iops` is each clone's), its
/// region `n × offset_increment` further in, its target as long as that region
/// needs.
pub(super) fn per_clone(job: Job) -> Vec<Job> {
    let clones = job.clone_files.len() as u64;
    if clones < 2 {
        return vec![job];
    }
    let w = &job.workload;
    let increment = w.offset_increment_bytes;
    let spread = increment.saturating_mul(clones - 1);
    let rate = match w.rate {
        Rate::Iops(total) => Rate::Iops(total / clones as f64),
        Rate::Max => Rate::Max,
    };
    let mut out = Vec::with_capacity(job.clone_files.len());
    for (n, uri) in job.clone_files.iter().enumerate() {
        let further = increment.saturating_mul(n as u64);
        let mut clone = job.clone();
        clone.clone_files = Vec::new();
        clone.clone = Some(n as u32);
        // The first clone starts the job's run (after a stonewall: a new one); the
        // others join it, as fio starts a job's clones together.
        if n > 0 && clone.starts_group == GroupStart::AfterAll {
            clone.starts_group = GroupStart::Together;
        }
        clone.target_uri = uri.clone();
        clone.target_size = job
            .target_size
            .map(|s| s.saturating_sub(spread).saturating_add(further));
        let w = &mut clone.workload;
        w.name = format!("{}.{n}", job.name);
        w.streams = 1;
        w.rate = rate;
        w.offset_bytes = w.offset_bytes.saturating_add(further);
        w.offset_increment_bytes = 0;
        out.push(clone);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::plan::compat::fio::parse_str;
    use crate::plan::model::{Rate, SeqLayout};
    use std::path::Path;

    // Regression: clones with files of their own ran as streams on clone 0's file,
    // numjobs × the passes, at numjobs × the rate (azure-readwrite's notes).
    #[test]
    fn clones_with_files_of_their_own_are_a_workload_each() {
        let text = "[w]\ndirectory=/d\nrw=randwrite\nsize=1m\noffset=4k\n\
                    offset_increment=1m\nnumjobs=3\nrate_iops=10\nwrite_iops_log\n\
                    [r]\nrw=randread\nfilename=/d/shared\nsize=1m\nnumjobs=2\nwait_for=w\n\
                    [s]\nstonewall\ndirectory=/d\nrw=write\nsize=1m\nnumjobs=2\n";
        let t = parse_str("t.fio", text, Path::new("."), &|_| None).unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let run = &t.plan.runs[0];
        assert_eq!((run.name.as_str(), run.passes), ("w", Some(1)));
        let uri = |name: &str| {
            let t = t.plan.targets.iter().find(|t| t.name == name).unwrap();
            (t.uri.clone(), t.size_bytes)
        };
        for (n, w) in run.workloads.iter().enumerate() {
            let further = n as u64 * (1 << 20);
            assert_eq!(w.name, format!("w.{n}"));
            assert_eq!((w.streams, w.rate), (1, Rate::Iops(10.0)), "{}", w.name);
            assert_eq!(
                (w.offset_bytes, w.offset_increment_bytes),
                (4096 + further, 0)
            );
            assert_eq!(
                uri(&w.target),
                (format!("/d/w.{n}.0"), Some((1 << 20) + 4096 + further))
            );
            // Each clone's logs, numbered as fio numbers its jobs (clones count).
            let logs = w.overrides.fio_logs.as_ref().map(|l| l.job);
            assert_eq!(logs, Some(n as u32 + 1), "{}", w.name);
        }
        assert_eq!(run.workloads.len(), 3);
        // wait_for names the job, whose clones are w.0 … w.2; r's clones share a
        // file: one workload of two streams, as before.
        let r = &t.plan.runs[1].workloads[0];
        assert_eq!((r.name.as_str(), r.streams), ("r", 2));
        // After a stonewall the clones start one run together.
        let s: Vec<&str> = t.plan.runs[2]
            .workloads
            .iter()
            .map(|w| w.name.as_str())
            .collect();
        assert_eq!((t.plan.runs.len(), s), (3, vec!["s.0", "s.1"]));
        let said = |s: &str| t.plan.warnings.iter().any(|w| w.contains(s));
        assert!(
            !said("its own file") && !said("one set of logs"),
            "{:?}",
            t.plan.warnings
        );
        assert!(said("job 'r': fio's 2 clones each make 1 pass(es)"));
    }

    #[test]
    fn sequential_clones_on_one_file_each_walk_all_of_it_and_write_back_as_numjobs() {
        let text = "[s]\nfilename=/d/f\nrw=read\nsize=1m\nnumjobs=4\n";
        let t = parse_str("t.fio", text, Path::new("."), &|_| None).unwrap();
        let w = &t.plan.runs[0].workloads[0];
        assert_eq!((w.streams, w.seq_layout), (4, SeqLayout::Whole));
        assert_eq!(t.plan.runs[0].passes, Some(1));
        assert!(t.plan.warnings.is_empty(), "{:?}", t.plan.warnings);
        let fio = crate::plan::emit::to_fio(&t.plan).unwrap();
        assert!(
            fio.contains("numjobs=4\n") && !fio.contains("offset_increment"),
            "{fio}"
        );
        // In a directory, a name format without the clone's number is one file for
        // all the clones too: the same whole walks, one workload.
        let text = "[s]\ndirectory=/d\nfilename_format=shared.$filenum\nrw=read\nsize=1m\n\
                    numjobs=4\n";
        let t = parse_str("t.fio", text, Path::new("."), &|_| None).unwrap();
        let run = &t.plan.runs[0];
        assert_eq!(run.workloads.len(), 1);
        let w = &run.workloads[0];
        assert_eq!((w.streams, w.seq_layout), (4, SeqLayout::Whole));
        assert_eq!(run.passes, Some(1));
    }
}
