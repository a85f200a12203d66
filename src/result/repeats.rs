//! A run measured several times (`--repeat N`): `runs[].repetitions[]`, each
//! repetition's totals kept compactly (its intervals are not kept: the run's entry
//! carries the last repetition's), and `runs[].repeats`, each figure's mean over the
//! repetitions with its standard deviation, coefficient of variation and 95 %
//! confidence interval.
//!
//! The statistics the figures are made with live here too, beside the types they
//! fill, so that the runner's side (which builds `repeats`) and `compare` (which
//! tests two of them against each other) use one implementation: Student's t for the
//! interval (n − 1 degrees of freedom), and Welch's t-test, which does not assume
//! the two sides have the same variance, with the Welch–Satterthwaite degrees of
//! freedom. The t distribution comes from `statrs`, so fractional degrees of freedom
//! (Welch's) are exact, not read off a table.
//!
//! The trade-off: a repetition is one sample, so the interval says how much the
//! run-to-run figure varies (device state, warm-up, placement), not how precisely one
//! run measured it; n = 2 gives a very wide interval (t = 12.7), which is honest.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Two-sided confidence of `ci95`.
pub const CONFIDENCE: f64 = 0.95;
/// A figure whose confidence interval reaches further than this share of its mean
/// from it (±5 %) is marked unstable.
pub const UNSTABLE_HALF_WIDTH: f64 = 0.05;
/// The significance level of compare's Welch test (two-sided).
pub const ALPHA: f64 = 0.05;

/// One repetition's totals: what its run entry's `totals` said, kept compactly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Repetition {
    /// The run's seed in this repetition (the run's own + its index from 0).
    pub seed: u64,
    /// Measured seconds (warm-up excluded).
    pub duration_s: f64,
    pub ios: u64,
    pub errors: u64,
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mbps: f64,
    pub latency_us: LatencyFigures<f64>,
    /// Stopped by Ctrl-C: kept here, left out of `repeats`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// The latency figures a repetition keeps and `repeats` summarises, in µs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyFigures<T> {
    pub mean: T,
    pub p50: T,
    pub p99: T,
    pub p99_9: T,
}

/// `runs[].repeats`: every figure over the completed repetitions (at least two).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repeats {
    /// Completed repetitions the figures are made of.
    pub n: u32,
    pub iops: Figure,
    pub mbps: Figure,
    pub latency_us: LatencyFigures<Figure>,
}

/// One figure over the repetitions, in the unit of the field that holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Mean of the repetitions' values.
    pub mean: f64,
    /// Sample standard deviation (n − 1 in the denominator).
    pub stddev: f64,
    /// Coefficient of variation: stddev / mean (0 when the mean is 0).
    pub cv: f64,
    /// 95 % confidence interval of the mean: mean ∓ t(0.975, n − 1) · stddev / √n.
    pub ci95: [f64; 2],
    /// The interval reaches further than ±5 % of the mean from it.
    pub unstable: bool,
}

impl Figure {
    /// The figure of `samples`; `None` with fewer than two (no spread to measure).
    pub fn of(samples: &[f64]) -> Option<Figure> {
        let n = samples.len();
        if n < 2 || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let nf = n as f64;
        let mean = samples.iter().sum::<f64>() / nf;
        let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0);
        let stddev = var.sqrt();
        let half = t_quantile(0.5 + CONFIDENCE / 2.0, nf - 1.0) * stddev / nf.sqrt();
        Some(Figure {
            mean,
            stddev,
            cv: if mean != 0.0 {
                stddev / mean.abs()
            } else {
                0.0
            },
            ci95: [mean - half, mean + half],
            unstable: half > UNSTABLE_HALF_WIDTH * mean.abs(),
        })
    }

    /// Half the interval's width, as a share of the mean (0 when the mean is 0).
    pub fn half_width_rel(&self) -> f64 {
        let half = (self.ci95[1] - self.ci95[0]) / 2.0;
        if self.mean != 0.0 {
            half / self.mean.abs()
        } else {
            0.0
        }
    }
}

impl Repeats {
    /// The summary of the repetitions that completed; `None` with fewer than two.
    pub fn of(reps: &[Repetition]) -> Option<Repeats> {
        let done: Vec<&Repetition> = reps.iter().filter(|r| !r.interrupted).collect();
        let fig =
            |f: fn(&Repetition) -> f64| Figure::of(&done.iter().map(|r| f(r)).collect::<Vec<_>>());
        Some(Repeats {
            n: u32::try_from(done.len()).unwrap_or(u32::MAX),
            iops: fig(|r| r.iops)?,
            mbps: fig(|r| r.mbps)?,
            latency_us: LatencyFigures {
                mean: fig(|r| r.latency_us.mean)?,
                p50: fig(|r| r.latency_us.p50)?,
                p99: fig(|r| r.latency_us.p99)?,
                p99_9: fig(|r| r.latency_us.p99_9)?,
            },
        })
    }
}

/// The `p` quantile of Student's t distribution with `dof` degrees of freedom
/// (`t_quantile(0.975, 4.0)` = 2.776…); NaN for dof ≤ 0.
pub fn t_quantile(p: f64, dof: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, dof) {
        Ok(t) => t.inverse_cdf(p),
        Err(_) => f64::NAN,
    }
}

