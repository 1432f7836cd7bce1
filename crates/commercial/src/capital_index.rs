//! The commercial capital index: a quarterly repeat-sales index of prices paid for the same
//! non-residential property at two dates (docs/METHODS.md, "Commercial capital index").
//!
//! The build ([`build`], a derived step) forms pairs from three sources, each pair saying which
//! ([`PairSource`], the source of its later observation):
//! - `hmlr_price_paid_category_b_other`: HM Land Registry Price Paid sales of category B with
//!   property type `O` (Other), keyed to the property (the UPRN where the address matcher or the
//!   lookup linked one, else the normalised address: postcode, PAON, SAON, street), consecutive
//!   sales paired;
//! - `hmlr_ccod_snapshots`: a company-owned title's successive distinct (Date Proprietor Added,
//!   Price Paid) across the CCOD/OCOD snapshots loaded (`title_price_history`), for titles the
//!   address matcher linked to a UPRN with a rating-list entry (a non-domestic property); a pair
//!   whose two ends are the two sales of a Price Paid pair of the same UPRN (same prices, dates
//!   within [`SAME_TRANSFER_DAYS`]) is dropped, the Price Paid pair kept;
//! - `auction_results`: a sold auction lot with a disclosed price linked to such a UPRN, paired
//!   with the property's previous observation (a category B sale, a CCOD observation of a title
//!   of the lot's tenure, an earlier sold lot); dropped when a kept pair already ends in the same
//!   transfer (the same price up to [`AUCTION_COMPLETION_DAYS`] after the auction: its
//!   completion).
//!
//! Every pair passes the filters of `terrace_analytics::form_pairs` (held at least 6 months,
//! annualised log growth within 0.5). Each property is placed in a local authority (the
//! address's, else the postcode's) and a sector (the rating-list entry linked to the UPRN;
//! `unclassified` otherwise, counted in ALL only), and each series is estimated with
//! `terrace_analytics::repeat_sales_index` on quarters from 1995Q1: national ALL, national by
//! sector, and each local authority with ALL sectors. There is no local-by-sector series.
//!
//! Shrinkage: each local authority's series is shrunk toward the national ALL series with
//! `terrace_analytics::shrink_toward_parent` (its deviation from national a random walk observed
//! by its own levels with their standard errors): a thin series moves toward national, a thick
//! one keeps close to its own levels; `provenance.method` is then
//! `repeat_sales_shrunk_toward_national` and each quarter carries its `own_weight`. The national
//! series by sector are not shrunk (a sector's departure from ALL is what they show).
//!
//! Gates: a series of fewer than [`MIN_SERIES_PAIRS`] pairs is withheld whole; a quarter with
//! fewer than [`MIN_QUARTER_PAIRS`] pairs touching it has no level, nor has a quarter without an
//! own estimate (shrinkage never fills one). The base is 1995Q1 = 100 when 1995Q1 passes the
//! gate, else the first quarter that does, and the answer says which.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{Datelike, NaiveDate, NaiveDateTime};
use schemars::JsonSchema;
use serde::Serialize;
use terrace_analytics::{
    Grain, IndexGrid, IndexSeries, LEVEL_STEP_PER_MONTH, Month, Pair, PairFilter, Period,
    PropertyType, Sale, TAU_PER_MONTH, Tenure, form_pairs, repeat_sales_index,
    shrink_toward_parent, smooth_own,
};
use terrace_store::capital::{self as cap, CapitalPointRow, CommercialSaleRow, SoldLotRow};
use terrace_store::rating as rt;
use terrace_store::titles::{self as tt, PriceObservationRow, TitleRow};
use terrace_store::{Db, LookupError, StoreError};

use crate::sector::{AreaScope, Sector};
use crate::{Block, na};

/// The fewest pairs a series needs to be published at all.
pub const MIN_SERIES_PAIRS: usize = 10;
/// The fewest pairs touching a quarter (either sale in it) for its level to be published.
pub const MIN_QUARTER_PAIRS: usize = 3;
/// The area code of the national series.
pub const NATIONAL: &str = "national";
/// The nominal base quarter.
pub const BASE_QUARTER: &str = "1995Q1";
/// Two records of one property at the same price within this many days of each other are one
/// transfer (a CCOD observation and a Price Paid sale of it, say).
pub const SAME_TRANSFER_DAYS: i64 = 7;
/// A sold lot and a later record of the same property at the same price up to this many days
/// after the auction are one transfer (completion follows the hammer, usually within 28 days).
pub const AUCTION_COMPLETION_DAYS: i64 = 90;
/// The method of a series estimated on its own.
pub const METHOD_REPEAT_SALES: &str = "repeat_sales";
/// The method of a local-authority series shrunk toward the national series.
pub const METHOD_SHRUNK: &str = "repeat_sales_shrunk_toward_national";

/// Where a repeat-sale pair comes from: the source of its later observation (docs/METHODS.md,
/// "Commercial capital index").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PairSource {
    /// Two HM Land Registry Price Paid sales of category B, property type `O`.
    PricePaid,
    /// Two successive distinct (Date Proprietor Added, Price Paid) of one title across the CCOD
    /// (and OCOD) snapshots loaded.
    CcodSnapshots,
    /// A sold auction lot and the property's previous observation (another sold lot, a
    /// category B sale, a CCOD observation).
    AuctionResults,
}

