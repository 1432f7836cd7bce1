//! The catalogue family's tables and reads: the coverage register (one row per local authority,
//! derived by the build), the market area directory (derived by the build from the market tables
//! and the register), the aggregates the build reads to compute both, and the paged district
//! directories (postcodes, streets, properties) read straight from the register.
//!
//! Invariants: the derived tables are replaced whole by each build (`replace_coverage_register`,
//! `replace_catalogue_areas`: rows the build no longer produces are deleted); every page is
//! ordered by its key and read after a key (keyset), so walking the pages visits every row once.
//! A postcode district's rows are those whose postcode lies in `[district + " ", district + "!")`
//! (byte order: the district, a space, anything), which reads the postcode index.

use crate::address::AddressRow;
use crate::db::{Db, StoreResult};
use crate::schema::{addresses, catalogue_areas, coverage_register, planning_coverage};
use crate::{replace_rows, with_conn};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Nullable, Text};
use diesel_async::RunQueryDsl;

/// One local authority's coverage register row, as the build wrote it.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = coverage_register)]
pub struct CoverageRegisterRow {
    pub lad_code: String,
    pub name: Option<String>,
    /// Addresses of the register in the authority when the build ran.
    pub addresses: i64,
    /// The register row (`terrace_areas::coverage::CoverageRegister`) as JSON.
    pub register_json: String,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// One market area of the directory.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = catalogue_areas)]
pub struct CatalogueAreaRow {
    /// `area:EX`, `district:EX1` or `lad:E07000041`.
    pub area_id: String,
    /// `area`, `district` or `lad`.
    pub kind: String,
    pub name: Option<String>,
    /// The area id of the parent the market build names (a district's postcode area).
    pub parent: Option<String>,
    /// Addresses of the register in the area.
    pub addresses: i64,
    /// Registered sales the market build counted in the area (its monthly volumes summed).
    pub sales: i64,
    /// Published (estimated) index periods; 0 when the build published no index for the area.
    pub index_periods: i64,
    /// Published forecast periods.
    pub forecast_periods: i64,
    /// The index's last settled period (`YYYY-MM`), when one is published.
    pub last_settled: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// How many rows of a key carry a source (a grouped count).
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct KeyCount {
    #[diesel(sql_type = Nullable<Text>)]
    pub key: Option<String>,
    #[diesel(sql_type = Text)]
    pub source: String,
    #[diesel(sql_type = BigInt)]
    pub n: i64,
}

/// The register's addresses of one authority sharing an address and a position source, with how
/// many carry each field of the record the register supplies.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct AddressFieldCount {
    #[diesel(sql_type = Text)]
    pub lad_code: String,
    #[diesel(sql_type = Nullable<Text>)]
    pub address_source: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub position_source: Option<String>,
    #[diesel(sql_type = BigInt)]
    pub n: i64,
    #[diesel(sql_type = BigInt)]
    pub with_street: i64,
    #[diesel(sql_type = BigInt)]
    pub with_postcode: i64,
    #[diesel(sql_type = BigInt)]
    pub with_class: i64,
    #[diesel(sql_type = BigInt)]
    pub with_position: i64,
    #[diesel(sql_type = BigInt)]
    pub with_lsoa: i64,
    #[diesel(sql_type = BigInt)]
    pub with_parent: i64,
}

/// Every authority's address field counts, by address and position source.
pub async fn address_field_counts(db: &Db) -> StoreResult<Vec<AddressFieldCount>> {
    const SQL: &str = "SELECT lad_code, address_source, position_source, \
        CAST(COUNT(*) AS BIGINT) AS n, \
        CAST(COUNT(street) AS BIGINT) AS with_street, \
        CAST(COUNT(postcode) AS BIGINT) AS with_postcode, \
        CAST(COUNT(class) AS BIGINT) AS with_class, \
        CAST(COUNT(x) AS BIGINT) AS with_position, \
        CAST(COUNT(lsoa_code) AS BIGINT) AS with_lsoa, \
        CAST(COUNT(parent_uprn) AS BIGINT) AS with_parent \
        FROM addresses WHERE lad_code IS NOT NULL \
        GROUP BY lad_code, address_source, position_source \
        ORDER BY lad_code, address_source, position_source";
    Ok(with_conn!(db, |c| diesel::sql_query(SQL).load(c).await?))
}

/// A table linked to addresses by UPRN, and optionally one of its columns that must have a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linked {
    /// Energy certificates (any), and with a current rating, a floor area, a property type.
    Epc,
    EpcRating,
    EpcFloorArea,
    EpcPropertyType,
    EpcBuiltForm,
    /// Registered sales linked to the UPRN (by the lookup or the matcher).
    PricePaid,
    /// HM Land Registry's own transaction-to-UPRN links.
    PpdUprn,
    Leases,
    CouncilTax,
    Listings,
    /// VOA hereditaments (UARN to UPRN links).
    Hereditament,
    PlanningApplications,
}

