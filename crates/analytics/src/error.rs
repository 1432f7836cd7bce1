/// Everything the analytics functions can refuse, with a reason a caller can record.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnalyticsError {
    /// Too few observations for the estimator asked for.
    #[error("not enough data for {what}: need {need}, have {have}")]
    NotEnoughData {
        what: &'static str,
        need: usize,
        have: usize,
    },
    /// The base period has no observation, so levels cannot be expressed relative to it.
    #[error("the base period {0} has no observation")]
    BaseNotObserved(String),
    /// A period asked for lies outside the series or has no level.
    #[error("period {0} is outside the series or has no level")]
    PeriodNotInSeries(String),
    /// The input breaks a documented precondition (empty grid, mismatched grains, ...).
    #[error("invalid input: {0}")]
    Invalid(String),
}

impl From<terrace_core::MonthError> for AnalyticsError {
    fn from(e: terrace_core::MonthError) -> AnalyticsError {
        AnalyticsError::Invalid(e.to_string())
    }
}
