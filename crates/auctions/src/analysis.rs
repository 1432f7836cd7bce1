//! What the lots add up to: quarterly statistics per district, comparables and the discount to
//! the service's valuation, and distressed properties.

use crate::{
    Answer, AuctionsError, Coverage, CoverageMemo, GUIDE_NOTE, Guide, Lot, LotType, Maybe, NO_FEED,
    Outcome, coverage_held, district_of, feed_loaded, group, median, quantile, quarter_label,
    quarter_start, round_to,
};
use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::Unavailable;
use terrace_store::Db;
use terrace_store::auctions::{self as st, LotFigures, LotFilter, LotRow};
use terrace_valuation::{CarriedValue, Carrier};

/// A population of one figure: how many lots carry it, and its mean and median.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Population {
    pub n: usize,
    pub mean: Option<f64>,
    pub median: Option<f64>,
}

impl Population {
    fn of(mut v: Vec<f64>, dp: i32) -> Population {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let mean = (n > 0).then(|| round_to(v.iter().sum::<f64>() / n as f64, dp));
        Population {
            n,
            mean,
            median: median(&v).map(|m| round_to(m, dp)),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Stats.

#[derive(Debug, Clone, PartialEq)]
pub struct StatsQuery {
    pub postcode_district: Option<String>,
    /// First days of quarters.
    pub quarter_from: Option<NaiveDate>,
    pub quarter_to: Option<NaiveDate>,
    /// `true`: commercial and mixed lots; `false`: the others; absent: all.
    pub is_commercial: Option<bool>,
    pub limit: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StatsRow {
    pub postcode_district: String,
    /// `YYYY-Qn`.
    pub quarter: String,
    pub quarter_start: NaiveDate,
    /// Every lot catalogued in the quarter.
    pub lots: usize,
    /// Lots offered to bidders or sold around the sale (not withdrawn, postponed or unknown).
    pub offered: usize,
    /// Sold at, before or after the auction.
    pub sold: usize,
    pub withdrawn: usize,
    pub postponed: usize,
    /// sold / offered; null when nothing was offered.
    pub sale_rate: Option<f64>,
    /// Guides of every lot with one (midpoint of a range, the low of `£X+`): a guide is not a price.
    pub guide_gbp: Population,
    /// Published hammer prices of sold lots: a different population from `guide_gbp`.
    pub achieved_gbp: Population,
    pub net_initial_yield_pct: Population,
    /// Sold lots with both a guide and a published price.
    pub n_guide_and_achieved: usize,
    /// Whether the two populations allow a comparison (see `comparable_rule`).
    pub comparable: bool,
    /// The median of achieved over guide on the lots with both; only when `comparable`.
    pub median_achieved_over_guide: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StatsAnswer {
    pub status: Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    /// Newest quarter first, then by district; absent without a feed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Vec<StatsRow>>,
    /// Rows beyond `limit` that were left off.
    pub left_off: usize,
    /// Lots of the selection with no postcode (no district): not in any row.
    pub lots_without_district: usize,
    pub populations_note: &'static str,
    pub comparable_rule: &'static str,
}

/// The fewest lots with both figures for `comparable`.
pub const COMPARABLE_MIN: usize = 3;
/// The least share of the achieved population that also has a guide for `comparable`.
pub const COMPARABLE_SHARE: f64 = 0.8;

fn is_commercial(t: &str) -> bool {
    matches!(t, "commercial" | "mixed")
}

pub async fn stats(
    db: &Db,
    memo: &CoverageMemo,
    q: &StatsQuery,
) -> Result<StatsAnswer, AuctionsError> {
    let populations_note = "guide_gbp and achieved_gbp are DIFFERENT POPULATIONS: guides are published for most lots, hammer prices only where the house discloses them, so their means are over different lots and their difference is not a discount; each carries its own n";
    let comparable_rule = "comparable when at least 3 sold lots carry both a guide and a published price and they are at least 80% of the lots with a published price; then median_achieved_over_guide is over those lots";
    let Some(cov) = coverage_held(db, memo).await? else {
        return Ok(StatsAnswer {
            status: Answer::NotAvailable,
            reason: Some(NO_FEED.into()),
            coverage: None,
            data: None,
            left_off: 0,
            lots_without_district: 0,
            populations_note,
            comparable_rule,
        });
    };
    let filter = LotFilter {
        district: q.postcode_district.clone(),
        date_from: q.quarter_from,
        date_to: q
            .quarter_to
            .and_then(|d| d.checked_add_months(chrono::Months::new(3)))
            .and_then(|d| d.pred_opt()),
        ..LotFilter::default()
    };
    let rows: Vec<LotFigures> = st::lot_figures_where(db, &filter)
        .await?
        .into_iter()
        .filter(|r| {
            q.is_commercial
                .is_none_or(|c| is_commercial(&r.lot_type) == c)
        })
        .collect();
    let without = rows.iter().filter(|r| r.district.is_none()).count();
    let groups = group(
        rows.into_iter().filter(|r| r.district.is_some()).collect(),
        |r: &LotFigures| {
            (
                std::cmp::Reverse(quarter_start(r.auction_date)),
                r.district.clone().unwrap_or_default(),
            )
        },
    );
    let total = groups.len();
    let data: Vec<StatsRow> = groups
        .into_iter()
        .take(q.limit)
        .map(|((std::cmp::Reverse(qs), d), lots)| stats_row(d, qs, &lots))
        .collect();
    Ok(StatsAnswer {
        status: Answer::Ok,
        reason: None,
        coverage: Some(cov),
        left_off: total.saturating_sub(data.len()),
        data: Some(data),
        lots_without_district: without,
        populations_note,
        comparable_rule,
    })
}

fn stats_row(district: String, qs: NaiveDate, lots: &[LotFigures]) -> StatsRow {
    let outcomes: Vec<Outcome> = lots.iter().map(|l| Outcome::parse(&l.outcome)).collect();
    let offered = outcomes.iter().filter(|o| o.was_offered()).count();
    let sold = outcomes.iter().filter(|o| o.is_sale()).count();
    let guide = |l: &LotFigures| Guide::of(l.guide_low, l.guide_high).map(|g| g.point());
    let achieved = |l: &LotFigures| {
        l.hammer_price
            .filter(|_| Outcome::parse(&l.outcome).is_sale())
            .map(|p| p as f64)
    };
    let guides: Vec<f64> = lots.iter().filter_map(guide).collect();
    let prices: Vec<f64> = lots.iter().filter_map(achieved).collect();
    let yields: Vec<f64> = lots
        .iter()
        .filter_map(|l| l.net_initial_yield_pct)
        .collect();
    let mut both: Vec<f64> = lots
        .iter()
        .filter_map(|l| Some(achieved(l)? / guide(l)?))
        .collect();
    both.sort_by(f64::total_cmp);
    let comparable =
        both.len() >= COMPARABLE_MIN && both.len() as f64 >= COMPARABLE_SHARE * prices.len() as f64;
    StatsRow {
        postcode_district: district,
        quarter: quarter_label(qs),
        quarter_start: qs,
        lots: lots.len(),
        offered,
        sold,
        withdrawn: outcomes
            .iter()
            .filter(|o| **o == Outcome::Withdrawn)
            .count(),
        postponed: outcomes
            .iter()
            .filter(|o| **o == Outcome::Postponed)
            .count(),
        sale_rate: (offered > 0).then(|| round_to(sold as f64 / offered as f64, 4)),
        guide_gbp: Population::of(guides, 0),
        achieved_gbp: Population::of(prices, 0),
        net_initial_yield_pct: Population::of(yields, 2),
        n_guide_and_achieved: both.len(),
        comparable,
        median_achieved_over_guide: if comparable {
            median(&both).map(|m| round_to(m, 4))
        } else {
            None
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Comps and discount: lots against the valuation carried back to the auction month.

/// The basis every comparison with the valuation states.
pub const VALUATION_BASIS: &str = "the service's valuation is stored for the latest vintage only: it is carried back to the auction month by the published house price index (district, else postcode area, else national), as the full valuation's back-series carries it (value x level(auction month) / level(vintage month)) - a constructed value, not a valuation made at the time";

/// The subject of a comps request.
#[derive(Debug, Clone, PartialEq)]
pub enum CompsSubject {
    Uprn(i64),
    District(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct CompsQuery {
    pub subject: CompsSubject,
    pub lot_type: LotType,
    pub date_from: Option<NaiveDate>,
    pub date_to: Option<NaiveDate>,
    pub limit: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CompLot {
    pub lot: Lot,
    /// The lot's property's valuation carried back to the auction month, or why there is none.
    pub valuation_at_auction: Maybe<CarriedValue>,
    /// achieved / valuation at the auction month, when both are known.
    pub achieved_over_valuation: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CompsSubjectOut {
    pub uprn: Option<i64>,
    pub postcode_district: Option<String>,
    pub lot_type: LotType,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CompsAnswer {
    pub status: Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub subject: CompsSubjectOut,
    /// Sold lots of the district and type with a published price, newest first; absent without
    /// a feed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparables: Option<Vec<CompLot>>,
    /// Comparables whose valuation could be carried back.
    pub n_with_valuation: usize,
    pub valuation_basis: &'static str,
}

async fn carried(
    db: &Db,
    carrier: &mut Carrier,
    lot: &Lot,
) -> Result<Maybe<CarriedValue>, AuctionsError> {
    let Some(uprn) = lot.uprn else {
        return Ok(Maybe::NotAvailable(Unavailable::new(
            "the lot is not matched to a UPRN, so it has no valuation",
        )));
    };
    let month = lot.auction_date.format("%Y-%m").to_string();
    Ok(match carrier.value_at(db, uprn, &month).await? {
        Ok(v) => Maybe::Known(v),
        Err(u) => Maybe::NotAvailable(u),
    })
}

fn ratio(lot: &Lot, v: &Maybe<CarriedValue>) -> Option<f64> {
    match (lot.achieved_price_gbp, v) {
        (Some(p), Maybe::Known(v)) if v.value > 0 => Some(round_to(p as f64 / v.value as f64, 4)),
        _ => None,
    }
}

pub async fn comps(db: &Db, q: &CompsQuery) -> Result<CompsAnswer, AuctionsError> {
    let (uprn, district) = match &q.subject {
        CompsSubject::Uprn(u) => (Some(*u), district_of(db, *u).await?),
        CompsSubject::District(d) => (None, Some(d.clone())),
    };
    let subject = CompsSubjectOut {
        uprn,
        postcode_district: district.clone(),
        lot_type: q.lot_type,
    };
    if !feed_loaded(db).await? {
        return Ok(CompsAnswer {
            status: Answer::NotAvailable,
            reason: Some(NO_FEED.into()),
            subject,
            comparables: None,
            n_with_valuation: 0,
            valuation_basis: VALUATION_BASIS,
        });
    }
    let Some(district) = district else {
        return Ok(CompsAnswer {
            status: Answer::NotAvailable,
            reason: Some(
                "the UPRN has no postcode in the register, so no district to draw comparables from"
                    .into(),
            ),
            subject,
            comparables: None,
            n_with_valuation: 0,
            valuation_basis: VALUATION_BASIS,
        });
    };
    let filter = LotFilter {
        district: Some(district),
        date_from: q.date_from,
        date_to: q.date_to,
        sold_only: true,
        with_achieved_price: true,
        lot_types: Some(vec![q.lot_type.as_str().to_string()]),
        ..LotFilter::default()
    };
    let mut rows = st::lots_where(db, &filter).await?;
    rows.reverse();
    rows.truncate(q.limit);
    let mut carrier = Carrier::default();
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let lot = Lot::from_row(r);
        let v = carried(db, &mut carrier, &lot).await?;
        out.push(CompLot {
            achieved_over_valuation: ratio(&lot, &v),
            valuation_at_auction: v,
            lot,
        });
    }
    Ok(CompsAnswer {
        status: Answer::Ok,
        reason: None,
        subject,
        n_with_valuation: out
            .iter()
            .filter(|c| matches!(c.valuation_at_auction, Maybe::Known(_)))
            .count(),
        comparables: Some(out),
        valuation_basis: VALUATION_BASIS,
    })
}

#[derive(Debug, Clone, PartialEq)]
pub struct DiscountQuery {
    pub postcode_district: Option<String>,
    pub date_from: Option<NaiveDate>,
    pub date_to: Option<NaiveDate>,
    pub lot_type: Option<LotType>,
}

/// Why sold lots did not enter the discount.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Excluded {
    /// Sold, price not published.
    pub price_not_disclosed: usize,
    /// Published price, but no UPRN match.
    pub unmatched: usize,
    /// Matched, but no valuation could be carried to the auction month.
    pub no_valuation: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DiscountAnswer {
    pub status: Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Sold lots with both a published price and a valuation at the auction month.
    pub n: usize,
    /// The median of achieved / valuation over those lots; null when n is 0.
    pub median_achieved_over_valuation: Option<f64>,
    /// (median - 1) x 100: negative when auctions clear below valuation.
    pub median_discount_pct: Option<f64>,
    pub p25: Option<f64>,
    pub p75: Option<f64>,
    pub interquartile_range: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded: Option<Excluded>,
    pub valuation_basis: &'static str,
}

pub async fn discount(db: &Db, q: &DiscountQuery) -> Result<DiscountAnswer, AuctionsError> {
    let empty = |status, reason: Option<String>| DiscountAnswer {
        status,
        reason,
        n: 0,
        median_achieved_over_valuation: None,
        median_discount_pct: None,
        p25: None,
        p75: None,
        interquartile_range: None,
        excluded: None,
        valuation_basis: VALUATION_BASIS,
    };
    if !feed_loaded(db).await? {
        return Ok(empty(Answer::NotAvailable, Some(NO_FEED.into())));
    }
    let filter = LotFilter {
        district: q.postcode_district.clone(),
        date_from: q.date_from,
        date_to: q.date_to,
        sold_only: true,
        lot_types: q.lot_type.map(|t| vec![t.as_str().to_string()]),
        ..LotFilter::default()
    };
    let rows = st::lots_where(db, &filter).await?;
    let mut carrier = Carrier::default();
    let mut ex = Excluded {
        price_not_disclosed: 0,
        unmatched: 0,
        no_valuation: 0,
    };
    let mut ratios = Vec::new();
    for r in rows {
        let lot = Lot::from_row(r);
        if lot.achieved_price_gbp.is_none() {
            ex.price_not_disclosed += 1;
            continue;
        }
        if lot.uprn.is_none() {
            ex.unmatched += 1;
            continue;
        }
        let v = carried(db, &mut carrier, &lot).await?;
        match ratio(&lot, &v) {
            Some(x) => ratios.push(x),
            None => ex.no_valuation += 1,
        }
    }
    ratios.sort_by(f64::total_cmp);
    let med = median(&ratios);
    let (p25, p75) = (quantile(&ratios, 0.25), quantile(&ratios, 0.75));
    let r4 = |x: Option<f64>| x.map(|v| round_to(v, 4));
    Ok(DiscountAnswer {
        status: Answer::Ok,
        reason: None,
        n: ratios.len(),
        median_achieved_over_valuation: r4(med),
        median_discount_pct: med.map(|m| round_to((m - 1.0) * 100.0, 1)),
        p25: r4(p25),
        p75: r4(p75),
        interquartile_range: r4(p75.zip(p25).map(|(a, b)| a - b)),
        excluded: Some(ex),
        valuation_basis: VALUATION_BASIS,
    })
}

// ---------------------------------------------------------------------------------------------
// Distressed.

#[derive(Debug, Clone, PartialEq)]
pub struct DistressedQuery {
    pub postcode_district: Option<String>,
    /// At least this many offers (2 or more).
    pub min_offers: usize,
    pub limit: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Offer {
    pub lot_id: String,
    pub auction_house: String,
    pub auction_date: NaiveDate,
    /// Not a price.
    pub guide: Option<Guide>,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DistressedProperty {
    pub property_id: String,
    pub uprn: Option<i64>,
    pub address: String,
    pub postcode: Option<String>,
    pub lot_type: LotType,
    pub offers_n: usize,
    /// Oldest first.
    pub offers: Vec<Offer>,
    /// The last guide's low over the first's, minus 1, in per cent (null without both).
    pub guide_change_pct: Option<f64>,
    /// A lot description names receivers, LPA receivers, administrators or mortgagees in
    /// possession: a text heuristic, not a registered fact.
    pub receivership_text: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DistressedAnswer {
    pub status: Answer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Most offers first, then the latest offer newest first; absent without a feed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Vec<DistressedProperty>>,
    pub left_off: usize,
    pub rule: &'static str,
    pub guide_note: &'static str,
}

const RECEIVERSHIP: [&str; 5] = [
    "receiver",
    "administrator",
    "mortgagee",
    "in possession",
    "repossess",
];

pub async fn distressed(db: &Db, q: &DistressedQuery) -> Result<DistressedAnswer, AuctionsError> {
    let rule = "properties (lots sharing a UPRN or a normalised address and postcode) offered at least min_offers times in the feed and never sold at, before or after any of those auctions; receivership_text is a text heuristic on the lot descriptions";
    if !feed_loaded(db).await? {
        return Ok(DistressedAnswer {
            status: Answer::NotAvailable,
            reason: Some(NO_FEED.into()),
            data: None,
            left_off: 0,
            rule,
            guide_note: GUIDE_NOTE,
        });
    }
    let filter = LotFilter {
        district: q.postcode_district.clone(),
        ..LotFilter::default()
    };
    // The properties of the district's lots, then every offer of those properties (an earlier
    // offer may carry another postcode spelling, but shares the property key).
    let mut keys: Vec<String> = st::lots_where(db, &filter)
        .await?
        .into_iter()
        .map(|r| r.property_key.unwrap_or(r.lot_key))
        .collect();
    keys.sort();
    keys.dedup();
    let rows = st::lots_of_properties(db, &keys).await?;
    let by_property = group(rows, |r: &LotRow| {
        r.property_key.clone().unwrap_or_else(|| r.lot_key.clone())
    });
    let mut out: Vec<DistressedProperty> = by_property
        .into_iter()
        .filter(|(_, lots)| lots.len() >= q.min_offers)
        .filter(|(_, lots)| !lots.iter().any(|l| Outcome::parse(&l.outcome).is_sale()))
        .filter_map(|(key, lots)| {
            let last = lots.last()?.clone();
            let guides: Vec<i64> = lots.iter().filter_map(|l| l.guide_low).collect();
            let change = match (guides.first(), guides.last()) {
                (Some(&a), Some(&b)) if guides.len() >= 2 && a > 0 => {
                    Some(round_to((b as f64 / a as f64 - 1.0) * 100.0, 1))
                }
                _ => None,
            };
            let receivership = lots.iter().any(|l| {
                l.description.as_deref().is_some_and(|d| {
                    let d = d.to_ascii_lowercase();
                    RECEIVERSHIP.iter().any(|w| d.contains(w))
                })
            });
            Some(DistressedProperty {
                property_id: key,
                uprn: lots.iter().find_map(|l| l.uprn),
                address: last.address.clone(),
                postcode: last.postcode.clone(),
                lot_type: LotType::parse(&last.lot_type).unwrap_or(LotType::Mixed),
                offers_n: lots.len(),
                offers: lots
                    .iter()
                    .map(|l| Offer {
                        lot_id: l.lot_key.clone(),
                        auction_house: l.auction_house.clone(),
                        auction_date: l.auction_date,
                        guide: Guide::of(l.guide_low, l.guide_high),
                        outcome: Outcome::parse(&l.outcome),
                    })
                    .collect(),
                guide_change_pct: change,
                receivership_text: receivership,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        b.offers_n
            .cmp(&a.offers_n)
            .then_with(|| {
                let last = |p: &DistressedProperty| p.offers.last().map(|o| o.auction_date);
                last(b).cmp(&last(a))
            })
            .then_with(|| a.property_id.cmp(&b.property_id))
    });
    let total = out.len();
    out.truncate(q.limit);
    Ok(DistressedAnswer {
        status: Answer::Ok,
        reason: None,
        left_off: total - out.len(),
        data: Some(out),
        rule,
        guide_note: GUIDE_NOTE,
    })
}
