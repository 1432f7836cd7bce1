//! Local Housing Allowance rates by broad rental market area (BRMA), as the VOA publishes them:
//! a header CSV per year, one row per BRMA and category.
//!
//! Columns, found by name (first listed name that is present wins):
//! - BRMA name (required): `brma`, `brma_name`;
//! - `brma_code` (optional);
//! - category (required): `category`, `bedrooms`;
//! - weekly rate (required): `weekly_rate`, `rate`;
//! - `valid_from` (optional).
//!
//! A header without a BRMA, category or rate column is an `InvalidData` error.
//!
//! The category is canonical: `shared`, `1`, `2`, `3` or `4` (bedrooms). Accepted spellings, any
//! case: `CAT A`..`CAT E` (also `Category A`, `CATA`; A is shared, B..E are 1..4 bedrooms),
//! `Shared accommodation` (also `Shared`, `Shared accommodation rate`, `Room`), `1 bedroom`,
//! `2 bedrooms` .. `4 bedrooms` (also `2 bed`, `2 beds`, `2`), and the canonical names.
//!
//! The rate is pounds per week to the penny (`£103.56`, `103.56`, `103.5`, `1,003.00`), kept as
//! whole pence.
//!
//! Rejections: a wrong column count, a blank BRMA, an unknown or blank category, and a rate that
//! is not a positive amount of pounds and pence. A malformed `valid_from` becomes `None`.

use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use chrono::NaiveDate;
use std::io;
use std::path::Path;

/// One LHA rate: a BRMA's weekly rate for one category of dwelling.
#[derive(Debug, Clone, PartialEq)]
pub struct LhaRow {
    pub brma: String,
    pub brma_code: Option<String>,
    /// `shared`, `1`, `2`, `3` or `4`.
    pub category: String,
    /// Pence per week, positive.
    pub weekly_rate_pence: i64,
    pub valid_from: Option<NaiveDate>,
}

const BRMA: &[&str] = &["brma", "brma-name"];
const CATEGORY: &[&str] = &["category", "bedrooms"];
const RATE: &[&str] = &["weekly-rate", "rate"];

/// Column positions, looked up once per file.
#[derive(Debug, Clone)]
struct Columns {
    brma: usize,
    brma_code: Option<usize>,
    category: usize,
    rate: usize,
    valid_from: Option<usize>,
}

/// Opens an LHA rates CSV (see the module documentation for the columns).
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<LhaRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        // an empty file: no rows
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let cols = Columns {
        brma: h.require(&source.file, BRMA)?,
        brma_code: h.find(&["brma-code"]),
        category: h.require(&source.file, CATEGORY)?,
        rate: h.require(&source.file, RATE)?,
        valid_from: h.find(&["valid-from"]),
    };
    let rows = source.rows(h.len(), move |fields| parse_row(fields, &cols));
    Ok(Some(rows).into_iter().flatten())
}

fn parse_row(fields: &[String], c: &Columns) -> Result<LhaRow, String> {
    let brma = field(fields, Some(c.brma)).ok_or("blank BRMA")?.to_string();
    let raw_category = field(fields, Some(c.category)).ok_or("blank category")?;
    let category = category(raw_category)
        .ok_or_else(|| format!("unknown category {raw_category:?}"))?
        .to_string();
    let raw_rate = field(fields, Some(c.rate)).unwrap_or_default();
    let weekly_rate_pence = pence(raw_rate)
        .filter(|p| *p > 0)
        .ok_or_else(|| format!("rate {raw_rate:?} is not a positive amount of pounds"))?;
    Ok(LhaRow {
        brma,
        brma_code: value::text(field(fields, c.brma_code)),
        category,
        weekly_rate_pence,
        valid_from: value::present(field(fields, c.valid_from)).and_then(value::date),
    })
}

