//! Writers of the land files in their published layouts: HM Land Registry's INSPIRE Index
//! Polygons GML (`wfs:FeatureCollection` of `wfs:member`/`LR:PREDEFINED`, `gml:Polygon` in
//! EPSG:27700 with `gml:posList`s) and OS Open Map Local building footprints as GeoJSON
//! (EPSG:27700, properties `id` and `feature_code`). Coordinates are written with two decimals.

use std::fmt::Write;

/// The GML's opening lines (the root element carries `numberMatched`, as HMLR's files do).
pub fn inspire_header(number_matched: usize) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<wfs:FeatureCollection xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xmlns:wfs=\"http://www.opengis.net/wfs/2.0\" xmlns:gml=\"http://www.opengis.net/gml/3.2\" xmlns:LR=\"www.landregistry.gov.uk\" numberMatched=\"{number_matched}\" numberReturned=\"0\" timeStamp=\"2026-06-01T00:00:00\">\n"
    )
}

/// The GML's closing line.
pub const INSPIRE_FOOTER: &str = "</wfs:FeatureCollection>\n";

fn pos_list(ring: &[(f64, f64)]) -> String {
    let mut s = String::with_capacity(ring.len() * 22);
    for (i, (x, y)) in ring.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{x:.2} {y:.2}");
    }
    s
}

/// Appends one member: its INSPIRE id, an exterior ring and any interior rings (each ring
/// closed by the caller, or left open on purpose for a malformed member).
pub fn inspire_member(out: &mut String, inspire_id: i64, rings: &[Vec<(f64, f64)>]) {
    let _ = write!(
        out,
        "  <wfs:member>\n    <LR:PREDEFINED gml:id=\"PREDEFINED.fid-{inspire_id:x}\">\n      <LR:GEOMETRY>\n        <gml:Polygon gml:id=\"PREDEFINED.fid-{inspire_id:x}-0\" srsName=\"urn:ogc:def:crs:EPSG::27700\">\n"
    );
    for (i, ring) in rings.iter().enumerate() {
        let tag = if i == 0 { "exterior" } else { "interior" };
        let _ = writeln!(
            out,
            "          <gml:{tag}><gml:LinearRing><gml:posList>{}</gml:posList></gml:LinearRing></gml:{tag}>",
            pos_list(ring)
        );
    }
    let _ = write!(
        out,
        "        </gml:Polygon>\n      </LR:GEOMETRY>\n      <LR:INSPIREID>{inspire_id}</LR:INSPIREID>\n      <LR:LABEL>{inspire_id}</LR:LABEL>\n      <LR:NATIONALCADASTRALREFERENCE>{inspire_id}</LR:NATIONALCADASTRALREFERENCE>\n      <LR:VALIDFROM>2009-01-20T08:54:55.469Z</LR:VALIDFROM>\n      <LR:BEGINLIFESPANVERSION>2009-01-20T08:54:55.469Z</LR:BEGINLIFESPANVERSION>\n    </LR:PREDEFINED>\n  </wfs:member>\n"
    );
}

