//! The operator's planning-portal URL per local planning authority.

use crate::formats::{Parsed, planning_portals as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;
use terrace_store::planning::{self, PortalRow};

stored!(
    PortalRow,
    String,
    |r| r.lpa_code.clone(),
    planning::portals_by_code,
    planning::replace_portals
);

pub struct PlanningPortals;

impl Load for PlanningPortals {
    type Row = format::PortalRow;

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
            |r| r.lpa_code.clone(),
            |r, _| {
                Change::Put(PortalRow {
                    lpa_code: r.lpa_code,
                    organisation: r.organisation,
                    name: r.name,
                    portal_url: r.portal_url,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
