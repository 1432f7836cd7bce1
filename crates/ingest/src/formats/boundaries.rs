//! ONS boundary GeoJSON FeatureCollections: LSOAs, MSOAs, wards, local authorities, counties,
//! regions, countries and built-up areas.
//!
//! The features are streamed one at a time, so a large collection is never held in memory whole.
//! The kind and code come from the property names, which vary by vintage:
//! `lsoaYYcd` (e.g. `LSOA11CD`, `LSOA21CD`) is an LSOA, `msoaYYcd` an MSOA, `wdYYcd` (`WD13CD`,
//! `WD24CD`) a ward, `ladYYcd` (`lad19cd`, `LAD23CD`) a local authority, `ctyYYcd` a county,
//! `rgnYYcd` a region, `ctryYYcd` a country and `buaYYcd` (`BUA22CD`) a built-up area, matched
//! case-insensitively; when a feature has several (an LSOA file that also carries `MSOA21CD` and
//! `LAD21CD`, a built-up area with its `LAD22CD`), the finest wins.
//! The name is the matching `...NM` property.
//!
//! Coordinates are WGS84 longitude/latitude unless the collection's `crs` (before `features`)
//! names EPSG:27700; with no `crs`, a feature whose first position is outside ±180/±90 is taken to
//! be in BNG metres already. Geometries are returned in BNG metres.
//!
//! Line numbers: [`Rejection::line`](super::Rejection::line) and the `u64` of each row are the
//! 1-based index of the feature in the collection, not a line of the file.
//! A feature with no recognisable code property, no geometry, a geometry that is not a
//! (Multi)Polygon, or coordinates that cannot be converted is a rejection. Malformed JSON ends the
//! stream with one rejection, as nothing after it can be read.

use super::{Parsed, Rejection};
use geo::MultiPolygon;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// One boundary polygon.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundaryRow {
    /// `lsoa`, `msoa`, `ward`, `lad`, `county`, `region` or `country`.
    pub kind: String,
    /// The GSS code, e.g. `E07000041`.
    pub code: String,
    pub name: Option<String>,
    /// British National Grid metres.
    pub geometry: MultiPolygon<f64>,
}

/// Opens a GeoJSON FeatureCollection; a file that does not start with a JSON object is an error.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<BoundaryRow>> + Send> {
    stream(path, |feature, crs| {
        to_row(feature, crs).and_then(|row| match terrace_geo::bbox(&row.geometry) {
            Some(_) => Ok(row),
            None => Err("the geometry is empty".to_string()),
        })
    })
}

/// Turns one feature (and the collection's CRS, when it named one) into a row or a reason.
pub(crate) type FeatureFn<T> = fn(Value, Option<bool>) -> Result<T, String>;

