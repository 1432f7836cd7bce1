//! The valuation and equity family: the automated valuation model's vintages, its forward
//! accuracy, and the operations that read them.
//!
//! `build.rs` is the build step (`cargo xtask build`, after the market build, whose district
//! indices carry sales in time): it gathers the category A sales, floor areas and buildings
//! (`inputs.rs`), fits a vintage at the latest month of sales with `terrace_analytics::fit_vintage`
//! and writes one `valuations` row per UPRN with a sale or a certificate, valued or refused, and a
//! `valuation_vintages` row with the calibration. `backtest.rs` replays history month by month
//! with what was registered by each vintage and writes `valuation_accuracy`.
//!
//! Architecture Invariant: the endpoints never estimate: a value, range or weight is what the last
//! vintage wrote; the transaction anchor reads the published district index. Nothing invented: a
//! property the model cannot value has a refusal, never a number.

pub mod backtest;
pub mod build;
mod comps;
mod full;
pub mod inputs;
mod long_held;
mod ops;
pub mod relist;

pub use comps::*;
pub use full::*;
pub use long_held::*;
pub use ops::*;

use terrace_store::StoreError;

/// The model version written on every row.
pub const MODEL_VERSION: &str = "terrace-avm-6";
/// The provenance of every derived valuation row.
pub const SOURCE: &str = "derived:hmlr_price_paid+epc+market_index";

#[derive(Debug, thiserror::Error)]
pub enum ValuationError {
    /// No valuation is held (with why), or the UPRN has no record.
    #[error("{0} not found")]
    NotFound(String),
    #[error("invalid input")]
    Invalid(Vec<terrace_core::Violation>),
    #[error(transparent)]
    Store(#[from] StoreError),
}
