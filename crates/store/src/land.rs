//! Land: HM Land Registry's INSPIRE Index Polygons (`land_parcels`), OS Open Map Local building
//! footprints (`building_footprints`), and what the build derives from them: the links of
//! buildings, addresses and company-owned titles to parcels (`parcel_buildings`,
//! `parcel_addresses`, `parcel_titles`), one row of plot figures per parcel (`parcel_stats`) and
//! the links' coverage per local authority (`land_link_coverage`).
//!
//! Invariants: geometries are multipolygons in BNG metres (WKB); a parcel's key is its INSPIRE
//! id and a footprint's its OS id; the derived tables are written only by the land build, which
//! replaces a local authority's rows whole, so running it twice changes nothing;
//! `parcel_stats.built_coverage` is null, never 0, where no footprint data covers the parcel's
//! authority.

use crate::db::{Db, StoreResult};
use crate::schema::{
    addresses, building_footprints, land_link_coverage, land_parcels, parcel_addresses,
    parcel_buildings, parcel_stats, parcel_titles, titles,
};
use crate::{keyed_ops, with_conn};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// One INSPIRE index polygon.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = land_parcels)]
pub struct ParcelRow {
    pub inspire_id: i64,
    pub gml_id: Option<String>,
    /// The polygon (with its interior rings) as a WKB multipolygon in BNG metres.
    pub wkb: Vec<u8>,
    pub min_x: f64,
    pub min_y: f64,
    pub max_x: f64,
    pub max_y: f64,
    /// Planar area in square metres (holes excluded).
    pub area_m2: f64,
    /// A WGS84 point inside the polygon.
    pub lat: Option<f64>,
    pub lon: Option<f64>,
    pub valid_from: Option<NaiveDateTime>,
    /// The local authority holding the interior point, when boundaries were loaded first.
    pub lad_code: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    ParcelRow,
    land_parcels,
    inspire_id,
    i64,
    parcels_by_id,
    replace_parcels
);

/// One OS Open Map Local building footprint.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = building_footprints)]
pub struct FootprintRow {
    pub building_id: String,
    /// OS feature code (15014 Building, 15016 Glasshouse, 15019 Education, ...).
    pub feature_code: Option<i32>,
    pub wkb: Vec<u8>,
    pub min_x: f64,
    pub min_y: f64,
    pub max_x: f64,
    pub max_y: f64,
    pub area_m2: f64,
    pub lad_code: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
    /// Height in metres where the file gives one (OS Open Map Local does not).
    pub height_m: Option<f64>,
}

keyed_ops!(
    FootprintRow,
    building_footprints,
    building_id,
    String,
    footprints_by_id,
    replace_footprints
);

/// A building standing on a parcel (`id` is `<inspire_id>/<building_id>`).
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = parcel_buildings)]
pub struct ParcelBuildingRow {
    pub id: String,
    pub inspire_id: i64,
    pub building_id: String,
    /// The footprint's area inside the parcel.
    pub overlap_m2: f64,
    /// `overlap_m2` over the footprint's area.
    pub score: f64,
    pub method: String,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// The parcel an address point lies in.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = parcel_addresses)]
pub struct ParcelAddressRow {
    pub uprn: i64,
    pub inspire_id: i64,
    pub method: String,
    pub score: f64,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    ParcelAddressRow,
    parcel_addresses,
    uprn,
    i64,
    parcel_addresses_by_uprn,
    replace_parcel_addresses
);

/// A company-owned title linked to a parcel through its address (`id` is
/// `<title_number>/<inspire_id>`).
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = parcel_titles)]
pub struct ParcelTitleRow {
    pub id: String,
    pub title_number: String,
    pub inspire_id: i64,
    pub uprn: i64,
    pub method: String,
    /// The title-to-UPRN match score times the address-in-parcel score.
    pub score: f64,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// The plot figures of one parcel.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = parcel_stats)]
pub struct ParcelStatsRow {
    pub inspire_id: i64,
    pub lad_code: Option<String>,
    pub lsoa_code: Option<String>,
    pub area_m2: f64,
    pub n_buildings: i32,
    /// Null where no footprint data covers the parcel's authority.
    pub footprint_m2: Option<f64>,
    pub built_coverage: Option<f64>,
    pub n_units_via_buildings: i32,
    pub address_count_residential: i32,
    pub address_count_commercial: i32,
    pub landuse_tier_a: Option<String>,
    pub landuse_tier_b: Option<String>,
    pub nlud_code: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// The land links' coverage in one local authority (`''` for parcels in no known authority).
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = land_link_coverage)]
pub struct LandCoverageRow {
    pub lad_code: String,
    pub parcels: i64,
    /// Parcels whose built coverage is measured (footprints loaded for the authority).
    pub parcels_measured: i64,
    pub parcels_with_address: i64,
    pub addresses: i64,
    pub addresses_in_parcel: i64,
    pub buildings: i64,
    pub buildings_on_parcel: i64,
    /// Company-owned titles of the authority's addresses (linked to a UPRN).
    pub titles_linked: i64,
    /// Of those, titles whose address lies in a parcel.
    pub titles_on_parcel: i64,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    LandCoverageRow,
    land_link_coverage,
    lad_code,
    String,
    land_coverage_by_lad,
    replace_land_coverage
);

