//! Raw histograms (issue 26 items 4 and 5): the result's `hdr` fields decoded by the
//! Python `hdrhistogram` package (an implementation of HdrHistogram that shares no
//! code with ioscope's), `ioscope merge` against the sum of its parts' histograms,
//! the HdrHistogram interval log read by that package's log reader, and fio json+
//! bins.

use super::*;

/// Python's `hdrh` package, or why it cannot be used (skipped outside CI, a failure
/// in CI: scripts/test.sh installs it).
fn python_hdrh() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import hdrh.histogram, hdrh.log"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skip_or_fail("python3 with the hdrhistogram package (pip install hdrhistogram)");
    }
    ok
}

/// Runs a Python script (helpers of [`PY_HELPERS`] defined) with `args`; it asserts
/// and prints what the test checks further.
#[track_caller]
fn python(script: &str, args: &[&Path]) -> String {
    let o = Command::new("python3")
        .arg("-c")
        .arg(format!("{PY_HELPERS}\n{script}"))
        .args(args)
        .output()
        .expect("spawn python3");
    assert!(o.status.success(), "python: {}\n{}", stderr(&o), stdout(&o));
    stdout(&o)
}

/// `bucket(h, p)`: the lowest and highest value of the bucket holding the sample of
/// rank ceil(p·n/100), the rank ioscope (and the Rust crate) take a percentile at.
/// Python's own `get_value_at_percentile` rounds the rank to the nearest instead, which
/// in a sparse tail is another sample; so ioscope's percentile is checked to lie in
/// the bucket of its own rank, as this package decodes it: equal to the histogram's
/// precision.
const PY_HELPERS: &str = r#"
import json, math, sys
from hdrh.histogram import HdrHistogram
def bucket(h, p):
    rank = max(1, math.ceil(p * h.get_total_count() / 100 - 1e-9))
    seen = 0
    for it in h.get_recorded_iterator():
        seen += it.count_at_value_iterated_to
        if seen >= rank:
            v = it.value_iterated_to
            return h.get_lowest_equivalent_value(v), h.get_highest_equivalent_value(v)
    raise AssertionError("rank beyond the count")
def check(h, lat, what):
    for p, key in ((50, 'p50'), (99, 'p99'), (99.9, 'p99_9')):
        lo, hi = bucket(h, p)
        got = lat[key] * 1000
        assert lo - 1 <= got <= hi + 1, f"{what} {key}: ioscope {got} ns, bucket [{lo}, {hi}]"
"#;

/// Every encoded histogram of a run decodes, holds the run's I/Os, and puts
/// ioscope's p50/p99/p99.9 in the bucket of their rank; the histograms of a run add
/// well under 64 KiB to its JSON (here open loop, so service time is carried too).
#[test]
fn raw_histograms_decode_in_python_to_ioscopes_percentiles() {
    if !python_hdrh() {
        return;
    }
    let ran = run_json(&[
        "run",
        "--target",
        "sim:1g?service=200us&dist=exp&servers=4",
        "--rw",
        "randrw",
        "--rate",
        "4000",
        "--duration",
        "2s",
        "--warmup",
        "0",
    ]);
    let out = python(
        r#"
d = json.load(open(sys.argv[1]))
size = 0
for r in d['runs']:
    for k in ('read', 'write'):
        t = r['totals'][k]
        for field, lat in (('hdr', 'latency_us'), ('service_hdr', 'service_us')):
            h = HdrHistogram.decode(t[field])
            assert h.get_total_count() == t['ios'], (k, field, h.get_total_count(), t['ios'])
            check(h, t[lat], k + ' ' + field)
            size += len(t[field])
print(size)
"#,
        &[&ran.json],
    );
    let bytes: usize = out.trim().parse().expect("size printed");
    assert!(ran.run(0).totals.read.ios > 1000, "enough I/Os to test");
    assert!(
        bytes < 64 * 1024,
        "raw histograms add {bytes} bytes to the run"
    );
}

