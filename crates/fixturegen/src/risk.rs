//! The spatial layers of the risk report around the fixture addresses: planning.data.gov.uk
//! designations (flattened CSV with WKT, and one GeoJSON file), Environment Agency flood layers
//! and Coal Authority high risk areas (GeoJSON in BNG), substations with headroom and REPD
//! projects (CSV). Some layers cover one authority only, so the other answers `not_checked`.
//!
//! Drawn from its own stream (`risk`), after everything else: the other files do not change.
//! Shapes are axis-aligned squares and straight lines (no trigonometry reaches a file).

use crate::Rejection;
use crate::out::{self, Eol, FileStat, LineFile};
use crate::rng::Rng;
use crate::world::lonlat;
use serde::Serialize;
use std::io;
use std::path::Path;

/// An address the layers are placed around.
#[derive(Debug, Clone)]
pub struct Site {
    pub uprn: u64,
    pub x: f64,
    pub y: f64,
    /// Index of the local authority (0 or 1).
    pub lad: usize,
}

pub const CONSERVATION_FILE: &str = "planning/conservation-area.csv";
pub const LISTED_FILE: &str = "planning/listed-building-outline.csv";
pub const TPZ_FILE: &str = "planning/tree-preservation-zone.csv";
pub const TREE_FILE: &str = "planning/tree.csv";
pub const GREEN_BELT_FILE: &str = "planning/green-belt.csv";
pub const BROWNFIELD_FILE: &str = "planning/brownfield-land.csv";
pub const ARTICLE4_FILE: &str = "planning/article-4-direction-area.geojson";
pub const FLOOD_ZONES_FILE: &str = "environment_agency/flood_zones.geojson";
pub const HISTORIC_FILE: &str = "environment_agency/historic_flood_map.geojson";
pub const DEFENCES_FILE: &str = "environment_agency/spatial_flood_defences.geojson";
pub const ROFRS_FILE: &str = "environment_agency/risk_of_flooding_rivers_sea.geojson";
pub const ROFSW_FILE: &str = "environment_agency/risk_of_flooding_surface_water.geojson";
pub const COAL_FILE: &str = "coal_authority/development_high_risk_areas.geojson";
pub const SUBSTATIONS_FILE: &str = "infrastructure/substations.csv";
pub const REPD_FILE: &str = "infrastructure/repd.csv";

/// The flattened planning.data.gov.uk columns the fixture writes.
pub const PLANNING_HEADER: &str = "dataset,end-date,entity,entry-date,geometry,name,organisation-entity,point,prefix,reference,start-date,typology,listed-building-grade";
pub const SUBSTATIONS_HEADER: &str =
    "substation_id,substation_name,voltage_kv,latitude,longitude,demand_headroom_mva,dno";
pub const REPD_HEADER: &str = "Ref ID,Site Name,Technology Type,Installed Capacity (MWelec),Development Status (short),Operator (or Applicant),Planning Authority,X-coordinate,Y-coordinate,Record Last Updated (dd/mm/yyyy)";

/// UPRNs whose risk answers the fixture pins (see docs/DATA.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RiskCases {
    /// The authorities: the first has Article 4 directions, tree preservation and the historic
    /// flood map loaded; the second has coal high risk areas and surface water loaded.
    pub lad_codes: Vec<String>,
    /// In flood zone 3 (and 2), high rivers-and-sea band, a defence within 250 m (first
    /// authority: the flood zones are loaded for it only).
    pub flood_zone_3: Vec<u64>,
    /// In a conservation area and a listed building outline (first authority only).
    pub conservation_and_listed: Vec<u64>,
    /// Inside an Article 4 direction area and a tree preservation zone (first authority).
    pub article_4: Option<u64>,
    /// A brownfield site point and a protected tree point within a few metres (first authority).
    pub brownfield_and_tree: Option<u64>,
    /// In green belt (first authority only).
    pub green_belt: Vec<u64>,
    /// In a coal development high risk area (second authority).
    pub coal: Option<u64>,
    /// Far from every feature: flags false where loaded, not_checked where not; one per
    /// authority (null when it has no dwelling, in tiny worlds).
    pub plain: Vec<Option<u64>>,
    /// Inside one feature of each dataset the other checks read (first authority only):
    /// ancient woodland, heritage at risk, an air quality management area, a scheduled
    /// monument, an SSSI, agricultural land of grade 3, an AONB, a national park, a
    /// planning.data flood risk zone 3, and within a few metres of a listed building point.
    pub designated: Option<u64>,
}