impl PairSource {
    /// Every source, in the order answers list them.
    pub const ALL: [PairSource; 3] = [
        PairSource::PricePaid,
        PairSource::CcodSnapshots,
        PairSource::AuctionResults,
    ];

    /// The source's id in answers and in the store.
    pub fn id(self) -> &'static str {
        match self {
            PairSource::PricePaid => "hmlr_price_paid_category_b_other",
            PairSource::CcodSnapshots => "hmlr_ccod_snapshots",
            PairSource::AuctionResults => "auction_results",
        }
    }

    pub fn of_id(id: &str) -> Option<PairSource> {
        PairSource::ALL.into_iter().find(|s| s.id() == id)
    }
}

/// The source of the Price Paid pairs (kept for callers of the single-source index).
pub const PAIR_SOURCE: &str = "hmlr_price_paid_category_b_other";

pub const BASIS: &str = "prices paid for the same non-residential property at two dates: HM Land Registry Price Paid sales of category B (additional price paid) with property type O (Other), the non-residential transfers within Price Paid, keyed to the property (UPRN, else the normalised address); successive distinct (Date Proprietor Added, Price Paid) of a company-owned title across the CCOD snapshots loaded, for titles linked to a UPRN with a rating-list entry; and sold auction lots with a disclosed price linked to such a UPRN, paired with the property's previous observation. Price Paid category B exists only from 14 October 2013. A capital index, not a rent index: never put it on one axis with the rating-list rent index.";
pub const METHOD: &str = "repeat_sales: the interval-weighted repeat-sales estimator (Case-Shiller, three stages) on quarters, over consecutive pairs of the same property held at least 6 months with annualised log growth within 0.5; a series of fewer than 10 pairs is withheld, a quarter with fewer than 3 pairs touching it has no level; not shrunk toward any parent";
pub const METHOD_SHRUNK_DETAIL: &str = "repeat_sales_shrunk_toward_national: the authority's own repeat-sales estimate (interval-weighted, three stages, on quarters, over consecutive pairs held at least 6 months with annualised log growth within 0.5) shrunk toward the national ALL series: the authority's deviation from the national log level is a random walk with step 0.01 x sqrt(3) a quarter, observed by the authority's own levels with their standard errors, and smoothed; a thin series (wide standard errors) is pulled toward national, a thick one keeps close to its own levels (`own_weight` per quarter). A series of fewer than 10 pairs is withheld, a quarter with fewer than 3 pairs touching it has no level, and a quarter without an own estimate is never filled from the national series";

fn sector_name(s: Sector) -> String {
    s.name()
}

/// What the build did.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildReport {
    /// Price Paid sales of category B, type O, read.
    pub sales: usize,
    /// CCOD/OCOD observations of titles linked to a rated UPRN read.
    pub observations: usize,
    /// Sold auction lots with a price linked to a rated UPRN read.
    pub lots: usize,
    /// Pairs behind the national ALL series.
    pub pairs: usize,
    /// The national ALL series' pairs by source.
    pub pairs_by_source: Vec<(PairSource, usize)>,
    /// Pairs from CCOD snapshots or auction results dropped as the same transfers as a kept
    /// pair.
    pub duplicates_dropped: usize,
    pub series: usize,
    pub series_published: usize,
    pub rows: usize,
}

impl BuildReport {
    pub fn summary(&self) -> String {
        let by: Vec<String> = self
            .pairs_by_source
            .iter()
            .map(|(s, n)| format!("{} {n}", s.id()))
            .collect();
        format!(
            "[derive] commercial capital index: {} category B non-residential sales, {} CCOD observations and {} sold auction lots of rated properties, {} repeat-sale pairs ({}; {} duplicates dropped), {} series ({} published), {} quarter rows",
            self.sales,
            self.observations,
            self.lots,
            self.pairs,
            if by.is_empty() {
                "none".to_string()
            } else {
                by.join(", ")
            },
            self.duplicates_dropped,
            self.series,
            self.series_published,
            self.rows
        )
    }
}

/// A 64-bit FNV-1a hash of the normalised address, with the top bit set so it never equals a
/// UPRN.
fn address_key(s: &CommercialSaleRow) -> Option<u64> {
    let pc = s.postcode.as_deref()?.trim();
    let paon = s.paon.as_deref()?.trim();
    if pc.is_empty() || paon.is_empty() {
        return None;
    }
    let text = format!(
        "{}|{}|{}|{}",
        pc.to_ascii_uppercase(),
        paon.to_ascii_uppercase(),
        s.saon.as_deref().unwrap_or("").trim().to_ascii_uppercase(),
        s.street
            .as_deref()
            .unwrap_or("")
            .trim()
            .to_ascii_uppercase()
    );
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    Some(h | (1 << 63))
}

/// One observed transfer of a property.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Event {
    date: NaiveDate,
    price: i64,
}

