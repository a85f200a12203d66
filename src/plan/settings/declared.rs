//! The declared settings: the one place a setting's name, kind, default, scope, doc,
//! command-line flag and result field are written. Everything that reads, writes,
//! documents or echoes a setting takes it from here (see [`super`]); foreign formats
//! map their keys onto these in their own option tables.
//!
//! To add a setting: declare it here, add it to [`ALL`], map the foreign keys that
//! mean it in their tables, and write the code that acts on it.

use super::{Decl, Kind, Scope, Value};

/// Every declared setting, in the order the docs and `--help` list them.
pub static ALL: &[&Decl] = &[
    &INVALIDATE,
    &ATOMIC_WRITES,
    &FSYNC_ON_CLOSE,
    &FSYNC_EACH_FILE,
    &FILL_FS,
    &STOP_WHEN_NONE_LEFT,
    &RANDOM_PCT,
    &RANDOM_MAP,
    &RANGE_FROM_PCT,
    &RANGE_TO_PCT,
    &TRACE,
    &TRACE_FORMAT,
    &TRACE_DEVICE,
    &TRACE_EVENT,
    &TRACE_TIMING,
    &TRACE_SPEED,
    &TRACE_MAX_GAP,
    &TRACE_REMAP,
    &TRACE_SCALE,
    &TRACE_ALIGN,
    &TRACE_SHARE,
    &RECORD,
    &HISTOGRAMS,
    &HDR_LOG,
    &METRICS,
    &METRICS_PER_RANK,
    &PROGRESS,
    &REPEAT,
    &FRESH_SEED,
    &PAUSE,
    &STOP_AFTER_BYTES,
    &STOP_AFTER_READ_BYTES,
    &STOP_AFTER_WRITE_BYTES,
    &RECONNECT_WINDOW,
    &NBD_STRUCTURED_REPLIES,
    // Moved from the model's fields (issue 24).
    &EXIT_ALL,
];

/// fio's `invalidate`: buffered I/O starts from a cold page cache, as fio's does by
/// default.
pub static INVALIDATE: Decl = Decl {
    key: "invalidate",
    kind: Kind::Flag,
    scope: Scope::Workload,
    default: Value::Flag(true),
    doc: "Drop the target's page cache before the run (written back, then \
          posix_fadvise DONTNEED), so buffered I/O starts cold; nothing to drop under \
          O_DIRECT or on mem:, null: and network targets",
    flag: Some("invalidate"),
    heading: "Target",
    echo: "invalidate",
    switch: false,
};

/// fio's `atomic=1`: the checks that the target can take them run before the first
/// I/O (`run::request_flags`).
pub static ATOMIC_WRITES: Decl = Decl {
    key: "atomic_writes",
    kind: Kind::Flag,
    scope: Scope::Workload,
    default: Value::Flag(false),
    doc: "Every write carries RWF_ATOMIC: it lands whole or not at all, never torn by \
          a crash. uring and sync engines, O_DIRECT, on a target whose statx \
          (STATX_WRITE_ATOMIC) limits hold every write size at offsets that are \
          multiples of it; checked before the first I/O",
    flag: Some("atomic-writes"),
    heading: "Workload",
    echo: "atomic_writes",
    switch: true,
};

/// fio's `fsync_on_close`: made by the worker when its I/O is over (`run::flush`),
/// counted with the workload's flushes.
pub static FSYNC_ON_CLOSE: Decl = Decl {
    key: "fsync_on_close",
    kind: Kind::Flag,
    scope: Scope::Workload,
    default: Value::Flag(false),
    doc: "When the workload's I/O is over, fsync every file it wrote (fio's \
          fsync_on_close), timed and counted with its flushes; files and block \
          devices only",
    flag: Some("fsync-on-close"),
    heading: "Data and verification",
    echo: "fsync_on_close",
    switch: true,
};

/// vdbench's `openflags=fsync`: made by the worker as a stream's writes move to
/// another file (`run::flush`), counted with the workload's flushes.
pub static FSYNC_EACH_FILE: Decl = Decl {
    key: "fsync_each_file",
    kind: Kind::Flag,
    scope: Scope::Workload,
    default: Value::Flag(false),
    doc: "On a tree or file set, fsync each file a stream wrote when its next write \
          goes to another file, and its last one when the I/O is over (vdbench's \
          openflags=fsync: a file fsynced before it is closed), timed and counted with \
          the workload's flushes; local files only",
    flag: Some("fsync-each-file"),
    heading: "Data and verification",
    echo: "fsync_each_file",
    switch: true,
};

