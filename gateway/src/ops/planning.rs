//! Planning operations at a location (specification part 4.9: planning).

use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::registry::{Ctx, Json, NoParams, OpDecl, Operation, Price};
use serde::Deserialize;
use terrace_planning::check::{self, CheckAnswer, CheckInput};
use validator::Validate;

const TAG: &str = "planning";

/// The planning family's operations at a location, in the order of the specification.
pub static OPS: &[&OpDecl] = &[&CHECK];

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
