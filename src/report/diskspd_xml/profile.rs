//! The `<Profile>` of diskspd's XML result: the run's plan in the elements, order and
//! spelling of diskspd's own profile writer (its TimeSpan and Target `GetXml`), so
//! that `-X` (diskspd's or ioscope's) reads back the plan that ran. An element is
//! written for what the plan holds only where the profile reader reads it back as
//! the same; what diskspd has no element for (a write pattern of another tool, a
//! seed above 32 bits, hot bands no ranges give) is an XML comment saying so,
//! rather than an element that would read back as another run.

use super::hot_ranges;
use super::{echoes, PlanView, Xml};
use crate::result::workload::Pauses;
use crate::result::{AccessPattern, Distribution, Rate, RunResult, SeqLayout, WorkloadEcho};

/// How a run's workers ran its workloads, in the two ways a diskspd profile has.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Threads {
    /// `<ThreadCount>n` (`-F<n>`): n threads, each running one stream of every target.
    Shared(usize),
    /// `<ThreadCount>0`: each target its own threads (`<ThreadsPerFile>`, `-t`);
    /// `exact` when each of them was a worker of its own in the run, as diskspd's are.
    PerTarget { exact: bool },
}

/// The run's layout, from the workers each workload's streams ran on (its echo's
/// `workers`, recorded at launch): the same workers for every target, one stream on
/// each, is diskspd's `-F`; anything else is written per target. A run of one
/// workload is written per target, which is the same run.
fn threads_of(r: &RunResult, ws: &[WorkloadEcho]) -> Threads {
    let lists: Option<Vec<&Vec<usize>>> = ws.iter().map(|w| w.workers.as_ref()).collect();
    let one_each = |w: &WorkloadEcho, l: &Vec<usize>| w.streams as usize == l.len();
    let Some(lists) = lists.filter(|l| !l.is_empty()) else {
        // Not recorded (one workload, or a result older than the field).
        let exact = matches!(ws, [w] if w.streams as usize == r.workers);
        return Threads::PerTarget { exact };
    };
    let shared = ws.len() > 1
        && ws
            .iter()
            .zip(&lists)
            .all(|(w, l)| *l == lists[0] && one_each(w, l));
    if shared {
        return Threads::Shared(lists[0].len());
    }
    let mut all: Vec<usize> = lists.iter().flat_map(|l| l.iter().copied()).collect();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    let exact = all.len() == n && ws.iter().zip(&lists).all(|(w, l)| one_each(w, l));
    Threads::PerTarget { exact }
}

/// What a workload's writes carried, in diskspd's terms (`-Z`).
#[derive(Debug, Clone, PartialEq)]
enum Content {
    /// The bytes 0..=255 repeated: diskspd's default (`<Pattern>sequential`); also
    /// what a workload that only reads is written as.
    Counting,
    /// `-Z`: zeros.
    Zero,
    /// Fresh random bytes for every write: `-Zr`, `<RandomWriteData>` of the span.
    FreshRandom,
    /// Nothing diskspd writes; the reason.
    Other(String),
}

/// The content of `w`'s writes, from its data echo.
fn content_of(w: &WorkloadEcho) -> Content {
    if w.read_pct >= 100 {
        return Content::Counting;
    }
    let Some(d) = &w.data else {
        return Content::Other("the result does not record what writes carried".into());
    };
    let counting: String = (0..=255u8).map(|b| format!("{b:02x}")).collect();
    let plain = d.dedup_ratio == 1.0 && d.compress_ratio == 1.0 && !d.verify;
    match d.pattern.as_deref() {
        _ if !plain => Content::Other(format!(
            "writes carried {}content diskspd cannot write",
            if d.verify {
                "verified "
            } else {
                "deduplicable or compressible "
            }
        )),
        None => Content::FreshRandom,
        Some("0x00") => Content::Zero,
        Some(p) if p.strip_prefix("0x") == Some(counting.as_str()) => Content::Counting,
        Some(p) => Content::Other(format!(
            "writes carried the pattern {p}; diskspd writes its counting bytes, zeros \
             or random bytes"
        )),
    }
}

