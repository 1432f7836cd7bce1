//! The land build (a derived step of `cargo xtask build`): per local authority, buildings to
//! parcels by footprint overlap, addresses to parcels by point in polygon, the plot figures of
//! every parcel, then company-owned titles to parcels through their linked UPRN, and the links'
//! coverage per authority. Each authority's rows are replaced whole, so running it twice changes
//! nothing. Methods and scores are in docs/METHODS.md ("Land links").

use crate::classify::{AddressMix, classify};
use chrono::NaiveDateTime;
use geo::{Area, BooleanOps, MultiPolygon, Point};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use terrace_geo::PolygonIndex;
use terrace_store::land::{
    self, LandCoverageRow, ParcelAddressRow, ParcelBuildingRow, ParcelStatsRow, ParcelTitleRow,
};
use terrace_store::{Db, StoreError, address};

/// The provenance of every derived land row.
pub const SOURCE: &str = "derived:land_build";
/// How a building is linked to a parcel.
pub const FOOTPRINT_OVERLAP: &str = "footprint_overlap";
/// How an address is linked to a parcel.
pub const POINT_IN_POLYGON: &str = "point_in_polygon";
/// How a title is linked to a parcel.
pub const TITLE_VIA_UPRN: &str = "title_uprn_point_in_polygon";
/// A footprint stands on a parcel when at least this share of it, or this many square metres,
/// lies inside the parcel.
pub const MIN_OVERLAP_SHARE: f64 = 0.1;
pub const MIN_OVERLAP_M2: f64 = 1.0;

const PAGE: i64 = 5_000;

/// What the build did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct BuildReport {
    pub parcels: i64,
    pub parcels_measured: i64,
    pub addresses_in_parcel: i64,
    pub buildings_on_parcel: i64,
    pub titles_linked: i64,
    pub titles_on_parcel: i64,
}

struct Parcel {
    id: i64,
    shape: MultiPolygon<f64>,
    area: f64,
    inside: Option<(f64, f64)>,
}

#[derive(Default)]
struct Tally {
    n_buildings: i32,
    footprint_m2: f64,
    units: i32,
    mix: AddressMix,
    classes: Vec<String>,
    codes: Vec<i32>,
}

/// Runs the land build; `say` receives one progress line per authority.
pub async fn build(
    db: &Db,
    now: NaiveDateTime,
    say: &mut (dyn FnMut(&str) + Send),
) -> Result<BuildReport, StoreError> {
    let lads = land::parcel_lads(db).await?;
    if lads.is_empty() {
        say("[land] no parcels loaded: no land links built");
        return Ok(BuildReport::default());
    }
    let measured: BTreeSet<Option<String>> = land::footprint_lads(db).await?.into_iter().collect();
    let lsoas = boundary_index(db, "lsoa").await?;
    let mut report = BuildReport::default();
    let mut coverage: BTreeMap<String, LandCoverageRow> = BTreeMap::new();
    for lad in &lads {
        let row = build_group(db, lad.as_deref(), measured.contains(lad), &lsoas, now).await?;
        say(&format!(
            "[land] {}: {} parcels ({} with measured coverage), {} of {} addresses in a parcel, {} of {} buildings on a parcel",
            lad.as_deref().unwrap_or("(no authority)"),
            row.parcels,
            row.parcels_measured,
            row.addresses_in_parcel,
            row.addresses,
            row.buildings_on_parcel,
            row.buildings
        ));
        report.parcels += row.parcels;
        report.parcels_measured += row.parcels_measured;
        report.addresses_in_parcel += row.addresses_in_parcel;
        report.buildings_on_parcel += row.buildings_on_parcel;
        coverage.insert(row.lad_code.clone(), row);
    }
    link_titles(db, now, &mut coverage, &mut report).await?;
    land::replace_land_coverage(db, coverage.into_values().collect()).await?;
    say(&format!(
        "[land] company-owned titles on a parcel: {} of {} linked to a UPRN",
        report.titles_on_parcel, report.titles_linked
    ));
    Ok(report)
}

