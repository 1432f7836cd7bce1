//! OS Open Map Local building footprints (the GeoPackage's `building` layer, or GeoJSON) into
//! `building_footprints`, keyed by OS id, each with its local authority and, where the file has
//! one, its height.

use super::spatial::{lad_index, note_no_lads, place};
use crate::formats::Parsed;
use crate::formats::os_buildings::{self, BuildingRow};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::land::{self, FootprintRow};
use terrace_store::loads::RowCounts;

stored!(
    FootprintRow,
    String,
    |r| r.building_id.clone(),
    land::footprints_by_id,
    land::replace_footprints
);

pub struct OsBuildings;

impl Load for OsBuildings {
    type Row = BuildingRow;

    fn read(
        &self,
        path: &Path,
    ) -> std::io::Result<impl Iterator<Item = Parsed<BuildingRow>> + Send> {
        os_buildings::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<BuildingRow>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        let lads = lad_index(ctx).await?;
        note_no_lads(ctx, lads, "footprints");
        merge(
            ctx.db,
            rows,
            counts,
            |r| r.building_id.clone(),
            |r, _| {
                let p = place(&r.geometry, lads);
                let [min_x, min_y, max_x, max_y] = p.bbox;
                Change::Put(FootprintRow {
                    building_id: r.building_id,
                    feature_code: r.feature_code,
                    wkb: p.wkb,
                    min_x,
                    min_y,
                    max_x,
                    max_y,
                    area_m2: p.area_m2,
                    lad_code: p.lad_code,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                    height_m: r.height_m,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
