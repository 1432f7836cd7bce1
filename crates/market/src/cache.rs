//! The published market tables of the current build, held in memory by the server.
//!
//! A build (`cargo xtask build`, maybe in another process) replaces the derived tables and then
//! stamps `market.build_id`. Every read here starts with that one `meta` read: while the stamp is
//! unchanged, a geography's row, index points and monthly volumes are read from the store once
//! and served from memory after that (the volume series says `cached: true`); when the stamp
//! changes the whole snapshot is dropped. Only geographies that exist are kept, so memory is
//! bounded by the build (a few hundred bytes per period and geography asked for), never by what
//! callers ask.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use terrace_store::Db;
use terrace_store::market::{self as mk, GeographyRow, IndexPointRow, VolumeRow};
use terrace_store::meta;

use crate::MarketError;
use crate::build::{
    META_BUILD_ID, META_DATA_THROUGH, META_LAST_INGESTED_AT, META_PROVISIONAL_FROM,
};

/// A geography's published index: its row and its points, oldest first (forecasts last).
#[derive(Debug)]
pub struct PublishedSeries {
    pub geography: GeographyRow,
    pub points: Vec<IndexPointRow>,
}

/// A geography's monthly volumes, every month the build wrote, oldest first.
#[derive(Debug)]
pub struct PublishedVolumes {
    pub geography: GeographyRow,
    pub rows: Vec<VolumeRow>,
}

/// One build's published tables, filled as geographies are asked for.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// `market.build_id` when the snapshot was taken (`None` before any build).
    pub build_id: Option<String>,
    pub data_through: Option<String>,
    pub provisional_from: Option<String>,
    pub last_ingested_at: Option<String>,
    series: RwLock<HashMap<String, Arc<PublishedSeries>>>,
    volumes: RwLock<HashMap<String, Arc<PublishedVolumes>>>,
}

/// Whether an answer came from memory (`true`) or was read from the store for this call.
pub type Cached<T> = (Arc<T>, bool);

async fn meta(db: &Db, key: meta::Key) -> Result<Option<String>, MarketError> {
    Ok(meta::get(db, key).await?.filter(|v| !v.is_empty()))
}

/// The entry of `key` from memory, else from `load` (kept when it finds something).
async fn get_or_load<T, F, Fut>(
    map: &RwLock<HashMap<String, Arc<T>>>,
    key: &str,
    load: F,
) -> Result<Option<Cached<T>>, MarketError>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<Option<T>, MarketError>>,
{
    if let Some(hit) = map.read().ok().and_then(|m| m.get(key).cloned()) {
        return Ok(Some((hit, true)));
    }
    let Some(found) = load().await? else {
        return Ok(None);
    };
    let entry = Arc::new(found);
    if let Ok(mut m) = map.write() {
        m.insert(key.to_string(), entry.clone());
    }
    Ok(Some((entry, false)))
}

impl Snapshot {
    /// A geography's published index, if it has one (`None`: no row, or a row without an
    /// index, such as a county).
    pub async fn series(
        &self,
        db: &Db,
        key: &str,
    ) -> Result<Option<Cached<PublishedSeries>>, MarketError> {
        get_or_load(&self.series, key, || async {
            let Some(geography) = mk::geography(db, key)
                .await?
                .filter(|g| g.index_method.is_some())
            else {
                return Ok(None);
            };
            let points = mk::index_points(db, key).await?;
            Ok(Some(PublishedSeries { geography, points }))
        })
        .await
    }

    /// A geography's monthly volumes, if the build wrote the geography.
    pub async fn volumes(
        &self,
        db: &Db,
        key: &str,
    ) -> Result<Option<Cached<PublishedVolumes>>, MarketError> {
        get_or_load(&self.volumes, key, || async {
            let Some(geography) = mk::geography(db, key).await? else {
                return Ok(None);
            };
            let rows = mk::volume(db, key).await?;
            Ok(Some(PublishedVolumes { geography, rows }))
        })
        .await
    }
}

/// The server's handle on the current snapshot; cheap to clone (shared).
#[derive(Debug, Clone, Default)]
pub struct MarketCache {
    current: Arc<RwLock<Option<Arc<Snapshot>>>>,
}

impl MarketCache {
    /// The snapshot of the current build: one `meta` read, plus three more when a build has run
    /// since the last call.
    pub async fn snapshot(&self, db: &Db) -> Result<Arc<Snapshot>, MarketError> {
        let build_id = meta(db, META_BUILD_ID).await?;
        if let Some(s) = self.current.read().ok().and_then(|c| c.clone())
            && s.build_id == build_id
        {
            return Ok(s);
        }
        let fresh = Arc::new(Snapshot {
            build_id,
            data_through: meta(db, META_DATA_THROUGH).await?,
            provisional_from: meta(db, META_PROVISIONAL_FROM).await?,
            last_ingested_at: meta(db, META_LAST_INGESTED_AT).await?,
            ..Snapshot::default()
        });
        if let Ok(mut c) = self.current.write() {
            *c = Some(fresh.clone());
        }
        Ok(fresh)
    }
}
