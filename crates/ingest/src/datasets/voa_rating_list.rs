//! The VOA non-domestic rating lists (the `*`-separated list entries).

use crate::formats::{Parsed, voa_list as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;
use terrace_store::rating::{self, RatingEntryRow};

stored!(
    RatingEntryRow,
    String,
    |r| r.entry_key.clone(),
    rating::entries_by_key,
    rating::replace_entries
);

pub struct VoaRatingList;

fn key(r: &format::ListEntry) -> String {
    format!("{}:{}", r.list_year, r.uarn)
}

impl Load for VoaRatingList {
    type Row = format::ListEntry;

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
            key,
            |r, prev: Option<&RatingEntryRow>| {
                // One entry per list and UARN: the one with the latest effective date stands; an
                // older entry of the same UARN in the same list leaves it as it is (unchanged).
                if let Some(p) = prev.filter(|p| p.effective_date > r.effective_date) {
                    return Change::Put(p.clone());
                }
                Change::Put(RatingEntryRow {
                    entry_key: key(&r),
                    list_year: r.list_year,
                    uarn: r.uarn,
                    billing_authority: r.billing_authority,
                    ba_reference: r.ba_reference,
                    description_code: r.description_code,
                    description_text: r.description_text,
                    scat_code: r.scat_code,
                    firm_name: r.firm_name,
                    address: r.address,
                    postcode: r.postcode,
                    rateable_value: r.rateable_value,
                    effective_date: r.effective_date,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
