//! `POST /v1/energy/retrofit-candidates`: the addresses of an area whose newest domestic
//! certificate is in the asked bands (default E, F, G) and, if asked, heated by the asked fuel,
//! ranked by improvement headroom: the certificate's potential efficiency minus its current
//! efficiency, largest first; equal headroom by potential efficiency, highest first; then by
//! UPRN. Each comes with the measures and indicative costs lodged with the certificate and its
//! standing against the minimum energy efficiency standard for lettings. Pages by the shared
//! keyset cursor. Methods in docs/METHODS.md ("Retrofit candidates").
//!
//! Invariants: a certificate without both efficiencies is never ranked (no headroom is
//! guessed); the costs are the assessor's bands as lodged, never summed into a quote.

use crate::epc::{Recommendation, RecommendationsStatus, recommendations_by_key};
use crate::mees::{Mees, mees};
use crate::profile::fuel_class;
use crate::{EnergyCtx, EnergyError, require_loaded, scope_of};
use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use terrace_core::cursor::{CursorError, CursorScope, Page};
use terrace_core::{AreaId, GssCode, Violation};
use terrace_store::epc::{self, NewestCertRow, RetrofitFilter};

/// The heating fuels a search can ask for (the certificate's `MAIN_FUEL`, classed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Fuel {
    /// Mains gas (any gas but LPG and bottled gas).
    MainsGas,
    Electricity,
    Oil,
    /// LPG and bottled gas.
    Lpg,
    /// Coal, anthracite, smokeless fuel, wood and other biomass.
    SolidFuelOrBiomass,
}

impl Fuel {
    /// The store condition on `main_fuel` that keeps this fuel (the same classes as
    /// [`fuel_class`]).
    fn condition(self) -> &'static str {
        match self {
            Fuel::MainsGas => {
                "LOWER(main_fuel) LIKE '%gas%' AND LOWER(main_fuel) NOT LIKE '%lpg%' AND LOWER(main_fuel) NOT LIKE '%bottled%'"
            }
            Fuel::Electricity => {
                "LOWER(main_fuel) LIKE '%electric%' AND LOWER(main_fuel) NOT LIKE '%gas%' AND LOWER(main_fuel) NOT LIKE '%lpg%' AND LOWER(main_fuel) NOT LIKE '%bottled%'"
            }
            Fuel::Oil => {
                "LOWER(main_fuel) LIKE '%oil%' AND LOWER(main_fuel) NOT LIKE '%gas%' AND LOWER(main_fuel) NOT LIKE '%electric%' AND LOWER(main_fuel) NOT LIKE '%lpg%' AND LOWER(main_fuel) NOT LIKE '%bottled%'"
            }
            Fuel::Lpg => "LOWER(main_fuel) LIKE '%lpg%' OR LOWER(main_fuel) LIKE '%bottled%'",
            Fuel::SolidFuelOrBiomass => {
                "(LOWER(main_fuel) LIKE '%coal%' OR LOWER(main_fuel) LIKE '%anthracite%' OR LOWER(main_fuel) LIKE '%smokeless%' OR LOWER(main_fuel) LIKE '%wood%' OR LOWER(main_fuel) LIKE '%biomass%' OR LOWER(main_fuel) LIKE '%solid%') AND LOWER(main_fuel) NOT LIKE '%gas%' AND LOWER(main_fuel) NOT LIKE '%electric%' AND LOWER(main_fuel) NOT LIKE '%oil%' AND LOWER(main_fuel) NOT LIKE '%lpg%' AND LOWER(main_fuel) NOT LIKE '%bottled%'"
            }
        }
    }

    #[cfg(test)]
    fn class(self) -> &'static str {
        match self {
            Fuel::MainsGas => "mains_gas",
            Fuel::Electricity => "electricity",
            Fuel::Oil => "oil",
            Fuel::Lpg => "lpg",
            Fuel::SolidFuelOrBiomass => "solid_fuel_or_biomass",
        }
    }
}

/// What is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrofitQuery {
    pub area_id: AreaId,
    /// Upper-case letters A-G, each once, in order.
    pub bands: Vec<char>,
    pub fuel: Option<Fuel>,
    pub limit: usize,
    pub cursor: Option<String>,
}

/// The filters a cursor is bound to (everything but `cursor` and `limit`).
#[derive(Serialize)]
struct CursorFilters<'a> {
    area_id: String,
    bands: &'a [char],
    fuel: Option<Fuel>,
}

