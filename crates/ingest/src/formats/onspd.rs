//! ONS Postcode Directory (ONSPD) and National Statistics Postcode Directory (NSPD) CSVs.
//!
//! Columns by name (the directories add and rename columns between releases):
//! postcode `pcds`, `pcd`, `pcd2`, `pcd7` or `pcd8` (required); local authority `laua`, `oslaua`
//! or `ladYYcd`; LSOA `lsoa21`/`lsoa11` (or `lsoaYYcd`, newest first); country `ctry` or
//! `ctryYYcd`; ward `osward` or `wdYYcd`; MSOA `msoa21`/`msoa11` (or `msoaYYcd`); county
//! `oscty` or `ctyYYcd`; region `rgn` or `rgnYYcd`; grid reference `oseast1m`/`osnrth1m` (or `east1m`/`north1m`); `lat`, `long`;
//! `doterm` (a postcode is terminated when it is non-empty).
//! Blank values and the `nan` some re-publishers write become `None`, and so does the directory's
//! "no grid reference" position (latitude 99.999999, or easting and northing both 0).
//! Rejections: wrong column count, a malformed postcode, a coordinate that is not a number.

use super::csvio::{Header, Opened, field};
use super::open_uprn::coordinate;
use super::{Parsed, value};
use std::io;
use std::path::Path;
use terrace_core::Postcode;

/// One postcode from the directory.
#[derive(Debug, Clone, PartialEq)]
pub struct OnspdRow {
    /// Canonical postcode.
    pub postcode: String,
    pub lad_code: Option<String>,
    pub lsoa_code: Option<String>,
    pub country_code: Option<String>,
    pub ward_code: Option<String>,
    pub msoa_code: Option<String>,
    pub county_code: Option<String>,
    pub region_code: Option<String>,
    pub easting: Option<f64>,
    pub northing: Option<f64>,
    pub lat: Option<f64>,
    pub lon: Option<f64>,
    pub terminated: bool,
}

const POSTCODE_COLUMNS: &[&str] = &["pcds", "pcd", "pcd2", "pcd7", "pcd8"];

/// The postcode column of a directory header, if it is one.
pub(crate) fn postcode_column(names: &[String]) -> Option<usize> {
    POSTCODE_COLUMNS
        .iter()
        .find_map(|c| names.iter().position(|n| n == c))
}

/// The column named `prefix` + two digits + `suffix` with the highest digits (the newest vintage).
fn newest(header: &Header, prefix: &str, suffix: &str) -> Option<usize> {
    header
        .names
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let digits = n.strip_prefix(prefix)?.strip_suffix(suffix)?;
            let ok = digits.len() == 2 && digits.bytes().all(|b| b.is_ascii_digit());
            ok.then(|| (digits.to_string(), i))
        })
        .max()
        .map(|(_, i)| i)
}

#[derive(Debug, Clone, Copy)]
struct Columns {
    postcode: usize,
    lad: Option<usize>,
    lsoa: Option<usize>,
    country: Option<usize>,
    ward: Option<usize>,
    msoa: Option<usize>,
    county: Option<usize>,
    region: Option<usize>,
    east: Option<usize>,
    north: Option<usize>,
    lat: Option<usize>,
    lon: Option<usize>,
    doterm: Option<usize>,
}

