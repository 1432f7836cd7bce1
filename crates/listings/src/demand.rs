//! Supply and demand of an area's listings (`/v1/market/supply-demand`), computed at call time
//! from the stored listings, their snapshots and the registered sales (Price Paid).
//!
//! Two parts. **Live stock today**: the listings live on the feed's latest sighting (`as_of`;
//! live as the stock series defines it, [`crate::market`]), their median age on the market
//! (days from first sighting to `as_of`) and how many are new homes. **The monthly flow**: the
//! rows of the listings operation ([`crate::supply`]) with, per month, the stock live on the
//! month's last observed day and, on sale rows of a whole area (no bedroom band), the category A
//! sales registered in the area in the month and the months of inventory, `stock / sales`.
//! Price Paid registers sales, not lettings, and records no bedrooms: rent rows and a bedroom
//! band have no sales and no months of inventory, with the reason.

use crate::market::{Answer, BedroomBand, Channel, NO_FEED, live_runs, observation};
use crate::supply::{self, SupplyMonth, SupplyRequest};
use chrono::{Datelike, NaiveDate};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use terrace_analytics::quantile;
use terrace_store::listings::{self, ListingArea, ListingRow, SnapshotRow};
use terrace_store::{Db, LookupError, sales};

/// A run of days a listing was live: first day, last day, available.
type LiveRun = (NaiveDate, NaiveDate, bool);

/// How many area codes a not-found answer names.
const NEAREST: usize = 5;

/// The `NotFound` of an area nothing places: it names the nearest codes of its kind that are
/// known (districts with listings, local authorities of the directory), by edit distance.
pub(crate) async fn unknown_area(db: &Db, area: &ListingArea, label: &str) -> LookupError {
    let (code, lad) = match area {
        ListingArea::National => return LookupError::NotFound(format!("area {label}")),
        ListingArea::PostcodePrefix(p) => (p.as_str(), false),
        ListingArea::LocalAuthority(c) => (c.as_str(), true),
    };
    let codes = match listings::area_codes(db, lad).await {
        Ok(c) => c,
        Err(e) => return LookupError::Store(e),
    };
    let mut scored: Vec<(usize, &String)> = codes
        .iter()
        .map(|k| (strsim::levenshtein(k, code), k))
        .collect();
    scored.sort();
    let kind = if lad { "lad" } else { "district" };
    let near: Vec<String> = scored
        .into_iter()
        .take(NEAREST)
        .map(|(_, k)| format!("{kind}:{k}"))
        .collect();
    if near.is_empty() {
        LookupError::NotFound(format!("area {label}"))
    } else {
        LookupError::NotFound(format!("area {label} (nearest: {})", near.join(", ")))
    }
}

/// The area is known, or its `NotFound` naming the nearest.
pub(crate) async fn known(db: &Db, area: &ListingArea, label: &str) -> Result<(), LookupError> {
    if listings::area_known(db, area).await? {
        Ok(())
    } else {
        Err(unknown_area(db, area, label).await)
    }
}

/// The listings of an area on a channel (either when `None`) and bedroom band, with their
/// snapshots by listing id.
pub(crate) async fn area_listings(
    db: &Db,
    area: &ListingArea,
    channel: Option<Channel>,
    band: Option<BedroomBand>,
) -> Result<(Vec<ListingRow>, HashMap<String, Vec<SnapshotRow>>), LookupError> {
    let rows: Vec<ListingRow> = listings::listings_in_area(db, area)
        .await?
        .into_iter()
        .filter(|l| channel.is_none_or(|c| l.channel == c.as_str()))
        .filter(|l| band.is_none_or(|b| b.contains(l.bedrooms)))
        .collect();
    let ids: Vec<String> = rows.iter().map(|r| r.listing_id.clone()).collect();
    let mut snaps: HashMap<String, Vec<SnapshotRow>> = HashMap::new();
    for s in listings::snapshots_of(db, &ids).await? {
        snaps.entry(s.listing_id.clone()).or_default().push(s);
    }
    Ok((rows, snaps))
}

/// The last day of a `YYYY-MM` month.
pub(crate) fn month_end(period: &str) -> Option<NaiveDate> {
    let y: i32 = period.get(..4)?.parse().ok()?;
    let m: u32 = period.get(5..7)?.parse().ok()?;
    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    NaiveDate::from_ymd_opt(ny, nm, 1)?.pred_opt()
}

