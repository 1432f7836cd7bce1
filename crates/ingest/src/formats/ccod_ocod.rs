//! HM Land Registry's company-owned titles: CCOD (UK companies, 35 columns) and OCOD (overseas
//! companies, 39 columns: `Country Incorporated (n)` after each `Proprietorship Category (n)`),
//! full files and change-only updates (COU: `Change Indicator` and `Change Date` as well).
//!
//! Columns are found by name. Each title lists up to four proprietors (`Proprietor Name (n)`,
//! `Company Registration No. (n)`, `Proprietorship Category (n)`, `Country Incorporated (n)`,
//! `Proprietor (n) Address (1..3)`); company numbers are normalised
//! ([`terrace_core::registers::normalise_company_number`]). Dates are `DD-MM-YYYY` or `DD/MM/YYYY`.
//! The file ends with a trailer line `Row Count: N`, which is not a row: it is checked against
//! the rows read, and a trailer that disagrees (a truncated file) is reported as a rejection at
//! its line.
//!
//! Rejections: a wrong column count; a blank or malformed title number; no proprietor name; a
//! date, price or indicator that is given but not readable; a blank or unknown change indicator
//! in a change-only file.

use super::csvio::{Header, Opened, field};
use super::{Parsed, Rejection, value};
use chrono::NaiveDate;
use std::io;
use std::path::Path;
use terrace_core::registers::{Proprietor, normalise_company_number, parse_title_number};

/// Which register a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Register {
    /// UK companies (CCOD).
    Ccod,
    /// Overseas companies (OCOD).
    Ocod,
}

impl Register {
    pub fn as_str(self) -> &'static str {
        match self {
            Register::Ccod => "ccod",
            Register::Ocod => "ocod",
        }
    }
}

/// What a row does to the stored title.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// A row of a full file, or `A` (added) in a change-only file: the title as it now is.
    Put,
    /// `D` in a change-only file: the title left the register.
    Delete,
}

/// One title row.
#[derive(Debug, Clone, PartialEq)]
pub struct TitleLine {
    pub title_number: String,
    pub tenure: Option<String>,
    pub property_address: Option<String>,
    pub district: Option<String>,
    pub county: Option<String>,
    pub region: Option<String>,
    pub postcode: Option<String>,
    pub multiple_address: Option<bool>,
    pub price_paid: Option<i64>,
    pub date_added: Option<NaiveDate>,
    pub additional_proprietor: Option<bool>,
    pub proprietors: Vec<Proprietor>,
    pub change: ChangeKind,
    pub change_date: Option<NaiveDate>,
    /// `YYYY-MM` from the file name, when it has one (`CCOD_FULL_2025_09.csv`).
    pub file_month: Option<String>,
}

#[derive(Debug, Clone)]
struct Slot {
    name: Option<usize>,
    number: Option<usize>,
    category: Option<usize>,
    country: Option<usize>,
    address: [Option<usize>; 3],
}

#[derive(Debug, Clone)]
struct Columns {
    title: Option<usize>,
    tenure: Option<usize>,
    address: Option<usize>,
    district: Option<usize>,
    county: Option<usize>,
    region: Option<usize>,
    postcode: Option<usize>,
    multiple: Option<usize>,
    price: Option<usize>,
    added: Option<usize>,
    additional: Option<usize>,
    change: Option<usize>,
    change_date: Option<usize>,
    slots: Vec<Slot>,
}

const TITLE: &[&str] = &["title-number"];

impl Columns {
    fn new(h: &Header) -> Self {
        let slots = (1..=4)
            .map(|n| Slot {
                name: h.find(&[&format!("proprietor-name-({n})")]),
                number: h.find(&[&format!("company-registration-no.-({n})")]),
                category: h.find(&[&format!("proprietorship-category-({n})")]),
                country: h.find(&[&format!("country-incorporated-({n})")]),
                address: [1, 2, 3].map(|a| h.find(&[&format!("proprietor-({n})-address-({a})")])),
            })
            .collect();
        Columns {
            title: h.find(TITLE),
            tenure: h.find(&["tenure"]),
            address: h.find(&["property-address"]),
            district: h.find(&["district"]),
            county: h.find(&["county"]),
            region: h.find(&["region"]),
            postcode: h.find(&["postcode"]),
            multiple: h.find(&["multiple-address-indicator"]),
            price: h.find(&["price-paid"]),
            added: h.find(&["date-proprietor-added"]),
            additional: h.find(&["additional-proprietor-indicator"]),
            change: h.find(&["change-indicator"]),
            change_date: h.find(&["change-date"]),
            slots,
        }
    }
}

