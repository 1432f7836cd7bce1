//! The operator's construction cost feeds (docs/DATA.md, "Construction costs"): no open source
//! publishes a tender price index, regional location factors or tender benchmarks per square
//! metre (BCIS's are licensed), so an operator who licenses them loads them as three small CSVs,
//! columns found by name (any spelling), extra columns ignored:
//!
//! - tender price index: `sector,period,value,base_period` (`title` optional): one index value
//!   per sector and period, `period` as `2024Q1`, `2024M01` or `2024`;
//! - location factors: `region,factor` (`period` optional): the region's cost level over the
//!   national (national = 1), `region` one of the ITL1 regions (`LONDON`, `SOUTH_EAST`, ..);
//! - tender benchmarks: `sector,period,rate_low_gbp_m2,rate_mid_gbp_m2,rate_high_gbp_m2`: pounds
//!   per square metre of gross internal area at the period.
//!
//! `sector` is a work type as the API names it (`new_housing`, `infrastructure`,
//! `public_non_housing`, `private_industrial`, `private_commercial`, `all_new_work`,
//! `housing_repair`, `non_housing_repair`, `all_repair`, `all_work`).
//! A header without a required column is an `InvalidData` error. Rejections: a wrong column
//! count, an unknown sector or region, a malformed period, a number that is not above zero (a
//! location factor also at most 5), benchmark rates out of order (low ≤ mid ≤ high).

use super::Parsed;
use super::csvio::{Header, Opened, field};
use std::io;
use std::path::Path;
use terrace_core::costs::{Period, Region, Sector};

/// One tender price index value.
#[derive(Debug, Clone, PartialEq)]
pub struct TenderPoint {
    pub sector: Sector,
    pub period: Period,
    pub value: f64,
    pub base_period: Option<String>,
    pub title: Option<String>,
}

/// One region's location factor.
#[derive(Debug, Clone, PartialEq)]
pub struct FactorRow {
    pub region: Region,
    pub factor: f64,
    pub period: Option<Period>,
}

/// One tender benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkRow {
    pub sector: Sector,
    pub period: Period,
    pub low: f64,
    pub mid: f64,
    pub high: f64,
}

fn sector(f: &[String], col: usize) -> Result<Sector, String> {
    let raw = field(f, Some(col)).ok_or("blank sector")?;
    Sector::parse(&raw.trim().to_ascii_lowercase()).ok_or_else(|| format!("unknown sector {raw:?}"))
}

fn period(f: &[String], col: usize) -> Result<Period, String> {
    let raw = field(f, Some(col)).ok_or("blank period")?;
    Period::parse(raw.trim()).ok_or_else(|| {
        format!("period {raw:?} is not a month (2024M01), quarter (2024Q1) or year (2024)")
    })
}

fn positive(f: &[String], col: usize, name: &str) -> Result<f64, String> {
    let raw = field(f, Some(col)).unwrap_or_default();
    raw.trim()
        .replace(',', "")
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| format!("{name} {raw:?} is not a number above zero"))
}

/// Opens a tender price index CSV.
pub fn read_tender(path: &Path) -> io::Result<impl Iterator<Item = Parsed<TenderPoint>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let s = h.require(&source.file, &["sector"])?;
    let p = h.require(&source.file, &["period"])?;
    let v = h.require(&source.file, &["value", "index"])?;
    let b = h.require(&source.file, &["base-period", "base"])?;
    let t = h.find(&["title"]);
    let rows = source.rows(h.len(), move |f| {
        Ok(TenderPoint {
            sector: sector(f, s)?,
            period: period(f, p)?,
            value: positive(f, v, "value")?,
            base_period: field(f, Some(b)).map(|x| x.trim().to_string()),
            title: field(f, t).map(|x| x.trim().to_string()),
        })
    });
    Ok(Some(rows).into_iter().flatten())
}

/// Opens a location factor CSV.
pub fn read_factors(path: &Path) -> io::Result<impl Iterator<Item = Parsed<FactorRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let r = h.require(&source.file, &["region"])?;
    let fc = h.require(&source.file, &["factor", "location-factor"])?;
    let p = h.find(&["period"]);
    let rows = source.rows(h.len(), move |f| {
        let raw = field(f, Some(r)).ok_or("blank region")?;
        let region = Region::parse(raw).ok_or_else(|| format!("unknown region {raw:?}"))?;
        let factor = positive(f, fc, "factor")?;
        if factor > 5.0 {
            return Err(format!("factor {factor} is above 5"));
        }
        let period = match p {
            Some(c) if field(f, Some(c)).is_some() => Some(period(f, c)?),
            Some(_) | None => None,
        };
        Ok(FactorRow {
            region,
            factor,
            period,
        })
    });
    Ok(Some(rows).into_iter().flatten())
}

/// Opens a tender benchmark CSV.
pub fn read_benchmarks(
    path: &Path,
) -> io::Result<impl Iterator<Item = Parsed<BenchmarkRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let s = h.require(&source.file, &["sector"])?;
    let p = h.require(&source.file, &["period"])?;
    let lo = h.require(&source.file, &["rate-low-gbp-m2", "rate-low"])?;
    let mid = h.require(&source.file, &["rate-mid-gbp-m2", "rate-mid"])?;
    let hi = h.require(&source.file, &["rate-high-gbp-m2", "rate-high"])?;
    let rows = source.rows(h.len(), move |f| {
        let row = BenchmarkRow {
            sector: sector(f, s)?,
            period: period(f, p)?,
            low: positive(f, lo, "rate_low_gbp_m2")?,
            mid: positive(f, mid, "rate_mid_gbp_m2")?,
            high: positive(f, hi, "rate_high_gbp_m2")?,
        };
        if !(row.low <= row.mid && row.mid <= row.high) {
            return Err(format!(
                "rates out of order: low {} mid {} high {}",
                row.low, row.mid, row.high
            ));
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
    fn feeds_read_and_reject() {
        let f = temp_file(
            b"region,factor,period\nLONDON,1.12,2025Q4\nsouth east,1.05,\nMars,1.0,\nWALES,0,\nSCOTLAND,9,\n",
        );
        let (ok, bad) = split(read_factors(f.path()).unwrap());
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[1].1.region, Region::SouthEast);
        assert_eq!(ok[0].1.period, Some(Period::Quarter(2025, 4)));
        let lines: Vec<u64> = bad.iter().map(|r| r.line).collect();
        assert_eq!(lines, vec![4, 5, 6]);

        let f = temp_file(
            b"sector,period,value,base_period\nnew_housing,2024Q1,101.5,2015\nnew_housing,2024Q5,1,2015\nmoon,2024Q1,1,2015\n",
        );
        let (ok, bad) = split(read_tender(f.path()).unwrap());
        assert_eq!((ok.len(), bad.len()), (1, 2));

        let f = temp_file(
            b"sector,period,rate_low_gbp_m2,rate_mid_gbp_m2,rate_high_gbp_m2\nnew_housing,2025Q4,1500,1800,2400\nnew_housing,2025Q4,1900,1800,2400\n",
        );
        let (ok, bad) = split(read_benchmarks(f.path()).unwrap());
        assert_eq!((ok.len(), bad.len()), (1, 1));
        assert!(bad[0].reason.contains("out of order"), "{bad:?}");
    }
}
