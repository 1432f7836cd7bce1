//! An append-only feed of sale and rental listings, as JSON lines: one JSON object per line.
//!
//! Blank lines are skipped but still counted, so a row's line is its physical line in the file.
//! Each object has:
//! - `listing_id` (string, required, not blank);
//! - `channel` (`"sale"` or `"rent"`, any case, required);
//! - `address`, `property_type`, `agent` (strings, optional; blank becomes `None`);
//! - `postcode` (optional; canonical, and `None` when blank or malformed);
//! - `uprn` (an integer or a digit string, optional; `None` when not a positive integer);
//! - `price` (whole pounds, optional; for `rent`, per calendar month);
//! - `bedrooms` (a whole number, optional);
//! - `first_seen` (an RFC 3339 timestamp or a `YYYY-MM-DD` date, read as midnight UTC; required);
//! - `snapshots` (an array, required, may be empty) of objects with `time` (as `first_seen`,
//!   required), `price` (as above, optional) and `status` (optional: `available`, `under_offer`,
//!   `sold_stc`, `let_agreed` or `withdrawn`, any case, spaces or dashes for underscores).
//!
//! A JSON `null` is the same as an absent field. Snapshots come back sorted by time (ties keep
//! their order in the file).
//!
//! Rejections: a line that is not valid JSON or not an object, a missing or invalid required
//! field, an unknown channel or snapshot status, a price that is negative or not a whole number,
//! bedrooms that are negative or not a whole number, and an optional text field that is not a
//! string. A read error ends the stream after one rejection.

use super::Parsed;
use super::value;
use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{Map, Value};
use std::io;
use std::path::Path;

/// One state of a listing as the feed saw it at `time`.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub time: DateTime<Utc>,
    /// Whole pounds (per calendar month for a rental).
    pub price: Option<i64>,
    /// One of [`STATUSES`].
    pub status: Option<String>,
    /// On a `removed` snapshot, the reason the feed gave (RTDF `removeproperty`).
    pub removal_reason: Option<String>,
}

/// What the industry feeds say about a listing beyond the project's own feed's fields; every
/// field optional (the JSON-lines feed leaves them all empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Details {
    pub floor_area_m2: Option<f64>,
    /// `freehold`, `leasehold`, `feudal`, `commonhold`, `share_of_freehold`, `non_traditional`.
    pub tenure: Option<String>,
    pub unexpired_years: Option<i32>,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    pub branch: Option<String>,
    pub new_home: Option<bool>,
}

/// One sale or rental listing.
#[derive(Debug, Clone, PartialEq)]
pub struct ListingRow {
    pub listing_id: String,
    /// `sale` or `rent`.
    pub channel: String,
    pub address: Option<String>,
    /// Canonical postcode; `None` when blank or malformed.
    pub postcode: Option<String>,
    pub uprn: Option<i64>,
    /// Whole pounds (per calendar month for a rental).
    pub price: Option<i64>,
    pub bedrooms: Option<i32>,
    pub property_type: Option<String>,
    pub agent: Option<String>,
    pub first_seen: DateTime<Utc>,
    /// Sorted by time.
    pub snapshots: Vec<Snapshot>,
    pub details: Details,
    /// The feed format the row came in: `jsonl`, `blm` or `rtdf`.
    pub feed: &'static str,
    /// A removal message (RTDF `removeproperty`): only the id, channel, branch and the removal
    /// snapshot are known, and the stored listing keeps everything else.
    pub removal_only: bool,
}

/// The listing channels, canonical spelling.
pub const CHANNELS: &[&str] = &["sale", "rent"];

/// The snapshot statuses, canonical spelling.
pub const STATUSES: &[&str] = &[
    "available",
    "under_offer",
    "sold_stc",
    "let_agreed",
    "withdrawn",
    "reserved",
    "removed",
];

/// Opens a listings JSON-lines feed (see the module documentation for the fields).
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<ListingRow>> + Send> {
    super::jsonl::JsonLines::open(path, parse_line)
}