/// A closed axis-aligned rectangle ring.
pub fn rect(x0: f64, y0: f64, x1: f64, y1: f64) -> Vec<(f64, f64)> {
    vec![(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]
}

/// One building footprint: OS id, feature code, exterior ring.
pub type Footprint = (String, i32, Vec<(f64, f64)>);

/// An OS Open Map Local building GeoJSON in EPSG:27700.
pub fn os_buildings_geojson(footprints: &[Footprint]) -> String {
    let mut s = String::from(
        "{\"type\":\"FeatureCollection\",\"name\":\"building\",\"crs\":{\"type\":\"name\",\"properties\":{\"name\":\"urn:ogc:def:crs:EPSG::27700\"}},\"features\":[\n",
    );
    for (i, (id, code, ring)) in footprints.iter().enumerate() {
        let coords: Vec<String> = ring
            .iter()
            .map(|(x, y)| format!("[{x:.2},{y:.2}]"))
            .collect();
        let _ = writeln!(
            s,
            "{}{{\"type\":\"Feature\",\"properties\":{{\"id\":\"{id}\",\"feature_code\":{code}}},\"geometry\":{{\"type\":\"Polygon\",\"coordinates\":[[{}]]}}}}",
            if i == 0 { "" } else { "," },
            coords.join(",")
        );
    }
    s.push_str("]}\n");
    s
}

/// One row of a GeoPackage `building` layer as OS Open Map Local lays it out (`fid`, `id`,
/// `feature_code`, the geometry), with an optional height column for files that carry one.
#[derive(Debug, Clone, PartialEq)]
pub struct GpkgBuilding {
    pub fid: i64,
    pub id: Option<String>,
    pub feature_code: Option<i32>,
    /// Written to the `relhmax` column when the layer has one, as given.
    pub height: Option<String>,
    /// The geometry blob as stored (`None`: NULL).
    pub geometry: Option<Vec<u8>>,
}

/// Standard WKB (little-endian, XY) of a polygon.
pub fn wkb_polygon(rings: &[Vec<(f64, f64)>]) -> Vec<u8> {
    let mut b = vec![1u8];
    b.extend(3u32.to_le_bytes());
    b.extend((rings.len() as u32).to_le_bytes());
    for ring in rings {
        b.extend((ring.len() as u32).to_le_bytes());
        for (x, y) in ring {
            b.extend(x.to_le_bytes());
            b.extend(y.to_le_bytes());
        }
    }
    b
}

/// A GeoPackage binary geometry (GeoPackage 1.4, clause 2.1.3): the magic `GP`, version 0, the
/// flags byte (bit 0 the header's byte order, 1 little-endian; bits 1-3 the envelope indicator,
/// here 1, an XY envelope), the `srs_id`, the envelope `[minx, maxx, miny, maxy]`, then `wkb`.
pub fn gpkg_blob(srs_id: i32, wkb: &[u8], little_endian: bool) -> Vec<u8> {
    let mut b = b"GP".to_vec();
    b.push(0);
    b.push(0b0000_0010 | u8::from(little_endian));
    let f = |v: f64| {
        if little_endian {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        }
    };
    b.extend(if little_endian {
        srs_id.to_le_bytes()
    } else {
        srs_id.to_be_bytes()
    });
    // The envelope of the WKB's coordinates (a polygon's, read back from the bytes written by
    // `wkb_polygon`; any other blob gets a zero envelope).
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    if wkb.len() > 9 && wkb[0] == 1 && wkb[1..5] == 3u32.to_le_bytes() {
        let mut at = 9;
        let rd = |at: usize| -> Option<f64> {
            wkb.get(at..at + 8)
                .map(|s| f64::from_le_bytes(s.try_into().unwrap_or([0; 8])))
        };
        let rings = u32::from_le_bytes(wkb[5..9].try_into().unwrap_or([0; 4]));
        for _ in 0..rings {
            let Some(n) = wkb.get(at..at + 4) else { break };
            let n = u32::from_le_bytes(n.try_into().unwrap_or([0; 4]));
            at += 4;
            for _ in 0..n {
                if let (Some(x), Some(y)) = (rd(at), rd(at + 8)) {
                    xs.push(x);
                    ys.push(y);
                }
                at += 16;
            }
        }
    }
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let env = if xs.is_empty() {
        [0.0; 4]
    } else {
        [min(&xs), max(&xs), min(&ys), max(&ys)]
    };
    for v in env {
        b.extend(f(v));
    }
    b.extend_from_slice(wkb);
    b
}

fn sql_text(v: &Option<String>) -> String {
    match v {
        Some(s) => format!("'{}'", s.replace('\'', "''")),
        None => "NULL".into(),
    }
}

/// The SQL script of a GeoPackage (GeoPackage 1.4: the `GPKG` application id, the required
/// `gpkg_spatial_ref_sys`, `gpkg_contents` and `gpkg_geometry_columns` tables) holding OS Open
/// Map Local's `building` layer in EPSG:27700 with `rows`, a `relhmax` height column when
/// `with_height`, and an empty `road` layer beside it.
pub fn os_buildings_gpkg_sql(rows: &[GpkgBuilding], with_height: bool) -> String {
    let mut s = String::from(
        "PRAGMA application_id = 1196444487;\n\
PRAGMA user_version = 10400;\n\
CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT NOT NULL, srs_id INTEGER NOT NULL PRIMARY KEY, organization TEXT NOT NULL, organization_coordsys_id INTEGER NOT NULL, definition TEXT NOT NULL, description TEXT);\n\
INSERT INTO gpkg_spatial_ref_sys VALUES ('Undefined cartesian SRS', -1, 'NONE', -1, 'undefined', 'undefined cartesian coordinate reference system');\n\
INSERT INTO gpkg_spatial_ref_sys VALUES ('Undefined geographic SRS', 0, 'NONE', 0, 'undefined', 'undefined geographic coordinate reference system');\n\
INSERT INTO gpkg_spatial_ref_sys VALUES ('WGS 84 geodetic', 4326, 'EPSG', 4326, 'GEOGCS[\"WGS 84\"]', 'longitude/latitude coordinates in decimal degrees on the WGS 84 spheroid');\n\
INSERT INTO gpkg_spatial_ref_sys VALUES ('OSGB36 / British National Grid', 27700, 'EPSG', 27700, 'PROJCS[\"OSGB36 / British National Grid\"]', NULL);\n\
CREATE TABLE gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY, data_type TEXT NOT NULL, identifier TEXT UNIQUE, description TEXT DEFAULT '', last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')), min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE, srs_id INTEGER, CONSTRAINT fk_gc_r_srs_id FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys(srs_id));\n\
CREATE TABLE gpkg_geometry_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL, geometry_type_name TEXT NOT NULL, srs_id INTEGER NOT NULL, z TINYINT NOT NULL, m TINYINT NOT NULL, CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name), CONSTRAINT uk_gc_table_name UNIQUE (table_name), CONSTRAINT fk_gc_tn FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name), CONSTRAINT fk_gc_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id));\n\
CREATE TABLE road (fid INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, geometry LINESTRING, id TEXT);\n\
INSERT INTO gpkg_contents (table_name, data_type, identifier, last_change, srs_id) VALUES ('road', 'features', 'road', '2026-06-01T00:00:00.000Z', 27700);\n\
INSERT INTO gpkg_geometry_columns VALUES ('road', 'geometry', 'LINESTRING', 27700, 0, 0);\n",
    );
    let _ = writeln!(
        s,
        "CREATE TABLE building (fid INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, geometry MULTIPOLYGON, id TEXT, feature_code INTEGER{});",
        if with_height { ", relhmax REAL" } else { "" }
    );
    s.push_str("INSERT INTO gpkg_contents (table_name, data_type, identifier, last_change, srs_id) VALUES ('building', 'features', 'building', '2026-06-01T00:00:00.000Z', 27700);\n");
    s.push_str("INSERT INTO gpkg_geometry_columns VALUES ('building', 'geometry', 'MULTIPOLYGON', 27700, 0, 0);\n");
    for r in rows {
        let geometry = match &r.geometry {
            Some(g) => {
                let hex: String = g.iter().map(|b| format!("{b:02X}")).collect();
                format!("X'{hex}'")
            }
            None => "NULL".into(),
        };
        let code = r
            .feature_code
            .map_or_else(|| "NULL".to_string(), |c| c.to_string());
        let height = if with_height {
            format!(", {}", sql_text(&r.height))
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "INSERT INTO building (fid, geometry, id, feature_code{}) VALUES ({}, {geometry}, {}, {code}{height});",
            if with_height { ", relhmax" } else { "" },
            r.fid,
            sql_text(&r.id),
        );
    }
    s
}

/// The INSPIRE GML of the fixture world.
pub const INSPIRE_FILE: &str = "land/Land_Registry_Cadastral_Parcels.gml";
/// The OS Open Map Local buildings of the fixture world.
pub const BUILDINGS_FILE: &str = "land/opmplc_building.geojson";

/// Plots per local authority at most (the fixture size budget): the first authority's plots
/// get buildings (footprint data loaded there), the second's none (coverage not measured).
const PLOTS_PER_LAD: [usize; 2] = [160, 40];
/// Half the side of a plot and of its building, metres.
const PLOT_HALF: f64 = 8.0;
const BUILDING_HALF: f64 = 4.0;
/// Half the side of a large plot (576 m2) and of the shed on it (36 m2, 6.25% of the plot): the
/// under-built plots a sourcing search finds at its default floor of 400 m2 (every other plot is
/// 256 m2). `LARGE_PLOTS` of them stand west of the measured authority's plots, with no address.
const LARGE_HALF: f64 = 12.0;
const SHED_HALF: f64 = 3.0;
const LARGE_PLOTS: usize = 2;
/// The first INSPIRE id.
const FIRST_ID: i64 = 60_000_001;

/// What the land tests pin.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct LandCases {
    pub inspire_file: String,
    pub buildings_file: String,
    /// Parcels written (the malformed member excluded).
    pub parcels: usize,
    /// Parcels with a building on them.
    pub parcels_with_building: usize,
    /// Parcels of the measured authority without a footprint (measured, coverage 0).
    pub parcels_without_footprint: usize,
    /// The authority with footprints, and the one without.
    pub measured_lad: String,
    pub unmeasured_lad: String,
    /// A house's UPRN and the INSPIRE id of its plot.
    pub sample_uprn: u64,
    pub sample_land_id: i64,
    /// The building-attributes operator feed: its file, rows written (the malformed one
    /// included), and the sample house's attributes as written.
    pub attributes_file: String,
    pub attributes_rows: usize,
    pub sample_floors: i32,
    pub sample_roof_shape: String,
    /// The planted cluster of adjacent parcels (the land assembly's tests).
    pub cluster: ClusterCases,
    /// Large plots with a shed and no address (INSPIRE ids), and their area: the parcels planted
    /// for the under-built plots strategy at its defaults (every other plot is 256 m2).
    pub large_plots: Vec<i64>,
    pub large_plot_area_m2: f64,
    /// The LIDAR composite's tiles over the sample house (`lidar/`).
    pub lidar: crate::lidar::LidarCases,
    /// The OpenStreetMap extract over the buildings (`osm/`).
    pub osm: crate::osm::OsmCases,
    /// The HMO licence register feed (`buildings/hmo_licences.csv`).
    pub hmo: crate::osm::HmoCases,
}

