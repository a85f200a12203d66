//! The diskspd reader's unit tests: each switch means what diskspd means.

use super::*;
use crate::plan::compat::diskspd_options;
use crate::plan::compat::diskspd_options::Switch;
use crate::plan::compat::fio_options::Effect;
use crate::plan::compat::sqlio::parse_sqlio;
use crate::plan::model::{AccessPattern, Distribution, Rate, SeqLayout};
use std::path::Path;

fn args(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

#[test]
fn windows_paths_need_the_override() {
    let e = parse_diskspd(&args(r"diskspd -b8K C:\test.dat"), None).unwrap_err();
    assert!(e.to_string().contains("--target"), "{e}");
    let t = parse_diskspd(&args(r"diskspd -b8K C:\test.dat"), Some("/tmp/x")).unwrap();
    assert_eq!(t.plan.targets[0].uri, "/tmp/x");
}

// A line copied from a web page whose first dash became an en dash: diskspd would
// take it as a target; the error names the character.
#[test]
fn a_typographic_dash_is_named() {
    for dash in ['\u{2013}', '\u{2014}'] {
        let line = format!("diskspd {dash}c8G -d3 /tmp/t.dat");
        let e = parse_diskspd(&args(&line), None).unwrap_err().to_string();
        assert!(e.contains(&format!("U+{:04X}", u32::from(dash))), "{e}");
    }
}

#[test]
fn cache_flags_map_to_direct_and_write_through() {
    let ds = |flag: &str| {
        let t = parse_diskspd(&args(&format!("diskspd -w50 {flag} /tmp/f")), None).unwrap();
        assert!(t.unsupported.is_empty(), "{flag}: {:?}", t.unsupported);
        (t.plan.targets[0].direct, t.plan.runs[0].io.write_through)
    };
    assert_eq!(ds("-Sh"), (Some(true), true));
    assert_eq!(ds("-h"), (Some(true), true));
    assert_eq!(ds("-Suw"), (Some(true), true));
    assert_eq!(ds("-Sw"), (Some(false), true));
    assert_eq!(ds("-Su"), (Some(true), false));
    assert_eq!(ds("-Sb"), (Some(false), false));
    let sq = |flag: &str| {
        let t = parse_sqlio(
            &args(&format!("sqlio -kW {flag} /tmp/f")),
            Path::new("."),
            None,
        )
        .unwrap();
        (t.plan.targets[0].direct, t.plan.runs[0].io.write_through)
    };
    assert_eq!(sq(""), (Some(true), true));
    assert_eq!(sq("-BN"), (Some(true), true));
    assert_eq!(sq("-BH"), (Some(true), false));
    assert_eq!(sq("-BS"), (Some(false), true));
    assert_eq!(sq("-BY"), (Some(false), false));
}

/// One argument per switch the table maps, each read by its own code (`-t1`: diskspd
/// refuses -F with -t above 1).
const DISKSPD_MAPPED: &str = "-b8K -d5 -W1 -C0 -o2 -t1 -F2 -s -T8K -p -w10 -S -h -c1M \
                              -f1M -B0 -g100 -i4 -j2 -a0 -n -Rtext -D500 -z1 -Z";
/// `-r` cannot share a line with `-s`: the random switches, on a line of their own.
const DISKSPD_MAPPED_RANDOM: &str = "-r4K -rdpct90/10 -c1M";
const SQLIO_MAPPED: &str = "-kR -s5 -t1 -o1 -b8 -frandom -BN -a0x1 -Fparam.txt";

/// Checks that `lines` write exactly the switches `table` maps, and that their
/// translations `ts` read every one of them.
fn reads_all(table: &[Switch], lines: &[&str], ts: Vec<Result<Translated, CompatError>>) {
    let line = lines.join(" ");
    let mut maps: Vec<&str> = table
        .iter()
        .filter(|s| {
            matches!(
                s.effect,
                Effect::Maps(_) | Effect::Sets(_) | Effect::SetsAs(..)
            )
        })
        .map(|s| s.letter)
        // -X is read before any line, by the profile reader (its own tests below).
        .filter(|&l| l != "X")
        .collect();
    let mut written: Vec<&str> = line.split_whitespace().map(|a| &a[1..2]).collect();
    maps.sort_unstable();
    written.sort_unstable();
    written.dedup();
    assert_eq!(
        written, maps,
        "'{line}' and the table's mapped switches differ"
    );
    for t in ts {
        let un = t.unwrap().unsupported;
        assert!(un.iter().all(|u| !u.option.contains("not read")), "{un:?}");
    }
}

// Only switches the table maps reach the readers' own code (`table_reads`); this
// holds the other direction: every mapped switch has code that reads it.

#[test]
fn the_readers_read_exactly_the_switches_the_tables_map() {
    let lines = [DISKSPD_MAPPED, DISKSPD_MAPPED_RANDOM];
    let ts = lines
        .iter()
        .map(|l| parse_diskspd(&args(&format!("diskspd {l} /tmp/f")), None))
        .collect();
    reads_all(diskspd_options::DISKSPD, &lines, ts);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compat/diskspd");
    let t = parse_sqlio(&args(&format!("sqlio {SQLIO_MAPPED}")), &dir, None);
    reads_all(diskspd_options::SQLIO, &[SQLIO_MAPPED], vec![t]);
}

#[test]
fn the_tables_decide_what_is_unknown_listed_or_refused() {
    let ds = |line: &str| parse_diskspd(&args(&format!("diskspd {line} /tmp/f")), None);
    let listed =
        |t: Translated| -> Vec<String> { t.unsupported.into_iter().map(|u| u.option).collect() };
    assert_eq!(
        listed(ds("-v -P -L -x -I3 -:1").unwrap()),
        Vec::<String>::new()
    );
    assert_eq!(
        listed(ds("-l -Lx").unwrap()),
        [
            "-l — large pages for the I/O buffers",
            "-Lx — accepted only as -L, latency statistics, which ioscope always measures"
        ]
    );
    let e = ds("-q").unwrap_err().to_string();
    assert!(e.contains("unknown diskspd option '-q'"), "{e}");
    let e = ds("-X/nonexistent/p.xml").unwrap_err().to_string();
    assert!(
        e.contains("argument 2 ('-X/nonexistent/p.xml'): cannot read the profile"),
        "{e}"
    );
    let sq = |line: &str| {
        parse_sqlio(
            &args(&format!("sqlio -frandom {line} /tmp/f")),
            Path::new("."),
            None,
        )
    };
    assert_eq!(listed(sq("-LP -T100").unwrap()), Vec::<String>::new());
    assert_eq!(
        listed(sq("-T50 -m8").unwrap()),
        [
            "-T50 — accepted only as -T100: every I/O goes to the target",
            "-m8 — multi-block I/O (copy or scatter/gather)"
        ]
    );
    let e = sq("-U").unwrap_err().to_string();
    assert!(e.contains("unknown SQLIO option '-U'"), "{e}");
}

fn ds(line: &str) -> Translated {
    parse_diskspd(&args(&format!("diskspd {line} /tmp/f")), None).unwrap()
}

#[test]
fn sizes_in_blocks_count_in_the_lines_block_size_wherever_it_stands() {
    let t = ds("-c100b -s1b -b8K");
    assert_eq!(t.plan.targets[0].size_bytes, Some(800 * 1024));
    assert_eq!(t.plan.runs[0].workloads[0].seq_gap_bytes, 0);
    let w = &ds("-b16K -r1b").plan.runs[0].workloads[0];
    assert_eq!((w.align_bytes, w.pattern), (None, AccessPattern::Random));
    let w = &ds("-b8K -r4K -B1M:2M").plan.runs[0].workloads[0];
    assert_eq!(w.align_bytes, Some(4096));
    assert_eq!((w.offset_bytes, w.size_bytes), (1 << 20, Some(2 << 20)));
    let e = parse_diskspd(&args("diskspd -b8K -c1KB /tmp/f"), None).unwrap_err();
    assert!(e.to_string().contains("'B' after the size"), "{e}");
}

#[test]
fn threads_become_streams_and_one_worker_each() {
    let two = |line: &str| {
        let t = parse_diskspd(&args(&format!("diskspd {line} /tmp/a /tmp/b")), None).unwrap();
        let r = &t.plan.runs[0];
        (r.workers, r.workloads[0].streams, r.workloads[1].streams)
    };
    assert_eq!(two("-t3"), (Some(6), 3, 3));
    // -F: four threads, each on both targets.
    assert_eq!(two("-F4"), (Some(4), 4, 4));
    // -t1 beside -F is what diskspd writes in a -F profile (<ThreadsPerFile>1), in
    // either order: still -F.
    assert_eq!(two("-F4 -t1"), (Some(4), 4, 4));
    assert_eq!(two("-t1 -F4"), (Some(4), 4, 4));
}

// Regression: `-F2 -t2` ran the last switch given (here -t2); diskspd refuses the
// two together, and so does a profile with <ThreadCount> and <ThreadsPerFile> above 1.
#[test]
fn shared_and_per_target_threads_together_are_refused_at_the_t() {
    let e = parse_diskspd(&args("diskspd -F2 -t2 /tmp/a /tmp/b"), None).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("-t2 with -F2"), "{msg}");
    assert!(
        msg.starts_with("argument 3 ('-t2'): "),
        "located at -t2: {msg}"
    );
}

