//! planning.data.gov.uk datasets, in the "flattened" CSV form (WKT geometry in `geometry`, a WKT
//! `point`) and the GeoJSON form (a FeatureCollection whose properties are the same fields).
//!
//! One parser reads every dataset Terrace uses ([`DATASETS`]); the dataset of a row is its
//! `dataset` column (property), or, when that is absent or blank, the file's name (e.g.
//! `conservation-area.csv`). Columns are found by name in any spelling (`organisation_entity`,
//! `organisation-entity`).
//!
//! - `entity` (required) identifies the entry; stored as `<dataset>:<entity>`.
//! - `geometry` (WKT polygon or multipolygon, WGS84) is the shape; when blank, `point` (WKT POINT);
//!   in GeoJSON, the feature's geometry, else the `point` property.
//! - `name`, `reference`, `organisation-entity`, `entry-date` are kept; `end-date` marks an entry
//!   that has ended (status `ended`: stored, never matched); `listed-building-grade` and
//!   `flood-risk-level` (`FZ2`/`FZ3`) become the category.
//!
//! Rejections: a wrong column count, a dataset Terrace does not read, a blank entity, no
//! geometry and no point, and WKT or GeoJSON geometry that cannot be read.

use super::boundaries::{first_position, stream};
use super::csvio::{Header, Opened, field};
use super::spatial::{SpatialRow, other_props, prop};
use super::{Parsed, value};
use serde_json::{Map, Value};
use std::io;
use std::path::Path;
use terrace_geo::Shape;

/// The planning.data.gov.uk datasets the risk report reads.
pub const DATASETS: &[&str] = &terrace_core::sources::PLANNING_DATA_DATASETS;

/// The dataset a file's name names (`conservation-area.csv`, `tree-preservation-zone.geojson`,
/// `planning_data_listed-building-outline_flattened.csv`): the longest known name in it.
pub fn dataset_from_file_name(path: &Path) -> Option<&'static str> {
    let stem = path
        .file_name()?
        .to_str()?
        .to_ascii_lowercase()
        .replace('_', "-");
    DATASETS
        .iter()
        .copied()
        .filter(|d| {
            stem.match_indices(d).any(|(i, _)| {
                let after = stem.as_bytes().get(i + d.len()).copied();
                // `tree` must not match inside `tree-preservation-zone`.
                !matches!(after, Some(b'a'..=b'z'))
                    && !stem[i + d.len()..].starts_with("-preservation")
            })
        })
        .max_by_key(|d| d.len())
}

fn known(dataset: &str) -> Option<&'static str> {
    DATASETS.iter().copied().find(|d| *d == dataset)
}

/// The fields of one entry, whichever form it came in.
struct Entry {
    dataset: Option<String>,
    entity: Option<String>,
    name: Option<String>,
    reference: Option<String>,
    organisation: Option<String>,
    entry_date: Option<String>,
    end_date: Option<String>,
    grade: Option<String>,
    flood_level: Option<String>,
    alc_grade: Option<String>,
    attributes: Vec<(String, String)>,
}

const SKIP: &[&str] = &[
    "dataset",
    "entity",
    "name",
    "reference",
    "organisation-entity",
    "entry-date",
    "end-date",
    "geometry",
    "point",
    "geojson",
];

