//! The market resource family: published house price indices, forecasts and time adjustment,
//! transaction volumes and rankings, read from the derived tables [`build::build`] writes.
//!
//! Architecture Invariant: plain functions over the store; no HTTP or MCP types; the maths is in
//! `terrace-analytics`; nothing invented (a month without data is null, never zero).
//!
//! `build.rs` is the build step (`cargo xtask build`, and the first start after the fixtures load):
//! it pages through the registered sales, the postcode directory and the register, and writes
//! `market_geographies` (one row per geography with its stock, index method and decision, last
//! settled period, forecast method and coverage), `market_index_points` (levels with `se`,
//! `lo`/`hi`, `raw_level` and `filled`, then forecast rows) and `market_volume` (monthly counts and
//! category A price quartiles per district, area, county, local authority and the nation), plus the
//! `meta` facts (`data_through`, `provisional_from`, the national backtest), and ends by stamping
//! `market.build_id`. It holds every category A sale once (the geographies below the nation keep
//! four-byte positions into that one vector) and builds each rank of geographies on every core,
//! since a rank's parents are all in the rank before it.
//!
//! `cache.rs` is the server's `MarketCache`: every read starts with one `meta` read of
//! `market.build_id`; while it is unchanged a geography's row, points and volumes come from memory
//! (the volume series then says `cached: true`); a new id drops the snapshot. Only geographies that
//! exist are kept. `series.rs` (index series, forecast, time adjustment), `volume.rs`, `ranking.rs`
//! and `validate.rs` (the UK HPI comparison) only read those tables.
//!
//! Architecture Invariant: the endpoints never estimate: an index, a forecast or a volume is what
//! the last build wrote. A published series stops at the last settled month; the provisional months
//! are covered by forecast rows.

pub mod build;
pub mod cache;
pub mod ranking;
pub mod series;
pub mod validate;
pub mod volume;

pub use cache::MarketCache;
pub use ranking::{RankingBody, VolumeRankingBody, ranking, volume_ranking};
pub use series::{
    Forecast, IndexSeriesResult, TimeAdjustmentResult, forecast, index_series, time_adjustment,
};
pub use volume::{VolumeSeriesBody, VolumeSeriesResponse, volume_series};

use chrono::{Datelike, NaiveDate};
use schemars::JsonSchema;
use serde::Serialize;
use terrace_store::StoreError;

/// A rule a request broke, located inside the input it was given (the gateway adds whether that
/// was the body or the query).
pub use terrace_core::Violation;

/// How far the market data lies behind the clock: on every market answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Staleness {
    /// The latest month of registered sales held (`YYYY-MM-DD`, the month's first day).
    pub data_through: Option<String>,
    /// Whole months from `data_through` to the clock's month.
    pub months_behind: Option<i32>,
    /// True when `months_behind` exceeds `stale_after_months` (or no data was built).
    pub stale: bool,
    pub stale_after_months: i32,
    /// What the lag means for the answer, when stale.
    pub note: Option<String>,
}

/// The staleness of data held through `data_through` (`YYYY-MM-DD` or `YYYY-MM`) on `today`.
pub fn staleness(data_through: Option<&str>, today: NaiveDate) -> Staleness {
    let limit = build::STALE_AFTER_MONTHS;
    let through = data_through.and_then(|s| terrace_analytics::Month::parse(s).ok());
    let Some(m) = through else {
        return Staleness {
            data_through: None,
            months_behind: None,
            stale: true,
            stale_after_months: limit,
            note: Some("no registered sales have been built into the market tables".into()),
        };
    };
    let behind = (today.year() - m.year()) * 12 + today.month() as i32 - m.month() as i32;
    let stale = behind > limit;
    Staleness {
        data_through: Some(m.first_day()),
        months_behind: Some(behind),
        stale,
        stale_after_months: limit,
        note: stale.then(|| {
            format!(
                "the data runs to {} and lies {behind} months behind today ({}): levels, volumes and forecasts describe the market as it was then, not now; load newer Price Paid files and rebuild",
                m.first_day(),
                today.format("%Y-%m-%d")
            )
        }),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MarketError {
    #[error("{0} not found")]
    NotFound(String),
    /// Input that parses but the data cannot answer (a period outside the series).
    #[error("invalid input")]
    Invalid(Vec<Violation>),
    #[error(transparent)]
    Analytics(#[from] terrace_analytics::AnalyticsError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A geography key of the derived tables from the query's own words.
pub(crate) fn district_key(d: &str) -> String {
    format!("district:{d}")
}

#[cfg(test)]
mod tests;
