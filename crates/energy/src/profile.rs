//! `GET /v1/energy/profile/{area_id}`: the energy picture of an area from the newest domestic
//! certificate of each of its addresses: the band mix, the main fuel mix, heat-pump penetration
//! (main heating described as a heat pump), solar photovoltaic penetration (`PHOTO_SUPPLY` above
//! 0) and solar water heating (`SOLAR_WATER_HEATING_FLAG` Y). Methods in docs/METHODS.md
//! ("Energy profile").
//!
//! Invariants: every figure has its count and the certificates it is taken over, and its
//! `coverage_pct` (those certificates over the area's addresses); a figure no certificate of
//! the area states is `not_available` with the reason, never 0; the caveat that certificates
//! over-represent recently sold and let stock goes with every answer.

use crate::{
    EnergyCtx, EnergyError, FigureStatus, band_letter, require_loaded, scope_of, whole_percent,
};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use terrace_core::AreaId;
use terrace_store::epc::{self, NewestCertRow};

pub const CAVEAT: &str = "Energy certificates are lodged when a home is sold, let or built, so they over-represent recently sold, let and new stock; long-held owner-occupied and some social homes are under-represented. A share is of the homes holding a certificate, not of every home.";

/// One value of a mix with its count and share.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MixEntry {
    pub value: String,
    pub count: i64,
    /// Whole percentage of the certificates stating the field (half up).
    pub pct: i64,
}

/// A mix (band or fuel) over the certificates that state it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Mix {
    pub status: FigureStatus,
    /// Largest first (ties by value); bands A to G in order.
    pub entries: Vec<MixEntry>,
    /// Certificates stating the field.
    pub n: i64,
    /// `n` over the area's addresses, whole per cent; null when the area has no address.
    pub coverage_pct: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A penetration share with its count and denominator.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Penetration {
    pub status: FigureStatus,
    /// Certificates showing it.
    pub count: Option<i64>,
    /// Certificates stating the field (the denominator).
    pub n: i64,
    /// `count` over `n`, whole per cent; null when not available.
    pub pct: Option<i64>,
    /// `n` over the area's addresses, whole per cent; null when the area has no address.
    pub coverage_pct: Option<i64>,
    /// What is counted.
    pub basis: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct EnergyProfile {
    pub area_id: AreaId,
    /// Addresses of the area (every class).
    pub addresses: i64,
    /// Addresses with a domestic certificate (the newest of each is read).
    pub with_certificate: i64,
    /// `with_certificate` over `addresses`, whole per cent; null when the area has no address.
    pub coverage_pct: Option<i64>,
    pub band_mix: Mix,
    pub fuel_mix: Mix,
    pub heat_pump: Penetration,
    pub solar_pv: Penetration,
    pub solar_water_heating: Penetration,
    /// The newest lodgement among the certificates read.
    pub newest_lodgement: Option<chrono::NaiveDate>,
    pub caveat: &'static str,
    /// The registers the certificates come from.
    pub sources: Vec<String>,
}

/// A main fuel in a few classes (the register's wording varies across its schema versions).
pub fn fuel_class(fuel: &str) -> &'static str {
    let f = fuel.to_ascii_lowercase();
    if f.contains("lpg") || f.contains("bottled") {
        "lpg"
    } else if f.contains("gas") {
        // every other gas is mains gas (community schemes on gas included)
        "mains_gas"
    } else if f.contains("electric") {
        "electricity"
    } else if f.contains("oil") {
        "oil"
    } else if [
        "coal",
        "anthracite",
        "smokeless",
        "wood",
        "biomass",
        "solid",
    ]
    .iter()
    .any(|w| f.contains(w))
    {
        "solid_fuel_or_biomass"
    } else if f.contains("community") || f.contains("heat network") {
        "heat_network"
    } else {
        "other"
    }
}

/// Whether a main heating description is a heat pump.
pub fn is_heat_pump(description: &str) -> bool {
    description.to_ascii_lowercase().contains("heat pump")
}

