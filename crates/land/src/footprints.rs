//! The address-to-footprint link (a derived step of `cargo xtask build`): each address point to
//! the building footprint that contains it, per local authority (the footprints by the authority
//! of their interior point, the addresses by their own). Where outlines overlap, the smallest
//! footprint holding the point wins (the OS id breaks ties), scored 1 over the number holding
//! it. Each authority's addresses are replaced whole and links to footprints no longer loaded
//! are removed, so running it twice changes nothing. Methods in docs/METHODS.md ("Address to
//! footprint").

use chrono::NaiveDateTime;
use terrace_geo::PolygonIndex;
use terrace_store::buildings::{self, AddressFootprintRow};
use terrace_store::{Db, StoreError, land};

/// The provenance of every link.
pub const SOURCE: &str = "derived:address_footprints";
/// How an address is linked to a footprint.
pub const POINT_IN_FOOTPRINT: &str = "point_in_footprint";

const PAGE: i64 = 5_000;

/// What the step did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FootprintLinkReport {
    /// Addresses with a position in authorities holding footprints.
    pub addresses: i64,
    /// Of those, addresses inside a footprint.
    pub linked: i64,
    /// Links removed because their footprint is no longer loaded.
    pub pruned: i64,
}

/// Links every address point to the footprint containing it; `say` receives one line per
/// authority.
pub async fn link_addresses(
    db: &Db,
    now: NaiveDateTime,
    say: &mut (dyn FnMut(&str) + Send),
) -> Result<FootprintLinkReport, StoreError> {
    let mut report = FootprintLinkReport::default();
    for lad in land::footprint_lads(db).await? {
        let (addresses, linked) = link_group(db, lad.as_deref(), now).await?;
        say(&format!(
            "[address footprints] {}: {linked} of {addresses} addresses inside a footprint",
            lad.as_deref().unwrap_or("(no authority)")
        ));
        report.addresses += addresses;
        report.linked += linked;
    }
    report.pruned = buildings::prune_address_footprints(db).await? as i64;
    Ok(report)
}

/// One authority: (addresses read, addresses linked).
async fn link_group(
    db: &Db,
    lad: Option<&str>,
    now: NaiveDateTime,
) -> Result<(i64, i64), StoreError> {
    let mut shapes = Vec::new();
    let mut ids: Vec<(String, f64)> = Vec::new();
    let mut after = String::new();
    loop {
        let page = land::footprints_in_lad(db, lad, &after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.building_id.clone();
        for f in page {
            if let Ok(shape) = terrace_geo::multipolygon_from_wkb(&f.wkb) {
                shapes.push((shape, ids.len()));
                ids.push((f.building_id, f.area_m2));
            }
        }
    }
    let index = PolygonIndex::build(shapes);
    let (mut read, mut linked) = (0i64, 0i64);
    let mut after = 0i64;
    loop {
        let page = land::address_points_in_lad(db, lad, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.0;
        let mut uprns = Vec::with_capacity(page.len());
        let mut rows = Vec::new();
        for (uprn, _, x, y) in page {
            read += 1;
            uprns.push(uprn);
            let holders = index.containing((x, y));
            let Some(&i) = holders.iter().copied().min_by(|&&a, &&b| {
                ids[a]
                    .1
                    .total_cmp(&ids[b].1)
                    .then_with(|| ids[a].0.cmp(&ids[b].0))
            }) else {
                continue;
            };
            linked += 1;
            rows.push(AddressFootprintRow {
                uprn,
                building_id: ids[i].0.clone(),
                method: POINT_IN_FOOTPRINT.to_string(),
                score: 1.0 / holders.len() as f64,
                source: SOURCE.to_string(),
                updated_at: now,
            });
        }
        buildings::replace_address_footprints(db, uprns, rows).await?;
    }
    Ok((read, linked))
}
