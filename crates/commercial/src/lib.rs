//! The commercial family: the VOA non-domestic rating lists, the UARN to UPRN links and the
//! commercial report (specification part 2.8): the hereditament as the 2026 rating list
//! describes it, the sector rent index across the four lists, capital index, income-basis value
//! with the yield's receipt, auction history and the district's commercial auction market,
//! registered owner and lease (from `terrace-ownership`).
//!
//! Architecture Invariant: plain functions over the store, no HTTP or MCP types. Each block is
//! `not_available` with a reason when its data is missing; nothing is estimated without its
//! source (no yield source, no income value). Errors are the store's shared `LookupError`.

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::{Uarn, Unavailable, Uprn};
use terrace_store::Db;
use terrace_store::address;
use terrace_store::rating::{self as rt, RatingEntryRow, UarnLinkRow};

use terrace_ownership::LeaseResult;
use terrace_store::LookupError;

pub mod capital_index;
pub mod market;
pub mod owner;
pub mod rent_index;
pub mod sector;
pub mod sourcing;

pub use capital_index::{
    CapitalIndex, CapitalPoint, CapitalSeries, PairSource, PairSourceCount, capital_index,
};
pub use market::{CommercialMarket, RatedStock, commercial_market};
pub use rent_index::{RentIndex, RentPoint, rent_index};
pub use sector::{AreaScope, Sector, resolve_authority};
pub use sourcing::{SourcingAnswer, SourcingQuery, SourcingRow, sourcing, sourcing_scope};

/// The four rating lists, oldest first.
pub const LISTS: [i32; 4] = [2010, 2017, 2023, 2026];
/// The fewest entries of a sector in a list for its median to be published.
pub const MIN_SECTOR_ENTRIES: usize = 5;

/// A block of the report: its data, or `{"status": "not_available", "reason": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Block<T> {
    Available(T),
    NotAvailable(Unavailable),
}

fn na<T>(reason: impl Into<String>) -> Block<T> {
    Block::NotAvailable(Unavailable::new(reason))
}

/// One rating list entry.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Hereditament {
    pub list_year: i32,
    pub uarn: i64,
    pub billing_authority: Option<String>,
    pub ba_reference: Option<String>,
    /// The VOA primary description code (`CS` shop and premises, `CO` offices, ...).
    pub description_code: Option<String>,
    pub description_text: Option<String>,
    pub scat_code: Option<String>,
    pub firm_name: Option<String>,
    /// The full property identifier, as the list writes it.
    pub address: String,
    pub postcode: Option<String>,
    /// Pounds per year at the list's antecedent valuation date.
    pub rateable_value: Option<i64>,
    pub effective_date: NaiveDate,
    pub source: String,
}

fn hereditament_of(e: &RatingEntryRow) -> Hereditament {
    Hereditament {
        list_year: e.list_year,
        uarn: e.uarn,
        billing_authority: e.billing_authority.clone(),
        ba_reference: e.ba_reference.clone(),
        description_code: e.description_code.clone(),
        description_text: e.description_text.clone(),
        scat_code: e.scat_code.clone(),
        firm_name: e.firm_name.clone(),
        address: e.address.clone(),
        postcode: e.postcode.clone(),
        rateable_value: e.rateable_value,
        effective_date: e.effective_date,
        source: e.source.clone(),
    }
}

/// One list's point of the sector rent index.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SectorPoint {
    pub list_year: i32,
    /// Entries of the sector in the billing authority in this list.
    pub n: usize,
    /// Median rateable value (pounds a year); null under 5 entries.
    pub median_rateable_value: Option<i64>,
    /// Median against the earliest list with a median (= 100); null when either is missing.
    pub index: Option<f64>,
    /// This property's own rateable value in the list, when it has an entry.
    pub own_rateable_value: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SectorRentIndex {
    pub description_code: String,
    pub billing_authority: String,
    pub base_list: i32,
    pub points: Vec<SectorPoint>,
    pub basis: &'static str,
}

const SECTOR_BASIS: &str = "Median rateable value of the entries with the same primary description code in the same billing authority, per rating list (2010, 2017, 2023, 2026); a rateable value is the annual rent the VOA assessed at each list's valuation date, so the medians track rents, but the entries differ between lists. Medians of fewer than 5 entries are withheld.";

/// The yield used for the income-basis value and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct IncomeValue {
    pub value_gbp: i64,
    pub rent_gbp: i64,
    pub yield_pct: f64,
    pub yield_source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct UprnLink {
    pub uprn: i64,
    /// `uarn_uprn_lookup` (a lookup file) or `address_matcher` (Terrace's matcher on the list's
    /// address).
    pub method: String,
    pub score: Option<f64>,
    pub source: String,
}