/// The files [`Land::finish`] wrote, and the cases.
pub struct LandFiles {
    pub gml: crate::out::FileStat,
    pub buildings: crate::out::FileStat,
    pub gml_bad_line: u64,
    pub attributes: crate::out::FileStat,
    pub attributes_bad_line: u64,
    pub lidar: crate::out::FileStat,
    pub osm: crate::out::FileStat,
    pub hmo: crate::out::FileStat,
    pub cases: LandCases,
}

/// The planted cluster: a 3x2 block of plots around three houses that had no plot, in the
/// measured authority, with nothing else within 6 m. The bottom row holds the houses: the
/// subject in the middle and `same_owner` to its left (titles of one company), `other_owner`
/// to its right (another company's title). The top row has no address: `corner_left` and
/// `corner_right` touch the subject at a corner, `gap` stands `gap_m` (0.3 m) above it (adjacent
/// at the 0.5 m tolerance, not at 0.1); `far` lies `far_m` (4.8 m) below it (found only with a
/// ring of 5 m or more). Parcel ids are INSPIRE ids.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ClusterCases {
    pub subject: i64,
    pub same_owner: i64,
    pub other_owner: i64,
    pub corner_left: i64,
    pub gap: i64,
    pub corner_right: i64,
    pub far: i64,
    pub gap_m: f64,
    pub far_m: f64,
    /// The houses' UPRNs (subject, same owner, other owner).
    pub subject_uprn: u64,
    pub same_owner_uprn: u64,
    pub other_owner_uprn: u64,
    /// The company owning the subject and `same_owner`, and the one owning `other_owner`.
    pub owner_company: String,
    pub owner_name: String,
    pub other_company: String,
    /// The titles (subject, same owner, other owner).
    pub subject_title: String,
    pub same_owner_title: String,
    pub other_title: String,
    /// The OS id of the building on the subject (empty when none fits).
    pub subject_building: String,
    /// Each plot's area in m² (subject, same owner, other owner, corner left, gap, corner
    /// right, far).
    pub areas_m2: Vec<f64>,
}

