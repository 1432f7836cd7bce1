//! What several datasets merge into: the address register (AddressBase, Open UPRN, EPC) and the
//! postcodes (Code-Point Open, the postcode directory).

use crate::merge::{Change, LoadCtx, merge, stored};
use terrace_store::StoreError;
use terrace_store::address;
use terrace_store::address::AddressRow;
use terrace_store::address::PostcodeRow;
use terrace_store::loads::RowCounts;

stored!(
    AddressRow,
    i64,
    |r| r.uprn,
    address::addresses_by_uprn,
    address::replace_addresses
);
stored!(
    PostcodeRow,
    String,
    |r| r.postcode.clone(),
    address::postcodes_by_key,
    address::replace_postcodes
);

/// Merges rows into the stored addresses they name: `merge(row, stored)` gives the new address,
/// or None to leave it as it is (not counted); the chunk is written in one transaction.
/// Returns whether the register changed.
pub(super) async fn merge_addresses<R>(
    ctx: &LoadCtx<'_>,
    rows: Vec<R>,
    counts: &mut RowCounts,
    uprn: impl Fn(&R) -> i64,
    address: impl Fn(R, Option<AddressRow>) -> Option<AddressRow>,
) -> Result<bool, StoreError> {
    let written = merge(
        ctx.db,
        rows,
        counts,
        uprn,
        |r, prev: Option<&AddressRow>| match address(r, prev.cloned()) {
            Some(new) => Change::Put(new),
            None => Change::Skip,
        },
    )
    .await?;
    Ok(written.changed())
}

fn empty_postcode(pc: &str, ctx: &LoadCtx<'_>) -> PostcodeRow {
    PostcodeRow {
        postcode: pc.to_string(),
        easting: None,
        northing: None,
        lat: None,
        lon: None,
        lad_code: None,
        lsoa_code: None,
        country_code: None,
        quality: None,
        terminated: false,
        source: ctx.source.to_string(),
        updated_at: ctx.now,
        ward_code: None,
        msoa_code: None,
        county_code: None,
        region_code: None,
    }
}

/// The sources a merged row was built from: a sorted, `+`-joined set, so loading either file again
/// changes nothing.
fn merge_source(prev: &str, new: &str) -> String {
    let mut parts: Vec<&str> = prev
        .split('+')
        .chain([new])
        .filter(|s| !s.is_empty())
        .collect();
    parts.sort_unstable();
    parts.dedup();
    parts.join("+")
}

pub(super) fn wgs84(e: Option<f64>, n: Option<f64>) -> (Option<f64>, Option<f64>) {
    match (e, n) {
        (Some(e), Some(n)) => match terrace_geo::wgs84_from_bng(e, n) {
            Some((lon, lat)) => (Some(lat), Some(lon)),
            None => (None, None),
        },
        _ => (None, None),
    }
}

/// Merges rows into the stored postcodes they name: `merge(row, stored or empty)` gives the new
/// postcode row; the chunk is written in one transaction.
pub(super) async fn merge_postcodes<R>(
    ctx: &LoadCtx<'_>,
    rows: Vec<R>,
    counts: &mut RowCounts,
    postcode: impl Fn(&R) -> String,
    fill: impl Fn(R, PostcodeRow) -> PostcodeRow,
) -> Result<bool, StoreError> {
    merge(
        ctx.db,
        rows,
        counts,
        &postcode,
        |r, prev: Option<&PostcodeRow>| {
            let prev = prev
                .cloned()
                .unwrap_or_else(|| empty_postcode(&postcode(&r), ctx));
            Change::Put(PostcodeRow {
                source: merge_source(&prev.source, ctx.source),
                updated_at: ctx.now,
                ..fill(r, prev)
            })
        },
    )
    .await?;
    Ok(false)
}