/// `CCOD_FULL_2025_09.csv`, `OCOD_COU_2025_10.csv`: `2025-09`, `2025-10`.
pub fn file_month(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?.to_ascii_uppercase();
    let parts: Vec<&str> = name.split(['_', '.', '-']).collect();
    parts.windows(2).find_map(|w| {
        let (y, m) = (w[0], w[1]);
        let ok = y.len() == 4
            && m.len() == 2
            && y.bytes().all(|b| b.is_ascii_digit())
            && m.bytes().all(|b| b.is_ascii_digit())
            && (1..=12).contains(&m.parse::<u32>().unwrap_or(0));
        ok.then(|| format!("{y}-{m}"))
    })
}

/// The trailer's count, when a record is the `Row Count: N` trailer.
fn trailer(fields: &[String]) -> Option<Option<u64>> {
    let [only] = fields else { return None };
    let rest = only.trim().strip_prefix("Row Count:")?;
    Some(rest.trim().replace(',', "").parse().ok())
}

/// Whether a header (normalised names) is a CCOD/OCOD header, and which.
pub fn register_of(names: &[String]) -> Option<Register> {
    let has = |n: &str| names.iter().any(|x| x == n);
    if !(has("title-number") && has("proprietor-name-(1)")) {
        return None;
    }
    Some(if has("country-incorporated-(1)") {
        Register::Ocod
    } else {
        Register::Ccod
    })
}

/// Opens a CCOD or OCOD file; it must be of the `expect`ed register (an OCOD file has the
/// `Country Incorporated (1)` column, a CCOD file has not).
pub fn read(
    path: &Path,
    expect: Register,
) -> io::Result<impl Iterator<Item = Parsed<TitleLine>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let names = source.header()?.unwrap_or_default();
    let header = Header::new(names);
    if !header.names.is_empty() {
        header.require(&source.file, TITLE)?;
        let found = register_of(&header.names);
        if found != Some(expect) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: expected a {} file, but the header is {}",
                    source.file,
                    expect.as_str().to_ascii_uppercase(),
                    found.map_or("neither CCOD's nor OCOD's".to_string(), |r| {
                        format!("{}'s", r.as_str().to_ascii_uppercase())
                    })
                ),
            ));
        }
    }
    let cols = Columns::new(&header);
    let columns = header.len();
    let month = file_month(path);
    let file = source.file.clone();
    let mut data_rows = 0u64;
    let foreign = expect == Register::Ocod;
    Ok(source.filter_map(move |item| {
        let (line, fields) = match item {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        let reject = |reason: String| Rejection {
            file: file.clone(),
            line,
            reason,
        };
        if let Some(count) = trailer(&fields) {
            return match count {
                Some(n) if n == data_rows => None,
                Some(n) => Some(Err(reject(format!(
                    "the trailer says {n} rows but the file has {data_rows}: the file may be truncated"
                )))),
                None => Some(Err(reject(format!(
                    "unreadable trailer {:?}",
                    fields.join(",")
                )))),
            };
        }
        data_rows += 1;
        if fields.len() != columns {
            return Some(Err(reject(format!(
                "expected {columns} columns, found {}",
                fields.len()
            ))));
        }
        Some(
            parse_row(&fields, &cols, foreign, month.clone())
                .map(|r| (line, r))
                .map_err(reject),
        )
    }))
}

/// `DD-MM-YYYY` or `DD/MM/YYYY`.
fn date(v: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(v, "%d-%m-%Y")
        .or_else(|_| NaiveDate::parse_from_str(v, "%d/%m/%Y"))
        .ok()
}

fn yes_no(v: &str) -> Option<bool> {
    match v.to_ascii_uppercase().as_str() {
        "Y" | "YES" => Some(true),
        "N" | "NO" => Some(false),
        _ => None,
    }
}

/// A value that may be blank but, when given, must be readable.
fn optional<T>(v: Option<&str>, what: &str, p: fn(&str) -> Option<T>) -> Result<Option<T>, String> {
    match v {
        None => Ok(None),
        Some(v) => p(v)
            .map(Some)
            .ok_or_else(|| format!("{what} {v:?} is not readable")),
    }
}

