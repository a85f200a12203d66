//! fio jobs on the engines whose I/O is not a read or write of bytes: the file
//! operations (`filecreate`, `filestat`, `filedelete`, `dircreate`, `dirstat`,
//! `dirdelete`), `cpuio`, `falloc` and `ftruncate`. Here their options become the
//! plan's: `nrfiles` × `numjobs` files named by `filename_format` in `directory` make
//! a `files:` target, `stat_type` and `cpuload`/`cpuchunks`/`cpumode` the run's engine
//! options; and the file options that mean something only to these engines
//! (`openfiles`, `filename_format`) are listed as unsupported for any other engine,
//! as before (`create_on_open` there is `file_create`'s).

use super::{count_opt, JobCx, JobTarget, JobTiming};
use crate::plan::compat::CompatError;
use crate::plan::engine_kind::FileOp;
use crate::plan::engine_opts::{
    CpuBurn, CpuMode, EngineOptions, ExecSpec, StatCall, DEFAULT_CPU_CHUNK_NS,
    DEFAULT_EXEC_GRACE_NS,
};
use crate::plan::fileset::FileSetSpec;
use crate::plan::model::{AccessPattern, EngineKind, FileCreate, Op};
use crate::plan::units::parse_size;

/// fio's default `filename_format`.
pub(super) const FIO_NAME_FORMAT: &str = "$jobname.$jobnum.$filenum";

/// The name fio gives the first file of `clone` of job `job` by `format` (its
/// `filename_format`): `$clientuid` is empty on one host, `$filenum` 0.
pub(super) fn first_file_of(format: &str, job: &str, clone: &str) -> String {
    format
        .replace("$jobname", job)
        .replace("$clientuid", "")
        .replace("$jobnum", clone)
        .replace("$filenum", "0")
}

