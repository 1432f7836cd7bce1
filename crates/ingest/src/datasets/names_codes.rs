//! ONS names and codes: a name for a GSS code of any kind (ward, MSOA, LSOA, local authority,
//! county, region, country, built-up area, planning authority), merged by code.

use crate::formats::{Parsed, names_codes as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::areas::{self, AreaNameRow};
use terrace_store::loads::RowCounts;

stored!(
    AreaNameRow,
    String,
    |r| r.code.clone(),
    areas::area_names_by_code,
    areas::replace_area_names
);

pub struct NamesCodes;

impl Load for NamesCodes {
    type Row = format::AreaNameRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        let written = merge(
            ctx.db,
            rows,
            counts,
            |r| r.code.clone(),
            |r, _| {
                Change::Put(AreaNameRow {
                    code: r.code,
                    kind: r.kind.as_str().to_string(),
                    name: r.name,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        // The area index reads the names: a change rebuilds it.
        Ok(written.changed())
    }
}
