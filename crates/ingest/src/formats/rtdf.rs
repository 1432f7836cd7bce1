//! Rightmove's Real Time Data Feed (RTDF), as JSON lines: one request body a line, as the agent's
//! software sent it to the operator's receiver.
//!
//! Two requests are read, told apart by `method` when the receiver wrote it, else by their
//! content (a `property.removal_reason` makes a removal):
//! - `sendpropertydetails`: `network.network_id`; `branch.branch_id` and `branch.channel`
//!   (1 sales, 2 lettings); `property.agent_ref`, `status` (1 available, 2 sold STC, 3 sold STCM,
//!   4 under offer, 5 reserved, 6 let agreed), `property_type` (the Rightmove type code),
//!   `new_home`, `update_date`; `property.address` (`house_name_number`, `address_2` to
//!   `address_4`, `town`, `postcode_1`, `postcode_2`, `display_address`, `latitude`,
//!   `longitude`); `property.price_information` (`price`, `rent_frequency` 1, 4, 12, 52 or 365
//!   a year, `tenure_type` 1 to 6, `tenure_unexpired_years`); `property.details` (`bedrooms`,
//!   `internal_area`, `internal_area_unit` 1 square feet, 2 square metres).
//! - `removeproperty`: `branch`, `property.agent_ref` and `property.removal_reason` (7 sold by us,
//!   8 sold by another agent, 9 withdrawn from market, 10 lost instruction, 11 removed, 12 let by
//!   us).
//!
//! A request carries no time of its own that says when it was sent, so the receiver stamps each
//! line with a top-level `received_at` (RFC 3339); a `sendpropertydetails` without one is timed
//! by its `property.update_date` (`dd-MM-yyyy HH:mm:ss`, RFC 3339 or a date), a removal without
//! one is rejected. The listing id is the `agent_ref`. A rent is turned into a monthly figure
//! (weekly × 52 / 12, rounded to the pound).
//!
//! Rejections, each by file and line: not JSON or not an object, a missing or unknown `branch`
//! channel, a missing `agent_ref`, an unknown status, removal reason, rent frequency, tenure or
//! area unit, a price or bedrooms that is not a whole number of at least 0, and no time.

use super::listings::{Details, ListingRow, Snapshot, get, kind, parse_time, whole};
use super::value::{self, decode};
use super::{Parsed, Rejection};
use chrono::{DateTime, NaiveDateTime, Utc};
use serde_json::{Map, Value};
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// The Rightmove property type codes the feeds share (RTDF `property_type`, BLM `PROP_SUB_ID`)
/// that a residential market reads; any other code is kept as `type <code>`.
pub const PROPERTY_TYPES: &[(i64, &str)] = &[
    (0, "Not specified"),
    (1, "Terraced house"),
    (2, "End of terrace house"),
    (3, "Semi-detached house"),
    (4, "Detached house"),
    (5, "Mews house"),
    (6, "Cluster house"),
    (7, "Ground floor flat"),
    (8, "Flat"),
    (9, "Studio flat"),
    (10, "Ground floor maisonette"),
    (11, "Maisonette"),
    (12, "Bungalow"),
    (22, "Town house"),
    (23, "Cottage"),
    (26, "House"),
    (28, "Apartment"),
    (29, "Penthouse"),
    (43, "Barn conversion"),
    (48, "House share"),
    (49, "Flat share"),
    (50, "Park home"),
    (512, "House of multiple occupation"),
];

/// A property type code's label.
pub fn property_type(code: i64) -> String {
    PROPERTY_TYPES
        .iter()
        .find(|(c, _)| *c == code)
        .map_or_else(|| format!("type {code}"), |(_, l)| (*l).to_string())
}

/// RTDF `tenure_type`.
pub fn tenure(code: i64) -> Option<&'static str> {
    Some(match code {
        1 => "freehold",
        2 => "leasehold",
        3 => "feudal",
        4 => "commonhold",
        5 => "share_of_freehold",
        6 => "non_traditional",
        _ => return None,
    })
}

/// RTDF `removal_reason`.
pub fn removal_reason(code: i64) -> Option<&'static str> {
    Some(match code {
        7 => "sold_by_us",
        8 => "sold_by_another_agent",
        9 => "withdrawn_from_market",
        10 => "lost_instruction",
        11 => "removed",
        12 => "let_by_us",
        _ => return None,
    })
}

/// RTDF `status`.
fn status(code: i64) -> Option<&'static str> {
    Some(match code {
        1 => "available",
        2 | 3 => "sold_stc",
        4 => "under_offer",
        5 => "reserved",
        6 => "let_agreed",
        _ => return None,
    })
}

/// A rent per period turned into a whole-pound monthly figure, from periods a year.
pub fn monthly(price: i64, per_year: i64) -> i64 {
    // Rounded half up.
    (price * per_year * 2 + 12) / 24
}

