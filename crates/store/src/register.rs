//! The address register and its sources: addresses, postcodes, boundaries, EPC certificates and
//! Price Paid transactions, plus the `meta` key-value table.

use crate::db::{Db, StoreResult};
use crate::schema::{
    addresses, boundaries, brma_areas, council_tax, epc_certificates, leases, lha_rates,
    listing_events, listing_snapshots, listings, meta, postcodes, ppd_uprn_links, price_paid,
};
use crate::{replace_rows, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// The `meta` key whose value changes whenever a loader changes the address register; servers
/// rebuild their in-memory address index when it changes.
pub const REGISTER_VERSION_KEY: &str = "address_register_version";

#[derive(Debug, Clone, PartialEq, Default, Queryable, Selectable, Insertable)]
#[diesel(table_name = addresses)]
pub struct AddressRow {
    pub uprn: i64,
    pub parent_uprn: Option<i64>,
    pub class: Option<String>,
    pub saon: Option<String>,
    pub paon: Option<String>,
    pub street: Option<String>,
    pub locality: Option<String>,
    pub town: Option<String>,
    pub postcode: Option<String>,
    pub x: Option<f64>,
    pub y: Option<f64>,
    pub lat: Option<f64>,
    pub lon: Option<f64>,
    pub lad_code: Option<String>,
    pub lsoa_code: Option<String>,
    pub address_source: Option<String>,
    pub position_source: Option<String>,
    pub updated_at: NaiveDateTime,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = postcodes)]
pub struct PostcodeRow {
    pub postcode: String,
    pub easting: Option<f64>,
    pub northing: Option<f64>,
    pub lat: Option<f64>,
    pub lon: Option<f64>,
    pub lad_code: Option<String>,
    pub lsoa_code: Option<String>,
    pub country_code: Option<String>,
    pub quality: Option<i32>,
    pub terminated: bool,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = boundaries)]
pub struct BoundaryRow {
    pub code: String,
    pub kind: String,
    pub name: Option<String>,
    pub wkb: Vec<u8>,
    pub min_x: f64,
    pub min_y: f64,
    pub max_x: f64,
    pub max_y: f64,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = epc_certificates)]
pub struct EpcRow {
    pub lmk_key: String,
    pub uprn: Option<i64>,
    pub address: Option<String>,
    pub postcode: Option<String>,
    pub current_rating: Option<String>,
    pub potential_rating: Option<String>,
    pub current_efficiency: Option<i32>,
    pub potential_efficiency: Option<i32>,
    pub property_type: Option<String>,
    pub built_form: Option<String>,
    pub total_floor_area: Option<f64>,
    pub habitable_rooms: Option<i32>,
    pub lodgement_date: Option<NaiveDate>,
    pub inspection_date: Option<NaiveDate>,
    pub tenure: Option<String>,
    pub main_fuel: Option<String>,
    pub local_authority: Option<String>,
    pub fields_json: String,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = price_paid)]
