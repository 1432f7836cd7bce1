//! The ONS postcode directory: each postcode's areas, and a position where none is held.

use super::shared::{merge_postcodes, wgs84};
use crate::formats::{Parsed, onspd as format};
use crate::load::Load;
use crate::merge::LoadCtx;
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::address::PostcodeRow;
use terrace_store::loads::RowCounts;

pub struct Onspd;

impl Load for Onspd {
    type Row = format::OnspdRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        merge_postcodes(
            ctx,
            rows,
            counts,
            |r| r.postcode.clone(),
            |r, prev| {
                let (lat, lon) = match (r.lat, r.lon) {
                    (Some(a), Some(o)) => (Some(a), Some(o)),
                    _ => wgs84(r.easting, r.northing),
                };
                // A position from Code-Point Open is kept; the directory fills one that is missing.
                let has_pos = prev.easting.is_some() && prev.northing.is_some();
                PostcodeRow {
                    easting: if has_pos { prev.easting } else { r.easting },
                    northing: if has_pos { prev.northing } else { r.northing },
                    lat: if has_pos { prev.lat } else { lat },
                    lon: if has_pos { prev.lon } else { lon },
                    lad_code: r.lad_code.or(prev.lad_code.clone()),
                    lsoa_code: r.lsoa_code.or(prev.lsoa_code.clone()),
                    country_code: r.country_code.or(prev.country_code.clone()),
                    ward_code: r.ward_code.or(prev.ward_code.clone()),
                    msoa_code: r.msoa_code.or(prev.msoa_code.clone()),
                    county_code: r.county_code.or(prev.county_code.clone()),
                    region_code: r.region_code.or(prev.region_code.clone()),
                    terminated: r.terminated,
                    ..prev
                }
            },
        )
        .await
    }
}
