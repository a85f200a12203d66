//! Parameter files published in public repositories
//! (tests/fixtures/compat/published/vdbench/), run through `ioscope vdbench` with
//! only their devices, sizes and durations scaled down: the runs, mixes, sizes and
//! rates they get are the ones their authors wrote.

use super::*;

fn published(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compat/published/vdbench")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

/// The one workload of the one run, checked for (read %, block size, streams)
/// and its access pattern.
#[track_caller]
fn only_workload<'a>(r: &'a Ran, mix: (u64, u64, u64), kind: &str) -> &'a serde_json::Value {
    assert_eq!(r.doc.runs.len(), 1);
    let w = &r.wire["plan"]["runs"][0]["workloads"][0];
    let got = (
        w["read_pct"].as_u64(),
        w["bs"]["split"][0][0].as_u64(),
        w["streams"].as_u64(),
    );
    assert_eq!(got, (Some(mix.0), Some(mix.1), Some(mix.2)), "{w}");
    assert_eq!(w["pattern"]["kind"], kind);
    w
}

/// A simulated device in virtual time: no host noise, no disk space.
const SIM: &str = "sim:64m?service=100us&servers=4&time=virtual";

// Template 8 of sine-io/byte-of-vdbench: every value is a `$name` given on the
// command line, as its page runs it.
#[test]
fn published_template_runs_with_its_command_line_values() {
    let d = tempdir();
    let pf = d.path().join("reusable.parm");
    std::fs::write(&pf, published("sine-io-reusable.parm")).unwrap();
    let args = [
        "vdbench",
        "-f",
        pf.to_str().unwrap(),
        &format!("lun={SIM}"),
        "size=64m",
        "xfersize=8k",
        "rdpct=100",
        "seekpct=random",
        "iorate=100",
        "elapsed=3",
        "interval=1",
        "threads=4",
    ];
    let r = ioscope_to(&d.path().join("r.json"), args).expect_code(0);
    let w = only_workload(&r, (100, 8192, 4), "random");
    assert_eq!(w["rate"]["iops"], 100.0);
    // vdbench leaves the first interval out: 2 s measured at 100 IOPS with
    // exponential arrivals (vdbench's default): 200 ± 14 (one σ); 4 σ allowed.
    let ios = r.run(0).totals.read.ios;
    assert!(
        (144..=256).contains(&ios),
        "{ios} reads in 2 s at iorate=100"
    );
    assert!(
        (r.run(0).duration_s - 2.0).abs() < 0.5,
        "{}",
        r.run(0).duration_s
    );
}

// AlexTzib/vdbench's vdb1.txt, run with -j as its README does: validation with a
// journal, data_errors=1 (stop at the first error, ioscope's way too).
#[test]
fn published_journal_example_validates_with_a_journal() {
    let d = tempdir();
    let target = d.path().join("lun.dat");
    let parm = published("alextzib-vdb1.parm")
        .replace(
            "lun=/dev/sdc",
            &format!("lun={},size=32m", target.display()),
        )
        .replace(
            "journal=/tmp/vdb1",
            &format!("journal={}", d.path().join("jnl").display()),
        );
    let pf = d.path().join("vdb1.parm");
    std::fs::write(&pf, parm).unwrap();
    let out = d.path().join("out");
    let args = [
        "vdbench",
        "-j",
        "-f",
        pf.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "-e",
        "2",
    ];
    let r = ioscope_to(&d.path().join("r.json"), args).expect_code(0);
    only_workload(&r, (25, 65536, 4), "sequential");
    // -e 2 over elapsed=60: one interval of warm-up, one measured.
    assert!(
        (r.run(0).duration_s - 1.0).abs() < 0.5,
        "{}",
        r.run(0).duration_s
    );
    let t = &r.run(0).totals;
    assert!(t.read.ios > 0 && t.write.ios > 0, "{t:?}");
    assert_eq!(
        r.wire["plan"]["data"]["verify"], true,
        "{}",
        r.wire["plan"]["data"]
    );
    // The sd's journal= wins over -j's directory.
    assert!(d.path().join("jnl").exists(), "no journal written");
}

