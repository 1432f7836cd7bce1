//! Land operations (specification part 4.5, buildings and land): mixed-use buildings, the stock
//! profile, the H3 density and plot utilisation.

use crate::error::ApiError;
use crate::input::{In, cursor_refused};
use crate::registry::{Ctx, Json, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_core::{AreaId, UprnEntry};
use terrace_land::density::{DensityQuery, H3Density};
use terrace_land::mixed_use::{MixedUseBuildings, MixedUseQuery};
use terrace_land::physical::PhysicalBatch;
use terrace_land::stock::StockProfile;
use terrace_land::{LandCtx, PlotQuery, PlotUtilisation};
use validator::Validate;

const TAG: &str = "land";

/// The land family's operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[
    &MIXED_USE,
    &PHYSICAL,
    &STOCK_PROFILE,
    &H3_DENSITY,
    &PLOT_UTILISATION,
];

fn default_limit() -> i64 {
    100
}

/// The body of `POST /v1/land/plot-utilisation`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlotBody {
    /// The analytics area id from area resolve: a local authority (`lad:E09000024`) or an LSOA
    /// (`lsoa:E01000001`)
    #[validate(length(min = 1, max = 40))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub area_id: String,
    /// Smallest plot area in square metres (default 0)
    #[serde(default)]
    #[validate(range(min = 0.0, max = 1.0e9))]
    pub min_area_m2: f64,
    /// Ceiling on built footprint as a share of the plot (0 to 1); 0.2 finds largely
    /// undeveloped plots. Parcels with no measured coverage are excluded when it is set.
    #[validate(range(min = 0.0, max = 1.0))]
    pub max_built_coverage: Option<f64>,
    /// How many parcels to list, largest first (default 100)
    #[serde(default = "default_limit")]
    #[validate(range(min = 1, max = 1000))]
    pub limit: i64,
}

/// An area id the land operations answer for (a local authority or an LSOA). A blank one is a
/// 422; any other that names no local authority or LSOA is a 404 saying which kinds are answered
/// (the schema cannot state the kinds' forms, as for the catalogue; docs/API-DESIGN.md).
fn land_area(raw: &str, at: In) -> Result<AreaId, ApiError> {
    crate::input::area_id_for(raw, at, "land figures", terrace_land::scope_of)
}

/// An area id the address-based building operations answer for (every kind the one mapping
/// names, `terrace_store::scope`). A blank one is a 422; any other that names no such area is a
/// 404 saying which kinds are answered.
fn building_area(raw: &str, at: In) -> Result<AreaId, ApiError> {
    crate::input::area_id_for(raw, at, "building figures", terrace_land::area_scope)
}

fn one() -> i64 {
    1
}

fn default_mixed_limit() -> usize {
    50
}

/// The body of `POST /v1/buildings/mixed-use`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MixedUseBody {
    /// An area id from area resolve: `lad:`, `lsoa:`, `msoa:`, `ward:`, `county:`, `region:`,
    /// `country:`, `district:`, `sector:`, `unit:` or `h3:`
    #[validate(length(min = 1, max = 40))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub area_id: String,
    /// Fewest residential units a building listed holds (default 1)
    #[serde(default = "one")]
    #[validate(range(min = 1, max = 10000))]
    pub min_residential: i64,
    /// Fewest commercial units a building listed holds (default 1)
    #[serde(default = "one")]
    #[validate(range(min = 1, max = 10000))]
    pub min_commercial: i64,
    /// Buildings per page (default 50)
    #[serde(default = "default_mixed_limit")]
    #[validate(range(min = 1, max = 200))]
    pub limit: usize,
    /// The `next_cursor` of the previous page, unchanged (one written for other filters names
    /// no page of these: 404)
    #[validate(length(min = 1, max = 504))]
    #[schemars(regex(pattern = terrace_core::cursor::PATTERN))]
    pub cursor: Option<String>,
}

