//! fio's `percentage_random=R[,W[,T]]` as the declared `random_pct`. fio draws, for
//! each I/O of a random job, whether it is random (with that probability) or
//! continues from where the file's last I/O of the same direction ended
//! (`get_next_block`, `should_do_random`). ioscope's stream continues from its
//! previous I/O of either direction, and takes one percentage for both: the option
//! table reads the reads' value, and this fits it to the job — the writes' value on
//! a job that only writes, a listing when a mix gives two, a warning for the cursor
//! a mix shares, nothing on a sequential job (fio ignores it there).

use super::JobCx;
use crate::plan::compat::CompatError;
use crate::plan::model::AccessPattern;
use crate::plan::settings::declared::RANDOM_PCT;
use crate::plan::settings::WorkloadSettings;

impl JobCx<'_> {
    /// Fits the `random_pct` the option table read to the job's directions.
    pub(super) fn random_fits(
        &mut self,
        read_pct: u8,
        pattern: &AccessPattern,
        s: &mut WorkloadSettings,
    ) -> Result<(), CompatError> {
        let Some((v, loc)) = self.o.get("percentage_random") else {
            return Ok(());
        };
        if !matches!(pattern, AccessPattern::Random) {
            // fio asks should_do_random only of a random job.
            s.set(&RANDOM_PCT, RANDOM_PCT.default);
            return Ok(());
        }
        let parts: Vec<&str> = v.split(',').map(str::trim).collect();
        let given = |i: usize| parts.get(i).copied().filter(|p| !p.is_empty());
        let reads = given(0).unwrap_or("100");
        let writes = given(1).unwrap_or(reads);
        let value = |t: &str| {
            RANDOM_PCT
                .parse_text(t)
                .map_err(|e| super::opt_err(loc, "percentage_random", v, &e))
        };
        let (r, w) = (value(reads)?, value(writes)?);
        if read_pct == 0 {
            s.set(&RANDOM_PCT, w);
        } else if read_pct < 100 && r != w {
            self.unsupported.push(
                format!(
                    "percentage_random={v} — one percentage per direction; ioscope's \
                     applies to reads and writes alike (the reads' {reads} used)"
                ),
                loc,
            );
        }
        if read_pct > 0 && read_pct < 100 && s.ratio(&RANDOM_PCT) < 100.0 {
            self.warnings.push(format!(
                "job '{}': percentage_random on a read/write mix — fio continues a \
                 sequential read from the last read and a write from the last write; \
                 ioscope's streams continue from their previous I/O of either kind",
                self.name
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::compat::fio::parse_str;
    use crate::plan::settings::declared::RANDOM_PCT;
    use std::path::Path;

    fn random_pct(job: &str) -> (f64, usize, usize) {
        let text = format!("[j]\nfilename=/tmp/x\nsize=1m\n{job}");
        let t = parse_str("t.fio", &text, Path::new("."), &|_| None).expect("translates");
        let w = &t.plan.runs[0].workloads[0];
        (
            w.settings.ratio(&RANDOM_PCT),
            t.unsupported.len(),
            t.plan.warnings.len(),
        )
    }

    #[test]
    fn percentage_random_is_the_share_of_random_ios_of_a_random_job() {
        assert_eq!(
            random_pct("rw=randread\npercentage_random=50"),
            (50.0, 0, 0)
        );
        assert_eq!(random_pct("rw=randread\npercentage_random=0"), (0.0, 0, 0));
        assert_eq!(
            random_pct("rw=randread\npercentage_random=100"),
            (100.0, 0, 0)
        );
        // The writes' value on a job that only writes.
        assert_eq!(
            random_pct("rw=randwrite\npercentage_random=90,20"),
            (20.0, 0, 0)
        );
        // fio asks a sequential job nothing.
        assert_eq!(random_pct("rw=read\npercentage_random=50"), (100.0, 0, 0));
    }

    #[test]
    fn a_mix_lists_two_percentages_and_warns_of_the_shared_cursor() {
        assert_eq!(
            random_pct("rw=randrw\npercentage_random=50,20"),
            (50.0, 1, 1)
        );
        assert_eq!(random_pct("rw=randrw\npercentage_random=50"), (50.0, 0, 1));
        let text = "[j]\nfilename=/tmp/x\nsize=1m\nrw=randread\npercentage_random=150\n";
        let e = parse_str("t.fio", text, Path::new("."), &|_| None).unwrap_err();
        assert!(e.to_string().contains("percentage_random"), "{e}");
    }
}
