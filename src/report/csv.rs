//! CSV export for spreadsheets and plotting scripts: one table of run totals (one
//! row per run) and one table of intervals (one row per run × interval). Units are
//! in the column names (`_us`, `_pct`, `_s`, `mbps` = 10^6 B/s, `mibps` = 2^20 B/s)
//! and numbers keep full precision (Rust's shortest round-trip form), because these
//! files feed further computation, not eyes.

use std::fmt::Write;

use crate::result::{Cpu, IntervalLatency, LatencyStats, OpTotals, ResultDoc};

/// Both tables in one string: the runs table, an empty line, the intervals table.
/// Prefer [`runs_csv`] and [`intervals_csv`] when writing files: most CSV readers
/// expect a single table per file.
pub fn render_csv(doc: &ResultDoc) -> String {
    format!("{}\n{}", runs_csv(doc), intervals_csv(doc))
}

/// Header of [`runs_csv`].
pub const RUNS_HEADER: &str = "run,target,engine,workers,streams,duration_s,warmup_s,end_reason,interrupted,\
ios,bytes,iops,mbps,mibps,errors,queue_depth,\
lat_min_us,lat_mean_us,lat_stddev_us,lat_p50_us,lat_p90_us,lat_p95_us,lat_p99_us,lat_p99_9_us,lat_p99_99_us,lat_max_us,\
svc_mean_us,svc_p50_us,svc_p99_us,svc_p99_9_us,svc_max_us,\
read_ios,read_bytes,read_iops,read_mbps,read_errors,read_lat_mean_us,read_lat_p50_us,read_lat_p99_us,read_lat_p99_9_us,read_lat_max_us,\
write_ios,write_bytes,write_iops,write_mbps,write_errors,write_lat_mean_us,write_lat_p50_us,write_lat_p99_us,write_lat_p99_9_us,write_lat_max_us,\
cpu_user_pct,cpu_sys_pct,cpu_system_pct,cpu_us_per_io";

/// Header of [`intervals_csv`].
pub const INTERVALS_HEADER: &str =
    "run,index,t_s,duration_s,unix_s,warmup,ios,bytes,iops,mbps,read_pct,errors,\
lat_mean_us,lat_p50_us,lat_p99_us,lat_max_us,lat_stddev_us,\
read_lat_mean_us,read_lat_p50_us,read_lat_p99_us,read_lat_max_us,read_lat_stddev_us,\
write_lat_mean_us,write_lat_p50_us,write_lat_p99_us,write_lat_max_us,write_lat_stddev_us,\
queue_depth,cpu_user_pct,cpu_sys_pct,cpu_system_pct,cpu_us_per_io";

/// Run totals: a header row, then one row per run.
pub fn runs_csv(doc: &ResultDoc) -> String {
    let mut out = String::from(RUNS_HEADER);
    out.push('\n');
    for r in &doc.runs {
        let t = &r.totals;
        let mut row = vec![
            field(&r.name),
            field(&r.target),
            field(&r.engine),
            r.workers.to_string(),
            r.streams.to_string(),
            num(r.duration_s),
            num(r.warmup_s),
            field(r.end_reason.name()),
            r.interrupted.to_string(),
            t.all.ios.to_string(),
            t.all.bytes.to_string(),
            num(t.all.iops),
            num(t.all.mbps),
            num(t.all.mibps),
            t.all.errors.to_string(),
            num(t.queue_depth),
        ];
        let l = &t.all.latency_us;
        row.extend(
            [
                l.min, l.mean, l.stddev, l.p50, l.p90, l.p95, l.p99, l.p99_9, l.p99_99, l.max,
            ]
            .map(num),
        );
        let s = &t.all.service_us;
        row.extend([s.mean, s.p50, s.p99, s.p99_9, s.max].map(num));
        for o in [&t.read, &t.write] {
            direction(&mut row, o);
        }
        cpu(&mut row, &r.cpu);
        line(&mut out, &row);
    }
    out
}

