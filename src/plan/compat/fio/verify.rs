//! fio's verification options beyond the content ones: `verify_backlog` and
//! `verify_backlog_batch` (streams read back their completed writes during the
//! run), and `fill_device` / `fill_fs` (write until the filesystem is full).
//! `verify_write_sequence` and `verify_dump` need no translation (the option
//! table says why).

use super::JobCx;
use crate::plan::compat::CompatError;
use crate::plan::model::{DataSettings, Rate, TrimMode};
use crate::plan::overrides::{VerifyBacklog, WorkloadData, WorkloadOverrides};
use crate::plan::settings::declared::FILL_FS;
use crate::plan::settings::{Value, WorkloadSettings};

/// A new job's own settings: only its read-backs, if any (the data settings that
/// differ from the plan's are laid over them later).
pub(super) fn backlog_overrides(verify_backlog: Option<VerifyBacklog>) -> WorkloadOverrides {
    WorkloadOverrides {
        data: WorkloadData {
            verify_backlog,
            ..Default::default()
        },
        ..Default::default()
    }
}

impl JobCx<'_> {
    /// `verify_backlog=N` (with `verify_backlog_batch=M`, default N) on a job that
    /// verifies and writes. fio ignores it without verify; a rate-paced job issues
    /// on its schedule, so the read-backs are listed there.
    pub(super) fn verify_backlog(
        &mut self,
        data: &DataSettings,
        read_pct: u8,
        trim: TrimMode,
        rate: &Rate,
    ) -> Result<Option<VerifyBacklog>, CompatError> {
        let o = self.o;
        let batch = super::count_opt(o, "verify_backlog_batch")?;
        let Some((v, loc)) = o.get("verify_backlog") else {
            return Ok(None);
        };
        let every = super::count_opt(o, "verify_backlog")?.unwrap_or(0);
        if every == 0 || !data.verify || read_pct == 100 {
            // fio's default (0) or nothing verified or written: no read-back.
            if every > 0 {
                self.warnings.push(format!(
                    "job '{}': verify_backlog={v} has no effect on a job that does not \
                     both write and verify, in fio as in ioscope",
                    self.name
                ));
            }
            return Ok(None);
        }
        if !trim.is_none() {
            self.unsupported.push(
                format!("verify_backlog={v} — ioscope does not verify runs that trim"),
                loc,
            );
            return Ok(None);
        }
        if matches!(rate, Rate::Iops(_)) {
            self.unsupported.push(
                format!(
                    "verify_backlog={v} — with a rate, ioscope's streams issue on their \
                     schedule and read nothing back between writes"
                ),
                loc,
            );
            return Ok(None);
        }
        let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX).max(1);
        Ok(Some(VerifyBacklog {
            every_writes: clamp(every),
            batch_reads: clamp(batch.filter(|&b| b > 0).unwrap_or(every)),
        }))
    }

    /// `fill_device=1` (`fill_fs`): the job writes until the filesystem is full, and
    /// ENOSPC ends it cleanly. fio lays out the file of a job that only reads before
    /// reading it: listed, and the setting dropped.
    pub(super) fn fill_fits(&mut self, read_pct: u8, s: &mut WorkloadSettings) {
        if !s.flag(&FILL_FS) || read_pct < 100 {
            return;
        }
        s.set(&FILL_FS, Value::Flag(false));
        let loc = self
            .o
            .get("fill_device")
            .map_or(self.section_loc, |(_, l)| l);
        self.unsupported.push(
            "fill_device=1 — on a job that only reads, fio first fills the filesystem \
             by laying out the file; ioscope does not write for a read job",
            loc,
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::compat::fio::parse_str;
    use crate::plan::compat::Translated;
    use std::path::Path;

    fn parse(text: &str) -> Translated {
        parse_str("t.fio", text, Path::new("."), &|_| None).unwrap()
    }

    #[test]
    fn verify_backlog_is_a_read_back_every_n_writes() {
        let t = parse(
            "[a]\nfilename=/tmp/x\nsize=1m\nrw=write\nverify=crc32c\nverify_backlog=4\n\
             [b]\nstonewall\nfilename=/tmp/x\nsize=1m\nrw=randwrite\nverify=md5\n\
             verify_backlog=8\nverify_backlog_batch=2\n",
        );
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let b = |r: usize| t.plan.runs[r].workloads[0].overrides.data.verify_backlog;
        let b0 = b(0).unwrap();
        assert_eq!((b0.every_writes, b0.batch_reads), (4, 4));
        let b1 = b(1).unwrap();
        assert_eq!((b1.every_writes, b1.batch_reads), (8, 2));
    }

    #[test]
    fn verify_backlog_without_verify_or_writes_does_nothing_and_says_so() {
        let t = parse("[a]\nfilename=/tmp/x\nsize=1m\nrw=write\nverify_backlog=4\n");
        assert!(t.unsupported.is_empty());
        assert!(t.plan.runs[0].workloads[0]
            .overrides
            .data
            .verify_backlog
            .is_none());
        assert!(t
            .plan
            .warnings
            .iter()
            .any(|w| w.contains("verify_backlog=4")));
        let t = parse(
            "[a]\nfilename=/tmp/x\nsize=1m\nrw=write\nverify=crc32c\nverify_backlog=4\n\
             rate_iops=100\nrate_process=poisson\n",
        );
        assert!(
            t.unsupported[0].option.starts_with("verify_backlog=4"),
            "{:?}",
            t.unsupported
        );
    }

    #[test]
    fn fill_device_sizes_the_file_to_the_filesystem_and_reads_follow() {
        let t = parse(
            "[global]\nbs=64k\nverify=meta\n[w]\nfilename=/tmp/f\nrw=write\nfill_device=1\n\
             do_verify=0\n[r]\nstonewall\nfilename=/tmp/f\nrw=read\n",
        );
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        assert!(t.plan.targets[0].fill);
        assert_eq!(t.plan.targets[0].size_bytes, None);
        assert!(t.plan.runs[0].workloads[0]
            .settings
            .flag(&crate::plan::settings::declared::FILL_FS));
        assert!(!t.plan.runs[1].workloads[0]
            .settings
            .flag(&crate::plan::settings::declared::FILL_FS));
        // With a size, the size stays and only the end at ENOSPC is fio's.
        let t = parse("[w]\nfilename=/tmp/f\nsize=1m\nrw=write\nfill_fs=1\n");
        assert!(
            (!t.plan.targets[0].fill)
                && t.plan.runs[0].workloads[0]
                    .settings
                    .flag(&crate::plan::settings::declared::FILL_FS)
        );
        let t = parse("[r]\nfilename=/tmp/f\nsize=1m\nrw=read\nfill_device=1\n");
        assert!(t.unsupported[0].option.starts_with("fill_device=1"));
    }
}
