//! Retrofit: the current energy rating against the certificate's potential, fabric and heating as
//! recorded, and the minimum energy efficiency standard (MEES) for letting.

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::{GssCode, Nation, Uprn};
use terrace_store::Db;
use terrace_store::{address, epc};

use crate::PropertyError;

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Rating {
    /// A (best) to G.
    pub band: Option<String>,
    /// SAP energy efficiency score, 1-100+.
    pub efficiency: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Fabric {
    pub walls: Option<String>,
    pub roof: Option<String>,
    pub floor: Option<String>,
    pub windows: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Heating {
    pub main_heating: Option<String>,
    pub controls: Option<String>,
    pub main_fuel: Option<String>,
    pub hot_water: Option<String>,
}

/// Where a property stands against the minimum energy efficiency standard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MeesStatus {
    /// Rated F or G.
    BelowMinimum,
    /// Rated A to E.
    MeetsMinimum,
    /// Outside England and Wales.
    NotCovered,
    /// No band on the certificate.
    Unknown,
}

/// Whether a retrofit answer could be read from a certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RetrofitStatus {
    Ok,
    /// No energy certificate is linked to the UPRN.
    NoCertificate,
}

terrace_core::status_text!(MeesStatus, RetrofitStatus);

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Mees {
    /// `below_minimum` (F or G), `meets_minimum` (A to E), `not_covered` (outside England and
    /// Wales) or `unknown` (no band on the certificate).
    pub status: MeesStatus,
    pub minimum_band: &'static str,
    /// False for F or G: such a property cannot lawfully be let without a registered exemption.
    /// Null when not covered or unknown.
    pub lawful_to_let_without_exemption: Option<bool>,
    pub note: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RetrofitResult {
    pub uprn: i64,
    pub country: &'static str,
    /// `ok`, or `no_certificate` when no energy certificate is linked to the UPRN.
    pub status: RetrofitStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The certificate the answer is read from (the newest lodged).
    pub certificate: Option<String>,
    pub lodgement_date: Option<NaiveDate>,
    pub current: Option<Rating>,
    /// What the certificate says the property could reach with its recommended measures.
    pub potential: Option<Rating>,
    /// Efficiency points between current and potential (null when either is missing).
    pub points_available: Option<i32>,
    /// Bands between current and potential (null when either is missing).
    pub bands_available: Option<i32>,
    pub fabric: Option<Fabric>,
    pub heating: Option<Heating>,
    pub mees: Option<Mees>,
    /// How many certificates are held for the UPRN (all are kept; the newest is used).
    pub certificates_held: usize,
    pub source: Option<String>,
}

fn band_index(b: &str) -> Option<i32> {
    match b.trim().to_ascii_uppercase().as_str() {
        "A" => Some(0),
        "B" => Some(1),
        "C" => Some(2),
        "D" => Some(3),
        "E" => Some(4),
        "F" => Some(5),
        "G" => Some(6),
        _ => None,
    }
}

const MEES_NOTE: &str = "Under the minimum energy efficiency standard, a privately rented property in England and Wales rated F or G cannot lawfully be let without a registered exemption. This is a legal bar on letting, not a valuation adjustment.";

fn mees(band: Option<&str>, nation: Option<Nation>) -> Mees {
    let covered = !matches!(nation, Some(Nation::Scotland | Nation::NorthernIreland));
    let idx = band.and_then(band_index);
    let (status, lawful) = match (covered, idx) {
        (false, _) => (MeesStatus::NotCovered, None),
        (true, None) => (MeesStatus::Unknown, None),
        (true, Some(i)) if i >= 5 => (MeesStatus::BelowMinimum, Some(false)),
        (true, Some(_)) => (MeesStatus::MeetsMinimum, Some(true)),
    };
    Mees {
        status,
        minimum_band: "E",
        lawful_to_let_without_exemption: lawful,
        note: MEES_NOTE,
    }
}

/// The retrofit picture of a UPRN from its newest energy certificate.
pub async fn retrofit(db: &Db, uprn: Uprn) -> Result<RetrofitResult, PropertyError> {
    let certs = epc::epc_for_uprn(db, uprn.get()).await?;
    let address = address::address(db, uprn.get()).await?;
    if certs.is_empty() && address.is_none() {
        return Err(PropertyError::NotFound(format!("UPRN {uprn}")));
    }
    let nation = address
        .as_ref()
        .and_then(|a| a.lad_code.as_deref())
        .and_then(|l| GssCode::parse(l).ok())
        .map(|g| g.nation());
    let held = certs.len();
    let Some(c) = certs.into_iter().next() else {
        return Ok(RetrofitResult {
            uprn: uprn.get(),
            country: "UK",
            status: RetrofitStatus::NoCertificate,
            reason: Some("no energy performance certificate is linked to this UPRN".into()),
            certificate: None,
            lodgement_date: None,
            current: None,
            potential: None,
            points_available: None,
            bands_available: None,
            fabric: None,
            heating: None,
            mees: None,
            certificates_held: 0,
            source: None,
        });
    };
    let fields: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&c.fields_json).unwrap_or_default();
    let field = |k: &str| fields.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let points = c
        .potential_efficiency
        .zip(c.current_efficiency)
        .map(|(p, n)| p - n);
    let bands = c
        .current_rating
        .as_deref()
        .and_then(band_index)
        .zip(c.potential_rating.as_deref().and_then(band_index))
        .map(|(cur, pot)| cur - pot);
    Ok(RetrofitResult {
        uprn: uprn.get(),
        country: "UK",
        status: RetrofitStatus::Ok,
        reason: None,
        mees: Some(mees(c.current_rating.as_deref(), nation)),
        certificate: Some(c.lmk_key),
        lodgement_date: c.lodgement_date,
        current: Some(Rating {
            band: c.current_rating,
            efficiency: c.current_efficiency,
        }),
        potential: Some(Rating {
            band: c.potential_rating,
            efficiency: c.potential_efficiency,
        }),
        points_available: points,
        bands_available: bands,
        fabric: Some(Fabric {
            walls: field("walls-description"),
            roof: field("roof-description"),
            floor: field("floor-description"),
            windows: field("windows-description"),
        }),
        heating: Some(Heating {
            main_heating: field("mainheat-description"),
            controls: field("mainheatcont-description"),
            main_fuel: c.main_fuel,
            hot_water: field("hotwater-description"),
        }),
        certificates_held: held,
        source: Some(c.source),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mees_bands() {
        assert_eq!(
            mees(Some("F"), Some(Nation::England)).status,
            "below_minimum"
        );
        assert_eq!(
            mees(Some("G"), None).lawful_to_let_without_exemption,
            Some(false)
        );
        assert_eq!(mees(Some("E"), Some(Nation::Wales)).status, "meets_minimum");
        assert_eq!(
            mees(Some("F"), Some(Nation::Scotland)).status,
            "not_covered"
        );
        assert_eq!(mees(None, Some(Nation::England)).status, "unknown");
    }
}
