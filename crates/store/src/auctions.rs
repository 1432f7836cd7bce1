//! The operator's auction lot feed: one row per lot per auction (`auction_lots`), with the UPRN the
//! feed gave or the address matcher found (score kept; unmatched lots stay, with a null UPRN)
//! and the `property_key` that links the offers of one property across auctions.

use crate::db::{Db, StoreResult};
use crate::schema::auction_lots;
use crate::{execute_all, keyed_ops, matchable_ops, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// One lot of one auction.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = auction_lots)]
pub struct LotRow {
    /// `house|YYYY-MM-DD|lot number`.
    pub lot_key: String,
    pub auction_house: String,
    pub auction_date: NaiveDate,
    pub lot_number: String,
    pub address: String,
    pub postcode: Option<String>,
    /// The postcode's outward code.
    pub district: Option<String>,
    /// `residential`, `commercial`, `land`, `ground_rent` or `mixed`.
    pub lot_type: String,
    pub tenure: Option<String>,
    pub lease_years_remaining: Option<i32>,
    pub vacant: Option<bool>,
    pub rent_passing_pa: Option<i64>,
    pub guide_low: Option<i64>,
    /// Null with a low: a `£X+` guide.
    pub guide_high: Option<i64>,
    /// `sold`, `unsold`, `withdrawn`, `sold_prior`, `sold_after`, `postponed` or `unknown`.
    pub outcome: String,
    /// Null: not disclosed (or no sale: see `outcome`).
    pub hammer_price: Option<i64>,
    pub net_initial_yield_pct: Option<f64>,
    pub source_url: Option<String>,
    pub description: Option<String>,
    pub uprn: Option<i64>,
    /// `feed` or `address_matcher`.
    pub match_method: Option<String>,
    pub match_score: Option<f64>,
    /// The normalised address and postcode the re-offer link compares.
    pub address_key: String,
    /// The offers of one property share it (set by the derive step).
    pub property_key: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    LotRow,
    auction_lots,
    lot_key,
    String,
    lots_by_key,
    replace_lots
);
matchable_ops!(
    LotRow,
    auction_lots,
    lot_key,
    unmatched_lots,
    set_lot_matches
);

/// The outcomes that are a sale.
pub const SOLD: [&str; 3] = ["sold", "sold_prior", "sold_after"];

/// Whether any lot is stored (0 rows: no feed loaded), without counting them.
pub async fn any_lot(db: &Db) -> StoreResult<bool> {
    let hit: Option<String> = with_conn!(db, |c| auction_lots::table
        .select(auction_lots::lot_key)
        .first(c)
        .await
        .optional()?);
    Ok(hit.is_some())
}

/// One auction house's extent in the store: (house, first auction, last auction, lots).
pub type HouseCoverage = (String, Option<NaiveDate>, Option<NaiveDate>, i64);

/// The houses the feed covers, with the period each covers and its lots, by house.
pub async fn coverage(db: &Db) -> StoreResult<Vec<HouseCoverage>> {
    Ok(with_conn!(db, |c| auction_lots::table
        .group_by(auction_lots::auction_house)
        .select((
            auction_lots::auction_house,
            diesel::dsl::min(auction_lots::auction_date),
            diesel::dsl::max(auction_lots::auction_date),
            diesel::dsl::count_star(),
        ))
        .order(auction_lots::auction_house)
        .load(c)
        .await?))
}

/// Which lots a read selects; every field optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LotFilter {
    pub date_from: Option<NaiveDate>,
    pub date_to: Option<NaiveDate>,
    pub sold_only: bool,
    pub auction_house: Option<String>,
    pub with_achieved_price: bool,
    pub with_yield: bool,
    pub district: Option<String>,
    pub lot_types: Option<Vec<String>>,
    pub uprn: Option<i64>,
}

macro_rules! filtered {
    ($q:expr, $f:expr) => {{
        let f: &LotFilter = $f;
        let mut q = $q;
        if let Some(d) = f.date_from {
            q = q.filter(auction_lots::auction_date.ge(d));
        }
        if let Some(d) = f.date_to {
            q = q.filter(auction_lots::auction_date.le(d));
        }
        if f.sold_only {
            q = q.filter(auction_lots::outcome.eq_any(SOLD));
        }
        if let Some(h) = &f.auction_house {
            q = q.filter(auction_lots::auction_house.eq(h.clone()));
        }
        if f.with_achieved_price {
            q = q.filter(auction_lots::hammer_price.is_not_null());
        }
        if f.with_yield {
            q = q.filter(auction_lots::net_initial_yield_pct.is_not_null());
        }
        if let Some(d) = &f.district {
            q = q.filter(auction_lots::district.eq(d.clone()));
        }
        if let Some(t) = &f.lot_types {
            q = q.filter(auction_lots::lot_type.eq_any(t.clone()));
        }
        if let Some(u) = f.uprn {
            q = q.filter(auction_lots::uprn.eq(u));
        }
        q
    }};
}

