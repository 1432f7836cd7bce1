//! Planning applications and the list of authorities official planning data covers.

use crate::db::{Db, StoreResult};
use crate::schema::{planning_applications, planning_coverage};
use crate::{replace_rows, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// One planning application.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = planning_applications)]
pub struct ApplicationRow {
    pub application_id: String,
    pub reference: String,
    pub authority: Option<String>,
    pub address: Option<String>,
    pub postcode: Option<String>,
    pub uprn: Option<i64>,
    pub match_method: Option<String>,
    pub match_score: Option<f64>,
    pub x: Option<f64>,
    pub y: Option<f64>,
    pub received_date: Option<NaiveDate>,
    pub validated_date: Option<NaiveDate>,
    pub decision_date: Option<NaiveDate>,
    pub decision: Option<String>,
    pub appeal_decision: Option<String>,
    pub appeal_date: Option<NaiveDate>,
    pub cil_liable: Option<bool>,
    pub cil_amount: Option<f64>,
    pub development_type: Option<String>,
    pub description: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// One authority official planning data covers.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = planning_coverage)]
pub struct CoverageRow {
    pub lad_code: String,
    pub name: Option<String>,
    pub organisation: Option<String>,
    pub organisation_entity: Option<String>,
    pub start_date: Option<NaiveDate>,
    pub end_date: Option<NaiveDate>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// The stored applications with these ids.
pub async fn applications_by_id(db: &Db, ids: &[String]) -> StoreResult<Vec<ApplicationRow>> {
    let mut out = Vec::with_capacity(ids.len());
    for k in ids.chunks(crate::bulk::CHUNK) {
        let part: Vec<ApplicationRow> = with_conn!(db, |c| {
            planning_applications::table
                .filter(planning_applications::application_id.eq_any(k))
                .select(ApplicationRow::as_select())
                .load(c)
                .await?
        });
        out.extend(part);
    }
    Ok(out)
}

/// Writes `rows`, replacing any stored application with the same id, in one transaction.
pub async fn replace_applications(db: &Db, rows: Vec<ApplicationRow>) -> StoreResult<usize> {
    let keys: Vec<String> = rows.iter().map(|r| r.application_id.clone()).collect();
    Ok(replace_rows!(
        db,
        planning_applications::table,
        planning_applications::application_id,
        keys,
        rows
    ))
}

/// The applications linked to a UPRN, newest first (by decision, else received date).
pub async fn applications_for_uprn(db: &Db, uprn: i64) -> StoreResult<Vec<ApplicationRow>> {
    Ok(with_conn!(db, |c| {
        planning_applications::table
            .filter(planning_applications::uprn.eq(uprn))
            .order(planning_applications::application_id)
            .select(ApplicationRow::as_select())
            .load(c)
            .await?
    }))
}

/// The applications whose point lies in the square of half-side `r` around (x, y) (BNG metres);
/// the caller keeps those within the circle.
pub async fn applications_in_square(
    db: &Db,
    x: f64,
    y: f64,
    r: f64,
) -> StoreResult<Vec<ApplicationRow>> {
    Ok(with_conn!(db, |c| {
        planning_applications::table
            .filter(planning_applications::x.between(x - r, x + r))
            .filter(planning_applications::y.between(y - r, y + r))
            .order(planning_applications::application_id)
            .select(ApplicationRow::as_select())
            .load(c)
            .await?
    }))
}

crate::matchable_ops!(
    ApplicationRow,
    planning_applications,
    application_id,
    unmatched_applications,
    set_application_matches
);

/// How many applications name one of `authorities` (a GSS code or an organisation id).
pub async fn application_count_for(db: &Db, authorities: &[String]) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| planning_applications::table
        .filter(planning_applications::authority.eq_any(authorities))
        .count()
        .get_result(c)
        .await?))
}

/// The stored coverage rows of these authorities.
pub async fn coverage_by_code(db: &Db, codes: &[String]) -> StoreResult<Vec<CoverageRow>> {
    Ok(with_conn!(db, |c| {
        planning_coverage::table
            .filter(planning_coverage::lad_code.eq_any(codes))
            .select(CoverageRow::as_select())
            .load(c)
            .await?
    }))
}

/// Writes `rows`, replacing any stored row with the same code, in one transaction.
pub async fn replace_coverage(db: &Db, rows: Vec<CoverageRow>) -> StoreResult<usize> {
    let keys: Vec<String> = rows.iter().map(|r| r.lad_code.clone()).collect();
    Ok(replace_rows!(
        db,
        planning_coverage::table,
        planning_coverage::lad_code,
        keys,
        rows
    ))
}

/// How many authorities the coverage list holds (0 means the list is not loaded).
pub async fn coverage_count(db: &Db) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| planning_coverage::table
        .count()
        .get_result(c)
        .await?))
}