impl Linked {
    fn table_and_column(self) -> (&'static str, Option<&'static str>) {
        match self {
            Linked::Epc => ("epc_certificates", None),
            Linked::EpcRating => ("epc_certificates", Some("current_rating")),
            Linked::EpcFloorArea => ("epc_certificates", Some("total_floor_area")),
            Linked::EpcPropertyType => ("epc_certificates", Some("property_type")),
            Linked::EpcBuiltForm => ("epc_certificates", Some("built_form")),
            Linked::PricePaid => ("price_paid", None),
            Linked::PpdUprn => ("ppd_uprn_links", None),
            Linked::Leases => ("leases", None),
            Linked::CouncilTax => ("council_tax", None),
            Linked::Listings => ("listings", None),
            Linked::Hereditament => ("uarn_uprn_links", None),
            Linked::PlanningApplications => ("planning_applications", None),
        }
    }
}

/// Per authority (`key`) and source of the linked rows, how many distinct addresses have a row
/// of `linked` (with a value in its column, when it names one).
pub async fn linked_counts(db: &Db, linked: Linked) -> StoreResult<Vec<KeyCount>> {
    let (table, column) = linked.table_and_column();
    let mut extra = column
        .map(|c| format!(" AND t.{c} IS NOT NULL"))
        .unwrap_or_default();
    // The record's energy fields are the domestic register's: non-domestic and display
    // certificates are answered by the energy family, not counted as the record's coverage.
    if table == "epc_certificates" {
        extra.push_str(" AND t.kind = 'domestic'");
    }
    let sql = format!(
        "SELECT a.lad_code AS key, t.source AS source, CAST(COUNT(DISTINCT a.uprn) AS BIGINT) AS n \
         FROM addresses a JOIN {table} t ON t.uprn = a.uprn \
         WHERE a.lad_code IS NOT NULL{extra} \
         GROUP BY a.lad_code, t.source ORDER BY a.lad_code, t.source"
    );
    Ok(with_conn!(db, |c| diesel::sql_query(&sql).load(c).await?))
}

/// A grouped count of one table by a key column and its source (`key` null where the column is).
async fn grouped(db: &Db, table: &str, key: &str, filter: &str) -> StoreResult<Vec<KeyCount>> {
    let sql = format!(
        "SELECT {key} AS key, source, CAST(COUNT(*) AS BIGINT) AS n FROM {table} {filter} \
         GROUP BY {key}, source ORDER BY {key}, source"
    );
    Ok(with_conn!(db, |c| diesel::sql_query(&sql).load(c).await?))
}

/// Postcodes of the directory per local authority and source (terminated ones included).
pub async fn postcode_counts(db: &Db) -> StoreResult<Vec<KeyCount>> {
    grouped(db, "postcodes", "lad_code", "").await
}

/// Planning applications per named authority (a GSS code or an organisation id) and source.
pub async fn application_counts(db: &Db) -> StoreResult<Vec<KeyCount>> {
    grouped(db, "planning_applications", "authority", "").await
}

/// UK HPI reference rows per area code and source.
pub async fn hpi_counts(db: &Db) -> StoreResult<Vec<KeyCount>> {
    grouped(db, "hpi_reference", "area_code", "").await
}

/// Boundaries per code and source, of one kind (`lad`), with their names.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct NamedCode {
    #[diesel(sql_type = Text)]
    pub code: String,
    #[diesel(sql_type = Nullable<Text>)]
    pub name: Option<String>,
    #[diesel(sql_type = Text)]
    pub source: String,
}

/// The local authority boundaries' codes, names and sources (without their geometry).
pub async fn lad_boundaries(db: &Db) -> StoreResult<Vec<NamedCode>> {
    const SQL: &str = "SELECT code, name, source FROM boundaries WHERE kind = 'lad' ORDER BY code";
    Ok(with_conn!(db, |c| diesel::sql_query(SQL).load(c).await?))
}

