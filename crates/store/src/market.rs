//! The market tables `cargo xtask build` derives from the loaded sales and the register:
//! geographies with their index provenance, index points (forecasts included) and monthly
//! volumes. Geography keys carry their kind: `national:UK`, `area:EX`, `district:EX1`,
//! `county:DEVON`, `la:E07000041`.

use crate::address::PostcodeRow;
use crate::db::{Db, StoreResult};
use crate::schema::{
    hpi_reference, market_geographies, market_index_points, market_volume, postcodes, price_paid,
};
use crate::{keyed_ops, replace_rows, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = market_geographies)]
pub struct GeographyRow {
    pub geography: String,
    /// `national`, `area`, `district`, `county` or `la`.
    pub geo_kind: String,
    pub parent: Option<String>,
    /// Residential addresses in the register (the stock that could sell); districts and local
    /// authorities only.
    pub residential_stock: Option<i64>,
    /// Postcode districts with sales in the geography (areas and counties; 1 for a district).
    pub n_districts: Option<i64>,
    pub grain: Option<String>,
    pub base_period: Option<String>,
    pub index_method: Option<String>,
    pub index_decision: Option<String>,
    pub n_pairs: Option<i64>,
    pub n_sales: Option<i64>,
    pub last_settled: Option<String>,
    pub forecast_method: Option<String>,
    pub forecast_coverage: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = market_index_points)]
pub struct IndexPointRow {
    pub geography: String,
    /// `YYYY-MM` (monthly grain).
    pub period: String,
    pub level: Option<f64>,
    pub log_se: Option<f64>,
    /// The interval at the geography's stated coverage, on estimated and forecast rows.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    pub n: Option<i64>,
    pub is_forecast: bool,
    /// The estimator's own level before smoothing (null where it had none, and on forecasts).
    pub raw_level: Option<f64>,
    /// True when the period had no own estimate and its level was filled by the smoother.
    pub filled: bool,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = market_volume)]
pub struct VolumeRow {
    pub geography: String,
    /// `YYYY-MM-01`.
    pub month: String,
    pub txn_count: i64,
    pub txn_count_ppd_a: i64,
    pub txn_count_ppd_b: i64,
    pub txn_count_new_build: i64,
    pub txn_count_uprn_matched: i64,
    /// Category A sales only; null in a month with none.
    pub median_price: Option<f64>,
    pub p25_price: Option<f64>,
    pub p75_price: Option<f64>,
    pub mean_price: Option<f64>,
}

/// What the market build reads of a registered sale (the columns it uses, no more: the build
/// reads every sale, and each column read is an allocation per row).
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = price_paid)]
pub struct MarketSaleRow {
    pub transaction_id: String,
    pub price: i64,
    pub date: NaiveDate,
    pub postcode: Option<String>,
    pub property_type: String,
    pub new_build: bool,
    pub tenure: String,
    pub paon: Option<String>,
    pub saon: Option<String>,
    pub street: Option<String>,
    pub county: Option<String>,
    pub ppd_category: String,
    pub uprn: Option<i64>,
    pub updated_at: NaiveDateTime,
}

/// A page of the registered sales in transaction-id order after `after`, for the build.
pub async fn sales_page(db: &Db, after: &str, limit: i64) -> StoreResult<Vec<MarketSaleRow>> {
    Ok(with_conn!(db, |c| {
        price_paid::table
            .filter(price_paid::transaction_id.gt(after))
            .order(price_paid::transaction_id)
            .limit(limit)
            .select(MarketSaleRow::as_select())
            .load(c)
            .await?
    }))
}

/// A page of the postcode directory in postcode order after `after`, for the build.
pub async fn postcodes_page(db: &Db, after: &str, limit: i64) -> StoreResult<Vec<PostcodeRow>> {
    Ok(with_conn!(db, |c| {
        postcodes::table
            .filter(postcodes::postcode.gt(after))
            .order(postcodes::postcode)
            .limit(limit)
            .select(PostcodeRow::as_select())
            .load(c)
            .await?
    }))
}

