//! HM Land Registry's registered leases.

use crate::formats::{Parsed, leases as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::leases;
use terrace_store::leases::LeaseRow;
use terrace_store::loads::RowCounts;

stored!(
    LeaseRow,
    String,
    |r| r.unique_id.clone(),
    leases::leases_by_id,
    leases::replace_leases
);

pub struct Leases;

impl Load for Leases {
    type Row = format::LeaseRow;

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
            |r| r.unique_id.clone(),
            |r, _| {
                if let Some(problem) = &r.term_problem {
                    ctx.note(format!(
                        "lease {}: term {:?} not read ({problem}); loaded without a term",
                        r.unique_id,
                        r.term_text.as_deref().unwrap_or_default()
                    ));
                }
                let term = r.term.as_ref();
                Change::Put(LeaseRow {
                    unique_id: r.unique_id.clone(),
                    uprn: r.uprn,
                    tenure: r.tenure,
                    register_description: r.register_description,
                    county: r.county,
                    region: r.region,
                    associated_description_id: r.associated_description_id,
                    associated_description: r.associated_description,
                    price_paid: r.price_paid,
                    reg_order: r.reg_order,
                    date_of_lease: r.date_of_lease,
                    term_text: r.term_text,
                    term_years: term.and_then(|t| i32::try_from(t.years).ok()),
                    term_less_days: term.and_then(|t| i32::try_from(t.less_days).ok()),
                    term_start: term.map(|t| t.start),
                    term_end: term.map(|t| t.end()),
                    term_problem: r.term_problem,
                    alienation_clause: r.alienation_clause,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
