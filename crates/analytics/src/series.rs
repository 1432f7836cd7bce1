//! The index grid and the series every estimator returns.

use crate::error::AnalyticsError;
use crate::period::{Grain, Month, Period, period_range};

/// The periods an index is estimated on (`first..=last`) and its base period (level 100).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexGrid {
    pub grain: Grain,
    pub first: Period,
    pub last: Period,
    pub base: Period,
}

impl IndexGrid {
    /// The grid of `grain` covering months `start..=end`, with level 100 in the period holding
    /// `base` (which must lie inside).
    pub fn new(
        grain: Grain,
        start: Month,
        end: Month,
        base: Month,
    ) -> Result<IndexGrid, AnalyticsError> {
        let first = grain.period_of(start);
        let last = grain.period_of(end);
        let base = grain.period_of(base);
        if last < first {
            return Err(AnalyticsError::Invalid(format!(
                "grid end {end} is before start {start}"
            )));
        }
        if base < first || base > last {
            return Err(AnalyticsError::Invalid(format!(
                "base period {base} is outside the grid {first}..{last}"
            )));
        }
        Ok(IndexGrid {
            grain,
            first,
            last,
            base,
        })
    }

    pub fn len(&self) -> usize {
        (self.last.since(self.first) + 1) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Position of `p` in the grid, if inside.
    pub fn position(&self, p: Period) -> Option<usize> {
        if p.grain() != self.grain || p < self.first || p > self.last {
            None
        } else {
            Some(p.since(self.first) as usize)
        }
    }

    /// Position of the period holding month `m`, if inside.
    pub fn position_of_month(&self, m: Month) -> Option<usize> {
        self.position(self.grain.period_of(m))
    }

    pub fn base_position(&self) -> usize {
        self.base.since(self.first) as usize
    }

    pub fn periods(&self) -> Vec<Period> {
        period_range(self.first, self.last)
    }
}

/// Which estimator produced a published series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexMethod {
    /// Interval-weighted repeat sales (Case-Shiller three-stage).
    RepeatSales,
    /// Hedonic time-dummy regression.
    Hedonic,
    /// The geography's own changes blended with its parent's, weighted by its n.
    ShrunkToParent,
}

impl IndexMethod {
    /// `repeat_sales`, `hedonic` or `shrunk_to_parent` (the `index_method` the API prints).
    pub fn as_str(self) -> &'static str {
        match self {
            IndexMethod::RepeatSales => "repeat_sales",
            IndexMethod::Hedonic => "hedonic",
            IndexMethod::ShrunkToParent => "shrunk_to_parent",
        }
    }
}

/// One period of an index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexPoint {
    pub period: Period,
    /// Level with the base period = 100; `None` when the period could not be estimated.
    pub level: Option<f64>,
    /// ln(level / 100).
    pub log_level: Option<f64>,
    /// Standard error of `log_level` (0 in the base period); `None` where not estimated (always
    /// for a shrunk series, see METHODS.md).
    pub log_se: Option<f64>,
    /// Observations behind the period: pairs with either sale in it (repeat sales), sales in it
    /// (hedonic), or the child's own observations (shrunk).
    pub n: usize,
    /// The estimator's own log level before smoothing, on the same base (`None` where the
    /// estimator had none); equal to `log_level` on an unsmoothed estimator's series.
    pub raw_log_level: Option<f64>,
    /// True when the period had no own estimate and its level was filled by the smoother (from
    /// the neighbouring periods, and for a shrunk series from the parent's change).
    pub filled: bool,
}

impl IndexPoint {
    /// The level's standard error by the delta method: level * log_se.
    pub fn level_se(&self) -> Option<f64> {
        Some(self.level? * self.log_se?)
    }
}

/// An index series on a grid.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexSeries {
    pub grid: IndexGrid,
    pub method: IndexMethod,
    /// One point per grid period, oldest first.
    pub points: Vec<IndexPoint>,
    /// Mean squared residual per observation of the final regression (log scale, unweighted):
    /// per pair for repeat sales, per sale for hedonic; for a shrunk series, the child's own (0
    /// when the child had no estimate).
    pub residual_variance: f64,
    /// Observations used: pairs (repeat sales) or sales (hedonic), or the child's (shrunk).
    pub n_obs: usize,
}

impl IndexSeries {
    pub(crate) fn from_log_levels(
        grid: IndexGrid,
        method: IndexMethod,
        logs: &[Option<(f64, Option<f64>)>],
        counts: &[usize],
        residual_variance: f64,
        n_obs: usize,
    ) -> IndexSeries {
        let points = grid
            .periods()
            .into_iter()
            .enumerate()
            .map(|(i, period)| {
                let v = logs.get(i).copied().flatten();
                IndexPoint {
                    period,
                    level: v.map(|(l, _)| 100.0 * l.exp()),
                    log_level: v.map(|(l, _)| l),
                    log_se: v.and_then(|(_, se)| se),
                    n: counts.get(i).copied().unwrap_or(0),
                    raw_log_level: v.map(|(l, _)| l),
                    filled: false,
                }
            })
            .collect();
        IndexSeries {
            grid,
            method,
            points,
            residual_variance,
            n_obs,
        }
    }

    pub fn point(&self, p: Period) -> Option<&IndexPoint> {
        self.points.get(self.grid.position(p)?)
    }

    /// Level in period `p` (base = 100).
    pub fn level(&self, p: Period) -> Option<f64> {
        self.point(p)?.level
    }

    /// True when every period of the grid has a level.
    pub fn is_complete(&self) -> bool {
        self.points.iter().all(|p| p.level.is_some())
    }

    /// The fewest observations behind any period.
    pub fn min_n(&self) -> usize {
        self.points.iter().map(|p| p.n).min().unwrap_or(0)
    }
}
