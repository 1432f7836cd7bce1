//! The hedonic time-dummy index: log price on period dummies and dwelling characteristics.

use crate::error::AnalyticsError;
use crate::linalg::NormalEquations;
use crate::sales::{PropertyType, Sale, Tenure};
use crate::series::{IndexGrid, IndexMethod, IndexSeries};

/// A hedonic estimate with its characteristic coefficients.
#[derive(Debug, Clone, PartialEq)]
pub struct HedonicFit {
    pub series: IndexSeries,
    /// Sales used (inside the grid, positive price).
    pub n_sales_used: usize,
    /// Sales outside the grid or with a non-positive price.
    pub n_skipped: usize,
    /// Characteristic coefficients by name (`semi_detached`, `terraced`, `flat`, `other`,
    /// `leasehold`, `tenure_unknown`, `new_build`, `log_floor_area`, `floor_area_missing`,
    /// `intercept`); `None` when the column was aliased (e.g. no flats in the geography).
    pub coefficients: Vec<(&'static str, Option<f64>)>,
    /// Mean ln(floor area) of sales with a known area per property type (detached,
    /// semi-detached, terraced, flat, other; the overall mean for a type with none), subtracted
    /// before fitting; `None` when no sale has a known area.
    pub mean_log_floor_area: Vec<Option<f64>>,
}

const NAMES: [&str; 10] = [
    "intercept",
    "semi_detached",
    "terraced",
    "flat",
    "other",
    "leasehold",
    "tenure_unknown",
    "new_build",
    "log_floor_area",
    "floor_area_missing",
];

/// Estimates, by OLS, with d(base) = 0:
/// `ln(price) = intercept + d(period) + type + tenure + new build +
/// b * (ln floor area - mean of its type) * known + c * missing + e`.
/// Detached, freehold, not new build, known floor area are the reference categories.
pub fn hedonic_index(sales: &[Sale], grid: &IndexGrid) -> Result<HedonicFit, AnalyticsError> {
    let t = grid.len();
    let base = grid.base_position();
    let used: Vec<(usize, &Sale)> = sales
        .iter()
        .filter(|s| s.price > 0)
        .filter_map(|s| Some((grid.position_of_month(s.month)?, s)))
        .collect();
    let n_skipped = sales.len() - used.len();
    let mut counts = vec![0usize; t];
    for (i, _) in &used {
        counts[*i] += 1;
    }
    if counts[base] == 0 {
        return Err(AnalyticsError::BaseNotObserved(grid.base.label()));
    }
    // Mean ln(floor area) per property type over sales with a known area (the overall mean for a
    // type with none), so the missing-area rows take their type's mean and the slope is
    // within-type.
    let type_slot = |t: PropertyType| -> usize {
        match t {
            PropertyType::Detached => 0,
            PropertyType::SemiDetached => 1,
            PropertyType::Terraced => 2,
            PropertyType::Flat => 3,
            PropertyType::Other => 4,
        }
    };
    let mut sums = [(0.0f64, 0usize); 5];
    for (_, s) in &used {
        if let Some(a) = s.floor_area_m2.filter(|a| *a > 0.0) {
            let slot = &mut sums[type_slot(s.property_type)];
            slot.0 += a.ln();
            slot.1 += 1;
        }
    }
    let (tot, cnt) = sums
        .iter()
        .fold((0.0, 0), |acc, s| (acc.0 + s.0, acc.1 + s.1));
    let overall = (cnt > 0).then(|| tot / cnt as f64);
    let type_means: Vec<Option<f64>> = sums
        .iter()
        .map(|(s, c)| if *c > 0 { Some(s / *c as f64) } else { overall })
        .collect();
    // Columns: the 10 characteristics, then one per non-base period.
    let nc = NAMES.len();
    let col = |i: usize| -> Option<usize> {
        match i.cmp(&base) {
            std::cmp::Ordering::Less => Some(nc + i),
            std::cmp::Ordering::Greater => Some(nc + i - 1),
            std::cmp::Ordering::Equal => None,
        }
    };
    let p = nc + t - 1;
    let row_of = |i: usize, s: &Sale| -> Vec<(usize, f64)> {
        let mut r = vec![(0, 1.0)];
        match s.property_type {
            PropertyType::Detached => {}
            PropertyType::SemiDetached => r.push((1, 1.0)),
            PropertyType::Terraced => r.push((2, 1.0)),
            PropertyType::Flat => r.push((3, 1.0)),
            PropertyType::Other => r.push((4, 1.0)),
        }
        match s.tenure {
            Tenure::Freehold => {}
            Tenure::Leasehold => r.push((5, 1.0)),
            Tenure::Unknown => r.push((6, 1.0)),
        }
        if s.new_build {
            r.push((7, 1.0));
        }
        match (
            s.floor_area_m2.filter(|a| *a > 0.0),
            type_means[type_slot(s.property_type)],
        ) {
            (Some(a), Some(m)) => r.push((8, a.ln() - m)),
            _ => r.push((9, 1.0)),
        }
        if let Some(c) = col(i) {
            r.push((c, 1.0));
        }
        r
    };
    let mut ne = NormalEquations::new(p);
    let mut rows = Vec::with_capacity(used.len());
    for (i, s) in &used {
        let r = row_of(*i, s);
        let y = (s.price as f64).ln();
        ne.add(&r, y, 1.0);
        rows.push((r, y));
    }
    let sol = ne.solve(true);
    let rank = sol.rank();
    if used.len() <= rank {
        return Err(AnalyticsError::NotEnoughData {
            what: "hedonic regression (sales must exceed coefficients)",
            need: rank + 1,
            have: used.len(),
        });
    }
    let sse: f64 = rows
        .iter()
        .map(|(r, y)| {
            let fit: f64 = r.iter().map(|(j, x)| sol.beta[*j] * x).sum();
            (y - fit).powi(2)
        })
        .sum();
    let s2 = sse / (used.len() - rank) as f64;
    let logs: Vec<Option<(f64, Option<f64>)>> = (0..t)
        .map(|i| match col(i) {
            None => Some((0.0, Some(0.0))),
            Some(c) if sol.aliased[c] || counts[i] == 0 => None,
            Some(c) => Some((sol.beta[c], Some((s2 * sol.inv_diag(c)).max(0.0).sqrt()))),
        })
        .collect();
    let coefficients = NAMES
        .iter()
        .enumerate()
        .map(|(j, name)| (*name, (!sol.aliased[j]).then(|| sol.beta[j])))
        .collect();
    let series = IndexSeries::from_log_levels(
        *grid,
        IndexMethod::Hedonic,
        &logs,
        &counts,
        sse / used.len() as f64,
        used.len(),
    );
    Ok(HedonicFit {
        series,
        n_sales_used: used.len(),
        n_skipped,
        coefficients,
        mean_log_floor_area: type_means.clone(),
    })
}