fn mix(values: Vec<String>, addresses: i64, ordered: bool, what: &str) -> Mix {
    let n = values.len() as i64;
    if n == 0 {
        return Mix {
            status: FigureStatus::NotAvailable,
            entries: Vec::new(),
            n: 0,
            coverage_pct: whole_percent(0, addresses),
            reason: Some(format!("no certificate of the area states its {what}")),
        };
    }
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    for v in values {
        *counts.entry(v).or_default() += 1;
    }
    let mut entries: Vec<MixEntry> = counts
        .into_iter()
        .map(|(value, count)| MixEntry {
            pct: whole_percent(count, n).unwrap_or(0),
            value,
            count,
        })
        .collect();
    if !ordered {
        entries.sort_by(|a, b| b.count.cmp(&a.count).then(a.value.cmp(&b.value)));
    }
    Mix {
        status: FigureStatus::Ok,
        entries,
        n,
        coverage_pct: whole_percent(n, addresses),
        reason: None,
    }
}

fn penetration(flags: Vec<bool>, addresses: i64, basis: &'static str, what: &str) -> Penetration {
    let n = flags.len() as i64;
    if n == 0 {
        return Penetration {
            status: FigureStatus::NotAvailable,
            count: None,
            n: 0,
            pct: None,
            coverage_pct: whole_percent(0, addresses),
            basis,
            reason: Some(format!("no certificate of the area states {what}")),
        };
    }
    let count = flags.iter().filter(|f| **f).count() as i64;
    Penetration {
        status: FigureStatus::Ok,
        count: Some(count),
        n,
        pct: whole_percent(count, n),
        coverage_pct: whole_percent(n, addresses),
        basis,
        reason: None,
    }
}

/// The profile from the area's newest certificates (pure: the tests call it on rows).
pub fn profile_of(area_id: AreaId, addresses: i64, rows: &[NewestCertRow]) -> EnergyProfile {
    let bands: Vec<String> = rows
        .iter()
        .filter_map(|r| band_letter(r.current_rating.as_deref()))
        .map(String::from)
        .collect();
    let fuels: Vec<String> = rows
        .iter()
        .filter_map(|r| r.main_fuel.as_deref())
        .map(|f| fuel_class(f).to_string())
        .collect();
    let heat_pumps: Vec<bool> = rows
        .iter()
        .filter_map(|r| r.mainheat_description.as_deref())
        .map(is_heat_pump)
        .collect();
    let pv: Vec<bool> = rows
        .iter()
        .filter_map(|r| r.photo_supply)
        .map(|p| p > 0.0)
        .collect();
    let swh: Vec<bool> = rows
        .iter()
        .filter_map(|r| r.solar_water_heating.as_deref())
        .filter_map(|f| match f.trim().to_ascii_uppercase().as_str() {
            "Y" | "YES" | "TRUE" => Some(true),
            "N" | "NO" | "FALSE" => Some(false),
            _ => None,
        })
        .collect();
    let mut sources: Vec<String> = rows.iter().map(|r| r.source.clone()).collect();
    sources.sort();
    sources.dedup();
    let with_certificate = rows.len() as i64;
    EnergyProfile {
        area_id,
        addresses,
        with_certificate,
        coverage_pct: whole_percent(with_certificate, addresses),
        band_mix: mix(bands, addresses, true, "current energy rating band"),
        fuel_mix: mix(fuels, addresses, false, "main fuel"),
        heat_pump: penetration(
            heat_pumps,
            addresses,
            "certificates whose main heating is a heat pump, over those describing the main heating",
            "the main heating",
        ),
        solar_pv: penetration(
            pv,
            addresses,
            "certificates with PHOTO_SUPPLY above 0 (photovoltaic panels on part of the roof), over those stating PHOTO_SUPPLY",
            "PHOTO_SUPPLY",
        ),
        solar_water_heating: penetration(
            swh,
            addresses,
            "certificates with SOLAR_WATER_HEATING_FLAG Y, over those stating the flag",
            "SOLAR_WATER_HEATING_FLAG",
        ),
        newest_lodgement: rows.iter().filter_map(|r| r.lodgement_date).max(),
        caveat: CAVEAT,
        sources,
    }
}

