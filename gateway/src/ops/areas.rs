//! Areas operations (specification part 4.9: geography).

use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::registry::{Ctx, Json, NoParams, OpDecl, Operation};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_areas::{self as areas, AreaQuery, AreasError};
use terrace_core::AreaKind;
use validator::Validate;

const TAG: &str = "areas";

/// The areas family's operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[&COVERAGE, &RESOLVE, &REVERSE_GEOCODE];

/// The resolve body (the domain's type; its rules are `AreaQuery::violations`).
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct ResolveBody(pub AreaQuery);

crate::registry::schema_as!(ResolveBody => AreaQuery);

impl Validate for ResolveBody {
    fn validate(&self) -> Result<(), validator::ValidationErrors> {
        Ok(())
    }
}

pub struct Resolve;

impl Operation for Resolve {
    type Params = NoParams;
    type Body = Json<ResolveBody>;
    type Input = AreaQuery;
    type Output = areas::AreaResolved;

    fn check(_: NoParams, Json(body): Json<ResolveBody>) -> Result<AreaQuery, ApiError> {
        let violations = body.0.violations();
        if violations.is_empty() {
            Ok(body.0)
        } else {
            Err(invalid(In::Body, violations))
        }
    }

    async fn run(ctx: &Ctx, body: AreaQuery) -> Result<areas::AreaResolved, ApiError> {
        areas::resolve(&ctx.state.areas, &body)
            .await
            .map_err(|e| match e {
                AreasError::Invalid(v) => invalid(In::Body, v),
                AreasError::NotFound(_) | AreasError::Store(_) => e.into(),
            })
    }
}

pub(crate) static RESOLVE: OpDecl = OpDecl {
    id: "area_resolve",
    path: "/v1/areas/resolve",
    summary: "Resolve an area name or code to an area id",
    description: "Reads `query` as an area id (`lad:E09000024`, `district:SW19`, `h3:88195da49bfffff`), a postcode in any form, a postcode sector, district or area, an ONS GSS code, a local authority or place name (case-, punctuation- and typo-tolerant) or an H3 cell, and returns the area's `area_id`, its `analytics_area_id` (the geography whose aggregates answer for it: a unit's district, a ward's local authority), kind, name, centroid and parents, finest first. A name shared by several areas is `ambiguous` and lists each with its parents; an unknown name is a 404 naming the nearest known names.",
    ..OpDecl::of::<Resolve>(TAG)
};

/// The query of `GET /v1/areas/reverse-geocode`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReverseParams {
    /// Latitude, WGS84 degrees
    #[validate(range(min = -90.0, max = 90.0))]
    pub lat: f64,
    /// Longitude, WGS84 degrees
    #[validate(range(min = -180.0, max = 180.0))]
    pub lon: f64,
    /// The kind of area wanted
    pub type_id: AreaKind,
}

pub struct ReverseGeocode;

impl Operation for ReverseGeocode {
    type Params = ReverseParams;
    type Body = crate::registry::NoBody;
    type Input = ReverseParams;
    type Output = areas::ReverseGeocoded;

    fn check(p: ReverseParams, _: crate::registry::NoBody) -> Result<ReverseParams, ApiError> {
        Ok(p)
    }

    async fn run(ctx: &Ctx, p: ReverseParams) -> Result<areas::ReverseGeocoded, ApiError> {
        Ok(areas::reverse_geocode(&ctx.state.areas, p.lat, p.lon, p.type_id).await?)
    }
}

pub(crate) static REVERSE_GEOCODE: OpDecl = OpDecl {
    id: "area_reverse_geocode",
    path: "/v1/areas/reverse-geocode",
    summary: "The area of a given kind containing a point",
    description: "Returns the area of kind `type_id` containing the WGS84 point (`lat`, `lon`), with its parents, and the nearest live postcode with its distance in metres. Postcode kinds answer from the nearest postcode; boundary kinds from the loaded boundary polygons. A point outside Great Britain, at sea (no postcode within 2 km) or in no loaded boundary of the kind is a 404, never a guess.",
    ..OpDecl::of::<ReverseGeocode>(TAG)
};

/// The query of `GET /v1/areas/coverage`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoverageParams {
    /// A local authority district: its GSS code (`E06000001`, or the area id `lad:E06000001`) or
    /// its name
    #[validate(length(min = 1, max = 200))]
    #[schemars(regex(pattern = terrace_core::patterns::NON_BLANK))]
    pub area: String,
}

pub struct Coverage;

impl Operation for Coverage {
    type Params = CoverageParams;
    type Body = crate::registry::NoBody;
    type Input = String;
    type Output = areas::coverage::CoverageRegister;

    fn check(p: CoverageParams, _: crate::registry::NoBody) -> Result<String, ApiError> {
        if terrace_core::patterns::is_blank(&p.area) {
            return Err(invalid(
                In::Query,
                vec![
                    terrace_core::Violation::new(
                        &["area"],
                        "string_too_short",
                        "String should have at least 1 character that is not a space",
                    )
                    .with_input(p.area.clone()),
                ],
            ));
        }
        Ok(p.area)
    }

    async fn run(ctx: &Ctx, area: String) -> Result<areas::coverage::CoverageRegister, ApiError> {
        Ok(areas::coverage::coverage(&ctx.state.areas, &area).await?)
    }
}

pub(crate) static COVERAGE: OpDecl = OpDecl {
    id: "area_coverage",
    path: "/v1/areas/coverage",
    summary: "The data coverage register of a local authority",
    description: "The coverage register row of one local authority (`area`: its GSS code or its name; an unknown name is a 404 naming the nearest known names): per field of the property record, the share of the authority's addresses with a value and the share by source; which designation datasets were checked there, with their vintage; the lease and hereditament (VOA) link shares; official planning coverage; the listing sweep share; and every dataset the service knows of, `loaded` or `not_loaded` (a share is null, never 0, where its dataset is not loaded). Computed by the build; `built_at` says when.",
    ..OpDecl::of::<Coverage>(TAG)
};