// claytondukes/vdbench's logzilla-single-server.vdb: one host (localhost), four
// drives, wd=default carrying sd=, forthreads=(24), maxdata=999t (the run's
// stop_after_bytes, which no run here reaches).
#[test]
fn published_single_host_file_runs_its_two_runs_here() {
    let d = tempdir();
    let mut parm = published("claytondukes-logzilla-single.parm")
        .replace("range=(1,100),", "range=(1,100),size=64m,")
        .replace("elapsed=1h", "elapsed=3")
        .replace("warmup=10", "warmup=1");
    for i in 0..4 {
        parm = parm.replace(&format!("lun=/dev/nvme{i}n1"), &format!("lun={SIM}"));
    }
    let pf = d.path().join("logzilla.parm");
    std::fs::write(&pf, parm).unwrap();
    let r = ioscope_to(
        &d.path().join("r.json"),
        ["vdbench", "-f", pf.to_str().unwrap()],
    )
    .expect_code(0);
    let names: Vec<&str> = r.doc.runs.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["rd1 threads=24", "rd2 threads=24"]);
    for (i, run) in r.doc.runs.iter().enumerate() {
        // Four sds × 24 threads, each a stream at queue depth 1.
        assert_eq!(run.streams, 96, "run {i}");
        let ws = r.wire["plan"]["runs"][i]["workloads"].as_array().unwrap();
        assert_eq!(ws.len(), 4);
        for w in ws {
            assert_eq!(
                (w["read_pct"].as_u64(), w["qd"].as_u64()),
                (Some(70), Some(1)),
                "{w}"
            );
            assert_eq!(w["bs"]["split"][0][0], 4096);
            assert_eq!(w["pattern"]["kind"], "random");
            // range=(1,100): from 1 % of the 64 MiB sd to its end.
            assert_eq!(
                w["offset_bytes"].as_u64(),
                Some(64 * 1024 * 1024 / 100),
                "{w}"
            );
        }
        let t = &run.totals;
        assert!(t.read.ios > 0 && t.write.ios > 0, "{t:?}");
        assert!((run.duration_s - 3.0).abs() < 0.5, "{}", run.duration_s);
    }
    for (i, run) in r.doc.runs.iter().enumerate() {
        let limit = &r.wire["plan"]["runs"][i]["stop_after_bytes"];
        assert_eq!(limit.as_u64(), Some(999 << 40), "{limit}");
        assert_eq!(run.end_reason.name(), "duration");
    }
}

