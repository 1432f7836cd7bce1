//! The commercial capital index: a quarterly repeat-sales index of prices paid for the same
//! non-residential property sold twice (docs/METHODS.md, "Commercial capital index").
//!
//! The build ([`build`], a derived step) reads HM Land Registry Price Paid sales of category B
//! with property type `O` (Other), keys each to its property (the UPRN where the address matcher
//! or the lookup linked one, else the normalised address: postcode, PAON, SAON, street), places
//! it in a local authority (the address's, else the postcode's) and a sector (the rating-list
//! entry linked to the UPRN; `unclassified` otherwise, counted in ALL only), forms consecutive
//! pairs with the filters of `terrace_analytics::form_pairs`, and estimates each series with
//! `terrace_analytics::repeat_sales_index` on quarters from 1995Q1: national ALL, national by
//! sector, and each local authority with ALL sectors. There is no local-by-sector series.
//!
//! Gates: a series of fewer than [`MIN_SERIES_PAIRS`] pairs is withheld whole; a quarter with
//! fewer than [`MIN_QUARTER_PAIRS`] pairs touching it has no level. The base is 1995Q1 = 100
//! when 1995Q1 passes the gate, else the first quarter that does, and the answer says which.
//! Nothing is shrunk: `provenance.method` is `repeat_sales`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{Datelike, NaiveDateTime};
use schemars::JsonSchema;
use serde::Serialize;
use terrace_analytics::{
    Grain, IndexGrid, Month, PairFilter, Period, PropertyType, Sale, Tenure, form_pairs,
    repeat_sales_index,
};
use terrace_store::capital::{self as cap, CapitalPointRow, CommercialSaleRow};
use terrace_store::rating as rt;
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
/// The source of the pairs.
pub const PAIR_SOURCE: &str = "hmlr_price_paid_category_b_other";

pub const BASIS: &str = "prices paid: HM Land Registry Price Paid sales of category B (additional price paid) with property type O (Other), the non-residential transfers within Price Paid, for the same property (UPRN, else the normalised address) sold twice; category B exists only from 14 October 2013, so quarters before then have no pairs. A capital index, not a rent index: never put it on one axis with the rating-list rent index.";
pub const METHOD: &str = "repeat_sales: the interval-weighted repeat-sales estimator (Case-Shiller, three stages) on quarters, over consecutive pairs of the same property held at least 6 months with annualised log growth within 0.5; a series of fewer than 10 pairs is withheld, a quarter with fewer than 3 pairs touching it has no level; not shrunk toward any parent";

fn sector_name(s: Sector) -> String {
    s.name()
}

/// What the build did.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildReport {
    pub sales: usize,
    pub pairs: usize,
    pub series: usize,
    pub series_published: usize,
    pub rows: usize,
}

