//! OS Open Names: the populated places (cities, towns, villages, hamlets, suburban areas, other
//! settlements), merged by their OS id. The gazetteer's other entries (roads, postcodes, water,
//! landforms) are read and counted but not kept: each is counted `unchanged`, or `deleted` when
//! a place of that id was stored (an entry that stopped being a populated place).

use crate::formats::{Parsed, open_names as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::areas::{self, PlaceRow};
use terrace_store::loads::RowCounts;

stored!(
    PlaceRow,
    String,
    |r| r.id.clone(),
    areas::places_by_id,
    areas::replace_places,
    areas::delete_places
);

pub struct OpenNames;

impl Load for OpenNames {
    type Row = format::OpenNamesRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        let before = counts.loaded + counts.updated + counts.deleted;
        merge(
            ctx.db,
            rows,
            counts,
            |r| r.id.clone(),
            |r, _| {
                if !r.populated {
                    return Change::Delete;
                }
                Change::Put(PlaceRow {
                    id: r.id,
                    name: r.name,
                    name_alt: r.name_alt,
                    local_type: r.local_type,
                    x: r.x,
                    y: r.y,
                    postcode_district: r.postcode_district,
                    district_borough: r.district_borough,
                    county_unitary: r.county_unitary,
                    region: r.region,
                    country: r.country,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        // The area index reads the places: a change rebuilds it.
        Ok(counts.loaded + counts.updated + counts.deleted > before)
    }
}