/// `<Profile>`: one `<TimeSpan>` per run.
pub(super) fn profile(x: &mut Xml, runs: &[RunResult], plan: &PlanView, step_ms: &[u64]) {
    x.open("Profile");
    x.leaf("Progress", 0);
    x.leaf("ResultFormat", "xml");
    x.leaf("Verbose", "false");
    x.open("TimeSpans");
    for (r, &step) in runs.iter().zip(step_ms) {
        timespan(x, r, plan, step);
    }
    x.close("TimeSpans");
    x.close("Profile");
}

/// The run's profile, in diskspd's `TimeSpan`/`Targets`/`Target` elements.
fn timespan(x: &mut Xml, r: &RunResult, plan: &PlanView, step_ms: u64) {
    let ws = echoes(r);
    let threads = threads_of(r, &ws);
    let run = plan.run(&r.name);
    // CPUs the run pinned its workers to (null: left to the scheduler, `-n`).
    let cpus = run.and_then(|p| p.get("cpus")).map(|c| {
        c.as_array()
            .map(|a| a.iter().filter_map(|v| v.as_u64()).collect::<Vec<u64>>())
    });
    x.open("TimeSpan");
    x.leaf("MeasureLatency", "true");
    x.leaf("CalculateIopsStdDev", "true");
    if let Some(cpus) = &cpus {
        x.leaf("DisableAffinity", cpus.is_none());
    }
    x.leaf("Duration", r.duration_s.round());
    x.leaf("Warmup", r.warmup_s.round());
    x.leaf("Cooldown", 0);
    match threads {
        Threads::Shared(n) => x.leaf("ThreadCount", n),
        Threads::PerTarget { exact } => {
            if !exact {
                x.line(&format!(
                    "<!-- ioscope ran these targets' {} streams on {} workers; a diskspd \
                     profile gives each stream a thread of its own -->",
                    r.streams, r.workers
                ));
            }
            x.leaf("ThreadCount", 0);
        }
    }
    x.leaf("IoBucketDuration", step_ms);
    match run.and_then(|p| p.get("seed")?.as_u64()) {
        Some(s) if s <= u64::from(u32::MAX) => x.leaf("RandSeed", s),
        Some(s) => x.comment(&format!(
            "the run's seed {s} is above the 32 bits of diskspd's RandSeed"
        )),
        None => {}
    }
    let contents: Vec<Content> = ws.iter().map(content_of).collect();
    if contents.contains(&Content::FreshRandom) {
        // diskspd's own writer leaves -Zr out of its profile; its reader takes this.
        x.leaf("RandomWriteData", "true");
    }
    if let Some(Some(cpus)) = &cpus {
        x.open("Affinity");
        for c in cpus {
            x.line(&format!(
                "<AffinityGroupAssignment Group=\"0\" Processor=\"{c}\"/>"
            ));
        }
        x.close("Affinity");
    }
    let write_through = r.io.as_ref().is_some_and(|io| io.write_through);
    x.open("Targets");
    for (w, content) in ws.iter().zip(contents) {
        let t = TargetPlan {
            path: plan.path(&w.target),
            size_bytes: plan.target_u64(&w.target, "size_bytes"),
            direct: plan.target_bool(&w.target, "direct"),
            write_through,
            content,
        };
        target(x, w, &t, threads);
    }
    x.close("Targets");
    x.close("TimeSpan");
}

/// What a target's element needs beside its workload's echo.
struct TargetPlan {
    path: String,
    /// The size it is created or extended to (`-c`).
    size_bytes: Option<u64>,
    /// Opened O_DIRECT.
    direct: bool,
    /// The run's targets opened O_DSYNC (per run in ioscope, per target in diskspd).
    write_through: bool,
    content: Content,
}

