//! OS Open Map Local building footprints, from the GeoPackage OS publishes (`opmplc_gb.gpkg`,
//! layer `building`) or from GeoJSON. Either way a footprint is its OS feature id (`id`; `fid`
//! and `toid` are read too), its `feature_code` (15014 Building, 15016 Glasshouse, 15018-15028
//! the "important building" functions) and, where the file has one, its height in metres (a
//! column or property `height_m`, `height`, `relhmax` or `height_relativemax_m`: OS Open Map
//! Local itself has none). Footprints are returned in BNG metres.
//!
//! **GeoJSON**: a FeatureCollection of (Multi)Polygons; shapefile-derived names (`ID`,
//! `FEATCODE`) are read too. Coordinates are EPSG:27700 when the collection's `crs` says so or
//! the first position is outside ±180/±90, else WGS84 (as `ogr2ogr -t_srs EPSG:4326` writes).
//! Lines are 1-based feature indices, as for every GeoJSON reader here.
//!
//! **GeoPackage** (a file starting with the SQLite header): the features layer `building`
//! (`Building` in older releases) found in `gpkg_contents`, its geometry column and spatial
//! reference in `gpkg_geometry_columns` and `gpkg_spatial_ref_sys` (EPSG:27700, or EPSG:4326
//! converted), read a page at a time in primary key order through `terrace_store::gpkg`. Each
//! geometry is a GeoPackage binary blob: the magic `GP`, version 0, a flags byte (bit 0 the byte
//! order of the header, bits 1-3 the envelope indicator: 0 none, 1 XY = 32 bytes, 2 XYZ and 3 XYM
//! = 48, 4 XYZM = 64, 5-7 invalid; bit 4 empty; bit 5 an extended, non-standard geometry), the
//! `srs_id` and the envelope, then standard WKB (Polygon or MultiPolygon, any byte order, Z and
//! M dropped). The line of a row is its primary key (`fid`).
//!
//! A feature with no id, no geometry, a geometry that is not a (Multi)Polygon or whose ring is
//! not closed or has fewer than four positions, a GeoPackage header that is malformed or names
//! another `srs_id` than its layer, a feature code that is not a building code (outside
//! 15014-15028) or a height that is not a number from 0 to 1,000 m is a rejection naming the
//! feature; a GeoPackage with no `building` layer, or in another reference system, is an error
//! of the file.

use super::boundaries::{feature_polygons, stream, string_property};
use super::{Parsed, Rejection};
use geo::MultiPolygon;
use serde_json::Value;
use std::io;
use std::path::Path;
use terrace_store::gpkg::GeoPackage;

/// One building footprint.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildingRow {
    pub building_id: String,
    pub feature_code: Option<i32>,
    /// Metres, where the file gives one.
    pub height_m: Option<f64>,
    /// British National Grid metres.
    pub geometry: MultiPolygon<f64>,
}

/// The feature codes of OS Open Map Local's building layer.
pub const BUILDING_CODES: std::ops::RangeInclusive<i32> = 15_014..=15_028;

/// The names of the id, feature code and height columns or properties, in order of preference.
const ID: &[&str] = &["id", "toid", "fid"];
const FEATURE_CODE: &[&str] = &["feature_code", "featcode", "featurecode"];
const HEIGHT: &[&str] = &["height_m", "height", "relhmax", "height_relativemax_m"];

/// Opens a building footprint file: a GeoPackage (by its SQLite header) or GeoJSON.
pub fn read(path: &Path) -> io::Result<Box<dyn Iterator<Item = Parsed<BuildingRow>> + Send>> {
    if is_sqlite(path)? {
        Ok(Box::new(read_gpkg(path)?))
    } else {
        Ok(Box::new(stream(path, to_row)?))
    }
}

/// Whether the file starts with the SQLite header (a GeoPackage is an SQLite file).
pub fn is_sqlite(path: &Path) -> io::Result<bool> {
    use std::io::Read;
    let mut head = [0u8; 16];
    let mut f = std::fs::File::open(path)?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n == head.len() && &head == b"SQLite format 3\0")
}

