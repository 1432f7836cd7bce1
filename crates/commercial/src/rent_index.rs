//! The commercial rent index from the rating lists: a constant-sample chain over consecutive
//! lists, 2010 list = 100 (docs/METHODS.md, "Commercial rent index").
//!
//! Each link compares the rateable values of the hereditaments (UARNs) that are in the sector in
//! both lists: the link ratio is the geometric mean of their value ratios (a hereditament whose
//! value moved by more than five times either way is left out: such a move is a split, merger or
//! physical change, not a rent movement). A link with fewer than [`MIN_CONSTANT`] hereditaments
//! is not published, and the chain stops there.

use std::collections::BTreeMap;

use chrono::{NaiveDate, NaiveDateTime};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::HashMap;
use terrace_store::rating::{self as rt, IndexEntry, RentPointRow};
use terrace_store::{Db, LookupError, StoreError};

use crate::capital_index::NATIONAL;
use crate::sector::{AreaScope, Sector};
use crate::{Block, LISTS, median, na};

/// The fewest hereditaments in both lists of a link for its ratio to be published.
pub const MIN_CONSTANT: usize = 5;
/// A value ratio outside [1/MAX_RATIO, MAX_RATIO] is a changed hereditament, not a rent move.
pub const MAX_RATIO: f64 = 5.0;

/// The antecedent valuation date of a list: the date its rateable values are assessed at.
pub fn valuation_date(list_year: i32) -> Option<NaiveDate> {
    match list_year {
        2010 => NaiveDate::from_ymd_opt(2008, 4, 1),
        2017 => NaiveDate::from_ymd_opt(2015, 4, 1),
        2023 => NaiveDate::from_ymd_opt(2021, 4, 1),
        2026 => NaiveDate::from_ymd_opt(2024, 4, 1),
        _ => None,
    }
}

pub const BASIS: &str = "open-market rent assessments: each list's rateable values are the VOA's assessment of the annual rent each hereditament would let for on the open market at the list's antecedent valuation date (2008-04-01, 2015-04-01, 2021-04-01, 2024-04-01); not rents paid, not asking rents and not capital values";
pub const METHOD: &str = "constant-sample chain: each link is the geometric mean of the rateable value ratios of the hereditaments (UARNs) in the sector in both consecutive lists (ratios beyond 5x either way left out as changed hereditaments), published with at least 5 of them; the 2010 list = 100 and each later point is the previous point times its link ratio";
pub const LICENCE: &str = "Derived from the VOA non-domestic rating lists, which are supplied under the VOA's restricted licence (not the Open Government Licence): use is limited to non-domestic rating purposes and the terms must be passed on to anyone given the data (docs/DATA.md).";

/// One list's point of the rent index.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RentPoint {
    pub list_year: i32,
    /// The antecedent valuation date the list's values are assessed at.
    pub valuation_date: NaiveDate,
    /// 2010 list = 100; null when the chain to this list is broken (`reason` says where).
    pub index: Option<f64>,
    /// The ratio from the previous list (null on the 2010 list, and when the link is thin).
    pub link_ratio: Option<f64>,
    /// Hereditaments in the sector in both this and the previous list with a value ratio used.
    pub n_constant: Option<usize>,
    /// Entries of the sector in the area in this list.
    pub n_entries: usize,
    /// Median rateable value of those entries (pounds a year); null when there are none.
    pub median_rateable_value: Option<i64>,
    /// Why `index` is null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The rent index of a sector and area.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RentIndex {
    pub area: AreaScope,
    pub sector: Sector,
    /// `2010 list = 100`.
    pub base: &'static str,
    pub basis: &'static str,
    pub method: &'static str,
    pub points: Vec<RentPoint>,
    /// Rateable value per square metre of measured floor area, per list whose summary
    /// valuations are loaded; `not_available` when none is.
    pub rent_per_m2: Block<RentPerM2>,
    pub licence: &'static str,
}

/// One list's rateable value per square metre.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PerM2Point {
    pub list_year: i32,
    pub valuation_date: NaiveDate,
    /// Valued entries of the sector in the area with a measured floor area in this list.
    pub n_measured: usize,
    /// Median of rateable value / floor area (pounds per square metre a year); null when none
    /// is measured.
    pub median_rv_per_m2: Option<f64>,
}

/// The rateable value per square metre series.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RentPerM2 {
    pub points: Vec<PerM2Point>,
    pub basis: &'static str,
}

