//! HM Land Registry's Registered Leases: one row per registered lease, with the lease's date and
//! its term as free text (`99 years from 24 June 1985`).
//!
//! Columns are found by name: `Unique Identifier` (required in the header), `Tenure`,
//! `Register Property Description`, `County`, `Region`, `Associated Property Description ID`,
//! `Associated Property Description`, `OS UPRN`, `Price Paid`, `Reg Order`, `Date of Lease`,
//! `Term`, `Alienation Clause Indicator`. Runs of spaces or underscores in a header name count as
//! one. Any of the optional columns may be absent.
//!
//! Rejections: a wrong column count, a blank unique identifier. Every other value that does not
//! parse becomes `None`; a term that cannot be read is kept as text with the reason in
//! [`LeaseRow::term_problem`] (the row is still loaded), because a term is never guessed.

use super::csvio::{Header, Opened, field};
use super::{Parsed, value};
use chrono::{Datelike, Days, Months, NaiveDate};
use std::io;
use std::path::Path;

/// A lease term read from text such as `99 years from 24 June 1985`.
///
/// Convention: the term starts on `start` whether the text says "from", "from and including",
/// "commencing on" or "starting on", and runs for `years` years less `less_days` days, so its last
/// day is `start + years - less_days - 1 day` (see [`LeaseTerm::end`]). A 29 February start's
/// anniversary in a common year is 1 March, so its last day is 28 February.
///
/// A term stated as a date range (`from 1 January 2005 to 31 December 2129`) is held the same way:
/// `years` is the smallest whole number of years that reaches the stated last day and `less_days`
/// the days short of it, so `end()` is exactly the stated last day (here 125 years less 0 days).
#[derive(Debug, Clone, PartialEq)]
pub struct LeaseTerm {
    pub years: u32,
    pub less_days: u32,
    pub start: NaiveDate,
}

impl LeaseTerm {
    /// The last day of the term: `start + years - less_days - 1 day`.
    /// (`NaiveDate::MAX` for a hand-built term that runs past the calendar; never for one from
    /// [`parse_term`].)
    pub fn end(&self) -> NaiveDate {
        anniversary(self.start, self.years)
            .and_then(|a| a.checked_sub_days(Days::new(u64::from(self.less_days) + 1)))
            .unwrap_or(NaiveDate::MAX)
    }
}

/// One registered lease.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaseRow {
    pub unique_id: String,
    pub tenure: Option<String>,
    pub register_description: Option<String>,
    pub county: Option<String>,
    pub region: Option<String>,
    pub associated_description_id: Option<String>,
    pub associated_description: Option<String>,
    /// `OS UPRN`; `None` when it is not a positive integer.
    pub uprn: Option<i64>,
    /// Whole pounds (`£125,000` and `125000` are both 125000); `None` when not a whole,
    /// non-negative number of pounds.
    pub price_paid: Option<i64>,
    pub reg_order: Option<String>,
    /// `24-06-1985`, `24/06/1985`, `1985-06-24`, `24.06.1985`, `24 June 1985`, `24th Jun 1985`;
    /// `None` when blank or not a date.
    pub date_of_lease: Option<NaiveDate>,
    /// The term as given (trimmed), `None` when blank.
    pub term_text: Option<String>,
    /// The parsed term; `None` when blank or not understood.
    pub term: Option<LeaseTerm>,
    /// Why a non-blank term could not be read (then `term` is `None`).
    pub term_problem: Option<String>,
    /// `Y`/`Yes` is true, `N`/`No` false (any case); anything else `None`.
    pub alienation_clause: Option<bool>,
}

/// Column positions, looked up once per file.
#[derive(Debug, Clone)]
struct Columns {
    unique_id: Option<usize>,
    tenure: Option<usize>,
    register_description: Option<usize>,
    county: Option<usize>,
    region: Option<usize>,
    associated_description_id: Option<usize>,
    associated_description: Option<usize>,
    uprn: Option<usize>,
    price_paid: Option<usize>,
    reg_order: Option<usize>,
    date_of_lease: Option<usize>,
    term: Option<usize>,
    alienation: Option<usize>,
}

