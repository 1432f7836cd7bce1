//! The address register in AddressBase Plus CSV column names.
//!
//! A header row is required; columns are read by name and others ignored:
//! `UPRN, PARENT_UPRN, CLASS, SAO_START_NUMBER, SAO_START_SUFFIX, SAO_END_NUMBER, SAO_END_SUFFIX,
//! SAO_TEXT, PAO_START_NUMBER, PAO_START_SUFFIX, PAO_END_NUMBER, PAO_END_SUFFIX, PAO_TEXT,
//! STREET_DESCRIPTION, LOCALITY, TOWN_NAME, POSTCODE_LOCATOR, X_COORDINATE, Y_COORDINATE,
//! LATITUDE, LONGITUDE` (only UPRN is required).
//!
//! SAON and PAON are built the same way (see [`AddressRow::saon`]).
//! A missing coordinate pair is computed from the other pair (OSTN15); a row with neither keeps
//! all four `None`.
//! Rejections: wrong column count, a UPRN that is not a positive integer, a coordinate or an
//! address number that is present but not a number.

use super::csvio::{Header, Opened, field};
use super::open_uprn::{complete, coordinate};
use super::{Parsed, value};
use std::io;
use std::path::Path;

/// One addressable object.
#[derive(Debug, Clone, PartialEq)]
pub struct AddressRow {
    pub uprn: i64,
    pub parent_uprn: Option<i64>,
    pub class: Option<String>,
    /// The secondary addressable object: text and number range combined.
    ///
    /// The number range is `start[suffix]`, or `start[suffix]-end[suffix]` (`2A`, `63-65`,
    /// `1A-1C`). With no text the SAON is the range alone. With text and a range:
    /// - if the text is a single unit word (`FLAT`, `APARTMENT`, `UNIT`, `STUDIO`, `SUITE`, `ROOM`,
    ///   `MAISONETTE`, `BLOCK`, `PLOT`, `BERTH`, `PITCH`, `STALL`, `SHOP`, `OFFICE`), the range
    ///   follows it after a space: `FLAT` + 2 gives `FLAT 2`;
    /// - otherwise the text is a name and the range follows after a comma: `KINGS COURT` + 10
    ///   gives `KINGS COURT, 10` (the Price Paid convention for named and numbered buildings).
    pub saon: Option<String>,
    /// The primary addressable object, built from the `PAO_*` columns by the same rule as `saon`.
    pub paon: Option<String>,
    pub street: Option<String>,
    pub locality: Option<String>,
    pub town: Option<String>,
    /// Canonical postcode; `None` when blank or malformed.
    pub postcode: Option<String>,
    /// Easting, BNG metres.
    pub x: Option<f64>,
    /// Northing, BNG metres.
    pub y: Option<f64>,
    pub lat: Option<f64>,
    pub lon: Option<f64>,
}

/// Columns that only AddressBase files have (used by `sniff`), in lower-kebab case.
pub(crate) const MARKER_COLUMNS: &[&str] = &[
    "parent-uprn",
    "sao-text",
    "sao-start-number",
    "pao-text",
    "pao-start-number",
    "street-description",
    "postcode-locator",
];

const UNIT_WORDS: &[&str] = &[
    "FLAT",
    "APARTMENT",
    "UNIT",
    "STUDIO",
    "SUITE",
    "ROOM",
    "MAISONETTE",
    "BLOCK",
    "PLOT",
    "BERTH",
    "PITCH",
    "STALL",
    "SHOP",
    "OFFICE",
];

/// The five columns of one addressable object: start number and suffix, end number and suffix, text.
#[derive(Debug, Clone, Copy)]
struct AoColumns {
    start: Option<usize>,
    start_suffix: Option<usize>,
    end: Option<usize>,
    end_suffix: Option<usize>,
    text: Option<usize>,
}