/// Whether the certificate was lodged for a letting, as its tenure says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LodgedTenure {
    RentedPrivate,
    RentedSocial,
    OwnerOccupied,
    /// Not stated, or a new dwelling's tenure not yet known.
    Unknown,
}

fn lodged_tenure(t: Option<&str>) -> LodgedTenure {
    let Some(t) = t.map(str::to_ascii_lowercase) else {
        return LodgedTenure::Unknown;
    };
    if t.contains("rent") && t.contains("private") {
        LodgedTenure::RentedPrivate
    } else if t.contains("rent") && t.contains("social") {
        LodgedTenure::RentedSocial
    } else if t.contains("owner") {
        LodgedTenure::OwnerOccupied
    } else {
        LodgedTenure::Unknown
    }
}

/// One candidate.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Candidate {
    pub uprn: i64,
    /// The newest domestic certificate, the one ranked.
    pub certificate_key: String,
    pub lodgement_date: Option<NaiveDate>,
    pub current_band: Option<String>,
    pub current_efficiency: i32,
    pub potential_band: Option<String>,
    pub potential_efficiency: i32,
    /// Potential minus current efficiency (SAP points): the ranking key.
    pub headroom: i32,
    pub main_fuel: Option<String>,
    /// The main fuel's class, as the `fuel` filter names it.
    pub fuel_class: Option<&'static str>,
    pub main_heating: Option<String>,
    /// The tenure lodged with the certificate, as written.
    pub tenure: Option<String>,
    pub lodged_tenure: LodgedTenure,
    /// The minimum energy efficiency standard for letting, from the current band: it binds a
    /// private letting (`lodged_tenure` says whether the certificate was lodged for one).
    pub mees: Mees,
    /// The measures lodged with the certificate, in the register's order, each with the
    /// assessor's indicative cost band as written.
    pub measures: Vec<Recommendation>,
    pub recommendations_status: RecommendationsStatus,
    pub source: String,
}

/// The answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RetrofitCandidates {
    pub area_id: AreaId,
    pub bands: Vec<String>,
    pub fuel: Option<Fuel>,
    /// The ranking, in words.
    pub ranking: &'static str,
    pub candidates: Vec<Candidate>,
    pub count: usize,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    pub cost_note: &'static str,
    pub caveat: &'static str,
}

pub const RANKING: &str = "Newest domestic certificate of each address in the bands (and fuel) asked, with both efficiencies lodged: headroom (potential minus current SAP efficiency) descending, then potential efficiency descending, then UPRN ascending.";
pub const COST_NOTE: &str = "Indicative costs are the assessor's bands as lodged with the certificate, at its lodgement date: not quotes, and not to be summed.";

fn key_of(c: &Candidate) -> Vec<String> {
    vec![
        c.headroom.to_string(),
        c.potential_efficiency.to_string(),
        c.uprn.to_string(),
    ]
}

fn after_of(key: &[String]) -> Option<(i32, i32, i64)> {
    match key {
        [h, p, u] => Some((h.parse().ok()?, p.parse().ok()?, u.parse().ok()?)),
        _ => None,
    }
}

