//! The published level: a local-level state-space smoother (Kalman filter and
//! Rauch-Tung-Striebel smoother) over an estimator's period-by-period log levels.
//!
//! Model, per period t of the grid:
//!
//! ```text
//! observation:  y(t) = L(t) + e(t),            e(t) ~ N(0, se(t)^2)   (only where estimated)
//! state:        L(t) = L(t-1) + b + u(t),       u(t) ~ N(0, q^2)
//! ```
//!
//! `b` is a constant drift (estimated, with a diffuse prior) or fixed at 0. Minimising
//! `sum (y(t) - L(t))^2 / se(t)^2 + sum (L(t) - L(t-1) - b)^2 / q^2` gives the same levels: a
//! random-walk penalty on the log levels whose strength is set by each period's own standard
//! error. A period without an estimate gets the smoothed level the neighbours imply (its
//! standard error grows with the distance to them) and is marked as filled.

/// Standard deviation of a geography's month-to-month log level around its drift (the random
/// walk's step, `q`); a period of m months uses `LEVEL_STEP_PER_MONTH * sqrt(m)`.
pub const LEVEL_STEP_PER_MONTH: f64 = 0.01;
/// Prior variance of the first level and of the drift (diffuse: the data decide them).
const DIFFUSE: f64 = 1.0e4;
const DIFFUSE_DRIFT: f64 = 1.0;
/// Observation variances are floored here (an estimate of variance 0 would pin the level).
const MIN_OBS_VARIANCE: f64 = 1.0e-8;

/// One smoothed period: the log level, its standard error, and the weight of the period's own
/// observation in it (`se_smoothed^2 / se_observed^2`; 0 without one).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmoothedPoint {
    pub log_level: f64,
    pub log_se: f64,
    pub own_weight: f64,
}

type M2 = [[f64; 2]; 2];

fn transition(p: &M2, q2: f64) -> M2 {
    // F P F' + Q with F = [[1, 1], [0, 1]], Q = diag(q2, 0).
    [
        [
            p[0][0] + p[0][1] + p[1][0] + p[1][1] + q2,
            p[0][1] + p[1][1],
        ],
        [p[1][0] + p[1][1], p[1][1]],
    ]
}

/// The inverse of a symmetric positive semi-definite 2x2 matrix; a zero drift variance (drift
/// fixed) inverts the level part only.
fn inverse(p: &M2) -> M2 {
    let det = p[0][0] * p[1][1] - p[0][1] * p[1][0];
    if p[1][1] > 0.0 && det > 1e-300 {
        [
            [p[1][1] / det, -p[0][1] / det],
            [-p[1][0] / det, p[0][0] / det],
        ]
    } else if p[0][0] > 0.0 {
        [[1.0 / p[0][0], 0.0], [0.0, 0.0]]
    } else {
        [[0.0; 2]; 2]
    }
}

fn mul(a: &M2, b: &M2) -> M2 {
    let mut c = [[0.0; 2]; 2];
    for i in 0..2 {
        for j in 0..2 {
            c[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j];
        }
    }
    c
}

fn transpose(a: &M2) -> M2 {
    [[a[0][0], a[1][0]], [a[0][1], a[1][1]]]
}

