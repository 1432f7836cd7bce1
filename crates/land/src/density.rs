//! `GET /v1/h3/density/{area_id}`: per resolution-8 H3 cell of an area, its addresses by class
//! and its registered sales over a stated period, in cell order with a cursor.

use crate::{LandCtx, LandError, scope_of};
use chrono::{Datelike, NaiveDate};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use terrace_core::{AreaId, CursorScope};
use terrace_store::land;

/// What the density is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct DensityQuery {
    pub area_id: AreaId,
    /// Months of sales, ending with the month of the newest linked sale.
    pub months: u32,
    pub limit: i64,
    /// The last cell of the previous page (decoded from its cursor).
    pub after: Option<String>,
}

/// The cursor scope of a density walk: its area and period (`terrace_core::cursor`).
pub fn cursor_scope(area_id: &AreaId, months: u32) -> CursorScope {
    CursorScope::new("h3_density", &(area_id.to_string(), months))
}

/// One cell.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DensityCell {
    /// The H3 cell index at resolution 8 (`h3:` area id without its prefix).
    pub cell: String,
    /// The area's addresses in the cell.
    pub addresses: i64,
    /// AddressBase classes `R…`.
    pub residential: i64,
    /// Classes `C…`.
    pub commercial: i64,
    /// Every other class (parent shells, land, dual use, ...), and addresses with no class.
    pub other: i64,
    /// Registered sales of the cell's addresses in the period; null when no sale is linked to any
    /// address in the store.
    pub sales: Option<i64>,
    /// Their total price in pounds, an integer as text; null as `sales`.
    pub sales_value: Option<String>,
}

/// The period the sales cover.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SalesPeriod {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub months: u32,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct H3Density {
    pub area_id: AreaId,
    /// Always 8.
    pub resolution: u8,
    /// Null when no registered sale is linked to an address (then every cell's sales are null).
    pub period: Option<SalesPeriod>,
    pub cells: Vec<DensityCell>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    /// Why the sales are null, when they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sales_reason: Option<String>,
}

/// The first day of the month `months - 1` months before `to`'s month, and `to`.
fn period_to(to: NaiveDate, months: u32) -> SalesPeriod {
    let index = to.year() * 12 + to.month0() as i32 - (months as i32 - 1);
    let from = NaiveDate::from_ymd_opt(index.div_euclid(12), index.rem_euclid(12) as u32 + 1, 1)
        .unwrap_or(to);
    SalesPeriod { from, to, months }
}

/// The cells of an area with their address and sales counts.
pub async fn h3_density(ctx: &LandCtx, q: DensityQuery) -> Result<H3Density, LandError> {
    let scope = scope_of(&q.area_id).map_err(|v| LandError::Invalid(vec![v]))?;
    crate::require_loaded(ctx, &q.area_id).await?;
    let after = q.after.clone().unwrap_or_default();
    let mut cells = land::h3_cells_in_scope(&ctx.db, &scope, &after, q.limit + 1).await?;
    let more = cells.len() as i64 > q.limit;
    cells.truncate(q.limit.max(0) as usize);
    let mut out: BTreeMap<String, DensityCell> = cells
        .iter()
        .map(|c| {
            (
                c.clone(),
                DensityCell {
                    cell: c.clone(),
                    addresses: 0,
                    residential: 0,
                    commercial: 0,
                    other: 0,
                    sales: None,
                    sales_value: None,
                },
            )
        })
        .collect();
    for (cell, class, n) in land::h3_class_counts(&ctx.db, &scope, &cells).await? {
        if let Some(d) = out.get_mut(&cell) {
            d.addresses += n;
            match class.as_deref().and_then(|c| c.as_bytes().first()) {
                Some(b'R') => d.residential += n,
                Some(b'C') => d.commercial += n,
                Some(_) | None => d.other += n,
            }
        }
    }
    let latest = land::latest_linked_sale(&ctx.db).await?;
    let period = latest.map(|to| period_to(to, q.months));
    if let Some(p) = &period {
        for d in out.values_mut() {
            d.sales = Some(0);
            d.sales_value = Some("0".into());
        }
        for (cell, n, value) in land::h3_sales(&ctx.db, &scope, &cells, p.from, p.to).await? {
            if let Some(d) = out.get_mut(&cell) {
                d.sales = Some(n);
                d.sales_value = Some(value.to_string());
            }
        }
    }
    let cells: Vec<DensityCell> = out.into_values().collect();
    let scope = cursor_scope(&q.area_id, q.months);
    Ok(H3Density {
        area_id: q.area_id,
        resolution: 8,
        next_cursor: if more {
            cells.last().map(|c| scope.encode(&[c.cell.as_str()]))
        } else {
            None
        },
        sales_reason: period
            .is_none()
            .then(|| "no registered sale is linked to an address in the store".to_string()),
        period,
        cells,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_ends_with_the_newest_sale_and_spans_whole_months() {
        let to = NaiveDate::from_ymd_opt(2026, 3, 17).unwrap();
        let p = period_to(to, 12);
        assert_eq!(p.from, NaiveDate::from_ymd_opt(2025, 4, 1).unwrap());
        let p = period_to(to, 3);
        assert_eq!(p.from, NaiveDate::from_ymd_opt(2026, 1, 1).unwrap());
        let p = period_to(to, 1);
        assert_eq!(p.from, NaiveDate::from_ymd_opt(2026, 3, 1).unwrap());
    }
}