/// Streams the features of a GeoJSON FeatureCollection one at a time through `map`: one item per
/// feature, its "line" the 1-based feature index. A file that does not start with a JSON object
/// is an error.
pub(crate) fn stream<T>(
    path: &Path,
    map: FeatureFn<T>,
) -> io::Result<impl Iterator<Item = Parsed<T>> + Send + use<T>> {
    let mut reader = BufReader::new(File::open(path)?);
    let file = path.display().to_string();
    skip_bom(&mut reader)?;
    match next_non_ws(&mut reader)? {
        Some(b'{') => {}
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{file}: not a GeoJSON object"),
            ));
        }
    }
    Ok(Features {
        reader,
        file,
        state: State::TopLevel,
        crs_is_wgs84: None,
        index: 0,
        map,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    TopLevel,
    InFeatures,
    Done,
}

struct Features<R, T> {
    reader: R,
    file: String,
    state: State,
    /// From the collection's `crs` member, when it came before `features`.
    crs_is_wgs84: Option<bool>,
    index: u64,
    map: FeatureFn<T>,
}

fn skip_bom(r: &mut impl BufRead) -> io::Result<()> {
    if r.fill_buf()?.starts_with(b"\xEF\xBB\xBF") {
        r.consume(3);
    }
    Ok(())
}

/// Skips whitespace and returns the next byte without consuming it.
fn peek_non_ws(r: &mut impl BufRead) -> io::Result<Option<u8>> {
    loop {
        let buf = r.fill_buf()?;
        let Some(&b) = buf.first() else {
            return Ok(None);
        };
        if b.is_ascii_whitespace() {
            r.consume(1);
        } else {
            return Ok(Some(b));
        }
    }
}

fn next_non_ws(r: &mut impl BufRead) -> io::Result<Option<u8>> {
    let b = peek_non_ws(r)?;
    if b.is_some() {
        r.consume(1);
    }
    Ok(b)
}

/// Parses exactly one JSON value from the reader. Objects, arrays and strings end on their
/// closing byte, so nothing after them is consumed.
fn json_value<T: for<'de> Deserialize<'de>>(r: &mut impl BufRead) -> Result<T, String> {
    let mut de = serde_json::Deserializer::from_reader(r);
    T::deserialize(&mut de).map_err(|e| e.to_string())
}

impl<R: BufRead, T> Features<R, T> {
    fn fail(&mut self, reason: String) -> Option<Parsed<T>> {
        self.state = State::Done;
        Some(Err(Rejection {
            file: self.file.clone(),
            line: self.index + 1,
            reason: format!("malformed GeoJSON: {reason}"),
        }))
    }

    /// Advances through the top-level object to the next feature; `Ok(false)` at the end.
    fn seek_feature(&mut self) -> Result<bool, String> {
        loop {
            match self.state {
                State::Done => return Ok(false),
                State::InFeatures => {
                    match peek_non_ws(&mut self.reader).map_err(|e| e.to_string())? {
                        Some(b']') => {
                            self.reader.consume(1);
                            self.state = State::TopLevel;
                        }
                        Some(b',') => self.reader.consume(1),
                        Some(_) => return Ok(true),
                        None => return Err("file ends inside the features array".into()),
                    }
                }
                State::TopLevel => {
                    match peek_non_ws(&mut self.reader).map_err(|e| e.to_string())? {
                        None | Some(b'}') => {
                            self.state = State::Done;
                            return Ok(false);
                        }
                        Some(b',') => self.reader.consume(1),
                        Some(b'"') => {
                            let key: String = json_value(&mut self.reader)?;
                            if next_non_ws(&mut self.reader).map_err(|e| e.to_string())?
                                != Some(b':')
                            {
                                return Err(format!("expected ':' after {key:?}"));
                            }
                            if key == "features" {
                                if next_non_ws(&mut self.reader).map_err(|e| e.to_string())?
                                    != Some(b'[')
                                {
                                    return Err("\"features\" is not an array".into());
                                }
                                self.state = State::InFeatures;
                            } else {
                                let v: Value = json_value(&mut self.reader)?;
                                if key == "crs" && self.index == 0 {
                                    self.crs_is_wgs84 = crs_is_wgs84(&v);
                                }
                            }
                        }
                        Some(other) => return Err(format!("unexpected {:?}", char::from(other))),
                    }
                }
            }
        }
    }
}

impl<R: BufRead, T> Iterator for Features<R, T> {
    type Item = Parsed<T>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.seek_feature() {
            Ok(false) => return None,
            Ok(true) => {}
            Err(reason) => return self.fail(reason),
        }
        let feature: Value = match json_value(&mut self.reader) {
            Ok(v) => v,
            Err(reason) => return self.fail(reason),
        };
        self.index += 1;
        let line = self.index;
        Some(
            (self.map)(feature, self.crs_is_wgs84)
                .map(|row| (line, row))
                .map_err(|reason| Rejection {
                    file: self.file.clone(),
                    line,
                    reason,
                }),
        )
    }
}

/// `Some(false)` for a `crs` naming EPSG:27700, `Some(true)` for any other named CRS.
fn crs_is_wgs84(crs: &Value) -> Option<bool> {
    let name = crs.pointer("/properties/name")?.as_str()?;
    Some(!name.contains("27700"))
}

/// Which kind a code property names, with its stem (`lad19` for `lad19cd`); `None` otherwise.
fn code_property(key: &str) -> Option<(&'static str, u8, String)> {
    let lower = key.to_ascii_lowercase();
    let stem = lower.strip_suffix("cd")?;
    [
        ("lsoa", "lsoa", 0),
        ("msoa", "msoa", 1),
        ("wd", "ward", 2),
        ("ward", "ward", 2),
        // ONS built-up areas (`BUA22CD`): finer than the authority a feature may also name.
        ("bua", "bua", 2),
        ("lad", "lad", 3),
        ("cty", "county", 4),
        ("rgn", "region", 5),
        ("ctry", "country", 6),
    ]
    .into_iter()
    .find_map(|(prefix, kind, rank)| {
        let digits = stem.strip_prefix(prefix)?;
        let ok =
            digits.is_empty() || (digits.len() == 2 && digits.bytes().all(|b| b.is_ascii_digit()));
        ok.then(|| (kind, rank, stem.to_string()))
    })
}

