//! Building heights from the Environment Agency's LIDAR composite: the DSM/DTM tile pairs the
//! loader registered (`lidar_tiles`: files, grid, survey year; the cells stay in the files), and
//! the `lidar_*` columns of `building_footprints` the land build writes (height, volume, valid
//! cells, survey year, source, the reason when there is no height, and the digest of the tile set
//! each row was computed against).
//!
//! Invariants: only the land build writes the `lidar_*` columns; a footprint reloaded with a new
//! outline is written whole by its loader, so its `lidar_*` columns are null until the next build;
//! a row whose `lidar_built` equals the current tile set's digest is not computed again.

use crate::db::{Db, StoreResult};
use crate::schema::{building_footprints, lidar_tiles};
use crate::{execute_all, keyed_ops, with_conn};
use chrono::NaiveDateTime;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// One DSM/DTM tile pair as the loader registered it.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = lidar_tiles)]
pub struct LidarTileRow {
    /// The pair's key: the file name with its `DSM`/`DTM` token replaced by `*`.
    pub tile_key: String,
    /// The tile's name as the publisher gives it (the last token of the file name).
    pub tile: String,
    pub dsm_path: String,
    pub dtm_path: String,
    /// The tile's extent, BNG metres.
    pub min_x: f64,
    pub min_y: f64,
    pub max_x: f64,
    pub max_y: f64,
    pub cell_x: f64,
    pub cell_y: f64,
    pub width: i32,
    pub height: i32,
    pub dsm_nodata: f64,
    pub dtm_nodata: f64,
    pub survey_year: i32,
    /// Each file's size and modification time (seconds since 1970), so a changed file is an
    /// updated row and the heights are built again.
    pub dsm_bytes: i64,
    pub dtm_bytes: i64,
    pub dsm_modified: i64,
    pub dtm_modified: i64,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    LidarTileRow,
    lidar_tiles,
    tile_key,
    String,
    tiles_by_key,
    replace_tiles
);

/// Every registered tile pair, by key.
pub async fn all_tiles(db: &Db) -> StoreResult<Vec<LidarTileRow>> {
    Ok(with_conn!(db, |c| {
        lidar_tiles::table
            .order(lidar_tiles::tile_key)
            .select(LidarTileRow::as_select())
            .load(c)
            .await?
    }))
}

/// Whether any tile pair is registered.
pub async fn tiles_loaded(db: &Db) -> StoreResult<bool> {
    let n: i64 = with_conn!(db, |c| lidar_tiles::table.count().get_result(c).await?);
    Ok(n > 0)
}

/// A footprint's outline and box, as the height build reads it.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = building_footprints)]
pub struct FootprintShape {
    pub building_id: String,
    pub wkb: Vec<u8>,
    pub min_x: f64,
    pub min_y: f64,
    pub max_x: f64,
    pub max_y: f64,
}

/// The widest footprint's width, metres (0 with none).
pub async fn widest_footprint(db: &Db) -> StoreResult<f64> {
    let w: Option<f64> = with_conn!(db, |c| {
        building_footprints::table
            .select(diesel::dsl::max(
                building_footprints::max_x - building_footprints::min_x,
            ))
            .get_result(c)
            .await?
    });
    Ok(w.unwrap_or(0.0))
}

/// The footprints with `lo <= min_x < hi` not yet computed against the tile set `digest`, by id.
pub async fn pending_in_strip(
    db: &Db,
    digest: &str,
    lo: f64,
    hi: f64,
) -> StoreResult<Vec<FootprintShape>> {
    Ok(with_conn!(db, |c| {
        building_footprints::table
            .filter(building_footprints::min_x.ge(lo))
            .filter(building_footprints::min_x.lt(hi))
            .filter(
                building_footprints::lidar_built
                    .is_null()
                    .or(building_footprints::lidar_built.ne(digest)),
            )
            .order(building_footprints::building_id)
            .select(FootprintShape::as_select())
            .load(c)
            .await?
    }))
}

/// One footprint's LIDAR columns.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = building_footprints)]
pub struct LidarHeight {
    pub building_id: String,
    #[diesel(column_name = lidar_height_m)]
    pub height_m: Option<f64>,
    #[diesel(column_name = lidar_volume_m3)]
    pub volume_m3: Option<f64>,
    /// Cells centred inside the footprint with a measurement in both models.
    #[diesel(column_name = lidar_cells)]
    pub cells: Option<i32>,
    #[diesel(column_name = lidar_survey_year)]
    pub survey_year: Option<i32>,
    #[diesel(column_name = lidar_source)]
    pub source: Option<String>,
    /// Why there is no height (or what limits it).
    #[diesel(column_name = lidar_note)]
    pub note: Option<String>,
    /// The digest of the tile set the row was computed against.
    #[diesel(column_name = lidar_built)]
    pub built: Option<String>,
}

/// The LIDAR columns of footprints, by id.
pub async fn heights_by_id(db: &Db, ids: &[String]) -> StoreResult<Vec<LidarHeight>> {
    let mut out = Vec::new();
    for chunk in ids.chunks(crate::bulk::CHUNK) {
        let rows: Vec<LidarHeight> = with_conn!(db, |c| {
            building_footprints::table
                .filter(building_footprints::building_id.eq_any(chunk))
                .order(building_footprints::building_id)
                .select(LidarHeight::as_select())
                .load(c)
                .await?
        });
        out.extend(rows);
    }
    Ok(out)
}

/// Writes the LIDAR columns of each row's footprint, in one transaction.
pub async fn set_heights(db: &Db, rows: Vec<LidarHeight>) -> StoreResult<usize> {
    use building_footprints as f;
    Ok(execute_all!(db, rows, |r| diesel::update(
        f::table.filter(f::building_id.eq(&r.building_id))
    )
    .set((
        f::lidar_height_m.eq(r.height_m),
        f::lidar_volume_m3.eq(r.volume_m3),
        f::lidar_cells.eq(r.cells),
        f::lidar_survey_year.eq(r.survey_year),
        f::lidar_source.eq(&r.source),
        f::lidar_note.eq(&r.note),
        f::lidar_built.eq(&r.built),
    ))))
}

/// Marks every footprint not yet computed against `digest` as covered by no tile, with `note`.
pub async fn mark_uncovered(db: &Db, digest: &str, note: &str) -> StoreResult<usize> {
    use building_footprints as f;
    Ok(with_conn!(db, |c| {
        diesel::update(f::table.filter(f::lidar_built.is_null().or(f::lidar_built.ne(digest))))
            .set((
                f::lidar_height_m.eq(None::<f64>),
                f::lidar_volume_m3.eq(None::<f64>),
                f::lidar_cells.eq(None::<i32>),
                f::lidar_survey_year.eq(None::<i32>),
                f::lidar_source.eq(None::<String>),
                f::lidar_note.eq(note),
                f::lidar_built.eq(digest),
            ))
            .execute(c)
            .await?
    }))
}

/// With no tile registered: clears every footprint's LIDAR columns that are set.
pub async fn clear_heights(db: &Db) -> StoreResult<usize> {
    use building_footprints as f;
    Ok(with_conn!(db, |c| {
        diesel::update(f::table.filter(f::lidar_built.is_not_null()))
            .set((
                f::lidar_height_m.eq(None::<f64>),
                f::lidar_volume_m3.eq(None::<f64>),
                f::lidar_cells.eq(None::<i32>),
                f::lidar_survey_year.eq(None::<i32>),
                f::lidar_source.eq(None::<String>),
                f::lidar_note.eq(None::<String>),
                f::lidar_built.eq(None::<String>),
            ))
            .execute(c)
            .await?
    }))
}
