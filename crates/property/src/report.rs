//! The property report: one document from the same domain functions the single operations use
//! (summary, registered lease, risk report, rental estimate, energy picture, nearby planning
//! decisions), never a second copy of their logic.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::Uprn;
use terrace_store::Db;

use terrace_layers::{LayerCache, RiskReport};
use terrace_listings::RentalEstimate;
use terrace_ownership::LeaseResult;
use terrace_planning::PlanningHistory;

use crate::{PropertyError, RetrofitResult, Summary};

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PropertyReport {
    pub uprn: i64,
    pub country: &'static str,
    /// What the property is and the building it belongs to (as `/summary`).
    pub summary: Summary,
    /// The registered lease (as `/lease`): `no_lease` with a reason when none is registered.
    pub registered_lease: LeaseResult,
    /// Flood, coal, heritage, designations, planning and infrastructure flags, three-valued (as
    /// `/risk`).
    pub risk: RiskReport,
    /// The rental estimate with its basis, gross yield and the housing-benefit cap (as
    /// `/rental-estimate`).
    pub rental_estimate: RentalEstimate,
    /// The energy picture: rating against potential, fabric, heating and MEES (as `/retrofit`).
    pub energy: RetrofitResult,
    /// Planning applications at the unit, its building or within 25 m, with decisions (as
    /// `/planning-history`); `not_covered` where official data does not cover the authority.
    pub nearby_planning: PlanningHistory,
    pub as_of: chrono::NaiveDate,
}

/// The report of a UPRN; `NotFound` when the register does not know it.
pub async fn report(
    db: &Db,
    layers: &LayerCache,
    uprn: Uprn,
    now: DateTime<Utc>,
) -> Result<PropertyReport, PropertyError> {
    let today = now.date_naive();
    let summary = crate::summary(db, layers, uprn, today).await?;
    Ok(PropertyReport {
        uprn: uprn.get(),
        country: "UK",
        summary,
        registered_lease: terrace_ownership::lease(db, uprn, today).await?,
        risk: terrace_layers::risk(db, layers, uprn).await?,
        rental_estimate: terrace_listings::rental_estimate(db, uprn, None, now).await?,
        energy: crate::retrofit(db, uprn).await?,
        nearby_planning: terrace_planning::planning_history(db, layers, uprn, today).await?,
        as_of: today,
    })
}
