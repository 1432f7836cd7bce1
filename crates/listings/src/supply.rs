//! Monthly supply statistics of an area's listings (`/v1/market/listings`), computed from the
//! stored listings and snapshots at call time.
//!
//! A listing belongs to the month of its first priced snapshot (its cohort). Per month:
//! `new_listings_n` (the cohort), `listings_added_n` (the cohort's never-reduced listings: no
//! snapshot priced below an earlier one), `listings_reduced_n` (listings of any cohort with a
//! reduction dated in the month), `reduction_share` (the share of the cohort reduced since),
//! the quartiles of the cohort's first asking price (or rent per calendar month), the median per
//! square metre over the listings that state a floor area (with that n), the new-home share over
//! the listings that say, and agent concentration over the cohort (HHI on shares in percent,
//! 0 to 10,000, and the top three agents' share). On sale rows, the asking-to-sold ratio and days
//! to completion are medians over the cohort's listings matched to a registered sale (the
//! listing's UPRN sold after its first sighting and within [`MATCH_DAYS`]): that subset's n is
//! `sold_matched_n`, and its figures are never divided by the added count.

use crate::market::{Answer, BedroomBand, Channel, NO_FEED, observation};
use chrono::{Datelike, NaiveDate};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use terrace_analytics::quantile;
use terrace_store::listings::{self, ListingArea, ListingRow, SnapshotRow};
use terrace_store::{LookupError, sales};

/// A registered sale matches a listing when it completed this many days or fewer after the
/// listing's first sighting.
pub const MATCH_DAYS: i64 = 365;

/// A checked supply request.
#[derive(Debug, Clone)]
pub struct SupplyRequest {
    pub area: ListingArea,
    pub area_label: String,
    pub channel: Channel,
    pub bedroom_band: Option<BedroomBand>,
    /// First and last month, `YYYY-MM`, inclusive.
    pub start: Option<String>,
    pub end: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SupplyMonth {
    /// `YYYY-MM`.
    pub period: String,
    /// Listings first priced in the month (the cohort).
    pub new_listings_n: i64,
    /// The cohort's never-reduced listings.
    pub listings_added_n: i64,
    /// Listings of any cohort whose price was cut in the month.
    pub listings_reduced_n: i64,
    /// The share of the cohort reduced since it was listed.
    pub reduction_share: Option<f64>,
    /// The cohort's first asking price (sale) or rent per calendar month (rent), pounds.
    pub price_p25: Option<i64>,
    pub price_median: Option<i64>,
    pub price_p75: Option<i64>,
    /// Median first asking price (or rent) per square metre of stated floor area.
    pub price_per_m2_median: Option<f64>,
    /// Listings behind `price_per_m2_median`.
    pub price_per_m2_n: i64,
    /// New homes as a share of the cohort's listings that state whether they are new.
    pub new_build_share: Option<f64>,
    /// Herfindahl-Hirschman index of the cohort's agents (shares in percent, 0 to 10,000).
    pub agent_hhi: Option<f64>,
    /// The three largest agents' share of the cohort.
    pub agent_top3_share: Option<f64>,
    /// Sale rows: the cohort's listings matched to a registered sale (the subset the next two
    /// figures are computed on); absent on rent rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sold_matched_n: Option<i64>,
    /// Sale rows: median of the registered price over the last asking price before completion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asking_to_sold_ratio: Option<f64>,
    /// Sale rows: median days from first sighting to completion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub days_to_completion_median: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SupplySeries {
    pub status: Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub area: String,
    pub channel: Channel,
    pub bedroom_band: Option<BedroomBand>,
    /// One row per month with a listing, oldest first; absent when no feed is loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub months: Option<Vec<SupplyMonth>>,
    pub notes: Vec<&'static str>,
}

const NOTES: [&str; 3] = [
    "listings_added_n is the never-reduced cohort: listings first priced in the month whose price never fell afterwards; a cohort's reduced listings are in reduction_share, and listings_reduced_n counts cuts dated in the month whatever the cohort.",
    "sold_matched_n is the subset of the cohort matched to a registered sale by UPRN (completion after the first sighting and within 365 days): asking_to_sold_ratio and days_to_completion_median are computed on it alone and must never be divided by listings_added_n; registration lags completion, so recent months' subsets grow later.",
    "Prices are asking prices (rents per calendar month), not achieved prices.",
];

pub(crate) fn month_label(d: NaiveDate) -> String {
    format!("{:04}-{:02}", d.year(), d.month())
}

pub(crate) fn share(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| (part as f64 / whole as f64 * 10_000.0).round() / 10_000.0)
}

