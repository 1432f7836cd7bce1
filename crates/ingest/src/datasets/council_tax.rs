//! The VOA council tax list: a band per dwelling.

use crate::formats::{Parsed, council_tax as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::council_tax;
use terrace_store::council_tax::CouncilTaxRow;
use terrace_store::loads::RowCounts;

stored!(
    CouncilTaxRow,
    String,
    |r| r.reference.clone(),
    council_tax::council_tax_by_ref,
    council_tax::replace_council_tax
);

/// How a council tax entry that carries its own UPRN says it was matched.
pub const LIST_UPRN_METHOD: &str = "list_uprn";

pub struct CouncilTax;

impl Load for CouncilTax {
    type Row = format::CouncilTaxRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        merge(
            ctx.db,
            rows,
            counts,
            |r| r.reference.clone(),
            |r, prev: Option<&CouncilTaxRow>| {
                // The list's own UPRN wins; else an earlier match stands while the address is unchanged.
                let same_addr =
                    prev.is_some_and(|p| p.address == r.address && p.postcode == r.postcode);
                let (uprn, match_method, match_score) = match (r.uprn, prev.filter(|_| same_addr)) {
                    (Some(u), _) => (Some(u), Some(LIST_UPRN_METHOD.to_string()), Some(1.0)),
                    (None, Some(p)) => (p.uprn, p.match_method.clone(), p.match_score),
                    (None, None) => (None, None, None),
                };
                Change::Put(CouncilTaxRow {
                    reference: r.reference,
                    billing_authority: r.billing_authority,
                    address: r.address,
                    postcode: r.postcode,
                    band: r.band,
                    uprn,
                    match_method,
                    match_score,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
