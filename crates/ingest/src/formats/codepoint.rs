//! OS Code-Point Open CSV: no header, 10 columns
//! `Postcode, Positional_quality_indicator, Eastings, Northings, Country_code,
//! NHS_regional_HA_code, NHS_HA_code, Admin_county_code, Admin_district_code, Admin_ward_code`.
//!
//! A file whose first line is the header (the long names, or the short `PC,PQ,EA,NO,...` of
//! `Code-Point_Open_Column_Headers.csv`) is read by those names instead.
//! Positional quality 90 means "no coordinates" (the file has 0, 0): such a row is kept with
//! `easting`/`northing` `None`, as is any row with 0, 0.
//! Rejections: wrong column count, a malformed postcode, a quality indicator that is not an
//! integer, eastings/northings that are not numbers.

use super::csvio::{self, Header, Opened, field, parse_line};
use super::{Parsed, value};
use std::io;
use std::path::Path;
use terrace_core::Postcode;

/// One Code-Point Open postcode unit.
#[derive(Debug, Clone, PartialEq)]
pub struct CodePointRow {
    /// Canonical postcode.
    pub postcode: String,
    /// Positional quality: 10 (within a premises), 20, 30, 40, 50, 60 (lower), 90 (none).
    pub quality: i32,
    pub easting: Option<f64>,
    pub northing: Option<f64>,
    pub country_code: Option<String>,
    pub admin_county_code: Option<String>,
    pub admin_district_code: Option<String>,
    pub admin_ward_code: Option<String>,
}

const NAMES: [&[&str]; 8] = [
    &["postcode", "pc"],
    &["positional-quality-indicator", "pq"],
    &["eastings", "ea"],
    &["northings", "no"],
    &["country-code", "cy"],
    &["admin-county-code", "cc"],
    &["admin-district-code", "dc"],
    &["admin-ward-code", "wc"],
];
const POSITIONS: [usize; 8] = [0, 1, 2, 3, 4, 7, 8, 9];

pub(crate) fn is_header(names: &[String]) -> bool {
    names.len() == 10
        && NAMES[0].contains(&names[0].as_str())
        && NAMES[1].contains(&names[1].as_str())
}

pub(crate) fn is_headerless_record(fields: &[String]) -> bool {
    fields.len() == 10
        && Postcode::parse(&fields[0]).is_ok()
        && fields[1].trim().parse::<i32>().is_ok()
}

/// Opens a Code-Point Open CSV file.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<CodePointRow>> + Send> {
    let opened = Opened::open(path)?;
    let names: Vec<String> = parse_line(opened.first_line())
        .iter()
        .map(|f| csvio::normalise_name(f))
        .collect();
    let (source, idx) = if is_header(&names) {
        let mut source = opened.into_source();
        let header = Header::new(source.header()?.unwrap_or_default());
        let mut idx = [0usize; 8];
        for (slot, candidates) in idx.iter_mut().zip(NAMES) {
            *slot = header.require(&source.file, candidates)?;
        }
        (source, idx)
    } else {
        (opened.into_source(), POSITIONS)
    };
    Ok(source.rows(10, move |fields| parse_row(fields, &idx)))
}

