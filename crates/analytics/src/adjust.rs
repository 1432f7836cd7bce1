//! Time adjustment: carrying a price from one period to another along an index.

use crate::error::AnalyticsError;
use crate::period::Period;
use crate::series::IndexSeries;

/// The result of [`time_adjustment`].
#[derive(Debug, Clone, PartialEq)]
pub struct TimeAdjustment {
    pub from: Period,
    pub to: Period,
    pub from_level: f64,
    pub to_level: f64,
    /// to_level / from_level: a price in `from` times this is the same dwelling's price in `to`.
    pub multiplier: f64,
    /// The caller's name for the series used (e.g. `repeat_sales SW1A`), passed through.
    pub source: String,
}

/// The multiplier level(to) / level(from) of `series`. Both periods must have a level.
pub fn time_adjustment(
    series: &IndexSeries,
    from: Period,
    to: Period,
    source: &str,
) -> Result<TimeAdjustment, AnalyticsError> {
    let level = |p: Period| {
        series
            .level(p)
            .filter(|l| *l > 0.0)
            .ok_or_else(|| AnalyticsError::PeriodNotInSeries(p.label()))
    };
    let (from_level, to_level) = (level(from)?, level(to)?);
    Ok(TimeAdjustment {
        from,
        to,
        from_level,
        to_level,
        multiplier: to_level / from_level,
        source: source.to_string(),
    })
}
