//! HM Land Registry Price Paid transactions (registered sales) and their links to UPRNs from
//! HM Land Registry's lookup.
//!
//! Invariants: a sale's key is its `transaction_id`; its `uprn`, `match_method` and
//! `match_score` are set only by the address matcher (`set_price_paid_matches`) or from a link
//! in `ppd_uprn_links`.

use crate::db::{Db, StoreResult};
use crate::schema::{ppd_uprn_links, price_paid};
use crate::{keyed_ops, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

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

/// The registered sales matched to any of the UPRNs, by UPRN then date.
pub async fn sales_for_uprns(db: &Db, uprns: &[i64]) -> StoreResult<Vec<PricePaidRow>> {
    let mut out = Vec::new();
    for k in uprns.chunks(crate::bulk::CHUNK) {
        let part: Vec<PricePaidRow> = with_conn!(db, |c| {
            price_paid::table
                .filter(price_paid::uprn.eq_any(k))
                .order((
                    price_paid::uprn,
                    price_paid::date,
                    price_paid::transaction_id,
                ))
                .select(PricePaidRow::as_select())
                .load(c)
                .await?
        });
        out.extend(part);
    }
    Ok(out)
}

crate::matchable_ops!(
    PricePaidRow,
    price_paid,
    transaction_id,
    unmatched_price_paid,
    set_price_paid_matches
);

/// A registered sale as the area statistics read it.
#[derive(Debug, Clone, PartialEq, Queryable)]
pub struct AreaSale {
    pub date: NaiveDate,
    pub price: i64,
    /// Price Paid code `D`, `S`, `T`, `F` or `O`.
    pub property_type: String,
    pub uprn: Option<i64>,
}

/// The category A sales completed between two days (inclusive) in an area (a postcode prefix,
/// a local authority by the postcode directory, or everywhere), by date then id.
pub async fn category_a_sales_in_area(
    db: &Db,
    area: &crate::listings::ListingArea,
    from: NaiveDate,
    to: NaiveDate,
) -> StoreResult<Vec<AreaSale>> {
    use crate::listings::ListingArea;
    let cols = (
        price_paid::date,
        price_paid::price,
        price_paid::property_type,
        price_paid::uprn,
    );
    // The category A sales completed in the period, of whatever `$q` narrows the table to.
    macro_rules! completed_a {
        ($q:expr) => {
            $q.filter(price_paid::ppd_category.eq("A"))
                .filter(price_paid::date.ge(from))
                .filter(price_paid::date.le(to))
                .select(cols)
        };
    }
    let mut out: Vec<AreaSale> = match area {
        ListingArea::National => with_conn!(db, |c| {
            completed_a!(price_paid::table).load::<AreaSale>(c).await?
        }),
        ListingArea::PostcodePrefix(p) => {
            let pattern = ListingArea::pattern(p);
            with_conn!(db, |c| {
                completed_a!(price_paid::table.filter(price_paid::postcode.like(&pattern)))
                    .load::<AreaSale>(c)
                    .await?
            })
        }
        ListingArea::LocalAuthority(code) => {
            let pcs = ListingArea::lad_postcodes(db, code).await?;
            let mut out = Vec::new();
            for k in pcs.chunks(crate::bulk::CHUNK) {
                let part: Vec<AreaSale> = with_conn!(db, |c| {
                    completed_a!(price_paid::table.filter(price_paid::postcode.eq_any(k)))
                        .load::<AreaSale>(c)
                        .await?
                });
                out.extend(part);
            }
            out
        }
    };
    out.sort_by_key(|s| s.date);
    Ok(out)
}

/// The latest completion date of any registered sale (`None` when none is loaded).
pub async fn latest_sale_date(db: &Db) -> StoreResult<Option<NaiveDate>> {
    Ok(with_conn!(db, |c| price_paid::table
        .select(diesel::dsl::max(price_paid::date))
        .first(c)
        .await?))
}
