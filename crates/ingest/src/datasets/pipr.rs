//! The ONS Price Index of Private Rents by local authority and month: the reference the rent
//! index is checked against at every build (docs/METHODS.md).

use crate::formats::{Parsed, pipr as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::listings::{self as ls, PiprRow};
use terrace_store::loads::RowCounts;

stored!(
    PiprRow,
    String,
    |r| r.pipr_key.clone(),
    ls::pipr_by_key,
    ls::replace_pipr
);

pub struct Pipr;

fn key(r: &format::PiprRow) -> String {
    format!("{}|{}", r.area_code, r.month.format("%Y-%m"))
}

impl Load for Pipr {
    type Row = format::PiprRow;

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
            Change::Put(PiprRow {
                pipr_key: key(&r),
                month: r.month.format("%Y-%m").to_string(),
                area_code: r.area_code,
                area_name: r.area_name,
                region_name: r.region_name,
                rent_index: r.index,
                monthly_change: r.monthly_change,
                annual_change: r.annual_change,
                rental_price: r.rental_price,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            })
        })
        .await?;
        Ok(false)
    }
}
