//! Environment Agency flood layers and the Coal Authority's development high risk areas, as
//! GeoJSON FeatureCollections of polygons (lines for flood defences), one layer per file.
//!
//! The operator names the layer ([`Layer`]); the features are streamed one at a time.
//! Coordinates are BNG metres when the collection's `crs` names EPSG:27700 (as the publishers'
//! downloads do) or when the first position lies outside ±180/±90, WGS84 otherwise.
//!
//! Per layer:
//! - flood zones: the zone (`FZ2`, `FZ3`) from the first property that reads as one (`flood_zone`,
//!   `zone`, `type`, `layer`, or any other value such as `Flood Zone 3`); required;
//! - risk of flooding from rivers and sea, and from surface water: the band (`high`, `medium`,
//!   `low`, `very_low`) from `prob_4band`, `risk_band`, `band`, `risk`, `risk_level`,
//!   `flood_risk` or any value that reads as one; required;
//! - historic flood map: `name`, the flood's `start_date`, its source (`flood_src`);
//! - spatial flood defences (lines): `asset_type`, `name` or `asset_name`;
//! - coal development high risk areas: nothing beyond the shape.
//!
//! The reference is the first of `id`, `fid`, `objectid`, `object-id`, `ogc-fid` or the feature's
//! own `id`, else a stable hash of the feature's properties and geometry.
//! Rejections: a feature without geometry or with one that cannot be read (points are not
//! layers), a flood zone or risk band that cannot be read; malformed JSON ends the file.

use super::boundaries::{FeatureFn, first_position, stream};
use super::spatial::{SpatialRow, flood_zone, other_props, prop, risk_band};
use super::{Parsed, value};
use serde_json::{Map, Value};
use std::io;
use std::path::Path;
use terrace_geo::Shape;

/// Which layer a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    FloodZones,
    HistoricFlood,
    FloodDefences,
    RiversSeaRisk,
    SurfaceWaterRisk,
    CoalHighRisk,
}

impl Layer {
    /// The dataset name stored with each feature.
    pub fn dataset(self) -> &'static str {
        match self {
            Layer::FloodZones => "ea-flood-zones",
            Layer::HistoricFlood => "ea-historic-flood-map",
            Layer::FloodDefences => "ea-spatial-flood-defences",
            Layer::RiversSeaRisk => "ea-risk-of-flooding-rivers-sea",
            Layer::SurfaceWaterRisk => "ea-risk-of-flooding-surface-water",
            Layer::CoalHighRisk => "coal-development-high-risk-area",
        }
    }
}

const ID: &[&str] = &["id", "fid", "objectid", "object-id", "ogc-fid"];
const ZONE: &[&str] = &["flood-zone", "zone", "type", "layer", "flood-zone-type"];
const BAND: &[&str] = &[
    "prob-4band",
    "risk-band",
    "band",
    "risk",
    "risk-level",
    "flood-risk",
];
const DATE: &[&str] = &["start-date", "entry-date", "date", "version-date"];

/// Opens a layer file.
pub fn read(
    path: &Path,
    layer: Layer,
) -> io::Result<impl Iterator<Item = Parsed<SpatialRow>> + Send + use<>> {
    let map: FeatureFn<SpatialRow> = match layer {
        Layer::FloodZones => |f, c| feature(f, c, Layer::FloodZones),
        Layer::HistoricFlood => |f, c| feature(f, c, Layer::HistoricFlood),
        Layer::FloodDefences => |f, c| feature(f, c, Layer::FloodDefences),
        Layer::RiversSeaRisk => |f, c| feature(f, c, Layer::RiversSeaRisk),
        Layer::SurfaceWaterRisk => |f, c| feature(f, c, Layer::SurfaceWaterRisk),
        Layer::CoalHighRisk => |f, c| feature(f, c, Layer::CoalHighRisk),
    };
    stream(path, map)
}

/// The first value among `props` (the named ones first, then any with letters in it) that `read`
/// accepts.
fn read_any(
    props: &Map<String, Value>,
    names: &[&str],
    read: fn(&str) -> Option<&'static str>,
) -> Option<&'static str> {
    names
        .iter()
        .find_map(|n| prop(props, &[n]).and_then(|v| read(&v)))
        .or_else(|| {
            // Any other property only when it says what it is ("Flood Zone 3", "High"), never
            // a bare number that may be a version or a count.
            props.values().find_map(|v| match v {
                Value::String(s) if s.chars().any(char::is_alphabetic) => read(s),
                Value::String(_) => None,
                Value::Null
                | Value::Bool(_)
                | Value::Number(_)
                | Value::Array(_)
                | Value::Object(_) => None,
            })
        })
}

