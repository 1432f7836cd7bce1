//! Shared state of a running gateway.

use governor::clock::{Clock as _, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use metrics_exporter_prometheus::PrometheusHandle;
use std::num::NonZeroU32;
use std::sync::Arc;
use terrace_address::AddressCtx;
use terrace_core::Clock;
use terrace_store::Db;

/// Rate limits: per key, and per account (all its keys and OAuth tokens together), each a
/// steady rate with a burst allowance.
#[derive(Debug, Clone, Copy)]
pub struct RateLimit {
    pub per_second: u32,
    pub burst: u32,
    /// The account's limit, shared by all its keys: more keys do not buy more throughput.
    pub account_per_second: u32,
    pub account_burst: u32,
}

impl Default for RateLimit {
    /// Generous by default: 1,000 requests a second per key, bursts of 2,000; the same for the
    /// whole account.
    fn default() -> Self {
        RateLimit {
            per_second: 1000,
            burst: 2000,
            account_per_second: 1000,
            account_burst: 2000,
        }
    }
}

impl RateLimit {
    /// A per-key limit, with the account's limit the same.
    pub fn per_key(per_second: u32, burst: u32) -> RateLimit {
        RateLimit {
            per_second,
            burst,
            account_per_second: per_second,
            account_burst: burst,
        }
    }
}

/// Which rate limit refused a call (named in the 429 body).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateScope {
    Key,
    Account,
}

impl RateScope {
    pub fn as_str(self) -> &'static str {
        match self {
            RateScope::Key => "key",
            RateScope::Account => "account",
        }
    }
}

fn quota(per_second: u32, burst: u32) -> Quota {
    let per_second = NonZeroU32::new(per_second.max(1)).unwrap_or(NonZeroU32::MIN);
    let burst = NonZeroU32::new(burst.max(1)).unwrap_or(NonZeroU32::MIN);
    Quota::per_second(per_second).allow_burst(burst)
}

/// Authenticated keys by hash, so a call needs no store read to authenticate.
///
/// Safe because it is never the last word: the ledger's debit re-checks at commit time that the
/// key is not revoked and that the balance covers the price (any process's revocation or spend
/// counts at once). Entries live for [`KeyCache::TTL`]; a revocation through this process drops
/// its entry immediately; a cached balance too low for a call is re-read before answering 402.
///
/// The map hashes with foldhash, not SipHash: it holds only keys that authenticated, so nobody
/// can fill it with colliding entries, and SipHash over the 64-character hash was a measurable
/// share of a cached call (issue 20).
#[derive(Default)]
pub struct KeyCache {
    inner: std::sync::Mutex<
        std::collections::HashMap<
            String,
            (terrace_credits::Caller, std::time::Instant),
            foldhash::fast::RandomState,
        >,
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

/// The service's shared state: one reference-counted [`State`], so a call that keeps a handle to
/// it (every call's `Ctx`) costs one atomic increment, not one per field (the issue 20 profile
/// showed the per-field clone and drop of every call).
#[derive(Clone)]
pub struct AppState(Arc<State>);

impl std::ops::Deref for AppState {
    type Target = State;