/// The first day of a `YYYY-MM` month.
pub(crate) fn month_start(period: &str) -> Option<NaiveDate> {
    let y: i32 = period.get(..4)?.parse().ok()?;
    let m: u32 = period.get(5..7)?.parse().ok()?;
    NaiveDate::from_ymd_opt(y, m, 1)
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LiveStock {
    /// The day the stock is read on: the feed's latest sighting (the service's "today" for
    /// listings: nothing later has been observed).
    pub as_of: NaiveDate,
    /// Listings live on `as_of` (any status but withdrawn or removed).
    pub live_n: i64,
    /// Of those, listings whose status was available (not under offer, sold or let agreed).
    pub available_n: i64,
    /// Median days from a live listing's first sighting to `as_of`; null without a live
    /// listing. A listing first seen before observation began is only as old as observation.
    pub median_days_on_market: Option<f64>,
    /// Live listings the feed marks as new homes.
    pub new_homes_n: i64,
    /// Live listings whose feed does not say whether they are new homes.
    pub new_home_unknown_n: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DemandMonth {
    /// The monthly flow: the row of `/v1/market/listings` for the month.
    #[serde(flatten)]
    pub flow: SupplyMonth,
    /// Listings live on the month's last day (or on the feed's latest sighting in the month it
    /// falls in); null for a month that ends before observation began.
    pub stock_end_n: Option<i64>,
    /// Category A sales registered in the area that completed in the month; null where sales
    /// are not known (rent rows, a bedroom band, a month after the latest loaded sale, no Price
    /// Paid loaded): see `sales_basis`.
    pub registered_sales_n: Option<i64>,
    /// `stock_end_n / registered_sales_n`, to two decimals; null where either is unknown or no
    /// sale was registered in the month (never a division by zero).
    pub months_of_inventory: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SupplyDemand {
    pub status: Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub area: String,
    pub channel: Channel,
    pub bedroom_band: Option<BedroomBand>,
    /// The first day any feed observed: stock is observed forwards only.
    pub observed_since: Option<NaiveDate>,
    /// Live stock on the feed's latest sighting; absent when no feed is loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stock: Option<LiveStock>,
    /// Where the months' registered sales come from, or why they are not known.
    pub sales_basis: String,
    /// The latest completion date of any loaded registered sale; months after its month have
    /// no sales.
    pub sales_known_through: Option<NaiveDate>,
    /// One row per month with a listing first priced or cut in it, oldest first; absent when no
    /// feed is loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub months: Option<Vec<DemandMonth>>,
    pub notes: Vec<&'static str>,
}

const NOTES: [&str; 4] = [
    "Stock is observed forwards only from observed_since: the portals keep no exit dates, so the past is not reconstructed.",
    "months_of_inventory is the stock live at the month's end over the category A sales registered in the area that completed in the month: registration lags completion by weeks to months, so the latest months' sales are incomplete and their months of inventory too high until they are registered.",
    "The flow fields are those of /v1/market/listings: listings_added_n is the never-reduced cohort, and sold_matched_n is a match-rate-limited subset never to be divided by listings_added_n.",
    "Prices are asking prices (rents per calendar month), not achieved prices.",
];

/// Live stock of an area on the feed's latest sighting and the monthly flow with months of
/// inventory. `NotFound` (naming the nearest) for an area nothing places there.
pub async fn supply_demand(db: &Db, req: &SupplyRequest) -> Result<SupplyDemand, LookupError> {
    known(db, &req.area, &req.area_label).await?;
    let mut out = SupplyDemand {
        status: Answer::NotAvailable,
        reason: Some(NO_FEED.into()),
        area: req.area_label.clone(),
        channel: req.channel,
        bedroom_band: req.bedroom_band,
        observed_since: None,
        stock: None,
        sales_basis: String::new(),
        sales_known_through: None,
        months: None,
        notes: NOTES.to_vec(),
    };
    let sales_through = sales::latest_sale_date(db).await?;
    out.sales_known_through = sales_through;
    let Some((since, until)) = observation(db).await? else {
        out.sales_basis = "not read: no listings feed is loaded".into();
        return Ok(out);
    };
    let (since, until) = (since.date(), until.date());
    let flow = supply::supply_series(db, req)
        .await?
        .months
        .unwrap_or_default();
    let (rows, snaps) = area_listings(db, &req.area, Some(req.channel), req.bedroom_band).await?;
    let runs: Vec<(&ListingRow, Vec<LiveRun>)> = rows
        .iter()
        .map(|l| {
            let own = snaps.get(&l.listing_id).map_or(&[][..], Vec::as_slice);
            (l, live_runs(l, own, until))
        })
        .collect();
    let live_on = |d: NaiveDate| -> Vec<(&ListingRow, bool)> {
        runs.iter()
            .filter_map(|(l, rs)| {
                rs.iter()
                    .find(|(a, b, _)| *a <= d && d <= *b)
                    .map(|(_, _, avail)| (*l, *avail))
            })
            .collect()
    };
    let today = live_on(until);
    let ages: Vec<f64> = today
        .iter()
        .map(|(l, _)| (until - l.first_seen.date().max(since)).num_days() as f64)
        .collect();
    out.stock = Some(LiveStock {
        as_of: until,
        live_n: today.len() as i64,
        available_n: today.iter().filter(|(_, a)| *a).count() as i64,
        median_days_on_market: quantile(&ages, 0.5).map(|v| (v * 10.0).round() / 10.0),
        new_homes_n: today
            .iter()
            .filter(|(l, _)| l.new_home == Some(true))
            .count() as i64,
        new_home_unknown_n: today.iter().filter(|(l, _)| l.new_home.is_none()).count() as i64,
    });

    // Registered sales per month, where they can be known.
    let sales_by_month: Option<BTreeMap<String, i64>> = match (req.channel, req.bedroom_band) {
        (Channel::Rent, _) => {
            out.sales_basis = "not known: Price Paid registers sales, not lettings".into();
            None
        }
        (Channel::Sale, Some(_)) => {
            out.sales_basis = "not known: Price Paid records no bedrooms, so a bedroom band has no registered sales".into();
            None
        }
        (Channel::Sale, None) => match (sales_through, flow.first(), flow.last()) {
            (None, _, _) => {
                out.sales_basis = "not known: no Price Paid data is loaded".into();
                None
            }
            (Some(_), Some(first), Some(last)) => {
                out.sales_basis = "HM Land Registry Price Paid, category A sales registered in the area, by completion month".into();
                let from = month_start(&first.period).unwrap_or(since);
                let to = month_end(&last.period).unwrap_or(until);
                let mut by: BTreeMap<String, i64> = BTreeMap::new();
                for s in sales::category_a_sales_in_area(db, &req.area, from, to).await? {
                    *by.entry(format!("{:04}-{:02}", s.date.year(), s.date.month()))
                        .or_default() += 1;
                }
                Some(by)
            }
            (Some(_), _, _) => {
                out.sales_basis = "HM Land Registry Price Paid, category A sales registered in the area, by completion month".into();
                Some(BTreeMap::new())
            }
        },
    };
    let through_month = sales_through.map(|d| format!("{:04}-{:02}", d.year(), d.month()));
    let months = flow
        .into_iter()
        .map(|f| {
            let day = month_end(&f.period).map(|d| d.min(until));
            let stock_end_n = day.filter(|d| *d >= since).map(|d| live_on(d).len() as i64);
            let registered_sales_n = match (&sales_by_month, &through_month) {
                (Some(by), Some(t)) if f.period <= *t => {
                    Some(by.get(&f.period).copied().unwrap_or(0))
                }
                _ => None,
            };
            let months_of_inventory = match (stock_end_n, registered_sales_n) {
                (Some(s), Some(n)) if n > 0 => Some((s as f64 / n as f64 * 100.0).round() / 100.0),
                _ => None,
            };
            DemandMonth {
                flow: f,
                stock_end_n,
                registered_sales_n,
                months_of_inventory,
            }
        })
        .collect();
    out.status = Answer::Ok;
    out.reason = None;
    out.observed_since = Some(since);
    out.months = Some(months);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn month_bounds() {
        let d = |y, m, dd| NaiveDate::from_ymd_opt(y, m, dd).expect("day");
        assert_eq!(month_end("2024-02"), Some(d(2024, 2, 29)));
        assert_eq!(month_end("2023-12"), Some(d(2023, 12, 31)));
        assert_eq!(month_start("2023-12"), Some(d(2023, 12, 1)));
        assert_eq!(month_end("2023"), None);
    }
}
