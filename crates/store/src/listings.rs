//! The listings feed: each listing's latest state, its price/status snapshots, and the
//! append-only change log of listing events.
//!
//! Invariants: a listing's key is its `listing_id`; snapshots are replaced per listing as a
//! whole; events are only appended (never updated or deleted) and their `id` increases in
//! insertion order, so it serves as the change log's cursor.

use crate::db::{Db, StoreResult};
use crate::schema::{
    listing_events, listing_index_points, listing_snapshots, listings, postcodes, private_rents,
};
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
    /// Internal floor area in square metres, as the feed states it (converted from square feet).
    pub floor_area_m2: Option<f64>,
    /// `freehold`, `leasehold`, `feudal`, `commonhold`, `share_of_freehold` or `non_traditional`.
    pub tenure: Option<String>,
    /// Years left on the lease, as the feed states them.
    pub unexpired_years: Option<i32>,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    /// The agent's branch id in the feed.
    pub branch: Option<String>,
    pub new_home: Option<bool>,
    /// The feed the listing last came in: `jsonl`, `blm` or `rtdf`.
    pub feed: Option<String>,
    /// How the UPRN was found: `feed` (the feed gave it) or `address_matcher`.
    pub uprn_method: Option<String>,
    /// The address matcher's score when it found the UPRN.
    pub uprn_score: Option<f64>,
    /// When the feed said the listing was removed (RTDF `removeproperty`).
    pub removed_at: Option<NaiveDateTime>,
    /// The removal reason the feed gave (`sold_by_us`, `withdrawn_from_market`, ...).
    pub removal_reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = listing_snapshots)]
pub struct SnapshotRow {
    pub listing_id: String,
    pub time: NaiveDateTime,
    pub price: Option<i64>,
    pub status: Option<String>,
    /// On a removal snapshot (status `removed`), the reason the feed gave.
    pub removal_reason: Option<String>,
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

/// The geography a market query reads listings from.
#[derive(Debug, Clone, PartialEq)]
pub enum ListingArea {
    /// Every listing.
    National,
    /// Listings whose postcode starts with this prefix followed by a space (a district, `XT1`)
    /// or is exactly this prefix and more (a sector `XT1 2`, a unit `XT1 2AB`).
    PostcodePrefix(String),
    /// Listings whose postcode lies in a local authority (by the postcode directory).
    LocalAuthority(String),
}

impl ListingArea {
    /// The `LIKE` pattern of a postcode prefix.
    pub(crate) fn pattern(prefix: &str) -> String {
        if prefix.contains(' ') {
            format!("{prefix}%")
        } else {
            format!("{prefix} %")
        }
    }