/// Two processes each running half of one workload at once, merged: the merged
/// histogram is bucket for bucket the sum of the two (added by Python's package), its
/// percentiles those of that sum, and its IOPS the sum of the parts' over the time
/// they both ran.
#[test]
fn merge_of_two_halves_is_exact() {
    if !python_hdrh() {
        return;
    }
    let d = tempdir();
    let part = |i: usize| d.path().join(format!("part{i}.json"));
    // Open loop at a set rate, so each half's rate is steady over its run.
    let spawn = |i: usize| {
        ioscope()
            .args(["run", "--target", "sim:1g?service=150us&dist=exp&servers=8"])
            .args(["--rw", "randrw", "--rate", "1000", "--duration", "3s"])
            .args(["--warmup", "0", "-q", "--json"])
            .arg(part(i))
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("spawn ioscope")
    };
    let (mut a, mut b) = (spawn(1), spawn(2));
    assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
    let merged = d.path().join("merged.json");
    let o = ioscope()
        .args(["merge"])
        .args([part(1), part(2)])
        .arg("-o")
        .arg(&merged)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    python(
        r#"
parts = [json.load(open(p))['runs'][0] for p in sys.argv[1:3]]
m = json.load(open(sys.argv[3]))['runs'][0]
for k in ('read', 'write'):
    # Each decoded histogram's range is its own encoding's (the values it holds);
    # their sum needs one wide enough for both: ioscope's 1 ns .. 1 h.
    both = HdrHistogram(1, 3600 * 10**9, 3)
    both.add(HdrHistogram.decode(parts[0]['totals'][k]['hdr']))
    both.add(HdrHistogram.decode(parts[1]['totals'][k]['hdr']))
    got = HdrHistogram.decode(m['totals'][k]['hdr'])
    assert got.get_total_count() == both.get_total_count() == m['totals'][k]['ios']
    # Bucket for bucket (the layouts agree up to the shorter one's length; past it
    # the wider one holds nothing).
    for i in range(max(both.counts_len, got.counts_len)):
        a = got.get_count_at_index(i) if i < got.counts_len else 0
        b = both.get_count_at_index(i) if i < both.counts_len else 0
        assert a == b, (k, i)
    check(both, m['totals'][k]['latency_us'], 'merged ' + k)
"#,
        &[&part(1), &part(2), &merged],
    );
    let doc: ioscope::result::ResultDoc =
        serde_json::from_value(read_json(&merged)).expect("a result");
    let (m, p1, p2) = (
        &doc.runs[0],
        &read_result(&part(1)).runs[0],
        &read_result(&part(2)).runs[0],
    );
    assert_eq!(m.parts.len(), 2);
    assert_eq!(m.totals.all.ios, p1.totals.all.ios + p2.totals.all.ios);
    // The halves start within a few ms of each other, so the common window is nearly
    // all of each; at a set rate the sum over it is the sum of the two rates. 5 %
    // allows for the window's edges on a loaded 2-core machine.
    let sum = p1.totals.all.iops + p2.totals.all.iops;
    let got = m.totals.all.iops;
    assert!(
        (got - sum).abs() < 0.05 * sum,
        "merged {got} IOPS, parts {sum}"
    );
    assert!(m.duration_s <= p1.duration_s.max(p2.duration_s) + 0.05);
}

fn read_result(p: &Path) -> ioscope::result::ResultDoc {
    serde_json::from_value(read_json(p)).expect("a result")
}