fn parse_row(
    fields: &[String],
    c: &Columns,
    foreign: bool,
    file_month: Option<String>,
) -> Result<TitleLine, String> {
    let get = |i: Option<usize>| field(fields, i);
    let text = |i: Option<usize>| get(i).map(str::to_string);
    let raw_title = get(c.title).ok_or("blank title number")?;
    let title_number = parse_title_number(raw_title)
        .ok_or_else(|| format!("title number {raw_title:?} is not a title number"))?;
    let date_added = optional(get(c.added), "Date Proprietor Added", date)?;
    let change_date = optional(get(c.change_date), "Change Date", date)?;
    let multiple_address = optional(get(c.multiple), "Multiple Address Indicator", yes_no)?;
    let additional_proprietor =
        optional(get(c.additional), "Additional Proprietor Indicator", yes_no)?;
    let price_paid = match get(c.price) {
        None => None,
        Some(v) => Some(
            pounds(v).ok_or_else(|| format!("Price Paid {v:?} is not a whole number of pounds"))?,
        ),
    };
    let change = match (c.change, get(c.change)) {
        (None, _) => ChangeKind::Put,
        (Some(_), None) => return Err("blank Change Indicator".into()),
        (Some(_), Some(v)) if v.eq_ignore_ascii_case("A") => ChangeKind::Put,
        (Some(_), Some(v)) if v.eq_ignore_ascii_case("D") => ChangeKind::Delete,
        (Some(_), Some(v)) => return Err(format!("unknown Change Indicator {v:?}")),
    };
    let proprietors: Vec<Proprietor> = c
        .slots
        .iter()
        .filter_map(|s| {
            let name = text(s.name)?;
            Some(Proprietor {
                name,
                company_number: get(s.number).and_then(|n| normalise_company_number(n, foreign)),
                category: text(s.category),
                country_incorporated: text(s.country),
                address: s.address.iter().filter_map(|a| text(*a)).collect(),
            })
        })
        .collect();
    if proprietors.is_empty() && change == ChangeKind::Put {
        return Err("no proprietor name".into());
    }
    Ok(TitleLine {
        title_number,
        tenure: text(c.tenure),
        property_address: text(c.address),
        district: text(c.district),
        county: text(c.county),
        region: text(c.region),
        postcode: value::postcode(get(c.postcode)),
        multiple_address,
        price_paid,
        date_added,
        additional_proprietor,
        proprietors,
        change,
        change_date,
        file_month,
    })
}

/// Whole pounds from `125000`, `125,000`, `£125,000`, `125000.00`.
fn pounds(v: &str) -> Option<i64> {
    let v = v.trim().trim_start_matches('£');
    let digits: String = v.chars().filter(|c| *c != ',').collect();
    value::int(&digits).filter(|p| *p >= 0)
}