/// fio's `fill_device`: only for workloads that write (the job-file reader and fio's
/// table check it against the mix); a target's size = "fill" makes the file as large
/// as its file system holds.
pub static FILL_FS: Decl = Decl {
    key: "fill_fs",
    kind: Kind::Flag,
    scope: Scope::Workload,
    default: Value::Flag(false),
    doc: "Write until the file system is full (fio's fill_device): a write that fails \
          with ENOSPC or EDQUOT, or comes back short, ends that stream's I/O, uncounted \
          and not an error; give the target size = \"fill\" for fio's size = the free \
          space; only for workloads that write",
    flag: None,
    heading: "Workload",
    echo: "fill_fs",
    switch: false,
};

/// vdbench's shutdown of an fwd's threads: read in the worker, where a tree
/// operation's "nothing to act on" completes (`run::worker`).
pub static STOP_WHEN_NONE_LEFT: Decl = Decl {
    key: "stop_when_none_left",
    kind: Kind::Flag,
    scope: Scope::Workload,
    default: Value::Flag(false),
    doc: "On a tree, a file operation that finds no name it can act on (no file left \
          to delete, none missing to create, no empty directory to remove…) ends \
          that stream's I/O, as vdbench shuts an fwd's threads down when no other \
          workload can give them work again; without it the operation is a counted \
          skip and the stream looks again",
    flag: None,
    heading: "Workload",
    echo: "stop_when_none_left",
    switch: false,
};

/// vdbench's `seekpct=N`, fio's `percentage_random`: a random workload whose other
/// I/Os continue from where the stream's previous I/O ended (`run::stream`).
pub static RANDOM_PCT: Decl = Decl {
    key: "random_pct",
    kind: Kind::Percent,
    scope: Scope::Workload,
    default: Value::Ratio(100.0),
    doc: "For random access: the percentage of I/Os at a random offset; every other \
          I/O starts where the stream's previous one ended (random or not), wrapping \
          at the end of the working set (vdbench's seekpct=N, fio's percentage_random); \
          100: all random",
    flag: Some("random-pct"),
    heading: "Workload",
    echo: "random_pct",
    switch: false,
};

/// fio's random map (on in fio unless `norandommap`): each stream's random offsets
/// walk a keyed shuffle of the working set's blocks, a new one each pass
/// (`run::random_map`), instead of independent draws.
pub static RANDOM_MAP: Decl = Decl {
    key: "random_map",
    kind: Kind::Flag,
    scope: Scope::Workload,
    default: Value::Flag(false),
    doc: "For random access with the uniform distribution: each stream touches every \
          block of the working set once per pass over its blocks, in a shuffled order \
          that is new each pass (fio's random map, which fio keeps unless norandommap); \
          off: each offset is drawn independently, so within a pass some blocks repeat \
          and others are missed. Not with another distribution, zones, sprandom, a \
          share or a file set",
    flag: Some("random-map"),
    heading: "Workload",
    echo: "random_map",
    switch: true,
};

/// vdbench's `range=(10,20)` on an sd whose size is the device's: the working set
/// narrowed to a part of itself, known in bytes only once the target is open
/// (`run::setup`).
pub static RANGE_FROM_PCT: Decl = Decl {
    key: "range_from_pct",
    kind: Kind::Percent,
    scope: Scope::Workload,
    default: Value::Ratio(0.0),
    doc: "Narrow the working set to start this far into it, as a percentage of its \
          length (with range_to_pct; vdbench's range=(from,to) on a target of unknown \
          size); rounded down to the largest block size",
    flag: Some("range-from-pct"),
    heading: "Workload",
    echo: "range_from_pct",
    switch: false,
};