pub struct PricePaidRow {
    pub transaction_id: String,
    pub price: i64,
    pub date: NaiveDate,
    pub postcode: Option<String>,
    pub property_type: String,
    pub new_build: bool,
    pub tenure: String,
    pub paon: Option<String>,
    pub saon: Option<String>,
    pub street: Option<String>,
    pub locality: Option<String>,
    pub town: Option<String>,
    pub district: Option<String>,
    pub county: Option<String>,
    pub ppd_category: String,
    pub uprn: Option<i64>,
    pub match_method: Option<String>,
    pub match_score: Option<f64>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// A link from a Price Paid transaction to a UPRN, from HM Land Registry's lookup.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = ppd_uprn_links)]
pub struct PpdUprnLinkRow {
    pub transaction_id: String,
    pub uprn: i64,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// One registered lease.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = leases)]
pub struct LeaseRow {
    pub unique_id: String,
    pub uprn: Option<i64>,
    pub tenure: Option<String>,
    pub register_description: Option<String>,
    pub county: Option<String>,
    pub region: Option<String>,
    pub associated_description_id: Option<String>,
    pub associated_description: Option<String>,
    pub price_paid: Option<i64>,
    pub reg_order: Option<String>,
    pub date_of_lease: Option<NaiveDate>,
    pub term_text: Option<String>,
    pub term_years: Option<i32>,
    pub term_less_days: Option<i32>,
    pub term_start: Option<NaiveDate>,
    pub term_end: Option<NaiveDate>,
    pub term_problem: Option<String>,
    pub alienation_clause: Option<bool>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// One entry of the council tax valuation list.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = council_tax)]
pub struct CouncilTaxRow {
    pub reference: String,
    pub billing_authority: Option<String>,
    pub address: String,
    pub postcode: Option<String>,
    pub band: String,
    pub uprn: Option<i64>,
    pub match_method: Option<String>,
    pub match_score: Option<f64>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

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

macro_rules! keyed_ops {
    ($row:ty, $table:ident, $key:ident, $kty:ty, $get:ident, $replace:ident, $delete:ident) => {
        /// The stored rows whose key is in `keys` (any order).
        pub async fn $get(db: &Db, keys: &[$kty]) -> StoreResult<Vec<$row>> {
            let mut out = Vec::with_capacity(keys.len());
            for k in keys.chunks(crate::bulk::CHUNK) {
                let part: Vec<$row> = with_conn!(db, |c| {
                    $table::table
                        .filter($table::$key.eq_any(k))
                        .select(<$row>::as_select())
                        .load(c)
                        .await?
                });
                out.extend(part);
            }
            Ok(out)
        }

        /// Writes `rows`, replacing any stored row with the same key, in one transaction.
        pub async fn $replace(db: &Db, rows: Vec<$row>) -> StoreResult<usize> {
            let keys: Vec<$kty> = rows.iter().map(|r| r.$key.clone()).collect();
            Ok(replace_rows!(db, $table::table, $table::$key, keys, rows))
        }

        /// Deletes the rows whose key is in `keys`; returns how many existed.
        pub async fn $delete(db: &Db, keys: &[$kty]) -> StoreResult<usize> {
            let mut n = 0;
            for k in keys.chunks(crate::bulk::CHUNK) {
                n += with_conn!(db, |c| {
                    diesel::delete($table::table.filter($table::$key.eq_any(k)))
                        .execute(c)
                        .await?
                });
            }
            Ok(n)
        }
    };
}

keyed_ops!(
    AddressRow,
    addresses,
    uprn,
    i64,
    addresses_by_uprn,
    replace_addresses,
    delete_addresses
);
keyed_ops!(
    PostcodeRow,
    postcodes,
    postcode,
    String,
    postcodes_by_key,
    replace_postcodes,
    delete_postcodes
);
keyed_ops!(
    BoundaryRow,
    boundaries,
    code,
    String,
    boundaries_by_code,
    replace_boundaries,
    delete_boundaries
);
keyed_ops!(
    EpcRow,
    epc_certificates,
    lmk_key,
    String,
    epc_by_key,
    replace_epc,
    delete_epc
);
keyed_ops!(
    PricePaidRow,
    price_paid,
    transaction_id,
    String,
    price_paid_by_id,
    replace_price_paid,
    delete_price_paid
);

keyed_ops!(
    PpdUprnLinkRow,
    ppd_uprn_links,
    transaction_id,
    String,
    ppd_links_by_id,
    replace_ppd_links,
    delete_ppd_links
);

keyed_ops!(
    LeaseRow,
    leases,
    unique_id,
    String,
    leases_by_id,
    replace_leases,
    delete_leases
);

/// The registered leases of a UPRN, most recent lease first.
pub async fn leases_for_uprn(db: &Db, uprn: i64) -> StoreResult<Vec<LeaseRow>> {
    Ok(with_conn!(db, |c| {
        leases::table
            .filter(leases::uprn.eq(uprn))
            .order((leases::date_of_lease.desc(), leases::unique_id))
            .select(LeaseRow::as_select())
            .load(c)
            .await?
    }))
}

keyed_ops!(
    CouncilTaxRow,
    council_tax,
    reference,
    String,
    council_tax_by_ref,
    replace_council_tax,
    delete_council_tax
);

/// The council tax entries linked to a UPRN.
pub async fn council_tax_for_uprn(db: &Db, uprn: i64) -> StoreResult<Vec<CouncilTaxRow>> {
    Ok(with_conn!(db, |c| {
        council_tax::table
            .filter(council_tax::uprn.eq(uprn))
            .order(council_tax::reference)
            .select(CouncilTaxRow::as_select())
            .load(c)
            .await?
    }))
}

/// The council tax entries at a postcode that no UPRN is linked to.
pub async fn unlinked_council_tax_at(db: &Db, postcode: &str) -> StoreResult<Vec<CouncilTaxRow>> {
    Ok(with_conn!(db, |c| {
        council_tax::table
            .filter(council_tax::postcode.eq(postcode))
            .filter(council_tax::uprn.is_null())
            .order(council_tax::reference)
            .select(CouncilTaxRow::as_select())
            .load(c)
            .await?
    }))
}

/// How many council tax entries are loaded (0 means the list is not loaded).
pub async fn council_tax_count(db: &Db) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| council_tax::table
        .count()
        .get_result(c)
        .await?))
}

/// The energy certificates of a UPRN, newest lodgement first.
pub async fn epc_for_uprn(db: &Db, uprn: i64) -> StoreResult<Vec<EpcRow>> {
    Ok(with_conn!(db, |c| {
        epc_certificates::table
            .filter(epc_certificates::uprn.eq(uprn))
            .order((
                epc_certificates::lodgement_date.desc(),
                epc_certificates::lmk_key.desc(),
            ))
            .select(EpcRow::as_select())
            .load(c)
            .await?
    }))
}

/// The units whose parent is `uprn` (the flats of a building), in UPRN order.
pub async fn children_of(db: &Db, uprn: i64) -> StoreResult<Vec<AddressRow>> {
    Ok(with_conn!(db, |c| {
        addresses::table
            .filter(addresses::parent_uprn.eq(uprn))
            .order(addresses::uprn)
            .select(AddressRow::as_select())
            .load(c)
            .await?
    }))
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

/// Appends events to the change log (ids increase in insertion order).
pub async fn append_events(db: &Db, events: Vec<NewEvent>) -> StoreResult<usize> {
    let mut n = 0;
    for e in events {
        n += with_conn!(db, |c| diesel::insert_into(listing_events::table)
            .values(&e)
            .execute(c)
            .await?);
    }
    Ok(n)
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

/// How many registered leases are loaded (0 means the dataset is not loaded).
pub async fn lease_count(db: &Db) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| leases::table
        .count()
        .get_result(c)
        .await?))
}

