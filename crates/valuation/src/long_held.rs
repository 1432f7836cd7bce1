//! `POST /v1/equity/long-held`: properties of an area held a long time with a large paper gain
//! (the latest vintage's value against the last category A sale, nominal, not net of debt),
//! ordered by gain in per cent, largest first, with keyset paging.

use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::CursorScope;
use terrace_store::Db;
use terrace_store::listings::ListingArea;
use terrace_store::valuation as vs;

use crate::ValuationError;
use crate::ops::{gain_pct, month_day, round, years_between};

/// A checked long-held query.
#[derive(Debug, Clone, PartialEq)]
pub struct LongHeldQuery {
    /// The area id as canonicalised (echoed in the answer).
    pub area_id: String,
    pub area: ListingArea,
    pub min_years_held: f64,
    pub min_gain_pct: f64,
    pub limit: usize,
    /// The last item of the previous page: (gain in tenths of a per cent, UPRN).
    pub after: Option<(i64, i64)>,
}

/// The cursor scope of a long-held walk: its area and both thresholds (the shared keyset cursor,
/// `terrace_core::cursor`), so a cursor is refused by a walk with other filters.
pub fn cursor_scope(area_id: &str, min_years_held: f64, min_gain_pct: f64) -> CursorScope {
    CursorScope::new("equity_long_held", &(area_id, min_years_held, min_gain_pct))
}

/// An item's key in the walk's order: its gain in tenths of a per cent, then its UPRN.
fn key_parts(gain_pct: f64, uprn: i64) -> Vec<String> {
    vec![
        ((gain_pct * 10.0).round() as i64).to_string(),
        uprn.to_string(),
    ]
}

/// The key a decoded cursor names, `(gain in tenths of a per cent, UPRN)`; `None` when its parts
/// are not such a key.
pub fn key_of_cursor(parts: &[String]) -> Option<(i64, i64)> {
    match parts {
        [g, u] => Some((g.parse().ok()?, u.parse().ok()?)),
        _ => None,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LongHeldItem {
    pub uprn: i64,
    /// The latest vintage's value, pounds (nearest 100).
    pub value: i64,
    pub last_sale_price: i64,
    pub last_sale_date: chrono::NaiveDate,
    /// Years from the last sale to the vintage month's first day, to one decimal.
    pub years_held: f64,
    /// value - last sale price, nominal pounds.
    pub gain: i64,
    pub gain_pct: f64,
    pub property_type: Option<String>,
    pub district: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LongHeldPage {
    pub area_id: String,
    /// The vintage month of the values; null when no vintage is built.
    pub as_of: Option<String>,
    pub model_version: Option<String>,
    pub min_years_held: f64,
    pub min_gain_pct: f64,
    pub items: Vec<LongHeldItem>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    pub note: &'static str,
}

/// One page of the long-held properties of an area.
pub async fn long_held(db: &Db, q: &LongHeldQuery) -> Result<LongHeldPage, ValuationError> {
    let mut page = LongHeldPage {
        area_id: q.area_id.clone(),
        as_of: None,
        model_version: None,
        min_years_held: q.min_years_held,
        min_gain_pct: q.min_gain_pct,
        items: Vec::new(),
        next_cursor: None,
        note: "Paper gain: the model's value against the last registered sale price, nominal (not inflation-adjusted) and not net of any mortgage or costs",
    };
    let Some(v) = vs::latest_vintage(db).await? else {
        return Ok(page);
    };
    let Some(day) = month_day(&v.as_of) else {
        return Ok(page);
    };
    // A superset by date; the exact years held are checked below.
    let sold_by = day - chrono::Duration::days((q.min_years_held * 365.25).floor() as i64);
    let mut items: Vec<LongHeldItem> = vs::valued_sales_in_area(db, &q.area, sold_by)
        .await?
        .into_iter()
        .filter_map(|r| {
            let (value, price, date) = (round(r.value?), r.last_sale_price?, r.last_sale_date?);
            if price <= 0 {
                return None;
            }
            let years = years_between(date, day);
            let gain = gain_pct(value, price);
            (years >= q.min_years_held && gain >= q.min_gain_pct).then(|| LongHeldItem {
                uprn: r.uprn,
                value,
                last_sale_price: price,
                last_sale_date: date,
                years_held: (years * 10.0).round() / 10.0,
                gain: value - price,
                gain_pct: gain,
                property_type: r.property_type,
                district: r.district,
            })
        })
        .collect();
    let key = |i: &LongHeldItem| (-((i.gain_pct * 10.0).round() as i64), i.uprn);
    items.sort_by_key(key);
    if let Some((g, u)) = q.after {
        items.retain(|i| key(i) > (-g, u));
    }
    if items.len() > q.limit {
        items.truncate(q.limit);
        let scope = cursor_scope(&q.area_id, q.min_years_held, q.min_gain_pct);
        page.next_cursor = items
            .last()
            .map(|i| scope.encode(&key_parts(i.gain_pct, i.uprn)));
    }
    page.as_of = Some(v.as_of);
    page.model_version = Some(v.model_version);
    page.items = items;
    Ok(page)
}