fn parse_line(text: &str) -> Result<ListingRow, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
    let Value::Object(obj) = v else {
        return Err(format!("expected a JSON object, found {}", kind(&v)));
    };
    let listing_id = required_string(&obj, "listing_id")?;
    let channel = required_string(&obj, "channel")?.to_ascii_lowercase();
    if !CHANNELS.contains(&channel.as_str()) {
        return Err(format!(
            "unknown channel {channel:?} (expected sale or rent)"
        ));
    }
    let first_seen = time(&obj, "first_seen")?;
    let Some(list) = get(&obj, "snapshots") else {
        return Err("missing snapshots".into());
    };
    let Value::Array(list) = list else {
        return Err(format!("snapshots must be an array, found {}", kind(list)));
    };
    let mut snapshots = list
        .iter()
        .enumerate()
        .map(|(i, s)| snapshot(s).map_err(|e| format!("snapshots[{i}]: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    snapshots.sort_by_key(|s| s.time);
    Ok(ListingRow {
        listing_id,
        channel,
        address: optional_text(&obj, "address")?,
        postcode: value::postcode(get(&obj, "postcode").and_then(Value::as_str)),
        uprn: get(&obj, "uprn").and_then(uprn),
        price: price(&obj)?,
        bedrooms: bedrooms(&obj)?,
        property_type: optional_text(&obj, "property_type")?,
        agent: optional_text(&obj, "agent")?,
        first_seen,
        snapshots,
        details: Details::default(),
        feed: "jsonl",
        removal_only: false,
    })
}

fn snapshot(v: &Value) -> Result<Snapshot, String> {
    let Value::Object(obj) = v else {
        return Err(format!("expected an object, found {}", kind(v)));
    };
    let status = match get(obj, "status") {
        None => None,
        Some(Value::String(s)) => {
            let canon: String = s
                .trim()
                .chars()
                .map(|c| {
                    if c == ' ' || c == '-' {
                        '_'
                    } else {
                        c.to_ascii_lowercase()
                    }
                })
                .collect();
            if !STATUSES.contains(&canon.as_str()) {
                return Err(format!("unknown status {s:?}"));
            }
            Some(canon)
        }
        Some(other) => return Err(format!("status must be a string, found {}", kind(other))),
    };
    Ok(Snapshot {
        time: time(obj, "time")?,
        price: price(obj)?,
        status,
        removal_reason: None,
    })
}

/// The field's value; `null` counts as absent.
pub(crate) fn get<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

/// A JSON type's name, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A required, non-blank string, trimmed.
fn required_string(obj: &Map<String, Value>, key: &str) -> Result<String, String> {
    match get(obj, key) {
        None => Err(format!("missing {key}")),
        Some(Value::String(s)) if s.trim().is_empty() => Err(format!("blank {key}")),
        Some(Value::String(s)) => Ok(s.trim().to_string()),
        Some(other) => Err(format!("{key} must be a string, found {}", kind(other))),
    }
}

/// An optional string, trimmed; blank or a "no value" placeholder is `None`.
fn optional_text(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(value::text(Some(s))),
        Some(other) => Err(format!("{key} must be a string, found {}", kind(other))),
    }
}

/// A JSON number that is a whole number (`250000`, also `250000.0`).
pub(crate) fn whole(v: &Value) -> Option<i64> {
    let n = v.as_number()?;
    n.as_i64().or_else(|| {
        let f = n.as_f64()?;
        // beyond ±2^53 a float is not a trustworthy whole number
        (f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0).then_some(f as i64)
    })
}

/// `price`: optional whole pounds, not negative.
fn price(obj: &Map<String, Value>) -> Result<Option<i64>, String> {
    let Some(v) = get(obj, "price") else {
        return Ok(None);
    };
    match whole(v) {
        Some(p) if p < 0 => Err(format!("negative price {p}")),
        Some(p) => Ok(Some(p)),
        None => Err(format!("price {v} is not a whole number of pounds")),
    }
}

/// `bedrooms`: an optional whole number, not negative.
fn bedrooms(obj: &Map<String, Value>) -> Result<Option<i32>, String> {
    let Some(v) = get(obj, "bedrooms") else {
        return Ok(None);
    };
    whole(v)
        .and_then(|b| i32::try_from(b).ok())
        .filter(|b| *b >= 0)
        .map(Some)
        .ok_or_else(|| format!("bedrooms {v} is not a whole number of at least 0"))
}

/// A UPRN given as an integer or a digit string; `None` when not a positive integer.
fn uprn(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().and_then(|u| value::uprn(&u.to_string())),
        Value::String(s) => value::uprn(s),
        Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_) => None,
    }
}

