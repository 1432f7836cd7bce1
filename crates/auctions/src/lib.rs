//! Auctions (specification part 4.6): lots, quarterly statistics per postcode district,
//! comparables on achieved prices against the service's valuation, the discount to valuation at
//! which auctions clear, and distressed properties (offered repeatedly, never sold).
//!
//! Everything reads the operator's auction lot feed (docs/DATA.md, "Auction lots"): no open
//! dataset of UK auction results exists. Without a feed every answer is `not_available` with
//! [`NO_FEED`], never an empty list that would read as a quiet market.
//!
//! Two rules hold in every answer: a sold lot with no disclosed price is `not_disclosed`, never
//! unsold (`achieved_price_status`), and a guide is the auctioneer's indication, never a price
//! (it is its own object, and statistics keep guides and achieved prices as separate
//! populations, each with its own `n`).

use chrono::{Datelike, NaiveDate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use terrace_core::cursor::{CursorError, CursorScope, Page};
use terrace_core::{Unavailable, Violation};
use terrace_store::auctions::{self as st, LotFilter, LotRow};
use terrace_store::memo::Memo;
use terrace_store::{Db, StoreError, address, meta};

mod analysis;
pub use analysis::*;

/// The reason every auctions answer gives when no lot feed is loaded.
pub const NO_FEED: &str = "no_auction_feed: no auction lot feed is loaded (no open dataset of UK auction results exists; an operator supplies the lots of the auction houses they follow as the auction lot feed, docs/DATA.md)";

/// What a guide is.
pub const GUIDE_NOTE: &str = "a guide is the auctioneer's indication of the expected price (usually of the reserve), not a price: never read it as one";

#[derive(Debug, thiserror::Error)]
pub enum AuctionsError {
    /// Input that breaks a rule of the operation, located inside the query.
    #[error("invalid input")]
    Invalid(Vec<Violation>),
    /// What is not known (a UPRN not in the register, a cursor naming no page).
    #[error("{0} not found")]
    NotFound(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<terrace_valuation::ValuationError> for AuctionsError {
    fn from(e: terrace_valuation::ValuationError) -> Self {
        match e {
            terrace_valuation::ValuationError::NotFound(s) => AuctionsError::NotFound(s),
            terrace_valuation::ValuationError::Invalid(v) => AuctionsError::Invalid(v),
            terrace_valuation::ValuationError::Store(s) => AuctionsError::Store(s),
        }
    }
}

/// Whether an answer comes from a loaded feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// The figures are from the loaded lot feed.
    Ok,
    /// No lot feed is loaded: see `reason`.
    NotAvailable,
}

/// A value, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Maybe<T> {
    Known(T),
    NotAvailable(Unavailable),
}

/// The kind of a lot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LotType {
    Residential,
    Commercial,
    Land,
    GroundRent,
    Mixed,
}

impl LotType {
    pub fn as_str(self) -> &'static str {
        match self {
            LotType::Residential => "residential",
            LotType::Commercial => "commercial",
            LotType::Land => "land",
            LotType::GroundRent => "ground_rent",
            LotType::Mixed => "mixed",
        }
    }

    fn parse(s: &str) -> Option<LotType> {
        [
            LotType::Residential,
            LotType::Commercial,
            LotType::Land,
            LotType::GroundRent,
            LotType::Mixed,
        ]
        .into_iter()
        .find(|t| t.as_str() == s)
    }
}

/// What happened to a lot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Sold,
    Unsold,
    Withdrawn,
    SoldPrior,
    SoldAfter,
    Postponed,
    /// The feed did not say.
    Unknown,
}

impl Outcome {
    pub fn parse(s: &str) -> Outcome {
        match s {
            "sold" => Outcome::Sold,
            "unsold" => Outcome::Unsold,
            "withdrawn" => Outcome::Withdrawn,
            "sold_prior" => Outcome::SoldPrior,
            "sold_after" => Outcome::SoldAfter,
            "postponed" => Outcome::Postponed,
            _ => Outcome::Unknown,
        }
    }

    /// A sale: at the auction, before it or after it.
    pub fn is_sale(self) -> bool {
        matches!(
            self,
            Outcome::Sold | Outcome::SoldPrior | Outcome::SoldAfter
        )
    }

    /// Offered to bidders (or sold around the sale): not withdrawn, postponed or unknown.
    pub fn was_offered(self) -> bool {
        matches!(
            self,
            Outcome::Sold | Outcome::SoldPrior | Outcome::SoldAfter | Outcome::Unsold
        )
    }
}