pub const PER_M2_BASIS: &str = "each entry's rateable value over the floor area its VOA summary valuation measures (units of measurement NIA, GIA, GEA, EFA or RCA only; a valuation per room or per unit is never read as square metres), median per list; an assessment per square metre, not a rent paid or a price; lists whose summary valuations are not loaded are left out";

/// The median of a list of positive reals.
pub fn median_f(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The per-square-metre block where no summary valuation is loaded.
fn not_measured() -> Block<RentPerM2> {
    na(
        "rateable value per square metre needs the VOA summary valuations (measured floor areas), and none is loaded",
    )
}

/// The per-square-metre series of the sector's entries over the measured floor areas
/// (`areas` by list and UARN), for the lists in `measured_lists`.
pub fn per_m2(
    entries: &[IndexEntry],
    sector: Sector,
    areas: &HashMap<(i32, i64), f64>,
    measured_lists: &[i32],
) -> Block<RentPerM2> {
    if measured_lists.is_empty() {
        return not_measured();
    }
    let points = LISTS
        .iter()
        .filter(|y| measured_lists.contains(y))
        .map(|&year| {
            let v: Vec<f64> = entries
                .iter()
                .filter(|(y, _, code, _)| *y == year && sector.contains(code.as_deref()))
                .filter_map(|(_, uarn, _, rv)| {
                    let a = areas.get(&(year, *uarn))?;
                    rv.filter(|r| *r > 0).map(|r| r as f64 / a)
                })
                .collect();
            PerM2Point {
                list_year: year,
                valuation_date: valuation_date(year).unwrap_or_default(),
                n_measured: v.len(),
                median_rv_per_m2: median_f(v).map(|m| round(m, 2)),
            }
        })
        .collect();
    Block::Available(RentPerM2 {
        points,
        basis: PER_M2_BASIS,
    })
}

/// The lists whose summary valuations are loaded.
pub async fn measured_lists(db: &Db) -> Result<Vec<i32>, LookupError> {
    Ok(rt::lists_with_valuations(db, &LISTS).await?)
}

fn round(x: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (x * f).round() / f
}

/// The points of the chain over `entries` (any order) of the sector, for every list of
/// [`LISTS`]; `loaded` says which lists hold any entry at all (anywhere), so that an unloaded
/// list is told apart from an empty sector.
pub fn chain(entries: &[IndexEntry], sector: Sector, loaded: &[i32]) -> Vec<RentPoint> {
    let mut by_list: BTreeMap<i32, BTreeMap<i64, i64>> = BTreeMap::new();
    let mut counts: BTreeMap<i32, Vec<i64>> = BTreeMap::new();
    for (year, uarn, code, rv) in entries {
        if !sector.contains(code.as_deref()) {
            continue;
        }
        if let Some(v) = rv.filter(|v| *v > 0) {
            by_list.entry(*year).or_default().insert(*uarn, v);
            counts.entry(*year).or_default().push(v);
        }
    }
    let empty = BTreeMap::new();
    let mut points = Vec::new();
    let mut level: Result<f64, String> = Err(String::new());
    for (k, &year) in LISTS.iter().enumerate() {
        let values = counts.get(&year).cloned().unwrap_or_default();
        let n_entries = values.len();
        let mut link_ratio = None;
        let mut n_constant = None;
        if k == 0 {
            level = if !loaded.contains(&year) {
                Err("the 2010 rating list (the base) is not loaded".into())
            } else if n_entries == 0 {
                Err(
                    "the 2010 list (the base) has no valued entry of this sector in this area"
                        .into(),
                )
            } else {
                Ok(100.0)
            };
        } else {
            let prev_year = LISTS[k - 1];
            let prev = by_list.get(&prev_year).unwrap_or(&empty);
            let this = by_list.get(&year).unwrap_or(&empty);
            let logs: Vec<f64> = this
                .iter()
                .filter_map(|(uarn, v)| prev.get(uarn).map(|p| *v as f64 / *p as f64))
                .filter(|r| (1.0 / MAX_RATIO..=MAX_RATIO).contains(r))
                .map(f64::ln)
                .collect();
            n_constant = Some(logs.len());
            let link = if !loaded.contains(&year) {
                Err(format!("the {year} rating list is not loaded"))
            } else if logs.len() < MIN_CONSTANT {
                Err(format!(
                    "only {} hereditaments of this sector in this area are in both the {prev_year} and {year} lists (at least {MIN_CONSTANT} are needed for a link)",
                    logs.len()
                ))
            } else {
                Ok((logs.iter().sum::<f64>() / logs.len() as f64).exp())
            };
            if let Ok(r) = &link {
                link_ratio = Some(round(*r, 4));
            }
            level = match (level, link) {
                (Ok(l), Ok(r)) => Ok(l * r),
                (Err(e), _) if !e.is_empty() => {
                    Err(format!("the chain is broken before {year}: {e}"))
                }
                (Err(e), _) => Err(e),
                (Ok(_), Err(e)) => Err(e),
            };
        }
        let (index, reason) = match &level {
            Ok(l) => (Some(round(*l, 1)), None),
            Err(e) => (None, Some(e.clone())),
        };
        points.push(RentPoint {
            list_year: year,
            valuation_date: valuation_date(year).unwrap_or_default(),
            index,
            link_ratio,
            n_constant,
            n_entries,
            median_rateable_value: median(values),
            reason,
        });
    }
    points
}

/// The loaded lists (those holding any entry).
pub async fn loaded_lists(db: &Db) -> Result<Vec<i32>, LookupError> {
    Ok(rt::lists_with_entries(db, &LISTS).await?)
}

/// What the rent index build did.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildReport {
    pub entries: usize,
    /// Series written (national and each authority, by sector).
    pub series: usize,
    pub rows: usize,
    /// Entries of the newest list written to the commercial stock (placed in an authority).
    pub stock: usize,
}