/// HHI (percent shares) and the top three's share of counts by agent.
fn concentration(agents: &[String]) -> (Option<f64>, Option<f64>) {
    let n = agents.len();
    if n == 0 {
        return (None, None);
    }
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for a in agents {
        *by.entry(a.as_str()).or_default() += 1;
    }
    let mut counts: Vec<usize> = by.into_values().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let hhi: f64 = counts
        .iter()
        .map(|c| (*c as f64 / n as f64 * 100.0).powi(2))
        .sum();
    let top3: usize = counts.iter().take(3).sum();
    (Some((hhi * 10.0).round() / 10.0), share(top3, n))
}

/// One listing's place in its cohort.
pub(crate) struct Listed<'a> {
    pub(crate) row: &'a ListingRow,
    pub(crate) first: (NaiveDate, i64),
    pub(crate) reduced: bool,
    /// (day, price) of every priced snapshot, oldest first.
    pub(crate) prices: Vec<(NaiveDate, i64)>,
}

/// The listing's priced snapshots, its first price and whether it was ever cut; and the days of
/// its cuts.
pub(crate) fn listed<'a>(
    row: &'a ListingRow,
    snaps: &[SnapshotRow],
) -> Option<(Listed<'a>, Vec<NaiveDate>)> {
    let prices: Vec<(NaiveDate, i64)> = snaps
        .iter()
        .filter_map(|s| Some((s.time.date(), s.price.filter(|p| *p > 0)?)))
        .collect();
    let first = *prices.first()?;
    let cuts: Vec<NaiveDate> = prices
        .windows(2)
        .filter(|w| w[1].1 < w[0].1)
        .map(|w| w[1].0)
        .collect();
    Some((
        Listed {
            row,
            first,
            reduced: !cuts.is_empty(),
            prices,
        },
        cuts,
    ))
}

/// The registered sale matched to a sale listing: (completion day, price), the first completion
/// after the first sighting and within [`MATCH_DAYS`].
fn matched_sale(
    l: &Listed<'_>,
    sold: &HashMap<i64, Vec<(NaiveDate, i64)>>,
) -> Option<(NaiveDate, i64)> {
    let uprn = l.row.uprn?;
    sold.get(&uprn)?
        .iter()
        .filter(|(d, _)| *d > l.first.0 && (*d - l.first.0).num_days() <= MATCH_DAYS)
        .min()
        .copied()
}

