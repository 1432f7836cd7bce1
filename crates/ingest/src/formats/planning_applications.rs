//! Planning applications, in a CSV layout close to planning.data.gov.uk's `planning-application`
//! dataset (its flattened CSV: lower-kebab column names, WKT `POINT(lon lat)` in WGS84).
//!
//! Columns, found by name (the first listed name that is present wins):
//! - `reference` (required): `reference`, `application-reference`, `planning-application-reference`;
//! - `entity` (optional): the publisher's identifier; the key is `entity:<entity>` when given,
//!   else `<authority>/<reference>`;
//! - authority: `local-planning-authority`, `lpa`, `lad-code`, `organisation`,
//!   `organisation-entity` (a GSS code or the publisher's organisation identifier, as given);
//! - address: `address-text`, `address`, `site-address`; `postcode` (optional);
//! - `uprn` (optional);
//! - point: `point` (WKT `POINT(lon lat)`), else `easting` and `northing` (BNG metres), else
//!   `latitude` and `longitude`;
//! - dates: `received-date` (`application-received-date`, `date-received`), `validated-date`
//!   (`valid-date`, `date-validated`), `decision-date`, `appeal-date` (`appeal-decision-date`);
//! - `decision`; `appeal-decision` (`appeal-status`); `cil-liable` (yes/no, true/false, Y/N);
//!   `cil-amount` (pounds); `development-type` (`planning-application-type`, `application-type`);
//!   `description` (`proposal`).
//!
//! A header without a reference column is an `InvalidData` error, as is one with none of the
//! UPRN, address or point columns.
//! Rejections: a wrong column count, a row whose `dataset` is not `planning-application`, a
//! blank reference, a row with no UPRN, no address and no point (it cannot be placed), a date,
//! point, CIL flag or CIL amount that is given but cannot be read, and a point outside Great
//! Britain. A UPRN that is not a positive integer and a malformed postcode become `None`.

use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use chrono::NaiveDate;
use std::io;
use std::path::Path;

/// One planning application.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplicationRow {
    /// `entity:<entity>` or `<authority>/<reference>`.
    pub id: String,
    pub reference: String,
    pub authority: Option<String>,
    pub address: Option<String>,
    pub postcode: Option<String>,
    pub uprn: Option<i64>,
    /// British National Grid easting and northing, metres.
    pub point: Option<(f64, f64)>,
    pub received_date: Option<NaiveDate>,
    pub validated_date: Option<NaiveDate>,
    pub decision_date: Option<NaiveDate>,
    pub decision: Option<String>,
    pub appeal_decision: Option<String>,
    pub appeal_date: Option<NaiveDate>,
    pub cil_liable: Option<bool>,
    pub cil_amount: Option<f64>,
    pub development_type: Option<String>,
    pub description: Option<String>,
}

const REFERENCE: &[&str] = &[
    "reference",
    "application-reference",
    "planning-application-reference",
];
const AUTHORITY: &[&str] = &[
    "local-planning-authority",
    "lpa",
    "lad-code",
    "organisation",
    "organisation-entity",
];
const ADDRESS: &[&str] = &["address-text", "address", "site-address"];
const RECEIVED: &[&str] = &[
    "received-date",
    "application-received-date",
    "date-received",
];
const VALIDATED: &[&str] = &["validated-date", "valid-date", "date-validated"];
const APPEAL: &[&str] = &["appeal-decision", "appeal-status"];
const APPEAL_DATE: &[&str] = &["appeal-date", "appeal-decision-date"];
const DEV_TYPE: &[&str] = &[
    "development-type",
    "planning-application-type",
    "application-type",
];

#[derive(Debug, Clone)]
struct Columns {
    reference: usize,
    dataset: Option<usize>,
    entity: Option<usize>,
    authority: Option<usize>,
    address: Option<usize>,
    postcode: Option<usize>,
    uprn: Option<usize>,
    point: Option<usize>,
    en: Option<(usize, usize)>,
    latlon: Option<(usize, usize)>,
    received: Option<usize>,
    validated: Option<usize>,
    decision_date: Option<usize>,
    decision: Option<usize>,
    appeal: Option<usize>,
    appeal_date: Option<usize>,
    cil_liable: Option<usize>,
    cil_amount: Option<usize>,
    dev_type: Option<usize>,
    description: Option<usize>,
}