/// The registered owner block of the report.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RegisteredOwner {
    pub uprn: i64,
    /// The company-owned titles linked to the UPRN, freeholds first.
    pub titles: Vec<owner::OwnerTitle>,
    pub note: &'static str,
}

const OWNER_NOTE: &str = "Company-owned titles from HM Land Registry's CCOD and OCOD files, linked to the UPRN by the address matcher on the title's property address; titles held only by private individuals or charities are not published in bulk.";

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CommercialReport {
    pub country: &'static str,
    /// The UPRN asked for, or the one the rating list links (null when none is linked).
    pub uprn: Option<i64>,
    /// The rated property reported on (null when no rating list entry is linked to the UPRN).
    pub uarn: Option<i64>,
    /// How the UARN is linked to the UPRN.
    pub uprn_link: Option<UprnLink>,
    /// Other UARNs linked to the same UPRN (a building with several rated parts).
    pub other_uarns: Vec<i64>,
    pub hereditament: Block<Hereditament>,
    /// The entries of this UARN in every loaded list, oldest first.
    pub list_history: Vec<Hereditament>,
    pub sector_rent_index: Block<SectorRentIndex>,
    /// The national capital index of the hereditament's sector (national ALL where that sector
    /// has no published series).
    pub capital_index: Block<capital_index::CapitalIndex>,
    pub income_value: Block<IncomeValue>,
    pub auction_history: Block<serde_json::Value>,
    pub district_auction_market: Block<serde_json::Value>,
    /// The company-owned titles (CCOD/OCOD) linked to the UPRN, or why none is.
    pub registered_owner: Block<RegisteredOwner>,
    pub lease: Block<LeaseResult>,
    pub as_of: NaiveDate,
}

pub(crate) fn median(mut v: Vec<i64>) -> Option<i64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    })
}

async fn sector_index(
    db: &Db,
    entries: &[RatingEntryRow],
) -> Result<Block<SectorRentIndex>, LookupError> {
    let Some(newest) = entries.last() else {
        return Ok(na("no rating list entry, so no sector"));
    };
    let (Some(code), Some(ba)) = (&newest.description_code, &newest.billing_authority) else {
        return Ok(na(
            "the rating list entry has no description code or billing authority",
        ));
    };
    let values = rt::sector_values(db, code, ba).await?;
    let mut points = Vec::new();
    let mut base: Option<(i32, i64)> = None;
    for year in LISTS {
        let rvs: Vec<i64> = values
            .iter()
            .filter(|(y, _)| *y == year)
            .filter_map(|(_, v)| *v)
            .collect();
        let n = rvs.len();
        let med = if n >= MIN_SECTOR_ENTRIES {
            median(rvs)
        } else {
            None
        };
        if base.is_none()
            && let Some(m) = med
        {
            base = Some((year, m));
        }
        let index = match (med, base) {
            (Some(m), Some((_, b))) if b > 0 => Some((m as f64 / b as f64 * 1000.0).round() / 10.0),
            _ => None,
        };
        points.push(SectorPoint {
            list_year: year,
            n,
            median_rateable_value: med,
            index,
            own_rateable_value: entries
                .iter()
                .find(|e| e.list_year == year)
                .and_then(|e| e.rateable_value),
        });
    }
    let Some((base_list, _)) = base else {
        return Ok(na(format!(
            "no list holds {MIN_SECTOR_ENTRIES} or more entries with description code {code} in billing authority {ba}"
        )));
    };
    Ok(Block::Available(SectorRentIndex {
        description_code: code.clone(),
        billing_authority: ba.clone(),
        base_list,
        points,
        basis: SECTOR_BASIS,
    }))
}

