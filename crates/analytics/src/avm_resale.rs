//! What a dwelling's last sale, carried by its district's index, is known to miss: the resale
//! correction, measured per vintage on the repeat sales registered by it.
//!
//! A district index carries every dwelling alike, but real resales part from it in ways the
//! record shows at the last sale: flats and houses follow their own trends beside the
//! all-dwellings index, a new build's first price carries a premium its resale does not, a
//! dwelling resold within a year or two has often been improved, and a price far above (or
//! below) what its type, tenure and street predict is partly that sale's own luck, which the
//! next sale does not repeat. The correction is a ridge regression of each repeat pair's
//! residual against its index (the later log price minus the earlier one carried by the index)
//! on those features of the earlier sale and the years between; it is added to the own-sales
//! estimate. On a market with none of these effects the coefficients come out near 0, so the
//! estimate is unchanged (METHODS, "Resale correction").

use std::collections::{BTreeMap, HashMap};

use super::{AvmSale, HedonicSet, WEIGHT_ERROR_CLIP, named};
use crate::linalg::NormalEquations;
use crate::period::Month;
use crate::sales::{PropertyType, Tenure};

/// Repeat pairs a vintage needs before it measures a correction.
pub const MIN_CORRECTION_PAIRS: usize = 200;
/// Ridge penalty on every column but the intercept and the years (a pseudo-observation each).
pub const CORRECTION_RIDGE: f64 = 10.0;
/// A pair's residual is clipped to this (log), so a few non-market prices do not steer the fit.
pub const CORRECTION_CLIP: f64 = 0.5;
/// The price-tier term's interaction with the years between saturates at this many years.
pub const CORRECTION_TIER_YEARS: f64 = 10.0;
/// A street's own trend is its pairs' `sum(e t) / (sum(t^2) + k)` with this k (years squared),
/// e the residual after the columns and t the years between: the residual of one pair has a
/// standard deviation of about 0.15 and streets' trends one of about 0.007 a year, so
/// `k = 0.15^2 / 0.007^2`, about 450; a street needs some 450 pair-years squared (seven pairs
/// eight years apart) before half its measured trend is believed.
pub const CORRECTION_STREET_SHRINK: f64 = 450.0;

/// The columns, in the order of [`ResaleCorrection::beta`].
pub const CORRECTION_COLUMNS: [&str; N_COL] = [
    "intercept",
    "years",
    "semi_detached_years",
    "terraced_years",
    "flat_years",
    "other_years",
    "leasehold_years",
    "last_sale_new_build",
    "held_under_1_year",
    "held_1_to_2_years",
    "last_sale_above_model",
    "last_sale_above_model_years",
];
const N_COL: usize = 12;
/// The two price-tier columns (zeroed for an estimate that already filtered several sales).
const TIER_COLS: [usize; 2] = [10, 11];

/// A vintage's resale correction.
#[derive(Debug, Clone, PartialEq)]
pub struct ResaleCorrection {
    /// Coefficients in the order of [`CORRECTION_COLUMNS`].
    pub beta: [f64; N_COL],
    /// Repeat pairs measured.
    pub n_pairs: usize,
    /// Each street's own trend beside the rest, log per year (shrunk toward 0).
    pub streets: HashMap<u64, f64>,
}

/// The design row of a resale `years` after a last sale of the given description, whose log
/// price (carried to the vintage) is `above` over what the vintage's hedonic model predicts for
/// it as sold.
fn row(t: PropertyType, tenure: Tenure, new_build: bool, years: f64, above: f64) -> [f64; N_COL] {
    let mut r = [0.0; N_COL];
    r[0] = 1.0;
    r[1] = years;
    match t {
        PropertyType::Detached => {}
        PropertyType::SemiDetached => r[2] = years,
        PropertyType::Terraced => r[3] = years,
        PropertyType::Flat => r[4] = years,
        PropertyType::Other => r[5] = years,
    }
    if tenure == Tenure::Leasehold {
        r[6] = years;
    }
    if new_build {
        r[7] = 1.0;
    }
    if years < 1.0 {
        r[8] = 1.0;
    } else if years < 2.0 {
        r[9] = 1.0;
    }
    r[10] = above;
    r[11] = above * years.min(CORRECTION_TIER_YEARS) / CORRECTION_TIER_YEARS;
    r
}

