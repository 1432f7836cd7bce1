//! OS Open Names CSV tiles (one file per 100 km grid square, e.g. `SX99.csv`).
//!
//! The data files have **no header**: the 34 columns are those of OS's documentation
//! (`Docs/OS_Open_Names_Header.csv` in the download): `ID, NAMES_URI, NAME1, NAME1_LANG, NAME2,
//! NAME2_LANG, TYPE, LOCAL_TYPE, GEOMETRY_X, GEOMETRY_Y, MOST_DETAIL_VIEW_RES,
//! LEAST_DETAIL_VIEW_RES, MBR_XMIN, MBR_YMIN, MBR_XMAX, MBR_YMAX, POSTCODE_DISTRICT,
//! POSTCODE_DISTRICT_URI, POPULATED_PLACE, POPULATED_PLACE_URI, POPULATED_PLACE_TYPE,
//! DISTRICT_BOROUGH, DISTRICT_BOROUGH_URI, DISTRICT_BOROUGH_TYPE, COUNTY_UNITARY,
//! COUNTY_UNITARY_URI, COUNTY_UNITARY_TYPE, REGION, REGION_URI, COUNTRY, COUNTRY_URI,
//! RELATED_SPATIAL_OBJECT, SAME_AS_DBPEDIA, SAME_AS_GEONAMES`. A file that starts with that
//! header line (the header file concatenated in front) is read too.
//! `GEOMETRY_X`/`GEOMETRY_Y` are British National Grid metres.
//!
//! Every well-formed entry is a row (roads, postcodes, hills and water included), marked
//! `populated` when `TYPE` is `populatedPlace`; the loader keeps only those.
//! Rejections: a wrong column count, a blank `ID`, `NAME1` or `TYPE`, and a position that is
//! not a number inside the British National Grid.

use super::Parsed;
use super::csvio::{Opened, field};
use std::io;
use std::path::Path;

/// The number of columns of an Open Names entry.
pub const COLUMNS: usize = 34;

/// One gazetteer entry.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenNamesRow {
    pub id: String,
    pub name: String,
    /// `NAME2` (the Welsh or Gaelic name), where given.
    pub name_alt: Option<String>,
    /// `TYPE` is `populatedPlace`.
    pub populated: bool,
    pub local_type: String,
    /// BNG metres.
    pub x: f64,
    pub y: f64,
    pub postcode_district: Option<String>,
    pub district_borough: Option<String>,
    pub county_unitary: Option<String>,
    pub region: Option<String>,
    pub country: Option<String>,
}

const ID: usize = 0;
const NAME1: usize = 2;
const NAME2: usize = 4;
const TYPE: usize = 6;
const LOCAL_TYPE: usize = 7;
const GEOMETRY_X: usize = 8;
const GEOMETRY_Y: usize = 9;
const POSTCODE_DISTRICT: usize = 16;
const DISTRICT_BOROUGH: usize = 21;
const COUNTY_UNITARY: usize = 24;
const REGION: usize = 27;
const COUNTRY: usize = 29;

/// Whether a record is an Open Names entry (34 fields, an `osgb` id, a numeric position).
pub fn is_headerless_record(fields: &[String]) -> bool {
    fields.len() == COLUMNS
        && fields[ID].trim().starts_with("osgb")
        && fields[GEOMETRY_X].trim().parse::<f64>().is_ok()
}

/// Opens an Open Names tile.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<OpenNamesRow>> + Send> {
    let opened = Opened::open(path)?;
    let has_header = opened.first_line().starts_with(b"ID,NAMES_URI");
    let mut source = opened.into_source();
    if has_header {
        source.header()?;
    }
    Ok(source.rows(COLUMNS, parse_row))
}