/// A house with no plot: a candidate for the cluster, with its authority's name (upper case).
struct Candidate {
    record: crate::world::AddressRecord,
    district: String,
}

/// The cluster's plots: (INSPIRE id, rectangle [x0, y0, x1, y1]).
type ClusterPlot = (i64, [f64; 4]);

fn r2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// The building-attributes operator feed of the fixture world (docs/DATA.md).
pub const ATTRIBUTES_FILE: &str = "buildings/building_attributes.csv";
const ATTRIBUTES_HEADER: &str =
    "uprn,floors,basement,green_roof,construction_material,roof_shape,roof_material,solar_panels";
const MATERIALS: [&str; 4] = ["Brick", "Stone", "Timber frame", "Concrete"];
const ROOF_SHAPES: [&str; 3] = ["gabled", "hipped", "flat"];
const ROOF_MATERIALS: [&str; 3] = ["slate", "clay tiles", "concrete tiles"];

struct Plot {
    id: i64,
    uprn: u64,
    x: f64,
    y: f64,
    building: bool,
}

/// Collects one plot per top-level address (capped per authority) and writes the two files.
#[derive(Default)]
pub struct Land {
    plots: Vec<Plot>,
    per_lad: [usize; 2],
    cases: LandCases,
    /// Every address point (UPRN, x, y), for the cluster's clearance.
    points: Vec<(u64, f64, f64)>,
    candidates: Vec<Candidate>,
    cluster: Vec<ClusterPlot>,
    cluster_building: Option<Footprint>,
    /// The plotted addresses as a feed writes them: UPRN to (address, postcode, authority).
    addresses: std::collections::BTreeMap<u64, (String, String, String)>,
}