impl BuildReport {
    pub fn summary(&self) -> String {
        format!(
            "[derive] commercial capital index: {} category B non-residential sales, {} repeat-sale pairs, {} series ({} published), {} quarter rows",
            self.sales, self.pairs, self.series, self.series_published, self.rows
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

/// A sale placed and classified.
struct Placed {
    sale: Sale,
    lad: Option<String>,
    sector: Option<Sector>,
}

async fn placed_sales(db: &Db) -> Result<Vec<Placed>, StoreError> {
    let rows = cap::commercial_sales(db).await?;
    let uprns: Vec<i64> = rows
        .iter()
        .filter_map(|r| r.uprn)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let pcs: Vec<String> = rows
        .iter()
        .filter_map(|r| r.postcode.clone())
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
    Ok(rows
        .iter()
        .filter_map(|r| {
            let key = match r.uprn {
                Some(u) => u64::try_from(u).ok()?,
                None => address_key(r)?,
            };
            let month = Month::new(r.date.year(), r.date.month())?;
            let lad = r
                .uprn
                .and_then(|u| lad_of_uprn.get(&u).cloned())
                .or_else(|| r.postcode.as_ref().and_then(|p| lad_of_pc.get(p).cloned()));
            Some(Placed {
                sale: Sale {
                    property: Some(key),
                    month,
                    day: u8::try_from(r.date.day()).unwrap_or(1),
                    price: r.price,
                    property_type: PropertyType::Other,
                    tenure: Tenure::Freehold,
                    new_build: false,
                    floor_area_m2: None,
                },
                lad,
                sector: r.uprn.and_then(sector_of),
            })
        })
        .collect())
}

/// One series estimated and gated into rows.
fn series_rows(
    area_code: &str,
    sector: Sector,
    sales: &[Sale],
    last: Month,
    now: NaiveDateTime,
) -> (usize, bool, Vec<CapitalPointRow>) {
    let (pairs, _) = form_pairs(sales, &PairFilter::default());
    let sector_s = sector_name(sector);
    let series_key = format!("{area_code}|{sector_s}");
    let grain = Grain::Quarter;
    let Some(first) = Month::new(1995, 1) else {
        return (0, false, Vec::new());
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
        return (0, false, Vec::new());
    };
    let last_q = touching.keys().next_back().copied().unwrap_or(first_q);
    let row = |q: Period,
               level: Option<f64>,
               se: Option<f64>,
               n: usize,
               base: Option<&str>,
               why: Option<String>,
               series_pairs: usize| CapitalPointRow {
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
        pair_sources: PAIR_SOURCE.into(),
        source: terrace_core::sources::HMLR_PRICE_PAID.id.into(),
        updated_at: now,
    };
    let quarters = terrace_analytics::period_range(first_q, last_q);
    let withheld_all = |why: String, n_series: usize| -> Vec<CapitalPointRow> {
        quarters
            .iter()
            .map(|q| {
                let n = touching.get(q).copied().unwrap_or(0);
                row(*q, None, None, n, None, Some(why.clone()), n_series)
            })
            .collect()
    };
    if pairs.len() < MIN_SERIES_PAIRS {
        let why = format!(
            "the series has {} repeat-sale pairs, fewer than the {MIN_SERIES_PAIRS} a series needs",
            pairs.len()
        );
        return (pairs.len(), false, withheld_all(why, pairs.len()));
    }
    // The base: 1995Q1 when it passes the quarter gate, else the first quarter that does.
    let base_q = touching
        .iter()
        .find(|(_, n)| **n >= MIN_QUARTER_PAIRS)
        .map(|(q, _)| *q);
    let Some(base_q) = base_q else {
        let why = format!("no quarter has the {MIN_QUARTER_PAIRS} pairs a level needs");
        return (pairs.len(), false, withheld_all(why, pairs.len()));
    };
    let grid = match IndexGrid::new(
        grain,
        first,
        last.max(last_q.end_month()),
        base_q.start_month(),
    ) {
        Ok(g) => g,
        Err(e) => return (pairs.len(), false, withheld_all(e.to_string(), pairs.len())),
    };
    let fit = match repeat_sales_index(&pairs, &grid) {
        Ok(f) => f,
        Err(e) => {
            return (
                pairs.len(),
                false,
                withheld_all(format!("the estimate failed: {e}"), pairs.len()),
            );
        }
    };
    if fit.n_pairs_used < MIN_SERIES_PAIRS {
        let why = format!(
            "the series has {} usable repeat-sale pairs, fewer than the {MIN_SERIES_PAIRS} a series needs",
            fit.n_pairs_used
        );
        return (fit.n_pairs_used, false, withheld_all(why, fit.n_pairs_used));
    }
    let base_label = base_q.label();
    let rows = quarters
        .iter()
        .map(|q| {
            let n = touching.get(q).copied().unwrap_or(0);
            let point = fit.series.point(*q);
            let level = point.and_then(|p| p.level);
            let (level, se, why) = if n < MIN_QUARTER_PAIRS {
                (
                    None,
                    None,
                    Some(format!(
                        "{n} pairs touch this quarter, fewer than the {MIN_QUARTER_PAIRS} a level needs"
                    )),
                )
            } else if let Some(l) = level {
                (
                    Some((l * 100.0).round() / 100.0),
                    point.and_then(|p| p.log_se),
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
            )
        })
        .collect();
    (fit.n_pairs_used, true, rows)
}

/// The derived step: builds every series from the loaded sales and replaces the table.
pub async fn build(db: &Db, now: NaiveDateTime) -> Result<BuildReport, StoreError> {
    let placed = placed_sales(db).await?;
    let last = placed
        .iter()
        .map(|p| p.sale.month)
        .max()
        .or_else(|| Month::new(1995, 1));
    let mut rows = Vec::new();
    let mut report = BuildReport {
        sales: placed.len(),
        pairs: 0,
        series: 0,
        series_published: 0,
        rows: 0,
    };
    let Some(last) = last else {
        return Ok(report);
    };
    let mut groups: BTreeMap<(String, Sector), Vec<Sale>> = BTreeMap::new();
    for p in &placed {
        groups
            .entry((NATIONAL.to_string(), Sector::All))
            .or_default()
            .push(p.sale.clone());
        if let Some(s) = p.sector {
            groups
                .entry((NATIONAL.to_string(), s))
                .or_default()
                .push(p.sale.clone());
        }
        if let Some(l) = &p.lad {
            groups
                .entry((l.clone(), Sector::All))
                .or_default()
                .push(p.sale.clone());
        }
    }
    for ((area, sector), sales) in &groups {
        let (n, published, r) = series_rows(area, *sector, sales, last, now);
        if r.is_empty() {
            continue;
        }
        if area == NATIONAL && *sector == Sector::All {
            report.pairs = n;
        }
        report.series += 1;
        report.series_published += usize::from(published);
        rows.extend(r);
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

/// Where the numbers come from and how they are made.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CapitalProvenance {
    /// `repeat_sales` (no shrinkage toward a parent series is applied).
    pub method: &'static str,
    pub method_detail: &'static str,
    /// The sources of the pairs.
    pub pair_sources: Vec<String>,
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
                "no repeat sales of commercial property are loaded: the index needs the same non-residential property sold twice (Price Paid category B, property type O), and the last build found no such pair",
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
                reason: r.withheld.clone(),
            })
            .collect();
        let base_note = if base == BASE_QUARTER {
            "1995Q1 = 100".to_string()
        } else {
            format!(
                "{base} = 100: no pairs reach 1995Q1 (Price Paid publishes category B sales only from 14 October 2013), so the series is based on its first quarter with enough pairs"
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
    Ok(CapitalIndex {
        area,
        sector,
        frequency: "quarterly",
        base: "1995Q1 = 100",
        basis: BASIS,
        series,
        provenance: CapitalProvenance {
            method: "repeat_sales",
            method_detail: METHOD,
            pair_sources: vec![PAIR_SOURCE.to_string()],
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
