//! The ONS Price Index of Private Rents (PIPR), local-authority CSV: UTF-8 with a byte-order
//! mark, one row per area and month, `Time period` as `Mon-YYYY` (`Jan-2015`), and `[x]` in a
//! cell the ONS does not publish. The loader keeps `Time period`, `Area code`, `Area name`,
//! `Region or country name`, `Index`, `Monthly change`, `Annual change` and `Rental price`
//! (pounds per calendar month); the per-bedroom and per-type columns are not stored.
//!
//! Rejections: a wrong column count, a period that is not `Mon-YYYY`, a blank area code, an
//! index that is present but not a positive number, a rental price that is present but not a
//! whole number of pounds, and a change that is present but not a number.

use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use chrono::NaiveDate;
use std::io;
use std::path::Path;

#[derive(Debug, Clone, PartialEq)]
pub struct PiprRow {
    pub area_code: String,
    pub area_name: Option<String>,
    pub region_name: Option<String>,
    /// The first day of the row's month.
    pub month: NaiveDate,
    pub index: Option<f64>,
    /// Percent change on the previous month.
    pub monthly_change: Option<f64>,
    /// Percent change on the same month a year earlier.
    pub annual_change: Option<f64>,
    /// Average private rent, pounds per calendar month.
    pub rental_price: Option<i64>,
}

#[derive(Debug, Clone)]
struct Columns {
    period: usize,
    code: usize,
    name: Option<usize>,
    region: Option<usize>,
    index: usize,
    monthly: Option<usize>,
    annual: Option<usize>,
    price: usize,
}

/// Whether a header is the PIPR's (it names `Time period` and `Rental price`).
pub fn is_header(names: &[String]) -> bool {
    names.iter().any(|n| n == "time-period") && names.iter().any(|n| n == "rental-price")
}

pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<PiprRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let cols = Columns {
        period: h.require(&source.file, &["time-period"])?,
        code: h.require(&source.file, &["area-code"])?,
        name: h.find(&["area-name"]),
        region: h.find(&["region-or-country-name"]),
        index: h.require(&source.file, &["index"])?,
        monthly: h.find(&["monthly-change"]),
        annual: h.find(&["annual-change"]),
        price: h.require(&source.file, &["rental-price"])?,
    };
    let rows = source.rows(h.len(), move |f| parse_row(f, &cols));
    Ok(Some(rows).into_iter().flatten())
}

/// `[x]` (and the blanks [`value::present`] knows) is "not published": `None`, never zero.
fn cell(f: &[String], idx: Option<usize>) -> Option<&str> {
    value::present(field(f, idx)).filter(|v| !v.eq_ignore_ascii_case("[x]"))
}

/// `Jan-2015` (also `January-2015`, `Jan 2015`): the first day of the month.
fn period(v: &str) -> Option<NaiveDate> {
    let v = v.trim().replace(' ', "-");
    NaiveDate::parse_from_str(&format!("01-{v}"), "%d-%b-%Y")
        .or_else(|_| NaiveDate::parse_from_str(&format!("01-{v}"), "%d-%B-%Y"))
        .ok()
}

fn number(f: &[String], idx: Option<usize>, what: &str) -> Result<Option<f64>, String> {
    cell(f, idx)
        .map(|v| value::float(v).ok_or_else(|| format!("{what} {v:?} is not a number")))
        .transpose()
}

