//! HM Land Registry INSPIRE Index Polygons (GML, one file per local authority) into
//! `land_parcels`, keyed by INSPIRE id, each with its local authority and a WGS84 point inside.

use super::spatial::{lad_index, note_no_lads, place};
use crate::formats::Parsed;
use crate::formats::inspire::{self, InspireRow};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::land::{self, ParcelRow};
use terrace_store::loads::RowCounts;

stored!(
    ParcelRow,
    i64,
    |r| r.inspire_id,
    land::parcels_by_id,
    land::replace_parcels
);

pub struct Inspire;

impl Load for Inspire {
    type Row = InspireRow;

    fn read(
        &self,
        path: &Path,
    ) -> std::io::Result<impl Iterator<Item = Parsed<InspireRow>> + Send> {
        inspire::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<InspireRow>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        let lads = lad_index(ctx).await?;
        note_no_lads(ctx, lads, "parcels");
        merge(
            ctx.db,
            rows,
            counts,
            |r| r.inspire_id,
            |r, _| {
                let p = place(&r.geometry, lads);
                let (lat, lon) = super::shared::wgs84(p.inside.map(|i| i.0), p.inside.map(|i| i.1));
                let [min_x, min_y, max_x, max_y] = p.bbox;
                Change::Put(ParcelRow {
                    inspire_id: r.inspire_id,
                    gml_id: r.gml_id,
                    wkb: p.wkb,
                    min_x,
                    min_y,
                    max_x,
                    max_y,
                    area_m2: p.area_m2,
                    lat,
                    lon,
                    valid_from: r.valid_from,
                    lad_code: p.lad_code,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