async fn boundary_index(db: &Db, kind: &str) -> Result<PolygonIndex<String>, StoreError> {
    let items = address::boundaries_of_kind(db, kind)
        .await?
        .into_iter()
        .filter_map(|b| {
            terrace_geo::multipolygon_from_wkb(&b.wkb)
                .ok()
                .map(|mp| (mp, b.code))
        })
        .collect();
    Ok(PolygonIndex::build(items))
}

/// Links and figures of one authority's parcels (None: parcels in no known authority).
async fn build_group(
    db: &Db,
    lad: Option<&str>,
    measured: bool,
    lsoas: &PolygonIndex<String>,
    now: NaiveDateTime,
) -> Result<LandCoverageRow, StoreError> {
    use geo::InteriorPoint;
    let mut parcels: Vec<Parcel> = Vec::new();
    let mut after = 0i64;
    loop {
        let page = land::parcels_in_lad(db, lad, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.inspire_id;
        for p in page {
            if let Ok(shape) = terrace_geo::multipolygon_from_wkb(&p.wkb) {
                let inside = shape.interior_point().map(|q| (q.x(), q.y()));
                parcels.push(Parcel {
                    id: p.inspire_id,
                    shape,
                    area: p.area_m2,
                    inside,
                });
            }
        }
    }
    let index = PolygonIndex::build(
        parcels
            .iter()
            .enumerate()
            .map(|(i, p)| (p.shape.clone(), i))
            .collect(),
    );
    let mut tally: Vec<Tally> = parcels.iter().map(|_| Tally::default()).collect();
    let mut cov = LandCoverageRow {
        lad_code: lad.unwrap_or_default().to_string(),
        parcels: parcels.len() as i64,
        parcels_measured: 0,
        parcels_with_address: 0,
        addresses: 0,
        addresses_in_parcel: 0,
        buildings: 0,
        buildings_on_parcel: 0,
        titles_linked: 0,
        titles_on_parcel: 0,
        source: SOURCE.to_string(),
        updated_at: now,
    };
    // Buildings: footprint overlap.
    let mut building_links = Vec::new();
    let mut footprints: Vec<(MultiPolygon<f64>, usize)> = Vec::new();
    let mut after = String::new();
    loop {
        let page = land::footprints_in_lad(db, lad, &after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.building_id.clone();
        for f in page {
            cov.buildings += 1;
            let Ok(shape) = terrace_geo::multipolygon_from_wkb(&f.wkb) else {
                continue;
            };
            let mut on_any = false;
            for &i in index.near_area(&shape, 0.0) {
                let overlap = shape.intersection(&parcels[i].shape).unsigned_area();
                let share = if f.area_m2 > 0.0 {
                    overlap / f.area_m2
                } else {
                    0.0
                };
                if overlap < MIN_OVERLAP_M2 && share < MIN_OVERLAP_SHARE {
                    continue;
                }
                on_any = true;
                let t = &mut tally[i];
                t.n_buildings += 1;
                t.footprint_m2 += overlap;
                t.codes.extend(f.feature_code);
                footprints.push((shape.clone(), i));
                building_links.push(ParcelBuildingRow {
                    id: format!("{}/{}", parcels[i].id, f.building_id),
                    inspire_id: parcels[i].id,
                    building_id: f.building_id.clone(),
                    overlap_m2: overlap,
                    score: share.min(1.0),
                    method: FOOTPRINT_OVERLAP.to_string(),
                    source: SOURCE.to_string(),
                    updated_at: now,
                });
            }
            cov.buildings_on_parcel += i64::from(on_any);
        }
    }
    let on_parcel = PolygonIndex::build(footprints);
    // Addresses: point in polygon; the smallest containing parcel when several overlap.
    let mut address_links = Vec::new();
    let mut uprns = Vec::new();
    let mut after = 0i64;
    loop {
        let page = land::address_points_in_lad(db, lad, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.0;
        for (uprn, class, x, y) in page {
            cov.addresses += 1;
            uprns.push(uprn);
            let holders = index.containing((x, y));
            let Some(&i) = holders.iter().copied().min_by(|&&a, &&b| {
                parcels[a]
                    .area
                    .total_cmp(&parcels[b].area)
                    .then(parcels[a].id.cmp(&parcels[b].id))
            }) else {
                continue;
            };
            cov.addresses_in_parcel += 1;
            let t = &mut tally[i];
            t.mix.add(class.as_deref());
            t.classes.extend(class);
            if on_parcel
                .containing((x, y))
                .into_iter()
                .any(|&owner| owner == i)
            {
                t.units += 1;
            }
            address_links.push(ParcelAddressRow {
                uprn,
                inspire_id: parcels[i].id,
                method: POINT_IN_POLYGON.to_string(),
                score: 1.0 / holders.len() as f64,
                source: SOURCE.to_string(),
                updated_at: now,
            });
        }
    }
    let mut stats = Vec::with_capacity(parcels.len());
    for (p, t) in parcels.iter().zip(tally) {
        let classes: Vec<&str> = t.classes.iter().map(String::as_str).collect();
        let uses = classify(&classes, &t.codes);
        cov.parcels_measured += i64::from(measured);
        cov.parcels_with_address += i64::from(t.mix.residential + t.mix.commercial > 0);
        let lsoa = p
            .inside
            .and_then(|pt| lsoas.containing(Point::from(pt)).into_iter().min().cloned());
        let footprint = measured.then_some(t.footprint_m2);
        stats.push(ParcelStatsRow {
            inspire_id: p.id,
            lad_code: lad.map(str::to_string),
            lsoa_code: lsoa,
            area_m2: p.area,
            n_buildings: t.n_buildings,
            footprint_m2: footprint,
            built_coverage: footprint
                .filter(|_| p.area > 0.0)
                .map(|f| (f / p.area).min(1.0)),
            n_units_via_buildings: t.units,
            address_count_residential: t.mix.residential,
            address_count_commercial: t.mix.commercial,
            landuse_tier_a: uses.tier_a.map(str::to_string),
            landuse_tier_b: uses.tier_b.map(str::to_string),
            nlud_code: uses.nlud_code.map(str::to_string),
            source: SOURCE.to_string(),
            updated_at: now,
        });
    }
    let ids = parcels.iter().map(|p| p.id).collect();
    land::replace_group_links(db, ids, uprns, stats, building_links, address_links).await?;
    Ok(cov)
}

/// Links company-owned titles to the parcel their linked UPRN lies in, and counts them per
/// authority of the address.
async fn link_titles(
    db: &Db,
    now: NaiveDateTime,
    coverage: &mut BTreeMap<String, LandCoverageRow>,
    report: &mut BuildReport,
) -> Result<(), StoreError> {
    let mut after = String::new();
    loop {
        let page = land::linked_titles_page(db, &after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.0.clone();
        let uprns: Vec<i64> = page.iter().map(|t| t.1).collect();
        let parcel_of: HashMap<i64, ParcelAddressRow> = land::parcel_addresses_by_uprn(db, &uprns)
            .await?
            .into_iter()
            .map(|r| (r.uprn, r))
            .collect();
        let lad_of: HashMap<i64, Option<String>> = address::addresses_by_uprn(db, &uprns)
            .await?
            .into_iter()
            .map(|a| (a.uprn, a.lad_code))
            .collect();
        let mut rows = Vec::new();
        let keys: Vec<String> = page.iter().map(|t| t.0.clone()).collect();
        for (title, uprn, score) in page {
            let lad = lad_of.get(&uprn).cloned().flatten().unwrap_or_default();
            let on = parcel_of.get(&uprn);
            report.titles_linked += 1;
            report.titles_on_parcel += i64::from(on.is_some());
            if let Some(c) = coverage.get_mut(&lad) {
                c.titles_linked += 1;
                c.titles_on_parcel += i64::from(on.is_some());
            }
            if let Some(p) = on {
                rows.push(ParcelTitleRow {
                    id: format!("{title}/{}", p.inspire_id),
                    title_number: title,
                    inspire_id: p.inspire_id,
                    uprn,
                    method: TITLE_VIA_UPRN.to_string(),
                    score: score.unwrap_or(1.0) * p.score,
                    source: SOURCE.to_string(),
                    updated_at: now,
                });
            }
        }
        land::replace_parcel_titles(db, keys, rows).await?;
    }
    Ok(())
}