/// Intervals of every run: a header row, then one row per interval, in run order.
pub fn intervals_csv(doc: &ResultDoc) -> String {
    let mut out = String::from(INTERVALS_HEADER);
    out.push('\n');
    for r in &doc.runs {
        let name = field(&r.name);
        for iv in &r.intervals {
            let mut row = vec![
                name.clone(),
                iv.index.to_string(),
                num(iv.t_s),
                num(iv.duration_s),
                num(iv.unix_s),
                iv.warmup.to_string(),
                iv.ios.to_string(),
                iv.bytes.to_string(),
                num(iv.iops),
                num(iv.mbps),
                num(iv.read_pct),
                iv.errors.to_string(),
            ];
            for l in [&iv.lat_us, &iv.read_lat_us, &iv.write_lat_us] {
                interval_latency(&mut row, l);
            }
            row.push(num(iv.queue_depth));
            cpu(&mut row, &iv.cpu);
            line(&mut out, &row);
        }
    }
    out
}

fn direction(row: &mut Vec<String>, o: &OpTotals) {
    row.extend([
        o.ios.to_string(),
        o.bytes.to_string(),
        num(o.iops),
        num(o.mbps),
        o.errors.to_string(),
    ]);
    let l: &LatencyStats = &o.latency_us;
    row.extend([l.mean, l.p50, l.p99, l.p99_9, l.max].map(num));
}

fn interval_latency(row: &mut Vec<String>, l: &IntervalLatency) {
    row.extend([l.mean, l.p50, l.p99, l.max, l.stddev].map(num));
}

fn cpu(row: &mut Vec<String>, c: &Cpu) {
    row.extend([c.user_pct, c.sys_pct, c.system_pct, c.cpu_us_per_io].map(num));
}

fn line(out: &mut String, row: &[String]) {
    let _ = writeln!(out, "{}", row.join(","));
}

/// A number in shortest round-trip form; empty for non-finite values.
fn num(v: f64) -> String {
    if v.is_finite() {
        v.to_string()
    } else {
        String::new()
    }
}

/// A text field, quoted (RFC 4180) when it holds a comma, quote or line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testdata::{doc, run};

    fn columns(line: &str) -> usize {
        // Test data has no quoted commas except where a test adds them.
        line.split(',').count()
    }

    #[test]
    fn runs_table_shape() {
        let d = doc(vec![
            run("qd1", 10_000.0, 100.0, 10, 2, 0.02, 1.0, 1),
            run("qd32", 80_000.0, 400.0, 10, 2, 0.02, 0.5, 2),
        ]);
        let csv = runs_csv(&d);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 1 + 2);
        assert_eq!(lines[0], RUNS_HEADER);
        let width = columns(RUNS_HEADER);
        assert!(lines.iter().all(|l| columns(l) == width));
        let col = |name: &str| RUNS_HEADER.split(',').position(|c| c == name).unwrap();
        let row: Vec<&str> = lines[2].split(',').collect();
        assert_eq!(row[col("run")], "qd32");
        assert_eq!(row[col("iops")].parse::<f64>().unwrap(), 80_000.0);
        let p99: f64 = row[col("lat_p99_us")].parse().unwrap();
        assert_eq!(p99, d.runs[1].totals.all.latency_us.p99);
        assert!(RUNS_HEADER.contains("lat_mean_us") && RUNS_HEADER.contains("mbps"));
    }

    #[test]
    fn intervals_table_shape() {
        let d = doc(vec![
            run("a", 10_000.0, 100.0, 7, 2, 0.02, 1.0, 1),
            run("b", 80_000.0, 400.0, 5, 0, 0.02, 1.0, 2),
        ]);
        let csv = intervals_csv(&d);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 1 + 7 + 5);
        let width = columns(INTERVALS_HEADER);
        assert!(lines.iter().all(|l| columns(l) == width));
        assert_eq!(lines.iter().filter(|l| l.contains(",true,")).count(), 2);
        let both = render_csv(&d);
        assert_eq!(both.lines().filter(|l| l.is_empty()).count(), 1);
    }

    #[test]
    fn awkward_names_are_quoted() {
        let d = doc(vec![run("a,\"b\"", 1.0, 1.0, 1, 0, 0.0, 1.0, 1)]);
        let csv = runs_csv(&d);
        assert!(csv.lines().nth(1).unwrap().starts_with("\"a,\"\"b\"\"\","));
    }
}
