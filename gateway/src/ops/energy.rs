//! Energy operations (specification part 4.8): every certificate of a UPRN, an area's energy
//! profile, retrofit candidates and solar potential.

use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::ops::address::UprnPath;
use crate::registry::{Ctx, Json, NoBody, NoParams, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_core::{AreaId, Uprn, UprnEntry, Violation};
use terrace_energy::EnergyCtx;
use terrace_energy::epc::EpcAnswer;
use terrace_energy::profile::EnergyProfile;
use terrace_energy::retrofit::{Fuel, RetrofitCandidates, RetrofitQuery};
use terrace_energy::solar::SolarBatch;
use validator::Validate;

const TAG: &str = "energy";

/// The energy family's operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[&EPC, &PROFILE, &RETROFIT_CANDIDATES, &SOLAR_POTENTIAL];

/// The price of one property's solar facts, per answered item.
const SOLAR_PRICE: i64 = 4;

fn energy_ctx(ctx: &Ctx) -> EnergyCtx {
    EnergyCtx {
        db: ctx.state.db.clone(),
        areas: ctx.state.areas.clone(),
    }
}

/// An area id the energy operations answer for. A blank one is a 422; any other that names no
/// area of an answered kind is a 404 saying which kinds are answered (the schema cannot state
/// the kinds' forms, as for the land operations; docs/API-DESIGN.md).
fn energy_area(raw: &str, at: In) -> Result<AreaId, ApiError> {
    crate::input::area_id_for(raw, at, "energy figures", terrace_energy::scope_of)
}

pub struct Epc;

impl Operation for Epc {
    type Params = UprnPath;
    type Body = NoBody;
    type Input = Uprn;
    type Output = EpcAnswer;

    fn check(p: UprnPath, _: NoBody) -> Result<Uprn, ApiError> {
        Ok(p.uprn)
    }

    async fn run(ctx: &Ctx, uprn: Uprn) -> Result<EpcAnswer, ApiError> {
        Ok(terrace_energy::epc::certificates(&energy_ctx(ctx), uprn).await?)
    }
}

pub(crate) static EPC: OpDecl = OpDecl {
    id: "energy_epc",
    path: "/v1/energy/epc/{uprn}",
    summary: "Every energy certificate lodged for a property, newest first (free)",
    description: "Every energy certificate lodged for the UPRN in the loaded registers (domestic EPCs, non-domestic EPCs and display energy certificates), newest lodgement first, each with its bands and ratings, floor area, fuel, tenure, the building elements a domestic certificate describes (walls, roof, floor, windows, heating, hot water, lighting, each with its efficiency word), PHOTO_SUPPLY and solar water heating, how the register matched the UPRN (`uprn_source`: `Energy Assessor` or `Address Matched`), and the recommendations lodged with it in the register's order with the assessor's indicative cost band as written (not a quote). `status` is `ok`; `not_found` when certificates are loaded for the UPRN's local authority and none is lodged for it; `not_available` when none is loaded for its authority (nothing can be said). A UPRN no register knows is a 404. England and Wales registers.",
    ..OpDecl::of::<Epc>(TAG)
};

/// The path of `GET /v1/energy/profile/{area_id}`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfileParams {
    /// An area id from area resolve: `lad:`, `lsoa:`, `msoa:`, `ward:`, `county:`, `region:`,
    /// `country:`, `district:`, `sector:`, `unit:` or `h3:`
    #[validate(length(min = 1, max = 40))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub area_id: String,
}

pub struct Profile;

impl Operation for Profile {
    type Params = ProfileParams;
    type Body = NoBody;
    type Input = AreaId;
    type Output = EnergyProfile;

    fn check(p: ProfileParams, _: NoBody) -> Result<AreaId, ApiError> {
        energy_area(&p.area_id, In::Path)
    }