#[test]
fn foreign_front_ends_print_help() {
    for tool in ["vdbench", "diskspd", "sqlio"] {
        let o = run(&[tool, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{tool}: {}", stderr(&o));
        assert!(
            stdout(&o).contains(&format!("Usage: ioscope {tool}")),
            "{}",
            stdout(&o)
        );
    }
    assert!(stdout(&run(&["vdbench", "--help"])).contains("name=value"));
}

/// mfinkelstine/vdbenchScripts' tms840.cfg, its rd over four sds: two wds at skew=50
/// each over sd101-sd104, one with hotband=(25,29). Reduced: the hd= lines (one
/// host here), openflags=directio (temp files), four 8 GiB sparse files with
/// size=8g, elapsed=3.
fn tms840_reduced(dir: &std::path::Path) -> String {
    let text = published("mfinkelstine-tms840.parm");
    let mut out = String::from("compratio=5\n");
    for i in 1..=4 {
        let lun = dir.join(format!("lun{i}"));
        std::fs::File::create(&lun)
            .and_then(|f| f.set_len(TMS840_SD_BYTES))
            .unwrap();
        out.push_str(&format!("sd=sd10{i},lun={},size=8g\n", lun.display()));
    }
    out.extend(
        text.lines()
            .filter(|l| l.starts_with("wd="))
            .map(|l| format!("{l}\n")),
    );
    let rd = text
        .lines()
        .find(|l| l.starts_with("rd=BL-rd_65-35rand_threads-8,"))
        .unwrap();
    out.push_str(&rd.replace("elapsed=240,interval=2", "elapsed=3,interval=1"));
    out.push('\n');
    out
}

const TMS840_SD_BYTES: u64 = 8 << 30;

/// (reads, writes) in the log, and of them those at `[lo, hi)` on any lun.
fn iolog_counts(log: &str, lo: u64, hi: u64) -> ((u64, u64), (u64, u64)) {
    let (mut all, mut low) = ((0, 0), (0, 0));
    for l in log.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (Some(&op), Some(off)) = (f.get(2), f.get(3).and_then(|o| o.parse::<u64>().ok()))
        else {
            continue;
        };
        let (a, b) = match op {
            "read" => (&mut all.0, &mut low.0),
            "write" => (&mut all.1, &mut low.1),
            _ => continue,
        };
        *a += 1;
        if (lo..hi).contains(&off) {
            *b += 1;
        }
    }
    (all, low)
}

// Issue 25: tms840's hotband=(25,29) ran uniformly over the band and its skew over
// several sds was dropped. vdbench's curve sends 32.645 % of a hot band's random
// reads to the band's first 1,024,000 bytes (HotBand's table: P(position < 1024)),
// and each wd's skew=50 is spread over its four sds: 12.5 % of the I/O per wd/sd.
#[test]
fn published_tms840_runs_its_hotband_curve_and_per_sd_skew() {
    let d = tempdir();
    let pf = d.path().join("tms840.parm");
    std::fs::write(&pf, tms840_reduced(d.path())).unwrap();
    let rec = d.path().join("rec.log");
    let r = ioscope_to(
        &d.path().join("r.json"),
        [
            "run",
            pf.to_str().unwrap(),
            "--record",
            rec.to_str().unwrap(),
        ],
    )
    .expect_code(0);
    let run = r.run(0);
    // Four sds × forthreads=2: the mix's streams, as vdbench's 8 threads.
    assert_eq!(run.streams, 8);
    let total = run.totals.all.ios as f64;
    assert!(total >= 2000.0, "only {total} I/Os");
    assert_eq!(run.workloads.len(), 8);
    // Each wd/sd pair is picked with probability 0.125 per I/O: within 5 σ.
    let bound = 5.0 * (0.125 * 0.875 / total).sqrt();
    for w in &run.workloads {
        let share = w.totals.all.ios as f64 / total;
        assert!(
            (share - 0.125).abs() < bound,
            "{}: {share} of {total}",
            w.name
        );
    }
    // The band: 25 % to 29 % of 8 GiB; the first 1,024,000 bytes of it.
    let start = TMS840_SD_BYTES / 4;
    let log = std::fs::read_to_string(&rec).unwrap();
    let ((reads, writes), (low_reads, low_writes)) = iolog_counts(&log, start, start + 1_024_000);
    // Half the reads are the hotband wd's (skew=50), 0.32645 of them in the low part,
    // up to 0.0013 more from positions 1024-1056 rounded down to a 32k record and
    // 0.003 from the tail wrapping around the 343 MB band; the uniform wd puts
    // 1,024,000 / 8 GiB of its half there. Spread uniformly, it would be 0.0015.
    let frac = low_reads as f64 / reads as f64;
    let sigma = (0.17 * 0.83 / reads as f64).sqrt();
    let (lo, hi) = (
        0.5 * 0.32645 - 5.0 * sigma,
        0.5 * (0.32645 + 0.0013 + 0.003) + 0.5 * 1.024e6 / TMS840_SD_BYTES as f64 + 5.0 * sigma,
    );
    assert!(
        (lo..hi).contains(&frac),
        "{frac} of {reads} reads in the band's first 1,024,000 bytes, not in {lo}..{hi}"
    );
    // vdbench moves writes on by 1 % of the band (3.43 MB), off the hottest reads.
    let wfrac = low_writes as f64 / writes.max(1) as f64;
    assert!(
        wfrac < 0.01,
        "{wfrac} of {writes} writes in the reads' hot spot"
    );
}

// Microsoft's Avere throughput.conf, scaled to a temp directory: one hd= host for
// its twelve (so `!host` entries become fwdWhost1, fsdhost1-0, …), four 1 MiB files
// per tree, 4 threads, 2 s runs. Its fwd=format shapes the format run: 4 threads of
// 512 KiB writes (not the fwds' own), each file written once and fsynced before the
// thread moves on (its openflags=fsync); the read fwd's o_direct reads the trees
// through O_DIRECT targets of their own. Nothing is dropped.
#[test]
fn published_avere_file_formats_with_its_fwd_format_on_expanded_hosts() {
    let d = tempdir();
    let root = d.path().join("nfs");
    let parm = published("avere-throughput.parm")
        .replace("include=azure-clients.conf", "hd=host1,system=localhost")
        .replace("/nfs/", &format!("{}/", root.display()))
        .replace("files=180,size=160m", "files=4,size=1m")
        .replace(
            "threads=36,xfersize=512k,openflags",
            "threads=4,xfersize=512k,openflags",
        )
        .replace(
            "fwd=default,threads=36,xfersize=512k",
            "fwd=default,threads=2,xfersize=64k",
        )
        .replace("elapsed=10800", "elapsed=2")
        .replace(",maxdata=1012.5g", "")
        .replace("rd=writeread1", "*")
        .replace("rd=delall1", "*");
    let pf = d.path().join("throughput.parm");
    std::fs::write(&pf, parm).unwrap();
    let args = ["vdbench", "-f", pf.to_str().unwrap()];
    let r = ioscope_to(&d.path().join("r.json"), args).expect_code(0);
    let names: Vec<&str> = r.doc.runs.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["format_for_writefiles1", "writefiles1", "readall1"]);
    let format = r.wire_run(0);
    let ws = r.wire["plan"]["runs"][0]["workloads"].as_array().unwrap();
    let trees: Vec<&str> = ws.iter().map(|w| w["name"].as_str().unwrap()).collect();
    assert_eq!(
        trees,
        [
            "format/fsdhost1-0",
            "format/fsdhost1-1",
            "format/fsdhost1-2"
        ]
    );
    for w in ws {
        assert_eq!(
            (w["streams"].as_u64(), w["bs"]["split"][0][0].as_u64()),
            (Some(4), Some(524288)),
            "{w}"
        );
    }
    // Three trees of four 1 MiB files, each written once in 512 KiB writes.
    let t = &r.run(0).totals.write;
    assert_eq!((t.ios, t.bytes), (24, 12 << 20), "{format}");
    assert_eq!(format["totals"]["flush"]["ios"], 12, "one fsync per file");
    let mut files = Vec::new();
    for n in 0..3 {
        let dir = root.join(format!("node{n}/sequential/host1-{n}"));
        for e in walk(&dir) {
            files.push(std::fs::metadata(&e).unwrap().len());
        }
    }
    assert_eq!(files, vec![1 << 20; 12]);
    // The rd's own runs keep the fwds' settings: 2 threads of 64 KiB.
    let w = &r.wire["plan"]["runs"][1]["workloads"][0];
    assert_eq!(w["name"], "fwdWhost1.write/fsdhost1-0");
    assert_eq!(
        (w["streams"].as_u64(), w["bs"]["split"][0][0].as_u64()),
        (Some(2), Some(65536))
    );
    assert_eq!(w["fsync_each_file"], true);
    let read = &r.wire["plan"]["runs"][2]["workloads"][0];
    assert_eq!(read["target"], "fsdhost1-0.o_direct", "{read}");
}

