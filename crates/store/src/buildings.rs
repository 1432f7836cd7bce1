//! The buildings reads: every address of an area with the evidence of what it is, from the
//! address register's class, the council tax list (a band on the list) and the newest rating
//! list loaded (a hereditament linked to the UPRN), for the mixed-use buildings; and the link of
//! each address point to the building footprint containing it (`address_footprints`, written by
//! the land family's derive step).
//!
//! Invariants: evidence is read as stored: a unit with no row on a list has no evidence from it,
//! and the caller says whether the list is loaded at all; an address has at most one footprint.

use crate::db::{Db, StoreResult};
use crate::schema::{address_footprints, building_attributes, building_footprints};
use crate::scope::{AreaScope, placeholder};
use crate::{keyed_ops, with_conn};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel_async::RunQueryDsl;

/// One property's row of the building-attributes operator feed; a None is "not recorded".
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = building_attributes)]
pub struct BuildingAttributesRow {
    pub uprn: i64,
    pub floors: Option<i32>,
    pub basement: Option<bool>,
    pub green_roof: Option<bool>,
    pub construction_material: Option<String>,
    pub roof_shape: Option<String>,
    pub roof_material: Option<String>,
    pub solar_panels: Option<bool>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    BuildingAttributesRow,
    building_attributes,
    uprn,
    i64,
    attributes_by_uprn,
    replace_attributes
);

/// Whether any building-attributes row is loaded.
pub async fn attributes_loaded(db: &Db) -> StoreResult<bool> {
    let any: Option<i64> = with_conn!(db, |c| {
        building_attributes::table
            .select(building_attributes::uprn)
            .first(c)
            .await
            .optional()?
    });
    Ok(any.is_some())
}

/// The footprint an address point stands in.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = address_footprints)]
pub struct AddressFootprintRow {
    pub uprn: i64,
    /// The OS id of the footprint.
    pub building_id: String,
    /// How the link was made (`point_in_footprint`).
    pub method: String,
    /// 1 over the number of footprints containing the point (overlapping outlines share it).
    pub score: f64,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// Replaces the links of `uprns` (every address of one group, linked or not) by `rows`.
pub async fn replace_address_footprints(
    db: &Db,
    uprns: Vec<i64>,
    rows: Vec<AddressFootprintRow>,
) -> StoreResult<()> {
    crate::replace_rows!(
        db,
        address_footprints::table,
        address_footprints::uprn,
        uprns,
        rows
    );
    Ok(())
}

/// Removes links to footprints no longer loaded; returns how many.
pub async fn prune_address_footprints(db: &Db) -> StoreResult<usize> {
    Ok(with_conn!(db, |c| {
        diesel::delete(
            address_footprints::table.filter(
                address_footprints::building_id
                    .ne_all(building_footprints::table.select(building_footprints::building_id)),
            ),
        )
        .execute(c)
        .await?
    }))
}

/// The footprint links of the UPRNs given (those that have one).
pub async fn address_footprints_of(
    db: &Db,
    uprns: &[i64],
) -> StoreResult<Vec<AddressFootprintRow>> {
    let mut out = Vec::new();
    for k in uprns.chunks(crate::bulk::CHUNK) {
        let part: Vec<AddressFootprintRow> = with_conn!(db, |c| {
            address_footprints::table
                .filter(address_footprints::uprn.eq_any(k))
                .select(AddressFootprintRow::as_select())
                .load(c)
                .await?
        });
        out.extend(part);
    }
    out.sort_by_key(|r| r.uprn);
    Ok(out)
}

/// How many addresses are linked to a footprint.
pub async fn address_footprint_count(db: &Db) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| {
        address_footprints::table
            .count()
            .get_result::<i64>(c)
            .await?
    }))
}

/// One address of an area with the evidence of its use.
#[derive(Debug, Clone, PartialEq, diesel::QueryableByName)]
pub struct UnitEvidenceRow {
    #[diesel(sql_type = BigInt)]
    pub uprn: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub parent_uprn: Option<i64>,
    /// The AddressBase class as loaded.
    #[diesel(sql_type = Nullable<Text>)]
    pub class: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub saon: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub paon: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub street: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub town: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub postcode: Option<String>,
    /// The lowest council tax band of the list's entries matched to the UPRN, if any.
    #[diesel(sql_type = Nullable<Text>)]
    pub council_tax_band: Option<String>,
    /// The lowest UARN of the newest rating list's entries linked to the UPRN, if any.
    #[diesel(sql_type = Nullable<BigInt>)]
    pub rating_uarn: Option<i64>,
    /// That entry's description (the VOA's primary description text, else its code).
    #[diesel(sql_type = Nullable<Text>)]
    pub rating_description: Option<String>,
    /// The newest rating list year loaded.
    #[diesel(sql_type = Nullable<Integer>)]
    pub rating_list_year: Option<i32>,
}

/// The evidence query over the addresses `a` meeting `cond`.
fn evidence_sql(cond: &str) -> String {
    // Correlated per address (indexed by UPRN), so a small area never scans a national list;
    // the newest list year is one uncorrelated subquery.
    let rated = |what: &str| {
        format!(
            "(SELECT {what} FROM uarn_uprn_links l \
              INNER JOIN rating_list_entries r ON r.uarn = l.uarn \
              WHERE l.uprn = a.uprn \
                AND r.list_year = (SELECT MAX(n.list_year) FROM rating_list_entries n))"
        )
    };
    format!(
        "SELECT a.uprn, a.parent_uprn, a.class, a.saon, a.paon, a.street, a.town, a.postcode, \
                (SELECT MIN(ct.band) FROM council_tax ct WHERE ct.uprn = a.uprn) AS council_tax_band, \
                {} AS rating_uarn, {} AS rating_description, {} AS rating_list_year \
         FROM addresses a \
         WHERE {cond} \
         ORDER BY a.uprn",
        rated("MIN(r.uarn)"),
        rated("MIN(COALESCE(r.description_text, r.description_code))"),
        rated("MAX(r.list_year)"),
    )
}

/// Every address of the scope with its evidence, in UPRN order.
pub async fn scope_unit_evidence(db: &Db, scope: &AreaScope) -> StoreResult<Vec<UnitEvidenceRow>> {
    let (cond, value) = scope.condition(placeholder(db));
    let sql = evidence_sql(&cond);
    Ok(with_conn!(db, |c| {
        diesel::sql_query(sql.as_str())
            .bind::<Text, _>(value.as_str())
            .load(c)
            .await?
    }))
}

/// The addresses of buildings (each building's own record and the units whose parent it is),
/// with their evidence, in UPRN order.
pub async fn building_unit_evidence(
    db: &Db,
    buildings: &[i64],
) -> StoreResult<Vec<UnitEvidenceRow>> {
    if buildings.is_empty() {
        return Ok(Vec::new());
    }
    // Integers only: written into the statement, never text from a caller.
    let list = buildings
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let sql = evidence_sql(&format!(
        "(a.uprn IN ({list}) OR a.parent_uprn IN ({list}))"
    ));
    Ok(with_conn!(db, |c| {
        diesel::sql_query(sql.as_str()).load(c).await?
    }))
}