fn parse_row(fields: &[String], idx: &[usize; 8]) -> Result<CodePointRow, String> {
    let get = |i: usize| field(fields, Some(idx[i]));
    let raw = get(0).ok_or("missing postcode")?;
    let postcode = Postcode::parse(raw).map_err(|_| format!("malformed postcode {raw:?}"))?;
    let q = get(1).ok_or("missing positional quality indicator")?;
    let quality = q
        .parse::<i32>()
        .map_err(|_| format!("bad positional quality indicator {q:?}"))?;
    let number = |i: usize, what: &str| -> Result<Option<f64>, String> {
        match get(i) {
            None => Ok(None),
            Some(v) => value::float(v)
                .map(Some)
                .ok_or_else(|| format!("bad {what} {v:?}")),
        }
    };
    let (easting, northing) = (number(2, "eastings")?, number(3, "northings")?);
    let located = quality != 90 && !(easting == Some(0.0) && northing == Some(0.0));
    let code = |i: usize| value::text(get(i));
    Ok(CodePointRow {
        postcode: postcode.into(),
        quality,
        easting: easting.filter(|_| located),
        northing: northing.filter(|_| located),
        country_code: code(4),
        admin_county_code: code(5),
        admin_district_code: code(6),
        admin_ward_code: code(7),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{sample, split, temp_file};

    fn parse(content: &str) -> (Vec<(u64, CodePointRow)>, Vec<super::super::Rejection>) {
        let f = temp_file(content.as_bytes());
        split(read(f.path()).expect("opens"))
    }

    #[test]
    fn headerless_rows() {
        let (ok, bad) = parse(
            "\"EX1 1AE\",10,291966,92583,\"E92000001\",\"E19000002\",\"E18000010\",\"E10000008\",\"E07000041\",\"E05011020\"\n\
             \"EX6 9AB\",90,0,0,\"E92000001\",\"\",\"\",\"\",\"\",\"\"\n\
             \"PO301AA\",50,449000,89000,\"E92000001\",\"\",\"\",\"\",\"E06000046\",\"E05012345\"\n\
             \"NOTACODE\",10,1,2,\"E92000001\",\"\",\"\",\"\",\"\",\"\"\n\
             \"EX1 1AF\",high,1,2,\"E92000001\",\"\",\"\",\"\",\"\",\"\"\n\
             \"EX1 1AG\",10,east,2,\"E92000001\",\"\",\"\",\"\",\"\",\"\"\n\
             \"EX1 1AH\",10\n",
        );
        assert_eq!(ok.len(), 3);
        assert_eq!(
            ok[0].1,
            CodePointRow {
                postcode: "EX1 1AE".into(),
                quality: 10,
                easting: Some(291_966.0),
                northing: Some(92_583.0),
                country_code: Some("E92000001".into()),
                admin_county_code: Some("E10000008".into()),
                admin_district_code: Some("E07000041".into()),
                admin_ward_code: Some("E05011020".into()),
            }
        );
        assert_eq!(
            (
                ok[1].1.quality,
                ok[1].1.easting,
                ok[1].1.northing,
                ok[1].1.admin_district_code.clone()
            ),
            (90, None, None, None)
        );
        assert_eq!(ok[2].1.postcode, "PO30 1AA");
        assert_eq!(ok[2].1.admin_county_code, None);
        assert_eq!(
            bad.iter().map(|b| b.line).collect::<Vec<_>>(),
            vec![4, 5, 6, 7]
        );
        assert!(bad[0].reason.contains("malformed postcode"));
    }

    #[test]
    fn with_short_header() {
        let (ok, bad) = parse(
            "PC,PQ,EA,NO,CY,RH,LH,CC,DC,WC\r\n\"EX1 1AE\",10,291966,92583,\"E92000001\",\"\",\"\",\"\",\"E07000041\",\"E05011020\"\r\n",
        );
        assert!(bad.is_empty());
        assert_eq!(
            (ok[0].0, ok[0].1.easting, ok[0].1.admin_ward_code.as_deref()),
            (2, Some(291_966.0), Some("E05011020"))
        );
    }

    #[test]
    fn real_samples() {
        for (rel, rows, q50, unlocated, first, first_en) in [
            (
                "postcodes/codepoint_open_2024.1.0_ex.csv",
                22_718,
                25,
                "EX6 9AB",
                "EX1 1AE",
                (291_966.0, 92_583.0),
            ),
            (
                "postcodes/codepoint_open_2024.1.0_po.csv",
                24_362,
                31,
                "PO24 1AA",
                "",
                (0.0, 0.0),
            ),
        ] {
            let Some(p) = sample(rel) else { continue };
            let (ok, bad) = split(read(&p).expect("opens"));
            println!(
                "codepoint {}: read {} ok {} rejected {}",
                p.display(),
                ok.len() + bad.len(),
                ok.len(),
                bad.len()
            );
            assert_eq!((ok.len(), bad.len()), (rows, 0));
            assert_eq!(ok.iter().filter(|(_, r)| r.quality == 50).count(), q50);
            let none: Vec<&str> = ok
                .iter()
                .filter(|(_, r)| r.easting.is_none())
                .map(|(_, r)| r.postcode.as_str())
                .collect();
            assert_eq!(none, vec![unlocated]);
            if !first.is_empty() {
                let (line, r) = &ok[0];
                assert_eq!(
                    (*line, r.postcode.as_str(), r.easting, r.northing),
                    (1, first, Some(first_en.0), Some(first_en.1))
                );
            }
        }
    }
}