impl Columns {
    fn new(h: &Header) -> Self {
        Self {
            unique_id: h.find(UNIQUE_ID),
            tenure: h.find(&["tenure"]),
            register_description: h.find(&["register-property-description"]),
            county: h.find(&["county"]),
            region: h.find(&["region"]),
            associated_description_id: h.find(&["associated-property-description-id"]),
            associated_description: h.find(&["associated-property-description"]),
            uprn: h.find(&["os-uprn", "uprn"]),
            price_paid: h.find(&["price-paid"]),
            reg_order: h.find(&["reg-order"]),
            date_of_lease: h.find(&["date-of-lease"]),
            term: h.find(&["term"]),
            alienation: h.find(&["alienation-clause-indicator"]),
        }
    }
}

const UNIQUE_ID: &[&str] = &["unique-identifier", "unique-id"];

/// `associated--property` (from a doubled space) is `associated-property`.
pub(super) fn collapse_dashes(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if !(c == '-' && (out.is_empty() || out.ends_with('-'))) {
            out.push(c);
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// Opens a Registered Leases CSV; the header must have a `Unique Identifier` column.
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<LeaseRow>> + Send> {
    let mut source = Opened::open(path)?.into_source();
    let names = source.header()?.unwrap_or_default();
    let header = Header::new(names.iter().map(|n| collapse_dashes(n)).collect());
    if !header.names.is_empty() {
        header.require(&source.file, UNIQUE_ID)?;
    }
    let cols = Columns::new(&header);
    Ok(source.rows(header.len(), move |fields| parse_row(fields, &cols)))
}

fn parse_row(fields: &[String], c: &Columns) -> Result<LeaseRow, String> {
    let get = |i: Option<usize>| value::present(field(fields, i));
    let text = |i: Option<usize>| get(i).map(str::to_string);
    let unique_id = field(fields, c.unique_id)
        .ok_or("blank unique identifier")?
        .to_string();
    let date_of_lease = get(c.date_of_lease).and_then(parse_date_text);
    let term_text = field(fields, c.term).map(str::to_string);
    let (term, term_problem) = match &term_text {
        None => (None, None),
        Some(t) => match parse_term(t, date_of_lease) {
            Ok(term) => (Some(term), None),
            Err(why) => (None, Some(why)),
        },
    };
    let alienation_clause = get(c.alienation).and_then(|v| {
        if v.eq_ignore_ascii_case("y") || v.eq_ignore_ascii_case("yes") {
            Some(true)
        } else if v.eq_ignore_ascii_case("n") || v.eq_ignore_ascii_case("no") {
            Some(false)
        } else {
            None
        }
    });
    Ok(LeaseRow {
        unique_id,
        tenure: text(c.tenure),
        register_description: text(c.register_description),
        county: text(c.county),
        region: text(c.region),
        associated_description_id: text(c.associated_description_id),
        associated_description: text(c.associated_description),
        uprn: get(c.uprn).and_then(value::uprn),
        price_paid: get(c.price_paid).and_then(pounds),
        reg_order: text(c.reg_order),
        date_of_lease,
        term_text,
        term,
        term_problem,
        alienation_clause,
    })
}

/// Whole pounds from `£125,000`, `125000`, `125000.00`.
fn pounds(v: &str) -> Option<i64> {
    let v = v.trim().trim_start_matches(['£', 'Â']);
    let digits: String = v
        .chars()
        .filter(|c| *c != ',' && !c.is_whitespace())
        .collect();
    value::int(&digits).filter(|p| *p >= 0)
}

/// A date column value: anything [`value::date`] reads, or a date as written in term text.
fn parse_date_text(v: &str) -> Option<NaiveDate> {
    let cleaned = clean(v);
    let mut w = Words::new(&cleaned);
    match parse_date(&mut w, None) {
        Ok(d) if w.at_end() => Some(d),
        // `1985-06-24 00:00:00` and the like; a year before 1000 is a two-digit year misread
        Ok(_) | Err(_) => value::date(v).filter(|d| d.year() >= 1000),
    }
}

/// The date `years` whole years after `start` (1 March for a 29 February start in a common year).
fn anniversary(start: NaiveDate, years: u32) -> Option<NaiveDate> {
    let a = start.checked_add_months(Months::new(years.checked_mul(12)?))?;
    if start.month() == 2 && start.day() == 29 && a.day() == 28 {
        a.succ_opt()
    } else {
        Some(a)
    }
}

/// Reads a lease term (see the module tests for the forms understood). `date_of_lease` is the
/// start of a term that runs "from the date of the lease" / "from the date hereof".
/// Anything not understood is an `Err` saying what was not understood; nothing is guessed.
pub fn parse_term(text: &str, date_of_lease: Option<NaiveDate>) -> Result<LeaseTerm, String> {
    let cleaned = clean(text);
    let mut w = Words::new(&cleaned);
    if w.at_end() {
        return Err("blank term".into());
    }
    // "a term of", "the term of", "term:", ...
    if w.eat("a") || w.eat("the") {
        if !w.eat("term") {
            w.i -= 1;
        }
    } else {
        w.eat("term");
    }
    if w.i > 0 {
        w.eat("of");
    }
    let mut years = parse_years(&mut w);
    let mut less = parse_less(&mut w)?;
    let Some(start) = parse_start(&mut w, date_of_lease)? else {
        return Err(if years.is_none() {
            format!(
                "expected a number of years or 'from <date>' but found {}",
                w.rest()
            )
        } else {
            format!("expected 'from <date>' but found {}", w.rest())
        });
    };
    if years.is_none() && w.eat("for") {
        years = Some(
            parse_years(&mut w)
                .ok_or_else(|| format!("expected a number of years but found {}", w.rest()))?,
        );
    }
    let more_less = |w: &mut Words<'_>, less: &mut Option<u32>| -> Result<(), String> {
        if let Some(n) = parse_less(w)? {
            if less.is_some() {
                return Err("'less ... days' is given twice".into());
            }
            *less = Some(n);
        }
        Ok(())
    };
    more_less(&mut w, &mut less)?;
    let end = parse_end(&mut w, date_of_lease)?;
    more_less(&mut w, &mut less)?;
    if !w.at_end() {
        return Err(format!("did not understand {}", w.rest()));
    }

    match (years, end) {
        (None, None) => Err("no number of years and no end date".into()),
        (Some(years), None) => {
            let term = LeaseTerm {
                years,
                less_days: less.unwrap_or(0),
                start,
            };
            check_length(&term)?;
            Ok(term)
        }
        (_, Some(end)) => {
            if end < start {
                return Err(format!("the end date {end} is before the start {start}"));
            }
            let term = term_until(start, end)?;
            if let Some(years) = years {
                let stated = LeaseTerm {
                    years,
                    less_days: less.unwrap_or(0),
                    start,
                };
                check_length(&stated)?;
                if stated.end() != end {
                    return Err(format!(
                        "the stated length ends on {}, not on the stated end date {end}",
                        stated.end()
                    ));
                }
            } else if less.is_some() {
                return Err("'less ... days' with an end date but no number of years".into());
            }
            Ok(term)
        }
    }
}

/// Rejects a term of no length and one whose end is beyond the calendar.
fn check_length(term: &LeaseTerm) -> Result<(), String> {
    let days = u64::from(term.less_days) + 1;
    let end = anniversary(term.start, term.years)
        .and_then(|a| a.checked_sub_days(Days::new(days)))
        .ok_or_else(|| format!("a term of {} years is too long", term.years))?;
    if end < term.start {
        return Err(format!(
            "a term of {} years less {} days has no length",
            term.years, term.less_days
        ));
    }
    Ok(())
}

/// The term from `start` whose last day is `end` (`end >= start`).
fn term_until(start: NaiveDate, end: NaiveDate) -> Result<LeaseTerm, String> {
    let too_long = || format!("the end date {end} is too far away");
    // the smallest `years` whose anniversary is after `end`; fewer than the difference in
    // calendar years never is
    let mut years = u32::try_from(end.year() - start.year()).map_err(|_| too_long())?;
    let after = loop {
        let a = anniversary(start, years).ok_or_else(too_long)?;
        if a > end {
            break a;
        }
        years += 1;
    };
    let short = (after - end).num_days() - 1;
    let less_days = u32::try_from(short).map_err(|_| too_long())?;
    Ok(LeaseTerm {
        years,
        less_days,
        start,
    })
}

/// Lower case, punctuation that carries nothing (`,;:()[]`) as spaces, `&` as `and`.
fn clean(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .map(|c| {
            if matches!(c, ',' | ';' | ':' | '(' | ')' | '[' | ']') {
                ' '
            } else {
                c
            }
        })
        .collect::<String>()
        .replace('&', " and ")
}

/// Words with a cursor.
struct Words<'a> {
    w: Vec<&'a str>,
    i: usize,
}

