//! The building-attributes operator feed (OF-L): floors, basement, green roof, construction and
//! roof, solar panels per UPRN, as the operator's licensed product records them.

use crate::formats::{Parsed, building_attributes as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::buildings::{self, BuildingAttributesRow};
use terrace_store::loads::RowCounts;

stored!(
    BuildingAttributesRow,
    i64,
    |r| r.uprn,
    buildings::attributes_by_uprn,
    buildings::replace_attributes
);

pub struct BuildingAttributes;

impl Load for BuildingAttributes {
    type Row = format::BuildingAttributes;

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
            |r| r.uprn,
            |r, _| {
                Change::Put(BuildingAttributesRow {
                    uprn: r.uprn,
                    floors: r.floors,
                    basement: r.basement,
                    green_roof: r.green_roof,
                    construction_material: r.construction_material,
                    roof_shape: r.roof_shape,
                    roof_material: r.roof_material,
                    solar_panels: r.solar_panels,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
