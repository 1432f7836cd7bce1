//! The VOA summary valuations (SMV) of a rating list, in the published layout
//! (`uk-englandwales-ndr-YYYY-summaryvaluations-compiled-epoch-NNNN-baseline-csv`): no header,
//! fields separated by `*`, latin-1 text, several record types. Field 1 of every line is the
//! record type; a `01` record starts a valuation and the `02`-`07` records after it belong to it
//! (the UARN is carried forward from the `01`):
//!
//! - `01`: assessment reference, UARN, billing authority code, firm's name, number or name,
//!   sub-street levels 3, 2, 1, street, postal district, town, county, postcode, scheme reference,
//!   primary description text, **total area**, sub total, total value, **adopted RV**, list year,
//!   BA name, BA reference, VO reference, from date, to date, SCAT code, **unit of measurement**,
//!   **unadjusted price** (29 fields with the type);
//! - `02` (a line of the floor-area schedule): line, floor, description, **area**, price, value;
//! - `03` other additions, `04` plant and machinery, `05` car parking, `06` adjustments,
//!   `07` totals: counted, not read.
//!
//! `Total Area` is a floor area in square metres only when the unit of measurement is an area
//! basis (NIA, GIA, GEA, EFA, RCA); for any other unit (a hotel's rooms, a pitch count, `OTH`) it
//! is a count of units and is never read as square metres. When `Total Area` is blank on an area
//! basis, the sum of the `02` areas stands in.
//!
//! One item per valuation, at the line of its `01`. Rejections (each at its own line): a `01`
//! with fewer than 21 fields, a UARN that is not a positive integer or a list year that is not
//! 2010, 2017, 2023 or 2026; a `02`-`07` record before any `01` (no valuation to carry it to), or
//! after a rejected `01`; an unknown record type. Text that is not UTF-8 is read as Latin-1.

use super::{Parsed, Rejection, value};
use chrono::NaiveDate;
use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// The units of measurement whose total is an area in square metres.
pub const AREA_BASES: [&str; 5] = ["NIA", "GIA", "GEA", "EFA", "RCA"];

/// One line of the floor-area schedule (`02`).
#[derive(Debug, Clone, PartialEq)]
pub struct FloorLine {
    pub floor: Option<String>,
    pub description: Option<String>,
    pub area: Option<f64>,
    pub price: Option<f64>,
    pub value: Option<f64>,
}

/// One summary valuation: a `01` record and the records after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Valuation {
    pub list_year: i32,
    pub uarn: i64,
    pub assessment_reference: Option<String>,
    pub scheme_reference: Option<String>,
    pub description_text: Option<String>,
    /// `Total Area` as written: square metres on an area basis, a count of units otherwise.
    pub total_area: Option<f64>,
    /// The unit of measurement (`NIA`, `GIA`, `OTH`, ...), upper case.
    pub unit: Option<String>,
    /// The measured floor area in square metres: only on an area basis.
    pub floor_area_m2: Option<f64>,
    /// The survey unit rate (pounds per unit).
    pub unadjusted_price: Option<f64>,
    pub adopted_rv: Option<i64>,
    pub from_date: Option<NaiveDate>,
    pub floor_lines: Vec<FloorLine>,
    /// The `03`-`07` records carried to it.
    pub other_records: usize,
}

/// The fewest fields a `01` record may have (through the list year).
const MIN_01: usize = 21;

fn smv_date(v: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(v.trim(), "%d-%b-%Y")
        .ok()
        .or_else(|| value::date(v))
}

fn number(v: Option<&String>) -> Option<f64> {
    value::present(v.map(String::as_str)).and_then(|s| value::float(&s.replace(',', "")))
}

fn parse_01(f: &[String]) -> Result<Valuation, String> {
    if f.len() < MIN_01 {
        return Err(format!(
            "a 01 record needs at least {MIN_01} fields separated by *, found {}",
            f.len()
        ));
    }
    let text = |i: usize| value::text(f.get(i).map(String::as_str));
    let uarn =
        value::uprn(&f[2]).ok_or_else(|| format!("UARN {:?} is not a positive integer", f[2]))?;
    let list_year = value::int(&f[20])
        .and_then(|y| i32::try_from(y).ok())
        .filter(|y| [2010, 2017, 2023, 2026].contains(y))
        .ok_or_else(|| format!("list year {:?} is not 2010, 2017, 2023 or 2026", f[20]))?;
    let unit = text(27).map(|u| u.to_ascii_uppercase());
    let total_area = number(f.get(16));
    let area_basis = unit.as_deref().is_some_and(|u| AREA_BASES.contains(&u));
    Ok(Valuation {
        list_year,
        uarn,
        assessment_reference: text(1),
        scheme_reference: text(14),
        description_text: text(15),
        total_area,
        floor_area_m2: if area_basis {
            total_area.filter(|a| *a > 0.0)
        } else {
            None
        },
        unit,
        unadjusted_price: number(f.get(28)),
        adopted_rv: number(f.get(19)).map(|v| v.round() as i64),
        from_date: text(24).and_then(|d| smv_date(&d)),
        floor_lines: Vec::new(),
        other_records: 0,
    })
}

