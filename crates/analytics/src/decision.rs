//! Shrinkage toward the parent geography and the rule choosing the published method.

use crate::error::AnalyticsError;
use crate::hedonic::hedonic_index;
use crate::repeat_sales::repeat_sales_index;
use crate::sales::{PairFilter, PairStats, Sale, form_pairs};
use crate::series::{IndexGrid, IndexMethod, IndexSeries};
use crate::smooth::{LEVEL_STEP_PER_MONTH, ml_level_step, smooth_log_levels};

/// Repeat sales needs at least this many pairs after the filters ...
pub const MIN_PAIRS_REPEAT_SALES: usize = 300;
/// ... and at least this many pairs with a sale in every period of the grid.
pub const MIN_PAIRS_PER_PERIOD: usize = 5;
/// The hedonic index needs at least this many sales ...
pub const MIN_SALES_HEDONIC: usize = 300;
/// ... and at least this many sales in every period of the grid.
pub const MIN_SALES_PER_PERIOD: usize = 5;
/// Standard deviation of a geography's monthly log change around its parent's (the prior
/// spread in the shrinkage); a period of m months uses TAU_PER_MONTH * sqrt(m).
pub const TAU_PER_MONTH: f64 = 0.01;

/// Thresholds of the decision rule (defaults: the constants above).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexConfig {
    pub min_pairs_repeat_sales: usize,
    pub min_pairs_per_period: usize,
    pub min_sales_hedonic: usize,
    pub min_sales_per_period: usize,
    pub tau_per_month: f64,
    /// The random-walk step of the smoother over a geography's own estimate (section 6).
    pub level_step_per_month: f64,
    /// Whether a geography's own step is estimated from its own estimates by maximum likelihood
    /// (`ml_level_step`, within `LEVEL_STEP_RANGE`); `level_step_per_month` is then the step of a
    /// series too short to estimate one.
    pub estimate_level_step: bool,
    pub pair_filter: PairFilter,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            min_pairs_repeat_sales: MIN_PAIRS_REPEAT_SALES,
            min_pairs_per_period: MIN_PAIRS_PER_PERIOD,
            min_sales_hedonic: MIN_SALES_HEDONIC,
            min_sales_per_period: MIN_SALES_PER_PERIOD,
            tau_per_month: TAU_PER_MONTH,
            level_step_per_month: LEVEL_STEP_PER_MONTH,
            estimate_level_step: true,
            pair_filter: PairFilter::default(),
        }
    }
}

/// Why a geography's published series uses the method it does.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDecision {
    pub method: IndexMethod,
    /// One sentence with the counts and thresholds behind the choice (the API's
    /// `index_decision`).
    pub reason: String,
    /// Repeat-sale pairs after the filters.
    pub n_pairs: usize,
    /// Sales inside the grid with a positive price.
    pub n_sales: usize,
    /// The parent geography's code when the series is shrunk toward it.
    pub parent: Option<String>,
    /// Mean weight of the geography's own changes in a shrunk series (0 = all parent).
    pub mean_own_weight: Option<f64>,
}

/// A geography's published index.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedIndex {
    pub geography: String,
    pub series: IndexSeries,
    pub decision: IndexDecision,
    pub pair_stats: PairStats,
}

/// The result of [`shrink_toward_parent`].
#[derive(Debug, Clone, PartialEq)]
pub struct Shrunk {
    pub series: IndexSeries,
    /// Weight of the child's own observation in each period's smoothed deviation from the
    /// parent (0 where the child has none; see METHODS.md section 6).
    pub own_weights: Vec<f64>,
}

/// The observations an estimator's series gives the smoother: each estimated period's log level
/// and standard error. The estimator's own base period has standard error 0 by construction;
/// it gets the median of the others' divided by sqrt(2) (its own sampling noise, which the
/// others' errors carry once each).
fn observations(series: &IndexSeries) -> Vec<Option<(f64, f64)>> {
    let mut ses: Vec<f64> = series
        .points
        .iter()
        .filter_map(|p| p.log_se.filter(|s| *s > 0.0))
        .collect();
    ses.sort_by(f64::total_cmp);
    let base_se = ses.get(ses.len() / 2).copied().unwrap_or(0.05) / std::f64::consts::SQRT_2;
    series
        .points
        .iter()
        .map(|p| {
            let l = p.log_level?;
            let se = p.log_se.filter(|s| *s > 0.0).unwrap_or(base_se);
            Some((l, se))
        })
        .collect()
}