impl JobCx<'_> {
    /// `stat_type` (filestat, dirstat) and `cpuload`, `cpuchunks`, `cpumode`,
    /// `exit_on_io_done` (cpuio); each listed as unsupported with another engine.
    pub(super) fn engine_options(
        &mut self,
        engine: EngineKind,
    ) -> Result<EngineOptions, CompatError> {
        let o = self.o;
        let mut opts = EngineOptions::default();
        if let Some((v, loc)) = o.get("stat_type") {
            match StatCall::parse(v) {
                Some(s) if engine.desc().stat_call => opts.stat = s,
                Some(_) => self.unsupported.push(
                    format!("stat_type={v} — only used with ioengine=filestat or dirstat"),
                    loc,
                ),
                None => {
                    return Err(loc.error(format!("stat_type={v}: expected stat, lstat or statx")))
                }
            }
        }
        let load = o.get("cpuload");
        let chunk_us = count_opt(o, "cpuchunks")?;
        let mode = match o.get("cpumode") {
            Some((v, loc)) => Some(
                CpuMode::parse(v)
                    .ok_or_else(|| loc.error(format!("cpumode={v}: expected noop or qsort")))?,
            ),
            None => None,
        };
        if let Some((v, loc)) = o.get("exit_on_io_done") {
            if super::parse_bool(Some(v)) != Some(false) {
                self.unsupported.push(
                    format!(
                        "exit_on_io_done={v} — a cpuio job ending with the I/O jobs beside it; \
                         ioscope runs one engine per run, so it has none beside it"
                    ),
                    loc,
                );
            }
        }
        opts.exec = self.exec_spec(engine)?;
        opts.defrag = self.defrag_spec(engine)?;
        if engine != EngineKind::Cpuio {
            self.only_with("ioengine=cpuio", &["cpuload", "cpuchunks", "cpumode"]);
            return Ok(opts);
        }
        let Some((v, loc)) = load else {
            return Err(self.section_loc.error(format!(
                "job '{}': ioengine=cpuio needs cpuload= (1..100)",
                self.name
            )));
        };
        // fio caps the load at 100.
        let load_pct = v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|&p| p >= 1)
            .map(|p| p.min(100) as u8)
            .ok_or_else(|| {
                loc.error(format!("cpuload={v}: expected a percentage from 1 to 100"))
            })?;
        opts.cpu = Some(CpuBurn {
            load_pct,
            chunk_ns: chunk_us.map_or(DEFAULT_CPU_CHUNK_NS, |us| us.saturating_mul(1000)),
            mode: mode.unwrap_or_default(),
        });
        self.warnings.push(format!(
            "job '{}': ioengine=cpuio burns each chunk in the thread's own CPU time \
             (fio spins on the wall clock){}",
            self.name,
            if mode == Some(CpuMode::Qsort) {
                "; cpumode=qsort sorts until the chunk is spent (fio sorts once per I/O and \
                 adapts the idle time)"
            } else {
                ""
            }
        ));
        Ok(opts)
    }

    /// Whether the job's `key` is written in its own section (not inherited from a
    /// [global] one before it).
    fn in_own_section(&self, key: &str) -> bool {
        use crate::plan::compat::Loc;
        match (self.o.get(key), &self.section_loc) {
            (
                Some((_, Loc::Line { source, line })),
                Loc::Line {
                    source: s,
                    line: at,
                },
            ) => source != s || line > at,
            (Some(_), _) => true,
            (None, _) => false,
        }
    }

    /// `donorname` (joined to `directory`, as fio does) and `inplace` of an
    /// e4defrag job; fio refuses such a job without a donor. Given to a job of
    /// another engine they are listed, unless the job inherits them from a [global]
    /// section whose `ioengine` it replaced.
    fn defrag_spec(
        &mut self,
        engine: EngineKind,
    ) -> Result<Option<crate::plan::engine_opts::DefragSpec>, CompatError> {
        let o = self.o;
        if engine != EngineKind::E4defrag {
            // From a [global] section whose engine this job replaced in its own: fio
            // gives them to that engine, and this job's never reads them.
            let replaced = self.in_own_section("ioengine");
            for key in ["donorname", "inplace"] {
                if let Some((v, l)) = o.get(key) {
                    if !replaced || self.in_own_section(key) {
                        self.unsupported
                            .push(format!("{key}={v} — only used with ioengine=e4defrag"), l);
                    }
                }
            }
            return Ok(None);
        }
        let Some((donor, _)) = o.get("donorname").filter(|(d, _)| !d.trim().is_empty()) else {
            return Err(self.section_loc.error(format!(
                "job '{}': ioengine=e4defrag needs donorname=",
                self.name
            )));
        };
        let inplace = match o.get("inplace") {
            Some((v, l)) => match v.trim() {
                "0" => false,
                "1" => true,
                _ => return Err(l.error(format!("inplace={v}: expected 0 or 1"))),
            },
            None => false,
        };
        let donor = match o.get("directory") {
            Some((d, _)) if !d.is_empty() => {
                format!("{}/{}", d.trim_end_matches('/'), donor.trim())
            }
            _ => donor.trim().to_string(),
        };
        Ok(Some(crate::plan::engine_opts::DefragSpec {
            donor,
            inplace,
        }))
    }

    /// `program`, `arguments` (`%r` → the runtime in seconds, `%n` → the job's name;
    /// split at spaces, as fio does), `grace_time` (s) and `std_redirect` (output to
    /// JOBNAME.stdout/.stderr, fio's default) of an exec job.
    fn exec_spec(&mut self, engine: EngineKind) -> Result<Option<ExecSpec>, CompatError> {
        let o = self.o;
        let keys = ["program", "arguments", "grace_time", "std_redirect"];
        let program = o.get("program");
        let args = o.get("arguments");
        let grace = count_opt_zero(o, "grace_time")?;
        let redirect = o.flag("std_redirect")?;
        if engine != EngineKind::Exec {
            self.only_with("ioengine=exec", &keys);
            return Ok(None);
        }
        let Some((program, _)) = program.filter(|(p, _)| !p.trim().is_empty()) else {
            return Err(self
                .section_loc
                .error(format!("job '{}': ioengine=exec needs program=", self.name)));
        };
        let runtime_s = super::dur_opt(o, "runtime", false)?.map_or(0, |ns| ns / 1_000_000_000);
        let args = args.map_or(Vec::new(), |(a, _)| {
            a.replace("%r", &runtime_s.to_string())
                .replace("%n", &self.name)
                .split(' ')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        });
        Ok(Some(ExecSpec {
            program: program.trim().to_string(),
            args,
            grace_ns: grace.map_or(DEFAULT_EXEC_GRACE_NS, |s| s.saturating_mul(1_000_000_000)),
            output: (redirect || !o.has("std_redirect")).then(|| self.name.clone()),
        }))
    }

    /// An exec job runs for its runtime, whatever its size or loops.
    pub(super) fn exec_timing(
        &mut self,
        engine: EngineKind,
        timing: &mut JobTiming,
    ) -> Result<(), CompatError> {
        if engine != EngineKind::Exec {
            return Ok(());
        }
        if timing.duration_ns.is_none() {
            return Err(self.section_loc.error(format!(
                "job '{}': ioengine=exec needs runtime= (how long the program runs)",
                self.name
            )));
        }
        timing.passes = None;
        Ok(())
    }

    /// `openfiles`, `filename_format` and `create_on_open`: read for every job; with
    /// an engine other than the file operations, listed as unsupported unless they
    /// ask for what ioscope does anyway.
    /// Read beside the table's own refusals, so they are listed in the same order.
    /// Returns how the job would have its file created (`create_on_open`,
    /// `allow_file_create`, see `file_create`).
    pub(super) fn file_options(&mut self) -> Result<FileCreate, CompatError> {
        let o = self.o;
        let file_op = o
            .get("ioengine")
            .and_then(|(e, _)| EngineKind::parse(e))
            .is_some_and(EngineKind::is_file_op);
        // A job over several files (a file set, `file_sets`) names them and opens them
        // as these say; one file needs none of them.
        let several = super::count_opt(o, "nrfiles")?.is_some_and(|n| n > 1)
            || o.get("filename")
                .is_some_and(|(f, _)| super::split_filenames(f).len() > 1)
            || o.flag("unlink")?;
        if let Some((v, loc)) = o.get("file_service_type") {
            crate::plan::file_service::FileService::parse(v)
                .map_err(|e| loc.error(format!("file_service_type={v}: {e}")))?;
        }
        // fio caps openfiles at the job's file count: with one file it changes
        // nothing, and a set warns below its count (`file_sets`).
        o.ask("openfiles");
        o.ask("filename_format");
        if let Some((Some(v), _, _)) = o.map.get("filename_format") {
            let named = o.get("filename").is_some_and(|(f, _)| !f.is_empty());
            if !file_op && !several && named && v != FIO_NAME_FORMAT {
                self.warnings.push(format!(
                    "job '{}': filename names its file, so filename_format={v} is ignored \
                     (as fio does)",
                    self.name
                ));
            }
        }
        self.file_creation(file_op)
    }

    /// fio's `filename_format` (its default `$jobname.$jobnum.$filenum` when not
    /// given) for clone 0's file 0: (the name, the format, where it was given, and
    /// whether it is other than fio's default). `$clientuid` is empty outside fio's
    /// client/server mode.
    pub(super) fn first_file_name(
        &self,
    ) -> Result<(String, String, &super::Loc, bool), CompatError> {
        // Read raw: `get` hides values holding `$` (fio's unexpanded variables).
        self.o.ask("filename_format");
        let (fmt, loc) = match self.o.map.get("filename_format") {
            Some((Some(f), l, _)) => (f.to_string(), l),
            _ => (FIO_NAME_FORMAT.to_string(), self.section_loc),
        };
        let with = |job: &str| first_file_of(&fmt, job, "0");
        // The job's own name may hold a '$' (fio does not substitute section names).
        let name = with(&self.name);
        if with("").contains('$') {
            return Err(loc.error(format!(
                "filename_format={fmt}: ioscope knows $jobname, $clientuid, $jobnum and $filenum"
            )));
        }
        let named = fmt != FIO_NAME_FORMAT;
        Ok((name, fmt, loc, named))
    }

    /// The name of a job's one file when `filename` gives none. The directories it
    /// holds are made when the run opens it, as fio makes them (the target's
    /// `create_dirs`).
    pub(super) fn single_file_name(&mut self) -> Result<String, CompatError> {
        let (name, _, _, _) = self.first_file_name()?;
        Ok(name)
    }

    /// The target of a job on a file-operation engine (a `files:` set) or on cpuio
    /// (`null:`, it touches nothing); `None` for any other engine.
    pub(super) fn op_engine_target(
        &mut self,
        engine: EngineKind,
        streams: u32,
        bs: u64,
    ) -> Result<Option<JobTarget>, CompatError> {
        if engine.desc().paces_itself {
            let size = match self.o.get("size") {
                Some((v, loc)) => parse_size(v).map_err(|e| loc.error(format!("size={v}: {e}")))?,
                None => bs,
            };
            return Ok(Some(JobTarget::whole(format!("null:{size}"), true)));
        }
        if engine == EngineKind::PageFault {
            return self.page_fault_target(bs).map(Some);
        }
        if !engine.is_file_op() {
            return Ok(None);
        }
        let o = self.o;
        let nrfiles = count_opt(o, "nrfiles")?.unwrap_or(1);
        let dir = o
            .get("directory")
            .map_or(".".to_string(), |(d, _)| d.to_string());
        // What fio lays out before a stat or delete run; the other engines make
        // their files or directories themselves.
        let laid_out = matches!(engine, EngineKind::FileStat | EngineKind::FileDelete);
        let file_bytes = match o.get("filesize").or_else(|| o.get("size")) {
            Some((v, loc)) if laid_out => {
                parse_size(v).map_err(|e| loc.error(format!("filesize={v}: {e}")))?
            }
            _ => 0,
        };
        let name = match (o.get("filename"), o.map.get("filename_format")) {
            (Some((f, loc)), _) if !f.is_empty() => {
                if nrfiles > 1 || streams > 1 || f.contains(':') {
                    return Err(loc.error(format!(
                        "filename={f} with ioengine={}: name the files with nrfiles= and \
                         filename_format= (one name per file), not filename=",
                        engine.name()
                    )));
                }
                f.to_string()
            }
            (_, Some((Some(fmt), loc, _))) => self.name_format(fmt, loc)?,
            _ => self.name_format(FIO_NAME_FORMAT, self.section_loc)?,
        };
        let count = nrfiles.saturating_mul(streams as u64);
        let spec = FileSetSpec {
            dir: dir.into(),
            count,
            per: nrfiles,
            name,
            file_bytes,
            list: None,
            unlink: false,
            tree: None,
            sizes: None,
            remote: None,
        };
        // The URI is read back when the target opens; check it now, at the job.
        let uri = spec.uri();
        FileSetSpec::parse(uri.trim_start_matches("files:"))
            .map_err(|e| self.section_loc.error(format!("job '{}': {e}", self.name)))?;
        Ok(Some(JobTarget::whole(uri, true)))
    }

    /// page_fault maps `size` bytes of anonymous memory per worker: a `null:SIZE`
    /// target (no filename, no offset, as fio requires).
    fn page_fault_target(&mut self, bs: u64) -> Result<JobTarget, CompatError> {
        let o = self.o;
        let Some((v, loc)) = o.get("size").or_else(|| o.get("filesize")) else {
            if o.map.contains_key("size") || o.map.contains_key("filesize") {
                // Written with fio's arithmetic, already listed as unsupported: carry
                // on with one block so the rest of the job is still translated.
                return Ok(JobTarget::whole(format!("null:{bs}"), true));
            }
            return Err(self.section_loc.error(format!(
                "job '{}': ioengine=page_fault needs size= (the memory it maps)",
                self.name
            )));
        };
        let size = parse_size(v).map_err(|e| loc.error(format!("size={v}: {e}")))?;
        if let Some((off, loc)) = o.get("offset").filter(|(v, _)| v.trim() != "0") {
            return Err(loc.error(format!(
                "offset={off}: ioengine=page_fault maps its region from 0 (fio refuses an offset too)"
            )));
        }
        self.warnings.push(format!(
            "job '{}': ioengine=page_fault maps {v} per worker thread (fio maps one per \
             clone)",
            self.name
        ));
        Ok(JobTarget::whole(format!("null:{size}"), true))
    }

    /// fio's `filename_format` in the `files:` form: `$jobname` → the job's name,
    /// `$jobnum` → `{clone}`, `$filenum` → `{file}`.
    pub(super) fn name_format(&self, fmt: &str, loc: &super::Loc) -> Result<String, CompatError> {
        let name = fmt
            .replace("$jobname", &self.name)
            .replace("$jobnum", "{clone}")
            .replace("$filenum", "{file}");
        if name.contains('$') {
            return Err(loc.error(format!(
                "filename_format={fmt}: ioscope knows $jobname, $jobnum and $filenum"
            )));
        }
        if !crate::plan::fileset::inside(&name) {
            return Err(loc.error(format!(
                "filename_format={fmt}: names a file outside the directory (an absolute path, \
                 or a '.' or '..' part); use directory= for that"
            )));
        }
        Ok(name)
    }

    /// The direction and order of a job on one of these engines: the file operations
    /// count as writes (create, delete) or reads (stat) whatever fio's `rw` says (fio
    /// counts them under `rw`'s direction); create and delete runs go through the
    /// files in order, once, with no warm-up.
    pub(super) fn op_engine_mix(
        &mut self,
        engine: EngineKind,
        read_pct: &mut u8,
        pattern: &mut AccessPattern,
        timing: &mut JobTiming,
    ) -> Result<(), CompatError> {
        let Some(op) = engine.only_op() else {
            return Ok(());
        };
        let o = self.o;
        let rw_loc = o.get("rw").map_or(self.section_loc, |(_, l)| l);
        let want = if op == Op::Read { 100 } else { 0 };
        if engine == EngineKind::Ftruncate && *read_pct != 0 {
            return Err(rw_loc.error(format!(
                "job '{}': ioengine=ftruncate truncates on writes only (fio fails its reads \
                 with EINVAL): use rw=write or randwrite",
                self.name
            )));
        }
        if *read_pct != want {
            self.warnings.push(format!(
                "job '{}': ioengine={} counts its operations as {}s (fio counts them under \
                 rw's direction)",
                self.name,
                engine.name(),
                op.name()
            ));
            *read_pct = want;
        }
        if !engine.consumes_files() {
            return Ok(());
        }
        if matches!(pattern, AccessPattern::Random) {
            self.unsupported.push(
                format!(
                    "random order with ioengine={} — ioscope goes through the files in order \
                     (a random pick could visit a file twice)",
                    engine.name()
                ),
                rw_loc,
            );
            *pattern = AccessPattern::Sequential;
        }
        if timing.passes != Some(1) {
            let at = o
                .get("time_based")
                .or_else(|| o.get("loops"))
                .map_or(self.section_loc, |(_, l)| l);
            self.unsupported.push(
                format!(
                    "time_based/loops with ioengine={} — each file is {} once (one pass)",
                    engine.name(),
                    if engine.desc().file_op == Some(FileOp::Create) {
                        "created"
                    } else {
                        "deleted"
                    }
                ),
                at,
            );
            timing.passes = Some(1);
        }
        if timing.warmup_ns > 0 {
            let at = o.get("ramp_time").map_or(self.section_loc, |(_, l)| l);
            self.unsupported.push(
                format!(
                    "ramp_time with ioengine={} — files used in a warm-up would not be counted",
                    engine.name()
                ),
                at,
            );
            timing.warmup_ns = 0;
        }
        Ok(())
    }
}

