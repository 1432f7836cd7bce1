//! The VOA summary valuations (the `*`-separated multi-record files): the measured floor area and
//! adopted rateable value of each UARN in each list.

use crate::formats::{Parsed, voa_smv as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::loads::RowCounts;
use terrace_store::rating::{self, SummaryValuationRow};

stored!(
    SummaryValuationRow,
    String,
    |r| r.valuation_key.clone(),
    rating::valuations_by_key,
    rating::replace_valuations
);

pub struct VoaSummaryValuations;

fn key(r: &format::Valuation) -> String {
    format!("{}:{}", r.list_year, r.uarn)
}

impl Load for VoaSummaryValuations {
    type Row = format::Valuation;

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
            |r, _prev: Option<&SummaryValuationRow>| {
                // One valuation per list and UARN: a later one in the file replaces an earlier.
                Change::Put(SummaryValuationRow {
                    valuation_key: key(&r),
                    list_year: r.list_year,
                    uarn: r.uarn,
                    assessment_reference: r.assessment_reference,
                    scheme_reference: r.scheme_reference,
                    unit_of_measurement: r.unit,
                    total_area: r.total_area,
                    floor_area_m2: r.floor_area_m2,
                    unadjusted_price: r.unadjusted_price,
                    adopted_rv: r.adopted_rv,
                    floor_lines: i32::try_from(r.floor_lines.len()).unwrap_or(i32::MAX),
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
