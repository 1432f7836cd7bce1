//! The listings feed: append-only snapshots per listing, the listing's current state, and the
//! change log its snapshots imply.

use crate::formats::{Parsed, listings as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use chrono::NaiveDateTime;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::listings;
use terrace_store::listings::ListingRow;
use terrace_store::loads::RowCounts;

stored!(
    ListingRow,
    String,
    |r| r.listing_id.clone(),
    listings::listings_by_id,
    listings::replace_listings
);

/// The project's own JSON-lines feed.
pub struct Listings;
/// Rightmove BLM v3 files.
pub struct ListingsBlm;
/// Rightmove Real Time Data Feed requests, as JSON lines.
pub struct ListingsRtdf;

impl Load for Listings {
    type Row = format::ListingRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        apply(ctx, rows, counts).await
    }
}

impl Load for ListingsBlm {
    type Row = format::ListingRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        crate::formats::blm::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        apply(ctx, rows, counts).await
    }
}

impl Load for ListingsRtdf {
    type Row = format::ListingRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        crate::formats::rtdf::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        apply(ctx, rows, counts).await
    }
}

/// Drops every snapshot that says what the one before it said (price, status and removal
/// reason): an unchanged re-sighting adds nothing to the history.
fn compress(snaps: Vec<listings::SnapshotRow>) -> Vec<listings::SnapshotRow> {
    let mut out: Vec<listings::SnapshotRow> = Vec::with_capacity(snaps.len());
    for s in snaps {
        let same = out.last().is_some_and(|p| {
            p.price == s.price && p.status == s.status && p.removal_reason == s.removal_reason
        });
        if !same {
            out.push(s);
        }
    }
    out
}