/// Opens an RTDF JSON-lines file (see the module documentation).
pub fn read(path: &Path) -> io::Result<impl Iterator<Item = Parsed<ListingRow>> + Send> {
    let reader = BufReader::new(File::open(path)?);
    let file = path.display().to_string();
    let mut line = 0u64;
    let mut lines = reader.split(b'\n');
    Ok(std::iter::from_fn(move || {
        loop {
            let bytes = match lines.next()? {
                Ok(b) => b,
                Err(e) => {
                    return Some(Err(Rejection {
                        file: file.clone(),
                        line: line + 1,
                        reason: format!("unreadable: {e}"),
                    }));
                }
            };
            line += 1;
            let bytes = if line == 1 {
                bytes
                    .strip_prefix(b"\xEF\xBB\xBF")
                    .unwrap_or(&bytes)
                    .to_vec()
            } else {
                bytes
            };
            let text = decode(&bytes);
            if text.trim().is_empty() {
                continue;
            }
            return Some(
                parse_line(&text)
                    .map(|r| (line, r))
                    .map_err(|reason| Rejection {
                        file: file.clone(),
                        line,
                        reason,
                    }),
            );
        }
    }))
}

fn object<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a Map<String, Value>>, String> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(other) => Err(format!("{key} must be an object, found {}", kind(other))),
    }
}

/// A code or count: a whole number given as a number or a digit string.
fn code(obj: &Map<String, Value>, key: &str) -> Result<Option<i64>, String> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => s
            .trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| format!("{key} {s:?} is not a whole number")),
        Some(v) => whole(v)
            .map(Some)
            .ok_or_else(|| format!("{key} {v} is not a whole number")),
    }
}

fn non_negative(obj: &Map<String, Value>, key: &str) -> Result<Option<i64>, String> {
    match code(obj, key)? {
        Some(n) if n < 0 => Err(format!("{key} {n} is not a whole number of at least 0")),
        other => Ok(other),
    }
}

fn string(obj: &Map<String, Value>, key: &str) -> Option<String> {
    match get(obj, key)? {
        Value::String(s) => value::text(Some(s)),
        Value::Number(n) => Some(n.to_string()),
        Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_) => None,
    }
}

fn float(obj: &Map<String, Value>, key: &str) -> Option<f64> {
    match get(obj, key)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => value::float(s),
        Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_) => None,
    }
}

/// An RTDF date-time: `dd-MM-yyyy HH:mm:ss`, RFC 3339, or a date.
pub fn rtdf_time(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    NaiveDateTime::parse_from_str(s, "%d-%m-%Y %H:%M:%S")
        .ok()
        .map(|t| t.and_utc())
        .or_else(|| parse_time(s))
}

