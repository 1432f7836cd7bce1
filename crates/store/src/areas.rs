//! The areas family's reads: the postcode directory and the boundaries, paged, for the in-memory
//! area index that resolves area ids and names and reverse-geocodes points.
//!
//! Invariants: pages are ordered by their key (postcode, boundary code) so that paging with
//! `after` visits every row once; the rows are the register's own (`address::PostcodeRow`,
//! `address::BoundaryRow`), this module writes nothing.

use crate::address::{BoundaryRow, PostcodeRow};
use crate::db::{Db, StoreResult};
use crate::schema::{boundaries, postcodes};
use crate::with_conn;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

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