/// The other end of [`RANGE_FROM_PCT`].
pub static RANGE_TO_PCT: Decl = Decl {
    key: "range_to_pct",
    kind: Kind::Percent,
    scope: Scope::Workload,
    default: Value::Ratio(100.0),
    doc: "Narrow the working set to end this far into it, as a percentage of its \
          length (above range_from_pct); rounded down to the largest block size",
    flag: Some("range-to-pct"),
    heading: "Workload",
    echo: "range_to_pct",
    switch: false,
};

/// A trace workload (`run::replay`): its I/Os are the trace's, issued at their
/// recorded times; the workload's own pattern, mix, sizes and rate do not apply.
pub static TRACE: Decl = Decl {
    key: "trace",
    kind: Kind::Text,
    scope: Scope::Workload,
    default: Value::Text(""),
    doc: "Replay this trace instead of generating I/O: fio I/O log (v2, v3), blktrace \
          binary (DEV.blktrace.N), SNIA/MSR Cambridge CSV or time_s,op,offset,bytes CSV, \
          told apart by content; each I/O issued at its recorded time, latency counted \
          from then (docs/replay.md)",
    flag: Some("trace"),
    heading: "Replay",
    echo: "trace",
    switch: false,
};

/// The trace's format when its content should not decide.
pub static TRACE_FORMAT: Decl = Decl {
    key: "trace_format",
    kind: Kind::Choice(&["auto", "fio2", "fio3", "blktrace", "msr", "csv"]),
    scope: Scope::Workload,
    default: Value::Choice("auto"),
    doc: "The trace's format; auto tells them apart by content",
    flag: Some("trace-format"),
    heading: "Replay",
    echo: "trace_format",
    switch: false,
};

/// One device of a trace that holds several; a trace workload without one becomes
/// one workload per device.
pub static TRACE_DEVICE: Decl = Decl {
    key: "trace_device",
    kind: Kind::Text,
    scope: Scope::Workload,
    default: Value::Text(""),
    doc: "Replay only this device of the trace (its name as the result lists it: a \
          file of a fio log, MAJ,MIN of blktrace, HOST/DISK of an MSR trace); empty: \
          each device becomes a workload of its own on the same target",
    flag: Some("trace-device"),
    heading: "Replay",
    echo: "trace_device",
    switch: false,
};

/// blktrace records several events per I/O; one of them is replayed.
pub static TRACE_EVENT: Decl = Decl {
    key: "trace_event",
    kind: Kind::Choice(&["queue", "issue"]),
    scope: Scope::Workload,
    default: Value::Choice("queue"),
    doc: "For a blktrace: replay the queue (Q) events, the I/Os as the application \
          asked for them (as fio replays a blktrace), or the issue (D) events, as the \
          device received them after merging and scheduling",
    flag: Some("trace-event"),
    heading: "Replay",
    echo: "trace_event",
    switch: false,
};

/// On time is the open-loop schedule; asap is a closed loop at the recorded
/// concurrency.
pub static TRACE_TIMING: Decl = Decl {
    key: "trace_timing",
    kind: Kind::Choice(&["on-time", "asap"]),
    scope: Scope::Workload,
    default: Value::Choice("on-time"),
    doc: "on-time: each I/O issued at its recorded time (scaled by the speed), \
          latency counted from that time; asap: times ignored, the I/Os issued in \
          order as fast as the queue depth allows (the recorded concurrency where the \
          trace has it, capped by --qd)",
    flag: Some("timing"),
    heading: "Replay",
    echo: "trace_timing",
    switch: false,
};

/// Divides the trace's times.
pub static TRACE_SPEED: Decl = Decl {
    key: "trace_speed",
    kind: Kind::Ratio,
    scope: Scope::Workload,
    default: Value::Ratio(1.0),
    doc: "Replay this many times as fast as recorded (2: twice the rate, 0.5: half)",
    flag: Some("speed"),
    heading: "Replay",
    echo: "trace_speed",
    switch: false,
};

/// Idle time cut from a trace; the result says how much.
pub static TRACE_MAX_GAP: Decl = Decl {
    key: "trace_max_gap",
    kind: Kind::Nanos,
    scope: Scope::Workload,
    default: Value::Nanos(0),
    doc: "Cut idle gaps between recorded I/Os down to this long (after the speed is \
          applied); the result says how much time was cut; 0 keeps every gap",
    flag: Some("max-gap"),
    heading: "Replay",
    echo: "trace_max_gap_ns",
    switch: false,
};