/// Smooths `obs` (per period: the estimated log level and its standard error, or `None`) with
/// random-walk step `q` and, when `drift`, a constant drift. `None` when no period has an
/// observation.
pub fn smooth_log_levels(
    obs: &[Option<(f64, f64)>],
    q: f64,
    drift: bool,
) -> Option<Vec<SmoothedPoint>> {
    let first = obs.iter().flatten().next()?;
    let n = obs.len();
    let q2 = q * q;
    let mut x_pred = vec![[0.0f64; 2]; n];
    let mut p_pred = vec![[[0.0f64; 2]; 2]; n];
    let mut x_filt = vec![[0.0f64; 2]; n];
    let mut p_filt = vec![[[0.0f64; 2]; 2]; n];
    for t in 0..n {
        let (xp, pp) = if t == 0 {
            (
                [first.0, 0.0],
                [
                    [DIFFUSE, 0.0],
                    [0.0, if drift { DIFFUSE_DRIFT } else { 0.0 }],
                ],
            )
        } else {
            let x = x_filt[t - 1];
            ([x[0] + x[1], x[1]], transition(&p_filt[t - 1], q2))
        };
        x_pred[t] = xp;
        p_pred[t] = pp;
        let (mut x, mut p) = (xp, pp);
        if let Some((y, se)) = obs[t] {
            let r = (se * se).max(MIN_OBS_VARIANCE);
            let s = pp[0][0] + r;
            let k = [pp[0][0] / s, pp[1][0] / s];
            let v = y - xp[0];
            x = [xp[0] + k[0] * v, xp[1] + k[1] * v];
            for i in 0..2 {
                for j in 0..2 {
                    p[i][j] = pp[i][j] - k[i] * pp[0][j];
                }
            }
        }
        x_filt[t] = x;
        p_filt[t] = p;
    }
    let mut x_s = x_filt.clone();
    let mut p_s = p_filt.clone();
    for t in (0..n.saturating_sub(1)).rev() {
        let f = [[1.0, 1.0], [0.0, 1.0]];
        let c = mul(&mul(&p_filt[t], &transpose(&f)), &inverse(&p_pred[t + 1]));
        let dx = [
            x_s[t + 1][0] - x_pred[t + 1][0],
            x_s[t + 1][1] - x_pred[t + 1][1],
        ];
        x_s[t] = [
            x_filt[t][0] + c[0][0] * dx[0] + c[0][1] * dx[1],
            x_filt[t][1] + c[1][0] * dx[0] + c[1][1] * dx[1],
        ];
        let mut dp = [[0.0; 2]; 2];
        for i in 0..2 {
            for j in 0..2 {
                dp[i][j] = p_s[t + 1][i][j] - p_pred[t + 1][i][j];
            }
        }
        let add = mul(&mul(&c, &dp), &transpose(&c));
        for i in 0..2 {
            for j in 0..2 {
                p_s[t][i][j] = p_filt[t][i][j] + add[i][j];
            }
        }
    }
    Some(
        (0..n)
            .map(|t| {
                let var = p_s[t][0][0].max(0.0);
                let own_weight = obs[t].map_or(0.0, |(_, se)| {
                    (var / (se * se).max(MIN_OBS_VARIANCE)).clamp(0.0, 1.0)
                });
                SmoothedPoint {
                    log_level: x_s[t][0],
                    log_se: var.sqrt(),
                    own_weight,
                }
            })
            .collect(),
    )
}

/// The range over which [`ml_level_step`] searches a geography's step, a month (log): from a
/// level nearly fixed between months to one that follows each month's estimate.
pub const LEVEL_STEP_RANGE: (f64, f64) = (0.001, 0.05);
/// Steps tried, evenly spaced on the log scale over [`LEVEL_STEP_RANGE`].
const LEVEL_STEP_GRID: usize = 61;
/// A step is estimated only from at least this many observed periods.
pub const MIN_STEP_PERIODS: usize = 24;

/// The log-likelihood of `obs` under the local-level model with step `q` (and a drift when
/// `drift`), by the prediction-error decomposition of the Kalman filter:
/// `-1/2 sum(ln F(t) + v(t)^2 / F(t))` over the observed periods, `v` the one-step prediction
/// error and `F` its variance; the first observation (two with a drift), whose prediction is
/// diffuse, is left out. `None` when no period has an observation.
pub fn log_likelihood(obs: &[Option<(f64, f64)>], q: f64, drift: bool) -> Option<f64> {
    let first = obs.iter().flatten().next()?;
    let q2 = q * q;
    let mut x = [first.0, 0.0];
    let mut p = [
        [DIFFUSE, 0.0],
        [0.0, if drift { DIFFUSE_DRIFT } else { 0.0 }],
    ];
    let skip = if drift { 2 } else { 1 };
    let (mut seen, mut ll) = (0usize, 0.0);
    for (t, o) in obs.iter().enumerate() {
        if t > 0 {
            x = [x[0] + x[1], x[1]];
            p = transition(&p, q2);
        }
        if let Some((y, se)) = o {
            let r = (se * se).max(MIN_OBS_VARIANCE);
            let f = p[0][0] + r;
            let v = y - x[0];
            if seen >= skip {
                ll -= 0.5 * (f.ln() + v * v / f);
            }
            seen += 1;
            let k = [p[0][0] / f, p[1][0] / f];
            x = [x[0] + k[0] * v, x[1] + k[1] * v];
            let pp = p;
            for i in 0..2 {
                for j in 0..2 {
                    p[i][j] = pp[i][j] - k[i] * pp[0][j];
                }
            }
        }
    }
    Some(ll)
}