/// The registered sales matched to a UPRN, newest first (then by id), at most `limit`.
pub async fn sales_for_uprn(db: &Db, uprn: i64, limit: i64) -> StoreResult<Vec<PricePaidRow>> {
    Ok(with_conn!(db, |c| {
        price_paid::table
            .filter(price_paid::uprn.eq(uprn))
            .order((price_paid::date.desc(), price_paid::transaction_id.desc()))
            .limit(limit)
            .select(PricePaidRow::as_select())
            .load(c)
            .await?
    }))
}

crate::matchable_ops!(
    PricePaidRow,
    price_paid,
    transaction_id,
    unmatched_price_paid,
    set_price_paid_matches
);
crate::matchable_ops!(
    CouncilTaxRow,
    council_tax,
    reference,
    unmatched_council_tax,
    set_council_tax_matches
);

/// One address by UPRN.
pub async fn address(db: &Db, uprn: i64) -> StoreResult<Option<AddressRow>> {
    Ok(with_conn!(db, |c| {
        addresses::table
            .find(uprn)
            .select(AddressRow::as_select())
            .first(c)
            .await
            .optional()?
    }))
}

/// Every address at a canonical postcode.
pub async fn addresses_at_postcode(db: &Db, postcode: &str) -> StoreResult<Vec<AddressRow>> {
    Ok(with_conn!(db, |c| {
        addresses::table
            .filter(addresses::postcode.eq(postcode))
            .order(addresses::uprn)
            .select(AddressRow::as_select())
            .load(c)
            .await?
    }))
}

/// A page of the register in UPRN order after `after` (keyset pagination), for index builds.
pub async fn addresses_page(db: &Db, after: i64, limit: i64) -> StoreResult<Vec<AddressRow>> {
    Ok(with_conn!(db, |c| {
        addresses::table
            .filter(addresses::uprn.gt(after))
            .order(addresses::uprn)
            .limit(limit)
            .select(AddressRow::as_select())
            .load(c)
            .await?
    }))
}

