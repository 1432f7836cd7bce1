//! Geometry for Terrace: coordinate transformation between WGS84 and the British National Grid,
//! a spatial index over boundary polygons, and WKB/GeoJSON conversion.
//!
//! Architecture Invariant: every geometry this crate hands out is in British National Grid metres
//! (EPSG:27700); WGS84 longitude/latitude only appear at the edges (`bng_from_wgs84`, GeoJSON input).
//!
//! What it offers: WGS84 to BNG and back with the OSTN15 transformation (`lonlat_bng`); GeoJSON
//! (Multi)Polygons to BNG multipolygons; multipolygons to and from WKB; bounding boxes; `Shape` (an
//! area or a point) from GeoJSON geometries (lines become zero-width polygons) and from WKT text
//! (`wkt_to_bng`, planning.data.gov.uk's flattened files); `PolygonIndex`, an R-tree (`rstar`)
//! answering "which polygons contain this point" and "which lie within this distance"; and
//! `PointIndex`, an R-tree over points answering "which lie within this distance" and "which is the
//! nearest".

pub mod geotiff;
mod index;
mod points;
mod shape;
mod wkb_io;

pub use index::PolygonIndex;
pub use points::PointIndex;
pub use shape::{Shape, geojson_shape_to_bng, wkt_to_bng};
pub use wkb_io::{multipolygon_from_wkb, multipolygon_from_wkb_strict, multipolygon_to_wkb};

use geo::{BoundingRect, Coord, LineString, MultiPolygon, Polygon};

/// Everything that can go wrong in this crate.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GeoError {
    /// A coordinate lies outside the area the OSTN15 transformation covers.
    #[error("coordinate ({x}, {y}) is outside the British National Grid transformation extent")]
    OutsideExtent { x: f64, y: f64 },
    /// The geometry has a type this crate does not handle (only polygons are).
    #[error("unsupported geometry type {0}; expected Polygon or MultiPolygon")]
    Unsupported(String),
    /// The geometry is structurally broken (too few positions, non-finite numbers, empty).
    #[error("invalid geometry: {0}")]
    Invalid(String),
    /// The WKB bytes could not be decoded.
    #[error("invalid WKB: {0}")]
    Wkb(String),
}

/// Converts WGS84 (ETRS89) longitude/latitude to British National Grid easting/northing (OSTN15).
///
/// Returns `None` for non-finite input or a point outside the transformation's extent.
pub fn bng_from_wgs84(lon: f64, lat: f64) -> Option<(f64, f64)> {
    if !lon.is_finite() || !lat.is_finite() {
        return None;
    }
    let (e, n) = lonlat_bng::convert_osgb36(lon, lat).ok()?;
    (e.is_finite() && n.is_finite()).then_some((e, n))
}

/// Converts British National Grid easting/northing to WGS84 (ETRS89) `(lon, lat)` (OSTN15).
///
/// Returns `None` for non-finite input or a point outside the transformation's extent.
pub fn wgs84_from_bng(easting: f64, northing: f64) -> Option<(f64, f64)> {
    if !easting.is_finite() || !northing.is_finite() {
        return None;
    }
    let (lon, lat) = lonlat_bng::convert_osgb36_to_ll(easting, northing).ok()?;
    (lon.is_finite() && lat.is_finite()).then_some((lon, lat))
}

/// The bounding box `[min_x, min_y, max_x, max_y]`, or `None` for an empty multipolygon.
pub fn bbox(mp: &MultiPolygon<f64>) -> Option<[f64; 4]> {
    mp.bounding_rect()
        .map(|r| [r.min().x, r.min().y, r.max().x, r.max().y])
}

