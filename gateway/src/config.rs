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
    /// `TERRACE_RATE_LIMIT` (requests per second per key) and `TERRACE_RATE_BURST`.
    pub rate: RateLimit,
    /// `TERRACE_WORKERS`, default the number of cores.
    pub workers: Option<usize>,
    /// `TERRACE_PUBLIC_URL`, default `http://` + `addr`: the base URL clients reach the service
    /// at; the OAuth issuer, and the MCP resource is this plus `/mcp`.
    pub public_url: String,
    /// `TERRACE_OAUTH_SIGNING_KEY` (at least 32 characters): the access-token signing key. Unset:
    /// a key generated once and kept in the store's `meta` table (embedded mode).
    pub oauth_signing_key: Option<String>,
    /// `TERRACE_OAUTH_INSECURE_CLIENT_IDS=1`: accept http client ID metadata URLs on loopback
    /// (local development and tests only).
    pub oauth_insecure_client_ids: bool,
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

impl Config {
    pub fn from_env() -> Result<Config, String> {
        let default_rate = RateLimit::default();
        let addr = env("TERRACE_ADDR").unwrap_or_else(|| "127.0.0.1:8080".into());
        let oauth_signing_key = env("TERRACE_OAUTH_SIGNING_KEY");
        if oauth_signing_key.as_ref().is_some_and(|k| k.len() < 32) {
            return Err("TERRACE_OAUTH_SIGNING_KEY must be at least 32 characters".into());
        }
        Ok(Config {
            public_url: env("TERRACE_PUBLIC_URL")
                .unwrap_or_else(|| format!("http://{addr}"))
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
            },
            workers: env_num("TERRACE_WORKERS")?,
        })
    }
}