/// A repeat-sale pair with its property and source.
#[derive(Debug, Clone, Copy, PartialEq)]
struct SourcedPair {
    property: u64,
    first: Event,
    second: Event,
    pair: Pair,
    source: PairSource,
}

/// Where a property is: its local authority and its sector (`None`: counted in ALL only).
#[derive(Debug, Clone, Default)]
struct Placement {
    lad: Option<String>,
    sector: Option<Sector>,
}

fn month_of(d: NaiveDate) -> Option<Month> {
    Month::new(d.year(), d.month())
}

fn sale_of(e: Event, property: u64) -> Option<Sale> {
    Some(Sale {
        property: Some(property),
        month: month_of(e.date)?,
        day: u8::try_from(e.date.day()).unwrap_or(1),
        price: e.price,
        property_type: PropertyType::Other,
        tenure: Tenure::Freehold,
        new_build: false,
        floor_area_m2: None,
    })
}

/// The pair of two observations of a property (`a` not after `b`) when it passes the filters
/// of `terrace_analytics::form_pairs`, starts in 1995 or later and spans two quarters.
fn pair_of(property: u64, a: Event, b: Event, source: PairSource) -> Option<SourcedPair> {
    let sales = [sale_of(a, property)?, sale_of(b, property)?];
    let (pairs, _) = form_pairs(&sales, &PairFilter::default());
    let pair = pairs.first().copied()?;
    let start = Month::new(1995, 1)?;
    let grain = Grain::Quarter;
    let usable = pair.first_month >= start
        && grain.period_of(pair.first_month) != grain.period_of(pair.second_month);
    usable.then_some(SourcedPair {
        property,
        first: a,
        second: b,
        pair,
        source,
    })
}

/// The consecutive pairs of one property's observations (sorted by date, then price).
fn consecutive_pairs(property: u64, events: &[Event], source: PairSource) -> Vec<SourcedPair> {
    let mut sorted = events.to_vec();
    sorted.sort_by_key(|e| (e.date, e.price));
    sorted
        .windows(2)
        .filter_map(|w| pair_of(property, w[0], w[1], source))
        .collect()
}

/// Whether two records are one transfer: the same price and `b` from `before` days before `a`
/// to `after` days after it.
fn same_transfer(a: Event, b: Event, before: i64, after: i64) -> bool {
    let d = (b.date - a.date).num_days();
    a.price == b.price && (-before..=after).contains(&d)
}

/// A title's observations as events: one per date added (a date shown with two prices keeps
/// the one first seen in the later snapshot, a correction).
fn title_events(obs: &[&PriceObservationRow]) -> Vec<Event> {
    let mut by_date: BTreeMap<NaiveDate, &PriceObservationRow> = BTreeMap::new();
    for o in obs.iter().copied() {
        let later = by_date
            .get(&o.date_added)
            .is_none_or(|p| o.first_seen_month >= p.first_seen_month);
        if later {
            by_date.insert(o.date_added, o);
        }
    }
    by_date
        .values()
        .map(|o| Event {
            date: o.date_added,
            price: o.price_paid,
        })
        .collect()
}

/// `freehold` or `leasehold` from a tenure as a register or a feed writes it.
fn tenure_word(t: Option<&str>) -> Option<String> {
    let w = t?.split_whitespace().next()?.to_ascii_lowercase();
    (!w.is_empty()).then_some(w)
}

/// Every pair the build forms, with the places of their properties.
struct Gathered {
    pairs: Vec<SourcedPair>,
    place: HashMap<u64, Placement>,
    sales: usize,
    observations: usize,
    lots: usize,
    duplicates_dropped: usize,
    last: Option<Month>,
}

