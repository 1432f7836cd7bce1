//! ONS construction price series, read from the spreadsheet (xlsx or ods) as ONS publishes it:
//! the construction output price indices (monthly, 2015 = 100, one column per work type), the
//! construction output implied deflator and average weekly earnings in construction.
//!
//! Layout (ONS accessible spreadsheets): a workbook of sheets (`Cover sheet`, `Contents`,
//! `Notes`, then tables such as `Table_1`); a table sheet has a few title and note rows, then one
//! header row, then one row per period. The header row is the first row holding a period column
//! header (`Time period`, `Period`, `Date`, `Month`, `Quarter` or `Year`) and at least one known
//! series title; every other column is ignored. Columns are found by title, never by position, so
//! a column that moves is still read.
//!
//! Series titles (case and punctuation aside; a `(2015=100)` note or a `[note 3]` marker is
//! allowed around them): the work types `New housing`, `Infrastructure`, `Public non-housing`
//! (or `Public other new work`), `Private industrial`, `Private commercial`, `All new work`,
//! `Housing repair and maintenance`, `Non-housing repair and maintenance`,
//! `All repair and maintenance`, `All work` (or `All construction`); a title containing
//! `implied deflator` is the deflator (of the work type it names, else all work); a title
//! containing `average weekly earnings` and `construction` is the labour series, in pounds per
//! week. The base period is read from `YYYY=100` in the title or the sheet's title rows.
//!
//! Periods: `2024 Jan`, `Jan 2024`, `January 2024`, `2024M01`, `2024 Q1`, `Q1 2024`, `2024Q1`,
//! `2024`, or a date cell (its month). One item per non-blank cell of a series column in a data
//! row, so every published value is accounted for: the markers ONS uses for no value (`..`,
//! `x`, `[x]`, `[c]`, `[z]`, `-`) are not values and yield nothing; any other cell that is not a
//! number, a value not above zero, and a row whose period label cannot be read while its series
//! cells hold numbers are rejected with the sheet and cell (`Table_1!C12`). A row with no number
//! under any series (a footnote) is not data.

use super::{Parsed, Rejection};
use calamine::{Data, Reader, open_workbook_auto};
use chrono::{Days, NaiveDate};
use std::io;
use std::path::Path;
use terrace_core::costs::{Basis, Period, Sector};

/// One published value of one series.
#[derive(Debug, Clone, PartialEq)]
pub struct CostPoint {
    pub basis: Basis,
    pub sector: Sector,
    pub period: Period,
    pub value: f64,
    /// `index` or `gbp_per_week`.
    pub unit: &'static str,
    pub base_period: Option<String>,
    /// The column's title as published.
    pub title: String,
}

/// What a column title names: basis, sector and unit.
pub fn classify(title: &str) -> Option<(Basis, Sector, &'static str)> {
    let t = normalise(title);
    if t.contains("average weekly earnings") && t.contains("construction") {
        return Some((Basis::Labour, Sector::AllWork, "gbp_per_week"));
    }
    if t.contains("implied deflator") {
        return Some((
            Basis::Deflator,
            work_type(&t).unwrap_or(Sector::AllWork),
            "index",
        ));
    }
    work_type(&t).map(|s| (Basis::Output, s, "index"))
}

