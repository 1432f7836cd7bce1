//! The operator's HMO licence register feed: the licences of houses in multiple occupation that
//! local housing authorities publish (each in its own layout), gathered by the operator into one
//! CSV with a header, columns found by name (case and `_`/`-`/space ignored), one row per licence:
//! - `licence_number` (required), `authority` (required: the licensing local authority's GSS
//!   code, `E06000023`), `address` (required), `postcode`, `uprn` (optional: left to the address
//!   matcher);
//! - `storeys`, `max_occupants`, `households`: whole numbers (storeys 1-100, occupants and
//!   households 1-1,000);
//! - `licence_start`, `licence_end`: `YYYY-MM-DD` (or `DD/MM/YYYY`).
//!
//! Rejections: a wrong column count, a missing licence number, authority or address, an
//! authority that is not a GSS code (a letter and eight digits), a UPRN that
//! is not a positive integer of at most 12 digits, a count out of range or not whole, an
//! unreadable date, an end before the start, more households than occupants.

use super::Parsed;
use super::csvio::{Header, Opened, field};
use super::value;
use chrono::NaiveDate;
use std::io;
use std::path::Path;

/// One licence.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HmoLicence {
    pub licence_number: String,
    pub authority: String,
    pub address: String,
    pub postcode: Option<String>,
    pub uprn: Option<i64>,
    pub storeys: Option<i32>,
    pub max_occupants: Option<i32>,
    pub households: Option<i32>,
    pub licence_start: Option<NaiveDate>,
    pub licence_end: Option<NaiveDate>,
}

impl HmoLicence {
    /// The stored key: `<authority>|<licence number>`.
    pub fn key(&self) -> String {
        format!("{}|{}", self.authority, self.licence_number)
    }
}

/// Whether a normalised header is an HMO licence register feed.
pub fn is_header(names: &[String]) -> bool {
    names.iter().any(|n| n == "licence-number")
        && names
            .iter()
            .any(|n| n == "max-occupants" || n == "households")
}

fn count(name: &str, v: Option<&str>, max: i64) -> Result<Option<i32>, String> {
    match value::present(v) {
        None => Ok(None),
        Some(v) => value::int(v)
            .filter(|n| (1..=max).contains(n))
            .map(|n| Some(n as i32))
            .ok_or_else(|| format!("{name} {v:?} is not a whole number from 1 to {max}")),
    }
}

fn date(name: &str, v: Option<&str>) -> Result<Option<NaiveDate>, String> {
    match value::present(v) {
        None => Ok(None),
        Some(v) => value::date(v)
            .map(Some)
            .ok_or_else(|| format!("{name} {v:?} is not a date (YYYY-MM-DD)")),
    }
}

fn gss(v: String) -> Result<String, String> {
    let b = v.as_bytes();
    if b.len() == 9 && b[0].is_ascii_uppercase() && b[1..].iter().all(u8::is_ascii_digit) {
        Ok(v)
    } else {
        Err(format!(
            "authority {v:?} is not a GSS code (a letter and eight digits)"
        ))
    }
}

fn required(name: &str, v: Option<&str>) -> Result<String, String> {
    value::text(v).ok_or_else(|| format!("{name} is missing"))
}

pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<HmoLicence>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let number = h.require(&source.file, &["licence-number", "license-number"])?;
    let authority = h.require(&source.file, &["authority", "licensing-authority"])?;
    let address = h.require(&source.file, &["address"])?;
    let [postcode, uprn, storeys, occupants, households, start, end] = [
        "postcode",
        "uprn",
        "storeys",
        "max-occupants",
        "households",
        "licence-start",
        "licence-end",
    ]
    .map(|c| h.find(&[c]));
    let rows = source.rows(h.len(), move |f| {
        let uprn = match value::present(field(f, uprn)) {
            None => None,
            Some(u) => Some(
                value::uprn(u).ok_or_else(|| format!("UPRN {u:?} is not a positive integer"))?,
            ),
        };
        let row = HmoLicence {
            licence_number: required("licence_number", field(f, Some(number)))?,
            authority: gss(required("authority", field(f, Some(authority)))?)?,
            address: required("address", field(f, Some(address)))?,
            postcode: value::postcode(field(f, postcode)),
            uprn,
            storeys: count("storeys", field(f, storeys), 100)?,
            max_occupants: count("max_occupants", field(f, occupants), 1_000)?,
            households: count("households", field(f, households), 1_000)?,
            licence_start: date("licence_start", field(f, start))?,
            licence_end: date("licence_end", field(f, end))?,
        };
        if let (Some(s), Some(e)) = (row.licence_start, row.licence_end)
            && e < s
        {
            return Err(format!("licence_end {e} is before licence_start {s}"));
        }
        if let (Some(o), Some(hh)) = (row.max_occupants, row.households)
            && hh > o
        {
            return Err(format!("households {hh} is more than max_occupants {o}"));
        }
        Ok(row)
    });
    Ok(Some(rows).into_iter().flatten())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    #[test]
    fn rows_and_rejections() {
        let f = temp_file(
            b"Licence Number,Authority,Address,Postcode,UPRN,Storeys,Max Occupants,Households,Licence Start,Licence End\n\
              HMO/1,E06009901,\"1 High Street, Town\",XT1 1AA,990000000001,3,6,5,2024-01-01,2029-01-01\n\
              HMO/2,E06009901,2 High Street,,,,,,,\n\
              ,E06009901,3 High Street,,,,,,,\n\
              HMO/4,E06009901,4 High Street,,abc,,,,,\n\
              HMO/5,E06009901,5 High Street,,,2.5,,,,\n\
              HMO/6,E06009901,6 High Street,,,,4,5,,\n\
              HMO/7,E06009901,7 High Street,,,,,,2025-01-01,2024-01-01\n\
              HMO/8,E06009901,8 High Street,,,,,,someday,\n\
              HMO/9,E06009901\n\
              HMO/10,Tamberley,10 High Street,,,,,,,\n",
        );
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 2);
        assert_eq!(
            ok[0].1,
            HmoLicence {
                licence_number: "HMO/1".into(),
                authority: "E06009901".into(),
                address: "1 High Street, Town".into(),
                postcode: Some("XT1 1AA".into()),
                uprn: Some(990000000001),
                storeys: Some(3),
                max_occupants: Some(6),
                households: Some(5),
                licence_start: NaiveDate::from_ymd_opt(2024, 1, 1),
                licence_end: NaiveDate::from_ymd_opt(2029, 1, 1),
            }
        );
        assert_eq!(ok[0].1.key(), "E06009901|HMO/1");
        let lines: Vec<u64> = bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![4, 5, 6, 7, 8, 9, 10, 11]);
        for (b, word) in bad.iter().zip([
            "licence_number",
            "UPRN",
            "storeys",
            "households",
            "before",
            "licence_start",
            "column",
            "GSS",
        ]) {
            assert!(b.reason.contains(word), "{b:?} {word}");
        }
    }
}
