//! HM Land Registry registered leases (the term, the dates, the alienation clause).
//!
//! Invariants: a lease's key is the register's `unique_id`; `term_*` are parsed from the
//! register's term text at load (`term_problem` says why when they could not be).

use crate::db::{Db, StoreResult};
use crate::schema::leases;
use crate::{keyed_ops, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// One registered lease.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = leases)]
pub struct LeaseRow {
    pub unique_id: String,
    pub uprn: Option<i64>,
    pub tenure: Option<String>,
    pub register_description: Option<String>,
    pub county: Option<String>,
    pub region: Option<String>,
    pub associated_description_id: Option<String>,
    pub associated_description: Option<String>,
    pub price_paid: Option<i64>,
    pub reg_order: Option<String>,
    pub date_of_lease: Option<NaiveDate>,
    pub term_text: Option<String>,
    pub term_years: Option<i32>,
    pub term_less_days: Option<i32>,
    pub term_start: Option<NaiveDate>,
    pub term_end: Option<NaiveDate>,
    pub term_problem: Option<String>,
    pub alienation_clause: Option<bool>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    LeaseRow,
    leases,
    unique_id,
    String,
    leases_by_id,
    replace_leases,
    delete_leases
);

/// The registered leases of a UPRN, most recent lease first.
pub async fn leases_for_uprn(db: &Db, uprn: i64) -> StoreResult<Vec<LeaseRow>> {
    Ok(with_conn!(db, |c| {
        leases::table
            .filter(leases::uprn.eq(uprn))
            .order((leases::date_of_lease.desc(), leases::unique_id))
            .select(LeaseRow::as_select())
            .load(c)
            .await?
    }))
}

/// How many registered leases are loaded (0 means the dataset is not loaded).
pub async fn lease_count(db: &Db) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| leases::table
        .count()
        .get_result(c)
        .await?))
}