fn square(x: f64, y: f64, h: f64) -> Vec<(f64, f64)> {
    vec![
        (x - h, y - h),
        (x + h, y - h),
        (x + h, y + h),
        (x - h, y + h),
        (x - h, y - h),
    ]
}

fn wkt_polygon(ring: &[(f64, f64)]) -> io::Result<String> {
    let mut parts = Vec::new();
    for &(x, y) in ring {
        let (lon, lat) = lonlat(x, y).ok_or_else(|| io::Error::other("lonlat"))?;
        parts.push(format!("{lon:.6} {lat:.6}"));
    }
    Ok(format!("MULTIPOLYGON ((({})))", parts.join(",")))
}

fn wkt_point(x: f64, y: f64) -> io::Result<String> {
    let (lon, lat) = lonlat(x, y).ok_or_else(|| io::Error::other("lonlat"))?;
    Ok(format!("POINT({lon:.6} {lat:.6})"))
}

fn bng_ring(ring: &[(f64, f64)]) -> String {
    let pts: Vec<String> = ring
        .iter()
        .map(|(x, y)| format!("[{x:.2},{y:.2}]"))
        .collect();
    format!("[{}]", pts.join(","))
}

/// A GeoJSON FeatureCollection, one feature per line; `features` are (properties JSON,
/// geometry JSON). Returns the file's numbers.
fn write_geojson(
    out_dir: &Path,
    rel: &str,
    bng: bool,
    features: &[(String, String)],
) -> io::Result<FileStat> {
    let mut text = String::from("{\"type\":\"FeatureCollection\",");
    if bng {
        text.push_str(
            "\"crs\":{\"type\":\"name\",\"properties\":{\"name\":\"urn:ogc:def:crs:EPSG::27700\"}},",
        );
    }
    text.push_str("\"features\":[\n");
    for (i, (props, geom)) in features.iter().enumerate() {
        text.push_str(&format!(
            "{{\"type\":\"Feature\",\"properties\":{props},\"geometry\":{geom}}}"
        ));
        text.push_str(if i + 1 < features.len() { ",\n" } else { "\n" });
    }
    text.push_str("]}\n");
    let bytes = out::write_whole(out_dir, rel, &text)?;
    Ok(FileStat {
        rel: rel.to_string(),
        rows: features.len() as u64,
        bytes,
    })
}

fn polygon_json(ring: &[(f64, f64)]) -> String {
    format!(
        "{{\"type\":\"Polygon\",\"coordinates\":[{}]}}",
        bng_ring(ring)
    )
}

/// Chooses anchors: dwellings at least 400 m from any address of the other authority and
/// 700 m from each other, up to six per authority, in a shuffled order.
fn anchors(sites: &[Site], rng: &mut Rng) -> [Vec<Site>; 2] {
    let d2 = |a: &Site, b: &Site| (a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y);
    let mut order: Vec<usize> = (0..sites.len()).collect();
    rng.shuffle(&mut order);
    let mut out: [Vec<Site>; 2] = [Vec::new(), Vec::new()];
    for i in order {
        let s = &sites[i];
        if s.lad > 1 || out[s.lad].len() >= 6 {
            continue;
        }
        let far_from_other = sites
            .iter()
            .filter(|o| o.lad != s.lad)
            .all(|o| d2(o, s) >= 400.0 * 400.0);
        let spaced = out.iter().flatten().all(|a| d2(a, s) >= 700.0 * 700.0);
        if far_from_other && spaced {
            out[s.lad].push(s.clone());
        }
        if out[0].len() >= 6 && out[1].len() >= 6 {
            break;
        }
    }
    out
}

