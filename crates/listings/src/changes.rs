//! The change feed: listing events after a caller-held cursor, read from the append-only log the
//! listings loader writes (`listing_events`). The cursor is an event id, never a timestamp, so a
//! caller that stores the last cursor it saw misses nothing and sees nothing twice.

use chrono::NaiveDateTime;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use terrace_core::Violation;
use terrace_store::Db;
use terrace_store::LookupError;
use terrace_store::listings;

/// The most events one page may carry.
pub const PAGE_MAX: i64 = 1_000;
/// The page size when none is asked for.
pub const PAGE_DEFAULT: i64 = 100;

/// A checked page request: after `cursor` (0 = the start of the log), at most `limit` events.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageRequest {
    pub cursor: i64,
    pub limit: i64,
}

impl PageRequest {
    /// The page a caller asked for, from the raw `cursor` (a string of 1 to 18 digits or a
    /// non-negative integer; absent or null reads from the start) and `limit` (an integer from 1
    /// to [`PAGE_MAX`], default [`PAGE_DEFAULT`]). Every broken rule is reported.
    pub fn read(
        cursor: Option<&Value>,
        limit: Option<&Value>,
    ) -> Result<PageRequest, Vec<Violation>> {
        let mut broken = Vec::new();
        let c = match cursor {
            None | Some(Value::Null) => Some(0),
            Some(Value::Number(n)) => n.as_i64().filter(|v| *v >= 0),
            Some(Value::String(s)) if (1..=18).contains(&s.len()) => s
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| s.parse().ok())
                .flatten(),
            Some(_) => None,
        };
        if c.is_none() {
            broken.push(
                Violation::new(
                    &["cursor"],
                    "value_error",
                    "Value error, the cursor is an event id (digits) from a previous page's next_cursor",
                )
                .with_input(cursor.cloned().unwrap_or(Value::Null)),
            );
        }
        let l = match limit {
            None | Some(Value::Null) => Some(PAGE_DEFAULT),
            Some(Value::Number(n)) => n.as_i64(),
            Some(_) => None,
        };
        match l {
            None => broken.push(
                Violation::new(&["limit"], "int_parsing", "Input should be a valid integer")
                    .with_input(limit.cloned().unwrap_or(Value::Null)),
            ),
            Some(n) if n < 1 => broken.push(
                Violation::new(
                    &["limit"],
                    "greater_than_equal",
                    "Input should be greater than or equal to 1",
                )
                .with_input(n)
                .with_ctx(json!({"ge": 1})),
            ),
            Some(n) if n > PAGE_MAX => broken.push(
                Violation::new(
                    &["limit"],
                    "less_than_equal",
                    format!("Input should be less than or equal to {PAGE_MAX}"),
                )
                .with_input(n)
                .with_ctx(json!({"le": PAGE_MAX})),
            ),
            Some(_) => {}
        }
        match (c, l) {
            (Some(cursor), Some(limit)) if broken.is_empty() => Ok(PageRequest { cursor, limit }),
            _ => Err(broken),
        }
    }
}

/// The event kinds the log records.
pub const EVENT_TYPES: [&str; 4] = [
    "new_listing",
    "price_reduction",
    "price_increase",
    "status_change",
];

/// Change kinds a property watcher would want that no loaded feed supplies.
pub const NOT_YET_FED: [&str; 5] = [
    "registered_sale",
    "new_energy_certificate",
    "planning_application",
    "council_tax_band_change",
    "title_ownership_change",
];

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ChangeEvent {
    /// The event's id in the log: pass it (or `next_cursor`) as the next cursor.
    pub event_id: String,
    /// `new_listing`, `price_reduction`, `price_increase` or `status_change`.
    pub event_type: String,
    /// When the change was observed (UTC).
    pub time: NaiveDateTime,
    pub listing_id: String,
    /// `sale` or `rent`; absent if the listing row is gone.
    pub channel: Option<String>,
    pub uprn: Option<i64>,
    pub postcode: Option<String>,
    pub address: Option<String>,
    /// Whole pounds (rent per calendar month).
    pub price: Option<i64>,
    pub previous_price: Option<i64>,
    pub status: Option<String>,
    pub previous_status: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Coverage {
    /// The kinds of event this log records.
    pub event_types: Vec<&'static str>,
    /// Changes that are not observed as events: a listing that disappears from a BLM file or the
    /// JSON-lines feed is not reported as withdrawn (an RTDF `removeproperty` is: a
    /// `status_change` to `removed`).
    pub not_observed: Vec<&'static str>,
    /// Change kinds with no feed yet.
    pub not_yet_fed: Vec<&'static str>,
    pub note: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ChangesPage {
    pub country: &'static str,
    /// The cursor this page was read after.
    pub cursor: String,
    /// Oldest first. An empty page means nothing has happened since the cursor among the event
    /// types in `coverage`.
    pub events: Vec<ChangeEvent>,
    /// The cursor for the next call: the last event's id, or the cursor given when the page is
    /// empty.
    pub next_cursor: String,
    /// Whether more events follow this page.
    pub has_more: bool,
    pub coverage: Coverage,
}

/// The cursor is not an event id of the log.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownCursor(pub i64);

pub fn coverage() -> Coverage {
    Coverage {
        event_types: EVENT_TYPES.to_vec(),
        not_observed: vec!["withdrawal"],
        not_yet_fed: NOT_YET_FED.to_vec(),
        note: "Events come from the listings feed only. Read an empty page together with `event_types`: a listing that merely stops appearing in a BLM file or the JSON-lines feed is not observed as withdrawn (an RTDF removal is, as a status_change to removed), and the kinds under `not_yet_fed` have no feed.",
    }
}

/// At most `limit` events after `cursor` (0 = the start of the log), oldest first; an id that is
/// not in the log is an `UnknownCursor`.
pub async fn changes_since(
    db: &Db,
    PageRequest { cursor, limit }: PageRequest,
) -> Result<Result<ChangesPage, UnknownCursor>, LookupError> {
    if cursor != 0 && !listings::event_exists(db, cursor).await? {
        return Ok(Err(UnknownCursor(cursor)));
    }
    let mut rows = listings::events_after(db, cursor, limit + 1).await?;
    let has_more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let mut ids: Vec<String> = rows.iter().map(|e| e.listing_id.clone()).collect();
    ids.sort();
    ids.dedup();
    let listings: HashMap<String, listings::ListingRow> = listings::listings_by_id(db, &ids)
        .await?
        .into_iter()
        .map(|l| (l.listing_id.clone(), l))
        .collect();
    let next_cursor = rows.last().map_or(cursor, |e| e.id).to_string();
    let events = rows
        .into_iter()
        .map(|e| {
            let l = listings.get(&e.listing_id);
            ChangeEvent {
                event_id: e.id.to_string(),
                event_type: e.event_type,
                time: e.time,
                channel: l.map(|l| l.channel.clone()),
                uprn: l.and_then(|l| l.uprn),
                postcode: l.and_then(|l| l.postcode.clone()),
                address: l.and_then(|l| l.address.clone()),
                listing_id: e.listing_id,
                price: e.price,
                previous_price: e.previous_price,
                status: e.status,
                previous_status: e.previous_status,
            }
        })
        .collect();
    Ok(Ok(ChangesPage {
        country: "UK",
        cursor: cursor.to_string(),
        events,
        next_cursor,
        has_more,
        coverage: coverage(),
    }))
}