impl Land {
    /// One address of authority `lad` (0 or 1, with its GSS code): flats and units with a
    /// parent share their parent's plot, so only top-level addresses get one.
    pub fn address(
        &mut self,
        uprn: u64,
        parent: Option<u64>,
        x: f64,
        y: f64,
        lad: usize,
        code: &str,
    ) {
        if parent.is_some() || lad > 1 || self.per_lad[lad] >= PLOTS_PER_LAD[lad] {
            return;
        }
        let n = self.per_lad[lad];
        self.per_lad[lad] += 1;
        let id = FIRST_ID + self.plots.len() as i64;
        // Every fourth plot of the measured authority stands empty (no footprint).
        let building = lad == 0 && n % 4 != 3;
        if lad == 0 {
            self.cases.measured_lad = code.to_string();
            if building && self.cases.sample_uprn == 0 {
                self.cases.sample_uprn = uprn;
                self.cases.sample_land_id = id;
            }
            self.cases.parcels_without_footprint += usize::from(!building);
        } else {
            self.cases.unmeasured_lad = code.to_string();
        }
        self.cases.parcels_with_building += usize::from(building);
        self.plots.push(Plot {
            id,
            uprn,
            x,
            y,
            building,
        });
    }

    /// Takes one register record after [`Land::address`]: its point, and, for a house of the
    /// measured authority that got no plot, a cluster candidate.
    pub fn record(&mut self, r: &crate::world::AddressRecord, lad: usize, district: &str) {
        self.points.push((r.uprn, r.x, r.y));
        let plotted = self.plots.last().is_some_and(|p| p.uprn == r.uprn);
        if plotted {
            self.addresses.insert(
                r.uprn,
                (
                    crate::listings::listing_address(r),
                    r.postcode.clone(),
                    r.lad_code.to_string(),
                ),
            );
        }
        if lad == 0 && r.parent_uprn.is_none() && r.dwelling.is_some() && !plotted {
            self.candidates.push(Candidate {
                record: r.clone(),
                district: district.to_string(),
            });
        }
    }

    /// The cluster's layout around three houses (sorted west to east), or None when they do
    /// not fit or something else stands in the way.
    fn layout(
        &self,
        three: [&Candidate; 3],
        next_id: i64,
    ) -> Option<(Vec<ClusterPlot>, ClusterCases)> {
        let mut pts: Vec<&Candidate> = three.to_vec();
        pts.sort_by(|a, b| a.record.x.total_cmp(&b.record.x));
        let (a, b, c) = (&pts[0].record, &pts[1].record, &pts[2].record);
        if b.x - a.x < 1.0 || c.x - b.x < 1.0 || c.x - a.x > 24.0 {
            return None;
        }
        let ys = [a.y, b.y, c.y];
        let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if hi - lo > 10.0 {
            return None;
        }
        let (gap_m, far_m) = (0.3, 4.8);
        let x0 = r2(a.x - 4.0);
        let x1 = r2((a.x + b.x) / 2.0);
        let x2 = r2((b.x + c.x) / 2.0);
        let x3 = r2(c.x + 4.0);
        let y0 = r2(lo - 3.0);
        let y1 = r2(hi + 3.0);
        let y2 = r2(y1 + 8.0);
        let plots = [
            [x1, y0, x2, y1],
            [x0, y0, x1, y1],
            [x2, y0, x3, y1],
            [x0, y1, x1, y2],
            [x1, r2(y1 + gap_m), x2, y2],
            [x2, y1, x3, y2],
            [x1, r2(y0 - far_m - 6.0), x2, r2(y0 - far_m)],
        ];
        // Clear of every other address point by 6 m, and of every plot (16 m squares on their
        // addresses) by 6 m.
        let (ex0, ey0, ex1, ey1) = (x0 - 6.0, y0 - far_m - 12.0, x3 + 6.0, y2 + 6.0);
        let chosen = [a.uprn, b.uprn, c.uprn];
        let inside =
            |x: f64, y: f64, m: f64| x >= ex0 - m && x <= ex1 + m && y >= ey0 - m && y <= ey1 + m;
        if self
            .points
            .iter()
            .any(|(u, x, y)| !chosen.contains(u) && inside(*x, *y, 0.0))
            || self.plots.iter().any(|p| inside(p.x, p.y, PLOT_HALF))
        {
            return None;
        }
        let ids: Vec<i64> = (0..7).map(|i| next_id + i).collect();
        let cases = ClusterCases {
            subject: ids[0],
            same_owner: ids[1],
            other_owner: ids[2],
            corner_left: ids[3],
            gap: ids[4],
            corner_right: ids[5],
            far: ids[6],
            gap_m,
            far_m,
            subject_uprn: b.uprn,
            same_owner_uprn: a.uprn,
            other_owner_uprn: c.uprn,
            areas_m2: plots
                .iter()
                .map(|[x0, y0, x1, y1]| r2((x1 - x0) * (y1 - y0)))
                .collect(),
            ..ClusterCases::default()
        };
        Some((ids.into_iter().zip(plots).collect(), cases))
    }