fn parse_line(text: &str) -> Result<ListingRow, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
    let Value::Object(top) = v else {
        return Err(format!("expected a JSON object, found {}", kind(&v)));
    };
    let branch = object(&top, "branch")?.ok_or("missing branch")?;
    let channel = match code(branch, "channel")? {
        Some(1) => "sale",
        Some(2) => "rent",
        Some(c) => return Err(format!("unknown branch.channel {c} (1 sales, 2 lettings)")),
        None => return Err("missing branch.channel".into()),
    };
    let branch_id = string(branch, "branch_id").ok_or("missing branch.branch_id")?;
    let network = object(&top, "network")?.and_then(|n| string(n, "network_id"));
    let property = object(&top, "property")?.ok_or("missing property")?;
    let agent_ref = string(property, "agent_ref").ok_or("missing property.agent_ref")?;
    let received = match get(&top, "received_at") {
        None => None,
        Some(Value::String(s)) => Some(
            parse_time(s.trim())
                .ok_or_else(|| format!("received_at {s:?} is not an RFC 3339 timestamp"))?,
        ),
        Some(other) => {
            return Err(format!(
                "received_at must be a string, found {}",
                kind(other)
            ));
        }
    };
    let method = string(&top, "method").map(|m| m.to_ascii_lowercase());
    let removal = match method.as_deref() {
        Some("removeproperty") => true,
        Some("sendpropertydetails") => false,
        Some(m) => return Err(format!("unknown method {m:?}")),
        None => get(property, "removal_reason").is_some(),
    };
    let details = Details {
        branch: Some(match network {
            Some(n) => format!("{n}/{branch_id}"),
            None => branch_id,
        }),
        ..Details::default()
    };
    if removal {
        let reason = code(property, "removal_reason")?.ok_or("missing property.removal_reason")?;
        let reason = removal_reason(reason)
            .ok_or_else(|| format!("unknown property.removal_reason {reason}"))?;
        let time = received.ok_or("a removal needs received_at: removeproperty carries no time")?;
        return Ok(ListingRow {
            listing_id: agent_ref,
            channel: channel.into(),
            address: None,
            postcode: None,
            uprn: None,
            price: None,
            bedrooms: None,
            property_type: None,
            agent: None,
            first_seen: time,
            snapshots: vec![Snapshot {
                time,
                price: None,
                status: Some("removed".into()),
                removal_reason: Some(reason.into()),
            }],
            details,
            feed: "rtdf",
            removal_only: true,
        });
    }
    let time = match received {
        Some(t) => t,
        None => match get(property, "update_date") {
            Some(Value::String(s)) => rtdf_time(s)
                .ok_or_else(|| format!("property.update_date {s:?} is not dd-MM-yyyy HH:mm:ss"))?,
            _ => return Err("no time: neither received_at nor property.update_date".into()),
        },
    };
    let status = match code(property, "status")? {
        None => None,
        Some(c) => Some(status(c).ok_or_else(|| format!("unknown property.status {c}"))?),
    };
    let empty = Map::new();
    let address = object(property, "address")?.unwrap_or(&empty);
    let prices = object(property, "price_information")?.unwrap_or(&empty);
    let info = object(property, "details")?.unwrap_or(&empty);
    let mut price = non_negative(prices, "price")?;
    if channel == "rent" {
        let per_year = match code(prices, "rent_frequency")? {
            None => 12,
            Some(f @ (1 | 4 | 12 | 52 | 365)) => f,
            Some(f) => return Err(format!("unknown price_information.rent_frequency {f}")),
        };
        price = price.map(|p| monthly(p, per_year));
    }
    let tenure = match code(prices, "tenure_type")? {
        None => None,
        Some(c) => {
            Some(tenure(c).ok_or_else(|| format!("unknown price_information.tenure_type {c}"))?)
        }
    };
    let floor_area_m2 = match (
        float(info, "internal_area"),
        code(info, "internal_area_unit")?,
    ) {
        (None, _) => None,
        (Some(a), Some(1)) => Some((a * 0.092_903_04 * 10.0).round() / 10.0),
        (Some(a), None | Some(2)) => Some(a),
        (Some(_), Some(u)) => {
            return Err(format!(
                "details.internal_area_unit {u} is not a floor area unit (1 sq ft, 2 sq m)"
            ));
        }
    };
    let bedrooms = non_negative(info, "bedrooms")?
        .map(|b| i32::try_from(b).map_err(|_| format!("bedrooms {b} is out of range")))
        .transpose()?;
    let parts: Vec<String> = [
        "house_name_number",
        "address_2",
        "address_3",
        "address_4",
        "town",
    ]
    .iter()
    .filter_map(|k| string(address, k))
    .collect();
    let address_text = if parts.is_empty() {
        string(address, "display_address")
    } else {
        Some(parts.join(", "))
    };
    let postcode = match (string(address, "postcode_1"), string(address, "postcode_2")) {
        (Some(a), Some(b)) => value::postcode(Some(&format!("{a} {b}"))),
        _ => None,
    };
    let new_home = match get(property, "new_home") {
        Some(Value::Bool(b)) => Some(*b),
        _ => None,
    };
    Ok(ListingRow {
        listing_id: agent_ref,
        channel: channel.into(),
        address: address_text,
        postcode,
        uprn: None,
        price,
        bedrooms,
        property_type: code(property, "property_type")?.map(property_type),
        agent: None,
        first_seen: time,
        snapshots: vec![Snapshot {
            time,
            price,
            status: status.map(str::to_string),
            removal_reason: None,
        }],
        details: Details {
            floor_area_m2,
            tenure: tenure.map(str::to_string),
            unexpired_years: code(prices, "tenure_unexpired_years")?
                .and_then(|y| i32::try_from(y).ok())
                .filter(|y| *y >= 0),
            latitude: float(address, "latitude"),
            longitude: float(address, "longitude"),
            new_home,
            ..details
        },
        feed: "rtdf",
        removal_only: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::testutil::{split, temp_file};

    const SEND: &str = r#"{"received_at": "2025-03-03T09:00:00Z", "network": {"network_id": 77}, "branch": {"branch_id": 1234, "channel": 2}, "property": {"agent_ref": "1234_A1", "published": true, "property_type": 8, "status": 1, "new_home": false, "create_date": "01-03-2025 10:00:00", "update_date": "02-03-2025 10:00:00", "address": {"house_name_number": "Flat 2", "address_2": "10 High Street", "town": "Tamberley", "postcode_1": "XT1", "postcode_2": "2AB", "display_address": "High Street, Tamberley", "latitude": 50.7, "longitude": -1.3}, "price_information": {"price": 300, "rent_frequency": 52, "tenure_type": 2, "tenure_unexpired_years": 95}, "details": {"bedrooms": 2, "internal_area": 700, "internal_area_unit": 1}}}"#;

    #[test]
    fn a_letting_and_its_removal() {
        let remove = r#"{"method": "removeproperty", "received_at": "2025-04-01T12:00:00Z", "branch": {"branch_id": "1234", "channel": 2}, "property": {"agent_ref": "1234_A1", "removal_reason": 12}}"#;
        let f = temp_file(format!("{SEND}\n\n{remove}\n").as_bytes());
        let (ok, bad) = split(read(f.path()).expect("opens"));
        assert!(bad.is_empty(), "{bad:?}");
        let (line, r) = &ok[0];
        assert_eq!(*line, 1);
        assert_eq!(r.listing_id, "1234_A1");
        assert_eq!(r.channel, "rent");
        // 300 a week is 1,300 a month
        assert_eq!(r.price, Some(1300));
        assert_eq!(r.postcode.as_deref(), Some("XT1 2AB"));
        assert_eq!(
            r.address.as_deref(),
            Some("Flat 2, 10 High Street, Tamberley")
        );
        assert_eq!(r.property_type.as_deref(), Some("Flat"));
        assert_eq!(r.details.floor_area_m2, Some(65.0));
        assert_eq!(r.details.tenure.as_deref(), Some("leasehold"));
        assert_eq!(r.details.unexpired_years, Some(95));
        assert_eq!(r.details.branch.as_deref(), Some("77/1234"));
        assert_eq!(r.details.new_home, Some(false));
        assert_eq!(r.snapshots[0].status.as_deref(), Some("available"));
        let (line, rm) = &ok[1];
        assert_eq!(*line, 3);
        assert!(rm.removal_only);
        assert_eq!(rm.snapshots[0].status.as_deref(), Some("removed"));
        assert_eq!(rm.snapshots[0].removal_reason.as_deref(), Some("let_by_us"));
    }

    #[test]
    fn update_date_times_a_request_without_received_at() {
        let line = SEND.replace(r#""received_at": "2025-03-03T09:00:00Z", "#, "");
        let f = temp_file(line.as_bytes());
        let (ok, bad) = split(read(f.path()).expect("opens"));
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ok[0].1.first_seen.to_rfc3339(), "2025-03-02T10:00:00+00:00");
    }

    #[test]
    fn malformed_requests_are_rejected_by_line() {
        let cases: Vec<(String, &str)> = vec![
            ("not json".into(), "invalid JSON"),
            ("[1]".into(), "expected a JSON object"),
            (SEND.replace(r#""channel": 2"#, r#""channel": 3"#), "unknown branch.channel 3"),
            (SEND.replace(r#""agent_ref": "1234_A1", "#, ""), "missing property.agent_ref"),
            (SEND.replace(r#""status": 1"#, r#""status": 9"#), "unknown property.status 9"),
            (SEND.replace(r#""price": 300"#, r#""price": -5"#), "price -5 is not"),
            (SEND.replace(r#""rent_frequency": 52"#, r#""rent_frequency": 2"#), "unknown price_information.rent_frequency 2"),
            (SEND.replace(r#""tenure_type": 2"#, r#""tenure_type": 9"#), "unknown price_information.tenure_type 9"),
            (SEND.replace(r#""internal_area_unit": 1"#, r#""internal_area_unit": 3"#), "details.internal_area_unit 3"),
            (r#"{"branch": {"branch_id": 1, "channel": 1}, "property": {"agent_ref": "X", "removal_reason": 8}}"#.into(), "a removal needs received_at"),
            (r#"{"received_at": "2025-01-01T00:00:00Z", "branch": {"branch_id": 1, "channel": 1}, "property": {"agent_ref": "X", "removal_reason": 3}}"#.into(), "unknown property.removal_reason 3"),
            (SEND.replace(r#""received_at": "2025-03-03T09:00:00Z", "#, "").replace(r#""update_date": "02-03-2025 10:00:00", "#, ""), "no time"),
        ];
        let content: String = cases.iter().map(|(l, _)| format!("{l}\n")).collect();
        let f = temp_file(content.as_bytes());
        let items: Vec<_> = read(f.path()).expect("opens").collect();
        assert_eq!(items.len(), cases.len());
        for (i, ((text, reason), item)) in cases.iter().zip(&items).enumerate() {
            let r = item.as_ref().expect_err(text);
            assert_eq!(r.line, i as u64 + 1);
            assert!(r.reason.starts_with(reason), "{text}: got {:?}", r.reason);
            assert_eq!(r.file, f.path().display().to_string());
        }
    }

    #[test]
    fn monthly_rents() {
        assert_eq!(monthly(300, 52), 1300);
        assert_eq!(monthly(1000, 12), 1000);
        assert_eq!(monthly(12_000, 1), 1000);
        assert_eq!(monthly(100, 365), 3042);
    }
}
