//! `GET /v1/site/appraisal` (specification part 4.4): everything known about one site, assembled
//! from the families and judged. The subject is a UPRN (its parcel found through the
//! address-in-parcel link) or a parcel (`land_id`, the INSPIRE id plot utilisation returns).
//!
//! Each block names its source and is `not_available` with the reason when nothing can be said;
//! designation flags are three-valued (`in_zone`, `checked_false`, `not_checked`); the signals
//! each carry their evidence, and a site with nothing to say answers `signal: none` explicitly.
//! Nothing is estimated here: every figure is one a family function read from the store.
//!
//! What the blocks cover: for a UPRN, the valuation, ownership, energy and auction blocks are
//! about that property, and the site block about the parcel it stands on; for a parcel, they
//! cover every unit whose address point lies in it (at most [`MAX_UNITS`]). Designations and
//! planning are read at the property's point, or at the parcel's interior point for a parcel.

use crate::{SourcingCtx, SourcingError};
use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use terrace_auctions::{self as au, Lot};
use terrace_core::{AreaKind, Flag, GssCode, Nation, Uprn};
use terrace_energy::epc::{self, EpcStatus};
use terrace_energy::mees::{Mees, MeesStatus, mees};
use terrace_energy::{EnergyCtx, EnergyError};
use terrace_layers::{Check, Match, SourceRef};
use terrace_planning::Application;
use terrace_planning::applications::{
    self as pa, ApplicationsInput, NearbyStatus, PlanningAuthority,
};
use terrace_site::build_cost::{Benchmark, BuildCostQuery, IndexBlock, LocationFactor};
use terrace_site::{Region, Sector, SiteCtx, SiteError};
use terrace_store::address::{self, AddressRow};
use terrace_store::auctions::{self as st_auctions, LotFilter};
use terrace_store::land::{self, ParcelRow, ParcelStatsRow};
use terrace_store::{LookupError, sales};
use terrace_valuation::ValuationError;

/// A parcel's units read at most (the units' own blocks are read one by one).
pub const MAX_UNITS: i64 = 50;
/// A measured built coverage under this share of the plot is `under_built`.
pub const UNDER_BUILT_BELOW: f64 = 0.30;
/// A last registered sale at least this many years before the valuation month is `long_held`.
pub const LONG_HELD_YEARS: f64 = 15.0;
/// Planning applications listed within this many metres of the site's point.
pub const PLANNING_RADIUS_M: i64 = 250;
/// At most this many applications are listed (the rest counted).
pub const PLANNING_LIMIT: i64 = 20;

const NO_TITLE_LINK: &str = "no_open_title_link: no company-owned title (HM Land Registry's CCOD or OCOD) links to this site's addresses; titles held by private individuals are not published in bulk, so the owner is not known (never read this as unowned)";
const SITE_SOURCE: &str = "HM Land Registry INSPIRE Index Polygons, with OS Open Map Local footprints and the address-in-parcel link (the land build)";
const VALUATION_SOURCE: &str =
    "Terrace AVM: the latest valuation vintage; last sale from HM Land Registry Price Paid Data";
const OWNERSHIP_SOURCE: &str = "HM Land Registry CCOD and OCOD (company-owned titles) linked to UPRNs, with Companies House basic company data";
const ENERGY_SOURCE: &str =
    "Energy performance certificate registers (domestic, non-domestic, display)";
const AUCTION_SOURCE: &str = "The operator's auction lot feed";
const DESIGNATION_SOURCE: &str = "The spatial layers (planning.data.gov.uk, Environment Agency, Coal Authority, Historic England), read at the site's point";
const PLANNING_SOURCE: &str =
    "planning.data.gov.uk applications within the radius of the site's point";
const COST_SOURCE: &str = "The site family's build cost: the sector's construction cost index and the regional location factor";

/// The site asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    Uprn(Uprn),
    /// An INSPIRE id.
    Land(i64),
}

/// Whether a block could be filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AppraisalStatus {
    Ok,
    /// Nothing can be said: see `reason`.
    NotAvailable,
}

/// What was asked and where the site is.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalSubject {
    /// The UPRN asked about (null when a parcel was asked).
    pub uprn: Option<i64>,
    /// The parcel: the one asked, or the one the UPRN's address point lies in (null when none).
    pub land_id: Option<String>,
    /// The UPRN's address, as the register writes it.
    pub address: Option<String>,
    pub local_authority: Option<String>,
    /// The point the designations and planning are read at, British National Grid metres.
    pub easting: Option<f64>,
    pub northing: Option<f64>,
    /// `address_point` (the UPRN's) or `parcel_interior_point` (the parcel's).
    pub point: Option<&'static str>,
}

/// The land use tiers of a parcel.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalLandUse {
    /// Terrace's tier A (`residential`, `commercial`, `mixed`, ...); null where nothing on the
    /// parcel supports a class.
    pub tier_a: Option<String>,
    /// The National Land Use Database order; null for mixed use or unsupported.
    pub tier_b: Option<String>,
    pub nlud_code: Option<String>,
}

/// The parcel.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalSite {
    pub status: AppraisalStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub source: &'static str,
    pub land_id: Option<String>,
    /// Plot area, square metres, a decimal as text (2 places).
    pub area_m2: Option<String>,
    pub land_use: Option<AppraisalLandUse>,
    /// Built footprint over plot area, a decimal as text (4 places); null where no footprint
    /// data covers the parcel's local authority (never 0 for unmeasured).
    pub built_coverage_ratio: Option<String>,
    pub n_buildings: Option<i32>,
    /// The buildings' footprint inside the parcel, square metres as text; null where not measured.
    pub total_buildings_footprint_m2: Option<String>,
    /// The parcel's outline, GeoJSON MultiPolygon in WGS84.
    pub boundary: Option<serde_json::Value>,
    /// The UPRNs whose address point lies in the parcel (at most 50, in UPRN order).
    pub units: Vec<i64>,
    /// True when the parcel holds more units than listed.
    pub units_truncated: bool,
    pub address_count_residential: Option<i32>,
    pub address_count_commercial: Option<i32>,
}