/// A page of lots, newest auction first (ties by lot key, descending), after the key
/// `(auction_date, lot_key)` of the previous page's last lot.
pub async fn lots_page(
    db: &Db,
    f: &LotFilter,
    after: Option<(NaiveDate, String)>,
    limit: i64,
) -> StoreResult<Vec<LotRow>> {
    Ok(with_conn!(db, |c| {
        let mut q = filtered!(
            auction_lots::table
                .select(LotRow::as_select())
                .order((
                    auction_lots::auction_date.desc(),
                    auction_lots::lot_key.desc()
                ))
                .limit(limit)
                .into_boxed(),
            f
        );
        if let Some((d, k)) = &after {
            q = q.filter(
                auction_lots::auction_date
                    .lt(*d)
                    .or(auction_lots::auction_date
                        .eq(*d)
                        .and(auction_lots::lot_key.lt(k.clone()))),
            );
        }
        q.load(c).await?
    }))
}

/// Every lot the filter selects, oldest auction first (ties by lot key).
pub async fn lots_where(db: &Db, f: &LotFilter) -> StoreResult<Vec<LotRow>> {
    Ok(with_conn!(db, |c| {
        filtered!(
            auction_lots::table
                .select(LotRow::as_select())
                .order((auction_lots::auction_date, auction_lots::lot_key))
                .into_boxed(),
            f
        )
        .load(c)
        .await?
    }))
}

/// The figures of a lot the quarterly statistics read (the lot's text is not read: a district's
/// thousands of lots are read on every statistics call).
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = auction_lots)]
pub struct LotFigures {
    pub auction_date: NaiveDate,
    pub district: Option<String>,
    pub lot_type: String,
    pub outcome: String,
    pub guide_low: Option<i64>,
    pub guide_high: Option<i64>,
    pub hammer_price: Option<i64>,
    pub net_initial_yield_pct: Option<f64>,
}

/// The figures of every lot the filter selects, oldest auction first (ties by lot key).
pub async fn lot_figures_where(db: &Db, f: &LotFilter) -> StoreResult<Vec<LotFigures>> {
    Ok(with_conn!(db, |c| {
        filtered!(
            auction_lots::table
                .select(LotFigures::as_select())
                .order((auction_lots::auction_date, auction_lots::lot_key))
                .into_boxed(),
            f
        )
        .load(c)
        .await?
    }))
}

/// A reader of every lot whose `$column` is one of the keys, oldest auction first (ties by lot
/// key), in chunks of the bulk size.
macro_rules! lots_by {
    ($(#[$doc:meta])* $name:ident, $column:ident, $kty:ty) => {
        $(#[$doc])*
        pub async fn $name(db: &Db, keys: &[$kty]) -> StoreResult<Vec<LotRow>> {
            let mut out = Vec::new();
            for k in keys.chunks(crate::bulk::CHUNK) {
                let part: Vec<LotRow> = with_conn!(db, |c| auction_lots::table
                    .filter(auction_lots::$column.eq_any(k))
                    .select(LotRow::as_select())
                    .order((auction_lots::auction_date, auction_lots::lot_key))
                    .load(c)
                    .await?);
                out.extend(part);
            }
            Ok(out)
        }
    };
}

lots_by!(
    /// Every lot of the given property keys, oldest auction first (ties by lot key).
    lots_of_properties,
    property_key,
    String
);
lots_by!(
    /// Every lot of the given UPRNs, oldest auction first (ties by lot key).
    lots_of_uprns,
    uprn,
    i64
);

/// What the re-offer link reads of a lot: (lot key, UPRN, address key, property key).
pub type LinkRow = (String, Option<i64>, String, Option<String>);

/// A page of lots' link fields in key order after `after`.
pub async fn link_rows(db: &Db, after: &str, limit: i64) -> StoreResult<Vec<LinkRow>> {
    Ok(with_conn!(db, |c| auction_lots::table
        .filter(auction_lots::lot_key.gt(after))
        .order(auction_lots::lot_key)
        .limit(limit)
        .select((
            auction_lots::lot_key,
            auction_lots::uprn,
            auction_lots::address_key,
            auction_lots::property_key,
        ))
        .load(c)
        .await?))
}

/// Sets the property key of many lots in one transaction: (lot key, property key).
pub async fn set_property_keys(db: &Db, keys: Vec<(String, String)>) -> StoreResult<usize> {
    if keys.is_empty() {
        return Ok(0);
    }
    Ok(execute_all!(db, keys, |k| diesel::update(
        auction_lots::table.find(&k.0)
    )
    .set(auction_lots::property_key.eq(Some(&k.1)))))
}
