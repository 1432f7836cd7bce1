//! planning.data.gov.uk's local planning authority boundaries, stored as boundaries of kind
//! `lpa` beside the ONS ones (the same merge by code).

use super::boundaries::Boundaries;
use crate::formats::boundaries::BoundaryRow;
use crate::formats::{Parsed, lpa_boundaries as format};
use crate::load::Load;
use crate::merge::LoadCtx;
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;

pub struct LpaBoundaries;

impl Load for LpaBoundaries {
    type Row = BoundaryRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        // A changed authority changes which area holds a point: the area index is rebuilt.
        let before = counts.loaded + counts.updated;
        Boundaries.apply(ctx, rows, counts).await?;
        Ok(counts.loaded + counts.updated > before)
    }
}