pub async fn postcode(db: &Db, pc: &str) -> StoreResult<Option<PostcodeRow>> {
    Ok(with_conn!(db, |c| {
        postcodes::table
            .find(pc)
            .select(PostcodeRow::as_select())
            .first(c)
            .await
            .optional()?
    }))
}

pub async fn boundaries_of_kind(db: &Db, kind: &str) -> StoreResult<Vec<BoundaryRow>> {
    Ok(with_conn!(db, |c| {
        boundaries::table
            .filter(boundaries::kind.eq(kind))
            .order(boundaries::code)
            .select(BoundaryRow::as_select())
            .load(c)
            .await?
    }))
}

/// Row counts of the register tables, for status output and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RegisterCounts {
    pub addresses: i64,
    pub postcodes: i64,
    pub boundaries: i64,
    pub epc_certificates: i64,
    pub price_paid: i64,
}

pub async fn register_counts(db: &Db) -> StoreResult<RegisterCounts> {
    Ok(with_conn!(db, |c| {
        RegisterCounts {
            addresses: addresses::table.count().get_result(c).await?,
            postcodes: postcodes::table.count().get_result(c).await?,
            boundaries: boundaries::table.count().get_result(c).await?,
            epc_certificates: epc_certificates::table.count().get_result(c).await?,
            price_paid: price_paid::table.count().get_result(c).await?,
        }
    }))
}

pub async fn get_meta(db: &Db, key: &str) -> StoreResult<Option<String>> {
    Ok(with_conn!(db, |c| {
        meta::table
            .find(key)
            .select(meta::value)
            .first(c)
            .await
            .optional()?
    }))
}

pub async fn set_meta(db: &Db, key: &str, value: &str) -> StoreResult<()> {
    let row = MetaRow {
        key: key.to_string(),
        value: value.to_string(),
    };
    replace_rows!(db, meta::table, meta::key, [row.key.clone()], [row]);
    Ok(())
}

#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = meta)]
struct MetaRow {
    key: String,
    value: String,
}

/// One Local Housing Allowance rate: a BRMA's weekly rate for one category from one date.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = lha_rates)]
pub struct LhaRateRow {
    /// `brma|category|valid_from` (the date empty when the file gives none).
    pub rate_key: String,
    pub brma: String,
    pub brma_code: Option<String>,
    /// `shared`, `1`, `2`, `3` or `4`.
    pub category: String,
    pub weekly_rate_pence: i64,
    pub valid_from: Option<NaiveDate>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// One postcode unit, sector or district a broad rental market area covers.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = brma_areas)]
pub struct BrmaAreaRow {
    /// `area|brma`.
    pub area_key: String,
    /// A canonical postcode (`EX1 1AA`), sector (`EX1 1`) or district (`EX1`).
    pub area: String,
    /// `unit`, `sector` or `district`.
    pub area_kind: String,
    pub brma: String,
    pub brma_code: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    LhaRateRow,
    lha_rates,
    rate_key,
    String,
    lha_rates_by_key,
    replace_lha_rates,
    delete_lha_rates
);
keyed_ops!(
    BrmaAreaRow,
    brma_areas,
    area_key,
    String,
    brma_areas_by_key,
    replace_brma_areas,
    delete_brma_areas
);

/// The BRMA entries for any of `areas` (postcode units, sectors or districts).
pub async fn brmas_for_areas(db: &Db, areas: &[String]) -> StoreResult<Vec<BrmaAreaRow>> {
    Ok(with_conn!(db, |c| {
        brma_areas::table
            .filter(brma_areas::area.eq_any(areas))
            .order(brma_areas::area_key)
            .select(BrmaAreaRow::as_select())
            .load(c)
            .await?
    }))
}

/// Every LHA rate of a BRMA, any date.
pub async fn lha_rates_for(db: &Db, brma: &str) -> StoreResult<Vec<LhaRateRow>> {
    Ok(with_conn!(db, |c| {
        lha_rates::table
            .filter(lha_rates::brma.eq(brma))
            .order(lha_rates::rate_key)
            .select(LhaRateRow::as_select())
            .load(c)
            .await?
    }))
}