/// The dwelling of authority `lad` farthest from every anchor (first in UPRN order on ties).
fn plain(sites: &[Site], lad: usize, anchors: &[Vec<Site>; 2]) -> Option<Site> {
    let d2 = |a: &Site, b: &Site| (a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y);
    let mut best: Option<(f64, &Site)> = None;
    for s in sites.iter().filter(|s| s.lad == lad) {
        let near = anchors
            .iter()
            .flatten()
            .map(|a| d2(a, s))
            .fold(f64::INFINITY, f64::min);
        if best.is_none_or(|(b, _)| near > b) {
            best = Some((near, s));
        }
    }
    best.map(|(_, s)| s.clone())
}

/// What `write` produced: the files (with their manifest dataset codes), the cases, and the
/// malformed rows.
pub struct Written {
    pub files: Vec<(FileStat, &'static str, &'static str)>,
    pub cases: RiskCases,
    pub rejections: Vec<Rejection>,
}

/// Writes every layer file.
pub fn write(out_dir: &Path, seed: u64, sites: &[Site], lad_codes: &[&str]) -> io::Result<Written> {
    let mut rng = Rng::derive(seed, "risk", 0);
    // Up to six anchors per authority; a small world has fewer, and the roles they would carry
    // are left out.
    let anchors = anchors(sites, &mut rng);
    let plains = [plain(sites, 0, &anchors), plain(sites, 1, &anchors)];
    let role = |i: usize| -> Vec<&Site> { anchors.iter().filter_map(|a| a.get(i)).collect() };
    let first = |i: usize| anchors[0].get(i);
    let second = |i: usize| anchors[1].get(i);
    let mut files = Vec::new();
    let mut rejections = Vec::new();
    let mut entity = 44_000_000u64;
    let entry_date = |rng: &mut Rng| {
        format!(
            "2025-{:02}-{:02}",
            rng.range_i64(1, 12),
            rng.range_i64(1, 28)
        )
    };

    // planning.data.gov.uk flattened CSVs.
    let mut planning_csv = |rel: &'static str,
                            rows: Vec<(String, String, String, String, bool)>,
                            bad_after: Option<usize>,
                            rejections: &mut Vec<Rejection>|
     -> io::Result<FileStat> {
        // rows: (dataset, geometry WKT, point WKT, name/grade, written): a row of the second
        // authority is drawn (its entity number and entry date) but not written, so these
        // datasets are loaded for the first authority only and the numbering stays as it was.
        let mut f = LineFile::create(out_dir, rel, Eol::Lf)?;
        f.header(PLANNING_HEADER)?;
        for (i, (dataset, geometry, point, extra, written)) in rows.iter().enumerate() {
            entity += 1;
            if !written {
                entry_date(&mut rng);
                continue;
            }
            let grade = if dataset == "listed-building-outline" {
                "II"
            } else {
                ""
            };
            let ed = entry_date(&mut rng);
            f.row_minimal(&[
                dataset.as_str(),
                "",
                &entity.to_string(),
                &ed,
                geometry,
                extra,
                "600001",
                point,
                dataset,
                &format!("FX{entity}"),
                "",
                "geography",
                grade,
            ])?;
            if bad_after == Some(i) {
                entity += 1;
                f.row_minimal(&[
                    dataset.as_str(),
                    "",
                    &entity.to_string(),
                    &ed,
                    "POLYGON ((bad))",
                    "Unreadable geometry",
                    "600001",
                    "",
                    dataset,
                    &format!("FX{entity}"),
                    "",
                    "geography",
                    "",
                ])?;
                rejections.push(Rejection {
                    file: rel.to_string(),
                    line: f.lines,
                    reason: "geometry: the WKT cannot be read".into(),
                });
            }
        }
        f.finish()
    };
    let poly = |s: &Site, h: f64| wkt_polygon(&square(s.x, s.y, h));
    let mut rows = Vec::new();
    for (l, a) in role(1).into_iter().enumerate() {
        rows.push((
            "conservation-area".to_string(),
            poly(a, 150.0)?,
            wkt_point(a.x, a.y)?,
            format!("Fixture conservation area {}", l + 1),
            a.lad == 0,
        ));
    }
    files.push((
        planning_csv(CONSERVATION_FILE, rows, Some(0), &mut rejections)?,
        "planning_data",
        "planning.data.gov.uk conservation-area, flattened CSV: WKT geometry and point in WGS84, first authority only; LF",
    ));
    let mut rows = Vec::new();
    for a in role(1) {
        rows.push((
            "listed-building-outline".to_string(),
            poly(a, 6.0)?,
            wkt_point(a.x, a.y)?,
            "Fixture listed building".to_string(),
            a.lad == 0,
        ));
    }
    files.push((
        planning_csv(LISTED_FILE, rows, None, &mut rejections)?,
        "planning_data",
        "planning.data.gov.uk listed-building-outline, flattened CSV (grade in listed-building-grade), first authority only; LF",
    ));
    let mut rows = Vec::new();
    if let Some(a) = first(2) {
        rows.push((
            "tree-preservation-zone".to_string(),
            poly(a, 60.0)?,
            String::new(),
            "Fixture TPO zone".to_string(),
            true,
        ));
    }
    files.push((
        planning_csv(TPZ_FILE, rows, None, &mut rejections)?,
        "planning_data",
        "planning.data.gov.uk tree-preservation-zone, flattened CSV (first authority only); LF",
    ));
    let mut rows = Vec::new();
    if let Some(a) = first(3) {
        rows.push((
            "tree".to_string(),
            String::new(),
            wkt_point(a.x + 6.0, a.y)?,
            "Fixture protected oak".to_string(),
            true,
        ));
    }
    files.push((
        planning_csv(TREE_FILE, rows, None, &mut rejections)?,
        "planning_data",
        "planning.data.gov.uk tree, flattened CSV, point only (first authority only); LF",
    ));
    let mut rows = Vec::new();
    for a in role(4) {
        rows.push((
            "green-belt".to_string(),
            poly(a, 300.0)?,
            String::new(),
            "Fixture green belt".to_string(),
            a.lad == 0,
        ));
    }
    files.push((
        planning_csv(GREEN_BELT_FILE, rows, None, &mut rejections)?,
        "planning_data",
        "planning.data.gov.uk green-belt, flattened CSV, first authority only; LF",
    ));
    let mut rows = Vec::new();
    for a in role(3) {
        rows.push((
            "brownfield-land".to_string(),
            String::new(),
            wkt_point(a.x + 4.0, a.y + 3.0)?,
            "Fixture brownfield site".to_string(),
            a.lad == 0,
        ));
    }
    files.push((
        planning_csv(BROWNFIELD_FILE, rows, None, &mut rejections)?,
        "planning_data",
        "planning.data.gov.uk brownfield-land, flattened CSV, point only, first authority only; LF",
    ));

    // Article 4 directions, GeoJSON form, first authority only.
    let mut art4 = Vec::new();
    if let Some(a2) = first(2) {
        let mut coords = Vec::new();
        for (x, y) in square(a2.x, a2.y, 200.0) {
            let (lo, la) = lonlat(x, y).ok_or_else(|| io::Error::other("lonlat"))?;
            coords.push(format!("[{lo:.6},{la:.6}]"));
        }
        entity += 1;
        art4.push((
        format!(
            "{{\"dataset\":\"article-4-direction-area\",\"entity\":\"{entity}\",\"name\":\"Fixture Article 4 direction\",\"entry-date\":\"{}\",\"organisation-entity\":\"600001\",\"reference\":\"A4-1\"}}",
            entry_date(&mut rng)
        ),
        format!(
            "{{\"type\":\"MultiPolygon\",\"coordinates\":[[[{}]]]}}",
            coords.join(",")
        ),
    ));
    }
    files.push((
        write_geojson(out_dir, ARTICLE4_FILE, false, &art4)?,
        "planning_data",
        "planning.data.gov.uk article-4-direction-area, GeoJSON (WGS84), first authority only; LF",
    ));

    // Environment Agency layers (BNG, EPSG:27700).
    let mut fz = Vec::new();
    let mut fid = 0;
    if let Some(s) = first(0) {
        for (zone, h) in [("FZ3", 150.0), ("FZ2", 300.0)] {
            fid += 1;
            fz.push((
                format!(
                    "{{\"fid\":{fid},\"flood_zone\":\"{zone}\",\"layer\":\"Flood Zone {}\"}}",
                    &zone[2..]
                ),
                polygon_json(&square(s.x, s.y, h)),
            ));
        }
    }
    files.push((
        write_geojson(out_dir, FLOOD_ZONES_FILE, true, &fz)?,
        "ea_flood_zones",
        "Environment Agency flood zones 2 and 3 (rivers and sea), GeoJSON in BNG, property flood_zone, first authority only; LF",
    ));
    let hist: Vec<(String, String)> = first(0)
        .map(|s| (
        "{\"fid\":1,\"name\":\"Fixture flood of 2007\",\"start_date\":\"2007-07-20\",\"flood_src\":\"main river\"}".to_string(),
        polygon_json(&square(s.x, s.y, 250.0)),
    ))
        .into_iter()
        .collect();
    files.push((
        write_geojson(out_dir, HISTORIC_FILE, true, &hist)?,
        "ea_historic_flood",
        "Environment Agency historic flood map, GeoJSON in BNG, first authority only; LF",
    ));
    let mut def = Vec::new();
    for (i, s) in role(0).into_iter().enumerate() {
        def.push((
            format!(
                "{{\"fid\":{},\"asset_type\":\"embankment\",\"name\":\"Fixture embankment\"}}",
                i + 1
            ),
            format!(
                "{{\"type\":\"LineString\",\"coordinates\":[[{:.2},{:.2}],[{:.2},{:.2}]]}}",
                s.x + 180.0,
                s.y - 200.0,
                s.x + 180.0,
                s.y + 200.0
            ),
        ));
    }
    files.push((
        write_geojson(out_dir, DEFENCES_FILE, true, &def)?,
        "ea_flood_defences",
        "Environment Agency spatial flood defences, GeoJSON lines in BNG; LF",
    ));
    let mut rofrs = Vec::new();
    let mut fid = 0;
    for s in role(0) {
        for (band, h) in [("High", 100.0), ("Medium", 200.0), ("Low", 320.0)] {
            fid += 1;
            rofrs.push((
                format!("{{\"fid\":{fid},\"prob_4band\":\"{band}\"}}"),
                polygon_json(&square(s.x, s.y, h)),
            ));
        }
    }
    files.push((
        write_geojson(out_dir, ROFRS_FILE, true, &rofrs)?,
        "ea_rofrs",
        "Environment Agency risk of flooding from rivers and sea, GeoJSON in BNG, property prob_4band; LF",
    ));
    let rofsw: Vec<(String, String)> = second(0)
        .map(|s| {
            (
                "{\"fid\":1,\"risk_band\":\"Medium\"}".to_string(),
                polygon_json(&square(s.x, s.y, 120.0)),
            )
        })
        .into_iter()
        .collect();
    files.push((
        write_geojson(out_dir, ROFSW_FILE, true, &rofsw)?,
        "ea_rofsw",
        "Environment Agency risk of flooding from surface water, GeoJSON in BNG, second authority only; LF",
    ));
    let coal: Vec<(String, String)> = second(5)
        .map(|s| {
            (
                "{\"fid\":1,\"name\":\"Fixture development high risk area\"}".to_string(),
                polygon_json(&square(s.x, s.y, 200.0)),
            )
        })
        .into_iter()
        .collect();
    files.push((
        write_geojson(out_dir, COAL_FILE, true, &coal)?,
        "coal_high_risk",
        "Coal Authority development high risk areas, GeoJSON in BNG, second authority only; LF",
    ));

    // Substations (lat/lon) and REPD (BNG).
    let mut f = LineFile::create(out_dir, SUBSTATIONS_FILE, Eol::Lf)?;
    f.header(SUBSTATIONS_HEADER)?;
    let mut n = 0;
    for a in &anchors {
        let places = [(a.first(), 500.0, 0.0), (a.get(4), -400.0, 300.0)];
        for (s, dx, dy) in places
            .into_iter()
            .filter_map(|(s, dx, dy)| s.map(|s| (s, dx, dy)))
        {
            n += 1;
            let (lon, lat) =
                lonlat(s.x + dx, s.y + dy).ok_or_else(|| io::Error::other("lonlat"))?;
            let headroom = if n == 2 {
                String::new()
            } else {
                format!("{:.1}", rng.range_f64(0.5, 20.0))
            };
            f.row_minimal(&[
                format!("FXSUB{n:03}"),
                format!("Fixture primary {n}"),
                "33".to_string(),
                format!("{lat:.6}"),
                format!("{lon:.6}"),
                headroom,
                "Fixture Networks".to_string(),
            ])?;
        }
    }
    files.push((
        f.finish()?,
        "substations",
        "Distribution network substations with demand headroom (MVA), CSV with latitude/longitude; one headroom blank; LF",
    ));
    let mut f = LineFile::create(out_dir, REPD_FILE, Eol::Lf)?;
    f.header(REPD_HEADER)?;
    let mut n = 0;
    for (l, a) in anchors.iter().enumerate() {
        let places = [
            (a.get(1), "Solar Photovoltaics"),
            (a.get(5), "Wind Onshore"),
        ];
        for (s, tech) in places.into_iter().filter_map(|(s, t)| s.map(|s| (s, t))) {
            n += 1;
            f.row_minimal(&[
                format!("{}", 9_000 + n),
                format!("Fixture {tech} {n}"),
                tech.to_string(),
                format!("{:.2}", rng.range_f64(1.0, 30.0)),
                if n % 2 == 0 {
                    "Operational"
                } else {
                    "Application Submitted"
                }
                .to_string(),
                "Fixture Energy Ltd".to_string(),
                lad_codes.get(l).copied().unwrap_or_default().to_string(),
                format!("{:.0}", s.x + 700.0),
                format!("{:.0}", s.y - 200.0),
                "01/03/2026".to_string(),
            ])?;
        }
    }
    files.push((
        f.finish()?,
        "repd",
        "Renewable Energy Planning Database CSV (published column names, BNG X/Y); LF",
    ));

    // Flood zones, conservation areas, listed buildings and green belt are loaded for the first
    // authority only, so the second answers unknown.
    let per = |i: usize| first(i).map(|a| a.uprn).into_iter().collect::<Vec<u64>>();
    let designated = first(5).cloned();
    files.extend(designation_files(
        out_dir,
        designated.as_ref(),
        &mut entity,
        &mut rng,
    )?);
    Ok(Written {
        files,
        cases: RiskCases {
            lad_codes: lad_codes.iter().map(|s| s.to_string()).collect(),
            flood_zone_3: per(0),
            conservation_and_listed: per(1),
            article_4: first(2).map(|a| a.uprn),
            brownfield_and_tree: first(3).map(|a| a.uprn),
            green_belt: per(4),
            coal: second(5).map(|a| a.uprn),
            plain: plains.iter().map(|p| p.as_ref().map(|s| s.uprn)).collect(),
            designated: designated.map(|a| a.uprn),
        },
        rejections,
    })
}

