//! `GET /v1/energy/epc/{uprn}`: every energy certificate lodged for a UPRN (domestic,
//! non-domestic and display), newest first, each with its recommendations as lodged and how the
//! register matched its UPRN (`UPRN_SOURCE`).
//!
//! A UPRN that neither the register nor any certificate knows is not found (an error). A known
//! UPRN with no certificate answers `not_found` when certificates are loaded for its local
//! authority (none was lodged for it), and `not_available` when none is (nothing can be said).

use crate::{EnergyCtx, EnergyError};
use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::HashMap;
use terrace_core::Uprn;
use terrace_core::sources::confidence_of;
use terrace_store::epc::{self, EpcElementsRow, EpcRecommendationRow, EpcRow};
use terrace_store::{address, epc::recommendations_loaded};

/// Whether certificates could be read for the UPRN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EpcStatus {
    /// At least one certificate.
    Ok,
    /// Certificates are loaded for the UPRN's local authority, and none is lodged for it.
    NotFound,
    /// No certificate is loaded for the UPRN's local authority: nothing can be said.
    NotAvailable,
}

terrace_core::status_text!(EpcStatus);

/// One building element as the assessor described it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Element {
    pub description: Option<String>,
    /// The register's efficiency word (`Very Poor` to `Very Good`), where lodged.
    pub energy_efficiency: Option<String>,
}

/// A domestic certificate's building elements.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Elements {
    pub walls: Element,
    pub roof: Element,
    pub floor: Element,
    pub windows: Element,
    pub main_heating: Element,
    pub main_heating_controls: Element,
    pub hot_water: Element,
    pub lighting: Element,
    pub secondary_heating: Option<String>,
    pub mechanical_ventilation: Option<String>,
    /// Per cent of fixed outlets with low-energy lighting.
    pub low_energy_lighting_pct: Option<i32>,
    /// A flat's `FLAT_TOP_STOREY` (Y/N).
    pub flat_top_storey: Option<String>,
    pub flat_storey_count: Option<i32>,
}

/// One recommendation, as lodged with the certificate.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Recommendation {
    /// The register's order (`IMPROVEMENT_ITEM` or `RECOMMENDATION_ITEM`).
    pub item: i32,
    pub summary: Option<String>,
    pub description: Option<String>,
    /// The register's measure code (`IMPROVEMENT_ID`, or a non-domestic `RECOMMENDATION_CODE`).
    pub code: Option<String>,
    /// The assessor's indicative cost band as written ("£4,000 - £6,000") at the lodgement
    /// date; not a quote. Non-domestic registers lodge none.
    pub indicative_cost: Option<String>,
    /// Non-domestic and display: `SHORT`, `MEDIUM`, `LONG` or `OTHER`.
    pub payback_type: Option<String>,
    /// Non-domestic and display: `HIGH`, `MEDIUM` or `LOW`.
    pub co2_impact: Option<String>,
}

/// Whether the recommendations of a certificate could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecommendationsStatus {
    Ok,
    /// Recommendations are loaded and none is lodged for this certificate.
    NoneLodged,
    /// No recommendations file is loaded: the list is empty because nothing is known.
    NotLoaded,
}

