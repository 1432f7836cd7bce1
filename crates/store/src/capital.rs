//! The commercial capital index: the Price Paid sales of non-residential property it is built
//! from (category B, property type `O`), the sold auction lots it also pairs (the CCOD/OCOD
//! observations are read through `titles`), the facts that place and classify them (the
//! address's local authority, the postcode's, the rating-list UARN linked to the UPRN), and the
//! quarterly levels the derived build writes (`commercial_capital_index`).
//!
//! Invariant: the build replaces every series at once; a series it no longer produces is removed.

use crate::db::{Db, StoreResult};
use crate::schema::{
    addresses, auction_lots, commercial_capital_index, postcodes, price_paid, uarn_uprn_links,
};
use crate::with_conn;
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// A registered sale of non-residential property, as the capital index reads it.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = price_paid)]
pub struct CommercialSaleRow {
    pub transaction_id: String,
    pub price: i64,
    pub date: NaiveDate,
    pub postcode: Option<String>,
    pub paon: Option<String>,
    pub saon: Option<String>,
    pub street: Option<String>,
    pub uprn: Option<i64>,
    pub source: String,
}

/// Every Price Paid sale of category B with property type `O` (Other: the non-residential
/// transfers within Price Paid), by transaction id.
pub async fn commercial_sales(db: &Db) -> StoreResult<Vec<CommercialSaleRow>> {
    Ok(with_conn!(db, |c| {
        price_paid::table
            .filter(price_paid::ppd_category.eq("B"))
            .filter(price_paid::property_type.eq("O"))
            .order(price_paid::transaction_id)
            .select(CommercialSaleRow::as_select())
            .load(c)
            .await?
    }))
}

/// A sold auction lot with a price, linked to a UPRN, as the capital index reads it.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = auction_lots)]
pub struct SoldLotRow {
    pub lot_key: String,
    pub auction_date: NaiveDate,
    pub hammer_price: Option<i64>,
    pub uprn: Option<i64>,
    pub postcode: Option<String>,
    pub tenure: Option<String>,
}

/// Every lot sold (`sold`, `sold_prior`, `sold_after`) with a disclosed price and a UPRN, oldest
/// auction first (ties by lot key).
pub async fn sold_lots_with_uprn(db: &Db) -> StoreResult<Vec<SoldLotRow>> {
    Ok(with_conn!(db, |c| {
        auction_lots::table
            .filter(auction_lots::outcome.eq_any(crate::auctions::SOLD))
            .filter(auction_lots::hammer_price.is_not_null())
            .filter(auction_lots::uprn.is_not_null())
            .order((auction_lots::auction_date, auction_lots::lot_key))
            .select(SoldLotRow::as_select())
            .load(c)
            .await?
    }))
}

/// The local authority of each of these UPRNs that has one in the address register.
pub async fn lads_of_uprns(db: &Db, uprns: &[i64]) -> StoreResult<Vec<(i64, String)>> {
    let mut out = Vec::new();
    for k in uprns.chunks(crate::bulk::CHUNK) {
        let part: Vec<(i64, Option<String>)> = with_conn!(db, |c| {
            addresses::table
                .filter(addresses::uprn.eq_any(k))
                .select((addresses::uprn, addresses::lad_code))
                .load(c)
                .await?
        });
        out.extend(part.into_iter().filter_map(|(u, l)| Some((u, l?))));
    }
    Ok(out)
}

/// The local authority of each of these postcodes the postcode directory places.
pub async fn lads_of_postcodes(db: &Db, pcs: &[String]) -> StoreResult<Vec<(String, String)>> {
    let mut out = Vec::new();
    for k in pcs.chunks(crate::bulk::CHUNK) {
        let part: Vec<(String, Option<String>)> = with_conn!(db, |c| {
            postcodes::table
                .filter(postcodes::postcode.eq_any(k))
                .select((postcodes::postcode, postcodes::lad_code))
                .load(c)
                .await?
        });
        out.extend(part.into_iter().filter_map(|(p, l)| Some((p, l?))));
    }
    Ok(out)
}

/// The (UPRN, UARN) links of these UPRNs, by UPRN then UARN.
pub async fn uarns_of_uprns(db: &Db, uprns: &[i64]) -> StoreResult<Vec<(i64, i64)>> {
    let mut out = Vec::new();
    for k in uprns.chunks(crate::bulk::CHUNK) {
        let part: Vec<(i64, i64)> = with_conn!(db, |c| {
            uarn_uprn_links::table
                .filter(uarn_uprn_links::uprn.eq_any(k))
                .order((uarn_uprn_links::uprn, uarn_uprn_links::uarn))
                .select((uarn_uprn_links::uprn, uarn_uprn_links::uarn))
                .load(c)
                .await?
        });
        out.extend(part);
    }
    Ok(out)
}

/// One quarter of one series of the capital index.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = commercial_capital_index)]
pub struct CapitalPointRow {
    /// `series_key|quarter`.
    pub point_key: String,
    /// `area_code|sector`.
    pub series_key: String,
    /// `national` or a local authority GSS code.
    pub area_code: String,
    /// The sector name (`ALL`, `OFFICE`, ...).
    pub sector: String,
    /// `YYYYQn`.
    pub quarter: String,
    /// Base quarter = 100; null where the quarter is withheld or not estimated.
    pub level: Option<f64>,
    pub log_se: Option<f64>,
    /// Pairs with either sale in the quarter.
    pub n_pairs: i64,
    /// Pairs behind the whole series.
    pub series_pairs: i64,
    /// The quarter whose level is 100; null when the series is withheld.
    pub base_quarter: Option<String>,
    /// Why the level is null, when it is.
    pub withheld: Option<String>,
    /// The pairs of the series by source, `source:count` comma-separated
    /// (`hmlr_price_paid_category_b_other:12,hmlr_ccod_snapshots:3`).
    pub pair_sources: String,
    pub source: String,
    pub updated_at: NaiveDateTime,
    /// The weight of the series' own estimate in this quarter when the series is shrunk toward
    /// its parent; null when it is not shrunk.
    pub own_weight: Option<f64>,
}

/// Replaces the whole capital index with `rows` in one transaction. Returns rows written.
pub async fn replace_capital_index(db: &Db, rows: Vec<CapitalPointRow>) -> StoreResult<usize> {
    Ok(crate::replace_series!(
        db,
        commercial_capital_index,
        series_key,
        rows
    ))
}

/// The quarters of one series, oldest first (empty when the build wrote no such series).
pub async fn capital_series(db: &Db, series_key: &str) -> StoreResult<Vec<CapitalPointRow>> {
    let key = series_key.to_string();
    Ok(with_conn!(db, |c| {
        commercial_capital_index::table
            .filter(commercial_capital_index::series_key.eq(key.clone()))
            .order(commercial_capital_index::quarter)
            .select(CapitalPointRow::as_select())
            .load(c)
            .await?
    }))
}

/// How many quarters the capital index holds over every series (0 when none was built).
pub async fn capital_point_count(db: &Db) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| {
        commercial_capital_index::table
            .count()
            .get_result::<i64>(c)
            .await?
    }))
}