    async fn run(ctx: &Ctx, area_id: AreaId) -> Result<EnergyProfile, ApiError> {
        // The area id is the path's: a rule it breaks is reported there, not in a body.
        terrace_energy::profile::profile(&energy_ctx(ctx), area_id)
            .await
            .map_err(|e| match e {
                terrace_energy::EnergyError::Invalid(v) => invalid(In::Path, v),
                e @ (terrace_energy::EnergyError::NotFound(_)
                | terrace_energy::EnergyError::Store(_)) => e.into(),
            })
    }
}

pub(crate) static PROFILE: OpDecl = OpDecl {
    id: "energy_profile",
    path: "/v1/energy/profile/{area_id}",
    summary: "Certificate band mix, fuel mix, heat-pump and solar penetration of an area (free)",
    description: "From the newest domestic energy certificate of each address of the area: the current band mix (A to G), the main fuel mix (mains gas, electricity, oil, LPG, solid fuel or biomass, heat network, other), heat-pump penetration (main heating described as a heat pump), solar photovoltaic penetration (PHOTO_SUPPLY above 0) and solar water heating (flag Y). Each figure has its count, the certificates stating it (`n`) and `coverage_pct`, those certificates over the area's addresses; a figure no certificate of the area states is `not_available` with the reason, never 0. Certificates over-represent recently sold, let and new stock (`caveat`). The area is any kind area resolve returns but a postcode area, built-up area, planning authority or place; an unknown area is a 404.",
    ..OpDecl::of::<Profile>(TAG)
};

fn default_bands() -> Vec<String> {
    vec!["E".into(), "F".into(), "G".into()]
}

fn default_retrofit_limit() -> usize {
    50
}

/// The bands a retrofit query may name, in either case.
const BAND_LETTERS: [&str; 14] = [
    "A", "B", "C", "D", "E", "F", "G", "a", "b", "c", "d", "e", "f", "g",
];

/// The body of `POST /v1/energy/retrofit-candidates`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrofitBody {
    /// An area id from area resolve (as for the energy profile)
    #[validate(length(min = 1, max = 40))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub area_id: String,
    /// Current energy rating bands to keep, each one of A to G in either case (default E, F, G);
    /// a band given twice counts once
    #[serde(default = "default_bands")]
    #[validate(length(min = 1, max = 7))]
    #[schemars(extend("items" = {"type": "string", "enum": BAND_LETTERS}))]
    pub bands: Vec<String>,
    /// Keep only certificates whose main fuel is of this class
    pub fuel: Option<Fuel>,
    /// Candidates per page (default 50)
    #[serde(default = "default_retrofit_limit")]
    #[validate(range(min = 1, max = 200))]
    pub limit: usize,
    /// The `next_cursor` of the previous page, unchanged
    #[validate(length(min = 1, max = 504))]
    #[schemars(regex(pattern = terrace_core::cursor::PATTERN))]
    pub cursor: Option<String>,
}

pub struct RetrofitCandidatesOp;

impl Operation for RetrofitCandidatesOp {
    type Params = NoParams;
    type Body = Json<RetrofitBody>;
    type Input = RetrofitQuery;
    type Output = RetrofitCandidates;

    fn check(_: NoParams, Json(b): Json<RetrofitBody>) -> Result<RetrofitQuery, ApiError> {
        let area_id = energy_area(&b.area_id, In::Body)?;
        let mut bands: Vec<char> = Vec::new();
        let mut violations = Vec::new();
        for (i, raw) in b.bands.iter().enumerate() {
            let letter = BAND_LETTERS
                .contains(&raw.as_str())
                .then(|| raw.chars().next().map(|c| c.to_ascii_uppercase()))
                .flatten();
            match letter {
                Some(c) if bands.contains(&c) => {}
                Some(c) => bands.push(c),
                None => violations.push(
                    Violation::new(
                        &["bands", &i.to_string()],
                        "value_error",
                        "Value error, a band is one letter from A to G",
                    )
                    .with_input(raw.clone()),
                ),
            }
        }
        if let Some(c) = &b.cursor
            && terrace_core::patterns::is_blank(c)
        {
            violations.push(
                Violation::new(&["cursor"], "value_error", "Value error, cursor is blank")
                    .with_input(c.clone()),
            );
        }
        if !violations.is_empty() {
            return Err(invalid(In::Body, violations));
        }
        bands.sort_unstable();
        Ok(RetrofitQuery {
            area_id,
            bands,
            fuel: b.fuel,
            limit: b.limit,
            cursor: b.cursor,
        })
    }

