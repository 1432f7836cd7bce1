//! Code-Point Open: a position for every postcode.

use super::shared::{merge_postcodes, wgs84};
use crate::formats::{Parsed, codepoint as format};
use crate::load::Load;
use crate::merge::LoadCtx;
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::address::PostcodeRow;
use terrace_store::loads::RowCounts;

/// A Code-Point Open admin code that is a real GSS code (its blank county is `None`).
fn gss(v: Option<String>) -> Option<String> {
    v.filter(|c| terrace_core::GssCode::parse(c).is_ok() && !c.ends_with("999999"))
}

pub struct CodePoint;

impl Load for CodePoint {
    type Row = format::CodePointRow;

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
                let (lat, lon) = wgs84(r.easting, r.northing);
                // Code-Point Open is the positional product: its position wins; the postcode
                // directory's area codes win over its admin codes.
                PostcodeRow {
                    easting: r.easting.or(prev.easting),
                    northing: r.northing.or(prev.northing),
                    lat: lat.or(prev.lat),
                    lon: lon.or(prev.lon),
                    lad_code: prev.lad_code.clone().or(r.admin_district_code),
                    country_code: prev.country_code.clone().or(r.country_code),
                    ward_code: prev.ward_code.clone().or(gss(r.admin_ward_code)),
                    county_code: prev.county_code.clone().or(gss(r.admin_county_code)),
                    quality: Some(r.quality),
                    ..prev
                }
            },
        )
        .await
    }
}