impl ResaleCorrection {
    pub fn coefficient(&self, name: &str) -> Option<f64> {
        named(&CORRECTION_COLUMNS, &self.beta, name)
    }

    /// The log correction of a dwelling whose last sale `last` (log price carried to the
    /// vintage `z`) is valued at `vintage`; `several` when the estimate already filtered in
    /// several sales (their average has less of one sale's luck, so the price-tier terms are
    /// left out).
    pub fn of(
        &self,
        hed: &HedonicSet,
        last: &AvmSale,
        z: f64,
        vintage: Month,
        several: bool,
    ) -> f64 {
        let years = vintage.months_since(last.month).max(0) as f64 / 12.0;
        let above = hed.above_model(last, z).unwrap_or(0.0);
        let r = row(
            last.property_type,
            last.tenure,
            last.new_build,
            years,
            above,
        );
        let street = last
            .street
            .and_then(|k| self.streets.get(&k))
            .map_or(0.0, |slope| slope * years);
        r.iter()
            .zip(&self.beta)
            .enumerate()
            .filter(|(i, _)| !several || !TIER_COLS.contains(i))
            .map(|(_, (x, b))| x * b)
            .sum::<f64>()
            + street
    }
}

/// Measures the correction on `rows` (the hedonic window's sales registered by the fit, each
/// with its log price carried to the vintage) against the fitted `hed`: every consecutive pair
/// of a dwelling's sales in different months whose later sale is not a new build. `None` with
/// fewer than [`MIN_CORRECTION_PAIRS`] pairs.
pub(super) fn fit_resale_correction(
    rows: &[(&AvmSale, f64)],
    hed: &HedonicSet,
) -> Option<ResaleCorrection> {
    // Ordered by dwelling, so the sums (and the fit) are the same on every run.
    let mut by: BTreeMap<u64, Vec<(&AvmSale, f64)>> = BTreeMap::new();
    for (s, y) in rows {
        by.entry(s.property).or_default().push((s, *y));
    }
    let mut ne = NormalEquations::new(N_COL);
    let mut pairs: Vec<([f64; N_COL], f64, Option<u64>, f64)> = Vec::new();
    for v in by.values_mut() {
        if v.len() < 2 {
            continue;
        }
        v.sort_by(|a, b| a.0.month.cmp(&b.0.month).then(a.1.total_cmp(&b.1)));
        for w in v.windows(2) {
            let ((a, za), (b, zb)) = (w[0], w[1]);
            if b.month <= a.month || b.new_build {
                continue;
            }
            let years = b.month.months_since(a.month) as f64 / 12.0;
            let above = hed.above_model(a, za).unwrap_or(0.0);
            let r = row(a.property_type, a.tenure, a.new_build, years, above);
            let y = (zb - za).clamp(-CORRECTION_CLIP, CORRECTION_CLIP);
            ne.add_dense(&r, y, 1.0);
            pairs.push((r, y, a.street, years));
        }
    }
    if pairs.len() < MIN_CORRECTION_PAIRS {
        return None;
    }
    for c in 2..N_COL {
        ne.add(&[(c, CORRECTION_RIDGE.sqrt())], 0.0, 1.0);
    }
    let sol = ne.solve(false);
    let mut beta = [0.0; N_COL];
    for (b, s) in beta.iter_mut().zip(&sol.beta) {
        *b = s.clamp(-WEIGHT_ERROR_CLIP, WEIGHT_ERROR_CLIP);
    }
    // Each street's own trend: what the columns leave, per year, shrunk.
    let mut acc: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for (r, y, street, years) in &pairs {
        if let Some(k) = street {
            let e = y - r.iter().zip(&beta).map(|(x, b)| x * b).sum::<f64>();
            let a = acc.entry(*k).or_default();
            a.0 += e * years;
            a.1 += years * years;
        }
    }
    let streets = acc
        .into_iter()
        .map(|(k, (et, tt))| (k, et / (tt + CORRECTION_STREET_SHRINK)))
        .collect();
    Some(ResaleCorrection {
        beta,
        n_pairs: pairs.len(),
        streets,
    })
}