/// A required timestamp: RFC 3339, or a `YYYY-MM-DD` date read as midnight UTC.
fn time(obj: &Map<String, Value>, key: &str) -> Result<DateTime<Utc>, String> {
    let s = match get(obj, key) {
        None => return Err(format!("missing {key}")),
        Some(Value::String(s)) => s.trim(),
        Some(other) => return Err(format!("{key} must be a string, found {}", kind(other))),
    };
    parse_time(s).ok_or_else(|| format!("{key} {s:?} is not an RFC 3339 timestamp or a date"))
}

pub(crate) fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .filter(|_| s.len() == 10)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Rejection;
    use crate::formats::testutil::{split, temp_file};
    use chrono::TimeZone;

    fn parse(content: &str) -> (Vec<(u64, ListingRow)>, Vec<Rejection>) {
        let f = temp_file(content.as_bytes());
        split(read(f.path()).expect("opens"))
    }

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, s)
            .single()
            .expect("valid")
    }

    /// A minimal valid line with `extra` fields (`"key": value, ...`) added.
    fn line(extra: &str) -> String {
        let sep = if extra.is_empty() { "" } else { ", " };
        format!(
            r#"{{"listing_id": "L1", "channel": "sale", "first_seen": "2024-05-01", "snapshots": []{sep}{extra}}}"#
        )
    }

    #[test]
    fn full_row_and_sorted_snapshots() {
        let (ok, bad) = parse(concat!(
            r#"{"listing_id": " RM-123 ", "channel": "Rent", "address": "Flat 2, 10 High Street, Exeter", "postcode": "ex11aa", "uprn": "100040212345", "price": 1250, "bedrooms": 2, "property_type": "flat", "agent": "Acme Lettings", "first_seen": "2024-05-01T09:30:00+01:00", "snapshots": [{"time": "2024-06-01T00:00:00Z", "price": 1200, "status": "let_agreed"}, {"time": "2024-05-01", "price": 1250, "status": "Available"}, {"time": "2024-05-20T12:00:00Z", "status": null}]}"#,
            "\n"
        ));
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(
            ok,
            vec![(
                1,
                ListingRow {
                    listing_id: "RM-123".into(),
                    channel: "rent".into(),
                    address: Some("Flat 2, 10 High Street, Exeter".into()),
                    postcode: Some("EX1 1AA".into()),
                    uprn: Some(100_040_212_345),
                    price: Some(1250),
                    bedrooms: Some(2),
                    property_type: Some("flat".into()),
                    agent: Some("Acme Lettings".into()),
                    first_seen: utc(2024, 5, 1, 8, 30, 0),
                    details: Details::default(),
                    feed: "jsonl",
                    removal_only: false,
                    snapshots: vec![
                        Snapshot {
                            time: utc(2024, 5, 1, 0, 0, 0),
                            price: Some(1250),
                            status: Some("available".into()),
                            removal_reason: None,
                        },
                        Snapshot {
                            time: utc(2024, 5, 20, 12, 0, 0),
                            price: None,
                            status: None,
                            removal_reason: None,
                        },
                        Snapshot {
                            time: utc(2024, 6, 1, 0, 0, 0),
                            price: Some(1200),
                            status: Some("let_agreed".into()),
                            removal_reason: None,
                        },
                    ],
                }
            )]
        );
    }

    #[test]
    fn minimal_row_and_lenient_optionals() {
        let (ok, bad) = parse(&format!(
            "{}\n{}\n{}\n",
            line(""),
            line(
                r#""address": "  ", "postcode": "not a postcode", "uprn": -5, "price": null, "bedrooms": 0, "agent": "N/A""#
            ),
            line(r#""uprn": 100040212345, "price": 250000.0, "postcode": 42"#),
        ));
        assert!(bad.is_empty(), "{bad:?}");
        let minimal = ListingRow {
            listing_id: "L1".into(),
            channel: "sale".into(),
            address: None,
            postcode: None,
            uprn: None,
            price: None,
            bedrooms: None,
            property_type: None,
            agent: None,
            first_seen: utc(2024, 5, 1, 0, 0, 0),
            snapshots: vec![],
            details: Details::default(),
            feed: "jsonl",
            removal_only: false,
        };
        assert_eq!(ok[0], (1, minimal.clone()));
        assert_eq!(
            ok[1],
            (
                2,
                ListingRow {
                    bedrooms: Some(0),
                    ..minimal.clone()
                }
            )
        );
        assert_eq!(
            ok[2],
            (
                3,
                ListingRow {
                    uprn: Some(100_040_212_345),
                    price: Some(250_000),
                    ..minimal
                }
            )
        );
    }

    /// Each case is one line of a file, with the rejection reason it must produce
    /// (`None`: accepted).
    #[test]
    fn rejections_data_driven() {
        let cases: Vec<(String, Option<&str>)> = vec![
            (line(""), None),
            ("{not json".into(), Some("invalid JSON: ")),
            ("[1, 2]".into(), Some("expected a JSON object, found an array")),
            ("\"text\"".into(), Some("expected a JSON object, found a string")),
            (
                r#"{"channel": "sale", "first_seen": "2024-05-01", "snapshots": []}"#.into(),
                Some("missing listing_id"),
            ),
            (
                r#"{"listing_id": 7, "channel": "sale", "first_seen": "2024-05-01", "snapshots": []}"#.into(),
                Some("listing_id must be a string, found a number"),
            ),
            (
                r#"{"listing_id": " ", "channel": "sale", "first_seen": "2024-05-01", "snapshots": []}"#.into(),
                Some("blank listing_id"),
            ),
            (
                r#"{"listing_id": "L1", "first_seen": "2024-05-01", "snapshots": []}"#.into(),
                Some("missing channel"),
            ),
            (
                r#"{"listing_id": "L1", "channel": "auction", "first_seen": "2024-05-01", "snapshots": []}"#.into(),
                Some("unknown channel \"auction\" (expected sale or rent)"),
            ),
            (
                r#"{"listing_id": "L1", "channel": "sale", "snapshots": []}"#.into(),
                Some("missing first_seen"),
            ),
            (
                r#"{"listing_id": "L1", "channel": "sale", "first_seen": null, "snapshots": []}"#.into(),
                Some("missing first_seen"),
            ),
            (
                r#"{"listing_id": "L1", "channel": "sale", "first_seen": "01/05/2024", "snapshots": []}"#.into(),
                Some("first_seen \"01/05/2024\" is not an RFC 3339 timestamp or a date"),
            ),
            (
                r#"{"listing_id": "L1", "channel": "sale", "first_seen": 1714521600, "snapshots": []}"#.into(),
                Some("first_seen must be a string, found a number"),
            ),
            (
                r#"{"listing_id": "L1", "channel": "sale", "first_seen": "2024-05-01"}"#.into(),
                Some("missing snapshots"),
            ),
            (
                r#"{"listing_id": "L1", "channel": "sale", "first_seen": "2024-05-01", "snapshots": {}}"#.into(),
                Some("snapshots must be an array, found an object"),
            ),
            (line(r#""price": -1"#), Some("negative price -1")),
            (
                line(r#""price": 99.5"#),
                Some("price 99.5 is not a whole number of pounds"),
            ),
            (
                line(r#""price": "250000""#),
                Some("price \"250000\" is not a whole number of pounds"),
            ),
            (
                line(r#""bedrooms": -1"#),
                Some("bedrooms -1 is not a whole number of at least 0"),
            ),
            (
                line(r#""bedrooms": 1.5"#),
                Some("bedrooms 1.5 is not a whole number of at least 0"),
            ),
            (
                line(r#""address": ["1 High St"]"#),
                Some("address must be a string, found an array"),
            ),
            (
                line(r#""agent": true"#),
                Some("agent must be a string, found a boolean"),
            ),
            (
                r#"{"listing_id": "L1", "channel": "sale", "first_seen": "2024-05-01", "snapshots": [{"time": "2024-05-02", "status": "sold"}]}"#.into(),
                Some("snapshots[0]: unknown status \"sold\""),
            ),
            (
                r#"{"listing_id": "L1", "channel": "sale", "first_seen": "2024-05-01", "snapshots": [{"time": "2024-05-02", "status": "sold stc"}, {"price": 5}]}"#.into(),
                Some("snapshots[1]: missing time"),
            ),
            (
                r#"{"listing_id": "L1", "channel": "sale", "first_seen": "2024-05-01", "snapshots": [{"time": "2024-05-02", "price": -10}]}"#.into(),
                Some("snapshots[0]: negative price -10"),
            ),
            (
                r#"{"listing_id": "L1", "channel": "sale", "first_seen": "2024-05-01", "snapshots": [{"time": "2024-05-02", "status": 3}]}"#.into(),
                Some("snapshots[0]: status must be a string, found a number"),
            ),
            (
                r#"{"listing_id": "L1", "channel": "sale", "first_seen": "2024-05-01", "snapshots": ["2024-05-02"]}"#.into(),
                Some("snapshots[0]: expected an object, found a string"),
            ),
            (
                r#"{"listing_id": "L1", "channel": "sale", "first_seen": "2024-05-01", "snapshots": [{"time": "2024-02-30"}]}"#.into(),
                Some("snapshots[0]: time \"2024-02-30\" is not an RFC 3339 timestamp or a date"),
            ),
        ];
        // one file, one case a line, so the lines line up with the case index
        let content: String = cases.iter().map(|(l, _)| format!("{l}\n")).collect();
        let f = temp_file(content.as_bytes());
        let items: Vec<_> = read(f.path()).expect("opens").collect();
        assert_eq!(items.len(), cases.len());
        for (i, ((text, expect), item)) in cases.iter().zip(&items).enumerate() {
            let line = i as u64 + 1;
            match (expect, item) {
                (None, Ok((l, _))) => assert_eq!(*l, line, "{text}"),
                (Some(reason), Err(r)) => {
                    assert_eq!(r.line, line, "{text}");
                    assert!(
                        r.reason.starts_with(reason),
                        "{text}: got {:?}, expected {reason:?}",
                        r.reason
                    );
                    assert_eq!(r.file, f.path().display().to_string());
                }
                (expect, got) => panic!("{text}: expected {expect:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn blank_lines_count_and_bom_and_latin1() {
        let mut content = b"\xEF\xBB\xBF".to_vec();
        content.extend_from_slice(line("").as_bytes());
        content.extend_from_slice(b"\r\n\n   \r\n");
        // not UTF-8: the line is read as Latin-1
        let latin1 = line(r#""agent": "Caf~ Homes""#).replace('~', "\u{1}");
        content.extend(latin1.bytes().map(|b| if b == 1 { 0xE9 } else { b }));
        content.extend_from_slice(b"\n\n{broken\n");
        // a last line without a terminator still counts
        content.extend_from_slice(line("").as_bytes());
        let f = temp_file(&content);
        let (ok, bad) = split(read(f.path()).expect("opens"));
        let lines: Vec<u64> = ok.iter().map(|r| r.0).collect();
        assert_eq!(lines, vec![1, 4, 7]);
        assert_eq!(ok[1].1.agent.as_deref(), Some("Café Homes"));
        assert_eq!(bad.iter().map(|b| b.line).collect::<Vec<_>>(), vec![6]);
    }

    #[test]
    fn times() {
        for (s, expect) in [
            ("2024-05-01", Some(utc(2024, 5, 1, 0, 0, 0))),
            ("2024-05-01T23:15:00Z", Some(utc(2024, 5, 1, 23, 15, 0))),
            (
                "2024-05-01T23:15:00.5-02:00",
                utc(2024, 5, 2, 1, 15, 0).checked_add_signed(chrono::TimeDelta::milliseconds(500)),
            ),
            ("2024-05-01T23:15:00", None),
            ("2024-5-1", None),
            ("", None),
        ] {
            assert_eq!(parse_time(s), expect, "{s}");
        }
    }

    #[test]
    fn empty_file_and_missing_file() {
        let (ok, bad) = parse("");
        assert!(ok.is_empty() && bad.is_empty());
        let (ok, bad) = parse("\n\n");
        assert!(ok.is_empty() && bad.is_empty());
        assert!(read(Path::new("/nonexistent/listings.jsonl")).is_err());
    }
}