pub struct MixedUseOp;

impl Operation for MixedUseOp {
    type Params = crate::registry::NoParams;
    type Body = Json<MixedUseBody>;
    type Input = MixedUseQuery;
    type Output = MixedUseBuildings;

    fn check(
        _: crate::registry::NoParams,
        Json(b): Json<MixedUseBody>,
    ) -> Result<MixedUseQuery, ApiError> {
        let area_id = building_area(&b.area_id, In::Body)?;
        let after =
            terrace_land::mixed_use::cursor_scope(&area_id, b.min_residential, b.min_commercial)
                .decode_opt(b.cursor.as_deref())
                .map_err(|e| cursor_refused(In::Body, e))?;
        Ok(MixedUseQuery {
            area_id,
            min_residential: b.min_residential,
            min_commercial: b.min_commercial,
            limit: b.limit,
            after,
        })
    }

    async fn run(ctx: &Ctx, q: MixedUseQuery) -> Result<MixedUseBuildings, ApiError> {
        let land = LandCtx {
            db: ctx.state.db.clone(),
            areas: ctx.state.areas.clone(),
        };
        Ok(terrace_land::mixed_use::mixed_use(&land, q).await?)
    }
}

pub(crate) static MIXED_USE: OpDecl = OpDecl {
    id: "buildings_mixed_use",
    path: "/v1/buildings/mixed-use",
    summary: "Buildings holding both residential and commercial units",
    description: "The buildings of an area holding at least `min_residential` residential and `min_commercial` commercial units (default 1 each): units grouped by parent UPRN (a unit without one is its own building; parent shells are not units). A unit is residential when the address register classes it `R…` or `X…` (dual use) or the council tax list holds it, commercial when the register classes it `C…` or `X…` or a hereditament of the newest loaded rating list is linked to it; each side has its count by evidence, and each unit its class, council tax band, rating-list UARN and description. `evidence_sources` says which sources hold any unit of the area (one that holds none is `not_available` with the reason). Most units first, then building UPRN; `total` counts every page. Pages of `limit`; pass `next_cursor` as `cursor` with the same filters (a cursor of other filters is a 404). The area is any kind area resolve returns but a postcode area, built-up area, planning authority or place; an unknown area is a 404.",
    price: Price::PerCall(6),
    ..OpDecl::of::<MixedUseOp>(TAG)
};

/// The body of `POST /v1/buildings/physical`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhysicalBody {
    /// 1 to 100 UPRNs (integers; strings of digits are accepted). An entry that is not a UPRN
    /// is answered as an `error` item and not charged.
    #[validate(length(min = 1, max = 100))]
    pub uprns: Vec<UprnEntry>,
}

pub struct PhysicalOp;

impl Operation for PhysicalOp {
    type Params = crate::registry::NoParams;
    type Body = Json<PhysicalBody>;
    type Input = Vec<UprnEntry>;
    type Output = PhysicalBatch;

    fn check(
        _: crate::registry::NoParams,
        Json(b): Json<PhysicalBody>,
    ) -> Result<Vec<UprnEntry>, ApiError> {
        Ok(b.uprns)
    }

    async fn run(ctx: &Ctx, uprns: Vec<UprnEntry>) -> Result<PhysicalBatch, ApiError> {
        let land = LandCtx {
            db: ctx.state.db.clone(),
            areas: ctx.state.areas.clone(),
        };
        Ok(terrace_land::physical::physical(&land, &uprns).await)
    }

    fn charged_items(out: &PhysicalBatch) -> Option<i64> {
        Some(out.answered as i64)
    }
}

