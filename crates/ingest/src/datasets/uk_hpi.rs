//! The UK House Price Index by area and month.

use crate::formats::{Parsed, uk_hpi as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;
use terrace_store::market::{self as mk, HpiRow};

stored!(
    HpiRow,
    String,
    |r| r.hpi_key.clone(),
    mk::hpi_by_key,
    mk::replace_hpi
);

pub struct UkHpi;

fn key(r: &format::HpiRow) -> String {
    format!("{}|{}", r.area_code, r.month.format("%Y-%m"))
}

impl Load for UkHpi {
    type Row = format::HpiRow;

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
            Change::Put(HpiRow {
                hpi_key: key(&r),
                month: r.month.format("%Y-%m").to_string(),
                area_code: r.area_code,
                region_name: r.region_name,
                hpi_index: r.index,
                average_price: r.average_price,
                sales_volume: r.sales_volume,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            })
        })
        .await?;
        Ok(false)
    }
}