/// The checks shared by both inputs: the feature code, the height, then the row.
fn building_row(
    building_id: String,
    feature_code: Option<String>,
    height: Option<String>,
    geometry: MultiPolygon<f64>,
) -> Result<BuildingRow, String> {
    let feature_code = match feature_code {
        None => None,
        Some(s) => {
            let code: i32 = s
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.fract() == 0.0 && v.abs() < 1e9)
                .map(|v| v as i32)
                .ok_or_else(|| format!("{building_id}: feature_code {s:?} is not a number"))?;
            if !BUILDING_CODES.contains(&code) {
                return Err(format!(
                    "{building_id}: feature_code {code} is not a building code (15014-15028)"
                ));
            }
            Some(code)
        }
    };
    let height_m = match height.as_deref().map(str::trim).filter(|h| !h.is_empty()) {
        None => None,
        Some(h) => Some(
            h.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && (0.0..=1_000.0).contains(v))
                .ok_or_else(|| {
                    format!("{building_id}: height {h:?} is not a number of metres from 0 to 1000")
                })?,
        ),
    };
    Ok(BuildingRow {
        building_id,
        feature_code,
        height_m,
        geometry,
    })
}

/// Reads the `building` layer of an OS Open Map Local GeoPackage.
fn read_gpkg(path: &Path) -> io::Result<impl Iterator<Item = Parsed<BuildingRow>> + Send + use<>> {
    let file = path.display().to_string();
    let mut gpkg = GeoPackage::open(path)?;
    let layer = gpkg.layer("building")?;
    let wgs84 = match (
        layer.srs_organization.to_ascii_uppercase().as_str(),
        layer.srs_code,
    ) {
        ("EPSG", 27_700) => false,
        ("EPSG", 4_326) => true,
        (org, code) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{file}: layer {:?} is in {org}:{code}; OS Open Map Local buildings are read in EPSG:27700 (or EPSG:4326)",
                    layer.table
                ),
            ));
        }
    };
    let find = |names: &[&str]| {
        names.iter().find_map(|n| {
            layer
                .columns
                .iter()
                .find(|c| {
                    c.eq_ignore_ascii_case(n) && !c.eq_ignore_ascii_case(&layer.geometry_column)
                })
                .cloned()
        })
    };
    // The OS id is a text column; the integer primary key stands in only when there is none.
    let id_column = find(&ID[..2]).or_else(|| find(&ID[2..]));
    let columns: Vec<Option<String>> = vec![id_column, find(FEATURE_CODE), find(HEIGHT)];
    let wanted: Vec<String> = columns.iter().flatten().cloned().collect();
    let slot = |i: usize| -> Option<usize> {
        columns[i]
            .as_ref()
            .and_then(|c| wanted.iter().position(|w| w == c))
    };
    let (id_at, code_at, height_at) = (slot(0), slot(1), slot(2));
    let srs_id = layer.srs_id;
    let rows = gpkg.features(&layer, &wanted);
    Ok(rows.map(move |item| {
        let reject = |line: u64, reason: String| Rejection {
            file: file.clone(),
            line,
            reason,
        };
        let f = item.map_err(|e| reject(0, e))?;
        let line = f.fid.max(0) as u64;
        let value = |at: Option<usize>| {
            at.and_then(|i| f.values.get(i).cloned().flatten())
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let building_id = value(id_at)
            .or_else(|| id_at.is_none().then(|| f.fid.to_string()))
            .ok_or_else(|| reject(line, format!("fid {}: feature has no id", f.fid)))?;
        let geometry = match &f.geometry {
            None => Err(format!("{building_id}: feature has no geometry")),
            Some(blob) => {
                gpkg_geometry(blob, srs_id, wgs84).map_err(|e| format!("{building_id}: {e}"))
            }
        }
        .map_err(|e| reject(line, e))?;
        building_row(building_id, value(code_at), value(height_at), geometry)
            .map(|row| (line, row))
            .map_err(|e| reject(line, e))
    }))
}

