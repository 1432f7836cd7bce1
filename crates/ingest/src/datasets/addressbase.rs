//! AddressBase Premium/Plus: the full address register, with positions.

use super::shared::merge_addresses;
use crate::formats::{Parsed, addressbase as format};
use crate::load::Load;
use crate::merge::LoadCtx;
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::address::AddressRow;
use terrace_store::loads::RowCounts;

pub struct AddressBase;

impl Load for AddressBase {
    type Row = format::AddressRow;

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
                let prev = prev.unwrap_or_default();
                let has_pos = r.x.is_some() && r.y.is_some();
                Some(AddressRow {
                    uprn: r.uprn,
                    parent_uprn: r.parent_uprn,
                    class: r.class,
                    saon: r.saon,
                    paon: r.paon,
                    street: r.street,
                    locality: r.locality,
                    town: r.town,
                    postcode: r.postcode,
                    x: if has_pos { r.x } else { prev.x },
                    y: if has_pos { r.y } else { prev.y },
                    lat: if has_pos { r.lat } else { prev.lat },
                    lon: if has_pos { r.lon } else { prev.lon },
                    lad_code: prev.lad_code,
                    lsoa_code: prev.lsoa_code,
                    address_source: Some(ctx.source.to_string()),
                    position_source: if has_pos {
                        Some(ctx.source.to_string())
                    } else {
                        prev.position_source
                    },
                    updated_at: ctx.now,
                })
            },
        )
        .await
    }
}
