//! Steady state by the SNIA PTS rule: over the last `WINDOW` rounds, the tracked
//! metric's range stays within 20 % of its average and the least-squares line's rise
//! across the window within 10 % of the average. Pure arithmetic; the caller runs
//! the rounds.

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

#[cfg(test)]
mod tests {
    use super::*;

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
