//! What ioscope knows about each fio option, in one table: its name and aliases,
//! whether it takes a value on a command line, and what the translation does with it
//! (maps it into the plan, accepts it without effect and why, or lists it as
//! unsupported). The fio reader normalises keys, splits command lines and decides
//! what to report from this table alone, so a new option is added in one place; a
//! unit test checks that the options the translator reads are exactly those the
//! table says it maps. docs/compat-fio.md is the long form of the same table.
//!
//! Options missing from the table are unknown: they take a value and are listed as
//! unsupported, never ignored.

/// What the translation does with an option.
#[derive(Debug, Clone, Copy)]
pub enum Effect {
    /// Read by the translator and carried into the plan (how, in short). Values it
    /// cannot reproduce are listed as unsupported by the translator itself.
    Maps(&'static str),
    /// Means exactly the declared setting of this job-file key
    /// ([`crate::plan::settings`]): read, written by `convert --to fio` and documented
    /// from the declaration, with no code of its own. fio's default for it must be
    /// the declaration's.
    Sets(&'static str),
    /// Means the declared setting of this job-file key in other words or units:
    /// read and written through the conversion, like `Sets` otherwise.
    SetsAs(&'static str, &'static Conv),
    /// Accepted and ignored: it changes nothing ioscope does (why).
    NoEffect(&'static str),
    /// Accepted, but what it asks for is not reproduced in a way that can matter:
    /// the translation adds a warning giving the reason.
    Warn(&'static str),
    /// Accepted without effect when `accepts` says so of the value (why); listed as
    /// unsupported otherwise.
    NoEffectWhen {
        accepts: fn(Option<&str>) -> bool,
        why: &'static str,
    },
    /// Known to fio, not reproduced: listed as unsupported when given (why).
    Unsupported(&'static str),
    /// Known, and the input is not translated at all: an error giving the reason
    /// (vdbench's `fsd=`, diskspd's `-X`). No fio option is refused this way.
    Refused(&'static str),
}

impl Effect {
    /// What the row says about the option: how it maps, or why it has no effect or
    /// is not reproduced.
    pub fn text(&self) -> &'static str {
        match *self {
            Effect::Maps(s)
            | Effect::Sets(s)
            | Effect::SetsAs(s, _)
            | Effect::NoEffect(s)
            | Effect::Warn(s)
            | Effect::Unsupported(s)
            | Effect::Refused(s) => s,
            Effect::NoEffectWhen { why, .. } => why,
        }
    }
}

/// How an option's value becomes a setting's, and back.
#[derive(Debug)]
pub struct Conv {
    /// fio's value as the setting's text (`None`: not a value fio takes).
    pub to_ours: fn(&str) -> Option<String>,
    /// The setting's value as fio's (`None`: fio cannot say it).
    pub to_fio: fn(crate::plan::settings::Value) -> Option<String>,
}

/// `replay_no_stall`: fio's boolean for "ignore the log's timing".
static NO_STALL: Conv = Conv {
    to_ours: |v| {
        Some(
            if parse_bool(Some(v))? {
                "asap"
            } else {
                "on-time"
            }
            .into(),
        )
    },
    to_fio: |v| Some(if v.as_str() == "asap" { "1" } else { "0" }.into()),
};

/// `replay_time_scale`: fio's percentage of the recorded rate.
static TIME_SCALE: Conv = Conv {
    to_ours: |v| {
        let pct: f64 = v.trim().parse().ok()?;
        (pct.is_finite() && pct > 0.0).then(|| (pct / 100.0).to_string())
    },
    to_fio: |v| match v {
        crate::plan::settings::Value::Ratio(x) => Some(format!("{}", (x * 100.0).round())),
        _ => None,
    },
};

/// `percentage_random=R[,W[,T]]`: the reads' share of random I/Os (fio's default,
/// 100, when the reads' is left empty); the writes' is fitted by the job's reader
/// (`fio::percentage_random`).
static PERCENTAGE_RANDOM: Conv = Conv {
    to_ours: |v| {
        let reads = v.split(',').next().unwrap_or("").trim();
        Some(if reads.is_empty() { "100" } else { reads }.to_string())
    },
    to_fio: |v| match v {
        crate::plan::settings::Value::Ratio(x) => Some(x.to_string()),
        _ => None,
    },
};

/// One fio option.
#[derive(Debug, Clone, Copy)]
pub struct FioOption {
    /// The name the translator uses (fio's, lower case, `_` not `-`).
    pub name: &'static str,
    /// Other spellings fio accepts for it.
    pub aliases: &'static [&'static str],
    /// True when it takes no value on a command line (`--time_based`), so the next
    /// argument is never read as its value.
    pub flag: bool,
    /// True for a time, where fio reads a bare number in a parenthesised arithmetic
    /// expression as microseconds (see [`super::fio_subst`]).
    pub time: bool,
    pub effect: Effect,
}

const fn maps(name: &'static str, how: &'static str) -> FioOption {
    FioOption {
        name,
        aliases: &[],
        flag: false,
        time: false,
        effect: Effect::Maps(how),
    }
}

const fn sets(name: &'static str, key: &'static str) -> FioOption {
    FioOption {
        name,
        aliases: &[],
        flag: false,
        time: false,
        effect: Effect::Sets(key),
    }
}

const fn no_effect(name: &'static str, why: &'static str) -> FioOption {
    FioOption {
        name,
        aliases: &[],
        flag: false,
        time: false,
        effect: Effect::NoEffect(why),
    }
}

const fn warn(name: &'static str, why: &'static str) -> FioOption {
    FioOption {
        name,
        aliases: &[],
        flag: false,
        time: false,
        effect: Effect::Warn(why),
    }
}

const fn unsupported(name: &'static str, why: &'static str) -> FioOption {
    FioOption {
        name,
        aliases: &[],
        flag: false,
        time: false,
        effect: Effect::Unsupported(why),
    }
}

const fn flag(mut o: FioOption) -> FioOption {
    o.flag = true;
    o
}

const fn time(mut o: FioOption) -> FioOption {
    o.time = true;
    o
}

const fn aka(mut o: FioOption, aliases: &'static [&'static str]) -> FioOption {
    o.aliases = aliases;
    o
}

/// fio's boolean option values: bare, `1`, `true`, `yes`, `on`; `0`, `false`, `no`,
/// `off` (any case); None for anything else.
pub(crate) fn parse_bool(v: Option<&str>) -> Option<bool> {
    match v.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        None | Some("") | Some("1") | Some("true") | Some("yes") | Some("on") => Some(true),
        Some("0") | Some("false") | Some("no") | Some("off") => Some(false),
        _ => None,
    }
}

/// fio's value for "no" (`exitall_on_error=0`).
fn is_false(v: Option<&str>) -> bool {
    parse_bool(v) == Some(false)
}

/// A flag given bare or true (`exitall_on_error`, `exitall_on_error=1`).
fn is_not_false(v: Option<&str>) -> bool {
    !is_false(v)
}

/// fio's default `rw_sequencer=sequential`: an offset modifier adds to the offset.
fn is_sequential_word(v: Option<&str>) -> bool {
    v.is_some_and(|v| v.trim().eq_ignore_ascii_case("sequential"))
}

/// An option that means a declared setting: fio's name, the setting, and the
/// conversion of its values when they are not the setting's own.
pub type SettingRow = (
    &'static str,
    &'static crate::plan::settings::Decl,
    Option<&'static Conv>,
);

/// The options that mean a declared setting.
pub fn settings() -> impl Iterator<Item = SettingRow> {
    OPTIONS.iter().filter_map(|o| {
        let (key, conv) = match o.effect {
            Effect::Sets(key) => (key, None),
            Effect::SetsAs(key, conv) => (key, Some(conv)),
            _ => return None,
        };
        crate::plan::settings::lookup(key).map(|d| (o.name, d, conv))
    })
}

/// Why the NVMe protection-information options are unsupported.
const NVME_PI: &str = "NVMe protection information: an option of fio's io_uring_cmd and \
                       xnvme engines (NVMe passthrough), which ioscope lacks";

/// Every option the fio reader knows, by name.
pub const OPTIONS: &[FioOption] = &[
    // Jobs and runs.
    maps("name", "workload (and run) name; --name starts a job"),
    flag(maps("stonewall", "starts a new run")),
    flag(maps("wait_for_previous", "starts a new run")),
    maps("wait_for", "starts a new run at the job that carries it"),
    flag(no_effect(
        "new_group",
        "a new reporting group only: fio still runs the job beside the others until a \
         stonewall; ioscope reports every workload anyway",
    )),
    // What to do.
    aka(
        maps(
            "rw",
            "read_pct and pattern; ':N' adds N bytes to a sequential offset after each I/O \
             (negative: backwards); trim and ':N' on random I/O unsupported",
        ),
        &["readwrite"],
    ),
    FioOption {
        name: "rw_sequencer",
        aliases: &[],
        flag: false,
        time: false,
        effect: Effect::NoEffectWhen {
            accepts: is_sequential_word,
            why: "rw_sequencer=sequential (fio's default): the ':N' of rw adds to the \
                  offset, as ioscope does; identical (repeat the offset N times) is not \
                  reproduced",
        },
    },
    maps("rwmixread", "read_pct of a mix"),
    maps("rwmixwrite", "100 - read_pct of a mix"),
    FioOption {
        effect: Effect::SetsAs("random_pct", &PERCENTAGE_RANDOM),
        ..sets("percentage_random", "")
    },
    maps(
        "random_distribution",
        "dist: zipf, pareto, zoned, zoned_abs, sequence; normal unsupported",
    ),
    flag(maps(
        "norandommap",
        "random_map off: each random offset drawn independently (without it, a uniform \
         random job gets random_map: every block once per pass, as fio's map)",
    )),
    aka(
        maps("bs", "block size, per direction (reads, writes and trims)"),
        &["blocksize"],
    ),
    maps("bssplit", "weighted block-size split, per direction"),
    aka(
        maps(
            "bsrange",
            "equal-weight split over the multiples of the smaller size",
        ),
        &["blocksize_range"],
    ),
    aka(
        maps(
            "blockalign",
            "random offsets aligned to it (a multiple of the smallest block size)",
        ),
        &["ba"],
    ),
    // How much and how long.
    maps("size", "working-set length (and target size); N% of one file → range_to_pct"),
    maps(
        "filesize",
        "as size for a single file; with several files, each file's length",
    ),
    maps("offset", "working-set start"),
    maps(
        "io_size",
        "passes, when a whole multiple of size; else an I/O count with one block size",
    ),
    maps("io_limit", "as io_size"),
    maps(
        "number_ios",
        "passes, when I/Os × bs are a whole multiple of size; otherwise each stream \
         stops after that many I/Os (stop_after_ios)",
    ),
    maps("loops", "passes unless time_based"),
    aka(time(maps("runtime", "run duration")), &["timeout"]),
    flag(maps("time_based", "no pass limit")),
    time(maps("ramp_time", "warm-up")),
    time(maps(
        "startdelay",
        "the workload's start delay (a range of delays unsupported)",
    )),
    time(maps(
        "thinktime",
        "think time of each stream after every batch of I/Os (closed loop only)",
    )),
    maps("thinktime_blocks", "I/Os per think-time batch (default 1)"),
    time(maps(
        "thinktime_spin",
        "part of the think time; ioscope waits it without spinning (warned)",
    )),
    maps(
        "thinktime_blocks_type",
        "complete or issue: the same here, a stream thinks once its batch completed",
    ),
    maps(
        "thinktime_iotime",
        "think after issuing for this long (seconds unless a unit is given)",
    ),
    // Flow control between jobs.
    maps(
        "flow",
        "the job's weight in its flow group: closed-loop jobs of one flow_id issue I/Os \
         in the ratio of their weights (per clone, as fio); with a rate limit or a \
         negative weight unsupported",
    ),
    maps("flow_id", "the flow group (default 0)"),
    maps(
        "flow_sleep",
        "µs a held stream waits before it asks again (0: a 20 µs retry)",
    ),
    no_effect("flow_watermark", "deprecated in fio, which ignores it"),
    aka(
        warn(
            "rate_min",
            "fio ends the job when its bandwidth falls below this; ioscope runs on and \
             reports the achieved rate of each workload",
        ),
        &["ratemin"],
    ),
    warn(
        "rate_iops_min",
        "fio ends the job when its IOPS fall below this; ioscope runs on and reports \
         the achieved rate of each workload",
    ),
    aka(
        warn(
            "rate_cycle",
            "the averaging window of rate_min/rate_iops_min, which ioscope does not enforce",
        ),
        &["ratecycle"],
    ),
    // Files and zones.
    maps(
        "openfiles",
        "no effect on one file (fio caps it at the job's file count); with several \
         files, a warning below their count (ioscope keeps them all open)",
    ),
    maps(
        "file_service_type",
        "with several files, the workload's file-service policy (roundrobin[:N], \
         sequential, random[:N], zipf:θ, pareto:h, normal:σ); no effect on one file",
    ),
    maps(
        "filename_format",
        "the names of a files: target's files ($jobname, $jobnum, $filenum): the \
         file-operation engines, and jobs over several files; with ioengine=nfs the file \
         on the export (first clone's name); otherwise fio's default only",
    ),
    maps(
        "overwrite",
        "a job that only writes leaves a new file to its writes (overwrite=0, fio's \
         default): the target's create = \"empty\" unless another job of the file reads \
         it or says overwrite=1, when it is laid out with data",
    ),
    maps(
        "create_on_open",
        "accepted with the file-operation engines (creating is their I/O); otherwise \
         the target's create = \"empty\" when every job on the file has it: a hole, not \
         laid out with data",
    ),
    no_effect(
        "create_serialize",
        "whether fio lays out its jobs' files one after another: ioscope creates and \
         fills every new target before the run starts, so the order changes nothing \
         measured",
    ),
    no_effect(
        "fallocate",
        "fio's preallocation of files it lays out: ioscope writes a new file's data \
         before the run, so its blocks are allocated anyway (for falloc and ftruncate it \
         leaves a hole for the engine to allocate)",
    ),
    maps(
        "stat_type",
        "filestat/dirstat: the call timed (stat, lstat, statx)",
    ),
    maps(
        "cpuload",
        "cpuio: the share of each stream's time spent burning CPU",
    ),
    maps("cpuchunks", "cpuio: CPU time burnt per operation (µs)"),
    maps("cpumode", "cpuio: noop or qsort"),
    maps("program", "exec: the program run for the job's runtime"),
    maps(
        "arguments",
        "exec: its arguments (%r → runtime in seconds, %n → job name), split at spaces",
    ),
    maps(
        "grace_time",
        "exec: seconds between SIGTERM and SIGKILL at the end",
    ),
    maps(
        "std_redirect",
        "exec: output to JOBNAME.stdout/.stderr (default), else to ioscope's stderr",
    ),
    maps(
        "exit_on_io_done",
        "cpuio: 0 only (a cpuio run has no I/O jobs beside it)",
    ),
    maps(
        "zonemode",
        "none: I/O over the whole region; strided: the workload's zones (zonesize of I/O \
         per zonerange, then zoneskip left out); zbd: emulated zones of zonesize on a \
         file or a device that is not zoned (writes at write pointers), zbd",
    ),
    maps(
        "offset_increment",
        "each clone's region starts this much after the previous clone's (the workload's \
         offset_increment)",
    ),
    maps(
        "zonesize",
        "zonemode=strided: the I/O done in a zone (zone_size); zonemode=zbd: the length \
         of a zone; what a size in zones (8z) counts",
    ),
    maps(
        "zoneskip",
        "zonemode=strided: bytes left out after a zone (zone_skip)",
    ),
    maps(
        "zonerange",
        "zonemode=strided: the length of a zone (zone_range; default zonesize)",
    ),
    maps(
        "random_sequence_stride",
        "random_distribution=sequence: each repetition moves on by the sequence's length",
    ),
    maps(
        "zonecapacity",
        "zonemode=zbd: the bytes of a zone that can be written (zone_capacity)",
    ),
    maps(
        "max_open_zones",
        "zonemode=zbd: zones written at once on the target (max_open_zones)",
    ),
    maps(
        "job_max_open_zones",
        "zonemode=zbd: zones written at once by one clone (stream_max_open_zones)",
    ),
    maps(
        "zone_reset_threshold",
        "zonemode=zbd: written share of the region above which writes reset zones",
    ),
    maps(
        "zone_reset_frequency",
        "zonemode=zbd: above the threshold, every 1/this-th write resets its zone",
    ),
    maps(
        "read_beyond_wp",
        "zonemode=zbd: reads may go past the write pointers",
    ),
    no_effect(
        "ignore_zone_limits",
        "the device's open-zone limit: emulated zones have none",
    ),
    unsupported(
        "write_zone_remainder",
        "writes into the remainder of a zone smaller than a block: ioscope finishes such \
         a zone",
    ),
    unsupported(
        "recover_zbd_write_error",
        "write-pointer recovery after failed writes on a zoned block device, which \
         ioscope does not drive",
    ),
    // Options of engines ioscope lacks (NVMe passthrough: io_uring_cmd, xnvme).
    unsupported(
        "md_per_io_size",
        "NVMe metadata per I/O: an option of fio's io_uring_cmd and xnvme engines \
         (NVMe passthrough), which ioscope lacks",
    ),
    unsupported("pi_act", NVME_PI),
    unsupported("pi_chk", NVME_PI),
    unsupported("apptag", NVME_PI),
    unsupported("apptag_mask", NVME_PI),
    aka(
        unsupported(
            "fdp",
            "NVMe data placement (FDP): writes tagged with placement IDs through fio's \
             io_uring_cmd and xnvme engines (NVMe passthrough), which ioscope lacks",
        ),
        &["dataplacement"],
    ),
    aka(
        unsupported(
            "fdp_pli",
            "placement IDs of NVMe data placement (see fdp), which ioscope lacks",
        ),
        &["plids"],
    ),
    aka(
        unsupported(
            "fdp_pli_select",
            "how placement IDs are picked in NVMe data placement (see fdp)",
        ),
        &["plid_select"],
    ),
    // Without size, the file's size is its filesystem's free space (target size =
    // "fill"); a job that only reads lists it as unsupported.
    aka(sets("fill_device", "fill_fs"), &["fill_fs"]),
    // Write flags and priorities.
    // Writes carry RWF_ATOMIC (uring and sync engines; others list it as
    // unsupported); the target's statx limits are checked before the run.
    sets("atomic", "atomic_writes"),
    warn(
        "log_prio",
        "fio writes the priority column of its logs as the I/O's priority in hex; \
         ioscope's logs are written from its intervals, which are not split by \
         priority, and carry 0 there, as fio does without log_prio",
    ),
    maps(
        "cmdprio_percentage",
        "that share of reads/writes at the cmdprio priority (io_uring's per-request \
         ioprio; uring engine only)",
    ),
    maps(
        "cmdprio_class",
        "class of the cmdprio_percentage/cmdprio_bssplit I/Os (default 1, real time)",
    ),
    maps(
        "cmdprio",
        "level of the cmdprio_percentage/cmdprio_bssplit I/Os (default 0)",
    ),
    maps(
        "cmdprio_bssplit",
        "per-block-size shares of I/Os at their own priority (uring engine only)",
    ),
    maps(
        "cmdprio_hint",
        "hint of the cmdprio_percentage/cmdprio_bssplit I/Os (default 0)",
    ),
    maps(
        "prio",
        "the job's priority level (ioprio_set on its workers)",
    ),
    maps(
        "prioclass",
        "the job's priority class (ioprio_set on its workers; 0 = best effort)",
    ),
    maps(
        "priohint",
        "the job's priority hint (ioprio_set on its workers)",
    ),
    // Dedupe beyond a ratio.
    maps(
        "dedupe_mode",
        "repeat (fio's default): duplicates repeat recent unique writes; working_set: \
         they repeat a set of dedupe_working_set_percentage of the job's size, written \
         first (dedup_set)",
    ),
    maps(
        "dedupe_working_set_percentage",
        "with dedupe_mode=working_set: the set's share of size (default 5)",
    ),
    maps(
        "dedupe_global",
        "with dedupe_mode=working_set: one set shared by the jobs that have it, each \
         worker writing its share first",
    ),
    // Verification beyond ioscope's own headers.
    maps(
        "do_verify",
        "do_verify=0: stamp written data but skip the read-back after the run",
    ),
    maps(
        "verify_pattern",
        "writes carry the pattern (hex, decimal, quoted strings; %o unsupported); with \
         verify, each unit's header checksum covers it",
    ),
    maps(
        "verify_interval",
        "the verify (data) unit: a header every that many bytes (a power of two, 512 to \
         1m; one per command)",
    ),
    maps(
        "verify_backlog",
        "each stream reads back its completed writes every N writes, during the run \
         (counted as backlog_reads in the verify figures, not as the job's reads)",
    ),
    maps(
        "verify_backlog_batch",
        "blocks read back each time with verify_backlog (default: N)",
    ),
    no_effect(
        "verify_async",
        "fio checks reads in that many extra threads instead of the submitting one; \
         ioscope checks each read on its worker as it completes: the same blocks are \
         checked with the same outcome",
    ),
    unsupported(
        "verify_offset",
        "ioscope's verify header has a fixed place in the block",
    ),
    maps(
        "verify_fatal",
        "the job's own error policy stops the run at its first mismatch (unless \
         continue_on_error covers verify)",
    ),
    no_effect(
        "verify_dump",
        "changes nothing written or measured: ioscope reports each mismatch with its \
         header, checksums and a hex excerpt in the result instead of dumping blocks to \
         files",
    ),
    flag(unsupported(
        "verify_only",
        "fio only reads back what an earlier run wrote; use `ioscope verify`",
    )),
    unsupported("verify_state_save", "fio's verify state file"),
    unsupported("verify_state_load", "fio's verify state file"),
    no_effect(
        "verify_write_sequence",
        "ioscope's write keys (the header's sequence) are checked so that overlapping \
         writers never raise a false alarm, so 0 has nothing to turn off and 1 nothing \
         to add; a lost write is still reported (stale)",
    ),
    // Steady state (fio stops a job once a metric settles).
    aka(
        maps(
            "steadystate",
            "the run's steady-state stop: iops, bw, lat and their _slope forms, limits \
             in % or absolute",
        ),
        &["ss"],
    ),
    aka(
        time(maps(
            "steadystate_duration",
            "the steady-state stop's rolling window (0 or absent: fio does not judge)",
        )),
        &["ss_dur"],
    ),
    aka(
        time(maps(
            "steadystate_ramp_time",
            "measured time before the steady-state stop judges",
        )),
        &["ss_ramp"],
    ),
    aka(
        maps(
            "steadystate_check_interval",
            "the run's interval length (one sample per interval)",
        ),
        &["ss_interval"],
    ),
    // Discard and errors.
    unsupported(
        "trim_backlog",
        "fio discards verified blocks during a verify run (with trim_percentage) and \
         checks that they read back as zeros; ioscope does not verify runs that trim",
    ),
    maps(
        "continue_on_error",
        "the job's own error policy: errors of the kinds it names (none, read, write, \
         io, verify, all; 0 and 1) are counted and the run goes on, others stop it",
    ),
    maps(
        "ignore_error",
        "with continue_on_error: the errnos (READ,WRITE,VERIFY lists, `:`-separated) \
         that alone continue for each kind (fio's default: EIO and EILSEQ)",
    ),
    no_effect(
        "error_dump",
        "whether fio prints every error or only the fatal one; ioscope prints none \
         per I/O: it counts every error per interval and keeps the first few (op, \
         target, offset, errno) in the result's error samples",
    ),
    maps(
        "exit_what",
        "which jobs exitall stops: group and stonewall → the run; all → the later runs \
         are left out too",
    ),
    // How.
    maps(
        "ioengine",
        "engine: io_uring, libaio, posixaio → uring; psync, sync, pvsync, pvsync2, \
         vsync, mmap → sync; null, cpp_null → null; nbd → nbd; libiscsi → iscsi; nfs → nfs; libblkio with \
         libblkio_driver=io_uring → uring; net, netsplice → net; e4defrag → e4defrag (mappings warned)",
    ),
    maps(
        "iodepth",
        "queue depth per stream (1 with a synchronous engine)",
    ),
    maps("numjobs", "streams"),
    maps("direct", "target O_DIRECT"),
    maps("buffered", "buffered=0 is direct=1"),
    maps("rate_iops", "open-loop rate (per job × numjobs); 0, as in fio, is no limit"),
    maps(
        "rate",
        "bandwidth cap → open-loop rate in IOPS (one block size only)",
    ),
    maps(
        "rate_process",
        "arrival: linear → uniform, poisson → exponential",
    ),
    aka(maps("cpus_allowed", "run CPU set"), &["cpus"]),
    maps("randseed", "run seed"),
    // Where.
    maps(
        "filename",
        "one target per distinct name; lists unsupported",
    ),
    maps("directory", "directory of filename, or of JOBNAME.0.0"),
    maps("uri", "the NBD export of ioengine=nbd (the target)"),
    maps(
        "nfs_url",
        "the export of ioengine=nfs: the target is nfs://HOST[:PORT]/EXPORT/FILE, FILE \
         from filename, filename_format or JOBNAME.0.0",
    ),
    maps(
        "libblkio_driver",
        "io_uring: ioengine=libblkio runs on ioscope's io_uring engine; other drivers \
         unsupported",
    ),
    maps(
        "libblkio_path",
        "the file or device of ioengine=libblkio (the target)",
    ),
    maps(
        "donorname",
        "e4defrag: the donor file (in directory), created when missing",
    ),
    maps(
        "inplace",
        "e4defrag: 1 = the donor's blocks allocated for each move and freed after it",
    ),
    // The network engines (net, netsplice): the job's endpoint URI.
    maps(
        "hostname",
        "net: the peer's host, a multicast group, a unix socket's path or a vsock CID",
    ),
    maps(
        "port",
        "net: the port to connect to or bind (not with unix)",
    ),
    aka(
        maps("protocol", "net: tcp, tcpv6, udp, udpv6, unix, vsock"),
        &["proto"],
    ),
    flag(maps(
        "listen",
        "net: this end binds and accepts (TCP, vsock; a UDP or unix reader always binds)",
    )),
    flag(maps(
        "pingpong",
        "net: every message answered before the next; the latency is the round trip",
    )),
    maps("nodelay", "net: TCP_NODELAY"),
    maps("window_size", "net: SO_SNDBUF and SO_RCVBUF"),
    maps("mss", "net: TCP_MAXSEG"),
    maps("ttl", "net: IP_MULTICAST_TTL of a multicast sender"),
    maps(
        "interface",
        "net: IPv4 address of the interface multicast goes through",
    ),
    maps(
        "nrfiles",
        "nrfiles (× numjobs with $jobnum in the names) files in a files: target: the \
         file-operation engines, and the sync and uring engines' reads and writes",
    ),
    // Data.
    maps("verify", "verify and read back after the run"),
    maps("buffer_compress_percentage", "compress ratio 100/(100-P)"),
    maps("dedupe_percentage", "dedup ratio 100/(100-P)"),
    // Latency target and steady state.
    time(maps(
        "latency_target",
        "the run becomes an SLA search (curve with max_latency)",
    )),
    time(maps("latency_window", "each probe's duration")),
    maps(
        "latency_percentile",
        "the bound's percentile (100 → max; default 100)",
    ),
    // Logs.
    maps(
        "write_bw_log",
        "PREFIX_bw.1.log from the run's intervals (KiB/s)",
    ),
    maps(
        "write_lat_log",
        "PREFIX_lat.1.log from the run's intervals (mean, ns)",
    ),
    maps(
        "write_iops_log",
        "PREFIX_iops.1.log from the run's intervals",
    ),
    maps("log_avg_msec", "the run's interval length"),
    maps(
        "log_offset",
        "an offset column in the fio logs (0: averaged samples have no offset, as in fio)",
    ),
    maps(
        "sprandom",
        "SPRandom preconditioning: the workload's sprandom order (random writes of the \
         physical capacity, leaving the model's validity per region)",
    ),
    maps("spr_op", "sprandom: the over-provisioning ratio (default 0.15)"),
    maps("spr_num_regions", "sprandom: the number of regions (default 100)"),
    maps("spr_cs", "sprandom: the drive's cache size; rewrites wait a region"),
    // Accepted without effect.
    no_effect(
        "softrandommap",
        "it only matters when fio cannot allocate its map; ioscope's random_map keeps \
         no per-block state",
    ),
    flag(no_effect(
        "group_reporting",
        "ioscope reports every workload and the run total anyway",
    )),
    aka(
        flag(no_effect("thread", "ioscope always uses threads (workers)")),
        &["threads"],
    ),
    no_effect("description", "a comment"),
    no_effect("clat_percentiles", "reporting only"),
    no_effect("slat_percentiles", "reporting only"),
    no_effect(
        "percentile_list",
        "reporting only; ioscope always reports p50 to p99.99 and max",
    ),
    no_effect(
        "gtod_reduce",
        "fio's way to save clock reads; ioscope times every I/O with the monotonic \
         clock anyway, so only fio's reports would change",
    ),
    no_effect(
        "disable_lat",
        "ioscope always measures latency (total, and service time from submission)",
    ),
    no_effect("disable_clat", "ioscope always measures latency"),
    no_effect("disable_slat", "ioscope always measures latency"),
    no_effect(
        "disable_bw_measurement",
        "ioscope always measures throughput",
    ),
    no_effect(
        "io_submit_mode",
        "inline or offload: ioscope's open-loop workers issue at the intended times \
         and measure latency from them, which is what offload is for",
    ),
    maps(
        "random_generator",
        "lfsr → random_map on a uniform random job (every block once per pass, the \
         order new each pass); tausworthe, tausworthe64: ioscope's own generator (a note)",
    ),
    warn(
        "cpus_allowed_policy",
        "ioscope places its workers on cpus_allowed itself, one per CPU at most",
    ),
    warn(
        "numa_cpu_nodes",
        "ioscope does not bind to NUMA nodes; give cpus_allowed with the node's CPUs",
    ),
    warn(
        "numa_mem_policy",
        "ioscope allocates buffers under the kernel's default NUMA policy",
    ),
    no_effect("lat_percentiles", "reporting only"),
    no_effect("unified_rw_reporting", "reporting only"),
    no_effect("disk_util", "reporting only"),
    maps(
        "kb_base",
        "how the other options' units read: 1024 (fio's default) KiB… as powers of 1000 \
         and k… of 1024; 1000 the other way round",
    ),
    no_effect("unit_base", "reporting only: bits or bytes in fio's own output"),
    no_effect(
        "clocksource",
        "fio's clock for its timestamps; ioscope chooses its own (the result's timebase)",
    ),
    FioOption {
        name: "nowait",
        aliases: &[],
        flag: false,
        time: false,
        effect: Effect::NoEffectWhen {
            accepts: is_false,
            why: "nowait=0 (fio's default): submissions may block, as ioscope's do; \
                  nowait=1 (RWF_NOWAIT, EAGAIN instead of blocking) is not reproduced",
        },
    },
    aka(
        maps(
            "randrepeat",
            "runs are repeatable by default; randrepeat=0 without randseed: a new seed \
             for every run (fresh_seed)",
        ),
        &["allrandrepeat"],
    ),
    flag(no_effect(
        "refill_buffers",
        "every write already carries fresh contents (ioscope's default data; \
         dedupe_percentage and buffer_compress_percentage change that)",
    )),
    FioOption {
        name: "scramble_buffers",
        aliases: &[],
        flag: false,
        time: false,
        effect: Effect::NoEffectWhen {
            accepts: is_not_false,
            why: "scramble_buffers=1 (fio's default): every write already carries fresh \
                  contents (=0, fio's same buffer written again and again, is not \
                  reproduced; dedupe_percentage=100 comes closest)",
        },
    },
    warn(
        "fadvise_hint",
        "ioscope gives the kernel no posix_fadvise hint (fio's fadvise_hint=0): with \
         direct=1 nothing differs; buffered I/O gets the kernel's own readahead",
    ),
    FioOption {
        name: "file_append",
        aliases: &[],
        flag: false,
        time: false,
        effect: Effect::NoEffectWhen {
            accepts: is_false,
            why: "file_append=0 (fio's default) writes within the file, as ioscope does; \
                  file_append=1 (writes from the file's end, growing it) is not reproduced",
        },
    },
    sets("invalidate", "invalidate"),
    // Trace replay (docs/replay.md).
    aka(sets("read_iolog", "trace"), &["read_iolog_file"]),
    sets("write_iolog", "record"),
    FioOption {
        effect: Effect::SetsAs("trace_timing", &NO_STALL),
        ..sets("replay_no_stall", "")
    },
    FioOption {
        effect: Effect::SetsAs("trace_speed", &TIME_SCALE),
        ..sets("replay_time_scale", "")
    },
    maps(
        "replay_redirect",
        "the job's target: every device of the log is replayed on it",
    ),
    sets("replay_align", "trace_align"),
    sets("replay_scale", "trace_scale"),
    unsupported("replay_skip", "every recorded direction is replayed"),
    unsupported(
        "merge_blktrace_file",
        "several traces are not merged into one file: give each trace a workload of its \
         own, and they replay together",
    ),
    unsupported(
        "merge_blktrace_scalars",
        "give each trace a workload of its own with its own trace_speed",
    ),
    unsupported(
        "merge_blktrace_iters",
        "give each trace a workload of its own; a trace is replayed once",
    ),
    no_effect("read_iolog_chunked", "the trace is read whole before the run"),
    // Known, not reproduced. Flags are here so that a command line's next argument
    // is not taken as their value.
    flag(maps(
        "exitall",
        "fio's flag for the whole file, whichever job names it: the run ends when its \
         first job ends — the earliest runtime becomes the run's duration, and each \
         workload's exit_all stops the run once one of its streams has done its I/O",
    )),
    FioOption {
        name: "exitall_on_error",
        aliases: &[],
        flag: true,
        time: false,
        effect: Effect::NoEffectWhen {
            accepts: is_not_false,
            why: "exitall_on_error: an error a job does not continue past stops every \
                  job, which is what ioscope does with any such error (=0, where fio's \
                  other jobs go on, is not reproduced)",
        },
    },
    unsupported("create_only", "creates the files and stops"),
    maps(
        "unlink",
        "unlink=1: a files: target's unlink=1 (the files this run created are removed \
         after it; never one that was there before)",
    ),
    unsupported(
        "unlink_each_loop",
        "removes the files after every loop; ioscope's passes follow each other without a \
         pause (unlink=1 removes them once, after the run)",
    ),
    maps(
        "per_job_logs",
        "per_job_logs=0: write_*_log files without the job number, appended to",
    ),
    maps(
        "allow_file_create",
        "allow_file_create=0: the target's create = \"never\" (a missing file is an \
         error, never created)",
    ),
    // fio's report options, given on its command line (`convert fio JOB --output-format=json`
    // as kbench and kubestr run it): they say how fio prints, not what it measures.
    no_effect(
        "eta_newline",
        "fio's progress display; `ioscope fio` reads `--eta-newline` as `--progress lines`",
    ),
    no_effect(
        "eta",
        "fio's progress display; `ioscope fio` reads `--eta` as `--progress`",
    ),
    no_effect(
        "output_format",
        "fio's report form; `ioscope fio` prints fio's normal, json, json+ or terse output \
         as asked",
    ),
    no_effect(
        "output",
        "fio's report file; `ioscope fio --output FILE` writes what it would print there",
    ),
    flag(no_effect(
        "minimal",
        "fio's terse report; `ioscope fio --minimal` prints it",
    )),
    no_effect(
        "terse_version",
        "the terse report's version; `ioscope fio` writes versions 3, 4 and 5",
    ),
    no_effect(
        "status_interval",
        "fio prints its whole report again every N seconds; ioscope's result keeps every \
         interval (--interval) and its status line shows the current one",
    ),
    flag(unsupported("parse_only", "parses the job and stops")),
    flag(maps(
        "readonly",
        "fio's guard against writes: a job that writes or trims is refused before \
         anything is created",
    )),
    aka(
        maps(
            "iodepth_batch_submit",
            "io_uring: requests queued per submit",
        ),
        &["iodepth_batch"],
    ),
    aka(
        maps(
            "iodepth_batch_complete_min",
            "io_uring: completions waited for at least",
        ),
        &["iodepth_batch_complete"],
    ),
    maps(
        "iodepth_batch_complete_max",
        "io_uring: completions reaped at most per wait",
    ),
    flag(maps(
        "fixedbufs",
        "io_uring: registered buffers, fixed reads/writes",
    )),
    flag(maps("registerfiles", "io_uring: registered descriptors")),
    flag(maps(
        "sqthread_poll",
        "io_uring: submission-queue polling thread",
    )),
    maps("sqthread_poll_cpu", "io_uring: CPU of the polling thread"),
    flag(maps("hipri", "io_uring: polled completions")),
    maps("sync", "write-through (O_DSYNC)"),
    maps("dsync", "write-through (O_DSYNC)"),
    maps("fsync", "flush every N writes per stream (fsync)"),
    maps("fdatasync", "flush every N writes per stream (fdatasync)"),
    maps(
        "sync_file_range",
        "every N writes per stream, sync_file_range(2) with these flags over the bytes written since",
    ),
    sets("fsync_on_close", "fsync_on_close"),
    // fio fsyncs once when the job's writing is over; ioscope's files stay open for
    // the whole run, so that is the same call at the same moment as fsync_on_close.
    sets("end_fsync", "fsync_on_close"),
];

/// The table entry for `key` (already normalised, see [`normalise_key`]).
pub fn lookup(key: &str) -> Option<&'static FioOption> {
    OPTIONS.iter().find(|o| o.name == key)
}

/// Lower-cases, turns `-` into `_`, and maps an alias to the option's name.
pub fn normalise_key(key: &str) -> String {
    let k = key.trim().to_ascii_lowercase().replace('-', "_");
    match OPTIONS.iter().find(|o| o.aliases.contains(&k.as_str())) {
        Some(o) => o.name.to_string(),
        None => k,
    }
}

/// True when the option is a time (see [`FioOption::time`]).
pub fn is_time(key: &str) -> bool {
    lookup(key).is_some_and(|o| o.time)
}

/// True when the option takes no value on a command line.
pub fn is_flag(key: &str) -> bool {
    lookup(key).is_some_and(|o| o.flag)
}

/// The warning an accepted option carries, if it carries one.
pub fn warning(key: &str) -> Option<&'static str> {
    match lookup(key).map(|o| o.effect) {
        Some(Effect::Warn(why)) => Some(why),
        _ => None,
    }
}