/// Opens a postcode directory CSV; the header must name a postcode column.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<OnspdRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let header = Header::new(source.header()?.unwrap_or_default());
    let width = header.len();
    let cols = if width == 0 {
        None
    } else {
        Some(Columns {
            postcode: header.require(&source.file, POSTCODE_COLUMNS)?,
            lad: header
                .find(&["laua", "oslaua"])
                .or_else(|| newest(&header, "lad", "cd")),
            lsoa: header
                .find(&["lsoa21", "lsoa11"])
                .or_else(|| newest(&header, "lsoa", "cd"))
                .or_else(|| header.find(&["lsoa01"])),
            country: header
                .find(&["ctry"])
                .or_else(|| newest(&header, "ctry", "cd")),
            ward: header
                .find(&["osward"])
                .or_else(|| newest(&header, "wd", "cd")),
            msoa: header
                .find(&["msoa21", "msoa11"])
                .or_else(|| newest(&header, "msoa", "cd")),
            county: header
                .find(&["oscty"])
                .or_else(|| newest(&header, "cty", "cd")),
            region: header
                .find(&["rgn"])
                .or_else(|| newest(&header, "rgn", "cd")),
            east: header.find(&["oseast1m", "east1m"]),
            north: header.find(&["osnrth1m", "north1m"]),
            lat: header.find(&["lat", "latitude"]),
            lon: header.find(&["long", "lon", "longitude"]),
            doterm: header.find(&["doterm"]),
        })
    };
    Ok(source.rows(width, move |fields| match cols {
        Some(c) => parse_row(fields, c),
        None => Err("no header".into()),
    }))
}

/// The directories fill a column with a pseudo-code where a postcode has no area of the kind
/// (`E99999999` for "no county", `L99999999`, `M99999999` on the islands): only a code of the
/// form `[EWSN]dd` + six digits that is not all nines is kept.
fn gss(v: Option<String>) -> Option<String> {
    v.filter(|c| terrace_core::GssCode::parse(c).is_ok() && !c.ends_with("999999"))
}

