//! Configuration from the environment.

use crate::state::RateLimit;
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Config {
    /// `TERRACE_ADDR`, default `127.0.0.1:8080`.
    pub addr: String,
    /// `DATABASE_URL`, `TERRACE_DATA_DIR`, `TERRACE_DB_POOL`: where the store lives.
    pub store: terrace_store::StoreConfig,
    /// `TERRACE_FIXTURES_DIR`, default `./fixtures`: loaded into an empty store on first start.
    pub fixtures_dir: PathBuf,
    /// `TERRACE_LOAD_FIXTURES`, default true: set `0` to start an empty store empty.
    pub load_fixtures: bool,
    /// `TERRACE_RATE_LIMIT` (requests per second per key) and `TERRACE_RATE_BURST`;
    /// `TERRACE_ACCOUNT_RATE_LIMIT` and `TERRACE_ACCOUNT_RATE_BURST` for the whole account.
    pub rate: RateLimit,
    /// `TERRACE_METRICS_TOKEN`: the operator token `/metrics` requires as
    /// `Authorization: Bearer <token>`; unset, `/metrics` answers 404.
    pub metrics_token: Option<String>,
    /// `TERRACE_WORKERS`, default the number of cores.
    pub workers: Option<usize>,
    /// `TERRACE_PUBLIC_URL`, default `http://` + `addr` (`0.0.0.0` and `[::]` read as
    /// `127.0.0.1`): the base URL clients reach the service at; the OAuth issuer, and the MCP
    /// resource is this plus `/mcp`. Unset, a request to a loopback host is answered with that
    /// host instead (`public_url_configured` false), so `localhost` and `127.0.0.1` both sign in.
    pub public_url: String,
    /// Whether `TERRACE_PUBLIC_URL` was set.
    pub public_url_configured: bool,
    /// `TERRACE_OAUTH_SIGNING_KEY` (at least 32 characters): the access-token signing key. Unset:
    /// a key generated once and kept in the store's `meta` table (embedded mode).
    pub oauth_signing_key: Option<String>,
    /// `TERRACE_OAUTH_INSECURE_CLIENT_IDS=1`: accept http client ID metadata URLs on loopback
    /// (local development and tests only).
    pub oauth_insecure_client_ids: bool,
    /// `TERRACE_LEDGER_RETENTION_DAYS`, default 90: per-call ledger rows older than this are
    /// rolled up per account, day, operation and surface (hourly, by every server).
    pub ledger_retention_days: i64,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn env_num<T: std::str::FromStr>(name: &str) -> Result<Option<T>, String> {
    match env(name) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("{name}={v:?} is not a number")),
    }
}

/// The public URL of a service listening on `addr` when none is configured: `http://addr`, with
/// a wildcard address (`0.0.0.0`, `[::]`) read as loopback.
fn default_public_url(addr: &str) -> String {
    let local = match addr.rsplit_once(':') {
        Some(("0.0.0.0" | "[::]" | "::" | "", port)) => format!("127.0.0.1:{port}"),
        Some(_) | None => addr.to_string(),
    };
    format!("http://{local}")
}

impl Config {
    pub fn from_env() -> Result<Config, String> {
        let default_rate = RateLimit::default();
        let addr = env("TERRACE_ADDR").unwrap_or_else(|| "127.0.0.1:8080".into());
        let oauth_signing_key = env("TERRACE_OAUTH_SIGNING_KEY");
        if oauth_signing_key.as_ref().is_some_and(|k| k.len() < 32) {
            return Err("TERRACE_OAUTH_SIGNING_KEY must be at least 32 characters".into());
        }
        let configured = env("TERRACE_PUBLIC_URL");
        Ok(Config {
            public_url_configured: configured.is_some(),
            public_url: configured
                .unwrap_or_else(|| default_public_url(&addr))
                .trim_end_matches('/')
                .to_string(),
            oauth_signing_key,
            oauth_insecure_client_ids: env("TERRACE_OAUTH_INSECURE_CLIENT_IDS")
                .is_some_and(|v| v == "1" || v == "true"),
            addr,
            store: terrace_store::StoreConfig::from_env()?,
            fixtures_dir: env("TERRACE_FIXTURES_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| "./fixtures".into()),
            load_fixtures: env("TERRACE_LOAD_FIXTURES").is_none_or(|v| v != "0" && v != "false"),
            rate: RateLimit {
                per_second: env_num("TERRACE_RATE_LIMIT")?.unwrap_or(default_rate.per_second),
                burst: env_num("TERRACE_RATE_BURST")?.unwrap_or(default_rate.burst),
                account_per_second: env_num("TERRACE_ACCOUNT_RATE_LIMIT")?
                    .unwrap_or(default_rate.account_per_second),
                account_burst: env_num("TERRACE_ACCOUNT_RATE_BURST")?
                    .unwrap_or(default_rate.account_burst),
            },
            metrics_token: env("TERRACE_METRICS_TOKEN"),
            workers: env_num("TERRACE_WORKERS")?,
            ledger_retention_days: match env_num::<i64>("TERRACE_LEDGER_RETENTION_DAYS")? {
                Some(d) if d < 1 => {
                    return Err("TERRACE_LEDGER_RETENTION_DAYS must be at least 1".into());
                }
                Some(d) => d,
                None => terrace_credits::DEFAULT_RETENTION_DAYS,
            },
        })
    }
}