    /// Plants the cluster (see [`ClusterCases`]) around the first house of the register whose
    /// two nearest candidate houses fit, skipping houses in `titled` (they already have a
    /// company title). Returns the three houses (subject, same owner, other owner) with their
    /// authority's name, or None when no house fits.
    pub fn plant_cluster(
        &mut self,
        titled: &std::collections::BTreeSet<u64>,
    ) -> Option<[(crate::world::AddressRecord, String); 3]> {
        let free: Vec<&Candidate> = self
            .candidates
            .iter()
            .filter(|c| !titled.contains(&c.record.uprn))
            .collect();
        // After the plots and the malformed member's id.
        let next_id = FIRST_ID + self.plots.len() as i64;
        let mut found = None;
        for anchor in &free {
            let mut near: Vec<(f64, &Candidate)> = free
                .iter()
                .filter(|c| c.record.uprn != anchor.record.uprn)
                .map(|c| {
                    let (dx, dy) = (c.record.x - anchor.record.x, c.record.y - anchor.record.y);
                    (dx * dx + dy * dy, *c)
                })
                .collect();
            near.sort_by(|a, b| {
                a.0.total_cmp(&b.0)
                    .then(a.1.record.uprn.cmp(&b.1.record.uprn))
            });
            if near.len() < 2 {
                continue;
            }
            if let Some(l) = self.layout([*anchor, near[0].1, near[1].1], next_id) {
                found = Some(l);
                break;
            }
        }
        let (plots, mut cases) = found?;
        let by_uprn = |u: u64| {
            self.candidates
                .iter()
                .find(|c| c.record.uprn == u)
                .map(|c| (c.record.clone(), c.district.clone()))
        };
        let houses = [
            by_uprn(cases.subject_uprn)?,
            by_uprn(cases.same_owner_uprn)?,
            by_uprn(cases.other_owner_uprn)?,
        ];
        // A building on the subject around its house, inside the plot.
        let (h, [x0, y0, x1, y1]) = (&houses[0].0, plots[0].1);
        let room = (h.x - x0).min(x1 - h.x).min(h.y - y0).min(y1 - h.y) - 0.1;
        let half = (room.min(2.0) * 100.0).floor() / 100.0;
        if half >= 0.5 {
            let id = format!("osgb{:016}", cases.subject);
            self.cluster_building = Some((
                id.clone(),
                15_014,
                rect(
                    r2(h.x - half),
                    r2(h.y - half),
                    r2(h.x + half),
                    r2(h.y + half),
                ),
            ));
            cases.subject_building = id;
        }
        self.cluster = plots;
        self.cases.cluster = cases;
        Some(houses)
    }

    /// Records the cluster's owners and titles (subject, same owner, other owner).
    pub fn cluster_titles(
        &mut self,
        owner: (&str, &str),
        other_company: &str,
        titles: [String; 3],
    ) {
        let c = &mut self.cases.cluster;
        c.owner_company = owner.0.to_string();
        c.owner_name = owner.1.to_string();
        c.other_company = other_company.to_string();
        let [s, same, other] = titles;
        c.subject_title = s;
        c.same_owner_title = same;
        c.other_title = other;
    }