    async fn run(ctx: &Ctx, q: RetrofitQuery) -> Result<RetrofitCandidates, ApiError> {
        Ok(terrace_energy::retrofit::candidates(&energy_ctx(ctx), q).await?)
    }
}

pub(crate) static RETROFIT_CANDIDATES: OpDecl = OpDecl {
    id: "energy_retrofit_candidates",
    path: "/v1/energy/retrofit-candidates",
    summary: "Properties with the most improvement headroom in an area",
    description: "The addresses of the area whose newest domestic energy certificate is in `bands` (default E, F, G) and, when `fuel` is given, whose main fuel is of that class, ranked by headroom: potential minus current SAP efficiency, largest first; equal headroom by potential efficiency, highest first; then by UPRN (docs/METHODS.md). A certificate without both efficiencies is not ranked. Each candidate has the measures lodged with its certificate in the register's order, each with the assessor's indicative cost band as written (not a quote), the tenure lodged, and its standing against the minimum energy efficiency standard for letting (F or G cannot lawfully be let privately without a registered exemption). Pages of `limit`; pass `next_cursor` as `cursor` with the same filters (a cursor of other filters is a 404). The area is as for the energy profile; an unknown area is a 404.",
    price: Price::PerCall(6),
    ..OpDecl::of::<RetrofitCandidatesOp>(TAG)
};

/// The body of `POST /v1/energy/solar-potential`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SolarBody {
    /// 1 to 100 UPRNs (integers; strings of digits are accepted). An entry that is not a UPRN
    /// is answered as an `error` item and not charged.
    #[validate(length(min = 1, max = 100))]
    pub uprns: Vec<UprnEntry>,
}

pub struct SolarPotential;

impl Operation for SolarPotential {
    type Params = NoParams;
    type Body = Json<SolarBody>;
    type Input = Vec<UprnEntry>;
    type Output = SolarBatch;

    fn check(_: NoParams, Json(b): Json<SolarBody>) -> Result<Vec<UprnEntry>, ApiError> {
        Ok(b.uprns)
    }

    async fn run(ctx: &Ctx, uprns: Vec<UprnEntry>) -> Result<SolarBatch, ApiError> {
        Ok(terrace_energy::solar::solar_potential(&energy_ctx(ctx), &uprns).await)
    }

    fn charged_items(out: &SolarBatch) -> Option<i64> {
        Some(out.answered as i64)
    }
}

pub(crate) static SOLAR_POTENTIAL: OpDecl = OpDecl {
    id: "energy_solar_potential",
    path: "/v1/energy/solar-potential",
    summary: "Roof footprint, height, roof and panels of up to 100 properties",
    description: "For each UPRN, in input order, what the loaded data holds: the footprint area of the building its address point stands in (OS Open Map Local) with that building's id, its height where a source gives one, the roof as the newest domestic certificate describes it, photovoltaic panels present (PHOTO_SUPPLY, or a non-domestic certificate's renewable sources) with the share of roof they cover, and solar water heating. Each fact has its source and confidence, or is `not_available` with the reason: roof shape and material need an OpenStreetMap extract or a LIDAR surface (not loaded), and no potential yield is modelled without a documented model whose inputs are loaded. Outcomes: `ok` (something held), `no_data` (the UPRN is known and nothing about its roof is loaded), `not_found`, `error`. Charged per `ok` item; the others are free.",
    price: Price::PerItem(SOLAR_PRICE),
    ..OpDecl::of::<SolarPotential>(TAG)
};