/// The distinct local authorities of the parcels (None: parcels in no known authority).
pub async fn parcel_lads(db: &Db) -> StoreResult<Vec<Option<String>>> {
    Ok(with_conn!(db, |c| {
        land_parcels::table
            .select(land_parcels::lad_code)
            .distinct()
            .order(land_parcels::lad_code)
            .load::<Option<String>>(c)
            .await?
    }))
}

/// The distinct local authorities holding a building footprint.
pub async fn footprint_lads(db: &Db) -> StoreResult<Vec<Option<String>>> {
    Ok(with_conn!(db, |c| {
        building_footprints::table
            .select(building_footprints::lad_code)
            .distinct()
            .order(building_footprints::lad_code)
            .load::<Option<String>>(c)
            .await?
    }))
}

/// A page of one authority's parcels (None: no authority), in INSPIRE id order after `after`.
pub async fn parcels_in_lad(
    db: &Db,
    lad: Option<&str>,
    after: i64,
    limit: i64,
) -> StoreResult<Vec<ParcelRow>> {
    Ok(with_conn!(db, |c| {
        let q = land_parcels::table
            .filter(land_parcels::inspire_id.gt(after))
            .order(land_parcels::inspire_id)
            .limit(limit)
            .select(ParcelRow::as_select())
            .into_boxed();
        match lad {
            Some(l) => q.filter(land_parcels::lad_code.eq(l)),
            None => q.filter(land_parcels::lad_code.is_null()),
        }
        .load(c)
        .await?
    }))
}

/// A page of one authority's footprints, in id order after `after`.
pub async fn footprints_in_lad(
    db: &Db,
    lad: Option<&str>,
    after: &str,
    limit: i64,
) -> StoreResult<Vec<FootprintRow>> {
    Ok(with_conn!(db, |c| {
        let q = building_footprints::table
            .filter(building_footprints::building_id.gt(after))
            .order(building_footprints::building_id)
            .limit(limit)
            .select(FootprintRow::as_select())
            .into_boxed();
        match lad {
            Some(l) => q.filter(building_footprints::lad_code.eq(l)),
            None => q.filter(building_footprints::lad_code.is_null()),
        }
        .load(c)
        .await?
    }))
}

/// One address point: (UPRN, AddressBase class, x, y) in BNG metres.
pub type AddressPoint = (i64, Option<String>, f64, f64);

