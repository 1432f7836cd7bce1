//! HM Land Registry Price Paid Data.
//!
//! Two layouts, told apart by the first line:
//! - the bulk and monthly files: 16 quoted columns, no header (`{GUID}` ids, `YYYY-MM-DD 00:00`
//!   dates, record status A/C/D); a file that does carry the publisher's documented header
//!   (`Transaction unique identifier, Price, Date of Transfer, ...`) is read by those names;
//! - the report-builder export, with a header
//!   `unique_id,price_paid,deed_date,postcode,property_type,new_build,estate_type,saon,paon,...`
//!   (SAON before PAON, ids without braces, `YYYY-MM-DD` dates, no record status: rows get "A").
//!   Some exports lack the newline after the header, so the first record follows `linked_data_uri`
//!   on line 1; that record is split off and read as line 1.
//!
//! Rejections: wrong column count, missing or malformed id, bad price, bad date, bad enum values.
//! A malformed postcode is not a rejection: the row keeps `postcode: None`.

use super::csvio::{self, Header, Opened, field, parse_line};
use super::{Parsed, value};
use chrono::NaiveDate;
use std::io;
use std::path::Path;

/// One Price Paid transaction record.
#[derive(Debug, Clone, PartialEq)]
pub struct PricePaidRow {
    /// The transaction id in upper case, braces stripped.
    pub transaction_id: String,
    pub price: i64,
    pub date: NaiveDate,
    /// Canonical postcode; `None` when blank or malformed.
    pub postcode: Option<String>,
    /// D (detached), S (semi-detached), T (terraced), F (flat/maisonette), O (other).
    pub property_type: String,
    pub new_build: bool,
    /// F (freehold), L (leasehold), U (unknown).
    pub tenure: String,
    pub paon: Option<String>,
    pub saon: Option<String>,
    pub street: Option<String>,
    pub locality: Option<String>,
    pub town: Option<String>,
    pub district: Option<String>,
    pub county: Option<String>,
    /// A (standard price paid) or B (additional price paid).
    pub ppd_category: String,
    /// A (addition), C (change), D (delete); "A" for files without the column.
    pub record_status: String,
}

const ID: usize = 0;
const PRICE: usize = 1;
const DATE: usize = 2;
const POSTCODE: usize = 3;
const TYPE: usize = 4;
const NEW_BUILD: usize = 5;
const TENURE: usize = 6;
const PAON: usize = 7;
const SAON: usize = 8;
const STREET: usize = 9;
const LOCALITY: usize = 10;
const TOWN: usize = 11;
const DISTRICT: usize = 12;
const COUNTY: usize = 13;
const CATEGORY: usize = 14;
const STATUS: usize = 15;

/// Accepted header names for each field, in the order above (names normalised to lower-kebab).
const NAMES: [&[&str]; 16] = [
    &[
        "unique-id",
        "transaction-unique-identifier",
        "transaction-id",
    ],
    &["price-paid", "price"],
    &["deed-date", "date-of-transfer", "date"],
    &["postcode"],
    &["property-type"],
    &["new-build", "old/new"],
    &["estate-type", "duration", "tenure"],
    &["paon"],
    &["saon"],
    &["street"],
    &["locality"],
    &["town", "town/city"],
    &["district"],
    &["county"],
    &["transaction-category", "ppd-category-type", "ppd-category"],
    &["record-status", "record-status---monthly-file-only"],
];

const REQUIRED: [usize; 7] = [ID, PRICE, DATE, TYPE, NEW_BUILD, TENURE, CATEGORY];

/// Where each field sits in a record, and how many columns a record has.
#[derive(Debug, Clone)]
struct Layout {
    idx: [Option<usize>; 16],
    columns: usize,
}

impl Layout {
    fn headerless() -> Self {
        Self {
            idx: std::array::from_fn(Some),
            columns: 16,
        }
    }