    /// The postcodes the directory places in a local authority (an area of one is read by
    /// them, in chunks of [`crate::bulk::CHUNK`]).
    pub(crate) async fn lad_postcodes(db: &Db, code: &str) -> StoreResult<Vec<String>> {
        Ok(with_conn!(db, |c| postcodes::table
            .filter(postcodes::lad_code.eq(code))
            .select(postcodes::postcode)
            .load(c)
            .await?))
    }
}

/// The listings of an area (every channel), by listing id.
pub async fn listings_in_area(db: &Db, area: &ListingArea) -> StoreResult<Vec<ListingRow>> {
    Ok(match area {
        ListingArea::National => with_conn!(db, |c| {
            listings::table
                .order(listings::listing_id)
                .select(ListingRow::as_select())
                .load(c)
                .await?
        }),
        ListingArea::PostcodePrefix(p) => {
            let pattern = ListingArea::pattern(p);
            with_conn!(db, |c| {
                listings::table
                    .filter(listings::postcode.like(&pattern))
                    .order(listings::listing_id)
                    .select(ListingRow::as_select())
                    .load(c)
                    .await?
            })
        }
        ListingArea::LocalAuthority(code) => {
            let pcs = ListingArea::lad_postcodes(db, code).await?;
            let mut out = Vec::new();
            for k in pcs.chunks(crate::bulk::CHUNK) {
                let part: Vec<ListingRow> = with_conn!(db, |c| {
                    listings::table
                        .filter(listings::postcode.eq_any(k))
                        .select(ListingRow::as_select())
                        .load(c)
                        .await?
                });
                out.extend(part);
            }
            out.sort_by(|a, b| a.listing_id.cmp(&b.listing_id));
            out
        }
    })
}

/// Whether the area is known: a postcode of the directory, an address of the register or a
/// listing lies in it; always true for [`ListingArea::National`].
pub async fn area_known(db: &Db, area: &ListingArea) -> StoreResult<bool> {
    use crate::schema::addresses;
    let n: i64 = match area {
        ListingArea::National => return Ok(true),
        ListingArea::PostcodePrefix(p) => {
            let pattern = ListingArea::pattern(p);
            let a: i64 = with_conn!(db, |c| postcodes::table
                .filter(postcodes::postcode.like(&pattern))
                .count()
                .get_result(c)
                .await?);
            let b: i64 = with_conn!(db, |c| addresses::table
                .filter(addresses::postcode.like(&pattern))
                .count()
                .get_result(c)
                .await?);
            let l: i64 = with_conn!(db, |c| listings::table
                .filter(listings::postcode.like(&pattern))
                .count()
                .get_result(c)
                .await?);
            a + b + l
        }
        ListingArea::LocalAuthority(code) => {
            let a: i64 = with_conn!(db, |c| postcodes::table
                .filter(postcodes::lad_code.eq(code))
                .count()
                .get_result(c)
                .await?);
            let b: i64 = with_conn!(db, |c| addresses::table
                .filter(addresses::lad_code.eq(code))
                .count()
                .get_result(c)
                .await?);
            a + b
        }
    };
    Ok(n > 0)
}

/// A page of sale listings matched to a UPRN, in key order after `after` (the valuation
/// build reads their relists).
pub async fn sale_listings_with_uprn_page(
    db: &Db,
    after: &str,
    limit: i64,
) -> StoreResult<Vec<ListingRow>> {
    Ok(with_conn!(db, |c| {
        listings::table
            .filter(listings::listing_id.gt(after))
            .filter(listings::channel.eq("sale"))
            .filter(listings::uprn.is_not_null())
            .order(listings::listing_id)
            .limit(limit)
            .select(ListingRow::as_select())
            .load(c)
            .await?
    }))
}

/// Every listing of a UPRN, on either channel, most recently seen first.
pub async fn listings_of_uprn(db: &Db, uprn: i64) -> StoreResult<Vec<ListingRow>> {
    Ok(with_conn!(db, |c| {
        listings::table
            .filter(listings::uprn.eq(uprn))
            .order((listings::last_seen.desc(), listings::listing_id))
            .select(ListingRow::as_select())
            .load(c)
            .await?
    }))
}

/// The earliest snapshot time (when observation began); `None` when no feed has given a
/// snapshot. One probe of `listing_snapshots_time_idx`.
pub async fn first_snapshot_time(db: &Db) -> StoreResult<Option<NaiveDateTime>> {
    Ok(with_conn!(db, |c| listing_snapshots::table
        .select(diesel::dsl::min(listing_snapshots::time))
        .first(c)
        .await?))
}

/// The listings with no UPRN and an address, after `after` by id, at most `limit`.
pub async fn unmatched_listings(db: &Db, after: &str, limit: i64) -> StoreResult<Vec<ListingRow>> {
    Ok(with_conn!(db, |c| {
        listings::table
            .filter(listings::uprn.is_null())
            .filter(listings::address.is_not_null())
            .filter(listings::listing_id.gt(after))
            .order(listings::listing_id)
            .limit(limit)
            .select(ListingRow::as_select())
            .load(c)
            .await?
    }))
}

/// Sets the UPRN, method and score of matched listings: `(listing_id, uprn, score)`.
pub async fn set_listing_matches(
    db: &Db,
    method: &str,
    matches: Vec<(String, i64, f64)>,
) -> StoreResult<usize> {
    if matches.is_empty() {
        return Ok(0);
    }
    let method = method.to_string();
    Ok(execute_all!(db, matches, |m| diesel::update(
        listings::table.filter(listings::listing_id.eq(m.0.clone()))
    )
    .set((
        listings::uprn.eq(Some(m.1)),
        listings::uprn_method.eq(Some(method.clone())),
        listings::uprn_score.eq(Some(m.2)),
    ))))
}

/// The feed's latest sighting: the latest `last_seen` of any listing.
pub async fn latest_sighting(db: &Db) -> StoreResult<Option<NaiveDateTime>> {
    Ok(with_conn!(db, |c| listings::table
        .select(diesel::dsl::max(listings::last_seen))
        .first(c)
        .await?))
}

// ---------------------------------------------------------------------------------------------
// The ONS Price Index of Private Rents and the listings indices (asking price and rent).

/// One month of the ONS Price Index of Private Rents for one local authority.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = private_rents)]
pub struct PiprRow {
    /// `area_code|YYYY-MM`.
    pub pipr_key: String,
    pub area_code: String,
    pub area_name: Option<String>,
    pub region_name: Option<String>,
    /// `YYYY-MM`.
    pub month: String,
    /// The ONS index (its own base); `None` where the ONS wrote `[x]`.
    pub rent_index: Option<f64>,
    pub monthly_change: Option<f64>,
    pub annual_change: Option<f64>,
    /// Average private rent, pounds per calendar month.
    pub rental_price: Option<i64>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    PiprRow,
    private_rents,
    pipr_key,
    String,
    pipr_by_key,
    replace_pipr
);

/// The PIPR months of one local authority, oldest first.
pub async fn pipr_of(db: &Db, area_code: &str) -> StoreResult<Vec<PiprRow>> {
    Ok(with_conn!(db, |c| {
        private_rents::table
            .filter(private_rents::area_code.eq(area_code))
            .order(private_rents::month)
            .select(PiprRow::as_select())
            .load(c)
            .await?
    }))
}

/// One month of a listings index (`kind` `asking` or `rent`).
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = listing_index_points)]
pub struct ListingIndexRow {
    pub kind: String,
    /// `national`, `lad:<GSS code>`, `area:<postcode area>` or `district:<outward code>`.
    pub area_key: String,
    /// `YYYY-MM`.
    pub month: String,
    /// 2022-01 = 100.
    pub level: Option<f64>,
    pub se: Option<f64>,
    /// The 80% band.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// Listings first priced in the month in this area.
    pub n: i64,
    /// The series is the area's own deviation shrunk toward its parent's.
    pub shrunk: bool,
    /// The month had no own observation: its level is the smoother's.
    pub filled: bool,
    /// `published` or `withheld` (a rent month that disagrees with the PIPR or cannot be checked).
    pub status: String,
    /// On rent rows, the PIPR of the area's local authority in the month, re-based to 2022-01 = 100.
    pub pipr_level: Option<f64>,
    /// The parent the series was shrunk toward.
    pub parent: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// Replaces every stored point of an index kind with `rows`, in one transaction.
pub async fn replace_index_points(
    db: &Db,
    kind: &str,
    rows: Vec<ListingIndexRow>,
) -> StoreResult<usize> {
    Ok(replace_rows!(
        db,
        listing_index_points::table,
        listing_index_points::kind,
        [kind.to_string()],
        rows
    ))
}

/// The stored points of one area's index, oldest first.
pub async fn index_points(
    db: &Db,
    kind: &str,
    area_key: &str,
) -> StoreResult<Vec<ListingIndexRow>> {
    Ok(with_conn!(db, |c| {
        listing_index_points::table
            .filter(listing_index_points::kind.eq(kind))
            .filter(listing_index_points::area_key.eq(area_key))
            .order(listing_index_points::month)
            .select(ListingIndexRow::as_select())
            .load(c)
            .await?
    }))
}

/// The area keys an index kind has points for, sorted.
pub async fn index_area_keys(db: &Db, kind: &str) -> StoreResult<Vec<String>> {
    Ok(with_conn!(db, |c| {
        listing_index_points::table
            .filter(listing_index_points::kind.eq(kind))
            .select(listing_index_points::area_key)
            .distinct()
            .order(listing_index_points::area_key)
            .load(c)
            .await?
    }))
}

/// The listings after `after` by id, at most `limit` (every channel).
pub async fn listings_page(db: &Db, after: &str, limit: i64) -> StoreResult<Vec<ListingRow>> {
    Ok(with_conn!(db, |c| {
        listings::table
            .filter(listings::listing_id.gt(after))
            .order(listings::listing_id)
            .limit(limit)
            .select(ListingRow::as_select())
            .load(c)
            .await?
    }))
}

/// The codes an unknown area is compared with to name the nearest: the outward codes of the
/// listings' postcodes (`lad` false), or the local authority codes of the postcode directory
/// and the register (`lad` true); sorted, distinct.
pub async fn area_codes(db: &Db, lad: bool) -> StoreResult<Vec<String>> {
    use crate::schema::addresses;
    let mut out: Vec<String> = if lad {
        let mut a: Vec<Option<String>> = with_conn!(db, |c| postcodes::table
            .select(postcodes::lad_code)
            .distinct()
            .load(c)
            .await?);
        let b: Vec<Option<String>> = with_conn!(db, |c| addresses::table
            .select(addresses::lad_code)
            .distinct()
            .load(c)
            .await?);
        a.extend(b);
        a.into_iter().flatten().collect()
    } else {
        let pcs: Vec<Option<String>> = with_conn!(db, |c| listings::table
            .select(listings::postcode)
            .distinct()
            .load(c)
            .await?);
        pcs.into_iter()
            .flatten()
            .filter_map(|p| p.split_whitespace().next().map(str::to_ascii_uppercase))
            .collect()
    };
    out.sort();
    out.dedup();
    Ok(out)
}
