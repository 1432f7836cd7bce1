//! An Environment Agency flood layer or the Coal Authority's high risk areas (GeoJSON); one row
//! of the table per layer.

use crate::formats::spatial::SpatialRow;
use crate::formats::{Parsed, layers as format};
use crate::load::Load;
use crate::merge::LoadCtx;
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;

pub struct LayerFile(pub format::Layer);

impl Load for LayerFile {
    type Row = SpatialRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path, self.0)
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