/// The CCOD header, as HM Land Registry publishes it (35 columns).
pub const CCOD_HEADER: &str = "Title Number,Tenure,Property Address,District,County,Region,Postcode,Multiple Address Indicator,Price Paid,Proprietor Name (1),Company Registration No. (1),Proprietorship Category (1),Proprietor (1) Address (1),Proprietor (1) Address (2),Proprietor (1) Address (3),Proprietor Name (2),Company Registration No. (2),Proprietorship Category (2),Proprietor (2) Address (1),Proprietor (2) Address (2),Proprietor (2) Address (3),Proprietor Name (3),Company Registration No. (3),Proprietorship Category (3),Proprietor (3) Address (1),Proprietor (3) Address (2),Proprietor (3) Address (3),Proprietor Name (4),Company Registration No. (4),Proprietorship Category (4),Proprietor (4) Address (1),Proprietor (4) Address (2),Proprietor (4) Address (3),Date Proprietor Added,Additional Proprietor Indicator";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::csvio::parse_line;
    use crate::formats::testutil::{split, temp_file};

    fn ymd(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).expect("date")
    }

    /// A CCOD row: title, proprietor 1 (name, number), date, with the rest blank.
    fn ccod_row(title: &str, name: &str, number: &str, added: &str) -> String {
        let mut f = vec![String::new(); 35];
        f[0] = title.into();
        f[1] = "Freehold".into();
        f[2] = "1 EXAMPLE STREET, MIDDLESBROUGH (TS1 2AB)".into();
        f[6] = "TS1 2AB".into();
        f[7] = "N".into();
        f[9] = name.into();
        f[10] = number.into();
        f[11] = "Limited Company or Public Limited Company".into();
        f[12] = "1 OFFICE ROAD, LEEDS LS1 1AA".into();
        f[33] = added.into();
        f.iter()
            .map(|v| format!("\"{v}\""))
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn header_has_35_columns_and_ocod_39() {
        assert_eq!(parse_line(CCOD_HEADER.as_bytes()).len(), 35);
        let ocod = ocod_header();
        assert_eq!(parse_line(ocod.as_bytes()).len(), 39);
    }

    fn ocod_header() -> String {
        CCOD_HEADER
            .split(',')
            .flat_map(|n| {
                let extra = n
                    .strip_prefix("Proprietorship Category ")
                    .map(|k| format!("Country Incorporated {k}"));
                std::iter::once(n.to_string()).chain(extra)
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn reads_a_full_ccod_file_with_its_trailer() {
        let content = format!(
            "\"{}\"\n{}\n{}\n{}\n{}\n{}\n\"Row Count: 5\"\n",
            CCOD_HEADER.replace(',', "\",\""),
            ccod_row("DN12345", "ACME HOLDINGS LIMITED", "1234567", "03-04-2019"),
            ccod_row("tgl1", "BRICK LLP", "OC301234", "03/04/2019"),
            ccod_row("BAD-1", "X LTD", "1", "01-01-2020"),
            ccod_row("DN2", "Y LTD", "2", "31-13-2020"),
            "\"DN3\",\"Freehold\""
        );
        let f = temp_file(content.as_bytes());
        let (ok, bad) = split(read(f.path(), Register::Ccod).expect("opens"));
        assert_eq!(ok.len(), 2);
        let r = &ok[0].1;
        assert_eq!(r.title_number, "DN12345");
        assert_eq!(r.proprietors[0].company_number.as_deref(), Some("01234567"));
        assert_eq!(r.date_added, Some(ymd(2019, 4, 3)));
        assert_eq!(r.multiple_address, Some(false));
        assert_eq!(r.postcode.as_deref(), Some("TS1 2AB"));
        assert_eq!(r.change, ChangeKind::Put);
        assert_eq!(ok[1].1.title_number, "TGL1");
        assert_eq!(ok[1].1.date_added, Some(ymd(2019, 4, 3)));
        let reasons: Vec<(u64, &str)> = bad.iter().map(|b| (b.line, b.reason.as_str())).collect();
        assert_eq!(reasons.len(), 3);
        assert_eq!(reasons[0].0, 4);
        assert!(reasons[0].1.contains("not a title number"));
        assert_eq!(reasons[1].0, 5);
        assert!(reasons[1].1.contains("Date Proprietor Added"));
        assert_eq!(reasons[2], (6, "expected 35 columns, found 2"));
        // OCOD is refused as CCOD and the other way round
        assert!(read(f.path(), Register::Ocod).is_err());
    }

    #[test]
    fn a_trailer_that_disagrees_is_reported() {
        let content = format!(
            "{CCOD_HEADER}\n{}\n\"Row Count: 3\"\n",
            ccod_row("DN1", "A LTD", "1", "")
        );
        let f = temp_file(content.as_bytes());
        let (ok, bad) = split(read(f.path(), Register::Ccod).expect("opens"));
        assert_eq!(ok.len(), 1);
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].line, 3);
        assert!(bad[0].reason.contains("trailer says 3 rows"));
    }

    #[test]
    fn ocod_change_only_rows() {
        let header = format!("{},Change Indicator,Change Date", ocod_header());
        let row = |title: &str, number: &str, change: &str| {
            let mut f = vec![String::new(); 41];
            f[0] = title.into();
            f[9] = "OVERSEAS HOLDINGS S.A.".into();
            f[10] = number.into();
            f[12] = "Jersey".into();
            f[39] = change.into();
            f[40] = "01-10-2025".into();
            f.join(",")
        };
        let content = format!(
            "{header}\n{}\n{}\n{}\n{}\nRow Count: 4\n",
            row("NGL1", "12345", "A"),
            row("NGL2", "OE12", "D"),
            row("NGL3", "1", "X"),
            row("NGL4", "1", ""),
        );
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("OCOD_COU_2025_10.csv");
        std::fs::write(&path, content).expect("write");
        let (ok, bad) = split(read(&path, Register::Ocod).expect("opens"));
        assert_eq!(ok.len(), 2);
        let p = &ok[0].1.proprietors[0];
        assert_eq!(p.company_number.as_deref(), Some("12345"));
        assert_eq!(p.country_incorporated.as_deref(), Some("Jersey"));
        assert_eq!(ok[0].1.file_month.as_deref(), Some("2025-10"));
        assert_eq!(ok[0].1.change_date, Some(ymd(2025, 10, 1)));
        assert_eq!(ok[1].1.change, ChangeKind::Delete);
        assert_eq!(
            ok[1].1.proprietors[0].company_number.as_deref(),
            Some("OE000012")
        );
        assert_eq!(bad.len(), 2);
        assert!(bad[0].reason.contains("unknown Change Indicator"));
        assert!(bad[1].reason.contains("blank Change Indicator"));
        assert!(read(&path, Register::Ccod).is_err());
    }

    #[test]
    fn file_months() {
        assert_eq!(
            file_month(Path::new("/x/CCOD_FULL_2025_09.csv")).as_deref(),
            Some("2025-09")
        );
        assert_eq!(file_month(Path::new("ccod.csv")), None);
    }
}