fn parse_02(f: &[String]) -> FloorLine {
    let text = |i: usize| value::text(f.get(i).map(String::as_str));
    FloorLine {
        floor: text(2),
        description: text(3),
        area: number(f.get(4)),
        price: number(f.get(5)),
        value: number(f.get(6)),
    }
}

/// The valuation being read: its `01` line and either the valuation or why it was rejected.
type Open = (u64, Result<Valuation, String>);

struct Reader<R> {
    reader: BufReader<R>,
    file: String,
    line_no: u64,
    open: Option<Open>,
    out: VecDeque<Parsed<Valuation>>,
    done: bool,
}

impl<R: Read> Reader<R> {
    fn reject(&mut self, line: u64, reason: String) {
        self.out.push_back(Err(Rejection {
            file: self.file.clone(),
            line,
            reason,
        }));
    }

    /// Hands on the open valuation, finishing its area from the floor lines when needed.
    fn close(&mut self) {
        match self.open.take() {
            None | Some((_, Err(_))) => {}
            Some((line, Ok(mut v))) => {
                let area_basis = v.unit.as_deref().is_some_and(|u| AREA_BASES.contains(&u));
                if area_basis && v.floor_area_m2.is_none() && v.total_area.is_none() {
                    let sum: f64 = v.floor_lines.iter().filter_map(|l| l.area).sum();
                    v.floor_area_m2 = (sum > 0.0).then_some(sum);
                }
                self.out.push_back(Ok((line, v)));
            }
        }
    }

    fn line(&mut self, text: &str) {
        let line = self.line_no;
        let f: Vec<String> = text.split('*').map(|s| s.trim().to_string()).collect();
        let kind = f[0].as_str();
        match kind {
            "01" | "1" => {
                self.close();
                self.open = Some((line, parse_01(&f)));
                if let Some((_, Err(reason))) = &self.open {
                    let reason = reason.clone();
                    self.reject(line, reason);
                }
            }
            "02" | "03" | "04" | "05" | "06" | "07" | "2" | "3" | "4" | "5" | "6" | "7" => {
                match &mut self.open {
                    None => self.reject(
                        line,
                        format!(
                            "a {kind} record before any 01 record: no valuation to carry it to"
                        ),
                    ),
                    Some((at, Err(_))) => {
                        let at = *at;
                        self.reject(
                            line,
                            format!(
                                "a {kind} record of the valuation at line {at}, which was rejected"
                            ),
                        );
                    }
                    Some((_, Ok(v))) => {
                        if kind.ends_with('2') {
                            v.floor_lines.push(parse_02(&f));
                        } else {
                            v.other_records += 1;
                        }
                    }
                }
            }
            other => self.reject(line, format!("unknown record type {other:?} (01 to 07)")),
        }
    }
}

impl<R: Read> Iterator for Reader<R> {
    type Item = Parsed<Valuation>;

    fn next(&mut self) -> Option<Parsed<Valuation>> {
        loop {
            if let Some(item) = self.out.pop_front() {
                return Some(item);
            }
            if self.done {
                return None;
            }
            let mut buf = Vec::new();
            match self.reader.read_until(b'\n', &mut buf) {
                Ok(0) => {
                    self.done = true;
                    self.close();
                }
                Ok(_) => {
                    self.line_no += 1;
                    if self.line_no == 1 && buf.starts_with(b"\xEF\xBB\xBF") {
                        buf.drain(..3);
                    }
                    let text = value::decode(&buf);
                    let text = text.trim_end_matches(['\n', '\r']);
                    if !text.trim().is_empty() {
                        self.line(text);
                    }
                }
                Err(e) => {
                    self.done = true;
                    self.close();
                    let line = self.line_no + 1;
                    self.reject(line, format!("unreadable: {e}"));
                }
            }
        }
    }
}

/// Whether a first line looks like a summary valuation `01` record.
pub fn is_smv_line(line: &str) -> bool {
    let f: Vec<&str> = line.split('*').collect();
    f.first().is_some_and(|t| t.trim() == "01")
        && f.len() >= MIN_01
        && f.get(2).is_some_and(|u| value::uprn(u).is_some())
}

