//! Electricity substations with headroom (CSV).

use crate::formats::spatial::SpatialRow;
use crate::formats::{Parsed, substations as format};
use crate::load::Load;
use crate::merge::LoadCtx;
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;

pub struct Substations;

impl Load for Substations {
    type Row = SpatialRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        super::spatial::apply(ctx, rows, counts).await
    }
}