/// The planning.data.gov.uk datasets the checks read that the files above do not: one file
/// each, features around `a` (an address of the first authority), so they are loaded for the
/// first authority only. (file, dataset, half side of the square in metres (0: a point 3 m
/// east), name, extra column and its value).
const DESIGNATION_FILES: [(&str, &str, f64, &str, &str, &str); 10] = [
    (
        "planning/ancient-woodland.csv",
        "ancient-woodland",
        120.0,
        "Fixture ancient wood",
        "ancient-woodland-status",
        "ASNW",
    ),
    (
        "planning/heritage-at-risk.csv",
        "heritage-at-risk",
        20.0,
        "Fixture mill at risk",
        "categories",
        "building or structure",
    ),
    (
        "planning/air-quality-management-area.csv",
        "air-quality-management-area",
        250.0,
        "Fixture AQMA No 1",
        "documentation-url",
        "https://aqma.fixture.example/1",
    ),
    (
        "planning/scheduled-monument.csv",
        "scheduled-monument",
        30.0,
        "Fixture barrow",
        "legislation",
        "Ancient Monuments and Archaeological Areas Act 1979",
    ),
    (
        "planning/site-of-special-scientific-interest.csv",
        "site-of-special-scientific-interest",
        200.0,
        "Fixture meadows SSSI",
        "documentation-url",
        "https://sssi.fixture.example/1",
    ),
    (
        "planning/agricultural-land-classification.csv",
        "agricultural-land-classification",
        220.0,
        "",
        "agricultural-land-classification-grade",
        "Grade 3",
    ),
    (
        "planning/area-of-outstanding-natural-beauty.csv",
        "area-of-outstanding-natural-beauty",
        240.0,
        "Fixture Hills National Landscape",
        "website",
        "https://aonb.fixture.example/",
    ),
    (
        "planning/national-park.csv",
        "national-park",
        245.0,
        "Fixture Moor National Park",
        "",
        "",
    ),
    (
        "planning/flood-risk-zone.csv",
        "flood-risk-zone",
        100.0,
        "",
        "flood-risk-level",
        "3",
    ),
    (
        "planning/listed-building.csv",
        "listed-building",
        0.0,
        "Fixture cottage",
        "listed-building-grade",
        "II*",
    ),
];

