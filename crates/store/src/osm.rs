//! The OpenStreetMap extract's buildings and rooftop PV (`osm_buildings`, ODbL), their links to
//! the building footprints (`osm_footprint_links`, written by the land family's derive step),
//! and the operator's HMO licence register (`hmo_licences`).
//!
//! Invariants: a tag is stored as read (a height in metres, levels as a whole number), never
//! estimated; an OSM building links to at most one footprint.

use crate::db::{Db, StoreResult};
use crate::schema::{hmo_licences, osm_buildings, osm_footprint_links};
use crate::{keyed_ops, matchable_ops, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// `kind` of a building element.
pub const KIND_BUILDING: &str = "building";
/// `kind` of a rooftop PV element (`generator:source=solar`, `location=roof`).
pub const KIND_ROOFTOP_PV: &str = "rooftop_pv";

/// One element of the extract: a building, or a rooftop PV element.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = osm_buildings)]
pub struct OsmBuildingRow {
    /// `way/123`, `relation/5` or `node/9`.
    pub osm_key: String,
    pub kind: String,
    /// The `building=*` value.
    pub building: Option<String>,
    /// A building's centroid or a PV element's position, BNG metres.
    pub x: f64,
    pub y: f64,
    pub min_x: f64,
    pub min_y: f64,
    pub max_x: f64,
    pub max_y: f64,
    /// A building's outline (WKB MultiPolygon, BNG metres).
    pub wkb: Option<Vec<u8>>,
    pub area_m2: Option<f64>,
    pub height_m: Option<f64>,
    pub levels: Option<i32>,
    pub roof_shape: Option<String>,
    pub roof_material: Option<String>,
    /// On a building, the PV element marking it; on a PV element, the building it stands on.
    pub rooftop_pv: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    OsmBuildingRow,
    osm_buildings,
    osm_key,
    String,
    osm_by_key,
    replace_osm
);

/// Whether any OSM building is loaded.
pub async fn osm_loaded(db: &Db) -> StoreResult<bool> {
    let any: Option<String> = with_conn!(db, |c| {
        osm_buildings::table
            .filter(osm_buildings::kind.eq(KIND_BUILDING))
            .select(osm_buildings::osm_key)
            .first(c)
            .await
            .optional()?
    });
    Ok(any.is_some())
}

/// The buildings (not PV elements) in key order after `after`, a page at a time.
pub async fn osm_buildings_page(
    db: &Db,
    after: &str,
    limit: i64,
) -> StoreResult<Vec<OsmBuildingRow>> {
    Ok(with_conn!(db, |c| {
        osm_buildings::table
            .filter(osm_buildings::kind.eq(KIND_BUILDING))
            .filter(osm_buildings::osm_key.gt(after))
            .order(osm_buildings::osm_key)
            .limit(limit)
            .select(OsmBuildingRow::as_select())
            .load(c)
            .await?
    }))
}

/// An OSM building's footprint link.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = osm_footprint_links)]
pub struct OsmFootprintLinkRow {
    pub osm_key: String,
    pub building_id: String,
    /// `centroid_in_footprint` or `largest_overlap`.
    pub method: String,
    /// The share of the OSM outline inside the footprint (1 when it has no outline).
    pub overlap_share: f64,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// Replaces every link by `rows` in one transaction (the build's whole answer).
pub async fn replace_osm_links(db: &Db, rows: Vec<OsmFootprintLinkRow>) -> StoreResult<usize> {
    let mut keys: Vec<String> = with_conn!(db, |c| {
        osm_footprint_links::table
            .select(osm_footprint_links::osm_key)
            .load(c)
            .await?
    });
    keys.extend(rows.iter().map(|r| r.osm_key.clone()));
    keys.sort();
    keys.dedup();
    Ok(crate::replace_rows!(
        db,
        osm_footprint_links::table,
        osm_footprint_links::osm_key,
        keys,
        rows
    ))
}

/// The OSM buildings linked to a footprint with their links, best overlap first.
pub async fn osm_of_footprint(
    db: &Db,
    building_id: &str,
) -> StoreResult<Vec<(OsmFootprintLinkRow, OsmBuildingRow)>> {
    let mut rows: Vec<(OsmFootprintLinkRow, OsmBuildingRow)> = with_conn!(db, |c| {
        osm_footprint_links::table
            .inner_join(
                osm_buildings::table.on(osm_buildings::osm_key.eq(osm_footprint_links::osm_key)),
            )
            .filter(osm_footprint_links::building_id.eq(building_id))
            .select((
                OsmFootprintLinkRow::as_select(),
                OsmBuildingRow::as_select(),
            ))
            .load(c)
            .await?
    });
    rows.sort_by(|a, b| {
        b.0.overlap_share
            .total_cmp(&a.0.overlap_share)
            .then_with(|| a.0.osm_key.cmp(&b.0.osm_key))
    });
    Ok(rows)
}

/// How many OSM buildings are linked to a footprint.
pub async fn osm_link_count(db: &Db) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| {
        osm_footprint_links::table
            .count()
            .get_result::<i64>(c)
            .await?
    }))
}