pub(crate) static PHYSICAL: OpDecl = OpDecl {
    id: "buildings_physical",
    path: "/v1/buildings/physical",
    summary: "Height, volume, footprint, floors, roof, solar panels and unit mix of up to 100 properties",
    description: "For each UPRN, in input order, the building its address point stands in (the address-to-footprint link of the build) and what the loaded data holds about it: footprint area and outline (GeoJSON MultiPolygon in WGS84, simplified at 0.5 m), height with its source and survey year, volume, floors only where a source records them (never estimated from height), roof shape and material, solar panels present (the newest domestic certificate's PHOTO_SUPPLY), and the unit mix of the addressed building (its units by parent UPRN, residential and commercial by class, council tax list and rating list). Each fact has its source and confidence, or is `not_available` with the reason; basement, green roof and construction material have no open source and are `not_available` without a licensed building-attributes feed. Outcomes: `ok` (the UPRN is in the register), `not_found`, `error` (not a UPRN). Charged per `ok` item; the others are free.",
    price: Price::PerItem(3),
    ..OpDecl::of::<PhysicalOp>(TAG)
};

pub struct PlotUtilisationOp;

impl Operation for PlotUtilisationOp {
    type Params = crate::registry::NoParams;
    type Body = Json<PlotBody>;
    type Input = PlotQuery;
    type Output = PlotUtilisation;

    fn check(_: crate::registry::NoParams, Json(b): Json<PlotBody>) -> Result<PlotQuery, ApiError> {
        let area_id = land_area(&b.area_id, In::Body)?;
        Ok(PlotQuery {
            area_id,
            min_area_m2: b.min_area_m2,
            max_built_coverage: b.max_built_coverage,
            limit: b.limit,
        })
    }

    async fn run(ctx: &Ctx, q: PlotQuery) -> Result<PlotUtilisation, ApiError> {
        let land = LandCtx {
            db: ctx.state.db.clone(),
            areas: ctx.state.areas.clone(),
        };
        Ok(terrace_land::plot_utilisation(&land, q).await?)
    }
}

pub(crate) static PLOT_UTILISATION: OpDecl = OpDecl {
    id: "land_plot_utilisation",
    path: "/v1/land/plot-utilisation",
    summary: "Parcels by size and built share",
    description: "The HM Land Registry INSPIRE index polygons of a local authority (`lad:`) or an LSOA (`lsoa:`) of at least `min_area_m2`, largest first, ties by INSPIRE id, highest first (at most `limit`), each with its area, built coverage (OS Open Map Local building footprint inside the parcel over its area), buildings, units inside those buildings, residential and commercial address counts and land use (Terrace's tier A, the NLUD order as tier B and its code; null where nothing on the parcel supports a class). Decimals are text. Coverage is measured only where footprints are loaded for the parcel's local authority: an unmeasured parcel has a null ratio, and with `max_built_coverage` it is excluded rather than counted as empty; `coverage` and `coverage_note` give the measured share. Parcels are freehold title extents, indicative, with no owner. An unknown area is a 404.",
    price: Price::PerCall(6),
    ..OpDecl::of::<PlotUtilisationOp>(TAG)
};

fn default_months() -> u32 {
    12
}

fn default_density_limit() -> i64 {
    200
}

/// The path and query of `GET /v1/h3/density/{area_id}`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DensityParams {
    /// A local authority (`lad:E09000024`) or an LSOA (`lsoa:E01000001`)
    #[validate(length(min = 1, max = 40))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub area_id: String,
    /// Months of registered sales counted, ending with the month of the newest linked sale
    /// (default 12)
    #[serde(default = "default_months")]
    #[validate(range(min = 1, max = 120))]
    pub months: u32,
    /// Cells per page (default 200)
    #[serde(default = "default_density_limit")]
    #[validate(range(min = 1, max = 1000))]
    pub limit: i64,
    /// The `next_cursor` of the previous page, unchanged (one written for another area or
    /// period names no page of this one: 404)
    #[validate(length(min = 1, max = 504))]
    #[schemars(regex(pattern = terrace_core::cursor::PATTERN))]
    pub cursor: Option<String>,
}

pub struct H3DensityOp;