/// What the guide says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GuideKind {
    /// One figure (`£250,000`).
    Single,
    /// A range (`£200,000 - £250,000`).
    Range,
    /// A floor (`£250,000+`).
    AtLeast,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Guide {
    pub kind: GuideKind,
    pub low_gbp: i64,
    /// Null for `at_least`.
    pub high_gbp: Option<i64>,
}

impl Guide {
    fn of(low: Option<i64>, high: Option<i64>) -> Option<Guide> {
        let low = low?;
        let kind = match high {
            None => GuideKind::AtLeast,
            Some(h) if h == low => GuideKind::Single,
            Some(_) => GuideKind::Range,
        };
        Some(Guide {
            kind,
            low_gbp: low,
            high_gbp: high,
        })
    }

    /// The figure statistics read: the midpoint of a range, else the low.
    pub fn point(&self) -> f64 {
        match self.high_gbp {
            Some(h) => (self.low_gbp + h) as f64 / 2.0,
            None => self.low_gbp as f64,
        }
    }
}

/// Whether a lot's achieved price is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AchievedStatus {
    /// The house published the hammer price.
    Disclosed,
    /// The lot sold but the house did not publish the price: not unsold.
    NotDisclosed,
    /// The lot did not sell (unsold, withdrawn, postponed) or its outcome is unknown.
    NoSale,
}

/// How a lot's UPRN was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchStatus {
    /// The feed gave the UPRN.
    Feed,
    /// The address matcher linked the lot's address and postcode (score given).
    AddressMatcher,
    /// No confident match: the lot is kept without a UPRN.
    Unmatched,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct UprnMatch {
    pub status: MatchStatus,
    /// The matcher's score (0 to 1), for `address_matcher`.
    pub score: Option<f64>,
}

/// One lot of one auction.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Lot {
    /// `house|YYYY-MM-DD|lot number`.
    pub lot_id: String,
    pub auction_house: String,
    pub auction_date: NaiveDate,
    pub lot_number: String,
    pub address: String,
    pub postcode: Option<String>,
    pub postcode_district: Option<String>,
    pub uprn: Option<i64>,
    pub uprn_match: UprnMatch,
    pub lot_type: LotType,
    /// `freehold`, `leasehold` or `unknown`; null when the feed did not say.
    pub tenure: Option<String>,
    pub lease_years_remaining: Option<i32>,
    /// Null when the catalogue did not say.
    pub vacant: Option<bool>,
    pub rent_passing_pa_gbp: Option<i64>,
    /// The auctioneer's guide: not a price. Null when none was published.
    pub guide: Option<Guide>,
    pub outcome: Outcome,
    /// The hammer price where the house published it; see `achieved_price_status`.
    pub achieved_price_gbp: Option<i64>,
    pub achieved_price_status: AchievedStatus,
    /// As the catalogue quoted it (per cent).
    pub net_initial_yield_pct: Option<f64>,
    pub source_url: Option<String>,
    pub description: Option<String>,
    /// The property the lot offers: every offer of one property across auctions shares it
    /// (same UPRN, or the same normalised address and postcode).
    pub property_id: Option<String>,
}

impl Lot {
    pub fn from_row(r: LotRow) -> Lot {
        let outcome = Outcome::parse(&r.outcome);
        let achieved_price_status = match (outcome.is_sale(), r.hammer_price) {
            (true, Some(_)) => AchievedStatus::Disclosed,
            (true, None) => AchievedStatus::NotDisclosed,
            (false, _) => AchievedStatus::NoSale,
        };
        let status = match (r.uprn, r.match_method.as_deref()) {
            (None, _) => MatchStatus::Unmatched,
            (Some(_), Some("feed")) => MatchStatus::Feed,
            (Some(_), _) => MatchStatus::AddressMatcher,
        };
        Lot {
            lot_id: r.lot_key,
            auction_house: r.auction_house,
            auction_date: r.auction_date,
            lot_number: r.lot_number,
            address: r.address,
            postcode: r.postcode,
            postcode_district: r.district,
            uprn: r.uprn,
            uprn_match: UprnMatch {
                status,
                score: r
                    .match_score
                    .filter(|_| status == MatchStatus::AddressMatcher),
            },
            lot_type: LotType::parse(&r.lot_type).unwrap_or(LotType::Mixed),
            tenure: r.tenure,
            lease_years_remaining: r.lease_years_remaining,
            vacant: r.vacant,
            rent_passing_pa_gbp: r.rent_passing_pa,
            guide: Guide::of(r.guide_low, r.guide_high),
            outcome,
            achieved_price_gbp: r.hammer_price.filter(|_| outcome.is_sale()),
            achieved_price_status,
            net_initial_yield_pct: r.net_initial_yield_pct,
            source_url: r.source_url,
            description: r.description,
            property_id: r.property_key,
        }
    }
}