/// A page of one authority's addresses with a position, in UPRN order after `after`.
pub async fn address_points_in_lad(
    db: &Db,
    lad: Option<&str>,
    after: i64,
    limit: i64,
) -> StoreResult<Vec<AddressPoint>> {
    type Row = (i64, Option<String>, Option<f64>, Option<f64>);
    let rows: Vec<Row> = with_conn!(db, |c| {
        let q = addresses::table
            .filter(addresses::uprn.gt(after))
            .filter(addresses::x.is_not_null())
            .filter(addresses::y.is_not_null())
            .order(addresses::uprn)
            .limit(limit)
            .select((
                addresses::uprn,
                addresses::class,
                addresses::x,
                addresses::y,
            ))
            .into_boxed();
        match lad {
            Some(l) => q.filter(addresses::lad_code.eq(l)),
            None => q.filter(addresses::lad_code.is_null()),
        }
        .load(c)
        .await?
    });
    Ok(rows
        .into_iter()
        .filter_map(|(u, class, x, y)| Some((u, class, x?, y?)))
        .collect())
}

/// Writes one group of parcels' derived rows, replacing what the build wrote before for those
/// parcels (their stats and buildings) and those addresses (their parcel).
pub async fn replace_group_links(
    db: &Db,
    parcels: Vec<i64>,
    uprns: Vec<i64>,
    stats: Vec<ParcelStatsRow>,
    buildings: Vec<ParcelBuildingRow>,
    links: Vec<ParcelAddressRow>,
) -> StoreResult<()> {
    crate::replace_rows!(
        db,
        parcel_stats::table,
        parcel_stats::inspire_id,
        parcels.clone(),
        stats
    );
    crate::replace_rows!(
        db,
        parcel_buildings::table,
        parcel_buildings::inspire_id,
        parcels,
        buildings
    );
    crate::replace_rows!(
        db,
        parcel_addresses::table,
        parcel_addresses::uprn,
        uprns,
        links
    );
    Ok(())
}

/// A page of company-owned titles linked to a UPRN: (title number, UPRN, match score), in title
/// number order after `after`.
pub async fn linked_titles_page(
    db: &Db,
    after: &str,
    limit: i64,
) -> StoreResult<Vec<(String, i64, Option<f64>)>> {
    let rows: Vec<(String, Option<i64>, Option<f64>)> = with_conn!(db, |c| {
        titles::table
            .filter(titles::uprn.is_not_null())
            .filter(titles::title_number.gt(after))
            .order(titles::title_number)
            .limit(limit)
            .select((titles::title_number, titles::uprn, titles::match_score))
            .load(c)
            .await?
    });
    Ok(rows
        .into_iter()
        .filter_map(|(t, u, s)| Some((t, u?, s)))
        .collect())
}

/// Replaces the parcel links of `titles` with `rows`.
pub async fn replace_parcel_titles(
    db: &Db,
    titles: Vec<String>,
    rows: Vec<ParcelTitleRow>,
) -> StoreResult<usize> {
    Ok(crate::replace_rows!(
        db,
        parcel_titles::table,
        parcel_titles::title_number,
        titles,
        rows
    ))
}

/// The parcels linked to a title, in INSPIRE id order.
pub async fn parcels_of_title(db: &Db, title_number: &str) -> StoreResult<Vec<ParcelTitleRow>> {
    Ok(with_conn!(db, |c| {
        parcel_titles::table
            .filter(parcel_titles::title_number.eq(title_number))
            .order(parcel_titles::inspire_id)
            .select(ParcelTitleRow::as_select())
            .load(c)
            .await?
    }))
}

/// Every coverage row, by authority.
pub async fn all_land_coverage(db: &Db) -> StoreResult<Vec<LandCoverageRow>> {
    Ok(with_conn!(db, |c| {
        land_link_coverage::table
            .order(land_link_coverage::lad_code)
            .select(LandCoverageRow::as_select())
            .load(c)
            .await?
    }))
}

/// Where plot utilisation looks: the parcels of a local authority or of an LSOA.
#[derive(Debug, Clone, PartialEq)]
pub enum PlotScope {
    Lad(String),
    Lsoa(String),
}

/// The filter of plot utilisation.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotFilter {
    pub scope: PlotScope,
    pub min_area_m2: f64,
    /// Keep only parcels with a measured coverage at most this (None: no ceiling).
    pub max_built_coverage: Option<f64>,
    pub limit: i64,
}