fn to_row(
    e: Entry,
    file_dataset: Option<&'static str>,
    shape: Shape,
) -> Result<SpatialRow, String> {
    let dataset = match e.dataset.as_deref() {
        Some(d) => known(d).ok_or_else(|| format!("dataset {d:?} is not one Terrace reads"))?,
        None => file_dataset.ok_or("no dataset column and the file name names no dataset")?,
    };
    let entity = e.entity.ok_or("blank entity")?;
    let ended = e.end_date.is_some();
    let category = match dataset {
        "flood-risk-zone" => e
            .flood_level
            .as_deref()
            .and_then(super::spatial::flood_zone)
            .map(str::to_string),
        "listed-building" | "listed-building-outline" => e.grade,
        "agricultural-land-classification" => e.alc_grade.as_deref().map(alc_grade),
        _ => None,
    };
    Ok(SpatialRow {
        dataset: dataset.to_string(),
        reference: entity,
        name: e.name,
        category,
        status: ended.then(|| "ended".to_string()),
        value: None,
        organisation: e.organisation,
        entry_date: e.entry_date.as_deref().and_then(value::date),
        shape,
        attributes: e
            .attributes
            .into_iter()
            .chain(e.reference.map(|r| ("reference".to_string(), r)))
            .chain(e.end_date.map(|d| ("end-date".to_string(), d)))
            .collect(),
    })
}

/// An agricultural land classification grade as a category: `Grade 3a` is `3a`, `Non
/// Agricultural` is `non_agricultural`, `Urban` is `urban`.
pub fn alc_grade(g: &str) -> String {
    let g = g.trim().to_ascii_lowercase();
    let g = g.strip_prefix("grade").map_or(g.as_str(), str::trim);
    g.replace([' ', '-'], "_")
}

/// Opens a planning.data.gov.uk file, CSV or GeoJSON (told apart by its first character).
pub fn read(path: &Path) -> io::Result<Box<dyn Iterator<Item = Parsed<SpatialRow>> + Send>> {
    let file_dataset = dataset_from_file_name(path);
    let opened = Opened::open(path)?;
    let first = opened
        .first_line()
        .iter()
        .copied()
        .find(|b| !b.is_ascii_whitespace());
    if first == Some(b'{') {
        drop(opened);
        return geojson(path, file_dataset);
    }
    let mut source = opened.into_source();
    let Some(names) = source.header()? else {
        return Ok(Box::new(std::iter::empty()));
    };
    let h = Header::new(names);
    let entity = h.require(&source.file, &["entity"])?;
    let geometry = h.find(&["geometry"]);
    let point = h.find(&["point"]);
    if geometry.is_none() && point.is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: header has no geometry or point column", source.file),
        ));
    }
    let col = |n: &str| h.find(&[n]);
    let alc = col("agricultural-land-classification-grade");
    let (dataset, name, reference, org, entry, end, grade, level) = (
        col("dataset"),
        col("name"),
        col("reference"),
        col("organisation-entity"),
        col("entry-date"),
        col("end-date"),
        col("listed-building-grade"),
        col("flood-risk-level"),
    );
    let names = h.names.clone();
    let rows = source.rows(h.len(), move |f| {
        let get = |i: Option<usize>| value::text(field(f, i));
        let shape = match (field(f, geometry), field(f, point)) {
            (Some(g), _) => {
                terrace_geo::wkt_to_bng(g, true).map_err(|e| format!("geometry: {e}"))?
            }
            (None, Some(p)) => {
                terrace_geo::wkt_to_bng(p, true).map_err(|e| format!("point: {e}"))?
            }
            (None, None) => return Err("no geometry and no point".into()),
        };
        let attributes = names
            .iter()
            .enumerate()
            .filter(|(_, n)| !SKIP.contains(&n.as_str()))
            .filter_map(|(i, n)| get(Some(i)).map(|v| (n.clone(), v)))
            .collect();
        to_row(
            Entry {
                dataset: get(dataset),
                entity: get(Some(entity)),
                name: get(name),
                reference: get(reference),
                organisation: get(org),
                entry_date: get(entry),
                end_date: get(end),
                grade: get(grade),
                flood_level: get(level),
                alc_grade: get(alc),
                attributes,
            },
            file_dataset,
            shape,
        )
    });
    Ok(Box::new(rows))
}