/// One certificate.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Certificate {
    /// The register's key (`LMK_KEY`, or `CERTIFICATE_NUMBER` in the newer register; `derived-`
    /// for a cut-down extract without either).
    pub certificate_key: String,
    /// `domestic`, `non_domestic` or `display`.
    pub kind: String,
    pub lodgement_date: Option<NaiveDate>,
    pub inspection_date: Option<NaiveDate>,
    /// Domestic: the current energy rating band; non-domestic: the asset rating band; display:
    /// the operational rating band.
    pub current_band: Option<String>,
    /// Domestic only.
    pub potential_band: Option<String>,
    /// Domestic SAP efficiency, 1-100+.
    pub current_efficiency: Option<i32>,
    pub potential_efficiency: Option<i32>,
    /// Non-domestic asset rating or display operational rating (lower is better).
    pub asset_rating: Option<i32>,
    pub property_type: Option<String>,
    pub built_form: Option<String>,
    pub total_floor_area_m2: Option<f64>,
    pub main_fuel: Option<String>,
    pub tenure: Option<String>,
    pub construction_age_band: Option<String>,
    pub floor_level: Option<String>,
    /// `PHOTO_SUPPLY`: per cent of roof area with photovoltaic panels.
    pub photo_supply_pct: Option<f64>,
    /// `SOLAR_WATER_HEATING_FLAG` as lodged (Y/N).
    pub solar_water_heating: Option<String>,
    pub address: Option<String>,
    pub postcode: Option<String>,
    /// How the register matched the UPRN (`UPRN_SOURCE`: `Energy Assessor` when lodged by the
    /// assessor, `Address Matched` when matched afterwards); null where the file does not say.
    pub uprn_source: Option<String>,
    /// Domestic certificates' building elements; null for other kinds.
    pub elements: Option<Elements>,
    pub recommendations_status: RecommendationsStatus,
    pub recommendations: Vec<Recommendation>,
    pub source: String,
    pub confidence: f64,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct EpcAnswer {
    pub uprn: i64,
    /// `ok`, `not_found` (none lodged for it, certificates loaded for its authority) or
    /// `not_available` (none loaded for its authority).
    pub status: EpcStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The UPRN's local authority, where the register knows it.
    pub local_authority: Option<String>,
    /// Newest lodgement first (undated last, then by key).
    pub certificates: Vec<Certificate>,
    pub count: usize,
}

fn element(d: &Option<String>, e: &Option<String>) -> Element {
    Element {
        description: d.clone(),
        energy_efficiency: e.clone(),
    }
}

pub(crate) fn elements_of(e: &EpcElementsRow) -> Elements {
    Elements {
        walls: element(&e.walls_description, &e.walls_energy_eff),
        roof: element(&e.roof_description, &e.roof_energy_eff),
        floor: element(&e.floor_description, &e.floor_energy_eff),
        windows: element(&e.windows_description, &e.windows_energy_eff),
        main_heating: element(&e.mainheat_description, &e.mainheat_energy_eff),
        main_heating_controls: element(&e.mainheatcont_description, &e.mainheatc_energy_eff),
        hot_water: element(&e.hotwater_description, &e.hot_water_energy_eff),
        lighting: element(&e.lighting_description, &e.lighting_energy_eff),
        secondary_heating: e.secondheat_description.clone(),
        mechanical_ventilation: e.mechanical_ventilation.clone(),
        low_energy_lighting_pct: e.low_energy_lighting,
        flat_top_storey: e.flat_top_storey.clone(),
        flat_storey_count: e.flat_storey_count,
    }
}

pub(crate) fn recommendation(r: EpcRecommendationRow) -> Recommendation {
    Recommendation {
        item: r.item,
        summary: r.summary,
        description: r.description,
        code: r.improvement_id,
        indicative_cost: r.indicative_cost,
        payback_type: r.payback_type,
        co2_impact: r.co2_impact,
    }
}

/// Newest lodgement first; undated last; the key breaks ties (highest first).
pub(crate) fn newest_first(certs: &mut [EpcRow]) {
    certs.sort_by(|a, b| {
        b.lodgement_date
            .is_some()
            .cmp(&a.lodgement_date.is_some())
            .then(b.lodgement_date.cmp(&a.lodgement_date))
            .then(b.lmk_key.cmp(&a.lmk_key))
    });
}

/// The recommendations of certificates, by key, each list in item order.
pub(crate) async fn recommendations_by_key(
    ctx: &EnergyCtx,
    keys: &[String],
) -> Result<HashMap<String, Vec<Recommendation>>, EnergyError> {
    let mut by_key: HashMap<String, Vec<Recommendation>> = HashMap::new();
    for r in epc::recommendations_of(&ctx.db, keys).await? {
        by_key
            .entry(r.lmk_key.clone())
            .or_default()
            .push(recommendation(r));
    }
    Ok(by_key)
}