    fn from_header(file: &str, names: Vec<String>) -> io::Result<Self> {
        let header = Header::new(names);
        let idx = NAMES.map(|candidates| header.find(candidates));
        for f in REQUIRED {
            header.require(file, NAMES[f])?;
        }
        Ok(Self {
            idx,
            columns: header.len(),
        })
    }
}

/// Whether normalised first-line names are a Price Paid header (report builder or documented names).
pub(crate) fn is_header(names: &[String]) -> bool {
    let has = |n: &str| names.iter().any(|x| x == n);
    (has("unique-id") && has("price-paid")) || has("transaction-unique-identifier")
}

/// Whether headerless first-line fields look like a bulk/monthly record.
pub(crate) fn is_headerless_record(fields: &[String]) -> bool {
    fields.len() == 16
        && transaction_id(&fields[ID]).is_ok()
        && fields[PRICE].trim().bytes().all(|b| b.is_ascii_digit())
        && value::date(&fields[DATE]).is_some()
}

/// Opens a Price Paid file; see the module documentation for the layouts.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<PricePaidRow>> + Send> {
    let opened = Opened::open(path)?;
    let first = opened.first_line().to_vec();
    let names: Vec<String> = parse_line(&first)
        .iter()
        .map(|f| csvio::normalise_name(f))
        .collect();
    let (source, layout) = if is_header(&names) {
        match glued_record_start(&first) {
            Some(end) => {
                let names = parse_line(&first[..end])
                    .iter()
                    .map(|f| csvio::normalise_name(f))
                    .collect();
                let layout = Layout::from_header(&opened.file, names)?;
                (opened.into_source_from(end), layout)
            }
            None => {
                let mut source = opened.into_source();
                let names = source.header()?.unwrap_or_default();
                let layout = Layout::from_header(&source.file, names)?;
                (source, layout)
            }
        }
    } else {
        (opened.into_source(), Layout::headerless())
    };
    let columns = layout.columns;
    Ok(source.rows(columns, move |fields| parse_row(fields, &layout)))
}

/// In a report-builder header line, where a record glued onto `linked_data_uri` starts.
fn glued_record_start(line: &[u8]) -> Option<usize> {
    let lower = line.to_ascii_lowercase();
    let name_at = [b"linked_data_uri".as_slice(), b"linked-data-uri".as_slice()]
        .iter()
        .find_map(|name| {
            lower
                .windows(name.len())
                .position(|w| w == *name)
                .map(|p| p + name.len())
        })?;
    let mut end = name_at;
    if line.first() == Some(&b'"') && line.get(end) == Some(&b'"') {
        end += 1; // a quoted header: the closing quote belongs to the header
    }
    match line.get(end) {
        None | Some(b',') => None,
        Some(_) => Some(end),
    }
}

fn transaction_id(v: &str) -> Result<String, String> {
    let v = v.trim();
    let id = v
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .unwrap_or(v);
    if id.is_empty() {
        return Err("missing transaction id".into());
    }
    if !id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') {
        return Err(format!("malformed transaction id {v:?}"));
    }
    Ok(id.to_ascii_uppercase())
}