/// Merges rows of any listings feed: a listing's snapshots are the union of what is stored and
/// what the rows say, by time (a later row for the same time wins), without the unchanged
/// re-sightings; its latest state is the last row's fields (a removal keeps the stored ones),
/// seen until the latest sighting. Events the log does not hold yet are appended.
async fn apply(
    ctx: &LoadCtx<'_>,
    rows: Vec<format::ListingRow>,
    counts: &mut RowCounts,
) -> Result<bool, StoreError> {
    let keys: Vec<String> = rows.iter().map(|r| r.listing_id.clone()).collect();
    let mut snaps: BTreeMap<(String, NaiveDateTime), listings::SnapshotRow> =
        listings::snapshots_of(ctx.db, &keys)
            .await?
            .into_iter()
            .map(|s| ((s.listing_id.clone(), s.time), s))
            .collect();
    // The latest sighting of each listing in these rows.
    let mut sighted: BTreeMap<String, NaiveDateTime> = BTreeMap::new();
    for r in &rows {
        for s in &r.snapshots {
            let t = s.time.naive_utc();
            let e = sighted.entry(r.listing_id.clone()).or_insert(t);
            *e = (*e).max(t);
            snaps.insert(
                (r.listing_id.clone(), t),
                listings::SnapshotRow {
                    listing_id: r.listing_id.clone(),
                    time: t,
                    price: s.price,
                    status: s.status.clone(),
                    removal_reason: s.removal_reason.clone(),
                },
            );
        }
    }
    let mut own_of: BTreeMap<String, Vec<listings::SnapshotRow>> = BTreeMap::new();
    for ((id, _), s) in snaps {
        own_of.entry(id).or_default().push(s);
    }
    let own_of: BTreeMap<String, Vec<listings::SnapshotRow>> =
        own_of.into_iter().map(|(k, v)| (k, compress(v))).collect();
    let mut events = Vec::new();
    merge(
        ctx.db,
        rows,
        counts,
        |r| r.listing_id.clone(),
        |r, prev: Option<&ListingRow>| {
            let own: &[listings::SnapshotRow] =
                own_of.get(&r.listing_id).map_or(&[], Vec::as_slice);
            let first_seen = prev.map_or(r.first_seen.naive_utc(), |p| {
                p.first_seen.min(r.first_seen.naive_utc())
            });
            let first_price = own.iter().find_map(|s| s.price).or(r.price);
            events.extend(listing_events(&r.listing_id, first_seen, first_price, own));
            let last = own.last();
            let last_seen = [
                prev.and_then(|p| p.last_seen),
                sighted.get(&r.listing_id).copied(),
                last.map(|s| s.time),
            ]
            .into_iter()
            .flatten()
            .max();
            let removal = own
                .iter()
                .rev()
                .find(|s| s.status.as_deref() == Some("removed"))
                .filter(|s| Some(s.time) == last.map(|l| l.time));
            let (removed_at, removal_reason) = match removal {
                Some(s) => (Some(s.time), s.removal_reason.clone()),
                None => (None, None),
            };
            let latest_price = own.iter().rev().find_map(|s| s.price);
            let uprn_method = r.uprn.map(|_| "feed".to_string());
            let d = r.details;
            let row = match (r.removal_only, prev) {
                (true, Some(p)) => ListingRow {
                    last_seen,
                    last_status: last.and_then(|s| s.status.clone()),
                    removed_at,
                    removal_reason,
                    first_seen,
                    branch: p.branch.clone().or(d.branch),
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                    ..p.clone()
                },
                _ => {
                    // A matcher's UPRN stays until the feed gives one of its own.
                    let (uprn, uprn_method, uprn_score) = match (r.uprn, prev) {
                        (Some(u), _) => (Some(u), uprn_method, None),
                        (None, Some(p)) if p.address == r.address && p.postcode == r.postcode => {
                            (p.uprn, p.uprn_method.clone(), p.uprn_score)
                        }
                        (None, _) => (None, None, None),
                    };
                    ListingRow {
                        listing_id: r.listing_id,
                        channel: r.channel,
                        address: r.address,
                        postcode: r.postcode,
                        uprn,
                        price: latest_price.or(r.price),
                        bedrooms: r.bedrooms,
                        property_type: r.property_type,
                        agent: r.agent,
                        first_seen,
                        last_seen,
                        last_status: last.and_then(|s| s.status.clone()),
                        source: ctx.source.to_string(),
                        updated_at: ctx.now,
                        floor_area_m2: d.floor_area_m2,
                        tenure: d.tenure,
                        unexpired_years: d.unexpired_years,
                        latitude: d.latitude,
                        longitude: d.longitude,
                        branch: d.branch,
                        new_home: d.new_home,
                        feed: Some(r.feed.to_string()),
                        uprn_method,
                        uprn_score,
                        removed_at,
                        removal_reason,
                    }
                }
            };
            Change::Put(row)
        },
    )
    .await?;
    listings::replace_snapshots(
        ctx.db,
        keys.clone(),
        own_of.into_values().flatten().collect(),
    )
    .await?;
    // Append only the events the log does not hold yet, in time order.
    let held: HashSet<(String, String, NaiveDateTime)> = listings::events_of(ctx.db, &keys)
        .await?
        .into_iter()
        .map(|e| (e.listing_id, e.event_type, e.time))
        .collect();
    // A listing with several rows in one chunk implies its events once per row: keep one.
    let mut seen = held;
    let mut fresh: Vec<listings::NewEvent> = events
        .into_iter()
        .filter(|e| seen.insert((e.listing_id.clone(), e.event_type.clone(), e.time)))
        .collect();
    fresh.sort_by(|a, b| (a.time, &a.listing_id).cmp(&(b.time, &b.listing_id)));
    if !fresh.is_empty() {
        ctx.note(format!("{} change-log events appended", fresh.len()));
    }
    listings::append_events(ctx.db, fresh).await?;
    Ok(false)
}

/// The change-log events a listing's snapshots imply: the new listing, then every price
/// reduction or increase and every status change between consecutive snapshots.
fn listing_events(
    id: &str,
    first_seen: NaiveDateTime,
    first_price: Option<i64>,
    snaps: &[listings::SnapshotRow],
) -> Vec<listings::NewEvent> {
    let event = |kind: &str,
                 time,
                 price,
                 previous_price,
                 status: Option<String>,
                 previous_status: Option<String>| listings::NewEvent {
        listing_id: id.to_string(),
        event_type: kind.to_string(),
        time,
        price,
        previous_price,
        status,
        previous_status,
    };
    let mut out = vec![event(
        "new_listing",
        first_seen,
        first_price,
        None,
        snaps.first().and_then(|s| s.status.clone()),
        None,
    )];
    for pair in snaps.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if let (Some(p0), Some(p1)) = (a.price, b.price)
            && p0 != p1
        {
            let kind = if p1 < p0 {
                "price_reduction"
            } else {
                "price_increase"
            };
            out.push(event(
                kind,
                b.time,
                Some(p1),
                Some(p0),
                b.status.clone(),
                None,
            ));
        }
        if let (Some(s0), Some(s1)) = (&a.status, &b.status)
            && s0 != s1
        {
            out.push(event(
                "status_change",
                b.time,
                b.price,
                None,
                Some(s1.clone()),
                Some(s0.clone()),
            ));
        }
    }
    out
}