/// How a trace's offsets land on a smaller target.
pub static TRACE_REMAP: Decl = Decl {
    key: "trace_remap",
    kind: Kind::Choice(&["modulo", "scale"]),
    scope: Scope::Workload,
    default: Value::Choice("modulo"),
    doc: "When the trace's device is larger than the working set: modulo wraps each \
          offset into it (locality kept, distant regions folded together); scale \
          shrinks offsets in proportion (the spread kept, nearby I/Os drawn closer); \
          offsets stay aligned to 512 bytes; the result counts the I/Os moved",
    flag: Some("remap"),
    heading: "Replay",
    echo: "trace_remap",
    switch: false,
};

/// fio's `replay_scale`: a trace of a larger device brought down in proportion.
pub static TRACE_SCALE: Decl = Decl {
    key: "trace_scale",
    kind: Kind::Count,
    scope: Scope::Workload,
    default: Value::Count(1),
    doc: "Divide the trace's offsets by this (fio's replay_scale), before any remap",
    flag: Some("trace-scale"),
    heading: "Replay",
    echo: "trace_scale",
    switch: false,
};

/// fio's `replay_align`: offsets aligned down, as a device with larger sectors needs.
pub static TRACE_ALIGN: Decl = Decl {
    key: "trace_align",
    kind: Kind::Bytes,
    scope: Scope::Workload,
    default: Value::Bytes(0),
    doc: "Align the trace's offsets down to a multiple of this (fio's replay_align), \
          after trace_scale; 0 keeps them",
    flag: Some("trace-align"),
    heading: "Replay",
    echo: "trace_align_bytes",
    switch: false,
};

/// A share of a trace, for several processes (MPI ranks, or hosts run by hand) that
/// replay one trace together: each takes the 10 ms time slices of its number.
pub static TRACE_SHARE: Decl = Decl {
    key: "trace_share",
    kind: Kind::Text,
    scope: Scope::Workload,
    default: Value::Text(""),
    doc: "Replay only share K of N (\"K/N\", K from 1): the trace cut into 10 ms time \
          slices, slice i replayed by share i mod N + 1, so N processes replay the \
          whole trace between them; set for each rank under mpirun; empty: all of it",
    flag: Some("trace-share"),
    heading: "Replay",
    echo: "trace_share",
    switch: false,
};

/// fio's `write_iolog`: what a workload issued, replayable by ioscope and fio.
pub static RECORD: Decl = Decl {
    key: "record",
    kind: Kind::Text,
    scope: Scope::Workload,
    default: Value::Text(""),
    doc: "Write the I/Os the workload issued, with their issue times, to this file as \
          a fio version 3 I/O log (fio's write_iolog): replayable by ioscope and by \
          fio's read_iolog; workloads naming one file share it",
    flag: Some("record"),
    heading: "Replay",
    echo: "record",
    switch: false,
};

/// Raw histograms per interval (`run::collector`): the run's totals always carry
/// theirs; a run carries its intervals' when any of its workloads asks.
pub static HISTOGRAMS: Decl = Decl {
    key: "histograms",
    kind: Kind::Choice(&["totals", "intervals"]),
    scope: Scope::Workload,
    default: Value::Choice("totals"),
    doc: "Which raw latency histograms (HdrHistogram V2, base64) the result carries: \
          totals, each run's per direction; intervals, each interval's too (a run does \
          when any of its workloads asks)",
    flag: Some("histograms"),
    heading: "Output",
    echo: "histograms",
    switch: false,
};

/// An HdrHistogram interval log (`run::hdr_log`), readable by any HdrHistogram
/// implementation's log reader.
pub static HDR_LOG: Decl = Decl {
    key: "hdr_log",
    kind: Kind::Text,
    scope: Scope::Workload,
    default: Value::Text(""),
    doc: "Write each measured interval's latency histograms to this file in \
          HdrHistogram's interval log format, tagged read, write and trim (values in \
          ns); workloads naming one file share it, their I/Os added per direction",
    flag: Some("hdr-log"),
    heading: "Output",
    echo: "hdr_log",
    switch: false,
};