/// A whole number that may be 0 (`grace_time=0`).
fn count_opt_zero(o: &super::Opts, key: &str) -> Result<Option<u64>, CompatError> {
    match o.get(key) {
        None => Ok(None),
        Some((v, loc)) => v
            .trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|e| loc.error(format!("{key}={v}: {e}"))),
    }
}

/// A job's engine options as fio's options, for messages ("cpuload=50 cpumode=noop").
pub(super) fn fio_text(e: &EngineOptions) -> String {
    let mut parts = Vec::new();
    if !e.stat.is_default() {
        parts.push(format!("stat_type={}", e.stat.name()));
    }
    if let Some(c) = e.cpu {
        parts.push(format!(
            "cpuload={} cpuchunks={} cpumode={}",
            c.load_pct,
            c.chunk_ns / 1000,
            c.mode.name()
        ));
    }
    if let Some(d) = &e.defrag {
        parts.push(format!(
            "donorname={} inplace={}",
            d.donor,
            u8::from(d.inplace)
        ));
    }
    if let Some(x) = &e.exec {
        parts.push(format!(
            "program={} arguments={}",
            x.program,
            x.args.join(" ")
        ));
    }
    if parts.is_empty() {
        "no engine options".into()
    } else {
        parts.join(" ")
    }
}
