//! HM Land Registry's Price Paid to UPRN lookup: links sales to UPRNs (now, or when the sale loads).

use crate::formats::{Parsed, ppd_uprn as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, Stored, merge, stored};
use std::collections::HashMap;
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;
use terrace_store::sales;
use terrace_store::sales::PpdUprnLinkRow;
use terrace_store::sales::PricePaidRow;

stored!(
    PpdUprnLinkRow,
    String,
    |r| r.transaction_id.clone(),
    sales::ppd_links_by_id,
    sales::replace_ppd_links
);

/// How a sale linked by HM Land Registry's lookup says it was matched.
pub const LOOKUP_METHOD: &str = "hmlr_uprn_lookup";

pub struct PpdUprn;

impl Load for PpdUprn {
    type Row = format::LinkRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        // The last line of a transaction in the chunk is the link it stores.
        let mut by_id: HashMap<String, i64> = HashMap::new();
        let written = merge(
            ctx.db,
            rows,
            counts,
            |r| r.transaction_id.clone(),
            |r, _| {
                by_id.insert(r.transaction_id.clone(), r.uprn);
                Change::Put(PpdUprnLinkRow {
                    transaction_id: r.transaction_id,
                    uprn: r.uprn,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        // Sales already loaded take the new links now; sales loaded later take them on load.
        let sales: Vec<PricePaidRow> = PricePaidRow::fetch(ctx.db, &written.put)
            .await?
            .into_iter()
            .filter_map(|s| {
                let uprn = *by_id.get(s.transaction_id.as_str())?;
                Some(PricePaidRow {
                    uprn: Some(uprn),
                    match_method: Some(LOOKUP_METHOD.to_string()),
                    match_score: Some(1.0),
                    updated_at: ctx.now,
                    ..s
                })
            })
            .collect();
        PricePaidRow::replace(ctx.db, sales).await?;
        Ok(false)
    }
}
