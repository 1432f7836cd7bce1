//! VOA non-domestic rating list entries (the 2010, 2017, 2023 and 2026 lists) and the UARN to
//! UPRN links.

use crate::db::{Db, StoreResult};
use crate::schema::{rating_list_entries, uarn_uprn_links};
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

/// How many entries each list holds: (list_year, entries), oldest list first.
pub async fn list_counts(db: &Db) -> StoreResult<Vec<(i32, i64)>> {
    Ok(with_conn!(db, |c| {
        rating_list_entries::table
            .group_by(rating_list_entries::list_year)
            .order(rating_list_entries::list_year)
            .select((rating_list_entries::list_year, diesel::dsl::count_star()))
            .load(c)
            .await?
    }))
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
