//! Address operations (specification part 4.1).

use crate::error::ApiError;
use crate::input::{In, invalid};
use crate::registry::{Ctx, Json, NoBody, OpDecl, Operation, Price};
use schemars::JsonSchema;
use serde::Deserialize;
use terrace_address::{self as address, ResolveInput};
use terrace_core::{Postcode, Uprn};
use validator::Validate;

const TAG: &str = "address";

/// The address family's operations, in the order of the specification.
pub static OPS: &[&OpDecl] = &[&AUTOCOMPLETE, &RESOLVE, &BY_UPRN, &BY_POSTCODE];

/// Only the UK is served.
#[derive(Debug, Default, Clone, Copy, Deserialize, serde::Serialize, JsonSchema)]
pub enum Country {
    #[default]
    #[serde(rename = "UK")]
    Uk,
}

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutocompleteParams {
    /// A partial address or a postcode
    #[validate(length(min = 1, max = 500))]
    pub q: String,
    /// Only UK is served
    #[serde(default)]
    pub country: Country,
    /// How many suggestions at most
    #[serde(default = "ten")]
    #[validate(range(min = 1, max = 25))]
    pub max_results: i64,
}

fn ten() -> i64 {
    10
}

pub struct Autocomplete;

impl Operation for Autocomplete {
    type Params = AutocompleteParams;
    type Body = NoBody;
    type Input = AutocompleteParams;
    type Output = address::Autocomplete;

    fn check(p: AutocompleteParams, _: NoBody) -> Result<AutocompleteParams, ApiError> {
        Ok(p)
    }

    async fn run(ctx: &Ctx, p: AutocompleteParams) -> Result<address::Autocomplete, ApiError> {
        Ok(address::autocomplete(
            &ctx.state.address,
            &p.q,
            p.max_results as usize,
        ))
    }
}

pub(crate) static AUTOCOMPLETE: OpDecl = OpDecl {
    id: "address_autocomplete",
    path: "/v1/address/autocomplete",
    summary: "Suggest addresses as the user types",
    description: "Ranked address suggestions for a partial address or a postcode (typed with or without the space, any case); typo-tolerant and prefix-aware. Candidates carry no UPRN: resolve the chosen one to key it. UK only.",
    ..OpDecl::of::<Autocomplete>(TAG)
};

/// The resolve body: the address crate's [`ResolveInput`], whose rules are the domain's own.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct ResolveBody(pub ResolveInput);

crate::registry::schema_as!(ResolveBody => ResolveInput);

impl Validate for ResolveBody {
    fn validate(&self) -> Result<(), validator::ValidationErrors> {
        Ok(())
    }
}

pub struct Resolve;

impl Operation for Resolve {
    type Params = crate::registry::NoParams;
    type Body = Json<ResolveBody>;
    type Input = ResolveInput;
    type Output = address::Resolved;

    fn check(_: Self::Params, Json(body): Json<ResolveBody>) -> Result<ResolveInput, ApiError> {
        let violations = body.0.violations();
        if violations.is_empty() {
            Ok(body.0)
        } else {
            Err(invalid(In::Body, violations))
        }
    }

    async fn run(ctx: &Ctx, body: ResolveInput) -> Result<address::Resolved, ApiError> {
        Ok(address::resolve(&ctx.state.address, &body).await?)
    }
}

pub(crate) static RESOLVE: OpDecl = OpDecl {
    id: "address_resolve",
    path: "/v1/address/resolve",
    summary: "Resolve an address to UPRN candidates",
    description: "Matches free text and/or structured address fields to UPRN-keyed candidates, each with a similarity score in [0, 1], best first. `confident` is false when no candidate is a confident match. Flats, number ranges, building names and missing or wrong postcodes are handled. UK only.",
    price: Price::PerCall(1),
    ..OpDecl::of::<Resolve>(TAG)
};

/// A UPRN in the path: the parameters of every operation about one property.
#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UprnPath {
    /// Unique Property Reference Number
    pub uprn: Uprn,
}

pub struct ByUprn;

impl Operation for ByUprn {
    type Params = UprnPath;
    type Body = NoBody;
    type Input = Uprn;
    type Output = address::AsJson<address::AddressRecord>;

    fn check(p: UprnPath, _: NoBody) -> Result<Uprn, ApiError> {
        Ok(p.uprn)
    }

    async fn run(
        ctx: &Ctx,
        uprn: Uprn,
    ) -> Result<address::AsJson<address::AddressRecord>, ApiError> {
        Ok(address::by_uprn(&ctx.state.address, uprn).await?)
    }

    fn output_text(output: &Self::Output) -> Option<&str> {
        Some(output.text())
    }
}

pub(crate) static BY_UPRN: OpDecl = OpDecl {
    id: "address_by_uprn",
    path: "/v1/address/uprn/{uprn}",
    summary: "The canonical address record of a UPRN",
    description: "The address record keyed by UPRN, in the same shape as a resolve candidate (without a score); no fuzzy matching. UK only.",
    price: Price::PerCall(1),
    ..OpDecl::of::<ByUprn>(TAG)
};

#[derive(Debug, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PostcodePath {
    /// A full UK postcode, with or without the space
    pub postcode: Postcode,
}

pub struct ByPostcode;

impl Operation for ByPostcode {
    type Params = PostcodePath;
    type Body = NoBody;
    type Input = Postcode;
    type Output = address::AsJson<address::PostcodeResult>;

    fn check(p: PostcodePath, _: NoBody) -> Result<Postcode, ApiError> {
        Ok(p.postcode)
    }

    async fn run(
        ctx: &Ctx,
        pc: Postcode,
    ) -> Result<address::AsJson<address::PostcodeResult>, ApiError> {
        Ok(address::by_postcode(&ctx.state.address, &pc).await?)
    }

    fn output_text(output: &Self::Output) -> Option<&str> {
        Some(output.text())
    }
}

pub(crate) static BY_POSTCODE: OpDecl = OpDecl {
    id: "address_by_postcode",
    path: "/v1/address/postcode/{postcode}",
    summary: "Every address at a postcode",
    description: "All address records at the postcode under `data.matches`, ordered by street, house number and flat. A malformed postcode is 422; a postcode with no addresses that the postcode directory does not know is 404. UK only.",
    price: Price::PerCall(2),
    ..OpDecl::of::<ByPostcode>(TAG)
};