pub(crate) fn string_property(props: &Map<String, Value>, key: &str) -> Option<String> {
    let v = match props.get(key)? {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_) => return None,
    };
    (!v.is_empty()).then_some(v)
}

/// The first position of a geometry, to guess its CRS.
pub(crate) fn first_position(g: &geojson::Geometry) -> Option<(f64, f64)> {
    use geojson::GeometryValue as G;
    let p = match &g.value {
        G::Polygon { coordinates } => coordinates.first()?.first()?,
        G::MultiPolygon { coordinates } => coordinates.first()?.first()?.first()?,
        G::Point { coordinates } => coordinates,
        G::LineString { coordinates } | G::MultiPoint { coordinates } => coordinates.first()?,
        G::MultiLineString { coordinates } => coordinates.first()?.first()?,
        G::GeometryCollection { .. } => return None,
    };
    match p.as_slice() {
        [x, y, ..] => Some((*x, *y)),
        _ => None,
    }
}

/// A feature's (Multi)Polygon geometry in BNG metres: WGS84 when the collection's CRS said so,
/// else guessed from the first position; `label` starts each reason.
pub(crate) fn feature_polygons(
    feature: &mut Map<String, Value>,
    crs_is_wgs84: Option<bool>,
    label: &str,
) -> Result<MultiPolygon<f64>, String> {
    let geometry = match feature.remove("geometry") {
        None | Some(Value::Null) => return Err(format!("{label}: feature has no geometry")),
        Some(g) => serde_json::from_value::<geojson::Geometry>(g)
            .map_err(|e| format!("{label}: bad geometry: {e}"))?,
    };
    let wgs84 = crs_is_wgs84.unwrap_or_else(|| {
        first_position(&geometry).is_none_or(|(x, y)| x.abs() <= 180.0 && y.abs() <= 90.0)
    });
    terrace_geo::geojson_geometry_to_bng(&geometry, wgs84).map_err(|e| format!("{label}: {e}"))
}

