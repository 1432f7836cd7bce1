//! Start-up: open and migrate the store, load the fixtures into an empty embedded store, build the
//! address index, then serve.

use crate::config::Config;
use crate::state::AppState;
use actix_web::{App, HttpServer, web};
use std::sync::Arc;
use std::time::Duration;
use terrace_address::{AddressCtx, IndexHandle};
use terrace_core::SystemClock;
use terrace_store::Db;

/// Loads `fixtures/` through the real loaders when the register is empty (first start); the
/// manifest loader runs the derived steps (areas, links, the market build) after.
pub async fn ensure_fixtures(db: &Db, config: &Config) -> anyhow::Result<()> {
    let counts = terrace_store::address::register_counts(db).await?;
    if counts.addresses > 0 || !config.load_fixtures {
        return Ok(());
    }
    if !config.fixtures_dir.join("manifest.json").exists() {
        tracing::warn!(dir = %config.fixtures_dir.display(), "no fixtures manifest; starting empty");
        return Ok(());
    }
    tracing::info!(dir = %config.fixtures_dir.display(), "empty store: loading the fixtures");
    let reports = terrace_build::load_and_build(
        db,
        &config.fixtures_dir,
        &mut terrace_ingest::Progress::log(),
    )
    .await?;
    for r in &reports {
        tracing::info!(dataset = %r.dataset, file = %r.file, counts = ?r.counts, "fixture loaded");
    }
    Ok(())
}

/// The state a gateway serves from: index built, ready to answer.
pub async fn prepare(config: &Config) -> anyhow::Result<AppState> {
    let db = config.store.open().await?;
    ensure_fixtures(&db, config).await?;
    let index = Arc::new(IndexHandle::default());
    index.refresh(&db).await?;
    tracing::info!(addresses = index.current().len(), "address index built");
    let address = AddressCtx {
        db: db.clone(),
        index: index.clone(),
    };
    spawn_index_refresher(db.clone(), index);
    spawn_ledger_retention(db.clone(), config.ledger_retention_days);
    let oauth = oauth_settings(&db, config).await?;
    let state = AppState::new(db, Arc::new(SystemClock), address, config.rate)
        .with_oauth(oauth)
        .with_metrics_token(config.metrics_token.as_deref());
    // Built before the first call, which would otherwise wait for it (about 0.6 s for a
    // million addresses' postcodes and boundaries).
    state.areas.cache.current(&state.db).await?;
    tracing::info!("area index built");
    Ok(state)
}

/// OAuth settings from the configuration; without a configured signing key, the one generated
/// by the first start and kept in the store (so tokens survive restarts).
pub async fn oauth_settings(
    db: &Db,
    config: &Config,
) -> anyhow::Result<terrace_oauth::OAuthSettings> {
    let key = match &config.oauth_signing_key {
        Some(k) => k.clone(),
        None => {
            terrace_store::meta::get_or_insert(
                db,
                terrace_store::meta::Key::OauthSigningKey,
                &terrace_oauth::random_token(),
            )
            .await?
        }
    };
    let mut s = terrace_oauth::OAuthSettings::new(&config.public_url, key.into_bytes());
    s.insecure_client_ids = config.oauth_insecure_client_ids;
    s.derive_from_host = !config.public_url_configured;
    Ok(s)
}

/// Rebuilds the index when a loader changes the register (checked every 30 s).
fn spawn_index_refresher(db: Db, index: Arc<IndexHandle>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(30));
        tick.tick().await;
        loop {
            tick.tick().await;
            match index.refresh(&db).await {
                Ok(true) => {
                    tracing::info!(addresses = index.current().len(), "address index rebuilt")
                }
                Ok(false) => {}
                Err(e) => tracing::warn!(error = %e, "address index refresh failed"),
            }
        }
    });
}

/// Rolls per-call ledger rows past retention up into their days, at start and every hour.
/// Each step is its own short transaction, so calls being charged meanwhile wait for at most one.
fn spawn_ledger_retention(db: Db, retention_days: i64) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(3600));
        loop {
            tick.tick().await;
            let now = chrono::Utc::now();
            match terrace_credits::roll_up_ledger(&db, now, retention_days).await {
                Ok(0) => {}
                Ok(rows) => tracing::info!(rows, retention_days, "ledger rows rolled up"),
                Err(e) => tracing::warn!(error = %e, "ledger roll-up failed"),
            }
        }
    });
}

/// Mounts everything on an app (used by `serve` and by the tests).
pub fn app_config(state: AppState) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        let mcp = crate::mcp::http_service(&state);
        cfg.app_data(web::Data::new(state))
            .app_data(web::QueryConfig::default().error_handler(|e, _req| {
                let error =
                    crate::error::ApiError::Validation(vec![crate::error::FieldError::new(
                        &["query"],
                        "value_error",
                        format!("Malformed query string: {e}"),
                    )]);
                let rid = uuid::Uuid::new_v4().to_string();
                actix_web::error::InternalError::from_response(e, error.response(None, &rid)).into()
            }))
            .app_data(
                web::FormConfig::default()
                    .limit(16 * 1024)
                    .error_handler(|e, _req| form_error(e)),
            )
            // The operations first: a charged call is not tried against every other route.
            .configure(crate::http::configure)
            .configure(crate::oauth::routes::configure)
            .configure(crate::hub::configure)
            .service(mcp)
            .default_service(web::to(crate::http::not_found));
    }
}

pub async fn serve(config: Config) -> anyhow::Result<()> {
    let state = prepare(&config).await?;
    tracing::info!(addr = %config.addr, "serving");
    let body_deadline = state.limits.body_deadline;
    let mut server = HttpServer::new(move || {
        App::new()
            .wrap(tracing_actix_web::TracingLogger::<
                crate::telemetry::RequestSpan,
            >::new())
            .configure(app_config(state.clone()))
    })
    .backlog(4096)
    // The request head must arrive within this time (the body has its own deadline).
    .client_request_timeout(body_deadline)
    .client_disconnect_timeout(Duration::from_secs(2));
    if let Some(w) = config.workers {
        server = server.workers(w);
    }
    server.bind(&config.addr)?.run().await?;
    Ok(())
}

/// A form the pages or the OAuth endpoints could not read, as the JSON error body (413, 415 or
/// 422), never actix's plain text.
// actix's error enum is foreign and non-exhaustive: every other reason is a malformed form.
#[allow(clippy::wildcard_enum_match_arm)]
fn form_error(e: actix_web::error::UrlencodedError) -> actix_web::Error {
    use actix_web::error::UrlencodedError as U;
    let error = match &e {
        U::Overflow { .. } | U::UnknownLength => {
            crate::error::ApiError::PayloadTooLarge { limit: 16 * 1024 }
        }
        U::ContentType => crate::error::ApiError::UnsupportedMediaType,
        other => crate::error::ApiError::Validation(vec![crate::error::FieldError::new(
            &["body"],
            "value_error",
            format!("Malformed form: {other}"),
        )]),
    };
    let rid = uuid::Uuid::new_v4().to_string();
    actix_web::error::InternalError::from_response(e, error.response(None, &rid)).into()
}
