//! HM Land Registry's company-owned titles (CCOD and OCOD): one row per title with its
//! proprietors as the register lists them, and one row per proprietor slot for the look-ups by
//! company number and by name.
//!
//! Invariants: a title's key is its title number; `title_proprietors` holds exactly the slots of
//! the stored titles (the loader replaces a title's slots whenever it writes or deletes the
//! title); `uprn`, `match_method` and `match_score` are set only by the address matcher
//! (`set_title_matches`).
//!
//! `title_price_history` keeps every distinct (Date Proprietor Added, Price Paid) a title has
//! shown in any snapshot loaded, with the month of the earliest snapshot that showed it: a new
//! snapshot overwrites the title's row in `titles` but adds to the history, and loading a
//! snapshot again adds nothing ([`record_price_observations`]).

use crate::db::{Db, StoreResult};
use crate::schema::{title_price_history, title_proprietors, titles};
use crate::{keyed_ops, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::AggregateExpressionMethods;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// One company-owned title.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = titles)]
pub struct TitleRow {
    pub title_number: String,
    /// `ccod` or `ocod`.
    pub register: String,
    pub tenure: Option<String>,
    pub property_address: Option<String>,
    pub district: Option<String>,
    pub county: Option<String>,
    pub region: Option<String>,
    pub postcode: Option<String>,
    pub multiple_address: Option<bool>,
    pub price_paid: Option<i64>,
    pub date_added: Option<NaiveDate>,
    pub additional_proprietor: Option<bool>,
    /// The proprietors in register order (the ownership crate owns the JSON's shape).
    pub proprietors_json: String,
    /// `YYYY-MM` from the file name (`CCOD_FULL_2025_09.csv`), when it says.
    pub file_month: Option<String>,
    pub uprn: Option<i64>,
    pub match_method: Option<String>,
    pub match_score: Option<f64>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    TitleRow,
    titles,
    title_number,
    String,
    titles_by_number,
    replace_titles,
    delete_titles
);

crate::matchable_ops!(
    TitleRow,
    titles,
    title_number,
    unmatched_titles,
    set_title_matches
);

/// One proprietor slot of a title (`id` is `<title>/<position>`).
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = title_proprietors)]
pub struct ProprietorRow {
    pub id: String,
    pub title_number: String,
    pub position: i32,
    pub name: String,
    /// The name normalised for look-up (see `terrace_ownership::name_key`).
    pub name_key: String,
    pub company_number: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// Replaces the proprietor slots of `titles` with `rows` in one transaction (titles with no
/// row in `rows` lose their slots).
pub async fn replace_proprietors_of(
    db: &Db,
    titles: Vec<String>,
    rows: Vec<ProprietorRow>,
) -> StoreResult<usize> {
    Ok(crate::replace_rows!(
        db,
        title_proprietors::table,
        title_proprietors::title_number,
        titles,
        rows
    ))
}

/// Which proprietor slots a title look-up matches: a company number, or a normalised name key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder<'a> {
    Company(&'a str),
    NameKey(&'a str),
}

/// The proprietor slots of a holder (a boxed filter, the same query on both backends).
macro_rules! holder_slots {
    ($holder:expr) => {{
        let q = title_proprietors::table.into_boxed();
        match $holder {
            Holder::Company(n) => q.filter(title_proprietors::company_number.eq(n)),
            Holder::NameKey(k) => q.filter(title_proprietors::name_key.eq(k)),
        }
    }};
}

/// The distinct title numbers a holder holds in any proprietor slot, in title number order after
/// `after` (keyset pages), at most `limit`.
pub async fn titles_of(
    db: &Db,
    holder: Holder<'_>,
    after: &str,
    limit: i64,
) -> StoreResult<Vec<String>> {
    Ok(with_conn!(db, |c| {
        holder_slots!(holder)
            .filter(title_proprietors::title_number.gt(after))
            .select(title_proprietors::title_number)
            .distinct()
            .order(title_proprietors::title_number)
            .limit(limit)
            .load::<String>(c)
            .await?
    }))
}

/// How many distinct titles a holder holds.
pub async fn title_count(db: &Db, holder: Holder<'_>) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| {
        holder_slots!(holder)
            .select(diesel::dsl::count(title_proprietors::title_number).aggregate_distinct())
            .get_result::<i64>(c)
            .await?
    }))
}

/// The distinct name keys in `[lo, hi)` (an index range, the same on both backends), at most
/// `limit`, in order.
pub async fn name_keys_between(
    db: &Db,
    lo: &str,
    hi: &str,
    limit: i64,
) -> StoreResult<Vec<String>> {
    Ok(with_conn!(db, |c| {
        title_proprietors::table
            .filter(title_proprietors::name_key.ge(lo))
            .filter(title_proprietors::name_key.lt(hi))
            .select(title_proprietors::name_key)
            .distinct()
            .order(title_proprietors::name_key)
            .limit(limit)
            .load::<String>(c)
            .await?
    }))
}

/// The proprietor slots with this name key (any title), at most `limit`, in title order.
pub async fn proprietors_with_name_key(
    db: &Db,
    name_key: &str,
    limit: i64,
) -> StoreResult<Vec<ProprietorRow>> {
    Ok(with_conn!(db, |c| {
        title_proprietors::table
            .filter(title_proprietors::name_key.eq(name_key))
            .order((title_proprietors::title_number, title_proprietors::position))
            .limit(limit)
            .select(ProprietorRow::as_select())
            .load(c)
            .await?
    }))
}