fn feature(feature: Value, crs_is_wgs84: Option<bool>, layer: Layer) -> Result<SpatialRow, String> {
    let Value::Object(mut feature) = feature else {
        return Err("feature is not an object".into());
    };
    let props: Map<String, Value> = match feature.remove("properties") {
        Some(Value::Object(p)) => p,
        _ => Map::new(),
    };
    let own_id = match feature.get("id") {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let geometry = match feature.remove("geometry") {
        Some(g @ Value::Object(_)) => g,
        _ => return Err("feature has no geometry".into()),
    };
    let hash_input = format!("{}{}", Value::Object(props.clone()), geometry);
    let g = serde_json::from_value::<geojson::Geometry>(geometry)
        .map_err(|e| format!("bad geometry: {e}"))?;
    let wgs84 = crs_is_wgs84.unwrap_or_else(|| {
        first_position(&g).is_none_or(|(x, y)| x.abs() <= 180.0 && y.abs() <= 90.0)
    });
    let shape =
        terrace_geo::geojson_shape_to_bng(&g, wgs84).map_err(|e| format!("geometry: {e}"))?;
    if let Shape::Point(..) = shape {
        return Err("a point is not an area; this layer holds polygons".into());
    }
    let reference = prop(&props, ID)
        .or(own_id)
        .unwrap_or_else(|| format!("h{}", value::stable_hash(&[&hash_input])));
    let (category, name) = match layer {
        Layer::FloodZones => (
            Some(
                read_any(&props, ZONE, flood_zone)
                    .ok_or("no flood zone (2 or 3) among the properties")?
                    .to_string(),
            ),
            prop(&props, &["name"]),
        ),
        Layer::RiversSeaRisk | Layer::SurfaceWaterRisk => (
            Some(
                read_any(&props, BAND, risk_band)
                    .ok_or("no risk band (high, medium, low, very low) among the properties")?
                    .to_string(),
            ),
            prop(&props, &["name"]),
        ),
        Layer::HistoricFlood => (
            prop(&props, &["flood-src", "flood-source"]),
            prop(&props, &["name", "event-name"]),
        ),
        Layer::FloodDefences => (
            prop(&props, &["asset-type", "type"]),
            prop(&props, &["name", "asset-name"]),
        ),
        Layer::CoalHighRisk => (None, prop(&props, &["name"])),
    };
    Ok(SpatialRow {
        dataset: layer.dataset().to_string(),
        reference,
        name,
        category,
        status: None,
        value: None,
        organisation: None,
        entry_date: prop(&props, DATE).as_deref().and_then(value::date),
        shape,
        attributes: other_props(&props, &[]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    const SQ: &str =
        "[[[260000,80000],[260100,80000],[260100,80100],[260000,80100],[260000,80000]]]";

    fn parse(
        layer: Layer,
        features: &str,
    ) -> (Vec<(u64, SpatialRow)>, Vec<super::super::Rejection>) {
        let text = format!(
            r#"{{"type":"FeatureCollection","crs":{{"type":"name","properties":{{"name":"urn:ogc:def:crs:EPSG::27700"}}}},"features":[{features}]}}"#
        );
        let f = temp_file(text.as_bytes());
        split(read(f.path(), layer).unwrap())
    }

    #[test]
    fn zones_bands_lines_and_rejections() {
        let (ok, bad) = parse(
            Layer::FloodZones,
            &format!(
                r#"{{"type":"Feature","properties":{{"OBJECTID":7,"layer":"Flood Zone 3"}},"geometry":{{"type":"Polygon","coordinates":{SQ}}}}},
                {{"type":"Feature","properties":{{"type":"FZ2"}},"geometry":{{"type":"Polygon","coordinates":{SQ}}}}},
                {{"type":"Feature","properties":{{"type":"unknown"}},"geometry":{{"type":"Polygon","coordinates":{SQ}}}}},
                {{"type":"Feature","properties":{{"flood_zone":"FZ3"}},"geometry":null}},
                {{"type":"Feature","properties":{{"flood_zone":"FZ3"}},"geometry":{{"type":"Point","coordinates":[260000,80000]}}}}"#
            ),
        );
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[0].1.category.as_deref(), Some("FZ3"));
        assert_eq!(ok[0].1.reference, "7");
        assert_eq!(ok[1].1.category.as_deref(), Some("FZ2"));
        assert!(ok[1].1.reference.starts_with('h'), "a stable hash");
        assert_eq!(
            bad.iter().map(|r| r.line).collect::<Vec<_>>(),
            vec![3, 4, 5]
        );

        let (ok, bad) = parse(
            Layer::RiversSeaRisk,
            &format!(
                r#"{{"type":"Feature","properties":{{"prob_4band":"Very Low"}},"geometry":{{"type":"Polygon","coordinates":{SQ}}}}},
                {{"type":"Feature","properties":{{"band":"none"}},"geometry":{{"type":"Polygon","coordinates":{SQ}}}}}"#
            ),
        );
        assert_eq!(ok[0].1.category.as_deref(), Some("very_low"));
        assert_eq!(bad.len(), 1);

        let (ok, bad) = parse(
            Layer::FloodDefences,
            r#"{"type":"Feature","properties":{"asset_type":"wall"},"geometry":{"type":"LineString","coordinates":[[260000,80000],[260100,80000]]}}"#,
        );
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ok[0].1.dataset, "ea-spatial-flood-defences");
        assert_eq!(ok[0].1.category.as_deref(), Some("wall"));
        assert!(matches!(ok[0].1.shape, Shape::Area(_)));
    }
}
