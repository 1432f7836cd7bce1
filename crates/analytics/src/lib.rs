//! Pure maths for Terrace's market numbers: house price indices (repeat sales, hedonic, shrunk
//! toward the parent geography), the decision between them, registration lag and
//! `provisional_from`, damped-trend forecasts with intervals and a rolling-origin backtest,
//! time adjustment, descriptive helpers and a synthetic market for tests.
//!
//! Every formula and threshold is written down in `docs/METHODS.md`.
//!
//! Architecture Invariant: no database, no async, no I/O, no framework; inputs are plain structs.

mod adjust;
mod avm;
mod decision;
mod error;
mod forecast;
mod hedonic;
mod lag;
mod linalg;
mod period;
mod repeat_sales;
mod sales;
mod series;
mod sim;
mod smooth;
mod stats;

pub use adjust::{TimeAdjustment, time_adjustment};
pub use avm::{
    AGE_BAND_REFERENCE, AGE_BANDS, ANCHOR_MULTI_SALES, ANCHOR_OLD_MONTHS, ANCHOR_VERY_OLD_MONTHS,
    AVM_COVERAGE, Accuracy, AnchorEvidence, Attributes, AvmSale, AvmValue, BuiltForm,
    CALIBRATION_MONTHS, CORRECTION_COLUMNS, Calibration, CompLine, CompsEvidence, Estimates,
    Estimator, HEDONIC_RIDGE, HedonicModel, HedonicSet, History, IndexSet, LEASE_SHORT_YEARS,
    LocalTrends, LogIndex, MIN_CORRECTION_PAIRS, MIN_RELIST_EVIDENCE, MIN_TREND_GROUPS,
    NEAREST_FILL, NEAREST_MAX_AGE_MONTHS, NEAREST_RADIUS_M, Refusal, RelistPenalty,
    RepeatVariances, ResaleCorrection, Subject, TYPE_STEP_RIDGE_PAIRS, TYPE_STEP_YEARS, TypeSteps,
    Vintage, accuracy, age_band_of, anchor_bits, calibrate, estimates, evidence_class,
    fit_hedonic_set, fit_vintage, measure_relisting, value,
};
pub use decision::{
    IndexConfig, IndexDecision, MIN_PAIRS_PER_PERIOD, MIN_PAIRS_REPEAT_SALES, MIN_SALES_HEDONIC,
    MIN_SALES_PER_PERIOD, PublishedIndex, Shrunk, TAU_PER_MONTH, build_index, shrink_toward_parent,
    smooth_own,
};
pub use error::AnalyticsError;
pub use forecast::{
    ALPHA_RANGE, BETA_RANGE, Backtest, BacktestConfig, DampedTrendParams, FittedModel,
    ForecastMethod, HORIZON, HorizonError, IndexForecast, MIN_FORECAST_HISTORY, PHI_RANGE,
    StepForecast, Z80, Z95, backtest, fit, fit_damped_trend, fit_damped_trend_from,
    fit_naive_drift, forecast_index, last_settled,
};
pub use hedonic::{HedonicFit, hedonic_index};
pub use lag::{
    COUNT_LOOKBACK_MONTHS, COUNT_RATIO_THRESHOLD, LAG_COHORT_MONTHS, LagProfile, MAX_LAG_MONTHS,
    MIN_LAG_SALES, PROVISIONAL_COMPLETENESS, RECENT_COUNT_MIN_MONTHS, RECENT_COUNT_MONTHS,
    RECENT_COUNT_SHARE, Registration, provisional_from_counts, registration_lag_profile,
};
pub use period::{Grain, Month, Period, period_range};
pub use repeat_sales::{RepeatSalesFit, VARIANCE_FLOOR_SHARE, repeat_sales_index};
pub use sales::{
    MAX_ANNUAL_LOG_GROWTH, MIN_HOLD_MONTHS, Pair, PairFilter, PairStats, PropertyType, Sale,
    Tenure, form_pairs,
};
pub use series::{IndexGrid, IndexMethod, IndexPoint, IndexSeries};
pub use sim::{
    Draws, SIM_AREA_ELASTICITY, SIM_AREA_SD, SIM_NEW_BUILD_PREMIUM, SIM_QUALITY_SD, SimSale,
    SimSpec, SimTruth, SplitMix64, cyclical_log_index, simulate_sales,
};
pub use smooth::{
    LEVEL_STEP_PER_MONTH, LEVEL_STEP_RANGE, SmoothedPoint, log_likelihood, ml_level_step,
    smooth_log_levels,
};
pub use stats::{
    PriceSummary, median, price_summary, quantile, trailing_sums, trailing_window, turnover_rate,
};
