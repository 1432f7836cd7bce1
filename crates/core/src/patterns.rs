//! The regular expressions the OpenAPI document and the MCP tool schemas state for the strings
//! the parsers here accept: each matches exactly the strings its parser accepts (the tests below
//! compare the two on every short string over the relevant alphabet), so a schema-valid value is
//! never refused and a refused one is never schema-valid. Written in the common subset of
//! ECMA-262 and Python `re` (no `\s`, `\d` or `\w`, whose meanings differ between engines).

/// An outward code but `GIR`: A9, A99, A9A, AA9, AA99, AA9A (any case).
macro_rules! outward {
    () => {
        "(?:[A-Za-z][0-9][A-Za-z0-9]?|[A-Za-z]{2}[0-9][A-Za-z0-9]?)"
    };
}

/// A full UK postcode in any case, with or without its space, spaces allowed around it:
/// [`crate::Postcode::parse`].
pub const POSTCODE: &str = concat!("^ *(?:", outward!(), "|[Gg][Ii][Rr]) *[0-9][A-Za-z]{2} *$");

/// A postcode district (outward code), or a full postcode (truncated to its district):
/// [`crate::Postcode::parse_district`].
pub const DISTRICT: &str = concat!(
    "^ *(?:",
    outward!(),
    "(?: *[0-9][A-Za-z]{2})?|[Gg][Ii][Rr] *[0-9][A-Za-z]{2}) *$"
);

/// A GSS code: a letter and eight digits, any case: [`crate::GssCode::parse`].
pub const GSS_CODE: &str = "^ *[A-Za-z][0-9]{8} *$";

/// A postcode area: one or two letters, any case, spaces allowed around it.
pub const POSTCODE_AREA: &str = "^ *[A-Za-z]{1,2} *$";

/// A county as Price Paid writes it: no lower-case ASCII letter, and something besides spaces.
pub const COUNTY: &str = "^[^a-z]*[^a-z ][^a-z]*$";

/// A leap year of four digits (divisible by 4 and not by 100, or by 400).
macro_rules! leap_year {
    () => {
        "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)"
    };
}

/// A real calendar day, `YYYY-MM-DD` (29 February only in a leap year).
macro_rules! real_day {
    () => {
        concat!(
            "[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])",
            "|[0-9]{4}-(?:0[13-9]|1[0-2])-(?:29|30)",
            "|[0-9]{4}-(?:0[13578]|1[02])-31",
            "|",
            leap_year!(),
            "-02-29"
        )
    };
}

/// A month, `YYYY-MM`, or a date of it, `YYYY-MM-DD` (a real day of that month; the day is then
/// dropped): the market crate's `parse_month`.
pub const MONTH: &str = concat!("^(?:[0-9]{4}-(?:0[1-9]|1[0-2])|", real_day!(), ")$");

/// A real calendar day, `YYYY-MM-DD`, as `chrono::NaiveDate` parses it with `%Y-%m-%d` (four
/// digits of year).
pub const DATE: &str = concat!("^(?:", real_day!(), ")$");

/// The first day of a calendar quarter, `YYYY-01-01`, `YYYY-04-01`, `YYYY-07-01` or `YYYY-10-01`.
pub const QUARTER_START: &str = "^[0-9]{4}-(?:01|04|07|10)-01$";

/// A string that is not blank: it holds a character other than a space, a tab, a line feed or a
/// carriage return ([`is_blank`]); searched, not anchored.
pub const NON_BLANK: &str = "[^ \\t\\n\\r]";

/// A blank string, anchored: [`is_blank`].
pub const BLANK: &str = "^[ \\t\\n\\r]*$";