impl<'a> Words<'a> {
    fn new(text: &'a str) -> Self {
        let w = text
            .split_whitespace()
            .map(|t| t.trim_end_matches('.'))
            .filter(|t| !t.is_empty())
            .collect();
        Self { w, i: 0 }
    }

    fn peek(&self) -> Option<&'a str> {
        self.w.get(self.i).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<&'a str> {
        self.w.get(self.i + ahead).copied()
    }

    fn at_end(&self) -> bool {
        self.i >= self.w.len()
    }

    fn eat(&mut self, word: &str) -> bool {
        let yes = self.peek() == Some(word);
        if yes {
            self.i += 1;
        }
        yes
    }

    fn eat_any(&mut self, words: &[&str]) -> Option<&'a str> {
        let w = self.peek().filter(|w| words.contains(w))?;
        self.i += 1;
        Some(w)
    }

    /// Eats all of `words` in order, or nothing.
    fn eat_seq(&mut self, words: &[&str]) -> bool {
        let yes = words
            .iter()
            .enumerate()
            .all(|(k, w)| self.peek_at(k) == Some(*w));
        if yes {
            self.i += words.len();
        }
        yes
    }

    /// The words not yet read, quoted, for error messages.
    fn rest(&self) -> String {
        if self.at_end() {
            "the end of the text".into()
        } else {
            format!("{:?}", self.w[self.i..].join(" "))
        }
    }
}

