//! The OSM building links (a derived step of `cargo xtask build`): each building of the
//! OpenStreetMap extract linked to the building footprint holding its centroid (the smallest
//! such footprint, the OS id breaking ties), else to the footprint its outline overlaps most (at
//! least [`MIN_OVERLAP_SHARE`] of the OSM outline). The links are replaced whole only when they
//! changed, so running it twice changes nothing. Methods in docs/METHODS.md ("OSM buildings").

use chrono::NaiveDateTime;
use geo::{Area, BooleanOps, MultiPolygon};
use terrace_geo::PolygonIndex;
use terrace_store::osm::{self, OsmFootprintLinkRow};
use terrace_store::{Db, StoreError, land};

/// The provenance of every link.
pub const SOURCE: &str = "derived:osm_footprint_links";
/// The footprint holds the OSM building's centroid.
pub const CENTROID_IN_FOOTPRINT: &str = "centroid_in_footprint";
/// No footprint holds the centroid: the footprint the outline overlaps most.
pub const LARGEST_OVERLAP: &str = "largest_overlap";
/// The least share of an OSM outline a footprint must hold to be linked by overlap.
pub const MIN_OVERLAP_SHARE: f64 = 0.5;

const PAGE: i64 = 5_000;

/// What the step did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct OsmLinkReport {
    pub buildings: i64,
    pub linked: i64,
    /// Whether the stored links changed.
    pub changed: bool,
}

