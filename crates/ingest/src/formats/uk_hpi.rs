//! The official UK House Price Index, full-file format (`UK-HPI-full-file-YYYY-MM.csv`, or one
//! area's extract): one row per area and month, 54 columns of which the loader keeps `Date`
//! (DD/MM/YYYY or YYYY-MM-DD), `RegionName`, `AreaCode`, `Index`, `AveragePrice` and
//! `SalesVolume`. The index is kept as a reference for `cargo xtask validate index`.
//!
//! Rejections: a wrong column count, a date that is not a date, a blank area code, and an
//! index that is present but not a positive number.

use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use chrono::{Datelike, NaiveDate};
use std::io;
use std::path::Path;

#[derive(Debug, Clone, PartialEq)]
pub struct HpiRow {
    pub area_code: String,
    pub region_name: Option<String>,
    /// The first day of the row's month.
    pub month: NaiveDate,
    pub index: Option<f64>,
    pub average_price: Option<i64>,
    pub sales_volume: Option<i64>,
}

#[derive(Debug, Clone)]
struct Columns {
    date: usize,
    region: Option<usize>,
    code: usize,
    index: usize,
    price: Option<usize>,
    volume: Option<usize>,
}

/// Whether a header is the UK HPI's (it names `AreaCode` and `Index`).
pub fn is_header(names: &[String]) -> bool {
    names.iter().any(|n| n == "areacode") && names.iter().any(|n| n == "index")
}

pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<HpiRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let cols = Columns {
        date: h.require(&source.file, &["date"])?,
        region: h.find(&["regionname", "region-name"]),
        code: h.require(&source.file, &["areacode", "area-code"])?,
        index: h.require(&source.file, &["index"])?,
        price: h.find(&["averageprice", "average-price"]),
        volume: h.find(&["salesvolume", "sales-volume"]),
    };
    let rows = source.rows(h.len(), move |f| parse_row(f, &cols));
    Ok(Some(rows).into_iter().flatten())
}

fn parse_row(f: &[String], c: &Columns) -> Result<HpiRow, String> {
    let raw = field(f, Some(c.date)).unwrap_or_default();
    let d = value::date(raw).ok_or_else(|| format!("date {raw:?} is not a date"))?;
    let area_code = field(f, Some(c.code)).ok_or("blank area code")?.to_string();
    let index = match field(f, Some(c.index)) {
        None => None,
        Some(v) => Some(
            value::float(v)
                .filter(|x| *x > 0.0)
                .ok_or_else(|| format!("index {v:?} is not a positive number"))?,
        ),
    };
    Ok(HpiRow {
        area_code,
        region_name: value::text(field(f, c.region)),
        month: d.with_day(1).unwrap_or(d),
        index,
        average_price: field(f, c.price).and_then(value::int),
        sales_volume: field(f, c.volume).and_then(value::int),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{sample, split, temp_file};

    #[test]
    fn rows_and_rejections() {
        let f = temp_file(
            b"Date,RegionName,AreaCode,AveragePrice,Index,SalesVolume\n\
              01/01/1995,Isle of Wight,E06000046,43793,16.2,177\n\
              2025-02-01,Isle of Wight,E06000046,258403,95.8,\n\
              31/02/2025,Isle of Wight,E06000046,1,1,1\n\
              01/03/2025,Isle of Wight,,1,1,1\n\
              01/04/2025,Isle of Wight,E06000046,1,-3,1\n\
              01/05/2025,Isle of Wight,E06000046,,,\n",
        );
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 3);
        assert_eq!(
            ok[0].1,
            HpiRow {
                area_code: "E06000046".into(),
                region_name: Some("Isle of Wight".into()),
                month: NaiveDate::from_ymd_opt(1995, 1, 1).unwrap(),
                index: Some(16.2),
                average_price: Some(43_793),
                sales_volume: Some(177),
            }
        );
        assert_eq!((ok[1].1.index, ok[1].1.sales_volume), (Some(95.8), None));
        assert_eq!(ok[2].1.index, None, "a month not yet published");
        let reasons: Vec<(u64, &str)> = bad.iter().map(|b| (b.line, b.reason.as_str())).collect();
        assert_eq!(
            reasons,
            vec![
                (4, "date \"31/02/2025\" is not a date"),
                (5, "blank area code"),
                (6, "index \"-3\" is not a positive number"),
            ]
        );
    }

    #[test]
    fn real_sample_isle_of_wight() {
        let Some(p) = sample("isle_of_wight/uk_hpi_isle_of_wight_E06000046.csv") else {
            return;
        };
        let (ok, bad) = split(read(&p).unwrap());
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ok.len(), 362);
        assert!(ok.iter().all(|(_, r)| r.area_code == "E06000046"));
        let base = ok
            .iter()
            .find(|(_, r)| r.month == NaiveDate::from_ymd_opt(2023, 1, 1).unwrap())
            .unwrap();
        assert_eq!(
            base.1.index,
            Some(100.0),
            "the UK HPI is referenced to January 2023 = 100"
        );
    }
}