    /// The large plots: squares on a row running west from the measured authority's built
    /// plots, each 30 m clear of every address point, plot and the cluster; (INSPIRE id, plot).
    fn large_plots(&self, first_id: i64) -> Vec<ClusterPlot> {
        let built = self.plots.iter().filter(|p| p.building);
        let (x0, y0, y1) = built.fold(
            (f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY),
            |(x0, y0, y1), p| (x0.min(p.x), y0.min(p.y), y1.max(p.y)),
        );
        if !x0.is_finite() {
            return Vec::new();
        }
        let clear = |x: f64, y: f64| {
            let d = LARGE_HALF + 30.0;
            let far = |px: f64, py: f64| (px - x).abs() > d || (py - y).abs() > d;
            self.points.iter().all(|(_, px, py)| far(*px, *py))
                && self.plots.iter().all(|p| far(p.x, p.y))
                && self
                    .cluster
                    .iter()
                    .all(|(_, [a, b, c, e])| far((a + c) / 2.0, (b + e) / 2.0))
        };
        let y = r2((y0 + y1) / 2.0);
        let mut out = Vec::new();
        let mut x = r2(x0 - 60.0);
        for _ in 0..200 {
            if out.len() == LARGE_PLOTS {
                break;
            }
            if clear(x, y)
                && out
                    .iter()
                    .all(|(_, [a, ..]): &ClusterPlot| (a + LARGE_HALF - x).abs() > 60.0)
            {
                let id = first_id + out.len() as i64;
                out.push((
                    id,
                    [
                        x - LARGE_HALF,
                        y - LARGE_HALF,
                        x + LARGE_HALF,
                        y + LARGE_HALF,
                    ],
                ));
            }
            x = r2(x - 40.0);
        }
        out
    }