/// Links every OSM building to a footprint; `say` receives one summary line.
pub async fn link(
    db: &Db,
    now: NaiveDateTime,
    say: &mut (dyn FnMut(&str) + Send),
) -> Result<OsmLinkReport, StoreError> {
    let mut report = OsmLinkReport::default();
    if !osm::osm_loaded(db).await? {
        let stale = !osm::all_osm_links(db).await?.is_empty();
        if stale {
            osm::replace_osm_links(db, Vec::new()).await?;
            report.changed = true;
        }
        return Ok(report);
    }
    // Every footprint, indexed (the OSM buildings carry no local authority to group them by).
    let mut shapes = Vec::new();
    let mut ids: Vec<(String, f64)> = Vec::new();
    for lad in land::footprint_lads(db).await? {
        let mut after = String::new();
        loop {
            let page = land::footprints_in_lad(db, lad.as_deref(), &after, PAGE).await?;
            let Some(last) = page.last() else { break };
            after = last.building_id.clone();
            for f in page {
                if let Ok(shape) = terrace_geo::multipolygon_from_wkb(&f.wkb) {
                    shapes.push((shape, ids.len()));
                    ids.push((f.building_id, f.area_m2));
                }
            }
        }
    }
    let index = PolygonIndex::build(shapes);
    let mut rows = Vec::new();
    let mut after = String::new();
    loop {
        let page = osm::osm_buildings_page(db, &after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.osm_key.clone();
        for b in page {
            report.buildings += 1;
            let outline = b
                .wkb
                .as_deref()
                .and_then(|w| terrace_geo::multipolygon_from_wkb(w).ok());
            if let Some((i, method, share)) =
                footprint_of(&index, &ids, (b.x, b.y), outline.as_ref())
            {
                report.linked += 1;
                rows.push(OsmFootprintLinkRow {
                    osm_key: b.osm_key,
                    building_id: ids[i].0.clone(),
                    method: method.to_string(),
                    overlap_share: (share * 1e4).round() / 1e4,
                    source: SOURCE.to_string(),
                    updated_at: now,
                });
            }
        }
    }
    let stored = osm::all_osm_links(db).await?;
    let same = stored.len() == rows.len()
        && stored.iter().zip(&rows).all(|(a, b)| {
            a.osm_key == b.osm_key
                && a.building_id == b.building_id
                && a.method == b.method
                && a.overlap_share == b.overlap_share
        });
    if !same {
        osm::replace_osm_links(db, rows).await?;
        report.changed = true;
    }
    say(&format!(
        "[osm buildings] {} of {} OpenStreetMap buildings linked to a footprint",
        report.linked, report.buildings
    ));
    Ok(report)
}

/// The footprint of an OSM building: (footprint index, method, share of the OSM outline inside).
fn footprint_of(
    index: &PolygonIndex<usize>,
    ids: &[(String, f64)],
    centroid: (f64, f64),
    outline: Option<&MultiPolygon<f64>>,
) -> Option<(usize, &'static str, f64)> {
    let own = outline.map(|o| o.unsigned_area()).filter(|a| *a > 0.0);
    let share = |i: usize| -> f64 {
        match (outline, own) {
            (Some(o), Some(a)) => index
                .iter()
                .nth(i)
                .map_or(0.0, |(f, _)| o.intersection(f).unsigned_area() / a),
            (Some(_), None) | (None, _) => 1.0,
        }
    };
    let holder = index
        .containing(centroid)
        .into_iter()
        .copied()
        .min_by(|&a, &b| {
            ids[a]
                .1
                .total_cmp(&ids[b].1)
                .then_with(|| ids[a].0.cmp(&ids[b].0))
        });
    if let Some(i) = holder {
        return Some((i, CENTROID_IN_FOOTPRINT, share(i).min(1.0)));
    }
    let o = outline?;
    let a = own?;
    index
        .near_area(o, 0.0)
        .into_iter()
        .copied()
        .filter_map(|i| {
            // Values are insertion slots, so the slot's entry is the footprint.
            let (f, _) = index.iter().nth(i)?;
            Some((i, o.intersection(f).unsigned_area() / a))
        })
        .filter(|(_, s)| *s >= MIN_OVERLAP_SHARE)
        .max_by(|x, y| {
            x.1.total_cmp(&y.1)
                .then_with(|| ids[y.0].0.cmp(&ids[x.0].0))
        })
        .map(|(i, s)| (i, LARGEST_OVERLAP, s.min(1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::{LineString, Polygon};

    fn poly(pts: &[(f64, f64)]) -> MultiPolygon<f64> {
        MultiPolygon(vec![Polygon::new(LineString::from(pts.to_vec()), vec![])])
    }

    #[test]
    fn centroid_first_then_the_largest_overlap_of_at_least_half() {
        // F: a 20 x 2 strip; G: a 4 x 4 square inside its west end; H: elsewhere.
        let f = poly(&[(0.0, 0.0), (20.0, 0.0), (20.0, 2.0), (0.0, 2.0), (0.0, 0.0)]);
        let g = poly(&[(0.0, 0.0), (1.5, 0.0), (1.5, 1.5), (0.0, 1.5), (0.0, 0.0)]);
        let h = poly(&[
            (50.0, 50.0),
            (60.0, 50.0),
            (60.0, 60.0),
            (50.0, 60.0),
            (50.0, 50.0),
        ]);
        let ids = vec![
            ("F".to_string(), 40.0),
            ("G".to_string(), 2.25),
            ("H".to_string(), 100.0),
        ];
        let index = PolygonIndex::build(vec![(f, 0), (g, 1), (h, 2)]);
        // A centroid inside F and G: the smaller, G.
        let small = poly(&[(0.5, 0.5), (1.0, 0.5), (1.0, 1.0), (0.5, 1.0), (0.5, 0.5)]);
        let got = footprint_of(&index, &ids, (0.75, 0.75), Some(&small)).unwrap();
        assert_eq!((got.0, got.1), (1, CENTROID_IN_FOOTPRINT));
        assert!((got.2 - 1.0).abs() < 1e-9);
        // An L: the 20 x 2 arm over F and a 2 x 10 arm above it; its centroid (7, 3) lies in
        // no footprint, and F holds two thirds of it.
        let l = poly(&[
            (0.0, 0.0),
            (20.0, 0.0),
            (20.0, 2.0),
            (2.0, 2.0),
            (2.0, 12.0),
            (0.0, 12.0),
            (0.0, 0.0),
        ]);
        let got = footprint_of(&index, &ids, (7.0, 3.0), Some(&l)).unwrap();
        assert_eq!((got.0, got.1), (0, LARGEST_OVERLAP));
        assert!((got.2 - 40.0 / 60.0).abs() < 1e-9, "{got:?}");
        // Less than half inside any footprint: not linked.
        let mostly_out = poly(&[
            (15.0, 0.0),
            (25.0, 0.0),
            (25.0, 10.0),
            (15.0, 10.0),
            (15.0, 0.0),
        ]);
        assert_eq!(
            footprint_of(&index, &ids, (30.0, 30.0), Some(&mostly_out)),
            None
        );
        // No outline and a centroid in nothing: not linked.
        assert_eq!(footprint_of(&index, &ids, (30.0, 30.0), None), None);
    }
}
