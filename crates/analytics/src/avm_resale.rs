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
/// A level of local trends (sectors, or streets) is measured only over at least this many
/// groups with pairs: fewer cannot say how far such places part from their district.
pub const MIN_TREND_GROUPS: usize = 10;
/// The variance of one pair's residual is floored at this (log squared), so that the weight of
/// a short hold stays finite.
const MIN_PAIR_VARIANCE: f64 = 1e-4;
/// The type steps: each property type's own change beside the district index in each of the
/// last this many years before the vintage (an anchor older than that takes them all).
pub const TYPE_STEP_YEARS: usize = 10;
/// Ridge on each type step, in pairs of median weight (a pseudo-observation of 0 for each).
pub const TYPE_STEP_RIDGE_PAIRS: f64 = 20.0;

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
    /// Each postcode sector's own trend beside the columns, log per year.
    pub sectors: LocalTrends,
    /// Each street's own trend beside the columns and its sector's, log per year.
    pub streets: LocalTrends,
    /// Each property type's own change beside the district index and the columns, year by year.
    pub type_steps: TypeSteps,
}

/// Each property type's own change beside the district index and the correction's columns in
/// each of the last [`TYPE_STEP_YEARS`] years before the vintage (log): a type whose prices
/// parted from the all-dwellings index in some years and not others (flats level while houses
/// rose) is carried by its own steps, which a trend in the years between cannot follow.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TypeSteps {
    /// Per type slot (detached, semi-detached, terraced, flat, other), the step of year j
    /// (j = 0 the year to the vintage): the type's change beside the rest over that year.
    pub steps: [[f64; TYPE_STEP_YEARS]; 5],
    /// Pairs behind each type's steps.
    pub pairs: [usize; 5],
}

fn type_slot(t: PropertyType) -> usize {
    match t {
        PropertyType::Detached => 0,
        PropertyType::SemiDetached => 1,
        PropertyType::Terraced => 2,
        PropertyType::Flat => 3,
        PropertyType::Other => 4,
    }
}

/// Whether a sale `months_ago` before the vintage lies before the end of step year `j` (the
/// boundary `12 (j + 1)` months before the vintage is crossed on the way to it).
fn crossed(months_ago: i32, j: usize) -> bool {
    months_ago >= 12 * (j as i32 + 1)
}

/// The step columns of a pair of sales `ka` and `kb` months before the vintage (`ka >= kb`):
/// 1 for each year boundary between them.
fn step_columns(ka: i32, kb: i32) -> [f64; TYPE_STEP_YEARS] {
    let mut c = [0.0; TYPE_STEP_YEARS];
    for (j, x) in c.iter_mut().enumerate() {
        if crossed(ka, j) && !crossed(kb, j) {
            *x = 1.0;
        }
    }
    c
}

impl TypeSteps {
    /// The type's change beside the rest from a sale `months_ago` before the vintage to it.
    pub fn of(&self, t: PropertyType, months_ago: i32) -> f64 {
        let s = &self.steps[type_slot(t)];
        step_columns(months_ago, 0)
            .iter()
            .zip(s)
            .map(|(c, x)| c * x)
            .sum()
    }
}

/// One level of local trends (postcode sectors, or streets), measured by empirical Bayes: each
/// group's trend is its pairs' weighted least-squares slope shrunk toward 0 by the spread of
/// trends the groups show, so that a level with no real spread adds nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LocalTrends {
    /// Each group's own trend, log per year (shrunk); groups without pairs are not here.
    pub slopes: HashMap<u64, f64>,
    /// Groups with pairs.
    pub groups: usize,
    /// The standard deviation of the groups' true trends the pairs show, log per year (0 when
    /// the spread is no more than their noise, or fewer than [`MIN_TREND_GROUPS`] groups).
    pub sd: f64,
}

impl LocalTrends {
    fn of(&self, group: Option<u64>) -> f64 {
        group
            .and_then(|k| self.slopes.get(&k))
            .copied()
            .unwrap_or(0.0)
    }
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
        let local = (self.sectors.of(last.sector) + self.streets.of(last.street)) * years
            + self
                .type_steps
                .of(last.property_type, vintage.months_since(last.month));
        r.iter()
            .zip(&self.beta)
            .enumerate()
            .filter(|(i, _)| !several || !TIER_COLS.contains(i))
            .map(|(_, (x, b))| x * b)
            .sum::<f64>()
            + local
    }
}

