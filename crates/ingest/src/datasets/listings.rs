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

pub struct Listings;

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
        let keys: Vec<String> = rows.iter().map(|r| r.listing_id.clone()).collect();
        // The feed is append-only: a listing's snapshots are the union of what is stored and
        // what this file says, by time (a later line for the same time wins).
        let mut snaps: BTreeMap<(String, NaiveDateTime), listings::SnapshotRow> =
            listings::snapshots_of(ctx.db, &keys)
                .await?
                .into_iter()
                .map(|s| ((s.listing_id.clone(), s.time), s))
                .collect();
        for r in &rows {
            for s in &r.snapshots {
                let t = s.time.naive_utc();
                snaps.insert(
                    (r.listing_id.clone(), t),
                    listings::SnapshotRow {
                        listing_id: r.listing_id.clone(),
                        time: t,
                        price: s.price,
                        status: s.status.clone(),
                    },
                );
            }
        }
        let mut events = Vec::new();
        merge(
            ctx.db,
            rows,
            counts,
            |r| r.listing_id.clone(),
            |r, prev: Option<&ListingRow>| {
                let own: Vec<listings::SnapshotRow> = snaps
                    .range(
                        (r.listing_id.clone(), NaiveDateTime::MIN)
                            ..=(r.listing_id.clone(), NaiveDateTime::MAX),
                    )
                    .map(|(_, v)| v.clone())
                    .collect();
                let first_seen = prev.map_or(r.first_seen.naive_utc(), |p| {
                    p.first_seen.min(r.first_seen.naive_utc())
                });
                let first_price = own.iter().find_map(|s| s.price).or(r.price);
                events.extend(listing_events(&r.listing_id, first_seen, first_price, &own));
                let last = own.last();
                Change::Put(ListingRow {
                    listing_id: r.listing_id,
                    channel: r.channel,
                    address: r.address,
                    postcode: r.postcode,
                    uprn: r.uprn,
                    price: last.and_then(|s| s.price).or(r.price),
                    bedrooms: r.bedrooms,
                    property_type: r.property_type,
                    agent: r.agent,
                    first_seen,
                    last_seen: last.map(|s| s.time),
                    last_status: last.and_then(|s| s.status.clone()),
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        listings::replace_snapshots(ctx.db, keys.clone(), snaps.into_values().collect()).await?;
        // Append only the events the log does not hold yet, in time order.
        let held: HashSet<(String, String, NaiveDateTime)> = listings::events_of(ctx.db, &keys)
            .await?
            .into_iter()
            .map(|e| (e.listing_id, e.event_type, e.time))
            .collect();
        let mut fresh: Vec<listings::NewEvent> = events
            .into_iter()
            .filter(|e| !held.contains(&(e.listing_id.clone(), e.event_type.clone(), e.time)))
            .collect();
        fresh.sort_by(|a, b| (a.time, &a.listing_id).cmp(&(b.time, &b.listing_id)));
        if !fresh.is_empty() {
            ctx.note(format!("{} change-log events appended", fresh.len()));
        }
        listings::append_events(ctx.db, fresh).await?;
        Ok(false)
    }
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