/// Why an option is listed as unsupported, when the table says (unknown options
/// have no reason).
pub fn unsupported_reason(key: &str) -> Option<String> {
    match lookup(key).map(|o| o.effect) {
        Some(Effect::Unsupported(why) | Effect::Refused(why)) => Some(why.to_string()),
        Some(Effect::NoEffectWhen { why, .. }) => Some(format!("accepted only as {why}")),
        _ => None,
    }
}

/// True when the option, given with `value`, must be listed as unsupported (it is
/// unknown, or known and not reproduced). Options the translator maps report their
/// own unsupported values.
pub fn is_unsupported(key: &str, value: Option<&str>) -> bool {
    match lookup(key).map(|o| o.effect) {
        None | Some(Effect::Unsupported(_) | Effect::Refused(_)) => true,
        Some(
            Effect::Maps(_)
            | Effect::Sets(_)
            | Effect::SetsAs(..)
            | Effect::NoEffect(_)
            | Effect::Warn(_),
        ) => false,
        Some(Effect::NoEffectWhen { accepts, .. }) => !accepts(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_normalised_and_described() {
        let mut seen = std::collections::BTreeSet::new();
        for o in OPTIONS {
            let why = o.effect.text();
            assert!(
                !why.is_empty(),
                "'{}' says nothing about its effect",
                o.name
            );
            for n in std::iter::once(&o.name).chain(o.aliases) {
                assert!(seen.insert(*n), "'{n}' appears twice in the table");
                assert_eq!(
                    n.to_string(),
                    n.to_ascii_lowercase().replace('-', "_"),
                    "'{n}' is not in normal form"
                );
            }
        }
    }

    #[test]
    fn the_documentation_names_every_option_read_or_accepted() {
        let doc = include_str!("../../../docs/compat-fio.md");
        for o in OPTIONS {
            if matches!(o.effect, Effect::Unsupported(_)) {
                continue;
            }
            for n in std::iter::once(&o.name).chain(o.aliases) {
                assert!(
                    doc.contains(&format!("`{n}`")) || doc.contains(&format!("`{n}=")),
                    "docs/compat-fio.md does not mention `{n}`"
                );
            }
        }
    }

    #[test]
    fn every_setting_row_names_a_declared_setting() {
        for o in OPTIONS {
            if let Effect::Sets(key) | Effect::SetsAs(key, _) = o.effect {
                assert!(
                    crate::plan::settings::lookup(key).is_some(),
                    "'{}' maps '{key}', which is not declared",
                    o.name
                );
            }
        }
    }

    #[test]
    fn aliases_normalise_to_the_name() {
        assert_eq!(normalise_key("ReadWrite"), "rw");
        assert_eq!(normalise_key("blocksize-range"), "bsrange");
        assert_eq!(normalise_key("cpus"), "cpus_allowed");
        assert_eq!(normalise_key("iodepth_batch"), "iodepth_batch_submit");
        assert_eq!(normalise_key("no_such_option"), "no_such_option");
    }

    #[test]
    fn exitall_on_error_is_accepted_only_when_on_and_invalidate_always() {
        assert!(!is_unsupported("exitall_on_error", None));
        assert!(!is_unsupported("exitall_on_error", Some("1")));
        assert!(is_unsupported("exitall_on_error", Some("0")));
        assert!(!is_unsupported("invalidate", Some("0")));
        assert!(!is_unsupported("invalidate", Some("1")));
        assert!(!is_unsupported("invalidate", None));
        assert!(is_unsupported("no_such_option", Some("1")));
        assert!(!is_unsupported("group_reporting", None));
    }
}
