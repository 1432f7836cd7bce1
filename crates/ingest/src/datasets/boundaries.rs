//! ONS boundaries (LSOAs, MSOAs, wards, local authorities, counties, regions, countries) as
//! GeoJSON.

use crate::formats::{Parsed, boundaries as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::address;
use terrace_store::address::BoundaryRow;
use terrace_store::loads::RowCounts;

stored!(
    BoundaryRow,
    String,
    |r| r.code.clone(),
    address::boundaries_by_code,
    address::replace_boundaries
);

pub struct Boundaries;

impl Load for Boundaries {
    type Row = format::BoundaryRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        let written = merge(
            ctx.db,
            rows,
            counts,
            |r| r.code.clone(),
            |r, _| {
                // The parser rejects empty geometries, so every row here has a bounding box.
                let [min_x, min_y, max_x, max_y] =
                    terrace_geo::bbox(&r.geometry).unwrap_or([f64::NAN; 4]);
                Change::Put(BoundaryRow {
                    code: r.code,
                    kind: r.kind,
                    name: r.name,
                    wkb: terrace_geo::multipolygon_to_wkb(&r.geometry),
                    min_x,
                    min_y,
                    max_x,
                    max_y,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        // The area index reads the boundaries: a change rebuilds it.
        Ok(written.changed())
    }
}