fn parse_row(fields: &[String], c: Columns) -> Result<OnspdRow, String> {
    let raw = field(fields, Some(c.postcode)).ok_or("missing postcode")?;
    let postcode = Postcode::parse(raw).map_err(|_| format!("malformed postcode {raw:?}"))?;
    let code = |i: Option<usize>| value::text(field(fields, i));
    let (mut easting, mut northing) = (
        coordinate(fields, c.east, "oseast1m")?,
        coordinate(fields, c.north, "osnrth1m")?,
    );
    if easting == Some(0.0) && northing == Some(0.0) {
        (easting, northing) = (None, None);
    }
    let (mut lat, mut lon) = (
        coordinate(fields, c.lat, "lat")?,
        coordinate(fields, c.lon, "long")?,
    );
    if lat.is_some_and(|l| !(-90.0..=90.0).contains(&l)) {
        (lat, lon) = (None, None);
    }
    Ok(OnspdRow {
        postcode: postcode.into(),
        lad_code: code(c.lad),
        lsoa_code: code(c.lsoa),
        country_code: code(c.country),
        ward_code: gss(code(c.ward)),
        msoa_code: gss(code(c.msoa)),
        county_code: gss(code(c.county)),
        region_code: gss(code(c.region)),
        easting,
        northing,
        lat,
        lon,
        terminated: value::present(field(fields, c.doterm)).is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{sample, split, temp_file};

    fn parse(content: &str) -> (Vec<(u64, OnspdRow)>, Vec<super::super::Rejection>) {
        let f = temp_file(content.as_bytes());
        split(read(f.path()).expect("opens"))
    }

    #[test]
    fn full_directory_columns() {
        let (ok, bad) = parse(
            "pcd,pcd2,pcds,dointr,doterm,oseast1m,osnrth1m,ctry,lad23cd,lad19cd,lsoa11,lsoa21,lat,long\n\
             EX1 1AA,EX1  1AA,EX1 1AA,198001,,292269,92680,E92000001,E07000041,E07000040,E01019999,E01020000,50.72,-3.53\n\
             SW199AA,SW19 9AA,SW19 9AA,198001,200012,,,E92000001,nan,,,,99.999999,0.000000\n\
             XXXXXXX,,XX,198001,,,,,,,,,,\n\
             EX1 1AB,EX1  1AB,EX1 1AB,198001,,east,92680,E92000001,E07000041,,,,,\n",
        );
        assert_eq!(ok.len(), 2);
        assert_eq!(
            ok[0].1,
            OnspdRow {
                postcode: "EX1 1AA".into(),
                lad_code: Some("E07000041".into()), // lad23cd, the newest
                lsoa_code: Some("E01020000".into()), // lsoa21 before lsoa11
                country_code: Some("E92000001".into()),
                ward_code: None,
                msoa_code: None,
                county_code: None,
                region_code: None,
                easting: Some(292_269.0),
                northing: Some(92_680.0),
                lat: Some(50.72),
                lon: Some(-3.53),
                terminated: false,
            }
        );
        let r = &ok[1].1;
        assert_eq!(
            (
                r.postcode.as_str(),
                r.lad_code.as_deref(),
                r.easting,
                r.lat,
                r.lon,
                r.terminated
            ),
            ("SW19 9AA", None, None, None, None, true)
        );
        assert_eq!(bad.iter().map(|b| b.line).collect::<Vec<_>>(), vec![4, 5]);
    }

    #[test]
    fn ward_msoa_county_and_region_columns_of_both_directories() {
        // ONSPD names (osward, msoa21, oscty, rgn) and NSPD names (wd25cd, msoa21cd, cty25cd,
        // rgn25cd); the pseudo-code for "no county" is dropped.
        for header in [
            "pcds,laua,osward,msoa21,oscty,rgn,ctry",
            "pcds,lad25cd,wd25cd,msoa21cd,cty25cd,rgn25cd,ctry25cd",
        ] {
            let (ok, bad) = parse(&format!(
                "{header}\nEX1 1AA,E07000041,E05003491,E02004156,E10000008,E12000009,E92000001\n\
                 PO30 1AA,E06000046,E05008479,E02003306,E99999999,E12000008,E92000001\n"
            ));
            assert!(bad.is_empty(), "{bad:?}");
            let r = &ok[0].1;
            assert_eq!(
                (
                    r.ward_code.as_deref(),
                    r.msoa_code.as_deref(),
                    r.county_code.as_deref(),
                    r.region_code.as_deref()
                ),
                (
                    Some("E05003491"),
                    Some("E02004156"),
                    Some("E10000008"),
                    Some("E12000009")
                ),
                "{header}"
            );
            assert_eq!(ok[1].1.county_code, None, "{header}");
        }
    }

    #[test]
    fn missing_postcode_column() {
        let f = temp_file(b"laua,oseast1m\nE1,2\n");
        assert_eq!(
            read(f.path()).err().map(|e| e.kind()),
            Some(io::ErrorKind::InvalidData)
        );
    }

    #[test]
    fn real_nspd_sample() {
        let Some(p) = sample("postcodes/nspd_nov2025_via_qlacref_E07000041_E06000046_SW19.csv")
        else {
            return;
        };
        let (ok, bad) = split(read(&p).expect("opens"));
        println!(
            "onspd {}: read {} ok {} rejected {}",
            p.display(),
            ok.len() + bad.len(),
            ok.len(),
            bad.len()
        );
        assert_eq!((ok.len(), bad.len()), (14_836, 0));
        let (line, r) = &ok[0];
        assert_eq!(
            (
                *line,
                r.postcode.as_str(),
                r.lad_code.as_deref(),
                r.easting,
                r.northing
            ),
            (
                2,
                "EX1 1AA",
                Some("E07000041"),
                Some(292_269.0),
                Some(92_680.0)
            )
        );
        let lad = |code: &str| {
            ok.iter()
                .filter(|(_, r)| r.lad_code.as_deref() == Some(code))
                .count()
        };
        assert_eq!(
            (
                lad("E06000046"),
                lad("E07000041"),
                lad("E09000024"),
                lad("E09000032")
            ),
            (6_424, 5_513, 2_569, 293)
        );
        assert_eq!(ok.iter().filter(|(_, r)| r.lad_code.is_none()).count(), 37);
        assert_eq!(ok.iter().filter(|(_, r)| r.easting.is_none()).count(), 37);
        assert!(ok.iter().any(|(_, r)| r.postcode == "SW19 9AA"));
        assert!(ok.iter().all(|(_, r)| !r.terminated && r.lat.is_none()));
    }
}
