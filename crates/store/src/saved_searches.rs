//! Saved searches: an account's named declaration of a searchable operation and its parameters
//! (`saved_searches`), with when it last ran and the row keys that run returned. Every query is
//! scoped by the account, so another account's search is never read, changed or deleted.

use crate::db::{Db, StoreResult};
use crate::schema::saved_searches;
use crate::with_conn;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = saved_searches)]
pub struct SavedSearchRow {
    /// Random, URL-safe.
    pub search_id: String,
    pub account_id: i64,
    pub name: String,
    /// The stored operation's id (`auctions_lots`).
    pub operation: String,
    /// The parameters as a JSON object.
    pub parameters: String,
    pub created_at: NaiveDateTime,
    pub updated_at: NaiveDateTime,
    pub last_run_at: Option<NaiveDateTime>,
    /// The row keys of the last run, a JSON array of strings.
    pub last_run_keys: Option<String>,
}

/// Stores a new search; a name the account already uses is `StoreError::Conflict`.
pub async fn insert(db: &Db, row: SavedSearchRow) -> StoreResult<()> {
    with_conn!(db, |c| diesel::insert_into(saved_searches::table)
        .values(&row)
        .execute(c)
        .await?);
    Ok(())
}

/// The account's search `search_id`, if it has one.
pub async fn get(db: &Db, account: i64, search_id: &str) -> StoreResult<Option<SavedSearchRow>> {
    Ok(with_conn!(db, |c| saved_searches::table
        .filter(saved_searches::account_id.eq(account))
        .filter(saved_searches::search_id.eq(search_id))
        .select(SavedSearchRow::as_select())
        .first(c)
        .await
        .optional()?))
}

/// A page of the account's searches, newest first (ties by id, descending), after the key
/// `(created_at, search_id)` of the previous page's last search.
pub async fn page(
    db: &Db,
    account: i64,
    after: Option<(NaiveDateTime, String)>,
    limit: i64,
) -> StoreResult<Vec<SavedSearchRow>> {
    Ok(with_conn!(db, |c| {
        let mut q = saved_searches::table
            .filter(saved_searches::account_id.eq(account))
            .order((
                saved_searches::created_at.desc(),
                saved_searches::search_id.desc(),
            ))
            .limit(limit)
            .select(SavedSearchRow::as_select())
            .into_boxed();
        if let Some((t, id)) = &after {
            q = q.filter(
                saved_searches::created_at
                    .lt(*t)
                    .or(saved_searches::created_at
                        .eq(*t)
                        .and(saved_searches::search_id.lt(id.clone()))),
            );
        }
        q.load(c).await?
    }))
}

/// Renames a search and/or replaces its parameters in one statement; returns the rows changed
/// (0: no such search on the account, or deleted meanwhile). A name the account already uses is
/// `StoreError::Conflict`. New parameters forget the last run's keys.
pub async fn update(
    db: &Db,
    account: i64,
    search_id: &str,
    name: Option<String>,
    parameters: Option<String>,
    now: NaiveDateTime,
) -> StoreResult<usize> {
    let target = saved_searches::table
        .filter(saved_searches::account_id.eq(account))
        .filter(saved_searches::search_id.eq(search_id.to_string()));
    Ok(with_conn!(db, |c| match (&name, &parameters) {
        (Some(n), Some(p)) =>
            diesel::update(target)
                .set((
                    saved_searches::name.eq(n.clone()),
                    saved_searches::parameters.eq(p.clone()),
                    saved_searches::last_run_keys.eq(None::<String>),
                    saved_searches::updated_at.eq(now),
                ))
                .execute(c)
                .await?,
        (Some(n), None) =>
            diesel::update(target)
                .set((
                    saved_searches::name.eq(n.clone()),
                    saved_searches::updated_at.eq(now),
                ))
                .execute(c)
                .await?,
        (None, Some(p)) =>
            diesel::update(target)
                .set((
                    saved_searches::parameters.eq(p.clone()),
                    saved_searches::last_run_keys.eq(None::<String>),
                    saved_searches::updated_at.eq(now),
                ))
                .execute(c)
                .await?,
        (None, None) => 0,
    }))
}

/// Deletes the account's search; returns how many rows went (0 or 1).
pub async fn delete(db: &Db, account: i64, search_id: &str) -> StoreResult<usize> {
    Ok(with_conn!(db, |c| diesel::delete(
        saved_searches::table
            .filter(saved_searches::account_id.eq(account))
            .filter(saved_searches::search_id.eq(search_id.to_string()))
    )
    .execute(c)
    .await?))
}

/// Records a run: when, and the row keys it returned (kept as they were when the answer had no
/// rows), on the search as it was run: returns the rows changed (0 when the search was deleted
/// or given new parameters meanwhile, which stand).
pub async fn record_run(
    db: &Db,
    account: i64,
    search_id: &str,
    parameters: &str,
    at: NaiveDateTime,
    keys: Option<String>,
) -> StoreResult<usize> {
    let target = saved_searches::table
        .filter(saved_searches::account_id.eq(account))
        .filter(saved_searches::search_id.eq(search_id.to_string()))
        .filter(saved_searches::parameters.eq(parameters.to_string()));
    Ok(with_conn!(db, |c| match &keys {
        Some(k) =>
            diesel::update(target)
                .set((
                    saved_searches::last_run_at.eq(Some(at)),
                    saved_searches::last_run_keys.eq(Some(k.clone())),
                ))
                .execute(c)
                .await?,
        None =>
            diesel::update(target)
                .set(saved_searches::last_run_at.eq(Some(at)))
                .execute(c)
                .await?,
    }))
}