/// The parcels of the scope passing the filter, largest first (INSPIRE id breaks ties).
pub async fn plot_parcels(db: &Db, f: &PlotFilter) -> StoreResult<Vec<ParcelStatsRow>> {
    Ok(with_conn!(db, |c| {
        let mut q = parcel_stats::table
            .filter(parcel_stats::area_m2.ge(f.min_area_m2))
            // Ties (many parcels of one size) by INSPIRE id, highest first: the order of the
            // index (scope, area, id) read backwards, so a page is read off the index, never
            // sorted (measured: a local authority of 500,000 parcels of one size took seconds).
            .order((
                parcel_stats::area_m2.desc(),
                parcel_stats::inspire_id.desc(),
            ))
            .limit(f.limit)
            .select(ParcelStatsRow::as_select())
            .into_boxed();
        q = match &f.scope {
            PlotScope::Lad(l) => q.filter(parcel_stats::lad_code.eq(l)),
            PlotScope::Lsoa(l) => q.filter(parcel_stats::lsoa_code.eq(l)),
        };
        if let Some(m) = f.max_built_coverage {
            q = q.filter(parcel_stats::built_coverage.le(m));
        }
        q.load(c).await?
    }))
}

/// (parcels in the scope, of which with a measured built coverage). A local authority's are
/// the build's own counts (`land_link_coverage`, written with `parcel_stats`), so a call does not
/// count hundreds of thousands of rows; an LSOA's are counted.
pub async fn plot_scope_counts(db: &Db, scope: &PlotScope) -> StoreResult<(i64, i64)> {
    if let PlotScope::Lad(l) = scope {
        let built: Option<(i64, i64)> = with_conn!(db, |c| {
            land_link_coverage::table
                .find(l)
                .select((
                    land_link_coverage::parcels,
                    land_link_coverage::parcels_measured,
                ))
                .first(c)
                .await
                .optional()?
        });
        if let Some(counts) = built {
            return Ok(counts);
        }
    }
    let count = |measured: bool| {
        let scope = scope.clone();
        async move {
            StoreResult::Ok(with_conn!(db, |c| {
                let mut q = parcel_stats::table.count().into_boxed();
                q = match &scope {
                    PlotScope::Lad(l) => q.filter(parcel_stats::lad_code.eq(l)),
                    PlotScope::Lsoa(l) => q.filter(parcel_stats::lsoa_code.eq(l)),
                };
                if measured {
                    q = q.filter(parcel_stats::built_coverage.is_not_null());
                }
                q.get_result::<i64>(c).await?
            }))
        }
    };
    Ok((count(false).await?, count(true).await?))
}

/// The addresses of a scope (joined on `addresses`), for the H3 density queries.
macro_rules! scoped_addresses {
    ($q:expr, $scope:expr) => {
        match $scope {
            PlotScope::Lad(l) => $q.filter(addresses::lad_code.eq(l)),
            PlotScope::Lsoa(l) => $q.filter(addresses::lsoa_code.eq(l)),
        }
    };
}

/// The resolution-8 H3 cells holding an address of the scope, in cell order after `after`, at
/// most `limit`.
pub async fn h3_cells_in_scope(
    db: &Db,
    scope: &PlotScope,
    after: &str,
    limit: i64,
) -> StoreResult<Vec<String>> {
    use crate::schema::address_h3;
    Ok(with_conn!(db, |c| {
        let q = address_h3::table
            .inner_join(addresses::table.on(addresses::uprn.eq(address_h3::uprn)))
            .filter(address_h3::cell.gt(after))
            .select(address_h3::cell)
            .distinct()
            .order(address_h3::cell)
            .limit(limit)
            .into_boxed();
        scoped_addresses!(q, scope).load::<String>(c).await?
    }))
}