/// One licence of the HMO licence register feed.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = hmo_licences)]
pub struct HmoLicenceRow {
    /// `<authority>|<licence number>`.
    pub licence_key: String,
    pub licence_number: String,
    /// The licensing authority as the feed names it (a GSS code or a name).
    pub authority: String,
    pub address: String,
    pub postcode: Option<String>,
    pub storeys: Option<i32>,
    pub max_occupants: Option<i32>,
    pub households: Option<i32>,
    pub licence_start: Option<NaiveDate>,
    pub licence_end: Option<NaiveDate>,
    pub uprn: Option<i64>,
    /// `feed` or `address_matcher`.
    pub match_method: Option<String>,
    pub match_score: Option<f64>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    HmoLicenceRow,
    hmo_licences,
    licence_key,
    String,
    hmo_by_key,
    replace_hmo
);
matchable_ops!(
    HmoLicenceRow,
    hmo_licences,
    licence_key,
    unmatched_hmo,
    set_hmo_matches
);

/// Whether any HMO licence is loaded.
pub async fn hmo_loaded(db: &Db) -> StoreResult<bool> {
    let any: Option<String> = with_conn!(db, |c| {
        hmo_licences::table
            .select(hmo_licences::licence_key)
            .first(c)
            .await
            .optional()?
    });
    Ok(any.is_some())
}

/// The licences linked to any of `uprns`, newest start first.
pub async fn hmo_of_uprns(db: &Db, uprns: &[i64]) -> StoreResult<Vec<HmoLicenceRow>> {
    let mut rows: Vec<HmoLicenceRow> = with_conn!(db, |c| {
        hmo_licences::table
            .filter(hmo_licences::uprn.eq_any(uprns))
            .select(HmoLicenceRow::as_select())
            .load(c)
            .await?
    });
    rows.sort_by(|a, b| {
        b.licence_start
            .cmp(&a.licence_start)
            .then_with(|| a.licence_key.cmp(&b.licence_key))
    });
    Ok(rows)
}

/// Every OSM building's footprint link, by key.
pub async fn all_osm_links(db: &Db) -> StoreResult<Vec<OsmFootprintLinkRow>> {
    Ok(with_conn!(db, |c| {
        osm_footprint_links::table
            .order(osm_footprint_links::osm_key)
            .select(OsmFootprintLinkRow::as_select())
            .load(c)
            .await?
    }))
}

/// The source of the loaded HMO licences of an authority (GSS code), if any is loaded.
pub async fn hmo_source_of_authority(db: &Db, authority: &str) -> StoreResult<Option<String>> {
    Ok(with_conn!(db, |c| {
        hmo_licences::table
            .filter(hmo_licences::authority.eq(authority))
            .order(hmo_licences::licence_key)
            .select(hmo_licences::source)
            .first(c)
            .await
            .optional()?
    }))
}