impl BuildReport {
    pub fn summary(&self) -> String {
        format!(
            "[derive] commercial rent index: {} rating list entries, {} series, {} list points; commercial stock: {} entries of the newest list placed in an authority",
            self.entries, self.series, self.rows, self.stock
        )
    }
}

/// The rows of one series (`area_code` `national` or an authority) of every sector: the chain
/// over `entries` and the per-square-metre points over the measured floor areas.
pub fn series_rows(
    area_code: &str,
    entries: &[IndexEntry],
    loaded: &[i32],
    areas: &HashMap<(i32, i64), f64>,
    measured_lists: &[i32],
    now: NaiveDateTime,
) -> Vec<RentPointRow> {
    let mut rows = Vec::new();
    for sector in Sector::EVERY {
        let series_key = format!("{area_code}|{}", sector.name());
        let per = match per_m2(entries, sector, areas, measured_lists) {
            Block::Available(r) => r.points,
            Block::NotAvailable(_) => Vec::new(),
        };
        for p in chain(entries, sector, loaded) {
            let m = per.iter().find(|q| q.list_year == p.list_year);
            rows.push(RentPointRow {
                point_key: format!("{series_key}|{}", p.list_year),
                series_key: series_key.clone(),
                area_code: area_code.to_string(),
                sector: sector.name(),
                list_year: p.list_year,
                index_level: p.index,
                link_ratio: p.link_ratio,
                n_constant: p.n_constant.map(count),
                n_entries: count(p.n_entries),
                median_rateable_value: p.median_rateable_value,
                reason: p.reason,
                measured: m.is_some(),
                n_measured: m.map(|q| count(q.n_measured)),
                median_rv_per_m2: m.and_then(|q| q.median_rv_per_m2),
                updated_at: now,
            });
        }
    }
    rows
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The points and the per-square-metre block a series' rows hold (the inverse of
/// [`series_rows`] for one sector).
pub fn from_rows(
    rows: &[RentPointRow],
    measured_lists: &[i32],
) -> (Vec<RentPoint>, Block<RentPerM2>) {
    let points = rows
        .iter()
        .map(|r| RentPoint {
            list_year: r.list_year,
            valuation_date: valuation_date(r.list_year).unwrap_or_default(),
            index: r.index_level,
            link_ratio: r.link_ratio,
            n_constant: r.n_constant.and_then(|n| usize::try_from(n).ok()),
            n_entries: usize::try_from(r.n_entries).unwrap_or(0),
            median_rateable_value: r.median_rateable_value,
            reason: r.reason.clone(),
        })
        .collect();
    let per = if measured_lists.is_empty() {
        not_measured()
    } else {
        Block::Available(RentPerM2 {
            points: rows
                .iter()
                .filter(|r| r.measured)
                .map(|r| PerM2Point {
                    list_year: r.list_year,
                    valuation_date: valuation_date(r.list_year).unwrap_or_default(),
                    n_measured: r
                        .n_measured
                        .and_then(|n| usize::try_from(n).ok())
                        .unwrap_or(0),
                    median_rv_per_m2: r.median_rv_per_m2,
                })
                .collect(),
            basis: PER_M2_BASIS,
        })
    };
    (points, per)
}

/// The derived step: the rent index of every sector nationally and in every local authority
/// holding an entry, from the loaded lists and summary valuations, replacing the table, and the
/// commercial stock (the newest list's entries by authority and sector) that commercial sourcing
/// pages through. Reading every list once here is what lets a call read one series or one page.
pub async fn build(db: &Db, now: NaiveDateTime) -> Result<BuildReport, StoreError> {
    let loaded = rt::lists_with_entries(db, &LISTS).await?;
    let measured_lists = rt::lists_with_valuations(db, &LISTS).await?;
    let areas: HashMap<(i32, i64), f64> = rt::floor_areas(db)
        .await?
        .into_iter()
        .map(|(y, u, a)| ((y, u), a))
        .collect();
    let mut placed = rt::entries_with_lads(db).await?;
    placed.sort_unstable_by(|a, b| a.1.cmp(&b.1));
    let (entries, lads): (Vec<IndexEntry>, Vec<Option<String>>) = placed.into_iter().unzip();
    let mut rows = Vec::new();
    let mut series = 0;
    if !entries.is_empty() {
        rows.extend(series_rows(
            NATIONAL,
            &entries,
            &loaded,
            &areas,
            &measured_lists,
            now,
        ));
        series += Sector::EVERY.len();
    }
    let mut start = 0;
    while start < entries.len() {
        let lad = &lads[start];
        let end = start + lads[start..].iter().take_while(|l| *l == lad).count();
        if let Some(code) = lad {
            rows.extend(series_rows(
                code,
                &entries[start..end],
                &loaded,
                &areas,
                &measured_lists,
                now,
            ));
            series += Sector::EVERY.len();
        }
        start = end;
    }
    let written = rt::replace_rent_index(db, rows).await?;
    let stock = crate::sourcing::stock_rows(&entries, &lads, loaded.iter().max().copied(), now);
    let stock = rt::replace_stock(db, stock).await?;
    Ok(BuildReport {
        entries: entries.len(),
        series,
        rows: written,
        stock,
    })
}

/// The rent index of a sector, nationally or in one local authority, with the points of the
/// lists from `start` to `end` (list years, inclusive), as the last build wrote it. An area
/// with no series (no entry of any list is placed in it) reads as the chain over no entries:
/// each point says why it has no index.
pub async fn rent_index(
    db: &Db,
    area: AreaScope,
    sector: Sector,
    start: Option<i32>,
    end: Option<i32>,
) -> Result<RentIndex, LookupError> {
    let area_code = area.lad_code.clone().unwrap_or_else(|| NATIONAL.into());
    let rows = rt::rent_series(db, &format!("{area_code}|{}", sector.name())).await?;
    let measured = measured_lists(db).await?;
    let (points, mut rent_per_m2) = if rows.is_empty() {
        let loaded = loaded_lists(db).await?;
        (
            chain(&[], sector, &loaded),
            per_m2(&[], sector, &HashMap::new(), &measured),
        )
    } else {
        from_rows(&rows, &measured)
    };
    let shown = |y: i32| start.is_none_or(|s| y >= s) && end.is_none_or(|e| y <= e);
    let points = points.into_iter().filter(|p| shown(p.list_year)).collect();
    if let Block::Available(r) = &mut rent_per_m2 {
        r.points.retain(|p| shown(p.list_year));
    }
    Ok(RentIndex {
        area,
        sector,
        base: "2010 list = 100",
        basis: BASIS,
        method: METHOD,
        points,
        rent_per_m2,
        licence: LICENCE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(year: i32, uarn: i64, code: &str, rv: i64) -> IndexEntry {
        (year, uarn, Some(code.into()), Some(rv))
    }

    /// A planted four-list history: six shops whose values rise by exactly 10%, 20% and -5%, one
    /// shop that appears only in 2017 (never in a link), one split (x10, left out), and offices
    /// moving differently.
    fn planted() -> Vec<IndexEntry> {
        let mut v = Vec::new();
        for u in 1..=6i64 {
            let base = 10_000 * u;
            v.push(e(2010, u, "CS", base));
            v.push(e(2017, u, "CS", base * 11 / 10));
            v.push(e(2023, u, "CS", base * 132 / 100));
            v.push(e(2026, u, "CS", base * 1254 / 1000));
        }
        v.push(e(2017, 50, "CS", 999_999));
        v.push(e(2023, 50, "CS", 1));
        v.push(e(2010, 60, "CS", 5_000));
        v.push(e(2017, 60, "CS", 50_000));
        for u in 100..105 {
            v.push(e(2010, u, "CO", 20_000));
            v.push(e(2017, u, "CO", 30_000));
        }
        v
    }

    #[test]
    fn constant_sample_chain_recovers_the_planted_moves() {
        let pts = chain(&planted(), Sector::Retail, &LISTS);
        let idx: Vec<Option<f64>> = pts.iter().map(|p| p.index).collect();
        assert_eq!(
            idx,
            vec![Some(100.0), Some(110.0), Some(132.0), Some(125.4)]
        );
        assert_eq!(pts[0].link_ratio, None);
        assert_eq!(pts[1].link_ratio, Some(1.1));
        assert_eq!(pts[2].link_ratio, Some(1.2));
        assert_eq!(pts[3].link_ratio, Some(0.95));
        // The split (x10) and the entry only in 2017 are not in the 2010-2017 sample; uarn 50
        // moves 999,999 -> 1, beyond 5x, so not in the 2017-2023 sample either.
        assert_eq!(pts[1].n_constant, Some(6));
        assert_eq!(pts[2].n_constant, Some(6));
        assert_eq!(pts[1].n_entries, 8);
        assert_eq!(pts[0].median_rateable_value, Some(30_000));
    }

    #[test]
    fn thin_links_break_the_chain_with_a_reason() {
        let pts = chain(&planted(), Sector::Office, &LISTS);
        assert_eq!(pts[0].index, Some(100.0));
        assert_eq!(pts[1].index, Some(150.0));
        assert_eq!(pts[2].index, None);
        assert!(pts[2].reason.as_deref().unwrap().contains("only 0"));
        assert!(
            pts[3]
                .reason
                .as_deref()
                .unwrap()
                .starts_with("the chain is broken")
        );
        let none = chain(&planted(), Sector::Hotel, &LISTS);
        assert!(none.iter().all(|p| p.index.is_none()));
        assert_eq!(none[0].median_rateable_value, None);
    }

    #[test]
    fn per_square_metre_reads_measured_areas_only() {
        let mut areas = HashMap::new();
        areas.insert((2023, 1), 100.0);
        areas.insert((2023, 2), 200.0);
        areas.insert((2023, 100), 50.0);
        let b = per_m2(&planted(), Sector::Retail, &areas, &[2023]);
        let Block::Available(r) = b else {
            panic!("available")
        };
        assert_eq!(r.points.len(), 1);
        // 13,200 / 100 = 132 and 26,400 / 200 = 132.
        assert_eq!(r.points[0].n_measured, 2);
        assert_eq!(r.points[0].median_rv_per_m2, Some(132.0));
        assert!(matches!(
            per_m2(&planted(), Sector::Retail, &areas, &[]),
            Block::NotAvailable(_)
        ));
    }

    /// The rows the build writes read back as the chain and per-square-metre block they came
    /// from, for every sector.
    #[test]
    fn built_rows_read_back_as_the_chain() {
        let mut areas = HashMap::new();
        areas.insert((2023, 1), 100.0);
        areas.insert((2023, 2), 200.0);
        let now = chrono::NaiveDate::from_ymd_opt(2026, 1, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .unwrap();
        let rows = series_rows("E06000001", &planted(), &LISTS, &areas, &[2023], now);
        assert_eq!(rows.len(), Sector::EVERY.len() * LISTS.len());
        for sector in Sector::EVERY {
            let key = format!("E06000001|{}", sector.name());
            let mine: Vec<RentPointRow> = rows
                .iter()
                .filter(|r| r.series_key == key)
                .cloned()
                .collect();
            let (points, per) = from_rows(&mine, &[2023]);
            assert_eq!(points, chain(&planted(), sector, &LISTS));
            assert_eq!(per, per_m2(&planted(), sector, &areas, &[2023]));
        }
        let (_, none) = from_rows(&rows[..4], &[]);
        assert!(matches!(none, Block::NotAvailable(_)));
    }

    #[test]
    fn an_unloaded_list_is_said() {
        let pts = chain(&planted(), Sector::Retail, &[2010, 2017]);
        assert_eq!(pts[1].index, Some(110.0));
        assert_eq!(
            pts[2].reason.as_deref(),
            Some("the 2023 rating list is not loaded")
        );
        let nobase = chain(&planted(), Sector::Retail, &[2017, 2023]);
        assert!(nobase[0].reason.as_deref().unwrap().contains("not loaded"));
    }
}