#[test]
fn sequential_threads_overlap_share_or_stride_as_diskspd_has_them() {
    let layout = |line: &str| {
        let w = ds(line).plan.runs[0].workloads[0].clone();
        (
            w.seq_layout,
            w.offset_increment_bytes,
            w.seq_gap_bytes,
            w.streams,
            w.qd,
        )
    };
    assert_eq!(layout("-t4 -s"), (SeqLayout::Whole, 0, 0, 4, 2));
    assert_eq!(layout("-t4 -s -T1G"), (SeqLayout::Whole, 1 << 30, 0, 4, 2));
    assert_eq!(layout("-t4 -si"), (SeqLayout::Shared, 0, 0, 4, 2));
    // VirtualClient's fill: 256 KiB blocks, each 4 KiB after the last.
    assert_eq!(
        layout("-b256K -si4K -t2"),
        (SeqLayout::Shared, 0, 4096 - 256 * 1024, 2, 2)
    );
    assert_eq!(layout("-t1 -s"), (SeqLayout::Regions, 0, 0, 1, 2));
    // -p: every outstanding I/O walks on its own.
    assert_eq!(layout("-t2 -o8 -p"), (SeqLayout::Whole, 0, 0, 16, 1));
    for bad in ["-si -T1M", "-r -s", "-s -r", "-r -T1M", "-rdpct50/50"] {
        assert!(
            parse_diskspd(&args(&format!("diskspd {bad} /tmp/f")), None).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn distributions_become_hot_bands_with_the_rest_applied_to_the_rest() {
    let bands = |line: &str| match &ds(line).plan.runs[0].workloads[0].dist {
        Distribution::Zoned { bands } => bands
            .iter()
            .map(|z| (z.io_pct, z.range_pct))
            .collect::<Vec<_>>(),
        d => panic!("{d:?}"),
    };
    assert_eq!(
        bands("-r -rdpct90/10:0/10:5/20"),
        [(90.0, 10.0), (0.0, 10.0), (5.0, 20.0), (5.0, 60.0)]
    );
    assert_eq!(
        bands("-r -c100G -rdabs90/10G"),
        [(90.0, 10.0), (10.0, 90.0)]
    );
    let t = ds("-r -rdabs90/10G");
    assert!(
        t.unsupported[0].option.starts_with("-rdabs"),
        "{:?}",
        t.unsupported
    );
    let e = parse_diskspd(&args("diskspd -r -rdpct90/100 /tmp/f"), None).unwrap_err();
    assert!(e.to_string().contains("10% of the I/O left"), "{e}");
}

#[test]
fn throttles_bursts_and_seeds_mean_what_diskspd_means() {
    let r = &ds("-b4K -t2 -g250i").plan.runs[0];
    assert_eq!(r.workloads[0].rate, Rate::Iops(500.0));
    // -g bytes per millisecond: 800 B/ms of 8 KiB blocks per thread.
    let r = &ds("-b8K -t2 -g8192").plan.runs[0];
    assert_eq!(r.workloads[0].rate, Rate::Iops(2000.0));
    let p = &ds("-t4 -o1 -i100 -j5").plan.runs[0].workloads[0].pauses;
    assert_eq!((p.think_ns, p.think_every_ios), (5_000_000, 25));
    // diskspd refuses a burst without a think time and the other way round.
    for half in ["-i100", "-j5"] {
        let args: Vec<String> = ["diskspd", half, "x"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let e = parse_diskspd(&args, None).unwrap_err().to_string();
        assert!(e.contains("need to specify -j") && e.contains(half), "{e}");
    }
    assert_eq!(ds("").plan.runs[0].seed, 0);
    assert_eq!(ds("-z42").plan.runs[0].seed, 42);
    let t = ds("-z");
    assert!(
        t.plan.warnings.iter().any(|w| w.starts_with("-z: seed")),
        "{:?}",
        t.plan.warnings
    );
}

#[test]
fn write_content_is_diskspds() {
    let pattern = |line: &str| ds(line).plan.data.pattern.map(|p| p.bytes().to_vec());
    assert_eq!(pattern("-w100"), Some((0..=255u8).collect::<Vec<_>>()));
    assert_eq!(pattern("-w100 -Z"), Some(vec![0]));
    assert_eq!(pattern("-w100 -Zr"), None);
    assert_eq!(pattern("-w0"), None);
    let t = ds("-w100 -Z20M");
    assert_eq!(t.plan.data.pattern, None);
    assert!(
        t.plan.warnings.iter().any(|w| w.starts_with("-Z20971520")),
        "{:?}",
        t.plan.warnings
    );
    let t = ds("-w100 -Z1M,/tmp/src");
    assert!(
        t.unsupported[0].option.contains("read from a file"),
        "{:?}",
        t.unsupported
    );
}

#[test]
fn affinity_and_switch_order_follow_diskspd() {
    assert_eq!(ds("-a3,1").plan.runs[0].cpus, Some(vec![3, 1]));
    assert_eq!(ds("-ag0,2,3").plan.runs[0].cpus, Some(vec![2, 3]));
    assert!(parse_diskspd(&args("diskspd -ag1,0 /tmp/f"), None).is_err());
    assert_eq!(ds("-a1 -n").plan.runs[0].cpus, None);
    let e = parse_diskspd(&args("diskspd /tmp/f -b8K"), None).unwrap_err();
    assert!(e.to_string().contains("before the targets"), "{e}");
}

#[test]
fn mixed_random_and_sequential_is_random_pct_with_its_differences_said() {
    use crate::plan::settings::declared::RANDOM_PCT;
    let mixed = |line: &str| {
        let t = ds(line);
        let w = &t.plan.runs[0].workloads[0];
        assert_eq!(w.pattern, AccessPattern::Random, "{line}");
        (w.settings.ratio(&RANDOM_PCT), t.plan.warnings.clone())
    };
    let (pct, said) = mixed("-rs30");
    assert_eq!(pct, 30.0);
    assert!(said.iter().all(|s| !s.starts_with("-rs")), "{said:?}");
    // -rs100 is -r; -r's alignment after -rs keeps the mix, as in diskspd.
    assert_eq!(mixed("-rs100").0, 100.0);
    let (pct, said) = mixed("-rs40 -r4K -w30 -b8K");
    assert_eq!(pct, 40.0);
    let ours: Vec<_> = said.iter().filter(|s| s.starts_with("-rs40")).collect();
    assert_eq!(
        ours.len(),
        2,
        "direction kept and the alignment step: {said:?}"
    );
    assert!(
        ours[0].contains("-w30") && ours[1].contains("4096 bytes"),
        "{ours:?}"
    );
    for (bad, why) in [
        ("-rs0", "from 1 to 100"),
        ("-rs30 -rs40", "given twice"),
        ("-s -rs30", "conflicts"),
        ("-rs101", "percentage"),
    ] {
        let e = parse_diskspd(&args(&format!("diskspd {bad} /tmp/f")), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{bad}: {e}");
    }
}

/// `diskspd -X<dir>/p.xml ARGS` as the product reads it, `text` written to `p.xml` in a
/// fresh directory first.
pub(crate) fn parse_profile_text(
    text: &str,
    line_args: &[String],
) -> Result<Translated, CompatError> {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("p.xml");
    std::fs::write(&p, text).unwrap();
    let mut all = vec![format!("-X{}", p.display())];
    all.extend(line_args.iter().cloned());
    parse_diskspd(&all, None)
}

/// A profile of one target at `path`, with `extra` in its <TimeSpan>.
fn profile(path: &str, extra: &str) -> String {
    format!(
        "<Profile><TimeSpans><TimeSpan>{extra}<Targets><Target><Path>{path}</Path>\
         <BlockSize>4096</BlockSize></Target></Targets></TimeSpan></TimeSpans></Profile>"
    )
}

#[test]
fn a_profile_takes_diskspds_line_switches_and_template_paths() {
    let text = profile("*1", "<Duration>60</Duration>");
    let t = parse_profile_text(&text, &args("-d5 -z3 /tmp/a")).unwrap();
    let run = &t.plan.runs[0];
    assert_eq!((run.duration_ns, run.seed), (Some(5_000_000_000), 3));
    assert_eq!(t.plan.targets[0].uri, "/tmp/a");
    let e = parse_profile_text(&text, &[]).unwrap_err();
    assert!(e.to_string().contains("p.xml:1:"), "{e}");
    assert!(e.to_string().contains("template target *1"), "{e}");
    let e = parse_profile_text(&text, &args("/tmp/a /tmp/b")).unwrap_err();
    assert!(
        e.to_string().contains("'/tmp/b' substitutes no template"),
        "{e}"
    );
    let e = parse_profile_text(&text, &args("-b8K /tmp/a")).unwrap_err();
    assert!(
        e.to_string()
            .contains("with -X diskspd takes no switch but"),
        "{e}"
    );
}

#[test]
fn profile_elements_are_located_and_checked() {
    let text = "<Profile>\n  <TimeSpans>\n    <TimeSpan>\n      <Duration>ten</Duration>";
    let e = parse_profile_text(text, &[]).unwrap_err();
    assert!(e.to_string().starts_with("p.xml:"), "{e}");
    let bad = |extra: &str| {
        parse_profile_text(&profile("/tmp/f", extra), &[])
            .unwrap_err()
            .to_string()
    };
    assert!(bad("<Duration>ten</Duration>").contains("p.xml:1:31: <Duration>ten"));
    assert!(bad("<MeasureLatency>1</MeasureLatency>").contains("give true or false"));
    assert!(bad("<Duration>1</Duration><Duration>2</Duration>").contains("given twice"));
    assert!(bad("<Threads>2</Threads>").contains("<Threads> is no element of <TimeSpan>"));
    let ok = |extra: &str| parse_profile_text(&profile("/tmp/f", extra), &[]);
    // Elements whose switch the table lists are listed, at the element.
    let t = ok("<RequestCount>4</RequestCount>").unwrap();
    assert_eq!(t.unsupported.len(), 1, "{:?}", t.unsupported);
    assert!(t.unsupported[0]
        .option
        .starts_with("<RequestCount> (-O4) — "));
    assert_eq!(t.unsupported[0].location, "p.xml:1:31");
    let t = ok("<Affinity><AffinityAssignment>1</AffinityAssignment>\
                <AffinityGroupAssignment Group=\"0\" Processor=\"3\"/></Affinity>")
    .unwrap();
    assert_eq!(t.plan.runs[0].cpus, Some(vec![1, 3]));
    assert!(
        ok("<Affinity><AffinityGroupAssignment Group=\"1\" Processor=\"0\"/></Affinity>").is_err()
    );
}

#[test]
fn the_documentation_names_every_profile_element() {
    let doc = include_str!("../../../../docs/compat-diskspd.md");
    for e in diskspd_options::DISKSPD_XML {
        assert!(
            doc.contains(&format!("`<{}>`", e.name)),
            "docs/compat-diskspd.md does not name <{}>",
            e.name
        );
    }
}