    /// Writes the GML (the plots, then one member with an unclosed ring) and the buildings;
    /// returns their stats, the malformed member's line and the cases.
    pub fn finish(mut self, out_dir: &std::path::Path) -> std::io::Result<LandFiles> {
        let large = self.large_plots(FIRST_ID + (self.plots.len() + self.cluster.len()) as i64);
        let mut gml = inspire_header(self.plots.len() + self.cluster.len() + large.len() + 1);
        let mut footprints = Vec::new();
        for p in &self.plots {
            let h = PLOT_HALF;
            inspire_member(&mut gml, p.id, &[rect(p.x - h, p.y - h, p.x + h, p.y + h)]);
            if p.building {
                let b = BUILDING_HALF;
                footprints.push((
                    format!("osgb{:016}", p.id),
                    15_014,
                    rect(p.x - b, p.y - b, p.x + b, p.y + b),
                ));
            }
        }
        for (id, [x0, y0, x1, y1]) in &self.cluster {
            inspire_member(&mut gml, *id, &[rect(*x0, *y0, *x1, *y1)]);
        }
        if let Some(b) = self.cluster_building.clone() {
            footprints.push(b);
        }
        for (id, [x0, y0, x1, y1]) in &large {
            inspire_member(&mut gml, *id, &[rect(*x0, *y0, *x1, *y1)]);
            let (cx, cy) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
            let h = SHED_HALF;
            footprints.push((
                format!("osgb{id:016}"),
                15_014,
                rect(cx - h, cy - h, cx + h, cy + h),
            ));
        }
        self.cases.large_plot_area_m2 = (2.0 * LARGE_HALF).powi(2);
        self.cases.large_plots = large.iter().map(|(id, _)| *id).collect();
        let bad_line = gml.lines().count() as u64 + 1;
        let mut open = rect(0.0, 0.0, 10.0, 10.0);
        open.pop();
        inspire_member(&mut gml, FIRST_ID - 1, &[open]);
        gml.push_str(INSPIRE_FOOTER);
        let gml_bytes = crate::out::write_whole(out_dir, INSPIRE_FILE, &gml)?;
        let geojson = os_buildings_geojson(&footprints);
        let b_bytes = crate::out::write_whole(out_dir, BUILDINGS_FILE, &geojson)?;
        let sample_id = self
            .plots
            .iter()
            .find(|p| p.building && p.uprn == self.cases.sample_uprn)
            .map(|p| format!("osgb{:016}", p.id));
        let sample = footprints
            .iter()
            .position(|f| Some(&f.0) == sample_id.as_ref())
            .unwrap_or(usize::MAX);
        let (lidar_stat, lidar_cases) = crate::lidar::write(out_dir, &footprints, sample)?;
        self.cases.lidar = lidar_cases;
        self.cases.lidar.boundary_uprn = self.cases.sample_uprn;
        let uncovered = self.cases.lidar.uncovered_building.clone();
        self.cases.lidar.uncovered_uprn = self
            .plots
            .iter()
            .find(|p| p.building && format!("osgb{:016}", p.id) == uncovered)
            .map_or(0, |p| p.uprn);
        // Attributes for every other building (the sample's first), then one malformed row.
        let mut attrs = format!("{ATTRIBUTES_HEADER}\n");
        let mut rows = 0usize;
        for (i, p) in self.plots.iter().filter(|p| p.building).enumerate() {
            if i % 2 != 0 {
                continue;
            }
            let floors = 1 + (i % 3) as i32;
            let yn = |b: bool| if b { "Y" } else { "N" };
            // Solar panels: not recorded on every fourth row.
            let solar = if i % 8 == 4 { "" } else { yn(i % 3 == 0) };
            attrs.push_str(&format!(
                "{},{floors},{},{},{},{},{},{solar}\n",
                p.uprn,
                yn(i % 5 == 0),
                yn(i % 7 == 0),
                MATERIALS[i % 4],
                ROOF_SHAPES[i % 3],
                ROOF_MATERIALS[i % 3],
            ));
            if p.uprn == self.cases.sample_uprn {
                self.cases.sample_floors = floors;
                self.cases.sample_roof_shape = ROOF_SHAPES[i % 3].to_string();
            }
            rows += 1;
        }
        let attrs_bad_line = rows as u64 + 2;
        attrs.push_str(&format!("{},many,N,N,,,,\n", self.cases.sample_uprn));
        rows += 1;
        let a_bytes = crate::out::write_whole(out_dir, ATTRIBUTES_FILE, &attrs)?;
        self.cases.attributes_file = ATTRIBUTES_FILE.into();
        self.cases.attributes_rows = rows;
        self.cases.inspire_file = INSPIRE_FILE.into();
        self.cases.buildings_file = BUILDINGS_FILE.into();
        // The OpenStreetMap extract and the HMO feed over the buildings the attributes leave out.
        let odd: Vec<crate::osm::Building> = self
            .plots
            .iter()
            .filter(|p| p.building)
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .filter_map(|(_, p)| {
                let (address, postcode, lad_code) = self.addresses.get(&p.uprn)?.clone();
                Some(crate::osm::Building {
                    uprn: p.uprn,
                    x: p.x,
                    y: p.y,
                    half: BUILDING_HALF,
                    address,
                    postcode,
                    lad_code,
                })
            })
            .collect();
        let odd: Vec<&crate::osm::Building> = odd.iter().collect();
        let (osm_stat, osm_cases) = crate::osm::write_osm(out_dir, &odd)?;
        let (hmo_stat, hmo_cases) = crate::osm::write_hmo(out_dir, &odd)?;
        self.cases.osm = osm_cases;
        self.cases.hmo = hmo_cases;
        let with_building = usize::from(self.cluster_building.is_some());
        self.cases.parcels = self.plots.len() + self.cluster.len() + large.len();
        self.cases.parcels_with_building += with_building + large.len();
        self.cases.parcels_without_footprint += self.cluster.len() - with_building;
        Ok(LandFiles {
            gml: crate::out::FileStat {
                rel: INSPIRE_FILE.into(),
                rows: (self.plots.len() + self.cluster.len() + large.len()) as u64 + 1,
                bytes: gml_bytes,
            },
            buildings: crate::out::FileStat {
                rel: BUILDINGS_FILE.into(),
                rows: footprints.len() as u64,
                bytes: b_bytes,
            },
            gml_bad_line: bad_line,
            attributes: crate::out::FileStat {
                rel: ATTRIBUTES_FILE.into(),
                rows: rows as u64,
                bytes: a_bytes,
            },
            attributes_bad_line: attrs_bad_line,
            lidar: lidar_stat,
            osm: osm_stat,
            hmo: hmo_stat,
            cases: self.cases,
        })
    }
}
