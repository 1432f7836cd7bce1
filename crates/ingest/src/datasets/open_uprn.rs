//! OS Open UPRN: a position for every UPRN.

use super::shared::merge_addresses;
use crate::formats::{Parsed, open_uprn as format};
use crate::load::Load;
use crate::merge::LoadCtx;
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::address::AddressRow;
use terrace_store::loads::RowCounts;

pub struct OpenUprn;

impl Load for OpenUprn {
    type Row = format::UprnRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        merge_addresses(
            ctx,
            rows,
            counts,
            |r| r.uprn,
            |r, prev| {
                // A better position source (the full register) is never overwritten by Open UPRN.
                let keep_pos = prev.as_ref().is_some_and(|p| {
                    p.position_source
                        .as_deref()
                        .is_some_and(|s| s.contains("addressbase"))
                });
                let base = prev.unwrap_or(AddressRow {
                    uprn: r.uprn,
                    ..Default::default()
                });
                Some(if keep_pos {
                    base
                } else {
                    AddressRow {
                        x: Some(r.x),
                        y: Some(r.y),
                        lat: Some(r.lat),
                        lon: Some(r.lon),
                        position_source: Some(ctx.source.to_string()),
                        updated_at: ctx.now,
                        ..base
                    }
                })
            },
        )
        .await
    }
}