/// The energy profile of an area.
pub async fn profile(ctx: &EnergyCtx, area_id: AreaId) -> Result<EnergyProfile, EnergyError> {
    let scope = scope_of(&area_id).map_err(|v| EnergyError::Invalid(vec![v]))?;
    require_loaded(ctx, &area_id).await?;
    let addresses = epc::scope_address_count(&ctx.db, &scope).await?;
    let rows = epc::scope_newest_certificates(&ctx.db, &scope).await?;
    Ok(profile_of(area_id, addresses, &rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(uprn: i64, band: &str, fuel: &str, heat: &str, pv: Option<f64>) -> NewestCertRow {
        NewestCertRow {
            lmk_key: format!("k{uprn}"),
            uprn,
            current_rating: Some(band.into()),
            potential_rating: None,
            current_efficiency: None,
            potential_efficiency: None,
            main_fuel: Some(fuel.into()),
            photo_supply: pv,
            solar_water_heating: None,
            tenure: None,
            lodgement_date: None,
            mainheat_description: Some(heat.into()),
            source: "epc_domestic".into(),
            lad_code: None,
        }
    }

    #[test]
    fn mixes_and_penetration() {
        let rows = vec![
            row(
                1,
                "D",
                "mains gas (not community)",
                "Boiler and radiators, mains gas",
                Some(0.0),
            ),
            row(
                2,
                "C",
                "electricity (not community)",
                "Air source heat pump, radiators, electric",
                Some(20.0),
            ),
            row(
                3,
                "D",
                "Electricity: electricity, unspecified tariff",
                "Electric storage heaters",
                None,
            ),
        ];
        let p = profile_of(AreaId::parse("lad:E06009901").unwrap(), 10, &rows);
        assert_eq!((p.with_certificate, p.coverage_pct), (3, Some(30)));
        let bands: Vec<(&str, i64, i64)> = p
            .band_mix
            .entries
            .iter()
            .map(|e| (e.value.as_str(), e.count, e.pct))
            .collect();
        assert_eq!(bands, vec![("C", 1, 33), ("D", 2, 67)]);
        assert_eq!(p.fuel_mix.entries[0].value, "electricity");
        assert_eq!(p.fuel_mix.entries[0].count, 2);
        assert_eq!(
            (p.heat_pump.count, p.heat_pump.n, p.heat_pump.pct),
            (Some(1), 3, Some(33))
        );
        assert_eq!(
            (p.solar_pv.count, p.solar_pv.n, p.solar_pv.coverage_pct),
            (Some(1), 2, Some(20))
        );
        // nothing states the flag: not available, never 0
        assert_eq!(p.solar_water_heating.status, FigureStatus::NotAvailable);
        assert_eq!(p.solar_water_heating.count, None);
        let empty = profile_of(AreaId::parse("lad:E06009901").unwrap(), 0, &[]);
        assert_eq!(empty.band_mix.status, FigureStatus::NotAvailable);
        assert_eq!(empty.coverage_pct, None);
    }

    #[test]
    fn fuels() {
        assert_eq!(fuel_class("mains gas (not community)"), "mains_gas");
        assert_eq!(fuel_class("LPG (not community)"), "lpg");
        assert_eq!(fuel_class("bottled gas"), "lpg");
        assert_eq!(fuel_class("oil (not community)"), "oil");
        assert_eq!(
            fuel_class("house coal (not community)"),
            "solid_fuel_or_biomass"
        );
        assert_eq!(fuel_class("Grid Supplied Electricity"), "electricity");
    }
}