/// Rebuilds a series on `grid` from smoothed log levels (re-based so `grid.base` is 100), the
/// raw levels (on the same base) and the filled marks.
fn published_series(
    grid: &IndexGrid,
    method: IndexMethod,
    smoothed: &[(f64, f64)],
    raw: &[Option<f64>],
    counts: &[usize],
    residual_variance: f64,
    n_obs: usize,
) -> IndexSeries {
    let shift = smoothed[grid.base_position()].0;
    let packed: Vec<Option<(f64, Option<f64>)>> = smoothed
        .iter()
        .map(|(l, se)| Some((l - shift, Some(*se))))
        .collect();
    let mut series =
        IndexSeries::from_log_levels(*grid, method, &packed, counts, residual_variance, n_obs);
    for (p, r) in series.points.iter_mut().zip(raw) {
        p.raw_log_level = r.map(|r| r - shift);
        p.filled = r.is_none();
    }
    series
}

/// A geography's own estimate (repeat sales or hedonic, possibly with periods lacking a level)
/// published through the local-level smoother with a drift (METHODS.md section 6): every period
/// gets a level, periods without an estimate are marked filled. `None` if nothing was estimated.
pub fn smooth_own(series: &IndexSeries, grid: &IndexGrid, q: f64) -> Option<IndexSeries> {
    let obs = observations(series);
    let s = smooth_log_levels(&obs, q, true)?;
    let smoothed: Vec<(f64, f64)> = s.iter().map(|p| (p.log_level, p.log_se)).collect();
    let raw: Vec<Option<f64>> = obs.iter().map(|o| o.map(|(l, _)| l)).collect();
    let counts: Vec<usize> = series.points.iter().map(|p| p.n).collect();
    Some(published_series(
        grid,
        series.method,
        &smoothed,
        &raw,
        &counts,
        series.residual_variance,
        series.n_obs,
    ))
}

/// Shrinks a child toward its parent: the child's deviation from the parent's published log
/// level, D(t) = Lc(t) - Lp(t), is a random walk with step `tau` (no drift); the child's own
/// estimates observe it with their standard errors; the local-level smoother gives D in every
/// period (0 everywhere when the child has no estimate), and the published level is
/// Lp(t) + D(t), re-based so the base period is 100. Its standard error is
/// sqrt(se_p(t)^2 + se_D(t)^2). Periods where the child has no own estimate are marked filled.
/// `child = None` gives the parent's series. The parent must be complete on the same grid; the
/// child's own estimate may have another base period.
pub fn shrink_toward_parent(
    child: Option<&IndexSeries>,
    parent: &IndexSeries,
    tau: f64,
) -> Result<Shrunk, AnalyticsError> {
    let grid = parent.grid;
    if !parent.is_complete() {
        return Err(AnalyticsError::Invalid(
            "the parent series has periods without a level".into(),
        ));
    }
    if let Some(c) = child
        && (c.grid.first != grid.first || c.grid.last != grid.last)
    {
        return Err(AnalyticsError::Invalid(
            "child and parent grids differ".into(),
        ));
    }
    if tau <= 0.0 {
        return Err(AnalyticsError::Invalid("tau must be positive".into()));
    }
    let t = grid.len();
    let plog: Vec<f64> = parent
        .points
        .iter()
        .map(|p| p.log_level.unwrap_or(0.0))
        .collect();
    let pse: Vec<f64> = parent
        .points
        .iter()
        .map(|p| p.log_se.unwrap_or(0.0))
        .collect();
    let own: Vec<Option<(f64, f64)>> = match child {
        Some(c) => observations(c)
            .into_iter()
            .zip(&c.points)
            .zip(&plog)
            .map(|((o, p), lp)| o.filter(|_| p.n > 0).map(|(l, se)| (l - lp, se)))
            .collect(),
        None => vec![None; t],
    };
    let deviation = smooth_log_levels(&own, tau, false);
    let mut own_weights = vec![0.0; t];
    let mut smoothed = Vec::with_capacity(t);
    for i in 0..t {
        let (d, dse, w) = deviation.as_ref().map_or((0.0, 0.0, 0.0), |s| {
            (s[i].log_level, s[i].log_se, s[i].own_weight)
        });
        own_weights[i] = w;
        smoothed.push((plog[i] + d, (pse[i] * pse[i] + dse * dse).sqrt()));
    }
    // The child's raw levels on the published base: its own estimate, shifted like the
    // published series (so raw and published share the base period).
    let raw: Vec<Option<f64>> = own
        .iter()
        .zip(&plog)
        .map(|(o, lp)| o.map(|(d, _)| d + lp))
        .collect();
    let counts: Vec<usize> = match child {
        Some(c) => c.points.iter().map(|p| p.n).collect(),
        None => vec![0; t],
    };
    let series = published_series(
        &grid,
        IndexMethod::ShrunkToParent,
        &smoothed,
        &raw,
        &counts,
        child.map_or(0.0, |c| c.residual_variance),
        child.map_or(0, |c| c.n_obs),
    );
    Ok(Shrunk {
        series,
        own_weights,
    })
}