/// One auction house the feed covers.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HouseCoverage {
    pub auction_house: String,
    pub first_auction: Option<NaiveDate>,
    pub last_auction: Option<NaiveDate>,
    pub lots: i64,
}

/// Which houses the loaded feed covers, and the period each covers.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Coverage {
    pub houses: Vec<HouseCoverage>,
    pub note: &'static str,
}

/// The coverage of the loaded feed, or `None` without a feed.
pub async fn coverage(db: &Db) -> Result<Option<Coverage>, AuctionsError> {
    let houses: Vec<HouseCoverage> = st::coverage(db)
        .await?
        .into_iter()
        .map(|(h, first, last, n)| HouseCoverage {
            auction_house: h,
            first_auction: first,
            last_auction: last,
            lots: n,
        })
        .collect();
    if houses.is_empty() {
        return Ok(None);
    }
    Ok(Some(Coverage {
        houses,
        note: "only the houses the operator's feed follows, each from its first to its last auction in the feed; other houses' lots and other periods are not covered (absent, not zero)",
    }))
}

/// The feed's coverage kept in memory until a load changes rows (`DataVersion`), read at most
/// once a second: counting every lot of every house is a scan of the whole feed (about 0.2 s at
/// 500,000 lots on SQLite, measured with `cargo xtask bench auctions`), and lots and stats give
/// it with every page. One per process, shared by the calls.
pub struct CoverageMemo(Memo<(), Coverage>);

impl CoverageMemo {
    const WATCHED: &[meta::Key] = &[meta::Key::DataVersion];
    const RECHECK: std::time::Duration = std::time::Duration::from_secs(1);
}

impl Default for CoverageMemo {
    fn default() -> Self {
        CoverageMemo(Memo::new(CoverageMemo::WATCHED, CoverageMemo::RECHECK, 1))
    }
}

/// [`coverage`], from `memo` when it holds it. No feed is never kept: the first call after a
/// feed's first load reads it at once.
pub async fn coverage_held(
    db: &Db,
    memo: &CoverageMemo,
) -> Result<Option<Coverage>, AuctionsError> {
    let held = memo
        .0
        .get_or_fill(db, (), || async {
            coverage(db)
                .await
                .map_err(Fill::Failed)?
                .ok_or(Fill::NoFeed)
        })
        .await;
    match held {
        Ok(c) => Ok(Some(c)),
        Err(Fill::NoFeed) => Ok(None),
        Err(Fill::Failed(e)) => Err(e),
    }
}

/// Why a coverage fill kept nothing.
enum Fill {
    NoFeed,
    Failed(AuctionsError),
}

impl From<StoreError> for Fill {
    fn from(e: StoreError) -> Self {
        Fill::Failed(e.into())
    }
}

/// Whether any lot feed is loaded (one indexed probe, not a count).
pub async fn feed_loaded(db: &Db) -> Result<bool, AuctionsError> {
    Ok(st::any_lot(db).await?)
}

// ---------------------------------------------------------------------------------------------
// Lots.

/// The filters of a lots walk (they bind its cursor).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LotFilters {
    pub date_from: Option<NaiveDate>,
    pub date_to: Option<NaiveDate>,
    pub sold_only: bool,
    pub auctioneer: Option<String>,
    pub with_achieved_price: bool,
    pub with_yield: bool,
    pub postcode_district: Option<String>,
}

impl LotFilters {
    fn store(&self) -> LotFilter {
        LotFilter {
            date_from: self.date_from,
            date_to: self.date_to,
            sold_only: self.sold_only,
            auction_house: self.auctioneer.clone(),
            with_achieved_price: self.with_achieved_price,
            with_yield: self.with_yield,
            district: self.postcode_district.clone(),
            ..LotFilter::default()
        }
    }
}

/// A checked lots request: the filters, the page size and the key after which the page starts.
#[derive(Debug, Clone, PartialEq)]
pub struct LotsQuery {
    pub filters: LotFilters,
    pub limit: usize,
    pub after: Option<(NaiveDate, String)>,
}

/// The cursor scope of a lots walk.
pub fn lots_scope(filters: &LotFilters) -> CursorScope {
    CursorScope::new("auctions_lots", filters)
}