/// Every row of the official planning coverage list.
pub async fn planning_coverage_rows(db: &Db) -> StoreResult<Vec<crate::planning::CoverageRow>> {
    Ok(with_conn!(db, |c| {
        planning_coverage::table
            .order(planning_coverage::lad_code)
            .select(crate::planning::CoverageRow::as_select())
            .load(c)
            .await?
    }))
}

/// Addresses per postcode (with a postcode), for the directory's counts.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct PostcodeAddresses {
    #[diesel(sql_type = Text)]
    pub postcode: String,
    #[diesel(sql_type = Nullable<Text>)]
    pub lad_code: Option<String>,
    #[diesel(sql_type = BigInt)]
    pub n: i64,
}

/// How many addresses each postcode (and authority) holds.
pub async fn addresses_per_postcode(db: &Db) -> StoreResult<Vec<PostcodeAddresses>> {
    const SQL: &str = "SELECT postcode, lad_code, CAST(COUNT(*) AS BIGINT) AS n FROM addresses \
        WHERE postcode IS NOT NULL GROUP BY postcode, lad_code ORDER BY postcode, lad_code";
    Ok(with_conn!(db, |c| diesel::sql_query(SQL).load(c).await?))
}

/// One geography's summed monthly sales.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct GeographySum {
    #[diesel(sql_type = Text)]
    pub geography: String,
    #[diesel(sql_type = BigInt)]
    pub n: i64,
}

/// Each market geography's sales, its monthly volumes summed.
pub async fn market_sales(db: &Db) -> StoreResult<Vec<GeographySum>> {
    const SQL: &str = "SELECT geography, CAST(SUM(txn_count) AS BIGINT) AS n FROM market_volume \
        GROUP BY geography ORDER BY geography";
    Ok(with_conn!(db, |c| diesel::sql_query(SQL).load(c).await?))
}

/// One geography's published index periods, estimated or forecast.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct GeographyPeriods {
    #[diesel(sql_type = Text)]
    pub geography: String,
    #[diesel(sql_type = Bool)]
    pub is_forecast: bool,
    #[diesel(sql_type = BigInt)]
    pub n: i64,
}

/// Each market geography's published index periods (with a level), estimated and forecast.
pub async fn market_periods(db: &Db) -> StoreResult<Vec<GeographyPeriods>> {
    const SQL: &str = "SELECT geography, is_forecast, CAST(COUNT(*) AS BIGINT) AS n \
        FROM market_index_points WHERE level IS NOT NULL \
        GROUP BY geography, is_forecast ORDER BY geography, is_forecast";
    Ok(with_conn!(db, |c| diesel::sql_query(SQL).load(c).await?))
}

/// Replaces the coverage register with a build's rows (authorities not in `rows` are removed).
pub async fn replace_coverage_register(
    db: &Db,
    rows: Vec<CoverageRegisterRow>,
) -> StoreResult<usize> {
    let mut keys: Vec<String> = with_conn!(db, |c| {
        coverage_register::table
            .select(coverage_register::lad_code)
            .load::<String>(c)
            .await?
    });
    keys.extend(rows.iter().map(|r| r.lad_code.clone()));
    Ok(replace_rows!(
        db,
        coverage_register::table,
        coverage_register::lad_code,
        keys,
        rows
    ))
}

/// Replaces the market area directory with a build's rows (areas not in `rows` are removed).
pub async fn replace_catalogue_areas(db: &Db, rows: Vec<CatalogueAreaRow>) -> StoreResult<usize> {
    let mut keys: Vec<String> = with_conn!(db, |c| {
        catalogue_areas::table
            .select(catalogue_areas::area_id)
            .load::<String>(c)
            .await?
    });
    keys.extend(rows.iter().map(|r| r.area_id.clone()));
    Ok(replace_rows!(
        db,
        catalogue_areas::table,
        catalogue_areas::area_id,
        keys,
        rows
    ))
}

/// One authority's coverage register row.
pub async fn coverage_row(db: &Db, lad_code: &str) -> StoreResult<Option<CoverageRegisterRow>> {
    Ok(with_conn!(db, |c| {
        coverage_register::table
            .find(lad_code)
            .select(CoverageRegisterRow::as_select())
            .first(c)
            .await
            .optional()?
    }))
}

