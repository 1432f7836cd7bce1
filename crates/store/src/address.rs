//! The address register: addresses (one row per UPRN), the postcode directory and the
//! statistical boundaries, with the register's row counts (which also count the EPC certificates
//! and Price Paid transactions matched against it).
//!
//! Invariants: an address's key is its UPRN and a postcode's key is its canonical form
//! (`EX1 1AA`); loaders write through `replace_*` (delete + insert by key in one transaction).
//! A loader that changes the addresses also bumps `meta::Key::AddressRegisterVersion`, which
//! servers watch to rebuild their in-memory address index.

use crate::db::{Db, StoreResult};
use crate::schema::{addresses, boundaries, epc_certificates, postcodes, price_paid};
use crate::{keyed_ops, with_conn};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[derive(Debug, Clone, PartialEq, Default, Queryable, Selectable, Insertable)]
#[diesel(table_name = addresses)]
pub struct AddressRow {
    pub uprn: i64,
    pub parent_uprn: Option<i64>,
    pub class: Option<String>,
    pub saon: Option<String>,
    pub paon: Option<String>,
    pub street: Option<String>,
    pub locality: Option<String>,
    pub town: Option<String>,
    pub postcode: Option<String>,
    pub x: Option<f64>,
    pub y: Option<f64>,
    pub lat: Option<f64>,
    pub lon: Option<f64>,
    pub lad_code: Option<String>,
    pub lsoa_code: Option<String>,
    pub address_source: Option<String>,
    pub position_source: Option<String>,
    pub updated_at: NaiveDateTime,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = postcodes)]
pub struct PostcodeRow {
    pub postcode: String,
    pub easting: Option<f64>,
    pub northing: Option<f64>,
    pub lat: Option<f64>,
    pub lon: Option<f64>,
    pub lad_code: Option<String>,
    pub lsoa_code: Option<String>,
    pub country_code: Option<String>,
    pub quality: Option<i32>,
    pub terminated: bool,
    pub source: String,
    pub updated_at: NaiveDateTime,
    pub ward_code: Option<String>,
    pub msoa_code: Option<String>,
    pub county_code: Option<String>,
    pub region_code: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = boundaries)]
pub struct BoundaryRow {
    pub code: String,
    pub kind: String,
    pub name: Option<String>,
    pub wkb: Vec<u8>,
    pub min_x: f64,
    pub min_y: f64,
    pub max_x: f64,
    pub max_y: f64,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    AddressRow,
    addresses,
    uprn,
    i64,
    addresses_by_uprn,
    replace_addresses,
    delete_addresses
);
keyed_ops!(
    PostcodeRow,
    postcodes,
    postcode,
    String,
    postcodes_by_key,
    replace_postcodes,
    delete_postcodes
);
keyed_ops!(
    BoundaryRow,
    boundaries,
    code,
    String,
    boundaries_by_code,
    replace_boundaries,
    delete_boundaries
);
/// The units whose parent is `uprn` (the flats of a building), in UPRN order.
pub async fn children_of(db: &Db, uprn: i64) -> StoreResult<Vec<AddressRow>> {
    Ok(with_conn!(db, |c| {
        addresses::table
            .filter(addresses::parent_uprn.eq(uprn))
            .order(addresses::uprn)
            .select(AddressRow::as_select())
            .load(c)
            .await?
    }))
}

/// One address by UPRN.
pub async fn address(db: &Db, uprn: i64) -> StoreResult<Option<AddressRow>> {
    Ok(with_conn!(db, |c| {
        addresses::table
            .find(uprn)
            .select(AddressRow::as_select())
            .first(c)
            .await
            .optional()?
    }))
}

/// Every address at a canonical postcode.
pub async fn addresses_at_postcode(db: &Db, postcode: &str) -> StoreResult<Vec<AddressRow>> {
    Ok(with_conn!(db, |c| {
        addresses::table
            .filter(addresses::postcode.eq(postcode))
            .order(addresses::uprn)
            .select(AddressRow::as_select())
            .load(c)
            .await?
    }))
}

/// A page of the register in UPRN order after `after` (keyset pagination), for index builds.
pub async fn addresses_page(db: &Db, after: i64, limit: i64) -> StoreResult<Vec<AddressRow>> {
    Ok(with_conn!(db, |c| {
        addresses::table
            .filter(addresses::uprn.gt(after))
            .order(addresses::uprn)
            .limit(limit)
            .select(AddressRow::as_select())
            .load(c)
            .await?
    }))
}

pub async fn postcode(db: &Db, pc: &str) -> StoreResult<Option<PostcodeRow>> {
    Ok(with_conn!(db, |c| {
        postcodes::table
            .find(pc)
            .select(PostcodeRow::as_select())
            .first(c)
            .await
            .optional()?
    }))
}

pub async fn boundaries_of_kind(db: &Db, kind: &str) -> StoreResult<Vec<BoundaryRow>> {
    Ok(with_conn!(db, |c| {
        boundaries::table
            .filter(boundaries::kind.eq(kind))
            .order(boundaries::code)
            .select(BoundaryRow::as_select())
            .load(c)
            .await?
    }))
}

/// Row counts of the register tables, for status output and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RegisterCounts {
    pub addresses: i64,
    pub postcodes: i64,
    pub boundaries: i64,
    pub epc_certificates: i64,
    pub price_paid: i64,
}

pub async fn register_counts(db: &Db) -> StoreResult<RegisterCounts> {
    Ok(with_conn!(db, |c| {
        RegisterCounts {
            addresses: addresses::table.count().get_result(c).await?,
            postcodes: postcodes::table.count().get_result(c).await?,
            boundaries: boundaries::table.count().get_result(c).await?,
            epc_certificates: epc_certificates::table.count().get_result(c).await?,
            price_paid: price_paid::table.count().get_result(c).await?,
        }
    }))
}