/// Reads summary valuations from any reader (`file` names it in rejections).
pub fn read_from<R: Read + Send>(
    r: R,
    file: String,
) -> impl Iterator<Item = Parsed<Valuation>> + Send {
    Reader {
        reader: BufReader::new(r),
        file,
        line_no: 0,
        open: None,
        out: VecDeque::new(),
        done: false,
    }
}

/// Opens a summary valuations file.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<Valuation>> + Send> {
    let f = std::fs::File::open(path)?;
    Ok(read_from(f, path.display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::split;

    /// A `01` record in the published field order (29 fields).
    fn h01(uarn: &str, area: &str, rv: &str, year: &str, unit: &str, price: &str) -> String {
        format!(
            "01*12345678*{uarn}*1105*ACME LTD*12**GROUND FLOOR**HIGH STREET**EXAMPLETON*EXAMPLESHIRE*XT1 1AA*203*SHOP AND PREMISES*{area}*{rv}*{rv}*{rv}*{year}*EXAMPLETON COUNCIL*000123*00123*01-APR-2023**249*{unit}*{price}\n"
        )
    }

    #[test]
    fn floor_lines_are_carried_to_their_valuation() {
        let body = [
            h01("1001", "120.5", "12000", "2023", "NIA", "99.59"),
            "02*1*Ground*Retail Zone A*40.5*200*8100\n".into(),
            "02*2*Ground*Retail Zone B*80*48.75*3900\n".into(),
            "07*12000*0\n".into(),
            // A hotel: its total is 40 rooms, never 40 square metres.
            h01("1002", "40", "150000", "2023", "OTH", "3750"),
            "02*1*Ground*Bedrooms*40*3750*150000\n".into(),
            // Area basis with a blank total: the floor lines' sum stands in.
            h01("1003", "", "5000", "2023", "GIA", ""),
            "02*1*Ground*Workshop*60*50*3000\n".into(),
            "02*2*First*Workshop*40*50*2000\n".into(),
        ]
        .concat();
        let (ok, bad) = split(read_from(body.as_bytes(), "smv".into()));
        assert!(bad.is_empty(), "{bad:?}");
        let got: Vec<(u64, i64, Option<f64>, usize)> = ok
            .iter()
            .map(|(l, v)| (*l, v.uarn, v.floor_area_m2, v.floor_lines.len()))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 1001, Some(120.5), 2),
                (5, 1002, None, 1),
                (7, 1003, Some(100.0), 2)
            ]
        );
        let (_, shop) = &ok[0];
        assert_eq!(shop.list_year, 2023);
        assert_eq!(shop.adopted_rv, Some(12_000));
        assert_eq!(shop.unit.as_deref(), Some("NIA"));
        assert_eq!(shop.unadjusted_price, Some(99.59));
        assert_eq!(shop.other_records, 1);
        assert_eq!(shop.floor_lines[0].area, Some(40.5));
        assert_eq!(
            shop.floor_lines[1].description.as_deref(),
            Some("Retail Zone B")
        );
        let (_, hotel) = &ok[1];
        assert_eq!((hotel.total_area, hotel.floor_area_m2), (Some(40.0), None));
    }

    #[test]
    fn orphans_and_bad_headers_are_rejected_each_at_its_line() {
        let body = [
            "02*1*Ground*Orphan*10*1*10\n".to_string(),
            h01("x", "10", "1", "2023", "NIA", "1"),
            "02*1*Ground*Child of a bad header*10*1*10\n".into(),
            h01("1004", "10", "1", "1999", "NIA", "1"),
            "01*1*2*3\n".into(),
            "09*what\n".into(),
            h01("1005", "25", "2500", "2026", "nia", "100"),
        ]
        .concat();
        let (ok, bad) = split(read_from(body.as_bytes(), "smv".into()));
        let lines: Vec<u64> = bad.iter().map(|r| r.line).collect();
        assert_eq!(lines, vec![1, 2, 3, 4, 5, 6], "{bad:?}");
        assert!(bad[0].reason.contains("before any 01"));
        assert!(bad[1].reason.contains("UARN"));
        assert!(bad[2].reason.contains("line 2, which was rejected"));
        assert!(bad[3].reason.contains("list year"));
        assert!(bad[5].reason.contains("unknown record type"));
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].1.floor_area_m2, Some(25.0));
        assert!(is_smv_line(&h01(
            "1005", "25", "2500", "2026", "NIA", "100"
        )));
        assert!(!is_smv_line("1*9901**00030000000*CS*SHOP"));
    }
}
