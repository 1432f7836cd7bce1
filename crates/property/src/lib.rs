//! The property resource family: what is known about one property by its UPRN, and the composer
//! of the documents that draw on the other families: the record and summary (`record.rs`), the
//! report (`report.rs`) and reconcile (`reconcile.rs`), plus the property's own operations
//! (registered sales, comparables, council tax, retrofit, the deprecated flood-risk placeholder).
//! Planning (`terrace-planning`), the spatial layers and risk report (`terrace-layers`), listings
//! (`terrace-listings`), leases (`terrace-ownership`) and the rating lists (`terrace-commercial`)
//! are families of their own, which this crate calls and which never call it.
//!
//! Architecture Invariant: plain functions over the store; no HTTP or MCP types; nothing invented
//! (a field the data cannot support is absent or null, never zero).

pub mod comps;
pub mod council_tax;
pub mod reconcile;
pub mod record;
pub mod report;
pub mod retrofit;

pub use comps::{Comps, comps};
pub use council_tax::{
    CouncilTaxMemo, CouncilTaxResult, CouncilTaxStatus, council_tax, council_tax_held,
};
pub use reconcile::{Reconcile, reconcile};
pub use record::{PropertyRecord, Summary, record, summary};
pub use report::{PropertyReport, report};
pub use retrofit::{MeesStatus, RetrofitResult, RetrofitStatus, retrofit};

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use terrace_core::Uprn;
use terrace_store::Db;
use terrace_store::{
    address,
    sales::{self, PricePaidRow},
};

/// The family's error: the store's shared lookup error (`NotFound`, `Store`), so the composed
/// documents pass the other families' errors through unchanged.
pub type PropertyError = terrace_store::LookupError;

/// The address a sale was registered under, as HM Land Registry wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RegisteredAddress {
    pub saon: Option<String>,
    pub paon: Option<String>,
    pub street: Option<String>,
    pub locality: Option<String>,
    pub town: Option<String>,
    pub district: Option<String>,
    pub county: Option<String>,
    pub postcode: Option<String>,
}

/// How a sale was tied to the UPRN.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct UprnMatch {
    /// `hmlr_uprn_lookup` (HM Land Registry's own transaction-to-UPRN lookup) or
    /// `address_matcher` (Terrace's matcher on the registered address).
    pub method: Option<String>,
    /// 1 for the lookup; the matcher's similarity in [0, 1] otherwise.
    pub score: Option<f64>,
}

/// One registered sale.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Sale {
    pub transaction_id: String,
    /// Price paid in pounds.
    pub price: i64,
    /// Date of transfer (completion).
    pub date: NaiveDate,
    /// D detached, S semi-detached, T terraced, F flat or maisonette, O other.
    pub property_type: String,
    pub property_type_label: &'static str,
    pub new_build: bool,
    /// F freehold, L leasehold, U unknown.
    pub tenure: String,
    pub tenure_label: &'static str,
    /// A standard price paid; B additional (repossessions, buy-to-lets, transfers to companies...).
    pub ppd_category: String,
    pub registered_address: RegisteredAddress,
    pub uprn_match: UprnMatch,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Transactions {
    pub uprn: i64,
    pub country: &'static str,
    /// How many sales are listed (at most `limit`).
    pub count: usize,
    /// Newest first.
    pub sales: Vec<Sale>,
    pub source: &'static str,
    pub notes: Vec<&'static str>,
}

fn property_type_label(t: &str) -> &'static str {
    match t {
        "D" => "detached",
        "S" => "semi-detached",
        "T" => "terraced",
        "F" => "flat or maisonette",
        "O" => "other",
        _ => "unrecognised",
    }
}

fn tenure_label(t: &str) -> &'static str {
    match t {
        "F" => "freehold",
        "L" => "leasehold",
        "U" => "unknown",
        _ => "unrecognised",
    }
}

fn sale_of(r: PricePaidRow) -> Sale {
    Sale {
        property_type_label: property_type_label(&r.property_type),
        tenure_label: tenure_label(&r.tenure),
        transaction_id: r.transaction_id,
        price: r.price,
        date: r.date,
        property_type: r.property_type,
        new_build: r.new_build,
        tenure: r.tenure,
        ppd_category: r.ppd_category,
        registered_address: RegisteredAddress {
            saon: r.saon,
            paon: r.paon,
            street: r.street,
            locality: r.locality,
            town: r.town,
            district: r.district,
            county: r.county,
            postcode: r.postcode,
        },
        uprn_match: UprnMatch {
            method: r.match_method,
            score: r.match_score,
        },
    }
}

/// Checks that the UPRN is known to the register (or has sales matched to it).
async fn known(db: &Db, uprn: Uprn, has_rows: bool) -> Result<(), PropertyError> {
    if has_rows || address::address(db, uprn.get()).await?.is_some() {
        Ok(())
    } else {
        Err(PropertyError::NotFound(format!("UPRN {uprn}")))
    }
}

/// The registered sales matched to the UPRN, newest first, at most `limit`.
/// An empty list means no registered sale has been matched to a known UPRN.
pub async fn transactions(db: &Db, uprn: Uprn, limit: i64) -> Result<Transactions, PropertyError> {
    let rows = sales::sales_for_uprn(db, uprn.get(), limit).await?;
    known(db, uprn, !rows.is_empty()).await?;
    let sales: Vec<Sale> = rows.into_iter().map(sale_of).collect();
    Ok(Transactions {
        uprn: uprn.get(),
        country: "UK",
        count: sales.len(),
        sales,
        source: "HM Land Registry Price Paid Data (OGL v3), record status changes and deletions applied",
        notes: vec![
            "Registered sales only: registration lags completion by weeks to months.",
            "Prices are as registered; category B sales (repossessions, buy-to-let and company transfers) are included and marked.",
            "uprn_match says how each sale was tied to this UPRN: HM Land Registry's lookup, or Terrace's address matcher with its score.",
        ],
    })
}

/// The answer of the deprecated flood-risk placeholder.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FloodRiskPlaceholder {
    pub uprn: i64,
    /// Always `UNKNOWN`: this deprecated endpoint never assessed flood risk.
    pub risk_level: &'static str,
    /// Where flood risk is reported (the risk report), with its three-valued flags.
    pub successor: String,
    pub note: &'static str,
}

/// The deprecated flood-risk answer: `risk_level` is always `UNKNOWN`, for a known UPRN.
pub async fn flood_risk_placeholder(
    db: &Db,
    uprn: Uprn,
) -> Result<FloodRiskPlaceholder, PropertyError> {
    known(db, uprn, false).await?;
    Ok(FloodRiskPlaceholder {
        uprn: uprn.get(),
        risk_level: "UNKNOWN",
        successor: format!("/v1/property/{uprn}/risk"),
        note: "Deprecated placeholder kept so callers keep their 200: it never assesses flood risk. Use the risk report, whose flood flags say true, false or not_checked with their source.",
    })
}

terrace_core::status_text!(council_tax::CouncilTaxStatus);