/// Whether a normalised header looks like a planning applications file.
pub fn is_header(names: &[String]) -> bool {
    let h = Header::new(names.to_vec());
    h.find(REFERENCE).is_some()
        && (h.find(&["decision-date", "decision"]).is_some() || h.find(RECEIVED).is_some())
}

/// Opens a planning applications CSV (see the module documentation for the columns).
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<ApplicationRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let Some(names) = source.header()? else {
        return Ok(None.into_iter().flatten());
    };
    let h = Header::new(names);
    let pair = |a: &str, b: &str| h.find(&[a]).zip(h.find(&[b]));
    let cols = Columns {
        reference: h.require(&source.file, REFERENCE)?,
        dataset: h.find(&["dataset"]),
        entity: h.find(&["entity"]),
        authority: h.find(AUTHORITY),
        address: h.find(ADDRESS),
        postcode: h.find(&["postcode"]),
        uprn: h.find(&["uprn"]),
        point: h.find(&["point"]),
        en: pair("easting", "northing"),
        latlon: pair("latitude", "longitude"),
        received: h.find(RECEIVED),
        validated: h.find(VALIDATED),
        decision_date: h.find(&["decision-date"]),
        decision: h.find(&["decision", "planning-decision"]),
        appeal: h.find(APPEAL),
        appeal_date: h.find(APPEAL_DATE),
        cil_liable: h.find(&["cil-liable", "cil-liability"]),
        cil_amount: h.find(&["cil-amount"]),
        dev_type: h.find(DEV_TYPE),
        description: h.find(&["description", "proposal"]),
    };
    if cols.uprn.is_none()
        && cols.address.is_none()
        && cols.point.is_none()
        && cols.en.is_none()
        && cols.latlon.is_none()
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: header has no uprn, address or point column, so no application can be placed",
                source.file
            ),
        ));
    }
    let rows = source.rows(h.len(), move |fields| parse_row(fields, &cols));
    Ok(Some(rows).into_iter().flatten())
}

/// A date that is absent (None) or readable; a non-blank unreadable one is an error.
fn opt_date(fields: &[String], i: Option<usize>, what: &str) -> Result<Option<NaiveDate>, String> {
    match value::present(field(fields, i)) {
        None => Ok(None),
        Some(v) => value::date(v)
            .map(Some)
            .ok_or_else(|| format!("{what} {v:?} is not a date")),
    }
}

/// `POINT(lon lat)` (WKT, WGS84) as (lon, lat).
pub(crate) fn wkt_point(v: &str) -> Option<(f64, f64)> {
    let inner = v
        .trim()
        .strip_prefix("POINT")
        .or_else(|| v.trim().strip_prefix("point"))?
        .trim()
        .strip_prefix('(')?
        .strip_suffix(')')?;
    let mut it = inner.split_whitespace();
    let lon = value::float(it.next()?)?;
    let lat = value::float(it.next()?)?;
    it.next().is_none().then_some((lon, lat))
}

/// Whether (x, y) lies in the British National Grid's extent.
fn in_bng(x: f64, y: f64) -> bool {
    (0.0..=700_000.0).contains(&x) && (0.0..=1_300_000.0).contains(&y)
}

fn point(fields: &[String], c: &Columns) -> Result<Option<(f64, f64)>, String> {
    if let Some(v) = value::present(field(fields, c.point)) {
        let (lon, lat) =
            wkt_point(v).ok_or_else(|| format!("point {v:?} is not POINT(lon lat)"))?;
        return terrace_geo::bng_from_wgs84(lon, lat)
            .filter(|&(x, y)| in_bng(x, y))
            .map(Some)
            .ok_or_else(|| format!("point {v:?} is outside Great Britain"));
    }
    let pair = |p: Option<(usize, usize)>| {
        p.and_then(|(a, b)| {
            value::present(field(fields, Some(a))).zip(value::present(field(fields, Some(b))))
        })
    };
    if let Some((e, n)) = pair(c.en) {
        let (x, y) = value::float(e)
            .zip(value::float(n))
            .ok_or_else(|| format!("easting/northing {e:?}/{n:?} are not numbers"))?;
        return if in_bng(x, y) {
            Ok(Some((x, y)))
        } else {
            Err(format!(
                "easting/northing {x}/{y} are outside Great Britain"
            ))
        };
    }
    if let Some((lat, lon)) = pair(c.latlon) {
        let (lat, lon) = value::float(lat)
            .zip(value::float(lon))
            .ok_or_else(|| format!("latitude/longitude {lat:?}/{lon:?} are not numbers"))?;
        return terrace_geo::bng_from_wgs84(lon, lat)
            .filter(|&(x, y)| in_bng(x, y))
            .map(Some)
            .ok_or_else(|| format!("latitude/longitude {lat}/{lon} are outside Great Britain"));
    }
    Ok(None)
}