    fn deref(&self) -> &State {
        &self.0
    }
}

/// What [`AppState`] holds.
#[derive(Clone)]
pub struct State {
    pub db: Db,
    pub clock: Arc<dyn Clock>,
    pub address: AddressCtx,
    /// The areas family: the area index over postcodes and boundaries.
    pub areas: terrace_areas::AreasCtx,
    pub limiter: Arc<DefaultKeyedRateLimiter<i64>>,
    /// The per-account limiter, beside the per-key one.
    pub account_limiter: Arc<DefaultKeyedRateLimiter<i64>>,
    /// Resource limits (sign-in, bodies, registration); see `limits.rs`.
    pub limits: Arc<crate::limits::Limits>,
    pub hash_pool: Arc<crate::limits::HashPool>,
    pub sign_in: Arc<crate::limits::SignInThrottle>,
    pub body_reads: Arc<crate::limits::BodyReads>,
    pub registrations: Arc<crate::limits::PerSource>,
    pub metadata_docs: Arc<crate::limits::MetadataCache>,
    /// `TERRACE_METRICS_TOKEN`: the operator token `/metrics` requires (unset: `/metrics` is off).
    pub metrics_token: Option<Arc<str>>,
    pub metrics: PrometheusHandle,
    /// The group-commit ledger writer every charged call goes through.
    pub ledger: terrace_credits::LedgerWriter,
    pub keys: Arc<KeyCache>,
    pub openapi: Arc<serde_json::Value>,
    /// The spatial layers of the risk report, rebuilt when a load changes them.
    pub layers: terrace_layers::LayerCache,
    /// The published market tables of the current build, dropped when a build runs.
    pub market: terrace_market::MarketCache,
    /// Council tax answers kept in memory until a load or a link changes them.
    pub council_tax: Arc<terrace_property::CouncilTaxMemo>,
    /// The auction feed's coverage, kept until a load changes rows.
    pub auction_coverage: Arc<terrace_auctions::CoverageMemo>,
    /// The parcel candidates of recent sourcing searches, kept until a load or build changes rows.
    pub sourcing_candidates: Arc<terrace_sourcing::search::CandidateMemo>,
    /// OAuth settings (issuer, resource, signing key, lifetimes).
    pub oauth: Arc<terrace_oauth::OAuthSettings>,
    /// Outbound HTTP, for fetching client ID metadata documents (public https only).
    pub http_client: reqwest::Client,
    /// Outbound HTTP for `http://` loopback metadata documents, used only when
    /// `TERRACE_OAUTH_INSECURE_CLIENT_IDS=1` (tests and local development).
    pub insecure_http_client: reqwest::Client,
}

impl AppState {
    /// Must be called inside a Tokio runtime (it starts the ledger writer).
    pub fn new(db: Db, clock: Arc<dyn Clock>, address: AddressCtx, rate: RateLimit) -> AppState {
        let limits = crate::limits::Limits::default();
        AppState(Arc::new(State {
            account_limiter: Arc::new(RateLimiter::keyed(quota(
                rate.account_per_second,
                rate.account_burst,
            ))),
            hash_pool: Arc::new(crate::limits::HashPool::new(&limits)),
            sign_in: Arc::new(crate::limits::SignInThrottle::new(&limits)),
            body_reads: Arc::new(crate::limits::BodyReads::new(&limits)),
            registrations: Arc::new(crate::limits::PerSource::new(
                limits.registrations_per_hour,
                std::time::Duration::from_secs(3600),
            )),
            metadata_docs: Arc::new(crate::limits::MetadataCache::default()),
            limits: Arc::new(limits),
            metrics_token: None,
            ledger: terrace_credits::LedgerWriter::spawn(db.clone()),
            keys: Arc::new(KeyCache::default()),
            areas: terrace_areas::AreasCtx::new(db.clone()),
            db,
            clock,
            address,
            limiter: Arc::new(RateLimiter::keyed(quota(rate.per_second, rate.burst))),
            metrics: crate::telemetry::metrics_handle(),
            openapi: Arc::new(crate::openapi::document()),
            layers: terrace_layers::LayerCache::default(),
            market: terrace_market::MarketCache::default(),
            council_tax: Arc::default(),
            auction_coverage: Arc::default(),
            sourcing_candidates: Arc::default(),
            oauth: Arc::new(terrace_oauth::OAuthSettings::new(
                "http://127.0.0.1:8080",
                terrace_oauth::random_token().into_bytes(),
            )),
            http_client: outbound_client(),
            insecure_http_client: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(5))
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap_or_default(),
        }))
    }

    /// The state to change in a `with_` builder (a copy when other handles share it).
    fn edit(&mut self) -> &mut State {
        Arc::make_mut(&mut self.0)
    }

    /// The same state with these OAuth settings.
    pub fn with_oauth(mut self, oauth: terrace_oauth::OAuthSettings) -> AppState {
        self.edit().oauth = Arc::new(oauth);
        self
    }

    /// The same state with these resource limits.
    pub fn with_limits(mut self, limits: crate::limits::Limits) -> AppState {
        let state = self.edit();
        state.hash_pool = Arc::new(crate::limits::HashPool::new(&limits));
        state.sign_in = Arc::new(crate::limits::SignInThrottle::new(&limits));
        state.body_reads = Arc::new(crate::limits::BodyReads::new(&limits));
        state.registrations = Arc::new(crate::limits::PerSource::new(
            limits.registrations_per_hour,
            std::time::Duration::from_secs(3600),
        ));
        state.limits = Arc::new(limits);
        self
    }

    /// The same state with `/metrics` open to this operator token.
    pub fn with_metrics_token(mut self, token: Option<&str>) -> AppState {
        self.edit().metrics_token = token.map(Arc::from);
        self
    }

    /// Ok, or the whole seconds to wait before the key (`rate_key`) may call again, or the
    /// account, and which of the two limits it was.
    pub fn check_rate(&self, key: i64, account_id: i64) -> Result<(), (u64, RateScope)> {
        let wait = |not_until: governor::NotUntil<_>| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
        };
        self.limiter
            .check_key(&key)
            .map_err(|n| (wait(n), RateScope::Key))?;
        self.account_limiter
            .check_key(&account_id)
            .map_err(|n| (wait(n), RateScope::Account))
    }
}

/// Outbound HTTP (client ID metadata documents): https only, public addresses only (see
/// [`crate::limits::PublicOnly`]), at most 3 redirects, 5 s in all.
fn outbound_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(5))
        .connect_timeout(std::time::Duration::from_secs(3))
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let literal_private = attempt.url().host().is_some_and(|h| match h {
                url::Host::Ipv4(ip) => !crate::limits::is_public(ip.into()),
                url::Host::Ipv6(ip) => !crate::limits::is_public(ip.into()),
                url::Host::Domain(_) => false,
            });
            if attempt.previous().len() >= 3 || literal_private {
                attempt.error("redirect refused")
            } else {
                attempt.follow()
            }
        }))
        .dns_resolver(Arc::new(crate::limits::PublicOnly))
        .https_only(true)
        .build()
        .unwrap_or_default()
}
