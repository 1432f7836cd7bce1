//! The sourcing family's reads of the land tables: the parcels near a box (the land assembly's
//! candidates), a parcel's plot figures, buildings, addresses and linked titles.
//!
//! Invariants: read-only; a box query is bounded by the `land_parcels (min_x)` index and the
//! widest parcel's width (read off the `land_parcels ((max_x - min_x))` index), never a scan of
//! the table; lists come in a fixed order (INSPIRE id, then UPRN or title number).

use crate::db::{Db, StoreResult};
use crate::land::{ParcelRow, ParcelStatsRow, ParcelTitleRow};
use crate::schema::{
    addresses, land_parcels, parcel_addresses, parcel_buildings, parcel_stats, parcel_titles,
};
use crate::with_conn;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// The widest parcel's east-west extent in metres (0 when none is loaded).
pub async fn widest_parcel(db: &Db) -> StoreResult<f64> {
    let w: Option<f64> = with_conn!(db, |c| {
        land_parcels::table
            .select(diesel::dsl::max(land_parcels::max_x - land_parcels::min_x))
            .get_result::<Option<f64>>(c)
            .await?
    });
    Ok(w.unwrap_or(0.0))
}

/// The parcels whose bounding box meets `[min_x, min_y, max_x, max_y]` (BNG metres), in INSPIRE
/// id order, at most `limit`. `widest` is [`widest_parcel`]: a parcel meeting the box starts at
/// most that far west of it, so the index range on `min_x` is bounded on both sides.
pub async fn parcels_in_box(
    db: &Db,
    bbox: [f64; 4],
    widest: f64,
    limit: i64,
) -> StoreResult<Vec<ParcelRow>> {
    let [x0, y0, x1, y1] = bbox;
    Ok(with_conn!(db, |c| {
        land_parcels::table
            .filter(land_parcels::min_x.ge(x0 - widest))
            .filter(land_parcels::min_x.le(x1))
            .filter(land_parcels::max_x.ge(x0))
            .filter(land_parcels::min_y.le(y1))
            .filter(land_parcels::max_y.ge(y0))
            .order(land_parcels::inspire_id)
            .limit(limit)
            .select(ParcelRow::as_select())
            .load(c)
            .await?
    }))
}

/// The plot figures of these parcels, by INSPIRE id.
pub async fn stats_of(db: &Db, ids: &[i64]) -> StoreResult<Vec<ParcelStatsRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids = ids.to_vec();
    Ok(with_conn!(db, |c| {
        parcel_stats::table
            .filter(parcel_stats::inspire_id.eq_any(ids.clone()))
            .order(parcel_stats::inspire_id)
            .select(ParcelStatsRow::as_select())
            .load(c)
            .await?
    }))
}

/// The company-owned titles linked to these parcels, by INSPIRE id and title number.
pub async fn titles_on(db: &Db, ids: &[i64]) -> StoreResult<Vec<ParcelTitleRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids = ids.to_vec();
    Ok(with_conn!(db, |c| {
        parcel_titles::table
            .filter(parcel_titles::inspire_id.eq_any(ids.clone()))
            .order((parcel_titles::inspire_id, parcel_titles::title_number))
            .select(ParcelTitleRow::as_select())
            .load(c)
            .await?
    }))
}

/// The OS ids of the buildings standing on a parcel, in id order.
pub async fn buildings_on(db: &Db, id: i64) -> StoreResult<Vec<String>> {
    Ok(with_conn!(db, |c| {
        parcel_buildings::table
            .filter(parcel_buildings::inspire_id.eq(id))
            .order(parcel_buildings::building_id)
            .select(parcel_buildings::building_id)
            .load::<String>(c)
            .await?
    }))
}

/// How many addresses lie in a parcel.
pub async fn unit_count(db: &Db, id: i64) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| {
        parcel_addresses::table
            .filter(parcel_addresses::inspire_id.eq(id))
            .count()
            .get_result::<i64>(c)
            .await?
    }))
}

/// The addresses lying in a parcel (those in the address register): (UPRN, AddressBase class), in UPRN order, at most `limit`.
pub async fn units_on(db: &Db, id: i64, limit: i64) -> StoreResult<Vec<(i64, Option<String>)>> {
    let uprns: Vec<i64> = with_conn!(db, |c| {
        parcel_addresses::table
            .filter(parcel_addresses::inspire_id.eq(id))
            .order(parcel_addresses::uprn)
            .limit(limit)
            .select(parcel_addresses::uprn)
            .load::<i64>(c)
            .await?
    });
    if uprns.is_empty() {
        return Ok(Vec::new());
    }
    Ok(with_conn!(db, |c| {
        addresses::table
            .filter(addresses::uprn.eq_any(uprns.clone()))
            .order(addresses::uprn)
            .select((addresses::uprn, addresses::class))
            .load::<(i64, Option<String>)>(c)
            .await?
    }))
}