/// A property's last registered sale.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalSale {
    pub price_gbp: i64,
    pub date: NaiveDate,
    /// Price Paid category: `A` standard, `B` additional.
    pub ppd_category: String,
    pub source: String,
}

/// One unit's value.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalUnitValue {
    pub uprn: i64,
    pub status: AppraisalStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Pounds, nearest 100.
    pub value_gbp: Option<i64>,
    pub range_lo_gbp: Option<i64>,
    pub range_hi_gbp: Option<i64>,
    /// The vintage month (`YYYY-MM`).
    pub as_of: Option<String>,
    pub model_version: Option<String>,
    /// Null when no sale is registered for the UPRN.
    pub last_sale: Option<AppraisalSale>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalValuation {
    pub status: AppraisalStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub source: &'static str,
    pub units: Vec<AppraisalUnitValue>,
}

/// A company proprietor of a title (CCOD and OCOD list companies only).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalOwner {
    pub name: String,
    pub company_number: Option<String>,
    pub category: Option<String>,
    pub country_incorporated: Option<String>,
    /// As Companies House writes it; null when the number is not in the loaded file.
    pub company_status: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalTitle {
    pub title_number: String,
    /// `ccod` or `ocod`.
    pub register: terrace_ownership::titles::Register,
    pub tenure: Option<String>,
    /// The UPRN the title's address links to.
    pub uprn: Option<i64>,
    pub proprietors: Vec<AppraisalOwner>,
    /// True when the title also has proprietors the bulk file does not show (counted, never
    /// named).
    pub additional_proprietor_indicator: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalOwnership {
    pub status: AppraisalStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub source: &'static str,
    pub titles: Vec<AppraisalTitle>,
}

/// One unit's newest certificate.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalUnitEnergy {
    pub uprn: i64,
    /// `ok`, `not_found` (none lodged, registers loaded for its authority) or `not_available`.
    pub status: EpcStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub certificate_key: Option<String>,
    /// `domestic`, `non_domestic` or `display`.
    pub kind: Option<String>,
    pub lodgement_date: Option<NaiveDate>,
    pub current_band: Option<String>,
    pub potential_band: Option<String>,
    /// The minimum energy efficiency standard on the newest certificate's band.
    pub mees: Option<Mees>,
    pub certificates_held: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalEnergy {
    pub status: AppraisalStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub source: &'static str,
    pub units: Vec<AppraisalUnitEnergy>,
}

/// Every offer of one property (lots sharing a UPRN, or a normalised address and postcode).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalAuctionProperty {
    pub property_id: String,
    pub uprn: Option<i64>,
    /// Offers in the feed, oldest first.
    pub lots: Vec<Lot>,
    /// Whether any offer sold (at, before or after the auction).
    pub ever_sold: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalAuctions {
    pub status: AppraisalStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub source: &'static str,
    /// Empty when the feed holds no lot at the site (only the houses the feed follows are
    /// covered).
    pub properties: Vec<AppraisalAuctionProperty>,
    pub note: &'static str,
}

/// A designation flag's three values, as words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AppraisalFlagStatus {
    /// A loaded feature of the flag's datasets holds the point.
    InZone,
    /// A dataset of the flag is loaded for the authority and nothing holds the point.
    CheckedFalse,
    /// No dataset of the flag is loaded for the authority, or the site has no point.
    NotChecked,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalFlag {
    /// The risk report's group (`heritage`, `environmental_designations`, `planning`, `flood`,
    /// `coal`).
    pub group: &'static str,
    /// `conservation_area`, `green_belt`, `area_of_outstanding_natural_beauty`, ...
    pub flag: String,
    pub status: AppraisalFlagStatus,
    /// `true`, `false` or `"not_checked"`.
    pub value: Flag,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub sources: Vec<SourceRef>,
    pub matches: Vec<Match>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalDesignations {
    pub status: AppraisalStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub source: &'static str,
    pub flags: Vec<AppraisalFlag>,
    /// The flags' datasets not loaded for the site's authority.
    pub datasets_not_loaded: Vec<String>,
}

/// What the planning search found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AppraisalPlanningStatus {
    Ok,
    /// The authority's applications are loaded and none lies within the radius.
    NoneNearby,
    /// Official planning data does not cover the authority, none of its applications is loaded,
    /// or the site has no point (see `reason`).
    NotCovered,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalPlanning {
    pub status: AppraisalPlanningStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub source: &'static str,
    pub local_planning_authority: Option<PlanningAuthority>,
    pub radius_m: i64,
    pub total_within_radius: usize,
    pub truncated: bool,
    /// Newest first, each with its decision and distance.
    pub applications: Vec<Application>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AppraisalCostContext {
    pub status: AppraisalStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub source: &'static str,
    pub sector: Sector,
    /// Why this sector: the parcel's or the address's land use.
    pub sector_basis: String,
    pub region: Region,
    /// Why this region: the region boundary holding the point, the nation, or none known.
    pub region_basis: String,
    pub index: IndexBlock,
    pub location_factor: LocationFactor,
    pub benchmark: Benchmark,
    pub note: &'static str,
}

/// The kinds of signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AppraisalSignalKind {
    RepeatAuctionFailure,
    LongHeld,
    MeesUnlettable,
    UnderBuilt,
    CorporateOwner,
    /// Nothing to say: absence is an answer.
    None,
}

/// The evidence of a signal.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum AppraisalEvidence {
    RepeatAuctionFailure {
        property_id: String,
        uprn: Option<i64>,
        /// Offers to bidders (sold or unsold; withdrawn and postponed lots are not offers).
        offers: usize,
        last_auction_date: NaiveDate,
        /// The last offer's guide (the midpoint of a range): an indication, not a price.
        last_guide_gbp: Option<f64>,
        /// The latest vintage's value of the UPRN.
        estimate_gbp: Option<i64>,
        /// Last guide over estimate, 3 places; null without either.
        guide_to_estimate: Option<f64>,
    },
    LongHeld {
        uprn: i64,
        last_sale_price_gbp: i64,
        last_sale_date: NaiveDate,
        value_gbp: i64,
        as_of: String,
        /// Years from the last sale to the vintage month, one decimal.
        years_held: f64,
        /// Value minus last price, nominal pounds (not net of debt or costs).
        nominal_gain_gbp: i64,
        nominal_gain_pct: Option<f64>,
        threshold_years: f64,
    },
    MeesUnlettable {
        uprn: i64,
        band: String,
        certificate_key: String,
        lodgement_date: Option<NaiveDate>,
        minimum_band: &'static str,
    },
    UnderBuilt {
        land_id: String,
        built_coverage_ratio: String,
        threshold: String,
        area_m2: String,
    },
    CorporateOwner {
        title_number: String,
        name: String,
        company_number: Option<String>,
        company_status: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AppraisalSignal {
    pub signal: AppraisalSignalKind,
    /// What the signal rests on; absent for `none`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<AppraisalEvidence>,
}

/// The appraisal.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Appraisal {
    pub subject: AppraisalSubject,
    pub site: AppraisalSite,
    pub valuation: AppraisalValuation,
    pub ownership: AppraisalOwnership,
    pub energy: AppraisalEnergy,
    pub auction_history: AppraisalAuctions,
    pub designations: AppraisalDesignations,
    pub planning_nearby: AppraisalPlanning,
    pub cost_context: AppraisalCostContext,
    /// Each signal with its evidence; `[{"signal": "none"}]` when the site has nothing to say.
    pub signals: Vec<AppraisalSignal>,
    pub as_of: NaiveDate,
    pub notes: Vec<&'static str>,
}

impl Appraisal {
    /// The blocks with something to say (every block but the signals).
    pub fn answered_blocks(&self) -> usize {
        [
            self.site.status == AppraisalStatus::Ok,
            self.valuation.status == AppraisalStatus::Ok,
            self.ownership.status == AppraisalStatus::Ok,
            self.energy.status == AppraisalStatus::Ok,
            self.auction_history.status == AppraisalStatus::Ok,
            self.designations.status == AppraisalStatus::Ok,
            self.planning_nearby.status != AppraisalPlanningStatus::NotCovered,
            self.cost_context.status == AppraisalStatus::Ok,
        ]
        .into_iter()
        .filter(|b| *b)
        .count()
    }
}

const NOTES: [&str; 3] = [
    "For a UPRN, valuation, ownership, energy and auction history are about that property and the site block about the parcel its address point lies in; for a parcel they cover the units whose address points lie in it.",
    "A missing block is not_available with its reason, never empty figures; a designation not_checked is unknown, not absent.",
    "Signals are judgements on the evidence shown with them: under_built below a built coverage of 0.30, long_held at 15 years or more from the last registered sale, mees_unlettable on an F or G newest certificate, repeat_auction_failure at two or more offers never sold.",
];

fn store_of_lookup(e: LookupError) -> SourcingError {
    SourcingError::from(e)
}

fn energy_store(e: EnergyError) -> Result<(), SourcingError> {
    match e {
        EnergyError::Store(s) => Err(SourcingError::Store(s)),
        EnergyError::NotFound(_) | EnergyError::Invalid(_) => Ok(()),
    }
}

fn site_store(e: SiteError) -> SourcingError {
    match e {
        SiteError::Store(s) => SourcingError::Store(s),
        SiteError::Invalid(v) => SourcingError::Invalid(v),
    }
}

fn auctions_store(e: au::AuctionsError) -> SourcingError {
    match e {
        au::AuctionsError::Store(s) => SourcingError::Store(s),
        au::AuctionsError::Invalid(v) => SourcingError::Invalid(v),
        au::AuctionsError::NotFound(s) => SourcingError::NotFound(s),
    }
}

fn decimal(v: f64, places: usize) -> String {
    format!("{v:.places$}")
}

fn round_to(v: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (v * f).round() / f
}

fn address_text(a: &AddressRow) -> String {
    [
        a.saon.as_deref(),
        a.paon.as_deref(),
        a.street.as_deref(),
        a.locality.as_deref(),
        a.town.as_deref(),
        a.postcode.as_deref(),
    ]
    .into_iter()
    .flatten()
    .filter(|s| !s.trim().is_empty())
    .collect::<Vec<_>>()
    .join(", ")
}

/// The appraisal of one site, as of `today` (planning coverage is dated).
pub async fn appraisal(
    ctx: &SourcingCtx,
    subject: Subject,
    today: NaiveDate,
) -> Result<Appraisal, SourcingError> {
    let db = &ctx.db;
    // The subject: its address, its parcel and the units the unit blocks cover.
    let (addr, parcel_id, units) = match subject {
        Subject::Uprn(u) => {
            let a = address::address(db, u.get())
                .await?
                .ok_or_else(|| SourcingError::NotFound(format!("UPRN {u}")))?;
            let link = land::parcel_addresses_by_uprn(db, &[u.get()])
                .await?
                .into_iter()
                .next();
            (Some(a), link.map(|l| l.inspire_id), vec![u.get()])
        }
        Subject::Land(id) => {
            if land::parcels_by_id(db, &[id]).await?.is_empty() {
                return Err(SourcingError::NotFound(format!("parcel {id}")));
            }
            let units: Vec<i64> = terrace_store::sourcing::units_on(db, id, MAX_UNITS + 1)
                .await?
                .into_iter()
                .map(|(u, _)| u)
                .collect();
            (None, Some(id), units)
        }
    };
    let parcel: Option<ParcelRow> = match parcel_id {
        Some(id) => land::parcels_by_id(db, &[id]).await?.into_iter().next(),
        None => None,
    };
    let stats = match parcel_id {
        Some(id) => terrace_store::sourcing::stats_of(db, &[id])
            .await?
            .into_iter()
            .next(),
        None => None,
    };
    let units_truncated = units.len() as i64 > MAX_UNITS;
    let units: Vec<i64> = units.into_iter().take(MAX_UNITS as usize).collect();

    // The point the spatial blocks read.
    let at: AddressRow = match (&addr, &parcel) {
        (Some(a), _) => a.clone(),
        (None, Some(p)) => {
            let xy = p
                .lon
                .zip(p.lat)
                .and_then(|(lon, lat)| terrace_geo::bng_from_wgs84(lon, lat));
            AddressRow {
                x: xy.map(|v| v.0),
                y: xy.map(|v| v.1),
                lat: p.lat,
                lon: p.lon,
                lad_code: p.lad_code.clone(),
                ..AddressRow::default()
            }
        }
        (None, None) => AddressRow::default(),
    };
    let point_kind = match (&addr, at.x.zip(at.y)) {
        (_, None) => None,
        (Some(_), Some(_)) => Some("address_point"),
        (None, Some(_)) => Some("parcel_interior_point"),
    };
    let subject_block = AppraisalSubject {
        uprn: addr.as_ref().map(|a| a.uprn),
        land_id: parcel_id.map(|i| i.to_string()),
        address: addr.as_ref().map(address_text),
        local_authority: at.lad_code.clone(),
        easting: at.x,
        northing: at.y,
        point: point_kind,
    };

    let site = site_block(
        parcel_id,
        parcel.as_ref(),
        stats.as_ref(),
        &units,
        units_truncated,
    );
    let valuation = valuation_block(ctx, &units).await?;
    let ownership = ownership_block(ctx, &units).await?;
    let energy = energy_block(ctx, &units, at.lad_code.as_deref()).await?;
    let auction_history = auction_block(ctx, &units).await?;
    let designations = designations_block(ctx, &at).await?;
    let planning_nearby = planning_block(ctx, &at, today).await?;
    let cost_context = cost_block(ctx, &at, stats.as_ref(), addr.as_ref()).await?;

    let mut signals = Vec::new();
    signals.extend(auction_signals(&auction_history, &valuation));
    signals.extend(long_held_signals(&valuation));
    signals.extend(mees_signals(&energy));
    if let Some(s) = under_built_signal(&site) {
        signals.push(s);
    }
    signals.extend(corporate_signals(&ownership));
    if signals.is_empty() {
        signals.push(AppraisalSignal {
            signal: AppraisalSignalKind::None,
            evidence: None,
        });
    }
    Ok(Appraisal {
        subject: subject_block,
        site,
        valuation,
        ownership,
        energy,
        auction_history,
        designations,
        planning_nearby,
        cost_context,
        signals,
        as_of: today,
        notes: NOTES.to_vec(),
    })
}

fn site_block(
    parcel_id: Option<i64>,
    parcel: Option<&ParcelRow>,
    stats: Option<&ParcelStatsRow>,
    units: &[i64],
    units_truncated: bool,
) -> AppraisalSite {
    let mut b = AppraisalSite {
        status: AppraisalStatus::NotAvailable,
        reason: None,
        source: SITE_SOURCE,
        land_id: parcel_id.map(|i| i.to_string()),
        area_m2: None,
        land_use: None,
        built_coverage_ratio: None,
        n_buildings: None,
        total_buildings_footprint_m2: None,
        boundary: None,
        units: Vec::new(),
        units_truncated: false,
        address_count_residential: None,
        address_count_commercial: None,
    };
    let Some(p) = parcel else {
        b.reason = Some("no_parcel: the UPRN's address point lies in no loaded INSPIRE index polygon (none is loaded for its area, or it has no position), so the site's area, land use, coverage and boundary are not known".into());
        return b;
    };
    b.status = AppraisalStatus::Ok;
    b.area_m2 = Some(decimal(p.area_m2, 2));
    b.boundary = terrace_geo::multipolygon_from_wkb(&p.wkb)
        .ok()
        .and_then(|mp| terrace_land::physical::outline_geojson(&mp));
    b.units = units.to_vec();
    b.units_truncated = units_truncated;
    match stats {
        Some(s) => {
            b.area_m2 = Some(decimal(s.area_m2, 2));
            b.land_use = Some(AppraisalLandUse {
                tier_a: s.landuse_tier_a.clone(),
                tier_b: s.landuse_tier_b.clone(),
                nlud_code: s.nlud_code.clone(),
            });
            b.built_coverage_ratio = s.built_coverage.map(|v| decimal(v, 4));
            b.n_buildings = Some(s.n_buildings);
            b.total_buildings_footprint_m2 = s.footprint_m2.map(|v| decimal(v, 2));
            b.address_count_residential = Some(s.address_count_residential);
            b.address_count_commercial = Some(s.address_count_commercial);
        }
        None => {
            b.reason = Some("the land build has not written this parcel's figures (land use, coverage): run `cargo xtask build`".into());
        }
    }
    b
}

async fn valuation_block(
    ctx: &SourcingCtx,
    units: &[i64],
) -> Result<AppraisalValuation, SourcingError> {
    let mut out = Vec::with_capacity(units.len());
    for &u in units {
        let last = sales::sales_for_uprn(&ctx.db, u, 1)
            .await?
            .into_iter()
            .next()
            .map(|s| AppraisalSale {
                price_gbp: s.price,
                date: s.date,
                ppd_category: s.ppd_category,
                source: s.source,
            });
        let mut item = AppraisalUnitValue {
            uprn: u,
            status: AppraisalStatus::NotAvailable,
            reason: None,
            value_gbp: None,
            range_lo_gbp: None,
            range_hi_gbp: None,
            as_of: None,
            model_version: None,
            last_sale: last,
        };
        let valued = match Uprn::new(u) {
            Ok(uprn) => terrace_valuation::estimate(&ctx.db, uprn).await,
            Err(_) => Err(ValuationError::NotFound(format!("UPRN {u} is not a UPRN"))),
        };
        match valued {
            Ok(e) => {
                item.status = AppraisalStatus::Ok;
                item.value_gbp = Some(e.value);
                item.range_lo_gbp = e.range.lo;
                item.range_hi_gbp = e.range.hi;
                item.as_of = Some(e.as_of);
                item.model_version = Some(e.model_version);
            }
            Err(ValuationError::NotFound(why)) => item.reason = Some(format!("no value: {why}")),
            Err(ValuationError::Invalid(v)) => return Err(SourcingError::Invalid(v)),
            Err(ValuationError::Store(s)) => return Err(SourcingError::Store(s)),
        }
        out.push(item);
    }
    let any = out
        .iter()
        .any(|i| i.status == AppraisalStatus::Ok || i.last_sale.is_some());
    Ok(AppraisalValuation {
        status: if any {
            AppraisalStatus::Ok
        } else {
            AppraisalStatus::NotAvailable
        },
        reason: (!any).then(|| {
            if units.is_empty() {
                "no address point lies in the parcel, so no property on it can be valued".to_string()
            } else {
                "the latest valuation vintage holds no value and no sale is registered for the site's units".to_string()
            }
        }),
        source: VALUATION_SOURCE,
        units: out,
    })
}

async fn ownership_block(
    ctx: &SourcingCtx,
    units: &[i64],
) -> Result<AppraisalOwnership, SourcingError> {
    let titles = terrace_ownership::titles::titles_for_uprns(&ctx.db, units)
        .await
        .map_err(store_of_lookup)?;
    let titles: Vec<AppraisalTitle> = titles
        .into_iter()
        .map(|t| AppraisalTitle {
            uprn: t.uprns.first().map(|l| l.uprn),
            proprietors: t
                .proprietors
                .iter()
                .map(|p| AppraisalOwner {
                    name: p.proprietor.name.clone(),
                    company_number: p.proprietor.company_number.clone(),
                    category: p.proprietor.category.clone(),
                    country_incorporated: p.proprietor.country_incorporated.clone(),
                    company_status: p.company.as_ref().and_then(|c| c.status.clone()),
                })
                .collect(),
            title_number: t.title_number,
            register: t.register,
            tenure: t.tenure,
            additional_proprietor_indicator: t.additional_proprietor_indicator,
        })
        .collect();
    let found = !titles.is_empty();
    Ok(AppraisalOwnership {
        status: if found {
            AppraisalStatus::Ok
        } else {
            AppraisalStatus::NotAvailable
        },
        reason: (!found).then(|| NO_TITLE_LINK.to_string()),
        source: OWNERSHIP_SOURCE,
        titles,
    })
}

async fn energy_block(
    ctx: &SourcingCtx,
    units: &[i64],
    lad: Option<&str>,
) -> Result<AppraisalEnergy, SourcingError> {
    let ectx = EnergyCtx {
        db: ctx.db.clone(),
        areas: ctx.areas.clone(),
    };
    let nation: Option<Nation> = lad.and_then(|l| GssCode::parse(l).ok()).map(|g| g.nation());
    let mut out = Vec::with_capacity(units.len());
    for &u in units {
        let Ok(uprn) = Uprn::new(u) else { continue };
        let answer = match epc::certificates(&ectx, uprn).await {
            Ok(a) => a,
            Err(e) => {
                energy_store(e)?;
                continue;
            }
        };
        let newest = answer.certificates.first();
        out.push(AppraisalUnitEnergy {
            uprn: u,
            status: answer.status,
            reason: answer.reason.clone(),
            certificate_key: newest.map(|c| c.certificate_key.clone()),
            kind: newest.map(|c| c.kind.clone()),
            lodgement_date: newest.and_then(|c| c.lodgement_date),
            current_band: newest.and_then(|c| c.current_band.clone()),
            potential_band: newest.and_then(|c| c.potential_band.clone()),
            mees: newest.map(|c| mees(c.current_band.as_deref(), nation)),
            certificates_held: answer.count,
        });
    }
    let any = out.iter().any(|u| u.status == EpcStatus::Ok);
    Ok(AppraisalEnergy {
        status: if any {
            AppraisalStatus::Ok
        } else {
            AppraisalStatus::NotAvailable
        },
        reason: (!any).then(|| match out.first().and_then(|u| u.reason.clone()) {
            Some(r) => r,
            None => "no address point lies in the parcel, so no certificate can be read".into(),
        }),
        source: ENERGY_SOURCE,
        units: out,
    })
}

async fn auction_block(
    ctx: &SourcingCtx,
    units: &[i64],
) -> Result<AppraisalAuctions, SourcingError> {
    const NOTE: &str = "lots are matched on the UPRN, then every offer of the same property (the same UPRN, or the same normalised address and postcode, linked by the derive step); only the auction houses the feed follows are covered";
    let mut b = AppraisalAuctions {
        status: AppraisalStatus::NotAvailable,
        reason: None,
        source: AUCTION_SOURCE,
        properties: Vec::new(),
        note: NOTE,
    };
    if !au::feed_loaded(&ctx.db).await.map_err(auctions_store)? {
        b.reason = Some(au::NO_FEED.into());
        return Ok(b);
    }
    b.status = AppraisalStatus::Ok;
    let mut keys = Vec::new();
    for &u in units {
        let f = LotFilter {
            uprn: Some(u),
            ..LotFilter::default()
        };
        for r in st_auctions::lots_where(&ctx.db, &f).await? {
            keys.push(r.property_key.unwrap_or(r.lot_key));
        }
    }
    keys.sort();
    keys.dedup();
    let mut groups: BTreeMap<String, Vec<Lot>> = BTreeMap::new();
    for r in st_auctions::lots_of_properties(&ctx.db, &keys).await? {
        // A lot not yet linked is its own property (its key is its lot key).
        let key = r.property_key.clone().unwrap_or_else(|| r.lot_key.clone());
        groups.entry(key).or_default().push(Lot::from_row(r));
    }
    // Lots matched on the UPRN but never linked to a property: read them by UPRN.
    for &u in units {
        let f = LotFilter {
            uprn: Some(u),
            ..LotFilter::default()
        };
        for r in st_auctions::lots_where(&ctx.db, &f).await? {
            if r.property_key.is_none() {
                groups
                    .entry(r.lot_key.clone())
                    .or_default()
                    .push(Lot::from_row(r));
            }
        }
    }
    b.properties = groups
        .into_iter()
        .map(|(key, lots)| AppraisalAuctionProperty {
            uprn: lots.iter().find_map(|l| l.uprn),
            ever_sold: lots.iter().any(|l| l.outcome.is_sale()),
            property_id: key,
            lots,
        })
        .collect();
    Ok(b)
}

fn designation_status(v: Flag) -> AppraisalFlagStatus {
    match v {
        Flag::Known(true) => AppraisalFlagStatus::InZone,
        Flag::Known(false) => AppraisalFlagStatus::CheckedFalse,
        Flag::NotChecked(_) => AppraisalFlagStatus::NotChecked,
    }
}

async fn designations_block(
    ctx: &SourcingCtx,
    at: &AddressRow,
) -> Result<AppraisalDesignations, SourcingError> {
    let layers = ctx.layers.current(&ctx.db).await.map_err(store_of_lookup)?;
    let report = terrace_layers::report_from(&layers, at);
    let mut flags = Vec::new();
    let groups: [(&'static str, &BTreeMap<String, Check>); 5] = [
        ("heritage", &report.heritage),
        (
            "environmental_designations",
            &report.environmental_designations,
        ),
        ("planning", &report.planning),
        ("flood", &report.flood.flags),
        ("coal", &report.coal),
    ];
    for (group, checks) in groups {
        for (name, c) in checks {
            flags.push(AppraisalFlag {
                group,
                flag: name.clone(),
                status: designation_status(c.value),
                value: c.value,
                reason: c.reason.clone(),
                sources: c.sources.clone(),
                matches: c.matches.clone(),
            });
        }
    }
    let checked = flags
        .iter()
        .any(|f| f.status != AppraisalFlagStatus::NotChecked);
    let reason = (!checked).then(|| {
        if at.x.is_none() || at.y.is_none() {
            "the site has no position, so no spatial layer can be read".to_string()
        } else {
            match &at.lad_code {
                Some(l) => format!("no designation layer is loaded for the local authority {l}: every flag is not_checked"),
                None => "the site's local authority is not known, so no layer can be said to cover it".into(),
            }
        }
    });
    Ok(AppraisalDesignations {
        status: if checked {
            AppraisalStatus::Ok
        } else {
            AppraisalStatus::NotAvailable
        },
        reason,
        source: DESIGNATION_SOURCE,
        flags,
        datasets_not_loaded: report.summary.datasets_not_loaded,
    })
}

async fn planning_block(
    ctx: &SourcingCtx,
    at: &AddressRow,
    today: NaiveDate,
) -> Result<AppraisalPlanning, SourcingError> {
    let mut b = AppraisalPlanning {
        status: AppraisalPlanningStatus::NotCovered,
        reason: None,
        source: PLANNING_SOURCE,
        local_planning_authority: None,
        radius_m: PLANNING_RADIUS_M,
        total_within_radius: 0,
        truncated: false,
        applications: Vec::new(),
    };
    let lat_lon = match (at.lat, at.lon, at.x, at.y) {
        (Some(lat), Some(lon), _, _) => Some((lat, lon)),
        (_, _, Some(x), Some(y)) => terrace_geo::wgs84_from_bng(x, y).map(|(lon, lat)| (lat, lon)),
        _ => None,
    };
    let Some((lat, lon)) = lat_lon else {
        b.reason = Some("the site has no position, so no application can be found near it".into());
        return Ok(b);
    };
    let input = ApplicationsInput {
        postcode: None,
        lat: Some(lat),
        lon: Some(lon),
        radius_m: PLANNING_RADIUS_M,
        limit: PLANNING_LIMIT,
    };
    let answer = match pa::applications(&ctx.db, &ctx.areas, &input, today).await {
        Ok(a) => a,
        Err(LookupError::NotFound(what)) => {
            b.reason = Some(format!(
                "no planning data can be read here: {what} not found"
            ));
            return Ok(b);
        }
        Err(LookupError::Store(s)) => return Err(SourcingError::Store(s)),
    };
    b.local_planning_authority = answer.local_planning_authority;
    let nearby = answer.applications;
    b.status = match nearby.status {
        NearbyStatus::Ok => AppraisalPlanningStatus::Ok,
        NearbyStatus::NoneNearby => AppraisalPlanningStatus::NoneNearby,
        NearbyStatus::NotAvailable => AppraisalPlanningStatus::NotCovered,
    };
    b.reason = nearby.reason;
    b.total_within_radius = nearby.total_within_radius;
    b.truncated = nearby.truncated;
    b.applications = nearby.items;
    Ok(b)
}

/// The ITL1 region of an English region code (`E12000007` London), or of a nation.
fn region_of_code(code: &str) -> Option<Region> {
    Some(match code {
        "E12000001" => Region::NorthEast,
        "E12000002" => Region::NorthWest,
        "E12000003" => Region::YorkshireAndTheHumber,
        "E12000004" => Region::EastMidlands,
        "E12000005" => Region::WestMidlands,
        "E12000006" => Region::EastOfEngland,
        "E12000007" => Region::London,
        "E12000008" => Region::SouthEast,
        "E12000009" => Region::SouthWest,
        _ => return None,
    })
}

async fn cost_block(
    ctx: &SourcingCtx,
    at: &AddressRow,
    stats: Option<&ParcelStatsRow>,
    addr: Option<&AddressRow>,
) -> Result<AppraisalCostContext, SourcingError> {
    let tier = stats.and_then(|s| s.landuse_tier_a.clone());
    let class = addr.and_then(|a| a.class.clone());
    let (sector, sector_basis) = match (tier.as_deref(), class.as_deref()) {
        (Some("residential"), _) => (
            Sector::NewHousing,
            "the parcel's land use is residential".to_string(),
        ),
        (Some("commercial"), _) => (
            Sector::PrivateCommercial,
            "the parcel's land use is commercial".to_string(),
        ),
        (Some(t), _) => (
            Sector::AllNewWork,
            format!("the parcel's land use is {t}: all new work"),
        ),
        (None, Some(c)) if c.starts_with('R') => (
            Sector::NewHousing,
            format!("the address class {c} is residential"),
        ),
        (None, Some(c)) if c.starts_with('C') => (
            Sector::PrivateCommercial,
            format!("the address class {c} is commercial"),
        ),
        (None, _) => (
            Sector::AllNewWork,
            "no land use is known for the site: all new work".to_string(),
        ),
    };
    let index = ctx.areas.cache.current(&ctx.db).await?;
    let region_code =
        at.x.zip(at.y)
            .and_then(|p| index.code_at(AreaKind::Region, p))
            .map(str::to_string);
    let nation = at
        .lad_code
        .as_deref()
        .and_then(|l| GssCode::parse(l).ok())
        .map(|g| g.nation());
    let (region, region_basis) = match (region_code.as_deref().and_then(region_of_code), nation) {
        (Some(r), _) => (
            r,
            format!(
                "the region boundary {} holds the site's point",
                region_code.unwrap_or_default()
            ),
        ),
        (None, Some(Nation::Wales)) => (
            Region::Wales,
            "the site's local authority is in Wales".into(),
        ),
        (None, Some(Nation::Scotland)) => (
            Region::Scotland,
            "the site's local authority is in Scotland".into(),
        ),
        (None, Some(Nation::NorthernIreland)) => (
            Region::NorthernIreland,
            "the site's local authority is in Northern Ireland".into(),
        ),
        (None, Some(Nation::England | Nation::Other) | None) => (
            Region::National,
            "no loaded region boundary holds the site's point: the national series".into(),
        ),
    };
    let cost = terrace_site::build_cost::build_cost(
        &SiteCtx { db: ctx.db.clone() },
        BuildCostQuery {
            sector,
            region,
            gia_m2: None,
            rate_gbp_m2: None,
            rate_period: None,
        },
    )
    .await
    .map_err(site_store)?;
    let ok = cost.index.status == terrace_site::Status::Ok;
    Ok(AppraisalCostContext {
        status: if ok {
            AppraisalStatus::Ok
        } else {
            AppraisalStatus::NotAvailable
        },
        reason: (!ok).then(|| cost.index.reason.clone().unwrap_or_default()),
        source: COST_SOURCE,
        sector,
        sector_basis,
        region,
        region_basis,
        index: cost.index,
        location_factor: cost.location_factor,
        benchmark: cost.benchmark,
        note: "context only: no build cost is estimated without a floor area and a rate of your own (GET /v1/site/build-cost), and no rate is invented",
    })
}

fn auction_signals(a: &AppraisalAuctions, v: &AppraisalValuation) -> Vec<AppraisalSignal> {
    a.properties
        .iter()
        .filter_map(|p| {
            let offered: Vec<&Lot> = p.lots.iter().filter(|l| l.outcome.was_offered()).collect();
            if offered.len() < 2 || p.ever_sold {
                return None;
            }
            let last = p.lots.last()?;
            let guide = p
                .lots
                .iter()
                .rev()
                .find_map(|l| l.guide.as_ref().map(|g| g.point()));
            let estimate = p.uprn.and_then(|u| {
                v.units
                    .iter()
                    .find(|x| x.uprn == u)
                    .and_then(|x| x.value_gbp)
            });
            let ratio = match (guide, estimate) {
                (Some(g), Some(e)) if e > 0 => Some(round_to(g / e as f64, 3)),
                _ => None,
            };
            Some(AppraisalSignal {
                signal: AppraisalSignalKind::RepeatAuctionFailure,
                evidence: Some(AppraisalEvidence::RepeatAuctionFailure {
                    property_id: p.property_id.clone(),
                    uprn: p.uprn,
                    offers: offered.len(),
                    last_auction_date: last.auction_date,
                    last_guide_gbp: guide,
                    estimate_gbp: estimate,
                    guide_to_estimate: ratio,
                }),
            })
        })
        .collect()
}

fn month_start(as_of: &str) -> Option<NaiveDate> {
    let (y, m) = as_of.split_once('-')?;
    NaiveDate::from_ymd_opt(y.parse().ok()?, m.parse().ok()?, 1)
}

fn long_held_signals(v: &AppraisalValuation) -> Vec<AppraisalSignal> {
    v.units
        .iter()
        .filter_map(|u| {
            let value = u.value_gbp?;
            let sale = u.last_sale.as_ref()?;
            let as_of = u.as_of.clone()?;
            let day = month_start(&as_of)?;
            let years = (day - sale.date).num_days().max(0) as f64 / 365.25;
            if years < LONG_HELD_YEARS {
                return None;
            }
            let gain = value - sale.price_gbp;
            Some(AppraisalSignal {
                signal: AppraisalSignalKind::LongHeld,
                evidence: Some(AppraisalEvidence::LongHeld {
                    uprn: u.uprn,
                    last_sale_price_gbp: sale.price_gbp,
                    last_sale_date: sale.date,
                    value_gbp: value,
                    as_of,
                    years_held: round_to(years, 1),
                    nominal_gain_gbp: gain,
                    nominal_gain_pct: (sale.price_gbp > 0)
                        .then(|| round_to(gain as f64 / sale.price_gbp as f64 * 100.0, 1)),
                    threshold_years: LONG_HELD_YEARS,
                }),
            })
        })
        .collect()
}

fn mees_signals(e: &AppraisalEnergy) -> Vec<AppraisalSignal> {
    e.units
        .iter()
        .filter_map(|u| {
            let m = u.mees.as_ref()?;
            if m.status != MeesStatus::BelowMinimum {
                return None;
            }
            Some(AppraisalSignal {
                signal: AppraisalSignalKind::MeesUnlettable,
                evidence: Some(AppraisalEvidence::MeesUnlettable {
                    uprn: u.uprn,
                    band: u.current_band.clone()?,
                    certificate_key: u.certificate_key.clone()?,
                    lodgement_date: u.lodgement_date,
                    minimum_band: m.minimum_band,
                }),
            })
        })
        .collect()
}

fn under_built_signal(s: &AppraisalSite) -> Option<AppraisalSignal> {
    let ratio = s.built_coverage_ratio.as_ref()?;
    let v: f64 = ratio.parse().ok()?;
    if v >= UNDER_BUILT_BELOW {
        return None;
    }
    Some(AppraisalSignal {
        signal: AppraisalSignalKind::UnderBuilt,
        evidence: Some(AppraisalEvidence::UnderBuilt {
            land_id: s.land_id.clone()?,
            built_coverage_ratio: ratio.clone(),
            threshold: decimal(UNDER_BUILT_BELOW, 2),
            area_m2: s.area_m2.clone()?,
        }),
    })
}

fn corporate_signals(o: &AppraisalOwnership) -> Vec<AppraisalSignal> {
    o.titles
        .iter()
        .filter_map(|t| {
            let p = t
                .proprietors
                .iter()
                .find(|p| p.company_number.is_some())
                .or_else(|| t.proprietors.first())?;
            Some(AppraisalSignal {
                signal: AppraisalSignalKind::CorporateOwner,
                evidence: Some(AppraisalEvidence::CorporateOwner {
                    title_number: t.title_number.clone(),
                    name: p.name.clone(),
                    company_number: p.company_number.clone(),
                    company_status: p.company_status.clone(),
                }),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_codes_map_to_itl1_regions() {
        assert_eq!(region_of_code("E12000007"), Some(Region::London));
        assert_eq!(region_of_code("E12000009"), Some(Region::SouthWest));
        assert_eq!(region_of_code("W92000004"), None);
    }

    #[test]
    fn under_built_reads_the_measured_coverage_only() {
        let mut s = site_block(None, None, None, &[], false);
        assert!(under_built_signal(&s).is_none(), "no parcel, no signal");
        s.land_id = Some("1".into());
        s.area_m2 = Some("256.00".into());
        s.built_coverage_ratio = None;
        assert!(under_built_signal(&s).is_none(), "unmeasured is not empty");
        s.built_coverage_ratio = Some("0.2500".into());
        assert_eq!(
            under_built_signal(&s).map(|x| x.signal),
            Some(AppraisalSignalKind::UnderBuilt)
        );
        s.built_coverage_ratio = Some("0.3000".into());
        assert!(under_built_signal(&s).is_none());
    }

    #[test]
    fn month_start_reads_a_vintage_month() {
        assert_eq!(month_start("2026-06"), NaiveDate::from_ymd_opt(2026, 6, 1));
        assert_eq!(month_start("x"), None);
    }
}