/// Replaces the market tables with a new build: each geography's rows are swapped in one
/// transaction per table, then geographies the build no longer produced are removed.
pub async fn replace_market(
    db: &Db,
    geos: Vec<GeographyRow>,
    points: Vec<IndexPointRow>,
    volumes: Vec<VolumeRow>,
) -> StoreResult<()> {
    let keys: Vec<String> = geos.iter().map(|g| g.geography.clone()).collect();
    replace_rows!(
        db,
        market_index_points::table,
        market_index_points::geography,
        keys.clone(),
        points
    );
    replace_rows!(
        db,
        market_volume::table,
        market_volume::geography,
        keys.clone(),
        volumes
    );
    replace_rows!(
        db,
        market_geographies::table,
        market_geographies::geography,
        keys.clone(),
        geos
    );
    let stale: Vec<String> = with_conn!(db, |c| {
        market_geographies::table
            .select(market_geographies::geography)
            .load::<String>(c)
            .await?
    })
    .into_iter()
    .filter(|g| !keys.contains(g))
    .collect();
    for k in stale.chunks(crate::bulk::CHUNK) {
        with_conn!(db, |c| {
            diesel::delete(
                market_index_points::table.filter(market_index_points::geography.eq_any(k)),
            )
            .execute(c)
            .await?;
            diesel::delete(market_volume::table.filter(market_volume::geography.eq_any(k)))
                .execute(c)
                .await?;
            diesel::delete(
                market_geographies::table.filter(market_geographies::geography.eq_any(k)),
            )
            .execute(c)
            .await?
        });
    }
    Ok(())
}

pub async fn geography(db: &Db, key: &str) -> StoreResult<Option<GeographyRow>> {
    Ok(with_conn!(db, |c| {
        market_geographies::table
            .find(key)
            .select(GeographyRow::as_select())
            .first(c)
            .await
            .optional()?
    }))
}

/// Every geography of a kind, by key.
pub async fn geographies_of_kind(db: &Db, kind: &str) -> StoreResult<Vec<GeographyRow>> {
    Ok(with_conn!(db, |c| {
        market_geographies::table
            .filter(market_geographies::geo_kind.eq(kind))
            .order(market_geographies::geography)
            .select(GeographyRow::as_select())
            .load(c)
            .await?
    }))
}

/// A geography's index points, oldest first (forecasts last).
pub async fn index_points(db: &Db, key: &str) -> StoreResult<Vec<IndexPointRow>> {
    Ok(with_conn!(db, |c| {
        market_index_points::table
            .filter(market_index_points::geography.eq(key))
            .order((
                market_index_points::period,
                market_index_points::is_forecast,
            ))
            .select(IndexPointRow::as_select())
            .load(c)
            .await?
    }))
}

/// A geography's monthly volumes, every month the build wrote, oldest first.
pub async fn volume(db: &Db, key: &str) -> StoreResult<Vec<VolumeRow>> {
    Ok(with_conn!(db, |c| {
        market_volume::table
            .filter(market_volume::geography.eq(key))
            .order(market_volume::month)
            .select(VolumeRow::as_select())
            .load(c)
            .await?
    }))
}

/// The monthly volumes of every geography whose key starts with `prefix` (`district:`),
/// between two month starts (inclusive).
pub async fn volumes_with_prefix(
    db: &Db,
    prefix: &str,
    from: &str,
    to: &str,
) -> StoreResult<Vec<VolumeRow>> {
    let pattern = format!("{prefix}%");
    Ok(with_conn!(db, |c| {
        market_volume::table
            .filter(market_volume::geography.like(&pattern))
            .filter(market_volume::month.ge(from))
            .filter(market_volume::month.le(to))
            .order((market_volume::geography, market_volume::month))
            .select(VolumeRow::as_select())
            .load(c)
            .await?
    }))
}

/// Category A sale prices completed between two dates (inclusive), with their postcodes.
pub async fn category_a_prices(
    db: &Db,
    from: chrono::NaiveDate,
    to: chrono::NaiveDate,
) -> StoreResult<Vec<(Option<String>, i64)>> {
    Ok(with_conn!(db, |c| {
        price_paid::table
            .filter(price_paid::date.ge(from))
            .filter(price_paid::date.le(to))
            .filter(price_paid::ppd_category.eq("A"))
            .select((price_paid::postcode, price_paid::price))
            .load::<(Option<String>, i64)>(c)
            .await?
    }))
}

/// One month of the official UK House Price Index for one area.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = hpi_reference)]
pub struct HpiRow {
    /// `area_code|YYYY-MM`.
    pub hpi_key: String,
    pub area_code: String,
    pub region_name: Option<String>,
    /// `YYYY-MM`.
    pub month: String,
    pub hpi_index: Option<f64>,
    pub average_price: Option<i64>,
    pub sales_volume: Option<i64>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    HpiRow,
    hpi_reference,
    hpi_key,
    String,
    hpi_by_key,
    replace_hpi
);

/// Every UK HPI row, by area then month.
pub async fn hpi_all(db: &Db) -> StoreResult<Vec<HpiRow>> {
    Ok(with_conn!(db, |c| {
        hpi_reference::table
            .order((hpi_reference::area_code, hpi_reference::month))
            .select(HpiRow::as_select())
            .load(c)
            .await?
    }))
}
