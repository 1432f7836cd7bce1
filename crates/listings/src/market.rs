//! The listings market read from the stored snapshots: a property's listing history, the live
//! stock of an area by day, and the agents of an area.
//!
//! Every answer says whether a listings feed is loaded: without one it is `not_available` with
//! the reason, never an empty series that would read as a quiet market. Stock is observed
//! forwards only, from the first snapshot any feed gave (`observed_since`): the portals keep no
//! exit dates, so the past cannot be reconstructed.
//!
//! A listing is live on a day from its first sighting until the day before its removal (the Real
//! Time Data Feed's `removeproperty`) or, without a removal, until its last sighting (BLM files
//! and the JSON-lines feed) or the end of observation (the Real Time Data Feed, which sends only
//! changes); and not while its status is `withdrawn` or `removed`. Prices are asking prices,
//! rents per calendar month.

use chrono::{Days, Months, NaiveDate, NaiveDateTime};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use terrace_store::listings::{self, ListingArea, ListingRow, SnapshotRow};
use terrace_store::{LookupError, address};

/// The reason every listings answer gives when no feed is loaded.
pub const NO_FEED: &str = "no_listings_feed: no listings feed is loaded (portal listings are not open data; an operator supplies a BLM, RTDF or JSON-lines feed)";

/// The most days one stock answer carries.
pub const STOCK_DAYS_MAX: i64 = 1_100;

/// How far back the agents ranking reads, from the feed's latest sighting.
pub const AGENT_WINDOW_MONTHS: u32 = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// The figures are from the loaded feed.
    Ok,
    /// No listings feed is loaded: see `reason`.
    NotAvailable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    Sale,
    Rent,
}

impl Channel {
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Sale => "sale",
            Channel::Rent => "rent",
        }
    }
}

/// A bedroom band: `studio` (0), `1`, `2`, `3`, or `4_plus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
pub enum BedroomBand {
    #[serde(rename = "studio")]
    Studio,
    #[serde(rename = "1")]
    One,
    #[serde(rename = "2")]
    Two,
    #[serde(rename = "3")]
    Three,
    #[serde(rename = "4_plus")]
    FourPlus,
}

impl BedroomBand {
    pub fn contains(self, bedrooms: Option<i32>) -> bool {
        match (self, bedrooms) {
            (_, None) => false,
            (BedroomBand::Studio, Some(b)) => b == 0,
            (BedroomBand::One, Some(b)) => b == 1,
            (BedroomBand::Two, Some(b)) => b == 2,
            (BedroomBand::Three, Some(b)) => b == 3,
            (BedroomBand::FourPlus, Some(b)) => b >= 4,
        }
    }
}

/// The feed's extent: when observation began and its latest sighting; `None` without a feed.
pub async fn observation(
    db: &terrace_store::Db,
) -> Result<Option<(NaiveDateTime, NaiveDateTime)>, LookupError> {
    // No snapshot, no observation (a snapshot is always of a stored listing, so this one probe
    // also says whether any listing is loaded).
    let Some(first) = listings::first_snapshot_time(db).await? else {
        return Ok(None);
    };
    let last = listings::latest_sighting(db).await?.unwrap_or(first);
    Ok(Some((first, last)))
}

