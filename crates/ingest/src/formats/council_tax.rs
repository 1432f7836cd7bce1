//! A council tax valuation list extract: one row per banded dwelling.
//!
//! There is no single national bulk format, so this reads any header CSV with these columns,
//! found by name (first listed name that is present wins):
//! - billing authority (optional): `ba_code`, `billing_authority_code`, `billing_authority`,
//!   `local_authority`;
//! - address (required): `address`, or address lines `address1`..`address4` (also spelt
//!   `address_1`, `address_line_1`) joined by ", "; a non-blank `address` wins over the lines;
//! - `postcode` (optional);
//! - band (required): `band`, `council_tax_band`;
//! - reference (required): `reference`, `ba_reference`, `property_reference`,
//!   `local_authority_reference`;
//! - `uprn` (optional).
//!
//! A header without an address, band or reference column is an `InvalidData` error.
//!
//! Rejections: a wrong column count, a blank reference, a blank address, and a band that is not a
//! single letter A–H (England) or A–I (Wales), any case. The country is known only from a billing
//! authority given as a GSS code (`E07000041`, `W06000015`): band I is rejected when that code is
//! not Welsh, and accepted when the authority is absent or given some other way (a name, a VOA
//! billing authority number), since it may be Welsh.
//! A UPRN that is not a positive integer and a malformed postcode become `None`.

use super::csvio::{Header, Opened, field};
use super::leases::collapse_dashes;
use super::{Parsed, value};
use std::io;
use std::path::Path;

/// One dwelling in a council tax valuation list.
#[derive(Debug, Clone, PartialEq)]
pub struct CouncilTaxRow {
    /// The billing authority's code or name, as given.
    pub billing_authority: Option<String>,
    /// The billing authority's reference for the property.
    pub reference: String,
    pub address: String,
    /// Canonical postcode; `None` when blank or malformed.
    pub postcode: Option<String>,
    /// `A`..`H`, or `I` (Wales), upper case.
    pub band: String,
    pub uprn: Option<i64>,
}

const AUTHORITY: &[&str] = &[
    "ba-code",
    "billing-authority-code",
    "billing-authority",
    "local-authority",
];
const ADDRESS: &[&str] = &["address"];
const BAND: &[&str] = &["band", "council-tax-band"];
const REFERENCE: &[&str] = &[
    "reference",
    "ba-reference",
    "property-reference",
    "local-authority-reference",
];

/// The column of address line `n` (1-based).
fn address_line(h: &Header, n: u8) -> Option<usize> {
    h.find(&[
        &format!("address{n}"),
        &format!("address-{n}"),
        &format!("address-line-{n}"),
        &format!("address-line{n}"),
    ])
}

/// Column positions, looked up once per file.
#[derive(Debug, Clone)]
struct Columns {
    authority: Option<usize>,
    address: Option<usize>,
    lines: Vec<usize>,
    postcode: Option<usize>,
    band: usize,
    reference: usize,
    uprn: Option<usize>,
}

/// Opens a council tax list CSV (see the module documentation for the columns).
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<CouncilTaxRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        // an empty file: no rows
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names.iter().map(|n| collapse_dashes(n)).collect());
    let lines: Vec<usize> = (1..=4).filter_map(|n| address_line(&h, n)).collect();
    let address = h.find(ADDRESS);
    if address.is_none() && lines.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: header has no address or address1..address4 column",
                source.file
            ),
        ));
    }
    let cols = Columns {
        authority: h.find(AUTHORITY),
        address,
        lines,
        postcode: h.find(&["postcode"]),
        band: h.require(&source.file, BAND)?,
        reference: h.require(&source.file, REFERENCE)?,
        uprn: h.find(&["uprn"]),
    };
    let rows = source.rows(h.len(), move |fields| parse_row(fields, &cols));
    Ok(Some(rows).into_iter().flatten())
}

fn parse_row(fields: &[String], c: &Columns) -> Result<CouncilTaxRow, String> {
    let get = |i: Option<usize>| value::present(field(fields, i));
    let reference = field(fields, Some(c.reference))
        .ok_or("blank reference")?
        .to_string();
    let address = get(c.address)
        .map(str::to_string)
        .or_else(|| {
            let parts: Vec<&str> = c.lines.iter().filter_map(|&i| get(Some(i))).collect();
            (!parts.is_empty()).then(|| parts.join(", "))
        })
        .ok_or("blank address")?;
    let billing_authority = value::text(field(fields, c.authority));
    let band = band(
        field(fields, Some(c.band)).unwrap_or_default(),
        billing_authority.as_deref(),
    )?;
    Ok(CouncilTaxRow {
        billing_authority,
        reference,
        address,
        postcode: value::postcode(get(c.postcode)),
        band,
        uprn: get(c.uprn).and_then(value::uprn),
    })
}

/// A GSS area code: a letter and eight digits.
fn is_gss(code: &str) -> bool {
    let b = code.as_bytes();
    b.len() == 9 && b[0].is_ascii_alphabetic() && b[1..].iter().all(u8::is_ascii_digit)
}

