//! A UARN to UPRN lookup (the VOA's, or a local one).

use crate::formats::{Parsed, uarn_uprn as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;
use terrace_store::rating::{self, UarnLinkRow};

stored!(
    UarnLinkRow,
    i64,
    |r| r.uarn,
    rating::links_by_uarn,
    rating::replace_links
);

/// How a UARN linked by a lookup file says it was matched.
pub const UARN_LOOKUP_METHOD: &str = "uarn_uprn_lookup";

pub struct UarnUprn;

impl Load for UarnUprn {
    type Row = format::UarnLink;

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
            |r| r.uarn,
            |r, _| {
                Change::Put(UarnLinkRow {
                    uarn: r.uarn,
                    uprn: r.uprn,
                    match_method: UARN_LOOKUP_METHOD.to_string(),
                    match_score: Some(1.0),
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