fn designation_files(
    out_dir: &Path,
    a: Option<&Site>,
    entity: &mut u64,
    rng: &mut Rng,
) -> io::Result<Vec<(FileStat, &'static str, &'static str)>> {
    let base = "dataset,end-date,entity,entry-date,geometry,name,organisation-entity,point,prefix,reference,start-date,typology";
    let mut out = Vec::new();
    for (rel, dataset, half, name, extra, value) in DESIGNATION_FILES {
        let mut f = LineFile::create(out_dir, rel, Eol::Lf)?;
        if extra.is_empty() {
            f.header(base)?;
        } else {
            f.header(&format!("{base},{extra}"))?;
        }
        if let Some(a) = a {
            *entity += 1;
            let (geometry, point) = if half > 0.0 {
                (wkt_polygon(&square(a.x, a.y, half))?, wkt_point(a.x, a.y)?)
            } else {
                (String::new(), wkt_point(a.x + 3.0, a.y)?)
            };
            let ed = format!(
                "2025-{:02}-{:02}",
                rng.range_i64(1, 12),
                rng.range_i64(1, 28)
            );
            let mut row = vec![
                dataset.to_string(),
                String::new(),
                entity.to_string(),
                ed,
                geometry,
                name.to_string(),
                "600001".to_string(),
                point,
                dataset.to_string(),
                format!("FX{entity}"),
                String::new(),
                "geography".to_string(),
            ];
            if !extra.is_empty() {
                row.push(value.to_string());
            }
            f.row_minimal(&row)?;
        }
        out.push((
            f.finish()?,
            "planning_data",
            "planning.data.gov.uk flattened CSV (WKT in WGS84), one feature around one address of the first authority only; LF",
        ));
    }
    Ok(out)
}

