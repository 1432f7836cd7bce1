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

    /// Writes the GML (the plots, then one member with an unclosed ring) and the buildings;
    /// returns their stats, the malformed member's line and the cases.
    pub fn finish(
        mut self,
        out_dir: &std::path::Path,
    ) -> std::io::Result<(
        crate::out::FileStat,
        crate::out::FileStat,
        u64,
        crate::out::FileStat,
        u64,
        LandCases,
    )> {
        let mut gml = inspire_header(self.plots.len() + 1);
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
        let bad_line = gml.lines().count() as u64 + 1;
        let mut open = rect(0.0, 0.0, 10.0, 10.0);
        open.pop();
        inspire_member(&mut gml, FIRST_ID - 1, &[open]);
        gml.push_str(INSPIRE_FOOTER);
        let gml_bytes = crate::out::write_whole(out_dir, INSPIRE_FILE, &gml)?;
        let geojson = os_buildings_geojson(&footprints);
        let b_bytes = crate::out::write_whole(out_dir, BUILDINGS_FILE, &geojson)?;
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
        self.cases.parcels = self.plots.len();
        Ok((
            crate::out::FileStat {
                rel: INSPIRE_FILE.into(),
                rows: self.plots.len() as u64 + 1,
                bytes: gml_bytes,
            },
            crate::out::FileStat {
                rel: BUILDINGS_FILE.into(),
                rows: footprints.len() as u64,
                bytes: b_bytes,
            },
            bad_line,
            crate::out::FileStat {
                rel: ATTRIBUTES_FILE.into(),
                rows: rows as u64,
                bytes: a_bytes,
            },
            attrs_bad_line,
            self.cases,
        ))
    }
}
