//! EPC recommendations (domestic, non-domestic and display registers' `recommendations.csv`),
//! keyed by certificate and item; a recommendation is kept whether or not its certificate is
//! loaded yet, and read through its certificate.

use crate::formats::{Parsed, epc_recommendations as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::epc;
use terrace_store::epc::EpcRecommendationRow;
use terrace_store::loads::RowCounts;

stored!(
    EpcRecommendationRow,
    String,
    |r| r.rec_key.clone(),
    epc::epc_recommendations_by_key,
    epc::replace_epc_recommendations
);

pub struct EpcRecommendations;

impl Load for EpcRecommendations {
    type Row = format::RecommendationRow;

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
            |r| format!("{}/{}", r.lmk_key, r.item),
            |r, _| {
                Change::Put(EpcRecommendationRow {
                    rec_key: format!("{}/{}", r.lmk_key, r.item),
                    lmk_key: r.lmk_key,
                    item: r.item,
                    summary: r.summary,
                    description: r.description,
                    improvement_id: r.improvement_id,
                    improvement_id_text: r.improvement_id_text,
                    indicative_cost: r.indicative_cost,
                    payback_type: r.payback_type,
                    co2_impact: r.co2_impact,
                    source: ctx.source.to_string(),
                    updated_at: ctx.now,
                })
            },
        )
        .await?;
        Ok(false)
    }
}
