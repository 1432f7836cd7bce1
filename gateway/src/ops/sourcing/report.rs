//! The area report (`GET /v1/market/area-report`): composed from several families, so it lives
//! with sourcing (the market crate stays below them).

use super::search::{district, gss};
use super::{sourcing_ctx, sourcing_error};
use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::registry::{Ctx, NoBody, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_commercial::Sector;
use terrace_core::Violation;
use terrace_sourcing::report::{self, AreaReport, ReportQuery};
use validator::Validate;

/// The query of `GET /v1/market/area-report`: `lad_code`, `postcode_district` or both.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = some_area)]
pub struct ReportParams {
    /// A local authority's GSS code (E07000041): sourcing readiness, the commercial market and
    /// the planning decision record
    #[schemars(regex(pattern = terrace_core::patterns::GSS_CODE))]
    pub lad_code: Option<String>,
    /// A postcode district (EX1): the live listing stock; a full postcode is truncated
    #[schemars(regex(pattern = terrace_core::patterns::DISTRICT))]
    pub postcode_district: Option<String>,
    /// The commercial sector (default ALL)
    #[serde(default)]
    pub sector: Sector,
}

/// The schema states the rule: `lad_code`, `postcode_district` or both.
fn some_area(schema: &mut schemars::Schema) {
    terrace_core::patterns::at_least_one_of(schema, &[&["lad_code"], &["postcode_district"]]);
}

pub struct AreaReportOp;

impl Operation for AreaReportOp {
    type Params = ReportParams;
    type Body = NoBody;
    type Input = ReportQuery;
    type Output = AreaReport;

    fn check(p: ReportParams, _: NoBody) -> Result<ReportQuery, ApiError> {
        let mut found = Vec::new();
        if p.lad_code.is_none() && p.postcode_district.is_none() {
            found.push(Violation::new(
                &[],
                "value_error",
                "Value error, give lad_code, postcode_district or both",
            ));
        }
        let lad_code = p
            .lad_code
            .map(|l| gss("lad_code", &l))
            .transpose()
            .map_err(|v| found.push(v))
            .ok()
            .flatten();
        let postcode_district = p
            .postcode_district
            .map(|d| district("postcode_district", &d))
            .transpose()
            .map_err(|v| found.push(v))
            .ok()
            .flatten();
        if !found.is_empty() {
            return Err(invalid(In::Query, found));
        }
        Ok(ReportQuery {
            lad_code,
            postcode_district,
            sector: p.sector,
            today: chrono::Utc::now().date_naive(),
        })
    }

    async fn run(ctx: &Ctx, mut q: ReportQuery) -> Result<AreaReport, ApiError> {
        q.today = ctx.now.date_naive();
        report::area_report(&sourcing_ctx(ctx), &q)
            .await
            .map_err(|e| sourcing_error(e, In::Query))
    }
}

pub(crate) static AREA_REPORT: OpDecl = OpDecl {
    id: "market_area_report",
    path: "/v1/market/area-report",
    summary: "One document for an area: sourcing readiness, the commercial market, the planning record, the listing stock",
    description: "One document for an area. Keyed on the local authority (`lad_code`, a GSS code): sourcing readiness per strategy (`data_ready`, read from the coverage register), the commercial market of `sector` (the rent index from the rating lists, the capital index, the rated stock with total and median rateable value), and the authority's planning decision record (decisions per year with the approval rate, and whether official planning data covers it). Keyed on the postcode district (`postcode_district`): the live listing stock for sale and to rent. THE TWO SCOPES ARE NOT INTERCHANGEABLE: pass both for the whole report; the half whose key is not given reads `not_available`, as does any section whose data is not loaded, and `sections_degraded` names them. An authority or district not loaded is a 404.",
    price: Price::PerCall(8),
    ..OpDecl::of::<AreaReportOp>("market")
};
