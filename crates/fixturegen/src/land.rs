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
}

struct Plot {
    id: i64,
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
        self.plots.push(Plot { id, x, y, building });
    }

    /// Writes the GML (the plots, then one member with an unclosed ring) and the buildings;
    /// returns their stats, the malformed member's line and the cases.
    pub fn finish(
        mut self,
        out_dir: &std::path::Path,
    ) -> std::io::Result<(crate::out::FileStat, crate::out::FileStat, u64, LandCases)> {
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
            self.cases,
        ))
    }
}