/// Lower case, notes in brackets dropped, punctuation to spaces, single spaces.
fn normalise(s: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            _ if depth > 0 => {}
            c if c.is_alphanumeric() => out.push(c.to_ascii_lowercase()),
            '=' => out.push('='),
            _ => out.push(' '),
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn work_type(t: &str) -> Option<Sector> {
    let has = |p: &str| t.contains(p);
    let rm = has("repair and maintenance") || has("repair maintenance") || has("r m");
    Some(if has("all new work") {
        Sector::AllNewWork
    } else if has("all repair") {
        Sector::AllRepair
    } else if rm && (has("non housing") || has("nonhousing")) {
        Sector::NonHousingRepair
    } else if rm && has("housing") {
        Sector::HousingRepair
    } else if has("all construction") || has("all work") {
        Sector::AllWork
    } else if has("new housing") || has("new work housing") || t == "housing" {
        Sector::NewHousing
    } else if has("infrastructure") {
        Sector::Infrastructure
    } else if has("public non housing") || has("public other new work") {
        Sector::PublicNonHousing
    } else if has("private industrial") {
        Sector::PrivateIndustrial
    } else if has("private commercial") {
        Sector::PrivateCommercial
    } else {
        return None;
    })
}

const PERIOD_HEADERS: &[&str] = &["time period", "period", "date", "month", "quarter", "year"];
const NO_VALUE: &[&str] = &["..", "x", "[x]", "[c]", "[z]", "[u]", "-", ":"];
const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// A cell's text (numbers as written), trimmed.
fn text(c: &Data) -> String {
    match c {
        Data::String(s) | Data::DateTimeIso(s) | Data::DurationIso(s) => s.trim().to_string(),
        Data::Float(f) => f.to_string(),
        Data::Int(i) => i.to_string(),
        Data::Bool(b) => b.to_string(),
        Data::DateTime(d) => d.as_f64().to_string(),
        Data::Error(e) => format!("#{e:?}"),
        Data::Empty => String::new(),
    }
}

/// `2015` from a text holding `2015=100` (spaces allowed).
fn base_period(s: &str) -> Option<String> {
    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    let at = compact.find("=100")?;
    let before = &compact[..at];
    let digits: String = before.chars().rev().take(4).collect::<String>();
    let year: String = digits.chars().rev().collect();
    (year.len() == 4 && year.bytes().all(|b| b.is_ascii_digit())).then_some(year)
}

/// The period a label or date cell names (see the module documentation).
pub fn period_of(c: &Data) -> Option<Period> {
    match c {
        Data::DateTime(d) => {
            let serial = d.as_f64().floor();
            if !(1.0..2_958_466.0).contains(&serial) {
                return None;
            }
            let day = NaiveDate::from_ymd_opt(1899, 12, 30)?
                .checked_add_days(Days::new(serial as u64))?;
            Some(Period::of(terrace_core::costs::Freq::Monthly, day))
        }
        Data::DateTimeIso(s) => {
            let day = NaiveDate::parse_from_str(s.get(..10)?, "%Y-%m-%d").ok()?;
            Some(Period::of(terrace_core::costs::Freq::Monthly, day))
        }
        Data::Float(f) if f.fract() == 0.0 => Period::parse(&format!("{f:.0}")),
        Data::Int(i) => Period::parse(&i.to_string()),
        Data::String(s) => period_label(s),
        Data::Float(_) | Data::Bool(_) | Data::DurationIso(_) | Data::Error(_) | Data::Empty => {
            None
        }
    }
}

fn period_label(s: &str) -> Option<Period> {
    let s = s.trim();
    if let Some(p) = Period::parse(s) {
        return Some(p);
    }
    let words: Vec<String> = s
        .split(|c: char| c.is_whitespace() || c == '-' || c == '/')
        .filter(|w| !w.is_empty())
        .map(|w| w.to_ascii_lowercase())
        .collect();
    let [a, b] = words.as_slice() else {
        return None;
    };
    let year = |w: &str| {
        (w.len() == 4 && w.bytes().all(|c| c.is_ascii_digit()))
            .then(|| w.parse::<i32>().ok())
            .flatten()
    };
    const FULL: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let month = |w: &str| {
        (0..12).find(|&i| {
            w == MONTHS[i] || (w.len() > 3 && FULL[i].starts_with(w)) || (i == 8 && w == "sept")
        })
    };
    let quarter = |w: &str| {
        w.strip_prefix('q')
            .and_then(|q| q.parse::<u32>().ok())
            .filter(|q| (1..=4).contains(q))
    };
    let (a, b) = (a.as_str(), b.as_str());
    let (y, other) = match (year(a), year(b)) {
        (Some(y), None) => (y, b),
        (None, Some(y)) => (y, a),
        _ => return None,
    };
    let p = if let Some(m) = month(other) {
        Period::Month(y, m as u32 + 1)
    } else {
        Period::Quarter(y, quarter(other)?)
    };
    Period::parse(&p.to_string())
}

/// `A`, `B`, .. `Z`, `AA`.. for a 0-based column.
fn column_name(mut c: u32) -> String {
    let mut s = Vec::new();
    loop {
        s.push(b'A' + (c % 26) as u8);
        if c < 26 {
            break;
        }
        c = c / 26 - 1;
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

/// A number in a value cell, or the reason it is not one; `Ok(None)` for a no-value marker.
fn value_of(c: &Data) -> Result<Option<f64>, String> {
    let v = match c {
        Data::Float(f) => *f,
        Data::Int(i) => *i as f64,
        Data::String(s) => {
            let t = s.trim();
            if NO_VALUE.contains(&t.to_ascii_lowercase().as_str()) {
                return Ok(None);
            }
            // ONS marks a provisional or revised value with a trailing note marker.
            let t = t.trim_end_matches(|ch: char| {
                ch == ']' || ch == '[' || ch.is_alphabetic() || ch.is_whitespace()
            });
            t.replace(',', "")
                .parse::<f64>()
                .map_err(|_| format!("value {s:?} is not a number"))?
        }
        Data::Empty => return Ok(None),
        Data::Bool(_)
        | Data::DateTime(_)
        | Data::DateTimeIso(_)
        | Data::DurationIso(_)
        | Data::Error(_) => {
            return Err(format!("value {:?} is not a number", text(c)));
        }
    };
    if !v.is_finite() || v <= 0.0 {
        return Err(format!("value {v} is not above zero"));
    }
    Ok(Some(v))
}

/// A table found in a sheet: its header row and the columns read.
struct Table {
    header_row: usize,
    period_col: usize,
    series: Vec<(usize, String, Basis, Sector, &'static str)>,
}

fn find_table(rows: &[&[Data]]) -> Option<Table> {
    for (i, row) in rows.iter().enumerate() {
        let period_col = row
            .iter()
            .position(|c| PERIOD_HEADERS.contains(&normalise(&text(c)).as_str()));
        let series: Vec<_> = row
            .iter()
            .enumerate()
            .filter_map(|(j, c)| {
                let t = text(c);
                classify(&t).map(|(b, s, u)| (j, t, b, s, u))
            })
            .collect();
        if let Some(period_col) = period_col
            && !series.is_empty()
        {
            return Some(Table {
                header_row: i,
                period_col,
                series,
            });
        }
    }
    None
}

/// Opens a workbook and reads every series of every table sheet (see the module documentation).
/// A file that is not a workbook, or a workbook where no sheet has a table of known series, is
/// an `InvalidData` error.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<CostPoint>> + Send> {
    let file = path.display().to_string();
    let mut book = open_workbook_auto(path)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{file}: {e}")))?;
    let mut items: Vec<Parsed<CostPoint>> = Vec::new();
    let mut tables = 0;
    for sheet in book.sheet_names() {
        let range = book.worksheet_range(&sheet).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{file}: sheet {sheet}: {e}"),
            )
        })?;
        let (row0, col0) = range.start().unwrap_or((0, 0));
        let rows: Vec<&[Data]> = range.rows().collect();
        let Some(t) = find_table(&rows) else {
            continue;
        };
        tables += 1;
        let sheet_base = rows[..t.header_row]
            .iter()
            .flat_map(|r| r.iter())
            .find_map(|c| base_period(&text(c)));
        for (i, row) in rows.iter().enumerate().skip(t.header_row + 1) {
            let line = u64::from(row0) + i as u64 + 1;
            let cell = |j: usize| format!("{sheet}!{}{line}", column_name(col0 + j as u32));
            let reject = |j: usize, reason: String| Rejection {
                file: file.clone(),
                line,
                reason: format!("({}) {reason}", cell(j)),
            };
            let values: Vec<(usize, Result<Option<f64>, String>)> = t
                .series
                .iter()
                .map(|(j, ..)| (*j, row.get(*j).map_or(Ok(None), value_of)))
                .collect();
            let holds_number = values.iter().any(|(_, v)| matches!(v, Ok(Some(_))));
            let period_cell = row.get(t.period_col).cloned().unwrap_or(Data::Empty);
            let Some(period) = period_of(&period_cell) else {
                if holds_number {
                    items.push(Err(reject(
                        t.period_col,
                        format!(
                            "period {:?} is not a month, quarter or year",
                            text(&period_cell)
                        ),
                    )));
                }
                continue;
            };
            for ((j, v), (_, title, basis, sector, unit)) in values.into_iter().zip(&t.series) {
                match v {
                    Ok(None) => {}
                    Ok(Some(value)) => items.push(Ok((
                        line,
                        CostPoint {
                            basis: *basis,
                            sector: *sector,
                            period,
                            value,
                            unit,
                            base_period: if *unit == "index" {
                                base_period(title).or_else(|| sheet_base.clone())
                            } else {
                                None
                            },
                            title: title.clone(),
                        },
                    ))),
                    Err(why) => items.push(Err(reject(j, format!("{title}: {why}")))),
                }
            }
        }
    }
    if tables == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{file}: no sheet has a period column and a known construction price series title"
            ),
        ));
    }
    Ok(items.into_iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_name_their_series() {
        for (t, want) in [
            (
                "New housing (2015=100)",
                Some((Basis::Output, Sector::NewHousing)),
            ),
            (
                "Infrastructure [note 3]",
                Some((Basis::Output, Sector::Infrastructure)),
            ),
            (
                "Public other new work",
                Some((Basis::Output, Sector::PublicNonHousing)),
            ),
            (
                "PRIVATE INDUSTRIAL",
                Some((Basis::Output, Sector::PrivateIndustrial)),
            ),
            (
                "Private commercial",
                Some((Basis::Output, Sector::PrivateCommercial)),
            ),
            ("All new work", Some((Basis::Output, Sector::AllNewWork))),
            (
                "Housing repair and maintenance",
                Some((Basis::Output, Sector::HousingRepair)),
            ),
            (
                "Non-housing repair and maintenance",
                Some((Basis::Output, Sector::NonHousingRepair)),
            ),
            (
                "All repair and maintenance",
                Some((Basis::Output, Sector::AllRepair)),
            ),
            ("All construction", Some((Basis::Output, Sector::AllWork))),
            ("All work", Some((Basis::Output, Sector::AllWork))),
            (
                "Implied deflator: all work (2019=100)",
                Some((Basis::Deflator, Sector::AllWork)),
            ),
            (
                "Construction output implied deflator",
                Some((Basis::Deflator, Sector::AllWork)),
            ),
            (
                "Average weekly earnings: construction (£)",
                Some((Basis::Labour, Sector::AllWork)),
            ),
            ("Time period", None),
            ("Notes", None),
            ("", None),
        ] {
            assert_eq!(classify(t).map(|(b, s, _)| (b, s)), want, "{t}");
        }
        assert_eq!(
            base_period("New housing (2015 = 100)").as_deref(),
            Some("2015")
        );
        assert_eq!(base_period("Index"), None);
    }

    #[test]
    fn period_labels() {
        let s = |v: &str| period_of(&Data::String(v.into())).map(|p| p.to_string());
        for (v, want) in [
            ("2024 Jan", Some("2024M01")),
            ("Jan 2024", Some("2024M01")),
            ("September 2023", Some("2023M09")),
            ("2023 SEPT", Some("2023M09")),
            ("2024M12", Some("2024M12")),
            ("2024 Q3", Some("2024Q3")),
            ("Q4 2024", Some("2024Q4")),
            ("2024Q1", Some("2024Q1")),
            ("2024", Some("2024")),
            ("Source: ONS", None),
            ("2024 Q5", None),
            ("Janx 2024", None),
            ("13 2024", None),
        ] {
            assert_eq!(s(v).as_deref(), want, "{v}");
        }
        assert_eq!(
            period_of(&Data::Float(2019.0))
                .map(|p| p.to_string())
                .as_deref(),
            Some("2019")
        );
        assert_eq!(column_name(0), "A");
        assert_eq!(column_name(27), "AB");
    }
}
