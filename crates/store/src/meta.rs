//! The `meta` key-value table: the store's small named facts (versions that tell servers to
//! rebuild an in-memory index, the market build's stamps, the embedded signing key).
//!
//! Invariants: every key is a [`Key`] variant (no raw key strings outside this module), and
//! each variant's spelling is stable, since it is what the table holds. An empty value is how
//! writers clear a fact (readers treat it as absent where that matters).

use crate::db::{Db, StoreResult};
use crate::schema::meta;
use crate::{replace_rows, with_conn};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// A known `meta` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// Changes whenever a loader changes the address register; servers rebuild their in-memory
    /// address index when it changes.
    AddressRegisterVersion,
    /// Changes whenever a load changes rows of any dataset, or the address matcher links rows to
    /// UPRNs: services drop the answers they keep in memory (`memo::Memo`) when it does.
    DataVersion,
    /// Changes whenever a load changes a spatial layer; services rebuild their in-memory layer
    /// indices when it changes.
    SpatialLayersVersion,
    /// The last month of registered sales the market build used (`YYYY-MM-01`; empty: none).
    MarketDataThrough,
    /// The first month the market build treats as provisional (`YYYY-MM-01`; empty: none).
    MarketProvisionalFrom,
    /// When the newest sale the market build read was ingested (`YYYY-MM-DDTHH:MM:SSZ`).
    MarketLastIngestedAt,
    /// When the market build ran (`YYYY-MM-DDTHH:MM:SSZ`).
    MarketBuiltAt,
    /// The market build's national backtest table (text; empty: none).
    MarketBacktest,
    /// Changes with every market build (written last): servers drop their cached market tables
    /// when it does.
    MarketBuildId,
    /// The OAuth signing key the embedded mode generates on its first start.
    OauthSigningKey,
}

impl Key {
    /// Every known key.
    pub const ALL: [Key; 10] = [
        Key::AddressRegisterVersion,
        Key::DataVersion,
        Key::SpatialLayersVersion,
        Key::MarketDataThrough,
        Key::MarketProvisionalFrom,
        Key::MarketLastIngestedAt,
        Key::MarketBuiltAt,
        Key::MarketBacktest,
        Key::MarketBuildId,
        Key::OauthSigningKey,
    ];

    /// The key as the table stores it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Key::AddressRegisterVersion => "address_register_version",
            Key::DataVersion => "data_version",
            Key::SpatialLayersVersion => "spatial_layers_version",
            Key::MarketDataThrough => "market.data_through",
            Key::MarketProvisionalFrom => "market.provisional_from",
            Key::MarketLastIngestedAt => "market.last_ingested_at",
            Key::MarketBuiltAt => "market.built_at",
            Key::MarketBacktest => "market.backtest",
            Key::MarketBuildId => "market.build_id",
            Key::OauthSigningKey => "oauth_signing_key",
        }
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = meta)]
struct MetaRow {
    key: String,
    value: String,
}

/// The stored value of `key`, if any.
pub async fn get(db: &Db, key: Key) -> StoreResult<Option<String>> {
    let key = key.as_str();
    Ok(with_conn!(db, |c| {
        meta::table
            .find(key)
            .select(meta::value)
            .first(c)
            .await
            .optional()?
    }))
}

/// The stored values of `keys`, in their order (`None`: not stored), in one query.
pub async fn get_many(db: &Db, keys: &[Key]) -> StoreResult<Vec<Option<String>>> {
    let names: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
    let rows: Vec<(String, String)> = with_conn!(db, |c| {
        meta::table
            .filter(meta::key.eq_any(&names))
            .select((meta::key, meta::value))
            .load(c)
            .await?
    });
    Ok(names
        .iter()
        .map(|n| rows.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone()))
        .collect())
}

/// Writes a new value of a version key (`address_register_version`, `data_version`): `why`, which
/// names what changed for an operator reading the table, then the time in nanoseconds, so that no
/// two changes share a value.
pub async fn bump(db: &Db, key: Key, why: &str) -> StoreResult<()> {
    let stamp = chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default();
    set(db, key, &format!("{why}-{stamp}")).await
}

/// The stored value of `key` when it is present and not empty (an empty value clears a fact).
pub async fn get_non_empty(db: &Db, key: Key) -> StoreResult<Option<String>> {
    Ok(get(db, key).await?.filter(|v| !v.is_empty()))
}

/// Stores `value` under `key`, replacing any stored value.
pub async fn set(db: &Db, key: Key, value: &str) -> StoreResult<()> {
    let row = MetaRow {
        key: key.as_str().to_string(),
        value: value.to_string(),
    };
    replace_rows!(db, meta::table, meta::key, [row.key.clone()], [row]);
    Ok(())
}

/// Stores `value` under `key` unless a value is already there, and returns the value stored
/// (the first writer wins, also between processes starting at once).
pub async fn get_or_insert(db: &Db, key: Key, value: &str) -> StoreResult<String> {
    let key = key.as_str();
    Ok(with_conn!(db, |c| {
        diesel::insert_into(meta::table)
            .values((meta::key.eq(key), meta::value.eq(value)))
            .on_conflict_do_nothing()
            .execute(c)
            .await?;
        meta::table.find(key).select(meta::value).first(c).await?
    }))
}
