//! Local Housing Allowance rates by broad rental market area and category.

use crate::formats::{Parsed, lha as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::lha;
use terrace_store::lha::LhaRateRow;
use terrace_store::loads::RowCounts;

stored!(
    LhaRateRow,
    String,
    |r| r.rate_key.clone(),
    lha::lha_rates_by_key,
    lha::replace_lha_rates
);

pub struct LhaRates;

fn key(r: &format::LhaRow) -> String {
    let from = r.valid_from.map(|d| d.to_string()).unwrap_or_default();
    format!("{}|{}|{from}", r.brma, r.category)
}

impl Load for LhaRates {
    type Row = format::LhaRow;

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
            Change::Put(LhaRateRow {
                rate_key: key(&r),
                brma: r.brma,
                brma_code: r.brma_code,
                category: r.category,
                weekly_rate_pence: r.weekly_rate_pence,
                valid_from: r.valid_from,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            })
        })
        .await?;
        Ok(false)
    }
}