fn month_row(
    channel: Channel,
    period: String,
    cohort: &[&Listed<'_>],
    cuts: usize,
    sold: &HashMap<i64, Vec<(NaiveDate, i64)>>,
) -> SupplyMonth {
    let n = cohort.len();
    let added = cohort.iter().filter(|l| !l.reduced).count();
    let prices: Vec<f64> = cohort.iter().map(|l| l.first.1 as f64).collect();
    let q = |p: f64| quantile(&prices, p).map(|v| v.round() as i64);
    let psm: Vec<f64> = cohort
        .iter()
        .filter_map(|l| Some(l.first.1 as f64 / l.row.floor_area_m2.filter(|a| *a > 0.0)?))
        .collect();
    let stated: Vec<bool> = cohort.iter().filter_map(|l| l.row.new_home).collect();
    let agents: Vec<String> = cohort
        .iter()
        .filter_map(|l| {
            l.row
                .agent
                .clone()
                .or_else(|| l.row.branch.as_ref().map(|b| format!("branch {b}")))
        })
        .collect();
    let (hhi, top3) = concentration(&agents);
    let (matched_n, ratio, days) = if channel == Channel::Sale {
        let matched: Vec<(f64, f64)> = cohort
            .iter()
            .filter_map(|l| {
                let (day, price) = matched_sale(l, sold)?;
                let asking = l.prices.iter().rev().find(|(d, _)| *d <= day)?.1;
                Some((
                    price as f64 / asking as f64,
                    (day - l.first.0).num_days() as f64,
                ))
            })
            .collect();
        let r: Vec<f64> = matched.iter().map(|m| m.0).collect();
        let d: Vec<f64> = matched.iter().map(|m| m.1).collect();
        (
            Some(matched.len() as i64),
            quantile(&r, 0.5).map(|v| (v * 10_000.0).round() / 10_000.0),
            quantile(&d, 0.5),
        )
    } else {
        (None, None, None)
    };
    SupplyMonth {
        period,
        new_listings_n: n as i64,
        listings_added_n: added as i64,
        listings_reduced_n: cuts as i64,
        reduction_share: share(n - added, n),
        price_p25: q(0.25),
        price_median: q(0.5),
        price_p75: q(0.75),
        price_per_m2_median: quantile(&psm, 0.5).map(|v| (v * 100.0).round() / 100.0),
        price_per_m2_n: psm.len() as i64,
        new_build_share: share(stated.iter().filter(|b| **b).count(), stated.len()),
        agent_hhi: hhi,
        agent_top3_share: top3,
        sold_matched_n: matched_n,
        asking_to_sold_ratio: ratio,
        days_to_completion_median: days,
    }
}

/// The monthly supply statistics of an area. `NotFound` (naming the nearest) for an area nothing
/// places there.
pub async fn supply_series(
    db: &terrace_store::Db,
    req: &SupplyRequest,
) -> Result<SupplySeries, LookupError> {
    crate::demand::known(db, &req.area, &req.area_label).await?;
    let mut out = SupplySeries {
        status: Answer::NotAvailable,
        reason: Some(NO_FEED.into()),
        area: req.area_label.clone(),
        channel: req.channel,
        bedroom_band: req.bedroom_band,
        months: None,
        notes: NOTES.to_vec(),
    };
    if observation(db).await?.is_none() {
        return Ok(out);
    }
    let rows: Vec<ListingRow> = listings::listings_in_area(db, &req.area)
        .await?
        .into_iter()
        .filter(|l| l.channel == req.channel.as_str())
        .filter(|l| req.bedroom_band.is_none_or(|b| b.contains(l.bedrooms)))
        .collect();
    let ids: Vec<String> = rows.iter().map(|r| r.listing_id.clone()).collect();
    let mut snaps: HashMap<String, Vec<SnapshotRow>> = HashMap::new();
    for s in listings::snapshots_of(db, &ids).await? {
        snaps.entry(s.listing_id.clone()).or_default().push(s);
    }
    let mut cohorts: BTreeMap<String, Vec<Listed<'_>>> = BTreeMap::new();
    let mut cut_months: BTreeMap<String, usize> = BTreeMap::new();
    for r in &rows {
        let own = snaps.get(&r.listing_id).map_or(&[][..], Vec::as_slice);
        if let Some((l, cuts)) = listed(r, own) {
            for c in cuts {
                *cut_months.entry(month_label(c)).or_default() += 1;
            }
            cohorts.entry(month_label(l.first.0)).or_default().push(l);
        }
    }
    let mut sold: HashMap<i64, Vec<(NaiveDate, i64)>> = HashMap::new();
    if req.channel == Channel::Sale {
        let mut uprns: Vec<i64> = rows.iter().filter_map(|r| r.uprn).collect();
        uprns.sort_unstable();
        uprns.dedup();
        for s in sales::sales_for_uprns(db, &uprns).await? {
            if let Some(u) = s.uprn {
                sold.entry(u).or_default().push((s.date, s.price));
            }
        }
    }
    let in_range = |m: &String| {
        req.start.as_ref().is_none_or(|s| m >= s) && req.end.as_ref().is_none_or(|e| m <= e)
    };
    let mut periods: Vec<String> = cohorts.keys().chain(cut_months.keys()).cloned().collect();
    periods.sort();
    periods.dedup();
    let months = periods
        .into_iter()
        .filter(|m| in_range(m))
        .map(|m| {
            let cohort: Vec<&Listed<'_>> = cohorts
                .get(&m)
                .map(|c| c.iter().collect())
                .unwrap_or_default();
            let cuts = cut_months.get(&m).copied().unwrap_or(0);
            month_row(req.channel, m, &cohort, cuts, &sold)
        })
        .collect();
    out.status = Answer::Ok;
    out.reason = None;
    out.months = Some(months);
    Ok(out)
}