pub const LPA_FILE: &str = "planning/local-planning-authority.csv";
pub const PORTALS_FILE: &str = "planning/planning_portals.csv";
pub const PORTALS_HEADER: &str = "organisation,lpa_code,name,portal_url";

/// The local planning authority of a fixture authority: `E600099NN` for `E060099NN`, a range no
/// real authority uses.
pub fn lpa_code(lad_code: &str) -> String {
    format!("E60{}", &lad_code[lad_code.len().saturating_sub(6)..])
}

/// Written files with their manifest dataset code and format text.
pub type LayerFiles = Vec<(FileStat, &'static str, &'static str)>;

/// planning.data.gov.uk's local-planning-authority boundaries (one per fixture authority, its
/// rectangle: the authorities are unitary) and the operator's planning-portal list (the first
/// authority only, and one row whose URL is not http(s)). `lads` are (code, name, WGS84
/// rectangle lon_min, lon_max, lat_min, lat_max).
pub fn write_lpa(
    out_dir: &Path,
    lads: &[(&str, &str, [f64; 4])],
) -> io::Result<(LayerFiles, Vec<Rejection>)> {
    let mut f = LineFile::create(out_dir, LPA_FILE, Eol::Lf)?;
    f.header("dataset,end-date,entity,entry-date,geometry,name,organisation-entity,point,prefix,reference,start-date,typology")?;
    for (i, (code, name, [x0, x1, y0, y1])) in lads.iter().enumerate() {
        let ring = format!(
            "{x0:.8} {y0:.8},{x1:.8} {y0:.8},{x1:.8} {y1:.8},{x0:.8} {y1:.8},{x0:.8} {y0:.8}"
        );
        f.row_minimal(&[
            "local-planning-authority".to_string(),
            String::new(),
            format!("{}", 46_000_001 + i),
            "2025-04-01".to_string(),
            format!("MULTIPOLYGON ((({ring})))"),
            format!("{name} LPA"),
            format!("{}", 600_001 + i),
            format!("POINT({:.6} {:.6})", (x0 + x1) / 2.0, (y0 + y1) / 2.0),
            "local-planning-authority".to_string(),
            lpa_code(code),
            String::new(),
            "geography".to_string(),
        ])?;
    }
    let lpa_stat = f.finish()?;
    let mut f = LineFile::create(out_dir, PORTALS_FILE, Eol::Lf)?;
    f.header(PORTALS_HEADER)?;
    let mut rejections = Vec::new();
    if let Some((code, name, _)) = lads.first() {
        let slug = name.to_ascii_lowercase().replace(' ', "-");
        f.row_minimal(&[
            format!(
                "local-authority:FX{}",
                &code[code.len().saturating_sub(2)..]
            ),
            lpa_code(code),
            name.to_string(),
            format!("https://planning.{slug}.example/online-applications/"),
        ])?;
        f.row_minimal(&[
            "local-authority:FXBAD".to_string(),
            "E60009999".to_string(),
            "Nowhere".to_string(),
            "planning.nowhere.example".to_string(),
        ])?;
        rejections.push(Rejection {
            file: PORTALS_FILE.to_string(),
            line: f.lines,
            reason: "portal_url is not an http(s) URL".into(),
        });
    }
    let portal_stat = f.finish()?;
    Ok((
        vec![
            (
                lpa_stat,
                "local_planning_authority",
                "planning.data.gov.uk local-planning-authority, flattened CSV (reference E60 code, WKT multipolygon in WGS84), one per authority; LF",
            ),
            (
                portal_stat,
                "planning_portals",
                "Operator planning-portal list, CSV with header organisation,lpa_code,name,portal_url: the first authority only, one row with a URL that is not http(s); LF",
            ),
        ],
        rejections,
    ))
}
