//! Address operations (specification part 4.1).

use crate::error::{ApiError, FieldError};
use crate::params::{In, Kind, Param};
use crate::registry::{Answer, Ctx, Input, Method, OpDecl, OpFuture, Price, schema_of};
use terrace_address::{self as address, ResolveInput};
use terrace_core::{Postcode, Uprn};

pub static AUTOCOMPLETE: OpDecl = OpDecl {
    id: "address_autocomplete",
    method: Method::Get,
    path: "/v1/address/autocomplete",
    tag: "address",
    summary: "Suggest addresses as the user types",
    description: "Ranked address suggestions for a partial address or a postcode (typed with or without the space, any case); typo-tolerant and prefix-aware. Candidates carry no UPRN: resolve the chosen one to key it. UK only.",
    price: Price::Free,
    params: &[
        Param {
            name: "q",
            location: In::Query,
            required: true,
            kind: Kind::Str { min: 1, max: 500 },
            description: "A partial address or a postcode",
        },
        Param {
            name: "country",
            location: In::Query,
            required: false,
            kind: Kind::Enum {
                values: &["UK"],
                default: Some("UK"),
            },
            description: "Only UK is served",
        },
        Param {
            name: "max_results",
            location: In::Query,
            required: false,
            kind: Kind::Int {
                min: 1,
                max: 25,
                default: Some(10),
            },
            description: "How many suggestions at most",
        },
    ],
    body: None,
    body_required: false,
    response: schema_of::<address::Autocomplete>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_autocomplete,
};

fn run_autocomplete<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let q = input.params.str("q").unwrap_or_default();
        let max = input.params.int("max_results").unwrap_or(10) as usize;
        Answer::of(&address::autocomplete(&ctx.state.address, q, max))
    })
}

pub static RESOLVE: OpDecl = OpDecl {
    id: "address_resolve",
    method: Method::Post,
    path: "/v1/address/resolve",
    tag: "address",
    summary: "Resolve an address to UPRN candidates",
    description: "Matches free text and/or structured address fields to UPRN-keyed candidates, each with a similarity score in [0, 1], best first. `confident` is false when no candidate is a confident match. Flats, number ranges, building names and missing or wrong postcodes are handled. UK only.",
    price: Price::PerCall(1),
    params: &[],
    body: Some(schema_of::<ResolveInput>),
    body_required: true,
    response: schema_of::<address::Resolved>,
    deprecated: None,
    read_only: true,
    check: Some(check_resolve),
    run: run_resolve,
};

fn check_resolve(input: &Input) -> Result<(), ApiError> {
    let body: ResolveInput = input.body_as(true)?.unwrap_or_default();
    let violations = body.violations();
    if violations.is_empty() {
        return Ok(());
    }
    Err(ApiError::Validation(
        violations
            .into_iter()
            .map(|(field, msg, kind)| FieldError::new(&["body", field], kind, msg))
            .collect(),
    ))
}

fn run_resolve<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let body: ResolveInput = input.body_as(true)?.unwrap_or_default();
        Answer::of(&address::resolve(&ctx.state.address, &body).await?)
    })
}

pub static BY_UPRN: OpDecl = OpDecl {
    id: "address_by_uprn",
    method: Method::Get,
    path: "/v1/address/uprn/{uprn}",
    tag: "address",
    summary: "The canonical address record of a UPRN",
    description: "The address record keyed by UPRN, in the same shape as a resolve candidate (without a score); no fuzzy matching. UK only.",
    price: Price::PerCall(1),
    params: &[Param {
        name: "uprn",
        location: In::Path,
        required: true,
        kind: Kind::Uprn,
        description: "Unique Property Reference Number",
    }],
    body: None,
    body_required: false,
    response: schema_of::<address::AddressRecord>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_by_uprn,
};

fn run_by_uprn<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        Answer::of(&address::by_uprn(&ctx.state.address, uprn).await?)
    })
}

/// The validated `uprn` path parameter as a domain value.
pub fn uprn_param(input: &Input) -> Result<Uprn, ApiError> {
    input
        .params
        .int("uprn")
        .and_then(|v| Uprn::new(v).ok())
        .ok_or_else(|| ApiError::Internal("uprn parameter was not validated".into()))
}

pub static BY_POSTCODE: OpDecl = OpDecl {
    id: "address_by_postcode",
    method: Method::Get,
    path: "/v1/address/postcode/{postcode}",
    tag: "address",
    summary: "Every address at a postcode",
    description: "All address records at the postcode under `data.matches`, ordered by street, house number and flat. A malformed postcode is 422; a postcode with no addresses that the postcode directory does not know is 404. UK only.",
    price: Price::PerCall(2),
    params: &[Param {
        name: "postcode",
        location: In::Path,
        required: true,
        kind: Kind::Postcode,
        description: "A full UK postcode, with or without the space",
    }],
    body: None,
    body_required: false,
    response: schema_of::<address::PostcodeResult>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_by_postcode,
};

fn run_by_postcode<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let pc = input
            .params
            .str("postcode")
            .and_then(|s| Postcode::parse(s).ok())
            .ok_or_else(|| ApiError::Internal("postcode parameter was not validated".into()))?;
        Answer::of(&address::by_postcode(&ctx.state.address, &pc).await?)
    })
}