/// Every certificate of a UPRN, newest first, with its recommendations.
pub async fn certificates(ctx: &EnergyCtx, uprn: Uprn) -> Result<EpcAnswer, EnergyError> {
    let mut certs = epc::certificates_for_uprn(&ctx.db, uprn.get()).await?;
    let addr = address::address(&ctx.db, uprn.get()).await?;
    if certs.is_empty() && addr.is_none() {
        return Err(EnergyError::NotFound(format!("UPRN {uprn}")));
    }
    let lad = addr.as_ref().and_then(|a| a.lad_code.clone());
    if certs.is_empty() {
        let loaded = match &lad {
            Some(l) => epc::authority_has_certificates(&ctx.db, l).await?,
            None => false,
        };
        let (status, reason) = if loaded {
            (
                EpcStatus::NotFound,
                "no energy certificate is lodged for this UPRN in the registers loaded for its local authority".to_string(),
            )
        } else {
            (
                EpcStatus::NotAvailable,
                match &lad {
                    Some(l) => format!("no energy certificate is loaded for the local authority {l}"),
                    None => "the UPRN's local authority is not known, so no register can be said to cover it".to_string(),
                },
            )
        };
        return Ok(EpcAnswer {
            uprn: uprn.get(),
            status,
            reason: Some(reason),
            local_authority: lad,
            certificates: Vec::new(),
            count: 0,
        });
    }
    newest_first(&mut certs);
    let keys: Vec<String> = certs.iter().map(|c| c.lmk_key.clone()).collect();
    let mut recs = recommendations_by_key(ctx, &keys).await?;
    let recs_loaded = !recs.is_empty() || recommendations_loaded(&ctx.db).await?;
    let elements: HashMap<String, EpcElementsRow> = epc::epc_elements_by_key(&ctx.db, &keys)
        .await?
        .into_iter()
        .map(|e| (e.lmk_key.clone(), e))
        .collect();
    let certificates: Vec<Certificate> = certs
        .into_iter()
        .map(|c| {
            let list = recs.remove(&c.lmk_key).unwrap_or_default();
            let recommendations_status = if !list.is_empty() {
                RecommendationsStatus::Ok
            } else if recs_loaded {
                RecommendationsStatus::NoneLodged
            } else {
                RecommendationsStatus::NotLoaded
            };
            Certificate {
                elements: elements.get(&c.lmk_key).map(elements_of),
                confidence: confidence_of(&c.source)
                    .unwrap_or(terrace_core::sources::DEFAULT_CONFIDENCE),
                certificate_key: c.lmk_key,
                kind: c.kind,
                lodgement_date: c.lodgement_date,
                inspection_date: c.inspection_date,
                current_band: c.current_rating,
                potential_band: c.potential_rating,
                current_efficiency: c.current_efficiency,
                potential_efficiency: c.potential_efficiency,
                asset_rating: c.asset_rating,
                property_type: c.property_type,
                built_form: c.built_form,
                total_floor_area_m2: c.total_floor_area,
                main_fuel: c.main_fuel,
                tenure: c.tenure,
                construction_age_band: c.construction_age_band,
                floor_level: c.floor_level,
                photo_supply_pct: c.photo_supply,
                solar_water_heating: c.solar_water_heating,
                address: c.address,
                postcode: c.postcode,
                uprn_source: c.uprn_source,
                recommendations_status,
                recommendations: list,
                source: c.source,
            }
        })
        .collect();
    Ok(EpcAnswer {
        uprn: uprn.get(),
        status: EpcStatus::Ok,
        reason: None,
        local_authority: lad,
        count: certificates.len(),
        certificates,
    })
}
