//! The areas family's tables and reads: the ONS names and codes (`area_names`), OS Open Names
//! populated places (`places`), the resolution-8 H3 cell of each address (`address_h3`, a
//! derived step), and the postcode directory and boundaries paged for the in-memory area index
//! that resolves area ids and names and reverse-geocodes points.
//!
//! Invariants: pages are ordered by their key (postcode, boundary code, place id) so that paging
//! with `after` visits every row once; the postcode and boundary rows are the register's own
//! (`address::PostcodeRow`, `address::BoundaryRow`).

use crate::address::{BoundaryRow, PostcodeRow};
use crate::db::{Db, StoreResult};
use crate::schema::{address_h3, area_names, boundaries, places, postcodes};
use crate::{keyed_ops, with_conn};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// The name of one GSS code, from an ONS names-and-codes file.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = area_names)]
pub struct AreaNameRow {
    pub code: String,
    /// The area kind (`ward`, `msoa`, `lad`, ...).
    pub kind: String,
    pub name: String,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    AreaNameRow,
    area_names,
    code,
    String,
    area_names_by_code,
    replace_area_names
);

/// One populated place of OS Open Names, its position in BNG metres.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = places)]
pub struct PlaceRow {
    /// The OS Open Names `ID` (`osgb4000000074559543`).
    pub id: String,
    pub name: String,
    /// `NAME2`, the name in the other language (Welsh, Gaelic), where given.
    pub name_alt: Option<String>,
    /// `LOCAL_TYPE`: City, Town, Village, Hamlet, Suburban Area, Other Settlement.
    pub local_type: String,
    pub x: f64,
    pub y: f64,
    pub postcode_district: Option<String>,
    pub district_borough: Option<String>,
    pub county_unitary: Option<String>,
    pub region: Option<String>,
    pub country: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    PlaceRow,
    places,
    id,
    String,
    places_by_id,
    replace_places,
    delete_places
);

/// The resolution-8 H3 cell of one address.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = address_h3)]
pub struct AddressH3Row {
    pub uprn: i64,
    /// Lower-case hex, 15 digits.
    pub cell: String,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    AddressH3Row,
    address_h3,
    uprn,
    i64,
    address_h3_by_uprn,
    replace_address_h3,
    delete_address_h3
);

/// Every name of the names-and-codes table after the code `after`, in code order.
pub async fn area_names_page(db: &Db, after: &str, limit: i64) -> StoreResult<Vec<AreaNameRow>> {
    Ok(with_conn!(db, |c| {
        area_names::table
            .filter(area_names::code.gt(after))
            .order(area_names::code)
            .limit(limit)
            .select(AreaNameRow::as_select())
            .load(c)
            .await?
    }))
}

/// The populated places after the id `after`, in id order.
pub async fn places_page(db: &Db, after: &str, limit: i64) -> StoreResult<Vec<PlaceRow>> {
    Ok(with_conn!(db, |c| {
        places::table
            .filter(places::id.gt(after))
            .order(places::id)
            .limit(limit)
            .select(PlaceRow::as_select())
            .load(c)
            .await?
    }))
}

/// The number of addresses in each H3 cell, in cell order.
pub async fn h3_counts(db: &Db) -> StoreResult<Vec<(String, i64)>> {
    Ok(with_conn!(db, |c| {
        address_h3::table
            .group_by(address_h3::cell)
            .order(address_h3::cell)
            .select((address_h3::cell, diesel::dsl::count_star()))
            .load::<(String, i64)>(c)
            .await?
    }))
}

/// The UPRNs with a stored H3 cell after `after`, in UPRN order (to find cells of addresses
/// that no longer exist).
pub async fn h3_uprns_page(db: &Db, after: i64, limit: i64) -> StoreResult<Vec<i64>> {
    Ok(with_conn!(db, |c| {
        address_h3::table
            .filter(address_h3::uprn.gt(after))
            .order(address_h3::uprn)
            .limit(limit)
            .select(address_h3::uprn)
            .load(c)
            .await?
    }))
}

/// Live (not terminated) postcodes after `after`, in postcode order.
pub async fn postcodes_page(db: &Db, after: &str, limit: i64) -> StoreResult<Vec<PostcodeRow>> {
    Ok(with_conn!(db, |c| {
        postcodes::table
            .filter(postcodes::postcode.gt(after))
            .filter(postcodes::terminated.eq(false))
            .order(postcodes::postcode)
            .limit(limit)
            .select(PostcodeRow::as_select())
            .load(c)
            .await?
    }))
}

/// Boundaries of every kind after the code `after`, in code order.
pub async fn boundaries_page(db: &Db, after: &str, limit: i64) -> StoreResult<Vec<BoundaryRow>> {
    Ok(with_conn!(db, |c| {
        boundaries::table
            .filter(boundaries::code.gt(after))
            .order(boundaries::code)
            .limit(limit)
            .select(BoundaryRow::as_select())
            .load(c)
            .await?
    }))
}
