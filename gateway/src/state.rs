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

/// Authenticated keys by hash, so a call needs no store read to authenticate.
///
/// Safe because it is never the last word: the ledger's debit re-checks at commit time that the
/// key is not revoked and that the balance covers the price (any process's revocation or spend
/// counts at once). Entries live for [`KeyCache::TTL`]; a revocation through this process drops
/// its entry immediately; a cached balance too low for a call is re-read before answering 402.
#[derive(Default)]
pub struct KeyCache {
    inner: std::sync::Mutex<
        std::collections::HashMap<String, (terrace_credits::Caller, std::time::Instant)>,
    >,
}

impl KeyCache {
    pub const TTL: std::time::Duration = std::time::Duration::from_secs(30);
    const MAX: usize = 100_000;

    /// The cached caller, if fresh and able to afford `need` credits.
    pub fn get(&self, hash: &str, need: i64) -> Option<terrace_credits::Caller> {
        let map = self.inner.lock().ok()?;
        let (caller, at) = map.get(hash)?;
        (at.elapsed() < Self::TTL && caller.balance >= need).then(|| caller.clone())
    }

    pub fn put(&self, hash: &str, caller: &terrace_credits::Caller) {
        if let Ok(mut map) = self.inner.lock() {
            if map.len() >= Self::MAX {
                map.clear();
            }
            map.insert(
                hash.to_string(),
                (caller.clone(), std::time::Instant::now()),
            );
        }
    }

    /// Records the balance a charge left (keeps the entry's age).
    pub fn set_balance(&self, hash: &str, balance: i64) {
        if let Ok(mut map) = self.inner.lock()
            && let Some((caller, _)) = map.get_mut(hash)
        {
            caller.balance = balance;
        }
    }

    pub fn forget_key(&self, key_id: i64) {
        if let Ok(mut map) = self.inner.lock() {
            map.retain(|_, (c, _)| c.key_id != Some(key_id));
        }
    }

    pub fn forget(&self, hash: &str) {
        if let Ok(mut map) = self.inner.lock() {
            map.remove(hash);
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
    pub keys: Arc<KeyCache>,
    pub openapi: Arc<serde_json::Value>,
    /// The spatial layers of the risk report, rebuilt when a load changes them.
    pub layers: terrace_layers::LayerCache,
    /// The published market tables of the current build, dropped when a build runs.
    pub market: terrace_market::MarketCache,
    /// OAuth settings (issuer, resource, signing key, lifetimes).
    pub oauth: Arc<terrace_oauth::OAuthSettings>,
    /// Outbound HTTP, for fetching client ID metadata documents.
    pub http_client: reqwest::Client,
}

impl AppState {
    /// Must be called inside a Tokio runtime (it starts the ledger writer).
    pub fn new(db: Db, clock: Arc<dyn Clock>, address: AddressCtx, rate: RateLimit) -> AppState {
        let per_second = NonZeroU32::new(rate.per_second.max(1)).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(rate.burst.max(1)).unwrap_or(NonZeroU32::MIN);
        AppState {
            ledger: terrace_credits::LedgerWriter::spawn(db.clone()),
            keys: Arc::new(KeyCache::default()),
            db,
            clock,
            address,
            limiter: Arc::new(RateLimiter::keyed(
                Quota::per_second(per_second).allow_burst(burst),
            )),
            metrics: crate::telemetry::metrics_handle(),
            openapi: Arc::new(crate::openapi::document()),
            layers: terrace_layers::LayerCache::default(),
            market: terrace_market::MarketCache::default(),
            oauth: Arc::new(terrace_oauth::OAuthSettings::new(
                "http://127.0.0.1:8080",
                terrace_oauth::random_token().into_bytes(),
            )),
            http_client: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(5))
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap_or_default(),
        }
    }

    /// The same state with these OAuth settings.
    pub fn with_oauth(mut self, oauth: terrace_oauth::OAuthSettings) -> AppState {
        self.oauth = Arc::new(oauth);
        self
    }

    /// Ok, or the whole seconds to wait before the key may call again.
    pub fn check_rate(&self, key: i64) -> Result<(), u64> {
        self.limiter.check_key(&key).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
        })
    }
}