fn yes_no(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "yes" | "y" | "true" | "t" | "1" | "liable" => Some(true),
        "no" | "n" | "false" | "f" | "0" | "not liable" | "exempt" => Some(false),
        _ => None,
    }
}

fn parse_row(fields: &[String], c: &Columns) -> Result<ApplicationRow, String> {
    let get = |i: Option<usize>| value::text(field(fields, i));
    // planning.data.gov.uk files name their dataset on every row: only applications load here
    if let Some(ds) = get(c.dataset).filter(|d| d != "planning-application") {
        return Err(format!("a row of dataset {ds:?}, not planning-application"));
    }
    let reference = get(Some(c.reference)).ok_or("blank reference")?;
    let authority = get(c.authority);
    let address = get(c.address);
    let uprn = get(c.uprn).as_deref().and_then(value::uprn);
    let point = point(fields, c)?;
    if uprn.is_none() && address.is_none() && point.is_none() {
        return Err("no UPRN, address or point: the application cannot be placed".into());
    }
    let cil_liable = match get(c.cil_liable) {
        None => None,
        Some(v) => Some(yes_no(&v).ok_or_else(|| format!("CIL liability {v:?} is not yes or no"))?),
    };
    let cil_amount = match get(c.cil_amount) {
        None => None,
        Some(v) => Some(
            value::float(&v.replace([',', '£'], ""))
                .filter(|a| *a >= 0.0)
                .ok_or_else(|| format!("CIL amount {v:?} is not a sum of money"))?,
        ),
    };
    let id = match get(c.entity) {
        Some(e) => format!("entity:{e}"),
        None => format!("{}/{reference}", authority.as_deref().unwrap_or("")),
    };
    Ok(ApplicationRow {
        id,
        reference,
        authority,
        address,
        postcode: value::postcode(field(fields, c.postcode)),
        uprn,
        point,
        received_date: opt_date(fields, c.received, "received date")?,
        validated_date: opt_date(fields, c.validated, "validated date")?,
        decision_date: opt_date(fields, c.decision_date, "decision date")?,
        decision: get(c.decision),
        appeal_decision: get(c.appeal),
        appeal_date: opt_date(fields, c.appeal_date, "appeal date")?,
        cil_liable,
        cil_amount,
        development_type: get(c.dev_type),
        description: get(c.description),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    const HEADER: &str = "dataset,entity,reference,organisation,address-text,postcode,uprn,point,received-date,validated-date,decision-date,decision,appeal-decision,appeal-date,cil-liable,cil-amount,development-type,description\n";

    #[test]
    fn rows_and_rejections() {
        let body = format!(
            "{HEADER}\
planning-application,101,24/0001/FUL,E07000041,\"1 High Street, Exeter\",EX1 1AA,100040212345,POINT(-3.53 50.72),2024-01-05,2024-01-10,2024-03-01,approved,,,yes,\"12,500\",householder,Rear extension\n\
planning-application,,24/0002/FUL,E07000041,,,,,2024-01-05,,,,,,,,minor,No place\n\
planning-application,103,24/0003/FUL,E07000041,2 High Street,,,,05/02/2024,,soon,,,,,,minor,Bad date\n\
planning-application,104,24/0004/FUL,E07000041,,,,POINT(x y),,,,,,,,,minor,Bad point\n\
planning-application,105,24/0005/FUL,E07000041,3 High Street,,,,,,,,,,maybe,,minor,Bad CIL\n\
planning-application,,24/0006/FUL,E07000041,4 High Street,ex11aa,abc,,2024-02-01,,2024-04-01,refused,dismissed,2024-09-01,no,,change of use,Shop to flat\n\
planning-application,107,,E07000041,5 High Street,,,,,,,,,,,,,Blank reference\n\
planning-application,108,24/0008/FUL\n"
        );
        let f = temp_file(body.as_bytes());
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok.len(), 2, "{bad:?}");
        let a = &ok[0].1;
        assert_eq!(a.id, "entity:101");
        assert_eq!(a.uprn, Some(100040212345));
        assert_eq!(a.cil_liable, Some(true));
        assert_eq!(a.cil_amount, Some(12500.0));
        let (x, y) = a.point.unwrap();
        assert!(
            (290_000.0..300_000.0).contains(&x) && (90_000.0..95_000.0).contains(&y),
            "{x} {y}"
        );
        assert_eq!(a.decision_date, NaiveDate::from_ymd_opt(2024, 3, 1));
        let b = &ok[1].1;
        assert_eq!((ok[1].0, b.id.as_str()), (7, "E07000041/24/0006/FUL"));
        assert_eq!(b.uprn, None, "a UPRN that is not one is dropped");
        assert_eq!(b.postcode.as_deref(), Some("EX1 1AA"));
        assert_eq!(b.appeal_decision.as_deref(), Some("dismissed"));
        assert_eq!(b.cil_liable, Some(false));
        let reasons: Vec<(u64, &str)> = bad.iter().map(|r| (r.line, r.reason.as_str())).collect();
        assert_eq!(reasons.len(), 6, "{reasons:?}");
        assert!(reasons[0].1.contains("cannot be placed"), "{reasons:?}");
        assert!(reasons[1].1.contains("decision date"));
        assert!(reasons[2].1.contains("POINT"));
        assert!(reasons[3].1.contains("CIL"));
        assert_eq!(reasons[4], (8, "blank reference"));
        assert!(reasons[5].1.contains("expected 18 columns"));
    }

    #[test]
    fn easting_northing_and_header_rules() {
        let f = temp_file(b"reference,lpa,easting,northing,decision,decision-date\nA/1,E07000041,292000,92500,granted,2025-01-01\nA/2,E07000041,9999999,1,granted,\n");
        let (ok, bad) = split(read(f.path()).unwrap());
        assert_eq!(ok[0].1.point, Some((292000.0, 92500.0)));
        assert_eq!(bad.len(), 1);
        let f = temp_file(b"reference,decision\nA/1,granted\n");
        assert!(read(f.path()).is_err(), "no way to place an application");
        let f = temp_file(b"decision,address\nx,y\n");
        assert!(read(f.path()).is_err(), "no reference column");
    }

    /// The real planning.data.gov.uk flattened CSV (listed-building outlines): read as
    /// applications, every row is accounted for and rejected as another dataset; its WKT points
    /// all convert to British National Grid points in England.
    #[test]
    fn real_flattened_sample() {
        let Some(p) = crate::formats::testutil::sample(
            "planning/planning_data_listed-building-outline_flattened_southwark_952rows.csv",
        ) else {
            return;
        };
        let (ok, bad) = split(read(&p).unwrap());
        assert_eq!((ok.len(), bad.len()), (0, 952));
        assert!(
            bad.iter()
                .all(|r| r.reason.contains("listed-building-outline"))
        );
        let mut src = super::super::csvio::Opened::open(&p).unwrap().into_source();
        let h = Header::new(src.header().unwrap().unwrap());
        let col = h.find(&["point"]).unwrap();
        let mut n = 0;
        for rec in src {
            let (_, f) = rec.unwrap();
            let Some(v) = value::present(field(&f, Some(col))) else {
                continue;
            };
            let (lon, lat) = wkt_point(v).unwrap_or_else(|| panic!("{v}"));
            let (x, y) = terrace_geo::bng_from_wgs84(lon, lat).unwrap();
            assert!(in_bng(x, y) && (0.0..700_000.0).contains(&x), "{v}");
            n += 1;
        }
        assert!(n > 900, "{n} points");
    }

    #[test]
    fn wkt() {
        assert_eq!(wkt_point("POINT(-0.1 51.5)"), Some((-0.1, 51.5)));
        assert_eq!(wkt_point("POINT (1 2)"), Some((1.0, 2.0)));
        assert_eq!(wkt_point("POINT(1)"), None);
        assert_eq!(wkt_point("LINESTRING(1 2)"), None);
    }
}