impl Operation for H3DensityOp {
    type Params = DensityParams;
    type Body = crate::registry::NoBody;
    type Input = DensityQuery;
    type Output = H3Density;

    fn check(p: DensityParams, _: crate::registry::NoBody) -> Result<DensityQuery, ApiError> {
        let area_id = land_area(&p.area_id, In::Path)?;
        let after = terrace_land::density::cursor_scope(&area_id, p.months)
            .decode_opt(p.cursor.as_deref())
            .map_err(|e| cursor_refused(In::Query, e))?
            .map(|parts| parts.concat());
        Ok(DensityQuery {
            area_id,
            months: p.months,
            limit: p.limit,
            after,
        })
    }

    async fn run(ctx: &Ctx, q: DensityQuery) -> Result<H3Density, ApiError> {
        let land = LandCtx {
            db: ctx.state.db.clone(),
            areas: ctx.state.areas.clone(),
        };
        Ok(terrace_land::density::h3_density(&land, q).await?)
    }
}

pub(crate) static H3_DENSITY: OpDecl = OpDecl {
    id: "h3_density",
    path: "/v1/h3/density/{area_id}",
    summary: "Address and sales density per H3 cell (free)",
    description: "Per resolution-8 H3 cell holding an address of a local authority (`lad:`) or an LSOA (`lsoa:`), in cell order: the area's addresses in the cell by class (residential `R…`, commercial `C…`, other) and the registered sales linked to them over `months` months ending with the month of the newest linked sale (`period` states it), with their total price as an integer in text. Sales are null, with `sales_reason`, when no sale is linked to an address. Pages of `limit` cells; pass `next_cursor` as `cursor`. An unknown area is a 404.",
    ..OpDecl::of::<H3DensityOp>(TAG)
};

/// The path of `GET /v1/buildings/stock-profile/{area_id}`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StockParams {
    /// A local authority (`lad:E09000024`) or an LSOA (`lsoa:E01000001`); pass
    /// `analytics_area_id` from area resolve
    #[validate(length(min = 1, max = 40))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub area_id: String,
}

pub struct StockProfileOp;

impl Operation for StockProfileOp {
    type Params = StockParams;
    type Body = crate::registry::NoBody;
    type Input = AreaId;
    type Output = StockProfile;

    fn check(p: StockParams, _: crate::registry::NoBody) -> Result<AreaId, ApiError> {
        land_area(&p.area_id, In::Path)
    }

    async fn run(ctx: &Ctx, area_id: AreaId) -> Result<StockProfile, ApiError> {
        let land = LandCtx {
            db: ctx.state.db.clone(),
            areas: ctx.state.areas.clone(),
        };
        Ok(terrace_land::stock::stock_profile(&land, area_id).await?)
    }
}

pub(crate) static STOCK_PROFILE: OpDecl = OpDecl {
    id: "area_stock_profile",
    path: "/v1/buildings/stock-profile/{area_id}",
    summary: "Unit counts, HMO and mixed-use shares, median height and footprint, solar penetration (free)",
    description: "The building stock of a local authority (`lad:`) or an LSOA (`lsoa:`): its addresses by AddressBase class (units are every address but parent shells), the addressed buildings (units grouped by parent UPRN), the mixed-use share (buildings with both residential and commercial units, or a dual-use one, over buildings with either), the median footprint area of its OS Open Map Local buildings and the median height of those that carry one, each median with its n, the solar penetration (addresses whose newest energy certificate states photovoltaic panels, EPC `PHOTO_SUPPLY` above 0, over those whose newest certificate states it) and the HMO share. Every share has its count and denominator and a whole percentage; one that no loaded source supports (HMO: no licence register is loaded; solar: no certificate states it) is `not_available` with the reason and null figures, never 0. Decimals are text. An unknown area is a 404.",
    ..OpDecl::of::<StockProfileOp>(TAG)
};