/// (cell, AddressBase class, addresses) of the scope's addresses in `cells`.
pub async fn h3_class_counts(
    db: &Db,
    scope: &PlotScope,
    cells: &[String],
) -> StoreResult<Vec<(String, Option<String>, i64)>> {
    use crate::schema::address_h3;
    Ok(with_conn!(db, |c| {
        let q = address_h3::table
            .inner_join(addresses::table.on(addresses::uprn.eq(address_h3::uprn)))
            .filter(address_h3::cell.eq_any(cells))
            .group_by((address_h3::cell, addresses::class))
            .select((
                address_h3::cell,
                addresses::class,
                diesel::dsl::count_star(),
            ))
            .into_boxed();
        scoped_addresses!(q, scope).load(c).await?
    }))
}

/// (cell, sales, total price) of the registered sales of the scope's addresses in `cells`,
/// dated from `from` to `to` inclusive.
pub async fn h3_sales(
    db: &Db,
    scope: &PlotScope,
    cells: &[String],
    from: chrono::NaiveDate,
    to: chrono::NaiveDate,
) -> StoreResult<Vec<(String, i64, i64)>> {
    use crate::schema::{address_h3, price_paid};
    use diesel::dsl::sql;
    use diesel::sql_types::BigInt;
    Ok(with_conn!(db, |c| {
        let q = price_paid::table
            .inner_join(address_h3::table.on(address_h3::uprn.nullable().eq(price_paid::uprn)))
            .inner_join(addresses::table.on(addresses::uprn.eq(address_h3::uprn)))
            .filter(address_h3::cell.eq_any(cells))
            .filter(price_paid::date.ge(from))
            .filter(price_paid::date.le(to))
            .group_by(address_h3::cell)
            .select((
                address_h3::cell,
                diesel::dsl::count_star(),
                sql::<BigInt>("CAST(COALESCE(SUM(price_paid.price), 0) AS BIGINT)"),
            ))
            .into_boxed();
        scoped_addresses!(q, scope).load(c).await?
    }))
}

/// The date of the newest registered sale linked to an address, if any.
pub async fn latest_linked_sale(db: &Db) -> StoreResult<Option<chrono::NaiveDate>> {
    use crate::schema::price_paid;
    Ok(with_conn!(db, |c| {
        price_paid::table
            .filter(price_paid::uprn.is_not_null())
            .select(diesel::dsl::max(price_paid::date))
            .get_result::<Option<chrono::NaiveDate>>(c)
            .await?
    }))
}

/// One address of a stock profile: (UPRN, parent UPRN, AddressBase class).
pub type StockUnit = (i64, Option<i64>, Option<String>);

/// Every address of the scope (by its own local authority or LSOA), in UPRN order.
pub async fn scope_units(db: &Db, scope: &PlotScope) -> StoreResult<Vec<StockUnit>> {
    Ok(with_conn!(db, |c| {
        let q = addresses::table
            .order(addresses::uprn)
            .select((addresses::uprn, addresses::parent_uprn, addresses::class))
            .into_boxed();
        scoped_addresses!(q, scope).load(c).await?
    }))
}

/// OS feature code of a glasshouse, left out of a stock profile's buildings.
pub const GLASSHOUSE: i32 = 15_016;

/// (footprint area in m², height in metres) of the scope's building footprints, glasshouses
/// left out; the height is the LIDAR height where the land build measured one, else the
/// footprint file's (docs/METHODS.md, "Building height and volume"): a local authority's by the authority holding each footprint's interior point, an
/// LSOA's those standing on a parcel whose interior point lies in the LSOA (each once).
pub async fn scope_footprints(db: &Db, scope: &PlotScope) -> StoreResult<Vec<(f64, Option<f64>)>> {
    let not_glasshouse = building_footprints::feature_code
        .is_null()
        .or(building_footprints::feature_code.ne(GLASSHOUSE));
    type Row = (String, f64, Option<f64>, Option<f64>);
    let rows: Vec<Row> = match scope {
        PlotScope::Lad(l) => with_conn!(db, |c| {
            building_footprints::table
                .filter(building_footprints::lad_code.eq(l))
                .filter(not_glasshouse)
                .select((
                    building_footprints::building_id,
                    building_footprints::area_m2,
                    building_footprints::lidar_height_m,
                    building_footprints::height_m,
                ))
                .load(c)
                .await?
        }),
        PlotScope::Lsoa(l) => with_conn!(db, |c| {
            building_footprints::table
                .inner_join(
                    parcel_buildings::table
                        .on(parcel_buildings::building_id.eq(building_footprints::building_id)),
                )
                .inner_join(
                    parcel_stats::table
                        .on(parcel_stats::inspire_id.eq(parcel_buildings::inspire_id)),
                )
                .filter(parcel_stats::lsoa_code.eq(l))
                .filter(not_glasshouse)
                .select((
                    building_footprints::building_id,
                    building_footprints::area_m2,
                    building_footprints::lidar_height_m,
                    building_footprints::height_m,
                ))
                .distinct()
                .load(c)
                .await?
        }),
    };
    Ok(rows
        .into_iter()
        .map(|(_, a, lidar, file)| (a, lidar.or(file)))
        .collect())
}

