//! The interval-weighted repeat-sales index (Case and Shiller 1987, three stages).

use crate::error::AnalyticsError;
use crate::linalg::NormalEquations;
use crate::sales::{Pair, pair_interval};
use crate::series::{IndexGrid, IndexMethod, IndexSeries};

/// Stage-2 fitted variances are floored at this share of the mean squared stage-1 residual, so
/// no pair gets an unbounded weight.
pub const VARIANCE_FLOOR_SHARE: f64 = 0.1;

/// A repeat-sales estimate with its diagnostics.
#[derive(Debug, Clone, PartialEq)]
pub struct RepeatSalesFit {
    pub series: IndexSeries,
    /// Pairs given.
    pub n_pairs_given: usize,
    /// Pairs with a sale outside the grid.
    pub n_outside_grid: usize,
    /// Pairs whose two sales fall in the same period (they carry no information on the grid).
    pub n_same_period: usize,
    /// Pairs linking only periods not connected to the base period.
    pub n_disconnected: usize,
    /// Pairs used in the regressions.
    pub n_pairs_used: usize,
    /// Stage 2: squared stage-1 residual = `variance_intercept + variance_slope * interval`
    /// (interval in periods); the slope is set to 0 when it came out negative.
    pub variance_intercept: f64,
    pub variance_slope: f64,
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// Estimates the repeat-sales index on `grid` from (already filtered) pairs.
///
/// Stage 1: OLS of y = ln(p2/p1) on time dummies D (D = -1 in the first sale's period, +1 in the
/// second's, the base period's column dropped). Stage 2: OLS of the squared stage-1 residuals on
/// the interval length in periods. Stage 3: WLS of stage 1 with weights 1 / fitted variance.
/// Periods no pair connects to the base period have no level.
pub fn repeat_sales_index(
    pairs: &[Pair],
    grid: &IndexGrid,
) -> Result<RepeatSalesFit, AnalyticsError> {
    let t = grid.len();
    let base = grid.base_position();
    let mut n_outside_grid = 0;
    let mut n_same_period = 0;
    let mut obs: Vec<(usize, usize, f64, f64)> = Vec::with_capacity(pairs.len());
    for p in pairs {
        let (Some(i1), Some(i2)) = (
            grid.position_of_month(p.first_month),
            grid.position_of_month(p.second_month),
        ) else {
            n_outside_grid += 1;
            continue;
        };
        if i1 == i2 {
            n_same_period += 1;
            continue;
        }
        if p.first_price <= 0 || p.second_price <= 0 {
            return Err(AnalyticsError::Invalid(
                "a pair has a non-positive price".into(),
            ));
        }
        let y = (p.second_price as f64 / p.first_price as f64).ln();
        obs.push((i1, i2, y, f64::from(pair_interval(p, grid.grain))));
    }
    // Keep the pairs in the base period's connected component.
    let mut parent: Vec<usize> = (0..t).collect();
    for &(a, b, _, _) in &obs {
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        if ra != rb {
            parent[ra] = rb;
        }
    }
    let root = find(&mut parent, base);
    let before = obs.len();
    obs.retain(|&(a, _, _, _)| find(&mut parent, a) == root);
    let n_disconnected = before - obs.len();
    let mut counts = vec![0usize; t];
    for &(a, b, _, _) in &obs {
        counts[a] += 1;
        counts[b] += 1;
    }
    if counts[base] == 0 {
        return Err(AnalyticsError::BaseNotObserved(grid.base.label()));
    }
    // Column of each period (the base period and unconnected periods have none).
    let mut col = vec![None; t];
    let mut k = 0;
    for i in 0..t {
        if i != base && counts[i] > 0 && find(&mut parent, i) == root {
            col[i] = Some(k);
            k += 1;
        }
    }
    if obs.len() <= k {
        return Err(AnalyticsError::NotEnoughData {
            what: "repeat-sales regression (pairs must exceed estimated periods)",
            need: k + 1,
            have: obs.len(),
        });
    }
    let row = |a: usize, b: usize| -> Vec<(usize, f64)> {
        let mut r = Vec::with_capacity(2);
        if let Some(c) = col[a] {
            r.push((c, -1.0));
        }
        if let Some(c) = col[b] {
            r.push((c, 1.0));
        }
        r
    };
    let fitted = |beta: &[f64], a: usize, b: usize| -> f64 {
        col[b].map_or(0.0, |c| beta[c]) - col[a].map_or(0.0, |c| beta[c])
    };
    // Stage 1.
    let mut ne = NormalEquations::new(k);
    for &(a, b, y, _) in &obs {
        ne.add(&row(a, b), y, 1.0);
    }
    let s1 = ne.solve(false);
    // Stage 2.
    let n = obs.len() as f64;
    let (mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0);
    for &(a, b, y, dt) in &obs {
        let e2 = (y - fitted(&s1.beta, a, b)).powi(2);
        sx += dt;
        sy += e2;
        sxx += dt * dt;
        sxy += dt * e2;
    }
    let mean_e2 = sy / n;
    let var_dt = sxx / n - (sx / n).powi(2);
    let (mut slope, mut intercept) = (0.0, mean_e2);
    if var_dt > 0.0 {
        let s = (sxy / n - (sx / n) * mean_e2) / var_dt;
        if s > 0.0 {
            slope = s;
            intercept = mean_e2 - s * sx / n;
        }
    }
    let floor = (VARIANCE_FLOOR_SHARE * mean_e2).max(f64::MIN_POSITIVE);
    let weight = |dt: f64| 1.0 / (intercept + slope * dt).max(floor);
    // Stage 3.
    let mut ne = NormalEquations::new(k);
    for &(a, b, y, dt) in &obs {
        ne.add(&row(a, b), y, weight(dt));
    }
    let s3 = ne.solve(true);
    let rank = s3.rank();
    let (mut wsse, mut sse) = (0.0, 0.0);
    for &(a, b, y, dt) in &obs {
        let e2 = (y - fitted(&s3.beta, a, b)).powi(2);
        wsse += weight(dt) * e2;
        sse += e2;
    }
    let s2 = wsse / (n - rank as f64);
    let logs: Vec<Option<(f64, Option<f64>)>> = (0..t)
        .map(|i| {
            if i == base {
                Some((0.0, Some(0.0)))
            } else {
                col[i]
                    .filter(|&c| !s3.aliased[c])
                    .map(|c| (s3.beta[c], Some((s2 * s3.inv_diag(c)).max(0.0).sqrt())))
            }
        })
        .collect();
    let series = IndexSeries::from_log_levels(
        *grid,
        IndexMethod::RepeatSales,
        &logs,
        &counts,
        sse / n,
        obs.len(),
    );
    Ok(RepeatSalesFit {
        series,
        n_pairs_given: pairs.len(),
        n_outside_grid,
        n_same_period,
        n_disconnected,
        n_pairs_used: obs.len(),
        variance_intercept: intercept,
        variance_slope: slope,
    })
}