fn count(word: &str) -> Option<u32> {
    (!word.is_empty() && word.bytes().all(|b| b.is_ascii_digit()))
        .then(|| word.parse().ok())
        .flatten()
}

/// `N years` (also `year`, `yrs`, `yr`); nothing is eaten when the words are not that.
fn parse_years(w: &mut Words<'_>) -> Option<u32> {
    let n = w.peek().and_then(count)?;
    matches!(w.peek_at(1), Some("year" | "years" | "yrs" | "yr")).then(|| {
        w.i += 2;
        n
    })
}

/// `less [the last] N days`.
fn parse_less(w: &mut Words<'_>) -> Result<Option<u32>, String> {
    if !w.eat("less") {
        return Ok(None);
    }
    w.eat_seq(&["the", "last"]);
    let n = w.peek().and_then(count);
    match (n, w.peek_at(1)) {
        (Some(n), Some("day" | "days")) => {
            w.i += 2;
            Ok(Some(n))
        }
        _ => Err(format!(
            "expected 'less N days' but found less {}",
            w.rest()
        )),
    }
}

/// `from [and including] <date>`, `commencing [on|from] <date>`, `starting on <date>`, ...
fn parse_start(w: &mut Words<'_>, lease: Option<NaiveDate>) -> Result<Option<NaiveDate>, String> {
    let keyword = if w.eat("from") {
        "from"
    } else if let Some(k) = w.eat_any(&["commencing", "starting", "beginning"]) {
        w.eat_any(&["on", "from", "with"]);
        k
    } else if w.eat_seq(&["with", "effect", "from"]) {
        "with effect from"
    } else {
        return Ok(None);
    };
    w.eat_seq(&["and", "including"]);
    w.eat("including");
    let date = parse_date(w, lease).map_err(|e| format!("after '{keyword}': {e}"))?;
    w.eat("inclusive");
    Ok(Some(date))
}