/// Welch's t-test of two figures' means.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Welch {
    /// (mean_b − mean_a) / √(s_a²/n_a + s_b²/n_b).
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub dof: f64,
    /// Two-sided p-value: the chance of a |t| this large if the means were equal.
    pub p: f64,
}

impl Welch {
    /// Tests `b` (of `n_b` repetitions) against `a` (of `n_a`); both need n ≥ 2.
    /// Two sides without spread differ for certain (p = 0) or not at all (p = 1).
    pub fn test(a: &Figure, n_a: u32, b: &Figure, n_b: u32) -> Option<Welch> {
        if n_a < 2 || n_b < 2 {
            return None;
        }
        let (na, nb) = (f64::from(n_a), f64::from(n_b));
        let (va, vb) = (a.stddev.powi(2) / na, b.stddev.powi(2) / nb);
        let diff = b.mean - a.mean;
        if va + vb == 0.0 {
            let p = if diff == 0.0 { 1.0 } else { 0.0 };
            return Some(Welch {
                t: if diff == 0.0 {
                    0.0
                } else {
                    diff.signum() * f64::INFINITY
                },
                dof: na + nb - 2.0,
                p,
            });
        }
        let t = diff / (va + vb).sqrt();
        let dof = (va + vb).powi(2) / (va.powi(2) / (na - 1.0) + vb.powi(2) / (nb - 1.0));
        let p = match StudentsT::new(0.0, 1.0, dof) {
            Ok(dist) => 2.0 * (1.0 - dist.cdf(t.abs())),
            Err(_) => return None,
        };
        Some(Welch { t, dof, p })
    }

    /// The means differ at the 5 % level.
    pub fn distinguishable(&self) -> bool {
        self.p < ALPHA
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_quantiles_match_the_published_table() {
        // Two-sided 95 % critical values (NIST/SEMATECH e-Handbook, table 1.3.6.7.2).
        for (dof, want) in [
            (1.0, 12.706),
            (2.0, 4.303),
            (4.0, 2.776),
            (9.0, 2.262),
            (30.0, 2.042),
            (100.0, 1.984),
        ] {
            let got = t_quantile(0.975, dof);
            assert!(close(got, want, 0.0006), "dof {dof}: {got} vs {want}");
        }
    }

    #[test]
    fn a_figure_of_known_samples() {
        let f = Figure::of(&[98.0, 100.0, 102.0, 99.0, 101.0]).unwrap();
        assert!(close(f.mean, 100.0, 1e-12));
        // Sample stddev of 98..102: √(10/4) = 1.5811.
        assert!(close(f.stddev, 2.5f64.sqrt(), 1e-12));
        assert!(close(f.cv, 0.015811, 1e-6));
        // Half width: 2.7764 · 1.5811 / √5 = 1.9632.
        assert!(close(f.ci95[0], 100.0 - 1.9632, 1e-3), "{:?}", f.ci95);
        assert!(close(f.ci95[1], 100.0 + 1.9632, 1e-3), "{:?}", f.ci95);
        assert!(!f.unstable);
        let wide = Figure::of(&[80.0, 120.0, 100.0]).unwrap();
        assert!(wide.unstable, "{wide:?}");
        assert!(Figure::of(&[1.0]).is_none());
        let flat = Figure::of(&[5.0, 5.0, 5.0]).unwrap();
        assert_eq!((flat.stddev, flat.cv, flat.ci95), (0.0, 0.0, [5.0, 5.0]));
    }

    #[test]
    fn welch_matches_a_worked_example() {
        // Welch (1947)-style worked example from Wikipedia's "Welch's t-test"
        // article, example 1: A1 = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
        // 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4}, A2 = {27.1, 22.0, 20.8, 23.4,
        // 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4}:
        // t = −2.46 (A1 − A2), dof = 24.99, p = 0.021.
        let a1 = [
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ];
        let a2 = [
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ];
        let (f1, f2) = (Figure::of(&a1).unwrap(), Figure::of(&a2).unwrap());
        let w = Welch::test(&f2, 15, &f1, 15).unwrap();
        assert!(close(w.t, -2.46, 0.005), "{w:?}");
        assert!(close(w.dof, 24.99, 0.01), "{w:?}");
        assert!(close(w.p, 0.021, 0.0005), "{w:?}");
        assert!(w.distinguishable());
        let same = Welch::test(&f1, 15, &f1, 15).unwrap();
        assert!(close(same.p, 1.0, 1e-12) && !same.distinguishable());
    }

    #[test]
    fn repeats_leave_out_interrupted_repetitions() {
        let rep = |iops: f64, interrupted| Repetition {
            iops,
            mbps: iops / 100.0,
            latency_us: LatencyFigures {
                mean: 1e6 / iops,
                p50: 1e6 / iops,
                p99: 2e6 / iops,
                p99_9: 3e6 / iops,
            },
            interrupted,
            ..Default::default()
        };
        let reps = [rep(1000.0, false), rep(1010.0, false), rep(10.0, true)];
        let r = Repeats::of(&reps).unwrap();
        assert_eq!(r.n, 2);
        assert!(close(r.iops.mean, 1005.0, 1e-9));
        assert!(Repeats::of(&reps[..1]).is_none());
    }
}