fn parse_row(f: &[String]) -> Result<OpenNamesRow, String> {
    let text = |i: usize| field(f, Some(i)).map(str::to_string);
    let id = text(ID).ok_or("blank ID")?;
    let name = text(NAME1).ok_or_else(|| format!("{id}: blank NAME1"))?;
    let kind = text(TYPE).ok_or_else(|| format!("{id}: blank TYPE"))?;
    let coordinate = |i: usize, what: &str, max: f64| -> Result<f64, String> {
        let raw = field(f, Some(i)).unwrap_or_default();
        raw.parse::<f64>()
            .ok()
            .filter(|v| (0.0..=max).contains(v))
            .ok_or_else(|| {
                format!("{id}: {what} {raw:?} is not a British National Grid coordinate")
            })
    };
    Ok(OpenNamesRow {
        x: coordinate(GEOMETRY_X, "GEOMETRY_X", 700_000.0)?,
        y: coordinate(GEOMETRY_Y, "GEOMETRY_Y", 1_300_000.0)?,
        populated: kind == "populatedPlace",
        local_type: text(LOCAL_TYPE).unwrap_or(kind),
        name_alt: text(NAME2),
        postcode_district: text(POSTCODE_DISTRICT),
        district_borough: text(DISTRICT_BOROUGH),
        county_unitary: text(COUNTY_UNITARY),
        region: text(REGION),
        country: text(COUNTRY),
        id,
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    /// An entry in OS's layout (the values are made up, the shape is the publisher's).
    fn entry(id: &str, name: &str, kind: &str, local: &str, x: &str, y: &str) -> String {
        format!(
            "{id},http://data.ordnancesurvey.co.uk/id/{id},{name},,,,{kind},{local},{x},{y},1000,25000,,,,,EX1,http://data.ordnancesurvey.co.uk/id/postcodedistrict/EX1,,,,Exeter,http://data.ordnancesurvey.co.uk/id/7000000000000001,http://data.ordnancesurvey.co.uk/ontology/admingeo/District,,,,South West,http://data.ordnancesurvey.co.uk/id/7000000000041421,England,http://data.ordnancesurvey.co.uk/id/country/england,,,\r\n"
        )
    }

    #[test]
    fn headerless_tile_with_every_kind_of_row() {
        let mut content = String::new();
        content.push_str(&entry(
            "osgb4000000074000001",
            "Heavitree",
            "populatedPlace",
            "Suburban Area",
            "294500",
            "92300",
        ));
        content.push_str(&entry(
            "osgb4000000074000002",
            "Fore Street",
            "transportNetwork",
            "Named Road",
            "292000",
            "92500",
        ));
        content.push_str(&entry(
            "osgb4000000074000003",
            "Nowhere",
            "populatedPlace",
            "Village",
            "east",
            "92300",
        ));
        content.push_str(&entry("", "No id", "populatedPlace", "Village", "1", "1"));
        content.push_str("osgb1,short,row\n");
        content.push_str(&entry(
            "osgb4000000074000004",
            "Far",
            "populatedPlace",
            "Hamlet",
            "800000",
            "1",
        ));
        let f = temp_file(content.as_bytes());
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 2);
        let (line, r) = &ok[0];
        assert_eq!(*line, 1);
        assert_eq!(
            (
                r.id.as_str(),
                r.name.as_str(),
                r.populated,
                r.local_type.as_str(),
                r.x,
                r.y
            ),
            (
                "osgb4000000074000001",
                "Heavitree",
                true,
                "Suburban Area",
                294_500.0,
                92_300.0
            )
        );
        assert_eq!(
            (
                r.postcode_district.as_deref(),
                r.district_borough.as_deref(),
                r.county_unitary.as_deref(),
                r.region.as_deref(),
                r.country.as_deref(),
                r.name_alt.as_deref()
            ),
            (
                Some("EX1"),
                Some("Exeter"),
                None,
                Some("South West"),
                Some("England"),
                None
            )
        );
        assert!(!ok[1].1.populated);
        let lines: Vec<u64> = bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, [3, 4, 5, 6]);
        assert!(bad[0].reason.contains("GEOMETRY_X"), "{}", bad[0].reason);
        assert!(bad[1].reason.contains("blank ID"));
        assert!(bad[2].reason.contains("expected 34 columns"));
        assert!(bad[3].reason.contains("British National Grid"));
        assert!(is_headerless_record(&super::super::csvio::parse_line(
            entry("osgb1", "x", "populatedPlace", "Town", "1", "2")
                .trim_end()
                .as_bytes()
        )));
    }

    #[test]
    fn the_documented_header_in_front_is_skipped() {
        let header = "ID,NAMES_URI,NAME1,NAME1_LANG,NAME2,NAME2_LANG,TYPE,LOCAL_TYPE,GEOMETRY_X,GEOMETRY_Y,MOST_DETAIL_VIEW_RES,LEAST_DETAIL_VIEW_RES,MBR_XMIN,MBR_YMIN,MBR_XMAX,MBR_YMAX,POSTCODE_DISTRICT,POSTCODE_DISTRICT_URI,POPULATED_PLACE,POPULATED_PLACE_URI,POPULATED_PLACE_TYPE,DISTRICT_BOROUGH,DISTRICT_BOROUGH_URI,DISTRICT_BOROUGH_TYPE,COUNTY_UNITARY,COUNTY_UNITARY_URI,COUNTY_UNITARY_TYPE,REGION,REGION_URI,COUNTRY,COUNTRY_URI,RELATED_SPATIAL_OBJECT,SAME_AS_DBPEDIA,SAME_AS_GEONAMES\n";
        assert_eq!(header.trim_end().split(',').count(), COLUMNS);
        let content = format!(
            "{header}{}",
            entry(
                "osgb4000000074000001",
                "Heavitree",
                "populatedPlace",
                "Suburban Area",
                "294500",
                "92300"
            )
        );
        let f = temp_file(content.as_bytes());
        let (ok, bad) = split(read(f.path()).unwrap());
        assert!(bad.is_empty());
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].0, 2);
    }
}
