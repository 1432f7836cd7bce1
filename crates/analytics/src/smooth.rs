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

    #[test]
    fn without_drift_an_empty_stretch_stays_flat_and_nothing_observed_is_none() {
        let mut obs = vec![None; 10];
        obs[2] = Some((0.1, 0.01));
        let s = smooth_log_levels(&obs, 0.01, false).unwrap();
        assert!(s.iter().all(|p| (p.log_level - 0.1).abs() < 1e-9));
        assert!(smooth_log_levels(&[None, None], 0.01, true).is_none());
    }
}
