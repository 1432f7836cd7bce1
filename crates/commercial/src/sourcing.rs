//! Commercial sourcing: the rated stock of a local authority in the newest loaded list, filtered
//! by sector and rateable value, in UARN order (keyset pages), each with its history across the
//! lists and the freeholder where a company title links.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::{CursorScope, Page};
use terrace_store::rating as rt;
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
    pub auction_history: Block<serde_json::Value>,
    pub income_value: Block<serde_json::Value>,
}

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

const BASIS: &str = "Rated stock of the newest loaded VOA rating list in the local authority (by the entry's postcode), in UARN order. A rateable value is the VOA's assessment of the open-market annual rent at the list's valuation date: an assessment, not a rent paid and not a price. No income-basis value is given without a yield source for the district.";

/// How many entries are read per store round trip while filtering by sector.
const BATCH: i64 = 500;

/// One page of the rated stock of `area` (a resolved local authority) matching `q`.
pub async fn sourcing(
    db: &Db,
    area: AreaScope,
    q: &SourcingQuery,
) -> Result<SourcingAnswer, LookupError> {
    let scope = sourcing_scope(q);
    let lists = rent_index::loaded_lists(db).await?;
    let mut answer = SourcingAnswer {
        area,
        sector: q.sector,
        list_year: lists.iter().max().copied(),
        data: Vec::new(),
        next_cursor: None,
        basis: BASIS,
        licence: LICENCE,
    };
    let Some(year) = answer.list_year else {
        return Ok(answer);
    };
    let mut after = q.after.unwrap_or(i64::MIN);
    let mut picked = Vec::new();
    loop {
        let batch = rt::entries_in_lad(
            db,
            year,
            &q.lad_code,
            after,
            (q.min_rateable_value, q.max_rateable_value),
            BATCH,
        )
        .await?;
        let full = batch.len() as i64 == BATCH;
        if let Some(last) = batch.last() {
            after = last.uarn;
        }
        picked.extend(
            batch
                .into_iter()
                .filter(|e| q.sector.contains(e.description_code.as_deref())),
        );
        if picked.len() > q.limit || !full {
            break;
        }
    }
    picked.truncate(q.limit + 1);
    let uarns: Vec<i64> = picked.iter().map(|e| e.uarn).collect();
    let mut history: BTreeMap<i64, Vec<ListValue>> = BTreeMap::new();
    for e in rt::entries_for_uarns(db, &uarns).await? {
        history.entry(e.uarn).or_default().push(ListValue {
            list_year: e.list_year,
            valuation_date: rent_index::valuation_date(e.list_year),
            rateable_value: e.rateable_value,
            description_code: e.description_code,
            effective_date: e.effective_date,
        });
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
                auction_history: na("no auction results are loaded"),
                income_value: na(
                    "no auction yield for the district is loaded, so no income-basis value is given (a yield is never assumed)",
                ),
            }
        })
        .collect();
    let page = Page::from_overfetch(rows, q.limit, &scope, |r| vec![r.uarn.to_string()]);
    answer.data = page.data;
    answer.next_cursor = page.next_cursor;
    Ok(answer)
}