/// Measures the correction on `rows` (the hedonic window's sales registered by the fit, each
/// with its log price carried to the vintage) against the fitted `hed`: every consecutive pair
/// of a dwelling's sales in different months whose later sale is not a new build. `None` with
/// fewer than [`MIN_CORRECTION_PAIRS`] pairs.
pub(super) fn fit_resale_correction(
    rows: &[(&AvmSale, f64)],
    hed: &HedonicSet,
    vintage: Month,
) -> Option<ResaleCorrection> {
    // Ordered by dwelling, so the sums (and the fit) are the same on every run.
    let mut by: BTreeMap<u64, Vec<(&AvmSale, f64)>> = BTreeMap::new();
    for (s, y) in rows {
        by.entry(s.property).or_default().push((s, *y));
    }
    let mut ne = NormalEquations::new(N_COL);
    let mut pairs: Vec<Pair> = Vec::new();
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
            pairs.push(Pair {
                row: r,
                y,
                sector: a.sector,
                street: a.street,
                years,
                slot: type_slot(a.property_type),
                steps: step_columns(vintage.months_since(a.month), vintage.months_since(b.month)),
            });
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
    // What the columns leave, and how its variance grows with the years between.
    let mut e: Vec<f64> = pairs
        .iter()
        .map(|p| p.y - p.row.iter().zip(&beta).map(|(x, b)| x * b).sum::<f64>())
        .collect();
    let variance = pair_variance(&pairs, &e);
    // The types' own steps, then sectors, then streets, each on what the earlier leave.
    let type_steps = fit_type_steps(&pairs, &e, &variance);
    for (r, p) in e.iter_mut().zip(&pairs) {
        *r -= p
            .steps
            .iter()
            .zip(&type_steps.steps[p.slot])
            .map(|(c, x)| c * x)
            .sum::<f64>();
    }
    let sectors = local_trends(&pairs, &e, &variance, |p| p.sector);
    for (r, p) in e.iter_mut().zip(&pairs) {
        *r -= sectors.of(p.sector) * p.years;
    }
    let streets = local_trends(&pairs, &e, &variance, |p| p.street);
    Some(ResaleCorrection {
        beta,
        n_pairs: pairs.len(),
        sectors,
        streets,
        type_steps,
    })
}

/// The type steps on the residuals `e` after the columns: per type, ridge least squares of a
/// pair's residual on its step columns, each pair weighted by `1 / v`, each step with a
/// pseudo-observation of 0 of weight [`TYPE_STEP_RIDGE_PAIRS`] times the median weight.
fn fit_type_steps(pairs: &[Pair], e: &[f64], variance: &[f64]) -> TypeSteps {
    let mut out = TypeSteps::default();
    let weights: Vec<f64> = variance.iter().map(|v| 1.0 / v).collect();
    let Some(mid) = crate::stats::median(&weights) else {
        return out;
    };
    let ridge = TYPE_STEP_RIDGE_PAIRS;
    for slot in 0..5 {
        let mut ne = NormalEquations::new(TYPE_STEP_YEARS);
        let mut n = 0;
        for ((p, r), w) in pairs.iter().zip(e).zip(&weights) {
            if p.slot == slot {
                ne.add_dense(&p.steps, *r, *w);
                n += 1;
            }
        }
        out.pairs[slot] = n;
        if n == 0 {
            continue;
        }
        for j in 0..TYPE_STEP_YEARS {
            ne.add(&[(j, 1.0)], 0.0, ridge * mid);
        }
        let b = ne.solve(false).beta;
        for (x, v) in out.steps[slot].iter_mut().zip(&b) {
            *x = v.clamp(-WEIGHT_ERROR_CLIP, WEIGHT_ERROR_CLIP);
        }
    }
    out
}

/// One repeat pair of the fit.
struct Pair {
    row: [f64; N_COL],
    /// The later log price against the earlier one carried by the index (clipped).
    y: f64,
    sector: Option<u64>,
    street: Option<u64>,
    years: f64,
    /// The earlier sale's type slot and the pair's type step columns.
    slot: usize,
    steps: [f64; TYPE_STEP_YEARS],
}

/// The variance of a pair's residual as a line in the years between (the two sales' noise,
/// plus the dwelling's drift since): least squares of the squared residuals on the years,
/// each pair's variance floored at [`MIN_PAIR_VARIANCE`].
fn pair_variance(pairs: &[Pair], e: &[f64]) -> Vec<f64> {
    let mut ne = NormalEquations::new(2);
    for (p, r) in pairs.iter().zip(e) {
        ne.add_dense(&[1.0, p.years], r * r, 1.0);
    }
    let b = ne.solve(false).beta;
    pairs
        .iter()
        .map(|p| (b[0] + b[1] * p.years).max(MIN_PAIR_VARIANCE))
        .collect()
}

/// Each group's own trend by empirical Bayes. With `v` a pair's variance, a group's weighted
/// slope `R / S` (`R = sum(t e / v)`, `S = sum(t^2 / v)`) has variance `tau^2 + 1 / S` about
/// 0, so `tau^2 = (sum(R^2 / S) - G) / sum(S)` over the G groups (the method of moments), and
/// the group's trend is the posterior mean `R / (S + 1 / tau^2)`. No trend when `tau^2 <= 0`
/// or with fewer than [`MIN_TREND_GROUPS`] groups.
fn local_trends(
    pairs: &[Pair],
    e: &[f64],
    variance: &[f64],
    group: impl Fn(&Pair) -> Option<u64>,
) -> LocalTrends {
    let mut acc: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for ((p, r), v) in pairs.iter().zip(e).zip(variance) {
        if let Some(k) = group(p) {
            let a = acc.entry(k).or_default();
            a.0 += p.years * r / v;
            a.1 += p.years * p.years / v;
        }
    }
    acc.retain(|_, (_, s)| *s > 0.0);
    let groups = acc.len();
    let (spread, total) = acc
        .values()
        .fold((0.0, 0.0), |(q, t), (r, s)| (q + r * r / s, t + s));
    let tau2 = (spread - groups as f64) / total;
    if groups < MIN_TREND_GROUPS || !tau2.is_finite() || tau2 <= 0.0 {
        return LocalTrends {
            groups,
            ..LocalTrends::default()
        };
    }
    LocalTrends {
        slopes: acc
            .into_iter()
            .map(|(k, (r, s))| (k, r / (s + 1.0 / tau2)))
            .collect(),
        groups,
        sd: tau2.sqrt(),
    }
}