fn target(x: &mut Xml, w: &WorkloadEcho, t: &TargetPlan, threads: Threads) {
    let bs = w.bs.max_bytes();
    x.open("Target");
    x.leaf("Path", &t.path);
    x.leaf("BlockSize", bs);
    x.leaf("BaseFileOffset", w.offset_bytes);
    // -Sh is both, as diskspd writes it (its reader also takes <DisableAllCache>).
    if t.direct {
        x.leaf("DisableOSCache", "true");
    }
    if t.write_through {
        x.leaf("WriteThrough", "true");
    }
    write_content(x, &t.content);
    bursts(x, w);
    if let Some(size) = t.size_bytes.filter(|&s| s > 0) {
        x.leaf("FileSize", size);
    }
    let span_bytes = w
        .size_bytes
        .or_else(|| t.size_bytes?.checked_sub(w.offset_bytes));
    access(x, w, span_bytes);
    x.leaf("ThreadStride", w.offset_increment_bytes);
    x.leaf(
        "MaxFileSize",
        w.size_bytes.map_or(0, |s| s + w.offset_bytes),
    );
    x.leaf("RequestCount", w.qd);
    x.leaf("WriteRatio", 100 - u32::from(w.read_pct));
    if let Rate::Iops(iops) = w.rate {
        x.line(&format!(
            "<Throughput unit=\"IOPS\">{:.0}</Throughput>",
            iops / f64::from(w.streams.max(1))
        ));
    }
    // Under `<ThreadCount>` diskspd writes (and takes no other than) 1 per target.
    let per_file = match threads {
        Threads::Shared(_) => 1,
        Threads::PerTarget { .. } => w.streams,
    };
    x.leaf("ThreadsPerFile", per_file);
    x.close("Target");
}

/// `<WriteBufferContent>`: diskspd writes it for every target.
fn write_content(x: &mut Xml, content: &Content) {
    let pattern = match content {
        // Fresh random bytes are the span's <RandomWriteData>; the target's own
        // buffer stays diskspd's default, as diskspd keeps it under -Zr.
        Content::Counting | Content::FreshRandom => "sequential",
        Content::Zero => "zero",
        Content::Other(why) => return x.comment(why),
    };
    x.open("WriteBufferContent");
    x.leaf("Pattern", pattern);
    x.close("WriteBufferContent");
}

/// `<BurstSize>` and `<ThinkTime>` (`-i`, `-j`): after a burst of I/Os, shared by
/// the threads on the target, each thread pauses whole milliseconds. Read back, the
/// burst is split evenly over the streams again. Pauses diskspd has no words for
/// (a late start, a stop, think by time, sub-ms think, or think under a throttle,
/// which diskspd ignores) are said in a comment.
fn bursts(x: &mut Xml, w: &WorkloadEcho) {
    let p = &w.pauses;
    if p.is_none() {
        return;
    }
    let think_ms = p.think_ns / 1_000_000;
    let every = p.think_every_ios.max(1);
    let plain = Pauses {
        think_ns: think_ms * 1_000_000,
        think_every_ios: every,
        ..Default::default()
    };
    if think_ms == 0 || *p != plain || w.rate != Rate::Max {
        // As the result's workload echo writes them (`think_ns`, `start_delay_ns`, …).
        let said = serde_json::to_string(p).unwrap_or_default();
        return x.comment(&format!(
            "the workload's streams paused as {said}{}; diskspd's -i/-j pause whole \
             milliseconds after a burst, and not under a throttle",
            if w.rate == Rate::Max {
                ""
            } else {
                " under a rate"
            }
        ));
    }
    x.leaf("BurstSize", u64::from(every) * u64::from(w.streams.max(1)));
    x.leaf("ThinkTime", think_ms);
}

/// `<Random>` (with `<RandomRatio>` and `<Distribution>`) or `<StrideSize>` and
/// `<InterlockedSequential>`.
fn access(x: &mut Xml, w: &WorkloadEcho, span_bytes: Option<u64>) {
    let bs = w.bs.max_bytes();
    match w.pattern {
        AccessPattern::Random => {
            x.leaf("Random", w.align_bytes.unwrap_or(bs));
            // Mixed random/sequential (-rs): diskspd writes the ratio only below 100.
            let pct = w.declared.get("random_pct").and_then(|v| v.as_f64());
            if let Some(p) = pct.filter(|&p| p < 100.0) {
                x.leaf("RandomRatio", p.round());
            }
            distribution(x, &w.dist, span_bytes);
        }
        AccessPattern::Sequential => {
            x.leaf("StrideSize", (bs as i64 + w.seq_gap_bytes).max(0));
            x.leaf("InterlockedSequential", w.seq_layout == SeqLayout::Shared);
        }
    }
}