#[derive(Debug, Clone, PartialEq, diesel::QueryableByName)]
struct SolarRow {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    stated: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    with_pv: i64,
}

/// (addresses of the scope whose newest EPC states `PHOTO_SUPPLY` as a number, of which above
/// 0): the certificate's share of roof area with photovoltaic panels (the typed column
/// `photo_supply`). The newest certificate is the latest lodged domestic one (an undated one
/// last, the LMK key breaking ties).
pub async fn scope_photo_supply(db: &Db, scope: &PlotScope) -> StoreResult<(i64, i64)> {
    let (column, code) = match scope {
        PlotScope::Lad(l) => ("lad_code", l.as_str()),
        PlotScope::Lsoa(l) => ("lsoa_code", l.as_str()),
    };
    let placeholder = match db.backend() {
        crate::db::Backend::Sqlite => "?",
        crate::db::Backend::Postgres => "$1",
    };
    let sql = format!(
        "SELECT CAST(COUNT(*) AS BIGINT) AS stated, \
                CAST(COALESCE(SUM(CASE WHEN pv > 0 THEN 1 ELSE 0 END), 0) AS BIGINT) AS with_pv \
         FROM (SELECT e.photo_supply AS pv, \
                      ROW_NUMBER() OVER (PARTITION BY e.uprn ORDER BY \
                          CASE WHEN e.lodgement_date IS NULL THEN 1 ELSE 0 END, \
                          e.lodgement_date DESC, e.lmk_key DESC) AS rn \
               FROM epc_certificates e \
               INNER JOIN addresses a ON a.uprn = e.uprn \
               WHERE e.kind = 'domestic' AND a.{column} = {placeholder}) newest \
         WHERE rn = 1 AND pv IS NOT NULL"
    );
    let row: SolarRow = with_conn!(db, |c| {
        diesel::sql_query(sql.as_str())
            .bind::<diesel::sql_types::Text, _>(code)
            .get_result(c)
            .await?
    });
    Ok((row.stated, row.with_pv))
}

/// The footprints whose bounding box holds a point (BNG metres), by OS id: the candidates for
/// the footprint an address stands in (the caller tests the outline).
pub async fn footprints_at(db: &Db, x: f64, y: f64) -> StoreResult<Vec<FootprintRow>> {
    Ok(with_conn!(db, |c| {
        building_footprints::table
            .filter(building_footprints::min_x.le(x))
            .filter(building_footprints::max_x.ge(x))
            .filter(building_footprints::min_y.le(y))
            .filter(building_footprints::max_y.ge(y))
            .order(building_footprints::building_id)
            .limit(50)
            .select(FootprintRow::as_select())
            .load(c)
            .await?
    }))
}

/// Whether any building footprint is loaded for a local authority.
pub async fn authority_has_footprints(db: &Db, lad: &str) -> StoreResult<bool> {
    let any: Option<String> = with_conn!(db, |c| {
        building_footprints::table
            .filter(building_footprints::lad_code.eq(lad))
            .select(building_footprints::building_id)
            .first(c)
            .await
            .optional()?
    });
    Ok(any.is_some())
}