/// The canonical category (see the module documentation), or `None` when not one.
fn category(v: &str) -> Option<&'static str> {
    let words: Vec<String> = v
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let by_letter = |l: &str| match l {
        "a" => Some("shared"),
        "b" => Some("1"),
        "c" => Some("2"),
        "d" => Some("3"),
        "e" => Some("4"),
        _ => None,
    };
    let by_number = |n: &str| match n {
        "1" | "one" => Some("1"),
        "2" | "two" => Some("2"),
        "3" | "three" => Some("3"),
        "4" | "four" => Some("4"),
        _ => None,
    };
    match words.as_slice() {
        ["cat" | "category", l] => by_letter(l),
        [one] if one.len() == 4 && one.starts_with("cat") => by_letter(&one[3..]),
        ["shared"]
        | ["room"]
        | ["shared", "accommodation"]
        | ["shared", "accommodation", "rate"] => Some("shared"),
        [n] => by_number(n),
        [n, "bed" | "beds" | "bedroom" | "bedrooms"] => by_number(n),
        [n, "bed" | "bedroom", "rate"] | [n, "bedroom", "dwelling"] => by_number(n),
        _ => None,
    }
}

/// Whole pence from pounds written `£103.56`, `103.5`, `1,003`; `None` when not an amount to the
/// penny (more than two decimal places, a sign, anything else).
fn pence(v: &str) -> Option<i64> {
    let v = v.trim().trim_start_matches(['£', 'Â']).trim_start();
    let digits: String = v.chars().filter(|c| *c != ',').collect();
    let (whole, frac) = digits.split_once('.').unwrap_or((&digits, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || !all_digits(frac) || frac.len() > 2 {
        return None;
    }
    let pounds: i64 = whole.parse().ok()?;
    let mut p: i64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    if frac.len() == 1 {
        p *= 10;
    }
    pounds.checked_mul(100)?.checked_add(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Rejection;
    use crate::formats::testutil::{split, temp_file};

    fn parse(content: &str) -> (Vec<(u64, LhaRow)>, Vec<Rejection>) {
        let f = temp_file(content.as_bytes());
        split(read(f.path()).expect("opens"))
    }

    fn reasons(bad: &[Rejection]) -> Vec<(u64, &str)> {
        bad.iter().map(|b| (b.line, b.reason.as_str())).collect()
    }

    #[test]
    fn voa_style_file() {
        let (ok, bad) = parse(
            "BRMA,BRMA Code,Category,Weekly Rate,Valid From\n\
             Exeter,BRMA-043,CAT A,£103.56,2024-04-01\n\
             Exeter,BRMA-043,CAT B,\"£1,159.50\",01/04/2024\n\
             \"Bristol, North\",,2 bedrooms,180.8,\n\
             Exeter,BRMA-043,CAT F,200.00,2024-04-01\n\
             ,BRMA-043,CAT C,200.00,2024-04-01\n\
             Exeter,BRMA-043,CAT D,0.00,2024-04-01\n\
             Exeter,BRMA-043,CAT E,-5.00,2024-04-01\n\
             Exeter,BRMA-043,CAT E,250.00,not a date\n\
             Exeter,BRMA-043,CAT E\n\
             Exeter,BRMA-043,,250.00,\n\
             Exeter,BRMA-043,CAT E,,\n",
        );
        let d = NaiveDate::from_ymd_opt(2024, 4, 1);
        assert_eq!(
            ok,
            vec![
                (
                    2,
                    LhaRow {
                        brma: "Exeter".into(),
                        brma_code: Some("BRMA-043".into()),
                        category: "shared".into(),
                        weekly_rate_pence: 10_356,
                        valid_from: d,
                    }
                ),
                (
                    3,
                    LhaRow {
                        brma: "Exeter".into(),
                        brma_code: Some("BRMA-043".into()),
                        category: "1".into(),
                        weekly_rate_pence: 115_950,
                        valid_from: d,
                    }
                ),
                (
                    4,
                    LhaRow {
                        brma: "Bristol, North".into(),
                        brma_code: None,
                        category: "2".into(),
                        weekly_rate_pence: 18_080,
                        valid_from: None,
                    }
                ),
                (
                    9,
                    LhaRow {
                        brma: "Exeter".into(),
                        brma_code: Some("BRMA-043".into()),
                        category: "4".into(),
                        weekly_rate_pence: 25_000,
                        valid_from: None,
                    }
                ),
            ]
        );
        assert_eq!(
            reasons(&bad),
            vec![
                (5, "unknown category \"CAT F\""),
                (6, "blank BRMA"),
                (7, "rate \"0.00\" is not a positive amount of pounds"),
                (8, "rate \"-5.00\" is not a positive amount of pounds"),
                (10, "expected 5 columns, found 3"),
                (11, "blank category"),
                (12, "rate \"\" is not a positive amount of pounds"),
            ]
        );
    }

    #[test]
    fn alternative_column_names() {
        let (ok, bad) = parse(
            "brma_name,bedrooms,rate\n\
             Mid and East Devon,Shared accommodation,95.00\n\
             Mid and East Devon,1 bedroom,140.00\n",
        );
        assert!(bad.is_empty(), "{bad:?}");
        let got: Vec<(&str, &str, i64)> = ok
            .iter()
            .map(|(_, r)| (r.brma.as_str(), r.category.as_str(), r.weekly_rate_pence))
            .collect();
        assert_eq!(
            got,
            vec![
                ("Mid and East Devon", "shared", 9_500),
                ("Mid and East Devon", "1", 14_000)
            ]
        );
        assert_eq!(
            (ok[0].1.brma_code.as_ref(), ok[0].1.valid_from),
            (None, None)
        );
    }

    #[test]
    fn categories() {
        for (v, expect) in [
            ("CAT A", Some("shared")),
            ("cat  b", Some("1")),
            ("Category C", Some("2")),
            ("CATD", Some("3")),
            ("CAT E", Some("4")),
            ("Shared accommodation", Some("shared")),
            ("SHARED ACCOMMODATION RATE", Some("shared")),
            ("shared", Some("shared")),
            ("Room", Some("shared")),
            ("1 bedroom", Some("1")),
            ("1 Bedroom Rate", Some("1")),
            ("2 bedrooms", Some("2")),
            ("3 Bedrooms", Some("3")),
            ("4 bedrooms", Some("4")),
            ("4 bed", Some("4")),
            ("two bedrooms", Some("2")),
            ("3", Some("3")),
            ("CAT F", None),
            ("5 bedrooms", None),
            ("0 bedrooms", None),
            ("bedrooms", None),
            ("CAT", None),
            ("A", None),
            ("studio", None),
            ("", None),
        ] {
            assert_eq!(category(v), expect, "{v:?}");
        }
    }

    #[test]
    fn amounts() {
        for (v, expect) in [
            ("£103.56", Some(10_356)),
            (" £ 103.56 ", Some(10_356)),
            ("Â£103.56", Some(10_356)),
            ("103.5", Some(10_350)),
            ("103", Some(10_300)),
            ("103.", Some(10_300)),
            ("1,003.07", Some(100_307)),
            ("0.01", Some(1)),
            ("0", Some(0)),
            ("103.567", None),
            (".56", None),
            ("-1.00", None),
            ("+1.00", None),
            ("1e2", None),
            ("103.56 pw", None),
            ("", None),
            ("£", None),
            ("99999999999999999999", None),
        ] {
            assert_eq!(pence(v), expect, "{v:?}");
        }
    }

    #[test]
    fn header_must_name_brma_category_and_rate() {
        for header in [
            "brma_code,category,rate\n",
            "brma,rate,valid_from\n",
            "brma,category,amount\n",
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
        let f = temp_file(b"\xEF\xBB\xBFBRMA,CATEGORY,WEEKLY_RATE\r\n");
        assert_eq!(read(f.path()).map(Iterator::count).ok(), Some(0));
    }
}