/// `<Distribution>` of hot bands (`-rdpct`, `-rdabs`); uniform has none.
fn distribution(x: &mut Xml, dist: &Distribution, span_bytes: Option<u64>) {
    let bands = match dist {
        Distribution::Uniform => return,
        Distribution::Zoned { bands } => bands,
        other => {
            return x.comment(&format!(
                "offsets spread as {}, which diskspd has no distribution for",
                other.spec()
            ))
        }
    };
    match hot_ranges::ranges(bands, span_bytes) {
        Ok((form, ranges)) => {
            x.open("Distribution");
            x.open(form.tag());
            for (io, len) in ranges {
                x.line(&format!("<Range IO=\"{io}\">{len}</Range>"));
            }
            x.close(form.tag());
            x.close("Distribution");
        }
        Err(why) => x.comment(&why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::workload::DataEcho;

    fn run(workers: usize, layout: &[(u32, Option<Vec<usize>>)]) -> (RunResult, Vec<WorkloadEcho>) {
        let r = RunResult {
            workers,
            ..RunResult::empty()
        };
        let ws = layout
            .iter()
            .map(|(streams, on)| WorkloadEcho {
                streams: *streams,
                workers: on.clone(),
                ..Default::default()
            })
            .collect();
        (r, ws)
    }

    fn threads(workers: usize, layout: &[(u32, Option<Vec<usize>>)]) -> Threads {
        let (r, ws) = run(workers, layout);
        threads_of(&r, &ws)
    }

    #[test]
    fn the_profile_says_shared_threads_only_when_every_target_ran_on_each_worker() {
        // -F2 over two targets: one stream of each on workers 0 and 1.
        let f2 = [(2, Some(vec![0, 1])), (2, Some(vec![0, 1]))];
        assert_eq!(threads(2, &f2), Threads::Shared(2));
        // VM Fleet's SQL profile: 4 threads on one target, 1 on the other.
        let t41 = [(4, Some(vec![0, 1, 2, 3])), (1, Some(vec![4]))];
        assert_eq!(threads(5, &t41), Threads::PerTarget { exact: true });
        // -F2 -p -o4: eight streams of each target on the same two workers.
        let p = [(8, Some(vec![0, 1])), (8, Some(vec![0, 1]))];
        assert_eq!(threads(2, &p), Threads::PerTarget { exact: false });
        // Overlapping but unequal worker sets are no diskspd layout either.
        let odd = [(2, Some(vec![0, 1])), (2, Some(vec![1, 2]))];
        assert_eq!(threads(3, &odd), Threads::PerTarget { exact: false });
        // One workload (no per-workload echo of its workers): exact when each
        // stream had a worker.
        assert_eq!(threads(3, &[(3, None)]), Threads::PerTarget { exact: true });
        assert_eq!(
            threads(2, &[(3, None)]),
            Threads::PerTarget { exact: false }
        );
    }

    /// diskspd's element order in a `<TimeSpan>` and a `<Target>` of its profile
    /// (TimeSpan and Target `GetXml`, with `<RandomWriteData>`, which its writer
    /// leaves out, where its schema has it).
    const TIMESPAN_ORDER: &[&str] = &[
        "CompletionRoutines",
        "MeasureLatency",
        "CalculateIopsStdDev",
        "DisableAffinity",
        "Duration",
        "Warmup",
        "Cooldown",
        "ThreadCount",
        "RequestCount",
        "IoBucketDuration",
        "RandSeed",
        "RandomWriteData",
        "Affinity",
        "Targets",
    ];
    const TARGET_ORDER: &[&str] = &[
        "Path",
        "BlockSize",
        "BaseFileOffset",
        "SequentialScan",
        "RandomAccess",
        "TemporaryFile",
        "UseLargePages",
        "DisableLocalCache",
        "DisableOSCache",
        "WriteThrough",
        "MemoryMappedIo",
        "FlushType",
        "WriteBufferContent",
        "ParallelAsyncIO",
        "BurstSize",
        "ThinkTime",
        "FileSize",
        "Random",
        "RandomRatio",
        "Distribution",
        "StrideSize",
        "InterlockedSequential",
        "ThreadStride",
        "MaxFileSize",
        "RequestCount",
        "WriteRatio",
        "Throughput",
        "ThreadsPerFile",
        "IOPriority",
        "Weight",
        "ThreadTargets",
    ];

    /// The elements (not comments) opened at `depth` inside the `<Profile>` of `xml`,
    /// two spaces a level as the writer indents.
    fn names_at(xml: &str, depth: usize) -> Vec<String> {
        let start = xml.find("<Profile>").unwrap();
        let end = xml.find("</Profile>").unwrap();
        let indent = "  ".repeat(depth);
        xml[start..end]
            .lines()
            .filter_map(|l| l.strip_prefix(&indent)?.strip_prefix('<'))
            .filter(|l| !l.starts_with(['/', '!', ' ']))
            .map(|l| l.split(['>', ' ', '/']).next().unwrap().to_string())
            .collect()
    }

    /// Holds `names` to `order`: each known, none twice, in that order.
    fn assert_in_order(names: &[String], order: &[&str]) {
        let at: Vec<usize> = names
            .iter()
            .map(|n| {
                order
                    .iter()
                    .position(|o| o == n)
                    .unwrap_or_else(|| panic!("<{n}>"))
            })
            .collect();
        assert!(at.windows(2).all(|p| p[0] < p[1]), "{names:?}");
    }

    /// Holds that `xml` has each of `texts`.
    fn assert_has(xml: &str, texts: &[&str]) {
        for text in texts {
            assert!(xml.contains(text), "no {text}: {xml}");
        }
    }

    /// One run of one workload on /tmp/a, with the plan the echo came from.
    fn doc(w: WorkloadEcho, write_through: bool, plan: serde_json::Value) -> String {
        let mut r = RunResult {
            name: "diskspd".into(),
            workload: crate::result::RunWorkload::Storage(w),
            workers: 1,
            streams: 1,
            ..RunResult::empty()
        };
        r.io = Some(crate::result::io::IoEcho {
            write_through,
            ..Default::default()
        });
        let mut d = crate::report::testdata::doc(vec![r]);
        d.plan = Some(plan);
        super::super::render(&d)
    }

    fn echo(read_pct: u8, data: Option<&str>) -> WorkloadEcho {
        WorkloadEcho {
            target: "t0".into(),
            read_pct,
            streams: 1,
            qd: 2,
            bs: crate::result::BlockSizes::fixed(4096),
            data: Some(DataEcho {
                dedup_ratio: 1.0,
                compress_ratio: 1.0,
                pattern: data.map(String::from),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn the_profile_writes_diskspd_elements_in_diskspd_order() {
        // -r -rdpct10/50:20/10 -w30 -Sh -Z -c1M -z7 -a0,2
        let mut w = echo(70, Some("0x00"));
        w.pattern = AccessPattern::Random;
        w.dist = Distribution::Zoned {
            bands: [(10.0, 50.0), (20.0, 10.0), (70.0, 40.0)]
                .map(|(io_pct, range_pct)| crate::result::Zone { io_pct, range_pct })
                .to_vec(),
        };
        let xml = doc(
            w,
            true,
            serde_json::json!({
                "targets": [{"name": "t0", "uri": "/tmp/a", "size_bytes": 1048576, "direct": true}],
                "runs": [{"name": "diskspd", "interval_ns": 1000000000u64, "seed": 7, "cpus": [0, 2]}],
            }),
        );
        let span = names_at(&xml, 4);
        assert_in_order(&span, TIMESPAN_ORDER);
        for want in ["DisableAffinity", "RandSeed", "Affinity"] {
            assert!(span.iter().any(|n| n == want), "no <{want}>: {span:?}");
        }
        assert!(!span.iter().any(|n| n == "RandomWriteData"), "{xml}");
        let target = names_at(&xml, 6);
        assert_in_order(&target, TARGET_ORDER);
        for want in [
            "DisableOSCache",
            "WriteThrough",
            "WriteBufferContent",
            "FileSize",
            "Distribution",
        ] {
            assert!(target.iter().any(|n| n == want), "no <{want}>: {target:?}");
        }
        assert_has(
            &xml,
            &[
                "<DisableAffinity>false</DisableAffinity>",
                "<RandSeed>7</RandSeed>",
                "<AffinityGroupAssignment Group=\"0\" Processor=\"2\"/>",
                "<FileSize>1048576</FileSize>",
                "<Pattern>zero</Pattern>",
                "<Range IO=\"10\">50</Range>",
                "<Range IO=\"20\">10</Range>",
            ],
        );
        // The rest of the I/O on the rest of the target is diskspd's implied range.
        assert!(!xml.contains("<Range IO=\"70\">"), "{xml}");
    }

    #[test]
    fn fresh_random_writes_unpinned_workers_and_a_wide_seed_are_written_as_diskspd_says_them() {
        // -w100 -Zr -n -Sw, a seed diskspd cannot hold, no -c.
        let xml = doc(
            echo(0, None),
            true,
            serde_json::json!({
                "targets": [{"name": "t0", "uri": "/tmp/a", "direct": false}],
                "runs": [{"name": "diskspd", "interval_ns": 1000000000u64, "seed": 1u64 << 40, "cpus": null}],
            }),
        );
        let span = names_at(&xml, 4);
        assert_in_order(&span, TIMESPAN_ORDER);
        assert_has(
            &xml,
            &[
                "<DisableAffinity>true</DisableAffinity>",
                "<RandomWriteData>true</RandomWriteData>",
                "<Pattern>sequential</Pattern>",
                "<WriteThrough>true</WriteThrough>",
                "<!-- the run's seed 1099511627776 is above the 32 bits of diskspd's RandSeed -->",
            ],
        );
        for absent in ["<RandSeed>", "<Affinity>", "<DisableOSCache>", "<FileSize>"] {
            assert!(!xml.contains(absent), "{absent} in {xml}");
        }
    }

    #[test]
    fn bursts_are_written_for_the_targets_threads_and_other_pauses_are_said() {
        // -t2 -i6 -j2: 3 I/Os a stream, then 2 ms.
        let mut w = echo(100, None);
        w.streams = 2;
        w.pauses = Pauses {
            think_ns: 2_000_000,
            think_every_ios: 3,
            ..Default::default()
        };
        let xml = doc(w.clone(), false, serde_json::json!({}));
        assert_in_order(&names_at(&xml, 6), TARGET_ORDER);
        assert_has(
            &xml,
            &["<BurstSize>6</BurstSize>", "<ThinkTime>2</ThinkTime>"],
        );
        // Half a millisecond, a late start, or think under a rate: no diskspd words.
        let half = Pauses {
            think_ns: 500_000,
            ..w.pauses
        };
        let late = Pauses {
            start_delay_ns: 1,
            ..w.pauses
        };
        for (pauses, rate) in [
            (half, Rate::Max),
            (late, Rate::Max),
            (w.pauses, Rate::Iops(10.0)),
        ] {
            let xml = doc(
                WorkloadEcho {
                    pauses,
                    rate,
                    ..w.clone()
                },
                false,
                serde_json::json!({}),
            );
            assert!(!xml.contains("<ThinkTime>"), "{xml}");
            assert!(xml.contains("diskspd's -i/-j pause whole"), "{xml}");
        }
    }

    #[test]
    fn write_content_diskspd_has_no_pattern_for_is_said_not_written() {
        let xml = doc(echo(0, Some("0xdeadbeef")), false, serde_json::json!({}));
        assert!(!xml.contains("<WriteBufferContent>"), "{xml}");
        assert!(
            xml.contains("<!-- writes carried the pattern 0xdeadbeef;"),
            "{xml}"
        );
        // Without a plan the run's seed, CPUs and sizes are unknown: not written.
        for absent in ["<RandSeed>", "<DisableAffinity>", "<FileSize>"] {
            assert!(!xml.contains(absent), "{absent} in {xml}");
        }
        let counting: String = (0..=255u8).map(|b| format!("{b:02x}")).collect();
        let w = echo(50, Some(&format!("0x{counting}")));
        assert_eq!(content_of(&w), Content::Counting);
        assert_eq!(
            content_of(&echo(100, Some("0xdeadbeef"))),
            Content::Counting
        );
    }
}
