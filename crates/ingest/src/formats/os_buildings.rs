//! OS Open Map Local building footprints as GeoJSON: a FeatureCollection of (Multi)Polygons with
//! the `building` layer's properties `id` (the OS feature id) and `feature_code` (15014 Building,
//! 15016 Glasshouse, 15018-15028 the "important building" functions). Shapefile-derived names
//! (`ID`, `FEATCODE`) are read too. Coordinates are EPSG:27700 when the collection's `crs` says
//! so or the first position is outside ±180/±90, else WGS84 (as `ogr2ogr -t_srs EPSG:4326`
//! writes); footprints are returned in BNG metres.
//!
//! A feature with no id, no (Multi)Polygon geometry, or a feature code that is not a building
//! code (outside 15014-15028) is a rejection; lines are 1-based feature indices, as for every
//! GeoJSON reader here.

use super::Parsed;
use super::boundaries::{feature_polygons, stream, string_property};
use geo::MultiPolygon;
use serde_json::Value;
use std::io;
use std::path::Path;

/// One building footprint.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildingRow {
    pub building_id: String,
    pub feature_code: Option<i32>,
    /// British National Grid metres.
    pub geometry: MultiPolygon<f64>,
}

/// The feature codes of OS Open Map Local's building layer.
pub const BUILDING_CODES: std::ops::RangeInclusive<i32> = 15_014..=15_028;

/// Opens a GeoJSON FeatureCollection of building footprints.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<BuildingRow>> + Send> {
    stream(path, to_row)
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
    let building_id = find(&["id", "fid", "toid"])
        .or_else(|| match feature.get("id") {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        })
        .ok_or("feature has no id")?;
    let feature_code = match find(&["feature_code", "featcode", "featurecode"]) {
        None => None,
        Some(s) => {
            let code: i32 = s
                .parse::<f64>()
                .ok()
                .filter(|v| v.fract() == 0.0)
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
    let geometry = feature_polygons(&mut feature, crs_is_wgs84, &building_id)?;
    Ok(BuildingRow {
        building_id,
        feature_code,
        geometry,
    })
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
}
