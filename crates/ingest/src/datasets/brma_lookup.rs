//! Which broad rental market area each local authority or postcode district lies in.

use crate::formats::{Parsed, brma as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::lha;
use terrace_store::lha::BrmaAreaRow;
use terrace_store::loads::RowCounts;

stored!(
    BrmaAreaRow,
    String,
    |r| r.area_key.clone(),
    lha::brma_areas_by_key,
    lha::replace_brma_areas
);

pub struct BrmaLookup;

fn key(r: &format::BrmaAreaRow) -> String {
    format!("{}|{}", r.area, r.brma)
}

impl Load for BrmaLookup {
    type Row = format::BrmaAreaRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        merge(ctx.db, rows, counts, key, |r, _| {
            Change::Put(BrmaAreaRow {
                area_key: key(&r),
                area: r.area,
                area_kind: r.kind.to_string(),
                brma: r.brma,
                brma_code: r.brma_code,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            })
        })
        .await?;
        Ok(false)
    }
}
