//! Load accounting: one `load_runs` row per file loaded, with its rejections.

use crate::db::{Db, StoreResult};
use crate::schema::{load_rejections, load_runs};
use crate::{execute_all, with_conn};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// What a finished load accounts for. `read = loaded + updated + deleted + rejected + unchanged`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RowCounts {
    pub read: i64,
    pub loaded: i64,
    pub updated: i64,
    pub deleted: i64,
    pub rejected: i64,
    pub unchanged: i64,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = load_runs)]
pub struct LoadRunRow {
    pub id: i64,
    pub dataset: String,
    pub file: String,
    pub started_at: NaiveDateTime,
    pub finished_at: Option<NaiveDateTime>,
    pub rows_read: i64,
    pub loaded: i64,
    pub updated: i64,
    pub deleted: i64,
    pub rejected: i64,
    pub unchanged: i64,
}

pub async fn start_run(db: &Db, dataset: &str, file: &str, now: NaiveDateTime) -> StoreResult<i64> {
    Ok(with_conn!(db, |c| {
        diesel::insert_into(load_runs::table)
            .values((
                load_runs::dataset.eq(dataset),
                load_runs::file.eq(file),
                load_runs::started_at.eq(now),
            ))
            .returning(load_runs::id)
            .get_result(c)
            .await?
    }))
}

/// Records a run's rejected lines (line number, reason) in one transaction.
pub async fn add_rejections(db: &Db, run_id: i64, rows: &[(i64, String)]) -> StoreResult<()> {
    if rows.is_empty() {
        return Ok(());
    }
    execute_all!(db, rows.to_vec(), |r| diesel::insert_into(
        load_rejections::table
    )
    .values((
        load_rejections::run_id.eq(run_id),
        load_rejections::line.eq(r.0),
        load_rejections::reason.eq(r.1.as_str()),
    )));
    Ok(())
}

pub async fn finish_run(
    db: &Db,
    run_id: i64,
    counts: &RowCounts,
    now: NaiveDateTime,
) -> StoreResult<()> {
    with_conn!(db, |c| {
        diesel::update(load_runs::table.find(run_id))
            .set((
                load_runs::finished_at.eq(Some(now)),
                load_runs::rows_read.eq(counts.read),
                load_runs::loaded.eq(counts.loaded),
                load_runs::updated.eq(counts.updated),
                load_runs::deleted.eq(counts.deleted),
                load_runs::rejected.eq(counts.rejected),
                load_runs::unchanged.eq(counts.unchanged),
            ))
            .execute(c)
            .await?
    });
    Ok(())
}

pub async fn runs(db: &Db) -> StoreResult<Vec<LoadRunRow>> {
    Ok(with_conn!(db, |c| {
        load_runs::table
            .order(load_runs::id)
            .select(LoadRunRow::as_select())
            .load(c)
            .await?
    }))
}

pub async fn rejections(db: &Db, run_id: i64) -> StoreResult<Vec<(i64, String)>> {
    Ok(with_conn!(db, |c| {
        load_rejections::table
            .filter(load_rejections::run_id.eq(run_id))
            .order(load_rejections::line)
            .select((load_rejections::line, load_rejections::reason))
            .load(c)
            .await?
    }))
}
