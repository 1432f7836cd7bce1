use chrono::{DateTime, Utc};
use std::sync::Arc;

/// The source of "now" for anything that computes with time.
///
/// Domain functions take a clock rather than calling `Utc::now()`, so tests can pin it.
pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock pinned to one instant, for tests.
#[derive(Debug, Clone)]
pub struct FixedClock(pub DateTime<Utc>);

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        self.0
    }
}

impl From<FixedClock> for Arc<dyn Clock> {
    fn from(c: FixedClock) -> Self {
        Arc::new(c)
    }
}