fn to_row(feature: Value, crs_is_wgs84: Option<bool>) -> Result<BoundaryRow, String> {
    let Value::Object(mut feature) = feature else {
        return Err("feature is not an object".into());
    };
    let props = match feature.get("properties") {
        Some(Value::Object(p)) => p,
        _ => return Err("feature has no properties".into()),
    };
    let (kind, _, stem, key) = props
        .keys()
        .filter_map(|k| code_property(k).map(|(kind, rank, stem)| (kind, rank, stem, k.clone())))
        .min_by_key(|(_, rank, stem, _)| (*rank, std::cmp::Reverse(stem.clone())))
        .ok_or_else(|| {
            let names: Vec<&str> = props.keys().map(String::as_str).collect();
            format!(
                "no LSOA, MSOA, ward, LAD, county, region or country code property among {names:?}"
            )
        })?;
    let code = string_property(props, &key).ok_or_else(|| format!("blank {key}"))?;
    let name_key = props
        .keys()
        .find(|k| k.eq_ignore_ascii_case(&format!("{stem}nm")));
    let name = name_key.and_then(|k| string_property(props, k));
    let geometry = feature_polygons(&mut feature, crs_is_wgs84, &code)?;
    Ok(BoundaryRow {
        kind: kind.to_string(),
        code,
        name,
        geometry,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{sample, split, temp_file};
    use geo::{Area, Contains, Point};

    fn parse(content: &str) -> (Vec<(u64, BoundaryRow)>, Vec<Rejection>) {
        let f = temp_file(content.as_bytes());
        split(read(f.path()).expect("opens"))
    }

    const SQUARE_WGS: &str =
        "[[[-3.54,50.72],[-3.52,50.72],[-3.52,50.73],[-3.54,50.73],[-3.54,50.72]]]";

    #[test]
    fn kinds_names_and_rejections() {
        let content = format!(
            r#"{{"type":"FeatureCollection","name":"x","bbox":[-4,50,-3,51],"features":[
              {{"type":"Feature","properties":{{"objectid":1,"lad19cd":"E07000041","lad19nm":"Exeter","lad19nmw":" "}},"geometry":{{"type":"Polygon","coordinates":{SQUARE_WGS}}}}},
              {{"type":"Feature","properties":{{"LSOA21CD":"E01019968","LSOA21NM":"Exeter 014A","LAD21CD":"E07000041"}},"geometry":{{"type":"MultiPolygon","coordinates":[{SQUARE_WGS}]}}}},
              {{"type":"Feature","properties":{{"WD13CD":"E05003491","WD13CDO":"18UCFU","WD13NM":"Alphington"}},"geometry":{{"type":"Polygon","coordinates":{SQUARE_WGS}}}}},
              {{"type":"Feature","properties":{{"INSPIREID":1}},"geometry":{{"type":"Polygon","coordinates":{SQUARE_WGS}}}}},
              {{"type":"Feature","properties":{{"lad19cd":"E07000042"}},"geometry":null}},
              {{"type":"Feature","properties":{{"lad19cd":"E07000043"}},"geometry":{{"type":"Point","coordinates":[-3.5,50.7]}}}},
              {{"type":"Feature","properties":{{"lad19cd":"E07000044"}},"geometry":{{"type":"Polygon","coordinates":[[[2.3,48.8],[2.4,48.8],[2.4,48.9],[2.3,48.8]]]}}}},
              {{"type":"Feature","properties":{{"lad19cd":"E07000045"}},"geometry":{{"type":"Polygon","coordinates":"nope"}}}},
              {{"type":"Feature","properties":{{"LAD23CD":"E07000046","LAD23NM":"Later"}},"geometry":{{"type":"Polygon","coordinates":{SQUARE_WGS}}}}}
            ],"crs_after":1}}"#
        );
        let (ok, bad) = parse(&content);
        let got: Vec<(u64, &str, &str, Option<&str>)> = ok
            .iter()
            .map(|(l, r)| (*l, r.kind.as_str(), r.code.as_str(), r.name.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, "lad", "E07000041", Some("Exeter")),
                (2, "lsoa", "E01019968", Some("Exeter 014A")),
                (3, "ward", "E05003491", Some("Alphington")),
                (9, "lad", "E07000046", Some("Later")),
            ]
        );
        assert_eq!(
            bad.iter().map(|b| b.line).collect::<Vec<_>>(),
            vec![4, 5, 6, 7, 8]
        );
        assert!(bad[0].reason.contains("no LSOA, MSOA, ward, LAD"));
        assert!(bad[1].reason.contains("no geometry"));
        assert!(
            bad[2].reason.contains("unsupported geometry type Point"),
            "{}",
            bad[2].reason
        );
        assert!(bad[3].reason.contains("outside"), "{}", bad[3].reason);
        assert!(bad[4].reason.contains("bad geometry"), "{}", bad[4].reason);

        // the square, in BNG metres: about 1,400 m by 1,100 m around Exeter
        let g = &ok[0].1.geometry;
        assert!(
            (1_200_000.0..1_800_000.0).contains(&g.unsigned_area()),
            "{}",
            g.unsigned_area()
        );
        assert!(g.contains(&Point::new(292_000.0, 92_500.0)));
    }

    #[test]
    fn msoa_county_region_and_country_properties() {
        let content = format!(
            r#"{{"type":"FeatureCollection","features":[
              {{"type":"Feature","properties":{{"MSOA21CD":"E02004156","MSOA21NM":"Exeter 001","LAD22CD":"E07000041"}},"geometry":{{"type":"Polygon","coordinates":{SQUARE_WGS}}}}},
              {{"type":"Feature","properties":{{"CTY23CD":"E10000008","CTY23NM":"Devon"}},"geometry":{{"type":"Polygon","coordinates":{SQUARE_WGS}}}}},
              {{"type":"Feature","properties":{{"RGN22CD":"E12000009","RGN22NM":"South West"}},"geometry":{{"type":"Polygon","coordinates":{SQUARE_WGS}}}}},
              {{"type":"Feature","properties":{{"CTRY22CD":"E92000001","CTRY22NM":"England"}},"geometry":{{"type":"Polygon","coordinates":{SQUARE_WGS}}}}},
              {{"type":"Feature","properties":{{"BUA22CD":"E63011018","BUA22NM":"Exeter","LAD22CD":"E07000041"}},"geometry":{{"type":"Polygon","coordinates":{SQUARE_WGS}}}}}
            ]}}"#
        );
        let (ok, bad) = parse(&content);
        assert!(bad.is_empty(), "{bad:?}");
        let got: Vec<(&str, &str, Option<&str>)> = ok
            .iter()
            .map(|(_, r)| (r.kind.as_str(), r.code.as_str(), r.name.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("msoa", "E02004156", Some("Exeter 001")),
                ("county", "E10000008", Some("Devon")),
                ("region", "E12000009", Some("South West")),
                ("country", "E92000001", Some("England")),
                ("bua", "E63011018", Some("Exeter")),
            ]
        );
    }

    #[test]
    fn bng_crs_passes_through_and_undeclared_bng_is_detected() {
        let bng = "[[[290000,92000],[291000,92000],[291000,93000],[290000,93000],[290000,92000]]]";
        for header in [
            r#""crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::27700"}},"#,
            "",
        ] {
            let content = format!(
                r#"{{"type":"FeatureCollection",{header}"features":[{{"type":"Feature","properties":{{"LAD23CD":"E07000041"}},"geometry":{{"type":"Polygon","coordinates":{bng}}}}}]}}"#
            );
            let (ok, bad) = parse(&content);
            assert!(bad.is_empty(), "{bad:?}");
            assert_eq!(
                terrace_geo::bbox(&ok[0].1.geometry),
                Some([290_000.0, 92_000.0, 291_000.0, 93_000.0])
            );
        }
    }

    #[test]
    fn malformed_json_stops_with_one_rejection() {
        let content = format!(
            r#"{{"type":"FeatureCollection","features":[{{"type":"Feature","properties":{{"lad19cd":"E1"}},"geometry":{{"type":"Polygon","coordinates":{SQUARE_WGS}}}}},{{"type":"Feature","prop"#
        );
        let (ok, bad) = parse(&content);
        assert_eq!(ok.len(), 1);
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].line, 2);
        assert!(bad[0].reason.starts_with("malformed GeoJSON"));

        let f = temp_file(b"[1,2]");
        assert!(read(f.path()).is_err());
        let (ok, bad) = parse(r#"{"type":"FeatureCollection","features":[]}"#);
        assert!(ok.is_empty() && bad.is_empty());
    }

    #[test]
    fn real_samples() {
        for (rel, features, kind, first_code, first_name) in [
            (
                "boundaries/lad19_exeter_E07000041.geojson",
                2,
                "lad",
                "E07000041",
                "Exeter",
            ),
            (
                "boundaries/lad19_isle_of_wight_E06000046.geojson",
                2,
                "lad",
                "E06000046",
                "Isle of Wight",
            ),
            (
                "boundaries/martinjc_electoral_eng_wards_by_lad_E06000046.geojson",
                39,
                "ward",
                "E05008479",
                "Arreton and Newchurch",
            ),
            (
                "boundaries/martinjc_electoral_eng_wards_by_lad_E07000041.geojson",
                18,
                "ward",
                "E05003491",
                "Alphington",
            ),
            (
                "boundaries/martinjc_electoral_eng_wards_by_lad_E09000024.geojson",
                20,
                "ward",
                "E05000455",
                "Abbey",
            ),
            (
                "boundaries/martinjc_statistical_eng_lsoa_by_lad_E06000046.geojson",
                89,
                "lsoa",
                "E01017282",
                "Isle of Wight 006A",
            ),
            (
                "boundaries/martinjc_statistical_eng_lsoa_by_lad_E07000041.geojson",
                74,
                "lsoa",
                "E01019968",
                "Exeter 014A",
            ),
            (
                "boundaries/martinjc_statistical_eng_lsoa_by_lad_E09000024.geojson",
                124,
                "lsoa",
                "E01003355",
                "Merton 009A",
            ),
        ] {
            let Some(p) = sample(rel) else { continue };
            let (ok, bad) = split(read(&p).expect("opens"));
            println!(
                "boundaries {}: read {} ok {} rejected {}",
                p.display(),
                ok.len() + bad.len(),
                ok.len(),
                bad.len()
            );
            assert_eq!((ok.len(), bad.len()), (features, 0), "{rel}");
            assert!(ok.iter().all(|(_, r)| r.kind == kind));
            let (line, r) = &ok[0];
            assert_eq!(
                (*line, r.code.as_str(), r.name.as_deref()),
                (1, first_code, Some(first_name))
            );
        }
        // Exeter's LAD polygon holds Exeter's postcode EX1 1AA (292269, 92680 in the postcode directory)
        if let Some(p) = sample("boundaries/lad19_exeter_E07000041.geojson") {
            let (ok, _) = split(read(&p).expect("opens"));
            let index = terrace_geo::PolygonIndex::build(
                ok.into_iter().map(|(_, r)| (r.geometry, r.code)).collect(),
            );
            assert_eq!(
                index.containing((292_269.0, 92_680.0)),
                vec![&"E07000041".to_string()]
            );
        }
        if let Some(p) = sample("boundaries/martinjc_statistical_eng_lsoa_by_lad_E07000041.geojson")
        {
            let (ok, _) = split(read(&p).expect("opens"));
            let index = terrace_geo::PolygonIndex::build(
                ok.into_iter().map(|(_, r)| (r.geometry, r.code)).collect(),
            );
            assert_eq!(index.containing((292_269.0, 92_680.0)).len(), 1);
        }
    }
}
