//! Gross yields of an area and bedroom band by month (`/v1/market/yields`), on two bases,
//! computed at call time from the stored listings and the latest valuation vintage.
//!
//! A listing belongs to the month of its first priced snapshot, as in the supply statistics.
//! Per month: `gross_yield_asking = 12 x median first asking rent (pcm) / median first asking
//! price` of the month's rent and sale listings (different properties); and
//! `gross_yield_avm_median`, the median over the month's rent listings matched to a UPRN with a
//! value in the latest valuation vintage of `12 x rent / value` (`gross_yield_avm_n` of them).
//! A yield is null where its month is too thin: fewer than [`MIN_LISTINGS`] rent listings, or
//! sale listings (asking basis), or valued rent listings (valuation basis).

use crate::demand::{area_listings, known};
use crate::market::{Answer, BedroomBand, NO_FEED, observation};
use crate::supply::{listed, month_label};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use terrace_analytics::quantile;
use terrace_store::listings::ListingArea;
use terrace_store::{Db, LookupError, valuation};

/// The fewest listings behind a published yield, on each side of it.
pub const MIN_LISTINGS: usize = 5;

/// The most months one answer carries (and the default).
pub const MONTHS_MAX: usize = 120;

/// A checked yields request.
#[derive(Debug, Clone)]
pub struct YieldsRequest {
    pub area: ListingArea,
    pub area_label: String,
    pub bedroom_band: Option<BedroomBand>,
    /// First and last month, `YYYY-MM`, inclusive.
    pub start: Option<String>,
    pub end: Option<String>,
    /// At most this many months, the latest.
    pub months: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct YieldMonth {
    /// `YYYY-MM`.
    pub period: String,
    /// Rent listings first priced in the month.
    pub rent_n: i64,
    /// Their median first asking rent, pounds per calendar month.
    pub rent_median_pcm: Option<i64>,
    /// Sale listings first priced in the month.
    pub sale_n: i64,
    /// Their median first asking price, pounds.
    pub sale_median: Option<i64>,
    /// `12 x rent_median_pcm / sale_median`, to four decimals; null when `rent_n` or `sale_n`
    /// is below `min_listings`.
    pub gross_yield_asking: Option<f64>,
    /// The median over the month's rent listings with a valued UPRN of `12 x rent / value`, to
    /// four decimals; null below `min_listings` valued listings or without a valuation vintage.
    pub gross_yield_avm_median: Option<f64>,
    /// The valued rent listings behind `gross_yield_avm_median`; null without a vintage.
    pub gross_yield_avm_n: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Yields {
    pub status: Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub area: String,
    pub bedroom_band: Option<BedroomBand>,
    /// The threshold: a yield needs at least this many listings on each side in its month.
    pub min_listings: usize,
    /// The valuation vintage (`model_version|YYYY-MM`) the valuation basis reads; null when none
    /// is built.
    pub valuation_vintage: Option<String>,
    /// Why `gross_yield_avm_median` is null throughout, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avm_reason: Option<String>,
    /// One row per month with a rent or sale listing first priced in it, oldest first; absent
    /// when no feed is loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub months: Option<Vec<YieldMonth>>,
    pub notes: Vec<&'static str>,
}

const NOTES: [&str; 3] = [
    "Gross yields: annual asking rent over a price or value, before voids, management, maintenance, ground rent and service charge.",
    "gross_yield_asking divides the median asking rent by the median asking price of different properties (the month's rent and sale listings in the same area and band); gross_yield_avm_median divides each rent listing's rent by its own property's valuation.",
    "Rents and prices are asking figures, not achieved ones; a listing counts in the month of its first priced snapshot.",
];

/// A month's listings: the rents (pcm) with their UPRNs, and the sale prices.
type Cell = (Vec<(i64, Option<i64>)>, Vec<i64>);

fn yield4(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0
}

/// The gross yields of an area and band by month. `NotFound` (naming the nearest) for an area
/// nothing places there.
pub async fn yields(db: &Db, req: &YieldsRequest) -> Result<Yields, LookupError> {
    known(db, &req.area, &req.area_label).await?;
    let mut out = Yields {
        status: Answer::NotAvailable,
        reason: Some(NO_FEED.into()),
        area: req.area_label.clone(),
        bedroom_band: req.bedroom_band,
        min_listings: MIN_LISTINGS,
        valuation_vintage: None,
        avm_reason: None,
        months: None,
        notes: NOTES.to_vec(),
    };
    if observation(db).await?.is_none() {
        return Ok(out);
    }
    let (rows, snaps) = area_listings(db, &req.area, None, req.bedroom_band).await?;
    let mut cells: BTreeMap<String, Cell> = BTreeMap::new();
    for r in &rows {
        let own = snaps.get(&r.listing_id).map_or(&[][..], Vec::as_slice);
        let Some((l, _)) = listed(r, own) else {
            continue;
        };
        let cell = cells.entry(month_label(l.first.0)).or_default();
        match r.channel.as_str() {
            "rent" => cell.0.push((l.first.1, r.uprn)),
            "sale" => cell.1.push(l.first.1),
            _ => {}
        }
    }
    let vintage = valuation::latest_vintage(db).await?;
    let values: Option<HashMap<i64, f64>> = match &vintage {
        None => {
            out.avm_reason = Some(
                "no valuation vintage is built (cargo xtask build values the register), so no property has a valuation".into(),
            );
            None
        }
        Some(v) => {
            out.valuation_vintage = Some(v.vintage_key.clone());
            let mut uprns: Vec<i64> = cells
                .values()
                .flat_map(|c| c.0.iter().filter_map(|(_, u)| *u))
                .collect();
            uprns.sort_unstable();
            uprns.dedup();
            Some(
                valuation::valuations_of(db, &uprns)
                    .await?
                    .into_iter()
                    .filter(|r| r.as_of == v.as_of && r.model_version == v.model_version)
                    .filter_map(|r| Some((r.uprn, r.value.filter(|x| *x > 0.0)?)))
                    .collect(),
            )
        }
    };
    let in_range = |m: &String| {
        req.start.as_ref().is_none_or(|s| m >= s) && req.end.as_ref().is_none_or(|e| m <= e)
    };
    let mut months: Vec<YieldMonth> = cells
        .into_iter()
        .filter(|(m, _)| in_range(m))
        .map(|(period, (rents, sales))| {
            let r: Vec<f64> = rents.iter().map(|(p, _)| *p as f64).collect();
            let s: Vec<f64> = sales.iter().map(|p| *p as f64).collect();
            let (rm, sm) = (quantile(&r, 0.5), quantile(&s, 0.5));
            let asking = match (rm, sm) {
                (Some(rm), Some(sm))
                    if r.len() >= MIN_LISTINGS && s.len() >= MIN_LISTINGS && sm > 0.0 =>
                {
                    Some(yield4(12.0 * rm / sm))
                }
                _ => None,
            };
            let (avm, avm_n) = match &values {
                None => (None, None),
                Some(values) => {
                    let y: Vec<f64> = rents
                        .iter()
                        .filter_map(|(p, u)| Some(12.0 * *p as f64 / values.get(&(*u)?)?))
                        .collect();
                    let med = if y.len() >= MIN_LISTINGS {
                        quantile(&y, 0.5).map(yield4)
                    } else {
                        None
                    };
                    (med, Some(y.len() as i64))
                }
            };
            YieldMonth {
                period,
                rent_n: r.len() as i64,
                rent_median_pcm: rm.map(|v| v.round() as i64),
                sale_n: s.len() as i64,
                sale_median: sm.map(|v| v.round() as i64),
                gross_yield_asking: asking,
                gross_yield_avm_median: avm,
                gross_yield_avm_n: avm_n,
            }
        })
        .collect();
    let extra = months.len().saturating_sub(req.months);
    months.drain(..extra);
    out.status = Answer::Ok;
    out.reason = None;
    out.months = Some(months);
    Ok(out)
}