/// The files under `dir`, at any depth.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// wdongxu's OpenStack file asks `dedupratio=2,dedupunit=4k,dedupsets=33`: sequential
/// passes over an 8 MiB sd leave about half its 4 KiB units distinct, and every
/// repeated content is one of 33 sets, as vdbench groups its duplicates.
#[test]
fn published_dedupsets_repeat_the_duplicates_in_that_many_sets() {
    let d = tempdir();
    let lun = d.path().join("lun.dat");
    let general = published("wdongxu-openstack-dedup.parm")
        .lines()
        .find(|l| l.starts_with("dedupratio="))
        .unwrap()
        .to_string();
    assert_eq!(general, "dedupratio=2,dedupunit=4k,dedupsets=33");
    let pf = d.path().join("dedup.parm");
    std::fs::write(
        &pf,
        format!(
            "{general}\nsd=sd1,lun={},size=8m\n\
             wd=wd1,sd=sd1,xfersize=4k,rdpct=0,seekpct=0\n\
             rd=run1,wd=wd1,iorate=max,elapsed=60,interval=1,maxdata=8m\n",
            lun.display()
        ),
    )
    .unwrap();
    let r = ioscope_to(
        &d.path().join("r.json"),
        ["vdbench", "-f", pf.to_str().unwrap()],
    )
    .expect_code(0);
    // maxdata is checked at interval ends, as vdbench does: at least one pass.
    let writes = r.doc.runs[0].totals.write.ios;
    assert!(
        writes >= 2048,
        "{writes} writes: at least one pass of 8 MiB"
    );
    let bytes = std::fs::read(&lun).unwrap();
    let mut seen: std::collections::HashMap<&[u8], u32> = Default::default();
    for u in bytes.chunks(4096) {
        *seen.entry(u).or_default() += 1;
    }
    let repeated = seen.values().filter(|&&n| n > 1).count();
    eprintln!("{} distinct of 2048, {repeated} repeated", seen.len());
    // Each unit's last write is fresh with probability 1/2 (1024 expected, sd 23),
    // the others one of the 33 sets.
    assert!((930..1150).contains(&seen.len()), "{} distinct", seen.len());
    assert!(
        (25..=33).contains(&repeated),
        "{repeated} contents repeated: the duplicates repeat the 33 sets"
    );
}
