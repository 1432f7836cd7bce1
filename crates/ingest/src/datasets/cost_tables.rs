//! The operator's regional location factors and tender benchmarks (docs/DATA.md,
//! "Construction costs").

use crate::formats::{Parsed, cost_feeds};
use crate::load::Load;
use crate::merge::{Change, LoadCtx, merge, stored};
use std::path::Path;
use terrace_store::StoreError;
use terrace_store::costs::{self, BenchmarkRow, LocationFactorRow};
use terrace_store::loads::RowCounts;

stored!(
    LocationFactorRow,
    String,
    |r| r.region.clone(),
    costs::location_factors_by_key,
    costs::replace_location_factors
);
stored!(
    BenchmarkRow,
    String,
    |r| r.bench_key.clone(),
    costs::benchmarks_by_key,
    costs::replace_benchmarks
);

pub struct LocationFactors;

impl Load for LocationFactors {
    type Row = cost_feeds::FactorRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        cost_feeds::read_factors(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        let key = |r: &cost_feeds::FactorRow| r.region.as_str().to_string();
        merge(ctx.db, rows, counts, key, |r, _| {
            Change::Put(LocationFactorRow {
                region: r.region.as_str().into(),
                factor: r.factor,
                period: r.period.map(|p| p.to_string()),
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            })
        })
        .await?;
        Ok(false)
    }
}

pub struct TenderBenchmarks;

fn bench_key(r: &cost_feeds::BenchmarkRow) -> String {
    format!("{}|{}", r.sector.as_str(), r.period)
}

impl Load for TenderBenchmarks {
    type Row = cost_feeds::BenchmarkRow;

    fn read(&self, path: &Path) -> std::io::Result<impl Iterator<Item = Parsed<Self::Row>> + Send> {
        cost_feeds::read_benchmarks(path)
    }

    async fn apply(
        &self,
        ctx: &LoadCtx<'_>,
        rows: Vec<Self::Row>,
        counts: &mut RowCounts,
    ) -> Result<bool, StoreError> {
        merge(ctx.db, rows, counts, bench_key, |r, _| {
            Change::Put(BenchmarkRow {
                bench_key: bench_key(&r),
                sector: r.sector.as_str().into(),
                period: r.period.to_string(),
                period_start: r.period.start(),
                rate_low: r.low,
                rate_mid: r.mid,
                rate_high: r.high,
                source: ctx.source.to_string(),
                updated_at: ctx.now,
            })
        })
        .await?;
        Ok(false)
    }
}