/// The retrofit candidates of an area.
pub async fn candidates(
    ctx: &EnergyCtx,
    q: RetrofitQuery,
) -> Result<RetrofitCandidates, EnergyError> {
    let scope = scope_of(&q.area_id).map_err(|v| EnergyError::Invalid(vec![v]))?;
    let cursor_scope = CursorScope::new(
        "energy_retrofit_candidates",
        &CursorFilters {
            area_id: q.area_id.to_string(),
            bands: &q.bands,
            fuel: q.fuel,
        },
    );
    let after = match cursor_scope.decode_opt(q.cursor.as_deref()) {
        Ok(None) => None,
        Ok(Some(key)) => Some(after_of(&key).ok_or_else(|| {
            EnergyError::Invalid(vec![
                Violation::new(
                    &["cursor"],
                    "value_error",
                    "Value error, cursor is not a key of this operation",
                )
                .with_input(q.cursor.clone().unwrap_or_default()),
            ])
        })?),
        Err(CursorError::Malformed(v)) => return Err(EnergyError::Invalid(vec![v])),
        Err(CursorError::NotThisQuery(what)) => return Err(EnergyError::NotFound(what)),
    };
    require_loaded(ctx, &q.area_id).await?;
    let rows = epc::retrofit_candidates(
        &ctx.db,
        &RetrofitFilter {
            scope,
            bands: q.bands.clone(),
            fuel_condition: q.fuel.map(Fuel::condition),
            after,
            limit: q.limit as i64 + 1,
        },
    )
    .await?;
    let keys: Vec<String> = rows.iter().map(|r| r.lmk_key.clone()).collect();
    let mut recs = recommendations_by_key(ctx, &keys).await?;
    let recs_loaded = !recs.is_empty() || epc::recommendations_loaded(&ctx.db).await?;
    let list: Vec<Candidate> = rows
        .into_iter()
        .filter_map(|r| candidate(r, &mut recs, recs_loaded))
        .collect();
    let page = Page::from_overfetch(list, q.limit, &cursor_scope, key_of);
    Ok(RetrofitCandidates {
        area_id: q.area_id,
        bands: q.bands.iter().map(|b| b.to_string()).collect(),
        fuel: q.fuel,
        ranking: RANKING,
        count: page.data.len(),
        candidates: page.data,
        next_cursor: page.next_cursor,
        cost_note: COST_NOTE,
        caveat: crate::profile::CAVEAT,
    })
}

fn candidate(
    r: NewestCertRow,
    recs: &mut std::collections::HashMap<String, Vec<Recommendation>>,
    recs_loaded: bool,
) -> Option<Candidate> {
    let (current, potential) = (r.current_efficiency?, r.potential_efficiency?);
    let nation = r
        .lad_code
        .as_deref()
        .and_then(|l| GssCode::parse(l).ok())
        .map(|g| g.nation());
    let measures = recs.remove(&r.lmk_key).unwrap_or_default();
    let recommendations_status = if !measures.is_empty() {
        RecommendationsStatus::Ok
    } else if recs_loaded {
        RecommendationsStatus::NoneLodged
    } else {
        RecommendationsStatus::NotLoaded
    };
    Some(Candidate {
        uprn: r.uprn,
        mees: mees(r.current_rating.as_deref(), nation),
        certificate_key: r.lmk_key,
        lodgement_date: r.lodgement_date,
        current_band: r.current_rating,
        current_efficiency: current,
        potential_band: r.potential_rating,
        potential_efficiency: potential,
        headroom: potential - current,
        fuel_class: r.main_fuel.as_deref().map(fuel_class),
        main_fuel: r.main_fuel,
        main_heating: r.mainheat_description,
        lodged_tenure: lodged_tenure(r.tenure.as_deref()),
        tenure: r.tenure,
        measures,
        recommendations_status,
        source: r.source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuel_conditions_match_the_classes() {
        for (fuel, examples) in [
            (
                Fuel::MainsGas,
                &[
                    "mains gas (not community)",
                    "Gas: mains gas",
                    "mains gas (community)",
                ][..],
            ),
            (
                Fuel::Electricity,
                &[
                    "electricity (not community)",
                    "Electricity: electricity, unspecified tariff",
                ][..],
            ),
            (Fuel::Oil, &["oil (not community)"][..]),
            (Fuel::Lpg, &["LPG (not community)", "bottled gas"][..]),
            (
                Fuel::SolidFuelOrBiomass,
                &["house coal (not community)", "wood logs"][..],
            ),
        ] {
            for e in examples {
                assert_eq!(fuel_class(e), fuel.class(), "{e}");
            }
        }
    }

    #[test]
    fn tenures() {
        assert_eq!(
            lodged_tenure(Some("Rented (private)")),
            LodgedTenure::RentedPrivate
        );
        assert_eq!(
            lodged_tenure(Some("rental (private)")),
            LodgedTenure::RentedPrivate
        );
        assert_eq!(
            lodged_tenure(Some("rental (social)")),
            LodgedTenure::RentedSocial
        );
        assert_eq!(
            lodged_tenure(Some("Owner-occupied")),
            LodgedTenure::OwnerOccupied
        );
        assert_eq!(lodged_tenure(None), LodgedTenure::Unknown);
    }

    #[test]
    fn cursor_keys_read_back() {
        assert_eq!(
            after_of(&["12".into(), "80".into(), "990000000001".into()]),
            Some((12, 80, 990_000_000_001))
        );
        assert_eq!(after_of(&["x".into()]), None);
    }
}
