//! The local planning authorities official planning data (planning.data.gov.uk) covers: one row
//! per authority, in the layout of planning.data.gov.uk's `organisation` dataset or any CSV with
//! these columns, found by name:
//! - GSS code of the local authority district (required): `statistical-geography`,
//!   `local-authority-district`, `lad-code`, `gss-code`, `ons-code`;
//! - `name`; `organisation` (`local-authority:SWK`); `entity` or `organisation-entity`;
//! - `start-date`, `end-date` (optional; an authority whose coverage ended is stored with its
//!   end date and treated as not covered from that day).
//!
//! Being listed means covered. A header without a GSS code column is an `InvalidData` error.
//! Rejections: a wrong column count, a blank or malformed GSS code, and an unreadable date.

use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use chrono::NaiveDate;
use std::io;
use std::path::Path;
use terrace_core::GssCode;

#[derive(Debug, Clone, PartialEq)]
pub struct CoverageRow {
    pub lad_code: String,
    pub name: Option<String>,
    pub organisation: Option<String>,
    pub organisation_entity: Option<String>,
    pub start_date: Option<NaiveDate>,
    pub end_date: Option<NaiveDate>,
}

pub(crate) const CODE: &[&str] = &[
    "statistical-geography",
    "local-authority-district",
    "lad-code",
    "gss-code",
    "ons-code",
];

pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<CoverageRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let code = h.require(&source.file, CODE)?;
    let name = h.find(&["name"]);
    let org = h.find(&["organisation"]);
    let entity = h.find(&["entity", "organisation-entity"]);
    let start = h.find(&["start-date"]);
    let end = h.find(&["end-date"]);
    let rows = source.rows(h.len(), move |f| {
        let raw = field(f, Some(code)).ok_or("blank GSS code")?;
        let lad = GssCode::parse(raw).map_err(|e| format!("GSS code {raw:?}: {e}"))?;
        let date = |i: Option<usize>, what: &str| match value::present(field(f, i)) {
            None => Ok(None),
            Some(v) => value::date(v)
                .map(Some)
                .ok_or_else(|| format!("{what} {v:?} is not a date")),
        };
        Ok(CoverageRow {
            lad_code: lad.as_str().to_string(),
            name: value::text(field(f, name)),
            organisation: value::text(field(f, org)),
            organisation_entity: value::text(field(f, entity)),
            start_date: date(start, "start date")?,
            end_date: date(end, "end date")?,
        })
    });
    Ok(Some(rows).into_iter().flatten())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    #[test]
    fn organisation_layout() {
        let f = temp_file(b"entity,name,organisation,statistical-geography,start-date,end-date\n329,Southwark,local-authority:SWK,E09000028,,\n75,Nowhere,local-authority:NOW,X1,,\n76,Gone,local-authority:GON,E07000001,2010-01-01,2020-04-01\n77,Bad,local-authority:BAD,E07000002,,someday\n");
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[0].1.lad_code, "E09000028");
        assert_eq!(ok[0].1.organisation_entity.as_deref(), Some("329"));
        assert_eq!(ok[1].1.end_date, NaiveDate::from_ymd_opt(2020, 4, 1));
        let lines: Vec<u64> = bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![3, 5]);
        let f = temp_file(b"name,organisation\nx,y\n");
        assert!(read(f.path()).is_err());
    }
}