/// `to [and including] <date>`, `until <date>`, `[and] ending on <date>`, `expiring on <date>`.
fn parse_end(w: &mut Words<'_>, lease: Option<NaiveDate>) -> Result<Option<NaiveDate>, String> {
    let and = w.eat("and");
    let Some(keyword) = w.eat_any(&["to", "until", "till", "ending", "expiring", "terminating"])
    else {
        if and {
            w.i -= 1;
        }
        return Ok(None);
    };
    w.eat_any(&["on", "with"]);
    w.eat_seq(&["and", "including"]);
    w.eat("including");
    let date = parse_date(w, lease).map_err(|e| format!("after '{keyword}': {e}"))?;
    w.eat("inclusive");
    Ok(Some(date))
}

fn month(word: &str) -> Option<u32> {
    const NAMES: [&str; 12] = [
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
    if word == "sept" {
        return Some(9);
    }
    NAMES
        .iter()
        .position(|m| *m == word || (word.len() == 3 && m.starts_with(word)))
        .and_then(|i| u32::try_from(i + 1).ok())
}

/// A day of the month, `24` or `24th`.
fn day(word: &str) -> Option<u32> {
    let digits = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|s| word.strip_suffix(s))
        .unwrap_or(word);
    (digits.len() <= 2).then(|| count(digits)).flatten()
}

/// A four-digit year.
fn year(word: &str) -> Option<i32> {
    (word.len() == 4)
        .then(|| count(word))
        .flatten()
        .and_then(|y| i32::try_from(y).ok())
}

/// `d.m.yyyy`, `d/m/yyyy`, `d-m-yyyy` or `yyyy-mm-dd` (a two-digit year is not a date).
fn numeric_date(word: &str) -> Option<NaiveDate> {
    let sep = word.chars().find(|c| matches!(c, '.' | '/' | '-'))?;
    let parts: Vec<&str> = word.split(sep).collect();
    let [a, b, c] = parts.as_slice() else {
        return None;
    };
    let (y, m, d) = if a.len() == 4 {
        (year(a)?, count(b)?, count(c)?)
    } else {
        (year(c)?, count(b)?, count(a)?)
    };
    (m <= 12 && d <= 31 && b.len() <= 2)
        .then(|| NaiveDate::from_ymd_opt(y, m, d))
        .flatten()
}

