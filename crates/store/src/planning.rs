//! Planning applications, the list of authorities official planning data covers, and the
//! operator's planning-portal URL per local planning authority.

use crate::address::BoundaryRow;
use crate::db::{Db, StoreResult};
use crate::schema::{boundaries, planning_applications, planning_coverage, planning_portals};
use crate::{keyed_ops, with_conn};
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

keyed_ops!(
    ApplicationRow,
    planning_applications,
    application_id,
    String,
    applications_by_id,
    replace_applications
);

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

keyed_ops!(
    CoverageRow,
    planning_coverage,
    lad_code,
    String,
    coverage_by_code,
    replace_coverage
);

/// How many authorities the coverage list holds (0 means the list is not loaded).
pub async fn coverage_count(db: &Db) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| planning_coverage::table
        .count()
        .get_result(c)
        .await?))
}

/// One local planning authority's planning-portal URL (an operator file).
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = planning_portals)]
pub struct PortalRow {
    /// The authority's GSS code (`E60`, `W43`).
    pub lpa_code: String,
    /// The planning.data.gov.uk organisation (`local-authority:SWK`), when given.
    pub organisation: Option<String>,
    pub name: Option<String>,
    pub portal_url: String,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    PortalRow,
    planning_portals,
    lpa_code,
    String,
    portals_by_code,
    replace_portals
);

/// How many authorities the portal table holds (0 means it is not loaded).
pub async fn portal_count(db: &Db) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| planning_portals::table
        .count()
        .get_result(c)
        .await?))
}

/// The boundaries of `kind` whose bounding box meets `[min_x, min_y, max_x, max_y]` (BNG
/// metres): the candidates for the local authorities a designations scope touches.
pub async fn boundaries_meeting_box(
    db: &Db,
    kind: &str,
    bbox: [f64; 4],
) -> StoreResult<Vec<BoundaryRow>> {
    let [x0, y0, x1, y1] = bbox;
    Ok(with_conn!(db, |c| {
        boundaries::table
            .filter(boundaries::kind.eq(kind))
            .filter(boundaries::min_x.le(x1))
            .filter(boundaries::max_x.ge(x0))
            .filter(boundaries::min_y.le(y1))
            .filter(boundaries::max_y.ge(y0))
            .order(boundaries::code)
            .select(BoundaryRow::as_select())
            .load(c)
            .await?
    }))
}