/// (titles loaded, titles linked to a UPRN).
pub async fn title_link_counts(db: &Db) -> StoreResult<(i64, i64)> {
    let total: i64 = with_conn!(db, |c| titles::table.count().get_result(c).await?);
    let linked: i64 = with_conn!(db, |c| titles::table
        .filter(titles::uprn.is_not_null())
        .count()
        .get_result(c)
        .await?);
    Ok((total, linked))
}

/// The titles linked to a UPRN, in title number order.
pub async fn titles_for_uprn(db: &Db, uprn: i64) -> StoreResult<Vec<TitleRow>> {
    Ok(with_conn!(db, |c| {
        titles::table
            .filter(titles::uprn.eq(uprn))
            .order(titles::title_number)
            .select(TitleRow::as_select())
            .load(c)
            .await?
    }))
}

/// The titles linked to any of these UPRNs, by UPRN and title number.
pub async fn titles_for_uprns(db: &Db, uprns: &[i64]) -> StoreResult<Vec<TitleRow>> {
    let mut out = Vec::new();
    for k in uprns.chunks(crate::bulk::CHUNK) {
        let k = k.to_vec();
        let part: Vec<TitleRow> = with_conn!(db, |c| {
            titles::table
                .filter(titles::uprn.eq_any(k.clone()))
                .select(TitleRow::as_select())
                .load(c)
                .await?
        });
        out.extend(part);
    }
    out.sort_by(|a, b| (a.uprn, &a.title_number).cmp(&(b.uprn, &b.title_number)));
    Ok(out)
}

/// One distinct (Date Proprietor Added, Price Paid) of a title, as first seen in a snapshot.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = title_price_history)]
pub struct PriceObservationRow {
    /// `title|YYYY-MM-DD|price` ([`price_observation_key`]).
    pub obs_key: String,
    pub title_number: String,
    /// `ccod` or `ocod`.
    pub register: String,
    pub date_added: NaiveDate,
    pub price_paid: i64,
    /// `YYYY-MM` of the earliest snapshot loaded that showed this observation (from the file
    /// name, `CCOD_FULL_2024_01.csv`); null when no file that showed it named its month.
    pub first_seen_month: Option<String>,
    pub tenure: Option<String>,
    /// The first proprietor's Proprietorship Category.
    pub proprietorship_category: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    PriceObservationRow,
    title_price_history,
    obs_key,
    String,
    price_observations_by_key,
    replace_price_observations
);

/// The key of an observation: `title|YYYY-MM-DD|price`.
pub fn price_observation_key(title_number: &str, date_added: NaiveDate, price_paid: i64) -> String {
    format!("{title_number}|{date_added}|{price_paid}")
}

/// The earlier of two snapshot months (a known month is earlier than an unknown one).
fn earlier_month(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Records observations: one not yet stored is added; one already stored is left as it is,
/// except that an earlier snapshot month replaces its `first_seen_month` (an older snapshot
/// loaded after a newer one). Recording the same observations again changes nothing. Returns
/// the observations added.
pub async fn record_price_observations(
    db: &Db,
    rows: Vec<PriceObservationRow>,
) -> StoreResult<usize> {
    let mut wanted: std::collections::BTreeMap<String, PriceObservationRow> =
        std::collections::BTreeMap::new();
    for r in rows {
        match wanted.get_mut(&r.obs_key) {
            Some(w) => {
                w.first_seen_month =
                    earlier_month(w.first_seen_month.take(), r.first_seen_month.clone());
            }
            None => {
                wanted.insert(r.obs_key.clone(), r);
            }
        }
    }
    let keys: Vec<String> = wanted.keys().cloned().collect();
    let stored: std::collections::HashMap<String, PriceObservationRow> =
        price_observations_by_key(db, &keys)
            .await?
            .into_iter()
            .map(|r| (r.obs_key.clone(), r))
            .collect();
    let mut added = 0;
    let mut writes = Vec::new();
    for (k, r) in wanted {
        match stored.get(&k) {
            None => {
                added += 1;
                writes.push(r);
            }
            Some(s) => {
                let month = earlier_month(s.first_seen_month.clone(), r.first_seen_month);
                if month != s.first_seen_month {
                    writes.push(PriceObservationRow {
                        first_seen_month: month,
                        ..s.clone()
                    });
                }
            }
        }
    }
    if !writes.is_empty() {
        replace_price_observations(db, writes).await?;
    }
    Ok(added)
}

/// The titles with at least two distinct observations (the ones a pair can be formed from), in
/// title number order.
pub async fn titles_with_repeat_observations(db: &Db) -> StoreResult<Vec<String>> {
    Ok(with_conn!(db, |c| {
        title_price_history::table
            .group_by(title_price_history::title_number)
            .having(diesel::dsl::count_star().gt(1_i64))
            .select(title_price_history::title_number)
            .order(title_price_history::title_number)
            .load::<String>(c)
            .await?
    }))
}

/// The observations of these titles, by title, date added and first-seen month.
pub async fn price_history_of(
    db: &Db,
    title_numbers: &[String],
) -> StoreResult<Vec<PriceObservationRow>> {
    let mut out = Vec::new();
    for k in title_numbers.chunks(crate::bulk::CHUNK) {
        let part: Vec<PriceObservationRow> = with_conn!(db, |c| {
            title_price_history::table
                .filter(title_price_history::title_number.eq_any(k))
                .select(PriceObservationRow::as_select())
                .load(c)
                .await?
        });
        out.extend(part);
    }
    out.sort_by(|a, b| {
        (
            &a.title_number,
            a.date_added,
            &a.first_seen_month,
            &a.obs_key,
        )
            .cmp(&(
                &b.title_number,
                b.date_added,
                &b.first_seen_month,
                &b.obs_key,
            ))
    });
    Ok(out)
}
