//! `ioscope vdbench -f PARM -o DIR`: vdbench's summary.html, totals.html and
//! flatfile.html, read back as scripts read them — flatfile.html by column name, as
//! vdbench's `parseflat` does — and held against the result JSON of the same run.

use super::*;
use std::collections::HashMap;

/// flatfile.html's rows as column name → value, as parseflat reads them: the header
/// is the line starting with a blank, rows are the lines after it.
fn parse_flat(text: &str) -> Vec<HashMap<String, String>> {
    let mut lines = text.lines().skip_while(|l| !l.starts_with(' '));
    let head: Vec<&str> = lines
        .next()
        .expect("a header line")
        .split_whitespace()
        .collect();
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(cells.len(), head.len(), "{l}");
            head.iter()
                .zip(cells)
                .map(|(h, c)| (h.to_string(), c.to_string()))
                .collect()
        })
        .collect()
}

fn num(row: &HashMap<String, String>, col: &str) -> f64 {
    row.get(col)
        .unwrap_or_else(|| panic!("no column {col}"))
        .parse()
        .unwrap()
}

/// Within the file's rounding: 4 decimals, or 1e-6 relative for large figures.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-4 + 1e-6 * b.abs()
}

/// Runs `parm` with `-o DIR` and `--json`; returns the result and DIR.
fn run_with_output(d: &Path, parm: &str) -> (Ran, PathBuf) {
    let p = d.join("t.parm");
    std::fs::write(&p, parm).unwrap();
    let out = d.join("out");
    let r = ioscope_to(
        &d.join("r.json"),
        [
            "vdbench",
            "-f",
            p.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    )
    .expect_code(0);
    (r, out)
}

/// Checks flatfile.html and summary.html against the result: a row per interval
/// and an average per run, with the result's rate, response time and MB/sec.
fn check_files(r: &Ran, out: &Path, fs: bool) {
    let flat = std::fs::read_to_string(out.join("flatfile.html")).unwrap();
    let summary = std::fs::read_to_string(out.join("summary.html")).unwrap();
    let totals = std::fs::read_to_string(out.join("totals.html")).unwrap();
    let rows = parse_flat(&flat);
    let mut at = 0;
    for run in &r.doc.runs {
        let rd = run.name.split_whitespace().next().unwrap();
        for (k, iv) in run.intervals.iter().enumerate() {
            let row = &rows[at];
            at += 1;
            assert_eq!(
                (row["Run"].as_str(), row["Interval"].clone()),
                (rd, (k + 1).to_string())
            );
            assert!(close(num(row, "rate"), iv.iops), "{row:?} vs {}", iv.iops);
            assert!(close(num(row, "resp"), iv.lat_us.mean / 1e3), "{row:?}");
            let mb = iv.bytes as f64 / iv.duration_s / (1u64 << 20) as f64;
            assert!(close(num(row, "MB/sec"), mb), "{row:?} vs {mb}");
        }
        let avg = &rows[at];
        at += 1;
        let first = run.intervals.iter().position(|i| !i.warmup).unwrap() + 1;
        assert_eq!(
            avg["Interval"],
            format!("avg_{first}-{}", run.intervals.len())
        );
        assert!(close(num(avg, "rate"), run.totals.all.iops), "{avg:?}");
        assert!(close(
            num(avg, "resp"),
            run.totals.all.latency_us.mean / 1e3
        ));
        assert!(close(num(avg, "MB/sec"), run.totals.all.mibps), "{avg:?}");
        if fs {
            // Every operation's rate (reads and writes of bytes apart from getattr,
            // counted as reads in the result) adds up to ReqstdOps.
            let ops: f64 = avg
                .iter()
                .filter(|(k, _)| k.ends_with("_rate"))
                .map(|(k, _)| num(avg, k))
                .sum();
            assert!((ops - num(avg, "rate")).abs() < 1e-2, "{avg:?}");
        }
        // summary.html: the interval lines and the average line of this run.
        let block = summary
            .split("Starting RD=")
            .nth(at_run(r, run) + 1)
            .unwrap();
        let lines: Vec<&str> = block
            .lines()
            .filter(|l| l.as_bytes().get(2) == Some(&b':') && l.split_whitespace().count() > 3)
            .collect();
        assert_eq!(lines.len(), run.intervals.len() + 1, "{block}");
        let rate: f64 = lines
            .last()
            .unwrap()
            .split_whitespace()
            .nth(2)
            .unwrap()
            .parse()
            .unwrap();
        // Printed with at most 2 decimals (fewer when the number is wide).
        assert!(
            (rate - run.totals.all.iops).abs() <= 0.5 + 1e-3 * rate,
            "{rate}"
        );
        assert!(totals.contains(&format!("avg_{first}-{}", run.intervals.len())));
    }
    assert_eq!(at, rows.len(), "no row left over");
}

fn at_run(r: &Ran, run: &ioscope::result::RunResult) -> usize {
    r.doc
        .runs
        .iter()
        .position(|x| std::ptr::eq(x, run))
        .unwrap()
}

#[test]
fn raw_io_runs_write_vdbench_files() {
    let d = tempfile::tempdir().unwrap();
    let lun = d.path().join("lun");
    let parm = format!(
        "sd=sd1,lun={},size=4m,threads=2\n\
         wd=wd1,sd=sd1,xfersize=4k,rdpct=70,seekpct=100\n\
         rd=rd1,wd=wd1,iorate=max,elapsed=3,interval=1\n",
        lun.display()
    );
    let (r, out) = run_with_output(d.path(), &parm);
    let flat = std::fs::read_to_string(out.join("flatfile.html")).unwrap();
    let head = flat.lines().find(|l| l.starts_with(' ')).unwrap();
    let cols: Vec<&str> = head.split_whitespace().collect();
    // vdbench 5.04's raw-I/O columns, in its order.
    assert_eq!(
        cols[..14],
        [
            "tod",
            "timestamp",
            "Run",
            "Interval",
            "reqrate",
            "rate",
            "MB/sec",
            "bytes/io",
            "read%",
            "resp",
            "read_resp",
            "write_resp",
            "resp_max",
            "resp_std"
        ]
    );
    check_files(&r, &out, false);
    let rows = parse_flat(&flat);
    assert_eq!(rows[0]["xfersize"], "4096");
    assert_eq!(num(&rows[0], "rdpct"), 70.0);
}

#[test]
fn file_system_runs_write_vdbench_files_with_each_operation() {
    let d = tempfile::tempdir().unwrap();
    let anchor = d.path().join("anchor");
    std::fs::create_dir(&anchor).unwrap();
    let parm = format!(
        "fsd=fsd1,anchor={},depth=1,width=2,files=8,size=8k\n\
         fwd=default,fsd=fsd1,xfersize=4k,fileio=sequential,fileselect=random\n\
         fwd=fr,operation=read\nfwd=fc,operation=create\nfwd=fd,operation=delete\n\
         fwd=fg,operation=getattr\n\
         rd=rd1,fwd=f*,fwdrate=max,format=yes,elapsed=3,interval=1\n",
        anchor.display()
    );
    let (r, out) = run_with_output(d.path(), &parm);
    check_files(&r, &out, true);
    let rows = parse_flat(&std::fs::read_to_string(out.join("flatfile.html")).unwrap());
    let run = r.run(1);
    let avg = rows.last().unwrap();
    // Each operation's rate is its workload's; together they are the run's rate.
    let mut sum = 0.0;
    for (w, col) in
        run.workloads
            .iter()
            .zip(["Read_rate", "Create_rate", "Delete_rate", "Getattr_rate"])
    {
        assert!(close(num(avg, col), w.totals.all.iops), "{col}: {avg:?}");
        sum += num(avg, col);
    }
    assert!(close(sum, num(avg, "rate")) || (sum - num(avg, "rate")).abs() < 1e-3);
    for op in [
        "Mkdir", "Rmdir", "Open", "Close", "Setattr", "Access", "Copy", "Move",
    ] {
        assert_eq!(
            num(avg, &format!("{op}_rate")),
            0.0,
            "{op} was not asked for"
        );
    }
}
