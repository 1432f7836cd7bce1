//! Property operations (specification part 4.2), as they arrive.

use crate::ops::address::uprn_param;
use crate::params::{In, Kind, Param};
use crate::registry::{
    Answer, Ctx, Deprecation, Input, Method, OpDecl, OpFuture, Price, schema_of,
};
use terrace_property as property;

const UPRN: Param = Param {
    name: "uprn",
    location: In::Path,
    required: true,
    kind: Kind::Uprn,
    description: "Unique Property Reference Number",
};

const LIMIT: Param = Param {
    name: "limit",
    location: In::Query,
    required: false,
    kind: Kind::Int {
        min: 1,
        max: 500,
        default: Some(200),
    },
    description: "How many sales at most, newest first",
};

/// The price of a property's sales history, on either route (the same data from the same source).
const SALES_PRICE: Price = Price::PerCall(2);

pub static TRANSACTIONS: OpDecl = OpDecl {
    id: "transactions_by_uprn",
    method: Method::Get,
    path: "/v1/transactions/uprn/{uprn}",
    tag: "property",
    summary: "Registered sales of a property",
    description: "Every registered sale (HM Land Registry Price Paid) matched to the UPRN, newest first: price, date, property type, new build, tenure, PPD category, the address as registered, and how the sale was matched to the UPRN (HM Land Registry's lookup, or the address matcher with its score). UK only.",
    price: SALES_PRICE,
    params: &[UPRN, LIMIT],
    body: None,
    body_required: false,
    response: schema_of::<property::Transactions>,
    deprecated: None,
    read_only: true,
    check: None,
    run: run_transactions,
};

pub static HISTORY: OpDecl = OpDecl {
    id: "property_history",
    method: Method::Get,
    path: "/v1/property/{uprn}/history",
    tag: "property",
    summary: "Sold-price history (deprecated: use /v1/transactions/uprn/{uprn})",
    description: "Deprecated: the same data from the same source as GET /v1/transactions/uprn/{uprn}, which supersedes it; answers with Deprecation, Sunset and Link headers. Stored registered sale records since the source change, so prices, dates and tenure are unchanged while listing windows, photos and floor plans are gone. `max_drilldowns` is accepted and ignored. UK only.",
    price: SALES_PRICE,
    params: &[UPRN, LIMIT],
    body: None,
    body_required: false,
    response: schema_of::<property::Transactions>,
    deprecated: Some(Deprecation {
        successor: "/v1/transactions/uprn/{uprn}",
        sunset: "Thu, 01 Jul 2027 00:00:00 GMT",
    }),
    read_only: true,
    check: None,
    run: run_transactions,
};

fn run_transactions<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        let limit = input.params.int("limit").unwrap_or(200);
        Answer::of(&property::transactions(&ctx.state.db, uprn, limit).await?)
    })
}

pub static FLOOD_RISK: OpDecl = OpDecl {
    id: "property_flood_risk",
    method: Method::Get,
    path: "/v1/property/{uprn}/flood-risk",
    tag: "property",
    summary: "Flood risk placeholder (deprecated: always UNKNOWN)",
    description: "Deprecated placeholder kept free so existing callers keep their 200: `risk_level` is always `UNKNOWN`. Flood risk is in the property risk report, whose flags are true, false or not_checked. UK only.",
    price: Price::Free,
    params: &[UPRN],
    body: None,
    body_required: false,
    response: schema_of::<property::FloodRiskPlaceholder>,
    deprecated: Some(Deprecation {
        successor: "/v1/property/{uprn}/risk",
        sunset: "Thu, 01 Jul 2027 00:00:00 GMT",
    }),
    read_only: true,
    check: None,
    run: run_flood_risk,
};

fn run_flood_risk<'a>(ctx: &'a Ctx, input: Input) -> OpFuture<'a> {
    Box::pin(async move {
        let uprn = uprn_param(&input)?;
        Answer::of(&property::flood_risk_placeholder(&ctx.state.db, uprn).await?)
    })
}