/// The period holding the most of `sales` (the earliest on a tie), or `None` without sales in
/// the grid: the base of a geography's own estimate, so every geography with sales can be
/// estimated whatever it sold in the published base period.
fn busiest_period(sales: &[Sale], grid: &IndexGrid) -> Option<usize> {
    let mut counts = vec![0usize; grid.len()];
    for s in sales.iter().filter(|s| s.price > 0) {
        if let Some(i) = grid.position_of_month(s.month) {
            counts[i] += 1;
        }
    }
    let max = *counts.iter().max()?;
    (max > 0).then(|| counts.iter().position(|c| *c == max).unwrap_or(0))
}

/// The decision rule (see METHODS.md):
/// 1. repeat sales when there are at least `min_pairs_repeat_sales` pairs after the filters, the
///    estimate has a level in every period, and every period has `min_pairs_per_period` pairs;
/// 2. otherwise hedonic when there are at least `min_sales_hedonic` sales, the estimate has a
///    level in every period, and every period has `min_sales_per_period` sales;
/// 3. otherwise, with a parent, the hedonic estimate (when one could be made at all) shrunk
///    toward the parent's published series;
/// 4. otherwise (no parent: the top of the hierarchy) repeat sales if it was attempted (enough
///    pairs) and has a level in every period, else hedonic if it could be estimated (possibly
///    with periods lacking a level), with the shortfall stated; an error if neither could.
///
/// The own estimates are made with the geography's busiest period as their base; cases 1, 2
/// and 4 are then published through the local-level smoother (every period gets a level,
/// filled ones are marked), case 3 through the shrinkage smoother; every published series is
/// re-based to `grid.base` = 100.
///
/// `parent` is `(code, series)` of the parent's published index on the same grid.
pub fn build_index(
    geography: &str,
    sales: &[Sale],
    grid: &IndexGrid,
    parent: Option<(&str, &IndexSeries)>,
    cfg: &IndexConfig,
) -> Result<PublishedIndex, AnalyticsError> {
    let (pairs, pair_stats) = form_pairs(sales, &cfg.pair_filter);
    let n_pairs = pair_stats.used;
    let n_sales = sales
        .iter()
        .filter(|s| s.price > 0 && grid.position_of_month(s.month).is_some())
        .count();
    let own_grid = busiest_period(sales, grid).map(|b| IndexGrid {
        base: grid.first.offset(b as i32),
        ..*grid
    });
    let months = f64::from(grid.grain.months()).sqrt();
    let q = cfg.level_step_per_month * months;
    let rs_need = format!(
        "repeat sales needs {} pairs with {} in every period",
        cfg.min_pairs_repeat_sales, cfg.min_pairs_per_period
    );
    let hed_need = format!(
        "hedonic needs {} sales with {} in every period",
        cfg.min_sales_hedonic, cfg.min_sales_per_period
    );
    let filled_note = |series: &IndexSeries| {
        let filled = series.points.iter().filter(|p| p.filled).count();
        if filled == 0 {
            String::new()
        } else {
            format!(
                "; {filled} of {} periods without an own estimate are filled by the smoother",
                series.points.len()
            )
        }
    };
    let done =
        |series: IndexSeries, method, reason: String, parent: Option<String>, w: Option<f64>| {
            Ok(PublishedIndex {
                geography: geography.to_string(),
                series,
                decision: IndexDecision {
                    method,
                    reason,
                    n_pairs,
                    n_sales,
                    parent,
                    mean_own_weight: w,
                },
                pair_stats,
            })
        };
    let publish = |raw: &IndexSeries| {
        let ml = cfg
            .estimate_level_step
            .then(|| ml_level_step(&observations(raw), true, f64::from(grid.grain.months())))
            .flatten();
        let step = ml.unwrap_or(q);
        let series = smooth_own(raw, grid, step).ok_or(AnalyticsError::NotEnoughData {
            what: "an estimated period",
            need: 1,
            have: 0,
        })?;
        let how = if ml.is_some() {
            ", by maximum likelihood"
        } else {
            ""
        };
        Ok::<_, AnalyticsError>((
            series,
            format!(
                "; levels smoothed as a local level (random-walk step {step:.3} a period{how})"
            ),
        ))
    };
    let rs = match own_grid {
        Some(g) if n_pairs >= cfg.min_pairs_repeat_sales => repeat_sales_index(&pairs, &g).ok(),
        _ => None,
    };
    let rs_ok = rs
        .as_ref()
        .is_some_and(|f| f.series.is_complete() && f.series.min_n() >= cfg.min_pairs_per_period);
    let rs_min = rs.as_ref().map_or(0, |f| f.series.min_n());
    if rs_ok && let Some(f) = rs.as_ref() {
        let (series, smoothed_note) = publish(&f.series)?;
        let reason = format!(
            "repeat_sales: {n_pairs} pairs after filters (threshold {}) and at least {rs_min} pairs in every period (threshold {}){smoothed_note}",
            cfg.min_pairs_repeat_sales, cfg.min_pairs_per_period
        );
        return done(series, IndexMethod::RepeatSales, reason, None, None);
    }
    let rs_short = if rs.is_some() {
        format!("{n_pairs} pairs but as few as {rs_min} in a period ({rs_need})")
    } else {
        format!("{n_pairs} pairs ({rs_need})")
    };
    let hed = match own_grid {
        Some(g) => hedonic_index(sales, &g).ok(),
        None => None,
    };
    let hed_min = hed.as_ref().map_or(0, |f| f.series.min_n());
    let hed_ok = n_sales >= cfg.min_sales_hedonic
        && hed
            .as_ref()
            .is_some_and(|f| f.series.is_complete() && hed_min >= cfg.min_sales_per_period);
    if hed_ok && let Some(f) = hed.as_ref() {
        let (series, smoothed_note) = publish(&f.series)?;
        let reason = format!(
            "hedonic: too few repeat sales, {rs_short}; {n_sales} sales with at least {hed_min} in every period (thresholds {} and {}){smoothed_note}",
            cfg.min_sales_hedonic, cfg.min_sales_per_period
        );
        return done(series, IndexMethod::Hedonic, reason, None, None);
    }
    let hed_short = format!("{n_sales} sales, as few as {hed_min} in a period ({hed_need})");
    if let Some((pcode, pseries)) = parent {
        let tau = cfg.tau_per_month * months;
        let own = hed.as_ref().map(|f| &f.series);
        let shrunk = shrink_toward_parent(own, pseries, tau)?;
        let ws = &shrunk.own_weights;
        let mean_w = if ws.is_empty() {
            0.0
        } else {
            ws.iter().sum::<f64>() / ws.len() as f64
        };
        let note = filled_note(&shrunk.series);
        let reason = if own.is_some() {
            format!(
                "shrunk_to_parent {pcode}: data too thin, {rs_short}; {hed_short}; own hedonic deviation from the parent smoothed as a random walk (step {tau:.3} a period), mean own weight {mean_w:.2}{note}"
            )
        } else {
            format!(
                "shrunk_to_parent {pcode}: data too thin, {rs_short}; {hed_short}; no own estimate could be made (too few sales), so the parent's levels are used{note}"
            )
        };
        return done(
            shrunk.series,
            IndexMethod::ShrunkToParent,
            reason,
            Some(pcode.to_string()),
            Some(mean_w),
        );
    }
    if let Some(f) = rs.filter(|f| f.series.is_complete()) {
        let (series, smoothed_note) = publish(&f.series)?;
        let reason = format!(
            "repeat_sales (no parent geography to shrink toward): {rs_short}{smoothed_note}"
        );
        return done(series, IndexMethod::RepeatSales, reason, None, None);
    }
    if let Some(f) = hed {
        let (series, smoothed_note) = publish(&f.series)?;
        let note = filled_note(&series);
        let reason = format!(
            "hedonic (no parent geography to shrink toward): {rs_short}; {hed_short}{smoothed_note}{note}"
        );
        return done(series, IndexMethod::Hedonic, reason, None, None);
    }
    Err(AnalyticsError::NotEnoughData {
        what: "an index for a geography without a parent",
        need: cfg.min_sales_hedonic,
        have: n_sales,
    })
}
