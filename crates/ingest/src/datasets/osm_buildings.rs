//! An OpenStreetMap extract's buildings and rooftop PV elements into `osm_buildings`, keyed by
//! element (`way/123`), each with its point, box and outline in BNG metres and its tags as read.
//! The land family's derive step links each building to the footprint holding its centroid.
//! ODbL: every row carries the `osm` source, and answers attribute "© OpenStreetMap
//! contributors". An element no longer in a later extract is not deleted.

use crate::formats::Parsed;
use crate::formats::osm_buildings::{self as format, OsmElement, OsmKind};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use geo::Area;
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;
use terrace_store::osm::{self, OsmBuildingRow};

stored!(
    OsmBuildingRow,
    String,
    |r| r.osm_key.clone(),
    osm::osm_by_key,
    osm::replace_osm
);

pub struct OsmBuildings;

impl Load for OsmBuildings {
    type Row = OsmElement;

    fn read(
        &self,
        path: &Path,
    ) -> std::io::Result<impl Iterator<Item = Parsed<OsmElement>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<OsmElement>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        merge(
            ctx.db,
            rows,
            counts,
            |r| r.key.clone(),
            |r, _| {
                let (x, y) = r.point;
                let bbox = r
                    .outline
                    .as_ref()
                    .and_then(terrace_geo::bbox)
                    .unwrap_or([x, y, x, y]);
                let [min_x, min_y, max_x, max_y] = bbox;
                Change::Put(OsmBuildingRow {
                    osm_key: r.key,
                    kind: match r.kind {
                        OsmKind::Building => osm::KIND_BUILDING,
                        OsmKind::RooftopPv => osm::KIND_ROOFTOP_PV,
                    }
                    .to_string(),
                    building: r.building,
                    x,
                    y,
                    min_x,
                    min_y,
                    max_x,
                    max_y,
                    area_m2: r.outline.as_ref().map(|o| o.unsigned_area()),
                    wkb: r.outline.as_ref().map(terrace_geo::multipolygon_to_wkb),
                    height_m: r.height_m,
                    levels: r.levels,
                    roof_shape: r.roof_shape,
                    roof_material: r.roof_material,
                    rooftop_pv: r.rooftop_pv,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
