//! Companies House basic company data: one row per company, keyed by its company number.
//!
//! Invariant: `company_number` is stored as Companies House writes it (eight characters; the
//! loader normalises a number written without its leading zeros).

use crate::db::{Db, StoreResult};
use crate::schema::companies;
use crate::{keyed_ops, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// One company.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = companies)]
pub struct CompanyRow {
    pub company_number: String,
    pub name: String,
    pub category: Option<String>,
    pub status: Option<String>,
    pub country_of_origin: Option<String>,
    pub incorporation_date: Option<NaiveDate>,
    pub dissolution_date: Option<NaiveDate>,
    pub address_care_of: Option<String>,
    pub address_po_box: Option<String>,
    pub address_line_1: Option<String>,
    pub address_line_2: Option<String>,
    pub post_town: Option<String>,
    pub address_county: Option<String>,
    pub address_country: Option<String>,
    pub postcode: Option<String>,
    pub sic_1: Option<String>,
    pub sic_2: Option<String>,
    pub sic_3: Option<String>,
    pub sic_4: Option<String>,
    pub charges_total: Option<i32>,
    pub charges_outstanding: Option<i32>,
    pub charges_part_satisfied: Option<i32>,
    pub charges_satisfied: Option<i32>,
    pub uri: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    CompanyRow,
    companies,
    company_number,
    String,
    companies_by_number,
    replace_companies
);

/// How many companies are loaded (0 means the file is not loaded).
pub async fn company_count(db: &Db) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| companies::table
        .count()
        .get_result(c)
        .await?))
}
