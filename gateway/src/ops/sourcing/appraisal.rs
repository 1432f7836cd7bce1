//! `GET /v1/site/appraisal`: everything known about one site, assembled and judged.

use super::{TAG, sourcing_ctx, sourcing_error};
use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::registry::{Ctx, NoBody, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_core::{Uprn, Violation};
use terrace_sourcing::appraisal::{self, Appraisal, Subject};
use validator::Validate;

/// The pattern of a `land_id`: an INSPIRE id, digits.
const LAND_ID: &str = "^[0-9]{1,18}$";

fn one_subject(schema: &mut schemars::Schema) {
    terrace_core::patterns::exactly_one_of(schema, &[&["uprn"], &["land_id"]]);
}

/// The query of `GET /v1/site/appraisal`: exactly one of `uprn` and `land_id`.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_subject)]
pub struct AppraisalParams {
    /// A property: appraised with the parcel its address point lies in. Exactly one of uprn and
    /// land_id.
    #[validate(range(min = 1, max = 999_999_999_999_i64))]
    pub uprn: Option<i64>,
    /// A parcel: its INSPIRE id, as plot utilisation's `land_id` gives it. Exactly one of uprn
    /// and land_id.
    #[validate(length(min = 1, max = 18))]
    #[schemars(regex(pattern = LAND_ID))]
    pub land_id: Option<String>,
}

pub struct AppraisalOp;

fn subject_of(p: &AppraisalParams) -> Result<Subject, Vec<Violation>> {
    match (p.uprn, p.land_id.as_deref()) {
        (Some(u), None) => Uprn::new(u).map(Subject::Uprn).map_err(|_| {
            vec![
                Violation::new(
                    &["uprn"],
                    "range_error",
                    "uprn must be between 1 and 999999999999",
                )
                .with_input(u),
            ]
        }),
        (None, Some(l)) => match l.parse::<i64>() {
            Ok(id) if l.bytes().all(|b| b.is_ascii_digit()) => Ok(Subject::Land(id)),
            _ => Err(vec![
                Violation::new(
                    &["land_id"],
                    "value_error",
                    "Value error, land_id is an INSPIRE id: digits only",
                )
                .with_input(l.to_string()),
            ]),
        },
        (None, None) => Err(vec![Violation::new(
            &["uprn"],
            "missing",
            "Field required: give exactly one of uprn and land_id",
        )]),
        (Some(_), Some(_)) => Err(vec![Violation::new(
            &[],
            "value_error",
            "Value error, give exactly one of uprn and land_id, not both",
        )]),
    }
}

impl Operation for AppraisalOp {
    type Params = AppraisalParams;
    type Body = NoBody;
    type Input = Subject;
    type Output = Appraisal;

    fn check(p: AppraisalParams, _: NoBody) -> Result<Subject, ApiError> {
        subject_of(&p).map_err(|v| invalid(In::Query, v))
    }

    async fn run(ctx: &Ctx, subject: Subject) -> Result<Appraisal, ApiError> {
        appraisal::appraisal(&sourcing_ctx(ctx), subject, ctx.now.date_naive())
            .await
            .map_err(|e| sourcing_error(e, In::Query))
    }

    /// An appraisal in which no block could be filled is not charged.
    fn charged_items(out: &Appraisal) -> Option<i64> {
        (out.answered_blocks() == 0).then_some(0)
    }
}

pub(crate) static SITE_APPRAISAL: OpDecl = OpDecl {
    id: "site_appraisal",
    path: "/v1/site/appraisal",
    summary: "Everything known about one site, assembled and judged",
    description: "One site by `uprn` (the property, with the INSPIRE parcel its address point lies in) or by `land_id` (the parcel's INSPIRE id, as plot utilisation returns it; its blocks then cover every unit whose address point lies in it, at most 50): exactly one. Blocks, each with its `source` and, when nothing can be said, `status: not_available` with the `reason`: `site` (plot area, land use tiers, built coverage: null where no footprint data covers the authority, never 0; the boundary as GeoJSON in WGS84; the units on it; a UPRN on no parcel gets the rest of the appraisal with `site` not_available), `valuation` (the latest vintage's value of each unit with its last registered sale), `ownership` (company and overseas proprietors of CCOD/OCOD titles linked to the units, with company number and status; else `no_open_title_link`: individuals are never named), `energy` (each unit's newest certificate: band, potential band, MEES status), `auction_history` (every offer of the property in the operator's feed, matched on UPRN and on address, and whether it ever sold; `not_available` without a feed), `designations` (every flag of the spatial layers at the site's point, three-valued: `in_zone`, `checked_false`, `not_checked` with the reason), `planning_nearby` (applications within 250 m with their decisions; `not_covered` where official planning data does not cover the authority), `cost_context` (the site's construction sector index movement and the regional location factor status: no rate is invented). `signals` judge the evidence, each with it: `repeat_auction_failure` (offers, last guide over the estimate), `long_held` (15 years or more, with the nominal gain of the value over the last price), `mees_unlettable` (an F or G band), `under_built` (measured coverage under 0.30), `corporate_owner` (the company number); a site with nothing to say answers `[{\"signal\": \"none\"}]`. An unknown UPRN or parcel is 404; an appraisal in which no block could be filled is free.",
    price: Price::PerCall(8),
    ..OpDecl::of::<AppraisalOp>(TAG)
};
