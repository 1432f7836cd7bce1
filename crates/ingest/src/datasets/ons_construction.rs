//! ONS construction price series (output price indices, the implied deflator, average weekly
//! earnings in construction) from the spreadsheet ONS publishes; and the operator's tender
//! price index, stored beside them as the `tender` basis.

use crate::formats::{Parsed, cost_feeds, ons_construction as format};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_core::costs::{Basis, Period, Sector};
use terrace_store::StoreError;
use terrace_store::costs::{self, CostPointRow};
use terrace_store::loads::RowCounts;

stored!(
    CostPointRow,
    String,
    |r| r.point_key.clone(),
    costs::cost_points_by_key,
    costs::replace_cost_points
);

/// The key of a point: `basis|sector|freq|period`.
fn point_key(basis: Basis, sector: Sector, period: Period) -> String {
    format!(
        "{}|{}|{}|{period}",
        basis.as_str(),
        sector.as_str(),
        period.freq().as_str()
    )
}

/// A stored point of a series.
#[allow(clippy::too_many_arguments)]
fn point(
    ctx: &LoadCtx<'_>,
    basis: Basis,
    sector: Sector,
    period: Period,
    value: f64,
    unit: &str,
    base_period: Option<String>,
    title: String,
) -> CostPointRow {
    CostPointRow {
        point_key: point_key(basis, sector, period),
        basis: basis.as_str().into(),
        sector: sector.as_str().into(),
        freq: period.freq().as_str().into(),
        period: period.to_string(),
        period_start: period.start(),
        value,
        unit: unit.into(),
        base_period,
        series_title: title,
        source: ctx.source.to_string(),
        updated_at: ctx.now,
    }
}

pub struct OnsConstructionPrices;

impl Load for OnsConstructionPrices {
    type Row = format::CostPoint;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        format::read(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        let key = |r: &format::CostPoint| point_key(r.basis, r.sector, r.period);
        merge(ctx.db, rows, counts, key, |r, _| {
            Change::Put(point(
                ctx,
                r.basis,
                r.sector,
                r.period,
                r.value,
                r.unit,
                r.base_period,
                r.title,
            ))
        })
        .await?;
        Ok(false)
    }
}

pub struct TenderPrices;

impl Load for TenderPrices {
    type Row = cost_feeds::TenderPoint;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        cost_feeds::read_tender(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        let key = |r: &cost_feeds::TenderPoint| point_key(Basis::Tender, r.sector, r.period);
        merge(ctx.db, rows, counts, key, |r, _| {
            let title = r
                .title
                .unwrap_or_else(|| format!("Tender price index: {}", r.sector.as_str()));
            Change::Put(point(
                ctx,
                Basis::Tender,
                r.sector,
                r.period,
                r.value,
                "index",
                r.base_period,
                title,
            ))
        })
        .await?;
        Ok(false)
    }
}