/// Decodes a GeoPackage binary geometry (header, envelope, WKB) into a BNG multipolygon.
pub fn gpkg_geometry(
    blob: &[u8],
    layer_srs_id: i64,
    wgs84: bool,
) -> Result<MultiPolygon<f64>, String> {
    let head = blob
        .get(..8)
        .ok_or("geometry blob shorter than its 8-byte header")?;
    if &head[..2] != b"GP" {
        return Err("geometry is not a GeoPackage binary (no GP magic)".into());
    }
    if head[2] != 0 {
        return Err(format!(
            "GeoPackage binary version {} (only 0, version 1, is defined)",
            head[2]
        ));
    }
    let flags = head[3];
    if flags & 0b0010_0000 != 0 {
        return Err("an extended GeoPackage geometry (not standard WKB)".into());
    }
    if flags & 0b0001_0000 != 0 {
        return Err("empty geometry".into());
    }
    let little = flags & 1 == 1;
    let envelope = match (flags >> 1) & 0b111 {
        0 => 0,
        1 => 32,
        2 | 3 => 48,
        4 => 64,
        other => return Err(format!("invalid envelope indicator {other}")),
    };
    let srs = [head[4], head[5], head[6], head[7]];
    let srs_id = if little {
        i32::from_le_bytes(srs)
    } else {
        i32::from_be_bytes(srs)
    };
    if i64::from(srs_id) != layer_srs_id {
        return Err(format!(
            "geometry srs_id {srs_id} is not its layer's ({layer_srs_id})"
        ));
    }
    let wkb = blob
        .get(8 + envelope..)
        .filter(|w| !w.is_empty())
        .ok_or("geometry blob ends inside its envelope")?;
    let mut mp =
        terrace_geo::multipolygon_from_wkb_strict(wkb).map_err(|e| format!("bad WKB: {e}"))?;
    if mp.0.is_empty() {
        return Err("MultiPolygon has no polygons".into());
    }
    if wgs84 {
        let mut out = Vec::with_capacity(mp.0.len());
        for polygon in mp.0 {
            let convert = |ring: &geo::LineString<f64>| -> Result<geo::LineString<f64>, String> {
                ring.0
                    .iter()
                    .map(|c| {
                        terrace_geo::bng_from_wgs84(c.x, c.y)
                            .map(|(x, y)| geo::Coord { x, y })
                            .ok_or_else(|| {
                                format!("position ({}, {}) is outside Great Britain", c.x, c.y)
                            })
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(geo::LineString::new)
            };
            let exterior = convert(polygon.exterior())?;
            let interiors = polygon
                .interiors()
                .iter()
                .map(convert)
                .collect::<Result<Vec<_>, _>>()?;
            out.push(geo::Polygon::new(exterior, interiors));
        }
        mp = MultiPolygon::new(out);
    }
    Ok(mp)
}

fn to_row(feature: Value, crs_is_wgs84: Option<bool>) -> Result<BuildingRow, String> {
    let Value::Object(mut feature) = feature else {
        return Err("feature is not an object".into());
    };
    let props = match feature.get("properties") {
        Some(Value::Object(p)) => p,
        _ => return Err("feature has no properties".into()),
    };
    let find = |names: &[&str]| {
        props
            .keys()
            .find(|k| names.iter().any(|n| k.eq_ignore_ascii_case(n)))
            .and_then(|k| string_property(props, k))
    };
    let building_id = find(ID)
        .or_else(|| match feature.get("id") {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        })
        .ok_or("feature has no id")?;
    let feature_code = find(FEATURE_CODE);
    let height = find(HEIGHT);
    let geometry = feature_polygons(&mut feature, crs_is_wgs84, &building_id)?;
    building_row(building_id, feature_code, height, geometry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};
    use geo::Area;

    #[test]
    fn reads_bng_footprints_and_rejects_what_is_not_a_building() {
        let text = r#"{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::27700"}},"features":[
{"type":"Feature","properties":{"id":"A1","feature_code":15014},"geometry":{"type":"Polygon","coordinates":[[[0,0],[10,0],[10,10],[0,10],[0,0]]]}},
{"type":"Feature","properties":{"id":"A2","feature_code":15099},"geometry":{"type":"Polygon","coordinates":[[[0,0],[10,0],[10,10],[0,10],[0,0]]]}},
{"type":"Feature","properties":{"feature_code":15014},"geometry":{"type":"Polygon","coordinates":[[[0,0],[10,0],[10,10],[0,10],[0,0]]]}},
{"type":"Feature","properties":{"ID":"A4","FEATCODE":"15026"},"geometry":{"type":"Point","coordinates":[1,2]}},
{"type":"Feature","properties":{"ID":"A5","FEATCODE":"15026"},"geometry":{"type":"MultiPolygon","coordinates":[[[[0,0],[4,0],[4,5],[0,5],[0,0]]]]}}
]}"#;
        let f = temp_file(text.as_bytes());
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 2, "{bad:?}");
        assert_eq!(ok[0].1.building_id, "A1");
        assert_eq!(ok[0].1.feature_code, Some(15_014));
        assert!((ok[0].1.geometry.unsigned_area() - 100.0).abs() < 1e-9);
        assert_eq!(ok[1].0, 5);
        assert_eq!(ok[1].1.feature_code, Some(15_026));
        let lines: Vec<u64> = bad.iter().map(|r| r.line).collect();
        assert_eq!(lines, vec![2, 3, 4]);
        assert!(bad[0].reason.contains("not a building code"));
        assert!(bad[1].reason.contains("no id"));
        assert!(bad[2].reason.contains("Point"));
    }

    /// A GeoPackage binary header (magic, version 0, flags, srs_id) and envelope, then `wkb`.
    fn blob(flags: u8, srs_id: i32, envelope: usize, wkb: &[u8]) -> Vec<u8> {
        let mut b = b"GP".to_vec();
        b.push(0);
        b.push(flags);
        if flags & 1 == 1 {
            b.extend(srs_id.to_le_bytes());
        } else {
            b.extend(srs_id.to_be_bytes());
        }
        b.extend(std::iter::repeat_n(0u8, envelope));
        b.extend_from_slice(wkb);
        b
    }

    fn square_wkb(x: f64, y: f64, side: f64) -> Vec<u8> {
        let ring = [
            (x, y),
            (x + side, y),
            (x + side, y + side),
            (x, y + side),
            (x, y),
        ];
        let mut b = vec![0u8]; // big-endian WKB
        b.extend(3u32.to_be_bytes());
        b.extend(1u32.to_be_bytes());
        b.extend((ring.len() as u32).to_be_bytes());
        for (x, y) in ring {
            b.extend(x.to_be_bytes());
            b.extend(y.to_be_bytes());
        }
        b
    }

    #[test]
    fn decodes_geopackage_headers_of_every_envelope_size_and_byte_order() {
        let wkb = square_wkb(260_000.0, 80_000.0, 10.0);
        // (envelope indicator, envelope bytes)
        for (e, bytes) in [(0u8, 0usize), (1, 32), (2, 48), (3, 48), (4, 64)] {
            for order in [0u8, 1] {
                let b = blob((e << 1) | order, 27_700, bytes, &wkb);
                let mp = gpkg_geometry(&b, 27_700, false)
                    .unwrap_or_else(|err| panic!("{e} {order}: {err}"));
                assert!((mp.unsigned_area() - 100.0).abs() < 1e-9);
            }
        }
        let bad = |b: Vec<u8>, words: &str| {
            let err = gpkg_geometry(&b, 27_700, false).unwrap_err();
            assert!(err.contains(words), "{err} should say {words}");
        };
        bad(
            blob((5 << 1) | 1, 27_700, 0, &wkb),
            "invalid envelope indicator 5",
        );
        bad(blob(0b0010_0001, 27_700, 0, &wkb), "extended");
        bad(blob(0b0001_0001, 27_700, 0, &wkb), "empty geometry");
        bad(blob(1, 27_700, 0, &[]), "ends inside its envelope");
        bad(blob(3, 27_700, 16, &[]), "ends inside its envelope");
        bad(blob(3, 27_700, 32, &wkb[..20]), "bad WKB");
        bad(blob(1, 4_326, 0, &wkb), "srs_id 4326");
        bad(b"GP".to_vec(), "shorter than its 8-byte header");
        let mut v = blob(1, 27_700, 0, &wkb);
        v[2] = 1;
        bad(v, "version 1");
        // A WGS84 layer's positions become BNG metres.
        let wgs = blob(1, 4_326, 0, &square_wkb(-3.53, 50.72, 0.001));
        let mp = gpkg_geometry(&wgs, 4_326, true).unwrap();
        let c = mp.0[0].exterior().0[0];
        assert!(
            (290_000.0..295_000.0).contains(&c.x) && (90_000.0..95_000.0).contains(&c.y),
            "{c:?}"
        );
    }

    #[test]
    fn a_file_that_is_not_sqlite_is_read_as_geojson() {
        let f = temp_file(b"{\"type\":\"FeatureCollection\",\"features\":[]}");
        assert!(!is_sqlite(f.path()).unwrap());
        assert_eq!(read(f.path()).unwrap().count(), 0);
        let f = temp_file(b"SQLite format 3\0");
        assert!(is_sqlite(f.path()).unwrap());
        assert!(
            read(f.path()).is_err(),
            "an SQLite file with no GeoPackage tables"
        );
    }
}
