//! Commercial sourcing: the rated stock of a local authority in the newest loaded list, filtered
//! by sector and rateable value, in UARN order (keyset pages), each with its history across the
//! lists and the freeholder where a company title links.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::{CursorScope, Page};
use terrace_store::auctions::{self as st_auctions, LotFilter};
use terrace_store::rating::{self as rt, RatingEntryRow};
use terrace_store::{Db, LookupError};

use crate::owner::{self, OwnerTitle};
use crate::rent_index::{self, LICENCE};
use crate::sector::{AreaScope, Sector};
use crate::{Block, Hereditament, hereditament_of, na};

/// The operation id the cursor is bound to.
pub const SCOPE: &str = "sourcing_commercial";

/// A checked sourcing request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourcingQuery {
    /// The local authority's GSS code.
    pub lad_code: String,
    pub sector: Sector,
    pub min_rateable_value: Option<i64>,
    pub max_rateable_value: Option<i64>,
    #[serde(skip)]
    pub limit: usize,
    /// The UARN after which the page starts (from the cursor).
    #[serde(skip)]
    pub after: Option<i64>,
}

/// The cursor scope of a query: its filters without `limit` and the cursor.
pub fn sourcing_scope(q: &SourcingQuery) -> CursorScope {
    CursorScope::new(SCOPE, q)
}

/// One list's entry of a hereditament.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ListValue {
    pub list_year: i32,
    pub valuation_date: Option<NaiveDate>,
    /// Pounds a year at the valuation date; null for a proxy deletion or an unvalued entry.
    pub rateable_value: Option<i64>,
    pub description_code: Option<String>,
    pub effective_date: NaiveDate,
}

/// The measured floor area of a row (its newest list with a summary valuation on an area
/// basis).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FloorArea {
    pub list_year: i32,
    /// Square metres, as the VOA's summary valuation measures them.
    pub floor_area_m2: f64,
    /// That list's rateable value over the area: an assessment per square metre, not a price.
    pub rateable_value_per_m2: Option<f64>,
}

/// The freeholder block of a row.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Freeholder {
    pub uprn: i64,
    /// The company-owned freehold titles linked to the UPRN.
    pub titles: Vec<OwnerTitle>,
}

/// One rated property.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SourcingRow {
    pub uarn: i64,
    /// The UPRN the UARN links to, when linked.
    pub uprn: Option<i64>,
    pub sector: Sector,
    /// The entry in the newest loaded list.
    pub hereditament: Hereditament,
    /// Its entries in every loaded list, oldest first.
    pub history: Vec<ListValue>,
    /// Measured floor area and rateable value per square metre (summary valuations).
    pub floor_area: Block<FloorArea>,
    pub freeholder: Block<Freeholder>,
    /// The UPRN's offers at the auctions the operator's feed follows.
    pub auction_history: Block<AuctionHistory>,
    /// The newest list's rateable value capitalised at the district's median auction yield.
    pub income_value: Block<IncomeValue>,
}

/// The offers of a property at auction.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AuctionHistory {
    /// Oldest first; empty: never offered at the auctions the feed follows.
    pub offers: Vec<AuctionOffer>,
    pub coverage: &'static str,
}

const AUCTION_COVERAGE: &str = "lots matched to the hereditament's UPRN (given by the feed or found by the address matcher); only the auction houses the operator's feed follows are covered";

/// One offer of a property at auction, as the operator's feed records it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AuctionOffer {
    pub auction_date: NaiveDate,
    pub auction_house: String,
    pub lot_number: String,
    /// `residential`, `commercial`, `land`, `ground_rent` or `mixed`.
    pub lot_type: String,
    /// `sold`, `unsold`, `withdrawn`, `sold_prior`, `sold_after`, `postponed` or `unknown`.
    pub outcome: String,
    pub guide_low: Option<i64>,
    pub guide_high: Option<i64>,
    /// Null: not disclosed, or not sold.
    pub hammer_price: Option<i64>,
    pub net_initial_yield_pct: Option<f64>,
}

/// An income-basis indication: an assessment capitalised at a market yield, not a valuation.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct IncomeValue {
    /// Pounds: the rateable value over the yield.
    pub value: i64,
    pub rateable_value: i64,
    pub list_year: i32,
    /// The median net initial yield (percent) of the district's sold commercial and mixed lots.
    pub yield_pct: f64,
    /// The lots the median is taken over.
    pub n_lots: usize,
    pub district: String,
    /// The auction dates the lots span.
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub basis: &'static str,
}