/// Maps a code or its spelled-out form to the code; `None` when unrecognised.
fn code(v: &str, table: &[(&'static str, &[&str])]) -> Option<&'static str> {
    let key: String = v
        .trim()
        .chars()
        .map(|c| {
            if c == ' ' || c == '_' || c == '/' {
                '-'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    table
        .iter()
        .find(|(c, aliases)| c.eq_ignore_ascii_case(&key) || aliases.contains(&key.as_str()))
        .map(|(c, _)| *c)
}

const PROPERTY_TYPES: &[(&str, &[&str])] = &[
    ("D", &["detached"]),
    ("S", &["semi-detached"]),
    ("T", &["terraced"]),
    ("F", &["flat-maisonette", "flat", "maisonette"]),
    ("O", &["other"]),
];
const NEW_BUILD_FLAGS: &[(&str, &[&str])] = &[("Y", &["yes", "true"]), ("N", &["no", "false"])];
const TENURES: &[(&str, &[&str])] = &[
    ("F", &["freehold"]),
    ("L", &["leasehold"]),
    ("U", &["unknown"]),
];
const CATEGORIES: &[(&str, &[&str])] = &[
    ("A", &["standard-price-paid", "standard"]),
    ("B", &["additional-price-paid", "additional"]),
];
const STATUSES: &[(&str, &[&str])] = &[
    ("A", &["addition", "add"]),
    ("C", &["change"]),
    ("D", &["delete", "deletion"]),
];

fn parse_row(fields: &[String], layout: &Layout) -> Result<PricePaidRow, String> {
    let get = |f: usize| field(fields, layout.idx[f]);
    let enumerated = |f: usize, what: &str, table: &[(&'static str, &[&str])]| {
        let v = get(f).ok_or_else(|| format!("missing {what}"))?;
        code(v, table)
            .map(str::to_string)
            .ok_or_else(|| format!("bad {what} {v:?}"))
    };
    let transaction_id = transaction_id(get(ID).unwrap_or_default())?;
    let price_text = get(PRICE).ok_or("missing price")?;
    let price = price_text
        .parse::<i64>()
        .ok()
        .filter(|p| *p >= 0)
        .ok_or_else(|| format!("bad price {price_text:?}"))?;
    let date_text = get(DATE).ok_or("missing date")?;
    let date = value::date(date_text).ok_or_else(|| format!("bad date {date_text:?}"))?;
    let record_status = match layout.idx[STATUS] {
        Some(_) => enumerated(STATUS, "record status", STATUSES)?,
        None => "A".to_string(),
    };
    Ok(PricePaidRow {
        transaction_id,
        price,
        date,
        postcode: value::postcode(get(POSTCODE)),
        property_type: enumerated(TYPE, "property type", PROPERTY_TYPES)?,
        new_build: enumerated(NEW_BUILD, "new-build flag", NEW_BUILD_FLAGS)? == "Y",
        tenure: enumerated(TENURE, "tenure", TENURES)?,
        paon: value::text(get(PAON)),
        saon: value::text(get(SAON)),
        street: value::text(get(STREET)),
        locality: value::text(get(LOCALITY)),
        town: value::text(get(TOWN)),
        district: value::text(get(DISTRICT)),
        county: value::text(get(COUNTY)),
        ppd_category: enumerated(CATEGORY, "PPD category", CATEGORIES)?,
        record_status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{sample, split, temp_file};

    const BULK: &str = concat!(
        "\"{55B1A16F-1F36-4084-A16A-AE1F4CDCA77F}\",\"105000\",\"2002-11-19 00:00\",\"PO37 6BU\",\"F\",\"N\",\"L\",\"CORINTHIAN COURT\",\"FLAT 11\",\"CROSS STREET\",\"\",\"SHANKLIN\",\"ISLE OF WIGHT\",\"ISLE OF WIGHT\",\"A\",\"C\"\n",
        "\"{9b6fe09b-7327-4e23-9972-05d436ec3fe3}\",\"45000\",\"2001-02-05 00:00\",\"\",\"D\",\"Y\",\"F\",\"30\",\"\",\"NEWPORT ROAD\",\"\",\"COWES\",\"ISLE OF WIGHT\",\"ISLE OF WIGHT\",\"B\",\"D\"\n",
        "\"{0AE15A16-6AFD-4C9F-980A-B85C9118E256}\",\"237000\",\"2001-07-19 00:00\",\"NOT A CODE\",\"S\",\"N\",\"U\",\"OLD BANK HOUSE\",\"\",\"HIGH STREET\",\"\",\"SEAVIEW\",\"ISLE OF WIGHT\",\"ISLE OF WIGHT\",\"A\",\"A\"\n",
        "\"{0AE15A16-6AFD-4C9F-980A-B85C9118E257}\",\"237000\",\"2001-07-19 00:00\",\"PO34 5EU\",\"S\"\n",
        "\"{0AE15A16-6AFD-4C9F-980A-B85C9118E258}\",\"lots\",\"2001-07-19 00:00\",\"PO34 5EU\",\"S\",\"N\",\"F\",\"1\",\"\",\"HIGH STREET\",\"\",\"SEAVIEW\",\"ISLE OF WIGHT\",\"ISLE OF WIGHT\",\"A\",\"A\"\n",
        "\"{0AE15A16-6AFD-4C9F-980A-B85C9118E259}\",\"1000\",\"2001-02-30 00:00\",\"PO34 5EU\",\"S\",\"N\",\"F\",\"1\",\"\",\"HIGH STREET\",\"\",\"SEAVIEW\",\"ISLE OF WIGHT\",\"ISLE OF WIGHT\",\"A\",\"A\"\n",
        "\"{0AE15A16-6AFD-4C9F-980A-B85C9118E25A}\",\"1000\",\"2001-02-03 00:00\",\"PO34 5EU\",\"X\",\"N\",\"F\",\"1\",\"\",\"HIGH STREET\",\"\",\"SEAVIEW\",\"ISLE OF WIGHT\",\"ISLE OF WIGHT\",\"A\",\"A\"\n",
        "\"{0AE15A16-6AFD-4C9F-980A-B85C9118E25B}\",\"1000\",\"2001-02-03 00:00\",\"PO34 5EU\",\"S\",\"N\",\"F\",\"1\",\"\",\"HIGH STREET\",\"\",\"SEAVIEW\",\"ISLE OF WIGHT\",\"ISLE OF WIGHT\",\"A\",\"Z\"\n",
        "\"\",\"1000\",\"2001-02-03 00:00\",\"PO34 5EU\",\"S\",\"N\",\"F\",\"1\",\"\",\"HIGH STREET\",\"\",\"SEAVIEW\",\"ISLE OF WIGHT\",\"ISLE OF WIGHT\",\"A\",\"A\"\n",
    );

    fn parse(content: &str) -> (Vec<(u64, PricePaidRow)>, Vec<super::super::Rejection>) {
        let f = temp_file(content.as_bytes());
        split(read(f.path()).expect("opens"))
    }

    #[test]
    fn bulk_rows_and_rejections() {
        let (ok, bad) = parse(BULK);
        assert_eq!(ok.len() + bad.len(), 9);
        let (line, first) = &ok[0];
        assert_eq!(*line, 1);
        assert_eq!(first.transaction_id, "55B1A16F-1F36-4084-A16A-AE1F4CDCA77F");
        assert_eq!(first.price, 105_000);
        assert_eq!(
            first.date,
            NaiveDate::from_ymd_opt(2002, 11, 19).expect("date")
        );
        assert_eq!(first.postcode.as_deref(), Some("PO37 6BU"));
        assert_eq!(
            (
                first.property_type.as_str(),
                first.new_build,
                first.tenure.as_str()
            ),
            ("F", false, "L")
        );
        assert_eq!(first.paon.as_deref(), Some("CORINTHIAN COURT"));
        assert_eq!(first.saon.as_deref(), Some("FLAT 11"));
        assert_eq!(first.locality, None);
        assert_eq!(
            (first.ppd_category.as_str(), first.record_status.as_str()),
            ("A", "C")
        );

        let (_, second) = &ok[1];
        assert_eq!(
            second.transaction_id,
            "9B6FE09B-7327-4E23-9972-05D436EC3FE3"
        );
        assert_eq!(second.postcode, None);
        assert!(second.new_build);
        assert_eq!(second.record_status, "D");

        // a malformed postcode is kept as None, not rejected
        assert_eq!(ok[2].0, 3);
        assert_eq!(ok[2].1.postcode, None);
        assert_eq!(ok[2].1.tenure, "U");

        let reasons: Vec<(u64, &str)> = bad.iter().map(|r| (r.line, r.reason.as_str())).collect();
        assert_eq!(
            reasons,
            vec![
                (4, "expected 16 columns, found 5"),
                (5, "bad price \"lots\""),
                (6, "bad date \"2001-02-30 00:00\""),
                (7, "bad property type \"X\""),
                (8, "bad record status \"Z\""),
                (9, "missing transaction id"),
            ]
        );
        assert!(bad.iter().all(|r| !r.file.is_empty()));
    }

    const REPORT_HEADER: &str = "unique_id,price_paid,deed_date,postcode,property_type,new_build,estate_type,saon,paon,street,locality,town,district,county,transaction_category,linked_data_uri";
    const REPORT_ROW_1: &str = "2F7F2B43-135D-E08F-E063-4804A8C05A49,115000,2023-07-07,PO30 5HD,F,N,L,FLAT 4,48,LUGLEY STREET,,NEWPORT,ISLE OF WIGHT,ISLE OF WIGHT,A,http://landregistry.data.gov.uk/data/ppi/transaction/2F7F2B43-135D-E08F-E063-4804A8C05A49/current";
    const REPORT_ROW_2: &str = "\"2F7F2B43-D231-E08F-E063-4804A8C05A49\",\"110000\",\"2025-01-13\",\"PO30 5ET\",\"O\",\"N\",\"F\",\"\",\"BRAUNSTONE HOUSE\",\"LUGLEY STREET\",\"\",\"NEWPORT\",\"ISLE OF WIGHT\",\"ISLE OF WIGHT\",\"B\",\"http://landregistry.data.gov.uk/data/ppi/transaction/2F7F2B43-D231-E08F-E063-4804A8C05A49/current\"";

    fn check_report(ok: &[(u64, PricePaidRow)], first_line: u64) {
        assert_eq!(ok.len(), 2);
        let (line, r) = &ok[0];
        assert_eq!(*line, first_line);
        assert_eq!(r.transaction_id, "2F7F2B43-135D-E08F-E063-4804A8C05A49");
        assert_eq!(r.date, NaiveDate::from_ymd_opt(2023, 7, 7).expect("date"));
        // SAON comes before PAON in this layout
        assert_eq!(r.saon.as_deref(), Some("FLAT 4"));
        assert_eq!(r.paon.as_deref(), Some("48"));
        assert_eq!(r.record_status, "A");
        let (line, r) = &ok[1];
        assert_eq!(*line, first_line + 1);
        assert_eq!(r.paon.as_deref(), Some("BRAUNSTONE HOUSE"));
        assert_eq!(r.saon, None);
        assert_eq!(
            (r.property_type.as_str(), r.ppd_category.as_str()),
            ("O", "B")
        );
    }

    #[test]
    fn report_builder_export() {
        let (ok, bad) = parse(&format!(
            "{REPORT_HEADER}\r\n{REPORT_ROW_1}\r\n{REPORT_ROW_2}\r\n"
        ));
        assert!(bad.is_empty(), "{bad:?}");
        check_report(&ok, 2);
    }

    #[test]
    fn report_builder_export_with_header_run_into_first_record() {
        let (ok, bad) = parse(&format!("{REPORT_HEADER}{REPORT_ROW_1}\n{REPORT_ROW_2}\n"));
        assert!(bad.is_empty(), "{bad:?}");
        check_report(&ok, 1);

        // the same with a quoted header and quoted records
        let quoted_header = REPORT_HEADER
            .split(',')
            .map(|h| format!("\"{h}\""))
            .collect::<Vec<_>>()
            .join(",");
        let (ok, bad) = parse(&format!("{quoted_header}{REPORT_ROW_2}\n{REPORT_ROW_2}"));
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ok.iter().map(|r| r.0).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(ok[0].1.paon.as_deref(), Some("BRAUNSTONE HOUSE"));
    }

    #[test]
    fn report_builder_header_by_name_and_bad_rows() {
        // columns reordered and one record short
        let content = "price_paid,unique_id,deed_date,postcode,property_type,new_build,estate_type,saon,paon,street,locality,town,district,county,transaction_category\n\
            250000,ABC-123,2024-02-29,ex4 2lr,semi-detached,N,freehold,,7,HIGH ST,,EXETER,EXETER,DEVON,A\n\
            250000,ABC-124,2024-02-29,ex4 2lr\n\
            -5,ABC-125,2024-02-29,ex4 2lr,S,N,F,,7,HIGH ST,,EXETER,EXETER,DEVON,A\n";
        let (ok, bad) = parse(content);
        assert_eq!(ok.len(), 1);
        let r = &ok[0].1;
        assert_eq!(
            (
                r.transaction_id.as_str(),
                r.price,
                r.property_type.as_str(),
                r.tenure.as_str()
            ),
            ("ABC-123", 250_000, "S", "F")
        );
        assert_eq!(r.postcode.as_deref(), Some("EX4 2LR"));
        assert_eq!(bad.iter().map(|r| r.line).collect::<Vec<_>>(), vec![3, 4]);
    }

    #[test]
    fn header_without_required_column_is_an_io_error() {
        let f = temp_file(b"unique_id,price_paid,postcode\nA,1,EX1 1AA\n");
        let err = read(f.path()).err().expect("missing columns");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(read(Path::new("/nonexistent/pp.csv")).is_err());
    }

    #[test]
    fn real_monthly_and_complete_files() {
        let Some(dir) = sample("isle_of_wight/ppd_monthly") else {
            return;
        };
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .expect("read dir")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "csv"))
            .collect();
        names.sort();
        let (mut total_ok, mut total_bad) = (0, 0);
        for p in &names {
            let (ok, bad) = split(read(p).expect("opens"));
            println!(
                "price_paid {}: read {} ok {} rejected {}",
                p.display(),
                ok.len() + bad.len(),
                ok.len(),
                bad.len()
            );
            total_ok += ok.len();
            total_bad += bad.len();
        }
        println!("price_paid monthly total: ok {total_ok} rejected {total_bad}");
        assert_eq!(names.len(), 16);
        assert_eq!((total_ok, total_bad), (4_386, 0));

        let (ok, bad) = split(read(&dir.join("April_2025.csv")).expect("opens"));
        assert_eq!((ok.len(), bad.len()), (265, 0));
        let (line, r) = &ok[0];
        assert_eq!(*line, 1);
        assert_eq!(r.transaction_id, "55B1A16F-1F36-4084-A16A-AE1F4CDCA77F");
        assert_eq!(
            (r.price, r.postcode.as_deref(), r.record_status.as_str()),
            (105_000, Some("PO37 6BU"), "C")
        );
        let statuses = |s: &str| ok.iter().filter(|(_, r)| r.record_status == s).count();
        assert_eq!((statuses("A"), statuses("C"), statuses("D")), (248, 14, 3));
        assert_eq!(ok.iter().filter(|(_, r)| r.postcode.is_none()).count(), 3);

        let Some(complete) = sample("format_refs/pp-complete_first_10297_rows_1995.csv") else {
            return;
        };
        let (ok, bad) = split(read(&complete).expect("opens"));
        println!(
            "price_paid {}: read {} ok {} rejected {}",
            complete.display(),
            ok.len() + bad.len(),
            ok.len(),
            bad.len()
        );
        // 10,297 newlines, and a last record without one
        assert_eq!((ok.len(), bad.len()), (10_298, 0));
        let (line, r) = &ok[0];
        assert_eq!(*line, 1);
        assert_eq!(r.transaction_id, "5BBE9CB3-6332-4EB0-9CD3-8737CEA4A65A");
        assert_eq!(
            (r.price, r.town.as_deref()),
            (42_000, Some("NEWCASTLE UPON TYNE"))
        );
        let (line, last) = &ok[10_297];
        assert_eq!(*line, 10_298);
        assert_eq!(last.transaction_id, "A05D6C37-4287-4845-AFC0-B14FDBECFA1B");
        assert_eq!(last.postcode.as_deref(), Some("OL16 2QE"));
    }
}
