//! The Environment Agency LIDAR Composite DSM and DTM tiles into `lidar_tiles`: one row per
//! DSM/DTM pair (its files, grid, nodata values and survey year), keyed by the pair's name. The
//! cells stay in the files: the land build streams them, a tile at a time, into each footprint's
//! height and volume (`terrace_land::heights`), so the files must stay where they were loaded
//! from. A changed file (size or modification time) is an updated row, and the next build
//! computes the heights again.

use crate::formats::Parsed;
use crate::formats::lidar::{self, TileRow};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::lidar::{self as store_lidar, LidarTileRow};
use terrace_store::loads::RowCounts;

stored!(
    LidarTileRow,
    String,
    |r| r.tile_key.clone(),
    store_lidar::tiles_by_key,
    store_lidar::replace_tiles
);

pub struct LidarComposite;

impl Load for LidarComposite {
    type Row = TileRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<TileRow>> + Send> {
        lidar::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<TileRow>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        merge(
            ctx.db,
            rows,
            counts,
            |r| r.tile_key.clone(),
            |r, _| {
                let g = r.grid;
                Change::Put(LidarTileRow {
                    tile_key: r.tile_key,
                    tile: r.tile,
                    dsm_path: r.dsm.display().to_string(),
                    dtm_path: r.dtm.display().to_string(),
                    min_x: g.west,
                    min_y: g.south(),
                    max_x: g.east(),
                    max_y: g.north,
                    cell_x: g.cell_x,
                    cell_y: g.cell_y,
                    width: g.width as i32,
                    height: g.height as i32,
                    dsm_nodata: f64::from(r.dsm_nodata),
                    dtm_nodata: f64::from(r.dtm_nodata),
                    survey_year: r.survey_year,
                    dsm_bytes: r.dsm_stat.0,
                    dtm_bytes: r.dtm_stat.0,
                    dsm_modified: r.dsm_stat.1,
                    dtm_modified: r.dtm_stat.1,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