impl AoColumns {
    fn new(header: &Header, prefix: &str) -> Self {
        let f = |n: &str| header.find(&[format!("{prefix}-{n}").as_str()]);
        Self {
            start: f("start-number"),
            start_suffix: f("start-suffix"),
            end: f("end-number"),
            end_suffix: f("end-suffix"),
            text: f("text"),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Columns {
    uprn: usize,
    parent_uprn: Option<usize>,
    class: Option<usize>,
    sao: AoColumns,
    pao: AoColumns,
    street: Option<usize>,
    locality: Option<usize>,
    town: Option<usize>,
    postcode: Option<usize>,
    x: Option<usize>,
    y: Option<usize>,
    lat: Option<usize>,
    lon: Option<usize>,
}

/// Opens an AddressBase-style CSV; the header must name UPRN.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<AddressRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let header = Header::new(source.header()?.unwrap_or_default());
    let width = header.len();
    let cols = if width == 0 {
        None
    } else {
        Some(Columns {
            uprn: header.require(&source.file, &["uprn"])?,
            parent_uprn: header.find(&["parent-uprn"]),
            class: header.find(&["class"]),
            sao: AoColumns::new(&header, "sao"),
            pao: AoColumns::new(&header, "pao"),
            street: header.find(&["street-description"]),
            locality: header.find(&["locality"]),
            town: header.find(&["town-name"]),
            postcode: header.find(&["postcode-locator", "postcode"]),
            x: header.find(&["x-coordinate"]),
            y: header.find(&["y-coordinate"]),
            lat: header.find(&["latitude"]),
            lon: header.find(&["longitude"]),
        })
    };
    Ok(source.rows(width, move |fields| match cols {
        Some(c) => parse_row(fields, c),
        None => Err("no header".into()),
    }))
}

/// `number[suffix]`; an error when the number is present but not a non-negative integer.
fn numbered(
    fields: &[String],
    number: Option<usize>,
    suffix: Option<usize>,
) -> Result<Option<String>, String> {
    let Some(n) = value::present(field(fields, number)) else {
        return Ok(None);
    };
    let n = value::int(n)
        .filter(|n| *n >= 0)
        .ok_or_else(|| format!("bad address number {n:?}"))?;
    let suffix = value::present(field(fields, suffix)).unwrap_or_default();
    Ok(Some(format!("{n}{}", suffix.to_ascii_uppercase())))
}

/// Builds a SAON or PAON; see [`AddressRow::saon`] for the rule.
fn addressable_object(fields: &[String], c: AoColumns) -> Result<Option<String>, String> {
    let start = numbered(fields, c.start, c.start_suffix)?;
    let end = numbered(fields, c.end, c.end_suffix)?;
    let range = match (start, end) {
        (Some(s), Some(e)) if s != e => Some(format!("{s}-{e}")),
        (Some(s), _) => Some(s),
        (None, e) => e,
    };
    let text = value::text(field(fields, c.text));
    Ok(match (text, range) {
        (None, r) => r,
        (Some(t), None) => Some(t),
        (Some(t), Some(r)) if UNIT_WORDS.iter().any(|w| w.eq_ignore_ascii_case(&t)) => {
            Some(format!("{t} {r}"))
        }
        (Some(t), Some(r)) => Some(format!("{t}, {r}")),
    })
}

fn parse_row(fields: &[String], c: Columns) -> Result<AddressRow, String> {
    let raw = field(fields, Some(c.uprn)).ok_or("missing UPRN")?;
    let uprn = value::uprn(raw).ok_or_else(|| format!("bad UPRN {raw:?}"))?;
    let text = |i: Option<usize>| value::text(field(fields, i));
    let bng =
        coordinate(fields, c.x, "X_COORDINATE")?.zip(coordinate(fields, c.y, "Y_COORDINATE")?);
    let wgs = coordinate(fields, c.lat, "LATITUDE")?.zip(coordinate(fields, c.lon, "LONGITUDE")?);
    let position = complete(bng, wgs)?;
    Ok(AddressRow {
        uprn,
        parent_uprn: value::present(field(fields, c.parent_uprn)).and_then(value::uprn),
        class: text(c.class),
        saon: addressable_object(fields, c.sao)?,
        paon: addressable_object(fields, c.pao)?,
        street: text(c.street),
        locality: text(c.locality),
        town: text(c.town),
        postcode: value::postcode(field(fields, c.postcode)),
        x: position.map(|p| p.0),
        y: position.map(|p| p.1),
        lat: position.map(|p| p.2),
        lon: position.map(|p| p.3),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    const HEADER: &str = "UPRN,PARENT_UPRN,CLASS,SAO_START_NUMBER,SAO_START_SUFFIX,SAO_END_NUMBER,SAO_END_SUFFIX,SAO_TEXT,PAO_START_NUMBER,PAO_START_SUFFIX,PAO_END_NUMBER,PAO_END_SUFFIX,PAO_TEXT,STREET_DESCRIPTION,LOCALITY,TOWN_NAME,POSTCODE_LOCATOR,X_COORDINATE,Y_COORDINATE,LATITUDE,LONGITUDE,RPC";

    fn parse(rows: &[&str]) -> (Vec<(u64, AddressRow)>, Vec<super::super::Rejection>) {
        let f = temp_file(format!("{HEADER}\n{}\n", rows.join("\n")).as_bytes());
        split(read(f.path()).expect("opens"))
    }

    #[track_caller]
    fn check_ao(sao: [&str; 5], pao: [&str; 5], expect: (Option<&str>, Option<&str>)) {
        let (sao, pao) = (sao.join(","), pao.join(","));
        let row = format!("1,,RD06,{sao},{pao},HIGH STREET,,EXETER,EX1 1AA,,,,,1");
        let (ok, bad) = parse(&[&row]);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(
            (ok[0].1.saon.as_deref(), ok[0].1.paon.as_deref()),
            expect,
            "{row}"
        );
    }

    #[test]
    fn saon_and_paon_rules() {
        let none = ["", "", "", "", ""];
        check_ao(["2", "", "", "", "FLAT"], none, (Some("FLAT 2"), None));
        check_ao(["2", "a", "", "", ""], none, (Some("2A"), None));
        check_ao(none, ["63", "", "65", "", ""], (None, Some("63-65")));
        check_ao(none, ["1", "A", "1", "C", ""], (None, Some("1A-1C")));
        check_ao(
            none,
            ["", "", "", "", "KINGS COURT"],
            (None, Some("KINGS COURT")),
        );
        check_ao(none, ["10", "", "", "", ""], (None, Some("10")));
        check_ao(
            none,
            ["10", "", "", "", "KINGS COURT"],
            (None, Some("KINGS COURT, 10")),
        );
        check_ao(
            ["", "", "", "", "FLAT 3"],
            ["12", "", "12", "", ""],
            (Some("FLAT 3"), Some("12")),
        );
        check_ao(["4", "", "", "", "Unit"], none, (Some("Unit 4"), None));
    }

    #[test]
    fn rows_coordinates_and_rejections() {
        let (ok, bad) = parse(&[
            "10023122757,10023122700,RD06,2,,,,FLAT,10,,,,,HIGH STREET,HEAVITREE,EXETER,ex11aa,292000.5,92500.25,50.72,-3.53,1",
            "10023122758,,RD04,,,,,,11,,,,,HIGH STREET,,EXETER,EX1 1AA,292010,92510,,,1",
            "10023122759,,RD04,,,,,,12,,,,,HIGH STREET,,EXETER,BAD,,,50.7273383,-3.5209814,1",
            "10023122760,,RD04,,,,,,13,,,,,HIGH STREET,,EXETER,,,,,,1",
            "0,,RD04,,,,,,13,,,,,HIGH STREET,,EXETER,,,,,,1",
            "10023122761,,RD04,,,,,,x13,,,,,HIGH STREET,,EXETER,,,,,,1",
            "10023122762,,RD04,,,,,,13,,,,,HIGH STREET,,EXETER,,abc,1,,,1",
            "10023122763,,RD04",
        ]);
        assert_eq!(ok.len(), 4);
        let r = &ok[0].1;
        assert_eq!(r.uprn, 10_023_122_757);
        assert_eq!(r.parent_uprn, Some(10_023_122_700));
        assert_eq!(r.class.as_deref(), Some("RD06"));
        assert_eq!(
            (r.saon.as_deref(), r.paon.as_deref()),
            (Some("FLAT 2"), Some("10"))
        );
        assert_eq!(
            (
                r.street.as_deref(),
                r.locality.as_deref(),
                r.town.as_deref()
            ),
            (Some("HIGH STREET"), Some("HEAVITREE"), Some("EXETER"))
        );
        assert_eq!(r.postcode.as_deref(), Some("EX1 1AA"));
        assert_eq!(
            (r.x, r.y, r.lat, r.lon),
            (Some(292_000.5), Some(92_500.25), Some(50.72), Some(-3.53))
        );

        let r = &ok[1].1; // lat/lon computed from X/Y
        assert!(
            r.lat.is_some_and(|l| (l - 50.72).abs() < 0.02)
                && r.lon.is_some_and(|l| (l + 3.53).abs() < 0.02),
            "{r:?}"
        );
        let r = &ok[2].1; // X/Y computed from lat/lon; a malformed postcode is None
        assert!(
            r.x.is_some_and(|x| (x - 292_100.0).abs() < 1_000.0),
            "{r:?}"
        );
        assert_eq!(r.postcode, None);
        let r = &ok[3].1;
        assert_eq!(
            (r.x, r.y, r.lat, r.lon, r.postcode.as_deref()),
            (None, None, None, None, None)
        );

        let reasons: Vec<_> = bad.iter().map(|b| (b.line, b.reason.as_str())).collect();
        assert_eq!(
            reasons,
            vec![
                (6, "bad UPRN \"0\""),
                (7, "bad address number \"x13\""),
                (8, "bad X_COORDINATE \"abc\""),
                (9, "expected 22 columns, found 3"),
            ]
        );
    }

    #[test]
    fn header_must_name_uprn() {
        let f = temp_file(b"ID,PAO_TEXT\n1,A\n");
        assert_eq!(
            read(f.path()).err().map(|e| e.kind()),
            Some(io::ErrorKind::InvalidData)
        );
    }
}
