//! The listings feed: each listing's latest state, its price/status snapshots, and the
//! append-only change log of listing events.
//!
//! Invariants: a listing's key is its `listing_id`; snapshots are replaced per listing as a
//! whole; events are only appended (never updated or deleted) and their `id` increases in
//! insertion order, so it serves as the change log's cursor.

use crate::db::{Db, StoreResult};
use crate::schema::{listing_events, listing_snapshots, listings};
use crate::{execute_all, keyed_ops, replace_rows, with_conn};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// One listing of the feed (its latest known state).
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = listings)]
pub struct ListingRow {
    pub listing_id: String,
    pub channel: String,
    pub address: Option<String>,
    pub postcode: Option<String>,
    pub uprn: Option<i64>,
    pub price: Option<i64>,
    pub bedrooms: Option<i32>,
    pub property_type: Option<String>,
    pub agent: Option<String>,
    pub first_seen: NaiveDateTime,
    pub last_seen: Option<NaiveDateTime>,
    pub last_status: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = listing_snapshots)]
pub struct SnapshotRow {
    pub listing_id: String,
    pub time: NaiveDateTime,
    pub price: Option<i64>,
    pub status: Option<String>,
}

/// One event of the append-only change log; `id` is the cursor.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = listing_events)]
pub struct EventRow {
    pub id: i64,
    pub listing_id: String,
    pub event_type: String,
    pub time: NaiveDateTime,
    pub price: Option<i64>,
    pub previous_price: Option<i64>,
    pub status: Option<String>,
    pub previous_status: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Insertable)]
#[diesel(table_name = listing_events)]
pub struct NewEvent {
    pub listing_id: String,
    pub event_type: String,
    pub time: NaiveDateTime,
    pub price: Option<i64>,
    pub previous_price: Option<i64>,
    pub status: Option<String>,
    pub previous_status: Option<String>,
}

keyed_ops!(
    ListingRow,
    listings,
    listing_id,
    String,
    listings_by_id,
    replace_listings,
    delete_listings
);

/// Replaces every snapshot of the given listings with `rows`, in one transaction.
pub async fn replace_snapshots(
    db: &Db,
    listing_ids: Vec<String>,
    rows: Vec<SnapshotRow>,
) -> StoreResult<usize> {
    Ok(replace_rows!(
        db,
        listing_snapshots::table,
        listing_snapshots::listing_id,
        listing_ids,
        rows
    ))
}

/// The stored snapshots of the given listings, by listing then time.
pub async fn snapshots_of(db: &Db, listing_ids: &[String]) -> StoreResult<Vec<SnapshotRow>> {
    let mut out = Vec::new();
    for k in listing_ids.chunks(crate::bulk::CHUNK) {
        let part: Vec<SnapshotRow> = with_conn!(db, |c| {
            listing_snapshots::table
                .filter(listing_snapshots::listing_id.eq_any(k))
                .order((listing_snapshots::listing_id, listing_snapshots::time))
                .select(SnapshotRow::as_select())
                .load(c)
                .await?
        });
        out.extend(part);
    }
    Ok(out)
}

/// The listings of a UPRN on a channel (`sale` or `rent`), most recently seen first.
pub async fn listings_for_uprn(db: &Db, uprn: i64, channel: &str) -> StoreResult<Vec<ListingRow>> {
    Ok(with_conn!(db, |c| {
        listings::table
            .filter(listings::uprn.eq(uprn))
            .filter(listings::channel.eq(channel))
            .order(listings::last_seen.desc())
            .select(ListingRow::as_select())
            .load(c)
            .await?
    }))
}

/// Listings on a channel in a postcode district with a number of bedrooms, seen since `since`.
pub async fn district_listings(
    db: &Db,
    district: &str,
    channel: &str,
    bedrooms: i32,
    since: NaiveDateTime,
) -> StoreResult<Vec<ListingRow>> {
    let pattern = format!("{district} %");
    Ok(with_conn!(db, |c| {
        listings::table
            .filter(listings::postcode.like(&pattern))
            .filter(listings::channel.eq(channel))
            .filter(listings::bedrooms.eq(bedrooms))
            .filter(listings::last_seen.ge(since))
            .select(ListingRow::as_select())
            .load(c)
            .await?
    }))
}

/// The change-log events of the given listings, in id order.
pub async fn events_of(db: &Db, listing_ids: &[String]) -> StoreResult<Vec<EventRow>> {
    let mut out = Vec::new();
    for k in listing_ids.chunks(crate::bulk::CHUNK) {
        let part: Vec<EventRow> = with_conn!(db, |c| {
            listing_events::table
                .filter(listing_events::listing_id.eq_any(k))
                .order(listing_events::id)
                .select(EventRow::as_select())
                .load(c)
                .await?
        });
        out.extend(part);
    }
    Ok(out)
}

/// Appends events to the change log in one transaction (ids increase in insertion order).
pub async fn append_events(db: &Db, events: Vec<NewEvent>) -> StoreResult<usize> {
    if events.is_empty() {
        return Ok(0);
    }
    Ok(execute_all!(db, events, |e| diesel::insert_into(
        listing_events::table
    )
    .values(e)))
}

/// The events after `cursor` (an event id), oldest first, at most `limit`.
pub async fn events_after(db: &Db, cursor: i64, limit: i64) -> StoreResult<Vec<EventRow>> {
    Ok(with_conn!(db, |c| {
        listing_events::table
            .filter(listing_events::id.gt(cursor))
            .order(listing_events::id)
            .limit(limit)
            .select(EventRow::as_select())
            .load(c)
            .await?
    }))
}

/// Whether the change log holds an event with this id.
pub async fn event_exists(db: &Db, id: i64) -> StoreResult<bool> {
    let n: i64 = with_conn!(db, |c| listing_events::table
        .filter(listing_events::id.eq(id))
        .count()
        .get_result(c)
        .await?);
    Ok(n > 0)
}