/// Reads the sales, observations and lots, places and classifies their properties, and forms
/// the pairs of every source (docs/METHODS.md, "Commercial capital index").
async fn gather(db: &Db) -> Result<Gathered, StoreError> {
    let rows = cap::commercial_sales(db).await?;
    let repeat_titles = tt::titles_with_repeat_observations(db).await?;
    let titles: Vec<TitleRow> = tt::titles_by_number(db, &repeat_titles)
        .await?
        .into_iter()
        .filter(|t| t.uprn.is_some())
        .collect();
    let lots: Vec<SoldLotRow> = cap::sold_lots_with_uprn(db).await?;
    let lot_uprns: Vec<i64> = lots
        .iter()
        .filter_map(|l| l.uprn)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let lot_titles = tt::titles_for_uprns(db, &lot_uprns).await?;

    let uprns: Vec<i64> = rows
        .iter()
        .filter_map(|r| r.uprn)
        .chain(titles.iter().filter_map(|t| t.uprn))
        .chain(lot_uprns.iter().copied())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let pcs: Vec<String> = rows
        .iter()
        .filter_map(|r| r.postcode.clone())
        .chain(titles.iter().filter_map(|t| t.postcode.clone()))
        .chain(lots.iter().filter_map(|l| l.postcode.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let lad_of_uprn: HashMap<i64, String> =
        cap::lads_of_uprns(db, &uprns).await?.into_iter().collect();
    let lad_of_pc: HashMap<String, String> = cap::lads_of_postcodes(db, &pcs)
        .await?
        .into_iter()
        .collect();
    let links = cap::uarns_of_uprns(db, &uprns).await?;
    let rated: BTreeSet<i64> = links.iter().map(|(u, _)| *u).collect();
    let uarns: Vec<i64> = links.iter().map(|(_, a)| *a).collect();
    // The newest list's description code of each UARN.
    let mut code_of_uarn: HashMap<i64, (i32, Option<String>)> = HashMap::new();
    for e in rt::entries_for_uarns(db, &uarns).await? {
        let newer = code_of_uarn
            .get(&e.uarn)
            .is_none_or(|(y, _)| e.list_year > *y);
        if newer {
            code_of_uarn.insert(e.uarn, (e.list_year, e.description_code.clone()));
        }
    }
    // A UPRN's sector: the one sector of its linked entries (none when they disagree).
    let mut sectors: BTreeMap<i64, BTreeSet<Sector>> = BTreeMap::new();
    for (uprn, uarn) in &links {
        if let Some((_, code)) = code_of_uarn.get(uarn) {
            sectors
                .entry(*uprn)
                .or_default()
                .insert(Sector::of_code(code.as_deref()));
        }
    }
    let sector_of = |u: i64| -> Option<Sector> {
        let s = sectors.get(&u)?;
        (s.len() == 1).then(|| s.iter().next().copied()).flatten()
    };
    let place_uprn = |u: i64, postcode: Option<&String>| Placement {
        lad: lad_of_uprn
            .get(&u)
            .cloned()
            .or_else(|| postcode.and_then(|p| lad_of_pc.get(p).cloned())),
        sector: sector_of(u),
    };
    let key_of = |u: i64| u64::try_from(u).ok();

    let mut place: HashMap<u64, Placement> = HashMap::new();
    let mut last: Option<Month> = None;

    // Price Paid: every property's sales in date order.
    let mut pp_events: BTreeMap<u64, Vec<Event>> = BTreeMap::new();
    let mut sales = 0;
    for r in &rows {
        let key = match r.uprn {
            Some(u) => key_of(u),
            None => address_key(r),
        };
        let (Some(key), Some(month)) = (key, month_of(r.date)) else {
            continue;
        };
        sales += 1;
        last = last.max(Some(month));
        pp_events.entry(key).or_default().push(Event {
            date: r.date,
            price: r.price,
        });
        place.entry(key).or_insert_with(|| match r.uprn {
            Some(u) => place_uprn(u, r.postcode.as_ref()),
            None => Placement {
                lad: r.postcode.as_ref().and_then(|p| lad_of_pc.get(p).cloned()),
                sector: None,
            },
        });
    }
    let mut pairs: Vec<SourcedPair> = Vec::new();
    for (key, events) in &pp_events {
        pairs.extend(consecutive_pairs(*key, events, PairSource::PricePaid));
    }
    let pp_pairs_of: HashMap<u64, Vec<SourcedPair>> =
        pairs.iter().fold(HashMap::new(), |mut m, p| {
            m.entry(p.property).or_default().push(*p);
            m
        });

    // CCOD snapshots: a title's successive distinct observations, for titles linked to a UPRN
    // with a rating-list entry. A pair that is also a Price Paid pair (both ends the same
    // transfers) is the Price Paid pair's.
    let history_titles: Vec<String> = titles
        .iter()
        .map(|t| t.title_number.clone())
        .chain(lot_titles.iter().map(|t| t.title_number.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let history = tt::price_history_of(db, &history_titles).await?;
    let mut obs_of: BTreeMap<&str, Vec<&PriceObservationRow>> = BTreeMap::new();
    for o in &history {
        obs_of.entry(o.title_number.as_str()).or_default().push(o);
    }
    let mut observations = 0;
    let mut duplicates_dropped = 0;
    for t in &titles {
        let Some(u) = t.uprn.filter(|u| rated.contains(u)) else {
            continue;
        };
        let Some(key) = key_of(u) else { continue };
        let events = title_events(
            obs_of
                .get(t.title_number.as_str())
                .map_or(&[][..], |v| v.as_slice()),
        );
        observations += events.len();
        for e in &events {
            last = last.max(month_of(e.date));
        }
        let mut formed = false;
        for p in consecutive_pairs(key, &events, PairSource::CcodSnapshots) {
            let duplicate = pp_pairs_of.get(&key).is_some_and(|pp| {
                pp.iter().any(|q| {
                    same_transfer(q.first, p.first, SAME_TRANSFER_DAYS, SAME_TRANSFER_DAYS)
                        && same_transfer(q.second, p.second, SAME_TRANSFER_DAYS, SAME_TRANSFER_DAYS)
                })
            });
            if duplicate {
                duplicates_dropped += 1;
            } else {
                pairs.push(p);
                formed = true;
            }
        }
        if formed {
            place
                .entry(key)
                .or_insert_with(|| place_uprn(u, t.postcode.as_ref()));
        }
    }

    // Auction results: a sold lot paired with the property's previous observation (another
    // sold lot, a category B sale, a CCOD observation of a title linked to the UPRN with the
    // lot's tenure), unless a kept pair already ends in the same transfer (its completion).
    let mut lots_of: BTreeMap<i64, Vec<&SoldLotRow>> = BTreeMap::new();
    for l in &lots {
        if let Some(u) = l.uprn.filter(|u| rated.contains(u)) {
            lots_of.entry(u).or_default().push(l);
        }
    }
    let mut titles_of_uprn: HashMap<i64, Vec<&TitleRow>> = HashMap::new();
    for t in &lot_titles {
        if let Some(u) = t.uprn {
            titles_of_uprn.entry(u).or_default().push(t);
        }
    }
    let mut auction_lots = 0;
    let mut auction_pairs = Vec::new();
    for (u, its_lots) in &lots_of {
        let Some(key) = key_of(*u) else { continue };
        for l in its_lots {
            let Some(price) = l.hammer_price.filter(|p| *p > 0) else {
                continue;
            };
            auction_lots += 1;
            let lot = Event {
                date: l.auction_date,
                price,
            };
            last = last.max(month_of(lot.date));
            let lot_tenure = tenure_word(l.tenure.as_deref());
            let mut candidates: Vec<Event> = pp_events.get(&key).cloned().unwrap_or_default();
            for t in titles_of_uprn.get(u).map_or(&[][..], |v| v.as_slice()) {
                let title_tenure = tenure_word(t.tenure.as_deref());
                if lot_tenure.is_some() && title_tenure.is_some() && lot_tenure != title_tenure {
                    continue;
                }
                let obs = obs_of
                    .get(t.title_number.as_str())
                    .map_or(&[][..], |v| v.as_slice());
                candidates.extend(title_events(obs));
            }
            candidates.extend(its_lots.iter().filter_map(|o| {
                Some(Event {
                    date: o.auction_date,
                    price: o.hammer_price.filter(|p| *p > 0)?,
                })
            }));
            let previous = candidates
                .iter()
                .filter(|c| c.date < lot.date)
                .filter(|c| !same_transfer(lot, **c, SAME_TRANSFER_DAYS, 0))
                .max_by_key(|c| (c.date, c.price))
                .copied();
            let Some(previous) = previous else { continue };
            let Some(p) = pair_of(key, previous, lot, PairSource::AuctionResults) else {
                continue;
            };
            let counted = pairs.iter().any(|q| {
                q.property == key
                    && same_transfer(lot, q.second, SAME_TRANSFER_DAYS, AUCTION_COMPLETION_DAYS)
            });
            if counted {
                duplicates_dropped += 1;
                continue;
            }
            auction_pairs.push(p);
            place
                .entry(key)
                .or_insert_with(|| place_uprn(*u, l.postcode.as_ref()));
        }
    }
    pairs.extend(auction_pairs);
    Ok(Gathered {
        pairs,
        place,
        sales,
        observations,
        lots: auction_lots,
        duplicates_dropped,
        last,
    })
}

/// `source:count` of each source with pairs, in [`PairSource::ALL`] order.
fn source_counts(pairs: &[SourcedPair]) -> Vec<(PairSource, usize)> {
    PairSource::ALL
        .into_iter()
        .filter_map(|s| {
            let n = pairs.iter().filter(|p| p.source == s).count();
            (n > 0).then_some((s, n))
        })
        .collect()
}

fn encode_sources(counts: &[(PairSource, usize)]) -> String {
    counts
        .iter()
        .map(|(s, n)| format!("{}:{n}", s.id()))
        .collect::<Vec<_>>()
        .join(",")
}

/// The pairs by source a stored series says it has (`source:count`, comma-separated).
pub fn decode_sources(stored: &str) -> Vec<PairSourceCount> {
    stored
        .split(',')
        .filter_map(|part| {
            let (id, n) = part.trim().split_once(':')?;
            Some(PairSourceCount {
                source: id.to_string(),
                pairs: n.trim().parse().ok()?,
            })
        })
        .collect()
}

/// One series estimated and gated into rows.
struct SeriesOut {
    pairs: usize,
    published: bool,
    rows: Vec<CapitalPointRow>,
    /// The own estimate (for the national ALL series: the parent of the authorities').
    fit: Option<IndexSeries>,
}

/// The quarter grid every series shares: 1995Q1 to the quarter of the last observation, with
/// `base` at 100.
fn grid_with_base(last: Month, base: Month) -> Result<IndexGrid, String> {
    let first = Month::new(1995, 1).ok_or("no first month")?;
    let end = Grain::Quarter.period_of(last).end_month();
    IndexGrid::new(Grain::Quarter, first, end, base).map_err(|e| e.to_string())
}

/// One series estimated and gated into rows; with a `parent` (the national ALL own estimate)
/// the series is shrunk toward it.
fn series_rows(
    area_code: &str,
    sector: Sector,
    sourced: &[SourcedPair],
    last: Month,
    now: NaiveDateTime,
    parent: Option<&IndexSeries>,
) -> SeriesOut {
    let pairs: Vec<Pair> = sourced.iter().map(|p| p.pair).collect();
    let sources = encode_sources(&source_counts(sourced));
    let sector_s = sector_name(sector);
    let series_key = format!("{area_code}|{sector_s}");
    let grain = Grain::Quarter;
    let empty = SeriesOut {
        pairs: 0,
        published: false,
        rows: Vec::new(),
        fit: None,
    };
    // Pairs touching each quarter.
    let mut touching: BTreeMap<Period, usize> = BTreeMap::new();
    for p in &pairs {
        let (a, b) = (
            grain.period_of(p.first_month),
            grain.period_of(p.second_month),
        );
        if a != b {
            *touching.entry(a).or_default() += 1;
            *touching.entry(b).or_default() += 1;
        }
    }
    let Some((&first_q, _)) = touching.iter().next() else {
        return empty;
    };
    let last_q = touching.keys().next_back().copied().unwrap_or(first_q);
    let row = |q: Period,
               level: Option<f64>,
               se: Option<f64>,
               n: usize,
               base: Option<&str>,
               why: Option<String>,
               series_pairs: usize,
               own_weight: Option<f64>| CapitalPointRow {
        point_key: format!("{series_key}|{}", q.label()),
        series_key: series_key.clone(),
        area_code: area_code.to_string(),
        sector: sector_s.clone(),
        quarter: q.label(),
        level,
        log_se: se,
        n_pairs: i64::try_from(n).unwrap_or(i64::MAX),
        series_pairs: i64::try_from(series_pairs).unwrap_or(i64::MAX),
        base_quarter: base.map(str::to_string),
        withheld: why,
        pair_sources: sources.clone(),
        source: terrace_core::sources::HMLR_PRICE_PAID.id.into(),
        updated_at: now,
        own_weight,
    };
    let quarters = terrace_analytics::period_range(first_q, last_q);
    let withheld_all = |why: String, n_series: usize| -> Vec<CapitalPointRow> {
        quarters
            .iter()
            .map(|q| {
                let n = touching.get(q).copied().unwrap_or(0);
                row(*q, None, None, n, None, Some(why.clone()), n_series, None)
            })
            .collect()
    };
    let withheld = |why: String, n: usize| SeriesOut {
        pairs: n,
        published: false,
        rows: withheld_all(why, n),
        fit: None,
    };
    if pairs.len() < MIN_SERIES_PAIRS {
        let why = format!(
            "the series has {} repeat-sale pairs, fewer than the {MIN_SERIES_PAIRS} a series needs",
            pairs.len()
        );
        return withheld(why, pairs.len());
    }
    // The base: 1995Q1 when it passes the quarter gate, else the first quarter that does.
    let base_q = touching
        .iter()
        .find(|(_, n)| **n >= MIN_QUARTER_PAIRS)
        .map(|(q, _)| *q);
    let Some(base_q) = base_q else {
        let why = format!("no quarter has the {MIN_QUARTER_PAIRS} pairs a level needs");
        return withheld(why, pairs.len());
    };
    let grid = match grid_with_base(last.max(last_q.end_month()), base_q.start_month()) {
        Ok(g) => g,
        Err(e) => return withheld(e, pairs.len()),
    };
    let fit = match repeat_sales_index(&pairs, &grid) {
        Ok(f) => f,
        Err(e) => return withheld(format!("the estimate failed: {e}"), pairs.len()),
    };
    if fit.n_pairs_used < MIN_SERIES_PAIRS {
        let why = format!(
            "the series has {} usable repeat-sale pairs, fewer than the {MIN_SERIES_PAIRS} a series needs",
            fit.n_pairs_used
        );
        return withheld(why, fit.n_pairs_used);
    }
    // Shrunk toward the parent: the parent's own estimate smoothed onto this series' grid
    // (every quarter a level, this series' base = 100), then the deviation smoothed.
    let months = f64::from(grain.months()).sqrt();
    let shrunk = parent.and_then(|p| {
        let parent_here = smooth_own(p, &grid, LEVEL_STEP_PER_MONTH * months)?;
        shrink_toward_parent(Some(&fit.series), &parent_here, TAU_PER_MONTH * months).ok()
    });
    let base_label = base_q.label();
    let rows = quarters
        .iter()
        .map(|q| {
            let n = touching.get(q).copied().unwrap_or(0);
            let own = fit.series.point(*q);
            let published = match &shrunk {
                Some(s) => s.series.point(*q),
                None => own,
            };
            let own_weight = shrunk.as_ref().and_then(|s| {
                let i = grid.position(*q)?;
                s.own_weights.get(i).map(|w| (w * 1000.0).round() / 1000.0)
            });
            let (level, se, why) = if n < MIN_QUARTER_PAIRS {
                (
                    None,
                    None,
                    Some(format!(
                        "{n} pairs touch this quarter, fewer than the {MIN_QUARTER_PAIRS} a level needs"
                    )),
                )
            } else if let (Some(_), Some(l)) =
                (own.and_then(|p| p.level), published.and_then(|p| p.level))
            {
                (
                    Some((l * 100.0).round() / 100.0),
                    published.and_then(|p| p.log_se),
                    None,
                )
            } else {
                (
                    None,
                    None,
                    Some("no pair connects this quarter to the base quarter".to_string()),
                )
            };
            row(
                *q,
                level,
                se,
                n,
                Some(&base_label),
                why,
                fit.n_pairs_used,
                own_weight,
            )
        })
        .collect();
    SeriesOut {
        pairs: fit.n_pairs_used,
        published: true,
        rows,
        fit: Some(fit.series),
    }
}

/// The derived step: forms the pairs of every source, builds every series and replaces the
/// table. The national ALL series is estimated first: each local authority's ALL series is
/// shrunk toward it; the national series by sector are not shrunk.
pub async fn build(db: &Db, now: NaiveDateTime) -> Result<BuildReport, StoreError> {
    let g = gather(db).await?;
    let mut report = BuildReport {
        sales: g.sales,
        observations: g.observations,
        lots: g.lots,
        pairs: 0,
        pairs_by_source: Vec::new(),
        duplicates_dropped: g.duplicates_dropped,
        series: 0,
        series_published: 0,
        rows: 0,
    };
    let Some(last) = g.last else {
        report.rows = cap::replace_capital_index(db, Vec::new()).await?;
        return Ok(report);
    };
    let mut groups: BTreeMap<(String, Sector), Vec<SourcedPair>> = BTreeMap::new();
    let no_place = Placement::default();
    for p in &g.pairs {
        let at = g.place.get(&p.property).unwrap_or(&no_place);
        groups
            .entry((NATIONAL.to_string(), Sector::All))
            .or_default()
            .push(*p);
        if let Some(s) = at.sector {
            groups
                .entry((NATIONAL.to_string(), s))
                .or_default()
                .push(*p);
        }
        if let Some(l) = &at.lad {
            groups.entry((l.clone(), Sector::All)).or_default().push(*p);
        }
    }
    let national_key = (NATIONAL.to_string(), Sector::All);
    let mut rows = Vec::new();
    let mut parent: Option<IndexSeries> = None;
    let mut order: Vec<&(String, Sector)> = groups.keys().filter(|k| **k == national_key).collect();
    order.extend(groups.keys().filter(|k| **k != national_key));
    for key in order {
        let (area, sector) = key;
        let sourced = groups.get(key).map_or(&[][..], |v| v.as_slice());
        let is_authority = area != NATIONAL;
        let out = series_rows(
            area,
            *sector,
            sourced,
            last,
            now,
            parent.as_ref().filter(|_| is_authority),
        );
        if out.rows.is_empty() {
            continue;
        }
        if *key == national_key {
            report.pairs = out.pairs;
            report.pairs_by_source = source_counts(sourced);
            parent = out.fit;
        }
        report.series += 1;
        report.series_published += usize::from(out.published);
        rows.extend(out.rows);
    }
    report.rows = cap::replace_capital_index(db, rows).await?;
    Ok(report)
}

/// A quarter `YYYYQn`.
pub fn parse_quarter(s: &str) -> Option<(i32, u32)> {
    let (y, q) = s.split_once('Q')?;
    if y.len() != 4 || q.len() != 1 {
        return None;
    }
    let y: i32 = y.parse().ok()?;
    let q: u32 = q.parse().ok()?;
    ((1..=4).contains(&q) && y >= 1000).then_some((y, q))
}

/// One quarter of the capital index.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CapitalPoint {
    /// `YYYYQn`.
    pub quarter: String,
    /// The base quarter = 100; null where the quarter is withheld (`reason` says why).
    pub index: Option<f64>,
    /// Standard error of ln(index / 100) from the regression (0 in the base quarter).
    pub log_se: Option<f64>,
    /// Repeat-sale pairs with either sale in this quarter.
    pub n_pairs: i64,
    /// For a series shrunk toward the national series: the weight of the series' own estimate
    /// in this quarter (1: its own level, 0: the national level's change); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub own_weight: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A published series.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CapitalSeries {
    /// The quarter whose level is 100: 1995Q1 when pairs reach it, else the first quarter with
    /// enough pairs (`base_note` says so).
    pub base_quarter: String,
    pub base_note: String,
    /// Repeat-sale pairs behind the series.
    pub n_pairs: i64,
    /// The quarters from `start` to `end` within the series' span, oldest first.
    pub points: Vec<CapitalPoint>,
}

/// The pairs of one source behind a series.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PairSourceCount {
    /// `hmlr_price_paid_category_b_other`, `hmlr_ccod_snapshots` or `auction_results`.
    pub source: String,
    /// Pairs of this source given to the estimator (the series' `n_pairs` counts those it
    /// used, which can be fewer).
    pub pairs: i64,
}

/// Where the numbers come from and how they are made.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CapitalProvenance {
    /// `repeat_sales` (the series' own estimate: national, national by sector, or an authority
    /// when no national series is published) or `repeat_sales_shrunk_toward_national` (a
    /// local authority's series shrunk toward the national ALL series).
    pub method: &'static str,
    pub method_detail: &'static str,
    /// The sources the index pairs from (every source, whether or not this series has pairs of
    /// it).
    pub pair_sources: Vec<String>,
    /// This series' pairs by source (only sources with pairs; empty when no series is built).
    pub pairs_by_source: Vec<PairSourceCount>,
    pub min_series_pairs: usize,
    pub min_quarter_pairs: usize,
}

/// The capital index answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CapitalIndex {
    pub area: AreaScope,
    pub sector: Sector,
    /// `quarterly`.
    pub frequency: &'static str,
    /// `1995Q1 = 100` (see `series.base_quarter` for the quarter actually at 100).
    pub base: &'static str,
    pub basis: &'static str,
    pub series: Block<CapitalSeries>,
    pub provenance: CapitalProvenance,
}

