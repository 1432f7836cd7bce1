//! The market resource family: published house price indices, forecasts and time adjustment,
//! transaction volumes and rankings, read from the derived tables [`build::build`] writes.
//!
//! Architecture Invariant: plain functions over the store; no HTTP or MCP types; the maths is in
//! `terrace-analytics`; nothing invented (a month without data is null, never zero).

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

use terrace_store::StoreError;

/// A rule a request broke, located inside the input it was given (the gateway adds whether that
/// was the body or the query).
pub use terrace_core::Violation;

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