/// A page of the market area directory after `after` (an area id), in area id order, of one
/// kind or of all.
pub async fn catalogue_areas_page(
    db: &Db,
    kind: Option<&str>,
    after: &str,
    limit: i64,
) -> StoreResult<Vec<CatalogueAreaRow>> {
    Ok(with_conn!(db, |c| {
        let mut q = catalogue_areas::table
            .filter(catalogue_areas::area_id.gt(after))
            .into_boxed();
        if let Some(k) = kind {
            q = q.filter(catalogue_areas::kind.eq(k));
        }
        q.order(catalogue_areas::area_id)
            .limit(limit)
            .select(CatalogueAreaRow::as_select())
            .load(c)
            .await?
    }))
}

/// One market area of the directory.
pub async fn catalogue_area(db: &Db, area_id: &str) -> StoreResult<Option<CatalogueAreaRow>> {
    Ok(with_conn!(db, |c| {
        catalogue_areas::table
            .find(area_id)
            .select(CatalogueAreaRow::as_select())
            .first(c)
            .await
            .optional()?
    }))
}

/// The postcode range of a district: `[district + " ", district + "!")`.
fn district_range(district: &str) -> (String, String) {
    (format!("{district} "), format!("{district}!"))
}

/// Whether the register holds an address in the postcode district.
pub async fn district_has_addresses(db: &Db, district: &str) -> StoreResult<bool> {
    let (lo, hi) = district_range(district);
    let n: i64 = with_conn!(db, |c| {
        addresses::table
            .filter(addresses::postcode.ge(&lo))
            .filter(addresses::postcode.lt(&hi))
            .select(addresses::uprn)
            .limit(1)
            .load::<i64>(c)
            .await?
            .len() as i64
    });
    Ok(n > 0)
}

/// The district's postcodes after `after`, each with its number of addresses, in order.
pub async fn district_postcodes(
    db: &Db,
    district: &str,
    after: &str,
    limit: i64,
) -> StoreResult<Vec<(String, i64)>> {
    let (lo, hi) = district_range(district);
    let rows: Vec<(Option<String>, i64)> = with_conn!(db, |c| {
        addresses::table
            .filter(addresses::postcode.ge(&lo))
            .filter(addresses::postcode.lt(&hi))
            .filter(addresses::postcode.gt(after))
            .group_by(addresses::postcode)
            .select((addresses::postcode, diesel::dsl::count_star()))
            .order(addresses::postcode)
            .limit(limit)
            .load(c)
            .await?
    });
    Ok(rows
        .into_iter()
        .filter_map(|(p, n)| Some((p?, n)))
        .collect())
}

/// The district's streets after `after`, each with its number of addresses, in order.
pub async fn district_streets(
    db: &Db,
    district: &str,
    after: &str,
    limit: i64,
) -> StoreResult<Vec<(String, i64)>> {
    let (lo, hi) = district_range(district);
    let rows: Vec<(Option<String>, i64)> = with_conn!(db, |c| {
        addresses::table
            .filter(addresses::postcode.ge(&lo))
            .filter(addresses::postcode.lt(&hi))
            .filter(addresses::street.gt(after))
            .group_by(addresses::street)
            .select((addresses::street, diesel::dsl::count_star()))
            .order(addresses::street)
            .limit(limit)
            .load(c)
            .await?
    });
    Ok(rows
        .into_iter()
        .filter_map(|(s, n)| Some((s?, n)))
        .collect())
}

/// The district's addresses after the UPRN `after`, in UPRN order.
pub async fn district_properties(
    db: &Db,
    district: &str,
    after: i64,
    limit: i64,
) -> StoreResult<Vec<AddressRow>> {
    let (lo, hi) = district_range(district);
    Ok(with_conn!(db, |c| {
        addresses::table
            .filter(addresses::postcode.ge(&lo))
            .filter(addresses::postcode.lt(&hi))
            .filter(addresses::uprn.gt(after))
            .order(addresses::uprn)
            .limit(limit)
            .select(AddressRow::as_select())
            .load(c)
            .await?
    }))
}

/// How many addresses and distinct streets a postcode holds.
pub async fn postcode_counts_of(db: &Db, postcode: &str) -> StoreResult<(i64, Vec<String>)> {
    let rows: Vec<Option<String>> = with_conn!(db, |c| {
        addresses::table
            .filter(addresses::postcode.eq(postcode))
            .select(addresses::street)
            .load(c)
            .await?
    });
    let n = rows.len() as i64;
    let mut streets: Vec<String> = rows.into_iter().flatten().collect();
    streets.sort();
    streets.dedup();
    Ok((n, streets))
}
