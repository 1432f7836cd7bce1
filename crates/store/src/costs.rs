//! Construction cost series and the operator's cost tables: the points of every loaded series
//! (ONS output price indices, the implied construction deflator, average weekly earnings in
//! construction, an operator's tender price index), regional location factors and tender
//! benchmarks per square metre.
//!
//! Invariants: a point's key is `basis|sector|freq|period` and a benchmark's `sector|period`
//! (both built by the loaders); `period` is in the series' own format (`2024M01`, `2024Q1`,
//! `2024`) and `period_start` is the first day it covers; values are as published.

use crate::db::{Db, StoreResult};
use crate::schema::{cost_benchmarks, cost_location_factors, cost_series_points};
use crate::{keyed_ops, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// One published value of a cost series.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = cost_series_points)]
pub struct CostPointRow {
    /// `basis|sector|freq|period`.
    pub point_key: String,
    /// `output`, `deflator`, `labour` or `tender`.
    pub basis: String,
    pub sector: String,
    /// The series' own frequency: `monthly`, `quarterly` or `annual`.
    pub freq: String,
    pub period: String,
    pub period_start: NaiveDate,
    pub value: f64,
    /// `index` or `gbp_per_week`.
    pub unit: String,
    /// The index's base period (`2015`), when an index.
    pub base_period: Option<String>,
    /// The series' title as the publisher gives it.
    pub series_title: String,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// One region's location factor (national = 1) from the operator's table.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = cost_location_factors)]
pub struct LocationFactorRow {
    pub region: String,
    pub factor: f64,
    pub period: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// One tender benchmark rate per square metre of gross internal area.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = cost_benchmarks)]
pub struct BenchmarkRow {
    /// `sector|period`.
    pub bench_key: String,
    pub sector: String,
    pub period: String,
    pub period_start: NaiveDate,
    pub rate_low: f64,
    pub rate_mid: f64,
    pub rate_high: f64,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    CostPointRow,
    cost_series_points,
    point_key,
    String,
    cost_points_by_key,
    replace_cost_points
);
keyed_ops!(
    LocationFactorRow,
    cost_location_factors,
    region,
    String,
    location_factors_by_key,
    replace_location_factors
);
keyed_ops!(
    BenchmarkRow,
    cost_benchmarks,
    bench_key,
    String,
    benchmarks_by_key,
    replace_benchmarks
);

/// Every point of the series of `basis` and `sector`, oldest first (any frequency).
pub async fn series(db: &Db, basis: &str, sector: &str) -> StoreResult<Vec<CostPointRow>> {
    Ok(with_conn!(db, |c| {
        cost_series_points::table
            .filter(cost_series_points::basis.eq(basis))
            .filter(cost_series_points::sector.eq(sector))
            .order((
                cost_series_points::period_start,
                cost_series_points::point_key,
            ))
            .select(CostPointRow::as_select())
            .load(c)
            .await?
    }))
}

/// The sectors loaded for `basis`, in name order.
pub async fn sectors(db: &Db, basis: &str) -> StoreResult<Vec<String>> {
    Ok(with_conn!(db, |c| {
        cost_series_points::table
            .filter(cost_series_points::basis.eq(basis))
            .select(cost_series_points::sector)
            .distinct()
            .order(cost_series_points::sector)
            .load(c)
            .await?
    }))
}

/// Every location factor loaded, by region.
pub async fn location_factors(db: &Db) -> StoreResult<Vec<LocationFactorRow>> {
    Ok(with_conn!(db, |c| {
        cost_location_factors::table
            .order(cost_location_factors::region)
            .select(LocationFactorRow::as_select())
            .load(c)
            .await?
    }))
}

/// Every benchmark of a sector, oldest first.
pub async fn benchmarks(db: &Db, sector: &str) -> StoreResult<Vec<BenchmarkRow>> {
    Ok(with_conn!(db, |c| {
        cost_benchmarks::table
            .filter(cost_benchmarks::sector.eq(sector))
            .order(cost_benchmarks::period_start)
            .select(BenchmarkRow::as_select())
            .load(c)
            .await?
    }))
}
