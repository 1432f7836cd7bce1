//! Planning operations at a location (specification part 4.9: planning).

use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::registry::{Ctx, Json, NoParams, OpDecl, Operation, Price};
use serde::Deserialize;
use terrace_planning::applications::{self, ApplicationsAnswer, ApplicationsInput};
use terrace_planning::check::{self, CheckAnswer, CheckInput};
use terrace_planning::designations::{self, DesignationsAnswer, DesignationsInput};
use validator::Validate;

const TAG: &str = "planning";

/// The planning family's operations at a location, in the order of the specification.
pub static OPS: &[&OpDecl] = &[&CHECK, &DESIGNATIONS, &APPLICATIONS];

/// The check body (the domain's type; its rules are `CheckInput::violations`).
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct CheckBody(pub CheckInput);

crate::registry::schema_as!(CheckBody => CheckInput);

impl Validate for CheckBody {
    fn validate(&self) -> Result<(), validator::ValidationErrors> {
        Ok(())
    }
}

pub struct Check;

impl Operation for Check {
    type Params = NoParams;
    type Body = Json<CheckBody>;
    type Input = CheckInput;
    type Output = CheckAnswer;

    fn check(_: NoParams, Json(body): Json<CheckBody>) -> Result<CheckInput, ApiError> {
        let violations = body.0.violations();
        if violations.is_empty() {
            Ok(body.0)
        } else {
            Err(invalid(In::Body, violations))
        }
    }

    async fn run(ctx: &Ctx, body: CheckInput) -> Result<CheckAnswer, ApiError> {
        let s = &ctx.state;
        Ok(check::check(&s.db, &s.layers, &s.areas, &body).await?)
    }
}

pub(crate) static CHECK: OpDecl = OpDecl {
    id: "planning_check",
    path: "/v1/planning/check",
    summary: "Planning checks at one location",
    description: "Runs only the requested checks (any of article_4, brownfield, ancient_woodland, heritage_at_risk, tpo, aqma, scheduled_monument, sssi, agricultural_land, flood_risk, green_belt, listed_buildings, aonb, national_park, conservation_area) at one location given as `uprn`, `postcode`, or `lat` and `lon`. Each requested check is answered: `status: checked` with `value` true or false and the features that matched, or `status: unknown` with the reason (no dataset of the check loaded for the location's local authority, no position); never omitted. `false` is only said where a dataset of the check is loaded for that authority. An unknown check name is a 422 listing the valid ones.",
    price: Price::PerCall(2),
    ..OpDecl::of::<Check>(TAG)
};

/// The designations body (the domain's type; its rules are `DesignationsInput::violations`).
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct DesignationsBody(pub DesignationsInput);

crate::registry::schema_as!(DesignationsBody => DesignationsInput);

impl Validate for DesignationsBody {
    fn validate(&self) -> Result<(), validator::ValidationErrors> {
        Ok(())
    }
}

pub struct Designations;

impl Operation for Designations {
    type Params = NoParams;
    type Body = Json<DesignationsBody>;
    type Input = DesignationsInput;
    type Output = DesignationsAnswer;

    fn check(
        _: NoParams,
        Json(body): Json<DesignationsBody>,
    ) -> Result<DesignationsInput, ApiError> {
        let violations = body.0.violations();
        if violations.is_empty() {
            Ok(body.0)
        } else {
            Err(invalid(In::Body, violations))
        }
    }

    async fn run(ctx: &Ctx, body: DesignationsInput) -> Result<DesignationsAnswer, ApiError> {
        let s = &ctx.state;
        Ok(designations::designations(&s.db, &s.layers, &s.areas, &body).await?)
    }
}

pub(crate) static DESIGNATIONS: OpDecl = OpDecl {
    id: "planning_designations",
    path: "/v1/planning/designations",
    summary: "Every planning designation affecting a location or an area",
    description: "Lists every loaded planning.data.gov.uk designation (conservation areas, Article 4 directions, listed buildings, tree preservation, brownfield land, green belt, scheduled monuments, ancient woodland, SSSIs, AONBs, national parks, air quality management areas, flood risk zones, heritage at risk, agricultural land classification) affecting exactly one of: `location` ({lat, lon}), `postcode`, `uprn`, `area_geojson` (a GeoJSON Polygon or MultiPolygon in WGS84, at most 1,000 vertices and 100 km²) or `lpa_code` (a local planning authority's loaded boundary). `buffer_m` (0 to 1000) widens the scope; `types` keeps only the named datasets (an unknown one is a 422 listing the valid ones). Each designation has its dataset, reference, name, source and vintage (the publisher's entry date, else the load date); at most 500 are listed (`truncated`, `total`). `not_loaded` lists every consulted dataset not loaded for a local authority of the scope, where an absence means nothing; it is never omitted.",
    price: Price::PerCall(3),
    ..OpDecl::of::<Designations>(TAG)
};

/// The applications body (the domain's type; its rules are `ApplicationsInput::violations`).
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct ApplicationsBody(pub ApplicationsInput);

crate::registry::schema_as!(ApplicationsBody => ApplicationsInput);

impl Validate for ApplicationsBody {
    fn validate(&self) -> Result<(), validator::ValidationErrors> {
        Ok(())
    }
}

pub struct Applications;

impl Operation for Applications {
    type Params = NoParams;
    type Body = Json<ApplicationsBody>;
    type Input = ApplicationsInput;
    type Output = ApplicationsAnswer;

    fn check(
        _: NoParams,
        Json(body): Json<ApplicationsBody>,
    ) -> Result<ApplicationsInput, ApiError> {
        let violations = body.0.violations();
        if violations.is_empty() {
            Ok(body.0)
        } else {
            Err(invalid(In::Body, violations))
        }
    }

    async fn run(ctx: &Ctx, body: ApplicationsInput) -> Result<ApplicationsAnswer, ApiError> {
        let s = &ctx.state;
        let today = ctx.now.date_naive();
        Ok(applications::applications(&s.db, &s.areas, &body, today).await?)
    }
}

pub(crate) static APPLICATIONS: OpDecl = OpDecl {
    id: "planning_applications",
    path: "/v1/planning/applications",
    summary: "The planning authority, its portal and the recent applications near a location",
    description: "For one location, `postcode` or `lat` and `lon`: the local planning authority holding it (planning.data.gov.uk boundaries; null with `lpa_reason` where none is loaded), its planning-portal URL from the operator's list (null with a reason where not known), whether official planning data covers the local authority, and the loaded planning applications whose point lies within `radius_m` (1 to 2000, default 250), newest first, at most `limit` (1 to 100, default 20; `truncated` and `total_within_radius` say when more lie within the radius). Where official data does not cover the authority or none of its applications is loaded, `applications.status` is `not_available` with the reason, never an empty list that would read as none.",
    price: Price::PerCall(2),
    ..OpDecl::of::<Applications>(TAG)
};
