//! Planning applications (planning.data.gov.uk and authority extracts).

use crate::formats::{Parsed, planning_applications as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;
use terrace_store::planning::{self, ApplicationRow};

stored!(
    ApplicationRow,
    String,
    |r| r.application_id.clone(),
    planning::applications_by_id,
    planning::replace_applications
);

/// How a planning application that carries its own UPRN says it was matched.
pub const APPLICATION_UPRN_METHOD: &str = "application_uprn";

pub struct PlanningApplications;

impl Load for PlanningApplications {
    type Row = format::ApplicationRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        merge(
            ctx.db,
            rows,
            counts,
            |r| r.id.clone(),
            |r, prev: Option<&ApplicationRow>| {
                // The application's own UPRN wins; else an earlier match stands while the address is
                // unchanged.
                let same_addr =
                    prev.is_some_and(|p| p.address == r.address && p.postcode == r.postcode);
                let (uprn, match_method, match_score) = match (r.uprn, prev.filter(|_| same_addr)) {
                    (Some(u), _) => (
                        Some(u),
                        Some(APPLICATION_UPRN_METHOD.to_string()),
                        Some(1.0),
                    ),
                    (None, Some(p)) => (p.uprn, p.match_method.clone(), p.match_score),
                    (None, None) => (None, None, None),
                };
                Change::Put(ApplicationRow {
                    application_id: r.id,
                    reference: r.reference,
                    authority: r.authority,
                    address: r.address,
                    postcode: r.postcode,
                    uprn,
                    match_method,
                    match_score,
                    x: r.point.map(|p| p.0),
                    y: r.point.map(|p| p.1),
                    received_date: r.received_date,
                    validated_date: r.validated_date,
                    decision_date: r.decision_date,
                    decision: r.decision,
                    appeal_decision: r.appeal_decision,
                    appeal_date: r.appeal_date,
                    cil_liable: r.cil_liable,
                    cil_amount: r.cil_amount,
                    development_type: r.development_type,
                    description: r.description,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