// ---------------------------------------------------------------------------------------------
// A property's listing history.

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HistorySnapshot {
    pub listing_id: String,
    pub channel: String,
    pub time: NaiveDateTime,
    /// Asking price (sale) or asking rent per calendar month (rent), pounds; null when the
    /// snapshot gave none.
    pub price: Option<i64>,
    pub status: Option<String>,
    /// On a `removed` snapshot, the reason the feed gave.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removal_reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PriceTrajectory {
    /// Priced snapshots behind it (at least two).
    pub n_priced: usize,
    pub first_price: i64,
    pub latest_price: i64,
    pub change_gbp: i64,
    /// (latest − first) / first, to four decimals.
    pub change_share: f64,
    pub reductions: usize,
    pub increases: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct UprnMatch {
    /// `feed` (the feed gave the UPRN) or `address_matcher`.
    pub method: Option<String>,
    /// The matcher's score, when the matcher found it.
    pub score: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ListingSummary {
    pub listing_id: String,
    pub channel: String,
    /// The feed it last came in: `jsonl`, `blm` or `rtdf`.
    pub feed: Option<String>,
    pub address: Option<String>,
    pub postcode: Option<String>,
    pub uprn_match: UprnMatch,
    pub agent: Option<String>,
    pub branch: Option<String>,
    pub bedrooms: Option<i32>,
    pub property_type: Option<String>,
    pub floor_area_m2: Option<f64>,
    pub tenure: Option<String>,
    pub unexpired_years: Option<i32>,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    pub new_home: Option<bool>,
    pub first_seen: NaiveDateTime,
    pub last_seen: Option<NaiveDateTime>,
    pub last_status: Option<String>,
    pub removed_at: Option<NaiveDateTime>,
    pub removal_reason: Option<String>,
    /// Present where two or more snapshots carry a price.
    pub price_trajectory: Option<PriceTrajectory>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ListingHistory {
    pub uprn: i64,
    pub status: Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When the feed's first snapshot was taken: nothing before it was observed.
    pub observed_since: Option<NaiveDateTime>,
    /// Every listing of the property, most recently seen first.
    pub listings: Vec<ListingSummary>,
    /// Every snapshot of those listings, newest first.
    pub snapshots: Vec<HistorySnapshot>,
    pub notes: Vec<&'static str>,
}

fn trajectory(snaps: &[SnapshotRow]) -> Option<PriceTrajectory> {
    let prices: Vec<i64> = snaps.iter().filter_map(|s| s.price).collect();
    if prices.len() < 2 {
        return None;
    }
    let (first, latest) = (prices[0], prices[prices.len() - 1]);
    let steps = prices.windows(2);
    Some(PriceTrajectory {
        n_priced: prices.len(),
        first_price: first,
        latest_price: latest,
        change_gbp: latest - first,
        change_share: if first > 0 {
            ((latest - first) as f64 / first as f64 * 1e4).round() / 1e4
        } else {
            0.0
        },
        reductions: steps.clone().filter(|w| w[1] < w[0]).count(),
        increases: steps.filter(|w| w[1] > w[0]).count(),
    })
}

/// Every listing snapshot of a UPRN. `NotFound` when the UPRN is neither in the register nor
/// in any listing.
pub async fn history(db: &terrace_store::Db, uprn: i64) -> Result<ListingHistory, LookupError> {
    let notes = vec![
        "Asking prices and rents (per calendar month), not achieved prices.",
        "Observed from observed_since only: a listing before the feed began is not known.",
    ];
    let Some((since, _)) = observation(db).await? else {
        if address::address(db, uprn).await?.is_none() {
            return Err(LookupError::NotFound(format!("UPRN {uprn}")));
        }
        return Ok(ListingHistory {
            uprn,
            status: Answer::NotAvailable,
            reason: Some(NO_FEED.into()),
            observed_since: None,
            listings: vec![],
            snapshots: vec![],
            notes,
        });
    };
    let rows = listings::listings_of_uprn(db, uprn).await?;
    if rows.is_empty() && address::address(db, uprn).await?.is_none() {
        return Err(LookupError::NotFound(format!("UPRN {uprn}")));
    }
    let ids: Vec<String> = rows.iter().map(|r| r.listing_id.clone()).collect();
    let mut by_id: BTreeMap<String, Vec<SnapshotRow>> = BTreeMap::new();
    for s in listings::snapshots_of(db, &ids).await? {
        by_id.entry(s.listing_id.clone()).or_default().push(s);
    }
    let channel: HashMap<&str, &str> = rows
        .iter()
        .map(|r| (r.listing_id.as_str(), r.channel.as_str()))
        .collect();
    let mut snapshots: Vec<HistorySnapshot> = by_id
        .values()
        .flatten()
        .map(|s| HistorySnapshot {
            listing_id: s.listing_id.clone(),
            channel: channel
                .get(s.listing_id.as_str())
                .copied()
                .unwrap_or_default()
                .to_string(),
            time: s.time,
            price: s.price,
            status: s.status.clone(),
            removal_reason: s.removal_reason.clone(),
        })
        .collect();
    snapshots.sort_by(|a, b| (b.time, &b.listing_id).cmp(&(a.time, &a.listing_id)));
    let listings = rows
        .into_iter()
        .map(|r| {
            let own = by_id.get(&r.listing_id).map_or(&[][..], Vec::as_slice);
            ListingSummary {
                price_trajectory: trajectory(own),
                uprn_match: UprnMatch {
                    method: r.uprn_method,
                    score: r.uprn_score,
                },
                listing_id: r.listing_id,
                channel: r.channel,
                feed: r.feed,
                address: r.address,
                postcode: r.postcode,
                agent: r.agent,
                branch: r.branch,
                bedrooms: r.bedrooms,
                property_type: r.property_type,
                floor_area_m2: r.floor_area_m2,
                tenure: r.tenure,
                unexpired_years: r.unexpired_years,
                latitude: r.latitude,
                longitude: r.longitude,
                new_home: r.new_home,
                first_seen: r.first_seen,
                last_seen: r.last_seen,
                last_status: r.last_status,
                removed_at: r.removed_at,
                removal_reason: r.removal_reason,
            }
        })
        .collect();
    Ok(ListingHistory {
        uprn,
        status: Answer::Ok,
        reason: None,
        observed_since: Some(since),
        listings,
        snapshots,
        notes,
    })
}

// ---------------------------------------------------------------------------------------------
// Live stock by day.

/// The days a listing was live and, of those, available: `[from, to]` runs by status.
pub fn live_runs(
    l: &ListingRow,
    snaps: &[SnapshotRow],
    observed_until: NaiveDate,
) -> Vec<(NaiveDate, NaiveDate, bool)> {
    let start = l.first_seen.date();
    let end = match l.removed_at {
        Some(t) => match t.date().checked_sub_days(Days::new(1)) {
            Some(d) => d,
            None => return vec![],
        },
        None if l.feed.as_deref() == Some("rtdf") => observed_until,
        None => l.last_seen.map_or(start, |t| t.date()),
    };
    if end < start {
        return vec![];
    }
    // The status in force from each snapshot's day on (a later snapshot on the same day wins).
    let mut changes: Vec<(NaiveDate, Option<&str>)> = Vec::new();
    for s in snaps {
        let d = s.time.date().max(start);
        match changes.last_mut() {
            Some(last) if last.0 == d => last.1 = s.status.as_deref(),
            _ => changes.push((d, s.status.as_deref())),
        }
    }
    if changes.first().is_none_or(|c| c.0 > start) {
        changes.insert(0, (start, None));
    }
    let mut out = Vec::new();
    for (i, (from, status)) in changes.iter().enumerate() {
        if *from > end {
            break;
        }
        let to = changes
            .get(i + 1)
            .and_then(|n| n.0.checked_sub_days(Days::new(1)))
            .map_or(end, |d| d.min(end));
        match status {
            Some("withdrawn" | "removed") => {}
            Some("available") | None => out.push((*from, to, true)),
            Some(_) => out.push((*from, to, false)),
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StockPoint {
    pub date: NaiveDate,
    /// Listings on the market that day (any status but withdrawn or removed).
    pub live: i64,
    /// Of those, listings whose status was available (not under offer, sold or let agreed).
    pub available: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ListingStock {
    pub status: Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The area as asked (`national`, a district, or a local authority GSS code).
    pub area: String,
    pub channel: Option<Channel>,
    pub bedroom_band: Option<BedroomBand>,
    /// The first day any feed observed; no point is earlier.
    pub observed_since: Option<NaiveDate>,
    /// The feed's latest sighting; no point is later.
    pub observed_until: Option<NaiveDate>,
    /// One point a day, oldest first; null when no feed is loaded.
    pub points: Option<Vec<StockPoint>>,
    pub notes: Vec<&'static str>,
}

const STOCK_NOTES: [&str; 2] = [
    "Observed forwards only from observed_since: the portals keep no exit dates, so stock before the first snapshot cannot be reconstructed and a short series is expected.",
    "A listing is live from its first sighting until the day before its removal, or without a removal until its last sighting (BLM, JSON lines) or the end of observation (Real Time Data Feed, which sends only changes).",
];

/// A checked stock request.
#[derive(Debug, Clone)]
pub struct StockRequest {
    pub area: ListingArea,
    pub area_label: String,
    pub channel: Option<Channel>,
    pub bedroom_band: Option<BedroomBand>,
    pub start: Option<NaiveDate>,
    pub end: Option<NaiveDate>,
}

/// Live listings by day in an area. `NotFound` for an area the postcode directory does not know.
pub async fn listing_stock(
    db: &terrace_store::Db,
    req: &StockRequest,
) -> Result<ListingStock, LookupError> {
    if !listings::area_known(db, &req.area).await? {
        return Err(LookupError::NotFound(format!("area {}", req.area_label)));
    }
    let mut out = ListingStock {
        status: Answer::NotAvailable,
        reason: Some(NO_FEED.into()),
        area: req.area_label.clone(),
        channel: req.channel,
        bedroom_band: req.bedroom_band,
        observed_since: None,
        observed_until: None,
        points: None,
        notes: STOCK_NOTES.to_vec(),
    };
    let Some((since, until)) = observation(db).await? else {
        return Ok(out);
    };
    let (since, until) = (since.date(), until.date());
    let from = req.start.map_or(since, |s| s.max(since));
    let mut to = req.end.map_or(until, |e| e.min(until));
    if (to - from).num_days() >= STOCK_DAYS_MAX {
        to = from + Days::new(STOCK_DAYS_MAX as u64 - 1);
    }
    let rows: Vec<ListingRow> = listings::listings_in_area(db, &req.area)
        .await?
        .into_iter()
        .filter(|l| req.channel.is_none_or(|c| l.channel == c.as_str()))
        .filter(|l| req.bedroom_band.is_none_or(|b| b.contains(l.bedrooms)))
        .collect();
    let ids: Vec<String> = rows.iter().map(|r| r.listing_id.clone()).collect();
    let mut by_id: HashMap<String, Vec<SnapshotRow>> = HashMap::new();
    for s in listings::snapshots_of(db, &ids).await? {
        by_id.entry(s.listing_id.clone()).or_default().push(s);
    }
    let days = if to >= from {
        (to - from).num_days() + 1
    } else {
        0
    };
    let mut live = vec![0i64; days as usize + 1];
    let mut avail = vec![0i64; days as usize + 1];
    for l in &rows {
        let own = by_id.get(&l.listing_id).map_or(&[][..], Vec::as_slice);
        for (a, b, available) in live_runs(l, own, until) {
            let (a, b) = (a.max(from), b.min(to));
            if a > b {
                continue;
            }
            let (i, j) = (
                (a - from).num_days() as usize,
                (b - from).num_days() as usize + 1,
            );
            live[i] += 1;
            live[j] -= 1;
            if available {
                avail[i] += 1;
                avail[j] -= 1;
            }
        }
    }
    let (mut l, mut a) = (0i64, 0i64);
    let points = (0..days as usize)
        .map(|i| {
            l += live[i];
            a += avail[i];
            StockPoint {
                date: from + Days::new(i as u64),
                live: l,
                available: a,
            }
        })
        .collect();
    out.status = Answer::Ok;
    out.reason = None;
    out.observed_since = Some(since);
    out.observed_until = Some(until);
    out.points = Some(points);
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Agents.

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AgentRow {
    pub rank: usize,
    /// The agent's name where the feed gives one, else `branch <id>` (BLM and RTDF name only the
    /// branch).
    pub agent: String,
    /// The branch ids seen for it.
    pub branches: Vec<String>,
    pub listings: usize,
    pub sale_listings: usize,
    pub let_listings: usize,
    /// Median latest asking price of its sale listings (null without one).
    pub sale_median_asking_gbp: Option<i64>,
    /// Median latest asking rent per calendar month of its lettings (null without one).
    pub let_median_asking_pcm_gbp: Option<i64>,
    /// Its share of the area's listings in the window.
    pub share: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AgentsResult {
    pub status: Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub area_id: String,
    /// The window read: listings seen on or after `from` and first seen on or before `to` (the
    /// feed's latest sighting).
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    /// Listings in the window behind the ranking.
    pub n: usize,
    /// Ranked by listing count, then name; null when no feed is loaded.
    pub agents: Option<Vec<AgentRow>>,
    pub notes: Vec<&'static str>,
}

/// Nearest-rank median of a sample.
pub fn median(mut v: Vec<i64>) -> Option<i64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    Some(v[v.len().div_ceil(2) - 1])
}

/// The agents of an area, ranked by how many listings they had in the twelve months to the
/// feed's latest sighting.
pub async fn agents(
    db: &terrace_store::Db,
    area: &ListingArea,
    area_id: &str,
) -> Result<AgentsResult, LookupError> {
    if !listings::area_known(db, area).await? {
        return Err(LookupError::NotFound(format!("area {area_id}")));
    }
    let notes = vec![
        "Asking prices and rents, not achieved ones; counts are listings, not sales.",
        "BLM files and the Real Time Data Feed name the branch, not the agent: such listings are grouped by branch.",
    ];
    let Some((_, until)) = observation(db).await? else {
        return Ok(AgentsResult {
            status: Answer::NotAvailable,
            reason: Some(NO_FEED.into()),
            area_id: area_id.to_string(),
            from: None,
            to: None,
            n: 0,
            agents: None,
            notes,
        });
    };
    let from = until
        .checked_sub_months(Months::new(AGENT_WINDOW_MONTHS))
        .unwrap_or(until);
    let rows: Vec<ListingRow> = listings::listings_in_area(db, area)
        .await?
        .into_iter()
        .filter(|l| l.first_seen <= until && l.last_seen.unwrap_or(l.first_seen) >= from)
        .collect();
    let mut by_agent: BTreeMap<String, Vec<&ListingRow>> = BTreeMap::new();
    for l in &rows {
        let name = match (&l.agent, &l.branch) {
            (Some(a), _) => a.clone(),
            (None, Some(b)) => format!("branch {b}"),
            (None, None) => "unnamed".to_string(),
        };
        by_agent.entry(name).or_default().push(l);
    }
    let n = rows.len();
    let mut ranked: Vec<AgentRow> = by_agent
        .into_iter()
        .map(|(agent, ls)| {
            let mut branches: Vec<String> = ls.iter().filter_map(|l| l.branch.clone()).collect();
            branches.sort();
            branches.dedup();
            let prices = |c: &str| -> Vec<i64> {
                ls.iter()
                    .filter(|l| l.channel == c)
                    .filter_map(|l| l.price)
                    .collect()
            };
            AgentRow {
                rank: 0,
                agent,
                branches,
                listings: ls.len(),
                sale_listings: ls.iter().filter(|l| l.channel == "sale").count(),
                let_listings: ls.iter().filter(|l| l.channel == "rent").count(),
                sale_median_asking_gbp: median(prices("sale")),
                let_median_asking_pcm_gbp: median(prices("rent")),
                share: (ls.len() as f64 / n.max(1) as f64 * 1e4).round() / 1e4,
            }
        })
        .collect();
    ranked.sort_by(|a, b| b.listings.cmp(&a.listings).then(a.agent.cmp(&b.agent)));
    for (i, r) in ranked.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    Ok(AgentsResult {
        status: Answer::Ok,
        reason: None,
        area_id: area_id.to_string(),
        from: Some(from.date()),
        to: Some(until.date()),
        n,
        agents: Some(ranked),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(y: i32, m: u32, d: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, m, d)
            .and_then(|d| d.and_hms_opt(9, 0, 0))
            .expect("date")
    }

    fn listing(feed: &str, first: NaiveDateTime, last: NaiveDateTime) -> ListingRow {
        ListingRow {
            listing_id: "L".into(),
            channel: "sale".into(),
            address: None,
            postcode: None,
            uprn: None,
            price: None,
            bedrooms: None,
            property_type: None,
            agent: None,
            first_seen: first,
            last_seen: Some(last),
            last_status: None,
            source: String::new(),
            updated_at: first,
            floor_area_m2: None,
            tenure: None,
            unexpired_years: None,
            latitude: None,
            longitude: None,
            branch: None,
            new_home: None,
            feed: Some(feed.into()),
            uprn_method: None,
            uprn_score: None,
            removed_at: None,
            removal_reason: None,
        }
    }

    fn snap(time: NaiveDateTime, status: &str) -> SnapshotRow {
        SnapshotRow {
            listing_id: "L".into(),
            time,
            price: Some(1),
            status: Some(status.into()),
            removal_reason: None,
        }
    }

    #[test]
    fn runs_follow_status_and_removal() {
        let d = |y, m, dd| NaiveDate::from_ymd_opt(y, m, dd).expect("date");
        let mut l = listing("rtdf", t(2025, 1, 1), t(2025, 1, 20));
        l.removed_at = Some(t(2025, 2, 1));
        let snaps = [
            snap(t(2025, 1, 1), "available"),
            snap(t(2025, 1, 10), "under_offer"),
            snap(t(2025, 1, 20), "available"),
            snap(t(2025, 2, 1), "removed"),
        ];
        assert_eq!(
            live_runs(&l, &snaps, d(2025, 6, 1)),
            vec![
                (d(2025, 1, 1), d(2025, 1, 9), true),
                (d(2025, 1, 10), d(2025, 1, 19), false),
                (d(2025, 1, 20), d(2025, 1, 31), true),
            ]
        );
        // without a removal, an RTDF listing is live to the end of observation, a BLM one to
        // its last sighting
        let open = listing("rtdf", t(2025, 1, 1), t(2025, 1, 1));
        assert_eq!(
            live_runs(&open, &snaps[..1], d(2025, 3, 1)),
            vec![(d(2025, 1, 1), d(2025, 3, 1), true)]
        );
        let blm = listing("blm", t(2025, 1, 1), t(2025, 1, 8));
        assert_eq!(
            live_runs(&blm, &snaps[..1], d(2025, 3, 1)),
            vec![(d(2025, 1, 1), d(2025, 1, 8), true)]
        );
        let withdrawn = [
            snap(t(2025, 1, 1), "available"),
            snap(t(2025, 1, 5), "withdrawn"),
        ];
        assert_eq!(
            live_runs(&blm, &withdrawn, d(2025, 3, 1)),
            vec![(d(2025, 1, 1), d(2025, 1, 4), true)]
        );
    }

    #[test]
    fn trajectory_needs_two_prices() {
        let mut a = snap(t(2025, 1, 1), "available");
        a.price = Some(300_000);
        let mut b = snap(t(2025, 2, 1), "available");
        b.price = Some(285_000);
        assert_eq!(trajectory(std::slice::from_ref(&a)), None);
        let tr = trajectory(&[a, b]).expect("two prices");
        assert_eq!(
            (tr.change_gbp, tr.reductions, tr.increases),
            (-15_000, 1, 0)
        );
        assert_eq!(tr.change_share, -0.05);
        assert_eq!(median(vec![5, 1, 3, 2]), Some(2));
    }
}