impl CapitalIndex {
    /// Whether a series is published.
    pub fn answered(&self) -> bool {
        matches!(self.series, Block::Available(_))
    }
}

/// The capital index of a sector nationally, or of ALL sectors in a local authority, for the
/// quarters `start..=end` (`YYYYQn`, already checked). A local authority with a sector other
/// than ALL has no series (the caller refuses it before asking).
pub async fn capital_index(
    db: &Db,
    area: AreaScope,
    sector: Sector,
    start: Option<&str>,
    end: Option<&str>,
) -> Result<CapitalIndex, LookupError> {
    let area_code = area.lad_code.clone().unwrap_or_else(|| NATIONAL.into());
    let rows = cap::capital_series(db, &format!("{area_code}|{}", sector_name(sector))).await?;
    let place = match &area.lad_code {
        None => "nationally".to_string(),
        Some(c) => format!(
            "in {}",
            area.name
                .clone()
                .map_or(c.clone(), |n| format!("{n} ({c})"))
        ),
    };
    let series = if area.lad_code.is_some() && sector != Sector::All {
        na(
            "there is no local-by-sector capital series: a local authority has a series of ALL sectors only",
        )
    } else if rows.is_empty() {
        if cap::capital_point_count(db).await? == 0 {
            na(
                "no repeat sales of commercial property are loaded: the index needs the same non-residential property observed at two prices (Price Paid category B sales of property type O, successive CCOD snapshots of a title linked to a rated property, or a sold auction lot of one), and the last build found no such pair",
            )
        } else {
            na(format!(
                "no repeat sales of {} property {place} are loaded",
                sector_name(sector)
            ))
        }
    } else if let Some(base) = rows.iter().find_map(|r| r.base_quarter.clone()) {
        let n_pairs = rows.first().map_or(0, |r| r.series_pairs);
        let points = rows
            .iter()
            .filter(|r| start.is_none_or(|s| r.quarter.as_str() >= s))
            .filter(|r| end.is_none_or(|e| r.quarter.as_str() <= e))
            .map(|r| CapitalPoint {
                quarter: r.quarter.clone(),
                index: r.level,
                log_se: r.log_se,
                n_pairs: r.n_pairs,
                own_weight: r.own_weight,
                reason: r.withheld.clone(),
            })
            .collect();
        let base_note = if base == BASE_QUARTER {
            "1995Q1 = 100".to_string()
        } else {
            format!(
                "{base} = 100: too few pairs reach 1995Q1 (Price Paid publishes category B sales only from 14 October 2013), so the series is based on its first quarter with enough pairs"
            )
        };
        Block::Available(CapitalSeries {
            base_quarter: base,
            base_note,
            n_pairs,
            points,
        })
    } else {
        let n = rows.first().map_or(0, |r| r.series_pairs);
        let why = rows
            .first()
            .and_then(|r| r.withheld.clone())
            .unwrap_or_default();
        na(format!(
            "the {} series {place} is withheld ({n} pairs): {why}",
            sector_name(sector)
        ))
    };
    let shrunk = rows.iter().any(|r| r.own_weight.is_some());
    let pairs_by_source = rows
        .first()
        .map(|r| decode_sources(&r.pair_sources))
        .unwrap_or_default();
    Ok(CapitalIndex {
        area,
        sector,
        frequency: "quarterly",
        base: "1995Q1 = 100",
        basis: BASIS,
        series,
        provenance: CapitalProvenance {
            method: if shrunk {
                METHOD_SHRUNK
            } else {
                METHOD_REPEAT_SALES
            },
            method_detail: if shrunk { METHOD_SHRUNK_DETAIL } else { METHOD },
            pair_sources: PairSource::ALL
                .into_iter()
                .map(|s| s.id().to_string())
                .collect(),
            pairs_by_source,
            min_series_pairs: MIN_SERIES_PAIRS,
            min_quarter_pairs: MIN_QUARTER_PAIRS,
        },
    })
}

/// The capital index as a block of another answer: available only where a series is.
pub async fn capital_block(
    db: &Db,
    area: AreaScope,
    sector: Sector,
) -> Result<Block<CapitalIndex>, LookupError> {
    let ix = capital_index(db, area, sector, None, None).await?;
    Ok(match &ix.series {
        Block::Available(_) => Block::Available(ix),
        Block::NotAvailable(u) => Block::NotAvailable(u.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quarters_parse() {
        assert_eq!(parse_quarter("1995Q1"), Some((1995, 1)));
        assert_eq!(parse_quarter("2024Q4"), Some((2024, 4)));
        assert_eq!(parse_quarter("2024Q5"), None);
        assert_eq!(parse_quarter("24Q1"), None);
        assert_eq!(parse_quarter("2024-01"), None);
    }
}
