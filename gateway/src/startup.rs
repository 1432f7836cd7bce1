//! Start-up: open and migrate the store, load the fixtures into an empty embedded store, build the
//! address index, then serve.

use crate::config::Config;
use crate::state::AppState;
use actix_web::{App, HttpServer, web};
use std::sync::Arc;
use std::time::Duration;
use terrace_address::{AddressCtx, IndexHandle};
use terrace_core::SystemClock;
use terrace_store::{Db, DbOptions, Location};

pub async fn open_store(config: &Config) -> anyhow::Result<Db> {
    let location = Location::from_env_or(config.database_url.as_deref(), &config.data_dir)?;
    let opts = DbOptions {
        max_connections: config.pool_size,
        ..DbOptions::default()
    };
    let db = Db::open(&location, &opts)?;
    db.migrate().await?;
    Ok(db)
}

/// Loads `fixtures/` through the real loaders when the register is empty (first start).
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
    let reports = terrace_ingest::load_manifest(
        db,
        &config.fixtures_dir,
        &mut terrace_ingest::Progress::log(),
    )
    .await?;
    for r in &reports {
        tracing::info!(dataset = %r.dataset, file = %r.file, counts = ?r.counts, "fixture loaded");
    }
    terrace_market::build::build(db, chrono::Utc::now().naive_utc(), &mut |s| {
        tracing::info!("{s}")
    })
    .await?;
    Ok(())
}

/// The state a gateway serves from: index built, ready to answer.
pub async fn prepare(config: &Config) -> anyhow::Result<AppState> {
    let db = open_store(config).await?;
    ensure_fixtures(&db, config).await?;
    let index = Arc::new(IndexHandle::default());
    index.refresh(&db).await?;
    tracing::info!(addresses = index.current().len(), "address index built");
    let address = AddressCtx {
        db: db.clone(),
        index: index.clone(),
    };
    spawn_index_refresher(db.clone(), index);
    let oauth = oauth_settings(&db, config).await?;
    Ok(AppState::new(db, Arc::new(SystemClock), address, config.rate).with_oauth(oauth))
}

/// OAuth settings from the configuration; without a configured signing key, the one generated
/// by the first start and kept in the store (so tokens survive restarts).
pub async fn oauth_settings(
    db: &Db,
    config: &Config,
) -> anyhow::Result<crate::oauth::OAuthSettings> {
    let key = match &config.oauth_signing_key {
        Some(k) => k.clone(),
        None => {
            terrace_store::meta::get_or_insert(
                db,
                terrace_store::meta::Key::OauthSigningKey,
                &crate::oauth::random_token(),
            )
            .await?
        }
    };
    let mut s = crate::oauth::OAuthSettings::new(&config.public_url, key.into_bytes());
    s.insecure_client_ids = config.oauth_insecure_client_ids;
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

/// Mounts everything on an app (used by `serve` and by the tests).
pub fn app_config(state: AppState) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        let mcp = crate::mcp::http_service(&state);
        cfg.app_data(web::Data::new(state))
            .configure(crate::oauth::routes::configure)
            .configure(crate::hub::configure)
            .service(mcp)
            .configure(crate::http::configure)
            .default_service(web::to(crate::http::not_found));
    }
}

pub async fn serve(config: Config) -> anyhow::Result<()> {
    let state = prepare(&config).await?;
    tracing::info!(addr = %config.addr, "serving");
    let mut server = HttpServer::new(move || {
        App::new()
            .wrap(tracing_actix_web::TracingLogger::default())
            .configure(app_config(state.clone()))
    })
    .backlog(4096);
    if let Some(w) = config.workers {
        server = server.workers(w);
    }
    server.bind(&config.addr)?.run().await?;
    Ok(())
}
