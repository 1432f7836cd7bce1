//! VOA non-domestic rating list entries (the 2010, 2017, 2023 and 2026 lists) and the UARN to
//! UPRN links.

use crate::db::{Db, StoreResult};
use crate::schema::{
    commercial_rent_index, commercial_stock, postcodes, rating_list_entries, summary_valuations,
    uarn_uprn_links,
};
use crate::{keyed_ops, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// One rating list entry: the entry of one UARN in one list.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = rating_list_entries)]
pub struct RatingEntryRow {
    /// `<list_year>:<uarn>`.
    pub entry_key: String,
    pub list_year: i32,
    pub uarn: i64,
    pub billing_authority: Option<String>,
    pub ba_reference: Option<String>,
    pub description_code: Option<String>,
    pub description_text: Option<String>,
    pub scat_code: Option<String>,
    pub firm_name: Option<String>,
    pub address: String,
    pub postcode: Option<String>,
    pub rateable_value: Option<i64>,
    pub effective_date: NaiveDate,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// A UARN's link to a UPRN and how it was made.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = uarn_uprn_links)]
pub struct UarnLinkRow {
    pub uarn: i64,
    pub uprn: i64,
    pub match_method: String,
    pub match_score: Option<f64>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    RatingEntryRow,
    rating_list_entries,
    entry_key,
    String,
    entries_by_key,
    replace_entries
);

/// The entries of a UARN, one per list, oldest list first.
pub async fn entries_for_uarn(db: &Db, uarn: i64) -> StoreResult<Vec<RatingEntryRow>> {
    Ok(with_conn!(db, |c| {
        rating_list_entries::table
            .filter(rating_list_entries::uarn.eq(uarn))
            .order(rating_list_entries::list_year)
            .select(RatingEntryRow::as_select())
            .load(c)
            .await?
    }))
}

/// The rateable values of the entries with this description code in this billing authority, by
/// list (list_year, rateable value), for the sector rent index.
pub async fn sector_values(
    db: &Db,
    description_code: &str,
    billing_authority: &str,
) -> StoreResult<Vec<(i32, Option<i64>)>> {
    Ok(with_conn!(db, |c| {
        rating_list_entries::table
            .filter(rating_list_entries::description_code.eq(description_code))
            .filter(rating_list_entries::billing_authority.eq(billing_authority))
            .order((
                rating_list_entries::list_year,
                rating_list_entries::entry_key,
            ))
            .select((
                rating_list_entries::list_year,
                rating_list_entries::rateable_value,
            ))
            .load(c)
            .await?
    }))
}

/// Which of `years` have a row in `$table` (one indexed probe on `$table.list_year` per list,
/// never a count of the lists).
macro_rules! lists_holding {
    ($db:expr, $years:expr, $table:ident) => {{
        let mut out = Vec::new();
        for &y in $years {
            let hit: Option<i32> = with_conn!($db, |c| {
                $table::table
                    .filter($table::list_year.eq(y))
                    .select($table::list_year)
                    .first(c)
                    .await
                    .optional()?
            });
            out.extend(hit);
        }
        Ok(out)
    }};
}

/// Which of `years` hold any entry.
pub async fn lists_with_entries(db: &Db, years: &[i32]) -> StoreResult<Vec<i32>> {
    lists_holding!(db, years, rating_list_entries)
}

/// The newest entry of each UARN with no link yet, after `after` in UARN order (keyset pages),
/// for address matching.
pub async fn unlinked_entries(db: &Db, after: i64, limit: i64) -> StoreResult<Vec<RatingEntryRow>> {
    Ok(with_conn!(db, |c| {
        rating_list_entries::table
            .filter(rating_list_entries::uarn.gt(after))
            .filter(diesel::dsl::not(diesel::dsl::exists(
                uarn_uprn_links::table.filter(uarn_uprn_links::uarn.eq(rating_list_entries::uarn)),
            )))
            .order((
                rating_list_entries::uarn,
                rating_list_entries::list_year.desc(),
            ))
            .limit(limit)
            .select(RatingEntryRow::as_select())
            .load(c)
            .await?
    }))
}

keyed_ops!(
    UarnLinkRow,
    uarn_uprn_links,
    uarn,
    i64,
    links_by_uarn,
    replace_links
);

/// The UARNs linked to a UPRN, in UARN order.
pub async fn links_for_uprn(db: &Db, uprn: i64) -> StoreResult<Vec<UarnLinkRow>> {
    Ok(with_conn!(db, |c| {
        uarn_uprn_links::table
            .filter(uarn_uprn_links::uprn.eq(uprn))
            .order(uarn_uprn_links::uarn)
            .select(UarnLinkRow::as_select())
            .load(c)
            .await?
    }))
}

/// One entry reduced to what the rent index reads: (list year, UARN, description code, rateable
/// value).
pub type IndexEntry = (i32, i64, Option<String>, Option<i64>);

/// Every entry of every list (or of the entries whose postcode lies in local authority `lad`),
/// by list and UARN, for the rent index and the rated stock.
pub async fn index_entries(db: &Db, lad: Option<&str>) -> StoreResult<Vec<IndexEntry>> {
    let lad = lad.map(str::to_string);
    Ok(with_conn!(db, |c| {
        let mut q = rating_list_entries::table
            .order((rating_list_entries::list_year, rating_list_entries::uarn))
            .select((
                rating_list_entries::list_year,
                rating_list_entries::uarn,
                rating_list_entries::description_code,
                rating_list_entries::rateable_value,
            ))
            .into_boxed();
        if let Some(l) = lad.clone() {
            q = q.filter(
                rating_list_entries::postcode.eq_any(
                    postcodes::table
                        .filter(postcodes::lad_code.eq(l))
                        .select(postcodes::postcode.nullable()),
                ),
            );
        }
        q.load(c).await?
    }))
}

/// One entry of the commercial stock (`commercial_stock`): an entry of the newest loaded list
/// placed in its local authority with its sector, as the commercial rent index build wrote it.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = commercial_stock)]
pub struct StockRow {
    pub uarn: i64,
    pub lad_code: String,
    /// The sector's API name (`OFFICE`, `RETAIL`, ...; never `ALL`).
    pub sector: String,
    pub list_year: i32,
    pub rateable_value: Option<i64>,
    pub updated_at: NaiveDateTime,
}

/// Replaces the whole commercial stock with `rows` in one transaction (an authority no longer
/// placed is removed). Returns rows written.
pub async fn replace_stock(db: &Db, rows: Vec<StockRow>) -> StoreResult<usize> {
    Ok(crate::replace_series!(db, commercial_stock, lad_code, rows))
}

/// The list the commercial stock was built from (null when the build wrote none).
pub async fn stock_list_year(db: &Db) -> StoreResult<Option<i32>> {
    Ok(with_conn!(db, |c| {
        commercial_stock::table
            .select(commercial_stock::list_year)
            .first(c)
            .await
            .optional()?
    }))
}

/// A query of the commercial stock of one local authority: the sector (`None`: every sector),
/// the UARN after which the page starts, and rateable value bounds (inclusive; an entry without
/// a rateable value is outside any bound).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StockQuery {
    pub lad_code: String,
    pub sector: Option<String>,
    pub after: i64,
    pub min_rateable_value: Option<i64>,
    pub max_rateable_value: Option<i64>,
}

/// The first `limit` UARNs of the stock matching `q`, in UARN order: one range of
/// `commercial_stock_sector_idx` (or `_lad_idx` for every sector), whatever the list's size.
pub async fn stock_page(db: &Db, q: &StockQuery, limit: i64) -> StoreResult<Vec<i64>> {
    let q = q.clone();
    Ok(with_conn!(db, |c| {
        let mut s = commercial_stock::table
            .filter(commercial_stock::lad_code.eq(q.lad_code.clone()))
            .filter(commercial_stock::uarn.gt(q.after))
            .select(commercial_stock::uarn)
            .order(commercial_stock::uarn)
            .limit(limit)
            .into_boxed();
        if let Some(sector) = q.sector.clone() {
            s = s.filter(commercial_stock::sector.eq(sector));
        }
        if let Some(lo) = q.min_rateable_value {
            s = s.filter(commercial_stock::rateable_value.ge(lo));
        }
        if let Some(hi) = q.max_rateable_value {
            s = s.filter(commercial_stock::rateable_value.le(hi));
        }
        s.load(c).await?
    }))
}

/// The entries of these UARNs in every list, by UARN and list.
pub async fn entries_for_uarns(db: &Db, uarns: &[i64]) -> StoreResult<Vec<RatingEntryRow>> {
    let mut out = Vec::new();
    for k in uarns.chunks(crate::bulk::CHUNK) {
        let k = k.to_vec();
        let part: Vec<RatingEntryRow> = with_conn!(db, |c| {
            rating_list_entries::table
                .filter(rating_list_entries::uarn.eq_any(k.clone()))
                .select(RatingEntryRow::as_select())
                .load(c)
                .await?
        });
        out.extend(part);
    }
    out.sort_by_key(|e| (e.uarn, e.list_year));
    Ok(out)
}

/// One summary valuation: the measured floor area of a UARN in a list.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = summary_valuations)]
pub struct SummaryValuationRow {
    /// `<list_year>:<uarn>`.
    pub valuation_key: String,
    pub list_year: i32,
    pub uarn: i64,
    pub assessment_reference: Option<String>,
    pub scheme_reference: Option<String>,
    /// `NIA`, `GIA`, `GEA`, `EFA`, `RCA` (area bases) or another unit (`OTH`, ...).
    pub unit_of_measurement: Option<String>,
    /// `Total Area` as the file writes it (a count of units on a non-area basis).
    pub total_area: Option<f64>,
    /// Square metres: set only on an area basis.
    pub floor_area_m2: Option<f64>,
    /// The survey unit rate, pounds per unit.
    pub unadjusted_price: Option<f64>,
    pub adopted_rv: Option<i64>,
    /// How many `02` floor-area lines the valuation has.
    pub floor_lines: i32,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    SummaryValuationRow,
    summary_valuations,
    valuation_key,
    String,
    valuations_by_key,
    replace_valuations
);

/// The measured floor areas (square metres) of these UARNs: (list_year, uarn, area), area basis
/// only.
pub async fn floor_areas_for_uarns(db: &Db, uarns: &[i64]) -> StoreResult<Vec<(i32, i64, f64)>> {
    let mut out = Vec::new();
    for k in uarns.chunks(crate::bulk::CHUNK) {
        let k = k.to_vec();
        let rows: Vec<(i32, i64, Option<f64>)> = with_conn!(db, |c| {
            summary_valuations::table
                .filter(summary_valuations::uarn.eq_any(k.clone()))
                .filter(summary_valuations::floor_area_m2.is_not_null())
                .order((summary_valuations::uarn, summary_valuations::list_year))
                .select((
                    summary_valuations::list_year,
                    summary_valuations::uarn,
                    summary_valuations::floor_area_m2,
                ))
                .load(c)
                .await?
        });
        out.extend(
            rows.into_iter()
                .filter_map(|(y, u, a)| a.map(|a| (y, u, a))),
        );
    }
    Ok(out)
}

/// Every measured floor area (square metres): (list_year, uarn, area), area basis only, for the
/// indices (joined to the entries in memory).
pub async fn floor_areas(db: &Db) -> StoreResult<Vec<(i32, i64, f64)>> {
    let rows: Vec<(i32, i64, Option<f64>)> = with_conn!(db, |c| {
        summary_valuations::table
            .filter(summary_valuations::floor_area_m2.is_not_null())
            .order((summary_valuations::list_year, summary_valuations::uarn))
            .select((
                summary_valuations::list_year,
                summary_valuations::uarn,
                summary_valuations::floor_area_m2,
            ))
            .load(c)
            .await?
    });
    Ok(rows
        .into_iter()
        .filter_map(|(y, u, a)| a.map(|a| (y, u, a)))
        .collect())
}

/// Which of `years` hold any summary valuation.
pub async fn lists_with_valuations(db: &Db, years: &[i32]) -> StoreResult<Vec<i32>> {
    lists_holding!(db, years, summary_valuations)
}

/// One list's point of one series of the commercial rent index, as the derived build writes it
/// (`commercial_rent_index`): the chain's point and, where the list's summary valuations are
/// loaded, its rateable value per square metre.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = commercial_rent_index)]
pub struct RentPointRow {
    /// `series_key|list_year`.
    pub point_key: String,
    /// `area_code|sector`.
    pub series_key: String,
    /// `national` or a local authority GSS code.
    pub area_code: String,
    pub sector: String,
    pub list_year: i32,
    /// 2010 list = 100; null when the chain to this list is broken (`reason`).
    pub index_level: Option<f64>,
    pub link_ratio: Option<f64>,
    pub n_constant: Option<i64>,
    pub n_entries: i64,
    pub median_rateable_value: Option<i64>,
    pub reason: Option<String>,
    /// Whether the list's summary valuations are loaded (the per-square-metre point exists).
    pub measured: bool,
    pub n_measured: Option<i64>,
    pub median_rv_per_m2: Option<f64>,
    pub updated_at: NaiveDateTime,
}

/// An entry as the rent index build reads it, with its postcode's local authority.
type PlacedEntry = (i32, i64, Option<String>, Option<i64>, Option<String>);

/// Every entry of every list with the local authority its postcode lies in (null when the
/// postcode directory does not place it), for the rent index build.
pub async fn entries_with_lads(db: &Db) -> StoreResult<Vec<(IndexEntry, Option<String>)>> {
    let rows: Vec<PlacedEntry> = with_conn!(db, |c| {
        rating_list_entries::table
            .left_join(
                postcodes::table.on(postcodes::postcode
                    .nullable()
                    .eq(rating_list_entries::postcode)),
            )
            .select((
                rating_list_entries::list_year,
                rating_list_entries::uarn,
                rating_list_entries::description_code,
                rating_list_entries::rateable_value,
                postcodes::lad_code.nullable(),
            ))
            .load(c)
            .await?
    });
    Ok(rows
        .into_iter()
        .map(|(y, u, code, rv, lad)| ((y, u, code, rv), lad))
        .collect())
}

/// Replaces the whole rent index with `rows` in one transaction (a series the build no longer
/// produces is removed). Returns rows written.
pub async fn replace_rent_index(db: &Db, rows: Vec<RentPointRow>) -> StoreResult<usize> {
    Ok(crate::replace_series!(
        db,
        commercial_rent_index,
        series_key,
        rows
    ))
}

/// The points of one rent index series, oldest list first (empty when the build wrote none).
pub async fn rent_series(db: &Db, series_key: &str) -> StoreResult<Vec<RentPointRow>> {
    let key = series_key.to_string();
    Ok(with_conn!(db, |c| {
        commercial_rent_index::table
            .filter(commercial_rent_index::series_key.eq(key.clone()))
            .order(commercial_rent_index::list_year)
            .select(RentPointRow::as_select())
            .load(c)
            .await?
    }))
}