/// The GeoJSON form: features streamed one at a time; the file's dataset is fixed per file.
fn geojson(
    path: &Path,
    file_dataset: Option<&'static str>,
) -> io::Result<Box<dyn Iterator<Item = Parsed<SpatialRow>> + Send>> {
    let file = path.display().to_string();
    let rows = stream(path, feature_row)?.map(move |item| {
        let (line, (entry, shape)) = item?;
        to_row(entry, file_dataset, shape)
            .map(|row| (line, row))
            .map_err(|reason| super::Rejection {
                file: file.clone(),
                line,
                reason,
            })
    });
    Ok(Box::new(rows))
}

fn feature_row(feature: Value, crs_is_wgs84: Option<bool>) -> Result<(Entry, Shape), String> {
    let Value::Object(mut feature) = feature else {
        return Err("feature is not an object".into());
    };
    let props: Map<String, Value> = match feature.remove("properties") {
        Some(Value::Object(p)) => p,
        _ => Map::new(),
    };
    let shape = match feature.remove("geometry") {
        Some(g @ Value::Object(_)) => {
            let g = serde_json::from_value::<geojson::Geometry>(g)
                .map_err(|e| format!("bad geometry: {e}"))?;
            let wgs84 = crs_is_wgs84.unwrap_or_else(|| {
                first_position(&g).is_none_or(|(x, y)| x.abs() <= 180.0 && y.abs() <= 90.0)
            });
            terrace_geo::geojson_shape_to_bng(&g, wgs84).map_err(|e| format!("geometry: {e}"))?
        }
        _ => match prop(&props, &["point"]) {
            Some(p) => terrace_geo::wkt_to_bng(&p, true).map_err(|e| format!("point: {e}"))?,
            None => return Err("no geometry and no point".into()),
        },
    };
    let p = |n: &str| prop(&props, &[n]);
    Ok((
        Entry {
            dataset: p("dataset"),
            entity: p("entity"),
            name: p("name"),
            reference: p("reference"),
            organisation: p("organisation-entity"),
            entry_date: p("entry-date"),
            end_date: p("end-date"),
            grade: p("listed-building-grade"),
            flood_level: p("flood-risk-level"),
            alc_grade: p("agricultural-land-classification-grade"),
            attributes: other_props(&props, SKIP),
        },
        shape,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{sample, split, temp_file};

    #[test]
    fn csv_rows_datasets_and_rejections() {
        let f = temp_file(
            b"dataset,end-date,entity,entry-date,geometry,name,organisation-entity,point,flood-risk-level,listed-building-grade\n\
conservation-area,,1,2025-01-02,\"POLYGON ((-3.54 50.72,-3.52 50.72,-3.52 50.73,-3.54 50.72))\",Old Town,16,,,\n\
tree,,2,,,Oak,16,POINT(-3.53 50.725),,\n\
flood-risk-zone,,3,,\"MULTIPOLYGON (((-3.54 50.72,-3.52 50.72,-3.52 50.73,-3.54 50.72)))\",,16,,3,\n\
conservation-area,2024-01-01,4,,,Ended,16,POINT(-3.53 50.725),,\n\
pub,,5,,,Nope,16,POINT(-3.53 50.725),,\n\
tree,,,,,No entity,16,POINT(-3.53 50.725),,\n\
tree,,7,,,No shape,16,,,\n\
tree,,8,,\"POLYGON ((x y))\",Bad,16,,,\n\
tree,,9\n",
        );
        let (ok, bad) = split(read(f.path()).unwrap());
        type Got<'a> = (u64, &'a str, &'a str, Option<&'a str>, Option<&'a str>);
        let got: Vec<Got> = ok
            .iter()
            .map(|(l, r)| {
                (
                    *l,
                    r.dataset.as_str(),
                    r.reference.as_str(),
                    r.category.as_deref(),
                    r.status.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (2, "conservation-area", "1", None, None),
                (3, "tree", "2", None, None),
                (4, "flood-risk-zone", "3", Some("FZ3"), None),
                (5, "conservation-area", "4", None, Some("ended")),
            ]
        );
        assert!(matches!(ok[1].1.shape, Shape::Point(..)));
        assert_eq!(
            ok[0].1.entry_date,
            chrono::NaiveDate::from_ymd_opt(2025, 1, 2)
        );
        let lines: Vec<u64> = bad.iter().map(|r| r.line).collect();
        assert_eq!(lines, vec![6, 7, 8, 9, 10], "{bad:?}");
        assert!(bad[0].reason.contains("not one Terrace reads"));
        assert!(bad[4].reason.contains("columns"));
    }

    #[test]
    fn agricultural_land_grades() {
        for (g, want) in [
            ("Grade 1", "1"),
            ("Grade 3a", "3a"),
            ("grade 3b", "3b"),
            ("Non Agricultural", "non_agricultural"),
            ("Urban", "urban"),
        ] {
            assert_eq!(alc_grade(g), want, "{g}");
        }
        let f = temp_file(
            b"dataset,entity,geometry,agricultural-land-classification-grade\n\
agricultural-land-classification,1,\"POLYGON ((-3.54 50.72,-3.52 50.72,-3.52 50.73,-3.54 50.72))\",Grade 2\n",
        );
        let (ok, bad) = split(read(f.path()).unwrap());
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ok[0].1.category.as_deref(), Some("2"));
    }

    #[test]
    fn geojson_form_and_file_names() {
        let f = temp_file(
            br#"{"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"dataset":"article-4-direction-area","entity":"10","name":"A4","entry-date":"2024-02-03"},"geometry":{"type":"MultiPolygon","coordinates":[[[[-3.54,50.72],[-3.52,50.72],[-3.52,50.73],[-3.54,50.72]]]]}},
{"type":"Feature","properties":{"dataset":"tree","entity":"11","point":"POINT(-3.53 50.725)"},"geometry":null},
{"type":"Feature","properties":{"entity":"12"},"geometry":null}
]}"#,
        );
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[0].1.dataset, "article-4-direction-area");
        assert!(matches!(ok[1].1.shape, Shape::Point(..)));
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].line, 3);
        for (name, want) in [
            ("conservation-area.csv", Some("conservation-area")),
            ("tree.csv", Some("tree")),
            (
                "tree-preservation-zone.geojson",
                Some("tree-preservation-zone"),
            ),
            (
                "planning_data_listed-building-outline_flattened.csv",
                Some("listed-building-outline"),
            ),
            ("data.csv", None),
        ] {
            assert_eq!(dataset_from_file_name(Path::new(name)), want, "{name}");
        }
    }

    #[test]
    fn real_southwark_listed_building_outlines() {
        let Some(p) = sample(
            "planning/planning_data_listed-building-outline_flattened_southwark_952rows.csv",
        ) else {
            return;
        };
        let (ok, bad) = split(read(&p).unwrap());
        assert_eq!(ok.len() + bad.len(), 952, "one item per data row");
        assert!(bad.is_empty(), "{:?}", &bad[..bad.len().min(3)]);
        assert!(
            ok.iter()
                .all(|(_, r)| r.dataset == "listed-building-outline")
        );
        // Church of St Mary, Newington: a multipolygon in Southwark, grade II.
        let (_, church) = ok
            .iter()
            .find(|(_, r)| r.name.as_deref() == Some("Church of St Mary, Newington"))
            .unwrap();
        assert_eq!(church.reference, "42101001");
        assert_eq!(church.organisation.as_deref(), Some("329"));
        assert_eq!(church.category.as_deref(), Some("II"));
        let Shape::Area(mp) = &church.shape else {
            panic!("an outline is an area")
        };
        let [x0, y0, x1, y1] = terrace_geo::bbox(mp).unwrap();
        assert!(
            (531_000.0..533_000.0).contains(&x0) && x1 - x0 < 100.0,
            "{x0} {x1}"
        );
        assert!(
            (178_000.0..180_000.0).contains(&y0) && y1 - y0 < 100.0,
            "{y0} {y1}"
        );
        assert!(ok.iter().any(|(_, r)| r.entry_date.is_some()));
    }
}
