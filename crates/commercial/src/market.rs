//! The commercial market of a sector and local authority: the rent index, the capital index
//! (kept apart: they measure different things), and the rated stock in the newest list.

use schemars::JsonSchema;
use serde::Serialize;
use terrace_store::rating as rt;
use terrace_store::{Db, LookupError};

use crate::rent_index::{self, RentIndex};
use crate::sector::{AreaScope, Sector};
use crate::{Block, median, na};

/// The rated stock of the authority for the sector in the newest loaded list.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RatedStock {
    pub list_year: i32,
    /// Entries of the sector in the authority in the list (a count: 0 is an answer).
    pub count: usize,
    /// Of those, entries with a rateable value (proxy deletions and unvalued entries have none).
    pub n_valued: usize,
    /// Sum of the rateable values (pounds a year); null when no entry is valued.
    pub total_rateable_value: Option<i64>,
    /// Median rateable value (pounds a year); null when no entry is valued.
    pub median_rateable_value: Option<i64>,
    /// Median rateable value per square metre of measured floor area (summary valuations).
    pub median_rateable_value_per_m2: Block<PerM2Stock>,
    pub basis: &'static str,
}

const STOCK_BASIS: &str = "Entries of the newest loaded rating list whose postcode lies in the local authority (the postcode directory's authority) and whose VOA primary description code is in the sector; a rateable value is an assessed annual rent at the list's valuation date, not a rent paid or a price.";

const COMPARABILITY: &str = "THE TWO INDICES ARE NOT COMPARABLE: the rent index follows rateable values (open-market rent assessments at four valuation dates), the capital index follows prices paid for the same properties sold twice. Never plot them on one axis or difference them.";

/// The measured part of the stock.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PerM2Stock {
    /// Pounds per square metre a year (median over the measured entries).
    pub value: f64,
    /// Valued entries with a measured floor area.
    pub n_measured: usize,
}

/// The commercial market answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CommercialMarket {
    pub area: AreaScope,
    pub sector: Sector,
    pub comparability: &'static str,
    pub rent_index: RentIndex,
    /// The capital index: the authority's ALL-sector series for ALL, the national series of the
    /// sector otherwise (there is no local-by-sector series); `area` inside says which.
    pub capital_index: Block<crate::capital_index::CapitalIndex>,
    pub rated_stock: Block<RatedStock>,
    pub licence: &'static str,
}

/// The commercial market of a sector in a local authority.
pub async fn commercial_market(
    db: &Db,
    area: AreaScope,
    sector: Sector,
) -> Result<CommercialMarket, LookupError> {
    let rent_index = rent_index::rent_index(db, area.clone(), sector, None, None).await?;
    let loaded = rent_index::loaded_lists(db).await?;
    let rated_stock = match loaded.iter().max() {
        None => na("no rating list is loaded"),
        Some(&year) => {
            let entries = rt::index_entries(db, area.lad_code.as_deref()).await?;
            let of_list: Vec<_> = entries
                .iter()
                .filter(|(y, _, code, _)| *y == year && sector.contains(code.as_deref()))
                .collect();
            let values: Vec<i64> = of_list.iter().filter_map(|(_, _, _, rv)| *rv).collect();
            let measured_lists = rent_index::measured_lists(db).await?;
            let uarns: Vec<i64> = of_list.iter().map(|(_, uarn, _, _)| *uarn).collect();
            let areas: std::collections::HashMap<i64, f64> = rt::floor_areas_for_uarns(db, &uarns)
                .await?
                .into_iter()
                .filter(|(y, _, _)| *y == year)
                .map(|(_, u, a)| (u, a))
                .collect();
            let per_m2: Vec<f64> = of_list
                .iter()
                .filter_map(|(_, uarn, _, rv)| {
                    let a = areas.get(uarn)?;
                    rv.filter(|r| *r > 0).map(|r| r as f64 / a)
                })
                .collect();
            let n_measured = per_m2.len();
            let median_rateable_value_per_m2 = match rent_index::median_f(per_m2) {
                Some(m) => Block::Available(PerM2Stock {
                    value: (m * 100.0).round() / 100.0,
                    n_measured,
                }),
                None if !measured_lists.contains(&year) => na(format!(
                    "floor areas come from the VOA summary valuations, and those of the {year} list are not loaded"
                )),
                None => na(format!(
                    "no valued entry of the sector in the area has a measured floor area in the {year} list's summary valuations"
                )),
            };
            let n_valued = values.len();
            Block::Available(RatedStock {
                list_year: year,
                count: of_list.len(),
                n_valued,
                total_rateable_value: (n_valued > 0).then(|| values.iter().sum()),
                median_rateable_value: median(values),
                median_rateable_value_per_m2,
                basis: STOCK_BASIS,
            })
        }
    };
    let capital_index = if sector == Sector::All {
        crate::capital_index::capital_block(db, area.clone(), sector).await?
    } else {
        crate::capital_index::capital_block(db, AreaScope::national(), sector).await?
    };
    Ok(CommercialMarket {
        area,
        sector,
        comparability: COMPARABILITY,
        rent_index,
        capital_index,
        rated_stock,
        licence: rent_index::LICENCE,
    })
}
