//! `ioscope curve`: latency against load. A closed-loop run measures the maximum;
//! open-loop runs at fractions of it trace the curve (vdbench's `iorate=curve`); an
//! SLA search brackets and bisects the rate until the chosen percentile sits just
//! within a bound ("max IOPS at p99 ≤ 0.5 ms"). Every run is kept in the result, with
//! the `curve` summary beside them.

use super::{AppError, BoundError, CurveInvocation, LatencyBound, Outcome, Output, Session};
use crate::plan::model::{CurveSpec, Plan, Rate, RunSpec};
use crate::plan::units::{parse_duration_ns, HumanBytes};
use crate::result::{Curve, CurvePoint, LatencyStats, RunResult, Sla};
use crate::run::RunOptions;

/// Default curve points, % of the measured maximum (vdbench's curve).
pub use crate::plan::model::DEFAULT_CURVE_POINTS_PCT as DEFAULT_POINTS;
/// SLA search stops when the bracket is this narrow, relative to its top.
const SLA_RESOLUTION: f64 = 0.02;
/// Most probe runs an SLA search makes.
const SLA_MAX_PROBES: usize = 20;

impl LatencyBound {
    /// Parses "p99=0.5ms", "p99.9=2ms", "mean=200us".
    pub fn parse(text: &str) -> Result<Self, BoundError> {
        let (name, dur) = text.split_once('=').ok_or(BoundError::Shape)?;
        let name = name.trim().to_ascii_lowercase();
        if stat(&LatencyStats::default(), &name).is_none() {
            return Err(BoundError::Statistic);
        }
        let ns = parse_duration_ns(dur)?;
        Ok(LatencyBound {
            name,
            bound_us: ns as f64 / 1000.0,
        })
    }

    /// The statistic's value in a result, µs.
    pub fn value(&self, l: &LatencyStats) -> f64 {
        stat(l, &self.name).unwrap_or(f64::INFINITY)
    }

    fn holds(&self, r: &RunResult) -> bool {
        r.totals.all.ios > 0 && self.value(&r.totals.all.latency_us) <= self.bound_us
    }

