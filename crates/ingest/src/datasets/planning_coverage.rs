//! Which local planning authorities planning.data.gov.uk covers, and since when.

use crate::formats::{Parsed, planning_coverage as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;
use terrace_store::planning::{self, CoverageRow};

stored!(
    CoverageRow,
    String,
    |r| r.lad_code.clone(),
    planning::coverage_by_code,
    planning::replace_coverage
);

pub struct PlanningCoverage;

impl Load for PlanningCoverage {
    type Row = format::CoverageRow;

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
            |r| r.lad_code.clone(),
            |r, _| {
                Change::Put(CoverageRow {
                    lad_code: r.lad_code,
                    name: r.name,
                    organisation: r.organisation,
                    organisation_entity: r.organisation_entity,
                    start_date: r.start_date,
                    end_date: r.end_date,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