/// The fewest sold lots with a yield a district needs before its median is used.
pub const MIN_YIELD_LOTS: usize = 5;
/// The months before a district's newest yield that its median reads.
pub const YIELD_MONTHS: u32 = 36;

const INCOME_BASIS: &str = "The newest list's rateable value (the VOA's assessment of the open-market annual rent at the list's valuation date) divided by the median net initial yield of sold commercial and mixed lots in the postcode district at the auctions the operator's feed follows, over the 36 months to the district's newest such lot. An indication on an assessment, not a valuation and not a rent paid.";

/// A page of commercial sourcing.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SourcingAnswer {
    pub area: AreaScope,
    pub sector: Sector,
    /// The list the stock is read from (the newest loaded); null when none is loaded.
    pub list_year: Option<i32>,
    pub data: Vec<SourcingRow>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    pub basis: &'static str,
    pub licence: &'static str,
}

const BASIS: &str = "Rated stock of the newest loaded VOA rating list in the local authority (by the entry's postcode in the postcode directory, as the last build placed it), in UARN order. A rateable value is the VOA's assessment of the open-market annual rent at the list's valuation date: an assessment, not a rent paid and not a price. No income-basis value is given without a yield source for the district.";

/// One page of the rated stock of `area` (a resolved local authority) matching `q`.
pub async fn sourcing(
    db: &Db,
    area: AreaScope,
    q: &SourcingQuery,
) -> Result<SourcingAnswer, LookupError> {
    let scope = sourcing_scope(q);
    // The stock the last build placed (its list); before any build, the newest loaded list with
    // no rows placed in an authority yet.
    let list_year = match rt::stock_list_year(db).await? {
        Some(y) => Some(y),
        None => rent_index::loaded_lists(db).await?.into_iter().max(),
    };
    let mut answer = SourcingAnswer {
        area,
        sector: q.sector,
        list_year,
        data: Vec::new(),
        next_cursor: None,
        basis: BASIS,
        licence: LICENCE,
    };
    let Some(year) = answer.list_year else {
        return Ok(answer);
    };
    let stock = rt::StockQuery {
        lad_code: q.lad_code.clone(),
        sector: (q.sector != Sector::All).then(|| q.sector.name()),
        after: q.after.unwrap_or(i64::MIN),
        min_rateable_value: q.min_rateable_value,
        max_rateable_value: q.max_rateable_value,
    };
    let over = i64::try_from(q.limit.saturating_add(1)).unwrap_or(i64::MAX);
    let uarns: Vec<i64> = rt::stock_page(db, &stock, over).await?;
    let mut picked = Vec::new();
    let mut history: BTreeMap<i64, Vec<ListValue>> = BTreeMap::new();
    for e in rt::entries_for_uarns(db, &uarns).await? {
        history.entry(e.uarn).or_default().push(ListValue {
            list_year: e.list_year,
            valuation_date: rent_index::valuation_date(e.list_year),
            rateable_value: e.rateable_value,
            description_code: e.description_code.clone(),
            effective_date: e.effective_date,
        });
        if e.list_year == year {
            picked.push(e);
        }
    }
    let links: BTreeMap<i64, i64> = rt::links_by_uarn(db, &uarns)
        .await?
        .into_iter()
        .map(|l| (l.uarn, l.uprn))
        .collect();
    let uprns: Vec<i64> = links.values().copied().collect();
    let (titles, titles_loaded) = owner::titles_by_uprn(db, &uprns).await?;
    let mut areas: BTreeMap<i64, Vec<(i32, f64)>> = BTreeMap::new();
    for (y, u, a) in rt::floor_areas_for_uarns(db, &uarns).await? {
        areas.entry(u).or_default().push((y, a));
    }
    let feed = st_auctions::any_lot(db).await?;
    let (offers, yields) = if feed {
        (
            offers_by_uprn(db, &uprns).await?,
            district_yields(db, &picked).await?,
        )
    } else {
        Default::default()
    };
    let smv_loaded = !rt::lists_with_valuations(db, &crate::LISTS)
        .await?
        .is_empty();
    let rows: Vec<SourcingRow> = picked
        .iter()
        .map(|e| {
            let uprn = links.get(&e.uarn).copied();
            let freehold: Vec<OwnerTitle> = uprn
                .and_then(|u| titles.get(&u))
                .map(|ts| {
                    ts.iter()
                        .filter(|t| t.tenure.as_deref() == Some("Freehold"))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            let freeholder = match uprn {
                Some(u) if !freehold.is_empty() => Block::Available(Freeholder {
                    uprn: u,
                    titles: freehold,
                }),
                _ => na(owner::no_title_reason(uprn, titles_loaded)
                    .replace("no company-owned title", "no company-owned freehold title")),
            };
            let hist = history.remove(&e.uarn).unwrap_or_default();
            let floor_area = match areas.get(&e.uarn).and_then(|v| v.last()) {
                Some(&(year, a)) => Block::Available(FloorArea {
                    list_year: year,
                    floor_area_m2: a,
                    rateable_value_per_m2: hist
                        .iter()
                        .find(|h| h.list_year == year)
                        .and_then(|h| h.rateable_value)
                        .map(|rv| (rv as f64 / a * 100.0).round() / 100.0),
                }),
                None if !smv_loaded => na(
                    "floor area and rateable value per square metre come from the VOA summary valuations, which are not loaded",
                ),
                None => na(
                    "no summary valuation measures this hereditament's floor area (none loaded for it, or it is valued per unit, not per square metre)",
                ),
            };
            SourcingRow {
                uarn: e.uarn,
                uprn,
                sector: Sector::of_code(e.description_code.as_deref()),
                hereditament: hereditament_of(e),
                history: hist,
                floor_area,
                freeholder,
                auction_history: auction_history(uprn, &offers, feed),
                income_value: income_value(e, &yields, feed),
            }
        })
        .collect();
    let page = Page::from_overfetch(rows, q.limit, &scope, |r| vec![r.uarn.to_string()]);
    answer.data = page.data;
    answer.next_cursor = page.next_cursor;
    Ok(answer)
}

/// The commercial stock rows of the newest list `year` (none when no list is loaded): each entry
/// of that list whose postcode places it in an authority (`lads`, parallel to `entries`), with
/// its sector. Written by the rent index build beside the index.
pub fn stock_rows(
    entries: &[rt::IndexEntry],
    lads: &[Option<String>],
    year: Option<i32>,
    now: chrono::NaiveDateTime,
) -> Vec<rt::StockRow> {
    let Some(year) = year else {
        return Vec::new();
    };
    entries
        .iter()
        .zip(lads)
        .filter(|((y, ..), _)| *y == year)
        .filter_map(|((y, uarn, code, rv), lad)| {
            Some(rt::StockRow {
                uarn: *uarn,
                lad_code: lad.clone()?,
                sector: Sector::of_code(code.as_deref()).name(),
                list_year: *y,
                rateable_value: *rv,
                updated_at: now,
            })
        })
        .collect()
}

/// The offers of each UPRN.
async fn offers_by_uprn(
    db: &Db,
    uprns: &[i64],
) -> Result<BTreeMap<i64, Vec<AuctionOffer>>, LookupError> {
    let mut out: BTreeMap<i64, Vec<AuctionOffer>> = BTreeMap::new();
    for l in st_auctions::lots_of_uprns(db, uprns).await? {
        let Some(u) = l.uprn else { continue };
        out.entry(u).or_default().push(AuctionOffer {
            auction_date: l.auction_date,
            auction_house: l.auction_house,
            lot_number: l.lot_number,
            lot_type: l.lot_type,
            outcome: l.outcome,
            guide_low: l.guide_low,
            guide_high: l.guide_high,
            hammer_price: l.hammer_price,
            net_initial_yield_pct: l.net_initial_yield_pct,
        });
    }
    Ok(out)
}

/// The postcode district (outward code) of an entry.
fn district_of(e: &RatingEntryRow) -> Option<String> {
    let pc = e.postcode.as_deref()?.trim();
    let out = pc.split_whitespace().next()?;
    (out.len() < pc.len()).then(|| out.to_ascii_uppercase())
}

/// A district's yield evidence: (median yield, lots, first and last auction date), or why none.
type DistrictYield = Result<(f64, usize, NaiveDate, NaiveDate), String>;

/// The yield evidence of the districts of `entries`.
async fn district_yields(
    db: &Db,
    entries: &[RatingEntryRow],
) -> Result<BTreeMap<String, DistrictYield>, LookupError> {
    let mut out = BTreeMap::new();
    for d in entries.iter().filter_map(district_of) {
        if out.contains_key(&d) {
            continue;
        }
        let f = LotFilter {
            sold_only: true,
            with_yield: true,
            district: Some(d.clone()),
            lot_types: Some(vec!["commercial".into(), "mixed".into()]),
            ..LotFilter::default()
        };
        let lots = st_auctions::lot_figures_where(db, &f).await?;
        out.insert(d, median_yield(&lots));
    }
    Ok(out)
}

/// The median yield of the lots within [`YIELD_MONTHS`] of the newest, at least
/// [`MIN_YIELD_LOTS`] of them.
fn median_yield(lots: &[st_auctions::LotFigures]) -> DistrictYield {
    let Some(to) = lots.iter().map(|l| l.auction_date).max() else {
        return Err("no sold commercial or mixed lot with a yield in the district at the auctions the feed follows".into());
    };
    let from = to
        .checked_sub_months(chrono::Months::new(YIELD_MONTHS))
        .unwrap_or(NaiveDate::MIN);
    let mut ys: Vec<(f64, NaiveDate)> = lots
        .iter()
        .filter(|l| l.auction_date >= from)
        .filter_map(|l| l.net_initial_yield_pct.map(|y| (y, l.auction_date)))
        .filter(|(y, _)| y.is_finite() && *y > 0.0)
        .collect();
    if ys.len() < MIN_YIELD_LOTS {
        return Err(format!(
            "{} sold commercial or mixed lots with a yield in the district in the {YIELD_MONTHS} months to {to}, fewer than the {MIN_YIELD_LOTS} an income-basis value needs (a yield is never assumed)",
            ys.len()
        ));
    }
    ys.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = ys.len();
    let median = if n % 2 == 1 {
        ys[n / 2].0
    } else {
        (ys[n / 2 - 1].0 + ys[n / 2].0) / 2.0
    };
    let first = ys.iter().map(|y| y.1).min().unwrap_or(to);
    Ok((median, n, first, to))
}

const NO_FEED: &str = "no auction lot feed is loaded (the operator's feed: docs/DATA.md), so auction offers and auction yields are unknown";

fn auction_history(
    uprn: Option<i64>,
    offers: &BTreeMap<i64, Vec<AuctionOffer>>,
    feed: bool,
) -> Block<AuctionHistory> {
    match uprn {
        _ if !feed => na(NO_FEED),
        None => na("no UPRN links this hereditament, so its auction offers cannot be found"),
        Some(u) => Block::Available(AuctionHistory {
            offers: offers.get(&u).cloned().unwrap_or_default(),
            coverage: AUCTION_COVERAGE,
        }),
    }
}

fn income_value(
    e: &RatingEntryRow,
    yields: &BTreeMap<String, DistrictYield>,
    feed: bool,
) -> Block<IncomeValue> {
    if !feed {
        return na(NO_FEED);
    }
    let Some(rv) = e.rateable_value.filter(|v| *v > 0) else {
        return na("the entry has no rateable value in the newest list");
    };
    let Some(d) = district_of(e) else {
        return na("the entry has no full postcode, so its district's auction yield is unknown");
    };
    match yields.get(&d) {
        Some(Ok((y, n, from, to))) => Block::Available(IncomeValue {
            value: (rv as f64 * 100.0 / y).round() as i64,
            rateable_value: rv,
            list_year: e.list_year,
            yield_pct: *y,
            n_lots: *n,
            district: d,
            from: *from,
            to: *to,
            basis: INCOME_BASIS,
        }),
        Some(Err(why)) => na(why.clone()),
        None => na("no auction yield was read for the district"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stock_is_the_newest_lists_placed_entries_with_their_sector() {
        let now = chrono::NaiveDate::from_ymd_opt(2026, 4, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .unwrap();
        let entries: Vec<rt::IndexEntry> = vec![
            (2023, 1, Some("CS".into()), Some(10_000)),
            (2026, 1, Some("CS".into()), Some(12_000)),
            (2026, 2, Some("CO".into()), None),
            (2026, 3, Some("IF3".into()), Some(5_000)),
            (2026, 4, None, Some(1_000)),
        ];
        let lads = vec![
            Some("E06000001".to_string()),
            Some("E06000001".to_string()),
            Some("E06000002".to_string()),
            None,
            Some("E06000001".to_string()),
        ];
        let rows = stock_rows(&entries, &lads, Some(2026), now);
        let got: Vec<(i64, &str, &str, i32, Option<i64>)> = rows
            .iter()
            .map(|r| {
                (
                    r.uarn,
                    r.lad_code.as_str(),
                    r.sector.as_str(),
                    r.list_year,
                    r.rateable_value,
                )
            })
            .collect();
        // The 2023 entry is not the newest list's; UARN 3 has no authority (its postcode is
        // not in the directory); an entry without a code is OTHER.
        assert_eq!(
            got,
            vec![
                (1, "E06000001", "RETAIL", 2026, Some(12_000)),
                (2, "E06000002", "OFFICE", 2026, None),
                (4, "E06000001", "OTHER", 2026, Some(1_000)),
            ]
        );
        assert!(stock_rows(&entries, &lads, None, now).is_empty());
    }
}
