//! Shrinkage toward the parent geography and the rule choosing the published method.

use crate::error::AnalyticsError;
use crate::hedonic::hedonic_index;
use crate::repeat_sales::repeat_sales_index;
use crate::sales::{PairFilter, PairStats, Sale, form_pairs};
use crate::series::{IndexGrid, IndexMethod, IndexSeries};

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
    /// Weight of the child's own change into each period (index 0, the first period, has no
    /// change and weight 0).
    pub own_weights: Vec<f64>,
}

/// Blends the child's log changes with the parent's: for each period t after the first,
/// d(t) = w(t) * dc(t) + (1 - w(t)) * dp(t), with w(t) = m(t) / (m(t) + K),
/// m(t) = 2 n(t-1) n(t) / (n(t-1) + n(t)) (the child's observations either side, harmonic),
/// K = 2 s2 / tau^2 (s2 the child's residual variance per observation). A change the child
/// cannot estimate gets w = 0. Levels are rebuilt from d with the base period at 100.
/// `child = None` gives the parent's series. The parent must be complete on the same grid.
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
        && c.grid != grid
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
    let k = child.map_or(0.0, |c| 2.0 * c.residual_variance / (tau * tau));
    let mut own_weights = vec![0.0; t];
    let mut d = vec![0.0; t];
    for i in 1..t {
        let dp = plog[i] - plog[i - 1];
        let mut w = 0.0;
        let mut dc = 0.0;
        if let Some(c) = child {
            let (a, b) = (&c.points[i - 1], &c.points[i]);
            if let (Some(la), Some(lb)) = (a.log_level, b.log_level)
                && a.n > 0
                && b.n > 0
            {
                let (na, nb) = (a.n as f64, b.n as f64);
                let m = 2.0 * na * nb / (na + nb);
                w = m / (m + k);
                dc = lb - la;
            }
        }
        own_weights[i] = w;
        d[i] = w * dc + (1.0 - w) * dp;
    }
    let base = grid.base_position();
    let mut logs = vec![0.0; t];
    for i in (base + 1)..t {
        logs[i] = logs[i - 1] + d[i];
    }
    for i in (0..base).rev() {
        logs[i] = logs[i + 1] - d[i + 1];
    }
    let counts: Vec<usize> = match child {
        Some(c) => c.points.iter().map(|p| p.n).collect(),
        None => vec![0; t],
    };
    let packed: Vec<Option<(f64, Option<f64>)>> = logs.iter().map(|l| Some((*l, None))).collect();
    let series = IndexSeries::from_log_levels(
        grid,
        IndexMethod::ShrunkToParent,
        &packed,
        &counts,
        child.map_or(0.0, |c| c.residual_variance),
        child.map_or(0, |c| c.n_obs),
    );
    Ok(Shrunk {
        series,
        own_weights,
    })
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
    let rs_need = format!(
        "repeat sales needs {} pairs with {} in every period",
        cfg.min_pairs_repeat_sales, cfg.min_pairs_per_period
    );
    let hed_need = format!(
        "hedonic needs {} sales with {} in every period",
        cfg.min_sales_hedonic, cfg.min_sales_per_period
    );
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
    let rs = if n_pairs >= cfg.min_pairs_repeat_sales {
        repeat_sales_index(&pairs, grid).ok()
    } else {
        None
    };
    let rs_ok = rs
        .as_ref()
        .is_some_and(|f| f.series.is_complete() && f.series.min_n() >= cfg.min_pairs_per_period);
    let rs_min = rs.as_ref().map_or(0, |f| f.series.min_n());
    if rs_ok && let Some(f) = rs.clone() {
        let reason = format!(
            "repeat_sales: {n_pairs} pairs after filters (threshold {}) and at least {rs_min} pairs in every period (threshold {})",
            cfg.min_pairs_repeat_sales, cfg.min_pairs_per_period
        );
        return done(f.series, IndexMethod::RepeatSales, reason, None, None);
    }
    let rs_short = if rs.is_some() {
        format!("{n_pairs} pairs but as few as {rs_min} in a period ({rs_need})")
    } else {
        format!("{n_pairs} pairs ({rs_need})")
    };
    let hed = if n_sales > 0 {
        hedonic_index(sales, grid).ok()
    } else {
        None
    };
    let hed_min = hed.as_ref().map_or(0, |f| f.series.min_n());
    let hed_ok = n_sales >= cfg.min_sales_hedonic
        && hed
            .as_ref()
            .is_some_and(|f| f.series.is_complete() && hed_min >= cfg.min_sales_per_period);
    if hed_ok && let Some(f) = hed.clone() {
        let reason = format!(
            "hedonic: too few repeat sales, {rs_short}; {n_sales} sales with at least {hed_min} in every period (thresholds {} and {})",
            cfg.min_sales_hedonic, cfg.min_sales_per_period
        );
        return done(f.series, IndexMethod::Hedonic, reason, None, None);
    }
    let hed_short = format!("{n_sales} sales, as few as {hed_min} in a period ({hed_need})");
    if let Some((pcode, pseries)) = parent {
        let tau = cfg.tau_per_month * f64::from(grid.grain.months()).sqrt();
        let own = hed.as_ref().map(|f| &f.series);
        let shrunk = shrink_toward_parent(own, pseries, tau)?;
        let ws = &shrunk.own_weights[1..];
        let mean_w = if ws.is_empty() {
            0.0
        } else {
            ws.iter().sum::<f64>() / ws.len() as f64
        };
        let reason = if own.is_some() {
            format!(
                "shrunk_to_parent {pcode}: data too thin, {rs_short}; {hed_short}; own hedonic changes blended with the parent's, mean own weight {mean_w:.2}"
            )
        } else {
            format!(
                "shrunk_to_parent {pcode}: data too thin, {rs_short}; {hed_short}; no own estimate could be made (no sale in the base period or too few sales), so the parent's changes are used"
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
        let reason = format!("repeat_sales (no parent geography to shrink toward): {rs_short}");
        return done(f.series, IndexMethod::RepeatSales, reason, None, None);
    }
    if let Some(f) = hed {
        let reason =
            format!("hedonic (no parent geography to shrink toward): {rs_short}; {hed_short}");
        return done(f.series, IndexMethod::Hedonic, reason, None, None);
    }
    Err(AnalyticsError::NotEnoughData {
        what: "an index for a geography without a parent",
        need: cfg.min_sales_hedonic,
        have: n_sales,
    })
}