    fn describe(&self) -> String {
        let b = if self.bound_us >= 100.0 {
            format!("{} ms", trim(self.bound_us / 1000.0))
        } else {
            format!("{} µs", trim(self.bound_us))
        };
        format!("{} ≤ {b}", self.name)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn stat(l: &LatencyStats, name: &str) -> Option<f64> {
    Some(match name {
        "mean" => l.mean,
        "p50" => l.p50,
        "p90" => l.p90,
        "p95" => l.p95,
        "p99" => l.p99,
        "p99.9" | "p99_9" => l.p99_9,
        "p99.99" | "p99_99" => l.p99_99,
        "max" => l.max,
        _ => return None,
    })
}

/// Groups digits: 62400 → "62,400".
fn thousands(v: f64) -> String {
    let s = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The run at `rate` total IOPS, split over the workloads by their stream counts.
/// The curve's run at `rate` (None: closed loop), named `prefix` + `name`.
fn at_rate(base: &RunSpec, prefix: &str, name: String, rate: Option<f64>) -> RunSpec {
    let mut r = base.clone();
    r.name = format!("{prefix}{name}");
    let streams: u64 = r.total_streams().max(1);
    for w in &mut r.workloads {
        w.rate = match rate {
            None => Rate::Max,
            Some(total) => Rate::Iops((total * w.streams as f64 / streams as f64).max(1.0)),
        };
    }
    r
}

fn point(run: usize, pct: f64, requested: f64, r: &RunResult) -> CurvePoint {
    CurvePoint {
        run,
        pct_of_max: pct,
        requested_iops: requested,
        achieved_iops: r.totals.all.iops,
        mbps: r.totals.all.mbps,
        latency_us: LatencyStats {
            spectrum: Vec::new(),
            cdf: Vec::new(),
            ..r.totals.all.latency_us.clone()
        },
    }
}

/// "4 KiB random, 50% read, 10 GiB working set".
fn shape_words(r: &RunSpec, ws_bytes: Option<u64>) -> String {
    let w = &r.workloads[0];
    let bs =
        w.bs.single()
            .map(|b| HumanBytes(b).to_string())
            .unwrap_or_else(|| "mixed-size".into());
    let pattern = match w.pattern {
        crate::plan::model::AccessPattern::Random => "random",
        crate::plan::model::AccessPattern::Sequential => "sequential",
    };
    let mut s = format!("{bs} {pattern}, {}% read", w.read_pct);
    if let Some(b) = ws_bytes {
        s.push_str(&format!(", {} working set", HumanBytes(b)));
    }
    s
}

/// What a curve measures over its run: the points (% of the maximum), a bound that
/// stops the points early, and a bound to search the highest rate within.
#[derive(Debug, Clone, PartialEq)]
pub struct CurveRequest {
    pub points: Vec<f64>,
    pub stop: Option<LatencyBound>,
    pub sla: Option<LatencyBound>,
}

impl CurveRequest {
    /// From the curve a job description asked for (vdbench's `iorate=curve`, fio's
    /// `latency_target`).
    pub fn from_spec(spec: &CurveSpec) -> Result<Self, AppError> {
        let bound = |what: &'static str, t: &Option<String>| {
            t.as_deref()
                .map(|t| {
                    LatencyBound::parse(t).map_err(|source| AppError::CurveBound {
                        what,
                        text: t.to_string(),
                        source,
                    })
                })
                .transpose()
        };
        if let Some(p) = spec
            .points_pct
            .iter()
            .find(|p| !(p.is_finite() && **p > 0.0 && **p <= 1000.0))
        {
            return Err(AppError::Refused(format!(
                "the plan's curve: point {p} is not a percentage"
            )));
        }
        Ok(CurveRequest {
            points: spec.points_pct.clone(),
            stop: bound("stop_latency", &spec.stop_latency)?,
            sla: bound("max_latency", &spec.max_latency)?,
        })
    }
}

/// `ioscope curve`. A job whose run carries a curve (vdbench's `iorate=curve`) is
/// measured as it says unless `--points`, `--stop-latency` or `--max-latency` are
/// given.
pub fn curve(a: CurveInvocation) -> Result<i32, AppError> {
    let CurveInvocation {
        mut run,
        points,
        stop_latency: stop,
        max_latency: sla,
    } = a;
    let flags_given = points.is_some() || stop.is_some() || sla.is_some();
    let req = match run.plan.runs.first().and_then(|r| r.curve.clone()) {
        Some(spec) if !flags_given => CurveRequest::from_spec(&spec)?,
        _ => CurveRequest {
            points: match points {
                Some(p) => p,
                None if sla.is_some() => Vec::new(),
                None => DEFAULT_POINTS.to_vec(),
            },
            stop,
            sla,
        },
    };
    for r in &mut run.plan.runs {
        r.curve = None;
    }
    Ok(run_curve(&run.plan, &req, &run.output, &run.opts, run.command)?.exit_code)
}

/// Measures the curve `req` over the plan's one run: `ioscope curve`, and `ioscope
/// run` on a job that asks for a curve. The result holds every run and the `curve`
/// summary beside them.
pub fn run_curve(
    plan: &Plan,
    req: &CurveRequest,
    output: &Output,
    opts: &RunOptions,
    command: Vec<String>,
) -> Result<Outcome, AppError> {
    // A replay's rate is its trace's: the curve's fractions of a maximum rate would
    // not be what was measured.
    let replays = plan.runs.iter().flat_map(|r| &r.workloads).find(|w| {
        let trace = &crate::plan::settings::declared::TRACE;
        !w.settings.get(trace).as_str().is_empty()
    });
    if let Some(w) = replays {
        return Err(AppError::Refused(format!(
            "workload '{}' replays a trace, whose rate is the trace's: a curve cannot \
             set it (use --speed to replay faster or slower)",
            w.name
        )));
    }
    if plan.runs.len() != 1 {
        return Err(AppError::Refused(format!(
            "a curve needs exactly one run; this plan has {} (no sweeps with curve)",
            plan.runs.len()
        )));
    }
    let base = &plan.runs[0];
    check_curve_run(base)?;
    crate::run::check(base, &plan.targets, opts).map_err(AppError::Check)?;
    let mut s = Session::start(plan, output, opts, command)?;
    measure_curve(&mut s, base, "", req)?;
    s.finish()
}

/// A curve's run needs a duration: each point runs that long.
pub(super) fn check_curve_run(base: &RunSpec) -> Result<(), AppError> {
    if base.duration_ns.is_none() {
        return Err(AppError::Refused(format!(
            "run '{}': a curve needs a duration for each point (--duration, or fio's \
             runtime)",
            base.name
        )));
    }
    Ok(())
}

/// Says what the curve will run, and tells the session's status line: its length is
/// known ahead unless an SLA search follows the points.
fn announce(s: &mut Session, base: &RunSpec, req: &CurveRequest) -> Result<(), AppError> {
    let (points, sla) = (&req.points, &req.sla);
    let total = 1 + points.len() + if sla.is_some() { SLA_MAX_PROBES } else { 0 };
    let per_run_s = (base.warmup_ns + base.duration_ns.unwrap_or(0)) as f64 / 1e9;
    s.say(&format!(
        "curve: a max run and {} points{}, {:.0} s each (at most {} runs, about {:.0} s)",
        points.len(),
        if sla.is_some() {
            " plus an SLA search"
        } else {
            ""
        },
        per_run_s,
        total,
        total as f64 * per_run_s
    ))?;
    let known = sla.is_none().then_some(1 + points.len());
    s.expect(known, known.map(|n| n as f64 * per_run_s));
    Ok(())
}

/// Measures the curve `req` over `base` in the session: its max run, its points and
/// SLA search are the session's next runs (named `prefix` + "max", "20%", …), and
/// the summary is added to the document's `curves`.
pub(super) fn measure_curve(
    s: &mut Session,
    base: &RunSpec,
    prefix: &str,
    req: &CurveRequest,
) -> Result<(), AppError> {
    let (points, stop, sla) = (&req.points, &req.stop, &req.sla);
    announce(s, base, req)?;
    s.phase(crate::metrics::Phase::CurvePoint(0));
    let mut curve = Curve::default();
    let max = s
        .run(&at_rate(base, prefix, "max".into(), None), " (closed loop)")?
        .clone();
    curve.max_iops = max.totals.all.iops;
    // Its index in the document: runs before the curve's come first.
    curve
        .points
        .push(point(s.doc.runs.len() - 1, 100.0, 0.0, &max));
    if curve.max_iops <= 0.0 {
        return Err(AppError::Failed(
            "the max run completed no I/O; no curve to draw".into(),
        ));
    }
    for (k, &pct) in points.iter().enumerate() {
        // vdbench's pause= comes before each next run, a curve's points included.
        s.pause(base)?;
        if s.stopped() {
            break;
        }
        s.phase(crate::metrics::Phase::CurvePoint(k as u64 + 1));
        let rate = curve.max_iops * pct / 100.0;
        let r = s
            .run(
                &at_rate(base, prefix, format!("{pct}%"), Some(rate)),
                &format!(" ({:.0} IOPS)", rate),
            )?
            .clone();
        curve
            .points
            .push(point(s.doc.runs.len() - 1, pct, rate, &r));
        if let Some(b) = stop {
            if !b.holds(&r) {
                curve.stopped = Some(format!(
                    "stopped at {pct}%: {} = {:.1} µs exceeds {}",
                    b.name,
                    b.value(&r.totals.all.latency_us),
                    b.describe()
                ));
                break;
            }
        }
    }
    if let Some(b) = sla {
        curve.sla = Some(search(s, (base, prefix), &curve, b)?);
    }
    print_curve(&curve, &s.doc.runs)?;
    if let (Some(found), Some(b)) = (&curve.sla, sla) {
        print_sla(s, base, found, b)?;
    }
    s.doc.curves.push(curve);
    s.save()
}

/// The SLA search's answer in one line: the rate that keeps the bound, for the
/// workload's shape.
fn print_sla(s: &Session, base: &RunSpec, found: &Sla, b: &LatencyBound) -> Result<(), AppError> {
    let target_size = || {
        s.plan_targets()
            .iter()
            .find(|t| t.name == base.workloads[0].target)
            .and_then(|t| t.size_bytes)
    };
    let ws = base.workloads[0].size_bytes.or_else(target_size);
    if found.iops > 0.0 {
        outln!(
            "{} IOPS at {}: {}",
            thousands(found.iops),
            b.describe(),
            shape_words(base, ws)
        )?;
    } else {
        outln!(
            "no rate keeps {}: even the lowest probe exceeded it ({})",
            b.describe(),
            shape_words(base, ws)
        )?;
    }
    Ok(())
}

/// Brackets and bisects the rate until the bound's percentile sits just within it.
fn search(
    s: &mut Session,
    (base, prefix): (&RunSpec, &str),
    curve: &Curve,
    b: &LatencyBound,
) -> Result<Sla, AppError> {
    let mut sla = Sla {
        percentile: b.name.clone(),
        bound_us: b.bound_us,
        ..Default::default()
    };
    // Start from what the curve already knows.
    let mut lo = 0.0f64;
    let mut lo_measured = 0.0;
    let mut hi = curve.max_iops;
    let max_run = &s.doc.runs[curve.points[0].run];
    if b.holds(max_run) {
        sla.iops = curve.max_iops;
        sla.measured_us = b.value(&max_run.totals.all.latency_us);
        return Ok(sla);
    }
    for p in curve.points.iter().skip(1) {
        let r = &s.doc.runs[p.run];
        if b.holds(r) && p.requested_iops > lo && p.requested_iops < hi {
            lo = p.requested_iops;
            lo_measured = b.value(&r.totals.all.latency_us);
        } else if !b.holds(r) && p.requested_iops < hi {
            hi = p.requested_iops;
        }
    }
    let mut probes = 0;
    while probes < SLA_MAX_PROBES && !s.stopped() {
        if lo > 0.0 && hi - lo <= SLA_RESOLUTION * hi {
            break;
        }
        // With no passing rate yet, step down geometrically; then bisect.
        let mid = if lo == 0.0 { hi / 2.0 } else { (lo + hi) / 2.0 };
        if mid < 1.0 {
            break;
        }
        let passed = probe(s, (base, prefix), mid, b, (&mut probes, &mut sla))?;
        match passed {
            Some(measured) => (lo, lo_measured) = (mid, measured),
            None => hi = mid,
        }
    }
    sla.iops = lo;
    sla.measured_us = lo_measured;
    Ok(sla)
}

/// One SLA probe at `mid` IOPS: the bound's value if it held (and the rate was
/// kept). A failing probe is run once more before it lowers the bracket: one noisy
/// run (a stall elsewhere on the host) must not end the search too low.
fn probe(
    s: &mut Session,
    (base, prefix): (&RunSpec, &str),
    mid: f64,
    b: &LatencyBound,
    (probes, sla): (&mut usize, &mut Sla),
) -> Result<Option<f64>, AppError> {
    for attempt in 0..2 {
        *probes += 1;
        s.phase(crate::metrics::Phase::CurvePoint(s.doc.runs.len() as u64));
        let label = if attempt == 0 {
            format!(" (SLA probe at {mid:.0} IOPS)")
        } else {
            format!(" (SLA probe at {mid:.0} IOPS, confirming a failure)")
        };
        let r = s
            .run(
                &at_rate(base, prefix, format!("sla-{probes}"), Some(mid)),
                &label,
            )?
            .clone();
        sla.probes.push(s.doc.runs.len() - 1);
        // A point that could not reach its rate fails the SLA too.
        let kept_up = r
            .schedule
            .as_ref()
            .map_or(true, |sc| sc.achieved_pct >= 97.0);
        if b.holds(&r) && kept_up {
            return Ok(Some(b.value(&r.totals.all.latency_us)));
        }
    }
    Ok(None)
}

fn print_curve(c: &Curve, runs: &[RunResult]) -> Result<(), AppError> {
    outln!(
        "\n{:<10} {:>14} {:>14} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "point",
        "requested IOPS",
        "achieved IOPS",
        "MB/s",
        "mean us",
        "p50 us",
        "p99 us",
        "p99.9 us"
    )?;
    for p in &c.points {
        let l = &p.latency_us;
        outln!(
            "{:<10} {:>14} {:>14.0} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
            runs[p.run].name,
            if p.requested_iops > 0.0 {
                format!("{:.0}", p.requested_iops)
            } else {
                "max".into()
            },
            p.achieved_iops,
            p.mbps,
            l.mean,
            l.p50,
            l.p99,
            l.p99_9
        )?;
    }
    if let Some(why) = &c.stopped {
        outln!("{why}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_parse() {
        let b = LatencyBound::parse("p99=0.5ms").unwrap();
        assert_eq!(b.name, "p99");
        assert!((b.bound_us - 500.0).abs() < 1e-9);
        assert_eq!(b.describe(), "p99 ≤ 0.5 ms");
        assert!(LatencyBound::parse("p42=1ms").is_err());
        assert!(LatencyBound::parse("p99").is_err());
        assert!(LatencyBound::parse("p99=1xs").is_err());
    }

    #[test]
    fn digits_group() {
        assert_eq!(thousands(62400.0), "62,400");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1_234_567.0), "1,234,567");
    }
}
