//! Local Housing Allowance rates and the postcode areas each broad rental market area (BRMA)
//! covers.
//!
//! Invariants: a rate's key is `brma|category|valid_from` and an area's key is `area|brma`
//! (both built by the loader); rates are weekly, in pence.

use crate::db::{Db, StoreResult};
use crate::schema::{brma_areas, lha_rates};
use crate::{keyed_ops, with_conn};
use chrono::{NaiveDate, NaiveDateTime};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// One Local Housing Allowance rate: a BRMA's weekly rate for one category from one date.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = lha_rates)]
pub struct LhaRateRow {
    /// `brma|category|valid_from` (the date empty when the file gives none).
    pub rate_key: String,
    pub brma: String,
    pub brma_code: Option<String>,
    /// `shared`, `1`, `2`, `3` or `4`.
    pub category: String,
    pub weekly_rate_pence: i64,
    pub valid_from: Option<NaiveDate>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

/// One postcode unit, sector or district a broad rental market area covers.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = brma_areas)]
pub struct BrmaAreaRow {
    /// `area|brma`.
    pub area_key: String,
    /// A canonical postcode (`EX1 1AA`), sector (`EX1 1`) or district (`EX1`).
    pub area: String,
    /// `unit`, `sector` or `district`.
    pub area_kind: String,
    pub brma: String,
    pub brma_code: Option<String>,
    pub source: String,
    pub updated_at: NaiveDateTime,
}

keyed_ops!(
    LhaRateRow,
    lha_rates,
    rate_key,
    String,
    lha_rates_by_key,
    replace_lha_rates,
    delete_lha_rates
);
keyed_ops!(
    BrmaAreaRow,
    brma_areas,
    area_key,
    String,
    brma_areas_by_key,
    replace_brma_areas,
    delete_brma_areas
);

/// The BRMA entries for any of `areas` (postcode units, sectors or districts).
pub async fn brmas_for_areas(db: &Db, areas: &[String]) -> StoreResult<Vec<BrmaAreaRow>> {
    Ok(with_conn!(db, |c| {
        brma_areas::table
            .filter(brma_areas::area.eq_any(areas))
            .order(brma_areas::area_key)
            .select(BrmaAreaRow::as_select())
            .load(c)
            .await?
    }))
}

/// Every LHA rate of a BRMA, any date.
pub async fn lha_rates_for(db: &Db, brma: &str) -> StoreResult<Vec<LhaRateRow>> {
    Ok(with_conn!(db, |c| {
        lha_rates::table
            .filter(lha_rates::brma.eq(brma))
            .order(lha_rates::rate_key)
            .select(LhaRateRow::as_select())
            .load(c)
            .await?
    }))
}
