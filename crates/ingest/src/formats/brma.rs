//! The broad rental market area (BRMA) lookup: which BRMA a postcode unit, sector or district
//! lies in. The VOA assigns every postcode to one BRMA; this reads that assignment as a header CSV
//! with one row per postcode unit, sector or district and its BRMA.
//!
//! Columns, found by name (first listed name that is present wins):
//! - area (required): `postcode`, `pcds`, `postcode_sector`, `sector`, `postcode_district`,
//!   `district`, `area`: a full postcode (`EX1 1AA`, any spacing or case), a sector (`EX1 1`) or a
//!   district (`EX1`);
//! - BRMA name (required): `brma`, `brma_name`;
//! - `brma_code` (optional).
//!
//! Rejections: a wrong column count, a blank BRMA, and an area that is none of a postcode, a
//! sector or a district.

use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use std::io;
use std::path::Path;
use terrace_core::Postcode;

/// One assignment of a postcode unit, sector or district to a BRMA.
#[derive(Debug, Clone, PartialEq)]
pub struct BrmaAreaRow {
    /// Canonical: `EX1 1AA`, `EX1 1` or `EX1`.
    pub area: String,
    /// `unit`, `sector` or `district`.
    pub kind: &'static str,
    pub brma: String,
    pub brma_code: Option<String>,
}

const AREA: &[&str] = &[
    "postcode",
    "pcds",
    "postcode-sector",
    "sector",
    "postcode-district",
    "district",
    "area",
];
const BRMA: &[&str] = &["brma", "brma-name"];

#[derive(Debug, Clone)]
struct Columns {
    area: usize,
    brma: usize,
    brma_code: Option<usize>,
}

/// Opens a BRMA lookup CSV (see the module documentation for the columns).
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<BrmaAreaRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let cols = Columns {
        area: h.require(&source.file, AREA)?,
        brma: h.require(&source.file, BRMA)?,
        brma_code: h.find(&["brma-code"]),
    };
    let rows = source.rows(h.len(), move |fields| parse_row(fields, &cols));
    Ok(Some(rows).into_iter().flatten())
}

fn parse_row(fields: &[String], c: &Columns) -> Result<BrmaAreaRow, String> {
    let raw_area = field(fields, Some(c.area)).ok_or("blank postcode area")?;
    let (area, kind) = area(raw_area).ok_or_else(|| {
        format!("{raw_area:?} is not a postcode, a postcode sector or a postcode district")
    })?;
    let brma = field(fields, Some(c.brma)).ok_or("blank BRMA")?.to_string();
    Ok(BrmaAreaRow {
        area,
        kind,
        brma,
        brma_code: value::text(field(fields, c.brma_code)),
    })
}

/// The canonical form and kind of a postcode unit, sector or district.
pub fn area(v: &str) -> Option<(String, &'static str)> {
    if let Ok(p) = Postcode::parse(v) {
        return Some((p.as_str().to_string(), "unit"));
    }
    let words: Vec<&str> = v.split_whitespace().collect();
    match words.as_slice() {
        [outward, digit] if digit.len() == 1 && digit.bytes().all(|b| b.is_ascii_digit()) => {
            let d = Postcode::parse_district(outward).ok()?;
            (d == outward.to_ascii_uppercase()).then(|| (format!("{d} {digit}"), "sector"))
        }
        [one] => {
            let d = Postcode::parse_district(one).ok()?;
            Some((d, "district"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    #[test]
    fn units_sectors_and_districts() {
        let f = temp_file(
            b"Postcode,BRMA,BRMA Code\n\
              ex1 1aa,Exeter,BRMA-043\n\
              EX2 4,Exeter,BRMA-043\n\
              ex4,Exeter,\n\
              EX1 1AA X,Exeter,BRMA-043\n\
              not a postcode,Exeter,\n\
              EX5,,\n\
              ,Exeter,\n",
        );
        let (ok, bad) = split(read(f.path()).expect("opens"));
        let got: Vec<(u64, &str, &str, &str, Option<&str>)> = ok
            .iter()
            .map(|(l, r)| {
                (
                    *l,
                    r.area.as_str(),
                    r.kind,
                    r.brma.as_str(),
                    r.brma_code.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (2, "EX1 1AA", "unit", "Exeter", Some("BRMA-043")),
                (3, "EX2 4", "sector", "Exeter", Some("BRMA-043")),
                (4, "EX4", "district", "Exeter", None),
            ]
        );
        let reasons: Vec<(u64, &str)> = bad.iter().map(|b| (b.line, b.reason.as_str())).collect();
        assert_eq!(
            reasons,
            vec![
                (
                    5,
                    "\"EX1 1AA X\" is not a postcode, a postcode sector or a postcode district"
                ),
                (
                    6,
                    "\"not a postcode\" is not a postcode, a postcode sector or a postcode district"
                ),
                (7, "blank BRMA"),
                (8, "blank postcode area"),
            ]
        );
    }

    #[test]
    fn header_must_name_area_and_brma() {
        for header in ["postcode,brma_code\n", "brma,rate\n"] {
            let f = temp_file(format!("{header}x,y\n").as_bytes());
            assert_eq!(
                read(f.path()).err().map(|e| e.kind()),
                Some(io::ErrorKind::InvalidData),
                "{header}"
            );
        }
    }
}