/// Converts a GeoJSON Polygon or MultiPolygon into a multipolygon in BNG metres.
///
/// With `crs_is_wgs84` the positions are read as `[lon, lat]` and transformed with OSTN15;
/// otherwise they are taken to be BNG `[easting, northing]` already.
/// Extra ordinates (elevation) are ignored. Rings are closed if the source left them open.
pub fn geojson_geometry_to_bng(
    geometry: &geojson::Geometry,
    crs_is_wgs84: bool,
) -> Result<MultiPolygon<f64>, GeoError> {
    use geojson::GeometryValue as G;
    let polygons: Vec<&geojson::PolygonType> = match &geometry.value {
        G::Polygon { coordinates } => vec![coordinates],
        G::MultiPolygon { coordinates } => coordinates.iter().collect(),
        other @ (G::Point { .. }
        | G::MultiPoint { .. }
        | G::LineString { .. }
        | G::MultiLineString { .. }
        | G::GeometryCollection { .. }) => {
            return Err(GeoError::Unsupported(other.type_name().to_string()));
        }
    };
    if polygons.is_empty() {
        return Err(GeoError::Invalid("MultiPolygon has no polygons".into()));
    }
    let convert = |p: &geojson::Position| -> Result<Coord<f64>, GeoError> {
        let s = p.as_slice();
        let (x, y) = match s {
            [x, y, ..] if x.is_finite() && y.is_finite() => (*x, *y),
            _ => return Err(GeoError::Invalid(format!("bad position {s:?}"))),
        };
        if crs_is_wgs84 {
            let (e, n) = bng_from_wgs84(x, y).ok_or(GeoError::OutsideExtent { x, y })?;
            Ok(Coord { x: e, y: n })
        } else {
            Ok(Coord { x, y })
        }
    };
    let ring = |positions: &Vec<geojson::Position>| -> Result<LineString<f64>, GeoError> {
        if positions.len() < 3 {
            return Err(GeoError::Invalid(format!(
                "a ring needs at least 3 positions, found {}",
                positions.len()
            )));
        }
        positions
            .iter()
            .map(convert)
            .collect::<Result<Vec<_>, _>>()
            .map(LineString::new)
    };
    let mut out = Vec::with_capacity(polygons.len());
    for rings in polygons {
        let (exterior, interiors) = rings
            .split_first()
            .ok_or_else(|| GeoError::Invalid("polygon has no rings".into()))?;
        let exterior = ring(exterior)?;
        let interiors = interiors.iter().map(ring).collect::<Result<Vec<_>, _>>()?;
        out.push(Polygon::new(exterior, interiors));
    }
    Ok(MultiPolygon::new(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_point_within_a_metre() {
        // A published OSTN15 reference pair:
        // ETRS89 52.658007833 N, 1.716073973 E is OSGB36 651409.792 E, 313177.448 N.
        let (e, n) = bng_from_wgs84(1.716_073_973, 52.658_007_833).expect("inside extent");
        assert!(
            (e - 651_409.792).abs() < 1.0 && (n - 313_177.448).abs() < 1.0,
            "{e} {n}"
        );
        let (lon, lat) = wgs84_from_bng(651_409.792, 313_177.448).expect("inside extent");
        let (e2, n2) = bng_from_wgs84(lon, lat).expect("inside extent");
        assert!((e2 - 651_409.792).abs() < 1.0 && (n2 - 313_177.448).abs() < 1.0);
    }

    #[test]
    fn round_trip_exeter_and_newport() {
        // Exeter, from the Code-Point Open sample (EX1 1AE at 291966, 92583).
        for (e, n) in [
            (291_966.0, 92_583.0),
            (449_700.0, 89_100.0),
            (530_000.0, 180_000.0),
        ] {
            let (lon, lat) = wgs84_from_bng(e, n).expect("inside extent");
            assert!(
                (-6.0..2.0).contains(&lon) && (49.9..56.0).contains(&lat),
                "{lon} {lat}"
            );
            let (e2, n2) = bng_from_wgs84(lon, lat).expect("inside extent");
            assert!((e2 - e).abs() < 0.01 && (n2 - n).abs() < 0.01, "{e2} {n2}");
        }
        // Exeter's centre in lon/lat is near 292,000 E, 92,500 N.
        let (e, n) = bng_from_wgs84(-3.5339, 50.7236).expect("inside extent");
        assert!(
            (e - 292_100.0).abs() < 1_000.0 && (n - 92_500.0).abs() < 1_000.0,
            "{e} {n}"
        );
    }

    #[test]
    fn outside_extent_is_none() {
        assert_eq!(bng_from_wgs84(2.35, 48.85), None); // Paris
        assert_eq!(bng_from_wgs84(f64::NAN, 51.0), None);
        assert_eq!(wgs84_from_bng(-10.0, 100.0), None);
        assert_eq!(wgs84_from_bng(900_000.0, 100.0), None);
    }

    fn square(x0: f64, y0: f64, size: f64) -> Polygon<f64> {
        Polygon::new(
            LineString::from(vec![
                (x0, y0),
                (x0 + size, y0),
                (x0 + size, y0 + size),
                (x0, y0 + size),
                (x0, y0),
            ]),
            vec![],
        )
    }

    #[test]
    fn bbox_of_multipolygon() {
        let mp = MultiPolygon::new(vec![square(0.0, 0.0, 10.0), square(20.0, 5.0, 10.0)]);
        assert_eq!(bbox(&mp), Some([0.0, 0.0, 30.0, 15.0]));
        assert_eq!(bbox(&MultiPolygon::new(vec![])), None);
    }

    #[test]
    fn geojson_wgs84_and_bng() {
        let wgs: geojson::Geometry = serde_json::from_str(
            r#"{"type":"Polygon","coordinates":[[[-3.54,50.72],[-3.52,50.72],[-3.52,50.73],[-3.54,50.72]]]}"#,
        )
        .expect("valid json");
        let mp = geojson_geometry_to_bng(&wgs, true).expect("converts");
        let b = bbox(&mp).expect("non-empty");
        assert!(
            b[0] > 290_000.0 && b[2] < 295_000.0 && b[1] > 91_000.0 && b[3] < 94_000.0,
            "{b:?}"
        );

        let bng: geojson::Geometry = serde_json::from_str(
            r#"{"type":"MultiPolygon","coordinates":[[[[0,0],[10,0],[10,10],[0,10]]],[[[20,20],[30,20],[30,30],[20,20]]]]}"#,
        )
        .expect("valid json");
        let mp = geojson_geometry_to_bng(&bng, false).expect("converts");
        assert_eq!(mp.0.len(), 2);
        // the open ring is closed
        assert_eq!(mp.0[0].exterior().0.len(), 5);
        assert_eq!(bbox(&mp), Some([0.0, 0.0, 30.0, 30.0]));
    }

    #[test]
    fn geojson_errors() {
        let check = |json: &str, wgs: bool| {
            let g: geojson::Geometry = serde_json::from_str(json).expect("valid json");
            geojson_geometry_to_bng(&g, wgs).expect_err("must fail")
        };
        assert!(matches!(
            check(r#"{"type":"Point","coordinates":[1,2]}"#, true),
            GeoError::Unsupported(_)
        ));
        assert!(matches!(
            check(r#"{"type":"Polygon","coordinates":[[[0,0],[1,1]]]}"#, false),
            GeoError::Invalid(_)
        ));
        assert!(matches!(
            check(
                r#"{"type":"Polygon","coordinates":[[[2.3,48.8],[2.4,48.8],[2.4,48.9]]]}"#,
                true
            ),
            GeoError::OutsideExtent { .. }
        ));
        assert!(matches!(
            check(r#"{"type":"MultiPolygon","coordinates":[]}"#, true),
            GeoError::Invalid(_)
        ));
    }
}