/// The band, upper case; see the module documentation for when `I` is allowed.
fn band(v: &str, authority: Option<&str>) -> Result<String, String> {
    let b = v.trim().to_ascii_uppercase();
    match b.as_str() {
        "A" | "B" | "C" | "D" | "E" | "F" | "G" | "H" => Ok(b),
        "I" => match authority {
            Some(a) if is_gss(a) && !a.starts_with(['W', 'w']) => Err(format!(
                "band I is only used in Wales, and billing authority {a} is not Welsh"
            )),
            Some(_) | None => Ok(b),
        },
        "" => Err("blank band".into()),
        _ => Err(format!(
            "band {v:?} is not a council tax band (A-H, or A-I in Wales)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    fn parse(content: &str) -> (Vec<(u64, CouncilTaxRow)>, Vec<super::super::Rejection>) {
        let f = temp_file(content.as_bytes());
        split(read(f.path()).expect("opens"))
    }

    fn reasons(bad: &[super::super::Rejection]) -> Vec<(u64, &str)> {
        bad.iter().map(|b| (b.line, b.reason.as_str())).collect()
    }

    #[test]
    fn free_text_address() {
        let (ok, bad) = parse(
            "ba_code,reference,address,postcode,band,uprn\n\
             E07000041,00012345,\"1 High Street, Exeter\",ex11aa,d,100040212345\n\
             E07000041,00012346,2 High Street,not a postcode, H ,x\n\
             E07000041,,3 High Street,EX1 1AA,D,\n\
             E07000041,00012348,,EX1 1AA,D,\n\
             E07000041,00012349,5 High Street,EX1 1AA,I,\n\
             E07000041,00012350,6 High Street,EX1 1AA,Band D,\n\
             E07000041,00012351,7 High Street,EX1 1AA,,\n\
             E07000041,short\n",
        );
        assert_eq!(
            ok,
            vec![
                (
                    2,
                    CouncilTaxRow {
                        billing_authority: Some("E07000041".into()),
                        reference: "00012345".into(),
                        address: "1 High Street, Exeter".into(),
                        postcode: Some("EX1 1AA".into()),
                        band: "D".into(),
                        uprn: Some(100_040_212_345),
                    }
                ),
                (
                    3,
                    CouncilTaxRow {
                        billing_authority: Some("E07000041".into()),
                        reference: "00012346".into(),
                        address: "2 High Street".into(),
                        postcode: None,
                        band: "H".into(),
                        uprn: None,
                    }
                ),
            ]
        );
        assert_eq!(
            reasons(&bad),
            vec![
                (4, "blank reference"),
                (5, "blank address"),
                (
                    6,
                    "band I is only used in Wales, and billing authority E07000041 is not Welsh"
                ),
                (
                    7,
                    "band \"Band D\" is not a council tax band (A-H, or A-I in Wales)"
                ),
                (8, "blank band"),
                (9, "expected 6 columns, found 2"),
            ]
        );
    }

    #[test]
    fn address_lines_and_wales() {
        let (ok, bad) = parse(
            "Billing Authority,Property Reference,Address 1,Address 2,Address 3,Address 4,Band\n\
             W06000015,CF-1,Flat 1,10 Queen Street,,Cardiff,i\n\
             Cardiff,CF-2,Flat 2,,,,I\n\
             W06000015,CF-3,,,,,A\n\
             W06000015,CF-4,Flat 4,,,,J\n",
        );
        assert_eq!(ok.len(), 2);
        let r = &ok[0].1;
        assert_eq!(r.billing_authority.as_deref(), Some("W06000015"));
        assert_eq!(r.reference, "CF-1");
        assert_eq!(r.address, "Flat 1, 10 Queen Street, Cardiff");
        assert_eq!(
            (r.band.as_str(), r.postcode.as_deref(), r.uprn),
            ("I", None, None)
        );
        assert_eq!(
            (ok[1].1.address.as_str(), ok[1].1.band.as_str()),
            ("Flat 2", "I")
        );
        assert_eq!(
            reasons(&bad),
            vec![
                (4, "blank address"),
                (
                    5,
                    "band \"J\" is not a council tax band (A-H, or A-I in Wales)"
                ),
            ]
        );
    }

    #[test]
    fn address_column_wins_over_lines_and_authority_is_optional() {
        let (ok, bad) = parse(
            "LOCAL_AUTHORITY_REFERENCE,ADDRESS,ADDRESS1,ADDRESS2,POSTCODE,BAND\n\
             R1,\"1 Low Road, Exeter\",1 Low Road,Exeter,EX1 1AB,c\n\
             R2,,2 Low Road,Exeter,EX1 1AB,c\n",
        );
        assert!(bad.is_empty());
        assert_eq!(ok[0].1.address, "1 Low Road, Exeter");
        assert_eq!(ok[1].1.address, "2 Low Road, Exeter");
        assert_eq!(ok[1].1.billing_authority, None);
        assert_eq!(ok[1].1.band, "C");
    }

    #[test]
    fn header_must_name_address_band_and_reference() {
        for header in [
            "reference,postcode,band\n",
            "reference,address,postcode\n",
            "address,postcode,band\n",
            "reference,address_line,band\n",
        ] {
            let f = temp_file(format!("{header}x,y,z\n").as_bytes());
            assert_eq!(
                read(f.path()).err().map(|e| e.kind()),
                Some(io::ErrorKind::InvalidData),
                "{header}"
            );
        }
        let f = temp_file(b"");
        assert_eq!(read(f.path()).map(Iterator::count).ok(), Some(0));
    }
}