/// Blank: nothing but spaces, tabs, line feeds and carriage returns (the complement of
/// [`NON_BLANK`]).
pub fn is_blank(s: &str) -> bool {
    s.chars().all(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
}

/// States "exactly one of these groups of fields" in an object's schema: one `oneOf` branch per
/// group, in which the group's fields are present and not null and every other field of the
/// groups is absent or null. The body's own check enforces the same rule.
pub fn exactly_one_of(schema: &mut schemars::Schema, groups: &[&[&str]]) {
    use serde_json::{Map, Value, json};
    let all: Vec<&str> = groups.iter().flat_map(|g| g.iter().copied()).collect();
    let branches: Vec<Value> = groups
        .iter()
        .map(|g| {
            let props: Map<String, Value> = all
                .iter()
                .map(|f| {
                    let rule = if g.contains(f) {
                        json!({"not": {"type": "null"}})
                    } else {
                        json!({"type": "null"})
                    };
                    (f.to_string(), rule)
                })
                .collect();
            json!({"required": g, "properties": props})
        })
        .collect();
    schema.insert("oneOf".into(), Value::Array(branches));
}

/// States "at least one of these groups of fields is given" in an object's schema, as an
/// `anyOf` of the groups' `required` lists (for query parameters the OpenAPI document restates it
/// as `x-at-least-one-of`).
pub fn at_least_one_of(schema: &mut schemars::Schema, groups: &[&[&str]]) {
    use serde_json::{Value, json};
    let branches: Vec<Value> = groups.iter().map(|g| json!({"required": g})).collect();
    schema.insert("anyOf".into(), Value::Array(branches));
}

/// States "at least one of these text fields is present and not blank" in an object's schema,
/// as "not: every one of them absent, null or blank".
pub fn any_non_blank(schema: &mut schemars::Schema, fields: &[&str]) {
    use serde_json::{Map, Value, json};
    let blank = json!({"anyOf": [{"type": "null"}, {"type": "string", "pattern": BLANK}]});
    let props: Map<String, Value> = fields
        .iter()
        .map(|f| (f.to_string(), blank.clone()))
        .collect();
    schema.insert("not".into(), json!({ "properties": props }));
}

/// The rule of a WGS84 point given as `lat` and `lon`: both or neither, latitude -90 to 90 and
/// longitude -180 to 180; each broken part a violation at its field.
pub fn lat_lon_violations(lat: Option<f64>, lon: Option<f64>) -> Vec<crate::Violation> {
    use crate::Violation;
    let mut v = Vec::new();
    match (lat, lon) {
        (Some(lat), Some(lon)) => {
            if !(-90.0..=90.0).contains(&lat) {
                v.push(
                    Violation::new(&["lat"], "value_error", "lat must be between -90 and 90")
                        .with_input(lat),
                );
            }
            if !(-180.0..=180.0).contains(&lon) {
                v.push(
                    Violation::new(&["lon"], "value_error", "lon must be between -180 and 180")
                        .with_input(lon),
                );
            }
        }
        (Some(_), None) => v.push(Violation::new(
            &["lon"],
            "missing",
            "lon is required with lat",
        )),
        (None, Some(_)) => v.push(Violation::new(
            &["lat"],
            "missing",
            "lat is required with lon",
        )),
        (None, None) => {}
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GssCode, Postcode};
    use regex::Regex;

    /// Every string of up to `max` characters over `alphabet`.
    fn strings(alphabet: &[char], max: usize) -> Vec<String> {
        let mut all = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..max {
            let next: Vec<String> = last
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            all.extend(next.iter().cloned());
            last = next;
        }
        all
    }

    #[track_caller]
    fn agree(pattern: &str, cases: &[String], parses: impl Fn(&str) -> bool) {
        let re = Regex::new(pattern).unwrap();
        for s in cases {
            assert_eq!(re.is_match(s), parses(s), "{pattern} on {s:?}");
        }
    }

    /// Postcode-shaped strings: letters and digits at each position, with spaces and a stray
    /// character, from 4 to 9 characters.
    fn postcodeish() -> Vec<String> {
        let slots: &[&[char]] = &[
            &['E', 'g', '1'],
            &['X', 'i', '1', ' '],
            &['1', 'r', 'A', ' '],
            &['1', 'a', ' '],
            &['0', 'A', ' ', '-'],
            &['A', 'b', '1', ' '],
            &['A', 'b', '1', ' '],
            &[' ', 'A', '1'],
            &[' '],
        ];
        let mut out = vec![String::new()];
        for (i, slot) in slots.iter().enumerate() {
            let mut next = Vec::new();
            for s in &out {
                for c in *slot {
                    next.push(format!("{s}{c}"));
                }
                if i >= 4 {
                    next.push(s.clone());
                }
            }
            next.sort();
            next.dedup();
            out = next;
        }
        out.extend(
            [
                "GIR 0AA",
                "gir0aa",
                "GIR",
                " GIR 0AA ",
                "EX1",
                "e x1 1aa",
                "EX1\t1AA",
                "ＥX1 1AA",
            ]
            .map(String::from),
        );
        out
    }

    #[test]
    fn the_postcode_pattern_is_the_parser() {
        let cases = postcodeish();
        assert!(cases.len() > 10_000);
        agree(POSTCODE, &cases, |s| Postcode::parse(s).is_ok());
        agree(DISTRICT, &cases, |s| Postcode::parse_district(s).is_ok());
    }

    #[test]
    fn the_gss_and_area_patterns_are_the_parsers() {
        let mut cases = strings(&['e', 'E', '0', '7', ' ', 'x'], 4);
        cases.extend(
            [
                "E07000041",
                " e07000041 ",
                "E0700004",
                "E070000411",
                "EE7000041",
                "E07 000041",
            ]
            .map(String::from),
        );
        agree(GSS_CODE, &cases, |s| GssCode::parse(s).is_ok());
        agree(COUNTY, &cases, |s| {
            let c = s.trim_matches(' ');
            !c.is_empty() && c == c.to_ascii_uppercase()
        });
        agree(POSTCODE_AREA, &cases, |s| {
            let a = s.trim_matches(' ');
            (1..=2).contains(&a.len()) && a.bytes().all(|b| b.is_ascii_alphabetic())
        });
    }

    /// The month rule, written out independently of the regular expression.
    fn is_month(s: &str) -> bool {
        let b = s.as_bytes();
        let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
        if !(b.len() == 7 || b.len() == 10) || !digits(0..4) || b[4] != b'-' || !digits(5..7) {
            return false;
        }
        let year: i32 = s[..4].parse().unwrap();
        let month: u32 = s[5..7].parse().unwrap();
        if !(1..=12).contains(&month) {
            return false;
        }
        if b.len() == 7 {
            return true;
        }
        if b[7] != b'-' || !digits(8..10) {
            return false;
        }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        let days = match month {
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => 31,
        };
        (1..=days).contains(&s[8..].parse::<u32>().unwrap())
    }

    #[test]
    fn the_non_blank_pattern_is_the_blank_rule() {
        let re = Regex::new(NON_BLANK).unwrap();
        let blank = Regex::new(BLANK).unwrap();
        for s in strings(
            &[' ', '\t', '\n', '\r', 'a', '\u{a0}', '\u{2003}', '\u{b}'],
            3,
        ) {
            assert_eq!(re.is_match(&s), !is_blank(&s), "{s:?}");
            assert_eq!(blank.is_match(&s), is_blank(&s), "{s:?}");
        }
    }

    #[test]
    fn the_month_pattern_is_the_month_rule() {
        let mut cases = Vec::new();
        for year in [
            "0000", "1900", "1996", "2000", "2023", "2024", "2100", "2400", "9999",
        ] {
            for month in 0..=13 {
                cases.push(format!("{year}-{month:02}"));
                for day in 0..=32 {
                    cases.push(format!("{year}-{month:02}-{day:02}"));
                }
            }
        }
        cases.extend(
            [
                "2024-1",
                "2024-01-1",
                "2024/01",
                "24-01",
                "2024-01-01 ",
                "",
                "2024-001",
            ]
            .map(String::from),
        );
        agree(MONTH, &cases, is_month);
        agree(MONTH, &cases, |s| crate::Month::parse(s).is_ok());
        let days: Vec<String> = cases.iter().filter(|c| c.len() != 7).cloned().collect();
        agree(DATE, &days, |s| {
            s.len() == 10 && chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
        });
        agree(QUARTER_START, &days, |s| {
            chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok_and(|d| {
                use chrono::Datelike;
                s.len() == 10 && d.day() == 1 && d.month0() % 3 == 0
            })
        });
    }
}