async fn report(
    db: &Db,
    uprn: Option<i64>,
    uarn: Option<i64>,
    link: Option<UarnLinkRow>,
    other_uarns: Vec<i64>,
    today: NaiveDate,
) -> Result<CommercialReport, LookupError> {
    let entries = match uarn {
        Some(u) => rt::entries_for_uarn(db, u).await?,
        None => Vec::new(),
    };
    let lists = rt::lists_with_entries(db, &LISTS).await?;
    let loaded = |y: i32| lists.contains(&y);
    let hereditament = match (uarn, entries.iter().find(|e| e.list_year == 2026)) {
        (None, _) => na("no rating list entry (UARN) is linked to this UPRN"),
        (Some(_), Some(e)) => Block::Available(hereditament_of(e)),
        (Some(_), None) if !loaded(2026) => na("the 2026 rating list is not loaded"),
        (Some(u), None) => na(format!("the 2026 rating list has no entry for UARN {u}")),
    };
    let sector_rent_index = if uarn.is_none() {
        na("no rating list entry (UARN) is linked to this UPRN")
    } else {
        sector_index(db, &entries).await?
    };
    let lease = match uprn {
        None => na("no UPRN is linked to this rated property, so no registered lease can be found"),
        Some(u) => match Uprn::new(u) {
            Err(_) => na("the linked UPRN is not valid"),
            Ok(u) => match terrace_ownership::lease(db, u, today).await {
                Ok(l) if l.lease.is_some() => Block::Available(l),
                Ok(l) => na(l
                    .reason
                    .unwrap_or_else(|| "no registered lease is linked".into())),
                Err(LookupError::NotFound(_)) => {
                    na("the linked UPRN is not in the address register")
                }
                Err(e @ LookupError::Store(_)) => return Err(e),
            },
        },
    };
    let registered_owner = {
        let (mut by_uprn, loaded) =
            owner::titles_by_uprn(db, &uprn.into_iter().collect::<Vec<_>>()).await?;
        match uprn.and_then(|u| by_uprn.remove(&u).map(|t| (u, t))) {
            Some((u, mut titles)) => {
                titles.sort_by_key(|t| t.tenure.as_deref() != Some("Freehold"));
                Block::Available(RegisteredOwner {
                    uprn: u,
                    titles,
                    note: OWNER_NOTE,
                })
            }
            None => na(owner::no_title_reason(uprn, loaded)),
        }
    };
    let capital_index = {
        let sector = entries
            .iter()
            .max_by_key(|e| e.list_year)
            .map(|e| Sector::of_code(e.description_code.as_deref()));
        let mut block = na("no rating list entry (UARN) is linked, so the property has no sector");
        for s in sector.into_iter().chain([Sector::All]) {
            block = capital_index::capital_block(db, AreaScope::national(), s).await?;
            if matches!(block, Block::Available(_)) {
                break;
            }
        }
        block
    };
    Ok(CommercialReport {
        country: "UK",
        uprn,
        uarn,
        uprn_link: link.map(|l| UprnLink {
            uprn: l.uprn,
            method: l.match_method,
            score: l.match_score,
            source: l.source,
        }),
        other_uarns,
        hereditament,
        list_history: entries.iter().map(hereditament_of).collect(),
        sector_rent_index,
        capital_index,
        income_value: na(
            "no yield source is loaded, so no income-basis value is given (a yield is never assumed)",
        ),
        auction_history: na("no auction results are loaded"),
        district_auction_market: na("no auction results are loaded"),
        registered_owner,
        lease,
        as_of: today,
    })
}

/// The commercial report of a UPRN: the lowest UARN linked to it (others are listed).
pub async fn commercial_by_uprn(
    db: &Db,
    uprn: Uprn,
    today: NaiveDate,
) -> Result<CommercialReport, LookupError> {
    let mut links = rt::links_for_uprn(db, uprn.get()).await?;
    if links.is_empty() && address::address(db, uprn.get()).await?.is_none() {
        return Err(LookupError::NotFound(format!("UPRN {uprn}")));
    }
    let first = if links.is_empty() {
        None
    } else {
        Some(links.remove(0))
    };
    let others = links.iter().map(|l| l.uarn).collect();
    report(
        db,
        Some(uprn.get()),
        first.as_ref().map(|l| l.uarn),
        first,
        others,
        today,
    )
    .await
}

/// The commercial report of a rated property by its UARN, with the UPRN the list links.
pub async fn commercial_by_uarn(
    db: &Db,
    uarn: Uarn,
    today: NaiveDate,
) -> Result<CommercialReport, LookupError> {
    let entries = rt::entries_for_uarn(db, uarn.get()).await?;
    let link = rt::links_by_uarn(db, &[uarn.get()])
        .await?
        .into_iter()
        .next();
    if entries.is_empty() && link.is_none() {
        return Err(LookupError::NotFound(format!("UARN {uarn}")));
    }
    let uprn = link.as_ref().map(|l| l.uprn);
    let others = match uprn {
        Some(u) => rt::links_for_uprn(db, u)
            .await?
            .into_iter()
            .map(|l| l.uarn)
            .filter(|a| *a != uarn.get())
            .collect(),
        None => Vec::new(),
    };
    report(db, uprn, Some(uarn.get()), link, others, today).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3, 1, 2]), Some(2));
        assert_eq!(median(vec![4, 1, 2, 3]), Some(2));
    }
}
