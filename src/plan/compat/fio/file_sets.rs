//! fio jobs spread over several files (`nrfiles`, `filename=A:B:C`) on the engines
//! that read and write bytes: they become a `files:` target read as bytes. Each file
//! is `filesize` long (else the job's `size` divided among them, in whole blocks),
//! named by `filename_format` in `directory` (or as listed); clones get files of
//! their own when the names carry `$jobnum` (each clone's working set is then its
//! own files, through `offset_increment`) and share them otherwise, as fio does.
//! `file_service_type` becomes the workload's file-service policy, `unlink` the
//! set's `unlink=1`; `openfiles` below the file count is accepted with a warning
//! (ioscope keeps every file open). A single file with `unlink=1` is a set of one.

use super::{split_filenames, JobCx, JobTarget};
use crate::plan::compat::CompatError;
use crate::plan::file_service::FileService;
use crate::plan::file_sizes::FileSizes;
use crate::plan::fileset::FileSetSpec;
use crate::plan::units::parse_size;

/// What names the files of a set.
enum Names {
    /// `filename_format` (or fio's default) in the `files:` form, `nrfiles` per clone.
    Format { name: String, per: u64 },
    /// `filename=A:B:C`: listed, shared by every clone.
    Listed(Vec<String>),
}

impl JobCx<'_> {
    /// The job's files as a `files:` target, when it has more than one (or one to
    /// remove after the run); `None` for a job on one file, whose target is built
    /// as before. `size` is the job's `size` (or `filesize`) as read by `region`.
    pub(super) fn set_target(
        &mut self,
        streams: u32,
        size: Option<u64>,
        offset: u64,
        min_bs: u64,
    ) -> Result<Option<JobTarget>, CompatError> {
        let Some(names) = self.set_names()? else {
            return Ok(None);
        };
        let o = self.o;
        let count = match &names {
            Names::Format { per, .. } => *per,
            Names::Listed(l) => l.len() as u64,
        };
        let listed = matches!(names, Names::Listed(_));
        let (file_bytes, sizes) = self.set_lengths(listed, count, size, min_bs)?;
        if offset > 0 {
            let loc = o.get("offset").map_or(self.section_loc, |(_, l)| l);
            self.unsupported.push(
                format!(
                    "offset={offset} with {count} files — fio starts the I/O this far into each \
                     file; ioscope's file set has no offset"
                ),
                loc,
            );
        }
        let unlink = self.unlink()?;
        let dir = o.get("directory").map_or(".".to_string(), |(d, _)| {
            d.trim_end_matches('/').to_string()
        });
        let dir = if dir.is_empty() { "/".into() } else { dir };
        // Files of their own per clone when the names say which clone they are for.
        let own = matches!(&names, Names::Format { name, .. } if name.contains("{clone}"));
        let clones = if own { u64::from(streams) } else { 1 };
        let spec = match names {
            Names::Format { name, per } => FileSetSpec {
                dir: dir.into(),
                count: per.saturating_mul(clones),
                per,
                name,
                file_bytes,
                list: None,
                unlink,
                tree: None,
                sizes,
                remote: None,
            },
            Names::Listed(list) => FileSetSpec {
                dir: dir.into(),
                count,
                per: count,
                name: crate::plan::fileset::DEFAULT_NAME.into(),
                file_bytes,
                list: Some(list),
                unlink,
                tree: None,
                sizes: None,
                remote: None,
            },
        };
        let uri = spec.uri();
        FileSetSpec::parse(uri.trim_start_matches("files:"))
            .map_err(|e| self.section_loc.error(format!("job '{}': {e}", self.name)))?;
        self.open_files_limit(count);
        let job_bytes = count.saturating_mul(file_bytes);
        let increment = if own && streams > 1 { job_bytes } else { 0 };
        Ok(Some(JobTarget {
            uri,
            size: Some(job_bytes),
            offset: 0,
            from_directory: true,
            increment,
            spread: increment.saturating_mul(u64::from(streams.saturating_sub(1))),
            file_service: self.file_service()?,
        }))
    }

    /// The set's names: `filename=A:B:C` (more than one), else `nrfiles` above 1
    /// named by `filename_format`; a single file with `unlink=1` is a set of one.
    fn set_names(&mut self) -> Result<Option<Names>, CompatError> {
        let o = self.o;
        let nrfiles = super::count_opt(o, "nrfiles")?.unwrap_or(1);
        let unlink = o
            .get("unlink")
            .is_some_and(|(v, _)| super::parse_bool(Some(v)) == Some(true));
        if let Some((f, loc)) = o.get("filename").filter(|(f, _)| !f.is_empty()) {
            let list = split_filenames(f);
            if list.iter().any(|n| n.starts_with("/dev/")) {
                // Devices are not files of a set; the one-file path lists the rest.
                return Ok(None);
            }
            if list.len() > 1 || unlink {
                if nrfiles > 1 {
                    self.warnings.push(format!(
                        "job '{}': filename names the files, so nrfiles={nrfiles} is ignored \
                         (as fio does)",
                        self.name
                    ));
                }
                if list.iter().any(|n| n.contains('&')) {
                    return Err(loc.error(format!(
                        "filename={f}: a name with '&' cannot be part of a files: target"
                    )));
                }
                return Ok(Some(Names::Listed(list)));
            }
            return Ok(None);
        }
        if nrfiles <= 1 && !unlink {
            return Ok(None);
        }
        let (fmt, loc) = match o.map.get("filename_format") {
            Some((Some(fmt), loc, _)) => (fmt.clone(), loc),
            _ => (
                super::op_engines::FIO_NAME_FORMAT.to_string(),
                self.section_loc,
            ),
        };
        let name = self.name_format(&fmt, loc)?;
        Ok(Some(Names::Format { name, per: nrfiles }))
    }

    /// Each file's stride, and the lengths drawn from a `filesize` range when the
    /// files are named by a format (named one by one, they take one length: listed).
    fn set_lengths(
        &mut self,
        listed: bool,
        count: u64,
        size: Option<u64>,
        min_bs: u64,
    ) -> Result<(u64, Option<FileSizes>), CompatError> {
        match self.file_size_range(count, min_bs)? {
            Some(z) if !listed => Ok((z.largest(), Some(z))),
            Some(z) => {
                let loc = self.o.get("filesize").map_or(self.section_loc, |(_, l)| l);
                self.unsupported.push(
                    format!(
                        "filesize={} — lengths drawn for files named one by one; each is {}",
                        z.text(),
                        z.largest()
                    ),
                    loc,
                );
                Ok((z.largest(), None))
            }
            None => Ok((self.set_file_bytes(count, size, min_bs)?, None)),
        }
    }

    /// `filesize=LOW-HIGH` (or `LOW:HIGH`): each file's length drawn uniformly in the
    /// range, in whole blocks of the smallest size, as fio draws them (`None`: no
    /// range). With `size=` as well, fio does that much I/O over the files; ioscope one
    /// pass over them: listed.
    fn file_size_range(
        &mut self,
        count: u64,
        min_bs: u64,
    ) -> Result<Option<FileSizes>, CompatError> {
        let o = self.o;
        let Some((v, loc)) = o.get("filesize") else {
            return Ok(None);
        };
        let Some((low, high)) = v
            .trim()
            .split_once(['-', ':'])
            .filter(|(l, _)| !l.is_empty())
        else {
            return Ok(None);
        };
        let text = format!("{}-{}/{}", low.trim(), high.trim(), min_bs.max(1));
        let sizes = FileSizes::parse(&text, crate::plan::compat::base_run().seed)
            .map_err(|e| loc.error(format!("filesize={v}: {e} (the unit is the smallest bs)")))?;
        if let Some((s, sloc)) = o.get("size") {
            self.unsupported.push(
                format!(
                    "size={s} with filesize={v} — fio does size bytes of I/O over its files; \
                     ioscope does one pass over the {count} files"
                ),
                sloc,
            );
        }
        self.warnings.push(format!(
            "job '{}': filesize={v}: each of the {count} files gets a length drawn uniformly \
             from {} up to {} in whole blocks of {min_bs} bytes, as fio draws them; the draws \
             are ioscope's own (seeded), not fio's",
            self.name,
            low.trim(),
            high.trim()
        ));
        Ok(Some(sizes))
    }

    /// Each file's length: `filesize`, else `size` divided among the files in whole
    /// blocks of the smallest size.
    fn set_file_bytes(
        &mut self,
        count: u64,
        size: Option<u64>,
        min_bs: u64,
    ) -> Result<u64, CompatError> {
        let o = self.o;
        if let Some((v, loc)) = o.get("filesize") {
            let b = parse_size(v).map_err(|e| loc.error(format!("filesize={v}: {e}")))?;
            if let Some((s, sloc)) = o.get("size") {
                let files_bytes = b.saturating_mul(count);
                // A time-based job loops over its files until its runtime: a size
                // beyond what they hold only says when fio starts its next loop.
                let looped = o.get("time_based").is_some_and(|(v, _)| v.trim() != "0")
                    && o.get("runtime").is_some();
                let total = parse_size(s).ok();
                if looped && total.is_some_and(|t| t >= files_bytes) {
                    self.warnings.push(format!(
                        "job '{}': size={s} is more than its {count} files of filesize={v} \
                         hold; the job is time-based, so it goes over them again until its \
                         runtime, as fio does",
                        self.name
                    ));
                } else if total != Some(files_bytes) {
                    self.unsupported.push(
                        format!(
                            "size={s} with filesize={v} — fio does size bytes of I/O over its \
                             files; ioscope does one pass over the {count} files of filesize"
                        ),
                        sloc,
                    );
                }
            }
            return Ok(b);
        }
        if let Some((v, loc)) = o.get("size").filter(|(v, _)| v.trim().ends_with('%')) {
            return Err(loc.error(format!(
                "size={v}: fio takes the percentage of each of the job's {count} files; \
                 ioscope's file sets take each file's length from size= or filesize= in \
                 bytes"
            )));
        }
        let Some(total) = size else {
            return Err(self.section_loc.error(format!(
                "job '{}': {count} files need size= or filesize= (each file's length)",
                self.name
            )));
        };
        let unit = min_bs.max(1);
        let each = total / count / unit * unit;
        if each == 0 {
            return Err(self.section_loc.error(format!(
                "job '{}': size={total} divided among {count} files is less than one block",
                self.name
            )));
        }
        if each.saturating_mul(count) != total {
            self.warnings.push(format!(
                "job '{}': size={total} over {count} files: each file is {each} bytes (fio \
                 makes the first files a block larger to use the rest)",
                self.name
            ));
        }
        Ok(each)
    }

    /// `file_service_type` in the plan's words.
    fn file_service(&mut self) -> Result<FileService, CompatError> {
        match self.o.get("file_service_type") {
            None => Ok(FileService::default()),
            Some((v, loc)) => {
                FileService::parse(v).map_err(|e| loc.error(format!("file_service_type={v}: {e}")))
            }
        }
    }

    /// `unlink` (and `unlink_each_loop`, which is not reproduced).
    fn unlink(&mut self) -> Result<bool, CompatError> {
        let on = self.o.flag("unlink")?;
        if on {
            self.warnings.push(format!(
                "job '{}': unlink=1 removes the files this run created; ioscope never removes \
                 a file that was there before the run (fio removes the job's files either way)",
                self.name
            ));
        }
        Ok(on)
    }

    /// `openfiles` below the file count: fio opens at most that many at once,
    /// ioscope keeps them all open.
    fn open_files_limit(&mut self, count: u64) {
        if let Some((v, _)) = self.o.get("openfiles") {
            if v.trim().parse::<u64>().is_ok_and(|n| n < count) {
                self.warnings.push(format!(
                    "job '{}': openfiles={v}: ioscope keeps all {count} files open for the \
                     whole run (fio opens at most {v} at once); only the number of open \
                     descriptors differs",
                    self.name
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::compat::fio::parse_str;
    use std::path::Path;

    /// The size= drop of a job over 4 files of 1 MiB, and its notes.
    fn size_over_files(body: &str) -> (Vec<String>, Vec<String>) {
        let text = format!("[j]\nrw=randread\ndirectory=/tmp\nnrfiles=4\nfilesize=1m\n{body}");
        let t = parse_str("t.fio", &text, Path::new("."), &|_| None).unwrap();
        let dropped = t.unsupported.iter().map(|u| u.option.clone()).collect();
        (dropped, t.plan.warnings)
    }

    #[test]
    fn a_size_beyond_the_files_drops_only_when_it_bounds_the_job() {
        // Time-based: fio goes over the files again until the runtime; said, not dropped.
        let (dropped, notes) = size_over_files("size=100g\ntime_based=1\nruntime=10\n");
        assert!(dropped.is_empty(), "{dropped:?}");
        assert!(
            notes.iter().any(|n| n.contains("size=100g is more than")),
            "{notes:?}"
        );
        // Not time-based, or a size short of the files: fio's amount differs; dropped.
        for body in ["size=100g\n", "size=2m\ntime_based=1\nruntime=10\n"] {
            let (dropped, _) = size_over_files(body);
            assert!(
                dropped.iter().any(|d| d.contains("with filesize=1m")),
                "{body}: {dropped:?}"
            );
        }
        // Exactly what the files hold: nothing to say.
        let (dropped, notes) = size_over_files("size=4m\n");
        assert!(dropped.is_empty() && !notes.iter().any(|n| n.contains("size=")));
    }
}
