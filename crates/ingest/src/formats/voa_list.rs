//! The VOA non-domestic rating lists (2010, 2017, 2023, 2026) in the published "list entries"
//! layout: no header, fields separated by `*`, one list entry per line, in this order:
//!
//! 1 incrementing entry number, 2 billing authority code, 3 NDR community code, 4 BA reference,
//! 5 primary and secondary description code, 6 primary description text, 7 UARN, 8 full property
//! identifier (the address), 9 firm's name, 10 number or name, 11 street, 12 town, 13 postal
//! district, 14 county, 15 postcode, 16 effective date, 17 composite indicator, 18 rateable value,
//! 19 appeal settlement code, 20 assessment reference, 21 list alteration date, 22 SCAT code and
//! suffix, then sub-street levels, case number and current-from / current-to dates (not read).
//!
//! Dates are `DD-MON-YYYY` (`01-APR-2017`), also read as `YYYY-MM-DD` or `DD/MM/YYYY`.
//! The list an entry belongs to is the one in force on its effective date: 2010 (1 April 2010 to
//! 31 March 2017), 2017 (to 31 March 2023), 2023 (to 31 March 2026), 2026 (from 1 April 2026).
//!
//! Rejections: fewer than 22 fields, a UARN that is not a positive integer, a blank address, an
//! effective date that is blank, unreadable or before the 2010 list, and a rateable value that is
//! given but not a whole number of pounds. A malformed postcode becomes `None`.
//! Text that is not UTF-8 is read as Latin-1.

use super::{Parsed, Rejection, value};
use chrono::NaiveDate;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// One rating list entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ListEntry {
    pub list_year: i32,
    pub uarn: i64,
    pub billing_authority: Option<String>,
    pub ba_reference: Option<String>,
    pub description_code: Option<String>,
    pub description_text: Option<String>,
    pub scat_code: Option<String>,
    pub firm_name: Option<String>,
    /// The full property identifier, as the list writes it.
    pub address: String,
    pub postcode: Option<String>,
    /// Pounds per year; `None` when blank.
    pub rateable_value: Option<i64>,
    pub effective_date: NaiveDate,
}

/// The fewest fields a list entry line may have.
const MIN_FIELDS: usize = 22;

/// The lists' first days, newest first.
const LISTS: [(i32, (i32, u32, u32)); 4] = [
    (2026, (2026, 4, 1)),
    (2023, (2023, 4, 1)),
    (2017, (2017, 4, 1)),
    (2010, (2010, 4, 1)),
];

/// The list in force on `d`, or `None` before the 2010 list.
pub fn list_for(d: NaiveDate) -> Option<i32> {
    LISTS.iter().find_map(|&(year, (y, m, day))| {
        NaiveDate::from_ymd_opt(y, m, day)
            .filter(|start| d >= *start)
            .map(|_| year)
    })
}

/// Whether a first line looks like a list entries line.
pub fn is_entry_line(line: &str) -> bool {
    let f: Vec<&str> = line.split('*').collect();
    f.len() >= MIN_FIELDS && f.get(6).is_some_and(|u| value::uprn(u).is_some())
}

/// `01-APR-2017`, or the ISO and slash forms.
fn list_date(v: &str) -> Option<NaiveDate> {
    // chrono reads month abbreviations in any case, so the published `APR` is read as is
    NaiveDate::parse_from_str(v.trim(), "%d-%b-%Y")
        .ok()
        .or_else(|| value::date(v))
}

fn parse_line(line: &str) -> Result<ListEntry, String> {
    let f: Vec<String> = line.split('*').map(|s| s.trim().to_string()).collect();
    if f.len() < MIN_FIELDS {
        return Err(format!(
            "expected at least {MIN_FIELDS} fields separated by *, found {}",
            f.len()
        ));
    }
    let text = |i: usize| value::text(f.get(i).map(String::as_str));
    let uarn =
        value::uprn(&f[6]).ok_or_else(|| format!("UARN {:?} is not a positive integer", f[6]))?;
    let address = text(7).ok_or("blank address (full property identifier)")?;
    let eff = text(15).ok_or("blank effective date")?;
    let effective_date =
        list_date(&eff).ok_or_else(|| format!("effective date {eff:?} is not a date"))?;
    let list_year = list_for(effective_date)
        .ok_or_else(|| format!("effective date {effective_date} is before the 2010 list"))?;
    let rateable_value = match text(17) {
        None => None,
        Some(v) => Some(
            value::int(&v)
                .filter(|r| *r >= 0)
                .ok_or_else(|| format!("rateable value {v:?} is not a whole number of pounds"))?,
        ),
    };
    Ok(ListEntry {
        list_year,
        uarn,
        billing_authority: text(1),
        ba_reference: text(3),
        description_code: text(4),
        description_text: text(5),
        scat_code: text(21),
        firm_name: text(8),
        address,
        postcode: value::postcode(f.get(14).map(String::as_str)),
        rateable_value,
        effective_date,
    })
}

