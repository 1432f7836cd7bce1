//! Land operations (specification part 4.5, buildings and land): plot utilisation.

use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::registry::{Ctx, Json, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_core::{AreaId, Violation};
use terrace_land::{LandCtx, PlotQuery, PlotUtilisation};
use validator::Validate;

const TAG: &str = "land";

/// The land family's operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[&PLOT_UTILISATION];

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

pub struct PlotUtilisationOp;

impl Operation for PlotUtilisationOp {
    type Params = crate::registry::NoParams;
    type Body = Json<PlotBody>;
    type Input = PlotQuery;
    type Output = PlotUtilisation;

    fn check(_: crate::registry::NoParams, Json(b): Json<PlotBody>) -> Result<PlotQuery, ApiError> {
        let area_id = AreaId::parse(b.area_id.trim()).map_err(|e| {
            invalid(
                In::Body,
                vec![
                    Violation::new(&["area_id"], "value_error", format!("Value error, {e}"))
                        .with_input(b.area_id.clone()),
                ],
            )
        })?;
        terrace_land::scope_of(&area_id).map_err(|v| {
            invalid(
                In::Body,
                vec![Violation {
                    message: format!("Value error, {}", v.message),
                    ..v
                }],
            )
        })?;
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
    description: "The HM Land Registry INSPIRE index polygons of a local authority (`lad:`) or an LSOA (`lsoa:`) of at least `min_area_m2`, largest first (at most `limit`), each with its area, built coverage (OS Open Map Local building footprint inside the parcel over its area), buildings, units inside those buildings, residential and commercial address counts and land use (Terrace's tier A, the NLUD order as tier B and its code; null where nothing on the parcel supports a class). Decimals are text. Coverage is measured only where footprints are loaded for the parcel's local authority: an unmeasured parcel has a null ratio, and with `max_built_coverage` it is excluded rather than counted as empty; `coverage` and `coverage_note` give the measured share. Parcels are freehold title extents, indicative, with no owner. An unknown area is a 404.",
    price: Price::PerCall(6),
    ..OpDecl::of::<PlotUtilisationOp>(TAG)
};