/// What cannot be merged exactly is refused, naming the file and why, and nothing
/// is written: a result without raw histograms, and runs of different workloads.
#[test]
fn merge_refuses_what_it_cannot_merge_exactly() {
    let d = tempdir();
    let a = d.path().join("a.json");
    let base = [
        "run",
        "--target",
        "null:64m",
        "--duration",
        "300ms",
        "--warmup",
        "0",
    ];
    ioscope_to(&a, base.iter().chain(&["--rw", "randread", "-q"])).expect_code(0);
    let mut old = read_json(&a);
    old["runs"][0]["totals"]["read"]
        .as_object_mut()
        .unwrap()
        .remove("hdr");
    let old_path = d.path().join("old.json");
    std::fs::write(&old_path, old.to_string()).unwrap();
    let out = d.path().join("m.json");
    let merge = |other: &Path| {
        ioscope()
            .args(["merge"])
            .args([&a, other])
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap()
    };
    let o = merge(&old_path);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("old.json") && stderr(&o).contains("no raw histogram"));
    let w = d.path().join("w.json");
    ioscope_to(&w, base.iter().chain(&["--rw", "randwrite", "-q"])).expect_code(0);
    let o = merge(&w);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("read share"), "{}", stderr(&o));
    assert!(!out.exists(), "nothing written");
}

/// `--hdr-log` is read by Python's HistogramLogReader: per tag, the measured
/// intervals add up to the run's totals; `--histograms intervals` puts the same
/// histograms in each interval row.
#[test]
fn hdr_log_and_interval_histograms_add_up_to_the_totals() {
    if !python_hdrh() {
        return;
    }
    let d = tempdir();
    let log = d.path().join("lat.hlog");
    let ran = run_json(&[
        "run",
        "--target",
        "sim:1g?service=100us&dist=exp",
        "--rw",
        "randrw",
        "--duration",
        "1s",
        "--warmup",
        "500ms",
        "--interval",
        "250ms",
        "--histograms",
        "intervals",
        "--hdr-log",
        log.to_str().unwrap(),
    ]);
    python(
        r#"
from hdrh.log import HistogramLogReader
r = json.load(open(sys.argv[1]))['runs'][0]
reader = HistogramLogReader(sys.argv[2], HdrHistogram(1, 3600 * 10**9, 3))
counts, lines = {}, 0
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    lines += 1
    counts[h.get_tag()] = counts.get(h.get_tag(), 0) + h.get_total_count()
assert reader.get_start_time_sec() > 1.6e9, reader.get_start_time_sec()
measured = [i for i in r['intervals'] if not i['warmup']]
assert lines == 2 * len(measured), (lines, len(measured))
for k in ('read', 'write'):
    assert counts[k] == r['totals'][k]['ios'], (k, counts, r['totals'][k]['ios'])
    rows = sum(HdrHistogram.decode(i[k + '_lat_us']['hdr']).get_total_count() for i in measured)
    assert rows == r['totals'][k]['ios'], (k, rows)
"#,
        &[&ran.json, &log],
    );
}

/// fio's json+ (`ioscope fio … --output-format=json+`): each direction's
/// `clat_ns.bins` hold every I/O once.
#[test]
fn fio_json_plus_bins_sum_to_total_ios() {
    let o = run(&[
        "fio",
        "--name=x",
        "--ioengine=null",
        "--size=64m",
        "--rw=randrw",
        "--runtime=300ms",
        "--time_based",
        "--output-format=json+",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("fio JSON");
    for dir in ["read", "write"] {
        let d = &v["jobs"][0][dir];
        let bins = d["clat_ns"]["bins"].as_object().expect("bins");
        let sum: u64 = bins.values().map(|n| n.as_u64().unwrap()).sum();
        assert!(d["total_ios"].as_u64().unwrap() > 0);
        assert_eq!(sum, d["total_ios"].as_u64().unwrap(), "{dir}");
        assert!(bins.keys().all(|k| k.parse::<u64>().is_ok()), "keys are ns");
    }
    // Plain json has none.
    let o = run(&["fio", "--name=x", "--ioengine=null", "--size=64m"]
        .iter()
        .chain(&["--runtime=100ms", "--time_based", "--output-format=json"])
        .copied()
        .collect::<Vec<_>>());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("fio JSON");
    assert!(v["jobs"][0]["read"]["clat_ns"].get("bins").is_none());
}