/// The random-walk step (per period of `obs`) that maximises [`log_likelihood`] over
/// [`LEVEL_STEP_RANGE`] scaled by `sqrt(months per period)`, searched on a grid of
/// [`LEVEL_STEP_GRID`] steps evenly spaced on the log scale; `None` with fewer than
/// [`MIN_STEP_PERIODS`] observed periods.
pub fn ml_level_step(obs: &[Option<(f64, f64)>], drift: bool, months: f64) -> Option<f64> {
    if obs.iter().flatten().count() < MIN_STEP_PERIODS {
        return None;
    }
    let (lo, hi) = (
        LEVEL_STEP_RANGE.0 * months.sqrt(),
        LEVEL_STEP_RANGE.1 * months.sqrt(),
    );
    let mut best: Option<(f64, f64)> = None;
    for i in 0..LEVEL_STEP_GRID {
        let q = lo * (hi / lo).powf(i as f64 / (LEVEL_STEP_GRID - 1) as f64);
        let Some(ll) = log_likelihood(obs, q, drift) else {
            continue;
        };
        if ll.is_finite() && best.is_none_or(|(_, b)| ll > b) {
            best = Some((q, ll));
        }
    }
    best.map(|(q, _)| q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{Draws, SplitMix64};

    #[test]
    fn a_straight_line_without_noise_is_kept_and_gaps_are_bridged() {
        let obs: Vec<Option<(f64, f64)>> = (0..40)
            .map(|t| (t % 7 != 3).then_some((0.01 * t as f64, 1e-4)))
            .collect();
        let s = smooth_log_levels(&obs, 0.01, true).unwrap();
        for (t, p) in s.iter().enumerate() {
            assert!((p.log_level - 0.01 * t as f64).abs() < 1e-3, "{t}: {p:?}");
        }
        // A filled period has no own weight and a wider error than its neighbours.
        assert_eq!(s[3].own_weight, 0.0);
        assert!(s[3].log_se > s[2].log_se);
    }

    #[test]
    fn smoothing_removes_most_of_the_noise_of_a_noisy_trend() {
        let mut d = SplitMix64::new(3);
        let truth: Vec<f64> = (0..120).map(|t| 0.004 * t as f64).collect();
        let obs: Vec<Option<(f64, f64)>> = truth
            .iter()
            .map(|l| Some((l + 0.05 * d.normal(), 0.05)))
            .collect();
        let s = smooth_log_levels(&obs, 0.01, true).unwrap();
        let rmse = |v: Vec<f64>| {
            (v.iter()
                .zip(&truth)
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>()
                / truth.len() as f64)
                .sqrt()
        };
        let raw = rmse(obs.iter().map(|o| o.unwrap().0).collect());
        let smooth = rmse(s.iter().map(|p| p.log_level).collect());
        assert!(smooth < raw / 2.0, "raw {raw}, smoothed {smooth}");
        // About 80 % of the truth lies within 1.28 se.
        let inside = s
            .iter()
            .zip(&truth)
            .filter(|(p, t)| (p.log_level - **t).abs() <= 1.2816 * p.log_se)
            .count();
        assert!(inside >= 80, "{inside} of 120 within the 80% band");
    }

    /// A random walk with a planted step, observed through noise of a known standard error:
    /// the maximum-likelihood step is near the planted one, for a quiet walk and a lively one.
    #[test]
    fn the_maximum_likelihood_step_recovers_a_planted_step() {
        for (q, seed) in [(0.004, 11), (0.02, 12)] {
            let mut d = SplitMix64::new(seed);
            let mut level = 0.0;
            let obs: Vec<Option<(f64, f64)>> = (0..300)
                .map(|t| {
                    level += 0.003 + q * d.normal();
                    // Every seventh month unobserved, as a thin geography's are.
                    (t % 7 != 5).then(|| (level + 0.03 * d.normal(), 0.03))
                })
                .collect();
            let est = ml_level_step(&obs, true, 1.0).unwrap();
            eprintln!("planted {q}, estimated {est:.4}");
            assert!(
                est > q / 1.6 && est < q * 1.6,
                "planted {q}, estimated {est}"
            );
        }
        // Too few observed periods: no estimate.
        let short: Vec<Option<(f64, f64)>> =
            (0..20).map(|t| Some((0.01 * t as f64, 0.03))).collect();
        assert!(ml_level_step(&short, true, 1.0).is_none());
    }

    #[test]
    fn without_drift_an_empty_stretch_stays_flat_and_nothing_observed_is_none() {
        let mut obs = vec![None; 10];
        obs[2] = Some((0.1, 0.01));
        let s = smooth_log_levels(&obs, 0.01, false).unwrap();
        assert!(s.iter().all(|p| (p.log_level - 0.1).abs() < 1e-9));
        assert!(smooth_log_levels(&[None, None], 0.01, true).is_none());
    }
}