/// A date: `24 June 1985`, `24th of June 1985`, `the 24th day of June 1985`, `June 24th 1985`,
/// `1.1.2000`, `2000-01-01`, or `the date of the lease` / `the date hereof` (= `lease`).
fn parse_date(w: &mut Words<'_>, lease: Option<NaiveDate>) -> Result<NaiveDate, String> {
    w.eat("the");
    let from_lease = w.eat_seq(&["date", "hereof"])
        || w.eat_seq(&["date", "of", "this", "lease"])
        || w.eat_seq(&["date", "of", "the", "lease"])
        || w.eat_seq(&["date", "of", "lease"]);
    if from_lease {
        return lease
            .ok_or_else(|| "the term runs from the date of the lease, which is not given".into());
    }
    let not_a_date = |w: &Words<'_>| format!("expected a date but found {}", w.rest());
    let Some(first) = w.peek() else {
        return Err(not_a_date(w));
    };
    if first.contains(['.', '/', '-']) {
        let d = numeric_date(first).ok_or_else(|| not_a_date(w))?;
        w.i += 1;
        return Ok(d);
    }
    let start = w.i;
    let parsed = (|| {
        let (d, m) = if let Some(d) = day(first) {
            w.i += 1;
            w.eat("day");
            w.eat("of");
            let m = month(w.peek()?)?;
            w.i += 1;
            (d, m)
        } else {
            let m = month(first)?;
            w.i += 1;
            let d = day(w.peek()?)?;
            w.i += 1;
            (d, m)
        };
        let y = year(w.peek()?)?;
        w.i += 1;
        Some((y, m, d))
    })();
    let Some((y, m, d)) = parsed else {
        w.i = start;
        return Err(not_a_date(w));
    };
    NaiveDate::from_ymd_opt(y, m, d)
        .ok_or_else(|| format!("{:?} is not a calendar date", w.w[start..w.i].join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    fn ymd(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("test date")
    }

    /// `Ok((years, less_days, start, end))` or `Err(part of the reason)`.
    type Expect = Result<(u32, u32, &'static str, &'static str), &'static str>;

    #[track_caller]
    fn check(text: &str, date_of_lease: Option<&str>, expect: Expect) {
        let got = parse_term(text, date_of_lease.map(ymd));
        match expect {
            Ok((years, less_days, start, end)) => {
                let term = got.unwrap_or_else(|e| panic!("{text:?}: {e}"));
                assert_eq!(
                    term,
                    LeaseTerm {
                        years,
                        less_days,
                        start: ymd(start)
                    },
                    "{text:?}"
                );
                assert_eq!(term.end(), ymd(end), "{text:?}");
            }
            Err(part) => {
                let e = got.expect_err(text);
                assert!(e.contains(part), "{text:?}: {e:?} lacks {part:?}");
            }
        }
    }

    #[test]
    fn terms() {
        let cases: &[(&str, Option<&str>, Expect)] = &[
            (
                "99 years from 24 June 1985",
                None,
                Ok((99, 0, "1985-06-24", "2084-06-23")),
            ),
            (
                "99 YEARS FROM 24 JUNE 1985.",
                None,
                Ok((99, 0, "1985-06-24", "2084-06-23")),
            ),
            (
                "125 years from and including 1.1.2000",
                None,
                Ok((125, 0, "2000-01-01", "2124-12-31")),
            ),
            (
                "125 years from 1 January 2000",
                None,
                Ok((125, 0, "2000-01-01", "2124-12-31")),
            ),
            (
                "125 years from 1/1/2000",
                None,
                Ok((125, 0, "2000-01-01", "2124-12-31")),
            ),
            (
                "125 years from 01-01-2000",
                None,
                Ok((125, 0, "2000-01-01", "2124-12-31")),
            ),
            (
                "125 years from 2000-01-01",
                None,
                Ok((125, 0, "2000-01-01", "2124-12-31")),
            ),
            (
                "999 years less 3 days from 25 March 1990",
                None,
                Ok((999, 3, "1990-03-25", "2989-03-21")),
            ),
            (
                "99 years (less 10 days) from 29 September 1980",
                None,
                Ok((99, 10, "1980-09-29", "2079-09-18")),
            ),
            (
                "99 years from 29 September 1980 less the last 10 days",
                None,
                Ok((99, 10, "1980-09-29", "2079-09-18")),
            ),
            (
                "125 years commencing on 1st January 2000",
                None,
                Ok((125, 0, "2000-01-01", "2124-12-31")),
            ),
            (
                "125 years starting on 1 January 2000",
                None,
                Ok((125, 0, "2000-01-01", "2124-12-31")),
            ),
            (
                "  125  Years,  from the 2nd day of Feb, 2000 ",
                None,
                Ok((125, 0, "2000-02-02", "2125-02-01")),
            ),
            (
                "a term of 99 years from 23rd Sept 1999",
                None,
                Ok((99, 0, "1999-09-23", "2098-09-22")),
            ),
            (
                "150 years from June 24th 1985",
                None,
                Ok((150, 0, "1985-06-24", "2135-06-23")),
            ),
            (
                "1 year from 29 February 2000",
                None,
                Ok((1, 0, "2000-02-29", "2001-02-28")),
            ),
            (
                "4 years from 29.2.2000",
                None,
                Ok((4, 0, "2000-02-29", "2004-02-28")),
            ),
            (
                "999 years from the date of the lease",
                Some("1990-05-04"),
                Ok((999, 0, "1990-05-04", "2989-05-03")),
            ),
            (
                "999 years from the date hereof",
                Some("1990-05-04"),
                Ok((999, 0, "1990-05-04", "2989-05-03")),
            ),
            (
                "999 years from the date of the lease",
                None,
                Err("date of the lease, which is not given"),
            ),
            (
                "from 1 January 2005 to 31 December 2129",
                None,
                Ok((125, 0, "2005-01-01", "2129-12-31")),
            ),
            (
                "from and including 1.1.2005 to and including 31.12.2129",
                None,
                Ok((125, 0, "2005-01-01", "2129-12-31")),
            ),
            (
                "From 24 June 2006 to 24 June 2131",
                None,
                Ok((126, 365, "2006-06-24", "2131-06-24")),
            ),
            (
                "from 1 January 2005 until 30 December 2129",
                None,
                Ok((125, 1, "2005-01-01", "2129-12-30")),
            ),
            (
                "125 years from 1 January 2005 to 31 December 2129",
                None,
                Ok((125, 0, "2005-01-01", "2129-12-31")),
            ),
            (
                "from 1 January 2005 for 125 years",
                None,
                Ok((125, 0, "2005-01-01", "2129-12-31")),
            ),
            (
                "125 years from 1 January 2005 to 1 January 2130",
                None,
                Err("not on the stated end date 2130-01-01"),
            ),
            (
                "from 1 January 2005 to 31 December 2004",
                None,
                Err("before the start"),
            ),
            (
                "term of years",
                None,
                Err("expected a number of years or 'from <date>' but found \"years\""),
            ),
            (
                "99 years",
                None,
                Err("expected 'from <date>' but found the end of the text"),
            ),
            (
                "99 months from 1 January 2000",
                None,
                Err("found \"99 months from 1 january 2000\""),
            ),
            (
                "99 years from 31 June 1985",
                None,
                Err("\"31 june 1985\" is not a calendar date"),
            ),
            (
                "99 years from 24 June 85",
                None,
                Err("after 'from': expected a date but found \"24 june 85\""),
            ),
            ("99 years from 1.1.85", None, Err("expected a date")),
            (
                "99 years from 24 June 1985 and 6 months",
                None,
                Err("did not understand \"and 6 months\""),
            ),
            (
                "99 years less three days from 1 January 2000",
                None,
                Err("expected 'less N days'"),
            ),
            ("0 years from 1 January 2000", None, Err("has no length")),
            (
                "1 year less 366 days from 1 January 2000",
                None,
                Err("has no length"),
            ),
            (
                "4294967295 years from 1 January 2000",
                None,
                Err("too long"),
            ),
            ("", None, Err("blank term")),
        ];
        assert!(cases.len() >= 15);
        for (text, dol, expect) in cases {
            check(text, *dol, *expect);
        }
    }

    #[test]
    fn lease_dates() {
        for s in [
            "24-06-1985",
            "24/06/1985",
            "1985-06-24",
            "24 June 1985",
            "24.6.1985",
            "24th jun 1985",
        ] {
            assert_eq!(parse_date_text(s), Some(ymd("1985-06-24")), "{s}");
        }
        for s in [
            "",
            "24 June",
            "31-06-1985",
            "1985",
            "24 June 1985 x",
            "the date hereof",
        ] {
            assert_eq!(parse_date_text(s), None, "{s}");
        }
        assert_eq!(pounds("£125,000"), Some(125_000));
        assert_eq!(pounds("125000"), Some(125_000));
        assert_eq!(pounds("125000.00"), Some(125_000));
        assert_eq!(pounds("125000.50"), None);
        assert_eq!(pounds("-5"), None);
        assert_eq!(pounds("unknown"), None);
    }

    const HEADER: &str = "Unique Identifier,Tenure,Register Property Description,County,Region,Associated Property Description ID,Associated Property Description,OS UPRN,Price Paid,Reg Order,Date of Lease,Term,Alienation Clause Indicator\n";

    #[test]
    fn reads_rows() {
        let content = format!(
            "{HEADER}\
             ABC123,Leasehold,\"Flat 1, 2 High Street, Exeter (EX1 1AA)\",DEVON,SOUTH WEST,1,\"Flat 1, 2 High Street\",100040212345,\"£125,000\",1,24-06-1985,99 years from 24 June 1985,Y\n\
             ABC124,Leasehold,Flat 2,DEVON,SOUTH WEST,,,x,,2,1985-06-24,999 years from the date of the lease,No\n\
             ABC125,,,,,,,,,,,term of years,maybe\n\
             ,Leasehold,Flat 3,DEVON,SOUTH WEST,,,,,,,,\n\
             ABC126,too,short\n"
        );
        let f = temp_file(content.as_bytes());
        let (ok, bad) = split(read(f.path()).expect("opens"));
        assert_eq!(ok.len(), 3);
        let (line, r) = &ok[0];
        assert_eq!(*line, 2);
        assert_eq!(
            r,
            &LeaseRow {
                unique_id: "ABC123".into(),
                tenure: Some("Leasehold".into()),
                register_description: Some("Flat 1, 2 High Street, Exeter (EX1 1AA)".into()),
                county: Some("DEVON".into()),
                region: Some("SOUTH WEST".into()),
                associated_description_id: Some("1".into()),
                associated_description: Some("Flat 1, 2 High Street".into()),
                uprn: Some(100_040_212_345),
                price_paid: Some(125_000),
                reg_order: Some("1".into()),
                date_of_lease: Some(ymd("1985-06-24")),
                term_text: Some("99 years from 24 June 1985".into()),
                term: Some(LeaseTerm {
                    years: 99,
                    less_days: 0,
                    start: ymd("1985-06-24")
                }),
                term_problem: None,
                alienation_clause: Some(true),
            }
        );
        let r = &ok[1].1;
        assert_eq!((r.uprn, r.price_paid), (None, None));
        assert_eq!(r.term.as_ref().map(|t| t.start), Some(ymd("1985-06-24")));
        assert_eq!(r.alienation_clause, Some(false));
        let r = &ok[2].1;
        assert_eq!(r.term_text.as_deref(), Some("term of years"));
        assert_eq!(r.term, None);
        assert!(
            r.term_problem
                .as_deref()
                .is_some_and(|p| p.contains("number of years"))
        );
        assert_eq!(
            (r.tenure.as_deref(), r.date_of_lease, r.alienation_clause),
            (None, None, None)
        );
        assert_eq!(
            bad.iter()
                .map(|b| (b.line, b.reason.as_str()))
                .collect::<Vec<_>>(),
            vec![
                (5, "blank unique identifier"),
                (6, "expected 13 columns, found 3")
            ]
        );
    }

    #[test]
    fn columns_by_name_in_any_order_and_spelling() {
        let f = temp_file(
            b"TERM,unique_identifier,Date  Of  Lease\n\"from 1.1.2005 to 31.12.2129\",X1,\nfrom the date hereof,X2,\n",
        );
        let (ok, bad) = split(read(f.path()).expect("opens"));
        assert!(bad.is_empty());
        assert_eq!(
            ok[0].1.term.as_ref().map(LeaseTerm::end),
            Some(ymd("2129-12-31"))
        );
        assert_eq!(ok[0].1.uprn, None);
        assert_eq!(ok[1].1.term, None);
        assert!(
            ok[1]
                .1
                .term_problem
                .as_deref()
                .is_some_and(|p| p.contains("not given"))
        );

        let f = temp_file(b"Tenure,Term\nLeasehold,99 years from 1 January 2000\n");
        assert_eq!(
            read(f.path()).err().map(|e| e.kind()),
            Some(io::ErrorKind::InvalidData)
        );
        let f = temp_file(b"");
        assert_eq!(read(f.path()).map(Iterator::count).ok(), Some(0));
    }
}
