//! Shared state of a running gateway.

use governor::clock::{Clock as _, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use metrics_exporter_prometheus::PrometheusHandle;
use std::num::NonZeroU32;
use std::sync::Arc;
use terrace_address::AddressCtx;
use terrace_core::Clock;
use terrace_store::Db;

/// Per-key rate limit: a steady rate with a burst allowance.
#[derive(Debug, Clone, Copy)]
pub struct RateLimit {
    pub per_second: u32,
    pub burst: u32,
}

impl Default for RateLimit {
    /// Generous by default: 1,000 requests a second per key, bursts of 2,000.
    fn default() -> Self {
        RateLimit {
            per_second: 1000,
            burst: 2000,
        }
    }
}

#[derive(Clone)]
pub struct AppState {
    pub db: Db,
    pub clock: Arc<dyn Clock>,
    pub address: AddressCtx,
    pub limiter: Arc<DefaultKeyedRateLimiter<i64>>,
    pub metrics: PrometheusHandle,
    /// The group-commit ledger writer every charged call goes through.
    pub ledger: terrace_credits::LedgerWriter,
    pub openapi: Arc<serde_json::Value>,
}

impl AppState {
    /// Must be called inside a Tokio runtime (it starts the ledger writer).
    pub fn new(db: Db, clock: Arc<dyn Clock>, address: AddressCtx, rate: RateLimit) -> AppState {
        let per_second = NonZeroU32::new(rate.per_second.max(1)).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(rate.burst.max(1)).unwrap_or(NonZeroU32::MIN);
        AppState {
            ledger: terrace_credits::LedgerWriter::spawn(db.clone()),
            db,
            clock,
            address,
            limiter: Arc::new(RateLimiter::keyed(
                Quota::per_second(per_second).allow_burst(burst),
            )),
            metrics: crate::telemetry::metrics_handle(),
            openapi: Arc::new(crate::openapi::document()),
        }
    }

    /// Ok, or the whole seconds to wait before the key may call again.
    pub fn check_rate(&self, key: i64) -> Result<(), u64> {
        self.limiter.check_key(&key).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
        })
    }
}