fn parse_row(f: &[String], c: &Columns) -> Result<PiprRow, String> {
    let raw = field(f, Some(c.period)).unwrap_or_default();
    let month = period(raw).ok_or_else(|| format!("time period {raw:?} is not Mon-YYYY"))?;
    let area_code = cell(f, Some(c.code)).ok_or("blank area code")?.to_string();
    let index = match number(f, Some(c.index), "index")? {
        Some(x) if x <= 0.0 => return Err(format!("index {x} is not a positive number")),
        other => other,
    };
    let rental_price = cell(f, Some(c.price))
        .map(|v| {
            value::int(v)
                .filter(|p| *p > 0)
                .ok_or_else(|| format!("rental price {v:?} is not a positive whole number"))
        })
        .transpose()?;
    Ok(PiprRow {
        area_code,
        area_name: cell(f, c.name).map(str::to_string),
        region_name: cell(f, c.region).map(str::to_string),
        month,
        index,
        monthly_change: number(f, c.monthly, "monthly change")?,
        annual_change: number(f, c.annual, "annual change")?,
        rental_price,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{sample, split, temp_file};

    const HEADER: &str = "\u{feff}Time period,Area code,Area name,Region or country name,Index,Monthly change,Annual change,Rental price,Index one bed,Rental price one bed\r\n";

    #[test]
    fn rows_and_rejections() {
        let body = format!(
            "{HEADER}\
             Jan-2015,E06000046,Isle of Wight,South East,81.7,[x],[x],622,82.0,428\r\n\
             Feb-2015,E06000046,Isle of Wight,South East,81.8,0.1,[x],622,82.0,428\r\n\
             2015-03,E06000046,Isle of Wight,South East,81.8,0.0,[x],623,82.1,429\r\n\
             Apr-2015,,Isle of Wight,South East,81.9,0.1,[x],623,82.1,429\r\n\
             May-2015,E06000046,Isle of Wight,South East,-1,0.1,[x],623,82.1,429\r\n\
             Jun-2015,E06000046,Isle of Wight,South East,82.0,0.1,[x],six hundred,82.1,429\r\n\
             Jul-2015,E06000046,Isle of Wight,South East,82.0,0.1,[x]\r\n\
             Aug-2015,E06000046,Isle of Wight,South East,[x],[x],[x],[x],[x],[x]\r\n"
        );
        let f = temp_file(body.as_bytes());
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 3);
        assert_eq!(
            ok[0],
            (
                2,
                PiprRow {
                    area_code: "E06000046".into(),
                    area_name: Some("Isle of Wight".into()),
                    region_name: Some("South East".into()),
                    month: NaiveDate::from_ymd_opt(2015, 1, 1).unwrap(),
                    index: Some(81.7),
                    monthly_change: None,
                    annual_change: None,
                    rental_price: Some(622),
                }
            ),
            "the byte-order mark does not hide the first column; [x] is None"
        );
        assert_eq!(ok[1].1.monthly_change, Some(0.1));
        assert_eq!(
            (ok[2].1.index, ok[2].1.rental_price),
            (None, None),
            "a month not published is None, never zero"
        );
        let reasons: Vec<(u64, &str)> = bad.iter().map(|b| (b.line, b.reason.as_str())).collect();
        assert_eq!(
            reasons[..4].to_vec(),
            vec![
                (4, "time period \"2015-03\" is not Mon-YYYY"),
                (5, "blank area code"),
                (6, "index -1 is not a positive number"),
                (
                    7,
                    "rental price \"six hundred\" is not a positive whole number"
                ),
            ]
        );
        assert_eq!(bad.len(), 5);
        assert_eq!(bad[4].line, 8, "a short row is rejected by its line");
        assert!(bad.iter().all(|b| b.file == f.path().display().to_string()));
    }

    #[test]
    fn real_sample_isle_of_wight() {
        let Some(p) = sample("isle_of_wight/ons_pipr_private_rents_isle_of_wight_E06000046.csv")
        else {
            return;
        };
        let (ok, bad) = split(read(&p).unwrap());
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ok.len(), 123);
        assert!(ok.iter().all(|(_, r)| r.area_code == "E06000046"));
        let first = &ok[0].1;
        assert_eq!(first.month, NaiveDate::from_ymd_opt(2015, 1, 1).unwrap());
        assert_eq!((first.index, first.rental_price), (Some(81.7), Some(622)));
        assert_eq!(first.monthly_change, None, "[x] in the first month");
        let last = &ok[122].1;
        assert_eq!(last.month, NaiveDate::from_ymd_opt(2025, 3, 1).unwrap());
        assert_eq!((last.index, last.annual_change), (Some(114.1), Some(7.0)));
    }
}
