//! Steady state by the SNIA PTS rule: over the last `WINDOW` rounds, the tracked
//! metric's range stays within 20 % of its average and the least-squares line's rise
//! across the window within 10 % of the average. Pure arithmetic; the caller runs
//! the rounds. Also fio's `steadystate` rule, judged within one run over a rolling
//! window of its intervals ([`SteadyWatch`]), which ends the run when it holds.

use crate::plan::model::{SteadyMetric, SteadyStop};
use crate::result::{Interval, SteadyStopResult};

/// Rounds in the judged window.
pub const WINDOW: usize = 5;
/// Most rounds before giving up.
pub const MAX_ROUNDS: usize = 25;
/// Range limit, % of the average.
pub const RANGE_LIMIT_PCT: f64 = 20.0;
/// Slope-excursion limit, % of the average.
pub const SLOPE_LIMIT_PCT: f64 = 10.0;

/// The verdict over the last `WINDOW` values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    pub reached: bool,
    pub average: f64,
    pub range_pct: f64,
    pub slope_pct: f64,
}

/// Judges the last `WINDOW` values of `rounds`; `None` until there are enough.
pub fn judge(rounds: &[f64]) -> Option<Verdict> {
    if rounds.len() < WINDOW {
        return None;
    }
    let w = &rounds[rounds.len() - WINDOW..];
    let n = w.len() as f64;
    let avg = w.iter().sum::<f64>() / n;
    if avg <= 0.0 || !avg.is_finite() {
        return Some(Verdict {
            reached: false,
            average: avg,
            range_pct: f64::INFINITY,
            slope_pct: f64::INFINITY,
        });
    }
    let (lo, hi) = w
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    let xm = (n - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &v) in w.iter().enumerate() {
        let dx = i as f64 - xm;
        sxy += dx * (v - avg);
        sxx += dx * dx;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let range_pct = 100.0 * (hi - lo) / avg;
    let slope_pct = 100.0 * (slope * (n - 1.0)).abs() / avg;
    Some(Verdict {
        reached: range_pct <= RANGE_LIMIT_PCT && slope_pct <= SLOPE_LIMIT_PCT,
        average: avg,
        range_pct,
        slope_pct,
    })
}

/// fio's `steadystate` verdict over one window of samples: (held, value). The value
/// is the largest deviation from the window's mean (`slope` false) or the
/// least-squares slope per sample (`slope` true), as a percentage of the mean when
/// `pct`; the criterion holds when its magnitude is within `limit`.
pub fn fio_judge(window: &[f64], slope: bool, limit: f64, pct: bool) -> (bool, f64) {
    let n = window.len() as f64;
    if window.is_empty() {
        return (false, f64::INFINITY);
    }
    let mean = window.iter().sum::<f64>() / n;
    let raw = if slope {
        let xm = (n - 1.0) / 2.0;
        let (mut sxy, mut sxx) = (0.0, 0.0);
        for (i, &v) in window.iter().enumerate() {
            let dx = i as f64 - xm;
            sxy += dx * (v - mean);
            sxx += dx * dx;
        }
        if sxx > 0.0 {
            sxy / sxx
        } else {
            0.0
        }
    } else {
        window.iter().map(|v| (v - mean).abs()).fold(0.0, f64::max)
    };
    let value = if pct {
        if mean <= 0.0 {
            return (false, f64::INFINITY);
        }
        100.0 * raw / mean
    } else {
        raw
    };
    (value.abs() <= limit, value)
}

/// Follows a run's measured intervals for a steady-state stop.
#[derive(Debug, Clone)]
pub struct SteadyWatch {
    spec: SteadyStop,
    window_samples: usize,
    measured_ns: u64,
    samples: std::collections::VecDeque<f64>,
    last: Option<(f64, f64)>,
    /// When the criterion held (seconds after the start of I/O).
    pub reached_at_s: Option<f64>,
}

impl SteadyWatch {
    pub fn new(spec: &SteadyStop, interval_ns: u64) -> Self {
        let window_samples = spec.window_ns.div_ceil(interval_ns.max(1)).max(1) as usize;
        SteadyWatch {
            spec: spec.clone(),
            window_samples,
            measured_ns: 0,
            samples: Default::default(),
            last: None,
            reached_at_s: None,
        }
    }

    /// Takes one measured interval; judges once the ramp is over and a window is full.
    pub fn observe(&mut self, iv: &Interval) {
        self.measured_ns += (iv.duration_s * 1e9) as u64;
        if self.reached_at_s.is_some() || self.measured_ns <= self.spec.ramp_ns {
            return;
        }
        let v = match self.spec.metric {
            SteadyMetric::Iops => iv.iops,
            SteadyMetric::Bw => iv.bytes as f64 / iv.duration_s.max(1e-9),
            SteadyMetric::Lat => iv.lat_us.mean,
        };
        self.samples.push_back(v);
        if self.samples.len() > self.window_samples {
            self.samples.pop_front();
        }
        if self.samples.len() < self.window_samples {
            return;
        }
        let w: Vec<f64> = self.samples.iter().copied().collect();
        let (held, value) = fio_judge(&w, self.spec.slope, self.spec.limit, self.spec.limit_is_pct);
        self.last = Some((w.iter().sum::<f64>() / w.len() as f64, value));
        if held {
            self.reached_at_s = Some(iv.t_s);
        }
    }

    /// What the result records.
    pub fn result(&self) -> SteadyStopResult {
        SteadyStopResult {
            rule: "fio steadystate".into(),
            criterion: self.spec.criterion(),
            window_s: self.spec.window_ns as f64 / 1e9,
            ramp_s: self.spec.ramp_ns as f64 / 1e9,
            window_samples: self.window_samples,
            reached: self.reached_at_s.is_some(),
            reached_at_s: self.reached_at_s,
            mean: self.last.map(|l| l.0),
            value: self.last.map(|l| l.1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_rules_judge_spread_and_slope() {
        // Within 10 % of the mean (100): the largest deviation is 8 %.
        let (held, v) = fio_judge(&[92.0, 100.0, 108.0, 100.0], false, 10.0, true);
        assert!(held && (v - 8.0).abs() < 1e-9, "{v}");
        assert!(!fio_judge(&[80.0, 100.0, 120.0], false, 10.0, true).0);
        // A rise of 1 per sample around a mean of 100 is a 1 % slope.
        let (held, v) = fio_judge(&[98.0, 99.0, 100.0, 101.0, 102.0], true, 1.0, true);
        assert!(held && (v - 1.0).abs() < 1e-9, "{v}");
        assert!(!fio_judge(&[98.0, 99.0, 100.0, 101.0, 102.0], true, 0.5, true).0);
        // Absolute limits are in the metric's own unit.
        assert!(fio_judge(&[1000.0, 1040.0], false, 20.0, false).0);
        assert!(!fio_judge(&[1000.0, 1050.0], false, 20.0, false).0);
        assert!(!fio_judge(&[], false, 20.0, false).0);
    }

    #[test]
    fn flat_series_is_steady() {
        let v = judge(&[100.0, 102.0, 99.0, 101.0, 100.0]).unwrap();
        assert!(v.reached, "{v:?}");
        assert!(v.range_pct < 4.0);
    }

    #[test]
    fn drifting_series_is_not() {
        // Rising 4% a round: range 16% (< 20) but the slope moves 16% (> 10).
        let v = judge(&[100.0, 104.0, 108.0, 112.0, 116.0]).unwrap();
        assert!(!v.reached, "{v:?}");
        assert!(v.slope_pct > 10.0);
    }

    #[test]
    fn noisy_series_fails_on_range() {
        let v = judge(&[100.0, 130.0, 100.0, 130.0, 100.0]).unwrap();
        assert!(!v.reached);
        assert!(v.range_pct > 20.0);
    }

    #[test]
    fn needs_a_full_window() {
        assert!(judge(&[1.0, 1.0, 1.0, 1.0]).is_none());
        assert!(judge(&[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]).unwrap().reached);
    }
}