/// The live Prometheus endpoint (`metrics`): served from the command's metrics
/// registry, closed when the command ends.
pub static METRICS: Decl = Decl {
    key: "metrics",
    kind: Kind::Text,
    scope: Scope::Command,
    default: Value::Text(""),
    doc: "Serve Prometheus / OpenMetrics text at http://ADDR:PORT/metrics while the \
          command runs: I/Os, bytes, errors, latency histograms, phase (docs/metrics.md). \
          PORT alone binds 127.0.0.1:PORT; give 0.0.0.0:PORT to serve other hosts",
    flag: Some("metrics"),
    heading: "Output",
    echo: "metrics",
    switch: false,
};

/// Under `mpirun`: each rank serves its own endpoint instead of rank 0 the merged one.
pub static METRICS_PER_RANK: Decl = Decl {
    key: "metrics_per_rank",
    kind: Kind::Flag,
    scope: Scope::Command,
    default: Value::Flag(false),
    doc: "Under mpirun: every rank serves its own figures on --metrics' port plus its \
          rank number",
    flag: Some("metrics-per-rank"),
    heading: "Output",
    echo: "metrics_per_rank",
    switch: true,
};

/// The status line on standard error (`app::progress`); fio's `--eta` and
/// `--eta-newline` map onto it.
pub static PROGRESS: Decl = Decl {
    key: "progress",
    kind: Kind::Choice(&["auto", "always", "never", "lines"]),
    scope: Scope::Command,
    default: Value::Choice("auto"),
    doc: "A status line on standard error redrawn in place (elapsed and remaining for \
          the whole command, IOPS, MB/s, p99, errors): auto when stdout and stderr are \
          both terminals, always, never, or lines (a new line every interval, as fio's \
          --eta-newline)",
    flag: Some("progress"),
    heading: "Output",
    echo: "progress",
    switch: false,
};

/// `--repeat N`: each run measured N times over (`app::repeat`), its figures then
/// given with their spread and a confidence interval.
pub static REPEAT: Decl = Decl {
    key: "repeat",
    kind: Kind::Count,
    scope: Scope::Run,
    default: Value::Count(1),
    doc: "Measure each run this many times, each time a full run with its own warm-up \
          (repetition i with the run's seed + i, a sim: device's seed + i); the result \
          gives each figure's mean, standard deviation, CV and 95 % confidence interval \
          (Student's t), and marks unstable a figure whose interval is wider than ±5 % \
          of its mean (docs/repeat.md)",
    flag: Some("repeat"),
    heading: "Load and timing",
    echo: "repeat",
    switch: false,
};

/// A seed drawn anew for every run (fio's `randrepeat=0`): resolved when the command
/// starts (`app::fresh_seeds`), so the result's plan records the seed that ran and
/// `rerun` repeats it.
pub static FRESH_SEED: Decl = Decl {
    key: "fresh_seed",
    kind: Kind::Flag,
    scope: Scope::Run,
    default: Value::Flag(false),
    doc: "Draw a new seed for each run instead of the run's fixed seed (fio's \
          randrepeat=0): offsets and mixes differ from run to run; the seed drawn is \
          recorded in the result's plan",
    flag: Some("fresh-seed"),
    heading: "Load and timing",
    echo: "fresh_seed",
    switch: true,
};

/// Idle time after a run before the next one (vdbench's `pause=`, `app::Session::pause`):
/// the device settles, nothing is measured; never after the plan's last run.
pub static PAUSE: Decl = Decl {
    key: "pause",
    kind: Kind::Nanos,
    scope: Scope::Run,
    default: Value::Nanos(0),
    doc: "Idle this long after the run, before the next one starts (vdbench's pause=): \
          the device settles, nothing is measured; not after the plan's last run; \
          Ctrl-C ends it",
    flag: Some("pause"),
    heading: "Load and timing",
    echo: "pause_ns",
    switch: false,
};

/// vdbench's `maxdata=`: the collector ends the run once the measured intervals
/// add up to this many bytes (`run::collector`), as vdbench checks at each interval.
pub static STOP_AFTER_BYTES: Decl = Decl {
    key: "stop_after_bytes",
    kind: Kind::Bytes,
    scope: Scope::Run,
    default: Value::Bytes(0),
    doc: "End the run at the first interval boundary where the bytes read and written \
          since the warm-up (every workload, every host) exceed this (vdbench's \
          maxdata=); end_reason data_limit; 0: no limit",
    flag: Some("stop-after-bytes"),
    heading: "Load and timing",
    echo: "stop_after_bytes",
    switch: false,
};

