//! fio's `size=N%`: the job's region is N % of its file or device, wherever the
//! size is known only once the target is open. fio (`setup_files`) takes N % of the
//! file's whole size, caps it at what lies past the job's offset and rounds it down
//! to the job's smallest block size; ioscope's `range_to_pct` narrows the working
//! set — the target past its offset — to N % of itself, rounded down to the largest
//! block size. The two agree on one file from offset 0 with one block size; an
//! offset (`offset`, `offset_increment`) or `filesize` makes them differ, and a job
//! over several files takes its N % of each file, not of the set: those are refused,
//! naming the option. Several block sizes round the end differently: said.
//! `size=100%` (and fio's `0%`, which it reads as no size) is the whole target.

use super::{opt_err, JobCx, JobTarget};
use crate::plan::compat::CompatError;
use crate::plan::model::BlockSizes;

impl JobCx<'_> {
    /// `size=N%`: its N, when `size` is a percentage (the rest of `size` is read by
    /// `region`). fio takes whole percentages from 0 to 100.
    pub(super) fn size_percent(&self) -> Result<Option<u64>, CompatError> {
        let Some((v, loc)) = self.o.get("size") else {
            return Ok(None);
        };
        let Some(n) = v.trim().strip_suffix('%') else {
            return Ok(None);
        };
        n.trim()
            .parse::<u64>()
            .ok()
            .filter(|&n| n <= 100)
            .map(Some)
            .ok_or_else(|| opt_err(loc, "size", v, &"expected a whole percentage, 0 to 100"))
    }

    /// Fits `size=N%` to the job's target: `range_to_pct` (kept in
    /// [`JobCx::range_to_pct`]) on one file or device read as bytes from offset 0;
    /// a located refusal where fio's N % means another region.
    pub(super) fn size_percent_fits(
        &mut self,
        target: &JobTarget,
        bytes: bool,
        bs: &BlockSizes,
    ) -> Result<(), CompatError> {
        let Some(n) = self.size_percent()? else {
            return Ok(());
        };
        let (v, loc) = self.o.get("size").expect("size= was read");
        if n == 0 || n == 100 {
            if n == 0 {
                self.warnings.push(format!(
                    "job '{}': size=0% — fio reads it as no size: the whole target",
                    self.name
                ));
            }
            return Ok(());
        }
        let refuse = |why: &str| loc.error(format!("size={v}: {why}"));
        if !bytes {
            return Err(refuse(
                "a percentage of a file's size, which this job's engine does not read",
            ));
        }
        if target.uri.starts_with("files:") {
            return Err(refuse(
                "fio takes the percentage of each of the job's files; ioscope's file sets \
                 take each file's length from size= or filesize= in bytes",
            ));
        }
        if target.offset > 0 || target.increment > 0 {
            return Err(refuse(
                "with offset= or offset_increment=, fio takes the percentage of the whole \
                 file and ioscope of what lies past the offset; give size= in bytes",
            ));
        }
        if self.o.has("filesize") {
            return Err(refuse(
                "with filesize=, fio takes the percentage of filesize and makes the file \
                 that long; give size= in bytes",
            ));
        }
        if bs.min_bytes() != bs.max_bytes() {
            self.warnings.push(format!(
                "job '{}': size={v} — the region's end is rounded down to the largest \
                 block size ({} bytes); fio rounds it to the smallest ({} bytes)",
                self.name,
                bs.max_bytes(),
                bs.min_bytes()
            ));
        }
        self.range_to_pct = Some(n as f64);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::compat::fio::parse_str;
    use crate::plan::compat::CompatError;
    use crate::plan::compat::Translated;
    use crate::plan::settings::declared::RANGE_TO_PCT;
    use std::path::Path;

    fn job(body: &str) -> Result<Translated, CompatError> {
        let text = format!("[j]\nrw=randread\nbs=4k\n{body}");
        parse_str("t.fio", &text, Path::new("."), &|_| None)
    }

    #[test]
    fn a_percentage_of_one_file_narrows_the_working_set() {
        let t = job("filename=/dev/sdz\nsize=40%\n").unwrap();
        assert!(t.unsupported.is_empty(), "{:?}", t.unsupported);
        let w = &t.plan.runs[0].workloads[0];
        assert_eq!(w.settings.ratio(&RANGE_TO_PCT), 40.0);
        assert_eq!(
            w.size_bytes, None,
            "the length is known once the device is open"
        );
        assert!(t.plan.warnings.is_empty(), "{:?}", t.plan.warnings);
        // The whole target: 100 %, and 0 %, which fio reads as no size (said).
        for (v, said) in [("100%", 0), ("0%", 1)] {
            let t = job(&format!("filename=/dev/sdz\nsize={v}\n")).unwrap();
            let w = &t.plan.runs[0].workloads[0];
            assert_eq!(w.settings.ratio(&RANGE_TO_PCT), 100.0, "{v}");
            assert_eq!(t.plan.warnings.len(), said, "{v}");
        }
        // Several block sizes round the end otherwise: said.
        let t = job("filename=/dev/sdz\nsize=40%\nbsrange=4k-64k\nnorandommap\n").unwrap();
        assert_eq!(t.plan.warnings.len(), 1, "{:?}", t.plan.warnings);
    }

    #[test]
    fn a_percentage_meaning_another_region_is_refused_naming_it() {
        for (body, why) in [
            ("filename=/dev/sdz\nsize=40%\noffset=1m\n", "offset"),
            (
                "filename=/dev/sdz\nsize=40%\noffset_increment=1m\nnumjobs=2\n",
                "offset",
            ),
            ("filename=/tmp/a\nsize=40%\nfilesize=8m\n", "filesize"),
            (
                "filename=/tmp/a:/tmp/b\nsize=40%\n",
                "each of the job's 2 files",
            ),
            ("filename=/dev/sdz\nsize=101%\n", "0 to 100"),
            ("filename=/dev/sdz\nsize=4.5%\n", "0 to 100"),
        ] {
            let e = job(body).unwrap_err().to_string();
            assert!(
                e.contains("t.fio:") && e.contains("size=") && e.contains(why),
                "{body}: {e}"
            );
        }
    }
}