/// Reads a lots cursor: a malformed token is a violation at `["cursor"]` (422); one this query
/// did not write names no page (404).
pub fn lots_after(
    filters: &LotFilters,
    cursor: Option<&str>,
) -> Result<Option<(NaiveDate, String)>, AuctionsError> {
    match lots_scope(filters).decode_opt(cursor) {
        Ok(None) => Ok(None),
        Ok(Some(parts)) => match parts.as_slice() {
            [d, k] => match NaiveDate::parse_from_str(d, "%Y-%m-%d") {
                Ok(d) => Ok(Some((d, k.clone()))),
                Err(_) => Err(AuctionsError::NotFound(format!(
                    "a page of auctions_lots at cursor {cursor:?}"
                ))),
            },
            _ => Err(AuctionsError::NotFound(format!(
                "a page of auctions_lots at cursor {cursor:?}"
            ))),
        },
        Err(CursorError::Malformed(v)) => Err(AuctionsError::Invalid(vec![v])),
        Err(CursorError::NotThisQuery(s)) => Err(AuctionsError::NotFound(s)),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LotsAnswer {
    pub status: Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The houses the feed covers and the period each covers (`meta.coverage`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<LotsMeta>,
    /// Newest auction first (ties by lot id, descending); absent without a feed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Vec<Lot>>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LotsMeta {
    pub coverage: Coverage,
    pub guide_note: &'static str,
    pub achieved_note: &'static str,
}

/// A page of lots (the coverage from `memo`).
pub async fn lots(
    db: &Db,
    memo: &CoverageMemo,
    q: &LotsQuery,
) -> Result<LotsAnswer, AuctionsError> {
    let Some(coverage) = coverage_held(db, memo).await? else {
        return Ok(LotsAnswer {
            status: Answer::NotAvailable,
            reason: Some(NO_FEED.into()),
            meta: None,
            data: None,
            next_cursor: None,
        });
    };
    let rows = st::lots_page(db, &q.filters.store(), q.after.clone(), q.limit as i64 + 1).await?;
    let lots: Vec<Lot> = rows.into_iter().map(Lot::from_row).collect();
    let page = Page::from_overfetch(lots, q.limit, &lots_scope(&q.filters), |l| {
        vec![l.auction_date.to_string(), l.lot_id.clone()]
    });
    Ok(LotsAnswer {
        status: Answer::Ok,
        reason: None,
        meta: Some(LotsMeta {
            coverage,
            guide_note: GUIDE_NOTE,
            achieved_note: ACHIEVED_NOTE,
        }),
        data: Some(page.data),
        next_cursor: page.next_cursor,
    })
}

/// What a missing achieved price means.
pub const ACHIEVED_NOTE: &str = "achieved_price_gbp is the hammer price where the house published it; a null on a sold lot is not_disclosed, never unsold (achieved_price_status says which)";

// ---------------------------------------------------------------------------------------------
// Shared helpers.

/// A quarter's first day.
pub fn quarter_start(d: NaiveDate) -> NaiveDate {
    let m = (d.month0() / 3) * 3 + 1;
    NaiveDate::from_ymd_opt(d.year(), m, 1).unwrap_or(d)
}

/// `YYYY-Qn`.
pub fn quarter_label(d: NaiveDate) -> String {
    format!("{}-Q{}", d.year(), d.month0() / 3 + 1)
}

/// The median of sorted values.
pub(crate) fn median(sorted: &[f64]) -> Option<f64> {
    quantile(sorted, 0.5)
}

/// A quantile of sorted values by linear interpolation (type 7).
pub(crate) fn quantile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (h - lo as f64))
}

pub(crate) fn round_to(x: f64, dp: i32) -> f64 {
    let f = 10f64.powi(dp);
    (x * f).round() / f
}

/// The postcode district of a UPRN in the register (404 when the UPRN is not there).
pub(crate) async fn district_of(db: &Db, uprn: i64) -> Result<Option<String>, AuctionsError> {
    let rows = address::addresses_by_uprn(db, &[uprn]).await?;
    let Some(a) = rows.into_iter().next() else {
        return Err(AuctionsError::NotFound(format!("UPRN {uprn}")));
    };
    Ok(a.postcode
        .as_deref()
        .and_then(|p| p.split(' ').next())
        .map(str::to_string))
}

/// Groups rows by a key, in key order.
pub(crate) fn group<K: Ord, T>(rows: Vec<T>, key: impl Fn(&T) -> K) -> BTreeMap<K, Vec<T>> {
    let mut out: BTreeMap<K, Vec<T>> = BTreeMap::new();
    for r in rows {
        out.entry(key(&r)).or_default().push(r);
    }
    out
}