/// Opens a list entries file.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<ListEntry>> + Send> {
    let file = path.display().to_string();
    let mut reader = BufReader::new(std::fs::File::open(path)?);
    let mut line_no = 0u64;
    let mut done = false;
    Ok(std::iter::from_fn(move || {
        loop {
            if done {
                return None;
            }
            let mut buf = Vec::new();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) => return None,
                Ok(_) => {
                    line_no += 1;
                    if line_no == 1 && buf.starts_with(b"\xEF\xBB\xBF") {
                        buf.drain(..3);
                    }
                    let text = value::decode(&buf);
                    let text = text.trim_end_matches(['\n', '\r']);
                    if text.trim().is_empty() {
                        continue;
                    }
                    return Some(parse_line(text).map(|e| (line_no, e)).map_err(|reason| {
                        Rejection {
                            file: file.clone(),
                            line: line_no,
                            reason,
                        }
                    }));
                }
                Err(e) => {
                    done = true;
                    return Some(Err(Rejection {
                        file: file.clone(),
                        line: line_no + 1,
                        reason: format!("unreadable: {e}"),
                    }));
                }
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    /// A synthetic entry in the published layout (28 fields).
    fn entry(uarn: &str, eff: &str, rv: &str) -> String {
        format!(
            "1*1105*12345*00012345000*CS*SHOP AND PREMISES*{uarn}*GROUND FLOOR, 12, HIGH STREET, EXAMPLETON, XT1 1AA*ACME LTD*12*HIGH STREET*EXAMPLETON**EXAMPLESHIRE*XT1 1AA*{eff}**{rv}**123456789*01-APR-2017*249G*****{eff}*\n"
        )
    }

    #[test]
    fn entries_lists_and_rejections() {
        let body = [
            entry("10011934000", "01-APR-2017", "12500"),
            entry("10011934000", "01-APR-2023", "14000"),
            entry("10011934001", "2026-04-01", ""),
            entry("10011934002", "15-JUN-2012", "9800"),
            "\n".to_string(),
            entry("x", "01-APR-2017", "1"),
            entry("10011934003", "01-APR-2005", "1"),
            entry("10011934004", "someday", "1"),
            entry("10011934005", "01-APR-2017", "12.5"),
            "1*2*3\n".to_string(),
        ]
        .concat();
        let f = temp_file(body.as_bytes());
        let (ok, bad) = split(read(f.path()).unwrap());
        let got: Vec<(u64, i32, i64, Option<i64>)> = ok
            .iter()
            .map(|(l, e)| (*l, e.list_year, e.uarn, e.rateable_value))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 2017, 10011934000, Some(12500)),
                (2, 2023, 10011934000, Some(14000)),
                (3, 2026, 10011934001, None),
                (4, 2010, 10011934002, Some(9800)),
            ]
        );
        let e = &ok[0].1;
        assert_eq!(e.description_code.as_deref(), Some("CS"));
        assert_eq!(e.scat_code.as_deref(), Some("249G"));
        assert_eq!(e.postcode.as_deref(), Some("XT1 1AA"));
        assert_eq!(e.billing_authority.as_deref(), Some("1105"));
        let lines: Vec<u64> = bad.iter().map(|r| r.line).collect();
        assert_eq!(lines, vec![6, 7, 8, 9, 10], "{bad:?}");
        assert!(bad[1].reason.contains("before the 2010 list"));
        assert!(is_entry_line(entry("1", "01-APR-2017", "1").trim_end()));
        assert!(!is_entry_line("reference,decision"));
    }
}
