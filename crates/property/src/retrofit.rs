//! Retrofit: the current energy rating against the certificate's potential, fabric and heating as
//! recorded, and the minimum energy efficiency standard (MEES) for letting.

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::{GssCode, Uprn};
use terrace_store::Db;
use terrace_store::{address, epc};

use crate::PropertyError;
pub use terrace_energy::mees::{Mees, MeesStatus};
use terrace_energy::mees::{band_index, mees};

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

/// Whether a retrofit answer could be read from a certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RetrofitStatus {
    Ok,
    /// No energy certificate is linked to the UPRN.
    NoCertificate,
}

terrace_core::status_text!(RetrofitStatus);

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
    // The building elements are typed columns beside the certificate.
    let elements = epc::epc_elements_by_key(db, std::slice::from_ref(&c.lmk_key))
        .await?
        .into_iter()
        .next()
        .unwrap_or_default();
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
            walls: elements.walls_description.clone(),
            roof: elements.roof_description.clone(),
            floor: elements.floor_description.clone(),
            windows: elements.windows_description.clone(),
        }),
        heating: Some(Heating {
            main_heating: elements.mainheat_description.clone(),
            controls: elements.mainheatcont_description.clone(),
            main_fuel: c.main_fuel,
            hot_water: elements.hotwater_description.clone(),
        }),
        certificates_held: held,
        source: Some(c.source),
    })
}
