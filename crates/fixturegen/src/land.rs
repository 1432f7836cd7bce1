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
        let coords: Vec<String> = ring.iter().map(|(x, y)| format!("[{x:.2},{y:.2}]")).collect();
        let _ = write!(
            s,
            "{}{{\"type\":\"Feature\",\"properties\":{{\"id\":\"{id}\",\"feature_code\":{code}}},\"geometry\":{{\"type\":\"Polygon\",\"coordinates\":[[{}]]}}}}\n",
            if i == 0 { "" } else { "," },
            coords.join(",")
        );
    }
    s.push_str("]}\n");
    s
}