/// vdbench's `maxdataread=`: as [`STOP_AFTER_BYTES`], counting reads only.
pub static STOP_AFTER_READ_BYTES: Decl = Decl {
    key: "stop_after_read_bytes",
    kind: Kind::Bytes,
    scope: Scope::Run,
    default: Value::Bytes(0),
    doc: "As stop_after_bytes, counting only the bytes read (vdbench's maxdataread=); \
          0: no limit",
    flag: Some("stop-after-read-bytes"),
    heading: "Load and timing",
    echo: "stop_after_read_bytes",
    switch: false,
};

/// vdbench's `maxdatawritten=`: as [`STOP_AFTER_BYTES`], counting writes only.
pub static STOP_AFTER_WRITE_BYTES: Decl = Decl {
    key: "stop_after_write_bytes",
    kind: Kind::Bytes,
    scope: Scope::Run,
    default: Value::Bytes(0),
    doc: "As stop_after_bytes, counting only the bytes written (vdbench's \
          maxdatawritten=); 0: no limit",
    flag: Some("stop-after-write-bytes"),
    heading: "Load and timing",
    echo: "stop_after_write_bytes",
    switch: false,
};

/// How long a network engine keeps setting a lost connection up again under
/// `--on-error continue|retry=N` (`run::launch::reconnect_schedule`): a server that
/// stalls or restarts, an array's controller failing over, takes seconds, not one.
pub static RECONNECT_WINDOW: Decl = Decl {
    key: "reconnect_window",
    kind: Kind::Nanos,
    scope: Scope::Run,
    default: Value::Nanos(30_000_000_000),
    doc: "Under --on-error continue or retry=N, how long a lost NBD, iSCSI, NFS or SMB \
          connection is set up again before the run ends naming the server: attempts \
          at once, then 100 ms apart doubling to 1 s, each given the I/O timeout (at \
          least 1 s); I/Os meanwhile wait, their --io-timeout still running",
    flag: Some("reconnect-window"),
    heading: "Network and paths",
    echo: "reconnect_window_ns",
    switch: false,
};

/// Whether NBD connections ask the server for structured replies
/// (`nbd_set_request_structured_replies`, acted on in `target::nbd::ffi`). ioscope
/// reads whole blocks into its own buffer and uses no block status, meta context or
/// hole information, which are what structured replies carry; a simple reply costs
/// the client less per read (Session 17: 18.6 -> 17.1 us of CPU per 4 KiB read).
/// fio's nbd engine has no such option and leaves libnbd's default (on).
pub static NBD_STRUCTURED_REPLIES: Decl = Decl {
    key: "nbd_structured_replies",
    kind: Kind::Flag,
    scope: Scope::Run,
    default: Value::Flag(false),
    doc: "Ask NBD servers for structured replies (libnbd's default, and fio's nbd \
          engine's), through libnbd; off: simple replies, through ioscope's own NBD \
          client, which costs less CPU per I/O and carries the same data (ioscope \
          uses no block status or hole information); a server may refuse \
          structured replies, which the run then reports",
    flag: Some("nbd-structured-replies"),
    heading: "Network and paths",
    echo: "nbd_structured_replies",
    switch: true,
};

// Settings moved from the model's fields (issue 24), kept together.

/// fio's `exitall` (the fio reader maps it with `exit_what`): read once at set-up
/// into each stream's shape (`run::stream`).
pub static EXIT_ALL: Decl = Decl {
    key: "exit_all",
    kind: Kind::Flag,
    scope: Scope::Workload,
    default: Value::Flag(false),
    doc: "Stop the run as soon as one stream of this workload has done its I/O budget \
          (its passes) or, for a workload with a stop time of its own (stop_after, e.g. \
          time_based = true in a run of passes), reached it, whatever the others have \
          left (fio's exitall)",
    flag: None,
    heading: "Workload",
    echo: "exit_all",
    switch: false,
};
